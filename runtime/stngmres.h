/* stngmres.h: KSPSTNGMRES, PETSc's restarted GMRES (classical Gram-Schmidt) with its Hessenberg
   matrix, Gram-Schmidt coefficients and Givens rotations kept on the GPU (stngmres.c): one host
   wait per iteration instead of two round trips, three kernels instead of five launches. It
   takes the same iterations as -ksp_type gmres and reads the same options (-ksp_gmres_restart,
   at most 31; -ksp_gmres_haptol; -ksp_gmres_breakdown_tolerance). It needs CUDA vectors with
   stencilc's kernels (VECSTNCUDA). */
#ifndef STNGMRES_H
#define STNGMRES_H

#include <petscdm.h>
#include <petscksp.h>

#include "stncompat.h"

#define KSPSTNGMRES "stngmres"

/* Registers KSPSTNGMRES (with CUDA; otherwise nothing); safe to call more than once. */
PetscErrorCode StnKSPRegister(void);
/* Makes KSPSTNGMRES the default Krylov method of ksp when dm's vectors are VECSTNCUDA
   (-ksp_type still overrides it). */
PetscErrorCode StnKSPSetDefault(KSP ksp, DM dm);

#endif
