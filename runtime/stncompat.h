/* stncompat.h: what the runtime needs from PETSc versions older than the one it is written for. */
#ifndef STNCOMPAT_H
#define STNCOMPAT_H

#include <petscsys.h>

/* PETSc 3.19 named the success code; Debian's 3.18 returns plain 0. */
#if PETSC_VERSION_LT(3, 19, 0)
  #ifndef PETSC_SUCCESS
    #define PETSC_SUCCESS 0
  #endif
#endif

#endif
