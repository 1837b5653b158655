/*
** builtins.c: the tables behind builtins.h. Lookups compare strings: they
** run once per name use in sema, on short tables.
*/
#include <string.h>

#include "builtins.h"

/* Must stay in step with enum BuiltinValue. */
const BuiltinValueInfo builtin_values[BV_COUNT] = {
  [BV_I]   = {"i", 0, true, false, "grid index in x, 0 .. nx-1"},
  [BV_J]   = {"j", 1, true, false, "grid index in y, 0 .. ny-1"},
  [BV_K]   = {"k", 2, true, false, "grid index in z, 0 .. nz-1"},
  [BV_X]   = {"x", 0, true, true, "x coordinate of the point"},
  [BV_Y]   = {"y", 1, true, true, "y coordinate of the point"},
  [BV_Z]   = {"z", 2, true, true, "z coordinate of the point"},
  [BV_HX]  = {"hx", 0, false, true, "grid spacing in x"},
  [BV_HY]  = {"hy", 1, false, true, "grid spacing in y"},
  [BV_HZ]  = {"hz", 2, false, true, "grid spacing in z"},
  [BV_NX]  = {"nx", 0, false, true, "number of points in x"},
  [BV_NY]  = {"ny", 1, false, true, "number of points in y"},
  [BV_NZ]  = {"nz", 2, false, true, "number of points in z"},
  [BV_PI]  = {"pi", -1, false, false, "3.14159..."},
  [BV_INF] = {"inf", -1, false, false, "infinity, for open parameter ranges"},
  [BV_TRUE]  = {"true", -1, false, false, "1, the value of a bool parameter that is on"},
  [BV_FALSE] = {"false", -1, false, false, "0, the value of a bool parameter that is off"},
  [BV_T]     = {"t", -1, false, false, "time"},
};

/* Must stay in step with enum BuiltinFunc. */
const BuiltinFuncInfo builtin_funcs[BF_COUNT] = {
  [BF_ABS] = {"abs", 1, "a", "absolute value"},
  [BF_MIN] = {"min", 2, "a, b", "smaller of two values"},
  [BF_MAX] = {"max", 2, "a, b", "larger of two values"},
  [BF_EXP] = {"exp", 1, "a", "e to the power"},
  [BF_LOG] = {"log", 1, "a", "natural logarithm"},
  [BF_POW] = {"pow", 2, "a, b", "a^b"},
  [BF_SQRT] = {"sqrt", 1, "a", "square root"},
  [BF_SIN] = {"sin", 1, "a", "sine"},
  [BF_COS] = {"cos", 1, "a", "cosine"},
  [BF_TAN] = {"tan", 1, "a", "tangent"},
  [BF_ASIN] = {"asin", 1, "a", "arc sine"},
  [BF_ACOS] = {"acos", 1, "a", "arc cosine"},
  [BF_ATAN] = {"atan", 1, "a", "arc tangent"},
  [BF_ATAN2] = {"atan2", 2, "y, x", "angle of the point (x, y)"},
  [BF_SINH] = {"sinh", 1, "a", "hyperbolic sine"},
  [BF_COSH] = {"cosh", 1, "a", "hyperbolic cosine"},
  [BF_TANH] = {"tanh", 1, "a", "hyperbolic tangent"},
  [BF_FLOOR] = {"floor", 1, "a", "the largest integer <= a"},
  [BF_CEIL] = {"ceil", 1, "a", "the smallest integer >= a"},
  [BF_MOD] = {"mod", 2, "a, b", "a - b * floor(a / b), the remainder with the sign of b"},
};

/* Must stay in step with enum Face. */
const char *const face_names[FACE_COUNT] = {"left", "right", "bottom", "top", "front", "back"};

/* Must stay in step with enum RegionWord. */
const char *const region_words[RW_COUNT] = {"interior", "boundary", "all"};

/* Must stay in step with enum BlockMark. */
const char *const block_marks[BM_COUNT] = {"approximate"};

const char *const axis_names[3] = {"x", "y", "z"};

int builtin_value_lookup(const char *name) {
  for (int i = 0; i < BV_COUNT; i++)
    if (strcmp(builtin_values[i].name, name) == 0) return i;
  return -1;
}

int builtin_func_lookup(const char *name) {
  for (int i = 0; i < BF_COUNT; i++)
    if (strcmp(builtin_funcs[i].name, name) == 0) return i;
  return -1;
}

int face_lookup(const char *name) {
  for (int i = 0; i < FACE_COUNT; i++)
    if (strcmp(face_names[i], name) == 0) return i;
  return -1;
}

int region_word_lookup(const char *name) {
  for (int i = 0; i < RW_COUNT; i++)
    if (strcmp(region_words[i], name) == 0) return i;
  return -1;
}
