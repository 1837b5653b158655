/*
** tests/gpu/gmres_cycle.c: the GMRES cycle kernel (stncycle_cuda.h) against what it replaces, the
** SG-DIA product with Jacobi's scaling (StnSGDIAMultCUDA, add = 2) followed by the fused step
** (StnGMRESStep), on the device (run by tests/gpu/vec-tests.sh, from scripts/gpu-check.sh).
**
** For each grid (1D, 2D and 3D, dof 1 to 5, star and box stencils, from 15 rows to 1.18 M, where
** a thread of the H200 holds 9 rows and only V[0] fits in shared memory beside them) a
** random SG-DIA matrix A with a dominant diagonal, a random positive scaling d and a random
** normalized V[0] run a whole cycle of 30 steps in the cycle kernel. Each step is then redone the
** reference way on the cycle's own basis V[0..it] (the two sum in different orders, and over a
** cycle such differences grow by about 2x per step through the Arnoldi process, so whole
** trajectories agree only to 1e-8 or so after 30 steps; one step at a time they agree to
** roundoff). Checked, per step: the reports to 1e-10 relative, the new basis vector entry by entry
** to 1e-10 of its largest entry, times the cancellation in the step (the product's norm over the
** orthogonalized vector's: past n steps the new vector is all roundoff); the cycle run again
** gives the same bits; at the end the Hessenberg columns and the rotated right-hand side agree to
** 1e-10. A cycle stopped by StnGMRESCycleStop after its third report ends, and its first three
** reports are the full run's. Then the restarts on the device (check_restart).
**
** -bench: microseconds per step at 256^2 x 4 (5-point star) and 64^3 (7-point star), the cycle
** kernel against the product and the fused step queued without waits (as KSPSTNGMRES runs them),
** whole cycles of 30 steps, and with restarts on the device: the evidence for the kernel
** (docs/performance.md). -profile: only three queued cycles on each of those two, no checks, for
** a profiler: ncu --kernel-name regex:gmres_cycle_kernel build/gpu-tests/gmres_cycle -profile.
*/
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda_runtime.h>

#include "sgdia_cuda.h"
#include "stncycle_cuda.h"
#include "stngmres_cuda.h"
#include "stnprobe.h" /* StnGMRESCycleTraceRead */
#include "stnvec_cuda.h"
#include "test_values.h"

#define MAXK 30

static int nfail;

static void cuda(cudaError_t e, const char *what)
{
  if (e == cudaSuccess) return;
  printf("FAIL: gpu: gmres cycle: %s: %s\n", what, cudaGetErrorString(e));
  exit(1);
}

static void stn(int rc, const char *what)
{
  if (!rc) return;
  printf("FAIL: gpu: gmres cycle: %s: %s\n", what, StnCUDALastError());
  exit(1);
}

/* A grid and its operator on the device. */
typedef struct {
  const char *name;
  StnBox      box;
  long        n;
  double     *A, *d;
} Problem;

/* A dim-D grid of mx x my x mz points, dof unknowns each, star (box = 0) or box stencil of
   width 1: random couplings in [-0.5, 0.5), diagonal entries 4 + [-1, 1), scaling in [0.5, 1.5). */
static void problem_create(Problem *p, const char *name, int dim, int dof, int box, int mx, int my, int mz)
{
  StnBox *b = &p->box;
  memset(b, 0, sizeof *b);
  p->name = name;
  b->dim = dim, b->dof = dof;
  b->mx = mx, b->my = dim > 1 ? my : 1, b->mz = dim > 2 ? mz : 1;
  b->xm = b->gxm = b->mx, b->ym = b->gym = b->my, b->zm = b->gzm = b->mz;
  for (int k = (dim > 2 ? -1 : 0); k <= (dim > 2 ? 1 : 0); k++)
    for (int j = (dim > 1 ? -1 : 0); j <= (dim > 1 ? 1 : 0); j++)
      for (int i = -1; i <= 1; i++) {
        if (!box && abs(i) + abs(j) + abs(k) > 1) continue;
        b->off[3 * b->nsten] = i, b->off[3 * b->nsten + 1] = j, b->off[3 * b->nsten + 2] = k;
        b->nsten++;
      }
  p->n = (long)b->mx * b->my * b->mz * dof;
  const long na = (long)b->nsten * dof * p->n;
  double    *a = malloc((size_t)na * sizeof(double)), *d = malloc((size_t)p->n * sizeof(double));
  for (int s = 0; s < b->nsten; s++) {
    const int center = !b->off[3 * s] && !b->off[3 * s + 1] && !b->off[3 * s + 2];
    for (int c = 0; c < dof; c++)
      for (long t = 0; t < p->n; t++) {
        const long e = ((long)s * dof + c) * p->n + t;
        a[e]         = center && c == t % dof ? 4.0 + rnd(11, e) : 0.5 * rnd(12, e);
      }
  }
  for (long t = 0; t < p->n; t++) d[t] = 1.0 + 0.5 * rnd(13, t);
  cuda(cudaMalloc((void **)&p->A, (size_t)na * sizeof(double)), "cudaMalloc");
  cuda(cudaMalloc((void **)&p->d, (size_t)p->n * sizeof(double)), "cudaMalloc");
  cuda(cudaMemcpy(p->A, a, (size_t)na * sizeof(double), cudaMemcpyHostToDevice), "cudaMemcpy");
  cuda(cudaMemcpy(p->d, d, (size_t)p->n * sizeof(double), cudaMemcpyHostToDevice), "cudaMemcpy");
  free(a), free(d);
}

static void problem_destroy(Problem *p)
{
  cudaFree(p->A), cudaFree(p->d);
}

/* A basis and its Hessenberg state, V[0] the same normalized random vector for every run. */
typedef struct {
  StnGMRESState st;
  double       *V[MAXK + 1];
} Run;

static void run_create(Run *r, const Problem *p)
{
  double *v = malloc((size_t)p->n * sizeof(double)), s = 0;
  stn(StnGMRESCreate(&r->st, MAXK), "StnGMRESCreate");
  for (int k = 0; k <= MAXK; k++) cuda(cudaMalloc((void **)&r->V[k], (size_t)p->n * sizeof(double)), "cudaMalloc");
  for (long i = 0; i < p->n; i++) v[i] = rnd(14, i), s += v[i] * v[i];
  for (long i = 0; i < p->n; i++) v[i] /= sqrt(s);
  cuda(cudaMemcpy(r->V[0], v, (size_t)p->n * sizeof(double), cudaMemcpyHostToDevice), "cudaMemcpy");
  stn(StnGMRESStart(&r->st, 2.0), "StnGMRESStart");
  free(v);
}

static void run_destroy(Run *r)
{
  stn(StnGMRESDestroy(&r->st), "StnGMRESDestroy");
  for (int k = 0; k <= MAXK; k++) cudaFree(r->V[k]);
}

/* The reference for step it of the run c: the product and the fused step on c's basis, V[0..it]
   copied into r (r's rotations are those of the earlier steps, done the same way). *cancel: the
   product's norm over the new vector's before its scaling (tt), how much of the product the
   orthogonalization cancelled: roundoff in the new vector grows by that much (past n steps,
   where the basis spans everything, it is all roundoff). */
static void reference_step(Run *r, const Run *c, const Problem *p, int it, StnGMRESReport *rep, double *cancel)
{
  double norm;
  cuda(cudaMemcpy(r->V[it], c->V[it], (size_t)p->n * sizeof(double), cudaMemcpyDeviceToDevice), "cudaMemcpy");
  stn(StnSGDIAMultCUDA(&p->box, p->A, r->V[it], 0, p->d, r->V[it + 1], 2, NULL), "StnSGDIAMultCUDA");
  stn(StnVecNorm(r->V[it + 1], p->n, 1, &norm), "StnVecNorm");
  stn(StnGMRESStep(&r->st, it, 1e-30, r->V[it + 1], (const double *const *)r->V, p->n, rep), "StnGMRESStep");
  *cancel = rep->tt > 0 ? fmax(1.0, norm / rep->tt) : 1.0;
}

/* Launches the cycle kernel on run r: cycles cycles, budget steps, x and b (NULL for one cycle). */
static unsigned launch(Run *r, const Problem *p, int cycles, long budget, double *x, const double *b)
{
  StnGMRESCycleArgs a = {&p->box, p->A, p->d, r->V, p->n, 1e-30, 0, MAXK, cycles, budget, x, b};
  unsigned          first;
  stn(StnGMRESCycleLaunch(&r->st, &a, &first), "StnGMRESCycleLaunch");
  return first;
}

/* The cycle kernel: all steps launched at once, the reports waited for in order; stop_after > 0:
   StnGMRESCycleStop once that many reports are in. Returns the steps whose reports were read. */
static int run_cycle(Run *r, const Problem *p, StnGMRESReport rep[MAXK], int stop_after)
{
  const unsigned first = launch(r, p, 1, MAXK, NULL, NULL);
  int            it    = 0;
  for (; it < MAXK; it++) {
    stn(StnGMRESStepWait(it, StnGMRESCycleTicket(first, MAXK, 0, it), &rep[it]), "StnGMRESStepWait");
    if (stop_after && it + 1 == stop_after) {
      stn(StnGMRESCycleStop(), "StnGMRESCycleStop");
      it++;
      break;
    }
    if (rep[it].hapend || rep[it].null) {
      it++;
      break;
    }
  }
  cuda(cudaDeviceSynchronize(), "the cycle kernel");
  return it;
}

/* Whether two reports are the same, field by field (memcmp would compare the padding too). */
static int same_report(const StnGMRESReport *a, const StnGMRESReport *b)
{
  return !memcmp(&a->res, &b->res, sizeof a->res) && !memcmp(&a->tt, &b->tt, sizeof a->tt) && a->hapend == b->hapend && a->null == b->null && a->restarted == b->restarted;
}

static void fetch(double *x, const double *dev, long n)
{
  cuda(cudaMemcpy(x, dev, (size_t)n * sizeof(double), cudaMemcpyDeviceToHost), "cudaMemcpy");
}

static void fail(const Problem *p, int it, const char *what, double a, double b)
{
  nfail++;
  printf("FAIL: gpu: gmres cycle: %s, step %d: %s: %.17g vs %.17g\n", p->name, it, what, a, b);
}

static void check_problem(const Problem *p)
{
  Run             ref, cyc, again, stopped;
  StnGMRESReport  rr, rc[MAXK], ra[MAXK], rs[MAXK];
  double         *x = malloc((size_t)p->n * sizeof(double)), *y = malloc((size_t)p->n * sizeof(double)), *z = malloc((size_t)p->n * sizeof(double));
  static double   hr[32 * (MAXK + 1)], hc[32 * (MAXK + 1)], gr[MAXK + 2], gc[MAXK + 2];
  const int       before = nfail;

  if (!StnGMRESCycleFits(&p->box, p->n)) {
    nfail++;
    printf("FAIL: gpu: gmres cycle: %s: %ld rows do not fit the cycle kernel\n", p->name, p->n);
    return;
  }
  run_create(&ref, p), run_create(&cyc, p), run_create(&again, p), run_create(&stopped, p);
  const int steps = run_cycle(&cyc, p, rc, 0);
  run_cycle(&again, p, ra, 0);
  for (int it = 0; it < steps; it++) {
    double cancel;
    reference_step(&ref, &cyc, p, it, &rr, &cancel);
    if (!rel_ok(rr.tt, rc[it].tt, 1e-10)) fail(p, it, "norm", rr.tt, rc[it].tt);
    if (!rel_ok(rr.res, rc[it].res, 1e-10)) fail(p, it, "residual estimate", rr.res, rc[it].res);
    if (rr.hapend != rc[it].hapend || rr.null != rc[it].null) fail(p, it, "happy ending, null", rr.hapend + 2.0 * rr.null, rc[it].hapend + 2.0 * rc[it].null);
    if (!same_report(&rc[it], &ra[it])) fail(p, it, "report differs from the first run", rc[it].res, ra[it].res);
    fetch(x, ref.V[it + 1], p->n), fetch(y, cyc.V[it + 1], p->n), fetch(z, again.V[it + 1], p->n);
    double big = 0, diff = 0;
    for (long i = 0; i < p->n; i++) big = fmax(big, fabs(x[i])), diff = fmax(diff, fabs(x[i] - y[i]));
    if (diff > 1e-10 * big * cancel) fail(p, it, "basis vector: largest difference, largest entry", diff, big);
    if (memcmp(y, z, (size_t)p->n * sizeof(double))) fail(p, it, "basis vector differs from the first run", y[0], z[0]);
  }
  stn(StnGMRESGetHessenberg(&ref.st, steps - 1, hr, gr), "StnGMRESGetHessenberg");
  stn(StnGMRESGetHessenberg(&cyc.st, steps - 1, hc, gc), "StnGMRESGetHessenberg");
  for (int j = 0; j < steps; j++) {
    for (int i = 0; i <= j + 1 && i < 32; i++)
      if (!rel_ok(hr[j * ref.st.ld + i], hc[j * cyc.st.ld + i], 1e-10) && fabs(hr[j * ref.st.ld + i] - hc[j * cyc.st.ld + i]) > 1e-13) fail(p, j, "Hessenberg entry", hr[j * ref.st.ld + i], hc[j * cyc.st.ld + i]);
    if (!rel_ok(gr[j], gc[j], 1e-10) && fabs(gr[j] - gc[j]) > 1e-13) fail(p, j, "rotated right-hand side", gr[j], gc[j]);
  }
  /* Stopped after three reports: those three are the full run's, bit for bit. */
  if (run_cycle(&stopped, p, rs, 3) != 3) fail(p, 3, "steps read before the stop", 3, 0);
  for (int it = 0; it < 3 && it < steps; it++)
    if (!same_report(&rs[it], &rc[it])) fail(p, it, "a stopped cycle's report differs", rs[it].res, rc[it].res);
  if (nfail == before) printf("gpu: gmres cycle: %s (%ld rows, dof %d, %d-point stencil), %d steps: each step = the product and the fused step on its basis to 1e-10, again = the same bits, stop: ok\n", p->name, p->n, p->box.dof, p->box.nsten, steps);
  run_destroy(&ref), run_destroy(&cyc), run_destroy(&again), run_destroy(&stopped);
  free(x), free(y), free(z);
}

/* Device copies of reproducible vectors (stream j), for x and b. */
static double *device_vector(const Problem *p, int j)
{
  double *h = malloc((size_t)p->n * sizeof(double)), *v;
  for (long i = 0; i < p->n; i++) h[i] = rnd(j, i);
  cuda(cudaMalloc((void **)&v, (size_t)p->n * sizeof(double)), "cudaMalloc");
  cuda(cudaMemcpy(v, h, (size_t)p->n * sizeof(double), cudaMemcpyHostToDevice), "cudaMemcpy");
  free(h);
  return v;
}

/* Whether the device arrays a and b hold the same bits. */
static int same_bits(const double *a, const double *b, long n)
{
  double *x = malloc((size_t)n * sizeof(double)), *y = malloc((size_t)n * sizeof(double));
  fetch(x, a, n), fetch(y, b, n);
  const int same = !memcmp(x, y, (size_t)n * sizeof(double));
  free(x), free(y);
  return same;
}

/* The restart on the device, and the ways it is refused. Run B goes on from a full cycle, which
   is run A's (the same bits: the same code on the same data), through a restart, into 3 steps of
   the next cycle, where its budget ends. Its x and V[0] are checked against KSPGMRESBuildSoln,
   KSPInitialResidual and VecNormalize computed here from A's basis and Hessenberg matrix (x to
   1e-12, the rest to 1e-10 of the largest entry), its restart report's norm against the reference
   norm, and the 3 steps as check_problem checks steps. Run C is stopped at the restart, run D
   neither stopped nor let go (it gives up after 20 ms): both must leave x and V[0] as they were. */
static void check_restart(const Problem *p)
{
  Run            A, B, ref, C, D;
  StnGMRESReport ra[MAXK], rb[MAXK + 3], rr, restart;
  static double  hh[32 * (MAXK + 1)], grs[MAXK + 2], y[MAXK];
  const long     n = p->n;
  double        *xB = device_vector(p, 15), *x0 = device_vector(p, 15), *b = device_vector(p, 16), *xC = device_vector(p, 15), *xD = device_vector(p, 15), *ax;
  double        *h = malloc((size_t)n * sizeof(double)), *v = malloc((size_t)n * sizeof(double)), *xr = malloc((size_t)n * sizeof(double)), *hb = malloc((size_t)n * sizeof(double)), *hd = malloc((size_t)n * sizeof(double));
  const int      before = nfail;

  run_create(&A, p), run_create(&B, p), run_create(&ref, p), run_create(&C, p), run_create(&D, p);
  cuda(cudaMalloc((void **)&ax, (size_t)n * sizeof(double)), "cudaMalloc");
  if (run_cycle(&A, p, ra, 0) != MAXK) {
    nfail++;
    printf("FAIL: gpu: gmres cycle: %s: the first cycle ended early\n", p->name);
    goto out;
  }

  /* B: the host's side of a restart, as KSPSTNGMRES plays it. */
  unsigned first = launch(&B, p, 3, MAXK + 3, xB, b);
  for (int it = 0; it < MAXK; it++) stn(StnGMRESStepWait(it, StnGMRESCycleTicket(first, MAXK, 0, it), &rb[it]), "StnGMRESStepWait");
  stn(StnGMRESCycleGo(StnGMRESCycleTicket(first, MAXK, 0, MAXK)), "StnGMRESCycleGo");
  stn(StnGMRESStepWait(MAXK, StnGMRESCycleTicket(first, MAXK, 0, MAXK), &restart), "StnGMRESStepWait (restart)");
  for (int it = 0; it < 3; it++) stn(StnGMRESStepWait(it, StnGMRESCycleTicket(first, MAXK, 1, it), &rb[MAXK + it]), "StnGMRESStepWait");
  cuda(cudaDeviceSynchronize(), "the cycle kernel");
  for (int it = 0; it < MAXK; it++)
    if (!same_report(&ra[it], &rb[it])) fail(p, it, "a restarting launch's first cycle differs from a one-cycle launch's", ra[it].res, rb[it].res);
  if (!same_bits(A.V[MAXK], B.V[MAXK], n)) fail(p, MAXK, "the last basis vector differs from a one-cycle launch's", 0, 0);
  if (!restart.restarted) fail(p, MAXK, "the restart was not done", 0, 1);

  /* The reference restart from A: y = HH^-1 GRS, x = x0 + V y, V[0] = d .* (b - A x) / norm. */
  stn(StnGMRESGetHessenberg(&A.st, MAXK - 1, hh, grs), "StnGMRESGetHessenberg");
  for (int k = MAXK - 1; k >= 0; k--) {
    double t = grs[k];
    for (int j = k + 1; j < MAXK; j++) t -= hh[j * A.st.ld + k] * y[j];
    y[k] = t / hh[k * A.st.ld + k];
  }
  fetch(xr, x0, n);
  for (int k = 0; k < MAXK; k++) {
    fetch(v, A.V[k], n);
    for (long i = 0; i < n; i++) xr[i] += y[k] * v[i];
  }
  fetch(hb, xB, n);
  double big = 0, diff = 0, sq = 0;
  for (long i = 0; i < n; i++) big = fmax(big, fabs(xr[i])), diff = fmax(diff, fabs(xr[i] - hb[i]));
  if (diff > 1e-12 * big) fail(p, MAXK, "x after the restart: largest difference, largest entry", diff, big);
  cuda(cudaMemcpy(ax, xr, (size_t)n * sizeof(double), cudaMemcpyHostToDevice), "cudaMemcpy");
  stn(StnSGDIAMultCUDA(&p->box, p->A, ax, 0, NULL, ref.V[1], 0, NULL), "StnSGDIAMultCUDA");
  fetch(h, ref.V[1], n), fetch(v, b, n), fetch(hd, p->d, n);
  for (long i = 0; i < n; i++) h[i] = hd[i] * (v[i] - h[i]), sq += h[i] * h[i];
  const double res = sqrt(sq);
  if (!rel_ok(res, restart.res, 1e-10)) fail(p, MAXK, "the restart's residual norm", res, restart.res);
  fetch(v, B.V[0], n);
  big = diff = 0;
  for (long i = 0; i < n; i++) big = fmax(big, fabs(h[i] / res)), diff = fmax(diff, fabs(h[i] / res - v[i]));
  if (diff > 1e-10 * big) fail(p, MAXK, "V[0] after the restart: largest difference, largest entry", diff, big);

  /* The next cycle's steps, each against the product and the fused step on B's basis. */
  stn(StnGMRESStart(&ref.st, restart.res), "StnGMRESStart");
  for (int it = 0; it < 3; it++) {
    double cancel;
    reference_step(&ref, &B, p, it, &rr, &cancel);
    if (!rel_ok(rr.res, rb[MAXK + it].res, 1e-10) || !rel_ok(rr.tt, rb[MAXK + it].tt, 1e-10)) fail(p, it, "after the restart: residual estimate", rr.res, rb[MAXK + it].res);
  }

  /* C, stopped at the restart, and D, not let go: x and V[0] as they were. */
  first = launch(&C, p, 2, 2 * MAXK, xC, b);
  stn(StnGMRESStepWait(MAXK - 1, StnGMRESCycleTicket(first, MAXK, 0, MAXK - 1), &rr), "StnGMRESStepWait");
  stn(StnGMRESCycleStop(), "StnGMRESCycleStop");
  cuda(cudaDeviceSynchronize(), "the cycle kernel");
  first = launch(&D, p, 2, 2 * MAXK, xD, b);
  stn(StnGMRESStepWait(MAXK, StnGMRESCycleTicket(first, MAXK, 0, MAXK), &restart), "StnGMRESStepWait (restart)");
  cuda(cudaDeviceSynchronize(), "the cycle kernel");
  if (restart.restarted) fail(p, MAXK, "a restart without go was done", 1, 0);
  if (!same_bits(xC, x0, n) || !same_bits(C.V[0], A.V[0], n)) fail(p, MAXK, "a stopped restart changed x or V[0]", 0, 0);
  if (!same_bits(xD, x0, n) || !same_bits(D.V[0], A.V[0], n)) fail(p, MAXK, "a restart without go changed x or V[0]", 0, 0);
  if (!same_bits(C.V[MAXK], A.V[MAXK], n) || !same_bits(D.V[MAXK], A.V[MAXK], n)) fail(p, MAXK, "the cycle before a refused restart differs", 0, 0);
  if (nfail == before) printf("gpu: gmres cycle: %s: restart on the device = KSPGMRESBuildSoln, the residual and its norm to 1e-10, the next steps too; stopped or not let go: x and V[0] untouched: ok\n", p->name);
out:
  run_destroy(&A), run_destroy(&B), run_destroy(&ref), run_destroy(&C), run_destroy(&D);
  cudaFree(xB), cudaFree(x0), cudaFree(b), cudaFree(xC), cudaFree(xD), cudaFree(ax);
  free(h), free(v), free(xr), free(hb), free(hd);
}

/* One launch of cycles cycles with the host's side of each restart: every report waited for, the
   go given after each cycle's last one. */
static void run_restarting(Run *r, const Problem *p, int cycles, double *x, const double *b)
{
  const unsigned first = launch(r, p, cycles, (long)cycles * MAXK, x, b);
  StnGMRESReport rep;
  for (int c = 0; c < cycles; c++) {
    for (int it = 0; it < MAXK; it++) stn(StnGMRESStepWait(it, StnGMRESCycleTicket(first, MAXK, c, it), &rep), "StnGMRESStepWait");
    if (c + 1 == cycles) break;
    stn(StnGMRESCycleGo(StnGMRESCycleTicket(first, MAXK, c, MAXK)), "StnGMRESCycleGo");
    stn(StnGMRESStepWait(MAXK, StnGMRESCycleTicket(first, MAXK, c, MAXK), &rep), "StnGMRESStepWait (restart)");
    if (!rep.restarted) {
      printf("FAIL: gpu: gmres cycle: %s: bench: restart %d not done\n", p->name, c);
      nfail++;
    }
  }
}

#ifdef STN_CYCLE_TRACE
/* Phase ph of block b of a tracing build, in us per step at an SM clock of khz. */
static double phase_us(const unsigned long long t[][STN_CYCLE_TRACE_PHASES], int b, int ph, int khz)
{
  return 1e3 * t[b][ph] / khz / t[b][STN_CYCLE_TRACE_PHASES - 1];
}

/* A tracing build's phases of the queued cycles (stnprobe.h): us per step at the SM clock
   CUDA reports, for block 1, the mean over the blocks and their most; us_step: as timed. */
static void trace_print(const Problem *p, double us_step)
{
  enum { NB = 1024, NP = STN_CYCLE_TRACE_PHASES };
  static unsigned long long t[NB][NP];
  static const char *const  name[NP - 1] = {"product", "pass 1", "block's partial sums", "barrier 1", "coefficients' fold", "pass 2", "norm's partial sums (+ prefetch)", "barrier 2", "norm's fold", "V[it + 1], step's end"};
  int                       khz, dev, nb = 0;
  double                    total = 0.0;
  cuda(cudaGetDevice(&dev), "cudaGetDevice");
  cuda(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, dev), "cudaDeviceGetAttribute");
  stn(StnGMRESCycleTraceRead(&t[0][0], NB, 0), "StnGMRESCycleTraceRead");
  while (nb < NB && t[nb][NP - 1]) nb++;
  if (nb < 2) return;
  printf("trace: %s: %d blocks, %.1f us per step timed; phases in us per step at %d MHz (block 1 | mean over blocks | most)\n", p->name, nb, us_step, khz / 1000);
  for (int ph = 0; ph < NP - 1; ph++) {
    double mean = 0.0, most = 0.0;
    for (int b = 0; b < nb; b++) {
      const double us = phase_us(t, b, ph, khz);
      mean += us / nb;
      if (us > most) most = us;
    }
    total += phase_us(t, 1, ph, khz);
    printf("trace: | %s | %.2f | %.2f | %.2f |\n", name[ph], phase_us(t, 1, ph, khz), mean, most);
  }
  printf("trace: | sum (block 1) | %.2f | | |\n", total);
  for (int b = 0; b < nb; b++) { /* each block's phases, for a closer look */
    printf("trace-block: %s: %d:", p->name, b);
    for (int ph = 0; ph < NP - 1; ph++) printf(" %.2f", phase_us(t, b, ph, khz));
    printf("\n");
  }
}
#endif

/* Microseconds per step over reps cycles of 30 steps, three ways: the product and the fused step
   launched without waits; one cycle kernel per cycle, also without waits (no restarts: every
   cycle starts from the same V[0]); one cycle kernel for all of them, restarting on the device,
   the host waiting for every report and letting each restart go. */
static void bench(const Problem *p, int reps)
{
  Run         r;
  cudaEvent_t e0, e1;
  float       ms[3];
  unsigned    ticket[MAXK];
  double     *x = device_vector(p, 15), *b = device_vector(p, 16);

  run_create(&r, p);
  cudaEventCreate(&e0), cudaEventCreate(&e1);
  for (int way = 0; way < 3; way++)
    for (int warm = 1; warm >= 0; warm--) {
      const int cycles = warm ? 2 : reps;
#ifdef STN_CYCLE_TRACE
      if (way == 1 && !warm) stn(StnGMRESCycleTraceRead(NULL, 0, 1), "StnGMRESCycleTraceRead");
#endif
      cudaEventRecord(e0, 0);
      if (way == 2) run_restarting(&r, p, cycles, x, b);
      for (int c = 0; way < 2 && c < cycles; c++) {
        stn(StnGMRESStart(&r.st, 1.0), "StnGMRESStart");
        if (way == 0)
          for (int it = 0; it < MAXK; it++) {
            stn(StnSGDIAMultCUDA(&p->box, p->A, r.V[it], 0, p->d, r.V[it + 1], 2, NULL), "StnSGDIAMultCUDA");
            stn(StnGMRESStepLaunch(&r.st, it, 1e-30, r.V[it + 1], (const double *const *)r.V, p->n, &ticket[it]), "StnGMRESStepLaunch");
          }
        else launch(&r, p, 1, MAXK, NULL, NULL);
      }
      cudaEventRecord(e1, 0);
      cuda(cudaEventSynchronize(e1), "cudaEventSynchronize");
      cudaEventElapsedTime(&ms[way], e0, e1);
#ifdef STN_CYCLE_TRACE
      if (way == 1 && !warm) trace_print(p, 1e3 * ms[1] / (reps * MAXK));
#endif
    }
  printf("| %s | %ld | %.1f | %.1f | %.2f | %.1f | %.1f |\n", p->name, p->n, 1e3 * ms[0] / (reps * MAXK), 1e3 * ms[1] / (reps * MAXK), ms[0] / ms[1], 1e3 * ms[2] / (reps * MAXK),
         1e3 * (ms[2] - ms[1]) / (reps - 1));
  cudaEventDestroy(e0), cudaEventDestroy(e1);
  run_destroy(&r);
  cudaFree(x), cudaFree(b);
}

/* -profile: three queued cycles of 30 steps on each of the two large problems and nothing else,
   for a profiler (ncu) that replays each kernel: the checks' step path waits on mapped flags,
   which a replayed kernel does not set. */
static void profile(const Problem *p)
{
  Run r;
  run_create(&r, p);
  for (int c = 0; c < 3; c++) {
    stn(StnGMRESStart(&r.st, 1.0), "StnGMRESStart");
    launch(&r, p, 1, MAXK, NULL, NULL);
  }
  cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  run_destroy(&r);
}

int main(int argc, char **argv)
{
  Problem p[9];
  int     np = 0;

  problem_create(&p[np++], "2D star dof 4, 16 x 16", 2, 4, 0, 16, 16, 1);
  problem_create(&p[np++], "2D star dof 1, 5 x 3", 2, 1, 0, 5, 3, 1);
  problem_create(&p[np++], "2D box dof 3, 33 x 17", 2, 3, 1, 33, 17, 1);
  problem_create(&p[np++], "3D star dof 1, 9 x 8 x 7", 3, 1, 0, 9, 8, 7);
  problem_create(&p[np++], "3D box dof 5, 6 x 5 x 4 (run-time sizes)", 3, 5, 1, 6, 5, 4);
  problem_create(&p[np++], "1D dof 2, 1000", 1, 2, 0, 1000, 1, 1);
  if (!(argc > 1 && !strcmp(argv[1], "-small"))) {
    problem_create(&p[np++], "3D star dof 1, 128 x 96 x 96 (9 rows per thread on an H200)", 3, 1, 0, 128, 96, 96);
    problem_create(&p[np++], "cavity-like 256^2 x 4", 2, 4, 0, 256, 256, 1);
    problem_create(&p[np++], "sfi-like 64^3", 3, 1, 0, 64, 64, 64);
  }
  if (argc > 1 && !strcmp(argv[1], "-profile")) {
    for (int i = np - 2; i < np; i++) profile(&p[i]);
    for (int i = 0; i < np; i++) problem_destroy(&p[i]);
    printf("gmres_cycle: profiled\n");
    return 0;
  }
  {
    /* The first use of an instance loads it (CUDA's lazy loading): a cost of the first solve. */
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    const int fits = StnGMRESCycleFits(&p[0].box, p[0].n);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    printf("gpu: gmres cycle: the first use of an instance (%d): %.2f ms\n", fits, (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) * 1e-6);
  }
  for (int i = 0; i < np; i++) check_problem(&p[i]), check_restart(&p[i]);
  if (argc > 1 && !strcmp(argv[1], "-bench")) {
    printf("\nGMRES cycle on the GPU, us per step over 20 cycles of 30 steps: the product and the fused step queued (two launches per step) against the cycle kernel queued (one launch per cycle, no restarts), and one launch restarting on the device with the host in the loop; the last column: what a restart adds, us per cycle\n");
    printf("| problem | rows | product + step us | cycle kernel us | ratio | with device restarts us | restart us |\n|---|--:|--:|--:|--:|--:|--:|\n");
    for (int i = np - 2; i < np; i++) bench(&p[i], 20);
  }
  for (int i = 0; i < np; i++) problem_destroy(&p[i]);
  printf("gmres_cycle: %d failed\n", nfail);
  return nfail ? 1 : 0;
}
