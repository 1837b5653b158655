/* sgdia.h: the SG-DIA matrix (structured-grid diagonal storage) as a PETSc Mat.

   For a DMDA with dof unknowns per grid point and a stencil of nsten grid offsets, the locally
   owned rows are stored as nsten*dof columns of height nrows = npoints*dof, column-major, and
   no column indices: the entry coupling row (point p, component r) with column (point p + offset
   s, component c) is

       values[(s*dof + c)*nrows + p*dof + r]

   where p = ((k-zs)*ym + (j-ys))*xm + (i-xs) numbers the owned points (xs, ys, zs, xm, ym, zm
   from DMDAGetCorners). Entries whose neighbour lies outside the domain (in a non-periodic
   direction) are never read; they start as zero. See runtime/sgdia.c for the operations the
   matrix supports and for what the DMDA must look like. */
#ifndef SGDIA_H
#define SGDIA_H

#include <petscdmda.h>
#include <petscmat.h>

#if defined(PETSC_HAVE_CUDA)
  #include "sgdia_cuda.h" /* StnBox */
#endif

/* PETSc 3.18 (Debian's) returns plain 0 from functions; PETSC_SUCCESS came in 3.19. */
#if PETSC_VERSION_LT(3, 19, 0)
  #define PETSC_SUCCESS 0
#endif

/* Creates an SG-DIA matrix for the DMDA da with nsten block diagonals at the grid offsets
   offsets[3*s+0], offsets[3*s+1], offsets[3*s+2] (di, dj, dk; unused components 0), which
   the caller gives sorted and without duplicates. All values start at zero. */
PetscErrorCode MatCreateSGDIA(DM da, PetscInt nsten, const PetscInt offsets[], Mat *A);
/* The value array described above, for the Jacobian kernels to fill, and its sizes. After
   MatSGDIARestoreArray call MatAssemblyBegin/End, as for any matrix, so that preconditioners
   see the new values. */
PetscErrorCode MatSGDIAGetArray(Mat A, PetscScalar **values);
PetscErrorCode MatSGDIARestoreArray(Mat A, PetscScalar **values);
PetscErrorCode MatSGDIAGetLayout(Mat A, PetscInt *nsten, const PetscInt **offsets, PetscInt *dof, PetscInt *npoints);
/* Whether A is an SG-DIA matrix. */
PetscErrorCode MatIsSGDIA(Mat A, PetscBool *flg);
/* Copies the values of A into B, an AIJ matrix from DMCreateMatrix on the same DMDA
   (B keeps its nonzero pattern; entries of A outside the domain are skipped). Assembles B. */
PetscErrorCode MatSGDIACopyToAIJ(Mat A, Mat B);
/* The first NaN or Inf among this rank's entries of A (in point order; padding beyond a
   non-periodic edge is not looked at): the grid point ijk (global indices), the field of its
   row and of its column, the stencil offset of the column's point, the value. *found: whether
   there is one. */
PetscErrorCode MatSGDIAFindNonFinite(Mat A, PetscInt ijk[3], PetscInt *row, PetscInt *col, PetscInt offset[3], PetscScalar *value, PetscBool *found);

#if defined(PETSC_HAVE_CUDA)
/* With CUDA vectors (DMSetVecType(da, VECCUDA) before MatCreateSGDIA) the values live in
   device memory as well; the Jacobian kernels write them there. After the restore call
   MatAssemblyBegin/End, as for the host array. */
PetscErrorCode MatSGDIAGetArrayDevice(Mat A, PetscScalar **values);
PetscErrorCode MatSGDIARestoreArrayDevice(Mat A, PetscScalar **values);
/* y = d .* (A x) in one kernel on the GPU: MatMult(A, x, t) then VecPointwiseMult(y, t, d) (a
   Jacobi preconditioner's PCApply) bit for bit, without t. *done: whether it ran; PETSC_FALSE
   (and nothing done) when A is not an SG-DIA matrix on the device. Logged as MatMultJacobi. */
PetscErrorCode MatSGDIAMultScaledDevice(Mat A, Vec d, Vec x, Vec y, PetscBool *done);
/* For a kernel that applies A itself (KSPSTNGMRES's cycle kernel, stncycle_cuda.h): the layout
   and the device values of A, brought up to date. *ok is PETSC_FALSE (and nothing else is set)
   when A is not an SG-DIA matrix on the device, or when its product reads ghosts (more than one
   rank, or a periodic direction). flops: what one product does, for PetscLogGpuFlops. */
PetscErrorCode MatSGDIAGetDeviceOperator(Mat A, const StnBox **box, const PetscScalar **values, PetscLogDouble *flops, PetscBool *ok);
/* The layout and the device values of A, brought up to date, for reading, whatever its product
   reads; *ok is PETSC_FALSE (and nothing else is set) when A is not an SG-DIA matrix on the
   device. */
PetscErrorCode MatSGDIAGetDeviceValues(Mat A, const StnBox **box, const PetscScalar **values, PetscBool *ok);
#endif

#endif
