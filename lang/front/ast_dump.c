// ast_dump.c - prints the AST as S-expressions (for tests and debugging).
// Forms: literals as written (`42`, `(float 2.5)`, `"a\n"`, `nil`, `true`,
// `[]`), names bare (`x`, `List.map`), otherwise `(head child...)` with heads
// tuple list :: array record fn fn-decl call index field - ! + ... if match
// block while for try return break continue let var = import external;
// record fields as `(name value)`, match arms as `(=> pat [(if guard)] body)`.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ast.h"

static void dump_expr(FILE *out, const Expr *e);

static void dump_string(FILE *out, const char *bytes, size_t len) {
  fputc('"', out);
  for (size_t i = 0; i < len; i++) {
    unsigned char c = (unsigned char)bytes[i];
    if (c == '"' || c == '\\') fprintf(out, "\\%c", c);
    else if (c == '\n') fputs("\\n", out);
    else if (c == '\t') fputs("\\t", out);
    else if (c == '\r') fputs("\\r", out);
    else if (c < 0x20 || c == 0x7f) fprintf(out, "\\x%02x", c);
    else fputc(c, out);
  }
  fputc('"', out);
}

// Integral values as `1500.0`, others in the shortest %g form that reads
// back as the same double.
static void dump_float(FILE *out, double value) {
  char buf[40];
  if (value == (double)(long long)value && value > -1e15 && value < 1e15) {
    fprintf(out, "(float %.1f)", value);
    return;
  }
  for (int digits = 1; digits <= 17; digits++) {
    snprintf(buf, sizeof buf, "%.*g", digits, value);
    if (strtod(buf, NULL) == value) break;
  }
  fprintf(out, "(float %s)", buf);
}

static void dump_names(FILE *out, const char **names, int count) {
  fputc('(', out);
  for (int i = 0; i < count; i++) fprintf(out, "%s%s", i ? " " : "", names[i]);
  fputc(')', out);
}

static void dump_exprs(FILE *out, const char *head, const ExprList *list) {
  fprintf(out, "(%s", head);
  for (int i = 0; i < list->count; i++) {
    fputc(' ', out);
    dump_expr(out, list->items[i]);
  }
  fputc(')', out);
}

void ast_dump_pattern(FILE *out, const Pattern *pat) {
  switch (pat->kind) {
    case PAT_WILD: fputs("_", out); break;
    case PAT_VAR: fputs(pat->u.name, out); break;
    case PAT_NIL: fputs("nil", out); break;
    case PAT_BOOL: fputs(pat->u.boolean ? "true" : "false", out); break;
    case PAT_INT: fprintf(out, "%lld", (long long)pat->u.int_val); break;
    case PAT_FLOAT: dump_float(out, pat->u.float_val); break;
    case PAT_STRING: dump_string(out, pat->u.str.bytes, pat->u.str.len); break;
    case PAT_EMPTY: fputs("[]", out); break;
    case PAT_CONS:
      fputs("(:: ", out);
      ast_dump_pattern(out, pat->u.cons.head);
      fputc(' ', out);
      ast_dump_pattern(out, pat->u.cons.tail);
      fputc(')', out);
      break;
    case PAT_LIST: case PAT_TUPLE:
      fputs(pat->kind == PAT_LIST ? "(list" : "(tuple", out);
      for (int i = 0; i < pat->u.items.count; i++) {
        fputc(' ', out);
        ast_dump_pattern(out, pat->u.items.items[i]);
      }
      fputc(')', out);
      break;
    case PAT_RECORD:
      fputs("(record", out);
      for (int i = 0; i < pat->u.record.count; i++) {
        fprintf(out, " (%s ", pat->u.record.names[i]);
        ast_dump_pattern(out, pat->u.record.pats[i]);
        fputc(')', out);
      }
      fputc(')', out);
      break;
  }
}

static const char *binop_name(BinOp op) {
  static const char *const names[] = {
      [OP_OR] = "||", [OP_AND] = "&&", [OP_EQ] = "==", [OP_NE] = "!=",
      [OP_LT] = "<",  [OP_LE] = "<=",  [OP_GT] = ">",  [OP_GE] = ">=",
      [OP_CONCAT] = "++", [OP_ADD] = "+", [OP_SUB] = "-", [OP_MUL] = "*",
      [OP_DIV] = "/", [OP_MOD] = "%",
  };
  return names[op];
}

// `(head a b)` for up to three children; NULL children are left out.
static void dump_node(FILE *out, const char *head, const Expr *a, const Expr *b, const Expr *c) {
  fprintf(out, "(%s", head);
  const Expr *kids[3] = {a, b, c};
  for (int i = 0; i < 3; i++) {
    if (kids[i] == NULL) continue;
    fputc(' ', out);
    dump_expr(out, kids[i]);
  }
  fputc(')', out);
}

static void dump_fn(FILE *out, const Expr *e) {
  if (e->kind == EX_FN_DECL) fprintf(out, "(fn-decl %s ", e->u.fn.name);
  else fputs("(fn ", out);
  dump_names(out, e->u.fn.params, e->u.fn.param_count);
  fputc(' ', out);
  dump_expr(out, e->u.fn.body);
  fputc(')', out);
}

static void dump_record(FILE *out, const Expr *e) {
  fputs("(record", out);
  for (int i = 0; i < e->u.record.count; i++) {
    fprintf(out, " (%s ", e->u.record.names[i]);
    dump_expr(out, e->u.record.values[i]);
    fputc(')', out);
  }
  fputc(')', out);
}

static void dump_match(FILE *out, const Expr *e) {
  fputs("(match ", out);
  dump_expr(out, e->u.match.scrutinee);
  for (int i = 0; i < e->u.match.arm_count; i++) {
    const MatchArm *arm = &e->u.match.arms[i];
    fputs(" (=> ", out);
    ast_dump_pattern(out, arm->pattern);
    if (arm->guard != NULL) {
      fputc(' ', out);
      dump_node(out, "if", arm->guard, NULL, NULL);
    }
    fputc(' ', out);
    dump_expr(out, arm->body);
    fputc(')', out);
  }
  fputc(')', out);
}

static void dump_call(FILE *out, const Expr *e) {
  fputs("(call ", out);
  dump_expr(out, e->u.call.callee);
  for (int i = 0; i < e->u.call.args.count; i++) {
    fputc(' ', out);
    dump_expr(out, e->u.call.args.items[i]);
  }
  fputc(')', out);
}

static void dump_for(FILE *out, const Expr *e) {
  fprintf(out, "(for %s ", e->u.for_.var);
  if (e->u.for_.hi != NULL) dump_node(out, "range", e->u.for_.lo, e->u.for_.hi, NULL);
  else dump_expr(out, e->u.for_.lo);
  fputc(' ', out);
  dump_expr(out, e->u.for_.body);
  fputc(')', out);
}

static void dump_let(FILE *out, const Expr *e) {
  fputs("(let ", out);
  ast_dump_pattern(out, e->u.let.pattern);
  fputc(' ', out);
  dump_expr(out, e->u.let.value);
  fputc(')', out);
}

static void dump_external(FILE *out, const Expr *e) {
  fprintf(out, "(external %s ", e->u.external.name);
  dump_names(out, e->u.external.params, e->u.external.param_count);
  fputc(' ', out);
  const char *c_name = e->u.external.c_name ? e->u.external.c_name : "";
  dump_string(out, c_name, strlen(c_name));
  fputc(')', out);
}

// Leaves: literals and names.
static bool dump_leaf(FILE *out, const Expr *e) {
  switch (e->kind) {
    case EX_NIL: fputs("nil", out); return true;
    case EX_BOOL: fputs(e->u.boolean ? "true" : "false", out); return true;
    case EX_INT: fprintf(out, "%lld", (long long)e->u.int_val); return true;
    case EX_FLOAT: dump_float(out, e->u.float_val); return true;
    case EX_STRING: dump_string(out, e->u.str.bytes, e->u.str.len); return true;
    case EX_EMPTY_LIST: fputs("[]", out); return true;
    case EX_VAR: fputs(e->u.name, out); return true;
    case EX_MEMBER: fprintf(out, "%s.%s", e->u.member.module, e->u.member.member); return true;
    case EX_BREAK: fputs("(break)", out); return true;
    case EX_CONTINUE: fputs("(continue)", out); return true;
    case EX_IMPORT: fprintf(out, "(import %s)", e->u.name); return true;
    default: return false;
  }
}

static void dump_expr(FILE *out, const Expr *e) {
  if (dump_leaf(out, e)) return;
  switch (e->kind) {
    case EX_TUPLE: dump_exprs(out, "tuple", &e->u.items); break;
    case EX_LIST: dump_exprs(out, "list", &e->u.items); break;
    case EX_ARRAY: dump_exprs(out, "array", &e->u.items); break;
    case EX_BLOCK: dump_exprs(out, "block", &e->u.block); break;
    case EX_CONS: dump_node(out, "::", e->u.binary.left, e->u.binary.right, NULL); break;
    case EX_INDEX: dump_node(out, "index", e->u.binary.left, e->u.binary.right, NULL); break;
    case EX_BINARY:
      dump_node(out, binop_name(e->u.binary.op), e->u.binary.left, e->u.binary.right, NULL);
      break;
    case EX_UNARY:
      dump_node(out, e->u.unary.op == OP_NEG ? "-" : "!", e->u.unary.operand, NULL, NULL);
      break;
    case EX_RECORD: dump_record(out, e); break;
    case EX_FN: case EX_FN_DECL: dump_fn(out, e); break;
    case EX_CALL: dump_call(out, e); break;
    case EX_FIELD:
      fputs("(field ", out);
      dump_expr(out, e->u.field.object);
      fprintf(out, " %s)", e->u.field.name);
      break;
    case EX_IF: dump_node(out, "if", e->u.if_.cond, e->u.if_.then_, e->u.if_.else_); break;
    case EX_MATCH: dump_match(out, e); break;
    case EX_WHILE: dump_node(out, "while", e->u.while_.cond, e->u.while_.body, NULL); break;
    case EX_FOR: dump_for(out, e); break;
    case EX_TRY:
      fputs("(try ", out);
      dump_expr(out, e->u.try_.body);
      fprintf(out, " %s ", e->u.try_.var);
      dump_expr(out, e->u.try_.handler);
      fputc(')', out);
      break;
    case EX_RETURN: dump_node(out, "return", e->u.ret.value, NULL, NULL); break;
    case EX_LET: dump_let(out, e); break;
    case EX_VAR_DECL:
      fprintf(out, "(var %s ", e->u.var_decl.name);
      dump_expr(out, e->u.var_decl.value);
      fputc(')', out);
      break;
    case EX_ASSIGN: dump_node(out, "=", e->u.assign.target, e->u.assign.value, NULL); break;
    case EX_EXTERNAL: dump_external(out, e); break;
    default: fputs("(?)", out); break;
  }
}

void ast_dump_expr(FILE *out, const Expr *expr) { dump_expr(out, expr); }

void ast_dump(FILE *out, const Program *program) {
  for (int i = 0; i < program->items.count; i++) {
    dump_expr(out, program->items.items[i]);
    fputc('\n', out);
  }
}
