/* stnmg_cuda.cu: the transfers between grids and the estimates' start vector (stnmg_cuda.h) on
   the device, one thread per output point, through the point functions the host loops use. */
#include <cuda_runtime.h>

#include "stnmg_cuda.h"

enum { kThreads = 256 };

static long points(const int n[3]) { return (long)n[0] * n[1] * n[2]; }

__global__ static void interpolate_kernel(const StnTransferGrid g, int add, const double *__restrict__ coarse, double *__restrict__ fine)
{
  long p = (long)blockIdx.x * blockDim.x + threadIdx.x;

  if (p >= (long)g.nf[0] * g.nf[1] * g.nf[2]) return;
  stn_transfer_interpolate_point(&g, add, (int)(p % g.nf[0]), (int)(p / g.nf[0] % g.nf[1]), (int)(p / ((long)g.nf[0] * g.nf[1])), coarse, fine);
}

__global__ static void restrict_kernel(const StnTransferGrid g, int add, const double *__restrict__ fine, double *__restrict__ coarse)
{
  long p = (long)blockIdx.x * blockDim.x + threadIdx.x;

  if (p >= (long)g.nc[0] * g.nc[1] * g.nc[2]) return;
  stn_transfer_restrict_point(&g, add, (int)(p % g.nc[0]), (int)(p / g.nc[0] % g.nc[1]), (int)(p / ((long)g.nc[0] * g.nc[1])), fine, coarse);
}

__global__ static void inject_kernel(const StnTransferGrid g, const double *__restrict__ fine, double *__restrict__ coarse)
{
  long p = (long)blockIdx.x * blockDim.x + threadIdx.x;

  if (p >= (long)g.nc[0] * g.nc[1] * g.nc[2]) return;
  stn_transfer_inject_point(&g, (int)(p % g.nc[0]), (int)(p / g.nc[0] % g.nc[1]), (int)(p / ((long)g.nc[0] * g.nc[1])), fine, coarse);
}

__global__ static void rscale_kernel(const StnTransferGrid g, double *__restrict__ coarse)
{
  long p = (long)blockIdx.x * blockDim.x + threadIdx.x;

  if (p >= (long)g.nc[0] * g.nc[1] * g.nc[2]) return;
  stn_transfer_rscale_point(&g, (int)(p % g.nc[0]), (int)(p / g.nc[0] % g.nc[1]), (int)(p / ((long)g.nc[0] * g.nc[1])), coarse);
}

extern "C" int StnTransferRScaleCUDA(const StnTransferGrid *g, double *coarse)
{
  long n = points(g->nc);

  if (n > 0) rscale_kernel<<<(unsigned)((n + kThreads - 1) / kThreads), kThreads>>>(*g, coarse);
  return (int)cudaGetLastError();
}

extern "C" int StnTransferInterpolateCUDA(const StnTransferGrid *g, int add, const double *coarse, double *fine)
{
  long n = points(g->nf);

  if (n > 0) interpolate_kernel<<<(unsigned)((n + kThreads - 1) / kThreads), kThreads>>>(*g, add, coarse, fine);
  return (int)cudaGetLastError();
}

extern "C" int StnTransferRestrictCUDA(const StnTransferGrid *g, int add, const double *fine, double *coarse)
{
  long n = points(g->nc);

  if (n > 0) restrict_kernel<<<(unsigned)((n + kThreads - 1) / kThreads), kThreads>>>(*g, add, fine, coarse);
  return (int)cudaGetLastError();
}

extern "C" int StnTransferInjectCUDA(const StnTransferGrid *g, const double *fine, double *coarse)
{
  long n = points(g->nc);

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
