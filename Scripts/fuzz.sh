#!/usr/bin/env bash
# `make fuzz`: builds each libFuzzer target (Fuzz/README.md) and runs it for a bounded time.
#
#   Scripts/fuzz.sh                      every target, FUZZ_SECONDS (default 60) each
#   Scripts/fuzz.sh fuzz-mime            only the named targets
#   FUZZ_SECONDS=600 Scripts/fuzz.sh     longer runs
#   FUZZ_CONFIGURATION (release), FUZZ_TIMEOUT (10 s), FUZZ_RSS_LIMIT_MB (2048) override the defaults
#
# Everything it writes stays under .build-fuzz/ (never in the repository): the build, the corpus the
# fuzzer grows (.build-fuzz/corpus/<target>, seeded read-only from Fuzz/Corpus/<target>) and any crash,
# timeout or out-of-memory input (.build-fuzz/crashes/<target>/). Exits non-zero if any target failed.
set -euo pipefail
cd "$(dirname "$0")/.."

SWIFT=${SWIFT:-swift}
SECONDS_PER_TARGET=${FUZZ_SECONDS:-60}
TIMEOUT=${FUZZ_TIMEOUT:-10}        # seconds one input may take before it counts as a hang
RSS_LIMIT=${FUZZ_RSS_LIMIT_MB:-2048}
# release: about 8x the executions per second of debug; preconditions, bounds and overflow checks
# stay on (only -Ounchecked removes them). FUZZ_CONFIGURATION=debug for better stack traces.
CONFIGURATION=${FUZZ_CONFIGURATION:-release}
SCRATCH=.build-fuzz
ALL_TARGETS=(fuzz-mime fuzz-dkim-tags fuzz-markup fuzz-resolve)
TARGETS=("$@")
[ ${#TARGETS[@]} -gt 0 ] || TARGETS=("${ALL_TARGETS[@]}")

# Longest input per target: a message, a key record plus a message, an HTML page, a JSON-LD document.
max_len() {
    case $1 in
        fuzz-mime) echo 65536 ;;
        fuzz-dkim-tags) echo 16384 ;;
        fuzz-markup) echo 131072 ;;
        fuzz-resolve) echo 32768 ;;
        *) echo 65536 ;;
    esac
}

# The targets exist only in this mode of the manifest (Package.swift); -parse-as-library because
# libFuzzer, not the target, supplies main; coverage and AddressSanitizer for every module built.
export GATEWAY_FUZZ=1
# A Swift trap must reach libFuzzer's handler, not the runtime's backtracer.
export SWIFT_BACKTRACE=enable=no
build_flags=(-c "$CONFIGURATION" --scratch-path "$SCRATCH"
    -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library)

failed=()
for target in "${TARGETS[@]}"; do
    if [ ! -d "Fuzz/Sources/$target" ]; then
        echo "fuzz: no target $target (Fuzz/Sources/$target is missing)" >&2
        failed+=("$target")
        continue
    fi
    echo "== $target: building"
    "$SWIFT" build "${build_flags[@]}" --product "$target"
    binary="$("$SWIFT" build "${build_flags[@]}" --show-bin-path)/$target"
    corpus="$SCRATCH/corpus/$target"
    crashes="$SCRATCH/crashes/$target"
    mkdir -p "$corpus" "$crashes"
    options=(-max_total_time="$SECONDS_PER_TARGET" -timeout="$TIMEOUT" -rss_limit_mb="$RSS_LIMIT"
        -max_len="$(max_len "$target")" -artifact_prefix="$crashes/" -print_final_stats=1)
    [ -f "Fuzz/Dictionaries/$target.dict" ] && options+=(-dict="Fuzz/Dictionaries/$target.dict")
    echo "== $target: fuzzing for ${SECONDS_PER_TARGET}s"
    # The first corpus directory is where new inputs go; the seeds are only read.
    if "$binary" "${options[@]}" "$corpus" "Fuzz/Corpus/$target" 2>"$SCRATCH/$target.log"; then
        grep -E '^stat::(number_of_executed_units|average_exec_per_sec|peak_rss_mb)|^#[0-9]+.*DONE' \
            "$SCRATCH/$target.log" || true
        echo "== $target: no crash"
    else
        # The crash report, from the sanitizer's or libFuzzer's first line; in release builds a failed
        # precondition prints no message, so the stack's first frame in our sources says which.
        sed -n '/^==[0-9]*==\( ERROR\|ERROR\)/,$p' "$SCRATCH/$target.log" | head -n 40
        grep -m 3 -E 'Fatal error|Test unit written' "$SCRATCH/$target.log" || true
        echo "== $target: FAILED; input(s) in $crashes/, full log in $SCRATCH/$target.log" >&2
        echo "   reproduce: SWIFT_BACKTRACE=enable=no $binary $crashes/<file>" >&2
        failed+=("$target")
    fi
done

if [ ${#failed[@]} -gt 0 ]; then
    echo "fuzz: failed: ${failed[*]}" >&2
    exit 1
fi
echo "fuzz: all targets ran ${SECONDS_PER_TARGET}s without a crash"
