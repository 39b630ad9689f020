# Sourced by the benchmark wrappers (run.sh, routing.sh, muc.sh, upload.sh,
# reconnect.sh):
# run from the repository's root, they build swiftletd in release and run
# one of the Python benchmarks on it.

# need TOOL… — exits with 69 when a required program is missing.
need() {
    local tool
    for tool in "$@"; do
        command -v "$tool" >/dev/null || { echo "$bench: $tool not found (apt-get install $tool)" >&2; exit 69; }
    done
}

# note_ejabberd, note_uvloop — say what the run goes without, if anything.
note_ejabberd() {
    command -v ejabberdctl >/dev/null || echo "$bench: ejabberd not installed (apt-get install ejabberd); measuring without it" >&2
}
note_uvloop() {
    python3 -c 'import uvloop' 2>/dev/null || echo "$bench: uvloop not installed (pip install uvloop); the client uses asyncio's own loop and needs more CPU" >&2
}

# build_and_run SECONDS SCRIPT ARGS… — builds swiftletd (scratch dir .build
# unless SWIFTLET_BENCH_SCRATCH says otherwise), then runs
# tools/benchmark/SCRIPT on it with the commit for the report, stopped
# after SECONDS.
build_and_run() {
    local seconds="$1" script="$2" scratch="${SWIFTLET_BENCH_SCRATCH:-.build}" revision
    shift 2
    swift build -c release --product swiftletd --scratch-path "$scratch"
    # The commit, and whether the working tree differed from it.
    revision="$(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
    [ -z "$(git --no-optional-locks status --porcelain -- Sources Package.swift 2>/dev/null)" ] || revision="$revision+local-changes"
    exec timeout "$seconds" python3 "tools/benchmark/$script" \
        --swiftletd "$scratch/release/swiftletd" --revision "$revision" "$@"
}

# side_by_side SECONDS SCRIPT ARGS… — build_and_run for the benchmarks
# against Prosody and, when it is installed, ejabberd (servers.py makes
# Prosody's certificate with openssl).
side_by_side() {
    need prosody prosodyctl openssl python3
    note_ejabberd
    note_uvloop
    build_and_run "$@"
}
