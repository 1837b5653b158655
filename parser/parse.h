/*
** parse.h: the parser's state, shared by the re2c lexer (lexer.re) and the
** Bison grammar (grammar.y), and the one entry point of the front end's
** syntax phase.
*/
#ifndef STN_PARSE_H
#define STN_PARSE_H

#include "arena.h"
#include "ast.h"
#include "diag.h"
#include "intern.h"

typedef struct Bracket {
  char ch;  /* '(', '[' or '{' */
  Loc  at;
} Bracket;

typedef struct Parser {
  const Source *src;
  Diag         *diag;
  Arena        *arena;
  Intern       *names;
  const char   *cur;       /* lexer position */
  Loc           prev;      /* the token before the current lookahead */
  Loc           last;      /* the current lookahead */
  Loc           placeholder; /* a bad token the lexer passed on after reporting it */
  Bracket      *open;      /* brackets not yet closed, innermost last, for hints */
  int           nopen, capopen;
  Node         *program;
} Parser;

/* Parses src; syntax errors go to d. Returns the program (possibly partial) or NULL. */
Node *parse_program(const Source *src, Diag *d, Arena *arena, Intern *names);

#endif
