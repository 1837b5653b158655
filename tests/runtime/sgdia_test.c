static char help[] = "Unit tests of the SG-DIA matrix (runtime/sgdia.c) against PETSc's AIJ.\n"
                     "Options: -case_filter STRING runs only the cases whose name contains STRING.\n\n";

/* tests/runtime/sgdia_test.c: the SG-DIA matrix against an independent AIJ reference.

   Each case builds a DMDA (1D, 2D or 3D; dof 1, 2 or 4; star or box stencil of width 1 or 2;
   with or without periodic directions) and fills, with the same random values, an SG-DIA
   matrix (through MatSGDIAGetArray and the layout formula of sgdia.h) and a reference AIJ
   matrix from DMCreateMatrix (through MatSetValuesStencil, which knows nothing of SG-DIA).
   Entries whose neighbour lies outside the domain are absent from AIJ and NaN in SG-DIA, which
   must never read them (a stray read shows as NaN); the diagonal blocks are made diagonally
   dominant so that they are invertible. Then it compares, with relative norms on random data
   (tolerance 1e-13):

     MatMult, MatMultAdd (also in place), MatGetDiagonal, MatInvertBlockDiagonal,
     MatConvert to AIJ (initial and reuse), MatSGDIACopyToAIJ, MatDuplicate, MatCopy,
     MatScale + MatShift, MatZeroRows,
     GMRES with PCPBJACOBI and PCJACOBI (same iteration count, same solution to 1e-10),
     MatZeroEntries (the product becomes exactly zero), and MatView (runs, to /dev/null).

   One line per case: "sgdia: 2d dof=2 star w=1 periodic-y np=2: ok (rel err 1.2e-16)".
   A last case checks that misuse gives errors. Exits 1 if any case fails. */
#include "sgdia.h"
#include <petscksp.h>
#include <math.h>

#define TOL 1e-13

typedef struct {
  PetscInt        dim, dof, width;
  DMDAStencilType st;
  const char     *periodic; /* directions that wrap, "" for none */
} Case;

/* The outcome of one case: the worst relative error and the first check that failed. */
typedef struct {
  PetscReal worst;
  char      failed[256];
} Result;

static void note(Result *res, const char *what, PetscReal err)
{
  if (!(err <= res->worst)) res->worst = err;
  if (!(err <= TOL) && !res->failed[0]) PetscSNPrintf(res->failed, sizeof res->failed, "%s: rel err %.2e", what, (double)err);
}

static void fail(Result *res, const char *what)
{
  if (!res->failed[0]) PetscSNPrintf(res->failed, sizeof res->failed, "%s", what);
}

static PetscBool wraps(const Case *c, PetscInt d)
{
  return (PetscBool)(strchr(c->periodic, "xyz"[d]) != NULL);
}

static PetscErrorCode case_name(const Case *c, PetscMPIInt size, char *buf, size_t len)
{
  PetscFunctionBeginUser;
  PetscCall(PetscSNPrintf(buf, len, "%" PetscInt_FMT "d dof=%" PetscInt_FMT " %s w=%" PetscInt_FMT " %s%s np=%d", c->dim, c->dof, c->st == DMDA_STENCIL_STAR ? "star" : "box", c->width, c->periodic[0] ? "periodic-" : "nonperiodic", c->periodic, (int)size));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---------------------------------------------------------------------------------------------
   Grid, stencil and values
   --------------------------------------------------------------------------------------------- */

static PetscErrorCode create_grid(const Case *c, DM *da)
{
  const PetscInt n[3][3] = {{41, 1, 1}, {17, 13, 1}, {9, 8, 7}};
  const PetscInt *m = n[c->dim - 1];
  DMBoundaryType  bt[3];

  PetscFunctionBeginUser;
  for (PetscInt d = 0; d < 3; d++) bt[d] = wraps(c, d) ? DM_BOUNDARY_PERIODIC : DM_BOUNDARY_NONE;
  if (c->dim == 1) PetscCall(DMDACreate1d(PETSC_COMM_WORLD, bt[0], m[0], c->dof, c->width, NULL, da));
  if (c->dim == 2) PetscCall(DMDACreate2d(PETSC_COMM_WORLD, bt[0], bt[1], c->st, m[0], m[1], PETSC_DECIDE, PETSC_DECIDE, c->dof, c->width, NULL, NULL, da));
  if (c->dim == 3) PetscCall(DMDACreate3d(PETSC_COMM_WORLD, bt[0], bt[1], bt[2], c->st, m[0], m[1], m[2], PETSC_DECIDE, PETSC_DECIDE, PETSC_DECIDE, c->dof, c->width, NULL, NULL, NULL, da));
  PetscCall(DMSetUp(*da));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The offsets of a star or box stencil, sorted with dk slowest and di fastest. */
static void stencil_offsets(const Case *c, PetscInt *n, PetscInt off[])
{
  const PetscInt w = c->width, wy = c->dim > 1 ? w : 0, wz = c->dim > 2 ? w : 0;

  *n = 0;
  for (PetscInt dk = -wz; dk <= wz; dk++)
    for (PetscInt dj = -wy; dj <= wy; dj++)
      for (PetscInt di = -w; di <= w; di++) {
        if (c->st == DMDA_STENCIL_STAR && (di != 0) + (dj != 0) + (dk != 0) > 1) continue;
        off[3 * *n] = di, off[3 * *n + 1] = dj, off[3 * *n + 2] = dk;
        (*n)++;
      }
}

/* Whether grid point (i,j,k) + offset o exists, worked out from the case alone. */
static PetscBool neighbour_exists(const Case *c, const DMDALocalInfo *info, PetscInt i, PetscInt j, PetscInt k, const PetscInt o[3])
{
  const PetscInt q[3] = {i + o[0], j + o[1], k + o[2]}, size[3] = {info->mx, info->my, info->mz};

  for (PetscInt d = 0; d < c->dim; d++)
    if (!wraps(c, d) && (q[d] < 0 || q[d] >= size[d])) return PETSC_FALSE;
  return PETSC_TRUE;
}

/* The same random values into A (SG-DIA, by the layout formula) and R (AIJ, by stencil). */
static PetscErrorCode fill(const Case *c, DM da, PetscInt nsten, const PetscInt off[], PetscRandom rnd, Mat A, Mat R)
{
  DMDALocalInfo info;
  PetscScalar  *values, *vals;
  PetscInt      dof = c->dof, nrows, ncol;
  MatStencil   *rows, *cols;

  PetscFunctionBeginUser;
  PetscCall(DMDAGetLocalInfo(da, &info));
  nrows = info.xm * info.ym * info.zm * dof;
  PetscCall(PetscMalloc3(dof, &rows, nsten * dof, &cols, dof * nsten * dof, &vals));
  PetscCall(MatSGDIAGetArray(A, &values));
  for (PetscInt k = info.zs; k < info.zs + info.zm; k++)
    for (PetscInt j = info.ys; j < info.ys + info.ym; j++)
      for (PetscInt i = info.xs; i < info.xs + info.xm; i++) {
        const PetscInt p = ((k - info.zs) * info.ym + (j - info.ys)) * info.xm + (i - info.xs);
        PetscInt       used = 0;

        for (PetscInt s = 0; s < nsten; s++)
          if (neighbour_exists(c, &info, i, j, k, off + 3 * s)) used++;
        ncol = used * dof;
        used = 0;
        for (PetscInt s = 0; s < nsten; s++) {
          const PetscInt *o      = off + 3 * s;
          const PetscBool exists = neighbour_exists(c, &info, i, j, k, o), center = (PetscBool)(!o[0] && !o[1] && !o[2]);
          for (PetscInt cc = 0; cc < dof; cc++) {
            for (PetscInt r = 0; r < dof; r++) {
              PetscReal v = NAN; /* never read: a NaN here would show in every comparison */
              if (exists) PetscCall(PetscRandomGetValueReal(rnd, &v));
              if (center && cc == r) v = (PetscReal)(nsten * dof + 1) + v; /* diagonally dominant */
              values[(s * dof + cc) * nrows + p * dof + r] = v;
              if (exists) vals[r * ncol + used * dof + cc] = v;
            }
            if (exists) {
              cols[used * dof + cc].i = i + o[0], cols[used * dof + cc].j = j + o[1], cols[used * dof + cc].k = k + o[2], cols[used * dof + cc].c = cc;
            }
          }
          if (exists) used++;
        }
        for (PetscInt r = 0; r < dof; r++) rows[r].i = i, rows[r].j = j, rows[r].k = k, rows[r].c = r;
        PetscCall(MatSetValuesStencil(R, dof, rows, ncol, cols, vals, INSERT_VALUES));
      }
  PetscCall(MatSGDIARestoreArray(A, &values));
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyBegin(R, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(R, MAT_FINAL_ASSEMBLY));
  PetscCall(PetscFree3(rows, cols, vals));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---------------------------------------------------------------------------------------------
   Comparisons
   --------------------------------------------------------------------------------------------- */

/* ||y - yref|| / ||yref||; a zero reference counts as a failure (never compare on zeros). */
static PetscErrorCode vec_err(Vec y, Vec yref, PetscReal *err)
{
  Vec       d;
  PetscReal nd, nref;

  PetscFunctionBeginUser;
  PetscCall(VecDuplicate(y, &d));
  PetscCall(VecWAXPY(d, -1.0, yref, y));
  PetscCall(VecNorm(d, NORM_2, &nd));
  PetscCall(VecNorm(yref, NORM_2, &nref));
  *err = nref > 0 ? nd / nref : PETSC_MAX_REAL;
  PetscCall(VecDestroy(&d));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ||X - R||_F / ||R||_F for two AIJ matrices with the DMDA's nonzero pattern. */
static PetscErrorCode mat_err(Mat X, Mat R, PetscReal *err)
{
  Mat       D;
  PetscReal nd, nref;

  PetscFunctionBeginUser;
  PetscCall(MatDuplicate(X, MAT_COPY_VALUES, &D));
  PetscCall(MatAXPY(D, -1.0, R, SAME_NONZERO_PATTERN));
  PetscCall(MatNorm(D, NORM_FROBENIUS, &nd));
  PetscCall(MatNorm(R, NORM_FROBENIUS, &nref));
  *err = nref > 0 ? nd / nref : PETSC_MAX_REAL;
  PetscCall(MatDestroy(&D));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* y = A x against y = R x, and the two forms of MatMultAdd. */
static PetscErrorCode check_products(Mat A, Mat R, PetscRandom rnd, const char *what, Result *res)
{
  Vec       x, y, yref, z;
  PetscReal err;
  char      label[64];

  PetscFunctionBeginUser;
  PetscCall(MatCreateVecs(R, &x, &yref));
  PetscCall(VecDuplicate(yref, &y));
  PetscCall(VecDuplicate(yref, &z));
  PetscCall(VecSetRandom(x, rnd));
  PetscCall(VecSetRandom(z, rnd));

  PetscCall(MatMult(A, x, y));
  PetscCall(MatMult(R, x, yref));
  PetscCall(vec_err(y, yref, &err));
  PetscCall(PetscSNPrintf(label, sizeof label, "MatMult%s", what));
  note(res, label, err);

  PetscCall(MatMultAdd(A, x, z, y));
  PetscCall(MatMultAdd(R, x, z, yref));
  PetscCall(vec_err(y, yref, &err));
  PetscCall(PetscSNPrintf(label, sizeof label, "MatMultAdd%s", what));
  note(res, label, err);

  PetscCall(VecCopy(z, y));
  PetscCall(MatMultAdd(A, x, y, y));
  PetscCall(vec_err(y, yref, &err));
  PetscCall(PetscSNPrintf(label, sizeof label, "MatMultAdd in place%s", what));
  note(res, label, err);

  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  PetscCall(VecDestroy(&yref));
  PetscCall(VecDestroy(&z));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode check_diagonals(Mat A, Mat R, Result *res)
{
  Vec                d, dref;
  const PetscScalar *inv, *invref;
  PetscInt           n, bs;
  PetscReal          err, local[2] = {0, 0}, global[2];

  PetscFunctionBeginUser;
  PetscCall(MatCreateVecs(R, &d, &dref));
  PetscCall(MatGetDiagonal(A, d));
  PetscCall(MatGetDiagonal(R, dref));
  PetscCall(vec_err(d, dref, &err));
  note(res, "MatGetDiagonal", err);

  PetscCall(MatGetLocalSize(R, &n, NULL));
  PetscCall(MatGetBlockSize(R, &bs));
  PetscCall(MatInvertBlockDiagonal(A, &inv));
  PetscCall(MatInvertBlockDiagonal(R, &invref));
  for (PetscInt e = 0; e < n * bs; e++) {
    local[0] += PetscRealPart(PetscConj(inv[e] - invref[e]) * (inv[e] - invref[e]));
    local[1] += PetscRealPart(PetscConj(invref[e]) * invref[e]);
  }
  PetscCall(MPIU_Allreduce(local, global, 2, MPIU_REAL, MPIU_SUM, PETSC_COMM_WORLD));
  note(res, "MatInvertBlockDiagonal", global[1] > 0 ? PetscSqrtReal(global[0] / global[1]) : PETSC_MAX_REAL);
  PetscCall(VecDestroy(&d));
  PetscCall(VecDestroy(&dref));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode check_conversions(DM da, Mat A, Mat R, Result *res)
{
  Mat       B, C;
  PetscReal err;

  PetscFunctionBeginUser;
  PetscCall(MatConvert(A, MATAIJ, MAT_INITIAL_MATRIX, &B));
  PetscCall(mat_err(B, R, &err));
  note(res, "MatConvert", err);
  PetscCall(MatZeroEntries(B));
  PetscCall(MatConvert(A, MATAIJ, MAT_REUSE_MATRIX, &B));
  PetscCall(mat_err(B, R, &err));
  note(res, "MatConvert reuse", err);
  PetscCall(DMCreateMatrix(da, &C));
  PetscCall(MatSGDIACopyToAIJ(A, C));
  PetscCall(mat_err(C, R, &err));
  note(res, "MatSGDIACopyToAIJ", err);
  PetscCall(MatDestroy(&B));
  PetscCall(MatDestroy(&C));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* GMRES with preconditioner pc on A and on R: same iteration count, same solution. */
static PetscErrorCode solve(Mat M, PCType pctype, Vec b, Vec x, PetscInt *its, KSPConvergedReason *reason)
{
  KSP ksp;
  PC  pc;

  PetscFunctionBeginUser;
  PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
  PetscCall(KSPSetOperators(ksp, M, M));
  PetscCall(KSPSetType(ksp, KSPGMRES));
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PCSetType(pc, pctype));
  PetscCall(KSPSetTolerances(ksp, 1e-10, 1e-50, 1e5, 500));
  PetscCall(KSPSetOptionsPrefix(ksp, "t_"));
  PetscCall(KSPSetFromOptions(ksp));
  PetscCall(VecSet(x, 0.0));
  PetscCall(KSPSolve(ksp, b, x));
  PetscCall(KSPGetIterationNumber(ksp, its));
  PetscCall(KSPGetConvergedReason(ksp, reason));
  PetscCall(KSPDestroy(&ksp));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode check_solves(Mat A, Mat R, PetscRandom rnd, Result *res)
{
  const PCType       pcs[] = {PCPBJACOBI, PCJACOBI};
  Vec                b, x, xref;
  PetscInt           its, itsref;
  KSPConvergedReason reason, reasonref;
  PetscReal          err;
  char               what[128];

  PetscFunctionBeginUser;
  PetscCall(MatCreateVecs(R, &x, &b));
  PetscCall(VecDuplicate(x, &xref));
  PetscCall(VecSetRandom(b, rnd));
  for (size_t t = 0; t < sizeof pcs / sizeof pcs[0]; t++) {
    PetscCall(solve(A, pcs[t], b, x, &its, &reason));
    PetscCall(solve(R, pcs[t], b, xref, &itsref, &reasonref));
    if (reason <= 0 || reasonref <= 0 || its != itsref) {
      PetscCall(PetscSNPrintf(what, sizeof what, "GMRES+%s: %" PetscInt_FMT " iterations (reason %d) against AIJ's %" PetscInt_FMT " (reason %d)", pcs[t], its, (int)reason, itsref, (int)reasonref));
      fail(res, what);
    }
    PetscCall(vec_err(x, xref, &err));
    /* Both solves stop at a relative residual of 1e-10: compare the solutions to that, not 1e-13. */
    if (!(err <= 1e-10)) {
      PetscCall(PetscSNPrintf(what, sizeof what, "GMRES+%s solution: rel err %.2e", pcs[t], (double)err));
      fail(res, what);
    }
  }
  PetscCall(VecDestroy(&b));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&xref));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* MatZeroRows of every third owned row, diag 2, on both matrices: the same products, and the
   same right-hand sides (b = 2 x on those rows). */
static PetscErrorCode check_zero_rows(Mat A, Mat R, PetscRandom rnd, Result *res)
{
  PetscInt  rstart, rend, n = 0, *rows;
  Vec       x, b, bR;
  PetscReal err, nb;

  PetscFunctionBeginUser;
  PetscCall(MatGetOwnershipRange(A, &rstart, &rend));
  PetscCall(PetscMalloc1(rend - rstart, &rows));
  for (PetscInt r = rstart; r < rend; r += 3) rows[n++] = r;
  PetscCall(MatCreateVecs(A, &x, &b));
  PetscCall(VecSetRandom(x, rnd));
  PetscCall(VecSetRandom(b, rnd));
  PetscCall(VecDuplicate(b, &bR));
  PetscCall(VecCopy(b, bR));
  PetscCall(MatZeroRows(A, n, rows, 2.0, x, b));
  PetscCall(MatSetOption(R, MAT_KEEP_NONZERO_PATTERN, PETSC_TRUE));
  PetscCall(MatZeroRows(R, n, rows, 2.0, x, bR));
  PetscCall(check_products(A, R, rnd, " after MatZeroRows", res));
  PetscCall(VecAXPY(bR, -1.0, b));
  PetscCall(VecNorm(bR, NORM_2, &err));
  PetscCall(VecNorm(b, NORM_2, &nb));
  note(res, "MatZeroRows's right-hand side", err / nb);
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&b));
  PetscCall(VecDestroy(&bR));
  PetscCall(PetscFree(rows));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* MatDuplicate and MatCopy, then MatScale and MatShift applied to both matrices. */
static PetscErrorCode check_duplicate_scale_shift(Mat A, Mat R, PetscRandom rnd, Result *res)
{
  Mat D, Rd;

  PetscFunctionBeginUser;
  PetscCall(MatDuplicate(A, MAT_COPY_VALUES, &D));
  PetscCall(check_products(D, R, rnd, " after MatDuplicate", res));
  PetscCall(MatDestroy(&D));
  PetscCall(MatDuplicate(A, MAT_DO_NOT_COPY_VALUES, &D));
  PetscCall(MatCopy(A, D, SAME_NONZERO_PATTERN));
  PetscCall(check_products(D, R, rnd, " after MatCopy", res));
  PetscCall(MatDuplicate(R, MAT_COPY_VALUES, &Rd));
  PetscCall(MatScale(D, -0.5));
  PetscCall(MatShift(D, 3.0));
  PetscCall(MatScale(Rd, -0.5));
  PetscCall(MatShift(Rd, 3.0));
  PetscCall(check_products(D, Rd, rnd, " after MatScale+MatShift", res));
  PetscCall(check_diagonals(D, Rd, res));
  PetscCall(check_zero_rows(D, Rd, rnd, res));
  PetscCall(MatDestroy(&D));
  PetscCall(MatDestroy(&Rd));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The viewers run (to /dev/null): the layout for ASCII info; the entries (through AIJ) too when
   there are few of them, since printing is slow. */
static PetscErrorCode check_view(Mat A)
{
  PetscViewer       v;
  PetscViewerFormat formats[] = {PETSC_VIEWER_ASCII_INFO, PETSC_VIEWER_ASCII_INFO_DETAIL, PETSC_VIEWER_DEFAULT};
  PetscInt          M, nsten, dof;
  size_t            nformats = 3;

  PetscFunctionBeginUser;
  PetscCall(MatGetSize(A, &M, NULL));
  PetscCall(MatSGDIAGetLayout(A, &nsten, NULL, &dof, NULL));
  if (M * nsten * dof > 2000) nformats = 2;
  PetscCall(PetscViewerASCIIOpen(PETSC_COMM_WORLD, "/dev/null", &v));
  for (size_t f = 0; f < nformats; f++) {
    PetscCall(PetscViewerPushFormat(v, formats[f]));
    PetscCall(MatView(A, v));
    PetscCall(PetscViewerPopFormat(v));
  }
  PetscCall(PetscViewerDestroy(&v));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode check_zero(Mat A, PetscRandom rnd, Result *res)
{
  Vec       x, y;
  PetscReal ny;

  PetscFunctionBeginUser;
  PetscCall(MatCreateVecs(A, &x, &y));
  PetscCall(VecSetRandom(x, rnd));
  PetscCall(MatZeroEntries(A));
  PetscCall(MatMult(A, x, y));
  PetscCall(VecNorm(y, NORM_2, &ny));
  if (ny != 0.0) fail(res, "MatZeroEntries: the product is not zero");
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---------------------------------------------------------------------------------------------
   Cases
   --------------------------------------------------------------------------------------------- */

static PetscErrorCode run_case(const Case *c, PetscRandom rnd, Result *res)
{
  DM       da;
  Mat      A, R;
  PetscInt nsten, off[3 * 125];

  PetscFunctionBeginUser;
  res->worst     = 0;
  res->failed[0] = 0;
  PetscCall(create_grid(c, &da));
  stencil_offsets(c, &nsten, off);
  PetscCall(MatCreateSGDIA(da, nsten, off, &A));
  PetscCall(DMCreateMatrix(da, &R));
  PetscCall(fill(c, da, nsten, off, rnd, A, R));

  PetscCall(check_products(A, R, rnd, "", res));
  PetscCall(check_diagonals(A, R, res));
  PetscCall(check_conversions(da, A, R, res));
  PetscCall(check_solves(A, R, rnd, res));
  PetscCall(check_duplicate_scale_shift(A, R, rnd, res));
  PetscCall(check_view(A));
  PetscCall(check_zero(A, rnd, res));

  PetscCall(MatDestroy(&A));
  PetscCall(MatDestroy(&R));
  PetscCall(DMDestroy(&da));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Misuse gives an error, not a wrong answer. Errors are returned, not printed. */
static PetscErrorCode run_errors(Result *res)
{
  DM             star, ghosted;
  Mat            A;
  const PetscInt box[3 * 2] = {0, 0, 0, 1, 1, 0}, far[3] = {2, 0, 0}, center[3] = {0, 0, 0};
  const PetscScalar *inv;
  PetscErrorCode ierr;

  PetscFunctionBeginUser;
  res->worst     = 0;
  res->failed[0] = 0;
  PetscCall(DMDACreate2d(PETSC_COMM_WORLD, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DMDA_STENCIL_STAR, 8, 8, PETSC_DECIDE, PETSC_DECIDE, 2, 1, NULL, NULL, &star));
  PetscCall(DMSetUp(star));
  PetscCall(DMDACreate1d(PETSC_COMM_WORLD, DM_BOUNDARY_GHOSTED, 16, 1, 1, NULL, &ghosted));
  PetscCall(DMSetUp(ghosted));

  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  ierr = MatCreateSGDIA(star, 2, box, &A);
  if (!ierr) fail(res, "a diagonal offset on a star DMDA was accepted");
  ierr = MatCreateSGDIA(star, 1, far, &A);
  if (!ierr) fail(res, "an offset beyond the DMDA stencil width was accepted");
  ierr = MatCreateSGDIA(ghosted, 1, center, &A);
  if (!ierr) fail(res, "DM_BOUNDARY_GHOSTED was accepted");
  PetscCall(PetscPopErrorHandler());

  PetscCall(MatCreateSGDIA(star, 1, center, &A)); /* all blocks zero: singular */
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  ierr = MatInvertBlockDiagonal(A, &inv);
  if (ierr != PETSC_ERR_MAT_LU_ZRPVT) fail(res, "a singular diagonal block was inverted");
  ierr = MatZeroRowsColumns(A, 0, NULL, 1.0, NULL, NULL);
  if (!ierr) fail(res, "MatZeroRowsColumns was accepted");
  PetscCall(PetscPopErrorHandler());
  PetscCall(MatDestroy(&A));
  PetscCall(DMDestroy(&star));
  PetscCall(DMDestroy(&ghosted));
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  const PetscInt  dofs[] = {1, 2, 4};
  const char     *wrap[3][3] = {{"", "x", NULL}, {"", "y", "xy"}, {"", "xz", NULL}};
  PetscRandom     rnd;
  PetscMPIInt     size;
  PetscInt        failures = 0;
  char            filter[64] = "", name[128];
  Result          res;

  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-case_filter", filter, sizeof filter, NULL));
  PetscCall(PetscRandomCreate(PETSC_COMM_WORLD, &rnd));
  PetscCall(PetscRandomSetInterval(rnd, -1.0, 1.0));
  PetscCall(PetscRandomSetSeed(rnd, 20240611));
  PetscCall(PetscRandomSeed(rnd));

  for (PetscInt dim = 1; dim <= 3; dim++)
    for (size_t f = 0; f < 3; f++)
      for (PetscInt box = 0; box < 2; box++)
        for (PetscInt width = 1; width <= 2; width++)
          for (PetscInt pw = 0; pw < 3 && wrap[dim - 1][pw]; pw++) {
            const Case c = {dim, dofs[f], width, box ? DMDA_STENCIL_BOX : DMDA_STENCIL_STAR, wrap[dim - 1][pw]};
            if (dim == 1 && box) continue; /* in 1D a box stencil is a star stencil */
            PetscCall(case_name(&c, size, name, sizeof name));
            if (filter[0] && !strstr(name, filter)) continue;
            PetscCall(run_case(&c, rnd, &res));
            if (res.failed[0]) {
              failures++;
              PetscCall(PetscPrintf(PETSC_COMM_WORLD, "sgdia: %s: FAIL (%s)\n", name, res.failed));
            } else PetscCall(PetscPrintf(PETSC_COMM_WORLD, "sgdia: %s: ok (rel err %.1e)\n", name, (double)res.worst));
          }

  if (!filter[0] || strstr("errors", filter)) {
    PetscCall(run_errors(&res));
    if (res.failed[0]) failures++;
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "sgdia: misuse gives errors np=%d: %s%s%s\n", (int)size, res.failed[0] ? "FAIL (" : "ok", res.failed, res.failed[0] ? ")" : ""));
  }
  PetscCall(PetscRandomDestroy(&rnd));
  PetscCall(PetscFinalize());
  return failures ? 1 : 0;
}
