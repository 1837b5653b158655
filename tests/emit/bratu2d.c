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
  "The program's own options (-stn_*: the matrix, the device, output and pictures) follow with PETSc's.\n";

#include <math.h>
#include <petscdmda.h>
#include <petscsnes.h>

#include "stnrt.h" /* the runtime: the SG-DIA matrix, the program's options and solve (stnapp.h) */
#include "bratu2d.h" /* Field, AppCtx, NSTENCIL, DOF: shared with the CUDA kernels */

/* The Jacobian's block diagonals: the neighbours the equations couple (stencil
   analysis), as grid offsets (x, y, z), in the order of the SG-DIA columns. */
static const PetscInt stencil_offsets[NSTENCIL][3] = {
  {0, -1, 0}, {-1, 0, 0}, {0, 0, 0}, {1, 0, 0}, {0, 1, 0}
};

/* How each field's interior equation scales with the grid spacing h: its Jacobian's
   diagonal as h^p. Multigrid's rediscretized coarse grids need p = dim - 2, the equations
   multiplied by the cell size as PETSc's tutorials write them; the runtime picks the
   GPU's default preconditioner by it (STN_H_POWER_NONE: not a power of h). */
static const PetscInt h_power[DOF] = {0};

/* Parameters: each default from the .stn (some depend on the grid), then its option. */
static PetscErrorCode SetParameters(const DMDALocalInfo *info, AppCtx *user)
{
  static const char *const names[] = {"par"};
  PetscBool given[1]; /* whether the command line gave each a value */

  PetscFunctionBeginUser;
  PetscOptionsBegin(PETSC_COMM_WORLD, NULL, "Parameters of bratu2d.stn", "");
  user->par = 6.0; /* bratu2d.stn:18 */
  PetscCall(PetscOptionsReal("-par", "Bratu parameter lambda", "bratu2d.stn", user->par, &user->par, &given[0]));
  PetscOptionsEnd();
  PetscCall(StnParamsGiven(1, names, given));
  PetscCheck(user->par >= 0.0 && user->par <= 6.81, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE,
             "-par %g is out of range: bratu2d.stn:18 allows [0, 6.81]", (double)user->par);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The initial guess of Newton's method (the .stn's initial blocks). */
static PetscErrorCode FormInitialGuess(const DMDALocalInfo *info, AppCtx *user, Vec X)
{
  Field **x;

  PetscFunctionBeginUser;
  PetscCall(DMDAVecGetArray(info->da, X, &x));
  const PetscReal hx = (1.0 - 0.0) / (info->mx - 1);
  const PetscReal hy = (1.0 - 0.0) / (info->my - 1);
  for (PetscInt j = info->ys; j < info->ys + info->ym; j++) {
    for (PetscInt i = info->xs; i < info->xs + info->xm; i++) {
      if (i == 0 || i == info->mx - 1 || j == 0 || j == info->my - 1) { /* the boundary */
        x[j][i].u = 0.0; /* bratu2d.stn:36 */
      } else { /* interior */
        x[j][i].u = user->par / (user->par + 1.0) * sqrt(fmin(fmin((PetscReal)i, (PetscReal)info->mx - (PetscReal)i - 1.0) * hx, fmin((PetscReal)j, (PetscReal)info->my - (PetscReal)j - 1.0) * hy)); /* bratu2d.stn:37 */
      }
    }
  }
  PetscCall(DMDAVecRestoreArray(info->da, X, &x));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* F(x) at the locally owned points; x is the local (ghosted) state. */
static PetscErrorCode FormFunctionLocal(DMDALocalInfo *info, const Field **x, Field **f, AppCtx *user)
{
  PetscFunctionBeginUser;
  const PetscReal hx = (1.0 - 0.0) / (info->mx - 1);
  const PetscReal hy = (1.0 - 0.0) / (info->my - 1);
  const PetscScalar hydhx = hy / hx;
  const PetscScalar hxdhy = hx / hy;
  for (PetscInt j = info->ys; j < info->ys + info->ym; j++) {
    for (PetscInt i = info->xs; i < info->xs + info->xm; i++) {
      if (i == 0 || i == info->mx - 1 || j == 0 || j == info->my - 1) { /* the boundary */
        f[j][i].u = 2.0 * (hydhx + hxdhy) * x[j][i].u; /* bratu2d.stn:24 */
      } else { /* interior */
        const PetscScalar uw = i - 1 == 0 ? 0.0 : x[j][i - 1].u;
        const PetscScalar ue = i + 1 == info->mx - 1 ? 0.0 : x[j][i + 1].u;
        const PetscScalar us = j - 1 == 0 ? 0.0 : x[j - 1][i].u;
        const PetscScalar un = j + 1 == info->my - 1 ? 0.0 : x[j + 1][i].u;
        f[j][i].u = (2.0 * x[j][i].u - uw - ue) * hydhx
                  + (2.0 * x[j][i].u - us - un) * hxdhy
                  - hx * hy * user->par * exp(x[j][i].u); /* bratu2d.stn:31 */
      }
    }
  }
  PetscCall(PetscLogFlops(23.0 * info->xm * info->ym)); /* the interior's operations, counted at every point */
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The Jacobian at the locally owned points, one block row per point: v[s][r][c] is
   d(F_r)/d(x_c at neighbour s), derived from the residual unless the .stn gives it.
   The rows go into P, SG-DIA or AIJ (StnBlockRowsBegin says which). */
static PetscErrorCode FormJacobianLocal(DMDALocalInfo *info, const Field **x, Mat J, Mat P, AppCtx *user)
{
  StnBlockRows rows;

  PetscFunctionBeginUser;
  PetscCall(StnBlockRowsBegin(info, J, P, NSTENCIL, DOF, stencil_offsets, &rows));
  const PetscReal hx = (1.0 - 0.0) / (info->mx - 1);
  const PetscReal hy = (1.0 - 0.0) / (info->my - 1);
  const PetscScalar hydhx = hy / hx;
  const PetscScalar hxdhy = hx / hy;
  const PetscScalar t0 = 2.0 * (hydhx + hxdhy);
  for (PetscInt j = info->ys; j < info->ys + info->ym; j++) {
    for (PetscInt i = info->xs; i < info->xs + info->xm; i++) {
      PetscScalar v[NSTENCIL][DOF][DOF] = {{{0}}}; /* the entries the .stn leaves out are 0 */
      if (i == 0 || i == info->mx - 1 || j == 0 || j == info->my - 1) { /* the boundary */
        v[2][0][0] = t0; /* du/du[0,0], derived from bratu2d.stn:24 */
      } else { /* interior */
        v[0][0][0] = -(j - 1 == 0 ? 0.0 : 1.0) * hxdhy; /* du/du[0,-1], derived from bratu2d.stn:31 */
        v[1][0][0] = -(i - 1 == 0 ? 0.0 : 1.0) * hydhx; /* du/du[-1,0], derived from bratu2d.stn:31 */
        v[2][0][0] = 2.0 * hydhx + 2.0 * hxdhy - hx * hy * user->par * exp(x[j][i].u); /* du/du[0,0], derived from bratu2d.stn:31 */
        v[3][0][0] = -(i + 1 == info->mx - 1 ? 0.0 : 1.0) * hydhx; /* du/du[1,0], derived from bratu2d.stn:31 */
        v[4][0][0] = -(j + 1 == info->my - 1 ? 0.0 : 1.0) * hxdhy; /* du/du[0,1], derived from bratu2d.stn:31 */
      }
      PetscCall(StnBlockRowsSet(&rows, i, j, 0, &v[0][0][0]));
    }
  }
  PetscCall(StnBlockRowsEnd(&rows));
  PetscFunctionReturn(PETSC_SUCCESS);
}

#if defined(PETSC_HAVE_CUDA)
/* The .cu file's kernels, their name for the tuned shapes (the .stn and its hash), the
   residual's operations per point, the host Jacobian for grids not in SG-DIA, and the
   Jacobian's product without its matrix (-stn_operator matfree). */
static StnKernels kernels = {"bratu2d.stn-2c27533b", FormFunctionCUDA, FormJacobianCUDA, 23.0, (DMDASNESJacobianFn *)FormJacobianLocal, FormJacobianMultCUDA};

/* F(x) on the GPU: X is the local (ghosted) state, F the residual, both CUDA vectors. */
static PetscErrorCode FormFunctionLocalCUDA(DMDALocalInfo *info, Vec X, Vec F, void *user)
{
  PetscFunctionBeginUser;
  PetscCall(StnResidualCUDA(info, X, F, &kernels, user));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The Jacobian on the GPU, straight into the SG-DIA values in device memory. */
static PetscErrorCode FormJacobianLocalCUDA(DMDALocalInfo *info, Vec X, Mat J, Mat P, void *user)
{
  PetscFunctionBeginUser;
  PetscCall(StnJacobianCUDA(info, X, J, P, &kernels, user));
  PetscFunctionReturn(PETSC_SUCCESS);
}
#endif

int main(int argc, char **argv)
{
  AppCtx              user; /* the parameters */
  StnApp              app;  /* the program's options (-stn_*) and matrices: stnapp.h */
  DM                  da;
  DMDALocalInfo       info;
  SNES                snes;
  Vec                 X;
  SNESConvergedReason reason;

  PetscCall(StnAppDefaults()); /* before PetscInitialize, which reads them: stnapp.h */
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(StnAppSetFromOptions(&app, "prog"));

  /* ---- the grid: bratu2d.stn:10 ---- */
  PetscCall(DMDACreate2d(PETSC_COMM_WORLD, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DMDA_STENCIL_STAR, 4, 4, PETSC_DECIDE, PETSC_DECIDE, DOF, 1, NULL, NULL, &da));
  PetscCall(DMSetFromOptions(da));
  PetscCall(StnAppSplitGrid(&app, da)); /* on several GPUs, slabs along the last axis */
  PetscCall(StnAppCheckGrid(da, 3, "bratu2d.stn")); /* 2 * stencil width + 1 points, and no more ranks than fit */
  PetscCall(DMSetUp(da));
  PetscCall(StnAppSetUpGrid(&app, da)); /* GPU vectors */
  PetscCall(DMDASetFieldName(da, 0, "u"));
  PetscCall(DMDAGetLocalInfo(da, &info));
  PetscCall(SetParameters(&info, &user));

  /* ---- the nonlinear solver: the residual and Jacobian on every grid of the hierarchy ---- */
  PetscCall(SNESCreate(PETSC_COMM_WORLD, &snes));
  PetscCall(SNESSetDM(snes, da));
  PetscCall(DMDASNESSetFunctionLocal(da, INSERT_VALUES, (DMDASNESFunctionFn *)FormFunctionLocal, &user));
  PetscCall(DMDASNESSetJacobianLocal(da, (DMDASNESJacobianFn *)FormJacobianLocal, &user));
#if defined(PETSC_HAVE_CUDA)
  if (app.gpu) { /* the CUDA twins, on CUDA vectors (they take precedence) */
    PetscCall(DMDASNESSetFunctionLocalVec(da, INSERT_VALUES, FormFunctionLocalCUDA, &user));
    PetscCall(DMDASNESSetJacobianLocalVec(da, FormJacobianLocalCUDA, &user));
  }
#endif
  PetscCall(StnAppSetUpSolver(&app, snes, NSTENCIL, stencil_offsets, h_power)); /* SG-DIA, defaults per device */
  PetscCall(SNESSetFromOptions(snes));
  PetscCall(StnAppSetUpJacobian(&app, snes)); /* an AIJ copy where the preconditioner needs one */

  /* ---- solve from the initial guess, then the output: VTK, pictures ---- */
  PetscCall(DMCreateGlobalVector(da, &X));
  PetscCall(FormInitialGuess(&info, &user, X));
  PetscCall(StnAppSolve(&app, snes, X, &reason));
  PetscCall(DMDASetUniformCoordinates(da, 0.0, 1.0, 0.0, 1.0, 0.0, 0.0)); /* now: the grids of a hierarchy need none */
  PetscCall(StnAppWriteOutput(&app, snes, X, reason));

  PetscCall(VecDestroy(&X));
  PetscCall(StnAppDestroy(&app));
  PetscCall(SNESDestroy(&snes));
  PetscCall(DMDestroy(&da));
  PetscCall(PetscFinalize());
  return reason > 0 ? 0 : 1;
}
