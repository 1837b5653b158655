/* stngmres_cuda.cu: a step of GMRES with its Hessenberg matrix on the device (API: stngmres_cuda.h).

   A step runs either as three kernels on the vector reductions (stnvec_cuda_impl.h): MDot into
   column it of HH, MAXPY with ||w|| and the Hessenberg update in its last block, the scaling; or,
   where the device takes cooperative launches and n <= 2^20, as gmres_step_kernel, the same
   arithmetic in one cooperative kernel. Either reports through the shared scratch: step it's
   report in its mapped slot, then the flag StnGMRESStepWait spins on. */
#include "stngmres_cuda.h"

#include "stnvec_cuda_impl.h"

#include <cooperative_groups.h>
#include <cuda_runtime.h>

namespace {

using namespace stn_reduce;
using namespace stn_vec;

/* ---------------------------------------------------------------------------------------------
   GMRES: the step in three kernels
   --------------------------------------------------------------------------------------------- */

/* GMRES: w = w - sum_j HH(j, it) V[j] and ||w||, then in the last block the Hessenberg update
   of PETSc's KSPGMRESUpdateHessenberg (the rotations of the column, the new rotation, the
   rotated right-hand side), read by the host through the mapped report. */
template <int NV>
struct GMRESUpdateOp {
  using Fold = Sum;
  static constexpr int nvals = 1, max_threads = NV >= 16 ? 512 : 1024, max_ept = NV >= 8 ? 1 : 4;
  double          *y;
  const double    *x[NV];
  const double    *coef; /* HH(0..nv-1, it): the Gram-Schmidt coefficients, in device memory */
  int              nv, it;
  double           haptol;
  StnGMRESState    st;
  StnGMRESReport  *report;
  __device__ int    count() const { return 1; }
  __device__ void   add(long i, double *acc) const
  {
    double s = y[i];
#pragma unroll
    for (int k = 0; k < NV; k++) s = fma(-__ldg(&coef[k]), x[k][i], s); /* the same for every thread: from L1 */
    y[i]   = s;
    acc[0] = fma(s, s, acc[0]);
  }
  __device__ double finish(int, double v) const { return sqrt(v); }
  __device__ void   epilogue(const double *out) const
  {
    *st.tt = out[0];
    hessenberg_update(st.hh + (long)it * st.ld, st.cc, st.ss, st.grs, it, out[0], haptol, report);
  }
};

/* x = x / *t as ScaleByNormOp, and *keep = *t (one thread): the start of a cycle, whose norm
   the first step's rotation overwrites in GRS(0). */
struct StartScaleOp {
  static constexpr int max_threads = 1024, max_ept = 4;
  double *x; const double *t; double *keep;
  __device__ void operator()(long i) const
  {
    const double tv = *t;
    if (i == 0) *keep = tv;
    if (tv != 0.0) x[i] = x[i] * (1.0 / tv);
  }
};

struct ScaleByNormOp { /* x = x / *t (by its reciprocal, as VecNormalize does), unless *t is 0 */
  static constexpr int max_threads = 1024, max_ept = 4;
  double *x; const double *t;
  __device__ void operator()(long i) const
  {
    const double tv = *t;
    if (tv != 0.0) x[i] = x[i] * (1.0 / tv);
  }
};

template <int NV>
int gmres_step(StnGMRESState *st, int it, double haptol, double *w, const double *const V[], long n, unsigned *seq)
{
  const int        nv = it + 1;
  GMRESUpdateOp<NV> up;
  unsigned         s1;
  int              rc;

  if ((rc = start_mdot(StnVecGetLaunch(STN_K_MDOT, n), w, nv, V, n, st->hh + (long)it * st->ld, &s1))) return rc;
  up.y      = w;
  up.coef   = st->hh + (long)it * st->ld;
  up.nv     = nv;
  up.it     = it;
  up.haptol = haptol;
  up.st     = *st;
  up.report = scratch.dev_report + st->reports + it;
  for (int k = 0; k < NV; k++) up.x[k] = k < nv ? V[k] : V[0]; /* coefficient 0: MDot wrote zeros there */
  if ((rc = start_reduce(StnVecGetLaunch(STN_K_MAXPY, n), n, up, scratch.dev_out, seq))) return rc;
  return launch_map(StnVecGetLaunch(STN_K_SCALE, n), n, ScaleByNormOp{w, st->tt});
}

/* ---------------------------------------------------------------------------------------------
   GMRES: the end of a step whose reductions the host summed over the ranks
   --------------------------------------------------------------------------------------------- */

/* Column it of HH from the host's sums, by value (no copy queued before the kernel). */
struct HColumn {
  double h[STN_VEC_MAX_MULTI];
};

/* One thread: column it of HH from col, its Hessenberg update, its report, the flag. */
__global__ void hessenberg_kernel(StnGMRESState st, int it, HColumn col, double tt, double haptol, StnGMRESReport *report, volatile unsigned *done, unsigned seq)
{
  for (int j = 0; j <= it; j++) st.hh[(long)it * st.ld + j] = col.h[j];
  *st.tt = tt;
  hessenberg_update(st.hh + (long)it * st.ld, st.cc, st.ss, st.grs, it, tt, haptol, report);
  __threadfence_system(); /* the report reaches the host before the flag does */
  *done = seq;
}

/* ---------------------------------------------------------------------------------------------
   GMRES: the whole step in one cooperative kernel
   --------------------------------------------------------------------------------------------- */

namespace cg = cooperative_groups;

/* The default block (StnGMRESState.threads may ask for others): 512 threads up to 2^19 entries,
   256 beyond, the faster of the two at 2^18 and at 2^20 entries per queued step
   (tests/gpu/gmres_step -sweep, docs/gpu-runs/gmres_step_fold.txt). */
constexpr int  kStepThreadsSmall = 512, kStepThreads = 256;
constexpr long kStepSmallMaxN = 1L << 19;
constexpr long kFusedMaxN   = 1L << 20; /* the largest n the fused step is used for */
template <int NV>
constexpr int step_max_threads() { return NV > 8 ? 512 : 1024; } /* more vectors: up to 102 registers */

struct StepArgs {
  double            *w;
  const double      *V[STN_VEC_MAX_MULTI];
  long               n;
  int                nv, it;
  double             haptol;
  StnGMRESState      st;
  StnGMRESReport    *report;
  double            *partials; /* gridDim.x * NP for the coefficients, then gridDim.x for the norm */
  volatile unsigned *done;
  unsigned           seq;
};

/* One step of gmres_step's three kernels in one, with all its blocks resident at once (a
   cooperative launch), meeting at two grid-wide barriers:
     1. h = V[0..nv-1]^T w, each block's partials;                                   barrier
     2. every block folds the partials itself, in the same fixed order (fold_partials: all blocks
        get the same bits), into shared memory;
     3. w = w - sum h_k V[k] (MAXPY's arithmetic) and each block's part of ||w||^2;   barrier
     4. every block folds ||w||^2 and scales its own elements of w by 1/||w|| (VecNormalize's
        arithmetic); block 0 stores column it of HH, does the Hessenberg update on copies in
        shared memory (one thread, so no global-memory latency per rotation) and raises the flag.
   Against the three kernels: two launches and two reduction tails fewer, two passes over w fewer,
   and the second pass over V[0..nv-1] follows the first at once, from L2 when they fit there.
   Slots from nv on are skipped by a branch that is the same for every thread. */
template <int NV>
__global__ void __launch_bounds__(step_max_threads<NV>()) gmres_step_kernel(const StepArgs a)
{
  constexpr int     NP = NV <= 1 ? 1 : NV <= 2 ? 2 : NV <= 4 ? 4 : NV <= 8 ? 8 : NV <= 16 ? 16 : 32; /* the partials' stride */
  constexpr int     E  = NV <= 4 ? 4 : 2; /* elements per thread per pass: loads in flight */
  __shared__ double warp_part[32][NP], warp_one[32][1];
  __shared__ double h[NV], col[STN_VEC_MAX_MULTI + 2], cs[STN_VEC_MAX_MULTI], sn[STN_VEC_MAX_MULTI], tt_shared;
  cg::grid_group    grid = cg::this_grid();
  const int         nv = a.nv, it = a.it;
  const long        stride = (long)gridDim.x * blockDim.x, first = (long)blockIdx.x * blockDim.x + threadIdx.x;
  double           *norm_partials = a.partials + (long)gridDim.x * NP;
  double            acc[NP], sq = 0.0;

  /* 1. The coefficients: slots from nv on point at V[0] (a.V, set up by gmres_step_fused) and
     are dropped below: no branch per slot, so that all loads of an element are in flight at once. */
#pragma unroll
  for (int k = 0; k < NP; k++) acc[k] = 0.0;
  for (long base = first; base < a.n; base += stride * E) {
#pragma unroll
    for (int e = 0; e < E; e++) {
      const long i = base + e * stride;
      if (i < a.n) {
        const double wi = a.w[i];
#pragma unroll
        for (int k = 0; k < NV; k++) acc[k] = fma(wi, a.V[k][i], acc[k]);
      }
    }
  }
  block_partials<Sum, NP>(acc, warp_part, a.partials);
  grid.sync();
  {
    const double t = fold_partials<Sum, NP>(a.partials, gridDim.x, warp_part);
    if (threadIdx.x < NV) h[threadIdx.x] = threadIdx.x < nv ? t : 0.0;
  }
  __syncthreads();
  /* 3. w = w - sum h_k V[k] (the unused slots: 0 times V[0], as in the three-kernel step; not 0
     times w, which would turn an infinite entry of w into NaN) and this block's part of ||w||^2. */
  for (long base = first; base < a.n; base += stride * E) {
    double s[E];
#pragma unroll
    for (int e = 0; e < E; e++) { /* all E elements' loads first: a store to w could alias them */
      const long i = base + e * stride;
      if (i < a.n) {
        s[e] = a.w[i];
#pragma unroll
        for (int k = 0; k < NV; k++) s[e] = fma(-h[k], a.V[k][i], s[e]);
      }
    }
#pragma unroll
    for (int e = 0; e < E; e++) {
      const long i = base + e * stride;
      if (i < a.n) {
        a.w[i] = s[e];
        sq     = fma(s[e], s[e], sq);
      }
    }
  }
  block_partials<Sum, 1>(&sq, warp_one, norm_partials);
  grid.sync();
  {
    const double t = fold_partials<Sum, 1>(norm_partials, gridDim.x, warp_one);
    if (threadIdx.x == 0) tt_shared = sqrt(t);
  }
  __syncthreads();
  /* 4. The scaling, each thread on its own elements. */
  const double tt = tt_shared;
  if (tt != 0.0)
    for (long i = first; i < a.n; i += stride) a.w[i] = a.w[i] * (1.0 / tt);
  if (blockIdx.x != 0) return;
  if (threadIdx.x <= it) {
    col[threadIdx.x] = h[threadIdx.x];
    cs[threadIdx.x]  = a.st.cc[threadIdx.x];
    sn[threadIdx.x]  = a.st.ss[threadIdx.x];
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    double *hh = a.st.hh + (long)it * a.st.ld;
    *a.st.tt   = tt;
    hessenberg_update(col, cs, sn, a.st.grs, it, tt, a.haptol, a.report);
    for (int j = 0; j <= it + 1; j++) hh[j] = col[j];
    a.st.cc[it] = cs[it];
    a.st.ss[it] = sn[it];
    __threadfence_system(); /* the report reaches the host before the flag does */
    *a.done = a.seq;
  }
}

/* Launches gmres_step_kernel<NV>: st->threads per block (default above), st->bps blocks
   per SM (default: as many as fit; never more, a cooperative launch needs them all resident),
   at most one block per thread's element. */
template <int NV>
int gmres_step_fused(StnGMRESState *st, int it, double haptol, double *w, const double *const V[], long n, unsigned *seq)
{
  static int fit[1024 / 32 + 1]; /* blocks of this instance resident per SM, by threads / 32 */
  StepArgs   a;
  int        rc, threads = st->threads > 0 ? st->threads : n <= kStepSmallMaxN ? kStepThreadsSmall : kStepThreads;

  if (threads > step_max_threads<NV>()) threads = step_max_threads<NV>();
  threads &= ~31;
  if (threads < 32) threads = 32;
  int &per_sm = fit[threads / 32];
  if (!per_sm && (rc = check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, gmres_step_kernel<NV>, threads, 0), "cudaOccupancyMaxActiveBlocksPerMultiprocessor"))) return rc;
  int bps = st->bps > 0 && st->bps < per_sm ? st->bps : per_sm;
  if (bps > kMaxBps - 1) bps = kMaxBps - 1; /* the scratch holds kMaxBps * sms * 32 partials; this uses blocks * (NP + 1) */
  long blocks = (long)bps * scratch.sms;
  if (blocks > (n + threads - 1) / threads) blocks = (n + threads - 1) / threads;
  a.w  = w;
  a.n  = n;
  a.nv = it + 1;
  a.it = it;
  for (int k = 0; k < STN_VEC_MAX_MULTI; k++) a.V[k] = k <= it ? V[k] : V[0]; /* unused slots: V[0], from cache (finite: 0 times it is 0) */
  a.haptol   = haptol;
  a.st       = *st;
  a.report   = scratch.dev_report + st->reports + it;
  a.partials = scratch.partials;
  a.done     = scratch.dev_done;
  a.seq = *seq = ++scratch.seq;
  void *args[] = {&a};
  return check(cudaLaunchCooperativeKernel((const void *)gmres_step_kernel<NV>, dim3((unsigned)blocks), dim3((unsigned)threads), args, 0, 0), "the GMRES step kernel");
}

} // namespace

extern "C" {

int StnGMRESCreate(StnGMRESState *st, int max_k)
{
  int rc;
  *st = StnGMRESState{};
  if (max_k < 1 || max_k >= STN_VEC_MAX_MULTI) return StnCUDARecordError((int)cudaErrorInvalidValue, "StnGMRESCreate: the restart must be 1 to 31");
  st->ld    = max_k + 2 > STN_VEC_MAX_MULTI ? max_k + 2 : STN_VEC_MAX_MULTI; /* MDot writes 32 entries of a column */
  st->max_k = max_k;
  st->fused = 1;
  const size_t doubles = (size_t)st->ld * (max_k + 1) + 2 * (max_k + 1) + (max_k + 2) + 2;
  if ((rc = StnCUDAMalloc((void **)&st->hh, doubles * sizeof(double)))) return rc;
  st->cc  = st->hh + (size_t)st->ld * (max_k + 1);
  st->ss  = st->cc + max_k + 1;
  st->grs = st->ss + max_k + 1;
  st->tt   = st->grs + max_k + 2;
  st->beta = st->tt + 1;
  return check(cudaMemset(st->hh, 0, doubles * sizeof(double)), "StnGMRESCreate: cudaMemset");
}

int StnGMRESDestroy(StnGMRESState *st)
{
  const int rc = StnCUDAFree(st->hh);
  *st          = StnGMRESState{};
  return rc;
}

int StnGMRESStart(StnGMRESState *st, double beta)
{
  /* queued: the driver stages beta before it returns, and the host waits for no kernel */
  return check(cudaMemcpyAsync(st->grs, &beta, sizeof beta, cudaMemcpyHostToDevice, 0), "StnGMRESStart: cudaMemcpyAsync");
}

int StnGMRESStartNormalize(StnGMRESState *st, double *v, long n)
{
  unsigned seq;
  int      rc = scratch_ready();
  if (rc) return rc;
  if (n < 1) return StnCUDARecordError((int)cudaErrorInvalidValue, "StnGMRESStartNormalize: no entries");
  if ((rc = start_reduce(StnVecGetLaunch(STN_K_NORM, n), n, NormOp<1>{v}, st->grs, &seq))) return rc;
  return launch_map(StnVecGetLaunch(STN_K_SCALE, n), n, StartScaleOp{v, st->grs, st->beta});
}

int StnGMRESStepLaunch(StnGMRESState *st, int it, double haptol, double *w, const double *const V[], long n, unsigned *ticket)
{
  int rc = scratch_ready();
  if (rc) return rc;
  if (it < 0 || it > st->max_k - 1 || n < 1) return StnCUDARecordError((int)cudaErrorInvalidValue, "StnGMRESStep: step or length out of range");
  if (st->reports < 0 || st->reports % STN_VEC_MAX_MULTI || st->reports >= STN_VEC_MAX_MULTI * STN_GMRES_REPORT_SETS) return StnCUDARecordError((int)cudaErrorInvalidValue, "StnGMRESStep: no such report set");
  /* The fused kernel wins where its second pass over V finds it in L2 and its saved launches
     count: 1.5x at n = 2^18, 0.89x at 2^21 on an H200 (tests/gpu/gmres_step.c -bench). */
  if (st->fused && scratch.cooperative && n <= kFusedMaxN) {
    switch ((it + 4) / 4) { /* the instance for nv = it + 1 vectors: 1, 2, 4, 8, 12, 16, 20, 24, 32 */
    case 1: return it < 1 ? gmres_step_fused<1>(st, it, haptol, w, V, n, ticket) : it < 2 ? gmres_step_fused<2>(st, it, haptol, w, V, n, ticket) : gmres_step_fused<4>(st, it, haptol, w, V, n, ticket);
    case 2: return gmres_step_fused<8>(st, it, haptol, w, V, n, ticket);
    case 3: return gmres_step_fused<12>(st, it, haptol, w, V, n, ticket);
    case 4: return gmres_step_fused<16>(st, it, haptol, w, V, n, ticket);
    case 5: return gmres_step_fused<20>(st, it, haptol, w, V, n, ticket);
    case 6: return gmres_step_fused<24>(st, it, haptol, w, V, n, ticket);
    default: return gmres_step_fused<32>(st, it, haptol, w, V, n, ticket); /* 25 to 32: a 28-vector instance is slower than this one (at nv = 25, n = 2^18) */
    }
  }
  if (it < 1) return gmres_step<1>(st, it, haptol, w, V, n, ticket);
  if (it < 2) return gmres_step<2>(st, it, haptol, w, V, n, ticket);
  if (it < 4) return gmres_step<4>(st, it, haptol, w, V, n, ticket);
  if (it < 8) return gmres_step<8>(st, it, haptol, w, V, n, ticket);
  if (it < 16) return gmres_step<16>(st, it, haptol, w, V, n, ticket);
  return gmres_step<32>(st, it, haptol, w, V, n, ticket);
}

int StnGMRESStepFinish(StnGMRESState *st, int it, const double *h, double tt, double haptol, double *w, long n, unsigned *ticket)
{
  int rc = scratch_ready();
  if (rc) return rc;
  if (it < 0 || it > st->max_k - 1 || n < 1) return StnCUDARecordError((int)cudaErrorInvalidValue, "StnGMRESStepFinish: step or length out of range");
  if (st->reports < 0 || st->reports % STN_VEC_MAX_MULTI || st->reports >= STN_VEC_MAX_MULTI * STN_GMRES_REPORT_SETS) return StnCUDARecordError((int)cudaErrorInvalidValue, "StnGMRESStepFinish: no such report set");
  HColumn col{};
  for (int j = 0; j <= it; j++) col.h[j] = h[j];
  *ticket = ++scratch.seq;
  hessenberg_kernel<<<1, 1>>>(*st, it, col, tt, haptol, scratch.dev_report + st->reports + it, scratch.dev_done, *ticket);
  if ((rc = check(cudaGetLastError(), "the GMRES Hessenberg kernel"))) return rc;
  return w ? launch_map(StnVecGetLaunch(STN_K_SCALE, n), n, ScaleByNormOp{w, st->tt}) : 0;
}

int StnGMRESStepWait(int slot, unsigned ticket, StnGMRESReport *r)
{
  const int rc = slot < 0 || slot >= STN_VEC_MAX_MULTI * STN_GMRES_REPORT_SETS ? StnCUDARecordError((int)cudaErrorInvalidValue, "StnGMRESStepWait: no such step") : wait_result(ticket);
  *r           = rc ? StnGMRESReport{} : scratch.host_report[slot];
  return rc;
}

int StnGMRESStep(StnGMRESState *st, int it, double haptol, double *w, const double *const V[], long n, StnGMRESReport *r)
{
  unsigned ticket = 0;
  const int rc    = StnGMRESStepLaunch(st, it, haptol, w, V, n, &ticket);
  return rc ? rc : StnGMRESStepWait(it, ticket, r);
}

int StnGMRESGetScratch(StnGMRESScratch *s, unsigned count, unsigned *first)
{
  const int rc = scratch_ready();
  *s           = StnGMRESScratch{};
  if (rc) return rc;
  s->sms         = scratch.sms;
  s->cooperative = scratch.cooperative;
  s->partials    = scratch.partials;
  s->npartials   = (long)kMaxBps * scratch.sms * STN_VEC_MAX_MULTI;
  s->done        = scratch.dev_done;
  s->report      = scratch.dev_report;
  *first         = scratch.seq + 1;
  scratch.seq += count;
  return 0;
}

int StnGMRESGetHessenberg(const StnGMRESState *st, int it, double *hh, double *grs)
{
  int rc = check(cudaMemcpy(hh, st->hh, (size_t)st->ld * (it + 1) * sizeof(double), cudaMemcpyDeviceToHost), "StnGMRESGetHessenberg: cudaMemcpy");
  if (!rc) rc = check(cudaMemcpy(grs, st->grs, (size_t)(it + 1) * sizeof(double), cudaMemcpyDeviceToHost), "StnGMRESGetHessenberg: cudaMemcpy");
  return rc;
}

} // extern "C"
