/* sgdia_cuda.h: the SG-DIA products on a CUDA device, callable from C.

   The storage is that of sgdia.h: for one rank's block of a DMDA with dof unknowns per point and
   nsten block diagonals, nrows = npoints*dof and

       A[(s*dof + c)*nrows + p*dof + r]   couples row (p, r) with column (p + offset s, c),

   p = ((k-zs)*ym + (j-ys))*xm + (i-xs) numbering the owned points x-fastest. The functions take
   raw device pointers and plain C types, so that a C file can call them without any CUDA or
   PETSc header; they are implemented in sgdia_cuda.cu (compiled by nvcc, no PETSc inside).

   Every function returns 0 on success and otherwise a cudaError_t value (cudaErrorInvalidValue,
   1, for arguments that do not fit together); StnCUDALastError() then says what went wrong, in
   words. Launches are asynchronous on the given stream (NULL: the default stream), so an error
   in a kernel's execution may only show at the next synchronising call. */
#ifndef SGDIA_CUDA_H
#define SGDIA_CUDA_H

#include <stddef.h>

#include "stncuda.h" /* device memory, errors: the CUDA base */

#ifdef __cplusplus
extern "C" {
#endif

/* The most block diagonals a matrix may have: a box stencil of width 2 in 3D has 125. */
#define STN_MAX_STEN 128

/* The layout of one rank's block of the DMDA and where the input vector's values live. Fill it
   from DMDAGetInfo, DMDAGetCorners and DMDAGetGhostCorners; the entries of the directions a grid
   of dimension dim does not have are ignored (treated as start 0, extent 1, no offset). */
typedef struct StnBox {
  int dim, dof, nsten;              /* 1 to 3; >= 1; 1 to STN_MAX_STEN */
  int xs, ys, zs, xm, ym, zm;       /* owned box (DMDAGetCorners) */
  int gxs, gys, gzs, gxm, gym, gzm; /* ghosted box of the local vector (DMDAGetGhostCorners) */
  int mx, my, mz;                   /* global grid size */
  int periodic[3];                  /* 1 where the direction is DM_BOUNDARY_PERIODIC, else 0 */
  int off[3 * STN_MAX_STEN];        /* di, dj, dk of block diagonal s at off[3*s + 0..2] */
} StnBox;

/* y = A x (add = 0), y = w + A x (add = 1, w may be y itself; not read when add = 0) or
   y = w .* (A x) (add = 2: a diagonal scaling, as a Jacobi preconditioner applies it after MatMult).
   x is either
   - ghosted = 1: the local (ghosted) array, laid out in the ghosted box, its ghosts up to date
     (DMGlobalToLocal); neighbours in periodic directions are read from its wrapped ghosts; or
   - ghosted = 0: the global array of the owned points, laid out in the owned box. Every neighbour
     must then lie in the owned box or outside a non-periodic edge of the domain (one rank, or
     offsets that do not leave the box); a periodic direction must be owned whole, and
     neighbours across its ends are wrapped by index arithmetic.
   Neighbours outside a non-periodic edge of the domain are skipped: neither their matrix entry
   nor x is read. The box is checked against these rules (cudaErrorInvalidValue if it breaks
   one). x must not be y. stream: a cudaStream_t, or NULL for the default stream.
   Roofline: 8*(nsten*dof + 2) bytes per row (+8 with add), 2*nsten*dof flops per row (+1). */
int StnSGDIAMultCUDA(const StnBox *box, const double *A, const double *x, int ghosted, const double *w, double *y, int add, void *stream);

/* Tuning knob for the tuner (stntune.c) and benchmarks: how the kernel loads the matrix entries.
   0 (the default): through the read-only data cache (__ldg); 1: as streaming data (__ldcs,
   evict-first in L1 and L2, which leaves the caches to x). Returns the previous setting. Not
   thread-safe: set it once. */
int StnSGDIASetStreamingLoads(int streaming);
/* Tuning knob: threads per block of the product (a multiple of 32, 32 to 1024; 256 by default).
   Returns the previous setting, or -1 (and changes nothing) for an invalid one. Every setting
   gives the same y: each row is summed by one thread in the same order. */
int StnSGDIASetBlockThreads(int threads);

/* d = the diagonal entries of A: d[p*dof + r] = A[(center*dof + r)*nrows + p*dof + r], where
   center = diag_index is the block diagonal at offset (0,0,0); diag_index < 0 (no such block
   diagonal) gives d = 0. d has nrows entries. Roofline: 16 bytes per row, no flops. */
int StnSGDIADiagonalCUDA(const StnBox *box, const double *A, int diag_index, double *d, void *stream);

/* Multiplies the n doubles of A by a. Roofline: 16 bytes and 1 flop per entry. */
int StnSGDIAScaleCUDA(double *A, long n, double a, void *stream);

/* Sets the n doubles of A to zero (a byte-wise memset: +0.0). */
int StnSGDIAZeroCUDA(double *A, long n, void *stream);

#ifdef __cplusplus
}
#endif

#endif
