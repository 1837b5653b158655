/* stnfastdiv.h: division by a divisor fixed at launch, as a multiply and a shift.

   A kernel that turns a row index into grid coordinates divides by the box's extents, which
   are known only at run time: a 32-bit integer division is about 20 instructions on the GPU (a
   float reciprocal and corrections). The GMRES cycle kernel at 64^3 does two per row and step,
   6% of all its instructions (ncu, docs/gpu-runs/cycle_ncu.md). With the divisor's
   magic number computed once on the host, n / d is one multiply-high and one shift (Granlund and
   Montgomery, "Division by invariant integers using multiplication", 1994; the form CUTLASS's
   FastDivmod uses): for 2^(l-1) < d <= 2^l, mul = ceil(2^(31+l) / d) and n / d =
   (n * mul) >> (32 + l - 1), exact for 0 <= n < 2^31. d = 1 has mul 0 and is n itself.
   Plain C (the unit test, tests/runtime/fastdiv_test.c, is C) and CUDA. */
#ifndef STNFASTDIV_H
#define STNFASTDIV_H

#ifdef __CUDACC__
#define STN_FASTDIV_HD __host__ __device__
#else
#define STN_FASTDIV_HD
#endif

typedef struct StnFastDiv {
  unsigned mul;   /* ceil(2^(31+l) / d), 0 for d = 1 */
  int      shift; /* l - 1 */
} StnFastDiv;

/* The magic number of d (1 <= d < 2^31). */
static inline StnFastDiv StnFastDivMake(int d)
{
  StnFastDiv f = {0u, 0};
  int        l = 0;
  if (d <= 1) return f;
  while ((1ull << l) < (unsigned long long)d) l++;
  f.mul   = (unsigned)(((1ull << (31 + l)) + (unsigned long long)d - 1) / (unsigned long long)d);
  f.shift = l - 1;
  return f;
}

/* n / d for 0 <= n < 2^31, f = StnFastDivMake(d). */
STN_FASTDIV_HD static inline int StnFastDivide(int n, StnFastDiv f)
{
  if (!f.mul) return n;
#ifdef __CUDA_ARCH__
  return (int)(__umulhi((unsigned)n, f.mul) >> f.shift);
#else
  return (int)((unsigned)(((unsigned long long)(unsigned)n * f.mul) >> 32) >> f.shift);
#endif
}

#endif
