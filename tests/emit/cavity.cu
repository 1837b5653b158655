/*
 * cavity.cu: generated from cavity.stn by stencilc 0.1.0: the residual, the Jacobian and
 * its product without the matrix on the GPU: thread blocks tile the grid in x and y,
 * each thread sweeping one or more points along the slowest direction. The
 * expressions are those of the C version; x[IX(i - 1, j)] there is x[j][i - 1] in
 * the C.
 */
#include <math.h>

#include "cavity.h"

#define PETSC_PI       3.14159265358979323846
#define PETSC_INFINITY INFINITY

/* The index in the local (ghosted) array of the point (i, j, k). */
#define IX(i_, j_) (((j_) - info.gys) * info.gxm + ((i_) - info.gxs))

/* F(x) at every owned point: 8 bytes per unknown read (plus ghost re-reads from
   cache) and 8 written; compute is a few dozen flops per point. */
__global__ static void FormFunctionKernel(const StnLocalInfo info, const AppCtx user, const Field *__restrict__ x, Field *__restrict__ f, const int sweep)
{
  const double hx = (1.0 - 0.0) / (info.mx - 1);
  const double hy = (1.0 - 0.0) / (info.my - 1);
  const double dhx = (double)info.mx - 1.0;
  const double hydhx = hy * dhx;
  const double dhy = (double)info.my - 1.0;
  const double hxdhy = hx * dhy;
  const int i = info.xs + (int)(blockIdx.x * blockDim.x + threadIdx.x);
  const int j0 = info.ys + (int)(blockIdx.y * blockDim.y + threadIdx.y) * sweep;

  if (i >= info.xs + info.xm) return;
  for (int j = j0; j < j0 + sweep && j < info.ys + info.ym; j++) {
    const int p = (j - info.ys) * info.xm + (i - info.xs); /* the owned point, x fastest */
    if (i == 0) { /* left & bottom, left, left & top */
      f[p].u = x[IX(i, j)].u; /* cavity.stn:50 */
      f[p].v = x[IX(i, j)].v; /* cavity.stn:56 */
      f[p].omega = x[IX(i, j)].omega - (x[IX(i + 1, j)].v - x[IX(i, j)].v) * dhx; /* cavity.stn:63 */
      f[p].temp = x[IX(i, j)].temp; /* cavity.stn:73 */
    } else if (i == info.mx - 1) { /* right & bottom, right, right & top */
      f[p].u = x[IX(i, j)].u; /* cavity.stn:51 */
      f[p].v = x[IX(i, j)].v; /* cavity.stn:56 */
      f[p].omega = x[IX(i, j)].omega - (x[IX(i, j)].v - x[IX(i - 1, j)].v) * dhx; /* cavity.stn:64 */
      f[p].temp = x[IX(i, j)].temp - (user.grashof > 0.0); /* cavity.stn:74 */
    } else if (j == 0) { /* bottom */
      f[p].u = x[IX(i, j)].u; /* cavity.stn:48 */
      f[p].v = x[IX(i, j)].v; /* cavity.stn:56 */
      f[p].omega = x[IX(i, j)].omega + (x[IX(i, j + 1)].u - x[IX(i, j)].u) * dhy; /* cavity.stn:61 */
      f[p].temp = x[IX(i, j)].temp - x[IX(i, j + 1)].temp; /* cavity.stn:71 */
    } else if (j == info.my - 1) { /* top */
      f[p].u = x[IX(i, j)].u - user.lidvelocity; /* cavity.stn:49 */
      f[p].v = x[IX(i, j)].v; /* cavity.stn:56 */
      f[p].omega = x[IX(i, j)].omega + (x[IX(i, j)].u - x[IX(i, j - 1)].u) * dhy; /* cavity.stn:62 */
      f[p].temp = x[IX(i, j)].temp - x[IX(i, j - 1)].temp; /* cavity.stn:72 */
    } else { /* interior */
      const double lap_u = (2.0 * x[IX(i, j)].u - x[IX(i - 1, j)].u - x[IX(i + 1, j)].u) * hydhx
                         + (2.0 * x[IX(i, j)].u - x[IX(i, j - 1)].u - x[IX(i, j + 1)].u) * hxdhy;
      const double lap_v = (2.0 * x[IX(i, j)].v - x[IX(i - 1, j)].v - x[IX(i + 1, j)].v) * hydhx
                         + (2.0 * x[IX(i, j)].v - x[IX(i, j - 1)].v - x[IX(i, j + 1)].v) * hxdhy;
      const double lap_omega = (2.0 * x[IX(i, j)].omega - x[IX(i - 1, j)].omega - x[IX(i + 1, j)].omega) * hydhx
                             + (2.0 * x[IX(i, j)].omega - x[IX(i, j - 1)].omega - x[IX(i, j + 1)].omega) * hxdhy;
      const double t0 = fabs(x[IX(i, j)].u);
      const double vxp = 0.5 * (x[IX(i, j)].u + t0);
      const double vxm = 0.5 * (x[IX(i, j)].u - t0);
      const double t1 = fabs(x[IX(i, j)].v);
      const double vyp = 0.5 * (x[IX(i, j)].v + t1);
      const double vym = 0.5 * (x[IX(i, j)].v - t1);
      const double conv_omega = (vxp * (x[IX(i, j)].omega - x[IX(i - 1, j)].omega) + vxm * (x[IX(i + 1, j)].omega - x[IX(i, j)].omega)) * hy
                              + (vyp * (x[IX(i, j)].omega - x[IX(i, j - 1)].omega) + vym * (x[IX(i, j + 1)].omega - x[IX(i, j)].omega)) * hx;
      const double lap_temp = (2.0 * x[IX(i, j)].temp - x[IX(i - 1, j)].temp - x[IX(i + 1, j)].temp) * hydhx
                            + (2.0 * x[IX(i, j)].temp - x[IX(i, j - 1)].temp - x[IX(i, j + 1)].temp) * hxdhy;
      const double conv_temp = (vxp * (x[IX(i, j)].temp - x[IX(i - 1, j)].temp) + vxm * (x[IX(i + 1, j)].temp - x[IX(i, j)].temp)) * hy
                             + (vyp * (x[IX(i, j)].temp - x[IX(i, j - 1)].temp) + vym * (x[IX(i, j + 1)].temp - x[IX(i, j)].temp)) * hx;
      f[p].u = lap_u - 0.5 * (x[IX(i, j + 1)].omega - x[IX(i, j - 1)].omega) * hx; /* cavity.stn:52 */
      f[p].v = lap_v + 0.5 * (x[IX(i + 1, j)].omega - x[IX(i - 1, j)].omega) * hy; /* cavity.stn:57 */
      f[p].omega = lap_omega
                 + conv_omega
                 - 0.5 * user.grashof * (x[IX(i + 1, j)].temp - x[IX(i - 1, j)].temp) * hy; /* cavity.stn:65 */
      f[p].temp = lap_temp + user.prandtl * conv_temp; /* cavity.stn:75 */
    }
  }
}

/* The runtime's StnKernelFn (stnkernel.h): blocks of bx x by threads, each sweeping `sweep`
   points along the slowest direction (by and sweep are 1 in 1D); 0s for the default,
   256 x 1 x 1. */
extern "C" int FormFunctionCUDA(const StnLocalInfo *info, const void *user, const double *state, double *residual, const StnKernelShape *shape)
{
  const Field *x = (const Field *)state;
  Field       *f = (Field *)residual;
  int          bx = shape->bx, by = shape->by, sweep = shape->sweep;

  if (bx <= 0 || by <= 0 || sweep <= 0) bx = 256, by = 1, sweep = 1;
  if (info->xm == 0 || info->ym == 0) return 0;
  while ((info->ym + by * sweep - 1) / (by * sweep) > 65535) sweep *= 2; /* the grid's y limit; the points are the same */
  const dim3 block(bx, by);
  const dim3 grid((info->xm + bx - 1) / bx, (info->ym + by * sweep - 1) / (by * sweep));
  FormFunctionKernel<<<grid, block>>>(*info, *(const AppCtx *)user, x, f, sweep);
  return (int)cudaGetLastError();
}

/* The block row of every owned point, straight into SG-DIA storage a: column
   s*DOF + c, of height n*DOF, row p*DOF + r. Writes NSTENCIL*DOF*DOF doubles per
   point, coalesced across threads. */
__global__ static void FormJacobianKernel(const StnLocalInfo info, const AppCtx user, const Field *__restrict__ x, double *__restrict__ a, const int sweep)
{
  const long n = (long)info.xm * info.ym; /* owned points: the height of a block column is n*DOF */
  const double hx = (1.0 - 0.0) / (info.mx - 1);
  const double hy = (1.0 - 0.0) / (info.my - 1);
  const double dhx = (double)info.mx - 1.0;
  const double hydhx = hy * dhx;
  const double dhy = (double)info.my - 1.0;
  const double hxdhy = hx * dhy;
  const double t0 = 2.0 * hydhx + 2.0 * hxdhy;
  const int i = info.xs + (int)(blockIdx.x * blockDim.x + threadIdx.x);
  const int j0 = info.ys + (int)(blockIdx.y * blockDim.y + threadIdx.y) * sweep;

  if (i >= info.xs + info.xm) return;
  for (int j = j0; j < j0 + sweep && j < info.ys + info.ym; j++) {
    const int p = (j - info.ys) * info.xm + (i - info.xs); /* the owned point, x fastest */
    double v[NSTENCIL][DOF][DOF] = {};

    if (i == 0) { /* left & bottom, left, left & top */
      v[2][0][0] = 1.0; /* du/du[0,0], derived from cavity.stn:50 */
      v[2][1][1] = 1.0; /* dv/dv[0,0], derived from cavity.stn:56 */
      v[2][2][1] = dhx; /* domega/dv[0,0], derived from cavity.stn:63 */
      v[2][2][2] = 1.0; /* domega/domega[0,0], derived from cavity.stn:63 */
      v[3][2][1] = -dhx; /* domega/dv[1,0], derived from cavity.stn:63 */
      v[2][3][3] = 1.0; /* dtemp/dtemp[0,0], derived from cavity.stn:73 */
    } else if (i == info.mx - 1) { /* right & bottom, right, right & top */
      v[2][0][0] = 1.0; /* du/du[0,0], derived from cavity.stn:51 */
      v[2][1][1] = 1.0; /* dv/dv[0,0], derived from cavity.stn:56 */
      v[1][2][1] = dhx; /* domega/dv[-1,0], derived from cavity.stn:64 */
      v[2][2][1] = -dhx; /* domega/dv[0,0], derived from cavity.stn:64 */
      v[2][2][2] = 1.0; /* domega/domega[0,0], derived from cavity.stn:64 */
      v[2][3][3] = 1.0; /* dtemp/dtemp[0,0], derived from cavity.stn:74 */
    } else if (j == 0) { /* bottom */
      v[2][0][0] = 1.0; /* du/du[0,0], derived from cavity.stn:48 */
      v[2][1][1] = 1.0; /* dv/dv[0,0], derived from cavity.stn:56 */
      v[2][2][0] = -dhy; /* domega/du[0,0], derived from cavity.stn:61 */
      v[2][2][2] = 1.0; /* domega/domega[0,0], derived from cavity.stn:61 */
      v[4][2][0] = dhy; /* domega/du[0,1], derived from cavity.stn:61 */
      v[2][3][3] = 1.0; /* dtemp/dtemp[0,0], derived from cavity.stn:71 */
      v[4][3][3] = -1.0; /* dtemp/dtemp[0,1], derived from cavity.stn:71 */
    } else if (j == info.my - 1) { /* top */
      v[2][0][0] = 1.0; /* du/du[0,0], derived from cavity.stn:49 */
      v[2][1][1] = 1.0; /* dv/dv[0,0], derived from cavity.stn:56 */
      v[0][2][0] = -dhy; /* domega/du[0,-1], derived from cavity.stn:62 */
      v[2][2][0] = dhy; /* domega/du[0,0], derived from cavity.stn:62 */
      v[2][2][2] = 1.0; /* domega/domega[0,0], derived from cavity.stn:62 */
      v[0][3][3] = -1.0; /* dtemp/dtemp[0,-1], derived from cavity.stn:72 */
      v[2][3][3] = 1.0; /* dtemp/dtemp[0,0], derived from cavity.stn:72 */
    } else { /* interior */
      const double t1 = fabs(x[IX(i, j)].u);
      const double vxp = 0.5 * (x[IX(i, j)].u + t1);
      const double vxm = 0.5 * (x[IX(i, j)].u - t1);
      const double t2 = fabs(x[IX(i, j)].v);
      const double vyp = 0.5 * (x[IX(i, j)].v + t2);
      const double vym = 0.5 * (x[IX(i, j)].v - t2);
      const double t3 = (vxp + -0.5 * (x[IX(i, j)].u - t1)) * hy + (vyp + -0.5 * (x[IX(i, j)].v - t2)) * hx;
      const double t4 = x[IX(i, j)].v >= 0.0 ? 1.0 : -1.0;
      const double t5 = 0.5 * (1.0 - t4);
      const double t6 = 0.5 * (1.0 + t4);
      const double t7 = -0.5 * (x[IX(i, j)].v + t2) * hx;
      const double t8 = x[IX(i, j)].u >= 0.0 ? 1.0 : -1.0;
      const double t9 = 0.5 * (1.0 - t8);
      const double t10 = 0.5 * (1.0 + t8);
      const double t11 = -0.5 * (x[IX(i, j)].u + t1) * hy;
      v[0][0][0] = -hxdhy; /* du/du[0,-1], derived from cavity.stn:52 */
      v[0][0][2] = 0.5 * hx; /* du/domega[0,-1], derived from cavity.stn:52 */
      v[1][0][0] = -hydhx; /* du/du[-1,0], derived from cavity.stn:52 */
      v[2][0][0] = t0; /* du/du[0,0], derived from cavity.stn:52 */
      v[3][0][0] = -hydhx; /* du/du[1,0], derived from cavity.stn:52 */
      v[4][0][0] = -hxdhy; /* du/du[0,1], derived from cavity.stn:52 */
      v[4][0][2] = -0.5 * hx; /* du/domega[0,1], derived from cavity.stn:52 */
      v[0][1][1] = -hxdhy; /* dv/dv[0,-1], derived from cavity.stn:57 */
      v[1][1][1] = -hydhx; /* dv/dv[-1,0], derived from cavity.stn:57 */
      v[1][1][2] = -0.5 * hy; /* dv/domega[-1,0], derived from cavity.stn:57 */
      v[2][1][1] = t0; /* dv/dv[0,0], derived from cavity.stn:57 */
      v[3][1][1] = -hydhx; /* dv/dv[1,0], derived from cavity.stn:57 */
      v[3][1][2] = 0.5 * hy; /* dv/domega[1,0], derived from cavity.stn:57 */
      v[4][1][1] = -hxdhy; /* dv/dv[0,1], derived from cavity.stn:57 */
      v[0][2][2] = -hxdhy + t7; /* domega/domega[0,-1], derived from cavity.stn:65 */
      v[1][2][2] = -hydhx + t11; /* domega/domega[-1,0], derived from cavity.stn:65 */
      v[1][2][3] = -(-0.5 * user.grashof * hy); /* domega/dtemp[-1,0], derived from cavity.stn:65 */
      v[2][2][0] = (t10 * (x[IX(i, j)].omega - x[IX(i - 1, j)].omega) + t9 * (x[IX(i + 1, j)].omega - x[IX(i, j)].omega)) * hy; /* domega/du[0,0], derived from cavity.stn:65 */
      v[2][2][1] = (t6 * (x[IX(i, j)].omega - x[IX(i, j - 1)].omega) + t5 * (x[IX(i, j + 1)].omega - x[IX(i, j)].omega)) * hx; /* domega/dv[0,0], derived from cavity.stn:65 */
      v[2][2][2] = t0 + t3; /* domega/domega[0,0], derived from cavity.stn:65 */
      v[3][2][2] = -hydhx + vxm * hy; /* domega/domega[1,0], derived from cavity.stn:65 */
      v[3][2][3] = -(0.5 * user.grashof * hy); /* domega/dtemp[1,0], derived from cavity.stn:65 */
      v[4][2][2] = -hxdhy + vym * hx; /* domega/domega[0,1], derived from cavity.stn:65 */
      v[0][3][3] = -hxdhy + user.prandtl * t7; /* dtemp/dtemp[0,-1], derived from cavity.stn:75 */
      v[1][3][3] = -hydhx + user.prandtl * t11; /* dtemp/dtemp[-1,0], derived from cavity.stn:75 */
      v[2][3][0] = user.prandtl * ((t10 * (x[IX(i, j)].temp - x[IX(i - 1, j)].temp) + t9 * (x[IX(i + 1, j)].temp - x[IX(i, j)].temp)) * hy); /* dtemp/du[0,0], derived from cavity.stn:75 */
      v[2][3][1] = user.prandtl * ((t6 * (x[IX(i, j)].temp - x[IX(i, j - 1)].temp) + t5 * (x[IX(i, j + 1)].temp - x[IX(i, j)].temp)) * hx); /* dtemp/dv[0,0], derived from cavity.stn:75 */
      v[2][3][3] = t0 + user.prandtl * t3; /* dtemp/dtemp[0,0], derived from cavity.stn:75 */
      v[3][3][3] = -hydhx + user.prandtl * (vxm * hy); /* dtemp/dtemp[1,0], derived from cavity.stn:75 */
      v[4][3][3] = -hxdhy + user.prandtl * (vym * hx); /* dtemp/dtemp[0,1], derived from cavity.stn:75 */
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
extern "C" int FormJacobianCUDA(const StnLocalInfo *info, const void *user, const double *state, double *values, const StnKernelShape *shape)
{
  const Field *x = (const Field *)state;
  double      *a = values;
  int          bx = shape->bx, by = shape->by, sweep = shape->sweep;

  if (bx <= 0 || by <= 0 || sweep <= 0) bx = 256, by = 1, sweep = 1;
  if (info->xm == 0 || info->ym == 0) return 0;
  while ((info->ym + by * sweep - 1) / (by * sweep) > 65535) sweep *= 2; /* the grid's y limit; the points are the same */
  const dim3 block(bx, by);
  const dim3 grid((info->xm + bx - 1) / bx, (info->ym + by * sweep - 1) / (by * sweep));
  FormJacobianKernel<<<grid, block>>>(*info, *(const AppCtx *)user, x, a, sweep);
  return (int)cudaGetLastError();
}

/* For J w without the matrix: w's unknowns at the point (i, j, k), NULL beyond a non-periodic
   edge. On one rank w is the owned array of the whole grid (a periodic direction wraps);
   on several a point this rank owns is read from w, any other from m.wg, w's ghosts laid
   out in the ghosted box. */
__device__ static inline const double *NB(const StnLocalInfo &info, const StnMultArgs &m, int i, int j)
{
  if (i < 0 || i >= info.mx) return nullptr;
  if (j < 0 || j >= info.my) return nullptr;
  if (m.wg) {
    if (i >= info.xs && i < info.xs + info.xm && j >= info.ys && j < info.ys + info.ym)
      return m.w + ((long)(j - info.ys) * info.xm + (i - info.xs)) * DOF;
    return m.wg + ((long)(j - info.gys) * info.gxm + (i - info.gxs)) * DOF;
  }
  return m.w + ((long)j * info.mx + i) * DOF;
}

/* w's unknown c_ at the point's neighbour s_ (0 where there is none). */
#define W(s_, c_) (nb[s_] ? nb[s_][c_] : 0.0)

/* J w without the matrix: each entry of the block row as FormJacobianKernel computes it,
   times w at its neighbour. Reads the state and w (neighbours from cache), b, d and p;
   writes y: about 48 bytes per unknown, where the product with the stored matrix reads
   8 * NSTENCIL * DOF bytes of it per unknown besides. */
__global__ static void FormJacobianMultKernel(const StnLocalInfo info, const AppCtx user, const Field *__restrict__ x, const StnMultArgs m, const int sweep)
{
  const double *__restrict__ w = m.w; /* the point's own values */
  const double hx = (1.0 - 0.0) / (info.mx - 1);
  const double hy = (1.0 - 0.0) / (info.my - 1);
  const double dhx = (double)info.mx - 1.0;
  const double hydhx = hy * dhx;
  const double dhy = (double)info.my - 1.0;
  const double hxdhy = hx * dhy;
  const double t0 = 2.0 * hydhx + 2.0 * hxdhy;
  const int i = info.xs + (int)(blockIdx.x * blockDim.x + threadIdx.x);
  const int j0 = info.ys + (int)(blockIdx.y * blockDim.y + threadIdx.y) * sweep;

  if (i >= info.xs + info.xm) return;
  for (int j = j0; j < j0 + sweep && j < info.ys + info.ym; j++) {
    const int p = (j - info.ys) * info.xm + (i - info.xs); /* the owned point, x fastest */
    const double *nb[NSTENCIL] = {NB(info, m, i, j - 1), NB(info, m, i - 1, j), NB(info, m, i, j), NB(info, m, i + 1, j), NB(info, m, i, j + 1)};
    double Jw[DOF] = {};

    if (i == 0) { /* left & bottom, left, left & top */
      Jw[0] += W(2, 0) * (1.0); /* du/du[0,0], derived from cavity.stn:50 */
      Jw[1] += W(2, 1) * (1.0); /* dv/dv[0,0], derived from cavity.stn:56 */
      Jw[2] += W(2, 1) * (dhx); /* domega/dv[0,0], derived from cavity.stn:63 */
      Jw[2] += W(2, 2) * (1.0); /* domega/domega[0,0], derived from cavity.stn:63 */
      Jw[2] += W(3, 1) * (-dhx); /* domega/dv[1,0], derived from cavity.stn:63 */
      Jw[3] += W(2, 3) * (1.0); /* dtemp/dtemp[0,0], derived from cavity.stn:73 */
    } else if (i == info.mx - 1) { /* right & bottom, right, right & top */
      Jw[0] += W(2, 0) * (1.0); /* du/du[0,0], derived from cavity.stn:51 */
      Jw[1] += W(2, 1) * (1.0); /* dv/dv[0,0], derived from cavity.stn:56 */
      Jw[2] += W(1, 1) * (dhx); /* domega/dv[-1,0], derived from cavity.stn:64 */
      Jw[2] += W(2, 1) * (-dhx); /* domega/dv[0,0], derived from cavity.stn:64 */
      Jw[2] += W(2, 2) * (1.0); /* domega/domega[0,0], derived from cavity.stn:64 */
      Jw[3] += W(2, 3) * (1.0); /* dtemp/dtemp[0,0], derived from cavity.stn:74 */
    } else if (j == 0) { /* bottom */
      Jw[0] += W(2, 0) * (1.0); /* du/du[0,0], derived from cavity.stn:48 */
      Jw[1] += W(2, 1) * (1.0); /* dv/dv[0,0], derived from cavity.stn:56 */
      Jw[2] += W(2, 0) * (-dhy); /* domega/du[0,0], derived from cavity.stn:61 */
      Jw[2] += W(2, 2) * (1.0); /* domega/domega[0,0], derived from cavity.stn:61 */
      Jw[2] += W(4, 0) * (dhy); /* domega/du[0,1], derived from cavity.stn:61 */
      Jw[3] += W(2, 3) * (1.0); /* dtemp/dtemp[0,0], derived from cavity.stn:71 */
      Jw[3] += W(4, 3) * (-1.0); /* dtemp/dtemp[0,1], derived from cavity.stn:71 */
    } else if (j == info.my - 1) { /* top */
      Jw[0] += W(2, 0) * (1.0); /* du/du[0,0], derived from cavity.stn:49 */
      Jw[1] += W(2, 1) * (1.0); /* dv/dv[0,0], derived from cavity.stn:56 */
      Jw[2] += W(0, 0) * (-dhy); /* domega/du[0,-1], derived from cavity.stn:62 */
      Jw[2] += W(2, 0) * (dhy); /* domega/du[0,0], derived from cavity.stn:62 */
      Jw[2] += W(2, 2) * (1.0); /* domega/domega[0,0], derived from cavity.stn:62 */
      Jw[3] += W(0, 3) * (-1.0); /* dtemp/dtemp[0,-1], derived from cavity.stn:72 */
      Jw[3] += W(2, 3) * (1.0); /* dtemp/dtemp[0,0], derived from cavity.stn:72 */
    } else { /* interior */
      const double t1 = fabs(x[IX(i, j)].u);
      const double vxp = 0.5 * (x[IX(i, j)].u + t1);
      const double vxm = 0.5 * (x[IX(i, j)].u - t1);
      const double t2 = fabs(x[IX(i, j)].v);
      const double vyp = 0.5 * (x[IX(i, j)].v + t2);
      const double vym = 0.5 * (x[IX(i, j)].v - t2);
      const double t3 = (vxp + -0.5 * (x[IX(i, j)].u - t1)) * hy + (vyp + -0.5 * (x[IX(i, j)].v - t2)) * hx;
      const double t4 = x[IX(i, j)].v >= 0.0 ? 1.0 : -1.0;
      const double t5 = 0.5 * (1.0 - t4);
      const double t6 = 0.5 * (1.0 + t4);
      const double t7 = -0.5 * (x[IX(i, j)].v + t2) * hx;
      const double t8 = x[IX(i, j)].u >= 0.0 ? 1.0 : -1.0;
      const double t9 = 0.5 * (1.0 - t8);
      const double t10 = 0.5 * (1.0 + t8);
      const double t11 = -0.5 * (x[IX(i, j)].u + t1) * hy;
      Jw[0] += W(0, 0) * (-hxdhy); /* du/du[0,-1], derived from cavity.stn:52 */
      Jw[0] += W(0, 2) * (0.5 * hx); /* du/domega[0,-1], derived from cavity.stn:52 */
      Jw[0] += W(1, 0) * (-hydhx); /* du/du[-1,0], derived from cavity.stn:52 */
      Jw[0] += W(2, 0) * (t0); /* du/du[0,0], derived from cavity.stn:52 */
      Jw[0] += W(3, 0) * (-hydhx); /* du/du[1,0], derived from cavity.stn:52 */
      Jw[0] += W(4, 0) * (-hxdhy); /* du/du[0,1], derived from cavity.stn:52 */
      Jw[0] += W(4, 2) * (-0.5 * hx); /* du/domega[0,1], derived from cavity.stn:52 */
      Jw[1] += W(0, 1) * (-hxdhy); /* dv/dv[0,-1], derived from cavity.stn:57 */
      Jw[1] += W(1, 1) * (-hydhx); /* dv/dv[-1,0], derived from cavity.stn:57 */
      Jw[1] += W(1, 2) * (-0.5 * hy); /* dv/domega[-1,0], derived from cavity.stn:57 */
      Jw[1] += W(2, 1) * (t0); /* dv/dv[0,0], derived from cavity.stn:57 */
      Jw[1] += W(3, 1) * (-hydhx); /* dv/dv[1,0], derived from cavity.stn:57 */
      Jw[1] += W(3, 2) * (0.5 * hy); /* dv/domega[1,0], derived from cavity.stn:57 */
      Jw[1] += W(4, 1) * (-hxdhy); /* dv/dv[0,1], derived from cavity.stn:57 */
      Jw[2] += W(0, 2) * (-hxdhy + t7); /* domega/domega[0,-1], derived from cavity.stn:65 */
      Jw[2] += W(1, 2) * (-hydhx + t11); /* domega/domega[-1,0], derived from cavity.stn:65 */
      Jw[2] += W(1, 3) * (-(-0.5 * user.grashof * hy)); /* domega/dtemp[-1,0], derived from cavity.stn:65 */
      Jw[2] += W(2, 0) * ((t10 * (x[IX(i, j)].omega - x[IX(i - 1, j)].omega) + t9 * (x[IX(i + 1, j)].omega - x[IX(i, j)].omega)) * hy); /* domega/du[0,0], derived from cavity.stn:65 */
      Jw[2] += W(2, 1) * ((t6 * (x[IX(i, j)].omega - x[IX(i, j - 1)].omega) + t5 * (x[IX(i, j + 1)].omega - x[IX(i, j)].omega)) * hx); /* domega/dv[0,0], derived from cavity.stn:65 */
      Jw[2] += W(2, 2) * (t0 + t3); /* domega/domega[0,0], derived from cavity.stn:65 */
      Jw[2] += W(3, 2) * (-hydhx + vxm * hy); /* domega/domega[1,0], derived from cavity.stn:65 */
      Jw[2] += W(3, 3) * (-(0.5 * user.grashof * hy)); /* domega/dtemp[1,0], derived from cavity.stn:65 */
      Jw[2] += W(4, 2) * (-hxdhy + vym * hx); /* domega/domega[0,1], derived from cavity.stn:65 */
      Jw[3] += W(0, 3) * (-hxdhy + user.prandtl * t7); /* dtemp/dtemp[0,-1], derived from cavity.stn:75 */
      Jw[3] += W(1, 3) * (-hydhx + user.prandtl * t11); /* dtemp/dtemp[-1,0], derived from cavity.stn:75 */
      Jw[3] += W(2, 0) * (user.prandtl * ((t10 * (x[IX(i, j)].temp - x[IX(i - 1, j)].temp) + t9 * (x[IX(i + 1, j)].temp - x[IX(i, j)].temp)) * hy)); /* dtemp/du[0,0], derived from cavity.stn:75 */
      Jw[3] += W(2, 1) * (user.prandtl * ((t6 * (x[IX(i, j)].temp - x[IX(i, j - 1)].temp) + t5 * (x[IX(i, j + 1)].temp - x[IX(i, j)].temp)) * hx)); /* dtemp/dv[0,0], derived from cavity.stn:75 */
      Jw[3] += W(2, 3) * (t0 + user.prandtl * t3); /* dtemp/dtemp[0,0], derived from cavity.stn:75 */
      Jw[3] += W(3, 3) * (-hydhx + user.prandtl * (vxm * hy)); /* dtemp/dtemp[1,0], derived from cavity.stn:75 */
      Jw[3] += W(4, 3) * (-hxdhy + user.prandtl * (vym * hx)); /* dtemp/dtemp[0,1], derived from cavity.stn:75 */
    }
#pragma unroll
    for (int r = 0; r < DOF; r++) {
      const long t = (long)p * DOF + r;
      double     y;

      if (!m.b) {
        m.y[t] = m.d ? m.d[t] * Jw[r] : Jw[r];
        continue;
      }
      y = m.b[t] - Jw[r];
      if (m.d) y *= m.d[t];
      y *= m.gamma;
      if (m.beta != 0.0) y += m.beta * w[t];
      if (m.p) y += m.alpha * m.p[t];
      m.y[t] = y;
    }
  }
}

/* The runtime's StnMultFn (stnkernel.h): blocks of bx x by threads, each sweeping `sweep`
   points along the slowest direction (by and sweep are 1 in 1D); 0s for the default,
   256 x 1 x 1. */
extern "C" int FormJacobianMultCUDA(const StnLocalInfo *info, const void *user, const double *state, const StnMultArgs *m, const StnKernelShape *shape)
{
  const Field *x = (const Field *)state;
  int          bx = shape->bx, by = shape->by, sweep = shape->sweep;

  if (bx <= 0 || by <= 0 || sweep <= 0) bx = 256, by = 1, sweep = 1;
  if (info->xm == 0 || info->ym == 0) return 0;
  while ((info->ym + by * sweep - 1) / (by * sweep) > 65535) sweep *= 2; /* the grid's y limit; the points are the same */
  const dim3 block(bx, by);
  const dim3 grid((info->xm + bx - 1) / bx, (info->ym + by * sweep - 1) / (by * sweep));
  FormJacobianMultKernel<<<grid, block>>>(*info, *(const AppCtx *)user, x, *m, sweep);
  return (int)cudaGetLastError();
}

