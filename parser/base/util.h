/*
** util.h: the one way the compiler reports its own bugs (ice), the
** allocation helpers that go with it, and the version string. User errors
** never come here: they go through diag.h.
*/
#ifndef STN_UTIL_H
#define STN_UTIL_H

#include <stddef.h>

#define STENCILC_VERSION "0.1.0"

#define COUNT_OF(a) ((int)(sizeof(a) / sizeof((a)[0])))

_Noreturn void ice(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* malloc, calloc, realloc and strdup that never return NULL: running out of
   memory is an ice ("out of memory (N bytes)"). A request for 0 bytes gets
   a valid pointer to free, as glibc gives. xcalloc's memory is zeroed. */
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);

#endif
