/*
** transfer_test.c: stencilc's grid transfers (runtime/stntransfer.c, host path) against PETSc's
** DMCreateInterpolation and DMCreateInjection on the same pair of DMDA grids: interpolation,
** its transpose (restriction), their Add forms, injection and the scale vector 1 / (P^T 1)
** (DMCreateInterpolationScale's, which stencilc's builds from the weights), on random vectors, in 1D, 2D and
** 3D, periodic or not, with 1 and 3 unknowns per point, on any number of ranks (tests/runtime/run.sh
** runs 1 to 4: on several the ranks' boxes meet at edges and corners; the injection is then
** stencilc's where every rank owns the fine points of its coarse points or has them in its fine
** ghosts off its box along one axis, else PETSc's: the grids split in slabs along the last axis,
** where PETSc's coarsening drifts, must be stencilc's; the summary line says on how many grids
** it was). The weights are powers of two, so the two agree to the rounding of a different order
** of summation.
*/
#include <petscdmda.h>

#include "stnmg.h"

static int failures, our_injections;

static PetscErrorCode compare(const char *what, const char *grid, Vec a, Vec b)
{
  PetscReal diff, norm;
  Vec       d;

  PetscFunctionBeginUser;
  PetscCall(VecDuplicate(a, &d));
  PetscCall(VecWAXPY(d, -1.0, a, b));
  PetscCall(VecNorm(d, NORM_INFINITY, &diff));
  PetscCall(VecNorm(a, NORM_INFINITY, &norm));
  PetscCall(VecDestroy(&d));
  if (diff > 1e-14 * norm) {
    failures++;
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "FAIL: transfer: %s on %s: stencilc's differs from PETSc's by %g (of %g)\n", what, grid, (double)diff, (double)norm));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The pair on dim dimensions, dof values per point, x periodic or not; slabs: the last axis
   (13 points) split over all the ranks, where PETSc's coarsening leaves some ranks without the
   fine points of their coarse points, which then come from the fine ghosts. */
static PetscErrorCode check(PetscInt dim, PetscInt dof, PetscBool periodic_x, PetscBool slabs)
{
  DM             dmf, dmc;
  Mat            P[2], R[2]; /* PETSc's, stencilc's */
  Vec            xc, xf, yc[2], yf[2], zc[2], zf[2], ic[2], sc[2];
  PetscRandom    rnd;
  char           grid[64];
  DMBoundaryType bx = periodic_x ? DM_BOUNDARY_PERIODIC : DM_BOUNDARY_NONE;
  PetscInt       nx = periodic_x ? 16 : 17, last = slabs ? 13 : dim == 2 ? 9 : 5;
  PetscMPIInt    size;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  if (dim == 1) PetscCall(DMDACreate1d(PETSC_COMM_WORLD, bx, slabs ? last - (periodic_x ? 1 : 0) : nx, dof, 1, NULL, &dmf));
  if (dim == 2) PetscCall(DMDACreate2d(PETSC_COMM_WORLD, bx, DM_BOUNDARY_NONE, DMDA_STENCIL_STAR, nx, last, slabs ? 1 : PETSC_DECIDE, slabs ? size : PETSC_DECIDE, dof, 1, NULL, NULL, &dmf));
  if (dim == 3)
    PetscCall(DMDACreate3d(PETSC_COMM_WORLD, bx, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DMDA_STENCIL_STAR, nx, 9, last, slabs ? 1 : PETSC_DECIDE, slabs ? 1 : PETSC_DECIDE, slabs ? size : PETSC_DECIDE, dof, 1, NULL, NULL, NULL, &dmf));
  PetscCall(DMSetUp(dmf));
  PetscCall(DMCoarsen(dmf, PETSC_COMM_WORLD, &dmc));
  PetscCall(PetscSNPrintf(grid, sizeof grid, "%" PetscInt_FMT "D dof %" PetscInt_FMT "%s%s", dim, dof, periodic_x ? " periodic in x" : "", slabs ? " in slabs" : ""));
  PetscCall(DMCreateInterpolation(dmc, dmf, &P[0], &sc[0]));
  PetscCall(DMCreateInjection(dmc, dmf, &R[0]));
  PetscCall(StnDMUseTransfers(dmc));
  PetscCall(DMCreateInterpolation(dmc, dmf, &P[1], &sc[1]));
  PetscCall(DMCreateInjection(dmc, dmf, &R[1]));
  {
    PetscBool ours;
    PetscCall(PetscObjectTypeCompare((PetscObject)P[1], MATSHELL, &ours)); /* not PETSc's AIJ, which it falls back on */
    if (!ours) {
      failures++;
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "FAIL: transfer: on %s the interpolation is PETSc's, not stencilc's\n", grid));
    }
    PetscCall(PetscObjectTypeCompare((PetscObject)R[1], MATSHELL, &ours));
    our_injections += ours ? 1 : 0;
    if (slabs && !ours) { /* off the fine box along the last axis only: the fine ghosts have them */
      failures++;
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "FAIL: transfer: on %s the injection is PETSc's, not stencilc's from the fine ghosts\n", grid));
    }
  }

  PetscCall(PetscRandomCreate(PETSC_COMM_WORLD, &rnd));
  PetscCall(DMCreateGlobalVector(dmc, &xc));
  PetscCall(DMCreateGlobalVector(dmf, &xf));
  PetscCall(VecSetRandom(xc, rnd));
  PetscCall(VecSetRandom(xf, rnd));
  for (int w = 0; w < 2; w++) {
    PetscCall(DMCreateGlobalVector(dmf, &yf[w]));
    PetscCall(DMCreateGlobalVector(dmf, &zf[w]));
    PetscCall(DMCreateGlobalVector(dmc, &yc[w]));
    PetscCall(DMCreateGlobalVector(dmc, &zc[w]));
    PetscCall(DMCreateGlobalVector(dmc, &ic[w]));
    PetscCall(MatInterpolate(P[w], xc, yf[w]));       /* fine = P coarse */
    PetscCall(MatRestrict(P[w], xf, yc[w]));          /* coarse = P^T fine */
    PetscCall(MatInterpolateAdd(P[w], xc, xf, zf[w])); /* fine + P coarse */
    PetscCall(MatMultTransposeAdd(P[w], xf, xc, zc[w]));
    PetscCall(MatRestrict(R[w], xf, ic[w]));          /* the fine values at the coarse points */
  }
  PetscCall(compare("interpolation", grid, yf[0], yf[1]));
  PetscCall(compare("restriction", grid, yc[0], yc[1]));
  PetscCall(compare("interpolation added", grid, zf[0], zf[1]));
  PetscCall(compare("restriction added", grid, zc[0], zc[1]));
  PetscCall(compare("injection", grid, ic[0], ic[1]));
  PetscCall(compare("scale 1 / (P^T 1)", grid, sc[0], sc[1]));
  for (int w = 0; w < 2; w++) {
    PetscCall(VecDestroy(&yf[w]));
    PetscCall(VecDestroy(&zf[w]));
    PetscCall(VecDestroy(&yc[w]));
    PetscCall(VecDestroy(&zc[w]));
    PetscCall(VecDestroy(&ic[w]));
    PetscCall(VecDestroy(&sc[w]));
    PetscCall(MatDestroy(&P[w]));
    PetscCall(MatDestroy(&R[w]));
  }
  PetscCall(VecDestroy(&xc));
  PetscCall(VecDestroy(&xf));
  PetscCall(PetscRandomDestroy(&rnd));
  PetscCall(DMDestroy(&dmc));
  PetscCall(DMDestroy(&dmf));
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  int cases = 0;

  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  for (PetscInt dim = 1; dim <= 3; dim++)
    for (PetscInt dof = 1; dof <= 3; dof += 2)
      for (int periodic = 0; periodic < 2; periodic++)
        for (int slabs = 0; slabs < 2; slabs++, cases++) PetscCall(check(dim, dof, periodic ? PETSC_TRUE : PETSC_FALSE, slabs ? PETSC_TRUE : PETSC_FALSE));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "transfer: %d grids (the injection stencilc's on %d), interpolation, restriction, injection and scale %s\n", cases, our_injections, failures ? "DIFFER from PETSc's" : "= PETSc's: ok"));
  PetscCall(PetscFinalize());
  return failures ? 1 : 0;
}
