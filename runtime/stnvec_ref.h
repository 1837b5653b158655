/* stnvec_ref.h: what the vector kernels must compute, on the CPU, for the tuner's inputs.

   The tuner (stntune.c) runs each kernel's launch shapes on test vectors and rejects any shape
   whose results differ from these. Test vector j holds STN_VEC_TEST_VALUE(j, i): multiples of
   1/1024 in [-1, 1), so products are multiples of 2^-20 and sums of up to 2^32 of them are
   exact in double: for such n a correct kernel matches the reference exactly, in any order of
   summation (the max-norm and updates at every n).

   The arguments follow StnVecRunShape (stnvec_cuda.h): array a is test vector 0, b vector 1,
   c vector 2, and the nv vectors of mdot and maxpy are vectors 1 to nv; s holds the scalars.
   Plain C, no CUDA or PETSc: unit-tested by tests/runtime/vecref.c. */
#ifndef STNVEC_REF_H
#define STNVEC_REF_H

#define STN_VEC_TEST_VALUE(j, i) ((double)((((long)(i)) * 7919L + ((long)(j)) * 104729L + 13L) % 2048L - 1024L) / 1024.0)

#ifdef __cplusplus
extern "C" {
#endif

/* The results of reduction kernel k (dot, mdot, norm, dotnorm2) on the test vectors, into out;
   returns how many. s[0] is the norm type for norm. */
int StnVecRefReduce(int k, long n, int nv, const double *s, double out[]);
/* Entry i of the output of update kernel k (axpy ... pointwisemult) on the test vectors. */
double StnVecRefUpdate(int k, long i, int nv, const double *s);

#ifdef __cplusplus
}
#endif

#endif
