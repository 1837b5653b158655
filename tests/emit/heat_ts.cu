/*
 * heat_ts.cu: generated from heat_ts.stn by stencilc 0.1.0: TS's IFunction F(t, x, xdot) and its
 * IJacobian shift * dF/dxdot + dF/dx on the GPU: thread blocks tile the grid in x and y,
 * each thread sweeping one or more points along the slowest direction. The
 * expressions are those of the C version; x[IX(i - 1, j)] there is x[j][i - 1] in
 * the C, and xdot[p] (the owned point) xdot[j][i].
 */
#include <math.h>

#include "heat_ts.h"

#define PETSC_PI       3.14159265358979323846
#define PETSC_INFINITY INFINITY

/* The index in the local (ghosted) array of the point (i, j, k). */
#define IX(i_, j_) (((j_) - info.gys) * info.gxm + ((i_) - info.gxs))

/* F(t, x, xdot) at every owned point: 16 bytes per unknown read (plus ghost re-reads from
   cache) and 8 written; compute is a few dozen flops per point. */
__global__ static void FormIFunctionKernel(const StnLocalInfo info, const AppCtx user, const double t, const Field *__restrict__ x,
                                           const Field *__restrict__ xdot, Field *__restrict__ f, const int sweep)
{
  const double hx = (1.0 - 0.0) / (info.mx - 1);
  const double hy = (1.0 - 0.0) / (info.my - 1);
  const int i = info.xs + (int)(blockIdx.x * blockDim.x + threadIdx.x);
  const int j0 = info.ys + (int)(blockIdx.y * blockDim.y + threadIdx.y) * sweep;

  if (i >= info.xs + info.xm) return;
  for (int j = j0; j < j0 + sweep && j < info.ys + info.ym; j++) {
    const int p = (j - info.ys) * info.xm + (i - info.xs); /* the owned point, x fastest */
    if (i == 0 || i == info.mx - 1 || j == 0 || j == info.my - 1) { /* the boundary */
      f[p].u = xdot[p].u - x[IX(i, j)].u; /* heat_ts.stn:22 */
    } else { /* interior */
      f[p].u = xdot[p].u
             - ((x[IX(i - 1, j)].u - 2.0 * x[IX(i, j)].u + x[IX(i + 1, j)].u) / pow(hx, 2.0) + (x[IX(i, j - 1)].u - 2.0 * x[IX(i, j)].u + x[IX(i, j + 1)].u) / pow(hy, 2.0)); /* heat_ts.stn:23 */
    }
  }
}

/* The runtime's StnKernelFn (stnkernel.h): blocks of bx x by threads, each sweeping `sweep`
   points along the slowest direction (by and sweep are 1 in 1D); 0s for the default,
   256 x 1 x 1. */
extern "C" int FormIFunctionCUDA(const StnLocalInfo *info, const void *time, const double *state, double *residual, const StnKernelShape *shape)
{
  const StnTimeArgs *at = (const StnTimeArgs *)time; /* the AppCtx, t, xdot and the shift */
  const Field *x = (const Field *)state;
  Field       *f = (Field *)residual;
  int          bx = shape->bx, by = shape->by, sweep = shape->sweep;

  if (bx <= 0 || by <= 0 || sweep <= 0) bx = 256, by = 1, sweep = 1;
  if (info->xm == 0 || info->ym == 0) return 0;
  while ((info->ym + by * sweep - 1) / (by * sweep) > 65535) sweep *= 2; /* the grid's y limit; the points are the same */
  const dim3 block(bx, by);
  const dim3 grid((info->xm + bx - 1) / bx, (info->ym + by * sweep - 1) / (by * sweep));
  FormIFunctionKernel<<<grid, block>>>(*info, *(const AppCtx *)at->user, at->t, x, (const Field *)at->xdot, f, sweep);
  return (int)cudaGetLastError();
}

/* The block row of every owned point, straight into SG-DIA storage a: column
   s*DOF + c, of height n*DOF, row p*DOF + r. Writes NSTENCIL*DOF*DOF doubles per
   point, coalesced across threads. */
__global__ static void FormIJacobianKernel(const StnLocalInfo info, const AppCtx user, const double t, const Field *__restrict__ x,
                                           const Field *__restrict__ xdot, const double shift, double *__restrict__ a, const int sweep)
{
  const long n = (long)info.xm * info.ym; /* owned points: the height of a block column is n*DOF */
  const double hx = (1.0 - 0.0) / (info.mx - 1);
  const double hy = (1.0 - 0.0) / (info.my - 1);
  const double t0 = pow(hx, 2.0);
  const double t1 = pow(hy, 2.0);
  const double t2 = -(1.0 / t1);
  const double t3 = -(1.0 / t0);
  const int i = info.xs + (int)(blockIdx.x * blockDim.x + threadIdx.x);
  const int j0 = info.ys + (int)(blockIdx.y * blockDim.y + threadIdx.y) * sweep;

  if (i >= info.xs + info.xm) return;
  for (int j = j0; j < j0 + sweep && j < info.ys + info.ym; j++) {
    const int p = (j - info.ys) * info.xm + (i - info.xs); /* the owned point, x fastest */
    double v[NSTENCIL][DOF][DOF] = {};

    if (i == 0 || i == info.mx - 1 || j == 0 || j == info.my - 1) { /* the boundary */
      v[2][0][0] = -1.0 + shift; /* du/du[0,0], derived from heat_ts.stn:22 */
    } else { /* interior */
      v[0][0][0] = t2; /* du/du[0,-1], derived from heat_ts.stn:23 */
      v[1][0][0] = t3; /* du/du[-1,0], derived from heat_ts.stn:23 */
      v[2][0][0] = -(-2.0 / t0 + -2.0 / t1) + shift; /* du/du[0,0], derived from heat_ts.stn:23 */
      v[3][0][0] = t3; /* du/du[1,0], derived from heat_ts.stn:23 */
      v[4][0][0] = t2; /* du/du[0,1], derived from heat_ts.stn:23 */
    }
#pragma unroll
    for (int s = 0; s < NSTENCIL; s++)
#pragma unroll
      for (int c = 0; c < DOF; c++)
#pragma unroll
        for (int r = 0; r < DOF; r++) a[((long)(s * DOF + c) * n + p) * DOF + r] = v[s][r][c];
  }
}

/* The runtime's StnKernelFn (stnkernel.h): blocks of bx x by threads, each sweeping `sweep`
   points along the slowest direction (by and sweep are 1 in 1D); 0s for the default,
   256 x 1 x 1. */
extern "C" int FormIJacobianCUDA(const StnLocalInfo *info, const void *time, const double *state, double *values, const StnKernelShape *shape)
{
  const StnTimeArgs *at = (const StnTimeArgs *)time; /* the AppCtx, t, xdot and the shift */
  const Field *x = (const Field *)state;
  double      *a = values;
  int          bx = shape->bx, by = shape->by, sweep = shape->sweep;

  if (bx <= 0 || by <= 0 || sweep <= 0) bx = 256, by = 1, sweep = 1;
  if (info->xm == 0 || info->ym == 0) return 0;
  while ((info->ym + by * sweep - 1) / (by * sweep) > 65535) sweep *= 2; /* the grid's y limit; the points are the same */
  const dim3 block(bx, by);
  const dim3 grid((info->xm + bx - 1) / bx, (info->ym + by * sweep - 1) / (by * sweep));
  FormIJacobianKernel<<<grid, block>>>(*info, *(const AppCtx *)at->user, at->t, x, (const Field *)at->xdot, at->shift, a, sweep);
  return (int)cudaGetLastError();
}

