/* stnlaunch_cuda.h: programmatic dependent launch (sm_90 and later) for the kernels of one
   Krylov iteration, shared by sgdia_cuda.cu and stnvec_cuda.cu (device code: nvcc only).

   A GMRES iteration is two kernels, the SG-DIA product and the Gram-Schmidt step, each waiting
   on the one before. Launched the usual way, a kernel starts only after the one before it has
   finished and the GPU has processed its launch: a gap of a few microseconds, on a step of
   30-50. Launched with launch_early, the GPU may start it as soon as the kernel before it lets
   it (every block of that kernel called let_next_kernel_start, or ended); its first act is then
   wait_for_previous_kernel, which returns when the kernel before it has finished and its
   writes are visible. The launch is prepared during the previous kernel instead of after it.

   Rules that keep it safe: a kernel launched early calls wait_for_previous_kernel before it
   reads or writes memory the kernels before it use; a kernel calls let_next_kernel_start
   anywhere (the next kernel waits for it to finish all the same). Before sm_90 both are no-ops
   and the attribute is ignored. StnCUDASetEarlyLaunch(0) launches them the usual way. */
#ifndef STNLAUNCH_CUDA_H
#define STNLAUNCH_CUDA_H

#include <cuda_runtime.h>

namespace stn_launch {
extern bool early; /* StnCUDASetEarlyLaunch */
}

__device__ __forceinline__ void wait_for_previous_kernel()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  cudaGridDependencySynchronize();
#endif
}

__device__ __forceinline__ void let_next_kernel_start()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  cudaTriggerProgrammaticLaunchCompletion();
#endif
}

/* kernel<<<grid, block, 0, stream>>>(args...), allowed to start before the kernel before it in
   the stream has finished (when stn_launch::early); cooperative: as cudaLaunchCooperativeKernel. */
template <typename... KArgs, typename... Args>
cudaError_t launch_early(void (*kernel)(KArgs...), dim3 grid, dim3 block, cudaStream_t stream, bool cooperative, Args... args)
{
  cudaLaunchConfig_t  cfg = {};
  cudaLaunchAttribute attr[2];
  int                 n = 0;

  cfg.gridDim  = grid;
  cfg.blockDim = block;
  cfg.stream   = stream;
  if (stn_launch::early) {
    attr[n].id                                         = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr[n++].val.programmaticStreamSerializationAllowed = 1;
  }
  if (cooperative) {
    attr[n].id              = cudaLaunchAttributeCooperative;
    attr[n++].val.cooperative = 1;
  }
  cfg.attrs    = attr;
  cfg.numAttrs = (unsigned)n;
  return cudaLaunchKernelEx(&cfg, kernel, args...);
}

#endif
