/*
** stnrt.h: the stencilc runtime, linked into every generated program: the
** SG-DIA matrix (sgdia.h) and the report at the end of a solve.
*/
#ifndef STNRT_H
#define STNRT_H

#include <petscsnes.h>

/* PETSc 3.19 named the success code; Debian's 3.18 returns plain 0. */
#if PETSC_VERSION_LT(3, 19, 0)
  #ifndef PETSC_SUCCESS
    #define PETSC_SUCCESS 0
  #endif
#endif

#include "sgdia.h"
#include "sgdia_cuda.h" /* StnCUDADevicePresent */

/* Prints how the solve ended: the Newton iterations and the final
   residual norm, or, when it failed, why, in words, with what to try. */
PetscErrorCode StnReportSolve(SNES snes, const char *program);

#endif
