/*
** stnts.c: the invariant part of a time-dependent program (stnts.h): its
** defaults, the time stepping with its report, and the output of the state
** at the end (the states over time and the step sizes: stnseries.c).
*/
#include "stnrt.h"

PetscErrorCode StnTSSetUp(StnApp *app)
{
  PetscFunctionBeginUser;
  app->time_dependent = PETSC_TRUE;
  PetscCheck(!app->matfree, PETSC_COMM_WORLD, PETSC_ERR_SUP,
             "-stn_operator matfree multiplies by the Jacobian without storing it, but %s is time-dependent and has no such product for TS's shifted Jacobian "
             "(shift * dF/d(dt u) + dF/du): leave -stn_operator at auto or give matrix",
             app->program);
  PetscCheck(!app->gpu || !app->approximate, PETSC_COMM_WORLD, PETSC_ERR_SUP,
             "%s is time-dependent and has an approximate jacobian block: on the GPU its exact operator would need the product without the matrix, which TS's "
             "shifted Jacobian does not have; run it on CPUs (-stn_device cpu)",
             app->program);
  app->operator_auto = PETSC_FALSE; /* the stored shifted Jacobian is the operator */
  PetscFunctionReturn(PETSC_SUCCESS);
}

#if defined(PETSC_HAVE_CUDA)
/* A GPU twin and its context, as DMTS keeps it (every grid of a hierarchy shares it). */
typedef struct {
  StnTSIFunctionLocalVecFn   *ifunction;
  StnTSIJacobianLocalVecFn   *ijacobian;
  StnTSRHSFunctionLocalVecFn *rhsfunction;
  void                       *user;
} LocalVec;

static PetscErrorCode local_vec_destroy(void **ctx)
{
  PetscFunctionBeginUser;
  PetscCall(PetscFree(*ctx));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The ghosted local state of X on the TS's grid (TS hands a coarser grid of multigrid to it). */
static PetscErrorCode local_state(TS ts, Vec X, DM *da, DMDALocalInfo *info, Vec *Xl)
{
  PetscFunctionBeginUser;
  PetscCall(TSGetDM(ts, da));
  PetscCall(DMDAGetLocalInfo(*da, info));
  PetscCall(DMGetLocalVector(*da, Xl));
  PetscCall(DMGlobalToLocalBegin(*da, X, INSERT_VALUES, *Xl));
  PetscCall(DMGlobalToLocalEnd(*da, X, INSERT_VALUES, *Xl));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode ifunction_local_vec(TS ts, PetscReal t, Vec X, Vec Xdot, Vec F, void *ctx)
{
  LocalVec     *lv = (LocalVec *)ctx;
  DM            da;
  DMDALocalInfo info;
  Vec           Xl;

  PetscFunctionBeginUser;
  PetscCall(local_state(ts, X, &da, &info, &Xl));
  PetscCall(lv->ifunction(&info, t, Xl, Xdot, F, lv->user));
  PetscCall(DMRestoreLocalVector(da, &Xl));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode ijacobian_local_vec(TS ts, PetscReal t, Vec X, Vec Xdot, PetscReal shift, Mat J, Mat P, void *ctx)
{
  LocalVec     *lv = (LocalVec *)ctx;
  DM            da;
  DMDALocalInfo info;
  Vec           Xl;

  PetscFunctionBeginUser;
  PetscCall(local_state(ts, X, &da, &info, &Xl));
  PetscCall(lv->ijacobian(&info, t, Xl, Xdot, shift, J, P, lv->user));
  PetscCall(DMRestoreLocalVector(da, &Xl));
  if (J != P) { /* an operator of its own (-snes_mf_operator's takes its base point here), as PETSc's DMDA wrapper does */
    PetscCall(MatAssemblyBegin(J, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(J, MAT_FINAL_ASSEMBLY));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode rhsfunction_local_vec(TS ts, PetscReal t, Vec X, Vec G, void *ctx)
{
  LocalVec     *lv = (LocalVec *)ctx;
  DM            da;
  DMDALocalInfo info;
  Vec           Xl;

  PetscFunctionBeginUser;
  PetscCall(local_state(ts, X, &da, &info, &Xl));
  PetscCall(lv->rhsfunction(&info, t, Xl, G, lv->user));
  PetscCall(DMRestoreLocalVector(da, &Xl));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A copy of twin in memory the DM's DMTS frees (local_vec_destroy). */
static PetscErrorCode local_vec_new(LocalVec twin, LocalVec **lv)
{
  PetscFunctionBeginUser;
  PetscCall(PetscNew(lv));
  **lv = twin;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode StnTSSetIFunctionLocalVec(DM da, StnTSIFunctionLocalVecFn *fn, void *user)
{
  LocalVec *lv;

  PetscFunctionBeginUser;
  PetscCall(local_vec_new((LocalVec){.ifunction = fn, .user = user}, &lv));
  PetscCall(DMTSSetIFunction(da, ifunction_local_vec, lv));
  PetscCall(DMTSSetIFunctionContextDestroy(da, local_vec_destroy));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode StnTSSetIJacobianLocalVec(DM da, StnTSIJacobianLocalVecFn *fn, void *user)
{
  LocalVec *lv;

  PetscFunctionBeginUser;
  PetscCall(local_vec_new((LocalVec){.ijacobian = fn, .user = user}, &lv));
  PetscCall(DMTSSetIJacobian(da, ijacobian_local_vec, lv));
  PetscCall(DMTSSetIJacobianContextDestroy(da, local_vec_destroy));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode StnTSSetRHSFunctionLocalVec(DM da, StnTSRHSFunctionLocalVecFn *fn, void *user)
{
  LocalVec *lv;

  PetscFunctionBeginUser;
  PetscCall(local_vec_new((LocalVec){.rhsfunction = fn, .user = user}, &lv));
  PetscCall(DMTSSetRHSFunction(da, rhsfunction_local_vec, lv));
  PetscCall(DMTSSetRHSFunctionContextDestroy(da, local_vec_destroy));
  PetscFunctionReturn(PETSC_SUCCESS);
}
#endif

PetscErrorCode StnTSExplicitMethod(TS ts, PetscBool *explicit_method)
{
  PetscFunctionBeginUser;
  PetscCall(PetscObjectTypeCompareAny((PetscObject)ts, explicit_method, TSEULER, TSRK, TSSSP, TSGLEE, ""));
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

PetscErrorCode StnAppSolveTS(StnApp *app, TS ts, Vec X, TSConvergedReason *reason)
{
  PetscLogStage       stage;
  SNES                snes;
  SNESConvergedReason sreason;
  TSType              type;
  PetscInt            steps;
  PetscReal           t, dt;
  PetscInt            newton, krylov;
  TSAdapt             adapt;
  PetscBool           fixed; /* fixed steps: TS does not shrink a step that fails */

  PetscFunctionBeginUser;
  PetscCheck(!app->convergence_png[0], PETSC_COMM_WORLD, PETSC_ERR_SUP,
             "-stn_plot_convergence draws the residual norms of one Newton solve, but %s steps in time (a Newton solve per step): use -ts_monitor and -snes_monitor", app->program);
  PetscCall(PetscObjectSetName((PetscObject)X, "solution"));
#if defined(PETSC_HAVE_CUDA)
  if (app->gpu) { /* the initial condition to the GPU now: inside TSSolve only the saved states leave it */
    const PetscScalar *x;

    PetscCall(VecCUDAGetArrayRead(X, &x));
    PetscCall(VecCUDARestoreArrayRead(X, &x));
  }
#endif
  PetscCall(StnSeriesBegin(app, ts)); /* -stn_output_series, -stn_plot_frames, -stn_plot_steps */
  PetscCall(PetscLogStageRegister("Solve", &stage)); /* -log_view shows the time stepping on its own */
  PetscCall(PetscLogStagePush(stage));
  PetscCall(TSSolve(ts, X));
  PetscCall(PetscLogStagePop());
  PetscCall(TSGetConvergedReason(ts, reason));
  PetscCall(TSGetStepNumber(ts, &steps));
  PetscCall(TSGetTime(ts, &t));
  PetscCall(TSGetTimeStep(ts, &dt));
  PetscCall(TSGetType(ts, &type));
  PetscCall(TSGetSNESIterations(ts, &newton)); /* of every stage of every step */
  PetscCall(TSGetKSPIterations(ts, &krylov));
  if (*reason > 0) {
    PetscReal norm;

    PetscCall(VecNorm(X, NORM_2, &norm)); /* an explicit method's steps solve nothing that could fail */
    if (PetscIsInfOrNanReal(norm)) {
      *reason = TS_DIVERGED_STEP_REJECTED;
      PetscCall(PetscPrintf(PETSC_COMM_WORLD,
                            "%s: the state at t = %g after %" PetscInt_FMT " %s steps is not finite (NaN or Inf): the steps are too large for the method's "
                            "stability, or the equations blow up; try a smaller -ts_dt, or -ts_adapt_type basic\n",
                            app->program, (double)t, steps, type));
      PetscFunctionReturn(PETSC_SUCCESS);
    }
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: integrated to t = %g in %" PetscInt_FMT " %s steps, %" PetscInt_FMT " Newton and %" PetscInt_FMT " Krylov iterations (%s)\n",
                          app->program, (double)t, steps, type, newton, krylov, TSConvergedReasons[*reason]));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(TSGetSNES(ts, &snes));
  PetscCall(SNESGetConvergedReason(snes, &sreason));
  PetscCall(TSGetAdapt(ts, &adapt));
  PetscCall(PetscObjectTypeCompare((PetscObject)adapt, TSADAPTNONE, &fixed));
  if (*reason == TS_DIVERGED_NONLINEAR_SOLVE)
    PetscCall(PetscPrintf(PETSC_COMM_WORLD,
                          "%s: the time stepping failed in step %" PetscInt_FMT ", from t = %g with dt = %g: the Newton solve did not converge: %s (%s); %s\n",
                          app->program, steps + 1, (double)t, (double)dt, StnSNESReasonInWords(sreason), SNESConvergedReasons[sreason],
                          fixed ? "try a smaller -ts_dt, or -ts_adapt_type basic to let TS shrink the step"
                                : "let TS retry the step with a smaller one (-ts_max_snes_failures -1), or cap the steps it takes (-ts_adapt_dt_max)"));
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
