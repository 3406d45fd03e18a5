// raise.c - gc_raise_error (gc.h): a runtime error raised with a formatted
// message, whose string the heap makes without collecting (the Boehm build
// links this file too).
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "gc.h"

_Noreturn void gc_raise_error(Vm *vm, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  // The raising instruction may not be a safe point: no collection here.
  size_t len = strlen(msg);
  Value s = gc_alloc_no_collect(vm, str_wosize_for(len), TAG_STRING);
  memcpy(val_fields(s), msg, len);
  str_finish(s, len);
  vm_raise(vm, s);
}
