/* bench/probes/dmda_ghosts.c: whether two PETSc builds move a DMDA's ghosts alike. For every
   configuration of a sweep (1-D to 3-D, star and box, edges none, ghosted, periodic or mirrored
   in each direction, widths 0 to 2, 1 and 2 unknowns a point, grids the ranks do not divide,
   3-D grids of one plane)
   one line: DMGlobalToLocal (INSERT), DMLocalToGlobal (ADD) and DMLocalToLocal of a numbered
   vector as weighted sums over the ranks, or the error a configuration PETSc refuses gives.
   Run it against each build, the old one first on LD_LIBRARY_PATH, and compare the outputs
   (scripts/petsc-dmda-lazy-scatter.patch derives the scatter's index sets: no line differs).
   On 3 or more ranks a configuration that only some ranks refuse (a rank's part narrower than
   the stencil) leaves the others waiting: compare on 1 and 2 ranks, or skip those. CPU only,
   from the repository root, with the PETSc with MPI:

     STN_MPI=1 . scripts/gpu-env.sh
     mpicc -O1 bench/probes/dmda_ghosts.c -I$PETSC_DIR/include -L$PETSC_DIR/lib \
       -Wl,-rpath,$PETSC_DIR/lib -lpetsc -o build/dmda_ghosts
     mpiexec -n 2 build/dmda_ghosts > new.txt
     LD_LIBRARY_PATH=<the other build's lib>:$LD_LIBRARY_PATH mpiexec -n 2 build/dmda_ghosts > old.txt
     diff old.txt new.txt */
#include <petscdmda.h>

/* sum over v's local entries of v[i] * ((first + i) % mod + 1): a checksum that sees the order */
static PetscErrorCode weighted(Vec v, PetscInt first, PetscInt mod, double *sum)
{
  const PetscScalar *b;
  PetscInt           n;

  PetscFunctionBeginUser;
  PetscCall(VecGetLocalSize(v, &n));
  PetscCall(VecGetArrayRead(v, &b));
  for (PetscInt i = 0; i < n; i++) *sum += PetscRealPart(b[i]) * (double)((first + i) % mod + 1);
  PetscCall(VecRestoreArrayRead(v, &b));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* out: the checksums of DMGlobalToLocal of a numbered vector, DMLocalToGlobal (ADD) of that
   local vector, and DMLocalToLocal of it, summed over the ranks */
static PetscErrorCode sums(DM da, double out[3])
{
  Vec          g, l, l2;
  PetscInt     n, rs;
  PetscScalar *a;
  double       loc[3] = {0, 0, 0};

  PetscFunctionBeginUser;
  PetscCall(DMCreateGlobalVector(da, &g));
  PetscCall(DMCreateLocalVector(da, &l));
  PetscCall(DMCreateLocalVector(da, &l2));
  PetscCall(VecGetOwnershipRange(g, &rs, NULL));
  PetscCall(VecGetLocalSize(g, &n));
  PetscCall(VecGetArray(g, &a));
  for (PetscInt i = 0; i < n; i++) a[i] = rs + i + 0.5;
  PetscCall(VecRestoreArray(g, &a));
  PetscCall(VecSet(l, -1.0));
  PetscCall(DMGlobalToLocalBegin(da, g, INSERT_VALUES, l));
  PetscCall(DMGlobalToLocalEnd(da, g, INSERT_VALUES, l));
  PetscCall(weighted(l, 0, 97, &loc[0]));
  PetscCall(VecSet(g, 0.0));
  PetscCall(DMLocalToGlobalBegin(da, l, ADD_VALUES, g));
  PetscCall(DMLocalToGlobalEnd(da, l, ADD_VALUES, g));
  PetscCall(weighted(g, rs, 89, &loc[1]));
  PetscCall(VecSet(l2, -2.0));
  PetscCall(DMLocalToLocalBegin(da, l, INSERT_VALUES, l2));
  PetscCall(DMLocalToLocalEnd(da, l, INSERT_VALUES, l2));
  PetscCall(weighted(l2, 0, 83, &loc[2]));
  PetscCallMPI(MPI_Allreduce(loc, out, 3, MPI_DOUBLE, MPI_SUM, PETSC_COMM_WORLD));
  PetscCall(VecDestroy(&g));
  PetscCall(VecDestroy(&l));
  PetscCall(VecDestroy(&l2));
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  const DMBoundaryType bts[4] = {DM_BOUNDARY_NONE, DM_BOUNDARY_GHOSTED, DM_BOUNDARY_PERIODIC, DM_BOUNDARY_MIRROR};

  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  for (PetscInt dim = 1; dim <= 3; dim++)
    for (PetscInt st = 0; st < 2; st++)
      for (PetscInt s = 0; s <= 2; s++)
        for (PetscInt dof = 1; dof <= 2; dof++)
          for (PetscInt b = 0; b < 64; b++)
            for (PetscInt sz = 0; sz < 3; sz++) {
              DM             da = NULL;
              DMBoundaryType bx = bts[b % 4], by = bts[(b / 4) % 4], bz = bts[b / 16];
              const PetscInt M = (PetscInt[]){8, 13, 12}[sz], N = (PetscInt[]){9, 11, 13}[sz], P = (PetscInt[]){7, 10, 1}[sz]; /* the last one plane in z */
              PetscErrorCode ierr;
              double         out[3];
              if (dim < 3 && bz != DM_BOUNDARY_NONE) continue;
              if (dim < 2 && by != DM_BOUNDARY_NONE) continue;
              if (dim == 1) ierr = DMDACreate1d(PETSC_COMM_WORLD, bx, M, dof, s, NULL, &da);
              else if (dim == 2) ierr = DMDACreate2d(PETSC_COMM_WORLD, bx, by, st ? DMDA_STENCIL_BOX : DMDA_STENCIL_STAR, M, N, PETSC_DECIDE, PETSC_DECIDE, dof, s, NULL, NULL, &da);
              else ierr = DMDACreate3d(PETSC_COMM_WORLD, bx, by, bz, st ? DMDA_STENCIL_BOX : DMDA_STENCIL_STAR, M, N, P, PETSC_DECIDE, PETSC_DECIDE, PETSC_DECIDE, dof, s, NULL, NULL, NULL, &da);
              if (!ierr) ierr = DMSetUp(da);
              if (!ierr) ierr = sums(da, out);
              if (ierr) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "dim %d st %d s %d dof %d b %d %d %d sz %d: error %d\n", (int)dim, (int)st, (int)s, (int)dof, bx, by, bz, (int)sz, (int)ierr));
              else PetscCall(PetscPrintf(PETSC_COMM_WORLD, "dim %d st %d s %d dof %d b %d %d %d sz %d: %.17g %.17g %.17g\n", (int)dim, (int)st, (int)s, (int)dof, bx, by, bz, (int)sz, out[0], out[1], out[2]));
              if (da) PetscCall(DMDestroy(&da));
            }
  PetscCall(PetscFinalize());
  return 0;
}
