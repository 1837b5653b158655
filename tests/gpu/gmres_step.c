/*
** tests/gpu/gmres_step.c: the GMRES step of KSPSTNGMRES on the device (run by
** tests/gpu/vec-tests.sh, from scripts/gpu-check.sh), in its two forms (stngmres_cuda.h):
** the fused one (one cooperative kernel per step, the default) and the three kernels (MDot,
** MAXPY with the norm and the rotations, the scaling).
**
** For n = 1, 31, 1000, 262144, 1000003 a restart cycle of up to 30 steps runs in both forms on
** the same inputs: V[0] a normalized pseudo-random vector, and at each step a fresh
** pseudo-random w (what the operator would have written into V[it + 1]). Checked, per step:
**   - the reports (residual estimate, norm, happy ending, null rotation) agree to 1e-12
**     relative, and the scaled new basis vectors entry by entry to 1e-12 of their largest
**     entry (the two forms sum in different orders);
**   - the fused form run again gives the same bits (report, basis vector);
** and at the end of the cycle the Hessenberg matrices (after the rotations) and the rotated
** right-hand sides agree to 1e-11.
**
** -small: n = 1, 31, 1000 only (for the sanitizers). With -bench it then times full cycles at
** n = 262144 (a 2 MB vector: 256^2 x 4 or 64^3) and 1048576 (the largest n the fused form is
** used for; runtime/stngmres_cuda.cu says why), per step from launch to the end of its kernels
** (the host waiting for each step), and over whole cycles queued without waits (as KSPSTNGMRES
** runs them, ahead of the host), both forms, and prints a table: the evidence for the fused
** kernel (docs/performance.md). -sweep times the fused form's block shapes; -profile runs one
** queued cycle and nothing else, for ncu.
*/
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

#include "sgdia_cuda.h" /* StnCUDALastError */
#include "stngmres_cuda.h"
#include "test_values.h"

#define MAXK 30

static int nfail;

static void fail(const char *fmt, const char *a, long n, int it, double x, double y)
{
  nfail++;
  printf("FAIL: gpu: vec: gmres step, n %ld, step %d: %s: ", n, it, a);
  printf(fmt, x, y);
  printf("\n");
}

static int cuda(cudaError_t e, const char *what)
{
  if (e == cudaSuccess) return 0;
  printf("FAIL: gpu: vec: gmres step: %s: %s\n", what, cudaGetErrorString(e));
  exit(1);
}

static int stn(int rc, const char *what)
{
  if (!rc) return 0;
  printf("FAIL: gpu: vec: gmres step: %s: %s\n", what, StnCUDALastError());
  exit(1);
}

/* One form of the step, with its own basis. */
typedef struct {
  StnGMRESState st;
  double       *V[MAXK + 1];
} Form;

static void form_create(Form *f, int fused, long n)
{
  stn(StnGMRESCreate(&f->st, MAXK), "StnGMRESCreate");
  f->st.fused = fused;
  for (int k = 0; k <= MAXK; k++) cuda(cudaMalloc((void **)&f->V[k], (size_t)(n > 0 ? n : 1) * sizeof(double)), "cudaMalloc");
}

static void form_destroy(Form *f)
{
  stn(StnGMRESDestroy(&f->st), "StnGMRESDestroy");
  for (int k = 0; k <= MAXK; k++) cudaFree(f->V[k]);
}

/* Starts a cycle: V[0] = v0 (normalized on the host), GRS(0) = beta. */
static void form_start(Form *f, const double *v0, long n, double beta)
{
  cuda(cudaMemcpy(f->V[0], v0, (size_t)n * sizeof(double), cudaMemcpyHostToDevice), "cudaMemcpy");
  stn(StnGMRESStart(&f->st, beta), "StnGMRESStart");
}

static void form_step(Form *f, int it, const double *w, long n, StnGMRESReport *r)
{
  cuda(cudaMemcpy(f->V[it + 1], w, (size_t)n * sizeof(double), cudaMemcpyHostToDevice), "cudaMemcpy");
  stn(StnGMRESStep(&f->st, it, 1e-30, f->V[it + 1], (const double *const *)f->V, n, r), "StnGMRESStep");
}

static void fill(double *x, long n, unsigned j, int normalize)
{
  double s = 0;
  for (long i = 0; i < n; i++) x[i] = rnd(j, i), s += x[i] * x[i];
  if (normalize)
    for (long i = 0; i < n; i++) x[i] /= sqrt(s);
}

static void check_size(long n)
{
  Form            a, b, c; /* fused, three kernels, fused again */
  double         *v0 = malloc((size_t)n * sizeof(double)), *w = malloc((size_t)n * sizeof(double));
  double         *xa = malloc((size_t)n * sizeof(double)), *xb = malloc((size_t)n * sizeof(double)), *xc = malloc((size_t)n * sizeof(double));
  double          hha[32 * (MAXK + 1)], hhb[32 * (MAXK + 1)], grsa[MAXK + 2], grsb[MAXK + 2];
  int             steps = 0, ok0 = nfail;
  StnGMRESReport  ra, rb, rc;
  const double    beta = 3.0;

  form_create(&a, 1, n);
  form_create(&b, 0, n);
  form_create(&c, 1, n);
  fill(v0, n, 1000, 1);
  form_start(&a, v0, n, beta);
  form_start(&b, v0, n, beta);
  form_start(&c, v0, n, beta);
  for (int it = 0; it < MAXK; it++) {
    fill(w, n, (unsigned)it, 0);
    form_step(&a, it, w, n, &ra);
    form_step(&b, it, w, n, &rb);
    form_step(&c, it, w, n, &rc);
    steps++;
    if (!rel_ok(ra.tt, rb.tt, 1e-12)) fail("norm %.17g vs %.17g", "fused against three kernels", n, it, ra.tt, rb.tt);
    if (!rel_ok(ra.res, rb.res, 1e-12)) fail("residual estimate %.17g vs %.17g", "fused against three kernels", n, it, ra.res, rb.res);
    if (ra.hapend != rb.hapend || ra.null != rb.null) fail("happy ending/null %g vs %g", "fused against three kernels", n, it, ra.hapend + 2.0 * ra.null, rb.hapend + 2.0 * rb.null);
    if (memcmp(&ra, &rc, sizeof ra)) fail("report differs from the first run (%g, %g)", "fused twice", n, it, ra.res, rc.res);
    cuda(cudaMemcpy(xa, a.V[it + 1], (size_t)n * sizeof(double), cudaMemcpyDeviceToHost), "cudaMemcpy");
    cuda(cudaMemcpy(xb, b.V[it + 1], (size_t)n * sizeof(double), cudaMemcpyDeviceToHost), "cudaMemcpy");
    cuda(cudaMemcpy(xc, c.V[it + 1], (size_t)n * sizeof(double), cudaMemcpyDeviceToHost), "cudaMemcpy");
    double big = 0, diff = 0;
    for (long i = 0; i < n; i++) big = fmax(big, fabs(xb[i])), diff = fmax(diff, fabs(xa[i] - xb[i]));
    if (diff > 1e-12 * big) fail("basis vector: largest difference %g of largest entry %g", "fused against three kernels", n, it, diff, big);
    if (memcmp(xa, xc, (size_t)n * sizeof(double))) fail("basis vector differs from the first run (%g, %g)", "fused twice", n, it, xa[0], xc[0]);
    if (ra.hapend || ra.null) break; /* the cycle ends here in GMRES too */
  }
  stn(StnGMRESGetHessenberg(&a.st, steps - 1, hha, grsa), "StnGMRESGetHessenberg");
  stn(StnGMRESGetHessenberg(&b.st, steps - 1, hhb, grsb), "StnGMRESGetHessenberg");
  for (int j = 0; j < steps; j++) {
    for (int i = 0; i <= j + 1 && i < 32; i++)
      if (!rel_ok(hha[j * a.st.ld + i], hhb[j * b.st.ld + i], 1e-11) && fabs(hha[j * a.st.ld + i] - hhb[j * b.st.ld + i]) > 1e-13) fail("Hessenberg entry %.17g vs %.17g", "fused against three kernels", n, j, hha[j * a.st.ld + i], hhb[j * b.st.ld + i]);
    if (!rel_ok(grsa[j], grsb[j], 1e-11) && fabs(grsa[j] - grsb[j]) > 1e-13) fail("rotated right-hand side %.17g vs %.17g", "fused against three kernels", n, j, grsa[j], grsb[j]);
  }
  if (nfail == ok0) printf("gpu: vec: gmres step, n %ld, %d steps: fused = three kernels to 1e-12, fused twice = the same bits: ok\n", n, steps);
  form_destroy(&a);
  form_destroy(&b);
  form_destroy(&c);
  free(v0), free(w), free(xa), free(xb), free(xc);
}

/* Microseconds per step, by step, over reps full cycles, from launch to wake-up. */
static void time_cycles(Form *f, long n, int reps, double us[MAXK])
{
  for (int it = 0; it < MAXK; it++) us[it] = 0;
  for (int r = 0; r < reps; r++) {
    stn(StnGMRESStart(&f->st, 1.0), "StnGMRESStart");
    for (int it = 0; it < MAXK; it++) {
      StnGMRESReport rep;
      unsigned       ticket;
      cudaEvent_t    e0, e1;
      float          ms;
      cudaEventCreate(&e0), cudaEventCreate(&e1);
      cudaEventRecord(e0, 0);
      stn(StnGMRESStepLaunch(&f->st, it, 1e-30, f->V[it + 1], (const double *const *)f->V, n, &ticket), "StnGMRESStepLaunch");
      cudaEventRecord(e1, 0);
      stn(StnGMRESStepWait(it, ticket, &rep), "StnGMRESStepWait");
      cudaEventSynchronize(e1);
      cudaEventElapsedTime(&ms, e0, e1);
      if (r) us[it] += 1e3 * ms / (reps - 1); /* the first cycle warms up */
      cudaEventDestroy(e0), cudaEventDestroy(e1);
    }
  }
}

/* Microseconds per step over reps full cycles, each launched step after step without waiting
   (as KSPSTNGMRES queues them ahead), then waited for: the GPU's own pace. */
static double time_queued(Form *f, long n, int reps)
{
  cudaEvent_t e0, e1;
  float       ms;
  unsigned    ticket[MAXK];

  cudaEventCreate(&e0), cudaEventCreate(&e1);
  stn(StnGMRESStart(&f->st, 1.0), "StnGMRESStart");
  cudaEventRecord(e0, 0);
  for (int r = 0; r < reps; r++)
    for (int it = 0; it < MAXK; it++) stn(StnGMRESStepLaunch(&f->st, it, 1e-30, f->V[it + 1], (const double *const *)f->V, n, &ticket[it]), "StnGMRESStepLaunch");
  cudaEventRecord(e1, 0);
  for (int it = 0; it < MAXK; it++) {
    StnGMRESReport rep;
    stn(StnGMRESStepWait(it, ticket[it], &rep), "StnGMRESStepWait");
  }
  cudaEventSynchronize(e1);
  cudaEventElapsedTime(&ms, e0, e1);
  cudaEventDestroy(e0), cudaEventDestroy(e1);
  return 1e3 * ms / (reps * MAXK);
}

static void bench(long n)
{
  Form    a, b;
  double *x = malloc((size_t)n * sizeof(double)), ua[MAXK], ub[MAXK], sa = 0, sb = 0;

  form_create(&a, 1, n);
  form_create(&b, 0, n);
  for (int k = 0; k <= MAXK; k++) {
    fill(x, n, (unsigned)k + 7, 1);
    cuda(cudaMemcpy(a.V[k], x, (size_t)n * sizeof(double), cudaMemcpyHostToDevice), "cudaMemcpy");
    cuda(cudaMemcpy(b.V[k], x, (size_t)n * sizeof(double), cudaMemcpyHostToDevice), "cudaMemcpy");
  }
  time_cycles(&a, n, 21, ua);
  time_cycles(&b, n, 21, ub);
  printf("\nGMRES step on the GPU, n = %ld, us per step (GPU time, launch to end), fused vs three kernels:\n", n);
  printf("| step | vectors | fused us | three kernels us | ratio | fused TB/s |\n|--:|--:|--:|--:|--:|--:|\n");
  for (int it = 0; it < MAXK; it++) {
    const double bytes = 8.0 * n * (2.0 * (it + 1) + 3); /* V twice, w read twice and written */
    sa += ua[it], sb += ub[it];
    if (it % 4 == 0 || it == MAXK - 1) printf("| %d | %d | %.1f | %.1f | %.2f | %.2f |\n", it, it + 1, ua[it], ub[it], ub[it] / ua[it], bytes / ua[it] / 1e6);
  }
  printf("| mean of 30 | | %.1f | %.1f | %.2f | |\n", sa / MAXK, sb / MAXK, sb / sa);
  {
    const double qa = time_queued(&a, n, 20), qb = time_queued(&b, n, 20);
    printf("| mean of 30, queued (no wait between steps) | | %.1f | %.1f | %.2f | |\n", qa, qb, qb / qa);
  }
  form_destroy(&a);
  form_destroy(&b);
  free(x);
}

/* The fused kernel's queued pace at n for each block size and blocks per SM. */
static void sweep(long n)
{
  Form    a;
  double *x = malloc((size_t)n * sizeof(double));
  form_create(&a, 1, n);
  for (int k = 0; k <= MAXK; k++) {
    fill(x, n, (unsigned)k + 7, 1);
    cuda(cudaMemcpy(a.V[k], x, (size_t)n * sizeof(double), cudaMemcpyHostToDevice), "cudaMemcpy");
  }
  printf("\nfused step, n = %ld, queued us per step (mean of 30 steps; step 0; step 16; step 29) by threads x blocks per SM:\n", n);
  for (int t = 128; t <= 1024; t *= 2)
    for (int b = 0; b <= 8; b = b ? 2 * b : 1) { /* 0: as many as fit */
      double us[MAXK];
      a.st.threads = t, a.st.bps = b;
      time_cycles(&a, n, 6, us);
      printf("threads %4d bps %d: queued %.1f; steps 0/16/29 %.1f %.1f %.1f\n", t, b, time_queued(&a, n, 10), us[0], us[16], us[29]);
    }
  form_destroy(&a);
  free(x);
}

int main(int argc, char **argv)
{
  const long sizes[] = {1, 31, 1000, 262144, 1000003};
  int        do_bench = argc > 1 && !strcmp(argv[1], "-bench"), small = argc > 1 && !strcmp(argv[1], "-small");

  const int  profile = argc > 1 && !strcmp(argv[1], "-profile");
  for (size_t s = 0; !profile && s < (small ? 3 : sizeof sizes / sizeof sizes[0]); s++) check_size(sizes[s]);
  if (do_bench) {
    bench(262144);
    bench(1048576); /* the largest n the fused step is used for; beyond, both run three kernels */
  }
  if (argc > 1 && !strcmp(argv[1], "-sweep")) sweep(262144), sweep(1048576);
  if (argc > 1 && !strcmp(argv[1], "-profile")) { /* one queued cycle at 2 MB, for a profiler */
    Form a;
    form_create(&a, 1, 262144);
    printf("queued: %.1f us per step\n", time_queued(&a, 262144, 1));
    form_destroy(&a);
  }
  printf("gmres_step: %d failed\n", nfail);
  return nfail ? 1 : 0;
}
