/* bench/probes/vec_loads_gpu.cu: how the vector kernels load, measured apart from PETSc.
   MDot with 30 vectors (32 slots, the unused two read x again, as runtime/stnvec_cuda.cu does),
   Dot and AXPY, each in three forms against cuBLAS (dgemv T on the same n x 30 matrix, ddot,
   daxpy) in the same process:
     vw1   one 8-byte load per vector and element, a grid-stride loop (the runtime's form);
     vw2   16-byte loads (double2), two elements per thread and step: the issue's "vector width";
     rows  (mdot_rows) x's R elements of the thread in registers, then each vector in turn (R loads
           in flight, U vectors at once): the same sums in the same order as EPT = R.
   Each over threads per block and blocks per SM; the best of each form is printed as SUMMARY.
   The reductions end as the runtime's do (block partials, the last block folds them) but write
   to device memory, with no host wait. Times: cudaEvent over back-to-back launches, the median of
   5 batches. Results and the decision: docs/gpu-runs/vec_loads.md.

     nvcc -O3 -arch=sm_90 -std=c++17 -Iruntime bench/probes/vec_loads_gpu.cu -o vec_loads -lcublas
     ./vec_loads        (on the GPU; about 35 s; 2.5 GB of device memory) */
#include "median_us.h"
#include "stnreduce.h"
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cstdio>
#include <vector>
#include <algorithm>
using namespace stn_reduce;

static double *partials, *out; static unsigned *ticket; static int sms;
template <int NV> struct Ptrs { const double *y[NV]; };

/* The runtime's end of a reduction: the block's partial sums, then the last block to finish folds
   them into out. */
template <int NV>
__device__ void finish(const double *acc, double *partials, unsigned *ticket, double *out)
{
  __shared__ double warp_part[32][NV];
  __shared__ bool   last;
  block_partials<Sum, NV>(acc, warp_part, partials);
  if (threadIdx.x == 0) {
    __threadfence();
    last = atomicInc(ticket, gridDim.x - 1) == gridDim.x - 1;
  }
  __syncthreads();
  if (!last) return;
  const double t = fold_partials<Sum, NV>(partials, gridDim.x, warp_part);
  if (threadIdx.x < NV) out[threadIdx.x] = t;
}

template <int NV, int VW>
__global__ void __launch_bounds__(512) mdot(const double *x, Ptrs<NV> p, int nv, long n, double *partials, unsigned *ticket, double *out)
{
  double acc[NV];
  for (int k = 0; k < NV; k++) acc[k] = 0.0;
  const long stride = (long)gridDim.x * blockDim.x;
  if (VW == 1) {
    for (long i = (long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
      const double xi = x[i];
#pragma unroll
      for (int k = 0; k < NV; k++) acc[k] = fma(xi, p.y[k][i], acc[k]);
    }
  } else {
    const long n2 = n / 2;
    for (long i = (long)blockIdx.x * blockDim.x + threadIdx.x; i < n2; i += stride) {
      const double2 xi = reinterpret_cast<const double2 *>(x)[i];
#pragma unroll
      for (int k = 0; k < NV; k++) {
        const double2 yk = reinterpret_cast<const double2 *>(p.y[k])[i];
        acc[k] = fma(xi.x, yk.x, acc[k]);
        acc[k] = fma(xi.y, yk.y, acc[k]);
      }
    }
    if (n & 1 && blockIdx.x == 0 && threadIdx.x == 0)
      for (int k = 0; k < NV; k++) acc[k] = fma(x[n - 1], p.y[k][n - 1], acc[k]);
  }
  finish<NV>(acc, partials, ticket, out);
}


/* Loop interchange: the thread's R elements of x in registers, then each vector in turn (R loads
   in flight, U vectors at once): acc[k] gets the same fmas in the same order as EPT = R. */
template <int NV, int R, int U>
__global__ void __launch_bounds__(256) mdot_rows(const double *x, Ptrs<NV> p, int nv, long n, double *partials, unsigned *ticket, double *out)
{
  double acc[NV];
  for (int k = 0; k < NV; k++) acc[k] = 0.0;
  const long step = (long)gridDim.x * blockDim.x * R;
  for (long base = (long)blockIdx.x * blockDim.x * R + threadIdx.x; base < n; base += step) {
    double xr[R];
#pragma unroll
    for (int r = 0; r < R; r++) { const long i = base + (long)r * blockDim.x; xr[r] = i < n ? x[i] : 0.0; }
#pragma unroll
    for (int k0 = 0; k0 < NV; k0 += U) {
      double yv[U][R];
#pragma unroll
      for (int u = 0; u < U; u++)
#pragma unroll
        for (int r = 0; r < R; r++) { const long i = base + (long)r * blockDim.x; yv[u][r] = i < n ? p.y[k0 + u][i] : 0.0; }
#pragma unroll
      for (int u = 0; u < U; u++)
#pragma unroll
        for (int r = 0; r < R; r++) acc[k0 + u] = fma(xr[r], yv[u][r], acc[k0 + u]);
    }
  }
  finish<NV>(acc, partials, ticket, out);
}

template <int NV, int R, int U>
float time_rows(const double *x, Ptrs<NV> p, int nv, long n, int threads, int bps, int reps)
{
  long blocks = bps ? (long)bps * sms : std::min<long>((n / R + threads - 1) / threads, 32L * sms);
  return median_us([&] { mdot_rows<NV, R, U><<<blocks, threads>>>(x, p, nv, n, partials, ticket, out); }, reps);
}

template <int VW>
__global__ void axpy(double *y, const double *x, double a, long n)
{
  const long stride = (long)gridDim.x * blockDim.x;
  if (VW == 1) {
    for (long i = (long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) y[i] = fma(a, x[i], y[i]);
  } else {
    double2 *y2 = reinterpret_cast<double2 *>(y);
    const double2 *x2 = reinterpret_cast<const double2 *>(x);
    for (long i = (long)blockIdx.x * blockDim.x + threadIdx.x; i < n / 2; i += stride) {
      double2 a2 = x2[i], b2 = y2[i];
      b2.x = fma(a, a2.x, b2.x); b2.y = fma(a, a2.y, b2.y);
      y2[i] = b2;
    }
  }
}


template <int NV, int VW>
float time_mdot(const double *x, Ptrs<NV> p, int nv, long n, int threads, int bps, int reps)
{
  long blocks = bps ? (long)bps * sms : std::min<long>((n / VW + threads - 1) / threads, 32L * sms);
  return median_us([&] { mdot<NV, VW><<<blocks, threads>>>(x, p, nv, n, partials, ticket, out); }, reps);
}
template <int VW>
float time_axpy(double *y, const double *x, long n, int threads, int bps, int reps)
{
  long blocks = bps ? (long)bps * sms : (n / VW + threads - 1) / threads;
  return median_us([&] { axpy<VW><<<blocks, threads>>>(y, x, 1e-9, n); }, reps);
}

int main()
{
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  cudaMalloc(&partials, 32L * 32 * sms * 8); cudaMalloc(&out, 32 * 8); cudaMalloc(&ticket, 4); cudaMemset(ticket, 0, 4);
  cublasHandle_t h; cublasCreate(&h);
  const long nmax = 10000000;
  double *V; cudaMalloc(&V, 31L * nmax * 8);
  std::vector<double> hv(nmax);
  for (int k = 0; k < 31; k++) { for (long i = 0; i < nmax; i++) hv[i] = 1.0 / (1 + (i * 7 + k) % 13); cudaMemcpy(V + k * nmax, hv.data(), nmax * 8, cudaMemcpyHostToDevice); }
  const int T[] = {256, 512}, BPS[] = {0, 1, 2, 3, 4, 8};
  for (long n : {1000000L, 10000000L}) {
    // basis: 30 vectors at V + k*n (contiguous n x 30 for cuBLAS), x at V + 30 n
    Ptrs<32> p; for (int k = 0; k < 32; k++) p.y[k] = V + (k < 30 ? k : 30) * n;
    const double *x = V + 30L * n;
    int reps = n < 5000000 ? 200 : 40;
    float best[2] = {1e9, 1e9}; int bt[2], bb[2];
    for (int t : T) for (int bps : BPS) {
      float a = time_mdot<32, 1>(x, p, 30, n, t, bps, reps), b = time_mdot<32, 2>(x, p, 30, n, t, bps, reps);
      printf("mdot n=%ld threads=%d bps=%d vw1 %.1f us vw2 %.1f us\n", n, t, bps, a, b);
      if (a < best[0]) best[0] = a, bt[0] = t, bb[0] = bps;
      if (b < best[1]) best[1] = b, bt[1] = t, bb[1] = bps;
    }

    {
      float rb = 1e9; const char *rn = ""; int rt = 0, rbp = 0;
      for (int t : {128, 256}) for (int bps : {0, 1, 2, 3, 4, 6, 8}) {
        float v[4] = {time_rows<32, 2, 1>(x, p, 30, n, t, bps, reps), time_rows<32, 4, 1>(x, p, 30, n, t, bps, reps), time_rows<32, 4, 2>(x, p, 30, n, t, bps, reps), time_rows<32, 8, 1>(x, p, 30, n, t, bps, reps)};
        const char *nm[4] = {"R2U1", "R4U1", "R4U2", "R8U1"};
        printf("rows n=%ld threads=%d bps=%d R2U1 %.1f R4U1 %.1f R4U2 %.1f R8U1 %.1f\n", n, t, bps, v[0], v[1], v[2], v[3]);
        for (int q = 0; q < 4; q++) if (v[q] < rb) rb = v[q], rn = nm[q], rt = t, rbp = bps;
      }
      printf("SUMMARY mdot30 rows n=%ld: %.1f us %s (%d,%d) %.2f TB/s\n", n, rb, rn, rt, rbp, 31.0 * n * 8 / rb / 1e6);
    }
    double *res; cudaMalloc(&res, 30 * 8); cublasSetPointerMode(h, CUBLAS_POINTER_MODE_DEVICE);
    double *one, *zero; cudaMalloc(&one, 8); cudaMalloc(&zero, 8); double o = 1, z = 0; cudaMemcpy(one, &o, 8, cudaMemcpyHostToDevice); cudaMemcpy(zero, &z, 8, cudaMemcpyHostToDevice);
    const float gemv = median_us([&] { cublasDgemv(h, CUBLAS_OP_T, n, 30, one, V, n, x, 1, zero, res, 1); }, reps);
    double bytes = 31.0 * n * 8;
    printf("SUMMARY mdot30 n=%ld: vw1 %.1f us (%d,%d) %.2f TB/s | vw2 %.1f us (%d,%d) %.2f TB/s | cublas dgemv %.1f us %.2f TB/s\n", n, best[0], bt[0], bb[0], bytes / best[0] / 1e6, best[1], bt[1], bb[1], bytes / best[1] / 1e6, gemv, bytes / gemv / 1e6);
  }
  cudaFree(V);
  // Dot and AXPY at 1e8 (and 1e7)
  for (long n : {10000000L, 100000000L}) {
    double *x, *y; cudaMalloc(&x, n * 8); cudaMalloc(&y, n * 8); cudaMemset(x, 0, n * 8); cudaMemset(y, 0, n * 8);
    Ptrs<1> p; p.y[0] = y;
    int reps = n < 50000000 ? 100 : 20;
    float best[2] = {1e9, 1e9}; float bax[2] = {1e9, 1e9};
    for (int t : {256, 512}) for (int bps : BPS) {
      float a = time_mdot<1, 1>(x, p, 1, n, t, bps, reps), b = time_mdot<1, 2>(x, p, 1, n, t, bps, reps);
      float c = time_axpy<1>(y, x, n, t, bps, reps), d = time_axpy<2>(y, x, n, t, bps, reps);
      if (t == 256) { float r4 = time_rows<1, 4, 1>(x, p, 1, n, t, bps, reps), r8 = time_rows<1, 8, 1>(x, p, 1, n, t, bps, reps); printf("dot rows n=%ld bps=%d R4 %.1f R8 %.1f\n", n, bps, r4, r8); best[0] = std::min(best[0], std::min(r4, r8)); }
      printf("dot n=%ld threads=%d bps=%d vw1 %.1f vw2 %.1f | axpy vw1 %.1f vw2 %.1f\n", n, t, bps, a, b, c, d);
      best[0] = std::min(best[0], a); best[1] = std::min(best[1], b); bax[0] = std::min(bax[0], c); bax[1] = std::min(bax[1], d);
    }
    double *res; cudaMalloc(&res, 8);
    const double al = 1e-9;
    cublasSetPointerMode(h, CUBLAS_POINTER_MODE_DEVICE);
    const float dot = median_us([&] { cublasDdot(h, n, x, 1, y, 1, res); }, reps);
    cublasSetPointerMode(h, CUBLAS_POINTER_MODE_HOST);
    const float daxpy = median_us([&] { cublasDaxpy(h, n, &al, x, 1, y, 1); }, reps);
    printf("SUMMARY dot n=%ld: vw1 %.1f vw2 %.1f cublas %.1f us (%.2f / %.2f / %.2f TB/s)\n", n, best[0], best[1], dot, 16.0 * n / best[0] / 1e6, 16.0 * n / best[1] / 1e6, 16.0 * n / dot / 1e6);
    printf("SUMMARY axpy n=%ld: vw1 %.1f vw2 %.1f cublas %.1f us (%.2f / %.2f / %.2f TB/s)\n", n, bax[0], bax[1], daxpy, 24.0 * n / bax[0] / 1e6, 24.0 * n / bax[1] / 1e6, 24.0 * n / daxpy / 1e6);
    cudaFree(x); cudaFree(y);
  }
  printf("err %s\n", cudaGetErrorString(cudaGetLastError()));
}
