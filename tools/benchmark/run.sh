#!/usr/bin/env bash
# Builds swiftletd in release, then benchmarks it against Prosody (from the
# system package) on this machine: logins/s and memory per idle session.
# Options are passed to benchmark.py (see --help). The build's scratch dir
# is .build unless SWIFTLET_BENCH_SCRATCH says otherwise. The measurements
# are stopped after 15 minutes at most (they take about 3-5).
set -euo pipefail
cd "$(dirname "$0")/../.."
bench=run.sh
. tools/benchmark/common.sh
need prosody prosodyctl openssl python3
build_and_run 900 benchmark.py "$@"
