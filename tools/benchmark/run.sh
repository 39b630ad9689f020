#!/usr/bin/env bash
# Builds swiftletd in release, then benchmarks it against Prosody (from the
# system package) and, when installed, ejabberd on this machine: logins/s
# and memory per idle session. Options are passed to benchmark.py (see
# --help). The build's scratch dir is .build unless SWIFTLET_BENCH_SCRATCH
# says otherwise. The measurements are stopped after 40 minutes at most
# (they take about 3-5 at the default session counts, 15-20 at 10,000).
set -euo pipefail
cd "$(dirname "$0")/../.."
bench=run.sh
. tools/benchmark/common.sh
need prosody prosodyctl openssl python3
note_ejabberd
build_and_run 2400 benchmark.py "$@"
