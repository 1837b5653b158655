/* stncycle_cuda.cu: restart cycles of GMRES in one cooperative kernel (API: stncycle_cuda.h).

   All blocks are resident (one of kThreads per SM); a step meets at two grid-wide barriers:
     1. w = d .* (A V[it]) for the thread's rows (sgdia_rows.h), kept in shared memory; the block's
        partial sums of V[k]^T w, k = 0..it;                                             barrier
     2. every block folds the coefficients h itself (the same bits in every block); w = w - V h,
        newest vector first (what pass 1 left in L2); the block's part of ||w||^2; w, unscaled,
        into a vector of its own; what comes next (step, restart, end) is decided; where the
        matrix fits in a third of L2, each thread asks L2 for its rows of it;           barrier
     3. every block folds tt = ||w|| and scales its own rows into V[it + 1]; the next product reads
        the neighbours as the unscaled w times 1 / tt (the same bits), so no third barrier.
   The keeper, thread 0 of the last block (the grid-stride rows leave it the fewest rows), reads
   the host's stop flag and does the Hessenberg update and report off the critical path; the
   report's system fence and flag go into the next step's first barrier (sync_publishing).
   A restart takes four more barriers: y and x + V y into the unscaled vector while the host tests
   the cycle's last step; after its go x = x + V y; w = d .* (b - A x); V[0] = w / ||w||.
   Coherence: the basis, x and the unscaled vector are loaded through L1 (the product reads an
   entry up to dof * nsten times): another thread reads a write only after the grid barrier that
   follows it (a release, then an acquire that invalidates L1), and V[it + 1] only its writer
   reads; the partial sums, rewritten every step, are read through L2 (__ldcg).
   The rows of w live in shared memory (registers would need the row loops unrolled), and what is
   left holds the thread's rows of the first basis vectors (plan_shared), read instead of the
   global copies: the step is bound by trips to L2 and barriers, not by DRAM. */
#include "stncycle_cuda.h"

#include "sgdia_instances.h"
#include "sgdia_rows.h"
#include "stnprobe.h" /* StnGMRESCycleTraceRead */
#include "stnreduce.h"

#include <cooperative_groups.h>
#include <cuda_runtime.h>

namespace {

using namespace stn_sgdia;
using namespace stn_reduce;
namespace cg = cooperative_groups;

/* Blocks of 1024 threads, one per SM: every block folds every block's partial sums after each
   barrier, so the fewer the blocks, the fewer those reads (faster than 512 threads at 256^2 x 4
   and at 64^3: docs/codegen-decisions.md). */
constexpr int kThreads = 1024; /* per block */
constexpr int kRows    = 16;  /* the most rows a thread holds: 2162688 rows on an H200, so SFI at
                                 128^3 runs here rather than in the step's kernels (w is in
                                 dynamic shared memory: fewer rows cost nothing) */
constexpr int kGroup   = 8;   /* coefficients accumulated at once (registers) */
constexpr int kSlots   = STN_VEC_MAX_MULTI + 1; /* partial sums per block: the coefficients, then ||w||^2 */
constexpr unsigned long long kGoWaitNs = 20000000; /* how long a restart waits for the host's go */

/* STN_CYCLE_TRACE: a build that finds where a step's time goes (docs/performance.md, "Tracing the
   step"). Thread 0 of each block adds the clock64() cycles from one mark to the next into its
   block's row of stn_cycle_trace, read by StnGMRESCycleTraceRead; without it the marks are
   nothing. */
enum { kTrProduct, kTrPass1, kTrBlockSums, kTrBarrier1, kTrFold1, kTrPass2, kTrNormSums, kTrBarrier2, kTrFold2, kTrScale, kTrSteps, kTrPhases };
#ifdef STN_CYCLE_TRACE
static_assert(kTrPhases == STN_CYCLE_TRACE_PHASES, "stnprobe.h's count of the phases");
constexpr int                 kTraceBlocks = 1024;
__device__ unsigned long long stn_cycle_trace[kTraceBlocks][kTrPhases];
#endif

int check(cudaError_t err, const char *what)
{
  return err == cudaSuccess ? 0 : StnCUDARecordError((int)err, what);
}

struct CycleArgs {
  Geometry            g;
  const double       *A, *d, *b;
  double             *x;
  double             *V[STN_VEC_MAX_MULTI];
  double             *unscaled; /* n doubles: the new vector w before its scaling by 1 / ||w||; at a restart, x + V y */
  long                n, budget;
  int                 rows;   /* the most rows a thread holds in this launch (<= kRows) */
  int                 cached; /* V[0 .. cached - 1] have the thread's rows in shared memory too */
  int                 wlen;   /* doubles per thread of the rows of w (>= rows; the restart's HH too) */
  int                 it0, it1, cycles;
  double              haptol;
  StnGMRESState       st;
  StnGMRESReport     *report; /* report[it]: mapped host memory; report[max_k]: the restarts' */
  double             *part;   /* slot k of block b at part[k * gridDim.x + b] */
  unsigned           *done;   /* mapped: the ticket of the newest report */
  unsigned            first, launch;
  volatile unsigned  *stop;     /* mapped: the host writes launch here to end the kernel */
  volatile unsigned  *go;       /* mapped: the host writes a restart's ticket here to let it go */
  volatile unsigned  *decision; /* device: the keeper's decisions, read by every block after a
                                   barrier: [0] after each step, [1] at a restart */
  __device__ unsigned ticket(int cycle, int it) const { return first + (unsigned)(cycle * (st.max_k + 1) + it); }
};

/* What follows a step. */
enum { kEnd, kStep, kRestart };

/* The block's shared memory: this struct, then (dynamic, sized at launch) the rows of w and the
   cached basis vectors, each as [row][thread] so that a warp's 32 threads read 32 consecutive
   doubles. */
struct Shared {
  double warp_part[32][kSlots + 1]; /* +1: the warps' rows fall in different banks */
  double h[STN_VEC_MAX_MULTI];      /* the step's coefficients; at a restart, y */
  double tt;
  double col[STN_VEC_MAX_MULTI + 2], cs[STN_VEC_MAX_MULTI], sn[STN_VEC_MAX_MULTI], grs[STN_VEC_MAX_MULTI + 2]; /* the keeper's block only */
  int    next;
#ifdef STN_CYCLE_TRACE
  unsigned long long trace[kTrPhases], mark;
#endif
};
extern __shared__ double dyn[]; /* wlen * blockDim.x doubles of w (at a restart, HH), then the cache */

/* Whether this thread is the keeper: thread 0 of the last block, which has the fewest rows (see
   the top). */
__device__ __forceinline__ bool is_keeper() { return blockIdx.x == gridDim.x - 1 && threadIdx.x == 0; }

/* Row r of w held by this thread, through a step. */
__device__ __forceinline__ double &w_row(int r) { return dyn[r * blockDim.x + threadIdx.x]; }

/* The end of phase ph, in a tracing build: thread 0 adds the cycles since its last mark. */
__device__ __forceinline__ void trace_mark(Shared &sh, int ph)
{
#ifdef STN_CYCLE_TRACE
  if (threadIdx.x == 0) {
    const unsigned long long t = clock64();
    sh.trace[ph] += t - sh.mark;
    sh.mark = t;
  }
#endif
}

/* Row r of basis vector k held by this thread (k < a.cached). */
__device__ __forceinline__ double &cached_row(const CycleArgs &a, int k, int r)
{
  return dyn[((long)a.wlen + (long)k * a.rows + r) * blockDim.x + threadIdx.x];
}

/* V[k][t], row r of this thread, from its cached copy (CACHED, k < a.cached) or from V[k]. A
   compile-time choice: a run-time one per load cost 1.3 us per step at 256^2 x 4 on the H200. */
template <bool CACHED>
__device__ __forceinline__ double basis(const CycleArgs &a, int k, int r, long t) { return CACHED ? cached_row(a, k, r) : a.V[k][t]; }

/* V[k][t] = v, row r of this thread, and its cached copy. */
__device__ __forceinline__ void set_basis(const CycleArgs &a, int k, int r, long t, double v)
{
  a.V[k][t] = v;
  if (k < a.cached) cached_row(a, k, r) = v;
}

/* The sum of the nb values at p (one per block), by one warp, in a fixed order: lane l adds
   entries l, l + 32, ... into four sums, then the lanes fold. In lane 0. Up to 256 blocks, a
   lane's loads all go out before the sums: one trip to L2 per fold, two folds a step on the path
   between barriers (through L2 only: sharing them through L1 is slower). */
__device__ double fold_blocks(const double *p, long nb, int lane)
{
  double v[4] = {0.0, 0.0, 0.0, 0.0};
  long   j    = lane;
  if (nb <= 256) {
    /* Up to 8 entries a lane (one block per SM: 132 on the H200): all loads first, one trip to
       L2 instead of one per loop below; then the loop's sums in its order (the entries past nb
       are 0, and v + 0 is v: v is never -0). */
    double t[8];
#pragma unroll
    for (int u = 0; u < 8; u++) t[u] = j + 32 * u < nb ? __ldcg(p + j + 32 * u) : 0.0;
    int rest = 0; /* the first entry the loop of fours leaves to v[0] */
#pragma unroll
    for (int g = 0; g < 2; g++)
      if (rest == 4 * g && j + 32 * (4 * g + 3) < nb) {
#pragma unroll
        for (int u = 0; u < 4; u++) v[u] += t[4 * g + u];
        rest = 4 * g + 4;
      }
#pragma unroll
    for (int u = 0; u < 8; u++)
      if (u >= rest) v[0] += t[u];
    return warp_fold<Sum>((v[0] + v[1]) + (v[2] + v[3]));
  }
  for (; j + 96 < nb; j += 128)
#pragma unroll
    for (int u = 0; u < 4; u++) v[u] += __ldcg(p + j + 32 * u);
  for (; j < nb; j += 32) v[0] += __ldcg(p + j);
  return warp_fold<Sum>((v[0] + v[1]) + (v[2] + v[3]));
}

/* The block's sum of the per-warp values warp_part[0..nwarps-1][slot] into part (slot's row), by
   one warp of the block. */
__device__ void block_slot(double (*warp_part)[kSlots + 1], int slot, double *part, int lane)
{
  const int    nwarps = blockDim.x >> 5;
  const double v      = warp_fold<Sum>(lane < nwarps ? warp_part[lane][slot] : 0.0);
  if (lane == 0) part[(long)slot * gridDim.x + blockIdx.x] = v;
}

/* sq summed over the grid, the same bits in every block: the block's part into part's last slot,
   a barrier, the fold. sh.warp_part's last column must not be in use. With decision, warp 1 also
   reads *decision after the barrier into sh.next, while warp 0 folds. */
__device__ double grid_sum(const CycleArgs &a, Shared &sh, double sq, cg::grid_group &grid, const volatile unsigned *decision = nullptr)
{
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const double v = warp_fold<Sum>(sq);
  if (lane == 0) sh.warp_part[warp][kSlots - 1] = v;
  __syncthreads();
  if (warp == 0) block_slot(sh.warp_part, kSlots - 1, a.part, lane);
  trace_mark(sh, kTrNormSums);
  grid.sync();
  trace_mark(sh, kTrBarrier2);
  if (warp == 0) {
    const double s = fold_blocks(a.part + (long)(kSlots - 1) * gridDim.x, gridDim.x, lane);
    if (lane == 0) sh.tt = s;
  } else if (warp == 1 && lane == 0 && decision) /* beside the fold, not after it: 0.1-0.3 us per step */
    sh.next = *decision;
  __syncthreads();
  trace_mark(sh, kTrFold2);
  return sh.tt;
}

/* f(r, t) for each of the thread's rows t, r = 0, 1, ...: rows t, t + stride, ... of a grid-stride
   loop, at most kRows of them (w[r] holds row t through a step). */
template <class F>
__device__ __forceinline__ void for_rows(long n, F f)
{
  const long stride = (long)gridDim.x * blockDim.x, first = (long)blockIdx.x * blockDim.x + threadIdx.x;
#pragma unroll 1
  for (int r = 0; r < kRows; r++) {
    const long t = first + r * stride;
    if (t >= n) break;
    f(r, t);
  }
}

/* w = d .* (A x) (b NULL), or d .* (b - A x) (VecAXPY(b, -1, A x), then Jacobi's product), for
   the thread's rows (d NULL: no scaling), where x is the vector x * xs (each entry scaled as it
   is loaded). A warp past the end stops (the product's warp vote needs every lane; rows grow
   with r). Inlined: as a call (one copy for the steps and the restarts, 10 s less to compile) a
   step took 34.8 us instead of 31.7 at 256^2 x 4 on the H200, 34.0 instead of 29.5 at 64^3
   (tests/gpu/gmres_cycle -bench). */
template <int DOF, int NSTEN>
__device__ __forceinline__ void product_rows(const CycleArgs &a, const double *x, double xs, const double *b)
{
  const long stride = (long)gridDim.x * blockDim.x, first = (long)blockIdx.x * blockDim.x + threadIdx.x;
  const int  lane   = threadIdx.x & 31;
#pragma unroll 1
  for (int r = 0; r < kRows; r++) {
    const long t = first + r * stride;
    if (t - lane >= a.n) break;
    const bool   active  = t < a.n;
    const double v       = row_value<DOF, NSTEN, true, false, true>(a.g, a.A, x, (int)t, active, xs);
    const double u       = active && b ? fma(-1.0, v, __ldg(b + t)) : v;
    w_row(r)             = active ? (a.d ? __ldg(a.d + t) * u : u) : 0.0;
  }
}

/* Asks L2 for the matrix entries of the thread's rows, which the next product reads, so that DRAM
   works while the step folds its norm and waits at the barrier. */
template <int DOF, int NSTEN>
__device__ __forceinline__ void prefetch_matrix(const CycleArgs &a)
{
  const int    dof = DOF ? DOF : a.g.dof, nsten = NSTEN ? NSTEN : a.g.nsten;
  const size_t ld  = (size_t)a.g.nrows;
  for_rows(a.n, [&](int, long t) {
    for (int e = 0; e < nsten * dof; e++) asm volatile("prefetch.global.L2 [%0];" ::"l"(a.A + (size_t)e * ld + t));
  });
}

/* Pass 1 over V[k0 .. k1 - 1], kGroup vectors at a time: warp_part[warp][k] = the warp's sum
   of w V[k] over the threads' rows (each k's sum over the rows in the same order however the
   vectors are split). */
template <bool CACHED>
__device__ __forceinline__ void coefficients(const CycleArgs &a, Shared &sh, int k0, int k1)
{
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  for (; k0 < k1; k0 += kGroup) {
    double acc[kGroup];
#pragma unroll
    for (int j = 0; j < kGroup; j++) acc[j] = 0.0;
    for_rows(a.n, [&](int r, long t) {
      const double wr = w_row(r);
#pragma unroll
      for (int j = 0; j < kGroup; j++)
        if (k0 + j < k1) acc[j] = fma(wr, basis<CACHED>(a, k0 + j, r, t), acc[j]);
    });
    int          j; /* which coefficient this lane's sum is (warp_sums: the bits of warp_fold's) */
    const double v = warp_sums<kGroup>(acc, lane, &j);
    if (lane % (32 / kGroup) == 0 && k0 + j < k1) sh.warp_part[warp][k0 + j] = v;
  }
}

/* Pass 2 over V[k1 - 1] down to V[k0], kGroup vectors at a time: w = w - h[k] V[k] for each of
   the thread's rows, in that order (one chain per row, whatever the grouping). With last (the
   range that ends at V[0]), the group that reaches k0 also adds the rows' squares into sq and,
   when another step follows, stores w unscaled. */
template <bool CACHED>
__device__ __forceinline__ void subtract(const CycleArgs &a, Shared &sh, int k1, int k0, bool last, bool more, double &sq)
{
  for (; k1 > k0; k1 -= kGroup) {
    const bool ends = last && k1 - kGroup <= k0; /* this group reaches V[0] */
    for_rows(a.n, [&](int r, long t) {
      double s = w_row(r);
#pragma unroll
      for (int j = 1; j <= kGroup; j++)
        if (k1 - j >= k0) s = fma(-sh.h[k1 - j], basis<CACHED>(a, k1 - j, r, t), s);
      w_row(r) = s;
      if (ends) {
        sq = fma(s, s, sq);
        if (more) a.unscaled[t] = s;
      }
    });
  }
}

/* The keeper: step it's Hessenberg update (hessenberg_update on the column h, tt, with
   the rotations and the right-hand side kept in shared memory through the cycle), its results
   into st for the host's solution, then the report and the flag. */
__device__ void finish_step(const CycleArgs &a, Shared &sh, int it, double tt)
{
  for (int j = 0; j <= it; j++) sh.col[j] = sh.h[j];
  *a.st.tt = tt;
  hessenberg_update(sh.col, sh.cs, sh.sn, sh.grs, it, tt, a.haptol, a.report + it);
  double *hh = a.st.hh + (long)it * a.st.ld;
  for (int j = 0; j <= it + 1; j++) hh[j] = sh.col[j];
  a.st.cc[it]      = sh.cs[it];
  a.st.ss[it]      = sh.sn[it];
  a.st.grs[it]     = sh.grs[it];
  a.st.grs[it + 1] = sh.grs[it + 1];
}

/* The keeper: the flag that says report `ticket` and HH can be read, after them. */
__device__ void publish(const CycleArgs &a, unsigned ticket)
{
  __threadfence_system(); /* the report and HH reach their readers before the flag does */
  *a.done = ticket;
}

/* A grid barrier in whose wait the keeper publishes the report of `ticket`, when `due`: the
   system fence's wait (a trip to the host's memory) overlaps the other blocks' arrival. */
__device__ __forceinline__ void sync_publishing(const CycleArgs &a, cg::grid_group &grid, bool &due, unsigned ticket)
{
  auto token = grid.barrier_arrive();
  if (due) {
    publish(a, ticket);
    due = false;
  }
  grid.barrier_wait(std::move(token));
}

__device__ unsigned long long global_ns()
{
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

/* The keeper, after a full cycle c: whether to restart. Waits for the host's go (or its
   stop, or kGoWaitNs) and looks for a zero on HH's diagonal (the host's back substitution reports
   the breakdown then); when not restarting, says so in the restart's report. */
__device__ bool restart_allowed(const CycleArgs &a, int c)
{
  const unsigned           ticket = a.ticket(c, a.st.max_k);
  const unsigned long long t0     = global_ns();
  bool                     go     = false;
  for (;;) {
    if ((int)(*a.go - ticket) >= 0) {
      go = true;
      break;
    }
    if (*a.stop == a.launch || global_ns() - t0 > kGoWaitNs) break;
  }
  for (int k = 0; go && k < a.st.max_k; k++) go = a.st.hh[(long)k * a.st.ld + k] != 0.0;
  if (!go) {
    a.report[a.st.max_k] = StnGMRESReport{0.0, 0.0, 0, 0, 0};
    publish(a, ticket);
  }
  return go;
}

/* KSPGMRESBuildSoln's back substitution, y = HH^-1 GRS, in its order and without contractions
   (as the host computes it). hh: HH's rows and columns 0..m-1, column-major; y: GRS(0..m-1) on
   entry. One thread. */
__device__ void back_substitute(const double *hh, int m, double *y)
{
  for (int k = m - 1; k >= 0; k--) {
    double t = y[k];
    for (int j = k + 1; j < m; j++) t = __dsub_rn(t, __dmul_rn(hh[j * m + k], y[j]));
    y[k] = t / hh[k * m + k];
  }
}

/* The first part of the restart after a full cycle, by every block, before the host's go: y, and
   x + V y into the unscaled vector and into the rows of w, x untouched (stncycle_cuda.h says what
   a restart computes). After a barrier that follows the cycle's last Hessenberg update. */
__device__ void restart_update(const CycleArgs &a, Shared &sh)
{
  const int m  = a.st.max_k;
  double   *hh = dyn; /* m * m <= wlen * blockDim.x doubles: w is free until x + V y */

  for (int e = threadIdx.x; e < m * m; e += blockDim.x) hh[e] = __ldcg(a.st.hh + (long)(e / m) * a.st.ld + e % m);
  for (int k = threadIdx.x; k < m; k += blockDim.x) sh.h[k] = __ldcg(a.st.grs + k);
  __syncthreads();
  if (threadIdx.x == 0) back_substitute(hh, m, sh.h);
  __syncthreads();

  /* x + V y: VecMAXPBY into a temporary (fma from 0, in k's order), then VecAXPY with 1. */
  for_rows(a.n, [&](int r, long t) {
    double s = 0.0;
    int    k = 0;
    for (; k < a.cached; k++) s = fma(sh.h[k], basis<true>(a, k, r, t), s);
    for (; k < m; k++) s = fma(sh.h[k], basis<false>(a, k, r, t), s);
    const double x = a.x[t] + s;
    a.unscaled[t]  = x;
    w_row(r)       = x;
  });
}

/* The rest of the restart after full cycle c, once the host has said go and after a barrier:
   returns the new residual's norm. */
template <int DOF, int NSTEN>
__device__ double restart(const CycleArgs &a, Shared &sh, int c, cg::grid_group &grid)
{
  const int m = a.st.max_k;

  /* x = x + V y, then V[0] = d .* (b - A x), normalized; x's neighbours from the unscaled vector
     (the same values: every block's rows of it are written before the barrier). */
  for_rows(a.n, [&](int r, long t) { a.x[t] = w_row(r); });
  product_rows<DOF, NSTEN>(a, a.unscaled, 1.0, a.b);
  double sq = 0.0;
  for_rows(a.n, [&](int r, long) { sq = fma(w_row(r), w_row(r), sq); });
  const double res = sqrt(grid_sum(a, sh, sq, grid));
  const double rs  = res != 0.0 && isfinite(res) ? 1.0 / res : 1.0; /* times 1: the same bits */
  for_rows(a.n, [&](int r, long t) { set_basis(a, 0, r, t, w_row(r) * rs); });
  bool due = is_keeper();
  if (due) { /* StnGMRESStart, then the report */
    sh.grs[0] = res;
    *a.st.grs = res;
    a.report[m] = StnGMRESReport{res, 0.0, 0, 0, 1};
  }
  sync_publishing(a, grid, due, a.ticket(c, m)); /* V[0] is whole before the next step reads it */
  return res;
}

/* PREFETCH: the matrix is asked into L2 before each norm's barrier (a compile-time choice: the
   code alone, unused, cost 0.3 us per step at 256^2 x 4). */
template <int DOF, int NSTEN, bool PREFETCH>
/* __grid_constant__: the functions above take the arguments by reference, without a copy. */
__global__ void __launch_bounds__(kThreads) gmres_cycle_kernel(const __grid_constant__ CycleArgs a)
{
  __shared__ Shared sh;
  cg::grid_group    grid = cg::this_grid();
  const int         lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = blockDim.x >> 5;
  const long        nb     = gridDim.x;
  const bool        keeper = is_keeper(); /* the host's flags, the decisions, the Hessenberg updates */
  const int         m      = a.st.max_k;

  if (keeper)
    for (int j = 0; j <= m + 1; j++) {
      sh.grs[j] = a.st.grs[j];
      if (j <= m) sh.cs[j] = a.st.cc[j], sh.sn[j] = a.st.ss[j];
    }

#ifdef STN_CYCLE_TRACE
  if (threadIdx.x == 0) {
    for (int p = 0; p < kTrPhases; p++) sh.trace[p] = 0;
    sh.mark = clock64();
  }
#endif

  /* V[0..it0], written before the launch, into the cache. */
  for (int k = 0; k <= a.it0 && k < a.cached; k++) for_rows(a.n, [&](int r, long t) { cached_row(a, k, r) = a.V[k][t]; });

  int    it = a.it0, cycle = 0, end = a.it1; /* this cycle's steps: it .. end - 1 */
  long   left = a.budget - (a.it1 - a.it0);  /* steps after this cycle */
  double xs   = 0.0;                         /* after a step: its 1 / ||w|| (or 1) */
  bool   due  = false;                       /* the keeper: the previous step's report is still to be flagged */
  for (;;) {
    const unsigned stop  = keeper ? *a.stop : 0u; /* used at the step's end: the load's trip overlaps the step */
    const int      nv    = it + 1;
    const bool     more  = it + 1 < end; /* another step follows in this cycle */
    const bool     fresh = it == 0 || (cycle == 0 && it == a.it0); /* V[it] was written before the launch or by a restart */

    /* 1. This thread's rows of w = d .* (A V[it]), then the block's partial coefficients. V[it]'s
       neighbours in other blocks are read as the previous step's unscaled w times its 1 / ||w||:
       the same bits, and no barrier between its scaling and this product. */
    trace_mark(sh, kTrScale); /* the previous step's end (or the start) to this one's start */
    product_rows<DOF, NSTEN>(a, fresh ? a.V[it] : a.unscaled, fresh ? 1.0 : xs, nullptr);
    trace_mark(sh, kTrProduct);
    const int nc = nv < a.cached ? nv : a.cached; /* V[0 .. nc - 1] are read from shared memory */
    coefficients<true>(a, sh, 0, nc);
    coefficients<false>(a, sh, nc, nv);
    trace_mark(sh, kTrPass1);
    __syncthreads();
    for (int k = warp; k < nv; k += nwarps) block_slot(sh.warp_part, k, a.part, lane);
    trace_mark(sh, kTrBlockSums);
    sync_publishing(a, grid, due, a.ticket(cycle, it - 1));
    trace_mark(sh, kTrBarrier1);

    /* 2. The coefficients, folded by every block alike; then w = w - sum_k h[k] V[k] and the
       block's part of ||w||^2. The vectors are taken newest first, kGroup at a time over all the
       thread's rows: the reverse of pass 1's order, so that this pass starts on the vectors pass 1
       left in L2 (and the next step's pass 1 on those this one left). */
    for (int k = warp; k < nv; k += nwarps) {
      const double v = fold_blocks(a.part + (long)k * nb, nb, lane);
      if (lane == 0) sh.h[k] = v;
    }
    __syncthreads();
    trace_mark(sh, kTrFold1);
    double sq = 0.0;
    subtract<false>(a, sh, nv, nc, nc == 0, more, sq);
    subtract<true>(a, sh, nc, 0, true, more, sq);
    trace_mark(sh, kTrPass2);

    /* 3. tt = ||w||, every block alike, and what comes next (decided before the norm's barrier:
       it does not depend on the norm); V[it + 1] = w / tt (VecNormalize's arithmetic) for the
       thread's own rows, which only this thread reads before the next barrier. */
    if (keeper) a.decision[0] = stop == a.launch ? kEnd : more ? kStep : it + 1 == m && left > 0 && cycle + 1 < a.cycles ? kRestart : kEnd;
    if constexpr (PREFETCH)
      if (more) prefetch_matrix<DOF, NSTEN>(a);
    const double tt = sqrt(grid_sum(a, sh, sq, grid, a.decision));
    xs              = tt != 0.0 ? 1.0 / tt : 1.0;
    for_rows(a.n, [&](int r, long t) { set_basis(a, it + 1, r, t, w_row(r) * xs); });
    if (keeper) { /* sh.h stays until the next fold */
      finish_step(a, sh, it, tt);
      if (sh.next == kStep) due = true; /* published in the next step's first barrier */
      else publish(a, a.ticket(cycle, it));
    }
#ifdef STN_CYCLE_TRACE
    if (threadIdx.x == 0) sh.trace[kTrSteps]++;
#endif
    if (sh.next == kStep) {
      it++;
      continue;
    }
    if (sh.next == kEnd) break;

    /* A restart: x + V y while the host tests the cycle's last step, then the rest once it has
       said go. */
    grid.sync(); /* the cycle's last Hessenberg column is whole */
    restart_update(a, sh);
    if (keeper) a.decision[1] = restart_allowed(a, cycle);
    grid.sync();
    if (threadIdx.x == 0) sh.next = a.decision[1];
    __syncthreads();
    if (!sh.next) break;
    const double res = restart<DOF, NSTEN>(a, sh, cycle, grid);
    if (res == 0.0 || !isfinite(res)) break; /* the host's test ends the solve */
    cycle++;
    it   = 0;
    end  = left < m ? (int)left : m;
    left = left - end;
  }
#ifdef STN_CYCLE_TRACE
  if (threadIdx.x == 0 && blockIdx.x < kTraceBlocks)
    for (int p = 0; p < kTrPhases; p++) stn_cycle_trace[blockIdx.x][p] += sh.trace[p];
#endif
}

/* The host side: the flags (mapped), the keeper's decisions (device), the launches so far, the
   unscaled new vector (device, room for unscaled_n doubles). */
struct CycleControl {
  unsigned *host_stop, *dev_stop, *host_go, *dev_go, *decision, launch;
  double   *unscaled;
  long      unscaled_n;
  long      l2_bytes; /* the device's L2 cache */
  long      smem_per_sm, smem_per_block, smem_reserved; /* shared memory: an SM's, a block's most, the system's per block */
};
CycleControl control;

int control_ready()
{
  int rc;
  if (control.host_stop) return 0;
  if ((rc = check(cudaHostAlloc((void **)&control.host_stop, sizeof(unsigned), cudaHostAllocMapped), "cudaHostAlloc (GMRES cycle stop flag)"))) return rc;
  if ((rc = check(cudaHostAlloc((void **)&control.host_go, sizeof(unsigned), cudaHostAllocMapped), "cudaHostAlloc (GMRES cycle go flag)"))) return rc;
  *(volatile unsigned *)control.host_stop = 0;
  *(volatile unsigned *)control.host_go   = 0;
  if ((rc = check(cudaHostGetDevicePointer((void **)&control.dev_stop, control.host_stop, 0), "cudaHostGetDevicePointer"))) return rc;
  if ((rc = check(cudaHostGetDevicePointer((void **)&control.dev_go, control.host_go, 0), "cudaHostGetDevicePointer"))) return rc;
  int dev, l2;
  if ((rc = check(cudaGetDevice(&dev), "cudaGetDevice")) || (rc = check(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev), "cudaDeviceGetAttribute (L2 size)"))) return rc;
  control.l2_bytes = l2;
  int per_sm, per_block, reserved;
  if ((rc = check(cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, dev), "cudaDeviceGetAttribute (shared memory)")) ||
      (rc = check(cudaDeviceGetAttribute(&per_block, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev), "cudaDeviceGetAttribute (shared memory)")) ||
      (rc = check(cudaDeviceGetAttribute(&reserved, cudaDevAttrReservedSharedMemoryPerBlock, dev), "cudaDeviceGetAttribute (shared memory)")))
    return rc;
  control.smem_per_sm    = per_sm;
  control.smem_per_block = per_block;
  control.smem_reserved  = reserved;
  return check(cudaMalloc((void **)&control.decision, 2 * sizeof(unsigned)), "cudaMalloc (GMRES cycle decisions)");
}

/* Room for the unscaled new vector of n rows (grown, never shrunk: a program solves one size). */
int unscaled_ready(long n)
{
  int rc;
  if (n <= control.unscaled_n) return 0;
  if (control.unscaled && (rc = check(cudaFree(control.unscaled), "cudaFree (GMRES cycle vector)"))) return rc;
  control.unscaled   = nullptr;
  control.unscaled_n = 0;
  if ((rc = check(cudaMalloc((void **)&control.unscaled, (size_t)n * sizeof(double)), "cudaMalloc (GMRES cycle vector)"))) return rc;
  control.unscaled_n = n;
  return 0;
}

/* Whether a launch for this matrix takes the kernel that asks L2 for the matrix. The prefetch pays
   where the matrix takes at most a third of L2 and stays there beside the basis (SFI at 64^3: 15 MB
   of the H200's 60 MiB); a larger one (the cavity's 42 MB) pushes the basis out. After
   control_ready. */
bool prefetches(int dof, int nsten, long n)
{
  return (long)nsten * dof * n * (long)sizeof(double) <= control.l2_bytes / 3;
}

/* The blocks of a launch of instance <DOF, NSTEN, PREFETCH> for n rows: as many as are resident at
   once with kRows rows of w each in shared memory, but no more than the rows need (a small n has
   no idle blocks at the barriers); 0 if n does not fit (more than kRows rows per thread) or the
   device cannot be asked. Asks about that kernel only: CUDA loads a kernel the first time it is
   asked about or launched (lazily), and a program launches one of the two: the other is never
   loaded. */
template <int DOF, int NSTEN, bool PREFETCH>
long blocks_for(long n, int sms)
{
  static int   per_sm; /* resident blocks per SM */
  const size_t w_bytes = (size_t)kRows * kThreads * sizeof(double);
  if (!per_sm) {
    if (cudaFuncSetAttribute(gmres_cycle_kernel<DOF, NSTEN, PREFETCH>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)w_bytes) != cudaSuccess ||
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, gmres_cycle_kernel<DOF, NSTEN, PREFETCH>, kThreads, w_bytes) != cudaSuccess) {
      (void)cudaGetLastError();
      per_sm = 0;
      return 0;
    }
  }
  const long most = (long)per_sm * sms, need = (n + kThreads - 1) / kThreads;
  if (n > most * kThreads * kRows) return 0;
  return need < most ? need : most;
}

/* The dynamic shared memory of a launch of kernel with blocks blocks on sms SMs: the rows of w
   (and room for the restart's HH), then as many basis vectors as fit in what an SM's shared memory
   leaves each of its blocks, at most max_k; sets a->rows, a->wlen, a->cached and *bytes, and lets
   the kernel have that much. Fewer vectors if the blocks would not all be resident. Where the
   matrix streams from DRAM (streaming), kL1Keep of the SM's shared memory is left to L1, which
   holds the loads in flight; where the matrix sits in L2, the cache takes all of it (the sweep of
   these sizes was measured with two 512-thread blocks per SM, not again for one of 1024). */
constexpr long kL1Keep = 64 * 1024;
int plan_shared(const void *kernel, long blocks, int sms, bool streaming, CycleArgs *a, size_t *bytes)
{
  cudaFuncAttributes fa;
  int                rc;
  const int          m        = a->st.max_k;
  const long         resident = (blocks + sms - 1) / sms; /* blocks per SM */
  const int          hh_rows  = (m * m + kThreads - 1) / kThreads; /* the restart's HH, over the block's threads */
  a->rows                     = (int)((a->n + blocks * kThreads - 1) / (blocks * kThreads));
  a->wlen                     = a->rows > hh_rows ? a->rows : hh_rows;
  if ((rc = check(cudaFuncGetAttributes(&fa, kernel), "cudaFuncGetAttributes (GMRES cycle kernel)"))) return rc;
  const long per_sm = streaming && control.smem_per_sm > 2 * kL1Keep ? control.smem_per_sm - kL1Keep : control.smem_per_sm;
  long       room   = per_sm / resident - control.smem_reserved;
  const long limit  = control.smem_per_block;
  room              = (room < limit ? room : limit) - (long)fa.sharedSizeBytes;
  const long vector = (long)a->rows * kThreads * sizeof(double), fixed = (long)a->wlen * kThreads * sizeof(double);
  a->cached         = room > fixed ? (int)((room - fixed) / vector) : 0;
  if (a->cached > m) a->cached = m;
  for (;; a->cached--) {
    int fit;
    *bytes = (size_t)(fixed + a->cached * vector);
    if ((rc = check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)*bytes), "cudaFuncSetAttribute (GMRES cycle kernel)"))) return rc;
    if ((rc = check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&fit, kernel, kThreads, *bytes), "cudaOccupancyMaxActiveBlocksPerMultiprocessor (GMRES cycle kernel)"))) return rc;
    if ((long)fit * sms >= blocks || a->cached == 0) return 0;
  }
}

/* What to do with an instance: how many blocks it takes (args NULL), or launch it. */
struct Instance {
  long       n;
  int        sms;
  CycleArgs *args;
  long       npartials;
  bool       prefetch; /* the kernel that asks L2 for the matrix (prefetches) */
  template <int DOF, int NSTEN>
  int run() const
  {
    const long blocks = prefetch ? blocks_for<DOF, NSTEN, true>(n, sms) : blocks_for<DOF, NSTEN, false>(n, sms);
    if (!args) return blocks > 0;
    if (!blocks) return StnCUDARecordError((int)cudaErrorInvalidValue, "StnGMRESCycleLaunch: n does not fit the cycle kernel (StnGMRESCycleFits)");
    if (blocks * kSlots > npartials) return StnCUDARecordError((int)cudaErrorInvalidValue, "StnGMRESCycleLaunch: the partial sums do not fit the scratch");
    void       *p[]   = {args};
    const void *kernel = prefetch ? (const void *)gmres_cycle_kernel<DOF, NSTEN, true> : (const void *)gmres_cycle_kernel<DOF, NSTEN, false>;
    size_t      bytes;
    if (int rc = plan_shared(kernel, blocks, sms, !prefetch, args, &bytes)) return rc;
    return check(cudaLaunchCooperativeKernel(kernel, dim3((unsigned)blocks), dim3(kThreads), p, bytes, 0), "the GMRES cycle kernel");
  }
};

} // namespace

extern "C" int StnGMRESCycleFits(const StnBox *box, long n)
{
  StnGMRESScratch s;
  unsigned        first;
  if (n < 1 || !box || StnGMRESGetScratch(&s, 0, &first) || !s.cooperative || control_ready()) return 0;
  return with_instance(box->dof, box->nsten, Instance{n, s.sms, nullptr, 0, prefetches(box->dof, box->nsten, n)});
}

extern "C" int StnGMRESCycleLaunch(StnGMRESState *st, const StnGMRESCycleArgs *in, unsigned *first)
{
  StnGMRESScratch s;
  CycleArgs       a;
  int             rc;
  const int       m = st->max_k;

  if (in->it0 < 0 || in->it1 <= in->it0 || in->it1 > m || in->budget < in->it1 - in->it0) return StnCUDARecordError((int)cudaErrorInvalidValue, "StnGMRESCycleLaunch: the steps are out of range");
  if (in->cycles < 1 || in->cycles > STN_GMRES_MAX_CYCLES) return StnCUDARecordError((int)cudaErrorInvalidValue, "StnGMRESCycleLaunch: cycles out of range");
  if (in->cycles > 1 && (!in->x || !in->b)) return StnCUDARecordError((int)cudaErrorInvalidValue, "StnGMRESCycleLaunch: restarts need x and b");
  if ((rc = StnSGDIAGeometry(in->box, 0, true, &a.g))) return rc;
  if (a.g.nrows != in->n) return StnCUDARecordError((int)cudaErrorInvalidValue, "StnGMRESCycleLaunch: the matrix's rows are not the vectors' length");
  a.cycles = in->cycles;
  if ((rc = control_ready()) || (rc = unscaled_ready(in->n)) || (rc = StnGMRESGetScratch(&s, (unsigned)(a.cycles * (m + 1)), &a.first))) return rc;
  a.A = in->A;
  a.d = in->d;
  a.b = in->b;
  a.x = in->x;
  for (int k = 0; k < STN_VEC_MAX_MULTI; k++) a.V[k] = in->V[k <= m ? k : 0];
  a.n        = in->n;
  a.budget   = in->budget;
  a.it0      = in->it0;
  a.it1      = in->it1;
  a.haptol   = in->haptol;
  a.st       = *st;
  a.report   = s.report;
  a.part     = s.partials;
  a.done     = s.done;
  a.launch   = ++control.launch;
  a.stop     = control.dev_stop;
  a.go       = control.dev_go;
  a.decision = control.decision;
  a.unscaled = control.unscaled;
  *first     = a.first;
  return with_instance(a.g.dof, a.g.nsten, Instance{in->n, s.sms, &a, s.npartials, prefetches(a.g.dof, a.g.nsten, a.n)});
}

#ifdef STN_CYCLE_TRACE
extern "C" int StnGMRESCycleTraceRead(unsigned long long *out, int blocks, int reset)
{
  static unsigned long long zero[kTraceBlocks][kTrPhases];
  int                       rc = 0;
  if (out) rc = check(cudaMemcpyFromSymbol(out, stn_cycle_trace, (size_t)(blocks < kTraceBlocks ? blocks : kTraceBlocks) * kTrPhases * sizeof(unsigned long long)), "cudaMemcpyFromSymbol (cycle trace)");
  if (!rc && reset) rc = check(cudaMemcpyToSymbol(stn_cycle_trace, zero, sizeof zero), "cudaMemcpyToSymbol (cycle trace)");
  return rc;
}
#endif

extern "C" int StnGMRESCycleGo(unsigned ticket)
{
  if (control.host_go) *(volatile unsigned *)control.host_go = ticket;
  return 0;
}

extern "C" int StnGMRESCycleStop(void)
{
  if (control.host_stop) *(volatile unsigned *)control.host_stop = control.launch;
  return 0;
}
