/* stnhalo_plan.h: which points the device ghost exchange (stnhalo.c) sends where, as plain
   geometry (no MPI, PETSc or CUDA), so that a test can check it on any partition
   (tests/runtime/halo_plan_test.c).

   Every rank has an owned box and a ghosted box (DMDAGetCorners, DMDAGetGhostCorners; a
   gather's ghosted box is the whole grid). Rank `from` sends rank `to` the points of its owned
   box that, moved by a periodic shift, lie in to's ghosted box: shift number sh (0 to 26) moves
   direction d by (digit d of sh in base 3, minus 1) times the grid's size there, and only
   periodic directions move. The owned boxes partition the grid, so each point of a ghosted box
   that its rank does not own comes in exactly one block. Rank `to` numbers the blocks it
   receives by sender, then shift: block q raises its flag q. */
#ifndef STNHALO_PLAN_H
#define STNHALO_PLAN_H

#define STN_HALO_SHIFTS 27

typedef struct {
  int dim;         /* 1 to 3; directions past it have n 1 and do not move */
  int n[3];        /* grid points per direction */
  int periodic[3]; /* 1 where the direction is periodic */
} StnHaloGrid;

typedef struct {
  int os[3], om[3]; /* owned box: start, extent (global indices) */
  int gs[3], gm[3]; /* ghosted box (starts below 0, ends past n, in periodic directions) */
} StnHaloBoxes;

/* The block `from` sends `to` under shift sh: 1, with the points [s, s + m) of from's owned box
   and the shift that places them in to's ghosted box; 0 when there is none (and for from's own
   points unshifted, which are not ghosts). b: every rank's boxes. */
int StnHaloBlock(const StnHaloGrid *g, const StnHaloBoxes *b, int from, int to, int sh, int s[3], int m[3], int shift[3]);
/* The flag of block (from, sh) among the blocks `to` receives, or -1 when there is no such block. */
int StnHaloFlag(const StnHaloGrid *g, const StnHaloBoxes *b, int nranks, int from, int to, int sh);
/* How many blocks `to` receives. */
int StnHaloIncoming(const StnHaloGrid *g, const StnHaloBoxes *b, int nranks, int to);
/* Where block q of those `to` receives starts in to's inbox, in points: the blocks lie there in
   flag order, each packed with x fastest, so this is the points of blocks 0 to q - 1; q =
   StnHaloIncoming gives the inbox's size. */
long long StnHaloInboxStart(const StnHaloGrid *g, const StnHaloBoxes *b, int nranks, int to, int q);
/* 1 when every rank that sends to another also receives from it. The exchange needs it: a
   receiver tells its senders that it has read their last values only by sending them its own
   (their wait for its flags), so a sender that never hears from it could overwrite values it
   still reads. DMDA's ghosted boxes are symmetric; a gather in which a rank owns nothing is not. */
int StnHaloSymmetric(const StnHaloGrid *g, const StnHaloBoxes *b, int nranks);

#endif
