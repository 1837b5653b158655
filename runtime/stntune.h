/* stntune.h: the autotuner of the GPU vector kernels and its cache.

   For the vector length at hand the tuner times each kernel of stnvec_cuda.h in a pruned
   search over launch shapes (threads per block, elements per thread, blocks per SM: a sweep of
   each in turn from the default, twice), rejects any shape whose results differ from the
   reference (stnvec_ref.h), and keeps the fastest. The winners go to a text cache file, one
   line per device, kernel and size class (floor(log2 n)):

     DEVICE-KEY <tab> kernel <tab> class <tab> threads ept bps <tab> tuned-us <tab> default-us

   where DEVICE-KEY names the GPU, its SM count, compute capability and the CUDA runtime and
   driver versions (StnVecDeviceKey). A program reads the lines of its own device at start-up;
   copy the file to another machine of the same kind and its programs use it as well.

   Options (read by StnTuneSetUp, called from StnDMSetGPUVectors):
     -stn_autotune           tune for this program's vector length now, and save the winners
     -stn_tune_cache FILE    the cache (default: $XDG_CACHE_HOME/stencilc/tuning.txt, or
                             ~/.cache/stencilc/tuning.txt)
*/
#ifndef STNTUNE_H
#define STNTUNE_H

#include <petscdm.h>

#include "stncompat.h"

/* Reads the options; tunes for the DM's local vector length when asked; applies the cache. */
PetscErrorCode StnTuneSetUp(DM dm);
/* Tunes every vector kernel for length n, printing progress on comm; the winners are applied
   and added to the cache file path (NULL: the default). Used by StnTuneSetUp and bench/. */
PetscErrorCode StnTuneVectorKernels(MPI_Comm comm, PetscInt n, const char *path);
/* Applies the cache's shapes for this device; *count: how many (may be NULL). */
PetscErrorCode StnTuneLoad(MPI_Comm comm, const char *path, PetscInt *count);
/* Whether this program was asked to tune (-stn_autotune). */
PetscBool StnTuneRequested(void);

#include "stnkernel.h" /* StnKernelShape: how a generated kernel covers the owned box */

#if defined(PETSC_HAVE_CUDA)
  #include "sgdia_cuda.h"
/* The SG-DIA product: tunes its block size on this matrix's own operands (y is overwritten),
   with L2 evicted before each timed product, as in a solve, rejecting a block size whose
   product differs from the default's by a single bit; the way it loads the matrix is not timed
   but follows the matrix's size (streaming above half the L2; stntune.c says why). Saves the
   winner under "sgdia_dofD_stenS" and the row count's size class. sgdia.c calls it at the first
   product when StnTuneRequested(). */
PetscErrorCode StnTuneSGDIA(MPI_Comm comm, const StnBox *box, const double *A, const double *x, int ghosted, double *y);
/* Sets the load policy by the same size rule, then applies the cached shape of box's product,
   if there is one. */
PetscErrorCode StnTuneApplySGDIA(const StnBox *box);

/* The default: 256 threads, as a tile bx x by with bx of 32 to 256 leaving the fewest idle
   threads at the ends of the box's rows (the widest of equals; 256 x 1 in 1D), sweep 1: one
   thread per point. */
void StnKernelShapeDefault(int dim, int xm, StnKernelShape *shape);

/* A kernel as the tuner runs it: run(args, shape) launches it with that shape and returns 0 or a
   cudaError_t value. */
typedef int (*StnLaunchFn)(void *args, const StnKernelShape *shape);
/* The launch shape of a generated kernel over the owned box xm x ym x zm (1s for the missing
   directions), writing nout doubles at out (device memory): the cached one for kernel at this
   size class (of xm*ym*zm points); or, with -stn_autotune, the fastest of the default and a
   pruned sweep of tiles and sweeps (launch_candidates in stntune.c) on these very operands,
   rejecting any whose output differs from the default's by a bit (every point is computed by
   the same code whatever the shape, so all give the same bits), saved in the cache; or else the
   default: *shape as given when its bx is set (the kernel's own), else StnKernelShapeDefault's.
   *shape gets it. Without -stn_autotune out, run and args are not used (they may be NULL). */
PetscErrorCode StnTuneLaunch(MPI_Comm comm, const char *kernel, int dim, int xm, int ym, int zm, double *out, long nout, StnLaunchFn run, void *args, StnKernelShape *shape);
#endif

#endif
