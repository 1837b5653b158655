/*
** compile.h: from the IR to an executable (compile.c), or to a PETSc
** application project to build by hand (skeleton.c).
*/
#ifndef STN_COMPILE_H
#define STN_COMPILE_H

#include <stdbool.h>

#include "emit_c.h"
#include "ir.h"

typedef struct CompileOptions {
  const char *input;     /* the .stn path, as given */
  const char *output;    /* -o PROG */
  const char *emit_dir;  /* --emit-dir DIR, or NULL: a temporary directory */
} CompileOptions;

/* Returns the exit status for stencilc: 0, 1 (a user-facing problem: no
   PETSc, an unwritable path) or 70 (the generated code did not compile). */
int compile_program(const Ir *ir, const CompileOptions *co);

/* stencilc FILE.stn --skeleton DIR (skeleton.c): writes a PETSc application
   project into DIR (created when missing; refused when not empty): the
   generated sources, the runtime's, a makefile and a README.md. Needs no
   PETSc. Returns 0, or 1 after a message, with nothing left in DIR. */
int skeleton_write(const Ir *ir, const char *input, const char *dir);

/* ---- shared by both (compile.c) ---- */

/* Files written for one program, and room for as many objects again (each CUDA source's). */
enum { COMPILE_MAX_FILES = 256 };

/* The generated header with the matrix's dof and stencil that the runtime's CUDA files include
   (runtime/sgdia_instances.h; emit_program_header writes it). */
#define COMPILE_PROGRAM_HEADER "stn_program.h"

/* NAME, the base of the generated sources NAME.c, NAME.h, NAME.cu for the
   .stn at input (and the skeleton's program): the file name without .stn,
   every character outside [A-Za-z0-9_] replaced by '_', and "stn_" in front
   when the name is taken: by a runtime source or COMPILE_PROGRAM_HEADER, by the patterns PETSc's
   `make clean` deletes, or by a target of PETSc's make rules. malloc'd. */
char *compile_base_name(const char *input);
/* The .stn's file name as the generated text quotes it ("cavity.stn"): the
   last component of input, characters outside [A-Za-z0-9_.-] as '_'. */
char *compile_stn_name(const char *input);

/* The generated sources of a program, in the order they are written: NAME.c, NAME.h, NAME.cu and
   COMPILE_PROGRAM_HEADER, with the names their text quotes. compile_write_sources writes each
   into its file; the pipeline fuzzer (tests/fuzz/fuzz_pipeline.c) into /dev/null. */
enum { COMPILE_NGENERATED = 4 };
typedef struct Generated {
  char       *stn_name;                  /* compile_stn_name(input) */
  char       *base;                      /* compile_base_name(input) */
  char       *name[COMPILE_NGENERATED];  /* the file names, in order */
  EmitOptions eo;                        /* points into the above */
} Generated;
/* Names the sources of the .stn at input, for the program program. */
void compile_generated_init(Generated *g, const char *input, const char *program);
/* Writes the text of source i (0 <= i < COMPILE_NGENERATED) to out. */
void compile_generated_emit(const Generated *g, const Ir *ir, int i, FILE *out);
void compile_generated_free(Generated *g);

/* Writes into dir the generated sources (NAME.c, NAME.h, NAME.cu, stn_program.h; program
   names the program in their text; hooks: NAME.c with a skeleton's user hooks, EmitOptions.hooks)
   and the runtime sources. Appends each path written (malloc'd) to files, which has room for
   COMPILE_MAX_FILES, counting them in *nfiles; on failure the one that failed is among them,
   so the caller can remove or keep them all. Returns false after a message
   on stderr when a file cannot be written. */
bool compile_write_sources(const Ir *ir, const char *input, const char *program, const char *dir, bool hooks,
                           char **files, int *nfiles);

#endif
