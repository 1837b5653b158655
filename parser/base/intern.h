/*
** intern.h: the name table. Every identifier is stored once; two names are
** equal exactly when their pointers are. Strings live in the arena.
*/
#ifndef STN_INTERN_H
#define STN_INTERN_H

#include <stddef.h>

#include "arena.h"

typedef struct Intern {
  Arena       *arena;
  const char **slots;  /* open addressing, NULL = empty */
  size_t       cap, count;
} Intern;

void        intern_init(Intern *t, Arena *arena);
const char *intern(Intern *t, const char *s, size_t len);
void        intern_free(Intern *t);

#endif
