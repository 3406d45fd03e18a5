#!/usr/bin/env bash
# bench/snapshot_pause.sh - a snapshot's pause and memory against a major
# collection of the same heap (issue 30's floors: pause <= 1.2x a full major
# collection; memory <= 32 B a sampled live block plus the collection's own).
#
# Pause: bench/snapshots/pause.mn builds a heap (CASES: shape and size), then
# ROUNDS rounds on that same heap, each timing Gc.full_major(), Gc.major() and
# Memtrace.snapshot() (in an order rotating from round to round) with
# Sys.time(); the snapshot's pause is the one its end record gives (pause us,
# docs/trace-format.md 12.1), matched to its round by number. Per round the
# ratios pause / full_major and pause / major; per case their medians. All
# three from one run, one heap, alternating: the machine's load hits them
# alike. Wall-clock microseconds (what a pause is).
# Memory: pause.mn with ONLY=snapshot against ONLY=major (the heap built, then
# one snapshot or one Gc.major(), nothing else), --memtrace-no-end-state, peak
# RSS (GNU time %M) of MEM_RUNS runs each; (median snapshot - median major) /
# the snapshot's live samples = its bytes a sampled live block beyond the
# collection's own.
# Results: bench/results/snapshot_pause.csv (a row a round),
# snapshot_memory.csv (a row a run), the summary on stdout and in
# snapshot_summary.txt, the figure snapshot_pause.png (bench/snapshot_pause.gp).
# Skipped, saying so, when ./vm has no Memtrace.snapshot().
# Knobs: CASES ("shape size;..."), RATES ("1e-4 1e-3 1e-2"), ROUNDS (7),
# MEM_CASE ("sessions 1000000"), MEM_RATES ("1e-2 1e-1"), MEM_RUNS (3), VM,
# OUT_DIR.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
vm=${VM:-./vm}
out_dir=${OUT_DIR:-bench/results}
cases=${CASES:-sessions 200000;sessions 1000000;tree 1000000;table 300000}
rates=${RATES:-1e-4 1e-3 1e-2}
rounds=${ROUNDS:-7}
mem_case=${MEM_CASE:-sessions 1000000}
mem_rates=${MEM_RATES:-1e-2 1e-1}
mem_runs=${MEM_RUNS:-3}
check=bench/leaks_check.py
mkdir -p "$out_dir"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo 'Memtrace.snapshot()' > "$tmp/probe.mn"
if ! "$vm" --memtrace "$tmp/probe.ctf" "$tmp/probe.mn" > /dev/null 2> "$tmp/probe.err"; then
  echo "snapshot_pause: skipped: $vm has no Memtrace.snapshot() yet ($(head -1 "$tmp/probe.err"))" \
    | tee "$out_dir/snapshot_summary.txt" >&2
  exit 0
fi
[ -x /usr/bin/time ] || { echo "snapshot_pause: GNU time (/usr/bin/time) is needed" >&2; exit 2; }

pause_csv=$out_dir/snapshot_pause.csv
echo "shape,size,rate,round,full_major_us,major_us,snapshot_call_us,pause_us,paths_us,live_samples,marked_blocks,marked_words,heap_words" > "$pause_csv"
while IFS= read -r c; do
  c=$(echo "$c" | sed 's/^ *//; s/ *$//')
  [ -n "$c" ] || continue
  read -r shape size <<< "$c"
  for rate in $rates; do
    rm -f "$tmp/p.ctf" "$tmp/p.ctf.retain"
    if ! MINNOW_SEED=1 "$vm" --memtrace "$tmp/p.ctf" --memtrace-rate "$rate" bench/snapshots/pause.mn "$shape" "$size" "$rounds" \
        > "$tmp/p.out" 2> "$tmp/p.err"; then
      echo "snapshot_pause: $shape $size at $rate failed:" >&2
      head -3 "$tmp/p.err" >&2
      continue
    fi
    python3 "$check" ends "$tmp/p.ctf.retain" > "$tmp/p.ends"
    python3 - "$tmp/p.out" "$tmp/p.ends" "$shape" "$size" "$rate" >> "$pause_csv" <<'PY'
import csv, sys
out, ends, shape, size, rate = sys.argv[1:]
t = {}
for line in open(out):
    p = line.split()
    if len(p) == 3:
        t.setdefault(int(p[1]), {})[p[0]] = int(p[2])
# the snapshots Memtrace.snapshot() took (trigger 1), in order: round k's is the k-th
calls = [e for e in csv.DictReader(open(ends)) if e["trigger"] == "1"]
for r in sorted(t):
    e = calls[r]
    print(",".join(str(x) for x in (shape, size, rate, r, t[r]["full_major"], t[r]["major"], t[r]["snapshot"],
                                   e["pause_us"], e["paths_us"], e["live_samples"], e["marked_blocks"],
                                   e["marked_words"], e["heap_words"])))
PY
    echo "pause: $shape $size $rate: $(tail -n "$rounds" "$pause_csv" | cut -d, -f5,6,8 | tr '\n' ' ')"
  done
done <<< "$(echo "$cases" | tr ';' '\n')"

mem_csv=$out_dir/snapshot_memory.csv
echo "shape,size,rate,run,only,max_rss_kb,live_samples,marked_blocks" > "$mem_csv"
read -r mshape msize <<< "$mem_case"
for rate in $mem_rates; do
  for run in $(seq 1 "$mem_runs"); do
    for only in snapshot major; do
      rm -f "$tmp/m.ctf" "$tmp/m.ctf.retain"
      MINNOW_SEED=$run /usr/bin/time -f '%M' -o "$tmp/rss" "$vm" --memtrace "$tmp/m.ctf" --memtrace-rate "$rate" \
        --memtrace-no-end-state bench/snapshots/pause.mn "$mshape" "$msize" 0 "$only" > /dev/null 2> "$tmp/m.err"
      live=; blocks=
      if [ "$only" = snapshot ]; then
        read -r live blocks < <(python3 "$check" ends "$tmp/m.ctf.retain" | awk -F, '$2 == 1 { print $6, $8 }')
      fi
      echo "$mshape,$msize,$rate,$run,$only,$(tail -1 "$tmp/rss"),${live:-},${blocks:-}" >> "$mem_csv"
    done
  done
done

python3 - "$pause_csv" "$mem_csv" <<'PY' | tee "$out_dir/snapshot_summary.txt"
import csv, sys, statistics as st, collections
rows = list(csv.DictReader(open(sys.argv[1])))
print("## A snapshot's pause against a major collection of the same heap (medians of the rounds)\n")
print("| shape | size | rate | live samples | marked blocks | full_major ms | major ms | snapshot pause ms | paths ms | pause / full_major | pause / major |")
print("| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
by = collections.OrderedDict()
for r in rows:
    by.setdefault((r["shape"], r["size"], r["rate"]), []).append(r)
worst_full = worst_major = 0
for (shape, size, rate), rs in by.items():
    med = lambda k: st.median(float(r[k]) for r in rs)
    rf = st.median(float(r["pause_us"]) / float(r["full_major_us"]) for r in rs)
    rm = st.median(float(r["pause_us"]) / float(r["major_us"]) for r in rs)
    worst_full, worst_major = max(worst_full, rf), max(worst_major, rm)
    print(f"| {shape} | {size} | {rate} | {int(med('live_samples'))} | {int(med('marked_blocks'))} | "
          f"{med('full_major_us') / 1e3:.1f} | {med('major_us') / 1e3:.1f} | {med('pause_us') / 1e3:.1f} | "
          f"{med('paths_us') / 1e3:.2f} | {rf:.2f} | {rm:.2f} |")
if by:
    print(f"\nworst median pause / Gc.full_major(): {worst_full:.2f} (floor <= 1.2: {'met' if worst_full <= 1.2 else 'MISSED'}); "
          f"worst median pause / Gc.major(): {worst_major:.2f} ({'met' if worst_major <= 1.2 else 'MISSED'} against one major collection)")
mem = list(csv.DictReader(open(sys.argv[2])))
if mem:
    print("\n## A snapshot's memory: peak RSS with one snapshot minus with one Gc.major(), by live sample\n")
    print("| shape | size | rate | live samples | RSS snapshot MiB | RSS major MiB | bytes a live sample |")
    print("| --- | ---: | --- | ---: | ---: | ---: | ---: |")
    worst = 0
    for rate in sorted({r["rate"] for r in mem}, key=float):
        rs = [r for r in mem if r["rate"] == rate]
        s = st.median(float(r["max_rss_kb"]) for r in rs if r["only"] == "snapshot")
        m = st.median(float(r["max_rss_kb"]) for r in rs if r["only"] == "major")
        live = st.median(float(r["live_samples"]) for r in rs if r["only"] == "snapshot")
        b = (s - m) * 1024 / live if live else float("nan")
        worst = max(worst, b)
        print(f"| {rs[0]['shape']} | {rs[0]['size']} | {rate} | {int(live)} | {s / 1024:.1f} | {m / 1024:.1f} | {b:.1f} |")
    print(f"\nworst: {worst:.1f} B a sampled live block beyond the collection's own (floor <= 32: {'met' if worst <= 32 else 'MISSED'})")
PY
if command -v gnuplot > /dev/null && [ "$(wc -l < "$pause_csv")" -gt 1 ]; then
  gnuplot -e "datafile='$pause_csv'; outfile='$out_dir/snapshot_pause.png'" bench/snapshot_pause.gp \
    || echo "snapshot_pause: gnuplot failed" >&2
fi
