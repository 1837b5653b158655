/* stnvec_cuda_impl.h: internal to stnvec_cuda.cu and stngmres_cuda.cu, the two files that run
   reductions on the one scratch (defined in stnvec_cuda.cu): that scratch, the helpers that launch
   and wait on it, and the kernel templates both files instantiate. C++ and CUDA only. */
#ifndef STNVEC_CUDA_IMPL_H
#define STNVEC_CUDA_IMPL_H

#include "stncuda.h"       /* StnCUDARecordError */
#include "stngmres_cuda.h" /* StnGMRESReport */
#include "stnreduce.h"
#include "stnvec_cuda.h"

#include <cuda_runtime.h>

#include <type_traits>

/* Host state and helpers: one definition each, in stnvec_cuda.cu. */
namespace stn_vec {

inline int check(cudaError_t err, const char *what)
{
  return err == cudaSuccess ? 0 : StnCUDARecordError((int)err, what);
}

constexpr int kMaxBps = 32; /* blocks per SM a reduction may have: the scratch holds their partials */

/* The device's SM count and the reductions' scratch: per-block partials, the ticket, the
   mapped host results and the flag that says they are there. Set up on first use, for the
   device current then. */
struct Scratch {
  int       sms, cooperative; /* cooperative: the device takes cooperative launches (the fused GMRES step) */
  double   *partials;
  unsigned *ticket;
  double   *host_out, *dev_out;
  unsigned *host_done, *dev_done, seq;
  StnGMRESReport *host_report, *dev_report; /* one per step of a cycle: steps may be queued ahead */
};
extern Scratch scratch;

/* Sets the scratch up unless it is: 0 or a cudaError_t value. */
int scratch_ready();

/* Waits until the reduction numbered seq has written its results: spins on the mapped flag,
   which returns a few microseconds sooner than cudaStreamSynchronize's wake-up. Later
   reductions may be queued behind it (GMRES steps ahead of the host), so the flag may already
   be past seq: numbers are compared modulo 2^32. Should the
   kernel fail instead, the stream goes idle without the flag: every few thousand spins the
   stream is asked, and an idle stream without the flag is an error (never a hang). */
int wait_result(unsigned seq);

/* The blocks of shape s over n entries: one per threads * ept, at most bps per SM (a reduction's
   bps 0: kMaxBps, what the scratch holds). */
unsigned grid_for(StnLaunch s, long n, bool reduction);

/* Starts z = y[0..nv-1]^T x for nv <= STN_VEC_MAX_MULTI into dev_out (device or mapped memory),
   all STN_VEC_MAX_MULTI entries up to the kernel's slots written (zeros past nv): up to kGroup
   vectors reduce_kernel's grid-wide stride, more in groups. n must be at least 1. */
int start_mdot(StnLaunch s, const double *x, int nv, const double *const y[], long n, double *dev_out, unsigned *seq);

} // namespace stn_vec

/* The kernels and their launchers: templates that each file instantiates for its own operations
   (without relocatable device code a kernel lives in the file that launches it), in the anonymous
   namespace as each file's own kernels are. */
namespace {

/* The end of a reduction kernel, after every block has written its NV partials (block_partials):
   the last block to finish folds the nparts partials of each result and writes all NV results
   to out, zeros past o.count() (MDot's unused slots), then o's epilogue, then raises the flag.
   warp_part: the block's shared scratch. All threads of every block call it. */
template <class Fold, int NV, class Op>
__device__ void reduction_end(const Op &o, const double *partials, long nparts, unsigned *ticket, double *out,
                              volatile unsigned *done, unsigned seq, double (*warp_part)[NV])
{
  __shared__ bool last;
  if (threadIdx.x == 0) {
    __threadfence(); /* the partials are visible before the ticket is */
    last = atomicInc(ticket, gridDim.x - 1) == gridDim.x - 1;
  }
  __syncthreads();
  if (!last) return;
  {
    const double t = stn_reduce::fold_partials<Fold, NV>(partials, nparts, warp_part);
    if (threadIdx.x < NV) {
      const int k = threadIdx.x;
      out[k]      = k < o.count() ? o.finish(k, t) : 0.0;
      __threadfence_system(); /* the result reaches the host before the flag does */
    }
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    o.epilogue(out); /* GMRES: the Hessenberg update (stngmres_cuda.cu) */
    __threadfence_system();
    *done = seq; /* the host waits for this (wait_result) */
  }
}

/* __launch_bounds__: the register budget of the largest block the kernel runs with, so that
   every shape launches. */
template <class Op, int EPT>
__global__ void __launch_bounds__(Op::max_threads) reduce_kernel(Op op, long n, double *partials, unsigned *ticket, double *out, volatile unsigned *done, unsigned seq)
{
  constexpr int NV = Op::nvals;
  using Fold       = typename Op::Fold;
  __shared__ double warp_part[32][NV];
  double            acc[NV];
  const Op         &o = op; /* in the parameter space: its pointers come from the constant bank */

#pragma unroll
  for (int k = 0; k < NV; k++) acc[k] = 0.0;
  const long step = (long)gridDim.x * blockDim.x * EPT;
  for (long base = (long)blockIdx.x * blockDim.x * EPT + threadIdx.x; base < n; base += step) {
#pragma unroll
    for (int e = 0; e < EPT; e++) {
      const long i = base + (long)e * blockDim.x;
      if (i < n) o.add(i, acc);
    }
  }
  stn_reduce::block_partials<Fold, NV>(acc, warp_part, partials);
  reduction_end<Fold, NV>(o, partials, gridDim.x, ticket, out, done, seq, warp_part);
}

template <class Op, int EPT>
__global__ void __launch_bounds__(Op::max_threads) map_kernel(Op op, long n)
{
  const long step = (long)gridDim.x * blockDim.x * EPT;
  for (long base = (long)blockIdx.x * blockDim.x * EPT + threadIdx.x; base < n; base += step) {
#pragma unroll
    for (int e = 0; e < EPT; e++) {
      const long i = base + (long)e * blockDim.x;
      if (i < n) op(i);
    }
  }
}

template <class Op>
int launch_map(StnLaunch s, long n, const Op &op) /* s by value: clamped to what Op allows */
{
  if (n <= 0) return 0;
  if (s.threads > Op::max_threads) s.threads = Op::max_threads;
  if (s.ept > Op::max_ept) s.ept = Op::max_ept;
  constexpr int e2 = Op::max_ept < 2 ? Op::max_ept : 2, e4 = Op::max_ept < 4 ? Op::max_ept : 4;
  const unsigned g = stn_vec::grid_for(s, n, false);
  switch (s.ept) {
  case 1: map_kernel<Op, 1><<<g, s.threads>>>(op, n); break;
  case 2: map_kernel<Op, e2><<<g, s.threads>>>(op, n); break;
  default: map_kernel<Op, e4><<<g, s.threads>>>(op, n); break;
  }
  return stn_vec::check(cudaGetLastError(), "a vector update kernel");
}

/* Starts a reduction whose results go to dev_out (device or mapped memory); *seq: its number,
   for wait_result. n must be at least 1. */
template <class Op>
int start_reduce(StnLaunch s, long n, const Op &op, double *dev_out, unsigned *seq_out)
{
  if (s.threads > Op::max_threads) s.threads = Op::max_threads;
  if (s.ept > Op::max_ept) s.ept = Op::max_ept;
  constexpr int  e2  = Op::max_ept < 2 ? Op::max_ept : 2, e4 = Op::max_ept < 4 ? Op::max_ept : 4;
  const unsigned g   = stn_vec::grid_for(s, n, true);
  const unsigned seq = ++stn_vec::scratch.seq;
  switch (s.ept) {
  case 1: reduce_kernel<Op, 1><<<g, s.threads>>>(op, n, stn_vec::scratch.partials, stn_vec::scratch.ticket, dev_out, stn_vec::scratch.dev_done, seq); break;
  case 2: reduce_kernel<Op, e2><<<g, s.threads>>>(op, n, stn_vec::scratch.partials, stn_vec::scratch.ticket, dev_out, stn_vec::scratch.dev_done, seq); break;
  default: reduce_kernel<Op, e4><<<g, s.threads>>>(op, n, stn_vec::scratch.partials, stn_vec::scratch.ticket, dev_out, stn_vec::scratch.dev_done, seq); break;
  }
  *seq_out = seq;
  return stn_vec::check(cudaGetLastError(), "a vector reduction kernel");
}

/* The norms of StnVecNorm, type: 0 one-norm, 1 two-norm, 2 both, 3 max-norm (stnvec_cuda.h);
   here because the GMRES start (stngmres_cuda.cu) takes the two-norm VecNorm takes. */
template <int TYPE>
struct NormOp {
  using Fold = typename std::conditional<TYPE == 3, stn_reduce::Max, stn_reduce::Sum>::type;
  static constexpr int nvals = TYPE == 2 ? 2 : 1, max_threads = 1024, max_ept = 4;
  const double *x;
  __device__ int    count() const { return nvals; }
  __device__ void   add(long i, double *acc) const
  {
    const double v = x[i];
    if (TYPE == 0) acc[0] += fabs(v);
    if (TYPE == 1) acc[0] = fma(v, v, acc[0]);
    if (TYPE == 2) acc[0] += fabs(v), acc[1] = fma(v, v, acc[1]);
    if (TYPE == 3) acc[0] = stn_reduce::Max::combine(acc[0], fabs(v));
  }
  __device__ double finish(int k, double v) const { return (TYPE == 1 || (TYPE == 2 && k == 1)) ? sqrt(v) : v; }
  __device__ void   epilogue(const double *) const {}
};

} // namespace

#endif
