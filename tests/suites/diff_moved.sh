#!/usr/bin/env bash
# diff_moved.sh - `memtrace diff` on one script run from two directories
# (issue 34: sites matched by path and line alone showed every site gone and
# new): without --strip-prefix the sites do not match and diff says on stderr
# that they would but for their directories, naming the option; with
# --strip-prefix DIR_A/ --strip-prefix-b DIR_B/ every site of the script is
# matched, none new or gone, and nothing is said; a prefix that names neither
# directory matches nothing more than without it; --by stack: whole stacks
# match with every frame's file stripped; the option's refusals.
# Last line: "N passed, N failed".
set -u
cd "$(dirname "$0")/../.." || exit 2
. tests/suites/lib.sh
suite_init diff_moved
require_built tools/memtrace build/asan/memtrace ./vm
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export MEMTRACE_PROGRESS=0

mkdir -p "$tmp/a" "$tmp/b/deeper"
cp examples/leaky_cache.mn "$tmp/a/x.mn"
cp examples/leaky_cache.mn "$tmp/b/deeper/x.mn"
MINNOW_SEED=1 ./vm --memtrace "$tmp/a.ctf" --memtrace-rate 1e-3 "$tmp/a/x.mn" >/dev/null
MINNOW_SEED=2 ./vm --memtrace "$tmp/b.ctf" --memtrace-rate 1e-3 "$tmp/b/deeper/x.mn" >/dev/null

for tool in tools/memtrace build/asan/memtrace; do
  # Without the option: the script's sites new and gone, and the hint.
  "$tool" diff -n 0 --json "$tmp/a.ctf" "$tmp/b.ctf" >"$tmp/plain.json" 2>"$tmp/plain.err"
  st=$?
  check "$tool diff, two directories: status 0 (got $st)" '[ $st = 0 ]'
  check "$tool diff, two directories: the hint on stderr names the option: $(head -c 300 "$tmp/plain.err")" \
    'grep -q "^memtrace diff: [0-9]* rows of B match rows of A but for the directory of their file (e.g. $tmp/b/deeper/x.mn): .*--strip-prefix DIR_OF_A/ --strip-prefix-b DIR_OF_B/" "$tmp/plain.err"'
  # With it: no row of the script on one side only.
  "$tool" diff -n 0 --json --strip-prefix "$tmp/a/" --strip-prefix-b "$tmp/b/deeper/" "$tmp/a.ctf" "$tmp/b.ctf" \
    >"$tmp/strip.json" 2>"$tmp/strip.err"
  st=$?
  check "$tool diff --strip-prefix: status 0 (got $st), nothing on stderr: $(head -c 300 "$tmp/strip.err")" '[ $st = 0 ] && [ ! -s "$tmp/strip.err" ]'
  read -r one_sided matched < <(python3 - "$tmp/strip.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
rows = d["rows"]
def side_bytes(r, k):
    return r[k]["bytes"] if isinstance(r.get(k), dict) else r.get(k, 0)
one = sum(1 for r in rows if "x.mn" in json.dumps(r) and (side_bytes(r, "a") == 0 or side_bytes(r, "b") == 0))
both = sum(1 for r in rows if "x.mn" in json.dumps(r) and side_bytes(r, "a") > 0 and side_bytes(r, "b") > 0)
print(one, both)
PY
)
  check "$tool diff --strip-prefix: the script's sites matched ($matched on both sides, $one_sided on one)" \
    '[ "${matched:-0}" -ge 3 ] && [ "${one_sided:-1}" = 0 ]'
  n_plain=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["keys_compared"])' "$tmp/plain.json")
  n_strip=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["keys_compared"])' "$tmp/strip.json")
  check "$tool diff --strip-prefix: fewer keys compared ($n_plain without, $n_strip with)" '[ "$n_strip" -lt "$n_plain" ]'
  "$tool" diff -n 0 --json --strip-prefix /no/such/dir/ "$tmp/a.ctf" "$tmp/b.ctf" >"$tmp/none.json" 2>/dev/null
  n_none=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["keys_compared"])' "$tmp/none.json")
  check "$tool diff --strip-prefix naming neither directory: as without it ($n_none keys)" '[ "$n_none" = "$n_plain" ]'
  # --by stack: every frame's file loses the prefix, so whole stacks match.
  for strip in "" "--strip-prefix $tmp/a/ --strip-prefix-b $tmp/b/deeper/"; do
    # shellcheck disable=SC2086
    "$tool" diff -n 0 --json --by stack $strip "$tmp/a.ctf" "$tmp/b.ctf" >"$tmp/st.json" 2>"$tmp/st.err"
    read -r one_sided matched < <(python3 - "$tmp/st.json" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))["rows"]
def side_bytes(r, k):
    return r[k]["bytes"] if isinstance(r.get(k), dict) else r.get(k, 0)
print(sum(1 for r in rows if side_bytes(r, "a") == 0 or side_bytes(r, "b") == 0),
      sum(1 for r in rows if side_bytes(r, "a") > 0 and side_bytes(r, "b") > 0))
PY
)
    if [ -z "$strip" ]; then
      check "$tool diff --by stack, two directories: no stack matched ($matched on both sides, $one_sided on one)" \
        '[ "${matched:-1}" = 0 ] && [ "${one_sided:-0}" -ge 6 ]'
    else
      check "$tool diff --by stack --strip-prefix: the stacks matched ($matched on both sides, $one_sided on one: stacks sampled in one run only)" \
        '[ "${matched:-0}" -ge 3 ] && [ "${one_sided:-99}" -lt "$matched" ]'
    fi
  done
done

# Refusals: usage errors, status 2.
for args in "--strip-prefix-b $tmp/b/ $tmp/a.ctf $tmp/b.ctf" "--strip-prefix= $tmp/a.ctf $tmp/b.ctf"; do
  # shellcheck disable=SC2086
  tools/memtrace diff $args >/dev/null 2>"$tmp/err"
  st=$?
  check "memtrace diff $args: a usage error (status 2, got $st): $(head -c 200 "$tmp/err")" '[ $st = 2 ] && grep -q "^memtrace diff: " "$tmp/err"'
done
suite_end
