# shellcheck shell=bash
# trace_perf.sh - the perf half of bench/trace_bench.sh (sourced by it): how
# perf record is run, how big its files are per sample, and what its samples
# name. Needs `perf` (Debian's linux-perf), `nm` and `addr2line` (binutils).
#
# Every perf run is
#   perf record --no-bpf-event -e cpu-clock -F FREQ [--call-graph=fp|dwarf] -o FILE -- TIMER BIN ARGS
# cpu-clock is the software event (no hardware counters needed, as in a VM);
# --no-bpf-event spares perf ~0.9 s at startup spent describing the kernel's
# BPF programs, which have nothing to do with the program. TIMER is the bash
# wrapper of trace_bench.sh that times the program alone, so that perf's own
# start and finish (~0.3 s, in the perf process) do not count as the
# program's time; its few samples of bash (exec, about 1 %) stay in the file.

# Why perf cannot record here, on stdout; nothing if it can.
perf_unavailable() {
  if ! command -v perf >/dev/null 2>&1; then
    echo "perf is not installed (apt-get install linux-perf)"
    return
  fi
  local probe
  probe=$(mktemp) || { echo "mktemp failed"; return; }
  if ! perf record -q --no-bpf-event -e cpu-clock -F 1000 -o "$probe" -- true >/dev/null 2>"$probe.err"; then
    echo "perf record is not permitted or fails here: $(grep -v '^$' "$probe.err" | head -n 1)" \
      "(kernel.perf_event_paranoid is $(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo '?'))"
  fi
  for tool in nm addr2line; do
    command -v "$tool" >/dev/null 2>&1 || echo "$tool is missing (apt-get install binutils)"
  done
  rm -f "$probe" "$probe.err"
}

# The highest -F the kernel accepts now (it lowers it by itself when sample
# interrupts take too long).
perf_max_freq() { cat /proc/sys/kernel/perf_event_max_sample_rate 2>/dev/null || echo 1000; }

# perf_record MODE FREQ DATA -- COMMAND...: MODE none, fp or dwarf; perf's
# messages go to DATA.log. Returns perf's exit status (the command's).
perf_record() {
  local mode=$1 freq=$2 data=$3
  shift 4
  local graph=()
  case $mode in
    fp) graph=(--call-graph=fp) ;;
    dwarf) graph=(--call-graph=dwarf) ;;
  esac
  perf record --no-bpf-event -e cpu-clock -F "$freq" "${graph[@]}" -o "$data" -- "$@" </dev/null >/dev/null 2>"$data.log"
}

# Samples written, from perf record's last message ("... (N samples) ]").
perf_logged_samples() { sed -n 's/.*(\([0-9]*\) samples).*/\1/p' "$1.log" | tail -n 1; }

# perf_sizes DATA: "file_bytes data_bytes sample_bytes samples lost_samples".
# data_bytes: the data section (samples, and the mmap, comm and other
# records a reader needs); the file adds a header and the features after
# it (build ids, command line, CPU and memory topology). sample_bytes: the
# PERF_RECORD_SAMPLE records alone (size from perf report -D).
perf_sizes() {
  local data=$1 file_bytes data_bytes
  file_bytes=$(stat -c %s "$data")
  data_bytes=$(perf report -i "$data" --header-only 2>/dev/null | sed -n 's/^# data size *: *\([0-9]*\).*/\1/p')
  perf report -D -i "$data" 2>/dev/null |
    awk -v fb="$file_bytes" -v db="${data_bytes:-0}" '
      function hex(s,   i, c, v) { v = 0; s = tolower(s)
        for (i = 1; i <= length(s); i++) { c = index("0123456789abcdef", substr(s, i, 1)); v = v * 16 + c - 1 }
        return v }
      / PERF_RECORD_SAMPLE\(/ { if (match($0, /\[0x[0-9a-fA-F]+\]/)) { n++; bytes += hex(substr($0, RSTART + 3, RLENGTH - 4)) } }
      / PERF_RECORD_LOST_SAMPLES: / { if (match($0, /lost: ?[0-9]+/)) { s = substr($0, RSTART, RLENGTH); gsub(/[^0-9]/, "", s); lost += s } }
      / PERF_RECORD_LOST: / { if (match($0, /lost: ?[0-9]+/)) { s = substr($0, RSTART, RLENGTH); gsub(/[^0-9]/, "", s); lost += s } }
      END { printf "%d %d %d %d %d\n", fb, db, bytes, n, lost }'
}

# --------------------------------------------------------------------------
# What perf's samples name
#
# perf_names DATA BIN SRCDIR: one CSV fragment for the samples of the
# program itself (comm vm or vm-fp; the bash wrapper's samples are left
# out):
#   samples,minnow_line,alloc,collector,dispatch,primitives,startup,libc,kernel,other,
#   mean_frames,max_frames,top_innermost
# All but samples and the frame counts are shares of samples (0..1), by the
# innermost frame, the sampled instruction:
#   minnow_line  its source line is in a Minnow file (*.mn): perf resolves
#                addresses through the binary's DWARF, which describes C
#   alloc        allocation code: any function of the inline chain at that
#                address is in gc/heap.c or gc/gc.h (the allocation funnels,
#                inline in their callers), or it is the interpreter's
#                allocation slow path (alloc1_slow, allocn_slow), or a line of
#                an allocation instruction's handler in the dispatch loop
#                (op_ALLOC* in lang/runtime/interp.c: the inline bump allocation)
#   collector    gc/minor.c, major.c, roots.c, verify.c, core/frames.c
#   dispatch     the rest of lang/runtime/interp.c (the dispatch loop)
#   primitives   the rest of lang/ (builtins, ops, shapes) and memprof/, trace/
#   startup      lexer, parser, compiler, stdlib embedding (lang/front/lexer.c ...)
#   libc, kernel the C library and loader; [kernel.kallsyms]
# mean_frames / max_frames: frames per callchain (0 without a call graph),
# inlined frames not counted. top_innermost: the commonest innermost
# function:line ("interpret interp.c:633"), with its share.
perf_names() {
  local data=$1 bin=$2 src=$3 tmpd
  tmpd=$(mktemp -d) || return 1
  local base
  base=$(basename "$bin")
  # Symbol addresses of the binary (perf gives sym+offset; addr2line wants
  # the address).
  nm --defined-only "$bin" | awk '$2 ~ /^[tTwW]$/ { print $3, $1 }' >"$tmpd/syms"
  # Line ranges of the allocation instructions' handlers in the dispatch loop.
  awk '/^op_[A-Z0-9_]+:/ { if (open) print start, NR - 1; open = ($0 ~ /^op_ALLOC/); start = NR }
       END { if (open) print start, NR }' "$src/lang/runtime/interp.c" >"$tmpd/alloc_lines"
  # One line per sample of the program: "innermost_dso innermost_sym+off frames".
  # perf script prints a sample without a call graph on one line, "comm ip
  # sym+off (dso)"; with one, a line "comm", a tab-indented line per frame
  # (innermost first), and an empty line.
  perf script -i "$data" -F comm,ip,sym,symoff,dso --no-inline 2>/dev/null |
    awk -v base="$base" '
      function flush() { if (have && comm == base) print dso, sym, frames; have = 0 }
      /^\t/ { frames++; if (frames == 1) { sym = $2; dso = $NF }; next }
      /^[ \t]*$/ { flush(); next }
      { flush(); comm = $1; have = 1; frames = 0; sym = ""; dso = ""
        if (NF >= 4) { sym = $3; dso = $NF } }
      END { flush() }' >"$tmpd/samples"
  # Addresses inside the binary, resolved with their inline chains.
  awk -v bin="($bin)" 'FILENAME == ARGV[1] { addr[$1] = $2; next }
    $1 == bin { s = $2; off = 0; p = index(s, "+0x")
      if (p) { off = s; s = substr(s, 1, p - 1); off = substr(off, p + 3) }
      if (s in addr) printf "%s %s\n", $2, addr[s] "+" off }' "$tmpd/syms" "$tmpd/samples" | sort -u >"$tmpd/symaddr"
  awk '{ split($2, a, "+"); print a[1], a[2] }' "$tmpd/symaddr" |
    while read -r a o; do printf '0x%x\n0\n' $((0x$a + 0x$o)); done >"$tmpd/addrs"
  # addr2line -f -i: per address its inline chain (function, file:line
  # pairs), innermost first; the 0 after each address ends the chain.
  addr2line -f -i -e "$bin" <"$tmpd/addrs" |
    awk 'BEGIN { n = 0; chain = "" }
      { fn = $0; getline loc
        if (fn == "??" && loc ~ /^\?\?:0/) { print chain; chain = ""; next }
        sub(/ \(discriminator [0-9]+\)/, "", loc); chain = chain (chain == "" ? "" : "|") fn "@" loc }' >"$tmpd/chains"
  paste -d' ' <(cut -d' ' -f1 "$tmpd/symaddr") "$tmpd/chains" >"$tmpd/resolved"
  awk -v bin="($bin)" -v src="$src/" '
    FILENAME == ARGV[1] { lo[++nr] = $1; hi[nr] = $2; next }
    FILENAME == ARGV[2] { chain[$1] = $2; next }
    function rel(f) { sub("^" src, "", f); return f }
    function in_alloc_op(line,   k) { for (k = 1; k <= nr; k++) if (line >= lo[k] && line <= hi[k]) return 1; return 0 }
    {
      n++
      dso = $1; s = $2; fr = $3
      if (fr > 0) { frames += fr; if (fr > maxf) maxf = fr }
      cat = "other"; where = s
      if (dso ~ /kernel\.kallsyms/) { cat = "kernel"; sub(/\+0x.*/, "", where) }
      else if (dso ~ /\/(libc|ld-linux|libm)[^\/]*\.so/) { cat = "libc"; sub(/\+0x.*/, "", where) }
      else if (dso == bin && (s in chain)) {
        k = split(chain[s], c, "|")
        # c[1] innermost (inlined) ... c[k] the function itself.
        split(c[k], outer, "@"); ofile = rel(outer[2]); sub(/:.*/, "", ofile)
        oline = outer[2]; sub(/.*:/, "", oline)
        ifn = c[1]; sub(/@.*/, "", ifn); iloc = c[1]; sub(/^[^@]*@/, "", iloc); sub(/.*\//, "", iloc)
        where = outer[1] " " iloc
        alloc = 0
        for (j = 1; j <= k; j++) { f = c[j]; sub(/^[^@]*@/, "", f); f = rel(f); sub(/:.*/, "", f)
          if (f ~ /(^|\/)gc\/(heap\.c|gc\.h)$/) alloc = 1 }
        if (outer[1] ~ /^alloc(1|n)_slow/) alloc = 1
        if (ofile ~ /lang\/interp\.c$/ && outer[1] ~ /^interpret/ && in_alloc_op(oline + 0)) alloc = 1
        if (iloc ~ /\.mn:/) minnow++
        if (alloc) cat = "alloc"
        else if (ofile ~ /gc\/(minor|major|roots|verify)\.c$|lang\/frames\.c$/) cat = "collector"
        else if (ofile ~ /lang\/interp\.c$/) cat = "dispatch"
        else if (ofile ~ /lang\/(lexer|parser|compiler|arena|ast_dump|disasm|stdlib_sources|main|vm)\.c$/) cat = "startup"
        else if (ofile ~ /(lang|memprof|trace)\//) cat = "primitives"
      }
      count[cat]++; top[where]++
    }
    END {
      if (!n) { print "0,,,,,,,,,,,,"; exit }
      best = ""; for (w in top) if (best == "" || top[w] > top[best]) best = w
      printf "%d,%.4f", n, minnow / n
      split("alloc collector dispatch primitives startup libc kernel other", cats, " ")
      for (i = 1; i <= 8; i++) printf ",%.4f", count[cats[i]] / n
      printf ",%.1f,%d,%s (%.1f%%)\n", frames / n, maxf, best, 100 * top[best] / n
    }' "$tmpd/alloc_lines" "$tmpd/resolved" "$tmpd/samples"
  rm -rf "$tmpd"
}
