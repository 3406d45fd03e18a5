// ast.h - the abstract syntax tree the parser builds and the compiler reads.
// Nodes live in an Arena owned by the caller and are freed all at once.
// The language is specified in docs/language.md (external declarations and
// guards in match arms included).
#ifndef MINNOW_AST_H
#define MINNOW_AST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

// ---------------------------------------------------------------------------
// Source positions.
//
// Every node records where it starts and ends as byte offsets into the source
// text, plus the 1-based line of its first byte and the offset of that line's
// first byte. A frame's columns are derived from these:
//   start_col = start - line_start        (0-based, inclusive)
//   end_col   = end   - line_start        (0-based, exclusive; may run past the
//                                          end of the first line, as OCaml does)
// Error messages print `line:(start_col+1)`.
typedef struct SrcPos {
  uint32_t start;       // byte offset of the first byte of the construct
  uint32_t end;         // byte offset one past its last byte
  uint32_t line;        // 1-based line of `start`
  uint32_t line_start;  // byte offset of the first byte of that line
} SrcPos;

// The longest source file, in bytes: offsets fit 32 bits with room to spare
// and a program of that size compiles in bounded memory (docs/language.md,
// "Limits"). Longer files are refused before parsing.
enum { SOURCE_MAX_BYTES = 16u << 20 };

// One source file. `path` is as given by the user (or "stdlib/list.mn").
typedef struct Source {
  const char *path;
  const char *text;     // NUL-terminated
  size_t len;
} Source;

// ---------------------------------------------------------------------------
// Arena: bump allocator for AST nodes and strings. Zeroes what it returns.
typedef struct ArenaChunk ArenaChunk;
typedef struct Arena {
  ArenaChunk *chunks;
} Arena;

void *arena_alloc(Arena *arena, size_t bytes);
char *arena_strndup(Arena *arena, const char *s, size_t len);
void arena_free_all(Arena *arena);

// ---------------------------------------------------------------------------
// Patterns (match arms, let bindings).
typedef enum PatKind {
  PAT_WILD,      // _
  PAT_VAR,       // name           (binds)
  PAT_NIL,       // nil
  PAT_BOOL,      // true / false   (u.boolean)
  PAT_INT,       // 42, -7, 0x1f   (u.int_val)
  PAT_FLOAT,     // 3.5, -1e-4     (u.float_val)
  PAT_STRING,    // "abc"          (u.str)
  PAT_EMPTY,     // []
  PAT_CONS,      // p :: p         (u.cons)
  PAT_LIST,      // [p, q, ...]    (u.items)  exact length
  PAT_TUPLE,     // (p, q, ...)    (u.items)  at least 2 items
  PAT_RECORD,    // {f: p, g: q}   (u.record) matches records having these fields
} PatKind;

typedef struct Pattern Pattern;
typedef struct PatList {
  Pattern **items;
  int count;
} PatList;

struct Pattern {
  PatKind kind;
  SrcPos pos;
  union {
    const char *name;                    // PAT_VAR
    bool boolean;                        // PAT_BOOL
    int64_t int_val;                     // PAT_INT (already 63-bit range checked)
    double float_val;                    // PAT_FLOAT
    struct { const char *bytes; size_t len; } str;   // PAT_STRING (escapes decoded)
    struct { Pattern *head, *tail; } cons;           // PAT_CONS
    PatList items;                       // PAT_LIST, PAT_TUPLE
    struct { const char **names; Pattern **pats; int count; } record; // PAT_RECORD
  } u;
};

// ---------------------------------------------------------------------------
// Expressions. Minnow is expression oriented: statements are expressions whose
// value may be ignored; a block's value is its last expression's (nil if the
// block is empty or ends with a statement such as `let`, `while`, assignment).
typedef enum ExprKind {
  // literals
  EX_NIL, EX_BOOL, EX_INT, EX_FLOAT, EX_STRING,
  EX_EMPTY_LIST,     // []
  // names
  EX_VAR,            // x                    u.name
  EX_MEMBER,         // List.map             u.member (module starts upper-case)
  // constructors (each allocates; `pos` is the whole literal)
  EX_TUPLE,          // (a, b, ...)          u.items (count >= 2)
  EX_LIST,           // [a, b, c]            u.items (count >= 1; desugars to conses)
  EX_CONS,           // h :: t               u.binary.left = h, right = t
  EX_ARRAY,          // [| a, b |]           u.items (count >= 0)
  EX_RECORD,         // {x: 1, y: 2}         u.record
  EX_FN,             // fn(a, b) { body }    u.fn (name NULL for anonymous)
  // operations
  EX_CALL,           // f(a, b)              u.call
  EX_INDEX,          // a[i]                 u.binary.left = a, right = i
  EX_FIELD,          // r.f                  u.field
  EX_UNARY,          // -e, !e               u.unary
  EX_BINARY,         // a + b, a && b, ...   u.binary (op in u.binary.op)
  // control
  EX_IF,             // if c { } else { }    u.if_ (else_ may be NULL; `else if` nests an EX_IF)
  EX_MATCH,          // match e { arms }     u.match
  EX_BLOCK,          // { s1; s2; e }        u.block
  EX_WHILE,          // while c { }          u.while_
  EX_FOR,            // for x in a..b { } / for x in coll { }   u.for_
  EX_TRY,            // try { } catch e { }  u.try_
  EX_RETURN,         // return / return e    u.ret (value may be NULL)
  EX_BREAK,          // break      (extension)
  EX_CONTINUE,       // continue   (extension)
  // statements (appear as items of a block or of the program)
  EX_LET,            // let p = e            u.let (pattern; PAT_VAR for a plain name)
  EX_VAR_DECL,       // var x = e            u.var_decl
  EX_ASSIGN,         // x = e, a[i] = e, r.f = e   u.assign
  EX_FN_DECL,        // fn name(a) { }       u.fn (name set); may be recursive
  EX_IMPORT,         // import util          u.name  (top level only)
  EX_EXTERNAL,       // external name(a, b) = "c_name"   u.external (top level only)
} ExprKind;

typedef enum BinOp {
  OP_OR, OP_AND,                          // short-circuit
  OP_EQ, OP_NE, OP_LT, OP_LE, OP_GT, OP_GE,
  OP_CONCAT,                              // ++
  OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_MOD,
} BinOp;

typedef enum UnOp { OP_NEG, OP_NOT } UnOp;

typedef struct Expr Expr;
typedef struct ExprList {
  Expr **items;
  int count;
} ExprList;

typedef struct MatchArm {
  Pattern *pattern;
  Expr *guard;       // `p if cond => e` (extension); NULL when absent
  Expr *body;
} MatchArm;

typedef struct FnDef {
  const char *name;        // NULL for an anonymous fn
  const char **params;
  int param_count;
  Expr *body;              // an EX_BLOCK
  SrcPos name_pos;         // position of the name (or of `fn` when anonymous)
} FnDef;

struct Expr {
  ExprKind kind;
  SrcPos pos;              // the whole construct
  union {
    bool boolean;                                          // EX_BOOL
    int64_t int_val;                                       // EX_INT
    double float_val;                                      // EX_FLOAT
    struct { const char *bytes; size_t len; } str;         // EX_STRING (decoded; may hold NULs)
    const char *name;                                      // EX_VAR, EX_IMPORT
    struct { const char *module, *member; } member;        // EX_MEMBER
    ExprList items;                                        // EX_TUPLE, EX_LIST, EX_ARRAY
    struct { const char **names; Expr **values; int count; } record;   // EX_RECORD
    FnDef fn;                                              // EX_FN, EX_FN_DECL
    struct { Expr *callee; ExprList args; } call;          // EX_CALL
    struct { Expr *object; const char *name; } field;      // EX_FIELD
    struct { UnOp op; Expr *operand; } unary;              // EX_UNARY
    struct { BinOp op; Expr *left, *right; } binary;       // EX_BINARY, EX_CONS, EX_INDEX
    struct { Expr *cond, *then_, *else_; } if_;            // EX_IF
    struct { Expr *scrutinee; MatchArm *arms; int arm_count; } match;  // EX_MATCH
    ExprList block;                                        // EX_BLOCK
    struct { Expr *cond, *body; } while_;                  // EX_WHILE
    struct {
      const char *var;       // loop variable
      Expr *lo, *hi;         // range form: lo..hi (hi exclusive); hi == NULL: collection form
      Expr *body;            // collection form uses lo as the collection
    } for_;                                                // EX_FOR
    struct { Expr *body; const char *var; Expr *handler; } try_;   // EX_TRY
    struct { Expr *value; } ret;                           // EX_RETURN
    struct { Pattern *pattern; Expr *value; } let;         // EX_LET
    struct { const char *name; Expr *value; } var_decl;    // EX_VAR_DECL
    struct { Expr *target; Expr *value; } assign;          // EX_ASSIGN: target is EX_VAR, EX_INDEX or EX_FIELD
    struct {
      const char *name; const char **params; int param_count; const char *c_name;
    } external;                                            // EX_EXTERNAL
  } u;
};

// A parsed file: its top-level items in order (an EX_BLOCK-like list).
typedef struct Program {
  const Source *source;
  ExprList items;
} Program;

// ---------------------------------------------------------------------------
// Diagnostics. The parser collects errors (it recovers at statement
// boundaries) instead of printing them; the caller prints
//   path:line:col: syntax error: message
// for each, in order, and exits with status 2 if there was any.
typedef struct Diagnostic {
  uint32_t line;   // 1-based
  uint32_t col;    // 1-based column (byte offset from line start + 1)
  char message[160];
} Diagnostic;

enum { PARSE_MAX_ERRORS = 20 };

typedef struct ParseResult {
  Program program;
  Diagnostic errors[PARSE_MAX_ERRORS];
  int error_count;       // number stored (at most PARSE_MAX_ERRORS)
} ParseResult;

// Parses `source` into `result`, allocating every node in `arena`.
// Returns true when there was no syntax error. Never aborts on bad input.
bool parse_program(const Source *source, Arena *arena, ParseResult *result);

// Prints the collected diagnostics to stderr as `path:line:col: syntax error: msg`.
void parse_print_errors(const Source *source, const ParseResult *result);

// ---------------------------------------------------------------------------
// Debugging and tests (ast_dump.c). Prints `program` as S-expressions, one
// top-level item per line, e.g. `(let x (+ 1 (call f y)))`; the forms are
// listed in ast_dump.c. Does not allocate.
#include <stdio.h>
void ast_dump(FILE *out, const Program *program);

// Prints one expression / pattern as a single-line S-expression (no newline).
void ast_dump_expr(FILE *out, const Expr *expr);
void ast_dump_pattern(FILE *out, const Pattern *pattern);

#endif
