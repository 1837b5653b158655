/*
 * cavity.c: generated from cavity.stn by stencilc 0.1.0. To change the equations, edit
 * cavity.stn and run stencilc again; this file can also be carried on by hand.
 *
 * # Driven cavity: PETSc SNES tutorial ex19, velocity-vorticity-temperature
 * # form of the Navier-Stokes equations with a Boussinesq buoyancy term.
 * #
 * #   -Laplacian(U) - d(Omega)/dy                           = 0
 * #   -Laplacian(V) + d(Omega)/dx                           = 0
 * #   -Laplacian(Omega) + div([U*Omega, V*Omega]) - Gr * dT/dx = 0
 * #   -Laplacian(T) + Pr * div([U*T, V*T])                  = 0
 * #
 * # on the unit square. The lid (top) moves with velocity `lidvelocity`; the
 * # left wall is cold (T = 0), the right one hot (T = 1 when Gr > 0), top and
 * # bottom insulated. Convection is upwinded. Everything is scaled by hx*hy as
 * # in ex19, and the left and right walls win at the four corners, as ex19's
 * # loops do (they run last and cover whole columns).
 *
 * The equations, as cavity.stn writes them:
 *
 *   residual u {
 *     bottom:   u;
 *     top:      u - lidvelocity;
 *     left:     u;
 *     right:    u;
 *     interior: lap(u, u[-1,0], u[1,0], u[0,-1], u[0,1]) - 0.5 * (omega[0,1] - omega[0,-1]) * hx;
 *   }
 *   residual v {
 *     boundary: v;
 *     interior: lap(v, v[-1,0], v[1,0], v[0,-1], v[0,1]) + 0.5 * (omega[1,0] - omega[-1,0]) * hy;
 *   }
 *   residual omega {
 *     bottom:   omega + (u[0,1] - u) * dhy;
 *     top:      omega + (u - u[0,-1]) * dhy;
 *     left:     omega - (v[1,0] - v) * dhx;
 *     right:    omega - (v - v[-1,0]) * dhx;
 *     interior: lap(omega, omega[-1,0], omega[1,0], omega[0,-1], omega[0,1])
 *             + conv(omega, omega[-1,0], omega[1,0], omega[0,-1], omega[0,1], vxp, vxm, vyp, vym)
 *             - 0.5 * grashof * (temp[1,0] - temp[-1,0]) * hy;
 *   }
 *   residual temp {
 *     bottom:   temp - temp[0,1];
 *     top:      temp - temp[0,-1];
 *     left:     temp;
 *     right:    temp - (grashof > 0);
 *     interior: lap(temp, temp[-1,0], temp[1,0], temp[0,-1], temp[0,1])
 *             + prandtl * conv(temp, temp[-1,0], temp[1,0], temp[0,-1], temp[0,1], vxp, vxm, vyp, vym);
 *   }
 */

static char help[] = "Solves the equations of cavity.stn with PETSc's Newton-Krylov solver (SNES).\n"
  "Parameters (default in brackets):\n"
  "  -lidvelocity <1 / (nx * ny)>: velocity of the lid\n"
  "  -prandtl <1.0>: Prandtl number, in [0, inf]\n"
  "  -grashof <1.0>: Grashof number\n"
  "The program's own options (-stn_*: the matrix, the device, output and pictures) follow with PETSc's.\n";

#include <math.h>
#include <petscdmda.h>
#include <petscsnes.h>

#include "stnrt.h" /* the runtime: the SG-DIA matrix, the program's options and solve (stnapp.h) */
#include "cavity.h" /* Field, AppCtx, NSTENCIL, DOF: shared with the CUDA kernels */

/* The Jacobian's block diagonals: the neighbours the equations couple (stencil
   analysis), as grid offsets (x, y, z), in the order of the SG-DIA columns. */
static const PetscInt stencil_offsets[NSTENCIL][3] = {
  {0, -1, 0}, {-1, 0, 0}, {0, 0, 0}, {1, 0, 0}, {0, 1, 0}
};

/* How each field's interior equation scales with the grid spacing h: its Jacobian's
   diagonal as h^p. Multigrid's rediscretized coarse grids need p = dim - 2, the equations
   multiplied by the cell size as PETSc's tutorials write them; the runtime picks the
   GPU's default preconditioner by it (STN_H_POWER_NONE: not a power of h). */
static const PetscInt h_power[DOF] = {0, 0, 0, 0};

/* Parameters: each default from the .stn (some depend on the grid), then its option. */
static PetscErrorCode SetParameters(const DMDALocalInfo *info, AppCtx *user)
{
  static const char *const names[] = {"lidvelocity", "prandtl", "grashof"};
  PetscBool given[3]; /* whether the command line gave each a value */

  PetscFunctionBeginUser;
  PetscOptionsBegin(PETSC_COMM_WORLD, NULL, "Parameters of cavity.stn", "");
  user->lidvelocity = 1.0 / ((PetscReal)info->mx * (PetscReal)info->my); /* cavity.stn:23 */
  PetscCall(PetscOptionsReal("-lidvelocity", "velocity of the lid", "cavity.stn", user->lidvelocity, &user->lidvelocity, &given[0]));
  user->prandtl = 1.0; /* cavity.stn:24 */
  PetscCall(PetscOptionsReal("-prandtl", "Prandtl number", "cavity.stn", user->prandtl, &user->prandtl, &given[1]));
  user->grashof = 1.0; /* cavity.stn:25 */
  PetscCall(PetscOptionsReal("-grashof", "Grashof number", "cavity.stn", user->grashof, &user->grashof, &given[2]));
  PetscOptionsEnd();
  PetscCall(StnParamsGiven(3, names, given));
  PetscCheck(user->prandtl >= 0.0, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE,
             "-prandtl %g is out of range: cavity.stn:24 allows [0, inf]", (double)user->prandtl);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The initial guess of Newton's method (the .stn's initial blocks). */
static PetscErrorCode FormInitialGuess(const DMDALocalInfo *info, AppCtx *user, Vec X)
{
  Field **x;

  PetscFunctionBeginUser;
  PetscCall(DMDAVecGetArray(info->da, X, &x));
  const PetscReal hx = (1.0 - 0.0) / (info->mx - 1);
  for (PetscInt j = info->ys; j < info->ys + info->ym; j++) {
    for (PetscInt i = info->xs; i < info->xs + info->xm; i++) {
      x[j][i].u = 0.0; /* no initial block */
      x[j][i].v = 0.0; /* no initial block */
      x[j][i].omega = 0.0; /* no initial block */
      x[j][i].temp = (user->grashof > 0.0) * (PetscReal)i * hx; /* cavity.stn:81 */
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
  const PetscScalar dhx = (PetscReal)info->mx - 1.0;
  const PetscScalar hydhx = hy * dhx;
  const PetscScalar dhy = (PetscReal)info->my - 1.0;
  const PetscScalar hxdhy = hx * dhy;
  for (PetscInt j = info->ys; j < info->ys + info->ym; j++) {
    for (PetscInt i = info->xs; i < info->xs + info->xm; i++) {
      if (i == 0) { /* left & bottom, left, left & top */
        f[j][i].u = x[j][i].u; /* cavity.stn:50 */
        f[j][i].v = x[j][i].v; /* cavity.stn:56 */
        f[j][i].omega = x[j][i].omega - (x[j][i + 1].v - x[j][i].v) * dhx; /* cavity.stn:63 */
        f[j][i].temp = x[j][i].temp; /* cavity.stn:73 */
      } else if (i == info->mx - 1) { /* right & bottom, right, right & top */
        f[j][i].u = x[j][i].u; /* cavity.stn:51 */
        f[j][i].v = x[j][i].v; /* cavity.stn:56 */
        f[j][i].omega = x[j][i].omega - (x[j][i].v - x[j][i - 1].v) * dhx; /* cavity.stn:64 */
        f[j][i].temp = x[j][i].temp - (user->grashof > 0.0); /* cavity.stn:74 */
      } else if (j == 0) { /* bottom */
        f[j][i].u = x[j][i].u; /* cavity.stn:48 */
        f[j][i].v = x[j][i].v; /* cavity.stn:56 */
        f[j][i].omega = x[j][i].omega + (x[j + 1][i].u - x[j][i].u) * dhy; /* cavity.stn:61 */
        f[j][i].temp = x[j][i].temp - x[j + 1][i].temp; /* cavity.stn:71 */
      } else if (j == info->my - 1) { /* top */
        f[j][i].u = x[j][i].u - user->lidvelocity; /* cavity.stn:49 */
        f[j][i].v = x[j][i].v; /* cavity.stn:56 */
        f[j][i].omega = x[j][i].omega + (x[j][i].u - x[j - 1][i].u) * dhy; /* cavity.stn:62 */
        f[j][i].temp = x[j][i].temp - x[j - 1][i].temp; /* cavity.stn:72 */
      } else { /* interior */
        const PetscScalar lap_u = (2.0 * x[j][i].u - x[j][i - 1].u - x[j][i + 1].u) * hydhx
                                + (2.0 * x[j][i].u - x[j - 1][i].u - x[j + 1][i].u) * hxdhy;
        const PetscScalar lap_v = (2.0 * x[j][i].v - x[j][i - 1].v - x[j][i + 1].v) * hydhx
                                + (2.0 * x[j][i].v - x[j - 1][i].v - x[j + 1][i].v) * hxdhy;
        const PetscScalar lap_omega = (2.0 * x[j][i].omega - x[j][i - 1].omega - x[j][i + 1].omega) * hydhx
                                    + (2.0 * x[j][i].omega - x[j - 1][i].omega - x[j + 1][i].omega) * hxdhy;
        const PetscScalar t0 = fabs(x[j][i].u);
        const PetscScalar vxp = 0.5 * (x[j][i].u + t0);
        const PetscScalar vxm = 0.5 * (x[j][i].u - t0);
        const PetscScalar t1 = fabs(x[j][i].v);
        const PetscScalar vyp = 0.5 * (x[j][i].v + t1);
        const PetscScalar vym = 0.5 * (x[j][i].v - t1);
        const PetscScalar conv_omega = (vxp * (x[j][i].omega - x[j][i - 1].omega) + vxm * (x[j][i + 1].omega - x[j][i].omega)) * hy
                                     + (vyp * (x[j][i].omega - x[j - 1][i].omega) + vym * (x[j + 1][i].omega - x[j][i].omega)) * hx;
        const PetscScalar lap_temp = (2.0 * x[j][i].temp - x[j][i - 1].temp - x[j][i + 1].temp) * hydhx
                                   + (2.0 * x[j][i].temp - x[j - 1][i].temp - x[j + 1][i].temp) * hxdhy;
        const PetscScalar conv_temp = (vxp * (x[j][i].temp - x[j][i - 1].temp) + vxm * (x[j][i + 1].temp - x[j][i].temp)) * hy
                                    + (vyp * (x[j][i].temp - x[j - 1][i].temp) + vym * (x[j + 1][i].temp - x[j][i].temp)) * hx;
        f[j][i].u = lap_u - 0.5 * (x[j + 1][i].omega - x[j - 1][i].omega) * hx; /* cavity.stn:52 */
        f[j][i].v = lap_v + 0.5 * (x[j][i + 1].omega - x[j][i - 1].omega) * hy; /* cavity.stn:57 */
        f[j][i].omega = lap_omega
                      + conv_omega
                      - 0.5 * user->grashof * (x[j][i + 1].temp - x[j][i - 1].temp) * hy; /* cavity.stn:65 */
        f[j][i].temp = lap_temp + user->prandtl * conv_temp; /* cavity.stn:75 */
      }
    }
  }
  PetscCall(PetscLogFlops(83.0 * info->xm * info->ym)); /* the interior's operations, counted at every point */
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
  const PetscScalar dhx = (PetscReal)info->mx - 1.0;
  const PetscScalar hydhx = hy * dhx;
  const PetscScalar dhy = (PetscReal)info->my - 1.0;
  const PetscScalar hxdhy = hx * dhy;
  const PetscScalar t0 = 2.0 * hydhx + 2.0 * hxdhy;
  for (PetscInt j = info->ys; j < info->ys + info->ym; j++) {
    for (PetscInt i = info->xs; i < info->xs + info->xm; i++) {
      PetscScalar v[NSTENCIL][DOF][DOF] = {{{0}}}; /* the entries the .stn leaves out are 0 */
      if (i == 0) { /* left & bottom, left, left & top */
        v[2][0][0] = 1.0; /* du/du[0,0], derived from cavity.stn:50 */
        v[2][1][1] = 1.0; /* dv/dv[0,0], derived from cavity.stn:56 */
        v[2][2][1] = dhx; /* domega/dv[0,0], derived from cavity.stn:63 */
        v[2][2][2] = 1.0; /* domega/domega[0,0], derived from cavity.stn:63 */
        v[3][2][1] = -dhx; /* domega/dv[1,0], derived from cavity.stn:63 */
        v[2][3][3] = 1.0; /* dtemp/dtemp[0,0], derived from cavity.stn:73 */
      } else if (i == info->mx - 1) { /* right & bottom, right, right & top */
        v[2][0][0] = 1.0; /* du/du[0,0], derived from cavity.stn:51 */
        v[2][1][1] = 1.0; /* dv/dv[0,0], derived from cavity.stn:56 */
        v[1][2][1] = dhx; /* domega/dv[-1,0], derived from cavity.stn:64 */
        v[2][2][1] = -dhx; /* domega/dv[0,0], derived from cavity.stn:64 */
        v[2][2][2] = 1.0; /* domega/domega[0,0], derived from cavity.stn:64 */
        v[2][3][3] = 1.0; /* dtemp/dtemp[0,0], derived from cavity.stn:74 */
      } else if (j == 0) { /* bottom */
        v[2][0][0] = 1.0; /* du/du[0,0], derived from cavity.stn:48 */
        v[2][1][1] = 1.0; /* dv/dv[0,0], derived from cavity.stn:56 */
        v[2][2][0] = -dhy; /* domega/du[0,0], derived from cavity.stn:61 */
        v[2][2][2] = 1.0; /* domega/domega[0,0], derived from cavity.stn:61 */
        v[4][2][0] = dhy; /* domega/du[0,1], derived from cavity.stn:61 */
        v[2][3][3] = 1.0; /* dtemp/dtemp[0,0], derived from cavity.stn:71 */
        v[4][3][3] = -1.0; /* dtemp/dtemp[0,1], derived from cavity.stn:71 */
      } else if (j == info->my - 1) { /* top */
        v[2][0][0] = 1.0; /* du/du[0,0], derived from cavity.stn:49 */
        v[2][1][1] = 1.0; /* dv/dv[0,0], derived from cavity.stn:56 */
        v[0][2][0] = -dhy; /* domega/du[0,-1], derived from cavity.stn:62 */
        v[2][2][0] = dhy; /* domega/du[0,0], derived from cavity.stn:62 */
        v[2][2][2] = 1.0; /* domega/domega[0,0], derived from cavity.stn:62 */
        v[0][3][3] = -1.0; /* dtemp/dtemp[0,-1], derived from cavity.stn:72 */
        v[2][3][3] = 1.0; /* dtemp/dtemp[0,0], derived from cavity.stn:72 */
      } else { /* interior */
        const PetscScalar t1 = fabs(x[j][i].u);
        const PetscScalar vxp = 0.5 * (x[j][i].u + t1);
        const PetscScalar vxm = 0.5 * (x[j][i].u - t1);
        const PetscScalar t2 = fabs(x[j][i].v);
        const PetscScalar vyp = 0.5 * (x[j][i].v + t2);
        const PetscScalar vym = 0.5 * (x[j][i].v - t2);
        const PetscScalar t3 = (vxp + -0.5 * (x[j][i].u - t1)) * hy + (vyp + -0.5 * (x[j][i].v - t2)) * hx;
        const PetscScalar t4 = x[j][i].v >= 0.0 ? 1.0 : -1.0;
        const PetscScalar t5 = 0.5 * (1.0 - t4);
        const PetscScalar t6 = 0.5 * (1.0 + t4);
        const PetscScalar t7 = -0.5 * (x[j][i].v + t2) * hx;
        const PetscScalar t8 = x[j][i].u >= 0.0 ? 1.0 : -1.0;
        const PetscScalar t9 = 0.5 * (1.0 - t8);
        const PetscScalar t10 = 0.5 * (1.0 + t8);
        const PetscScalar t11 = -0.5 * (x[j][i].u + t1) * hy;
        v[0][0][0] = -hxdhy; /* du/du[0,-1], derived from cavity.stn:52 */
        v[0][0][2] = 0.5 * hx; /* du/domega[0,-1], derived from cavity.stn:52 */
        v[1][0][0] = -hydhx; /* du/du[-1,0], derived from cavity.stn:52 */
        v[2][0][0] = t0; /* du/du[0,0], derived from cavity.stn:52 */
        v[3][0][0] = -hydhx; /* du/du[1,0], derived from cavity.stn:52 */
        v[4][0][0] = -hxdhy; /* du/du[0,1], derived from cavity.stn:52 */
        v[4][0][2] = -0.5 * hx; /* du/domega[0,1], derived from cavity.stn:52 */
        v[0][1][1] = -hxdhy; /* dv/dv[0,-1], derived from cavity.stn:57 */
        v[1][1][1] = -hydhx; /* dv/dv[-1,0], derived from cavity.stn:57 */
        v[1][1][2] = -0.5 * hy; /* dv/domega[-1,0], derived from cavity.stn:57 */
        v[2][1][1] = t0; /* dv/dv[0,0], derived from cavity.stn:57 */
        v[3][1][1] = -hydhx; /* dv/dv[1,0], derived from cavity.stn:57 */
        v[3][1][2] = 0.5 * hy; /* dv/domega[1,0], derived from cavity.stn:57 */
        v[4][1][1] = -hxdhy; /* dv/dv[0,1], derived from cavity.stn:57 */
        v[0][2][2] = -hxdhy + t7; /* domega/domega[0,-1], derived from cavity.stn:65 */
        v[1][2][2] = -hydhx + t11; /* domega/domega[-1,0], derived from cavity.stn:65 */
        v[1][2][3] = -(-0.5 * user->grashof * hy); /* domega/dtemp[-1,0], derived from cavity.stn:65 */
        v[2][2][0] = (t10 * (x[j][i].omega - x[j][i - 1].omega) + t9 * (x[j][i + 1].omega - x[j][i].omega)) * hy; /* domega/du[0,0], derived from cavity.stn:65 */
        v[2][2][1] = (t6 * (x[j][i].omega - x[j - 1][i].omega) + t5 * (x[j + 1][i].omega - x[j][i].omega)) * hx; /* domega/dv[0,0], derived from cavity.stn:65 */
        v[2][2][2] = t0 + t3; /* domega/domega[0,0], derived from cavity.stn:65 */
        v[3][2][2] = -hydhx + vxm * hy; /* domega/domega[1,0], derived from cavity.stn:65 */
        v[3][2][3] = -(0.5 * user->grashof * hy); /* domega/dtemp[1,0], derived from cavity.stn:65 */
        v[4][2][2] = -hxdhy + vym * hx; /* domega/domega[0,1], derived from cavity.stn:65 */
        v[0][3][3] = -hxdhy + user->prandtl * t7; /* dtemp/dtemp[0,-1], derived from cavity.stn:75 */
        v[1][3][3] = -hydhx + user->prandtl * t11; /* dtemp/dtemp[-1,0], derived from cavity.stn:75 */
        v[2][3][0] = user->prandtl * ((t10 * (x[j][i].temp - x[j][i - 1].temp) + t9 * (x[j][i + 1].temp - x[j][i].temp)) * hy); /* dtemp/du[0,0], derived from cavity.stn:75 */
        v[2][3][1] = user->prandtl * ((t6 * (x[j][i].temp - x[j - 1][i].temp) + t5 * (x[j + 1][i].temp - x[j][i].temp)) * hx); /* dtemp/dv[0,0], derived from cavity.stn:75 */
        v[2][3][3] = t0 + user->prandtl * t3; /* dtemp/dtemp[0,0], derived from cavity.stn:75 */
        v[3][3][3] = -hydhx + user->prandtl * (vxm * hy); /* dtemp/dtemp[1,0], derived from cavity.stn:75 */
        v[4][3][3] = -hxdhy + user->prandtl * (vym * hx); /* dtemp/dtemp[0,1], derived from cavity.stn:75 */
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
static StnKernels kernels = {"cavity.stn-1cbb9bfe", FormFunctionCUDA, FormJacobianCUDA, 83.0, (DMDASNESJacobianFn *)FormJacobianLocal, FormJacobianMultCUDA};

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

  /* ---- the grid: cavity.stn:15 ---- */
  PetscCall(DMDACreate2d(PETSC_COMM_WORLD, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DMDA_STENCIL_STAR, 4, 4, PETSC_DECIDE, PETSC_DECIDE, DOF, 1, NULL, NULL, &da));
  PetscCall(DMSetFromOptions(da));
  PetscCall(StnAppSplitGrid(&app, da)); /* on several GPUs, slabs along the last axis */
  PetscCall(StnAppCheckGrid(da, 3, "cavity.stn")); /* 2 * stencil width + 1 points, and no more ranks than fit */
  PetscCall(DMSetUp(da));
  PetscCall(StnAppSetUpGrid(&app, da)); /* GPU vectors */
  PetscCall(DMDASetFieldName(da, 0, "u"));
  PetscCall(DMDASetFieldName(da, 1, "v"));
  PetscCall(DMDASetFieldName(da, 2, "omega"));
  PetscCall(DMDASetFieldName(da, 3, "temp"));
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
