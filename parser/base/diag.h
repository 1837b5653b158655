/*
** diag.h: the one diagnostics module. Every user-facing message of the
** compiler goes through here and has one shape:
**
**   file:line:col: error: message
**    12 |   residual u { interior: u[2,0]; }
**       |                          ^
**   hint: what to do about it
**
** Locations are byte ranges into the source; line and column are worked
** out only when a message is printed. Columns count characters (UTF-8 code
** points), starting at 1. Errors are counted, so one run reports several;
** after DIAG_MAX_ERRORS the rest are dropped with one line saying so.
** Warnings of one kind (one format string) are shown DIAG_MAX_SAME_WARNINGS
** times; the rest are counted and summed up in one line ("... and 9880 more
** such warnings") when a message of another kind comes, or at diag_flush.
*/
#ifndef STN_DIAG_H
#define STN_DIAG_H

#include <stdbool.h>
#include <stdio.h>

enum { DIAG_MAX_ERRORS = 50, DIAG_MAX_SAME_WARNINGS = 20, DIAG_WARNING_KINDS = 16 };

typedef struct Loc {
  int off;  /* byte offset of the first byte */
  int len;  /* bytes covered, at least 1 when printed */
} Loc;

typedef struct Source {
  const char *name;   /* as the user gave it */
  const char *text;   /* NUL-terminated copy of the file */
  int         len;    /* bytes, without the terminating NUL */
  int        *lines;  /* byte offset where each line starts (diag_index), or NULL */
  bool       *ascii;  /* whether each line is plain ASCII (columns = bytes) */
  int         nlines;
} Source;

/* The warnings of one kind, told apart by their format string. */
typedef struct DiagKind {
  const char *fmt;
  int         shown, held;  /* held: not shown and not yet summed up */
} DiagKind;

typedef struct Diag {
  const Source *src;
  FILE         *out;
  int           nerr, nwarn;
  bool          stopped;  /* too many errors: further ones are dropped */
  bool          muted;    /* the last warning was held back: so are its notes and hints */
  DiagKind      kinds[DIAG_WARNING_KINDS];
  int           nkinds;
  int           last;     /* the kind of the last warning shown or held, -1 after another message */
} Diag;

void diag_init(Diag *d, const Source *src, FILE *out);

void diag_error(Diag *d, Loc at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void diag_warning(Diag *d, Loc at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* A note points at a second place (a previous definition, say). */
void diag_note(Diag *d, Loc at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* A hint says what to do; it belongs to the message printed just before. */
void diag_hint(Diag *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* An error about the file as a whole (missing, empty, not text). */
void diag_file_error(Diag *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Sums up the warnings held back so far; call it when a phase's messages are complete. */
void diag_flush(Diag *d);

/* Indexes the lines of src (memory from arena) so that line and column
   lookups are fast; without it they scan the text. */
struct Arena;
void diag_index(Source *src, struct Arena *arena);

/* Length of the well-formed UTF-8 sequence at p (1 for ASCII), or 0 when it is not UTF-8. */
int diag_utf8_len(const unsigned char *p, const unsigned char *end);

/* 1-based line and column of a byte offset, for messages that quote them. */
void diag_line_col(const Source *src, int off, int *line, int *col);
/* The 1-based line alone ("the first is at line 3"). */
int  diag_line(const Source *src, int off);

#endif
