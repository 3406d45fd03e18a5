// stack_budget.h - the bound on what the whole-stack outputs of one run
// write: folded stacks (flamegraph), flamegraph --json, the "stack" of
// top and diff --by stack --json, the "callers" of leaks --json. Each
// prints every distinct stack whole, so its size follows depth x distinct
// stacks, not the trace: a 960 KB trace of 50 stacks 300,000 frames deep
// (with --whole-stacks), or of 12,000 stacks down one chain of distinct
// functions, asks for 0.4 to 3 GB of text.
//
// Contract
// 1. A run writes at most stack_budget_limit() entries of stacks in all,
//    an entry being what the output writes as one: a frame, or a folded run
//    ("f ×N", "(f → g) ×N", a leaks callers line). STACK_BUDGET_DEFAULT
//    unless stack_budget_set (the commands' --max-frames N); 0: no limit.
// 2. Stacks are taken whole or not at all, in the order the output writes
//    them: the first stack that would pass the limit is left out, and so is
//    every later one (so the work past the limit is O(1) a stack, and what
//    was written is a prefix of the full output).
// 3. What was left out (stacks, entries, their value: bytes for a flame
//    graph) is counted for the command to say: stack_budget_note on stderr,
//    and the output itself where its format can hold it. Nothing is left
//    out silently.
// One budget per process (the commands run one at a time), as
// out_set_whole_stacks.
#ifndef MINNOW_MEMTRACE_STACK_BUDGET_H
#define MINNOW_MEMTRACE_STACK_BUDGET_H

#include <stdbool.h>
#include <stdint.h>

enum { STACK_BUDGET_DEFAULT = 1 << 22 };  // 4,194,304 entries

// The limit (0: none); resets the counts.
void stack_budget_set(uint64_t max_entries);
uint64_t stack_budget_limit(void);

// Whether a stack of `entries` entries may be written: true counts it as
// written; false counts it, with `value`, as left out (contract 2).
bool stack_budget_take(uint64_t entries, double value);

typedef struct StackBudgetLeft {
  uint64_t stacks, entries;  // left out
  double value;              // the sum of their values
} StackBudgetLeft;

StackBudgetLeft stack_budget_left(void);

// When something was left out, one line on stderr: "memtrace COMMAND: N
// stacks (E frames[, P% of the bytes]) left out past the limit of L frames
// written; --max-frames 0 writes them all". total_value > 0 adds the share
// of it the stacks left out hold.
void stack_budget_note(const char *command, double total_value);

#endif
