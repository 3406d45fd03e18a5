// random.c - the C half of stdlib/random.mn: a generator's state and its
// draws. Contract for every primitive: primitives.h.
//   1. A generator is a Minnow array of two ints, the high and low 32 bits
//      of a splitmix64 state (an int holds 63 bits, a state 64): the state
//      lives in the heap like any value, so generators need no VM field and
//      a program may hold as many as it likes.
//   2. splitmix64 (Steele, Lea and Flood, 2014): each draw adds the golden
//      gamma to the state and mixes it; every seed gives a sequence that
//      passes BigCrush, and the same seed the same sequence on every build.
//   3. random_int draws uniformly in [0, bound) by rejection (no modulo
//      bias); random_float takes the top 53 bits, uniform in [0, 1).
#include <stdint.h>
#include <stdio.h>
#include <sys/time.h>
#include <unistd.h>

#include "native.h"
#include "../../base/splitmix.h"

// The generator array in g, checked: two ints each in 0 .. 2^32 - 1.
static Value generator(Vm *vm, Value g, const char *what) {
  if (!val_has_tag(g, TAG_ARRAY) || val_wosize(g) != 2 || !val_is_int(val_field(g, 0)) ||
      !val_is_int(val_field(g, 1)) || (uint64_t)val_to_int(val_field(g, 0)) > UINT32_MAX ||
      (uint64_t)val_to_int(val_field(g, 1)) > UINT32_MAX)
    gc_raise_error(vm, "type error: %s expects a generator (Random.make), got %s", what, ops_type_name(g));
  return g;
}

static uint64_t state_of(Value g) {
  return (uint64_t)val_to_int(val_field(g, 0)) << 32 | (uint64_t)val_to_int(val_field(g, 1));
}

static void set_state(Value g, uint64_t s) {
  // Ints are not pointers: no write barrier.
  val_fields(g)[0] = val_of_int((int64_t)(s >> 32));
  val_fields(g)[1] = val_of_int((int64_t)(s & UINT32_MAX));
}

static uint64_t next(Value g) {
  uint64_t s = state_of(g), out = splitmix64_next(&s);
  set_state(g, s);
  return out;
}

// random_seed(g, seed): g's state from an int seed (the seed's bits, mixed
// once, so that seeds 0, 1, 2 start far apart).
Value lib_random_seed(Vm *vm, Value *args) {
  Value g = generator(vm, args[0], "Random.init");
  int64_t seed = args_int(vm, args[1], "Random.init");
  set_state(g, (uint64_t)seed);
  set_state(g, next(g));
  return VAL_NIL;
}

// random_self_seed(g): a seed from the clock and the process id.
Value lib_random_self_seed(Vm *vm, Value *args) {
  Value g = generator(vm, args[0], "Random.self_init");
  struct timeval tv;
  gettimeofday(&tv, NULL);
  set_state(g, (uint64_t)tv.tv_sec * 1000003u ^ (uint64_t)tv.tv_usec << 20 ^ (uint64_t)getpid());
  set_state(g, next(g));
  return VAL_NIL;
}

// random_int(g, bound): uniform in [0, bound), bound in 1 .. max_int.
Value lib_random_int(Vm *vm, Value *args) {
  Value g = generator(vm, args[0], "Random.int");
  int64_t bound = args_int(vm, args[1], "Random.int");
  if (bound <= 0) gc_raise_error(vm, "Random.int: the bound must be positive, got %lld", (long long)bound);
  uint64_t b = (uint64_t)bound;
  uint64_t limit = UINT64_MAX - UINT64_MAX % b;  // draws at or past it would bias the result
  uint64_t r;
  do r = next(g);
  while (r >= limit);
  return val_of_int((int64_t)(r % b));
}

// random_float(g): uniform in [0, 1), a multiple of 2^-53.
Value lib_random_float(Vm *vm, Value *args) {
  Value g = generator(vm, args[0], "Random.float");
  return args_float(vm, (double)(next(g) >> 11) * 0x1.0p-53);
}
