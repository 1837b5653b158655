/*
** cuda_api_trace.c: where a generated program's solves spend host time in the CUDA runtime,
** solve by solve, without changing the program: an LD_PRELOAD library that times the calls
** that allocate and free device and pinned memory, open IPC handles, look kernels up and launch
** them (the first launch of a kernel loads it: lazy module loading) and wait, and splits them by
** phase: before the first SNESSolve, inside each SNESSolve, between them, after. At exit each
** rank writes its table and its slowest calls to $STN_TRACE_DIR/trace.RANK.txt (stderr when
** unset; give an absolute directory): calls, total ms, the calls over 50 us and their ms, per
** function and phase. With STN_TRACE_ALLOCS set, also every allocation in order with its size and
** callers (module+offset: `addr2line -f -e PROGRAM OFFSET`). With STN_TRACE_POOL_MB=N the pool
** is first grown by N MB (allocated and freed before the program's first pooled block), to see
** what growing it at once costs.
**
**   gcc -O2 -shared -fPIC -I/usr/local/cuda/include bench/probes/cuda_api_trace.c -o build/trace.so -ldl
**   mpiexec -n 4 -genv LD_PRELOAD $PWD/build/trace.so -genv STN_TRACE_DIR $PWD/t ./cavity ...
**
** It sees the calls that reach libcudart.so through the dynamic linker: the program's own and
** PETSc's (both link it dynamically), not those inside libcudart or the CUDA libraries.
*/
#define _GNU_SOURCE
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <execinfo.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { PHASES = 8, SLOW = 24 };
enum { F_MALLOC, F_MALLOC_ASYNC, F_FREE, F_FREE_ASYNC, F_HOST_ALLOC, F_MALLOC_HOST, F_FREE_HOST, F_IPC_OPEN, F_IPC_GET, F_GET_KERNEL, F_LAUNCH, F_LAUNCH_COOP, F_MEMCPY, F_STREAM_SYNC, F_DEVICE_SYNC, F_SOLVE, NFUNCS };
static const char *fname[NFUNCS] = {"cudaMalloc", "cudaMallocAsync", "cudaFree", "cudaFreeAsync", "cudaHostAlloc", "cudaMallocHost", "cudaFreeHost", "cudaIpcOpenMemHandle", "cudaIpcGetMemHandle", "__cudaGetKernel", "__cudaLaunchKernel", "cudaLaunchCooperativeKernel", "cudaMemcpy", "cudaStreamSynchronize", "cudaDeviceSynchronize", "SNESSolve"};

typedef struct {
  long   calls, slow_calls;
  double ms, slow_ms;
} Tally;

typedef struct {
  int    func, phase;
  double ms;
  size_t bytes;
} Slow;

static Tally tally[PHASES][NFUNCS];
/* with STN_TRACE_ALLOCS set, every allocation's call in order (phase, function, ms, bytes) */
enum { LOGGED = 8192 };
static Slow logged[LOGGED];
enum { FRAMES = 8 };
static void *frames[LOGGED][FRAMES];
static int  nlogged, log_allocs = -1;
static Slow  slowest[SLOW];
static int   phase; /* 0 before the first solve, 2k + 1 in solve k + 1, 2k + 2 after it */

static double now_ms(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}

static void *next(const char *name)
{
  void *f = dlsym(RTLD_NEXT, name);
  if (!f) {
    fprintf(stderr, "cuda_api_trace: no %s after this library\n", name);
    abort();
  }
  return f;
}

static void record(int func, double t0, size_t bytes)
{
  const double ms = now_ms() - t0;
  const int    p  = phase < PHASES ? phase : PHASES - 1;
  Tally       *t  = &tally[p][func];

  t->calls++;
  t->ms += ms;
  if (log_allocs < 0) log_allocs = getenv("STN_TRACE_ALLOCS") != NULL;
  if (log_allocs && (func == F_MALLOC || func == F_MALLOC_ASYNC || func == F_HOST_ALLOC || func == F_MALLOC_HOST || func == F_FREE) && nlogged < LOGGED) {
    void *f[FRAMES + 2];
    int   n = backtrace(f, FRAMES + 2);
    for (int i = 2; i < n; i++) frames[nlogged][i - 2] = f[i]; /* past record() and the wrapper */
    logged[nlogged++] = (Slow){func, p, ms, bytes};
  }
  if (ms > 0.05) {
    int k = 0;
    t->slow_calls++;
    t->slow_ms += ms;
    for (int i = 1; i < SLOW; i++)
      if (slowest[i].ms < slowest[k].ms) k = i;
    if (ms > slowest[k].ms) slowest[k] = (Slow){func, p, ms, bytes};
  }
}

#define TIMED(func, bytes, call) \
  do { \
    const double t0_ = now_ms(); \
    rc               = call; \
    record(func, t0_, bytes); \
  } while (0)

cudaError_t cudaMalloc(void **p, size_t bytes)
{
  static cudaError_t (*f)(void **, size_t);
  cudaError_t rc;
  if (!f) f = next("cudaMalloc");
  TIMED(F_MALLOC, bytes, f(p, bytes));
  return rc;
}

cudaError_t cudaMallocAsync(void **p, size_t bytes, cudaStream_t s)
{
  static cudaError_t (*f)(void **, size_t, cudaStream_t);
  cudaError_t rc;
  static int grown;
  if (!f) f = next("cudaMallocAsync");
  if (!grown++ && getenv("STN_TRACE_POOL_MB")) { /* the pool grown once, before the program's first pooled block */
    size_t mb = (size_t)atol(getenv("STN_TRACE_POOL_MB"));
    void  *big;
    double t0 = now_ms();
    if (mb && f(&big, mb << 20, s) == cudaSuccess) {
      cudaFreeAsync(big, s);
      cudaStreamSynchronize(s);
    }
    fprintf(stderr, "cuda_api_trace: the pool grown by %zu MB in %.3f ms\n", mb, now_ms() - t0);
  }
  TIMED(F_MALLOC_ASYNC, bytes, f(p, bytes, s));
  return rc;
}

cudaError_t cudaFree(void *p)
{
  static cudaError_t (*f)(void *);
  cudaError_t rc;
  if (!f) f = next("cudaFree");
  TIMED(F_FREE, 0, f(p));
  return rc;
}

cudaError_t cudaFreeAsync(void *p, cudaStream_t s)
{
  static cudaError_t (*f)(void *, cudaStream_t);
  cudaError_t rc;
  if (!f) f = next("cudaFreeAsync");
  TIMED(F_FREE_ASYNC, 0, f(p, s));
  return rc;
}

cudaError_t cudaHostAlloc(void **p, size_t bytes, unsigned flags)
{
  static cudaError_t (*f)(void **, size_t, unsigned);
  cudaError_t rc;
  if (!f) f = next("cudaHostAlloc");
  TIMED(F_HOST_ALLOC, bytes, f(p, bytes, flags));
  return rc;
}

cudaError_t cudaMallocHost(void **p, size_t bytes)
{
  static cudaError_t (*f)(void **, size_t);
  cudaError_t rc;
  if (!f) f = next("cudaMallocHost");
  TIMED(F_MALLOC_HOST, bytes, f(p, bytes));
  return rc;
}

cudaError_t cudaFreeHost(void *p)
{
  static cudaError_t (*f)(void *);
  cudaError_t rc;
  if (!f) f = next("cudaFreeHost");
  TIMED(F_FREE_HOST, 0, f(p));
  return rc;
}

cudaError_t cudaIpcOpenMemHandle(void **p, cudaIpcMemHandle_t h, unsigned flags)
{
  static cudaError_t (*f)(void **, cudaIpcMemHandle_t, unsigned);
  cudaError_t rc;
  if (!f) f = next("cudaIpcOpenMemHandle");
  TIMED(F_IPC_OPEN, 0, f(p, h, flags));
  return rc;
}

cudaError_t cudaIpcGetMemHandle(cudaIpcMemHandle_t *h, void *p)
{
  static cudaError_t (*f)(cudaIpcMemHandle_t *, void *);
  cudaError_t rc;
  if (!f) f = next("cudaIpcGetMemHandle");
  TIMED(F_IPC_GET, 0, f(h, p));
  return rc;
}

cudaError_t __cudaGetKernel(cudaKernel_t *k, const void *entry)
{
  static cudaError_t (*f)(cudaKernel_t *, const void *);
  cudaError_t rc;
  if (!f) f = next("__cudaGetKernel");
  TIMED(F_GET_KERNEL, 0, f(k, entry));
  return rc;
}

cudaError_t __cudaLaunchKernel(cudaKernel_t k, dim3 grid, dim3 block, void **args, size_t shared, cudaStream_t s)
{
  static cudaError_t (*f)(cudaKernel_t, dim3, dim3, void **, size_t, cudaStream_t);
  cudaError_t rc;
  if (!f) f = next("__cudaLaunchKernel");
  TIMED(F_LAUNCH, 0, f(k, grid, block, args, shared, s));
  return rc;
}

cudaError_t cudaLaunchCooperativeKernel(const void *k, dim3 grid, dim3 block, void **args, size_t shared, cudaStream_t s)
{
  static cudaError_t (*f)(const void *, dim3, dim3, void **, size_t, cudaStream_t);
  cudaError_t rc;
  if (!f) f = next("cudaLaunchCooperativeKernel");
  TIMED(F_LAUNCH_COOP, 0, f(k, grid, block, args, shared, s));
  return rc;
}

cudaError_t cudaMemcpy(void *dst, const void *src, size_t bytes, enum cudaMemcpyKind kind)
{
  static cudaError_t (*f)(void *, const void *, size_t, enum cudaMemcpyKind);
  cudaError_t rc;
  if (!f) f = next("cudaMemcpy");
  TIMED(F_MEMCPY, bytes, f(dst, src, bytes, kind));
  return rc;
}

cudaError_t cudaStreamSynchronize(cudaStream_t s)
{
  static cudaError_t (*f)(cudaStream_t);
  cudaError_t rc;
  if (!f) f = next("cudaStreamSynchronize");
  TIMED(F_STREAM_SYNC, 0, f(s));
  return rc;
}

cudaError_t cudaDeviceSynchronize(void)
{
  static cudaError_t (*f)(void);
  cudaError_t rc;
  if (!f) f = next("cudaDeviceSynchronize");
  TIMED(F_DEVICE_SYNC, 0, f());
  return rc;
}

/* PETSc's SNESSolve as the program calls it: the phases' bounds. */
int SNESSolve(void *snes, void *b, void *x)
{
  static int (*f)(void *, void *, void *);
  int rc;
  if (!f) f = next("SNESSolve");
  phase++;
  TIMED(F_SOLVE, 0, f(snes, b, x));
  phase++;
  return rc;
}

static const char *phase_name(int p, char *buf, size_t n)
{
  if (p == 0) snprintf(buf, n, "before");
  else if (p % 2) snprintf(buf, n, "solve %d", (p + 1) / 2);
  else snprintf(buf, n, "after %d", p / 2);
  return buf;
}

__attribute__((destructor)) static void report(void)
{
  const char *dir = getenv("STN_TRACE_DIR"), *rank = getenv("PMI_RANK");
  char        path[4096], name[32];
  FILE       *out = stderr;

  if (dir) {
    snprintf(path, sizeof path, "%s/trace.%s.txt", dir, rank ? rank : "0");
    if (!(out = fopen(path, "w"))) out = stderr;
  }
  fprintf(out, "%-10s %-28s %7s %10s %6s %10s\n", "phase", "function", "calls", "ms", "slow", "slow ms");
  for (int p = 0; p < PHASES; p++)
    for (int i = 0; i < NFUNCS; i++)
      if (tally[p][i].calls)
        fprintf(out, "%-10s %-28s %7ld %10.3f %6ld %10.3f\n", phase_name(p, name, sizeof name), fname[i], tally[p][i].calls, tally[p][i].ms, tally[p][i].slow_calls, tally[p][i].slow_ms);
  fprintf(out, "slowest calls:\n");
  for (int i = 0; i < SLOW; i++)
    if (slowest[i].ms > 0) fprintf(out, "%-10s %-28s %10.3f ms %12zu bytes\n", phase_name(slowest[i].phase, name, sizeof name), fname[slowest[i].func], slowest[i].ms, slowest[i].bytes);
  if (nlogged) fprintf(out, "allocations in order:\n");
  for (int i = 0; i < nlogged; i++) {
    fprintf(out, "%-10s %-28s %10.3f ms %12zu bytes", phase_name(logged[i].phase, name, sizeof name), fname[logged[i].func], logged[i].ms, logged[i].bytes);
    for (int k = 0; k < FRAMES && frames[i][k]; k++) {
      Dl_info d;
      if (dladdr(frames[i][k], &d) && d.dli_fname) {
        const char *b = strrchr(d.dli_fname, '/');
        fprintf(out, " %s+%#lx", b ? b + 1 : d.dli_fname, (unsigned long)((char *)frames[i][k] - (char *)d.dli_fbase));
      }
    }
    fprintf(out, "\n");
  }
  if (out != stderr) fclose(out);
}
