/*
** runtime_files.h: the runtime sources (the .c and .h files in runtime/)
** that the generated programs are built with. They are embedded in stencilc
** when it is built (scripts/embed-runtime.sh writes the table), so stencilc
** finds them without an install path.
*/
#ifndef STN_RUNTIME_FILES_H
#define STN_RUNTIME_FILES_H

typedef struct RuntimeFile {
  const char *name;  /* basename: "sgdia.c" */
  const char *text;  /* the file's bytes, NUL-terminated */
} RuntimeFile;

/* Every runtime file, in the order the Makefile lists them, then {0, 0}. */
extern const RuntimeFile runtime_files[];

/* The runtime file called name, or NULL. */
const RuntimeFile *runtime_file(const char *name);

#endif
