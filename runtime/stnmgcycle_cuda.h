/* stnmgcycle_cuda.h: the fused steps of a multigrid V-cycle on the device (stnmgcycle.c runs the
   cycle). Each Chebyshev step of a Jacobi-preconditioned smoother, and each residual, is one
   pass over the level's SG-DIA matrix: the product, the residual, the Jacobi scaling and the
   three-term update in one kernel, where PETSc's KSPCHEBYSHEV takes four (MatMult, VecAYPX,
   VecPointwiseMult, VecAXPBYPCZ) and writes three vectors in between.

       y = alpha p + beta x + gamma d .* (b - A x)

   b may be NULL (zero), p and d too (no term, no scaling); p may be y (each thread reads its own entries of p
   before it writes y), x must not be y. A, the box: as StnSGDIAMultCUDA's. x is the owned array;
   the product A x reads it there (xg NULL: one rank, periodic directions wrapped) or from xg, its
   copy in the ghosted box with the ghosts filled (several ranks: stnhalo.h). Roofline per row: 8*nsten*dof bytes of A and 8 of
   each vector read (x, b, d, p) and written (y), 2*nsten*dof + 6 flops.

       y = gamma d .* b   (StnMGScaleCUDA: a Chebyshev smoother's first step from a zero guess)

   Plain C: no CUDA or PETSc header. Launches are queued on the default stream; they return 0 or
   a recorded cudaError_t (stncuda.h). */
#ifndef STNMGCYCLE_CUDA_H
#define STNMGCYCLE_CUDA_H

#include "sgdia_cuda.h" /* StnBox */

#ifdef __cplusplus
extern "C" {
#endif

int StnMGStepCUDA(const StnBox *box, const double *A, const double *x, const double *xg, const double *b, const double *d, const double *p, double alpha, double beta, double gamma, double *y);
/* The same with split reads: x's owned neighbours from x, the others from xg, an array laid out
   in the ghosted box whose owned points are not read (StnHaloExchangeGhosts fills only the
   ghosts). */
int StnMGStepSplitCUDA(const StnBox *box, const double *A, const double *x, const double *xg, const double *b, const double *d, const double *p, double alpha, double beta, double gamma, double *y);
int StnMGScaleCUDA(long n, double gamma, const double *d, const double *b, double *y);

#ifdef __cplusplus
}
#endif

#endif
