// bench/probes/device_alloc_gpu.cu: what device allocations cost one process alone and several
// processes at once, one GPU each, as a first solve's set-up on several ranks of a node makes
// them (runtime/stncuda.cu): cudaMalloc, the stream-ordered pool growing and reusing a freed
// block (release threshold the maximum, as PETSc and the runtime set it), and cudaMallocHost.
//
//   nvcc -O2 -arch=sm_90 -o build/device_alloc bench/probes/device_alloc_gpu.cu
//   CUDA_VISIBLE_DEVICES=0 build/device_alloc alone                           # one process
//   for i in 0 1 2 3; do CUDA_VISIBLE_DEVICES=$i build/device_alloc rank$i & done; wait
//
// Prints one line per process: microseconds per call.
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

static double now(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

int main(int argc, char **argv)
{
  const char   *tag = argc > 1 ? argv[1] : "";
  const size_t  mb  = (size_t)1 << 20;
  cudaMemPool_t pool;
  uint64_t      threshold = UINT64_MAX;
  void         *small[32], *pooled[16], *direct[16], *host[16];
  double        t[8];

  cudaFree(0);
  cudaDeviceGetMemPool(&pool, 0);
  cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold);
  t[0] = now();
  for (int i = 0; i < 32; i++) cudaMalloc(&small[i], 64 << 10);
  t[1] = now();
  for (int i = 0; i < 16; i++) cudaMalloc(&direct[i], 33 * mb);
  t[2] = now();
  for (int i = 0; i < 16; i++) cudaMallocAsync(&pooled[i], 33 * mb, 0);
  cudaStreamSynchronize(0);
  t[3] = now();
  for (int i = 0; i < 16; i++) cudaFreeAsync(pooled[i], 0);
  cudaStreamSynchronize(0);
  t[4] = now();
  for (int i = 0; i < 16; i++) cudaMallocAsync(&pooled[i], 33 * mb, 0);
  cudaStreamSynchronize(0);
  t[5] = now();
  for (int i = 0; i < 16; i++) cudaMallocHost(&host[i], 4 * mb);
  t[6] = now();
  printf("%s us per call: cudaMalloc 64 KB %.0f, 33 MB %.0f | pool 33 MB new %.0f, reused %.1f | cudaMallocHost 4 MB %.0f (%s)\n", tag,
         1e6 * (t[1] - t[0]) / 32, 1e6 * (t[2] - t[1]) / 16, 1e6 * (t[3] - t[2]) / 16, 1e6 * (t[5] - t[4]) / 16, 1e6 * (t[6] - t[5]) / 16,
         cudaGetErrorString(cudaGetLastError()));
  for (int i = 0; i < 32; i++) cudaFree(small[i]);
  for (int i = 0; i < 16; i++) cudaFree(direct[i]), cudaFreeAsync(pooled[i], 0), cudaFreeHost(host[i]);
  return cudaDeviceSynchronize() != cudaSuccess;
}
