#!/usr/bin/env bash
# trace_report.sh - `memtrace report`: the HTML page of a trace, on a trace of
# ./vm (examples/leaky_cache.mn, which leaks at its line 3), memtrace's OCaml
# fixture bintrees-1e-5.ctf, a trace whose file names hold markup (a Minnow
# script under a directory named a&b"c'd<script>alert(1)< and called
# script>.mn, so its path holds "<script>alert(1)</script>"), an empty trace
# and a truncated one.
#   1. The HTML (no browser needed): every section; the first row of the top
#      sites and the Kept by section's leaks are those `memtrace top` and
#      `memtrace leaks` print; inline SVGs (the chart, the flame graph); no URL but the
#      SVG namespace, no src= and no href= but to the page's own anchors;
#      names escaped; the same page with no gnuplot on PATH and from the
#      ASan+UBSan build; partial traces (banner with the byte offset, exit
#      1), unwritable -o, unreadable traces, bad usage.
#   2. Headless Chromium, where installed (otherwise skipped with a message,
#      not counted): the rendered DOM holds the sections, the SVGs, the top
#      site and the leaking line, and one script element only on the hostile
#      page; the flame graph's script zooms and resets inside the page
#      (tests/trace/flame_zoom_check.svgfrag); a screenshot is a PNG of the
#      requested size.
# Last line: "N passed, N failed".
set -u
cd "$(dirname "$0")/../.." || exit 2

tool=tools/memtrace
asan=build/asan/memtrace
. tests/suites/lib.sh
suite_init trace_report
require_built "$tool" ./vm build/release/tests/trace_synth
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export MEMTRACE_PROGRESS=0 MINNOW_SEED=20250101

# ---------------------------------------------------------------- traces

./vm --minor-words 32768 --memtrace "$tmp/leak.ctf" --memtrace-rate 1e-3 examples/leaky_cache.mn >/dev/null
fixture=tests/fixtures/memtrace/bintrees-1e-5.ctf
hostile_dir="$tmp/a&b\"c'd<script>alert(1)<"
mkdir -p "$hostile_dir"
printf 'fn pair(n) { [n, n + 1] }\nvar xs = []\nfor i in 0..20000 { xs = pair(i) }\nprintln(str(xs))\n' \
  >"$hostile_dir/script>.mn"
./vm --memtrace "$tmp/hostile.ctf" --memtrace-rate 1e-2 "$hostile_dir/script>.mn" >/dev/null
build/release/tests/trace_synth --scenario random --events 0 "$tmp/empty.ctf" /dev/null
size=$(wc -c <"$tmp/leak.ctf")
head -c $((size * 2 / 3)) "$tmp/leak.ctf" >"$tmp/cut.ctf"
head -c 5000 /dev/urandom >"$tmp/noise.ctf"

# The escaping the page must use (text_put_xml): & < > " ' as references.
escape() { sed -e 's/&/\&amp;/g' -e 's/</\&lt;/g' -e 's/>/\&gt;/g' -e 's/"/\&quot;/g' -e "s/'/\&#39;/g"; }

# ---------------------------------------------------------------- 1. the HTML

sections=(answer summary top-sites live-heap flame-graph lifetimes kept-by)
for name in leak fixture hostile empty; do
  t="$tmp/$name.ctf"
  [ "$name" = fixture ] && t=$fixture
  html="$tmp/$name.html"
  "$tool" report "$t" -o "$html" 2>"$tmp/err"
  status=$?
  check "report $name: exit 0, got $status: $(head -c 300 "$tmp/err")" '[ "$status" = 0 ] && [ ! -s "$tmp/err" ]'
  check "report $name: a whole HTML document" \
    '[ "$(head -1 "$html")" = "<!DOCTYPE html>" ] && [ "$(tail -1 "$html")" = "</html>" ]'
  for s in "${sections[@]}"; do
    check "report $name: no section $s" 'grep -q "<section id=\"$s\">" "$html"'
  done
  urls=$(grep -oE "(https?|ftp)://[^\"' <>)]*" "$html" | grep -vx 'http://www.w3.org/2000/svg' | sort -u | head -3)
  check "report $name: refers to URLs other than the SVG namespace: $urls" '[ -z "$urls" ]'
  links=$(grep -oE "(src|href|xlink:href|action|srcset)=\"[^\"#][^\"]*\"|url\\(|@import" "$html" | sort -u | head -3)
  check "report $name: loads something: $links" '[ -z "$links" ]'
  check "report $name: an inline SVG chart and a flame graph" \
    'grep -q "<svg class=\"chart\"" "$html" && grep -q "<g id=\"frames\"" "$html"'
  check "report $name: exactly one line </svg> (the flame graph's; the zoom check goes before it)" \
    '[ "$(grep -c "^</svg>$" "$html")" = 1 ]'
  check "report $name: two script elements, the flame graph's and the tables'" '[ "$(grep -c "<script" "$html")" = 2 ]'
  check "report $name: no name broken inside a token (no word-break: break-all)" '! grep -q "break-all" "$html"'
done

# The top site: the first row of the table is top's first row, allocated bytes included.
"$tool" top -n 1 "$tmp/leak.ctf" >"$tmp/top.txt"
top_site=$(awk '$1 == "1" {for (i = 11; i <= NF; i++) printf "%s%s", $i, (i < NF ? " " : "")}' "$tmp/top.txt")
top_bytes=$(awk '$1 == "1" {print $2, $3}' "$tmp/top.txt")
first_row=$(grep -A2 'id="top-sites-table"' "$tmp/leak.html" | tail -1)
check "report leak: first top-sites row is '$top_bytes ... $top_site': $first_row" \
  '[ -n "$top_site" ] && [[ "$first_row" == "<tr><td>1</td><td>$top_bytes</td>"*"<summary>$(printf "%s" "$top_site" | escape)</summary>"* ]]'
check "report leak: the top site is render line 3 (leaky_cache.mn's page), got '$top_site'" \
  '[[ "$top_site" == "render examples/leaky_cache.mn:3:"* ]]'
# The summary's total is top's.
total=$("$tool" top -n 1 "$tmp/leak.ctf" | sed -n 's/^total \([^ ]* [^ ]*\) \[\(.*\)\] from.*/\1 [\2]/p')
check "report leak: summary's allocated is top's total '$total'" \
  'grep -q "<th>allocated (estimated)</th><td>${total%% \[*} <span class=\"iv\">\[${total#*\[}</span>" "$tmp/leak.html"'

# Kept by: the leaks of `memtrace leaks`, in its order, first; the cache first,
# render's line 3 among its sites.
"$tool" leaks "$tmp/leak.ctf" | sed -n 's/^ *[0-9]*\. Kept by //p' >"$tmp/leaks.txt"
grep -o '<li class="leak"><div class="holder">[^<]*</div>' "$tmp/leak.html" | sed 's/<[^>]*>//g' >"$tmp/leaks.html.txt"
check "report leak: Kept by's leaks as 'memtrace leaks' names them: $(diff "$tmp/leaks.txt" "$tmp/leaks.html.txt" | head -3)" \
  '[ -s "$tmp/leaks.txt" ] && cmp -s <(escape <"$tmp/leaks.txt") "$tmp/leaks.html.txt"'
check "report leak: the first holder is the cache, render at leaky_cache.mn line 3 under it: $(head -1 "$tmp/leaks.html.txt")" \
  '[ "$(head -1 "$tmp/leaks.html.txt")" = "global cache -&gt; Hashtbl" ] &&
   grep -q "<span class=\"leaksite\">render examples/leaky_cache.mn:3:" "$tmp/leak.html"'
check "report leak: the leak's callers (handle line 7)" 'grep -q "<li>called from handle examples/leaky_cache.mn:7:" "$tmp/leak.html"'
# The answer first: the section before the summary, its verdict the count of
# leaks `memtrace leaks` finds, each holder as Kept by names it (the first
# five), with the site of most of what it keeps (render, line 3, here).
for name in leak fixture empty; do
  check "report $name: the answer is the first section" \
    '[ "$(grep -o "<section id=\"[a-z-]*\">" "$tmp/$name.html" | head -1)" = "<section id=\"answer\">" ]'
done
n_leaks=$(wc -l <"$tmp/leaks.txt")
check "report leak: the answer says $n_leaks leak(s), as leaks does: $(grep -o 'id="answer-verdict">[^<]*' "$tmp/leak.html")" \
  'grep -q "id=\"answer-verdict\">$n_leaks leaks\? found" "$tmp/leak.html"'
sed -n '/<section id="answer">/,/<\/section>/p' "$tmp/leak.html" | grep -o '<li><span class="holder">[^<]*</span>' |
  sed 's/<[^>]*>//g' >"$tmp/answer.txt"
check "report leak: the answer's holders are Kept by's leaks, in order: $(head -2 "$tmp/answer.txt" | tr '\n' '|')" \
  'cmp -s "$tmp/answer.txt" <(head -5 "$tmp/leaks.html.txt")'
check "report leak: the answer names render line 3 for the cache's bytes" \
  'sed -n "/<section id=\"answer\">/,/<\/section>/p" "$tmp/leak.html" | grep -q "most of it allocated at <span class=\"leaksite\">render examples/leaky_cache.mn:3:"'
check "report leak: the answer's largest allocator is top's first site" \
  'grep -q "id=\"answer-top-site\">Allocates most: <span class=\"leaksite\">$(printf "%s" "$top_site" | escape)</span>" "$tmp/leak.html"'
check "report fixture: the answer cannot judge, as Kept by" \
  'grep -q "id=\"answer-verdict\">Leaks: cannot judge: " "$tmp/fixture.html"'
# The fixture (OCaml's: no end state) and the empty trace: Kept by cannot judge, as leaks says.
check "report fixture: Kept by cannot judge, as leaks says" \
  '"$tool" leaks "$fixture" | grep -q "^cannot judge" && grep -q "id=\"cannot-judge\">Cannot judge: " "$tmp/fixture.html"'
check "report empty: Kept by cannot judge, no samples" \
  'grep -q "id=\"cannot-judge\"" "$tmp/empty.html" && grep -q "(no samples)" "$tmp/empty.html"'
check "report fixture: names the OCaml program" 'grep -q "<title>memtrace report: bintrees</title>" "$tmp/fixture.html"'

# The live floors (live_series.h part 4): one dot a major collection the
# trace shows (the summary's count), none above the peak; a trace without one
# says so.
./vm --memtrace "$tmp/sb.ctf" --memtrace-rate 1e-3 bench/programs/string_build.mn 20000 20 >/dev/null
"$tool" report "$tmp/sb.ctf" -o "$tmp/sb.html"
majors=$(grep -o 'major collections seen</th><td>[0-9]*' "$tmp/sb.html" | grep -o '[0-9]*$')
floors=$(sed -n '/<section id="live-heap">/,/<\/section>/p' "$tmp/sb.html" | grep -c '<circle ')
check "report string_build: one live floor a major collection ($floors dots, $majors collections)" \
  '[ "${majors:-0}" -ge 3 ] && [ "$floors" = "$majors" ] && grep -q "id=\"live-floors\">The black dashed line joins the live heap right after each of $majors major collections" "$tmp/sb.html"'
python3 - "$tmp/sb.html" >"$tmp/floors.txt" <<'PY'
import re, sys
page = open(sys.argv[1]).read()
units = {"B": 1, "KiB": 1024, "MiB": 1024 ** 2, "GiB": 1024 ** 3}
def b(text):
    n, u = text.split()
    return float(n) * units[u]
floors = [b(m) for m in re.findall(r"<title>live after each major collection: ([0-9.]+ [KMG]?i?B)</title>", page)]
peak = b(re.search(r"peak live \(estimated\)</th><td>([0-9.]+ [KMG]?i?B)", page).group(1))
print(len(floors), sum(1 for f in floors if f > peak * 1.001))
PY
check "report string_build: no live floor above the peak ($(cat "$tmp/floors.txt"): floors, above)" \
  '[ "$(cut -d" " -f2 "$tmp/floors.txt")" = 0 ] && [ "$(cut -d" " -f1 "$tmp/floors.txt")" = "$majors" ]'
check "report hostile: the live floors' note (none, or the dashed line)" 'grep -q "id=\"live-floors\">No major collection in the trace" "$tmp/hostile.html" || grep -q "id=\"live-floors\">The black dashed line" "$tmp/hostile.html"'

# Hostile names: escaped wherever they appear, never markup.
hostile_name=$(printf '%s' "a&b\"c'd<script>alert(1)</script>.mn" | escape)
check "report hostile: raw <script>alert in the page" '! grep -q "<script>alert" "$tmp/hostile.html"'
check "report hostile: the escaped file name is in the top sites, the chart's legend and the flame graph" \
  '[ "$(grep -cF "$hostile_name" "$tmp/hostile.html")" -ge 4 ] && grep -qF "<summary>pair $tmp/$(printf "%s" "${hostile_dir#"$tmp/"}" | escape)/script&gt;.mn:1:" "$tmp/hostile.html"'

# No gnuplot needed: the same page with an empty PATH; the ASan+UBSan build writes the same bytes.
env PATH=/nonexistent "$tool" report "$tmp/leak.ctf" -o "$tmp/nopath.html" 2>"$tmp/err"
check "report without gnuplot (PATH empty): a different page or an error: $(head -c 200 "$tmp/err")" \
  'cmp -s "$tmp/nopath.html" "$tmp/leak.html"'
if [ -x "$asan" ]; then
  for name in leak hostile; do
    "$asan" report "$tmp/$name.ctf" -o "$tmp/asan.html" 2>"$tmp/err"
    check "ASan build's report $name: $(head -c 300 "$tmp/err")" '[ ! -s "$tmp/err" ] && cmp -s "$tmp/asan.html" "$tmp/$name.html"'
  done
fi
# stdin and stdout.
"$tool" report --retain "$tmp/leak.ctf.retain" - <"$tmp/leak.ctf" >"$tmp/stdin.html" 2>"$tmp/err"
check "report - (stdin) > page: $(head -c 200 "$tmp/err")" \
  '[ "$(tail -1 "$tmp/stdin.html")" = "</html>" ] && cmp -s <(grep -v "trace" "$tmp/stdin.html") <(grep -v "trace" "$tmp/leak.html")'

# Partial: the page up to the damage, a banner with the byte offset stderr names, exit 1.
"$tool" report "$tmp/cut.ctf" -o "$tmp/cut.html" 2>"$tmp/err"
status=$?
offset=$(sed -n 's/.*cut\.ctf: byte \([0-9]*\):.*/\1/p' "$tmp/err")
check "report of a truncated trace: exit 1 and the offset on stderr, got $status: $(head -c 200 "$tmp/err")" \
  '[ "$status" = 1 ] && [ -n "$offset" ]'
check "report of a truncated trace: a PARTIAL banner naming byte $offset" \
  'grep -q "<div class=\"partial\" id=\"partial\" role=\"alert\">PARTIAL: the trace stops at damage (byte $offset: " "$tmp/cut.html" && [ "$(tail -1 "$tmp/cut.html")" = "</html>" ]'
check "report of a complete trace: no PARTIAL banner" '! grep -q "class=\"partial\"" "$tmp/leak.html"'

# Outputs that cannot be written; traces that cannot be read; bad usage.
"$tool" report "$tmp/leak.ctf" -o "$tmp/no/such/dir/r.html" >"$tmp/out" 2>"$tmp/err"
status=$?
check "report -o into a missing directory: exit 1 and a message naming it, got $status: $(head -c 200 "$tmp/err")" \
  '[ "$status" = 1 ] && grep -q "^memtrace report: cannot create $tmp/no/such/dir/r.html: " "$tmp/err" && [ ! -s "$tmp/out" ]'
if [ -w /dev/full ]; then
  "$tool" report "$tmp/leak.ctf" -o /dev/full 2>"$tmp/err"
  status=$?
  check "report -o /dev/full: exit 1, 'error writing', got $status: $(head -c 200 "$tmp/err")" \
    '[ "$status" = 1 ] && grep -q "error writing /dev/full" "$tmp/err"'
fi
for bad_trace in noise absent; do
  "$tool" report "$tmp/$bad_trace.ctf" -o "$tmp/$bad_trace.html" 2>"$tmp/err"
  status=$?
  check "report of $bad_trace.ctf: exit 1, a message naming it, no page left; got $status: $(head -c 200 "$tmp/err")" \
    '[ "$status" = 1 ] && grep -q "$bad_trace.ctf" "$tmp/err" && [ ! -e "$tmp/$bad_trace.html" ]'
done
for args in "" "--bogus $tmp/leak.ctf" "-n x $tmp/leak.ctf" "--top 1000 $tmp/leak.ctf" "$tmp/leak.ctf $tmp/leak.ctf" "$tmp/leak.ctf -o"; do
  # shellcheck disable=SC2086
  "$tool" report $args >/dev/null 2>"$tmp/err"
  status=$?
  check "memtrace report $args: status $status, not a usage error" '[ "$status" = 2 ] && grep -q "^usage: memtrace report" "$tmp/err"'
done
check "memtrace report --help" '"$tool" report --help | grep -q "^usage: memtrace report" && "$tool" --help | grep -q "^  report "'

# ---------------------------------------------------------------- 2. Chromium

chromium_bin=$(command -v chromium || command -v chromium-browser || true)
chromium() {  # ARGS... (a profile of its own, no network, its noise dropped)
  timeout 120 "$chromium_bin" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync --hide-scrollbars \
    --user-data-dir="$tmp/chromium" "$@" 2>/dev/null
}
if [ -n "$chromium_bin" ]; then
  # The zoom check goes into the leak page's flame graph, before its </svg> line.
  # The tables' check before </body>, after the page's scripts.
  sed -e '/^<\/svg>$/e cat tests/trace/flame_zoom_check.svgfrag' -e '/^<\/body>$/e cat tests/trace/table_sort_check.html' \
    "$tmp/leak.html" >"$tmp/z-leak.html"
  for name in z-leak fixture hostile; do
    chromium --dump-dom "file://$tmp/$name.html" >"$tmp/$name.dom"
    check "Chromium on $name.html: no DOM" 'grep -q "</html>" "$tmp/$name.dom"'
    for s in "${sections[@]}"; do
      check "Chromium on $name.html: no section $s in the DOM" 'grep -q "<section id=\"$s\">" "$tmp/$name.dom"'
    done
    check "Chromium on $name.html: the chart's and the flame graph's SVG in the DOM" \
      '[ "$(grep -o "<svg " "$tmp/$name.dom" | wc -l)" -ge 2 ] && grep -q "<g class=\"f\" data-x" "$tmp/$name.dom"'
  done
  verdict=$(grep -o 'data-test="[^"]*"' "$tmp/z-leak.dom")
  check "Chromium: the flame graph zooms and resets inside the page: ${verdict:-no verdict (its script did not run)}" \
    '[[ "$verdict" == "data-test=\"PASS"* ]]'
  verdict=$(grep -o 'data-table-test="[^"]*"' "$tmp/z-leak.dom")
  check "Chromium: the top sites table sorts both ways and filters: ${verdict:-no verdict (its script did not run)}" \
    '[[ "$verdict" == "data-table-test=\"PASS"* ]]'
  check "Chromium on leak.html: the top site and the leaking line in the DOM" \
    'grep -qF "<summary>$(printf "%s" "$top_site" | escape)</summary>" "$tmp/z-leak.dom" && grep -q "<span class=\"leaksite\">render examples/leaky_cache.mn:3:" "$tmp/z-leak.dom"'
  check "Chromium on hostile.html: two script elements (the flame graph's, the tables'), the name as text" \
    '[ "$(grep -o "<script" "$tmp/hostile.dom" | wc -l)" = 2 ] && grep -qF "alert(1)&lt;/script&gt;.mn" "$tmp/hostile.dom"'
  # A screenshot: a PNG of the size asked (IHDR: width and height, big-endian, at bytes 16-23).
  chromium --screenshot="$tmp/shot.png" --window-size=1280,1600 "file://$tmp/leak.html" >/dev/null
  sig=$(head -c 8 "$tmp/shot.png" 2>/dev/null | od -An -tx1 | tr -d ' \n')
  dims=$(od -An -tu1 -j16 -N8 "$tmp/shot.png" 2>/dev/null | awk '{print $1*16777216 + $2*65536 + $3*256 + $4 "x" $5*16777216 + $6*65536 + $7*256 + $8}')
  check "Chromium screenshot: a 1280x1600 PNG, got signature $sig, $dims, $(wc -c <"$tmp/shot.png" 2>/dev/null) bytes" \
    '[ "$sig" = 89504e470d0a1a0a ] && [ "$dims" = 1280x1600 ] && [ "$(wc -c <"$tmp/shot.png")" -gt 20000 ]'
else
  skip "chromium absent (Debian: chromium): the pages are not rendered; the HTML checks above ran"
fi

suite_end
