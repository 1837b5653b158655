/*
** stnmgcycle.c: PCMG's V-cycle as one sequence of fused kernels on the GPU (stnmg.h,
** StnPCMGUseFusedCycle). PCMG still builds and owns everything: the levels and their operators,
** the transfers, the smoothers and their options, the coarse solve. Only its PCApply is
** replaced, by one that runs the cycle with stnmgcycle_cuda.h's steps when the setup is one
** they compute, and otherwise calls PCMG's own:
**   - a multiplicative V-cycle, one per apply, no compatible relaxation;
**   - on every level above the coarsest, one KSP for both smoothings, KSPCHEBYSHEV of the first
**     kind with stnmg.c's eigenvalue bounds, no norms, PCJACOBI (the diagonal, not its absolute
**     value), and the operator and the preconditioning matrix the same SG-DIA matrix in device
**     memory; with -stn_operator matfree every level's products run without the matrix
**     (stnmatfree.h: the finest level's operator, the coarser levels' twins), the SG-DIA matrix
**     preconditioning;
**   - stencilc's interpolations (stntransfer.c) between the levels, on the device.
** The coarse solve is whatever KSP PCMG has there (KSPSolve).
**
** The cycle is PETSc's step for step (PCMGMCycle_Private, KSPSolve_Chebyshev_FirstKind,
** PCApply_Jacobi): the same polynomial from the same bounds, the same transfers, so the Krylov
** counts are PCMG's (tests/solve, gpu-check.sh's multigrid section). What differs is the
** passes over memory: each Chebyshev step is one kernel (PETSc: MatMult, VecAYPX,
** VecPointwiseMult, VecAXPBYPCZ, with three vectors written in between), a smoothing from a zero
** guess skips the product with zero and the zeroing, and the residual is one kernel. Per level
** and cycle with two smoothing steps: 5 launches and 5 passes over the matrix (PCMG: about 25
** operations and 6 products).
**
** On several ranks (one node, stnhalo.h) each rank runs the same cycle on its own points: a
** product, the restriction and the interpolation read the ghosts of their input, which a device
** exchange fills just before (6 per level and cycle with two smoothing steps), and no step waits
** on the host. The restriction computes each owned coarse point from the fine ghosted array, the
** same sum in the same order as on one rank. The coarse solve gathers the coarsest grid's vector
** on every rank by the same kind of exchange and multiplies it by the dense inverse there (each
** rank holds the whole one, stnmg.c), so the cycle has no host wait at all. Where the exchange
** cannot be set up, PCMG's own apply runs; where the gather cannot, PCMG's coarse KSP does.
*/
#include "stnmg.h"

#if defined(PETSC_HAVE_CUDA)
  #include <petsc/private/pcimpl.h>   /* pc->ops->apply: the one entry replaced */
  #include <petsc/private/pcmgimpl.h> /* the levels PCMG built */

  #include "sgdia.h"
  #include "stnhalo.h"
  #include "stnmatfree.h"
  #include "stngmres_cuda.h" /* STN_GMRES_REPORT_SETS */
  #include "stnmgcycle_cuda.h"

/* One level above the coarsest, as the cycle needs it. */
typedef struct {
  const StnBox          *box;    /* the operator's layout and device values */
  const PetscScalar     *A;
  Mat                    mf;     /* or the operator without its matrix (stnmatfree.h), box its P's */
  Vec                    dinv;   /* 1 / its diagonal */
  const StnTransferGrid *grid;   /* this level and the next coarser one: the interpolation's layout */
  const StnTransferGrid *rgrid;  /*   and the restriction's */
  StnTransferGrid        rranks; /* several ranks: the restriction from the fine ghosted array into
                                    the owned coarse points (rgrid is &rranks then) */
  StnHalo                halo;   /* several ranks: the exchange of this level's ghosts (level 0's too) */
  PetscObjectId          halo_dm;
  PetscInt               steps;  /* Chebyshev steps per smoothing */
  PetscReal              emax, emin;
  PetscObjectId          id[2];  /* the operator and the interpolation the above came from */
  PetscObjectState       state;  /* and the operator's state then */
} Level;

typedef struct {
  PetscErrorCode (*apply_mg)(PC, Vec, Vec); /* PCMG's */
  PetscInt  nlevels;
  Level    *level;
  PetscBool ready; /* the levels match the operators' states and the fused cycle applies */
  MPI_Comm    comm;
  PetscMPIInt size;
  /* several ranks: the coarse solve on the device (see the top), or gather NULL */
  StnHalo                gather;
  const StnDenseInverse *coarse_inv;
  PetscInt               coarse_rstart, coarse_nlocal, coarse_n;
  PetscScalar           *coarse_y; /* inverse times the whole vector, on the device */
  /* -stn_mg_profile: each cycle timed on the GPU, against the bytes its steps move */
  PetscBool profile;
  PetscInt  cycles;
  double    ms, bytes, fine_bytes;
} Fused;

/* The bytes per row the operator's product reads besides the vectors: its matrix row, or the
   state the product without the matrix computes the row from. */
static double operator_bytes(const Level *lv) { return lv->mf ? 8.0 : 8.0 * lv->box->nsten * lv->box->dof; }

/* The bytes one smoothing of lv moves (the rooflines of stnmgcycle_cuda.h), step by step as
   smooth() takes them. */
static double smooth_bytes(const Level *lv, PetscBool zero)
{
  const double rows = (double)lv->box->dof * lv->box->xm * lv->box->ym * lv->box->zm, A = operator_bytes(lv);
  PetscBool    prev_zero = zero, in_x = lv->steps == 1;
  double       b = zero ? 24 : A + 32 + (in_x ? 16 : 0);

  for (PetscInt i = 1; i < lv->steps; i++) {
    b += A + 32 + (prev_zero ? 0 : 8);
    prev_zero = PETSC_FALSE;
    in_x      = (PetscBool)!in_x;
  }
  if (lv->steps > 1 && !in_x) b += 16;
  return b * rows;
}

/* The bytes of one cycle on level lv (its part; the coarser levels count their own): the two
   smoothings, the residual, the transfers to and from the next coarser grid. */
static double level_bytes(const Level *lv)
{
  const double rows = (double)lv->box->dof * lv->box->xm * lv->box->ym * lv->box->zm;
  const double coarse = (double)lv->rgrid->dof * lv->rgrid->om[0] * lv->rgrid->om[1] * lv->rgrid->om[2];

  return smooth_bytes(lv, PETSC_TRUE) + smooth_bytes(lv, PETSC_FALSE) + (operator_bytes(lv) + 24) * rows + 24 * rows + 16 * coarse;
}

/* Whether level l's smoother is one the fused steps compute; its operator's layout if so. */
static PetscErrorCode smoother_fits(PC_MG_Levels *mgl, Level *lv, PetscBool *fits)
{
  Mat              A, P;
  PC               pc;
  PetscBool        match;
  KSPChebyshevKind kind;
  KSPNormType      norm;
  PCJacobiType     jtype;

  PetscFunctionBeginUser;
  *fits = PETSC_FALSE;
  if (mgl->smoothu != mgl->smoothd || mgl->cr || mgl->cycles != 1) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscObjectTypeCompare((PetscObject)mgl->smoothd, KSPCHEBYSHEV, &match));
  if (!match) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(KSPChebyshevGetKind(mgl->smoothd, &kind));
  PetscCall(KSPGetNormType(mgl->smoothd, &norm));
  if (kind != KSP_CHEBYSHEV_FIRST || norm != KSP_NORM_NONE) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(KSPGetPC(mgl->smoothd, &pc));
  PetscCall(PetscObjectTypeCompare((PetscObject)pc, PCJACOBI, &match));
  if (!match) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PCJacobiGetType(pc, &jtype));
  PetscCall(PCJacobiGetUseAbs(pc, &match));
  if (jtype != PC_JACOBI_DIAGONAL || match) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(KSPGetOperators(mgl->smoothd, &A, &P));
  PetscCall(StnMatFreeOfLevel(A, P, &lv->mf)); /* the operator, or P's twin, without the matrix */
  if (A != P && lv->mf != A) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatSGDIAGetDeviceValues(P, &lv->box, &lv->A, fits));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Several ranks, level l >= 1 on grid daf over dac: the restriction's layout from daf's ghosted
   array into dac's owned points; *ok when those ghosts hold every fine point an owned coarse
   point reads (2I - 1 to 2I + 1), the interpolation reads dac's ghosted array, and the operator
   is laid out in daf's ghosted box. */
static PetscErrorCode rank_restriction(Level *lv, DM daf, DM dac, PetscBool *ok)
{
  StnTransferGrid *r = &lv->rranks;
  int              gs[3], gm[3];

  PetscFunctionBeginUser;
  *r = *lv->grid;
  PetscCall(StnDMDABox(daf, PETSC_TRUE, r->fs, r->fm));
  PetscCall(StnDMDABox(dac, PETSC_FALSE, r->cs, r->cm));
  PetscCall(StnDMDABox(dac, PETSC_TRUE, gs, gm));
  r->wrap   = 0;
  lv->rgrid = r;
  *ok       = (PetscBool)(lv->box->gxs == r->fs[0] && lv->box->gxm == r->fm[0]);
  for (int d = 0; d < 3; d++) {
    r->os[d] = r->cs[d], r->om[d] = r->cm[d];
    if (lv->grid->cs[d] != gs[d] || lv->grid->cm[d] != gm[d]) *ok = PETSC_FALSE;
    if (d >= r->dim || !r->cm[d]) continue;
    for (int end = 0; end < 2; end++)
      for (int o = -1; o <= 1; o += 2) {
        const int x = 2 * (end ? r->cs[d] + r->cm[d] - 1 : r->cs[d]) + o;
        if (!r->periodic[d] && (x < 0 || x >= r->nf[d])) continue;
        if (x < r->fs[d] || x >= r->fs[d] + r->fm[d]) *ok = PETSC_FALSE;
      }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Several ranks: the coarse solve on the device, when the coarse KSP is stnmg.c's dense inverse
   with a copy there: the gather (made again for a new coarsest grid) and the room for the
   product; else fc->gather stays NULL and the coarse KSP solves. The same on every rank. */
static PetscErrorCode prepare_coarse(PC pc, Fused *fc)
{
  PC_MG_Levels         **mgl = ((PC_MG *)pc->data)->levels;
  const StnDenseInverse *inv;
  PetscInt               rstart = 0, nlocal = 0, n;
  PetscBool              ok;
  int                    renew;

  PetscFunctionBeginUser;
  PetscCall(StnMGCoarseInverseDevice(mgl[0]->smoothd, &inv, &rstart, &nlocal, &ok));
  if (!ok) {
    PetscCall(StnHaloDestroy(&fc->gather));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  n     = StnDenseInverseRows(inv);
  renew = !fc->gather || fc->coarse_n != n || fc->coarse_rstart != rstart || fc->coarse_nlocal != nlocal;
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &renew, 1, MPI_INT, MPI_LOR, fc->comm));
  if (renew) {
    const char *why;

    PetscCall(StnHaloDestroy(&fc->gather));
    STN_CUDA_CALL(StnCUDAFree(fc->coarse_y));
    fc->coarse_y = NULL;
    PetscCall(StnHaloCreateGather(fc->comm, rstart, nlocal, n, &fc->gather, &why));
    if (fc->gather) STN_CUDA_CALL(StnCUDAMalloc((void **)&fc->coarse_y, sizeof(PetscScalar) * (size_t)n));
    fc->coarse_n = n, fc->coarse_rstart = rstart, fc->coarse_nlocal = nlocal;
  }
  fc->coarse_inv = inv;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Several ranks: every level's ghost exchange (made again for a new grid) and the restrictions'
   layouts; *ok, the same on every rank, says whether the cycle can run on them. */
static PetscErrorCode prepare_ranks(PC pc, Fused *fc, PetscBool *ok)
{
  PC_MG_Levels **mgl  = ((PC_MG *)pc->data)->levels;
  int            good = 1, made = 1; /* made: every halo so far, the same on every rank */

  PetscFunctionBeginUser;
  for (PetscInt l = 0; l < fc->nlevels && made; l++) {
    Level        *lv = &fc->level[l];
    DM            da, dac;
    PetscBool     isda, fits = PETSC_TRUE;
    PetscObjectId id;
    int           renew;

    PetscCall(KSPGetDM(mgl[l]->smoothd, &da));
    PetscCall(PetscObjectTypeCompare((PetscObject)da, DMDA, &isda));
    if (!isda) { /* PCMG without a grid hierarchy: the same on every rank */
      made = 0;
      break;
    }
    PetscCall(PetscObjectGetId((PetscObject)da, &id));
    renew = !lv->halo || lv->halo_dm != id;
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &renew, 1, MPI_INT, MPI_LOR, fc->comm));
    if (renew) {
      const char *why;

      PetscCall(StnHaloDestroy(&lv->halo));
      PetscCall(StnHaloCreate(da, &lv->halo, &why));
      lv->halo_dm = id;
      if (!lv->halo) PetscCall(PetscInfo(pc, "the fused V-cycle needs ghost exchanges on the device, which are not possible here (%s): PCMG's cycle runs\n", why));
    }
    if (!lv->halo) made = 0;
    if (l == 0 || !made) continue;
    PetscCall(KSPGetDM(mgl[l - 1]->smoothd, &dac));
    PetscCall(PetscObjectTypeCompare((PetscObject)dac, DMDA, &isda));
    if (isda) PetscCall(rank_restriction(lv, da, dac, &fits));
    good = good && isda && fits;
  }
  good = good && made;
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &good, 1, MPI_INT, MPI_LAND, fc->comm));
  *ok = good ? PETSC_TRUE : PETSC_FALSE;
  if (*ok) PetscCall(prepare_coarse(pc, fc));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode free_levels(Fused *fc)
{
  PetscFunctionBeginUser;
  for (PetscInt l = 0; l < fc->nlevels; l++) {
    PetscCall(VecDestroy(&fc->level[l].dinv));
    PetscCall(StnHaloDestroy(&fc->level[l].halo));
  }
  PetscCall(PetscFree(fc->level));
  fc->nlevels = 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Works out every level from the operators PCMG holds now; fc->ready says whether the fused
   cycle applies (on every rank alike: the checks that can differ between ranks are agreed on
   before the collective steps). The levels' eigenvalue estimates are queued together, each with
   its own report slots (set l), and then taken: a coarse level's estimate is mostly launches,
   which the finer levels' work then hides. */
static PetscErrorCode prepare(PC pc, Fused *fc)
{
  PC_MG         *mg  = (PC_MG *)pc->data;
  PC_MG_Levels **mgl = mg->levels;
  PetscInt       n   = mg->nlevels;
  PetscBool      all = PETSC_TRUE;
  int            fit = 1;

  PetscFunctionBeginUser;
  fc->ready = PETSC_FALSE;
  if (n < 2 || mg->am != PC_MG_MULTIPLICATIVE || mg->cyclesperpcapply != 1) PetscFunctionReturn(PETSC_SUCCESS);
  if (fc->nlevels != n) {
    PetscCall(free_levels(fc));
    PetscCall(PetscCalloc1(n, &fc->level));
    fc->nlevels = n;
  }
  for (PetscInt l = 1; l < n && fit; l++) {
    Level    *lv = &fc->level[l];
    PetscBool fits, whole = PETSC_FALSE;

    PetscCall(smoother_fits(mgl[l], lv, &fits));
    if (fits) PetscCall(StnTransferGetGrid(mgl[l]->interpolate, &lv->grid, &lv->rgrid, &whole, &fits));
    if (fits && mgl[l]->restrct != mgl[l]->interpolate) fits = PETSC_FALSE; /* a restriction of its own */
    if (fits && (whole != (fc->size == 1) || (fc->size > 1 && lv->mf))) fits = PETSC_FALSE; /* several ranks: matrices only */
    if (fits) PetscCall(KSPGetTolerances(mgl[l]->smoothd, NULL, NULL, NULL, &lv->steps));
    fit = fits && mgl[l]->r && lv->steps >= 1;
  }
  if (fc->size > 1) PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &fit, 1, MPI_INT, MPI_LAND, fc->comm));
  if (!fit) PetscFunctionReturn(PETSC_SUCCESS);
  if (fc->size > 1) {
    PetscBool ok;

    PetscCall(prepare_ranks(pc, fc, &ok));
    if (!ok) PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (n <= STN_GMRES_REPORT_SETS) /* else (2^31 points in a row) one at a time, with set 1 */
    for (PetscInt l = 1; l < n; l++) PetscCall(StnMGSmootherBoundsBegin(mgl[l]->smoothd, mgl[l]->r, (int)l, fc->level[l].halo));
  for (PetscInt l = 1; l < n; l++) {
    Level    *lv = &fc->level[l];
    Mat       P;
    PetscBool fits;

    if (n > STN_GMRES_REPORT_SETS) PetscCall(StnMGSmootherBoundsBegin(mgl[l]->smoothd, mgl[l]->r, 1, fc->level[l].halo));
    PetscCall(StnMGSmootherBoundsEnd(mgl[l]->smoothd, &lv->emax, &lv->emin, &fits));
    all = (PetscBool)(all && fits);
    if (!all) continue; /* every begun estimate ends */
    PetscCall(KSPGetOperators(mgl[l]->smoothd, NULL, &P));
    if (lv->dinv) { /* a refined grid's level (-snes_grid_sequence) is larger */
      PetscInt m, m_dinv;

      PetscCall(VecGetSize(mgl[l]->r, &m));
      PetscCall(VecGetSize(lv->dinv, &m_dinv));
      if (m != m_dinv) PetscCall(VecDestroy(&lv->dinv));
    }
    if (!lv->dinv) PetscCall(VecDuplicate(mgl[l]->r, &lv->dinv));
    PetscCall(MatGetDiagonal(P, lv->dinv));
    PetscCall(VecReciprocal(lv->dinv));
    PetscCall(PetscObjectGetId((PetscObject)P, &lv->id[0]));
    PetscCall(PetscObjectGetId((PetscObject)mgl[l]->interpolate, &lv->id[1]));
    PetscCall(PetscObjectStateGet((PetscObject)P, &lv->state));
  }
  if (fc->size > 1) {
    int a = all ? 1 : 0;

    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &a, 1, MPI_INT, MPI_LAND, fc->comm));
    all = a ? PETSC_TRUE : PETSC_FALSE;
  }
  fc->ready = all;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Whether an operator changed (a new Jacobian) since prepare, or the levels are new ones (a
   refined grid under -snes_grid_sequence: other matrices, maybe as many levels). */
static PetscErrorCode stale(PC pc, Fused *fc, PetscBool *changed)
{
  PC_MG *mg = (PC_MG *)pc->data;

  PetscFunctionBeginUser;
  *changed = (PetscBool)(fc->nlevels != mg->nlevels || !fc->level);
  for (PetscInt l = 1; l < fc->nlevels && !*changed; l++) {
    Mat              P;
    PetscObjectState state;
    PetscObjectId    id[2];

    PetscCall(KSPGetOperators(mg->levels[l]->smoothd, NULL, &P));
    PetscCall(PetscObjectStateGet((PetscObject)P, &state));
    PetscCall(PetscObjectGetId((PetscObject)P, &id[0]));
    PetscCall(PetscObjectGetId((PetscObject)mg->levels[l]->interpolate, &id[1]));
    *changed = (PetscBool)(state != fc->level[l].state || id[0] != fc->level[l].id[0] || id[1] != fc->level[l].id[1]);
  }
  if (fc->size > 1) { /* prepare is collective: every rank takes it when one does */
    int c = *changed ? 1 : 0;

    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &c, 1, MPI_INT, MPI_LOR, fc->comm));
    *changed = c ? PETSC_TRUE : PETSC_FALSE;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* y = alpha p + beta x + gamma d .* (b - A x) on level lv (stnmgcycle_cuda.h, StnMultArgs); on
   several ranks after the exchange of x's ghosts. */
static PetscErrorCode step(const Level *lv, const PetscScalar *x, const PetscScalar *b, const PetscScalar *d, const PetscScalar *p, PetscReal alpha, PetscReal beta, PetscReal gamma, PetscScalar *y)
{
  const PetscScalar *xg = NULL;

  PetscFunctionBeginUser;
  if (lv->mf) {
    const StnMultArgs m = {x, b, d, p, y, alpha, beta, gamma};

    PetscCall(StnMatFreeApply(lv->mf, &m));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (lv->halo) PetscCall(StnHaloExchange(lv->halo, x, &xg));
  STN_CUDA_CALL(StnMGStepCUDA(lv->box, lv->A, x, xg, b, d, p, alpha, beta, gamma, y));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Level lv's Chebyshev smoothing of A x = b (KSPSolve_Chebyshev_FirstKind, no norms): from x = 0
   when zero (x not read), else from x. t is work space of x's size. Result in x. */
static PetscErrorCode smooth(const Level *lv, const PetscScalar *b, PetscScalar *x, PetscScalar *t, PetscBool zero)
{
  const PetscScalar *d     = NULL;
  const PetscReal    scale = 2.0 / (lv->emax + lv->emin), alpha = 1.0 - scale * lv->emin;
  const PetscReal    mu = 1.0 / alpha, omegaprod = 2.0 / alpha;
  PetscReal          c0 = 1.0, c1 = mu;
  PetscScalar       *prev, *cur;
  PetscBool          prev_zero = zero;
  const long         n         = (long)lv->box->dof * lv->box->xm * lv->box->ym * lv->box->zm;

  PetscFunctionBeginUser;
  PetscCall(VecCUDAGetArrayRead(lv->dinv, &d));
  /* p1 = p0 + scale D^-1 (b - A p0), into x when it is the last step, else into t */
  cur = lv->steps == 1 ? x : t;
  if (zero) STN_CUDA_CALL(StnMGScaleCUDA(n, scale, d, b, cur));
  else {
    if (cur == x) { /* one step in place is not possible: the product reads x's neighbours */
      PetscCall(step(lv, x, b, d, NULL, 0.0, 1.0, scale, t));
      STN_CUDA_CALL(StnCUDAMemcpyDtoD(x, t, sizeof(PetscScalar) * (size_t)n));
    } else PetscCall(step(lv, x, b, d, NULL, 0.0, 1.0, scale, cur));
  }
  prev = cur == x ? t : x;
  for (PetscInt i = 1; i < lv->steps; i++) {
    const PetscReal c2 = 2.0 * mu * c1 - c0, omega = omegaprod * c1 / c2;

    /* p_new = (1 - omega) p_prev + omega p_cur + omega scale D^-1 (b - A p_cur), over p_prev */
    PetscCall(step(lv, cur, b, d, prev_zero ? NULL : prev, 1.0 - omega, omega, omega * scale, prev));
    prev_zero = PETSC_FALSE;
    PetscScalar *swap = prev;
    prev = cur, cur = swap;
    c0 = c1, c1 = c2;
  }
  if (cur != x) STN_CUDA_CALL(StnCUDAMemcpyDtoD(x, cur, sizeof(PetscScalar) * (size_t)n));
  PetscCall(VecCUDARestoreArrayRead(lv->dinv, &d));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The V-cycle from the finest level (b, x) down and back: PCMGMCycle_Private. */
static PetscErrorCode cycle(PC pc, Fused *fc, Vec b, Vec x)
{
  PC_MG         *mg  = (PC_MG *)pc->data;
  PC_MG_Levels **mgl = mg->levels;
  const PetscInt n   = mg->nlevels;

  PetscFunctionBeginUser;
  for (PetscInt l = n - 1; l >= 1; l--) { /* down: smooth from zero, residual, restrict */
    const Level       *lv = &fc->level[l];
    Vec                B = l == n - 1 ? b : mgl[l]->b, X = l == n - 1 ? x : mgl[l]->x;
    const PetscScalar *ba;
    PetscScalar       *xa, *ra, *bc;

    PetscCall(VecCUDAGetArrayRead(B, &ba));
    PetscCall(VecCUDAGetArrayWrite(X, &xa));
    PetscCall(VecCUDAGetArrayWrite(mgl[l]->r, &ra));
    PetscCall(smooth(lv, ba, xa, ra, PETSC_TRUE));
    PetscCall(step(lv, xa, ba, NULL, NULL, 0.0, 0.0, 1.0, ra)); /* r = b - A x */
    PetscCall(VecCUDAGetArrayWrite(mgl[l - 1]->b, &bc));
    if (lv->halo) {
      const PetscScalar *rg;

      PetscCall(StnHaloExchange(lv->halo, ra, &rg));
      STN_CUDA_CALL(StnTransferRestrictCUDA(lv->rgrid, 0, rg, bc));
    } else STN_CUDA_CALL(StnTransferRestrictCUDA(lv->rgrid, 0, ra, bc));
    PetscCall(VecCUDARestoreArrayWrite(mgl[l - 1]->b, &bc));
    PetscCall(VecCUDARestoreArrayWrite(mgl[l]->r, &ra));
    PetscCall(VecCUDARestoreArrayWrite(X, &xa));
    PetscCall(VecCUDARestoreArrayRead(B, &ba));
  }
  if (fc->gather) { /* several ranks: x = the owned rows of inverse times the gathered b */
    const PetscScalar *b0, *whole;
    PetscScalar       *x0;

    PetscCall(VecCUDAGetArrayRead(mgl[0]->b, &b0));
    PetscCall(StnHaloExchange(fc->gather, b0, &whole));
    STN_CUDA_CALL(StnDenseInverseApply(fc->coarse_inv, whole, fc->coarse_y));
    PetscCall(VecCUDARestoreArrayRead(mgl[0]->b, &b0));
    PetscCall(VecCUDAGetArrayWrite(mgl[0]->x, &x0));
    STN_CUDA_CALL(StnCUDAMemcpyDtoD(x0, fc->coarse_y + fc->coarse_rstart, sizeof(PetscScalar) * (size_t)fc->coarse_nlocal));
    PetscCall(VecCUDARestoreArrayWrite(mgl[0]->x, &x0));
  } else {
    PetscCall(VecZeroEntries(mgl[0]->x));
    PetscCall(KSPSolve(mgl[0]->smoothd, mgl[0]->b, mgl[0]->x));
    PetscCall(KSPCheckSolve(mgl[0]->smoothd, pc, mgl[0]->x));
  }
  for (PetscInt l = 1; l < n; l++) { /* up: interpolate and add, smooth */
    const Level       *lv = &fc->level[l];
    Vec                B = l == n - 1 ? b : mgl[l]->b, X = l == n - 1 ? x : mgl[l]->x;
    const PetscScalar *ba, *xc;
    PetscScalar       *xa, *ra;

    PetscCall(VecCUDAGetArrayRead(mgl[l - 1]->x, &xc));
    PetscCall(VecCUDAGetArray(X, &xa));
    if (fc->level[l - 1].halo) { /* the coarse points around the fine ones: ghosts too */
      const PetscScalar *xcg;

      PetscCall(StnHaloExchange(fc->level[l - 1].halo, xc, &xcg));
      STN_CUDA_CALL(StnTransferInterpolateCUDA(lv->grid, 1, xcg, xa));
    } else STN_CUDA_CALL(StnTransferInterpolateCUDA(lv->grid, 1, xc, xa));
    PetscCall(VecCUDARestoreArrayRead(mgl[l - 1]->x, &xc));
    PetscCall(VecCUDAGetArrayRead(B, &ba));
    PetscCall(VecCUDAGetArrayWrite(mgl[l]->r, &ra));
    PetscCall(smooth(lv, ba, xa, ra, PETSC_FALSE));
    PetscCall(VecCUDARestoreArrayWrite(mgl[l]->r, &ra));
    PetscCall(VecCUDARestoreArrayRead(B, &ba));
    PetscCall(VecCUDARestoreArray(X, &xa));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* -log_view: the levels' preparation after a new Jacobian (their eigenvalue estimates among it),
   and the fused cycles. */
static PetscLogEvent event_prepare, event_cycle;

static PetscErrorCode PCApply_StnMG(PC pc, Vec b, Vec x)
{
  PetscContainer container;
  Fused         *fc;
  PetscBool      changed;

  PetscFunctionBeginUser;
  PetscCall(PetscObjectQuery((PetscObject)pc, "StnFusedCycle", (PetscObject *)&container));
  PetscCall(PetscContainerGetPointer(container, (void **)&fc));
  PetscCall(stale(pc, fc, &changed));
  if (changed || !fc->ready) {
    PetscCall(PetscLogEventBegin(event_prepare, pc, 0, 0, 0));
    PetscCall(prepare(pc, fc));
    PetscCall(PetscLogEventEnd(event_prepare, pc, 0, 0, 0));
  }
  if (!fc->ready) PetscCall((*fc->apply_mg)(pc, b, x));
  else {
    PetscCall(PetscLogEventBegin(event_cycle, pc, b, x, 0));
    if (fc->profile) STN_CUDA_CALL(StnCUDAMark(4));
    PetscCall(cycle(pc, fc, b, x));
    if (fc->profile) {
      const StnTransferGrid *g      = fc->level[1].grid;
      const double           coarse = (double)g->dof * g->nc[0] * g->nc[1] * g->nc[2];
      float                  ms;

      STN_CUDA_CALL(StnCUDAMark(5));
      STN_CUDA_CALL(StnCUDASynchronize());
      STN_CUDA_CALL(StnCUDAMarksElapsed(4, 5, &ms));
      fc->ms += ms;
      fc->cycles++;
      fc->fine_bytes += level_bytes(&fc->level[fc->nlevels - 1]);
      for (PetscInt l = 1; l < fc->nlevels; l++) fc->bytes += level_bytes(&fc->level[l]);
      fc->bytes += 8.0 * coarse * (coarse + 2); /* the coarse solve's dense product, if it is ours */
    }
    PetscCall(PetscLogEventEnd(event_cycle, pc, b, x, 0));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode FusedDestroy(void **ctx)
{
  Fused *fc = (Fused *)*ctx;

  PetscFunctionBeginUser;
  if (fc->profile && fc->cycles)
    PetscCall(PetscPrintf(PETSC_COMM_SELF, "stnmg profile: %" PetscInt_FMT " V-cycles of %" PetscInt_FMT " levels, %.3f ms each on the GPU; byte model %.3f GB per cycle (finest level %.3f GB): %.0f GB/s\n",
                          fc->cycles, fc->nlevels, fc->ms / fc->cycles, fc->bytes / fc->cycles * 1e-9, fc->fine_bytes / fc->cycles * 1e-9, fc->bytes / (fc->ms * 1e-3) * 1e-9));
  PetscCall(free_levels(fc));
  PetscCall(StnHaloDestroy(&fc->gather));
  STN_CUDA_CALL(StnCUDAFree(fc->coarse_y));
  PetscCall(PetscFree(fc));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode StnPCMGUseFusedCycle(PC pc)
{
  Fused    *fc;
  PetscBool ismg;

  PetscFunctionBeginUser;
  PetscCall(PetscObjectTypeCompare((PetscObject)pc, PCMG, &ismg));
  if (!ismg || pc->ops->apply == PCApply_StnMG) PetscFunctionReturn(PETSC_SUCCESS);
  if (!event_cycle) {
    PetscCall(PetscLogEventRegister("StnMGPrepare", PC_CLASSID, &event_prepare));
    PetscCall(PetscLogEventRegister("StnMGCycle", PC_CLASSID, &event_cycle));
  }
  PetscCall(PetscNew(&fc));
  fc->apply_mg = pc->ops->apply;
  fc->comm     = PetscObjectComm((PetscObject)pc);
  PetscCallMPI(MPI_Comm_size(fc->comm, &fc->size));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-stn_mg_profile", &fc->profile, NULL));
  PetscCall(PetscObjectContainerCompose((PetscObject)pc, "StnFusedCycle", fc, FusedDestroy));
  pc->ops->apply = PCApply_StnMG;
  PetscFunctionReturn(PETSC_SUCCESS);
}
#endif
