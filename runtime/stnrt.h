/*
** stnrt.h: the stencilc runtime, linked into every generated program: the
** SG-DIA matrix (sgdia.h), the report at the end of a solve and the
** pictures (plot.c).
*/
#ifndef STNRT_H
#define STNRT_H

#include <petscsnes.h>

#include "stncompat.h"

#include "sgdia.h"
#include "stnapp.h"     /* the generated programs' options, matrices, kernels and solve */
#include "stncuda.h"    /* StnCUDADevicePresent: the CUDA base */
#include "stnvec.h"      /* StnDMSetGPUVectors: the GPU vectors and their kernels */
#include "stngmres.h"    /* StnKSPSetDefault: GMRES with its scalars on the GPU */
#include "stntune.h"     /* StnTuneLaunch: the generated kernels' launch shapes */
#include "stnmg.h"       /* StnDMUseSGDIA, StnPCMGSetDefaults: multigrid from the stencil */

/* Prints how the solve ended: the Newton iterations and the final
   residual norm, or, when it failed, why, in words, with what to try.
   *solved: whether the result is a solution. PETSc's convergence on a
   small step (CONVERGED_SNORM_RELATIVE) with the residual above the
   tolerances is not: the report says so. Needs the residual history
   (SNESSetConvergenceHistory) to know where the residual started. */
PetscErrorCode StnReportSolve(SNES snes, const char *program, PetscBool *solved);

/* Pictures, drawn by gnuplot (plot.c); where it is not installed the
   program says so in one line and carries on. StnRecordConvergence, before
   SNESSolve, records the residual norm at each Newton and Krylov iteration
   (monitors; the SNES frees the record); StnPlotConvergence draws them
   afterwards, StnPlotSolution draws the fields of X (colour maps in 2D,
   middle slices in 3D, curves in 1D). Collective; rank 0 draws. */
typedef struct _n_StnHistory *StnHistory;
PetscErrorCode StnRecordConvergence(SNES snes, StnHistory *history);
PetscErrorCode StnPlotConvergence(SNES snes, StnHistory history, const char *program, const char *png);
PetscErrorCode StnPlotSolution(SNES snes, Vec X, const char *program, const char *png);
/* StnRecordConvergence's Krylov monitor: it stores the norm it is given and touches no vector,
   so KSPSTNGMRES keeps its restarts on the device with it (stngmres.c, host_only_tests). */
PetscErrorCode StnKrylovHistoryMonitor(KSP ksp, PetscInt its, PetscReal rnorm, void *ctx);

#endif
