// test_parser.c - cmocka tests for lang/front/parser.c (and ast_dump.c): every syntax
// form via S-expression dumps, statement separation, positions, error
// messages and recovery, and malformed input that must not crash.
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../lang/front/ast.h"

// One parse: the arena and result a test inspects, freed by done().
typedef struct Parsed {
  Source source;
  Arena arena;
  ParseResult result;
  bool ok;
} Parsed;

static Parsed *parse_n(const char *text, size_t len) {
  Parsed *p = calloc(1, sizeof *p);
  p->source = (Source){"t.mn", text, len};
  p->ok = parse_program(&p->source, &p->arena, &p->result);
  return p;
}

static Parsed *parse(const char *text) { return parse_n(text, strlen(text)); }

static void done(Parsed *p) {
  arena_free_all(&p->arena);
  free(p);
}

static char *dump(const Parsed *p) {
  char *buf = NULL;
  size_t size = 0;
  FILE *out = open_memstream(&buf, &size);
  ast_dump(out, &p->result.program);
  fclose(out);
  return buf;
}

// "line:col: message\n" for every diagnostic.
static char *errors(const Parsed *p) {
  char *buf = NULL;
  size_t size = 0;
  FILE *out = open_memstream(&buf, &size);
  for (int i = 0; i < p->result.error_count; i++) {
    const Diagnostic *d = &p->result.errors[i];
    fprintf(out, "%u:%u: %s\n", (unsigned)d->line, (unsigned)d->col, d->message);
  }
  fclose(out);
  return buf;
}

// Parses `text` without errors and compares its dump with `expected`.
static void check_dump(const char *text, const char *expected) {
  Parsed *p = parse(text);
  char *errs = errors(p);
  if (!p->ok) fprintf(stderr, "unexpected errors for <<%s>>:\n%s", text, errs);
  assert_true(p->ok);
  char *got = dump(p);
  if (strcmp(got, expected) != 0)
    fprintf(stderr, "source:\n%s\nexpected:\n%sgot:\n%s", text, expected, got);
  assert_string_equal(got, expected);
  free(got);
  free(errs);
  done(p);
}

// Parses `text` and compares its diagnostics with `expected`.
static void check_errors(const char *text, const char *expected) {
  Parsed *p = parse(text);
  assert_false(p->ok);
  char *got = errors(p);
  if (strcmp(got, expected) != 0)
    fprintf(stderr, "source:\n%s\nexpected:\n%sgot:\n%s", text, expected, got);
  assert_string_equal(got, expected);
  free(got);
  done(p);
}

// ---------------------------------------------------------------------------
// Syntax forms

static void test_literals(void **state) {
  (void)state;
  check_dump("nil\ntrue\nfalse\n42\n0x1f\n1_000\n3.5\n1e-4\n1.5E+3\n\"a\\tb\\x00\"\n[]\n",
             "nil\ntrue\nfalse\n42\n31\n1000\n(float 3.5)\n(float 0.0001)\n(float 1500.0)\n"
             "\"a\\tb\\x00\"\n[]\n");
  check_dump("4611686018427387903\n0x3fffffffffffffff\n",
             "4611686018427387903\n4611686018427387903\n");
}

static void test_names_and_members(void **state) {
  (void)state;
  check_dump("x\n_y\nList\nList.map\nList.map(f, l)\nr.f\nr.f.g\nList.a.b\n(M).x\n",
             "x\n_y\nList\nList.map\n(call List.map f l)\n(field r f)\n(field (field r f) g)\n"
             "(field List.a b)\nM.x\n");
}

static void test_precedence(void **state) {
  (void)state;
  check_dump("a || b && c == d\n", "(|| a (&& b (== c d)))\n");
  check_dump("a == b :: c\n", "(== a (:: b c))\n");
  check_dump("a :: b :: c\n", "(:: a (:: b c))\n");
  check_dump("a :: b ++ c\n", "(:: a (++ b c))\n");
  check_dump("a ++ b ++ c\n", "(++ (++ a b) c)\n");
  check_dump("a ++ b + c\n", "(++ a (+ b c))\n");
  check_dump("a - b - c\n", "(- (- a b) c)\n");
  check_dump("a + b * c % d / e\n", "(+ a (/ (% (* b c) d) e))\n");
  check_dump("-a * !b\n", "(* (- a) (! b))\n");
  check_dump("- -a\n", "(- (- a))\n");
  check_dump("-f(x).y\n", "(- (field (call f x) y))\n");
  check_dump("a || b || c\n", "(|| (|| a b) c)\n");
  check_dump("a && b || c && d\n", "(|| (&& a b) (&& c d))\n");
  check_dump("a < b\na <= b\na > b\na >= b\na != b\n",
             "(< a b)\n(<= a b)\n(> a b)\n(>= a b)\n(!= a b)\n");
  check_dump("(a < b) < c\n", "(< (< a b) c)\n");
  check_dump("a < b && b < c\n", "(&& (< a b) (< b c))\n");
  check_dump("(a + b) * c\n", "(* (+ a b) c)\n");
}

static void test_postfix(void **state) {
  (void)state;
  check_dump("f()\nf(x)(y)\nf(x,)\na[i][j]\nf(x)[0].z(1)\nx.f(y)\n",
             "(call f)\n(call (call f x) y)\n(call f x)\n(index (index a i) j)\n"
             "(call (field (index (call f x) 0) z) 1)\n(call (field x f) y)\n");
  check_dump("fn(x) { x }(1)\n", "(call (fn (x) (block x)) 1)\n");
}

static void test_constructors(void **state) {
  (void)state;
  check_dump("(1, 2)\n(1, 2, 3,)\n(a)\n((a))\n", "(tuple 1 2)\n(tuple 1 2 3)\na\na\n");
  check_dump("[1]\n[1, 2,]\n[[], [1]]\n", "(list 1)\n(list 1 2)\n(list [] (list 1))\n");
  check_dump("[| |]\n[||]\n[|1, 2|]\n[| 1, |]\n", "(array)\n(array)\n(array 1 2)\n(array 1)\n");
  check_dump("{x: 1, y: \"b\"}\n{x: {y: 2},}\n",
             "(record (x 1) (y \"b\"))\n(record (x (record (y 2))))\n");
  check_dump("let r = {\n  name: 1,\n  size: 2\n}\n", "(let r (record (name 1) (size 2)))\n");
}

static void test_record_or_block(void **state) {
  (void)state;
  check_dump("{}\n{ x }\n{ x; y }\n{ {x: 1} }\n{ x :: y }\n{ f(x) }\n",
             "(block)\n(block x)\n(block x y)\n(block (record (x 1)))\n(block (:: x y))\n"
             "(block (call f x))\n");
  check_dump("fn f() { {size: 0} }\n", "(fn-decl f () (block (record (size 0))))\n");
}

static void test_functions(void **state) {
  (void)state;
  check_dump("fn add(a, b) { a + b }\nfn z() {}\nfn t(a,) { a }\n",
             "(fn-decl add (a b) (block (+ a b)))\n(fn-decl z () (block))\n"
             "(fn-decl t (a) (block a))\n");
  check_dump("let inc = fn(x) { x + 1 }\nfn(){}\n",
             "(let inc (fn (x) (block (+ x 1))))\n(fn () (block))\n");
  check_dump("fn fact(n) { if n <= 1 { 1 } else { n * fact(n - 1) } }\n",
             "(fn-decl fact (n) (block (if (<= n 1) (block 1) (block (* n (call fact (- n 1)))))))\n");
  check_dump("fn f(_, _) { 1 }\n", "(fn-decl f (_ _) (block 1))\n");
}

static void test_if(void **state) {
  (void)state;
  check_dump("if a { 1 }\nif a { 1 } else { 2 }\nif a { 1 } else if b { 2 } else { 3 }\n",
             "(if a (block 1))\n(if a (block 1) (block 2))\n"
             "(if a (block 1) (if b (block 2) (block 3)))\n");
  check_dump("let x = if a { 1 } else { 2 } + 3\n",
             "(let x (+ (if a (block 1) (block 2)) 3))\n");
  check_dump("if a {\n 1\n}\nelse {\n 2\n}\n", "(if a (block 1) (block 2))\n");
  check_dump("if f(x) == {a: 1} { 1 }\n", "(if (== (call f x) (record (a 1))) (block 1))\n");
  check_dump("if x { }\n{ y }\n", "(if x (block))\n(block y)\n");
}

static void test_match(void **state) {
  (void)state;
  check_dump("match l { [] => nil, x :: _ => x, }\n",
             "(match l (=> [] nil) (=> (:: x _) x))\n");
  check_dump("match l {\n  [] => nil\n  x :: xs if x > 0 => {\n    x\n  },\n  _ => 0 }\n",
             "(match l (=> [] nil) (=> (:: x xs) (if (> x 0)) (block x)) (=> _ 0))\n");
  check_dump("match x { 1 => n = n + 1, _ => return }\n",
             "(match x (=> 1 (= n (+ n 1))) (=> _ (return)))\n");
  check_dump("let y = match x { _ => 1 } + 1\n", "(let y (+ (match x (=> _ 1)) 1))\n");
}

static void test_patterns(void **state) {
  (void)state;
  check_dump("match v {\n"
             "  _ => 0\n"
             "  x => 0\n"
             "  nil => 0\n"
             "  true => 0\n"
             "  false => 0\n"
             "  42 => 0\n"
             "  -7 => 0\n"
             "  0x10 => 0\n"
             "  3.5 => 0\n"
             "  -1e-4 => 0\n"
             "  \"s\\n\" => 0\n"
             "  [] => 0\n"
             "  a :: b :: c => 0\n"
             "  [a, [b], []] => 0\n"
             "  (a, (b, c), _) => 0\n"
             "  ((a)) => 0\n"
             "  {f: (a, b), g: -1,} => 0\n"
             "  (a :: b) :: c => 0\n"
             "  -4611686018427387904 => 0\n"
             "}\n",
             "(match v (=> _ 0) (=> x 0) (=> nil 0) (=> true 0) (=> false 0) (=> 42 0)"
             " (=> -7 0) (=> 16 0) (=> (float 3.5) 0) (=> (float -0.0001) 0)"
             " (=> \"s\\n\" 0) (=> [] 0) (=> (:: a (:: b c)) 0)"
             " (=> (list a (list b) []) 0) (=> (tuple a (tuple b c) _) 0) (=> a 0)"
             " (=> (record (f (tuple a b)) (g -1)) 0) (=> (:: (:: a b) c) 0)"
             " (=> -4611686018427387904 0))\n");
  check_dump("let (a, b) = p\nlet x :: _ = l\nlet {x: x} = r\nlet _ = 1\n",
             "(let (tuple a b) p)\n(let (:: x _) l)\n(let (record (x x)) r)\n(let _ 1)\n");
  // pattern newlines are insignificant
  check_dump("let (a,\n b) = p\n", "(let (tuple a b) p)\n");
}

static void test_loops_try_return(void **state) {
  (void)state;
  check_dump("while n > 0 { n = n - 1 }\n", "(while (> n 0) (block (= n (- n 1))))\n");
  check_dump("for i in 0..10 { f(i) }\nfor x in xs { break }\nfor i in a + 1..f(b) { continue }\n",
             "(for i (range 0 10) (block (call f i)))\n(for x xs (block (break)))\n"
             "(for i (range (+ a 1) (call f b)) (block (continue)))\n");
  check_dump("try { raise(\"boom\") } catch e { println(\"caught \" ++ e) }\n",
             "(try (block (call raise \"boom\")) e (block (call println (++ \"caught \" e))))\n");
  check_dump("fn f() { return }\nfn g() { return 1 + 2 }\nfn h() { return; 1 }\n",
             "(fn-decl f () (block (return)))\n(fn-decl g () (block (return (+ 1 2))))\n"
             "(fn-decl h () (block (return) 1))\n");
  check_dump("fn f() {\n  return\n  g()\n}\n", "(fn-decl f () (block (return) (call g)))\n");
  check_dump("let x = while a { }\n", "(let x (while a (block)))\n");
}

static void test_statements(void **state) {
  (void)state;
  check_dump("let xs = [1, 2, 3]\nvar n = 0\nn = n + 1\na[1] = 5\np.size = p.size + 1\n",
             "(let xs (list 1 2 3))\n(var n 0)\n(= n (+ n 1))\n(= (index a 1) 5)\n"
             "(= (field p size) (+ (field p size) 1))\n");
  check_dump("import util\nexternal len(s) = \"string_length\"\nexternal now() = \"t\"\n",
             "(import util)\n(external len (s) \"string_length\")\n(external now () \"t\")\n");
  check_dump("let p = {name: \"a\", size: 3}; p.size = p.size + 1\n",
             "(let p (record (name \"a\") (size 3)))\n(= (field p size) (+ (field p size) 1))\n");
  check_dump(";;a;;b;\n", "a\nb\n");
  check_dump("", "");
  check_dump("// only a comment", "");
  check_dump("{ a; }\n{ ; }\n", "(block a)\n(block)\n");
}

// ---------------------------------------------------------------------------
// Statement separation by newlines

static void test_newline_rules(void **state) {
  (void)state;
  check_dump("a\n-b\n", "a\n(- b)\n");
  check_dump("a -\n b\n", "(- a b)\n");
  check_dump("let x = 1 +\n  2 *\n  3\n", "(let x (+ 1 (* 2 3)))\n");
  check_dump("f\n(x)\n", "f\nx\n");
  check_dump("f(\n  x,\n  y\n)\n", "(call f x y)\n");
  check_dump("a\n[1]\n", "a\n(list 1)\n");
  check_dump("a[\n1\n]\n", "(index a 1)\n");
  check_dump("(a\n+ b)\n", "(+ a b)\n");
  check_dump("[a\n, b\n]\n", "(list a b)\n");
  check_dump("[| a\n- b |]\n", "(array (- a b))\n");
  check_dump("{x: a\n- b}\n", "(record (x (- a b)))\n");
  check_dump("f(fn() {\n  a\n  -b\n})\n", "(call f (fn () (block a (- b))))\n");
  check_dump("r.\nf\n", "(field r f)\n");
  check_dump("a ::\nb\n", "(:: a b)\n");
  check_dump("a &&\nb ||\nc\n", "(|| (&& a b) c)\n");
  check_dump("x =\n 5\n", "(= x 5)\n");
  check_dump("let x =\n 5\n", "(let x 5)\n");
}

static void test_newline_errors(void **state) {
  (void)state;
  check_errors("a\n+ b\n", "2:1: expected expression, found '+'\n");
  check_errors("x\n.f\n", "2:1: expected expression, found '.'\n");
  check_errors("x\n= 5\n", "2:1: expected expression, found '='\n");
  check_errors("a b\n", "1:3: expected newline or ';' after statement, found 'b'\n");
  check_errors("{ a b }\n", "1:5: expected newline or ';' after statement, found 'b'\n");
  check_errors("if a { } b\n", "1:10: expected newline or ';' after statement, found 'b'\n");
}

// ---------------------------------------------------------------------------
// Positions

static const Expr *item(const Parsed *p, int i) { return p->result.program.items.items[i]; }

static void assert_pos(SrcPos pos, uint32_t start, uint32_t end, uint32_t line, uint32_t line_start) {
  if (pos.start != start || pos.end != end || pos.line != line || pos.line_start != line_start)
    fprintf(stderr, "pos %u..%u line %u@%u, expected %u..%u line %u@%u\n", (unsigned)pos.start,
            (unsigned)pos.end, (unsigned)pos.line, (unsigned)pos.line_start, (unsigned)start,
            (unsigned)end, (unsigned)line, (unsigned)line_start);
  assert_int_equal(pos.start, start);
  assert_int_equal(pos.end, end);
  assert_int_equal(pos.line, line);
  assert_int_equal(pos.line_start, line_start);
}

static void test_positions(void **state) {
  (void)state;
  //                0         1         2         3
  //                0123456789012345678901234567890123456789
  Parsed *p = parse("let t = (1, f(x))\n  h :: t\nfn g(a) {\n  {k: a}\n}\n");
  assert_true(p->ok);
  const Expr *let = item(p, 0);
  assert_pos(let->pos, 0, 17, 1, 0);
  const Expr *tuple = let->u.let.value;
  assert_int_equal(tuple->kind, EX_TUPLE);
  assert_pos(tuple->pos, 8, 17, 1, 0);
  assert_pos(let->u.let.pattern->pos, 4, 5, 1, 0);
  const Expr *call = tuple->u.items.items[1];
  assert_int_equal(call->kind, EX_CALL);
  assert_pos(call->pos, 12, 16, 1, 0);
  assert_pos(call->u.call.args.items[0]->pos, 14, 15, 1, 0);
  const Expr *cons = item(p, 1);
  assert_int_equal(cons->kind, EX_CONS);
  assert_pos(cons->pos, 20, 26, 2, 18);
  const Expr *fn = item(p, 2);
  assert_int_equal(fn->kind, EX_FN_DECL);
  assert_pos(fn->pos, 27, 47, 3, 27);  // multi-line: end past the first line
  assert_pos(fn->u.fn.name_pos, 30, 31, 3, 27);
  assert_pos(fn->u.fn.body->pos, 35, 47, 3, 27);
  const Expr *record = fn->u.fn.body->u.block.items[0];
  assert_int_equal(record->kind, EX_RECORD);
  assert_pos(record->pos, 39, 45, 4, 37);
  done(p);
}

static void test_positions_more(void **state) {
  (void)state;
  //                0         1         2         3
  //                0123456789012345678901234567890123456789
  Parsed *p = parse("[1, 2]; [|3|]; -x; a[0]; r.f; M.g; []\n"
                    "if a {\n} else {\n}\nx = f(\n  1)\n");
  assert_true(p->ok);
  assert_pos(item(p, 0)->pos, 0, 6, 1, 0);
  assert_pos(item(p, 1)->pos, 8, 13, 1, 0);
  assert_pos(item(p, 2)->pos, 15, 17, 1, 0);
  assert_pos(item(p, 3)->pos, 19, 23, 1, 0);
  assert_pos(item(p, 4)->pos, 25, 28, 1, 0);
  assert_int_equal(item(p, 5)->kind, EX_MEMBER);
  assert_pos(item(p, 5)->pos, 30, 33, 1, 0);
  assert_int_equal(item(p, 6)->kind, EX_EMPTY_LIST);
  assert_pos(item(p, 6)->pos, 35, 37, 1, 0);
  assert_pos(item(p, 7)->pos, 38, 55, 2, 38);
  const Expr *assign = item(p, 8);
  assert_int_equal(assign->kind, EX_ASSIGN);
  assert_pos(assign->pos, 56, 67, 5, 56);
  assert_pos(assign->u.assign.value->pos, 60, 67, 5, 56);
  done(p);
  p = parse("match v { -3 => 1, (a, b) => 2, {f: x} => 3 }");
  const Expr *m = item(p, 0);
  assert_pos(m->pos, 0, 45, 1, 0);
  assert_pos(m->u.match.arms[0].pattern->pos, 10, 12, 1, 0);
  assert_pos(m->u.match.arms[1].pattern->pos, 19, 25, 1, 0);
  assert_pos(m->u.match.arms[2].pattern->pos, 32, 38, 1, 0);
  done(p);
}

// ---------------------------------------------------------------------------
// Errors and recovery

static void test_error_messages(void **state) {
  (void)state;
  check_errors("f(a, b }\n", "1:8: expected ')' after arguments, found '}'\n");
  check_errors("let x = (1 + 2\n", "2:1: unexpected end of file (expected ')' to close '(')\n");
  check_errors("fn f() {\n  1\n", "3:1: unexpected end of file (expected '}' to close block opened at line 1)\n");
  check_errors("let = 1\n", "1:5: expected pattern, found '='\n");
  check_errors("let x 1\n", "1:7: expected '=' after 'let' pattern, found '1'\n");
  check_errors("var 1 = 2\n", "1:5: expected variable name after 'var', found '1'\n");
  check_errors("()\n", "1:1: empty tuple '()' is not supported\n");
  check_errors("(1,)\n", "1:1: a tuple needs at least two items\n");
  check_errors("a < b < c\n", "1:7: comparison operators cannot be chained; use parentheses\n");
  check_errors("a == b != c\n", "1:8: comparison operators cannot be chained; use parentheses\n");
  check_errors("1 = 2\n", "1:1: invalid assignment target\n");
  check_errors("f(x) = 2\n", "1:1: invalid assignment target\n");
  check_errors("import Util\n", "1:8: module name after 'import' must start with a lower-case letter\n");
  check_errors("fn f() { import util }\n", "1:10: 'import' is only allowed at top level\n");
  check_errors("if a { external f() = \"c\" }\n", "1:8: 'external' is only allowed at top level\n");
  check_errors("external f(a) = g\n", "1:17: expected C function name string, found 'g'\n");
  check_errors("if a 1\n", "1:6: expected '{' after 'if' condition, found '1'\n");
  check_errors("if a { } else 1\n", "1:15: expected '{' after 'else', found '1'\n");
  check_errors("for 1 in x { }\n",
               "1:5: expected loop variable after 'for', found '1'\n");
  check_errors("for x of y { }\n", "1:7: expected 'in' after loop variable, found 'of'\n");
  check_errors("try { } 1\n", "1:9: expected 'catch' after 'try' block, found '1'\n");
  check_errors("match x { 1 2 }\n", "1:13: expected '=>' after match pattern, found '2'\n");
  check_errors("match x { 1 => 2 3 => 4 }\n",
               "1:18: expected ',' or newline after match arm, found '3'\n");
  check_errors("match x { }\n", "1:9: match has no arms\n");
  check_errors("match x { 1 => 2\n", "2:1: unexpected end of file (expected '}' to close match opened at line 1)\n");
  check_errors("r.1\n", "1:3: expected field name after '.', found '1'\n");
  check_errors("fn f(1) { }\n", "1:6: expected parameter name, found '1'\n");
  check_errors("fn f(a, a) { }\n", "1:9: duplicate parameter 'a'\n");
  check_errors("{a: 1, a: 2}\n", "1:8: duplicate field 'a'\n");
  check_errors("{a: 1, 2}\n", "1:8: expected field name, found '2'\n");
  check_errors("let {} = r\n", "1:6: expected field name in record pattern, found '}'\n");
  check_errors("let - x = 1\n", "1:7: expected number after '-' in pattern, found 'x'\n");
  check_errors("let () = 1\n", "1:5: empty tuple '()' is not supported\n");
  check_errors("let x = fn f() { }\n", "1:12: a named function must be a statement; use `fn(...)` here\n");
  check_errors("[1 2]\n", "1:4: expected ']' after list items, found '2'\n");
  check_errors("a[1 2]\n", "1:5: expected ']' after index, found '2'\n");
  check_errors("let s = \"abc\"\"\n",
               "1:14: unterminated string\n"
               "1:14: expected newline or ';' after statement, found string literal\n");
  check_errors("x + \"a very long string\" \"b\"\n",
               "1:26: expected newline or ';' after statement, found string literal\n");
  check_errors("averyveryveryverylongidentifiername 1\n",
               "1:37: expected newline or ';' after statement, found '1'\n");
  check_errors("1 averyveryveryverylongidentifiername\n",
               "1:3: expected newline or ';' after statement, found 'averyveryveryverylongide...'\n");
}

static void test_lexical_errors(void **state) {
  (void)state;
  check_errors("let s = \"a\\qb\"\n", "1:11: invalid escape\n");
  check_errors("let s = \"abc\nlet t = 1\n", "1:9: unterminated string\n");
  check_errors("x = 1 # 2\n", "1:7: unexpected character '#'\n");
  check_errors("let v = \xc3\xa9\n", "1:9: unexpected character (byte 0xc3)\n");
  check_errors("a | b\n", "1:3: unexpected character '|'\n");
  check_errors("a & b\n", "1:3: unexpected character '&'\n");
  check_errors("\x01\n", "1:1: unexpected character (byte 0x01)\n");
  check_errors("let x = 12abc\n", "1:9: invalid number literal\n");
  check_errors("let x = 99999999999999999999999x\n", "1:9: invalid number literal\n");
  check_errors("let x = 1e999\n", "1:9: float literal out of range\n");
  check_dump("let s = \"\xc3\xa9\" // \xe2\x82\xac comment\n", "(let s \"\xc3\xa9\")\n");
}

static void test_int_range(void **state) {
  (void)state;
  check_errors("4611686018427387904\n", "1:1: integer literal out of range\n");
  check_errors("-4611686018427387905\n", "1:2: integer literal out of range\n");
  check_dump("-4611686018427387904\n", "-4611686018427387904\n");
  check_errors("99999999999999999999999\n", "1:1: integer literal out of range\n");
  check_errors("0x4000000000000000\n", "1:1: integer literal out of range\n");
  check_errors("match x { -4611686018427387905 => 1 }\n", "1:12: integer literal out of range\n");
  check_errors("match x { 4611686018427387904 => 1 }\n", "1:11: integer literal out of range\n");
  check_dump("match x { -4611686018427387904 => 4611686018427387903 }\n",
             "(match x (=> -4611686018427387904 4611686018427387903))\n");
}

static void test_recovery(void **state) {
  (void)state;
  check_errors("let x = f(a, b }\n"
               "let y = 1 +\n"
               "  2\n"
               "let z = (1 +)\n"
               "foo(1 2)\n"
               "x # y\n"
               "a < b < c\n"
               "5 = 3\n"
               "fn g() {\n"
               "  let q = 1 2\n"
               "  let r = )\n"
               "  ok()\n"
               "}\n"
               "let w = [1,\n"
               "  2 3]\n"
               "let fine = 1\n"
               "match x {\n"
               "  1 => 1 1\n"
               "  2 => )\n"
               "  3 => 3\n"
               "}\n"
               "}\n"
               "let last = ;\n",
               "1:16: expected ')' after arguments, found '}'\n"
               "4:13: expected expression, found ')'\n"
               "5:7: expected ')' after arguments, found '2'\n"
               "6:3: unexpected character '#'\n"
               "7:7: comparison operators cannot be chained; use parentheses\n"
               "8:1: invalid assignment target\n"
               "10:13: expected newline or ';' after statement, found '2'\n"
               "11:11: expected expression, found ')'\n"
               "15:5: expected ']' after list items, found '3'\n"
               "18:10: expected ',' or newline after match arm, found '1'\n"
               "19:8: expected expression, found ')'\n"
               "22:1: expected expression, found '}'\n"
               "23:12: expected expression, found ';'\n");
  // the statements around the errors are kept
  Parsed *p = parse("let a = )\nlet b = 2\nfn f() { ) ; g() }\n");
  assert_int_equal(p->result.error_count, 2);
  char *got = dump(p);
  assert_string_equal(got, "(let b 2)\n(fn-decl f () (block (call g)))\n");
  free(got);
  done(p);
}

static void test_error_limit(void **state) {
  (void)state;
  char text[4000] = "";
  for (int i = 0; i < 100; i++) strcat(text, "let = 1\n");
  Parsed *p = parse(text);
  assert_int_equal(p->result.error_count, PARSE_MAX_ERRORS);
  assert_int_equal(p->result.errors[19].line, 20);
  done(p);
}

static void test_eof_errors_once(void **state) {
  (void)state;
  check_errors("fn f() { if a { while b { (1, [2,",
               "1:34: unexpected end of file (expected ']' after list items)\n");
  check_errors("let x =", "1:8: unexpected end of file (expected expression)\n");
  check_errors("{{{{", "1:5: unexpected end of file (expected '}' to close block opened at line 1)\n");
}

// ---------------------------------------------------------------------------
// Malformed input never crashes

static char *repeat(const char *prefix, const char *unit, int n, const char *suffix) {
  size_t len = strlen(prefix) + strlen(unit) * (size_t)n + strlen(suffix);
  char *s = malloc(len + 1);
  strcpy(s, prefix);
  char *at = s + strlen(prefix);
  for (int i = 0; i < n; i++, at += strlen(unit)) memcpy(at, unit, strlen(unit));
  strcpy(at, suffix);
  return s;
}

static void check_too_deep(const char *prefix, const char *unit, const char *suffix) {
  char *text = repeat(prefix, unit, 50000, suffix);
  Parsed *p = parse(text);
  assert_false(p->ok);
  bool found = false;
  for (int i = 0; i < p->result.error_count; i++)
    found |= strcmp(p->result.errors[i].message, "nesting too deep") == 0;
  assert_true(found);
  done(p);
  free(text);
}

static void test_deep_nesting(void **state) {
  (void)state;
  check_too_deep("", "(", "");
  check_too_deep("", "[", "");
  check_too_deep("", "[|", "");
  check_too_deep("", "{", "");
  check_too_deep("", "{\n", "");
  check_too_deep("let x = ", "{a: ", "");
  check_too_deep("", "- ", "1");
  check_too_deep("", "!", "x");
  check_too_deep("x", " :: x", "");
  check_too_deep("x", " + x", "");
  check_too_deep("f", "(x)", "");
  check_too_deep("a", ".b", "");
  check_too_deep("a", "[0]", "");
  check_too_deep("", "if a { ", "");
  check_too_deep("if a { 1 }", " else if a { 1 }", "");
  check_too_deep("", "fn() { ", "");
  check_too_deep("", "match x { _ => ", "");
  check_too_deep("match x { ", "(", "");
  check_too_deep("let ", "[", " = 1");
  check_too_deep("let x", " :: x", " = 1");
  check_too_deep("", "return ", "");
  // nesting below the limit is fine
  char *text = repeat("", "(", 200, "1");
  char *full = repeat(text, ")", 200, "\n");
  Parsed *p = parse(full);
  assert_true(p->ok);
  done(p);
  free(text);
  free(full);
}

static void test_nul_and_binary_input(void **state) {
  (void)state;
  const char text[] = "let x = 1\0let y = 2\n";
  Parsed *p = parse_n(text, sizeof text - 1);
  assert_int_equal(p->result.error_count, 1);
  assert_string_equal(p->result.errors[0].message, "unexpected character (byte 0x00)");
  done(p);
}

// Random token soup and random bytes: no crash, hang or sanitizer report.
static void test_fuzz(void **state) {
  (void)state;
  static const char *const words[] = {
      "let ", "var ", "fn ", "if ", "else ", "match ", "while ", "for ", "in ",
      "try ", "catch ", "return ", "break ", "import ", "external ", "x ", "F ",
      "1 ", "2.5 ", "\"s\" ", "( ", ") ", "[ ", "] ", "[| ", "|] ", "{ ", "} ",
      ", ", "; ", ": ", ". ", ".. ", ":: ", "++ ", "+ ", "- ", "* ", "== ", "< ",
      "= ", "=> ", "! ", "&& ", "|| ", "\n", "_ ", "# ", "\"", "\\", "\xc3"};
  unsigned seed = 42;
  char buf[2048];
  for (int round = 0; round < 3000; round++) {
    size_t len = 0;
    int count = round % 120;
    for (int i = 0; i < count; i++) {
      seed = seed * 1103515245u + 12345u;
      const char *w = round % 5 == 4 ? (char[2]){(char)(seed >> 16), 0}
                                     : words[(seed >> 16) % (sizeof words / sizeof *words)];
      size_t wl = round % 5 == 4 ? 1 : strlen(w);
      memcpy(buf + len, w, wl);
      len += wl;
    }
    buf[len] = '\0';
    Parsed *p = parse_n(buf, len);
    assert_true(p->result.error_count <= PARSE_MAX_ERRORS);
    char *d = dump(p);
    free(d);
    done(p);
  }
}

static void test_print_errors(void **state) {
  (void)state;
  Parsed *p = parse("let = 1\n");
  parse_print_errors(&p->source, &p->result);  // "t.mn:1:5: syntax error: ..."
  done(p);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_literals),
      cmocka_unit_test(test_names_and_members),
      cmocka_unit_test(test_precedence),
      cmocka_unit_test(test_postfix),
      cmocka_unit_test(test_constructors),
      cmocka_unit_test(test_record_or_block),
      cmocka_unit_test(test_functions),
      cmocka_unit_test(test_if),
      cmocka_unit_test(test_match),
      cmocka_unit_test(test_patterns),
      cmocka_unit_test(test_loops_try_return),
      cmocka_unit_test(test_statements),
      cmocka_unit_test(test_newline_rules),
      cmocka_unit_test(test_newline_errors),
      cmocka_unit_test(test_positions),
      cmocka_unit_test(test_positions_more),
      cmocka_unit_test(test_error_messages),
      cmocka_unit_test(test_lexical_errors),
      cmocka_unit_test(test_int_range),
      cmocka_unit_test(test_recovery),
      cmocka_unit_test(test_error_limit),
      cmocka_unit_test(test_eof_errors_once),
      cmocka_unit_test(test_deep_nesting),
      cmocka_unit_test(test_nul_and_binary_input),
      cmocka_unit_test(test_fuzz),
      cmocka_unit_test(test_print_errors),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
