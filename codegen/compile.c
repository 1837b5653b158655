/*
** compile.c: `stencilc FILE.stn -o PROG`. Writes the generated C and the
** runtime sources into a work directory (--emit-dir DIR, kept; otherwise a
** private temporary one, removed afterwards), builds them against PETSc
** (toolchain.c: no shell anywhere), and moves the program into place, so
** PROG is either the complete new program or untouched.
**
** A C compiler failing on generated code is a bug in stencilc: it is
** reported as an internal error (exit 70) with the path of the kept log.
*/
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "compile.h"
#include "emit_c.h"
#include "runtime_files.h"
#include "toolchain.h"
#include "util.h"

/* The last component of path, without the suffix ext when it ends so, with
   every character outside [A-Za-z0-9_.-] replaced by '_': a name safe in
   C comments, C strings and file names. */
static char *safe_base(const char *path, const char *ext) {
  const char *slash = strrchr(path, '/');
  const char *b = slash ? slash + 1 : path;
  size_t n = strlen(b), e = strlen(ext);
  if (e && n > e && strcmp(b + n - e, ext) == 0) n -= e;
  char *s = malloc(n + 1 + 4);
  if (!s) ice("out of memory");
  for (size_t i = 0; i < n; i++) {
    char c = b[i];
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
              (c == '.' && i > 0);
    s[i] = ok ? c : '_';
  }
  if (n == 0) memcpy(s, "prog", (n = 4));
  s[n] = '\0';
  return s;
}

static char *join(const char *dir, const char *name) {
  size_t n = strlen(dir) + strlen(name) + 2;
  char *s = malloc(n);
  if (!s) ice("out of memory");
  snprintf(s, n, "%s/%s", dir, name);
  return s;
}

static bool write_file(const char *path, const char *text, size_t len) {
  FILE *f = fopen(path, "wb");
  if (!f) return false;
  bool ok = fwrite(text, 1, len, f) == len;
  return fclose(f) == 0 && ok;
}

static bool emit_program(const Ir *ir, const char *path, const char *program, const char *stn_name, const char *c_name) {
  FILE *f = fopen(path, "wb");
  if (!f) return false;
  EmitOptions o = {program, stn_name, c_name};
  emit_c_program(ir, &o, f);
  bool ok = !ferror(f);
  return fclose(f) == 0 && ok;
}

static int fail(const char *what, const char *path) {
  fprintf(stderr, "stencilc: error: %s '%s': %s\n", what, path, strerror(errno));
  return 1;
}

int compile_program(const Ir *ir, const CompileOptions *co) {
  char err[1024];
  Toolchain tc;
  if (tc_find(&tc, err, sizeof err) != 0) {
    fprintf(stderr, "stencilc: error: %s\n", err);
    return 1;
  }
  char *dir;
  if (co->emit_dir) {
    if (mkdir(co->emit_dir, 0777) != 0 && errno != EEXIST) {
      tc_free(&tc);
      return fail("cannot create the directory", co->emit_dir);
    }
    dir = strdup(co->emit_dir);
  } else {
    dir = tc_make_temp_dir();
    if (!dir) {
      tc_free(&tc);
      return fail("cannot create a work directory in", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    }
  }
  char *program = safe_base(co->output, "");
  char *stn_name = safe_base(co->input, "");
  char *c_base = safe_base(co->input, ".stn");
  strcat(c_base, ".c");
  char *c_path = join(dir, c_base);
  char *exe = join(dir, "program.out");
  char *log = join(dir, "build.log");
  int status = 1;

  const char **sources = calloc(64, sizeof *sources);
  int nsources = 0;
  if (!sources) ice("out of memory");
  if (!emit_program(ir, c_path, program, stn_name, c_base)) {
    fail("cannot write", c_path);
    goto done;
  }
  sources[nsources++] = c_path;
  for (const RuntimeFile *rf = runtime_files; rf->name; rf++) {
    char *p = join(dir, rf->name);
    if (!write_file(p, rf->text, strlen(rf->text))) {
      fail("cannot write", p);
      free(p);
      goto done;
    }
    size_t n = strlen(rf->name);
    if (n > 2 && strcmp(rf->name + n - 2, ".c") == 0 && nsources < 63) sources[nsources++] = p;
    else free(p);
  }
  int rc = tc_build(&tc, sources, nsources, dir, exe, log, err, sizeof err);
  if (rc != 0) {
    fprintf(stderr, "stencilc: internal error: the C compiler (%s, with %s) failed on the generated code: %s\n"
                    "The sources and the log are kept in %s. Please report this as a bug in stencilc.\n",
            tc.cc, tc.petsc_desc, err, dir);
    status = 70;
    free(dir);
    dir = NULL;  /* keep it */
    goto done;
  }
  if (tc_move_file(exe, co->output, err, sizeof err) != 0) {
    fprintf(stderr, "stencilc: error: %s\n", err);
    goto done;
  }
  status = 0;

done:
  for (int i = 1; i < nsources; i++) free((char *)sources[i]);
  free(sources);
  if (dir && !co->emit_dir) tc_remove_dir(dir);
  else if (dir) remove(exe);
  free(dir);
  free(program);
  free(stn_name);
  free(c_base);
  free(c_path);
  free(exe);
  free(log);
  tc_free(&tc);
  return status;
}
