/*
 * cavity.cu: generated from cavity.stn by stencilc 0.1.0: the residual and the Jacobian
 * on the GPU: thread blocks tile the grid in x and y, each thread sweeping one or
 * more points along the slowest direction. The expressions are those of the C
 * version; x[IX(i - 1, j)] there is x[j][i - 1] in the C.
 */
#include <math.h>

#include "cavity.h"

#define PETSC_PI       3.14159265358979323846
#define PETSC_INFINITY INFINITY

/* The index in the local (ghosted) array of the point (i, j, k). */
#define IX(i_, j_) (((j_) - ctx.gys) * ctx.gxm + ((i_) - ctx.gxs))

/* F(x) at every owned point: 8 bytes per unknown read (plus ghost re-reads from
   cache) and 8 written; compute is a few dozen flops per point. */
__global__ static void FormFunctionKernel(const KernelCtx ctx, const Field *__restrict__ x, Field *__restrict__ f, const int sweep)
{
  const double dhx = (double)ctx.nx - 1.0;
  const double hydhx = ctx.hy * dhx;
  const double dhy = (double)ctx.ny - 1.0;
  const double hxdhy = ctx.hx * dhy;
  const int i = ctx.xs + (int)(blockIdx.x * blockDim.x + threadIdx.x);
  const int j0 = ctx.ys + (int)(blockIdx.y * blockDim.y + threadIdx.y) * sweep;

  if (i >= ctx.xs + ctx.xm) return;
  for (int j = j0; j < j0 + sweep && j < ctx.ys + ctx.ym; j++) {
    const int p = (j - ctx.ys) * ctx.xm + (i - ctx.xs); /* the owned point, x fastest */
    if (i == 0) { /* left & bottom, left, left & top */
      f[p].u = x[IX(i, j)].u; /* cavity.stn:50 */
      f[p].v = x[IX(i, j)].v; /* cavity.stn:56 */
      f[p].omega = x[IX(i, j)].omega - (x[IX(i + 1, j)].v - x[IX(i, j)].v) * dhx; /* cavity.stn:63 */
      f[p].temp = x[IX(i, j)].temp; /* cavity.stn:73 */
    } else if (i == ctx.nx - 1) { /* right & bottom, right, right & top */
      f[p].u = x[IX(i, j)].u; /* cavity.stn:51 */
      f[p].v = x[IX(i, j)].v; /* cavity.stn:56 */
      f[p].omega = x[IX(i, j)].omega - (x[IX(i, j)].v - x[IX(i - 1, j)].v) * dhx; /* cavity.stn:64 */
      f[p].temp = x[IX(i, j)].temp - (ctx.grashof > 0.0); /* cavity.stn:74 */
    } else if (j == 0) { /* bottom */
      f[p].u = x[IX(i, j)].u; /* cavity.stn:48 */
      f[p].v = x[IX(i, j)].v; /* cavity.stn:56 */
      f[p].omega = x[IX(i, j)].omega + (x[IX(i, j + 1)].u - x[IX(i, j)].u) * dhy; /* cavity.stn:61 */
      f[p].temp = x[IX(i, j)].temp - x[IX(i, j + 1)].temp; /* cavity.stn:71 */
    } else if (j == ctx.ny - 1) { /* top */
      f[p].u = x[IX(i, j)].u - ctx.lidvelocity; /* cavity.stn:49 */
      f[p].v = x[IX(i, j)].v; /* cavity.stn:56 */
      f[p].omega = x[IX(i, j)].omega + (x[IX(i, j)].u - x[IX(i, j - 1)].u) * dhy; /* cavity.stn:62 */
      f[p].temp = x[IX(i, j)].temp - x[IX(i, j - 1)].temp; /* cavity.stn:72 */
    } else { /* interior */
      const double t0 = 2.0 * x[IX(i, j)].u;
      const double lap_u = (t0 - x[IX(i - 1, j)].u - x[IX(i + 1, j)].u) * hydhx
                         + (t0 - x[IX(i, j - 1)].u - x[IX(i, j + 1)].u) * hxdhy;
      const double t1 = 2.0 * x[IX(i, j)].v;
      const double lap_v = (t1 - x[IX(i - 1, j)].v - x[IX(i + 1, j)].v) * hydhx
                         + (t1 - x[IX(i, j - 1)].v - x[IX(i, j + 1)].v) * hxdhy;
      const double t2 = 2.0 * x[IX(i, j)].omega;
      const double lap_omega = (t2 - x[IX(i - 1, j)].omega - x[IX(i + 1, j)].omega) * hydhx
                             + (t2 - x[IX(i, j - 1)].omega - x[IX(i, j + 1)].omega) * hxdhy;
      const double t3 = fabs(x[IX(i, j)].u);
      const double vxp = 0.5 * (x[IX(i, j)].u + t3);
      const double vxm = 0.5 * (x[IX(i, j)].u - t3);
      const double t4 = fabs(x[IX(i, j)].v);
      const double vyp = 0.5 * (x[IX(i, j)].v + t4);
      const double vym = 0.5 * (x[IX(i, j)].v - t4);
      const double conv_omega = (vxp * (x[IX(i, j)].omega - x[IX(i - 1, j)].omega) + vxm * (x[IX(i + 1, j)].omega - x[IX(i, j)].omega)) * ctx.hy
                              + (vyp * (x[IX(i, j)].omega - x[IX(i, j - 1)].omega) + vym * (x[IX(i, j + 1)].omega - x[IX(i, j)].omega)) * ctx.hx;
      const double t5 = 2.0 * x[IX(i, j)].temp;
      const double lap_temp = (t5 - x[IX(i - 1, j)].temp - x[IX(i + 1, j)].temp) * hydhx
                            + (t5 - x[IX(i, j - 1)].temp - x[IX(i, j + 1)].temp) * hxdhy;
      const double conv_temp = (vxp * (x[IX(i, j)].temp - x[IX(i - 1, j)].temp) + vxm * (x[IX(i + 1, j)].temp - x[IX(i, j)].temp)) * ctx.hy
                             + (vyp * (x[IX(i, j)].temp - x[IX(i, j - 1)].temp) + vym * (x[IX(i, j + 1)].temp - x[IX(i, j)].temp)) * ctx.hx;
      f[p].u = lap_u - 0.5 * (x[IX(i, j + 1)].omega - x[IX(i, j - 1)].omega) * ctx.hx; /* cavity.stn:52 */
      f[p].v = lap_v + 0.5 * (x[IX(i + 1, j)].omega - x[IX(i - 1, j)].omega) * ctx.hy; /* cavity.stn:57 */
      f[p].omega = lap_omega
                 + conv_omega
                 - 0.5 * ctx.grashof * (x[IX(i + 1, j)].temp - x[IX(i - 1, j)].temp) * ctx.hy; /* cavity.stn:65 */
      f[p].temp = lap_temp + ctx.prandtl * conv_temp; /* cavity.stn:75 */
    }
  }
}

/* The runtime's StnKernelFn (stnkernel.h): blocks of bx x by threads, each sweeping `sweep`
   points along the slowest direction (by and sweep are 1 in 1D); 0s for the default,
   256 x 1 x 1. */
extern "C" int FormFunctionCUDA(const void *context, const double *state, double *residual, const StnKernelShape *shape)
{
  const KernelCtx *ctx = (const KernelCtx *)context;
  const Field     *x   = (const Field *)state;
  Field           *f   = (Field *)residual;
  int              bx = shape->bx, by = shape->by, sweep = shape->sweep;

  if (bx <= 0 || by <= 0 || sweep <= 0) bx = 256, by = 1, sweep = 1;
  if (ctx->xm == 0 || ctx->ym == 0) return 0;
  while ((ctx->ym + by * sweep - 1) / (by * sweep) > 65535) sweep *= 2; /* the grid's y limit; the points are the same */
  const dim3 block(bx, by);
  const dim3 grid((ctx->xm + bx - 1) / bx, (ctx->ym + by * sweep - 1) / (by * sweep));
  FormFunctionKernel<<<grid, block>>>(*ctx, x, f, sweep);
  return (int)cudaGetLastError();
}

/* The block row of every owned point, straight into SG-DIA storage a: column
   s*DOF + c, of height n*DOF, row p*DOF + r. Writes NSTENCIL*DOF*DOF doubles per
   point, coalesced across threads. */
__global__ static void FormJacobianKernel(const KernelCtx ctx, const Field *__restrict__ x, double *__restrict__ a, const int sweep)
{
  const long n = (long)ctx.xm * ctx.ym; /* owned points: the height of a block column is n*DOF */
  const double dhx = (double)ctx.nx - 1.0;
  const double hydhx = ctx.hy * dhx;
  const double dhy = (double)ctx.ny - 1.0;
  const double hxdhy = ctx.hx * dhy;
  const double t0 = -hxdhy;
  const double t1 = 2.0 * hydhx + 2.0 * hxdhy;
  const double t2 = -hydhx;
  const double t3 = -dhx;
  const double t4 = -dhy;
  const int i = ctx.xs + (int)(blockIdx.x * blockDim.x + threadIdx.x);
  const int j0 = ctx.ys + (int)(blockIdx.y * blockDim.y + threadIdx.y) * sweep;

  if (i >= ctx.xs + ctx.xm) return;
  for (int j = j0; j < j0 + sweep && j < ctx.ys + ctx.ym; j++) {
    const int p = (j - ctx.ys) * ctx.xm + (i - ctx.xs); /* the owned point, x fastest */
    double v[NSTENCIL][DOF][DOF] = {};

    if (i == 0) { /* left & bottom, left, left & top */
      v[2][0][0] = 1.0; /* du/du[0,0], derived from cavity.stn:50 */
      v[2][1][1] = 1.0; /* dv/dv[0,0], derived from cavity.stn:56 */
      v[2][2][1] = dhx; /* domega/dv[0,0], derived from cavity.stn:63 */
      v[2][2][2] = 1.0; /* domega/domega[0,0], derived from cavity.stn:63 */
      v[3][2][1] = t3; /* domega/dv[1,0], derived from cavity.stn:63 */
      v[2][3][3] = 1.0; /* dtemp/dtemp[0,0], derived from cavity.stn:73 */
    } else if (i == ctx.nx - 1) { /* right & bottom, right, right & top */
      v[2][0][0] = 1.0; /* du/du[0,0], derived from cavity.stn:51 */
      v[2][1][1] = 1.0; /* dv/dv[0,0], derived from cavity.stn:56 */
      v[1][2][1] = dhx; /* domega/dv[-1,0], derived from cavity.stn:64 */
      v[2][2][1] = t3; /* domega/dv[0,0], derived from cavity.stn:64 */
      v[2][2][2] = 1.0; /* domega/domega[0,0], derived from cavity.stn:64 */
      v[2][3][3] = 1.0; /* dtemp/dtemp[0,0], derived from cavity.stn:74 */
    } else if (j == 0) { /* bottom */
      v[2][0][0] = 1.0; /* du/du[0,0], derived from cavity.stn:48 */
      v[2][1][1] = 1.0; /* dv/dv[0,0], derived from cavity.stn:56 */
      v[2][2][0] = t4; /* domega/du[0,0], derived from cavity.stn:61 */
      v[2][2][2] = 1.0; /* domega/domega[0,0], derived from cavity.stn:61 */
      v[4][2][0] = dhy; /* domega/du[0,1], derived from cavity.stn:61 */
      v[2][3][3] = 1.0; /* dtemp/dtemp[0,0], derived from cavity.stn:71 */
      v[4][3][3] = -1.0; /* dtemp/dtemp[0,1], derived from cavity.stn:71 */
    } else if (j == ctx.ny - 1) { /* top */
      v[2][0][0] = 1.0; /* du/du[0,0], derived from cavity.stn:49 */
      v[2][1][1] = 1.0; /* dv/dv[0,0], derived from cavity.stn:56 */
      v[0][2][0] = t4; /* domega/du[0,-1], derived from cavity.stn:62 */
      v[2][2][0] = dhy; /* domega/du[0,0], derived from cavity.stn:62 */
      v[2][2][2] = 1.0; /* domega/domega[0,0], derived from cavity.stn:62 */
      v[0][3][3] = -1.0; /* dtemp/dtemp[0,-1], derived from cavity.stn:72 */
      v[2][3][3] = 1.0; /* dtemp/dtemp[0,0], derived from cavity.stn:72 */
    } else { /* interior */
      const double t5 = fabs(x[IX(i, j)].u);
      const double t6 = x[IX(i, j)].u + t5;
      const double vxp = 0.5 * t6;
      const double t7 = x[IX(i, j)].u - t5;
      const double vxm = 0.5 * t7;
      const double t8 = fabs(x[IX(i, j)].v);
      const double t9 = x[IX(i, j)].v + t8;
      const double vyp = 0.5 * t9;
      const double t10 = x[IX(i, j)].v - t8;
      const double vym = 0.5 * t10;
      const double t11 = (vxp + -0.5 * t7) * ctx.hy + (vyp + -0.5 * t10) * ctx.hx;
      const double t12 = vym * ctx.hx;
      const double t13 = x[IX(i, j)].v >= 0.0 ? 1.0 : -1.0;
      const double t14 = 0.5 * (1.0 - t13);
      const double t15 = 0.5 * (1.0 + t13);
      const double t16 = -0.5 * t9 * ctx.hx;
      const double t17 = vxm * ctx.hy;
      const double t18 = x[IX(i, j)].u >= 0.0 ? 1.0 : -1.0;
      const double t19 = 0.5 * (1.0 - t18);
      const double t20 = 0.5 * (1.0 + t18);
      const double t21 = -0.5 * t6 * ctx.hy;
      v[0][0][0] = t0; /* du/du[0,-1], derived from cavity.stn:52 */
      v[0][0][2] = 0.5 * ctx.hx; /* du/domega[0,-1], derived from cavity.stn:52 */
      v[1][0][0] = t2; /* du/du[-1,0], derived from cavity.stn:52 */
      v[2][0][0] = t1; /* du/du[0,0], derived from cavity.stn:52 */
      v[3][0][0] = t2; /* du/du[1,0], derived from cavity.stn:52 */
      v[4][0][0] = t0; /* du/du[0,1], derived from cavity.stn:52 */
      v[4][0][2] = -0.5 * ctx.hx; /* du/domega[0,1], derived from cavity.stn:52 */
      v[0][1][1] = t0; /* dv/dv[0,-1], derived from cavity.stn:57 */
      v[1][1][1] = t2; /* dv/dv[-1,0], derived from cavity.stn:57 */
      v[1][1][2] = -0.5 * ctx.hy; /* dv/domega[-1,0], derived from cavity.stn:57 */
      v[2][1][1] = t1; /* dv/dv[0,0], derived from cavity.stn:57 */
      v[3][1][1] = t2; /* dv/dv[1,0], derived from cavity.stn:57 */
      v[3][1][2] = 0.5 * ctx.hy; /* dv/domega[1,0], derived from cavity.stn:57 */
      v[4][1][1] = t0; /* dv/dv[0,1], derived from cavity.stn:57 */
      v[0][2][2] = t0 + t16; /* domega/domega[0,-1], derived from cavity.stn:65 */
      v[1][2][2] = t2 + t21; /* domega/domega[-1,0], derived from cavity.stn:65 */
      v[1][2][3] = -(-0.5 * ctx.grashof * ctx.hy); /* domega/dtemp[-1,0], derived from cavity.stn:65 */
      v[2][2][0] = (t20 * (x[IX(i, j)].omega - x[IX(i - 1, j)].omega) + t19 * (x[IX(i + 1, j)].omega - x[IX(i, j)].omega)) * ctx.hy; /* domega/du[0,0], derived from cavity.stn:65 */
      v[2][2][1] = (t15 * (x[IX(i, j)].omega - x[IX(i, j - 1)].omega) + t14 * (x[IX(i, j + 1)].omega - x[IX(i, j)].omega)) * ctx.hx; /* domega/dv[0,0], derived from cavity.stn:65 */
      v[2][2][2] = t1 + t11; /* domega/domega[0,0], derived from cavity.stn:65 */
      v[3][2][2] = t2 + t17; /* domega/domega[1,0], derived from cavity.stn:65 */
      v[3][2][3] = -(0.5 * ctx.grashof * ctx.hy); /* domega/dtemp[1,0], derived from cavity.stn:65 */
      v[4][2][2] = t0 + t12; /* domega/domega[0,1], derived from cavity.stn:65 */
      v[0][3][3] = t0 + ctx.prandtl * t16; /* dtemp/dtemp[0,-1], derived from cavity.stn:75 */
      v[1][3][3] = t2 + ctx.prandtl * t21; /* dtemp/dtemp[-1,0], derived from cavity.stn:75 */
      v[2][3][0] = ctx.prandtl * ((t20 * (x[IX(i, j)].temp - x[IX(i - 1, j)].temp) + t19 * (x[IX(i + 1, j)].temp - x[IX(i, j)].temp)) * ctx.hy); /* dtemp/du[0,0], derived from cavity.stn:75 */
      v[2][3][1] = ctx.prandtl * ((t15 * (x[IX(i, j)].temp - x[IX(i, j - 1)].temp) + t14 * (x[IX(i, j + 1)].temp - x[IX(i, j)].temp)) * ctx.hx); /* dtemp/dv[0,0], derived from cavity.stn:75 */
      v[2][3][3] = t1 + ctx.prandtl * t11; /* dtemp/dtemp[0,0], derived from cavity.stn:75 */
      v[3][3][3] = t2 + ctx.prandtl * t17; /* dtemp/dtemp[1,0], derived from cavity.stn:75 */
      v[4][3][3] = t0 + ctx.prandtl * t12; /* dtemp/dtemp[0,1], derived from cavity.stn:75 */
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
extern "C" int FormJacobianCUDA(const void *context, const double *state, double *values, const StnKernelShape *shape)
{
  const KernelCtx *ctx = (const KernelCtx *)context;
  const Field     *x   = (const Field *)state;
  double          *a   = values;
  int              bx = shape->bx, by = shape->by, sweep = shape->sweep;

  if (bx <= 0 || by <= 0 || sweep <= 0) bx = 256, by = 1, sweep = 1;
  if (ctx->xm == 0 || ctx->ym == 0) return 0;
  while ((ctx->ym + by * sweep - 1) / (by * sweep) > 65535) sweep *= 2; /* the grid's y limit; the points are the same */
  const dim3 block(bx, by);
  const dim3 grid((ctx->xm + bx - 1) / bx, (ctx->ym + by * sweep - 1) / (by * sweep));
  FormJacobianKernel<<<grid, block>>>(*ctx, x, a, sweep);
  return (int)cudaGetLastError();
}

