/*
** strutil.c: file names and growing strings (strutil.h).
*/
#define _XOPEN_SOURCE 700 /* realpath */
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

/* Closes f after write returned ok: false, with errno set, if anything failed to reach the disk
   (a device that cannot sync is not a failure). */
static bool close_file(FILE *f, bool ok) {
  int err = 0;
  if (!ok || ferror(f)) err = errno ? errno : EIO;
  else if (fflush(f) != 0) err = errno;
  else if (fsync(fileno(f)) != 0 && errno != EINVAL && errno != ENOTSUP) err = errno;
  if (fclose(f) != 0 && !err) err = errno;
  errno = err;
  return err == 0;
}

bool file_write_whole(const char *path, bool (*write)(FILE *f, const void *ctx), const void *ctx) {
  struct stat st;
  char *target = NULL;
  if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {  /* a device, a FIFO (or a directory: fopen says so) */
    FILE *f = fopen(path, "wb");
    if (!f) return false;
    errno = 0;
    return close_file(f, write(f, ctx));
  }
  /* the file a link names is replaced, not the link; a dangling link is replaced */
  if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode)) target = realpath(path, NULL);
  const char *to = target ? target : path;
  const char *slash = strrchr(to, '/');
  char *tmp = slash ? xprintf("%.*s/.%s.XXXXXX", (int)(slash - to), to, slash + 1) : xprintf(".%s.XXXXXX", to);
  bool ok = false;
  int fd = mkstemp(tmp);
  if (fd >= 0) {
    mode_t mask = umask(0);
    umask(mask);
    /* mkstemp's 0600: the mode a new file gets, or the replaced file's */
    mode_t mode = stat(to, &st) == 0 ? st.st_mode & 07777 : 0666 & ~mask;
    FILE *f = fchmod(fd, mode) == 0 ? fdopen(fd, "wb") : NULL;
    if (!f) close(fd);
    else {
      errno = 0;
      ok = close_file(f, write(f, ctx));
    }
    int err = errno;
    if (ok && rename(tmp, to) != 0) ok = false, err = errno;
    if (!ok) unlink(tmp);
    errno = err;
  }
  free(tmp);
  free(target);
  return ok;
}
