/* stnhalo_plan.c: the geometry of the device ghost exchange (stnhalo_plan.h). */
#include "stnhalo_plan.h"

static int max_int(int a, int b) { return a > b ? a : b; }
static int min_int(int a, int b) { return a < b ? a : b; }

int StnHaloBlock(const StnHaloGrid *g, const StnHaloBoxes *b, int from, int to, int sh, int s[3], int m[3], int shift[3])
{
  int c = sh;

  for (int d = 0; d < 3; d++, c /= 3) {
    shift[d] = (c % 3 - 1) * g->n[d];
    if (shift[d] && (d >= g->dim || !g->periodic[d])) return 0;
  }
  if (from == to && !shift[0] && !shift[1] && !shift[2]) return 0;
  for (int d = 0; d < 3; d++) {
    const int lo = max_int(b[from].os[d] + shift[d], b[to].gs[d]), hi = min_int(b[from].os[d] + b[from].om[d] + shift[d], b[to].gs[d] + b[to].gm[d]);
    if (hi <= lo) return 0;
    s[d] = lo - shift[d], m[d] = hi - lo;
  }
  return 1;
}

int StnHaloFlag(const StnHaloGrid *g, const StnHaloBoxes *b, int nranks, int from, int to, int sh)
{
  int q = 0, s[3], m[3], shift[3];

  for (int r = 0; r < nranks; r++)
    for (int k = 0; k < STN_HALO_SHIFTS; k++)
      if (StnHaloBlock(g, b, r, to, k, s, m, shift)) {
        if (r == from && k == sh) return q;
        q++;
      }
  return -1;
}

/* Whether `from` sends `to` any block. */
static int sends(const StnHaloGrid *g, const StnHaloBoxes *b, int from, int to)
{
  int s[3], m[3], shift[3];

  for (int k = 0; k < STN_HALO_SHIFTS; k++)
    if (StnHaloBlock(g, b, from, to, k, s, m, shift)) return 1;
  return 0;
}

int StnHaloSymmetric(const StnHaloGrid *g, const StnHaloBoxes *b, int nranks)
{
  for (int from = 0; from < nranks; from++)
    for (int to = 0; to < nranks; to++)
      if (from != to && sends(g, b, from, to) && !sends(g, b, to, from)) return 0;
  return 1;
}

int StnHaloIncoming(const StnHaloGrid *g, const StnHaloBoxes *b, int nranks, int to)
{
  int q = 0, s[3], m[3], shift[3];

  for (int r = 0; r < nranks; r++)
    for (int k = 0; k < STN_HALO_SHIFTS; k++) q += StnHaloBlock(g, b, r, to, k, s, m, shift);
  return q;
}

long long StnHaloInboxStart(const StnHaloGrid *g, const StnHaloBoxes *b, int nranks, int to, int q)
{
  long long start = 0;
  int       k = 0, s[3], m[3], shift[3];

  for (int r = 0; r < nranks; r++)
    for (int sh = 0; sh < STN_HALO_SHIFTS; sh++)
      if (StnHaloBlock(g, b, r, to, sh, s, m, shift)) {
        if (k++ == q) return start;
        start += (long long)m[0] * m[1] * m[2];
      }
  return start;
}
