#!/usr/bin/env bash
# run_lang.sh - run the Minnow script tests (tests/lang/**/*.mn) against the VM.
# Each script states its expected stdout, stderr and exit status in comments;
# the format is documented in tests/README.md.
#
# usage: tests/run_lang.sh [--vm PATH] [--flags "VM FLAGS"] [--args "SCRIPT ARGS"] [--timeout SECS] [FILES_OR_DIRS...]
# --args replaces every script's `// args:` (tests/memprof/rates run at several rates).
set -u

usage() {
  echo "usage: $0 [--vm PATH] [--flags \"VM FLAGS\"] [--args \"SCRIPT ARGS\"] [--timeout SECS] [FILES_OR_DIRS...]" >&2
  exit 2
}

root=$(cd "$(dirname "$0")/.." && pwd)
orig=$(pwd)
vm=""
flags=""
args_override=""
has_override=false
limit=60
paths=()
while [ $# -gt 0 ]; do
  case "$1" in
    --vm) [ $# -ge 2 ] || usage; vm=$2; shift 2 ;;
    --flags) [ $# -ge 2 ] || usage; flags=$2; shift 2 ;;
    --args) [ $# -ge 2 ] || usage; args_override=$2; has_override=true; shift 2 ;;
    --timeout) [ $# -ge 2 ] || usage; limit=$2; shift 2 ;;
    -h|--help) usage ;;
    --) shift; paths+=("$@"); break ;;
    -*) echo "$0: unknown option $1" >&2; usage ;;
    *) paths+=("$1"); shift ;;
  esac
done

# Scripts run from the repository root with root-relative paths, so that error
# messages read `tests/lang/area/name.mn:3:5: error: ...`.
if [ -z "$vm" ]; then
  vm="$root/vm"
else
  case "$vm" in
    /*) ;;
    */*) vm="$orig/$vm" ;;
  esac
fi
[ ${#paths[@]} -gt 0 ] || paths=("$root/tests/lang")

files=()
for p in "${paths[@]}"; do
  case "$p" in /*) ;; *) p="$orig/$p" ;; esac
  if [ -d "$p" ]; then
    while IFS= read -r f; do files+=("$f"); done < <(find "$p" -type f -name '*.mn')
  elif [ -f "$p" ]; then
    files+=("$p")
  else
    echo "$0: no such file or directory: $p" >&2
    exit 2
  fi
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$root" || exit 2

# directive NAME FILE: the text after `// NAME: ` on each line that has it, in order.
directive() {
  sed -n "s|^.*// $1:\\( \\(.*\\)\\)\\{0,1\\}\$|\\2|p" "$2"
}

# expectations NAME FILE: one line per expected output line, in order: `L` then
# the text for `// NAME: TEXT` (`// NAME:` alone is an empty line), `R` then the
# regex for `// NAME re: REGEX`.
expectations() {
  sed -n -e "s|^.*// $1 re:\\( \\(.*\\)\\)\\{0,1\\}\$|R\\2|p;t" \
    -e "s|^.*// $1:\\( \\(.*\\)\\)\\{0,1\\}\$|L\\2|p" "$2"
}

# matches WANT ACTUAL: ACTUAL is WANT's lines, literal lines byte for byte and
# regex lines matched as a whole (POSIX extended regex).
matches() {
  if ! grep -q '^R' "$1"; then
    cut -c2- "$1" | cmp -s - "$2"
    return
  fi
  [ "$(wc -l < "$1")" -eq "$(wc -l < "$2")" ] || return 1
  awk 'NR == FNR { want[FNR] = $0; next }
       { t = substr(want[FNR], 1, 1); w = substr(want[FNR], 2)
         if (t == "L" ? $0 != w : $0 !~ ("^(" w ")$")) bad = 1 }
       END { exit bad }' "$1" "$2"
}

# show_diff LABEL WANT ACTUAL: the first 20 lines of a unified diff.
show_diff() {
  echo "  $1:"
  cut -c2- "$2" | diff -u --label expected --label actual - "$3" | head -n 20 | sed 's/^/    /'
}

passed=0
failed=0
while IFS= read -r abs; do
  [ -n "$abs" ] || continue
  rel=$(realpath -m --relative-to="$root" "$abs")
  head -n 1 "$rel" | grep -q '^// module: not a test' && continue

  expectations expect "$rel" > "$tmp/want_out"
  expectations 'expect stderr' "$rel" > "$tmp/want_err"
  want_exit=$(directive 'expect exit' "$rel" | tail -n 1)
  [ -n "$want_exit" ] || want_exit=0
  if $has_override; then
    read -r -a args <<< "$args_override"
  else
    read -r -a args <<< "$(directive args "$rel" | tail -n 1)"
  fi

  # The outer 2>/dev/null silences bash's own "Segmentation fault" report.
  # shellcheck disable=SC2086  # flags are split on purpose
  { timeout "$limit" "$vm" $flags "$rel" "${args[@]}" > "$tmp/out" 2> "$tmp/err" < /dev/null; rc=$?; } 2> /dev/null

  reasons=()
  if [ $rc -eq 124 ]; then
    reasons+=("timed out after ${limit}s")
  elif [ $rc -ne "$want_exit" ]; then
    if [ $rc -gt 128 ]; then
      reasons+=("killed by signal $((rc - 128)) (expected exit $want_exit)")
    else
      reasons+=("exit $rc, expected $want_exit")
    fi
  fi
  matches "$tmp/want_out" "$tmp/out" || reasons+=("stdout differs")
  if [ -s "$tmp/want_err" ]; then
    matches "$tmp/want_err" "$tmp/err" || reasons+=("stderr differs")
  elif [ -s "$tmp/err" ]; then
    reasons+=("unexpected stderr")
  fi

  if [ ${#reasons[@]} -eq 0 ]; then
    passed=$((passed + 1))
    continue
  fi
  failed=$((failed + 1))
  msg=$(printf '%s; ' "${reasons[@]}")
  echo "FAIL $rel: ${msg%; }"
  matches "$tmp/want_out" "$tmp/out" || show_diff stdout "$tmp/want_out" "$tmp/out"
  matches "$tmp/want_err" "$tmp/err" || show_diff stderr "$tmp/want_err" "$tmp/err"
done < <(printf '%s\n' "${files[@]}" | LC_ALL=C sort -u)

echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
