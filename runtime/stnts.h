/*
** stnts.h: what a time-dependent program (a .stn whose residuals take dt(u))
** adds to stnapp.h: its residual is TS's IFunction F(t, u, u_t) and its
** Jacobian TS's IJacobian shift * dF/du_t + dF/du (with explicit(...) terms,
** F(t, u, u_t) = G(t, u): the explicit terms are TS's RHSFunction G), registered through the
** DMDA-local interface (DMDATSSetIFunctionLocal) and, on the GPU, as their
** CUDA twins (StnTSSetIFunctionLocalVec); the Newton-Krylov solve of each
** implicit step is the TS's SNES, set up by StnAppSetUpSolver and
** StnAppSetUpJacobian as a steady program's (SG-DIA, ILU on an AIJ copy on
** CPUs, stngmres and Jacobi on the GPU, ...).
*/
#ifndef STNTS_H
#define STNTS_H

#include <petscts.h>

#include "stnapp.h"

/* After StnAppSetFromOptions and main's settings: marks app time-dependent and refuses what such a
   program cannot do (-stn_operator matfree; an approximate jacobian block on the GPU): TS's shifted
   Jacobian has no product without the matrix. */
PetscErrorCode StnTSSetUp(StnApp *app);
#if defined(PETSC_HAVE_CUDA)
/* The GPU twins of DMDATSSetIFunctionLocal and DMDATSSetIJacobianLocal (PETSc has them for SNES
   only: DMDASNESSetFunctionLocalVec): fn gets the grid's DMDALocalInfo, X the ghosted local state
   and Xdot the global time derivative, CUDA vectors. Set on da's DMTS, so that every grid of a
   multigrid hierarchy has them; they take precedence over the DMDA-local ones. */
typedef PetscErrorCode StnTSIFunctionLocalVecFn(DMDALocalInfo *info, PetscReal t, Vec X, Vec Xdot, Vec F, void *user);
typedef PetscErrorCode StnTSIJacobianLocalVecFn(DMDALocalInfo *info, PetscReal t, Vec X, Vec Xdot, PetscReal shift, Mat J, Mat P, void *user);
PetscErrorCode StnTSSetIFunctionLocalVec(DM da, StnTSIFunctionLocalVecFn *fn, void *user);
PetscErrorCode StnTSSetIJacobianLocalVec(DM da, StnTSIJacobianLocalVecFn *fn, void *user);
/* The same for TS's RHSFunction G(t, u) of a program with explicit(...) terms (DMTSSetRHSFunction). */
typedef PetscErrorCode StnTSRHSFunctionLocalVecFn(DMDALocalInfo *info, PetscReal t, Vec X, Vec G, void *user);
PetscErrorCode StnTSSetRHSFunctionLocalVec(DM da, StnTSRHSFunctionLocalVecFn *fn, void *user);
#endif
/* Whether ts's type is an explicit method (euler, rk, ssp, glee), which PETSc gives an RHSFunction only:
   a program u_t = G registers its IFunction u_t for the other methods alone. */
PetscErrorCode StnTSExplicitMethod(TS ts, PetscBool *explicit_method);
/* The defaults options override, those of PETSc's TS tutorial ex13: backward Euler from t = 0
   to t = 1 in steps of 0.01, the last step past the end rather than shortened. */
PetscErrorCode StnTSSetDefaults(TS ts);
/* Integrates from X (the initial condition) in a log stage of its own ("Solve") and prints how it
   ended: the time reached, the steps and the Newton and Krylov iterations, or at which step and
   time it failed and why (the SNES's reason in words). *reason is TS's. */
PetscErrorCode StnAppSolveTS(StnApp *app, TS ts, Vec X, TSConvergedReason *reason);
/* Writes -stn_output (VTK) and -stn_plot_solution of the state X at the end (or where the time
   stepping failed, saying so). */
PetscErrorCode StnAppWriteOutputTS(StnApp *app, TS ts, Vec X, TSConvergedReason reason);

/* ---- the state over time and the step sizes (stnseries.c) ---- */

/* Before TSSolve, where -stn_output_series, -stn_plot_frames or -stn_plot_steps is given: checks
   the schedule options and the paths (making the directories) and sets the TS monitor that
   saves the states and records the steps. Collective. */
PetscErrorCode StnSeriesBegin(StnApp *app, TS ts);
/* After TSSolve: the final state X saved where the schedule skipped it, a line per output, the
   step-size picture; a frame or picture that could not be written is an error. Collective. */
PetscErrorCode StnSeriesEnd(StnApp *app, TS ts, Vec X);
PetscErrorCode StnSeriesDestroy(StnSeries *series);
/* In a steady program's solve: those options (and -stn_output_every, -stn_output_dt) are
   refused in a sentence. */
PetscErrorCode StnSeriesRefuseSteady(StnApp *app);

#endif
