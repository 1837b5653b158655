/* stncuda.cu: the CUDA base (stncuda.h): device memory, the device, the last error in words, and
   timing marks. No PETSc header: nvcc compiles it anywhere. */
#include "stncuda.h"

#include <cuda_runtime.h>

#include <cstdarg>
#include <cstdio>

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

extern "C" int StnCUDAMalloc(void **p, size_t bytes)
{
  return check(cudaMalloc(p, bytes), "StnCUDAMalloc: cudaMalloc");
}

extern "C" int StnCUDAFree(void *p)
{
  return check(cudaFree(p), "StnCUDAFree: cudaFree");
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
