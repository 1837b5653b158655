/*
 * nldiffusion2d.cu: generated from nldiffusion2d.stn by stencilc 0.1.0: the residual, the Jacobian and
 * its product without the matrix on the GPU: thread blocks tile the grid in x and y,
 * each thread sweeping one or more points along the slowest direction. The
 * expressions are those of the C version; x[IX(i - 1, j)] there is x[j][i - 1] in
 * the C.
 */
#include <math.h>

#include "nldiffusion2d.h"

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
  const int i = info.xs + (int)(blockIdx.x * blockDim.x + threadIdx.x);
  const int j0 = info.ys + (int)(blockIdx.y * blockDim.y + threadIdx.y) * sweep;

  if (i >= info.xs + info.xm) return;
  for (int j = j0; j < j0 + sweep && j < info.ys + info.ym; j++) {
    const int p = (j - info.ys) * info.xm + (i - info.xs); /* the owned point, x fastest */
    if (i == 0 || i == info.mx - 1 || j == 0 || j == info.my - 1) { /* the boundary */
      f[p].u = x[IX(i, j)].u - ((double)i * hx + (double)j * hy); /* nldiffusion2d.stn:30 */
    } else { /* interior */
      const double k_u = 1.0 + user.kappa * pow(x[IX(i, j)].u, 2.0);
      const double k_u_2 = 1.0 + user.kappa * pow(x[IX(i + 1, j)].u, 2.0);
      const double ke = (k_u + k_u_2) / 2.0;
      const double k_u_3 = 1.0 + user.kappa * pow(x[IX(i - 1, j)].u, 2.0);
      const double kw = (k_u + k_u_3) / 2.0;
      const double k_u_4 = 1.0 + user.kappa * pow(x[IX(i, j + 1)].u, 2.0);
      const double kn = (k_u + k_u_4) / 2.0;
      const double k_u_5 = 1.0 + user.kappa * pow(x[IX(i, j - 1)].u, 2.0);
      const double ks = (k_u + k_u_5) / 2.0;
      f[p].u = hy / hx * (ke * (x[IX(i, j)].u - x[IX(i + 1, j)].u) + kw * (x[IX(i, j)].u - x[IX(i - 1, j)].u))
             + hx / hy * (kn * (x[IX(i, j)].u - x[IX(i, j + 1)].u) + ks * (x[IX(i, j)].u - x[IX(i, j - 1)].u))
             - hx * hy * user.q; /* nldiffusion2d.stn:31 */
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
  const double t0 = -hy / hx;
  const double t1 = -hx / hy;
  const int i = info.xs + (int)(blockIdx.x * blockDim.x + threadIdx.x);
  const int j0 = info.ys + (int)(blockIdx.y * blockDim.y + threadIdx.y) * sweep;

  if (i >= info.xs + info.xm) return;
  for (int j = j0; j < j0 + sweep && j < info.ys + info.ym; j++) {
    const int p = (j - info.ys) * info.xm + (i - info.xs); /* the owned point, x fastest */
    double v[NSTENCIL][DOF][DOF] = {};

    if (i == 0 || i == info.mx - 1 || j == 0 || j == info.my - 1) { /* the boundary */
      v[2][0][0] = 1.0; /* du/du[0,0], derived from nldiffusion2d.stn:30 */
    } else { /* interior */
      const double k_u = 1.0 + user.kappa * pow(x[IX(i, j)].u, 2.0);
      const double k_u_2 = 1.0 + user.kappa * pow(x[IX(i + 1, j)].u, 2.0);
      const double ke = (k_u + k_u_2) / 2.0;
      const double k_u_3 = 1.0 + user.kappa * pow(x[IX(i - 1, j)].u, 2.0);
      const double kw = (k_u + k_u_3) / 2.0;
      const double k_u_4 = 1.0 + user.kappa * pow(x[IX(i, j + 1)].u, 2.0);
      const double kn = (k_u + k_u_4) / 2.0;
      const double k_u_5 = 1.0 + user.kappa * pow(x[IX(i, j - 1)].u, 2.0);
      const double ks = (k_u + k_u_5) / 2.0;
      v[0][0][0] = t1 * ks; /* du/du[0,-1], approximated at nldiffusion2d.stn:38 */
      v[1][0][0] = t0 * kw; /* du/du[-1,0], approximated at nldiffusion2d.stn:37 */
      v[2][0][0] = hy / hx * (ke + kw) + hx / hy * (kn + ks); /* du/du[0,0], approximated at nldiffusion2d.stn:36 */
      v[3][0][0] = t0 * ke; /* du/du[1,0], approximated at nldiffusion2d.stn:37 */
      v[4][0][0] = t1 * kn; /* du/du[0,1], approximated at nldiffusion2d.stn:38 */
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
  const double t0 = hy / hx;
  const double t1 = hx / hy;
  const int i = info.xs + (int)(blockIdx.x * blockDim.x + threadIdx.x);
  const int j0 = info.ys + (int)(blockIdx.y * blockDim.y + threadIdx.y) * sweep;

  if (i >= info.xs + info.xm) return;
  for (int j = j0; j < j0 + sweep && j < info.ys + info.ym; j++) {
    const int p = (j - info.ys) * info.xm + (i - info.xs); /* the owned point, x fastest */
    const double *nb[NSTENCIL] = {NB(info, m, i, j - 1), NB(info, m, i - 1, j), NB(info, m, i, j), NB(info, m, i + 1, j), NB(info, m, i, j + 1)};
    double Jw[DOF] = {};

    if (i == 0 || i == info.mx - 1 || j == 0 || j == info.my - 1) { /* the boundary */
      Jw[0] += W(2, 0) * (1.0); /* du/du[0,0], derived from nldiffusion2d.stn:30 */
    } else { /* interior */
      const double k_u = 1.0 + user.kappa * pow(x[IX(i, j)].u, 2.0);
      const double k_u_2 = 1.0 + user.kappa * pow(x[IX(i + 1, j)].u, 2.0);
      const double ke = (k_u + k_u_2) / 2.0;
      const double k_u_3 = 1.0 + user.kappa * pow(x[IX(i - 1, j)].u, 2.0);
      const double kw = (k_u + k_u_3) / 2.0;
      const double k_u_4 = 1.0 + user.kappa * pow(x[IX(i, j + 1)].u, 2.0);
      const double kn = (k_u + k_u_4) / 2.0;
      const double k_u_5 = 1.0 + user.kappa * pow(x[IX(i, j - 1)].u, 2.0);
      const double ks = (k_u + k_u_5) / 2.0;
      const double t2 = user.kappa * (2.0 * x[IX(i, j)].u) / 2.0;
      Jw[0] += W(0, 0) * (t1 * (user.kappa * (2.0 * x[IX(i, j - 1)].u) / 2.0 * (x[IX(i, j)].u - x[IX(i, j - 1)].u) - ks)); /* du/du[0,-1], derived from nldiffusion2d.stn:31 */
      Jw[0] += W(1, 0) * (t0 * (user.kappa * (2.0 * x[IX(i - 1, j)].u) / 2.0 * (x[IX(i, j)].u - x[IX(i - 1, j)].u) - kw)); /* du/du[-1,0], derived from nldiffusion2d.stn:31 */
      Jw[0] += W(2, 0) * (t0 * (t2 * (x[IX(i, j)].u - x[IX(i + 1, j)].u) + ke + (t2 * (x[IX(i, j)].u - x[IX(i - 1, j)].u) + kw))
                        + t1 * (t2 * (x[IX(i, j)].u - x[IX(i, j + 1)].u) + kn + (t2 * (x[IX(i, j)].u - x[IX(i, j - 1)].u) + ks))); /* du/du[0,0], derived from nldiffusion2d.stn:31 */
      Jw[0] += W(3, 0) * (t0 * (user.kappa * (2.0 * x[IX(i + 1, j)].u) / 2.0 * (x[IX(i, j)].u - x[IX(i + 1, j)].u) - ke)); /* du/du[1,0], derived from nldiffusion2d.stn:31 */
      Jw[0] += W(4, 0) * (t1 * (user.kappa * (2.0 * x[IX(i, j + 1)].u) / 2.0 * (x[IX(i, j)].u - x[IX(i, j + 1)].u) - kn)); /* du/du[0,1], derived from nldiffusion2d.stn:31 */
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

