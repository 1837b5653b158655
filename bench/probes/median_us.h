/* bench/probes/median_us.h: the CUDA benchmarks' timing (bench/probes/vec_loads_gpu.cu, bench/probes/mdot_probe_gpu.cu).
   median_us(launch, reps): us per call of launch(): one call to warm up, then 5 batches of reps
   back-to-back calls timed by CUDA events; the median batch. */
#ifndef BENCH_MEDIAN_US_H
#define BENCH_MEDIAN_US_H

#include <cuda_runtime.h>
#include <algorithm>
#include <vector>

template <class L>
float median_us(const L &launch, int reps)
{
  static cudaEvent_t a, b;
  if (!a) cudaEventCreate(&a), cudaEventCreate(&b);
  launch();
  std::vector<float> ts;
  for (int r = 0; r < 5; r++) {
    cudaEventRecord(a);
    for (int i = 0; i < reps; i++) launch();
    cudaEventRecord(b);
    cudaEventSynchronize(b);
    float ms;
    cudaEventElapsedTime(&ms, a, b);
    ts.push_back(ms * 1000 / reps);
  }
  std::sort(ts.begin(), ts.end());
  return ts[2];
}

#endif
