/*
** cnames.c: C names for the names of a .stn program. A field, parameter or
** let may be called anything the language allows: `int`, `main`, `exp`,
** `PetscScalar`, `threadIdx`. In the generated C and CUDA a name keeps its
** spelling unless it could clash with
**   - a keyword of C, C++ (nvcc compiles CUDA as C++) or CUDA;
**   - a name of the C library or <math.h> (many are macros);
**   - a PETSc or MPI name (by prefix: Petsc, PETSC, Mat, Vec, ...);
**   - a name the generated code itself defines (Field, DOF, AppCtx, ...)
**     or uses as a struct member;
**   - a macro: every name without a lowercase letter (INT_MAX, M_PI), and
**     the lowercase ones compilers and headers define (linux, errno, ...);
**   - a reserved identifier (leading underscore, or a double underscore);
** in which case it gets a trailing underscore: `int` becomes `int_`, `Vec`
** `Vec_`. A trailing underscore is the escape, so a name ending in one is
** never taken for a PETSc or macro name. When that is taken too, a number
** follows (`int_2`), so a program with both `int` and `int_` compiles.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cnames.h"
#include "util.h"

/* Sorted, for bsearch. Keep it sorted (tests/cli.sh compiles a program
   whose names are taken from this list). */
static const char *const reserved[] = {
  "AppCtx", "DOF", "EOF", "FILE", "Field", "FormFunctionCUDA", "FormFunctionLocal", "FormFunctionLocalCUDA",
  "FormIFunctionLocal", "FormIJacobianLocal", "FormInitialGuess", "FormJacobianCUDA", "FormJacobianLocal", "FormJacobianLocalCUDA", "I", "INFINITY", "IX",
  "J", "NAN", "NSTENCIL", "NULL", "SetParameters",
  "StnLocalInfo", "_Alignas", "_Alignof", "_Atomic", "_Bool", "_Complex", "_Generic", "_Imaginary",
  "_Noreturn", "_Static_assert", "_Thread_local", "abort", "abs", "acos", "acosh", "alignas", "alignof",
  "alloca", "and", "and_eq", "asin", "asinh", "asm", "assert", "atan", "atan2", "atanh", "atexit",
  "atof", "atoi", "atol", "auto", "bitand", "bitor", "blockDim", "blockIdx", "bool", "bool_value", "break", "calloc", "case",
  "catch", "cbrt", "ceil", "char", "char16_t", "char32_t", "check_jacobian", "class", "clock", "compl",
  "complex", "const", "const_cast", "constexpr", "continue", "copysign", "cos", "cosh", "da", "decltype",
  "default", "delete", "dim3", "do", "double", "dynamic_cast", "else", "enum", "erf", "erfc", "errno", "exit",
  "exp", "exp2", "explicit", "expm1", "export", "extern", "fabs", "false", "fdim", "float", "floor", "fma",
  "fmax", "fmin", "fmod", "for", "fpclassify", "fprintf", "free", "frexp", "friend", "getenv", "goto",
  "gridDim", "gxm", "gxs", "gym", "gys", "gzm", "gzs", "h_power", "help", "hx", "hy", "hypot", "hz", "i386", "if",
  "imaginary", "inline", "int", "int_value", "isfinite", "isgreater", "isinf", "isless", "isnan", "isnormal",
  "ldexp", "lgamma", "linux", "log", "log10", "log1p", "log2", "long", "longjmp", "main", "major",
  "makedev", "malloc", "memcpy", "memset", "minor", "mutable", "namespace", "new", "noexcept", "not", "not_eq",
  "nullptr", "nx", "ny", "nz", "offsetof", "operator", "or", "or_eq", "pow", "printf", "private", "protected",
  "public", "puts", "qsort", "rand", "realloc", "reason", "register", "reinterpret_cast", "remainder",
  "restrict", "return", "round", "setjmp", "shift", "short", "signbit", "signed", "sin", "sinh", "size_t", "sizeof",
  "sqrt", "static", "static_assert", "static_cast", "stderr", "stdin", "stdout", "stencil_offsets",
  "strcmp", "strlen", "struct", "switch", "t", "tan", "tanh", "template", "tgamma", "this", "threadIdx",
  "thread_local", "throw", "true", "trunc", "try", "ts", "typedef", "typeid", "typename", "union", "unix",
  "unsigned", "using", "va_arg", "va_end", "va_start", "virtual", "void", "volatile", "warpSize", "wchar_t",
  "while", "xdot", "xm", "xor", "xor_eq", "xs", "ym", "ys", "zm", "zs",
};

/* Prefixes of PETSc, MPI, CUDA and our runtime's names. */
static const char *const reserved_prefixes[] = {
  "AO", "CHKERR", "CUDA", "DM", "IS", "KSP", "MPI", "Mat", "PC", "PETSC", "PETSc", "Petsc", "SNES", "Stn",
  "STN", "SGDIA", "TS", "Tao", "Vec", "cublas", "cuda", "cusparse", "mpi", "ompi",
};

static int cmp(const void *key, const void *elem) { return strcmp(key, *(const char *const *)elem); }

/* Names with no lowercase letter are the macro convention (INT_MAX,
   M_PI, OMPI_MAJOR_VERSION): all of them are avoided. */
static bool all_caps(const char *name) {
  for (const char *c = name; *c; c++)
    if (*c >= 'a' && *c <= 'z') return false;
  return true;
}

bool cname_reserved(const char *name) {
  size_t n = strlen(name);
  if (n == 0 || name[0] == '_' || strstr(name, "__")) return true;
  if (bsearch(name, reserved, COUNT_OF(reserved), sizeof reserved[0], cmp)) return true;
  /* A trailing underscore is our escape: `Vec_` and `M_PI_` are no one's names. */
  if (name[n - 1] == '_') return false;
  if (all_caps(name)) return true;
  for (int i = 0; i < COUNT_OF(reserved_prefixes); i++)
    if (strncmp(name, reserved_prefixes[i], strlen(reserved_prefixes[i])) == 0) return true;
  return false;
}

const char *cname_check_table(void) {
  for (int i = 1; i < COUNT_OF(reserved); i++)
    if (strcmp(reserved[i - 1], reserved[i]) >= 0) return reserved[i];
  return NULL;
}

/* A set of names (not owned): open addressing, a power of two of slots, at most half full. */
typedef struct NameSet {
  const char **slot;
  unsigned     mask;
} NameSet;

static unsigned name_hash(const char *s) {
  unsigned h = 2166136261u;  /* FNV-1a */
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 16777619u;
  return h;
}

static void set_init(NameSet *t, int n) {
  unsigned cap = 16;
  while (cap < 2u * (unsigned)n + 2) cap *= 2;
  t->slot = xcalloc(cap, sizeof *t->slot);
  t->mask = cap - 1;
}

static const char **set_find(const NameSet *t, const char *name) {
  unsigned i = name_hash(name) & t->mask;
  while (t->slot[i] && strcmp(t->slot[i], name) != 0) i = (i + 1) & t->mask;
  return &t->slot[i];
}

static bool taken(const NameSet *t, const char *name) { return *set_find(t, name) != NULL; }

/* The first of name, name_, name_2, name_3, ... that is neither reserved
   nor taken. A leading underscore becomes `u_` and a run of underscores
   one, so that the result can be free at all. */
static char *safe_name(const char *name, const NameSet *out, const NameSet *user) {
  size_t len = strlen(name);
  char *base = xmalloc(len + 3), *c = xmalloc(len + 32);
  size_t b = 0;
  if (name[0] == '_') base[b++] = 'u';
  for (size_t i = 0; i < len; i++)
    if (!(name[i] == '_' && b > 0 && base[b - 1] == '_')) base[b++] = name[i];
  base[b] = '\0';
  for (int k = 0; k < 100000; k++) {
    if (k == 0) snprintf(c, len + 32, "%s", base);
    else if (k == 1) snprintf(c, len + 32, base[b - 1] == '_' ? "%s2" : "%s_", base);
    else snprintf(c, len + 32, base[b - 1] == '_' ? "%s%d" : "%s_%d", base, k);
    bool other_user = strcmp(c, name) != 0 && taken(user, c);
    if (!cname_reserved(c) && !taken(out, c) && !other_user) {
      free(base);
      return c;
    }
  }
  ice("no C name found for '%s'", name);
}

/* The names given so far and the user's names are hash sets: a program with thousands of
   parameters gets its names in linear time. The sets hold at most n names each. */
void cname_assign(const char *const *user, int n, char **out) {
  NameSet given, users;
  set_init(&given, n);
  set_init(&users, n);
  for (int i = 0; i < n; i++) {
    const char **u = set_find(&users, user[i]);
    if (!*u) *u = user[i];
  }
  for (int i = 0; i < n; i++) {
    out[i] = safe_name(user[i], &given, &users);
    *set_find(&given, out[i]) = out[i];  /* new: safe_name found it free */
  }
  free(given.slot);
  free(users.slot);
}
