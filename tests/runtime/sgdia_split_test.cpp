/* tests/runtime/sgdia_split_test.cpp: the SG-DIA row product with split reads
   (runtime/sgdia_rows.h, row_product_split: owned neighbours from the owned array, the others
   from the ghosted array, whose owned points are not read) against row_product on the whole
   ghosted array, on the host: every row of random boxes, stencils (star and box, width 1 and
   2), dof 1 to 3 and periodic directions, bitwise. The ghosted array's owned points hold NaN,
   so a split read that took one would show. Also the fast path on the owned array alone for the
   rows whose neighbours are all owned. C++ with PETSc's headers (stncuda.h); the CUDA qualifiers
   are defined away. */
#define __host__
#define __device__
#define __forceinline__ inline
static inline bool __all_sync(unsigned, bool p) { return p; } /* one thread: its own vote */
#include "sgdia_rows.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

using namespace stn_sgdia;

static unsigned seed = 12345;
static int      rnd(int n) { return (int)((seed = seed * 1103515245u + 12345u) >> 8) % n; }

/* The value of component c at global point (i, j, k), periodic images included. */
static double field(const int n[3], const int per[3], int i, int j, int k, int c)
{
  int p[3] = {i, j, k};
  for (int d = 0; d < 3; d++)
    if (per[d]) p[d] = ((p[d] % n[d]) + n[d]) % n[d];
  return 1.0 + 0.25 * p[0] - 0.125 * p[1] + 0.0625 * p[2] + 0.5 * c + 0.03125 * ((p[0] * 7 + p[1] * 3 + p[2]) % 5);
}

static int one_case(int dim, int w, bool box, int dof, int *checked)
{
  int n[3] = {1, 1, 1}, per[3] = {0, 0, 0}, s[3] = {0, 0, 0}, m[3] = {1, 1, 1}, gs[3] = {0, 0, 0}, gm[3] = {1, 1, 1};
  for (int d = 0; d < dim; d++) {
    per[d] = rnd(2);
    n[d]   = 2 * w + 2 + rnd(6);
    m[d]   = 1 + rnd(n[d]);
    s[d]   = rnd(n[d] - m[d] + 1);
    if (per[d] && m[d] < n[d] && m[d] < w) m[d] = w; /* as PETSc: a rank's share is at least the width */
    if (s[d] + m[d] > n[d]) s[d] = n[d] - m[d];
    gs[d] = per[d] ? s[d] - w : (s[d] - w < 0 ? 0 : s[d] - w);
    gm[d] = (per[d] ? s[d] + m[d] + w : (s[d] + m[d] + w > n[d] ? n[d] : s[d] + m[d] + w)) - gs[d];
  }
  std::vector<int> off; /* the stencil: star or box of width w, the centre first */
  off.insert(off.end(), {0, 0, 0});
  for (int dk = -(dim > 2 ? w : 0); dk <= (dim > 2 ? w : 0); dk++)
    for (int dj = -(dim > 1 ? w : 0); dj <= (dim > 1 ? w : 0); dj++)
      for (int di = -w; di <= w; di++) {
        const int nz = (di != 0) + (dj != 0) + (dk != 0);
        if (nz == 0 || (!box && nz > 1)) continue;
        off.insert(off.end(), {di, dj, dk});
      }
  const int nsten = (int)off.size() / 3;
  Geometry  gh{}, gsp{};
  for (Geometry *g : {&gh, &gsp}) {
    g->dof = dof, g->nsten = nsten;
    for (int d = 0; d < 3; d++) {
      g->s[d] = s[d], g->m[d] = m[d], g->n[d] = n[d], g->skip[d] = !per[d], g->wrap[d] = 0;
      g->gb[d] = gs[d], g->gbm[d] = gm[d];
    }
    for (int t = 0; t < 3 * nsten; t++) g->off[t] = off[t];
    g->nrows = m[0] * m[1] * m[2] * dof;
  }
  for (int d = 0; d < 3; d++) gh.b[d] = gs[d], gh.bm[d] = gm[d], gsp.b[d] = s[d], gsp.bm[d] = m[d];
  for (int t = 0; t < nsten; t++) gsp.lin[t] = (off[3 * t + 2] * m[1] + off[3 * t + 1]) * m[0] + off[3 * t];
  std::vector<double> A((size_t)nsten * dof * gh.nrows), x((size_t)gh.nrows), xg((size_t)gm[0] * gm[1] * gm[2] * dof), xgp(xg.size());
  for (double &a : A) a = (rnd(1000) - 500) / 256.0;
  for (int k = 0; k < gm[2]; k++)
    for (int j = 0; j < gm[1]; j++)
      for (int i = 0; i < gm[0]; i++)
        for (int c = 0; c < dof; c++) {
          const size_t q = (((size_t)k * gm[1] + j) * gm[0] + i) * dof + c;
          const int    pi = gs[0] + i, pj = gs[1] + j, pk = gs[2] + k;
          const bool   own = pi >= s[0] && pi < s[0] + m[0] && pj >= s[1] && pj < s[1] + m[1] && pk >= s[2] && pk < s[2] + m[2];
          xg[q] = field(n, per, pi, pj, pk, c);
          xgp[q] = own ? NAN : xg[q];
        }
  for (int k = 0; k < m[2]; k++)
    for (int j = 0; j < m[1]; j++)
      for (int i = 0; i < m[0]; i++)
        for (int c = 0; c < dof; c++) x[(((size_t)k * m[1] + j) * m[0] + i) * dof + c] = field(n, per, s[0] + i, s[1] + j, s[2] + k, c);
  int bad = 0;
  for (int t = 0; t < gh.nrows; t++) {
    const int p = t / dof, i = s[0] + p % m[0], j = s[1] + (p / m[0]) % m[1], k = s[2] + p / (m[0] * m[1]);
    const double ref = row_product<0, 0, false, true>(gh, A.data(), xg.data(), t, i, j, k);
    const double got = row_product_split<0, 0, false>(gsp, A.data(), x.data(), xgp.data(), t, i, j, k);
    bool all_owned = true; /* every existing neighbour owned: the fast path on x alone */
    for (int q = 0; q < nsten; q++) {
      const int nb[3] = {i + off[3 * q], j + off[3 * q + 1], k + off[3 * q + 2]};
      for (int d = 0; d < 3; d++) all_owned = all_owned && nb[d] >= s[d] && nb[d] < s[d] + m[d];
    }
    const double fast = all_owned ? row_product<0, 0, false, false, kNoEdge>(gsp, A.data(), x.data(), t, i, j, k) : ref;
    (*checked)++;
    if (!(got == ref) || !(fast == ref) || !std::isfinite(got)) {
      if (bad++ < 3)
        std::printf("FAIL: sgdia split reads: %dD w=%d %s dof=%d, row %d at (%d, %d, %d): split %.17g, fast %.17g, ghosted %.17g\n", dim, w, box ? "box" : "star", dof, t, i, j, k, got, fast, ref);
    }
  }
  return bad;
}

int main(void)
{
  int fails = 0, rows = 0, cases = 0;
  for (int rep = 0; rep < 40; rep++)
    for (int dim = 1; dim <= 3; dim++)
      for (int w = 1; w <= 2; w++)
        for (int box = 0; box <= 1; box++) {
          fails += one_case(dim, w, box, 1 + rep % 3, &rows) ? 1 : 0;
          cases++;
        }
  std::printf("sgdia split reads: %d cases, %d rows: %s\n", cases, rows, fails ? "FAIL" : "ok");
  return fails ? 1 : 0;
}
