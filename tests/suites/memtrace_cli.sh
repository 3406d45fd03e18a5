#!/bin/bash
# memtrace_cli.sh - the command line every command of tools/memtrace shares
# (tools/memtrace_cli/cli/options.h), release and ASan builds:
#   1. option forms: --opt value, --opt=value, -n3 and -n 3 give the same
#      answer; refusals (unknown option, missing or bad value, a value given
#      to a flag, too many or no files) exit 2 with one line naming the
#      command and the option, then the usage;
#   2. `memtrace help CMD` and `memtrace CMD --help` print that command's
#      usage on stdout (exit 0), `--version` the version;
#   3. --json on every command that prints figures (info, top, lifetimes,
#      leaks, diff, timeline, flamegraph), each read by python3 -m json.tool
#      and checked against its schema (tests/tools/tools_check.py);
#   4. -o: every command writes to stdout by default and to the file -o names,
#      the same bytes; pprof and merge on stdout (a pipe) give the profile -o
#      gives, and refuse a terminal (when `script` can make one);
#   5. the gnuplot chart's axis in binary units (MiB), through a stand-in
#      gnuplot on PATH that keeps the script it is given.
set -u
cd "$(dirname "$0")/../.." || exit 2

. tests/suites/lib.sh
suite_init memtrace_cli
require_built tools/memtrace ./vm
tools=(tools/memtrace)
[ -x build/asan/memtrace ] && tools+=(build/asan/memtrace)

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export MEMTRACE_PROGRESS=0 MINNOW_SEED=7

./vm --memtrace "$tmp/a.ctf" --memtrace-rate 1e-2 examples/leaky_cache.mn >/dev/null
MINNOW_SEED=8 ./vm --memtrace "$tmp/b.ctf" --memtrace-rate 1e-3 examples/leaky_cache.mn >/dev/null
a=$tmp/a.ctf
b=$tmp/b.ctf
have_python=false
command -v python3 >/dev/null && have_python=true
commands=(dump info top lifetimes leaks diff timeline flamegraph pprof merge report)

for tool in "${tools[@]}"; do
  # ------------------------------------------------------------ 1. option forms
  for spec in "top|-n 3 --by function|-n3 --by=function" "top|--live --at 50%|--live --at=50%" \
              "lifetimes|--by file -n 2|--by=file -n2" "leaks|-n 1 --all|--all -n1" \
              "diff|--by function -n 4|-n4 --by=function" "timeline|--top 2 --points 40|--top=2 --points=40" \
              "flamegraph|--functions -o -|-o- --functions" "top|-n 5|-- -n5"; do
    IFS='|' read -r cmd first second <<<"$spec"
    files=$a
    [ "$cmd" = diff ] && files="$a $b"
    # shellcheck disable=SC2086
    "$tool" $cmd $first $files >"$tmp/1.out" 2>"$tmp/1.err"
    s1=$?
    if [ "$second" = "-- -n5" ]; then
      # after --, "-n5" is a file: a missing one
      "$tool" top "$a" -- -n5 >"$tmp/2.out" 2>"$tmp/2.err"
      check "$tool top FILE -- -n5: -n5 read as a file (got $?: $(head -c 200 "$tmp/2.err"))" \
        'grep -q "one trace file expected, got .*and .-n5." "$tmp/2.err"'
      continue
    fi
    # shellcheck disable=SC2086
    "$tool" $cmd $second $files >"$tmp/2.out" 2>"$tmp/2.err"
    s2=$?
    # leaks answers with 0 (no leak) or 3 (leaks found): leaky_cache leaks
    want=0
    [ "$cmd" = leaks ] && want=3
    check "$tool $cmd: '$first' and '$second' give the same answer (status $s1, $s2; want $want)" \
      '[ $s1 = $want ] && [ $s2 = $want ] && [ -s "$tmp/1.out" ] && cmp -s "$tmp/1.out" "$tmp/2.out"'
  done
  # Refusals: status 2, two lines: the command and the option named (the
  # nearest name for a typo), then the usage's first line.
  while IFS='|' read -r args want; do
    # shellcheck disable=SC2086
    "$tool" $args >"$tmp/out" 2>"$tmp/err"
    status=$?
    cmd=${args%% *}
    case "$want" in "memtrace: "*) synopsis="usage: memtrace COMMAND " ;; *) synopsis="usage: memtrace $cmd " ;; esac
    check "$tool $args: exit 2, '$want' then the synopsis (got $status: $(head -1 "$tmp/err"))" \
      '[ $status = 2 ] && head -1 "$tmp/err" | grep -qF -- "$want" && [ "$(wc -l <"$tmp/err")" = 2 ] &&
       sed -n 2p "$tmp/err" | grep -qF -- "$synopsis" && [ ! -s "$tmp/out" ]'
  done <<EOF
top --frobnicate $a|memtrace top: unknown option '--frobnicate'
top --liv $a|memtrace top: unknown option '--liv' (did you mean --live?)
flamegraph --whole-stack $a|memtrace flamegraph: unknown option '--whole-stack' (did you mean --whole-stacks?)
timeline --point=40 $a|memtrace timeline: unknown option '--point=40' (did you mean --points?)
tpo $a|memtrace: unknown command 'tpo' (did you mean top?)
flamegrph $a|memtrace: unknown command 'flamegrph' (did you mean flamegraph?)
--verison|memtrace: unknown command '--verison' (did you mean --version?)
top --by=nothing $a|memtrace top: option --by: 'nothing' is not site, function, file, stack or holder
top -nx $a|memtrace top: option -n: 'x' is not a count
top $a -n|memtrace top: option -n needs a value
top --live=yes $a|memtrace top: option --live takes no value
lifetimes --by stack $a|memtrace lifetimes: option --by: 'stack' is not site, function or file
timeline --points=2 $a|memtrace timeline: option --points: '2' is not a count from 4 to 10000
report --top 1000 $a|memtrace report: option --top: '1000' is not a count from 0 to 100
flamegraph --width=x $a|memtrace flamegraph: option --width: 'x' is not a number from 100 to 100000
info $a $b|memtrace info: one trace file expected, got
diff $a|memtrace diff: two trace files expected, got 1
dump|memtrace dump: no trace file given
merge -o $tmp/m.pb.gz|memtrace merge: no trace file given
EOF

  # ------------------------------------------------------------ 2. help, --version
  for c in "${commands[@]}"; do
    "$tool" help "$c" >"$tmp/help" 2>"$tmp/err"
    s1=$?
    "$tool" "$c" --help >"$tmp/dash" 2>>"$tmp/err"
    s2=$?
    check "$tool help $c: its usage on stdout, as $c --help ($s1, $s2)" \
      '[ $s1 = 0 ] && [ $s2 = 0 ] && head -1 "$tmp/help" | grep -q "^usage: memtrace $c " && cmp -s "$tmp/help" "$tmp/dash" && [ ! -s "$tmp/err" ]'
  done
  # The usage and the help agree with the options read: the synopsis is one
  # line ending in the files (the line a refusal repeats, whole); an option
  # it names is one the help lists; a synopsis that names options (no
  # [OPTIONS]) names every one the help lists; each listed option is read
  # (given alone: a missing value or file, never "unknown option").
  for c in "${commands[@]}" paths; do
    "$tool" "$c" --help >"$tmp/help"
    synopsis=$(head -1 "$tmp/help")
    listed=$(grep -oE '^  -[-a-zA-Z]+' "$tmp/help" | sed 's/^ *//' | sort -u)
    named=$(sed 's/^usage: memtrace [a-z]*//' <<<"$synopsis" | grep -oE '(^|[[ |])-[-a-zA-Z]+' | sed 's/^[[ |]//' | sort -u)
    unread=""
    for opt in $listed; do
      "$tool" "$c" "$opt" >/dev/null 2>"$tmp/err"
      grep -q "unknown option" "$tmp/err" && unread="$unread $opt"
    done
    "$tool" "$c" --frobnicate >/dev/null 2>"$tmp/err"
    check "$tool $c: the synopsis ends in the files, a refusal repeats it whole, its options are the help's (synopsis '$synopsis'; not listed: $(comm -23 <(echo "$named") <(echo "$listed") | tr '\n' ' '); not read:$unread)" \
      '[[ "$synopsis" =~ \ (FILE|FILE\.\.\.|A\ B)$ ]] && [ "$(sed -n 2p "$tmp/err")" = "$synopsis (memtrace $c --help says more)" ] &&
       [ -z "$(comm -23 <(echo "$named") <(echo "$listed"))" ] && [ -z "$unread" ] &&
       { [[ "$synopsis" == *"[OPTIONS]"* ]] || [ "$named" = "$listed" ]; }'
  done
  "$tool" help nosuch >/dev/null 2>"$tmp/err"
  check "$tool help nosuch: exit 2, the command named" '[ $? = 2 ] && grep -q "unknown command .nosuch." "$tmp/err"'
  "$tool" help >"$tmp/help"
  check "$tool help: the list of commands" '[ $? = 0 ] && grep -q "^  flamegraph " "$tmp/help"'
  "$tool" --version >"$tmp/version"
  check "$tool --version: exit 0, one line naming the tool and the formats ($(cat "$tmp/version"))" \
    '[ $? = 0 ] && [ "$(wc -l <"$tmp/version")" = 1 ] && grep -q "^memtrace [0-9][0-9.]* .*format versions 1 to 3" "$tmp/version"'

  # ------------------------------------------------------------ 3. --json everywhere
  if $have_python; then
    for args in "info --json $a" "top --json $a" "lifetimes --json $a" "leaks --json $a" "diff --json $a $b" \
                "timeline --json $a" "flamegraph --json $a" "flamegraph --json --live --functions $b"; do
      # shellcheck disable=SC2086
      "$tool" $args >"$tmp/j.json" 2>"$tmp/err"
      status=$?
      command=${args%% *}
      out=$(python3 tests/tools/tools_check.py schema "$command" "$tmp/j.json")
      # leaks exits 0 (no leak), 3 (leaks) or 4 (cannot judge) when it answers
      check "$tool $args: JSON that python3 -m json.tool reads, of $command's schema (exit $status: $out)" \
        '{ [ $status = 0 ] || { [ "$command" = leaks ] && [ $status -ge 3 ]; }; } &&
         python3 -m json.tool "$tmp/j.json" >/dev/null && [[ "$out" == ok* ]]'
    done
    "$tool" timeline --json "$a" >"$tmp/t.json"
    "$tool" timeline "$a" >"$tmp/t.csv"
    check "timeline --json: the CSV's points and totals" \
      'python3 -c "
import csv, json, sys
d = json.load(open(sys.argv[1])); rows = list(csv.reader(open(sys.argv[2])))[1:]
assert len(rows) == len(d[\"points\"]) and len(d[\"bands\"]) == len(rows[0]) - 2
for r, p in zip(rows, d[\"points\"]):
    assert abs(float(r[0]) - p[\"time_s\"]) < 1e-6 and abs(float(r[-1]) - p[\"total_bytes\"]) < 1
" "$tmp/t.json" "$tmp/t.csv"'
    "$tool" flamegraph --json "$a" >"$tmp/f.json"
    "$tool" flamegraph "$a" >"$tmp/f.folded"
    check "flamegraph --json: the folded stacks' bytes, stack for stack" \
      'python3 -c "
import json, sys
d = json.load(open(sys.argv[1])); folded = open(sys.argv[2]).read().split(chr(10))[:-1]
assert len(folded) == len(d[\"stacks\"]) and abs(sum(s[\"bytes\"] for s in d[\"stacks\"]) - d[\"total_bytes\"]) < 1
total = sum(float(l.rsplit(\" \", 1)[1]) for l in folded)
assert abs(total - d[\"total_bytes\"]) < len(folded)
" "$tmp/f.json" "$tmp/f.folded"'
  else
    skip "python3 absent: --json not read back"
  fi

  # ------------------------------------------------------------ 4. -o everywhere
  for args in "dump $a" "info $a" "top $a" "lifetimes $a" "leaks $a" "diff $a $b" "timeline $a" "flamegraph $a" \
              "report $a"; do
    # shellcheck disable=SC2086
    "$tool" $args >"$tmp/stdout" 2>/dev/null
    rm -f "$tmp/o.csv"
    # shellcheck disable=SC2086
    "$tool" $args -o "$tmp/o.csv" >"$tmp/o.stdout" 2>/dev/null
    check "$tool $args -o FILE: the bytes of stdout, nothing on stdout" \
      '[ -s "$tmp/stdout" ] && cmp -s "$tmp/stdout" "$tmp/o.csv" && [ ! -s "$tmp/o.stdout" ]'
  done
  "$tool" top "$a" -o "$tmp/no/such/dir/x" >/dev/null 2>"$tmp/err"
  check "$tool top -o into a missing directory: exit 1, the file named" \
    '[ $? = 1 ] && grep -q "^memtrace top: cannot create $tmp/no/such/dir/x: " "$tmp/err"'
  "$tool" timeline -o "$tmp/t.csv" "$a" && "$tool" timeline "$a" >"$tmp/t2.csv"
  check "$tool timeline -o X.csv: the CSV of stdout" 'cmp -s "$tmp/t.csv" "$tmp/t2.csv"'
  "$tool" pprof "$a" -o "$tmp/p.pb.gz"
  "$tool" pprof "$a" | cat >"$tmp/p-stdout.pb.gz"
  check "$tool pprof without -o: the profile on stdout, as -o writes it" \
    'zcat "$tmp/p-stdout.pb.gz" >"$tmp/p1" && zcat "$tmp/p.pb.gz" >"$tmp/p2" && [ -s "$tmp/p1" ] && cmp -s "$tmp/p1" "$tmp/p2"'
  "$tool" merge "$a" "$b" -o "$tmp/m.pb.gz"
  "$tool" merge "$a" "$b" | cat >"$tmp/m-stdout.pb.gz"
  check "$tool merge without -o: the profile on stdout, as -o writes it" \
    'zcat "$tmp/m-stdout.pb.gz" >"$tmp/m1" && zcat "$tmp/m.pb.gz" >"$tmp/m2" && [ -s "$tmp/m1" ] && cmp -s "$tmp/m1" "$tmp/m2"'
  if command -v script >/dev/null && script -qec true /dev/null >/dev/null 2>&1; then
    # The message and the status go to files, not through the terminal:
    # script(1) may exit before it has copied the last output of a command
    # that ends at once (more likely on a loaded machine), which once failed
    # this check while tests/suites/hostile_tools.sh ran beside it.
    rm -f "$tmp/tty.err" "$tmp/tty.status"
    script -qec "$tool pprof $a 2>'$tmp/tty.err'; echo \$? >'$tmp/tty.status'" /dev/null >"$tmp/tty" 2>&1
    check "$tool pprof with a terminal on stdout: refused with a message, exit 2 (got $(cat "$tmp/tty.status" 2>/dev/null))" \
      'grep -q "stdout is a terminal" "$tmp/tty.err" && [ "$(cat "$tmp/tty.status")" = 2 ] && ! grep -qa "alloc_space" "$tmp/tty"'
  else
    skip "script(1) absent: pprof's refusal of a terminal not checked"
  fi

  # ------------------------------------------------------------ 5. MiB on the chart
  mkdir -p "$tmp/fakebin"
  printf '#!/bin/sh\ncat >"%s/gnuplot.script"\n' "$tmp" >"$tmp/fakebin/gnuplot"
  chmod +x "$tmp/fakebin/gnuplot"
  rm -f "$tmp/gnuplot.script"
  PATH="$tmp/fakebin:$PATH" "$tool" timeline -o "$tmp/chart.png" "$a" 2>"$tmp/err"
  # The units are read from the script without the lines that name files or
  # sites (set output, set title, each plot's title): those hold the temporary
  # directory's and the clone's paths, whose names may hold "MB" anywhere.
  grep -v -e "^set output " -e "^set title " "$tmp/gnuplot.script" 2>/dev/null |
    sed "s/ title '.*$//" >"$tmp/gnuplot.units"
  check "$tool timeline -o X.png: the y axis in MiB, never MB ($(grep 'format y' "$tmp/gnuplot.script" 2>/dev/null))" \
    'grep -q "^set format y .%g MiB.$" "$tmp/gnuplot.units" && grep -q "^set ylabel " "$tmp/gnuplot.units" && ! grep -q "MB" "$tmp/gnuplot.units"'
  peak=$(awk -F, 'NR > 1 && $NF > m {m = $NF} END {print m}' "$tmp/t2.csv")
  top=$(awk '/^\$data/ {on = 1; next} /^EOD/ {on = 0} on {if ($NF > m) m = $NF} END {print m}' "$tmp/gnuplot.script")
  check "$tool timeline: the chart's data in MiB (peak $peak B = $top MiB)" \
    'awk -v b="$peak" -v m="$top" "BEGIN {d = b / 1048576 - m; exit !(d < 1e-6 && d > -1e-6)}"'
done

suite_end
