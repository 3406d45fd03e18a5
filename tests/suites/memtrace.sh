#!/usr/bin/env bash
# memtrace.sh - ./vm --memtrace and the Memtrace module, end to end:
#   1. the same samples: tests/memtrace/same_samples.mn runs a Memprof profile
#      and a trace at one rate; the profile's log must equal the trace as
#      tools/memtrace dump decodes it (and memtrace 0.2.3's own dump_trace,
#      when installed: MEMTRACE_REFERENCE, tests/trace/reference.sh), at two rates and three seeds, on
#      ./vm and ./vm-asan; and --memtrace-format 3 gives the events of 2;
#   2. every way out flushes the trace: end, Sys.exit, uncaught error, SIGINT,
#      SIGTERM, Memtrace.stop; the trace decodes without error and holds the
#      777-field marker (and, after Memtrace.stop, nothing more);
#   3. SIGKILL: the trace is readable up to its last whole packet;
#   4. write errors (file size limit, a pipe that closes): one message, the
#      program runs on to its end, exit 0;
#   5. the command line and environment: MEMTRACE, MEMTRACE_RATE, the flags
#      winning, bad rates and unwritable paths refused before the script runs;
#   6. the scripts of tests/memtrace/ with `// expect:` lines.
# Run by tests/run_all.sh, which reads the last line "N passed, N failed".
set -u
cd "$(dirname "$0")/../.." || exit 2
mt=tools/memtrace
. tests/trace/reference.sh
ref=$(memtrace_reference_dir) && ref=$ref/dump_trace.exe || ref=""
. tests/suites/lib.sh
suite_init memtrace
require_built ./vm "$mt"
# No EXIT trap: background guards would inherit it (see exit_paths.sh).
tmp=$(mktemp -d)

# dump_events FILE: the trace's events as same_samples.mn prints them (no
# time, ids unpadded, no common-prefix column).
dump_events() {
  "$1" "${@:2}" | sed -E 's/^[0-9]+ 0*([0-9])/\1/; s/ len=([0-9]+) +[0-9]+:/ len=\1:/'
}

# 1. The same samples.
for vm in ./vm ./vm-asan; do
  [ -x "$vm" ] || continue
  for rate in 0.01 0.001; do
    for seed in 1 2 3; do
      name="same samples ($vm, rate $rate, seed $seed)"
      MINNOW_SEED=$seed "$vm" tests/memtrace/same_samples.mn "$tmp/s.ctf" "$rate" > "$tmp/log" 2> "$tmp/err" ||
        { bad "$name: exit $?"; continue; }
      dump_events $mt dump "$tmp/s.ctf" > "$tmp/ours" 2> "$tmp/err2"
      if [ "$(wc -l < "$tmp/log")" -lt 50 ]; then bad "$name: only $(wc -l < "$tmp/log") events"
      elif cmp -s "$tmp/log" "$tmp/ours"; then ok
      else bad "$name: the profile and the trace differ"; diff "$tmp/log" "$tmp/ours" | head -5
      fi
      if [ -x "$ref" ]; then
        dump_events "$ref" "$tmp/s.ctf" > "$tmp/theirs" 2> /dev/null
        if cmp -s "$tmp/log" "$tmp/theirs"; then ok; else bad "$name: memtrace's dump_trace decodes otherwise"; fi
      fi
    done
  done
done
[ -x "$ref" ] || skip "memtrace's dump_trace (not installed: set MEMTRACE_REFERENCE)"

# --memtrace-format 3: the same events as format 2 for the same run.
for format in 2 3; do
  MINNOW_SEED=7 ./vm --memtrace "$tmp/f$format.ctf" --memtrace-format "$format" --memtrace-rate 0.01 \
    tests/memtrace/marker.mn end > /dev/null 2>&1
  dump_events $mt dump "$tmp/f$format.ctf" > "$tmp/f$format.txt" 2>&1
done
if [ -s "$tmp/f2.txt" ] && cmp -s "$tmp/f2.txt" "$tmp/f3.txt" && $mt info "$tmp/f3.ctf" | grep -q 'version 3'; then ok
else bad "--memtrace-format 3: not the events of format 2, or not version 3"; fi

# 2. Every way out flushes and closes the trace.
# way NAME HOW WANT_STATUS [SIGNAL]
way() {
  local name=$1 how=$2 want=$3 sig=${4:-} status
  rm -f "$tmp/w.ctf"
  if [ -z "$sig" ]; then
    ./vm --memtrace "$tmp/w.ctf" --memtrace-rate 1 tests/memtrace/marker.mn "$how" > /dev/null 2> "$tmp/err"
    status=$?
  else
    run_signalled 0.5 "$sig" /dev/null "$tmp/err" ./vm --memtrace "$tmp/w.ctf" --memtrace-rate 1 tests/memtrace/marker.mn "$how"
    status=$?
  fi
  if [ "$status" -ne "$want" ]; then bad "$name: exit $status, expected $want"; return; fi
  if ! $mt dump "$tmp/w.ctf" > "$tmp/d" 2> "$tmp/derr"; then bad "$name: the trace does not decode: $(head -1 "$tmp/derr")"; return; fi
  if ! grep -q ' len=777 ' "$tmp/d"; then bad "$name: the marker's event is missing"; return; fi
  if grep -q ' len=555 ' "$tmp/d"; then bad "$name: an event after Memtrace.stop"; return; fi
  ok
}
way "end of script" end 0
way "Sys.exit" exit 4
way "uncaught error" error 1
way "SIGINT" spin 130 INT
way "SIGTERM" spin 143 TERM
way "Memtrace.stop" stop 0

# 3. SIGKILL: readable up to the last whole packet.
./vm --memtrace "$tmp/k.ctf" --memtrace-rate 0.01 tests/memtrace/long_run.mn > /dev/null 2>&1 &
pid=$!
# Killed once the trace holds 64 KiB (some 9,000 events at this rate), not
# after a fixed sleep: a loaded machine may start the VM late. 60 s at most.
for _ in $(seq 600); do
  [ "$(stat -c %s "$tmp/k.ctf" 2> /dev/null || echo 0)" -ge 65536 ] && break
  sleep 0.1
done
kill -KILL "$pid"
wait "$pid" 2> /dev/null
$mt dump "$tmp/k.ctf" > "$tmp/kd" 2> "$tmp/kerr"
events=$(wc -l < "$tmp/kd")
if [ "$events" -lt 1000 ]; then bad "SIGKILL: only $events events decoded"
elif [ -s "$tmp/kerr" ] && ! grep -q 'truncat\|ends inside' "$tmp/kerr"; then bad "SIGKILL: $(head -1 "$tmp/kerr")"
else ok
fi

# 4. Write errors: tracing stops with one message, the program goes on.
# 50,000 pairs at rate 1: about 1.5 MB of trace, 20 times the limit or the pipe's buffer.
expected_out=$(./vm tests/memtrace/marker.mn end 50000)
( ulimit -f 64; ./vm --memtrace "$tmp/lim.ctf" --memtrace-rate 1 tests/memtrace/marker.mn end 50000 > "$tmp/out" 2> "$tmp/err" ); status=$?
if [ "$status" -ne 0 ] || [ "$(cat "$tmp/out")" != "$expected_out" ]; then bad "file size limit: exit $status"
elif [ "$(grep -c 'tracing stopped' "$tmp/err")" -ne 1 ] || ! grep -q 'File too large' "$tmp/err"; then bad "file size limit: stderr $(head -2 "$tmp/err")"
elif ! $mt dump "$tmp/lim.ctf" 2>&1 | grep -q ' alloc '; then bad "file size limit: nothing readable"
else ok
fi
# The reader may leave between two writes (EPIPE) or during one (a short
# write, and SIGPIPE raised all the same): which one varies run to run, so 8 runs.
pipe_bad=""
for run in 1 2 3 4 5 6 7 8; do
  ./vm --memtrace >(head -c 2000 > /dev/null) --memtrace-rate 1 tests/memtrace/marker.mn end 50000 > "$tmp/out" 2> "$tmp/err"; status=$?
  if [ "$status" -ne 0 ] || [ "$(cat "$tmp/out")" != "$expected_out" ]; then pipe_bad="run $run: exit $status"; break
  elif [ "$(grep -c 'tracing stopped' "$tmp/err")" -ne 1 ] || ! grep -q 'Broken pipe' "$tmp/err"; then pipe_bad="run $run: stderr $(head -2 "$tmp/err")"; break
  fi
done
if [ -n "$pipe_bad" ]; then bad "closed pipe: $pipe_bad"; else ok; fi

# 5. Command line and environment.
MEMTRACE="$tmp/e.ctf" MEMTRACE_RATE=0.5 ./vm tests/memtrace/marker.mn end > /dev/null 2>&1
if $mt info "$tmp/e.ctf" 2> /dev/null | grep -q 'sampling rate *0.5'; then ok; else bad "MEMTRACE and MEMTRACE_RATE"; fi
rm -f "$tmp/e.ctf"
MEMTRACE="$tmp/e.ctf" MEMTRACE_RATE=0.5 ./vm --memtrace "$tmp/f.ctf" --memtrace-rate 0.25 tests/memtrace/marker.mn end > /dev/null 2>&1
if [ ! -e "$tmp/e.ctf" ] && $mt info "$tmp/f.ctf" 2> /dev/null | grep -q 'sampling rate *0.25'; then ok; else bad "the flags win over the environment"; fi
./vm tests/memtrace/marker.mn end > /dev/null 2>&1 && ok || bad "no trace without MEMTRACE"
for args in "--memtrace-rate 0 --memtrace $tmp/x.ctf" "--memtrace-rate abc --memtrace $tmp/x.ctf" \
            "--memtrace-rate 1.5 --memtrace $tmp/x.ctf" "--memtrace /nonexistent-dir/x.ctf" \
            "--memtrace-format 4 --memtrace $tmp/x.ctf"; do
  # shellcheck disable=SC2086
  ./vm $args tests/memtrace/marker.mn end > "$tmp/out" 2> "$tmp/err"; status=$?
  if [ "$status" -eq 2 ] && [ ! -s "$tmp/out" ] && grep -q '^vm: \(option \)\{0,1\}--memtrace' "$tmp/err"; then ok
  else bad "'$args': exit $status, stdout $(wc -c < "$tmp/out") bytes, stderr $(head -1 "$tmp/err")"; fi
done
MEMTRACE="$tmp/x.ctf" MEMTRACE_RATE=7 ./vm tests/memtrace/marker.mn end > "$tmp/out" 2> "$tmp/err"; status=$?
if [ "$status" -eq 2 ] && [ ! -s "$tmp/out" ] && grep -q 'MEMTRACE_RATE' "$tmp/err"; then ok; else bad "MEMTRACE_RATE=7 accepted"; fi

# 6. Scripts with expectations.
lang_run "scripts of tests/memtrace" --vm ./vm tests/memtrace

rm -rf "$tmp"
suite_end
