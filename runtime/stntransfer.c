/*
** stntransfer.c: the transfers between the grids of a hierarchy (interpolation, its transpose,
** injection) as shell matrices over stnmg_cuda.h's point functions, on the device where
** the vectors are. They replace PETSc's for grids that halve (2 nc - 1 or, periodic, 2 nc fine
** points per direction): PETSc's are AIJ matrices assembled on the host for every level at
** setup, which took longer than the whole solve on large grids, and applied through cuSPARSE.
** Elsewhere PETSc's own are used, and for the injection on several ranks where a rank has
** neither owned nor ghost fine points for its coarse points.
**
** On several ranks each rank computes its own points: the interpolation reads the coarse
** vector's ghosted local form (DMGlobalToLocal; PETSc's coarsening keeps the coarse points
** around a rank's fine points within its ghosts, checked in transfer_grid), and the
** restriction sums each rank's own fine points into the coarse ghosted local form, which
** DMLocalToGlobal adds up over the ranks. The injection reads each rank's own fine points: with
** PETSc's coarsening a rank owns the fine points of its coarse points on grids split evenly. On
** others (small grids split in slabs: the coarse ownership drifts a point from the fine) it reads
** the fine grid's ghosted local form, where the few it lacks lie off its box along one axis; else
** PETSc's injection, which builds a scatter on every rank.
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
  StnTransferGrid g;           /* the interpolation's layout (and, on one rank, every transfer's) */
  StnTransferGrid restr;       /* the restriction's: into the coarse ghosted local form on several ranks */
  StnTransferGrid scale;       /* the scale vector's: the coarse points of this rank */
  StnTransferGrid inj;         /* several ranks: the injection's, from this rank's fine points, */
  StnTransferGrid inj_ghosted; /*   or from its fine ghosted box (inj_near) */
  PetscBool       inj_own;     /* several ranks: every rank owns the fine points it injects, or */
  PetscBool       inj_near;    /*   has them in its fine ghosts, off its box along one axis only (a
                                  star stencil's ghosts have no corners) */
  PetscBool       gpu;         /* the vectors live in device memory */
  PetscBool       ranks;       /* several ranks: the layouts are a rank's */
  DM              dmf;         /* several ranks: the fine grid (the injection's ghosts), */
  DM              dmc;         /*   the coarse grid, and */
  DM              coarse;      /*   its twin with a box stencil, for its ghosted local vectors (a
                                  star stencil's lack the corners), made at the first product: the
                                  fused V-cycle (stnmgcycle.c) never needs it, and making it costs
                                  a DMSetUp on every rank */
} Transfer;

static PetscErrorCode (*petsc_interpolation)(DM, DM, Mat *, Vec *);
static PetscErrorCode (*petsc_injection)(DM, DM, Mat *);

PetscErrorCode StnDMDABox(DM da, PetscBool ghosts, int s[3], int m[3])
{
  PetscInt dim, st[3] = {0, 0, 0}, sz[3] = {1, 1, 1};

  PetscFunctionBeginUser;
  PetscCall(DMGetDimension(da, &dim));
  if (ghosts) PetscCall(DMDAGetGhostCorners(da, &st[0], &st[1], &st[2], &sz[0], &sz[1], &sz[2]));
  else PetscCall(DMDAGetCorners(da, &st[0], &st[1], &st[2], &sz[0], &sz[1], &sz[2]));
  for (int d = 0; d < 3; d++) s[d] = d < dim ? (int)st[d] : 0, m[d] = d < dim ? (int)sz[d] : 1;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* *box: dmc itself when its stencil is a box, else its twin with a box stencil of the same width:
   the same grid, ranks, ownership and vector type. */
static PetscErrorCode box_twin(DM dmc, DM *box)
{
  PetscInt         dim, M, N, P, m, n, p, dof, s;
  DMBoundaryType   bt[3];
  DMDAStencilType  st;
  const PetscInt  *lx, *ly, *lz;
  VecType          vtype;

  PetscFunctionBeginUser;
  PetscCall(DMDAGetInfo(dmc, &dim, &M, &N, &P, &m, &n, &p, &dof, &s, &bt[0], &bt[1], &bt[2], &st));
  if (st == DMDA_STENCIL_BOX) {
    PetscCall(PetscObjectReference((PetscObject)dmc));
    *box = dmc;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(DMDAGetOwnershipRanges(dmc, &lx, &ly, &lz));
  PetscCall(DMDACreate(PetscObjectComm((PetscObject)dmc), box));
  PetscCall(DMSetDimension(*box, dim));
  PetscCall(DMDASetSizes(*box, M, N, P));
  PetscCall(DMDASetNumProcs(*box, m, n, p));
  PetscCall(DMDASetOwnershipRanges(*box, lx, ly, lz));
  PetscCall(DMDASetBoundaryType(*box, bt[0], bt[1], bt[2]));
  PetscCall(DMDASetDof(*box, dof));
  PetscCall(DMDASetStencilType(*box, DMDA_STENCIL_BOX));
  PetscCall(DMDASetStencilWidth(*box, s));
  PetscCall(DMGetVecType(dmc, &vtype));
  PetscCall(DMSetVecType(*box, vtype));
  PetscCall(DMSetUp(*box));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Several ranks: the layouts of this rank's transfers (stnmg_cuda.h), and whether the coarse
   points its fine points interpolate from all lie in its coarse ghosted box. */
static PetscErrorCode rank_layouts(DM dmc, DM dmf, PetscInt dim, Transfer *t, PetscBool *ok)
{
  int fs[3], fm[3], gs[3], gm[3], cs[3], cm[3], fgs[3], fgm[3], off_axes = 0;

  PetscFunctionBeginUser;
  PetscCall(StnDMDABox(dmf, PETSC_FALSE, fs, fm));
  PetscCall(StnDMDABox(dmf, PETSC_TRUE, fgs, fgm));
  PetscCall(StnDMDABox(dmc, PETSC_TRUE, gs, gm));
  PetscCall(StnDMDABox(dmc, PETSC_FALSE, cs, cm));
  for (int d = 0; d < 3; d++) {
    const int first = fs[d] / 2, last = (fs[d] + fm[d] - 1 + 1) / 2; /* the coarse points fine [fs, fs + fm) reads */
    if (fm[d] > 0 && (first < gs[d] || last >= gs[d] + gm[d])) *ok = PETSC_FALSE;
    t->g.fs[d] = t->restr.fs[d] = fs[d], t->g.fm[d] = t->restr.fm[d] = fm[d];
    t->g.cs[d] = t->restr.cs[d] = t->restr.os[d] = gs[d], t->g.cm[d] = t->restr.cm[d] = t->restr.om[d] = gm[d];
    t->g.os[d] = fs[d], t->g.om[d] = fm[d];
    t->scale.cs[d] = t->scale.os[d] = cs[d], t->scale.cm[d] = t->scale.om[d] = cm[d];
  }
  t->inj      = t->inj_ghosted = t->scale;
  t->inj_own  = PETSC_TRUE;
  t->inj_near = PETSC_TRUE;
  for (int d = 0; d < 3; d++) {
    t->inj.fs[d] = fs[d], t->inj.fm[d] = fm[d];
    t->inj_ghosted.fs[d] = fgs[d], t->inj_ghosted.fm[d] = fgm[d];
    if (d >= dim || cm[d] == 0) continue;
    const int first = 2 * cs[d], last = 2 * (cs[d] + cm[d] - 1); /* the fine points of this rank's coarse points */
    if (first < fs[d] || last >= fs[d] + fm[d]) t->inj_own = PETSC_FALSE, off_axes++;
    if (first < fgs[d] || last >= fgs[d] + fgm[d]) t->inj_near = PETSC_FALSE;
  }
  if (off_axes > 1) t->inj_near = PETSC_FALSE;
  t->g.wrap = t->restr.wrap = t->scale.wrap = t->inj.wrap = t->inj_ghosted.wrap = 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The pair's layouts, when the fine grid halves into the coarse one; else *ok false. */
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
  *ok      = PETSC_TRUE;
  t->g.dim = (int)dim;
  t->g.dof = (int)dof;
  for (int d = 0; d < 3; d++) {
    t->g.periodic[d] = d < dim && bt[d] == DM_BOUNDARY_PERIODIC;
    t->g.nf[d]       = d < dim ? (int)nf[d] : 1;
    t->g.nc[d]       = d < dim ? (int)nc[d] : 1;
    if (d < dim && nf[d] != (t->g.periodic[d] ? 2 * nc[d] : 2 * nc[d] - 1)) *ok = PETSC_FALSE;
  }
  stn_transfer_whole(&t->g, 1);
  t->restr = t->scale = t->g;
  stn_transfer_whole(&t->restr, 0);
  stn_transfer_whole(&t->scale, 0);
  if (size > 1 && *ok) {
    t->ranks = PETSC_TRUE;
    t->dmc   = dmc;
    t->dmf   = dmf;
    PetscCall(PetscObjectReference((PetscObject)dmc));
    PetscCall(PetscObjectReference((PetscObject)dmf));
    PetscCall(rank_layouts(dmc, dmf, dim, t, ok)); /* the twin's ghosted box is dmc's */
    int all[3] = {*ok ? 1 : 0, t->inj_own ? 1 : 0, t->inj_near ? 1 : 0}; /* ours on every rank, or PETSc's on every rank */
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, all, 3, MPI_INT, MPI_LAND, PetscObjectComm((PetscObject)dmf)));
    *ok         = all[0] ? PETSC_TRUE : PETSC_FALSE;
    t->inj_own  = all[1] ? PETSC_TRUE : PETSC_FALSE;
    t->inj_near = all[2] ? PETSC_TRUE : PETSC_FALSE;
  }
  PetscCall(DMGetVecType(dmf, &vtype));
  PetscCall(PetscStrbeginswith(vtype, "stncuda", &t->gpu));
  if (!t->gpu) PetscCall(PetscStrendswith(vtype, "cuda", &t->gpu));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* y (+)= op(x) for the layout g, on the arrays (device or host). */
static PetscErrorCode transfer_arrays(const Transfer *t, TransferKind kind, const StnTransferGrid *g, const PetscScalar *x, PetscScalar *y, int add)
{
  const PetscLogDouble flops = kind == INJECT ? 0 : 3.0 * (1 << g->dim) * g->dof * g->om[0] * g->om[1] * g->om[2];

  PetscFunctionBeginUser;
  (void)t;
#if defined(PETSC_HAVE_CUDA)
  if (t->gpu) {
    int rc;

    PetscCall(PetscLogGpuTimeBegin());
    rc = kind == INTERPOLATE ? StnTransferInterpolateCUDA(g, add, x, y) : kind == RESTRICT ? StnTransferRestrictCUDA(g, add, x, y) : StnTransferInjectCUDA(g, x, y);
    PetscCall(PetscLogGpuTimeEnd());
    PetscCheck(rc == 0, PETSC_COMM_SELF, PETSC_ERR_LIB, "the grid transfer kernel failed: %s", StnCUDALastError());
    PetscCall(PetscLogGpuFlops(flops));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
#endif
  for (int k = g->os[2]; k < g->os[2] + g->om[2]; k++)
    for (int j = g->os[1]; j < g->os[1] + g->om[1]; j++)
      for (int i = g->os[0]; i < g->os[0] + g->om[0]; i++) {
        if (kind == INTERPOLATE) stn_transfer_interpolate_point(g, g->dof, 0, g->dof, add, i, j, k, x, y);
        else if (kind == RESTRICT) stn_transfer_restrict_point(g, g->dof, 0, g->dof, add, i, j, k, x, y);
        else stn_transfer_inject_point(g, i, j, k, x, y);
      }
  PetscCall(PetscLogFlops(flops));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* y (+)= op(x) for vectors x and y where t's vectors live; y's array written only, unless add. */
static PetscErrorCode transfer_vecs(const Transfer *t, TransferKind kind, const StnTransferGrid *g, Vec x, Vec y, int add)
{
  const PetscScalar *xa;
  PetscScalar       *ya;

  PetscFunctionBeginUser;
#if defined(PETSC_HAVE_CUDA)
  if (t->gpu) {
    PetscCall(VecCUDAGetArrayRead(x, &xa));
    if (add) PetscCall(VecCUDAGetArray(y, &ya));
    else PetscCall(VecCUDAGetArrayWrite(y, &ya));
    PetscCall(transfer_arrays(t, kind, g, xa, ya, add));
    if (add) PetscCall(VecCUDARestoreArray(y, &ya));
    else PetscCall(VecCUDARestoreArrayWrite(y, &ya));
    PetscCall(VecCUDARestoreArrayRead(x, &xa));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
#endif
  PetscCall(VecGetArrayRead(x, &xa));
  if (add) PetscCall(VecGetArray(y, &ya));
  else PetscCall(VecGetArrayWrite(y, &ya));
  PetscCall(transfer_arrays(t, kind, g, xa, ya, add));
  if (add) PetscCall(VecRestoreArray(y, &ya));
  else PetscCall(VecRestoreArrayWrite(y, &ya));
  PetscCall(VecRestoreArrayRead(x, &xa));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* out (+)= op(in), out's array written only, unless add. On several ranks the interpolation
   reads the coarse vector's ghosted form, and the restriction sums the ranks' parts. */
static PetscErrorCode apply(Mat A, TransferKind kind, Vec in, Vec out, int add)
{
  Transfer *t;
  Vec       local;

  PetscFunctionBeginUser;
  PetscCall(MatShellGetContext(A, &t));
  if (!t->ranks) {
    PetscCall(transfer_vecs(t, kind, kind == INTERPOLATE ? &t->g : &t->restr, in, out, add)); /* the restriction's layout: coarse output */
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (kind == INJECT && t->inj_own) { /* from this rank's own fine points */
    PetscCall(transfer_vecs(t, kind, &t->inj, in, out, 0));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (kind == INJECT) { /* some from the fine ghosts: the fine grid's exchange, device to device */
    PetscCall(DMGetLocalVector(t->dmf, &local));
    PetscCall(DMGlobalToLocalBegin(t->dmf, in, INSERT_VALUES, local));
    PetscCall(DMGlobalToLocalEnd(t->dmf, in, INSERT_VALUES, local));
    PetscCall(transfer_vecs(t, kind, &t->inj_ghosted, local, out, 0));
    PetscCall(DMRestoreLocalVector(t->dmf, &local));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (!t->coarse) PetscCall(box_twin(t->dmc, &t->coarse));
  PetscCall(DMGetLocalVector(t->coarse, &local));
  if (kind == INTERPOLATE) {
    PetscCall(DMGlobalToLocalBegin(t->coarse, in, INSERT_VALUES, local));
    PetscCall(DMGlobalToLocalEnd(t->coarse, in, INSERT_VALUES, local));
    PetscCall(transfer_vecs(t, kind, &t->g, local, out, add));
  } else { /* RESTRICT: every point of the ghosted box written, then the ranks' parts added up */
    PetscCall(transfer_vecs(t, kind, &t->restr, in, local, 0));
    if (!add) PetscCall(VecZeroEntries(out));
    PetscCall(DMLocalToGlobalBegin(t->coarse, local, ADD_VALUES, out));
    PetscCall(DMLocalToGlobalEnd(t->coarse, local, ADD_VALUES, out));
  }
  PetscCall(DMRestoreLocalVector(t->coarse, &local));
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
  PetscCall(DMDestroy(&t->coarse));
  PetscCall(DMDestroy(&t->dmc));
  PetscCall(DMDestroy(&t->dmf));
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
  if (!ok || (t->ranks && !interpolation && !t->inj_own && !t->inj_near)) { /* PETSc's */
    if (ok) PetscCall(PetscInfo(dmf, "PETSc's injection: a rank has neither owned nor ghost fine points for some of its coarse points\n"));
    PetscCall(DMDestroy(&t->dmc));
    PetscCall(DMDestroy(&t->dmf));
    PetscCall(PetscFree(t));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  const PetscInt nf = (PetscInt)t->g.dof * t->g.nf[0] * t->g.nf[1] * t->g.nf[2], nc = (PetscInt)t->g.dof * t->g.nc[0] * t->g.nc[1] * t->g.nc[2];
  const PetscInt rows = interpolation ? nf : nc, cols = interpolation ? nc : nf;
  Vec            vf, vc;
  PetscInt       mf, mc;
  PetscCall(DMGetGlobalVector(dmf, &vf));
  PetscCall(DMGetGlobalVector(dmc, &vc));
  PetscCall(VecGetLocalSize(vf, &mf));
  PetscCall(VecGetLocalSize(vc, &mc));
  PetscCall(DMRestoreGlobalVector(dmf, &vf));
  PetscCall(DMRestoreGlobalVector(dmc, &vc));
  PetscCall(MatCreateShell(PetscObjectComm((PetscObject)out), interpolation ? mf : mc, interpolation ? mc : mf, rows, cols, t, A));
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
    PetscCheck(StnTransferRScaleCUDA(&t->scale, c) == 0, PETSC_COMM_SELF, PETSC_ERR_LIB, "the grid transfer kernel failed: %s", StnCUDALastError());
    PetscCall(VecCUDARestoreArrayWrite(*scale, &c));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
#endif
  const StnTransferGrid *g = &t->scale;
  PetscCall(VecGetArrayWrite(*scale, &c));
  for (int k = g->os[2]; k < g->os[2] + g->om[2]; k++)
    for (int j = g->os[1]; j < g->os[1] + g->om[1]; j++)
      for (int i = g->os[0]; i < g->os[0] + g->om[0]; i++) stn_transfer_rscale_point(g, i, j, k, c);
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

PetscErrorCode StnTransferGetGrid(Mat P, const StnTransferGrid **interpolate, const StnTransferGrid **restrict_, PetscBool *whole, PetscBool *ok)
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
  *interpolate = &t->g;
  *restrict_   = &t->restr;
  *whole       = (PetscBool)!t->ranks;
  *ok          = t->gpu; /* the fused cycle's transfers: on the device */
  PetscFunctionReturn(PETSC_SUCCESS);
}
