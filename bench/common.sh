# common.sh: sourced by gc_bench.sh and gc_share.sh: the bench programs' default
# cases, and the median both take.
# One case a line: program (bench/programs/NAME.mn, bench/lua/NAME.lua) and its arguments.
# Sizes are chosen so that the whole bench stays under ~10 minutes on 2 cores.
# Per run, roughly: vm 0.5-4 s, vm-boehm 1-9 s, lua5.4 1-20 s (lua is slow on cons lists).
# binary_trees 20 is the classic size, but takes ~30 s on vm and ~130 s on lua5.4 a run:
# ask for it with BENCH_CASES="binary_trees 20".
default_cases="binary_trees 16
binary_trees 18
list_pipeline 10000 600
deep_map 10000 400
word_count 1000000
string_build 20000 80"

# The cases to run, one a line: BENCH_CASES ("prog args;prog args...") or the defaults.
bench_cases() {
  printf '%s\n' "${BENCH_CASES:-$default_cases}" | tr ';' '\n' | sed 's/^ *//; s/ *$//; /^$/d'
}

# The median of the numbers on stdin, one a line (the mean of the middle two
# when there is an even count); nothing when there are none.
median() {
  sort -g | awk '{ v[NR] = $1 } END { if (!NR) exit; m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; print m }'
}
