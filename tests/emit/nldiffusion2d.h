/*
 * nldiffusion2d.h: generated from nldiffusion2d.stn by stencilc 0.1.0: what the C program and its CUDA
 * kernels share. Values are doubles on both sides.
 */
#ifndef STN_NLDIFFUSION2D_H
#define STN_NLDIFFUSION2D_H

#include "stnkernel.h" /* StnLocalInfo, StnKernelShape, StnKernelFn, StnMultArgs */

#define NSTENCIL 5 /* block diagonals of the Jacobian */
#define DOF      1 /* unknowns per grid point */

/* The unknowns at one grid point, in the order of the .stn's fields. */
typedef struct {
  double u;
} Field;

/* The parameters of nldiffusion2d.stn; the grid's sizes come with each call (DMDALocalInfo in C,
   StnLocalInfo in the kernels, which take the parameters by value). */
typedef struct {
  double kappa; /* strength of the nonlinearity of k, nldiffusion2d.stn:20 */
  double q; /* source, nldiffusion2d.stn:21 */
  int    check_jacobian; /* -stn_check_jacobian: compare the entries the .stn gives with the derived ones */
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
