// lexer.h - turns Minnow source text into tokens for parser.c.
// Token rules (literals, escapes, operators) are listed in lexer.c's header
// comment; positions use ast.h's SrcPos.
#ifndef MINNOW_LEXER_H
#define MINNOW_LEXER_H

#include <stdbool.h>
#include <stdint.h>

#include "ast.h"

// X(kind, spelling): every token kind once, in the order of the enum.
#define TOKEN_KINDS(X)                                                       \
  X(TK_EOF, "end of file") X(TK_ERROR, "invalid character")                  \
  X(TK_IDENT, "identifier") X(TK_INT, "integer literal")                     \
  X(TK_FLOAT, "float literal") X(TK_STRING, "string literal")                \
  X(TK_LET, "let") X(TK_VAR, "var") X(TK_FN, "fn") X(TK_IF, "if")            \
  X(TK_ELSE, "else") X(TK_MATCH, "match") X(TK_WHILE, "while")               \
  X(TK_FOR, "for") X(TK_IN, "in") X(TK_TRY, "try") X(TK_CATCH, "catch")      \
  X(TK_RETURN, "return") X(TK_BREAK, "break") X(TK_CONTINUE, "continue")     \
  X(TK_IMPORT, "import") X(TK_EXTERNAL, "external") X(TK_NIL, "nil")         \
  X(TK_TRUE, "true") X(TK_FALSE, "false")                                    \
  X(TK_LPAREN, "(") X(TK_RPAREN, ")") X(TK_LBRACKET, "[")                    \
  X(TK_RBRACKET, "]") X(TK_LARRAY, "[|") X(TK_RARRAY, "|]")                  \
  X(TK_LBRACE, "{") X(TK_RBRACE, "}") X(TK_COMMA, ",") X(TK_SEMI, ";")       \
  X(TK_COLON, ":") X(TK_DOT, ".") X(TK_DOTDOT, "..") X(TK_CONS, "::")        \
  X(TK_CONCAT, "++") X(TK_PLUS, "+") X(TK_MINUS, "-") X(TK_STAR, "*")        \
  X(TK_SLASH, "/") X(TK_PERCENT, "%") X(TK_EQ, "==") X(TK_NE, "!=")          \
  X(TK_LT, "<") X(TK_LE, "<=") X(TK_GT, ">") X(TK_GE, ">=")                  \
  X(TK_ASSIGN, "=") X(TK_ARROW, "=>") X(TK_BANG, "!") X(TK_AND, "&&")        \
  X(TK_OR, "||")

typedef enum TokenKind {
#define X(kind, spelling) kind,
  TOKEN_KINDS(X)
#undef X
  TK_COUNT
} TokenKind;

// One token. `pos` covers exactly its bytes (for a string, both quotes).
// When `error` is non-NULL the token is malformed: the message belongs at byte
// `error_offset` (always on the line of pos.start), and the token still stands
// for `kind` with a best-effort value (TK_ERROR: a stray byte, to be skipped).
typedef struct Token {
  TokenKind kind;
  SrcPos pos;
  bool newline_before;     // a newline lies between the previous token and this
                           // one (true for the first token of the file)
  bool int_overflow;       // TK_INT: the value does not fit in int64_t
  const char *error;       // static message, or NULL
  uint32_t error_offset;
  union {
    int64_t int_val;       // TK_INT: magnitude, >= 0 (range checked by parser)
    double float_val;      // TK_FLOAT: finite, >= 0
    struct { const char *bytes; size_t len; } str;  // TK_STRING: decoded, in
                                                    // the arena, NUL-terminated
  } u;
} Token;

// Lexer state: a cursor over one source text. Holds no resources of its own;
// decoded strings live in `arena`.
typedef struct Lexer {
  const char *text;
  uint32_t len;
  uint32_t pos;          // next byte to read; pos <= len
  uint32_t line;         // 1-based line of `pos`
  uint32_t line_start;   // offset of the first byte of that line
  bool at_start;         // no token returned yet
  Arena *arena;
} Lexer;

// Prepares `lexer` to read `text[0..len)`; len must be < UINT32_MAX.
void lexer_init(Lexer *lexer, const char *text, uint32_t len, Arena *arena);

// Returns the next token; at the end returns TK_EOF forever. Never fails:
// malformed input yields tokens with `error` set.
Token lexer_next(Lexer *lexer);

// The spelling of a kind as used in messages: "(" or "let" or "identifier".
const char *lexer_kind_name(TokenKind kind);

#endif
