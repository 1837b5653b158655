/*
** stncoef.h: coefficients read from files (`coefficient k: file;` in the .stn, LANGUAGE.md 4.6).
** The file, named by the option -k_file, is what VecView writes with a binary viewer for a
** vector of a dof-1 DMDA of the program's grid: one value per grid point, in PETSc's natural
** ordering (x fastest). The program loads it once into a global vector of a dof-1 DMDA with the
** grid's layout (DMDACreateCompatibleDMDA) and scatters it to a ghosted local vector, which the
** grid's DM keeps (composed under "StnCoefficient_k"). The residual and the Jacobian of every
** grid then read it at any stencil offset, like a field that never changes: the ghosts come from
** the neighbouring ranks and wrap around in a periodic direction, as the state's do.
**
** Multigrid's coarser grids (DMCoarsen: -pc_type mg, the runtime's own hierarchy) get the values
** injected from the finer grid, at the points the two grids share; a finer grid than the file's
** has none: -snes_grid_sequence is refused when the file is loaded, and reading a coefficient on
** a grid without it is an error that says so.
*/
#ifndef STNCOEF_H
#define STNCOEF_H

#include <petscdmda.h>

/* Reads coefficient name's file, given by -NAME_file, onto da's grid (after DMSetUp and the
   vector type: StnAppSetUpGrid). where is the declaration, "heat.stn:12", for the messages: a
   missing option, a file that cannot be read, or is not a vector, or whose length is not the
   number of grid points. Collective. */
PetscErrorCode StnCoefficientLoad(DM da, const char *name, const char *where);
/* The coefficient's ghosted local array on da's grid, indexed like the state's
   (k[j][i + 1] in 2D), read-only; restore it when done. */
PetscErrorCode StnCoefficientGetArray(DM da, const char *name, void *array);
PetscErrorCode StnCoefficientRestoreArray(DM da, const char *name, void *array);
/* Whether da's grid has the values of any coefficient (its kernels read them laid out in its
   ghosted box). */
PetscErrorCode StnDMHasCoefficients(DM da, PetscBool *has);

#if defined(PETSC_HAVE_CUDA)
/* The coefficient's ghosted local array on da's grid in device memory, flat (the kernels index
   it with IX(i, j, k) as they do the state). The vector never changes after it is loaded, so
   the pointer stays valid as long as da lives. */
PetscErrorCode StnCoefficientGetArrayDevice(DM da, const char *name, const double **array);
/* A copy of the size bytes at user kept by da (a program's AppCtx, whose coefficient members
   then point at da's arrays): the context the kernels of da's grid get, which lives as long as
   da, as -stn_operator matfree needs. */
PetscErrorCode StnCoefficientGridContext(DM da, const void *user, size_t size, void **grid_user);
#endif

#endif
