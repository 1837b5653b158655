/*
** toolchain.h: building the generated program. Finds PETSc and the C
** compiler that goes with it (tc_find), runs that compiler on the generated
** and runtime sources (tc_build), and looks after the private work
** directory those sources are written to. No shell is involved anywhere:
** children are started with posix_spawnp from argv arrays, so paths with
** spaces, quotes, ';' or '$' in them are passed through verbatim.
*/
#ifndef STN_TOOLCHAIN_H
#define STN_TOOLCHAIN_H

#include <stdbool.h>
#include <stddef.h>

typedef struct Toolchain {
  char  *cc;                     /* C compiler (argv[0]); STENCILC_CC overrides it, CC does not */
  char **cflags;  int ncflags;   /* include dirs, defines: each one argv word */
  char **libs;    int nlibs;     /* -L/-l/-Wl words */
  char  *petsc_desc;             /* for messages: "PETSc 3.18.5 (pkg-config)", "PETSc at DIR (petscvariables)" */
  /* When PETSc was configured with CUDA (PETSC_HAVE_CUDA in its petscconf.h):
     its CUDA compiler and flags (CUDAC, CUDAC_FLAGS, CUDA_INCLUDE from
     petscvariables); CUDA_LIB is added to libs. */
  bool   cuda;
  char  *nvcc;
  char **cuflags; int ncuflags;
} Toolchain;

/* Finds PETSc. With PETSC_DIR set: $PETSC_DIR/$PETSC_ARCH, then $PETSC_DIR
   (prefix installs); in each, lib/pkgconfig/PETSc.pc through pkg-config
   (PKG_CONFIG_PATH set in the child's environment only), else
   lib/petsc/conf/petscvariables (PCC, PETSC_CC_INCLUDES,
   PETSC_WITH_EXTERNAL_LIB). Without PETSC_DIR: `pkg-config PETSc` (Debian's
   petsc-dev), the compiler from its `ccompiler` variable (mpicc). Returns 0,
   or -1 with a message for the user in err saying what was tried and what to
   install or set. On -1 t holds nothing to free. */
int   tc_find(Toolchain *t, char *err, size_t errsize);

/* Compiles and links sources[0, nsources) into output:
     CC -O2 -I include_dir CFLAGS... SOURCES... -o output LIBS... -lm
   include_dir may be NULL. stdin is /dev/null; stdout and stderr both go to
   log_path, which starts with the command line (shell-quoted, to paste into
   a terminal). Returns the compiler's exit status (0 ok; 128+N when killed by
   signal N, with the signal named in err; for other non-zero statuses err
   points at the log), or -1 when the compiler could not be started or the
   log not created (message in err). */
int   tc_build(const Toolchain *t, const char *const *sources, int nsources, const char *include_dir,
               const char *output, const char *log_path, char *err, size_t errsize);

void  tc_free(Toolchain *t);
/* Starts compiling one CUDA source into object with t's CUDA compiler:
     NVCC CUFLAGS -I include_dir -c source -o object
   output to log_path; *pid: the compiler's process, for tc_finish_cuda. The runtime's kernel
   files take up to a minute each, so a build starts them all before it waits for one. Returns
   0, or -1 (message in err) when the compiler could not be started. */
int   tc_start_cuda(const Toolchain *t, const char *source, const char *include_dir, const char *object,
                    const char *log_path, int *pid, char *err, size_t errsize);
/* Waits for the compiler started as pid; returns as tc_build. */
int   tc_finish_cuda(const Toolchain *t, int pid, const char *log_path, char *err, size_t errsize);

/* Creates a fresh directory, mode 0700, named stencilc-XXXXXX under $TMPDIR
   (or /tmp); returns its malloc'd path, or NULL with errno set. */
char *tc_make_temp_dir(void);

/* Removes the entries directly inside dir (not subdirectories' contents),
   then dir itself. Returns 0, or -1 with errno set when dir remains. */
int   tc_remove_dir(const char *dir);

/* Moves from to to: rename(2), or, when they are on different file systems,
   a copy to a temporary name beside to (mode 0755 & ~umask), renamed over
   to, and from unlinked, so that to is never seen half-written. Returns 0,
   or -1 with a message in err. */
int   tc_move_file(const char *from, const char *to, char *err, size_t errsize);

#endif
