/*
 * bratu2d.c: generated from bratu2d.stn by stencilc 0.1.0. To change the equations, edit
 * bratu2d.stn and run stencilc again; this file can also be carried on by hand.
 *
 * # Bratu's problem in 2D: PETSc SNES tutorial ex5 (solid fuel ignition).
 * #
 * #   -Laplacian(u) - lambda * exp(u) = 0   on [0,1] x [0,1]
 * #                                  u = 0   on the boundary
 * #
 * # Discretized as ex5 does: the 5-point Laplacian scaled by hx*hy, the
 * # boundary rows scaled by 2*(hy/hx + hx/hy), and the boundary values
 * # substituted into the neighbouring rows so that the Jacobian is symmetric.
 *
 * The equations, as bratu2d.stn writes them:
 *
 *   residual u {
 *     boundary: 2 * (hydhx + hxdhy) * u;     # u = 0, scaled like the interior rows
 *   
 *     # Neighbours on the boundary are replaced by their value 0 (ex5 line 265).
 *     let uw = if i - 1 == 0 then 0 else u[-1,0];
 *     let ue = if i + 1 == nx - 1 then 0 else u[1,0];
 *     let us = if j - 1 == 0 then 0 else u[0,-1];
 *     let un = if j + 1 == ny - 1 then 0 else u[0,1];
 *     interior: (2*u - uw - ue) * hydhx + (2*u - us - un) * hxdhy - hx * hy * par * exp(u);
 *   }
 */

static char help[] = "Solves the equations of bratu2d.stn with PETSc's Newton-Krylov solver (SNES).\n"
  "Parameters (default in brackets):\n"
  "  -par <6.0>: Bratu parameter lambda, in [0, 6.81]\n"
  "Program options:\n  -stn_mat_type <sgdia>: the Jacobian's storage, sgdia or aij\n  -stn_check_jacobian: compare the Jacobian entries the .stn gives with the derived ones\n  -stn_output <file.vts>: write the solution for ParaView\n  -stn_plot_solution <file.png>: draw the solution (colour maps; 3D: middle slices) with gnuplot\n  -stn_plot_convergence <file.png>: draw the residual norm per Newton and Krylov iteration with gnuplot\n  -stn_device <gpu|cpu>: with a CUDA PETSc, where the solve runs (the GPU when there is one)\n  -stn_vec_kernels <stencilc>: on the GPU, whose vector kernels, stencilc or petsc\n  -stn_autotune, -stn_tune_cache <file>: on the GPU, tune the kernels for this size (and where to keep it)\n  -da_grid_x <n> (and _y, _z): grid points per direction\n";

#include <math.h>
#include <petscdmda.h>
#include <petscsnes.h>

#include "stnrt.h" /* the SG-DIA matrix and the solve report */
#include "bratu2d.h" /* Field, KernelCtx, NSTENCIL, DOF: shared with the CUDA kernels */

#if defined(PETSC_USE_COMPLEX) || !defined(PETSC_USE_REAL_DOUBLE)
#error "stencilc programs need PETSc built with real double-precision scalars"
#endif

/* Application context: the grid and the parameters. */
typedef struct {
  DM        da;
  PetscInt  nx, ny; /* grid points per direction (-da_grid_x, ...) */
  PetscReal hx, hy; /* grid spacing */
  PetscReal par; /* Bratu parameter lambda, bratu2d.stn:18 */
  Mat       J;              /* the Jacobian: SG-DIA, or AIJ with -stn_mat_type aij */
  PetscBool gpu;            /* residual and Jacobian on the GPU (-stn_device gpu) */
  StnKernelShape shape[2];  /* their kernels' launch shapes (StnTuneLaunch; bx 0: not chosen yet) */
  PetscBool check_jacobian; /* -stn_check_jacobian */
} AppCtx;

/* The Jacobian's block diagonals: the neighbours the equations couple (stencil
   analysis), as grid offsets (x, y, z), in the order of the SG-DIA columns. */
static const PetscInt stencil_offsets[NSTENCIL][3] = {
  {0, -1, 0},
  {-1, 0, 0},
  {0, 0, 0}, /* the point itself */
  {1, 0, 0},
  {0, 1, 0},
};

/* The kind of a grid point, which picks the rule of each field: per direction
   0 on the low face, 1 inside, 2 on the high face; kind = px + 3 py + 9 pz. */
static inline int PointKind(const AppCtx *user, PetscInt i, PetscInt j)
{
  const int px = i == 0 ? 0 : (i == user->nx - 1 ? 2 : 1);
  const int py = j == 0 ? 0 : (j == user->ny - 1 ? 2 : 1);
  return px + 3 * py;
}

/* Parameters: each default from the .stn, then the option of the same name. */
static PetscErrorCode SetParameters(AppCtx *user)
{
  PetscFunctionBeginUser;
  PetscOptionsBegin(PETSC_COMM_WORLD, NULL, "Parameters of bratu2d.stn", "");
  user->par = 6.0; /* bratu2d.stn:18 */
  PetscCall(PetscOptionsReal("-par", "Bratu parameter lambda", "bratu2d.stn", user->par, &user->par, NULL));
  user->check_jacobian = PETSC_FALSE;
  PetscCall(PetscOptionsBool("-stn_check_jacobian", "Compare the Jacobian entries given in the .stn with the derived ones", NULL, user->check_jacobian, &user->check_jacobian, NULL));
  PetscOptionsEnd();
  PetscCheck(user->par >= 0.0 && user->par <= 6.81, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE,
             "-par %g is out of range: bratu2d.stn:18 allows [0, 6.81]", (double)user->par);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The initial guess of Newton's method (the .stn's initial blocks). */
static PetscErrorCode FormInitialGuess(AppCtx *user, Vec X)
{
  DMDALocalInfo info_, *info = &info_;
  Field **x;

  PetscFunctionBeginUser;
  PetscCall(DMDAGetLocalInfo(user->da, info));
  PetscCall(DMDAVecGetArray(user->da, X, &x));
  for (PetscInt j = info->ys; j < info->ys + info->ym; j++) {
    for (PetscInt i = info->xs; i < info->xs + info->xm; i++) {
      switch (PointKind(user, i, j)) {
      case 4: /* interior */
      {
        x[j][i].u = user->par / (user->par + 1.0) * sqrt(fmin(fmin((PetscReal)i, (PetscReal)user->nx - (PetscReal)i - 1.0) * user->hx, fmin((PetscReal)j, (PetscReal)user->ny - (PetscReal)j - 1.0) * user->hy)); /* bratu2d.stn:37 */
        break;
      }
      case 0: /* left & bottom */
      case 1: /* bottom */
      case 2: /* right & bottom */
      case 3: /* left */
      case 5: /* right */
      case 6: /* left & top */
      case 7: /* top */
      case 8: /* right & top */
      {
        x[j][i].u = 0.0; /* bratu2d.stn:36 */
        break;
      }
      }
    }
  }
  PetscCall(DMDAVecRestoreArray(user->da, X, &x));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* F(x) at the locally owned points; x is the local (ghosted) state. */
static PetscErrorCode FormFunctionLocal(DMDALocalInfo *info, const Field **x, Field **f, AppCtx *user)
{
  PetscFunctionBeginUser;
  const PetscScalar hydhx = user->hy / user->hx;
  const PetscScalar hxdhy = user->hx / user->hy;
  for (PetscInt j = info->ys; j < info->ys + info->ym; j++) {
    for (PetscInt i = info->xs; i < info->xs + info->xm; i++) {
      switch (PointKind(user, i, j)) {
      case 4: /* interior */
      {
        const PetscScalar t0 = 2.0 * x[j][i].u;
        const PetscScalar uw = (PetscReal)i - 1.0 == 0.0 ? 0.0 : x[j][i - 1].u;
        const PetscScalar ue = (PetscReal)i + 1.0 == (PetscReal)user->nx - 1.0 ? 0.0 : x[j][i + 1].u;
        const PetscScalar us = (PetscReal)j - 1.0 == 0.0 ? 0.0 : x[j - 1][i].u;
        const PetscScalar un = (PetscReal)j + 1.0 == (PetscReal)user->ny - 1.0 ? 0.0 : x[j + 1][i].u;
        f[j][i].u = (t0 - uw - ue) * hydhx + (t0 - us - un) * hxdhy - user->hx * user->hy * user->par * exp(x[j][i].u); /* bratu2d.stn:31 */
        break;
      }
      case 0: /* left & bottom */
      case 1: /* bottom */
      case 2: /* right & bottom */
      case 3: /* left */
      case 5: /* right */
      case 6: /* left & top */
      case 7: /* top */
      case 8: /* right & top */
      {
        f[j][i].u = 2.0 * (hydhx + hxdhy) * x[j][i].u; /* bratu2d.stn:24 */
        break;
      }
      }
    }
  }
  /* 23 operations per interior point, counted for every point */
  PetscCall(PetscLogFlops(23.0 * info->xm * info->ym));
  PetscFunctionReturn(PETSC_SUCCESS);
}

#if defined(PETSC_HAVE_CUDA)
/* The kernels' view of the grid, this rank's boxes and the parameters. */
static void SetKernelCtx(const AppCtx *user, const DMDALocalInfo *info, KernelCtx *ctx)
{
  ctx->nx = (int)user->nx;
  ctx->hx = user->hx;
  ctx->xs = (int)info->xs;
  ctx->xm = (int)info->xm;
  ctx->gxs = (int)info->gxs;
  ctx->gxm = (int)info->gxm;
  ctx->ny = (int)user->ny;
  ctx->hy = user->hy;
  ctx->ys = (int)info->ys;
  ctx->ym = (int)info->ym;
  ctx->gys = (int)info->gys;
  ctx->gym = (int)info->gym;
  ctx->par = user->par;
}

/* The kernels as the tuner calls them (StnTuneLaunch: launch shapes, -stn_autotune). */
#define KERNEL_NAME(what) "bratu2d.stn-2c27533b/" what /* the .stn and a hash of its text */

typedef struct {
  const KernelCtx *ctx;
  const Field     *x;
  void            *out;
} KernelArgs;

static int RunResidual(void *args, const StnKernelShape *s)
{
  const KernelArgs *k = (const KernelArgs *)args;

  return FormFunctionCUDA(k->ctx, k->x, (Field *)k->out, s->bx, s->by, s->sweep);
}

static int RunJacobian(void *args, const StnKernelShape *s)
{
  const KernelArgs *k = (const KernelArgs *)args;

  return FormJacobianCUDA(k->ctx, k->x, (double *)k->out, s->bx, s->by, s->sweep);
}

/* The residual on the GPU: ghost exchange between CUDA vectors, then one kernel. */
static PetscErrorCode FormFunctionGPU(AppCtx *user, Vec X, Vec F)
{
  DMDALocalInfo      info;
  KernelCtx          ctx;
  Vec                Xloc;
  const PetscScalar *x;
  PetscScalar       *f;

  PetscFunctionBeginUser;
  PetscCall(DMDAGetLocalInfo(user->da, &info));
  PetscCall(DMGetLocalVector(user->da, &Xloc));
  PetscCall(DMGlobalToLocalBegin(user->da, X, INSERT_VALUES, Xloc));
  PetscCall(DMGlobalToLocalEnd(user->da, X, INSERT_VALUES, Xloc));
  SetKernelCtx(user, &info, &ctx);
  PetscCall(VecCUDAGetArrayRead(Xloc, &x));
  PetscCall(VecCUDAGetArrayWrite(F, &f));
  if (!user->shape[0].bx) { /* the first time: the tuned shape, or tune it now */
    KernelArgs args = {&ctx, (const Field *)x, f};

    PetscCall(StnTuneLaunch(PETSC_COMM_WORLD, KERNEL_NAME("residual"), 2, info.xm, info.ym, 1, f, (long)info.xm * info.ym * DOF, RunResidual, &args, &user->shape[0]));
  }
  PetscCall(PetscLogGpuTimeBegin());
  PetscCheck(FormFunctionCUDA(&ctx, (const Field *)x, (Field *)f, user->shape[0].bx, user->shape[0].by, user->shape[0].sweep) == 0, PETSC_COMM_SELF, PETSC_ERR_LIB, "the residual kernel failed");
  PetscCall(PetscLogGpuTimeEnd());
  PetscCall(PetscLogGpuFlops(23.0 * info.xm * info.ym));
  PetscCall(VecCUDARestoreArrayWrite(F, &f));
  PetscCall(VecCUDARestoreArrayRead(Xloc, &x));
  PetscCall(DMRestoreLocalVector(user->da, &Xloc));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The Jacobian on the GPU, straight into the SG-DIA values in device memory. */
static PetscErrorCode FormJacobianGPU(AppCtx *user, Vec X)
{
  DMDALocalInfo      info;
  KernelCtx          ctx;
  Vec                Xloc;
  const PetscScalar *x;
  PetscScalar       *a;

  PetscFunctionBeginUser;
  PetscCall(DMDAGetLocalInfo(user->da, &info));
  PetscCall(DMGetLocalVector(user->da, &Xloc));
  PetscCall(DMGlobalToLocalBegin(user->da, X, INSERT_VALUES, Xloc));
  PetscCall(DMGlobalToLocalEnd(user->da, X, INSERT_VALUES, Xloc));
  SetKernelCtx(user, &info, &ctx);
  PetscCall(VecCUDAGetArrayRead(Xloc, &x));
  PetscCall(MatSGDIAGetArrayDevice(user->J, &a));
  if (!user->shape[1].bx) {
    KernelArgs args = {&ctx, (const Field *)x, a};

    PetscCall(StnTuneLaunch(PETSC_COMM_WORLD, KERNEL_NAME("jacobian"), 2, info.xm, info.ym, 1, a, (long)info.xm * info.ym * NSTENCIL * DOF * DOF, RunJacobian, &args, &user->shape[1]));
  }
  PetscCall(PetscLogGpuTimeBegin());
  PetscCheck(FormJacobianCUDA(&ctx, (const Field *)x, a, user->shape[1].bx, user->shape[1].by, user->shape[1].sweep) == 0, PETSC_COMM_SELF, PETSC_ERR_LIB, "the Jacobian kernel failed");
  PetscCall(PetscLogGpuTimeEnd());
  PetscCall(MatSGDIARestoreArrayDevice(user->J, &a));
  PetscCall(VecCUDARestoreArrayRead(Xloc, &x));
  PetscCall(DMRestoreLocalVector(user->da, &Xloc));
  PetscCall(MatAssemblyBegin(user->J, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(user->J, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(PETSC_SUCCESS);
}
#endif

/* The grid of a coarser level of -pc_type mg: the same problem and parameters, the level's
   own sizes and spacing, computed on the host. */
static PetscErrorCode UseLevel(DM dm, const AppCtx *fine, AppCtx *level)
{
  AppCtx *user = level;

  PetscFunctionBeginUser;
  *level     = *fine;
  level->da  = dm;
  level->gpu = PETSC_FALSE;
  PetscCall(DMDAGetInfo(dm, NULL, &user->nx, &user->ny, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
  user->hx = (1.0 - 0.0) / (user->nx - 1);
  user->hy = (1.0 - 0.0) / (user->ny - 1);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The residual for SNES: ghost exchange, then FormFunctionLocal. */
static PetscErrorCode FormFunction(SNES snes, Vec X, Vec F, void *ctx)
{
  AppCtx       *user = (AppCtx *)ctx, level;
  DMDALocalInfo info;
  Vec           Xloc;
  DM            dm;
  const Field **x;
  Field       **f;

  PetscFunctionBeginUser;
  PetscCall(VecGetDM(X, &dm));
  if (dm && dm != user->da) { /* a coarser level of multigrid */
    PetscCall(UseLevel(dm, user, &level));
    user = &level;
  }
#if defined(PETSC_HAVE_CUDA)
  if (user->gpu) {
    PetscCall(FormFunctionGPU(user, X, F));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
#endif
  PetscCall(DMDAGetLocalInfo(user->da, &info));
  PetscCall(DMGetLocalVector(user->da, &Xloc));
  PetscCall(DMGlobalToLocalBegin(user->da, X, INSERT_VALUES, Xloc));
  PetscCall(DMGlobalToLocalEnd(user->da, X, INSERT_VALUES, Xloc));
  PetscCall(DMDAVecGetArrayRead(user->da, Xloc, &x));
  PetscCall(DMDAVecGetArray(user->da, F, &f));
  PetscCall(FormFunctionLocal(&info, x, f, user));
  PetscCall(DMDAVecRestoreArray(user->da, F, &f));
  PetscCall(DMDAVecRestoreArrayRead(user->da, Xloc, &x));
  PetscCall(DMRestoreLocalVector(user->da, &Xloc));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Stores the block row v of the point with local number p in SG-DIA storage: column
   s*DOF + c, of height nrows, holds d(F_r)/d(x_c at neighbour s) in row p*DOF + r. */
static inline void StoreBlockRowSGDIA(PetscScalar *a, PetscInt nrows, PetscInt p, PetscScalar v[NSTENCIL][DOF][DOF])
{
  for (PetscInt s = 0; s < NSTENCIL; s++)
    for (PetscInt c = 0; c < DOF; c++)
      for (PetscInt r = 0; r < DOF; r++) a[(s * DOF + c) * nrows + p * DOF + r] = v[s][r][c];
}

/* The same block row into an AIJ matrix (-stn_mat_type aij), skipping neighbours outside the grid. */
static PetscErrorCode StoreBlockRowAIJ(const AppCtx *user, Mat J, PetscInt i, PetscInt j, PetscScalar v[NSTENCIL][DOF][DOF])
{
  MatStencil  row[DOF], col[NSTENCIL * DOF];
  PetscScalar vals[DOF * NSTENCIL * DOF];
  PetscInt    ncol = 0;

  PetscFunctionBeginUser;
  for (PetscInt s = 0; s < NSTENCIL; s++) {
    const PetscInt ni = i + stencil_offsets[s][0];
    const PetscInt nj = j + stencil_offsets[s][1];
    if (ni < 0 || ni >= user->nx || nj < 0 || nj >= user->ny) continue; /* outside the grid: the entries are 0 */
    for (PetscInt c = 0; c < DOF; c++) {
      col[ncol].i = ni;
      col[ncol].j = nj;
      col[ncol].k = 0;
      col[ncol].c = c;
      for (PetscInt r = 0; r < DOF; r++) vals[r * NSTENCIL * DOF + ncol] = v[s][r][c];
      ncol++;
    }
  }
  for (PetscInt r = 0; r < DOF; r++) {
    row[r].i = i;
    row[r].j = j;
    row[r].k = 0;
    row[r].c = r;
    /* rows of vals are NSTENCIL*DOF apart; pass one row at a time */
    PetscCall(MatSetValuesStencil(J, 1, &row[r], ncol, col, &vals[r * NSTENCIL * DOF], INSERT_VALUES));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The Jacobian at the locally owned points, one block row per point: v[s][r][c] is
   d(F_r)/d(x_c at neighbour s), derived from the residual unless the .stn gives it. */
static PetscErrorCode FormJacobianLocal(DMDALocalInfo *info, const Field **x, Mat J, AppCtx *user)
{
  PetscScalar *a = NULL; /* SG-DIA values, when J is SG-DIA */
  PetscBool    sgdia;
  PetscInt     nrows = info->xm * info->ym * DOF;

  PetscFunctionBeginUser;
  PetscCall(MatIsSGDIA(J, &sgdia));
  if (sgdia) PetscCall(MatSGDIAGetArray(J, &a));
  const PetscScalar hydhx = user->hy / user->hx;
  const PetscScalar hxdhy = user->hx / user->hy;
  const PetscScalar t0 = 2.0 * (hydhx + hxdhy);
  for (PetscInt j = info->ys; j < info->ys + info->ym; j++) {
    for (PetscInt i = info->xs; i < info->xs + info->xm; i++) {
      PetscScalar v[NSTENCIL][DOF][DOF];

      PetscCall(PetscArrayzero(&v[0][0][0], NSTENCIL * DOF * DOF));
      switch (PointKind(user, i, j)) {
      case 4: /* interior */
      {
        v[0][0][0] = -((PetscReal)j - 1.0 == 0.0 ? 0.0 : 1.0) * hxdhy; /* du/du[0,-1], derived from bratu2d.stn:31 */
        v[1][0][0] = -((PetscReal)i - 1.0 == 0.0 ? 0.0 : 1.0) * hydhx; /* du/du[-1,0], derived from bratu2d.stn:31 */
        v[2][0][0] = 2.0 * hydhx + 2.0 * hxdhy - user->hx * user->hy * user->par * exp(x[j][i].u); /* du/du[0,0], derived from bratu2d.stn:31 */
        v[3][0][0] = -((PetscReal)i + 1.0 == (PetscReal)user->nx - 1.0 ? 0.0 : 1.0) * hydhx; /* du/du[1,0], derived from bratu2d.stn:31 */
        v[4][0][0] = -((PetscReal)j + 1.0 == (PetscReal)user->ny - 1.0 ? 0.0 : 1.0) * hxdhy; /* du/du[0,1], derived from bratu2d.stn:31 */
        break;
      }
      case 0: /* left & bottom */
      case 1: /* bottom */
      case 2: /* right & bottom */
      case 3: /* left */
      case 5: /* right */
      case 6: /* left & top */
      case 7: /* top */
      case 8: /* right & top */
      {
        v[2][0][0] = t0; /* du/du[0,0], derived from bratu2d.stn:24 */
        break;
      }
      }
      if (sgdia) StoreBlockRowSGDIA(a, nrows, (j - info->ys) * info->xm + (i - info->xs), v);
      else PetscCall(StoreBlockRowAIJ(user, J, i, j, v));
    }
  }
  if (sgdia) PetscCall(MatSGDIARestoreArray(J, &a));
  PetscCall(MatAssemblyBegin(J, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(J, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The Jacobian on a coarser grid of the same problem (a level of -pc_type mg), assembled
   into P on the host. */
static PetscErrorCode FormJacobianLevel(DM dm, Vec X, Mat J, Mat P, const AppCtx *fine)
{
  AppCtx        level, *user = &level;
  DMDALocalInfo info;
  Vec           Xloc;
  const Field **x;

  PetscFunctionBeginUser;
  PetscCall(UseLevel(dm, fine, &level));
  PetscCall(DMDAGetLocalInfo(user->da, &info));
  PetscCall(DMGetLocalVector(user->da, &Xloc));
  PetscCall(DMGlobalToLocalBegin(user->da, X, INSERT_VALUES, Xloc));
  PetscCall(DMGlobalToLocalEnd(user->da, X, INSERT_VALUES, Xloc));
  PetscCall(DMDAVecGetArrayRead(user->da, Xloc, &x));
  PetscCall(FormJacobianLocal(&info, x, P, user));
  PetscCall(DMDAVecRestoreArrayRead(user->da, Xloc, &x));
  PetscCall(DMRestoreLocalVector(user->da, &Xloc));
  if (J != P) {
    PetscCall(MatAssemblyBegin(J, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(J, MAT_FINAL_ASSEMBLY));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The Jacobian for SNES. It is computed into user->J (SG-DIA, or AIJ with -stn_mat_type
   aij); when the preconditioner needs an assembled matrix, P is an AIJ copy. */
static PetscErrorCode FormJacobian(SNES snes, Vec X, Mat J, Mat P, void *ctx)
{
  AppCtx       *user = (AppCtx *)ctx;
  DMDALocalInfo info;
  Vec           Xloc;
  DM            dm;
  const Field **x;

  PetscFunctionBeginUser;
  PetscCall(VecGetDM(X, &dm));
  if (dm && dm != user->da) { /* a coarser level of multigrid */
    PetscCall(FormJacobianLevel(dm, X, J, P, user));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
#if defined(PETSC_HAVE_CUDA)
  if (user->gpu) {
    PetscBool sgdia;

    PetscCall(MatIsSGDIA(user->J, &sgdia));
    if (sgdia) { /* else AIJCUSPARSE, assembled on the host below: the baseline */
      PetscCall(FormJacobianGPU(user, X));
      PetscFunctionReturn(PETSC_SUCCESS);
    }
  }
#endif
  PetscCall(DMDAGetLocalInfo(user->da, &info));
  PetscCall(DMGetLocalVector(user->da, &Xloc));
  PetscCall(DMGlobalToLocalBegin(user->da, X, INSERT_VALUES, Xloc));
  PetscCall(DMGlobalToLocalEnd(user->da, X, INSERT_VALUES, Xloc));
  PetscCall(DMDAVecGetArrayRead(user->da, Xloc, &x));
  PetscCall(FormJacobianLocal(&info, x, user->J, user));
  PetscCall(DMDAVecRestoreArrayRead(user->da, Xloc, &x));
  PetscCall(DMRestoreLocalVector(user->da, &Xloc));
  if (P != user->J) PetscCall(MatSGDIACopyToAIJ(user->J, P));
  if (J != user->J && J != P) { /* e.g. -snes_mf_operator */
    PetscCall(MatAssemblyBegin(J, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(J, MAT_FINAL_ASSEMBLY));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* After SNESSetFromOptions: SG-DIA serves Jacobi-type preconditioners directly; any
   other (ILU, GAMG, hypre, ...) gets an AIJ copy to factor. When the options ask PETSc
   to compute the Jacobian itself (-snes_fd, -snes_fd_color), it does so in AIJ. */
static PetscErrorCode SetUpJacobian(SNES snes, AppCtx *user, Mat *P)
{
  Mat       A, B;
  KSP       ksp;
  PC        pc;
  PetscBool sgdia, direct;
  PetscErrorCode (*fn)(SNES, Vec, Mat, Mat, void *);

  PetscFunctionBeginUser;
  *P = NULL;
  PetscCall(MatIsSGDIA(user->J, &sgdia));
  if (!sgdia) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(SNESGetJacobian(snes, &A, &B, &fn, NULL));
  PetscCall(SNESGetKSP(snes, &ksp));
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PetscObjectTypeCompareAny((PetscObject)pc, &direct, PCNONE, PCJACOBI, PCPBJACOBI, PCSHELL, ""));
  if (fn == FormJacobian && direct) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(DMSetMatType(user->da, MATAIJ));
  PetscCall(DMCreateMatrix(user->da, P));
  if (fn == FormJacobian) PetscCall(SNESSetJacobian(snes, A, *P, FormJacobian, user));
  else PetscCall(SNESSetJacobian(snes, A == user->J ? *P : A, B == user->J ? *P : B, NULL, NULL));
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  AppCtx              user;
  SNES                snes;
  KSP                 ksp;
  PC                  pc;
  PetscMPIInt         size;
  Vec                 X;
  Mat                 P = NULL;
  SNESConvergedReason reason;
  const char         *mat_types[] = {"sgdia", "aij"}, *devices[] = {"cpu", "gpu"};
  PetscInt            mat_type = 0, device = 0;
  PetscLogStage       stage;
  PetscBool           output;
  char                path[PETSC_MAX_PATH_LEN] = "";
  PetscBool           plot_solution, plot_convergence;
  char                solution_png[PETSC_MAX_PATH_LEN] = "", convergence_png[PETSC_MAX_PATH_LEN] = "";
  StnHistory          history = NULL;

  /* ---- PETSc and the options ---- */
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscMemzero(&user, sizeof user));
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscOptionsBegin(PETSC_COMM_WORLD, NULL, "stencilc program options", "");
  PetscCall(PetscOptionsEList("-stn_mat_type", "Storage of the Jacobian", NULL, mat_types, 2, mat_types[0], &mat_type, NULL));
#if defined(PETSC_HAVE_CUDA)
  device = StnCUDADevicePresent() ? 1 : 0; /* the GPU when there is one */
#endif
  PetscCall(PetscOptionsEList("-stn_device", "Where the residual, Jacobian and vectors live", NULL, devices, 2, devices[device], &device, NULL));
  PetscCall(PetscOptionsString("-stn_output", "Write the solution to this VTK file (.vts)", NULL, path, path, sizeof path, &output));
  PetscCall(PetscOptionsString("-stn_plot_solution", "Draw the solution to this PNG file (needs gnuplot)", NULL, solution_png, solution_png, sizeof solution_png, &plot_solution));
  PetscCall(PetscOptionsString("-stn_plot_convergence", "Draw the residual norms per Newton and Krylov iteration to this PNG file (needs gnuplot)", NULL, convergence_png, convergence_png, sizeof convergence_png, &plot_convergence));
  PetscOptionsEnd();

  /* ---- the grid: bratu2d.stn:10 ---- */
  PetscCall(DMDACreate2d(PETSC_COMM_WORLD, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DMDA_STENCIL_STAR, 4, 4, PETSC_DECIDE, PETSC_DECIDE, DOF, 1, NULL, NULL, &user.da));
  PetscCall(DMSetFromOptions(user.da));
  PetscCall(DMSetUp(user.da));
  user.gpu = device == 1 ? PETSC_TRUE : PETSC_FALSE;
#if !defined(PETSC_HAVE_CUDA)
  PetscCheck(!user.gpu, PETSC_COMM_WORLD, PETSC_ERR_SUP, "-stn_device gpu needs a PETSc configured with CUDA");
#endif
  if (user.gpu) PetscCall(StnDMSetGPUVectors(user.da)); /* vectors, ghost exchange and solver on the GPU */
  PetscCall(DMDASetFieldName(user.da, 0, "u"));
  PetscCall(DMDAGetInfo(user.da, NULL, &user.nx, &user.ny, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
  PetscCheck(user.nx >= 3, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE,
             "-da_grid_x %" PetscInt_FMT " is too small: bratu2d.stn needs at least 3 points in x (2 * stencil width + 1)", user.nx);
  PetscCheck(user.ny >= 3, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE,
             "-da_grid_y %" PetscInt_FMT " is too small: bratu2d.stn needs at least 3 points in y (2 * stencil width + 1)", user.ny);
  user.hx = (1.0 - 0.0) / (user.nx - 1);
  user.hy = (1.0 - 0.0) / (user.ny - 1);
  PetscCall(DMDASetUniformCoordinates(user.da, 0.0, 1.0, 0.0, 1.0, 0.0, 0.0));
  PetscCall(SetParameters(&user));

  /* ---- the nonlinear solver: residual, Jacobian (SG-DIA by default), options ---- */
  PetscCall(SNESCreate(PETSC_COMM_WORLD, &snes));
  PetscCall(SNESSetDM(snes, user.da));
  PetscCall(SNESSetFunction(snes, NULL, FormFunction, &user));
  if (mat_type == 1) {
    PetscCall(DMSetMatType(user.da, user.gpu ? MATAIJCUSPARSE : MATAIJ));
    PetscCall(DMCreateMatrix(user.da, &user.J));
  } else {
    PetscCall(MatCreateSGDIA(user.da, NSTENCIL, &stencil_offsets[0][0], &user.J));
  }
  PetscCall(SNESSetJacobian(snes, user.J, user.J, FormJacobian, &user));
  PetscCall(SNESGetKSP(snes, &ksp));
  PetscCall(KSPGetPC(ksp, &pc));
  /* Defaults (-pc_type overrides them): Jacobi on the GPU, where SG-DIA serves it; on CPUs
     PETSc's own default, ILU (block Jacobi in parallel), on an AIJ copy. */
  PetscCall(PCSetType(pc, user.gpu ? PCJACOBI : size == 1 ? PCILU : PCBJACOBI));
  /* On the GPU, GMRES with its Hessenberg matrix on the device (-ksp_type gmres: PETSc's). */
  if (user.gpu) PetscCall(StnKSPSetDefault(ksp, user.da));
#if defined(PETSC_HAVE_CUDA)
  /* PETSc's Jacobi checks the diagonal for zeros on the host; on the GPU that would copy
     it there and back at every Jacobian (-pc_jacobi_fixdiagonal turns it back on). */
  if (user.gpu) PetscCall(PCJacobiSetFixDiagonal(pc, PETSC_FALSE));
#endif
  PetscCall(SNESSetFromOptions(snes));
  PetscCall(SetUpJacobian(snes, &user, &P));

  /* ---- solve from the initial guess ---- */
  PetscCall(DMCreateGlobalVector(user.da, &X));
  PetscCall(PetscObjectSetName((PetscObject)X, "solution"));
  PetscCall(FormInitialGuess(&user, X));
#if defined(PETSC_HAVE_CUDA)
  if (user.gpu) { /* move the guess to the GPU now, so that the solve copies nothing */
    const PetscScalar *x;

    PetscCall(VecCUDAGetArrayRead(X, &x));
    PetscCall(VecCUDARestoreArrayRead(X, &x));
  }
#endif
  if (plot_convergence) PetscCall(StnRecordConvergence(snes, &history)); /* the residual norms, for the picture */
  PetscCall(PetscLogStageRegister("Solve", &stage)); /* -log_view shows the solve on its own */
  PetscCall(PetscLogStagePush(stage));
  PetscCall(SNESSolve(snes, NULL, X));
  PetscCall(PetscLogStagePop());
  PetscCall(SNESGetConvergedReason(snes, &reason));
  PetscCall(StnReportSolve(snes, "prog")); /* iterations, or why it failed */
  if (output && reason > 0) {
    PetscViewer viewer;

    PetscCall(PetscViewerVTKOpen(PETSC_COMM_WORLD, path, FILE_MODE_WRITE, &viewer));
    PetscCall(VecView(X, viewer));
    PetscCall(PetscViewerDestroy(&viewer));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "solution written to %s (open it in ParaView)\n", path));
  }
  /* pictures, with gnuplot; a failed solve's last iterate too, where it went wrong */
  if (plot_solution) PetscCall(StnPlotSolution(snes, X, "prog", solution_png));
  if (plot_convergence) PetscCall(StnPlotConvergence(snes, history, "prog", convergence_png));

  /* ---- clean up ---- */
  PetscCall(VecDestroy(&X));
  PetscCall(MatDestroy(&P));
  PetscCall(MatDestroy(&user.J));
  PetscCall(SNESDestroy(&snes));
  PetscCall(DMDestroy(&user.da));
  PetscCall(PetscFinalize());
  return reason > 0 ? 0 : 1;
}
