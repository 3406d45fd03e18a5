// test_lexer.c - cmocka tests for lang/front/lexer.c: every token kind, literal
// decoding, positions and newline flags, and malformed input.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "../../lang/front/lexer.h"

enum { MAX_TOKENS = 64 };

// Lexes `text` (length len) into out[], stopping after TK_EOF; returns count.
static int lex_n(Arena *arena, const char *text, size_t len, Token *out) {
  Lexer lexer;
  lexer_init(&lexer, text, (uint32_t)len, arena);
  int n = 0;
  do {
    out[n] = lexer_next(&lexer);
  } while (out[n++].kind != TK_EOF && n < MAX_TOKENS);
  return n;
}

static int lex(Arena *arena, const char *text, Token *out) {
  return lex_n(arena, text, strlen(text), out);
}

// Checks that `text` lexes to exactly `kinds` (TK_EOF-terminated) without errors.
static void check_kinds(const char *text, const TokenKind *kinds) {
  Arena arena = {0};
  Token toks[MAX_TOKENS];
  int n = lex(&arena, text, toks);
  for (int i = 0; i < n; i++) {
    assert_int_equal(toks[i].kind, kinds[i]);
    assert_null(toks[i].error);
    if (kinds[i] == TK_EOF) break;
  }
  arena_free_all(&arena);
}

static void test_punctuation(void **state) {
  (void)state;
  const TokenKind kinds[] = {
      TK_LPAREN, TK_RPAREN, TK_LBRACKET, TK_RBRACKET, TK_LARRAY, TK_RARRAY,
      TK_LBRACE, TK_RBRACE, TK_COMMA, TK_SEMI, TK_COLON, TK_DOT, TK_DOTDOT,
      TK_CONS, TK_CONCAT, TK_PLUS, TK_MINUS, TK_STAR, TK_SLASH, TK_PERCENT,
      TK_EQ, TK_NE, TK_LT, TK_LE, TK_GT, TK_GE, TK_ASSIGN, TK_ARROW, TK_BANG,
      TK_AND, TK_OR, TK_EOF};
  check_kinds("( ) [ ] [| |] { } , ; : . .. :: ++ + - * / % == != < <= > >= = => ! && ||",
              kinds);
}

static void test_glued_operators(void **state) {
  (void)state;
  const TokenKind k1[] = {TK_LARRAY, TK_RARRAY, TK_EOF};
  check_kinds("[||]", k1);
  const TokenKind k2[] = {TK_IDENT, TK_CONS, TK_IDENT, TK_COLON, TK_IDENT, TK_EOF};
  check_kinds("a::b:c", k2);
  const TokenKind k3[] = {TK_IDENT, TK_ARROW, TK_IDENT, TK_EQ, TK_ASSIGN, TK_EOF};
  check_kinds("x=>y===", k3);
  const TokenKind k4[] = {TK_INT, TK_DOTDOT, TK_INT, TK_EOF};
  check_kinds("0..10", k4);
  const TokenKind k5[] = {TK_BANG, TK_BANG, TK_NE, TK_IDENT, TK_CONCAT, TK_PLUS, TK_EOF};
  check_kinds("!!!=x+++", k5);
  const TokenKind k6[] = {TK_IDENT, TK_SLASH, TK_IDENT, TK_EOF};
  check_kinds("a/b// c", k6);
}

static void test_keywords_and_identifiers(void **state) {
  (void)state;
  const TokenKind kinds[] = {
      TK_LET, TK_VAR, TK_FN, TK_IF, TK_ELSE, TK_MATCH, TK_WHILE, TK_FOR, TK_IN,
      TK_TRY, TK_CATCH, TK_RETURN, TK_BREAK, TK_CONTINUE, TK_IMPORT, TK_EXTERNAL,
      TK_NIL, TK_TRUE, TK_FALSE, TK_IDENT, TK_IDENT, TK_IDENT, TK_IDENT, TK_IDENT, TK_EOF};
  check_kinds("let var fn if else match while for in try catch return break continue "
              "import external nil true false letx _ _a1 List If",
              kinds);
}

static void test_int_literals(void **state) {
  (void)state;
  Arena arena = {0};
  Token t[MAX_TOKENS];
  lex(&arena, "42 0x1f 1_000_000 0XfF 0 4611686018427387904 9223372036854775807 "
              "9223372036854775808 0xffffffffffffffffff",
      t);
  assert_int_equal(t[0].u.int_val, 42);
  assert_int_equal(t[1].u.int_val, 31);
  assert_int_equal(t[2].u.int_val, 1000000);
  assert_int_equal(t[3].u.int_val, 255);
  assert_int_equal(t[4].u.int_val, 0);
  assert_int_equal(t[5].u.int_val, (int64_t)1 << 62);  // range checked later
  assert_false(t[6].int_overflow);
  assert_true(t[6].u.int_val == INT64_MAX);
  assert_true(t[7].int_overflow);
  assert_true(t[8].int_overflow);
  for (int i = 0; i < 9; i++) {
    assert_int_equal(t[i].kind, TK_INT);
    assert_null(t[i].error);
  }
  arena_free_all(&arena);
}

static void test_float_literals(void **state) {
  (void)state;
  Arena arena = {0};
  Token t[MAX_TOKENS];
  lex(&arena, "3.5 1e-4 1.5E+3 2e10 0.25 1_0.5", t);
  double expect[] = {3.5, 1e-4, 1.5e3, 2e10, 0.25, 10.5};
  for (int i = 0; i < 6; i++) {
    assert_int_equal(t[i].kind, TK_FLOAT);
    assert_true(t[i].u.float_val == expect[i]);
    assert_null(t[i].error);
  }
  // `2.` is INT then DOT; `1.x` is INT DOT IDENT.
  const TokenKind k1[] = {TK_INT, TK_DOT, TK_EOF};
  check_kinds("2.", k1);
  const TokenKind k2[] = {TK_INT, TK_DOT, TK_IDENT, TK_EOF};
  check_kinds("1.x", k2);
  const TokenKind k3[] = {TK_FLOAT, TK_DOTDOT, TK_INT, TK_EOF};
  check_kinds("1.5..2", k3);
  arena_free_all(&arena);
}

static void test_bad_numbers(void **state) {
  (void)state;
  Arena arena = {0};
  Token t[MAX_TOKENS];
  int n = lex(&arena, "12abc 0x 0xg 1e 1e999 7", t);
  assert_int_equal(n, 7);  // one token per bad word, then 7 and EOF
  assert_string_equal(t[0].error, "invalid number literal");
  assert_int_equal(t[0].pos.end, 5);
  assert_string_equal(t[1].error, "invalid number literal");
  assert_string_equal(t[2].error, "invalid number literal");
  assert_string_equal(t[3].error, "invalid number literal");
  assert_string_equal(t[4].error, "float literal out of range");
  assert_null(t[5].error);
  assert_int_equal(t[5].u.int_val, 7);
  arena_free_all(&arena);
}

static void test_strings(void **state) {
  (void)state;
  Arena arena = {0};
  Token t[MAX_TOKENS];
  lex(&arena, "\"a\\tb\\n\\\"\\\\\" \"\\x41\\x7a\\0z\\'\\r\" \"\" \"h\xc3\xa9\"", t);
  assert_int_equal(t[0].kind, TK_STRING);
  assert_int_equal(t[0].u.str.len, 6);
  assert_memory_equal(t[0].u.str.bytes, "a\tb\n\"\\", 6);
  assert_int_equal(t[1].u.str.len, 6);
  assert_memory_equal(t[1].u.str.bytes, "Az\0z'\r", 6);
  assert_int_equal(t[2].u.str.len, 0);
  assert_int_equal(t[3].u.str.len, 3);
  assert_memory_equal(t[3].u.str.bytes, "h\xc3\xa9", 3);
  assert_int_equal(t[0].pos.start, 0);
  assert_int_equal(t[0].pos.end, 12);
  for (int i = 0; i < 4; i++) assert_null(t[i].error);
  arena_free_all(&arena);
}

static void test_bad_escapes(void **state) {
  (void)state;
  Arena arena = {0};
  Token t[MAX_TOKENS];
  int n = lex(&arena, "x \"ab\\qc\" \"\\x4\" \"\\xzz\" \"end\\\"", t);
  assert_int_equal(t[1].kind, TK_STRING);
  assert_string_equal(t[1].error, "invalid escape");
  assert_int_equal(t[1].error_offset, 5);
  assert_int_equal(t[1].pos.end, 9);  // the string is still closed
  assert_string_equal(t[2].error, "invalid escape");
  assert_string_equal(t[3].error, "invalid escape");
  assert_string_equal(t[4].error, "unterminated string");  // \" escapes the quote
  assert_int_equal(t[n - 1].kind, TK_EOF);
  arena_free_all(&arena);
}

static void test_unterminated_string(void **state) {
  (void)state;
  Arena arena = {0};
  Token t[MAX_TOKENS];
  int n = lex(&arena, "let s = \"abc\nnext \"\\", t);
  assert_int_equal(t[3].kind, TK_STRING);
  assert_string_equal(t[3].error, "unterminated string");
  assert_int_equal(t[3].error_offset, 8);
  assert_int_equal(t[3].pos.end, 12);  // stops before the newline
  assert_int_equal(t[3].u.str.len, 3);
  assert_int_equal(t[4].kind, TK_IDENT);
  assert_true(t[4].newline_before);
  assert_int_equal(t[4].pos.line, 2);
  assert_string_equal(t[5].error, "unterminated string");  // backslash at EOF
  assert_int_equal(n, 7);
  arena_free_all(&arena);
}

static void test_unexpected_characters(void **state) {
  (void)state;
  Arena arena = {0};
  Token t[MAX_TOKENS];
  const char text[] = "a | b # \xc3\xa9 & \x01 \x7f \0 c";
  int n = lex_n(&arena, text, sizeof text - 1, t);
  TokenKind kinds[] = {TK_IDENT, TK_ERROR, TK_IDENT, TK_ERROR, TK_ERROR, TK_ERROR,
                       TK_ERROR, TK_ERROR, TK_ERROR, TK_IDENT, TK_EOF};
  assert_int_equal(n, 11);
  for (int i = 0; i < n; i++) {
    assert_int_equal(t[i].kind, kinds[i]);
    if (kinds[i] == TK_ERROR) assert_string_equal(t[i].error, "unexpected character");
  }
  assert_int_equal(t[4].pos.start, 8);  // the UTF-8 sequence is one token
  assert_int_equal(t[4].pos.end, 10);
  arena_free_all(&arena);
}

static void test_positions_and_newlines(void **state) {
  (void)state;
  Arena arena = {0};
  Token t[MAX_TOKENS];
  lex(&arena, "let x = 1 // c\xc3\xa9\n  foo(\r\n\tbar)\n\n  \"s\"", t);
  assert_true(t[0].newline_before);  // first token of the file
  assert_false(t[1].newline_before);
  assert_int_equal(t[4].kind, TK_IDENT);  // foo
  assert_true(t[4].newline_before);
  assert_int_equal(t[4].pos.line, 2);
  assert_int_equal(t[4].pos.line_start, 17);
  assert_int_equal(t[4].pos.start, 19);
  assert_int_equal(t[4].pos.end, 22);
  assert_false(t[5].newline_before);  // (
  assert_true(t[6].newline_before);   // bar
  assert_int_equal(t[6].pos.line, 3);
  assert_int_equal(t[6].pos.start - t[6].pos.line_start, 1);
  assert_int_equal(t[8].kind, TK_STRING);
  assert_int_equal(t[8].pos.line, 5);
  assert_int_equal(t[8].pos.start - t[8].pos.line_start, 2);
  assert_int_equal(t[9].kind, TK_EOF);
  assert_int_equal(t[9].pos.start, t[9].pos.end);
  arena_free_all(&arena);
}

static void test_empty_and_comment_only(void **state) {
  (void)state;
  Arena arena = {0};
  Token t[MAX_TOKENS];
  assert_int_equal(lex(&arena, "", t), 1);
  assert_int_equal(t[0].kind, TK_EOF);
  assert_int_equal(lex(&arena, "// only \xff\xfe a comment", t), 1);
  assert_int_equal(lex(&arena, "//", t), 1);
  Lexer lexer;
  lexer_init(&lexer, "x", 1, &arena);
  assert_int_equal(lexer_next(&lexer).kind, TK_IDENT);
  for (int i = 0; i < 3; i++) assert_int_equal(lexer_next(&lexer).kind, TK_EOF);
  arena_free_all(&arena);
}

static void test_kind_names(void **state) {
  (void)state;
  assert_string_equal(lexer_kind_name(TK_RPAREN), ")");
  assert_string_equal(lexer_kind_name(TK_LARRAY), "[|");
  assert_string_equal(lexer_kind_name(TK_EXTERNAL), "external");
  assert_string_equal(lexer_kind_name(TK_EOF), "end of file");
  for (int k = 0; k < TK_COUNT; k++) assert_non_null(lexer_kind_name((TokenKind)k));
}

// Random bytes never crash the lexer and always reach EOF.
static void test_random_bytes(void **state) {
  (void)state;
  unsigned seed = 12345;
  char buf[256];
  for (int round = 0; round < 2000; round++) {
    size_t len = (size_t)(round % 256);
    for (size_t i = 0; i < len; i++) {
      seed = seed * 1103515245u + 12345u;
      buf[i] = (char)(seed >> 16);
    }
    Arena arena = {0};
    Lexer lexer;
    lexer_init(&lexer, buf, (uint32_t)len, &arena);
    int guard = 0;
    while (lexer_next(&lexer).kind != TK_EOF) assert_true(++guard <= 300);
    arena_free_all(&arena);
  }
}

static void test_arena(void **state) {
  (void)state;
  Arena arena = {0};
  char *s = arena_strndup(&arena, "hello", 3);
  assert_string_equal(s, "hel");
  unsigned char *big = arena_alloc(&arena, 200000);
  for (int i = 0; i < 200000; i++) assert_int_equal(big[i], 0);
  for (int i = 0; i < 1000; i++) {
    void *p = arena_alloc(&arena, (size_t)i % 13 + 1);
    assert_int_equal((uintptr_t)p % 8, 0);
  }
  arena_free_all(&arena);
  assert_null(arena.chunks);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_punctuation),
      cmocka_unit_test(test_glued_operators),
      cmocka_unit_test(test_keywords_and_identifiers),
      cmocka_unit_test(test_int_literals),
      cmocka_unit_test(test_float_literals),
      cmocka_unit_test(test_bad_numbers),
      cmocka_unit_test(test_strings),
      cmocka_unit_test(test_bad_escapes),
      cmocka_unit_test(test_unterminated_string),
      cmocka_unit_test(test_unexpected_characters),
      cmocka_unit_test(test_positions_and_newlines),
      cmocka_unit_test(test_empty_and_comment_only),
      cmocka_unit_test(test_kind_names),
      cmocka_unit_test(test_random_bytes),
      cmocka_unit_test(test_arena),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
