/* tests/runtime/halo_plan_test.c: the geometry of the device ghost exchange
   (runtime/stnhalo_plan.c) on many partitions, without MPI or a GPU. For every rank of a
   partition it plays the exchange on integer arrays (each point's value its global index): the
   rank's own points copied in, then every block every rank sends it, packed into the rank's inbox
   where the sender puts it and unpacked from there as the receiver reads it. Checked: every inbox
   entry is written exactly once; every point of
   the ghosted box is written exactly once, with the value of the point it stands for (periodic
   images wrapped); no block writes outside the box or over an owned point; the flags a rank's
   blocks raise are 0 to (its incoming count) - 1, each once, at most 32; every rank that sends to
   another receives from it (StnHaloSymmetric; not in a gather where a rank owns nothing, which
   the exchange refuses). The partitions: 1D to
   3D, every mix of periodic directions, 1 to 4 ranks per direction split evenly and unevenly,
   stencil widths 1 and 2 (DMDA's ghosted boxes: width w around the owned box, cut at the edges
   of non-periodic directions), each partition's whole-grid gather (the coarse grids held whole
   on every rank), slabs with deep ghosts (multigrid's one exchange per smoothing) and the
   whole-vector gather of the coarse solve. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stnhalo_layout.h"
#include "stnhalo_plan.h"

#define MAX_RANKS 64

static int failures;

static long at(const StnHaloBoxes *b, const int p[3]) { return ((long)(p[2] - b->gs[2]) * b->gm[1] + (p[1] - b->gs[1])) * b->gm[0] + (p[0] - b->gs[0]); }
static int  inside(const int s[3], const int m[3], const int p[3]) { return p[0] >= s[0] && p[0] < s[0] + m[0] && p[1] >= s[1] && p[1] < s[1] + m[1] && p[2] >= s[2] && p[2] < s[2] + m[2]; }
static long global(const StnHaloGrid *g, const int p[3])
{
  int q[3];
  for (int d = 0; d < 3; d++) q[d] = (p[d] % g->n[d] + g->n[d]) % g->n[d];
  return ((long)q[2] * g->n[1] + q[1]) * g->n[0] + q[0];
}

/* A value of a point: its global index, component c of dof 2, array v of 2, all in one double. */
static double code(long point, int c, int v) { return (double)point * 4 + c * 2 + v; }

/* Plays the exchange as the kernels do, with their layout and indices (stnhalo_layout.h), dof 2
   and 2 arrays side by side: every rank's owned values put into its receivers' inboxes, every
   inbox unpacked into its rank's ghosted array; 1 when every ghost holds its point's values. */
static int play_layout(const StnHaloGrid *g, const StnHaloBoxes *b, int nranks, const char *what)
{
  const int dof = 2, nvec = 2;
  double   *inbox[MAX_RANKS];
  int       ok = 1, p[3];

  for (int r = 0; r < nranks; r++) {
    const long long in = StnHaloInboxStart(g, b, nranks, r, StnHaloIncoming(g, b, nranks, r));
    inbox[r]           = malloc(sizeof(double) * (size_t)(nvec * in * dof + 1));
    for (long long e = 0; e < nvec * in * dof; e++) inbox[r][e] = -1.0;
  }
  for (int from = 0; from < nranks; from++) { /* the puts */
    StnHaloPut put = {0};
    put.dof = dof, put.nvec = nvec;
    for (int d = 0; d < 3; d++) put.os[d] = b[from].os[d], put.om[d] = b[from].om[d];
    put.src_stride = (long long)put.om[0] * put.om[1] * put.om[2] * dof;
    double *own    = malloc(sizeof(double) * (size_t)(nvec * put.src_stride + 1));
    for (p[2] = put.os[2]; p[2] < put.os[2] + put.om[2]; p[2]++)
      for (p[1] = put.os[1]; p[1] < put.os[1] + put.om[1]; p[1]++)
        for (p[0] = put.os[0]; p[0] < put.os[0] + put.om[0]; p[0]++)
          for (int v = 0; v < nvec; v++)
            for (int c = 0; c < dof; c++) own[v * put.src_stride + stn_halo_at(put.os, put.om, p[0], p[1], p[2]) * dof + c] = code(global(g, p), c, v);
    for (int to = 0; to < nranks; to++)
      for (int sh = 0; sh < STN_HALO_SHIFTS; sh++) {
        StnHaloSlab sl = {0};
        long long   start, fi, ti;
        int         q;
        if (!stn_halo_slab(g, b, nranks, from, to, sh, dof, &sl, &start, &q)) continue;
        sl.dst = inbox[to] + start * dof;
        for (int r = 0; r < sl.m[0] * sl.m[1] * sl.m[2]; r++) {
          stn_halo_send_index(&put, &sl, r, &fi, &ti);
          for (int v = 0; v < nvec; v++)
            for (int c = 0; c < dof; c++) sl.dst[v * sl.dst_stride + ti + c] = own[v * put.src_stride + fi + c];
        }
      }
    free(own);
  }
  for (int to = 0; to < nranks && ok; to++) { /* the unpacks, and the check */
    const StnHaloBoxes *r = &b[to];
    StnHaloUnpack       u;
    if (!stn_halo_unpack_plan(g, b, nranks, to, dof, nvec, &u)) {
      printf("FAIL: halo_plan: %s: rank %d has no unpack plan\n", what, to);
      ok = 0;
      break;
    }
    double *gh = malloc(sizeof(double) * (size_t)(nvec * u.dst_stride + 1));
    for (long long e = 0; e < nvec * u.dst_stride; e++) gh[e] = -1.0;
    for (int q = 0; q < u.nblock; q++)
      for (long long t = u.first[q]; t < u.first[q + 1]; t++) {
        const long long ti = stn_halo_unpack_to(&u, q, (int)(t - u.first[q]));
        for (int v = 0; v < nvec; v++)
          for (int c = 0; c < dof; c++) gh[v * u.dst_stride + ti + c] = inbox[to][v * u.src_stride + t * dof + c];
      }
    for (p[2] = r->gs[2]; p[2] < r->gs[2] + r->gm[2] && ok; p[2]++)
      for (p[1] = r->gs[1]; p[1] < r->gs[1] + r->gm[1] && ok; p[1]++)
        for (p[0] = r->gs[0]; p[0] < r->gs[0] + r->gm[0] && ok; p[0]++) {
          if (inside(r->os, r->om, p)) continue; /* the put's own copy: the interior kernel's */
          for (int v = 0; v < nvec; v++)
            for (int c = 0; c < dof; c++)
              if (gh[v * u.dst_stride + stn_halo_at(r->gs, r->gm, p[0], p[1], p[2]) * dof + c] != code(global(g, p), c, v)) {
                printf("FAIL: halo_plan: %s: the kernels' layout leaves rank %d's ghost (%d,%d,%d), component %d of array %d, wrong\n", what, to, p[0], p[1], p[2], c, v);
                ok = 0;
              }
        }
    free(gh);
  }
  for (int r = 0; r < nranks; r++) free(inbox[r]);
  if (!ok) failures++;
  return ok;
}

/* Plays the exchange into every rank of the partition b[0..nranks); 1 when all is right. */
static int play(const StnHaloGrid *g, const StnHaloBoxes *b, int nranks, const char *what)
{
  for (int to = 0; to < nranks; to++) {
    const StnHaloBoxes *r = &b[to];
    const long          n = (long)r->gm[0] * r->gm[1] * r->gm[2];
    long               *val = malloc(sizeof(long) * (size_t)(n > 0 ? n : 1));
    int                *hits = calloc((size_t)(n > 0 ? n : 1), sizeof(int));
    int                 flags[64] = {0}, nq = StnHaloIncoming(g, b, nranks, to), p[3];
    const long long     inbox_n    = StnHaloInboxStart(g, b, nranks, to, nq);
    long               *inbox      = malloc(sizeof(long) * (size_t)(inbox_n > 0 ? inbox_n : 1));
    int                *inbox_hits = calloc((size_t)(inbox_n > 0 ? inbox_n : 1), sizeof(int));

    for (p[2] = r->os[2]; p[2] < r->os[2] + r->om[2]; p[2]++) /* the rank's own points */
      for (p[1] = r->os[1]; p[1] < r->os[1] + r->om[1]; p[1]++)
        for (p[0] = r->os[0]; p[0] < r->os[0] + r->om[0]; p[0]++) val[at(r, p)] = global(g, p), hits[at(r, p)]++;
    for (int from = 0; from < nranks; from++)
      for (int sh = 0; sh < STN_HALO_SHIFTS; sh++) {
        int s[3], m[3], shift[3], q;
        if (!StnHaloBlock(g, b, from, to, sh, s, m, shift)) continue;
        q = StnHaloFlag(g, b, nranks, from, to, sh);
        if (q < 0 || q >= 64 || flags[q]++) {
          printf("FAIL: halo_plan: %s: rank %d's block from %d (shift %d) has flag %d, taken or out of range\n", what, to, from, sh, q);
          goto fail;
        }
        const long long start = StnHaloInboxStart(g, b, nranks, to, q); /* as the sender packs it */
        for (p[2] = s[2]; p[2] < s[2] + m[2]; p[2]++)
          for (p[1] = s[1]; p[1] < s[1] + m[1]; p[1]++)
            for (p[0] = s[0]; p[0] < s[0] + m[0]; p[0]++) {
              const int img[3] = {p[0] + shift[0], p[1] + shift[1], p[2] + shift[2]};
              if (!inside(b[from].os, b[from].om, p) || !inside(r->gs, r->gm, img) || inside(r->os, r->om, img)) {
                printf("FAIL: halo_plan: %s: rank %d sends rank %d point (%d,%d,%d) to (%d,%d,%d), not from its own box to a ghost\n", what, from, to, p[0], p[1], p[2], img[0], img[1], img[2]);
                goto fail;
              }
              const long long i = start + ((long long)(p[2] - s[2]) * m[1] + (p[1] - s[1])) * m[0] + (p[0] - s[0]);
              if (i < 0 || i >= inbox_n || inbox_hits[i]++) {
                printf("FAIL: halo_plan: %s: rank %d's block from %d (shift %d) writes inbox entry %lld of %lld, outside or taken\n", what, to, from, sh, i, inbox_n);
                goto fail;
              }
              inbox[i] = global(g, p);
            }
      }
    for (int from = 0, q = 0; from < nranks; from++) /* the receiver unpacks its inbox, in flag order */
      for (int sh = 0; sh < STN_HALO_SHIFTS; sh++) {
        int             s[3], m[3], shift[3];
        const long long start = StnHaloInboxStart(g, b, nranks, to, q);
        if (!StnHaloBlock(g, b, from, to, sh, s, m, shift)) continue;
        q++;
        for (p[2] = s[2]; p[2] < s[2] + m[2]; p[2]++)
          for (p[1] = s[1]; p[1] < s[1] + m[1]; p[1]++)
            for (p[0] = s[0]; p[0] < s[0] + m[0]; p[0]++) {
              const int img[3] = {p[0] + shift[0], p[1] + shift[1], p[2] + shift[2]};
              val[at(r, img)]  = inbox[start + ((long long)(p[2] - s[2]) * m[1] + (p[1] - s[1])) * m[0] + (p[0] - s[0])], hits[at(r, img)]++;
            }
      }
    for (long long i = 0; i < inbox_n; i++)
      if (inbox_hits[i] != 1) {
        printf("FAIL: halo_plan: %s: rank %d's inbox entry %lld of %lld written %d times\n", what, to, i, inbox_n, inbox_hits[i]);
        goto fail;
      }
    for (int q = 0; q < nq; q++)
      if (flags[q] != 1) {
        printf("FAIL: halo_plan: %s: rank %d receives %d blocks but flag %d is raised %d times\n", what, to, nq, q, flags[q]);
        goto fail;
      }
    if (nq > 32) {
      printf("FAIL: halo_plan: %s: rank %d receives %d blocks, more than the 32 flags\n", what, to, nq);
      goto fail;
    }
    for (p[2] = r->gs[2]; p[2] < r->gs[2] + r->gm[2]; p[2]++)
      for (p[1] = r->gs[1]; p[1] < r->gs[1] + r->gm[1]; p[1]++)
        for (p[0] = r->gs[0]; p[0] < r->gs[0] + r->gm[0]; p[0]++)
          if (hits[at(r, p)] != 1 || val[at(r, p)] != global(g, p)) {
            printf("FAIL: halo_plan: %s: rank %d's ghosted point (%d,%d,%d) written %d times%s\n", what, to, p[0], p[1], p[2], hits[at(r, p)], hits[at(r, p)] == 1 ? " with another point's value" : "");
            goto fail;
          }
    free(val), free(hits), free(inbox), free(inbox_hits);
    continue;
  fail:
    free(val), free(hits), free(inbox), free(inbox_hits);
    failures++;
    return 0;
  }
  return play_layout(g, b, nranks, what);
}

/* The start of part i of n points split into k parts: even (PETSc's default, the first n % k
   parts one larger) or uneven (the first part takes a quarter more). */
static int part_start(int n, int k, int i, int uneven)
{
  if (!uneven || k == 1) return i * (n / k) + (i < n % k ? i : n % k);
  const int first = n / k + n / (4 * k) + 1, rest = n - first;
  return i == 0 ? 0 : first + (i - 1) * (rest / (k - 1)) + (i - 1 < rest % (k - 1) ? i - 1 : rest % (k - 1));
}

int main(void)
{
  static const int sizes[3][3] = {{13, 1, 1}, {12, 9, 1}, {8, 7, 6}};
  int              partitions = 0, gathers = 0, wholes = 0, deeps = 0;

  for (int dim = 1; dim <= 3; dim++)
    for (int per = 0; per < (1 << dim); per++)
      for (int w = 1; w <= 2; w++)
        for (int procs = 0; procs < (dim == 3 ? 27 : dim == 2 ? 16 : 4); procs++)
          for (int uneven = 0; uneven < 2; uneven++) {
            StnHaloGrid  g = {dim, {1, 1, 1}, {0, 0, 0}};
            StnHaloBoxes b[MAX_RANKS];
            int          k[3] = {1, 1, 1}, c = procs, nranks = 1, ok = 1;
            char         what[160];

            for (int d = 0; d < dim; d++) {
              g.n[d]        = sizes[dim - 1][d];
              g.periodic[d] = per >> d & 1;
              k[d]          = 1 + c % (dim == 1 ? 4 : dim == 2 ? 4 : 3), c /= (dim == 1 ? 4 : dim == 2 ? 4 : 3);
              nranks *= k[d];
            }
            for (int r = 0; r < nranks && ok; r++) {
              const int idx[3] = {r % k[0], r / k[0] % k[1], r / (k[0] * k[1])};
              for (int d = 0; d < 3; d++) {
                const int s = part_start(g.n[d], k[d], idx[d], uneven), e = part_start(g.n[d], k[d], idx[d] + 1, uneven);
                b[r].os[d] = s, b[r].om[d] = (idx[d] + 1 == k[d] ? g.n[d] : e) - s;
                if (d < dim && b[r].om[d] < w) ok = 0; /* DMDA requires w points a rank */
                const int lo = d >= dim ? 0 : g.periodic[d] ? s - w : (s - w < 0 ? 0 : s - w);
                const int hi = d >= dim ? 1 : g.periodic[d] ? s + b[r].om[d] + w : (s + b[r].om[d] + w > g.n[d] ? g.n[d] : s + b[r].om[d] + w);
                b[r].gs[d] = lo, b[r].gm[d] = hi - lo;
              }
            }
            if (!ok) continue;
            snprintf(what, sizeof what, "%dD %dx%dx%d periodic %d%d%d, width %d, %dx%dx%d ranks%s", dim, g.n[0], g.n[1], g.n[2], g.periodic[0], g.periodic[1], g.periodic[2], w, k[0], k[1], k[2], uneven ? " (uneven)" : "");
            partitions++;
            if (play(&g, b, nranks, what) && !StnHaloSymmetric(&g, b, nranks)) {
              printf("FAIL: halo_plan: %s: a rank receives from one it sends nothing to\n", what);
              failures++;
            }
            /* The same partition's whole-grid gather (StnHaloCreateWhole): every ghosted box the
               whole grid, periodic or not. */
            for (int r = 0; r < nranks; r++)
              for (int d = 0; d < 3; d++) b[r].gs[d] = 0, b[r].gm[d] = g.n[d];
            snprintf(what, sizeof what, "whole-grid gather of %dD %dx%dx%d periodic %d%d%d, %dx%dx%d ranks%s", dim, g.n[0], g.n[1], g.n[2], g.periodic[0], g.periodic[1], g.periodic[2], k[0], k[1], k[2], uneven ? " (uneven)" : "");
            wholes++;
            if (play(&g, b, nranks, what) && !StnHaloSymmetric(&g, b, nranks)) {
              printf("FAIL: halo_plan: %s: a rank receives from one it sends nothing to\n", what);
              failures++;
            }
          }
  /* Deep ghosts (runtime/stnmgdeep.h): slabs along the last axis, not periodic, each ghosted box
     the owned one lengthened by depth planes each way, cut at the grid's edges; deeper than a
     neighbour's slab, the planes come from the ranks beyond it too. */
  for (int dim = 2; dim <= 3; dim++)
    for (int nranks = 2; nranks <= 6; nranks++)
      for (int depth = 1; depth <= 9; depth++)
        for (int uneven = 0; uneven < 2; uneven++) {
          StnHaloGrid  g = {dim, {1, 1, 1}, {0, 0, 0}};
          StnHaloBoxes b[MAX_RANKS];
          const int    a = dim - 1;
          char         what[120];

          for (int d = 0; d < dim; d++) g.n[d] = d == a ? 17 : sizes[dim - 1][d];
          for (int r = 0; r < nranks; r++) {
            const int s = part_start(g.n[a], nranks, r, uneven), e = r + 1 == nranks ? g.n[a] : part_start(g.n[a], nranks, r + 1, uneven);
            for (int d = 0; d < 3; d++) b[r].os[d] = b[r].gs[d] = 0, b[r].om[d] = b[r].gm[d] = g.n[d];
            b[r].os[a] = s, b[r].om[a] = e - s;
            b[r].gs[a] = s - depth < 0 ? 0 : s - depth;
            b[r].gm[a] = (e + depth > g.n[a] ? g.n[a] : e + depth) - b[r].gs[a];
          }
          snprintf(what, sizeof what, "deep ghosts of %dD, 17 planes in %d slabs%s, depth %d", dim, nranks, uneven ? " (uneven)" : "", depth);
          deeps++;
          if (play(&g, b, nranks, what) && !StnHaloSymmetric(&g, b, nranks)) {
            printf("FAIL: halo_plan: %s: a rank receives from one it sends nothing to\n", what);
            failures++;
          }
        }
  /* The gather: every rank's ghosted box is the whole vector; some ranks own nothing. */
  for (int nranks = 1; nranks <= 6; nranks++)
    for (int empty = 0; empty < 2; empty++) {
      StnHaloGrid  g = {1, {23, 1, 1}, {0, 0, 0}};
      StnHaloBoxes b[MAX_RANKS];
      char         what[80];
      int          start = 0;

      for (int r = 0; r < nranks; r++) {
        int own = r == nranks - 1 ? 23 - start : (empty && r == 0 ? 0 : 23 / nranks);
        b[r]    = (StnHaloBoxes){{start, 0, 0}, {own, 1, 1}, {0, 0, 0}, {23, 1, 1}};
        start += own;
      }
      snprintf(what, sizeof what, "gather of 23 over %d ranks%s", nranks, empty ? ", rank 0 owning none" : "");
      gathers++;
      if (play(&g, b, nranks, what) && StnHaloSymmetric(&g, b, nranks) != !(empty && nranks > 1)) {
        printf("FAIL: halo_plan: %s: symmetric says %d\n", what, StnHaloSymmetric(&g, b, nranks));
        failures++;
      }
    }
  if (failures) return 1;
  printf("halo_plan: the device ghost exchange's blocks, flags and symmetry on %d partitions (1D to 3D, periodic, widths 1 and 2, even and uneven), their %d whole-grid gathers, %d deep-ghost slabs (depths 1 to 9) and %d gathers: ok\n", partitions, wholes, deeps, gathers);
  return 0;
}
