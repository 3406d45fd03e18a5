// debug_checks.c - the debug build's ASSERTs (core/debug.h) are live: each
// test breaks one invariant in a child process, which must abort with the
// "invariant broken" message naming it. Built against build/debug/ only
// (Makefile, DEBUG_UNIT_TESTS), where DEBUG_CHECKS is true.
#include "test_support.h"
#include "../../memprof/memprof_internal.h"

// Runs `breaker` in a child with stderr captured; the child must die of
// SIGABRT after printing a line containing `expect`.
static void expect_broken(void (*breaker)(void), const char *expect) {
  char path[] = "/tmp/debug_checks_XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    dup2(fd, 2);
    breaker();
    _exit(0);   // the invariant held after all: a failure
  }
  int status = 0;
  waitpid(pid, &status, 0);
  char buf[4096] = {0};
  lseek(fd, 0, SEEK_SET);
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  unlink(path);
  assert_true(n > 0);
  assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT);
  assert_non_null(strstr(buf, "invariant broken"));
  assert_non_null(strstr(buf, expect));
}

static void live_list_not_ascending(void) {
  VmOptions o = ts_options();
  Vm *vm = vm_new(&o);
  static const uint32_t code[4] = {0};
  uint32_t live[3] = {0, 5, 3};
  const DebugInfo *d = frames_debug_new(vm->frames, "f", "f.mn", 1, 0, 1);
  FrameDesc desc = {.key = code, .live_count = 3, .live = frames_live_list(vm->frames, live, 3),
                    .debug_count = 1, .debug = &d};
  frames_add(vm->frames, &desc);
}

static void trigger_at_heap_start(void) {
  VmOptions o = ts_options();
  Vm *vm = vm_new(&o);
  vm->young_trigger = vm->young_start;   // no word below it to sample
  vm_update_limits(vm);
}

static void event_out_of_order(void) {
  VmOptions o = ts_options();
  Vm *vm = vm_new(&o);
  MemprofTracker t = {.native = true};
  assert_true(memprof_start_profile(vm, 1.0, 0, &t) >= 0);
  Memprof *mp = vm->memprof;
  // A promote delivered for an entry whose alloc was never delivered.
  mp->entries = calloc(1, sizeof(Entry));
  mp->entry_count = mp->entry_cap = 1;
  mp->entries[0] = (Entry){.in_use = true, .live = true, .pending = 1, .profile = mp->running[0]};
  mp->events = calloc(1, sizeof(Event));
  mp->event_cap = mp->event_count = 1;
  mp->events[0] = (Event){.kind = EV_PROMOTE, .entry = 0};
  memprof_run_callbacks(vm);
}

static void test_live_list(void **state) {
  (void)state;
  expect_broken(live_list_not_ascending, "live slots ascending");
}

static void test_young_limit(void **state) {
  (void)state;
  expect_broken(trigger_at_heap_start, "memprof's trigger lies in the free part of the minor heap");
}

static void test_event_order(void **state) {
  (void)state;
  expect_broken(event_out_of_order, "events of a block in order, each once");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_live_list),
      cmocka_unit_test(test_young_limit),
      cmocka_unit_test(test_event_order),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
