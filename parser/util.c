/*
** util.c: internal compiler errors. An ice() is a bug in stencilc, not in
** the user's program, so it says so and asks for a report.
*/
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

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
