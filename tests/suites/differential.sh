#!/usr/bin/env bash
# differential.sh (suite) - 2000 generated programs (seeds 1..2000,
# tests/gen/progen.c) on vm, vm-boehm, vm --gc-stress and vm-asan: identical
# output, errors and status (tests/gen/differential.sh; DIFF_COUNT changes
# the count). Ends with "N passed, N failed".
cd "$(dirname "$0")/../.." || exit 2
exec bash tests/gen/differential.sh "${DIFF_COUNT:-2000}" 1
