#!/usr/bin/env bash
# stdin.sh - the Stdin module on input the script runner cannot give
# (tests/run_lang.sh runs every script on /dev/null): lines with "\r\n" and
# without a last "\n", read_line then read_all, a prompt flushed before the
# read, and standard input that cannot be read (a directory, closed): a
# runtime error naming standard input and the reason, status 1, no crash.
# On vm and vm-asan.
cd "$(dirname "$0")/../.." || exit 2
. tests/suites/lib.sh
suite_init stdin
require_built ./vm ./vm-asan
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cat > "$tmp/mixed.mn" <<'MN'
print("name? ")
println(repr(Stdin.read_line()))
println(repr(Stdin.read_all()))
println(repr(Stdin.read_line()))
MN
printf 'println(Stdin.lines())\n' > "$tmp/lines.mn"
printf 'Stdin.read_line()\n' > "$tmp/line.mn"
printf 'Stdin.read_all()\n' > "$tmp/all.mn"

for vm in ./vm ./vm-asan; do
  printf 'ann\r\nbob\nlast' | "$vm" "$tmp/mixed.mn" > "$tmp/out" 2> "$tmp/err"; s=$?
  printf 'name? "ann"\n"bob\\nlast"\nnil\n' > "$tmp/want"
  check "$vm: read_line strips \\r\\n, read_all takes the rest, then nil (status $s)" \
    '[ $s -eq 0 ] && cmp -s "$tmp/want" "$tmp/out" && [ ! -s "$tmp/err" ]'
  printf 'a\n\nb\r\nc' | "$vm" "$tmp/lines.mn" > "$tmp/out" 2> "$tmp/err"; s=$?
  check "$vm: Stdin.lines (status $s: $(cat "$tmp/out"))" \
    '[ $s -eq 0 ] && [ "$(cat "$tmp/out")" = "[\"a\", \"\", \"b\", \"c\"]" ] && [ ! -s "$tmp/err" ]'
  for script in line all; do
    "$vm" "$tmp/$script.mn" < "$tmp" > "$tmp/out" 2> "$tmp/err"; s=$?
    check "$vm: Stdin.read_$script on a directory: status 1, the reason named ($(head -1 "$tmp/err"))" \
      '[ $s -eq 1 ] && head -1 "$tmp/err" | grep -q "^$tmp/$script.mn:1:[0-9]*: error: Stdin.read_$script: standard input: Is a directory$"'
    "$vm" "$tmp/$script.mn" <&- > "$tmp/out" 2> "$tmp/err"; s=$?
    check "$vm: Stdin.read_$script with standard input closed: status 1, named ($(head -1 "$tmp/err"))" \
      '[ $s -eq 1 ] && head -1 "$tmp/err" | grep -q "error: Stdin.read_$script: standard input: "'
  done
done
suite_end
