#!/usr/bin/env bash
# docs_examples.sh - every example of docs/language.md and docs/design.md runs
# with ./vm and prints exactly what the document says it prints.
#
# In a document, an example is a ```minnow block followed (blank lines apart)
# by an ```output block. The example is written to main.mn in a fresh
# directory and run there as `./vm main.mn`; its stdout then its stderr
# must equal the output block, and its exit status must be 0, or N when the
# output block opens as ```output status=N. A block opened as
# ```minnow file=NAME.mn is written to NAME.mn beside the next example (a
# module it imports) and is not run itself. A ```minnow block with no
# output block after it, or an output block with no example before it, fails.
# Without arguments it also checks that README.md's `./vm --help` block is
# what ./vm --help prints.
# Usage: docs_examples.sh [DOC...]   (default: docs/language.md docs/design.md)
# Run by tests/run_all.sh, which reads the last line: "N passed, N failed".
set -u
cd "$(dirname "$0")/../.." || exit 2
root=$(pwd)
. tests/suites/lib.sh
suite_init docs_examples
require_built ./vm

docs=("$@")
[ ${#docs[@]} -gt 0 ] || docs=(docs/language.md docs/design.md)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Splits a document into numbered pieces under $work/split/: for each fenced
# block of kind minnow or output, a file N.KIND holding its text and N.info
# holding the rest of its opening line (file=..., status=...) and the line
# number where it opens. Other fenced blocks are skipped whole.
split_doc() {
  rm -rf "$work/split"
  mkdir -p "$work/split"
  awk -v dir="$work/split" '
    function close_block() { if (out != "") close(out); out = "" }
    BEGIN { n = 0; inside = 0; out = "" }
    {
      if (!inside && $0 ~ /^```/) {
        inside = 1
        info = substr($0, 4)
        kind = info; sub(/[ \t].*/, "", kind)
        rest = info; if (rest ~ /[ \t]/) sub(/^[^ \t]*[ \t]+/, "", rest); else rest = ""
        if (kind == "minnow" || kind == "output") {
          n++
          out = sprintf("%s/%04d.%s", dir, n, kind)
          printf "" > out
          printf "%s\nline=%d\n", rest, NR > sprintf("%s/%04d.info", dir, n)
          close(sprintf("%s/%04d.info", dir, n))
        }
        next
      }
      if (inside && $0 ~ /^```[ \t]*$/) { inside = 0; close_block(); next }
      if (inside && out != "") print > out
    }
    END { if (inside) print "unterminated block" > "/dev/stderr" }
  ' "$1"
}

# The value of key=VALUE in an info file, or empty.
info_get() { tr ' ' '\n' <"$1" | sed -n "s/^$2=//p" | head -1; }

run_doc() {
  local doc=$1 f kind info line name status expected got rc pending_files=() example=""
  [ -f "$doc" ] || return 0
  split_doc "$doc"
  for f in "$work"/split/*.minnow "$work"/split/*.output; do
    [ -e "$f" ] && echo "$f"
  done | sort >"$work/pieces"
  while read -r f; do
    kind=${f##*.}
    info=${f%.*}.info
    line=$(info_get "$info" line)
    if [ "$kind" = minnow ]; then
      name=$(info_get "$info" file)
      if [ -n "$name" ]; then
        pending_files+=("$f:$name")
        continue
      fi
      if [ -n "$example" ]; then
        bad "$doc:$example_line: example without an output block"
      fi
      example=$f
      example_line=$line
      continue
    fi
    if [ -z "$example" ]; then
      bad "$doc:$line: output block without an example before it"
      continue
    fi
    status=$(info_get "$info" status)
    status=${status:-0}
    rm -rf "$work/run"
    mkdir -p "$work/run"
    local p
    for p in "${pending_files[@]+"${pending_files[@]}"}"; do
      cp "${p%%:*}" "$work/run/${p##*:}"
    done
    cp "$example" "$work/run/main.mn"
    got=$(cd "$work/run" && timeout 60 "$root/vm" main.mn 2>"$work/stderr" </dev/null; echo "rc=$?")
    rc=${got##*rc=}
    got=${got%rc=*}
    got=$(printf '%s' "$got"; cat "$work/stderr")
    expected=$(cat "$f")
    if [ "$got" = "$expected" ] && [ "$rc" = "$status" ]; then
      ok
    else
      bad "$doc:$example_line: example (status $rc, expected $status)"
      diff <(printf '%s\n' "$expected") <(printf '%s\n' "$got") | head -20
    fi
    example=""
    pending_files=()
  done <"$work/pieces"
  if [ -n "$example" ]; then
    bad "$doc:$example_line: example without an output block"
  fi
}

for doc in "${docs[@]}"; do run_doc "$doc"; done

# README.md's "Command line" shows `./vm --help` whole: it must be what the
# VM prints (when the default documents are checked).
if [ $# -eq 0 ]; then
  awk '/^\$ \.\/vm --help$/ { on = 1; next } on && /^```/ { exit } on' README.md >"$work/readme_help"
  ./vm --help >"$work/vm_help"
  check "README.md's ./vm --help is what ./vm --help prints ($(diff "$work/readme_help" "$work/vm_help" | head -3 | tr '\n' ' '))" \
    '[ -s "$work/vm_help" ] && cmp -s "$work/readme_help" "$work/vm_help"'
fi
suite_end
