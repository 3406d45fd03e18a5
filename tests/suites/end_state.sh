#!/usr/bin/env bash
# end_state.sh - a trace's end state (docs/design.md, "The end state";
# docs/trace-format.md, section 12): the final collection and the retaining
# paths written beside the trace in T.ctf.retain, read back with
# build/release/tests/retain_dump.
#   1. every kind of root and hop (tests/retention/kinds.mn, at rate 1):
#      locals and captures by name, record fields, list cells and elements,
#      tuple and array indices, a Hashtbl's key, value and entry (and a
#      user's record of its field names and layout, not named so), a Buffer's
#      storage, a cycle, a path of more than 64 runs with its elided middle
#   2. every way out takes it: the end, Sys.exit, an uncaught error, out of
#      memory, SIGINT and SIGTERM (in a loop that allocates nothing and in
#      one that does), Memtrace.stop(); the exit status is the cause's
#   3. after it, allocations = collections + live samples in the trace, and
#      memtrace's own dump_trace still prints what tools/memtrace dump does
#   4. --memtrace-no-end-state says it skipped; a stale file goes at start;
#      a trace on a pipe gets no file and no message; a file that cannot be
#      written gets one message and the run's status is unchanged
#   5. vm-debug (which checks every hop of every path it writes) and
#      vm-asan on the programs of bench/leaks and tests/retention
set -u
cd "$(dirname "$0")/../.." || exit 2
. tests/suites/lib.sh
suite_init end_state
dump=build/release/tests/retain_dump
require_built ./vm "$dump" tools/memtrace
tmp=$(mktemp -d)

# has FILE REGEX WHAT: FILE has a line matching REGEX.
has() {
  if grep -Eq -- "$2" "$1"; then ok; else bad "$3: no line /$2/ in"; sed 's/^/    /' "$1" | head -12; fi
}

# header FILE.retain REGEX WHAT: the header line of the dump matches REGEX.
header() {
  if "$dump" "$1" > "$tmp/h" 2> "$tmp/h.err" && head -1 "$tmp/h" | grep -Eq -- "$2"; then ok
  else bad "$3: header /$2/ not found"; head -1 "$tmp/h" "$tmp/h.err" | sed 's/^/    /'; fi
}

# ------------------------------------------------------------------ 1. kinds
./vm tests/retention/kinds.mn "$tmp/k.ctf" > "$tmp/out" 2> "$tmp/err"
check "kinds.mn runs" "[ $? -eq 0 ]"
"$dump" "$tmp/k.ctf.retain" > "$tmp/k" 2> "$tmp/err"
check "kinds.mn's end state reads" "[ $? -eq 0 ]"
k=tests/retention/kinds.mn
has "$tmp/k" '^pid=[0-9]+ allocs=[0-9]+ final_gc=1 paths=1 live=([0-9]+) written=\1 ' "every live sample has a path"
has "$tmp/k" "^[0-9]+ stack keep $k:[0-9]+ local=local_list slot=[0-9]+\$" "a frame's local by name"
has "$tmp/k" "^[0-9]+ stack keep $k:[0-9]+ local=local_list slot=[0-9]+ -> list cell\$" "a list's second cell"
has "$tmp/k" "^[0-9]+ stack keep $k:[0-9]+ local=local_list slot=[0-9]+ -> list element\$" "a list's element"
has "$tmp/k" "^[0-9]+ stack keep $k:[0-9]+ local=big slot=[0-9]+\$" "another local"
has "$tmp/k" '^[0-9]+ global registry -> field items -> list element -> field payload$' "record fields by name"
has "$tmp/k" '^[0-9]+ global table -> Hashtbl key$' "a Hashtbl's key"
has "$tmp/k" '^[0-9]+ global table -> Hashtbl value$' "a Hashtbl's value"
has "$tmp/k" '^[0-9]+ global table -> Hashtbl entry$' "a Hashtbl's pair"
has "$tmp/k" '^[0-9]+ global fresh -> Hashtbl storage$' "a Hashtbl's bucket array"
has "$tmp/k" '^[0-9]+ global lookalike -> field data -> array\[0\] -> list element -> tuple\[1\]$' \
  "a user's record {size, data} laid out as a Hashtbl is named by its fields"
has "$tmp/k" '^[0-9]+ global lookalike -> field data$' "its array, by its field"
check "no hop of the user's record {size, data} is named Hashtbl" "! grep -q 'lookalike -> Hashtbl' '$tmp/k'"
has "$tmp/k" '^[0-9]+ global grid -> array\[1\] -> tuple\[1\]$' "array and tuple indices"
has "$tmp/k" '^[0-9]+ global counter -> capture hidden\[0\]$' "a closure's capture by name"
has "$tmp/k" '^[0-9]+ global buf -> Buffer storage$' "a Buffer's storage"
has "$tmp/k" '^[0-9]+ global node$' "a record in a cycle, held by a global"
has "$tmp/k" '^[0-9]+ global node -> field name$' "a field of the record in a cycle"
has "$tmp/k" '^[0-9]+ global chain( -> field [ab]){32} -> \.\.\. x[0-9]+( -> field [ab]){31} -> field leaf$' \
  "a path of 201 runs keeps its first and last 32 and elides the rest"
n=$(grep -c ' -> \.\.\. x' "$tmp/k")
check "every record of the 200-deep chain past 64 runs has an elided path ($n)" "[ $n -ge 130 ]"

./vm tests/retention/raised.mn "$tmp/r.ctf" > "$tmp/out" 2> "$tmp/err"
check "an uncaught error exits 1" "[ $? -eq 1 ]"
"$dump" "$tmp/r.ctf.retain" > "$tmp/r" 2> "$tmp/err"
has "$tmp/r" '^[0-9]+ (stack fail tests/retention/raised.mn:2 local=- slot=[0-9]+|exception) -> field data$' \
  "the raised value's array, held by the raising frame or the exception"

# ------------------------------------------------------------- 2. ways out
# way NAME STATUS SCRIPT [VM ARGS...]: traced at 1e-2; the status and an end state.
way() {
  local name=$1 want=$2 script=$3
  shift 3
  rm -f "$tmp/w.ctf" "$tmp/w.ctf.retain"
  timeout 60 ./vm --memtrace "$tmp/w.ctf" --memtrace-rate 1e-2 "$@" "tests/exit/$script" > "$tmp/out" 2> "$tmp/err" < /dev/null
  local got=$?
  check "$name: exit status $got, expected $want" "[ $got -eq $want ]"
  header "$tmp/w.ctf.retain" '^pid=[0-9]+ allocs=[0-9]+ final_gc=1 paths=1 live=([0-9]+) written=[0-9]+ ' "$name"
}
way "end of script" 0 normal.mn
way "Sys.exit(3)" 3 sys_exit.mn
way "uncaught error" 1 uncaught.mn
way "out of memory" 1 oom.mn --max-heap-words 200000
for case in "INT spin.mn" "TERM spin.mn" "INT churn.mn" "TERM spin_for.mn"; do
  read -r sig script <<<"$case"
  rm -f "$tmp/w.ctf" "$tmp/w.ctf.retain"
  run_signalled 0.3 "$sig" "$tmp/out" "$tmp/err" ./vm --memtrace "$tmp/w.ctf" --memtrace-rate 1e-2 "tests/exit/$script"
  got=$?
  check "SIG$sig in $script: status $got" "[ $got -eq $((128 + $(kill -l "$sig"))) ]"
  header "$tmp/w.ctf.retain" 'final_gc=1 paths=1' "SIG$sig in $script"
done
# SIGINT in a loop that allocates: the innermost frame's local still holds its list.
cat > "$tmp/serve.mn" <<'EOF'
fn serve() {
  var kept = []
  var i = 0
  while true { kept = {id: i} :: kept; i = i + 1 }
}
serve()
EOF
run_signalled 0.3 INT "$tmp/out" "$tmp/err" ./vm --memtrace "$tmp/s.ctf" --memtrace-rate 1e-2 "$tmp/serve.mn"
check "SIGINT in serve.mn: status 130" "[ $? -eq 130 ]"
"$dump" "$tmp/s.ctf.retain" > "$tmp/s" 2> "$tmp/err"
has "$tmp/s" "^[0-9]+ stack serve $tmp/serve.mn:4 local=kept slot=[0-9]+ -> list cell x[0-9]+ -> list element\$" \
  "SIGINT waits for an allocation: the loop's frame is a root"

# Memtrace.stop(): the file is there when stop returns, and the program goes on.
cat > "$tmp/stop.mn" <<'EOF'
let keep = Array.make(1000, 0)
Memtrace.start(List.nth(Sys.argv(), 1), 0.5)
var l = []
for i in 0..100 { l = (i, i) :: l }
Memtrace.stop()
println(if Sys.argv() == [] { 0 } else { List.length(l) })
EOF
./vm "$tmp/stop.mn" "$tmp/m.ctf" > "$tmp/out" 2> "$tmp/err"
check "Memtrace.stop: the program goes on" "grep -qx 100 '$tmp/out'"
header "$tmp/m.ctf.retain" 'final_gc=1 paths=1' "Memtrace.stop()"
"$dump" "$tmp/m.ctf.retain" > "$tmp/m"
has "$tmp/m" '^[0-9]+ global l -> list cell x[0-9]+ -> list element$' "Memtrace.stop(): a global list's pairs"

# ---------------------------------------------- 3. the trace agrees with it
for prog in "bench/leaks/request_log.mn 5000" "bench/leaks/queue_drain.mn 20000" "bench/leaks/memo_table.mn 20000"; do
  # shellcheck disable=SC2086
  ./vm --memtrace "$tmp/a.ctf" --memtrace-rate 1e-2 $prog > /dev/null 2>&1
  tools/memtrace info "$tmp/a.ctf" > "$tmp/info" 2>&1
  read -r allocs collects < <(sed -n 's/^events *[0-9]*: \([0-9]*\) allocations, [0-9]* promotions, \([0-9]*\) collections.*/\1 \2/p' "$tmp/info")
  live=$("$dump" "$tmp/a.ctf.retain" | head -1 | sed -n 's/.* live=\([0-9]*\) .*/\1/p')
  check "${prog%% *}: allocations ($allocs) = collections ($collects) + live at the end ($live)" \
    "[ -n '$live' ] && [ '$((collects + ${live:-0}))' = '${allocs:-x}' ]"
done
ref=${MEMTRACE_REFERENCE:-}
if [ -n "$ref" ] && [ -x "$ref/dump_trace.exe" ]; then
  "$ref/dump_trace.exe" "$tmp/a.ctf" > "$tmp/theirs" 2>&1
  tools/memtrace dump "$tmp/a.ctf" > "$tmp/ours" 2>&1
  check "memtrace's dump_trace prints what tools/memtrace dump does, final collection included" "cmp -s '$tmp/theirs' '$tmp/ours'"
else
  skip "memtrace's dump_trace on a trace with an end state (MEMTRACE_REFERENCE is not set)"
fi

# ------------------------------------------------------------ 4. the edges
./vm --memtrace "$tmp/n.ctf" --memtrace-no-end-state --memtrace-rate 1e-2 bench/leaks/request_log.mn 2000 > /dev/null
header "$tmp/n.ctf.retain" 'final_gc=0 paths=0 live=0 written=0 .*reason=the end state was skipped' "--memtrace-no-end-state"
echo garbage > "$tmp/z.ctf.retain"
run_signalled 0.3 KILL "$tmp/out" "$tmp/err" ./vm --memtrace "$tmp/z.ctf" --memtrace-rate 1e-2 tests/exit/churn.mn
check "a stale end-state file is replaced when the trace starts: only this run's header, no snapshot" \
  "[ \"\$(head -c 9 '$tmp/z.ctf.retain' | od -An -c | tr -d ' \n')\" = 'MNRETAIN002' ] && ! grep -q garbage '$tmp/z.ctf.retain'"
./vm --memtrace /dev/stdout --memtrace-rate 1e-2 bench/leaks/request_log.mn 2000 2> "$tmp/err" | cat > "$tmp/p.ctf"
check "a trace on a pipe: no message" "[ ! -s '$tmp/err' ]"
check "a trace on a pipe: no file beside /dev/stdout" "[ ! -e /dev/stdout.retain ]"
mkdir -p "$tmp/d.ctf.retain"
./vm --memtrace "$tmp/d.ctf" --memtrace-rate 1e-2 bench/leaks/request_log.mn 2000 > /dev/null 2> "$tmp/err"
check "an end-state file that cannot be written: the run's status is 0" "[ $? -eq 0 ]"
check "an end-state file that cannot be written: one message naming it" "grep -q d.ctf.retain '$tmp/err'"
check "... and no temporary left" "[ ! -e '$tmp/d.ctf.retain.tmp' ]"

# ------------------------------------------------- 5. vm-debug and vm-asan
for v in ./vm-debug ./vm-asan; do
  if [ ! -x "$v" ]; then skip "$v is not built"; continue; fi
  for prog in "bench/leaks/global_list.mn 3000" "bench/leaks/every_fourth.mn 8000" "bench/leaks/memo_table.mn 3000" \
      "bench/leaks/closures.mn 300" "bench/leaks/request_log.mn 1000" "bench/leaks/bounded_cache.mn 6000" \
      "bench/leaks/queue_drain.mn 3000" "bench/leaks/build_once.mn 3000"; do
    # shellcheck disable=SC2086
    timeout 120 "$v" --memtrace "$tmp/v.ctf" --memtrace-rate 1e-2 $prog > /dev/null 2> "$tmp/err"
    check "$v ${prog%% *}: every hop checked" "[ $? -eq 0 ]"
  done
  timeout 120 "$v" tests/retention/kinds.mn "$tmp/vk.ctf" > /dev/null 2> "$tmp/err"
  check "$v kinds.mn" "[ $? -eq 0 ]"
done
rm -rf "$tmp"
suite_end
