/* stngmres_cuda.h: a step of GMRES with its Hessenberg matrix on the device, callable from C.

   For KSPSTNGMRES (stngmres.c): the Gram-Schmidt step, the norm, the scaling and PETSc's
   Hessenberg update, on raw device arrays, with a report per step the host waits for; the
   cycle kernel (stncycle_cuda.h) reports its steps the same way. All launches go to the default
   stream. Implemented in stngmres_cuda.cu (nvcc, no PETSc inside) on the reductions of
   stnvec_cuda.cu.

   Every function returns 0 on success, otherwise a cudaError_t value; StnCUDALastError()
   (stncuda.h) says what went wrong. */
#ifndef STNGMRES_CUDA_H
#define STNGMRES_CUDA_H

#include "stnvec_cuda.h" /* STN_VEC_MAX_MULTI */

#ifdef __cplusplus
extern "C" {
#endif

/* The arrays are laid out as PETSc's KSPGMRES keeps them on the host. */
typedef struct StnGMRESState {
  double *hh;      /* ld x (max_k + 1), column-major: HH(a, b) = hh[b * ld + a] */
  double *cc, *ss; /* the Givens rotations (max_k + 1 each) */
  double *grs;     /* the rotated right-hand side (max_k + 2) */
  double *tt;      /* the norm of the newest basis vector before its scaling */
  int     ld, max_k; /* ld = max(max_k + 2, STN_VEC_MAX_MULTI) */
  int     fused;     /* 1 (StnGMRESCreate's default): one cooperative kernel per step where the
                        device allows it and n <= 2^20 (beyond, the three kernels are faster);
                        0: three kernels (MDot, MAXPY-norm-rotations, scaling) */
  int     threads, bps;  /* the fused kernel's block size and blocks per SM (0: defaults) */
  int     reports;       /* the first of the report slots its steps write: 0 (StnGMRESCreate's
                            default), the set every GMRES shares; an engine whose steps are queued
                            beside another's takes a set of its own, s * STN_VEC_MAX_MULTI for
                            s < STN_GMRES_REPORT_SETS */
  double *beta;          /* the norm StnGMRESStartNormalize started the cycle from */
} StnGMRESState;

/* Sets of STN_VEC_MAX_MULTI report slots, one per engine that may have steps in flight at once. */
#define STN_GMRES_REPORT_SETS 32
/* What the host needs after one step: the residual norm estimate |GRS(it + 1)|, the norm tt of
   the new vector, whether that was a happy breakdown, and whether the rotation was undefined
   (KSP_DIVERGED_NULL in PETSc's terms). The cycle kernel's restarts (stncycle_cuda.h) report in
   the same form: res is the new residual's norm, restarted whether the restart was done (0 in
   every step's report). */
typedef struct StnGMRESReport {
  double res, tt;
  int    hapend, null, restarted;
} StnGMRESReport;

/* max_k: the restart length, at most STN_VEC_MAX_MULTI - 1. */
int StnGMRESCreate(StnGMRESState *st, int max_k);
int StnGMRESDestroy(StnGMRESState *st);
/* Starts a cycle: GRS(0) = beta. */
int StnGMRESStart(StnGMRESState *st, double beta);
/* Starts a cycle from v without waiting: queues beta = ||v|| into GRS(0) and st->beta, then
   v = v / beta unless beta is 0; the reduction and the arithmetic of VecNormalize on a
   VECSTNCUDA vector, so the same bits. */
int StnGMRESStartNormalize(StnGMRESState *st, double *v, long n);
/* Step it of a cycle, on w = B A V[it] (already computed): the classical Gram-Schmidt
   coefficients HH(0..it, it) = V[0..it]^T w (one kernel, into device memory), then
   w = w - sum HH(j, it) V[j] with tt = ||w|| and the Hessenberg update by Givens rotations
   (one kernel; the update runs in its last block), then w = w / tt (one kernel), exactly the
   operations of PETSc's KSPGMRESCycle with classical Gram-Schmidt. Waits for the report. */
int StnGMRESStep(StnGMRESState *st, int it, double haptol, double *w, const double *const V[], long n, StnGMRESReport *r);
/* The same in two halves: the launches (*ticket: what to wait for), then the wait for step it's
   report. Later steps (and anything else) may be launched before the wait: each step of a cycle
   has its own report. */
int StnGMRESStepLaunch(StnGMRESState *st, int it, double haptol, double *w, const double *const V[], long n, unsigned *ticket);
int StnGMRESStepWait(int slot, unsigned ticket, StnGMRESReport *r); /* slot: st->reports + it */
/* The end of step it when its reductions ran elsewhere (several MPI ranks: the host summed the
   ranks' parts): h = HH(0..it, it), the Gram-Schmidt coefficients, and tt = ||w|| after
   w = w - sum h_j V[j]. Queues column it of HH from h, the Hessenberg update of StnGMRESStep
   (the same arithmetic) with its report, then w = w / tt (w NULL: the caller has scaled it);
   *ticket: what StnGMRESStepWait waits for. */
int StnGMRESStepFinish(StnGMRESState *st, int it, const double *h, double tt, double haptol, double *w, long n, unsigned *ticket);
/* Copies HH's columns 0..it (ld doubles each) and GRS(0..it) to the host. */
int StnGMRESGetHessenberg(const StnGMRESState *st, int it, double *hh, double *grs);

/* For the GMRES cycle kernel (stncycle_cuda.cu), which reports its steps as the steps do: the
   device's SM count, whether it takes cooperative launches, the per-block partials (room for
   npartials doubles), the flag and the reports (device pointers to mapped host memory). *first:
   the first of count consecutive flag values reserved for the caller (StnGMRESStepWait waits for
   them). */
typedef struct StnGMRESScratch {
  int             sms, cooperative;
  double         *partials;
  long            npartials;
  unsigned       *done;
  StnGMRESReport *report;
} StnGMRESScratch;
int StnGMRESGetScratch(StnGMRESScratch *s, unsigned count, unsigned *first);

#ifdef __cplusplus
}
#endif

#endif
