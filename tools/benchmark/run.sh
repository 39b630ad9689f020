#!/usr/bin/env bash
# Builds swiftletd in release, then benchmarks it against Prosody and, when
# installed, ejabberd (from the system packages) on this machine: server
# CPU per login (no TLS, STARTTLS with full and with resumed handshakes)
# and memory per idle session. Options are passed to benchmark.py (see
# --help). The build's scratch dir is .build unless SWIFTLET_BENCH_SCRATCH
# says otherwise. The measurements are stopped after 40 minutes at most
# (they take about 5-8 at the default session counts, 15-20 at 10,000).
set -euo pipefail
cd "$(dirname "$0")/../.."
bench=run.sh
. tools/benchmark/common.sh
side_by_side 2400 benchmark.py "$@"
