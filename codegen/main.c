/*
** main.c: the stencilc driver. Parses the command line, runs the front end
** and stops between phases: a program with errors produces no output.
**
**   stencilc --check FILE      parse and check only
**   stencilc --dump-ast FILE   print the checked syntax tree
**
** Exit status: 0 success, 1 errors in the program, 2 usage errors, 70 an
** internal error (a bug in stencilc).
*/
#include <stdio.h>
#include <string.h>

#include "frontend.h"
#include "util.h"

static const char usage_text[] =
  "usage: stencilc [options] FILE.stn\n"
  "\n"
  "Compiles a stencil program (.stn) into a PETSc Newton-Krylov solver.\n"
  "\n"
  "options:\n"
  "  --check       parse and check FILE; print errors and warnings only\n"
  "  --dump-ast    print the syntax tree of FILE after checking it\n"
  "  --help        print this help and exit\n"
  "  --version     print the version and exit\n"
  "\n"
  "The language is described in dsl/LANGUAGE.md; examples are in examples/.\n";

static int usage_error(const char *fmt, const char *arg) {
  fputs("stencilc: error: ", stderr);
  fprintf(stderr, fmt, arg);
  fputs("\nTry 'stencilc --help' for usage.\n", stderr);
  return 2;
}

int main(int argc, char **argv) {
  enum { MODE_NONE, MODE_CHECK, MODE_DUMP_AST } mode = MODE_NONE;
  const char *file = NULL;
  bool options_done = false;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!options_done && a[0] == '-' && a[1] != '\0') {
      if (strcmp(a, "--") == 0) options_done = true;
      else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
        fputs(usage_text, stdout);
        return 0;
      } else if (strcmp(a, "--version") == 0) {
        printf("stencilc %s\n", STENCILC_VERSION);
        return 0;
      } else if (strcmp(a, "--check") == 0 || strcmp(a, "--dump-ast") == 0) {
        int m = strcmp(a, "--check") == 0 ? MODE_CHECK : MODE_DUMP_AST;
        if (mode != MODE_NONE && (int)mode != m) return usage_error("%s cannot be combined with another mode", a);
        mode = m;
      } else
        return usage_error("unknown option '%s'", a);
      continue;
    }
    if (file) return usage_error("more than one input file given ('%s')", a);
    file = a;
  }
  if (!file) return usage_error("%sno input file", "");
  if (mode == MODE_NONE)
    return usage_error("%scompiling to a program is not available yet; use --check or --dump-ast", "");

  Frontend fe;
  frontend_init(&fe, file, stderr);
  bool ok = frontend_load(&fe) && frontend_check(&fe);
  if (ok && mode == MODE_DUMP_AST) ast_dump(stdout, &fe.src, fe.program);
  frontend_free(&fe);
  return ok ? 0 : 1;
}
