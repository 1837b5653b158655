/*
** lexer.re: the .stn lexer (re2c). The whole file is one NUL-terminated
** buffer, checked beforehand to be UTF-8 with no NUL inside (source.c), so
** NUL means end of input and no refill is needed.
**
** The re2c block is a flat table: one statement per action. Decoding
** numbers and strings, interning names and tracking open brackets (for
** "expected ')' to close '(' at 3:5") are helpers outside it.
*/
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "grammar.h"
#include "parse.h"
#include "util.h"

typedef const unsigned char *Cursor;

static int token(Parser *ps, Loc *lloc, Cursor start, Cursor end, int kind) {
  lloc->off = (int)((const char *)start - ps->src->text);
  lloc->len = (int)(end - start);
  ps->prev = ps->last;
  ps->last = *lloc;
  return kind;
}

/* End of input is placed just after the last token, so that "expected '}'"
   points at the line that needs it rather than at an empty last line. */
static int end_of_input(Parser *ps, Loc *lloc, Cursor p) {
  int off = (int)((const char *)p - ps->src->text);
  if (ps->last.len > 0 && ps->last.off + ps->last.len <= off) off = ps->last.off + ps->last.len;
  lloc->off = off;
  lloc->len = 0;
  if (ps->last.off != off || ps->last.len != 0) ps->prev = ps->last;
  ps->last = *lloc;
  return END;
}

/* A token the lexer already reported, passed on so the parser can go on;
   a syntax error right next to it is a follow-on and is not reported. */
static int placeholder(Parser *ps, Loc *lloc, Cursor start, Cursor end, int kind) {
  token(ps, lloc, start, end, kind);
  ps->placeholder = *lloc;
  return kind;
}

static Loc span(Parser *ps, Cursor start, Cursor end) {
  Loc at = {(int)((const char *)start - ps->src->text), (int)(end - start)};
  return at;
}

static int open_bracket(Parser *ps, Loc *lloc, Cursor start, Cursor end, char ch) {
  if (ps->nopen == ps->capopen) {
    ps->capopen = ps->capopen ? 2 * ps->capopen : 16;
    ps->open = xrealloc(ps->open, (size_t)ps->capopen * sizeof *ps->open);
  }
  ps->open[ps->nopen].ch = ch;
  ps->open[ps->nopen].at = span(ps, start, end);
  ps->nopen++;
  return token(ps, lloc, start, end, ch);
}

/* A closer pops its opener only when they match; a mismatch is the parser's to report. */
static int close_bracket(Parser *ps, Loc *lloc, Cursor start, Cursor end, char open, char ch) {
  if (ps->nopen > 0 && ps->open[ps->nopen - 1].ch == open) ps->nopen--;
  return token(ps, lloc, start, end, ch);
}

static int identifier(Parser *ps, STN_STYPE *lval, Loc *lloc, Cursor start, Cursor end) {
  lval->str = intern(ps->names, (const char *)start, (size_t)(end - start));
  return token(ps, lloc, start, end, IDENT);
}

/* Whether the digits before the exponent of a real are all zeros ("0.0e-5"). */
static bool zero_mantissa(const char *text) {
  for (; *text && *text != 'e' && *text != 'E'; text++)
    if (*text >= '1' && *text <= '9') return false;
  return true;
}

static int number(Parser *ps, STN_STYPE *lval, Loc *lloc, Cursor start, Cursor end, int kind) {
  char *text = arena_strndup(ps->arena, (const char *)start, (size_t)(end - start));
  errno = 0;
  double v = strtod(text, NULL);
  if (errno == ERANGE && fabs(v) > 1) v = HUGE_VAL;
  if (v == HUGE_VAL) {
    diag_error(ps->diag, span(ps, start, end), "number too large for a double");
    v = 0;
  } else if (kind == INT && v > 2147483647.0) {
    diag_error(ps->diag, span(ps, start, end), "integer too large (the largest is 2147483647)");
    v = 0;
  } else if (v == 0 && !zero_mantissa(text)) {
    diag_error(ps->diag, span(ps, start, end), "number too small for a double: it would be 0");
    diag_hint(ps->diag, "the smallest positive double is about 4.9e-324; write 0 if 0 is meant, or scale the problem");
  } else if (v != 0 && fabs(v) < DBL_MIN) {
    diag_warning(ps->diag, span(ps, start, end), "number below 2.2e-308 is stored with fewer digits (a subnormal double)");
    diag_hint(ps->diag, "it keeps %d significant bits of 53; scale the problem so its numbers lie nearer 1",
              (int)floor(log2(fabs(v) / 4.9406564584124654e-324)) + 1);
  }
  lval->num = v;
  return token(ps, lloc, start, end, kind);
}

/* A string is a description: the quotes are dropped, \" and \\ decoded. */
static int string(Parser *ps, STN_STYPE *lval, Loc *lloc, Cursor start, Cursor end) {
  char *s = arena_alloc(ps->arena, (size_t)(end - start));
  size_t n = 0;
  for (Cursor p = start + 1; p < end - 1; p++) {
    if (*p == '\\') {
      p++;
      if (*p != '"' && *p != '\\')
        diag_error(ps->diag, span(ps, p - 1, p + 1), "unknown escape in a string; only \\\" and \\\\ are allowed");
    }
    s[n++] = (char)*p;
  }
  s[n] = '\0';
  lval->str = s;
  return token(ps, lloc, start, end, STRING);
}

static void bad_string(Parser *ps, Cursor start, Cursor end) {
  diag_error(ps->diag, span(ps, start, end), "string is not closed on this line");
  diag_hint(ps->diag, "end it with '\"'; a description cannot span lines");
}

static void bad_char(Parser *ps, Cursor start, Cursor end) {
  Loc at = span(ps, start, end);
  if (end - start == 1 && *start >= 0x20 && *start < 0x7f)
    diag_error(ps->diag, at, "unexpected character '%c'", *start);
  else if (end - start == 1)
    diag_error(ps->diag, at, "unexpected control character 0x%02x", *start);
  else
    diag_error(ps->diag, at, "unexpected character '%.*s': names and operators are ASCII",
               (int)(end - start), (const char *)start);
}

/* A byte-order mark (U+FEFF) between tokens: it is invisible, so it is named
   in words. One that starts the file never gets here (frontend.c drops it).
   Lexing resumes right after it, so the name it stood before is read as
   written. */
static bool byte_order_mark(Parser *ps, Cursor start, Cursor *p) {
  if (memcmp(start, "\xEF\xBB\xBF", 3) != 0) return false;
  diag_error(ps->diag, span(ps, start, start + 3),
             "a byte-order mark (U+FEFF, an invisible character) in the middle of the file");
  diag_hint(ps->diag, "delete it: a UTF-8 file may start with one but has none elsewhere (joining files can leave one)");
  *p = start + 3;
  return true;
}

/* Non-ASCII where a name could stand: one error, and the text goes on as a name. */
static void bad_name(Parser *ps, Cursor start, Cursor end) {
  diag_error(ps->diag, span(ps, start, end), "'%.*s' is not a valid name: names are ASCII letters, digits and '_'",
             (int)(end - start > 40 ? 40 : end - start), (const char *)start);
}

static void bad_number(Parser *ps, Cursor start, Cursor end) {
  diag_error(ps->diag, span(ps, start, end), "malformed number '%.*s'", (int)(end - start > 40 ? 40 : end - start),
             (const char *)start);
  diag_hint(ps->diag, "numbers look like 3, 0.5, .5, 1e-3 or 6.02e23; write 2*x for a product");
}

int stn_lex(STN_STYPE *lval, Loc *lloc, Parser *ps) {
  Cursor p = (Cursor)ps->cur, start, YYMARKER;
  for (;;) {
    start = p;
#define RET(x) do { ps->cur = (const char *)p; return (x); } while (0)
    /*!re2c
      re2c:define:YYCTYPE = "unsigned char";
      re2c:define:YYCURSOR = p;
      re2c:yyfill:enable = 0;

      digits  = [0-9]+;
      exp     = [eE] [+-]? digits;
      real    = digits "." [0-9]* exp? | "." digits exp? | digits exp;
      ident   = [a-zA-Z_] [a-zA-Z0-9_]*;
      utf8    = [\xc0-\xf7] [\x80-\xbf]*;
      strchar = [^"\\\n\x00] | "\\" [^\n\x00];

      "\x00"                { p--; RET(end_of_input(ps, lloc, p)); }
      [ \t\r\n\f\v]+        { continue; }
      "#" [^\n\x00]*        { continue; }

      "grid"                { RET(token(ps, lloc, start, p, KW_GRID)); }
      "points"              { RET(token(ps, lloc, start, p, KW_POINTS)); }
      "in"                  { RET(token(ps, lloc, start, p, KW_IN)); }
      "periodic"            { RET(token(ps, lloc, start, p, KW_PERIODIC)); }
      "fields"              { RET(token(ps, lloc, start, p, KW_FIELDS)); }
      "stencil"             { RET(token(ps, lloc, start, p, KW_STENCIL)); }
      "star"                { RET(token(ps, lloc, start, p, KW_STAR)); }
      "box"                 { RET(token(ps, lloc, start, p, KW_BOX)); }
      "width"               { RET(token(ps, lloc, start, p, KW_WIDTH)); }
      "param"               { RET(token(ps, lloc, start, p, KW_PARAM)); }
      "let"                 { RET(token(ps, lloc, start, p, KW_LET)); }
      "coefficient"         { RET(token(ps, lloc, start, p, KW_COEFFICIENT)); }
      "def"                 { RET(token(ps, lloc, start, p, KW_DEF)); }
      "precedence"          { RET(token(ps, lloc, start, p, KW_PRECEDENCE)); }
      "mirror"              { RET(token(ps, lloc, start, p, KW_MIRROR)); }
      "residual"            { RET(token(ps, lloc, start, p, KW_RESIDUAL)); }
      "jacobian"            { RET(token(ps, lloc, start, p, KW_JACOBIAN)); }
      "initial"             { RET(token(ps, lloc, start, p, KW_INITIAL)); }
      "if"                  { RET(token(ps, lloc, start, p, KW_IF)); }
      "then"                { RET(token(ps, lloc, start, p, KW_THEN)); }
      "else"                { RET(token(ps, lloc, start, p, KW_ELSE)); }
      "and"                 { RET(token(ps, lloc, start, p, KW_AND)); }
      "or"                  { RET(token(ps, lloc, start, p, KW_OR)); }
      "not"                 { RET(token(ps, lloc, start, p, KW_NOT)); }
      ident                 { RET(identifier(ps, lval, lloc, start, p)); }

      digits                { RET(number(ps, lval, lloc, start, p, INT)); }
      real                  { RET(number(ps, lval, lloc, start, p, NUMBER)); }
      (digits | real) [a-zA-Z_.] [a-zA-Z0-9_.]* { bad_number(ps, start, p); lval->num = 0; RET(placeholder(ps, lloc, start, p, NUMBER)); }

      ["] strchar* ["]      { RET(string(ps, lval, lloc, start, p)); }
      ["] strchar*          { bad_string(ps, start, p); lval->str = ""; RET(placeholder(ps, lloc, start, p, STRING)); }

      "=="                  { RET(token(ps, lloc, start, p, EQ)); }
      "!="                  { RET(token(ps, lloc, start, p, NE)); }
      "<="                  { RET(token(ps, lloc, start, p, LE)); }
      ">="                  { RET(token(ps, lloc, start, p, GE)); }
      "("                   { RET(open_bracket(ps, lloc, start, p, '(')); }
      "["                   { RET(open_bracket(ps, lloc, start, p, '[')); }
      "{"                   { RET(open_bracket(ps, lloc, start, p, '{')); }
      ")"                   { RET(close_bracket(ps, lloc, start, p, '(', ')')); }
      "]"                   { RET(close_bracket(ps, lloc, start, p, '[', ']')); }
      "}"                   { RET(close_bracket(ps, lloc, start, p, '{', '}')); }
      [,;:=+\-*/^<>&]       { RET(token(ps, lloc, start, p, *start)); }

      utf8 (utf8 | [a-zA-Z0-9_])* { if (byte_order_mark(ps, start, &p)) continue; bad_name(ps, start, p); identifier(ps, lval, lloc, start, p); RET(placeholder(ps, lloc, start, p, IDENT)); }
      *                     { bad_char(ps, start, p); continue; }
    */
#undef RET
  }
}
