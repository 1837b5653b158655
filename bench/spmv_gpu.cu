/* bench/spmv_gpu.cu: the SG-DIA product of runtime/sgdia_cuda.cu against cuSPARSE's CSR SpMV on
   the same matrix, on one GPU, with a triad measured in the same run as the bandwidth ceiling.

   Usage: spmv_gpu [--check-only] [--quick] [--reps N] [--md FILE]
     --check-only  run the self-checks only (small; fit for compute-sanitizer)
     --quick       smaller grids (a smoke test, a few seconds)
     --reps N      timed repetitions per kernel (default 101; at least 50 unless --quick)
     --md FILE     also write the final table to FILE

   Phases:
   1. Self-checks of the runtime's C API on small grids (1D/2D/3D; star and box stencils of
      width 1 and 2, 3 to 125 block diagonals; dof 1 to 5; non-periodic, periodic with the owned
      array, periodic and sub-boxes with a ghosted array; y = A x, y = w + A x, y = y + A x; both
      load policies; diagonal; zero; boxes that must be refused), each product against a CPU
      reference computed from global grid coordinates. Entries whose neighbour is outside the
      domain hold NaN and y is poisoned with NaN, so a read of such an entry or a row left
      unwritten shows up.
   2. The triad a[i] = b[i] + s*c[i] on 3 arrays of 2^28 doubles (6 GiB): the ceiling.
   3. For each case (3D, non-periodic, one rank, x the owned array: 7-point star 256^3 dof 1,
      128^3 dof 2 and dof 4; 27-point box 128^3 and 192^3 dof 1): random values (0 where
      the neighbour is outside the domain), the identical CSR matrix (int32 indices, columns
      sorted), random x; both products checked against a CPU reference (relative 2-norm error
      < 1e-12, y poisoned first); then each timed with CUDA events, median of --reps after a
      warm-up. cuSPARSE runs CUSPARSE_SPMV_ALG_DEFAULT and CUSPARSE_SPMV_CSR_ALG2, each after
      cusparseSpMV_preprocess (where the algorithm supports it); the faster counts. No L2 flush
      between runs: both formats alike keep what fits of x and y in the 60 MB L2.

   Byte model (the fewest bytes each product must move; x's neighbours come from cache):
     SG-DIA: values 8*nsten*dof*nrows (every stored entry, boundary zeros included) + x 8*nrows
             + y 8*nrows.
     CSR:    values 8*nnz + column indices 4*nnz + row pointers 4*(nrows+1) + x 8*nrows
             + y 8*nrows.
     triad:  3*8*n (b and c read, a written).
   Both products do 2*nnz flops (nnz: entries whose neighbour exists). */
#include "sgdia_cuda.h"

#include <cuda_runtime.h>
#include <cusparse.h>

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

/* ---------------------------------------------------------------------------------------------
   Errors: every CUDA, cuSPARSE and runtime call is checked; a failure ends the run
   --------------------------------------------------------------------------------------------- */

[[noreturn]] __attribute__((format(printf, 1, 2))) static void die(const char *fmt, ...)
{
  va_list ap;
  fflush(stdout);
  va_start(ap, fmt);
  fprintf(stderr, "spmv_gpu: error: ");
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, "\n");
  va_end(ap);
  exit(1);
}

#define CUDA_CALL(call) \
  do { \
    cudaError_t e_ = (call); \
    if (e_ != cudaSuccess) die("%s:%d: %s: %s", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
  } while (0)
#define SPARSE_CALL(call) \
  do { \
    cusparseStatus_t e_ = (call); \
    if (e_ != CUSPARSE_STATUS_SUCCESS) die("%s:%d: %s: %s", __FILE__, __LINE__, #call, cusparseGetErrorString(e_)); \
  } while (0)
#define STN_CALL(call) \
  do { \
    if ((call) != 0) die("%s:%d: %s: %s", __FILE__, __LINE__, #call, StnCUDALastError()); \
  } while (0)

/* ---------------------------------------------------------------------------------------------
   Random numbers: a hash of (seed, index), so filling 10^8 entries is fast and reproducible
   --------------------------------------------------------------------------------------------- */

static inline uint64_t mix64(uint64_t z)
{
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/* Uniform in [-1, 1), never exactly 0. */
static inline double uniform(uint64_t seed, uint64_t i)
{
  const double u = (double)(mix64(seed * 0x2545F4914F6CDD1Dull ^ mix64(i)) >> 11) * 0x1.0p-53;
  return u == 0.5 ? 0.25 : 2.0 * u - 1.0;
}

/* ---------------------------------------------------------------------------------------------
   Stencils and grids
   --------------------------------------------------------------------------------------------- */

enum Shape { STAR, BOX, BOX_NO_CORNERS };

struct Stencil {
  int nsten = 0;
  int off[3 * STN_MAX_STEN];
  int width = 0;
};

/* The offsets of a star or box stencil of width w in dim dimensions, sorted by (dk, dj, di), so
   that neighbour indices (and CSR columns) increase with s. BOX_NO_CORNERS: the 3D 19-point. */
static Stencil make_stencil(int dim, Shape shape, int w)
{
  Stencil st;
  st.width = w;
  const int wz = dim > 2 ? w : 0, wy = dim > 1 ? w : 0;
  for (int dk = -wz; dk <= wz; dk++)
    for (int dj = -wy; dj <= wy; dj++)
      for (int di = -w; di <= w; di++) {
        const int moves = (di != 0) + (dj != 0) + (dk != 0);
        if (shape == STAR && moves > 1) continue;
        if (shape == BOX_NO_CORNERS && moves == 3) continue;
        if (st.nsten == STN_MAX_STEN) die("stencil too large");
        st.off[3 * st.nsten] = di, st.off[3 * st.nsten + 1] = dj, st.off[3 * st.nsten + 2] = dk;
        st.nsten++;
      }
  return st;
}

/* One rank's view of a grid: the global size, the owned box and the ghosted box (as a DMDA of
   stencil width w would give it: w more on each side, clipped where the domain is not periodic). */
struct Grid {
  int dim, dof;
  int n[3], periodic[3];
  int s[3], m[3];   /* owned */
  int gs[3], gm[3]; /* ghosted */
};

static Grid make_grid(int dim, int dof, const int n[3], const int periodic[3], const int s[3], const int m[3], int w)
{
  Grid g;
  g.dim = dim, g.dof = dof;
  for (int d = 0; d < 3; d++) {
    const bool has = d < dim;
    g.n[d]         = has ? n[d] : 1;
    g.periodic[d]  = has ? periodic[d] : 0;
    g.s[d]         = has ? s[d] : 0;
    g.m[d]         = has ? m[d] : 1;
    int lo = g.s[d] - (has ? w : 0), hi = g.s[d] + g.m[d] + (has ? w : 0);
    if (!g.periodic[d]) lo = std::max(lo, 0), hi = std::min(hi, g.n[d]);
    g.gs[d] = lo, g.gm[d] = hi - lo;
  }
  return g;
}

static StnBox make_box(const Grid &g, const Stencil &st)
{
  StnBox b;
  memset(&b, 0, sizeof b);
  b.dim = g.dim, b.dof = g.dof, b.nsten = st.nsten;
  b.xs = g.s[0], b.ys = g.s[1], b.zs = g.s[2], b.xm = g.m[0], b.ym = g.m[1], b.zm = g.m[2];
  b.gxs = g.gs[0], b.gys = g.gs[1], b.gzs = g.gs[2], b.gxm = g.gm[0], b.gym = g.gm[1], b.gzm = g.gm[2];
  b.mx = g.n[0], b.my = g.n[1], b.mz = g.n[2];
  for (int d = 0; d < 3; d++) b.periodic[d] = g.periodic[d];
  memcpy(b.off, st.off, sizeof(int) * 3 * st.nsten);
  return b;
}

static long long npoints_of(const Grid &g)
{
  return (long long)g.m[0] * g.m[1] * g.m[2];
}

/* The global point index of neighbour s of owned point p, or -1 where it leaves a non-periodic
   edge of the domain (periodic directions wrap). Global points are numbered x-fastest. */
static long long neighbour(const Grid &g, const Stencil &st, long long p, int s)
{
  const long long i = g.s[0] + p % g.m[0], j = g.s[1] + (p / g.m[0]) % g.m[1], k = g.s[2] + p / ((long long)g.m[0] * g.m[1]);
  long long       c[3] = {i + st.off[3 * s], j + st.off[3 * s + 1], k + st.off[3 * s + 2]};
  for (int d = 0; d < 3; d++) {
    if (c[d] >= 0 && c[d] < g.n[d]) continue;
    if (!g.periodic[d]) return -1;
    c[d] = ((c[d] % g.n[d]) + g.n[d]) % g.n[d];
  }
  return (c[2] * g.n[1] + c[1]) * g.n[0] + c[0];
}

/* ---------------------------------------------------------------------------------------------
   Phase 1: self-checks, through the runtime's C API only (Ops, so that the same checks can run
   against a CPU emulation of the kernel when no GPU is at hand)
   --------------------------------------------------------------------------------------------- */

struct Ops {
  int (*alloc)(void **, size_t);
  int (*free)(void *);
  int (*htod)(void *, const void *, size_t);
  int (*dtoh)(void *, const void *, size_t);
  int (*mult)(const StnBox *, const double *, const double *, int, const double *, double *, int, void *);
  int (*diagonal)(const StnBox *, const double *, int, double *, void *);
  int (*zero)(double *, long, void *);
  int (*set_streaming)(int);
  int (*sync)(void);
};

static const Ops gpu_ops = {StnCUDAMalloc, StnCUDAFree, StnCUDAMemcpyHtoD, StnCUDAMemcpyDtoH, StnSGDIAMultCUDA, StnSGDIADiagonalCUDA, StnSGDIAZeroCUDA, StnSGDIASetStreamingLoads, StnCUDASynchronize};

#define OPS_CALL(call) STN_CALL(call)

/* ||a - b|| / ||b|| over n entries; infinity if any a is not finite. */
static double rel_error(const double *a, const double *b, size_t n)
{
  long double num = 0, den = 0;
  for (size_t e = 0; e < n; e++) {
    if (!std::isfinite(a[e])) return INFINITY;
    num += (long double)(a[e] - b[e]) * (a[e] - b[e]);
    den += (long double)b[e] * b[e];
  }
  return den > 0 ? (double)std::sqrt(num / den) : (num > 0 ? INFINITY : 0.0);
}

struct CheckStats {
  int products = 0, failures = 0, refusals = 0;
  double worst = 0;
};

/* One grid and stencil: every product variant, the diagonal and zero. */
static void check_config(const Ops &ops, const char *label, const Grid &g, const Stencil &st, bool ghosted, CheckStats *stats)
{
  const int       dof = g.dof, nsten = st.nsten;
  const long long np = npoints_of(g), nrows = np * dof;
  const long long nglobal = (long long)g.n[0] * g.n[1] * g.n[2];
  const long long nghost  = (long long)g.gm[0] * g.gm[1] * g.gm[2];
  const size_t    nvals = (size_t)nsten * dof * nrows;
  const StnBox    box   = make_box(g, st);
  const uint64_t  seed  = mix64((uint64_t)stats->products + 1);

  /* The matrix: random where the neighbour exists, NaN where it does not (never to be read). */
  std::vector<double> A(nvals), xg(nglobal * dof), xin, w(nrows), yref(nrows), yout(nrows), nan_rows(nrows, NAN);
  std::vector<long long> nb(np * nsten);
  for (long long p = 0; p < np; p++)
    for (int s = 0; s < nsten; s++) nb[p * nsten + s] = neighbour(g, st, p, s);
  for (int s = 0; s < nsten; s++)
    for (int c = 0; c < dof; c++)
      for (long long t = 0; t < nrows; t++) {
        const size_t e = (size_t)(s * dof + c) * nrows + t;
        A[e]           = nb[(t / dof) * nsten + s] >= 0 ? uniform(seed, e) : NAN;
      }
  for (long long e = 0; e < nglobal * dof; e++) xg[e] = uniform(seed + 1, e);
  for (long long t = 0; t < nrows; t++) w[t] = uniform(seed + 2, t);
  /* x as the kernel reads it: the ghosted box filled from the global vector (wrapped), or the
     owned box. */
  const int       *bs = ghosted ? g.gs : g.s, *bm = ghosted ? g.gm : g.m;
  const long long  nx = ghosted ? nghost : np;
  xin.resize(nx * dof);
  for (long long q = 0; q < nx; q++) {
    long long c[3] = {bs[0] + q % bm[0], bs[1] + (q / bm[0]) % bm[1], bs[2] + q / ((long long)bm[0] * bm[1])};
    for (int d = 0; d < 3; d++) c[d] = ((c[d] % g.n[d]) + g.n[d]) % g.n[d];
    const long long gp = (c[2] * g.n[1] + c[1]) * g.n[0] + c[0];
    for (int r = 0; r < dof; r++) xin[q * dof + r] = xg[gp * dof + r];
  }

  double *dA, *dx, *dw, *dy, *dd;
  OPS_CALL(ops.alloc((void **)&dA, nvals * sizeof(double)));
  OPS_CALL(ops.alloc((void **)&dx, xin.size() * sizeof(double)));
  OPS_CALL(ops.alloc((void **)&dw, nrows * sizeof(double)));
  OPS_CALL(ops.alloc((void **)&dy, nrows * sizeof(double)));
  OPS_CALL(ops.alloc((void **)&dd, nrows * sizeof(double)));
  OPS_CALL(ops.htod(dA, A.data(), nvals * sizeof(double)));
  OPS_CALL(ops.htod(dx, xin.data(), xin.size() * sizeof(double)));
  OPS_CALL(ops.htod(dw, w.data(), nrows * sizeof(double)));

  for (int mode = 0; mode < 3; mode++) { /* y = A x; y = w + A x; y = y + A x (w is y) */
    for (long long t = 0; t < nrows; t++) {
      const long long p   = t / dof;
      double          acc = mode ? w[t] : 0.0;
      for (int s = 0; s < nsten; s++) {
        const long long q = nb[p * nsten + s];
        if (q < 0) continue;
        for (int c = 0; c < dof; c++) acc += A[(size_t)(s * dof + c) * nrows + t] * xg[q * dof + c];
      }
      yref[t] = acc;
    }
    for (int streaming = 0; streaming < 2; streaming++) {
      ops.set_streaming(streaming);
      OPS_CALL(ops.htod(dy, mode == 2 ? w.data() : nan_rows.data(), nrows * sizeof(double)));
      const int rc = ops.mult(&box, dA, dx, ghosted, mode == 1 ? dw : mode == 2 ? dy : nullptr, dy, mode != 0, nullptr);
      if (rc) die("%s: the product was refused: %s", label, StnCUDALastError());
      OPS_CALL(ops.sync());
      OPS_CALL(ops.dtoh(yout.data(), dy, nrows * sizeof(double)));
      const double err = rel_error(yout.data(), yref.data(), nrows);
      stats->products++;
      stats->worst = std::max(stats->worst, err);
      if (!(err < 1e-12)) {
        stats->failures++;
        fprintf(stderr, "self-check FAILED: %s, %s, %s loads: relative error %.3e\n", label, mode == 0 ? "y = A x" : mode == 1 ? "y = w + A x" : "y = y + A x", streaming ? "streaming" : "ldg", err);
      }
    }
  }
  ops.set_streaming(0);

  /* The diagonal: exact copies of the (0,0,0) block diagonal's diagonal entries; none: zero. */
  int center = -1;
  for (int s = 0; s < nsten; s++)
    if (!st.off[3 * s] && !st.off[3 * s + 1] && !st.off[3 * s + 2]) center = s;
  for (int which = 0; which < 2; which++) {
    const int idx = which ? -1 : center;
    OPS_CALL(ops.htod(dd, nan_rows.data(), nrows * sizeof(double)));
    OPS_CALL(ops.diagonal(&box, dA, idx, dd, nullptr));
    OPS_CALL(ops.sync());
    OPS_CALL(ops.dtoh(yout.data(), dd, nrows * sizeof(double)));
    long long bad = 0;
    for (long long t = 0; t < nrows; t++) {
      const double expect = idx < 0 ? 0.0 : A[(size_t)(idx * dof + t % dof) * nrows + t];
      bad += !(yout[t] == expect);
    }
    stats->products++;
    if (bad) stats->failures++, fprintf(stderr, "self-check FAILED: %s: diagonal (index %d): %lld wrong entries\n", label, idx, bad);
  }
  /* Zero. */
  OPS_CALL(ops.zero(dA, (long)nvals, nullptr));
  OPS_CALL(ops.sync());
  OPS_CALL(ops.dtoh(A.data(), dA, nvals * sizeof(double)));
  stats->products++;
  for (size_t e = 0; e < nvals; e++)
    if (A[e] != 0.0 || std::signbit(A[e])) {
      stats->failures++;
      fprintf(stderr, "self-check FAILED: %s: zero left entry %zu = %g\n", label, e, A[e]);
      break;
    }
  OPS_CALL(ops.free(dA));
  OPS_CALL(ops.free(dx));
  OPS_CALL(ops.free(dw));
  OPS_CALL(ops.free(dy));
  OPS_CALL(ops.free(dd));
}

/* Boxes the product must refuse (and say why), never touching memory. */
static void check_refusals(const Ops &ops, CheckStats *stats)
{
  const int     n[3] = {20, 10, 8}, none[3] = {0, 0, 0}, per[3] = {1, 0, 0};
  const int     s[3] = {5, 0, 0}, m[3] = {10, 10, 8}, all_s[3] = {0, 0, 0};
  const Stencil st   = make_stencil(3, STAR, 1);
  double        dummy[4];
  struct Bad {
    const char *why;
    StnBox      box;
    int         ghosted;
    double     *y;
  };
  std::vector<Bad> bad;
  Bad b;
  b = {"owned array, but the stencil leaves the owned box", make_box(make_grid(3, 1, n, none, s, m, 1), st), 0, dummy + 1};
  bad.push_back(b);
  b = {"owned array, periodic direction not owned whole", make_box(make_grid(3, 1, n, per, s, m, 1), st), 0, dummy + 1};
  bad.push_back(b);
  b = {"ghosted box one point short", make_box(make_grid(3, 1, n, none, s, m, 1), st), 1, dummy + 1};
  b.box.gxm -= 1;
  bad.push_back(b);
  b = {"owned box beyond the grid", make_box(make_grid(3, 1, n, none, s, m, 1), st), 1, dummy + 1};
  b.box.xs = 15;
  bad.push_back(b);
  b = {"no block diagonals", make_box(make_grid(3, 1, n, none, all_s, n, 1), st), 0, dummy + 1};
  b.box.nsten = 0;
  bad.push_back(b);
  b = {"offset in z on a 2D grid", make_box(make_grid(2, 1, n, none, all_s, n, 1), make_stencil(2, STAR, 1)), 0, dummy + 1};
  b.box.off[2] = 1;
  bad.push_back(b);
  b = {"x is y", make_box(make_grid(3, 1, n, none, all_s, n, 1), st), 0, dummy};
  bad.push_back(b);
  for (const Bad &r : bad) {
    const int rc = ops.mult(&r.box, dummy, dummy, r.ghosted, nullptr, r.y, 0, nullptr);
    stats->refusals++;
    if (rc != 1 /* cudaErrorInvalidValue */) {
      stats->failures++;
      fprintf(stderr, "self-check FAILED: a box with %s was accepted\n", r.why);
    }
  }
}

/* All the configurations; returns the number of failures. */
static int self_check(const Ops &ops, bool verbose)
{
  struct StencilCase {
    int   dim;
    Shape shape;
    int   w;
  };
  const StencilCase stencils[] = {{1, STAR, 1}, {1, STAR, 2}, {2, STAR, 1}, {2, BOX, 1}, {2, STAR, 2}, {2, BOX, 2}, {3, STAR, 1}, {3, BOX, 1}, {3, STAR, 2}, {3, BOX_NO_CORNERS, 1}, {3, BOX, 2}};
  const char *shape_name[] = {"star", "box", "box-no-corners"};
  /* x-lines longer than a warp, so that whole warps take the fast path too. */
  const int sizes[4][3] = {{0, 0, 0}, {300, 1, 1}, {70, 9, 1}, {72, 7, 6}};
  CheckStats stats;

  for (const StencilCase &sc : stencils) {
    const Stencil st = make_stencil(sc.dim, sc.shape, sc.w);
    const int    *n  = sizes[sc.dim];
    const int     all_s[3] = {0, 0, 0};
    int           sub_s[3], sub_m[3];
    /* A sub-box touching the low x edge, the high y edge, and inside in z. */
    sub_s[0] = 0, sub_m[0] = 3 * n[0] / 4;
    sub_s[1] = n[1] / 4, sub_m[1] = n[1] - n[1] / 4;
    sub_s[2] = n[2] / 5, sub_m[2] = 4 * n[2] / 5 - n[2] / 5;
    struct Mode {
      const char *name;
      int         periodic[3];
      bool        sub, ghosted;
    };
    const Mode modes[] = {{"one rank, owned array", {0, 0, 0}, false, false},
                          {"one rank, periodic, owned array", {1, 1, 1}, false, false},
                          {"one rank, periodic x z, ghosted", {1, 0, 1}, false, true},
                          {"sub-box, periodic y z, ghosted", {0, 1, 1}, true, true},
                          {"sub-box, ghosted", {0, 0, 0}, true, true}};
    for (int dof = 1; dof <= 5; dof++)
      for (const Mode &md : modes) {
        const Grid g = make_grid(sc.dim, dof, n, md.periodic, md.sub ? sub_s : all_s, md.sub ? sub_m : n, sc.w);
        char       label[256];
        snprintf(label, sizeof label, "%dD %s w%d (%d), dof %d, %s", sc.dim, shape_name[sc.shape], sc.w, st.nsten, dof, md.name);
        const int before = stats.failures;
        check_config(ops, label, g, st, md.ghosted, &stats);
        if (verbose) printf("  %-70s %s\n", label, stats.failures == before ? "ok" : "FAILED");
      }
  }
  check_refusals(ops, &stats);
  printf("self-check: %d products, diagonals and zeros, %d refused boxes; worst relative error %.2e; %s\n", stats.products, stats.refusals, stats.worst, stats.failures ? "FAILED" : "all passed");
  return stats.failures;
}

/* ---------------------------------------------------------------------------------------------
   Timing: CUDA events around each repetition, median after a warm-up
   --------------------------------------------------------------------------------------------- */

template <class F>
static double median_us(F &&f, int reps)
{
  std::vector<cudaEvent_t> ev(2 * reps);
  std::vector<double>      us(reps);
  for (auto &e : ev) CUDA_CALL(cudaEventCreate(&e));
  for (int r = 0; r < 5; r++) f();
  CUDA_CALL(cudaDeviceSynchronize());
  for (int r = 0; r < reps; r++) {
    CUDA_CALL(cudaEventRecord(ev[2 * r]));
    f();
    CUDA_CALL(cudaEventRecord(ev[2 * r + 1]));
  }
  CUDA_CALL(cudaDeviceSynchronize());
  for (int r = 0; r < reps; r++) {
    float ms;
    CUDA_CALL(cudaEventElapsedTime(&ms, ev[2 * r], ev[2 * r + 1]));
    us[r] = 1e3 * ms;
  }
  for (auto &e : ev) CUDA_CALL(cudaEventDestroy(e));
  std::sort(us.begin(), us.end());
  return us[reps / 2];
}

/* ---------------------------------------------------------------------------------------------
   Phase 2: the triad a = b + s*c, the bandwidth ceiling. Roofline: 24 bytes and 2 flops per entry.
   --------------------------------------------------------------------------------------------- */

__global__ void fill_kernel(double *v, size_t n, uint64_t seed)
{
  const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  uint64_t z = seed ^ (i * 0x9E3779B97F4A7C15ull);
  z          = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z          = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  v[i]       = (double)((z ^ (z >> 31)) >> 11) * 0x1.0p-53 + 0.5;
}

/* Two entries per thread: 16-byte loads and stores. */
__global__ void triad_kernel(double2 *__restrict__ a, const double2 *__restrict__ b, const double2 *__restrict__ c, double s, size_t n2)
{
  const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n2) return;
  const double2 bb = b[i], cc = c[i];
  a[i]             = make_double2(bb.x + s * cc.x, bb.y + s * cc.y);
}

__global__ void triad_check_kernel(const double *a, const double *b, const double *c, double s, size_t n, unsigned long long *wrong)
{
  const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const double expect = b[i] + s * c[i];
  if (!(fabs(a[i] - expect) <= 1e-15 * fabs(expect))) atomicAdd(wrong, 1ull);
}

/* GB/s of the triad on 3 arrays of n doubles. */
static double measure_triad(size_t n, int reps)
{
  double             *a, *b, *c;
  unsigned long long *dwrong, wrong = 0;
  const double        s       = 1.5;
  const unsigned      threads = 256;
  CUDA_CALL(cudaMalloc(&a, n * sizeof(double)));
  CUDA_CALL(cudaMalloc(&b, n * sizeof(double)));
  CUDA_CALL(cudaMalloc(&c, n * sizeof(double)));
  CUDA_CALL(cudaMalloc(&dwrong, sizeof *dwrong));
  CUDA_CALL(cudaMemset(dwrong, 0, sizeof *dwrong));
  CUDA_CALL(cudaMemset(a, 0xFF, n * sizeof(double))); /* NaN */
  fill_kernel<<<(unsigned)((n + threads - 1) / threads), threads>>>(b, n, 11);
  CUDA_CALL(cudaGetLastError());
  fill_kernel<<<(unsigned)((n + threads - 1) / threads), threads>>>(c, n, 12);
  CUDA_CALL(cudaGetLastError());
  const size_t n2 = n / 2;
  const double us = median_us(
    [&] {
      triad_kernel<<<(unsigned)((n2 + threads - 1) / threads), threads>>>((double2 *)a, (const double2 *)b, (const double2 *)c, s, n2);
      CUDA_CALL(cudaGetLastError());
    },
    reps);
  triad_check_kernel<<<(unsigned)((n + threads - 1) / threads), threads>>>(a, b, c, s, n, dwrong);
  CUDA_CALL(cudaGetLastError());
  CUDA_CALL(cudaMemcpy(&wrong, dwrong, sizeof wrong, cudaMemcpyDeviceToHost));
  if (wrong) die("triad: %llu wrong entries", wrong);
  CUDA_CALL(cudaFree(a));
  CUDA_CALL(cudaFree(b));
  CUDA_CALL(cudaFree(c));
  CUDA_CALL(cudaFree(dwrong));
  const double gbs = 3.0 * 8.0 * (double)n / (us * 1e3);
  printf("triad a = b + s*c, 3 x %zu doubles (%.2f GiB each): %.1f us, %.0f GB/s (checked)\n", n, n * 8.0 / (1 << 30), us, gbs);
  return gbs;
}

/* ---------------------------------------------------------------------------------------------
   Phase 3: the cases
   --------------------------------------------------------------------------------------------- */

struct Case {
  const char *name;
  Shape       shape;
  int         n, dof;
};

struct Result {
  std::string name;
  long long   rows, nnz;
  double      sg_us, sg_cs_us, sp_us, sg_bytes, sp_bytes;
  const char *sp_alg;
};

static const char *alg_name(cusparseSpMVAlg_t alg)
{
  return alg == CUSPARSE_SPMV_CSR_ALG2 ? "CSR_ALG2" : alg == CUSPARSE_SPMV_CSR_ALG1 ? "CSR_ALG1" : "ALG_DEFAULT";
}

/* The relative error of the device vector dy against the host reference. */
static double device_rel_error(const double *dy, const double *yref, std::vector<double> &host)
{
  CUDA_CALL(cudaDeviceSynchronize());
  CUDA_CALL(cudaMemcpy(host.data(), dy, host.size() * sizeof(double), cudaMemcpyDeviceToHost));
  return rel_error(host.data(), yref, host.size());
}

/* One case on the host: the SG-DIA values (0 where the neighbour is outside the domain), x, the
   reference y, and the same matrix in CSR. */
struct HostCase {
  StnBox                    box;
  long long                 nrows = 0, nnz = 0;
  size_t                    nvals = 0;
  std::unique_ptr<double[]> A, x, yref, vals; /* not zeroed: the threads that fill them touch them first */
  std::unique_ptr<int[]>    rowptr, colind;
};

/* f(lo, hi) over [0, n) in contiguous chunks, one thread each (the host work of a case is
   several 10^8 entries: about a minute on one core). */
template <class F>
static void parallel_for(long long n, F &&f)
{
  const long long          nt    = std::max(1u, std::min(32u, std::thread::hardware_concurrency()));
  const long long          chunk = (n + nt - 1) / nt;
  std::vector<std::thread> threads;
  for (long long lo = 0; lo < n; lo += chunk) threads.emplace_back([&f, lo, hi = std::min(n, lo + chunk)] { f(lo, hi); });
  for (std::thread &t : threads) t.join();
}

static void build_case(const Case &cs, HostCase *h)
{
  const int       n[3] = {cs.n, cs.n, cs.n}, none[3] = {0, 0, 0};
  const Stencil   st   = make_stencil(3, cs.shape, 1);
  const Grid      g    = make_grid(3, cs.dof, n, none, none, n, 1);
  const int       dof = cs.dof, nsten = st.nsten;
  const long long np = npoints_of(g), nrows = np * dof;
  const size_t    nvals = (size_t)nsten * dof * nrows;
  const uint64_t  seed  = 2026;

  h->box   = make_box(g, st);
  h->nrows = nrows;
  /* Which neighbours exist, and where they are (linear offsets: one rank, no periodicity). */
  std::vector<int> lin(nsten);
  for (int s = 0; s < nsten; s++) lin[s] = (st.off[3 * s + 2] * cs.n + st.off[3 * s + 1]) * cs.n + st.off[3 * s];
  std::vector<uint8_t> valid((size_t)np * nsten);
  parallel_for(np, [&](long long lo, long long hi) {
    for (long long p = lo; p < hi; p++) {
      const int i = (int)(p % cs.n), j = (int)((p / cs.n) % cs.n), k = (int)(p / ((long long)cs.n * cs.n));
      for (int s = 0; s < nsten; s++) {
        const int a = i + st.off[3 * s], b = j + st.off[3 * s + 1], c = k + st.off[3 * s + 2];
        valid[(size_t)p * nsten + s] = a >= 0 && a < cs.n && b >= 0 && b < cs.n && c >= 0 && c < cs.n;
      }
    }
  });
  /* CSR row pointers: dof entries per existing neighbour. */
  h->rowptr.reset(new int[nrows + 1]);
  long long nnz = 0;
  for (long long p = 0; p < np; p++) {
    int count = 0;
    for (int s = 0; s < nsten; s++) count += valid[(size_t)p * nsten + s];
    for (int r = 0; r < dof; r++, nnz += (long long)count * dof) {
      if (nnz > INT32_MAX) die("%s: too large for int32 CSR", cs.name);
      h->rowptr[p * dof + r] = (int)nnz;
    }
  }
  if (nnz > INT32_MAX) die("%s: too large for int32 CSR", cs.name);
  h->rowptr[nrows] = (int)nnz;
  h->nnz           = nnz;

  /* Values, x, the reference straight from the SG-DIA definition, and the same matrix in CSR
     (the offsets are sorted, so the columns are too); each thread a range of points. */
  h->nvals = nvals;
  h->A.reset(new double[nvals]);
  h->x.reset(new double[nrows]);
  h->yref.reset(new double[nrows]);
  h->colind.reset(new int[nnz]);
  h->vals.reset(new double[nnz]);
  parallel_for(nrows, [&](long long lo, long long hi) {
    for (long long t = lo; t < hi; t++) h->x[t] = uniform(seed + 1, t), h->yref[t] = 0.0;
  });
  parallel_for(np, [&](long long plo, long long phi) {
    for (int s = 0; s < nsten; s++)
      for (int c = 0; c < dof; c++) {
        double *col = h->A.get() + (size_t)(s * dof + c) * nrows;
        for (long long p = plo; p < phi; p++) {
          const bool    there = valid[(size_t)p * nsten + s];
          const double  xn    = there ? h->x[(p + lin[s]) * dof + c] : 0.0;
          for (long long t = p * dof; t < (p + 1) * dof; t++) {
            col[t] = there ? uniform(seed, (size_t)(s * dof + c) * nrows + t) : 0.0;
            h->yref[t] += col[t] * xn;
          }
        }
      }
    for (long long p = plo; p < phi; p++)
      for (long long t = p * dof; t < (p + 1) * dof; t++) {
        long long e = h->rowptr[t];
        for (int s = 0; s < nsten; s++) {
          if (!valid[(size_t)p * nsten + s]) continue;
          for (int c = 0; c < dof; c++, e++) {
            h->colind[e] = (int)((p + lin[s]) * dof + c);
            h->vals[e]   = h->A[(size_t)(s * dof + c) * nrows + t];
          }
        }
        if (e != h->rowptr[t + 1]) die("%s: CSR row %lld has %lld entries, expected %d", cs.name, t, e - h->rowptr[t], h->rowptr[t + 1] - h->rowptr[t]);
      }
  });
}

static Result run_case(const Case &cs, cusparseHandle_t handle, int reps)
{
  HostCase h;
  build_case(cs, &h);
  const StnBox    box = h.box;
  const long long nrows = h.nrows, nnz = h.nnz;
  const size_t    nvals = h.nvals;
  const double   *yref  = h.yref.get();
  std::vector<double>        yhost(nrows);
  Result                     res;
  res.name = cs.name;
  res.rows = nrows;
  res.nnz  = nnz;
  printf("\n%s: %lld rows, %d block diagonals, %lld nonzeros\n", cs.name, nrows, box.nsten, nnz);
  fflush(stdout);

  /* Device copies; the host keeps only x and the reference. */
  double *dA, *dx, *dy, *dvals;
  int    *drow, *dcol;
  CUDA_CALL(cudaMalloc(&dA, nvals * sizeof(double)));
  CUDA_CALL(cudaMalloc(&dx, nrows * sizeof(double)));
  CUDA_CALL(cudaMalloc(&dy, nrows * sizeof(double)));
  CUDA_CALL(cudaMalloc(&dvals, (size_t)nnz * sizeof(double)));
  CUDA_CALL(cudaMalloc(&drow, (nrows + 1) * sizeof(int)));
  CUDA_CALL(cudaMalloc(&dcol, (size_t)nnz * sizeof(int)));
  CUDA_CALL(cudaMemcpy(dA, h.A.get(), nvals * sizeof(double), cudaMemcpyHostToDevice));
  CUDA_CALL(cudaMemcpy(dx, h.x.get(), nrows * sizeof(double), cudaMemcpyHostToDevice));
  CUDA_CALL(cudaMemcpy(dvals, h.vals.get(), (size_t)nnz * sizeof(double), cudaMemcpyHostToDevice));
  CUDA_CALL(cudaMemcpy(drow, h.rowptr.get(), (nrows + 1) * sizeof(int), cudaMemcpyHostToDevice));
  CUDA_CALL(cudaMemcpy(dcol, h.colind.get(), (size_t)nnz * sizeof(int), cudaMemcpyHostToDevice));
  h.A.reset();
  h.vals.reset();
  h.rowptr.reset();
  h.colind.reset();

  /* SG-DIA: checked with both load policies and every block size the tuner tries (y poisoned
     with NaN), then timed; per load policy the fastest block size counts (what -stn_autotune
     would pick; 256 is the default). */
  double sg_us[2];
  for (int streaming = 0; streaming < 2; streaming++) {
    sg_us[streaming] = 1e300;
    for (int threads : {128, 256, 512, 1024}) {
      StnSGDIASetStreamingLoads(streaming);
      StnSGDIASetBlockThreads(threads);
      CUDA_CALL(cudaMemset(dy, 0xFF, nrows * sizeof(double)));
      STN_CALL(StnSGDIAMultCUDA(&box, dA, dx, 0, nullptr, dy, 0, nullptr));
      const double err = device_rel_error(dy, yref, yhost);
      if (!(err < 1e-12)) die("%s: SG-DIA (%s loads, %d threads) differs from the reference: relative error %.3e", cs.name, streaming ? "streaming" : "ldg", threads, err);
      const double us = median_us([&] { STN_CALL(StnSGDIAMultCUDA(&box, dA, dx, 0, nullptr, dy, 0, nullptr)); }, reps);
      printf("  SG-DIA (%s loads, %4d threads): relative error %.2e, %.1f us\n", streaming ? "streaming __ldcs" : "__ldg", threads, err, us);
      if (us < sg_us[streaming]) sg_us[streaming] = us;
    }
  }
  StnSGDIASetBlockThreads(256);
  StnSGDIASetStreamingLoads(0);

  /* cuSPARSE: each algorithm with its own descriptor and buffer, after preprocessing. y is
     poisoned with 0x7F bytes (about 1.4e306, finite: harmless should beta = 0 still read y). */
  cusparseDnVecDescr_t vx, vy;
  SPARSE_CALL(cusparseCreateDnVec(&vx, nrows, dx, CUDA_R_64F));
  SPARSE_CALL(cusparseCreateDnVec(&vy, nrows, dy, CUDA_R_64F));
  const double            one = 1.0, zero = 0.0;
  const cusparseSpMVAlg_t algs[] = {CUSPARSE_SPMV_ALG_DEFAULT, CUSPARSE_SPMV_CSR_ALG2};
  res.sp_us                      = INFINITY;
  res.sp_alg                     = "none";
  for (cusparseSpMVAlg_t alg : algs) {
    cusparseSpMatDescr_t mat;
    size_t               bytes = 0;
    void                *buffer = nullptr;
    SPARSE_CALL(cusparseCreateCsr(&mat, nrows, nrows, nnz, drow, dcol, dvals, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F));
    SPARSE_CALL(cusparseSpMV_bufferSize(handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, mat, vx, &zero, vy, CUDA_R_64F, alg, &bytes));
    if (bytes) CUDA_CALL(cudaMalloc(&buffer, bytes));
    /* Preprocessing is optional: an algorithm that does not support it runs without. */
    const cusparseStatus_t pre = cusparseSpMV_preprocess(handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, mat, vx, &zero, vy, CUDA_R_64F, alg, buffer);
    CUDA_CALL(cudaDeviceSynchronize());
    CUDA_CALL(cudaMemset(dy, 0x7F, nrows * sizeof(double)));
    SPARSE_CALL(cusparseSpMV(handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, mat, vx, &zero, vy, CUDA_R_64F, alg, buffer));
    CUDA_CALL(cudaGetLastError());
    const double err = device_rel_error(dy, yref, yhost);
    if (!(err < 1e-12)) die("%s: cuSPARSE %s differs from the reference: relative error %.3e", cs.name, alg_name(alg), err);
    const double us = median_us(
      [&] {
        SPARSE_CALL(cusparseSpMV(handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, mat, vx, &zero, vy, CUDA_R_64F, alg, buffer));
      },
      reps);
    printf("  cuSPARSE %s: relative error %.2e, %.1f us (buffer %zu bytes, preprocess: %s)\n", alg_name(alg), err, us, bytes, pre == CUSPARSE_STATUS_SUCCESS ? "done" : cusparseGetErrorString(pre));
    if (us < res.sp_us) res.sp_us = us, res.sp_alg = alg_name(alg);
    SPARSE_CALL(cusparseDestroySpMat(mat));
    if (buffer) CUDA_CALL(cudaFree(buffer));
  }
  SPARSE_CALL(cusparseDestroyDnVec(vx));
  SPARSE_CALL(cusparseDestroyDnVec(vy));
  CUDA_CALL(cudaFree(dA));
  CUDA_CALL(cudaFree(dx));
  CUDA_CALL(cudaFree(dy));
  CUDA_CALL(cudaFree(dvals));
  CUDA_CALL(cudaFree(drow));
  CUDA_CALL(cudaFree(dcol));

  res.sg_us    = sg_us[0];
  res.sg_cs_us = sg_us[1];
  res.sg_bytes = 8.0 * (double)nvals + 16.0 * (double)nrows;
  res.sp_bytes = 12.0 * (double)nnz + 4.0 * (double)(nrows + 1) + 16.0 * (double)nrows;
  printf("  GFLOP/s (2*nnz): SG-DIA %.0f, cuSPARSE %.0f; bytes per row: SG-DIA %.1f, CSR %.1f\n", 2.0 * nnz / (res.sg_us * 1e3), 2.0 * nnz / (res.sp_us * 1e3), res.sg_bytes / nrows, res.sp_bytes / nrows);
  return res;
}

/* ---------------------------------------------------------------------------------------------
   Main
   --------------------------------------------------------------------------------------------- */

int main(int argc, char **argv)
{
  bool        check_only = false, quick = false;
  int         reps       = 101;
  const char *md         = nullptr;

  for (int a = 1; a < argc; a++) {
    if (!strcmp(argv[a], "--check-only")) check_only = true;
    else if (!strcmp(argv[a], "--quick")) quick = true;
    else if (!strcmp(argv[a], "--reps") && a + 1 < argc) reps = atoi(argv[++a]);
    else if (!strcmp(argv[a], "--md") && a + 1 < argc) md = argv[++a];
    else die("unknown argument %s (usage: spmv_gpu [--check-only] [--quick] [--reps N] [--md FILE])", argv[a]);
  }
  if (reps < (quick ? 5 : 50)) die("--reps %d: at least %d repetitions, for a stable median", reps, quick ? 5 : 50);

  /* ---- the device ---- */
  if (!StnCUDADevicePresent()) die("no usable CUDA device");
  int            dev, runtime, driver, sparse_version;
  cudaDeviceProp prop;
  CUDA_CALL(cudaGetDevice(&dev));
  CUDA_CALL(cudaGetDeviceProperties(&prop, dev));
  CUDA_CALL(cudaRuntimeGetVersion(&runtime));
  CUDA_CALL(cudaDriverGetVersion(&driver));
  char device[512];
  snprintf(device, sizeof device, "%s (sm_%d%d, %d SMs, %.0f GiB, L2 %.0f MB); CUDA runtime %d.%d, driver %d.%d", prop.name, prop.major, prop.minor, prop.multiProcessorCount, prop.totalGlobalMem / 1073741824.0, prop.l2CacheSize / 1e6, runtime / 1000, runtime % 1000 / 10, driver / 1000, driver % 1000 / 10);
  printf("spmv_gpu: %s\n", device);

  /* ---- phase 1: self-checks ---- */
  if (self_check(gpu_ops, check_only)) die("the self-checks failed; no timings");
  if (check_only) return 0;

  cusparseHandle_t handle;
  SPARSE_CALL(cusparseCreate(&handle));
  SPARSE_CALL(cusparseGetVersion(handle, &sparse_version));
  snprintf(device + strlen(device), sizeof device - strlen(device), ", cuSPARSE %d", sparse_version);

  /* ---- phase 2: the ceiling ---- */
  const double triad = measure_triad(quick ? (size_t)1 << 25 : (size_t)1 << 28, reps);

  /* ---- phase 3: the cases ---- */
  const Case full[] = {{"7-point star 256^3, dof 1", STAR, 256, 1},
                       {"7-point star 128^3, dof 2", STAR, 128, 2},
                       {"7-point star 128^3, dof 4", STAR, 128, 4},
                       {"27-point box 128^3, dof 1", BOX, 128, 1},
                       {"27-point box 192^3, dof 1", BOX, 192, 1}};
  const Case small[] = {{"7-point star 64^3, dof 1", STAR, 64, 1}, {"7-point star 32^3, dof 4", STAR, 32, 4}, {"27-point box 48^3, dof 1", BOX, 48, 1}};
  std::vector<Case> cases = quick ? std::vector<Case>(small, small + 3) : std::vector<Case>(full, full + 5);
  std::vector<Result> results;
  for (const Case &c : cases) results.push_back(run_case(c, handle, reps));
  SPARSE_CALL(cusparseDestroy(handle));

  /* ---- the table, last ---- */
  std::string out;
  char        line[1024];
  auto        add = [&](const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    out += line;
  };
  int fast = 0, full_bw = 0;
  for (const Result &r : results) {
    fast += r.sp_us / r.sg_us >= 2.3;
    full_bw += r.sg_bytes / (r.sg_us * 1e3) >= 0.95 * triad;
  }
  add("\n## SG-DIA SpMV against cuSPARSE CSR\n\n");
  add("%s. Median of %d event-timed runs after warm-up; every product checked against a CPU reference (relative 2-norm error < 1e-12).\n\n", device, reps);
  add("Triad a = b + s*c (3 arrays, 24 bytes per entry): %.0f GB/s, the 100%% below.\n", triad);
  add("Byte model: SG-DIA moves values 8*nsten*dof*rows + x 8*rows + y 8*rows; CSR (int32) values 8*nnz + column indices 4*nnz + row pointers 4*(rows+1) + x + y.\n");
  add("SG-DIA: runtime/sgdia_cuda.cu, one thread per row, __ldg loads (the default); the ldcs column is the same kernel with streaming loads of the matrix. cuSPARSE: the faster of ALG_DEFAULT and CSR_ALG2, each after cusparseSpMV_preprocess. No L2 flush between runs (x and y of the 27-point 128^3 case fit in the L2; no matrix does).\n");
  add("Goals: speed-up >= 2.3x met in %d of %zu cases; SG-DIA >= 95%% of the triad in %d of %zu.\n\n", fast, results.size(), full_bw, results.size());
  add("| case | rows | nnz | SG-DIA us | GB/s | %% of triad | SG-DIA ldcs us | cuSPARSE us | GB/s | %% of triad | cuSPARSE alg | speed-up |\n");
  add("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|--:|\n");
  for (const Result &r : results) {
    const double sg = r.sg_bytes / (r.sg_us * 1e3), sp = r.sp_bytes / (r.sp_us * 1e3);
    add("| %s | %lld | %lld | %.1f | %.0f | %.1f%% | %.1f | %.1f | %.0f | %.1f%% | %s | **%.2fx** |\n", r.name.c_str(), r.rows, r.nnz, r.sg_us, sg, 100.0 * sg / triad, r.sg_cs_us, r.sp_us, sp, 100.0 * sp / triad, r.sp_alg, r.sp_us / r.sg_us);
  }
  fputs(out.c_str(), stdout);
  fflush(stdout);
  if (md) {
    FILE *f = fopen(md, "w");
    if (!f || fputs(out.c_str() + 1, f) < 0 || fclose(f) != 0) die("cannot write %s", md);
  }
  return 0;
}
