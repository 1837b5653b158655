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

const char *StnSNESReasonInWords(SNESConvergedReason reason)
{
  const char *words = in_words(reason);
  return words ? words : "see PETSc's documentation of SNESConvergedReason";
}

/* Why the linear solver failed, in words, into text: a NaN or Inf in the Jacobian, named by its
   grid point, fields and offset (the first one, from the lowest rank that holds one), or KSP's
   reason. */
static PetscErrorCode linear_failure(SNES snes, char *text, size_t size)
{
  KSP                ksp;
  KSPConvergedReason kreason;
  Mat                J, P;
  DM                 da;
  PetscBool          sgdia = PETSC_FALSE, found = PETSC_FALSE;
  PetscInt           ijk[3], r = 0, c = 0, off[3], dim = 1;
  PetscScalar        value = 0;
  PetscMPIInt        rank, nranks, mine, owner;
  MPI_Comm           comm = PetscObjectComm((PetscObject)snes);

  PetscFunctionBeginUser;
  PetscCall(SNESGetKSP(snes, &ksp));
  PetscCall(KSPGetConvergedReason(ksp, &kreason));
  PetscCall(SNESGetJacobian(snes, &J, &P, NULL, NULL));
  PetscCall(SNESGetDM(snes, &da));
  if (J) PetscCall(MatIsSGDIA(J, &sgdia));
  if (!sgdia && P) { /* the operator may be matrix-free, the SG-DIA matrix only preconditioning */
    J = P;
    PetscCall(MatIsSGDIA(J, &sgdia));
  }
  if (sgdia) PetscCall(MatSGDIAFindNonFinite(J, ijk, &r, &c, off, &value, &found));
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCallMPI(MPI_Comm_size(comm, &nranks));
  mine = found ? rank : nranks;
  PetscCallMPI(MPI_Allreduce(&mine, &owner, 1, MPI_INT, MPI_MIN, comm));
  if (owner == nranks) {
    PetscCall(PetscSNPrintf(text, size, "the linear solver failed, %s (see -ksp_converged_reason; try another -pc_type)", KSPConvergedReasons[kreason]));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (rank == owner) {
    const char *row, *col;
    char        point[64], offset[64];

    PetscCall(DMDAGetInfo(da, &dim, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
    PetscCall(DMDAGetFieldName(da, r, &row));
    PetscCall(DMDAGetFieldName(da, c, &col));
    if (dim == 1) PetscCall(PetscSNPrintf(point, sizeof point, "(%" PetscInt_FMT ")", ijk[0]));
    else if (dim == 2) PetscCall(PetscSNPrintf(point, sizeof point, "(%" PetscInt_FMT ", %" PetscInt_FMT ")", ijk[0], ijk[1]));
    else PetscCall(PetscSNPrintf(point, sizeof point, "(%" PetscInt_FMT ", %" PetscInt_FMT ", %" PetscInt_FMT ")", ijk[0], ijk[1], ijk[2]));
    if (dim == 1) PetscCall(PetscSNPrintf(offset, sizeof offset, "[%" PetscInt_FMT "]", off[0]));
    else if (dim == 2) PetscCall(PetscSNPrintf(offset, sizeof offset, "[%" PetscInt_FMT ",%" PetscInt_FMT "]", off[0], off[1]));
    else PetscCall(PetscSNPrintf(offset, sizeof offset, "[%" PetscInt_FMT ",%" PetscInt_FMT ",%" PetscInt_FMT "]", off[0], off[1], off[2]));
    PetscCall(PetscSNPrintf(text, size,
                            "the Jacobian is %s at grid point %s: dF_%s/d%s%s, a derivative the .stn's expressions leave undefined at this iterate "
                            "(the linear solver then fails: %s)",
                            PetscIsNanScalar(value) ? "NaN" : "infinite", point, row ? row : "?", col ? col : "?", offset, KSPConvergedReasons[kreason]));
  }
  PetscCallMPI(MPI_Bcast(text, (PetscMPIInt)size, MPI_CHAR, owner, comm));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* For a convergence on a small step: whether the residual reached the tolerances from where it
   started (the history's first norm); *start is that norm, or -1 when there is no history. */
static PetscErrorCode step_converged(SNES snes, PetscReal fnorm, PetscReal *start, PetscBool *reached)
{
  PetscReal *norms, abstol, rtol;
  PetscInt  *its, n = 0;

  PetscFunctionBeginUser;
  *start   = -1;
  *reached = PETSC_TRUE;
  PetscCall(SNESGetConvergenceHistory(snes, &norms, &its, &n));
  if (!norms || n < 1) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(SNESGetTolerances(snes, &abstol, &rtol, NULL, NULL, NULL));
  *start   = norms[0];
  *reached = (PetscBool)(fnorm <= PetscMax(abstol, rtol * norms[0]));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode StnReportSolve(SNES snes, const char *program, PetscBool *solved)
{
  SNESConvergedReason reason;
  PetscInt            its;
  PetscReal           fnorm, start;
  const char         *words, *method;
  PetscBool           ksponly, reached = PETSC_TRUE;

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
  if (reason == SNES_CONVERGED_SNORM_RELATIVE) PetscCall(step_converged(snes, fnorm, &start, &reached));
  *solved = (PetscBool)(reason > 0 && reached);
  if (!reached) {
    PetscReal rtol;

    PetscCall(SNESGetTolerances(snes, NULL, &rtol, NULL, NULL, NULL));
    PetscCall(PetscPrintf(PetscObjectComm((PetscObject)snes),
                          "%s: not solved: %s stopped after %" PetscInt_FMT " iterations because its step became small (-snes_stol), but the residual norm only fell "
                          "from %g to %g, not below -snes_rtol %g times where it started (%s)\n",
                          program, method, its, (double)start, (double)fnorm, (double)rtol, SNESConvergedReasons[reason]));
  } else if (ksponly && reason > 0) { /* one Newton step, no test of the residual: say what it is */
    PetscCall(PetscPrintf(PetscObjectComm((PetscObject)snes), "%s: one linear solve done (-snes_type ksponly), residual norm %g: the equations hold only if they are linear (%s)\n",
                          program, (double)fnorm, SNESConvergedReasons[reason]));
  } else if (reason > 0) {
    PetscCall(PetscPrintf(PetscObjectComm((PetscObject)snes), "%s: solved in %" PetscInt_FMT " %s iterations, residual norm %g (%s)\n",
                          program, its, method, (double)fnorm, SNESConvergedReasons[reason]));
  } else {
    char linear[512];

    words = in_words(reason);
    if (reason == SNES_DIVERGED_LINEAR_SOLVE) {
      PetscCall(linear_failure(snes, linear, sizeof linear));
      words = linear;
    }
    PetscCall(PetscPrintf(PetscObjectComm((PetscObject)snes), "%s: the solve failed after %" PetscInt_FMT " %s iterations, residual norm %g: %s (%s)\n",
                          program, its, method, (double)fnorm, words ? words : "see PETSc's documentation of SNESConvergedReason", SNESConvergedReasons[reason]));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}
