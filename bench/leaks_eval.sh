#!/usr/bin/env bash
# bench/leaks_eval.sh - how well `memtrace leaks` judges the programs of
# bench/leaks (issue 22, item 3): each program at each rate with seeds
# MINNOW_SEED = 1..SEEDS, default heap. A leaking program is found when a
# holder whose path starts at its global (below) is among the first three
# leaks named; a program that does not leak passes when no leak is named.
# "cannot judge" counts as neither found nor named.
# Writes bench/results/leaks_eval.csv (one row a run) and prints the table
# of bench/LEAKS.md. Knobs: SEEDS (10), RATES ("1e-3 1e-4"), OUT, MEMTRACE_TOOL.
set -euo pipefail
cd "$(dirname "$0")/.."
seeds=${SEEDS:-10}
rates=${RATES:-1e-3 1e-4}
out=${OUT:-bench/results/leaks_eval.csv}
tool=${MEMTRACE_TOOL:-tools/memtrace}
mkdir -p "$(dirname "$out")"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# program:global that holds its leak ("-": it does not leak)
programs="global_list:history every_fourth:kept memo_table:memo closures:callbacks request_log:log
steady_churn:- build_once:- queue_drain:- periodic_buffers:- bounded_cache:-"
echo "program,leaks,rate,seed,samples,judgement,leaks_named,holder_rank,outcome" >"$out"
for entry in $programs; do
  prog=${entry%%:*} global=${entry#*:}
  for rate in $rates; do
    for seed in $(seq 1 "$seeds"); do
      MINNOW_SEED=$seed ./vm --memtrace "$tmp/t.ctf" --memtrace-rate "$rate" "bench/leaks/$prog.mn" >/dev/null
      "$tool" leaks --json -n 0 "$tmp/t.ctf" >"$tmp/l.json" || true
      python3 - "$tmp/l.json" "$prog" "$global" "$rate" "$seed" >>"$out" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
prog, glob, rate, seed = sys.argv[2:6]
leaks = doc["leaks"]
rank = 0
for l in leaks:
    root = (l.get("holder") or {}).get("root", {})
    if glob != "-" and root.get("kind") == "global" and root.get("name") == glob:
        rank = l["rank"]
        break
judged = doc["judgement"]
if glob == "-":
    outcome = "pass" if judged == "judged" and not leaks else ("cannot" if judged != "judged" else "fail")
else:
    outcome = "pass" if 0 < rank <= 3 else ("cannot" if judged != "judged" else "fail")
samples = doc["trace"].get("samples", "")
print(f"{prog},{'yes' if glob != '-' else 'no'},{rate},{seed},{samples},{judged.replace(' ', '_')},{len(leaks)},{rank},{outcome}")
PY
    done
  done
done
python3 - "$out" <<'PY'
import csv, sys, collections
rows = list(csv.DictReader(open(sys.argv[1])))
t = collections.OrderedDict()
for r in rows:
    k = (r["program"], r["leaks"], r["rate"])
    t.setdefault(k, collections.Counter())[r["outcome"]] += 1
print("| program | leaks | rate | pass | fail | cannot judge |")
print("| --- | --- | --- | --- | --- | --- |")
for (p, lk, rate), c in t.items():
    n = sum(c.values())
    print(f"| {p} | {lk} | {rate} | {c['pass']}/{n} | {c['fail']} | {c['cannot']} |")
PY
