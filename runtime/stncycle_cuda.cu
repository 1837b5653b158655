/* stncycle_cuda.cu: restart cycles of GMRES in one cooperative kernel (API: stncycle_cuda.h).

   One launch runs the steps of a cycle one after another; all blocks are resident (a cooperative
   launch) and meet at two grid-wide barriers per step:

     1. w = d .* (A V[it]) for the thread's rows (sgdia_rows.h), kept on the chip; the block's
        partial sums of the coefficients V[k]^T w, k = 0..it;                          barrier
     2. every block folds the coefficients (the same code on the same data: the same bits in every
        block) into h; w = w - sum_k h[k] V[k] (newest first), the block's part of ||w||^2, and w
        itself, unscaled, into a vector of its own; block 0 reads the host's stop flag (the read
        was issued at the step's start, so its trip over the bus overlaps the step) and publishes
        what comes next: a step, a restart or the end; where the matrix is small beside L2, every
        thread asks L2 for its rows of the matrix, so that the next product finds them there;
                                                                                        barrier
     3. every block folds tt = ||w|| and writes V[it + 1] = w / tt for its own rows, and the next
        step's product reads V[it + 1]'s neighbours as the unscaled w times 1 / tt, the same bits
        as V[it + 1]'s: the scaled vector needs no barrier of its own (session 9: a third barrier
        per step until then).

   The Hessenberg update of step it (one thread, a few hundred cycles at it = 30) is done by
   thread 0 of block 0 after the second barrier, while the others start step it + 1: nothing in
   the next step waits for it, only the host, through the report.

   A restart (after a full cycle, once the host says go) takes four more barriers: every block
   solves the triangular system for y itself (one thread, 465 multiply-subtracts at max_k = 30);
   x = x + V y for its rows;                                                             barrier
   w = d .* (b - A x) and the block's part of ||w||^2;                                   barrier
   res = ||w||, V[0] = w / res;                                                          barrier
   and the next cycle's first step reads V[0].

   Coherence. The basis, x and the unscaled new vector are written and read within the launch,
   and their loads use the L1 cache (the product reads each x entry up to dof * nsten times). A
   grid barrier is a release by every thread and an acquire by every thread after it
   (cooperative_groups: a fence, then ld.acquire.gpu), so a load after the barrier sees every
   store before it, in whatever block, even where the SM read the line before (the acquire
   invalidates L1): step it writes the unscaled w, read by other threads only after the norm's
   barrier and rewritten only after the next step's first barrier; V[it + 1] is read by the
   thread that wrote it (its own rows) until the kernel ends; a restart writes x and V[0], read
   only after the next barrier. The partial sums are rewritten every step and read through L2
   (__ldcg).

   A thread holds up to kRows rows of the new vector, in shared memory (registers would need the
   row loops unrolled: kRows copies of the product, and minutes of compilation); kThreads per
   block. */
#include "stncycle_cuda.h"

#include "sgdia_instances.h"
#include "sgdia_rows.h"
#include "stnreduce.h"

#include <cooperative_groups.h>
#include <cuda_runtime.h>

namespace {

using namespace stn_sgdia;
using namespace stn_reduce;
namespace cg = cooperative_groups;

/* Blocks of 1024 threads with 4 rows each (half the blocks at each barrier) took 30.8 us per step
   at 256^2 x 4 against 31.6, but 31.2 at 64^3 against 29.5 (H200, session 8). */
constexpr int kThreads = 512; /* per block */
constexpr int kRows    = 8;   /* the most rows a thread holds */
constexpr int kGroup   = 8;   /* coefficients accumulated at once (registers) */
constexpr int kSlots   = STN_VEC_MAX_MULTI + 1; /* partial sums per block: the coefficients, then ||w||^2 */
constexpr unsigned long long kGoWaitNs = 20000000; /* how long a restart waits for the host's go */

int check(cudaError_t err, const char *what)
{
  return err == cudaSuccess ? 0 : StnCUDARecordError((int)err, what);
}

struct CycleArgs {
  Geometry            g;
  const double       *A, *d, *b;
  double             *x;
  double             *V[STN_VEC_MAX_MULTI];
  double             *unscaled; /* n doubles: the new vector w before its scaling by 1 / ||w|| */
  long                n, budget;
  int                 it0, it1, cycles;
  double              haptol;
  StnGMRESState       st;
  StnGMRESReport     *report; /* report[it]: mapped host memory; report[max_k]: the restarts' */
  double             *part;   /* slot k of block b at part[k * gridDim.x + b] */
  unsigned           *done;   /* mapped: the ticket of the newest report */
  unsigned            first, launch;
  volatile unsigned  *stop;     /* mapped: the host writes launch here to end the kernel */
  volatile unsigned  *go;       /* mapped: the host writes a restart's ticket here to let it go */
  volatile unsigned  *decision; /* device: block 0's decisions, read by every block after a
                                   barrier: [0] after each step, [1] at a restart */
  __device__ unsigned ticket(int cycle, int it) const { return first + (unsigned)(cycle * (st.max_k + 1) + it); }
};

/* What follows a step. */
enum { kEnd, kStep, kRestart };

/* The block's shared memory. */
struct Shared {
  double warp_part[32][kSlots + 1]; /* +1: the warps' rows fall in different banks */
  double h[STN_VEC_MAX_MULTI];      /* the step's coefficients; at a restart, y */
  double tt;
  double col[STN_VEC_MAX_MULTI + 2], cs[STN_VEC_MAX_MULTI], sn[STN_VEC_MAX_MULTI], grs[STN_VEC_MAX_MULTI + 2]; /* block 0's keeper only */
  double w[kRows][kThreads]; /* the thread's rows of the new vector, through the step; at a restart, HH */
  int    next;
};

/* The sum of the nb values at p (one per block), by one warp, in a fixed order: lane l adds
   entries l, l + 32, ... into four sums, then the lanes fold. In lane 0. (Issuing all the loads
   of up to 512 blocks before the sums, through L1 so that the blocks of an SM share them, made
   the step 0.9-1.0 us slower on the H200, session 9.) */
__device__ double fold_blocks(const double *p, long nb, int lane)
{
  double v[4] = {0.0, 0.0, 0.0, 0.0};
  long   j    = lane;
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
   a barrier, the fold. sh.warp_part's last column must not be in use. With decision, also reads
   *decision after the barrier into sh.next. */
__device__ double grid_sum(const CycleArgs &a, Shared &sh, double sq, cg::grid_group &grid, const volatile unsigned *decision = nullptr)
{
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const double v = warp_fold<Sum>(sq);
  if (lane == 0) sh.warp_part[warp][kSlots - 1] = v;
  __syncthreads();
  if (warp == 0) block_slot(sh.warp_part, kSlots - 1, a.part, lane);
  grid.sync();
  if (warp == 0) {
    const double s = fold_blocks(a.part + (long)(kSlots - 1) * gridDim.x, gridDim.x, lane);
    if (lane == 0) {
      sh.tt = s;
      if (decision) sh.next = *decision;
    }
  }
  __syncthreads();
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
__device__ __forceinline__ void product_rows(const CycleArgs &a, Shared &sh, const double *x, double xs, const double *b)
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
    sh.w[r][threadIdx.x] = active ? (a.d ? __ldg(a.d + t) * u : u) : 0.0;
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

/* Thread 0 of block 0: step it's Hessenberg update (hessenberg_update on the column h, tt, with
   the rotations and the right-hand side kept in shared memory through the cycle), its results
   into st for the host's solution, then the report and the flag. */
__device__ void finish_step(const CycleArgs &a, Shared &sh, int cycle, int it, double tt)
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
  __threadfence_system(); /* the report and HH reach their readers before the flag does */
  *a.done = a.ticket(cycle, it);
}

__device__ unsigned long long global_ns()
{
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

/* Thread 0 of block 0, after a full cycle c: whether to restart. Waits for the host's go (or its
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
    __threadfence_system();
    *a.done = ticket;
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

/* The restart after full cycle c, by every block (stncycle_cuda.h says what it computes): returns
   the new residual's norm. */
template <int DOF, int NSTEN>
__device__ double restart(const CycleArgs &a, Shared &sh, int c, cg::grid_group &grid)
{
  const int m  = a.st.max_k;
  double   *hh = &sh.w[0][0]; /* m * m <= 31 * 31 doubles: w is free until the residual */

  for (int e = threadIdx.x; e < m * m; e += blockDim.x) hh[e] = __ldcg(a.st.hh + (long)(e / m) * a.st.ld + e % m);
  for (int k = threadIdx.x; k < m; k += blockDim.x) sh.h[k] = __ldcg(a.st.grs + k);
  __syncthreads();
  if (threadIdx.x == 0) back_substitute(hh, m, sh.h);
  __syncthreads();

  /* x = x + V y: VecMAXPBY into a temporary (fma from 0, in k's order), then VecAXPY with 1. */
  for_rows(a.n, [&](int, long t) {
    double s = 0.0;
    for (int k = 0; k < m; k++) s = fma(sh.h[k], a.V[k][t], s);
    a.x[t] = a.x[t] + s;
  });
  grid.sync();

  /* V[0] = d .* (b - A x), normalized. */
  product_rows<DOF, NSTEN>(a, sh, a.x, 1.0, a.b);
  double sq = 0.0;
  for_rows(a.n, [&](int r, long) { sq = fma(sh.w[r][threadIdx.x], sh.w[r][threadIdx.x], sq); });
  const double res = sqrt(grid_sum(a, sh, sq, grid));
  const double rs  = res != 0.0 && isfinite(res) ? 1.0 / res : 1.0; /* times 1: the same bits */
  for_rows(a.n, [&](int r, long t) { a.V[0][t] = sh.w[r][threadIdx.x] * rs; });
  if (blockIdx.x == 0 && threadIdx.x == 0) { /* StnGMRESStart, then the report */
    sh.grs[0] = res;
    *a.st.grs = res;
    a.report[m] = StnGMRESReport{res, 0.0, 0, 0, 1};
    __threadfence_system();
    *a.done = a.ticket(c, m);
  }
  grid.sync(); /* V[0] is whole before the next step reads it */
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
  const bool        keeper = blockIdx.x == 0 && threadIdx.x == 0; /* does the Hessenberg updates */
  const int         m      = a.st.max_k;

  if (keeper)
    for (int j = 0; j <= m + 1; j++) {
      sh.grs[j] = a.st.grs[j];
      if (j <= m) sh.cs[j] = a.st.cc[j], sh.sn[j] = a.st.ss[j];
    }

  int    it = a.it0, cycle = 0, end = a.it1; /* this cycle's steps: it .. end - 1 */
  long   left = a.budget - (a.it1 - a.it0);  /* steps after this cycle */
  double xs   = 0.0;                         /* after a step: its 1 / ||w|| (or 1) */
  for (;;) {
    const unsigned stop  = keeper ? *a.stop : 0u; /* used at the step's end: the load's trip overlaps the step */
    const int      nv    = it + 1;
    const bool     more  = it + 1 < end; /* another step follows in this cycle */
    const bool     fresh = it == 0 || (cycle == 0 && it == a.it0); /* V[it] was written before the launch or by a restart */

    /* 1. This thread's rows of w = d .* (A V[it]), then the block's partial coefficients. V[it]'s
       neighbours in other blocks are read as the previous step's unscaled w times its 1 / ||w||:
       the same bits, and no barrier between its scaling and this product. */
    product_rows<DOF, NSTEN>(a, sh, fresh ? a.V[it] : a.unscaled, fresh ? 1.0 : xs, nullptr);
    for (int k0 = 0; k0 < nv; k0 += kGroup) {
      double acc[kGroup];
#pragma unroll
      for (int j = 0; j < kGroup; j++) acc[j] = 0.0;
      for_rows(a.n, [&](int r, long t) {
        const double wr = sh.w[r][threadIdx.x];
#pragma unroll
        for (int j = 0; j < kGroup; j++)
          if (k0 + j < nv) acc[j] = fma(wr, a.V[k0 + j][t], acc[j]);
      });
#pragma unroll
      for (int j = 0; j < kGroup; j++)
        if (k0 + j < nv) {
          const double v = warp_fold<Sum>(acc[j]);
          if (lane == 0) sh.warp_part[warp][k0 + j] = v;
        }
    }
    __syncthreads();
    for (int k = warp; k < nv; k += nwarps) block_slot(sh.warp_part, k, a.part, lane);
    grid.sync();

    /* 2. The coefficients, folded by every block alike; then w = w - sum_k h[k] V[k] and the
       block's part of ||w||^2. The vectors are taken newest first, kGroup at a time over all the
       thread's rows: the reverse of pass 1's order, so that this pass starts on the vectors pass 1
       left in L2 (and the next step's pass 1 on those this one left). */
    for (int k = warp; k < nv; k += nwarps) {
      const double v = fold_blocks(a.part + (long)k * nb, nb, lane);
      if (lane == 0) sh.h[k] = v;
    }
    __syncthreads();
    double sq = 0.0;
    for (int k1 = nv; k1 > 0; k1 -= kGroup) { /* the vectors k1 - kGroup .. k1 - 1 (from 0) */
      for_rows(a.n, [&](int r, long t) {
        double s = sh.w[r][threadIdx.x];
#pragma unroll
        for (int j = 1; j <= kGroup; j++)
          if (k1 - j >= 0) s = fma(-sh.h[k1 - j], a.V[k1 - j][t], s);
        sh.w[r][threadIdx.x] = s;
        if (k1 <= kGroup) {
          sq = fma(s, s, sq);
          if (more) a.unscaled[t] = s;
        }
      });
    }

    /* 3. tt = ||w||, every block alike, and what comes next (decided before the norm's barrier:
       it does not depend on the norm); V[it + 1] = w / tt (VecNormalize's arithmetic) for the
       thread's own rows, which only this thread reads before the next barrier. */
    if (keeper) a.decision[0] = stop == a.launch ? kEnd : more ? kStep : it + 1 == m && left > 0 && cycle + 1 < a.cycles ? kRestart : kEnd;
    if constexpr (PREFETCH)
      if (more) prefetch_matrix<DOF, NSTEN>(a);
    const double tt = sqrt(grid_sum(a, sh, sq, grid, a.decision));
    double      *y  = a.V[it + 1];
    xs              = tt != 0.0 ? 1.0 / tt : 1.0;
    for_rows(a.n, [&](int r, long t) { y[t] = sh.w[r][threadIdx.x] * xs; });
    if (keeper) finish_step(a, sh, cycle, it, tt); /* sh.h stays until the next fold */
    if (sh.next == kStep) {
      it++;
      continue;
    }
    if (sh.next == kEnd) break;

    /* A restart, once the host has tested the cycle's last step and said go. */
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
}

/* The host side: the flags (mapped), block 0's decisions (device), the launches so far, the
   unscaled new vector (device, room for unscaled_n doubles). */
struct CycleControl {
  unsigned *host_stop, *dev_stop, *host_go, *dev_go, *decision, launch;
  double   *unscaled;
  long      unscaled_n;
  long      l2_bytes; /* the device's L2 cache */
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

/* The blocks of a launch of instance <DOF, NSTEN> (either kernel) for n rows: as many as are
   resident at once, but no more than the rows need (a small n has no idle blocks at the
   barriers); 0 if n does not fit (more than kRows rows per thread) or the device cannot be
   asked. */
template <int DOF, int NSTEN>
long blocks_for(long n, int sms)
{
  static int per_sm; /* of the instance's two kernels, the fewer resident */
  if (!per_sm) {
    int plain, prefetching;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&plain, gmres_cycle_kernel<DOF, NSTEN, false>, kThreads, 0) != cudaSuccess ||
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&prefetching, gmres_cycle_kernel<DOF, NSTEN, true>, kThreads, 0) != cudaSuccess) {
      (void)cudaGetLastError();
      return 0;
    }
    per_sm = plain < prefetching ? plain : prefetching;
  }
  const long most = (long)per_sm * sms, need = (n + kThreads - 1) / kThreads;
  if (n > most * kThreads * kRows) return 0;
  return need < most ? need : most;
}

/* What to do with an instance: how many blocks it takes (args NULL), or launch it. */
struct Instance {
  long       n;
  int        sms;
  CycleArgs *args;
  long       npartials;
  bool       prefetch; /* launch the instance that asks L2 for the matrix */
  template <int DOF, int NSTEN>
  int run() const
  {
    const long blocks = blocks_for<DOF, NSTEN>(n, sms);
    if (!args) return blocks > 0;
    if (!blocks) return StnCUDARecordError((int)cudaErrorInvalidValue, "StnGMRESCycleLaunch: n does not fit the cycle kernel (StnGMRESCycleFits)");
    if (blocks * kSlots > npartials) return StnCUDARecordError((int)cudaErrorInvalidValue, "StnGMRESCycleLaunch: the partial sums do not fit the scratch");
    void *p[] = {args};
    const void *kernel = prefetch ? (const void *)gmres_cycle_kernel<DOF, NSTEN, true> : (const void *)gmres_cycle_kernel<DOF, NSTEN, false>;
    return check(cudaLaunchCooperativeKernel(kernel, dim3((unsigned)blocks), dim3(kThreads), p, 0, 0), "the GMRES cycle kernel");
  }
};

} // namespace

extern "C" int StnGMRESCycleFits(const StnBox *box, long n)
{
  StnGMRESScratch s;
  unsigned        first;
  if (n < 1 || !box || StnGMRESGetScratch(&s, 0, &first) || !s.cooperative) return 0;
  return with_instance(box->dof, box->nsten, Instance{n, s.sms, nullptr, 0, false});
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
  /* The prefetch pays where the matrix takes at most a third of L2 and stays there beside the basis:
     27.1 against 28.0 us per step at 64^3 (15 MB) on the H200's 60 MiB; at 256^2 x 4 (42 MB) it
     pushed the basis out of L2, 33.5 against 31.3 (session 9, docs/codegen-decisions.md). */
  const bool prefetch = (long)a.g.nsten * a.g.dof * a.n * (long)sizeof(double) <= control.l2_bytes / 3;
  *first     = a.first;
  return with_instance(a.g.dof, a.g.nsten, Instance{in->n, s.sms, &a, s.npartials, prefetch});
}

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
