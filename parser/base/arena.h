/*
** arena.h: a bump allocator. Every AST node, interned name and table of
** the front end comes from one arena and is freed with it in one call, so
** no pass frees anything on its own.
*/
#ifndef STN_ARENA_H
#define STN_ARENA_H

#include <stddef.h>

typedef struct ArenaChunk ArenaChunk;

typedef struct Arena {
  ArenaChunk *head;  /* newest chunk first */
} Arena;

void  arena_init(Arena *a);
void *arena_alloc(Arena *a, size_t n);            /* zeroed, aligned for any type */
char *arena_strndup(Arena *a, const char *s, size_t n);
void  arena_free(Arena *a);

#endif
