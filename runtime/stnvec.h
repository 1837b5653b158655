/* stnvec.h: PETSc CUDA vectors whose Krylov operations run stencilc's kernels.

   VECSTNCUDA is a vector type that builds PETSc's CUDA vector (VECCUDA: seqcuda on one rank,
   mpicuda on several) and replaces its dot products, norms and BLAS-1 updates with the kernels
   of stnvec_cuda.cu; everything else (arrays, ghost exchange, viewers, host copies) stays
   PETSc's. Duplicates keep the replaced operations (PETSc copies a vector's operations into its
   duplicates), so every work vector SNES and KSP make from the DM's vectors uses them. An
   operand of another type (a host vector in VecCopy, say) gets PETSc's own operation, and so does
   a vector while it is bound to the CPU (VecBindToCPU); unbinding it brings ours back.

   Each replaced operation logs an event of its own ("StnVecMDot", ... under -log_view, inside
   PETSc's VecMDot, ...), the proof that ours are the ones called, and counts its calls.

   Without CUDA (or with complex or single-precision PETSc) the type is not registered and
   StnDMSetGPUVectors falls back to VECCUDA, whose operations are PETSc's own. */
#ifndef STNVEC_H
#define STNVEC_H

#include <petscdm.h>

#include "stncompat.h"

#define VECSTNCUDA "stncuda"

#if defined(PETSC_HAVE_CUDA)
  #include "stncuda.h" /* STN_CUDA_CALL */
/* m vectors like tmpl (a CUDA vector: its layout and type, and stencilc's operations where tmpl
   has them) whose device arrays are slices of one device allocation, *block; StnVecDestroyBlock
   destroys them and frees it. Defined where VECSTNCUDA is (real double precision). */
PetscErrorCode StnVecDuplicateBlock(Vec tmpl, PetscInt m, Vec **vs, void **block);
PetscErrorCode StnVecDestroyBlock(PetscInt m, Vec **vs, void **block);
#endif

/* Registers VECSTNCUDA and the log events; safe to call more than once. */
PetscErrorCode StnVecRegister(void);
/* Replaces the operations of v, a CUDA vector, with stencilc's. */
PetscErrorCode StnVecUseKernels(Vec v);
/* The DM's vectors on the GPU: VECSTNCUDA, or VECCUDA with -stn_vec_kernels petsc. Loads the
   tuned launch shapes for this GPU from the tuning cache (stntune.h) when there are any. */
PetscErrorCode StnDMSetGPUVectors(DM dm);
/* How many times operation op ("mdot", "norm", ...: StnVecKernelNames) ran since the start. */
PetscInt StnVecCalls(const char *op);

#endif
