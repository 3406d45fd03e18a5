// test_tool_stack_budget.c - cmocka tests of the bound on whole-stack
// outputs (tools/memtrace_cli/analysis/stack_budget.c): stacks taken while
// they fit, exactly up to the limit; from the first that does not fit,
// every later one left out (a smaller one too) with its entries and value
// counted; 0 lifts the limit; setting the limit again resets the counts.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "analysis/stack_budget.h"

static void test_default(void **state) {
  (void)state;
  assert_int_equal(stack_budget_limit(), STACK_BUDGET_DEFAULT);
  assert_int_equal(STACK_BUDGET_DEFAULT, 4194304);
}

static void test_limit(void **state) {
  (void)state;
  stack_budget_set(10);
  assert_true(stack_budget_take(4, 1));
  assert_true(stack_budget_take(6, 2));   // exactly at the limit
  assert_int_equal(stack_budget_left().stacks, 0);
  assert_false(stack_budget_take(1, 3));  // past it
  assert_false(stack_budget_take(0, 4));  // and every later one, even empty
  StackBudgetLeft left = stack_budget_left();
  assert_int_equal(left.stacks, 2);
  assert_int_equal(left.entries, 1);
  assert_true(left.value == 7);
}

static void test_first_too_big_stops_all(void **state) {
  (void)state;
  stack_budget_set(100);
  assert_true(stack_budget_take(50, 0));
  assert_false(stack_budget_take(60, 5));
  assert_false(stack_budget_take(10, 5));  // would fit, but the output stopped
  assert_int_equal(stack_budget_left().stacks, 2);
  assert_int_equal(stack_budget_left().entries, 70);
}

static void test_no_limit_and_reset(void **state) {
  (void)state;
  stack_budget_set(0);
  for (int i = 0; i < 1000; i++) assert_true(stack_budget_take(UINT32_MAX, 1));
  assert_int_equal(stack_budget_left().stacks, 0);
  stack_budget_set(1);
  assert_false(stack_budget_take(2, 1));
  stack_budget_set(1);  // counts reset
  assert_int_equal(stack_budget_left().stacks, 0);
  assert_true(stack_budget_take(1, 1));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_default),
      cmocka_unit_test(test_limit),
      cmocka_unit_test(test_first_too_big_stops_all),
      cmocka_unit_test(test_no_limit_and_reset),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
