/*
** stntransfer.c: the transfers between the grids of a hierarchy (interpolation, its transpose,
** injection) as shell matrices over stnmg_cuda.h's point functions, on the device where
** the vectors are. They replace PETSc's for grids that halve (2 nc - 1 or, periodic, 2 nc fine
** points per direction) on one rank: PETSc's are AIJ matrices assembled on the host for every
** level at setup, which took longer than the whole solve on large grids, and applied through
** cuSPARSE. Elsewhere PETSc's own are used.
**
** PCMG, SNES's grid sequencing and the restriction of the Newton iterate ask the coarser DM of
** a pair (DMCreateInterpolation(coarse, fine)); DMCoarsen and DMRefine do not copy those two
** operations (see stnmg.c on the private header), so a hook on every grid puts them on each
** grid made from it.
*/
#include <petsc/private/dmimpl.h>

#include "stnmg.h"
#include "stnmg_cuda.h"
#include "stncuda.h" /* StnCUDALastError */

typedef enum { INTERPOLATE, RESTRICT, INJECT } TransferKind;

typedef struct {
  StnTransferGrid g;
  PetscBool       gpu; /* the vectors live in device memory */
} Transfer;

static PetscErrorCode (*petsc_interpolation)(DM, DM, Mat *, Vec *);
static PetscErrorCode (*petsc_injection)(DM, DM, Mat *);

/* The pair's grid, when the fine one halves into the coarse one on one rank; else *ok false. */
static PetscErrorCode transfer_grid(DM dmc, DM dmf, Transfer *t, PetscBool *ok)
{
  PetscInt       dim, nc[3], nf[3], dof;
  DMBoundaryType bt[3];
  PetscMPIInt    size;
  VecType        vtype;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)dmf), &size));
  PetscCall(DMDAGetInfo(dmf, &dim, &nf[0], &nf[1], &nf[2], NULL, NULL, NULL, &dof, NULL, &bt[0], &bt[1], &bt[2], NULL));
  PetscCall(DMDAGetInfo(dmc, NULL, &nc[0], &nc[1], &nc[2], NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
  *ok = size == 1 ? PETSC_TRUE : PETSC_FALSE;
  t->g.dim = (int)dim;
  t->g.dof = (int)dof;
  for (int d = 0; d < 3; d++) {
    t->g.periodic[d] = d < dim && bt[d] == DM_BOUNDARY_PERIODIC;
    t->g.nf[d]       = d < dim ? (int)nf[d] : 1;
    t->g.nc[d]       = d < dim ? (int)nc[d] : 1;
    if (d < dim && nf[d] != (t->g.periodic[d] ? 2 * nc[d] : 2 * nc[d] - 1)) *ok = PETSC_FALSE;
  }
  PetscCall(DMGetVecType(dmf, &vtype));
  PetscCall(PetscStrbeginswith(vtype, "stncuda", &t->gpu));
  if (!t->gpu) PetscCall(PetscStrendswith(vtype, "cuda", &t->gpu));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* out (+)= op(in), out's array written only, unless add. */
static PetscErrorCode apply(Mat A, TransferKind kind, Vec in, Vec out, int add)
{
  Transfer              *t;
  const StnTransferGrid *g;
  const PetscScalar     *x;
  PetscScalar           *y;
  const int             *n;
  PetscLogDouble         flops;

  PetscFunctionBeginUser;
  PetscCall(MatShellGetContext(A, &t));
  g     = &t->g;
  n     = kind == INTERPOLATE ? g->nf : g->nc;
  flops = kind == INJECT ? 0 : 3.0 * (1 << g->dim) * g->dof * n[0] * n[1] * n[2];
#if defined(PETSC_HAVE_CUDA)
  if (t->gpu) {
    int rc;

    PetscCall(VecCUDAGetArrayRead(in, &x));
    if (add) PetscCall(VecCUDAGetArray(out, &y));
    else PetscCall(VecCUDAGetArrayWrite(out, &y));
    PetscCall(PetscLogGpuTimeBegin());
    rc = kind == INTERPOLATE ? StnTransferInterpolateCUDA(g, add, x, y) : kind == RESTRICT ? StnTransferRestrictCUDA(g, add, x, y) : StnTransferInjectCUDA(g, x, y);
    PetscCall(PetscLogGpuTimeEnd());
    PetscCheck(rc == 0, PETSC_COMM_SELF, PETSC_ERR_LIB, "the grid transfer kernel failed: %s", StnCUDALastError());
    PetscCall(PetscLogGpuFlops(flops));
    if (add) PetscCall(VecCUDARestoreArray(out, &y));
    else PetscCall(VecCUDARestoreArrayWrite(out, &y));
    PetscCall(VecCUDARestoreArrayRead(in, &x));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
#endif
  PetscCall(VecGetArrayRead(in, &x));
  if (add) PetscCall(VecGetArray(out, &y));
  else PetscCall(VecGetArrayWrite(out, &y));
  for (int k = 0; k < n[2]; k++)
    for (int j = 0; j < n[1]; j++)
      for (int i = 0; i < n[0]; i++) {
        if (kind == INTERPOLATE) stn_transfer_interpolate_point(g, g->dof, 0, g->dof, add, i, j, k, x, y);
        else if (kind == RESTRICT) stn_transfer_restrict_point(g, g->dof, 0, g->dof, add, i, j, k, x, y);
        else stn_transfer_inject_point(g, i, j, k, x, y);
      }
  PetscCall(PetscLogFlops(flops));
  if (add) PetscCall(VecRestoreArray(out, &y));
  else PetscCall(VecRestoreArrayWrite(out, &y));
  PetscCall(VecRestoreArrayRead(in, &x));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode Interpolate(Mat A, Vec x, Vec y) { return apply(A, INTERPOLATE, x, y, 0); }
static PetscErrorCode Restrict(Mat A, Vec x, Vec y) { return apply(A, RESTRICT, x, y, 0); }
static PetscErrorCode Inject(Mat A, Vec x, Vec y) { return apply(A, INJECT, x, y, 0); }

/* w = y + A x (MatMultAdd), w = y + A^T x (MatMultTransposeAdd) */
static PetscErrorCode InterpolateAdd(Mat A, Vec x, Vec y, Vec w)
{
  PetscFunctionBeginUser;
  if (w != y) PetscCall(VecCopy(y, w));
  PetscCall(apply(A, INTERPOLATE, x, w, 1));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode RestrictAdd(Mat A, Vec x, Vec y, Vec w)
{
  PetscFunctionBeginUser;
  if (w != y) PetscCall(VecCopy(y, w));
  PetscCall(apply(A, RESTRICT, x, w, 1));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode TransferDestroy(Mat A)
{
  Transfer *t;

  PetscFunctionBeginUser;
  PetscCall(MatShellGetContext(A, &t));
  PetscCall(PetscFree(t));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The pair's transfer as a shell: fine x coarse unknowns for the interpolation, coarse x fine
   for the injection, with the output grid's vectors; NULL when the pair is not one of ours. */
static PetscErrorCode transfer_shell(DM dmc, DM dmf, PetscBool interpolation, Mat *A)
{
  Transfer *t;
  PetscBool ok;
  VecType   vtype;
  DM        out = interpolation ? dmf : dmc;

  PetscFunctionBeginUser;
  *A = NULL;
  PetscCall(PetscNew(&t));
  PetscCall(transfer_grid(dmc, dmf, t, &ok));
  if (!ok) {
    PetscCall(PetscFree(t));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  const PetscInt nf = (PetscInt)t->g.dof * t->g.nf[0] * t->g.nf[1] * t->g.nf[2], nc = (PetscInt)t->g.dof * t->g.nc[0] * t->g.nc[1] * t->g.nc[2];
  const PetscInt rows = interpolation ? nf : nc, cols = interpolation ? nc : nf;
  PetscCall(MatCreateShell(PetscObjectComm((PetscObject)out), rows, cols, rows, cols, t, A));
  PetscCall(DMGetVecType(out, &vtype));
  PetscCall(MatShellSetVecType(*A, vtype));
  PetscCall(MatShellSetOperation(*A, MATOP_DESTROY, (void (*)(void))TransferDestroy));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* scale = 1 / (P^T 1) on the coarse grid (DMCreateInterpolationScale's), from the weights. */
static PetscErrorCode row_scale(Mat P, DM dmc, Vec *scale)
{
  Transfer    *t;
  PetscScalar *c;

  PetscFunctionBeginUser;
  PetscCall(MatShellGetContext(P, &t));
  PetscCall(DMCreateGlobalVector(dmc, scale));
#if defined(PETSC_HAVE_CUDA)
  if (t->gpu) {
    PetscCall(VecCUDAGetArrayWrite(*scale, &c));
    PetscCheck(StnTransferRScaleCUDA(&t->g, c) == 0, PETSC_COMM_SELF, PETSC_ERR_LIB, "the grid transfer kernel failed: %s", StnCUDALastError());
    PetscCall(VecCUDARestoreArrayWrite(*scale, &c));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
#endif
  PetscCall(VecGetArrayWrite(*scale, &c));
  for (int k = 0; k < t->g.nc[2]; k++)
    for (int j = 0; j < t->g.nc[1]; j++)
      for (int i = 0; i < t->g.nc[0]; i++) stn_transfer_rscale_point(&t->g, i, j, k, c);
  PetscCall(VecRestoreArrayWrite(*scale, &c));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DMCreateInterpolation_Stn(DM dmc, DM dmf, Mat *P, Vec *scale)
{
  PetscFunctionBeginUser;
  PetscCall(transfer_shell(dmc, dmf, PETSC_TRUE, P));
  if (!*P) {
    PetscCall((*petsc_interpolation)(dmc, dmf, P, scale));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(MatShellSetOperation(*P, MATOP_MULT, (void (*)(void))Interpolate));
  PetscCall(MatShellSetOperation(*P, MATOP_MULT_ADD, (void (*)(void))InterpolateAdd));
  PetscCall(MatShellSetOperation(*P, MATOP_MULT_TRANSPOSE, (void (*)(void))Restrict));
  PetscCall(MatShellSetOperation(*P, MATOP_MULT_TRANSPOSE_ADD, (void (*)(void))RestrictAdd));
  if (scale) PetscCall(row_scale(*P, dmc, scale));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DMCreateInjection_Stn(DM dmc, DM dmf, Mat *R)
{
  PetscFunctionBeginUser;
  PetscCall(transfer_shell(dmc, dmf, PETSC_FALSE, R));
  if (!*R) {
    PetscCall((*petsc_injection)(dmc, dmf, R));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(MatShellSetOperation(*R, MATOP_MULT, (void (*)(void))Inject));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode coarsen_hook(DM fine, DM coarse, void *ctx);
static PetscErrorCode refine_hook(DM coarse, DM fine, void *ctx);

PetscErrorCode StnDMUseTransfers(DM dm)
{
  PetscFunctionBeginUser;
  if (dm->ops->createinterpolation == DMCreateInterpolation_Stn) PetscFunctionReturn(PETSC_SUCCESS);
  if (!petsc_interpolation) {
    petsc_interpolation = dm->ops->createinterpolation;
    petsc_injection     = dm->ops->createinjection;
  }
  dm->ops->createinterpolation = DMCreateInterpolation_Stn;
  dm->ops->createinjection     = DMCreateInjection_Stn;
  PetscCall(DMCoarsenHookAdd(dm, coarsen_hook, NULL, NULL));
  PetscCall(DMRefineHookAdd(dm, refine_hook, NULL, NULL));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode coarsen_hook(DM fine, DM coarse, void *ctx)
{
  (void)fine, (void)ctx;
  return StnDMUseTransfers(coarse);
}

static PetscErrorCode refine_hook(DM coarse, DM fine, void *ctx)
{
  (void)coarse, (void)ctx;
  return StnDMUseTransfers(fine);
}

PetscErrorCode StnTransferGetGrid(Mat P, const StnTransferGrid **g, PetscBool *ok)
{
  PetscBool shell;
  void (*mult)(void) = NULL;
  Transfer *t;

  PetscFunctionBeginUser;
  *ok = PETSC_FALSE;
  PetscCall(PetscObjectTypeCompare((PetscObject)P, MATSHELL, &shell));
  if (shell) PetscCall(MatShellGetOperation(P, MATOP_MULT, &mult));
  if (mult != (void (*)(void))Interpolate) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatShellGetContext(P, &t));
  *g  = &t->g;
  *ok = t->gpu;
  PetscFunctionReturn(PETSC_SUCCESS);
}
