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
**     (stnmatfree.h: the finest level's operator, the coarser levels' twins; on several ranks
**     their neighbours from the exchange), the SG-DIA matrix preconditioning;
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
** exchange fills just before (2 * steps + 2 per level and cycle), and no step waits on the host.
** They read a point's owned neighbours from the owned array and only the others from the
** exchange's array (split reads: StnHaloExchangeGhosts sends the ghosts alone and copies nothing
** else), the generated product without the matrix too (its NB()). The restriction computes each
** owned coarse point from the fine points around it, the same sum in the same order as on one
** rank. A split level whose product runs without the matrix has deep ghosts instead
** (stnmgdeep.h, -stn_mg_deep_ghosts): its vectors its own, in the owned box widened by some
** planes, an exchange before a smoothing, and each step computing the ghost rows the steps after
** it read (deep_down, deep_up). Where every split level has them, one exchange per level and
** cycle: the smoothing down starts deep enough to leave the smoothing up the iterate it reads,
** and the interpolation adds the correction there too, from the whole coarse grid or from a
** coarser level's smoothing up that ended as deep (deep_depths); else one before each smoothing.
**
** Below the split, the coarse grids of at most -stn_mg_redundant_unknowns unknowns, every rank
** holds the whole grid and computes the one-rank cycle there redundantly, with no exchange: on
** such a grid an exchange costs as much as the level's steps. After each new Jacobian their
** operators' values are gathered onto every rank (one exchange each, stnhalo.h's whole-grid
** gather) and their eigenvalue estimates run as one rank's; the coarsest grid's dense inverse is
** formed from its whole operator as on one rank. A cycle gathers the right side restricted
** across the split, and each rank interpolates its own fine points from the whole coarse grid.
** Every step sums as on one rank, so the Krylov counts are one rank's. Without a split the
** coarse solve gathers the coarsest grid's vector on every rank and multiplies it by stnmg.c's
** dense inverse there. Where an exchange cannot be set up, PCMG's own apply runs; where the
** gather cannot, PCMG's coarse KSP does.
*/
#include "stnmg.h"

#if defined(PETSC_HAVE_CUDA)
  #include <petsc/private/pcimpl.h>   /* pc->ops->apply: the one entry replaced */
  #include <petsc/private/pcmgimpl.h> /* the levels PCMG built */

  #include "sgdia.h"
  #include "stnhalo.h"
  #include "stnmatfree.h"
  #include "stnmgdeep.h"
  #include "stngmres_cuda.h" /* STN_GMRES_REPORT_SETS */
  #include "stnmgcycle_cuda.h"
  #include "stnvec_cuda.h" /* StnVecReciprocal */

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
  StnHalo                halo;   /* several ranks: the exchange of this level's ghosts, its grid's
                                    (StnDMGetExchange; level 0's too; none on a whole level) */
  PetscObjectId          halo_dm;
  DM                     halo_da; /* its grid, held while the cycle uses the grid's exchange */
  /* several ranks, a level below the split (see the top): held whole on every rank */
  PetscBool              whole;
  StnBox                 wbox;          /* its grid as one rank's: box is &wbox */
  StnHalo                values;        /* gathers the operator's values, each Jacobian: A */
  PetscObjectId          values_dm;     /*   on this grid */
  Vec                    wb, wx, wr;    /* its vectors (on this rank, the whole grid's) */
  Vec                    wdinv;         /* 1 / its diagonal, whole */
  StnTransferGrid        wgrid, wrgrid; /* the whole grids' transfers to the next coarser */
  /* several ranks, a split level whose product runs without the matrix: deep ghosts
     (stnmgdeep.h), its vectors its own; NULL where not */
  StnDeep               *deep;
  PetscInt               deep_units; /* their depth in stencil widths (deep_depths), */
  PetscInt               deep_in;    /* the smoothing up's iterate valid so many widths deep at its start */
  PetscBool              deep_exchange_up;  /* the smoothing up exchanges its iterate first */
  PetscObjectId          deep_dm;    /* the grid and the depth they were made, or refused, for */
  PetscInt               deep_made;
  PetscBool              deep_tried;
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
  /* several ranks: levels 0 to split - 1 held whole on every rank, or split 0 */
  PetscInt         split, redundant_unknowns;
  PetscBool        deep_ghosts; /* -stn_mg_deep_ghosts: stnmgdeep.h on the levels it serves */
  PetscObjectId    chain_refused; /* the finest grid for which a level was refused deep_depths' chain */
  StnHalo          to_whole;   /* gathers level split - 1's restricted right side */
  PetscObjectId    to_whole_dm;
  const PetscScalar *b_split;  /*   into here, each cycle */
  StnTransferGrid  split_grid; /* the interpolation from it, whole, to level split's owned points */
  StnDenseInverse *whole_inv;  /* the coarsest grid's inverse, formed from its whole operator */
  /* -stn_mg_profile: each cycle timed on the GPU, against the bytes its steps move */
  PetscBool profile;
  PetscInt  cycles;
  double    ms, bytes, fine_bytes;
  double    host_ms;  /* the host's time to queue a cycle */
  double   *level_ms; /* by level: its part of a cycle on the GPU (down and up), the coarsest's solve */
  double   *exchange_us; /* several ranks, by level: one exchange alone on the GPU (0: none) */
} Fused;

/* -stn_mg_profile: the marks between a cycle's parts on the GPU's timeline, k from 0 (the start)
   to 2 n - 1 (the end); none where the levels are too many for the marks. */
  #define PROFILE_MARK0 8
/* -log_view: the levels' preparation after a new Jacobian, and within it the whole levels'
   gathers (StnMGWhole), the split levels' exchanges (StnMGHalos) and the eigenvalue estimates
   (StnMGBounds); the fused cycles. */
static PetscLogEvent event_prepare, event_whole, event_halos, event_bounds, event_cycle;

static PetscErrorCode profile_mark(const Fused *fc, PetscInt k)
{
  PetscFunctionBeginUser;
  if (fc->profile && PROFILE_MARK0 + 2 * fc->nlevels <= STN_CUDA_MARKS) STN_CUDA_CALL(StnCUDAMark((int)(PROFILE_MARK0 + k)));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* After a cycle has run: adds each level's part of it to level_ms. */
static PetscErrorCode profile_levels(Fused *fc)
{
  const PetscInt n = fc->nlevels;

  PetscFunctionBeginUser;
  if (PROFILE_MARK0 + 2 * n > STN_CUDA_MARKS) PetscFunctionReturn(PETSC_SUCCESS);
  if (!fc->level_ms) PetscCall(PetscCalloc1(n, &fc->level_ms));
  for (PetscInt k = 1; k < 2 * n; k++) { /* down on n - k, the coarse solve at k = n, up on k - n */
    const PetscInt l = k < n ? n - k : k - n;
    float          ms;

    STN_CUDA_CALL(StnCUDAMarksElapsed((int)(PROFILE_MARK0 + k - 1), (int)(PROFILE_MARK0 + k), &ms));
    fc->level_ms[l] += ms;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Several ranks, once: each split level's exchange alone (with deep ghosts, theirs), 100 in a
   row timed on the GPU between marks after a barrier, into exchange_us. */
static PetscErrorCode profile_exchanges(PC pc, Fused *fc)
{
  PC_MG_Levels **mgl = ((PC_MG *)pc->data)->levels;

  PetscFunctionBeginUser;
  PetscCall(PetscCalloc1(fc->nlevels, &fc->exchange_us));
  for (PetscInt l = 1; l < fc->nlevels; l++) {
    const Level       *lv = &fc->level[l];
    const PetscScalar *x, *xg;
    float              ms;

    if (!lv->halo || lv->whole) continue;
    PetscCall(VecCUDAGetArrayRead(mgl[l]->r, &x)); /* any values: only the time counts */
    STN_CUDA_CALL(StnCUDASynchronize());
    PetscCallMPI(MPI_Barrier(fc->comm));
    STN_CUDA_CALL(StnCUDAMark(6));
    for (int i = 0; i < 100; i++) { /* as the level's steps take it */
      if (lv->deep) PetscCall(StnHaloExchangeGhostsInto(lv->deep->halo, lv->deep->x[0] + lv->deep->offset, lv->deep->x[0])); /* scratch before a cycle */
      else PetscCall(StnHaloExchangeGhosts(lv->halo, x, &xg));
    }
    STN_CUDA_CALL(StnCUDAMark(7));
    STN_CUDA_CALL(StnCUDASynchronize());
    STN_CUDA_CALL(StnCUDAMarksElapsed(6, 7, &ms));
    fc->exchange_us[l] = 10.0 * ms;
    PetscCall(VecCUDARestoreArrayRead(mgl[l]->r, &x));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

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

/* Several ranks: the ghost exchange of every level split over the ranks (from fc->split up;
   made again for a new grid) and the restrictions' layouts; *ok, the same on every rank, says
   whether the cycle can run on them. */
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

    if (l < fc->split) { /* whole on every rank: no exchange */
      lv->halo = NULL;
      PetscCall(DMDestroy(&lv->halo_da));
      continue;
    }
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

      PetscCall(StnHaloDestroy(&lv->values)); /* a new grid: its whole copy's gather too */
      PetscCall(DMDestroy(&lv->halo_da));
      PetscCall(PetscObjectReference((PetscObject)da));
      lv->halo_da = da;
      PetscCall(StnDMGetExchange(da, &lv->halo, &why));
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
  if (*ok && !fc->split) PetscCall(prepare_coarse(pc, fc));
  if (fc->split) PetscCall(StnHaloDestroy(&fc->gather));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The split levels' deep ghosts (stnmgdeep.h), in stencil widths, s a level's Chebyshev steps.
   chain (every split level above level 0 has them): no smoothing up exchanges. It starts from the
   smoothing down's iterate plus the interpolated correction, both valid in = out + s widths past
   the owned box, and ends valid out widths past it: 0 on the finest level, and on a coarser one
   what the next finer level's interpolation reads for its in, ceil(in / 2) + 1 (a coarse point per
   two fine ones, and the one beyond). The smoothing down starts max(in, 2) + s - 1 widths deep
   and ends valid max(in, 2) deep (its residual reads 2). Level split's correction comes whole;
   only level 1 above a split level 0 (no whole levels: level 0's rows are its owner's) exchanges,
   its box max(in, s + 1) deep. Otherwise each box is s + 1 widths deep and each smoothing up
   exchanges (in s + 1, out 1). The levels share one stencil width (DMCoarsen keeps it). */
static void deep_depths(Fused *fc, PetscBool chain)
{
  PetscInt out = 0;

  for (PetscInt l = fc->nlevels - 1; l >= 1 && !fc->level[l].whole; l--) {
    Level         *lv = &fc->level[l];
    const PetscInt s  = lv->steps;

    if (chain) {
      lv->deep_in          = out + s;
      lv->deep_exchange_up = (PetscBool)(l == 1 && !fc->split);
      lv->deep_units       = lv->deep_exchange_up ? PetscMax(lv->deep_in, s + 1) : PetscMax(lv->deep_in, 2) + s - 1;
      out                  = (lv->deep_in + 1) / 2 + 1;
    } else {
      lv->deep_in = lv->deep_units = s + 1;
      lv->deep_exchange_up = PETSC_TRUE;
    }
  }
}

/* Several ranks, after the levels' diagonals: deep ghosts (stnmgdeep.h) on every split level
   whose product runs without the matrix, made again for a new grid or depth, and this
   Jacobian's state and diagonal exchanged into them. The same levels on every rank. Where the
   chain of deep_depths is wanted and a level is refused them, the others are made again without,
   and so for these grids from then on. */
static PetscErrorCode prepare_deep(PC pc, Fused *fc)
{
  PC_MG_Levels **mgl   = ((PC_MG *)pc->data)->levels;
  int            chain = 1, *want;
  DM             finest;
  PetscObjectId  finest_id;

  PetscFunctionBeginUser;
  PetscCall(KSPGetDM(mgl[fc->nlevels - 1]->smoothd, &finest));
  PetscCall(PetscObjectGetId((PetscObject)finest, &finest_id));
  if (fc->chain_refused == finest_id) chain = 0; /* not again for these grids */
  PetscCall(PetscMalloc1(fc->nlevels, &want));
  for (PetscInt l = 1; l < fc->nlevels; l++) {
    Level *lv = &fc->level[l];

    want[l] = fc->deep_ghosts && !lv->whole && lv->mf && lv->halo;
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &want[l], 1, MPI_INT, MPI_LAND, fc->comm));
    if (!lv->whole && !want[l]) chain = 0;
    if (!want[l]) { /* no deep ghosts here */
      PetscCall(StnDeepDestroy(&lv->deep));
      lv->deep_tried = PETSC_FALSE;
    }
  }
  for (int pass = 0; pass < 2; pass++) {
    int made = 1;

    deep_depths(fc, (PetscBool)chain);
    for (PetscInt l = 1; l < fc->nlevels; l++) {
      Level        *lv = &fc->level[l];
      DM            da;
      PetscObjectId id;
      int           renew;

      if (!want[l]) continue;
      PetscCall(KSPGetDM(mgl[l]->smoothd, &da));
      PetscCall(PetscObjectGetId((PetscObject)da, &id));
      renew = !lv->deep_tried || lv->deep_dm != id || lv->deep_made != lv->deep_units; /* not again where refused */
      PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &renew, 1, MPI_INT, MPI_LOR, fc->comm));
      if (renew) {
        const char *why;

        PetscCall(StnDeepDestroy(&lv->deep));
        PetscCall(StnDeepCreate(da, lv->deep_units, PETSC_TRUE, &lv->deep, &why));
        lv->deep_dm = id, lv->deep_made = lv->deep_units, lv->deep_tried = PETSC_TRUE;
        if (!lv->deep) PetscCall(PetscInfo(pc, "level %" PetscInt_FMT " exchanges its ghosts before every step: %s\n", l, why));
        else PetscCall(PetscInfo(pc, "level %" PetscInt_FMT ": deep ghosts, %d planes, %s\n", l, lv->deep->depth, lv->deep_exchange_up ? "one exchange per smoothing" : "one exchange per cycle"));
      }
      if (!lv->deep) made = 0;
    }
    if (made || !chain) break;
    chain             = 0;
    fc->chain_refused = finest_id;
  }
  PetscCall(PetscFree(want));
  for (PetscInt l = 1; l < fc->nlevels; l++)
    if (fc->level[l].deep) PetscCall(StnDeepSetOperator(fc->level[l].deep, fc->level[l].mf, fc->level[l].dinv));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The block diagonal at offset (0, 0, 0) of box, or -1. */
static int center_of(const StnBox *box)
{
  for (int s = 0; s < box->nsten; s++)
    if (!box->off[3 * s] && !box->off[3 * s + 1] && !box->off[3 * s + 2]) return s;
  return -1;
}

static PetscErrorCode free_whole(Level *lv)
{
  PetscFunctionBeginUser;
  lv->whole = PETSC_FALSE;
  PetscCall(StnHaloDestroy(&lv->values));
  PetscCall(VecDestroy(&lv->wb));
  PetscCall(VecDestroy(&lv->wx));
  PetscCall(VecDestroy(&lv->wr));
  PetscCall(VecDestroy(&lv->wdinv));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Several ranks, collective: level l (operator P, SG-DIA with its values on the device, on grid
   da) held whole on this rank: its values gathered (lv->A), its diagonal, its vectors and its
   whole transfers; *ok false (on every rank) where the gather cannot be made. */
static PetscErrorCode whole_level(Level *lv, PetscInt l, Mat P, DM da, PetscBool *ok)
{
  const StnBox      *box;
  const PetscScalar *A;
  PetscBool          dev;
  PetscInt           n;

  PetscFunctionBeginUser;
  PetscCall(MatSGDIAGetDeviceValues(P, &box, &A, &dev));
  *ok      = PETSC_TRUE;
  lv->wbox = *box;
  lv->wbox.xs = lv->wbox.ys = lv->wbox.zs = 0;
  lv->wbox.xm = box->mx, lv->wbox.ym = box->dim > 1 ? box->my : 1, lv->wbox.zm = box->dim > 2 ? box->mz : 1;
  lv->wbox.gxs = lv->wbox.gys = lv->wbox.gzs = 0;
  lv->wbox.gxm = lv->wbox.xm, lv->wbox.gym = lv->wbox.ym, lv->wbox.gzm = lv->wbox.zm;
  n = (PetscInt)box->dof * lv->wbox.xm * lv->wbox.ym * lv->wbox.zm;
  if (!lv->values) {
    const char *why;

    PetscCall(StnHaloCreateWhole(da, (PetscInt)box->nsten * box->dof, &lv->values, &why));
    if (!lv->values) {
      PetscCall(PetscInfo(da, "the coarse grids stay split over the ranks: %s\n", why));
      *ok = PETSC_FALSE;
      PetscFunctionReturn(PETSC_SUCCESS);
    }
    PetscCall(VecDestroy(&lv->wb));
    PetscCall(VecDestroy(&lv->wx));
    PetscCall(VecDestroy(&lv->wr));
    PetscCall(VecDestroy(&lv->wdinv));
    VecType vtype; /* the grid's (stencilc's kernels, unless -stn_vec_kernels petsc), for the
                      duplicates too: the first call of one of PETSc's takes milliseconds */

    PetscCall(DMGetVecType(da, &vtype));
    PetscCall(VecCreate(PETSC_COMM_SELF, &lv->wb));
    PetscCall(VecSetSizes(lv->wb, n, n));
    PetscCall(VecSetType(lv->wb, vtype));
    PetscCall(VecDuplicate(lv->wb, &lv->wx));
    PetscCall(VecDuplicate(lv->wb, &lv->wr));
    PetscCall(VecDuplicate(lv->wb, &lv->wdinv));
  }
  PetscCall(StnHaloExchange(lv->values, A, &lv->A));
  lv->box   = &lv->wbox;
  lv->mf    = NULL; /* the matrix: the same operator as a twin without it (an exact Jacobian's:
                       approximate ones are refused on several GPU ranks, stnapp.c) */
  lv->whole = PETSC_TRUE;
  if (l >= 1) {
    PetscScalar *d;

    PetscCall(VecCUDAGetArrayWrite(lv->wdinv, &d));
    STN_CUDA_CALL(StnSGDIADiagonalCUDA(&lv->wbox, lv->A, center_of(&lv->wbox), d, NULL));
    STN_CUDA_CALL(StnVecReciprocal(d, (long)n));
    PetscCall(VecCUDARestoreArrayWrite(lv->wdinv, &d));
    lv->wgrid = lv->wrgrid = *lv->grid;
    stn_transfer_whole(&lv->wgrid, 1);
    stn_transfer_whole(&lv->wrgrid, 0);
    lv->grid  = &lv->wgrid;
    lv->rgrid = &lv->wrgrid;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Several ranks: the levels whose whole grid has at most redundant_unknowns unknowns, from the
   coarsest up and below the finest, held whole on every rank (see the top), their values
   gathered after each new Jacobian; fc->split says how many (0: none), the same on every rank.
   Only under the coarse solve of stnmg.c's dense inverse (so within its size), which the whole
   coarsest grid's inverse replaces. *undone: levels were made whole and then given up (a gather
   that could not be made), and must be worked out again (fit_levels). */
static PetscErrorCode prepare_whole(PC pc, Fused *fc, PetscBool *undone)
{
  PC_MG_Levels         **mgl   = ((PC_MG *)pc->data)->levels;
  int                    split = 0, ok = 1;
  PetscBool              dense;

  PetscFunctionBeginUser;
  *undone = PETSC_FALSE;
  PetscCall(StnMGCoarseIsDenseInverse(mgl[0]->smoothd, &dense));
  {
    int d = dense ? 1 : 0;

    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &d, 1, MPI_INT, MPI_LAND, fc->comm));
    dense = d ? PETSC_TRUE : PETSC_FALSE;
  }
  for (PetscInt l = 0; l < fc->nlevels - 1 && dense; l++) { /* the split from the grids' sizes: the same on every rank */
    DM       da;
    PetscInt dof, m[3];

    PetscCall(KSPGetDM(mgl[l]->smoothd, &da));
    PetscCall(DMDAGetInfo(da, NULL, &m[0], &m[1], &m[2], NULL, NULL, NULL, &dof, NULL, NULL, NULL, NULL, NULL));
    if ((double)dof * m[0] * m[1] * m[2] > (double)fc->redundant_unknowns) break;
    split = (int)l + 1;
  }
  for (PetscInt l = 0; l < fc->nlevels; l++)
    if (l >= split && fc->level[l].whole) PetscCall(free_whole(&fc->level[l]));
  ok = dense ? 1 : 0;
  for (PetscInt l = 0; l < split && ok; l++) { /* every operator's values on the device, on every rank */
    Mat                P;
    const StnBox      *box;
    const PetscScalar *A;
    PetscBool          dev;

    PetscCall(KSPGetOperators(mgl[l]->smoothd, NULL, &P));
    PetscCall(MatSGDIAGetDeviceValues(P, &box, &A, &dev));
    ok = dev ? 1 : 0;
  }
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_LAND, fc->comm));
  for (PetscInt l = 0; l < split && ok; l++) {
    Level        *lv = &fc->level[l];
    Mat           P;
    DM            da;
    PetscBool     lok;
    PetscObjectId id;
    int           renew;

    PetscCall(KSPGetOperators(mgl[l]->smoothd, NULL, &P));
    PetscCall(KSPGetDM(mgl[l]->smoothd, &da));
    PetscCall(PetscObjectGetId((PetscObject)da, &id));
    renew = lv->values && lv->values_dm != id; /* a refined hierarchy (-snes_grid_sequence): new grids */
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &renew, 1, MPI_INT, MPI_LOR, fc->comm));
    if (renew) PetscCall(free_whole(lv));
    lv->values_dm = id;
    PetscCall(whole_level(lv, l, P, da, &lok));
    ok = lok ? 1 : 0;
  }
  if (split && ok) { /* the coarsest grid's inverse, as one rank forms it */
    const StnBox *box = &fc->level[0].wbox;
    const int     n   = box->dof * box->xm * box->ym * box->zm;
    int           zero_pivot;

    if (fc->whole_inv && StnDenseInverseRows(fc->whole_inv) != n) {
      STN_CUDA_CALL(StnDenseInverseDestroy(fc->whole_inv));
      fc->whole_inv = NULL;
    }
    if (!fc->whole_inv) STN_CUDA_CALL(StnDenseInverseCreate(n, &fc->whole_inv));
    STN_CUDA_CALL(StnDenseInverseSetSGDIA(fc->whole_inv, box, fc->level[0].A, &zero_pivot));
    PetscCheck(zero_pivot == 0, PETSC_COMM_SELF, PETSC_ERR_MAT_LU_ZRPVT, "the coarsest grid's operator is singular (zero pivot in row %d of %d): give fewer levels (-pc_mg_levels)", zero_pivot - 1, n);
  }
  if (split && ok) { /* the gather of the restricted right side, made again for a new grid */
    DM            da;
    PetscObjectId id;

    PetscCall(KSPGetDM(mgl[split - 1]->smoothd, &da));
    PetscCall(PetscObjectGetId((PetscObject)da, &id));
    int renew = !fc->to_whole || fc->to_whole_dm != id;

    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &renew, 1, MPI_INT, MPI_LOR, fc->comm));
    if (renew) {
      const char *why;

      PetscCall(StnHaloDestroy(&fc->to_whole));
      PetscCall(StnHaloCreateWhole(da, 1, &fc->to_whole, &why));
      fc->to_whole_dm = id;
      ok              = fc->to_whole != NULL;
    }
  }
  if (!split || !ok) {
    for (PetscInt l = 0; l < split; l++)
      if (fc->level[l].whole) {
        PetscCall(free_whole(&fc->level[l]));
        *undone = PETSC_TRUE;
      }
    PetscCall(StnHaloDestroy(&fc->to_whole));
    fc->split = 0;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  fc->split_grid = *fc->level[split].grid; /* level split's owned points from the whole coarse grid */
  for (int d = 0; d < 3; d++) fc->split_grid.cs[d] = 0, fc->split_grid.cm[d] = fc->split_grid.nc[d];
  fc->split_grid.wrap = 1;
  fc->split           = split;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode free_levels(Fused *fc)
{
  PetscFunctionBeginUser;
  for (PetscInt l = 0; l < fc->nlevels; l++) {
    PetscCall(VecDestroy(&fc->level[l].dinv));
    fc->level[l].halo = NULL; /* its grid's (StnDMGetExchange) */
    PetscCall(DMDestroy(&fc->level[l].halo_da));
    PetscCall(free_whole(&fc->level[l]));
    PetscCall(StnDeepDestroy(&fc->level[l].deep));
    fc->level[l].deep_tried = PETSC_FALSE;
  }
  fc->split = 0;
  PetscCall(PetscFree(fc->level));
  PetscCall(PetscFree(fc->level_ms));
  PetscCall(PetscFree(fc->exchange_us)); /* measured again on the new levels */
  fc->nlevels = 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Each level above the coarsest from the operators and transfers PCMG holds now; *fit says
   whether this rank's levels are ones the fused steps compute. */
static PetscErrorCode fit_levels(PC pc, Fused *fc, int *fit)
{
  PC_MG_Levels **mgl = ((PC_MG *)pc->data)->levels;

  PetscFunctionBeginUser;
  *fit = 1;
  for (PetscInt l = 1; l < fc->nlevels && *fit; l++) {
    Level    *lv = &fc->level[l];
    PetscBool fits, whole = PETSC_FALSE;

    PetscCall(smoother_fits(mgl[l], lv, &fits));
    if (fits) PetscCall(StnTransferGetGrid(mgl[l]->interpolate, &lv->grid, &lv->rgrid, &whole, &fits));
    if (fits && mgl[l]->restrct != mgl[l]->interpolate) fits = PETSC_FALSE; /* a restriction of its own */
    if (fits && whole != (fc->size == 1)) fits = PETSC_FALSE;
    if (fits) PetscCall(KSPGetTolerances(mgl[l]->smoothd, NULL, NULL, NULL, &lv->steps));
    *fit = fits && mgl[l]->r && lv->steps >= 1;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Begins level lv's eigenvalue estimate: from its whole copy (every rank the same, one rank's
   estimate), else on its own points with its exchange (several ranks) or alone. */
static PetscErrorCode bounds_begin(KSP smoother, Vec r, const Level *lv, int set)
{
  PetscFunctionBeginUser;
  if (lv->whole) PetscCall(StnMGSmootherBoundsBeginWhole(smoother, lv->box, lv->A, lv->wdinv, set));
  else PetscCall(StnMGSmootherBoundsBegin(smoother, r, set, lv->halo));
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
  PetscCall(fit_levels(pc, fc, &fit));
  if (fc->size > 1) PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &fit, 1, MPI_INT, MPI_LAND, fc->comm));
  if (!fit) PetscFunctionReturn(PETSC_SUCCESS);
  if (fc->size > 1) {
    PetscBool ok, undone;

    PetscCall(PetscLogEventBegin(event_whole, pc, 0, 0, 0));
    PetscCall(prepare_whole(pc, fc, &undone));
    PetscCall(PetscLogEventEnd(event_whole, pc, 0, 0, 0));
    if (undone) PetscCall(fit_levels(pc, fc, &fit)); /* the levels it had made whole, as they were */
    PetscCall(PetscLogEventBegin(event_halos, pc, 0, 0, 0));
    PetscCall(prepare_ranks(pc, fc, &ok));
    PetscCall(PetscLogEventEnd(event_halos, pc, 0, 0, 0));
    if (!ok) PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(PetscLogEventBegin(event_bounds, pc, 0, 0, 0));
  if (n <= STN_GMRES_REPORT_SETS) /* else (2^31 points in a row) one at a time, with set 1 */
    for (PetscInt l = 1; l < n; l++) PetscCall(bounds_begin(mgl[l]->smoothd, mgl[l]->r, &fc->level[l], (int)l));
  PetscCall(StnMGEstimateDeviceRun()); /* the split levels' steps together, behind the whole levels' */
  for (PetscInt l = 1; l < n; l++) {
    Level    *lv = &fc->level[l];
    Mat       P;
    PetscBool fits;

    if (n > STN_GMRES_REPORT_SETS) PetscCall(bounds_begin(mgl[l]->smoothd, mgl[l]->r, lv, 1));
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
    if (!lv->whole) { /* a whole level's is wdinv (whole_level) */
      if (!lv->dinv) PetscCall(VecDuplicate(mgl[l]->r, &lv->dinv));
      PetscCall(MatGetDiagonal(P, lv->dinv));
      PetscCall(VecReciprocal(lv->dinv));
    }
    PetscCall(PetscObjectGetId((PetscObject)P, &lv->id[0]));
    PetscCall(PetscObjectGetId((PetscObject)mgl[l]->interpolate, &lv->id[1]));
    PetscCall(PetscObjectStateGet((PetscObject)P, &lv->state));
  }
  PetscCall(PetscLogEventEnd(event_bounds, pc, 0, 0, 0));
  if (fc->size > 1) {
    int a = all ? 1 : 0;

    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &a, 1, MPI_INT, MPI_LAND, fc->comm));
    all = a ? PETSC_TRUE : PETSC_FALSE;
    if (all) PetscCall(prepare_deep(pc, fc));
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
   several ranks after the exchange of x's ghosts alone: the product (SG-DIA, or without the
   matrix) reads x's owned neighbours from x and only the others from the exchange (split
   reads). */
static PetscErrorCode step(const Level *lv, const PetscScalar *x, const PetscScalar *b, const PetscScalar *d, const PetscScalar *p, PetscReal alpha, PetscReal beta, PetscReal gamma, PetscScalar *y)
{
  const PetscScalar *xg = NULL;

  PetscFunctionBeginUser;
  if (lv->halo && !lv->whole) PetscCall(StnHaloExchangeGhosts(lv->halo, x, &xg));
  if (lv->mf) {
    const StnMultArgs m = {x, b, d, p, y, alpha, beta, gamma, xg};

    PetscCall(StnMatFreeApply(lv->mf, &m));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (xg) STN_CUDA_CALL(StnMGStepSplitCUDA(lv->box, lv->A, x, xg, b, d, p, alpha, beta, gamma, y));
  else STN_CUDA_CALL(StnMGStepCUDA(lv->box, lv->A, x, NULL, b, d, p, alpha, beta, gamma, y));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* KSPSolve_Chebyshev_FirstKind's coefficients from level lv's bounds: its first step is
   y = x + scale d .* (b - A x) (from x = 0: y = scale d .* b), each one after it
   y = (1 - omega) p + omega x + omega scale d .* (b - A x), p the iterate before x. */
typedef struct {
  PetscReal scale, mu, omegaprod, c0, c1;
} Chebyshev;

static Chebyshev chebyshev_start(const Level *lv)
{
  const PetscReal scale = 2.0 / (lv->emax + lv->emin), alpha = 1.0 - scale * lv->emin;
  const Chebyshev c     = {scale, 1.0 / alpha, 2.0 / alpha, 1.0, 1.0 / alpha};

  return c;
}

/* The next step's omega. */
static PetscReal chebyshev_next(Chebyshev *c)
{
  const PetscReal c2 = 2.0 * c->mu * c->c1 - c->c0, omega = c->omegaprod * c->c1 / c2;

  c->c0 = c->c1, c->c1 = c2;
  return omega;
}

/* Level lv's Chebyshev smoothing of A x = b (no norms): from x = 0 when zero (x not read), else
   from x. t is work space of x's size. Result in x. */
static PetscErrorCode smooth(const Level *lv, const PetscScalar *b, PetscScalar *x, PetscScalar *t, PetscBool zero)
{
  const PetscScalar *d = NULL;
  Chebyshev          c = chebyshev_start(lv);
  PetscScalar       *prev, *cur;
  PetscBool          prev_zero = zero;
  const long         n         = (long)lv->box->dof * lv->box->xm * lv->box->ym * lv->box->zm;

  PetscFunctionBeginUser;
  PetscCall(VecCUDAGetArrayRead(lv->whole ? lv->wdinv : lv->dinv, &d));
  /* p1 = p0 + scale D^-1 (b - A p0), into x when it is the last step, else into t */
  cur = lv->steps == 1 ? x : t;
  if (zero) STN_CUDA_CALL(StnMGScaleCUDA(n, c.scale, d, b, cur));
  else {
    if (cur == x) { /* one step in place is not possible: the product reads x's neighbours */
      PetscCall(step(lv, x, b, d, NULL, 0.0, 1.0, c.scale, t));
      STN_CUDA_CALL(StnCUDAMemcpyDtoD(x, t, sizeof(PetscScalar) * (size_t)n));
    } else PetscCall(step(lv, x, b, d, NULL, 0.0, 1.0, c.scale, cur));
  }
  prev = cur == x ? t : x;
  for (PetscInt i = 1; i < lv->steps; i++) {
    const PetscReal omega = chebyshev_next(&c);

    /* p_new = (1 - omega) p_prev + omega p_cur + omega scale D^-1 (b - A p_cur), over p_prev */
    PetscCall(step(lv, cur, b, d, prev_zero ? NULL : prev, 1.0 - omega, omega, omega * c.scale, prev));
    prev_zero = PETSC_FALSE;
    PetscScalar *swap = prev;
    prev = cur, cur = swap;
  }
  if (cur != x) STN_CUDA_CALL(StnCUDAMemcpyDtoD(x, cur, sizeof(PetscScalar) * (size_t)n));
  PetscCall(VecCUDARestoreArrayRead(lv->whole ? lv->wdinv : lv->dinv, &d));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Level l's vectors for a cycle: PCMG's (b and x the cycle's own on the finest level), or on a
   whole level its own, b gathered into b_split on the top one. Each got is restored by
   restore_arrays. */
typedef struct {
  Vec                B, X, R;
  const PetscScalar *b;
  PetscScalar       *x, *r;
  PetscBool          down; /* x only written (the smoothing from zero) */
} Arrays;

static PetscErrorCode get_arrays(PC pc, Fused *fc, PetscInt l, Vec b, Vec x, PetscBool down, Arrays *a)
{
  PC_MG_Levels **mgl = ((PC_MG *)pc->data)->levels;
  const Level   *lv  = &fc->level[l];
  const PetscInt n   = fc->nlevels;

  PetscFunctionBeginUser;
  if (lv->whole) {
    a->B = l == fc->split - 1 ? NULL : lv->wb, a->X = lv->wx, a->R = lv->wr;
  } else a->B = l == n - 1 ? b : mgl[l]->b, a->X = l == n - 1 ? x : mgl[l]->x, a->R = mgl[l]->r;
  if (a->B) PetscCall(VecCUDAGetArrayRead(a->B, &a->b));
  else a->b = fc->b_split;
  a->down = down;
  if (down) PetscCall(VecCUDAGetArrayWrite(a->X, &a->x));
  else PetscCall(VecCUDAGetArray(a->X, &a->x));
  PetscCall(VecCUDAGetArrayWrite(a->R, &a->r));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode restore_arrays(Arrays *a)
{
  PetscFunctionBeginUser;
  if (a->B) PetscCall(VecCUDARestoreArrayRead(a->B, &a->b));
  if (a->down) PetscCall(VecCUDARestoreArrayWrite(a->X, &a->x));
  else PetscCall(VecCUDARestoreArray(a->X, &a->x));
  PetscCall(VecCUDARestoreArrayWrite(a->R, &a->r));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A transfer's layout box [s, s + m) from another. */
static void copy_box(int s[3], int m[3], const int from_s[3], const int from_m[3])
{
  for (int d = 0; d < 3; d++) s[d] = from_s[d], m[d] = from_m[d];
}

/* Deep ghosts: where the smoothing up leaves the level's correction (deep_up), deep_in - steps
   widths past the owned box. */
static const PetscScalar *deep_result(const StnDeep *dp) { return dp->x[1]; }

/* grid with split reads (StnTransferGrid.own): its input's points in the owned box [ps, ps + pm)
   read from own. */
static StnTransferGrid with_split_reads(const StnTransferGrid *grid, const int ps[3], const int pm[3], const PetscScalar *own)
{
  StnTransferGrid g = *grid;

  g.own = own;
  for (int d = 0; d < 3; d++) g.ps[d] = ps[d], g.pm[d] = pm[d];
  return g;
}

/* Down from level l: its residual ra into level l - 1's right side. Across the split, into this
   rank's coarse points, then gathered whole onto every rank (b_split). With deep ghosts on level
   l, ra holds its ghosts already; on level l - 1, its right side is its widened array's. */
static PetscErrorCode restrict_down(PC pc, Fused *fc, PetscInt l, const PetscScalar *ra)
{
  PC_MG_Levels     **mgl = ((PC_MG *)pc->data)->levels;
  const Level       *lv  = &fc->level[l];
  const StnDeep     *dc  = fc->level[l - 1].deep;
  const PetscScalar *rg  = ra;
  PetscScalar       *bc;
  StnTransferGrid    g;

  PetscFunctionBeginUser;
  if (lv->whole) {
    PetscCall(VecCUDAGetArrayWrite(fc->level[l - 1].wb, &bc));
    STN_CUDA_CALL(StnTransferRestrictCUDA(lv->rgrid, 0, ra, bc));
    PetscCall(VecCUDARestoreArrayWrite(fc->level[l - 1].wb, &bc));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (dc) bc = dc->b;
  else PetscCall(VecCUDAGetArrayWrite(mgl[l - 1]->b, &bc));
  g = *lv->rgrid;
  if (lv->deep) copy_box(g.fs, g.fm, lv->deep->es, lv->deep->em);
  else if (lv->halo) { /* split reads: the exchange sends the fine ghosts alone */
    g = with_split_reads(lv->rgrid, lv->grid->fs, lv->grid->fm, ra); /* the interpolation's output: the fine owned box */
    PetscCall(StnHaloExchangeGhosts(lv->halo, ra, &rg));
  }
  if (dc) copy_box(g.cs, g.cm, dc->es, dc->em);
  STN_CUDA_CALL(StnTransferRestrictCUDA(&g, 0, rg, bc));
  if (l == fc->split) PetscCall(StnHaloExchange(fc->to_whole, bc, &fc->b_split));
  if (!dc) PetscCall(VecCUDARestoreArrayWrite(mgl[l - 1]->b, &bc));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Up to level l: xa += the interpolation of level l - 1's correction. Across the split, this
   rank's fine points from the whole coarse grid, with no exchange. With deep ghosts on level l
   whose smoothing up does not exchange, also the ghost points it reads (deep_depths). With deep ghosts on level
   l - 1 its correction holds its ghosts already (deep_up); on level l, xa is its widened array. */
static PetscErrorCode interpolate_up(PC pc, Fused *fc, PetscInt l, PetscScalar *xa)
{
  PC_MG_Levels     **mgl = ((PC_MG *)pc->data)->levels;
  const Level       *lf = &fc->level[l], *lc = &fc->level[l - 1];
  const PetscScalar *xc = NULL, *xcg;
  StnTransferGrid    g  = l == fc->split ? fc->split_grid : *lf->grid;

  PetscFunctionBeginUser;
  if (lf->deep) copy_box(g.fs, g.fm, lf->deep->es, lf->deep->em);
  if (lf->deep && !lf->deep_exchange_up) StnDeepBox(lf->deep, lf->deep->width * (int)lf->deep_in, g.os, g.om); /* its ghost planes too: deep_up */
  if (lc->whole) {
    PetscCall(VecCUDAGetArrayRead(lc->wx, &xc));
    STN_CUDA_CALL(StnTransferInterpolateCUDA(&g, 1, xc, xa));
    PetscCall(VecCUDARestoreArrayRead(lc->wx, &xc));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (lc->deep) {
    copy_box(g.cs, g.cm, lc->deep->es, lc->deep->em);
    STN_CUDA_CALL(StnTransferInterpolateCUDA(&g, 1, deep_result(lc->deep), xa));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(VecCUDAGetArrayRead(mgl[l - 1]->x, &xc));
  xcg = xc;
  if (lc->halo) { /* the coarse points around the fine ones: ghosts too, exchanged alone */
    g = with_split_reads(&g, lf->rranks.cs, lf->rranks.cm, xc); /* the restriction's output: the coarse owned box */
    PetscCall(StnHaloExchangeGhosts(lc->halo, xc, &xcg));
  }
  STN_CUDA_CALL(StnTransferInterpolateCUDA(&g, 1, xcg, xa));
  PetscCall(VecCUDARestoreArrayRead(mgl[l - 1]->x, &xc));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Deep ghosts on level l (stnmgdeep.h): down from it. Its right side (b, the finest level's,
   else the restriction's in its widened array) exchanged once; the smoothing from zero, its
   step i over the owned box widened by depth - width i; the residual over width planes more
   than the owned box; the restriction. The smoothing ends in x[(steps - 1) % 2]. */
static PetscErrorCode deep_down(PC pc, Fused *fc, PetscInt l, Vec b)
{
  const Level   *lv  = &fc->level[l];
  const StnDeep *dp  = lv->deep;
  Chebyshev      c   = chebyshev_start(lv);
  int            cur = 0;

  PetscFunctionBeginUser;
  if (b) {
    const PetscScalar *ba;

    PetscCall(VecCUDAGetArrayRead(b, &ba));
    PetscCall(StnHaloExchangeInto(dp->halo, ba, dp->b));
    PetscCall(VecCUDARestoreArrayRead(b, &ba));
  } else PetscCall(StnHaloExchangeGhostsInto(dp->halo, dp->b + dp->offset, dp->b));
  STN_CUDA_CALL(StnMGScaleCUDA(dp->n, c.scale, dp->d, dp->b, dp->x[0]));
  for (PetscInt i = 1; i < lv->steps; i++, cur = 1 - cur) {
    const PetscReal omega = chebyshev_next(&c);

    PetscCall(StnDeepStep(dp, lv->mf, dp->depth - dp->width * (int)i, dp->x[cur], dp->b, dp->d, i == 1 ? NULL : dp->x[1 - cur], 1.0 - omega, omega, omega * c.scale, dp->x[1 - cur], PETSC_FALSE));
  }
  PetscCall(StnDeepStep(dp, lv->mf, dp->width, dp->x[cur], dp->b, NULL, NULL, 0.0, 0.0, 1.0, dp->r, PETSC_FALSE)); /* r = b - A x */
  PetscCall(restrict_down(pc, fc, l, dp->r));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Deep ghosts on level l: up to it. The interpolation added to the smoothing down's iterate,
   then the smoothing from it, step i over deep_in - i widths past the owned box: its last step
   over what the finer level's interpolation reads, or on the finest level (x) its owned box into
   x. The iterates alternate between x[0] and x[1] and end in x[1]: deep_result. With the chain of
   deep_depths the smoothing down left its iterate valid deep_in widths deep and the
   interpolation added the correction there, each value the one its owner adds; else the iterate
   is exchanged first. */
static PetscErrorCode deep_up(PC pc, Fused *fc, PetscInt l, Vec x)
{
  const Level    *lv    = &fc->level[l];
  const StnDeep  *dp    = lv->deep;
  const int       depth = dp->width * (int)lv->deep_in;
  Chebyshev       c     = chebyshev_start(lv);
  int             prev  = (int)((lv->steps - 1) % 2), cur = 1 - prev;
  PetscScalar    *xa    = NULL;

  PetscFunctionBeginUser;
  PetscCall(interpolate_up(pc, fc, l, dp->x[prev]));
  if (lv->deep_exchange_up) PetscCall(StnHaloExchangeGhostsInto(dp->halo, dp->x[prev] + dp->offset, dp->x[prev]));
  if (x) PetscCall(VecCUDAGetArrayWrite(x, &xa));
  for (PetscInt i = 1; i <= lv->steps; i++) {
    const PetscBool last = (PetscBool)(xa && i == lv->steps);
    const int       k    = last ? 0 : depth - dp->width * (int)i;

    if (i == 1) PetscCall(StnDeepStep(dp, lv->mf, k, dp->x[prev], dp->b, dp->d, NULL, 0.0, 1.0, c.scale, last ? xa : dp->x[cur], last));
    else {
      const PetscReal omega = chebyshev_next(&c);

      PetscCall(StnDeepStep(dp, lv->mf, k, dp->x[cur], dp->b, dp->d, dp->x[prev], 1.0 - omega, omega, omega * c.scale, last ? xa : dp->x[prev], last));
      prev = cur, cur = 1 - cur;
    }
  }
  if (x) PetscCall(VecCUDARestoreArrayWrite(x, &xa));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The coarsest grid's solve: on whole levels the dense inverse of the whole operator; on split
   ones the gather and this rank's rows of the inverse; else the coarse KSP. */
static PetscErrorCode coarse_solve(PC pc, Fused *fc)
{
  PC_MG_Levels     **mgl = ((PC_MG *)pc->data)->levels;
  const PetscScalar *b0, *whole;
  PetscScalar       *x0;

  PetscFunctionBeginUser;
  if (fc->split) {
    const Level *l0 = &fc->level[0];

    if (fc->split > 1) PetscCall(VecCUDAGetArrayRead(l0->wb, &b0));
    else b0 = fc->b_split;
    PetscCall(VecCUDAGetArrayWrite(l0->wx, &x0));
    STN_CUDA_CALL(StnDenseInverseApply(fc->whole_inv, b0, x0));
    PetscCall(VecCUDARestoreArrayWrite(l0->wx, &x0));
    if (fc->split > 1) PetscCall(VecCUDARestoreArrayRead(l0->wb, &b0));
  } else if (fc->gather) { /* x = the owned rows of inverse times the gathered b */
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
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The V-cycle from the finest level (b, x) down and back: PCMGMCycle_Private. */
static PetscErrorCode cycle(PC pc, Fused *fc, Vec b, Vec x)
{
  const PetscInt n = fc->nlevels;

  PetscFunctionBeginUser;
  PetscCall(profile_mark(fc, 0));
  for (PetscInt l = n - 1; l >= 1; l--) { /* down: smooth from zero, residual, restrict */
    const Level *lv = &fc->level[l];
    Arrays       a;

    if (lv->deep) PetscCall(deep_down(pc, fc, l, l == n - 1 ? b : NULL));
    else {
      PetscCall(get_arrays(pc, fc, l, b, x, PETSC_TRUE, &a));
      PetscCall(smooth(lv, a.b, a.x, a.r, PETSC_TRUE));
      PetscCall(step(lv, a.x, a.b, NULL, NULL, 0.0, 0.0, 1.0, a.r)); /* r = b - A x */
      PetscCall(restrict_down(pc, fc, l, a.r));
      PetscCall(restore_arrays(&a));
    }
    PetscCall(profile_mark(fc, n - l));
  }
  PetscCall(coarse_solve(pc, fc));
  PetscCall(profile_mark(fc, n));
  for (PetscInt l = 1; l < n; l++) { /* up: interpolate and add, smooth */
    const Level *lv = &fc->level[l];
    Arrays       a;

    if (lv->deep) PetscCall(deep_up(pc, fc, l, l == n - 1 ? x : NULL));
    else {
      PetscCall(get_arrays(pc, fc, l, b, x, PETSC_FALSE, &a));
      PetscCall(interpolate_up(pc, fc, l, a.x));
      PetscCall(smooth(lv, a.b, a.x, a.r, PETSC_FALSE));
      PetscCall(restore_arrays(&a));
    }
    PetscCall(profile_mark(fc, n + l));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

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
    if (fc->profile && fc->size > 1 && !fc->exchange_us) PetscCall(profile_exchanges(pc, fc));
    PetscCall(PetscLogEventBegin(event_cycle, pc, b, x, 0));
    PetscLogDouble t0 = 0, t1;

    if (fc->profile) {
      STN_CUDA_CALL(StnCUDASynchronize()); /* the queue empty: the host's time below is its own */
      STN_CUDA_CALL(StnCUDAMark(4));
      PetscCall(PetscTime(&t0));
    }
    PetscCall(cycle(pc, fc, b, x));
    if (fc->profile) {
      const StnTransferGrid *g      = fc->level[1].grid;
      const double           coarse = (double)g->dof * g->nc[0] * g->nc[1] * g->nc[2];
      float                  ms;

      PetscCall(PetscTime(&t1));
      fc->host_ms += 1e3 * (t1 - t0);
      STN_CUDA_CALL(StnCUDAMark(5));
      STN_CUDA_CALL(StnCUDASynchronize());
      STN_CUDA_CALL(StnCUDAMarksElapsed(4, 5, &ms));
      PetscCall(profile_levels(fc));
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
  if (fc->profile && fc->cycles) {
    PetscMPIInt rank;

    PetscCallMPI(MPI_Comm_rank(fc->comm, &rank));
    PetscCall(PetscPrintf(PETSC_COMM_SELF, "stnmg profile: %" PetscInt_FMT " V-cycles of %" PetscInt_FMT " levels, %.3f ms each on the GPU; byte model %.3f GB per cycle (finest level %.3f GB): %.0f GB/s; %.3f ms to queue on the host (rank %d)\n",
                          fc->cycles, fc->nlevels, fc->ms / fc->cycles, fc->bytes / fc->cycles * 1e-9, fc->fine_bytes / fc->cycles * 1e-9, fc->bytes / (fc->ms * 1e-3) * 1e-9, fc->host_ms / fc->cycles, rank));
    if (fc->level_ms) {
      PetscCall(PetscPrintf(PETSC_COMM_SELF, "stnmg levels: ms per cycle on the GPU by level, finest first (rank %d):", rank));
      for (PetscInt l = fc->nlevels - 1; l >= 0; l--) PetscCall(PetscPrintf(PETSC_COMM_SELF, " %.3f", fc->level_ms[l] / fc->cycles));
      PetscCall(PetscPrintf(PETSC_COMM_SELF, "\n"));
    }
    if (fc->exchange_us) {
      PetscCall(PetscPrintf(PETSC_COMM_SELF, "stnmg exchanges: us for one alone on the GPU by level, finest first, - where held whole (rank %d):", rank));
      for (PetscInt l = fc->nlevels - 1; l >= 1; l--) {
        if (fc->exchange_us[l] > 0) PetscCall(PetscPrintf(PETSC_COMM_SELF, " %.1f", fc->exchange_us[l]));
        else PetscCall(PetscPrintf(PETSC_COMM_SELF, " -"));
      }
      PetscCall(PetscPrintf(PETSC_COMM_SELF, "\n"));
    }
  }
  PetscCall(free_levels(fc));
  PetscCall(StnHaloDestroy(&fc->gather));
  PetscCall(StnHaloDestroy(&fc->to_whole));
  STN_CUDA_CALL(StnDenseInverseDestroy(fc->whole_inv));
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
    PetscCall(PetscLogEventRegister("StnMGWhole", PC_CLASSID, &event_whole));
    PetscCall(PetscLogEventRegister("StnMGHalos", PC_CLASSID, &event_halos));
    PetscCall(PetscLogEventRegister("StnMGBounds", PC_CLASSID, &event_bounds));
    PetscCall(PetscLogEventRegister("StnMGCycle", PC_CLASSID, &event_cycle));
  }
  PetscCall(PetscNew(&fc));
  fc->apply_mg = pc->ops->apply;
  fc->comm     = PetscObjectComm((PetscObject)pc);
  PetscCallMPI(MPI_Comm_size(fc->comm, &fc->size));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-stn_mg_profile", &fc->profile, NULL));
  fc->redundant_unknowns = STN_MG_REDUNDANT_UNKNOWNS;
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-stn_mg_redundant_unknowns", &fc->redundant_unknowns, NULL));
  fc->deep_ghosts = PETSC_TRUE;
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-stn_mg_deep_ghosts", &fc->deep_ghosts, NULL));
  PetscCall(PetscObjectContainerCompose((PetscObject)pc, "StnFusedCycle", fc, FusedDestroy));
  pc->ops->apply = PCApply_StnMG;
  PetscFunctionReturn(PETSC_SUCCESS);
}
#endif
