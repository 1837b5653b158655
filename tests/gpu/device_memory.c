/* tests/gpu/device_memory.c: the runtime's device memory (runtime/stncuda.cu): large blocks
   carved from chunks, small ones from the pool. Built and run by tests/gpu/vec-tests.sh.

     device_memory          the checks; one line each, exit 1 on a failure
     device_memory -small   the same with 100 random requests of at most 4 MB (for compute-sanitizer)

   Checks: three blocks of a quarter chunk lie one after the other; two freed neighbours join,
   freed in either order (the range after the freed block joined, or the one before), and a
   block of their joint size takes their place; a free inside a block is refused; after random
   requests and frees (sizes from 1 KB to 300 MB) no two live blocks overlap, every one holds
   what was written to it, and every block starts on 256 bytes; once everything is freed, a block
   of a whole chunk is the first chunk (every free range in it joined again); after
   StnCUDAChunksDisable a large block is a cudaMalloc of its own (the device's free memory
   drops by it while the chunks have room). */
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stncuda.h"

static int failures;

static void expect(int ok, const char *what)
{
  if (ok) printf("gpu: device memory: %s: ok\n", what);
  else {
    printf("FAIL: gpu: device memory: %s\n", what);
    failures++;
  }
}

static void need(int rc, const char *what)
{
  if (rc == 0) return;
  printf("FAIL: gpu: device memory: %s: %s\n", what, StnCUDALastError());
  exit(1);
}

static size_t free_bytes(void)
{
  size_t f = 0, t = 0;
  (void)cudaDeviceSynchronize();
  (void)cudaMemGetInfo(&f, &t);
  return f;
}

typedef struct {
  char   *p;
  size_t  bytes;
  uint8_t mark;
} Block;

enum { MAX_LIVE = 128 };

/* The first, middle and last byte of b hold its mark. */
static int holds_mark(const Block *b)
{
  const size_t at[3] = {0, b->bytes / 2, b->bytes - 1};
  for (int i = 0; i < 3; i++) {
    uint8_t v = 0;
    if (cudaMemcpy(&v, b->p + at[i], 1, cudaMemcpyDeviceToHost) != cudaSuccess || v != b->mark) return 0;
  }
  return 1;
}

int main(int argc, char **argv)
{
  const int    small = argc > 1 && !strcmp(argv[1], "-small");
  const size_t MB    = (size_t)1 << 20;
  unsigned     seed = 12345;
  void        *a, *b, *c, *d;

  need(StnCUDAPoolInit(), "setting up the pool");

  /* Joining: three blocks of a quarter chunk one after the other; the first two freed, in
     either order, then a block of their joint size. */
  const size_t q = StnCUDAChunkBytes() / 4;
  need(StnCUDAMalloc(&a, q), "a quarter chunk");
  need(StnCUDAMalloc(&b, q), "a quarter chunk");
  need(StnCUDAMalloc(&c, q), "a quarter chunk");
  expect((char *)b == (char *)a + q && (char *)c == (char *)b + q, "three blocks of a quarter chunk one after the other");
  expect(StnCUDAFree((char *)a + 512) != 0, "a free inside a block is refused");
  need(StnCUDAFree(a), "free");
  need(StnCUDAFree(b), "free");
  need(StnCUDAMalloc(&d, 2 * q), "half a chunk");
  expect(d == a, "freed in order, two neighbours joined take a block of their joint size");
  need(StnCUDAFree(d), "free");
  need(StnCUDAMalloc(&b, q), "a quarter chunk");
  need(StnCUDAMalloc(&d, q), "a quarter chunk");
  expect(b == a && (char *)d == (char *)a + q, "the joined range serves quarter chunks again, in place");
  need(StnCUDAFree(d), "free");
  need(StnCUDAFree(b), "free");
  need(StnCUDAMalloc(&d, 2 * q), "half a chunk");
  expect(d == a, "freed in reverse order, two neighbours joined take a block of their joint size");
  expect(StnCUDAFree((char *)d + 2 * q - 512) != 0, "a free near a block's end is refused");
  need(StnCUDAFree(d), "free");
  expect(StnCUDAFree(d) != 0, "a second free of a block is refused");
  need(StnCUDAFree(c), "free");
  void *const first = a;

  /* Random requests and frees. */
  Block live[MAX_LIVE];
  int   nlive = 0, overlaps = 0, wrong = 0, misaligned = 0;
  const int ops = small ? 100 : 600;
  for (int op = 0; op < ops; op++) {
    seed = seed * 1664525u + 1013904223u;
    if (nlive == MAX_LIVE || (nlive > 0 && (seed >> 16) % 10 < 4)) { /* free one */
      const int k = (int)((seed >> 8) % (unsigned)nlive);
      if (!holds_mark(&live[k])) wrong++;
      need(StnCUDAFree(live[k].p), "free");
      live[k] = live[--nlive];
      continue;
    }
    seed = seed * 1664525u + 1013904223u;
    const double e     = (double)(seed >> 8) / (double)(1u << 24); /* sizes log-uniform, 1 KB to 300 MB */
    const size_t bytes = (size_t)(1024.0 * exp(e * log(small ? 4096.0 : 300.0 * 1024.0))) + 1;
    Block        nb    = {NULL, bytes, (uint8_t)(op % 251 + 1)};
    need(StnCUDAMalloc((void **)&nb.p, bytes), "a random block");
    if ((uintptr_t)nb.p % 256) misaligned++;
    for (int i = 0; i < nlive; i++)
      if (nb.p < live[i].p + live[i].bytes && live[i].p < nb.p + bytes) overlaps++;
    if (cudaMemset(nb.p, nb.mark, bytes) != cudaSuccess) {
      printf("FAIL: gpu: device memory: cudaMemset of %zu bytes\n", bytes);
      return 1;
    }
    live[nlive++] = nb;
  }
  for (int i = 0; i < nlive; i++)
    if (!holds_mark(&live[i])) wrong++;
  expect(overlaps == 0, "random requests and frees: no two live blocks overlap");
  expect(wrong == 0, "every block holds what was written to it");
  expect(misaligned == 0, "every block starts on 256 bytes");
  for (int i = 0; i < nlive; i++) need(StnCUDAFree(live[i].p), "free");

  /* Everything freed: the first chunk whole again. */
  need(StnCUDAMalloc(&a, 4 * q), "a whole chunk");
  expect(a == first, "after every free, a block of a whole chunk is the first chunk");
  need(StnCUDAFree(a), "free");

  /* Chunks off: a large block of its own. */
  StnCUDAChunksDisable();
  const size_t before = free_bytes();
  need(StnCUDAMalloc(&a, 64 * MB), "64 MB");
  const size_t after = free_bytes();
  expect(before - after >= 64 * MB, "with the chunks off, a 64 MB block is a cudaMalloc of its own");
  need(StnCUDAFree(a), "free");

  printf("device_memory: %d failed\n", failures);
  return failures ? 1 : 0;
}
