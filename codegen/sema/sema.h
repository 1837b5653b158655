/*
** sema.h: the semantic pass and the model it leaves for the passes after
** it. sema_check walks the AST once for names and expressions, then works
** out, for every kind of grid point, which rule of each block applies
** there; it reports every error it finds, not just the first.
**
** Kinds of grid point ("classes"): in each direction a point lies on the
** low face, strictly inside, or on the high face (periodic directions have
** only "inside"). A class is one such choice per direction, numbered
** class = sum over d of pos[d] * 3^d with pos 0 = low, 1 = inside, 2 = high.
** The interior is the class with every pos = 1.
*/
#ifndef STN_SEMA_H
#define STN_SEMA_H

#include <stdbool.h>

#include "arena.h"
#include "ast.h"
#include "builtins.h"
#include "diag.h"
#include "intern.h"

enum { MAX_DIM = 3, MAX_CLASSES = 27, MAX_FIELDS = 128, MAX_WIDTH = 4, MAX_EXPR_DEPTH = 1000 };
/* The nesting depth of an expression with its lets and function calls inlined, as the IR's
   recursive passes meet it: a chain of lets nests as deeply as one expression written out. */
enum { MAX_INLINED_DEPTH = 2000 };

typedef struct Axis {
  const Node *decl;
  const char *name;
  long long   points;  /* default size; -da_grid_x overrides it at run time */
  double      lo, hi;  /* domain extent */
  bool        periodic;
} Axis;

typedef struct Field {
  const Node *decl;
  const char *name;
  const char *desc;
  const Node *residual, *jacobian, *initial;  /* blocks, NULL when absent */
  bool        duplicate_block;  /* a second block of a kind was given (an error) */
  bool        approximate;      /* jacobian u approximate { ... }: its entries need not be the
                                   derivative; they fill the preconditioning matrix only */
  /* The rule (N_RULE) that applies at each class, NULL where none does. */
  const Node *residual_rule[MAX_CLASSES];
  const Node *jacobian_rule[MAX_CLASSES];
  const Node *initial_rule[MAX_CLASSES];
  /* The faces (a bit per Face) this field is mirrored across (mirror declarations), and the
     N_REGION of the declaration that names each. */
  unsigned    mirror;
  const Node *mirror_at[FACE_COUNT];
} Field;

/* What a parameter holds. All are doubles in expressions and in the generated
   AppCtx; int, bool and choice change how the option is read (PetscOptionsInt,
   PetscOptionsBool, PetscOptionsEList). A choice holds the index of the chosen name,
   and each name is a global let of that value (its type's N_CHOICES lists them). */
typedef enum ParamType { PT_REAL, PT_INT, PT_BOOL, PT_CHOICE } ParamType;

enum { MAX_LIST = 64 };  /* the most values a list parameter holds */

typedef struct Model {
  const Node  *program;
  int          dim;
  Axis         axes[MAX_DIM];
  Shape        shape;       /* the stencil as declared */
  int          width;
  int          used_width;  /* the stencil the equations read */
  bool         used_box;    /* some read has two or more nonzero components */
  Field       *fields;
  int          nfields;
  const Node **params;      /* N_PARAM in source order */
  int          nparams;
  double      *param_lo, *param_hi;  /* each parameter's range; -inf, inf when open; [0, 1] for bool */
  ParamType   *param_type;
  /* A list parameter, int[2], takes one slot of these tables per value, in order: params[i]
     is its N_PARAM in each, param_elem[i] the value's position (0 for one number) and
     param_len[i] the list's length (0 for one number). N_PARAM.index is the first slot. */
  int         *param_elem, *param_len;
  const Node **lets;        /* every N_LET, global and in blocks, in source order */
  int          nlets;
  const Node **defs;        /* N_DEF in source order */
  int          ndefs;
  const Node **coefs;       /* N_COEF in source order: values on the grid that are not unknowns */
  int          ncoefs;
  int          face_rank[FACE_COUNT];  /* precedence; 0 is highest, FACE_COUNT when unranked */
  /* A residual reads a time derivative, dt(u): the program is F(t, u, u_t) = 0 for PETSc's TS,
     and 't' is the time. first_dt is the first such call in the file. */
  bool         time_dependent;
  const Node  *first_dt;
  /* Some residual marks a term explicit(e) (4.20): the program's TS form is F(t, u, u_t) =
     G(t, u), G the negated sum of those terms (TS's RHSFunction), F the rest. */
  bool         imex;
  int          nclasses;               /* 3^dim */
} Model;

/* The default of parameter slot i: its expression, or a list's value at that slot. */
const Node *sema_param_value(const Model *m, int i);
/* How the .stn reads parameter slot i: "lambda", or "blocks[1]" for a list's value. */
void sema_param_name(const Model *m, int i, char *buf, int size);

/* Checks program; fills m when it is valid. Errors and warnings go to d. */
void sema_check(Model *m, const Node *program, Diag *d, Arena *a, Intern *names);

/* An operation on constants written with its operands' values, for messages:
   "inf - inf" (infix: name is an operator), "log(0)", "atan2(0, 0)". */
void sema_op_text(char *buf, int size, const char *name, bool infix, int nargs, double a, double b);
/* Reports at `at` that the operation `text` (sema_op_text) gives v, which is
   not finite. operands_finite: no operand was inf (an overflow, a pole, an
   argument outside a function's domain); pole: an operand was 0 (log(0)). */
void sema_report_nonfinite(Diag *d, Loc at, const char *text, double v, bool operands_finite, bool pole);

/* The position (0 low, 1 inside, 2 high) of class c in direction axis. */
int  sema_class_pos(int c, int axis);
/* "interior", "left", "left & bottom", ...: where the points of class c are. */
void sema_class_name(const Model *m, int c, char *buf, int size);
/* Whether class c exists on this grid (periodic directions have no faces). */
bool sema_class_exists(const Model *m, int c);
/* What a read of field at offset off, in a rule that applies at class c, reads once the
   field's mirrors are applied (sema_mirror.c): out is off with every component that crosses a
   face the field is mirrored across negated (u[-1,0] at the left face is u[1,0]). Returns the
   faces whose mirror it used, 0 when out is off. */
unsigned sema_mirror_offset(const Model *m, int field, int c, const int *off, int *out);

#endif
