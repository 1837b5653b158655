/*
** ir.h: the intermediate representation between the checked AST and the
** emitters. Every expression of the program becomes a node of one pool of
** hash-consed expression DAGs: a node is an operation and the indices (Ref)
** of its operands, which always come earlier in the pool, so the pool is in
** topological order and equal subexpressions are the same Ref (CSE for
** free). Lets, functions and coefficients given by an expression are
** inlined while lowering; x, y, z become lo + i*hx. A coefficient read from
** a file stays a leaf, IR_COEF, read from its array like a field but never
** differentiated.
**
** What the program computes is then a table of roots, one IrPoint per
** (field, class of grid point): the residual, the Jacobian entries (derived
** by symbolic differentiation, plus the values the user wrote) and the
** initial guess. Refs are small integers, so --dump-ir is identical from
** run to run (QBE's Ref).
**
** The passes that fill the table are listed in order in ir_build
** (ir_passes.c).
*/
#ifndef STN_IR_H
#define STN_IR_H

#include <stdbool.h>
#include <stdio.h>

#include "sema.h"

typedef int Ref;  /* index into Ir.nodes */
enum { IR_NONE = -1 };
/* The most nodes lowering and differentiation build before they stop with an error: defs that
   call defs with different arguments (f(a * 2) + f(a * 3)) grow the pool exponentially with the
   program's size; every program in examples/ needs fewer than 300. */
enum { IR_MAX_NODES = 25000 };

typedef enum IrOp {
  IR_CONST,                                   /* num */
  IR_PARAM,                                   /* a: parameter index */
  IR_GRID,                                    /* a: BuiltinValue among i j k hx hy hz nx ny nz t */
  IR_SHIFT,                                   /* the IJacobian's shift a in a dF/d(u_t) + dF/du */
  IR_COEF,                                    /* a: coefficient index (Model.coefs) of one read from a file,
                                                 b: offset index (Ir.offsets); constant, derivative 0 */
  IR_DOT,                                     /* a: field index, b: offset index (the point itself):
                                                 its time derivative dt(u) */
  IR_FIELD,                                   /* a: field index, b: offset index (Ir.offsets) */
  IR_NEG, IR_NOT,                             /* a */
  IR_ADD, IR_SUB, IR_MUL, IR_DIV, IR_POW,     /* a, b */
  IR_EQ, IR_NE, IR_LT, IR_LE, IR_GT, IR_GE,   /* a, b; the value is 0 or 1 */
  IR_AND, IR_OR,                              /* a, b; nonzero is true; 0 or 1 */
  IR_SELECT,                                  /* a nonzero ? b : c */
  IR_CALL,                                    /* fn: BuiltinFunc other than pow; a (b for min, max, atan2, mod) */
  IR_OP_COUNT
} IrOp;

typedef struct IrNode {
  IrOp   op;
  int    fn;
  Ref    a, b, c;
  double num;
  bool   uniform;  /* the same at every grid point: no field, index or coordinate */
  /* A bound on |value| at every grid point, for every parameter value the
     program accepts and any grid size; INFINITY when none is known (the
     value may be inf or NaN: a field, a division, log, ...). A node with a
     finite bound is provably finite. */
  double bound;
} IrNode;

/* One Jacobian entry at a (field, class): d(residual)/d(field[offset]). */
typedef struct IrEntry {
  int         field;    /* the column's field */
  int         offset;   /* index into Ir.offsets */
  Ref         derived;  /* from differentiating the residual */
  Ref         given;    /* the value the user wrote, or IR_NONE */
  Ref         dot;      /* d(residual)/d(dt(field)) on the point's own column, or IR_NONE: the
                           shift pass adds shift * dot to derived and given (the IJacobian) */
  const Node *node;     /* the user's N_ENTRY, or NULL */
  bool        checked;  /* given was shown equal to derived at compile time */
  bool        approximate;  /* given comes from an approximate block: it fills the preconditioning
                               matrix, and derived is the operator's entry (never an error) */
} IrEntry;

/* What one field does at one class of grid points. */
typedef struct IrPoint {
  const Node *residual_rule, *jacobian_rule, *initial_rule;  /* N_RULE, NULL when none */
  Ref         residual;  /* with its explicit(...) terms left out: TS's IFunction */
  Ref         rhs;       /* IMEX (Ir.imex): minus the sum of its explicit terms, TS's RHSFunction G
                            (0 where it has none); IR_NONE otherwise */
  Ref         initial;   /* IR_NONE: no initial block, the guess is 0 */
  IrEntry    *entries;   /* sorted by (offset, field) */
  int         nentries;
} IrPoint;

typedef struct Ir {
  const Model  *m;
  const Source *src;
  IrNode       *nodes;
  int           nnodes, cap;
  int          *table;   /* hash table of node index + 1; 0 is empty */
  int           tcap;
  const char  **hint;    /* by node: the let or def call it came from (readable names), or NULL */
  char        **names;   /* the hints made here (def calls), freed with the pool */
  int           nnames;
  int         (*offsets)[MAX_DIM];  /* distinct neighbour offsets, in order of first use */
  int           noffsets, offcap;
  IrPoint      *points;  /* [field * nclasses + class] */
  Ref          *param_default;  /* by parameter index */
  /* Stencil analysis: the Jacobian's block diagonals, as indices into
     offsets, sorted by (dz, dy, dx), i.e. by column in natural order. */
  int          *stencil;
  int           nstencil;
  int           diagonal;  /* position of the offset (0,0,0) in stencil */
  bool          approximate;  /* some field's jacobian block is approximate: the program's operator
                                 (derived entries) and preconditioning matrix (given ones) differ */
  bool          imex;      /* some residual has explicit(...) terms: the points' rhs are G */
  bool          rhs_only;  /* imex, and every residual's implicit part is its field's own dt(u):
                              u_t = G, registered as TS's RHSFunction alone (explicit methods run) */
} Ir;

/* ir.c: the node pool. ir_node hash-conses without simplifying; the
   ir_* constructors below fold constants and drop identities. */
void ir_init(Ir *ir, const Model *m, const Source *src);
void ir_free(Ir *ir);
Ref  ir_node(Ir *ir, IrOp op, int fn, Ref a, Ref b, Ref c, double num);
/* Names r, unless it has a name already: a copy of name, kept by the pool. */
void ir_name(Ir *ir, Ref r, const char *name);
Ref  ir_const(Ir *ir, double v);
Ref  ir_unary(Ir *ir, IrOp op, Ref a);
Ref  ir_binary(Ir *ir, IrOp op, Ref a, Ref b);
Ref  ir_select(Ir *ir, Ref cond, Ref a, Ref b);
Ref  ir_call(Ir *ir, int fn, Ref a, Ref b);
int  ir_offset(Ir *ir, const int off[MAX_DIM]);
bool ir_is_const(const Ir *ir, Ref r, double v);
/* r is finite wherever the program evaluates it (IrNode.bound). */
bool ir_finite(const Ir *ir, Ref r);
/* The value of op on constants, as the generated C computes it. */
double ir_fold(IrOp op, int fn, double a, double b, double c);
/* mod(a, b) of the language: a - b * floor(a / b), computed as the generated code does. */
double ir_mod(double a, double b);
/* The point's entry for (field, offset), or NULL. */
IrEntry *ir_entry(IrPoint *p, int field, int offset);
IrPoint *ir_point(const Ir *ir, int field, int cls);

/* ir_lower.c: lowering from the checked AST. Reports to d what only the
   lowered program shows: a divisor that is 0 at every point, an operation on
   constants whose value is not finite. */
void ir_lower(Ir *ir, Diag *d);

/* ir_derive.c: symbolic differentiation of root with respect to the
   field read IR_FIELD(field, offset); ir_derive_dot with respect to the time
   derivative IR_DOT(field, offset). Each holds the other kind of leaf fixed. */
Ref  ir_derive(Ir *ir, Ref root, int field, int offset);
Ref  ir_derive_dot(Ir *ir, Ref root, int field, int offset);

/* ir_mirror.c: the mirror declarations applied at every class: reads and entry columns
   beyond a mirrored face become the reads they mirror, entries on one column added. */
void ir_mirror(Ir *ir);

/* ir_eval.c: evaluating the pool at one sample point (compile-time checks). */
typedef struct IrSample {
  double  grid[BV_COUNT];  /* i j k hx ... nx ... */
  double *params;          /* by parameter index */
  unsigned long long seed; /* field values are drawn from it */
  const double *fixed;     /* by parameter index: a value set in place of the default, or NaN for
                              the default; NULL: every parameter at its default */
} IrSample;
/* values[r] for every node r, field reads drawn at random in [0.5, 1.5]. */
void ir_eval_all(const Ir *ir, const IrSample *s, double *values);
/* s->params from s->fixed and the parameters' defaults, in order (a default may use earlier
   parameters, fixed or not, and the grid values in s), then ir_eval_all. Linear in the pool
   however many parameters there are. */
void ir_eval_params(const Ir *ir, IrSample *s, double *values);

/* ir_scaling.c: the power p of the grid spacing h that the derived diagonal of field's interior
   equation scales as (h^p; dim - 2 for equations multiplied by the cell size); false when it is
   not one (zero, not finite, a mix of powers). */
bool ir_h_power(const Ir *ir, int field, int *power);

/* ir_passes.c: the pipeline. */
typedef enum IrPass { PASS_LOWER, PASS_DERIVE, PASS_SIMPLIFY, PASS_CHECK, PASS_MIRROR, PASS_STENCIL, PASS_SHIFT, PASS_COUNT } IrPass;
extern const char *const ir_pass_names[PASS_COUNT];
/* Runs every pass in order, verifying after each; dumps the IR to dump
   after pass dump_after (PASS_COUNT: never). False when a user error
   (a wrong Jacobian entry) was reported to d. */
bool ir_build(Ir *ir, Diag *d, IrPass dump_after, FILE *dump);
/* Checks the pool and the tables; a failure is a compiler bug (ice). */
void ir_verify(const Ir *ir, const char *after);
void ir_dump(const Ir *ir, FILE *out, const char *title);

/* Text of an offset, "[-1,0]" (empty for the point itself when brief). */
void ir_offset_text(const Ir *ir, int offset, char *buf, int size, bool brief);

#endif
