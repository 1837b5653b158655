/*
** stnmgdeep.c: deep ghosts for a split multigrid level (stnmgdeep.h). The widened box differs
** from the owned box only along the last axis, so a box of k planes more is an offset into the
** widened array and the generated product runs on it as on an owned box: its owned points read
** from w, the rest from wg, both the widened array (StnMultArgs).
*/
#include "stnmgdeep.h"

#if defined(PETSC_HAVE_CUDA)
  #include <petscdevice_cuda.h> /* VecCUDAGetArrayRead */

  #include "stncoef.h" /* StnDMHasCoefficients */
  #include "stncuda.h"
  #include "stnmatfree.h"
  #include "stnmg.h" /* StnDMDABox */

/* Points of a plane across the split axis: the slab's extent in the other directions. */
static long plane(const StnDeep *dp)
{
  long p = 1;
  for (int d = 0; d < dp->axis; d++) p *= dp->om[d];
  return p;
}

PetscErrorCode StnDeepCreate(DM da, PetscInt units, PetscBool vectors, StnDeep **deep, const char **why)
{
  PetscInt       dim, dof, s, n[3];
  DMBoundaryType bt[3];
  StnDeep       *dp;
  PetscBool      coef;
  int            ok = 1, why_code;
  const char    *whys[] = {"the grid is not split along its last axis alone, or has a periodic direction",
                           "the product reads coefficients from files, laid out in the grid's own ghosted box"};

  PetscFunctionBeginUser;
  *deep = NULL;
  *why  = NULL;
  PetscCall(DMDAGetInfo(da, &dim, &n[0], &n[1], &n[2], NULL, NULL, NULL, &dof, &s, &bt[0], &bt[1], &bt[2], NULL));
  PetscCall(PetscNew(&dp));
  dp->width = (int)s, dp->depth = (int)(s * units), dp->axis = (int)dim - 1, dp->dof = (int)dof;
  PetscCall(StnDMDABox(da, PETSC_FALSE, dp->os, dp->om));
  for (int d = 0; d < 3; d++) {
    dp->es[d] = dp->os[d], dp->em[d] = dp->om[d];
    if (d < dim && bt[d] == DM_BOUNDARY_PERIODIC) ok = 0;
    if (d < dp->axis && (dp->os[d] != 0 || dp->om[d] != n[d])) ok = 0; /* not a slab */
  }
  if (dim < 2) ok = 0;
  PetscCall(StnDMHasCoefficients(da, &coef));
  why_code = !ok ? 0 : coef ? 1 : 2; /* 2: none */
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &why_code, 1, MPI_INT, MPI_MIN, PetscObjectComm((PetscObject)da)));
  if (why_code < 2) {
    *why = whys[why_code];
    PetscCall(PetscFree(dp));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  {
    const int a = dp->axis, lo = PetscMax(0, dp->os[a] - dp->depth), hi = PetscMin((int)n[a], dp->os[a] + dp->om[a] + dp->depth);

    dp->es[a] = lo, dp->em[a] = hi - lo;
  }
  PetscCall(StnHaloCreateBox(da, dp->es, dp->em, &dp->halo, why));
  if (!dp->halo) {
    PetscCall(PetscFree(dp));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  dp->n      = plane(dp) * dp->em[dp->axis] * dof;
  dp->offset = plane(dp) * (dp->os[dp->axis] - dp->es[dp->axis]) * dof;
  STN_CUDA_CALL(StnCUDAMalloc((void **)&dp->d, (vectors ? 6 : 2) * sizeof(PetscScalar) * (size_t)dp->n));
  dp->state = dp->d + dp->n;
  if (vectors) dp->b = dp->d + 2 * dp->n, dp->x[0] = dp->d + 3 * dp->n, dp->x[1] = dp->d + 4 * dp->n, dp->r = dp->d + 5 * dp->n;
  *deep = dp;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode StnDeepDestroy(StnDeep **deep)
{
  PetscFunctionBeginUser;
  if (!*deep) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(StnHaloDestroy(&(*deep)->halo));
  STN_CUDA_CALL(StnCUDAFree((*deep)->d)); /* and the vectors after it */
  PetscCall(PetscFree(*deep));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* info's owned box (start s, extent m) set to [s, s + m) in direction d; its ghosted box too when ghosted. */
static void set_info_box(StnLocalInfo *info, int d, int s, int m, PetscBool ghosted)
{
  int *const start[3] = {&info->xs, &info->ys, &info->zs}, *const extent[3] = {&info->xm, &info->ym, &info->zm};
  int *const gstart[3] = {&info->gxs, &info->gys, &info->gzs}, *const gextent[3] = {&info->gxm, &info->gym, &info->gzm};

  *(ghosted ? gstart : start)[d] = s, *(ghosted ? gextent : extent)[d] = m;
}

PetscErrorCode StnDeepSetOperator(StnDeep *dp, Mat mf, Vec dinv)
{
  StnLocalInfo       info;
  Vec                state;
  const PetscScalar *x, *d;
  const int          a = dp->axis;

  PetscFunctionBeginUser;
  PetscCall(StnMatFreeGetState(mf, &info, &state));
  PetscCheck(state, PETSC_COMM_SELF, PETSC_ERR_ORDER, "the Jacobian without its matrix has no state yet");
  {
    const int s[3] = {info.xs, info.ys, info.zs}, m[3] = {info.xm, info.ym, info.zm};

    for (int k = 0; k < 3; k++) PetscCheck(s[k] == dp->os[k] && m[k] == dp->om[k], PETSC_COMM_SELF, PETSC_ERR_ARG_INCOMP, "the product's state is not on the grid of the deep ghosts");
  }
  {
    const int gs[3] = {info.gxs, info.gys, info.gzs};

    PetscCall(VecCUDAGetArrayRead(state, &x)); /* its owned box, one run of the ghosted array on a slab */
    PetscCall(StnHaloExchangeInto(dp->halo, x + plane(dp) * (dp->os[a] - gs[a]) * dp->dof, dp->state));
    PetscCall(VecCUDARestoreArrayRead(state, &x));
  }
  PetscCall(VecCUDAGetArrayRead(dinv, &d));
  PetscCall(StnHaloExchangeInto(dp->halo, d, dp->d));
  PetscCall(VecCUDARestoreArrayRead(dinv, &d));
  set_info_box(&info, a, dp->es[a], dp->em[a], PETSC_TRUE);
  dp->info = info;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The planes [*lo, *hi) of the owned box widened by k, clipped to the widened box. */
static void widened(const StnDeep *dp, int k, int *lo, int *hi)
{
  const int a = dp->axis;

  *lo = PetscMax(dp->es[a], dp->os[a] - k), *hi = PetscMin(dp->es[a] + dp->em[a], dp->os[a] + dp->om[a] + k);
}

void StnDeepBox(const StnDeep *dp, int k, int s[3], int m[3])
{
  const int a = dp->axis;
  int       lo, hi;

  widened(dp, k, &lo, &hi);
  for (int d = 0; d < 3; d++) s[d] = dp->os[d], m[d] = dp->om[d];
  s[a] = lo, m[a] = hi - lo;
}

/* Where plane lo of the widened box starts in its arrays. */
static long offset_of(const StnDeep *dp, int lo) { return plane(dp) * dp->dof * (lo - dp->es[dp->axis]); }

void StnDeepExtent(const StnDeep *dp, int k, long *off, long *len)
{
  int lo, hi;

  widened(dp, k, &lo, &hi);
  *off = offset_of(dp, lo), *len = plane(dp) * dp->dof * (hi - lo);
}

PetscErrorCode StnDeepStep(const StnDeep *dp, Mat mf, int k, const PetscScalar *x, const PetscScalar *b, const PetscScalar *d, const PetscScalar *p, PetscReal alpha, PetscReal beta, PetscReal gamma, PetscScalar *y, PetscBool y_owned)
{
  const int    a = dp->axis;
  int          lo, hi;
  long         off;
  StnLocalInfo info = dp->info;

  PetscFunctionBeginUser;
  PetscCheck(!y_owned || k == 0, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "an owned output takes the owned box alone");
  widened(dp, k, &lo, &hi);
  off = offset_of(dp, lo);
  set_info_box(&info, a, lo, hi - lo, PETSC_FALSE);
  {
    const StnMultArgs m = {x + off, b ? b + off : NULL, d ? d + off : NULL, p ? p + off : NULL, y_owned ? y : y + off, alpha, beta, gamma, x};

    PetscCall(StnMatFreeApplyAt(mf, &info, dp->state, &m));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}
#endif
