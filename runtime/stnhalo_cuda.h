/* stnhalo_cuda.h: the device side of the ghost exchange between the GPUs of one node
   (stnhalo.c): each rank writes the points its neighbours' ghosts need straight into their
   inboxes (small memory they shared through CUDA IPC), then raises a flag in each neighbour's
   memory; a neighbour waits for its flags, then unpacks its inbox into its ghosted array. No
   host memory, no host wait, no MPI call: the exchange is two kernels queued on the default
   stream, like the kernels around it.

   Flags count exchanges (epochs): the put of exchange e writes e into the receiver's flag for its
   direction after all its values (each sending block fences at system scope; the last block to
   finish raises the flags), then spins until every flag it watches reaches e: the put ends when
   this rank's inbox is full, and the unpack queued after it reads it. A rank that stops (an
   error, a crash) leaves its neighbours waiting: the wait gives up after STN_HALO_TIMEOUT_S
   seconds with a message and a kernel trap, which fails the next CUDA call.

   Plain C: no CUDA or PETSc header. The functions return 0 or a recorded cudaError_t. */
#ifndef STNHALO_CUDA_H
#define STNHALO_CUDA_H

#include "stncuda.h"
#include "stnfastdiv.h"

#ifdef __cplusplus
extern "C" {
#endif

#define STN_HALO_SLABS     27 /* the owned box itself and its 26 neighbours in 3D */
#define STN_HALO_IN        32 /* the blocks a rank receives, at most: its flags */
#define STN_HALO_TIMEOUT_S 60

/* One block of points sent: the points [s, s + m) of the sender's owned box (global indices),
   written at point + shift into dst, an array laid out in the box [gs, gs + gm): the block's
   place in the receiver's inbox (gs = s + shift, gm = m: packed, x fastest), or for slab 0 the
   sender's own ghosted box; then epoch into *flag (NULL: no flag, slab 0). */
typedef struct {
  double    *dst;
  long long *flag;
  int        s[3], m[3], shift[3], gs[3], gm[3];
  long long  dst_stride; /* the receiver's array holds nvec of them, this far apart */
} StnHaloSlab;

/* nvec arrays side by side are exchanged at once (a matrix's slices, sgdia_cuda.h): array v of
   the sender's starts at owned + v src_stride, of a receiver's at dst + v dst_stride. */
/* Slab 0 is the sender's own copy of its owned box into its ghosted array (the array given to
   the put; slab 0's dst is not read): the bulk of the bytes, STN_HALO_COPY_PER_THREAD values per
   thread in the last interior_blocks blocks, which neither fence nor count (no other rank reads
   those values). The other slabs go to the neighbours' inboxes, a thread per point, in the
   blocks before them, which start first. */
typedef struct {
  int         dof, nslab, nvec;
  long long   src_stride;                /* the owned box's values (om[0] om[1] om[2] dof) */
  int         os[3], om[3];              /* the sender's owned box, the layout of its array */
  long long   interior_blocks;           /* each copies STN_HALO_COPY_PER_THREAD values per thread */
  StnFastDiv  line_div, row_div;         /* om[0] dof and om[1], for the copy's index (below 2^31) */
  long long   first[STN_HALO_SLABS + 1]; /* slab q >= 1 holds the points first[q] to first[q+1] - 1
                                            of those sent (first[1] = 0) */
  StnHaloSlab slab[STN_HALO_SLABS];
  unsigned   *blocks_done;               /* the sender's counter (device, 0 between calls) */
} StnHaloPut;

/* A receiver's unpack: block q of its inbox (points first[q] to first[q + 1] - 1, nvec arrays
   src_stride doubles apart) holds the sender's points [s, s + m), which go to point + shift of
   its ghosted array (laid out in [gs, gs + gm), nvec arrays dst_stride doubles apart). */
typedef struct {
  int       dof, nvec, nblock;
  int       gs[3], gm[3];
  long long dst_stride, src_stride;
  long long first[STN_HALO_IN + 1];
  int       s[STN_HALO_IN][3], m[STN_HALO_IN][3], shift[STN_HALO_IN][3];
} StnHaloUnpack;

/* Memory other processes can map (cudaMalloc's, zeroed), its handle (STN_HALO_IPC_BYTES bytes),
   and another process's memory mapped from its handle; StnHaloUnmap undoes StnHaloMap. */
#define STN_HALO_IPC_BYTES 64
int StnHaloAlloc(void **p, size_t bytes);
int StnHaloFree(void *p);
int StnHaloHandle(void *p, void *handle);
int StnHaloMap(const void *handle, void **p);
int StnHaloUnmap(void *p);
/* Writes a zero into each of the n words at (mapped) peers[q] from a kernel, and waits: a
   process's first stores into another GPU's memory set up the path (milliseconds), and its
   first launch of a kernel that can printf (the put's timeout) sets up the printf buffer:
   StnHaloConnect does both at start-up rather than in the first exchange. n at most 32. */
int StnHaloTouch(long long *const peers[], int n);

/* The blocks of threads (STN_HALO_THREADS each) a put of plan launches: at least one. */
#define STN_HALO_THREADS         256
#define STN_HALO_COPY_PER_THREAD 4 /* loads in flight per thread: a copy at one value per thread
                                      ran at about half the bandwidth (sfi3d's 257^3 per GPU) */
long long StnHaloPutBlocks(const StnHaloPut *plan);
/* One exchange's put: owned (laid out in os/om) into ghosted (slab 0) and every other slab's
   points into its dst, then the flags, then the wait until flags[q] >= epoch for every q < 32
   whose bit is set in mask. plan: the StnHaloPut in device memory (a small launch: the kernel
   reads it there), blocks StnHaloPutBlocks of it; ghosted NULL: no copy of the owned box, and
   blocks StnHaloPutBlocks - interior_blocks (the sending blocks alone). */
int StnHaloPutCUDA(const StnHaloPut *plan, long long blocks, const double *owned, double *ghosted, long long epoch, const long long *flags, unsigned mask);
/* Then the unpack of inbox into ghosted (plan in device memory; host_plan the same in host
   memory, for the launch's size); nothing where nothing is received. */
int StnHaloUnpackCUDA(const StnHaloUnpack *plan, const StnHaloUnpack *host_plan, const double *inbox, double *ghosted);
/* Both for a put of the ghosts alone (no copy: blocks StnHaloPutBlocks - interior_blocks) in one
   cooperative launch: every block waits for the flags and then unpacks, so all of them must be
   resident on the GPU at once (StnHaloPutUnpackFits: whether blocks can be; 0 where CUDA cannot
   say), and no other process's blocks may hold places on it meanwhile. */
int StnHaloPutUnpackFits(long long blocks);
int StnHaloPutUnpackCUDA(const StnHaloPut *plan, long long blocks, const StnHaloUnpack *unpack_plan, const double *owned, const double *inbox, double *ghosted, long long epoch, const long long *flags, unsigned mask);

#ifdef __cplusplus
}
#endif

#endif
