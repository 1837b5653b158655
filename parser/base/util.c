/*
** util.c: internal compiler errors. An ice() is a bug in stencilc, not in
** the user's program, so it says so and asks for a report. Running out of
** memory is reported the same way, by the x* allocation helpers.
*/
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

void ice(const char *fmt, ...) {
  va_list ap;
  fflush(stdout);
  fputs("stencilc: internal error: ", stderr);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputs("\nThis is a bug in stencilc " STENCILC_VERSION "; please report it with the input file.\n", stderr);
  exit(70);
}

void *xmalloc(size_t n) {
  void *p = malloc(n ? n : 1);
  if (!p) ice("out of memory (%zu bytes)", n);
  return p;
}

void *xcalloc(size_t n, size_t size) {
  void *p = n && size ? calloc(n, size) : calloc(1, 1);  /* calloc checks n * size for overflow */
  if (!p) ice("out of memory (%zu x %zu bytes)", n, size);
  return p;
}

void *xrealloc(void *p, size_t n) {
  p = realloc(p, n ? n : 1);
  if (!p) ice("out of memory (%zu bytes)", n);
  return p;
}

char *xstrdup(const char *s) {
  size_t n = strlen(s) + 1;
  return memcpy(xmalloc(n), s, n);
}
