#!/usr/bin/env bash
# Builds swiftletd in release, then measures message routing on it, on
# Prosody and on ejabberd (both from the system packages) on this machine:
# routed messages/s, latency and server CPU per message with 50 and 200
# online pairs, and offline store-and-deliver rates. Options are passed to
# routing.py (see --help). The build's scratch dir is .build unless
# SWIFTLET_BENCH_SCRATCH says otherwise. The run is stopped after 15
# minutes at most (it takes about 5).
# `--servers swiftletd,swiftletd-noarchive,prosody,prosody-mam` adds
# swiftletd with its message archive off and Prosody with mod_mam, to
# measure what archiving costs (see routing.py --help).
set -euo pipefail
cd "$(dirname "$0")/../.."
scratch="${SWIFTLET_BENCH_SCRATCH:-.build}"
for tool in prosody prosodyctl python3; do
    command -v "$tool" >/dev/null || { echo "routing.sh: $tool not found (apt-get install prosody python3)" >&2; exit 69; }
done
command -v ejabberdctl >/dev/null || echo "routing.sh: ejabberd not installed (apt-get install ejabberd); measuring without it" >&2
python3 -c 'import uvloop' 2>/dev/null || echo "routing.sh: uvloop not installed (pip install uvloop); the client uses asyncio's own loop and needs more CPU" >&2
swift build -c release --product swiftletd --scratch-path "$scratch"
# The commit, and whether the working tree differed from it, for the report.
revision="$(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
[ -z "$(git --no-optional-locks status --porcelain -- Sources Package.swift 2>/dev/null)" ] || revision="$revision+local-changes"
exec timeout 900 python3 tools/benchmark/routing.py \
    --swiftletd "$scratch/release/swiftletd" --revision "$revision" "$@"
