/*
** skeleton.c: `stencilc FILE.stn --skeleton DIR`. Writes a PETSc application
** project into DIR, to build with nothing but PETSc and carry on by hand:
**
**   NAME.c, NAME.h, NAME.cu   the generated sources, exactly as -o builds them,
**                             but for NAME.c's user hooks (emit_hooks.c)
**   runtime sources           the SG-DIA matrix and the solve report
**   makefile                  PETSc's conventions: it includes
**                             ${PETSC_DIR}/lib/petsc/conf/variables and rules
**                             (PETSC_DIR defaults to Debian's /usr/lib/petsc),
**                             and compiles the .cu files with PETSc's nvcc
**                             when that PETSc has CUDA
**   README.md                 the .stn quoted in full, how to build and run
**
** NAME is compile_base_name's, the program's name too. DIR is created when
** missing; an existing DIR must be an empty directory, so that nothing of
** the user's is ever overwritten. On a failure every file written is removed
** again, and DIR too when this run created it. No PETSc is needed here.
*/
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "compile.h"
#include "runtime_files.h"
#include "sema.h"
#include "strutil.h"
#include "util.h"

typedef struct Skeleton {
  const Ir   *ir;
  const char *name;      /* NAME: the program, NAME.c, ... */
  const char *stn_name;  /* the .stn's file name, for the text */
} Skeleton;

/* 1 when dir has entries besides . and .., 0 when not, -1 (errno set) when
   it cannot be read. */
/* ---- the makefile ---- */

/* Whether stem.c is among the sources: a stem.cu beside it needs another
   object name than stem.o, which PETSc's .cu.o rule would give it. */
static bool c_source_exists(const Skeleton *k, const char *stem, size_t len) {
  if (strlen(k->name) == len && strncmp(k->name, stem, len) == 0) return true;
  for (const RuntimeFile *rf = runtime_files; rf->name; rf++)
    if (strncmp(rf->name, stem, len) == 0 && strcmp(rf->name + len, ".c") == 0) return true;
  return false;
}

static void write_makefile(FILE *out, const Skeleton *k) {
  const char *n = k->name;
  fprintf(out,
          "# makefile: builds %s, the PETSc application generated from %s by stencilc %s.\n"
          "#\n"
          "#   make                     build ./%s with Debian's petsc-dev (PETSC_DIR=/usr/lib/petsc)\n"
          "#   make PETSC_DIR=$HOME/petsc PETSC_ARCH=arch-linux-c-opt\n"
          "#                            ... with another PETSc (PETSC_ARCH for a build inside its source tree)\n"
          "#   make CFLAGS=-O3          extra flags for the C compiler (LDFLAGS: for the linker)\n"
          "#   make WITH_CUDA=          leave the CUDA kernels out even when PETSc has CUDA\n"
          "#   make clean               remove the objects and the program\n"
          "#\n"
          "# As in PETSc's tutorials, PETSc's own make variables and rules give the\n"
          "# compilers, their flags and the libraries. When that PETSc was configured\n"
          "# with CUDA (CUDAC in its petscvariables, PETSC_HAVE_CUDA in its petscconf.h),\n"
          "# the CUDA kernels (*.cu) are compiled with its nvcc as well.\n\n",
          n, k->stn_name, STENCILC_VERSION, n);
  fputs("ifeq ($(strip $(PETSC_DIR)),)\n"
        "PETSC_DIR = /usr/lib/petsc\n"
        "endif\n"
        "ifeq ($(wildcard $(PETSC_DIR)/lib/petsc/conf/variables),)\n"
        "$(error cannot find PETSc: $(PETSC_DIR)/lib/petsc/conf/variables does not exist; set PETSC_DIR "
        "(and PETSC_ARCH) to a PETSc build, or install Debian's petsc-dev)\n"
        "endif\n\n",
        out);
  fprintf(out, "PROGRAM    = %s\nCFLAGS     =\nCPPFLAGS   =\nLDFLAGS    =\nCLEANFILES = $(PROGRAM)\n\n", n);
  fputs(".PHONY: all\nall: $(PROGRAM)\n\n", out);
  fputs("include ${PETSC_DIR}/lib/petsc/conf/variables\ninclude ${PETSC_DIR}/lib/petsc/conf/rules\n\n", out);
  fputs("# PETSc's rules compile `pwd`/FILE, unquoted, which a directory with a space in its\n"
        "# path splits in two: the same compilers and flags, with the path quoted.\n"
        "%.o: %.c\n\t${PETSC_COMPILE_SINGLE} \"$(CURDIR)/$<\"\n"
        "%.o: %.cu\n\t${PETSC_CUCOMPILE_SINGLE} \"$(CURDIR)/$<\"\n\n",
        out);

  /* The sources by kind: NAME's first, then the runtime's. */
  const char *c[COMPILE_MAX_FILES], *h[COMPILE_MAX_FILES], *cu[COMPILE_MAX_FILES];
  int nc = 0, nh = 0, ncu = 0;
  char *own[3];
  static const char *const exts[3] = {".c", ".h", ".cu"};
  for (int e = 0; e < 3; e++) own[e] = path_add_ext(n, exts[e]);
  c[nc++] = own[0], h[nh++] = own[1], cu[ncu++] = own[2];
  h[nh++] = COMPILE_PROGRAM_HEADER;
  for (const RuntimeFile *rf = runtime_files; rf->name && ncu < COMPILE_MAX_FILES; rf++) {
    if (str_ends_with(rf->name, ".c")) c[nc++] = rf->name;
    else if (str_ends_with(rf->name, ".h")) h[nh++] = rf->name;
    else if (str_ends_with(rf->name, ".cu")) cu[ncu++] = rf->name;
  }
  fprintf(out, "# The program (%s.c; its CUDA kernels in %s.cu) and the stencilc runtime.\nOBJECTS      =", n, n);
  for (int i = 0; i < nc; i++) fprintf(out, " %.*s.o", (int)strlen(c[i]) - 2, c[i]);
  fputs("\nHEADERS      =", out);
  for (int i = 0; i < nh; i++) fprintf(out, " %s", h[i]);
  fputs("\nCUDA_OBJECTS =", out);
  for (int i = 0; i < ncu; i++) {
    int len = (int)strlen(cu[i]) - 3;
    fprintf(out, " %.*s%s.o", len, cu[i], c_source_exists(k, cu[i], (size_t)len) ? "_cu" : "");
  }
  fputs("\n\n", out);

  fputs("WITH_CUDA := $(if $(strip ${CUDAC}),$(shell grep -q '^#define PETSC_HAVE_CUDA 1' '${PETSCCONF_H}' "
        "2>/dev/null && echo yes))\n"
        "ifneq ($(WITH_CUDA),)\n"
        "OBJECTS += $(CUDA_OBJECTS)\n"
        "# The CUDA libraries of this machine, which may lie elsewhere (lib64 or lib)\n"
        "# than on the machine PETSc was configured on; nvcc's objects are C++.\n"
        "CUDA_HOME ?= /usr/local/cuda\n"
        "CUDA_LDFLAGS = $(foreach d,$(wildcard $(CUDA_HOME)/lib64 $(CUDA_HOME)/lib),-L$(d) -Wl,-rpath,$(d))\n"
        "CUDA_LDLIBS = -lstdc++\n"
        "endif\n\n",
        out);
  fputs("# The runtime calls LAPACK itself (it inverts the point blocks of the\n"
        "# Jacobian), and a shared libpetsc need not bring LAPACK to the program.\n"
        "$(PROGRAM): $(OBJECTS)\n"
        "\t${CLINKER} -o $@ $(OBJECTS) $(LDFLAGS) $(CUDA_LDFLAGS) ${PETSC_LIB} ${BLASLAPACK_LIB} $(CUDA_LDLIBS)\n\n"
        "$(OBJECTS): $(HEADERS)\n",
        out);
  for (int i = 0; i < ncu; i++) {
    int len = (int)strlen(cu[i]) - 3;
    if (!c_source_exists(k, cu[i], (size_t)len)) continue;  /* PETSc's .cu.o rule */
    fprintf(out, "\n# %.*s.o is %.*s.c's object.\n%.*s_cu.o: %s\n\t${PETSC_CUCOMPILE_SINGLE} $<\n", len, cu[i], len,
            cu[i], len, cu[i], cu[i]);
  }
  for (int e = 0; e < 3; e++) free(own[e]);
}

/* ---- the README ---- */

/* text for a Markdown table cell: '|' escaped, line breaks as spaces. */
static void cell(FILE *out, const char *text, int len) {
  for (int i = 0; i < len && text[i]; i++) {
    if (text[i] == '|') fputs("\\|", out);
    else if (text[i] == '\n' || text[i] == '\r') fputc(' ', out);
    else fputc(text[i], out);
  }
}

/* A code fence longer than any run of backquotes in text. */
static int fence_length(const char *text) {
  int longest = 0, run = 0;
  for (const char *p = text; *p; p++) {
    run = *p == '`' ? run + 1 : 0;
    if (run > longest) longest = run;
  }
  return longest < 3 ? 3 : longest + 1;
}

static void fence(FILE *out, int n) {
  for (int i = 0; i < n; i++) fputc('`', out);
  fputc('\n', out);
}

static void write_readme(FILE *out, const Skeleton *k) {
  const Model *m = k->ir->m;
  const Source *src = k->ir->src;
  const char *n = k->name;
  fprintf(out, "# %s\n\n", n);
  fprintf(out,
          "A PETSc application that solves the equations of `%s` (quoted in full below)\n"
          "with PETSc's Newton-Krylov solver (SNES), on a %dD grid of ",
          k->stn_name, m->dim);
  for (int d = 0; d < m->dim; d++) fprintf(out, "%s%lld", d ? " x " : "", m->axes[d].points);
  fprintf(out, " points by default,\nwith %d unknown%s per point (", m->nfields, m->nfields == 1 ? "" : "s");
  for (int f = 0; f < m->nfields; f++) fprintf(out, "%s`%s`", f ? ", " : "", m->fields[f].name);
  fprintf(out,
          "). stencilc %s wrote it\n(`stencilc %s --skeleton DIR`). It needs nothing but PETSc to build, and the C\n"
          "is written to be read and carried on by hand.\n\n",
          STENCILC_VERSION, k->stn_name);

  fputs("## Files\n\n| file | what |\n| --- | --- |\n", out);
  fprintf(out, "| `%s.c` | the program: parameters, initial guess, residual, Jacobian (into an SG-DIA matrix), "
               "the SNES driver |\n", n);
  fprintf(out, "| `%s.h`, `%s.cu` | the residual and Jacobian as CUDA kernels, and the header they share with "
               "`%s.c` |\n", n, n, n);
  fputs("| `" COMPILE_PROGRAM_HEADER "` | the matrix's dof and stencil, for which the runtime's CUDA files compile their "
        "kernels |\n", out);
  fputs("| ", out);
  bool first = true;
  for (const RuntimeFile *rf = runtime_files; rf->name; rf++, first = false) fprintf(out, "%s`%s`", first ? "" : ", ", rf->name);
  fputs(" | the stencilc runtime, hand-written C and CUDA that every generated program links: the SG-DIA matrix "
        "(a PETSc MATSHELL) and the solve report among them |\n", out);
  fprintf(out, "| `makefile` | builds `%s` with PETSc's make conventions |\n\n", n);

  fprintf(out,
          "## Build\n\n"
          "```\n"
          "make                                                    # Debian's petsc-dev (PETSC_DIR=/usr/lib/petsc)\n"
          "make PETSC_DIR=$HOME/petsc PETSC_ARCH=arch-linux-c-opt  # a PETSc of your own\n"
          "make clean\n"
          "```\n\n"
          "The makefile follows PETSc's conventions: it includes\n"
          "`${PETSC_DIR}/lib/petsc/conf/variables` and `rules`, so the compilers, flags and\n"
          "libraries are those PETSc was built with. When that PETSc was configured with\n"
          "CUDA, `make` also compiles the CUDA kernels (`*.cu`) with its nvcc, and the\n"
          "program runs on the GPU. The directory's path may hold spaces: the makefile\n"
          "quotes it where PETSc's own rules do not.\n\n");

  fprintf(out, "## Run\n\n```\n./%s -snes_monitor\n./%s", n, n);
  for (int d = 0; d < m->dim; d++) fprintf(out, " -da_grid_%s 64", axis_names[d]);
  fprintf(out, " -snes_monitor -ksp_converged_reason\nmpiexec -n 4 ./%s", n);
  for (int d = 0; d < m->dim; d++) fprintf(out, " -da_grid_%s 64", axis_names[d]);
  fprintf(out, "   # with an MPI build of PETSc\n./%s -help                    # every option, with its default\n```\n\n", n);
  fprintf(out, "The program ends with a line saying how many Newton iterations the solve took\n"
               "(`%s: solved in N Newton iterations, ...`) or, with exit status 1, why it failed.\n\n", n);

  fputs("| option | what |\n| --- | --- |\n", out);
  /* The options of the parameters are their .stn names, as the program reads them. */
  for (int i = 0; i < m->nparams; i++) {
    const Node *p = m->params[i], *v = p->param.value;
    if (m->param_elem[i] > 0) continue;  /* a list has one row: -blocks <[2, 3]> */
    fprintf(out, "| `-%s <", p->param.name);
    int len;
    const char *text = ast_text(src, v, &len);
    cell(out, text, len);
    fputs(">` | ", out);
    if (p->param.desc) cell(out, p->param.desc, (int)strlen(p->param.desc));
    else fprintf(out, "the parameter `%s`", p->param.name);
    if (p->param.lo) fprintf(out, ", in [%g, %g]", m->param_lo[i], m->param_hi[i]);
    fputs(" |\n", out);
  }
  fputs("| ", out);
  for (int d = 0; d < m->dim; d++)
    fprintf(out, "%s`-da_grid_%s <%lld>`", d ? ", " : "", axis_names[d], m->axes[d].points);
  fputs(" | grid points per direction |\n", out);
  fputs("| `-snes_*`, `-ksp_*`, `-pc_*`, `-log_view`, ... | every PETSc option, as in any PETSc program |\n"
        "| `-stn_mat_type sgdia\\|aij` | the Jacobian's storage: SG-DIA (the default; it serves `-pc_type none`, "
        "`jacobi` and `pbjacobi` itself, and any other preconditioner through an AIJ copy) or AIJ |\n"
        "| `-stn_levels_mat_type sgdia\\|aij` | the coarser grids' matrices under `-pc_type mg`: SG-DIA, the "
        "Jacobian rediscretized on each grid (the GPU's default, where multigrid is the default preconditioner), "
        "or PETSc's AIJ levels (CPUs) |\n"
        "| `-stn_mg_fused true\\|false` | on the GPU, each V-cycle of those levels as fused kernels (the default) or "
        "through PETSc's PCMG |\n"
        "| `-stn_check_jacobian` | compare the Jacobian entries the `.stn` gives with the derived ones at every "
        "grid point |\n"
        "| `-stn_output FILE.vts` | write the solution for ParaView |\n"
        "| `-stn_plot_solution FILE.png` | draw the solution with gnuplot: colour maps (3D: middle slices, 1D: curves) |\n"
        "| `-stn_plot_convergence FILE.png` | draw the residual norm at each Newton and Krylov iteration with gnuplot |\n"
        "| `-stn_device gpu\\|cpu` | with a CUDA PETSc: where the residual, the Jacobian and the solve run (the "
        "GPU when there is one) |\n"
        "| `-stn_vec_kernels stencilc\\|petsc` | on the GPU: whose kernels run the dot products, norms and vector "
        "updates (stencilc's by default) |\n"
        "| `-stn_autotune`, `-stn_tune_cache FILE` | on the GPU: tune the kernels' launch shapes for this problem "
        "size and keep them in the cache (`~/.cache/stencilc/tuning.txt`) |\n"
        "| `-ksp_type stngmres\\|gmres` | on the GPU: GMRES with its Hessenberg matrix on the device (the default) "
        "or PETSc's |\n\n",
        out);

  fprintf(out,
          "## Your own code in the solver: the user hooks\n\n"
          "`%s.c` has a section marked `user hooks`, just before `main`: the place to attach\n"
          "your own monitor (`SNESMonitorSet`), line-search check (`SNESLineSearchSetPostCheck`),\n"
          "convergence test (`SNESSetConvergenceTest`) or nonlinear smoother (`SNESSetNGS`), as\n"
          "PETSc's tutorials do. `UserHooksSetUp` attaches them, called from `main` after\n"
          "`SNESSetFromOptions`. Each comes as a working example that an option turns on:\n\n"
          "```\n"
          "./%s -user_monitor          # each field's residual norm at every Newton iteration\n"
          "./%s -user_postcheck        # each field's largest change at every Newton step\n"
          "./%s -user_field_atol 1e-6  # converged also once every field's residual norm is below it\n"
          "```\n\n"
          "Edit those functions, or write your own beside them and attach them in\n"
          "`UserHooksSetUp`; the smoother's line there is ready to have its comment marks taken off\n"
          "once you have written `UserSmoother`. Without these options the program solves exactly\n"
          "as stencilc's own (`stencilc %s -o %s`) does.\n\n",
          n, n, n, n, k->stn_name, n);

  int f = fence_length(src->text);
  fprintf(out, "## The .stn it came from\n\n`%s`, as stencilc read it:\n\n", k->stn_name);
  fence(out, f);
  fwrite(src->text, 1, (size_t)src->len, out);
  if (src->len > 0 && src->text[src->len - 1] != '\n') fputc('\n', out);
  fence(out, f);
  fprintf(out, "\nTo change the equations, edit the `.stn` and write a new skeleton\n"
               "(`stencilc %s --skeleton NEWDIR`), or change `%s.c` by hand.\n", k->stn_name, n);
}

/* ---- writing the directory ---- */

typedef void (*Writer)(FILE *out, const Skeleton *k);

typedef struct {
  Writer w;
  const Skeleton *k;
} Text;

static bool write_it(FILE *f, const void *ctx) {
  const Text *t = ctx;
  t->w(f, t->k);
  return !ferror(f);
}

static bool write_text(const char *path, Writer w, const Skeleton *k) {
  Text t = {w, k};
  return file_write_whole(path, write_it, &t);
}

int skeleton_write(const Ir *ir, const char *input, const char *dir) {
  struct stat st;
  bool created = false;
  if (stat(dir, &st) == 0) {
    int full = S_ISDIR(st.st_mode) ? dir_has_entries(dir) : 0;
    if (!S_ISDIR(st.st_mode)) {
      fprintf(stderr, "stencilc: error: '%s' exists and is not a directory; --skeleton needs a new or empty directory\n", dir);
      return 1;
    }
    if (full < 0) {
      fprintf(stderr, "stencilc: error: cannot read the directory '%s': %s\n", dir, strerror(errno));
      return 1;
    }
    if (full) {
      fprintf(stderr, "stencilc: error: the directory '%s' is not empty; --skeleton writes only into a new or "
                      "empty directory, so that nothing in it is overwritten\n", dir);
      return 1;
    }
  } else if (errno != ENOENT || mkdir(dir, 0777) != 0) {
    fprintf(stderr, "stencilc: error: cannot create the directory '%s': %s\n", dir, strerror(errno));
    return 1;
  } else
    created = true;

  char *name = compile_base_name(input);
  char *stn_name = compile_stn_name(input);
  Skeleton k = {ir, name, stn_name};
  char *files[COMPILE_MAX_FILES];
  int nfiles = 0;
  bool ok = compile_write_sources(ir, input, name, dir, true, files, &nfiles);
  static const struct { const char *name; Writer write; } own[] = {{"makefile", write_makefile}, {"README.md", write_readme}};
  for (int i = 0; i < COUNT_OF(own) && ok; i++) {
    files[nfiles] = path_join(dir, own[i].name);
    ok = write_text(files[nfiles++], own[i].write, &k);
    if (!ok) fprintf(stderr, "stencilc: error: cannot write '%s': %s\n", files[nfiles - 1], strerror(errno));
  }
  if (!ok) {
    for (int i = 0; i < nfiles; i++) unlink(files[i]);
    if (created) rmdir(dir);
  }
  for (int i = 0; i < nfiles; i++) free(files[i]);
  free(name);
  free(stn_name);
  return ok ? 0 : 1;
}
