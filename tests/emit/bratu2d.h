/*
 * bratu2d.h: generated from bratu2d.stn by stencilc 0.1.0: what the C program and its CUDA
 * kernels share. Values are doubles on both sides.
 */
#ifndef STN_BRATU2D_H
#define STN_BRATU2D_H

#include "stnkernel.h" /* StnKernelShape, StnKernelFn */

#define NSTENCIL 5 /* block diagonals of the Jacobian */
#define DOF      1 /* unknowns per grid point */

/* The unknowns at one grid point, in the order of the .stn's fields. */
typedef struct {
  double u;
} Field;

/* What a kernel needs, passed by value: the grid, this rank's boxes, the parameters. */
typedef struct {
  int    nx, ny;
  double hx, hy;
  double par;
  int    xs, xm, ys, ym;   /* owned box: first index and count per direction */
  int    gxs, gxm, gys, gym; /* ghosted box of the local vector x */
} KernelCtx;

#ifdef __cplusplus
extern "C" {
#endif
/* Each returns 0 or the CUDA error of its launch. */
int FormFunctionCUDA(const void *ctx, const double *x, double *f, const StnKernelShape *shape);
int FormJacobianCUDA(const void *ctx, const double *x, double *a, const StnKernelShape *shape);
#ifdef __cplusplus
}
#endif

#endif
