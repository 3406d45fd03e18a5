# reference.sh - sourced by the trace suites (trace_writer.sh, trace_reader.sh,
# memtrace.sh): where memtrace 0.2.3's prebuilt tools are, if anywhere.
# Those tools (dump_trace.exe, subsample.exe, built from Jane Street's
# memtrace) are not part of this repository; the suites cross-check against
# them when they are installed and say so, counting nothing, when not.
# Point MEMTRACE_REFERENCE at their directory (or at dump_trace.exe itself);
# MEMTRACE_TOOLS is accepted as an older name. Failing both, a few places a
# development machine keeps them are tried, relative to the repository root.
#
# memtrace_reference_dir: prints the directory holding dump_trace.exe, or
# returns 1.
memtrace_reference_dir() {
  local d
  for d in "${MEMTRACE_REFERENCE:-}" "${MEMTRACE_TOOLS:-}" \
           ../shared/reference/memtrace-0.2.3 ../../shared/reference/memtrace-0.2.3 \
           /work/shared/reference/memtrace-0.2.3; do
    [ -n "$d" ] || continue
    [ -f "$d" ] && d=$(dirname "$d")
    if [ -x "$d/dump_trace.exe" ]; then
      printf '%s\n' "$d"
      return 0
    fi
  done
  return 1
}
