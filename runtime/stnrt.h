/*
** stnrt.h: the stencilc runtime, linked into every generated program: the
** SG-DIA matrix (sgdia.h), the report at the end of a solve, the
** pictures (plot.c) and the coefficients read from files (stncoef.h).
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
#include "stnmatfree.h"  /* StnMatFreeCreate: the Jacobian's product without its matrix */
#include "stncoef.h"     /* StnCoefficientLoad: coefficients read from files */
#include "stnts.h"       /* time-dependent programs: TS's IFunction and IJacobian */

/* Prints how the solve ended: the Newton iterations and the final
   residual norm, or, when it failed, why, in words, with what to try.
   *solved: whether the result is a solution. PETSc's convergence on a
   small step (CONVERGED_SNORM_RELATIVE) with the residual above the
   tolerances is not: the report says so. Needs the residual history
   (SNESSetConvergenceHistory) to know where the residual started. */
PetscErrorCode StnReportSolve(SNES snes, const char *program, PetscBool *solved);
/* Why a Newton solve failed, in words (report.c). */
const char *StnSNESReasonInWords(SNESConvergedReason reason);

/* Pictures, drawn by gnuplot (plot.c); where it is not installed the
   program says so in one line and carries on. StnRecordConvergence, before
   SNESSolve, records the residual norm at each Newton and Krylov iteration
   (monitors; the SNES frees the record); StnPlotConvergence draws them
   afterwards, StnPlotSolution draws the fields of X (colour maps in 2D,
   middle slices in 3D, curves in 1D). Collective; rank 0 draws. */
typedef struct _n_StnHistory *StnHistory;
PetscErrorCode StnRecordConvergence(SNES snes, StnHistory *history);
/* A picture that could not be written at png (a full disk, an unwritable path) leaves png as it
   was; failure (rank 0) says so, in a sentence for an error; else it is "". */
PetscErrorCode StnPlotConvergence(SNES snes, StnHistory history, const char *program, const char *png, char *failure, size_t len);
PetscErrorCode StnPlotSolution(SNES snes, Vec X, const char *program, const char *png, char *failure, size_t len);
/* The fields of X with remark after the title's grid size (", t = 0.5 (step 50)"); quiet: no
   line saying it was drawn. *outcome (may be NULL; rank 0): 0 drawn, 1 gnuplot is not
   installed, 2 it failed (a note said so), 3 png could not be written (failure says why). */
PetscErrorCode StnPlotState(Vec X, const char *program, const char *remark, const char *png, PetscBool quiet, int *outcome, char *failure, size_t len);
/* Step k of n went from t[k] to t[k] + dt[k]: the step sizes against the time, under title.
   Rank 0 (the caller's history is the same on every rank). */
PetscErrorCode StnPlotSteps(PetscInt n, const PetscReal t[], const PetscReal dt[], const char *program, const char *title, const char *png, char *failure, size_t len);
/* ---- output files, whole or not at all (stnoutput.c) ---- */

/* A file being written: into path, a temporary file beside target (or, for a device or a FIFO,
   name itself), renamed over target by StnOutputCommit. Rank-local; 0 or -1 with errno. */
typedef struct {
  char      name[PETSC_MAX_PATH_LEN];   /* the file named */
  char      target[PETSC_MAX_PATH_LEN]; /* the file replaced: name, or the file a link names */
  char      path[PETSC_MAX_PATH_LEN];   /* where to write; the extension of name kept */
  PetscBool direct;                     /* a device or a FIFO: written through */
  unsigned  mode;                       /* the mode target gets */
} StnOutput;
int  StnOutputBegin(const char *name, StnOutput *o);
int  StnOutputCommit(StnOutput *o); /* flushed to the disk, then renamed; removed when that fails */
void StnOutputAbort(StnOutput *o);  /* removes the temporary file */
/* Copies the file from to name, whole or not at all. */
int StnOutputCopy(const char *from, const char *name);
/* Whether name can be written (a temporary file beside it can be made); why, when not. */
int StnOutputCheck(const char *name, char *why, size_t len);
/* Before the solve: every non-empty names[i] (given with options[i]) can be written, or an error
   that names it. Ignores SIGXFSZ, so that a file size limit fails a write instead of killing the
   program in the middle of a file. Collective. */
PetscErrorCode StnOutputCheckAll(const char *const options[], const char *const names[], PetscInt n);
/* Writes x (on its DMDA, with its coordinates) to name with PETSc's VTK viewer, whole or not at
   all; failure: "" or the sentence saying why nothing was written. Collective. */
PetscErrorCode StnWriteVTK(Vec x, const char *name, char *failure, size_t len);
/* Before DMSetUp: every direction has min_points (2 * stencil width + 1), and the MPI ranks
   split the grid into blocks that hold the stencil width (DMSetUp's rule), else an error saying
   which option and how many ranks fit, naming stn. Collective. */
PetscErrorCode StnAppCheckGrid(DM da, PetscInt min_points, const char *stn);
/* After the options: -stn_output ends in .vts, and every output's path can be written. */
PetscErrorCode StnAppCheckOutputs(StnApp *app);

/* StnRecordConvergence's Krylov monitor: it stores the norm it is given and touches no vector,
   so KSPSTNGMRES keeps its restarts on the device with it (stngmres.c, host_only_tests). */
PetscErrorCode StnKrylovHistoryMonitor(KSP ksp, PetscInt its, PetscReal rnorm, void *ctx);

#endif
