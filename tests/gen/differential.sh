#!/usr/bin/env bash
# differential.sh COUNT [FIRST_SEED] - differential testing (issue 17): for
# each seed in FIRST_SEED .. FIRST_SEED+COUNT-1, build/progen SEED writes a
# program (tests/gen/progen.c), which runs on every build below; their
# stdout, stderr and exit status must be identical to ./vm's:
#   ./vm, ./vm-boehm, ./vm --gc-stress, ./vm-asan (and ./vm-debug when built).
# A disagreement, a timeout, a signal, or a line "INVARIANT BROKEN: ..."
# (the program's self-checks of hash and compare) is kept under build/diff-failures/
# SEED/ (the program and each build's outputs) and printed; it becomes a
# test in tests/lang/hostile/. DIFF_JOBS seeds (default 2) run at a time.
# vm-asan runs without leak checking (the script suites check leaks; its
# scan of the 16M-word stack at exit tripled each run). Ends with "N passed,
# N failed", one per program. make test runs 2000 seeds from 1; make
# fuzz-diff N=... SEED=... runs others.
#   differential.sh --program FILE   runs one program through the builds
set -u
cd "$(dirname "$0")/../.." || exit 2
export ASAN_OPTIONS=detect_leaks=0:malloc_context_size=0
builds=("./vm" "./vm-boehm" "./vm --gc-stress" "./vm-asan")
[ -x ./vm-debug ] && builds+=("./vm-debug")

# compare PROGRAM KEEP_AS: runs PROGRAM on every build; prints "pass" or
# "FAIL" (and keeps the evidence under build/diff-failures/KEEP_AS).
compare() {
  local prog=$1 name=$2 dir i ok=1
  dir=$(mktemp -d)
  for i in "${!builds[@]}"; do
    # shellcheck disable=SC2086
    timeout 60 ${builds[$i]} "$prog" > "$dir/out$i" 2> "$dir/err$i"
    echo $? > "$dir/status$i"
    if [ "$i" -gt 0 ] && ! { cmp -s "$dir/out0" "$dir/out$i" && cmp -s "$dir/err0" "$dir/err$i" &&
                             cmp -s "$dir/status0" "$dir/status$i"; }; then
      ok=0
    fi
  done
  [ "$(cat "$dir/status0")" -ge 124 ] && ok=0   # a timeout or a signal on every build
  grep -q '^INVARIANT BROKEN' "$dir/out0" && ok=0   # the program's own checks (progen.c, 4.)
  if [ "$ok" -eq 1 ]; then
    echo "pass $name"
  else
    local keep="build/diff-failures/$name"
    rm -rf "$keep"
    mkdir -p "$keep"
    cp "$prog" "$keep/prog.mn"
    for i in "${!builds[@]}"; do
      { echo "# ${builds[$i]}: status $(cat "$dir/status$i")"; cat "$dir/out$i"; echo "# stderr"; cat "$dir/err$i"; } \
        > "$keep/build$i.txt"
    done
    echo "FAIL $name"
  fi
  rm -rf "$dir"
}

case "${1:-}" in
  --seed)   # internal: one seed (xargs)
    prog=$(mktemp --suffix=.mn)
    build/progen "$2" > "$prog"
    compare "$prog" "$2"
    rm -f "$prog"
    exit 0 ;;
  --program)
    compare "$2" "$(basename "$2" .mn)"
    exit 0 ;;
esac

count=${1:?usage: differential.sh COUNT [FIRST_SEED] | --program FILE}
first=${2:-1}
[ -x build/progen ] || { echo "differential: build/progen is not built"; echo "0 passed, 1 failed"; exit 1; }
for b in "${builds[@]}"; do
  [ -x "${b%% *}" ] || { echo "differential: ${b%% *} is not built"; echo "0 passed, 1 failed"; exit 1; }
done
results=$(seq "$first" $((first + count - 1)) | xargs -P "${DIFF_JOBS:-2}" -I{} bash "$0" --seed {})
pass=$(grep -c '^pass ' <<< "$results")
fail=$(grep -c '^FAIL ' <<< "$results")
grep '^FAIL ' <<< "$results" | sort -n -k2 | sed 's|^FAIL \(.*\)|FAIL seed \1: the builds disagree (build/diff-failures/\1)|'
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
