/* bench/probes/dot_probe_gpu.c: Dot at n = 1e8 on two VECSTNCUDA vectors, seven ways on the same arrays:
   through PETSc (VecDot both ways round, VecDotNorm2), our plain-C API (StnVecDot both ways round),
   cuBLAS's ddot, and our one-stream 2-norm for scale. 20 timed calls each after 5, wall clock;
   every reduction brings its result to the host. Written when bench/vec_gpu.sh showed Dot through
   VecDot 50 us slower than the raw kernel at 1e8 (docs/gpu-runs/vec_loads.md).

   With a CUDA PETSc (PETSC_DIR) and the runtime's objects (tests/gpu/vec-tests.sh --build-only):
     . tests/gpu/build-env.sh; R=build/gpu-tests/runtime
     $CC $CFLAGS -o dot_probe bench/probes/dot_probe_gpu.c $R/stnvec.o $R/stntune.o $R/stnvec_ref.o \
       $R/stncuda.o $R/stnvec_cuda.o $R/stngmres_cuda.o $R/sgdia_cuda.o $R/stncycle_cuda.o $LIBS -lcublas
     ./dot_probe        (on the GPU: 1.6 GB of device memory, about a second) */
#include <petscvec.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <time.h>
#include "stnvec.h"
#include "stnvec_cuda.h"

static double now(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e6 + t.tv_nsec * 1e-3;
}

int main(int argc, char **argv)
{
  const PetscInt n = 100000000;
  Vec            x, y;
  const double  *xa, *ya;
  double         d, nm;
  cublasHandle_t h;

  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  PetscCall(StnVecRegister());
  PetscCall(VecCreate(PETSC_COMM_SELF, &x));
  PetscCall(VecSetSizes(x, n, n));
  PetscCall(VecSetType(x, VECSTNCUDA));
  PetscCall(VecDuplicate(x, &y));
  PetscCall(VecSet(x, 1.0));
  PetscCall(VecSet(y, 2.0));
  PetscCall(VecCUDAGetArrayRead(x, &xa)); /* held to the end: a restore sets the pointer to NULL */
  PetscCall(VecCUDAGetArrayRead(y, &ya));
  cublasCreate(&h);
  {
    struct cudaPointerAttributes ax, ay;
    cudaPointerGetAttributes(&ax, xa);
    cudaPointerGetAttributes(&ay, ya);
    PetscCall(PetscPrintf(PETSC_COMM_SELF, "xa %p type %d, ya %p type %d, sizeof(PetscInt) %d\n", (void *)xa, (int)ax.type, (void *)ya, (int)ay.type, (int)sizeof(PetscInt)));
    int rc = StnVecDot(xa, ya, (long)n, &d);
    PetscCall(PetscPrintf(PETSC_COMM_SELF, "direct StnVecDot rc %d d %g: %s\n", rc, d, rc ? StnCUDALastError() : ""));
  }
  for (int round = 0; round < 2; round++)
    for (int way = 0; way < 7; way++) {
      const char *name[] = {"VecDot(x, y)", "StnVecDot(xa, ya)", "VecDotNorm2(x, y)", "cublasDdot(xa, ya)", "VecDot(y, x)", "StnVecDot(ya, xa)", "StnVecNorm(xa) (one stream)"};
      double      t0 = 0;
      for (int i = 0; i < 25; i++) {
        if (i == 5) t0 = now();
        switch (way) {
        case 0: PetscCall(VecDot(x, y, &d)); break;
        case 1: StnVecDot(xa, ya, n, &d); break;
        case 2: PetscCall(VecDotNorm2(x, y, &d, &nm)); break;
        case 3: cublasDdot(h, n, xa, 1, ya, 1, &d); break;
        case 4: PetscCall(VecDot(y, x, &d)); break;
        case 5: StnVecDot(ya, xa, n, &d); break;
        case 6: StnVecNorm(xa, n, 1, &nm); break;
        }
      }
      cudaDeviceSynchronize();
      PetscCall(PetscPrintf(PETSC_COMM_SELF, "round %d  %-26s %8.1f us per call (d = %g)\n", round, name[way], (now() - t0) / 20, d));
    }
  cublasDestroy(h);
  PetscCall(VecCUDARestoreArrayRead(x, &xa));
  PetscCall(VecCUDARestoreArrayRead(y, &ya));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  PetscCall(PetscFinalize());
  return 0;
}
