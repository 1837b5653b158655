/*
** intern.c: open-addressing hash set (FNV-1a, linear probing, grown at
** half full). The slot array is malloc'd; the strings are in the arena.
*/
#include <stdlib.h>
#include <string.h>

#include "intern.h"
#include "util.h"

static size_t hash(const char *s, size_t len) {
  size_t h = 1469598103934665603u;
  for (size_t i = 0; i < len; i++) h = (h ^ (unsigned char)s[i]) * 1099511628211u;
  return h;
}

void intern_init(Intern *t, Arena *arena) {
  t->arena = arena;
  t->cap = 256;
  t->count = 0;
  t->slots = xcalloc(t->cap, sizeof *t->slots);
}

static void grow(Intern *t) {
  size_t cap = t->cap * 2;
  const char **slots = xcalloc(cap, sizeof *slots);
  for (size_t i = 0; i < t->cap; i++) {
    const char *s = t->slots[i];
    if (!s) continue;
    size_t j = hash(s, strlen(s)) & (cap - 1);
    while (slots[j]) j = (j + 1) & (cap - 1);
    slots[j] = s;
  }
  free(t->slots);
  t->slots = slots;
  t->cap = cap;
}

const char *intern(Intern *t, const char *s, size_t len) {
  if (2 * (t->count + 1) > t->cap) grow(t);
  size_t i = hash(s, len) & (t->cap - 1);
  for (; t->slots[i]; i = (i + 1) & (t->cap - 1)) {
    const char *x = t->slots[i];
    if (strncmp(x, s, len) == 0 && x[len] == '\0') return x;
  }
  t->slots[i] = arena_strndup(t->arena, s, len);
  t->count++;
  return t->slots[i];
}

void intern_free(Intern *t) {
  free(t->slots);
  t->slots = NULL;
  t->cap = t->count = 0;
}
