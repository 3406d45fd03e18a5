#!/usr/bin/env bash
# layout.sh - the structure the code keeps (issue 34; docs/design.md,
# "Directories and layers"):
#   1. the native API (lang/lib/native.h): each data module of the standard
#      library (every lang/lib/*.c but the runtime's own modules gc_module,
#      memprof_module and memtrace_module, the primitive table primitives.c
#      and the generated stdlib_sources.c) includes native.h, its own
#      module header and base/ alone among the project's headers, and reads
#      no field of the Vm (no `vm->`); the runtime's modules include native.h;
#   2. one hash: FNV-1a's offset and prime and MurmurHash3's finalizer
#      constants appear in base/hash.h alone, and SplitMix64's in
#      base/splitmix.h alone, outside the language's own value hash
#      (lang/runtime/ops.c, specified by tests/unit/test_ops.c), in the
#      product's code (base, core, gc, memprof, trace, lang, tools, bench).
# Reads the sources only: runs in a fraction of a second.
set -u
cd "$(dirname "$0")/../.." || exit 2
. tests/suites/lib.sh
suite_init layout

runtime_modules="gc_module memprof_module memtrace_module"
for f in lang/lib/*.c; do
  name=$(basename "$f" .c)
  case " $runtime_modules primitives stdlib_sources " in *" $name "*) continue ;; esac
  others=$(grep -o '^#include "[^"]*"' "$f" | sed 's/^#include "//; s/"$//' |
           grep -v -x -e native.h -e "$name.h" -e '../../base/[a-z_]*\.h' | tr '\n' ' ')
  if [ -z "$others" ]; then ok; else bad "$f includes more than native.h, its own header and base/: $others"; fi
  if grep -n 'vm->' "$f" | grep -v '^[0-9]*:\s*//' > /dev/null; then
    bad "$f reads a field of the Vm: $(grep -n 'vm->' "$f" | grep -v '^[0-9]*:\s*//' | head -3 | tr '\n' ' ')"
  else
    ok
  fi
  grep -q '^#include "native.h"' "$f" && ok || bad "$f does not include native.h"
done
for name in $runtime_modules; do
  grep -q '^#include "native.h"' "lang/lib/$name.c" && ok || bad "lang/lib/$name.c does not include native.h"
done

# 2. The hash's and the generator's constants, case-insensitively.
check_constants() {  # WHERE PATTERN...
  local where=$1 hits
  shift
  for c in "$@"; do
    hits=$(git grep -n -i "$c" -- base core gc memprof trace lang tools bench | grep -E '^[^:]*\.[ch]:' |
           grep -v -e "^$where:" -e '^lang/runtime/ops.c:')
    if [ -z "$hits" ]; then ok; else bad "$c outside $where: $(echo "$hits" | head -3 | tr '\n' ' ')"; fi
  done
}
check_constants base/hash.h cbf29ce484222325 100000001b3 ff51afd7ed558ccd c4ceb9fe1a85ec53
check_constants base/splitmix.h bf58476d1ce4e5b9 94d049bb133111eb

suite_end
