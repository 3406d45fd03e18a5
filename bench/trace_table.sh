#!/usr/bin/env bash
# trace_table.sh DIR - the tables of make bench-trace, from the CSVs that
# bench/trace_bench.sh wrote in DIR (trace_sizes.csv, trace_times.csv,
# trace_names.csv, trace_callgrind.csv, trace_reader.csv), and the floors of
# bench/TRACE.md judged on them. Prints to stdout; a missing CSV (a skipped
# step) leaves its table out.
#
# Environment: BENCH_TRACE_NAMES_RATE=1e-4, the rate of the main table
# (perf's rows: the runs whose frequency was matched to it).
set -u -o pipefail
dir=${1:?usage: trace_table.sh DIR}
rate=${BENCH_TRACE_NAMES_RATE:-1e-4}
sizes=$dir/trace_sizes.csv times=$dir/trace_times.csv names=$dir/trace_names.csv
cg=$dir/trace_callgrind.csv reader=$dir/trace_reader.csv
have() { [ -f "$1" ] && [ "$(wc -l <"$1")" -gt 1 ]; }
have "$sizes" || sizes=/dev/null   # a callgrind-only run: its table alone

# ---- the table: per program and method, at one rate
if have "$sizes"; then
  echo "At rate $rate (perf: -F matched to the samples memtrace takes at that rate); CPU ratio: median"
  echo "over rounds of the program's CPU time over the profiler-off run of the same round;"
  echo "Minnow line: share of samples whose innermost frame is the allocating Minnow source line;"
  echo "alloc: share whose innermost frame is in allocation code; frames: per sample."
  awk -F, -v rate="$rate" '
    FILENAME ~ /trace_sizes/ { if (FNR > 1 && $4 == rate) { k = $2 " " $3 SUBSEP $1; smp[k] = $6; bps[k] = $10
        if (!($2 " " $3 in seen)) { seen[$2 " " $3] = 1; order[++n] = $2 " " $3 } }; next }
    FILENAME ~ /trace_times/ { if (FNR > 1 && $4 == rate) { m = $3 == "memtrace" ? "memtrace" : $3; cpu[$1 " " $2 SUBSEP m] = $9 }; next }
    FILENAME ~ /trace_names/ { if (FNR > 1 && $4 == rate) { k = $2 " " $3 SUBSEP $1; ml[k] = $7; al[k] = $8; fr[k] = $16 }; next }
    FILENAME ~ /trace_callgrind/ { if (FNR > 1 && $3 == rate) cgx[$1] = $6; next }
    END {
      printf "%-24s %-11s %8s %9s %8s %9s %11s %7s %8s\n", "program", "method", "samples", "B/sample", "x memtr", "CPU ratio", "Minnow line", "alloc", "frames"
      split("memtrace perf-none perf-fp perf-dwarf", ms, " ")
      for (i = 1; i <= n; i++) for (j = 1; j <= 4; j++) {
        k = order[i] SUBSEP ms[j]
        if (!(k in bps)) continue
        base = bps[order[i] SUBSEP "memtrace"]
        printf "%-24s %-11s %8s %9.1f %8s %9s %11s %7s %8s\n", j == 1 ? order[i] : "", ms[j], smp[k], bps[k],
          (base > 0 ? sprintf("%.1f", bps[k] / base) : ""), ((k in cpu) ? cpu[k] : "-"),
          (k in ml) && ml[k] != "" ? sprintf("%.1f%%", 100 * ml[k]) : "-", (k in al) && al[k] != "" ? sprintf("%.1f%%", 100 * al[k]) : "-",
          (k in fr) ? fr[k] : "-"
      }
    }' "$sizes" "$(have "$times" && echo "$times" || echo /dev/null)" "$(have "$names" && echo "$names" || echo /dev/null)"

  # ---- bytes per sample at every rate
  echo
  echo "Bytes per sample (file size / samples) at each rate; memtrace's split at the largest rate:"
  awk -F, '
    NR == 1 { next }
    { k = $1 SUBSEP $2 " " $3; if (!(k in seen)) { seen[k] = 1; key[++n] = k }
      if (!($4 in rs)) { rs[$4] = 1; rate[++nr] = $4 }
      b[k, $4] = $10; split_[k, $4] = sprintf("hdr %.2f loc %.2f bt %.2f ev %.2f", $11, $13, $14, $15) }
    END {
      printf "%-11s %-24s", "method", "program"
      for (i = 1; i <= nr; i++) printf " %9s", rate[i]
      printf "\n"
      for (j = 1; j <= n; j++) {
        split(key[j], kk, SUBSEP)
        printf "%-11s %-24s", kk[1], kk[2]
        last = ""
        for (i = 1; i <= nr; i++) { v = b[key[j], rate[i]]; printf " %9s", v == "" ? "-" : sprintf("%.1f", v); if (v != "") last = rate[i] }
        if (kk[1] == "memtrace") printf "   (%s: %s)", last, split_[key[j], last]
        printf "\n"
      }
    }' "$sizes"
fi

# ---- paired CPU ratios at every rate
if have "$times"; then
  echo
  echo "Cost: median of per-round CPU-time ratios to the profiler-off run (their range in parentheses):"
  awk -F, '
    NR == 1 { next }
    $3 == "off" { next }
    { k = $3 SUBSEP $1 " " $2; if (!(k in seen)) { seen[k] = 1; key[++n] = k }
      r = $4 == "" ? "-" : $4; if (!(r in rs)) { rs[r] = 1; rate[++nr] = r }
      v[k, r] = sprintf("%.3f (%.2f-%.2f)", $9, $13, $14) }
    END {
      printf "%-11s %-24s", "config", "program"
      for (i = 1; i <= nr; i++) printf " %18s", rate[i] == "-" ? "" : rate[i]
      printf "\n"
      for (j = 1; j <= n; j++) {
        split(key[j], kk, SUBSEP)
        printf "%-11s %-24s", kk[1] == "fpbuild" ? "vm-fp alone" : kk[1], kk[2]
        for (i = 1; i <= nr; i++) printf " %18s", (key[j], rate[i]) in v ? v[key[j], rate[i]] : "-"
        printf "\n"
      }
    }' "$times"
fi

# ---- callgrind
if have "$cg"; then
  echo
  echo "Callgrind: instructions with --memtrace over the profiler off (floors: 1e-5 <= 1 %, 1e-4 <= 3 %),"
  echo "per sample (allocation event) the extra Ir split into writer / tracker glue / engine, and the"
  echo "new callers a sample brings (frames its capture walks) with the extra Ir per new caller, all in:"
  awk -F, 'NR > 1 { printf "  %-24s %-6s %7.3f%% %-5s  %7s Ir/sample = writer %6s + tracker %5s + engine %6s; %7s new/sample, %6s Ir/new\n",
    $1 " " $2, $3, $6, $8, $11, $12, $13, $14, $16, $17 }' "$cg"
fi

# ---- reader
if have "$reader"; then
  echo
  echo "Reader (trace/reader.c, build/release/reader_bench: every event, its new frames; CPU time, page cache warm): fastest pass (median)"
  # The largest trace of each program: the others take too little time to clock.
  awk -F, 'NR > 1 { k = $1 " " $2; if ($5 + 0 > best[k] + 0) { best[k] = $5; line[k] = $0 }; if (!(k in seen)) { seen[k] = 1; order[++n] = k } }
    END { for (i = 1; i <= n; i++) print line[order[i]] }' "$reader" |
  awk -F, '{ printf "  %-24s %-6s %9d events %8.1f MB %6.1f new frames/alloc  %6.1f M events/s (%5.1f)  %6.0f MB/s (%4.0f)\n",
    $1 " " $2, $3, $5, $4 / 1e6, ($6 > 0 ? $8 / $6 : 0), $13 / 1e6, $11 / 1e6, $14, $12 }'
fi

# ---- the floors
echo
echo "Floors (bench/TRACE.md):"
awk -F, -v rate="$rate" '
  FILENAME ~ /trace_sizes/ { if (FNR > 1 && $4 == rate) b[$1, $2 " " $3] = $10
    if (FNR > 1 && $1 == "memtrace") { depth[$2 " " $3] = $19; if (!($2 " " $3 in seen)) { seen[$2 " " $3] = 1; order[++n] = $2 " " $3 } }
    next }
  FILENAME ~ /trace_callgrind/ { if (FNR > 1 && $8 != "") { cgline = cgline sprintf(" %s %s %.2f%% %s;", $1, $3, $6, $8); if ($8 != "ok") cgbad++ }
    # Issue 24: a shallow sample (string_build, word_count) at most 800 Ir: the cost of a sample, that of
    # starting and ending a trace (the run at rate 1e-12) apart, at the rates that take hundreds of samples
    # or more (at 1e-5 the first samples, which write each location once, are most of them).
    if (FNR > 1 && ($1 == "string_build" || $1 == "word_count") && $19 != "" && $3 + 0 >= 1e-4) {
      smpline = smpline sprintf(" %s %s %d (all in %d);", $1, $3, $19, $11); if ($19 > 800) smpbad++ }
    next }
  FILENAME ~ /trace_reader/ { if (FNR > 1) { k = $1 " " $2; if ($5 + 0 > ev[k] + 0) { ev[k] = $5; best[k] = $13; med[k] = $11 } }; next }
  END {
    for (i = 1; i <= n; i++) {
      p = order[i]; m = b["memtrace", p]
      if (m == "") continue
      printf "  bytes/sample %-24s memtrace %.1f B at %s (<= 35: %s)", p, m, rate, (m <= 35 ? "ok" : "OVER")
      for (j = 1; j <= 2; j++) { meth = j == 1 ? "perf-fp" : "perf-dwarf"; f = b[meth, p]
        if (f != "") printf "; %s %.1fx (>= 10: %s)", meth, f / m, (f / m >= 10 ? "ok" : "MISSED") }
      printf "\n"
    }
    if (cgline != "") printf "  instructions:%s %s\n", cgline, (cgbad ? "MISSED" : "all ok")
    if (smpline != "") printf "  Ir a shallow sample, the trace start and end apart:%s <= 800: %s\n", smpline,
      (smpbad ? "MISSED" : "all ok")
    for (i = 1; i <= n; i++) {
      p = order[i]; if (!(p in ev)) continue
      deep = depth[p] + 0 > 100
      fl = deep ? 15e6 : 50e6
      printf "  reader %-24s %s trace (%.0f frames on average): %.1f M events/s best, %.1f median (>= %d M: %s)\n", p,
        (deep ? "deep" : "shallow"), depth[p], best[p] / 1e6, med[p] / 1e6, fl / 1e6, (best[p] >= fl ? "ok" : "MISSED")
    }
  }' "$sizes" "$(have "$cg" && echo "$cg" || echo /dev/null)" "$(have "$reader" && echo "$reader" || echo /dev/null)"
