/*
** tests/runtime/vecref.c: unit test of the vector kernels' CPU reference
** (runtime/stnvec_ref.c), the results the autotuner (runtime/stntune.c)
** demands of every launch shape before it times it. Plain C: no PETSc, no
** CUDA. Built and run by tests/runtime/run.sh:
**
**   cc -std=c11 -Iruntime tests/runtime/vecref.c runtime/stnvec_ref.c -lm
**
** For n = 0, 1, 31, 1000, 100003 (and nv = 1, 2, 16, 30, 40 for mdot and
** maxpy) every result of StnVecRefReduce and every entry of StnVecRefUpdate
** is compared with a naive loop written here from the definitions in
** stnvec_cuda.h, in plain double. Exact equality is expected, and is what
** is tested: test vector j holds STN_VEC_TEST_VALUE(j, i), a multiple of
** 1/1024 in [-1, 1) (stnvec_ref.h), so
**   - a product of two entries is a multiple of 2^-20 of magnitude <= 1, and
**     a sum of up to 2^32 such products is a multiple of 2^-20 below 2^32:
**     it needs at most 52 significant bits, so every partial sum is exact in
**     double, in any order of summation (the reference sums in long double,
**     the GPU in a tree, this test left to right: all equal);
**   - the scalars used here are dyadic (0.5, -0.25, 0.75, (j+1)/64, ...), so
**     every update a*x + b*y + c*z is exact too, with or without fma.
** The test checks that premise as well (values on the 1/1024 grid; a dot
** product summed forwards, backwards and pairwise gives one value).
**
** Semantic corner cases: beta = 0 in axpby and maxpy, and gamma = 0 in
** axpbypcz, mean the output's old value is not read (the reference has no
** term for it: the result is exactly alpha x); scale by 0 is 0; nv = 0 in
** maxpy is beta y; n = 0 reductions are 0; nv above STN_VEC_MAX_MULTI (32);
** an unknown kernel or norm type gives no results (0) or NaN.
**
** Prints one line per failure (at most a few per check) and a summary;
** exit status 1 if anything failed.
*/
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stnvec_cuda.h" /* kernel numbers, STN_VEC_MAX_MULTI (declarations only: nothing of it is linked) */
#include "stnvec_ref.h"

#define T(j, i) STN_VEC_TEST_VALUE(j, i)

static int failures, checks, shown;

static void fail(const char *what, long n, int nv, long i, double got, double want)
{
  failures++;
  if (shown++ < 40)
    printf("FAIL: vecref: %s (n = %ld, nv = %d) at %ld: reference %.17g, expected %.17g\n", what, n, nv, i, got, want);
}

/* Exact comparison; NaN equals NaN (a kernel must give NaN where the reference does). */
static int same(double a, double b)
{
  return a == b || (isnan(a) && isnan(b));
}

static void expect(const char *what, long n, int nv, long i, double got, double want)
{
  checks++;
  if (!same(got, want)) fail(what, n, nv, i, got, want);
}

static void expect_count(const char *what, long n, int nv, int got, int want)
{
  checks++;
  if (got != want) {
    failures++;
    printf("FAIL: vecref: %s (n = %ld, nv = %d): %d results, expected %d\n", what, n, nv, got, want);
  }
}

/* Naive loops, in plain double, from the definitions in stnvec_cuda.h. */
static double dot(long n, int a, int b)
{
  double s = 0;
  for (long i = 0; i < n; i++) s += T(a, i) * T(b, i);
  return s;
}

static void reductions(long n)
{
  static const int nvs[] = {1, 2, 16, 30, 40};
  double           out[64], s[1];
  int              m;

  /* dot: z = y^T x, x = vector 0, y = vector 1 */
  for (int j = 0; j < 64; j++) out[j] = -12345;
  m = StnVecRefReduce(STN_K_DOT, n, 1, NULL, out);
  expect_count("dot", n, 1, m, 1);
  expect("dot", n, 1, 0, out[0], dot(n, 0, 1));

  /* mdot: z[j] = y[j]^T x, y[j] = vector 1 + j, for nv below, at and above 32 */
  for (size_t c = 0; c < sizeof nvs / sizeof nvs[0]; c++) {
    const int nv = nvs[c];
    for (int j = 0; j < 64; j++) out[j] = -12345;
    m = StnVecRefReduce(STN_K_MDOT, n, nv, NULL, out);
    expect_count("mdot", n, nv, m, nv);
    for (int j = 0; j < nv; j++) expect("mdot", n, nv, j, out[j], dot(n, 0, 1 + j));
    expect("mdot: writes nothing past nv", n, nv, nv, out[nv], -12345);
  }

  /* norms of vector 0: 0 one, 1 two, 2 both, 3 max */
  double one = 0, two = 0, mx = 0;
  for (long i = 0; i < n; i++) {
    one += fabs(T(0, i));
    two += T(0, i) * T(0, i);
    if (fabs(T(0, i)) > mx) mx = fabs(T(0, i));
  }
  s[0] = 0;
  expect_count("norm 1", n, 1, StnVecRefReduce(STN_K_NORM, n, 1, s, out), 1);
  expect("norm 1", n, 1, 0, out[0], one);
  s[0] = 1;
  expect_count("norm 2", n, 1, StnVecRefReduce(STN_K_NORM, n, 1, s, out), 1);
  expect("norm 2", n, 1, 0, out[0], sqrt(two));
  s[0] = 2;
  expect_count("norm 1 and 2", n, 1, StnVecRefReduce(STN_K_NORM, n, 1, s, out), 2);
  expect("norm 1 and 2: the 1-norm", n, 1, 0, out[0], one);
  expect("norm 1 and 2: the 2-norm", n, 1, 1, out[1], sqrt(two));
  s[0] = 3;
  expect_count("norm max", n, 1, StnVecRefReduce(STN_K_NORM, n, 1, s, out), 1);
  expect("norm max", n, 1, 0, out[0], mx);
  s[0] = 4; /* no such norm type: no results */
  expect_count("norm of an unknown type", n, 1, StnVecRefReduce(STN_K_NORM, n, 1, s, out), 0);

  /* dotnorm2: dp = t^T s, nm = t^T t; s = vector 0, t = vector 1 */
  expect_count("dotnorm2", n, 1, StnVecRefReduce(STN_K_DOTNORM2, n, 1, NULL, out), 2);
  expect("dotnorm2: dp", n, 1, 0, out[0], dot(n, 0, 1));
  expect("dotnorm2: nm", n, 1, 1, out[1], dot(n, 1, 1));

  /* an update kernel or no kernel at all is not a reduction */
  expect_count("axpy as a reduction", n, 1, StnVecRefReduce(STN_K_AXPY, n, 1, s, out), 0);
  expect_count("kernel -1", n, 1, StnVecRefReduce(-1, n, 1, s, out), 0);
}

/* Entry i of every update: a = vector 0 (the output's old value), b = vector 1, c = vector 2. */
static void updates(long n)
{
  static const double alphas[] = {0.5, -0.25, 0.75, 0, 1, -2};
  static const int    nvs[]    = {0, 1, 2, 16, 30, 40};
  double              s[64];

  for (size_t p = 0; p < sizeof alphas / sizeof alphas[0]; p++) {
    const double al = alphas[p], be = alphas[(p + 1) % 6], ga = alphas[(p + 2) % 6];
    for (long i = 0; i < n; i++) {
      const double v0 = T(0, i), v1 = T(1, i), v2 = T(2, i);
      s[0] = al, s[1] = be, s[2] = ga;
      /* axpy, aypx, axpby: y = vector 0, x = vector 1 */
      expect("axpy y = y + a x", n, 1, i, StnVecRefUpdate(STN_K_AXPY, i, 1, s), v0 + al * v1);
      expect("aypx y = x + a y", n, 1, i, StnVecRefUpdate(STN_K_AYPX, i, 1, s), v1 + al * v0);
      expect("axpby y = a x + b y", n, 1, i, StnVecRefUpdate(STN_K_AXPBY, i, 1, s), al * v1 + be * v0);
      /* axpbypcz: z = a x + b y + c z, z = vector 0, x = vector 1, y = vector 2 */
      expect("axpbypcz", n, 1, i, StnVecRefUpdate(STN_K_AXPBYPCZ, i, 1, s), al * v1 + be * v2 + ga * v0);
      /* waxpy: w = a x + y, w = vector 0, x = vector 1, y = vector 2 */
      expect("waxpy w = a x + y", n, 1, i, StnVecRefUpdate(STN_K_WAXPY, i, 1, s), al * v1 + v2);
      expect("scale", n, 1, i, StnVecRefUpdate(STN_K_SCALE, i, 1, s), al * v0);
      expect("set", n, 1, i, StnVecRefUpdate(STN_K_SET, i, 1, s), al);
      /* pointwisemult: w = x .* y, w = vector 0, x = vector 1, y = vector 2 */
      expect("pointwisemult w = x .* y", n, 1, i, StnVecRefUpdate(STN_K_PMULT, i, 1, s), v1 * v2);
      /* beta = 0 (axpby), gamma = 0 (axpbypcz): the old output is not read, the result is
         exactly the other terms (a kernel may hold NaN there: it must not show) */
      s[1] = 0;
      expect("axpby with beta = 0", n, 1, i, StnVecRefUpdate(STN_K_AXPBY, i, 1, s), al * v1);
      s[1] = be, s[2] = 0;
      expect("axpbypcz with gamma = 0", n, 1, i, StnVecRefUpdate(STN_K_AXPBYPCZ, i, 1, s), al * v1 + be * v2);
      s[0] = 0;
      expect("scale by 0", n, 1, i, StnVecRefUpdate(STN_K_SCALE, i, 1, s), 0.0);
    }
  }

  /* maxpy/maxpby: y = beta y + sum_j alpha_j x_j, x_j = vector 1 + j, s = alpha[0..nv-1], beta */
  for (size_t c = 0; c < sizeof nvs / sizeof nvs[0]; c++) {
    const int nv = nvs[c];
    for (int j = 0; j < nv; j++) s[j] = (j % 2 ? -1 : 1) * (j + 1) / 64.0;
    for (int b = 0; b < 3; b++) {
      const double beta = b == 0 ? 1.0 : b == 1 ? 0.0 : -0.5;
      s[nv]             = beta;
      for (long i = 0; i < n; i++) {
        double want = beta == 0 ? 0.0 : beta * T(0, i); /* beta = 0: y not read */
        for (int j = 0; j < nv; j++) want += s[j] * T(1 + j, i);
        expect(beta == 1 ? "maxpy" : beta == 0 ? "maxpby with beta = 0" : "maxpby", n, nv, i, StnVecRefUpdate(STN_K_MAXPY, i, nv, s), want);
      }
    }
  }

  /* a reduction or no kernel at all is not an update: NaN */
  if (n > 0) {
    expect("dot as an update", n, 1, 0, StnVecRefUpdate(STN_K_DOT, 0, 1, s), NAN);
    expect("kernel STN_K_COUNT", n, 1, 0, StnVecRefUpdate(STN_K_COUNT, 0, 1, s), NAN);
  }
}

/* The premise of exact equality: the test values, and a sum that does not depend on its order. */
static double pairwise(long lo, long hi)
{
  if (hi - lo <= 8) {
    double s = 0;
    for (long i = hi - 1; i >= lo; i--) s += T(0, i) * T(1, i);
    return s;
  }
  const long mid = lo + (hi - lo) / 3;
  return pairwise(lo, mid) + pairwise(mid, hi);
}

static void premise(void)
{
  const long n = 1000003;
  long       off = 0;
  for (int j = 0; j < 45; j++)
    for (long i = 0; i < 100003; i++) {
      const double v = T(j, i);
      if (!(v >= -1 && v < 1) || v * 1024 != floor(v * 1024)) off++;
    }
  checks++;
  if (off) {
    failures++;
    printf("FAIL: vecref: %ld test values are not multiples of 1/1024 in [-1, 1)\n", off);
  }
  double fwd = 0, bwd = 0;
  for (long i = 0; i < n; i++) fwd += T(0, i) * T(1, i);
  for (long i = n - 1; i >= 0; i--) bwd += T(0, i) * T(1, i);
  expect("dot summed backwards", n, 1, 0, bwd, fwd);
  expect("dot summed pairwise", n, 1, 0, pairwise(0, n), fwd);
  double out[1];
  StnVecRefReduce(STN_K_DOT, n, 1, NULL, out);
  expect("dot at n = 1000003", n, 1, 0, out[0], fwd);
}

int main(void)
{
  static const long sizes[] = {0, 1, 31, 1000, 100003};

  premise();
  for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
    reductions(sizes[k]);
    updates(sizes[k]);
  }
  if (failures) printf("FAIL: vecref: %d of %d checks failed\n", failures, checks);
  else printf("vecref: %d checks of the vector kernels' CPU reference: ok\n", checks);
  return failures ? 1 : 0;
}
