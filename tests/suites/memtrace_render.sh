#!/usr/bin/env bash
# memtrace_render.sh - the renderers and exporters of tools/memtrace:
# flamegraph (folded stacks and SVG), pprof, merge, timeline. Their figures
# are checked against what tests/trace/dump_truth.awk computes from `memtrace
# dump` of the same trace (sums of samples x word bytes / rate, written apart
# from the tools' code), on traces of ./vm (examples/leaky_cache.mn with a
# small minor heap, at two rates), memtrace's own fixtures (v2, v3, stacks
# of 10,000 frames, hashtbl_str), synthetic traces (tests/trace/trace_synth.c:
# random stacks, inlined frames, odd names, 85,000-frame stacks; empty; one
# event), a truncated trace and a file that is no trace. The dump's sums are
# of whole stacks (--whole-stacks); the default output folds recursion
# (analysis/collapse.h), and unfolding its "f ×N" and "(f → g) ×N" frames must
# give the whole stacks back, line for line. Outside tools, used when installed and
# skipped with a message (not counted) when not:
#   go (golang-go): go tool pprof -raw/-top/-traces read the profiles, and
#   -weblist and -list show their source lines (the mapping is virtual);
#   gnuplot (gnuplot-nox): timeline's PNG and SVG charts;
#   chromium: the flame graph's script runs, zooms and resets (the check
#     tests/trace/flame_zoom_check.svgfrag is put into the SVG).
# Each check runs on the release build and, for the folded stacks, on the
# ASan+UBSan one (build/asan/memtrace). Last line: "N passed, N failed".
set -u
cd "$(dirname "$0")/../.." || exit 2

tool=tools/memtrace
asan=build/asan/memtrace
truth=tests/trace/dump_truth.awk
. tests/suites/lib.sh
suite_init memtrace_render
require_built "$tool" ./vm build/release/tests/trace_synth
tools=("$tool")
[ -x "$asan" ] && tools+=("$asan")

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export MEMTRACE_PROGRESS=0

rate_of() { "$tool" info "$1" 2>/dev/null | awk '/^sampling rate/ {print $3}'; }

# ---------------------------------------------------------------- traces

export MINNOW_SEED=20250101
./vm --minor-words 32768 --memtrace "$tmp/leak2.ctf" --memtrace-rate 1e-2 examples/leaky_cache.mn >/dev/null
./vm --minor-words 32768 --memtrace "$tmp/leak3.ctf" --memtrace-rate 1e-3 examples/leaky_cache.mn >/dev/null
synth=build/release/tests/trace_synth
"$synth" --scenario random --events 3000 --seed 1 "$tmp/random.ctf" /dev/null
"$synth" --scenario names --events 1500 --seed 2 "$tmp/names.ctf" /dev/null
"$synth" --scenario mixed --events 400 --seed 3 "$tmp/mixed.ctf" /dev/null
"$synth" --scenario random --events 0 "$tmp/empty.ctf" /dev/null
"$synth" --scenario random --events 1 "$tmp/one.ctf" /dev/null
size=$(wc -c <"$tmp/leak2.ctf")
head -c $((size * 2 / 3)) "$tmp/leak2.ctf" >"$tmp/cut.ctf"
head -c 5000 /dev/urandom >"$tmp/noise.ctf"
fx=tests/fixtures/memtrace
traces=("$tmp/leak2.ctf" "$tmp/leak3.ctf" "$fx/bintrees-1e-5.ctf" "$fx/bintrees-1e-5.v3.ctf" "$fx/listmap-1e-6.ctf"
        "$fx/hashtbl_str-1e-4.ctf"
        "$tmp/random.ctf" "$tmp/names.ctf" "$tmp/mixed.ctf" "$tmp/empty.ctf" "$tmp/one.ctf")

expect() {  # trace mode [times]: dump_truth's answer (dumps kept per trace)
  local dump
  dump="$tmp/dump-$(printf '%s' "$1" | tr '/.' '__')"
  [ -f "$dump" ] || "$tool" dump "$1" 2>/dev/null >"$dump"
  awk -v mode="$2" -v rate="$(rate_of "$1")" -v times="${3:-}" -f "$truth" "$dump"
}

# ---------------------------------------------------------------- flamegraph

# Folded lines with each "NAME ×N" frame repeated N times and each "(A → B)
# ×N" frame N times A;B: the whole stacks of folded recursion.
unfold() {
  LC_ALL=C awk -v times_sign="×" -v arrow=" → " '{
    value = $NF; line = substr($0, 1, length($0) - length(value) - 1)
    n = split(line, frames, ";"); sep = ""
    for (i = 1; i <= n; i++) {
      f = frames[i]; times = 1
      if (match(f, / [^ ]+$/) && index(substr(f, RSTART + 1), times_sign) == 1 &&
          substr(f, RSTART + 1 + length(times_sign)) ~ /^[0-9]+$/) {
        times = substr(f, RSTART + 1 + length(times_sign)) + 0; f = substr(f, 1, RSTART - 1)
        if (f ~ /^\(.*\)$/) {
          f = substr(f, 2, length(f) - 2)
          while ((k = index(f, arrow)) > 0) f = substr(f, 1, k - 1) ";" substr(f, k + length(arrow))
        }
      }
      for (k = 0; k < times; k++) { printf "%s%s", sep, f; sep = ";" }
    }
    print " " value }'
}

for t in "${traces[@]}"; do
  name=$(basename "$t")
  expect "$t" folded | LC_ALL=C sort >"$tmp/e.folded"
  expect "$t" folded_live | LC_ALL=C sort >"$tmp/e.live"
  expect "$t" folded_fn | LC_ALL=C sort >"$tmp/e.fn"
  for tl in "${tools[@]}"; do
    for variant in "folded:" "live:--live" "fn:--functions"; do
      label=${variant%%:*} flag=${variant#*:}
      # shellcheck disable=SC2086
      if "$tl" flamegraph --whole-stacks $flag "$t" 2>"$tmp/err" | LC_ALL=C sort >"$tmp/got" &&
         cmp -s "$tmp/got" "$tmp/e.$label"; then ok
      else bad "$tl flamegraph --whole-stacks $flag $name: differs from the dump's sums: $(diff "$tmp/got" "$tmp/e.$label" | head -3) $(head -2 "$tmp/err")"; fi
      # shellcheck disable=SC2086
      if "$tl" flamegraph $flag "$t" 2>"$tmp/err" | unfold | LC_ALL=C sort >"$tmp/got" &&
         cmp -s "$tmp/got" "$tmp/e.$label"; then ok
      else bad "$tl flamegraph $flag $name, unfolded: differs from the dump's sums: $(diff "$tmp/got" "$tmp/e.$label" | head -3 | cut -c1-300) $(head -2 "$tmp/err")"; fi
    done
  done
done

# The folded totals are the estimate: samples x 8 / rate, against info's count.
samples=$("$tool" info "$tmp/leak2.ctf" | sed -n 's/^allocations .*; \([0-9]*\) samples of.*/\1/p')
total=$("$tool" flamegraph "$tmp/leak2.ctf" | awk '{s += $NF} END {printf "%.0f", s}')
if [ "$total" = "$(awk -v n="$samples" 'BEGIN {printf "%.0f", n * 8 / 1e-2}')" ]; then ok
else bad "flamegraph total $total is not $samples samples x 800 bytes"; fi

# Partial: the stacks before the damage, PARTIAL in the SVG, exit 1 with the offset.
"$tool" flamegraph --whole-stacks "$tmp/cut.ctf" >"$tmp/got" 2>"$tmp/err"
status=$?
expect "$tmp/cut.ctf" folded | LC_ALL=C sort >"$tmp/e.folded"
if [ "$status" = 1 ] && LC_ALL=C sort "$tmp/got" | cmp -s - "$tmp/e.folded" && [ -s "$tmp/got" ] &&
   grep -q "cut.ctf: byte [0-9]*:" "$tmp/err"; then ok
else bad "flamegraph on a truncated trace: status $status, $(head -2 "$tmp/err")"; fi
"$tool" flamegraph "$tmp/cut.ctf" -o "$tmp/cut.svg" 2>/dev/null
if [ $? = 1 ] && grep -q "PARTIAL" "$tmp/cut.svg"; then ok; else bad "flamegraph -o X.svg on a truncated trace: no PARTIAL"; fi

for t in "$tmp/leak2.ctf" "$fx/listmap-1e-6.ctf" "$tmp/names.ctf" "$tmp/empty.ctf"; do
  name=$(basename "$t" .ctf)
  if "$tool" flamegraph "$t" -o "$tmp/$name.svg" 2>"$tmp/err" && grep -q '<g class="f"' "$tmp/$name.svg" &&
     tail -1 "$tmp/$name.svg" | grep -q '^</svg>$'; then ok
  else bad "flamegraph -o $name.svg: $(head -2 "$tmp/err")"; fi
done
if [ "$(grep -c '<g class="f"' "$tmp/leak2.svg")" -gt 5 ]; then ok; else bad "leak2.svg has too few frames"; fi
if command -v xmllint >/dev/null; then
  for name in leak2 listmap-1e-6 names empty; do
    if xmllint --noout "$tmp/$name.svg" 2>"$tmp/err"; then ok; else bad "$name.svg is not well-formed XML: $(head -2 "$tmp/err")"; fi
  done
else
  skip "xmllint (libxml2-utils) absent: the SVGs' XML is not checked apart from Chromium's"
fi

# Headless Chromium: the page's script registers every frame, zooms, resets.
chromium_bin=$(command -v chromium || command -v chromium-browser || true)
if [ -n "$chromium_bin" ]; then
  for name in leak2 listmap-1e-6 names; do
    sed '/^<\/svg>$/e cat tests/trace/flame_zoom_check.svgfrag' "$tmp/$name.svg" >"$tmp/z-$name.svg"
    verdict=$(timeout 120 "$chromium_bin" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
      --disable-background-networking --disable-component-update --disable-sync --user-data-dir="$tmp/chromium" \
      --dump-dom "file://$tmp/z-$name.svg" 2>/dev/null | grep -o 'data-test="[^"]*"')
    case "$verdict" in
      'data-test="PASS'*) ok ;;
      *) bad "Chromium on $name.svg: ${verdict:-no verdict (the page did not load or its script failed)}" ;;
    esac
  done
else
  skip "chromium absent: the flame graph's zoom script is not run"
fi

# ---------------------------------------------------------------- pprof and merge

# go tool pprof -raw: "v1 v2 v3 v4: ids" lines after "Samples:"; their column sums.
raw_sums() {
  go tool pprof -raw "$1" 2>/dev/null | awk '/^Samples:/ {on = 1; next} /^Locations/ {on = 0}
    on && /:/ {split($0, a, ":"); n = split(a[1], v, " "); if (n == 4) {for (i = 1; i <= 4; i++) s[i] += v[i]; k++}}
    END {printf "%.0f %.0f %.0f %.0f %d\n", s[1], s[2], s[3], s[4], k}'
}
close_to() {  # a b tolerance
  awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN {d = a - b; exit !(d <= t && -d <= t)}'
}

for t in "${traces[@]}"; do
  name=$(basename "$t")
  if "$tool" pprof "$t" -o "$tmp/p.pb.gz" 2>"$tmp/err" && [ "$(head -c 2 "$tmp/p.pb.gz" | od -An -tx1 | tr -d ' ')" = 1f8b ]; then ok
  else bad "pprof $name: $(head -2 "$tmp/err")"; continue; fi
  if ! command -v go >/dev/null; then continue; fi
  if [ "$name" = mixed.ctf ]; then  # 85,000-frame stacks: -raw takes minutes to print them, -top a second
    if go tool pprof -top "$tmp/p.pb.gz" 2>"$tmp/err" | grep -q "Type: alloc_space"; then ok
    else bad "go tool pprof -top $name: $(head -2 "$tmp/err")"; fi
    continue
  fi
  read -r ao as io is n < <(raw_sums "$tmp/p.pb.gz")
  read -r _ alloc _ live _ samples _ blocks < <(expect "$t" totals)
  # Each sample's values are rounded to integers: n samples, n/2 at most.
  if close_to "$as" "$alloc" "$n" && close_to "$is" "$live" "$n"; then ok
  else bad "pprof $name: alloc_space $as inuse_space $is, the dump says $alloc and $live"; fi
  # Each sampled block stands for at least one block.
  if awk -v o="$ao" -v io="$io" -v b="$blocks" -v n="$n" 'BEGIN {exit !(o >= b - n && io <= o + n)}'; then ok
  else bad "pprof $name: alloc_objects $ao inuse_objects $io for $blocks sampled blocks"; fi
done

# The ASan+UBSan build writes the same profile, byte for byte once unzipped.
if [ -x "$asan" ]; then
  for t in "$tmp/leak2.ctf" "$tmp/names.ctf" "$fx/listmap-1e-6.ctf"; do
    "$tool" merge "$t" "$tmp/random.ctf" -o "$tmp/r.pb.gz" 2>/dev/null
    if "$asan" merge "$t" "$tmp/random.ctf" -o "$tmp/a.pb.gz" 2>"$tmp/err" && cmp -s <(zcat "$tmp/r.pb.gz") <(zcat "$tmp/a.pb.gz"); then ok
    else bad "$asan merge $(basename "$t") random.ctf: $(head -3 "$tmp/err")"; fi
  done
fi

if command -v go >/dev/null; then
  "$tool" pprof "$tmp/leak2.ctf" -o "$tmp/leak2.pb.gz"
  top_fn=$(expect "$tmp/leak2.ctf" folded | sort -t' ' -k2 | awk '{v = $NF; if (v > best) {best = v; line = $0}} END {n = split(line, f, ";"); sub(/ \(.*/, "", f[n]); print f[n]}')
  if go tool pprof -top "$tmp/leak2.pb.gz" 2>"$tmp/err" >"$tmp/top" && grep -q "Type: alloc_space" "$tmp/top" &&
     awk -v f="$top_fn" '$NF == f {found = 1} END {exit !found}' "$tmp/top"; then ok
  else bad "go tool pprof -top: no line for $top_fn: $(head -3 "$tmp/err")"; fi
  if go tool pprof -traces -sample_index=inuse_space "$tmp/leak2.pb.gz" 2>"$tmp/err" >"$tmp/traces" &&
     grep -q "^-----------+" "$tmp/traces" && grep -q "<top>" "$tmp/traces"; then ok
  else bad "go tool pprof -traces: $(head -3 "$tmp/err")"; fi
  # The source views (issue 34): with ./vm at its recorded path, -weblist and
  # -list (what -http's Source view shows) list leaky_cache.mn's lines; the
  # mapping is a virtual "[vm]" that pprof does not try to disassemble.
  if go tool pprof -raw "$tmp/leak2.pb.gz" 2>/dev/null | grep -A1 '^Mappings' | grep -qF ' [vm] ' &&
     [ -x "$(sed -n 's/^executable *//p' <("$tool" info "$tmp/leak2.ctf"))" ]; then ok
  else bad "pprof: the mapping is not the virtual [vm], or the trace's executable is not at its path"; fi
  if go tool pprof -weblist=. -output="$tmp/web.html" "$tmp/leak2.pb.gz" >/dev/null 2>"$tmp/err" &&
     grep -q 'fn render(id)' "$tmp/web.html"; then ok
  else bad "go tool pprof -weblist=. on a profile of ./vm: $(grep -m1 -E 'panic|error' "$tmp/err")"; fi
  if go tool pprof -list='^render$' "$tmp/leak2.pb.gz" 2>"$tmp/err" >"$tmp/list" &&
     grep -q '^ROUTINE =* render in .*leaky_cache.mn' "$tmp/list" && grep -qE '^ +[0-9.]+[kMG]?B .* 3:fn render' "$tmp/list"; then ok
  else bad "go tool pprof -list=render: no source line of leaky_cache.mn: $(head -3 "$tmp/err")"; fi
  # A trace merged with itself: every value doubles, stack by stack.
  "$tool" merge "$tmp/leak2.ctf" "$tmp/leak2.ctf" -o "$tmp/twice.pb.gz"
  go tool pprof -raw "$tmp/leak2.pb.gz" | awk '/^Samples:/ {on = 1; next} /^Locations/ {on = 0} on && /:/' >"$tmp/once.raw"
  go tool pprof -raw "$tmp/twice.pb.gz" | awk '/^Samples:/ {on = 1; next} /^Locations/ {on = 0} on && /:/' >"$tmp/twice.raw"
  if [ "$(wc -l <"$tmp/once.raw")" -gt 2 ] && paste -d'|' "$tmp/once.raw" "$tmp/twice.raw" |
     awk -F'|' '{split($1, a, ":"); split($2, b, ":"); if (a[2] != b[2]) exit 1;
                 n = split(a[1], x, " "); split(b[1], y, " "); for (i = 1; i <= n; i++) if (y[i] - 2 * x[i] > 1 || 2 * x[i] - y[i] > 1) exit 1}'; then ok
  else bad "merge A A: not twice A's values on the same stacks"; fi
  # Two rates: each unbiased, then summed; stacks matched by location.
  "$tool" merge "$tmp/leak2.ctf" "$tmp/leak3.ctf" -o "$tmp/rates.pb.gz"
  read -r _ as2 _ is2 n2 < <(raw_sums "$tmp/leak2.pb.gz")
  "$tool" pprof "$tmp/leak3.ctf" -o "$tmp/leak3.pb.gz"
  read -r _ as3 _ is3 n3 < <(raw_sums "$tmp/leak3.pb.gz")
  read -r _ asm _ ism nm < <(raw_sums "$tmp/rates.pb.gz")
  if close_to "$asm" "$((as2 + as3))" "$((n2 + n3))" && close_to "$ism" "$((is2 + is3))" "$((n2 + n3))" &&
     [ "$nm" -lt $((n2 + n3)) ] && [ "$nm" -ge "$n2" ]; then ok
  else bad "merge at rates 1e-2 and 1e-3: alloc_space $asm inuse $ism over $nm stacks; apart $as2+$as3, $is2+$is3 over $n2+$n3"; fi
  # v2 and v3 fixtures hold the same events: merged, every stack doubles.
  "$tool" merge "$fx/bintrees-1e-5.ctf" "$fx/bintrees-1e-5.v3.ctf" -o "$tmp/v23.pb.gz"
  "$tool" pprof "$fx/bintrees-1e-5.ctf" -o "$tmp/v2.pb.gz"
  read -r _ asv _ _ nv < <(raw_sums "$tmp/v2.pb.gz")
  read -r _ asb _ _ nb < <(raw_sums "$tmp/v23.pb.gz")
  if [ "$nv" = "$nb" ] && close_to "$asb" "$((2 * asv))" "$nb"; then ok
  else bad "merge of the v2 and v3 fixtures: $nb stacks, alloc_space $asb; one of them: $nv, $asv"; fi
  # Truncated: PARTIAL in the comments, exit 1.
  "$tool" pprof "$tmp/cut.ctf" -o "$tmp/cut.pb.gz" 2>"$tmp/err"
  status=$?
  if [ "$status" = 1 ] && go tool pprof -raw "$tmp/cut.pb.gz" 2>/dev/null | grep -q "PARTIAL" &&
     grep -q "cut.ctf: byte" "$tmp/err"; then ok
  else bad "pprof of a truncated trace: status $status, no PARTIAL comment"; fi
else
  skip "go absent (Debian: golang-go): profiles not read back by go tool pprof"
fi

# ---------------------------------------------------------------- timeline

for t in "$tmp/leak2.ctf" "$fx/bintrees-1e-5.ctf" "$tmp/mixed.ctf" "$tmp/random.ctf" "$tmp/one.ctf"; do
  name=$(basename "$t")
  for tl in "${tools[@]}"; do
    if ! "$tl" timeline --top 3 "$t" >"$tmp/t.csv" 2>"$tmp/err"; then bad "$tl timeline $name: $(head -2 "$tmp/err")"; continue; fi
    tail -n +2 "$tmp/t.csv" | cut -d, -f1 >"$tmp/t.times"
    expect "$t" live_at "$tmp/t.times" >"$tmp/t.expect"
    if tail -n +2 "$tmp/t.csv" | awk -F, '{print $1, $NF}' | cmp -s - "$tmp/t.expect" && [ -s "$tmp/t.expect" ]; then ok
    else bad "$tl timeline $name: the total differs from the live bytes the dump gives: $(tail -n +2 "$tmp/t.csv" | awk -F, '{print $1, $NF}' | diff - "$tmp/t.expect" | head -3)"; fi
  done
  # Bands sum to the total; at most 3 top columns, then rest and total.
  if awk -F'","|,' 'NR == 1 {next} {s = 0; for (i = 2; i < NF; i++) s += $i; if (s - $NF > NF || $NF - s > NF) exit 1}' "$tmp/t.csv" &&
     [ "$(head -1 "$tmp/t.csv" | grep -o '"' | wc -l)" -le 8 ]; then ok
  else bad "timeline $name: bands do not sum to the total"; fi
done
rows=$("$tool" timeline --points 50 "$tmp/leak2.ctf" | wc -l)
if [ "$rows" -ge 26 ] && [ "$rows" -le 52 ]; then ok; else bad "timeline --points 50 printed $rows rows (25 to 51 points expected)"; fi
if [ "$("$tool" timeline --top 0 "$tmp/leak2.ctf" | head -1)" = 'time_s,"rest",total' ]; then ok
else bad "timeline --top 0: header $("$tool" timeline --top 0 "$tmp/leak2.ctf" | head -1)"; fi
a=$("$tool" timeline --by function "$tmp/leak2.ctf" | tail -1 | awk -F, '{print $NF}')
b=$("$tool" timeline --by file "$tmp/leak2.ctf" | tail -1 | awk -F, '{print $NF}')
if [ -n "$a" ] && [ "$a" = "$b" ]; then ok; else bad "timeline --by function and --by file end at $a and $b"; fi
"$tool" timeline "$tmp/cut.ctf" >"$tmp/t.csv" 2>"$tmp/err"
status=$?
if [ "$status" = 1 ] && tail -1 "$tmp/t.csv" | grep -q "^# PARTIAL" && grep -q "byte" "$tmp/err"; then ok
else bad "timeline of a truncated trace: status $status, last line $(tail -1 "$tmp/t.csv")"; fi
if command -v gnuplot >/dev/null; then
  if "$tool" timeline "$tmp/leak2.ctf" -o "$tmp/t.png" 2>"$tmp/err" &&
     [ "$(head -c 4 "$tmp/t.png" | od -An -tx1 | tr -d ' ')" = 89504e47 ]; then ok
  else bad "timeline -o t.png: $(head -3 "$tmp/err")"; fi
  if "$tool" timeline "$tmp/cut.ctf" -o "$tmp/t.svg" 2>/dev/null; [ $? = 1 ] && grep -q "PARTIAL" "$tmp/t.svg" &&
     grep -q "render" "$tmp/t.svg"; then ok
  else bad "timeline -o t.svg of a truncated trace: no PARTIAL title or no band names"; fi
  if "$tool" timeline "$tmp/one.ctf" -o "$tmp/one.png" 2>"$tmp/err"; then ok; else bad "timeline of one event: $(head -2 "$tmp/err")"; fi
  "$tool" timeline "$tmp/empty.ctf" -o "$tmp/empty.png" 2>"$tmp/err"
  if [ $? = 1 ] && grep -q "nothing to draw" "$tmp/err"; then ok; else bad "timeline of an empty trace: $(head -2 "$tmp/err")"; fi
else
  skip "gnuplot absent (Debian: gnuplot-nox): timeline charts not drawn"
fi

# ---------------------------------------------------------------- bad input and usage

for cmd in "flamegraph" "pprof -o $tmp/x.pb.gz" "merge -o $tmp/x.pb.gz" "timeline"; do
  # shellcheck disable=SC2086
  "$tool" $cmd "$tmp/noise.ctf" >/dev/null 2>"$tmp/err"
  status=$?
  if [ "$status" = 1 ] && grep -q "noise.ctf" "$tmp/err"; then ok
  else bad "$cmd on a file that is no trace: status $status: $(head -1 "$tmp/err")"; fi
  # shellcheck disable=SC2086
  "$tool" $cmd "$tmp/absent.ctf" >/dev/null 2>"$tmp/err"
  status=$?
  if [ "$status" = 1 ] && grep -q "absent.ctf" "$tmp/err"; then ok
  else bad "$cmd on a missing file: status $status: $(head -1 "$tmp/err")"; fi
done
[ ! -e "$tmp/x.pb.gz" ] && ok || bad "pprof left an output for an unreadable trace"
for args in "flamegraph" "flamegraph --width x $tmp/one.ctf" "pprof" "merge -o $tmp/x.pb.gz" \
            "merge - - -o $tmp/x.pb.gz" "timeline -o $tmp/x.pdf $tmp/one.ctf" "timeline --by stack $tmp/one.ctf" \
            "timeline --points 2 $tmp/one.ctf" "flamegraph --bogus $tmp/one.ctf"; do
  # shellcheck disable=SC2086
  "$tool" $args >/dev/null 2>"$tmp/err"
  status=$?
  if [ "$status" = 2 ] && grep -q "^usage: memtrace" "$tmp/err"; then ok
  else bad "memtrace $args: status $status, not a usage error"; fi
done
# Outputs that cannot be created: a message naming them, exit 1, no image on stderr.
for args in "timeline -o $tmp/no/x.png" "flamegraph -o $tmp/no/x.svg" "pprof -o $tmp/no/x.pb.gz"; do
  # shellcheck disable=SC2086
  "$tool" $args "$tmp/leak2.ctf" >/dev/null 2>"$tmp/err"
  status=$?
  if [ "$status" = 1 ] && grep -q "$tmp/no/x" "$tmp/err" && [ "$(wc -c <"$tmp/err")" -lt 2000 ]; then ok
  else bad "memtrace $args (no such directory): status $status, $(head -c 200 "$tmp/err")"; fi
done
# A profile on stdout from a trace on stdin.
if "$tool" pprof - -o - <"$tmp/leak2.ctf" >"$tmp/stdout.pb.gz" && zcat "$tmp/stdout.pb.gz" >"$tmp/stdout.pb" &&
   grep -aq "memtrace trace -: rate 0.01" "$tmp/stdout.pb"; then ok
else bad "pprof - -o -: no gzipped profile of the trace on stdin"; fi
# stdin works where a file does.
if "$tool" flamegraph - <"$tmp/leak2.ctf" | LC_ALL=C sort | cmp -s - <("$tool" flamegraph "$tmp/leak2.ctf" | LC_ALL=C sort); then ok
else bad "flamegraph - (stdin) differs from flamegraph FILE"; fi

suite_end
