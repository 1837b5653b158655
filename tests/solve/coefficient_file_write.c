static const char help[] = "Writes the conductivity k of tests/solve/coefficient.stn (or of coefficient_periodic.stn) on a grid\n"
                           "as a PETSc binary vector, the file a 'coefficient k: file;' program reads with -k_file.\n"
                           "Options: -da_grid_x M -da_grid_y N, -a AMPLITUDE, -periodic (k = 1 + a x + y, periodic in x),\n"
                           "-o FILE.\n";

/*
 * The file side of tests/solve/run.sh, section 18: k computed here, by hand, at every point of an
 * M x N grid on the unit square, and written with VecView and a binary viewer from a vector of a
 * dof-1 DMDA: one value per point in PETSc's natural ordering (x fastest), whatever the number of
 * ranks. Two coefficients, those of the expression programs the section compares with:
 *
 *   coefficient.stn           k = 1 + a sin(2 pi x) cos(pi y),  x = i hx, hx = 1/(M - 1)
 *   coefficient_periodic.stn  k = 1 + a x + y,                  x = i hx, hx = 1/M (periodic in x)
 *
 * with y = j hy, hy = 1/(N - 1).
 */
#include <petscdmda.h>
#include <petscviewer.h>

#if !defined(PETSC_SUCCESS) /* PETSc 3.18 */
  #define PETSC_SUCCESS 0
#endif

int main(int argc, char **argv)
{
  DM           da;
  Vec          k;
  PetscScalar **v;
  PetscViewer  viewer;
  PetscReal    a = 0.5;
  PetscBool    periodic = PETSC_FALSE;
  char         name[PETSC_MAX_PATH_LEN] = "k.bin";
  DMDALocalInfo info;

  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-a", &a, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-periodic", &periodic, NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-o", name, sizeof name, NULL));
  PetscCall(DMDACreate2d(PETSC_COMM_WORLD, periodic ? DM_BOUNDARY_PERIODIC : DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DMDA_STENCIL_STAR, 33, 33,
                         PETSC_DECIDE, PETSC_DECIDE, 1, 1, NULL, NULL, &da));
  PetscCall(DMSetFromOptions(da));
  PetscCall(DMSetUp(da));
  PetscCall(DMDAGetLocalInfo(da, &info));
  PetscCall(DMCreateGlobalVector(da, &k));
  PetscCall(DMDAVecGetArray(da, k, &v));
  {
    const PetscReal hx = periodic ? 1.0 / info.mx : 1.0 / (info.mx - 1), hy = 1.0 / (info.my - 1);

    for (PetscInt j = info.ys; j < info.ys + info.ym; j++)
      for (PetscInt i = info.xs; i < info.xs + info.xm; i++) {
        const PetscReal x = i * hx, y = j * hy;

        v[j][i] = periodic ? 1 + a * x + y : 1 + a * sin(2 * PETSC_PI * x) * cos(PETSC_PI * y);
      }
  }
  PetscCall(DMDAVecRestoreArray(da, k, &v));
  PetscCall(PetscViewerBinaryOpen(PETSC_COMM_WORLD, name, FILE_MODE_WRITE, &viewer));
  PetscCall(VecView(k, viewer));
  PetscCall(PetscViewerDestroy(&viewer));
  PetscCall(VecDestroy(&k));
  PetscCall(DMDestroy(&da));
  PetscCall(PetscFinalize());
  return 0;
}
