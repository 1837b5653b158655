/*
** frontend.h: the whole front end behind one call, for the driver and the
** fuzzer alike: vet the text, lex and parse, run the semantic checks. The
** driver stops between phases: no checks on a program that did not parse.
*/
#ifndef STN_FRONTEND_H
#define STN_FRONTEND_H

#include <stdbool.h>

#include "arena.h"
#include "ast.h"
#include "diag.h"
#include "intern.h"
#include "sema.h"

typedef struct Frontend {
  Arena   arena;
  Intern  names;
  Source  src;
  Diag    diag;
  Node   *program;  /* the AST, when it parsed */
  Model   model;    /* what sema found, when the program is valid */
} Frontend;

/* Sets up fe for the file at path; messages go to out. */
void frontend_init(Frontend *fe, const char *path, FILE *out);
/* Loads the file; false (with a message) when it cannot be read. */
bool frontend_load(Frontend *fe);
/* Uses text[0, len) as the source instead of a file (copied; may hold any bytes). */
void frontend_set_text(Frontend *fe, const char *text, size_t len);
/* Parses and checks; true when the program is valid (warnings allowed). */
bool frontend_check(Frontend *fe);
void frontend_free(Frontend *fe);

#endif
