/* sgdia_rows.h: one row of the SG-DIA product, for device code (sgdia_cuda.cu's product kernel
   and the GMRES cycle kernel of stncycle_cuda.cu, which computes the product's rows itself).
   C++ and CUDA only: included by .cu files, never by the C side.

   The storage and the kernel design are described at the top of sgdia_cuda.cu; the launcher
   there (StnSGDIAGeometry) checks a box and works out the Geometry these functions read. */
#ifndef SGDIA_ROWS_H
#define SGDIA_ROWS_H

#include "sgdia_cuda.h"
#include "stnfastdiv.h"

#include <cstddef>

namespace stn_sgdia {

/* Unrolling in the functions that the host compiler sees too (it does not know the pragma). */
#ifdef __CUDA_ARCH__
  #define STN_UNROLL _Pragma("unroll")
#else
  #define STN_UNROLL
#endif

/* Passed by value (about 2 KB of the 4 KB parameter space): read through the constant cache. */
struct Geometry {
  int nrows, dof, nsten;
  int s[3], m[3];                 /* owned box: first index and extent per direction */
  int b[3], bm[3];                /* the box x is laid out in (ghosted or owned) */
  int n[3];                       /* global grid size */
  StnFastDiv div_m[2];            /* m[0] and m[1] as divisors (row_point) */
  int skip[3];                    /* 1: neighbours beyond 0..n-1 do not exist (non-periodic) */
  int wrap[3];                    /* 1: neighbours beyond 0..n-1 are wrapped by -+n (owned layout) */
  int fast_lo[3], fast_hi[3];     /* points with fast_lo <= i < fast_hi in every direction have all
                                     their neighbours, at b + lin[s] in x's box */
  int lin[STN_MAX_STEN];          /* offset of block diagonal s, linear in x's box */
  int off[3 * STN_MAX_STEN];      /* di, dj, dk of block diagonal s */
  int gb[3], gbm[3];              /* split reads (row_product_split): the box xg is laid out in */
};

/* Checks box against the product's rules (sgdia_cuda.h) and fills g, for a product when for_x
   (where x's values are, too), else for the rows only; returns 0 or a recorded
   cudaErrorInvalidValue (StnCUDALastError says why). ghosted as sgdia_cuda.h's, or 2 for split
   reads (row_value_split): x in the owned box, xg in the ghosted box. In sgdia_cuda.cu. */
int StnSGDIAGeometry(const StnBox *box, int ghosted, bool for_x, Geometry *g);

/* A load of a matrix entry: through the read-only cache, or streaming (evict-first). */
template <bool STREAM>
__host__ __device__ __forceinline__ double load_a(const double *p)
{
#ifdef __CUDA_ARCH__
  return STREAM ? __ldcs(p) : __ldg(p);
#else
  return *p;
#endif
}

/* A load of x: through the read-only cache (RO: x is not written while the kernel runs), or a
   plain one (the GMRES cycle kernel writes the basis vectors it later multiplies). */
template <bool RO>
__host__ __device__ __forceinline__ double load_x(const double *p)
{
#ifdef __CUDA_ARCH__
  return RO ? __ldg(p) : *p;
#else
  return *p;
#endif
}

/* The global grid coordinates (i, j, k) of the point of row t. The divisions by the box's
   extents are multiplies (stnfastdiv.h): two true divisions would be 6% of the GMRES cycle
   kernel's instructions at 64^3. */
template <int DOF>
__host__ __device__ __forceinline__ void row_point(const Geometry &g, int t, int *i, int *j, int *k)
{
  const int dof = DOF ? DOF : g.dof;
  const int p = t / dof, q = StnFastDivide(p, g.div_m[0]), r = StnFastDivide(q, g.div_m[1]);
  *i = g.s[0] + (p - q * g.m[0]);
  *j = g.s[1] + (q - r * g.m[1]);
  *k = g.s[2] + r;
}

/* Whether every neighbour of (i, j, k) is at base + lin[s] (see fast_lo). */
__host__ __device__ __forceinline__ bool in_fast_range(const Geometry &g, int i, int j, int k)
{
  return i >= g.fast_lo[0] && i < g.fast_hi[0] && j >= g.fast_lo[1] && j < g.fast_hi[1] && k >= g.fast_lo[2] && k < g.fast_hi[2];
}

/* Whether (j, k) is in the fast range: only x can take a point out of it. */
__host__ __device__ __forceinline__ bool in_fast_yz(const Geometry &g, int j, int k)
{
  return j >= g.fast_lo[1] && j < g.fast_hi[1] && k >= g.fast_lo[2] && k < g.fast_hi[2];
}

/* Which neighbours row_product tests before it reads them. */
enum Edge {
  kNoEdge, /* none: (i, j, k) is in the fast range */
  kXEdge,  /* x's: (j, k) in the fast range, x not periodic; a neighbour beyond the x edge of the
              domain is skipped, every other one is at base + lin[s] */
  kEdges   /* every non-periodic direction's, where no direction wraps (x's box holds the periodic
              neighbours): a neighbour beyond an edge is skipped, every other one is at base + lin[s] */
};

/* (A x)[t] for the row t at point (i, j, k): every neighbour's A entry times x, in the order of
   the block columns. CHECKED: test each neighbour, wrapping periodic ones (any point). Otherwise
   EDGE says which neighbours are tested; an untested one is at base + lin[s] (the launcher checked
   that every neighbour that exists lies in x's box). XRO: x is read-only while the kernel runs
   (load_x). XSCALE: the vector is x * xs, each entry scaled as it is loaded (the same bits as a
   vector scaled before). Every path adds the same terms in the same order: the same bits. */
template <int DOF, int NSTEN, bool STREAM, bool CHECKED, int EDGE = kNoEdge, bool XRO = true, bool XSCALE = false>
__host__ __device__ __forceinline__ double row_product(const Geometry &g, const double *__restrict__ A, const double *__restrict__ x, int t, int i, int j, int k, double xs = 1.0)
{
  const int     dof = DOF ? DOF : g.dof, nsten = NSTEN ? NSTEN : g.nsten;
  const size_t  ld  = (size_t)g.nrows;
  const double *a   = A + t;
  double        acc = 0.0;

  if (!CHECKED) {
    const int base = ((k - g.b[2]) * g.bm[1] + (j - g.b[1])) * g.bm[0] + (i - g.b[0]);
    STN_UNROLL
    for (int s = 0; s < nsten; s++) {
      if (EDGE == kXEdge) {
        const int ni = i + g.off[3 * s];
        if (ni < 0 || ni >= g.n[0]) continue;
      }
      if (EDGE == kEdges) {
        const int nb[3] = {i + g.off[3 * s], j + g.off[3 * s + 1], k + g.off[3 * s + 2]};
        bool      out   = false;
        STN_UNROLL
        for (int d = 0; d < 3; d++) out = out || (g.skip[d] && (unsigned)nb[d] >= (unsigned)g.n[d]);
        if (out) continue;
      }
      const double *xn = x + (base + g.lin[s]) * dof;
      STN_UNROLL
      for (int c = 0; c < dof; c++) acc += load_a<STREAM>(a + (size_t)(s * dof + c) * ld) * (XSCALE ? load_x<XRO>(xn + c) * xs : load_x<XRO>(xn + c));
    }
  } else {
    STN_UNROLL
    for (int s = 0; s < nsten; s++) {
      int  nb[3]  = {i + g.off[3 * s], j + g.off[3 * s + 1], k + g.off[3 * s + 2]};
      bool exists = true;
      STN_UNROLL
      for (int d = 0; d < 3; d++) {
        const bool out = nb[d] < 0 || nb[d] >= g.n[d];
        exists         = exists && !(out && g.skip[d]);
        if (out && g.wrap[d]) nb[d] += nb[d] < 0 ? g.n[d] : -g.n[d];
      }
      if (exists) {
        const double *xn = x + (((nb[2] - g.b[2]) * g.bm[1] + (nb[1] - g.b[1])) * g.bm[0] + (nb[0] - g.b[0])) * dof;
        STN_UNROLL
        for (int c = 0; c < dof; c++) acc += load_a<STREAM>(a + (size_t)(s * dof + c) * ld) * (XSCALE ? load_x<XRO>(xn + c) * xs : load_x<XRO>(xn + c));
      }
    }
  }
  return acc;
}

/* Split reads: (A x)[t] for the row t at point (i, j, k), each neighbour owned by this rank read
   from x, laid out in the owned box (b = s), every other one from xg, laid out in the ghost box
   gb, whose owned points are not read: an exchange need not copy the owned points into xg. A
   neighbour beyond a non-periodic edge is skipped; the ghost box holds the periodic images, so
   nothing wraps. The same terms in the same order as row_product's on a ghosted x with the same
   values: the same bits. */
template <int DOF, int NSTEN, bool STREAM, bool XRO = true>
__host__ __device__ __forceinline__ double row_product_split(const Geometry &g, const double *__restrict__ A, const double *__restrict__ x, const double *__restrict__ xg, int t, int i, int j, int k)
{
  const int     dof = DOF ? DOF : g.dof, nsten = NSTEN ? NSTEN : g.nsten;
  const size_t  ld  = (size_t)g.nrows;
  const double *a   = A + t;
  double        acc = 0.0;

  STN_UNROLL
  for (int s = 0; s < nsten; s++) {
    const int nb[3] = {i + g.off[3 * s], j + g.off[3 * s + 1], k + g.off[3 * s + 2]};
    bool      out = false, owned = true;
    STN_UNROLL
    for (int d = 0; d < 3; d++) {
      out   = out || (g.skip[d] && (unsigned)nb[d] >= (unsigned)g.n[d]);
      owned = owned && (unsigned)(nb[d] - g.s[d]) < (unsigned)g.m[d];
    }
    if (out) continue;
    const double *xn = owned ? x + (((nb[2] - g.s[2]) * g.m[1] + (nb[1] - g.s[1])) * g.m[0] + (nb[0] - g.s[0])) * dof
                             : xg + (((nb[2] - g.gb[2]) * g.gbm[1] + (nb[1] - g.gb[1])) * g.gbm[0] + (nb[0] - g.gb[0])) * dof;
    STN_UNROLL
    for (int c = 0; c < dof; c++) acc += load_a<STREAM>(a + (size_t)(s * dof + c) * ld) * load_x<XRO>(xn + c);
  }
  return acc;
}

#ifdef __CUDACC__
/* row_value with split reads: a warp whose points have every neighbour owned takes the fast path
   on x (the geometry's x box is the owned one, StnSGDIAGeometry's ghosted 2), any other warp
   row_product_split. */
template <int DOF, int NSTEN, bool STREAM>
__device__ __forceinline__ double row_value_split(const Geometry &g, const double *__restrict__ A, const double *__restrict__ x, const double *__restrict__ xg, int t, bool active)
{
  int i = 0, j = 0, k = 0;
  if (active) row_point<DOF>(g, t, &i, &j, &k);
  if (__all_sync(0xffffffffu, !active || in_fast_range(g, i, j, k)))
    return active ? row_product<DOF, NSTEN, STREAM, false, kNoEdge>(g, A, x, t, i, j, k) : 0.0;
  return active ? row_product_split<DOF, NSTEN, STREAM>(g, A, x, xg, t, i, j, k) : 0.0;
}
#endif

/* (A x)[t], or 0 where !active (t past the last row): the path (fast, x edge, edges, checked)
   chosen by a vote of the whole warp, so that the paths never diverge inside a warp. Every lane of
   the warp must call it, active or not. The edges' path keeps a warp at a y or z face of the
   domain from the checked one, several times its instructions: in the GMRES cycle kernel at 64^3
   a block of such warps would finish its product about 2 us after the others, and every block
   waits for the slowest at the next grid barrier. */
template <int DOF, int NSTEN, bool STREAM, bool XRO = true, bool XSCALE = false>
__device__ __forceinline__ double row_value(const Geometry &g, const double *__restrict__ A, const double *__restrict__ x, int t, bool active, double xs = 1.0)
{
  int i = 0, j = 0, k = 0;
  if (active) row_point<DOF>(g, t, &i, &j, &k);
  /* The vote needs every lane of the warp, so the rows past the end vote too (as fast). */
  if (__all_sync(0xffffffffu, !active || in_fast_range(g, i, j, k)))
    return active ? row_product<DOF, NSTEN, STREAM, false, kNoEdge, XRO, XSCALE>(g, A, x, t, i, j, k, xs) : 0.0;
  if (__all_sync(0xffffffffu, !active || (g.skip[0] && in_fast_yz(g, j, k)))) /* a warp at an x face of the domain: test x only */
    return active ? row_product<DOF, NSTEN, STREAM, false, kXEdge, XRO, XSCALE>(g, A, x, t, i, j, k, xs) : 0.0;
  if (!g.wrap[0] && !g.wrap[1] && !g.wrap[2]) /* the same for every warp */
    return active ? row_product<DOF, NSTEN, STREAM, false, kEdges, XRO, XSCALE>(g, A, x, t, i, j, k, xs) : 0.0;
  return active ? row_product<DOF, NSTEN, STREAM, true, kNoEdge, XRO, XSCALE>(g, A, x, t, i, j, k, xs) : 0.0;
}

} // namespace stn_sgdia

#endif
