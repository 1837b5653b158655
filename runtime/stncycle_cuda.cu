/* stncycle_cuda.cu: a restart cycle of GMRES in one cooperative kernel (API: stncycle_cuda.h).

   One launch runs the steps of a cycle one after another; all blocks are resident (a cooperative
   launch) and meet at three grid-wide barriers per step:

     1. w = d .* (A V[it]) for the thread's rows (sgdia_rows.h), kept in registers; the block's
        partial sums of the coefficients V[k]^T w, k = 0..it;                          barrier
     2. every block folds the coefficients (the same code on the same data: the same bits in every
        block) into h; w = w - sum_k h[k] V[k] and the block's part of ||w||^2;        barrier
     3. every block folds tt = ||w|| and writes V[it + 1] = w / tt for its rows;        barrier
        block 0 reads the host's stop flag (the read was issued at the step's start, so its trip
        over the bus overlaps the step) and publishes whether to go on.

   The Hessenberg update of step it (one thread, a few hundred cycles at it = 30) is done by
   thread 0 of block 0 after the third barrier, while the others start step it + 1: nothing in the
   next step waits for it, only the host, through the report.

   Coherence. The basis is written and read within the launch. The loads of V use the L1 cache
   (the product reads each x entry up to dof * nsten times), which is safe because no SM reads a
   vector before it is complete: step it writes V[it + 1], and the first read of V[it + 1] in this
   launch comes after the barrier that ends step it, so no L1 holds a stale line of it. The
   partial sums are rewritten every step and read through L2 (__ldcg) only.

   A thread holds up to kRows rows of the new vector, in shared memory (registers would need the
   row loops unrolled: kRows copies of the product, and minutes of compilation); kThreads per
   block. */
#include "stncycle_cuda.h"

#include "sgdia_rows.h"
#include "stnreduce.h"

#include <cooperative_groups.h>
#include <cuda_runtime.h>

namespace {

using namespace stn_sgdia;
using namespace stn_reduce;
namespace cg = cooperative_groups;

constexpr int kThreads = 512; /* per block */
constexpr int kRows    = 8;   /* the most rows a thread holds */
constexpr int kGroup   = 8;   /* coefficients accumulated at once (registers) */
constexpr int kSlots   = STN_VEC_MAX_MULTI + 1; /* partial sums per block: the coefficients, then ||w||^2 */

int check(cudaError_t err, const char *what)
{
  return err == cudaSuccess ? 0 : StnCUDARecordError((int)err, what);
}

struct CycleArgs {
  Geometry            g;
  const double       *A, *d;
  double             *V[STN_VEC_MAX_MULTI];
  long                n;
  int                 it0, it1;
  double              haptol;
  StnGMRESState       st;
  StnGMRESReport     *report; /* report[it]: mapped host memory */
  double             *part;   /* slot k of block b at part[k * gridDim.x + b] */
  unsigned           *done;   /* mapped: first + it - it0 once step it's report is there */
  unsigned            first, cycle;
  volatile unsigned  *stop; /* mapped: the host writes cycle here to end the kernel */
  volatile unsigned  *go_on; /* device: block 0's decision, read by every block after the barrier */
};

/* The sum of the nb values at p (one per block), by one warp, in a fixed order: lane l adds
   entries l, l + 32, ... into four sums, then the lanes fold. In lane 0. */
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

/* Thread 0 of block 0: step it's Hessenberg update (hessenberg_update on the column h, tt, with
   the rotations and the right-hand side kept in shared memory through the cycle), its results
   into st for the host's solution, then the report and the flag. */
__device__ void finish_step(const CycleArgs &a, int it, const double *h, double tt, double *col, double *cs, double *sn, double *grs)
{
  for (int j = 0; j <= it; j++) col[j] = h[j];
  *a.st.tt = tt;
  hessenberg_update(col, cs, sn, grs, it, tt, a.haptol, a.report + it);
  double *hh = a.st.hh + (long)it * a.st.ld;
  for (int j = 0; j <= it + 1; j++) hh[j] = col[j];
  a.st.cc[it]      = cs[it];
  a.st.ss[it]      = sn[it];
  a.st.grs[it]     = grs[it];
  a.st.grs[it + 1] = grs[it + 1];
  __threadfence_system(); /* the report and HH reach their readers before the flag does */
  *a.done = a.first + (unsigned)(it - a.it0);
}

template <int DOF, int NSTEN>
__global__ void __launch_bounds__(kThreads) gmres_cycle_kernel(const CycleArgs a)
{
  __shared__ double warp_part[32][kSlots + 1]; /* +1: the warps' rows fall in different banks */
  __shared__ double h[STN_VEC_MAX_MULTI], tt_shared;
  __shared__ double col[STN_VEC_MAX_MULTI + 2], cs[STN_VEC_MAX_MULTI], sn[STN_VEC_MAX_MULTI], grs[STN_VEC_MAX_MULTI + 2];
  __shared__ double w[kRows][kThreads]; /* the thread's rows of the new vector, through the step */
  __shared__ bool   go_on;
  cg::grid_group    grid = cg::this_grid();
  const int         lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = blockDim.x >> 5;
  const long        stride = (long)gridDim.x * blockDim.x, first = (long)blockIdx.x * blockDim.x + threadIdx.x;
  const long        nb     = gridDim.x;
  const bool        keeper = blockIdx.x == 0 && threadIdx.x == 0; /* does the Hessenberg updates */

  if (keeper)
    for (int j = 0; j <= a.st.max_k + 1; j++) {
      grs[j] = a.st.grs[j];
      if (j <= a.st.max_k) cs[j] = a.st.cc[j], sn[j] = a.st.ss[j];
    }

  int it = a.it0;
  for (;;) {
    const unsigned stop = keeper ? *a.stop : 0u; /* used at the step's end: the load's trip overlaps the step */
    const int      nv   = it + 1;

    /* 1. This thread's rows of w = d .* (A V[it]), then the block's partial coefficients. A warp
       past the end stops (the product's warp vote needs every lane; rows grow with r). */
#pragma unroll 1
    for (int r = 0; r < kRows; r++) {
      const long t = first + r * stride;
      if (t - lane >= a.n) break;
      const bool   active = t < a.n;
      const double v      = row_value<DOF, NSTEN, true, false>(a.g, a.A, a.V[it], (int)t, active);
      w[r][threadIdx.x]   = active ? (a.d ? __ldg(a.d + t) * v : v) : 0.0;
    }
    for (int k0 = 0; k0 < nv; k0 += kGroup) {
      double acc[kGroup];
#pragma unroll
      for (int j = 0; j < kGroup; j++) acc[j] = 0.0;
#pragma unroll 1
      for (int r = 0; r < kRows; r++) {
        const long t = first + r * stride;
        if (t >= a.n) break;
        const double wr = w[r][threadIdx.x];
#pragma unroll
        for (int j = 0; j < kGroup; j++)
          if (k0 + j < nv) acc[j] = fma(wr, a.V[k0 + j][t], acc[j]);
      }
#pragma unroll
      for (int j = 0; j < kGroup; j++)
        if (k0 + j < nv) {
          const double v = warp_fold<Sum>(acc[j]);
          if (lane == 0) warp_part[warp][k0 + j] = v;
        }
    }
    __syncthreads();
    for (int k = warp; k < nv; k += nwarps) block_slot(warp_part, k, a.part, lane);
    grid.sync();

    /* 2. The coefficients, folded by every block alike; then w = w - sum_k h[k] V[k] (MAXPY's
       order) and the block's part of ||w||^2. */
    for (int k = warp; k < nv; k += nwarps) {
      const double v = fold_blocks(a.part + (long)k * nb, nb, lane);
      if (lane == 0) h[k] = v;
    }
    __syncthreads();
    double sq = 0.0;
#pragma unroll 1
    for (int r = 0; r < kRows; r++) {
      const long t = first + r * stride;
      if (t >= a.n) break;
      double s = w[r][threadIdx.x];
      for (int k = 0; k < nv; k++) s = fma(-h[k], a.V[k][t], s);
      w[r][threadIdx.x] = s;
      sq                = fma(s, s, sq);
    }
    {
      const double v = warp_fold<Sum>(sq);
      if (lane == 0) warp_part[warp][kSlots - 1] = v;
    }
    __syncthreads();
    if (warp == 0) block_slot(warp_part, kSlots - 1, a.part, lane);
    grid.sync();

    /* 3. tt = ||w||, every block alike; V[it + 1] = w / tt (VecNormalize's arithmetic). */
    if (warp == 0) {
      const double v = fold_blocks(a.part + (long)(kSlots - 1) * nb, nb, lane);
      if (lane == 0) tt_shared = sqrt(v);
    }
    __syncthreads();
    const double tt = tt_shared;
    double      *y  = a.V[it + 1];
#pragma unroll 1
    for (int r = 0; r < kRows; r++) {
      const long t = first + r * stride;
      if (t >= a.n) break;
      y[t] = tt != 0.0 ? w[r][threadIdx.x] * (1.0 / tt) : w[r][threadIdx.x];
    }
    if (keeper) *a.go_on = it + 1 < a.it1 && stop != a.cycle;
    grid.sync();
    if (threadIdx.x == 0) go_on = *a.go_on;
    __syncthreads();
    if (keeper) finish_step(a, it, h, tt, col, cs, sn, grs); /* h and tt_shared stay until the next fold */
    if (!go_on) break;
    it++;
  }
}

/* The host side: the stop flag (mapped), block 0's decision (device), the cycles launched. */
struct CycleControl {
  unsigned *host_stop, *dev_stop, *go_on, cycle;
};
CycleControl control;

int control_ready()
{
  int rc;
  if (control.host_stop) return 0;
  if ((rc = check(cudaHostAlloc((void **)&control.host_stop, sizeof(unsigned), cudaHostAllocMapped), "cudaHostAlloc (GMRES cycle stop flag)"))) return rc;
  *(volatile unsigned *)control.host_stop = 0;
  if ((rc = check(cudaHostGetDevicePointer((void **)&control.dev_stop, control.host_stop, 0), "cudaHostGetDevicePointer"))) return rc;
  return check(cudaMalloc((void **)&control.go_on, sizeof(unsigned)), "cudaMalloc (GMRES cycle decision)");
}

/* The blocks of a launch of instance <DOF, NSTEN> for n rows: as many as are resident at once,
   but no more than the rows need (a small n has no idle blocks at the barriers); 0 if n does not
   fit (more than kRows rows per thread) or the device cannot be asked. */
template <int DOF, int NSTEN>
long blocks_for(long n, int sms)
{
  static int per_sm;
  if (!per_sm && cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, gmres_cycle_kernel<DOF, NSTEN>, kThreads, 0) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
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
  template <int DOF, int NSTEN>
  int run() const
  {
    const long blocks = blocks_for<DOF, NSTEN>(n, sms);
    if (!args) return blocks > 0;
    if (!blocks) return StnCUDARecordError((int)cudaErrorInvalidValue, "StnGMRESCycleLaunch: n does not fit the cycle kernel (StnGMRESCycleFits)");
    if (blocks * kSlots > npartials) return StnCUDARecordError((int)cudaErrorInvalidValue, "StnGMRESCycleLaunch: the partial sums do not fit the scratch");
    void *p[] = {args};
    return check(cudaLaunchCooperativeKernel((const void *)gmres_cycle_kernel<DOF, NSTEN>, dim3((unsigned)blocks), dim3(kThreads), p, 0, 0), "the GMRES cycle kernel");
  }
};

/* The instances: those of the product (sgdia_cuda.cu), dof 1 to 4 and the common stencils, and
   one with run-time bounds for the others. */
template <int DOF>
int with_nsten(int nsten, const Instance &f)
{
  switch (nsten) {
  case 5: return f.run<DOF, 5>();
  case 7: return f.run<DOF, 7>();
  case 9: return f.run<DOF, 9>();
  case 13: return f.run<DOF, 13>();
  case 19: return f.run<DOF, 19>();
  case 25: return f.run<DOF, 25>();
  case 27: return f.run<DOF, 27>();
  default: return f.run<DOF, 0>();
  }
}

int with_instance(int dof, int nsten, const Instance &f)
{
  switch (dof) {
  case 1: return with_nsten<1>(nsten, f);
  case 2: return with_nsten<2>(nsten, f);
  case 3: return with_nsten<3>(nsten, f);
  case 4: return with_nsten<4>(nsten, f);
  default: return with_nsten<0>(nsten, f);
  }
}

} // namespace

extern "C" int StnGMRESCycleFits(const StnBox *box, long n)
{
  StnGMRESScratch s;
  unsigned        first;
  if (n < 1 || !box || StnGMRESGetScratch(&s, 0, &first) || !s.cooperative) return 0;
  return with_instance(box->dof, box->nsten, Instance{n, s.sms, nullptr, 0});
}

extern "C" int StnGMRESCycleLaunch(StnGMRESState *st, const StnBox *box, const double *A, const double *d, int it0, int it1, double haptol, double *const V[], long n,
                                   unsigned ticket[])
{
  StnGMRESScratch s;
  CycleArgs       a;
  int             rc;

  if (it0 < 0 || it1 <= it0 || it1 > st->max_k) return StnCUDARecordError((int)cudaErrorInvalidValue, "StnGMRESCycleLaunch: the steps are out of range");
  if ((rc = StnSGDIAGeometry(box, 0, true, &a.g))) return rc;
  if (a.g.nrows != n) return StnCUDARecordError((int)cudaErrorInvalidValue, "StnGMRESCycleLaunch: the matrix's rows are not the vectors' length");
  if ((rc = control_ready()) || (rc = StnGMRESGetScratch(&s, (unsigned)(it1 - it0), &a.first))) return rc;
  a.A = A;
  a.d = d;
  for (int k = 0; k < STN_VEC_MAX_MULTI; k++) a.V[k] = k <= it1 ? V[k] : V[0];
  a.n      = n;
  a.it0    = it0;
  a.it1    = it1;
  a.haptol = haptol;
  a.st     = *st;
  a.report = s.report;
  a.part   = s.partials;
  a.done   = s.done;
  a.cycle  = ++control.cycle;
  a.stop   = control.dev_stop;
  a.go_on  = control.go_on;
  for (int it = it0; it < it1; it++) ticket[it] = a.first + (unsigned)(it - it0);
  return with_instance(a.g.dof, a.g.nsten, Instance{n, s.sms, &a, s.npartials});
}

extern "C" int StnGMRESCycleStop(void)
{
  if (control.host_stop) *(volatile unsigned *)control.host_stop = control.cycle;
  return 0;
}
