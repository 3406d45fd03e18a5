#!/usr/bin/env bash
# gen_sweep.sh OUTDIR - generates the builtin sweep (issue 17): one Minnow
# script per standard-library module (OUTDIR/sweep_<module>.mn, from the
# `fn` and `external` declarations of stdlib/*.mn) and one for every C
# primitive (OUTDIR/sweep_primitives.mn, bound by `external` from
# lang/lib/primitives.h's PRIMITIVE_LIST), so that a new function is swept
# without anyone writing its cases. Each function is called
#   * with each argument position set to each of the values below (extreme
#     ints, floats with nan and infinities, strings, nil, bools, lists,
#     improper lists, tuples, arrays, records, closures of several arities,
#     cyclic values, buffers, hash tables, memprof handles), the other
#     positions holding a plausible value chosen by the parameter's name;
#   * with every two int-taking positions (those whose plausible value is an
#     int) set to every pair of the int edges 0, 1, -1, 2, max_int,
#     max_int - 1, min_int, min_int + 1 (issue 23: no range end may wrap);
#   * through a variable with one argument too few and one too many;
# each inside `try`. sweep_prelude.mn also calls compare and == on every
# pair of the values and stops with status 3 if two equal values hash
# differently; sweep_hashtbl.mn uses every value as a key of one table. A script prints one last line
#   sweep MODULE: N calls, M errors caught
# and must exit 0 with nothing on stderr (tests/suites/builtin_sweep.sh).
set -u
out=${1:?usage: gen_sweep.sh OUTDIR}
cd "$(dirname "$0")/../.." || exit 2
mkdir -p "$out"

# The values every position is tried with, as Minnow expressions, and the
# helpers they need. Sys.exit skips the small ints (a valid status ends the
# run): values 0..4 below are the ints 0 .. 255.
prelude() {
  cat <<'EOF'
let v_nan = 0.0 / 0.0
let v_inf = 1e308 * 10.0
var v_profile = nil
var v_callstack = nil
try {
  v_profile = Memprof.start({sampling_rate: 1.0, tracker: {alloc_minor: fn(info) {
    if v_callstack == nil { v_callstack = info.callstack }
    nil
  }}})
  let keep = (1, 2)
  Memprof.stop()
} catch e { nil }
let v_cyclic_array = [| 0 |]
v_cyclic_array[0] = v_cyclic_array
let v_cyclic_record = {next: nil, v: 1}
v_cyclic_record.next = v_cyclic_record
let values = [| 0, -1, 1, 2, 255, 256, 65536, 2147483648, 4611686018427387903, Int.min_int,
  4611686018427387902, Int.min_int + 1, 4294967296, -4294967296,
  0.0, -0.0, v_nan, v_inf, -v_inf, 1e-300, 1.5, -7.25e18,
  "", "a", "\x00", String.repeat("x", 1000), "0x10", "-", "\xff\xfe",
  nil, true, false,
  [], [1], [nil], 1 :: 2, ["a", "b"], [[1], [2]],
  (1, 2), (1, 2, 3), ("k", "v"),
  [||], [|1|], [|"a", 0|], Array.make(300, 0), v_cyclic_array,
  {x: 1}, {sampling_rate: 1.0}, {size: 0, data: [||]}, v_cyclic_record,
  fn() { 1 }, fn(a) { a }, fn(a, b) { a }, fn(a, b, c) { raise("boom") }, compare,
  Buffer.create(1), Hashtbl.create(1), v_profile, v_callstack |]
let edges = [| 0, 1, -1, 2, Int.max_int, Int.max_int - 1, Int.min_int, Int.min_int + 1 |]
var calls = 0
var caught = 0
fn t(f) {
  calls = calls + 1
  try { f(); nil } catch e { caught = caught + 1 }
}
EOF
}

# A plausible argument for a parameter, by its name.
default_for() {
  case "$1" in
    f|g|fn|callback|mapper) echo 'fn(x) { x }' ;;
    cmp) echo 'compare' ;;
    p|pred) echo 'fn(x) { true }' ;;
    l|l1|l2|ls|xs|list|bytes|lst) echo '[1, 2, 3]' ;;
    a) case "$2" in List|Int) echo '1' ;; Float) echo '1.5' ;; *) echo '[|1, 2, 3|]' ;; esac ;;
    arr|src|dst) echo '[|1, 2, 3|]' ;;
    s|sep|prefix|suffix|pattern|name|file|str) echo '"abc"' ;;
    b) [ "$2" = Buffer ] && echo 'Buffer.create(4)' || echo '1' ;;
    h|tbl) echo 'Hashtbl.create(4)' ;;
    cs) echo 'v_callstack' ;;
    keep) echo 'true' ;;
    rate) echo '0.5' ;;
    acc|init) echo '0' ;;
    x|y) [ "$2" = Float ] && echo '1.5' || echo '1' ;;
    *) echo '1' ;;
  esac
}

# Its arguments joined by ", ".
join() {
  local first=1 a
  for a in "$@"; do
    [ "$first" -eq 1 ] || printf ', '
    printf '%s' "$a"
    first=0
  done
}

# emit MODULE QUALIFIED_NAME PARAMS... : the calls for one function.
emit() {
  local module=$1 name=$2
  shift 2
  local params=("$@") n=$# i j args
  for ((i = 0; i < n; i++)); do
    args=()
    for ((j = 0; j < n; j++)); do
      if [ "$j" -eq "$i" ]; then args+=("values[k]"); else args+=("$(default_for "${params[$j]}" "$module")"); fi
    done
    local from=0
    [ "$name" = "Sys.exit" ] && from=5
    printf 'for k in %d..Array.length(values) { t(fn() { %s(%s) }) }\n' "$from" "$name" "$(join "${args[@]}")"
  done
  # Every two int-taking positions at every pair of the int edges.
  if [ "$name" != "Sys.exit" ]; then
    local ints=()
    for ((j = 0; j < n; j++)); do
      [[ $(default_for "${params[$j]}" "$module") =~ ^-?[0-9]+$ ]] && ints+=("$j")
    done
    local p q
    for ((p = 0; p < ${#ints[@]}; p++)); do
      for ((q = p + 1; q < ${#ints[@]}; q++)); do
        args=()
        for ((j = 0; j < n; j++)); do
          if [ "$j" -eq "${ints[$p]}" ]; then args+=("x")
          elif [ "$j" -eq "${ints[$q]}" ]; then args+=("y")
          else args+=("$(default_for "${params[$j]}" "$module")"); fi
        done
        printf 'for x in edges { for y in edges { t(fn() { %s(%s) }) } }\n' "$name" "$(join "${args[@]}")"
      done
    done
  fi
  # Wrong arity, through a variable so that it is a run-time error.
  local few=() many=()
  for ((j = 0; j < n - 1; j++)); do few+=(1); done
  for ((j = 0; j < n + 1; j++)); do many+=(1); done
  [ "$name" = "Sys.exit" ] && return   # exit() is an arity error anyway, but exit(1, 1) must not exit either
  printf 't(fn() { let g = %s; g(%s) })\n' "$name" "$(join "${few[@]}")"
  printf 't(fn() { let g = %s; g(%s) })\n' "$name" "$(join "${many[@]}")"
}

# Adversarial pairs and keys (issue 23, class 3), after the module's calls.
extra_prelude() {
  cat <<'EOF2'
for x in values {
  for y in values {
    t(fn() { compare(x, y) })
    t(fn() { x < y })
    if x == y && hash(x) != hash(y) {
      println("sweep: equal values hash differently: " ++ str(x) ++ " and " ++ str(y))
      Sys.exit(3)
    }
  }
}
EOF2
}
extra_hashtbl() {
  cat <<'EOF2'
let keyed = Hashtbl.create(1)
for x in values { t(fn() { Hashtbl.replace(keyed, x, x) }) }
for x in values { t(fn() { Hashtbl.add(keyed, x, 0); Hashtbl.find(keyed, x) }) }
for x in values { t(fn() { Hashtbl.remove(keyed, x); Hashtbl.find_all(keyed, x) }) }
for x in edges { for y in edges { t(fn() { Hashtbl.replace(keyed, (x, y), Float.of_int(x)) }) } }
for x in edges { t(fn() { Hashtbl.replace(keyed, Float.of_int(x), x) }) }
t(fn() { Hashtbl.length(keyed) })
EOF2
}

# The functions of one stdlib file: "name param param..." per line.
functions_of() {
  sed -n -E 's/^(fn|external) +([a-z_][a-z_0-9]*) *\(([^)]*)\).*/\2 \3/p' "$1" | tr -d ','
}

for file in stdlib/*.mn; do
  base=$(basename "$file" .mn)
  module=$(printf '%s' "${base:0:1}" | tr a-z A-Z)${base:1}
  script="$out/sweep_$base.mn"
  {
    echo "// generated by tests/sweep/gen_sweep.sh from $file: do not edit"
    prelude
    while read -r fname params; do
      [ -n "$fname" ] || continue
      # eprint, eprintln write to stderr, which must stay empty: they print
      # through ops_print, as print and println, which are swept.
      [ "$base" = prelude ] && case $fname in eprint | eprintln) continue ;; esac
      # shellcheck disable=SC2086
      if [ "$base" = prelude ]; then emit "$module" "$fname" $params
      else emit "$module" "$module.$fname" $params; fi
    done < <(functions_of "$file")
    extra_$base 2> /dev/null || true
    echo "println(\"sweep $module: \" ++ str(calls) ++ \" calls, \" ++ str(caught) ++ \" errors caught\")"
  } > "$script"
done

# Every C primitive, bound under its own name (those no module exposes too).
script="$out/sweep_primitives.mn"
{
  echo "// generated by tests/sweep/gen_sweep.sh from lang/lib/primitives.h: do not edit"
  grep -o 'X([a-z_0-9]*, [0-9]*)' lang/lib/primitives.h | sed -E 's/X\(([a-z_0-9]*), ([0-9]*)\)/\1 \2/' |
    while read -r prim arity; do
      params=$(for ((j = 0; j < arity; j++)); do printf 'a%d' "$j"; [ "$j" -lt $((arity - 1)) ] && printf ', '; done)
      echo "external p_$prim($params) = \"$prim\""
    done
  prelude
  grep -o 'X([a-z_0-9]*, [0-9]*)' lang/lib/primitives.h | sed -E 's/X\(([a-z_0-9]*), ([0-9]*)\)/\1 \2/' |
    while read -r prim arity; do
      [ "$prim" = sys_exit ] && continue   # swept in sweep_sys.mn, without the statuses
      case $prim in eprint | eprintln) continue ;; esac   # stderr must stay empty (above)
      params=()
      for ((j = 0; j < arity; j++)); do params+=(x); done
      emit Prim "p_$prim" "${params[@]}"
    done
  echo 'println("sweep primitives: " ++ str(calls) ++ " calls, " ++ str(caught) ++ " errors caught")'
} > "$script"
ls "$out"/sweep_*.mn | wc -l
