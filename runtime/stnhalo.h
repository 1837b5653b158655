/* stnhalo.h: the ghost exchange of a DMDA's vectors between the GPUs of one node, device to
   device, for kernels that read ghosts (the multigrid cycle of stnmgcycle.c on several ranks).
   PETSc's own exchange (DMGlobalToLocal, a VecScatter) stages through host memory when the MPI
   is not CUDA-aware, and waits on the host for each one; this one is kernels on the default
   stream (stnhalo_cuda.h: a put and an unpack, or for the ghosts alone both in one cooperative
   launch where its blocks fit), so a whole V-cycle queues without a host wait.

   Each rank has an inbox in device memory (two, used in turn) that the other ranks map through
   CUDA IPC, the size of the ghosts it receives: an exchange writes the values its neighbours'
   ghosts need straight into their inboxes, copies the rank's owned values into its ghosted
   array, and when its own inbox is full unpacks it into the array's ghosts. Every point of the
   ghosted box a rank does not own (periodic images included) comes from the rank that owns
   it. */
#ifndef STNHALO_H
#define STNHALO_H

#include <petscdmda.h>

typedef struct StnHalo_ *StnHalo;

/* Collective on da's communicator. *h is NULL, and *why says why in a few words, where the
   exchange cannot be made: one rank, ranks on several nodes, GPUs that cannot map each other's
   memory, a rank that receives from one it sends nothing to (stnhalo_plan.h). */
PetscErrorCode StnHaloCreate(DM da, StnHalo *h, const char **why);
/* The same with every rank's ghosted box the whole grid: an exchange gathers nvec arrays of da's
   layout side by side (a vector: 1; an SG-DIA matrix's values: nsten x dof of them, sgdia_cuda.h)
   onto every rank, each laid out as one rank's whole grid; array v of the result starts
   StnHaloStride(h) doubles after array v - 1. */
PetscErrorCode StnHaloCreateWhole(DM da, PetscInt nvec, StnHalo *h, const char **why);
/* The same with every rank's ghosted box [gs, gs + gm) (global indices, within the grid where it
   is not periodic) instead of the DMDA's: deeper ghosts than its stencil width (stnmgdeep.h).
   Collective; every rank gives its own box. */
PetscErrorCode StnHaloCreateBox(DM da, const int gs[3], const int gm[3], StnHalo *h, const char **why);
PetscInt       StnHaloStride(StnHalo h);
/* The same for a vector of n entries split over the ranks of comm in blocks (rank r's from
   rstart, nlocal of them): an exchange gives every rank the whole vector, in the global order. */
PetscErrorCode StnHaloCreateGather(MPI_Comm comm, PetscInt rstart, PetscInt nlocal, PetscInt n, StnHalo *h, const char **why);
/* Queues an exchange of owned (this rank's points of a vector of da, device memory): *ghosted is
   its copy laid out in the ghosted box (DMDAGetGhostCorners), ghosts filled (a gather's: the
   whole vector), for kernels queued after it and before the next exchange on h: the two arrays
   h hands out in turn are this rank's own, and the exchange after next (queued after those
   kernels) writes this one again. Every rank of the communicator makes the same exchanges in the
   same order. */
PetscErrorCode StnHaloExchange(StnHalo h, const PetscScalar *owned, const PetscScalar **ghosted);
/* The same into the caller's ghosted array (device memory laid out as the ghosted box; every
   entry written): DMGlobalToLocal's local vector, with no copy. */
PetscErrorCode StnHaloExchangeInto(StnHalo h, const PetscScalar *owned, PetscScalar *ghosted);
/* The same with only the ghosts: *ghosts is laid out in the ghosted box, its ghosts filled and its
   owned points not (stale), for kernels that read owned values from owned (split reads): the
   exchange does not copy the owned box, most of its bytes. */
PetscErrorCode StnHaloExchangeGhosts(StnHalo h, const PetscScalar *owned, const PetscScalar **ghosts);
/* The same into the caller's ghosted array: only its ghosts are written. owned may be its owned
   box within it (no copy at all). */
PetscErrorCode StnHaloExchangeGhostsInto(StnHalo h, const PetscScalar *owned, PetscScalar *ghosted);
/* Collective over comm (PETSC_COMM_WORLD), once at start-up where several ranks run on the GPUs
   of one node: opens every rank's memory to the others (the first chunk of the pool stnhalo.c
   draws from, mapped by each, and a first store into each), so that the first exchanges do not
   pay for it (tens of milliseconds on 4 GPUs); the inboxes of most programs fit that chunk. Kept
   until PetscFinalize. Where it cannot be done it does nothing: StnHaloCreate says why. shared:
   some ranks of the node share a GPU (-stn_share_gpus), so that an exchange may not take every
   place on it at once (stnhalo_cuda.h's one-launch exchange). */
PetscErrorCode StnHaloConnect(MPI_Comm comm, PetscBool shared);
/* On several ranks of one node, dm's DMGlobalToLocal between CUDA vectors (INSERT_VALUES) goes
   through a device exchange of its own, made at the first call, straight into the local
   vector: PETSc's scatter stages through host memory, waiting for the device there, where the
   MPI cannot read device memory. The grids coarsened or refined from dm too. A DMDA with
   boundaries none or periodic only (a ghosted one's outer ghosts are the program's). On one
   rank, boundaries none only, it is a copy on the device (the ghosted box is the owned box). */
PetscErrorCode StnDMUseDeviceGhosts(DM dm);
/* Whether StnDMUseDeviceGhosts took dm's DMGlobalToLocal: one rank's copy, or the exchange, which
   falls back to PETSc's scatter where it cannot be set up (StnDMGetExchange says why). */
PetscBool StnDMHasDeviceGhosts(DM dm);
/* dm's exchange (StnHaloCreate's), one per grid for all who exchange its vectors' ghosts: made
   at the first call (collective), destroyed with dm; *h NULL where it cannot be made, *why (if
   not NULL) saying why. Its users take its double buffering (StnHaloExchange) in turn: each
   consumes an exchange before anyone makes the next. */
PetscErrorCode StnDMGetExchange(DM dm, StnHalo *h, const char **why);
/* Collective: waits for the device, then unmaps and frees. */
PetscErrorCode StnHaloDestroy(StnHalo *h);

#endif
