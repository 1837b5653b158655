/* stnhalo_cuda.cu: the put and the wait of the device ghost exchange (stnhalo_cuda.h). The put
   is bandwidth-bound on the sender's interior copy (16 bytes per owned unknown); the slabs to the
   neighbours are a few rows of points, written over NVLink; the rest is launch latency. */
#include "stnhalo_cuda.h"

#include <cuda_runtime.h>

#include <cstdio>
#include <cstring>

namespace {

constexpr int kThreads = 256;

int check(cudaError_t err, const char *what) { return err == cudaSuccess ? 0 : StnCUDARecordError((int)err, what); }

/* Spins until flags[q] >= epoch for every q whose bit is in mask; gives up (a message, a trap)
   after STN_HALO_TIMEOUT_S seconds. One thread per flag. */
__device__ void wait_flags(const long long *flags, unsigned mask, long long epoch, int q)
{
  if (q < 32 && (mask >> q & 1u)) {
    const volatile long long *f = flags + q;
    unsigned long long        t0, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    while (*f < epoch) {
      __nanosleep(64);
      asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
      if (now - t0 > (unsigned long long)STN_HALO_TIMEOUT_S * 1000000000ull) {
        printf("stencilc: no ghost values came from neighbour %d within %d s (exchange %lld); the rank that owns them has stopped\n", q, STN_HALO_TIMEOUT_S, epoch);
        __trap();
      }
    }
  }
  __threadfence_system();
}

/* One thread per point sent. A block's threads fence their writes at system scope before the
   block counts itself done; the last block raises the flags, so a receiver that sees its flag
   sees every value of this put, and then waits for its own flags (mask), so that the kernel
   ends with the exchange done: one launch per exchange. */
__global__ void __launch_bounds__(kThreads) halo_put(const StnHaloPut *__restrict__ plan, const double *__restrict__ owned, long long epoch, const long long *flags, unsigned mask)
{
  const StnHaloPut &p = *plan;
  __shared__ bool   last;
  const long long t = (long long)blockIdx.x * kThreads + threadIdx.x;

  if (t < p.first[p.nslab]) {
    int q = 0;
    while (t >= p.first[q + 1]) q++;
    const StnHaloSlab &sl = p.slab[q];
    const long long    r  = t - p.first[q];
    const int          i = (int)(r % sl.m[0]), j = (int)((r / sl.m[0]) % sl.m[1]), k = (int)(r / ((long long)sl.m[0] * sl.m[1]));
    const int          pi = sl.s[0] + i, pj = sl.s[1] + j, pk = sl.s[2] + k;
    const long long    from = (((long long)(pk - p.os[2]) * p.om[1] + (pj - p.os[1])) * p.om[0] + (pi - p.os[0])) * p.dof;
    const long long    to   = (((long long)(pk + sl.shift[2] - sl.gs[2]) * sl.gm[1] + (pj + sl.shift[1] - sl.gs[1])) * sl.gm[0] + (pi + sl.shift[0] - sl.gs[0])) * p.dof;
    for (int c = 0; c < p.dof; c++) sl.dst[to + c] = owned[from + c];
    if (sl.flag) __threadfence_system();
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    __threadfence_system();
    last = atomicAdd(p.blocks_done, 1u) == gridDim.x - 1;
    if (last) { /* the last block: every value is out */
      *p.blocks_done = 0;
      __threadfence_system();
      for (int q = 0; q < p.nslab; q++)
        if (p.slab[q].flag) *(volatile long long *)p.slab[q].flag = epoch;
      __threadfence_system();
    }
  }
  __syncthreads();
  if (last && threadIdx.x < 32) wait_flags(flags, mask, epoch, threadIdx.x);
}

__global__ void halo_wait(const long long *flags, unsigned mask, long long epoch) { wait_flags(flags, mask, epoch, threadIdx.x); }

} /* namespace */

static_assert(sizeof(cudaIpcMemHandle_t) == STN_HALO_IPC_BYTES, "cudaIpcMemHandle_t is 64 bytes");

/* A failure these report is one the caller handles (the exchange is not made, the cycle falls
   back): the error is recorded for the message and taken out of the runtime's last-error state,
   so that the next launch check does not report it against an unrelated kernel. */
static int handled(cudaError_t err, const char *what)
{
  if (err != cudaSuccess) (void)cudaGetLastError();
  return check(err, what);
}

extern "C" int StnHaloAlloc(void **p, size_t bytes)
{
  int err = handled(cudaMalloc(p, bytes), "StnHaloAlloc: cudaMalloc");
  if (!err) err = handled(cudaMemset(*p, 0, bytes), "StnHaloAlloc: cudaMemset");
  return err ? err : handled(cudaDeviceSynchronize(), "StnHaloAlloc: cudaDeviceSynchronize"); /* zero before any rank can write */
}

extern "C" int StnHaloHandle(void *p, void *handle) { return handled(cudaIpcGetMemHandle((cudaIpcMemHandle_t *)handle, p), "StnHaloHandle: cudaIpcGetMemHandle"); }

extern "C" int StnHaloMap(const void *handle, void **p)
{
  cudaIpcMemHandle_t h;
  memcpy(&h, handle, sizeof h);
  return handled(cudaIpcOpenMemHandle(p, h, cudaIpcMemLazyEnablePeerAccess), "StnHaloMap: cudaIpcOpenMemHandle");
}

extern "C" int StnHaloUnmap(void *p) { return check(cudaIpcCloseMemHandle(p), "StnHaloUnmap: cudaIpcCloseMemHandle"); }

extern "C" int StnHaloPutCUDA(const StnHaloPut *plan, long long n, const double *owned, long long epoch, const long long *flags, unsigned mask)
{
  if (n < 1) return StnHaloWaitCUDA(flags, mask, epoch); /* nothing to send */
  halo_put<<<(unsigned)((n + kThreads - 1) / kThreads), kThreads>>>(plan, owned, epoch, flags, mask);
  return check(cudaGetLastError(), "StnHaloPutCUDA: launch");
}

extern "C" int StnHaloWaitCUDA(const long long *flags, unsigned mask, long long epoch)
{
  if (!mask) return 0;
  halo_wait<<<1, 32>>>(flags, mask, epoch);
  return check(cudaGetLastError(), "StnHaloWaitCUDA: launch");
}
