/*
** frontend.c: runs the front end's phases in order, stopping at the first
** phase that reported an error: text check, parse, semantic checks.
*/
#include <string.h>

#include "frontend.h"
#include "parse.h"
#include "source.h"

void frontend_init(Frontend *fe, const char *path, FILE *out) {
  memset(fe, 0, sizeof *fe);
  arena_init(&fe->arena);
  intern_init(&fe->names, &fe->arena);
  fe->src.name = path;
  fe->src.text = "";
  diag_init(&fe->diag, &fe->src, out);
}

bool frontend_load(Frontend *fe) { return source_read(&fe->src, fe->src.name, &fe->arena, &fe->diag); }

void frontend_set_text(Frontend *fe, const char *text, size_t len) {
  char *copy = arena_alloc(&fe->arena, len + 1);
  memcpy(copy, text, len);
  copy[len] = '\0';
  fe->src.text = copy;
  fe->src.len = (int)len;
}

/* True when the text holds nothing but blanks and comments. */
static bool blank(const Source *src) {
  const char *p = src->text, *end = p + src->len;
  while (p < end) {
    if (*p == '#') {
      while (p < end && *p != '\n') p++;
    } else if (strchr(" \t\r\n\f\v", *p)) {
      p++;
    } else {
      return false;
    }
  }
  return true;
}

/* A UTF-8 byte-order mark that starts the file is not part of the program: it
   is dropped before anything else sees the text, so columns on the first line
   count from the first visible character. (One anywhere else is an error, the
   lexer's.) */
static void drop_bom(Source *src) {
  if (src->len >= 3 && memcmp(src->text, "\xEF\xBB\xBF", 3) == 0) {
    src->text += 3;
    src->len -= 3;
  }
}

static bool check(Frontend *fe) {
  drop_bom(&fe->src);
  if (!source_check_text(&fe->src, &fe->diag)) return false;
  if (blank(&fe->src)) {
    diag_file_error(&fe->diag, "the program is empty: there is nothing to compile");
    diag_hint(&fe->diag, "a .stn program declares at least a grid, fields, a stencil and a residual per field;"
                         " see examples/ and dsl/LANGUAGE.md");
    return false;
  }
  diag_index(&fe->src, &fe->arena);
  fe->program = parse_program(&fe->src, &fe->diag, &fe->arena, &fe->names);
  if (fe->diag.nerr > 0 || !fe->program) return false;
  sema_check(&fe->model, fe->program, &fe->diag, &fe->arena, &fe->names);
  return fe->diag.nerr == 0;
}

bool frontend_check(Frontend *fe) {
  bool ok = check(fe);
  diag_flush(&fe->diag);
  return ok;
}

void frontend_free(Frontend *fe) {
  intern_free(&fe->names);
  arena_free(&fe->arena);
}
