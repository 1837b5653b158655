/* stncycle_cuda.h: a restart cycle of GMRES in one kernel, for an SG-DIA operator, callable from C.

   KSPSTNGMRES (stngmres.c) runs a step of GMRES as two launches: the operator (the SG-DIA
   product, with Jacobi's scaling) and the Gram-Schmidt step (StnGMRESStepLaunch). At 2 MB vectors
   a step is short enough (about 45 us) that the launches, and what a kernel costs to start and to
   drain, are a good part of it. The cycle kernel does every step of a cycle in one cooperative
   launch: each thread keeps its rows of the new vector in registers from the product to the
   scaling, and the steps meet at grid-wide barriers instead of kernel boundaries.

   Step it computes V[it + 1] = d .* (A V[it]) (d NULL: A V[it]), then exactly what
   StnGMRESStep does with it: the classical Gram-Schmidt coefficients HH(0..it, it), the
   orthogonalisation, tt = the norm, the scaling by 1/tt and PETSc's Hessenberg update, with a
   report per step that StnGMRESStepWait returns. The arithmetic is the same as the operator
   followed by the step; the sums are taken in another order (other blocks, other threads).

   Implemented in stncycle_cuda.cu (nvcc, no PETSc inside). Functions return 0 or a cudaError_t
   value; StnCUDALastError() (sgdia_cuda.h) says what went wrong. */
#ifndef STNCYCLE_CUDA_H
#define STNCYCLE_CUDA_H

#include "sgdia_cuda.h"  /* StnBox */
#include "stnvec_cuda.h" /* StnGMRESState, StnGMRESReport */

#ifdef __cplusplus
extern "C" {
#endif

/* Whether the cycle kernel can take the matrix of box (its dof and stencil pick the instance) with
   n rows on the current device: 1 or 0 (and 0 when the device cannot be asked). It needs
   cooperative launches and holds every row in registers for the whole step: n at most 8 rows per
   thread of the blocks resident at once (about 540000 on an H200). */
int StnGMRESCycleFits(const StnBox *box, long n);

/* Launches steps it0 .. it1 - 1 of a cycle (0 <= it0 < it1 <= st->max_k) as one kernel on the
   default stream. box and A: an SG-DIA matrix on the device (sgdia_cuda.h) whose product reads
   the owned array of x (ghosted = 0: one rank, no periodic ghosts), with n rows. d: the scaling
   (NULL: none). V[0..it1]: the basis, device arrays of n doubles, V[it0] normalized. ticket[it]
   for it0 <= it < it1: what StnGMRESStepWait(it, ticket[it], ...) waits for. The kernel ends after
   step it1 - 1, or sooner: after the step in which it sees the flag of StnGMRESCycleStop. */
int StnGMRESCycleLaunch(StnGMRESState *st, const StnBox *box, const double *A, const double *d, int it0, int it1, double haptol, double *const V[], long n,
                        unsigned ticket[]);

/* Asks the cycle kernel launched last to end after the step it is in (its steps from then on write
   only what a cycle that stops here does not read: later basis vectors, columns and reports). */
int StnGMRESCycleStop(void);

#ifdef __cplusplus
}
#endif

#endif
