/*
** ir_scaling.c: how each field's interior equation scales with the grid
** spacing, for the runtime's choice of multigrid. Multigrid with
** rediscretized coarse grids and the transpose of interpolation as
** restriction (PCMG's, ours) corrects the fine grid by the right amount
** only when the equations carry the cell size: multiplied by hx*hy in 2D
** (hx*hy*hz in 3D, hx in 1D), as PETSc's tutorials write them, so that the
** diagonal of the Jacobian scales as h^(dim - 2). The plain difference
** quotient, -Laplacian(T) = q, scales as h^-2: its coarse-grid corrections
** are 2^dim times too large and multigrid stalls (heat2d: hundreds of
** iterations growing with the grid, where the scaled form takes 5).
**
** The power comes from the derived diagonal entry at one interior point,
** evaluated on a fine grid and on that grid refined once (the same point,
** the same field values and parameters): p = log2 of their ratio.
** A diagonal that is zero, not finite, or not a power of h (two terms of
** different powers, e.g. a reaction term of the same size) gives none.
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ir.h"
#include "util.h"

/* The interior sample of a fine grid (513 points per direction, 512 periodic), or of that grid
   refined once: the point in its middle. Fine, so that a lower-order term (a reaction term next
   to the Laplacian) no longer moves the ratio. */
static void interior_sample(const Ir *ir, int refined, IrSample *smp, double *values) {
  const Model *m = ir->m;
  memset(smp->grid, 0, sizeof smp->grid);
  smp->seed = 7919;
  for (int d = 0; d < m->dim; d++) {
    const Axis *ax = &m->axes[d];
    double n = ax->periodic ? 512 : 513, i = 256;
    if (refined) n = ax->periodic ? 2 * n : 2 * n - 1, i *= 2;
    smp->grid[BV_NX + d] = n;
    smp->grid[BV_HX + d] = (ax->hi - ax->lo) / (ax->periodic ? n : n - 1);
    smp->grid[BV_I + d] = i;
  }
  ir_eval_params(ir, smp, values);
}

bool ir_h_power(const Ir *ir, int field, int *power) {
  const Model *m = ir->m;
  int cls = 0;
  for (int d = 0, w = 1; d < m->dim; d++, w *= 3) cls += w;
  const IrPoint *p = ir_point(ir, field, cls);
  Ref entry = IR_NONE;
  for (int e = 0; e < p->nentries; e++)
    if (p->entries[e].field == field && p->entries[e].offset == ir->stencil[ir->diagonal])
      entry = p->entries[e].given != IR_NONE ? p->entries[e].given : p->entries[e].derived;
  if (entry == IR_NONE) return false;
  double *values = xmalloc((size_t)ir->nnodes * sizeof *values);
  double *params = xcalloc((size_t)m->nparams + 1, sizeof *params);
  IrSample smp = {.params = params};
  interior_sample(ir, 0, &smp, values);
  double coarse = values[entry];
  interior_sample(ir, 1, &smp, values);
  double fine = values[entry];
  free(values);
  free(params);
  if (!isfinite(coarse) || !isfinite(fine) || coarse == 0 || fine == 0) return false;
  double e = log2(fabs(coarse / fine)); /* diag ~ h^p: coarse / fine = 2^p */
  if (!isfinite(e) || fabs(e - round(e)) > 0.2) return false;
  *power = (int)round(e);
  return true;
}
