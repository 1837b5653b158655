/*
** diag.c: prints diagnostics. The source line is quoted with a gutter
** holding its number; a caret (and tildes over the rest of the token) marks
** the spot. Tabs in the quoted line are repeated in the caret line so the
** caret lines up. A very long line is quoted as a window around the spot.
*/
#include <stdarg.h>
#include <string.h>

#include "arena.h"
#include "diag.h"

enum { WINDOW = 100 };  /* characters of a long line quoted around the spot */

void diag_init(Diag *d, const Source *src, FILE *out) {
  memset(d, 0, sizeof *d);
  d->src = src;
  d->out = out;
}

static bool is_cont(unsigned char c) { return (c & 0xC0) == 0x80; }

/* Characters (code points) in text[a, b). */
static int chars(const char *text, int a, int b) {
  int n = 0;
  for (int i = a; i < b; i++)
    if (!is_cont((unsigned char)text[i])) n++;
  return n;
}

static int line_start(const Source *src, int off) {
  while (off > 0 && src->text[off - 1] != '\n') off--;
  return off;
}

static int line_end(const Source *src, int off) {
  while (off < src->len && src->text[off] != '\n') off++;
  if (off > 0 && off <= src->len && src->text[off - 1] == '\r') off--;
  return off;
}

void diag_index(Source *src, Arena *arena) {
  int n = 1;
  for (int i = 0; i < src->len; i++) n += src->text[i] == '\n';
  src->lines = arena_alloc(arena, sizeof *src->lines * (size_t)n);
  src->ascii = arena_alloc(arena, sizeof *src->ascii * (size_t)n);
  src->nlines = n;
  int l = 0;
  src->lines[0] = 0;
  src->ascii[0] = true;
  for (int i = 0; i < src->len; i++) {
    if (src->text[i] == '\n') {
      src->lines[++l] = i + 1;
      src->ascii[l] = true;
    } else if ((unsigned char)src->text[i] >= 0x80) {
      src->ascii[l] = false;
    }
  }
}

void diag_line_col(const Source *src, int off, int *line, int *col) {
  if (off > src->len) off = src->len;
  if (off < 0) off = 0;
  if (!src->lines) {
    int l = 1;
    for (int i = 0; i < off; i++)
      if (src->text[i] == '\n') l++;
    *line = l;
    *col = chars(src->text, line_start(src, off), off) + 1;
    return;
  }
  int lo = 0, hi = src->nlines - 1;  /* the last line starting at or before off */
  while (lo < hi) {
    int mid = (lo + hi + 1) / 2;
    if (src->lines[mid] <= off) lo = mid;
    else hi = mid - 1;
  }
  *line = lo + 1;
  *col = src->ascii[lo] ? off - src->lines[lo] + 1 : chars(src->text, src->lines[lo], off) + 1;
}

/* Advance a byte index past n characters, not beyond limit. */
static int skip_chars(const char *text, int i, int n, int limit) {
  while (i < limit && n > 0) {
    i++;
    while (i < limit && is_cont((unsigned char)text[i])) i++;
    n--;
  }
  return i;
}

static void quote(Diag *d, Loc at) {
  const Source *src = d->src;
  int off = at.off > src->len ? src->len : at.off;
  int ls = line_start(src, off), le = line_end(src, off);
  if (off > le) off = le;
  int line, col;
  diag_line_col(src, off, &line, &col);

  /* Window of the line to quote: all of it, or WINDOW characters around the spot. */
  int from = ls, to = le;
  bool cut_left = false, cut_right = false;
  if (chars(src->text, ls, le) > 2 * WINDOW) {
    if (col - 1 > WINDOW / 2) {
      from = skip_chars(src->text, ls, col - 1 - WINDOW / 2, le);
      cut_left = true;
    }
    int end = skip_chars(src->text, from, WINDOW, le);
    if (end < le) { to = end; cut_right = true; }
  }
  int end = off + (at.len > 0 ? at.len : 1);
  if (end > to) end = to > off ? to : off + 1;

  char gutter[32];
  int gw = snprintf(gutter, sizeof gutter, "%5d", line);
  fprintf(d->out, "%s | %s", gutter, cut_left ? "..." : "");
  for (int i = from; i < to; i++) {
    unsigned char c = (unsigned char)src->text[i];
    fputc(c < 0x20 && c != '\t' ? ' ' : c, d->out);
  }
  fprintf(d->out, "%s\n%*s | %s", cut_right ? "..." : "", gw, "", cut_left ? "   " : "");
  for (int i = from; i < off; i++) {
    if (is_cont((unsigned char)src->text[i])) continue;
    fputc(src->text[i] == '\t' ? '\t' : ' ', d->out);
  }
  fputc('^', d->out);
  for (int n = chars(src->text, off, end) - 1; n > 0; n--) fputc('~', d->out);
  fputc('\n', d->out);
}

static void report(Diag *d, const char *kind, Loc at, const char *fmt, va_list ap) {
  int line, col;
  diag_line_col(d->src, at.off, &line, &col);
  fprintf(d->out, "%s:%d:%d: %s: ", d->src->name, line, col, kind);
  vfprintf(d->out, fmt, ap);
  fputc('\n', d->out);
  quote(d, at);
}

/* Counts an error; false when it must be dropped because too many came before. */
static bool count_error(Diag *d) {
  if (d->stopped) return false;
  if (d->nerr == DIAG_MAX_ERRORS) {
    fprintf(d->out, "%s: too many errors (%d), stopping here\n", d->src->name, DIAG_MAX_ERRORS);
    d->stopped = true;
    return false;
  }
  d->nerr++;
  return true;
}

void diag_error(Diag *d, Loc at, const char *fmt, ...) {
  if (!count_error(d)) return;
  va_list ap;
  va_start(ap, fmt);
  report(d, "error", at, fmt, ap);
  va_end(ap);
}

void diag_warning(Diag *d, Loc at, const char *fmt, ...) {
  if (d->stopped) return;
  d->nwarn++;
  va_list ap;
  va_start(ap, fmt);
  report(d, "warning", at, fmt, ap);
  va_end(ap);
}

void diag_note(Diag *d, Loc at, const char *fmt, ...) {
  if (d->stopped) return;
  va_list ap;
  va_start(ap, fmt);
  report(d, "note", at, fmt, ap);
  va_end(ap);
}

void diag_hint(Diag *d, const char *fmt, ...) {
  if (d->stopped) return;
  va_list ap;
  va_start(ap, fmt);
  fputs("hint: ", d->out);
  vfprintf(d->out, fmt, ap);
  fputc('\n', d->out);
  va_end(ap);
}

void diag_file_error(Diag *d, const char *fmt, ...) {
  if (!count_error(d)) return;
  va_list ap;
  va_start(ap, fmt);
  fprintf(d->out, "%s: error: ", d->src->name);
  vfprintf(d->out, fmt, ap);
  fputc('\n', d->out);
  va_end(ap);
}
