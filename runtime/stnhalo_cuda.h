/* stnhalo_cuda.h: the device side of the ghost exchange between the GPUs of one node
   (stnhalo.c): each rank writes its owned points straight into its neighbours' ghosted arrays
   (memory they shared through CUDA IPC), then raises a flag in each neighbour's memory; a
   neighbour waits for its flags. No host memory, no host wait, no MPI call: the exchange is one
   kernel queued on the default stream, like the kernels around it.

   Flags count exchanges (epochs): the put of exchange e writes e into the receiver's flag for its
   direction after all its values (each sending block fences at system scope; the last block to
   finish raises the flags), then spins until every flag it watches reaches e: the kernel ends
   when this rank's ghosts are all in. A rank that stops (an error, a crash) leaves its neighbours waiting: the wait gives up after
   STN_HALO_TIMEOUT_S seconds with a message and a kernel trap, which fails the next CUDA call.

   Plain C: no CUDA or PETSc header. The functions return 0 or a recorded cudaError_t. */
#ifndef STNHALO_CUDA_H
#define STNHALO_CUDA_H

#include "stncuda.h"
#include "stnfastdiv.h"

#ifdef __cplusplus
extern "C" {
#endif

#define STN_HALO_SLABS     27 /* the owned box itself and its 26 neighbours in 3D */
#define STN_HALO_TIMEOUT_S 60

/* One block of points sent: the points [s, s + m) of the sender's owned box (global indices),
   written at point + shift into dst, an array laid out in the box [gs, gs + gm) (the receiver's
   ghosted box); then epoch into *flag (NULL: no flag, the sender's own interior copy). */
typedef struct {
  double    *dst;
  long long *flag;
  int        s[3], m[3], shift[3], gs[3], gm[3];
  long long  dst_stride; /* the receiver's array holds nvec of them, this far apart */
} StnHaloSlab;

/* nvec arrays side by side are exchanged at once (a matrix's slices, sgdia_cuda.h): array v of
   the sender's starts at owned + v src_stride, of a receiver's at dst + v dst_stride. */
/* Slab 0 is the sender's own copy of its owned box into its ghosted array: the bulk of the
   bytes, STN_HALO_COPY_PER_THREAD values per thread in the last interior_blocks blocks, which
   neither fence nor count (no other rank reads those values). The other slabs go to the neighbours, a thread per point,
   in the blocks before them, which start first. */
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

/* Memory other processes can map (cudaMalloc's, zeroed), its handle (STN_HALO_IPC_BYTES bytes),
   and another process's memory mapped from its handle; StnHaloUnmap undoes StnHaloMap. */
#define STN_HALO_IPC_BYTES 64
int StnHaloAlloc(void **p, size_t bytes);
int StnHaloHandle(void *p, void *handle);
int StnHaloMap(const void *handle, void **p);
int StnHaloUnmap(void *p);
/* Writes a zero into each of the n words at (mapped) peers[q] from a kernel, and waits: a
   process's first stores into another GPU's memory set up the path (milliseconds), which
   StnHaloConnect does at start-up rather than the first exchange. n at most 32. */
int StnHaloTouch(long long *const peers[], int n);

/* The blocks of threads (STN_HALO_THREADS each) a put of plan launches: at least one. */
#define STN_HALO_THREADS         256
#define STN_HALO_COPY_PER_THREAD 4 /* loads in flight per thread: a copy at one value per thread
                                      ran at about half the bandwidth (sfi3d's 257^3 per GPU) */
long long StnHaloPutBlocks(const StnHaloPut *plan);
/* One exchange: every slab's points from owned (laid out in os/om) into its dst, then the flags,
   then the wait until flags[q] >= epoch for every q < 32 whose bit is set in mask. plan: the
   StnHaloPut in device memory (a small launch: the kernel reads it there), blocks
   StnHaloPutBlocks of it. */
int StnHaloPutCUDA(const StnHaloPut *plan, long long blocks, const double *owned, long long epoch, const long long *flags, unsigned mask);

#ifdef __cplusplus
}
#endif

#endif
