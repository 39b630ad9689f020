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
bench=routing.sh
. tools/benchmark/common.sh
side_by_side 900 routing.py "$@"
