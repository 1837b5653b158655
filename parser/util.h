/*
** util.h: the one way the compiler reports its own bugs (ice), and the
** version string. User errors never come here: they go through diag.h.
*/
#ifndef STN_UTIL_H
#define STN_UTIL_H

#define STENCILC_VERSION "0.1.0"

#define COUNT_OF(a) ((int)(sizeof(a) / sizeof((a)[0])))

_Noreturn void ice(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
