/* stnreduce.h: the device side of the reductions that the kernels of stnvec_cuda.cu and
   stngmres_cuda.cu and the GMRES cycle kernel (stncycle_cuda.cu) share: how lanes, warps and
   blocks fold their sums, in a fixed order (so a result has the same bits from run to run and in
   every block that folds it), and PETSc's Hessenberg update of GMRES. C++ and CUDA only:
   included by .cu files. */
#ifndef STNREDUCE_H
#define STNREDUCE_H

#include "stngmres_cuda.h" /* StnGMRESReport */

namespace stn_reduce {

/* commutes: combine(a, b) has the same bits as combine(b, a), so warp_sums may fold in either
   order (a max of +0 and -0 depends on the order). */
struct Sum {
  static constexpr bool commutes = true;
  static __device__ double combine(double a, double b) { return a + b; }
};
struct Max { /* NaN wins, so a NaN entry shows in the max-norm */
  static constexpr bool commutes = false;
  static __device__ double combine(double a, double b) { return (a != a || a > b) ? a : b; }
};

template <class Fold>
__device__ double warp_fold(double v)
{
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = Fold::combine(v, __shfl_down_sync(0xffffffffu, v, o));
  return v; /* in lane 0 */
}

/* One level of warp_sums: with H values left, trade half of them with the lane OFF away; with
   none left to trade (H = 0), fold the one sum with that lane. Then the next level. A template
   per level, so that every index into v is a constant (a loop over the levels left v in local
   memory for 16 and 32 values). */
template <int H, int OFF, int N>
__device__ __forceinline__ void warp_sums_level(double (&v)[N], int lane, int &idx)
{
  if constexpr (H >= 1) {
    const bool up = lane & OFF;
#pragma unroll
    for (int i = 0; i < H; i++) {
      const double send = up ? v[i] : v[i + H], keep = up ? v[i + H] : v[i];
      v[i]              = keep + __shfl_xor_sync(0xffffffffu, send, OFF);
    }
    idx = 2 * idx + up;
    warp_sums_level<H / 2, OFF / 2>(v, lane, idx);
  } else if constexpr (OFF >= 1) {
    v[0] += __shfl_xor_sync(0xffffffffu, v[0], OFF);
    warp_sums_level<0, OFF / 2>(v, lane, idx);
  }
}

/* The warp's sums of v[0..N-1] (N a power of two up to 32; v is overwritten), each with the bits
   of warp_fold<Sum> of that value: the same pairs are added in the same tree, and a + b is b + a.
   At each of the first log2 N levels a lane keeps half of its values and trades the other half
   with the lane off away (off = 16, 8, ...), adding what it gets to what it kept; then every lane
   holds one sum, and the last levels fold it as warp_fold does. That is N - 1 + 5 - log2 N
   shuffles of a double instead of 5 N: 9 instead of 40 for 8 values, 31 instead of 160 for 32.
   It matters because an SM issues one warp's 32-bit shuffle per clock and a double takes two:
   pass 1 of the GMRES cycle kernel folds 15.5 coefficients per step in 32 warps per SM: five
   shuffles a value would take about 5000 issue slots, 2.5 us per step on the H200.
   Returns the lane's sum and sets *j to its index: sum j is in the lanes whose bits 4, 3, ...
   (from the top, log2 N of them) spell j in binary, e.g. for N = 8 in lanes 4 j .. 4 j + 3
   (lane % (32 / N) == 0 picks one of them). */
template <int N>
__device__ __forceinline__ double warp_sums(double (&v)[N], int lane, int *j)
{
  static_assert(N >= 1 && N <= 32 && (N & (N - 1)) == 0, "N must be a power of two up to 32");
  int idx = 0;
  warp_sums_level<N / 2, 16>(v, lane, idx);
  *j = idx;
  return v[0];
}

/* The warp's folds of v[0..NV-1] (v is overwritten): out(k, result k) in one lane per result.
   warp_sums where the fold commutes bitwise and NV is a power of two (the same bits, fewer
   shuffles), else warp_fold per value (in lane 0). */
template <class Fold, int NV, class Out>
__device__ __forceinline__ void warp_results(double (&v)[NV], int lane, Out out)
{
  if constexpr (Fold::commutes && NV > 1 && (NV & (NV - 1)) == 0) {
    int          j;
    const double s = warp_sums<NV>(v, lane, &j);
    if (lane % (32 / NV) == 0) out(j, s);
  } else {
#pragma unroll
    for (int k = 0; k < NV; k++) {
      const double s = warp_fold<Fold>(v[k]);
      if (lane == 0) out(k, s);
    }
  }
}

/* A block's NV partial results: each warp folds its lanes with shuffles, warp 0 folds the warps,
   and partials[blockIdx.x * NV + k] gets result k. warp_part: the block's shared scratch. All
   threads of the block call it. */
template <class Fold, int NV>
__device__ void block_partials(const double acc[NV], double (*warp_part)[NV], double *partials)
{
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = blockDim.x >> 5;
  double    v[NV];
#pragma unroll
  for (int k = 0; k < NV; k++) v[k] = acc[k];
  warp_results<Fold, NV>(v, lane, [&](int k, double s) { warp_part[warp][k] = s; });
  __syncthreads();
  if (warp == 0) {
#pragma unroll
    for (int k = 0; k < NV; k++) v[k] = lane < nwarps ? warp_part[lane][k] : 0.0;
    warp_results<Fold, NV>(v, lane, [&](int k, double s) { partials[(long)blockIdx.x * NV + k] = s; });
  }
}

/* Folds nblocks * NV partials, laid out block by block, in a fixed order, so that every run (and
   every block that folds them) gets the same bits. Thread t takes entries t, t + blockDim.x, ...:
   always the same k = t % NV (NV divides 32, blockDim.x is a multiple of 32), entry j into sum
   (j - t) / blockDim.x % 4, sixteen loads in flight at a time (MDot's 32 partials of 528 blocks
   are 66 loads for each of 256 threads: a trip to L2 per four of them was most of the kernel's
   tail); then the threads of each k fold, lanes by shuffles, warps through shared memory.
   Returns result k in thread k < NV. All threads of the block call it. */
template <class Fold, int NV>
__device__ double fold_partials(const double *partials, long nblocks, double (*warp_part)[NV])
{
  const int  lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = blockDim.x >> 5;
  const long total = nblocks * NV, stride = blockDim.x;
  double     v[4]  = {0.0, 0.0, 0.0, 0.0};
  long       j     = threadIdx.x;
  for (; j + 15 * stride < total; j += 16 * stride) {
    double t[16];
#pragma unroll
    for (int u = 0; u < 16; u++) t[u] = __ldcg(&partials[j + u * stride]);
#pragma unroll
    for (int u = 0; u < 16; u++) v[u % 4] = Fold::combine(v[u % 4], t[u]);
  }
  for (; j + 3 * stride < total; j += 4 * stride)
#pragma unroll
    for (int u = 0; u < 4; u++) v[u] = Fold::combine(v[u], __ldcg(&partials[j + u * stride]));
  for (; j < total; j += stride) v[0] = Fold::combine(v[0], __ldcg(&partials[j]));
  double r = Fold::combine(Fold::combine(v[0], v[1]), Fold::combine(v[2], v[3]));
#pragma unroll
  for (int off = 16; off >= NV; off >>= 1) r = Fold::combine(r, __shfl_xor_sync(0xffffffffu, r, off));
  __syncthreads(); /* warp_part's earlier readers are done */
  if (lane < NV) warp_part[warp][lane] = r;
  __syncthreads();
  double t = 0.0;
  if (threadIdx.x < NV) {
    t = warp_part[0][threadIdx.x];
    for (int w = 1; w < nwarps; w++) t = Fold::combine(t, warp_part[w][threadIdx.x]);
  }
  return t;
}

/* PETSc's KSPGMRESUpdateHessenberg on column it of HH (hh: that column), once tt = ||w|| is known:
   HH(it + 1, it) = tt, the previous rotations applied to the column, the new rotation and the
   rotated right-hand side; then what the host needs, into the mapped report. One thread. */
__device__ inline void hessenberg_update(double *hh, double *cc, double *ss, double *grs, int it, double tt, double haptol, StnGMRESReport *report)
{
  double hapbnd, res = 0.0, t;
  int    hapend, null = 0;

  hh[it + 1] = tt;
  hapbnd     = fabs(tt / grs[it]);
  if (hapbnd > haptol) hapbnd = haptol;
  hapend = tt < hapbnd;
  /* The previous rotations, on the new column; the entry that rotation j - 1 hands on to the next
     stays in a register, not a store and a dependent load of shared memory per rotation. */
  double below = hh[0];
#pragma unroll 4
  for (int j = 1; j <= it; j++) {
    const double c = cc[j - 1], s = ss[j - 1], next = hh[j];
    hh[j - 1]      = c * below + s * next;
    below          = c * next - s * below;
  }
  hh[it] = below;
  if (!hapend) {
    t = sqrt(hh[it] * hh[it] + hh[it + 1] * hh[it + 1]);
    if (t == 0.0) null = 1;
    else {
      cc[it]      = hh[it] / t;
      ss[it]      = hh[it + 1] / t;
      grs[it + 1] = -(ss[it] * grs[it]);
      grs[it]     = cc[it] * grs[it];
      hh[it]      = cc[it] * hh[it] + ss[it] * hh[it + 1];
      res         = fabs(grs[it + 1]);
    }
  }
  report->res    = res;
  report->tt     = tt;
  report->hapend = hapend;
  report->null   = null;
  report->restarted = 0;
}

} // namespace stn_reduce

#endif
