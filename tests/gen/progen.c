// progen.c - random well-formed Minnow programs for differential testing
// (issue 17): build/progen SEED prints one program, the same for the same
// seed on every machine. tests/gen/differential.sh runs each on several
// builds and compares stdout, stderr and status.
//
// 1. Programs are typed as they are generated: every variable has one of the
//    kinds below, and an expression is built for a kind from the variables
//    in scope and constructors, so that most programs run far before any
//    error; the errors that do happen (division by zero, index out of
//    bounds, match failure, raise) are caught or end the run with a message,
//    both of which the builds must agree on.
// 2. Output never depends on the collector or the profiler: nothing prints
//    Gc.stat, time, or what memprof callbacks see; callbacks (alloc, promote,
//    dealloc) allocate, raise and catch inside themselves and only count into
//    an array cell that is never printed. On vm-boehm Memprof.start raises,
//    which the program catches.
// 3. Every loop is bounded and no function calls itself or a later one, so
//    every program ends.
// 4. Self-checks: a program prints "INVARIANT BROKEN: ..." when two values
//    that are == hash differently, or compare disagrees with == or with
//    itself swapped; differential.sh fails a program whose output has it.
// 5. What the generator exercises: deep and nested patterns with guards,
//    closures with up to 300 captures, list/array/tuple literals up to 600
//    items (past the compiler's 256-item threshold), records written in
//    several field orders and compared, exceptions, arrays, strings, buffers,
//    hash tables (also keyed by adversarial families: integral floats, ints
//    differing above bit 32, -0.0, pairs, records in two field orders),
//    range arithmetic at the int edges (List.range, for-loops, Array.sub,
//    Array.fill, Array.blit, String.sub, List.take/drop at max_int, min_int
//    and their neighbours: never a size that allocates without bound),
//    higher-order stdlib calls, memprof callbacks.
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// =====================================================================
// Random numbers and output
// =====================================================================

typedef struct Gen {
  uint64_t state;            // xorshift64*
  int depth;                 // expression nesting
  int indent;
  int names;                 // fresh names made so far
  int fns;                   // top-level functions defined so far
  struct Var *vars;          // variables in scope, innermost last
  int var_count, var_cap;
  int fn_level;              // nesting of fn literals (a var is not capturable)
  int loop_depth;
} Gen;

static uint64_t next(Gen *g) {
  g->state ^= g->state >> 12;
  g->state ^= g->state << 25;
  g->state ^= g->state >> 27;
  return g->state * 0x2545f4914f6cdd1dull;
}

static int below(Gen *g, int n) { return (int)(next(g) % (uint64_t)n); }
static int chance(Gen *g, int percent) { return below(g, 100) < percent; }

static void out(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void out(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vprintf(fmt, ap);
  va_end(ap);
}

static void line_start(Gen *g) {
  for (int i = 0; i < g->indent; i++) out("  ");
}

// =====================================================================
// Kinds and variables
// =====================================================================

typedef enum Kind { K_INT, K_BOOL, K_STR, K_LIST, K_PAIR, K_ARRAY, K_REC, K_FUN, K_COUNT } Kind;

typedef struct Var {
  char name[16];
  Kind kind;
  int is_var;                // `var` (assignable, not capturable)
  int fn_level;              // fn nesting where it was declared
} Var;

static void add_var(Gen *g, const char *name, Kind kind, int is_var) {
  if (g->var_count == g->var_cap) {
    g->var_cap = g->var_cap ? g->var_cap * 2 : 64;
    g->vars = realloc(g->vars, (size_t)g->var_cap * sizeof *g->vars);
    if (!g->vars) exit(1);
  }
  Var *v = &g->vars[g->var_count++];
  snprintf(v->name, sizeof v->name, "%s", name);
  v->kind = kind;
  v->is_var = is_var;
  v->fn_level = g->fn_level;
}

static void fresh(Gen *g, char *buf, const char *prefix) { snprintf(buf, 16, "%s%d", prefix, g->names++); }

// A variable of `kind` usable here (a var only in its own function), or NULL.
static const Var *pick_var(Gen *g, Kind kind) {
  int seen = 0;
  const Var *chosen = NULL;
  for (int i = 0; i < g->var_count; i++) {
    const Var *v = &g->vars[i];
    if (v->kind != kind || (v->is_var && v->fn_level != g->fn_level)) continue;
    if (below(g, ++seen) == 0) chosen = v;   // reservoir sampling
  }
  return chosen;
}

static void expr(Gen *g, Kind kind);

// =====================================================================
// Expressions, by kind
// =====================================================================

static void int_literal(Gen *g) {
  static const char *const edges[] = {"0", "1", "-1", "7", "4611686018427387903", "Int.min_int", "1000000007",
                                      "0x7fff", "65536", "4611686018427387902", "(Int.min_int + 1)",
                                      "4294967296"};
  if (chance(g, 20)) out("%s", edges[below(g, 12)]);
  else out("%d", below(g, 200) - 50);
}

static void str_literal(Gen *g) {
  static const char *const words[] = {"", "a", "bc", "minnow", "x\\ty", "\\x00z", "quote\\\"", "\\xff", "sp ace"};
  out("\"%s\"", words[below(g, 9)]);
}

static void call_list_fn(Gen *g);

static void int_expr(Gen *g) {
  const Var *v;
  switch (g->depth > 4 ? below(g, 2) : below(g, 14)) {
    case 0: int_literal(g); return;
    case 1: if ((v = pick_var(g, K_INT))) { out("%s", v->name); return; } int_literal(g); return;
    case 2: out("("); expr(g, K_INT); out(" %s ", (const char *[]){"+", "-", "*"}[below(g, 3)]); expr(g, K_INT); out(")"); return;
    case 3: out("("); expr(g, K_INT); out(" %s (", below(g, 2) ? "/" : "%"); expr(g, K_INT); out(" %% 5 + 6))"); return;
    case 4: out("List.length("); expr(g, K_LIST); out(")"); return;
    case 5: out("Array.length("); expr(g, K_ARRAY); out(")"); return;
    case 6: out("String.length("); expr(g, K_STR); out(")"); return;
    case 7: out("("); expr(g, K_REC); out(").a"); return;
    case 8: out("("); expr(g, K_FUN); out(")("); expr(g, K_INT); out(")"); return;
    case 9: out("(if "); expr(g, K_BOOL); out(" { "); expr(g, K_INT); out(" } else { "); expr(g, K_INT); out(" })"); return;
    case 10: out("(match "); expr(g, K_LIST); out(" { [] => 0, x :: _ => x })"); return;
    case 11: out("(hash("); expr(g, below(g, 2) ? K_PAIR : K_REC); out(") %% 1000)"); return;
    case 12: out("compare("); expr(g, K_STR); out(", "); expr(g, K_STR); out(")"); return;
    default: out("{ let (p, q) = "); expr(g, K_PAIR); out("; p - q }"); return;
  }
}

static void bool_expr(Gen *g) {
  static const Kind comparable[] = {K_INT, K_STR, K_LIST, K_PAIR, K_REC, K_ARRAY};
  switch (g->depth > 4 ? 0 : below(g, 6)) {
    case 0: out("("); expr(g, K_INT); out(" %s ", (const char *[]){"<", "<=", ">", ">=", "==", "!="}[below(g, 6)]); expr(g, K_INT); out(")"); return;
    case 1: {
      Kind k = comparable[below(g, 6)];
      out("("); expr(g, k); out(" %s ", below(g, 2) ? "==" : "!="); expr(g, k); out(")"); return;
    }
    case 2: out("!"); expr(g, K_BOOL); return;
    case 3: out("("); expr(g, K_BOOL); out(" %s ", below(g, 2) ? "&&" : "||"); expr(g, K_BOOL); out(")"); return;
    case 4: out("List.mem("); expr(g, K_INT); out(", "); expr(g, K_LIST); out(")"); return;
    default: out("(compare("); expr(g, K_LIST); out(", "); expr(g, K_LIST); out(") < 0)"); return;
  }
}

static void str_expr(Gen *g) {
  const Var *v;
  switch (g->depth > 4 ? below(g, 2) : below(g, 8)) {
    case 0: str_literal(g); return;
    case 1: if ((v = pick_var(g, K_STR))) { out("%s", v->name); return; } str_literal(g); return;
    case 2: out("("); expr(g, K_STR); out(" ++ "); expr(g, K_STR); out(")"); return;
    case 3: out("str("); expr(g, (Kind)below(g, K_FUN)); out(")"); return;
    case 4: out("String.concat(\",\", List.map(str, "); expr(g, K_LIST); out("))"); return;
    case 5: out("{ let s = "); expr(g, K_STR); out("; String.sub(s, 0, Int.min(String.length(s), 3)) }"); return;
    case 6: out("String.repeat("); expr(g, K_STR); out(", %d)", below(g, 4)); return;
    default: out("{ let b = Buffer.create(%d); Buffer.add(b, ", below(g, 40)); expr(g, K_STR);
             out("); Buffer.add(b, "); expr(g, K_STR); out("); Buffer.contents(b) }"); return;
  }
}

// A list literal of n items (big ones cross the compiler's 256 threshold).
static void list_literal(Gen *g, int n, const char *open, const char *close) {
  out("%s", open);
  for (int i = 0; i < n; i++) {
    if (i) out(", ");
    if (n > 20 || g->depth > 3) int_literal(g);
    else expr(g, K_INT);
  }
  out("%s", close);
}

static int literal_size(Gen *g) {
  int r = below(g, 100);
  return r < 70 ? below(g, 6) : r < 96 ? below(g, 40) : 250 + below(g, 350);
}

static void list_expr(Gen *g) {
  const Var *v;
  switch (g->depth > 4 ? below(g, 2) : below(g, 9)) {
    case 0: list_literal(g, g->depth > 4 ? below(g, 4) : literal_size(g), "[", "]"); return;
    case 1: if ((v = pick_var(g, K_LIST))) { out("%s", v->name); return; } out("[]"); return;
    case 2: out("("); expr(g, K_INT); out(" :: "); expr(g, K_LIST); out(")"); return;
    case 3: call_list_fn(g); return;
    case 4: out("("); expr(g, K_LIST); out(" ++ "); expr(g, K_LIST); out(")"); return;
    case 5: out("List.init(%d, ", below(g, 30)); expr(g, K_FUN); out(")"); return;
    case 6: out("Array.to_list("); expr(g, K_ARRAY); out(")"); return;
    case 7: out("List.sort(compare, "); expr(g, K_LIST); out(")"); return;
    default: out("(match "); expr(g, K_LIST); out(" { _ :: rest => rest, [] => [0] })"); return;
  }
}

static void call_list_fn(Gen *g) {
  switch (below(g, 4)) {
    case 0: out("List.map("); expr(g, K_FUN); out(", "); expr(g, K_LIST); out(")"); return;
    case 1: out("List.rev("); expr(g, K_LIST); out(")"); return;
    case 2: out("List.filter(fn(x) { x %% 2 == 0 }, "); expr(g, K_LIST); out(")"); return;
    default: out("List.mapi(fn(i, x) { i * x }, "); expr(g, K_LIST); out(")"); return;
  }
}

static void pair_expr(Gen *g) {
  const Var *v;
  if (g->depth < 5 && (v = pick_var(g, K_PAIR)) && chance(g, 40)) {
    out("%s", v->name);
    return;
  }
  out("(");
  expr(g, K_INT);
  out(", ");
  expr(g, K_INT);
  out(")");
}

static void array_expr(Gen *g) {
  const Var *v;
  switch (g->depth > 4 ? below(g, 2) : below(g, 5)) {
    case 0: list_literal(g, g->depth > 4 ? below(g, 4) : literal_size(g), "[|", "|]"); return;
    case 1: if ((v = pick_var(g, K_ARRAY))) { out("%s", v->name); return; } out("[|1|]"); return;
    case 2: out("Array.make(%d, ", below(g, 300)); expr(g, K_INT); out(")"); return;
    case 3: out("Array.of_list("); expr(g, K_LIST); out(")"); return;
    default: out("Array.map("); expr(g, K_FUN); out(", "); expr(g, K_ARRAY); out(")"); return;
  }
}

// Records have fields a (int), b (string), c (list), written in any order.
static void rec_expr(Gen *g) {
  const Var *v;
  if (g->depth < 5 && (v = pick_var(g, K_REC)) && chance(g, 50)) {
    out("%s", v->name);
    return;
  }
  static const char *const orders[] = {"abc", "acb", "bac", "bca", "cab", "cba"};
  const char *order = orders[below(g, 6)];
  out("{");
  for (int i = 0; i < 3; i++) {
    if (i) out(", ");
    out("%c: ", order[i]);
    expr(g, order[i] == 'a' ? K_INT : order[i] == 'b' ? K_STR : K_LIST);
  }
  out("}");
}

// An int -> int function: a top-level fn, a variable, or a literal capturing
// what is in scope.
static void fun_expr(Gen *g) {
  const Var *v;
  int r = below(g, 10);
  if (r < 3 && g->fns > 0) {
    out("f%d", below(g, g->fns));
    return;
  }
  if (r < 6 && (v = pick_var(g, K_FUN))) {
    out("%s", v->name);
    return;
  }
  out("fn(x) { ");
  int saved = g->var_count;
  g->fn_level++;
  add_var(g, "x", K_INT, 0);
  out("x + ");
  expr(g, K_INT);
  g->var_count = saved;
  g->fn_level--;
  out(" }");
}

static void expr(Gen *g, Kind kind) {
  g->depth++;
  switch (kind) {
    case K_INT: int_expr(g); break;
    case K_BOOL: bool_expr(g); break;
    case K_STR: str_expr(g); break;
    case K_LIST: list_expr(g); break;
    case K_PAIR: pair_expr(g); break;
    case K_ARRAY: array_expr(g); break;
    case K_REC: rec_expr(g); break;
    default: fun_expr(g); break;
  }
  g->depth--;
}

// =====================================================================
// Statements
// =====================================================================

static void block(Gen *g, int statements);

static void stmt_let(Gen *g) {
  char name[16];
  Kind kind = (Kind)below(g, K_COUNT);
  fresh(g, name, "v");
  line_start(g);
  out("let %s = ", name);
  expr(g, kind);
  out("\n");
  add_var(g, name, kind, 0);
}

static void stmt_print(Gen *g) {
  line_start(g);
  out("println(");
  expr(g, (Kind)below(g, K_FUN));
  out(")\n");
}

// A loop accumulating into a fresh var, printed after it.
static void stmt_loop(Gen *g) {
  char acc[16], i[16];
  fresh(g, acc, "acc");
  fresh(g, i, "i");
  line_start(g);
  out("var %s = 0\n", acc);
  line_start(g);
  // Short loops: a body may build 600-item literals.
  if (chance(g, 50)) out("for %s in 0..%d {\n", i, below(g, 12));
  else out("for %s in ", i), list_literal(g, below(g, 6), "[", "]"), out(" {\n");
  g->indent++;
  int saved = g->var_count;
  add_var(g, i, K_INT, 0);
  add_var(g, acc, K_INT, 1);
  g->loop_depth++;
  if (chance(g, 30)) {
    line_start(g);
    out("if %s %% 3 == 2 { continue }\n", i);
  }
  if (chance(g, 20)) {
    line_start(g);
    out("if %s > 12 { break }\n", i);
  }
  line_start(g);
  out("%s = %s + ", acc, acc);
  expr(g, K_INT);
  out("\n");
  if (chance(g, 30)) block(g, 1);
  g->loop_depth--;
  g->var_count = saved;
  g->indent--;
  line_start(g);
  out("}\n");
  line_start(g);
  out("println(%s)\n", acc);
}

// try around something that may fail; the message is printed.
static void stmt_try(Gen *g) {
  line_start(g);
  out("try {\n");
  g->indent++;
  int saved = g->var_count;
  switch (below(g, 6)) {
    case 0: line_start(g); out("println(("); expr(g, K_INT); out(") / ("); expr(g, K_INT); out(" %% 3))\n"); break;
    case 1: line_start(g); out("println(("); expr(g, K_ARRAY); out(")["); expr(g, K_INT); out("])\n"); break;
    case 2: line_start(g); out("raise("); expr(g, (Kind)below(g, K_FUN)); out(")\n"); break;
    case 3: line_start(g); out("let [only] = "); expr(g, K_LIST); out("\n"); line_start(g); out("println(only)\n"); break;
    case 4: line_start(g); out("println(List.nth("); expr(g, K_LIST); out(", "); expr(g, K_INT); out("))\n"); break;
    default: block(g, 2); break;
  }
  g->var_count = saved;
  g->indent--;
  line_start(g);
  out("} catch e {\n");
  line_start(g);
  out("  println(\"caught \" ++ str(e))\n");
  line_start(g);
  out("}\n");
}

// Nested patterns with literals and guards over a list of pairs of records.
static void stmt_match(Gen *g) {
  line_start(g);
  out("match [(");
  expr(g, K_INT);
  out(", ");
  expr(g, K_REC);
  out("), (");
  expr(g, K_INT);
  out(", ");
  expr(g, K_REC);
  out(")] {\n");
  static const char *const arms[] = {
      "[(0, {a: 0, b: s}), _] => println(\"zeros \" ++ s)",
      "[(n, {a: m, c: [x, y]}), (_, {b: \"a\"})] if n > m => println(n + m + x + y)",
      "[(n, {c: x :: (y :: _)}), (k, {a: a2})] => println([n, x, y, k, a2])",
      "[(_, {b: s, a: a1}), (_, {b: t, a: a2})] if s == t => println(a1 - a2)",
      "[(n, r1), (k, r2)] if r1 == r2 => println(\"same \" ++ str(n + k))",
      "[(n, {c: []}), (k, {c: [z]})] => println(n * k + z)",
  };
  int first = below(g, 6);
  for (int i = 0; i < 3; i++) {
    line_start(g);
    out("  %s\n", arms[(first + i) % 6]);
  }
  line_start(g);
  out("  [(n, _), (k, _)] => println(n - k)\n");
  line_start(g);
  out("}\n");
}

// Mutations: an array slot (may be out of bounds) and a record field.
static void stmt_mutate(Gen *g) {
  const Var *a = pick_var(g, K_ARRAY), *r = pick_var(g, K_REC);
  if (a) {
    line_start(g);
    out("try { %s[", a->name);
    expr(g, K_INT);
    out(" %% 8] = ");
    expr(g, K_INT);
    out("; println(%s) } catch e { println(e) }\n", a->name);
  }
  if (r) {
    line_start(g);
    out("%s.a = ", r->name);
    expr(g, K_INT);
    out("\n");
    line_start(g);
    out("println(%s)\n", r->name);
  }
}

// Many let-bound ints and a closure capturing n of them (past 255 at times).
static void stmt_captures(Gen *g) {
  int n = chance(g, 20) ? 250 + below(g, 60) : 2 + below(g, 30);
  char base[16], fun[16];
  fresh(g, base, "c");
  fresh(g, fun, "cap");
  line_start(g);
  out("let %s = {\n", fun);
  g->indent++;
  for (int i = 0; i < n; i++) {
    line_start(g);
    out("let %s_%d = %d\n", base, i, below(g, 1000) - 500);
  }
  line_start(g);
  out("fn(x) { x");
  for (int i = 0; i < n; i++)
    if (i == n - 1 || chance(g, 70)) out(" + %s_%d", base, i);
  out(" }\n");
  g->indent--;
  line_start(g);
  out("}\n");
  add_var(g, fun, K_FUN, 0);
  line_start(g);
  out("println(%s(%d))\n", fun, below(g, 10));
}

// A hash table keyed by records written in different field orders.
static void stmt_table(Gen *g) {
  char h[16];
  fresh(g, h, "h");
  line_start(g);
  out("let %s = Hashtbl.create(%d)\n", h, 1 + below(g, 8));
  for (int i = 0; i < 1 + below(g, 4); i++) {
    line_start(g);
    out("Hashtbl.replace(%s, {k: %d, j: ", h, below(g, 3));
    expr(g, K_STR);
    out("}, ");
    expr(g, K_INT);
    out(")\n");
  }
  line_start(g);
  out("println(Hashtbl.length(%s))\n", h);
  line_start(g);
  out("println(Hashtbl.find_opt(%s, {j: \"a\", k: 1}))\n", h);
}

// The int edges as literals, for ranges (issue 23, class 2).
static const char *int_edge(Gen *g) {
  static const char *const edges[] = {"0", "1", "-1", "2", "Int.max_int", "(Int.max_int - 1)", "Int.min_int",
                                      "(Int.min_int + 1)", "3"};
  return edges[below(g, 9)];
}

// Ranges whose ends lie at the int edges: a range that would wrap is empty
// or an error, never endless. Only sizes of at most a few items are built:
// List.range and for-loops run from an edge to that edge plus 0..4 (which
// wraps past max_int, giving an empty range).
static void stmt_edges(Gen *g) {
  char v[16];
  fresh(g, v, "e");
  line_start(g);
  out("let %s = %s\n", v, int_edge(g));
  switch (below(g, 6)) {
    case 0: line_start(g); out("println(List.range(%s, %s + %d))\n", v, v, below(g, 5)); break;
    case 1:
      line_start(g); out("println(List.length(List.range(%s - %d, %s)))\n", v, below(g, 5), v);
      break;
    case 2: {
      char n[16];
      fresh(g, n, "n");
      line_start(g); out("var %s = 0\n", n);
      line_start(g); out("for i in %s..%s + %d { %s = %s + 1 }\n", v, v, below(g, 5), n, n);
      line_start(g); out("println(%s)\n", n);
      break;
    }
    case 3:
      line_start(g);
      out("try { let a = [| 1, 2, 3, 4 |]; Array.fill(a, %s, %s, 0); println(a) } catch e { println(e) }\n", v,
          int_edge(g));
      line_start(g);
      out("try { println(Array.sub([| 1, 2, 3 |], %s, %s)) } catch e { println(e) }\n", int_edge(g), v);
      break;
    case 4:
      line_start(g);
      out("try { println(String.sub(\"minnow\", %s, %s)) } catch e { println(e) }\n", v, int_edge(g));
      line_start(g);
      out("try { let a = [| 1, 2, 3 |]; Array.blit(a, %s, a, %s, %s); println(a) } catch e { println(e) }\n",
          int_edge(g), v, int_edge(g));
      break;
    default:
      line_start(g);
      out("try { println((List.take(%s, [1, 2, 3]), List.drop(%s, [1, 2]), List.nth([4, 5], %s))) } catch e { println(e) }\n",
          v, int_edge(g), v);
      break;
  }
}

// A Hashtbl keyed by one adversarial family, each key found again through
// an equal key built another way; then the invariants of hash and compare
// on two random values of one kind.
static void stmt_keys(Gen *g) {
  static const char *const family[][2] = {
      {"Float.of_int(k)", "Float.of_int(k) + 0.0"},
      {"k * 4294967296", "k * 2147483648 * 2"},
      {"Float.of_int(k) * -1.0", "0.0 - Float.of_int(k)"},
      {"(k, Float.of_int(k))", "(k + 0, Float.of_int(k))"},
      {"{x: k, y: \"s\" ++ str(k)}", "{y: \"s\" ++ str(k), x: k}"},
      {"[k, -k, k * 35184372088832]", "[k, 0 - k, k * 35184372088832]"},
      {"Int.max_int - k", "Int.min_int - 1 - k"},
      {"\"prefix--\" ++ str(k)", "String.concat(\"\", [\"prefix\", \"--\", str(k)])"},
  };
  int f = below(g, 8), n = 20 + below(g, 300);
  char h[16];
  fresh(g, h, "keys");
  line_start(g);
  out("let %s = Hashtbl.create(%d)\n", h, 1 + below(g, 16));
  line_start(g);
  out("for k in 0..%d { Hashtbl.replace(%s, %s, k) }\n", n, h, family[f][0]);
  line_start(g);
  out("println((Hashtbl.length(%s), List.for_all(fn(k) { Hashtbl.find(%s, %s) == k }, List.range(0, %d))))\n", h,
      h, family[f][1], n);
  Kind kinds[] = {K_INT, K_STR, K_LIST, K_PAIR, K_ARRAY, K_REC};
  Kind kind = kinds[below(g, 6)];
  line_start(g);
  out("{\n");
  g->indent++;
  line_start(g); out("let x = "); expr(g, kind); out("\n");
  line_start(g);
  out("let y = ");
  if (chance(g, 50)) {   // equal to x, built another way
    switch (kind) {
      case K_INT: out("x + 0"); break;
      case K_STR: out("String.sub(x ++ \"\", 0, String.length(x))"); break;
      case K_LIST: out("List.rev(List.rev(x))"); break;
      case K_PAIR: out("{ let (p, q) = x; (p + 0, q) }"); break;
      case K_ARRAY: out("Array.copy(x)"); break;
      default: out("{c: x.c, b: x.b, a: x.a}"); break;
    }
  } else {
    expr(g, kind);
  }
  out("\n");
  line_start(g);
  out("if x == y && hash(x) != hash(y) { println(\"INVARIANT BROKEN: hash\") }\n");
  line_start(g);
  out("try { let c = compare(x, y); if (c == 0) != (x == y) || c != -compare(y, x) { println(\"INVARIANT BROKEN: compare\") } } catch e { nil }\n");
  line_start(g);
  out("println(x == y)\n");
  g->indent--;
  line_start(g);
  out("}\n");
}

static void statement(Gen *g) {
  int r = below(g, 100);
  if (r < 25) stmt_let(g);
  else if (r < 45) stmt_print(g);
  else if (r < 55) stmt_loop(g);
  else if (r < 68) stmt_try(g);
  else if (r < 76) stmt_match(g);
  else if (r < 85) stmt_mutate(g);
  else if (r < 89 && g->depth == 0) stmt_captures(g);
  else if (r < 93) stmt_table(g);
  else if (r < 97) stmt_edges(g);
  else stmt_keys(g);
}

static void block(Gen *g, int statements) {
  int saved = g->var_count;
  for (int i = 0; i < statements; i++) statement(g);
  g->var_count = saved;
}

// =====================================================================
// Program
// =====================================================================

// Top-level int -> int functions; f_k calls only f_0 .. f_k-1.
static void functions(Gen *g, int count) {
  for (int k = 0; k < count; k++) {
    out("fn f%d(x) {\n", k);
    g->indent = 1;
    int saved = g->var_count;
    g->fn_level++;
    add_var(g, "x", K_INT, 0);
    for (int i = 0; i < below(g, 3); i++) stmt_let(g);
    line_start(g);
    expr(g, K_INT);
    out("\n}\n");
    g->fn_level--;
    g->var_count = saved;
    g->indent = 0;
    g->fns++;
  }
}

// Memprof with callbacks that allocate, raise and catch, and count into a
// cell nobody prints; started in try (vm-boehm has no profiler).
static void memprof_start(Gen *g) {
  // At most 1 word in 100 is sampled, and frames are listed for 1 sample in
  // 8: at rate 1 (or 0.5) every allocation runs a callback that allocates,
  // which took seconds on ./vm and minutes under --gc-stress (a collection,
  // stack scan included, at every allocation) for the bigger programs.
  static const char *const rates[] = {"0.01", "0.003", "0.001", "0.0001"};
  int r = below(g, 100);
  out("let mp_cell = [| 0 |]\n");
  out("let mp_prof = try { Memprof.start({sampling_rate: %s, callstack_size: %d, tracker: {\n",
      rates[r < 10 ? 0 : r < 40 ? 1 : r < 70 ? 2 : 3], below(g, 20));
  out("  alloc_minor: fn(info) {\n");
  out("    if mp_cell[0] %% 8 == 0 { mp_cell[0] = mp_cell[0] + List.length(Memprof.frames(info.callstack)) }\n");
  out("    mp_cell[0] = mp_cell[0] + 1\n");
  out("    try { if info.size > %d { raise((info.size, [1, 2])) } } catch e { mp_cell[0] = mp_cell[0] + 1 }\n",
      below(g, 4));
  out("    if mp_cell[0] %% %d == 0 { nil } else { (info.size, str(info.n_samples)) }\n", 2 + below(g, 5));
  out("  },\n");
  out("  alloc_major: fn(info) { [| info.size |] },\n");
  out("  promote: fn(state) { if mp_cell[0] %% 2 == 0 { state } else { nil } },\n");
  out("  dealloc_minor: fn(state) { mp_cell[0] = mp_cell[0] + 1 },\n");
  out("  dealloc_major: fn(state) { let junk = List.init(3, fn(i) { (i, state) }); mp_cell[0] = mp_cell[0] + List.length(junk) },\n");
  out("}}) } catch e { nil }\n");
}

static void memprof_stop(void) {
  out("try { Memprof.stop(); Gc.full_major(); Memprof.discard(mp_prof) } catch e { nil }\n");
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: progen SEED\n");
    return 2;
  }
  Gen g = {0};
  g.state = strtoull(argv[1], NULL, 10) * 0x9e3779b97f4a7c15ull + 0x1234567;
  for (int i = 0; i < 8; i++) next(&g);
  out("// generated by tests/gen/progen.c, seed %s\n", argv[1]);
  int profiled = chance(&g, 40);
  if (profiled) memprof_start(&g);
  functions(&g, 1 + below(&g, 6));
  int statements = 10 + below(&g, 40);
  for (int i = 0; i < statements; i++) statement(&g);
  if (profiled) memprof_stop();
  out("println(\"done\")\n");
  free(g.vars);
  return 0;
}
