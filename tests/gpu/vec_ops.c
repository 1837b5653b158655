/*
** tests/gpu/vec_ops.c: stencilc's GPU vector kernels against PETSc's host vectors (run on the
** device by tests/gpu/vec-tests.sh, from scripts/gpu-check.sh).
**
** Every operation VECSTNCUDA replaces (runtime/stnvec.c) is run through PETSc's public API on
** VECSTNCUDA vectors and on VECSEQ copies holding the same random-ish values, for n = 0, 1, 31,
** 1000, 1000003 (-sizes) and, for MDot/MTDot/MAXPY/MAXPBY, nv = 1, 2, 5, 16, 30, 33, 40 (-nvs;
** 33 and 40 take two passes of the 32-vector kernels), twice: with the inputs last written on
** the host (VecGetArray ... Restore, so the operation must copy them to the device first) and
** last written on the device. The results are compared:
**   - reductions: |ours - PETSc's| <= 1e-12 * sum_i |term_i| (the dot product of |x| and |y|,
**     the norm itself): a relative error scaled by the size of the terms, not by the result,
**     which cancellation can make arbitrarily small; both sides sum in different orders;
**   - updates: every entry |ours - PETSc's| <= 1e-14 * sum of |terms| of that entry (fma or
**     not, and up to 41 terms in MAXPY, a few ulps); NaN where PETSc has NaN, nowhere else.
** Each case also checks that our kernel ran (StnVecCalls(op) went up: the proof it was ours,
** and not PETSc's that the vector would otherwise have), and that the result stayed on the
** device (the output's offload mask is GPU: no copy back to the host behind the caller).
**
** Corner cases: VecAXPBY and VecMAXPBY with beta = 0 and VecAXPBYPCZ with gamma = 0 on an
** output full of NaN (not read), VecWAXPY and VecPointwiseMult outputs full of NaN, VecWAXPY
** with x == y, VecScale by 0 of a NaN, VecAXPY/VecAYPX/VecAXPBY with x == y (PETSc turns them
** into VecScale: ours), VecPointwiseMult with every aliasing, VecMDot with x among the y,
** the max-norm (and the 1- and 2-norms) of a vector with a NaN (or Inf) at the start, middle
** and end, VecNorm of every NormType, VecDotBegin/VecNormBegin/VecMDotBegin (split reductions:
** the *_local operations), VecDuplicate and VecDuplicateVecs keep our operations, the ways a
** vector becomes VECSTNCUDA (VecSetType before or after VecSetSizes, -vec_type stncuda,
** converting a VECSEQ or a VECCUDA holding values), VecBindToCPU (PETSc's host operations while
** bound, ours after unbinding), operands of another type (a VECSEQ x in VecAXPY, ...: handed to
** PETSc's own operation, which copes with them).
**
** PETSc's VecWAXPY refuses w == x or w == y; the kernels promise aliasing works ("any array may
** be another one", stnvec_cuda.h), so w == x is run through the vector's operation directly
** and through the kernel API, with the other aliasings of the kernel API. Finally every kernel
** runs with many launch shapes (StnVecRunShape: threads x elements per thread x blocks per
** SM, what the tuner may choose) on the tuner's test vectors, whose results must equal the
** CPU reference (stnvec_ref.h) exactly, for n = 1, 31, 1000, 100003 (-shape_sizes; 90 shapes,
** or 12 with -few_shapes). Options for shorter runs: -sizes, -nvs, -shape_sizes (lists),
** -shapes 0 (no shape sweep), -vectors 0 (the kernel API only).
**
** Prints a line per check: "gpu: vec: NAME (N cases): ok" or "FAIL: gpu: vec: NAME: ...",
** with the first few failing cases in detail. Exit status 1 if any check failed.
*/
static const char help[] = "stencilc's GPU vector kernels (VECSTNCUDA) against VECSEQ through PETSc's API.\n";

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <petscdevice_cuda.h>
#include <petscvec.h>
#include <petsc/private/vecimpl.h> /* offloadmask, ops, boundtocpu: residency and direct calls */

#include "sgdia_cuda.h"
#include "stnvec.h"
#include "stnvec_cuda.h"
#include "stnvec_ref.h"

/* ---------------------------------------------------------------------------------------------
   Bookkeeping: named checks, each with its cases.
   --------------------------------------------------------------------------------------------- */

typedef struct {
  char name[96];
  long cases, fails;
} Check;

static Check checks[160];
static int   nchecks;
static char  where[200]; /* the case at hand, for the details */

static Check *check_of(const char *name)
{
  for (int i = 0; i < nchecks; i++)
    if (strcmp(checks[i].name, name) == 0) return &checks[i];
  if (nchecks == (int)(sizeof checks / sizeof checks[0])) return &checks[nchecks - 1];
  snprintf(checks[nchecks].name, sizeof checks[nchecks].name, "%s", name);
  return &checks[nchecks++];
}

static void record(const char *name, PetscBool ok, const char *fmt, ...)
{
  Check *c = check_of(name);
  c->cases++;
  if (ok) return;
  if (++c->fails <= 4) {
    va_list ap;
    printf("  detail: %s: %s: ", name, where);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    fflush(stdout);
  }
}

static void set_where(const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(where, sizeof where, fmt, ap);
  va_end(ap);
}

/* ---------------------------------------------------------------------------------------------
   Data
   --------------------------------------------------------------------------------------------- */

static double value(unsigned seed, PetscInt i)
{
  unsigned long long z = (unsigned long long)seed * 0x9E3779B97F4A7C15ull + (unsigned long long)i * 0xBF58476D1CE4E5B9ull + 1;
  z                    = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z                    = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  const double u = (double)(z >> 11) * 0x1.0p-53 * 2.0 - 1.0; /* [-1, 1) */
  return u * (1.0 + (double)(seed % 7));                        /* vectors of different sizes */
}

enum { HOST, DEVICE };
static const char *state_name[] = {"inputs last written on the host", "inputs last written on the device"};

/* g (ours) and h (VECSEQ) get the same values; g's are left on the host or moved to the device. */
static PetscErrorCode fill(Vec g, Vec h, unsigned seed, int state)
{
  PetscScalar *a, *b;
  PetscInt     n;

  PetscFunctionBegin;
  PetscCall(VecGetLocalSize(h, &n));
  PetscCall(VecGetArrayWrite(h, &a));
  for (PetscInt i = 0; i < n; i++) a[i] = value(seed, i);
  PetscCall(VecGetArrayWrite(g, &b));
  for (PetscInt i = 0; i < n; i++) b[i] = a[i];
  PetscCall(VecRestoreArrayWrite(g, &b));
  PetscCall(VecRestoreArrayWrite(h, &a));
  if (state == DEVICE) { /* read-write access on the device: the host copy is then out of date */
    PetscScalar *d;
    PetscCall(VecCUDAGetArray(g, &d));
    PetscCall(VecCUDARestoreArray(g, &d));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode fill_const(Vec g, Vec h, PetscScalar c, int state)
{
  PetscScalar *a;
  PetscInt     n;

  PetscFunctionBegin;
  PetscCall(VecGetLocalSize(h, &n));
  PetscCall(VecGetArrayWrite(h, &a));
  for (PetscInt i = 0; i < n; i++) a[i] = c;
  PetscCall(VecRestoreArrayWrite(h, &a));
  PetscCall(VecGetArrayWrite(g, &a));
  for (PetscInt i = 0; i < n; i++) a[i] = c;
  PetscCall(VecRestoreArrayWrite(g, &a));
  if (state == DEVICE) {
    PetscScalar *d;
    PetscCall(VecCUDAGetArray(g, &d));
    PetscCall(VecCUDARestoreArray(g, &d));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* One entry of both, written on the host (then moved to the device if state says so). */
static PetscErrorCode poke(Vec g, Vec h, PetscInt i, PetscScalar c, int state)
{
  PetscScalar *a;

  PetscFunctionBegin;
  PetscCall(VecGetArray(h, &a));
  a[i] = c;
  PetscCall(VecRestoreArray(h, &a));
  PetscCall(VecGetArray(g, &a));
  a[i] = c;
  PetscCall(VecRestoreArray(g, &a));
  if (state == DEVICE) {
    PetscScalar *d;
    PetscCall(VecCUDAGetArray(g, &d));
    PetscCall(VecCUDARestoreArray(g, &d));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* s[i] = sum_k |c[k] v[k][i]|, the size of the terms of an update (v: host vectors, before it). */
static PetscErrorCode term_scale(PetscInt m, const PetscScalar c[], const Vec v[], PetscReal **s)
{
  PetscInt n;

  PetscFunctionBegin;
  PetscCall(VecGetLocalSize(v[0], &n));
  PetscCall(PetscCalloc1(n + 1, s));
  for (PetscInt k = 0; k < m; k++) {
    const PetscScalar *a;
    if (c[k] == 0.0) continue; /* a term that is not there (its vector may hold NaN: not read) */
    PetscCall(VecGetArrayRead(v[k], &a));
    for (PetscInt i = 0; i < n; i++) (*s)[i] += PetscAbsScalar(c[k] * a[i]);
    PetscCall(VecRestoreArrayRead(v[k], &a));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* sum_i |x_i y_i| */
static PetscErrorCode abs_dot(Vec x, Vec y, PetscReal *s)
{
  const PetscScalar *a, *b;
  PetscInt           n;
  long double        t = 0;

  PetscFunctionBegin;
  PetscCall(VecGetLocalSize(x, &n));
  PetscCall(VecGetArrayRead(x, &a));
  PetscCall(VecGetArrayRead(y, &b));
  for (PetscInt i = 0; i < n; i++) t += fabsl((long double)a[i] * b[i]);
  PetscCall(VecRestoreArrayRead(y, &b));
  PetscCall(VecRestoreArrayRead(x, &a));
  *s = (PetscReal)t;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscBool close_to(PetscReal got, PetscReal want, PetscReal tol)
{
  if (PetscIsNanReal(want)) return PetscIsNanReal(got) ? PETSC_TRUE : PETSC_FALSE;
  if (PetscIsInfReal(want)) return got == want ? PETSC_TRUE : PETSC_FALSE;
  return got == want || PetscAbsReal(got - want) <= tol ? PETSC_TRUE : PETSC_FALSE;
}

/* A reduction's result against PETSc's. */
static void compare_scalar(const char *name, const char *what, PetscReal got, PetscReal want, PetscReal scale)
{
  const PetscReal tol = 1e-12 * scale;
  record(name, close_to(got, want, tol), "%s: ours %.17g, PETSc's %.17g (difference %.3g, allowed %.3g)", what, (double)got, (double)want,
         (double)(got - want), (double)tol);
}

/* An update's result (g, ours) against PETSc's (h), entry by entry; scale: the terms' sizes. */
static PetscErrorCode compare_vec(const char *name, Vec g, Vec h, const PetscReal *scale, PetscReal rtol)
{
  const PetscScalar *a, *b;
  PetscInt           n, bad = -1, nbad = 0;

  PetscFunctionBegin;
  PetscCall(VecGetLocalSize(h, &n));
  PetscCall(VecGetArrayRead(g, &a));
  PetscCall(VecGetArrayRead(h, &b));
  for (PetscInt i = 0; i < n; i++)
    if (!close_to(a[i], b[i], rtol * (scale ? scale[i] : 0))) {
      if (bad < 0) bad = i;
      nbad++;
    }
  if (bad >= 0)
    record(name, PETSC_FALSE, "%" PetscInt_FMT " of %" PetscInt_FMT " entries differ; entry %" PetscInt_FMT ": ours %.17g, PETSc's %.17g (allowed %.3g)", nbad, n,
           bad, (double)a[bad], (double)b[bad], (double)(rtol * (scale ? scale[bad] : 0)));
  else record(name, PETSC_TRUE, "");
  PetscCall(VecRestoreArrayRead(h, &b));
  PetscCall(VecRestoreArrayRead(g, &a));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* No NaN in g (an output whose old NaN values must not have been read). */
static PetscErrorCode no_nan(const char *name, Vec g)
{
  const PetscScalar *a;
  PetscInt           n, nan = 0;

  PetscFunctionBegin;
  PetscCall(VecGetLocalSize(g, &n));
  PetscCall(VecGetArrayRead(g, &a));
  for (PetscInt i = 0; i < n; i++) nan += PetscIsNanScalar(a[i]) ? 1 : 0;
  PetscCall(VecRestoreArrayRead(g, &a));
  record(name, nan == 0 ? PETSC_TRUE : PETSC_FALSE, "%" PetscInt_FMT " NaN entries: the old values of the output were read", nan);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Our kernel op ran (its counter went up by at least one since before), or did not (ran = 0). */
static void expect_calls(const char *name, const char *op, PetscInt before, PetscBool ran)
{
  const PetscInt now = StnVecCalls(op);
  if (ran) record(name, now > before ? PETSC_TRUE : PETSC_FALSE, "StnVecCalls(\"%s\") stayed %" PetscInt_FMT ": our kernel did not run", op, now);
  else record(name, now == before ? PETSC_TRUE : PETSC_FALSE, "StnVecCalls(\"%s\") went from %" PetscInt_FMT " to %" PetscInt_FMT ": ours ran where PETSc's should have", op, before, now);
}

/* The output stayed on the device (n > 0): PETSc's offload mask says the valid copy is there only. */
static void expect_on_device(const char *name, Vec g)
{
  if (g->map->n == 0) return;
  record(name, g->offloadmask == PETSC_OFFLOAD_GPU ? PETSC_TRUE : PETSC_FALSE, "offload mask %s after the operation, expected GPU",
         PetscOffloadMaskToString(g->offloadmask));
}

/* ---------------------------------------------------------------------------------------------
   The vectors of one size
   --------------------------------------------------------------------------------------------- */

#define NBASE 4
typedef struct {
  PetscInt n, nvmax;
  Vec      g[NBASE], h[NBASE]; /* ours, PETSc's host copies */
  Vec     *gv, *hv;            /* nvmax of each, the many-vector operations' operands */
} Set;

static PetscErrorCode set_create(PetscInt n, PetscInt nvmax, Set *S)
{
  PetscFunctionBegin;
  S->n     = n;
  S->nvmax = nvmax;
  PetscCall(VecCreate(PETSC_COMM_SELF, &S->g[0]));
  PetscCall(VecSetSizes(S->g[0], n, n));
  PetscCall(VecSetType(S->g[0], VECSTNCUDA));
  PetscCall(VecCreateSeq(PETSC_COMM_SELF, n, &S->h[0]));
  for (int k = 1; k < NBASE; k++) {
    PetscCall(VecDuplicate(S->g[0], &S->g[k]));
    PetscCall(VecDuplicate(S->h[0], &S->h[k]));
  }
  PetscCall(VecDuplicateVecs(S->g[0], nvmax, &S->gv));
  PetscCall(VecDuplicateVecs(S->h[0], nvmax, &S->hv));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode set_destroy(Set *S)
{
  PetscFunctionBegin;
  for (int k = 0; k < NBASE; k++) {
    PetscCall(VecDestroy(&S->g[k]));
    PetscCall(VecDestroy(&S->h[k]));
  }
  PetscCall(VecDestroyVecs(S->nvmax, &S->gv));
  PetscCall(VecDestroyVecs(S->nvmax, &S->hv));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode fill_many(Set *S, PetscInt nv, unsigned seed, int state)
{
  PetscFunctionBegin;
  for (PetscInt j = 0; j < nv; j++) PetscCall(fill(S->gv[j], S->hv[j], seed + 100 + (unsigned)j, state));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---------------------------------------------------------------------------------------------
   Reductions
   --------------------------------------------------------------------------------------------- */

static PetscErrorCode test_dot(Set *S, int st)
{
  Vec        *g = S->g, *h = S->h;
  PetscScalar a, b;
  PetscReal   sc;
  PetscInt    c;

  PetscFunctionBegin;
  PetscCall(fill(g[0], h[0], 1, st));
  PetscCall(fill(g[1], h[1], 2, st));
  PetscCall(abs_dot(h[0], h[1], &sc));
  c = StnVecCalls("dot");
  PetscCall(VecDot(g[0], g[1], &a));
  PetscCall(VecDot(h[0], h[1], &b));
  expect_calls("VecDot", "dot", c, PETSC_TRUE);
  compare_scalar("VecDot", "x.y", a, b, sc);

  c = StnVecCalls("dot");
  PetscCall(VecTDot(g[1], g[0], &a));
  PetscCall(VecTDot(h[1], h[0], &b));
  expect_calls("VecTDot", "dot", c, PETSC_TRUE);
  compare_scalar("VecTDot", "y^T x", a, b, sc);

  PetscCall(fill(g[2], h[2], 3, st));
  PetscCall(abs_dot(h[2], h[2], &sc));
  c = StnVecCalls("dot");
  PetscCall(VecDot(g[2], g[2], &a));
  PetscCall(VecDot(h[2], h[2], &b));
  expect_calls("VecDot x.x (aliased)", "dot", c, PETSC_TRUE);
  compare_scalar("VecDot x.x (aliased)", "x.x", a, b, sc);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode test_mdot(Set *S, int st, PetscInt nnv, const PetscInt nvs[])
{
  Vec         *g = S->g, *h = S->h;
  PetscScalar *a, *b;
  PetscReal    sc;
  char         name[64];

  PetscFunctionBegin;
  PetscCall(PetscMalloc2(S->nvmax + 2, &a, S->nvmax + 2, &b));
  for (PetscInt k = 0; k < nnv; k++) {
    const PetscInt nv = nvs[k];
    if (nv > S->nvmax) continue;
    for (int t = 0; t < 2; t++) { /* VecMDot, VecMTDot */
      PetscCall(fill(g[0], h[0], 7 + (unsigned)t, st));
      PetscCall(fill_many(S, nv, 11 * (unsigned)(k + 1), st));
      snprintf(name, sizeof name, "%s nv=%d", t ? "VecMTDot" : "VecMDot", (int)nv);
      const PetscInt c = StnVecCalls("mdot");
      if (t) {
        PetscCall(VecMTDot(g[0], nv, S->gv, a));
        PetscCall(VecMTDot(h[0], nv, S->hv, b));
      } else {
        PetscCall(VecMDot(g[0], nv, S->gv, a));
        PetscCall(VecMDot(h[0], nv, S->hv, b));
      }
      expect_calls(name, "mdot", c, PETSC_TRUE);
      for (PetscInt j = 0; j < nv; j++) {
        char what[32];
        snprintf(what, sizeof what, "result %d", (int)j);
        PetscCall(abs_dot(h[0], S->hv[j], &sc));
        compare_scalar(name, what, a[j], b[j], sc);
      }
    }
  }
  if (S->nvmax >= 2) { /* x among the y */
    Vec gy[3] = {S->gv[0], g[0], S->gv[1]}, hy[3] = {S->hv[0], h[0], S->hv[1]};
    PetscCall(fill(g[0], h[0], 9, st));
    PetscCall(fill_many(S, 2, 13, st));
    const PetscInt c = StnVecCalls("mdot");
    PetscCall(VecMDot(g[0], 3, gy, a));
    PetscCall(VecMDot(h[0], 3, hy, b));
    expect_calls("VecMDot with x among the y", "mdot", c, PETSC_TRUE);
    for (int j = 0; j < 3; j++) {
      PetscCall(abs_dot(h[0], hy[j], &sc));
      compare_scalar("VecMDot with x among the y", j == 1 ? "x.x" : "x.y", a[j], b[j], sc);
    }
  }
  PetscCall(PetscFree2(a, b));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* StnVecMDotBegin/End (stnvec_cuda.h): three MDots in flight at once in slots of their own, taken
   in the reverse order, each equal bit for bit to the synchronous StnVecMDot (the same kernel and
   shape); a slot out of range refused. */
static PetscErrorCode test_mdot_slots(Set *S, int st)
{
  const int          nv = (int)PetscMin(S->nvmax, 5), slots[3] = {1, 2, STN_VEC_SLOTS};
  const PetscScalar *x[3], *y[STN_VEC_MAX_MULTI];
  double             a[3][STN_VEC_MAX_MULTI], b[STN_VEC_MAX_MULTI];
  unsigned           seq[3];
  PetscBool          same = PETSC_TRUE;

  PetscFunctionBegin;
  for (int k = 0; k < 3; k++) PetscCall(fill(S->g[k], S->h[k], 17 + (unsigned)k, st));
  PetscCall(fill_many(S, nv, 19, st));
  for (int k = 0; k < 3; k++) PetscCall(VecCUDAGetArrayRead(S->g[k], &x[k]));
  for (int j = 0; j < nv; j++) PetscCall(VecCUDAGetArrayRead(S->gv[j], &y[j]));
  for (int k = 0; k < 3; k++) STN_CUDA_CALL(StnVecMDotBegin(x[k], nv, y, S->n, slots[k], &seq[k]));
  for (int k = 2; k >= 0; k--) STN_CUDA_CALL(StnVecMDotEnd(slots[k], seq[k], nv, a[k]));
  for (int k = 0; k < 3; k++) {
    STN_CUDA_CALL(StnVecMDot(x[k], nv, y, S->n, b));
    for (int j = 0; j < nv; j++) same = (PetscBool)(same && a[k][j] == b[j]);
  }
  record("StnVecMDotBegin/End: three in flight, as StnVecMDot", same, "a result differs from StnVecMDot's");
  record("StnVecMDotBegin: a slot out of range refused", (PetscBool)(StnVecMDotBegin(x[0], nv, y, S->n, 0, &seq[0]) != 0 && StnVecMDotBegin(x[0], nv, y, S->n, STN_VEC_SLOTS + 1, &seq[0]) != 0), "accepted");
  for (int j = 0; j < nv; j++) PetscCall(VecCUDARestoreArrayRead(S->gv[j], &y[j]));
  for (int k = 0; k < 3; k++) PetscCall(VecCUDARestoreArrayRead(S->g[k], &x[k]));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode test_norms(Set *S, int st)
{
  static const NormType types[] = {NORM_1, NORM_2, NORM_FROBENIUS, NORM_INFINITY, NORM_1_AND_2};
  Vec                  *g = S->g, *h = S->h;
  PetscReal             a[2], b[2];
  char                  name[64];

  PetscFunctionBegin;
  for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
    snprintf(name, sizeof name, "VecNorm %s", NormTypes[types[t]]);
    PetscCall(fill(g[0], h[0], 21 + (unsigned)t, st)); /* new values: no cached norm */
    const PetscInt c = StnVecCalls("norm");
    PetscCall(VecNorm(g[0], types[t], a));
    PetscCall(VecNorm(h[0], types[t], b));
    expect_calls(name, "norm", c, PETSC_TRUE);
    compare_scalar(name, types[t] == NORM_1_AND_2 ? "the 1-norm" : "the norm", a[0], b[0], b[0]);
    if (types[t] == NORM_1_AND_2) compare_scalar(name, "the 2-norm", a[1], b[1], b[1]);
  }
  /* A NaN (or an infinity) anywhere shows in the norms: at the start, the middle, the end. */
  if (S->n > 0) {
    const PetscInt at[3] = {0, S->n / 2, S->n - 1};
    for (int p = 0; p < 3; p++)
      for (int inf = 0; inf < 2; inf++)
        for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
          snprintf(name, sizeof name, "VecNorm %s of a vector with %s", NormTypes[types[t]], inf ? "an Inf" : "a NaN");
          PetscCall(fill(g[0], h[0], 31, HOST));
          PetscCall(poke(g[0], h[0], at[p], inf ? (PetscScalar)(-INFINITY) : (PetscScalar)NAN, st));
          PetscCall(VecNorm(g[0], types[t], a));
          PetscCall(VecNorm(h[0], types[t], b));
          for (int r = 0; r < (types[t] == NORM_1_AND_2 ? 2 : 1); r++) {
            const PetscBool ok = inf ? (a[r] == (PetscReal)INFINITY ? PETSC_TRUE : PETSC_FALSE) : (PetscIsNanReal(a[r]) ? PETSC_TRUE : PETSC_FALSE);
            record(name, ok, "entry %" PetscInt_FMT ": ours %g, PETSc's %g, expected %s", at[p], (double)a[r], (double)b[r], inf ? "inf" : "nan");
          }
        }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode test_dotnorm2(Set *S, int st)
{
  Vec        *g = S->g, *h = S->h;
  PetscScalar dpa, dpb;
  PetscReal   nma, nmb, sc1, sc2;

  PetscFunctionBegin;
  PetscCall(fill(g[0], h[0], 41, st));
  PetscCall(fill(g[1], h[1], 42, st));
  PetscCall(abs_dot(h[0], h[1], &sc1));
  PetscCall(abs_dot(h[1], h[1], &sc2));
  const PetscInt c = StnVecCalls("dotnorm2");
  PetscCall(VecDotNorm2(g[0], g[1], &dpa, &nma));
  PetscCall(VecDotNorm2(h[0], h[1], &dpb, &nmb));
  expect_calls("VecDotNorm2", "dotnorm2", c, PETSC_TRUE);
  compare_scalar("VecDotNorm2", "s.t", dpa, dpb, sc1);
  compare_scalar("VecDotNorm2", "t.t", nma, nmb, sc2);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* VecDotBegin/End and friends use the *_local operations (all of ours, here). */
static PetscErrorCode test_split(Set *S, int st)
{
  Vec        *g = S->g, *h = S->h;
  PetscScalar da, db, ma[5], mb[5];
  PetscReal   na, nb, sc;
  const int   nv = S->nvmax < 5 ? (int)S->nvmax : 5;

  PetscFunctionBegin;
  PetscCall(fill(g[0], h[0], 51, st));
  PetscCall(fill(g[1], h[1], 52, st));
  PetscCall(fill_many(S, nv, 53, st));
  const PetscInt cd = StnVecCalls("dot"), cn = StnVecCalls("norm"), cm = StnVecCalls("mdot");
  PetscCall(VecDotBegin(g[0], g[1], &da));
  PetscCall(VecNormBegin(g[1], NORM_2, &na));
  PetscCall(VecMDotBegin(g[0], nv, S->gv, ma));
  PetscCall(PetscCommSplitReductionBegin(PetscObjectComm((PetscObject)g[0])));
  PetscCall(VecDotEnd(g[0], g[1], &da));
  PetscCall(VecNormEnd(g[1], NORM_2, &na));
  PetscCall(VecMDotEnd(g[0], nv, S->gv, ma));
  PetscCall(VecDot(h[0], h[1], &db));
  PetscCall(VecNorm(h[1], NORM_2, &nb));
  PetscCall(VecMDot(h[0], nv, S->hv, mb));
  expect_calls("VecDotBegin/End (split)", "dot", cd, PETSC_TRUE);
  expect_calls("VecNormBegin/End (split)", "norm", cn, PETSC_TRUE);
  if (nv > 0) expect_calls("VecMDotBegin/End (split)", "mdot", cm, PETSC_TRUE);
  PetscCall(abs_dot(h[0], h[1], &sc));
  compare_scalar("VecDotBegin/End (split)", "x.y", da, db, sc);
  compare_scalar("VecNormBegin/End (split)", "||y||", na, nb, nb);
  for (int j = 0; j < nv; j++) {
    PetscCall(abs_dot(h[0], S->hv[j], &sc));
    compare_scalar("VecMDotBegin/End (split)", "x.y_j", ma[j], mb[j], sc);
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---------------------------------------------------------------------------------------------
   Updates
   --------------------------------------------------------------------------------------------- */

#define RTOL_UPDATE 1e-14

/* The common tail of an update case: ours ran, the output is on the device, and it is right. */
static PetscErrorCode updated(const char *name, const char *op, PetscInt before, Vec g, Vec h, const PetscReal *scale)
{
  PetscFunctionBegin;
  expect_calls(name, op, before, PETSC_TRUE);
  expect_on_device(name, g);
  PetscCall(compare_vec(name, g, h, scale, RTOL_UPDATE));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode test_axpy_family(Set *S, int st)
{
  Vec      *g = S->g, *h = S->h;
  PetscReal *sc;
  PetscInt  c;

  PetscFunctionBegin;
  /* VecAXPY y = y + a x */
  for (int p = 0; p < 2; p++) {
    const PetscScalar al = p ? -1.3 : 0.75, co[2] = {1.0, al};
    PetscCall(fill(g[0], h[0], 61, st));
    PetscCall(fill(g[1], h[1], 62, st));
    PetscCall(term_scale(2, co, h, &sc));
    c = StnVecCalls("axpy");
    PetscCall(VecAXPY(g[0], al, g[1]));
    PetscCall(VecAXPY(h[0], al, h[1]));
    PetscCall(updated("VecAXPY", "axpy", c, g[0], h[0], sc));
    PetscCall(PetscFree(sc));
  }
  /* VecAYPX y = x + b y; b = 0 is VecCopy */
  for (int p = 0; p < 3; p++) {
    const PetscScalar be = p == 0 ? 0.5 : p == 1 ? -2.0 : 0.0, co[2] = {be, 1.0};
    PetscCall(fill(g[0], h[0], 63, st));
    PetscCall(fill(g[1], h[1], 64, st));
    PetscCall(term_scale(2, co, h, &sc));
    c = StnVecCalls(p == 2 ? "copy" : "aypx");
    PetscCall(VecAYPX(g[0], be, g[1]));
    PetscCall(VecAYPX(h[0], be, h[1]));
    PetscCall(updated(p == 2 ? "VecAYPX with beta = 0 (VecCopy)" : "VecAYPX", p == 2 ? "copy" : "aypx", c, g[0], h[0], sc));
    PetscCall(PetscFree(sc));
  }
  /* VecAXPBY y = a x + b y */
  for (int p = 0; p < 2; p++) {
    const PetscScalar al = p ? -2.0 : 0.75, be = p ? 0.25 : -1.5, co[2] = {be, al};
    PetscCall(fill(g[0], h[0], 65, st));
    PetscCall(fill(g[1], h[1], 66, st));
    PetscCall(term_scale(2, co, h, &sc));
    c = StnVecCalls("axpby");
    PetscCall(VecAXPBY(g[0], al, be, g[1]));
    PetscCall(VecAXPBY(h[0], al, be, h[1]));
    PetscCall(updated("VecAXPBY", "axpby", c, g[0], h[0], sc));
    PetscCall(PetscFree(sc));
  }
  { /* beta = 0 on a y full of NaN: y = a x, y not read */
    const PetscScalar co[2] = {0.0, 0.75};
    PetscCall(fill_const(g[0], h[0], (PetscScalar)NAN, st));
    PetscCall(fill(g[1], h[1], 67, st));
    PetscCall(term_scale(2, co, h, &sc));
    c = StnVecCalls("axpby");
    PetscCall(VecAXPBY(g[0], 0.75, 0.0, g[1]));
    PetscCall(VecAXPBY(h[0], 0.75, 0.0, h[1]));
    PetscCall(updated("VecAXPBY with beta = 0 on a NaN y", "axpby", c, g[0], h[0], sc));
    PetscCall(no_nan("VecAXPBY with beta = 0 on a NaN y", g[0]));
    PetscCall(PetscFree(sc));
  }
  /* x == y: PETSc makes these VecScale(y, ...), which is ours too */
  {
    const PetscScalar co[1] = {1.75};
    PetscCall(fill(g[0], h[0], 68, st));
    PetscCall(term_scale(1, co, h, &sc));
    c = StnVecCalls("scale");
    PetscCall(VecAXPY(g[0], 0.75, g[0]));
    PetscCall(VecAXPY(h[0], 0.75, h[0]));
    PetscCall(updated("VecAXPY with x == y (VecScale)", "scale", c, g[0], h[0], sc));
    PetscCall(PetscFree(sc));
  }
  /* VecReciprocal x = 1/x (Jacobi's set-up), zeros kept: IEEE division, so the same bits */
  for (int p = 0; p < 2; p++) {
    const char *name = p ? "VecReciprocal of zeros" : "VecReciprocal";
    if (p) PetscCall(fill_const(g[0], h[0], 0.0, st));
    else PetscCall(fill(g[0], h[0], 72, st));
    c = StnVecCalls("reciprocal");
    PetscCall(VecReciprocal(g[0]));
    PetscCall(VecReciprocal(h[0]));
    expect_calls(name, "reciprocal", c, PETSC_TRUE);
    expect_on_device(name, g[0]);
    PetscCall(compare_vec(name, g[0], h[0], NULL, 0.0));
  }
  /* VecAXPBYPCZ z = a x + b y + c z */
  for (int p = 0; p < 3; p++) {
    const PetscScalar al = p == 1 ? 1.5 : 0.75, be = p == 1 ? 2.0 : -1.25, ga = p == 0 ? 0.5 : p == 1 ? 1.0 : 0.0;
    const PetscScalar co[3] = {ga, al, be};
    const char       *name = p == 2 ? "VecAXPBYPCZ with gamma = 0 on a NaN z" : "VecAXPBYPCZ";
    if (p == 2) PetscCall(fill_const(g[0], h[0], (PetscScalar)NAN, st));
    else PetscCall(fill(g[0], h[0], 69, st));
    PetscCall(fill(g[1], h[1], 70, st));
    PetscCall(fill(g[2], h[2], 71, st));
    PetscCall(term_scale(3, co, h, &sc));
    c = StnVecCalls("axpbypcz");
    PetscCall(VecAXPBYPCZ(g[0], al, be, ga, g[1], g[2]));
    PetscCall(VecAXPBYPCZ(h[0], al, be, ga, h[1], h[2]));
    PetscCall(updated(name, "axpbypcz", c, g[0], h[0], sc));
    if (p == 2) PetscCall(no_nan(name, g[0]));
    PetscCall(PetscFree(sc));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode test_waxpy(Set *S, int st)
{
  Vec       *g = S->g, *h = S->h;
  PetscReal *sc;
  PetscInt   c;

  PetscFunctionBegin;
  /* w = a x + y, w full of NaN (not read) */
  for (int p = 0; p < 2; p++) {
    const PetscScalar al = p ? 1.0 : -0.6, co[3] = {0.0, al, 1.0};
    PetscCall(fill_const(g[2], h[2], (PetscScalar)NAN, st));
    PetscCall(fill(g[0], h[0], 81, st));
    PetscCall(fill(g[1], h[1], 82, st));
    Vec hs[3] = {h[2], h[0], h[1]};
    PetscCall(term_scale(3, co, hs, &sc));
    c = StnVecCalls("waxpy");
    PetscCall(VecWAXPY(g[2], al, g[0], g[1]));
    PetscCall(VecWAXPY(h[2], al, h[0], h[1]));
    PetscCall(updated("VecWAXPY", "waxpy", c, g[2], h[2], sc));
    PetscCall(no_nan("VecWAXPY", g[2]));
    PetscCall(PetscFree(sc));
  }
  { /* x == y (PETSc allows it): w = -2.6 x + x, terms of size 3.6 |x| */
    const PetscScalar co[1] = {3.6};
    PetscCall(fill_const(g[2], h[2], (PetscScalar)NAN, st));
    PetscCall(fill(g[0], h[0], 83, st));
    PetscCall(term_scale(1, co, h, &sc));
    c = StnVecCalls("waxpy");
    PetscCall(VecWAXPY(g[2], -2.6, g[0], g[0]));
    PetscCall(VecWAXPY(h[2], -2.6, h[0], h[0]));
    PetscCall(updated("VecWAXPY with x == y", "waxpy", c, g[2], h[2], sc));
    PetscCall(PetscFree(sc));
  }
  { /* w == x: PETSc's VecWAXPY refuses it; our operation itself, called directly, must cope */
    const PetscScalar  al = 0.625, co[2] = {al, 1.0};
    const PetscScalar *xa, *ya;
    PetscScalar       *wa;
    PetscErrorCode     rc;
    PetscCall(fill(g[0], h[0], 84, st));
    PetscCall(fill(g[1], h[1], 85, st));
    PetscCall(term_scale(2, co, h, &sc));
    PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
    rc = VecWAXPY(g[0], al, g[0], g[1]);
    PetscCall(PetscPopErrorHandler());
    record("VecWAXPY with w == x is refused by PETSc", rc ? PETSC_TRUE : PETSC_FALSE, "VecWAXPY(w, a, w, y) returned 0");
    c = StnVecCalls("waxpy");
    PetscCall((*g[0]->ops->waxpy)(g[0], al, g[0], g[1]));
    PetscCall(PetscObjectStateIncrease((PetscObject)g[0]));
    PetscCall(VecGetArrayRead(h[0], &xa));
    PetscCall(VecGetArrayRead(h[1], &ya));
    PetscCall(VecGetArray(h[2], &wa));
    for (PetscInt i = 0; i < S->n; i++) wa[i] = al * xa[i] + ya[i];
    PetscCall(VecRestoreArray(h[2], &wa));
    PetscCall(VecRestoreArrayRead(h[1], &ya));
    PetscCall(VecRestoreArrayRead(h[0], &xa));
    PetscCall(updated("VecWAXPY operation with w == x (direct)", "waxpy", c, g[0], h[2], sc));
    PetscCall(PetscFree(sc));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode test_maxpy(Set *S, int st, PetscInt nnv, const PetscInt nvs[])
{
  Vec         *g = S->g, *h = S->h;
  PetscScalar *al;
  PetscReal   *sc;
  char         name[80];

  PetscFunctionBegin;
  PetscCall(PetscMalloc1(S->nvmax + 1, &al));
  for (PetscInt k = 0; k < nnv; k++) {
    const PetscInt nv = nvs[k];
    if (nv > S->nvmax) continue;
    for (PetscInt j = 0; j < nv; j++) al[j] = value(900 + (unsigned)k, j);
    PetscCall(fill_many(S, nv, 17 * (unsigned)(k + 1), st));
    for (int p = 0; p < 3; p++) { /* MAXPY; MAXPBY beta = -0.5; MAXPBY beta = 0 on a NaN y */
      const PetscScalar be = p == 0 ? 1.0 : p == 1 ? -0.5 : 0.0;
      if (p == 2) {
        snprintf(name, sizeof name, "VecMAXPBY nv=%d with beta = 0 on a NaN y", (int)nv);
        PetscCall(fill_const(g[0], h[0], (PetscScalar)NAN, st));
      } else {
        snprintf(name, sizeof name, "%s nv=%d", p ? "VecMAXPBY" : "VecMAXPY", (int)nv);
        PetscCall(fill(g[0], h[0], 91, st));
      }
      if (p > 0) PetscCall(fill_many(S, nv, 17 * (unsigned)(k + 1), st)); /* inputs in the state again */
      /* the scale: |beta y| + sum |a_j x_j| */
      PetscInt n = S->n;
      PetscCall(PetscCalloc1(n + 1, &sc));
      if (p < 2) {
        const PetscScalar *y;
        PetscCall(VecGetArrayRead(h[0], &y));
        for (PetscInt i = 0; i < n; i++) sc[i] = PetscAbsScalar(be * y[i]);
        PetscCall(VecRestoreArrayRead(h[0], &y));
      }
      for (PetscInt j = 0; j < nv; j++) {
        const PetscScalar *x;
        PetscCall(VecGetArrayRead(S->hv[j], &x));
        for (PetscInt i = 0; i < n; i++) sc[i] += PetscAbsScalar(al[j] * x[i]);
        PetscCall(VecRestoreArrayRead(S->hv[j], &x));
      }
      const PetscInt c = StnVecCalls("maxpy");
      if (p == 0) {
        PetscCall(VecMAXPY(g[0], nv, al, S->gv));
        PetscCall(VecMAXPY(h[0], nv, al, S->hv));
      } else {
        PetscCall(VecMAXPBY(g[0], nv, al, be, S->gv));
        PetscCall(VecMAXPBY(h[0], nv, al, be, S->hv));
      }
      PetscCall(updated(name, "maxpy", c, g[0], h[0], sc));
      if (p == 2) PetscCall(no_nan(name, g[0]));
      PetscCall(PetscFree(sc));
    }
  }
  PetscCall(PetscFree(al));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode test_scale_set_copy(Set *S, int st)
{
  Vec       *g = S->g, *h = S->h;
  PetscReal *sc;
  PetscInt   c;

  PetscFunctionBegin;
  { /* VecScale */
    const PetscScalar co[1] = {-1.7};
    PetscCall(fill(g[0], h[0], 101, st));
    PetscCall(term_scale(1, co, h, &sc));
    c = StnVecCalls("scale");
    PetscCall(VecScale(g[0], -1.7));
    PetscCall(VecScale(h[0], -1.7));
    PetscCall(updated("VecScale", "scale", c, g[0], h[0], sc));
    PetscCall(PetscFree(sc));
  }
  if (S->n > 0) { /* by 0, with a NaN in the vector: all 0 */
    PetscCall(fill(g[0], h[0], 102, HOST));
    PetscCall(poke(g[0], h[0], S->n / 2, (PetscScalar)NAN, st));
    c = StnVecCalls("scale");
    PetscCall(VecScale(g[0], 0.0));
    PetscCall(VecScale(h[0], 0.0));
    PetscCall(updated("VecScale by 0 (with a NaN)", "scale", c, g[0], h[0], NULL));
    PetscCall(no_nan("VecScale by 0 (with a NaN)", g[0]));
  }
  for (int p = 0; p < 2; p++) { /* VecSet */
    const PetscScalar a = p ? 0.0 : 0.3;
    PetscCall(fill(g[0], h[0], 103, st)); /* a known nonzero norm: VecSet(0) does run */
    c = StnVecCalls("set");
    PetscCall(VecSet(g[0], a));
    PetscCall(VecSet(h[0], a));
    PetscCall(updated(p ? "VecSet 0" : "VecSet", "set", c, g[0], h[0], NULL));
  }
  { /* VecCopy into a vector full of NaN */
    PetscCall(fill(g[0], h[0], 104, st));
    PetscCall(fill_const(g[1], h[1], (PetscScalar)NAN, st));
    c = StnVecCalls("copy");
    PetscCall(VecCopy(g[0], g[1]));
    PetscCall(VecCopy(h[0], h[1]));
    PetscCall(updated("VecCopy", "copy", c, g[1], h[1], NULL));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode test_pointwisemult(Set *S, int st)
{
  Vec       *g = S->g, *h = S->h;
  PetscReal *sc;
  /* w, x, y as indices into g/h: 3 is w full of NaN; aliasings */
  static const int cases[][3] = {{3, 0, 1}, {0, 0, 1}, {1, 0, 1}, {0, 0, 0}};
  static const char *names[]  = {"VecPointwiseMult", "VecPointwiseMult w == x", "VecPointwiseMult w == y", "VecPointwiseMult w == x == y"};

  PetscFunctionBegin;
  for (int p = 0; p < 4; p++) {
    const int w = cases[p][0], x = cases[p][1], y = cases[p][2];
    PetscCall(fill(g[0], h[0], 111, st));
    PetscCall(fill(g[1], h[1], 112, st));
    PetscCall(fill_const(g[3], h[3], (PetscScalar)NAN, st));
    { /* |x y| */
      const PetscScalar *a, *b;
      PetscCall(PetscCalloc1(S->n + 1, &sc));
      PetscCall(VecGetArrayRead(h[x], &a));
      PetscCall(VecGetArrayRead(h[y], &b));
      for (PetscInt i = 0; i < S->n; i++) sc[i] = PetscAbsScalar(a[i] * b[i]);
      PetscCall(VecRestoreArrayRead(h[y], &b));
      PetscCall(VecRestoreArrayRead(h[x], &a));
    }
    const PetscInt c = StnVecCalls("pointwisemult");
    PetscCall(VecPointwiseMult(g[w], g[x], g[y]));
    PetscCall(VecPointwiseMult(h[w], h[x], h[y]));
    PetscCall(updated(names[p], "pointwisemult", c, g[w], h[w], sc));
    PetscCall(PetscFree(sc));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Operands of another type: PETSc lets them through and its CUDA operations handle them on the
   host; ours must hand them over (not take a VECSEQ's array for a device one). */
static PetscErrorCode test_mixed(Set *S, int st)
{
  Vec        *g = S->g, *h = S->h, hx;
  PetscScalar a, b;
  PetscReal   sc;
  PetscInt    c;
  const char *name = "operands of another type (handed to PETSc)";

  PetscFunctionBegin;
  PetscCall(VecDuplicate(h[0], &hx)); /* a VECSEQ operand of g's operations */
  PetscCall(fill(g[0], h[0], 121, st));
  PetscCall(fill(hx, h[1], 122, HOST));
  c = StnVecCalls("axpy");
  PetscCall(VecAXPY(g[0], 0.5, hx));
  PetscCall(VecAXPY(h[0], 0.5, h[1]));
  expect_calls(name, "axpy", c, PETSC_FALSE);
  PetscCall(compare_vec(name, g[0], h[0], NULL, 0)); /* one rounding either way: must be equal */

  PetscCall(fill(g[0], h[0], 123, st));
  PetscCall(abs_dot(h[0], h[1], &sc));
  c = StnVecCalls("dot");
  PetscCall(VecDot(g[0], hx, &a));
  PetscCall(VecDot(h[0], h[1], &b));
  expect_calls(name, "dot", c, PETSC_FALSE);
  compare_scalar(name, "VecDot(ours, VECSEQ)", a, b, sc);

  PetscCall(fill(g[0], h[0], 124, st));
  PetscCall(fill_const(g[1], hx, (PetscScalar)NAN, st));
  c = StnVecCalls("copy");
  PetscCall(VecCopy(g[0], hx)); /* to a host vector */
  expect_calls(name, "copy", c, PETSC_FALSE);
  PetscCall(compare_vec(name, hx, h[0], NULL, 0));

  PetscCall(fill(g[0], h[0], 125, st));
  PetscCall(fill(g[1], h[1], 126, st));
  PetscCall(VecCopy(h[1], hx));
  c = StnVecCalls("pointwisemult");
  PetscCall(VecPointwiseMult(g[2], g[0], hx));
  PetscCall(VecPointwiseMult(h[2], h[0], h[1]));
  expect_calls(name, "pointwisemult", c, PETSC_FALSE);
  PetscCall(compare_vec(name, g[2], h[2], NULL, 0));

  if (S->nvmax >= 2) {
    const PetscScalar al[2] = {0.25, -0.5};
    Vec               gx[2] = {S->gv[0], hx}, hxs[2] = {S->hv[0], h[1]};
    PetscCall(fill(g[0], h[0], 127, st));
    PetscCall(fill_many(S, 1, 128, st));
    PetscCall(VecCopy(h[1], hx));
    const PetscScalar co[3] = {1.0, 0.25, 0.5};
    Vec               hs[3] = {h[0], S->hv[0], h[1]};
    PetscReal        *scv;
    PetscCall(term_scale(3, co, hs, &scv));
    c = StnVecCalls("maxpy");
    PetscCall(VecMAXPY(g[0], 2, al, gx));
    PetscCall(VecMAXPY(h[0], 2, al, hxs));
    expect_calls(name, "maxpy", c, PETSC_FALSE);
    PetscCall(compare_vec(name, g[0], h[0], scv, RTOL_UPDATE));
    PetscCall(PetscFree(scv));
  }
  PetscCall(VecDestroy(&hx));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---------------------------------------------------------------------------------------------
   How vectors get (and keep) our operations
   --------------------------------------------------------------------------------------------- */

/* v has our operations: a VecAXPY on it runs our kernel (and v is a CUDA vector by name). */
static PetscErrorCode has_ours(const char *name, Vec v, PetscBool want)
{
  PetscBool cuda;
  Vec       x;

  PetscFunctionBegin;
  PetscCall(PetscObjectTypeCompareAny((PetscObject)v, &cuda, VECSEQCUDA, VECMPICUDA, ""));
  record(name, cuda, "type %s, expected seqcuda or mpicuda", ((PetscObject)v)->type_name);
  PetscCall(VecDuplicate(v, &x));
  PetscCall(VecSet(x, 1.0));
  const PetscInt c = StnVecCalls("axpy");
  PetscCall(VecAXPY(v, 0.5, x));
  expect_calls(name, "axpy", c, want);
  PetscCall(VecDestroy(&x));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode values_are(const char *name, Vec v, unsigned seed)
{
  const PetscScalar *a;
  PetscInt           n, bad = 0;

  PetscFunctionBegin;
  PetscCall(VecGetLocalSize(v, &n));
  PetscCall(VecGetArrayRead(v, &a));
  for (PetscInt i = 0; i < n; i++) bad += a[i] != value(seed, i);
  PetscCall(VecRestoreArrayRead(v, &a));
  record(name, bad == 0 ? PETSC_TRUE : PETSC_FALSE, "%" PetscInt_FMT " of %" PetscInt_FMT " values lost", bad, n);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode set_values(Vec v, unsigned seed)
{
  PetscScalar *a;
  PetscInt     n;

  PetscFunctionBegin;
  PetscCall(VecGetLocalSize(v, &n));
  PetscCall(VecGetArrayWrite(v, &a));
  for (PetscInt i = 0; i < n; i++) a[i] = value(seed, i);
  PetscCall(VecRestoreArrayWrite(v, &a));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode test_creation(PetscInt n)
{
  Vec  v, w, *vs;
  char name[80];

  PetscFunctionBegin;
  set_where("n = %d", (int)n);
  /* VecSetType before VecSetSizes (creation deferred to VecSetSizes) */
  PetscCall(VecCreate(PETSC_COMM_SELF, &v));
  PetscCall(VecSetType(v, VECSTNCUDA));
  PetscCall(VecSetSizes(v, n, n));
  PetscCall(has_ours("VecSetType(stncuda) before VecSetSizes", v, PETSC_TRUE));
  /* VecDuplicate, VecDuplicateVecs keep the operations */
  PetscCall(VecDuplicate(v, &w));
  record("VecDuplicate keeps our operations", w->ops->axpy == v->ops->axpy && w->ops->mdot == v->ops->mdot ? PETSC_TRUE : PETSC_FALSE,
         "the duplicate's operations differ");
  PetscCall(has_ours("VecDuplicate keeps our operations", w, PETSC_TRUE));
  PetscCall(VecDuplicateVecs(w, 3, &vs));
  PetscCall(has_ours("VecDuplicateVecs keeps our operations", vs[2], PETSC_TRUE));
  PetscCall(VecDestroyVecs(3, &vs));
  PetscCall(VecDestroy(&w));
  /* VecBindToCPU: PETSc's host operations while bound, ours again after */
  PetscCall(set_values(v, 131));
  PetscCall(VecBindToCPU(v, PETSC_TRUE));
  PetscCall(has_ours("VecBindToCPU: PETSc's host operations while bound", v, PETSC_FALSE));
  PetscCall(VecBindToCPU(v, PETSC_FALSE));
  PetscCall(has_ours("VecBindToCPU: ours again after unbinding", v, PETSC_TRUE));
  PetscCall(VecDestroy(&v));
  /* -vec_type stncuda with VecSetFromOptions */
  PetscCall(PetscOptionsSetValue(NULL, "-stn_test_vec_type", VECSTNCUDA));
  PetscCall(VecCreate(PETSC_COMM_SELF, &v));
  PetscCall(VecSetSizes(v, n, n));
  PetscCall(PetscObjectSetOptionsPrefix((PetscObject)v, "stn_test_"));
  PetscCall(VecSetFromOptions(v));
  PetscCall(has_ours("-vec_type stncuda (VecSetFromOptions)", v, PETSC_TRUE));
  PetscCall(VecDestroy(&v));
  PetscCall(PetscOptionsClearValue(NULL, "-stn_test_vec_type"));
  /* converting a vector that holds values: a VECSEQ, a VECCUDA, and one of ours again */
  const VecType from[] = {VECSEQ, VECSEQCUDA, VECSTNCUDA};
  for (int f = 0; f < 3; f++) {
    snprintf(name, sizeof name, "VecSetType(stncuda) of a %s with values", from[f]);
    PetscCall(VecCreate(PETSC_COMM_SELF, &v));
    PetscCall(VecSetSizes(v, n, n));
    PetscCall(VecSetType(v, from[f]));
    PetscCall(set_values(v, 132 + (unsigned)f));
    if (f > 0) { /* the values on the device only */
      PetscScalar *d;
      PetscCall(VecCUDAGetArray(v, &d));
      PetscCall(VecCUDARestoreArray(v, &d));
    }
    PetscCall(VecSetType(v, VECSTNCUDA));
    PetscCall(values_are(name, v, 132 + (unsigned)f));
    PetscCall(has_ours(name, v, PETSC_TRUE));
    PetscCall(VecDestroy(&v));
  }
  /* a plain VECCUDA does not have them (the counters prove something) */
  PetscCall(VecCreateSeqCUDA(PETSC_COMM_SELF, n, &v));
  PetscCall(has_ours("a plain VECCUDA runs PETSc's operations", v, PETSC_FALSE));
  PetscCall(StnVecUseKernels(v));
  PetscCall(has_ours("StnVecUseKernels on a VECCUDA", v, PETSC_TRUE));
  PetscCall(VecDestroy(&v));
  record("StnVecCalls of an unknown operation", StnVecCalls("no such operation") == -1 ? PETSC_TRUE : PETSC_FALSE, "not -1");
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---------------------------------------------------------------------------------------------
   The kernel API: aliasing, and every launch shape against the reference
   --------------------------------------------------------------------------------------------- */

#define KCALL(call) \
  do { \
    if ((call) != 0) SETERRQ(PETSC_COMM_SELF, PETSC_ERR_LIB, "%s: %s", #call, StnCUDALastError()); \
  } while (0)

static PetscErrorCode get_dev(double *host, const double *dev, long n)
{
  PetscFunctionBegin;
  if (n > 0) KCALL(StnCUDAMemcpyDtoH(host, dev, (size_t)n * sizeof(double)));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode put_dev(double *dev, const double *host, long n)
{
  PetscFunctionBegin;
  if (n > 0) KCALL(StnCUDAMemcpyHtoD(dev, host, (size_t)n * sizeof(double)));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The kernel API's promise: "any array may be another one" (the tuner's dyadic values: exact). */
static PetscErrorCode test_kernel_aliasing(long n)
{
  double *d[6], *h[6], *got;
  char    name[64];

  PetscFunctionBegin;
  set_where("kernel API, n = %ld", n);
  PetscCall(PetscMalloc1(n + 1, &got));
  for (int j = 0; j < 6; j++) {
    KCALL(StnCUDAMalloc((void **)&d[j], (size_t)(n + 1) * sizeof(double)));
    PetscCall(PetscMalloc1(n + 1, &h[j]));
    for (long i = 0; i < n; i++) h[j][i] = STN_VEC_TEST_VALUE(j, i);
  }
  for (int c = 0; c < 7; c++) {
    for (int j = 0; j < 6; j++) KCALL(StnVecFillTest(d[j], n, j));
    const double a = 0.625, b = -0.375, g = 0.25;
    const char  *what = "";
    int          out  = 0;
    switch (c) {
    case 0: what = "WAXPY w == x", out = 0; KCALL(StnVecWAXPY(d[0], a, d[0], d[1], n)); break;
    case 1: what = "WAXPY w == y", out = 1; KCALL(StnVecWAXPY(d[1], a, d[0], d[1], n)); break;
    case 2: what = "AXPBYPCZ z == x", out = 0; KCALL(StnVecAXPBYPCZ(d[0], a, b, g, d[0], d[1], n)); break;
    case 3: what = "PointwiseMult w == x == y", out = 0; KCALL(StnVecPointwiseMult(d[0], d[0], d[0], n)); break;
    case 4: what = "AXPY y == x", out = 0; KCALL(StnVecAXPY(d[0], a, d[0], n)); break;
    case 5: { /* MAXPBY, one pass (nv <= 32), y among the x */
      const double        al[5] = {0.5, -0.25, 0.125, 0.75, -1.0};
      const double *const xs[5] = {d[1], d[2], d[0], d[3], d[4]};
      what = "MAXPBY y among the x", out = 0;
      KCALL(StnVecMAXPBY(d[0], 5, al, b, xs, n));
    } break;
    case 6: what = "Copy x == x", out = 0; KCALL(StnVecCopy(d[0], d[0], n)); break;
    }
    PetscCall(get_dev(got, d[out], n));
    long bad = -1;
    for (long i = 0; i < n && bad < 0; i++) {
      const double x = h[0][i], y = h[1][i];
      double       want = 0;
      switch (c) {
      case 0: want = a * x + y; break;
      case 1: want = a * x + y; break;
      case 2: want = a * x + b * y + g * x; break;
      case 3: want = x * x; break;
      case 4: want = x + a * x; break;
      case 5: want = b * x + 0.5 * h[1][i] - 0.25 * h[2][i] + 0.125 * x + 0.75 * h[3][i] - 1.0 * h[4][i]; break;
      case 6: want = x; break;
      }
      if (got[i] != want) bad = i;
    }
    snprintf(name, sizeof name, "kernel API aliasing: %s", what);
    record(name, bad < 0 ? PETSC_TRUE : PETSC_FALSE, "entry %ld: %.17g", bad, bad < 0 ? 0.0 : got[bad]);
  }
  for (int j = 0; j < 6; j++) {
    KCALL(StnCUDAFree(d[j]));
    PetscCall(PetscFree(h[j]));
  }
  PetscCall(PetscFree(got));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscBool is_reduction(int k)
{
  return k == STN_K_DOT || k == STN_K_MDOT || k == STN_K_NORM || k == STN_K_DOTNORM2 ? PETSC_TRUE : PETSC_FALSE;
}

/* Every kernel with many launch shapes, on the tuner's test vectors, equal to the reference. For
   updates, variants whose old output must not be read run on an output full of NaN. */
static PetscErrorCode test_shapes(PetscInt nsizes, const PetscInt sizes[], PetscBool few)
{
  static const int all_threads[] = {32, 64, 128, 256, 512, 1024}, all_epts[] = {1, 2, 4}, all_bpss[] = {0, 1, 2, 8, 32};
  static const int few_threads[] = {32, 256, 1024}, few_epts[] = {1, 4}, few_bpss[] = {0, 1};
  static const int mnv[]         = {1, 3, 16, 32, 40};
  const int       *threads = few ? few_threads : all_threads, *epts = few ? few_epts : all_epts, *bpss = few ? few_bpss : all_bpss;
  const size_t     nthreads = few ? 3 : 6, nepts = few ? 2 : 3, nbpss = few ? 2 : 5;
  enum { NVMAX = 40 };
  double *v[NVMAX + 3], *got, *nan_host, want[NVMAX], out[NVMAX], s[NVMAX + 1];
  long    nmax = 1;
  char    name[96];

  PetscFunctionBegin;
  for (PetscInt k = 0; k < nsizes; k++) nmax = PetscMax(nmax, (long)sizes[k]);
  for (int j = 0; j < NVMAX + 3; j++) KCALL(StnCUDAMalloc((void **)&v[j], (size_t)nmax * sizeof(double)));
  PetscCall(PetscMalloc2(nmax, &got, nmax, &nan_host));
  for (long i = 0; i < nmax; i++) nan_host[i] = (PetscScalar)NAN;
  for (PetscInt z = 0; z < nsizes; z++) {
    const long n = (long)sizes[z];
    if (n < 1) continue;
    for (int j = 0; j < NVMAX + 3; j++) KCALL(StnVecFillTest(v[j], n, j));
    for (int k = 0; k < STN_K_COUNT; k++) {
      const PetscBool multi = k == STN_K_MDOT || k == STN_K_MAXPY ? PETSC_TRUE : PETSC_FALSE;
      /* configurations: the numbers of vectors of mdot and maxpy, the four types of norm */
      const int nconf = multi ? (int)(sizeof mnv / sizeof mnv[0]) : k == STN_K_NORM ? 4 : 1;
      /* variant 1: the old output must not be read (it is NaN), where the kernel has such a case */
      const PetscBool has_noread = k == STN_K_AXPBY || k == STN_K_AXPBYPCZ || k == STN_K_MAXPY || k == STN_K_SCALE || k == STN_K_SET ? PETSC_TRUE : PETSC_FALSE;
      for (int conf = 0; conf < nconf; conf++) {
        const int nv = multi ? mnv[conf] : 1;
        for (int var = 0; var < (has_noread ? 2 : 1); var++) {
          for (int j = 0; j <= nv; j++) s[j] = (j + 1) / 64.0 * (j % 2 ? -1 : 1);
          if (k != STN_K_MAXPY) s[0] = 0.5, s[1] = -0.25, s[2] = 0.75;
          if (k == STN_K_NORM) s[0] = conf; /* 0 one, 1 two, 2 both, 3 max */
          if (k == STN_K_MAXPY) s[nv] = var ? 0.0 : 0.5; /* beta */
          if (var && k == STN_K_AXPBY) s[1] = 0;
          if (var && k == STN_K_AXPBYPCZ) s[2] = 0;
          if (var && k == STN_K_SCALE) s[0] = 0;
          const int nref  = is_reduction(k) ? StnVecRefReduce(k, n, nv, s, want) : 0;
          long      cases = 0, bad = 0;
          char      first[200] = "";
          for (size_t a = 0; a < nthreads; a++)
            for (size_t b = 0; b < nepts; b++)
              for (size_t c = 0; c < nbpss; c++) {
                const StnLaunch shape = {threads[a], epts[b], bpss[c]};
                cases++;
                if (is_reduction(k)) {
                  for (int j = 0; j < NVMAX; j++) out[j] = -12345;
                  KCALL(StnVecRunShape((StnVecKernel)k, shape, n, nv, v[0], v[1], v[2], (const double *const *)&v[1], s, out));
                  for (int j = 0; j < nref; j++)
                    if (out[j] != want[j]) {
                      if (!bad++) snprintf(first, sizeof first, "%dx%dx%d: result %d is %.17g, the reference %.17g", shape.threads, shape.ept, shape.bps, j, out[j], want[j]);
                      break;
                    }
                } else {
                  if (var) PetscCall(put_dev(v[0], nan_host, n));
                  else KCALL(StnVecFillTest(v[0], n, 0));
                  KCALL(StnVecRunShape((StnVecKernel)k, shape, n, nv, v[0], v[1], v[2], (const double *const *)&v[1], s, NULL));
                  PetscCall(get_dev(got, v[0], n));
                  for (long i = 0; i < n; i++)
                    if (got[i] != StnVecRefUpdate(k, i, nv, s)) {
                      if (!bad++) snprintf(first, sizeof first, "%dx%dx%d: entry %ld is %.17g, the reference %.17g", shape.threads, shape.ept, shape.bps, i, got[i], StnVecRefUpdate(k, i, nv, s));
                      break;
                    }
                }
              }
          if (!is_reduction(k)) KCALL(StnVecFillTest(v[0], n, 0));
          snprintf(name, sizeof name, "kernel %s%s, every launch shape = reference", StnVecKernelNames[k], var ? " (old output not read: NaN)" : "");
          set_where("n = %ld, nv = %d%s", n, nv, k != STN_K_NORM ? "" : conf == 0 ? ", 1-norm" : conf == 1 ? ", 2-norm" : conf == 2 ? ", 1- and 2-norm" : ", max-norm");
          record(name, bad == 0 ? PETSC_TRUE : PETSC_FALSE, "%ld of %ld shapes wrong; first %s", bad, cases, first);
        }
      }
    }
  }
  for (int j = 0; j < NVMAX + 3; j++) KCALL(StnCUDAFree(v[j]));
  PetscCall(PetscFree2(got, nan_host));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Launch shapes the kernels do not have are refused, and a bad one set for the tuner is too. */
static PetscErrorCode test_launch_api(void)
{
  const StnLaunch bad[] = {{0, 1, 0}, {48, 1, 0}, {2048, 1, 0}, {256, 3, 0}, {256, 1, 33}, {256, 1, -1}};
  PetscFunctionBegin;
  set_where("kernel API");
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    record("invalid launch shapes are refused", StnVecLaunchValid(bad[i]) ? PETSC_FALSE : PETSC_TRUE, "%dx%dx%d valid", bad[i].threads, bad[i].ept, bad[i].bps);
    if (bad[i].threads) record("invalid launch shapes are refused", StnVecSetLaunch(STN_K_DOT, 10, bad[i]) != 0 ? PETSC_TRUE : PETSC_FALSE, "StnVecSetLaunch took %dx%dx%d", bad[i].threads, bad[i].ept, bad[i].bps);
  }
  const StnLaunch good = {128, 4, 2};
  record("a launch shape set is the one used", StnVecSetLaunch(STN_K_AXPY, StnVecSizeClass(1000), good) == 0 ? PETSC_TRUE : PETSC_FALSE, "refused");
  StnLaunch now = StnVecGetLaunch(STN_K_AXPY, 1000);
  record("a launch shape set is the one used", now.threads == 128 && now.ept == 4 && now.bps == 2 ? PETSC_TRUE : PETSC_FALSE, "got %dx%dx%d", now.threads, now.ept, now.bps);
  const StnLaunch def = {0, 0, 0};
  StnVecSetLaunch(STN_K_AXPY, StnVecSizeClass(1000), def);
  now = StnVecGetLaunch(STN_K_AXPY, 1000);
  record("a launch shape set is the one used", now.threads > 0 && StnVecLaunchValid(now) ? PETSC_TRUE : PETSC_FALSE, "default restored as %dx%dx%d", now.threads, now.ept, now.bps);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---------------------------------------------------------------------------------------------
   main
   --------------------------------------------------------------------------------------------- */

/* An integer list option; the defaults stay when it is not given. */
static PetscErrorCode int_array(const char *opt, PetscInt v[], PetscInt cap, PetscInt *n)
{
  PetscInt  got = cap, tmp[16];
  PetscBool set;

  PetscFunctionBegin;
  PetscCall(PetscOptionsGetIntArray(NULL, NULL, opt, tmp, &got, &set));
  if (set) {
    for (PetscInt i = 0; i < got; i++) v[i] = tmp[i];
    *n = got;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  PetscInt  sizes[16] = {0, 1, 31, 1000, 1000003}, nsizes = 5;
  PetscInt  nvs[16] = {1, 2, 5, 16, 30, 33, 40}, nnv = 7;
  PetscInt  shape_sizes[8] = {1, 31, 1000, 100003}, nshape = 4;
  PetscBool shapes = PETSC_TRUE, vectors = PETSC_TRUE, few = PETSC_FALSE;
  char      key[256];
  int       failed = 0;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(int_array("-sizes", sizes, 16, &nsizes));
  PetscCall(int_array("-nvs", nvs, 16, &nnv));
  PetscCall(int_array("-shape_sizes", shape_sizes, 8, &nshape));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-shapes", &shapes, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-vectors", &vectors, NULL)); /* 0: the kernel API only */
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-few_shapes", &few, NULL));  /* 12 launch shapes, not 90 */
  PetscCall(StnVecRegister());
  if (StnVecDeviceKey(key, sizeof key) == 0) printf("vec_ops: device %s\n", key);

  PetscInt nvmax = 0;
  for (PetscInt k = 0; k < nnv; k++) {
    PetscCheck(nvs[k] >= 1, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "-nvs: each at least 1");
    nvmax = PetscMax(nvmax, nvs[k]);
  }
  nvmax = PetscMax(nvmax, 2);
  for (PetscInt z = 0; z < (vectors ? nsizes : 0); z++) {
    Set S;
    PetscCall(set_create(sizes[z], nvmax, &S));
    for (int st = HOST; st <= DEVICE; st++) {
      set_where("n = %d, %s", (int)sizes[z], state_name[st]);
      PetscCall(test_dot(&S, st));
      PetscCall(test_mdot(&S, st, nnv, nvs));
      PetscCall(test_mdot_slots(&S, st));
      PetscCall(test_norms(&S, st));
      PetscCall(test_dotnorm2(&S, st));
      PetscCall(test_split(&S, st));
      PetscCall(test_axpy_family(&S, st));
      PetscCall(test_waxpy(&S, st));
      PetscCall(test_maxpy(&S, st, nnv, nvs));
      PetscCall(test_scale_set_copy(&S, st));
      PetscCall(test_pointwisemult(&S, st));
      PetscCall(test_mixed(&S, st));
    }
    PetscCall(set_destroy(&S));
    printf("vec_ops: n = %d done\n", (int)sizes[z]);
    fflush(stdout);
  }
  if (vectors) {
    PetscCall(test_creation(1000));
    PetscCall(test_creation(0));
  }
  for (PetscInt z = 0; z < nshape; z++) PetscCall(test_kernel_aliasing((long)shape_sizes[z]));
  PetscCall(test_launch_api());
  if (shapes) PetscCall(test_shapes(nshape, shape_sizes, few));

  printf("vec_ops: our kernels ran:");
  for (int k = 0; k < STN_K_COUNT; k++) printf(" %s %d", StnVecKernelNames[k], (int)StnVecCalls(StnVecKernelNames[k]));
  printf(" copy %d\n", (int)StnVecCalls("copy"));
  for (int i = 0; i < nchecks; i++) {
    if (checks[i].fails) {
      failed++;
      printf("FAIL: gpu: vec: %s: %ld of %ld cases failed\n", checks[i].name, checks[i].fails, checks[i].cases);
    } else printf("gpu: vec: %s (%ld cases): ok\n", checks[i].name, checks[i].cases);
  }
  printf("vec_ops: %d of %d checks failed\n", failed, nchecks);
  fflush(stdout);
  PetscCall(PetscFinalize());
  return failed ? 1 : 0;
}
