/* stnmg_cuda.h: the device side of multigrid, callable from C: moving vectors between two grids
   of a DMDA hierarchy (the coarse one has every other point of the fine one), and the start
   vector of the smoothers' eigenvalue estimates. The device (stnmg_cuda.cu) and the host
   (stntransfer.c) go through the same point functions below, so both compute the same values
   in the same order. Plain C: no CUDA or PETSc header.

   Arrays are boxes of a grid, x fastest, dof values per point (StnTransferGrid's layout): on one
   rank the whole grids; on several a rank's own points and the ghosted local arrays PETSc's
   DMGlobalToLocal fills. In a direction that is not periodic the fine grid has 2 nc - 1 points
   and fine point 2I is coarse point I; periodic, it has 2 nc, and fine point 2 nc - 1 lies
   between coarse points nc - 1 and 0.
     interpolate  fine (+)= P coarse: bilinear (trilinear) in the coarse points around each fine
                  point, the operator of PETSc's DMCreateInterpolation for these grids;
     restrict     coarse (+)= P^T fine, its transpose (weights 1, 1/2, 1/4, 1/8);
     inject       coarse = fine at the coarse points, PETSc's DMCreateInjection;
     rscale       coarse = 1 / (P^T 1), DMCreateInterpolationScale's vector, from the weights
                  alone (no fine vector: making one and freeing it cost more than the solve's
                  setup had otherwise).
   The weights are powers of two, so each product is exact and only the order of the sums can
   differ from PETSc's AIJ products. Each function reads its input once and writes its output
   once: bandwidth-bound, about 16 bytes per fine unknown for interpolate and restrict. The CUDA
   ones return 0 or the error of the launch. */
#ifndef STNMG_CUDA_H
#define STNMG_CUDA_H

#if defined(__CUDACC__)
  #define STN_HD __host__ __device__
#else
  #define STN_HD
#endif

typedef struct {
  int dim, dof;
  int nf[3], nc[3]; /* fine and coarse points per direction; 1 where the grid has no direction */
  int periodic[3];
  /* The layout, in global point indices: the fine array holds points [fs, fs + fm), the coarse
     one [cs, cs + cm), and a call computes the points [os, os + om) of its output grid. A
     ghosted array's box may start at -1 or end past n in a periodic direction: its ghost points
     hold the wrapped values there, so indices are taken as they are (wrap 0); arrays of whole
     grids (wrap 1) wrap them. stn_transfer_whole sets the one-rank layout. */
  int fs[3], fm[3], cs[3], cm[3], os[3], om[3];
  int wrap;
  /* Split reads (own not NULL): the input's points in [ps, ps + pm), a rank's owned ones, are
     read from own, laid out in that box, the others from the input array (its ghosts): an
     exchange need not copy the owned points into the ghosted array. */
  const double *own;
  int           ps[3], pm[3];
} StnTransferGrid;

#ifdef __cplusplus
extern "C" {
#endif
int StnTransferInterpolateCUDA(const StnTransferGrid *g, int add, const double *coarse, double *fine);
int StnTransferRestrictCUDA(const StnTransferGrid *g, int add, const double *fine, double *coarse);
int StnTransferInjectCUDA(const StnTransferGrid *g, const double *fine, double *coarse);
int StnTransferRScaleCUDA(const StnTransferGrid *g, double *coarse);
/* x[i] = stn_noise(start + i), i < n */
int StnNoiseCUDA(double *x, long n, long start);
#ifdef __cplusplus
}
#endif

/* The layout of one rank's whole grids, each call computing its whole output grid (out_fine:
   the fine one, for interpolate; else the coarse one). */
STN_HD static inline void stn_transfer_whole(StnTransferGrid *g, int out_fine)
{
  for (int d = 0; d < 3; d++) {
    g->fs[d] = g->cs[d] = g->os[d] = 0;
    g->fm[d] = g->nf[d];
    g->cm[d] = g->nc[d];
    g->om[d] = out_fine ? g->nf[d] : g->nc[d];
  }
  g->wrap = 1;
}

/* Where global point (i, j, k) lies in an array holding the box [s, s + m), times dof. */
STN_HD static inline long stn_transfer_at(const int s[3], const int m[3], int dof, int i, int j, int k)
{
  return (((long)(k - s[2]) * m[1] + (j - s[1])) * m[0] + (i - s[0])) * dof;
}

/* The input's values at global point (i, j, k): in, an array holding the box [s, s + m), or
   under split reads own where the point is in [ps, ps + pm). */
STN_HD static inline const double *stn_transfer_in(const StnTransferGrid *g, const double *in, const int s[3], const int m[3], int dof, int i, int j, int k)
{
  if (g->own && (unsigned)(i - g->ps[0]) < (unsigned)g->pm[0] && (unsigned)(j - g->ps[1]) < (unsigned)g->pm[1] && (unsigned)(k - g->ps[2]) < (unsigned)g->pm[2])
    return g->own + stn_transfer_at(g->ps, g->pm, dof, i, j, k);
  return in + stn_transfer_at(s, m, dof, i, j, k);
}

/* The loops below run over fixed counts with the missing points skipped, so that a compiler
   keeps the small arrays in registers (indexed by constants once unrolled); the points taken
   and the order of the sums are those of the plain loops over the points that exist. */
#if defined(__CUDA_ARCH__) /* the device pass; a host compiler unrolls loops this short itself */
  #define STN_UNROLL _Pragma("unroll")
#else
  #define STN_UNROLL
#endif

/* The coarse points on either side of fine index f along a direction, with their weights: one
   point of weight 1 when f is a coarse point (n = 1), else two of weight 1/2. */
STN_HD static inline int stn_transfer_sides(const StnTransferGrid *g, int d, int f, int side[2], double w[2])
{
  side[0] = f / 2;
  side[1] = side[0] + 1 == g->nc[d] && g->wrap ? 0 : side[0] + 1; /* only a periodic direction reaches nc */
  if (d >= g->dim || f % 2 == 0) {
    w[0] = 1.0, w[1] = 0.0;
    return 1;
  }
  w[0] = w[1] = 0.5;
  return 2;
}

/* Values c0 to c1 - 1 of fine point (i, j, k) from the coarse points around it; dof values per
   point. */
STN_HD static inline void stn_transfer_interpolate_point(const StnTransferGrid *g, int dof, int c0, int c1, int add, int i, int j, int k, const double *coarse, double *fine)
{
  int    at[3] = {i, j, k}, s[3][2], n[3];
  double w[3][2];
  long   out = stn_transfer_at(g->fs, g->fm, dof, i, j, k);

  STN_UNROLL
  for (int d = 0; d < 3; d++) n[d] = stn_transfer_sides(g, d, at[d], s[d], w[d]);
  for (int c = c0; c < c1; c++) {
    double sum = 0.0;
    STN_UNROLL
    for (int b = 0; b < 2; b++) {
      STN_UNROLL
      for (int a = 0; a < 2; a++) {
        STN_UNROLL
        for (int e = 0; e < 2; e++)
          if (b < n[2] && a < n[1] && e < n[0]) sum += w[2][b] * w[1][a] * w[0][e] * stn_transfer_in(g, coarse, g->cs, g->cm, dof, s[0][e], s[1][a], s[2][b])[c];
      }
    }
    fine[out + c] = add ? fine[out + c] + sum : sum;
  }
}

/* Values c0 to c1 - 1 of coarse point (i, j, k) from the fine points whose interpolation reads
   it: 2i - 1, 2i, 2i + 1 along each direction, those the fine array holds (wrapped in a periodic
   direction of a whole grid). On several ranks the fine array is a rank's own points and the
   sum its part of the value, the ranks' parts summed after (each fine point counted once: by
   the coarse point, owned or ghost, whose unwrapped index reads it). */
STN_HD static inline void stn_transfer_restrict_point(const StnTransferGrid *g, int dof, int c0, int c1, int add, int i, int j, int k, const double *fine, double *coarse)
{
  int    at[3] = {i, j, k}, f[3][3], has[3][3];
  double w[3][3];
  long   out = stn_transfer_at(g->cs, g->cm, dof, i, j, k);

  STN_UNROLL
  for (int d = 0; d < 3; d++) {
    STN_UNROLL
    for (int o = -1; o <= 1; o++) {
      int x = 2 * at[d] + o;
      if (d >= g->dim) x = o ? -1 : 0; /* no such direction: the one point 0, weight 1 */
      else if (g->periodic[d] && g->wrap) x = (x + g->nf[d]) % g->nf[d];
      has[d][o + 1] = x >= g->fs[d] && x < g->fs[d] + g->fm[d];
      f[d][o + 1]   = has[d][o + 1] ? x : g->fs[d];
      w[d][o + 1]   = o ? 0.5 : 1.0;
    }
  }
  for (int c = c0; c < c1; c++) {
    double sum = 0.0;
    STN_UNROLL
    for (int b = 0; b < 3; b++) {
      STN_UNROLL
      for (int a = 0; a < 3; a++) {
        STN_UNROLL
        for (int e = 0; e < 3; e++)
          if (has[2][b] && has[1][a] && has[0][e]) sum += w[2][b] * w[1][a] * w[0][e] * stn_transfer_in(g, fine, g->fs, g->fm, dof, f[0][e], f[1][a], f[2][b])[c];
      }
    }
    coarse[out + c] = add ? coarse[out + c] + sum : sum;
  }
}

/* Coarse point (i, j, k): 1 / the sum of its restriction weights, the product over directions of
   1 + 1/2 per fine neighbour that exists (the same dyadic values the restriction of a vector of
   ones sums, so the same bits). */
STN_HD static inline void stn_transfer_rscale_point(const StnTransferGrid *g, int i, int j, int k, double *coarse)
{
  int    at[3] = {i, j, k};
  double sum   = 1.0;
  long   out   = stn_transfer_at(g->cs, g->cm, g->dof, i, j, k);

  for (int d = 0; d < g->dim; d++) {
    double w = 1.0;
    for (int o = -1; o <= 1; o += 2) {
      int x = 2 * at[d] + o;
      if (g->periodic[d] || (x >= 0 && x < g->nf[d])) w += 0.5;
    }
    sum *= w;
  }
  for (int c = 0; c < g->dof; c++) coarse[out + c] = 1.0 / sum;
}

/* Coarse point (i, j, k): the fine point at 2i, 2j, 2k. */
STN_HD static inline void stn_transfer_inject_point(const StnTransferGrid *g, int i, int j, int k, const double *fine, double *coarse)
{
  int  fi = 2 * i, fj = g->dim > 1 ? 2 * j : 0, fk = g->dim > 2 ? 2 * k : 0;
  long in = stn_transfer_at(g->fs, g->fm, g->dof, fi, fj, fk), out = stn_transfer_at(g->cs, g->cm, g->dof, i, j, k);

  for (int c = 0; c < g->dof; c++) coarse[out + c] = fine[in + c];
}

/* PETSc's KSPNoisyHash_Private: a deterministic value in about [-1, 1) for index i, the vector
   PETSc's Chebyshev estimates its eigenvalues from. */
STN_HD static inline double stn_noise(long i)
{
  unsigned int x = (unsigned int)i;

  x = ((x >> 16) ^ x) * 0x45d9f3bu;
  x = ((x >> 16) ^ x) * 0x45d9f3bu;
  x = (x >> 16) ^ x;
  return (double)(((long long)x - 2147483648LL) * 5.e-10);
}

#endif
