#!/usr/bin/env bash
# hostile_third.sh - issue 32 (hostile input and scale, third pass) on
# tools/memtrace (release and ASan builds) and ./vm:
#  4. leftovers: a command writing -o OUT and killed by SIGINT, SIGTERM,
#     SIGHUP or SIGPIPE while it reads (its trace a FIFO that never ends)
#     dies of the signal and leaves no temporary nor OUT; under strace, every
#     file the tool creates is created with O_EXCL (nothing truncated);
#  5. silence: a result probably not what the user meant is said on stderr
#     (merge or diff of one recording twice: the same file, a copy), an
#     option that cannot apply is refused (--whole-stacks without a stack
#     output), a --retain FILE that cannot be read is an error, not "no end
#     state".
cd "$(dirname "$0")/../.." || exit 2
. tests/suites/lib.sh
suite_init hostile_third
require_built tools/memtrace build/asan/memtrace ./vm
tmp=$(mktemp -d)   # removed at the end: no EXIT trap, which the guard of a signal test would inherit
fixture=tests/fixtures/memtrace/bintrees-1e-5.ctf
other=tests/fixtures/memtrace/listmap-1e-6.ctf

# ---------------------------------------------------------------- class 4
class4() {
  local tool=$1 d="$tmp/c4" s sig c
  rm -rf "$d" && mkdir -p "$d"
  for sig in INT TERM HUP PIPE; do
    for c in "report -o out.html" "top -o out.txt" "pprof -o out.pb.gz" "timeline -o out.svg" "merge -o out.pb.gz" \
             "dump -o out.txt" "leaks --retain $PWD/$fixture.retain -o out.txt" "paths --retain $PWD/$fixture.retain -o out.txt"; do
      rm -f "$d/fifo" && mkfifo "$d/fifo"
      # The tool's signals at their defaults (a background job of a script
      # starts with SIGINT ignored); a writer holds the FIFO open meanwhile,
      # and a guard kills the tool if the signal did not end it.
      # shellcheck disable=SC2086
      (cd "$d" && exec env --default-signal="$sig" "$OLDPWD/$tool" $c - < fifo 2> err) &
      local pid=$!
      exec 3> "$d/fifo"
      sleep 0.5
      kill -s "$sig" "$pid"
      (sleep 20; kill -KILL "$pid" 2> /dev/null) &
      local guard=$!
      wait "$pid"; s=$?
      kill "$guard" 2> /dev/null; wait "$guard" 2> /dev/null
      exec 3>&-
      check "$tool $c killed by SIG$sig: dies of it (status $s: $(head -c 150 "$d/err")) and leaves nothing ($(ls -A "$d" | grep -v -e '^fifo$' -e '^err$' | tr '\n' ' '))" \
        '[ $s -ge 128 ] && [ -z "$(ls -A "$d" | grep -v -e "^fifo$" -e "^err$")" ]'
    done
  done
  if strace -o /dev/null true 2> /dev/null; then
    for c in "report -o $d/r.html" "top -o $d/t.txt" "pprof -o $d/p.pb.gz" "flamegraph -o $d/f.svg" "flamegraph -o $d/f.txt" \
             "timeline -o $d/c.svg" "merge $fixture -o $d/m.pb.gz" "info -o $d/i.txt"; do
      echo old > "${c##* }"
      # shellcheck disable=SC2086
      strace -o "$d/strace" -e trace=open,openat,creat "$tool" $c "$fixture" > /dev/null 2>&1
      check "$tool $c: every file created with O_EXCL ($(grep -E 'O_CREAT|O_TRUNC|creat\(' "$d/strace" | grep -v O_EXCL | head -2))" \
        '! grep -E "O_CREAT|O_TRUNC|creat\(" "$d/strace" | grep -qv O_EXCL'
      check "$tool $c: the output replaced" '[ "$(head -c 3 "${c##* }")" != old ]'
    done
  else
    skip "strace cannot trace here: the O_EXCL check of class 4 not run"
  fi
}
class4 tools/memtrace
class4 build/asan/memtrace

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

rm -rf "$tmp"
suite_end
