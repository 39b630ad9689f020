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
scratch="${SWIFTLET_BENCH_SCRATCH:-.build}"
command -v python3 >/dev/null || { echo "upload.sh: python3 not found" >&2; exit 69; }
command -v prosody >/dev/null || echo "upload.sh: prosody not installed (apt-get install prosody); measuring swiftletd alone" >&2
swift build -c release --product swiftletd --scratch-path "$scratch"
# The commit, and whether the working tree differed from it, for the report.
revision="$(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
[ -z "$(git --no-optional-locks status --porcelain -- Sources Package.swift 2>/dev/null)" ] || revision="$revision+local-changes"
exec timeout 600 python3 tools/benchmark/upload.py \
    --swiftletd "$scratch/release/swiftletd" --revision "$revision" "$@"
