/*
** compile.h: from the IR to an executable (compile.c).
*/
#ifndef STN_COMPILE_H
#define STN_COMPILE_H

#include "ir.h"

typedef struct CompileOptions {
  const char *input;     /* the .stn path, as given */
  const char *output;    /* -o PROG */
  const char *emit_dir;  /* --emit-dir DIR, or NULL: a temporary directory */
} CompileOptions;

/* Returns the exit status for stencilc: 0, 1 (a user-facing problem: no
   PETSc, an unwritable path) or 70 (the generated code did not compile). */
int compile_program(const Ir *ir, const CompileOptions *co);

#endif
