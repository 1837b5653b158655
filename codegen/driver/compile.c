/*
** compile.c: `stencilc FILE.stn -o PROG`. Writes the generated C and the
** runtime sources into a work directory (--emit-dir DIR, kept; otherwise a
** private temporary one, removed afterwards), builds them against PETSc
** (toolchain.c: no shell anywhere), and moves the program into place, so
** PROG is either the complete new program or untouched. Writing the sources
** (compile_write_sources) is shared with --skeleton (skeleton.c).
**
** A C compiler failing on generated code is a bug in stencilc: it is
** reported as an internal error (exit 70) with the path of the kept log.
*/
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "compile.h"
#include "emit_c.h"
#include "runtime_files.h"
#include "strutil.h"
#include "toolchain.h"
#include "util.h"

/* The last component of path, without the suffix ext when it ends so, with
   every character outside [A-Za-z0-9_.-] replaced by '_': a name safe in
   C comments, C strings and file names. */
static char *safe_base(const char *path, const char *ext) {
  const char *b = path_base(path);
  size_t n = strlen(b), e = strlen(ext);
  if (e && n > e && str_ends_with(b, ext)) n -= e;
  char *s = xmalloc(n + 1 + 4);
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

static bool write_text(FILE *f, const void *text) {
  size_t len = strlen(text);
  return fwrite(text, 1, len, f) == len;
}

/* Every file is written whole or not at all (file_write_whole): an --emit-dir on a full disk
   keeps no truncated NAME.c. */
static bool write_file(const char *path, const char *text) { return file_write_whole(path, write_text, text); }

/* Names NAME (the base of NAME.c, NAME.h, NAME.cu) must not have, so that
   the generated sources stay apart from the runtime's and a skeleton's
   makefile works: NAME.c, NAME.h and NAME.cu must match none of the patterns
   by which PETSc's `make clean` (clean-legacy in lib/petsc/conf/rules)
   deletes files (the others in its list need a second '.', a '~' or another
   extension, which NAME.c cannot have), and the program NAME must not be a
   target of PETSc's make rules (3.18 and 3.24, petscrules included) or of
   the skeleton's makefile. */
static const char *const clean_patterns[] = {"PI*", "g_*", "PETScArena*", "core.*", "Log.*", "ins10*.c"};
static const char *const make_targets[] = {
  "GNUmakefile", "Makefile", "all", "alltree", "alltree_makefile", "alltree_src", "check_petsc4py_rst",
  "checkbadFileChange", "checkbadPetscFunctionBegin", "checkbadSource", "checkbadSpelling", "checkbadURLS",
  "checkmakefilelist", "chk_c2html", "chk_in_petscdir", "chk_loc", "chk_petscdir", "chk_upgrade", "chklib_dir",
  "chkopts", "clangformat", "clean", "cleangcov", "cleanhtml", "deleteshared", "foo", "getautoconfargs",
  "getblaslapacklibs", "getccompiler", "getcflags", "getcxxcompiler", "getcxxflags", "getfortrancompiler",
  "getfortranflags", "getincludedirs", "getlinklibs", "getmpiexec", "getmpiincludedirs", "getmpilinklibs",
  "getversion", "gnumake", "html", "libc", "libcu", "libcxx", "libf", "libs", "lint", "makefile", "manexamples",
  "manimplementations", "manualpages", "print_mesg_after_build", "printdot", "remote_sshrsync", "shared_arch",
  "simplehtml", "tree", "tree_basic", "tree_src", "updatedatafiles", "vermin",
};

static bool name_taken(const char *name) {
  for (int i = 0; i < COUNT_OF(make_targets); i++)
    if (strcmp(name, make_targets[i]) == 0) return true;
  static const char *const exts[] = {".c", ".h", ".cu"};
  for (int e = 0; e < COUNT_OF(exts); e++) {
    char *file = path_add_ext(name, exts[e]);
    bool taken = runtime_file(file) != NULL || strcmp(file, COMPILE_PROGRAM_HEADER) == 0;
    for (int i = 0; i < COUNT_OF(clean_patterns) && !taken; i++) taken = fnmatch(clean_patterns[i], file, 0) == 0;
    free(file);
    if (taken) return true;
  }
  return false;
}

char *compile_stn_name(const char *input) { return safe_base(input, ""); }

char *compile_base_name(const char *input) {
  char *base = safe_base(input, ".stn");
  for (char *c = base; *c; c++)
    if (*c == '.' || *c == '-') *c = '_';
  if (!name_taken(base)) return base;
  char *s = xprintf("stn_%s", base);
  free(base);
  return s;
}

typedef void (*Emitter)(const Ir *ir, const EmitOptions *o, FILE *out);

/* In step with Generated.name: the emitter of each generated source. */
static const Emitter emitters[COMPILE_NGENERATED] = {emit_c_program, emit_cuda_header, emit_cuda_kernels,
                                                      emit_program_header};

void compile_generated_init(Generated *g, const char *input, const char *program) {
  g->stn_name = compile_stn_name(input);
  g->base = compile_base_name(input);
  g->name[0] = path_add_ext(g->base, ".c");
  g->name[1] = path_add_ext(g->base, ".h");
  g->name[2] = path_add_ext(g->base, ".cu");
  g->name[3] = xstrdup(COMPILE_PROGRAM_HEADER);
  g->eo = (EmitOptions){program, g->stn_name, g->name[0], g->name[1], false};
}

void compile_generated_emit(const Generated *g, const Ir *ir, int i, FILE *out) { emitters[i](ir, &g->eo, out); }

void compile_generated_free(Generated *g) {
  free(g->stn_name);
  free(g->base);
  for (int i = 0; i < COMPILE_NGENERATED; i++) free(g->name[i]);
}

typedef struct {
  const Generated *g;
  const Ir *ir;
  int i;
} Emission;

static bool emit_text(FILE *f, const void *ctx) {
  const Emission *e = ctx;
  compile_generated_emit(e->g, e->ir, e->i, f);
  return !ferror(f);
}

static bool emit_file(const Generated *g, const Ir *ir, int i, const char *path) {
  Emission e = {g, ir, i};
  return file_write_whole(path, emit_text, &e);
}

static int fail(const char *what, const char *path) {
  fprintf(stderr, "stencilc: error: %s '%s': %s\n", what, path, strerror(errno));
  return 1;
}

bool compile_write_sources(const Ir *ir, const char *input, const char *program, const char *dir, bool hooks,
                           char **files, int *nfiles) {
  Generated g;
  compile_generated_init(&g, input, program);
  g.eo.hooks = hooks;
  bool ok = true;
  for (int i = 0; i < COMPILE_NGENERATED && ok; i++) {
    files[*nfiles] = path_join(dir, g.name[i]);
    ok = emit_file(&g, ir, i, files[(*nfiles)++]);
  }
  for (const RuntimeFile *rf = runtime_files; ok && rf->name; rf++) {
    if (*nfiles >= COMPILE_MAX_FILES / 2) ice("compile.c: COMPILE_MAX_FILES is too small for the runtime"); /* half: room for an object per file */
    files[*nfiles] = path_join(dir, rf->name);
    ok = write_file(files[(*nfiles)++], rf->text);
  }
  if (!ok) fail("cannot write", files[*nfiles - 1]);
  compile_generated_free(&g);
  return ok;
}

/* -o replaces its file by a rename: never the input, nor anything that is not a regular file (a
   device such as /dev/null, a FIFO, a directory), which the rename would replace by the program. */
static bool output_allowed(const char *input, const char *output) {
  struct stat so, si;
  if (stat(output, &so) != 0) return true;  /* a new file; other failures show when it is written */
  if (!S_ISREG(so.st_mode)) {
    fprintf(stderr, "stencilc: error: -o '%s' exists and is not a regular file (a directory, a device or a FIFO); "
                    "-o names the program to write: give a new path or a regular file's\n", output);
    return false;
  }
  if (stat(input, &si) == 0 && si.st_dev == so.st_dev && si.st_ino == so.st_ino) {
    fprintf(stderr, "stencilc: error: -o '%s' is the input file itself; name the program, for example -o %.*s\n", output,
            (int)(strlen(path_base(input)) - (str_ends_with(input, ".stn") ? 4 : 0)), path_base(input));
    return false;
  }
  return true;
}

/* The marker --emit-dir leaves: a directory holding it was written by stencilc, and the next
   --emit-dir into it may overwrite what it holds. */
#define EMIT_MARKER ".stencilc-emit"

/* --emit-dir writes into a new or empty directory, or into one an earlier --emit-dir wrote, so
   that no file of the user's (their own plot.c or NAME.c) is overwritten. */
static bool prepare_emit_dir(const char *dir) {
  struct stat st;
  char *marker = path_join(dir, EMIT_MARKER);
  bool ok = true;
  if (stat(dir, &st) == 0) {
    int full = S_ISDIR(st.st_mode) ? dir_has_entries(dir) : 0;
    if (!S_ISDIR(st.st_mode)) {
      fprintf(stderr, "stencilc: error: --emit-dir '%s' exists and is not a directory\n", dir);
      ok = false;
    } else if (full < 0) {
      fail("cannot read the directory", dir);
      ok = false;
    } else if (full && access(marker, F_OK) != 0) {
      fprintf(stderr, "stencilc: error: the directory '%s' holds files stencilc did not write; --emit-dir writes only "
                      "into a new or empty directory, or one an earlier --emit-dir wrote, so that nothing of yours "
                      "is overwritten\n", dir);
      ok = false;
    }
  } else if (errno != ENOENT || mkdir(dir, 0777) != 0) {
    fail("cannot create the directory", dir);
    ok = false;
  }
  if (ok) {
    FILE *f = fopen(marker, "w");
    if (!f || fputs("written by stencilc --emit-dir; the next --emit-dir here overwrites its files\n", f) < 0 || fclose(f) != 0) {
      fail("cannot write", marker);
      ok = false;
    }
  }
  free(marker);
  return ok;
}

int compile_program(const Ir *ir, const CompileOptions *co) {
  char err[1024];
  Toolchain tc;
  if (!output_allowed(co->input, co->output)) return 1;
  if (tc_find(&tc, err, sizeof err) != 0) {
    fprintf(stderr, "stencilc: error: %s\n", err);
    return 1;
  }
  char *dir;
  if (co->emit_dir) {
    if (!prepare_emit_dir(co->emit_dir)) {
      tc_free(&tc);
      return 1;
    }
    dir = xstrdup(co->emit_dir);
  } else {
    dir = tc_make_temp_dir();
    if (!dir) {
      tc_free(&tc);
      return fail("cannot create a work directory in", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    }
  }
  char *program = safe_base(co->output, "");
  char *exe = path_join(dir, "program.out");
  char *log = path_join(dir, "build.log");
  int status = 1;

  /* Every file written, by kind: C sources go to the C compiler, CUDA
     sources to nvcc first (when PETSc has CUDA), headers nowhere. */
  char *files[COMPILE_MAX_FILES];
  int nfiles = 0;
  const char *sources[COMPILE_MAX_FILES];
  int nsources = 0;
  if (!compile_write_sources(ir, co->input, program, dir, false, files, &nfiles)) goto done;
  /* The CUDA sources compile at the same time (nvcc is one process per file, and the runtime's
     kernel files take up to a minute each); every compiler started is waited for, and the first
     failure is the one reported. */
  int pids[COMPILE_MAX_FILES];
  char *cuda_objs[COMPILE_MAX_FILES], *cuda_logs[COMPILE_MAX_FILES];
  int ncuda = 0, cuda_failed = 0;
  char cuda_err[sizeof err] = "";
  for (int f = 0; f < nfiles && nsources < COMPILE_MAX_FILES; f++) {
    if (str_ends_with(files[f], ".c")) sources[nsources++] = files[f];
    if (str_ends_with(files[f], ".cu") && tc.cuda && !cuda_failed) {
      cuda_objs[ncuda] = path_add_ext(files[f], ".o");
      cuda_logs[ncuda] = path_add_ext(files[f], ".log");
      if (tc_start_cuda(&tc, files[f], dir, cuda_objs[ncuda], cuda_logs[ncuda], &pids[ncuda], cuda_err, sizeof cuda_err) != 0) {
        cuda_failed = 1;
        free(cuda_objs[ncuda]);
        free(cuda_logs[ncuda]);
        continue;
      }
      ncuda++;
    }
  }
  for (int c = 0; c < ncuda; c++) {
    if (tc_finish_cuda(&tc, pids[c], cuda_logs[c], err, sizeof err) != 0 && !cuda_failed) {
      cuda_failed = 1;
      snprintf(cuda_err, sizeof cuda_err, "%s", err);
    }
    free(cuda_logs[c]);
    files[nfiles++] = cuda_objs[c]; /* freed with the others; compile_write_sources left room for one per file */
    sources[nsources++] = cuda_objs[c];
  }
  if (cuda_failed) {
    fprintf(stderr, "stencilc: internal error: %s\nThe sources and the log are kept in %s. Please report this as a bug in stencilc.\n", cuda_err, dir);
    status = 70;
    free(dir);
    dir = NULL;
    goto done;
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
  for (int f = 0; f < nfiles; f++) free(files[f]);
  if (dir && !co->emit_dir) tc_remove_dir(dir);
  else if (dir) remove(exe);
  free(dir);
  free(program);
  free(exe);
  free(log);
  tc_free(&tc);
  return status;
}
