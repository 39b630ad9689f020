#!/usr/bin/env bash
# Builds swiftletd in release, then benchmarks it against Prosody (from the
# system package) on this machine: logins/s and memory per idle session.
# Options are passed to benchmark.py (see --help). The build's scratch dir
# is .build unless SWIFTLET_BENCH_SCRATCH says otherwise. The measurements
# are stopped after 15 minutes at most (they take about 3-5).
set -euo pipefail
cd "$(dirname "$0")/../.."
scratch="${SWIFTLET_BENCH_SCRATCH:-.build}"
for tool in prosody prosodyctl openssl python3; do
    command -v "$tool" >/dev/null || { echo "run.sh: $tool not found (apt-get install prosody openssl python3)" >&2; exit 69; }
done
swift build -c release --product swiftletd --scratch-path "$scratch"
# The commit, and whether the working tree differed from it, for the report.
revision="$(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
[ -z "$(git --no-optional-locks status --porcelain -- Sources Package.swift 2>/dev/null)" ] || revision="$revision+local-changes"
exec timeout 900 python3 tools/benchmark/benchmark.py \
    --swiftletd "$scratch/release/swiftletd" --revision "$revision" "$@"
