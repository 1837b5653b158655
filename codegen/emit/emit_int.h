/*
** emit_int.h: what the C and CUDA emitters share (emit_c.c, emit_cuda.c):
** the program being written and the switch over kinds of grid points.
*/
#ifndef STN_EMIT_INT_H
#define STN_EMIT_INT_H

#include "emit_c.h"

typedef struct Program {
  const Ir          *ir;
  const Model       *m;
  const EmitOptions *o;
  FILE              *out;
  CEmit              E;
  Ref               *named;  /* scratch for emit_c_temps */
  bool               any_given;  /* some Jacobian entry was written by the user */
  bool               product;    /* Jacobian entries as terms of J w (Jw[r] += W(s, c) * entry), not stored */
  bool               exact;      /* the entries of approximate blocks as derived (the operator), not given */
} Program;

typedef void (*CaseBody)(Program *P, int cls, const char *indent);
typedef void (*CaseRoots)(const Program *P, int cls, Ref *roots, int *n);

/* The grid indices, "i", "j", "k". */
extern const char *const emit_index_names[MAX_DIM];
void emit_list(FILE *out, int dim, const char *fmt, const char *const names[]);
/* Writes user text (a description) inside a C comment: a "*" "/" would end it and a "/" "*" draw
   a warning, so they become "* /" and "/ *". */
void emit_comment_text(FILE *out, const char *s);
int  emit_interior_class(const Model *m);
void emit_residual_roots(const Program *P, int cls, Ref *roots, int *n);
void emit_jacobian_roots(const Program *P, int cls, Ref *roots, int *n);
void emit_residual_body(Program *P, int cls, const char *indent);
void emit_jacobian_body(Program *P, int cls, const char *indent);
/* IMEX (Ir.imex): the points' rhs, G; its body writes g. */
void emit_rhs_roots(const Program *P, int cls, Ref *roots, int *n);
void emit_rhs_body(Program *P, int cls, const char *indent);
/* The classes of points grouped by the rules they share: group[c] is the first class of c's
   group (-1 when c does not exist); firsts[] the groups' first classes, the interior's first.
   Returns the number of groups. */
int  emit_class_groups(const Program *P, BlockWhat what, int *group, int *firsts);
/* Room for the roots of one class. */
int  emit_max_roots(const Program *P);
/* The tests on the indices that pick each point's rules, one branch per group of classes
   sharing them, the interior last (emit_branches.c). */
void emit_point_branches(Program *P, BlockWhat what, CaseRoots roots_of, CaseBody body, const char *indent);
/* Declares the grid spacing (hx = (hi - lo) / (info->mx - 1)) the expressions read, at function level. */
void emit_function_spacing(Program *P, CaseRoots roots_of);
/* Declares the values the same at every point, at function level. */
int  emit_uniform_temps(Program *P, CaseRoots roots_of);
/* Sets up P for ir (C names of fields and parameters); emit_program_free undoes it. */
void emit_program_init(Program *P, const Ir *ir, const EmitOptions *o, FILE *out);
void emit_program_free(Program *P);
/* The user hooks of a --skeleton's C, before main (emit_hooks.c). */
void emit_c_hooks(Program *P);

#endif
