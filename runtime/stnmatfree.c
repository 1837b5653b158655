/*
** stnmatfree.c: the Jacobian's product without its matrix (stnmatfree.h), a MATSHELL. The state
** is a copy of the ghosted local vector the Jacobian was evaluated at (SNES hands the callback a
** vector it reuses), taken once per Jacobian. The product's launch shape is its own, per grid
** (StnKernelsProductShape: -stn_autotune tunes it like the residual's).
*/
#include "stnmatfree.h"

#include "stncuda.h" /* StnCUDALastError */
#include "stnhalo.h" /* StnHaloExchange: the product's ghosts on several ranks */

#if defined(PETSC_HAVE_CUDA)

typedef struct {
  StnKernels    *k;
  void          *user;
  StnLocalInfo   info;  /* the state's grid, as the kernel sees it */
  StnKernelShape shape;
  Vec            state; /* ghosted, local, on the device; NULL until the first Jacobian */
  PetscLogDouble flops; /* per product: 2 per entry of the block rows */
  StnTwins       levels; /* which coarser grids get twins (StnMatFreeCreate) */
  DM             da;     /* several ranks: the grid, whose exchange takes MatMult's ghosts of w */
  StnHalo        halo;   /*   device to device (stnhalo.h, the grid's own, from the first), or */
  Vec            wl;     /*   where that cannot be made DMGlobalToLocal into wl */
  PetscBool      tried;
} MatFree;

/* The product over info's owned box at the state x (device, laid out in info's ghosted box). */
static PetscErrorCode apply(MatFree *mf, const StnLocalInfo *info, const PetscScalar *x, const StnMultArgs *m)
{
  const double rows = (double)info->xm * info->ym * info->zm, owned = (double)mf->info.xm * mf->info.ym * mf->info.zm;
  int          rc;

  PetscFunctionBeginUser;
  PetscCall(PetscLogGpuTimeBegin());
  rc = mf->k->jacobian_mult(info, mf->user, x, m, &mf->shape);
  PetscCall(PetscLogGpuTimeEnd());
  PetscCheck(rc == 0, PETSC_COMM_SELF, PETSC_ERR_LIB, "the Jacobian's product kernel failed: %s", StnCUDALastError());
  PetscCall(PetscLogGpuFlops(owned > 0 ? mf->flops * rows / owned : 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode StnMatFreeApply(Mat J, const StnMultArgs *m)
{
  MatFree           *mf;
  const PetscScalar *x;

  PetscFunctionBeginUser;
  PetscCall(MatShellGetContext(J, &mf));
  PetscCheck(mf->state, PetscObjectComm((PetscObject)J), PETSC_ERR_ORDER, "the Jacobian without its matrix has no state yet: it is set when the Jacobian is evaluated");
  PetscCall(VecCUDAGetArrayRead(mf->state, &x));
  PetscCall(apply(mf, &mf->info, x, m));
  PetscCall(VecCUDARestoreArrayRead(mf->state, &x));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode StnMatFreeApplyAt(Mat J, const StnLocalInfo *info, const PetscScalar *state, const StnMultArgs *m)
{
  MatFree *mf;

  PetscFunctionBeginUser;
  PetscCall(MatShellGetContext(J, &mf));
  PetscCall(apply(mf, info, state, m));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode StnMatFreeGetState(Mat J, StnLocalInfo *info, Vec *state)
{
  MatFree *mf;

  PetscFunctionBeginUser;
  PetscCall(MatShellGetContext(J, &mf));
  *info  = mf->info;
  *state = mf->state;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* y = J w; on several ranks w's neighbours from its ghosts: the device exchange's (the ghosts alone), queued
   like the product (PETSc's DMGlobalToLocal stages through host memory and waits for the device
   there, where the MPI cannot read device memory), else DMGlobalToLocal's. */
static PetscErrorCode MatMult_MatFree(Mat J, Vec w, Vec y)
{
  MatFree           *mf;
  StnMultArgs        m = {0};
  const PetscScalar *wa, *wla = NULL;
  PetscScalar       *ya;

  PetscFunctionBeginUser;
  PetscCall(MatShellGetContext(J, &mf));
  PetscCall(VecCUDAGetArrayRead(w, &wa));
  if (mf->da && !mf->tried) { /* collective, as MatMult is: the same result on every rank */
    const char *why;

    mf->tried = PETSC_TRUE;
    PetscCall(StnDMGetExchange(mf->da, &mf->halo, &why));
    if (!mf->halo) PetscCall(PetscInfo(J, "the product's ghosts go through DMGlobalToLocal: %s\n", why));
  }
  if (mf->halo) PetscCall(StnHaloExchangeGhosts(mf->halo, wa, &wla)); /* its owned points are read from w */
  else if (mf->da) {
    if (!mf->wl) PetscCall(DMCreateLocalVector(mf->da, &mf->wl));
    PetscCall(DMGlobalToLocal(mf->da, w, INSERT_VALUES, mf->wl));
    PetscCall(VecCUDAGetArrayRead(mf->wl, &wla));
  }
  PetscCall(VecCUDAGetArrayWrite(y, &ya));
  m.w  = wa;
  m.wg = wla;
  m.y  = ya;
  PetscCall(StnMatFreeApply(J, &m));
  PetscCall(VecCUDARestoreArrayWrite(y, &ya));
  PetscCall(VecCUDARestoreArrayRead(w, &wa));
  if (mf->da && !mf->halo) PetscCall(VecCUDARestoreArrayRead(mf->wl, &wla));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatDestroy_MatFree(Mat J)
{
  MatFree *mf;

  PetscFunctionBeginUser;
  PetscCall(MatShellGetContext(J, &mf));
  PetscCall(VecDestroy(&mf->state));
  PetscCall(VecDestroy(&mf->wl));
  PetscCall(DMDestroy(&mf->da)); /* and with it, when last, its exchange */
  PetscCall(PetscFree(mf));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatView_MatFree(Mat J, PetscViewer viewer)
{
  PetscBool ascii;

  PetscFunctionBeginUser;
  (void)J;
  PetscCall(PetscObjectTypeCompare((PetscObject)viewer, PETSCVIEWERASCII, &ascii));
  if (ascii) PetscCall(PetscViewerASCIIPrintf(viewer, "the Jacobian without its matrix: J w by the generated kernel (-stn_operator matfree)\n"));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode StnMatFreeCreate(DM da, StnTwins levels, Mat *J)
{
  MatFree    *mf;
  PetscInt    n, N;
  PetscMPIInt size;
  Vec         v;
  VecType     vtype;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)da), &size));
  PetscCall(DMGetGlobalVector(da, &v));
  PetscCall(VecGetLocalSize(v, &n));
  PetscCall(VecGetSize(v, &N));
  PetscCall(DMRestoreGlobalVector(da, &v));
  PetscCall(PetscNew(&mf));
  mf->levels = levels;
  if (size > 1) {
    mf->da = da;
    PetscCall(PetscObjectReference((PetscObject)da));
  }
  PetscCall(MatCreateShell(PetscObjectComm((PetscObject)da), n, n, N, N, mf, J));
  PetscCall(DMGetVecType(da, &vtype));
  PetscCall(MatShellSetVecType(*J, vtype));
  PetscCall(MatShellSetOperation(*J, MATOP_MULT, (void (*)(void))MatMult_MatFree));
  PetscCall(MatShellSetOperation(*J, MATOP_DESTROY, (void (*)(void))MatDestroy_MatFree));
  PetscCall(MatShellSetOperation(*J, MATOP_VIEW, (void (*)(void))MatView_MatFree));
  PetscCall(PetscObjectComposeFunction((PetscObject)*J, "StnMatFree_C", (void (*)(void))StnMatFreeCreate)); /* the mark StnMatFreeSetState looks for */
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode ours(Mat J, MatFree **mf)
{
  void (*mark)(void) = NULL;

  PetscFunctionBeginUser;
  *mf = NULL;
  if (J) PetscCall(PetscObjectQueryFunction((PetscObject)J, "StnMatFree_C", &mark));
  if (mark) PetscCall(MatShellGetContext(J, mf));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode StnMatFreeSetState(Mat J, const DMDALocalInfo *info, Vec X, StnKernels *k, void *user, PetscInt nstencil)
{
  MatFree *mf;
  PetscInt n = 0, nx;

  PetscFunctionBeginUser;
  PetscCall(ours(J, &mf));
  if (!mf) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCheck(k->jacobian_mult, PETSC_COMM_SELF, PETSC_ERR_SUP, "this program has no product kernel for -stn_operator matfree: build it again with this stencilc");
  if (mf->state) PetscCall(VecGetSize(mf->state, &n));
  PetscCall(VecGetSize(X, &nx));
  if (n != nx) {
    PetscCall(VecDestroy(&mf->state));
    PetscCall(VecDuplicate(X, &mf->state));
  }
  PetscCall(VecCopy(X, mf->state));
  mf->k    = k;
  mf->user = user;
  mf->info = StnLocalInfoOf(info);
  {
    const PetscScalar *x;

    PetscCall(VecCUDAGetArrayRead(mf->state, &x));
    PetscCall(StnKernelsProductShape(k, info, user, x, &mf->shape));
    PetscCall(VecCUDARestoreArrayRead(mf->state, &x));
  }
  mf->flops = 2.0 * nstencil * info->dof * info->dof * (PetscLogDouble)info->xm * info->ym * info->zm;
  PetscCall(MatAssemblyBegin(J, MAT_FINAL_ASSEMBLY)); /* a new operator: its state changes */
  PetscCall(MatAssemblyEnd(J, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode StnMatFreeReady(Mat J, PetscBool *ready)
{
  MatFree *mf;

  PetscFunctionBeginUser;
  PetscCall(ours(J, &mf));
  *ready = mf && mf->state ? PETSC_TRUE : PETSC_FALSE;
  PetscFunctionReturn(PETSC_SUCCESS);
}
/* P's twin, composed on it under this name. */
static const char twin_name[] = "StnMatFreeTwin";

PetscErrorCode StnMatFreeUpdate(Mat J, Mat P, const DMDALocalInfo *info, Vec X, StnKernels *k, void *user, PetscInt nstencil)
{
  MatFree *mf;
  Mat      twin = NULL;

  PetscFunctionBeginUser;
  PetscCall(ours(J, &mf));
  if (mf) {
    twin              = J;
    k->product_levels = (PetscInt)mf->levels;
  } else PetscCall(PetscObjectQuery((PetscObject)P, twin_name, (PetscObject *)&twin));
  if (!twin && (k->product_levels == 2 || (k->product_levels == 1 && (PetscInt)info->xm * info->ym * info->zm * info->dof >= STN_MATFREE_MIN_ROWS))) {
    PetscCall(StnMatFreeCreate(info->da, STN_TWINS_NONE, &twin));
    PetscCall(PetscObjectCompose((PetscObject)P, twin_name, (PetscObject)twin));
    PetscCall(MatDestroy(&twin)); /* P holds it */
    PetscCall(PetscObjectQuery((PetscObject)P, twin_name, (PetscObject *)&twin));
  }
  if (twin) PetscCall(StnMatFreeSetState(twin, info, X, k, user, nstencil));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode StnMatFreeOfLevel(Mat A, Mat P, Mat *mf)
{
  PetscBool ready;
  Mat       twin = NULL;

  PetscFunctionBeginUser;
  *mf = NULL;
  PetscCall(StnMatFreeReady(A, &ready));
  if (ready) {
    *mf = A;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (P) PetscCall(PetscObjectQuery((PetscObject)P, twin_name, (PetscObject *)&twin));
  if (twin) PetscCall(StnMatFreeReady(twin, &ready));
  if (twin && ready) *mf = twin;
  PetscFunctionReturn(PETSC_SUCCESS);
}
#endif
