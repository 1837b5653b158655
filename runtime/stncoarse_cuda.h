/* stncoarse_cuda.h: multigrid's coarse solve on the device. The coarsest grid's SG-DIA operator
   (one rank, a few hundred unknowns) is expanded into a dense matrix, inverted once per operator
   (Gauss-Jordan: in one block's shared memory up to 160 unknowns, over the whole device up to
   1024; beyond, cuSOLVER's getrf and getrs against the identity), and applied as one dense
   product: n^2 doubles read once, a single launch, where a pair of triangular solves would be
   2n dependent steps. Plain C: no CUDA or PETSc header; implemented in stncoarse_cuda.cu.

   Functions return 0 or a cudaError_t value (cudaErrorInvalidValue for arguments that do not fit
   and for a cuSOLVER failure); StnCUDALastError() says what went wrong, in words. */
#ifndef STNCOARSE_CUDA_H
#define STNCOARSE_CUDA_H

#include "sgdia_cuda.h" /* StnBox */

#ifdef __cplusplus
extern "C" {
#endif

typedef struct StnDenseInverse StnDenseInverse;

/* Room for the inverse of an n x n matrix. */
int StnDenseInverseCreate(int n, StnDenseInverse **inv);
/* inv = A^-1 for the SG-DIA matrix A (device values) of one rank that owns the whole grid
   (box->xm * ym * zm * dof = n). Waits for the device: *zero_pivot is then 0, or the 1-based
   row of the first zero pivot of the LU factorization, when A is singular. */
int StnDenseInverseSetSGDIA(StnDenseInverse *inv, const StnBox *box, const double *A, int *zero_pivot);
/* inv = a, an inverse formed on the host (n x n, column-major, leading dimension lda). */
int StnDenseInverseSetHost(StnDenseInverse *inv, const double *a, int lda);
/* y = inv x (device arrays of n doubles, x not y), queued on the default stream. */
int StnDenseInverseApply(const StnDenseInverse *inv, const double *x, double *y);
/* n */
int StnDenseInverseRows(const StnDenseInverse *inv);
int StnDenseInverseDestroy(StnDenseInverse *inv);

#ifdef __cplusplus
}
#endif

#endif
