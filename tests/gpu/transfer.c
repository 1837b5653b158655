/* tests/gpu/transfer.c: the grid transfers on the device (runtime/stnmg_cuda.cu) against the
   host loops over the same point functions (runtime/stnmg_cuda.h), bit for bit: interpolation
   (assigning and adding), restriction (both), injection, on 1D, 2D and 3D grids, vertex-centred
   and periodic, with 1 to 6 values per point. Built and run by tests/gpu/vec-tests.sh.

     transfer           the checks; one line per case, exit 1 on a mismatch
     transfer -bench    also times interpolation and restriction (adding) on the cavity's finest
                        pair (1025^2 from 513^2, 4 values) and 257^3 from 129^3 (1 value), against
                        a device-to-device copy of the fine vector: the fraction of the copy's
                        bandwidth each reaches, counting each vector once (the byte model). */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stnmg_cuda.h"

static int failures;

static void check_cuda(cudaError_t e, const char *what)
{
  if (e == cudaSuccess) return;
  fprintf(stderr, "FAIL: transfer: %s: %s\n", what, cudaGetErrorString(e));
  exit(1);
}

static long points(const int n[3]) { return (long)n[0] * n[1] * n[2]; }

/* A grid pair: fine points per direction from coarse ones (2 nc - 1, or 2 nc periodic), laid
   out as one rank's whole grids for a transfer to the fine grid (out_fine) or the coarse one. */
static StnTransferGrid pair(int dim, int dof, const int nc[3], const int periodic[3], int out_fine)
{
  StnTransferGrid g;

  memset(&g, 0, sizeof g);
  g.dim = dim, g.dof = dof;
  for (int d = 0; d < 3; d++) {
    g.nc[d]       = d < dim ? nc[d] : 1;
    g.periodic[d] = d < dim ? periodic[d] : 0;
    g.nf[d]       = d < dim ? (g.periodic[d] ? 2 * g.nc[d] : 2 * g.nc[d] - 1) : 1;
  }
  stn_transfer_whole(&g, out_fine);
  return g;
}

static void fill(double *x, long n, unsigned seed)
{
  for (long i = 0; i < n; i++) {
    seed = seed * 1664525u + 1013904223u;
    x[i] = (double)(seed >> 8) / (double)(1u << 24) - 0.5;
  }
}

enum { INTERPOLATE, RESTRICT, INJECT };

/* out = the transfer of in on the host, and through the device kernel. */
static void host_transfer(int kind, const StnTransferGrid *g, int add, const double *in, double *out)
{
  const int *n = kind == INTERPOLATE ? g->nf : g->nc;

  for (int k = 0; k < n[2]; k++)
    for (int j = 0; j < n[1]; j++)
      for (int i = 0; i < n[0]; i++) {
        if (kind == INTERPOLATE) stn_transfer_interpolate_point(g, g->dof, 0, g->dof, add, i, j, k, in, out);
        else if (kind == RESTRICT) stn_transfer_restrict_point(g, g->dof, 0, g->dof, add, i, j, k, in, out);
        else stn_transfer_inject_point(g, i, j, k, in, out);
      }
}

static int device_transfer(int kind, const StnTransferGrid *g, int add, const double *in, double *out)
{
  return kind == INTERPOLATE ? StnTransferInterpolateCUDA(g, add, in, out) : kind == RESTRICT ? StnTransferRestrictCUDA(g, add, in, out) : StnTransferInjectCUDA(g, in, out);
}

static void check_case(int dim, int dof, const int nc[3], const int periodic[3])
{
  static const char *names[] = {"interpolate", "restrict", "inject"};
  for (int kind = INTERPOLATE; kind <= INJECT; kind++)
    for (int add = 0; add <= (kind == INJECT ? 0 : 1); add++) {
      StnTransferGrid g  = pair(dim, dof, nc, periodic, kind == INTERPOLATE);
      long            nf = points(g.nf) * dof, ncv = points(g.nc) * dof;
      long    nin = kind == INTERPOLATE ? ncv : nf, nout = kind == INTERPOLATE ? nf : ncv;
      double *in = malloc(sizeof(double) * nin), *host = malloc(sizeof(double) * nout), *dev = malloc(sizeof(double) * nout);
      double *din, *dout;
      long    bad = -1;

      fill(in, nin, 17u + (unsigned)kind);
      fill(host, nout, 99u);
      check_cuda(cudaMalloc((void **)&din, sizeof(double) * nin), "cudaMalloc");
      check_cuda(cudaMalloc((void **)&dout, sizeof(double) * nout), "cudaMalloc");
      check_cuda(cudaMemcpy(din, in, sizeof(double) * nin, cudaMemcpyHostToDevice), "cudaMemcpy");
      check_cuda(cudaMemcpy(dout, host, sizeof(double) * nout, cudaMemcpyHostToDevice), "cudaMemcpy");
      host_transfer(kind, &g, add, in, host);
      check_cuda((cudaError_t)device_transfer(kind, &g, add, din, dout), names[kind]);
      check_cuda(cudaMemcpy(dev, dout, sizeof(double) * nout, cudaMemcpyDeviceToHost), "cudaMemcpy");
      for (long i = 0; i < nout && bad < 0; i++)
        if (memcmp(&host[i], &dev[i], sizeof(double))) bad = i;
      printf("%sgpu: transfer: %s%s, %dD coarse %d x %d x %d%s%s%s, dof %d", bad < 0 ? "" : "FAIL: ", names[kind], add ? " (adding)" : "", dim, g.nc[0], g.nc[1], g.nc[2], periodic[0] ? " periodic x" : "",
             dim > 1 && periodic[1] ? " periodic y" : "", dim > 2 && periodic[2] ? " periodic z" : "", dof);
      if (bad < 0) printf(": the device's bits are the host's: ok\n");
      else {
        printf(": entry %ld: host %.17g, device %.17g\n", bad, host[bad], dev[bad]);
        failures++;
      }
      cudaFree(din), cudaFree(dout);
      free(in), free(host), free(dev);
    }
}

/* Microseconds per call of f, the mean of reps after a warm-up call. */
static double time_us(int (*f)(const StnTransferGrid *, int, const double *, double *), const StnTransferGrid *g, const double *in, double *out, int reps)
{
  cudaEvent_t a, b;
  float       ms;

  check_cuda((cudaError_t)f(g, 1, in, out), "warm-up");
  cudaEventCreate(&a), cudaEventCreate(&b);
  cudaEventRecord(a, 0);
  for (int r = 0; r < reps; r++) f(g, 1, in, out);
  cudaEventRecord(b, 0);
  check_cuda(cudaEventSynchronize(b), "timing");
  cudaEventElapsedTime(&ms, a, b);
  cudaEventDestroy(a), cudaEventDestroy(b);
  return 1e3 * ms / reps;
}

static void bench(int dim, int dof, int n)
{
  const int       nc[3] = {n, n, n}, periodic[3] = {0, 0, 0};
  StnTransferGrid g     = pair(dim, dof, nc, periodic, 1), gr = pair(dim, dof, nc, periodic, 0);
  long            nf = points(g.nf) * dof, ncv = points(g.nc) * dof;
  double         *f, *f2, *c;
  cudaEvent_t     a, b;
  float           ms;
  const int       reps = 50;

  check_cuda(cudaMalloc((void **)&f, sizeof(double) * nf), "cudaMalloc");
  check_cuda(cudaMalloc((void **)&f2, sizeof(double) * nf), "cudaMalloc");
  check_cuda(cudaMalloc((void **)&c, sizeof(double) * ncv), "cudaMalloc");
  cudaMemset(f, 0, sizeof(double) * nf), cudaMemset(f2, 0, sizeof(double) * nf), cudaMemset(c, 0, sizeof(double) * ncv);
  cudaEventCreate(&a), cudaEventCreate(&b);
  cudaMemcpy(f2, f, sizeof(double) * nf, cudaMemcpyDeviceToDevice);
  cudaEventRecord(a, 0);
  for (int r = 0; r < reps; r++) cudaMemcpy(f2, f, sizeof(double) * nf, cudaMemcpyDeviceToDevice);
  cudaEventRecord(b, 0);
  check_cuda(cudaEventSynchronize(b), "timing");
  cudaEventElapsedTime(&ms, a, b);
  {
    const double copy_gbs = 2.0 * 8.0 * nf / (1e-3 * ms / reps) / 1e9;
    const double ti = time_us(StnTransferInterpolateCUDA, &g, c, f, reps), tr = time_us(StnTransferRestrictCUDA, &gr, f, c, reps);
    const double bi = 8.0 * (2.0 * nf + ncv), br = 8.0 * (nf + 2.0 * ncv); /* adding: the output read and written */

    printf("gpu: bench: transfer %dD %d^%d from %d^%d, dof %d: copy %.0f GB/s; interpolate %.1f us (%.0f GB/s, %.0f%% of the copy's); restrict %.1f us (%.0f GB/s, %.0f%%)\n", dim, g.nf[0], dim, n, dim, dof, copy_gbs, ti,
           bi / ti / 1e3, 100.0 * bi / ti / 1e3 / copy_gbs, tr, br / tr / 1e3, 100.0 * br / tr / 1e3 / copy_gbs);
  }
  cudaEventDestroy(a), cudaEventDestroy(b);
  cudaFree(f), cudaFree(f2), cudaFree(c);
}

int main(int argc, char **argv)
{
  const int none[3] = {0, 0, 0}, px[3] = {1, 0, 0}, pxy[3] = {1, 1, 0}, pz[3] = {0, 0, 1};
  const int n1[3] = {9, 1, 1}, n2[3] = {17, 9, 1}, n3[3] = {9, 5, 7};

  for (int dof = 1; dof <= 6; dof++) {
    check_case(1, dof, n1, none);
    check_case(1, dof, n1, px);
    check_case(2, dof, n2, none);
    check_case(2, dof, n2, pxy);
    check_case(3, dof, n3, none);
    check_case(3, dof, n3, pz);
  }
  if (argc > 1 && !strcmp(argv[1], "-bench")) {
    bench(2, 4, 513);
    bench(3, 1, 129);
  }
  return failures ? 1 : 0;
}
