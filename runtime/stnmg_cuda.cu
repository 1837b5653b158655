/* stnmg_cuda.cu: the transfers between grids and the estimates' start vector (stnmg_cuda.h) on
   the device, one thread per output point, through the point functions the host loops use. */
#include <cuda_runtime.h>

#include "stnmg_cuda.h"

enum { kThreads = 256 };

__host__ __device__ static long points(const int n[3]) { return (long)n[0] * n[1] * n[2]; }

/* Interpolation and restriction: one thread per output value of the output box (g.os, g.om),
   blocks of kThreads along a row
   of values (x, then the dof values of a point) and one block row per (j, k), so neighbouring
   threads read and write neighbouring values and only divide by the dof to find their point (a
   constant DOF the compiler turns into a multiplication; 0: g.dof). Each reads its input from
   cache after the first touch: bandwidth-bound, 16 bytes per fine unknown at best. */
template <int DOF>
__global__ static void __launch_bounds__(kThreads) interpolate_kernel(const StnTransferGrid g, int add, const double *__restrict__ coarse, double *__restrict__ fine)
{
  const int dof = DOF ? DOF : g.dof, v = (int)(blockIdx.x * blockDim.x + threadIdx.x), i = v / dof, c = v - i * dof;

  if (i < g.om[0]) stn_transfer_interpolate_point(&g, dof, c, c + 1, add, g.os[0] + i, g.os[1] + (int)blockIdx.y, g.os[2] + (int)blockIdx.z, coarse, fine);
}

template <int DOF>
__global__ static void __launch_bounds__(kThreads) restrict_kernel(const StnTransferGrid g, int add, const double *__restrict__ fine, double *__restrict__ coarse)
{
  const int dof = DOF ? DOF : g.dof, v = (int)(blockIdx.x * blockDim.x + threadIdx.x), i = v / dof, c = v - i * dof;

  if (i < g.om[0]) stn_transfer_restrict_point(&g, dof, c, c + 1, add, g.os[0] + i, g.os[1] + (int)blockIdx.y, g.os[2] + (int)blockIdx.z, fine, coarse);
}

/* The launch over points n[0] x n[1] x n[2] of dof values; 0 when a direction has more points
   than a grid of blocks has rows (65535), which no grid one rank holds in memory comes near. */
static int grid_of(const int n[3], int dof, dim3 *grid)
{
  if (n[1] > 65535 || n[2] > 65535 || (long)n[0] * dof > 2147483647L - kThreads) return 0;
  *grid = dim3((unsigned)(((long)n[0] * dof + kThreads - 1) / kThreads), (unsigned)n[1], (unsigned)n[2]);
  return 1;
}

__global__ static void inject_kernel(const StnTransferGrid g, const double *__restrict__ fine, double *__restrict__ coarse)
{
  long p = (long)blockIdx.x * blockDim.x + threadIdx.x;

  if (p >= points(g.om)) return;
  stn_transfer_inject_point(&g, g.os[0] + (int)(p % g.om[0]), g.os[1] + (int)(p / g.om[0] % g.om[1]), g.os[2] + (int)(p / ((long)g.om[0] * g.om[1])), fine, coarse);
}

__global__ static void rscale_kernel(const StnTransferGrid g, double *__restrict__ coarse)
{
  long p = (long)blockIdx.x * blockDim.x + threadIdx.x;

  if (p >= points(g.om)) return;
  stn_transfer_rscale_point(&g, g.os[0] + (int)(p % g.om[0]), g.os[1] + (int)(p / g.om[0] % g.om[1]), g.os[2] + (int)(p / ((long)g.om[0] * g.om[1])), coarse);
}

extern "C" int StnTransferRScaleCUDA(const StnTransferGrid *g, double *coarse)
{
  long n = points(g->om);

  if (n > 0) rscale_kernel<<<(unsigned)((n + kThreads - 1) / kThreads), kThreads>>>(*g, coarse);
  return (int)cudaGetLastError();
}

extern "C" int StnTransferInterpolateCUDA(const StnTransferGrid *g, int add, const double *coarse, double *fine)
{
  dim3 grid;

  if (points(g->om) == 0) return 0;
  if (!grid_of(g->om, g->dof, &grid)) return (int)cudaErrorInvalidConfiguration;
  switch (g->dof) {
  case 1: interpolate_kernel<1><<<grid, kThreads>>>(*g, add, coarse, fine); break;
  case 2: interpolate_kernel<2><<<grid, kThreads>>>(*g, add, coarse, fine); break;
  case 3: interpolate_kernel<3><<<grid, kThreads>>>(*g, add, coarse, fine); break;
  case 4: interpolate_kernel<4><<<grid, kThreads>>>(*g, add, coarse, fine); break;
  default: interpolate_kernel<0><<<grid, kThreads>>>(*g, add, coarse, fine); break;
  }
  return (int)cudaGetLastError();
}

extern "C" int StnTransferRestrictCUDA(const StnTransferGrid *g, int add, const double *fine, double *coarse)
{
  dim3 grid;

  if (points(g->om) == 0) return 0;
  if (!grid_of(g->om, g->dof, &grid)) return (int)cudaErrorInvalidConfiguration;
  switch (g->dof) {
  case 1: restrict_kernel<1><<<grid, kThreads>>>(*g, add, fine, coarse); break;
  case 2: restrict_kernel<2><<<grid, kThreads>>>(*g, add, fine, coarse); break;
  case 3: restrict_kernel<3><<<grid, kThreads>>>(*g, add, fine, coarse); break;
  case 4: restrict_kernel<4><<<grid, kThreads>>>(*g, add, fine, coarse); break;
  default: restrict_kernel<0><<<grid, kThreads>>>(*g, add, fine, coarse); break;
  }
  return (int)cudaGetLastError();
}

extern "C" int StnTransferInjectCUDA(const StnTransferGrid *g, const double *fine, double *coarse)
{
  long n = points(g->om);

  if (n > 0) inject_kernel<<<(unsigned)((n + kThreads - 1) / kThreads), kThreads>>>(*g, fine, coarse);
  return (int)cudaGetLastError();
}

__global__ static void noise_kernel(double *x, long n, long start)
{
  long i = (long)blockIdx.x * blockDim.x + threadIdx.x;

  if (i < n) x[i] = stn_noise(start + i);
}

extern "C" int StnNoiseCUDA(double *x, long n, long start)
{
  if (n > 0) noise_kernel<<<(unsigned)((n + kThreads - 1) / kThreads), kThreads>>>(x, n, start);
  return (int)cudaGetLastError();
}
