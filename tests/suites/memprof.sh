#!/usr/bin/env bash
# memprof.sh - the memprof script tests (tests/memprof/**/*.mn):
#   1. on ./vm, all of them;
#   2. on ./vm --gc-stress, all but tests/memprof/stats/ (statistical and big
#      scripts: a minor collection at every allocation makes them too slow);
#   (tests/memprof/rates/ is left to memprof_rates.sh, which runs each script
#   at several rates;)
#   3. on ./vm-asan, all of them, if ./vm-asan is built;
#   4. on ./vm-debug (every ASSERT checked), all of them, if built.
# Statistical scripts use fixed seeds: MINNOW_SEED is set here unless the
# caller chose one. Run by tests/run_all.sh, which reads the last line:
# "N passed, N failed" (the sum of the three runs). Exit status 0 iff none
# failed.
set -u
cd "$(dirname "$0")/../.." || exit 2
export MINNOW_SEED="${MINNOW_SEED:-20250101}"

. tests/suites/lib.sh
suite_init memprof
require_built ./vm

# tests/memprof/rates/ has a suite of its own (memprof_rates.sh: each script
# at several rates).
all=()
while IFS= read -r f; do all+=("$f"); done < <(find tests/memprof -name '*.mn' -not -path 'tests/memprof/rates/*' | LC_ALL=C sort)
lang_run "vm" --vm ./vm --timeout 120 "${all[@]}"

stress=()
for f in "${all[@]}"; do case "$f" in tests/memprof/stats/*) ;; *) stress+=("$f") ;; esac; done
lang_run "vm --gc-stress" --vm ./vm --flags "--gc-stress" --timeout 300 "${stress[@]}"

if [ -x ./vm-asan ]; then
  lang_run "vm-asan" --vm ./vm-asan --timeout 300 "${all[@]}"
fi

# No room for memprof's side stack (tests/memprof/no_room.mn). With 50 M
# stack words the VM's two stacks take 763 MiB; the side stack's arrays then
# take 763, 381, 572 and 763 MiB in turn, so under 2,246 MiB the first two
# are allocated and the third is not: a start that fails half-way. Not under
# ASan, whose shadow memory needs more than the limit.
out=$( (ulimit -v 2300000; ./vm --stack-words 50000000 tests/memprof/no_room.mn) 2>&1 ); status=$?
want=$(printf 'Memprof.start: cannot start a profile\nMemprof.start: cannot start a profile\n1000')
if [ "$status" -eq 0 ] && [ "$out" = "$want" ]; then ok
else bad "no room for the side stack: exit $status, output: $(printf '%s' "$out" | head -3 | tr '\n' '|')"
fi
if [ -x ./vm-debug ]; then
  lang_run "vm-debug" --vm ./vm-debug --timeout 300 "${all[@]}"
fi

suite_end
