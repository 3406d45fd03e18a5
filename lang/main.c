// main.c - the command line: ./vm [options] script.mn [args...]
// (options in lang/README.md).
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vm.h"

static void usage(FILE *out) {
  fprintf(out,
          "usage: vm [options] script.mn [args...]\n"
          "  --dump-bytecode      print code and frame descriptors, run nothing\n"
          "  --memtrace FILE      write a memtrace trace of the run\n"
          "  --stack-words N      VM stack size in words (default 16777216)\n"
          "  --minor-words N      minor heap size in words (default 2097152)\n"
          "  --max-heap-words N   major heap limit in words (default: none)\n"
          "  --memprof-count R    sample at rate R with a tracker that counts; print totals\n"
          "  --gc-stress          collect at every allocation\n"
          "  --gc-verify          verify the heap after every collection\n");
}

static bool parse_count(const char *flag, const char *arg, uint64_t *out) {
  char *end;
  errno = 0;
  unsigned long long n = arg ? strtoull(arg, &end, 10) : 0;
  if (!arg || *end || errno || n == 0) {
    fprintf(stderr, "vm: %s expects a positive number\n", flag);
    return false;
  }
  *out = n;
  return true;
}

int main(int argc, char **argv) {
  VmOptions opt = {.stack_words = 16u << 20, .minor_words = 2u << 20};
  int i = 1;
  for (; i < argc && argv[i][0] == '-' && argv[i][1] == '-'; i++) {
    const char *a = argv[i], *next = i + 1 < argc ? argv[i + 1] : NULL;
    if (strcmp(a, "--dump-bytecode") == 0) opt.dump_bytecode = true;
    else if (strcmp(a, "--gc-stress") == 0) opt.gc_stress = true;
    else if (strcmp(a, "--gc-verify") == 0) opt.gc_verify = true;
    else if (strcmp(a, "--help") == 0) { usage(stdout); return 0; }
    else if (strcmp(a, "--memtrace") == 0 && next) { opt.memtrace_path = next; i++; }
    else if (strcmp(a, "--memprof-count") == 0 && next) {
      char *end;
      opt.memprof_count_rate = strtod(next, &end);
      if (*end || !(opt.memprof_count_rate > 0 && opt.memprof_count_rate <= 1)) {
        fprintf(stderr, "vm: --memprof-count expects a rate in (0, 1]\n");
        return 2;
      }
      i++;
    }
    else if (strcmp(a, "--stack-words") == 0) { if (!parse_count(a, next, &opt.stack_words)) return 2; i++; }
    else if (strcmp(a, "--minor-words") == 0) { if (!parse_count(a, next, &opt.minor_words)) return 2; i++; }
    else if (strcmp(a, "--max-heap-words") == 0) { if (!parse_count(a, next, &opt.max_heap_words)) return 2; i++; }
    else {
      fprintf(stderr, "vm: unknown option %s\n", a);
      usage(stderr);
      return 2;
    }
  }
  if (i >= argc) {
    usage(stderr);
    return 2;
  }
  if (opt.stack_words < 1024) opt.stack_words = 1024;
  Vm *vm = vm_new(&opt);
  if (!vm) return VM_EXIT_ERROR;
  vm->argc = argc - i;
  vm->argv = argv + i;
  vm_catch_signals(vm);
  vm_exit(vm, vm_run_main(vm, argv[i]));
}
