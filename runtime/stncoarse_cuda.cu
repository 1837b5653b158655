/* stncoarse_cuda.cu: the dense inverse of the coarsest operator on the device (stncoarse_cuda.h). */
#include <cooperative_groups.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>

#include "stncoarse_cuda.h"

enum { kThreads = 256 };

struct StnDenseInverse {
  int                n;
  double            *lu, *inv;        /* n x n column-major each */
  int               *pivots, *info;   /* 2n (Gauss-Jordan's p_k and q_j, or getrf's n), 1 */
  double            *panel;           /* Gauss-Jordan over the device: a panel's multipliers and 1 / pivots */
  cusolverDnHandle_t solver;          /* cuSOLVER's LU, for n > kGJGlobalMaxRows: made at its first use */
  double            *work;            /* and its workspace */
  int                lwork;
};

static int check(cudaError_t err, const char *what) { return StnCUDARecordError((int)err, what); }

static int check_solver(cusolverStatus_t status, const char *what)
{
  if (status == CUSOLVER_STATUS_SUCCESS) return 0;
  return StnCUDAFail((int)cudaErrorInvalidValue, "%s: cuSOLVER status %d", what, (int)status);
}

/* Entry e of the SG-DIA values, e = (s*dof + c)*nrows + row, into dense column-major a: row
   (p, r) and column (p + offset s, c), skipped where the neighbour is beyond a non-periodic
   edge. Distinct offsets reach distinct points (sgdia.c checks periodic extents >= 2w + 1), so
   each dense entry is written by at most one thread. */
__global__ static void expand_kernel(const StnBox b, const double *__restrict__ A, double *__restrict__ a, int n)
{
  long e = (long)blockIdx.x * blockDim.x + threadIdx.x;
  int  row, p, s, c, at[3], m[3] = {b.xm, b.ym, b.zm}, q = 0;

  if (e >= (long)b.nsten * b.dof * n) return;
  row = (int)(e % n);
  c   = (int)(e / n % b.dof);
  s   = (int)(e / ((long)n * b.dof));
  p   = row / b.dof;
  at[0] = p % b.xm, at[1] = p / b.xm % b.ym, at[2] = p / (b.xm * b.ym);
  for (int d = 2; d >= 0; d--) {
    int x = at[d] + (d < b.dim ? b.off[3 * s + d] : 0);
    if (x < 0 || x >= m[d]) {
      if (!b.periodic[d]) return;
      x = (x + m[d]) % m[d];
    }
    q = q * m[d] + x;
  }
  a[(long)(q * b.dof + c) * n + row] = A[e];
}

__global__ static void identity_kernel(double *a, int n)
{
  long e = (long)blockIdx.x * blockDim.x + threadIdx.x;

  if (e < (long)n * n) a[e] = e % n == e / n ? 1.0 : 0.0;
}

/* y = a x, one thread per row; the threads of a warp read consecutive rows of each column. */
__global__ static void gemv_kernel(const double *__restrict__ a, const double *__restrict__ x, double *__restrict__ y, int n)
{
  int    row = blockIdx.x * blockDim.x + threadIdx.x;
  double sum = 0.0;

  if (row >= n) return;
  for (int col = 0; col < n; col++) sum += a[(long)col * n + row] * x[col];
  y[row] = sum;
}

/* In-place Gauss-Jordan inversion with partial pivoting of a (n x n, column-major) by one block,
   a in shared memory: for each pivot column k, the largest entry at or below the diagonal (a
   block reduction), the row swap, the pivot row scaled, every other row updated; then the swaps
   undone as column swaps, in reverse. n^3 multiply-adds over kGJThreads threads. For the small
   matrices it serves (kGJMaxRows) this beats cuSOLVER's getrf and getrs, which also load their
   kernels at their first call (tens of milliseconds). *info: 0, or k + 1 for a zero pivot in
   column k. */
constexpr int kGJThreads = 1024, kGJMaxRows = 160; /* 160^2 doubles: 200 KB of shared memory */

/* Partial pivoting for a Gauss-Jordan step, by the whole block (kGJThreads threads, every one
   calling it; n <= kGJThreads, a row per thread): the row among first..n-1 not marked in skip
   (NULL: none marked) whose entry in column (column[i] = a[i][k]) is largest in magnitude, the
   lowest such row on a tie (a NaN entry is never chosen); the warps' candidates reduced by warp
   0. Returns it, or -1 where the column is zero there. */
__device__ static int pivot_search(const double *column, int first, int n, const unsigned char *skip)
{
  __shared__ double best[kGJThreads / 32];
  __shared__ int    where[kGJThreads / 32];
  __shared__ int    pivot_row;
  const int         tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  double            v   = -1.0;
  int               at  = n;

  if (tid >= first && tid < n && (!skip || !skip[tid]) && fabs(column[tid]) > v) v = fabs(column[tid]), at = tid;
  for (int o = 16; o > 0; o >>= 1) {
    const double ov = __shfl_down_sync(0xffffffffu, v, o);
    const int    oa = __shfl_down_sync(0xffffffffu, at, o);
    if (ov > v || (ov == v && oa < at)) v = ov, at = oa;
  }
  if (lane == 0) best[warp] = v, where[warp] = at;
  __syncthreads();
  if (warp == 0) {
    v  = best[lane];
    at = where[lane];
    for (int o = 16; o > 0; o >>= 1) {
      const double ov = __shfl_down_sync(0xffffffffu, v, o);
      const int    oa = __shfl_down_sync(0xffffffffu, at, o);
      if (ov > v || (ov == v && oa < at)) v = ov, at = oa;
    }
    if (lane == 0) pivot_row = v > 0.0 ? at : -1;
  }
  __syncthreads();
  return pivot_row;
}

/* The row swaps of the elimination (perm), undone on the columns of the inverse, last first, by
   the whole block. */
__device__ static void unswap_columns(double *a, int n, const int *perm)
{
  for (int k = n - 1; k >= 0; k--) {
    const int p = perm[k];
    if (p != k)
      for (int i = threadIdx.x; i < n; i += kGJThreads) {
        const double t     = a[(long)k * n + i];
        a[(long)k * n + i] = a[(long)p * n + i];
        a[(long)p * n + i] = t;
      }
    __syncthreads();
  }
}

__global__ static void __launch_bounds__(kGJThreads) gauss_jordan_kernel(double *g, int n, int *perm, int *info)
{
  extern __shared__ double a[]; /* n * n, then f: n */
  double   *f   = a + (long)n * n;
  const int tid = threadIdx.x;

  for (long e = tid; e < (long)n * n; e += kGJThreads) a[e] = g[e];
  if (tid == 0) *info = 0;
  __syncthreads();
  for (int k = 0; k < n; k++) {
    const int p = pivot_search(a + (long)k * n, k, n, NULL);
    if (tid == 0) perm[k] = p;
    if (p < 0) {
      if (tid == 0) *info = k + 1;
      return;
    }
    for (int j = tid; j < n; j += kGJThreads) { /* swap rows k and p */
      const double t = a[j * n + p];
      a[j * n + p]   = a[j * n + k];
      a[j * n + k]   = t;
    }
    __syncthreads();
    const double inv_pivot = 1.0 / a[k * n + k];
    for (int i = tid; i < n; i += kGJThreads) f[i] = i == k ? 0.0 : a[k * n + i];
    __syncthreads();
    for (int j = tid; j < n; j += kGJThreads) a[j * n + k] = j == k ? inv_pivot : a[j * n + k] * inv_pivot; /* row k / pivot */
    __syncthreads();
    for (int e = tid; e < n * n; e += kGJThreads) { /* row i -= f[i] * row k; column k: -f[i] / pivot */
      const int i = e % n, j = e / n;
      if (i != k) a[e] = j == k ? -f[i] * inv_pivot : a[e] - f[i] * a[j * n + k];
    }
    __syncthreads();
  }
  unswap_columns(a, n, perm);
  for (long e = tid; e < (long)n * n; e += kGJThreads) g[e] = a[e];
}

/* The same Gauss-Jordan for kGJMaxRows < n <= kGJGlobalMaxRows over the whole device, in one
   cooperative launch (every block resident), the matrix in global memory (in L2: 8 MB at most),
   in panels of kGJPanel pivot columns: two grid-wide syncs a panel, where a sync a pivot cost as
   much as the pivot's work. The rows are not swapped: step k pivots on the largest entry of
   column k among the rows not yet pivoted (p_k; on a tie the lowest row of the original matrix).
   Block 0 takes a panel's steps in its shared memory on the panel's columns alone, a row per
   thread, and leaves each step's multipliers (column k before it, m_k) and 1 / pivot; then every
   block applies the panel's steps to the other columns: the scaled pivot rows s_k(j) first (row
   p_k through the panel's earlier steps, times 1 / pivot: a warp per column, a lane per pivot
   row), then each row through the steps in order (row p_k becomes s_k(j), every other row i
   loses m_k(i) s_k(j)). Entry by entry that is the arithmetic of one pivot at a time
   (gauss_jordan_kernel's, without its swaps), so with the same pivots the result is the same to
   the bit (that version breaks ties by the rows' swapped order). After n steps the matrix holds
   the inverse permuted: inverse(k, j) = R(p_k, q_j) with p_{q_j} = j. kGJPanel 8 keeps a lane's
   multipliers in registers (64 a thread at 1024 threads). cuSOLVER's getrf loads its kernels at
   its first call (80 to 140 ms). *info: 0, or k + 1 for a zero pivot in column k (then a holds
   what the panels before made, and dst nothing of use). */
constexpr int kGJGlobalMaxRows = 1024, kGJPanel = 8;

struct GJPanel {
  double *m;         /* the panel's multipliers: m_t(i) at m[t * n + i] */
  double *inv_pivot; /* kGJPanel */
  int    *pivot_of;  /* n: p_k */
  int    *column_of; /* n: q_j */
  int    *info;      /* 0, or k + 1 for a zero pivot in column k */
};

/* Block 0: the panel's columns kb..kb + w - 1 through their w steps, in shared memory pan (n x w,
   column-major), a row per thread, with s (kGJPanel) beside; pivoted (n) persists across
   panels. Returns 0, or 1 for a zero pivot (recorded in *g.info). n <= kGJThreads. */
__device__ static int gj_panel(double *a, int n, int kb, int w, double *pan, double *s, unsigned char *pivoted, const GJPanel &g)
{
  const int tid = threadIdx.x;

  for (int e = tid; e < n * w; e += kGJThreads) pan[e] = a[(long)kb * n + e];
  __syncthreads();
  for (int t = 0; t < w; t++) {
    const int p = pivot_search(pan + (long)t * n, 0, n, pivoted);

    if (p < 0) {
      if (tid == 0) *g.info = kb + t + 1;
      return 1;
    }
    const double inv_pivot = 1.0 / pan[(long)t * n + p];
    if (tid < w) s[tid] = pan[(long)tid * n + p] * inv_pivot; /* row p of each panel column, scaled */
    if (tid == 0) pivoted[p] = 1, g.pivot_of[kb + t] = p, g.column_of[p] = kb + t, g.inv_pivot[t] = inv_pivot;
    __syncthreads();
    if (tid < n) { /* row i / pivot if p, else row i -= m(i) * row p / pivot; column t replaced */
      const int    i = tid;
      const double m = pan[(long)t * n + i];

      g.m[(long)t * n + i] = m;
      for (int c = 0; c < w; c++)
        if (c != t) pan[(long)c * n + i] = i == p ? s[c] : pan[(long)c * n + i] - m * s[c];
      pan[(long)t * n + i] = i == p ? inv_pivot : -m * inv_pivot;
    }
    __syncthreads();
  }
  for (int e = tid; e < n * w; e += kGJThreads) a[(long)kb * n + e] = pan[e];
  return 0;
}

/* Every block: the panel's w steps (pivot rows g.pivot_of[kb..], multipliers g.m) on the columns
   outside it, this block's columns j = blockIdx.x + r gridDim.x, kGJThreads / 32 of them a round:
   warp r the scaled pivot rows of the r-th, then each thread its row of each. n <= kGJThreads. */
__device__ static void gj_update(double *a, int n, int kb, int w, double (*s)[kGJPanel], const GJPanel &g)
{
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;

  for (int first = blockIdx.x; first < n; first += gridDim.x * (kGJThreads / 32)) {
    const int j = first + warp * gridDim.x;

    if (j < n && (j < kb || j >= kb + w) && lane < w) { /* lane u: row p_u through the steps */
      const int p = g.pivot_of[kb + lane];
      double    v = a[(long)j * n + p], mp[kGJPanel];
#pragma unroll
      for (int t = 0; t < kGJPanel; t++)
        if (t < w) mp[t] = g.m[(long)t * n + p];
#pragma unroll
      for (int t = 0; t < kGJPanel; t++)
        if (t < w) {
          const double st = __shfl_sync((1u << w) - 1, v, t) * g.inv_pivot[t];
          v               = lane == t ? st : v - mp[t] * st;
          if (lane == 0) s[warp][t] = st;
        }
    }
    __syncthreads();
    if (tid < n) {
      const int i = tid;
      int       pivot_step = -1;
      double    m[kGJPanel];

#pragma unroll
      for (int t = 0; t < kGJPanel; t++)
        if (t < w) {
          m[t] = g.m[(long)t * n + i];
          if (g.pivot_of[kb + t] == i) pivot_step = t;
        }
      for (int r = 0; r < kGJThreads / 32; r++) {
        const int jr = first + r * gridDim.x;
        if (jr >= n) break;
        if (jr >= kb && jr < kb + w) continue;
        double v = a[(long)jr * n + i];
#pragma unroll
        for (int t = 0; t < kGJPanel; t++)
          if (t < w) v = t == pivot_step ? s[r][t] : v - m[t] * s[r][t];
        a[(long)jr * n + i] = v;
      }
    }
    __syncthreads();
  }
}

__global__ static void __launch_bounds__(kGJThreads) gj_cooperative_kernel(double *a, double *dst, int n, GJPanel g)
{
  extern __shared__ double pan[]; /* block 0: the panel, n x kGJPanel */
  __shared__ double        s[kGJThreads / 32][kGJPanel];
  __shared__ unsigned char pivoted[kGJGlobalMaxRows];
  cooperative_groups::grid_group grid = cooperative_groups::this_grid();
  const int                      tid  = threadIdx.x;

  for (int i = tid; i < n; i += kGJThreads) pivoted[i] = 0;
  __syncthreads();
  for (int kb = 0; kb < n; kb += kGJPanel) {
    const int w = n - kb < kGJPanel ? n - kb : kGJPanel;

    if (blockIdx.x == 0) gj_panel(a, n, kb, w, pan, s[0], pivoted, g);
    grid.sync(); /* the panel, its pivots and multipliers whole; *g.info set */
    if (*(volatile int *)g.info) return; /* every block, at the same panel */
    gj_update(a, n, kb, w, s, g);
    grid.sync(); /* the other columns through the panel's steps before the next panel reads them */
  }
  for (int e = blockIdx.x * kGJThreads + tid; e < n * n; e += gridDim.x * kGJThreads) { /* inverse(k, j) = R(p_k, q_j), column-major */
    const int k = e % n, j = e / n;
    dst[e] = a[(long)g.column_of[j] * n + g.pivot_of[k]];
  }
}

static unsigned blocks(long n) { return (unsigned)((n + kThreads - 1) / kThreads); }

extern "C" int StnDenseInverseCreate(int n, StnDenseInverse **out)
{
  StnDenseInverse *inv = new StnDenseInverse();
  size_t           bytes = sizeof(double) * (size_t)n * (size_t)n;
  int              rc;

  *out = NULL;
  inv->n = n;
  if ((rc = check(cudaMalloc((void **)&inv->lu, bytes), "StnDenseInverseCreate: cudaMalloc")) ||
      (rc = check(cudaMalloc((void **)&inv->inv, bytes), "StnDenseInverseCreate: cudaMalloc")) ||
      (rc = check(cudaMalloc((void **)&inv->pivots, sizeof(int) * (size_t)(2 * n + 1)), "StnDenseInverseCreate: cudaMalloc")) ||
      (rc = check(cudaMalloc((void **)&inv->panel, sizeof(double) * (size_t)(n + 1) * kGJPanel), "StnDenseInverseCreate: cudaMalloc"))) {
    StnDenseInverseDestroy(inv);
    return rc;
  }
  inv->info = inv->pivots + 2 * n;
  *out      = inv;
  return 0;
}

extern "C" int StnDenseInverseSetSGDIA(StnDenseInverse *inv, const StnBox *box, const double *A, int *zero_pivot)
{
  const int n = inv->n;
  int       rc;

  *zero_pivot = 0;
  if (box->xm * (box->dim > 1 ? box->ym : 1) * (box->dim > 2 ? box->zm : 1) * box->dof != n || box->mx != box->xm)
    return StnCUDAFail((int)cudaErrorInvalidValue, "StnDenseInverseSetSGDIA: the matrix is not the whole %d-unknown grid of one rank", n);
  StnBox b = *box;
  if (b.dim < 2) b.ym = 1;
  if (b.dim < 3) b.zm = 1;
  if ((rc = check(cudaMemsetAsync(inv->lu, 0, sizeof(double) * (size_t)n * n, 0), "StnDenseInverseSetSGDIA: cudaMemsetAsync"))) return rc;
  expand_kernel<<<blocks((long)b.nsten * b.dof * n), kThreads>>>(b, A, inv->lu, n);
  if (n <= kGJGlobalMaxRows) { /* Gauss-Jordan: in one block's shared memory, or over the device */
    if (n <= kGJMaxRows) {
      const size_t shared = sizeof(double) * (size_t)(n + 1) * n;
      if ((rc = check(cudaFuncSetAttribute(gauss_jordan_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)shared), "StnDenseInverseSetSGDIA: cudaFuncSetAttribute"))) return rc;
      gauss_jordan_kernel<<<1, kGJThreads, shared>>>(inv->lu, n, inv->pivots, inv->info);
    } else { /* as many blocks as are resident at once (one a multiprocessor: the panel's shared
                memory), at most one entry per thread */
      const size_t shared = sizeof(double) * (size_t)n * kGJPanel;
      int          per_sm = 0, sms = 0, device = 0, grid;
      GJPanel      g      = {inv->panel + kGJPanel, inv->panel, inv->pivots, inv->pivots + n, inv->info};
      void        *args[] = {&inv->lu, &inv->inv, (void *)&n, &g};

      if ((rc = check(cudaMemsetAsync(inv->info, 0, sizeof(int), 0), "StnDenseInverseSetSGDIA: cudaMemsetAsync")) ||
          (rc = check(cudaFuncSetAttribute(gj_cooperative_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)shared), "StnDenseInverseSetSGDIA: cudaFuncSetAttribute")) ||
          (rc = check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, gj_cooperative_kernel, kGJThreads, shared), "StnDenseInverseSetSGDIA: cudaOccupancyMaxActiveBlocksPerMultiprocessor")) ||
          (rc = check(cudaGetDevice(&device), "StnDenseInverseSetSGDIA: cudaGetDevice")) ||
          (rc = check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), "StnDenseInverseSetSGDIA: cudaDeviceGetAttribute")))
        return rc;
      grid = per_sm * sms;
      if ((long)grid > ((long)n * n + kGJThreads - 1) / kGJThreads) grid = (int)(((long)n * n + kGJThreads - 1) / kGJThreads);
      if (grid < 1) return StnCUDAFail((int)cudaErrorInvalidConfiguration, "StnDenseInverseSetSGDIA: the Gauss-Jordan kernel fits no block on this GPU");
      if ((rc = check(cudaLaunchCooperativeKernel((const void *)gj_cooperative_kernel, grid, kGJThreads, args, shared, 0), "StnDenseInverseSetSGDIA: cudaLaunchCooperativeKernel"))) return rc;
      double *t = inv->inv; /* the result is in inv (dst), not lu: swapped here and back below */
      inv->inv = inv->lu, inv->lu = t;
    }
    if ((rc = check(cudaGetLastError(), "StnDenseInverseSetSGDIA: launch"))) return rc;
    if ((rc = check(cudaMemcpy(zero_pivot, inv->info, sizeof(int), cudaMemcpyDeviceToHost), "StnDenseInverseSetSGDIA: cudaMemcpy"))) return rc;
    double *swap = inv->inv; /* the inverse is where the matrix was */
    inv->inv = inv->lu, inv->lu = swap;
    return 0;
  }
  if (!inv->solver) {
    if ((rc = check_solver(cusolverDnCreate(&inv->solver), "StnDenseInverseSetSGDIA: cusolverDnCreate"))) return rc;
    if ((rc = check_solver(cusolverDnDgetrf_bufferSize(inv->solver, n, n, inv->lu, n, &inv->lwork), "StnDenseInverseSetSGDIA: cusolverDnDgetrf_bufferSize"))) return rc;
    if ((rc = check(cudaMalloc((void **)&inv->work, sizeof(double) * (size_t)(inv->lwork > 0 ? inv->lwork : 1)), "StnDenseInverseSetSGDIA: cudaMalloc"))) return rc;
  }
  identity_kernel<<<blocks((long)n * n), kThreads>>>(inv->inv, n);
  if ((rc = check(cudaGetLastError(), "StnDenseInverseSetSGDIA: launch"))) return rc;
  cusolverDnSetStream(inv->solver, 0);
  if ((rc = check_solver(cusolverDnDgetrf(inv->solver, n, n, inv->lu, n, inv->work, inv->pivots, inv->info), "StnDenseInverseSetSGDIA: cusolverDnDgetrf"))) return rc;
  if ((rc = check(cudaMemcpy(zero_pivot, inv->info, sizeof(int), cudaMemcpyDeviceToHost), "StnDenseInverseSetSGDIA: cudaMemcpy"))) return rc;
  if (*zero_pivot != 0) return 0;
  return check_solver(cusolverDnDgetrs(inv->solver, CUBLAS_OP_N, n, n, inv->lu, n, inv->pivots, inv->inv, n, inv->info), "StnDenseInverseSetSGDIA: cusolverDnDgetrs");
}

extern "C" int StnDenseInverseSetHost(StnDenseInverse *inv, const double *a, int lda)
{
  const size_t row = sizeof(double) * (size_t)inv->n;
  return check(cudaMemcpy2D(inv->inv, row, a, sizeof(double) * (size_t)lda, row, (size_t)inv->n, cudaMemcpyHostToDevice), "StnDenseInverseSetHost: cudaMemcpy2D");
}

extern "C" int StnDenseInverseApply(const StnDenseInverse *inv, const double *x, double *y)
{
  gemv_kernel<<<blocks(inv->n), kThreads>>>(inv->inv, x, y, inv->n);
  return check(cudaGetLastError(), "StnDenseInverseApply: launch");
}

extern "C" int StnDenseInverseRows(const StnDenseInverse *inv) { return inv->n; }

extern "C" int StnDenseInverseDestroy(StnDenseInverse *inv)
{
  if (!inv) return 0;
  cudaFree(inv->lu);
  cudaFree(inv->inv);
  cudaFree(inv->work);
  cudaFree(inv->pivots);
  cudaFree(inv->panel);
  if (inv->solver) cusolverDnDestroy(inv->solver);
  delete inv;
  return 0;
}
