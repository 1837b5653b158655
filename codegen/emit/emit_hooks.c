/*
** emit_hooks.c: the user hooks of a --skeleton's NAME.c (EmitOptions.hooks),
** the place where an application's own code joins PETSc's nonlinear solver,
** written as PETSc's tutorials would: a monitor (SNESMonitorSet), a
** line-search post-check (SNESLineSearchSetPostCheck) and a convergence test
** (SNESSetConvergenceTest), each a working example function that an option
** turns on (-user_monitor, -user_postcheck, -user_field_atol), and, as a
** comment, where a nonlinear smoother goes (SNESSetNGS, SNESSetNPC).
** UserHooksSetUp attaches them; main calls it after SNESSetFromOptions.
**
** Without the options the program solves exactly as -o's does. The section
** lies between two marker lines, "/" "* ---- user hooks" and
** "/" "* ---- end of the user hooks ---- *" "/", with the call in main
** (UserHooksSetUp) the only other difference from -o's NAME.c:
** tests/skeleton/run.sh compares the two with those lines taken out.
*/
#include "emit_c.h"
#include "emit_int.h"

/* "f[k][j][i]": the point's entry of the array a. */
static void at_point(FILE *out, int dim, const char *a) {
  fputs(a, out);
  for (int d = dim - 1; d >= 0; d--) fprintf(out, "[%s]", emit_index_names[d]);
}

/* UserFieldNorms: the loops over the owned points of the DMDA, the Field struct's members. */
static void field_norms(Program *P) {
  const Model *m = P->m;
  FILE *out = P->out;
  const char *stars = m->dim == 1 ? "*" : m->dim == 2 ? "**" : "***";
  fputs("/* The 2-norm of each field's part of the residual F, summed from F's values at the\n"
        "   points this rank owns (the DMDA's local box), as Field structs, over every rank. */\n", out);
  fprintf(out, "static PetscErrorCode UserFieldNorms(SNES snes, PetscReal norm[DOF])\n{\n"
               "  DM            da;\n  DMDALocalInfo info;\n  Vec           F;\n  const Field   %sf;\n"
               "  PetscReal     sum[DOF] = {0};\n\n  PetscFunctionBeginUser;\n", stars);
  fputs("  PetscCall(SNESGetDM(snes, &da));\n  PetscCall(DMDAGetLocalInfo(da, &info));\n"
        "  PetscCall(SNESGetFunction(snes, &F, NULL, NULL));\n"
        "  PetscCall(DMDAVecGetArrayRead(da, F, &f));\n", out);
  for (int d = m->dim - 1; d >= 0; d--) {
    const char *x = emit_index_names[d], *ax = axis_names[d];
    fprintf(out, "%*sfor (PetscInt %s = info.%ss; %s < info.%ss + info.%sm; %s++)%s\n", 2 * (m->dim - d), "", x, ax, x,
            ax, ax, x, d ? "" : " {");
  }
  int in = 2 * m->dim + 2;
  for (int f = 0; f < m->nfields; f++) {
    fprintf(out, "%*ssum[%d] += PetscSqr(", in, "", f);
    at_point(out, m->dim, "f");
    fprintf(out, ".%s); /* %s */\n", P->E.field[f], m->fields[f].name);
  }
  fprintf(out, "%*s}\n", in - 2, "");
  fputs("  PetscCall(DMDAVecRestoreArrayRead(da, F, &f));\n"
        "  PetscCallMPI(MPI_Allreduce(sum, norm, DOF, MPIU_REAL, MPI_SUM, PetscObjectComm((PetscObject)snes)));\n"
        "  for (PetscInt c = 0; c < DOF; c++) norm[c] = PetscSqrtReal(norm[c]);\n"
        "  PetscFunctionReturn(PETSC_SUCCESS);\n}\n\n", out);
}

static void monitor(FILE *out) {
  fputs("/* A monitor (SNESMonitorSet), called before the first Newton iteration and after each:\n"
        "   the residual norm fnorm, then each field's (-user_monitor). ctx is main's AppCtx. */\n"
        "static PetscErrorCode UserMonitor(SNES snes, PetscInt its, PetscReal fnorm, void *ctx)\n{\n"
        "  DM          da;\n  PetscReal   norm[DOF];\n  const char *name;\n  MPI_Comm    comm = PetscObjectComm((PetscObject)snes);\n\n"
        "  PetscFunctionBeginUser;\n"
        "  PetscCall(SNESGetDM(snes, &da));\n  PetscCall(UserFieldNorms(snes, norm));\n"
        "  PetscCall(PetscPrintf(comm, \"%3\" PetscInt_FMT \" user monitor: ||F|| %.12e, by field:\", its, (double)fnorm));\n"
        "  for (PetscInt c = 0; c < DOF; c++) {\n"
        "    PetscCall(DMDAGetFieldName(da, c, &name));\n"
        "    PetscCall(PetscPrintf(comm, \" %s %.12e\", name, (double)norm[c]));\n  }\n"
        "  PetscCall(PetscPrintf(comm, \"\\n\"));\n  PetscFunctionReturn(PETSC_SUCCESS);\n}\n\n",
        out);
}

static void post_check(Program *P) {
  FILE *out = P->out;
  const char *ix = P->m->dim == 1 ? "[i]" : P->m->dim == 2 ? "[j][i]" : "[k][j][i]";
  fputs("/* A line-search post-check (SNESLineSearchSetPostCheck), called once the line search has\n"
        "   its step: X is the iterate, Y the Newton direction, W the new iterate (X - lambda Y).\n"
        "   This one reports the largest change of each field (-user_postcheck); to keep a field in\n"
        "   its range, change W and say so, with the DMDA and the Field struct as in UserFieldNorms:\n\n"
        "     Field ", out);
  fputs(P->m->dim == 1 ? "*" : P->m->dim == 2 ? "**" : "***", out);
  fprintf(out, "w;\n     PetscCall(DMDAVecGetArray(da, W, &w));\n"
               "     ... w%s.%s = PetscMax(w%s.%s, 0.0); at each owned point ...\n"
               "     PetscCall(DMDAVecRestoreArray(da, W, &w));\n     *changed_W = PETSC_TRUE;  */\n",
          ix, P->E.field[0], ix, P->E.field[0]);
  fputs("static PetscErrorCode UserPostCheck(SNESLineSearch linesearch, Vec X, Vec Y, Vec W, PetscBool *changed_Y, "
        "PetscBool *changed_W, void *ctx)\n{\n"
        "  DM          da;\n  SNES        snes;\n  PetscReal   lambda, change[DOF];\n  const char *name;\n"
        "  MPI_Comm    comm = PetscObjectComm((PetscObject)linesearch);\n\n"
        "  PetscFunctionBeginUser;\n"
        "  *changed_Y = PETSC_FALSE;\n  *changed_W = PETSC_FALSE;\n"
        "  PetscCall(SNESLineSearchGetSNES(linesearch, &snes));\n  PetscCall(SNESGetDM(snes, &da));\n"
        "  PetscCall(SNESLineSearchGetLambda(linesearch, &lambda));\n"
        "  PetscCall(VecStrideNormAll(Y, NORM_INFINITY, change)); /* the DMDA's vectors have block size DOF */\n"
        "  PetscCall(PetscPrintf(comm, \"    user post-check: step length %g, largest change:\", (double)lambda));\n"
        "  for (PetscInt c = 0; c < DOF; c++) {\n"
        "    PetscCall(DMDAGetFieldName(da, c, &name));\n"
        "    PetscCall(PetscPrintf(comm, \" %s %.6e\", name, (double)(lambda * change[c])));\n  }\n"
        "  PetscCall(PetscPrintf(comm, \"\\n\"));\n  PetscFunctionReturn(PETSC_SUCCESS);\n}\n\n",
        out);
}

static void converged(FILE *out) {
  fputs("/* A convergence test (SNESSetConvergenceTest): PETSc's own (SNESConvergedDefault, with\n"
        "   -snes_rtol, -snes_atol, ...), and besides it converged once every field's residual norm\n"
        "   is at most -user_field_atol. ctx is user_field_atol. */\n"
        "static PetscErrorCode UserConverged(SNES snes, PetscInt its, PetscReal xnorm, PetscReal snorm, PetscReal fnorm,\n"
        "                                    SNESConvergedReason *reason, void *ctx)\n{\n"
        "  PetscReal atol = *(PetscReal *)ctx, norm[DOF];\n  PetscBool all = PETSC_TRUE;\n\n"
        "  PetscFunctionBeginUser;\n"
        "  PetscCall(SNESConvergedDefault(snes, its, xnorm, snorm, fnorm, reason, NULL));\n"
        "  if (*reason != SNES_CONVERGED_ITERATING) PetscFunctionReturn(PETSC_SUCCESS);\n"
        "  PetscCall(UserFieldNorms(snes, norm));\n"
        "  for (PetscInt c = 0; c < DOF; c++)\n    if (norm[c] > atol) all = PETSC_FALSE;\n"
        "  if (all) {\n"
        "    PetscCall(PetscInfo(snes, \"every field's residual norm is at most -user_field_atol %g\\n\", (double)atol));\n"
        "    *reason = SNES_CONVERGED_FNORM_ABS;\n  }\n"
        "  PetscFunctionReturn(PETSC_SUCCESS);\n}\n\n",
        out);
}

static void set_up(FILE *out) {
  fputs("static PetscReal user_field_atol = 0.0; /* -user_field_atol: UserConverged's ctx */\n\n"
        "/* Attaches the hooks that the options ask for: main calls it after SNESSetFromOptions,\n"
        "   so they come on top of PETSc's own (-snes_monitor, -snes_linesearch_type, ...). To\n"
        "   attach one always, drop its option; to attach your own, replace the function. */\n"
        "static PetscErrorCode UserHooksSetUp(SNES snes, AppCtx *user)\n{\n"
        "  PetscBool      monitor = PETSC_FALSE, postcheck = PETSC_FALSE;\n  SNESLineSearch linesearch;\n\n"
        "  PetscFunctionBeginUser;\n"
        "  PetscOptionsBegin(PETSC_COMM_WORLD, NULL, \"User hooks\", \"\");\n"
        "  PetscCall(PetscOptionsBool(\"-user_monitor\", \"Print each field's residual norm at every Newton iteration\", "
        "\n                             \"UserMonitor\", monitor, &monitor, NULL));\n"
        "  PetscCall(PetscOptionsBool(\"-user_postcheck\", \"Print each field's largest change at every Newton step\", "
        "\n                             \"UserPostCheck\", postcheck, &postcheck, NULL));\n"
        "  PetscCall(PetscOptionsReal(\"-user_field_atol\", \"Converged also once every field's residual norm is at most "
        "this\",\n                             \"UserConverged\", user_field_atol, &user_field_atol, NULL));\n"
        "  PetscOptionsEnd();\n"
        "  PetscCheck(user_field_atol >= 0.0, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE,\n"
        "             \"-user_field_atol %g is negative: give a norm, or 0 to leave the test out\", (double)user_field_atol);\n\n"
        "  /* a monitor */\n"
        "  if (monitor) PetscCall(SNESMonitorSet(snes, UserMonitor, user, NULL));\n"
        "  /* a line-search post-check (a pre-check goes in the same way: SNESLineSearchSetPreCheck) */\n"
        "  if (postcheck) {\n"
        "    PetscCall(SNESGetLineSearch(snes, &linesearch));\n"
        "    PetscCall(SNESLineSearchSetPostCheck(linesearch, UserPostCheck, user));\n  }\n"
        "  /* a convergence test, in place of PETSc's (UserConverged calls it) */\n"
        "  if (user_field_atol > 0.0) PetscCall(SNESSetConvergenceTest(snes, UserConverged, &user_field_atol, NULL));\n"
        "  /* a nonlinear smoother: a Gauss-Seidel sweep of yours, which -snes_type ngs runs, and FAS\n"
        "     on each grid (-snes_type fas -fas_levels_snes_type ngs). Write it,\n"
        "       static PetscErrorCode UserSmoother(SNES snes, Vec X, Vec B, void *ctx)\n"
        "     (X: the iterate, improved in place; B: the right-hand side, or NULL), then attach it\n"
        "     by taking the comment marks off the next line. (Or precondition Newton with another\n"
        "     nonlinear solver, from options alone: -npc_snes_type ngs, ...; SNESGetNPC.) */\n"
        "  /* PetscCall(SNESSetNGS(snes, UserSmoother, user)); */\n"
        "  PetscFunctionReturn(PETSC_SUCCESS);\n}\n\n", out);
}

void emit_c_hooks(Program *P) {
  FILE *out = P->out;
  fputs("/* ---- user hooks: your own code in PETSc's nonlinear solver --------------------------\n"
        "   The place to attach a monitor, a line-search check, a convergence test or a nonlinear\n"
        "   smoother. Each function below is a working example, off unless its option is given\n"
        "   (they are listed by -help):\n"
        "     -user_monitor          UserMonitor: each field's residual norm at every Newton iteration\n"
        "     -user_postcheck        UserPostCheck: each field's largest change at every Newton step\n"
        "     -user_field_atol TOL   UserConverged: converged also once every field's norm is <= TOL\n"
        "   UserHooksSetUp, called from main once the solver is set up, attaches them; edit the\n"
        "   functions, or attach your own there. Without these options the program solves as\n"
        "   stencilc's -o program does. */\n\n", out);
  field_norms(P);
  monitor(out);
  post_check(P);
  converged(out);
  set_up(out);
  fputs("/* ---- end of the user hooks ---- */\n\n", out);
}
