#!/usr/bin/env bash
# Builds swiftletd in release, then measures group chat (XEP-0045) on it,
# on Prosody and on ejabberd (both from the system packages, each with its
# MUC component, with and without room archiving) on this machine: one
# room of 10, 100 and 500 occupants, 5 senders; delivered stanzas/s,
# server CPU per delivered stanza, latency and memory per occupant.
# Options are passed to muc.py (see --help). The build's scratch dir is
# .build unless SWIFTLET_BENCH_SCRATCH says otherwise. The run is stopped
# after 45 minutes at most (3 rounds take about 25).
set -euo pipefail
cd "$(dirname "$0")/../.."
scratch="${SWIFTLET_BENCH_SCRATCH:-.build}"
for tool in prosody prosodyctl openssl python3; do
    command -v "$tool" >/dev/null || { echo "muc.sh: $tool not found (apt-get install prosody openssl python3)" >&2; exit 69; }
done
command -v ejabberdctl >/dev/null || echo "muc.sh: ejabberd not installed (apt-get install ejabberd); measuring without it" >&2
python3 -c 'import uvloop' 2>/dev/null || echo "muc.sh: uvloop not installed (pip install uvloop); the client uses asyncio's own loop and needs more CPU" >&2
swift build -c release --product swiftletd --scratch-path "$scratch"
# The commit, and whether the working tree differed from it, for the report.
revision="$(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
[ -z "$(git --no-optional-locks status --porcelain -- Sources Package.swift 2>/dev/null)" ] || revision="$revision+local-changes"
exec timeout 2700 python3 tools/benchmark/muc.py \
    --swiftletd "$scratch/release/swiftletd" --revision "$revision" "$@"
