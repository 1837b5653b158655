/*
 * heat_ts.h: generated from heat_ts.stn by stencilc 0.1.0: what the C program and its CUDA
 * kernels share. Values are doubles on both sides.
 */
#ifndef STN_HEAT_TS_H
#define STN_HEAT_TS_H

#include "stnkernel.h" /* StnLocalInfo, StnKernelShape, StnKernelFn, StnTimeArgs */

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
/* The launchers (StnKernelFn) of TS's IFunction and IJacobian: time points to their
   StnTimeArgs (the AppCtx, t, xdot and the shift); each returns 0 or the CUDA error of its launch. */
int FormIFunctionCUDA(const StnLocalInfo *info, const void *time, const double *x, double *f, const StnKernelShape *shape);
int FormIJacobianCUDA(const StnLocalInfo *info, const void *time, const double *x, double *a, const StnKernelShape *shape);
#ifdef __cplusplus
}
#endif

#endif
