/*
** strutil.h: file names and strings on the heap, and writing a file whole,
** for the driver's files (compile.c, skeleton.c, toolchain.c, explain.c,
** explain_svg.c). Every
** string returned is malloc'd, for the caller to free; running out of
** memory is an ice (util.h), so none returns NULL.
*/
#ifndef STN_STRUTIL_H
#define STN_STRUTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* A new string, formatted as by printf. */
char *xprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* "dir/name". */
char *path_join(const char *dir, const char *name);
/* base followed by ext: path_add_ext("cavity", ".c") is "cavity.c". */
char *path_add_ext(const char *base, const char *ext);
/* The last component of path: what follows its last '/', or path itself. Points into path. */
const char *path_base(const char *path);
/* 1 if the directory holds anything but . and .., 0 if not, -1 (errno set) if it cannot be read. */
int dir_has_entries(const char *dir);
/* Writes path whole or not at all: write(f, ctx) fills a temporary file beside path, which
   replaces path by a rename once it is complete on disk (a full disk, a file size limit or a
   read-only directory leave path as it was and no temporary file behind). A path that is, or
   links to, a device or a FIFO is written through instead (a rename would replace the device
   with a regular file); a link to a regular file keeps its link, the file it names replaced.
   write returns false when it could not write everything. False with errno set on any failure. */
bool file_write_whole(const char *path, bool (*write)(FILE *f, const void *ctx), const void *ctx);
/* Whether s ends with suffix. */
bool str_ends_with(const char *s, const char *suffix);

/* A growing string: start from Str b = {0}; b.s is NULL until something is
   added, then NUL-terminated; free(b.s) when done. */
typedef struct Str {
  char  *s;
  size_t len, cap;
} Str;

void str_addn(Str *b, const char *t, size_t n);
void str_add(Str *b, const char *t);
void str_addf(Str *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* b's text; "" while it is empty. */
const char *str_text(const Str *b);

#endif
