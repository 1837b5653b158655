/* tests/gpu/dense_inverse.c: the coarsest operator's dense inverse on the device
   (runtime/stncoarse_cuda.cu) against the same SG-DIA matrix expanded on the host: for each
   grid, inv x for random x solves A y = x to a backward error below 1e-12, on each path of the
   inverse (Gauss-Jordan in shared memory up to 160 unknowns, over the device up to 1024,
   cuSOLVER beyond), with 1 and 4 values per point, star and box stencils, a periodic
   direction, the sizes at each path's ends; a matrix with a zero column is reported singular
   at that column on each path; and after it, on the same inverse, a regular matrix whose
   pivots tie at every step is inverted as well. Built and run by tests/gpu/vec-tests.sh.

     dense_inverse          the checks; one line per case, exit 1 on a failure
     dense_inverse -bench   also the time to form each inverse, the first time in the process
                            and the second (cuSOLVER loads its kernels at its first call)
     dense_inverse -small   the grids up to 256 unknowns only (for compute-sanitizer) */
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "stncoarse_cuda.h"

static int failures;

static void check_cuda(int e, const char *what)
{
  if (e == 0) return;
  fprintf(stderr, "FAIL: gpu: dense inverse: %s: error %d\n", what, e);
  exit(1);
}

static unsigned long long rng = 88172645463325252ull;
static double uniform(void) /* in [-1, 1) */
{
  rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
  return (double)(rng >> 11) / 4503599627370496.0 - 1.0;
}

static double now_ms(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return 1e3 * (double)t.tv_sec + 1e-6 * (double)t.tv_nsec;
}

typedef struct {
  const char *name;
  int         dim, dof, m[3], box, periodic_x;
} Case;

/* The box of one rank owning the whole grid, with the star (2 dim + 1 points) or box (3^dim)
   stencil of width 1. */
static StnBox whole_box(const Case *c)
{
  StnBox b;
  int    s = 0;

  memset(&b, 0, sizeof b);
  b.dim = c->dim, b.dof = c->dof;
  b.xm = b.gxm = b.mx = c->m[0];
  b.ym = b.gym = b.my = c->dim > 1 ? c->m[1] : 1;
  b.zm = b.gzm = b.mz = c->dim > 2 ? c->m[2] : 1;
  b.periodic[0] = c->periodic_x;
  for (int k = -1; k <= 1; k++)
    for (int j = -1; j <= 1; j++)
      for (int i = -1; i <= 1; i++) {
        const int far = (i != 0) + (j != 0) + (k != 0);
        if ((c->dim < 3 && k) || (c->dim < 2 && j) || (!c->box && far > 1)) continue;
        b.off[3 * s + 0] = i, b.off[3 * s + 1] = j, b.off[3 * s + 2] = k;
        s++;
      }
  b.nsten = s;
  return b;
}

/* The dense column of SG-DIA entry e = (s dof + c) n + row, as the device's expansion reads it:
   -1 where the neighbour lies beyond a non-periodic edge (the entry is skipped), a periodic one
   wraps. */
static int column_of(const StnBox *b, long e, int n)
{
  const int m[3] = {b->xm, b->ym, b->zm};
  const int row = (int)(e % n), c = (int)(e / n % b->dof), s = (int)(e / ((long)n * b->dof)), p = row / b->dof;
  int       at[3] = {p % b->xm, p / b->xm % b->ym, p / (b->xm * b->ym)}, q = 0;

  for (int d = 2; d >= 0; d--) {
    int x = at[d] + (d < b->dim ? b->off[3 * s + d] : 0);
    if (x < 0 || x >= m[d]) {
      if (!b->periodic[d]) return -1;
      x = (x + m[d]) % m[d];
    }
    q = q * m[d] + x;
  }
  return q * b->dof + c;
}

/* Dense column-major a (n x n) from the SG-DIA values A. */
static void expand(const StnBox *b, const double *A, double *a, int n)
{
  memset(a, 0, sizeof(double) * (size_t)n * (size_t)n);
  for (long e = 0; e < (long)b->nsten * b->dof * n; e++) {
    const int col = column_of(b, e, n);
    if (col >= 0) a[(long)col * n + e % n] = A[e];
  }
}

/* Random values in [-1, 1), the diagonal drawn as the others (so partial pivoting swaps rows);
   zero_column >= 0: that column's entries all zero (a singular matrix, whose first zero pivot,
   with or without swaps, is that column's). */
static double *values(const StnBox *b, int n, int zero_column)
{
  double *A = malloc(sizeof(double) * (size_t)b->nsten * b->dof * n);

  for (long e = 0; e < (long)b->nsten * b->dof * n; e++) A[e] = uniform();
  if (zero_column >= 0)
    for (long e = 0; e < (long)b->nsten * b->dof * n; e++)
      if (column_of(b, e, n) == zero_column) A[e] = 0.0;
  return A;
}

/* The matrix of ties: 1 between a point's value c and value c of its neighbours along x, 0
   elsewhere (no diagonal): for each line along x and each value a chain, whose every column
   holds two entries of 1 and which is regular when the line's length is even. Each pivot step
   chooses between equal candidates. */
static double *values_ties(const StnBox *b, int n)
{
  double *A = malloc(sizeof(double) * (size_t)b->nsten * b->dof * n);

  for (long e = 0; e < (long)b->nsten * b->dof * n; e++) {
    const int row = (int)(e % n), c = (int)(e / n % b->dof), s = (int)(e / ((long)n * b->dof));
    A[e] = b->off[3 * s] != 0 && !b->off[3 * s + 1] && !b->off[3 * s + 2] && c == row % b->dof ? 1.0 : 0.0;
  }
  return A;
}

/* max over random x of |A y - x| / (|A| |y| + |x|), y = inv x (infinity norms). */
static double backward_error(const StnDenseInverse *inv, const double *a, int n)
{
  double *x = malloc(sizeof(double) * n), *y = malloc(sizeof(double) * n), *dx, *dy, worst = 0, anorm = 0;

  for (int i = 0; i < n; i++) {
    double r = 0;
    for (int j = 0; j < n; j++) r += fabs(a[(long)j * n + i]);
    if (r > anorm) anorm = r;
  }
  check_cuda(cudaMalloc((void **)&dx, sizeof(double) * n), "cudaMalloc");
  check_cuda(cudaMalloc((void **)&dy, sizeof(double) * n), "cudaMalloc");
  for (int t = 0; t < 4; t++) {
    double rmax = 0, xmax = 0, ymax = 0;
    for (int i = 0; i < n; i++) x[i] = uniform();
    check_cuda(cudaMemcpy(dx, x, sizeof(double) * n, cudaMemcpyHostToDevice), "cudaMemcpy");
    check_cuda(StnDenseInverseApply(inv, dx, dy), "StnDenseInverseApply");
    check_cuda(cudaMemcpy(y, dy, sizeof(double) * n, cudaMemcpyDeviceToHost), "cudaMemcpy");
    for (int i = 0; i < n; i++) {
      double r = -x[i];
      for (int j = 0; j < n; j++) r += a[(long)j * n + i] * y[j];
      if (!isfinite(r) || !isfinite(y[i])) rmax = INFINITY; /* fmax would drop a NaN */
      if (fabs(r) > rmax) rmax = fabs(r);
      if (fabs(x[i]) > xmax) xmax = fabs(x[i]);
      if (fabs(y[i]) > ymax) ymax = fabs(y[i]);
    }
    const double eta = rmax / (anorm * ymax + xmax);
    if (isnan(eta) || eta > worst) worst = eta; /* a NaN stays */
  }
  cudaFree(dx);
  cudaFree(dy);
  free(x);
  free(y);
  return worst;
}

/* The values A (host) into dA and inv formed from them; *zero_pivot as StnDenseInverseSetSGDIA's. */
static void set_values(StnDenseInverse *inv, const StnBox *b, const double *A, double *dA, int n, int *zero_pivot)
{
  check_cuda(cudaMemcpy(dA, A, sizeof(double) * (size_t)b->nsten * b->dof * n, cudaMemcpyHostToDevice), "cudaMemcpy");
  check_cuda(StnDenseInverseSetSGDIA(inv, b, dA, zero_pivot), "StnDenseInverseSetSGDIA");
}

/* A regular matrix's inverse (a, dense, n x n): no zero pivot and a backward error below 1e-12.
   Prints one line naming the case (name, what); returns 1 on a failure. */
static int check_regular(const StnDenseInverse *inv, const double *a, int n, int zero_pivot, const char *name, const char *what)
{
  const double err = backward_error(inv, a, n);

  if (zero_pivot == 0 && err < 1e-12) {
    printf("gpu: dense inverse: %s, %s: backward error %.1e: ok\n", name, what, err);
    return 0;
  }
  printf("FAIL: gpu: dense inverse: %s, %s: zero pivot %d, backward error %.1e (want below 1e-12)\n", name, what, zero_pivot, err);
  return 1;
}

int main(int argc, char **argv)
{
  const int  bench   = argc > 1 && !strcmp(argv[1], "-bench");
  const int  small   = argc > 1 && !strcmp(argv[1], "-small");
  const Case cases[] = {
    {"2D 5^2 x 4 values, box stencil (shared memory)", 2, 4, {5, 5, 1}, 1, 0},
    {"2D 10 x 16, star stencil (shared memory, its largest)", 2, 1, {10, 16, 1}, 0, 0},
    {"2D 7 x 23, star stencil (over the device, its smallest)", 2, 1, {7, 23, 1}, 0, 0},
    {"3D 6^3 x 1 value, star stencil (over the device)", 3, 1, {6, 6, 6}, 0, 0},
    {"3D 7^3 x 1 value, star stencil (over the device, a last panel of 7 pivots)", 3, 1, {7, 7, 7}, 0, 0},
    {"2D 16^2 periodic in x, star stencil (over the device)", 2, 1, {16, 16, 1}, 0, 1},
    {"2D 12^2 x 4 values, box stencil (over the device)", 2, 4, {12, 12, 1}, 1, 0},
    {"2D 16^2 x 4 values, box stencil (over the device, its largest)", 2, 4, {16, 16, 1}, 1, 0},
    {"3D 5 x 5 x 41, star stencil (cuSOLVER, its smallest)", 3, 1, {5, 5, 41}, 0, 0},
    {"3D 11^3 x 1 value, star stencil (cuSOLVER)", 3, 1, {11, 11, 11}, 0, 0},
  };

  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    const Case      *c = &cases[k];
    const StnBox     b = whole_box(c);
    const int        n = b.xm * b.ym * b.zm * b.dof;
    double          *A = values(&b, n, -1), *a = malloc(sizeof(double) * (size_t)n * n), *dA, t[2];
    StnDenseInverse *inv;
    int              zero_pivot;
    char             unknowns[32];

    if (small && n > 256) {
      free(A);
      free(a);
      continue;
    }
    expand(&b, A, a, n);
    check_cuda(cudaMalloc((void **)&dA, sizeof(double) * (size_t)b.nsten * b.dof * n), "cudaMalloc");
    check_cuda(cudaMemcpy(dA, A, sizeof(double) * (size_t)b.nsten * b.dof * n, cudaMemcpyHostToDevice), "cudaMemcpy");
    check_cuda(StnDenseInverseCreate(n, &inv), "StnDenseInverseCreate");
    for (int r = 0; r < 2; r++) {
      const double t0 = now_ms();
      check_cuda(StnDenseInverseSetSGDIA(inv, &b, dA, &zero_pivot), "StnDenseInverseSetSGDIA");
      t[r] = now_ms() - t0;
    }
    snprintf(unknowns, sizeof unknowns, "%d unknowns", n);
    failures += check_regular(inv, a, n, zero_pivot, c->name, unknowns);
    if (bench) printf("gpu: bench: dense inverse: %s, %d unknowns: %.2f ms the first time, %.2f ms the second\n", c->name, n, t[0], t[1]);

    /* the same grid with a zero column: singular, found at that column on the same path, the
       later pivot steps skipped */
    free(A);
    A = values(&b, n, n / 3);
    set_values(inv, &b, A, dA, n, &zero_pivot);
    if (zero_pivot == n / 3 + 1) printf("gpu: dense inverse: %s, column %d zero: zero pivot there: ok\n", c->name, n / 3 + 1);
    else {
      printf("FAIL: gpu: dense inverse: %s, column %d zero: zero pivot %d\n", c->name, n / 3 + 1, zero_pivot);
      failures++;
    }

    /* then, on the same inverse, a regular matrix whose pivots tie at every step (an even line
       along x, not periodic): the object works again after a singular matrix, and the ties
       give an inverse as good */
    if (c->m[0] % 2 == 0 && !c->periodic_x) {
      free(A);
      A = values_ties(&b, n);
      expand(&b, A, a, n);
      set_values(inv, &b, A, dA, n, &zero_pivot);
      failures += check_regular(inv, a, n, zero_pivot, c->name, "tied pivots after a singular matrix");
    }
    check_cuda(StnDenseInverseDestroy(inv), "StnDenseInverseDestroy");
    cudaFree(dA);
    free(A);
    free(a);
  }
  return failures ? 1 : 0;
}
