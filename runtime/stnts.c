/*
** stnts.c: the invariant part of a time-dependent program (stnts.h): its
** defaults, the time stepping with its report, and the output of the state
** at the end (the states over time and the step sizes: stnseries.c).
*/
#include "stnrt.h"

PetscErrorCode StnTSDeviceDefault(const char *program)
{
  char      device[16] = "";
  PetscBool given;

  PetscFunctionBeginUser;
  PetscCall(PetscOptionsGetString(NULL, NULL, "-stn_device", device, sizeof device, &given));
  PetscCheck(!given || strcmp(device, "gpu"), PETSC_COMM_WORLD, PETSC_ERR_SUP,
             "%s is time-dependent (its residuals take dt(...)): such programs run on CPUs for now; run it without -stn_device gpu", program);
  if (!given) PetscCall(PetscOptionsSetValue(NULL, "-stn_device", "cpu"));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode StnTSSetDefaults(TS ts)
{
  PetscFunctionBeginUser;
  PetscCall(TSSetType(ts, TSBEULER));
  PetscCall(TSSetTime(ts, 0.0));
  PetscCall(TSSetMaxTime(ts, 1.0));
  PetscCall(TSSetTimeStep(ts, 0.01));
  PetscCall(TSSetExactFinalTime(ts, TS_EXACTFINALTIME_STEPOVER));
  PetscCall(TSSetErrorIfStepFails(ts, PETSC_FALSE)); /* a failed step is reported by StnAppSolveTS, in words */
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Counts the Newton iterations of every step (TS's SNES restarts its count each step). */
typedef struct {
  PetscInt newton, krylov;
} Counts;

static PetscErrorCode count_step(TS ts)
{
  SNES     snes;
  Counts  *c;
  PetscInt its, lits;

  PetscFunctionBeginUser;
  PetscCall(TSGetApplicationContext(ts, &c));
  if (!c) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(TSGetSNES(ts, &snes));
  PetscCall(SNESGetIterationNumber(snes, &its));
  PetscCall(SNESGetLinearSolveIterations(snes, &lits));
  c->newton += its;
  c->krylov += lits;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode StnAppSolveTS(StnApp *app, TS ts, Vec X, TSConvergedReason *reason)
{
  PetscLogStage       stage;
  SNES                snes;
  SNESConvergedReason sreason;
  TSType              type;
  PetscInt            steps;
  PetscReal           t, dt;
  Counts              counts = {0, 0};
  void               *saved;

  PetscFunctionBeginUser;
  PetscCheck(!app->convergence_png[0], PETSC_COMM_WORLD, PETSC_ERR_SUP,
             "-stn_plot_convergence draws the residual norms of one Newton solve, but %s steps in time (a Newton solve per step): use -ts_monitor and -snes_monitor", app->program);
  PetscCall(PetscObjectSetName((PetscObject)X, "solution"));
  PetscCall(TSGetApplicationContext(ts, &saved));
  PetscCall(TSSetApplicationContext(ts, &counts));
  PetscCall(TSSetPostStep(ts, count_step));
  PetscCall(StnSeriesBegin(app, ts)); /* -stn_output_series, -stn_plot_frames, -stn_plot_steps */
  PetscCall(PetscLogStageRegister("Solve", &stage)); /* -log_view shows the time stepping on its own */
  PetscCall(PetscLogStagePush(stage));
  PetscCall(TSSolve(ts, X));
  PetscCall(PetscLogStagePop());
  PetscCall(TSSetApplicationContext(ts, saved));
  PetscCall(TSGetConvergedReason(ts, reason));
  PetscCall(TSGetStepNumber(ts, &steps));
  PetscCall(TSGetTime(ts, &t));
  PetscCall(TSGetTimeStep(ts, &dt));
  PetscCall(TSGetType(ts, &type));
  if (*reason > 0) {
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: integrated to t = %g in %" PetscInt_FMT " %s steps, %" PetscInt_FMT " Newton and %" PetscInt_FMT " Krylov iterations (%s)\n",
                          app->program, (double)t, steps, type, counts.newton, counts.krylov, TSConvergedReasons[*reason]));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(TSGetSNES(ts, &snes));
  PetscCall(SNESGetConvergedReason(snes, &sreason));
  if (*reason == TS_DIVERGED_NONLINEAR_SOLVE)
    PetscCall(PetscPrintf(PETSC_COMM_WORLD,
                          "%s: the time stepping failed in step %" PetscInt_FMT ", from t = %g with dt = %g: the Newton solve did not converge: %s (%s); "
                          "try a smaller -ts_dt, or -ts_adapt_type basic to let TS shrink the step\n",
                          app->program, steps + 1, (double)t, (double)dt, StnSNESReasonInWords(sreason), SNESConvergedReasons[sreason]));
  else
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: the time stepping failed in step %" PetscInt_FMT ", from t = %g with dt = %g (%s)\n", app->program, steps + 1,
                          (double)t, (double)dt, TSConvergedReasons[*reason]));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode StnAppWriteOutputTS(StnApp *app, TS ts, Vec X, TSConvergedReason reason)
{
  enum { LEN = PETSC_MAX_PATH_LEN + 256 };
  char failure[2][LEN] = {"", ""};

  PetscFunctionBeginUser;
  PetscCall(StnSeriesEnd(app, ts, X));
  if (app->output[0]) {
    PetscCall(StnWriteVTK(X, app->output, failure[0], LEN));
    if (!failure[0][0] && reason > 0) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "the state at the final time written to %s (open it in ParaView)\n", app->output));
    else if (!failure[0][0]) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "the state before the failed step written to %s\n", app->output));
  }
  if (app->solution_png[0]) { /* titled with the time it shows */
    PetscReal t;
    PetscInt  step;
    char      remark[128];

    PetscCall(TSGetTime(ts, &t));
    PetscCall(TSGetStepNumber(ts, &step));
    PetscCall(PetscSNPrintf(remark, sizeof remark, ", t = %g (step %" PetscInt_FMT ")%s", (double)t, step, reason > 0 ? "" : ", before the failed step"));
    PetscCall(StnPlotState(X, app->program, remark, app->solution_png, PETSC_FALSE, NULL, failure[1], LEN));
  }
  PetscCallMPI(MPI_Bcast(failure[1], LEN, MPI_CHAR, 0, PETSC_COMM_WORLD));
  PetscCheck(!failure[0][0] && !failure[1][0], PETSC_COMM_WORLD, PETSC_ERR_FILE_WRITE, "%s%s%s", failure[0], failure[0][0] && failure[1][0] ? "; " : "", failure[1]);
  PetscFunctionReturn(PETSC_SUCCESS);
}
