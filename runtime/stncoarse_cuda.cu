/* stncoarse_cuda.cu: the dense inverse of the coarsest operator on the device (stncoarse_cuda.h). */
#include <cooperative_groups.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>

#include "stncoarse_cuda.h"

enum { kThreads = 256 };

struct StnDenseInverse {
  int                n;
  double            *lu, *inv;        /* n x n column-major each */
  int               *pivots, *info;   /* n, 1 */
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
   calling it): the row among first..n-1 not marked in skip (NULL: none marked) whose entry in
   column (column[i] = a[i][k]) is largest in magnitude, the lowest such row on a tie. Returns
   it, or -1 where the column is zero there. */
__device__ static int pivot_search(const double *column, int first, int n, const unsigned char *skip)
{
  __shared__ double best[kGJThreads / 32];
  __shared__ int    where[kGJThreads / 32];
  __shared__ int    pivot_row;
  const int         tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  double            v   = -1.0;
  int               at  = n;

  for (int i = first + tid; i < n; i += kGJThreads) {
    const double m = fabs(column[i]);
    if ((!skip || !skip[i]) && m > v) v = m, at = i;
  }
  for (int o = 16; o > 0; o >>= 1) {
    const double ov = __shfl_down_sync(0xffffffffu, v, o);
    const int    oa = __shfl_down_sync(0xffffffffu, at, o);
    if (ov > v || (ov == v && oa < at)) v = ov, at = oa;
  }
  if (lane == 0) best[warp] = v, where[warp] = at;
  __syncthreads();
  if (tid == 0) {
    for (int w = 1; w < kGJThreads / 32; w++)
      if (best[w] > best[0] || (best[w] == best[0] && where[w] < where[0])) best[0] = best[w], where[0] = where[w];
    pivot_row = best[0] > 0.0 ? where[0] : -1;
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
   cooperative launch (every block resident, a grid-wide sync after each pivot step), the
   matrix in global memory (two buffers, in L2: 16 MB at most). The rows are not swapped: step k
   pivots on the largest entry of column k among the rows not yet pivoted (p_k, found by every
   block alike; on a tie the lowest row of the original matrix), reads src and writes every
   entry of dst (each step's input is whole while it is read), then the two swap. Entry by entry
   the arithmetic is the swapping version's, so with the same pivots the result is the same to
   the bit (that version broke ties by the rows' swapped order). After n steps R holds the
   inverse permuted: inverse(k, j) = R(p_k, q_j) with p_{q_j} = j. One launch instead of two per step: the 576 unknowns of a 12^2
   grid of 4 values took 6.3 ms in 1152 launches, cuSOLVER's getrf loads its kernels at its
   first call (80 to 140 ms). *info: 0, or k + 1 for a zero pivot in column k (then src holds
   what the steps before made, and dst nothing of use). */
constexpr int kGJGlobalMaxRows = 1024;

__global__ static void __launch_bounds__(kGJThreads) gj_cooperative_kernel(double *src, double *dst, int n, int *info)
{
  __shared__ unsigned char pivoted[kGJGlobalMaxRows];
  __shared__ int           pivot_of[kGJGlobalMaxRows], column_of[kGJGlobalMaxRows]; /* p_k, q_j */
  cooperative_groups::grid_group grid   = cooperative_groups::this_grid();
  const int                      tid    = threadIdx.x;
  const int                      nn     = n * n, stride = gridDim.x * kGJThreads; /* 2^20 at most */
  const int                      e0     = blockIdx.x * kGJThreads + tid;

  for (int i = tid; i < n; i += kGJThreads) pivoted[i] = 0;
  __syncthreads();
  for (int k = 0; k < n; k++) {
    const double *column = src + k * n;
    const int     p      = pivot_search(column, 0, n, pivoted); /* the same in every block */

    if (p < 0) {
      if (blockIdx.x == 0 && tid == 0) *info = k + 1;
      return; /* every block, at the same step */
    }
    if (tid == 0) pivoted[p] = 1, pivot_of[k] = p, column_of[p] = k;
    const double inv_pivot = 1.0 / column[p];
    for (int e = e0; e < nn; e += stride) { /* row p / pivot; row i -= a(i,k) * that; column k */
      const int    i = e % n, j = e / n;
      const double scaled = src[j * n + p] * inv_pivot;
      if (i == p) dst[e] = j == k ? inv_pivot : scaled;
      else dst[e] = j == k ? -column[i] * inv_pivot : src[e] - column[i] * scaled;
    }
    grid.sync(); /* dst whole before anyone reads it; src read by everyone before it is written */
    double *t = src;
    src = dst, dst = t;
  }
  for (int e = e0; e < nn; e += stride) { /* inverse(k, j) = R(p_k, q_j), column-major */
    const int k = e % n, j = e / n;
    dst[e] = src[column_of[j] * n + pivot_of[k]];
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
      (rc = check(cudaMalloc((void **)&inv->pivots, sizeof(int) * (size_t)(n + 1)), "StnDenseInverseCreate: cudaMalloc"))) {
    StnDenseInverseDestroy(inv);
    return rc;
  }
  inv->info = inv->pivots + n;
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
    } else { /* as many blocks as are resident at once, at most one entry per thread */
      int   per_sm = 0, sms = 0, device = 0, grid;
      void *args[] = {&inv->lu, &inv->inv, (void *)&n, &inv->info};

      if ((rc = check(cudaMemsetAsync(inv->info, 0, sizeof(int), 0), "StnDenseInverseSetSGDIA: cudaMemsetAsync")) ||
          (rc = check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, gj_cooperative_kernel, kGJThreads, 0), "StnDenseInverseSetSGDIA: cudaOccupancyMaxActiveBlocksPerMultiprocessor")) ||
          (rc = check(cudaGetDevice(&device), "StnDenseInverseSetSGDIA: cudaGetDevice")) ||
          (rc = check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), "StnDenseInverseSetSGDIA: cudaDeviceGetAttribute")))
        return rc;
      grid = per_sm * sms;
      if ((long)grid > ((long)n * n + kGJThreads - 1) / kGJThreads) grid = (int)(((long)n * n + kGJThreads - 1) / kGJThreads);
      if (grid < 1) return StnCUDAFail((int)cudaErrorInvalidConfiguration, "StnDenseInverseSetSGDIA: the Gauss-Jordan kernel fits no block on this GPU");
      if ((rc = check(cudaLaunchCooperativeKernel((const void *)gj_cooperative_kernel, grid, kGJThreads, args, 0, 0), "StnDenseInverseSetSGDIA: cudaLaunchCooperativeKernel"))) return rc;
      if (n % 2 == 0) { /* the result is in inv (the last dst), not lu: swapped here and back below */
        double *t = inv->inv;
        inv->inv = inv->lu, inv->lu = t;
      }
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
  if (inv->solver) cusolverDnDestroy(inv->solver);
  delete inv;
  return 0;
}
