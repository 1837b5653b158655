/*
** sema_int.h: what the files of the semantic pass share: the pass's
** context, name scopes, and the sets of field reads that expressions make.
** Not for use outside codegen/sema*.c.
*/
#ifndef STN_SEMA_INT_H
#define STN_SEMA_INT_H

#include "sema.h"

/* One read of a field (or, when coef is set, of a coefficient) at an offset, with the place it
   is written. A coefficient read adds no Jacobian column and goes through no mirror; it must stay
   inside the grid as a field read must. */
typedef struct Read {
  bool coef;      /* field is a coefficient index (Model.coefs) */
  int  field;
  int  off[MAX_DIM];
  Loc  at;
  bool reported;  /* already reported as reaching outside the grid */
} Read;

typedef struct ReadSet {
  Read *v;
  int   n, cap;
} ReadSet;

/* A scope maps interned names to their declarations. */
typedef struct ScopeSlot {
  const char *name;
  const Node *decl;
} ScopeSlot;

typedef struct Scope {
  struct Scope *parent;
  ScopeSlot    *slots;
  int           cap, count;
} Scope;

typedef struct LetInfo {
  ReadSet reads;      /* the field reads of its value, through other lets too */
  bool    fields;     /* reads a field */
  bool    pointwise;  /* differs from point to point */
  bool    dt;         /* takes a time derivative, dt(u) (through other lets too) */
  bool    used;
  int     depth;      /* its value's nesting depth, lets and calls inlined (inlined_depth) */
} LetInfo;

typedef struct Sema {
  Model   *m;
  Diag    *d;
  Arena   *a;
  Intern  *names;
  Scope    global;
  Scope   *scope;     /* innermost scope */
  Scope    funcs;     /* def functions (a name space of their own) */
  Scope    later;     /* every top-level name, to say "defined below" */
  Scope   *residual_lets; /* by field: its residual block's lets, kept for its jacobian block */
  int      jacobian_field; /* the field whose jacobian block is being checked, -1 outside one */
  ReadSet *rule_reads;  /* by N_RULE index: the reads of its value(s) */
  int      nrules;
  LetInfo *lets;      /* by N_LET index */
  bool    *param_used;
  bool    *def_used;
  bool    *coef_used;
  int     *def_depth; /* by N_DEF index: its body's depth, lets and calls inlined */
  int      depth;     /* the inlined depth of the expression expr() checked last; 1 when refused */
  bool     have_grid; /* a valid grid and stencil were declared: offsets can be checked */
  bool     too_many_fields; /* more than MAX_FIELDS: the rest is not analysed (every block would fail) */
  unsigned *mirror_used;    /* by field: the faces whose mirror some read inside the grid goes through */
  bool     mirror_error;    /* a mirror declaration had an error: face reads are not checked */
  const Node *residual_body; /* the residual rule being checked, whose outermost terms may be
                                explicit(...) (4.20); NULL elsewhere */
  bool     in_explicit;     /* checking the argument of explicit(...) */
} Sema;

/* Where an expression stands decides what it may use. */
typedef enum Ctx {
  CX_BOUND,    /* grid extents, parameter ranges: numbers only */
  CX_PARAM,    /* parameter defaults: numbers, earlier parameters, grid sizes */
  CX_DEF,      /* function bodies: arguments, parameters, grid sizes, functions */
  CX_POINT,    /* residual, Jacobian and let values: everything */
  CX_INITIAL,  /* initial guess: everything but fields */
  CX_COEF,     /* a coefficient's value: coordinates, parameters, lets and coefficients without fields */
} Ctx;

typedef struct ExprInfo {
  bool fields;
  bool pointwise;
  bool dt;  /* takes a time derivative, dt(u) */
} ExprInfo;

/* sema_expr.c */
ExprInfo sema_expr(Sema *s, Node *e, Ctx cx, ReadSet *reads);
bool     sema_fold(const Node *e, double *value);
/* sema_fold, reporting an operation whose value is not finite (inf - inf, 1e308 * 10) at its
   place; *reported (when not NULL) says whether it did. True when e is a constant and no
   such operation was found. */
bool     sema_fold_checked(Sema *s, const Node *e, double *value, bool *reported);
bool     sema_check_offset(Sema *s, const Node *e);
void     reads_add(Sema *s, ReadSet *rs, int field, const int *off, Loc at);
void     reads_add_coef(Sema *s, ReadSet *rs, int coef, const int *off, Loc at);
void     reads_merge(Sema *s, ReadSet *into, const ReadSet *from);
const char *sema_kind_name(const Node *decl);
/* Whether e is explicit(...) or dt(...), the calls the language gives meaning (4.20). */
bool     sema_is_call(const Node *e, const char *name);
/* Whether e is an operand of body's outermost chain of + and - (unary ones too), or body itself. */
bool     sema_top_term(const Node *body, const Node *e);

/* sema.c */
void        scope_init(Scope *sc, Scope *parent);
void        scope_free(Scope *sc);
const Node *scope_find(const Scope *sc, const char *name);  /* through parents */
const Node *scope_find_here(const Scope *sc, const char *name);  /* in sc only */
void        scope_put(Scope *sc, const char *name, const Node *decl);
void        sema_suggest(Sema *s, const char *name, bool functions);
/* The residual lets a jacobian block being checked sees, NULL when none (4.16). */
Scope      *sema_shared_lets(const Sema *s);
int         sema_distance(const char *a, const char *b);

/* sema_mirror.c */
void        sema_mirrors(Sema *s);        /* reads the mirror declarations into the fields */
void        sema_mirror_unused(Sema *s);  /* warns of mirrors no read goes through */

/* sema_regions.c */
void        sema_regions(Sema *s);
const char *sema_face_list(const Model *m);
const char *sema_near_face(const Model *m, const char *name, bool words);

#endif
