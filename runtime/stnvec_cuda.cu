/* stnvec_cuda.cu: the Krylov solve's vector kernels on a CUDA device (API: stnvec_cuda.h).

   Two kernel templates do all the work:

   - map_kernel<Op, EPT> applies an element-wise update op(i) to every i < n: an update reads its
     inputs and writes one output, 16 to 32 bytes per element, and is bound by memory bandwidth;
   - reduce_kernel<Op, EPT> accumulates Op::nvals sums (or maxima) at once: MDot's nv dot
     products in one pass over x, both norms of NORM_1_AND_2, dot and norm of DotNorm2.

   Launch shape (StnLaunch, chosen per kernel and size class by the tuner, stntune.c): threads per
   block; EPT elements per thread per step, i, i + blockDim, ..., so that a thread has EPT
   independent loads in flight (the latency a small grid must hide); and either one block per
   threads*EPT elements (bps = 0) or at most bps blocks per SM, each looping over the vector with
   a grid-wide stride (fewer blocks: cheaper reduction tails and launches at small n).

   A reduction ends inside its kernel: each warp folds its lanes with shuffles, warp 0 folds the
   warps, thread 0 writes the block's partial value, and the last block to arrive (an atomic
   ticket that resets itself) folds the partials, in block order, so the result is the same
   from run to run, and writes them into pinned, mapped host memory, then a sequence number into
   a mapped flag the host spins on: one launch and one wait per reduction, no memcpy call. PETSc's own
   MDot launches a kernel per 8 vectors on forked streams, a summing kernel and a copy; its Norm
   calls cuBLAS's nrm2, which scales as it goes so that no square overflows. Ours sums the squares
   directly: it overflows only when entries pass 1e154, and reads x once at full bandwidth.

   Many-vector kernels are instantiated for a number of slots, the smallest at least nv, and
   skip the unused slots without a branch per vector: MAXPBY for 1, 2, 4, 8, 16 and 32 vectors;
   MDot for 1, 2, 4 and 8 in reduce_kernel, and beyond 8 in a kernel of its own
   (mdot_groups_kernel: blocks take 8 vectors each over a contiguous chunk, as cuBLAS's dgemv
   does) with 2 or 4 groups. nv above 32 runs in passes of 32. */
#include "stnvec_cuda.h"

#include "stncuda.h"          /* StnCUDARecordError */
#include "stnvec_cuda_impl.h" /* the scratch and the kernel templates, shared with stngmres_cuda.cu */
#include "stnvec_ref.h"       /* STN_VEC_TEST_VALUE */

#include <cuda_runtime.h>

#include <cstdio>
#include <type_traits>

namespace {

using namespace stn_reduce;
using namespace stn_vec;

/* ---------------------------------------------------------------------------------------------
   Reductions
   --------------------------------------------------------------------------------------------- */

/* max_threads: the largest block a kernel is compiled for (its register budget: 65536 / it per
   thread); a shape asking for more runs with this many. max_ept: the most elements per thread
   worth instantiating (many vectors already keep enough loads in flight). */
template <int NV>
struct MDotOp {
  using Fold = Sum;
  static_assert(NV <= 8, "more vectors: mdot_groups_kernel");
  static constexpr int nvals = NV, max_threads = 1024, max_ept = NV >= 8 ? 1 : 4;
  const double *x;
  const double *y[NV];
  int           nv;
  __device__ int    count() const { return nv; }
  __device__ void   add(long i, double *acc) const
  {
    const double xi = x[i];
#pragma unroll
    for (int k = 0; k < NV; k++) acc[k] = fma(xi, y[k][i], acc[k]); /* slots from nv on read x again: no branch */
  }
  __device__ double finish(int, double v) const { return v; }
  __device__ void   epilogue(const double *) const {}
};

struct DotNorm2Op {
  using Fold = Sum;
  static constexpr int nvals = 2, max_threads = 1024, max_ept = 4;
  const double *s, *t;
  __device__ int    count() const { return 2; }
  __device__ void   add(long i, double *acc) const
  {
    const double ti = t[i];
    acc[0] = fma(s[i], ti, acc[0]);
    acc[1] = fma(ti, ti, acc[1]);
  }
  __device__ double finish(int, double v) const { return v; }
  __device__ void   epilogue(const double *) const {}
};

/* MDot of more than kGroup vectors, the way cuBLAS's dgemv (T) reads an n x 30 matrix: a block
   takes a group of kGroup of the vectors over one contiguous chunk of the entries, so that an SM
   streams kGroup + 1 arrays instead of 31, each in long runs, with EPT entries of each in flight
   per thread. x is read once per group, from L2 after the first, because the G blocks of a chunk
   are neighbours in launch order. bench/probes/mdot_probe_gpu.cu (docs/gpu-runs/mdot.md): 30 vectors
   at n = 1e7 at 4.47 TB/s, level with cuBLAS's dgemv, where reduce_kernel's grid-wide stride
   over all 32 slots reaches about 4.1.
   Block b is group b % G of chunk b / G, so block_partials' partials[b * kGroup + k] is entry
   k + kGroup (b % G) of chunk b / G's G * kGroup, the layout fold_partials reads. */
constexpr int kGroup = 8;

template <int G>
struct MDotGroups {
  static constexpr int max_threads = 512; /* EPT 4: 100 registers */
  const double *x;
  const double *y[G * kGroup];
  int           nv;
  long          chunk; /* entries per chunk: a multiple of 32, so every warp's loads stay aligned */
  __device__ int    count() const { return nv; }
  __device__ double finish(int, double v) const { return v; }
  __device__ void   epilogue(const double *) const {}
};

template <int G, int EPT>
__global__ void __launch_bounds__(MDotGroups<G>::max_threads) mdot_groups_kernel(MDotGroups<G> a, long n, double *partials, unsigned *ticket, double *out, volatile unsigned *done, unsigned seq)
{
  constexpr int NT = G * kGroup;
  __shared__ double warp_part[32][NT]; /* the block's own kGroup sums use its start, the last fold all */
  const int  g = blockIdx.x % G, nk = min(kGroup, a.nv - g * kGroup); /* nk <= 0: an empty group (nv 17-24) */
  const long first = (long)(blockIdx.x / G) * a.chunk, end = min(n, first + a.chunk);
  double     acc[kGroup];
  const double *y[kGroup];
#pragma unroll
  for (int k = 0; k < kGroup; k++) acc[k] = 0.0, y[k] = a.y[g * kGroup + k];
  if (nk > 0)
    for (long base = first + threadIdx.x; base < end; base += (long)blockDim.x * EPT) {
      double xe[EPT], ye[kGroup][EPT];
#pragma unroll
      for (int e = 0; e < EPT; e++) {
        const long i = base + (long)e * blockDim.x;
        xe[e]        = i < end ? a.x[i] : 0.0;
      }
#pragma unroll
      for (int k = 0; k < kGroup; k++)
#pragma unroll
        for (int e = 0; e < EPT; e++) {
          const long i = base + (long)e * blockDim.x;
          ye[k][e]     = k < nk && i < end ? y[k][i] : 0.0; /* every load before the first fma */
        }
#pragma unroll
      for (int e = 0; e < EPT; e++)
#pragma unroll
        for (int k = 0; k < kGroup; k++) acc[k] = fma(xe[e], ye[k][e], acc[k]);
    }
  block_partials<Sum, kGroup>(acc, reinterpret_cast<double (*)[kGroup]>(&warp_part[0][0]), partials);
  reduction_end<Sum, NT>(a, partials, gridDim.x / G, ticket, out, done, seq, warp_part);
}

/* ---------------------------------------------------------------------------------------------
   Element-wise updates
   --------------------------------------------------------------------------------------------- */

struct AXPYOp {
  static constexpr int max_threads = 1024, max_ept = 4;
  double *y; const double *x; double a;
  __device__ void operator()(long i) const { y[i] = fma(a, x[i], y[i]); }
};
struct AYPXOp {
  static constexpr int max_threads = 1024, max_ept = 4;
  double *y; const double *x; double a;
  __device__ void operator()(long i) const { y[i] = fma(a, y[i], x[i]); }
};
struct AXPBYOp { /* b = 0: y is not read (it may hold anything) */
  static constexpr int max_threads = 1024, max_ept = 4;
  double *y; const double *x; double a, b;
  __device__ void operator()(long i) const { y[i] = b == 0.0 ? a * x[i] : fma(a, x[i], b * y[i]); }
};
struct AXPBYPCZOp {
  static constexpr int max_threads = 1024, max_ept = 4;
  double *z; const double *x, *y; double a, b, c;
  __device__ void operator()(long i) const { z[i] = c == 0.0 ? fma(a, x[i], b * y[i]) : fma(a, x[i], fma(b, y[i], c * z[i])); }
};
struct WAXPYOp {
  static constexpr int max_threads = 1024, max_ept = 4;
  double *w; const double *x, *y; double a;
  __device__ void operator()(long i) const { w[i] = fma(a, x[i], y[i]); }
};
template <int NV>
struct MAXPBYOp {
  static constexpr int max_threads = NV >= 16 ? 512 : 1024, max_ept = NV >= 8 ? 1 : 4;
  double *y; const double *x[NV]; double a[NV]; double b; int nv;
  __device__ void operator()(long i) const
  {
    double s = b == 0.0 ? 0.0 : b * y[i];
#pragma unroll
    for (int k = 0; k < NV; k++) s = fma(a[k], x[k][i], s); /* slots from nv on: a = 0 on x[0], no branch */
    y[i] = s;
  }
};
struct ScaleOp {
  static constexpr int max_threads = 1024, max_ept = 4;
  double *x; double a;
  __device__ void operator()(long i) const { x[i] = a * x[i]; }
};
struct ReciprocalOp { /* x = 1/x, zeros kept (PETSc's VecReciprocal) */
  static constexpr int max_threads = 1024, max_ept = 4;
  double *x;
  __device__ void operator()(long i) const
  {
    const double v = x[i];
    x[i]           = v == 0.0 ? v : 1.0 / v;
  }
};
struct CopyOp {
  static constexpr int max_threads = 1024, max_ept = 4;
  double *y; const double *x;
  __device__ void operator()(long i) const { y[i] = x[i]; }
};
struct SetOp {
  static constexpr int max_threads = 1024, max_ept = 4;
  double *x; double a;
  __device__ void operator()(long i) const { x[i] = a; }
};
struct PMultOp {
  static constexpr int max_threads = 1024, max_ept = 4;
  double *w; const double *x, *y;
  __device__ void operator()(long i) const { w[i] = x[i] * y[i]; }
};

/* ---------------------------------------------------------------------------------------------
   Launching (the scratch, launch_map and start_reduce: stnvec_cuda_impl.h)
   --------------------------------------------------------------------------------------------- */

constexpr int kClasses = 64;

const StnLaunch map_default    = {256, 1, 0};
const StnLaunch reduce_default = {512, 2, 4}; /* a full SM (2048 threads), few blocks to fold */
/* MDot: for more than 8 vectors 8 blocks per SM of 256 threads with 4 entries each in flight
   (100 registers: 2 resident, the rest in waves), the fastest in bench/probes/mdot_probe_gpu.cu at 1e7. */
const StnLaunch mdot_default = {256, 4, 8};

StnLaunch shapes[STN_K_COUNT][kClasses]; /* all zero: the defaults */

bool is_reduction(StnVecKernel k)
{
  return k == STN_K_DOT || k == STN_K_MDOT || k == STN_K_NORM || k == STN_K_DOTNORM2;
}

/* After a reduction into scratch.dev_out started with status rc as number seq: waits for it and
   copies its first count results to out (host memory; zeros if it failed). */
int collect(int rc, unsigned seq, int count, double *out)
{
  if (!rc) rc = wait_result(seq);
  for (int k = 0; k < count; k++) out[k] = rc ? 0.0 : scratch.host_out[k];
  return rc;
}

/* Runs a reduction and waits for it; the count() results go to out (host memory). */
template <class Op>
int launch_reduce(StnLaunch s, long n, const Op &op, int count, double *out)
{
  unsigned seq = 0;
  if (n <= 0) {
    for (int k = 0; k < count; k++) out[k] = 0.0;
    return 0;
  }
  const int rc = start_reduce(s, n, op, scratch.dev_out, &seq); /* before collect reads seq */
  return collect(rc, seq, count, out);
}

template <int NV>
int start_mdot_one_pass(StnLaunch s, const double *x, int nv, const double *const y[], long n, double *dev_out, unsigned *seq)
{
  MDotOp<NV> op;
  op.x  = x;
  op.nv = nv;
  for (int k = 0; k < NV; k++) op.y[k] = k < nv ? y[k] : x;
  return start_reduce(s, n, op, dev_out, seq);
}

/* G groups of kGroup vectors (mdot_groups_kernel). The shape's blocks are the chunks times G:
   one chunk per threads * ept entries, or with bps, at most bps * sms blocks in all. */
template <int G>
int start_mdot_groups(StnLaunch s, const double *x, int nv, const double *const y[], long n, double *dev_out, unsigned *seq_out)
{
  MDotGroups<G> a;
  if (s.threads > MDotGroups<G>::max_threads) s.threads = MDotGroups<G>::max_threads;
  const long max_blocks = (long)(s.bps ? s.bps : kMaxBps) * scratch.sms; /* the scratch holds kMaxBps per SM */
  long       chunks     = (n + (long)s.threads * s.ept - 1) / ((long)s.threads * s.ept);
  if (chunks * G > max_blocks) chunks = max_blocks / G > 0 ? max_blocks / G : 1;
  a.chunk = ((n + chunks - 1) / chunks + 31) / 32 * 32;
  chunks  = (n + a.chunk - 1) / a.chunk;
  a.x     = x;
  a.nv    = nv;
  for (int k = 0; k < G * kGroup; k++) a.y[k] = k < nv ? y[k] : x; /* never read: nk stops short of them */
  const unsigned blocks = (unsigned)(chunks * G), seq = ++scratch.seq;
  switch (s.ept) {
  case 1: mdot_groups_kernel<G, 1><<<blocks, s.threads>>>(a, n, scratch.partials, scratch.ticket, dev_out, scratch.dev_done, seq); break;
  case 2: mdot_groups_kernel<G, 2><<<blocks, s.threads>>>(a, n, scratch.partials, scratch.ticket, dev_out, scratch.dev_done, seq); break;
  default: mdot_groups_kernel<G, 4><<<blocks, s.threads>>>(a, n, scratch.partials, scratch.ticket, dev_out, scratch.dev_done, seq); break;
  }
  *seq_out = seq;
  return check(cudaGetLastError(), "the MDot kernel");
}

} // namespace

/* What stngmres_cuda.cu shares (stnvec_cuda_impl.h). */
namespace stn_vec {

Scratch scratch;

int scratch_ready()
{
  if (scratch.partials) return 0;
  int dev, rc;
  if ((rc = check(cudaGetDevice(&dev), "cudaGetDevice"))) return rc;
  if ((rc = check(cudaDeviceGetAttribute(&scratch.sms, cudaDevAttrMultiProcessorCount, dev), "cudaDeviceGetAttribute"))) return rc;
  if ((rc = check(cudaDeviceGetAttribute(&scratch.cooperative, cudaDevAttrCooperativeLaunch, dev), "cudaDeviceGetAttribute"))) return rc;
  const size_t nblocks = (size_t)kMaxBps * (size_t)scratch.sms;
  if ((rc = check(cudaMalloc((void **)&scratch.partials, nblocks * STN_VEC_MAX_MULTI * sizeof(double)), "cudaMalloc (reduction scratch)"))) return rc;
  if ((rc = check(cudaMalloc((void **)&scratch.ticket, sizeof(unsigned)), "cudaMalloc (reduction ticket)"))) return rc;
  if ((rc = check(cudaMemset(scratch.ticket, 0, sizeof(unsigned)), "cudaMemset (reduction ticket)"))) return rc;
  if ((rc = check(cudaHostAlloc((void **)&scratch.host_out, (size_t)STN_VEC_MAX_MULTI * (1 + STN_VEC_SLOTS) * sizeof(double), cudaHostAllocMapped), "cudaHostAlloc (reduction results)"))) return rc;
  if ((rc = check(cudaHostAlloc((void **)&scratch.host_done, sizeof(unsigned), cudaHostAllocMapped), "cudaHostAlloc (reduction flag)"))) return rc;
  *scratch.host_done = scratch.seq = 0;
  if ((rc = check(cudaHostAlloc((void **)&scratch.host_report, (size_t)STN_VEC_MAX_MULTI * STN_GMRES_REPORT_SETS * sizeof(StnGMRESReport), cudaHostAllocMapped), "cudaHostAlloc (GMRES report)"))) return rc;
  if ((rc = check(cudaHostGetDevicePointer((void **)&scratch.dev_report, scratch.host_report, 0), "cudaHostGetDevicePointer"))) return rc;
  if ((rc = check(cudaHostGetDevicePointer((void **)&scratch.dev_done, scratch.host_done, 0), "cudaHostGetDevicePointer"))) return rc;
  return check(cudaHostGetDevicePointer((void **)&scratch.dev_out, scratch.host_out, 0), "cudaHostGetDevicePointer");
}

int wait_result(unsigned seq)
{
  volatile unsigned *done = scratch.host_done;
  for (unsigned long spins = 1; (int)(*done - seq) < 0; spins++) {
    if (spins % 4096) continue;
    const cudaError_t q = cudaStreamQuery(0);
    if (q == cudaErrorNotReady) continue;
    if ((int)(*done - seq) >= 0) break;
    if (q != cudaSuccess) return check(q, "a vector reduction");
    return check(cudaStreamSynchronize(0), "a vector reduction") ? 1 : StnCUDARecordError((int)cudaErrorUnknown, "a vector reduction ended without its result");
  }
  return 0;
}

unsigned grid_for(StnLaunch s, long n, bool reduction)
{
  const long per_block = (long)s.threads * s.ept;
  long       blocks    = (n + per_block - 1) / per_block;
  const int  bps       = s.bps == 0 && reduction ? kMaxBps : s.bps; /* the scratch holds kMaxBps per SM */
  if (bps > 0 && blocks > (long)bps * scratch.sms) blocks = (long)bps * scratch.sms;
  return (unsigned)(blocks < 1 ? 1 : blocks);
}

int start_mdot(StnLaunch s, const double *x, int nv, const double *const y[], long n, double *dev_out, unsigned *seq)
{
  if (nv <= 1) return start_mdot_one_pass<1>(s, x, nv, y, n, dev_out, seq);
  if (nv <= 2) return start_mdot_one_pass<2>(s, x, nv, y, n, dev_out, seq);
  if (nv <= 4) return start_mdot_one_pass<4>(s, x, nv, y, n, dev_out, seq);
  if (nv <= kGroup) return start_mdot_one_pass<kGroup>(s, x, nv, y, n, dev_out, seq);
  if (nv <= 2 * kGroup) return start_mdot_groups<2>(s, x, nv, y, n, dev_out, seq);
  return start_mdot_groups<4>(s, x, nv, y, n, dev_out, seq);
}

} // namespace stn_vec

namespace {

int mdot(StnLaunch s, const double *x, int nv, const double *const y[], long n, double z[])
{
  if (n <= 0) {
    for (int k = 0; k < nv; k++) z[k] = 0.0;
    return 0;
  }
  for (int done = 0; done < nv;) {
    const int m = nv - done < STN_VEC_MAX_MULTI ? nv - done : STN_VEC_MAX_MULTI;
    unsigned  seq    = 0;
    const int rc     = start_mdot(s, x, m, y + done, n, scratch.dev_out, &seq); /* before collect reads seq */
    const int failed = collect(rc, seq, m, z + done);
    if (failed) return failed;
    done += m;
  }
  return 0;
}

int norm(StnLaunch s, const double *x, long n, int type, double r[])
{
  switch (type) {
  case 0: return launch_reduce(s, n, NormOp<0>{x}, 1, r);
  case 1: return launch_reduce(s, n, NormOp<1>{x}, 1, r);
  case 2: return launch_reduce(s, n, NormOp<2>{x}, 2, r);
  case 3: return launch_reduce(s, n, NormOp<3>{x}, 1, r);
  default: return StnCUDARecordError((int)cudaErrorInvalidValue, "StnVecNorm: type is not 0 to 3");
  }
}

template <int NV>
int maxpby_pass(StnLaunch s, double *y, int nv, const double a[], double b, const double *const x[], long n)
{
  MAXPBYOp<NV> op;
  op.y  = y;
  op.b  = b;
  op.nv = nv;
  for (int k = 0; k < NV; k++) {
    op.x[k] = k < nv ? x[k] : x[0];
    op.a[k] = k < nv ? a[k] : 0.0;
  }
  return launch_map(s, n, op);
}

int maxpby(StnLaunch s, double *y, int nv, const double a[], double b, const double *const x[], long n)
{
  if (nv == 0) return b == 1.0 ? 0 : b == 0.0 ? launch_map(s, n, SetOp{y, 0.0}) : launch_map(s, n, ScaleOp{y, b});
  for (int done = 0; done < nv;) {
    const int m = nv - done < STN_VEC_MAX_MULTI ? nv - done : STN_VEC_MAX_MULTI;
    int       rc;
    if (m <= 1) rc = maxpby_pass<1>(s, y, m, a + done, b, x + done, n);
    else if (m <= 2) rc = maxpby_pass<2>(s, y, m, a + done, b, x + done, n);
    else if (m <= 4) rc = maxpby_pass<4>(s, y, m, a + done, b, x + done, n);
    else if (m <= 8) rc = maxpby_pass<8>(s, y, m, a + done, b, x + done, n);
    else if (m <= 16) rc = maxpby_pass<16>(s, y, m, a + done, b, x + done, n);
    else rc = maxpby_pass<32>(s, y, m, a + done, b, x + done, n);
    if (rc) return rc;
    b = 1.0; /* later passes add to the result */
    done += m;
  }
  return 0;
}

/* Every kernel, by number, with the arguments of StnVecRunShape. */
int run(StnVecKernel k, StnLaunch s, long n, int nv, double *a, double *b, double *c, const double *const *d, const double *sc, double *out)
{
  int rc = scratch_ready();
  if (rc) return rc;
  switch (k) {
  case STN_K_DOT: return mdot(s, a, 1, (const double *const *)&b, n, out);
  case STN_K_MDOT: return mdot(s, a, nv, d, n, out);
  case STN_K_NORM: return norm(s, a, n, (int)sc[0], out);
  case STN_K_DOTNORM2: return launch_reduce(s, n, DotNorm2Op{a, b}, 2, out);
  case STN_K_AXPY: return launch_map(s, n, AXPYOp{a, b, sc[0]});
  case STN_K_AYPX: return launch_map(s, n, AYPXOp{a, b, sc[0]});
  case STN_K_AXPBY: return launch_map(s, n, AXPBYOp{a, b, sc[0], sc[1]});
  case STN_K_AXPBYPCZ: return launch_map(s, n, AXPBYPCZOp{a, b, c, sc[0], sc[1], sc[2]});
  case STN_K_WAXPY: return launch_map(s, n, WAXPYOp{a, b, c, sc[0]});
  case STN_K_MAXPY: return maxpby(s, a, nv, sc, sc[nv], d, n);
  case STN_K_SCALE: return sc[0] == 0.0 ? launch_map(s, n, SetOp{a, 0.0}) : launch_map(s, n, ScaleOp{a, sc[0]});
  case STN_K_SET: return launch_map(s, n, SetOp{a, sc[0]});
  case STN_K_PMULT: return launch_map(s, n, PMultOp{a, b, c});
  default: return StnCUDARecordError((int)cudaErrorInvalidValue, "StnVecRunShape: no such kernel");
  }
}

int run_tuned(StnVecKernel k, long n, int nv, double *a, double *b, double *c, const double *const *d, const double *sc, double *out)
{
  return run(k, StnVecGetLaunch(k, n), n, nv, a, b, c, d, sc, out);
}

__global__ void fill_test(double *x, long n, int j)
{
  for (long i = (long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) x[i] = STN_VEC_TEST_VALUE(j, i);
}

} // namespace

extern "C" {

const char *const StnVecKernelNames[STN_K_COUNT] = {"dot", "mdot", "norm", "dotnorm2", "axpy", "aypx", "axpby",
                                                    "axpbypcz", "waxpy", "maxpy", "scale", "set", "pointwisemult"};

int StnVecSizeClass(long n)
{
  int c = 0;
  while (n > 1 && c < kClasses - 1) n >>= 1, c++;
  return c;
}

int StnVecScratchInit(void) { return scratch_ready(); }

int StnVecLaunchValid(StnLaunch s)
{
  return s.threads >= 32 && s.threads <= 1024 && s.threads % 32 == 0 && (s.ept == 1 || s.ept == 2 || s.ept == 4) &&
         s.bps >= 0 && s.bps <= kMaxBps;
}

int StnVecSetLaunch(StnVecKernel k, int c, StnLaunch s)
{
  if ((int)k < 0 || k >= STN_K_COUNT || c < 0 || c >= kClasses || (s.threads != 0 && !StnVecLaunchValid(s)))
    return StnCUDARecordError((int)cudaErrorInvalidValue, "StnVecSetLaunch: no such kernel, size class or shape");
  shapes[k][c] = s;
  return 0;
}

StnLaunch StnVecGetLaunch(StnVecKernel k, long n)
{
  const StnLaunch s = shapes[k][StnVecSizeClass(n)];
  return s.threads ? s : k == STN_K_MDOT ? mdot_default : is_reduction(k) ? reduce_default : map_default;
}

int StnVecRunShape(StnVecKernel k, StnLaunch s, long n, int nv, double *a, double *b, double *c, const double *const *d, const double *sc, double *out)
{
  if (!StnVecLaunchValid(s)) return StnCUDARecordError((int)cudaErrorInvalidValue, "StnVecRunShape: invalid shape");
  return run(k, s, n, nv, a, b, c, d, sc, out);
}

int StnVecWait(void)
{
  return check(cudaStreamSynchronize(0), "StnVecWait: cudaStreamSynchronize");
}

int StnVecFillTest(double *x, long n, int j)
{
  int rc = scratch_ready();
  if (rc || n <= 0) return rc;
  fill_test<<<grid_for(map_default, n, true), 256>>>(x, n, j);
  return check(cudaGetLastError(), "StnVecFillTest");
}

int StnVecGetStrided(double *host, const double *x, long stride, long count)
{
  if (count <= 0) return 0;
  return check(cudaMemcpy2D(host, sizeof(double), x, (size_t)stride * sizeof(double), sizeof(double), (size_t)count, cudaMemcpyDeviceToHost),
               "StnVecGetStrided: cudaMemcpy2D");
}

int StnVecDeviceKey(char *key, int size)
{
  int            dev, runtime, driver, rc;
  cudaDeviceProp p;
  if ((rc = check(cudaGetDevice(&dev), "cudaGetDevice")) || (rc = check(cudaGetDeviceProperties(&p, dev), "cudaGetDeviceProperties")) ||
      (rc = check(cudaRuntimeGetVersion(&runtime), "cudaRuntimeGetVersion")) || (rc = check(cudaDriverGetVersion(&driver), "cudaDriverGetVersion")))
    return rc;
  snprintf(key, (size_t)size, "%s|%d SMs|sm_%d%d|runtime %d|driver %d", p.name, p.multiProcessorCount, p.major, p.minor, runtime, driver);
  return 0;
}

int StnVecDot(const double *x, const double *y, long n, double *z)
{
  return run_tuned(STN_K_DOT, n, 1, (double *)x, (double *)y, nullptr, nullptr, nullptr, z);
}

int StnVecMDot(const double *x, int nv, const double *const y[], long n, double z[])
{
  return run_tuned(STN_K_MDOT, n, nv, (double *)x, nullptr, nullptr, y, nullptr, z);
}

int StnVecMDotBegin(const double *x, int nv, const double *const y[], long n, int slot, unsigned *seq)
{
  int rc = scratch_ready();
  if (rc) return rc;
  if (slot < 1 || slot > STN_VEC_SLOTS || nv < 1 || nv > STN_VEC_MAX_MULTI)
    return StnCUDARecordError((int)cudaErrorInvalidValue, "StnVecMDotBegin: slot or vectors out of range");
  if (n < 1) { /* no entries: zeros, and a number already done, nothing to wait for */
    for (int k = 0; k < nv; k++) scratch.host_out[(size_t)slot * STN_VEC_MAX_MULTI + k] = 0.0;
    *seq = *(volatile unsigned *)scratch.host_done;
    return 0;
  }
  return start_mdot(StnVecGetLaunch(STN_K_MDOT, n), x, nv, y, n, scratch.dev_out + (size_t)slot * STN_VEC_MAX_MULTI, seq);
}

int StnVecMDotEnd(int slot, unsigned seq, int nv, double z[])
{
  const int rc = slot < 1 || slot > STN_VEC_SLOTS || nv < 1 || nv > STN_VEC_MAX_MULTI ? StnCUDARecordError((int)cudaErrorInvalidValue, "StnVecMDotEnd: slot or vectors out of range") : wait_result(seq);
  for (int k = 0; k < nv; k++) z[k] = rc ? 0.0 : scratch.host_out[(size_t)slot * STN_VEC_MAX_MULTI + k];
  return rc;
}

int StnVecNorm(const double *x, long n, int type, double r[])
{
  const double t = type;
  return run_tuned(STN_K_NORM, n, 1, (double *)x, nullptr, nullptr, nullptr, &t, r);
}

int StnVecDotNorm2(const double *s, const double *t, long n, double *dp, double *nm)
{
  double r[2];
  const int rc = run_tuned(STN_K_DOTNORM2, n, 1, (double *)s, (double *)t, nullptr, nullptr, nullptr, r);
  *dp = r[0];
  *nm = r[1];
  return rc;
}

int StnVecAXPY(double *y, double a, const double *x, long n)
{
  return run_tuned(STN_K_AXPY, n, 1, y, (double *)x, nullptr, nullptr, &a, nullptr);
}

int StnVecAYPX(double *y, double a, const double *x, long n)
{
  return run_tuned(STN_K_AYPX, n, 1, y, (double *)x, nullptr, nullptr, &a, nullptr);
}

int StnVecAXPBY(double *y, double a, double b, const double *x, long n)
{
  const double s[2] = {a, b};
  return run_tuned(STN_K_AXPBY, n, 1, y, (double *)x, nullptr, nullptr, s, nullptr);
}

int StnVecAXPBYPCZ(double *z, double a, double b, double c, const double *x, const double *y, long n)
{
  const double s[3] = {a, b, c};
  return run_tuned(STN_K_AXPBYPCZ, n, 1, z, (double *)x, (double *)y, nullptr, s, nullptr);
}

int StnVecWAXPY(double *w, double a, const double *x, const double *y, long n)
{
  return run_tuned(STN_K_WAXPY, n, 1, w, (double *)x, (double *)y, nullptr, &a, nullptr);
}

int StnVecMAXPBY(double *y, int nv, const double a[], double b, const double *const x[], long n)
{
  double s[STN_VEC_MAX_MULTI + 1];
  for (int done = 0; done < nv || done == 0;) { /* passes of 32, so that s holds a[] and b */
    const int m = nv - done < STN_VEC_MAX_MULTI ? nv - done : STN_VEC_MAX_MULTI;
    for (int k = 0; k < m; k++) s[k] = a[done + k];
    s[m] = done == 0 ? b : 1.0;
    const int rc = run_tuned(STN_K_MAXPY, n, m, y, nullptr, nullptr, x + done, s, nullptr);
    if (rc) return rc;
    done += m;
    if (m == 0) break;
  }
  return 0;
}

int StnVecScale(double *x, double a, long n)
{
  return run_tuned(STN_K_SCALE, n, 1, x, nullptr, nullptr, nullptr, &a, nullptr);
}

int StnVecReciprocal(double *x, long n)
{
  return launch_map(StnVecGetLaunch(STN_K_SCALE, n), n, ReciprocalOp{x}); /* Scale's traffic, so its shape */
}

int StnVecSet(double *x, double a, long n)
{
  if (a == 0.0 && n > 0) return check(cudaMemsetAsync(x, 0, (size_t)n * sizeof(double)), "StnVecSet: cudaMemsetAsync");
  return run_tuned(STN_K_SET, n, 1, x, nullptr, nullptr, nullptr, &a, nullptr);
}

/* A copy engine's cudaMemcpyAsync has a fixed cost a few microseconds above a kernel's launch:
   at n = 1e6 it took 7.6 us where cuBLAS's dcopy kernel took 4.6 (docs/gpu-runs/vec_gpu.md),
   and from 1e7 on it is as fast as a kernel or faster. So a kernel (with Scale's launch shape:
   the same traffic) below 2^22 entries, the copy engine from there on. */
constexpr long kCopyKernelMaxN = 1L << 22;

int StnVecCopy(double *y, const double *x, long n)
{
  if (n <= 0 || x == y) return 0;
  if (n < kCopyKernelMaxN) return launch_map(StnVecGetLaunch(STN_K_SCALE, n), n, CopyOp{y, x});
  return check(cudaMemcpyAsync(y, x, (size_t)n * sizeof(double), cudaMemcpyDeviceToDevice), "StnVecCopy: cudaMemcpyAsync");
}

int StnVecPointwiseMult(double *w, const double *x, const double *y, long n)
{
  return run_tuned(STN_K_PMULT, n, 1, w, (double *)x, (double *)y, nullptr, nullptr, nullptr);
}

} // extern "C"
