#!/usr/bin/env bash
# Builds one libFuzzer harness (tools/fuzz/README.md) and runs it for a while:
#
#   tools/fuzz.sh TARGET SECONDS     TARGET: xml-stream jid scram http config
#                                    stored-stanza, or all (one after another)
#
# The build goes to its own scratch path, .build/fuzz, so the normal debug
# and release builds are left alone. The fuzzer starts from a copy of
# tools/fuzz/corpus/TARGET in .build/fuzz-runs/TARGET/corpus (kept between
# runs, so a later run goes on from there) and saves what it finds in
# .build/fuzz-runs/TARGET/findings. Exits non-zero if any target crashed,
# broke an invariant, ran over its time limit, leaked or ran out of memory.
# Replay a finding with: .build/fuzz/release/fuzz-TARGET FILE
set -euo pipefail
cd "$(dirname "$0")/.."

targets=(xml-stream jid scram http config stored-stanza websocket)

# Each input may take 5 s. At its largest input (below) every harness does
# linear work in well under 1 s, even with AddressSanitizer on a busy
# machine; a quadratic step costs about (size)^2 ns, hours at 1 MiB and over
# a minute at 256 KiB. 5 s flags that and leaves room for a loaded machine.
timeout_seconds=5

# The largest input per target: large enough to pass every limit the code
# under test enforces, so that work growing faster than the input shows.
max_len() {
    case "$1" in
        # Past the stream's default 256 KiB stanza limit several times over;
        # stored stanzas come from streams allowed up to max_stanza_size.
        xml-stream | stored-stanza) echo $((1024 * 1024)) ;;
        # JID parts stop at 4092 bytes before PRECIS, but PRECIS itself takes
        # any length (passwords, SCRAM usernames before their own bound);
        # the quadratic check of security review C1 cost 62 ms at 14 KB.
        jid) echo $((256 * 1024)) ;;
        # A SASL message fits in the 16 KiB pre-authentication stanza; an HTTP
        # head is at most 8 KiB of request line and 16 KiB of fields.
        scram | http) echo $((64 * 1024)) ;;
        # Frames of a few messages, past the 16 KiB pre-login limit.
        websocket) echo $((64 * 1024)) ;;
        # Config files are typed by people; 256 KiB is far beyond any real one.
        config) echo $((256 * 1024)) ;;
    esac
}

usage() {
    echo "usage: tools/fuzz.sh TARGET SECONDS (TARGET: ${targets[*]} or all)" >&2
    exit 2
}

[ $# -eq 2 ] && [[ "$2" =~ ^[0-9]+$ ]] || usage
if [ "$1" = all ]; then
    failed=()
    for target in "${targets[@]}"; do
        "$0" "$target" "$2" || failed+=("$target")
    done
    [ ${#failed[@]} -eq 0 ] || { echo "fuzzing found problems in: ${failed[*]}" >&2; exit 1; }
    exit 0
fi
target="$1"
seconds="$2"
[[ " ${targets[*]} " == *" $target "* ]] || usage

# --sanitize fuzzer makes SwiftPM build and link for libFuzzer; the swiftc
# flag turns on both sanitizers at once, since of two -sanitize= flags the
# compiler keeps only the last (SwiftPM's --sanitize address would leave
# the code without coverage counters). LIBFUZZER drops the replay main.
swift build -c release --scratch-path .build/fuzz --product "fuzz-$target" \
    --sanitize fuzzer -Xswiftc -sanitize=fuzzer,address -Xswiftc -DLIBFUZZER

run=".build/fuzz-runs/$target"
mkdir -p "$run/corpus" "$run/findings"
cp -n tools/fuzz/corpus/"$target"/* "$run/corpus/"

# The Swift runtime's own crash backtracer would run before libFuzzer saves
# the input; libFuzzer and AddressSanitizer report crashes themselves.
# Memory: a 1 MiB input parsed into Element trees takes some tens of MB, so
# 2 GiB (libFuzzer's default, stated here) means growth without bound.
echo "fuzzing $target for $seconds s"
SWIFT_BACKTRACE=enable=no LSAN_OPTIONS="suppressions=tools/fuzz/lsan.supp" \
    ".build/fuzz/release/fuzz-$target" \
    -max_total_time="$seconds" \
    -timeout="$timeout_seconds" \
    -max_len="$(max_len "$target")" \
    -rss_limit_mb=2048 \
    -print_final_stats=1 \
    -artifact_prefix="$run/findings/" \
    "$run/corpus"
