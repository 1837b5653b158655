/*
** builtins.h: the names the language gives every program: grid values
** (indices, coordinates, spacing, sizes), constants, math functions, and the
** names of regions. The tables in builtins.c must stay in step with the
** enums here; dsl/LANGUAGE.md documents the same lists.
*/
#ifndef STN_BUILTINS_H
#define STN_BUILTINS_H

#include <stdbool.h>

/* pi, without relying on M_PI (not in C11). */
#define STN_PI 3.14159265358979323846

typedef enum BuiltinValue {
  BV_I, BV_J, BV_K,     /* grid index of the point, 0-based */
  BV_X, BV_Y, BV_Z,     /* coordinate of the point */
  BV_HX, BV_HY, BV_HZ,  /* grid spacing */
  BV_NX, BV_NY, BV_NZ,  /* number of points (after -da_grid_x etc.) */
  BV_PI, BV_INF,
  BV_TRUE, BV_FALSE,    /* 1 and 0: the values of a bool parameter */
  BV_T,                 /* the time, in a time-dependent program (one whose residuals use dt) */
  BV_COUNT
} BuiltinValue;

typedef struct BuiltinValueInfo {
  const char *name;
  int         axis;       /* 0, 1, 2 for per-direction values, -1 otherwise */
  bool        pointwise;  /* differs from point to point (i, x, ...) */
  bool        grid;       /* depends on the grid size chosen at run time */
  const char *doc;
} BuiltinValueInfo;

extern const BuiltinValueInfo builtin_values[BV_COUNT];

typedef enum BuiltinFunc {
  BF_ABS, BF_MIN, BF_MAX, BF_EXP, BF_LOG, BF_POW, BF_SQRT,
  BF_SIN, BF_COS, BF_TAN, BF_ASIN, BF_ACOS, BF_ATAN, BF_ATAN2,
  BF_SINH, BF_COSH, BF_TANH,
  BF_FLOOR, BF_CEIL, BF_MOD,  /* integer parts; mod(a, b) has the sign of b */
  BF_COUNT
} BuiltinFunc;

typedef struct BuiltinFuncInfo {
  const char *name;
  int         arity;
  const char *args;  /* the arguments' names, for messages: "a, b" */
  const char *doc;
} BuiltinFuncInfo;

extern const BuiltinFuncInfo builtin_funcs[BF_COUNT];

/* Faces: axis = face / 2, low side when face % 2 == 0. */
typedef enum Face { FACE_LEFT, FACE_RIGHT, FACE_BOTTOM, FACE_TOP, FACE_FRONT, FACE_BACK, FACE_COUNT } Face;

extern const char *const face_names[FACE_COUNT];

/* Whole-grid regions; a region is one of these or an intersection of faces. */
typedef enum RegionWord { RW_INTERIOR, RW_BOUNDARY, RW_ALL, RW_COUNT } RegionWord;

extern const char *const region_words[RW_COUNT];

/* The words a block may carry after its field (`jacobian u approximate {`); not reserved. */
typedef enum BlockMark { BM_APPROXIMATE, BM_COUNT } BlockMark;

extern const char *const block_marks[BM_COUNT];

extern const char *const axis_names[3];  /* x, y, z */

int builtin_value_lookup(const char *name);  /* -1 when not a built-in value */
int builtin_func_lookup(const char *name);   /* -1 when not a built-in function */
int face_lookup(const char *name);           /* -1 when not a face */
int region_word_lookup(const char *name);    /* -1 when not a region word */

#endif
