/* tests/gpu/device_memory.c: the runtime's device memory (runtime/stncuda.cu): large blocks
   carved from chunks, small ones from the pool. Built and run by tests/gpu/vec-tests.sh.

     device_memory          the checks; one line each, exit 1 on a failure
     device_memory -small   the random requests only, with blocks a thousand times smaller, all
                            from the pool (for compute-sanitizer)

   Checks: blocks freed next to each other join, and a request their joint room holds takes it
   (the first chunk's start); a free inside a block is refused and changes nothing; after 600
   random requests and frees (sizes from 1 KB to 300 MB) no two live blocks overlap, every one
   holds what was written to it and the chunked ones are aligned to 512 bytes; a request after
   everything is freed is served from a chunk already made (the device's free memory barely
   moves). */
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
  const size_t MB    = small ? 1024 : (size_t)1 << 20;
  unsigned     seed = 12345;
  void        *a, *b, *c, *d;

  need(StnCUDAPoolInit(), "setting up the pool");

  /* Joining: three blocks in one chunk, the first two freed, then a block their room holds. */
  if (!small) {
    need(StnCUDAMalloc(&a, 300 * MB), "300 MB");
    need(StnCUDAMalloc(&b, 300 * MB), "300 MB");
    need(StnCUDAMalloc(&c, 300 * MB), "300 MB");
    expect((char *)b == (char *)a + 300 * MB && (char *)c == (char *)b + 300 * MB, "three large blocks one after the other in a chunk");
    expect(StnCUDAFree((char *)a + 512) != 0, "a free inside a block is refused");
    need(StnCUDAFree(a), "free");
    need(StnCUDAFree(b), "free");
    need(StnCUDAMalloc(&d, 600 * MB), "600 MB");
    expect(d == a, "two freed neighbours joined serve a block of their joint size where the first was");
    need(StnCUDAFree(d), "free");
    need(StnCUDAFree(c), "free");
  }

  /* Random requests and frees. */
  Block live[MAX_LIVE];
  int   nlive = 0, overlaps = 0, wrong = 0, misaligned = 0;
  for (int op = 0; op < 600; op++) {
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
    const size_t bytes = (size_t)(exp(e * log(300.0 * 1024.0)) * (double)MB / 1024.0) + 1;
    Block        nb    = {NULL, bytes, (uint8_t)(op % 251 + 1)};
    need(StnCUDAMalloc((void **)&nb.p, bytes), "a random block");
    if (bytes >= ((size_t)1 << 20) && (uintptr_t)nb.p % 512) misaligned++;
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
  expect(overlaps == 0, "600 random requests and frees: no two live blocks overlap");
  expect(wrong == 0, "every block holds what was written to it");
  expect(misaligned == 0, "the chunked blocks start on 512 bytes");
  for (int i = 0; i < nlive; i++) need(StnCUDAFree(live[i].p), "free");

  /* Everything freed: a large request is served from a chunk already made. */
  if (!small) {
    const size_t before = free_bytes();
    need(StnCUDAMalloc(&a, 500 * MB), "500 MB");
    const size_t after = free_bytes();
    expect(before - after < 64 * MB, "after every free, a 500 MB block comes from a chunk already made");
    need(StnCUDAFree(a), "free");
  }

  printf("device_memory: %d failed\n", failures);
  return failures ? 1 : 0;
}
