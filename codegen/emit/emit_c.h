/*
** emit_c.h: the C emitter. emit_c_program writes the whole PETSc program
** for a checked, lowered .stn (emit_c.c); emit_c_expr.c prints IR
** expressions and names their common subexpressions.
*/
#ifndef STN_EMIT_C_H
#define STN_EMIT_C_H

#include <stdio.h>

#include "ir.h"

/* A name in CEmit.locals (emit_c_expr.c). */
typedef struct LocalName {
  char *s;      /* NULL: an empty slot */
  bool  taken;  /* a local of the current function */
  int   next;   /* the first suffix s_N not yet tried for a temporary named after s */
} LocalName;

/* Where emit_c_expr_at prints an expression to measure it before it prints it again: one
   memory stream per CEmit, reused, as a stream per expression costs a buffer each. */
typedef struct CScratch {
  FILE  *f;
  char  *text;
  size_t len;
} CScratch;

typedef struct CEmit {
  const Ir    *ir;
  FILE        *out;
  char       **field;   /* C names of fields, by index (cnames.h) */
  char       **param;   /* C names of parameters */
  char       **coef;    /* C names of coefficients read from files (AppCtx members), by index; NULL
                           for those given by an expression */
  const char **coef_array;  /* C: the local array of each in the current function, "k" in k[j][i + 1] */
  const char  *array;   /* the array field reads come from: "x" */
  const char  *grid;    /* prefix of grid sizes and boxes: "info->" in C, "info." in CUDA */
  const char  *params;  /* prefix of parameters: "user->" in C, "user." in CUDA */
  char       **name;    /* by node: the temporary holding it in the current scope, or NULL */
  bool         cuda;    /* CUDA kernel text: x[IX(i - 1, j)].u and (double) casts */
  LocalName   *locals;  /* names of the current function: a hash table of caplocals slots */
  int          nlocals, caplocals, ntemps;
  CScratch    *scratch; /* NULL until first needed */
  const char  *dot_array; /* the array time derivatives, dt(u), come from: "xdot" */
} CEmit;

void emit_c_number(FILE *out, double v);
void emit_c_expr(CEmit *E, Ref r);
/* The same, starting at column: a sum that would run past the line's width gets one term per
   line, each sign under the start of the expression less two. */
void emit_c_expr_at(CEmit *E, Ref r, int column);
/* Declares (at indent) the temporaries of the nodes under roots: those the
   same at every point when uniform, the others otherwise. Their nodes go to
   named (room for every node); returns how many. */
int  emit_c_temps(CEmit *E, const Ref *roots, int nroots, bool uniform, const char *indent, Ref *named);
/* Ends a scope: its temporaries are no longer visible. */
void emit_c_forget(CEmit *E, const Ref *named, int n);
/* Starts a function: no names taken. */
void emit_c_function_begin(CEmit *E);
/* Frees what E holds itself: the names and the scratch stream. */
void emit_c_free(CEmit *E);
/* Which grid values (i, hx, nx, ...) the expressions under roots read, and (when coefs is not
   NULL) which coefficients read from files, by index. */
void emit_c_grid_uses(const CEmit *E, const Ref *roots, int nroots, bool used[BV_COUNT], bool *coefs);
/* A new local of the current function named after hint (hint_, hint_2, ... when taken). */
const char *emit_c_local(CEmit *E, const char *hint);
/* Defines StnMod, the language's mod, when the program calls it (in the CUDA text as a
   __device__ function). */
void emit_c_mod_function(const Ir *ir, FILE *out, bool cuda);
/* Operations evaluated per point for roots (the uniform ones are hoisted). */
int  emit_c_flops(const CEmit *E, const Ref *roots, int nroots);

typedef struct EmitOptions {
  const char *program;   /* program name, e.g. "cavity" */
  const char *stn_name;  /* the .stn file's base name, e.g. "cavity.stn" */
  const char *c_name;    /* the generated file's name, e.g. "cavity.c" */
  const char *h_name;    /* the shared header's name, e.g. "cavity.h" */
  bool        hooks;     /* --skeleton: the user hooks section in the C (emit_hooks.c) */
} EmitOptions;

/* Writes the program's C source to out. */
void emit_c_program(const Ir *ir, const EmitOptions *o, FILE *out);
/* Writes the header shared by the C and CUDA sources (Field, AppCtx,
   the kernels' launchers) and the CUDA kernels (emit_cuda.c). */
void emit_cuda_header(const Ir *ir, const EmitOptions *o, FILE *out);
void emit_cuda_kernels(const Ir *ir, const EmitOptions *o, FILE *out);
/* stn_program.h (COMPILE_PROGRAM_HEADER): the matrix's dof and block diagonals, for the runtime's
   CUDA files (runtime/sgdia_instances.h), which then compile their kernels for this matrix only. */
void emit_program_header(const Ir *ir, const EmitOptions *o, FILE *out);

#endif
