/* stnvec_cuda.h: the vector kernels of the Krylov solve on a CUDA device, callable from C.

   Dot products and norms (reductions) and the BLAS-1 updates GMRES and Newton use, on raw device
   arrays of n doubles. stnvec.c plugs them into PETSc's CUDA vectors; stntune.c picks their
   launch shapes; the GMRES step builds on them (stngmres_cuda.h). Implemented in stnvec_cuda.cu
   (nvcc, no PETSc inside).

   Reductions run as one kernel each: every block reduces its share with warp shuffles, the last
   block to finish adds the blocks' partial results in a fixed order (so a result does not change
   from run to run) and writes the final values straight into pinned host memory, then raises a
   flag there that the call spins on: the one host synchronisation of a reduction. Updates are
   asynchronous.
   All launches go to the default stream, which is also PETSc's (PETSC_STREAM_DEFAULT).

   Every function returns 0 on success, otherwise a cudaError_t value; StnCUDALastError()
   (sgdia_cuda.h) says what went wrong. */
#ifndef STNVEC_CUDA_H
#define STNVEC_CUDA_H

#ifdef __cplusplus
extern "C" {
#endif

/* The most vectors MDot, MAXPY and MAXPBY take in one pass; more are done in passes of this many. */
#define STN_VEC_MAX_MULTI 32
#define STN_VEC_SLOTS     32 /* StnVecMDotBegin's results in flight at once */

/* The kernels, for launch shapes and the tuner. */
typedef enum {
  STN_K_DOT, STN_K_MDOT, STN_K_NORM, STN_K_DOTNORM2, STN_K_AXPY, STN_K_AYPX, STN_K_AXPBY,
  STN_K_AXPBYPCZ, STN_K_WAXPY, STN_K_MAXPY, STN_K_SCALE, STN_K_SET, STN_K_PMULT, STN_K_COUNT
} StnVecKernel;
extern const char *const StnVecKernelNames[STN_K_COUNT]; /* "dot", "mdot", ... */

/* A launch shape. threads: per block (a multiple of 32, up to 1024); ept: elements each thread
   handles per step (1, 2 or 4; independent loads in flight); bps: at most this many blocks per
   SM, looping over the rest of the vector (grid-stride), or 0 for one block per threads*ept
   elements and no loop. */
typedef struct StnLaunch {
  int threads, ept, bps;
} StnLaunch;

/* The size class of n: floor(log2(n)), 0 for n < 2. Shapes are chosen per kernel and class. */
int StnVecSizeClass(long n);
/* Sets the shape of kernel k for size class c (from the tuner's cache); threads = 0 restores the
   default. Returns cudaErrorInvalidValue for a shape the kernels do not have. */
int StnVecSetLaunch(StnVecKernel k, int c, StnLaunch shape);
StnLaunch StnVecGetLaunch(StnVecKernel k, long n);
/* 1 when the kernels can run shape (threads a multiple of 32 up to 1024, ept 1, 2 or 4, bps 0 to 32). */
int StnVecLaunchValid(StnLaunch shape);

/* The reductions' scratch (device partial sums, the pinned results they land in, GMRES's
   report slots): made at the first reduction if not before. The program makes it when it takes
   its GPU (stnapp.c), with the process's other one-time set-up: a process's first pinned
   allocation costs 1 to 2 ms, more while other ranks of the node make theirs. */
int StnVecScratchInit(void);

/* Reductions: the results are in host memory when the call returns. */
int StnVecDot(const double *x, const double *y, long n, double *z);                 /* z = y^T x */
int StnVecMDot(const double *x, int nv, const double *const y[], long n, double z[]); /* z[j] = y[j]^T x */
/* An MDot left in flight, so that the host can queue more work (another level's) before it
   waits: Begin queues z = y[0..nv-1]^T x (nv <= STN_VEC_MAX_MULTI) into a slot of pinned memory
   of its own, 1 to STN_VEC_SLOTS, and gives its number; End waits for that number and copies the
   nv results out. A slot holds one reduction in flight at a time. */
int StnVecMDotBegin(const double *x, int nv, const double *const y[], long n, int slot, unsigned *seq);
int StnVecMDotEnd(int slot, unsigned seq, int nv, double z[]);
/* type: 0 the 1-norm, 1 the 2-norm, 2 both (r[0], r[1]), 3 the max-norm. */
int StnVecNorm(const double *x, long n, int type, double r[]);
int StnVecDotNorm2(const double *s, const double *t, long n, double *dp, double *nm); /* dp = t^T s, nm = t^T t */

/* Updates (asynchronous). Any array may be another one: each element is read before it is written
   (but MAXPBY with more than STN_VEC_MAX_MULTI vectors runs in passes, each updating y: there y
   may be among the first STN_VEC_MAX_MULTI x only). */
int StnVecAXPY(double *y, double a, const double *x, long n);             /* y = y + a x */
int StnVecAYPX(double *y, double a, const double *x, long n);             /* y = x + a y */
int StnVecAXPBY(double *y, double a, double b, const double *x, long n);  /* y = a x + b y */
int StnVecAXPBYPCZ(double *z, double a, double b, double c, const double *x, const double *y, long n); /* z = a x + b y + c z */
int StnVecWAXPY(double *w, double a, const double *x, const double *y, long n); /* w = a x + y */
/* y = b y + sum_j a[j] x[j]; b = 1 is MAXPY. a is read on the host. */
int StnVecMAXPBY(double *y, int nv, const double a[], double b, const double *const x[], long n);
int StnVecScale(double *x, double a, long n);
int StnVecReciprocal(double *x, long n); /* x = 1/x where x is not 0 (VecReciprocal); Scale's launch shape */
int StnVecSet(double *x, double a, long n);
int StnVecCopy(double *y, const double *x, long n); /* a kernel below 2^22 entries, the copy engine above */
int StnVecPointwiseMult(double *w, const double *x, const double *y, long n); /* w = x .* y */

/* The tuner's hooks (stntune.c calls each; tests and bench/ too), hence here, not in stnprobe.h. */
/* Runs kernel k with the given shape on arrays the caller allocated (a, b, c, d: device arrays
   of n doubles, as the kernel needs them: a is the output or the first input; for mdot and
   maxpy, d holds nv device pointers on the host; s: scalars), without waiting. out: host array
   for a reduction's results. */
int StnVecRunShape(StnVecKernel k, StnLaunch shape, long n, int nv, double *a, double *b, double *c,
                   const double *const *d, const double *s, double *out);
/* Waits for the device (a reduction already does). */
int StnVecWait(void);
/* Fills x[i] = STN_VEC_TEST_VALUE(j, i) (stnvec_ref.h), the tuner's inputs. */
int StnVecFillTest(double *x, long n, int j);
/* Copies count entries x[0], x[stride], ... to the host (the tuner's samples of a result). */
int StnVecGetStrided(double *host, const double *x, long stride, long count);
/* What the tuning cache keys shapes by: "NAME|N SMs|sm_XY|runtime R|driver D" of the current
   device. Returns 0 or a cudaError_t value. */
int StnVecDeviceKey(char *key, int size);

#ifdef __cplusplus
}
#endif

#endif
