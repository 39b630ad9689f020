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
bench=muc.sh
. tools/benchmark/common.sh
side_by_side 2700 muc.py "$@"
