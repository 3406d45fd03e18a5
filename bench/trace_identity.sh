#!/usr/bin/env bash
# trace_identity.sh - do the 30 bench traces still say the same thing?
# The check a change to the interpreter, the compiler or memprof runs to show
# that it changed no trace (bench/TRACE.md, "The 30 traces"): the five bench
# programs at their trace sizes, seeds 1-3 (MINNOW_SEED), rates 1e-4 and 1e-3,
# the end state included (no --memtrace-no-end-state). Each run is made
# repeatable: the clock a counter and the pid a constant (identity/clock_shim.c,
# LD_PRELOAD'ed), ASLR off (setarch -R), every malloc mmap'd
# (MALLOC_MMAP_THRESHOLD_=0). What is compared is what the trace says, not its
# bytes: the sha256 of `tools/memtrace dump` (every event, its time, its
# callstack as names and positions) and of `tools/memtrace paths` (the end
# state), and the program's output. Code addresses are in the .ctf (a
# location's key) and move when the bytecode's layout does, so the .ctf bytes
# may differ while the dumps are identical: the byte comparison is reported
# beside, for information.
#
# Usage (from anywhere; runs in the repository's root):
#   bash bench/trace_identity.sh save DIR [VM]    record the 30 digests of VM (default ./vm)
#   bash bench/trace_identity.sh check DIR [VM]   compare VM's against DIR's; exit 1 on a difference
# Environment (optional):
#   TRACE_IDENTITY_TOOL=tools/memtrace   the reader (use the same one for save and check)
#   TRACE_IDENTITY_CASES="prog args;..."  default: the five below
#   TRACE_IDENTITY_SEEDS="1 2 3"  TRACE_IDENTITY_RATES="1e-4 1e-3"
#   TRACE_IDENTITY_KEEP=DIR        keep each trace and its end state there (to diff dumps)
# A reference is usually the build of the commit before the change:
#   git worktree add /tmp/ref HEAD~ && make -C /tmp/ref vm && \
#   bash bench/trace_identity.sh save /tmp/ref-digests /tmp/ref/vm
set -u -o pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")

mode=${1:-}
dir=${2:-}
if { [ "$mode" != save ] && [ "$mode" != check ]; } || [ -z "$dir" ]; then
  echo "usage: trace_identity.sh save|check DIR [VM]" >&2
  exit 2
fi
vm=$(realpath "${3:-$root/vm}") || exit 2
tool=$(realpath "${TRACE_IDENTITY_TOOL:-$root/tools/memtrace}") || exit 2
keep=${TRACE_IDENTITY_KEEP:-}
cases=$(printf '%s\n' "${TRACE_IDENTITY_CASES:-binary_trees 15;list_pipeline 10000 80;deep_map 10000 80;word_count 200000;string_build 2000 40}" |
  tr ';' '\n' | sed 's/^ *//; s/ *$//; /^$/d')
seeds=${TRACE_IDENTITY_SEEDS:-1 2 3}
rates=${TRACE_IDENTITY_RATES:-1e-4 1e-3}
for f in "$vm" "$tool"; do [ -x "$f" ] || { echo "trace_identity: $f: not an executable" >&2; exit 2; }; done
command -v setarch >/dev/null || { echo "trace_identity: setarch (util-linux) is needed" >&2; exit 2; }

# A fixed directory (locked: one check at a time per user), so that the
# executable's path, which the trace's header holds, is the same in every run.
tmp=${TMPDIR:-/tmp}/minnow_trace_identity.$(id -u)
mkdir -p "$tmp" || exit 1
exec 9>"$tmp/lock"
flock 9 || exit 1
trap 'rm -f "$tmp"/vm "$tmp"/t.ctf* "$tmp"/std* "$tmp"/lines "$tmp"/digests "$tmp"/diff "$tmp"/clock_shim.so' EXIT
cp "$vm" "$tmp/vm" || exit 1
shim=$tmp/clock_shim.so
cc -O2 -shared -fPIC -o "$shim" "$here/identity/clock_shim.c" || exit 1
[ -n "$keep" ] && mkdir -p "$keep"
mkdir -p "$dir" || exit 1

# One line a case: name, then digests of the dump, the paths, the output, the
# .ctf bytes, and the dump's line count.
out=$tmp/digests
: >"$out"
failed=0
cd "$root" || exit 1
while read -r prog args; do
  for seed in $seeds; do
    for rate in $rates; do
      name="${prog}_${args// /_}_s${seed}_r${rate}"
      rm -f "$tmp/t.ctf" "$tmp/t.ctf.retain"
      # shellcheck disable=SC2086 # args split on purpose
      if ! env LD_PRELOAD="$shim" MALLOC_MMAP_THRESHOLD_=0 MINNOW_SEED="$seed" \
          setarch "$(uname -m)" -R "$tmp/vm" --memtrace "$tmp/t.ctf" --memtrace-rate "$rate" \
          "bench/programs/$prog.mn" $args >"$tmp/stdout" 2>"$tmp/stderr" </dev/null; then
        echo "trace_identity: $name: the run failed:" >&2
        cat "$tmp/stderr" >&2
        failed=1
        continue
      fi
      dump=$( (cd "$tmp" && "$tool" dump t.ctf) | tee >(wc -l >"$tmp/lines") | sha256sum | cut -c1-16) || failed=1
      paths=$( (cd "$tmp" && "$tool" paths t.ctf) | sha256sum | cut -c1-16) || failed=1
      wait
      printf '%s dump=%s lines=%s paths=%s stdout=%s bytes=%s\n' "$name" "$dump" "$(cat "$tmp/lines")" "$paths" \
        "$(sha256sum <"$tmp/stdout" | cut -c1-16)" "$(sha256sum <"$tmp/t.ctf" | cut -c1-16)" >>"$out"
      [ -n "$keep" ] && cp "$tmp/t.ctf" "$keep/$name.ctf" && cp "$tmp/t.ctf.retain" "$keep/$name.ctf.retain"
    done
  done
done <<<"$cases"
[ "$failed" -eq 0 ] || exit 1

n=$(wc -l <"$out")
if [ "$mode" = save ]; then
  cp "$out" "$dir/digests"
  echo "trace_identity: $n traces of $vm recorded in $dir/digests"
  exit 0
fi
ref=$dir/digests
[ -f "$ref" ] || { echo "trace_identity: $ref: no digests (run save first)" >&2; exit 2; }
strip_bytes() { sed 's/ bytes=[0-9a-f]*$//' "$1"; }
if diff <(strip_bytes "$ref") <(strip_bytes "$out") >"$tmp/diff"; then
  same_bytes=$(diff "$ref" "$out" >/dev/null && echo "all" || echo "not all")
  echo "trace_identity: $n traces: dumps, end states and outputs identical to $ref ($same_bytes .ctf byte-identical)"
  exit 0
fi
echo "trace_identity: the traces differ from $ref (< reference, > $vm):" >&2
cat "$tmp/diff" >&2
exit 1
