#!/usr/bin/env bash
# bench/leaks_eval.sh - how well `memtrace leaks` names what leaks (issue 30,
# item 5; issue 22 before it), over rates and seeds, against each program's
# stated ground truth (bench/leaks_check.py says how it is read and judged).
#
# Modes (MODES, default "series end"):
#   series  the servers of bench/servers serve forever, traced with a snapshot
#           every SNAP_EVERY seconds; once SNAPS whole snapshots are in
#           T.ctf.retain (counted after the "phase" line for a server whose
#           header says "bench-wait: phase"), the run is killed by SIGKILL:
#           no end state, only the snapshots. Floors: a leaking server's
#           holder named first in >= 95 % of runs; nothing named for a server
#           that does not leak in >= 95 %.
#   end     every server run to its end (bench-requests), and the programs of
#           bench/leaks at their default sizes, with the default options (no
#           snapshot flag): the end state only. Floors: the leaking line among
#           the first three suspects, with its root, in >= 90 % of runs; a
#           program that does not leak flagged in <= 2 %.
#   term    as series but without snapshots: SIGTERM after SNAPS x SNAP_EVERY
#           seconds (after the phase), judged from the end state SIGTERM takes
#           (what a server gets today without snapshots; no floor).
# Each program at each rate (RATES, "1e-3 1e-4") with MINNOW_SEED = 1..SEEDS
# (10). Results: bench/results/leaks_<mode>.csv (one row a run), the tables
# on stdout and in bench/results/leaks_summary.txt, and the figure
# bench/results/leaks.png (bench/leaks.gp). A run whose VM or tool fails is a
# row with outcome "error", never dropped.
# Knobs: SEEDS, RATES, MODES, SNAP_EVERY (1), SNAPS (3), PROGRAMS (names,
# default all), VM (./vm), MEMTRACE_TOOL (tools/memtrace), OUT_DIR
# (bench/results), RUN_TIMEOUT (seconds a run may take, 300), SUMMARY_ONLY=1
# (no runs: the tables and the figure again from the CSVs of MODES).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
seeds=${SEEDS:-10}
rates=${RATES:-1e-3 1e-4}
modes=${MODES:-series end}
snap_every=${SNAP_EVERY:-1}
snaps=${SNAPS:-3}
vm=${VM:-./vm}
tool=${MEMTRACE_TOOL:-tools/memtrace}
out_dir=${OUT_DIR:-bench/results}
run_timeout=${RUN_TIMEOUT:-300}
check=bench/leaks_check.py
mkdir -p "$out_dir"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

has_snapshots() { "$vm" --help 2>&1 | grep -q -- '--memtrace-snapshot-every'; }

servers=()
for f in bench/servers/*.mn; do grep -q '^// truth:' "$f" && servers+=("$f"); done
leak_programs=(bench/leaks/*.mn)
selected() {  # selected FILE: in PROGRAMS (by name), or PROGRAMS unset
  [ -z "${PROGRAMS:-}" ] && return 0
  local name
  name=$(basename "$1" .mn)
  [[ " $PROGRAMS " == *" $name "* ]]
}

judge_fields=$(python3 -c 'import sys; sys.path.insert(0, "bench"); import leaks_check as c; print(",".join(c.JUDGE_FIELDS))')

# judge PREFIX PROGRAM TRACE STATUS WANT: runs leaks --json on TRACE and
# prints the row; outcomes "error" when the run's status is not WANT (a regex)
# or the tool fails.
judge() {
  local prefix=$1 prog=$2 trace=$3 status=$4 want=$5 why=()
  if ! [[ $status =~ ^($want)$ ]]; then
    why=("the run's status was $status")
    sed 's/^/    vm: /' "$tmp/err" | head -3 >&2
  else
    "$tool" leaks --json -n 0 "$trace" > "$tmp/l.json" 2> "$tmp/l.err"
    local st=$?
    # leaks answers with 0 (no leak), 3 (leaks found) or 4 (cannot judge)
    if [ $st -ne 0 ] && [ $st -ne 3 ] && [ $st -ne 4 ]; then
      why=("memtrace leaks failed (status $st)")
      sed 's/^/    leaks: /' "$tmp/l.err" | head -3 >&2
    fi
  fi
  echo "$prefix,$(python3 "$check" judge "$tmp/l.json" "$prog" "${why[@]}")"
}

# wait_phase OUT PID: waits for the "phase N" line the server prints; 0 when seen.
wait_phase() {
  local out=$1 pid=$2 t=0
  while ! grep -q '^phase ' "$out" 2> /dev/null; do
    kill -0 "$pid" 2> /dev/null || return 1
    sleep 0.05
    t=$((t + 1))
    if [ $t -gt $((run_timeout * 20)) ]; then return 1; fi
  done
  return 0
}

# serve_and_stop MODE PROG RATE SEED: one forever run, stopped as MODE says;
# prints "snapshots,stop_s,status" and leaves the trace in $tmp/t.ctf.
serve_and_stop() {
  local mode=$1 prog=$2 rate=$3 seed=$4 pid n0=0 t0 t1 status flags=()
  rm -f "$tmp/t.ctf" "$tmp/t.ctf.retain" "$tmp/out"
  [ "$mode" = series ] && flags=(--memtrace-snapshot-every "$snap_every")
  t0=$(date +%s.%N)
  MINNOW_SEED=$seed stdbuf -oL "$vm" --memtrace "$tmp/t.ctf" --memtrace-rate "$rate" "${flags[@]}" "$prog" \
    > "$tmp/out" 2> "$tmp/err" < /dev/null &
  pid=$!
  local ok=1
  if grep -q '^// bench-wait: phase' "$prog"; then
    wait_phase "$tmp/out" "$pid" || ok=0
    [ "$mode" = series ] && n0=$(python3 "$check" snapshots "$tmp/t.ctf.retain" | cut -d' ' -f1)
  fi
  if [ $ok = 1 ]; then
    if [ "$mode" = series ]; then
      python3 "$check" wait "$tmp/t.ctf.retain" $((n0 + snaps)) "$run_timeout" "$pid" 2>> "$tmp/err" || ok=0
    else
      sleep "$(awk -v a="$snaps" -v b="$snap_every" 'BEGIN { print a * b }')"
    fi
  fi
  if [ "$mode" = series ]; then kill -KILL "$pid" 2> /dev/null; else kill -TERM "$pid" 2> /dev/null; fi
  { wait "$pid"; } 2> /dev/null
  status=$?
  t1=$(date +%s.%N)
  local whole
  whole=$(python3 "$check" snapshots "$tmp/t.ctf.retain" 2> /dev/null | cut -d' ' -f2)
  [ $ok = 1 ] || status="timeout/$status"
  echo "${whole:-0},$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }'),$status"
}

# ------------------------------------------------------------------ modes
for mode in $modes; do
  [ "${SUMMARY_ONLY:-0}" = 1 ] && break
  case $mode in
    series|term|end) ;;
    *) echo "leaks_eval: unknown mode $mode (series, end, term)" >&2; exit 2 ;;
  esac
  if [ "$mode" = series ] && ! has_snapshots; then
    echo "leaks_eval: mode series skipped: $vm has no --memtrace-snapshot-every (the snapshot runtime has not landed)" \
      | tee "$out_dir/leaks_series.skipped" >&2
    continue
  fi
  rm -f "$out_dir/leaks_series.skipped"
  csv=$out_dir/leaks_$mode.csv
  if [ "$mode" = end ]; then
    echo "program,set,leaks,rate,seed,requests,status,$judge_fields" > "$csv"
    progs=("${servers[@]}" "${leak_programs[@]}")
  else
    echo "program,leaks,rate,seed,snapshots,stop_s,status,$judge_fields" > "$csv"
    progs=("${servers[@]}")
  fi
  for prog in "${progs[@]}"; do
    selected "$prog" || continue
    name=$(basename "$prog" .mn)
    [[ $prog == bench/leaks/* ]] && name=leaks/$name
    truth=; requests=0
    eval "$(python3 "$check" truth "$prog")"
    for rate in $rates; do
      for seed in $(seq 1 "$seeds"); do
        if [ "$mode" = end ]; then
          set_name=$(basename "$(dirname "$prog")")
          args=()
          [ "$requests" -gt 0 ] && args=("$requests")
          rm -f "$tmp/t.ctf" "$tmp/t.ctf.retain"
          MINNOW_SEED=$seed timeout "$run_timeout" "$vm" --memtrace "$tmp/t.ctf" --memtrace-rate "$rate" "$prog" "${args[@]}" \
            > /dev/null 2> "$tmp/err" < /dev/null
          status=$?
          row=$(judge "$name,$set_name,$truth,$rate,$seed,$requests,$status" "$prog" "$tmp/t.ctf" "$status" 0)
        else
          stop=$(serve_and_stop "$mode" "$prog" "$rate" "$seed")
          want=137
          [ "$mode" = term ] && want=143
          row=$(judge "$name,$truth,$rate,$seed,$stop" "$prog" "$tmp/t.ctf" "${stop##*,}" "$want")
        fi
        echo "$row" >> "$csv"
        echo "$mode $row" | cut -c1-160
      done
    done
  done
done

# ---------------------------------------------------------------- summary
# shellcheck disable=SC2086
python3 - "$out_dir" $modes <<'PY' | tee "$out_dir/leaks_summary.txt"
import csv, os, sys, collections
out_dir, modes = sys.argv[1], sys.argv[2:]
floors = {"series": ("holder named first", 0.95, "nothing named", 0.95),
          "end": ("line in the first three suspects, with its root", 0.90, "flagged at most", 0.02),
          "term": ("line in the first three suspects (end state after SIGTERM)", None, "nothing named", None)}
dat = collections.OrderedDict()
for mode in modes:
    path = os.path.join(out_dir, f"leaks_{mode}.csv")
    if not os.path.exists(path):
        continue
    rows = list(csv.DictReader(open(path)))
    if not rows:
        continue
    col = "outcome_series" if mode in ("series",) else "outcome_end"
    print(f"\n## mode {mode} ({len(rows)} runs)\n")
    print("| program | leaks | rate | pass | fail (flagged) | cannot judge | error | holder ranks | line ranks (user/strict) |")
    print("| --- | --- | --- | ---: | ---: | ---: | ---: | --- | --- |")
    table = collections.OrderedDict()
    for r in rows:
        table.setdefault((r["program"], r["leaks"], r["rate"]), []).append(r)
    for (p, lk, rate), rs in table.items():
        c = collections.Counter(r[col] for r in rs)
        n = len(rs)
        hr = " ".join(r["holder_rank"] for r in rs) if lk == "leak" else "-"
        lr = " ".join(r["line_rank"] + "/" + r["line_rank_strict"] for r in rs) if lk == "leak" else "-"
        bad = c["fail"] + c["flagged"]
        print(f"| {p} | {lk} | {rate} | {c['pass']}/{n} | {bad} | {c['cannot']} | {c['error']} | {hr} | {lr} |")
        p = p + ("*" if lk == "leak" else "")
        dat.setdefault(p, {})[mode] = dat.setdefault(p, {}).get(mode, 0) + c["pass"]
        dat[p].setdefault(mode + "_n", 0)
        dat[p][mode + "_n"] += n
    f = floors[mode]
    for lk, label, floor in (("leak", f[0], f[1]), ("none", f[2], f[3])):
        rs = [r for r in rows if r["leaks"] == lk]
        if not rs:
            continue
        for rate in sorted({r["rate"] for r in rs}) + ["all"]:
            sel = [r for r in rs if rate == "all" or r["rate"] == rate]
            n = len(sel)
            if lk == "leak":
                share = sum(r[col] == "pass" for r in sel) / n
                verdict = "" if floor is None else (" (floor >= %d %%: %s)" % (floor * 100, "met" if share >= floor else "MISSED"))
            elif mode == "end":
                share = sum(r[col] == "flagged" for r in sel) / n
                verdict = " (floor <= %d %%: %s)" % (floor * 100, "met" if share <= floor else "MISSED")
            else:
                share = sum(r[col] == "pass" for r in sel) / n
                verdict = "" if floor is None else (" (floor >= %d %%: %s)" % (floor * 100, "met" if share >= floor else "MISSED"))
            what = "leaking" if lk == "leak" else "not leaking"
            print(f"{mode}, {what} programs, rate {rate}: {label}: {share * 100:.1f} % of {n} runs{verdict}")
# the figure's data: one row a program, pass share per mode
with open(os.path.join(out_dir, "leaks_figure.dat"), "w") as f:
    f.write("# program " + " ".join(modes) + "  (percent of runs passed)\n")
    for p, d in dat.items():
        f.write(p + " " + " ".join(("%.1f" % (100.0 * d[m] / d[m + "_n"])) if m + "_n" in d else "NaN" for m in modes) + "\n")
PY
if command -v gnuplot > /dev/null && [ -s "$out_dir/leaks_figure.dat" ]; then
  gnuplot -e "datafile='$out_dir/leaks_figure.dat'; outfile='$out_dir/leaks.png'; modes='$modes'" bench/leaks.gp \
    || echo "leaks_eval: gnuplot failed" >&2
fi
