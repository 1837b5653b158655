/*
** stncoef.c: coefficients read from files (stncoef.h). Each grid's DM keeps each coefficient as
** a ghosted local vector of a dof-1 DMDA with the grid's layout, composed under
** "StnCoefficient_NAME"; a coarsen hook puts the injected values on every coarser grid made from
** it, and adds itself there for the next one.
*/
#include "stncoef.h"

#include <petscsnes.h>

#include "stncompat.h"

/* The name the values are composed on a DM under. */
static void key_of(const char *name, char *key, size_t size) { (void)PetscSNPrintf(key, size, "StnCoefficient_%s", name); }

/* Where a DM with any coefficient keeps one of them too (StnDMHasCoefficients). */
static const char any_key[] = "StnCoefficient";

PetscErrorCode StnDMHasCoefficients(DM da, PetscBool *has)
{
  PetscObject any;

  PetscFunctionBeginUser;
  PetscCall(PetscObjectQuery((PetscObject)da, any_key, &any));
  *has = any ? PETSC_TRUE : PETSC_FALSE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The grid's sizes, "33 x 33", for messages. */
static PetscErrorCode grid_text(DM da, PetscInt *points, char *text, size_t size)
{
  PetscInt dim, M, N, P;

  PetscFunctionBeginUser;
  PetscCall(DMDAGetInfo(da, &dim, &M, &N, &P, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
  *points = M * (dim > 1 ? N : 1) * (dim > 2 ? P : 1);
  if (dim == 1) PetscCall(PetscSNPrintf(text, size, "%" PetscInt_FMT, M));
  if (dim == 2) PetscCall(PetscSNPrintf(text, size, "%" PetscInt_FMT " x %" PetscInt_FMT, M, N));
  if (dim == 3) PetscCall(PetscSNPrintf(text, size, "%" PetscInt_FMT " x %" PetscInt_FMT " x %" PetscInt_FMT, M, N, P));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A dof-1 DMDA with da's layout, its vectors on the device where da's are. */
static PetscErrorCode scalar_dmda(DM da, DM *cda)
{
  VecType vt;
  char   *cuda = NULL;

  PetscFunctionBeginUser;
  PetscCall(DMDACreateCompatibleDMDA(da, 1, cda));
  PetscCall(DMGetVecType(da, &vt));
  if (vt) PetscCall(PetscStrstr(vt, "cuda", &cuda));
  if (cuda) PetscCall(DMSetVecType(*cda, VECCUDA));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Puts the global vector g of cda, ghosted, on da under name; on the device already when its
   vectors are, so that the solve copies nothing (the kernels read it there). */
static PetscErrorCode attach(DM da, DM cda, Vec g, const char *name)
{
  char key[256];
  Vec  local;

  PetscFunctionBeginUser;
  PetscCall(DMCreateLocalVector(cda, &local)); /* the local vector keeps cda */
  PetscCall(DMGlobalToLocalBegin(cda, g, INSERT_VALUES, local));
  PetscCall(DMGlobalToLocalEnd(cda, g, INSERT_VALUES, local));
#if defined(PETSC_HAVE_CUDA)
  {
    PetscBool          cuda;
    const PetscScalar *a;

    PetscCall(PetscObjectTypeCompareAny((PetscObject)local, &cuda, VECSEQCUDA, VECMPICUDA, ""));
    if (cuda) {
      PetscCall(VecCUDAGetArrayRead(local, &a)); /* copied to the device here, once */
      PetscCall(VecCUDARestoreArrayRead(local, &a));
    }
  }
#endif
  key_of(name, key, sizeof key);
  PetscCall(PetscObjectCompose((PetscObject)da, key, (PetscObject)local));
  PetscCall(PetscObjectCompose((PetscObject)da, any_key, (PetscObject)local)); /* StnDMHasCoefficients */
  PetscCall(VecDestroy(&local)); /* da holds it */
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The ghosted local vector of the coefficient on da, or NULL. */
static PetscErrorCode query(DM da, const char *name, Vec *local)
{
  char key[256];

  PetscFunctionBeginUser;
  key_of(name, key, sizeof key);
  PetscCall(PetscObjectQuery((PetscObject)da, key, (PetscObject *)local));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The same, or an error that says which grids have it. */
static PetscErrorCode local_of(DM da, const char *name, Vec *local)
{
  PetscInt points;
  char     grid[96];

  PetscFunctionBeginUser;
  PetscCall(query(da, name, local));
  if (*local) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(grid_text(da, &points, grid, sizeof grid));
  SETERRQ(PetscObjectComm((PetscObject)da), PETSC_ERR_SUP,
          "coefficient %s has values on the grid of its file (-%s_file) and on multigrid's coarser grids, not on this finer %s grid: "
          "-snes_grid_sequence refines past the file's grid; solve on the file's grid without it",
          name, name, grid);
}

/* DMCoarsen's hook: the coarse grid's values injected from the fine grid's (the points the two
   share), and the hook on the coarse grid for the next coarsening. */
static PetscErrorCode coarsen_hook(DM fine, DM coarse, void *ctx)
{
  const char *name = (const char *)ctx;
  Vec         local, gf, gc;
  DM          cf, cc;
  Mat         inject;

  PetscFunctionBeginUser;
  PetscCall(query(fine, name, &local));
  if (!local) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(VecGetDM(local, &cf));
  PetscCall(scalar_dmda(coarse, &cc));
  PetscCall(DMCreateInjection(cc, cf, &inject));
  PetscCall(DMGetGlobalVector(cf, &gf));
  PetscCall(DMLocalToGlobalBegin(cf, local, INSERT_VALUES, gf));
  PetscCall(DMLocalToGlobalEnd(cf, local, INSERT_VALUES, gf));
  PetscCall(DMCreateGlobalVector(cc, &gc));
  PetscCall(MatRestrict(inject, gf, gc));
  PetscCall(attach(coarse, cc, gc, name));
  PetscCall(VecDestroy(&gc));
  PetscCall(DMRestoreGlobalVector(cf, &gf));
  PetscCall(MatDestroy(&inject));
  PetscCall(DMDestroy(&cc));
  PetscCall(DMCoarsenHookAdd(coarse, coarsen_hook, NULL, ctx));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The number of values of the vector in the binary file path, checking that it holds one. */
static PetscErrorCode file_length(MPI_Comm comm, const char *path, const char *option, PetscInt *length)
{
  PetscViewer viewer;
  PetscInt    header[2] = {0, 0}, count = 0;

  PetscFunctionBeginUser;
  PetscCall(PetscViewerBinaryOpen(comm, path, FILE_MODE_READ, &viewer));
  PetscCall(PetscViewerBinaryRead(viewer, header, 2, &count, PETSC_INT));
  PetscCall(PetscViewerDestroy(&viewer));
  PetscCheck(count == 2 && header[0] == VEC_FILE_CLASSID, comm, PETSC_ERR_FILE_UNEXPECTED,
             "%s %s: the file does not start with a vector in PETSc's binary format (as VecView writes it with PetscViewerBinaryOpen)", option, path);
  *length = header[1];
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The file of coefficient name, from its option (into option and path), checked: given, no grid
   sequencing, readable, a vector of one value per point of da's grid. */
static PetscErrorCode file_of(DM da, const char *name, const char *where, char *option, size_t osize, char *path, size_t psize)
{
  MPI_Comm  comm = PetscObjectComm((PetscObject)da);
  char      grid[96];
  PetscBool set, readable;
  PetscInt  length, points, refine;

  PetscFunctionBeginUser;
  PetscCall(PetscSNPrintf(option, osize, "-%s_file", name));
  PetscCall(PetscOptionsGetString(NULL, NULL, option, path, psize, &set));
  PetscCheck(set && path[0], comm, PETSC_ERR_USER_INPUT,
             "coefficient %s (%s) is read from a file: give it with %s FILE, a PETSc binary file of one value per grid point (VecView of a vector of a dof-1 DMDA of the grid, with PetscViewerBinaryOpen)",
             name, where, option);
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-snes_grid_sequence", &refine, &set));
  PetscCheck(!set || refine <= 0, comm, PETSC_ERR_SUP,
             "-snes_grid_sequence %" PetscInt_FMT " would solve on finer grids than the one of %s %s, which have no values of coefficient %s (%s): "
             "solve on the file's grid, or give the file of the finest grid and use -pc_type mg",
             refine, option, path, name, where);
  PetscCall(PetscTestFile(path, 'r', &readable));
  PetscCheck(readable, comm, PETSC_ERR_FILE_OPEN, "%s %s: cannot read the file (coefficient %s, %s)", option, path, name, where);
  PetscCall(file_length(comm, path, option, &length));
  PetscCall(grid_text(da, &points, grid, sizeof grid));
  PetscCheck(length == points, comm, PETSC_ERR_FILE_UNEXPECTED,
             "%s %s: the file holds %" PetscInt_FMT " values, but coefficient %s (%s) needs one per grid point: %" PetscInt_FMT " on this %s grid", option, path, length, name,
             where, points, grid);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode StnCoefficientLoad(DM da, const char *name, const char *where)
{
  char        option[256], path[PETSC_MAX_PATH_LEN] = "";
  PetscViewer viewer;
  DM          cda;
  Vec         g;

  PetscFunctionBeginUser;
  PetscCall(file_of(da, name, where, option, sizeof option, path, sizeof path));
  PetscCall(scalar_dmda(da, &cda));
  PetscCall(DMCreateGlobalVector(cda, &g));
  PetscCall(PetscObjectSetName((PetscObject)g, name));
  PetscCall(PetscViewerBinaryOpen(PetscObjectComm((PetscObject)da), path, FILE_MODE_READ, &viewer));
  PetscCall(VecLoad(g, viewer)); /* the DMDA's VecLoad: natural ordering in the file */
  PetscCall(PetscViewerDestroy(&viewer));
  PetscCall(attach(da, cda, g, name));
  PetscCall(VecDestroy(&g));
  PetscCall(DMDestroy(&cda));
  PetscCall(DMCoarsenHookAdd(da, coarsen_hook, NULL, (void *)name));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode StnCoefficientGetArray(DM da, const char *name, void *array)
{
  Vec local;
  DM  cda;

  PetscFunctionBeginUser;
  PetscCall(local_of(da, name, &local));
  PetscCall(VecGetDM(local, &cda));
  PetscCall(DMDAVecGetArrayRead(cda, local, array));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode StnCoefficientRestoreArray(DM da, const char *name, void *array)
{
  Vec local;
  DM  cda;

  PetscFunctionBeginUser;
  PetscCall(local_of(da, name, &local));
  PetscCall(VecGetDM(local, &cda));
  PetscCall(DMDAVecRestoreArrayRead(cda, local, array));
  PetscFunctionReturn(PETSC_SUCCESS);
}

#if defined(PETSC_HAVE_CUDA)
PetscErrorCode StnCoefficientGetArrayDevice(DM da, const char *name, const double **array)
{
  Vec                local;
  const PetscScalar *a;

  PetscFunctionBeginUser;
  PetscCall(local_of(da, name, &local));
  PetscCall(VecCUDAGetArrayRead(local, &a)); /* on the device since it was loaded (attach) */
  *array = a;
  PetscCall(VecCUDARestoreArrayRead(local, &a));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode StnCoefficientGridContext(DM da, const void *user, size_t size, void **grid_user)
{
  PetscContainer container;
  void          *copy;

  PetscFunctionBeginUser;
  PetscCall(PetscObjectQuery((PetscObject)da, "StnCoefficientContext", (PetscObject *)&container));
  if (!container) {
    PetscCall(PetscMalloc(size, &copy));
    PetscCall(PetscObjectContainerCompose((PetscObject)da, "StnCoefficientContext", copy, PetscCtxDestroyDefault));
    PetscCall(PetscObjectQuery((PetscObject)da, "StnCoefficientContext", (PetscObject *)&container));
  }
  PetscCall(PetscContainerGetPointer(container, grid_user));
  PetscCall(PetscMemcpy(*grid_user, user, size)); /* the parameters, as they are now */
  PetscFunctionReturn(PETSC_SUCCESS);
}
#endif
