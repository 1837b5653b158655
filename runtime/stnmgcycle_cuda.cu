/* stnmgcycle_cuda.cu: the fused multigrid steps (stnmgcycle_cuda.h): the SG-DIA row product of
   sgdia_rows.h, one thread per row, with the Chebyshev update as its epilogue. */
#include "stnmgcycle_cuda.h"
#include "sgdia_instances.h"
#include "sgdia_rows.h"

#include <cuda_runtime.h>

namespace {

using namespace stn_sgdia;

constexpr int kThreads = 256;

int check(cudaError_t err, const char *what) { return err == cudaSuccess ? 0 : StnCUDARecordError((int)err, what); }

struct StepArgs {
  const double *A, *xa, *x, *b, *d, *p; /* xa: the product's x (owned or ghosted layout) */
  double       *y;
  double        alpha, beta, gamma;
  const double *xg; /* split reads: the ghosts, laid out in the ghosted box (its owned points not
                       read: the product reads those from x), else NULL */
};

template <int DOF, int NSTEN, bool SPLIT>
__global__ void __launch_bounds__(kThreads) mg_step(const Geometry g, const StepArgs a)
{
  const int    t      = blockIdx.x * blockDim.x + threadIdx.x;
  const bool   active = t < g.nrows;
  const double v      = SPLIT ? row_value_split<DOF, NSTEN, false>(g, a.A, a.x, a.xg, t, active) : row_value<DOF, NSTEN, false>(g, a.A, a.xa, t, active);

  if (!active) return;
  double r = (a.b ? a.b[t] : 0.0) - v, y;
  if (a.d) r *= a.d[t];
  y = a.gamma * r;
  if (a.beta != 0.0) y += a.beta * a.x[t];
  if (a.p) y += a.alpha * a.p[t];
  a.y[t] = y;
}

struct Step {
  unsigned        blocks;
  const Geometry &g;
  const StepArgs &a;
  template <int DOF, int NSTEN>
  void run() const
  {
    if (a.xg) mg_step<DOF, NSTEN, true><<<blocks, kThreads>>>(g, a);
    else mg_step<DOF, NSTEN, false><<<blocks, kThreads>>>(g, a);
  }
};

__global__ void mg_scale(long n, double gamma, const double *__restrict__ d, const double *__restrict__ b, double *__restrict__ y)
{
  const long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = gamma * (d[i] * b[i]);
}

} /* namespace */

extern "C" int StnMGStepCUDA(const StnBox *box, const double *A, const double *x, const double *xg, const double *b, const double *d, const double *p, double alpha, double beta, double gamma, double *y)
{
  Geometry g;
  int      err = StnSGDIAGeometry(box, xg ? 1 : 0, true, &g);

  if (err) return err;
  if (!g.nrows) return 0;
  if (x == y || xg == y) return StnCUDAFail((int)cudaErrorInvalidValue, "StnMGStepCUDA: x and y are the same array");
  const StepArgs a{A, xg ? xg : x, x, b, d, p, y, alpha, beta, gamma, NULL};
  with_instance(g.dof, g.nsten, Step{(unsigned)((g.nrows + kThreads - 1) / kThreads), g, a});
  return check(cudaGetLastError(), "StnMGStepCUDA: launch");
}

extern "C" int StnMGStepSplitCUDA(const StnBox *box, const double *A, const double *x, const double *xg, const double *b, const double *d, const double *p, double alpha, double beta, double gamma, double *y)
{
  Geometry g;
  int      err = StnSGDIAGeometry(box, 2, true, &g);

  if (err) return err;
  if (!g.nrows) return 0;
  if (x == y || xg == y || !xg) return StnCUDAFail((int)cudaErrorInvalidValue, "StnMGStepSplitCUDA: x or the ghosts are y, or there are no ghosts");
  const StepArgs a{A, x, x, b, d, p, y, alpha, beta, gamma, xg};
  with_instance(g.dof, g.nsten, Step{(unsigned)((g.nrows + kThreads - 1) / kThreads), g, a});
  return check(cudaGetLastError(), "StnMGStepSplitCUDA: launch");
}

extern "C" int StnMGScaleCUDA(long n, double gamma, const double *d, const double *b, double *y)
{
  if (n > 0) mg_scale<<<(unsigned)((n + kThreads - 1) / kThreads), kThreads>>>(n, gamma, d, b, y);
  return check(cudaGetLastError(), "StnMGScaleCUDA: launch");
}
