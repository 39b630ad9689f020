#!/usr/bin/env bash
# Builds swiftletd in release, then measures HTTP file upload (XEP-0363) on
# it and on Prosody's mod_http_file_share (from the system package) on this
# machine: PUT and GET MB/s for 10 MiB files over loopback, slot request
# time and server CPU per MiB. Options are passed to upload.py (see
# --help). The build's scratch dir is .build unless SWIFTLET_BENCH_SCRATCH
# says otherwise. The run is stopped after 10 minutes at most (it takes
# about 1).
set -euo pipefail
cd "$(dirname "$0")/../.."
bench=upload.sh
. tools/benchmark/common.sh
need python3
command -v prosody >/dev/null || echo "upload.sh: prosody not installed (apt-get install prosody); measuring swiftletd alone" >&2
build_and_run 600 upload.py "$@"
