/*
** stnvec_ref.c: the vector kernels' reference results (stnvec_ref.h).
** Written as plainly as possible: one loop per operation, in the order of
** the definitions in stnvec_cuda.h, sums in long double.
*/
#include "stnvec_ref.h"

#include <math.h>

#include "stnvec_cuda.h" /* the kernel numbers */

#define V(j, i) STN_VEC_TEST_VALUE(j, i)

int StnVecRefReduce(int k, long n, int nv, const double *s, double out[])
{
  long double acc[3] = {0};

  switch (k) {
  case STN_K_DOT:
    for (long i = 0; i < n; i++) acc[0] += (long double)V(0, i) * V(1, i);
    out[0] = (double)acc[0];
    return 1;
  case STN_K_MDOT: /* any nv: one vector at a time (the kernels take more than STN_VEC_MAX_MULTI in passes) */
    if (nv < 0) return 0;
    for (int j = 0; j < nv; j++) {
      long double dot = 0;
      for (long i = 0; i < n; i++) dot += (long double)V(0, i) * V(1 + j, i);
      out[j] = (double)dot;
    }
    return nv;
  case STN_K_NORM: {
    const int type = (int)s[0]; /* 0 one, 1 two, 2 both, 3 max */
    if (type < 0 || type > 3) return 0;
    for (long i = 0; i < n; i++) {
      const double v = V(0, i);
      acc[0] += fabs(v);
      acc[1] += (long double)v * v;
      if (fabs(v) > acc[2]) acc[2] = fabs(v);
    }
    if (type == 0) out[0] = (double)acc[0];
    if (type == 1) out[0] = sqrt((double)acc[1]);
    if (type == 2) out[0] = (double)acc[0], out[1] = sqrt((double)acc[1]);
    if (type == 3) out[0] = (double)acc[2];
    return type == 2 ? 2 : 1;
  }
  case STN_K_DOTNORM2:
    for (long i = 0; i < n; i++) {
      acc[0] += (long double)V(0, i) * V(1, i);
      acc[1] += (long double)V(1, i) * V(1, i);
    }
    out[0] = (double)acc[0];
    out[1] = (double)acc[1];
    return 2;
  default:
    return 0;
  }
}

double StnVecRefUpdate(int k, long i, int nv, const double *s)
{
  const double a = V(0, i), b = V(1, i), c = V(2, i);

  switch (k) {
  case STN_K_AXPY: return a + s[0] * b;                       /* y = y + alpha x */
  case STN_K_AYPX: return b + s[0] * a;                       /* y = x + alpha y */
  case STN_K_AXPBY: return s[0] * b + (s[1] == 0 ? 0 : s[1] * a); /* y = alpha x + beta y */
  case STN_K_AXPBYPCZ: return s[0] * b + s[1] * c + (s[2] == 0 ? 0 : s[2] * a);
  case STN_K_WAXPY: return s[0] * b + c;                      /* w = alpha x + y */
  case STN_K_MAXPY: {                                         /* y = beta y + sum alpha_j x_j */
    double r = s[nv] == 0 ? 0 : s[nv] * a;
    for (int j = 0; j < nv; j++) r += s[j] * V(1 + j, i);
    return r;
  }
  case STN_K_SCALE: return s[0] * a;
  case STN_K_SET: return s[0];
  case STN_K_PMULT: return b * c;                             /* w = x .* y */
  default: return NAN;
  }
}
