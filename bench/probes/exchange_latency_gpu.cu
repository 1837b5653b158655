// bench/probes/exchange_latency_gpu.cu: what one device ghost exchange between two GPUs
// (runtime/stnhalo_cuda.cu, about 10 us on the cavity's split levels, docs/performance.md) is
// made of. Two GPUs of one node, one host thread each, peer access over NVLink; each GPU sends
// n doubles to the other and receives n, as two neighbouring ranks do, 1000 exchanges in a row
// after 50 to warm up, mean per exchange on each GPU (CUDA events):
//   plain        an empty kernel (the launch and the gap between two kernels of a stream)
//   flags        one thread raises the peer's flag and waits for its own: the handshake alone
//   stnhalo      the runtime's exchange: the blocks write the peer's inbox, each releases its
//                writes (fence.acq_rel.sys) and counts itself, the last raises the flag; every
//                block waits for its own flag and unpacks the inbox into the ghosts (cooperative)
//   stnhalo-sc   the same with __threadfence_system (fence.sc) where stnhalo has acq_rel
//   direct       the blocks write the peer's ghosts themselves (no inbox, no unpack), each
//                counts itself in the peer's counter with a system-scope atomic after its
//                release; a block waits for all the peer's blocks (cooperative)
// for n = 1024, 8192 (the cavity's 2049^2 level: 2049 points x 4 unknowns) and 32768. Build and
// run on a machine with two GPUs:
//   nvcc -O3 -arch=sm_90 -std=c++17 -o build/exchange_latency bench/probes/exchange_latency_gpu.cu -lpthread
//   build/exchange_latency
#include <cuda_runtime.h>
#include <pthread.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

namespace {

constexpr int    kThreads  = 256;
constexpr int    kReps     = 1000;
constexpr int    kWarm     = 50;
constexpr double kTimeoutS = 5;

#define CHECK(call)                                                                                      \
  do {                                                                                                   \
    cudaError_t e_ = (call);                                                                             \
    if (e_ != cudaSuccess) {                                                                             \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_));             \
      exit(1);                                                                                           \
    }                                                                                                    \
  } while (0)

__device__ __forceinline__ void fence_acq_rel_system() { asm volatile("fence.acq_rel.sys;" ::: "memory"); }

__device__ __forceinline__ void fence(bool sc)
{
  if (sc) __threadfence_system();
  else fence_acq_rel_system();
}

/* Spins until *f >= target; a trap after kTimeoutS (the other GPU stopped). */
__device__ void wait_at_least(const long long *f, long long target)
{
  const volatile long long *v = f;
  unsigned long long        t0, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  while (*v < target) {
    __nanosleep(64);
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    if (now - t0 > (unsigned long long)(kTimeoutS * 1e9)) {
      printf("exchange_latency: no flag from the other GPU within %g s\n", kTimeoutS);
      __trap();
    }
  }
}

__global__ void plain() {}

__global__ void flags(long long *peer_flag, const long long *own_flag, long long epoch)
{
  if (threadIdx.x == 0) {
    *(volatile long long *)peer_flag = epoch;
    wait_at_least(own_flag, epoch);
  }
}

/* What one GPU's exchange uses: its own memory (src, inbox, ghosts, flag, counter) and the peer's
   inbox, ghosts and flag or counter, mapped through peer access. */
struct Side {
  const double *src;
  double       *inbox[2], *ghost[2];   /* own, by the exchange's parity */
  double       *peer_inbox[2], *peer_ghost[2];
  long long    *flag, *peer_flag;      /* flags: the exchange's number */
  long long    *count, *peer_count;    /* direct: blocks arrived */
  unsigned     *blocks_done;           /* stnhalo: own blocks sent */
  long          n;
};

__global__ void stnhalo(Side s, long long epoch, bool sc)
{
  __shared__ bool last;
  const int       e = (int)(epoch % 2);
  const long      i = (long)blockIdx.x * kThreads + threadIdx.x;

  if (i < s.n) s.peer_inbox[e][i] = s.src[i];
  __syncthreads();
  if (threadIdx.x == 0) {
    fence(sc);
    last = atomicAdd(s.blocks_done, 1u) == gridDim.x - 1;
    if (last) {
      *s.blocks_done = 0;
      fence(sc);
      *(volatile long long *)s.peer_flag = epoch;
      if (sc) __threadfence_system(); /* fence.sc after the flag too */
    }
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    wait_at_least(s.flag, epoch);
    fence(sc); /* acquire: the peer's values */
  }
  __syncthreads();
  if (i < s.n) s.ghost[e][i] = __ldcg(s.inbox[e] + i);
}

__global__ void direct(Side s, long long epoch)
{
  const int  e = (int)(epoch % 2);
  const long i = (long)blockIdx.x * kThreads + threadIdx.x;

  if (i < s.n) s.peer_ghost[e][i] = s.src[i];
  __syncthreads();
  if (threadIdx.x == 0) {
    fence_acq_rel_system();
    atomicAdd_system((unsigned long long *)s.peer_count, 1ull);
    wait_at_least(s.count, epoch * (long long)gridDim.x); /* both GPUs launch as many blocks */
    fence_acq_rel_system();
  }
  __syncthreads();
}

struct Shared {
  pthread_barrier_t barrier;
  Side              side[2];
  double            us[2];
};

template <class L>
double time_us(L launch, cudaStream_t st, pthread_barrier_t *b)
{
  cudaEvent_t a, z;
  float       ms;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&z));
  pthread_barrier_wait(b);
  for (int r = 0; r < kWarm; r++) launch(r + 1);
  CHECK(cudaEventRecord(a, st));
  for (int r = 0; r < kReps; r++) launch(kWarm + r + 1);
  CHECK(cudaEventRecord(z, st));
  CHECK(cudaEventSynchronize(z));
  CHECK(cudaEventElapsedTime(&ms, a, z));
  CHECK(cudaEventDestroy(a));
  CHECK(cudaEventDestroy(z));
  return 1e3 * ms / kReps;
}

void cooperative(const void *kernel, int blocks, void **args, cudaStream_t st) { CHECK(cudaLaunchCooperativeKernel(kernel, blocks, kThreads, args, 0, st)); }

/* One GPU's part of a variant: the flags and counters zeroed, both sides ready, then timed. */
void run(Shared *sh, int d, const char *variant)
{
  Side        &s = sh->side[d];
  cudaStream_t st;
  const int    blocks = (int)((s.n + kThreads - 1) / kThreads);
  CHECK(cudaSetDevice(d));
  CHECK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  CHECK(cudaMemset(s.flag, 0, sizeof(long long)));
  CHECK(cudaMemset(s.count, 0, sizeof(long long)));
  CHECK(cudaMemset(s.blocks_done, 0, sizeof(unsigned)));
  CHECK(cudaDeviceSynchronize());
  double us = 0;
  if (!strcmp(variant, "plain")) us = time_us([&](long long) { plain<<<1, 32, 0, st>>>(); }, st, &sh->barrier);
  else if (!strcmp(variant, "flags")) us = time_us([&](long long e) { flags<<<1, 32, 0, st>>>(s.peer_flag, s.flag, e); }, st, &sh->barrier);
  else if (!strcmp(variant, "stnhalo") || !strcmp(variant, "stnhalo-sc")) {
    bool sc = !strcmp(variant, "stnhalo-sc");
    us      = time_us(
      [&](long long e) {
        void *args[] = {&s, &e, &sc};
        cooperative((const void *)stnhalo, blocks, args, st);
      },
      st, &sh->barrier);
  } else if (!strcmp(variant, "direct")) {
    us = time_us(
      [&](long long e) {
        void *args[] = {&s, &e};
        cooperative((const void *)direct, blocks, args, st);
      },
      st, &sh->barrier);
  }
  CHECK(cudaGetLastError());
  CHECK(cudaStreamDestroy(st));
  sh->us[d] = us;
}

} // namespace

int main()
{
  int count = 0, p01 = 0, p10 = 0;
  CHECK(cudaGetDeviceCount(&count));
  if (count < 2) {
    fprintf(stderr, "exchange_latency: needs two GPUs, found %d\n", count);
    return 1;
  }
  CHECK(cudaDeviceCanAccessPeer(&p01, 0, 1));
  CHECK(cudaDeviceCanAccessPeer(&p10, 1, 0));
  if (!p01 || !p10) {
    fprintf(stderr, "exchange_latency: GPUs 0 and 1 cannot access each other's memory\n");
    return 1;
  }
  const long sizes[] = {1024, 8192, 32768};
  const char *variants[] = {"plain", "flags", "stnhalo", "stnhalo-sc", "direct"};
  printf("| variant | n doubles | us per exchange, GPU 0 | GPU 1 |\n|---|--:|--:|--:|\n");
  for (long n : sizes) {
    Shared sh;
    pthread_barrier_init(&sh.barrier, NULL, 2);
    for (int d = 0; d < 2; d++) { /* each GPU's memory, and its access to the other's */
      Side &s = sh.side[d];
      double *src;
      CHECK(cudaSetDevice(d));
      const cudaError_t peer = cudaDeviceEnablePeerAccess(1 - d, 0);
      if (peer == cudaErrorPeerAccessAlreadyEnabled) (void)cudaGetLastError(); /* the sizes before enabled it */
      else CHECK(peer);
      CHECK(cudaMalloc(&src, n * sizeof(double)));
      CHECK(cudaMemset(src, 0, n * sizeof(double)));
      s.src = src;
      for (int e = 0; e < 2; e++) {
        CHECK(cudaMalloc(&s.inbox[e], n * sizeof(double)));
        CHECK(cudaMalloc(&s.ghost[e], n * sizeof(double)));
      }
      CHECK(cudaMalloc(&s.flag, sizeof(long long)));
      CHECK(cudaMalloc(&s.count, sizeof(long long)));
      CHECK(cudaMalloc(&s.blocks_done, sizeof(unsigned)));
      s.n = n;
    }
    for (int d = 0; d < 2; d++) { /* the peer's pointers */
      Side &s = sh.side[d], &p = sh.side[1 - d];
      for (int e = 0; e < 2; e++) s.peer_inbox[e] = p.inbox[e], s.peer_ghost[e] = p.ghost[e];
      s.peer_flag  = p.flag;
      s.peer_count = p.count;
    }
    for (const char *v : variants) {
      std::thread t0(run, &sh, 0, v), t1(run, &sh, 1, v);
      t0.join(), t1.join();
      printf("| %s | %ld | %.2f | %.2f |\n", v, n, sh.us[0], sh.us[1]);
    }
    for (int d = 0; d < 2; d++) {
      Side &s = sh.side[d];
      CHECK(cudaSetDevice(d));
      CHECK(cudaFree((void *)s.src));
      for (int e = 0; e < 2; e++) {
        CHECK(cudaFree(s.inbox[e]));
        CHECK(cudaFree(s.ghost[e]));
      }
      CHECK(cudaFree(s.flag));
      CHECK(cudaFree(s.count));
      CHECK(cudaFree(s.blocks_done));
    }
    pthread_barrier_destroy(&sh.barrier);
  }
  return 0;
}
