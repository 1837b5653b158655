/* stncuda.cu: the CUDA base (stncuda.h): device memory, the device, the last error in words, and
   timing marks. No PETSc header: nvcc compiles it anywhere. */
#include "stncuda.h"

#include <cuda_runtime.h>

#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <new>

namespace {

char last_message[512] = "no error";

int check(cudaError_t err, const char *what)
{
  if (err == cudaSuccess) return 0;
  return StnCUDAFail((int)err, "%s: %s (%s)", what, cudaGetErrorString(err), cudaGetErrorName(err));
}

cudaEvent_t marks[STN_CUDA_MARKS];

} // namespace

extern "C" int StnCUDAFail(int err, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(last_message, sizeof last_message, fmt, ap);
  va_end(ap);
  return err;
}

extern "C" int StnCUDARecordError(int err, const char *what)
{
  return check((cudaError_t)err, what);
}

extern "C" const char *StnCUDALastError(void)
{
  return last_message;
}

/* Device memory comes from the device's stream-ordered pool, on the default stream (the
   kernels' and PETSc's): a block freed back to the pool serves the next request without the
   driver. The driver takes the allocations of a node's ranks in turn, and the ranks of a first
   solve set up their hierarchies in step: a cudaMalloc there took 0.1 to 1.8 ms on 4 ranks
   against 0.08 ms alone. The pool keeps what is freed for this process (its release threshold
   the maximum, as PETSc sets it). A block of STN_CUDA_DIRECT_BYTES or more is cudaMalloc's: the
   pool maps new memory in small pages (a gigabyte took it about 7 ms on 4 ranks, cudaMalloc
   about 1 ms); such blocks (a Krylov basis, a fine grid's matrix) are few, listed here for
   StnCUDAFree, and where the device has no room for one the pool's free blocks go back to it
   first. A device without pools (cudaDevAttrMemoryPoolsSupported 0) gets every block so, and so
   does a program whose MPI reads device memory (StnCUDAPoolDisable): it may not map pool memory. */
#define STN_CUDA_DIRECT_BYTES ((size_t)64 << 20)

namespace {

struct Direct {
  void   *p;
  Direct *next;
};
Direct *direct; /* the cudaMalloc blocks */
int     pool_state; /* 0 not set up, 1 in use, -1 the device has none */

int pool_get(cudaMemPool_t *pool)
{
  int dev;
  if (int rc = check(cudaGetDevice(&dev), "cudaGetDevice")) return rc;
  return check(cudaDeviceGetMemPool(pool, dev), "cudaDeviceGetMemPool");
}

int pool_setup()
{
  cudaMemPool_t pool;
  uint64_t      threshold = UINT64_MAX;
  int           dev, pools = 0;
  if (pool_state) return 0;
  if (int rc = check(cudaGetDevice(&dev), "cudaGetDevice")) return rc;
  if (int rc = check(cudaDeviceGetAttribute(&pools, cudaDevAttrMemoryPoolsSupported, dev), "cudaDeviceGetAttribute")) return rc;
  if (!pools) return pool_state = -1, 0;
  if (int rc = pool_get(&pool)) return rc;
  if (int rc = check(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold), "cudaMemPoolSetAttribute")) return rc;
  pool_state = 1;
  return 0;
}

int direct_malloc(void **p, size_t bytes)
{
  Direct *d = new (std::nothrow) Direct;
  if (!d) return StnCUDAFail((int)cudaErrorMemoryAllocation, "StnCUDAMalloc: out of host memory");
  if (cudaMalloc(p, bytes) != cudaSuccess) { /* the pool's free blocks back to the device, then once more */
    cudaMemPool_t pool;
    (void)cudaGetLastError();
    if (pool_state == 1 && cudaDeviceSynchronize() == cudaSuccess && pool_get(&pool) == 0) (void)cudaMemPoolTrimTo(pool, 0);
    (void)cudaGetLastError(); /* the trim's, if it failed: not the next launch's to report */
    if (int rc = check(cudaMalloc(p, bytes), "StnCUDAMalloc: cudaMalloc")) {
      delete d;
      return rc;
    }
  }
  *d     = {*p, direct};
  direct = d;
  return 0;
}

} // namespace

extern "C" void StnCUDAPoolDisable(void)
{
  if (!pool_state) pool_state = -1;
}

extern "C" int StnCUDAPoolInit(void)
{
  void *p;
  if (int rc = pool_setup()) return rc;
  if (pool_state < 0) return 0;
  if (int rc = check(cudaMallocAsync(&p, (size_t)2 << 20, 0), "StnCUDAPoolInit: cudaMallocAsync")) return rc;
  if (int rc = check(cudaFreeAsync(p, 0), "StnCUDAPoolInit: cudaFreeAsync")) return rc;
  return check(cudaStreamSynchronize(0), "StnCUDAPoolInit: cudaStreamSynchronize");
}

extern "C" int StnCUDAMalloc(void **p, size_t bytes)
{
  *p = NULL;
  if (!bytes) return 0;
  if (int rc = pool_setup()) return rc;
  if (bytes >= STN_CUDA_DIRECT_BYTES || pool_state < 0) return direct_malloc(p, bytes);
  return check(cudaMallocAsync(p, bytes, 0), "StnCUDAMalloc: cudaMallocAsync");
}

extern "C" int StnCUDAFree(void *p)
{
  if (!p) return 0;
  for (Direct **q = &direct; *q; q = &(*q)->next)
    if ((*q)->p == p) {
      Direct *d = *q;
      *q        = d->next;
      delete d;
      return check(cudaFree(p), "StnCUDAFree: cudaFree");
    }
  return check(cudaFreeAsync(p, 0), "StnCUDAFree: cudaFreeAsync");
}

extern "C" int StnCUDAMemcpyHtoD(void *dst, const void *src, size_t bytes)
{
  return check(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice), "StnCUDAMemcpyHtoD: cudaMemcpy");
}

extern "C" int StnCUDAMemcpyDtoH(void *dst, const void *src, size_t bytes)
{
  return check(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost), "StnCUDAMemcpyDtoH: cudaMemcpy");
}

extern "C" int StnCUDAMemcpyDtoD(void *dst, const void *src, size_t bytes)
{
  return check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, 0), "StnCUDAMemcpyDtoD: cudaMemcpyAsync");
}

extern "C" int StnCUDASynchronize(void)
{
  return check(cudaDeviceSynchronize(), "StnCUDASynchronize: cudaDeviceSynchronize");
}

extern "C" long StnCUDAL2Bytes(void)
{
  int dev, bytes = 0;
  if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetAttribute(&bytes, cudaDevAttrL2CacheSize, dev) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return bytes;
}

extern "C" int StnCUDAEvictL2(void)
{
  static void  *buf;
  static size_t size;
  int           err;
  if (!buf) {
    size = 2 * (size_t)(StnCUDAL2Bytes() > 0 ? StnCUDAL2Bytes() : 64L << 20);
    if ((err = check(cudaMalloc(&buf, size), "StnCUDAEvictL2: cudaMalloc"))) return err;
  }
  return check(cudaMemsetAsync(buf, 0, size, 0), "StnCUDAEvictL2: cudaMemsetAsync");
}

extern "C" int StnCUDADeviceCount(void)
{
  int n = 0;

  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return n;
}

extern "C" int StnCUDADeviceBusId(char *buf, int size)
{
  int dev = 0;

  if (size > 0) buf[0] = '\0';
  int rc = check(cudaGetDevice(&dev), "cudaGetDevice");
  return rc ? rc : check(cudaDeviceGetPCIBusId(buf, size, dev), "cudaDeviceGetPCIBusId");
}

extern "C" int StnCUDADevicePresent(void)
{
  int n = 0;

  if (cudaGetDeviceCount(&n) != cudaSuccess || n < 1) {
    (void)cudaGetLastError(); /* not sticky: clear it for the caller's next check */
    return 0;
  }
  if (cudaFree(nullptr) != cudaSuccess) { /* starts the context: fails if the device cannot be used */
    (void)cudaGetLastError();
    return 0;
  }
  return 1;
}

extern "C" int StnCUDAMark(int i)
{
  if (i < 0 || i >= STN_CUDA_MARKS) return StnCUDAFail((int)cudaErrorInvalidValue, "StnCUDAMark: no such mark %d", i);
  if (!marks[i]) {
    int rc = check(cudaEventCreate(&marks[i]), "StnCUDAMark: cudaEventCreate");
    if (rc) return rc;
  }
  return check(cudaEventRecord(marks[i], 0), "StnCUDAMark: cudaEventRecord");
}

extern "C" int StnCUDAMarksElapsed(int i, int j, float *ms)
{
  *ms = 0;
  if (i < 0 || i >= STN_CUDA_MARKS || j < 0 || j >= STN_CUDA_MARKS || !marks[i] || !marks[j])
    return StnCUDAFail((int)cudaErrorInvalidValue, "StnCUDAMarksElapsed: no such mark");
  return check(cudaEventElapsedTime(ms, marks[i], marks[j]), "StnCUDAMarksElapsed: cudaEventElapsedTime");
}
