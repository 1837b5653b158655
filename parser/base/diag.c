/*
** diag.c: prints diagnostics. The source line is quoted with a gutter
** holding its number; a caret (and tildes over the rest of the token) marks
** the spot. Tabs in the quoted line are repeated in the caret line so the
** caret lines up. A very long line is quoted as a window around the spot.
** Repeated warnings of one kind are capped (diag.h): a program with 9900
** unused names gets 20 messages and one line with the count of the rest.
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
  d->last = -1;
}

/* Length of the UTF-8 sequence at p (well-formed, shortest form, no surrogates), or 0. */
int diag_utf8_len(const unsigned char *p, const unsigned char *end) {
  unsigned c = p[0];
  int n;
  unsigned min;
  if (c < 0x80) return 1;
  if ((c & 0xE0) == 0xC0) { n = 2; min = 0x80; c &= 0x1F; }
  else if ((c & 0xF0) == 0xE0) { n = 3; min = 0x800; c &= 0x0F; }
  else if ((c & 0xF8) == 0xF0) { n = 4; min = 0x10000; c &= 0x07; }
  else return 0;
  if (end - p < n) return 0;
  for (int i = 1; i < n; i++) {
    if ((p[i] & 0xC0) != 0x80) return 0;
    c = (c << 6) | (p[i] & 0x3F);
  }
  if (c < min || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) return 0;
  return n;
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

int diag_line(const Source *src, int off) {
  int line, col;
  diag_line_col(src, off, &line, &col);
  return line;
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
  /* Control characters print as blanks and bytes that are not UTF-8 as '?',
     so a quoted line never sends raw garbage to the terminal. */
  for (int i = from; i < to;) {
    unsigned char c = (unsigned char)src->text[i];
    int n = c < 0x80 ? 1 : diag_utf8_len((const unsigned char *)src->text + i, (const unsigned char *)src->text + to);
    if (n == 0) {
      fputc('?', d->out);
      i++;
    } else if (n == 1) {
      fputc(c < 0x20 && c != '\t' ? ' ' : c, d->out);
      i++;
    } else {
      fwrite(src->text + i, 1, (size_t)n, d->out);
      i += n;
    }
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

/* Sums up the warnings of the last kind held back since its last summary: it
   follows the last one shown, so "such" names them. */
static void sum_up(Diag *d) {
  if (d->last >= 0 && d->kinds[d->last].held > 0) {
    int n = d->kinds[d->last].held;
    fprintf(d->out, "%s: ... and %d more such warning%s\n", d->src->name, n, n == 1 ? "" : "s");
    d->kinds[d->last].held = 0;
  }
  d->last = -1;
  d->muted = false;
}

void diag_flush(Diag *d) { sum_up(d); }

/* The kind of a warning with this format string, -1 when the table is full
   (such a warning is always shown). */
static int kind_of(Diag *d, const char *fmt) {
  for (int k = 0; k < d->nkinds; k++)
    if (d->kinds[k].fmt == fmt) return k;
  if (d->nkinds == DIAG_WARNING_KINDS) return -1;
  d->kinds[d->nkinds] = (DiagKind){fmt, 0, 0};
  return d->nkinds++;
}

/* Counts an error; false when it must be dropped because too many came before. */
static bool count_error(Diag *d) {
  if (d->stopped) return false;
  sum_up(d);
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
  int k = kind_of(d, fmt);
  if (k != d->last) sum_up(d);
  d->last = k;
  if (k >= 0 && d->kinds[k].shown == DIAG_MAX_SAME_WARNINGS) {
    d->kinds[k].held++;
    d->muted = true;
    return;
  }
  if (k >= 0) d->kinds[k].shown++;
  d->muted = false;
  va_list ap;
  va_start(ap, fmt);
  report(d, "warning", at, fmt, ap);
  va_end(ap);
}

void diag_note(Diag *d, Loc at, const char *fmt, ...) {
  if (d->stopped || d->muted) return;
  va_list ap;
  va_start(ap, fmt);
  report(d, "note", at, fmt, ap);
  va_end(ap);
}

void diag_hint(Diag *d, const char *fmt, ...) {
  if (d->stopped || d->muted) return;
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
