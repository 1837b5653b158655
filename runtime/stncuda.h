/* stncuda.h: the CUDA base of the runtime: device memory, the device, errors and timing marks,
   callable from C without any CUDA header (implemented in stncuda.cu, which includes no PETSc
   header either). Every other runtime module that talks to the GPU builds on it.

   Every function returns 0 on success and otherwise a cudaError_t value (cudaErrorInvalidValue,
   1, for arguments that do not fit together); StnCUDALastError() then says what went wrong, in
   words. From C, wrap a call in STN_CUDA_CALL to turn that into a PETSc error. */
#ifndef STNCUDA_H
#define STNCUDA_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Device memory, from the device's stream-ordered pool, or large blocks from chunks of it that
   one cudaMalloc each gave (stncuda.cu); NULL for 0 bytes. StnCUDAPoolInit sets the pool up (its
   first allocation costs milliseconds): when the program takes its GPU; StnCUDAPoolDisable before
   it gives every block from its own cudaMalloc, StnCUDAChunksDisable every large block. */
int  StnCUDAMalloc(void **p, size_t bytes);
int  StnCUDAFree(void *p);
int  StnCUDAPoolInit(void);
void StnCUDAPoolDisable(void);
void StnCUDAChunksDisable(void);
/* The size of a chunk on the current device (for tests). */
size_t StnCUDAChunkBytes(void);
int StnCUDAMemcpyHtoD(void *dst, const void *src, size_t bytes);
int StnCUDAMemcpyDtoH(void *dst, const void *src, size_t bytes);
/* Queued on the default stream, as the kernels are. */
int StnCUDAMemcpyDtoD(void *dst, const void *src, size_t bytes);
/* From pageable host memory, queued on the default stream: the driver stages src before it
   returns (src may change then), and the host does not wait for the kernels queued before, as
   cudaMemcpy's stream sync does. For small set-up data inside a solve. */
int StnCUDAMemcpyHtoDAsync(void *dst, const void *src, size_t bytes);
int StnCUDASynchronize(void);
/* The current device's L2 cache in bytes (0 when it cannot be asked). */
long StnCUDAL2Bytes(void);
/* Queues a write over a buffer twice the L2's size (kept for the next call), which evicts
   whatever a kernel left in L2: for timing a kernel as a solve runs it, after other data. */
int StnCUDAEvictL2(void);
/* The number of CUDA devices this process sees, without starting a context (0: no driver or none). */
int StnCUDADeviceCount(void);
/* The current device's PCI bus id ("0000:41:00.0"), into buf of size bytes: 0, or a
   cudaError_t value. Two processes on a node with the same id share one GPU. */
int StnCUDADeviceBusId(char *buf, int size);
/* 1 when the current CUDA device can be used, 0 otherwise (no driver, no device, or it fails to
   start): starts its context, so call it once the device is chosen. */
int StnCUDADevicePresent(void);

/* The last error one of the runtime's CUDA functions returned, in words ("no error" if none). */
const char *StnCUDALastError(void);
/* For the runtime's CUDA files: records err (a cudaError_t) from the call `what` as the last
   error, unless it is 0; returns err. */
int StnCUDARecordError(int err, const char *what);
/* The same with a message of the caller's (printf-style) for an error of its own. */
int StnCUDAFail(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Timing marks on the GPU's timeline, for profiling: records CUDA event i (0 to STN_CUDA_MARKS - 1) on the
   default stream; StnCUDAMarksElapsed gives the milliseconds between marks i and j once both
   have passed. Marks 0 to 7 are the Krylov engine's and the cycle's; 8 on, -stn_mg_profile's
   per level. */
#define STN_CUDA_MARKS 64
int StnCUDAMark(int i);
int StnCUDAMarksElapsed(int i, int j, float *ms);

#ifdef __cplusplus
}
#endif

#if !defined(__CUDACC__)
  #include <petscsys.h>
/* The one check of a call into the runtime's CUDA files from C. */
  #define STN_CUDA_CALL(call) \
    do { \
      if ((call) != 0) SETERRQ(PETSC_COMM_SELF, PETSC_ERR_LIB, "%s", StnCUDALastError()); \
    } while (0)
#endif

#endif
