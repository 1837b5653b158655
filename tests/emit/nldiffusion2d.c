/*
 * nldiffusion2d.c: generated from nldiffusion2d.stn by stencilc 0.1.0. To change the equations, edit
 * nldiffusion2d.stn and run stencilc again; this file can also be carried on by hand.
 *
 * # Nonlinear diffusion -div(k(u) grad u) = q with k(u) = 1 + kappa u^2, on the
 * # unit square with u = x + y on the boundary, k on each cell face the mean of
 * # its two points' values, every interior row multiplied by the cell size.
 * #
 * # The jacobian block is approximate (LANGUAGE.md 4.16): Picard's matrix, the
 * # diffusion operator with k frozen at the current iterate, without the terms
 * # dk/du (u_E - u) that the derivative has. It preconditions; the operator of
 * # Newton's linear systems stays the exact Jacobian, so Newton converges as with
 * # the derived one. tests/solve/run.sh (section 13) compares it with the same
 * # problem written by hand with PETSc (tests/solve/nldiffusion2d_ref.c) and with
 * # this file without its jacobian block.
 *
 * The equations, as nldiffusion2d.stn writes them:
 *
 *   residual u {
 *     let ke = (k(u) + k(u[1,0])) / 2;
 *     let kw = (k(u) + k(u[-1,0])) / 2;
 *     let kn = (k(u) + k(u[0,1])) / 2;
 *     let ks = (k(u) + k(u[0,-1])) / 2;
 *     boundary: u - (x + y);
 *     interior: hy / hx * (ke * (u - u[1,0]) + kw * (u - u[-1,0]))
 *             + hx / hy * (kn * (u - u[0,1]) + ks * (u - u[0,-1])) - hx * hy * q;
 *   }
 *   jacobian u approximate {
 *     interior: u = hy / hx * (ke + kw) + hx / hy * (kn + ks),
 *               u[1,0] = -hy / hx * ke, u[-1,0] = -hy / hx * kw,
 *               u[0,1] = -hx / hy * kn, u[0,-1] = -hx / hy * ks;
 *   }
 */

static char help[] = "Solves the equations of nldiffusion2d.stn with PETSc's Newton-Krylov solver (SNES).\n"
  "Parameters (default in brackets):\n"
  "  -kappa <1>: strength of the nonlinearity of k, in [0, 10]\n"
  "  -q <20>: source\n"
  "The program's own options (-stn_*: the matrix, the device, output and pictures) follow with PETSc's.\n";

#include <math.h>
#include <petscdmda.h>
#include <petscsnes.h>

#include "stnrt.h" /* the runtime: the SG-DIA matrix, the program's options and solve (stnapp.h) */
#include "nldiffusion2d.h" /* Field, AppCtx, NSTENCIL, DOF: shared with the CUDA kernels */

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
  static const char *const names[] = {"kappa", "q"};
  PetscBool given[2]; /* whether the command line gave each a value */

  PetscFunctionBeginUser;
  PetscOptionsBegin(PETSC_COMM_WORLD, NULL, "Parameters of nldiffusion2d.stn", "");
  user->kappa = 1.0; /* nldiffusion2d.stn:20 */
  PetscCall(PetscOptionsReal("-kappa", "strength of the nonlinearity of k", "nldiffusion2d.stn", user->kappa, &user->kappa, &given[0]));
  user->q = 2e+01; /* nldiffusion2d.stn:21 */
  PetscCall(PetscOptionsReal("-q", "source", "nldiffusion2d.stn", user->q, &user->q, &given[1]));
  PetscOptionsEnd();
  PetscCall(StnParamsGiven(2, names, given));
  PetscCheck(user->kappa >= 0.0 && user->kappa <= 1e+01, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE,
             "-kappa %g is out of range: nldiffusion2d.stn:20 allows [0, 10]", (double)user->kappa);
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
      x[j][i].u = (PetscReal)i * hx + (PetscReal)j * hy; /* nldiffusion2d.stn:42 */
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
  for (PetscInt j = info->ys; j < info->ys + info->ym; j++) {
    for (PetscInt i = info->xs; i < info->xs + info->xm; i++) {
      if (i == 0 || i == info->mx - 1 || j == 0 || j == info->my - 1) { /* the boundary */
        f[j][i].u = x[j][i].u - ((PetscReal)i * hx + (PetscReal)j * hy); /* nldiffusion2d.stn:30 */
      } else { /* interior */
        const PetscScalar k_u = 1.0 + user->kappa * pow(x[j][i].u, 2.0);
        const PetscScalar k_u_2 = 1.0 + user->kappa * pow(x[j][i + 1].u, 2.0);
        const PetscScalar ke = (k_u + k_u_2) / 2.0;
        const PetscScalar k_u_3 = 1.0 + user->kappa * pow(x[j][i - 1].u, 2.0);
        const PetscScalar kw = (k_u + k_u_3) / 2.0;
        const PetscScalar k_u_4 = 1.0 + user->kappa * pow(x[j + 1][i].u, 2.0);
        const PetscScalar kn = (k_u + k_u_4) / 2.0;
        const PetscScalar k_u_5 = 1.0 + user->kappa * pow(x[j - 1][i].u, 2.0);
        const PetscScalar ks = (k_u + k_u_5) / 2.0;
        f[j][i].u = hy / hx * (ke * (x[j][i].u - x[j][i + 1].u) + kw * (x[j][i].u - x[j][i - 1].u))
                  + hx / hy * (kn * (x[j][i].u - x[j + 1][i].u) + ks * (x[j][i].u - x[j - 1][i].u))
                  - hx * hy * user->q; /* nldiffusion2d.stn:31 */
      }
    }
  }
  PetscCall(PetscLogFlops(37.0 * info->xm * info->ym)); /* the interior's operations, counted at every point */
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The exact Jacobian, the operator of Newton's linear systems: every entry is the
   derivative of the residual (derived, or given in an exact block), the approximate
   blocks' entries too. The rows go into J, SG-DIA or AIJ. */
static PetscErrorCode FormJacobianExactLocal(DMDALocalInfo *info, const Field **x, Mat J, AppCtx *user)
{
  StnBlockRows rows;

  PetscFunctionBeginUser;
  PetscCall(StnBlockRowsBegin(info, J, J, NSTENCIL, DOF, stencil_offsets, &rows));
  const PetscReal hx = (1.0 - 0.0) / (info->mx - 1);
  const PetscReal hy = (1.0 - 0.0) / (info->my - 1);
  const PetscScalar t0 = hy / hx;
  const PetscScalar t1 = hx / hy;
  for (PetscInt j = info->ys; j < info->ys + info->ym; j++) {
    for (PetscInt i = info->xs; i < info->xs + info->xm; i++) {
      PetscScalar v[NSTENCIL][DOF][DOF] = {{{0}}}; /* the entries the .stn leaves out are 0 */
      if (i == 0 || i == info->mx - 1 || j == 0 || j == info->my - 1) { /* the boundary */
        v[2][0][0] = 1.0; /* du/du[0,0], derived from nldiffusion2d.stn:30 */
      } else { /* interior */
        const PetscScalar k_u = 1.0 + user->kappa * pow(x[j][i].u, 2.0);
        const PetscScalar k_u_2 = 1.0 + user->kappa * pow(x[j][i + 1].u, 2.0);
        const PetscScalar ke = (k_u + k_u_2) / 2.0;
        const PetscScalar k_u_3 = 1.0 + user->kappa * pow(x[j][i - 1].u, 2.0);
        const PetscScalar kw = (k_u + k_u_3) / 2.0;
        const PetscScalar k_u_4 = 1.0 + user->kappa * pow(x[j + 1][i].u, 2.0);
        const PetscScalar kn = (k_u + k_u_4) / 2.0;
        const PetscScalar k_u_5 = 1.0 + user->kappa * pow(x[j - 1][i].u, 2.0);
        const PetscScalar ks = (k_u + k_u_5) / 2.0;
        const PetscScalar t2 = user->kappa * (2.0 * x[j][i].u) / 2.0;
        v[0][0][0] = t1 * (user->kappa * (2.0 * x[j - 1][i].u) / 2.0 * (x[j][i].u - x[j - 1][i].u) - ks); /* du/du[0,-1], derived from nldiffusion2d.stn:31 */
        v[1][0][0] = t0 * (user->kappa * (2.0 * x[j][i - 1].u) / 2.0 * (x[j][i].u - x[j][i - 1].u) - kw); /* du/du[-1,0], derived from nldiffusion2d.stn:31 */
        v[2][0][0] = t0 * (t2 * (x[j][i].u - x[j][i + 1].u) + ke + (t2 * (x[j][i].u - x[j][i - 1].u) + kw))
                   + t1 * (t2 * (x[j][i].u - x[j + 1][i].u) + kn + (t2 * (x[j][i].u - x[j - 1][i].u) + ks)); /* du/du[0,0], derived from nldiffusion2d.stn:31 */
        v[3][0][0] = t0 * (user->kappa * (2.0 * x[j][i + 1].u) / 2.0 * (x[j][i].u - x[j][i + 1].u) - ke); /* du/du[1,0], derived from nldiffusion2d.stn:31 */
        v[4][0][0] = t1 * (user->kappa * (2.0 * x[j + 1][i].u) / 2.0 * (x[j][i].u - x[j + 1][i].u) - kn); /* du/du[0,1], derived from nldiffusion2d.stn:31 */
      }
      PetscCall(StnBlockRowsSet(&rows, i, j, 0, &v[0][0][0]));
    }
  }
  PetscCall(StnBlockRowsEnd(&rows));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The Jacobian at the locally owned points, one block row per point: v[s][r][c] is
   d(F_r)/d(x_c at neighbour s), derived from the residual unless the .stn gives it.
   The .stn's approximate entries make it the preconditioning matrix P only (SG-DIA or
   AIJ); the operator J gets the exact Jacobian where it is a matrix, and is J w
   without a matrix (GPU) or -snes_mf_operator's differences otherwise. */
static PetscErrorCode FormJacobianLocal(DMDALocalInfo *info, const Field **x, Mat J, Mat P, AppCtx *user)
{
  StnBlockRows rows;
  PetscBool    assembled;

  PetscFunctionBeginUser;
  PetscCall(StnBlockRowsBegin(info, P, P, NSTENCIL, DOF, stencil_offsets, &rows));
  const PetscReal hx = (1.0 - 0.0) / (info->mx - 1);
  const PetscReal hy = (1.0 - 0.0) / (info->my - 1);
  const PetscScalar t0 = -hy / hx;
  const PetscScalar t1 = -hx / hy;
  for (PetscInt j = info->ys; j < info->ys + info->ym; j++) {
    for (PetscInt i = info->xs; i < info->xs + info->xm; i++) {
      PetscScalar v[NSTENCIL][DOF][DOF] = {{{0}}}; /* the entries the .stn leaves out are 0 */
      if (i == 0 || i == info->mx - 1 || j == 0 || j == info->my - 1) { /* the boundary */
        v[2][0][0] = 1.0; /* du/du[0,0], derived from nldiffusion2d.stn:30 */
      } else { /* interior */
        const PetscScalar k_u = 1.0 + user->kappa * pow(x[j][i].u, 2.0);
        const PetscScalar k_u_2 = 1.0 + user->kappa * pow(x[j][i + 1].u, 2.0);
        const PetscScalar ke = (k_u + k_u_2) / 2.0;
        const PetscScalar k_u_3 = 1.0 + user->kappa * pow(x[j][i - 1].u, 2.0);
        const PetscScalar kw = (k_u + k_u_3) / 2.0;
        const PetscScalar k_u_4 = 1.0 + user->kappa * pow(x[j + 1][i].u, 2.0);
        const PetscScalar kn = (k_u + k_u_4) / 2.0;
        const PetscScalar k_u_5 = 1.0 + user->kappa * pow(x[j - 1][i].u, 2.0);
        const PetscScalar ks = (k_u + k_u_5) / 2.0;
        v[0][0][0] = t1 * ks; /* du/du[0,-1], approximated at nldiffusion2d.stn:38 */
        v[1][0][0] = t0 * kw; /* du/du[-1,0], approximated at nldiffusion2d.stn:37 */
        v[2][0][0] = hy / hx * (ke + kw) + hx / hy * (kn + ks); /* du/du[0,0], approximated at nldiffusion2d.stn:36 */
        v[3][0][0] = t0 * ke; /* du/du[1,0], approximated at nldiffusion2d.stn:37 */
        v[4][0][0] = t1 * kn; /* du/du[0,1], approximated at nldiffusion2d.stn:38 */
      }
      PetscCall(StnBlockRowsSet(&rows, i, j, 0, &v[0][0][0]));
    }
  }
  PetscCall(StnBlockRowsEnd(&rows));
  PetscCall(StnOperatorAssembled(J, P, &assembled)); /* J is a matrix of its own */
  if (assembled) PetscCall(FormJacobianExactLocal(info, x, J, user));
  PetscFunctionReturn(PETSC_SUCCESS);
}

#if defined(PETSC_HAVE_CUDA)
/* The .cu file's kernels, their name for the tuned shapes (the .stn and its hash), the
   residual's operations per point, the host Jacobian for grids not in SG-DIA, and the
   Jacobian's product without its matrix (-stn_operator matfree). */
static StnKernels kernels = {"nldiffusion2d.stn-457f2856", FormFunctionCUDA, FormJacobianCUDA, 37.0, (DMDASNESJacobianFn *)FormJacobianLocal, FormJacobianMultCUDA};

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

  /* ---- the grid: nldiffusion2d.stn:12 ---- */
  PetscCall(DMDACreate2d(PETSC_COMM_WORLD, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DMDA_STENCIL_STAR, 33, 33, PETSC_DECIDE, PETSC_DECIDE, DOF, 1, NULL, NULL, &da));
  PetscCall(DMSetFromOptions(da));
  PetscCall(StnAppSplitGrid(&app, da)); /* on several GPUs, slabs along the last axis */
  PetscCall(StnAppCheckGrid(da, 3, "nldiffusion2d.stn")); /* 2 * stencil width + 1 points, and no more ranks than fit */
  PetscCall(DMSetUp(da));
  PetscCall(StnAppSetUpGrid(&app, da)); /* GPU vectors */
  PetscCall(DMDASetFieldName(da, 0, "u"));
  PetscCall(DMDAGetLocalInfo(da, &info));
  PetscCall(SetParameters(&info, &user));
  app.approximate = PETSC_TRUE; /* an approximate jacobian block: the exact operator, P from the .stn */
  user.check_jacobian = app.check_jacobian;

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
