/* stnhalo_cuda.cu: the put, the wait and the unpack of the device ghost exchange
   (stnhalo_cuda.h). The put is bandwidth-bound on the sender's interior copy (16 bytes per owned
   value); the slabs to the neighbours are a few rows of points, written over NVLink, and the
   unpack reads them once more; the rest is launch latency. */
#include "stnhalo_cuda.h"
#include "stnhalo_layout.h"

#include <cuda_runtime.h>

#include <climits>
#include <cstdio>
#include <cstring>

namespace {

constexpr int kThreads = STN_HALO_THREADS;
constexpr int kPer     = STN_HALO_COPY_PER_THREAD;

int check(cudaError_t err, const char *what) { return err == cudaSuccess ? 0 : StnCUDARecordError((int)err, what); }

/* The flag's message passing at system scope (the sender's GPU writes, the receiver's reads):
   a release before the flag goes up and an acquire after it is seen are all it needs (PTX's
   fence.acq_rel). __threadfence_system is fence.sc, which also orders every other access in
   the system and waits longer. */
__device__ __forceinline__ void fence_acq_rel_system() { asm volatile("fence.acq_rel.sys;" ::: "memory"); }

/* Spins until flags[q] >= epoch for every q whose bit is in mask; gives up (a trap, and a message
   where report) after STN_HALO_TIMEOUT_S seconds. One thread per flag. */
__device__ void wait_flags(const long long *flags, unsigned mask, long long epoch, int q, bool report)
{
  if (q < 32 && (mask >> q & 1u)) {
    const volatile long long *f = flags + q;
    unsigned long long        t0, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    while (*f < epoch) {
      __nanosleep(64);
      asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
      if (now - t0 > (unsigned long long)STN_HALO_TIMEOUT_S * 1000000000ull) {
        if (report) printf("stencilc: no ghost values came from neighbour %d within %d s (exchange %lld); the rank that owns them has stopped\n", q, STN_HALO_TIMEOUT_S, epoch);
        __trap();
      }
    }
  }
  fence_acq_rel_system(); /* acquire: the values written before the flag */
}

/* Value t of the owned box's copy (slab 0): its place in the ghosted array. Below 2^31 values
   the divisions are multiplies (stnfastdiv.h). */
__device__ __forceinline__ long long interior_to(const StnHaloPut &p, const StnHaloSlab &sl, long long t)
{
  long long c, j, k;
  if (p.src_stride < INT_MAX) {
    const int ti = (int)t, li = StnFastDivide(ti, p.line_div), ki = StnFastDivide(li, p.row_div);
    c = ti - li * p.om[0] * p.dof, k = ki, j = li - ki * p.om[1];
  } else {
    const long long L = (long long)p.om[0] * p.dof, line = t / L;
    c = t - line * L, j = line % p.om[1], k = line / p.om[1];
  }
  return (((k + p.os[2] - sl.gs[2]) * sl.gm[1] + (j + p.os[1] - sl.gs[1])) * sl.gm[0] + (p.os[0] - sl.gs[0])) * p.dof + c;
}

/* Point t of those this rank sends (slabs 1 and up): its dof values of each array into the
   receiver's inbox. */
__device__ __forceinline__ void send_point(const StnHaloPut &p, long long t, const double *__restrict__ owned)
{
  if (t >= p.first[p.nslab]) return;
  int q = 1;
  while (t >= p.first[q + 1]) q++;
  const StnHaloSlab &sl = p.slab[q];
  long long          from, to;
  stn_halo_send_index(&p, &sl, (int)(t - p.first[q]), &from, &to); /* a slab is at most the sender's owned box: an int */
  for (int v = 0; v < p.nvec; v++)
    for (int c = 0; c < p.dof; c++) sl.dst[v * sl.dst_stride + to + c] = owned[v * p.src_stride + from + c];
}

/* After its sends, by every thread of a block: the block releases its writes at system scope
   (thread 0, after the block's barrier: the fence is cumulative) and counts itself done among
   nsend; the last one acquires the others' and raises the flags (a receiver that sees its flag
   and then acquires sees every value of this put). Returns whether this block was the last, to
   every thread. */
__device__ __forceinline__ bool sent(const StnHaloPut &p, long long nsend, long long epoch)
{
  __shared__ bool last;

  __syncthreads();
  if (threadIdx.x == 0) {
    fence_acq_rel_system(); /* release: the block's values, before its count */
    last = atomicAdd(p.blocks_done, 1u) == nsend - 1;
    if (last) { /* the last block: every value is out */
      *p.blocks_done = 0;
      fence_acq_rel_system(); /* acquire the other blocks' releases, release them to the flags */
      for (int q = 1; q < p.nslab; q++)
        if (p.slab[q].flag) *(volatile long long *)p.slab[q].flag = epoch;
    }
  }
  __syncthreads();
  return last;
}

/* The first blocks send the slabs to the neighbours, a thread per point; each block fences its
   writes at system scope (thread 0, after the block's barrier: the fence is cumulative) and
   counts itself done, and the last one raises the flags (a receiver that sees its flag sees
   every value of this put) and then waits for its own (mask), so that the kernel ends with the
   exchange done: one launch per exchange. The interior_blocks blocks after them copy the owned
   box into the sender's own ghosted array (slab 0's layout, ghosted), kPer values per thread per
   array, while the flags travel: nobody else reads those values, and the sender's next kernel
   runs after this one (blocks start in index order: with the copy first, the flags went out
   only after it). */
__global__ void __launch_bounds__(kThreads) halo_put(const StnHaloPut *__restrict__ plan, const double *__restrict__ owned, double *__restrict__ ghosted, long long epoch, const long long *flags, unsigned mask)
{
  const StnHaloPut &p     = *plan;
  const long long   nsend = (long long)gridDim.x - (ghosted ? p.interior_blocks : 0); /* no ghosted array: no copy */
  const long long   b     = (long long)blockIdx.x < nsend ? (long long)blockIdx.x + p.interior_blocks : (long long)blockIdx.x - nsend;

  if (b < p.interior_blocks) { /* kPer values per thread, a block's consecutive, kThreads apart */
    const StnHaloSlab &sl = p.slab[0];
    const long long    t0 = b * kThreads * kPer + threadIdx.x;
    long long          to[kPer];
#pragma unroll
    for (int r = 0; r < kPer; r++) to[r] = t0 + r * kThreads < p.src_stride ? interior_to(p, sl, t0 + r * kThreads) : -1;
    for (int v = 0; v < p.nvec; v++) {
      double val[kPer];
#pragma unroll
      for (int r = 0; r < kPer; r++)
        if (to[r] >= 0) val[r] = owned[v * p.src_stride + t0 + r * kThreads];
#pragma unroll
      for (int r = 0; r < kPer; r++)
        if (to[r] >= 0) ghosted[v * sl.dst_stride + to[r]] = val[r];
    }
    return;
  }
  send_point(p, (b - p.interior_blocks) * kThreads + threadIdx.x, owned);
  const bool last = sent(p, nsend, epoch);
  if (last && threadIdx.x < 32) wait_flags(flags, mask, epoch, threadIdx.x, true);
}

/* Point t of those the ghosts received: its dof values of each array from the inbox to its
   ghost. */
__device__ __forceinline__ void unpack_point(const StnHaloUnpack &p, long long t, const double *inbox, double *__restrict__ ghosted)
{
  if (t >= p.first[p.nblock]) return;
  int q = 0;
  while (t >= p.first[q + 1]) q++;
  const long long to = stn_halo_unpack_to(&p, q, (int)(t - p.first[q])); /* a block is at most the sender's owned box: an int */
  for (int v = 0; v < p.nvec; v++)
    for (int c = 0; c < p.dof; c++) ghosted[v * p.dst_stride + to + c] = __ldcg(inbox + v * p.src_stride + t * p.dof + c); /* from L2: other GPUs wrote it */
}

/* A thread per point received. */
__global__ void __launch_bounds__(kThreads) halo_unpack(const StnHaloUnpack *__restrict__ plan, const double *inbox, double *__restrict__ ghosted)
{
  unpack_point(*plan, (long long)blockIdx.x * kThreads + threadIdx.x, inbox, ghosted);
}

/* The put of the ghosts alone and the unpack in one launch: each block sends, counts itself, the
   last raises the flags; then every block waits for this rank's flags and unpacks its share of
   the inbox. A block that waited before every block had sent could hold a place another needs
   to send, and the neighbours, waiting on those values, would not send theirs: so the launch is
   cooperative (every block resident, or no launch), and only where no other process's kernels
   share the GPU at the same time (StnHaloConnect). One launch and no gap between the wait and
   the unpack, where the two kernels had two. */
__global__ void __launch_bounds__(kThreads) halo_put_unpack(const StnHaloPut *__restrict__ plan, const StnHaloUnpack *__restrict__ uplan, const double *__restrict__ owned, const double *inbox, double *__restrict__ ghosted, long long epoch, const long long *flags, unsigned mask)
{
  const StnHaloPut    &p = *plan;
  const StnHaloUnpack &u = *uplan;

  send_point(p, (long long)blockIdx.x * kThreads + threadIdx.x, owned);
  (void)sent(p, gridDim.x, epoch);
  if (threadIdx.x < 32) wait_flags(flags, mask, epoch, threadIdx.x, blockIdx.x == 0); /* one message */
  __syncthreads();
  for (long long t = (long long)blockIdx.x * kThreads + threadIdx.x; t < u.first[u.nblock]; t += (long long)gridDim.x * kThreads) unpack_point(u, t, inbox, ghosted);
}

struct Peers {
  long long *p[32];
};

/* The printf is never reached (n <= 32): a kernel that can printf makes the driver set up the
   device's printf buffer at its first launch, which otherwise the put's (wait_flags) would do,
   blocking the host in the first exchange of a solve. */
__global__ void touch(Peers peers, int n)
{
  if ((int)threadIdx.x < n) *(volatile long long *)peers.p[threadIdx.x] = 0;
  if (n > 32) printf("stencilc: StnHaloTouch: %d peers\n", n);
  __threadfence_system();
}

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

extern "C" int StnHaloFree(void *p) { return handled(cudaFree(p), "StnHaloFree: cudaFree"); }

extern "C" int StnHaloHandle(void *p, void *handle) { return handled(cudaIpcGetMemHandle((cudaIpcMemHandle_t *)handle, p), "StnHaloHandle: cudaIpcGetMemHandle"); }

extern "C" int StnHaloMap(const void *handle, void **p)
{
  cudaIpcMemHandle_t h;
  memcpy(&h, handle, sizeof h);
  return handled(cudaIpcOpenMemHandle(p, h, cudaIpcMemLazyEnablePeerAccess), "StnHaloMap: cudaIpcOpenMemHandle");
}

extern "C" int StnHaloUnmap(void *p) { return check(cudaIpcCloseMemHandle(p), "StnHaloUnmap: cudaIpcCloseMemHandle"); }

extern "C" int StnHaloTouch(long long *const peers[], int n)
{
  Peers all = {};
  if (n <= 0) return 0;
  if (n > 32) n = 32;
  for (int q = 0; q < n; q++) all.p[q] = peers[q];
  touch<<<1, 32>>>(all, n);
  const int err = check(cudaGetLastError(), "StnHaloTouch: launch");
  return err ? err : check(cudaDeviceSynchronize(), "StnHaloTouch: cudaDeviceSynchronize");
}

extern "C" long long StnHaloPutBlocks(const StnHaloPut *p)
{
  const long long sent = (p->first[p->nslab] + kThreads - 1) / kThreads;
  return p->interior_blocks + (sent > 0 ? sent : 1); /* one to raise the flags and wait, at least */
}

extern "C" int StnHaloPutCUDA(const StnHaloPut *plan, long long blocks, const double *owned, double *ghosted, long long epoch, const long long *flags, unsigned mask)
{
  halo_put<<<(unsigned)blocks, kThreads>>>(plan, owned, ghosted, epoch, flags, mask);
  return check(cudaGetLastError(), "StnHaloPutCUDA: launch");
}

extern "C" int StnHaloPutUnpackFits(long long blocks)
{
  static int resident = -1; /* halo_put_unpack's blocks resident at once on this process's GPU */
  if (resident < 0) {
    int per_sm = 0, sms = 0, device = 0;
    if (handled(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, halo_put_unpack, kThreads, 0), "StnHaloPutUnpackFits: cudaOccupancyMaxActiveBlocksPerMultiprocessor") ||
        handled(cudaGetDevice(&device), "StnHaloPutUnpackFits: cudaGetDevice") ||
        handled(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), "StnHaloPutUnpackFits: cudaDeviceGetAttribute"))
      per_sm = 0; /* unknown: the two kernels */
    resident = per_sm * sms;
  }
  return blocks >= 1 && blocks <= resident;
}

extern "C" int StnHaloPutUnpackCUDA(const StnHaloPut *plan, long long blocks, const StnHaloUnpack *unpack_plan, const double *owned, const double *inbox, double *ghosted, long long epoch, const long long *flags, unsigned mask)
{
  void *args[] = {(void *)&plan, (void *)&unpack_plan, (void *)&owned, (void *)&inbox, (void *)&ghosted, (void *)&epoch, (void *)&flags, (void *)&mask};
  return check(cudaLaunchCooperativeKernel((const void *)halo_put_unpack, (unsigned)blocks, kThreads, args, 0, 0), "StnHaloPutUnpackCUDA: cudaLaunchCooperativeKernel");
}

extern "C" int StnHaloUnpackCUDA(const StnHaloUnpack *plan, const StnHaloUnpack *host_plan, const double *inbox, double *ghosted)
{
  const long long points = host_plan->first[host_plan->nblock];
  if (points <= 0) return 0;
  halo_unpack<<<(unsigned)((points + kThreads - 1) / kThreads), kThreads>>>(plan, inbox, ghosted);
  return check(cudaGetLastError(), "StnHaloUnpackCUDA: launch");
}
