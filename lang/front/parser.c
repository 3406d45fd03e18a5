// parser.c - recursive-descent parser from tokens (lexer.c) to the AST (ast.h).
// The grammar is docs/language.md's; the design:
// 1. Precedence climbing for binary operators, loosest first: || && (== != <
//    <= > >=, non-associative) :: (right) ++ + - * / % ; then unary - !, then
//    postfix call/index/field.
// 2. Statement separation: inside a block (and at top level) a binary
//    operator, '=', or the '(' '[' '.' of a postfix that starts a new line ends
//    the statement; an operator that ends a line continues it. Inside ( ), [ ],
//    [| |] and record literals (bracket_depth > 0) newlines mean nothing.
// 3. Errors: the first error sets `panic`; further errors are suppressed and
//    every loop stops, so the parse unwinds without consuming input until a
//    block (or the match-arm list) resynchronises at a statement boundary.
//    Lexical errors are reported as their token becomes current.
// 4. Recursion is bounded by MAX_DEPTH; left-associative chains count too, so
//    the AST height stays bounded for the compiler's recursive walks.
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "ast.h"
#include "lexer.h"
#include "../../core/namemap.h"

enum {
  MAX_DEPTH = 1000,
  LOOKAHEAD = 3,
};

static const int64_t MAX_INT_LITERAL = ((int64_t)1 << 62) - 1;

typedef struct Parser {
  Lexer lexer;
  Arena *arena;
  ParseResult *result;
  Token tok[LOOKAHEAD];    // tok[0] is the current token, then lookahead
  uint32_t prev_end;       // end offset of the last consumed token
  unsigned long consumed;  // tokens consumed so far (progress check)
  int depth;               // current recursion depth, <= MAX_DEPTH
  int bracket_depth;       // open ( [ [| record-{ since the innermost block
  int error_brackets;      // bracket_depth when the panic began
  bool panic;              // an error was reported; resync pending
  bool full;               // PARSE_MAX_ERRORS reached: tokens all read as EOF
  bool eof_reported;       // an error at end of file was reported
  bool top_level;          // parsing the program's own items
} Parser;

// ===========================================================================
// Errors
// ===========================================================================

static void make_all_eof(Parser *p) {
  for (int i = 0; i < LOOKAHEAD; i++) p->tok[i].kind = TK_EOF;
}

static void add_error_v(Parser *p, uint32_t line, uint32_t col, const char *fmt, va_list ap) {
  if (p->full) return;
  Diagnostic *d = &p->result->errors[p->result->error_count++];
  d->line = line;
  d->col = col;
  vsnprintf(d->message, sizeof d->message, fmt, ap);
  if (p->result->error_count == PARSE_MAX_ERRORS) {
    p->full = true;
    make_all_eof(p);
  }
}

// Records an error regardless of panic (lexical errors, range errors).
static void add_error(Parser *p, uint32_t line, uint32_t col, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  add_error_v(p, line, col, fmt, ap);
  va_end(ap);
}

static uint32_t col_of(SrcPos pos) { return pos.start - pos.line_start + 1; }

// Reports a syntax error at `pos` and enters panic mode; suppressed while
// already panicking, and after the first error at end of file.
static void error_at(Parser *p, SrcPos pos, const char *fmt, ...) {
  bool at_eof = p->tok[0].kind == TK_EOF && pos.start == p->tok[0].pos.start;
  if (p->panic || (at_eof && p->eof_reported)) {
    p->panic = true;
    return;
  }
  p->panic = true;
  p->error_brackets = p->bracket_depth;
  p->eof_reported |= at_eof;
  va_list ap;
  va_start(ap, fmt);
  add_error_v(p, pos.line, col_of(pos), fmt, ap);
  va_end(ap);
}

// Describes the current token for "found ..." ("'}'", "'foo'", "end of file").
static void describe(const Parser *p, char *buf, size_t size) {
  const Token *t = &p->tok[0];
  if (t->kind == TK_EOF || t->kind == TK_STRING) {
    snprintf(buf, size, "%s", lexer_kind_name(t->kind));
    return;
  }
  int len = (int)(t->pos.end - t->pos.start);
  const char *dots = len > 24 ? "..." : "";
  snprintf(buf, size, "'%.*s%s'", len > 24 ? 24 : len, p->lexer.text + t->pos.start, dots);
}

// "expected WHAT, found X" at the current token (or "unexpected end of file").
static void expected(Parser *p, const char *what) {
  if (p->tok[0].kind == TK_ERROR) {  // already reported by settle
    if (!p->panic) p->error_brackets = p->bracket_depth;
    p->panic = true;
    return;
  }
  if (p->tok[0].kind == TK_EOF) {
    error_at(p, p->tok[0].pos, "unexpected end of file (expected %s)", what);
    return;
  }
  char found[40];
  describe(p, found, sizeof found);
  error_at(p, p->tok[0].pos, "expected %s, found %s", what, found);
}

static void report_lexical(Parser *p, const Token *t) {
  uint32_t col = t->error_offset - t->pos.line_start + 1;
  unsigned char c = (unsigned char)p->lexer.text[t->error_offset];
  if (t->kind != TK_ERROR)
    add_error(p, t->pos.line, col, "%s", t->error);
  else if (c > 0x20 && c < 0x7f)
    add_error(p, t->pos.line, col, "unexpected character '%c'", c);
  else
    add_error(p, t->pos.line, col, "unexpected character (byte 0x%02x)", c);
}

// ===========================================================================
// Token stream
// ===========================================================================

static void shift(Parser *p) {
  p->tok[0] = p->tok[1];
  p->tok[1] = p->tok[2];
  p->tok[2] = lexer_next(&p->lexer);
}

// Reports the lexical error of the new current token. A stray byte stays in
// the stream as TK_ERROR: whatever meets it fails silently (see expected).
static void settle(Parser *p) {
  if (!p->full && p->tok[0].error != NULL) {
    report_lexical(p, &p->tok[0]);
    p->tok[0].error = NULL;
  }
  if (p->full) make_all_eof(p);
}

static void advance(Parser *p) {
  if (p->tok[0].kind == TK_EOF) return;
  p->prev_end = p->tok[0].pos.end;
  p->consumed++;
  shift(p);
  settle(p);
}

static bool at(const Parser *p, TokenKind kind) { return p->tok[0].kind == kind; }

static bool accept(Parser *p, TokenKind kind) {
  if (!at(p, kind)) return false;
  advance(p);
  return true;
}

// Consumes `kind` or reports "expected 'K' CONTEXT, found X".
// In panic mode it consumes nothing, so that sync sees every bracket.
static bool expect(Parser *p, TokenKind kind, const char *context) {
  if (p->panic) return false;
  if (accept(p, kind)) return true;
  char what[64];
  snprintf(what, sizeof what, "'%s' %s", lexer_kind_name(kind), context);
  expected(p, what);
  return false;
}

// True when the current token starts a new line in newline-sensitive context,
// so that an operator or postfix there begins a new statement.
static bool stops_here(const Parser *p) {
  return p->bracket_depth == 0 && p->tok[0].newline_before;
}

static bool enter(Parser *p) {
  if (p->depth >= MAX_DEPTH) {
    error_at(p, p->tok[0].pos, "nesting too deep");
    return false;
  }
  p->depth++;
  return true;
}

static void leave(Parser *p) { p->depth--; }

// ===========================================================================
// Node construction
// ===========================================================================

// `start` extended to the end of the last consumed token.
static SrcPos span_from(const Parser *p, SrcPos start) {
  if (p->prev_end > start.end) start.end = p->prev_end;
  return start;
}

static SrcPos span(SrcPos first, SrcPos last) {
  if (last.end > first.end) first.end = last.end;
  return first;
}

static Expr *new_expr(Parser *p, ExprKind kind, SrcPos pos) {
  Expr *e = arena_alloc(p->arena, sizeof *e);
  e->kind = kind;
  e->pos = pos;
  return e;
}

static Pattern *new_pat(Parser *p, PatKind kind, SrcPos pos) {
  Pattern *pat = arena_alloc(p->arena, sizeof *pat);
  pat->kind = kind;
  pat->pos = pos;
  return pat;
}

// Placeholder returned after an error (the parse is abandoned up to a resync).
static Expr *error_expr(Parser *p) { return new_expr(p, EX_NIL, p->tok[0].pos); }

static const char *token_text(Parser *p, const Token *t) {
  return arena_strndup(p->arena, p->lexer.text + t->pos.start, t->pos.end - t->pos.start);
}

// Growable arrays in the arena: doubling, old storage abandoned.
static void *grow(Parser *p, void *items, int count, int *cap, size_t elem) {
  if (count < *cap) return items;
  int fresh_cap = *cap ? *cap * 2 : 4;
  void *fresh = arena_alloc(p->arena, (size_t)fresh_cap * elem);
  if (count > 0) memcpy(fresh, items, (size_t)count * elem);
  *cap = fresh_cap;
  return fresh;
}

static void push_expr(Parser *p, ExprList *list, int *cap, Expr *e) {
  list->items = grow(p, list->items, list->count, cap, sizeof *list->items);
  list->items[list->count++] = e;
}

static void push_pat(Parser *p, PatList *list, int *cap, Pattern *pat) {
  list->items = grow(p, list->items, list->count, cap, sizeof *list->items);
  list->items[list->count++] = pat;
}

static void push_name(Parser *p, const char ***names, int count, int *cap, const char *name) {
  *names = grow(p, *names, count, cap, sizeof **names);
  (*names)[count] = name;
}

// Whether `name` was seen before in this list; records it (hashed, so that
// a list of n names is checked in O(n)).
static bool seen_before(NameMap *seen, const char *name) {
  uint32_t *slot = namemap_slot(seen, name);
  if (*slot != NAMEMAP_NONE) return true;
  *slot = 1;
  return false;
}

// Parses `item (',' item)* ','? CLOSE` (the opener already consumed),
// calling `item` for each element; newlines are insignificant inside.
typedef void (*ItemFn)(Parser *p, void *data);

static void parse_seq(Parser *p, TokenKind close, const char *context, ItemFn item, void *data) {
  p->bracket_depth++;
  while (!p->panic && !at(p, close) && !at(p, TK_EOF)) {
    item(p, data);
    if (p->panic || !accept(p, TK_COMMA)) break;
  }
  expect(p, close, context);
  p->bracket_depth--;
}

// ===========================================================================
// Patterns
// ===========================================================================

static Pattern *parse_pattern(Parser *p);

typedef struct PatSeq { PatList list; int cap; } PatSeq;
typedef struct FieldSeq {
  const char **names;
  void **values;  // Expr * or Pattern *
  int count, cap, value_cap;
  bool patterns;
  NameMap seen;   // the field names so far
} FieldSeq;

static void seq_pattern(Parser *p, void *data) {
  PatSeq *seq = data;
  push_pat(p, &seq->list, &seq->cap, parse_pattern(p));
}

// Checks an int literal token against the 63-bit range (2^62 allowed when
// negated); reports "integer literal out of range" and yields 0 otherwise.
static int64_t int_value(Parser *p, const Token *t, bool negated) {
  int64_t limit = negated ? MAX_INT_LITERAL + 1 : MAX_INT_LITERAL;
  if (t->int_overflow || t->u.int_val > limit) {
    if (!p->panic) add_error(p, t->pos.line, col_of(t->pos), "integer literal out of range");
    return 0;
  }
  return negated ? -t->u.int_val : t->u.int_val;
}

// `-` INT or `-` FLOAT (the minus already current).
static Pattern *parse_negative_pattern(Parser *p) {
  SrcPos start = p->tok[0].pos;
  advance(p);
  Token t = p->tok[0];
  if (!at(p, TK_INT) && !at(p, TK_FLOAT)) {
    expected(p, "number after '-' in pattern");
    return new_pat(p, PAT_WILD, start);
  }
  advance(p);
  Pattern *pat = new_pat(p, t.kind == TK_INT ? PAT_INT : PAT_FLOAT, span_from(p, start));
  if (t.kind == TK_INT) pat->u.int_val = int_value(p, &t, true);
  else pat->u.float_val = -t.u.float_val;
  return pat;
}

static Pattern *parse_list_pattern(Parser *p) {
  SrcPos start = p->tok[0].pos;
  advance(p);
  if (accept(p, TK_RBRACKET)) return new_pat(p, PAT_EMPTY, span_from(p, start));
  PatSeq seq = {0};
  parse_seq(p, TK_RBRACKET, "after list pattern", seq_pattern, &seq);
  Pattern *pat = new_pat(p, PAT_LIST, span_from(p, start));
  pat->u.items = seq.list;
  return pat;
}

// `(p)` is grouping; `(p, q, ...)` a tuple pattern.
static Pattern *parse_paren_pattern(Parser *p) {
  SrcPos start = p->tok[0].pos;
  advance(p);
  if (at(p, TK_RPAREN)) {
    error_at(p, span(start, p->tok[0].pos), "empty tuple '()' is not supported");
    return new_pat(p, PAT_WILD, start);
  }
  p->bracket_depth++;
  Pattern *first = parse_pattern(p);
  p->bracket_depth--;
  if (!p->panic && !at(p, TK_COMMA)) {
    p->bracket_depth++;
    expect(p, TK_RPAREN, "to close '(' in pattern");
    p->bracket_depth--;
    return first;
  }
  PatSeq seq = {0};
  push_pat(p, &seq.list, &seq.cap, first);
  if (!p->panic) advance(p);  // the ','
  parse_seq(p, TK_RPAREN, "after tuple pattern", seq_pattern, &seq);
  Pattern *pat = new_pat(p, PAT_TUPLE, span_from(p, start));
  pat->u.items = seq.list;
  if (seq.list.count < 2) error_at(p, pat->pos, "a tuple pattern needs at least two items");
  return pat;
}

// One `name: value` of a record literal or record pattern.
static void seq_field(Parser *p, void *data) {
  FieldSeq *seq = data;
  Token name = p->tok[0];
  if (!at(p, TK_IDENT)) {
    expected(p, "field name");
    return;
  }
  advance(p);
  if (!expect(p, TK_COLON, "after field name")) return;
  const char *text = token_text(p, &name);
  if (seen_before(&seq->seen, text)) {
    error_at(p, name.pos, "duplicate field '%s'", text);
    return;
  }
  void *value = seq->patterns ? (void *)parse_pattern(p) : (void *)0;
  push_name(p, &seq->names, seq->count, &seq->cap, text);
  seq->values = grow(p, seq->values, seq->count, &seq->value_cap, sizeof *seq->values);
  seq->values[seq->count++] = value;
}

static Pattern *parse_record_pattern(Parser *p) {
  SrcPos start = p->tok[0].pos;
  advance(p);
  FieldSeq seq = {.patterns = true};
  if (at(p, TK_RBRACE)) expected(p, "field name in record pattern");
  parse_seq(p, TK_RBRACE, "after record pattern fields", seq_field, &seq);
  namemap_free(&seq.seen);
  Pattern *pat = new_pat(p, PAT_RECORD, span_from(p, start));
  pat->u.record.names = seq.names;
  pat->u.record.pats = arena_alloc(p->arena, sizeof(Pattern *) * (size_t)(seq.count + 1));
  for (int i = 0; i < seq.count; i++) pat->u.record.pats[i] = seq.values[i];
  pat->u.record.count = seq.count;
  return pat;
}

// A literal or variable pattern: the current token alone.
static Pattern *parse_token_pattern(Parser *p) {
  Token t = p->tok[0];
  static const PatKind kinds[TK_COUNT] = {
      [TK_IDENT] = PAT_VAR, [TK_NIL] = PAT_NIL, [TK_TRUE] = PAT_BOOL,
      [TK_FALSE] = PAT_BOOL, [TK_INT] = PAT_INT, [TK_FLOAT] = PAT_FLOAT,
      [TK_STRING] = PAT_STRING,
  };
  advance(p);
  Pattern *pat = new_pat(p, kinds[t.kind], t.pos);
  if (t.kind == TK_IDENT) {
    pat->u.name = token_text(p, &t);
    if (strcmp(pat->u.name, "_") == 0) pat->kind = PAT_WILD;
  }
  if (t.kind == TK_TRUE || t.kind == TK_FALSE) pat->u.boolean = t.kind == TK_TRUE;
  if (t.kind == TK_INT) pat->u.int_val = int_value(p, &t, false);
  if (t.kind == TK_FLOAT) pat->u.float_val = t.u.float_val;
  if (t.kind == TK_STRING) {
    pat->u.str.bytes = t.u.str.bytes;
    pat->u.str.len = t.u.str.len;
  }
  return pat;
}

static Pattern *parse_primary_pattern(Parser *p) {
  switch (p->tok[0].kind) {
    case TK_IDENT: case TK_NIL: case TK_TRUE: case TK_FALSE:
    case TK_INT: case TK_FLOAT: case TK_STRING:
      return parse_token_pattern(p);
    case TK_MINUS: return parse_negative_pattern(p);
    case TK_LBRACKET: return parse_list_pattern(p);
    case TK_LPAREN: return parse_paren_pattern(p);
    case TK_LBRACE: return parse_record_pattern(p);
    default:
      expected(p, "pattern");
      return new_pat(p, PAT_WILD, p->tok[0].pos);
  }
}

// pattern := primary ('::' pattern)?   (newlines insignificant)
static Pattern *parse_pattern(Parser *p) {
  if (!enter(p)) return new_pat(p, PAT_WILD, p->tok[0].pos);
  Pattern *head = parse_primary_pattern(p);
  if (!p->panic && accept(p, TK_CONS)) {
    Pattern *tail = parse_pattern(p);
    Pattern *cons = new_pat(p, PAT_CONS, span(head->pos, tail->pos));
    cons->u.cons.head = head;
    cons->u.cons.tail = tail;
    head = cons;
  }
  leave(p);
  return head;
}

// ===========================================================================
// Expressions: operators
// ===========================================================================

static Expr *parse_expr(Parser *p);
static Expr *parse_expr_or_assign(Parser *p);
static Expr *parse_primary(Parser *p);
static Expr *parse_block(Parser *p, const char *context);

enum { PREC_NONE, PREC_OR, PREC_AND, PREC_CMP, PREC_CONS, PREC_CONCAT, PREC_ADD, PREC_MUL };

// Precedence of the binary operator `kind` (PREC_NONE if it is not one).
static int binary_prec(TokenKind kind, BinOp *op) {
  static const struct { TokenKind kind; BinOp op; int prec; } table[] = {
      {TK_OR, OP_OR, PREC_OR},         {TK_AND, OP_AND, PREC_AND},
      {TK_EQ, OP_EQ, PREC_CMP},        {TK_NE, OP_NE, PREC_CMP},
      {TK_LT, OP_LT, PREC_CMP},        {TK_LE, OP_LE, PREC_CMP},
      {TK_GT, OP_GT, PREC_CMP},        {TK_GE, OP_GE, PREC_CMP},
      {TK_CONS, OP_ADD, PREC_CONS},    {TK_CONCAT, OP_CONCAT, PREC_CONCAT},
      {TK_PLUS, OP_ADD, PREC_ADD},     {TK_MINUS, OP_SUB, PREC_ADD},
      {TK_STAR, OP_MUL, PREC_MUL},     {TK_SLASH, OP_DIV, PREC_MUL},
      {TK_PERCENT, OP_MOD, PREC_MUL},
  };
  for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
    if (table[i].kind == kind) {
      *op = table[i].op;
      return table[i].prec;
    }
  }
  return PREC_NONE;
}

static Expr *make_binary(Parser *p, TokenKind kind, BinOp op, Expr *left, Expr *right) {
  Expr *e = new_expr(p, kind == TK_CONS ? EX_CONS : EX_BINARY, span(left->pos, right->pos));
  e->u.binary.op = op;
  e->u.binary.left = left;
  e->u.binary.right = right;
  return e;
}

static Expr *parse_unary(Parser *p);

// Precedence climbing: operators binding at least as tightly as min_prec.
// `chain` counts the left-nested nodes built here toward the depth bound.
static Expr *parse_binary(Parser *p, int min_prec) {
  if (!enter(p)) return error_expr(p);
  Expr *left = parse_unary(p);
  for (int chain = 0; !p->panic && !stops_here(p); chain++) {
    BinOp op;
    TokenKind kind = p->tok[0].kind;
    int prec = binary_prec(kind, &op);
    if (prec == PREC_NONE || prec < min_prec) break;
    if (p->depth + chain >= MAX_DEPTH) {
      error_at(p, p->tok[0].pos, "nesting too deep");
      break;
    }
    advance(p);
    Expr *right = parse_binary(p, prec == PREC_CONS ? prec : prec + 1);
    left = make_binary(p, kind, op, left, right);
    if (prec == PREC_CMP && !stops_here(p) && binary_prec(p->tok[0].kind, &op) == PREC_CMP)
      error_at(p, p->tok[0].pos, "comparison operators cannot be chained; use parentheses");
  }
  leave(p);
  return left;
}

// Whether tok[k] starts a postfix (a call, an index, a field) of what
// precedes it: '(' '[' '.' on the same line, or anywhere inside brackets.
static bool postfix_at(const Parser *p, int k) {
  TokenKind kind = p->tok[k].kind;
  if (kind != TK_LPAREN && kind != TK_LBRACKET && kind != TK_DOT) return false;
  return p->bracket_depth > 0 || !p->tok[k].newline_before;
}

static Expr *parse_unary(Parser *p) {
  if (!at(p, TK_MINUS) && !at(p, TK_BANG)) return parse_primary(p);
  Token op = p->tok[0];
  advance(p);
  // `-` right before an integer literal (and no postfix after it) is part of
  // the literal, as in a pattern: -4611686018427387904 is the smallest int.
  if (op.kind == TK_MINUS && at(p, TK_INT) && !postfix_at(p, 1)) {
    Token t = p->tok[0];
    advance(p);
    Expr *e = new_expr(p, EX_INT, span(op.pos, t.pos));
    e->u.int_val = int_value(p, &t, true);
    return e;
  }
  if (!enter(p)) return error_expr(p);
  Expr *operand = parse_unary(p);
  leave(p);
  Expr *e = new_expr(p, EX_UNARY, span(op.pos, operand->pos));
  e->u.unary.op = op.kind == TK_MINUS ? OP_NEG : OP_NOT;
  e->u.unary.operand = operand;
  return e;
}

typedef struct ExprSeq { ExprList list; int cap; } ExprSeq;

static void seq_expr(Parser *p, void *data) {
  ExprSeq *seq = data;
  push_expr(p, &seq->list, &seq->cap, parse_expr(p));
}

static Expr *finish_call(Parser *p, Expr *callee) {
  advance(p);  // '('
  ExprSeq args = {0};
  parse_seq(p, TK_RPAREN, "after arguments", seq_expr, &args);
  Expr *e = new_expr(p, EX_CALL, span_from(p, callee->pos));
  e->u.call.callee = callee;
  e->u.call.args = args.list;
  return e;
}

static Expr *finish_index(Parser *p, Expr *object) {
  advance(p);  // '['
  p->bracket_depth++;
  Expr *index = parse_expr(p);
  expect(p, TK_RBRACKET, "after index");
  p->bracket_depth--;
  Expr *e = new_expr(p, EX_INDEX, span_from(p, object->pos));
  e->u.binary.left = object;
  e->u.binary.right = index;
  return e;
}

static bool is_module_name(const Expr *e) {
  return e->kind == EX_VAR && e->u.name[0] >= 'A' && e->u.name[0] <= 'Z';
}

// `.name`: a module member when the object is a capitalised name.
static Expr *finish_field(Parser *p, Expr *object) {
  advance(p);  // '.'
  Token name = p->tok[0];
  if (!at(p, TK_IDENT)) {
    expected(p, "field name after '.'");
    return object;
  }
  advance(p);
  bool member = is_module_name(object);
  Expr *e = new_expr(p, member ? EX_MEMBER : EX_FIELD, span_from(p, object->pos));
  if (member) {
    e->u.member.module = object->u.name;
    e->u.member.member = token_text(p, &name);
  } else {
    e->u.field.object = object;
    e->u.field.name = token_text(p, &name);
  }
  return e;
}

static Expr *parse_postfix(Parser *p, Expr *e) {
  for (int chain = 0; !p->panic && !stops_here(p); chain++) {
    TokenKind kind = p->tok[0].kind;
    if (kind != TK_LPAREN && kind != TK_LBRACKET && kind != TK_DOT) break;
    if (p->depth + chain >= MAX_DEPTH) {
      error_at(p, p->tok[0].pos, "nesting too deep");
      break;
    }
    if (kind == TK_LPAREN) e = finish_call(p, e);
    else if (kind == TK_LBRACKET) e = finish_index(p, e);
    else e = finish_field(p, e);
  }
  return e;
}

// expr := binary (at the loosest precedence)
static Expr *parse_expr(Parser *p) { return parse_binary(p, PREC_OR); }

// ===========================================================================
// Expressions: primaries
// ===========================================================================

static Expr *literal(Parser *p) {
  Token t = p->tok[0];
  advance(p);
  static const ExprKind kinds[TK_COUNT] = {
      [TK_NIL] = EX_NIL, [TK_TRUE] = EX_BOOL, [TK_FALSE] = EX_BOOL,
      [TK_INT] = EX_INT, [TK_FLOAT] = EX_FLOAT, [TK_STRING] = EX_STRING,
      [TK_IDENT] = EX_VAR,
  };
  Expr *e = new_expr(p, kinds[t.kind], t.pos);
  if (t.kind == TK_TRUE || t.kind == TK_FALSE) e->u.boolean = t.kind == TK_TRUE;
  if (t.kind == TK_INT) e->u.int_val = int_value(p, &t, false);
  if (t.kind == TK_FLOAT) e->u.float_val = t.u.float_val;
  if (t.kind == TK_IDENT) e->u.name = token_text(p, &t);
  if (t.kind == TK_STRING) {
    e->u.str.bytes = t.u.str.bytes;
    e->u.str.len = t.u.str.len;
  }
  return e;
}

// `(e)` grouping or `(a, b, ...)` tuple; `()` is an error.
static Expr *parse_paren(Parser *p) {
  SrcPos start = p->tok[0].pos;
  advance(p);
  if (at(p, TK_RPAREN)) {
    error_at(p, span(start, p->tok[0].pos), "empty tuple '()' is not supported");
    return error_expr(p);
  }
  p->bracket_depth++;
  Expr *first = parse_expr(p);
  p->bracket_depth--;
  if (!p->panic && !at(p, TK_COMMA)) {
    p->bracket_depth++;
    expect(p, TK_RPAREN, "to close '('");
    p->bracket_depth--;
    return first;
  }
  ExprSeq seq = {0};
  push_expr(p, &seq.list, &seq.cap, first);
  if (!p->panic) advance(p);  // the ','
  parse_seq(p, TK_RPAREN, "after tuple items", seq_expr, &seq);
  Expr *e = new_expr(p, EX_TUPLE, span_from(p, start));
  e->u.items = seq.list;
  if (seq.list.count < 2) error_at(p, e->pos, "a tuple needs at least two items");
  return e;
}

// `[]`, `[a, b]`, `[| a, b |]`.
static Expr *parse_list(Parser *p) {
  SrcPos start = p->tok[0].pos;
  bool array = at(p, TK_LARRAY);
  advance(p);
  if (!array && accept(p, TK_RBRACKET)) return new_expr(p, EX_EMPTY_LIST, span_from(p, start));
  ExprSeq seq = {0};
  if (array) parse_seq(p, TK_RARRAY, "after array items", seq_expr, &seq);
  else parse_seq(p, TK_RBRACKET, "after list items", seq_expr, &seq);
  Expr *e = new_expr(p, array ? EX_ARRAY : EX_LIST, span_from(p, start));
  e->u.items = seq.list;
  return e;
}

// Record fields store a NULL value slot first; fill it (seq_field is shared
// with patterns, which parse their value inline).
static void seq_record_field(Parser *p, void *data) {
  FieldSeq *seq = data;
  int before = seq->count;
  seq_field(p, data);
  if (seq->count > before) seq->values[before] = parse_expr(p);
}

// `{name: e, ...}` (the caller saw IDENT ':' after the brace).
static Expr *parse_record(Parser *p) {
  SrcPos start = p->tok[0].pos;
  advance(p);
  FieldSeq seq = {0};
  parse_seq(p, TK_RBRACE, "after record fields", seq_record_field, &seq);
  namemap_free(&seq.seen);
  Expr *e = new_expr(p, EX_RECORD, span_from(p, start));
  e->u.record.names = seq.names;
  e->u.record.values = arena_alloc(p->arena, sizeof(Expr *) * (size_t)(seq.count + 1));
  for (int i = 0; i < seq.count; i++) e->u.record.values[i] = seq.values[i];
  e->u.record.count = seq.count;
  return e;
}

typedef struct NameSeq { const char **names; int count, cap; NameMap seen; } NameSeq;

static void seq_param(Parser *p, void *data) {
  NameSeq *seq = data;
  Token t = p->tok[0];
  if (!at(p, TK_IDENT)) {
    expected(p, "parameter name");
    return;
  }
  advance(p);
  const char *name = token_text(p, &t);
  if (strcmp(name, "_") != 0 && seen_before(&seq->seen, name)) {
    error_at(p, t.pos, "duplicate parameter '%s'", name);
    return;
  }
  push_name(p, &seq->names, seq->count++, &seq->cap, name);
}

// `(a, b)` of a function or external; the '(' is current.
static NameSeq parse_params(Parser *p) {
  NameSeq seq = {0};
  if (expect(p, TK_LPAREN, "before parameters"))
    parse_seq(p, TK_RPAREN, "after parameters", seq_param, &seq);
  namemap_free(&seq.seen);
  return seq;
}

// Parameters and body of `fn`, the keyword (and name) consumed.
static void parse_fn_rest(Parser *p, FnDef *fn) {
  NameSeq params = parse_params(p);
  fn->params = params.names;
  fn->param_count = params.count;
  fn->body = parse_block(p, "before function body");
}

static Expr *parse_fn_expr(Parser *p) {
  SrcPos start = p->tok[0].pos;
  advance(p);
  Expr *e = new_expr(p, EX_FN, start);
  e->u.fn.name_pos = start;
  if (at(p, TK_IDENT)) {
    error_at(p, p->tok[0].pos, "a named function must be a statement; use `fn(...)` here");
    return e;
  }
  parse_fn_rest(p, &e->u.fn);
  e->pos = span_from(p, start);
  return e;
}

static Expr *parse_if(Parser *p) {
  SrcPos start = p->tok[0].pos;
  advance(p);
  Expr *e = new_expr(p, EX_IF, start);
  e->u.if_.cond = parse_expr(p);
  e->u.if_.then_ = parse_block(p, "after 'if' condition");
  if (!p->panic && accept(p, TK_ELSE)) {
    if (!at(p, TK_IF)) {
      e->u.if_.else_ = parse_block(p, "after 'else'");
    } else if (enter(p)) {
      e->u.if_.else_ = parse_if(p);
      leave(p);
    }
  }
  e->pos = span_from(p, start);
  return e;
}

static Expr *parse_while(Parser *p) {
  SrcPos start = p->tok[0].pos;
  advance(p);
  Expr *e = new_expr(p, EX_WHILE, start);
  e->u.while_.cond = parse_expr(p);
  e->u.while_.body = parse_block(p, "after 'while' condition");
  e->pos = span_from(p, start);
  return e;
}

// Consumes an identifier and returns its text, or reports "expected WHAT".
static const char *expect_name(Parser *p, const char *what) {
  Token t = p->tok[0];
  if (!at(p, TK_IDENT)) {
    expected(p, what);
    return "";
  }
  advance(p);
  return token_text(p, &t);
}

// The loop variable of `for PATTERN in coll`: no identifier can name it, so
// the body sees only the pattern's names.
#define FOR_ITEM_NAME "for-item"

// for x in a..b { }, for x in coll { }, and for PATTERN in coll { }: a
// tuple, list or record pattern ((k, v), [a, b], {x, y}) destructures each
// element as `let PATTERN = element` first in the body would, so an element
// that does not match raises at the pattern.
static Expr *parse_for(Parser *p) {
  SrcPos start = p->tok[0].pos;
  advance(p);
  Expr *e = new_expr(p, EX_FOR, start);
  Pattern *pattern = NULL;
  TokenKind first = p->tok[0].kind;
  if (first == TK_LPAREN || first == TK_LBRACKET || first == TK_LBRACE) {
    pattern = parse_pattern(p);
    e->u.for_.var = FOR_ITEM_NAME;
  } else {
    e->u.for_.var = expect_name(p, "loop variable after 'for'");
  }
  if (!p->panic) expect(p, TK_IN, "after loop variable");
  e->u.for_.lo = parse_expr(p);
  if (!p->panic && accept(p, TK_DOTDOT)) {
    e->u.for_.hi = parse_expr(p);
    if (pattern && !p->panic) error_at(p, pattern->pos, "a range loop binds a name, not a pattern");
  }
  e->u.for_.body = parse_block(p, "before loop body");
  if (pattern && !p->panic && e->u.for_.body->kind == EX_BLOCK) {
    Expr *let = new_expr(p, EX_LET, pattern->pos);
    let->u.let.pattern = pattern;
    let->u.let.value = new_expr(p, EX_VAR, pattern->pos);
    let->u.let.value->u.name = FOR_ITEM_NAME;
    ExprList *items = &e->u.for_.body->u.block;
    Expr **fresh = arena_alloc(p->arena, (size_t)(items->count + 1) * sizeof *fresh);
    fresh[0] = let;
    if (items->count > 0) memcpy(fresh + 1, items->items, (size_t)items->count * sizeof *fresh);
    items->items = fresh;
    items->count++;
  }
  e->pos = span_from(p, start);
  return e;
}

static Expr *parse_try(Parser *p) {
  SrcPos start = p->tok[0].pos;
  advance(p);
  Expr *e = new_expr(p, EX_TRY, start);
  e->u.try_.body = parse_block(p, "after 'try'");
  if (!p->panic) expect(p, TK_CATCH, "after 'try' block");
  e->u.try_.var = p->panic ? "" : expect_name(p, "variable name after 'catch'");
  e->u.try_.handler = parse_block(p, "before 'catch' handler");
  e->pos = span_from(p, start);
  return e;
}

// `return` takes a value unless a statement boundary follows.
static Expr *parse_return(Parser *p) {
  SrcPos start = p->tok[0].pos;
  advance(p);
  Expr *e = new_expr(p, EX_RETURN, start);
  switch (p->tok[0].kind) {
    case TK_RBRACE: case TK_SEMI: case TK_COMMA: case TK_RPAREN:
    case TK_RBRACKET: case TK_RARRAY: case TK_EOF:
      return e;
    default:
      if (p->tok[0].newline_before) return e;
  }
  e->u.ret.value = parse_expr(p);
  e->pos = span_from(p, start);
  return e;
}

static Expr *parse_keyword_alone(Parser *p, ExprKind kind) {
  Expr *e = new_expr(p, kind, p->tok[0].pos);
  advance(p);
  return e;
}

// ===========================================================================
// Match
// ===========================================================================

typedef struct ArmSeq { MatchArm *arms; int count, cap; } ArmSeq;

static void parse_arm(Parser *p, ArmSeq *seq) {
  MatchArm arm = {0};
  arm.pattern = parse_pattern(p);
  if (!p->panic && accept(p, TK_IF)) arm.guard = parse_expr(p);
  if (!p->panic) expect(p, TK_ARROW, "after match pattern");
  arm.body = p->panic ? error_expr(p) : parse_expr_or_assign(p);
  seq->arms = grow(p, seq->arms, seq->count, &seq->cap, sizeof *seq->arms);
  seq->arms[seq->count++] = arm;
}

static void sync(Parser *p, unsigned long before, bool in_block, bool at_comma);

// Arms are separated by ',' and/or newlines; a trailing ',' is allowed.
static void parse_arms(Parser *p, ArmSeq *seq) {
  while (!at(p, TK_RBRACE) && !at(p, TK_EOF)) {
    unsigned long before = p->consumed;
    parse_arm(p, seq);
    if (!p->panic && !accept(p, TK_COMMA) && !at(p, TK_RBRACE) && !p->tok[0].newline_before)
      expected(p, "',' or newline after match arm");
    if (p->panic) sync(p, before, true, true);
  }
}

static Expr *parse_match(Parser *p) {
  SrcPos start = p->tok[0].pos;
  advance(p);
  Expr *e = new_expr(p, EX_MATCH, start);
  e->u.match.scrutinee = parse_expr(p);
  SrcPos open = p->tok[0].pos;
  if (p->panic || !expect(p, TK_LBRACE, "after match subject") || !enter(p)) return e;
  int saved_brackets = p->bracket_depth;
  p->bracket_depth = 0;
  ArmSeq seq = {0};
  parse_arms(p, &seq);
  p->bracket_depth = saved_brackets;
  leave(p);
  if (!accept(p, TK_RBRACE)) {
    char what[64];
    snprintf(what, sizeof what, "'}' to close match opened at line %u", (unsigned)open.line);
    expected(p, what);
  } else if (seq.count == 0) {
    error_at(p, open, "match has no arms");
  }
  e->u.match.arms = seq.arms;
  e->u.match.arm_count = seq.count;
  e->pos = span_from(p, start);
  return e;
}

// A '{' in expression position starts a record iff IDENT ':' follow it.
static bool record_ahead(const Parser *p) {
  return p->tok[1].kind == TK_IDENT && p->tok[2].kind == TK_COLON;
}

static Expr *parse_primary(Parser *p) {
  switch (p->tok[0].kind) {
    case TK_NIL: case TK_TRUE: case TK_FALSE: case TK_INT:
    case TK_FLOAT: case TK_STRING: case TK_IDENT:
      return parse_postfix(p, literal(p));
    case TK_LPAREN: return parse_postfix(p, parse_paren(p));
    case TK_LBRACKET: case TK_LARRAY: return parse_postfix(p, parse_list(p));
    case TK_LBRACE:
      return parse_postfix(p, record_ahead(p) ? parse_record(p) : parse_block(p, ""));
    case TK_FN: return parse_postfix(p, parse_fn_expr(p));
    case TK_IF: return parse_postfix(p, parse_if(p));
    case TK_MATCH: return parse_postfix(p, parse_match(p));
    case TK_WHILE: return parse_while(p);
    case TK_FOR: return parse_for(p);
    case TK_TRY: return parse_postfix(p, parse_try(p));
    case TK_RETURN: return parse_return(p);
    case TK_BREAK: return parse_keyword_alone(p, EX_BREAK);
    case TK_CONTINUE: return parse_keyword_alone(p, EX_CONTINUE);
    default:
      expected(p, "expression");
      return error_expr(p);
  }
}

// ===========================================================================
// Statements and blocks
// ===========================================================================

static bool is_assign_target(const Expr *e) {
  return e->kind == EX_VAR || e->kind == EX_INDEX || e->kind == EX_FIELD;
}

// expression, or `target = value` when '=' follows on the same line.
static Expr *parse_expr_or_assign(Parser *p) {
  Expr *target = parse_expr(p);
  if (p->panic || !at(p, TK_ASSIGN) || stops_here(p)) return target;
  if (!is_assign_target(target)) {
    error_at(p, target->pos, "invalid assignment target");
    return target;
  }
  advance(p);
  Expr *value = parse_expr(p);
  Expr *e = new_expr(p, EX_ASSIGN, span(target->pos, value->pos));
  e->u.assign.target = target;
  e->u.assign.value = value;
  return e;
}

static Expr *parse_let(Parser *p) {
  SrcPos start = p->tok[0].pos;
  advance(p);
  Expr *e = new_expr(p, EX_LET, start);
  e->u.let.pattern = parse_pattern(p);
  if (!p->panic) expect(p, TK_ASSIGN, "after 'let' pattern");
  e->u.let.value = parse_expr(p);
  e->pos = span_from(p, start);
  return e;
}

static Expr *parse_var(Parser *p) {
  SrcPos start = p->tok[0].pos;
  advance(p);
  Expr *e = new_expr(p, EX_VAR_DECL, start);
  e->u.var_decl.name = expect_name(p, "variable name after 'var'");
  if (!p->panic) expect(p, TK_ASSIGN, "after variable name");
  e->u.var_decl.value = parse_expr(p);
  e->pos = span_from(p, start);
  return e;
}

static Expr *parse_fn_decl(Parser *p) {
  SrcPos start = p->tok[0].pos;
  advance(p);
  Expr *e = new_expr(p, EX_FN_DECL, start);
  e->u.fn.name_pos = p->tok[0].pos;
  e->u.fn.name = expect_name(p, "function name");
  parse_fn_rest(p, &e->u.fn);
  e->pos = span_from(p, start);
  return e;
}

static bool require_top_level(Parser *p, const char *keyword) {
  if (p->top_level) return true;
  error_at(p, p->tok[0].pos, "'%s' is only allowed at top level", keyword);
  return false;
}

static Expr *parse_import(Parser *p) {
  SrcPos start = p->tok[0].pos;
  Expr *e = new_expr(p, EX_IMPORT, start);
  if (!require_top_level(p, "import")) return e;
  advance(p);
  Token name = p->tok[0];
  e->u.name = expect_name(p, "module name after 'import'");
  if (!p->panic && !(e->u.name[0] >= 'a' && e->u.name[0] <= 'z'))
    error_at(p, name.pos, "module name after 'import' must start with a lower-case letter");
  e->pos = span_from(p, start);
  return e;
}

static Expr *parse_external(Parser *p) {
  SrcPos start = p->tok[0].pos;
  Expr *e = new_expr(p, EX_EXTERNAL, start);
  if (!require_top_level(p, "external")) return e;
  advance(p);
  e->u.external.name = expect_name(p, "name after 'external'");
  NameSeq params = p->panic ? (NameSeq){0} : parse_params(p);
  e->u.external.params = params.names;
  e->u.external.param_count = params.count;
  if (!p->panic) expect(p, TK_ASSIGN, "after external parameters");
  Token c_name = p->tok[0];
  if (!p->panic && !accept(p, TK_STRING)) expected(p, "C function name string");
  if (!p->panic)
    e->u.external.c_name = arena_strndup(p->arena, c_name.u.str.bytes, c_name.u.str.len);
  e->pos = span_from(p, start);
  return e;
}

static Expr *parse_statement(Parser *p) {
  switch (p->tok[0].kind) {
    case TK_LET: return parse_let(p);
    case TK_VAR: return parse_var(p);
    case TK_IMPORT: return parse_import(p);
    case TK_EXTERNAL: return parse_external(p);
    case TK_FN:
      if (p->tok[1].kind == TK_IDENT) return parse_fn_decl(p);
      return parse_expr_or_assign(p);
    default: return parse_expr_or_assign(p);
  }
}

// Tokens that begin a declaration: resynchronisation stops before them at
// the start of a line even inside unclosed brackets.
static bool starts_declaration(const Parser *p) {
  switch (p->tok[0].kind) {
    case TK_LET: case TK_VAR: case TK_IMPORT: case TK_EXTERNAL: return true;
    case TK_FN: return p->tok[1].kind == TK_IDENT;
    default: return false;
  }
}

// True when sync should stop before (or, for ';' and ',', after) the current
// token; `brackets` and `braces` count what sync itself has skipped into.
static bool sync_stops(Parser *p, int braces, int brackets, bool in_block, bool at_comma) {
  const Token *t = &p->tok[0];
  if (braces > 0) return false;
  if (t->kind == TK_RBRACE && in_block) return true;
  if (t->newline_before && (brackets == 0 || starts_declaration(p))) return true;
  if (t->kind == TK_SEMI || (at_comma && t->kind == TK_COMMA && brackets == 0)) {
    advance(p);
    return true;
  }
  return false;
}

// Skips to the next statement boundary after an error: a newline at this
// block's level (outside the brackets open at the error), ';', the block's
// '}' (not consumed), or EOF. Skips at least one token if the failed
// statement consumed nothing, so parsing always progresses.
static void sync(Parser *p, unsigned long before, bool in_block, bool at_comma) {
  int braces = 0, brackets = p->error_brackets;
  bool must_skip = p->consumed == before;
  while (!at(p, TK_EOF)) {
    if (!must_skip && sync_stops(p, braces, brackets, in_block, at_comma)) break;
    must_skip = false;
    TokenKind kind = p->tok[0].kind;
    if (kind == TK_LBRACE) braces++;
    if (kind == TK_RBRACE && braces > 0) braces--;
    if (kind == TK_LPAREN || kind == TK_LBRACKET || kind == TK_LARRAY) brackets++;
    if ((kind == TK_RPAREN || kind == TK_RBRACKET || kind == TK_RARRAY) && brackets > 0) brackets--;
    advance(p);
  }
  p->panic = false;
}

// After a statement: ';', a newline, the block's '}' or end of file.
static void end_statement(Parser *p, bool in_block) {
  if (accept(p, TK_SEMI) || at(p, TK_EOF) || p->tok[0].newline_before) return;
  if (in_block && at(p, TK_RBRACE)) return;
  expected(p, "newline or ';' after statement");
}

// Statements up to '}' (in_block) or end of file, appended to `out`.
static void parse_items(Parser *p, ExprList *out, bool in_block) {
  int cap = 0;
  for (;;) {
    while (accept(p, TK_SEMI)) {}
    if (at(p, TK_EOF) || (in_block && at(p, TK_RBRACE))) return;
    unsigned long before = p->consumed;
    Expr *statement = parse_statement(p);
    if (!p->panic) push_expr(p, out, &cap, statement);
    if (!p->panic) end_statement(p, in_block);
    if (p->panic) sync(p, before, in_block, false);
  }
}

// block := '{' items '}'; CONTEXT completes "expected '{' CONTEXT".
static Expr *parse_block(Parser *p, const char *context) {
  SrcPos start = p->tok[0].pos;
  if (p->panic || !expect(p, TK_LBRACE, context) || !enter(p)) return error_expr(p);
  int saved_brackets = p->bracket_depth;
  bool saved_top = p->top_level;
  p->bracket_depth = 0;
  p->top_level = false;
  Expr *block = new_expr(p, EX_BLOCK, start);
  parse_items(p, &block->u.block, true);
  p->bracket_depth = saved_brackets;
  p->top_level = saved_top;
  leave(p);
  if (!accept(p, TK_RBRACE)) {
    char what[64];
    snprintf(what, sizeof what, "'}' to close block opened at line %u", (unsigned)start.line);
    expected(p, what);
  }
  block->pos = span_from(p, start);
  return block;
}

// ===========================================================================
// Entry points
// ===========================================================================

bool parse_program(const Source *source, Arena *arena, ParseResult *result) {
  memset(result, 0, sizeof *result);
  result->program.source = source;
  Parser p;
  memset(&p, 0, sizeof p);
  p.arena = arena;
  p.result = result;
  p.top_level = true;
  if (source->len > SOURCE_MAX_BYTES) {
    add_error(&p, 1, 1, "source file too large (over %u bytes)", (unsigned)SOURCE_MAX_BYTES);
    return false;
  }
  lexer_init(&p.lexer, source->text, (uint32_t)source->len, arena);
  for (int i = 0; i < LOOKAHEAD; i++) p.tok[i] = lexer_next(&p.lexer);
  settle(&p);
  parse_items(&p, &result->program.items, false);
  return result->error_count == 0;
}

void parse_print_errors(const Source *source, const ParseResult *result) {
  for (int i = 0; i < result->error_count; i++) {
    const Diagnostic *d = &result->errors[i];
    fprintf(stderr, "%s:%u:%u: syntax error: %s\n", source->path ? source->path : "<input>",
            (unsigned)d->line,
            (unsigned)d->col, d->message);
  }
}
