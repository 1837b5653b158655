/*
 * heat_ts.h: generated from heat_ts.stn by stencilc 0.1.0: what the C program and its CUDA
 * kernels share. Values are doubles on both sides.
 */
#ifndef STN_HEAT_TS_H
#define STN_HEAT_TS_H

#include "stnkernel.h" /* StnLocalInfo, StnKernelShape, StnKernelFn, StnMultArgs */

#define NSTENCIL 5 /* block diagonals of the Jacobian */
#define DOF      1 /* unknowns per grid point */

/* The unknowns at one grid point, in the order of the .stn's fields. */
typedef struct {
  double u; /* temperature */
} Field;

/* The parameters of heat_ts.stn; the grid's sizes come with each call (DMDALocalInfo in C,
   StnLocalInfo in the kernels, which take the parameters by value). */
typedef struct {
  double c; /* steepness of the initial bump, heat_ts.stn:19 */
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
