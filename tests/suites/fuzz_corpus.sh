#!/usr/bin/env bash
# fuzz_corpus.sh - replays the fuzz corpus (tests/fuzz/corpus) and every past
# finding (tests/fuzz/findings) through the in-process fuzz target under
# ASan+UBSan (build/fuzzreplay/fuzz_replay, one process, leaks checked at
# its end): each input counts as passed when it ran to its end. A sanitizer
# report or a signal fails the suite. Ends with "N passed, N failed".
set -u
cd "$(dirname "$0")/../.." || exit 2
. tests/suites/lib.sh
suite_init fuzz_corpus
bin=build/fuzzreplay/fuzz_replay
[ -x "$bin" ] || suite_abort "$bin is not built (make fuzz-replay): not run"
inputs=()
while IFS= read -r f; do inputs+=("$f"); done < <(find tests/fuzz/corpus tests/fuzz/findings -type f | LC_ALL=C sort)
log=$(mktemp)
scratch=$(mktemp -d)   # inputs may write files (Memtrace.start): not in the tree
trap 'rm -rf "$log" "$scratch"' EXIT
root=$(pwd)
(cd "$scratch" && ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
  timeout 600 "$root/$bin" "${inputs[@]/#/$root/}" >/dev/null 2>"$log")
status=$?
ran=$(grep -c ': ran in [0-9]* us$' "$log")
failed=$((${#inputs[@]} - ran))
if [ "$status" -ne 0 ] || grep -q "Sanitizer\|runtime error" "$log"; then
  echo "fuzz_corpus: the replay ended with status $status:"
  grep -B2 -A12 "Sanitizer\|runtime error" "$log" | head -40
  [ "$failed" -eq 0 ] && failed=1
fi
pass=$ran
fail=$failed
suite_end
