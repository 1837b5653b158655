/*
** stntune.c: the autotuner of the GPU vector kernels and its cache file
** (stntune.h). Timing is wall-clock on the host around a batch of calls
** that ends with the device idle: what a solver waits for, launch costs
** included, which at small n are most of it.
*/
#include "stntune.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <petsctime.h>

#if defined(PETSC_HAVE_CUDA) && defined(PETSC_USE_REAL_DOUBLE) && !defined(PETSC_USE_COMPLEX)
  #include "sgdia_cuda.h"
  #include "stnvec.h" /* STN_CUDA_CALL */
  #include "stnvec_cuda.h"
  #include "stnvec_ref.h"


enum { TUNE_NV = 16,  /* vectors for maxpy: GMRES(30)'s average */
       /* vectors for mdot: its kernel for 17-32 vectors (stnvec_cuda.cu's groups), which carries
          71% of GMRES(30)'s MDot bytes; its best shape differs from that of 9-16 */
       TUNE_NV_MDOT = 30,
       TUNE_NV_MAX  = TUNE_NV_MDOT > TUNE_NV ? TUNE_NV_MDOT : TUNE_NV, /* the test vectors needed */
       SAMPLES = 4096 /* entries of an update's result compared, spread over the vector */ };

static const int thread_choices[] = {64, 128, 256, 512, 1024};
static const int ept_choices[]    = {1, 2, 4};
static const int bps_choices[]    = {0, 1, 2, 4, 8, 16, 32};

/* The default cache path, into buf. */
static void default_path(char *buf, size_t size)
{
  const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
  if (xdg && *xdg) snprintf(buf, size, "%s/stencilc/tuning.txt", xdg);
  else snprintf(buf, size, "%s/.cache/stencilc/tuning.txt", home && *home ? home : ".");
}

static int kernel_number(const char *name)
{
  for (int k = 0; k < STN_K_COUNT; k++)
    if (strcmp(name, StnVecKernelNames[k]) == 0) return k;
  return -1;
}

static PetscBool is_reduction(int k)
{
  return k == STN_K_DOT || k == STN_K_MDOT || k == STN_K_NORM || k == STN_K_DOTNORM2 ? PETSC_TRUE : PETSC_FALSE;
}

/* The scalars each kernel is tuned with: dyadic, so that results stay exact (stnvec_ref.h). */
static void tune_scalars(int k, double s[])
{
  const double two[] = {0.5, -0.25, 0.75};
  for (int j = 0; j < 3; j++) s[j] = two[j];
  if (k == STN_K_NORM) s[0] = 1;   /* the 2-norm */
  if (k == STN_K_SCALE) s[0] = -1; /* repeated scaling stays in range */
  if (k == STN_K_WAXPY) s[0] = -0.5;
  if (k == STN_K_MAXPY) {
    for (int j = 0; j < TUNE_NV; j++) s[j] = (j + 1) / 64.0;
    s[TUNE_NV] = 1; /* MAXPY: beta = 1 */
  }
}

typedef struct Bench {
  long    n;
  double *v[TUNE_NV_MAX + 3]; /* device test vectors 0 .. TUNE_NV_MAX + 2 */
  double  sample[SAMPLES];
  int     want_k, nwant;  /* the reference results of reduction want_k, computed once per kernel */
  double  want[STN_VEC_MAX_MULTI];
} Bench;

static int nv_of(int k)
{
  return k == STN_K_MDOT ? TUNE_NV_MDOT : k == STN_K_MAXPY ? TUNE_NV : 1;
}

static int run_once(Bench *b, int k, StnLaunch shape, const double *s, double *out)
{
  return StnVecRunShape((StnVecKernel)k, shape, b->n, nv_of(k), b->v[0], b->v[1], b->v[2], (const double *const *)&b->v[1], s, out);
}

/* Whether shape computes kernel k right: every result of a reduction, SAMPLES entries of an
   update's output (spread over it, and its last entry), equal to the reference. */
static PetscErrorCode check_shape(Bench *b, int k, StnLaunch shape, const double *s, PetscBool *ok, long *bad)
{
  double got[STN_VEC_MAX_MULTI];

  PetscFunctionBegin;
  *ok  = PETSC_TRUE;
  *bad = -1;
  STN_CUDA_CALL(StnVecFillTest(b->v[0], b->n, 0)); /* the output starts as test vector 0 */
  if (run_once(b, k, shape, s, got) != 0) { /* e.g. a block too large for the kernel */
    *ok = PETSC_FALSE;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (is_reduction(k)) {
    if (b->want_k != k) b->nwant = StnVecRefReduce(k, b->n, nv_of(k), s, b->want), b->want_k = k;
    for (int j = 0; j < b->nwant; j++)
      if (got[j] != b->want[j]) *ok = PETSC_FALSE, *bad = j;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  const long stride = b->n > SAMPLES ? b->n / SAMPLES : 1, count = b->n < SAMPLES ? b->n : SAMPLES;
  STN_CUDA_CALL(StnVecGetStrided(b->sample, b->v[0], stride, count));
  for (long m = 0; m < count; m++)
    if (b->sample[m] != StnVecRefUpdate(k, m * stride, nv_of(k), s)) {
      *ok  = PETSC_FALSE;
      *bad = m * stride;
      PetscFunctionReturn(PETSC_SUCCESS);
    }
  STN_CUDA_CALL(StnVecGetStrided(b->sample, b->v[0] + b->n - 1, 1, 1));
  if (b->sample[0] != StnVecRefUpdate(k, b->n - 1, nv_of(k), s)) *ok = PETSC_FALSE, *bad = b->n - 1;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A kernel launch as the timer makes it: 0 or a cudaError_t value. */
typedef int (*Call)(void *arg);

/* Microseconds per call: the best of three batches of about 2 ms each, timed on the host
   around the calls and the wait for the device (a first batch of one sizes the others). */
static PetscErrorCode time_calls(Call call, void *arg, double *us)
{
  PetscLogDouble t0, t1;
  int            reps = 1;

  PetscFunctionBegin;
  *us = 1e300;
  for (int trial = 0; trial < 4; trial++) {
    PetscCall(PetscTime(&t0));
    for (int r = 0; r < reps; r++) STN_CUDA_CALL(call(arg));
    STN_CUDA_CALL(StnVecWait());
    PetscCall(PetscTime(&t1));
    const double per = (t1 - t0) * 1e6 / reps;
    if (trial == 0) reps = per > 2000 ? 1 : (int)(2000 / (per > 1 ? per : 1));
    else if (per < *us) *us = per;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Whether got equals ref bit for bit (NaN where ref has NaN). */
static PetscBool same_results(const double *got, const double *ref, long n)
{
  for (long i = 0; i < n; i++)
    if (got[i] != ref[i] && !(got[i] != got[i] && ref[i] != ref[i])) return PETSC_FALSE;
  return PETSC_TRUE;
}

typedef struct ShapeRun {
  Bench        *b;
  int           k;
  StnLaunch     shape;
  const double *s;
} ShapeRun;

static int run_shape(void *arg)
{
  ShapeRun *r = (ShapeRun *)arg;
  double    out[STN_VEC_MAX_MULTI];
  return run_once(r->b, r->k, r->shape, r->s, out);
}

typedef struct Tried {
  StnLaunch shape;
  double    us; /* 1e300: rejected */
} Tried;

/* Times shape unless already tried; returns its time (1e300 if rejected). */
static PetscErrorCode try_shape(MPI_Comm comm, Bench *b, int k, StnLaunch shape, Tried *tried, int *ntried, double *us)
{
  const double *sc;
  double        s[TUNE_NV + 1];
  PetscBool     ok;
  long          bad;

  PetscFunctionBegin;
  for (int t = 0; t < *ntried; t++)
    if (tried[t].shape.threads == shape.threads && tried[t].shape.ept == shape.ept && tried[t].shape.bps == shape.bps) {
      *us = tried[t].us;
      PetscFunctionReturn(PETSC_SUCCESS);
    }
  tune_scalars(k, s);
  sc = s;
  PetscCall(check_shape(b, k, shape, sc, &ok, &bad));
  if (ok) {
    ShapeRun r = {b, k, shape, sc};
    PetscCall(time_calls(run_shape, &r, us));
  }
  else {
    *us = 1e300;
    if (bad < 0) PetscCall(PetscPrintf(comm, " [%dx%dx%d rejected: %s]", shape.threads, shape.ept, shape.bps, StnCUDALastError()));
    else PetscCall(PetscPrintf(comm, " [%dx%dx%d rejected: wrong result at %ld]", shape.threads, shape.ept, shape.bps, bad));
  }
  tried[*ntried].shape = shape;
  tried[*ntried].us    = *us;
  (*ntried)++;
  PetscFunctionReturn(PETSC_SUCCESS);
}

typedef struct Winner {
  int       k;
  StnLaunch shape;
  double    us, default_us;
} Winner;

/* Coordinate search for kernel k: sweep threads, then elements per thread, then blocks per SM,
   each from the best so far; twice. */
static PetscErrorCode tune_kernel(MPI_Comm comm, Bench *b, int k, Winner *w, int *evaluated)
{
  Tried     tried[128];
  int       ntried = 0;
  StnLaunch best   = StnVecGetLaunch((StnVecKernel)k, 0); /* the default: no shape is set yet */
  double    best_us, us;

  PetscFunctionBegin;
  PetscCall(try_shape(comm, b, k, best, tried, &ntried, &best_us));
  w->default_us = best_us;
  for (int round = 0; round < 2; round++)
    for (int dim = 0; dim < 3; dim++) {
      const int *choice = dim == 0 ? thread_choices : dim == 1 ? ept_choices : bps_choices;
      const int  count  = dim == 0 ? 5 : dim == 1 ? 3 : 7;
      for (int c = 0; c < count; c++) {
        StnLaunch s = best;
        if (dim == 0) s.threads = choice[c];
        if (dim == 1) s.ept = choice[c];
        if (dim == 2) s.bps = choice[c];
        if (dim == 2 && s.bps == 0 && is_reduction(k)) continue; /* reductions cap at 32 per SM anyway */
        PetscCall(try_shape(comm, b, k, s, tried, &ntried, &us));
        if (us < best_us) best = s, best_us = us;
      }
    }
  w->k     = k;
  w->shape = best;
  w->us    = best_us;
  *evaluated += ntried;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* One line of the cache: a kernel's shape for a size class (the shape's text is the kernel's own:
   "threads ept bps" for the vector kernels, "threads streaming" for the SG-DIA product). */
typedef struct Line {
  char   kernel[64], shape[64];
  int    cls;
  double us, default_us;
} Line;

/* Writes the cache: its old lines but those the new ones replace, then the new ones. Through a
   temporary file renamed into place, so a reader never sees half a file. */
static PetscErrorCode save_lines(const char *path, const char *key, const Line *w, int nw)
{
  char  tmp[PETSC_MAX_PATH_LEN + 32], dir[PETSC_MAX_PATH_LEN], line[1024];
  FILE *in, *out;

  PetscFunctionBegin;
  PetscCall(PetscStrncpy(dir, path, sizeof dir));
  for (char *p = dir + 1; *p; p++) /* mkdir -p of the directory */
    if (*p == '/') {
      *p = '\0';
      (void)mkdir(dir, 0777);
      *p = '/';
    }
  snprintf(tmp, sizeof tmp, "%s.%d.tmp", path, (int)getpid());
  out = fopen(tmp, "w");
  PetscCheck(out, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "cannot write the tuning cache '%s': %s", tmp, strerror(errno));
  fprintf(out, "# stencilc tuning cache: device, kernel, size class (log2 n), shape, tuned us, default us\n");
  if ((in = fopen(path, "r"))) {
    while (fgets(line, sizeof line, in)) {
      char lkey[512], kname[64];
      int  lcls;
      if (line[0] == '#' || sscanf(line, "%511[^\t]\t%63[^\t]\t%d", lkey, kname, &lcls) != 3) continue;
      PetscBool replaced = PETSC_FALSE;
      for (int i = 0; i < nw; i++)
        if (lcls == w[i].cls && strcmp(lkey, key) == 0 && strcmp(kname, w[i].kernel) == 0) replaced = PETSC_TRUE;
      if (!replaced) fputs(line, out);
    }
    fclose(in);
  }
  for (int i = 0; i < nw; i++) fprintf(out, "%s\t%s\t%d\t%s\t%.2f\t%.2f\n", key, w[i].kernel, w[i].cls, w[i].shape, w[i].us, w[i].default_us);
  PetscCheck(fclose(out) == 0 && rename(tmp, path) == 0, PETSC_COMM_SELF, PETSC_ERR_FILE_WRITE, "cannot write the tuning cache '%s': %s",
             path, strerror(errno));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode save(const char *path, const char *key, int cls, const Winner *w, int nw)
{
  Line lines[STN_K_COUNT];

  PetscFunctionBegin;
  for (int i = 0; i < nw; i++) {
    PetscCall(PetscStrncpy(lines[i].kernel, StnVecKernelNames[w[i].k], sizeof lines[i].kernel));
    snprintf(lines[i].shape, sizeof lines[i].shape, "%d %d %d", w[i].shape.threads, w[i].shape.ept, w[i].shape.bps);
    lines[i].cls        = cls;
    lines[i].us         = w[i].us;
    lines[i].default_us = w[i].default_us;
  }
  PetscCall(save_lines(path, key, lines, nw));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode StnTuneVectorKernels(MPI_Comm comm, PetscInt n, const char *path)
{
  char           key[512], defpath[PETSC_MAX_PATH_LEN];
  Bench          b;
  Winner         w[STN_K_COUNT];
  int            nw = 0, evaluated = 0;
  PetscLogDouble t0, t;
  PetscMPIInt    rank;

  PetscFunctionBegin;
  if (!path) default_path(defpath, sizeof defpath), path = defpath;
  STN_CUDA_CALL(StnVecDeviceKey(key, sizeof key));
  PetscCall(PetscMemzero(&b, sizeof b));
  b.n      = n < 1 ? 1 : (long)n;
  b.want_k = -1;
  for (int j = 0; j < TUNE_NV_MAX + 3; j++) {
    STN_CUDA_CALL(StnCUDAMalloc((void **)&b.v[j], (size_t)b.n * sizeof(double)));
    STN_CUDA_CALL(StnVecFillTest(b.v[j], b.n, j));
  }
  PetscCall(PetscPrintf(comm, "stencilc autotune: %s, n = %ld, %d kernels\n", key, b.n, (int)STN_K_COUNT));
  PetscCall(PetscTime(&t0));
  for (int k = 0; k < STN_K_COUNT; k++) {
    PetscCall(PetscPrintf(comm, "  [%2d/%d] %-13s", k + 1, (int)STN_K_COUNT, StnVecKernelNames[k]));
    PetscCall(tune_kernel(comm, &b, k, &w[nw], &evaluated));
    STN_CUDA_CALL(StnVecSetLaunch((StnVecKernel)k, StnVecSizeClass(b.n), w[nw].shape));
    PetscCall(PetscTime(&t));
    PetscCall(PetscPrintf(comm, " %4d threads x %d x %2d/SM: %9.2f us (default %9.2f us, %.2fx); %5.1f s, about %.0f s left\n",
                          w[nw].shape.threads, w[nw].shape.ept, w[nw].shape.bps, w[nw].us, w[nw].default_us, w[nw].default_us / w[nw].us,
                          t - t0, (t - t0) / (k + 1) * (STN_K_COUNT - k - 1)));
    nw++;
  }
  for (int j = 0; j < TUNE_NV_MAX + 3; j++) STN_CUDA_CALL(StnCUDAFree(b.v[j]));
  PetscCall(PetscTime(&t));
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  if (rank == 0) PetscCall(save(path, key, StnVecSizeClass(b.n), w, nw));
  PetscCall(PetscPrintf(comm, "stencilc autotune: %d shapes timed in %.1f s; saved in %s\n", evaluated, t - t0, path));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode StnTuneLoad(MPI_Comm comm, const char *path, PetscInt *count)
{
  char  key[512], defpath[PETSC_MAX_PATH_LEN], line[1024];
  FILE *in;

  PetscFunctionBegin;
  if (count) *count = 0;
  if (!path) default_path(defpath, sizeof defpath), path = defpath;
  STN_CUDA_CALL(StnVecDeviceKey(key, sizeof key));
  if (!(in = fopen(path, "r"))) PetscFunctionReturn(PETSC_SUCCESS); /* no cache yet: the defaults */
  while (fgets(line, sizeof line, in)) {
    char      lkey[512], kname[64];
    int       cls, k;
    StnLaunch s;
    if (line[0] == '#' || sscanf(line, "%511[^\t]\t%63[^\t]\t%d\t%d %d %d", lkey, kname, &cls, &s.threads, &s.ept, &s.bps) != 6) continue;
    if (strcmp(lkey, key) != 0 || (k = kernel_number(kname)) < 0 || !StnVecLaunchValid(s)) continue;
    if (StnVecSetLaunch((StnVecKernel)k, cls, s) == 0 && count) (*count)++;
  }
  fclose(in);
  (void)comm;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* What StnTuneSetUp read: whether to tune, and the cache, for the other kernels' tuners. */
static PetscBool tune_requested;
static char      tune_path[PETSC_MAX_PATH_LEN];

PetscBool StnTuneRequested(void)
{
  return tune_requested;
}

/* The shape text of kernel for length n on this device from the cache; *found false if none. */
static PetscErrorCode lookup(const char *kernel, long n, char *shape, size_t size, PetscBool *found)
{
  char  key[512], line[1024];
  FILE *in;

  PetscFunctionBegin;
  *found = PETSC_FALSE;
  if (!tune_path[0]) default_path(tune_path, sizeof tune_path);
  STN_CUDA_CALL(StnVecDeviceKey(key, sizeof key));
  if (!(in = fopen(tune_path, "r"))) PetscFunctionReturn(PETSC_SUCCESS);
  while (fgets(line, sizeof line, in)) {
    char lkey[512], kname[64], lshape[64];
    int  cls;
    if (line[0] == '#' || sscanf(line, "%511[^\t]\t%63[^\t]\t%d\t%63[^\t]", lkey, kname, &cls, lshape) != 4) continue;
    if (strcmp(lkey, key) == 0 && strcmp(kname, kernel) == 0 && cls == StnVecSizeClass(n)) {
      PetscCall(PetscStrncpy(shape, lshape, size));
      *found = PETSC_TRUE;
    }
  }
  fclose(in);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static void sgdia_kernel_name(const StnBox *box, char *name, size_t size)
{
  snprintf(name, size, "sgdia_dof%d_sten%d", box->dof, box->nsten);
}

static long sgdia_rows(const StnBox *box)
{
  return (long)box->xm * (box->dim > 1 ? box->ym : 1) * (box->dim > 2 ? box->zm : 1) * box->dof;
}

/* Saves the winner of one kernel (shape text as lookup() reads it) for length n on this device. */
static PetscErrorCode record(MPI_Comm comm, const char *kernel, long n, const char *shape, double us, double default_us)
{
  char        key[512];
  PetscMPIInt rank;
  Line        line;

  PetscFunctionBegin;
  STN_CUDA_CALL(StnVecDeviceKey(key, sizeof key));
  PetscCall(PetscStrncpy(line.kernel, kernel, sizeof line.kernel));
  PetscCall(PetscStrncpy(line.shape, shape, sizeof line.shape));
  line.cls        = StnVecSizeClass(n);
  line.us         = us;
  line.default_us = default_us;
  if (!tune_path[0]) default_path(tune_path, sizeof tune_path);
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  if (rank == 0) PetscCall(save_lines(tune_path, key, &line, 1));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Whether the product loads the matrix as streaming data: when it is more than half the L2
   (StnTuneSGDIA says why). */
static int streams_matrix(const StnBox *box)
{
  return 8.0 * sgdia_rows(box) * box->nsten * box->dof > 0.5 * (double)StnCUDAL2Bytes();
}

PetscErrorCode StnTuneApplySGDIA(const StnBox *box)
{
  char      name[64], shape[64];
  PetscBool found;
  int       threads, streaming;

  PetscFunctionBegin;
  (void)StnSGDIASetStreamingLoads(streams_matrix(box)); /* untuned: the load policy StnTuneSGDIA would choose */
  sgdia_kernel_name(box, name, sizeof name);
  PetscCall(lookup(name, sgdia_rows(box), shape, sizeof shape, &found));
  if (found && sscanf(shape, "%d %d", &threads, &streaming) == 2 && StnSGDIASetBlockThreads(threads) >= 0) StnSGDIASetStreamingLoads(streaming);
  PetscFunctionReturn(PETSC_SUCCESS);
}

typedef struct ProductRun {
  const StnBox *box;
  const double *A, *x;
  int           ghosted;
  double       *y;
} ProductRun;

static int run_product(void *arg)
{
  ProductRun *r = (ProductRun *)arg;
  return StnSGDIAMultCUDA(r->box, r->A, r->x, r->ghosted, NULL, r->y, 0, NULL);
}

/* The product as a Krylov iteration runs it: after the basis vectors went through L2. */
static int run_product_cold(void *arg)
{
  const int rc = StnCUDAEvictL2();
  return rc ? rc : run_product(arg);
}

static int evict_only(void *arg)
{
  (void)arg;
  return StnCUDAEvictL2();
}

/* The SG-DIA product's block size, timed with L2 evicted before each product (in a solve the
   Krylov vectors pass through L2 between two products; a matrix kept hot by repeating the
   product alone would time a case that never happens). The load policy is not timed but chosen:
   a matrix of more than half the L2 is loaded as streaming data, so that it does not evict the
   vectors the Gram-Schmidt kernels read next (it would not survive to the next product anyway);
   on the cavity at 256^2 (42 MB, H200: 50 MB L2) this gave 54 us per GMRES iteration against
   58 with cached loads (bench/probes/sgdia_loads_gpu.sh). A smaller matrix is cached. */
PetscErrorCode StnTuneSGDIA(MPI_Comm comm, const StnBox *box, const double *A, const double *x, int ghosted, double *y)
{
  static const int threads[] = {128, 256, 512, 1024};
  const long       nrows     = sgdia_rows(box);
  const double     mbytes    = 8.0 * nrows * box->nsten * box->dof / 1e6;
  const int        stream    = streams_matrix(box);
  ProductRun       run       = {box, A, x, ghosted, y};
  double          *ref, *got, best_us = 1e300, default_us = 0, evict_us;
  int              best_t = 256, tried = 0;
  char             name[64], shape[64];
  PetscLogDouble   start, end;

  PetscFunctionBegin;
  if (nrows < 1) PetscFunctionReturn(PETSC_SUCCESS);
  sgdia_kernel_name(box, name, sizeof name);
  PetscCall(PetscMalloc2(nrows, &ref, nrows, &got));
  PetscCall(PetscPrintf(comm, "stencilc autotune: the SG-DIA product (%s, %ld rows, %.0f MB: %s loads): 4 block sizes, L2 evicted before each product\n", name, nrows, mbytes,
                        stream ? "streaming" : "cached"));
  PetscCall(PetscTime(&start));
  (void)StnSGDIASetBlockThreads(256);
  (void)StnSGDIASetStreamingLoads(0);
  STN_CUDA_CALL(run_product(&run));
  STN_CUDA_CALL(StnCUDAMemcpyDtoH(ref, y, (size_t)nrows * sizeof(double))); /* the default's product, the reference */
  (void)StnSGDIASetStreamingLoads(stream);
  PetscCall(time_calls(evict_only, NULL, &evict_us));
  for (int t = 0; t < 4; t++) {
    double us;
    (void)StnSGDIASetBlockThreads(threads[t]);
    STN_CUDA_CALL(run_product(&run));
    STN_CUDA_CALL(StnCUDAMemcpyDtoH(got, y, (size_t)nrows * sizeof(double)));
    if (!same_results(got, ref, nrows)) {
      PetscCall(PetscPrintf(comm, "  %4d threads: rejected (a product differs from the default's)\n", threads[t]));
      continue;
    }
    PetscCall(time_calls(run_product_cold, &run, &us));
    us -= evict_us;
    tried++;
    if (threads[t] == 256) default_us = us;
    PetscCall(PetscPrintf(comm, "  %4d threads: %9.2f us\n", threads[t], us));
    if (us < best_us) best_us = us, best_t = threads[t];
  }
  (void)StnSGDIASetBlockThreads(best_t);
  PetscCall(PetscFree2(ref, got));
  PetscCall(PetscTime(&end));
  PetscCall(PetscPrintf(comm, "stencilc autotune: SG-DIA product: %d threads, %s loads, %.2f us (default %.2f us, %.2fx); %d shapes in %.1f s\n", best_t,
                        stream ? "streaming" : "cached", best_us, default_us, default_us / best_us, tried, end - start));
  snprintf(shape, sizeof shape, "%d %d", best_t, stream);
  PetscCall(record(comm, name, nrows, shape, best_us, default_us));
  PetscFunctionReturn(PETSC_SUCCESS);
}

typedef struct LaunchRun {
  StnLaunchFn    run;
  void          *args;
  StnKernelShape shape;
} LaunchRun;

static int run_launch(void *arg)
{
  LaunchRun *r = (LaunchRun *)arg;
  return r->run(r->args, &r->shape);
}

void StnKernelShapeDefault(int dim, int xm, StnKernelShape *shape)
{
  int bx = 256;

  if (dim > 1) { /* the tile width that leaves the fewest idle threads at the rows' ends: 257 or
                    1025 points in x take 32 (one idle block in 9 or 33), not 256 (half idle) */
    long best = -1;
    for (int w = 256; w >= 32; w /= 2) {
      const long idle = (long)(xm + w - 1) / w * w - xm;
      if (best < 0 || idle < best) best = idle, bx = w;
    }
  }
  shape->bx    = bx;
  shape->by    = dim > 1 ? 256 / bx : 1;
  shape->sweep = 1;
}

/* The shapes the tuner tries for a kernel over an xm x ym x zm box: in 1D, 64 to 1024 threads;
   in 2D and 3D, tiles of bx = 32..256 by by = 1..8 threads (64 to 1024 in all, bx no wider than
   the box's rows rounded up to a warp), each sweeping 1, 2, 4 or 8 points along the slowest
   direction (no more than it has). The default first. Returns how many, at most max. */
static int launch_candidates(int dim, const int m[3], StnKernelShape *c, int max)
{
  static const int flat[] = {64, 128, 256, 512, 1024}, bxs[] = {32, 64, 128, 256}, bys[] = {1, 2, 4, 8}, sweeps[] = {1, 2, 4, 8};
  const int        slow = dim == 3 ? m[2] : m[1], row = (m[0] + 31) / 32 * 32;
  int              n    = 0;

  StnKernelShapeDefault(dim, m[0], &c[n++]);
  if (dim == 1) {
    for (int t = 0; t < 5 && n < max; t++)
      if (flat[t] != c[0].bx) c[n++] = (StnKernelShape){flat[t], 1, 1};
    return n;
  }
  for (int a = 0; a < 4; a++)
    for (int b = 0; b < 4; b++)
      for (int s = 0; s < 4 && n < max; s++) {
        const StnKernelShape t = {bxs[a], bys[b], sweeps[s]};
        if (t.bx * t.by < 64 || (t.bx > row && t.bx > 32) || (t.sweep > 1 && t.sweep > slow)) continue;
        if (t.bx == c[0].bx && t.by == c[0].by && t.sweep == c[0].sweep) continue;
        c[n++] = t;
      }
  return n;
}

PetscErrorCode StnTuneLaunch(MPI_Comm comm, const char *kernel, int dim, int xm, int ym, int zm, double *out, long nout, StnLaunchFn run, void *args, StnKernelShape *shape)
{
  const int      m[3]    = {xm, ym, zm};
  const long     npoints = (long)xm * ym * zm;
  StnKernelShape cand[80], best;
  char           text[64];
  PetscBool      found;
  double        *ref, *got, best_us = 1e300, default_us = 0;
  int            ncand, tried = 0;
  PetscLogDouble start, end;

  PetscFunctionBegin;
  if (shape->bx <= 0) StnKernelShapeDefault(dim, xm, shape);
  PetscCall(lookup(kernel, npoints, text, sizeof text, &found));
  if (found) { /* "bx by sweep"; a cache of earlier versions holds "threads" alone: a flat block */
    StnKernelShape s = {0, 1, 1};
    const int      got_n = sscanf(text, "%d %d %d", &s.bx, &s.by, &s.sweep);
    if (got_n == 1 && dim > 1) PetscFunctionReturn(PETSC_SUCCESS); /* a flat block size has no tile to take: the default */
    if (dim == 1) s.by = s.sweep = 1;
    if ((got_n == 1 || got_n == 3) && s.bx >= 32 && s.bx % 32 == 0 && s.by >= 1 && s.bx * s.by <= 1024 && s.sweep >= 1 && s.sweep <= 64) {
      *shape = s;
      PetscFunctionReturn(PETSC_SUCCESS);
    }
  }
  if (!tune_requested || npoints < 1 || nout < 1) PetscFunctionReturn(PETSC_SUCCESS);
  ncand = launch_candidates(dim, m, cand, (int)(sizeof cand / sizeof cand[0]));
  best  = cand[0];
  PetscCall(PetscMalloc2(nout, &ref, nout, &got));
  PetscCall(PetscTime(&start));
  STN_CUDA_CALL(run(args, &cand[0]));
  STN_CUDA_CALL(StnCUDAMemcpyDtoH(ref, out, (size_t)nout * sizeof(double)));
  PetscCall(PetscPrintf(comm, "stencilc autotune: %s (%ld points): %d launch shapes (threads bx x by, points swept per thread)\n", kernel, npoints, ncand));
  for (int c = 0; c < ncand; c++) {
    LaunchRun r = {run, args, cand[c]};
    double    us;
    PetscCall(PetscPrintf(comm, "  [%2d/%d] %4d x %d, sweep %d: ", c + 1, ncand, cand[c].bx, cand[c].by, cand[c].sweep));
    const int rc = run(args, &cand[c]);
    if (rc != 0) { /* too many registers for this block size */
      (void)StnCUDARecordError(rc, "the launch");
      PetscCall(PetscPrintf(comm, "cannot launch (%s)\n", StnCUDALastError()));
      continue;
    }
    STN_CUDA_CALL(StnCUDAMemcpyDtoH(got, out, (size_t)nout * sizeof(double)));
    if (!same_results(got, ref, nout)) {
      PetscCall(PetscPrintf(comm, "rejected (its output differs from the default's)\n"));
      continue;
    }
    PetscCall(time_calls(run_launch, &r, &us));
    tried++;
    if (c == 0) default_us = us;
    if (us < best_us) best_us = us, best = cand[c];
    PetscCall(PetscPrintf(comm, "%9.2f us\n", us));
  }
  STN_CUDA_CALL(run(args, &best)); /* leave the output as the caller expects it */
  *shape = best;
  PetscCall(PetscFree2(ref, got));
  PetscCall(PetscTime(&end));
  PetscCall(PetscPrintf(comm, "stencilc autotune: %s: %d x %d, sweep %d: %.2f us (default %d x %d, sweep 1: %.2f us, %.2fx); %d shapes in %.1f s\n", kernel, best.bx, best.by,
                        best.sweep, best_us, cand[0].bx, cand[0].by, default_us, default_us / best_us, tried, end - start));
  snprintf(text, sizeof text, "%d %d %d", best.bx, best.by, best.sweep);
  PetscCall(record(comm, kernel, npoints, text, best_us, default_us));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode StnTuneSetUp(DM dm)
{
  MPI_Comm  comm = PetscObjectComm((PetscObject)dm);
  char      path[PETSC_MAX_PATH_LEN];
  PetscBool tune = PETSC_FALSE, given;
  PetscInt  n, loaded;
  Vec       v;

  PetscFunctionBegin;
  default_path(path, sizeof path);
  PetscOptionsBegin(comm, NULL, "stencilc kernel tuning", "");
  PetscCall(PetscOptionsBool("-stn_autotune", "Tune the GPU vector kernels for this vector length and save the result", NULL, tune, &tune, NULL));
  PetscCall(PetscOptionsString("-stn_tune_cache", "The tuning cache file", NULL, path, path, sizeof path, &given));
  PetscOptionsEnd();
  if (tune) {
    PetscCall(DMGetGlobalVector(dm, &v));
    PetscCall(VecGetLocalSize(v, &n));
    PetscCall(DMRestoreGlobalVector(dm, &v));
    PetscCall(StnTuneVectorKernels(comm, n, path));
  }
  PetscCall(StnTuneLoad(comm, path, &loaded));
  PetscCall(PetscInfo(dm, "%" PetscInt_FMT " tuned kernel shapes from %s\n", loaded, path));
  tune_requested = tune;
  PetscCall(PetscStrncpy(tune_path, path, sizeof tune_path));
  PetscFunctionReturn(PETSC_SUCCESS);
}

#else

PetscErrorCode StnTuneSetUp(DM dm)
{
  (void)dm;
  return PETSC_SUCCESS;
}

PetscBool StnTuneRequested(void)
{
  return PETSC_FALSE;
}

PetscErrorCode StnTuneVectorKernels(MPI_Comm comm, PetscInt n, const char *path)
{
  (void)n;
  (void)path;
  SETERRQ(comm, PETSC_ERR_SUP, "tuning needs a PETSc with CUDA, real double precision");
}

PetscErrorCode StnTuneLoad(MPI_Comm comm, const char *path, PetscInt *count)
{
  (void)comm;
  (void)path;
  if (count) *count = 0;
  return PETSC_SUCCESS;
}

#endif
