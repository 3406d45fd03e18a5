#!/usr/bin/env bash
# hostile_tools.sh - issue 23's classes 1, 5 and 6 on tools/memtrace (release
# and ASan builds) and ./vm:
#  1. no output destroys an input: -o naming a trace (the same name, a
#     symbolic or hard link, stdin) or its end state (T.ctf.retain, --retain
#     FILE), stdout appended to a trace, ./vm
#     --memtrace naming the script, a module or FILE.retain, are refused
#     and leave the input intact; a run that fails leaves an older output as
#     it was, and no temporary behind;
#  5. every output is what it claims to be on a trace whose names hold
#     invalid UTF-8, control characters, quotes, <, &, ;, commas, spaces and
#     newlines: JSON (python3 json), SVG (xml.etree), HTML (html.parser, tags
#     balanced), CSV (python csv: the header's field count on every row),
#     folded stacks (one "frames count" per line), pprof (go tool pprof -raw);
#  3. work bounded by the trace: bench/hostile_traces.c's crafted traces
#     stop at the node limit with its message, the SVG at its size limits,
#     under 500 MB; whole-stack outputs (folded, flamegraph and top --json)
#     at --max-frames, saying what they left out; sampled words past 2^64
#     saturate;
#  6. options: every command's options against its help; options given
#     twice, options without the option they modify, numbers in odd forms are
#     refused with status 2; ./vm's command line likewise, and its typos
#     answered with the nearest option, --opt=value, --version and --.
cd "$(dirname "$0")/../.." || exit 2
. tests/suites/lib.sh
suite_init hostile_tools
require_built tools/memtrace build/asan/memtrace ./vm build/release/tests/trace_synth
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fixture=tests/fixtures/memtrace/bintrees-1e-5.ctf

# ---------------------------------------------------------------- class 1
# refused CMD...: status 2, the trace t.ctf intact
class1_tool() {
  local tool=$1 d="$tmp/c1" c
  rm -rf "$d" && mkdir -p "$d"
  cp "$fixture" "$d/t.ctf"
  ln -s t.ctf "$d/sym.ctf"
  ln "$d/t.ctf" "$d/hard.ctf"
  for c in dump info top lifetimes leaks timeline flamegraph pprof report; do
    for o in t.ctf sym.ctf hard.ctf ./t.ctf; do
      (cd "$d" && "$OLDPWD/$tool" $c t.ctf -o "$o" > /dev/null 2> err); s=$?
      check "$tool $c -o $o (the input): status 2, got $s" '[ $s -eq 2 ] && grep -q "is the input" "$d/err"'
      check "$tool $c -o $o: the trace is intact" 'cmp -s "$fixture" "$d/t.ctf"'
    done
    "$tool" $c - -o "$d/t.ctf" < "$d/t.ctf" > /dev/null 2> "$d/err"; s=$?
    check "$tool $c - -o the file on stdin: status 2, got $s" '[ $s -eq 2 ] && cmp -s "$fixture" "$d/t.ctf"'
    "$tool" $c "$d/t.ctf" >> "$d/hard.ctf" 2> "$d/err"; s=$?
    check "$tool $c t.ctf >> the trace: status 2, got $s" '[ $s -eq 2 ] && cmp -s "$fixture" "$d/t.ctf"'
  done
  "$tool" timeline "$d/t.ctf" -o "$d/chart.csv" > "$d/chart.csv" 2> "$d/err"; s=$?
  check "$tool timeline -o X > X (the output is stdout's file): status 2, got $s" '[ $s -eq 2 ] && grep -q "also standard output" "$d/err"'
  for c in merge diff; do
    "$tool" $c "$fixture" "$d/t.ctf" -o "$d/sym.ctf" > /dev/null 2> "$d/err"; s=$?
    check "$tool $c A B -o B: status 2, got $s" '[ $s -eq 2 ] && cmp -s "$fixture" "$d/t.ctf"'
  done
  # the end state beside a trace is an input too: T.ctf.retain (read or not), --retain FILE
  printf 'MNRETAIN end state\n' > "$d/t.ctf.retain"
  cp "$d/t.ctf.retain" "$d/keep.retain"
  ln "$d/t.ctf.retain" "$d/hard.retain"
  for c in dump info top leaks paths timeline flamegraph pprof report merge; do
    for o in t.ctf.retain hard.retain; do
      (cd "$d" && "$OLDPWD/$tool" $c t.ctf -o "$o" > /dev/null 2> err); s=$?
      check "$tool $c t.ctf -o $o (its end state): status 2, got $s" \
        '[ $s -eq 2 ] && grep -q "the end state of the input t.ctf" "$d/err" && cmp -s "$d/keep.retain" "$d/t.ctf.retain"'
    done
  done
  "$tool" top "$d/t.ctf" >> "$d/t.ctf.retain" 2> "$d/err"; s=$?
  check "$tool top t.ctf >> t.ctf.retain: status 2, got $s" '[ $s -eq 2 ] && cmp -s "$d/keep.retain" "$d/t.ctf.retain"'
  for c in info leaks paths; do
    cp "$d/keep.retain" "$d/other.retain"
    "$tool" $c "$d/t.ctf" --retain "$d/other.retain" -o "$d/other.retain" > /dev/null 2> "$d/err"; s=$?
    check "$tool $c --retain F -o F: status 2, got $s" '[ $s -eq 2 ] && cmp -s "$d/keep.retain" "$d/other.retain"'
  done
  rm -f "$d/t.ctf.retain" "$d/hard.retain" "$d/keep.retain" "$d/other.retain"
  # a trace that cannot be read leaves an older output as it was, and no temporary
  printf 'junk' > "$d/bad.ctf"
  for c in "dump" "info" "top" "flamegraph" "flamegraph#.svg" "pprof" "report" "timeline#.csv" "merge"; do
    local ext=${c#*#}; [ "$ext" = "$c" ] && ext=; c=${c%%#*}
    printf 'old\n' > "$d/out$ext"
    "$tool" $c "$d/bad.ctf" -o "$d/out$ext" > /dev/null 2>&1
    check "$tool $c on junk: the older output out$ext kept" '[ "$(cat "$d/out$ext")" = old ]'
  done
  check "$tool: no temporary left" '! ls -A "$d" | grep -q "^\.memtrace-"'
  # a good run replaces it; an existing file keeps its mode, a new one gets the umask's
  chmod 600 "$d/out"
  "$tool" info "$d/t.ctf" -o "$d/out" > /dev/null 2>&1
  check "$tool info -o out: replaced, mode 600 kept" '[ "$(stat -c %a "$d/out")" = 600 ] && grep -q "^format" "$d/out"'
  (umask 022 && "$tool" pprof "$d/t.ctf" -o "$d/new.pb.gz")
  check "$tool pprof -o new: mode 644" '[ "$(stat -c %a "$d/new.pb.gz")" = 644 ]'
  ln -s out "$d/outlink"
  "$tool" top "$d/t.ctf" -o "$d/outlink" > /dev/null 2>&1
  check "$tool top -o a symbolic link: its target written, the link kept" \
    '[ -L "$d/outlink" ] && grep -q "^rank" "$d/out"'
  "$tool" top "$d/t.ctf" -o /dev/null > /dev/null 2>&1; s=$?
  check "$tool top -o /dev/null: written in place, status 0 (got $s)" '[ $s -eq 0 ] && [ -c /dev/null ]'
}
class1_tool tools/memtrace
class1_tool build/asan/memtrace

class1_vm() {
  local d="$tmp/vm" s
  rm -rf "$d" && mkdir -p "$d/m"
  printf 'import util\nprintln(Util.f())\n' > "$d/m/main.mn"
  printf 'fn f() { 42 }\n' > "$d/m/util.mn"
  cp -r "$d/m" "$d/orig"
  ln -s util.mn "$d/m/link.mn"
  cp "$d/m/main.mn" "$d/m/x.retain"
  for f in m/main.mn m/util.mn m/link.mn; do
    (cd "$d" && "$OLDPWD/vm" --memtrace "$f" m/main.mn > out 2> err); s=$?
    check "vm --memtrace $f (a source): status 2, got $s" '[ $s -eq 2 ] && grep -q "source" "$d/err"'
    check "vm --memtrace $f: the sources intact" 'cmp -s "$d/orig/main.mn" "$d/m/main.mn" && cmp -s "$d/orig/util.mn" "$d/m/util.mn"'
    (cd "$d" && MEMTRACE="$f" "$OLDPWD/vm" m/main.mn > out 2> err); s=$?
    check "MEMTRACE=$f: status 2, got $s" '[ $s -eq 2 ] && cmp -s "$d/orig/main.mn" "$d/m/main.mn" && cmp -s "$d/orig/util.mn" "$d/m/util.mn"'
  done
  (cd "$d" && "$OLDPWD/vm" --memtrace m/x m/x.retain > out 2> err); s=$?
  check "vm --memtrace X where X.retain is the script: status 2, X.retain kept" \
    '[ $s -eq 2 ] && cmp -s "$d/m/x.retain" "$d/orig/main.mn" && [ ! -e "$d/m/x" ]'
  printf 'Memtrace.start("m/s.mn", 0.1)\n' > "$d/m/s.mn"
  (cd "$d" && "$OLDPWD/vm" m/s.mn > out 2> err); s=$?
  check "Memtrace.start(the script): an error, the script kept" \
    '[ $s -eq 1 ] && grep -q "source" "$d/err" && grep -q Memtrace "$d/m/s.mn"'
  (cd "$d" && "$OLDPWD/vm" --memtrace t.ctf m/main.mn > out 2> err); s=$?
  check "vm --memtrace t.ctf: still traces (status $s)" '[ $s -eq 0 ] && [ -s "$d/t.ctf" ] && [ "$(cat "$d/out")" = 42 ]'
}
class1_vm

# ---------------------------------------------------------------- class 5
synth=build/release/tests/trace_synth
fc() { python3 tests/tools/format_check.py "$@"; }
if ! command -v python3 > /dev/null; then
  skip "class 5: python3 missing: outputs not parsed"
else
  mkdir -p "$tmp/c5"
  traces=()
  for seed in 1 2 3; do
    "$synth" --scenario hostile --events 2000 --seed $seed --version $((seed == 3 ? 3 : 2)) "$tmp/c5/h$seed.ctf"
    traces+=("$tmp/c5/h$seed.ctf")
  done
  odd="$tmp/c5/"$'x\xff<"&\n;, \x01\x1b]]>.ctf'   # a trace's own name is hostile too
  cp "$tmp/c5/h1.ctf" "$odd"
  traces+=("$odd")
  head -c 9000 "$tmp/c5/h2.ctf" > "$tmp/c5/cut.ctf"   # partial: the error joins the outputs
  traces+=("$tmp/c5/cut.ctf")
  for tool in tools/memtrace build/asan/memtrace; do
    for t in "${traces[@]}"; do
      n=$(basename "$t" | tr -c 'a-z0-9.\n' _)
      for c in "info --json" "top --json" "top --json --by stack" "top --json --by function" "top --json --by file" \
               "top --json --live" "top --json --promoted" "lifetimes --json" "leaks --json --all" \
               "flamegraph --json" "flamegraph --json --functions" "flamegraph --json --live" "timeline --json" \
               "timeline --json --by function"; do
        $tool $c "$t" > "$tmp/c5/out" 2> /dev/null
        check "$tool $c $n: JSON ($(fc json "$tmp/c5/out" 2>&1))" 'fc json "$tmp/c5/out" 2> /dev/null'
      done
      $tool diff --json "$t" "${traces[0]}" > "$tmp/c5/out" 2> /dev/null
      check "$tool diff --json $n: JSON ($(fc json "$tmp/c5/out" 2>&1))" 'fc json "$tmp/c5/out" 2> /dev/null'
      for c in "timeline" "timeline --by file"; do
        $tool $c "$t" > "$tmp/c5/out" 2> /dev/null
        check "$tool $c $n: CSV ($(fc csv "$tmp/c5/out" 2>&1))" 'fc csv "$tmp/c5/out" 2> /dev/null'
      done
      for c in "flamegraph" "flamegraph --functions" "flamegraph --live"; do
        $tool $c "$t" > "$tmp/c5/out" 2> /dev/null
        check "$tool $c $n: folded stacks ($(fc folded "$tmp/c5/out" 2>&1))" 'fc folded "$tmp/c5/out" 2> /dev/null'
      done
      for c in "flamegraph" "flamegraph --functions --live"; do
        $tool $c "$t" -o "$tmp/c5/out.svg" 2> /dev/null
        check "$tool $c -o X.svg $n: SVG ($(fc svg "$tmp/c5/out.svg" 2>&1))" 'fc svg "$tmp/c5/out.svg" 2> /dev/null'
      done
      $tool report "$t" -o "$tmp/c5/out.html" 2> /dev/null
      check "$tool report $n: HTML ($(fc html "$tmp/c5/out.html" 2>&1))" 'fc html "$tmp/c5/out.html" 2> /dev/null'
      $tool pprof "$t" -o "$tmp/c5/out.pb.gz" 2> /dev/null
      check "$tool pprof $n: profile.proto ($(fc pprof "$tmp/c5/out.pb.gz" 2>&1))" 'fc pprof "$tmp/c5/out.pb.gz" 2> /dev/null'
      if [ "$tool" = tools/memtrace ] && command -v go > /dev/null; then
        check "go tool pprof -raw reads pprof $n" 'go tool pprof -raw "$tmp/c5/out.pb.gz" > /dev/null 2>&1'
      fi
      if [ "$tool" = tools/memtrace ] && command -v gnuplot > /dev/null; then
        $tool timeline "$t" -o "$tmp/c5/chart.svg" > /dev/null 2>&1
        check "timeline -o X.svg (gnuplot) $n: SVG ($(fc svg "$tmp/c5/chart.svg" 2>&1))" 'fc svg "$tmp/c5/chart.svg" 2> /dev/null'
      fi
    done
    $tool merge "${traces[@]}" -o "$tmp/c5/merged.pb.gz" 2> /dev/null
    check "$tool merge of the hostile traces: profile.proto" 'fc pprof "$tmp/c5/merged.pb.gz"'
  done
  command -v go > /dev/null || skip "class 5: go missing: go tool pprof -raw not run"
  command -v gnuplot > /dev/null || skip "class 5: gnuplot missing: its SVG not parsed"
fi

# ---------------------------------------------------------------- class 3
# bench/hostile_traces.c's crafted traces (each under 1 MB): the tool stops at
# its documented limits (tools/memtrace_cli/README.md, "Limits") and says so
if [ -x build/release/hostile_traces ] && [ -x /usr/bin/time ]; then
  mkdir -p "$tmp/c3"
  build/release/hostile_traces "$tmp/c3" > /dev/null
  fan="$tmp/c3/deep-fan.ctf"
  for c in "top" "lifetimes" "flamegraph" "pprof -o $tmp/c3/o.pb.gz" "report -o $tmp/c3/o.html"; do
    /usr/bin/time -f '%M' -o "$tmp/c3/time" tools/memtrace $c "$fan" > /dev/null 2> "$tmp/c3/err"; s=$?
    kb=$(tail -1 "$tmp/c3/time")
    # Past the node limit the trace is still read to its end (issue 32): the
    # allocations past it count under "(frames left out: ...)", said on stderr.
    check "memtrace $c on unshared 300,000-frame stacks: status 0, what the node limit left out said with its first byte (got $s: $(grep -m1 distinct "$tmp/c3/err" | cut -c1-160))" \
      '[ $s -eq 0 ] && grep -q "^memtrace ${c%% *}: $fan: [0-9]* allocations ([0-9.]*% of the samples; the first at byte [0-9]*) have callstacks past the tools. limit of 2097152 distinct frames" "$tmp/c3/err"'
    check "memtrace $c on it: under 500 MB (got $kb KB)" '[ "$kb" -lt 512000 ]'
  done
  # Whole stacks: folded (the default), these stacks draw a few levels and no limit is reached.
  tools/memtrace flamegraph --whole-stacks -o "$tmp/c3/o.svg" "$fan" 2> "$tmp/c3/err"
  check "flamegraph --whole-stacks -o X.svg on it: under 8 MB of SVG ($(stat -c %s "$tmp/c3/o.svg") bytes), what was left out on stderr" \
    '[ "$(stat -c %s "$tmp/c3/o.svg")" -lt 8000000 ] && grep -q "leaves out .* deeper than 1024 levels" "$tmp/c3/err" && fc svg "$tmp/c3/o.svg"'
  # Whole-stack outputs stop at --max-frames (default 2^22 frames written in
  # all; README "Limits"): deep-chain.ctf's 11,656 stacks down one chain of
  # distinct functions (nothing to fold) are 68 million frames, 2.4 GB of
  # folded stacks and 4.4 GB of JSON without the limit.
  chain="$tmp/c3/deep-chain.ctf" shared="$tmp/c3/deep-shared.ctf"
  # bytes, then the last line (LC_ALL=C: awk counts bytes)
  tools/memtrace flamegraph "$chain" 2> "$tmp/c3/err" |
    LC_ALL=C awk '{ n += length($0) + 1; last = $0 } END { print n; print last }' > "$tmp/c3/out"; s=${PIPESTATUS[0]}
  bytes=$(head -1 "$tmp/c3/out"); tail -1 "$tmp/c3/out" > "$tmp/c3/last"
  check "flamegraph on 11,656 unfoldable deep stacks: status 0, under 200 MB of folded stacks (got $s, $bytes bytes)" \
    '[ $s -eq 0 ] && [ "$bytes" -gt 50000000 ] && [ "$bytes" -lt 200000000 ]'
  check "flamegraph past the limit: what was left out on stderr and on a last line (got: $(head -c 160 "$tmp/c3/err"); $(cat "$tmp/c3/last"))" \
    'grep -q "^memtrace flamegraph: [0-9]* stacks ([0-9]* frames, [0-9.]*% of the bytes) left out past the limit of 4194304 frames written; --max-frames 0 writes them all$" "$tmp/c3/err" &&
     grep -qE "^\([0-9]+ stacks left out: --max-frames\) [0-9]+$" "$tmp/c3/last"'
  tools/memtrace flamegraph --json "$chain" 2> "$tmp/c3/err" | wc -c > "$tmp/c3/bytes"
  bytes=$(cat "$tmp/c3/bytes")
  check "flamegraph --json on them: under 300 MB ($bytes bytes), the limit said" \
    '[ "$bytes" -gt 100000000 ] && [ "$bytes" -lt 300000000 ] && grep -q "left out past the limit of 4194304 frames" "$tmp/c3/err"'
  tools/memtrace flamegraph --max-frames 100000 "$chain" > "$tmp/c3/folded" 2> /dev/null
  tools/memtrace flamegraph --json --max-frames 100000 "$chain" > "$tmp/c3/f.json" 2> /dev/null
  check "flamegraph --max-frames 100000: at most 100000 frames written, the folded and JSON stacks alike, the bytes left out summed so the total holds" \
    'python3 -c "
import json, sys
d = json.load(open(sys.argv[1])); folded = open(sys.argv[2]).read().splitlines()
written = sum(len(s[\"frames\"]) for s in d[\"stacks\"])
assert 0 < written <= 100000 and d[\"left_out\"][\"stacks\"] > 0, (written, d[\"left_out\"])
assert len(folded) == len(d[\"stacks\"]) + 1 and folded[-1].startswith(\"(%d stacks left out\" % d[\"left_out\"][\"stacks\"])
assert sum(line.count(\";\") + 1 for line in folded[:-1]) == written
total = sum(s[\"bytes\"] for s in d[\"stacks\"]) + d[\"left_out\"][\"bytes\"]
assert abs(total - d[\"total_bytes\"]) < 1 and abs(sum(float(l.rsplit(\" \", 1)[1]) for l in folded) - total) < len(folded)
assert len(d[\"stacks\"]) + d[\"left_out\"][\"stacks\"] == 11656
" "$tmp/c3/f.json" "$tmp/c3/folded"'
  tools/memtrace flamegraph --whole-stacks --max-frames 0 "$shared" 2> "$tmp/c3/err" | wc -c > "$tmp/c3/bytes"
  check "flamegraph --whole-stacks --max-frames 0: the limit lifted, every stack whole (405000693 bytes, got $(cat "$tmp/c3/bytes"))" \
    '[ "$(cat "$tmp/c3/bytes")" = 405000693 ] && [ ! -s "$tmp/c3/err" ]'
  tools/memtrace top --by stack --json --whole-stacks --max-frames 700000 "$shared" > "$tmp/c3/t.json" 2> "$tmp/c3/err"
  check "top --by stack --json --max-frames 700000 on 300,000-frame stacks: two rows' stacks whole, then {\"frames_left_out\": 300000}, said on stderr" \
    'python3 -c "
import json, sys
rows = json.load(open(sys.argv[1]))[\"rows\"]
assert [len(r[\"key\"][\"stack\"]) for r in rows[:2]] == [300000, 300000]
assert all(r[\"key\"][\"stack\"] == [{\"frames_left_out\": 300000}] for r in rows[2:]) and len(rows) == 20
" "$tmp/c3/t.json" && grep -q "^memtrace top: 18 stacks (5400000 frames) left out past the limit of 700000 frames written" "$tmp/c3/err"'
  tools/memtrace info "$tmp/c3/samples.ctf" > "$tmp/c3/out" 2>&1
  check "info: sampled words past 2^64 say 'at least' (not wrapped)" 'grep -q "samples of at least 18446744073709551615 words" "$tmp/c3/out"'
  tools/memtrace dump "$tmp/c3/deep-shared.ctf" > /dev/null 2> "$tmp/c3/err"; s=$?
  check "dump of 47,080 stacks of 300,000 frames: stops at 2^28 frames with its byte (status $s)" \
    '[ $s -eq 1 ] && grep -q "byte [0-9]*: more than 268435456 frames to print" "$tmp/c3/err"'
  tools/memtrace top "$tmp/c3/deep-shared.ctf" > "$tmp/c3/out" 2>&1; s=$?
  check "top on 47,080 shared 300,000-frame stacks: whole (status $s)" '[ $s -eq 0 ]'
else
  skip "class 3: build/release/hostile_traces or /usr/bin/time missing"
fi

# ---------------------------------------------------------------- class 6
# refusals: "ARGS|what stderr's first line holds"; each exits 2 on both builds
t6="$tmp/c6.ctf"
cp "$fixture" "$t6"
svg="$tmp/c6.svg"
while IFS='|' read -r args msg; do
  [ -z "$args" ] && continue
  for tool in tools/memtrace build/asan/memtrace; do
    eval "$tool $args" > /dev/null 2> "$tmp/c6.err" < /dev/null; s=$?
    check "$tool $args: status 2 and '$msg' (got $s: $(head -1 "$tmp/c6.err"))" \
      '[ $s -eq 2 ] && head -1 "$tmp/c6.err" | grep -qF -- "$msg"'
  done
done <<EOF
top -n 3 -n 4 $t6|option -n given twice
top -o $tmp/a -o $tmp/b $t6|option -o given twice
top --by file --by=site $t6|option --by given twice
lifetimes --json --json $t6|option --json given twice
merge -o $tmp/a.pb.gz -o $tmp/b.pb.gz $t6|option -o given twice
top -n ' 3' $t6|is not a count
top -n +3 $t6|is not a count
top -n 0x3 $t6|is not a count
top -n 3.0 $t6|is not a count
top --live --at 1e3s $t6|is not a time
top --live --at ' 1s' $t6|is not a time
top --live --at 1.5.s $t6|is not a time
top --live --at infs $t6|is not a time
top --live --at 0x1s $t6|is not a time
top --at 1s $t6|--at goes with --live
top --idle 5 $t6|--idle goes with --follow
top --live --promoted $t6|exclude each other
diff --live --promoted $t6 $t6|exclude each other
flamegraph --width 500 $t6|--width goes with -o X.svg
flamegraph --min-width 500 $t6|--min-width goes with -o X.svg
flamegraph --min-width 0.1 -o $tmp/c6.folded $t6|--min-width goes with -o X.svg
flamegraph --title x $t6|--title goes with -o X.svg
flamegraph --max-frames 10 -o $svg $t6|--max-frames goes with folded stacks or --json
top --max-frames 10 $t6|--max-frames goes with --by stack --json
top --by stack --max-frames 10 $t6|--max-frames goes with --by stack --json
top --json --max-frames 10 $t6|--max-frames goes with --by stack --json
diff --by stack --max-frames 10 $t6 $t6|--max-frames goes with --by stack --json
leaks --max-frames 10 $t6|--max-frames goes with --json
flamegraph --max-frames 4294967295 $t6|is not a count
flamegraph --json -o $svg $t6|--json and -o X.svg exclude each other
flamegraph --min-width 0 -o $svg $t6|is not a number from 0.001 to 1000
flamegraph --width 0x400 -o $svg $t6|is not a number
flamegraph --width ' 500' -o $svg $t6|is not a number
flamegraph --width nan -o $svg $t6|is not a number
flamegraph --width 1e400 -o $svg $t6|is not a number
timeline --json -o $tmp/c6.csv $t6|--json and -o X.csv exclude each other
timeline --csv -o $tmp/c6.json $t6|exclude each other
timeline --points 3 $t6|is not a count from 4
report --top 101 $t6|is not a count from 0 to 100
top --live --at=.5e0s $t6|is not a time
EOF
# what the help documents works: --min-width's default 0.1, --width as the SVG's width
for tool in tools/memtrace build/asan/memtrace; do
  "$tool" flamegraph --min-width 0.1 --width 500 --title T -o "$svg" "$t6" 2> /dev/null; s=$?
  check "$tool flamegraph --min-width 0.1 --width 500 -o X.svg: status 0 (got $s), width 500" \
    '[ $s -eq 0 ] && grep -q "width=\"500\"" "$svg"'
  "$tool" flamegraph --min-width 500 -o "$svg" "$t6" 2> /dev/null
  check "$tool flamegraph --min-width 500: the width stays 1200" 'grep -q "width=\"1200\"" "$svg"'
done

# ./vm's command line
printf 'println(1)\n' > "$tmp/s.mn"
while IFS='|' read -r args msg; do
  [ -z "$args" ] && continue
  for vm in ./vm ./vm-asan; do
    [ -x "$vm" ] || continue
    (cd "$tmp" && eval "\"$OLDPWD/$vm\" $args s.mn" > out 2> err); s=$?
    # Two lines: what is wrong, then the synopsis (not the whole usage).
    check "$vm $args: status 2 and '$msg', then the synopsis (got $s: $(head -1 "$tmp/err"))" \
      '[ $s -eq 2 ] && head -1 "$tmp/err" | grep -qF -- "$msg" && [ ! -s "$tmp/out" ] &&
       [ "$(wc -l < "$tmp/err")" -eq 2 ] && sed -n 2p "$tmp/err" | grep -q "^usage: vm \[options\] script.mn"'
  done
done <<EOF
--gc-stres|vm: unknown option '--gc-stres' (did you mean --gc-stress?)
--memtrace-rte=0.5|vm: unknown option '--memtrace-rte=0.5' (did you mean --memtrace-rate?)
--frobnicate|vm: unknown option '--frobnicate'
--gc-stress=yes|option --gc-stress takes no value (got '--gc-stress=yes')
--memtrace=a.ctf --memtrace b.ctf|option --memtrace given twice
--memtrace a.ctf --memtrace b.ctf|--memtrace given twice
--gc-stress --gc-stress|--gc-stress given twice
--memprof-count 0.5 --memprof-count 0.1|--memprof-count given twice
--memtrace-rate 0.1|go with --memtrace FILE
--memtrace-format 3|go with --memtrace FILE
--memtrace-no-end-state|go with --memtrace FILE
--memtrace a.ctf --memtrace-rate ' 0.1'|is not a rate in (0, 1]
--memtrace a.ctf --memtrace-rate 0x0.8|is not a rate in (0, 1]
--memtrace a.ctf --memtrace-rate nan|is not a rate in (0, 1]
--dump-bytecode --memtrace a.ctf|--dump-bytecode runs nothing
--dump-bytecode --memprof-count 0.5|--dump-bytecode runs nothing
EOF
# A script that allocates (println(1) alone writes no event), the same seed:
# the two traces' dumps are the same but for their times (the first column).
printf 'fn pair(n) { [n, n + 1] }\nvar xs = []\nfor i in 0..2000 { xs = pair(i) }\nprintln(str(xs))\n' > "$tmp/a.mn"
(cd "$tmp" && MINNOW_SEED=3 "$OLDPWD/vm" --memtrace=f1.ctf --memtrace-rate=0.5 --minor-words=4096 a.mn > out 2> err &&
  MINNOW_SEED=3 "$OLDPWD/vm" --memtrace f2.ctf --memtrace-rate 0.5 --minor-words 4096 a.mn > out 2>> err); s=$?
check "./vm --opt=value reads as --opt value (status $s)" \
  '[ $s -eq 0 ] && [ ! -s "$tmp/err" ] && tools/memtrace dump "$tmp/f1.ctf" | cut -d" " -f2- > "$tmp/f1" &&
   tools/memtrace dump "$tmp/f2.ctf" | cut -d" " -f2- > "$tmp/f2" && [ "$(wc -l < "$tmp/f1")" -gt 100 ] && cmp -s "$tmp/f1" "$tmp/f2"'
./vm --version > "$tmp/out" 2> "$tmp/err"; s=$?
check "./vm --version: one line, the version and the formats (status $s: $(head -1 "$tmp/out"))" \
  '[ $s -eq 0 ] && [ ! -s "$tmp/err" ] && [ "$(wc -l < "$tmp/out")" -eq 1 ] && grep -q "^vm [0-9][0-9.]* .*format versions 2 and 3" "$tmp/out"'
./vm -- "$tmp/s.mn" > "$tmp/out" 2> "$tmp/err"; s=$?
check "./vm -- SCRIPT: the script runs (status $s)" '[ $s -eq 0 ] && [ "$(cat "$tmp/out")" = 1 ]'
(cd "$tmp" && MEMTRACE=e.ctf "$OLDPWD/vm" --memtrace-rate 0.5 s.mn > out 2> err); s=$?
check "MEMTRACE=FILE with --memtrace-rate: traced (status $s)" '[ $s -eq 0 ] && [ -s "$tmp/e.ctf" ]'
(cd "$tmp" && MEMTRACE=e2.ctf "$OLDPWD/vm" --dump-bytecode s.mn > out 2> err); s=$?
check "MEMTRACE=FILE with --dump-bytecode: refused (status $s)" '[ $s -eq 2 ] && [ ! -e "$tmp/e2.ctf" ]'
seeded() { MINNOW_SEED=$1 ./vm --memprof-count 0.01 examples/leaky_cache.mn 2>&1 | tail -1; }
a=$(seeded 010); b=$(seeded 10); c=$(seeded 8)
check "MINNOW_SEED=010 is ten, not octal eight" '[ "$a" = "$b" ] && [ "$a" != "$c" ]'

suite_end
