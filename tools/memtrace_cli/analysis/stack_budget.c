// stack_budget.c - the frames the whole-stack outputs may still write
// (stack_budget.h).
#include "stack_budget.h"

#include <stdio.h>

static uint64_t limit = STACK_BUDGET_DEFAULT, written;
static StackBudgetLeft left;

void stack_budget_set(uint64_t max_entries) {
  limit = max_entries;
  written = 0;
  left = (StackBudgetLeft){0, 0, 0};
}

uint64_t stack_budget_limit(void) { return limit; }

bool stack_budget_take(uint64_t entries, double value) {
  if (left.stacks == 0 && (limit == 0 || (written <= limit && entries <= limit - written))) {
    written += entries;
    return true;
  }
  left.stacks++;
  left.entries += entries;
  left.value += value;
  return false;
}

StackBudgetLeft stack_budget_left(void) { return left; }

void stack_budget_note(const char *command, double total_value) {
  if (left.stacks == 0) return;
  fprintf(stderr, "memtrace %s: %llu stack%s (%llu frames", command, (unsigned long long)left.stacks,
          left.stacks == 1 ? "" : "s", (unsigned long long)left.entries);
  if (total_value > 0) fprintf(stderr, ", %.3g%% of the bytes", 100 * left.value / total_value);
  fprintf(stderr, ") left out past the limit of %llu frames written; --max-frames 0 writes them all\n",
          (unsigned long long)limit);
}
