// sys.c - the C half of stdlib/sys.mn: Sys.argv, Sys.time, Sys.exit,
// Sys.getenv.
// Contract for every primitive: primitives.h.
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "native.h"

// Sys.argv(): [script, args...], built from the end.
Value lib_sys_argv(Vm *vm, Value *args) {
  (void)args;
  Value list = VAL_EMPTY, s = VAL_NIL;
  vm_push_root(vm, &list);
  vm_push_root(vm, &s);
  int argc;
  char *const *argv = native_argv(vm, &argc);
  for (int i = argc - 1; i >= 0; i--) {
    s = ops_string(vm, argv[i], strlen(argv[i]));
    Value cell = gc_alloc(vm, 2, TAG_CONS);
    val_fields(cell)[0] = s;
    val_fields(cell)[1] = list;
    list = cell;
  }
  vm_pop_roots(vm, 2);
  return list;
}

Value lib_sys_time(Vm *vm, Value *args) {
  (void)args;
  struct timeval tv;
  gettimeofday(&tv, NULL);
  return args_float(vm, (double)tv.tv_sec + (double)tv.tv_usec * 1e-6);
}

// Sys.exit(n): a process status is one byte, so n outside 0..255 is an
// error rather than n modulo 256 (Sys.exit(256) must not report success).
Value lib_sys_exit(Vm *vm, Value *args) {
  int64_t status = args_int(vm, args[0], "Sys.exit");
  if (status < 0 || status > 255) gc_raise_error(vm, "Sys.exit: status must be in 0..255, got %lld", (long long)status);
  fflush(stdout);
  vm_exit(vm, (int)status);
}

// Sys.getenv(name): the variable's value, or nil when it is unset (a name
// holding '=' or a NUL byte is never set).
Value lib_sys_getenv(Vm *vm, Value *args) {
  Value name = args_string(vm, args[0], "Sys.getenv");
  if (strlen(str_bytes(name)) != str_len(name) || strchr(str_bytes(name), '=')) return VAL_NIL;
  const char *value = getenv(str_bytes(name));
  return value ? ops_string(vm, value, strlen(value)) : VAL_NIL;
}
