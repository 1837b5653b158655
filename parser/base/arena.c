/*
** arena.c: chunks of at least 64 KiB, each allocation rounded up to 16
** bytes. An allocation larger than a chunk gets a chunk of its own.
*/
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "util.h"

struct ArenaChunk {
  ArenaChunk *next;
  size_t      used, size;
  _Alignas(16) unsigned char data[];
};

enum { CHUNK_SIZE = 64 * 1024 };

void arena_init(Arena *a) { a->head = NULL; }

void *arena_alloc(Arena *a, size_t n) {
  n = (n + 15) & ~(size_t)15;
  ArenaChunk *c = a->head;
  if (!c || c->size - c->used < n) {
    size_t size = n > CHUNK_SIZE ? n : CHUNK_SIZE;
    c = malloc(sizeof *c + size);
    if (!c) ice("out of memory (arena chunk of %zu bytes)", size);
    c->size = size;
    c->used = 0;
    c->next = a->head;
    a->head = c;
  }
  void *p = c->data + c->used;
  c->used += n;
  memset(p, 0, n);
  return p;
}

char *arena_strndup(Arena *a, const char *s, size_t n) {
  char *p = arena_alloc(a, n + 1);
  memcpy(p, s, n);
  p[n] = '\0';
  return p;
}

void arena_free(Arena *a) {
  ArenaChunk *c = a->head;
  while (c) {
    ArenaChunk *next = c->next;
    free(c);
    c = next;
  }
  a->head = NULL;
}
