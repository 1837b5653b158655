/* stncuda.cu: the CUDA base (stncuda.h): device memory, the device, the last error in words, and
   timing marks. No PETSc header: nvcc compiles it anywhere. */
#include "stncuda.h"

#include <cuda_runtime.h>

#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <iterator>
#include <map>
#include <new>

namespace {

char last_message[512] = "no error";

int check(cudaError_t err, const char *what)
{
  if (err == cudaSuccess) return 0;
  return StnCUDAFail((int)err, "%s: %s (%s)", what, cudaGetErrorString(err), cudaGetErrorName(err));
}

cudaEvent_t marks[STN_CUDA_MARKS];

} // namespace

extern "C" int StnCUDAFail(int err, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(last_message, sizeof last_message, fmt, ap);
  va_end(ap);
  return err;
}

extern "C" int StnCUDARecordError(int err, const char *what)
{
  return check((cudaError_t)err, what);
}

extern "C" const char *StnCUDALastError(void)
{
  return last_message;
}

/* Device memory. The driver takes the device-memory calls of a node's ranks one at a time, and
   the ranks of a first solve set up their hierarchies in step: a cudaMalloc, or a growth of the
   pool, took about 0.3 ms on each of 4 ranks against 0.08 ms alone, whatever its size, and a
   first solve made 20 to 35 such calls on each (bench/probes/cuda_api_trace.c). So the runtime's
   blocks come from memory the driver has already given:
     - a block under STN_CUDA_CHUNKED_BYTES from the device's stream-ordered pool, on the default
       stream (the kernels' and PETSc's): a block freed to the pool serves the next request; the
       pool keeps what is freed for this process (its release threshold the maximum, as PETSc
       sets it);
     - a larger block from a chunk that one cudaMalloc gave (chunk_bytes(), or the block alone
       if larger), carved first fit on the host: a freed block goes back to its chunk, joined
       with its free neighbours, and the next request may take it at once. That is safe because
       every device access of the runtime and PETSc is on the default stream: the next owner's
       first write runs after the last owner's last read. (The pool itself maps new memory
       slowly: growing it by 2 GB took 16 ms alone and about 200 ms on each of 4 ranks at once,
       a cudaMalloc of 1 GB 0.5 ms.) Chunks stay once made.
   Where the device has no room for a request, the wholly free chunks and the pool's free blocks
   go back to it and the request is made once more (a large block then alone).
   A device without pools (cudaDevAttrMemoryPoolsSupported 0), and a program whose MPI reads
   device memory (StnCUDAPoolDisable: it may not map pool memory), get every block from its own
   cudaMalloc; so does every large block after StnCUDAChunksDisable (-stn_memory_chunks 0), and
   each then has the bounds compute-sanitizer checks. */
#define STN_CUDA_CHUNKED_BYTES ((size_t)1 << 20)
#define STN_CUDA_ALIGN         ((size_t)512)

namespace {

size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }

struct Direct {
  void   *p;
  Direct *next;
};
Direct *direct;     /* the blocks cudaMalloc gave one by one */
int     pool_state; /* 0 not set up, 1 in use, -1 the device has none */
bool    chunked = true;

/* One cudaMalloc's memory, in blocks and free ranges that tile it: offset -> bytes. */
struct Chunk {
  char                    *base;
  size_t                   size;
  std::map<size_t, size_t> used, free; /* no two free ranges adjacent */
  Chunk                   *next;
};
Chunk *chunks; /* oldest first: a request takes the first room */

/* A chunk's size: 1 GB, or a 64th of the device's memory where that is less (at least 64 MB),
   so that a last chunk's unused part stays small beside what the device holds. */
size_t chunk_bytes()
{
  static size_t bytes;
  size_t        free_now, total;
  if (bytes) return bytes;
  bytes = (size_t)1 << 30;
  if (cudaMemGetInfo(&free_now, &total) != cudaSuccess) (void)cudaGetLastError();
  else if (total / 64 < bytes) bytes = total / 64 > ((size_t)64 << 20) ? total / 64 : (size_t)64 << 20;
  return bytes;
}

int pool_get(cudaMemPool_t *pool)
{
  int dev;
  if (int rc = check(cudaGetDevice(&dev), "cudaGetDevice")) return rc;
  return check(cudaDeviceGetMemPool(pool, dev), "cudaDeviceGetMemPool");
}

int pool_setup()
{
  cudaMemPool_t pool;
  uint64_t      threshold = UINT64_MAX;
  int           dev, pools = 0;
  if (pool_state) return 0;
  if (int rc = check(cudaGetDevice(&dev), "cudaGetDevice")) return rc;
  if (int rc = check(cudaDeviceGetAttribute(&pools, cudaDevAttrMemoryPoolsSupported, dev), "cudaDeviceGetAttribute")) return rc;
  if (!pools) return pool_state = -1, 0;
  if (int rc = pool_get(&pool)) return rc;
  if (int rc = check(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold), "cudaMemPoolSetAttribute")) return rc;
  pool_state = 1;
  return 0;
}

/* Gives the device back what is allocated and unused: the wholly free chunks and the pool's
   free blocks (after the device is done with them). */
void give_back_unused()
{
  cudaMemPool_t pool;
  if (cudaDeviceSynchronize() != cudaSuccess) {
    (void)cudaGetLastError();
    return;
  }
  for (Chunk **q = &chunks; *q;) {
    Chunk *c = *q;
    if (!c->used.empty()) {
      q = &c->next;
      continue;
    }
    *q = c->next;
    (void)cudaFree(c->base);
    delete c;
  }
  if (pool_state == 1 && pool_get(&pool) == 0) (void)cudaMemPoolTrimTo(pool, 0);
  (void)cudaGetLastError(); /* a failure here is not the next launch's to report */
}

int direct_malloc(void **p, size_t bytes)
{
  Direct *d = new (std::nothrow) Direct;
  if (!d) return StnCUDAFail((int)cudaErrorMemoryAllocation, "StnCUDAMalloc: out of host memory");
  if (cudaMalloc(p, bytes) != cudaSuccess) { /* what is unused back to the device, then once more */
    (void)cudaGetLastError();
    give_back_unused();
    if (int rc = check(cudaMalloc(p, bytes), "StnCUDAMalloc: cudaMalloc")) {
      delete d;
      return rc;
    }
  }
  *d     = {*p, direct};
  direct = d;
  return 0;
}

/* A block of bytes (a multiple of STN_CUDA_ALIGN) from c's first free range that holds it. */
bool carve(Chunk *c, size_t bytes, void **p)
{
  for (auto r = c->free.begin(); r != c->free.end(); ++r) {
    if (r->second < bytes) continue;
    const size_t at = r->first, room = r->second;
    c->used[at] = bytes; /* the one step that allocates (it may throw), so first */
    auto rest   = c->free.extract(r);
    if (room > bytes) { /* the range's own node keeps what is left of it */
      rest.key() += bytes;
      rest.mapped() -= bytes;
      c->free.insert(std::move(rest));
    }
    *p = c->base + at;
    return true;
  }
  return false;
}

/* A new chunk of size bytes at the end of the list, or NULL where the device has no room. */
Chunk *add_chunk(size_t size)
{
  void  *base;
  Chunk *c = new Chunk;
  try {
    c->free[0] = size;
  } catch (...) {
    delete c;
    throw;
  }
  if (cudaMalloc(&base, size) != cudaSuccess) {
    (void)cudaGetLastError();
    delete c;
    return NULL;
  }
  c->base = (char *)base;
  c->size = size;
  c->next = NULL;
  Chunk **q = &chunks;
  while (*q) q = &(*q)->next;
  *q = c;
  return c;
}

int chunked_malloc(void **p, size_t bytes)
{
  const size_t need = round_up(bytes, STN_CUDA_ALIGN), alone = round_up(bytes, (size_t)2 << 20);
  try {
    for (Chunk *c = chunks; c; c = c->next)
      if (carve(c, need, p)) return 0;
    const size_t size = alone > chunk_bytes() ? alone : chunk_bytes();
    Chunk       *c    = add_chunk(size);
    if (!c) {
      give_back_unused();
      c = add_chunk(size);
    }
    if (!c && size > alone) c = add_chunk(alone); /* the block alone, where a whole chunk does not fit */
    if (!c) return StnCUDAFail((int)cudaErrorMemoryAllocation, "StnCUDAMalloc: the device has no room for %zu more bytes", bytes);
    (void)carve(c, need, p);
    return 0;
  } catch (const std::bad_alloc &) {
    return StnCUDAFail((int)cudaErrorMemoryAllocation, "StnCUDAMalloc: out of host memory");
  }
}

/* p back to its chunk, joined with the free ranges on either side: 1 if p was a chunk's, 0 if
   not, -1 if p lies in a chunk but no block starts there (freed already, or inside a block).
   The block's own map node becomes the free range's: nothing is allocated. */
int chunked_free(void *p)
{
  for (Chunk *c = chunks; c; c = c->next) {
    if ((char *)p < c->base || (char *)p >= c->base + c->size) continue;
    auto b = c->used.find((size_t)((char *)p - c->base));
    if (b == c->used.end()) return -1;
    auto node  = c->used.extract(b);
    auto after = c->free.lower_bound(node.key());
    if (after != c->free.end() && after->first == node.key() + node.mapped()) {
      node.mapped() += after->second;
      after = c->free.erase(after);
    }
    if (after != c->free.begin()) {
      auto before = std::prev(after);
      if (before->first + before->second == node.key()) {
        before->second += node.mapped();
        return 1;
      }
    }
    c->free.insert(after, std::move(node));
    return 1;
  }
  return 0;
}

} // namespace

extern "C" void StnCUDAPoolDisable(void)
{
  if (!pool_state) pool_state = -1;
}

extern "C" void StnCUDAChunksDisable(void)
{
  chunked = false;
}

extern "C" int StnCUDAPoolInit(void)
{
  void *p;
  if (int rc = pool_setup()) return rc;
  if (pool_state < 0) return 0;
  if (int rc = check(cudaMallocAsync(&p, (size_t)2 << 20, 0), "StnCUDAPoolInit: cudaMallocAsync")) return rc;
  if (int rc = check(cudaFreeAsync(p, 0), "StnCUDAPoolInit: cudaFreeAsync")) return rc;
  return check(cudaStreamSynchronize(0), "StnCUDAPoolInit: cudaStreamSynchronize");
}

extern "C" int StnCUDAMalloc(void **p, size_t bytes)
{
  *p = NULL;
  if (!bytes) return 0;
  if (int rc = pool_setup()) return rc;
  if (pool_state < 0) return direct_malloc(p, bytes);
  if (bytes >= STN_CUDA_CHUNKED_BYTES) return chunked ? chunked_malloc(p, bytes) : direct_malloc(p, bytes);
  if (cudaMallocAsync(p, bytes, 0) == cudaSuccess) return 0;
  (void)cudaGetLastError(); /* what is unused back to the device (the chunks' too), then once more */
  give_back_unused();
  return check(cudaMallocAsync(p, bytes, 0), "StnCUDAMalloc: cudaMallocAsync");
}

extern "C" size_t StnCUDAChunkBytes(void)
{
  return chunk_bytes();
}

extern "C" int StnCUDAFree(void *p)
{
  if (!p) return 0;
  if (int in = chunked_free(p)) return in > 0 ? 0 : StnCUDAFail((int)cudaErrorInvalidValue, "StnCUDAFree: %p is no block's start (freed already, or inside a block)", p);
  for (Direct **q = &direct; *q; q = &(*q)->next)
    if ((*q)->p == p) {
      Direct *d = *q;
      *q        = d->next;
      delete d;
      return check(cudaFree(p), "StnCUDAFree: cudaFree");
    }
  return check(cudaFreeAsync(p, 0), "StnCUDAFree: cudaFreeAsync");
}

extern "C" int StnCUDAMemcpyHtoD(void *dst, const void *src, size_t bytes)
{
  return check(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice), "StnCUDAMemcpyHtoD: cudaMemcpy");
}

extern "C" int StnCUDAMemcpyDtoH(void *dst, const void *src, size_t bytes)
{
  return check(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost), "StnCUDAMemcpyDtoH: cudaMemcpy");
}

extern "C" int StnCUDAMemcpyDtoD(void *dst, const void *src, size_t bytes)
{
  return check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, 0), "StnCUDAMemcpyDtoD: cudaMemcpyAsync");
}

extern "C" int StnCUDAMemcpyHtoDAsync(void *dst, const void *src, size_t bytes)
{
  return check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, 0), "StnCUDAMemcpyHtoDAsync: cudaMemcpyAsync");
}

extern "C" int StnCUDASynchronize(void)
{
  return check(cudaDeviceSynchronize(), "StnCUDASynchronize: cudaDeviceSynchronize");
}

extern "C" long StnCUDAL2Bytes(void)
{
  int dev, bytes = 0;
  if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetAttribute(&bytes, cudaDevAttrL2CacheSize, dev) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return bytes;
}

extern "C" int StnCUDAEvictL2(void)
{
  static void  *buf;
  static size_t size;
  int           err;
  if (!buf) {
    size = 2 * (size_t)(StnCUDAL2Bytes() > 0 ? StnCUDAL2Bytes() : 64L << 20);
    if ((err = check(cudaMalloc(&buf, size), "StnCUDAEvictL2: cudaMalloc"))) return err;
  }
  return check(cudaMemsetAsync(buf, 0, size, 0), "StnCUDAEvictL2: cudaMemsetAsync");
}

extern "C" int StnCUDADeviceCount(void)
{
  int n = 0;

  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return n;
}

extern "C" int StnCUDADeviceBusId(char *buf, int size)
{
  int dev = 0;

  if (size > 0) buf[0] = '\0';
  int rc = check(cudaGetDevice(&dev), "cudaGetDevice");
  return rc ? rc : check(cudaDeviceGetPCIBusId(buf, size, dev), "cudaDeviceGetPCIBusId");
}

extern "C" int StnCUDADevicePresent(void)
{
  int n = 0;

  if (cudaGetDeviceCount(&n) != cudaSuccess || n < 1) {
    (void)cudaGetLastError(); /* not sticky: clear it for the caller's next check */
    return 0;
  }
  if (cudaFree(nullptr) != cudaSuccess) { /* starts the context: fails if the device cannot be used */
    (void)cudaGetLastError();
    return 0;
  }
  return 1;
}

extern "C" int StnCUDAMark(int i)
{
  if (i < 0 || i >= STN_CUDA_MARKS) return StnCUDAFail((int)cudaErrorInvalidValue, "StnCUDAMark: no such mark %d", i);
  if (!marks[i]) {
    int rc = check(cudaEventCreate(&marks[i]), "StnCUDAMark: cudaEventCreate");
    if (rc) return rc;
  }
  return check(cudaEventRecord(marks[i], 0), "StnCUDAMark: cudaEventRecord");
}

extern "C" int StnCUDAMarksElapsed(int i, int j, float *ms)
{
  *ms = 0;
  if (i < 0 || i >= STN_CUDA_MARKS || j < 0 || j >= STN_CUDA_MARKS || !marks[i] || !marks[j])
    return StnCUDAFail((int)cudaErrorInvalidValue, "StnCUDAMarksElapsed: no such mark");
  return check(cudaEventElapsedTime(ms, marks[i], marks[j]), "StnCUDAMarksElapsed: cudaEventElapsedTime");
}
