/* tests/gpu/test_values.h: what the GPU tests of the GMRES kernels (gmres_step.c, gmres_cycle.c)
   share: reproducible pseudo-random inputs and a relative comparison. */
#ifndef TEST_VALUES_H
#define TEST_VALUES_H

#include <math.h>

/* A reproducible pseudo-random value in [-1, 1) for stream j, entry i (splitmix64). */
static inline double rnd(unsigned j, long i)
{
  unsigned long long z = ((unsigned long long)j << 40) ^ (unsigned long long)i ^ 0x9e3779b97f4a7c15ull;
  z                    = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z                    = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  return (double)(z >> 11) / 4503599627370496.0 - 1.0;
}

/* a and b agree to tol relative (or are both zero). */
static inline int rel_ok(double a, double b, double tol)
{
  return fabs(a - b) <= tol * fmax(fabs(a), fabs(b)) || (a == 0 && b == 0);
}

#endif
