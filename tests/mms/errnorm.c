/* tests/mms/errnorm.c: errors of manufactured-solution runs and their order.
 *
 *   errnorm [--order P] [--tol T] NAME EXACT DOMAIN RUN...
 *
 *   NAME     the label printed in front of every line (the problem's name)
 *   EXACT    which exact solution to compare with: one of the functions in
 *            the table below, each a copy of the `def`s of one .stn file in
 *            tests/mms/ (keep the two in step)
 *   DOMAIN   the grid's extents, one per direction, separated by commas:
 *            LO:HI, or LO:HI:periodic (e.g. "0:1,-0.5:1" or "-0.5:0.5:periodic,0:1")
 *   RUN      NXxNY[xNZ]:FILE, one per grid, coarsest first: the point counts
 *            the solution was computed with and the file it was saved to with
 *            -snes_view_solution binary:FILE
 *
 * A solution file is PETSc's binary format for a Vec: big-endian int32 classid
 * 1211214, big-endian int32 n, then n big-endian float64, in natural ordering
 * with the fields interleaved: index ((k*ny + j)*nx + i)*dof + c. Grid point i
 * of a direction with N points on [LO, HI] is at LO + i*h, where h = (HI-LO)/(N-1),
 * or h = (HI-LO)/N when the direction is periodic.
 *
 * For every run it prints N, h (the spacing in x), the max-norm error
 * max |u - exact| over all points and fields, the discrete L2 error
 * sqrt(hx*hy*hz * sum (u - exact)^2) summed over all points and fields, and
 * the orders log(e1/e2)/log(h1/h2) between successive grids. It then fits the
 * order p of e = C h^p by least squares of log(e) against log(h), for both
 * norms and, when there are several fields, for each field alone, and checks
 * |p - P| <= T for each (default P = 2, T = 0.1):
 *
 *   mms: NAME: fitted order 2.00 (max-norm): ok
 *
 * Exit status: 0 every fitted order is within the tolerance, 1 one is not (or
 * an error is not a positive finite number), 2 bad usage or an unreadable or
 * malformed file.
 *
 * Build: cc -O2 -o errnorm errnorm.c -lm   (plain C99, no PETSc)
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXDIM 3
#define MAXDOF 4
#define MAXRUN 16
#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

/* ---- the exact solutions: copies of the .stn files' defs ---- */

typedef void exact_fn(const double X[MAXDIM], double *out);

/* tests/mms/cubic2d.stn: u = sin(pi x) cos(pi y) + x y^2 */
static void exact_cubic2d(const double X[MAXDIM], double *out)
{
  double x = X[0], y = X[1];
  out[0] = sin(M_PI * x) * cos(M_PI * y) + x * y * y;
}

/* tests/mms/nldiff3d.stn: u = 1/2 + 1/2 sin(pi x) cos(pi y) exp(z) */
static void exact_nldiff3d(const double X[MAXDIM], double *out)
{
  double x = X[0], y = X[1], z = X[2];
  out[0] = 0.5 + 0.5 * sin(M_PI * x) * cos(M_PI * y) * exp(z);
}

/* tests/mms/advsys2d.stn: u = sin(2 pi x + 0.3) exp(y), v = 1 + cos(2 pi x) cos(y) */
static void exact_advsys2d(const double X[MAXDIM], double *out)
{
  double x = X[0], y = X[1];
  out[0] = sin(2 * M_PI * x + 0.3) * exp(y);
  out[1] = 1 + cos(2 * M_PI * x) * cos(y);
}

/* tests/mms/advper3d.stn: u = 1/2 exp(x) sin(2 pi y + 0.2) cos(pi z + 0.4) + x */
static void exact_advper3d(const double X[MAXDIM], double *out)
{
  double x = X[0], y = X[1], z = X[2];
  out[0] = 0.5 * exp(x) * sin(2 * M_PI * y + 0.2) * cos(M_PI * z + 0.4) + x;
}

/* tests/mms/mixed2d.stn: u = exp(x/2) sin(2 pi y + 0.3) + x^2 */
static void exact_mixed2d(const double X[MAXDIM], double *out)
{
  double x = X[0], y = X[1];
  out[0] = exp(x / 2) * sin(2 * M_PI * y + 0.3) + x * x;
}

/* tests/mms/neumann3d.stn: u = 1/2 + 1/2 cos(pi x) cos(pi y) cos(2 pi z) */
static void exact_neumann3d(const double X[MAXDIM], double *out)
{
  double x = X[0], y = X[1], z = X[2];
  out[0] = 0.5 + 0.5 * cos(M_PI * x) * cos(M_PI * y) * cos(2 * M_PI * z);
}

static const struct exact {
  const char *name;
  int         dim, dof;
  const char *fields[MAXDOF];
  exact_fn   *fn;
} exacts[] = {
  {"cubic2d", 2, 1, {"u"}, exact_cubic2d},
  {"nldiff3d", 3, 1, {"u"}, exact_nldiff3d},
  {"advsys2d", 2, 2, {"u", "v"}, exact_advsys2d},
  {"advper3d", 3, 1, {"u"}, exact_advper3d},
  {"mixed2d", 2, 1, {"u"}, exact_mixed2d},
  {"neumann3d", 3, 1, {"u"}, exact_neumann3d},
};

/* ---- input ---- */

static const char *prog = "errnorm";

static void usage(void)
{
  fprintf(stderr, "usage: %s [--order P] [--tol T] NAME EXACT DOMAIN NXxNY[xNZ]:FILE...\n"
                  "  DOMAIN: LO:HI[:periodic] per direction, comma-separated\n"
                  "  EXACT:",
          prog);
  for (size_t e = 0; e < sizeof exacts / sizeof exacts[0]; e++) fprintf(stderr, " %s", exacts[e].name);
  fprintf(stderr, "\n");
  exit(2);
}

static void die(const char *what, const char *arg)
{
  fprintf(stderr, "%s: %s: %s\n", prog, what, arg);
  exit(2);
}

static double number(const char *s, char **end, const char *arg)
{
  double v;

  errno = 0;
  v = strtod(s, end);
  if (*end == s || errno || !isfinite(v)) die("not a number", arg);
  return v;
}

/* Parses DOMAIN; returns the number of directions. */
static int parse_domain(const char *arg, double lo[MAXDIM], double hi[MAXDIM], int periodic[MAXDIM])
{
  const char *p = arg;
  char       *end;
  int         d = 0;

  for (;;) {
    if (d == MAXDIM) die("more than 3 directions in the domain", arg);
    lo[d] = number(p, &end, arg);
    if (*end != ':') die("expected LO:HI in the domain", arg);
    hi[d] = number(end + 1, &end, arg);
    periodic[d] = 0;
    if (strncmp(end, ":periodic", 9) == 0) {
      periodic[d] = 1;
      end += 9;
    }
    if (!(lo[d] < hi[d])) die("empty extent in the domain", arg);
    d++;
    if (*end == '\0') return d;
    if (*end != ',') die("expected ',' between directions in the domain", arg);
    p = end + 1;
  }
}

/* Parses NXxNY[xNZ]:FILE; returns the file name. */
static const char *parse_run(const char *arg, int dim, long n[MAXDIM])
{
  const char *p = arg;
  char       *end;

  for (int d = 0; d < MAXDIM; d++) n[d] = 1;
  for (int d = 0; d < dim; d++) {
    errno = 0;
    n[d] = strtol(p, &end, 10);
    if (end == p || errno || n[d] < 2 || n[d] > 100000) die("bad point count in", arg);
    if (d < dim - 1) {
      if (*end != 'x') die("expected NXxNY[xNZ]:FILE (as many counts as directions)", arg);
      p = end + 1;
    }
  }
  if (*end != ':' || end[1] == '\0') die("expected NXxNY[xNZ]:FILE (as many counts as directions)", arg);
  return end + 1;
}

static uint32_t be32(const unsigned char *b)
{
  return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | (uint32_t)b[3];
}

/* Reads a PETSc binary Vec of exactly `want` entries. */
static double *read_vec(const char *path, long want)
{
  FILE         *f = fopen(path, "rb");
  unsigned char head[8], b[8];
  double       *v;
  long          n;

  if (!f) die(strerror(errno), path);
  if (fread(head, 1, 8, f) != 8) die("too short for a PETSc binary Vec", path);
  if (be32(head) != 1211214) die("not a PETSc binary Vec (classid is not 1211214)", path);
  n = (long)(int32_t)be32(head + 4);
  if (n != want) {
    fprintf(stderr, "%s: %s: holds %ld entries, the grid and fields need %ld\n", prog, path, n, want);
    exit(2);
  }
  v = malloc((size_t)n * sizeof *v);
  if (!v) die("out of memory reading", path);
  for (long i = 0; i < n; i++) {
    uint64_t bits = 0;

    if (fread(b, 1, 8, f) != 8) die("truncated", path);
    for (int c = 0; c < 8; c++) bits = bits << 8 | b[c];
    memcpy(&v[i], &bits, sizeof v[i]);
  }
  if (fgetc(f) != EOF) die("has data after the vector", path);
  fclose(f);
  return v;
}

/* ---- the fit ---- */

/* Least-squares slope of log(e) against log(h); NAN if an error is not positive. */
static double fit(int nrun, const double *h, const double *e)
{
  double mx = 0, my = 0, sxy = 0, sxx = 0;

  for (int r = 0; r < nrun; r++) {
    if (!(e[r] > 0) || !isfinite(e[r])) return NAN;
    mx += log(h[r]) / nrun;
    my += log(e[r]) / nrun;
  }
  for (int r = 0; r < nrun; r++) {
    sxy += (log(h[r]) - mx) * (log(e[r]) - my);
    sxx += (log(h[r]) - mx) * (log(h[r]) - mx);
  }
  return sxy / sxx;
}

static double order(double h1, double e1, double h2, double e2)
{
  return log(e1 / e2) / log(h1 / h2);
}

int main(int argc, char **argv)
{
  double              want = 2, tol = 0.1;
  const char         *name;
  const struct exact *ex = NULL;
  double              lo[MAXDIM] = {0}, hi[MAXDIM] = {0};
  int                 periodic[MAXDIM] = {0}, dim, nrun, failed = 0;
  long                n[MAXRUN][MAXDIM];
  double              h[MAXRUN], emax[MAXRUN], el2[MAXRUN];
  double              fmax[MAXDOF][MAXRUN], fl2[MAXDOF][MAXRUN];
  char               *end;
  int                 a = 1;

  while (a < argc && strncmp(argv[a], "--", 2) == 0) {
    if (strcmp(argv[a], "--order") == 0 && a + 1 < argc) want = number(argv[a + 1], &end, argv[a + 1]);
    else if (strcmp(argv[a], "--tol") == 0 && a + 1 < argc) tol = number(argv[a + 1], &end, argv[a + 1]);
    else usage();
    a += 2;
  }
  if (argc - a < 4) usage();
  name = argv[a];
  for (size_t e = 0; e < sizeof exacts / sizeof exacts[0]; e++)
    if (strcmp(exacts[e].name, argv[a + 1]) == 0) ex = &exacts[e];
  if (!ex) die("no such exact solution", argv[a + 1]);
  dim = parse_domain(argv[a + 2], lo, hi, periodic);
  if (dim != ex->dim) die("the domain's dimension is not the exact solution's", argv[a + 2]);
  a += 3;
  nrun = argc - a;
  if (nrun < 2) die("need at least two grids to measure an order", name);
  if (nrun > MAXRUN) die("too many grids", name);

  printf("mms: %s: %dD, %d field%s, max-norm and discrete L2-norm errors (all fields)\n", name, dim, ex->dof,
         ex->dof > 1 ? "s" : "");
  printf("  %-14s %-11s %-11s %-6s %-11s %-6s\n", "N", "h", "max-error", "order", "L2-error", "order");
  for (int r = 0; r < nrun; r++) {
    const char *path = parse_run(argv[a + r], dim, n[r]);
    double      hd[MAXDIM] = {1, 1, 1}, vol = 1, *v;
    long        npt = n[r][0] * n[r][1] * n[r][2];
    char        grid[64];

    for (int d = 0; d < dim; d++) {
      hd[d] = (hi[d] - lo[d]) / (double)(periodic[d] ? n[r][d] : n[r][d] - 1);
      vol *= hd[d];
    }
    h[r] = hd[0];
    v = read_vec(path, npt * ex->dof);
    emax[r] = el2[r] = 0;
    for (int c = 0; c < ex->dof; c++) fmax[c][r] = fl2[c][r] = 0;
    for (long k = 0; k < n[r][2]; k++)
      for (long j = 0; j < n[r][1]; j++)
        for (long i = 0; i < n[r][0]; i++) {
          double X[MAXDIM] = {lo[0] + i * hd[0], lo[1] + j * hd[1], lo[2] + k * hd[2]}, u[MAXDOF];
          long   at = ((k * n[r][1] + j) * n[r][0] + i) * ex->dof;

          ex->fn(X, u);
          for (int c = 0; c < ex->dof; c++) {
            double e = fabs(v[at + c] - u[c]);

            if (!(e <= fmax[c][r])) fmax[c][r] = e; /* also catches NaN */
            fl2[c][r] += e * e;
          }
        }
    for (int c = 0; c < ex->dof; c++) {
      if (!(fmax[c][r] <= emax[r])) emax[r] = fmax[c][r];
      el2[r] += fl2[c][r];
      fl2[c][r] = sqrt(vol * fl2[c][r]);
    }
    el2[r] = sqrt(vol * el2[r]);
    free(v);

    if (dim == 1) snprintf(grid, sizeof grid, "%ld", n[r][0]);
    else if (dim == 2) snprintf(grid, sizeof grid, "%ldx%ld", n[r][0], n[r][1]);
    else snprintf(grid, sizeof grid, "%ldx%ldx%ld", n[r][0], n[r][1], n[r][2]);
    if (r == 0) printf("  %-14s %-11.4e %-11.4e %-6s %-11.4e %-6s\n", grid, h[r], emax[r], "-", el2[r], "-");
    else
      printf("  %-14s %-11.4e %-11.4e %-6.2f %-11.4e %-6.2f\n", grid, h[r], emax[r], order(h[r - 1], emax[r - 1], h[r], emax[r]),
             el2[r], order(h[r - 1], el2[r - 1], h[r], el2[r]));
  }

  /* The fits: both norms over all fields, then each field alone. */
  for (int c = -1; c < (ex->dof > 1 ? ex->dof : 0); c++) {
    for (int norm = 0; norm < 2; norm++) {
      const double *e = c < 0 ? (norm ? el2 : emax) : (norm ? fl2[c] : fmax[c]);
      double        p = fit(nrun, h, e);
      int           ok = fabs(p - want) <= tol; /* false for NaN */
      char          field[64] = "";

      if (c >= 0) snprintf(field, sizeof field, "field %s: ", ex->fields[c]);
      printf("mms: %s: %sfitted order %.2f (%s): %s", name, field, p, norm ? "L2-norm" : "max-norm", ok ? "ok" : "FAIL");
      if (!ok) printf(" (expected %.2f +- %.2f)", want, tol);
      printf("\n");
      failed |= !ok;
    }
  }
  return failed ? 1 : 0;
}
