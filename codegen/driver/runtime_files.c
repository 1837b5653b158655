/*
** runtime_files.c: looking up an embedded runtime source by name. The
** table itself is generated (build/runtime_text.c).
*/
#include <string.h>

#include "runtime_files.h"

const RuntimeFile *runtime_file(const char *name) {
  for (const RuntimeFile *f = runtime_files; f->name; f++)
    if (strcmp(f->name, name) == 0) return f;
  return NULL;
}
