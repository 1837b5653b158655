// bench/probes/step_latency.cu: what the fused GMRES step's fixed cost (about 15 us per step at one
// vector, docs/performance.md) is made of, by kernels that do one part of it each and nothing
// else, timed back to back on the default stream (1000 launches, mean per launch):
//   plain      an empty kernel (the launch itself)
//   coop       an empty cooperative launch, all blocks resident
//   coop+sync1 / coop+sync2  the same with one and two grid-wide barriers
//   fold       two barriers, each followed by every block folding the partials (as the step does)
//   report     a plain kernel whose block 0 writes a report to mapped host memory, fences
//              (__threadfence_system) and raises a flag, as the step's last block does
//   pass       one grid-stride pass reading two 2 MB vectors (n = 262144), writing one
// for the step's shapes (256 threads x 8 blocks per SM, and 1024 x 1). Build and run:
//   nvcc -O3 -arch=sm_90 -o step_latency bench/probes/step_latency.cu && ./step_latency
#include <cooperative_groups.h>
#include <cstdio>
#include <cuda_runtime.h>

namespace cg = cooperative_groups;

__global__ void plain() {}
__global__ void coop(int syncs, int fold, double *partials)
{
  cg::grid_group g = cg::this_grid();
  for (int s = 0; s < syncs; s++) {
    if (fold && threadIdx.x == 0) partials[blockIdx.x] = blockIdx.x;
    g.sync();
    if (fold) { // every block reads all blocks' partials, as fold_partials does
      double v = 0;
      for (int j = threadIdx.x; j < gridDim.x; j += blockDim.x) v += __ldcg(&partials[j]);
      if (v == -1.0) partials[0] = v; // keeps the loads
      __syncthreads();
    }
  }
}
__global__ void report(volatile double *host_report, volatile unsigned *flag, unsigned seq)
{
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    host_report[0] = 1.0, host_report[1] = 2.0;
    __threadfence_system();
    *flag = seq;
  }
}
__global__ void pass(const double *a, const double *b, double *c, long n)
{
  for (long i = (long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) c[i] = a[i] + b[i];
}

template <class F>
static double time_us(F launch, int reps = 1000)
{
  cudaEvent_t e0, e1;
  float       ms;
  cudaEventCreate(&e0), cudaEventCreate(&e1);
  for (int r = 0; r < 20; r++) launch();
  cudaEventRecord(e0);
  for (int r = 0; r < reps; r++) launch();
  cudaEventRecord(e1);
  cudaEventSynchronize(e1);
  cudaEventElapsedTime(&ms, e0, e1);
  return 1e3 * ms / reps;
}

int main()
{
  int sms;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  const long n = 262144;
  double    *a, *b, *c, *partials, *host_report, *dev_report;
  unsigned  *host_flag, *dev_flag;
  cudaMalloc(&a, n * 8), cudaMalloc(&b, n * 8), cudaMalloc(&c, n * 8), cudaMalloc(&partials, 1 << 20);
  cudaMemset(a, 0, n * 8), cudaMemset(b, 0, n * 8);
  cudaHostAlloc(&host_report, 64, cudaHostAllocMapped), cudaHostAlloc(&host_flag, 64, cudaHostAllocMapped);
  cudaHostGetDevicePointer(&dev_report, host_report, 0), cudaHostGetDevicePointer(&dev_flag, host_flag, 0);
  const int shapes[2][2] = {{256, 8}, {1024, 1}};
  printf("| kernel | block x blocks | us per launch (back to back) |\n|---|---|--:|\n");
  for (auto &s : shapes) {
    const int threads = s[0], blocks = s[1] * sms;
    int       syncs = 0, fold = 0;
    void     *args[] = {&syncs, &fold, &partials};
    auto      coop_launch = [&] { cudaLaunchCooperativeKernel((const void *)coop, blocks, threads, args, 0, 0); };
    printf("| plain | %d x %d | %.2f |\n", threads, blocks, time_us([&] { plain<<<blocks, threads>>>(); }));
    printf("| coop | %d x %d | %.2f |\n", threads, blocks, time_us(coop_launch));
    syncs = 1;
    printf("| coop+sync1 | %d x %d | %.2f |\n", threads, blocks, time_us(coop_launch));
    syncs = 2;
    printf("| coop+sync2 | %d x %d | %.2f |\n", threads, blocks, time_us(coop_launch));
    fold = 1;
    printf("| fold (2 barriers) | %d x %d | %.2f |\n", threads, blocks, time_us(coop_launch));
    unsigned seq = 0;
    printf("| report | %d x %d | %.2f |\n", threads, blocks, time_us([&] { report<<<blocks, threads>>>(dev_report, dev_flag, ++seq); }));
    printf("| pass (2 MB x 3) | %d x %d | %.2f |\n", threads, blocks, time_us([&] { pass<<<blocks, threads>>>(a, b, c, n); }));
  }
  cudaError_t err = cudaDeviceSynchronize();
  printf("status: %s\n", cudaGetErrorString(err));
  return err != cudaSuccess;
}
