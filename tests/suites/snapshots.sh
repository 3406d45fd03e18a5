#!/usr/bin/env bash
# snapshots.sh - snapshots of what keeps memory while the program runs
# (docs/trace-format.md section 12, docs/design.md "Snapshots"): taken by
# Memtrace.snapshot(), SIGUSR1, --memtrace-snapshot-every and
# --memtrace-snapshot-peak, and the end state as the last one; appended to
# T.ctf.retain, read here by an independent reader written from the format's
# page (tests/trace/snapshots.py), which refuses any damage. Runs that are
# killed wait on the file's snapshot count, never on a sleep alone.
cd "$(dirname "$0")/../.." || exit 2
. tests/suites/lib.sh
suite_init snapshots
require_built ./vm ./vm-debug ./vm-asan
tmp=$(mktemp -d)
dec() { python3 tests/trace/snapshots.py "$@"; }
# field VALUE of snapshot line N (0-based) of file F: field F N NAME
field() { dec "$1" | grep "^number=$2 " | tr ' ' '\n' | sed -n "s/^$3=//p"; }
count() { dec "$1" 2>/dev/null | grep -c "^number=.* trigger=$2 " || true; }

# ---------------------------------------------------- 1. Memtrace.snapshot()
for vm in ./vm ./vm-debug ./vm-asan "./vm --gc-verify" "./vm --gc-stress"; do
  rm -f "$tmp/c.ctf" "$tmp/c.ctf.retain"
  # shellcheck disable=SC2086
  $vm --memtrace "$tmp/c.ctf" --memtrace-rate 1 tests/snapshots/calls.mn > "$tmp/c.out" 2> "$tmp/c.err"
  check "$vm: Memtrace.snapshot() returns 0, 1, 2 and the program goes on" \
    "[ \"\$(tr '\n' ' ' < '$tmp/c.out')\" = '0 50 1 2 ' ] && [ ! -s '$tmp/c.err' ]"
  check "$vm: the file holds the three snapshots, then the end state, each whole, every path's id distinct and below its alloc count" \
    "dec '$tmp/c.ctf.retain' > '$tmp/c.dec' && [ \"\$(grep -c '^number=' '$tmp/c.dec')\" = 4 ] &&
     [ \"\$(sed -n 's/.* trigger=\([a-z]*\) .*/\1/p' '$tmp/c.dec' | tr '\n' ' ')\" = 'call call call end ' ] &&
     grep -q '^tail: none' '$tmp/c.dec'"
  check "$vm: every live sampled block has its path (flags 3, paths = live)" \
    "! grep '^number=' '$tmp/c.dec' | grep -v ' flags=3 ' | grep -q . &&
     ! grep '^number=' '$tmp/c.dec' | sed 's/.* live=\([0-9]*\) paths=\([0-9]*\) .*/\1 \2/' | awk '\$1 != \$2' | grep -q ."
done
dec --paths "$tmp/c.ctf.retain" > "$tmp/c.paths"
check "a block kept only by a local of the serving function: its path starts at that local, by name and line" \
  "grep -q '^path [0-9]* local session of serve (tests/snapshots/calls.mn:10) | field pages | list cell x20 | list element$' '$tmp/c.paths'"
check "a global list: one run of list cells, then the element" \
  "grep -q '^path [0-9]* global log | field items | list cell x99 | list element$' '$tmp/c.paths'"
check "the local's blocks are gone from the snapshot after serve returned, and the list after it was dropped" \
  "[ \"\$(field '$tmp/c.ctf.retain' 2 live)\" = 1 ] && [ \"\$(field '$tmp/c.ctf.retain' 3 live)\" = 1 ]"
# The trace agrees: at rate 1, what the end state lists is what the trace never collected.
tools/memtrace info "$tmp/c.ctf" > "$tmp/info" 2>&1
read -r allocs collects < <(sed -n 's/^events *[0-9]*: \([0-9]*\) allocations, [0-9]* promotions, \([0-9]*\) collections.*/\1 \2/p' "$tmp/info")
live=$(field "$tmp/c.ctf.retain" 3 live)
check "the trace agrees: allocations ($allocs) = collections ($collects) + live at the end ($live)" \
  "[ -n '$live' ] && [ '$((collects + ${live:-0}))' = '${allocs:-x}' ]"

# ------------------------------------------- 2. nothing alive: no major cycle
./vm --memtrace "$tmp/d.ctf" --memtrace-rate 1e-2 tests/snapshots/dead.mn > /dev/null
check "a snapshot whose minor collection leaves no sampled block alive: whole, empty, no major collection" \
  "dec '$tmp/d.ctf.retain' | grep -q '^number=0 trigger=call .* flags=3 live=0 paths=0 marked=0,0 '"

# ----------------------------------------------- 3. SIGUSR1, the period, SIGKILL
# Starts serve.mn with the given flags, waits (up to 60 s) until the file
# holds `want` snapshots of trigger `trig`, sending SIGUSR1 every 0.2 s if
# asked, then kills it with SIGKILL. SIGUSR1 waits for the trace to exist:
# ./vm catches the signal from before it creates the trace, and a signal
# sent earlier (a loaded machine starts the VM late) would kill it.
serve_until() {
  local file=$1 trig=$2 want=$3 usr1=$4 pid i
  shift 4
  ./vm --memtrace "$file" --memtrace-rate 1e-3 "$@" tests/snapshots/serve.mn > /dev/null 2>&1 &
  pid=$!
  for i in $(seq 300); do
    [ "$usr1" = usr1 ] && [ -e "$file" ] && kill -USR1 "$pid" 2> /dev/null
    [ "$(count "$file.retain" "$trig")" -ge "$want" ] && break
    sleep 0.2
  done
  kill -KILL "$pid" 2> /dev/null
  wait "$pid" 2> /dev/null
}
serve_until "$tmp/u.ctf" signal 2 usr1
check "SIGUSR1: a snapshot each, taken at the next allocation, and the program goes on" \
  "[ \"\$(count '$tmp/u.ctf.retain' signal)\" -ge 2 ]"
check "killed by SIGKILL: every snapshot finished before is whole and readable, no end state" \
  "dec '$tmp/u.ctf.retain' > '$tmp/u.dec' && ! grep -q 'trigger=end' '$tmp/u.dec'"
serve_until "$tmp/e.ctf" period 3 no --memtrace-snapshot-every 0.05
dec "$tmp/e.ctf.retain" > "$tmp/e.dec"
check "--memtrace-snapshot-every 0.05: snapshots on the period, numbered in order, times increasing" \
  "[ \"\$(grep -c 'trigger=period' '$tmp/e.dec')\" -ge 3 ] &&
   sed -n 's/^number=\([0-9]*\) .* time=\([0-9]*\) .*/\1 \2/p' '$tmp/e.dec' |
     awk 'NR > 1 && (\$1 != pn + 1 || \$2 <= pt) { bad = 1 } { pn = \$1; pt = \$2 } END { exit bad }'"
last=$(grep '^number=' "$tmp/e.dec" | tail -1 | sed 's/.* allocs=\([0-9]*\) .*/\1/')
tools/memtrace dump "$tmp/e.ctf" 2> /dev/null | grep -c ' alloc ' > "$tmp/e.allocs" || true
check "the trace was flushed at each snapshot: it holds the ${last:-?} allocations the last one counts" \
  "[ -n '$last' ] && [ \"\$(cat '$tmp/e.allocs')\" -ge '$last' ]"
check "the live samples of a leaking loop grow from snapshot to snapshot" \
  "sed -n 's/.* live=\([0-9]*\) .*/\1/p' '$tmp/e.dec' | awk 'NR > 1 && \$1 < prev { bad = 1 } { prev = \$1 } END { exit bad }'"

# ----------------------------------------------------------- 4. new peaks
./vm --minor-words 32768 --memtrace "$tmp/p.ctf" --memtrace-rate 1e-3 --memtrace-snapshot-peak 2 tests/snapshots/peak.mn > /dev/null
dec "$tmp/p.ctf.retain" > "$tmp/p.dec"
check "--memtrace-snapshot-peak 2: a snapshot at each new peak, each at least twice the last one's live words" \
  "[ \"\$(grep -c 'trigger=peak' '$tmp/p.dec')\" -ge 3 ] &&
   grep 'trigger=peak' '$tmp/p.dec' | sed 's/.* marked=[0-9]*,\([0-9]*\) .*/\1/' |
     awk 'NR > 1 && \$1 < 2 * prev { bad = 1 } { prev = \$1 } END { exit bad }'"
check "--memtrace-snapshot-peak: the end state comes last, after the table was dropped" \
  "tail -2 '$tmp/p.dec' | head -1 | grep -q 'trigger=end .* live=0 '"

# ------------------------------------------------------------ 5. refusals
printf 'Memtrace.snapshot()\n' > "$tmp/no.mn"
./vm "$tmp/no.mn" > /dev/null 2> "$tmp/no.err"
st=$?
check "Memtrace.snapshot() without a trace: a runtime error that says so, status 1" \
  "[ $st -eq 1 ] && grep -q 'Memtrace.snapshot: no trace is being written' '$tmp/no.err'"
./vm --memtrace /dev/stdout "$tmp/no.mn" 2> "$tmp/pipe.err" | cat > /dev/null
check "Memtrace.snapshot() with a trace written to a pipe: refused, it has no snapshot file" \
  "grep -q 'Memtrace.snapshot: the trace has no snapshot file' '$tmp/pipe.err'"
for bad in "--memtrace-snapshot-every 0" "--memtrace-snapshot-every -1" "--memtrace-snapshot-every x" \
           "--memtrace-snapshot-peak 1" "--memtrace-snapshot-peak 0.5" "--memtrace-snapshot-peak inf"; do
  # shellcheck disable=SC2086
  ./vm --memtrace "$tmp/o.ctf" $bad tests/snapshots/dead.mn > /dev/null 2> "$tmp/o.err"
  check "$bad: refused with a message, status 2" "[ \$? -eq 2 ] && grep -q '^vm: option --memtrace-snapshot-[a-z]*: .* is not ' '$tmp/o.err'"
done
# Tables grown from empty, over and over (most allocations inside
# Hashtbl.replace and Hashtbl.resize), a snapshot every 10 ms: each waits until
# the program is back in its own code, so no root is a local of the library
# (before, Hashtbl.resize's `old` was one in every run: its cells not yet moved).
MINNOW_SEED=1 ./vm --memtrace "$tmp/tg.ctf" --memtrace-rate 1e-2 --memtrace-snapshot-every 0.01 tests/snapshots/table_grow.mn 40 > "$tmp/tg.out"
tg_snaps=$(tools/memtrace info --json "$tmp/tg.ctf" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["snapshots"]["list"]))')
check "snapshots on the period while tables grow ($tg_snaps): none has a root in the standard library" \
  "[ \"\$(cat '$tmp/tg.out')\" = 800000 ] && [ '$tg_snaps' -ge 10 ] && ! grep -a -q 'Hashtbl\\.' '$tmp/tg.ctf.retain'"
./vm --memtrace-snapshot-every 1 tests/snapshots/dead.mn > /dev/null 2> "$tmp/o.err"
check "--memtrace-snapshot-every without --memtrace: refused, status 2" \
  "[ \$? -eq 2 ] && grep -q 'go with --memtrace FILE' '$tmp/o.err'"

# ------------------------------------------- 6. --memtrace-pprof-dir DIR
# A profile per whole snapshot, read by an independent decoder written from
# profile.proto (tests/trace/pprof_read.py): its samples are exactly the
# samples of the blocks the snapshot lists (the trace's alloc events say
# each block's), its space their samples x 8 / rate, each sample labelled
# with its holder; a run killed by SIGKILL leaves no partial profile.
pp() { python3 tests/trace/pprof_read.py "$@"; }
# samples_of TRACE RETAIN N: the samples the trace gives the blocks snapshot N lists
samples_of() {
  tools/memtrace dump "$1" 2> /dev/null | awk '$3 == "alloc" || $3 == "alloc_major" { print $2 + 0, $4 }' > "$tmp/samples"
  dec --paths "$2" | awk -v n="$3" '/^number=/ { cur = $1 } /^path / && cur == "number=" n { print $2 }' > "$tmp/ids"
  awk 'NR == FNR { s[$1] = $2; next } { t += s[$1] } END { print t + 0 }' "$tmp/samples" "$tmp/ids"
}
# blocks_of RETAIN N: the number of blocks snapshot N lists
blocks_of() { dec --paths "$1" | awk -v n="$2" '/^number=/ { cur = $1 } /^path / && cur == "number=" n { k++ } END { print k + 0 }'; }
mkdir -p "$tmp/pc"
rm -f "$tmp/c.ctf" "$tmp/c.ctf.retain"
./vm --memtrace "$tmp/c.ctf" --memtrace-rate 1 --memtrace-pprof-dir "$tmp/pc" tests/snapshots/calls.mn > /dev/null 2> "$tmp/pc.err"
ls "$tmp/pc" > "$tmp/pc.ls"
check "--memtrace-pprof-dir: one profile per snapshot (three calls, the end state), named by UTC time, pid, number and trigger" \
  "[ \"\$(sed -n 's/^minnow-[0-9]\\{8\\}T[0-9]\\{6\\}\\.[0-9]\\{6\\}Z-[0-9]*-\\([0-9]*-[a-z]*\\)\\.pb$/\\1/p' '$tmp/pc.ls' | tr '\\n' ' ')\" = '0-call 1-call 2-call 3-end ' ] &&
   [ ! -s '$tmp/pc.err' ]"
for n in 0 1 2 3; do
  f=$(grep -- "-$n-[a-z]*\.pb$" "$tmp/pc.ls")
  pp "$tmp/pc/$f" > "$tmp/pc.$n" 2> "$tmp/pc.$n.err"
  want=$(samples_of "$tmp/c.ctf" "$tmp/c.ctf.retain" "$n")
  blocks=$(blocks_of "$tmp/c.ctf.retain" "$n")
  check "profile $n decodes; its samples are the $want of the $blocks blocks its snapshot lists, at rate 1 one object a block and 8 bytes a sample" \
    "[ ! -s '$tmp/pc.$n.err' ] && grep -q '^types samples/count inuse_objects/count inuse_space/bytes$' '$tmp/pc.$n' &&
     grep -q '^default inuse_space$' '$tmp/pc.$n' && grep -q '^total $want,$blocks,$((want * 8))$' '$tmp/pc.$n'"
done
check "profile 1: the blocks of the serving function's local by its holder, the allocating line leaf first" \
  "grep -q '^sample [0-9,]* holder=local session of serve (tests/snapshots/calls.mn) -> field pages -> list cell xn | .* < List.init stdlib/list.mn:[0-9]* < serve tests/snapshots/calls.mn:9 < <top> tests/snapshots/calls.mn:17$' '$tmp/pc.1' &&
   grep -q '^sample [0-9,]* holder=global log -> field items -> list cell xn | keep tests/snapshots/calls.mn:6 < <top> tests/snapshots/calls.mn:16$' '$tmp/pc.1'"
check "profile 3 (the end state, after the list was dropped): one block, the session's string gone" \
  "[ \"\$(grep -c '^sample ' '$tmp/pc.3')\" = 1 ]"
if command -v go > /dev/null; then
  check "go tool pprof reads every profile, with the holder as a tag" \
    "( for f in '$tmp'/pc/*.pb; do go tool pprof -raw \"\$f\" > '$tmp/go.raw' 2>&1 || exit 1; done ) &&
     go tool pprof -tags '$tmp'/pc/*-1-call.pb 2> /dev/null | grep -q 'global log -> field items -> list cell xn'"
else
  skip "go tool pprof (golang-go not installed)"
fi
for vm in ./vm-asan ./vm-debug "./vm --gc-stress"; do
  rm -rf "$tmp/pa" && mkdir -p "$tmp/pa"
  # shellcheck disable=SC2086
  $vm --memtrace "$tmp/a.ctf" --memtrace-rate 1 --memtrace-pprof-dir "$tmp/pa" tests/snapshots/calls.mn > /dev/null 2> "$tmp/pa.err"
  check "$vm: the same four profiles, the same samples as ./vm's, nothing on stderr" \
    "[ ! -s '$tmp/pa.err' ] && ( for n in 0 1 2 3; do
       pp '$tmp'/pa/minnow-*-\$n-*.pb | grep '^sample' | sort > '$tmp/pa.s' &&
       grep '^sample' '$tmp/pc.'\$n | sort | cmp -s - '$tmp/pa.s' || exit 1; done )"
done
# Killed while serving: every profile is of a whole snapshot, none partial.
mkdir -p "$tmp/pk"
serve_until "$tmp/k.ctf" period 3 no --memtrace-snapshot-every 0.05 --memtrace-pprof-dir "$tmp/pk"
dec "$tmp/k.ctf.retain" > "$tmp/k.dec"
whole=$(grep -c '^number=' "$tmp/k.dec")
ls "$tmp/pk" | sed -n 's/^minnow-.*-\([0-9]*\)-period\.pb$/\1/p' | sort -n > "$tmp/pk.n"
check "killed by SIGKILL while serving: profiles 0, 1, ... of whole snapshots ($whole), at most the last missing, no partial file seen" \
  "[ \"\$(wc -l < '$tmp/pk.n')\" -ge \$((whole - 1)) ] && [ \"\$(wc -l < '$tmp/pk.n')\" -le $whole ] &&
   seq 0 \$((\$(wc -l < '$tmp/pk.n') - 1)) | cmp -s - '$tmp/pk.n' && ! ls '$tmp/pk' | grep -v '\\.pb$' | grep -q ."
n=$(tail -1 "$tmp/pk.n")
want=$(samples_of "$tmp/k.ctf" "$tmp/k.ctf.retain" "$n")
check "the last profile of the killed run has the samples of its snapshot's blocks ($want at rate 1e-3: space = samples x 8000)" \
  "pp '$tmp'/pk/minnow-*-$n-period.pb | grep -q '^total $want,[0-9]*,$((want * 8000))$'"
# Refusals.
./vm --memtrace-pprof-dir "$tmp/pc" tests/snapshots/dead.mn > /dev/null 2> "$tmp/o.err"
st=$?
check "--memtrace-pprof-dir without --memtrace: refused, status 2" "[ $st -eq 2 ] && grep -q 'go with --memtrace FILE' '$tmp/o.err'"
for d in "$tmp/none" "$tmp/c.ctf"; do
  ./vm --memtrace "$tmp/o.ctf" --memtrace-pprof-dir "$d" tests/snapshots/dead.mn > /dev/null 2> "$tmp/o.err"
  st=$?
  check "--memtrace-pprof-dir $(basename "$d") (missing, not a directory): refused before the run, status 2, naming it" \
    "[ $st -eq 2 ] && grep -q '^vm: --memtrace-pprof-dir .*$(basename "$d"): ' '$tmp/o.err'"
done
./vm --memtrace /dev/stdout --memtrace-pprof-dir "$tmp/pc" tests/snapshots/dead.mn 2> "$tmp/o.err" | cat > /dev/null
check "--memtrace-pprof-dir with a trace to a pipe: said once (no snapshot, so no profile), the run goes on" \
  "[ \"\$(grep -c 'vm: --memtrace-pprof-dir: the trace takes no snapshot' '$tmp/o.err')\" = 1 ]"

rm -rf "$tmp"
suite_end
