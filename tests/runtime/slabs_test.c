/* tests/runtime/slabs_test.c: StnDMSlabsFit (runtime/stnmg.c), which decides whether a
   generated program on several GPUs splits its grid in slabs along the last axis
   (StnAppSplitGrid), against PETSc's DMDA on the ranks it runs on (2 and 4 in
   tests/runtime/run.sh). For every grid it accepts, the grid split 1 x N (1 x 1 x N) sets up,
   holds each rank's owned points as one run of its ghosted vector (no ghosts along the other
   axes), and coarsens through every level of the hierarchy, each rank keeping the stencil width
   of planes; the level counts are written here by hand, not taken from the runtime. The grids it
   must refuse are refused: a periodic edge across the slabs, a coarsest grid (of -pc_mg_levels
   or -da_refine's hierarchy) thinner than the ranks. One line per case; exit 1 on a failure (a
   split PETSc cannot set up or coarsen stops the test with PETSc's error). */
#include <petscdmda.h>

#include "stnmg.h"

static int failures;

typedef struct {
  const char    *name;
  PetscInt       dim, n[3], dof, width, levels; /* levels: the hierarchy's, worked out by hand */
  DMBoundaryType bt[3];
  const char    *option, *value;                /* an option in force for the case, or NULL */
  int            fits_up_to;                    /* StnDMSlabsFit's answer: fits on at most this many ranks */
} Case;

static PetscErrorCode create(const Case *c, DM *da)
{
  PetscFunctionBeginUser;
  if (c->dim == 2) PetscCall(DMDACreate2d(PETSC_COMM_WORLD, c->bt[0], c->bt[1], DMDA_STENCIL_STAR, c->n[0], c->n[1], PETSC_DECIDE, PETSC_DECIDE, c->dof, c->width, NULL, NULL, da));
  else PetscCall(DMDACreate3d(PETSC_COMM_WORLD, c->bt[0], c->bt[1], c->bt[2], DMDA_STENCIL_STAR, c->n[0], c->n[1], c->n[2], PETSC_DECIDE, PETSC_DECIDE, PETSC_DECIDE, c->dof, c->width, NULL, NULL, NULL, da));
  PetscCall(DMSetFromOptions(*da)); /* -da_refine */
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Set up in slabs: one run per rank, and every coarse grid keeps the width of planes per rank. */
static PetscErrorCode check_slabs(const Case *c, PetscMPIInt size, PetscBool *ok)
{
  DM       da, grid;
  PetscInt s[3], m[3], gs[3], gm[3], thinnest = 1 << 30, run = 1;

  PetscFunctionBeginUser;
  PetscCall(create(c, &da));
  if (c->dim == 2) PetscCall(DMDASetNumProcs(da, 1, size, PETSC_DECIDE));
  else PetscCall(DMDASetNumProcs(da, 1, 1, size));
  PetscCall(DMSetUp(da));
  PetscCall(DMDAGetCorners(da, &s[0], &s[1], &s[2], &m[0], &m[1], &m[2]));
  PetscCall(DMDAGetGhostCorners(da, &gs[0], &gs[1], &gs[2], &gm[0], &gm[1], &gm[2]));
  for (PetscInt d = 0; d < c->dim - 1; d++)
    if (gs[d] != s[d] || gm[d] != m[d]) run = 0;
  grid = da;
  PetscCall(PetscObjectReference((PetscObject)grid));
  for (PetscInt l = 0; l < c->levels; l++) {
    DM coarse;

    PetscCall(DMDAGetCorners(grid, NULL, NULL, NULL, &m[0], &m[1], &m[2]));
    thinnest = PetscMin(thinnest, m[c->dim - 1]);
    if (l == c->levels - 1) break;
    PetscCall(DMCoarsen(grid, MPI_COMM_NULL, &coarse));
    PetscCall(DMDestroy(&grid));
    grid = coarse;
  }
  PetscCall(DMDestroy(&grid));
  PetscCall(DMDestroy(&da));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &thinnest, 1, MPIU_INT, MPI_MIN, PETSC_COMM_WORLD));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &run, 1, MPIU_INT, MPI_MIN, PETSC_COMM_WORLD));
  *ok = (PetscBool)(run && thinnest >= PetscMax(c->width, 1));
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  const DMBoundaryType N = DM_BOUNDARY_NONE, P = DM_BOUNDARY_PERIODIC;
  /* levels: halve while every direction halves to 2 width + 1 points and the grid has more than
     256 unknowns (STN_MG_COARSE_UNKNOWNS), unless -pc_mg_levels or -da_refine say */
  const Case cases[] = {
    {"the cavity's 1025^2 x 4 values", 2, {1025, 1025, 1}, 4, 1, 9, {N, N, N}, NULL, NULL, 5},
    {"SFI's shape at 97^3", 3, {97, 97, 97}, 1, 1, 6, {N, N, N}, NULL, NULL, 4},
    {"2D 33^2, stencil width 2", 2, {33, 33, 1}, 1, 2, 3, {N, N, N}, NULL, NULL, 4},
    {"2D 65 x 64 periodic in y (the last axis)", 2, {65, 64, 1}, 1, 1, 4, {N, P, N}, NULL, NULL, 8},
    {"2D 64 x 65 periodic in x: ghosts across the slabs", 2, {64, 65, 1}, 1, 1, 4, {P, N, N}, NULL, NULL, 0},
    {"3D 33 x 32 x 33 periodic in y: ghosts across the slabs", 3, {33, 32, 33}, 1, 1, 4, {N, P, N}, NULL, NULL, 0},
    {"2D 17^2 with -pc_mg_levels 4 (coarsest 3 planes)", 2, {17, 17, 1}, 1, 1, 4, {N, N, N}, "-pc_mg_levels", "4", 3},
    {"2D 3^2 with -da_refine 3 (coarsest 3 planes)", 2, {3, 3, 1}, 1, 1, 4, {N, N, N}, "-da_refine", "3", 3},
    {"2D 129 x 9 (the last axis the short one)", 2, {129, 9, 1}, 1, 1, 3, {N, N, N}, NULL, NULL, 3},
    {"2D 13^2, stencil width 2, -pc_mg_levels 2 (coarsest 7 planes)", 2, {13, 13, 1}, 1, 2, 2, {N, N, N}, "-pc_mg_levels", "2", 3},
    {"2D 9 x 14 periodic in y, -pc_mg_levels 3 (coarsest 3 planes)", 2, {9, 14, 1}, 1, 1, 3, {N, P, N}, "-pc_mg_levels", "3", 3},
  };
  PetscMPIInt size;

  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    const Case *c = &cases[k];
    DM          da;
    PetscBool   fit, want = (PetscBool)(size <= c->fits_up_to), ok = PETSC_TRUE;

    if (c->option) PetscCall(PetscOptionsSetValue(NULL, c->option, c->value));
    PetscCall(create(c, &da));
    PetscCall(StnDMSlabsFit(da, size, &fit));
    PetscCall(DMDestroy(&da));
    if (fit) PetscCall(check_slabs(c, size, &ok));
    if (c->option) PetscCall(PetscOptionsClearValue(NULL, c->option));
    if (fit == want && ok) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "slabs: %s on %d ranks: %s: ok\n", c->name, (int)size, fit ? "slabs, set up and coarsened" : "refused"));
    else {
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "FAIL: slabs: %s on %d ranks: StnDMSlabsFit says %s, want %s%s\n", c->name, (int)size, fit ? "fits" : "does not fit",
                            want ? "fits" : "does not fit", ok ? "" : "; in slabs a rank's points are no run or a grid is thinner than the stencil"));
      failures++;
    }
  }
  PetscCall(PetscFinalize());
  return failures ? 1 : 0;
}
