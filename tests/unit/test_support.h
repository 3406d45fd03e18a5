// test_support.h - helpers shared by the runtime's cmocka unit tests: a fresh
// VM per test (setup/teardown), Minnow programs written to temp files and
// compiled or run with stdout captured, forked runs for programs that exit,
// and small heap builders for the GC tests. Header-only (every function is
// static) because the Makefile links each tests/unit/test_*.c alone with the
// runtime objects.
#ifndef MINNOW_TEST_SUPPORT_H
#define MINNOW_TEST_SUPPORT_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../core/bytecode.h"
#include "../../lang/front/compiler.h"
#include "../../core/frames.h"
#include "../../gc/gc.h"
#include "../../lang/runtime/disasm.h"
#include "../../lang/runtime/interp.h"
#include "../../lang/vm.h"

#define TS_HELPER static __attribute__((unused))

enum { TS_MINOR_WORDS = 4096, TS_STACK_WORDS = 1 << 16 };

// The state cmocka hands every test (through *state).
typedef struct TestCtx {
  Vm *vm;
  char path[64];     // the program's temp file, "" when none was written
  char *argv[2];
  char *out;         // stdout of the last ts_run or ts_run_forked (owned)
  char *err;         // stderr of the last ts_run_forked (owned)
} TestCtx;

// Outcome of a program run in a child process.
typedef struct TsChild {
  int status;              // exit status, or 128 + signal number
  const char *out, *err;   // everything written to stdout and stderr (owned
                           // by the context, freed at teardown)
} TsChild;

TS_HELPER VmOptions ts_options(void) {
  VmOptions o;
  memset(&o, 0, sizeof o);
  o.stack_words = TS_STACK_WORDS;
  o.minor_words = TS_MINOR_WORDS;
  return o;
}

// cmocka setup: a fresh VM with a small minor heap (4096 words).
TS_HELPER int ts_setup(void **state) {
  TestCtx *t = calloc(1, sizeof *t);
  if (!t) return -1;
  VmOptions o = ts_options();
  t->vm = vm_new(&o);
  if (!t->vm) {
    free(t);
    return -1;
  }
  *state = t;
  return 0;
}

TS_HELPER int ts_teardown(void **state) {
  TestCtx *t = *state;
  if (!t) return 0;
  vm_free(t->vm);
  if (t->path[0]) unlink(t->path);
  free(t->out);
  free(t->err);
  free(t);
  *state = NULL;
  return 0;
}

TS_HELPER Vm *ts_vm(void **state) { return ((TestCtx *)*state)->vm; }

// Reads the whole file open at fd (from its start) into a NUL-terminated
// malloc'ed string.
TS_HELPER char *ts_slurp_fd(int fd) {
  size_t cap = 4096, n = 0;
  char *buf = malloc(cap);
  assert_non_null(buf);
  lseek(fd, 0, SEEK_SET);
  for (;;) {
    if (cap - n < 2) {
      cap *= 2;
      buf = realloc(buf, cap);
      assert_non_null(buf);
    }
    ssize_t got = read(fd, buf + n, cap - n - 1);
    if (got <= 0) break;
    n += (size_t)got;
  }
  buf[n] = 0;
  return buf;
}

// A temp file /tmp/minnow_unit_XXXXXX<suffix>, open for reading and writing.
TS_HELPER int ts_temp_file(char *path, size_t size, const char *suffix) {
  snprintf(path, size, "/tmp/minnow_unit_XXXXXX%s", suffix);
  int fd = mkstemps(path, (int)strlen(suffix));
  assert_true(fd >= 0);
  return fd;
}

// Writes `src` to a fresh `.mn` temp file (deleted at teardown).
TS_HELPER const char *ts_write_program(TestCtx *t, const char *src) {
  assert_true(t->path[0] == 0);   // one program per test (one VM, one program)
  int fd = ts_temp_file(t->path, sizeof t->path, ".mn");
  size_t len = strlen(src);
  assert_int_equal(write(fd, src, len), (ssize_t)len);
  close(fd);
  return t->path;
}

// Writes and compiles `src` as the main script; NULL on a compile error (the
// errors are printed on stderr). The VM's entry proto is set.
TS_HELPER Proto *ts_compile_maybe(void **state, const char *src) {
  TestCtx *t = *state;
  ts_write_program(t, src);
  t->argv[0] = t->path;
  t->vm->argc = 1;
  t->vm->argv = t->argv;
  t->vm->main_path = t->path;
  Proto *entry = compiler_compile_program(t->vm, t->path);
  t->vm->entry_proto = entry;
  return entry;
}

TS_HELPER Proto *ts_compile(void **state, const char *src) {
  Proto *entry = ts_compile_maybe(state, src);
  assert_non_null(entry);
  return entry;
}

// Runs `entry`, compiled by ts_compile (it must succeed: an uncaught error
// exits the process) and returns what it printed on stdout (owned by the
// context).
TS_HELPER const char *ts_run_entry(void **state, const Proto *entry) {
  TestCtx *t = *state;
  char out_path[64];
  int fd = ts_temp_file(out_path, sizeof out_path, ".out");
  fflush(stdout);
  int saved = dup(STDOUT_FILENO);
  assert_true(saved >= 0);
  dup2(fd, STDOUT_FILENO);
  bool ok = false;
  interp_run_entry(t->vm, entry, &ok);
  fflush(stdout);
  dup2(saved, STDOUT_FILENO);
  close(saved);
  free(t->out);
  t->out = ts_slurp_fd(fd);
  close(fd);
  unlink(out_path);
  assert_true(ok);
  return t->out;
}

// Compiles and runs `src` (it must succeed: an uncaught error exits the
// process) and returns what it printed on stdout (owned by the context).
TS_HELPER const char *ts_run(void **state, const char *src) { return ts_run_entry(state, ts_compile(state, src)); }

// Compiles and runs `src` in a child process (for programs that fail, exit or
// crash). Exit status 2: compile error; 1: uncaught runtime error.
TS_HELPER TsChild ts_run_forked(void **state, const char *src) {
  TestCtx *t = *state;
  ts_write_program(t, src);
  char out_path[64], err_path[64];
  int out_fd = ts_temp_file(out_path, sizeof out_path, ".out");
  int err_fd = ts_temp_file(err_path, sizeof err_path, ".err");
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    // cmocka's handlers would turn a crash into a test failure and carry on
    // running the other tests in this child: crash for real instead.
    const int sigs[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGSYS};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) signal(sigs[i], SIG_DFL);
    dup2(out_fd, STDOUT_FILENO);
    dup2(err_fd, STDERR_FILENO);
    t->argv[0] = t->path;
    t->vm->argc = 1;
    t->vm->argv = t->argv;
    t->vm->main_path = t->path;
    Proto *entry = compiler_compile_program(t->vm, t->path);
    if (!entry) {
      fflush(stderr);
      _exit(2);
    }
    t->vm->entry_proto = entry;
    bool ok = false;
    interp_run_entry(t->vm, entry, &ok);
    fflush(stdout);
    fflush(stderr);
    _exit(ok ? 0 : 1);
  }
  int wstatus = 0;
  assert_int_equal(waitpid(pid, &wstatus, 0), pid);
  TsChild c;
  c.status = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128 + WTERMSIG(wstatus);
  free(t->out);
  free(t->err);
  c.out = t->out = ts_slurp_fd(out_fd);
  c.err = t->err = ts_slurp_fd(err_fd);
  close(out_fd);
  close(err_fd);
  unlink(out_path);
  unlink(err_path);
  return c;
}

// ---------------------------------------------------------------------------
// Looking at compiled code.

// The first proto called `name` defined in the main script.
TS_HELPER const Proto *ts_proto(void **state, const char *name) {
  TestCtx *t = *state;
  for (uint32_t i = 0; i < t->vm->proto_count; i++) {
    const Proto *p = t->vm->protos[i];
    if (strcmp(p->name, name) == 0 && strcmp(p->file, t->path) == 0) return p;
  }
  fail_msg("no function %s in the program", name);
  return NULL;
}

// Index of the global called `name`.
TS_HELPER uint32_t ts_global(Vm *vm, const char *name) {
  for (uint32_t i = 0; i < vm->global_count; i++)
    if (strcmp(vm->global_names[i], name) == 0) return i;
  fail_msg("no global %s", name);
  return 0;
}

// Instructions that call Minnow code (their descriptor is keyed by the return
// address, their last word holds the caller's frame size): CALL, CALLG and
// their forms by argc (CALL0 .. CALLG3). By name, so that the test follows
// the instruction set.
TS_HELPER bool ts_is_call(uint32_t op) {
  if (op >= OPCODE_COUNT) return false;
  const char *n = bytecode_names[op];
  if (strncmp(n, "CALL", 4) != 0) return false;
  size_t i = n[4] == 'G' ? 5 : 4;
  return n[i] == '\0' || (n[i] >= '0' && n[i] <= '9' && n[i + 1] == '\0');
}

// An ALLOCN or its two-pair form ALLOCN2 (same layout).
TS_HELPER bool ts_is_allocn(uint32_t op) { return op == BC_ALLOCN || op == BC_ALLOCN2; }

// An ALLOC1 or its two-field forms ALLOC2 and ALLOC2_RET (same layout).
TS_HELPER bool ts_is_alloc1(uint32_t op) { return op == BC_ALLOC1 || op == BC_ALLOC2 || op == BC_ALLOC2_RET; }

TS_HELPER bool ts_is_alloc(uint32_t op) {
  return ts_is_alloc1(op) || ts_is_allocn(op) || op == BC_ALLOCBIG;
}

// The descriptor of the instruction at pc (return-address key for calls).
TS_HELPER const FrameDesc *ts_desc_at(Vm *vm, const uint32_t *pc) {
  return frames_find(vm->frames, ts_is_call(pc[0]) ? call_ret(pc) : pc);
}

TS_HELPER bool ts_lists(const FrameDesc *d, uint32_t slot) {
  for (uint32_t i = 0; i < d->live_count; i++)
    if (d->live[i] == slot) return true;
  return false;
}

// The n-th (0-based) instruction of `p` with opcode op, or NULL.
TS_HELPER const uint32_t *ts_find_op(const Proto *p, uint32_t op, int n) {
  for (const uint32_t *pc = p->code; pc < p->code + p->code_len; pc += bytecode_length(pc))
    if (pc[0] == op && n-- == 0) return pc;
  return NULL;
}

// The n-th (0-based) ALLOC1 or ALLOC2 of `p`, or NULL.
TS_HELPER const uint32_t *ts_find_alloc1(const Proto *p, int n) {
  for (const uint32_t *pc = p->code; pc < p->code + p->code_len; pc += bytecode_length(pc))
    if (ts_is_alloc1(pc[0]) && n-- == 0) return pc;
  return NULL;
}

// The n-th (0-based) ALLOCN or ALLOCN2 of `p`, or NULL.
TS_HELPER const uint32_t *ts_find_allocn(const Proto *p, int n) {
  for (const uint32_t *pc = p->code; pc < p->code + p->code_len; pc += bytecode_length(pc))
    if (ts_is_allocn(pc[0]) && n-- == 0) return pc;
  return NULL;
}

TS_HELPER int ts_count_ops(const Proto *p, bool (*pred)(uint32_t op)) {
  int n = 0;
  for (const uint32_t *pc = p->code; pc < p->code + p->code_len; pc += bytecode_length(pc))
    if (pred(pc[0])) n++;
  return n;
}

// ---------------------------------------------------------------------------
// Building heap data from C. Every helper roots its Value arguments while it
// allocates, so callers only need to root what they keep.

// Fills field i of a block returned by an allocation funnel.
TS_HELPER void ts_init(Vm *vm, Value b, uint64_t i, Value v) {
  if (vm_is_young(vm, b)) val_fields(b)[i] = v;
  else gc_init_field(vm, b, i, v);
}

TS_HELPER Value ts_pair(Vm *vm, unsigned tag, Value a, Value b) {
  vm_push_root(vm, &a);
  vm_push_root(vm, &b);
  Value p = gc_alloc(vm, 2, tag);
  vm_pop_roots(vm, 2);
  ts_init(vm, p, 0, a);
  ts_init(vm, p, 1, b);
  return p;
}

TS_HELPER Value ts_tuple(Vm *vm, Value a, Value b) { return ts_pair(vm, TAG_TUPLE, a, b); }
TS_HELPER Value ts_cons(Vm *vm, Value hd, Value tl) { return ts_pair(vm, TAG_CONS, hd, tl); }

TS_HELPER Value ts_major_tuple(Vm *vm, Value a, Value b) {
  vm_push_root(vm, &a);
  vm_push_root(vm, &b);
  Value p = gc_alloc_major(vm, 2, TAG_TUPLE);
  vm_pop_roots(vm, 2);
  gc_init_field(vm, p, 0, a);
  gc_init_field(vm, p, 1, b);
  return p;
}

TS_HELPER Value ts_string(Vm *vm, const char *s) {
  size_t len = strlen(s);
  Value v = gc_alloc(vm, str_wosize_for(len), TAG_STRING);
  memcpy(val_fields(v), s, len);
  str_finish(v, len);
  return v;
}

// The list [n-1, ..., 1, 0] of ints (cons cells allocated 0 first).
TS_HELPER Value ts_int_list(Vm *vm, int64_t n) {
  Value l = VAL_EMPTY;
  vm_push_root(vm, &l);
  for (int64_t i = 0; i < n; i++) l = ts_cons(vm, val_of_int(i), l);
  vm_pop_roots(vm, 1);
  return l;
}

// Checks that l is [n-1, ..., 0] made of well-formed cons cells.
TS_HELPER void ts_check_int_list(Value l, int64_t n) {
  for (int64_t i = n - 1; i >= 0; i--) {
    assert_true(val_has_tag(l, TAG_CONS));
    assert_int_equal(val_wosize(l), 2);
    assert_int_equal(val_to_int(val_field(l, 0)), i);
    l = val_field(l, 1);
  }
  assert_true(l == VAL_EMPTY);
}

TS_HELPER uint64_t ts_young_used(const Vm *vm) { return (uint64_t)(vm->young_end - vm->young_ptr); }

#endif
