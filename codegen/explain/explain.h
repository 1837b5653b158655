/*
** explain.h: stencilc --explain, the teaching view of a program. explain.c
** prints the grid, the unknowns, each residual's stencil as a picture, the
** residuals and derived Jacobian entries in mathematical notation and the
** SG-DIA layout with its storage against CSR and DIA; explain_svg.c draws,
** for a small grid, the stencil, the Jacobian's sparsity pattern coloured
** by block diagonal and the SG-DIA columns (--explain-svg FILE), after
** Figure 3.1 of the SG-DIA paper.
*/
#ifndef STN_EXPLAIN_H
#define STN_EXPLAIN_H

#include <stdbool.h>
#include <stdio.h>

#include "ir.h"

typedef struct ExplainOptions {
  const char *input;  /* the .stn path, as given */
  const char *svg;    /* --explain-svg FILE, or NULL */
} ExplainOptions;

/* Prints the explanation to out and writes the SVG when asked. Returns the
   exit status: 0, or 1 when the SVG cannot be written. */
int explain_program(const Ir *ir, const ExplainOptions *o, FILE *out);

/* explain_svg.c. The grid the picture is drawn for: the .stn's own when it
   has at most EXPLAIN_SMALL_POINTS points, else 8 (1D), 4 x 4 (2D) or
   3 x 3 x 3 (3D), widened to 2w+1 points where the stencil needs it.
   Returns true when it is the .stn's own grid. */
enum { EXPLAIN_SMALL_POINTS = 64 };
bool explain_small_grid(const Model *m, long long n[MAX_DIM]);
/* Writes the SVG to path; false (errno set) when it cannot be written. */
bool explain_svg(const Ir *ir, const char *path);

/* The block diagonal (position in ir->stencil) of an offset, or -1. */
int  explain_block(const Ir *ir, int offset);

#endif
