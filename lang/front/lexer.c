// lexer.c - Minnow tokenizer (interface in lexer.h).
// 1. Whitespace is ' ', '\t', '\r', '\n'; `//` comments run to the end of the
//    line. A '\n' (also the one ending a comment) sets the next token's
//    newline_before, which parser.c uses to separate statements.
// 2. Identifiers [A-Za-z_][A-Za-z0-9_]*; keywords are reserved.
// 3. Ints: decimal or 0x hex, '_' separators allowed after the first digit.
//    Floats: digits '.' digit... and/or an exponent e[+-]digits. A '.' not
//    followed by a digit is not part of a number, so `0..10` is INT .. INT.
//    A number running into letters or '_'-only hex is "invalid number literal".
// 4. Strings: "..." on one line, escapes \n \t \r \0 \\ \" \' \xHH; any bytes
//    (UTF-8 included) otherwise. Comments may hold any bytes too.
// 5. Any other non-ASCII or control byte, and a lone '|', is "unexpected
//    character"; a UTF-8 sequence is reported once, as one TK_ERROR token.
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lexer.h"

static const char *const kind_names[TK_COUNT] = {
#define X(kind, spelling) [kind] = spelling,
    TOKEN_KINDS(X)
#undef X
};

const char *lexer_kind_name(TokenKind kind) {
  return (unsigned)kind < TK_COUNT ? kind_names[kind] : "?";
}

void lexer_init(Lexer *lexer, const char *text, uint32_t len, Arena *arena) {
  memset(lexer, 0, sizeof *lexer);
  lexer->text = text;
  lexer->len = len;
  lexer->line = 1;
  lexer->at_start = true;
  lexer->arena = arena;
}

// ---------------------------------------------------------------------------
// Character classes and cursor helpers.

static bool is_digit(int c) { return c >= '0' && c <= '9'; }
static bool is_alpha(int c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
static bool is_alnum(int c) { return is_alpha(c) || is_digit(c); }
static int hex_value(int c) {
  if (is_digit(c)) return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The byte at pos + ahead, or 0 past the end (0 is never a valid token byte).
static int peek(const Lexer *lx, uint32_t ahead) {
  uint32_t at = lx->pos + ahead;
  return at < lx->len ? (unsigned char)lx->text[at] : 0;
}

// Consumes one '\n' (pos must be on it), updating the line bookkeeping.
static void take_newline(Lexer *lx) {
  lx->pos++;
  lx->line++;
  lx->line_start = lx->pos;
}

// Skips whitespace and comments; returns whether a newline was crossed.
static bool skip_space(Lexer *lx) {
  bool newline = false;
  for (;;) {
    int c = peek(lx, 0);
    if (lx->pos >= lx->len) return newline;
    if (c == '\n') {
      take_newline(lx);
      newline = true;
    } else if (c == ' ' || c == '\t' || c == '\r') {
      lx->pos++;
    } else if (c == '/' && peek(lx, 1) == '/') {
      while (lx->pos < lx->len && lx->text[lx->pos] != '\n') lx->pos++;
    } else {
      return newline;
    }
  }
}

static Token begin_token(const Lexer *lx) {
  Token t;
  memset(&t, 0, sizeof t);
  t.pos.start = lx->pos;
  t.pos.line = lx->line;
  t.pos.line_start = lx->line_start;
  return t;
}

static Token finish(const Lexer *lx, Token t, TokenKind kind) {
  t.kind = kind;
  t.pos.end = lx->pos;
  return t;
}

static void set_error(Token *t, const char *message, uint32_t offset) {
  if (t->error != NULL) return;  // keep the first problem of a token
  t->error = message;
  t->error_offset = offset;
}

// ---------------------------------------------------------------------------
// Identifiers and keywords.

static const struct { const char *word; TokenKind kind; } keywords[] = {
    {"let", TK_LET},       {"var", TK_VAR},         {"fn", TK_FN},
    {"if", TK_IF},         {"else", TK_ELSE},       {"match", TK_MATCH},
    {"while", TK_WHILE},   {"for", TK_FOR},         {"in", TK_IN},
    {"try", TK_TRY},       {"catch", TK_CATCH},     {"return", TK_RETURN},
    {"break", TK_BREAK},   {"continue", TK_CONTINUE}, {"import", TK_IMPORT},
    {"external", TK_EXTERNAL}, {"nil", TK_NIL},     {"true", TK_TRUE},
    {"false", TK_FALSE},
};

static TokenKind keyword_kind(const char *s, size_t len) {
  for (size_t i = 0; i < sizeof keywords / sizeof keywords[0]; i++) {
    if (strlen(keywords[i].word) == len && memcmp(keywords[i].word, s, len) == 0)
      return keywords[i].kind;
  }
  return TK_IDENT;
}

static Token lex_ident(Lexer *lx, Token t) {
  while (is_alnum(peek(lx, 0))) lx->pos++;
  TokenKind kind = keyword_kind(lx->text + t.pos.start, lx->pos - t.pos.start);
  return finish(lx, t, kind);
}

// ---------------------------------------------------------------------------
// Numbers.

// Letters or digits glued to a number make it invalid; swallow them so that
// one error covers the whole word.
static void reject_suffix(Lexer *lx, Token *t) {
  if (!is_alnum(peek(lx, 0))) return;
  set_error(t, "invalid number literal", t->pos.start);
  while (is_alnum(peek(lx, 0))) lx->pos++;
}

// Finishes an int token; a malformed one gets value 0 (one error is enough).
static Token finish_int(const Lexer *lx, Token t) {
  if (t.error != NULL) {
    t.u.int_val = 0;
    t.int_overflow = false;
  }
  return finish(lx, t, TK_INT);
}

// Adds a digit to an int magnitude, flagging overflow of int64_t.
static void accumulate(Token *t, int base, int digit) {
  if (t->int_overflow) return;
  if (t->u.int_val > (INT64_MAX - digit) / base) {
    t->int_overflow = true;
    return;
  }
  t->u.int_val = t->u.int_val * base + digit;
}

static Token lex_hex(Lexer *lx, Token t) {
  lx->pos += 2;  // "0x"
  bool any = false;
  for (int c = peek(lx, 0); hex_value(c) >= 0 || c == '_'; c = peek(lx, 0)) {
    if (c != '_') accumulate(&t, 16, hex_value(c)), any = true;
    lx->pos++;
  }
  if (!any) set_error(&t, "invalid number literal", t.pos.start);
  reject_suffix(lx, &t);
  return finish_int(lx, t);
}

static void skip_digits(Lexer *lx) {
  while (is_digit(peek(lx, 0)) || peek(lx, 0) == '_') lx->pos++;
}

// Length of an exponent part starting at pos ("e+12" -> 4), 0 if none.
static uint32_t exponent_length(const Lexer *lx) {
  int c = peek(lx, 0);
  if (c != 'e' && c != 'E') return 0;
  uint32_t sign = (peek(lx, 1) == '+' || peek(lx, 1) == '-') ? 1 : 0;
  if (!is_digit(peek(lx, 1 + sign))) return 0;
  uint32_t n = 1 + sign;
  while (is_digit(peek(lx, n))) n++;
  return n;
}

// Converts text[start..end) minus '_' separators with strtod.
static double convert_float(Lexer *lx, uint32_t start, uint32_t end) {
  char small[128];
  size_t len = end - start;
  char *buf = len < sizeof small ? small : arena_alloc(lx->arena, len + 1);
  size_t n = 0;
  for (uint32_t i = start; i < end; i++) {
    if (lx->text[i] != '_') buf[n++] = lx->text[i];
  }
  buf[n] = '\0';
  return strtod(buf, NULL);
}

static Token lex_float_rest(Lexer *lx, Token t) {
  if (peek(lx, 0) == '.') {
    lx->pos++;
    skip_digits(lx);
  }
  lx->pos += exponent_length(lx);
  reject_suffix(lx, &t);
  t.u.float_val = convert_float(lx, t.pos.start, lx->pos);
  if (isinf(t.u.float_val)) set_error(&t, "float literal out of range", t.pos.start);
  return finish(lx, t, TK_FLOAT);
}

static Token lex_number(Lexer *lx, Token t) {
  if (peek(lx, 0) == '0' && (peek(lx, 1) == 'x' || peek(lx, 1) == 'X'))
    return lex_hex(lx, t);
  for (int c = peek(lx, 0); is_digit(c) || c == '_'; c = peek(lx, 0)) {
    if (c != '_') accumulate(&t, 10, c - '0');
    lx->pos++;
  }
  bool fraction = peek(lx, 0) == '.' && is_digit(peek(lx, 1));
  if (fraction || exponent_length(lx) > 0) {
    t.int_overflow = false;
    t.u.int_val = 0;
    return lex_float_rest(lx, t);
  }
  reject_suffix(lx, &t);
  return finish_int(lx, t);
}

// ---------------------------------------------------------------------------
// Strings.

// Finds the closing quote of the string starting at lx->pos; returns its
// offset, or the offset of the '\n' / end of text that cuts the string short.
static uint32_t string_end(const Lexer *lx) {
  uint32_t i = lx->pos + 1;
  while (i < lx->len && lx->text[i] != '"' && lx->text[i] != '\n') {
    i += (lx->text[i] == '\\' && i + 1 < lx->len && lx->text[i + 1] != '\n') ? 2 : 1;
  }
  return i;
}

// Decodes the escape at text[i] (just after a backslash) into *out; returns
// the number of bytes it spans after the backslash, 0 when invalid.
static uint32_t decode_escape(const char *text, uint32_t i, uint32_t end, char *out) {
  switch (text[i]) {
    case 'n': *out = '\n'; return 1;
    case 't': *out = '\t'; return 1;
    case 'r': *out = '\r'; return 1;
    case '0': *out = '\0'; return 1;
    case '\\': *out = '\\'; return 1;
    case '"': *out = '"'; return 1;
    case '\'': *out = '\''; return 1;
    case 'x': break;
    default: return 0;
  }
  if (i + 2 >= end || hex_value(text[i + 1]) < 0 || hex_value(text[i + 2]) < 0) return 0;
  *out = (char)(hex_value(text[i + 1]) * 16 + hex_value(text[i + 2]));
  return 3;
}

static Token lex_string(Lexer *lx, Token t) {
  uint32_t end = string_end(lx);
  char *buf = arena_alloc(lx->arena, end - lx->pos);
  size_t n = 0;
  for (uint32_t i = lx->pos + 1; i < end;) {
    if (lx->text[i] != '\\') {
      buf[n++] = lx->text[i++];
      continue;
    }
    uint32_t used = i + 1 < end ? decode_escape(lx->text, i + 1, end, &buf[n]) : 0;
    if (used == 0) {
      set_error(&t, "invalid escape", i);
      buf[n] = i + 1 < end ? lx->text[i + 1] : '\\';
      used = i + 1 < end ? 1 : 0;
    }
    n++;
    i += 1 + used;
  }
  bool closed = end < lx->len && lx->text[end] == '"';
  if (!closed) {
    t.error = "unterminated string";  // outranks a bad escape
    t.error_offset = t.pos.start;
  }
  lx->pos = closed ? end + 1 : end;
  t.u.str.bytes = buf;
  t.u.str.len = n;
  return finish(lx, t, TK_STRING);
}

// ---------------------------------------------------------------------------
// Punctuation.

// Consumes `len` bytes and returns a token of `kind`.
static Token take(Lexer *lx, Token t, uint32_t len, TokenKind kind) {
  lx->pos += len;
  return finish(lx, t, kind);
}

static Token unexpected(Lexer *lx, Token t) {
  int c = peek(lx, 0);
  lx->pos++;
  if (c >= 0xC0) {  // a UTF-8 lead byte: swallow its continuation bytes
    while ((peek(lx, 0) & 0xC0) == 0x80 && lx->pos < lx->len) lx->pos++;
  }
  set_error(&t, "unexpected character", t.pos.start);
  return finish(lx, t, TK_ERROR);
}

// Two-byte operators first, then one-byte ones.
static Token lex_punct(Lexer *lx, Token t) {
  int c = peek(lx, 0), d = peek(lx, 1);
  switch (c) {
    case '(': return take(lx, t, 1, TK_LPAREN);
    case ')': return take(lx, t, 1, TK_RPAREN);
    case '[': return d == '|' ? take(lx, t, 2, TK_LARRAY) : take(lx, t, 1, TK_LBRACKET);
    case ']': return take(lx, t, 1, TK_RBRACKET);
    case '{': return take(lx, t, 1, TK_LBRACE);
    case '}': return take(lx, t, 1, TK_RBRACE);
    case ',': return take(lx, t, 1, TK_COMMA);
    case ';': return take(lx, t, 1, TK_SEMI);
    case ':': return d == ':' ? take(lx, t, 2, TK_CONS) : take(lx, t, 1, TK_COLON);
    case '.': return d == '.' ? take(lx, t, 2, TK_DOTDOT) : take(lx, t, 1, TK_DOT);
    case '+': return d == '+' ? take(lx, t, 2, TK_CONCAT) : take(lx, t, 1, TK_PLUS);
    case '-': return take(lx, t, 1, TK_MINUS);
    case '*': return take(lx, t, 1, TK_STAR);
    case '/': return take(lx, t, 1, TK_SLASH);
    case '%': return take(lx, t, 1, TK_PERCENT);
    case '=':
      if (d == '=') return take(lx, t, 2, TK_EQ);
      return d == '>' ? take(lx, t, 2, TK_ARROW) : take(lx, t, 1, TK_ASSIGN);
    case '!': return d == '=' ? take(lx, t, 2, TK_NE) : take(lx, t, 1, TK_BANG);
    case '<': return d == '=' ? take(lx, t, 2, TK_LE) : take(lx, t, 1, TK_LT);
    case '>': return d == '=' ? take(lx, t, 2, TK_GE) : take(lx, t, 1, TK_GT);
    case '&': return d == '&' ? take(lx, t, 2, TK_AND) : unexpected(lx, t);
    case '|':
      if (d == ']') return take(lx, t, 2, TK_RARRAY);
      return d == '|' ? take(lx, t, 2, TK_OR) : unexpected(lx, t);
    default: return unexpected(lx, t);
  }
}

Token lexer_next(Lexer *lexer) {
  bool newline = skip_space(lexer) || lexer->at_start;
  lexer->at_start = false;
  Token t = begin_token(lexer);
  t.newline_before = newline;
  if (lexer->pos >= lexer->len) return finish(lexer, t, TK_EOF);
  int c = peek(lexer, 0);
  if (is_alpha(c)) return lex_ident(lexer, t);
  if (is_digit(c)) return lex_number(lexer, t);
  if (c == '"') return lex_string(lexer, t);
  return lex_punct(lexer, t);
}
