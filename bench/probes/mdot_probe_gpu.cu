/* bench/probes/mdot_probe_gpu.cu: how cuBLAS's dgemv reads 30 vectors, against MDot's kernels (the
   reason for mdot_groups_kernel; results: docs/gpu-runs/mdot.md).
   MDot with 30 vectors at n = 1e7, apart from PETSc, in forms that differ in one thing each from
   the grid-stride form (runtime/stnvec_cuda_impl.h's reduce_kernel with EPT 1, here with 32 slots):
     slots   32 accumulators with the two unused slots reading x again (that form), or 30
             loads with the two slots left at zero;
     load    plain ld.global, __ldg (ld.global.nc), __ldcs (evict-first), or ld.global.nc with
             L1::no_allocate and the L2::256B prefetch hint;
     order   grid-stride (that form's) or one contiguous chunk per block;
     layout  the 31 vectors in one allocation (x after the 30, as cuBLAS reads them) or each in
             its own cudaMalloc, as PETSc's VecDuplicateVecs gives them;
   each over threads per block and blocks per SM, against cublasDgemv (T, the n x 30 matrix) in
   the same process. The reductions end as the runtime's do (block partials, the last block folds
   them) but write to device memory, with no host wait. Times: cudaEvent over back-to-back
   launches, the median of 5 batches; TB/s counts 31 x 8n bytes.

     nvcc -O3 -arch=sm_90 -std=c++17 -Iruntime bench/probes/mdot_probe_gpu.cu -o mdot_probe -lcublas
     ./mdot_probe          the timing table (about 20 s; 2.5 GB of device memory twice)
     ./mdot_probe once     each form once at its default shape, for ncu */
#include "median_us.h"
#include "stnreduce.h"
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>
using namespace stn_reduce;

static double *partials, *out; static unsigned *ticket; static int sms;
struct Ptrs { const double *y[32]; };

enum Load { kPlain, kNC, kCS, kPF };

template <int L>
__device__ __forceinline__ double load(const double *p)
{
  if (L == kPlain) return *p;
  if (L == kNC) return __ldg(p);
  if (L == kCS) return __ldcs(p);
  double v;
  asm volatile("ld.global.nc.L1::no_allocate.L2::256B.f64 %0, [%1];" : "=d"(v) : "l"(p));
  return v;
}

/* The runtime's end of a reduction, once every block has written its partials: the last block to
   finish folds the nchunks x 32 of them into out (device memory here, no host flag). */
__device__ void last_block_folds(const double *partials, long nchunks, unsigned *ticket, double *out, double (*wp)[32])
{
  __shared__ bool last;
  if (threadIdx.x == 0) {
    __threadfence();
    last = atomicInc(ticket, gridDim.x - 1) == gridDim.x - 1;
  }
  __syncthreads();
  if (!last) return;
  const double t = fold_partials<Sum, 32>(partials, nchunks, wp);
  if (threadIdx.x < 32) out[threadIdx.x] = t;
}

/* NL vectors loaded (30, or 32 with the last two x again); 32 accumulators either way. CHUNK: each
   block takes a contiguous range instead of the grid-wide stride. */
template <int NL, int L, bool CHUNK>
__global__ void __launch_bounds__(512) mdot(const double *x, Ptrs p, long n, double *partials, unsigned *ticket, double *out)
{
  __shared__ double warp_part[32][32];
  double acc[32];
#pragma unroll
  for (int k = 0; k < 32; k++) acc[k] = 0.0;
  long begin, end, stride;
  if (CHUNK) {
    const long len = (n + gridDim.x - 1) / gridDim.x;
    begin = (long)blockIdx.x * len + threadIdx.x; end = min(n, (long)(blockIdx.x + 1) * len); stride = blockDim.x;
  } else {
    begin = (long)blockIdx.x * blockDim.x + threadIdx.x; end = n; stride = (long)gridDim.x * blockDim.x;
  }
  for (long i = begin; i < end; i += stride) {
    const double xi = load<L>(x + i);
#pragma unroll
    for (int k = 0; k < NL; k++) acc[k] = fma(xi, load<L>(p.y[k] + i), acc[k]);
  }
  block_partials<Sum, 32>(acc, warp_part, partials);
  last_block_folds(partials, gridDim.x, ticket, out, warp_part);
}

/* cuBLAS's way (its gemv T kernel at this shape: 132 blocks of 8 warps, 166 registers, a split-K
   sum after it): a block takes NC of the vectors (group g) over one contiguous chunk of the rows,
   so an SM reads NC + 1 streams instead of 31; x is read 32 / NC times, from L2 after the first,
   the blocks of a chunk being neighbours. EPT elements per thread and step, all loads in flight.
   The partials are laid out as the 32-slot kernels' (chunk by chunk), slots 30-31 zero. */
template <int NC, int EPT>
__global__ void __launch_bounds__(256) mdot_cols(const double *x, Ptrs p, long n, double *partials, unsigned *ticket, double *out)
{
  constexpr int G = 32 / NC;
  __shared__ double warp_part[32][NC];
  __shared__ double wp32[32][32];
  const int  g = blockIdx.x % G, nchunks = gridDim.x / G;
  const long chunk = blockIdx.x / G, len = ((n + nchunks - 1) / nchunks + 255) / 256 * 256;
  const long end = min(n, (chunk + 1) * len);
  double acc[NC];
#pragma unroll
  for (int k = 0; k < NC; k++) acc[k] = 0.0;
  const int nk = min(NC, 30 - g * NC);
  for (long base = chunk * len + threadIdx.x; base < end; base += (long)blockDim.x * EPT) {
    double xe[EPT], ye[NC][EPT];
#pragma unroll
    for (int e = 0; e < EPT; e++) { const long i = base + (long)e * blockDim.x; xe[e] = i < end ? x[i] : 0.0; }
#pragma unroll
    for (int k = 0; k < NC; k++)
#pragma unroll
      for (int e = 0; e < EPT; e++) { const long i = base + (long)e * blockDim.x; ye[k][e] = (k < nk && i < end) ? p.y[g * NC + k][i] : 0.0; }
#pragma unroll
    for (int e = 0; e < EPT; e++)
#pragma unroll
      for (int k = 0; k < NC; k++) acc[k] = fma(xe[e], ye[k][e], acc[k]);
  }
  /* block_partials writes partials[blockIdx.x * NC + k]: shift the base so that this block's land
     at chunk * 32 + g * NC + k. */
  block_partials<Sum, NC>(acc, warp_part, partials + (chunk * 32 + g * NC) - (long)blockIdx.x * NC);
  last_block_folds(partials, nchunks, ticket, out, wp32);
}

typedef void (*Kernel)(const double *, Ptrs, long, double *, unsigned *, double *);
struct Form { const char *name; Kernel k; };
#define FORM(NL, L, C) {#NL " " #L " " #C, mdot<NL, L, C>}
static const Form forms[] = {
  FORM(32, kPlain, false), FORM(30, kPlain, false), FORM(30, kNC, false), FORM(30, kCS, false), FORM(30, kPF, false),
  FORM(32, kPlain, true),  FORM(30, kPlain, true),  FORM(30, kCS, true),  FORM(30, kPF, true),
};

int main(int argc, char **argv)
{
  const bool once = argc > 1 && !strcmp(argv[1], "once");
  const long n = 10000000;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  cudaMalloc(&partials, 32L * 32 * sms * 8); cudaMalloc(&out, 32 * 8); cudaMalloc(&ticket, 4); cudaMemset(ticket, 0, 4);
  cublasHandle_t h; cublasCreate(&h); cublasSetPointerMode(h, CUBLAS_POINTER_MODE_DEVICE);
  double *one, *zero, *res; cudaMalloc(&one, 8); cudaMalloc(&zero, 8); cudaMalloc(&res, 32 * 8);
  const double o = 1, z = 0; cudaMemcpy(one, &o, 8, cudaMemcpyHostToDevice); cudaMemcpy(zero, &z, 8, cudaMemcpyHostToDevice);

  /* Layout 0: one allocation, vector k at V + k n, x at V + 30 n. Layout 1: 31 allocations. */
  std::vector<double> hv(n);
  double *V; cudaMalloc(&V, 31L * n * 8);
  double *sep[31];
  for (int k = 0; k < 31; k++) {
    for (long i = 0; i < n; i++) hv[i] = 1.0 / (1 + (i * 7 + k) % 13);
    cudaMalloc(&sep[k], n * 8);
    cudaMemcpy(V + k * n, hv.data(), n * 8, cudaMemcpyHostToDevice);
    cudaMemcpy(sep[k], hv.data(), n * 8, cudaMemcpyHostToDevice);
  }
  const double bytes = 31.0 * n * 8;
  const int reps = 20;
  double ref[32];
  cublasDgemv(h, CUBLAS_OP_T, n, 30, one, V, n, V + 30 * n, 1, zero, res, 1);
  cudaMemcpy(ref, res, 30 * 8, cudaMemcpyDeviceToHost);
  auto rel_err = [&] { /* the last launch's results against dgemv's */
    double got[32], err = 0;
    cudaMemcpy(got, out, 32 * 8, cudaMemcpyDeviceToHost);
    for (int k = 0; k < 30; k++) err = std::max(err, fabs(got[k] - ref[k]) / fabs(ref[k]));
    return err;
  };
  Ptrs one_p; /* layout 0's pointers; the unused slots 30 and 31 are x */
  for (int k = 0; k < 32; k++) one_p.y[k] = V + (k < 30 ? k : 30) * n;
  const double *one_x = V + 30 * n;
  if (once) { /* each form once, for ncu */
    for (const Form &f : forms) f.k<<<sms, 512>>>(one_x, one_p, n, partials, ticket, out);
    mdot_cols<8, 2><<<33 * 4, 256>>>(one_x, one_p, n, partials, ticket, out);
    cublasDgemv(h, CUBLAS_OP_T, n, 30, one, V, n, one_x, 1, zero, res, 1);
    cudaDeviceSynchronize();
    printf("once: %s\n", cudaGetErrorString(cudaGetLastError()));
    return 0;
  }
  const struct { const char *name; Kernel k; int groups; } cols[] = {
    {"cols NC8 EPT1", mdot_cols<8, 1>, 4}, {"cols NC8 EPT2", mdot_cols<8, 2>, 4}, {"cols NC8 EPT4", mdot_cols<8, 4>, 4},
    {"cols NC16 EPT1", mdot_cols<16, 1>, 2}, {"cols NC16 EPT2", mdot_cols<16, 2>, 2}, {"cols NC4 EPT4", mdot_cols<4, 4>, 8}};
  for (auto &c : cols) {
    float best = 1e9; int bt = 0, bc = 0;
    printf("%-28s one  ", c.name);
    for (int t : {128, 256}) for (int bps : {1, 2, 4, 8}) { /* blocks per SM */
      const int nchunks = bps * sms / c.groups;
      const float us = median_us([&] { c.k<<<nchunks * c.groups, t>>>(one_x, one_p, n, partials, ticket, out); }, reps);
      printf(" %d/%d %.1f", t, nchunks, us);
      if (us < best) best = us, bt = t, bc = nchunks;
    }
    printf(" | best %.1f us (%d threads, %d chunks) %.2f TB/s, rel.err %.1e\n", best, bt, bc, bytes / best / 1e6, rel_err());
  }
  const float gemv = median_us([&] { cublasDgemv(h, CUBLAS_OP_T, n, 30, one, V, n, one_x, 1, zero, res, 1); }, reps);
  printf("cublas dgemv: %.1f us %.2f TB/s\n", gemv, bytes / gemv / 1e6);
  for (int layout = 0; layout < 2; layout++)
    for (const Form &f : forms) {
      Ptrs p; for (int k = 0; k < 32; k++) p.y[k] = layout ? sep[k < 30 ? k : 30] : V + (k < 30 ? k : 30) * n;
      const double *x = layout ? sep[30] : V + 30 * n;
      float best = 1e9; int bt = 0, bb = 0;
      printf("%-28s %-5s", f.name, layout ? "sep" : "one");
      for (int t : {256, 512}) for (int bps : {1, 2, 4}) {
        if (t * bps > 2048) continue;
        const float us = median_us([&] { f.k<<<bps * sms, t>>>(x, p, n, partials, ticket, out); }, reps);
        printf(" %d/%d %.1f", t, bps, us);
        if (us < best) best = us, bt = t, bb = bps;
      }
      printf(" | best %.1f us (%d,%d) %.2f TB/s %.3fx dgemv, rel.err %.1e\n", best, bt, bb, bytes / best / 1e6, gemv / best, rel_err());
    }
  printf("cublas dgemv again: %.1f us\n", median_us([&] { cublasDgemv(h, CUBLAS_OP_T, n, 30, one, V, n, one_x, 1, zero, res, 1); }, reps));
  return 0;
}
