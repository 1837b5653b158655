/* stncycle_cuda.h: a restart cycle of GMRES in one kernel, for an SG-DIA operator, callable from C.

   KSPSTNGMRES (stngmres.c) runs a step of GMRES as two launches: the operator (the SG-DIA
   product, with Jacobi's scaling) and the Gram-Schmidt step (StnGMRESStepLaunch). At 2 MB vectors
   a step is short enough (about 45 us) that the launches, and what a kernel costs to start and to
   drain, are a good part of it. The cycle kernel does every step of a cycle in one cooperative
   launch: each thread keeps its rows of the new vector on the chip (shared memory) from the
   product to the scaling, and the steps meet at grid-wide barriers instead of kernel boundaries.

   Step it computes V[it + 1] = d .* (A V[it]) (d NULL: A V[it]), then exactly what
   StnGMRESStep does with it: the classical Gram-Schmidt coefficients HH(0..it, it), the
   orthogonalisation, tt = the norm, the scaling by 1/tt and PETSc's Hessenberg update, with a
   report per step that StnGMRESStepWait returns. The arithmetic is the same as the operator
   followed by the step; the sums are taken in another order (other blocks, other threads).
   Between cycles the kernel can restart GMRES itself (StnGMRESCycleLaunch), so that one launch
   runs a whole solve with the host testing each step's residual after the fact.

   Implemented in stncycle_cuda.cu (nvcc, no PETSc inside). Functions return 0 or a cudaError_t
   value; StnCUDALastError() (sgdia_cuda.h) says what went wrong. */
#ifndef STNCYCLE_CUDA_H
#define STNCYCLE_CUDA_H

#include "sgdia_cuda.h"    /* StnBox */
#include "stngmres_cuda.h" /* StnGMRESState, StnGMRESReport */

#ifdef __cplusplus
extern "C" {
#endif

/* Whether the cycle kernel can take the matrix of box (its dof and stencil pick the instance) with
   n rows on the current device: 1 or 0 (and 0 when the device cannot be asked). It needs
   cooperative launches and holds every row on the chip for the whole step: n at most 16 rows per
   thread of the blocks resident at once (2162688 on an H200: one block of 1024 threads per SM). */
int StnGMRESCycleFits(const StnBox *box, long n);

/* The most cycles of one launch (its tickets, cycles * (max_k + 1), stay far from wrapping). */
#define STN_GMRES_MAX_CYCLES 4096

/* What a launch runs on, and how far it may go. */
typedef struct StnGMRESCycleArgs {
  const StnBox *box;      /* the operator: an SG-DIA matrix on the device (sgdia_cuda.h) whose  */
  const double *A;        /*   product reads the owned array of x (one rank, no periodic ghosts) */
  const double *d;        /* the scaling: the operator is d .* (A v) (NULL: A v) */
  double *const *V;       /* the basis: V[0..max_k], device arrays of n doubles, V[it0] normalized */
  long          n;
  double        haptol;
  int           it0, it1; /* the first cycle's steps: it0 .. it1 - 1 (0 <= it0 < it1 <= max_k) */
  int           cycles;   /* the most cycles the launch runs, the first included: 1 (no restart)
                             to STN_GMRES_MAX_CYCLES */
  long          budget;   /* the most steps in all (at least it1 - it0) */
  double       *x;        /* for restarts (cycles > 1): the solution, updated at each restart, */
  const double *b;        /*   and the right-hand side */
} StnGMRESCycleArgs;

/* Launches a.cycles cycles of GMRES as one kernel on the default stream.

   Cycle 0 runs steps it0 .. it1 - 1; every later one runs min(max_k, the budget left) steps from
   0. Step it of cycle c computes V[it + 1] = d .* (A V[it]) and then what StnGMRESStep does with
   it; its report is waited for by StnGMRESStepWait(it, StnGMRESCycleTicket(*first, max_k, c, it)).

   A restart on the device follows cycle c when the cycle ran all max_k steps, steps are left in
   the budget and c + 1 < cycles. The kernel then waits for the host's StnGMRESCycleGo with the
   restart's ticket, StnGMRESCycleTicket(*first, max_k, c, max_k): the host gives it once it has
   tested the cycle's last step and goes on, so that x is never touched while the host may still
   build a solution from the cycle. Then, in PETSc's arithmetic (KSPGMRESBuildSoln, then
   KSPInitialResidual with left preconditioning d, then VecNormalize), x = x + V[0..max_k-1] y
   with y the back substitution in HH, V[0] = d .* (b - A x), res = ||V[0]||, V[0] = V[0] / res
   (unless res is 0, infinite or NaN), GRS(0) = res, and the restart's report (StnGMRESStepWait(
   max_k, that ticket)) says restarted = 1 and res. Cycle c + 1 follows unless res is 0 or not
   finite. Without the go within 20 ms, with StnGMRESCycleStop, or with a zero on HH's diagonal,
   the kernel reports restarted = 0, leaves x and V alone, and ends: the host then restarts as
   PETSc does. (The 20 ms keep the kernel from waiting for ever on a host that waits for it.)

   The kernel ends after the budget's last step, after a step in which it sees the flag of
   StnGMRESCycleStop, or at a restart as above. */
int StnGMRESCycleLaunch(StnGMRESState *st, const StnGMRESCycleArgs *a, unsigned *first);

/* The ticket of step it of cycle c of the launch whose first ticket is first; it = max_k: the
   restart after cycle c. */
static inline unsigned StnGMRESCycleTicket(unsigned first, int max_k, int c, int it)
{
  return first + (unsigned)(c * (max_k + 1) + it);
}

/* Lets the restart whose ticket this is (and every earlier one) go ahead. */
int StnGMRESCycleGo(unsigned ticket);

/* Asks the cycle kernel launched last to end after the step it is in, or at the restart it waits
   at (its steps from then on write only what a cycle that stops here does not read: later basis
   vectors, columns and reports; never x). */
int StnGMRESCycleStop(void);

#ifdef __cplusplus
}
#endif

#endif
