/* bench/vec_gpu_kernels.cu: the device side of bench/vec_gpu.c that is not under test: the
   inputs' values and the triad, the bandwidth reference. Plain C API (vec_gpu.c is C).

   Input vector `seed` holds VecGpuValue(seed, i) at entry i: a hash of (seed, i) mapped to
   +-[1, 2) with 52 random bits, never 0. The host and the device compute it with the same
   integer operations and one exact addition, so the host knows every input exactly (the CPU
   references of vec_gpu.c). */
#include <cuda_runtime.h>

#include <stdint.h>

__host__ __device__ static inline double value(unsigned seed, long i)
{
  uint64_t z = (uint64_t)seed * 0x2545F4914F6CDD1Dull ^ ((uint64_t)i * 0x9E3779B97F4A7C15ull);
  z          = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z          = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  const double m = 1.0 + (double)(z >> 12) * 0x1.0p-52; /* exact: [1, 2) */
  return (z & 1) ? -m : m;
}

__global__ static void fill_kernel(double *x, long n, unsigned seed)
{
  for (long i = (long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) x[i] = value(seed, i);
}

/* a = b + s c: two entries per thread (16-byte loads and stores, as bench/spmv_gpu.cu), and the
   last entry of an odd n by one more thread. */
__global__ static void triad_kernel(double *__restrict__ a, const double *__restrict__ b, const double *__restrict__ c, double s, long n)
{
  const long t = (long)blockIdx.x * blockDim.x + threadIdx.x, n2 = n / 2;
  if (t < n2) {
    const double2 bb = reinterpret_cast<const double2 *>(b)[t], cc = reinterpret_cast<const double2 *>(c)[t];
    reinterpret_cast<double2 *>(a)[t] = make_double2(bb.x + s * cc.x, bb.y + s * cc.y);
  } else if (t == n2 && (n & 1)) a[n - 1] = b[n - 1] + s * c[n - 1];
}

extern "C" {

double VecGpuValue(unsigned seed, long i)
{
  return value(seed, i);
}

/* Fills x (device, n doubles) with input vector seed, on the default stream. */
int VecGpuFill(double *x, long n, unsigned seed)
{
  if (n <= 0) return 0;
  long blocks = (n + 255) / 256;
  if (blocks > 65536) blocks = 65536;
  fill_kernel<<<(unsigned)blocks, 256>>>(x, n, seed);
  return (int)cudaGetLastError();
}

/* a = b + s c on the default stream, without waiting. a, b, c from cudaMalloc (16-byte aligned). */
int VecGpuTriad(double *a, const double *b, const double *c, double s, long n)
{
  if (n <= 0) return 0;
  const long threads = 256, work = n / 2 + (n & 1);
  triad_kernel<<<(unsigned)((work + threads - 1) / threads), (unsigned)threads>>>(a, b, c, s, n);
  return (int)cudaGetLastError();
}

}
