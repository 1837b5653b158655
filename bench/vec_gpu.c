/* bench/vec_gpu.c: stencilc's GPU vector kernels (runtime/stnvec_cuda.cu, plugged into PETSc as
   VECSTNCUDA by runtime/stnvec.c) against PETSc's own CUDA vectors and cuBLAS, on one GPU, with
   the triad measured in the same run as the bandwidth reference; and the tuner
   (runtime/stntune.c): tuned launch shapes against the defaults, and what the search costs.
   Built and run by bench/vec_gpu.sh.

   Options:
     -out DIR          where the CSV, markdown and tuning cache go (default .)
     -sizes N,N,...    vector lengths (default 100000,1000000,10000000,100000000)
     -nv K             vectors of MDot and MAXPY (default 30, at most 32)
     -batch_ms T       each timed batch runs about T ms (default 10)
     -batches B        timed batches per measurement, the median counts (default 5)
     -no_tune          no tuning: the default launch shapes throughout
     -tune_cache FILE  no tuning: the shapes of FILE (StnTuneLoad) throughout
     -tune_sizes N,... tune at these lengths only (default: every size); others keep defaults
     -ref_max N        CPU references of the reductions up to this n (default 1000000); above,
                       each result is checked against PETSc's

   For each n, in this order, freeing each phase's memory before the next (n = 1e8: 34 vectors,
   27 GB, at most at once; the tuner's 33 vectors, 26 GB, come and go before them):
   1. tune: StnTuneVectorKernels(n) into DIR/vec_gpu_tuning.txt (timed: the search's cost); the
      cache's lines for this device and size class give the tuner's own figures (30 vectors
      for mdot, 16 for maxpy: its TUNE_NV_MDOT and TUNE_NV).
   2. raw device arrays (MDot's and MAXPY's vectors contiguous, column-major n x nv):
      - the triad w = x + 1.5 y (bench/vec_gpu_kernels.cu): the bandwidth reference at this n;
      - each of the 13 kernels through StnVecRunShape with the default shape and with the shape
        now in force (the tuned one), nv vectors for mdot and maxpy;
      - "ours-raw": each operation through the plain-C API (StnVecDot, ...), no PETSc;
      - cuBLAS, with pointer mode host (reductions return to the host as PETSc's interface
        needs): ddot, dgemv (transposed, then the nv results copied to the host) for MDot,
        dnrm2, dasum, idamax (then the entry fetched) for NormInf, daxpy, dgemv (not
        transposed; coefficients resident on the device) for MAXPY, dscal, dcopy, ddgmm (a
        diagonal times a column) for PointwiseMult. cuBLAS has no AYPX, WAXPY, Set, AXPBYPCZ
        or DotNorm2 in one call.
   3. "ours": VECSTNCUDA vectors through PETSc's API (VecDot, VecMDot, VecNorm, ...: what a
      solver calls, host results included); StnVecCalls must count exactly one of our kernels
      per call, or the measurement is flagged.
   4. "petsc": VECCUDA vectors, the same calls; StnVecCalls must not move.

   Timing: wall clock around a batch of back-to-back calls that ends with cudaDeviceSynchronize
   (reductions wait for their result anyway; updates are asynchronous, so a batch measures
   their throughput, launches included), after 3 warm-up calls and a 10-call calibration that
   sizes the batches; the median of the batches counts. VecNorm caches norms, so the vector's
   state is bumped before each call (PetscObjectStateIncrease; else PETSc answers from the cache).

   Checks, before each measurement, on fresh inputs (bench/vec_gpu_kernels.cu: +-[1, 2), random,
   never 0, known exactly on the host): one call, then updates: 4096 entries spread over the
   output and its last entry against a CPU evaluation (|error| <= 1e-13 * sum of the terms'
   magnitudes; Set and Copy exact); reductions: against a CPU sum in long double for n <= -ref_max
   (|error| <= 1e-12 * sum of the terms' magnitudes; the max-norm exact), above it against
   PETSc's result (the same bound with 2.25 n, the expected sum of magnitudes, for dot
   products). A failed check or a failed call is reported and the run goes on; the exit status
   is then 1.

   Bytes (the ideal algorithm's, in units of 8n): Dot 2, MDot nv+1, Norm 1, AXPY 3, AYPX 3,
   MAXPY nv+2, WAXPY 3, Scale 2, Set 1, Copy 2, PointwiseMult 3, AXPBYPCZ 4, DotNorm2 2;
   triad 3. TB/s = bytes / time. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <petscdevice_cuda.h>
#include <petscvec.h>
#include <petsc/private/petscimpl.h> /* PetscObjectStateIncrease */

#include "sgdia_cuda.h" /* StnCUDALastError */
#include "stntune.h"
#include "stnvec.h"
#include "stnvec_cuda.h"

/* bench/vec_gpu_kernels.cu */
double VecGpuValue(unsigned seed, long i);
int    VecGpuFill(double *x, long n, unsigned seed);
int    VecGpuTriad(double *a, const double *b, const double *c, double s, long n);

static const char help[] = "stencilc's GPU vector kernels against PETSc's CUDA vectors and cuBLAS (see the comment at the top of bench/vec_gpu.c).\n";

#define CUDA_CHK(call) \
  do { \
    cudaError_t e_ = (call); \
    PetscCheck(e_ == cudaSuccess, PETSC_COMM_SELF, PETSC_ERR_LIB, "%s: %s", #call, cudaGetErrorString(e_)); \
  } while (0)
#define BLAS_CHK(call) \
  do { \
    cublasStatus_t e_ = (call); \
    PetscCheck(e_ == CUBLAS_STATUS_SUCCESS, PETSC_COMM_SELF, PETSC_ERR_LIB, "%s: %s", #call, cublasGetStatusString(e_)); \
  } while (0)
#define STN_CHK(call) \
  do { \
    PetscCheck((call) == 0, PETSC_COMM_SELF, PETSC_ERR_LIB, "%s: %s", #call, StnCUDALastError()); \
  } while (0)

enum { OP_DOT, OP_MDOT, OP_NORM2, OP_NORM1, OP_NORMINF, OP_AXPY, OP_AYPX, OP_MAXPY, OP_WAXPY, OP_SCALE, OP_SET, OP_COPY, OP_PMULT, OP_AXPBYPCZ, OP_DOTNORM2, NOPS };
static const char *const op_name[NOPS] = {"Dot", "MDot", "Norm2", "Norm1", "NormInf", "AXPY", "AYPX", "MAXPY", "WAXPY", "Scale", "Set", "Copy", "PointwiseMult", "AXPBYPCZ", "DotNorm2"};
/* cuBLAS's routine for each operation, NULL: none in one call */
static const char *const blas_name[NOPS] = {"ddot", "dgemv T + copy", "dnrm2", "dasum", "idamax + fetch", "daxpy", NULL, "dgemv N", NULL, "dscal", NULL, "dcopy", "ddgmm", NULL, NULL};
/* the tuner's kernel behind each operation; -1: Copy, a cudaMemcpyAsync */
static const int op_kernel[NOPS] = {STN_K_DOT, STN_K_MDOT, STN_K_NORM, STN_K_NORM, STN_K_NORM, STN_K_AXPY, STN_K_AYPX, STN_K_MAXPY, STN_K_WAXPY, STN_K_SCALE, STN_K_SET, -1, STN_K_PMULT, STN_K_AXPBYPCZ, STN_K_DOTNORM2};

enum { IMP_OURS, IMP_PETSC, IMP_CUBLAS, IMP_RAW, NIMP };
static const char *const imp_name[NIMP] = {"ours", "petsc", "cublas", "ours-raw"};

enum { MAXN = 8, MAX_BATCHES = 63, SAMPLES = 4096 };
enum { SEED_X = 1, SEED_Y = 2, SEED_W = 3, SEED_Z = 4, SEED_V = 10 /* + j: MDot's and MAXPY's vector j */ };

/* The operations' scalars: no update lets the values run away over 10^5 repetitions. */
#define S_AXPY  0.5
#define S_AYPX  0.5
#define S_WAXPY 0.75
#define S_SCALE (1.0 - 0x1p-20)
#define S_SET   1.25
#define S_A     0.25 /* AXPBYPCZ */
#define S_B     0.5
#define S_C     0.5
#define S_TRIAD 1.5

static int is_reduction(int op)
{
  return op == OP_DOT || op == OP_MDOT || op == OP_NORM2 || op == OP_NORM1 || op == OP_NORMINF || op == OP_DOTNORM2;
}

typedef struct {
  long n;
  int  nv;
  /* PETSc vectors (ours, petsc) */
  Vec x, y, w, z, *V;
  /* raw device arrays (ours-raw, cublas, the triad and the shapes): V contiguous, vector j at dV + j n */
  double        *dx, *dy, *dw, *dz, *dV, *dalpha, *dres;
  const double  *Vp[STN_VEC_MAX_MULTI];
  double        *hres; /* pinned, STN_VEC_MAX_MULTI */
  cublasHandle_t blas;
  double         alpha[STN_VEC_MAX_MULTI];
  double         r[STN_VEC_MAX_MULTI]; /* a reduction's results */
} Ctx;

typedef struct {
  int       have, failed; /* measured; a call failed */
  double    med, min;     /* us per call */
  long      reps;
  int       ok; /* the check passed */
  double    err;
  double    val[STN_VEC_MAX_MULTI]; /* a reduction's results on fresh inputs */
  int       nval;
  StnLaunch shape; /* ours: the launch shape in force */
  char      note[160];
} Res;

typedef struct {
  StnLaunch def, tuned;
  double    def_us, tuned_us; /* re-measured here, nv vectors for mdot and maxpy */
  int       failed_def, failed_tuned;
  double    tuner_def_us, tuner_us; /* the tuner's own, from the cache */
  int       have_tuner;
} TuneRes;

static Res     res[MAXN][NIMP][NOPS];
static TuneRes tune_res[MAXN][STN_K_COUNT];
static double  tune_s[MAXN];
static int     tune_state[MAXN]; /* 0 not tuned, 1 tuned, -1 the tuner failed */
static double  triad_us[MAXN];
static int     triad_ok[MAXN];
static int     failures;

static double now_us(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e6 + t.tv_nsec * 1e-3;
}

static const char *fmt_n(long n, char *buf, size_t size)
{
  long p = 1;
  int  e = 0;
  while (p < n) p *= 10, e++;
  if (p == n && e > 0) snprintf(buf, size, "1e%d", e);
  else snprintf(buf, size, "%ld", n);
  return buf;
}

static const char *fmt_shape(StnLaunch s, char *buf, size_t size)
{
  snprintf(buf, size, "%dx%dx%d", s.threads, s.ept, s.bps);
  return buf;
}

static double op_vectors(int op, int nv)
{
  switch (op) {
  case OP_DOT: return 2;
  case OP_MDOT: return nv + 1;
  case OP_NORM2:
  case OP_NORM1:
  case OP_NORMINF: return 1;
  case OP_AXPY:
  case OP_AYPX:
  case OP_WAXPY:
  case OP_PMULT: return 3;
  case OP_MAXPY: return nv + 2;
  case OP_SCALE:
  case OP_COPY:
  case OP_DOTNORM2: return 2;
  case OP_SET: return 1;
  case OP_AXPBYPCZ: return 4;
  default: return 0;
  }
}

static double tbs(double vectors, long n, double us)
{
  return us > 0 ? vectors * 8.0 * (double)n / (us * 1e6) : 0;
}

/* ---------------------------------------------------------------------------------------------
   The markdown output, gathered to print last and to write to a file
   --------------------------------------------------------------------------------------------- */

static char  *md_buf;
static size_t md_len, md_cap;

static void md(const char *fmt, ...)
{
  va_list ap;
  int     need;

  va_start(ap, fmt);
  need = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (need < 0) return;
  if (md_len + (size_t)need + 1 > md_cap) {
    size_t cap = md_cap ? md_cap : 1 << 16;
    while (md_len + (size_t)need + 1 > cap) cap *= 2;
    char *nb = realloc(md_buf, cap);
    if (!nb) return;
    md_buf = nb, md_cap = cap;
  }
  va_start(ap, fmt);
  vsnprintf(md_buf + md_len, md_cap - md_len, fmt, ap);
  va_end(ap);
  md_len += (size_t)need;
}

/* ---------------------------------------------------------------------------------------------
   Timing
   --------------------------------------------------------------------------------------------- */

typedef PetscErrorCode (*CallFn)(void *);

static double g_batch_us = 10000;
static long   g_ref_max  = 1000000;
static int    g_batches  = 5;

static int cmp_double(const void *a, const void *b)
{
  const double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* us per call of fn(arg): the median and the best of g_batches batches; *calls: how many calls it made. */
static PetscErrorCode time_calls(CallFn fn, void *arg, double *med, double *min, long *reps_out, long *calls)
{
  double t[MAX_BATCHES], t0;
  long   reps;

  PetscFunctionBeginUser;
  for (int i = 0; i < 3; i++) PetscCall(fn(arg));
  CUDA_CHK(cudaDeviceSynchronize());
  t0 = now_us();
  for (int i = 0; i < 10; i++) PetscCall(fn(arg));
  CUDA_CHK(cudaDeviceSynchronize());
  const double per = (now_us() - t0) / 10;
  reps             = (long)(g_batch_us / (per > 0.5 ? per : 0.5));
  if (reps < 3) reps = 3;
  if (reps > 200000) reps = 200000;
  for (int b = 0; b < g_batches; b++) {
    t0 = now_us();
    for (long r = 0; r < reps; r++) PetscCall(fn(arg));
    CUDA_CHK(cudaDeviceSynchronize());
    t[b] = (now_us() - t0) / (double)reps;
  }
  qsort(t, (size_t)g_batches, sizeof t[0], cmp_double);
  *med      = g_batches % 2 ? t[g_batches / 2] : 0.5 * (t[g_batches / 2 - 1] + t[g_batches / 2]);
  *min      = t[0];
  *reps_out = reps;
  *calls    = 13 + reps * g_batches;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---------------------------------------------------------------------------------------------
   The operations, by implementation
   --------------------------------------------------------------------------------------------- */

static PetscErrorCode call_petsc(Ctx *c, int op)
{
  PetscReal nrm;

  PetscFunctionBeginUser;
  switch (op) {
  case OP_DOT: PetscCall(VecDot(c->x, c->y, &c->r[0])); break;
  case OP_MDOT: PetscCall(VecMDot(c->x, c->nv, c->V, c->r)); break;
  case OP_NORM2:
  case OP_NORM1:
  case OP_NORMINF:
    PetscCall(PetscObjectStateIncrease((PetscObject)c->x)); /* else VecNorm answers from its cache */
    PetscCall(VecNorm(c->x, op == OP_NORM2 ? NORM_2 : op == OP_NORM1 ? NORM_1 : NORM_INFINITY, &nrm));
    c->r[0] = nrm;
    break;
  case OP_AXPY: PetscCall(VecAXPY(c->y, S_AXPY, c->x)); break;
  case OP_AYPX: PetscCall(VecAYPX(c->y, S_AYPX, c->x)); break;
  case OP_MAXPY: PetscCall(VecMAXPY(c->y, c->nv, c->alpha, c->V)); break;
  case OP_WAXPY: PetscCall(VecWAXPY(c->w, S_WAXPY, c->x, c->y)); break;
  case OP_SCALE: PetscCall(VecScale(c->x, S_SCALE)); break;
  case OP_SET: PetscCall(VecSet(c->w, S_SET)); break;
  case OP_COPY: PetscCall(VecCopy(c->x, c->w)); break;
  case OP_PMULT: PetscCall(VecPointwiseMult(c->w, c->x, c->y)); break;
  case OP_AXPBYPCZ: PetscCall(VecAXPBYPCZ(c->z, S_A, S_B, S_C, c->x, c->y)); break;
  case OP_DOTNORM2:
    PetscCall(VecDotNorm2(c->x, c->y, &c->r[0], &nrm));
    c->r[1] = nrm;
    break;
  default: SETERRQ(PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "no operation %d", op);
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode call_raw(Ctx *c, int op)
{
  const long n = c->n;

  PetscFunctionBeginUser;
  switch (op) {
  case OP_DOT: STN_CHK(StnVecDot(c->dx, c->dy, n, &c->r[0])); break;
  case OP_MDOT: STN_CHK(StnVecMDot(c->dx, c->nv, c->Vp, n, c->r)); break;
  case OP_NORM2: STN_CHK(StnVecNorm(c->dx, n, 1, c->r)); break;
  case OP_NORM1: STN_CHK(StnVecNorm(c->dx, n, 0, c->r)); break;
  case OP_NORMINF: STN_CHK(StnVecNorm(c->dx, n, 3, c->r)); break;
  case OP_AXPY: STN_CHK(StnVecAXPY(c->dy, S_AXPY, c->dx, n)); break;
  case OP_AYPX: STN_CHK(StnVecAYPX(c->dy, S_AYPX, c->dx, n)); break;
  case OP_MAXPY: STN_CHK(StnVecMAXPBY(c->dy, c->nv, c->alpha, 1.0, c->Vp, n)); break;
  case OP_WAXPY: STN_CHK(StnVecWAXPY(c->dw, S_WAXPY, c->dx, c->dy, n)); break;
  case OP_SCALE: STN_CHK(StnVecScale(c->dx, S_SCALE, n)); break;
  case OP_SET: STN_CHK(StnVecSet(c->dw, S_SET, n)); break;
  case OP_COPY: STN_CHK(StnVecCopy(c->dw, c->dx, n)); break;
  case OP_PMULT: STN_CHK(StnVecPointwiseMult(c->dw, c->dx, c->dy, n)); break;
  case OP_AXPBYPCZ: STN_CHK(StnVecAXPBYPCZ(c->dz, S_A, S_B, S_C, c->dx, c->dy, n)); break;
  case OP_DOTNORM2: STN_CHK(StnVecDotNorm2(c->dx, c->dy, n, &c->r[0], &c->r[1])); break;
  default: SETERRQ(PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "no operation %d", op);
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode call_blas(Ctx *c, int op)
{
  const double one = 1.0, zero = 0.0, a_axpy = S_AXPY, a_scale = S_SCALE;
  const int    n = (int)c->n;
  int          imax;

  PetscFunctionBeginUser;
  switch (op) {
  case OP_DOT: BLAS_CHK(cublasDdot(c->blas, n, c->dx, 1, c->dy, 1, &c->r[0])); break;
  case OP_MDOT: /* r = V^T x, then to the host */
    BLAS_CHK(cublasDgemv_64(c->blas, CUBLAS_OP_T, c->n, c->nv, &one, c->dV, c->n, c->dx, 1, &zero, c->dres, 1));
    CUDA_CHK(cudaMemcpy(c->hres, c->dres, (size_t)c->nv * sizeof(double), cudaMemcpyDeviceToHost));
    for (int j = 0; j < c->nv; j++) c->r[j] = c->hres[j];
    break;
  case OP_NORM2: BLAS_CHK(cublasDnrm2(c->blas, n, c->dx, 1, &c->r[0])); break;
  case OP_NORM1: BLAS_CHK(cublasDasum(c->blas, n, c->dx, 1, &c->r[0])); break;
  case OP_NORMINF: /* the index, then the entry */
    BLAS_CHK(cublasIdamax(c->blas, n, c->dx, 1, &imax));
    PetscCheck(imax >= 1 && imax <= n, PETSC_COMM_SELF, PETSC_ERR_LIB, "cublasIdamax: index %d out of range", imax);
    CUDA_CHK(cudaMemcpy(c->hres, c->dx + (imax - 1), sizeof(double), cudaMemcpyDeviceToHost));
    c->r[0] = fabs(c->hres[0]);
    break;
  case OP_AXPY: BLAS_CHK(cublasDaxpy(c->blas, n, &a_axpy, c->dx, 1, c->dy, 1)); break;
  case OP_MAXPY: /* y = V alpha + y, alpha resident on the device */
    BLAS_CHK(cublasDgemv_64(c->blas, CUBLAS_OP_N, c->n, c->nv, &one, c->dV, c->n, c->dalpha, 1, &one, c->dy, 1));
    break;
  case OP_SCALE: BLAS_CHK(cublasDscal(c->blas, n, &a_scale, c->dx, 1)); break;
  case OP_COPY: BLAS_CHK(cublasDcopy(c->blas, n, c->dx, 1, c->dw, 1)); break;
  case OP_PMULT: /* w = diag(x) y */
    BLAS_CHK(cublasDdgmm(c->blas, CUBLAS_SIDE_LEFT, n, 1, c->dy, n, c->dx, 1, c->dw, n));
    break;
  default: SETERRQ(PETSC_COMM_SELF, PETSC_ERR_SUP, "cuBLAS has no %s", op_name[op]);
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

typedef struct {
  Ctx *c;
  int  imp, op;
} OpCall;

static PetscErrorCode op_call(void *p)
{
  OpCall *q = (OpCall *)p;

  PetscFunctionBeginUser;
  switch (q->imp) {
  case IMP_OURS:
  case IMP_PETSC: PetscCall(call_petsc(q->c, q->op)); break;
  case IMP_RAW: PetscCall(call_raw(q->c, q->op)); break;
  default: PetscCall(call_blas(q->c, q->op)); break;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---------------------------------------------------------------------------------------------
   Inputs and checks
   --------------------------------------------------------------------------------------------- */

static PetscErrorCode fill_vec(Vec v, long n, unsigned seed)
{
  PetscScalar *a;

  PetscFunctionBeginUser;
  PetscCall(VecCUDAGetArrayWrite(v, &a));
  CUDA_CHK((cudaError_t)VecGpuFill(a, n, seed));
  PetscCall(VecCUDARestoreArrayWrite(v, &a));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode fill_raw(double *d, long n, unsigned seed)
{
  PetscFunctionBeginUser;
  CUDA_CHK((cudaError_t)VecGpuFill(d, n, seed));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Fresh inputs for op: x, y, w, z, and the nv vectors where op reads them. */
static PetscErrorCode fill_inputs(Ctx *c, int imp, int op)
{
  const PetscBool many = op == OP_MDOT || op == OP_MAXPY ? PETSC_TRUE : PETSC_FALSE;

  PetscFunctionBeginUser;
  if (imp == IMP_OURS || imp == IMP_PETSC) {
    PetscCall(fill_vec(c->x, c->n, SEED_X));
    PetscCall(fill_vec(c->y, c->n, SEED_Y));
    PetscCall(fill_vec(c->w, c->n, SEED_W));
    PetscCall(fill_vec(c->z, c->n, SEED_Z));
    for (int j = 0; many && j < c->nv; j++) PetscCall(fill_vec(c->V[j], c->n, SEED_V + j));
  } else {
    PetscCall(fill_raw(c->dx, c->n, SEED_X));
    PetscCall(fill_raw(c->dy, c->n, SEED_Y));
    PetscCall(fill_raw(c->dw, c->n, SEED_W));
    PetscCall(fill_raw(c->dz, c->n, SEED_Z));
    for (int j = 0; many && j < c->nv; j++) PetscCall(fill_raw(c->dV + (size_t)j * c->n, c->n, SEED_V + j));
  }
  CUDA_CHK(cudaDeviceSynchronize());
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Entry i of op's output on fresh inputs, in long double; *mag: the sum of the terms' magnitudes. */
static long double expect_update(const Ctx *c, int op, long i, long double *mag)
{
  const long double X = VecGpuValue(SEED_X, i), Y = VecGpuValue(SEED_Y, i), Z = VecGpuValue(SEED_Z, i);
  long double       s = 0;

  switch (op) {
  case OP_AXPY: s = Y + S_AXPY * X, *mag = fabsl(Y) + fabsl(S_AXPY * X); break;
  case OP_AYPX: s = X + S_AYPX * Y, *mag = fabsl(X) + fabsl(S_AYPX * Y); break;
  case OP_MAXPY:
    s = Y, *mag = fabsl(Y);
    for (int j = 0; j < c->nv; j++) {
      const long double t = (long double)c->alpha[j] * VecGpuValue(SEED_V + j, i);
      s += t, *mag += fabsl(t);
    }
    break;
  case OP_WAXPY: s = S_WAXPY * X + Y, *mag = fabsl(S_WAXPY * X) + fabsl(Y); break;
  case OP_SCALE: s = (long double)S_SCALE * X, *mag = fabsl(s); break;
  case OP_SET: s = S_SET, *mag = 0; break;
  case OP_COPY: s = X, *mag = 0; break;
  case OP_PMULT: s = X * Y, *mag = fabsl(s); break;
  case OP_AXPBYPCZ: s = S_A * X + S_B * Y + S_C * Z, *mag = fabsl(S_A * X) + fabsl(S_B * Y) + fabsl(S_C * Z); break;
  default: *mag = 0;
  }
  return s;
}

/* Where op writes: 0 x, 1 y, 2 w, 3 z. */
static int output_of(int op)
{
  switch (op) {
  case OP_SCALE: return 0;
  case OP_AXPY:
  case OP_AYPX:
  case OP_MAXPY: return 1;
  case OP_WAXPY:
  case OP_SET:
  case OP_COPY:
  case OP_PMULT: return 2;
  default: return 3;
  }
}

/* Samples the output of an update (device array d) and compares it with the CPU. */
static PetscErrorCode check_update_array(const Ctx *c, int op, const double *d, int *ok, double *err)
{
  static double got[SAMPLES + 1];
  const long    n = c->n, stride = n > SAMPLES ? n / SAMPLES : 1, count = n < SAMPLES ? n : SAMPLES;

  PetscFunctionBeginUser;
  STN_CHK(StnVecGetStrided(got, d, stride, count));
  STN_CHK(StnVecGetStrided(got + count, d + n - 1, 1, 1));
  *ok  = 1;
  *err = 0;
  for (long m = 0; m <= count; m++) {
    const long        i = m < count ? m * stride : n - 1;
    long double       mag;
    const long double want = expect_update(c, op, i, &mag);
    const double      e    = (double)fabsl((long double)got[m] - want);
    const double      rel  = mag > 0 ? e / (double)mag : e;
    if (rel > *err) *err = rel;
    if (!(mag > 0 ? e <= 1e-13 * (double)mag : (double)want == got[m])) *ok = 0; /* NaN fails too */
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode check_update(Ctx *c, int imp, int op, int *ok, double *err)
{
  PetscFunctionBeginUser;
  if (imp == IMP_OURS || imp == IMP_PETSC) {
    Vec                outs[4] = {c->x, c->y, c->w, c->z};
    Vec                v       = outs[output_of(op)];
    const PetscScalar *a;
    PetscCall(VecCUDAGetArrayRead(v, &a));
    PetscCall(check_update_array(c, op, a, ok, err));
    PetscCall(VecCUDARestoreArrayRead(v, &a));
  } else {
    const double *outs[4] = {c->dx, c->dy, c->dw, c->dz};
    PetscCall(check_update_array(c, op, outs[output_of(op)], ok, err));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static int nvals_of(int op, int nv)
{
  return op == OP_MDOT ? nv : op == OP_DOTNORM2 ? 2 : 1;
}

/* The CPU references of the reductions (n <= -ref_max), into ref and mag (the sums of the terms'
   magnitudes), indexed [op][value]. */
static void cpu_reductions(const Ctx *c, double ref[NOPS][STN_VEC_MAX_MULTI], double mag[NOPS][STN_VEC_MAX_MULTI])
{
  long double dot = 0, dotm = 0, n2 = 0, n1 = 0, ninf = 0, tt = 0, md[STN_VEC_MAX_MULTI] = {0}, mdm[STN_VEC_MAX_MULTI] = {0};

  for (long i = 0; i < c->n; i++) {
    const long double X = VecGpuValue(SEED_X, i), Y = VecGpuValue(SEED_Y, i);
    dot += X * Y, dotm += fabsl(X * Y);
    n2 += X * X, n1 += fabsl(X), tt += Y * Y;
    if (fabsl(X) > ninf) ninf = fabsl(X);
    for (int j = 0; j < c->nv; j++) {
      const long double t = X * VecGpuValue(SEED_V + j, i);
      md[j] += t, mdm[j] += fabsl(t);
    }
  }
  memset(ref, 0, sizeof(double) * NOPS * STN_VEC_MAX_MULTI);
  memset(mag, 0, sizeof(double) * NOPS * STN_VEC_MAX_MULTI);
  ref[OP_DOT][0] = (double)dot, mag[OP_DOT][0] = (double)dotm;
  for (int j = 0; j < c->nv; j++) ref[OP_MDOT][j] = (double)md[j], mag[OP_MDOT][j] = (double)mdm[j];
  ref[OP_NORM2][0] = (double)sqrtl(n2), mag[OP_NORM2][0] = ref[OP_NORM2][0];
  ref[OP_NORM1][0] = (double)n1, mag[OP_NORM1][0] = (double)n1;
  ref[OP_NORMINF][0] = (double)ninf, mag[OP_NORMINF][0] = 0; /* exact */
  ref[OP_DOTNORM2][0] = (double)dot, mag[OP_DOTNORM2][0] = (double)dotm;
  ref[OP_DOTNORM2][1] = (double)tt, mag[OP_DOTNORM2][1] = (double)tt;
}

/* ---------------------------------------------------------------------------------------------
   Measuring one operation of one implementation
   --------------------------------------------------------------------------------------------- */

/* StnVecCalls' name of op's kernel. */
static const char *calls_name(int op)
{
  return op_kernel[op] < 0 ? "copy" : StnVecKernelNames[op_kernel[op]];
}

static PetscInt total_stn_calls(void)
{
  PetscInt t = StnVecCalls("copy");
  for (int k = 0; k < STN_K_COUNT; k++) t += StnVecCalls(StnVecKernelNames[k]);
  return t;
}

static PetscErrorCode measure_op(Ctx *c, int si, int imp, int op)
{
  Res     *r = &res[si][imp][op];
  OpCall   q = {c, imp, op};
  long     calls;
  PetscInt before = 0, after;
  char     nb[32], sb[32];

  PetscFunctionBeginUser;
  if (op_kernel[op] >= 0 && (imp == IMP_OURS || imp == IMP_RAW)) r->shape = StnVecGetLaunch((StnVecKernel)op_kernel[op], c->n);
  PetscCall(fill_inputs(c, imp, op));
  if (imp == IMP_OURS) before = StnVecCalls(calls_name(op));
  PetscCall(op_call(&q));
  CUDA_CHK(cudaDeviceSynchronize());
  if (is_reduction(op)) {
    r->nval = nvals_of(op, c->nv);
    for (int j = 0; j < r->nval; j++) r->val[j] = c->r[j];
    r->ok = 1; /* judged once every implementation has run */
  } else {
    PetscCall(check_update(c, imp, op, &r->ok, &r->err));
    if (!r->ok) failures++;
  }
  PetscCall(time_calls(op_call, &q, &r->med, &r->min, &r->reps, &calls));
  r->have = 1;
  if (imp == IMP_OURS) {
    after = StnVecCalls(calls_name(op));
    if (after - before != calls + 1) {
      snprintf(r->note, sizeof r->note, "StnVecCalls('%s') counted %ld for %ld calls: not ours", calls_name(op), (long)(after - before), calls + 1);
      r->ok = 0;
      failures++;
    }
  }
  printf("  %-8s %-13s n = %-5s %10.2f us (best %.2f, %ld per batch) %6.3f TB/s%s%s%s%s\n", imp_name[imp], op_name[op], fmt_n(c->n, nb, sizeof nb), r->med, r->min, r->reps,
         tbs(op_vectors(op, c->nv), c->n, r->med), (imp == IMP_OURS || imp == IMP_RAW) && op_kernel[op] >= 0 ? ", shape " : "",
         (imp == IMP_OURS || imp == IMP_RAW) && op_kernel[op] >= 0 ? fmt_shape(r->shape, sb, sizeof sb) : "", is_reduction(op) ? "" : r->ok ? ", check ok" : ", CHECK FAILED",
         r->note);
  fflush(stdout);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Runs measure_op, and on an error records it and goes on (1 in *failed). */
static void try_measure(Ctx *c, int si, int imp, int op, int *failed)
{
  PetscErrorCode ierr = measure_op(c, si, imp, op);

  *failed = 0;
  if (ierr) {
    Res *r = &res[si][imp][op];
    r->have = 0, r->failed = 1, r->ok = 0;
    snprintf(r->note, sizeof r->note, "the call failed (PETSc error %d; last CUDA/runtime error: %s)", (int)ierr, StnCUDALastError());
    printf("  %-8s %-13s FAILED: %s\n", imp_name[imp], op_name[op], r->note);
    fflush(stdout);
    (void)cudaGetLastError(); /* clear a launch error that is not sticky */
    failures++;
    *failed = 1;
  }
}

/* ---------------------------------------------------------------------------------------------
   The phases of one size
   --------------------------------------------------------------------------------------------- */

static PetscErrorCode triad_call(void *p)
{
  Ctx *c = (Ctx *)p;

  PetscFunctionBeginUser;
  CUDA_CHK((cudaError_t)VecGpuTriad(c->dw, c->dx, c->dy, S_TRIAD, c->n));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode measure_triad(Ctx *c, int si)
{
  static double got[SAMPLES + 1];
  const long    n = c->n, stride = n > SAMPLES ? n / SAMPLES : 1, count = n < SAMPLES ? n : SAMPLES;
  double        med, min;
  long          reps, calls;
  char          nb[32];

  PetscFunctionBeginUser;
  PetscCall(fill_inputs(c, IMP_RAW, OP_DOT));
  PetscCall(triad_call(c));
  STN_CHK(StnVecGetStrided(got, c->dw, stride, count));
  STN_CHK(StnVecGetStrided(got + count, c->dw + n - 1, 1, 1));
  triad_ok[si] = 1;
  for (long m = 0; m <= count; m++) {
    const long   i = m < count ? m * stride : n - 1;
    const double X = VecGpuValue(SEED_X, i), Y = VecGpuValue(SEED_Y, i);
    if (!(fabs(got[m] - (X + S_TRIAD * Y)) <= 1e-14 * (fabs(X) + fabs(S_TRIAD * Y)))) triad_ok[si] = 0;
  }
  if (!triad_ok[si]) failures++;
  PetscCall(time_calls(triad_call, c, &med, &min, &reps, &calls));
  triad_us[si] = med;
  printf("  triad    w = x + 1.5 y n = %-5s %10.2f us (best %.2f, %ld per batch) %6.3f TB/s, check %s\n", fmt_n(n, nb, sizeof nb), med, min, reps, tbs(3, n, med),
         triad_ok[si] ? "ok" : "FAILED");
  fflush(stdout);
  PetscFunctionReturn(PETSC_SUCCESS);
}

typedef struct {
  Ctx      *c;
  int       k;
  StnLaunch s;
  double    sc[STN_VEC_MAX_MULTI + 1];
} ShapeCall;

static PetscErrorCode shape_call(void *p)
{
  ShapeCall           *q = (ShapeCall *)p;
  Ctx                 *c = q->c;
  double              *a = c->dx, *b = NULL, *cc = NULL;
  const double *const *d  = NULL;
  int                  nv = 1;

  PetscFunctionBeginUser;
  switch (q->k) {
  case STN_K_DOT:
  case STN_K_DOTNORM2: a = c->dx, b = c->dy; break;
  case STN_K_MDOT: a = c->dx, d = c->Vp, nv = c->nv; break;
  case STN_K_NORM:
  case STN_K_SCALE: a = c->dx; break;
  case STN_K_AXPY:
  case STN_K_AYPX:
  case STN_K_AXPBY: a = c->dy, b = c->dx; break;
  case STN_K_AXPBYPCZ: a = c->dz, b = c->dx, cc = c->dy; break;
  case STN_K_WAXPY:
  case STN_K_PMULT: a = c->dw, b = c->dx, cc = c->dy; break;
  case STN_K_MAXPY: a = c->dy, d = c->Vp, nv = c->nv; break;
  case STN_K_SET: a = c->dw; break;
  default: SETERRQ(PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "no kernel %d", q->k);
  }
  STN_CHK(StnVecRunShape((StnVecKernel)q->k, q->s, c->n, nv, a, b, cc, d, q->sc, c->r));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static void shape_scalars(const Ctx *c, int k, double *sc)
{
  memset(sc, 0, sizeof(double) * (STN_VEC_MAX_MULTI + 1));
  switch (k) {
  case STN_K_NORM: sc[0] = 1; break; /* the 2-norm, as the tuner */
  case STN_K_AXPY: sc[0] = S_AXPY; break;
  case STN_K_AYPX: sc[0] = S_AYPX; break;
  case STN_K_AXPBY: sc[0] = 0.5, sc[1] = 0.5; break;
  case STN_K_AXPBYPCZ: sc[0] = S_A, sc[1] = S_B, sc[2] = S_C; break;
  case STN_K_WAXPY: sc[0] = S_WAXPY; break;
  case STN_K_MAXPY:
    for (int j = 0; j < c->nv; j++) sc[j] = c->alpha[j];
    sc[c->nv] = 1;
    break;
  case STN_K_SCALE: sc[0] = S_SCALE; break;
  case STN_K_SET: sc[0] = S_SET; break;
  default: break;
  }
}

/* Default shape against the shape in force, for every kernel, through StnVecRunShape. */
static void measure_shapes(Ctx *c, int si)
{
  char nb[32], s1[32], s2[32];

  for (int k = 0; k < STN_K_COUNT; k++) {
    TuneRes  *t = &tune_res[si][k];
    ShapeCall q;
    double    min;
    long      reps, calls;
    q.c = c, q.k = k;
    shape_scalars(c, k, q.sc);
    t->def   = StnVecGetLaunch((StnVecKernel)k, 0); /* size class 0 is never tuned: the default */
    t->tuned = StnVecGetLaunch((StnVecKernel)k, c->n);
    for (int which = 0; which < 2; which++) {
      q.s                  = which == 0 ? t->def : t->tuned;
      PetscErrorCode ierr  = fill_inputs(c, IMP_RAW, k == STN_K_MDOT || k == STN_K_MAXPY ? OP_MDOT : OP_DOT);
      if (!ierr) ierr = time_calls(shape_call, &q, which == 0 ? &t->def_us : &t->tuned_us, &min, &reps, &calls);
      if (ierr) {
        if (which == 0) t->failed_def = 1;
        else t->failed_tuned = 1;
        printf("  shape    %-13s %s FAILED: %s\n", StnVecKernelNames[k], fmt_shape(q.s, s1, sizeof s1), StnCUDALastError());
        (void)cudaGetLastError();
        failures++;
      }
    }
    printf("  shapes   %-13s n = %-5s default %-10s %10.2f us, tuned %-10s %10.2f us: %.2fx\n", StnVecKernelNames[k], fmt_n(c->n, nb, sizeof nb), fmt_shape(t->def, s1, sizeof s1),
           t->failed_def ? NAN : t->def_us, fmt_shape(t->tuned, s2, sizeof s2), t->failed_tuned ? NAN : t->tuned_us, t->failed_def || t->failed_tuned ? NAN : t->def_us / t->tuned_us);
    fflush(stdout);
  }
}

/* The tuner's own figures for size class cls from the cache file. */
static void read_tuner_figures(const char *path, int si, int cls)
{
  char  key[512], line[1024];
  FILE *f;

  if (StnVecDeviceKey(key, sizeof key) != 0 || !(f = fopen(path, "r"))) return;
  while (fgets(line, sizeof line, f)) {
    char      lkey[512], kname[64];
    int       lcls;
    StnLaunch s;
    double    us, dus;
    if (line[0] == '#' || sscanf(line, "%511[^\t]\t%63[^\t]\t%d\t%d %d %d\t%lf\t%lf", lkey, kname, &lcls, &s.threads, &s.ept, &s.bps, &us, &dus) != 8) continue;
    if (strcmp(lkey, key) != 0 || lcls != cls) continue;
    for (int k = 0; k < STN_K_COUNT; k++)
      if (strcmp(kname, StnVecKernelNames[k]) == 0) {
        tune_res[si][k].tuner_us     = us;
        tune_res[si][k].tuner_def_us = dus;
        tune_res[si][k].have_tuner   = 1;
      }
  }
  fclose(f);
}

static PetscErrorCode raw_alloc(Ctx *c)
{
  PetscFunctionBeginUser;
  const size_t bytes = (size_t)c->n * sizeof(double);
  CUDA_CHK(cudaMalloc((void **)&c->dx, bytes));
  CUDA_CHK(cudaMalloc((void **)&c->dy, bytes));
  CUDA_CHK(cudaMalloc((void **)&c->dw, bytes));
  CUDA_CHK(cudaMalloc((void **)&c->dz, bytes));
  CUDA_CHK(cudaMalloc((void **)&c->dV, bytes * (size_t)c->nv));
  for (int j = 0; j < c->nv; j++) c->Vp[j] = c->dV + (size_t)j * c->n;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode raw_free(Ctx *c)
{
  PetscFunctionBeginUser;
  CUDA_CHK(cudaFree(c->dx));
  CUDA_CHK(cudaFree(c->dy));
  CUDA_CHK(cudaFree(c->dw));
  CUDA_CHK(cudaFree(c->dz));
  CUDA_CHK(cudaFree(c->dV));
  c->dx = c->dy = c->dw = c->dz = c->dV = NULL;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode vecs_create(Ctx *c, VecType type)
{
  PetscFunctionBeginUser;
  PetscCall(VecCreate(PETSC_COMM_SELF, &c->x));
  PetscCall(VecSetSizes(c->x, (PetscInt)c->n, (PetscInt)c->n));
  PetscCall(VecSetType(c->x, type));
  PetscCall(VecDuplicate(c->x, &c->y));
  PetscCall(VecDuplicate(c->x, &c->w));
  PetscCall(VecDuplicate(c->x, &c->z));
  PetscCall(VecDuplicateVecs(c->x, c->nv, &c->V));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* After a failed PETSc call a vector may still be locked for reading: unlock, so that the next
   operation can write it. */
static void unlock(Vec v)
{
  PetscInt state = 0;
  if (v && VecLockGet(v, &state) == PETSC_SUCCESS)
    for (; state > 0; state--) (void)VecLockReadPop(v);
}

static void unlock_all(Ctx *c)
{
  unlock(c->x), unlock(c->y), unlock(c->w), unlock(c->z);
  for (int j = 0; c->V && j < c->nv; j++) unlock(c->V[j]);
}

static PetscErrorCode vecs_destroy(Ctx *c)
{
  PetscFunctionBeginUser;
  unlock_all(c);
  PetscCall(VecDestroyVecs(c->nv, &c->V));
  PetscCall(VecDestroy(&c->x));
  PetscCall(VecDestroy(&c->y));
  PetscCall(VecDestroy(&c->w));
  PetscCall(VecDestroy(&c->z));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Judges the reductions of size si once every implementation has run. */
static void judge_reductions(Ctx *c, int si, long ref_max)
{
  static double ref[NOPS][STN_VEC_MAX_MULTI], mag[NOPS][STN_VEC_MAX_MULTI];
  const int     cpu = c->n <= ref_max;

  if (cpu) cpu_reductions(c, ref, mag);
  for (int op = 0; op < NOPS; op++) {
    if (!is_reduction(op)) continue;
    const Res *pr = &res[si][IMP_PETSC][op];
    for (int imp = 0; imp < NIMP; imp++) {
      Res *r = &res[si][imp][op];
      if (!r->have || r->failed) continue;
      if (!cpu && (!pr->have || imp == IMP_PETSC)) continue; /* nothing to compare with */
      double worst = 0;
      int    ok    = 1;
      for (int j = 0; j < r->nval; j++) {
        const double want = cpu ? ref[op][j] : pr->val[j];
        double       scale;
        if (cpu) scale = mag[op][j];
        else if (op == OP_NORMINF) scale = 0;
        else if (op == OP_DOT || op == OP_MDOT || (op == OP_DOTNORM2 && j == 0)) scale = 2.25 * (double)c->n;
        else scale = fabs(want);
        const double e = fabs(r->val[j] - want), rel = scale > 0 ? e / scale : e;
        if (rel > worst || rel != rel) worst = rel;
        if (!(scale > 0 ? e <= 1e-12 * scale : r->val[j] == want)) ok = 0;
      }
      if (!ok) failures++;
      r->ok  = r->ok && ok;
      r->err = worst;
      if (!ok) {
        char nb[32];
        printf("  CHECK FAILED: %s %s at n = %s: error %.3g against %s\n", imp_name[imp], op_name[op], fmt_n(c->n, nb, sizeof nb), worst, cpu ? "the CPU" : "PETSc");
        snprintf(r->note + strlen(r->note), sizeof r->note - strlen(r->note), "%s%s differs from %s (%.3g)", r->note[0] ? "; " : "", op_name[op], cpu ? "the CPU" : "PETSc", worst);
      }
    }
  }
  fflush(stdout);
}

/* The PETSc-API phase (ours or petsc) of size si. */
static PetscErrorCode petsc_phase(Ctx *c, int si, int imp)
{
  PetscInt before = 0;
  int      failed = 0;

  PetscFunctionBeginUser;
  PetscCall(vecs_create(c, imp == IMP_OURS ? VECSTNCUDA : VECCUDA));
  if (imp == IMP_PETSC) before = total_stn_calls();
  for (int op = 0; op < NOPS; op++) {
    try_measure(c, si, imp, op, &failed);
    if (failed) unlock_all(c);
  }
  if (imp == IMP_PETSC && total_stn_calls() != before) {
    printf("  petsc: StnVecCalls moved by %ld during PETSc's phase: PETSc's vectors ran our kernels\n", (long)(total_stn_calls() - before));
    for (int op = 0; op < NOPS; op++) res[si][IMP_PETSC][op].ok = 0;
    failures++;
  }
  PetscCall(vecs_destroy(c));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---------------------------------------------------------------------------------------------
   The tables
   --------------------------------------------------------------------------------------------- */

static void cell_time(const Res *r, char *buf, size_t size)
{
  if (r->failed) snprintf(buf, size, "failed");
  else if (!r->have) snprintf(buf, size, "-");
  else snprintf(buf, size, "%.1f%s", r->med, r->ok ? "" : " (!)");
}

static void cell_tbs(const Res *r, int op, const Ctx *c, long n, char *buf, size_t size)
{
  if (!r->have) snprintf(buf, size, "-");
  else snprintf(buf, size, "%.3f", tbs(op_vectors(op, c->nv), n, r->med));
}

static void cell_ratio(const Res *ours, const Res *other, char *buf, size_t size, int bold_below_one)
{
  if (!ours->have || !other->have) snprintf(buf, size, "-");
  else {
    const double q = other->med / ours->med;
    snprintf(buf, size, bold_below_one && q < 1.0 ? "**%.2fx**" : "%.2fx", q);
  }
}

static PetscErrorCode write_outputs(const char *dir, Ctx *c, const long *sizes, int ns, const char *device, const char *shapes_note, const char *cache)
{
  char  path[PETSC_MAX_PATH_LEN], nb[32], s1[32], s2[32];
  FILE *f;
  int   peak = 0;

  PetscFunctionBeginUser;
  for (int si = 1; si < ns; si++)
    if (sizes[si] > sizes[peak]) peak = si;
  const double triad_peak = tbs(3, sizes[peak], triad_us[peak]);

  /* raw CSV */
  snprintf(path, sizeof path, "%s/vec_gpu.csv", dir);
  f = fopen(path, "w");
  PetscCheck(f, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "cannot write %s", path);
  fprintf(f, "n,op,impl,us_median,us_min,reps_per_batch,batches,bytes,tbs,check,error,shape,blas_routine,note\n");
  for (int si = 0; si < ns; si++) {
    fprintf(f, "%ld,triad,triad,%.4f,,,%d,%.0f,%.5f,%s,,,,\n", sizes[si], triad_us[si], g_batches, 24.0 * sizes[si], tbs(3, sizes[si], triad_us[si]), triad_ok[si] ? "ok" : "FAILED");
    for (int op = 0; op < NOPS; op++)
      for (int imp = 0; imp < NIMP; imp++) {
        const Res *r = &res[si][imp][op];
        if (!r->have && !r->failed) continue;
        fprintf(f, "%ld,%s,%s,", sizes[si], op_name[op], imp_name[imp]);
        if (r->have) fprintf(f, "%.4f,%.4f,%ld,%d,%.0f,%.5f,", r->med, r->min, r->reps, g_batches, op_vectors(op, c->nv) * 8.0 * sizes[si], tbs(op_vectors(op, c->nv), sizes[si], r->med));
        else fprintf(f, ",,,,%.0f,,", op_vectors(op, c->nv) * 8.0 * sizes[si]);
        char note[sizeof r->note];
        for (size_t i = 0; i <= strlen(r->note); i++) note[i] = r->note[i] == '"' ? '\'' : r->note[i];
        fprintf(f, "%s,%.3g,%s,%s,\"%s\"\n", r->failed ? "call-failed" : r->ok ? "ok" : "FAILED", r->err,
                (imp == IMP_OURS || imp == IMP_RAW) && op_kernel[op] >= 0 ? fmt_shape(r->shape, s1, sizeof s1) : "", imp == IMP_CUBLAS && blas_name[op] ? blas_name[op] : "", note);
      }
  }
  PetscCheck(fclose(f) == 0, PETSC_COMM_SELF, PETSC_ERR_FILE_WRITE, "cannot write %s", path);

  snprintf(path, sizeof path, "%s/vec_gpu_tune.csv", dir);
  f = fopen(path, "w");
  PetscCheck(f, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "cannot write %s", path);
  fprintf(f, "n,kernel,tuned,tuner_seconds,default_shape,default_us,tuned_shape,tuned_us,default_over_tuned,tuner_default_us,tuner_tuned_us\n");
  for (int si = 0; si < ns; si++)
    for (int k = 0; k < STN_K_COUNT; k++) {
      const TuneRes *t = &tune_res[si][k];
      if (!t->def.threads) continue;
      fprintf(f, "%ld,%s,%s,%.2f,%s,", sizes[si], StnVecKernelNames[k], tune_state[si] > 0 ? "yes" : tune_state[si] < 0 ? "tuner-failed" : "no", tune_s[si], fmt_shape(t->def, s1, sizeof s1));
      if (t->failed_def) fprintf(f, "failed,");
      else fprintf(f, "%.3f,", t->def_us);
      fprintf(f, "%s,", fmt_shape(t->tuned, s2, sizeof s2));
      if (t->failed_tuned) fprintf(f, "failed,,");
      else fprintf(f, "%.3f,%.4f,", t->tuned_us, t->failed_def ? 0 : t->def_us / t->tuned_us);
      if (t->have_tuner) fprintf(f, "%.2f,%.2f\n", t->tuner_def_us, t->tuner_us);
      else fprintf(f, ",\n");
    }
  PetscCheck(fclose(f) == 0, PETSC_COMM_SELF, PETSC_ERR_FILE_WRITE, "cannot write %s", path);

  /* markdown */
  md("\n## GPU vector kernels: ours (VECSTNCUDA) against PETSc's VECCUDA and cuBLAS\n\n");
  md("%s. Time per call: median of %d batches of back-to-back calls (about %.0f ms each) after warm-up, wall clock with a final device sync. "
     "Reductions return their result to the host (each call waits for it, in all three). %d vectors for MDot and MAXPY. %s\n\n",
     device, g_batches, g_batch_us / 1000, c->nv, shapes_note);
  md("Triad w = x + 1.5 y (24 bytes per entry), the same batch timing: ");
  for (int si = 0; si < ns; si++) md("%s%s %.2f us = %.3f TB/s", si ? ", " : "", fmt_n(sizes[si], nb, sizeof nb), triad_us[si], tbs(3, sizes[si], triad_us[si]));
  md(". %% of triad: against the triad at n = %s (%.3f TB/s), the bandwidth ceiling; %% triad(n): against the triad at the same n.\n\n", fmt_n(sizes[peak], nb, sizeof nb), triad_peak);
  md("TB/s: the ideal algorithm's bytes (units of 8n: Dot 2, MDot %d, Norms 1, AXPY/AYPX/WAXPY/PointwiseMult 3, MAXPY %d, Scale/Copy/DotNorm2 2, Set 1, AXPBYPCZ 4) per time. "
     "ours/PETSc and ours/cuBLAS: their time over ours (above 1: ours faster; bold: slower). ours: through PETSc's API (VecDot, ...) on VECSTNCUDA vectors; ours raw: the plain-C API (StnVecDot, ...) on device arrays, without PETSc. "
     "cuBLAS (pointer mode host): ",
     c->nv + 1, c->nv + 2);
  for (int op = 0, first = 1; op < NOPS; op++)
    if (blas_name[op]) md("%s%s %s", first ? "" : ", ", op_name[op], blas_name[op]), first = 0;
  md("; MDot's and MAXPY's vectors contiguous (one n x %d matrix), MDot's %d results copied to the host, MAXPY's coefficients resident on the device. (!): the check failed.\n\n", c->nv, c->nv);
  md("| op | n | ours us | TB/s | PETSc us | TB/s | cuBLAS us | TB/s | ours/PETSc | ours/cuBLAS | %% of triad | %% triad(n) | ours raw us |\n");
  md("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n");
  for (int op = 0; op < NOPS; op++)
    for (int si = 0; si < ns; si++) {
      const Res *o = &res[si][IMP_OURS][op], *p = &res[si][IMP_PETSC][op], *b = &res[si][IMP_CUBLAS][op], *w = &res[si][IMP_RAW][op];
      char       c1[32], c2[32], c3[32], c4[32], c5[32], c6[32], c7[32], c8[32], c9[32];
      cell_time(o, c1, sizeof c1), cell_tbs(o, op, c, sizes[si], c2, sizeof c2);
      cell_time(p, c3, sizeof c3), cell_tbs(p, op, c, sizes[si], c4, sizeof c4);
      cell_time(b, c5, sizeof c5), cell_tbs(b, op, c, sizes[si], c6, sizeof c6);
      cell_ratio(o, p, c7, sizeof c7, 1), cell_ratio(o, b, c8, sizeof c8, 1);
      cell_time(w, c9, sizeof c9);
      const double ot = o->have ? tbs(op_vectors(op, c->nv), sizes[si], o->med) : 0, tn = tbs(3, sizes[si], triad_us[si]);
      if (o->have) md("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %.1f%% | %.1f%% | %s |\n", op_name[op], fmt_n(sizes[si], nb, sizeof nb), c1, c2, c3, c4, c5, c6, c7, c8, 100 * ot / triad_peak, tn > 0 ? 100 * ot / tn : 0, c9);
      else md("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | - | - | %s |\n", op_name[op], fmt_n(sizes[si], nb, sizeof nb), c1, c2, c3, c4, c5, c6, c7, c8, c9);
    }

  /* goals of issue 5 */
  int ge_p = 0, n_p = 0, ge_b = 0, n_b = 0, bw = 0, n_bw = 0;
  for (int si = 0; si < ns; si++)
    for (int op = 0; op < NOPS; op++) {
      const Res *o = &res[si][IMP_OURS][op], *p = &res[si][IMP_PETSC][op], *b = &res[si][IMP_CUBLAS][op];
      if (o->have && p->have) n_p++, ge_p += p->med >= o->med;
      if (o->have && b->have) n_b++, ge_b += b->med >= o->med;
      if (o->have && sizes[si] >= 10000000) n_bw++, bw += tbs(op_vectors(op, c->nv), sizes[si], o->med) >= 0.95 * triad_peak;
    }
  md("\nGoals (issue 5): ours >= PETSc in %d of %d (op, n); >= cuBLAS in %d of %d; >= 95%% of the triad (n >= 1e7) in %d of %d", ge_p, n_p, ge_b, n_b, bw, n_bw);
  for (int si = 0; si < ns; si++)
    if (sizes[si] == 10000000) {
      const Res *o = res[si][IMP_OURS], *b = res[si][IMP_CUBLAS];
      if (o[OP_NORM2].have && b[OP_NORM2].have) md("; Norm2 at 1e7: %.2fx cuBLAS (goal 1.8x)", b[OP_NORM2].med / o[OP_NORM2].med);
      if (o[OP_MDOT].have) md("; MDot at 1e7: %.3f TB/s", tbs(op_vectors(OP_MDOT, c->nv), sizes[si], o[OP_MDOT].med));
      if (o[OP_MAXPY].have) md(", MAXPY at 1e7: %.3f TB/s (goal 4.2)", tbs(op_vectors(OP_MAXPY, c->nv), sizes[si], o[OP_MAXPY].med));
    }
  md(".\n");

  /* tuned against default */
  int any_shapes = 0, any_tuned = 0;
  for (int si = 0; si < ns; si++) any_shapes |= tune_res[si][0].def.threads != 0, any_tuned |= tune_state[si] != 0;
  md("\n## Tuned against default launch shapes (runtime/stntune.c)\n\n");
  if (!any_shapes) md("No tuning in this run (%s)\n", shapes_note);
  else {
    if (any_tuned) {
      md("StnTuneVectorKernels(n) at each n tuned (cache: %s); the tuner's search cost: ", cache);
      for (int si = 0, first = 1; si < ns; si++)
        if (tune_state[si]) md("%sn = %s %.1f s%s", first ? "" : ", ", fmt_n(sizes[si], nb, sizeof nb), tune_s[si], tune_state[si] < 0 ? " (FAILED)" : ""), first = 0;
      md(".\n");
    } else md("%s\n", shapes_note);
    md("Shape: threads per block x elements per thread x blocks per SM (0: one block per threads*ept elements). "
       "Re-measured here with StnVecRunShape on the raw arrays (the main table's timing; %d vectors for mdot and maxpy); "
       "the tuner's own figures (best of 3 batches of about 2 ms, 30 vectors for mdot, 16 for maxpy) from its cache.\n\n",
       c->nv);
    md("| n | kernel | default shape | default us | tuned shape | tuned us | default/tuned | tuner: default us | tuner: tuned us |\n");
    md("|--:|---|---|--:|---|--:|--:|--:|--:|\n");
    for (int si = 0; si < ns; si++) {
      for (int k = 0; k < STN_K_COUNT; k++) {
        const TuneRes *t = &tune_res[si][k];
        char           d1[32], d2[32], d3[32], d4[32], d5[32];
        if (!t->def.threads) continue;
        if (t->failed_def) snprintf(d1, sizeof d1, "failed");
        else snprintf(d1, sizeof d1, "%.2f", t->def_us);
        if (t->failed_tuned) snprintf(d2, sizeof d2, "failed");
        else snprintf(d2, sizeof d2, "%.2f", t->tuned_us);
        if (t->failed_def || t->failed_tuned) snprintf(d3, sizeof d3, "-");
        else snprintf(d3, sizeof d3, "%.2fx", t->def_us / t->tuned_us);
        if (t->have_tuner) snprintf(d4, sizeof d4, "%.2f", t->tuner_def_us), snprintf(d5, sizeof d5, "%.2f", t->tuner_us);
        else snprintf(d4, sizeof d4, "-"), snprintf(d5, sizeof d5, "-");
        md("| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", fmt_n(sizes[si], nb, sizeof nb), StnVecKernelNames[k], fmt_shape(t->def, s1, sizeof s1), d1, fmt_shape(t->tuned, s2, sizeof s2), d2, d3, d4, d5);
      }
    }
  }
  if (failures) {
    md("\n**%d failure(s)**: ", failures);
    for (int si = 0; si < ns; si++) {
      if (!triad_ok[si] && triad_us[si] > 0) md("triad at n = %s: wrong result; ", fmt_n(sizes[si], nb, sizeof nb));
      if (tune_state[si] < 0) md("the tuner failed at n = %s; ", fmt_n(sizes[si], nb, sizeof nb));
      for (int k = 0; k < STN_K_COUNT; k++)
        if (tune_res[si][k].failed_def || tune_res[si][k].failed_tuned)
          md("%s with shape %s failed at n = %s; ", StnVecKernelNames[k], fmt_shape(tune_res[si][k].failed_tuned ? tune_res[si][k].tuned : tune_res[si][k].def, s1, sizeof s1), fmt_n(sizes[si], nb, sizeof nb));
      for (int imp = 0; imp < NIMP; imp++)
        for (int op = 0; op < NOPS; op++) {
          const Res *r = &res[si][imp][op];
          if ((r->have || r->failed) && !r->ok) md("%s %s at n = %s: %s; ", imp_name[imp], op_name[op], fmt_n(sizes[si], nb, sizeof nb), r->note[0] ? r->note : "check failed");
        }
    }
    md("see the log.\n");
  } else md("\nEvery check passed: updates sampled against the CPU, reductions against the CPU (n <= %ld) or PETSc's result; ours counted by StnVecCalls.\n", g_ref_max);

  snprintf(path, sizeof path, "%s/vec_gpu.md", dir);
  f = fopen(path, "w");
  PetscCheck(f && fputs(md_buf ? md_buf + 1 : "", f) >= 0 && fclose(f) == 0, PETSC_COMM_SELF, PETSC_ERR_FILE_WRITE, "cannot write %s", path);
  fputs(md_buf ? md_buf : "", stdout);
  fflush(stdout);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---------------------------------------------------------------------------------------------
   main
   --------------------------------------------------------------------------------------------- */

int main(int argc, char **argv)
{
  char      dir[PETSC_MAX_PATH_LEN] = ".", cache[PETSC_MAX_PATH_LEN], load[PETSC_MAX_PATH_LEN] = "", device[768], key[512], shapes_note[PETSC_MAX_PATH_LEN + 128], nb[32];
  PetscInt  sz[MAXN], nsz = MAXN, tsz[MAXN], ntsz = MAXN, nv = 30, ref_max = 1000000, batches = 5;
  PetscReal batch_ms = 10;
  PetscBool set, no_tune = PETSC_FALSE, have_load, have_tsz;
  long      sizes[MAXN];
  int       ns;
  Ctx       c;

  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-out", dir, sizeof dir, NULL));
  PetscCall(PetscOptionsGetIntArray(NULL, NULL, "-sizes", sz, &nsz, &set));
  if (!set) nsz = 4, sz[0] = 100000, sz[1] = 1000000, sz[2] = 10000000, sz[3] = 100000000;
  PetscCall(PetscOptionsGetIntArray(NULL, NULL, "-tune_sizes", tsz, &ntsz, &have_tsz));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-nv", &nv, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-ref_max", &ref_max, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-batches", &batches, NULL));
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-batch_ms", &batch_ms, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-no_tune", &no_tune, NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-tune_cache", load, sizeof load, &have_load));
  PetscCheck(nv >= 1 && nv <= STN_VEC_MAX_MULTI, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "-nv must be 1 to %d", STN_VEC_MAX_MULTI);
  PetscCheck(batches >= 1 && batches <= MAX_BATCHES, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "-batches must be 1 to %d", (int)MAX_BATCHES);
  PetscCheck(nsz >= 1, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "-sizes: none");
  ns = (int)nsz;
  for (int si = 0; si < ns; si++) {
    sizes[si] = sz[si];
    PetscCheck(sizes[si] >= 1, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "-sizes: %ld is not a length", sizes[si]);
  }
  g_batches  = (int)batches;
  g_batch_us = batch_ms * 1000;
  g_ref_max  = (long)ref_max;
  snprintf(cache, sizeof cache, "%s/vec_gpu_tuning.txt", dir);
  if (have_load && load[0]) no_tune = PETSC_TRUE;

  PetscCall(PetscMemzero(&c, sizeof c));
  c.nv = (int)nv;
  for (int j = 0; j < c.nv; j++) c.alpha[j] = (j % 2 ? -1.0 : 1.0) * (j + 1) / 512.0;

  /* the device, cuBLAS, our type */
  {
    int            dev, runtime, driver, blasv;
    struct cudaDeviceProp p;
    CUDA_CHK(cudaGetDevice(&dev));
    CUDA_CHK(cudaGetDeviceProperties(&p, dev));
    CUDA_CHK(cudaRuntimeGetVersion(&runtime));
    CUDA_CHK(cudaDriverGetVersion(&driver));
    BLAS_CHK(cublasCreate(&c.blas));
    BLAS_CHK(cublasSetPointerMode(c.blas, CUBLAS_POINTER_MODE_HOST));
    BLAS_CHK(cublasGetVersion(c.blas, &blasv));
    snprintf(device, sizeof device, "%s (sm_%d%d, %d SMs, %.0f GiB, L2 %.0f MB); CUDA runtime %d.%d, driver %d.%d, cuBLAS %d, PETSc %d.%d.%d", p.name, p.major, p.minor, p.multiProcessorCount,
             p.totalGlobalMem / 1073741824.0, p.l2CacheSize / 1e6, runtime / 1000, runtime % 1000 / 10, driver / 1000, driver % 1000 / 10, blasv, PETSC_VERSION_MAJOR, PETSC_VERSION_MINOR,
             PETSC_VERSION_SUBMINOR);
  }
  STN_CHK(StnVecDeviceKey(key, sizeof key));
  PetscCall(StnVecRegister());
  CUDA_CHK(cudaMallocHost((void **)&c.hres, STN_VEC_MAX_MULTI * sizeof(double)));
  CUDA_CHK(cudaMalloc((void **)&c.dres, STN_VEC_MAX_MULTI * sizeof(double)));
  CUDA_CHK(cudaMalloc((void **)&c.dalpha, STN_VEC_MAX_MULTI * sizeof(double)));
  CUDA_CHK(cudaMemcpy(c.dalpha, c.alpha, (size_t)c.nv * sizeof(double), cudaMemcpyHostToDevice));
  printf("vec_gpu: %s\nvec_gpu: tuning key %s\n", device, key);

  if (have_load && load[0]) {
    PetscInt count;
    PetscCall(StnTuneLoad(PETSC_COMM_SELF, load, &count));
    snprintf(shapes_note, sizeof shapes_note, "Ours with the launch shapes of %s (%ld loaded for this device).", load, (long)count);
  } else if (no_tune) snprintf(shapes_note, sizeof shapes_note, "Ours with the default launch shapes (-no_tune).");
  else {
    (void)remove(cache); /* tuned afresh in this run */
    snprintf(shapes_note, sizeof shapes_note, "Ours with the launch shapes tuned in this run at each n (StnTuneVectorKernels; cache %s).", cache);
  }
  printf("vec_gpu: %s\n", shapes_note);
  fflush(stdout);

  for (int si = 0; si < ns; si++) {
    int tune_here = !no_tune, failed;
    c.n           = sizes[si];
    if (tune_here && have_tsz) {
      tune_here = 0;
      for (int t = 0; t < (int)ntsz; t++) tune_here |= tsz[t] == (PetscInt)c.n;
    }
    printf("\n== n = %s ==\n", fmt_n(c.n, nb, sizeof nb));
    fflush(stdout);

    /* 1. tune */
    if (have_load && load[0]) read_tuner_figures(load, si, StnVecSizeClass(c.n));
    if (tune_here) {
      const double   t0   = now_us();
      PetscErrorCode ierr = StnTuneVectorKernels(PETSC_COMM_SELF, (PetscInt)c.n, cache);
      tune_s[si]          = (now_us() - t0) * 1e-6;
      if (ierr) {
        tune_state[si] = -1;
        failures++;
        printf("vec_gpu: the tuner FAILED at n = %s after %.1f s (%s); the kernels it had finished keep their tuned shapes, the others their defaults\n", nb, tune_s[si], StnCUDALastError());
        (void)cudaGetLastError();
      } else {
        PetscInt count = 0;
        tune_state[si] = 1;
        read_tuner_figures(cache, si, StnVecSizeClass(c.n));
        PetscCall(StnTuneLoad(PETSC_COMM_SELF, cache, &count)); /* the cache as a program reads it */
        printf("vec_gpu: tuned at n = %s in %.1f s; the cache holds %ld shapes for this device\n", nb, tune_s[si], (long)count);
      }
      fflush(stdout);
    }

    /* 2. raw arrays: triad, shapes, ours-raw, cuBLAS */
    PetscCall(raw_alloc(&c));
    PetscCall(measure_triad(&c, si));
    if (tune_state[si] || (have_load && load[0])) measure_shapes(&c, si);
    for (int op = 0; op < NOPS; op++) try_measure(&c, si, IMP_RAW, op, &failed);
    for (int op = 0; op < NOPS; op++)
      if (blas_name[op]) try_measure(&c, si, IMP_CUBLAS, op, &failed);
    PetscCall(raw_free(&c));

    /* 3. ours through PETSc, 4. PETSc's own */
    PetscCall(petsc_phase(&c, si, IMP_OURS));
    PetscCall(petsc_phase(&c, si, IMP_PETSC));
    judge_reductions(&c, si, g_ref_max);
  }

  PetscCall(write_outputs(dir, &c, sizes, ns, device, shapes_note, cache));
  printf("\nvec_gpu: wrote %s/vec_gpu.csv, %s/vec_gpu_tune.csv, %s/vec_gpu.md%s%s\n", dir, dir, dir, no_tune ? "" : ", ", no_tune ? "" : cache);
  BLAS_CHK(cublasDestroy(c.blas));
  CUDA_CHK(cudaFreeHost(c.hres));
  CUDA_CHK(cudaFree(c.dres));
  CUDA_CHK(cudaFree(c.dalpha));
  free(md_buf);
  PetscCall(PetscFinalize());
  return failures ? 1 : 0;
}
