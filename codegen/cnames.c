/*
** cnames.c: C names for the names of a .stn program. A field, parameter or
** let may be called anything the language allows: `int`, `main`, `exp`,
** `PetscScalar`, `threadIdx`. In the generated C and CUDA a name keeps its
** spelling unless it could clash with
**   - a keyword of C, C++ (nvcc compiles CUDA as C++) or CUDA;
**   - a name of the C library or <math.h> (many are macros);
**   - a PETSc or MPI name (by prefix: Petsc, PETSC, Mat, Vec, ...);
**   - a name the generated code itself uses as a struct member;
**   - a reserved identifier (leading underscore, or a double underscore);
** in which case it gets a trailing underscore: `int` becomes `int_`. Adding
** underscores continues until the name is unused, so a program with both
** `int` and `int_` still compiles.
*/
#include <stdlib.h>
#include <string.h>

#include "cnames.h"
#include "util.h"

/* Sorted, for bsearch. Keep it sorted (tests/cli.sh compiles a program
   whose names are taken from this list). */
static const char *const reserved[] = {
  "EOF", "FILE", "I", "INFINITY", "NAN", "NULL",
  "_Alignas", "_Alignof", "_Atomic", "_Bool", "_Complex", "_Generic", "_Imaginary", "_Noreturn",
  "_Static_assert", "_Thread_local",
  "abort", "abs", "acos", "acosh", "alignas", "alignof", "and", "and_eq", "asin", "asinh", "asm", "assert",
  "atan", "atan2", "atanh", "atexit", "atof", "atoi", "atol", "auto", "bitand", "bitor", "blockDim", "blockIdx",
  "bool", "break", "calloc", "case", "catch", "cbrt", "ceil", "char", "char16_t", "char32_t", "check_jacobian",
  "class", "clock", "compl", "complex", "const", "const_cast", "constexpr", "continue", "copysign", "cos",
  "cosh", "da", "decltype", "default", "delete", "dim3", "do", "double", "dynamic_cast", "else", "enum",
  "erf", "erfc", "errno", "exit", "exp", "exp2", "expm1", "explicit", "export", "extern", "fabs", "false",
  "fdim", "float", "floor", "fma", "fmax", "fmin", "fmod", "for", "fprintf", "free", "frexp", "friend",
  "getenv", "goto", "gridDim", "hx", "hy", "hypot", "hz", "if", "imaginary", "inline", "int", "isfinite",
  "isinf", "isnan", "ldexp", "lgamma", "log", "log10", "log1p", "log2", "long", "main", "malloc", "memcpy",
  "memset", "mutable", "namespace", "new", "noexcept", "not", "not_eq", "nullptr", "nx", "ny", "nz",
  "operator", "or", "or_eq", "pow", "printf", "private", "protected", "public", "puts", "qsort", "rand",
  "realloc", "register", "reinterpret_cast", "remainder", "restrict", "return", "round", "short", "signed",
  "sin", "sinh", "size_t", "sizeof", "sqrt", "static", "static_assert", "static_cast", "stderr", "stdin",
  "stdout", "strcmp", "strlen", "struct", "switch", "tan", "tanh", "template", "tgamma", "this",
  "thread_local", "threadIdx", "throw", "true", "trunc", "try", "typedef", "typeid", "typename", "union",
  "unsigned", "using", "virtual", "void", "volatile", "warpSize", "wchar_t", "while", "xor", "xor_eq",
};

/* Prefixes of PETSc, MPI, CUDA and our runtime's names. */
static const char *const reserved_prefixes[] = {
  "AO", "CHKERR", "CUDA", "DM", "IS", "KSP", "MPI", "Mat", "PC", "PETSC", "PETSc", "Petsc", "SNES", "Stn",
  "STN", "SGDIA", "TS", "Tao", "Vec", "cublas", "cuda", "cusparse", "mpi", "ompi",
};

static int cmp(const void *key, const void *elem) { return strcmp(key, *(const char *const *)elem); }

bool cname_reserved(const char *name) {
  if (name[0] == '_' || strstr(name, "__")) return true;
  if (bsearch(name, reserved, COUNT_OF(reserved), sizeof reserved[0], cmp)) return true;
  for (int i = 0; i < COUNT_OF(reserved_prefixes); i++)
    if (strncmp(name, reserved_prefixes[i], strlen(reserved_prefixes[i])) == 0) return true;
  return false;
}

const char *cname_check_table(void) {
  for (int i = 1; i < COUNT_OF(reserved); i++)
    if (strcmp(reserved[i - 1], reserved[i]) >= 0) return reserved[i];
  return NULL;
}

static bool taken(char *const *names, int n, const char *name) {
  for (int i = 0; i < n; i++)
    if (names[i] && strcmp(names[i], name) == 0) return true;
  return false;
}

void cname_assign(const char *const *user, int n, char **out) {
  for (int i = 0; i < n; i++) out[i] = NULL;
  for (int i = 0; i < n; i++) {
    size_t len = strlen(user[i]);
    char *c = malloc(len + 64);
    if (!c) ice("out of memory");
    memcpy(c, user[i], len + 1);
    /* Clashes with a reserved name, or with another user name (given
       as written or already renamed), add underscores. */
    while (cname_reserved(c) || taken(out, i, c) || (strcmp(c, user[i]) != 0 && taken((char *const *)user, n, c))) {
      if (len + 2 >= len + 64) ice("name '%s' needs too many underscores", user[i]);
      c[len++] = '_';
      c[len] = '\0';
    }
    out[i] = c;
  }
}
