/*
** source.c: loading and vetting source text. The file is read whole (the
** lexer wants one buffer, re2c:yyfill:enable = 0) and capped at
** SOURCE_MAX_BYTES so a wrong argument cannot eat the machine.
*/
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "source.h"

bool source_read(Source *src, const char *path, Arena *arena, Diag *d) {
  src->text = "";
  src->len = 0;
  struct stat st;
  if (stat(path, &st) != 0) {
    diag_file_error(d, "cannot open the file: %s", strerror(errno));
    return false;
  }
  if (S_ISDIR(st.st_mode)) {
    diag_file_error(d, "this is a directory; give the path of a .stn file");
    return false;
  }
  FILE *f = fopen(path, "rb");
  if (!f) {
    diag_file_error(d, "cannot open the file: %s", strerror(errno));
    return false;
  }
  /* Read in pieces: st_size is not trustworthy for pipes and /dev files. */
  size_t cap = 1 << 16, len = 0;
  char *buf = arena_alloc(arena, cap + 1);
  for (;;) {
    size_t got = fread(buf + len, 1, cap - len, f);
    len += got;
    if (len > SOURCE_MAX_BYTES) {
      fclose(f);
      diag_file_error(d, "file is larger than %d MiB; a .stn program is a short text file",
                      SOURCE_MAX_BYTES / (1024 * 1024));
      return false;
    }
    if (got == 0) break;
    if (len == cap) {
      char *bigger = arena_alloc(arena, 2 * cap + 1);
      memcpy(bigger, buf, len);
      buf = bigger;
      cap *= 2;
    }
  }
  bool failed = ferror(f);
  fclose(f);
  if (failed) {
    diag_file_error(d, "cannot read the file: %s", strerror(errno));
    return false;
  }
  buf[len] = '\0';
  src->text = buf;
  src->len = (int)len;
  return true;
}

bool source_check_text(const Source *src, Diag *d) {
  const unsigned char *p = (const unsigned char *)src->text, *end = p + src->len;
  while (p < end) {
    int n = *p == 0 ? 0 : diag_utf8_len(p, end);
    if (n == 0) {
      Loc at = {(int)(p - (const unsigned char *)src->text), 1};
      diag_error(d, at, "byte 0x%02x is not text: a .stn file must be UTF-8 text", *p);
      diag_hint(d, "is this the right file? stencilc reads .stn source, not binaries or other encodings");
      return false;
    }
    p += n;
  }
  return true;
}
