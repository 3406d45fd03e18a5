#!/usr/bin/env bash
# hostile_third.sh - issue 32 (hostile input and scale, third pass) on
# tools/memtrace (release and ASan builds) and ./vm:
#  5. silence: a result probably not what the user meant is said on stderr
#     (merge or diff of one recording twice: the same file, a copy), an
#     option that cannot apply is refused (--whole-stacks without a stack
#     output), a --retain FILE that cannot be read is an error, not "no end
#     state".
cd "$(dirname "$0")/../.." || exit 2
. tests/suites/lib.sh
suite_init hostile_third
require_built tools/memtrace build/asan/memtrace ./vm
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fixture=tests/fixtures/memtrace/bintrees-1e-5.ctf
other=tests/fixtures/memtrace/listmap-1e-6.ctf

# ---------------------------------------------------------------- class 5
class5() {
  local tool=$1 d="$tmp/c5" s
  rm -rf "$d" && mkdir -p "$d"
  cp "$fixture" "$d/a.ctf"
  cp "$fixture" "$d/copy.ctf"
  for pair in "a.ctf a.ctf" "a.ctf copy.ctf"; do
    # shellcheck disable=SC2086
    (cd "$d" && "$OLDPWD/$tool" merge $pair -o m.pb.gz > /dev/null 2> err); s=$?
    check "$tool merge $pair: status 0, got $s, and the double count said" \
      '[ $s -eq 0 ] && grep -q "is the same recording as a.ctf.*summed twice" "$d/err"'
    # shellcheck disable=SC2086
    (cd "$d" && "$OLDPWD/$tool" diff $pair > /dev/null 2> err); s=$?
    check "$tool diff $pair: status 0, got $s, and the one recording said" \
      '[ $s -eq 0 ] && grep -q "is the same recording as a.ctf" "$d/err"'
  done
  "$tool" merge "$fixture" "$other" -o "$d/m.pb.gz" > /dev/null 2> "$d/err"; s=$?
  check "$tool merge of two recordings: status 0 and nothing said (got $s: $(head -c 200 "$d/err"))" \
    '[ $s -eq 0 ] && [ ! -s "$d/err" ]'
  "$tool" diff "$fixture" "$other" > /dev/null 2> "$d/err"; s=$?
  check "$tool diff of two recordings: nothing said (got $s: $(head -c 200 "$d/err"))" '[ $s -eq 0 ] && [ ! -s "$d/err" ]'
  for c in "top --whole-stacks" "top --live --by holder --whole-stacks" "diff --whole-stacks $fixture" \
           "diff --by site --whole-stacks $fixture"; do
    # shellcheck disable=SC2086
    "$tool" $c "$fixture" > /dev/null 2> "$d/err"; s=$?
    check "$tool $c: refused (status 2, got $s)" '[ $s -eq 2 ] && grep -q "goes with --by stack" "$d/err"'
  done
  # shellcheck disable=SC2086
  for c in "top --by stack --whole-stacks" "diff --by stack --whole-stacks $fixture"; do
    "$tool" $c "$fixture" > /dev/null 2> "$d/err"; s=$?
    check "$tool $c: accepted (got $s)" '[ $s -eq 0 ]'
  done
  for c in info leaks paths "top --live --by holder" report; do
    # shellcheck disable=SC2086
    "$tool" $c --retain "$d/missing.retain" "$d/a.ctf" > /dev/null 2> "$d/err"; s=$?
    check "$tool $c --retain MISSING: an error naming it (status 1, got $s)" \
      '[ $s -eq 1 ] && grep -q "missing.retain: No such file" "$d/err"'
  done
}
class5 tools/memtrace
class5 build/asan/memtrace

suite_end
