/*
** stngmres.c: KSPSTNGMRES, restarted GMRES whose Hessenberg matrix lives on
** the GPU (stngmres.h).
**
** The algorithm is PETSc's KSPGMRES with classical Gram-Schmidt (its
** default), step for step: KSPSolve_StnGMRES and cycle() below follow
** KSPSolve_GMRES and KSPGMRESCycle, with the same tests, reasons and
** monitor calls, so the two take the same iterations. What differs is
** where the scalars live. PETSc's GMRES brings the Gram-Schmidt
** coefficients to the host (VecMDot), sends them back (VecMAXPY), brings
** the new norm to the host (VecNormalize) and updates the Hessenberg
** matrix there: two host round trips and four launches per iteration.
** Here one step (StnGMRESStep, stngmres_cuda.cu) is one cooperative kernel
** (-ksp_stngmres_fused, the default: MDot, MAXPY, norm, scaling and the
** rotations meeting at two grid-wide barriers) or three kernels in a row,
** with the coefficients, the norm and the Givens rotations staying in
** device memory, and one wait, for the residual estimate the convergence
** test needs. The host reads the Hessenberg matrix once per cycle, to
** build the solution.
**
** Look-ahead (-ksp_stngmres_lookahead N; 2 by default, 0 with a preconditioner
** that costs more than its launches, multigrid: each queued step past the
** last one is a whole V-cycle wasted): step it + 1 (its
** operator application, MatMult and PCApply on V[it + 1], then its
** Gram-Schmidt kernel) depends on the data of step it only, not on the
** host's convergence test of step it. So the host queues up to N steps
** beyond the one whose residual it waits for, and the GPU never idles while
** the host wakes, tests, monitors and launches. When a test ends the cycle
** at step it, the steps queued after it have only written what the
** solution does not read: V[j + 1], column j of HH, cc[j], ss[j] and
** grs[j], grs[j + 1] for j > it (build_solution reads columns 0..it and
** grs[0..it]), and their own reports (one per step). The arithmetic is the
** same for every N.
**
** On several MPI ranks a step's reductions must be summed over the ranks:
** there the step is PETSc's classical Gram-Schmidt on the vectors (VecMDot,
** VecMAXPY, VecNorm, each with one MPI_Allreduce, stnvec.c) and only the
** Hessenberg update stays on the device (StnGMRESStepFinish), so the rest of
** this file is the same; three waits per step (the two sums, as PETSc's
** GMRES, and the report), no look-ahead (a step queued ahead would wait for
** its own reductions) and no cycle kernel (its sums are one rank's).
**
** The cycle kernel (-ksp_stngmres_cycle_kernel, stncycle_cuda.h): where the
** operator is an SG-DIA matrix on the device, with left Jacobi or no
** preconditioner, one launch runs every step of a cycle, and with
** -ksp_stngmres_device_restart the restarts too: after a full cycle the
** host says go (restart_in_kernel) and the kernel updates x, computes the
** new residual and its norm, and goes on with the next cycle while the
** host tests that norm (cycle() with g->restarted). The host's side of the
** algorithm is unchanged: the same tests, reasons and monitors, in the
** same order.
*/
#include "stngmres.h"
#include "stnrt.h" /* StnKrylovHistoryMonitor */

#if defined(PETSC_HAVE_CUDA) && defined(PETSC_USE_REAL_DOUBLE) && !defined(PETSC_USE_COMPLEX)
  #include <petsc/private/kspimpl.h>
  #include <petscdevice_cuda.h>

  #include "sgdia.h"
  #include "sgdia_cuda.h"
  #include "stncycle_cuda.h"
  #include "stngmres_cuda.h"
  #include "stnvec.h"
  #include "stnvec_cuda.h"


typedef struct {
  PetscInt       max_k;            /* the restart */
  PetscReal      haptol, breakdowntol, rnorm0;
  Vec           *work;             /* V[0..max_k], then the two temporaries */
  void          *block;            /* their device arrays, one allocation (StnVecDuplicateBlock) */
  Vec           *V, temp, temp_matop;
  Vec            sol_temp;         /* KSPBuildSolution's result when the caller gives no vector */
  PetscInt       it;               /* the last step done in this cycle (-1: none), for KSPBuildSolution */
  const double **Vd;               /* the device arrays of V */
  StnGMRESState  st;               /* HH, the rotations, GRS: device memory */
  PetscScalar   *hh, *grs, *nrs;   /* host copies, to build the solution */
  PetscBool      across_ranks;     /* several MPI ranks: each step's reductions on the host (step_across_ranks) */
  PetscScalar   *h, *minus_h;      /*   its Gram-Schmidt coefficients */
  PetscBool      profile;          /* -ksp_stngmres_profile: where an iteration's time goes */
  PetscInt       lookahead;        /* -ksp_stngmres_lookahead: steps queued beyond the one waited for; -1: by the PC */
  PetscInt       ahead;            /* this solve's */
  PetscBool      fused;            /* -ksp_stngmres_fused: one cooperative kernel per step, not three */
  PetscInt       step_threads;     /* -ksp_stngmres_step_threads: its block size (0: the default) */
  PetscBool      fuse_jacobi;      /* -ksp_stngmres_fuse_jacobi: the operator in one kernel where it can be (operator_setup) */
  Vec            jacobi;           /* the Jacobi scaling, PCApply(ones): kept from solve to solve */
  enum { OP_PETSC, OP_JACOBI, OP_MATMULT } op; /* how this solve applies its operator (operator_setup) */
  PetscBool      cycle_kernel;     /* -ksp_stngmres_cycle_kernel: a whole cycle in one kernel where it can be */
  PetscBool      device_restart;   /* -ksp_stngmres_device_restart: and the restarts in it too, where they can be */
  PetscBool      use_cycle;        /* this solve runs its cycles so (operator_setup), on: */
  const StnBox  *cycle_box;        /*   the SG-DIA matrix's layout */
  const PetscScalar *cycle_values; /*   its values on the device, brought up to date for this solve */
  PetscLogDouble cycle_flops;      /*   the flops of one of its products, without the scaling */
  PetscBool      restart_on_device; /* this solve's launches restart on the device (operator_setup) */
  PetscBool      running;          /* a cycle kernel of this solve may still run */
  unsigned       first;            /*   its tickets (StnGMRESCycleTicket) */
  PetscInt       launch_cycle, launch_cycles; /* the cycle of it that cycle() runs, and how many it may run */
  PetscBool      restarted;        /* the kernel has restarted: x updated, V[0] normalized, of norm: */
  PetscReal      restart_res;
  PetscLogDouble host[4];          /* seconds: operator calls, step launches, wait, the rest */
  double         gpu[2];           /* milliseconds on the GPU: operator, step */
  PetscInt       steps;
} KSP_StnGMRES;

/* Prints the profile: per iteration, the host's time in each phase and the GPU's. */
static PetscErrorCode print_profile(KSP ksp)
{
  KSP_StnGMRES *g = (KSP_StnGMRES *)ksp->data;
  const double  k = g->steps ? 1e6 / g->steps : 0;

  PetscFunctionBegin;
  if (!g->profile || !g->steps) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscPrintf(PetscObjectComm((PetscObject)ksp),
                        "stngmres profile, %" PetscInt_FMT " steps, us per step: host: operator (MatMult, PCApply) %.1f, step launches %.1f, wait %.1f, "
                        "monitor and test %.1f; GPU: operator %.1f, step kernels %.1f\n",
                        g->steps, g->host[0] * k, g->host[1] * k, g->host[2] * k, g->host[3] * k, g->gpu[0] * 1e3 * k / 1e6, g->gpu[1] * 1e3 * k / 1e6));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode KSPSetUp_StnGMRES(KSP ksp)
{
  KSP_StnGMRES *g = (KSP_StnGMRES *)ksp->data;
  PetscBool     cuda;
  Vec          *like;

  PetscFunctionBegin;
  PetscCall(KSPCreateVecs(ksp, 1, &like, 0, NULL));
  PetscCall(PetscObjectTypeCompareAny((PetscObject)like[0], &cuda, VECSEQCUDA, VECMPICUDA, ""));
  if (!cuda) PetscCall(VecDestroyVecs(1, &like));
  PetscCheck(cuda, PetscObjectComm((PetscObject)ksp), PETSC_ERR_SUP, "-ksp_type stngmres needs CUDA vectors (-stn_device gpu); use -ksp_type gmres");
  PetscCall(StnVecDuplicateBlock(like[0], g->max_k + 3, &g->work, &g->block)); /* one allocation for all */
  PetscCall(VecDestroyVecs(1, &like));
  g->V          = g->work;
  g->temp       = g->work[g->max_k + 1];
  g->temp_matop = g->work[g->max_k + 2];
  STN_CUDA_CALL(StnGMRESCreate(&g->st, (int)g->max_k));
  g->st.fused   = g->fused;
  g->st.threads = (int)g->step_threads;
  PetscCall(PetscMalloc4(g->max_k + 1, &g->Vd, (size_t)g->st.ld * (g->max_k + 1), &g->hh, g->max_k + 2, &g->grs, g->max_k + 1, &g->nrs));
  PetscCall(PetscMalloc2(g->max_k + 1, &g->h, g->max_k + 1, &g->minus_h));
  {
    PetscMPIInt size;
    PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)ksp), &size));
    g->across_ranks = size > 1 ? PETSC_TRUE : PETSC_FALSE;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode KSPReset_StnGMRES(KSP ksp)
{
  KSP_StnGMRES *g = (KSP_StnGMRES *)ksp->data;

  PetscFunctionBegin;
  if (g->work) PetscCall(StnVecDestroyBlock(g->max_k + 3, &g->work, &g->block));
  PetscCall(VecDestroy(&g->jacobi));
  g->op = OP_PETSC;
  PetscCall(VecDestroy(&g->sol_temp));
  g->V = NULL;
  STN_CUDA_CALL(StnGMRESDestroy(&g->st));
  PetscCall(PetscFree4(g->Vd, g->hh, g->grs, g->nrs));
  PetscCall(PetscFree2(g->h, g->minus_h));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode KSPDestroy_StnGMRES(KSP ksp)
{
  PetscFunctionBegin;
  PetscCall(print_profile(ksp));
  PetscCall(KSPReset_StnGMRES(ksp));
  PetscCall(PetscFree(ksp->data));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* vdest = vs + the correction of the first it + 1 steps of the cycle (PETSc's KSPGMRESBuildSoln;
   vdest may be vs). Also in the middle of a cycle, with steps after it still queued: they write
   only columns of HH and entries of GRS past it. */
static PetscErrorCode build_solution(KSP ksp, PetscInt it, Vec vs, Vec vdest)
{
  KSP_StnGMRES *g = (KSP_StnGMRES *)ksp->data;
  const int     ld = g->st.ld;

  PetscFunctionBegin;
  if (it < 0) { /* no steps: the solution is unchanged */
    PetscCall(VecCopy(vs, vdest)); /* nothing when vdest is vs */
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  STN_CUDA_CALL(StnGMRESGetHessenberg(&g->st, (int)it, g->hh, g->grs));
  #define HH(a, b) g->hh[(b) * ld + (a)]
  for (PetscInt k = it; k >= 0; k--) { /* back substitution in the triangular HH */
    PetscScalar t = g->grs[k];
    for (PetscInt j = k + 1; j <= it; j++) t -= HH(k, j) * g->nrs[j];
    if (HH(k, k) == 0.0) {
      PetscCheck(!ksp->errorifnotconverged, PetscObjectComm((PetscObject)ksp), PETSC_ERR_NOT_CONVERGED, "Likely your matrix or preconditioner is singular: HH(%" PetscInt_FMT ", %" PetscInt_FMT ") is zero", k, k);
      ksp->reason = KSP_DIVERGED_BREAKDOWN;
      PetscFunctionReturn(PETSC_SUCCESS);
    }
    g->nrs[k] = t / HH(k, k);
  }
  #undef HH
  PetscCall(VecMAXPBY(g->temp, it + 1, g->nrs, 0.0, g->V));
  PetscCall(KSPUnwindPreconditioner(ksp, g->temp, g->temp_matop));
  if (vdest != vs) PetscCall(VecCopy(vs, vdest));
  PetscCall(VecAXPY(vdest, 1.0, g->temp));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The solution so far, for monitors and convergence tests that ask in the middle of a cycle
   (-ksp_monitor_true_residual): KSPBuildSolution_GMRES. */
static PetscErrorCode KSPBuildSolution_StnGMRES(KSP ksp, Vec ptr, Vec *result)
{
  KSP_StnGMRES *g = (KSP_StnGMRES *)ksp->data;

  PetscFunctionBegin;
  if (!ptr) {
    if (!g->sol_temp) PetscCall(VecDuplicate(ksp->vec_sol, &g->sol_temp));
    ptr = g->sol_temp;
  }
  PetscCall(build_solution(ksp, g->it, ksp->vec_sol, ptr));
  if (result) *result = ptr;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Whether the convergence test and the monitors work on the host alone: PETSc's default test,
   the residual monitors (-ksp_monitor, -ksp_monitor_short) and the program's own recorder for
   -stn_plot_convergence (plot.c) read only the norm they are given.
   A restart on the device waits for the host's go, so the host must not wait for the device
   (a true residual monitor builds the solution on the device) between a cycle kernel's launch
   and its restarts. */
static PetscBool host_only_tests(KSP ksp)
{
  if (ksp->converged != KSPConvergedDefault) return PETSC_FALSE;
  for (PetscInt i = 0; i < ksp->numbermonitors; i++)
    if (ksp->monitor[i] != (KSPMonitorFn *)KSPMonitorResidual && ksp->monitor[i] != (KSPMonitorFn *)KSPMonitorResidualShort &&
        ksp->monitor[i] != (KSPMonitorFn *)StnKrylovHistoryMonitor)
      return PETSC_FALSE;
  return PETSC_TRUE;
}

/* Before a solve: how apply_operator applies this solve's operator. PETSc's KSP_PCApplyBAorAB
   in general, and in one kernel, with the same result, in two cases:
   - left Jacobi preconditioning of an SG-DIA matrix: B A v is d .* (A v), where d is the
     preconditioner's scaling. PCApply on a vector of ones gives it exactly (x * 1 = x), whatever
     the Jacobi options (-pc_jacobi_type, -pc_jacobi_abs, ...). The SG-DIA product then applies it
     as it writes each row (MatSGDIAMultScaledDevice), saving the pointwise product's kernel and a
     pass over two vectors; the result is the same bits.
   - no preconditioner (PCNONE), either side: B A v is A v, which PETSc copies once more
     (PCApply_None); MatMult alone writes it.
   Neither for a transpose solve, with diagonal scaling, or when the matrix has a null space
   (KSP_PCApplyBAorAB removes it from the result). */
static PetscErrorCode operator_setup(KSP ksp)
{
  KSP_StnGMRES *g = (KSP_StnGMRES *)ksp->data;
  PetscBool     jac, none, sgdia, dscale;
  Mat           A;
  MatNullSpace  nsp;

  PetscFunctionBegin;
  g->op        = OP_PETSC;
  g->use_cycle = PETSC_FALSE;
  if (g->lookahead >= 0) g->ahead = g->lookahead;
  else { /* a V-cycle keeps the device busy while the host launches the next one's first kernels;
            a step queued past the last is a V-cycle wasted */
    PetscBool mg;

    PetscCall(PetscObjectTypeCompare((PetscObject)ksp->pc, PCMG, &mg));
    g->ahead = mg ? 0 : 2;
  }
  if (g->across_ranks) g->ahead = 0; /* each step waits for its reductions anyway */
  if (!g->fuse_jacobi || ksp->transpose_solve || ksp->dscale) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PCGetOperators(ksp->pc, &A, NULL));
  PetscCall(MatGetNullSpace(A, &nsp));
  PetscCall(PCGetDiagonalScale(ksp->pc, &dscale));
  if (nsp || dscale) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscObjectTypeCompare((PetscObject)ksp->pc, PCNONE, &none));
  PetscCall(PetscObjectTypeCompare((PetscObject)ksp->pc, PCJACOBI, &jac));
  PetscCall(MatIsSGDIA(A, &sgdia));
  if (none) g->op = OP_MATMULT;
  else if (jac && sgdia && ksp->pc_side == PC_LEFT) {
    if (!g->jacobi) PetscCall(VecDuplicate(g->temp, &g->jacobi)); /* once: an allocation may wait for the device */
    PetscCall(VecSet(g->temp, 1.0));
    PetscCall(PCApply(ksp->pc, g->temp, g->jacobi));
    g->op = OP_JACOBI;
  }
  /* The cycle kernel (stncycle_cuda.h) applies either operator itself, when A is SG-DIA on the
     device without ghosts and its rows fit. Not while profiling, which times each step. */
  if (g->op != OP_PETSC && g->cycle_kernel && g->fused && !g->profile && !g->across_ranks) {
    PetscBool ok;
    PetscInt  n;
    PetscCall(MatSGDIAGetDeviceOperator(A, &g->cycle_box, &g->cycle_values, &g->cycle_flops, &ok));
    PetscCall(VecGetLocalSize(g->temp, &n));
    g->use_cycle = ok && StnGMRESCycleFits(g->cycle_box, n) ? PETSC_TRUE : PETSC_FALSE;
  }
  g->restart_on_device = g->use_cycle && g->device_restart && host_only_tests(ksp) ? PETSC_TRUE : PETSC_FALSE;
  if (g->use_cycle && g->device_restart && !g->restart_on_device) PetscCall(PetscInfo(ksp, "Restarts on the host: a convergence test or monitor other than PETSc's default and the residual monitors may wait for the device\n"));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Launches this cycle, from step 0, as one kernel (stncycle_cuda.h): the operator of
   operator_setup (A, with Jacobi's scaling for OP_JACOBI) and the Gram-Schmidt steps, and where
   operator_setup allowed it the later cycles of the solve with their restarts, up to max_it. */
static PetscErrorCode launch_cycles(KSP ksp, PetscInt n)
{
  KSP_StnGMRES      *g      = (KSP_StnGMRES *)ksp->data;
  const PetscInt     budget = ksp->max_it - ksp->its, cycles = (budget + g->max_k - 1) / g->max_k;
  const PetscScalar *d = NULL, *b = NULL;
  PetscScalar       *x = NULL;
  StnGMRESCycleArgs  a;

  PetscFunctionBegin;
  if (g->op == OP_JACOBI) PetscCall(VecCUDAGetArrayRead(g->jacobi, &d));
  if (g->restart_on_device) {
    PetscCall(VecCUDAGetArray(ksp->vec_sol, &x));
    PetscCall(VecCUDAGetArrayRead(ksp->vec_rhs, &b));
  }
  a.box    = g->cycle_box;
  a.A      = g->cycle_values;
  a.d      = d;
  a.V      = (double *const *)g->Vd;
  a.n      = n;
  a.haptol = g->haptol;
  a.it0    = 0;
  a.it1    = (int)PetscMin(g->max_k, budget);
  a.cycles = g->restart_on_device ? (int)PetscMin(cycles, STN_GMRES_MAX_CYCLES) : 1;
  a.budget = budget;
  a.x      = x;
  a.b      = b;
  STN_CUDA_CALL(StnGMRESCycleLaunch(&g->st, &a, &g->first));
  PetscCall(PetscInfo(ksp, "The cycle kernel runs up to %d cycles (%s) and %" PetscInt_FMT " steps\n", a.cycles, g->restart_on_device ? "restarts on the device" : "restarts on the host", budget));
  g->running       = PETSC_TRUE;
  g->launch_cycle  = 0;
  g->launch_cycles = a.cycles;
  if (g->op == OP_JACOBI) PetscCall(VecCUDARestoreArrayRead(g->jacobi, &d));
  if (g->restart_on_device) {
    PetscCall(VecCUDARestoreArray(ksp->vec_sol, &x));
    PetscCall(VecCUDARestoreArrayRead(ksp->vec_rhs, &b));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Ends the cycle kernel of this solve, if one may still run: it stops after the step it is in. */
static PetscErrorCode stop_cycles(KSP ksp)
{
  KSP_StnGMRES *g = (KSP_StnGMRES *)ksp->data;

  PetscFunctionBegin;
  if (g->running) STN_CUDA_CALL(StnGMRESCycleStop());
  g->running   = PETSC_FALSE;
  g->restarted = PETSC_FALSE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* After a full cycle that did not end the solve: lets the cycle kernel restart, if it restarts
   on the device after this cycle, and waits for the restart's report. *done: whether it did;
   if not, the kernel has ended and the host restarts. */
static PetscErrorCode restart_in_kernel(KSP ksp, PetscInt n, PetscBool *done)
{
  KSP_StnGMRES  *g = (KSP_StnGMRES *)ksp->data;
  StnGMRESReport rep;
  unsigned       ticket;

  PetscFunctionBegin;
  *done = PETSC_FALSE;
  if (!g->running || g->launch_cycle + 1 >= g->launch_cycles) PetscFunctionReturn(PETSC_SUCCESS);
  ticket = StnGMRESCycleTicket(g->first, g->st.max_k, (int)g->launch_cycle, g->st.max_k);
  STN_CUDA_CALL(StnGMRESCycleGo(ticket));
  STN_CUDA_CALL(StnGMRESStepWait(g->st.max_k, ticket, &rep));
  if (!rep.restarted) {
    PetscCall(PetscInfo(ksp, "The cycle kernel did not restart (a zero on the Hessenberg diagonal, or no go in time): the host restarts\n"));
    g->running = PETSC_FALSE;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  *done          = PETSC_TRUE;
  g->restarted   = PETSC_TRUE;
  g->restart_res = rep.res;
  g->launch_cycle++;
  /* What the device changed behind PETSc's back (cached norms are keyed by the state), and the
     restart's flops as KSPGMRESBuildSoln, KSPInitialResidual and VecNormalize log them. */
  PetscCall(PetscObjectStateIncrease((PetscObject)ksp->vec_sol));
  for (PetscInt i = 0; i <= g->max_k; i++) PetscCall(PetscObjectStateIncrease((PetscObject)g->V[i]));
  PetscCall(PetscLogGpuFlops(g->cycle_flops + (PetscLogDouble)n * (2.0 * g->max_k + 2 + 2 + 2 + 1 + (g->op == OP_JACOBI ? 1 : 0))));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* y = B A x (left preconditioning) or A B x (right): KSP_PCApplyBAorAB, in one kernel where
   operator_setup allowed it. */
static PetscErrorCode apply_operator(KSP ksp, Vec x, Vec y)
{
  KSP_StnGMRES *g    = (KSP_StnGMRES *)ksp->data;
  PetscBool     done = PETSC_FALSE;
  Mat           A;

  PetscFunctionBegin;
  PetscCall(PCGetOperators(ksp->pc, &A, NULL));
  if (g->op == OP_MATMULT) PetscCall(MatMult(A, x, y));
  if (g->op == OP_JACOBI) PetscCall(MatSGDIAMultScaledDevice(A, g->jacobi, x, y, &done)); /* not done: A is not on the device */
  if (g->op == OP_PETSC || (g->op == OP_JACOBI && !done)) PetscCall(KSP_PCApplyBAorAB(ksp, x, y, g->temp_matop));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Step it on several ranks, on w = V[it + 1] = B A V[it]: PETSc's classical Gram-Schmidt with
   the ranks' sums (VecMDot, VecMAXPY, VecNorm), then the Hessenberg update and the scaling of w
   on the device, as StnGMRESStepLaunch does them on one rank. */
static PetscErrorCode step_across_ranks(KSP ksp, PetscInt it, PetscInt n, unsigned *ticket)
{
  KSP_StnGMRES *g = (KSP_StnGMRES *)ksp->data;
  Vec           w = g->V[it + 1];
  PetscReal     tt;
  PetscScalar  *wa;

  PetscFunctionBegin;
  PetscCall(VecMDot(w, it + 1, g->V, g->h));
  for (PetscInt j = 0; j <= it; j++) g->minus_h[j] = -g->h[j];
  PetscCall(VecMAXPY(w, it + 1, g->minus_h, g->V));
  PetscCall(VecNorm(w, NORM_2, &tt));
  PetscCall(VecCUDAGetArray(w, &wa));
  STN_CUDA_CALL(StnGMRESStepFinish(&g->st, (int)it, g->h, tt, g->haptol, wa, n, ticket));
  PetscCall(VecCUDARestoreArray(w, &wa));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* One restart cycle from V[0] = the (preconditioned) residual: KSPGMRESCycle. Where the cycle
   kernel restarted (g->restarted), V[0] is already normalized and the norm known. */
static PetscErrorCode cycle(PetscInt *itcount, KSP ksp)
{
  KSP_StnGMRES   *g  = (KSP_StnGMRES *)ksp->data;
  PetscReal       res;
  PetscInt        it = 0, n;
  StnGMRESReport  rep;
  PetscInt        queued = 0; /* steps of this cycle launched so far, each after its operator application */
  unsigned        ticket[STN_VEC_MAX_MULTI];
  const PetscBool on_device = g->restarted; /* this cycle runs in the kernel already running */

  PetscFunctionBegin;
  *itcount     = 0;
  g->restarted = PETSC_FALSE;
  PetscCall(VecGetLocalSize(g->V[0], &n));
  if (on_device) res = g->restart_res;
  else PetscCall(VecNormalize(g->V[0], &res));
  KSPCheckNorm(ksp, res);
  if (ksp->rnorm > 0.0 && PetscAbsReal(res - ksp->rnorm) > g->breakdowntol * g->rnorm0) {
    PetscCheck(!ksp->errorifnotconverged, PetscObjectComm((PetscObject)ksp), PETSC_ERR_CONV_FAILED, "Residual norm computed by GMRES recursion formula %g is far from the computed residual norm %g at restart, residual norm at start of cycle %g",
               (double)ksp->rnorm, (double)res, (double)g->rnorm0);
    ksp->reason = KSP_DIVERGED_BREAKDOWN;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  g->rnorm0 = res;
  g->it      = -1;
  if (!on_device) STN_CUDA_CALL(StnGMRESStart(&g->st, res));
  ksp->rnorm = res;
  PetscCall(KSPLogResidualHistory(ksp, res));
  PetscCall(KSPMonitor(ksp, ksp->its, res));
  if (!res) {
    ksp->reason = KSP_CONVERGED_ATOL;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall((*ksp->converged)(ksp, ksp->its, res, &ksp->reason, ksp->cnvP));

  /* The basis on the device: valid there only from now on, so that the kernels may write it. */
  for (PetscInt i = 0; !on_device && i <= g->max_k; i++) {
    PetscScalar *a;
    PetscCall(VecCUDAGetArray(g->V[i], &a));
    g->Vd[i] = a;
    PetscCall(VecCUDARestoreArray(g->V[i], &a));
  }
  while (!ksp->reason && it < g->max_k && ksp->its < ksp->max_it) {
    const PetscInt ahead = g->profile ? 0 : g->ahead;
    const PetscInt last  = PetscMin(PetscMin(g->max_k - 1, it + ahead), it + (ksp->max_it - ksp->its) - 1);
    PetscLogDouble t[5]  = {0, 0, 0, 0, 0};
    if (it) {
      PetscCall(KSPLogResidualHistory(ksp, res));
      PetscCall(KSPMonitor(ksp, ksp->its, res));
    }
    if (g->use_cycle && !queued) { /* all the steps this cycle may take, in the kernel */
      if (!on_device) PetscCall(launch_cycles(ksp, n));
      queued = PetscMin(g->max_k, ksp->max_it - ksp->its);
      for (PetscInt i = 0; i < queued; i++) ticket[i] = StnGMRESCycleTicket(g->first, g->st.max_k, (int)g->launch_cycle, (int)i);
    }
    for (; queued <= last; queued++) { /* step it, and the next ones up to the look-ahead */
      PetscScalar *w;
      if (g->profile) {
        PetscCall(PetscTime(&t[0]));
        STN_CUDA_CALL(StnCUDAMark(0));
      }
      PetscCall(apply_operator(ksp, g->V[queued], g->V[queued + 1]));
      if (g->profile) {
        PetscCall(PetscTime(&t[1]));
        STN_CUDA_CALL(StnCUDAMark(1));
      }
      if (g->across_ranks) PetscCall(step_across_ranks(ksp, queued, n, &ticket[queued]));
      else {
        PetscCall(VecCUDAGetArray(g->V[queued + 1], &w)); /* wherever the operator left it: now on the device */
        STN_CUDA_CALL(StnGMRESStepLaunch(&g->st, (int)queued, g->haptol, w, g->Vd, n, &ticket[queued]));
        PetscCall(VecCUDARestoreArray(g->V[queued + 1], &w));
      }
      if (g->profile) PetscCall(PetscTime(&t[4]));
    }
    STN_CUDA_CALL(StnGMRESStepWait((int)it, ticket[it], &rep));
    if (g->profile) {
      float ms[2];
      STN_CUDA_CALL(StnCUDAMark(2));
      PetscCall(PetscTime(&t[2]));
      STN_CUDA_CALL(StnVecWait());
      STN_CUDA_CALL(StnCUDAMarksElapsed(0, 1, &ms[0]));
      STN_CUDA_CALL(StnCUDAMarksElapsed(1, 2, &ms[1]));
      g->gpu[0] += ms[0];
      g->gpu[1] += ms[1];
      g->host[0] += t[1] - t[0];
      g->host[1] += t[4] - t[1];
      g->host[2] += t[2] - t[4];
      g->steps++;
    }
    KSPCheckNorm(ksp, rep.tt);
    if (rep.hapend) PetscCall(PetscInfo(ksp, "Detected happy ending, tt = %14.12e\n", (double)rep.tt));
    if (rep.null) {
      PetscCheck(!ksp->errorifnotconverged, PetscObjectComm((PetscObject)ksp), PETSC_ERR_NOT_CONVERGED, "tt == 0.0");
      ksp->reason = KSP_DIVERGED_NULL;
    } else res = rep.res;
    it++;
    g->it = it - 1; /* before the test and the monitor, which may build the solution */
    ksp->its++;
    ksp->rnorm = res;
    if (ksp->reason) break;
    PetscCall((*ksp->converged)(ksp, ksp->its, res, &ksp->reason, ksp->cnvP));
    if (g->profile) {
      PetscCall(PetscTime(&t[3]));
      g->host[3] += t[3] - t[2];
    }
    if (rep.hapend) { /* as KSPGMRESCycle: a happy breakdown must come with convergence */
      if (ksp->normtype == KSP_NORM_NONE) ksp->reason = KSP_CONVERGED_HAPPY_BREAKDOWN;
      else if (!ksp->reason) {
        PetscCheck(!ksp->errorifnotconverged, PetscObjectComm((PetscObject)ksp), PETSC_ERR_NOT_CONVERGED, "Reached happy break down, but convergence was not indicated. Residual norm = %g", (double)res);
        ksp->reason = KSP_DIVERGED_BREAKDOWN;
        break;
      }
    }
  }
  *itcount = it;
  if (g->use_cycle) { /* the products inside the kernel, as MatMult would have logged them */
    PetscCall(PetscLogGpuFlops(it * (g->cycle_flops + (g->op == OP_JACOBI ? (PetscLogDouble)n : 0))));
    if (it == g->max_k && !ksp->reason && ksp->its < ksp->max_it) { /* the kernel restarts, if it can */
      PetscBool done;
      PetscCall(restart_in_kernel(ksp, n, &done));
      if (done) PetscFunctionReturn(PETSC_SUCCESS);
    }
    PetscCall(stop_cycles(ksp)); /* its steps past it are not needed */
  }
  PetscCall(build_solution(ksp, it - 1, ksp->vec_sol, ksp->vec_sol));
  if (ksp->reason == KSP_CONVERGED_ITERATING && ksp->its >= ksp->max_it) ksp->reason = KSP_DIVERGED_ITS;
  if (it && ksp->reason) {
    PetscCall(KSPLogResidualHistory(ksp, res));
    PetscCall(KSPMonitor(ksp, ksp->its, res));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode KSPSolve_StnGMRES(KSP ksp)
{
  KSP_StnGMRES *g          = (KSP_StnGMRES *)ksp->data;
  PetscBool     guess_zero = ksp->guess_zero;
  PetscInt      its, itcount = 0;

  PetscFunctionBegin;
  ksp->its   = 0;
  ksp->rnorm = -1.0; /* marks the first cycle, for its breakdown test */
  PetscCall(operator_setup(ksp));
  while (!ksp->reason || (ksp->rnorm == -1 && ksp->reason == KSP_DIVERGED_PC_FAILED)) {
    if (!g->restarted) PetscCall(KSPInitialResidual(ksp, ksp->vec_sol, g->temp, g->temp_matop, g->V[0], ksp->vec_rhs));
    PetscCall(cycle(&its, ksp));
    itcount += its;
    if (itcount >= ksp->max_it) {
      if (!ksp->reason) ksp->reason = KSP_DIVERGED_ITS;
      break;
    }
    ksp->guess_zero = PETSC_FALSE; /* later cycles start from the solution so far */
  }
  PetscCall(stop_cycles(ksp)); /* a test at a restart on the device ended the solve: the next cycle is not needed */
  ksp->guess_zero = guess_zero;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode KSPSetFromOptions_StnGMRES(KSP ksp, PetscOptionItems PetscOptionsObject)
{
  KSP_StnGMRES *g = (KSP_StnGMRES *)ksp->data;
  PetscInt      restart;
  PetscBool     flg;

  PetscFunctionBegin;
  PetscOptionsHeadBegin(PetscOptionsObject, "KSP stencilc GMRES options (GMRES with its Hessenberg matrix on the GPU)");
  PetscCall(PetscOptionsInt("-ksp_gmres_restart", "Number of Krylov search directions (at most 31)", NULL, g->max_k, &restart, &flg));
  if (flg) {
    PetscCheck(restart >= 1 && restart < STN_VEC_MAX_MULTI, PetscObjectComm((PetscObject)ksp), PETSC_ERR_ARG_OUTOFRANGE, "-ksp_gmres_restart %" PetscInt_FMT ": stngmres takes 1 to %d", restart, STN_VEC_MAX_MULTI - 1);
    if (restart != g->max_k) PetscCall(KSPReset_StnGMRES(ksp));
    g->max_k = restart;
  }
  PetscCall(PetscOptionsReal("-ksp_gmres_haptol", "Tolerance for exact convergence (happy ending)", NULL, g->haptol, &g->haptol, NULL));
  PetscCall(PetscOptionsBool("-ksp_stngmres_profile", "Print where an iteration's time goes (host phases, GPU time; turns the look-ahead off)", NULL, g->profile, &g->profile, NULL));
  PetscCall(PetscOptionsBool("-ksp_stngmres_fused", "One cooperative kernel per step (else three: MDot, MAXPY with norm and rotations, scaling)", NULL, g->fused, &g->fused, NULL));
  g->st.fused = g->fused;
  PetscCall(PetscOptionsInt("-ksp_stngmres_step_threads", "Threads per block of the one-kernel step (0: 512 up to 2^19 entries, 256 beyond)", NULL, g->step_threads, &g->step_threads, NULL));
  PetscCheck(g->step_threads >= 0 && g->step_threads <= 1024, PetscObjectComm((PetscObject)ksp), PETSC_ERR_ARG_OUTOFRANGE, "-ksp_stngmres_step_threads %" PetscInt_FMT ": must be 0 to 1024", g->step_threads);
  g->st.threads = (int)g->step_threads;
  PetscCall(PetscOptionsBool("-ksp_stngmres_cycle_kernel", "A whole restart cycle in one kernel where it can be: the operator of -ksp_stngmres_fuse_jacobi on an SG-DIA matrix on the GPU, one rank, no periodic direction", NULL, g->cycle_kernel, &g->cycle_kernel, NULL));
  PetscCall(PetscOptionsBool("-ksp_stngmres_device_restart", "The cycle kernel restarts on the device too (with the default convergence test and at most residual monitors), running the whole solve in one launch", NULL, g->device_restart, &g->device_restart, NULL));
  PetscCall(PetscOptionsBool("-ksp_stngmres_fuse_jacobi", "The operator in one kernel where it can be: MatMult and a left Jacobi PCApply on an SG-DIA matrix, MatMult alone with PCNONE", NULL, g->fuse_jacobi, &g->fuse_jacobi, NULL));
  PetscCall(PetscOptionsInt("-ksp_stngmres_lookahead", "Steps (operator and Gram-Schmidt) queued on the GPU beyond the one whose residual the host waits for (default: 0 with multigrid, else 2)", NULL, g->lookahead, &g->lookahead, NULL));
  PetscCheck(g->lookahead >= -1, PetscObjectComm((PetscObject)ksp), PETSC_ERR_ARG_OUTOFRANGE, "-ksp_stngmres_lookahead %" PetscInt_FMT ": must be 0 or more (-1: by the preconditioner)", g->lookahead);
  PetscCall(PetscOptionsReal("-ksp_gmres_breakdown_tolerance", "Divergence breakdown tolerance during GMRES restart", NULL, g->breakdowntol, &g->breakdowntol, NULL));
  PetscOptionsHeadEnd();
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode KSPView_StnGMRES(KSP ksp, PetscViewer viewer)
{
  KSP_StnGMRES *g = (KSP_StnGMRES *)ksp->data;
  PetscBool     ascii, mg = PETSC_FALSE;

  PetscFunctionBegin;
  PetscCall(PetscObjectTypeCompare((PetscObject)viewer, PETSCVIEWERASCII, &ascii));
  if (ksp->pc) PetscCall(PetscObjectTypeCompare((PetscObject)ksp->pc, PCMG, &mg));
  if (ascii) PetscCall(PetscViewerASCIIPrintf(viewer, "  restart=%" PetscInt_FMT ", classical Gram-Schmidt, Hessenberg matrix on the GPU (stencilc), %s step, look-ahead %" PetscInt_FMT " steps, operator %s%s\n", g->max_k, g->fused ? "one-kernel" : "three-kernel", g->lookahead >= 0 ? g->lookahead : mg ? 1 : 2, g->fuse_jacobi ? "in one kernel where it can be (left Jacobi on SG-DIA, or no preconditioner)" : "as PETSc applies it", g->fuse_jacobi && g->fused && g->cycle_kernel ? (g->device_restart ? ", whole cycles and their restarts in one kernel where it can be (SG-DIA on one rank)" : ", a whole cycle in one kernel where it can be (SG-DIA on one rank)") : ""));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode KSPCreate_StnGMRES(KSP ksp)
{
  KSP_StnGMRES *g;

  PetscFunctionBegin;
  PetscCall(PetscNew(&g));
  g->max_k        = 30;
  g->haptol       = 1.0e-30;
  g->breakdowntol = 0.1;
  g->lookahead    = -1;
  g->fused        = PETSC_TRUE;
  g->fuse_jacobi  = PETSC_TRUE;
  g->cycle_kernel = PETSC_TRUE;
  g->device_restart = PETSC_TRUE;
  ksp->data       = g;
  PetscCall(KSPSetSupportedNorm(ksp, KSP_NORM_PRECONDITIONED, PC_LEFT, 4));
  PetscCall(KSPSetSupportedNorm(ksp, KSP_NORM_UNPRECONDITIONED, PC_RIGHT, 3));
  ksp->ops->setup          = KSPSetUp_StnGMRES;
  ksp->ops->solve          = KSPSolve_StnGMRES;
  ksp->ops->reset          = KSPReset_StnGMRES;
  ksp->ops->destroy        = KSPDestroy_StnGMRES;
  ksp->ops->view           = KSPView_StnGMRES;
  ksp->ops->buildsolution  = KSPBuildSolution_StnGMRES;
  ksp->ops->setfromoptions = KSPSetFromOptions_StnGMRES;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode StnKSPRegister(void)
{
  static PetscBool done;

  PetscFunctionBegin;
  if (!done) PetscCall(KSPRegister(KSPSTNGMRES, KSPCreate_StnGMRES));
  done = PETSC_TRUE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

#else

PetscErrorCode StnKSPRegister(void)
{
  return PETSC_SUCCESS;
}

#endif

PetscErrorCode StnKSPSetDefault(KSP ksp, DM dm)
{
  VecType   vtype;
  PetscBool ours;

  PetscFunctionBegin;
  PetscCall(DMGetVecType(dm, &vtype));
  PetscCall(PetscStrcmp(vtype, "stncuda", &ours));
  if (!ours) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(StnKSPRegister());
  PetscCall(KSPSetType(ksp, KSPSTNGMRES));
  PetscFunctionReturn(PETSC_SUCCESS);
}
