/*
** strutil.c: file names and growing strings (strutil.h).
*/
#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strutil.h"
#include "util.h"

static char *vxprintf(const char *fmt, va_list ap) {
  va_list again;
  va_copy(again, ap);
  int n = vsnprintf(NULL, 0, fmt, ap);
  if (n < 0) ice("bad format '%s'", fmt);
  char *s = xmalloc((size_t)n + 1);
  vsnprintf(s, (size_t)n + 1, fmt, again);
  va_end(again);
  return s;
}

char *xprintf(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *s = vxprintf(fmt, ap);
  va_end(ap);
  return s;
}

char *path_join(const char *dir, const char *name) { return xprintf("%s/%s", dir, name); }

char *path_add_ext(const char *base, const char *ext) { return xprintf("%s%s", base, ext); }

const char *path_base(const char *path) {
  const char *slash = strrchr(path, '/');
  return slash ? slash + 1 : path;
}

bool str_ends_with(const char *s, const char *suffix) {
  size_t n = strlen(s), k = strlen(suffix);
  return n >= k && strcmp(s + n - k, suffix) == 0;
}

void str_addn(Str *b, const char *t, size_t n) {
  if (b->len + n + 1 > b->cap) {
    b->cap = (b->len + n + 1) * 2;
    b->s = xrealloc(b->s, b->cap);
  }
  memcpy(b->s + b->len, t, n);
  b->len += n;
  b->s[b->len] = '\0';
}

void str_add(Str *b, const char *t) { str_addn(b, t, strlen(t)); }

void str_addf(Str *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *t = vxprintf(fmt, ap);
  va_end(ap);
  str_add(b, t);
  free(t);
}

const char *str_text(const Str *b) { return b->s ? b->s : ""; }

int dir_has_entries(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return -1;
  struct dirent *e;
  int found = 0;
  while (!found && (e = readdir(d)) != NULL) found = strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
  closedir(d);
  return found;
}
