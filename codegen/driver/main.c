/*
** main.c: the stencilc driver. Parses the command line, runs the front end
** and stops between phases: a program with errors produces no output.
**
**   stencilc FILE -o PROG       compile FILE into the program PROG
**   stencilc FILE --skeleton DIR  write a PETSc application project into DIR
**   stencilc --check FILE       parse and check only
**   stencilc --dump-ast FILE    print the checked syntax tree
**   stencilc --dump-ir FILE     print the IR (after any pass)
**   stencilc --explain FILE     the program explained for a student (explain.c)
**
** Exit status: 0 success, 1 errors in the program, 2 usage errors, 70 an
** internal error (a bug in stencilc).
*/
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "compile.h"
#include "explain.h"
#include "frontend.h"
#include "ir.h"
#include "util.h"

static const char usage_text[] =
  "usage: stencilc FILE.stn -o PROG [--emit-dir DIR]\n"
  "       stencilc FILE.stn --skeleton DIR\n"
  "       stencilc [--check | --dump-ast | --dump-ir[=PASS]] FILE.stn\n"
  "       stencilc --explain [--explain-svg FILE.svg] FILE.stn\n"
  "\n"
  "Compiles a stencil program (.stn) into a PETSc Newton-Krylov solver.\n"
  "\n"
  "options:\n"
  "  -o PROG       write the program to PROG (built with PETSc: Debian's petsc-dev\n"
  "                through pkg-config, or $PETSC_DIR/$PETSC_ARCH when set)\n"
  "  --emit-dir DIR  keep the generated C and runtime sources in DIR\n"
  "  --skeleton DIR  write a PETSc application project into DIR (new or empty):\n"
  "                the generated C and CUDA, the runtime, a makefile using PETSc's\n"
  "                conventions and a README; `make` there builds the program\n"
  "  --check       parse and check FILE; print errors and warnings only\n"
  "  --dump-ast    print the syntax tree of FILE after checking it\n"
  "  --dump-ir[=PASS]  print the IR after PASS (lower, derive, simplify,\n"
  "                check, mirror, stencil, shift; default: stencil, or shift\n"
  "                for a time-dependent program)\n"
  "  --explain     explain FILE for a student: grid, unknowns, each residual's\n"
  "                stencil, the Jacobian entries, the SG-DIA layout and its\n"
  "                storage against CSR and DIA\n"
  "  --explain-svg FILE.svg  as --explain, and draw the stencil, the Jacobian's\n"
  "                sparsity pattern and the SG-DIA columns for a small grid\n"
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
  enum { MODE_NONE, MODE_CHECK, MODE_DUMP_AST, MODE_DUMP_IR, MODE_EXPLAIN } mode = MODE_NONE;
  IrPass dump_after = PASS_COUNT;
  const char *file = NULL, *output = NULL, *emit_dir = NULL, *skeleton = NULL, *svg = NULL;
  bool options_done = false;
  signal(SIGXFSZ, SIG_IGN);  /* a file size limit (ulimit -f) fails a write, reported, rather than killing us mid-file */
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!options_done && a[0] == '-' && a[1] != '\0') {
      if (strcmp(a, "--") == 0) options_done = true;
      else if (strcmp(a, "-o") == 0 || strcmp(a, "--emit-dir") == 0 || strcmp(a, "--skeleton") == 0) {
        if (i + 1 >= argc) return usage_error("%s needs an argument", a);
        const char **slot = a[1] == 'o' ? &output : a[2] == 'e' ? &emit_dir : &skeleton;
        if (*slot) return usage_error("%s given twice", a);
        *slot = argv[++i];
        if (!**slot) return usage_error("the argument of %s is empty", a);
      }
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
      } else if (strcmp(a, "--explain") == 0 || strcmp(a, "--explain-svg") == 0) {
        if (mode != MODE_NONE && mode != MODE_EXPLAIN) return usage_error("%s cannot be combined with another mode", a);
        mode = MODE_EXPLAIN;
        if (a[9] == '-') {
          if (i + 1 >= argc) return usage_error("%s needs an argument", a);
          if (svg) return usage_error("%s given twice", a);
          svg = argv[++i];
          if (!*svg) return usage_error("the argument of %s is empty", a);
        }
      } else if (strncmp(a, "--dump-ir", 9) == 0 && (a[9] == '\0' || a[9] == '=')) {
        if (mode != MODE_NONE && mode != MODE_DUMP_IR) return usage_error("%s cannot be combined with another mode", a);
        mode = MODE_DUMP_IR;
        dump_after = PASS_COUNT;  /* the last that changes the program: stencil, or shift (below) */
        if (a[9] == '=') {
          int p = 0;
          while (p < PASS_COUNT && strcmp(a + 10, ir_pass_names[p]) != 0) p++;
          if (p == PASS_COUNT) return usage_error("unknown pass in '%s' (lower, derive, simplify, check, mirror, stencil, shift)", a);
          dump_after = (IrPass)p;
        }
      } else
        return usage_error("unknown option '%s'", a);
      continue;
    }
    if (file) return usage_error("more than one input file given ('%s')", a);
    file = a;
  }
  if (!file) return usage_error("%sno input file", "");
  if (skeleton && (mode != MODE_NONE || output || emit_dir))
    return usage_error("%s--skeleton cannot be combined with -o, --emit-dir, --check, --dump-* or --explain", "");
  if (mode != MODE_NONE && (output || emit_dir)) return usage_error("%s-o and --emit-dir cannot be combined with --check, --dump-* or --explain", "");
  if (emit_dir && !output) return usage_error("%s--emit-dir needs -o PROG", "");
  if (mode == MODE_NONE && !output && !skeleton)
    return usage_error("%sno output given: use -o PROG or --skeleton DIR (or --check)", "");

  Frontend fe;
  frontend_init(&fe, file, stderr);
  bool ok = frontend_load(&fe) && frontend_check(&fe);
  int status = 0;
  if (ok && mode == MODE_DUMP_AST) ast_dump(stdout, &fe.src, fe.program);
  if (ok && mode != MODE_DUMP_AST) {
    Ir ir;
    ir_init(&ir, &fe.model, &fe.src);
    if (dump_after == PASS_COUNT) dump_after = fe.model.time_dependent ? PASS_SHIFT : PASS_STENCIL;
    ok = ir_build(&ir, &fe.diag, mode == MODE_DUMP_IR ? dump_after : PASS_COUNT, stdout);
    if (ok && output) {
      CompileOptions co = {file, output, emit_dir};
      status = compile_program(&ir, &co);
    }
    if (ok && skeleton) status = skeleton_write(&ir, file, skeleton);
    if (ok && mode == MODE_EXPLAIN) {
      ExplainOptions eo = {file, svg};
      status = explain_program(&ir, &eo, stdout);
    }
    ir_free(&ir);
  }
  frontend_free(&fe);
  return ok ? status : 1;
}
