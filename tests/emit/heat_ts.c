/*
 * heat_ts.c: generated from heat_ts.stn by stencilc 0.1.0. To change the equations, edit
 * heat_ts.stn and run stencilc again; this file can also be carried on by hand.
 *
 * # The heat equation in time: PETSc TS tutorial ex13.
 * #
 * #   u_t = u_xx + u_yy      on the unit square, 0 < t <= 1
 * #   u(x, y, 0) = exp(c r^3) where r = |(x, y) - (0.5, 0.5)| < 0.125, else 0
 * #
 * # Discretized as ex13 does: the 5-point Laplacian in plain difference
 * # quotients inside; on the boundary ex13's right-hand side is u itself, so
 * # there u_t = u, which keeps the boundary at its initial value 0.
 * # ex13 integrates with backward Euler, dt = 0.01, up to t = 1: the generated
 * # program's defaults (-ts_type, -ts_dt, -ts_max_time).
 *
 * The equations, as heat_ts.stn writes them:
 *
 *   residual u {
 *     boundary: dt(u) - u;
 *     interior: dt(u) - ((u[-1,0] - 2*u + u[1,0]) / hx^2 + (u[0,-1] - 2*u + u[0,1]) / hy^2);
 *   }
 */

static char help[] = "Integrates the equations of heat_ts.stn in time with PETSc's TS, a Newton-Krylov solve (SNES) per implicit step.\n"
  "Parameters (default in brackets):\n"
  "  -c <-30>: steepness of the initial bump\n"
  "The program's own options (-stn_*: the matrix, the device, output and pictures) follow with PETSc's.\n";

#include <math.h>
#include <petscdmda.h>
#include <petscts.h>

#include "stnrt.h" /* the runtime: the SG-DIA matrix, the program's options and solve (stnapp.h) */
#include "heat_ts.h" /* Field, AppCtx, NSTENCIL, DOF: shared with the CUDA kernels */

/* The Jacobian's block diagonals: the neighbours the equations couple (stencil
   analysis), as grid offsets (x, y, z), in the order of the SG-DIA columns. */
static const PetscInt stencil_offsets[NSTENCIL][3] = {
  {0, -1, 0}, {-1, 0, 0}, {0, 0, 0}, {1, 0, 0}, {0, 1, 0}
};

/* How each field's interior equation scales with the grid spacing h: its Jacobian's
   diagonal as h^p. Multigrid's rediscretized coarse grids need p = dim - 2, the equations
   multiplied by the cell size as PETSc's tutorials write them; the runtime picks the
   GPU's default preconditioner by it (STN_H_POWER_NONE: not a power of h). */
static const PetscInt h_power[DOF] = {-2};

/* Parameters: each default from the .stn (some depend on the grid), then its option. */
static PetscErrorCode SetParameters(const DMDALocalInfo *info, AppCtx *user)
{
  static const char *const names[] = {"c"};
  PetscBool given[1]; /* whether the command line gave each a value */

  PetscFunctionBeginUser;
  PetscOptionsBegin(PETSC_COMM_WORLD, NULL, "Parameters of heat_ts.stn", "");
  user->c = -3e+01; /* heat_ts.stn:19 */
  PetscCall(PetscOptionsReal("-c", "steepness of the initial bump", "heat_ts.stn", user->c, &user->c, &given[0]));
  PetscOptionsEnd();
  PetscCall(StnParamsGiven(1, names, given));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The initial condition, the state at t = 0 (the .stn's initial blocks). */
static PetscErrorCode FormInitialGuess(const DMDALocalInfo *info, AppCtx *user, Vec X)
{
  Field **x;

  PetscFunctionBeginUser;
  PetscCall(DMDAVecGetArray(info->da, X, &x));
  const PetscReal hx = (1.0 - 0.0) / (info->mx - 1);
  const PetscReal hy = (1.0 - 0.0) / (info->my - 1);
  for (PetscInt j = info->ys; j < info->ys + info->ym; j++) {
    for (PetscInt i = info->xs; i < info->xs + info->xm; i++) {
      const PetscScalar r_ = sqrt(pow((PetscReal)i * hx - 0.5, 2.0) + pow((PetscReal)j * hy - 0.5, 2.0));
      x[j][i].u = r_ < 0.125 ? exp(user->c * pow(r_, 3.0)) : 0.0; /* heat_ts.stn:29 */
    }
  }
  PetscCall(DMDAVecRestoreArray(info->da, X, &x));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* F(t, x, xdot) at the locally owned points, TS's IFunction: x is the local (ghosted) state,
   xdot its time derivative (dt(u) in the .stn), t the time. */
static PetscErrorCode FormIFunctionLocal(DMDALocalInfo *info, PetscReal t, const Field **x, const Field **xdot, Field **f, AppCtx *user)
{
  PetscFunctionBeginUser;
  const PetscReal hx = (1.0 - 0.0) / (info->mx - 1);
  const PetscReal hy = (1.0 - 0.0) / (info->my - 1);
  for (PetscInt j = info->ys; j < info->ys + info->ym; j++) {
    for (PetscInt i = info->xs; i < info->xs + info->xm; i++) {
      if (i == 0 || i == info->mx - 1 || j == 0 || j == info->my - 1) { /* the boundary */
        f[j][i].u = xdot[j][i].u - x[j][i].u; /* heat_ts.stn:22 */
      } else { /* interior */
        f[j][i].u = xdot[j][i].u
                  - ((x[j][i - 1].u - 2.0 * x[j][i].u + x[j][i + 1].u) / pow(hx, 2.0) + (x[j - 1][i].u - 2.0 * x[j][i].u + x[j + 1][i].u) / pow(hy, 2.0)); /* heat_ts.stn:23 */
      }
    }
  }
  PetscCall(PetscLogFlops(9.0 * info->xm * info->ym)); /* the interior's operations, counted at every point */
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* TS's IJacobian, shift * dF/d(xdot) + dF/dx, at the locally owned points, one block row per
   point: v[s][r][c] is its entry for F_r and x_c at neighbour s, the part dF/dx derived from
   the residual unless the .stn gives it, the part of the time derivatives always derived.
   The rows go into P, SG-DIA or AIJ (StnBlockRowsBegin says which). */
static PetscErrorCode FormIJacobianLocal(DMDALocalInfo *info, PetscReal t, const Field **x, const Field **xdot, PetscReal shift, Mat J, Mat P, AppCtx *user)
{
  StnBlockRows rows;

  PetscFunctionBeginUser;
  PetscCall(StnBlockRowsBegin(info, J, P, NSTENCIL, DOF, stencil_offsets, &rows));
  const PetscReal hx = (1.0 - 0.0) / (info->mx - 1);
  const PetscReal hy = (1.0 - 0.0) / (info->my - 1);
  const PetscScalar t0 = pow(hx, 2.0);
  const PetscScalar t1 = pow(hy, 2.0);
  const PetscScalar t2 = -(1.0 / t1);
  const PetscScalar t3 = -(1.0 / t0);
  for (PetscInt j = info->ys; j < info->ys + info->ym; j++) {
    for (PetscInt i = info->xs; i < info->xs + info->xm; i++) {
      PetscScalar v[NSTENCIL][DOF][DOF] = {{{0}}}; /* the entries the .stn leaves out are 0 */
      if (i == 0 || i == info->mx - 1 || j == 0 || j == info->my - 1) { /* the boundary */
        v[2][0][0] = -1.0 + shift; /* du/du[0,0], derived from heat_ts.stn:22 */
      } else { /* interior */
        v[0][0][0] = t2; /* du/du[0,-1], derived from heat_ts.stn:23 */
        v[1][0][0] = t3; /* du/du[-1,0], derived from heat_ts.stn:23 */
        v[2][0][0] = -(-2.0 / t0 + -2.0 / t1) + shift; /* du/du[0,0], derived from heat_ts.stn:23 */
        v[3][0][0] = t3; /* du/du[1,0], derived from heat_ts.stn:23 */
        v[4][0][0] = t2; /* du/du[0,1], derived from heat_ts.stn:23 */
      }
      PetscCall(StnBlockRowsSet(&rows, i, j, 0, &v[0][0][0]));
    }
  }
  PetscCall(StnBlockRowsEnd(&rows));
  PetscFunctionReturn(PETSC_SUCCESS);
}

#if defined(PETSC_HAVE_CUDA)
/* The .cu file's kernels, TS's IFunction and IJacobian: their name for the tuned shapes (the
   .stn and its hash), the IFunction's operations per point, the host IJacobian for grids
   not in SG-DIA, and the powers of h that scale multigrid's coarse grids (stnapp.h). */
static StnKernels kernels = {.name = "heat_ts.stn-cb4f3a4b", .residual = FormIFunctionCUDA, .jacobian = FormIJacobianCUDA, .residual_flops = 9.0,
                             .ijacobian_host = (StnIJacobianHostFn *)FormIJacobianLocal, .h_power = h_power};

/* F(t, x, xdot) on the GPU, TS's IFunction: X is the local (ghosted) state, Xdot its time
   derivative, F the residual, all CUDA vectors. */
static PetscErrorCode FormIFunctionLocalCUDA(DMDALocalInfo *info, PetscReal t, Vec X, Vec Xdot, Vec F, void *user)
{
  PetscFunctionBeginUser;
  PetscCall(StnIFunctionCUDA(info, t, X, Xdot, F, &kernels, user));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* TS's IJacobian on the GPU, shift * dF/d(xdot) + dF/dx straight into the SG-DIA values in
   device memory. */
static PetscErrorCode FormIJacobianLocalCUDA(DMDALocalInfo *info, PetscReal t, Vec X, Vec Xdot, PetscReal shift, Mat J, Mat P, void *user)
{
  PetscFunctionBeginUser;
  PetscCall(StnIJacobianCUDA(info, t, X, Xdot, shift, J, P, &kernels, user));
  PetscFunctionReturn(PETSC_SUCCESS);
}
#endif

int main(int argc, char **argv)
{
  AppCtx              user; /* the parameters */
  StnApp              app;  /* the program's options (-stn_*) and matrices: stnapp.h */
  DM                  da;
  DMDALocalInfo       info;
  TS                  ts;
  SNES                snes; /* the TS's, for each implicit step */
  Vec                 X;
  TSConvergedReason   reason;

  PetscCall(StnAppDefaults()); /* before PetscInitialize, which reads them: stnapp.h */
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(StnAppSetFromOptions(&app, "prog"));

  /* ---- the grid: heat_ts.stn:11 ---- */
  PetscCall(DMDACreate2d(PETSC_COMM_WORLD, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DMDA_STENCIL_STAR, 8, 8, PETSC_DECIDE, PETSC_DECIDE, DOF, 1, NULL, NULL, &da));
  PetscCall(DMSetFromOptions(da));
  PetscCall(StnAppSplitGrid(&app, da)); /* on several GPUs, slabs along the last axis */
  PetscCall(StnAppCheckGrid(da, 3, "heat_ts.stn")); /* 2 * stencil width + 1 points, and no more ranks than fit */
  PetscCall(DMSetUp(da));
  PetscCall(StnAppSetUpGrid(&app, da)); /* GPU vectors */
  PetscCall(DMDASetFieldName(da, 0, "u"));
  PetscCall(DMDAGetLocalInfo(da, &info));
  PetscCall(SetParameters(&info, &user));

  /* ---- the time stepper: F(t, x, xdot) = 0 and its IJacobian; each implicit step a Newton solve ---- */
  PetscCall(StnTSSetUp(&app)); /* what a time-dependent program cannot do: stnts.h */
  PetscCall(TSCreate(PETSC_COMM_WORLD, &ts));
  PetscCall(TSSetDM(ts, da));
  PetscCall(DMDATSSetIFunctionLocal(da, INSERT_VALUES, (DMDATSIFunctionLocal)FormIFunctionLocal, &user));
  PetscCall(DMDATSSetIJacobianLocal(da, (DMDATSIJacobianLocal)FormIJacobianLocal, &user));
#if defined(PETSC_HAVE_CUDA)
  if (app.gpu) { /* the CUDA twins, on CUDA vectors (they take precedence) */
    PetscCall(StnTSSetIFunctionLocalVec(da, FormIFunctionLocalCUDA, &user));
    PetscCall(StnTSSetIJacobianLocalVec(da, FormIJacobianLocalCUDA, &user));
  }
#endif
  PetscCall(StnTSSetDefaults(ts)); /* backward Euler, t from 0 to 1 in steps of 0.01: -ts_type, -ts_max_time, -ts_dt */
  PetscCall(TSGetSNES(ts, &snes));
  PetscCall(StnAppSetUpSolver(&app, snes, NSTENCIL, stencil_offsets, h_power)); /* SG-DIA, defaults per device */
  PetscCall(TSSetFromOptions(ts));
  PetscCall(StnAppSetUpJacobian(&app, snes)); /* an AIJ copy where the preconditioner needs one */

  /* ---- step in time from the initial condition, then the output: VTK, pictures ---- */
  PetscCall(DMCreateGlobalVector(da, &X));
  PetscCall(FormInitialGuess(&info, &user, X));
  PetscCall(DMDASetUniformCoordinates(da, 0.0, 1.0, 0.0, 1.0, 0.0, 0.0)); /* before the time stepping, whose saved states (-stn_output_series) show them */
  PetscCall(StnAppSolveTS(&app, ts, X, &reason));
  PetscCall(StnAppWriteOutputTS(&app, ts, X, reason));

  PetscCall(VecDestroy(&X));
  PetscCall(StnAppDestroy(&app));
  PetscCall(TSDestroy(&ts));
  PetscCall(DMDestroy(&da));
  PetscCall(PetscFinalize());
  return reason > 0 ? 0 : 1;
}
