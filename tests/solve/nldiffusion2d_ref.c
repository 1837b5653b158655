static const char help[] = "examples/nldiffusion2d.stn written by hand: -div(k(u) grad u) = q, k(u) = 1 + kappa u^2,\n"
                           "Newton with the exact Jacobian as the operator and Picard's matrix as the preconditioning one.\n";

/*
 * The independent reference of tests/solve/run.sh, section 13: the residual, the exact Jacobian
 * (differentiated by hand) and Picard's matrix (k frozen) of examples/nldiffusion2d.stn, in the
 * shape of PETSc's SNES tutorials. On the unit square with mx x my points, hx = 1/(mx - 1):
 *
 *   boundary:  F = u - (x + y)
 *   interior:  F = hy/hx (ke (u - uE) + kw (u - uW)) + hx/hy (kn (u - uN) + ks (u - uS)) - hx hy q
 *
 * with ke = (k(u) + k(uE))/2 and so on. The operator A is dF/du; the preconditioning matrix P
 * drops the terms with k'. The solution starts from x + y; the last line says
 * "nldiffusion2d_ref: solved in N Newton iterations" as the generated programs do.
 */
#include <petscdmda.h>
#include <petscsnes.h>

#if !defined(PETSC_SUCCESS) /* PETSc 3.18 */
  #define PETSC_SUCCESS 0
#endif

typedef struct {
  PetscReal kappa, q;
} AppCtx;

static PetscReal K(const AppCtx *user, PetscReal v) { return 1 + user->kappa * v * v; }
static PetscReal dK(const AppCtx *user, PetscReal v) { return 2 * user->kappa * v; }

static PetscErrorCode FormFunctionLocal(DMDALocalInfo *info, PetscScalar **u, PetscScalar **f, AppCtx *user)
{
  const PetscReal hx = 1.0 / (info->mx - 1), hy = 1.0 / (info->my - 1);

  PetscFunctionBeginUser;
  for (PetscInt j = info->ys; j < info->ys + info->ym; j++)
    for (PetscInt i = info->xs; i < info->xs + info->xm; i++) {
      if (i == 0 || j == 0 || i == info->mx - 1 || j == info->my - 1) {
        f[j][i] = u[j][i] - (i * hx + j * hy);
        continue;
      }
      const PetscReal c = u[j][i], ku = K(user, c);
      const PetscReal ke = (ku + K(user, u[j][i + 1])) / 2, kw = (ku + K(user, u[j][i - 1])) / 2;
      const PetscReal kn = (ku + K(user, u[j + 1][i])) / 2, ks = (ku + K(user, u[j - 1][i])) / 2;
      f[j][i] = hy / hx * (ke * (c - u[j][i + 1]) + kw * (c - u[j][i - 1])) + hx / hy * (kn * (c - u[j + 1][i]) + ks * (c - u[j - 1][i])) - hx * hy * user->q;
    }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* One matrix's rows: exact (the derivative) or Picard's (without the k' terms). */
static PetscErrorCode FillRows(DMDALocalInfo *info, PetscScalar **u, Mat M, PetscBool exact, AppCtx *user)
{
  const PetscReal hx = 1.0 / (info->mx - 1), hy = 1.0 / (info->my - 1), ax = hy / hx, ay = hx / hy, e = exact ? 1.0 : 0.0;

  PetscFunctionBeginUser;
  for (PetscInt j = info->ys; j < info->ys + info->ym; j++)
    for (PetscInt i = info->xs; i < info->xs + info->xm; i++) {
      MatStencil  row = {.i = i, .j = j}, col[5];
      PetscScalar v[5];

      if (i == 0 || j == 0 || i == info->mx - 1 || j == info->my - 1) {
        v[0] = 1;
        PetscCall(MatSetValuesStencil(M, 1, &row, 1, &row, v, INSERT_VALUES));
        continue;
      }
      const PetscReal c = u[j][i], uE = u[j][i + 1], uW = u[j][i - 1], uN = u[j + 1][i], uS = u[j - 1][i], ku = K(user, c);
      const PetscReal ke = (ku + K(user, uE)) / 2, kw = (ku + K(user, uW)) / 2, kn = (ku + K(user, uN)) / 2, ks = (ku + K(user, uS)) / 2;
      const PetscReal h = dK(user, c) / 2; /* d(ke)/du = d(kw)/du = ... */
      col[0] = (MatStencil){.i = i, .j = j - 1};
      v[0] = ay * (e * dK(user, uS) / 2 * (c - uS) - ks);
      col[1] = (MatStencil){.i = i - 1, .j = j};
      v[1] = ax * (e * dK(user, uW) / 2 * (c - uW) - kw);
      col[2] = row;
      v[2] = ax * (ke + kw + e * h * ((c - uE) + (c - uW))) + ay * (kn + ks + e * h * ((c - uN) + (c - uS)));
      col[3] = (MatStencil){.i = i + 1, .j = j};
      v[3] = ax * (e * dK(user, uE) / 2 * (c - uE) - ke);
      col[4] = (MatStencil){.i = i, .j = j + 1};
      v[4] = ay * (e * dK(user, uN) / 2 * (c - uN) - kn);
      PetscCall(MatSetValuesStencil(M, 1, &row, 5, col, v, INSERT_VALUES));
    }
  PetscCall(MatAssemblyBegin(M, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(M, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* J: the exact Jacobian (unless it is -snes_mf_operator's), P: Picard's matrix. */
static PetscErrorCode FormJacobianLocal(DMDALocalInfo *info, PetscScalar **u, Mat J, Mat P, AppCtx *user)
{
  PetscBool mffd;

  PetscFunctionBeginUser;
  PetscCall(FillRows(info, u, P, PETSC_FALSE, user));
  PetscCall(PetscObjectTypeCompare((PetscObject)J, MATMFFD, &mffd));
  if (J != P && !mffd) PetscCall(FillRows(info, u, J, PETSC_TRUE, user));
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  AppCtx              user = {1.0, 20.0};
  DM                  da;
  SNES                snes;
  Mat                 A, P;
  Vec                 X;
  PetscInt            its, xs, ys, xm, ym, mx, my;
  SNESConvergedReason reason;
  PetscScalar       **x;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-kappa", &user.kappa, NULL));
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-q", &user.q, NULL));
  PetscCall(DMDACreate2d(PETSC_COMM_WORLD, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DMDA_STENCIL_STAR, 33, 33, PETSC_DECIDE, PETSC_DECIDE, 1, 1, NULL, NULL, &da));
  PetscCall(DMSetFromOptions(da));
  PetscCall(DMSetUp(da));
  PetscCall(SNESCreate(PETSC_COMM_WORLD, &snes));
  PetscCall(SNESSetDM(snes, da));
  PetscCall(DMDASNESSetFunctionLocal(da, INSERT_VALUES, (PetscErrorCode(*)(DMDALocalInfo *, void *, void *, void *))FormFunctionLocal, &user));
  PetscCall(DMDASNESSetJacobianLocal(da, (PetscErrorCode(*)(DMDALocalInfo *, void *, Mat, Mat, void *))FormJacobianLocal, &user));
  PetscCall(DMCreateMatrix(da, &A));
  PetscCall(DMCreateMatrix(da, &P));
  PetscCall(SNESSetJacobian(snes, A, P, NULL, NULL));
  PetscCall(SNESSetFromOptions(snes));

  PetscCall(DMCreateGlobalVector(da, &X));
  PetscCall(PetscObjectSetName((PetscObject)X, "solution"));
  PetscCall(DMDAGetInfo(da, NULL, &mx, &my, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
  PetscCall(DMDAGetCorners(da, &xs, &ys, NULL, &xm, &ym, NULL));
  PetscCall(DMDAVecGetArray(da, X, &x));
  for (PetscInt j = ys; j < ys + ym; j++)
    for (PetscInt i = xs; i < xs + xm; i++) x[j][i] = i / (PetscReal)(mx - 1) + j / (PetscReal)(my - 1);
  PetscCall(DMDAVecRestoreArray(da, X, &x));
  PetscCall(SNESSolve(snes, NULL, X));
  PetscCall(SNESGetConvergedReason(snes, &reason));
  PetscCall(SNESGetIterationNumber(snes, &its));
  if (reason > 0) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "nldiffusion2d_ref: solved in %" PetscInt_FMT " Newton iterations (%s)\n", its, SNESConvergedReasons[reason]));
  else PetscCall(PetscPrintf(PETSC_COMM_WORLD, "nldiffusion2d_ref: not solved (%s)\n", SNESConvergedReasons[reason]));

  PetscCall(VecDestroy(&X));
  PetscCall(MatDestroy(&A));
  PetscCall(MatDestroy(&P));
  PetscCall(SNESDestroy(&snes));
  PetscCall(DMDestroy(&da));
  PetscCall(PetscFinalize());
  return reason > 0 ? 0 : 1;
}
