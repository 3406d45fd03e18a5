#!/usr/bin/env bash
# scale.sh (make bench-scale): the trace tool on traces of real size (issue
# 32, class 1 and 3). Two parts, each a CSV in bench/results/:
#
# 1. scale_vm.csv: traces ./vm writes of the bench programs at high rates
#    (BENCH_SCALE_CASES: "program args@rate", default sized for 50-100 M
#    events, binary_trees 19 at 0.1 is 77.7 M) and of the deepest recursion
#    the default stack allows (bench/scale_recursion.mn), each read by every
#    command. Per command: status, wall and CPU seconds, peak RSS (GNU
#    time), the output's bytes, and the floor's verdict: at most 200 MB and
#    30 s of CPU (user + system: wall time on a shared machine measures the
#    neighbours) per 100 M events (floor_s = max(30 x events / 1e8, 1)).
#    `dump` prints every frame of every event (gigabytes of text: its
#    memory is judged, not its time). A command is stopped after
#    BENCH_SCALE_TIMEOUT seconds (default 900): verdict "timeout".
# 2. scale_linear.csv: bench/scale_traces.c's crafted shapes (the ones that
#    broke a command: recursion through a cycle with a repeated frame, long
#    cycles, drifting runs, binary trees, one deep shared stack) at 1x, 2x,
#    4x and 8x, each read by every command; per shape and command the CPU
#    time per event at each size and the verdict: the largest within 2x of
#    the smallest from 1x to 8x (sizes whose CPU time is under 0.05 s are
#    noise and not compared).
#
# One run per measurement (the traces are large: BENCH_SCALE_CASES narrows
# it); the machine's load is written beside each row. A trace is deleted
# once read (750 MB for binary_trees 19 at 0.1). BENCH_SCALE_PART=vm or
# linear runs one part.
set -u
cd "$(dirname "$0")/.." || exit 2
out=${BENCH_OUT:-bench/results}
tmp=${BENCH_SCALE_TMP:-$(mktemp -d)}
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$out" "$tmp"
part=${BENCH_SCALE_PART:-all}
[ -x /usr/bin/time ] || { echo "bench-scale: /usr/bin/time (GNU time) is missing: nothing measured"; exit 1; }
[ -x ./vm ] && [ -x tools/memtrace ] && [ -x build/release/scale_traces ] ||
  { echo "bench-scale: make vm tools/memtrace build/release/scale_traces first"; exit 1; }

# The commands, as "label|arguments" (T: the trace, O: an output file).
commands=(
  "info|info T" "dump|dump T" "top|top T" "top --by stack|top --by stack T" "lifetimes|lifetimes T"
  "leaks|leaks T" "paths|paths T" "diff|diff T T" "timeline|timeline T" "flamegraph|flamegraph T"
  "flamegraph --json|flamegraph --json T" "report|report T -o O.html" "pprof|pprof T -o O.pb.gz"
  "merge|merge T T -o O.pb.gz"
)

# run_command TRACE ARGS: prints "status wall_s cpu_s rss_kb output_bytes"
run_command() {
  local args=${2//T/$1}
  args=${args//O./$tmp/out.}
  rm -f "$tmp"/out.*
  # shellcheck disable=SC2086
  timeout "${BENCH_SCALE_TIMEOUT:-900}" /usr/bin/time -f '%e %U %S %M' -o "$tmp/time" tools/memtrace $args 2> "$tmp/err" |
    wc -c > "$tmp/bytes"
  local status=${PIPESTATUS[0]} bytes
  [ -s "$tmp/time" ] || echo "0 0 0 0" > "$tmp/time"   # killed by the timeout
  bytes=$(cat "$tmp/bytes")
  for f in "$tmp"/out.*; do [ -f "$f" ] && bytes=$((bytes + $(stat -c %s "$f"))); done
  tail -1 "$tmp/time" | awk -v s="$status" -v b="$bytes" '{ printf "%d %s %.2f %d %.0f\n", s, $1, $2 + $3, $4, b }'
}

events_of() { tools/memtrace info "$1" | awk '/^events/ { print $2 + 0 }'; }

if [ "$part" != linear ]; then
  cases=${BENCH_SCALE_CASES:-"binary_trees 19@0.1;list_pipeline 10000 5700@0.1;deep_map 10000 5800@0.1;word_count 5000000@1;string_build 2000 800@0.1;RECURSION@0.1"}
  csv="$out/scale_vm.csv"
  printf 'case,rate,events,trace_bytes,command,status,wall_s,cpu_s,max_rss_kb,output_bytes,floor_s,verdict,load\n' > "$csv"
  IFS=';' read -r -a list <<< "$cases"
  for c in "${list[@]}"; do
    prog=${c%@*} rate=${c##*@}
    read -r -a words <<< "$prog"
    t="$tmp/t.ctf"
    rm -f "$t" "$t.retain"
    if [ "${words[0]}" = RECURSION ]; then
      ./vm --memtrace "$t" --memtrace-rate "$rate" bench/scale_recursion.mn > /dev/null 2> "$tmp/vm.err" || { echo "$c: ./vm failed: $(head -c 300 "$tmp/vm.err")"; continue; }
      name="deepest recursion (bench/scale_recursion.mn)"
    else
      ./vm --memtrace "$t" --memtrace-rate "$rate" "bench/programs/${words[0]}.mn" "${words[@]:1}" > /dev/null 2> "$tmp/vm.err" ||
        { echo "$c: ./vm failed: $(head -c 300 "$tmp/vm.err")"; continue; }
      name=$prog
    fi
    ev=$(events_of "$t") bytes=$(stat -c %s "$t")
    floor=$(awk -v e="$ev" 'BEGIN { f = 30 * e / 1e8; printf "%.1f", f < 1 ? 1 : f }')
    echo "bench-scale: $name at $rate: $ev events, $bytes bytes (floor: 200 MB, $floor s)"
    for cmd in "${commands[@]}"; do
      label=${cmd%%|*}
      read -r st wall cpu rss ob <<< "$(run_command "$t" "${cmd#*|}")"
      verdict=$(awk -v s="$st" -v c="$cpu" -v r="$rss" -v f="$floor" -v l="$label" 'BEGIN {
        if (s == 124) print "timeout"; else if (s != 0) print "status"; else if (r > 204800) print "memory";
        else if (c > f && l != "dump") print "time"; else print "ok" }')
      load=$(cut -d' ' -f1 /proc/loadavg)
      printf '"%s",%s,%d,%d,%s,%d,%s,%s,%d,%s,%s,%s,%s\n' "$name" "$rate" "$ev" "$bytes" "$label" "$st" "$wall" "$cpu" "$rss" "$ob" "$floor" "$verdict" "$load" >> "$csv"
      printf '  %-18s status %d  %7s s  %8d KB  %12s bytes out  %s\n' "$label" "$st" "$wall" "$rss" "$ob" "$verdict"
      [ "$st" -eq 0 ] || head -c 300 "$tmp/err"
    done
    rm -f "$t" "$t.retain"
  done
  echo "bench-scale: $csv"
fi

if [ "$part" != vm ]; then
  csv="$out/scale_linear.csv"
  printf 'shape,scale,events,trace_bytes,command,status,cpu_s,max_rss_kb,us_per_event,load\n' > "$csv"
  for shape in cycle-repeat cycle-long cycle-drift tree shared; do
    for scale in 1 2 4 8; do
      t="$tmp/$shape-$scale.ctf"
      build/release/scale_traces "$shape" "$scale" "$t" || { echo "scale_traces $shape $scale failed"; continue; }
      ev=$(events_of "$t") bytes=$(stat -c %s "$t")
      for cmd in "${commands[@]}"; do
        label=${cmd%%|*}
        [ "$label" = dump ] && continue   # its output is depth x events by design (README "Limits")
        read -r st _wall cpu rss _ob <<< "$(run_command "$t" "${cmd#*|}")"
        per=$(awk -v c="$cpu" -v e="$ev" 'BEGIN { printf "%.4f", 1e6 * c / e }')
        printf '%s,%d,%d,%d,%s,%d,%s,%d,%s,%s\n' "$shape" "$scale" "$ev" "$bytes" "$label" "$st" "$cpu" "$rss" "$per" \
          "$(cut -d' ' -f1 /proc/loadavg)" >> "$csv"
      done
      rm -f "$t"
    done
  done
  # The verdict: per shape and command, the CPU time per event's spread.
  awk -F, 'NR > 1 && $7 >= 0.05 { k = $1 "," $5; v = $9 + 0
      if (!(k in lo) || v < lo[k]) lo[k] = v; if (!(k in hi) || v > hi[k]) hi[k] = v; if ($6 != 0) bad[k] = 1 }
    END { for (k in lo) printf "%s,%.2f,%s\n", k, hi[k] / lo[k], (bad[k] ? "status" : hi[k] <= 2 * lo[k] ? "linear" : "NOT LINEAR") }' \
    "$csv" | sort > "$out/scale_linear_verdict.csv"
  sed -i '1i shape,command,max_over_min_us_per_event,verdict' "$out/scale_linear_verdict.csv"
  echo "bench-scale: $csv, $out/scale_linear_verdict.csv"
  grep -v ',linear$' "$out/scale_linear_verdict.csv" | tail -n +2 | sed 's/^/  /'
fi
