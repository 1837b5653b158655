/*
** report.c: the last words of a generated program. PETSc's converged
** reasons are terse (DIVERGED_LINE_SEARCH); a user wants to know what
** happened and what to try. Only reasons present in both PETSc 3.18 and
** 3.24 are named here; any other falls back to PETSc's own name.
*/
#include "stnrt.h"

/* What the nonlinear solver is called in a sentence: "Newton" for PETSc's Newton methods, else
   the method -snes_type chose. */
static const char *method_name(SNES snes)
{
  static const struct {
    const char *type, *name;
  } names[] = {
    {SNESNEWTONLS, "Newton"},         {SNESNEWTONTR, "trust-region Newton"}, {SNESNGMRES, "nonlinear GMRES"},
    {SNESNCG, "nonlinear CG"},        {SNESNGS, "nonlinear Gauss-Seidel"},     {SNESNRICHARDSON, "nonlinear Richardson"},
    {SNESQN, "quasi-Newton"},         {SNESANDERSON, "Anderson mixing"},       {SNESFAS, "FAS multigrid"},
    {SNESCOMPOSITE, "composite"},
  };
  SNESType type;

  if (SNESGetType(snes, &type) || !type) return "the nonlinear solver";
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (!strcmp(type, names[i].type)) return names[i].name;
  return type;
}

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
    return "it did not converge within -snes_max_it iterations";
  case SNES_DIVERGED_LINE_SEARCH:
    return "the line search could not reduce the residual (try a better initial guess, a parameter closer "
           "to an easy case, or -snes_linesearch_type basic)";
  case SNES_DIVERGED_LOCAL_MIN:
    return "it reached a local minimum of the residual norm that is not a solution";
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
  const char         *words, *method;
  PetscBool           ksponly;

  PetscFunctionBeginUser;
  PetscCall(SNESGetConvergedReason(snes, &reason));
  PetscCall(SNESGetIterationNumber(snes, &its));
  PetscCall(SNESGetFunctionNorm(snes, &fnorm));
  if (fnorm == 0 || PetscIsInfOrNanReal(fnorm)) { /* not computed by the method (ksponly), or lost: the residual itself */
    Vec X, F;

    PetscCall(SNESGetSolution(snes, &X));
    PetscCall(SNESGetFunction(snes, &F, NULL, NULL));
    if (X && F) {
      PetscCall(SNESComputeFunction(snes, X, F));
      PetscCall(VecNorm(F, NORM_2, &fnorm));
    }
  }
  method = method_name(snes);
  PetscCall(PetscObjectTypeCompare((PetscObject)snes, SNESKSPONLY, &ksponly));
  if (ksponly && reason > 0) { /* one Newton step, no test of the residual: say what it is */
    PetscCall(PetscPrintf(PetscObjectComm((PetscObject)snes), "%s: one linear solve done (-snes_type ksponly), residual norm %g: the equations hold only if they are linear (%s)\n",
                          program, (double)fnorm, SNESConvergedReasons[reason]));
  } else if (reason > 0) {
    PetscCall(PetscPrintf(PetscObjectComm((PetscObject)snes), "%s: solved in %" PetscInt_FMT " %s iterations, residual norm %g (%s)\n",
                          program, its, method, (double)fnorm, SNESConvergedReasons[reason]));
  } else {
    words = in_words(reason);
    PetscCall(PetscPrintf(PetscObjectComm((PetscObject)snes), "%s: the solve failed after %" PetscInt_FMT " %s iterations, residual norm %g: %s (%s)\n",
                          program, its, method, (double)fnorm, words ? words : "see PETSc's documentation of SNESConvergedReason", SNESConvergedReasons[reason]));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}
