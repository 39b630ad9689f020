#!/usr/bin/env bash
# Builds swiftletd in release, then measures reconnects (issue 17) on it,
# on Prosody and on ejabberd (both from the system packages) on this
# machine: server CPU, latency and round trips per reconnect over STARTTLS
# with legacy SASL + bind + SM + carbons, and on swiftletd also with SASL2
# + Bind 2 and with FAST + Bind 2. Options are passed to reconnect.py (see
# --help). The build's scratch dir is .build unless SWIFTLET_BENCH_SCRATCH
# says otherwise. The run is stopped after 40 minutes at most (3 rounds
# take about 10-15).
set -euo pipefail
cd "$(dirname "$0")/../.."
bench=reconnect.sh
. tools/benchmark/common.sh
side_by_side 2400 reconnect.py "$@"
