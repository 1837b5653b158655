/* tests/runtime/transfer_split_test.c: the multigrid transfers with split reads
   (runtime/stnmg_cuda.h, StnTransferGrid.own: the input's owned points from the owned array, the
   others from the ghosted one, whose owned points are not read) against the same transfers on
   the whole ghosted input, bitwise: interpolation and restriction on random boxes of 1D to 3D
   grids, periodic directions, dof 1 to 3. The ghosted input's owned points hold NaN, so a split
   read that took one would show. Plain C. */
#include "stnmg_cuda.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static unsigned seed = 2024;
static int      rnd(int n) { return (int)((seed = seed * 1103515245u + 12345u) >> 8) % n; }

static int wrapped(int x, int n, int per) { return per ? ((x % n) + n) % n : x; }

static double value(const int n[3], const int per[3], int i, int j, int k, int c)
{
  const int p[3] = {wrapped(i, n[0], per[0]), wrapped(j, n[1], per[1]), wrapped(k, n[2], per[2])};
  return 1.0 + 0.5 * p[0] - 0.25 * p[1] + 0.125 * p[2] + 0.0625 * c + 0.03125 * ((3 * p[0] + 5 * p[1] + 7 * p[2]) % 4);
}

/* Fills the ghosted array of box [s, s + m) (values of a grid of n points) and the owned array of
   its sub-box [ps, ps + pm), with NaN in the ghosted array's owned points (poison) or not. */
static void fill(const int n[3], const int per[3], int dof, const int s[3], const int m[3], const int ps[3], const int pm[3], double *ghosted, double *owned, int poison)
{
  for (int k = s[2]; k < s[2] + m[2]; k++)
    for (int j = s[1]; j < s[1] + m[1]; j++)
      for (int i = s[0]; i < s[0] + m[0]; i++)
        for (int c = 0; c < dof; c++) {
          const int own = i >= ps[0] && i < ps[0] + pm[0] && j >= ps[1] && j < ps[1] + pm[1] && k >= ps[2] && k < ps[2] + pm[2];
          ghosted[stn_transfer_at(s, m, dof, i, j, k) + c] = poison && own ? NAN : value(n, per, i, j, k, c);
          if (own && owned) owned[stn_transfer_at(ps, pm, dof, i, j, k) + c] = value(n, per, i, j, k, c);
        }
}

/* A random sub-box of [s, s + m) in each direction. */
static void sub_box(int dim, const int s[3], const int m[3], int ps[3], int pm[3])
{
  for (int d = 0; d < 3; d++) {
    ps[d] = s[d], pm[d] = m[d];
    if (d >= dim) continue;
    pm[d] = 1 + rnd(m[d]);
    ps[d] = s[d] + rnd(m[d] - pm[d] + 1);
  }
}

static int one_case(int dim, int dof, long *checked)
{
  StnTransferGrid g = {0};
  int             fails = 0;

  g.dim = dim, g.dof = dof;
  for (int d = 0; d < 3; d++) {
    g.periodic[d] = d < dim && rnd(2);
    g.nc[d]       = d < dim ? 3 + rnd(5) : 1;
    g.nf[d]       = d < dim ? (g.periodic[d] ? 2 * g.nc[d] : 2 * g.nc[d] - 1) : 1;
  }
  /* interpolation: this rank's fine points from the coarse points around them, which a ghosted
     coarse box one point wider than they need holds (its periodic images unwrapped) */
  {
    int fo[3], fom[3], cs[3], cm[3], ps[3], pm[3];
    for (int d = 0; d < 3; d++) {
      fom[d] = d < dim ? 1 + rnd(g.nf[d]) : 1;
      fo[d]  = d < dim ? rnd(g.nf[d] - fom[d] + 1) : 0;
      int lo = fo[d] / 2 - (d < dim), hi = (fo[d] + fom[d] - 1 + 1) / 2 + (d < dim);
      if (!g.periodic[d] || d >= dim) lo = lo < 0 ? 0 : lo, hi = hi > g.nc[d] - 1 ? g.nc[d] - 1 : hi;
      cs[d] = lo, cm[d] = hi - lo + 1;
      g.fs[d] = g.os[d] = fo[d], g.fm[d] = g.om[d] = fom[d];
      g.cs[d] = cs[d], g.cm[d] = cm[d];
    }
    sub_box(dim, cs, cm, ps, pm);
    const long nc = (long)cm[0] * cm[1] * cm[2] * dof, no = (long)pm[0] * pm[1] * pm[2] * dof, nf = (long)fom[0] * fom[1] * fom[2] * dof;
    double    *cg = malloc(sizeof(double) * nc), *cp = malloc(sizeof(double) * nc), *co = malloc(sizeof(double) * no), *f1 = malloc(sizeof(double) * nf), *f2 = malloc(sizeof(double) * nf);
    fill(g.nc, g.periodic, dof, cs, cm, ps, pm, cg, NULL, 0);
    fill(g.nc, g.periodic, dof, cs, cm, ps, pm, cp, co, 1);
    StnTransferGrid gs = g;
    gs.own = co;
    for (int d = 0; d < 3; d++) gs.ps[d] = ps[d], gs.pm[d] = pm[d];
    for (int k = fo[2]; k < fo[2] + fom[2]; k++)
      for (int j = fo[1]; j < fo[1] + fom[1]; j++)
        for (int i = fo[0]; i < fo[0] + fom[0]; i++) {
          stn_transfer_interpolate_point(&g, dof, 0, dof, 0, i, j, k, cg, f1);
          stn_transfer_interpolate_point(&gs, dof, 0, dof, 0, i, j, k, cp, f2);
        }
    for (long q = 0; q < nf; q++, (*checked)++)
      if (!(f1[q] == f2[q]) && fails++ < 3) printf("FAIL: transfer split reads: interpolate %dD dof %d, entry %ld: split %.17g, ghosted %.17g\n", dim, dof, q, f2[q], f1[q]);
    free(cg), free(cp), free(co), free(f1), free(f2);
  }
  /* restriction: this rank's coarse points from the fine points around them that a ghosted fine
     box holds */
  {
    int co_s[3], co_m[3], fs[3], fm[3], ps[3], pm[3];
    for (int d = 0; d < 3; d++) {
      co_m[d] = d < dim ? 1 + rnd(g.nc[d]) : 1;
      co_s[d] = d < dim ? rnd(g.nc[d] - co_m[d] + 1) : 0;
      int lo = 2 * co_s[d] - (d < dim), hi = 2 * (co_s[d] + co_m[d] - 1) + (d < dim);
      if (!g.periodic[d] || d >= dim) lo = lo < 0 ? 0 : lo, hi = hi > g.nf[d] - 1 ? g.nf[d] - 1 : hi;
      fs[d] = lo, fm[d] = hi - lo + 1;
    }
    StnTransferGrid gr = g;
    for (int d = 0; d < 3; d++) gr.fs[d] = fs[d], gr.fm[d] = fm[d], gr.cs[d] = gr.os[d] = co_s[d], gr.cm[d] = gr.om[d] = co_m[d];
    sub_box(dim, fs, fm, ps, pm);
    const long nf = (long)fm[0] * fm[1] * fm[2] * dof, no = (long)pm[0] * pm[1] * pm[2] * dof, nc = (long)co_m[0] * co_m[1] * co_m[2] * dof;
    double    *fg = malloc(sizeof(double) * nf), *fp = malloc(sizeof(double) * nf), *fo = malloc(sizeof(double) * no), *c1 = malloc(sizeof(double) * nc), *c2 = malloc(sizeof(double) * nc);
    fill(g.nf, g.periodic, dof, fs, fm, ps, pm, fg, NULL, 0);
    fill(g.nf, g.periodic, dof, fs, fm, ps, pm, fp, fo, 1);
    StnTransferGrid gs = gr;
    gs.own = fo;
    for (int d = 0; d < 3; d++) gs.ps[d] = ps[d], gs.pm[d] = pm[d];
    for (int k = co_s[2]; k < co_s[2] + co_m[2]; k++)
      for (int j = co_s[1]; j < co_s[1] + co_m[1]; j++)
        for (int i = co_s[0]; i < co_s[0] + co_m[0]; i++) {
          stn_transfer_restrict_point(&gr, dof, 0, dof, 0, i, j, k, fg, c1);
          stn_transfer_restrict_point(&gs, dof, 0, dof, 0, i, j, k, fp, c2);
        }
    for (long q = 0; q < nc; q++, (*checked)++)
      if (!(c1[q] == c2[q]) && fails++ < 3) printf("FAIL: transfer split reads: restrict %dD dof %d, entry %ld: split %.17g, ghosted %.17g\n", dim, dof, q, c2[q], c1[q]);
    free(fg), free(fp), free(fo), free(c1), free(c2);
  }
  return fails;
}

int main(void)
{
  int  fails = 0, cases = 0;
  long checked = 0;
  for (int rep = 0; rep < 100; rep++)
    for (int dim = 1; dim <= 3; dim++, cases++) fails += one_case(dim, 1 + rep % 3, &checked) ? 1 : 0;
  printf("transfer split reads: %d cases, %ld values: %s\n", cases, checked, fails ? "FAIL" : "ok");
  return fails ? 1 : 0;
}
