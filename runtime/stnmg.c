/*
** stnmg.c: the multigrid hierarchy from the stencil (stnmg.h). Three parts:
**   - every grid of the hierarchy makes SG-DIA matrices (StnDMUseSGDIA), so the generated
**     Jacobian fills each level's operator, on the device on the GPU;
**   - the PCMG defaults for that hierarchy: the number of levels, Jacobi smoothers;
**   - the coarse solve: the dense inverse of the coarsest operator, one product per apply.
**
** Why a private header: PETSc gives a DMDA's matrices their type through DMSetMatType and
** MatSetType, which must construct the matrix before it knows its grid; SG-DIA needs the grid.
** The one thing we change, ops->creatematrix, is what DMCoarsen and DMRefine copy to every
** grid they make (that is how a hierarchy keeps a user's matrices), and it has the same form
** in PETSc 3.18 and 3.24.
*/
#include <petsc/private/dmimpl.h>
#include <petsc/private/kspimpl.h> /* KSP.setupnewmatrix */
#include <petsc/private/petscimpl.h> /* PetscObjectComposedData*: a value valid for one state of an object */

#include "stnmg.h"
#include "stnmatfree.h"
#include "stnmg_cuda.h" /* stn_noise */
#include "sgdia.h"
#if defined(PETSC_HAVE_CUDA)
  #include "stncoarse_cuda.h" /* the coarse solve on the device */
#endif

/* One program has one stencil: the offsets every grid's SG-DIA matrix is made with, and
   PETSc's own DMCreateMatrix for the AIJ copies some preconditioners need. */
static PetscInt  stencil_n;
static PetscInt *stencil_offsets;
static PetscErrorCode (*create_aij)(DM, Mat *);

static PetscErrorCode free_stencil(void)
{
  PetscFunctionBeginUser;
  PetscCall(PetscFree(stencil_offsets));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DMCreateMatrix_SGDIA(DM dm, Mat *A)
{
  PetscFunctionBeginUser;
  PetscCall(MatCreateSGDIA(dm, stencil_n, stencil_offsets, A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode StnDMUseSGDIA(DM da, PetscInt nsten, const PetscInt offsets[][3])
{
  PetscFunctionBeginUser;
  if (da->ops->creatematrix == DMCreateMatrix_SGDIA) PetscFunctionReturn(PETSC_SUCCESS);
  if (!stencil_offsets) PetscCall(PetscRegisterFinalize(free_stencil));
  PetscCall(PetscFree(stencil_offsets));
  PetscCall(PetscMalloc1(3 * nsten, &stencil_offsets));
  PetscCall(PetscArraycpy(stencil_offsets, &offsets[0][0], 3 * nsten));
  stencil_n              = nsten;
  create_aij             = da->ops->creatematrix;
  da->ops->creatematrix = DMCreateMatrix_SGDIA;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscBool StnDMUsesSGDIA(DM da)
{
  return da->ops->creatematrix == DMCreateMatrix_SGDIA ? PETSC_TRUE : PETSC_FALSE;
}

PetscErrorCode StnDMCreateAIJ(DM da, MatType type, Mat *A)
{
  char   *saved = NULL;
  MatType old;

  PetscFunctionBeginUser;
  PetscCall(DMGetMatType(da, &old));
  PetscCall(PetscStrallocpy(old, &saved));
  PetscCall(DMSetMatType(da, type));
  if (StnDMUsesSGDIA(da)) PetscCall((*create_aij)(da, A));
  else PetscCall(DMCreateMatrix(da, A));
  PetscCall(DMSetMatType(da, saved));
  PetscCall(PetscFree(saved));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---- the levels ---- */

PetscErrorCode StnDMCountLevels(DM da, PetscInt *levels)
{
  PetscInt       dim, n[3], dof, width;
  DMBoundaryType bt[3];

  PetscFunctionBeginUser;
  PetscCall(DMDAGetInfo(da, &dim, &n[0], &n[1], &n[2], NULL, NULL, NULL, &dof, &width, &bt[0], &bt[1], &bt[2], NULL));
  *levels = 1;
  for (;;) {
    PetscInt  unknowns = dof, half[3];
    PetscBool halves   = PETSC_TRUE;

    for (PetscInt d = 0; d < dim; d++) {
      PetscBool periodic = bt[d] == DM_BOUNDARY_PERIODIC ? PETSC_TRUE : PETSC_FALSE;

      unknowns *= n[d];
      half[d] = periodic ? n[d] / 2 : (n[d] - 1) / 2 + 1;
      if ((periodic ? n[d] % 2 : (n[d] - 1) % 2) || half[d] < 2 * width + 1) halves = PETSC_FALSE;
    }
    if (unknowns <= STN_MG_COARSE_UNKNOWNS || !halves) break;
    for (PetscInt d = 0; d < dim; d++) n[d] = half[d];
    (*levels)++;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode StnDMSlabsFit(DM da, PetscMPIInt size, PetscBool *fit)
{
  PetscInt       dim, n[3], width, levels, refined, last;
  PetscBool      set;
  DMBoundaryType bt[3];

  PetscFunctionBeginUser;
  *fit = PETSC_FALSE;
  PetscCall(DMDAGetInfo(da, &dim, &n[0], &n[1], &n[2], NULL, NULL, NULL, NULL, &width, &bt[0], &bt[1], &bt[2], NULL));
  if (dim == 1) PetscFunctionReturn(PETSC_SUCCESS);
  for (PetscInt d = 0; d < dim - 1; d++)
    if (bt[d] != DM_BOUNDARY_NONE) PetscFunctionReturn(PETSC_SUCCESS); /* ghosts across the slab: no run */
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-pc_mg_levels", &levels, &set));
  if (!set) {
    PetscCall(DMGetRefineLevel(da, &refined));
    if (refined > 0) levels = refined + 1;
    else PetscCall(StnDMCountLevels(da, &levels));
  }
  last = n[dim - 1];
  for (PetscInt l = 1; l < levels; l++) last = bt[dim - 1] == DM_BOUNDARY_PERIODIC ? last / 2 : (last - 1) / 2 + 1;
  *fit = (PetscBool)(last / size >= PetscMax(width, 1));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---- the coarse solve: y = inverse(A) x, the inverse dense ---- */

typedef struct {
  Mat       inverse;   /* dense, on the host (the operator's values are there, or several ranks) */
  VecScatter to_all;   /* several ranks: every rank gathers the whole x into x_all, and computes */
  Vec        x_all;    /*   its own rows [rstart, rstart + nlocal) of y = inverse x */
  PetscInt   rstart, nlocal;
  PetscBool  stale;    /* several ranks: the operator changed since the inverse was formed, which
                          waits for its first use: the fused V-cycle with its coarse grids whole
                          (stnmgcycle.c) forms its own and never uses this one */
#if defined(PETSC_HAVE_CUDA)
  StnDenseInverse *device; /* the inverse in device memory, when the operator's values are there */
#endif
} DenseInverse;

#if defined(PETSC_HAVE_CUDA)
/* -log_view: the cuSOLVER handle and room for the inverse (once), the inverse (every Jacobian). */
static PetscLogEvent event_create, event_invert;

/* The inverse of P, an SG-DIA matrix on the device, formed there. *done: whether P is one. */
static PetscErrorCode DenseInverseSetUpDevice(DenseInverse *ctx, Mat P, PetscInt n, PetscBool *done)
{
  const StnBox      *box;
  const PetscScalar *values;
  int                zero_pivot, rows = -1;

  PetscFunctionBeginUser;
  PetscCall(MatSGDIAGetDeviceValues(P, &box, &values, done));
  if (!*done) PetscFunctionReturn(PETSC_SUCCESS);
  if (ctx->device) rows = StnDenseInverseRows(ctx->device);
  if (!event_create) {
    PetscCall(PetscLogEventRegister("StnMGCoarseNew", PC_CLASSID, &event_create));
    PetscCall(PetscLogEventRegister("StnMGCoarseInv", PC_CLASSID, &event_invert));
  }
  if (rows != (int)n) {
    PetscCall(PetscLogEventBegin(event_create, P, 0, 0, 0));
    STN_CUDA_CALL(StnDenseInverseDestroy(ctx->device));
    ctx->device = NULL;
    STN_CUDA_CALL(StnDenseInverseCreate((int)n, &ctx->device));
    PetscCall(PetscLogEventEnd(event_create, P, 0, 0, 0));
  }
  PetscCall(PetscLogEventBegin(event_invert, P, 0, 0, 0));
  STN_CUDA_CALL(StnDenseInverseSetSGDIA(ctx->device, box, values, &zero_pivot));
  PetscCall(PetscLogEventEnd(event_invert, P, 0, 0, 0));
  PetscCheck(zero_pivot == 0, PETSC_COMM_SELF, PETSC_ERR_MAT_LU_ZRPVT,
             "the coarsest grid's operator is singular (zero pivot in row %d of %" PetscInt_FMT "): give fewer levels (-pc_mg_levels) or another coarse solve (-mg_coarse_pc_type)", zero_pivot - 1, n);
  PetscFunctionReturn(PETSC_SUCCESS);
}
#endif

/* ctx->inverse = the inverse of A, a SEQAIJ matrix of n rows, on the host (A is consumed). */
static PetscErrorCode invert_on_host(DenseInverse *ctx, Mat A, PetscInt n)
{
  Mat           F, identity;
  MatFactorInfo info;

  PetscFunctionBeginUser;
  PetscCall(MatConvert(A, MATSEQDENSE, MAT_INPLACE_MATRIX, &A));
  PetscCall(MatGetFactor(A, MATSOLVERPETSC, MAT_FACTOR_LU, &F));
  PetscCall(MatFactorInfoInitialize(&info));
  PetscCall(MatLUFactorSymbolic(F, A, NULL, NULL, &info));
  PetscCall(MatLUFactorNumeric(F, A, &info));
  PetscCall(MatCreateSeqDense(PETSC_COMM_SELF, n, n, NULL, &identity)); /* zeros */
  PetscCall(MatAssemblyBegin(identity, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(identity, MAT_FINAL_ASSEMBLY));
  PetscCall(MatShift(identity, 1.0));
  PetscCall(MatDestroy(&ctx->inverse));
  PetscCall(MatCreateSeqDense(PETSC_COMM_SELF, n, n, NULL, &ctx->inverse));
  PetscCall(MatMatSolve(F, identity, ctx->inverse));
  PetscCall(MatDestroy(&identity));
  PetscCall(MatDestroy(&F));
  PetscCall(MatDestroy(&A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Several ranks: every rank forms the whole coarsest operator (MatCreateRedundantMatrix of its AIJ
   copy: a few hundred rows) and inverts it on the host, as PETSc's -mg_coarse_pc_type redundant
   factors it on every rank; an apply gathers x on every rank and multiplies by its own rows. */
static PetscErrorCode redundant_setup(DenseInverse *ctx, Mat P, PetscInt n)
{
  Mat         A, whole;
  Vec         x;
  PetscMPIInt size;
  PetscInt    rend;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)P), &size));
  PetscCall(MatConvert(P, MATAIJ, MAT_INITIAL_MATRIX, &A)); /* from device values if they are there */
  PetscCall(MatCreateRedundantMatrix(A, size, PETSC_COMM_SELF, MAT_INITIAL_MATRIX, &whole));
  PetscCall(MatDestroy(&A));
  PetscCall(invert_on_host(ctx, whole, n));
#if defined(PETSC_HAVE_CUDA)
  { /* vectors on the device: the inverse there too, for the fused V-cycle (StnMGCoarseInverseDevice) */
    VecType   vtype;
    PetscBool gpu;

    PetscCall(MatGetVecType(P, &vtype));
    PetscCall(PetscStrendswith(vtype, "cuda", &gpu));
    if (gpu) {
      const PetscScalar *inv;
      PetscInt           lda;

      if (ctx->device && StnDenseInverseRows(ctx->device) != (int)n) {
        STN_CUDA_CALL(StnDenseInverseDestroy(ctx->device));
        ctx->device = NULL;
      }
      if (!ctx->device) STN_CUDA_CALL(StnDenseInverseCreate((int)n, &ctx->device));
      PetscCall(MatDenseGetLDA(ctx->inverse, &lda));
      PetscCall(MatDenseGetArrayRead(ctx->inverse, &inv));
      STN_CUDA_CALL(StnDenseInverseSetHost(ctx->device, inv, (int)lda));
      PetscCall(MatDenseRestoreArrayRead(ctx->inverse, &inv));
    }
  }
#endif
  PetscCall(MatGetOwnershipRange(P, &ctx->rstart, &rend));
  ctx->nlocal = rend - ctx->rstart;
  if (ctx->x_all) { /* a new coarsest grid (-snes_grid_sequence refines the whole hierarchy): a new gather */
    PetscInt gathered;
    PetscCall(VecGetSize(ctx->x_all, &gathered));
    if (gathered != n) {
      PetscCall(VecScatterDestroy(&ctx->to_all));
      PetscCall(VecDestroy(&ctx->x_all));
    }
  }
  if (!ctx->to_all) {
    PetscCall(MatCreateVecs(P, &x, NULL));
    PetscCall(VecScatterCreateToAll(x, &ctx->to_all, &ctx->x_all));
    PetscCall(VecDestroy(&x));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode redundant_apply(DenseInverse *ctx, Vec x, Vec y)
{
  const PetscScalar *inv, *xa;
  PetscScalar       *ya;
  PetscInt           n, lda;

  PetscFunctionBeginUser;
  PetscCall(VecScatterBegin(ctx->to_all, x, ctx->x_all, INSERT_VALUES, SCATTER_FORWARD));
  PetscCall(VecScatterEnd(ctx->to_all, x, ctx->x_all, INSERT_VALUES, SCATTER_FORWARD));
  PetscCall(VecGetSize(ctx->x_all, &n));
  PetscCall(MatDenseGetLDA(ctx->inverse, &lda));
  PetscCall(MatDenseGetArrayRead(ctx->inverse, &inv));
  PetscCall(VecGetArrayRead(ctx->x_all, &xa));
  PetscCall(VecGetArrayWrite(y, &ya)); /* on the host: a few hundred values, copied up when next read there */
  for (PetscInt i = 0; i < ctx->nlocal; i++) {
    PetscScalar s = 0;
    for (PetscInt j = 0; j < n; j++) s += inv[j * lda + ctx->rstart + i] * xa[j];
    ya[i] = s;
  }
  PetscCall(VecRestoreArrayWrite(y, &ya));
  PetscCall(VecRestoreArrayRead(ctx->x_all, &xa));
  PetscCall(MatDenseRestoreArrayRead(ctx->inverse, &inv));
  PetscCall(PetscLogFlops(2.0 * ctx->nlocal * n));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Several ranks: the inverse of the operator pc holds now, if it is not formed yet. */
static PetscErrorCode redundant_form(PC pc, DenseInverse *ctx)
{
  Mat      P;
  PetscInt n;

  PetscFunctionBeginUser;
  if (!ctx->stale) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PCGetOperators(pc, NULL, &P));
  PetscCall(MatGetSize(P, &n, NULL));
  PetscCall(redundant_setup(ctx, P, n));
  ctx->stale = PETSC_FALSE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DenseInverseSetUp(PC pc)
{
  DenseInverse *ctx;
  Mat           P, A;
  PetscInt      n;
  PetscMPIInt   size;

  PetscFunctionBeginUser;
  PetscCall(PCShellGetContext(pc, &ctx));
  PetscCall(PCGetOperators(pc, NULL, &P));
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)P), &size));
  PetscCall(MatGetSize(P, &n, NULL));
  PetscCheck(n <= 16 * STN_MG_COARSE_UNKNOWNS, PetscObjectComm((PetscObject)pc), PETSC_ERR_SUP,
             "the coarsest grid has %" PetscInt_FMT " unknowns, too many for its dense inverse: give more levels (-pc_mg_levels) or grid sizes of the form 2^k m + 1", n);
  if (size > 1) {
    ctx->stale = PETSC_TRUE; /* formed at its first use: redundant_form */
    PetscFunctionReturn(PETSC_SUCCESS);
  }
#if defined(PETSC_HAVE_CUDA)
  PetscBool done;

  PetscCall(DenseInverseSetUpDevice(ctx, P, n, &done));
  if (done) PetscFunctionReturn(PETSC_SUCCESS);
#endif
  PetscCall(MatConvert(P, MATSEQAIJ, MAT_INITIAL_MATRIX, &A)); /* from device values if they are there */
  PetscCall(invert_on_host(ctx, A, n));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DenseInverseApply(PC pc, Vec x, Vec y)
{
  DenseInverse *ctx;

  PetscFunctionBeginUser;
  PetscCall(PCShellGetContext(pc, &ctx));
  PetscCall(redundant_form(pc, ctx));
  if (ctx->to_all) {
    PetscCall(redundant_apply(ctx, x, y));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
#if defined(PETSC_HAVE_CUDA)
  if (ctx->device) { /* the operator was on the device, so are its vectors */
    const PetscScalar *xa;
    PetscScalar       *ya;

    PetscCall(VecCUDAGetArrayRead(x, &xa));
    PetscCall(VecCUDAGetArrayWrite(y, &ya));
    STN_CUDA_CALL(StnDenseInverseApply(ctx->device, xa, ya));
    PetscCall(PetscLogGpuFlops(2.0 * StnDenseInverseRows(ctx->device) * StnDenseInverseRows(ctx->device)));
    PetscCall(VecCUDARestoreArrayWrite(y, &ya));
    PetscCall(VecCUDARestoreArrayRead(x, &xa));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
#endif
  PetscCall(MatMult(ctx->inverse, x, y));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DenseInverseDestroy(PC pc)
{
  DenseInverse *ctx;

  PetscFunctionBeginUser;
  PetscCall(PCShellGetContext(pc, &ctx));
  PetscCall(MatDestroy(&ctx->inverse));
  PetscCall(VecScatterDestroy(&ctx->to_all));
  PetscCall(VecDestroy(&ctx->x_all));
#if defined(PETSC_HAVE_CUDA)
  STN_CUDA_CALL(StnDenseInverseDestroy(ctx->device));
#endif
  PetscCall(PetscFree(ctx));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static const char dense_inverse_name[] = "stencilc dense inverse of the coarsest operator";

#if defined(PETSC_HAVE_CUDA)
/* ksp's dense inverse (set up for its operator now, not formed on several ranks), or NULL. */
static PetscErrorCode dense_inverse_of(KSP ksp, PC *pc, DenseInverse **ctx)
{
  PetscBool   match;
  const char *name = NULL;

  PetscFunctionBeginUser;
  *ctx = NULL;
  PetscCall(PetscObjectTypeCompare((PetscObject)ksp, KSPPREONLY, &match));
  if (!match) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(KSPSetUp(ksp));
  PetscCall(KSPGetPC(ksp, pc));
  PetscCall(PetscObjectTypeCompare((PetscObject)*pc, PCSHELL, &match));
  if (match) PetscCall(PCShellGetName(*pc, &name));
  if (!name || strcmp(name, dense_inverse_name)) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PCSetUp(*pc));
  PetscCall(PCShellGetContext(*pc, ctx));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode StnMGCoarseIsDenseInverse(KSP ksp, PetscBool *ok)
{
  PC            pc;
  DenseInverse *ctx;
  Mat           P;
  VecType       vtype;

  PetscFunctionBeginUser;
  *ok = PETSC_FALSE;
  PetscCall(dense_inverse_of(ksp, &pc, &ctx));
  if (!ctx) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PCGetOperators(pc, NULL, &P));
  PetscCall(MatGetVecType(P, &vtype));
  PetscCall(PetscStrendswith(vtype, "cuda", ok)); /* where redundant_setup forms it on the device too */
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode StnMGCoarseInverseDevice(KSP ksp, const StnDenseInverse **inv, PetscInt *rstart, PetscInt *nlocal, PetscBool *ok)
{
  PC            pc;
  DenseInverse *ctx;

  PetscFunctionBeginUser;
  *ok = PETSC_FALSE;
  PetscCall(dense_inverse_of(ksp, &pc, &ctx));
  if (!ctx) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(redundant_form(pc, ctx)); /* the inverse of the operator now */
  if (!ctx->to_all || !ctx->device) PetscFunctionReturn(PETSC_SUCCESS);
  *inv    = ctx->device;
  *rstart = ctx->rstart;
  *nlocal = ctx->nlocal;
  *ok     = PETSC_TRUE;
  PetscFunctionReturn(PETSC_SUCCESS);
}
#endif

static PetscErrorCode set_dense_inverse(PC pc)
{
  DenseInverse *ctx;

  PetscFunctionBeginUser;
  PetscCall(PetscNew(&ctx));
  PetscCall(PCSetType(pc, PCSHELL));
  PetscCall(PCShellSetContext(pc, ctx));
  PetscCall(PCShellSetName(pc, dense_inverse_name));
  PetscCall(PCShellSetSetUp(pc, DenseInverseSetUp));
  PetscCall(PCShellSetApply(pc, DenseInverseApply));
  PetscCall(PCShellSetDestroy(pc, DenseInverseDestroy));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---- the smoothers' eigenvalue bounds ---- */

/* Chebyshev needs bounds on the spectrum of the Jacobi-preconditioned level operator. PETSc's
   estimate (10 GMRES steps from a fixed pseudo-random vector, bounds 0.1 and 1.1 times the
   largest real part of their Ritz values) writes that vector on the host at every Jacobian, a copy to the device
   per level. Ours is the same estimate, from the same vector written on the device: before a
   smoother's solve, when its operator has changed since the last estimate (its state, recorded
   with the estimate on the matrix). */
static PetscInt emax_id = -1;

/* The start vector: PETSc's (KSPSetNoisy_Private), written where v lives. */
static PetscErrorCode set_noise(Vec v)
{
  PetscInt     n, start;
  PetscScalar *a;

  PetscFunctionBeginUser;
  PetscCall(VecGetLocalSize(v, &n));
  PetscCall(VecGetOwnershipRange(v, &start, NULL));
#if defined(PETSC_HAVE_CUDA)
  VecType   type;
  PetscBool gpu;

  PetscCall(VecGetType(v, &type));
  PetscCall(PetscStrendswith(type, "cuda", &gpu));
  if (gpu) {
    PetscCall(VecCUDAGetArrayWrite(v, &a));
    PetscCheck(StnNoiseCUDA(a, (long)n, (long)start) == 0, PETSC_COMM_SELF, PETSC_ERR_LIB, "the start vector's kernel failed: %s", StnCUDALastError());
    PetscCall(VecCUDARestoreArrayWrite(v, &a));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
#endif
  PetscCall(VecGetArrayWrite(v, &a));
  for (PetscInt i = 0; i < n; i++) a[i] = stn_noise((long)(start + i));
  PetscCall(VecRestoreArrayWrite(v, &a));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The estimator est's start vector for vectors like x: written once per grid and kept with est;
   a new grid for the level (-snes_grid_sequence) also gets est new work vectors. */
/* est's start vector like x, kept on est under name (the level's and, on several ranks, its
   whole copy's, stnmgcycle.c). */
static PetscErrorCode start_vector_named(KSP est, Vec x, const char *name, Vec *noise)
{
  PetscInt m, m_noise = -1;

  PetscFunctionBeginUser;
  PetscCall(PetscObjectQuery((PetscObject)est, name, (PetscObject *)noise));
  PetscCall(VecGetSize(x, &m));
  if (*noise) PetscCall(VecGetSize(*noise, &m_noise));
  if (m_noise == m) PetscFunctionReturn(PETSC_SUCCESS);
  if (*noise) PetscCall(KSPReset(est));
  PetscCall(VecDuplicate(x, noise));
  PetscCall(set_noise(*noise));
  PetscCall(PetscObjectCompose((PetscObject)est, name, (PetscObject)*noise));
  PetscCall(PetscObjectDereference((PetscObject)*noise)); /* est holds it */
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode start_vector(KSP est, Vec x, Vec *noise) { return start_vector_named(est, x, "StnStartVector", noise); }

/* The estimate for the smoother ksp's preconditioned operator, in two halves (the levels' run at
   once on the device): estimate_begin starts it unless the one recorded on the operator's
   matrix is still valid (the matrix unchanged since), estimate_end gives *emax, the largest real
   part of the Ritz values, 0 when ksp has no estimator of ours or the estimate failed. On the
   host the whole estimate runs in estimate_begin. x: a vector of the level's; set: the device's
   report slots for it (stnmg.h). */
static PetscErrorCode estimate_begin(KSP ksp, Vec x, int set, StnHalo halo)
{
  Mat       A, P;
  KSP       est;
  PC        pc;
  Vec       y, noise;
  PetscReal *re, *im, emax = 0;
  PetscInt  n, neig;
  PetscBool valid;

  PetscFunctionBeginUser;
  PetscCall(PetscObjectQuery((PetscObject)ksp, "StnEigenvalueEstimate", (PetscObject *)&est));
  if (!est) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(KSPGetOperators(ksp, &A, &P));
  PetscCall(PetscObjectComposedDataGetReal((PetscObject)P, emax_id, emax, valid));
  if (valid) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(start_vector(est, x, &noise));
  PetscCall(KSPGetPC(ksp, &pc));
#if defined(PETSC_HAVE_CUDA)
  PetscBool queued = PETSC_FALSE;
  Mat       mf;

  PetscCall(StnMatFreeOfLevel(A, P, &mf)); /* P's operator without the matrix, if there is one */
  if (A == P || mf == A) PetscCall(StnMGEstimateDeviceBegin(est, mf ? mf : P, P, pc, noise, set, halo, &queued));
  if (queued) PetscFunctionReturn(PETSC_SUCCESS);
#else
  (void)set, (void)halo;
#endif
  PetscCall(KSPSetPC(est, pc));
  PetscCall(KSPSetOperators(est, A, P));
  PetscCall(KSPGetSolution(est, &y)); /* the last estimate's, kept by est */
  if (y) PetscCall(KSPSolve(est, noise, y));
  else {
    PetscCall(VecDuplicate(x, &y));
    PetscCall(KSPSolve(est, noise, y));
    PetscCall(VecDestroy(&y));
  }
  PetscCall(KSPGetIterationNumber(est, &n));
  PetscCall(PetscMalloc2(n, &re, n, &im));
  PetscCall(KSPComputeEigenvalues(est, n, re, im, &neig));
  for (PetscInt e = 0; e < neig; e++) emax = PetscMax(emax, re[e]); /* the largest real part, as PETSc */
  PetscCall(PetscFree2(re, im));
  PetscCall(PetscInfo(ksp, "eigenvalue estimate: largest real part %g\n", (double)emax));
  if (emax > 0) PetscCall(PetscObjectComposedDataSetReal((PetscObject)P, emax_id, emax));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode estimate_end(KSP ksp, PetscReal *emax)
{
  Mat       P;
  KSP       est;
  PetscBool valid;

  PetscFunctionBeginUser;
  *emax = 0;
  PetscCall(PetscObjectQuery((PetscObject)ksp, "StnEigenvalueEstimate", (PetscObject *)&est));
  if (!est) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(KSPGetOperators(ksp, NULL, &P));
  PetscCall(PetscObjectComposedDataGetReal((PetscObject)P, emax_id, *emax, valid));
  if (valid) PetscFunctionReturn(PETSC_SUCCESS);
  *emax = 0;
#if defined(PETSC_HAVE_CUDA)
  PetscBool done;

  PetscCall(StnMGEstimateDeviceEnd(est, emax, &done));
  if (done) {
    PetscCall(PetscInfo(ksp, "eigenvalue estimate on the device: largest real part %g\n", (double)*emax));
    if (*emax > 0) PetscCall(PetscObjectComposedDataSetReal((PetscObject)P, emax_id, *emax));
  }
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode estimate(KSP ksp, Vec x, PetscReal *emax)
{
  PetscFunctionBeginUser;
  PetscCall(estimate_begin(ksp, x, 1, NULL));
  PetscCall(estimate_end(ksp, emax));
  PetscFunctionReturn(PETSC_SUCCESS);
}



/* PETSc's bounds from the estimate: 0.1 and 1.1 times emax. */
static const PetscReal bound_low = 0.1, bound_high = 1.1;

static PetscErrorCode EstimateEigenvalues(KSP ksp, Vec b, Vec x, void *ctx)
{
  PetscReal emax;
  PetscBool cheb;

  PetscFunctionBeginUser;
  (void)ctx, (void)b;
  PetscCall(PetscObjectTypeCompare((PetscObject)ksp, KSPCHEBYSHEV, &cheb));
  if (!cheb) PetscFunctionReturn(PETSC_SUCCESS); /* another smoother was chosen */
  PetscCall(estimate(ksp, x, &emax));
  if (emax > 0) PetscCall(KSPChebyshevSetEigenvalues(ksp, bound_high * emax, bound_low * emax));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode StnMGSmootherBoundsBegin(KSP ksp, Vec x, int set, StnHalo halo)
{
  PetscFunctionBeginUser;
  PetscCall(estimate_begin(ksp, x, set, halo));
  PetscFunctionReturn(PETSC_SUCCESS);
}

#if defined(PETSC_HAVE_CUDA)
PetscErrorCode StnMGSmootherBoundsBeginWhole(KSP ksp, const StnBox *box, const PetscScalar *values, Vec dinv, int set)
{
  Mat       P;
  KSP       est;
  Vec       noise;
  PetscReal emax;
  PetscBool valid, queued;

  PetscFunctionBeginUser;
  PetscCall(PetscObjectQuery((PetscObject)ksp, "StnEigenvalueEstimate", (PetscObject *)&est));
  if (!est) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(KSPGetOperators(ksp, NULL, &P));
  PetscCall(PetscObjectComposedDataGetReal((PetscObject)P, emax_id, emax, valid));
  (void)emax;
  if (valid) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(start_vector_named(est, dinv, "StnStartVectorWhole", &noise)); /* one rank's: noise at the natural index */
  PetscCall(StnMGEstimateDeviceBeginWhole(est, box, values, dinv, noise, set, &queued));
  PetscFunctionReturn(PETSC_SUCCESS);
}
#endif

PetscErrorCode StnMGSmootherBoundsEnd(KSP ksp, PetscReal *emax, PetscReal *emin, PetscBool *ok)
{
  PetscReal e;

  PetscFunctionBeginUser;
  PetscCall(estimate_end(ksp, &e));
  *ok   = (PetscBool)(e > 0);
  *emax = bound_high * e;
  *emin = bound_low * e;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode StnMGSmootherBounds(KSP ksp, Vec x, PetscReal *emax, PetscReal *emin, PetscBool *ok)
{
  PetscFunctionBeginUser;
  PetscCall(StnMGSmootherBoundsBegin(ksp, x, 1, NULL));
  PetscCall(StnMGSmootherBoundsEnd(ksp, emax, emin, ok));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Three Chebyshev steps per smoothing where PCMG takes two, unless the options say: on the
   cavity and sfi3d the V-cycles saved pay for the extra products several times over
   (docs/performance.md). */
enum { smoothing_steps = 3 };

static PetscErrorCode set_smoothing_steps(KSP ksp)
{
  const char *prefix;
  PetscBool   given;
  PetscReal   rtol, abstol, dtol;

  PetscFunctionBeginUser;
  PetscCall(KSPGetOptionsPrefix(ksp, &prefix));
  PetscCall(PetscOptionsHasName(NULL, prefix, "-ksp_max_it", &given));
  if (given) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(KSPGetTolerances(ksp, &rtol, &abstol, &dtol, NULL));
  PetscCall(KSPSetTolerances(ksp, rtol, abstol, dtol, smoothing_steps));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Our estimate for the Chebyshev smoother ksp, unless its options ask for PETSc's or give the
   bounds. */
static PetscErrorCode set_eigenvalue_estimate(KSP ksp)
{
  const char *prefix;
  PetscBool   esteig, given;
  KSP         est;
  PetscInt    steps;

  PetscFunctionBeginUser;
  PetscCall(KSPGetOptionsPrefix(ksp, &prefix));
  PetscCall(PetscOptionsHasName(NULL, prefix, "-ksp_chebyshev_esteig", &esteig));
  PetscCall(PetscOptionsHasName(NULL, prefix, "-ksp_chebyshev_eigenvalues", &given));
  if (esteig || given) PetscFunctionReturn(PETSC_SUCCESS);
  if (emax_id < 0) PetscCall(PetscObjectComposedDataRegister(&emax_id));
  PetscCall(KSPChebyshevEstEigSet(ksp, 0, 0, 0, 0));           /* no estimator of PETSc's */
  PetscCall(KSPChebyshevSetEigenvalues(ksp, 2.2, 0.22));        /* until the first estimate */
  PetscCall(KSPCreate(PetscObjectComm((PetscObject)ksp), &est)); /* PETSc's estimator's settings */
  PetscCall(KSPSetOptionsPrefix(est, prefix)); /* its reports are the smoother's esteig_ ones */
  PetscCall(KSPAppendOptionsPrefix(est, "esteig_"));
  PetscCall(KSPSetType(est, KSPGMRES));
  PetscCall(KSPSetTolerances(est, 1e-12, PETSC_DEFAULT, PETSC_DEFAULT, 10));
  PetscCall(KSPSetComputeEigenvalues(est, PETSC_TRUE));
  PetscCall(KSPSetSkipPCSetFromOptions(est, PETSC_TRUE)); /* its PC is the smoother's */
  PetscCall(KSPSetFromOptions(est)); /* -mg_levels_esteig_ksp_max_it and the like, as PETSc's */
  PetscCall(KSPGetTolerances(est, NULL, NULL, NULL, &steps));
  PetscCheck(steps >= 1, PetscObjectComm((PetscObject)ksp), PETSC_ERR_ARG_OUTOFRANGE,
             "-mg_levels_esteig_ksp_max_it %" PetscInt_FMT ": the smoothers' eigenvalue estimate needs at least one step (PETSc's default is 10)", steps);
  PetscCall(PetscObjectCompose((PetscObject)ksp, "StnEigenvalueEstimate", (PetscObject)est));
  PetscCall(KSPDestroy(&est));
  PetscCall(KSPSetPreSolve(ksp, EstimateEigenvalues, NULL));
  /* For every new operator PETSc runs KSPSetUp_Chebyshev again, which remakes its three work
     vectors (on several ranks each an MPI vector made and freed, every level and Jacobian) and
     sets up PETSc's estimator where no bounds were given: with ours its first set-up holds.
     KSPSetType restores the default if the options choose another smoother; a later change of
     its steps or kind in code would need KSPReset (nothing here makes one). */
  ksp->setupnewmatrix = PETSC_FALSE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode StnPCMGSetDefaults(PC pc, DM da)
{
  const char *prefix;
  PetscBool   given;
  PetscInt    levels, refined;
  KSP         ksp;
  PC          level_pc;

  PetscFunctionBeginUser;
  PetscCall(PCGetOptionsPrefix(pc, &prefix));
  PetscCall(PetscOptionsHasName(NULL, prefix, "-pc_mg_levels", &given));
  PetscCall(DMGetRefineLevel(da, &refined));
  if (!given && refined == 0) {
    PetscCall(StnDMCountLevels(da, &levels));
    PetscCall(PCMGSetLevels(pc, levels, NULL));
  }
  PetscCall(PCMGGetLevels(pc, &levels));
  for (PetscInt l = 1; l < levels; l++) { /* Chebyshev (PCMG's) with Jacobi; the options come later */
    PetscCall(PCMGGetSmoother(pc, l, &ksp));
    PetscCall(set_smoothing_steps(ksp));
    PetscCall(set_eigenvalue_estimate(ksp));
    PetscCall(KSPGetPC(ksp, &level_pc));
    PetscCall(PCSetType(level_pc, PCJACOBI));
#if defined(PETSC_HAVE_CUDA)
    PetscCall(PCJacobiSetFixDiagonal(level_pc, PETSC_FALSE)); /* its check reads the diagonal on the host */
#endif
  }
  PetscCall(PCMGGetCoarseSolve(pc, &ksp));
  PetscCall(KSPSetType(ksp, KSPPREONLY));
  PetscCall(KSPGetPC(ksp, &level_pc));
  PetscCall(set_dense_inverse(level_pc));
  PetscFunctionReturn(PETSC_SUCCESS);
}
