/*
** report.c: the last words of a generated program. PETSc's converged
** reasons are terse (DIVERGED_LINE_SEARCH); a user wants to know what
** happened and what to try. Only reasons present in both PETSc 3.18 and
** 3.24 are named here; any other falls back to PETSc's own name.
*/
#include "stnrt.h"

static const char *in_words(SNESConvergedReason reason)
{
  switch (reason) {
  case SNES_DIVERGED_FUNCTION_DOMAIN:
    return "the residual could not be evaluated at the new iterate (outside its domain)";
  case SNES_DIVERGED_FUNCTION_COUNT:
    return "too many residual evaluations (raise -snes_max_funcs)";
  case SNES_DIVERGED_LINEAR_SOLVE:
    return "the linear solver failed (see -ksp_converged_reason; try another -pc_type)";
  case SNES_DIVERGED_FNORM_NAN:
    return "the residual norm became NaN or infinite";
  case SNES_DIVERGED_MAX_IT:
    return "Newton's method did not converge within -snes_max_it iterations";
  case SNES_DIVERGED_LINE_SEARCH:
    return "the line search could not reduce the residual (try a better initial guess, a parameter closer "
           "to an easy case, or -snes_linesearch_type basic)";
  case SNES_DIVERGED_LOCAL_MIN:
    return "Newton's method reached a local minimum of the residual norm that is not a solution";
  case SNES_DIVERGED_DTOL:
    return "the residual grew beyond -snes_divergence_tolerance times its initial value";
  default:
    return NULL;
  }
}

PetscErrorCode StnReportSolve(SNES snes, const char *program)
{
  SNESConvergedReason reason;
  PetscInt            its;
  PetscReal           fnorm;
  const char         *words;

  PetscFunctionBeginUser;
  PetscCall(SNESGetConvergedReason(snes, &reason));
  PetscCall(SNESGetIterationNumber(snes, &its));
  PetscCall(SNESGetFunctionNorm(snes, &fnorm));
  if (reason > 0) {
    PetscCall(PetscPrintf(PetscObjectComm((PetscObject)snes), "%s: solved in %" PetscInt_FMT " Newton iterations, residual norm %g (%s)\n",
                          program, its, (double)fnorm, SNESConvergedReasons[reason]));
  } else {
    words = in_words(reason);
    PetscCall(PetscPrintf(PetscObjectComm((PetscObject)snes), "%s: the solve failed after %" PetscInt_FMT " Newton iterations, residual norm %g: %s (%s)\n",
                          program, its, (double)fnorm, words ? words : "see PETSc's documentation of SNESConvergedReason", SNESConvergedReasons[reason]));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}
