/* stnkernel.h: how the runtime calls a program's generated CUDA kernels. Plain C, no PETSc or
   CUDA header: the generated NAME.h includes it, so NAME.cu (nvcc) and NAME.c see one signature. */
#ifndef STNKERNEL_H
#define STNKERNEL_H

/* How a generated stencil kernel (the residual, the Jacobian) covers the owned box: thread
   blocks of bx x by threads tile it in x and y, and in 2D and 3D each thread sweeps `sweep`
   consecutive points along the slowest direction (y in 2D, z in 3D). In 1D by and sweep are 1;
   0s ask for the default, 256 x 1 x 1. */
typedef struct {
  int bx, by, sweep;
} StnKernelShape;

/* A generated kernel's launcher (FormFunctionCUDA, FormJacobianCUDA): ctx is the program's
   KernelCtx, x the ghosted local state, out the residual or the SG-DIA values, all in device
   memory; returns 0 or the CUDA error of the launch. */
typedef int StnKernelFn(const void *ctx, const double *x, double *out, const StnKernelShape *shape);

#endif
