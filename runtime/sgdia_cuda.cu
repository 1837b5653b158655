/* sgdia_cuda.cu: the SG-DIA matrix-vector product (and diagonal, zero) on a CUDA device.

   The storage is that of sgdia.h and sgdia.c; the C API is in sgdia_cuda.h. This file includes
   no PETSc header, so nvcc compiles it anywhere; the PETSc side passes raw device pointers.

   Kernel design. One thread per row (point p, component r), t = p*dof + r: for dof 1 one thread
   per point. Consecutive threads are consecutive rows, so every load of a block column,
   A[(s*dof + c)*nrows + t], is coalesced: a warp reads 256 contiguous bytes per (s, c). The dof
   threads of one point read the same x entries (a broadcast inside the warp, served by L1).
   One thread per point computing all dof rows was the alternative; it would read A with a
   stride of dof doubles per thread (each warp load spread over dof times more lines) and need dof
   accumulators, for the one saving of dof-1 repeated x loads that L1 absorbs anyway.

   dof and the number of block diagonals are template parameters for the common cases
   (sgdia_instances.h: dof 1-4; nsten 5, 7, 9, 13, 19, 25, 27; in a program built by stencilc,
   only its own), so the loops unroll into straight-line code whose loads are independent of each
   other (ptxas hoists them ahead of the multiplies as registers allow); other sizes run the same
   code with run-time bounds. The offsets
   and the box sizes travel in the kernel's parameter block (Geometry, sgdia_rows.h): reading them costs
   constant-cache hits, no memory traffic and no extra allocation.

   Boundaries. A warp whose points all have every neighbour inside x's box (and inside the domain,
   or wrapped by the ghosts) takes the fast path: neighbour s of a point at x-index b is at
   b + lin[s]. A warp with any point near the edge of the domain or of x's box takes, for all its
   threads, the cheapest path its rows allow (a warp vote, so the paths never diverge inside a
   warp; sgdia_rows.h): x edge or edges (only the non-periodic directions tested, the neighbour
   read at the fast path's offset), or checked: each neighbour's coordinates are tested,
   neighbours outside a non-periodic edge are skipped (neither their A entry nor x is read), and,
   for the owned-box layout, periodic neighbours are wrapped.

   Roofline of one product y = A x, per row (8-byte doubles; x's neighbours from cache):
     bytes: 8*nsten*dof of A (each read once, streamed) + 8 of x + 8 of y = 8*(nsten*dof + 2);
            with add (y = w + A x) 8 more for w;
     flops: 2*nsten*dof (one FMA per stored entry whose neighbour exists).
   E.g. 7-point star, dof 1: 72 bytes and 14 flops per row (0.19 flop/byte): memory-bound by far;
   27-point box, dof 1: 232 bytes; 7-point star, dof 4: 240 bytes and 56 flops per row. */
#include "sgdia_cuda.h"
#include "sgdia_instances.h"
#include "sgdia_rows.h"

#include <cuda_runtime.h>

#include <climits>
#include <cstdio>

namespace {

using namespace stn_sgdia;

constexpr int kBlock    = 256;  /* threads per block of the diagonal kernel */
constexpr int kMaxBlock = 1024; /* the product's blocks: StnSGDIASetBlockThreads, 256 by default */

/* ---------------------------------------------------------------------------------------------
   Errors
   --------------------------------------------------------------------------------------------- */

/* Records a CUDA error from call `what` (stncuda.h), or nothing on success; returns err. */
int check(cudaError_t err, const char *what)
{
  return err == cudaSuccess ? 0 : StnCUDARecordError((int)err, what);
}

/* ---------------------------------------------------------------------------------------------
   The geometry a kernel needs, worked out once per call by the launcher
   --------------------------------------------------------------------------------------------- */

/* Checks the box and fills g; returns 0 or a recorded cudaErrorInvalidValue. for_x: also check
   (and work out) where x's values are, for a product; without it only the rows are set up. */
int make_geometry(const StnBox *box, int ghosted, bool for_x, Geometry *g)
{
  const int bad = (int)cudaErrorInvalidValue;
  const char axis[3] = {'x', 'y', 'z'};
  int dmin[3] = {0, 0, 0}, dmax[3] = {0, 0, 0};

  if (!box) return StnCUDAFail(bad, "StnSGDIA: no box");
  if (box->dim < 1 || box->dim > 3) return StnCUDAFail(bad, "StnSGDIA: dim is %d; it must be 1, 2 or 3", box->dim);
  if (box->dof < 1) return StnCUDAFail(bad, "StnSGDIA: dof is %d; it must be at least 1", box->dof);
  if (box->nsten < 1 || box->nsten > STN_MAX_STEN) return StnCUDAFail(bad, "StnSGDIA: nsten is %d; it must be 1 to %d", box->nsten, STN_MAX_STEN);
  *g = Geometry{};
  g->dof   = box->dof;
  g->nsten = box->nsten;
  {
    const int s[3] = {box->xs, box->ys, box->zs}, m[3] = {box->xm, box->ym, box->zm};
    const int gs[3] = {box->gxs, box->gys, box->gzs}, gm[3] = {box->gxm, box->gym, box->gzm};
    const int n[3] = {box->mx, box->my, box->mz};
    for (int d = 0; d < 3; d++) {
      const bool has = d < box->dim;
      g->s[d]        = has ? s[d] : 0;
      g->m[d]        = has ? m[d] : 1;
      g->n[d]        = has ? n[d] : 1;
      g->b[d]        = !has ? 0 : ghosted == 1 ? gs[d] : s[d];
      g->bm[d]       = !has ? 1 : ghosted == 1 ? gm[d] : m[d];
      g->gb[d]       = !has ? 0 : ghosted ? gs[d] : s[d];
      g->gbm[d]      = !has ? 1 : ghosted ? gm[d] : m[d];
      const bool per = has && box->periodic[d];
      g->skip[d]     = !per;
      g->wrap[d]     = per && !ghosted;
      if (g->n[d] < 1 || g->m[d] < 0 || g->s[d] < 0 || g->s[d] > g->n[d] - g->m[d])
        return StnCUDAFail(bad, "StnSGDIA: the owned box %d..%d in %c does not lie in the grid 0..%d", g->s[d], g->s[d] + g->m[d] - 1, axis[d], g->n[d] - 1);
    }
    for (int d = 0; d < 2; d++) g->div_m[d] = StnFastDivMake(g->m[d] > 0 ? g->m[d] : 1); /* an empty box has no rows to place */
  }
  for (int t = 0; t < box->nsten; t++)
    for (int d = 0; d < 3; d++) {
      const int o = box->off[3 * t + d];
      if (d >= box->dim && o != 0) return StnCUDAFail(bad, "StnSGDIA: offset %d moves in %c, which a %dD grid does not have", t, axis[d], box->dim);
      if (o < -(1 << 20) || o > (1 << 20) || (g->wrap[d] && (o < -g->n[d] || o > g->n[d])))
        return StnCUDAFail(bad, "StnSGDIA: offset %d reaches %d points in %c, further than the grid's %d", t, o, axis[d], g->n[d]);
      g->off[3 * t + d] = o;
      dmin[d]           = t ? (o < dmin[d] ? o : dmin[d]) : o;
      dmax[d]           = t ? (o > dmax[d] ? o : dmax[d]) : o;
    }

  /* Sizes: row and x indices are ints (t, and (point of x's box)*dof + c). */
  const long long npoints = (long long)g->m[0] * g->m[1] * g->m[2];
  const long long nx      = (long long)g->gbm[0] * g->gbm[1] * g->gbm[2];
  if (npoints * box->dof > INT_MAX - kMaxBlock || nx * box->dof > INT_MAX)
    return StnCUDAFail(bad, "StnSGDIA: %lld rows (or %lld entries of x) are more than 32-bit indices allow", npoints * box->dof, nx * box->dof);
  g->nrows = (int)(npoints * box->dof);
  if (!npoints || !for_x) return 0;

  /* Every neighbour that exists must lie in x's box (sgdia_cuda.h states the rules). */
  for (int d = 0; d < 3; d++) {
    long long lo = (long long)g->s[d] + dmin[d], hi = (long long)g->s[d] + g->m[d] - 1 + dmax[d];
    if (g->skip[d]) { /* neighbours beyond the edge are skipped */
      lo = lo < 0 ? 0 : lo;
      hi = hi > g->n[d] - 1 ? g->n[d] - 1 : hi;
    } else if (g->wrap[d]) { /* wrapped into 0..n-1: the owned box must be all of it */
      if (g->s[d] != 0 || g->m[d] != g->n[d])
        return StnCUDAFail(bad, "StnSGDIA: %c is periodic and x is the owned array, so the owned box must span the grid in %c (0..%d), not %d..%d; pass the ghosted array instead", axis[d], axis[d], g->n[d] - 1, g->s[d], g->s[d] + g->m[d] - 1);
      lo = 0, hi = g->n[d] - 1;
    }
    if (lo <= hi && (lo < g->gb[d] || hi > (long long)g->gb[d] + g->gbm[d] - 1))
      return StnCUDAFail(bad, "StnSGDIA: the stencil reaches %lld..%lld in %c, beyond x's %s box %d..%d", lo, hi, axis[d], ghosted ? "ghosted" : "owned", g->gb[d], g->gb[d] + g->gbm[d] - 1);
  }

  /* The fast range: every neighbour in x's box at a fixed linear offset, and in the domain where
     leaving it means skipping or wrapping. */
  for (int d = 0; d < 3; d++) {
    long long lo = (long long)g->b[d] - dmin[d], hi = (long long)g->b[d] + g->bm[d] - dmax[d];
    if (g->skip[d] || g->wrap[d]) {
      lo = lo > -dmin[d] ? lo : -dmin[d];
      hi = hi < (long long)g->n[d] - dmax[d] ? hi : (long long)g->n[d] - dmax[d];
    }
    g->fast_lo[d] = (int)lo;
    g->fast_hi[d] = (int)(hi > lo ? hi : lo);
  }
  /* (An offset with no neighbour at all, far outside the domain, may not fit an int; the fast
     range is then empty and lin unused.) */
  for (int t = 0; t < box->nsten; t++) g->lin[t] = (int)(((long long)g->off[3 * t + 2] * g->bm[1] + g->off[3 * t + 1]) * g->bm[0] + g->off[3 * t]);
  return 0;
}

/* ---------------------------------------------------------------------------------------------
   The product (its rows: sgdia_rows.h)
   --------------------------------------------------------------------------------------------- */

/* What row t of y gets from v = (A x)[t]: v (add 0), w[t] + v (add 1; w may be y) or w[t] * v
   (add 2: a diagonal scaling after the product, Jacobi's, as VecPointwiseMult would do it). */
__device__ __forceinline__ double output(int add, const double *w, int t, double v)
{
  return add == 1 ? w[t] + v : add == 2 ? w[t] * v : v;
}

/* y = A x, y = w + A x or y = w .* (A x) (output): one thread per row. */
template <int DOF, int NSTEN, bool STREAM>
__global__ void __launch_bounds__(kMaxBlock) sgdia_mult(const Geometry g, const double *__restrict__ A, const double *__restrict__ x, const double *w, double *y, int add)
{
  const int    t      = blockIdx.x * blockDim.x + threadIdx.x;
  const bool   active = t < g.nrows;
  const double v      = row_value<DOF, NSTEN, STREAM>(g, A, x, t, active);
  if (active) y[t] = output(add, w, t, v);
}

int block_threads = 256; /* StnSGDIASetBlockThreads */

template <int DOF, int NSTEN>
void launch_fixed(bool streaming, unsigned blocks, cudaStream_t st, const Geometry &g, const double *A, const double *x, const double *w, double *y, int add)
{
  if (streaming) sgdia_mult<DOF, NSTEN, true><<<blocks, block_threads, 0, st>>>(g, A, x, w, y, add);
  else sgdia_mult<DOF, NSTEN, false><<<blocks, block_threads, 0, st>>>(g, A, x, w, y, add);
}

/* A product with the instance <DOF, NSTEN> (sgdia_instances.h picks it). */
struct Mult {
  bool             streaming;
  unsigned         blocks;
  cudaStream_t     st;
  const Geometry  &g;
  const double    *A, *x, *w;
  double          *y;
  int              add;
  template <int DOF, int NSTEN>
  void run() const
  {
    launch_fixed<DOF, NSTEN>(streaming, blocks, st, g, A, x, w, y, add);
  }
};

bool streaming_loads = false; /* StnSGDIASetStreamingLoads */

/* ---------------------------------------------------------------------------------------------
   Diagonal
   --------------------------------------------------------------------------------------------- */

/* d[t] = A[(center*dof + r)*nrows + t], r = t mod dof. Roofline: 16 bytes per row, no flops. */
__global__ void __launch_bounds__(kBlock) sgdia_diagonal(int nrows, int dof, int center, const double *__restrict__ A, double *__restrict__ d)
{
  const int t = blockIdx.x * kBlock + threadIdx.x;
  if (t >= nrows) return;
  d[t] = __ldg(A + (size_t)(center * dof + t % dof) * (size_t)nrows + t);
}

} /* namespace */

int stn_sgdia::StnSGDIAGeometry(const StnBox *box, int ghosted, bool for_x, Geometry *g)
{
  return make_geometry(box, ghosted, for_x, g);
}

/* ---------------------------------------------------------------------------------------------
   The C API (sgdia_cuda.h)
   --------------------------------------------------------------------------------------------- */

extern "C" int StnSGDIAMultCUDA(const StnBox *box, const double *A, const double *x, int ghosted, const double *w, double *y, int add, void *stream)
{
  Geometry g;
  int      err = make_geometry(box, ghosted, true, &g);

  if (err) return err;
  if (!g.nrows) return 0;
  if (!A || !x || !y || (add && !w)) return StnCUDAFail((int)cudaErrorInvalidValue, "StnSGDIAMultCUDA: a NULL array (A %p, x %p, w %p, y %p)", (const void *)A, (const void *)x, (const void *)w, (void *)y);
  if (x == y) return StnCUDAFail((int)cudaErrorInvalidValue, "StnSGDIAMultCUDA: x and y are the same array; the product cannot be done in place");
  const unsigned     blocks = (unsigned)((g.nrows + block_threads - 1) / block_threads);
  const cudaStream_t st     = (cudaStream_t)stream;
  with_instance(g.dof, g.nsten, Mult{streaming_loads, blocks, st, g, A, x, w, y, add});
  return check(cudaGetLastError(), "StnSGDIAMultCUDA: launch");
}

extern "C" int StnSGDIASetBlockThreads(int threads)
{
  const int old = block_threads;
  if (threads < 32 || threads > kMaxBlock || threads % 32) return -1;
  block_threads = threads;
  return old;
}

extern "C" int StnSGDIASetStreamingLoads(int streaming)
{
  const int old   = streaming_loads;
  streaming_loads = streaming != 0;
  return old;
}

extern "C" int StnSGDIADiagonalCUDA(const StnBox *box, const double *A, int diag_index, double *d, void *stream)
{
  const int bad = (int)cudaErrorInvalidValue;
  Geometry  g;
  int       err = make_geometry(box, 0, false, &g);

  if (err) return err;
  if (!g.nrows) return 0;
  if (diag_index >= box->nsten) return StnCUDAFail(bad, "StnSGDIADiagonalCUDA: block diagonal %d, but the matrix has %d", diag_index, box->nsten);
  if (!d || (diag_index >= 0 && !A)) return StnCUDAFail(bad, "StnSGDIADiagonalCUDA: a NULL array");
  const cudaStream_t st = (cudaStream_t)stream;
  if (diag_index < 0) return check(cudaMemsetAsync(d, 0, (size_t)g.nrows * sizeof(double), st), "StnSGDIADiagonalCUDA: cudaMemsetAsync");
  sgdia_diagonal<<<(unsigned)((g.nrows + kBlock - 1) / kBlock), kBlock, 0, st>>>(g.nrows, g.dof, diag_index, A, d);
  return check(cudaGetLastError(), "StnSGDIADiagonalCUDA: launch");
}

__global__ static void scale_kernel(double *A, long n, double a)
{
  for (long e = blockIdx.x * (long)blockDim.x + threadIdx.x; e < n; e += (long)gridDim.x * blockDim.x) A[e] *= a;
}

extern "C" int StnSGDIAScaleCUDA(double *A, long n, double a, void *stream)
{
  if (n < 0 || (n > 0 && !A)) return StnCUDAFail((int)cudaErrorInvalidValue, "StnSGDIAScaleCUDA: %ld entries at %p", n, (void *)A);
  if (!n) return 0;
  const long blocks = (n + 255) / 256;
  scale_kernel<<<(unsigned)(blocks < 65535 ? blocks : 65535), 256, 0, (cudaStream_t)stream>>>(A, n, a);
  return check(cudaGetLastError(), "StnSGDIAScaleCUDA: launch");
}

extern "C" int StnSGDIAZeroCUDA(double *A, long n, void *stream)
{
  if (n < 0 || (n > 0 && !A)) return StnCUDAFail((int)cudaErrorInvalidValue, "StnSGDIAZeroCUDA: %ld entries at %p", n, (void *)A);
  if (!n) return 0;
  return check(cudaMemsetAsync(A, 0, (size_t)n * sizeof(double), (cudaStream_t)stream), "StnSGDIAZeroCUDA: cudaMemsetAsync");
}
