/* stnhalo_layout.h: where the values of a device ghost exchange go (stnhalo_cuda.h's StnHaloSlab
   and StnHaloUnpack, worked out from stnhalo_plan.h's geometry), and the index of each value, as
   the kernels (stnhalo_cuda.cu) compute it: shared with the host test that plays an exchange with
   them (tests/runtime/halo_plan_test.c), so that what it checks is what the kernels do.

   A receiver's inbox holds the blocks it receives in flag order, each packed with x fastest, dof
   values per point, nvec arrays (StnHaloInboxStart's points) apart. */
#ifndef STNHALO_LAYOUT_H
#define STNHALO_LAYOUT_H

#include "stnhalo_cuda.h"
#include "stnhalo_plan.h"

#include <string.h> /* memset */

#if defined(__CUDACC__)
  #define STN_HALO_HD __host__ __device__
#else
  #define STN_HALO_HD
#endif

/* Point (p0, p1, p2) in an array laid out in the box [s, s + m), x fastest: its place, in points. */
STN_HALO_HD static inline long long stn_halo_at(const int s[3], const int m[3], int p0, int p1, int p2)
{
  return ((long long)(p2 - s[2]) * m[1] + (p1 - s[1])) * m[0] + (p0 - s[0]);
}

/* Point r of a block of extent m (x fastest): its offsets from the block's start. */
STN_HALO_HD static inline void stn_halo_point(int r, const int m[3], int o[3])
{
  o[0] = r % m[0], o[1] = (r / m[0]) % m[1], o[2] = r / (m[0] * m[1]);
}

/* The put's point r of sending slab sl: its first value in the sender's owned array (*from) and
   in sl->dst (*to). */
STN_HALO_HD static inline void stn_halo_send_index(const StnHaloPut *p, const StnHaloSlab *sl, int r, long long *from, long long *to)
{
  int o[3];

  stn_halo_point(r, sl->m, o);
  const int q0 = sl->s[0] + o[0], q1 = sl->s[1] + o[1], q2 = sl->s[2] + o[2];
  *from = stn_halo_at(p->os, p->om, q0, q1, q2) * p->dof;
  *to   = stn_halo_at(sl->gs, sl->gm, q0 + sl->shift[0], q1 + sl->shift[1], q2 + sl->shift[2]) * p->dof;
}

/* The unpack's point r of block q: its first value in the receiver's ghosted array (its first in
   the inbox is (first[q] + r) dof). */
STN_HALO_HD static inline long long stn_halo_unpack_to(const StnHaloUnpack *u, int q, int r)
{
  int o[3];

  stn_halo_point(r, u->m[q], o);
  return stn_halo_at(u->gs, u->gm, u->s[q][0] + o[0] + u->shift[q][0], u->s[q][1] + o[1] + u->shift[q][1], u->s[q][2] + o[2] + u->shift[q][2]) * u->dof;
}

/* The slab `from` sends `to` under shift sh (StnHaloBlock's block, placed in to's inbox): 1 and
   *sl's geometry and dst_stride (its dst and flag left for the caller: to's inbox plus *start dof
   values, and to's flag *q), or 0 where there is no such block. */
static inline int stn_halo_slab(const StnHaloGrid *g, const StnHaloBoxes *b, int nranks, int from, int to, int sh, int dof, StnHaloSlab *sl, long long *start, int *q)
{
  int s[3], m[3], shift[3];

  if (!StnHaloBlock(g, b, from, to, sh, s, m, shift)) return 0;
  *q     = StnHaloFlag(g, b, nranks, from, to, sh);
  *start = StnHaloInboxStart(g, b, nranks, to, *q);
  sl->dst_stride = StnHaloInboxStart(g, b, nranks, to, StnHaloIncoming(g, b, nranks, to)) * dof;
  for (int d = 0; d < 3; d++) sl->s[d] = s[d], sl->m[d] = m[d], sl->shift[d] = shift[d], sl->gs[d] = s[d] + shift[d], sl->gm[d] = m[d];
  return 1;
}

/* Rank to's unpack of its inbox into its ghosted array: 0 where it receives more blocks than
   STN_HALO_IN. */
static inline int stn_halo_unpack_plan(const StnHaloGrid *g, const StnHaloBoxes *b, int nranks, int to, int dof, int nvec, StnHaloUnpack *u)
{
  memset(u, 0, sizeof *u);
  if (StnHaloIncoming(g, b, nranks, to) > STN_HALO_IN) return 0;
  u->dof = dof, u->nvec = nvec;
  u->dst_stride = (long long)b[to].gm[0] * b[to].gm[1] * b[to].gm[2] * dof;
  u->src_stride = StnHaloInboxStart(g, b, nranks, to, StnHaloIncoming(g, b, nranks, to)) * dof;
  for (int d = 0; d < 3; d++) u->gs[d] = b[to].gs[d], u->gm[d] = b[to].gm[d];
  for (int from = 0; from < nranks; from++)
    for (int sh = 0; sh < STN_HALO_SHIFTS; sh++) {
      int s[3], m[3], shift[3], q;
      if (!StnHaloBlock(g, b, from, to, sh, s, m, shift)) continue;
      q = u->nblock++;
      for (int d = 0; d < 3; d++) u->s[q][d] = s[d], u->m[q][d] = m[d], u->shift[q][d] = shift[d];
      u->first[q + 1] = u->first[q] + (long long)m[0] * m[1] * m[2];
    }
  return 1;
}

#endif
