/*
** stnarnoldi.c: the smoothers' eigenvalue estimate on the device (stnmg.h,
** StnMGEstimateDevice). PETSc's estimate for a Chebyshev smoother is max_it steps of
** left-preconditioned GMRES from a zero guess (classical Gram-Schmidt, no restart), then the
** largest real part of the Ritz values, the eigenvalues of its Hessenberg matrix. Run as
** PETSc's KSPGMRES, every step waits for its norms: on a coarse grid the waits are the cost.
** Here the same steps run on stngmres's engine (stngmres_cuda.h), the operator applied as the
** SG-DIA product (or the product without the matrix, stnmatfree.h, when that is the operator)
** scaled by the inverse diagonal (Jacobi's), all queued before one wait at the end. The engine keeps the Hessenberg matrix rotated (the Givens rotations GMRES applies
** column by column); the Ritz values need it unrotated, which undoing the rotations gives.
**
** The estimate comes in two halves, so that the estimates of every level of a hierarchy are
** queued before the host waits for any (a coarse level's steps are launches more than work):
** StnMGEstimateDeviceBegin queues the steps, StnMGEstimateDeviceEnd waits and takes the Ritz
** values. The engine's reports have a set of slots per estimator in flight (the set argument,
** 1 to STN_GMRES_REPORT_SETS - 1; set 0 is the outer GMRES's, which has no step in flight at
** the first preconditioner application after a new operator, where the estimates run, as
** PETSc's do).
**
** On several ranks (with the level's device ghost exchange, stnhalo.h) each product reads its
** ghosts from the exchange, and each step's Gram-Schmidt sums and norm are the ranks' sums, one
** MPI_Allreduce on the host (step_queue, step_finish); the Hessenberg update stays on the device
** (StnGMRESStepFinish). There Begin only notes the level, and StnMGEstimateDeviceRun (or the
** first End) runs the steps of every level noted, in step: each level's product and sums are
** queued before the host waits for the first level's sums, so that while the host takes one
** level's sums to MPI_Allreduce and back, the GPU computes the next levels' (one host wait per
** step and level, none of them an idle GPU but the last). Each level's arithmetic is what it
** would be alone.
**
** Where the level's product runs without the matrix on slabs (the cavity's split levels), the
** basis lives in the owned box widened by width * steps planes (stnmgdeep.h): the start vector,
** the state and the diagonal are exchanged into it once per estimate, and step it computes its
** new vector over the owned box widened by width * (steps - 1 - it) planes, the rows the steps
** after it read, as the neighbour computes them; the sums take the owned rows, one run of the
** array. Ten steps then make three exchanges, not ten.
*/
#include "stnmg.h"

#if defined(PETSC_HAVE_CUDA)
  #include <petscblaslapack.h>

  #include "sgdia.h"
  #include "stngmres_cuda.h"
  #include "stnmatfree.h"
  #include "stnmgcycle_cuda.h"
  #include "stnmgdeep.h"

/* What one estimator keeps between estimates: the engine and the Krylov basis, V[0] a vector
   of the level's, the rest in one block of device memory (one allocation per level, not one per
   vector: a hierarchy's first estimates had spent longer allocating than computing). */
typedef struct {
  StnGMRESState st;
  Vec           V0;    /* the start, then the first basis vector */
  double       *basis; /* steps vectors of n after it, on the device (not with deep ghosts) */
  Vec           dinv;  /* 1 / the diagonal */
  PetscInt      steps, n;
  PetscBool     queued;                       /* Begin queued steps that End has not taken */
  PetscBool     ranks;                        /* several ranks: beta on the host, and the steps
                                                 waiting in pending[] until run_pending: */
  MPI_Comm      comm;                         /*   their sums' communicator */
  StnHalo       halo;                         /*   the level's exchange */
  Mat           mf;                           /*   the product without the matrix, or NULL and */
  const StnBox *box;                          /*   the SG-DIA values */
  const PetscScalar *values, *d;              /*   and 1 / the diagonal, on the device */
  double       *Vd[STN_VEC_MAX_MULTI + 1];    /*   the basis */
  int           set;                          /*   the report set, and the sums' slot */
  StnDeep      *deep;                         /* several ranks, without the matrix on slabs: the
                                                 widened box (see the top), or NULL */
  PetscBool     deep_tried;                   /*   made or refused for the grid: */
  PetscObjectId deep_dm;
  double       *wbasis;                       /*   V[0..steps] in it */
  PetscBool     on_deep;                      /*   this estimate's steps run in it */
  double        beta;
  PetscReal     rtol, abstol;                 /* est's, for the stop */
  unsigned      ticket[STN_VEC_MAX_MULTI];    /* each step's, to wait for */
} Arnoldi;

  #if STN_VEC_SLOTS < STN_GMRES_REPORT_SETS - 1
    #error "each report set (1 to STN_GMRES_REPORT_SETS - 1) needs a reduction slot of its own"
  #endif

/* Several ranks: the levels whose steps Begin noted and run_pending has not run, in the order
   noted (the same on every rank: their sums are collective). */
static Arnoldi *pending[STN_GMRES_REPORT_SETS];
static int      npending;

/* Whether a is noted; and a taken out of the notes (noted and never run: an error between
   Begin and End), the order of the rest changed alike on every rank. */
static PetscBool noted(const Arnoldi *a)
{
  for (int j = 0; j < npending; j++)
    if (pending[j] == a) return PETSC_TRUE;
  return PETSC_FALSE;
}

static void unnote(const Arnoldi *a)
{
  for (int j = 0; j < npending; j++)
    if (pending[j] == a) pending[j--] = pending[--npending];
}

static PetscErrorCode ArnoldiDestroy(void **ctx)
{
  Arnoldi *a = (Arnoldi *)*ctx;

  PetscFunctionBeginUser;
  unnote(a);
  STN_CUDA_CALL(StnGMRESDestroy(&a->st));
  PetscCall(VecDestroy(&a->V0));
  STN_CUDA_CALL(StnCUDAFree(a->basis));
  STN_CUDA_CALL(StnCUDAFree(a->wbasis));
  PetscCall(StnDeepDestroy(&a->deep));
  PetscCall(VecDestroy(&a->dinv));
  PetscCall(PetscFree(a));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The estimator est's engine and basis for vectors like b; made anew on every rank of comm
   alike (its destruction is collective there: the widened box's exchange). */
static PetscErrorCode get_arnoldi(KSP est, Vec b, PetscInt steps, MPI_Comm comm, Arnoldi **out)
{
  PetscContainer container;
  Arnoldi       *a = NULL;
  PetscInt       n;
  int            renew;

  PetscFunctionBeginUser;
  PetscCall(VecGetLocalSize(b, &n));
  PetscCall(PetscObjectQuery((PetscObject)est, "StnArnoldi", (PetscObject *)&container));
  if (container) PetscCall(PetscContainerGetPointer(container, (void **)&a));
  renew = !a || a->n != n || a->steps != steps;
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &renew, 1, MPI_INT, MPI_LOR, comm));
  if (renew) {
    PetscCall(PetscNew(&a));
    a->n     = n;
    a->steps = steps;
    STN_CUDA_CALL(StnGMRESCreate(&a->st, (int)steps));
    PetscCall(VecDuplicate(b, &a->V0));
    PetscCall(VecDuplicate(b, &a->dinv));
    PetscCall(PetscObjectContainerCompose((PetscObject)est, "StnArnoldi", a, ArnoldiDestroy)); /* frees the old one */
  }
  *out = a;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The unrotated Hessenberg matrix (n x n, column-major, ld n) of n steps, from the engine's
   rotated one (columns of ld entries) and its rotations: step j rotated rows (k, k+1) of its
   column by (c_k, s_k) for k < j, then made row j + 1 zero with (c_j, s_j), leaving row j + 1
   (the new vector's norm) as it was. */
static void unrotate(PetscInt n, PetscInt ld, const double *hh, const double *c, const double *s, double *H)
{
  for (PetscInt j = 0; j < n; j++) {
    double col[STN_VEC_MAX_MULTI + 1];

    for (PetscInt i = 0; i <= j + 1; i++) col[i] = hh[j * ld + i];
    col[j] = c[j] * col[j]; /* before the last rotation: r = c x + s h with c = x / r */
    for (PetscInt k = j - 1; k >= 0; k--) {
      const double a = col[k], b = col[k + 1];
      col[k]         = c[k] * a - s[k] * b;
      col[k + 1]     = s[k] * a + c[k] * b;
    }
    for (PetscInt i = 0; i < n; i++) H[j * n + i] = i <= j + 1 ? col[i] : 0.0;
  }
}

/* Several ranks: the norm of the local parts x (n entries), summed over comm. */
static PetscErrorCode norm_ranks(MPI_Comm comm, const double *x, long n, double *nrm)
{
  double local;

  PetscFunctionBeginUser;
  STN_CUDA_CALL(StnVecNorm(x, n, 1, &local));
  local *= local;
  PetscCallMPI(MPI_Allreduce(&local, nrm, 1, MPI_DOUBLE, MPI_SUM, comm));
  *nrm = PetscSqrtReal(*nrm);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Where a's basis vectors hold the owned rows (from there a->n values), and where step it
   computes its new vector (*off, *len): the owned box, or with deep ghosts that box widened by
   the planes the steps after it read. */
static long owned_offset(const Arnoldi *a) { return a->on_deep ? a->deep->offset : 0; }

/* With deep ghosts: the planes past the owned box that step it computes, those the steps after
   it read. */
static int step_planes(const Arnoldi *a, PetscInt it) { return a->deep->width * (int)(a->steps - 1 - it); }

static void step_extent(const Arnoldi *a, PetscInt it, long *off, long *len)
{
  if (a->on_deep) StnDeepExtent(a->deep, step_planes(a, it), off, len);
  else *off = 0, *len = a->n;
}

/* Queues a's product V[it + 1] = D^-1 A V[it] (through the exchange, split reads; with deep
   ghosts over step_extent's rows, no exchange) and the sums of its Gram-Schmidt step over the
   owned rows, V[0..it]^T w and w.w (w is V[it + 1]), into a's slot. */
static PetscErrorCode step_queue(Arnoldi *a, PetscInt it, unsigned *seq)
{
  const PetscScalar *xg;
  double           **Vd = a->Vd;
  const double      *Vo[STN_VEC_MAX_MULTI + 1];
  const long         own = owned_offset(a);

  PetscFunctionBeginUser;
  if (a->on_deep) PetscCall(StnDeepStep(a->deep, a->mf, step_planes(a, it), Vd[it], NULL, a->deep->d, NULL, 0.0, 0.0, 0.0, Vd[it + 1], PETSC_FALSE));
  else {
    PetscCall(StnHaloExchangeGhosts(a->halo, Vd[it], &xg));
    if (a->mf) {
      const StnMultArgs m = {Vd[it], NULL, a->d, NULL, Vd[it + 1], 0.0, 0.0, 0.0, xg};

      PetscCall(StnMatFreeApply(a->mf, &m));
    } else STN_CUDA_CALL(StnMGStepSplitCUDA(a->box, a->values, Vd[it], xg, NULL, a->d, NULL, 0.0, 0.0, -1.0, Vd[it + 1]));
  }
  for (PetscInt j = 0; j <= it + 1; j++) Vo[j] = Vd[j] + own;
  STN_CUDA_CALL(StnVecMDotBegin(Vo[it + 1], (int)it + 2, Vo, a->n, a->set, seq));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Takes the sums step_queue queued (seq) over the ranks and queues the rest of a's step it: the
   new vector's norm after Gram-Schmidt is sqrt(w.w - sum h_j^2) (the basis orthonormal, as
   Gram-Schmidt leaves it to rounding), known before the update, which then scales too (one
   pass); where w nearly lies in the basis (the difference below 1e-8 w.w: its digits lost to
   cancellation) the norm is taken from the vector after all, a second wait. The Hessenberg
   update stays on the device. */
static PetscErrorCode step_finish(Arnoldi *a, PetscInt it, unsigned seq)
{
  double          h[STN_VEC_MAX_MULTI + 1], minus_h[STN_VEC_MAX_MULTI], tt = 0, ww;
  double         *Vd[STN_VEC_MAX_MULTI + 1];
  const int       k  = (int)it + 1;
  long            off, n;

  PetscFunctionBeginUser;
  step_extent(a, it, &off, &n);
  for (int j = 0; j <= k; j++) Vd[j] = a->Vd[j] + off;
  STN_CUDA_CALL(StnVecMDotEnd(a->set, seq, k + 1, h)); /* h[k]: w.w */
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, h, k + 1, MPI_DOUBLE, MPI_SUM, a->comm));
  ww = h[k];
  for (int j = 0; j < k; j++) ww -= h[j] * h[j];
  const PetscBool known = (PetscBool)(ww > 1e-8 * h[k]); /* else (and for a NaN) the norm after the update */
  if (known) tt = PetscSqrtReal(ww);
  for (int j = 0; j < k; j++) minus_h[j] = known ? -h[j] / tt : -h[j];
  STN_CUDA_CALL(StnVecMAXPBY(Vd[it + 1], k, minus_h, known ? 1.0 / tt : 1.0, (const double *const *)Vd, n)); /* known: w = (w - V h) / tt */
  if (!known) PetscCall(norm_ranks(a->comm, a->Vd[it + 1] + owned_offset(a), a->n, &tt));
  STN_CUDA_CALL(StnGMRESStepFinish(&a->st, (int)it, h, tt, 1e-30, known ? NULL : Vd[it + 1], n, &a->ticket[it])); /* scales w unless done */
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Several ranks: the steps of every level noted, in step (see the top). First the start vectors'
   norms (VecNormalize's), then step it of every level that takes it: all the products and sums
   queued, then each level's sums taken in turn and the rest of its step queued. */
static PetscErrorCode run_pending(void)
{
  unsigned seq[STN_GMRES_REPORT_SETS];
  PetscInt most = 0;
  const int np = npending;

  PetscFunctionBeginUser;
  npending = 0; /* taken now: an error below leaves none half-run for later */
  for (int p = 0; p < np; p++) {
    Arnoldi      *a  = pending[p];
    const double *v0 = a->Vd[0] + owned_offset(a);

    STN_CUDA_CALL(StnVecMDotBegin(v0, 1, &v0, a->n, a->set, &seq[p]));
    most = PetscMax(most, a->steps);
  }
  for (int p = 0; p < np; p++) {
    Arnoldi *a = pending[p];
    double   local;

    STN_CUDA_CALL(StnVecMDotEnd(a->set, seq[p], 1, &local));
    PetscCallMPI(MPI_Allreduce(&local, &a->beta, 1, MPI_DOUBLE, MPI_SUM, a->comm));
    a->beta = PetscSqrtReal(a->beta);
    if (a->beta != 0) STN_CUDA_CALL(StnVecScale(a->Vd[0], 1.0 / a->beta, a->on_deep ? a->deep->n : a->n)); /* the widened rows too */
    STN_CUDA_CALL(StnGMRESStart(&a->st, a->beta));
  }
  for (PetscInt it = 0; it < most; it++) {
    for (int p = 0; p < np; p++)
      if (it < pending[p]->steps) PetscCall(step_queue(pending[p], it, &seq[p]));
    for (int p = 0; p < np; p++)
      if (it < pending[p]->steps) PetscCall(step_finish(pending[p], it, seq[p]));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode StnMGEstimateDeviceRun(void)
{
  PetscFunctionBeginUser;
  if (npending) PetscCall(run_pending());
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Queues a's steps from b with the operator D^-1 A, D^-1 in a->dinv: A the product mf without
   the matrix when there is one, else the SG-DIA values (box, values); on several ranks (halo)
   with the ranks' sums. flops: one product's. */
static PetscErrorCode queue_steps(Arnoldi *a, MPI_Comm comm, StnHalo halo, Mat mf, const StnBox *box, const PetscScalar *values, Vec b, PetscLogDouble flops)
{
  const PetscScalar *d;
  PetscInt           n, steps = a->steps;
  double            *Vd[STN_VEC_MAX_MULTI];

  PetscFunctionBeginUser;
  PetscCall(VecGetLocalSize(b, &n));
  PetscCall(VecPointwiseMult(a->V0, a->dinv, b)); /* the preconditioned residual of the zero guess */
  {
    PetscScalar *v;

    PetscCall(VecCUDAGetArray(a->V0, &v));
    Vd[0] = v;
    PetscCall(VecCUDARestoreArray(a->V0, &v));
  }
  a->on_deep = (PetscBool)(halo && mf && a->deep);
  if (!a->on_deep && !a->basis) STN_CUDA_CALL(StnCUDAMalloc((void **)&a->basis, sizeof(double) * (size_t)steps * (size_t)(n > 0 ? n : 1)));
  for (PetscInt i = 1; i <= steps; i++) Vd[i] = a->on_deep ? NULL : a->basis + (size_t)(i - 1) * (size_t)n;
  a->ranks = (PetscBool)(halo != NULL);
  PetscCall(VecCUDAGetArrayRead(a->dinv, &d));
  if (halo) { /* noted for run_pending, which all the levels' steps wait for */
    unnote(a); /* noted before and never run: nothing of it runs */
    PetscCheck(npending < STN_GMRES_REPORT_SETS, comm, PETSC_ERR_PLIB, "more estimates noted than report sets");
    a->comm = comm, a->halo = halo, a->mf = mf, a->box = box, a->values = values, a->d = d;
    for (PetscInt i = 0; i <= steps; i++) a->Vd[i] = Vd[i];
    if (a->on_deep) { /* the state, the diagonal and V[0] into the widened box */
      PetscCall(StnDeepSetOperator(a->deep, mf, a->dinv));
      PetscCall(StnHaloExchangeInto(a->deep->halo, Vd[0], a->wbasis));
      for (PetscInt i = 0; i <= steps; i++) a->Vd[i] = a->wbasis + (size_t)i * (size_t)a->deep->n;
    }
    pending[npending++] = a;
  } else STN_CUDA_CALL(StnGMRESStartNormalize(&a->st, Vd[0], (long)n)); /* VecNormalize's, left on the device */
  for (PetscInt it = 0; it < steps && !halo; it++) { /* V[it + 1] = D^-1 A V[it], then the step */
    if (mf) {
      const StnMultArgs m = {Vd[it], NULL, d, NULL, Vd[it + 1], 0.0, 0.0, 0.0, NULL};

      PetscCall(StnMatFreeApply(mf, &m));
    } else STN_CUDA_CALL(StnSGDIAMultCUDA(box, values, Vd[it], 0, d, Vd[it + 1], 2, NULL));
    STN_CUDA_CALL(StnGMRESStepLaunch(&a->st, (int)it, 1e-30, Vd[it + 1], (const double *const *)Vd, (long)n, &a->ticket[it]));
  }
  PetscCall(VecCUDARestoreArrayRead(a->dinv, &d));
  PetscCall(PetscLogGpuFlops(steps * (flops + 4.0 * n * (steps + 2)) + 3.0 * n));
  a->queued = PETSC_TRUE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Several ranks, a product without the matrix: a's widened box (see the top) for P's grid, made
   at the grid's first estimate, or none (collective: every rank alike). None with
   -stn_mg_deep_ghosts 0, where StnDeepCreate refuses, or where the depth exceeds a quarter of a
   rank's planes: there the redundant rows would cost more than the exchanges they save. */
static PetscErrorCode deep_of(Arnoldi *a, Mat P)
{
  MPI_Comm      comm = PetscObjectComm((PetscObject)P);
  DM            da;
  PetscObjectId id = 0;
  PetscBool     want = PETSC_TRUE;
  const char   *why  = "-stn_mg_deep_ghosts 0";
  int           renew, have;

  PetscFunctionBeginUser;
  PetscCall(MatGetDM(P, &da));
  if (da) PetscCall(PetscObjectGetId((PetscObject)da, &id));
  renew = !a->deep_tried || a->deep_dm != id;
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &renew, 1, MPI_INT, MPI_LOR, comm));
  if (!renew) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(StnDeepDestroy(&a->deep));
  STN_CUDA_CALL(StnCUDAFree(a->wbasis));
  a->wbasis = NULL, a->deep_tried = PETSC_TRUE, a->deep_dm = id;
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-stn_mg_deep_ghosts", &want, NULL));
  have = want && da != NULL;
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &have, 1, MPI_INT, MPI_LAND, comm));
  if (have) PetscCall(StnDeepCreate(da, a->steps, PETSC_FALSE, &a->deep, &why)); /* depth: width * steps */
  else if (want) why = "no grid";
  have = a->deep && (long)a->deep->om[0] * a->deep->om[1] * a->deep->om[2] * a->deep->dof == (long)a->n && 4 * a->deep->depth <= a->deep->om[a->deep->axis];
  if (a->deep && !have) why = "a rank owns fewer than four times the ghosts' planes";
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &have, 1, MPI_INT, MPI_LAND, comm));
  if (!have) {
    PetscCall(StnDeepDestroy(&a->deep));
    PetscCall(PetscInfo(P, "the eigenvalue estimate exchanges its ghosts every step: %s\n", why ? why : "refused"));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  STN_CUDA_CALL(StnCUDAMalloc((void **)&a->wbasis, sizeof(double) * (size_t)(a->steps + 1) * (size_t)a->deep->n));
  PetscCall(PetscInfo(P, "the eigenvalue estimate: deep ghosts, %d planes, three exchanges per estimate\n", a->deep->depth));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* est's engine for vectors like b, its tolerances and report slots; *ok false when est is not
   GMRES (-mg_levels_esteig_ksp_type) or its steps are not ones the engine takes. */
static PetscErrorCode arnoldi_of(KSP est, Vec b, int set, MPI_Comm comm, Arnoldi **a, PetscBool *ok)
{
  PetscInt  steps;
  PetscBool gmres;

  PetscFunctionBeginUser;
  PetscCall(KSPGetTolerances(est, NULL, NULL, NULL, &steps));
  PetscCall(PetscObjectTypeCompare((PetscObject)est, KSPGMRES, &gmres)); /* else PETSc's KSPSolve */
  *ok = (PetscBool)(gmres && set >= 1 && set < STN_GMRES_REPORT_SETS && steps >= 1 && steps < STN_VEC_MAX_MULTI);
  if (!*ok) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(get_arnoldi(est, b, steps, comm, a));
  PetscCall(KSPGetTolerances(est, &(*a)->rtol, &(*a)->abstol, NULL, NULL));
  (*a)->st.reports = set * STN_VEC_MAX_MULTI;
  (*a)->set        = set;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode StnMGEstimateDeviceBegin(KSP est, Mat A, Mat P, PC pc, Vec b, int set, StnHalo halo, PetscBool *queued)
{
  const StnBox      *box    = NULL;
  const PetscScalar *values = NULL;
  PetscLogDouble     flops  = 0; /* StnMatFreeApply logs its own */
  PetscBool          ok;
  PCJacobiType       jtype;
  PetscBool          matfree;
  Arnoldi           *a;

  PetscFunctionBeginUser;
  *queued = PETSC_FALSE;
  PetscCall(PetscObjectTypeCompare((PetscObject)pc, PCJACOBI, &ok));
  if (!ok) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PCJacobiGetType(pc, &jtype));
  PetscCall(PCJacobiGetUseAbs(pc, &ok));
  if (jtype != PC_JACOBI_DIAGONAL || ok) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(StnMatFreeReady(A, &matfree));
  if (halo && !matfree) { /* several ranks: the matrix's values, the ghosts through the exchange */
    PetscCall(MatSGDIAGetDeviceValues(P, &box, &values, &ok));
    if (!ok) PetscFunctionReturn(PETSC_SUCCESS);
    flops = 2.0 * box->nsten * box->dof * box->dof * (PetscLogDouble)box->xm * box->ym * box->zm;
  } else if (!halo) {
    PetscCall(MatSGDIAGetDeviceOperator(P, &box, &values, &flops, &ok));
    if (!ok) PetscFunctionReturn(PETSC_SUCCESS);
    if (matfree) flops = 0; /* StnMatFreeApply logs its own */
  }
  PetscCall(arnoldi_of(est, b, set, halo ? PetscObjectComm((PetscObject)P) : PETSC_COMM_SELF, &a, &ok));
  if (!ok) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatGetDiagonal(P, a->dinv)); /* Jacobi's: 1 / the diagonal */
  PetscCall(VecReciprocal(a->dinv));
  if (halo && matfree) PetscCall(deep_of(a, P));
  PetscCall(queue_steps(a, PetscObjectComm((PetscObject)P), halo, matfree ? A : NULL, box, values, b, flops));
  *queued = PETSC_TRUE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode StnMGEstimateDeviceBeginWhole(KSP est, const StnBox *box, const PetscScalar *values, Vec dinv, Vec b, int set, PetscBool *queued)
{
  Arnoldi  *a;
  PetscBool ok;

  PetscFunctionBeginUser;
  *queued = PETSC_FALSE;
  PetscCall(arnoldi_of(est, b, set, PETSC_COMM_SELF, &a, &ok));
  if (!ok) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(VecCopy(dinv, a->dinv));
  PetscCall(queue_steps(a, PETSC_COMM_SELF, NULL, NULL, box, values, b, 2.0 * box->nsten * box->dof * box->dof * (PetscLogDouble)box->xm * box->ym * box->zm));
  *queued = PETSC_TRUE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode StnMGEstimateDeviceEnd(KSP est, PetscReal *emax, PetscBool *done)
{
  PetscContainer container;
  Arnoldi       *a = NULL;
  PetscInt       taken = 0;
  PetscBool      stopped = PETSC_FALSE;
  double         beta;

  PetscFunctionBeginUser;
  *emax = 0;
  *done = PETSC_FALSE;
  PetscCall(PetscObjectQuery((PetscObject)est, "StnArnoldi", (PetscObject *)&container));
  if (container) PetscCall(PetscContainerGetPointer(container, (void **)&a));
  if (!a || !a->queued) PetscFunctionReturn(PETSC_SUCCESS);
  if (noted(a)) PetscCall(run_pending()); /* its steps, with every other level noted */
  a->queued = PETSC_FALSE;
  *done     = PETSC_TRUE;
  if (a->ranks) beta = a->beta;
  else STN_CUDA_CALL(StnCUDAMemcpyDtoH(&beta, a->st.beta, sizeof beta)); /* after everything queued */
  /* As KSPGMRES would stop: at a breakdown, or once the residual estimate meets the tolerances.
     A zero start (beta 0) has no estimate, as after VecNormalize of a zero vector. */
  for (PetscInt it = 0; it < a->steps; it++) {
    StnGMRESReport rep;

    STN_CUDA_CALL(StnGMRESStepWait(a->st.reports + (int)it, a->ticket[it], &rep));
    if (stopped) continue;
    taken   = it + 1;
    stopped = (PetscBool)(rep.null || rep.hapend || rep.res <= PetscMax(a->rtol * beta, a->abstol));
  }
  if (beta == 0) PetscFunctionReturn(PETSC_SUCCESS);
  {
    double      hh[(STN_VEC_MAX_MULTI + 2) * STN_VEC_MAX_MULTI], grs[STN_VEC_MAX_MULTI + 2], c[STN_VEC_MAX_MULTI + 1], s[STN_VEC_MAX_MULTI + 1];
    double      H[STN_VEC_MAX_MULTI * STN_VEC_MAX_MULTI], re[STN_VEC_MAX_MULTI], im[STN_VEC_MAX_MULTI], work[5 * STN_VEC_MAX_MULTI], dummy = 0;
    PetscBLASInt bn, one = 1, lwork = 5 * STN_VEC_MAX_MULTI, info = 0;

    STN_CUDA_CALL(StnGMRESGetHessenberg(&a->st, (int)taken - 1, hh, grs));
    STN_CUDA_CALL(StnCUDAMemcpyDtoH(c, a->st.cc, sizeof(double) * (size_t)taken));
    STN_CUDA_CALL(StnCUDAMemcpyDtoH(s, a->st.ss, sizeof(double) * (size_t)taken));
    unrotate(taken, a->st.ld, hh, c, s, H);
    PetscCall(PetscBLASIntCast(taken, &bn));
    PetscCall(PetscFPTrapPush(PETSC_FP_TRAP_OFF));
    PetscCallBLAS("LAPACKgeev", LAPACKgeev_("N", "N", &bn, H, &bn, re, im, &dummy, &one, &dummy, &one, work, &lwork, &info));
    PetscCall(PetscFPTrapPop());
    PetscCheck(!info, PETSC_COMM_SELF, PETSC_ERR_LIB, "the eigenvalue estimate's LAPACK geev failed (info %d)", (int)info);
    for (PetscInt e = 0; e < taken; e++) *emax = PetscMax(*emax, re[e]);
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}
#endif
