/*
 * cavity.h: generated from cavity.stn by stencilc 0.1.0: what the C program and its CUDA
 * kernels share. Values are doubles on both sides.
 */
#ifndef STN_CAVITY_H
#define STN_CAVITY_H

#include "stnkernel.h" /* StnLocalInfo, StnKernelShape, StnKernelFn, StnMultArgs */

#define NSTENCIL 5 /* block diagonals of the Jacobian */
#define DOF      4 /* unknowns per grid point */

/* The unknowns at one grid point, in the order of the .stn's fields. */
typedef struct {
  double u; /* x_velocity */
  double v; /* y_velocity */
  double omega; /* Omega */
  double temp; /* temperature */
} Field;

/* The parameters of cavity.stn; the grid's sizes come with each call (DMDALocalInfo in C,
   StnLocalInfo in the kernels, which take the parameters by value). */
typedef struct {
  double lidvelocity; /* velocity of the lid, cavity.stn:23 */
  double prandtl; /* Prandtl number, cavity.stn:24 */
  double grashof; /* Grashof number, cavity.stn:25 */
} AppCtx;

#ifdef __cplusplus
extern "C" {
#endif
/* The launchers (StnKernelFn): each returns 0 or the CUDA error of its launch. */
int FormFunctionCUDA(const StnLocalInfo *info, const void *user, const double *x, double *f, const StnKernelShape *shape);
int FormJacobianCUDA(const StnLocalInfo *info, const void *user, const double *x, double *a, const StnKernelShape *shape);
/* J w without the matrix (StnMultFn): -stn_operator matfree. */
int FormJacobianMultCUDA(const StnLocalInfo *info, const void *user, const double *x, const StnMultArgs *m, const StnKernelShape *shape);
#ifdef __cplusplus
}
#endif

#endif
