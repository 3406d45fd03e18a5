#!/usr/bin/env bash
# pretenure_tools.sh - pretenuring's decisions as the trace tools show them
# (issue 31 item 4; tools/memtrace_cli/README.md, lifetimes and info): the
# decision records of T.ctf.retain (docs/trace-format.md 12.1, kind 5).
#   1. table.mn traced with --pretenure: the trace has the switched site's
#      blocks born young (alloc, then promote) before the decision's
#      allocation count and born old (alloc_major, never promoted) from it,
#      but for the probes' blocks, born young (under a third of the old);
#      `lifetimes` marks exactly that site's row (bench/pretenure/table.mn:16,
#      the one the decision names), in text (a '*' and a legend with the
#      decision and the blocks born old) and JSON (its "pretenured" list, its
#      major_blocks; every other row's list empty), by site and by function;
#      `info` lists the decision, text and JSON, the same as lifetimes';
#   2. phases.mn (switched, then undone): both decisions on its row, in that
#      order, in text and JSON, and in info;
#   3. --pretenure-from: the offline decision (at 0 of the trace's
#      allocations) marks the same row;
#   4. a trace without decisions: no mark, no legend, empty lists, info says
#      none;
#   5. a damaged snapshot file, or another trace's: the table without marks,
#      status 1, the error naming the file (and the byte); never a crash;
#   6. build/asan/memtrace (ASan+UBSan) prints the same, and nothing on
#      stderr, for each of these.
# Last line: "N passed, N failed". Exit status 0 iff none failed.
set -u
cd "$(dirname "$0")/../.." || exit 2
. tests/suites/lib.sh
suite_init pretenure_tools
require_built ./vm tools/memtrace build/asan/memtrace
export MEMTRACE_PROGRESS=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mt=tools/memtrace
site16="<top> bench/pretenure/table.mn:16:27-77"
phase_site="entry bench/pretenure/phases.mn:16:14-64"

# Rows of lifetimes' table marked '*' (rank then '*'), and the lines of its legend.
marked_rows() { grep -E '^ *[0-9]+\*' "$1"; }
legend() { sed -n '/^\* pretenured/,$p' "$1"; }

# ---------------------------------------------------------------- 1. table.mn

./vm --minor-words 262144 --pretenure --memtrace "$tmp/t.ctf" --memtrace-rate 1e-3 bench/pretenure/table.mn 300000 2 \
  >/dev/null || bad "table.mn --pretenure --memtrace failed"
$mt lifetimes -n 0 "$tmp/t.ctf" >"$tmp/t.txt" 2>"$tmp/t.err"
st=$?
check "lifetimes, table.mn: status 0, nothing on stderr (exit $st: $(head -c 200 "$tmp/t.err"))" \
  '[ $st -eq 0 ] && [ ! -s "$tmp/t.err" ]'
check "lifetimes, table.mn: exactly one row marked, line 16's: $(marked_rows "$tmp/t.txt" | cut -c1-40)" \
  '[ "$(marked_rows "$tmp/t.txt" | wc -l)" -eq 1 ] && marked_rows "$tmp/t.txt" | grep -qF -- "  $site16"'
check "lifetimes, table.mn: the legend names the row, its blocks born old, the switch and its evidence: $(legend "$tmp/t.txt" | tail -2)" \
  'legend "$tmp/t.txt" | grep -q "^  rank 1, <top> bench/pretenure/table.mn:16:27-77: [1-9][0-9]* of its [0-9]* sampled blocks born outside the minor heap$" &&
   legend "$tmp/t.txt" | grep -Eq "^    switched old at [0-9.]+ [mu]?s, after [0-9]+ of the trace.s allocations: of the 64 blocks born young the feedback sampled, 64 were promoted \(share >= 0\.8[5-9][0-9]* > 0\.85\)$" &&
   legend "$tmp/t.txt" | grep -q "never promoted" && [ "$(legend "$tmp/t.txt" | grep -c "^    ")" -eq 1 ]'
$mt lifetimes --by function -n 0 "$tmp/t.ctf" >"$tmp/tf.txt" 2>&1
check "lifetimes --by function, table.mn: one row marked, <top>'s, the decision's site named in the legend" \
  '[ "$(marked_rows "$tmp/tf.txt" | wc -l)" -eq 1 ] && marked_rows "$tmp/tf.txt" | grep -qF "<top> (bench/pretenure/table.mn)" &&
   legend "$tmp/tf.txt" | grep -qF "    $site16: switched old at"'

# The trace's events of line 16: allocation ids below the decision's count
# born young (alloc); from it most born old (alloc_major), never promoted,
# the rest born young in probes (memprof/pretenure.c, part 8: 16 sampled
# blocks young after every 64 old, at the feedback's own rate).
$mt info --json "$tmp/t.ctf" >"$tmp/ti.json" 2>"$tmp/ti.err"
st=$?
check "info --json, table.mn: status 0, quiet (exit $st)" '[ $st -eq 0 ] && [ ! -s "$tmp/ti.err" ]'
$mt dump "$tmp/t.ctf" >"$tmp/t.dump"
if command -v python3 >/dev/null; then
  at=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))["decisions"]; print(d[0]["alloc_count"] if len(d)==1 else -1)' "$tmp/ti.json")
  out=$(awk -v at="$at" '
    $3 == "promote" { promoted[$2 + 0] = 1 }
    $3 ~ /^alloc/ && /table\.mn:16:27-77$/ { kind[$2 + 0] = $3 }
    END { at += 0
          for (k in kind) {
            id = k + 0
            if (id < at && kind[k] != "alloc") wrong++
            if (kind[k] == "alloc_major" && (k in promoted)) wrong++
            if (id < at) young++; else if (kind[k] == "alloc_major") old++; else probed++ }
          printf "%d %d %d %d\n", young, old, probed, wrong }' "$tmp/t.dump")
  read -r young old probed wrong <<<"$out"
  check "dump, table.mn: line 16's blocks before the decision's count ($at) born young ($young), from it born old ($old, never promoted) but for those of probes ($probed, under a third of them); $wrong otherwise" \
    '[ "$at" -gt 0 ] && [ "$young" -gt 0 ] && [ "$old" -gt 0 ] && [ "$probed" -gt 0 ] && [ $((3 * probed)) -lt "$old" ] && [ "$wrong" -eq 0 ]'
  $mt lifetimes --json -n 0 "$tmp/t.ctf" >"$tmp/t.json"
  out=$(python3 - "$tmp/t.json" "$tmp/ti.json" "$site16" <<'EOF'
import json, sys
life, info, site = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), sys.argv[3]
marked = [r for r in life["rows"] if r["pretenured"]]
problems = []
if len(marked) != 1 or marked[0]["key"]["site"] != site:
    problems.append("marked rows: %s" % [r["key"]["site"] for r in marked])
else:
    r = marked[0]
    d = r["pretenured"]
    if [x["action"] for x in d] != ["old"] or d[0]["sampled"] != 64 or d[0]["counted"] != 64:
        problems.append("decisions %s" % d)
    if d != info["decisions"]:
        problems.append("lifetimes' decision is not info's")
    if not r["major_blocks"] > 0 or r["minor_blocks"] + r["major_blocks"] != r["sampled_blocks"]:
        problems.append("blocks: %s minor, %s major, %s sampled" % (r["minor_blocks"], r["major_blocks"], r["sampled_blocks"]))
    if r["promoted_blocks"] > r["minor_blocks"]:
        problems.append("more promoted than born young")
if life["pretenure_decisions"]["count"] != 1 or life["pretenure_decisions"]["not_shown"] != 0:
    problems.append("pretenure_decisions %s" % life["pretenure_decisions"])
print("; ".join(problems) or "ok")
EOF
  )
  check "lifetimes --json, table.mn: one row with a decision, line 16's (old, 64 of 64), the same as info's; its blocks born old in major_blocks: $out" \
    '[ "$out" = ok ]'
  for f in "$tmp/t.json:lifetimes" "$tmp/ti.json:info"; do
    check "table.mn: ${f##*:} --json conforms to its schema" \
      'python3 tests/tools/tools_check.py schema "${f##*:}" "${f%:*}" >/dev/null'
  done
else
  skip "python3 is not installed: the JSON and the trace's events were not checked"
fi
$mt info "$tmp/t.ctf" >"$tmp/ti.txt" 2>&1
check "info, table.mn: one decision listed after the snapshots, its site and evidence: $(grep -A1 "^decisions" "$tmp/ti.txt" | tail -1 | cut -c1-120)" \
  'grep -q "^decisions       1 pretenuring decision$" "$tmp/ti.txt" &&
   grep -A1 "^decisions" "$tmp/ti.txt" | tail -1 | grep -qF "                $site16: switched old at" &&
   [ "$(grep -n "^decisions" "$tmp/ti.txt" | cut -d: -f1)" -gt "$(grep -n "^snapshots" "$tmp/ti.txt" | cut -d: -f1)" ]'

# ---------------------------------------------------------------- 2. phases.mn

./vm --pretenure --memtrace "$tmp/p.ctf" --memtrace-rate 1e-4 bench/pretenure/phases.mn 1000000 4 >/dev/null ||
  bad "phases.mn --pretenure --memtrace failed"
$mt lifetimes "$tmp/p.ctf" >"$tmp/p.txt" 2>&1
check "lifetimes, phases.mn: one row marked, entry's; switched then undone, in that order: $(legend "$tmp/p.txt" | grep "^    " | cut -c1-60 | tr '\n' '|')" \
  '[ "$(marked_rows "$tmp/p.txt" | wc -l)" -eq 1 ] && marked_rows "$tmp/p.txt" | grep -qF -- "  $phase_site" &&
   [ "$(legend "$tmp/p.txt" | grep "^    " | cut -d" " -f5-6 | tr "\n" " ")" = "switched old undone, young " ] &&
   legend "$tmp/p.txt" | grep -q "^    undone, young again at .*: of the [0-9]* blocks born young in a probe the feedback sampled, [0-9]* died at the next minor collection"'
$mt info "$tmp/p.ctf" >"$tmp/pi.txt" 2>&1
check "info, phases.mn: two decisions, the switch then the undo" \
  'grep -q "^decisions       2 pretenuring decisions$" "$tmp/pi.txt" &&
   [ "$(grep -A2 "^decisions" "$tmp/pi.txt" | tail -2 | sed "s/.*-64: \([a-z]*\).*/\1/" | tr "\n" " ")" = "switched undone " ]'
if command -v python3 >/dev/null; then
  $mt lifetimes --json "$tmp/p.ctf" >"$tmp/p.json"
  out=$(python3 -c '
import json, sys
rows = [r for r in json.load(open(sys.argv[1]))["rows"] if r["pretenured"]]
print(" ".join(r["key"]["site"] + ":" + ",".join(d["action"] for d in r["pretenured"]) for r in rows))
d = rows[0]["pretenured"] if rows else []
print(len(d) == 2 and d[0]["alloc_count"] <= d[1]["alloc_count"] and d[0]["time_s"] <= d[1]["time_s"])' "$tmp/p.json")
  check "lifetimes --json, phases.mn: entry's row holds both decisions, old then young, in time order: $out" \
    '[ "$out" = "$(printf "%s\nTrue" "$phase_site:old,young")" ]'
fi

# ---------------------------------------------------------------- 3. offline

./vm --minor-words 262144 --memtrace "$tmp/o.ctf" --memtrace-rate 1e-3 --pretenure-from "$tmp/t.ctf" \
  bench/pretenure/table.mn 300000 2 >/dev/null || bad "table.mn --pretenure-from --memtrace failed"
$mt lifetimes "$tmp/o.ctf" >"$tmp/o.txt" 2>&1
check "lifetimes, --pretenure-from: line 16's row marked, switched at 0 of the trace's allocations: $(legend "$tmp/o.txt" | grep "^    " | cut -c1-80)" \
  '[ "$(marked_rows "$tmp/o.txt" | wc -l)" -eq 1 ] && marked_rows "$tmp/o.txt" | grep -qF -- "  $site16" &&
   legend "$tmp/o.txt" | grep -q "^    switched old at .*, after 0 of the trace.s allocations"'

# ---------------------------------------------------------------- 4. no decision

./vm --minor-words 262144 --memtrace "$tmp/n.ctf" --memtrace-rate 1e-3 bench/pretenure/table.mn 300000 2 >/dev/null
$mt lifetimes "$tmp/n.ctf" >"$tmp/n.txt" 2>&1
check "lifetimes, no --pretenure: no mark, no legend" \
  '[ -z "$(marked_rows "$tmp/n.txt")" ] && ! grep -q "pretenured" "$tmp/n.txt" && grep -qF "  $site16" "$tmp/n.txt"'
$mt info "$tmp/n.ctf" >"$tmp/ni.txt" 2>&1
check "info, no --pretenure: decisions none" 'grep -q "^decisions       none" "$tmp/ni.txt"'
if command -v python3 >/dev/null; then
  $mt lifetimes --json "$tmp/n.ctf" >"$tmp/n.json"
  check "lifetimes --json, no --pretenure: every row's pretenured empty, count 0" \
    'python3 -c "import json,sys; d=json.load(open(sys.argv[1])); sys.exit(not (all(r[\"pretenured\"] == [] for r in d[\"rows\"]) and d[\"pretenure_decisions\"][\"count\"] == 0))" "$tmp/n.json"'
fi
# OCaml's trace, no snapshot file at all: the table as before.
$mt lifetimes tests/fixtures/memtrace/bintrees-1e-5.ctf >"$tmp/b.txt" 2>&1
st=$?
check "lifetimes on OCaml's trace (no snapshot file): status 0, no mark, no legend" \
  '[ $st -eq 0 ] && [ -z "$(marked_rows "$tmp/b.txt")" ] && ! grep -q pretenured "$tmp/b.txt"'

# ---------------------------------------------------------------- 5. damage

cp "$tmp/t.ctf" "$tmp/d.ctf"
cp "$tmp/t.ctf.retain" "$tmp/d.ctf.retain"
printf '\377' | dd of="$tmp/d.ctf.retain" bs=1 seek=40 conv=notrunc 2>/dev/null
for c in lifetimes info; do
  $mt $c "$tmp/d.ctf" >"$tmp/d.txt" 2>"$tmp/d.err"
  st=$?
  check "$c, a damaged snapshot file: status 1, the error names the file and the byte, no mark: $(head -c 200 "$tmp/d.err")" \
    '[ $st -eq 1 ] && grep -q "^memtrace $c: $tmp/d.ctf.retain: damaged snapshot file at byte [0-9]*: " "$tmp/d.err" &&
     [ -z "$(marked_rows "$tmp/d.txt")" ] && ! grep -q "^decisions" "$tmp/d.txt"'
done
cp "$tmp/t.ctf" "$tmp/x.ctf"
cp "$tmp/p.ctf.retain" "$tmp/x.ctf.retain"
$mt lifetimes "$tmp/x.ctf" >"$tmp/x.txt" 2>"$tmp/x.err"
st=$?
check "lifetimes, another trace's snapshot file: status 1, said, its decisions not shown: $(head -c 200 "$tmp/x.err")" \
  '[ $st -eq 1 ] && grep -q "belongs to another trace" "$tmp/x.err" && [ -z "$(marked_rows "$tmp/x.txt")" ]'

# ---------------------------------------------------------------- 6. ASan

n=0
: >"$tmp/asan.bad"
for t in t p o n d x; do
  for c in "lifetimes -n 0" "lifetimes --json -n 0" "lifetimes --by function" "info" "info --json"; do
    # shellcheck disable=SC2086
    $mt $c "$tmp/$t.ctf" >"$tmp/r.out" 2>"$tmp/r.err"
    rs=$?
    # shellcheck disable=SC2086
    build/asan/memtrace $c "$tmp/$t.ctf" >"$tmp/a.out" 2>"$tmp/a.err"
    as=$?
    n=$((n + 1))
    sed "s|build/asan/memtrace|tools/memtrace|" "$tmp/a.err" >"$tmp/a.err2"
    if [ $rs -ne $as ] || ! cmp -s "$tmp/r.out" "$tmp/a.out" || ! cmp -s "$tmp/r.err" "$tmp/a.err2"; then
      echo "$c $t.ctf: status $rs/$as, $(head -c 200 "$tmp/a.err")" >>"$tmp/asan.bad"
    fi
  done
done
check "build/asan/memtrace: the same output, status and stderr (nothing but the damage said) on $n runs: $(head -3 "$tmp/asan.bad")" \
  '[ ! -s "$tmp/asan.bad" ]'

suite_end
