/*
** ir_lower.c: from the checked AST to IR roots. Expressions are copied
** into the pool as written (ir_node, no simplification: that is a pass of
** its own), with
**   - lets inlined: each let is lowered once and its node reused wherever
**     the let is named, so it stays one shared node;
**   - calls of `def` functions inlined: the body is lowered with its
**     arguments bound to the argument values;
**   - x, y, z replaced by lo + i*hx (lo + j*hy, lo + k*hz); pi and inf by
**     their values; pow(a, b) by a ^ b;
**   - coefficients inlined: a read k[di,dj] is k's expression lowered at the
**     neighbour, every index i replaced by i + di (by mod(i + di, nx) in a
**     periodic direction, the point the read wraps to), so a coefficient is
**     a value of the grid's own points on every grid it runs on (each
**     multigrid level too), with no field in it: its derivative is 0.
** For each field and class of grid point the rules sema chose are lowered
** into an IrPoint: the residual, the initial guess, and the Jacobian
** entries the user gave (the derive pass adds the rest).
**
** Lowering is where lets and functions meet their values, so it reports two
** errors sema cannot see, at the .stn place of the operation (and the def
** call it was lowered for): a divisor that is 0 at every grid point
** (u / (x - x), 1 / sin(0)), and an operation on constants whose value is
** not finite (inf - inf, log(0), exp(1000)); the simplify pass would
** otherwise carry such a value into the generated program silently.
*/
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ir.h"
#include "util.h"

/* A function argument bound to its value while a body is lowered. */
typedef struct Binding {
  const Node           *arg;  /* the N_NAME in the def's parameter list */
  Ref                   value;
  const struct Binding *next;
} Binding;

/* A def call already lowered: the def and its argument values (hash-consed refs, so equal
   arguments are equal refs) give the same body. */
typedef struct CallMemo {
  const Node *def;
  Ref        *args;
  Ref         value;
} CallMemo;

typedef struct Lower {
  Ir         *ir;
  Diag       *d;
  Ref        *lets;   /* by let index; IR_NONE until first used */
  CallMemo   *calls;  /* open addressing, a power of two of slots; def NULL: empty */
  int         ncalls, capcalls;
  const Node *site;   /* the def call whose body is being lowered, NULL outside one */
  const Node *outer_site; /* while site is not NULL: the call outside any body that led to it */
  /* By node, grown with the pool (track): what lowering knows of its value. */
  signed char *known;    /* 0: not worked out yet, 1: a constant (value), 2: not a constant */
  double      *value;
  signed char *zero;     /* 0: not worked out yet, 1: 0 wherever it is a number, 2: not known to be */
  bool        *reported; /* its value was reported as wrong: what is computed from it is not again */
  int          ntrack;
  bool         too_large; /* the pool passed IR_MAX_NODES: no more bodies are inlined, no more errors */
  int          shift[MAX_DIM]; /* while a coefficient is lowered at a neighbour: its offset */
  bool         shifted;        /* some shift is not 0: lets are lowered afresh (a def's body reads
                                  no index or coordinate, only its arguments, which move) */
} Lower;

static Ref expr(Lower *L, const Node *e, const Binding *env);

/* ---- what lowering knows of values ---- */

static void track(Lower *L) {
  int n = L->ir->nnodes;
  if (n <= L->ntrack) return;
  int cap = L->ntrack ? L->ntrack : 256;
  while (cap < n) cap *= 2;
  L->known = xrealloc(L->known, (size_t)cap * sizeof *L->known);
  L->value = xrealloc(L->value, (size_t)cap * sizeof *L->value);
  L->zero = xrealloc(L->zero, (size_t)cap * sizeof *L->zero);
  L->reported = xrealloc(L->reported, (size_t)cap * sizeof *L->reported);
  for (int i = L->ntrack; i < cap; i++) L->known[i] = L->zero[i] = 0, L->reported[i] = false;
  L->ntrack = cap;
}

/* Whether r is a constant, and its value as the generated C computes it
   (a select on a constant condition is the branch it takes). */
static bool constant(Lower *L, Ref r, double *v) {
  track(L);
  if (!L->known[r]) {
    IrNode n = L->ir->nodes[r];
    double x = 0, y = 0;
    bool k;
    switch (n.op) {
    case IR_CONST: k = true; y = n.num; break;
    case IR_PARAM: case IR_GRID: case IR_SHIFT: case IR_COEF: case IR_DOT: case IR_FIELD: k = false; break;
    case IR_SELECT: k = constant(L, n.a, &x) && constant(L, x != 0 ? n.b : n.c, &y); break;
    default:
      k = constant(L, n.a, &x) && (n.b == IR_NONE || constant(L, n.b, &y));
      if (k) y = ir_fold(n.op, n.fn, x, y, 0);
    }
    L->known[r] = k ? 1 : 2;
    L->value[r] = y;
  }
  *v = L->value[r];
  return L->known[r] == 1;
}

/* Whether r is 0 at every grid point where it is a number: a constant 0,
   a - a, a * 0, sin(0 * u), ... (where an operand is inf or NaN it may be NaN,
   which makes no better divisor). */
static bool zero(Lower *L, Ref r) {
  track(L);
  if (!L->zero[r]) {
    IrNode n = L->ir->nodes[r];
    double v;
    bool z;
    if (constant(L, r, &v)) z = v == 0;
    else switch (n.op) {
    case IR_NEG: case IR_DIV: z = zero(L, n.a); break;
    case IR_ADD: z = zero(L, n.a) && zero(L, n.b); break;
    case IR_SUB: z = n.a == n.b || (zero(L, n.a) && zero(L, n.b)); break;
    case IR_MUL: z = zero(L, n.a) || zero(L, n.b); break;
    case IR_POW: z = zero(L, n.a) && constant(L, n.b, &v) && v > 0; break;
    case IR_SELECT: z = constant(L, n.a, &v) ? zero(L, v != 0 ? n.b : n.c) : zero(L, n.b) && zero(L, n.c); break;
    case IR_CALL:
      switch ((BuiltinFunc)n.fn) {
      case BF_ABS: case BF_SQRT: case BF_SIN: case BF_TAN: case BF_ASIN: case BF_ATAN: case BF_SINH: case BF_TANH:
        z = zero(L, n.a);
        break;
      case BF_MIN: case BF_MAX: z = zero(L, n.a) && zero(L, n.b); break;
      case BF_FLOOR: case BF_CEIL: case BF_MOD: z = zero(L, n.a); break;  /* mod(0, b) is 0 or NaN */
      default: z = false;
      }
      break;
    default: z = false;
    }
    L->zero[r] = z ? 1 : 2;
  }
  return L->zero[r] == 1;
}

/* After an error inside a def's body: the call it was lowered for, whose
   arguments may be what makes it wrong. */
static void site_note(Lower *L) {
  if (L->site) diag_note(L->d, L->site->span, "in this call of '%s'", L->site->call.name);
}

/* e / divisor, lowered to r and b: an error when the divisor is 0 at every point. */
static void check_divisor(Lower *L, const Node *divisor, Ref b, Ref r) {
  if (L->too_large || L->reported[r] || L->reported[b] || !zero(L, b)) return;
  int len;
  const char *text = ast_text(L->d->src, divisor, &len);
  diag_error(L->d, divisor->span, "division by zero: the divisor is always 0");
  site_note(L);
  if (len <= 60)
    diag_hint(L->d, "'%.*s' is 0 at every grid point, once lets, functions and constants are worked out", len, text);
  L->reported[r] = true;
}

/* e, a binary operation or a call of a built-in function lowered to r: an
   error when it is a constant that is not finite and becomes so here (NaN
   from anything, inf from finite operands; a value of inf the user wrote may
   flow on: 1/inf and -inf are fine). */
static void check_value(Lower *L, const Node *e, Ref r) {
  double v, x[2] = {0, 0};
  if (L->too_large || !constant(L, r, &v) || isfinite(v) || L->reported[r]) return;
  IrNode n = L->ir->nodes[r];
  Ref ops[2] = {n.a, n.b};
  bool finite_in = true, pole = false;
  for (int i = 0; i < 2 && ops[i] != IR_NONE; i++) {
    if (L->reported[ops[i]]) {
      L->reported[r] = true;
      return;
    }
    constant(L, ops[i], &x[i]);
    finite_in = finite_in && isfinite(x[i]);
    pole = pole || x[i] == 0;
  }
  if (!isnan(v) && !finite_in) return;
  char text[96];
  if (e->kind == N_CALL) sema_op_text(text, sizeof text, e->call.name, false, n.b == IR_NONE ? 1 : 2, x[0], x[1]);
  else sema_op_text(text, sizeof text, ast_op_text(e->op.op), true, 2, x[0], x[1]);
  sema_report_nonfinite(L->d, e->span, text, v, finite_in, pole);
  site_note(L);
  L->reported[r] = true;
}

/* ---- lowering ---- */

static Ref raw2(Lower *L, IrOp op, Ref a, Ref b) { return ir_node(L->ir, op, 0, a, b, IR_NONE, 0); }

/* The grid index of the point in direction axis: i, or while a coefficient is lowered at a
   neighbour i + di, wrapped in a periodic direction. */
static Ref index_at(Lower *L, int axis) {
  Ir *ir = L->ir;
  Ref index = ir_node(ir, IR_GRID, 0, BV_I + axis, IR_NONE, IR_NONE, 0);
  if (!L->shift[axis]) return index;
  index = raw2(L, IR_ADD, index, ir_const(ir, L->shift[axis]));
  if (!ir->m->axes[axis].periodic) return index;
  Ref n = ir_node(ir, IR_GRID, 0, BV_NX + axis, IR_NONE, IR_NONE, 0);
  return ir_node(ir, IR_CALL, BF_MOD, index, n, IR_NONE, 0);
}

static Ref builtin_value(Lower *L, int bv) {
  Ir *ir = L->ir;
  switch ((BuiltinValue)bv) {
  case BV_I: case BV_J: case BV_K:
    return index_at(L, bv - BV_I);
  case BV_PI:  return ir_const(ir, STN_PI);
  case BV_INF: return ir_const(ir, INFINITY);
  case BV_TRUE: return ir_const(ir, 1);
  case BV_FALSE: return ir_const(ir, 0);
  case BV_X: case BV_Y: case BV_Z: {
    int axis = bv - BV_X;
    Ref index = index_at(L, axis);
    Ref h = ir_node(ir, IR_GRID, 0, BV_HX + axis, IR_NONE, IR_NONE, 0);
    return raw2(L, IR_ADD, ir_const(ir, ir->m->axes[axis].lo), raw2(L, IR_MUL, index, h));
  }
  default:
    return ir_node(ir, IR_GRID, 0, bv, IR_NONE, IR_NONE, 0);
  }
}

static Ref field_read(Lower *L, int field, const int *comp, int ncomp) {
  int off[MAX_DIM] = {0};
  for (int d = 0; d < ncomp && d < MAX_DIM; d++) off[d] = comp[d];
  return ir_node(L->ir, IR_FIELD, 0, field, ir_offset(L->ir, off), IR_NONE, 0);
}

/* Coefficient c read from its file at offset comp from the point lowered at: a leaf. */
static Ref coef_read(Lower *L, const Node *c, const int *comp, int ncomp) {
  int off[MAX_DIM];
  for (int d = 0; d < MAX_DIM; d++) off[d] = L->shift[d] + (d < ncomp ? comp[d] : 0);
  return ir_node(L->ir, IR_COEF, 0, c->index, ir_offset(L->ir, off), IR_NONE, 0);
}

/* Coefficient c read at offset off (NULL: the point itself, or inside a coefficient the point
   it is lowered at). Its expression names no field and no neighbour (sema), so only the
   indices move. */
static Ref coef_value(Lower *L, const Node *c, const int *comp, int ncomp) {
  if (c->coef.source) return coef_read(L, c, comp, ncomp);
  int saved[MAX_DIM];
  bool was = L->shifted;
  memcpy(saved, L->shift, sizeof saved);
  for (int d = 0; d < ncomp && d < MAX_DIM; d++) L->shift[d] = comp[d];
  L->shifted = false;
  for (int d = 0; d < MAX_DIM; d++) L->shifted |= L->shift[d] != 0;
  const Node *site = L->site;  /* a coefficient is no part of the call that reads it */
  L->site = NULL;
  Ref r = expr(L, c->coef.value, NULL);
  L->site = site;
  memcpy(L->shift, saved, sizeof saved);
  L->shifted = was;
  if (L->ir->nodes[r].op > IR_FIELD) ir_name(L->ir, r, c->coef.name);  /* a leaf needs no name */
  return r;
}

static Ref let_value(Lower *L, const Node *let) {
  if (L->shifted) {  /* its value at the neighbour, not the cached one at the point */
    const Node *site = L->site;
    L->site = NULL;
    Ref r = expr(L, let->let.value, NULL);
    L->site = site;
    return r;
  }
  Ref *slot = &L->lets[let->index];
  if (*slot == IR_NONE) {
    const Node *site = L->site;  /* a let is no part of the call that first names it */
    L->site = NULL;
    *slot = expr(L, let->let.value, NULL);
    L->site = site;
    if (!L->ir->hint[*slot]) L->ir->hint[*slot] = let->let.name;
  }
  return *slot;
}

static Ref name(Lower *L, const Node *e, const Binding *env) {
  const Node *decl = e->decl;
  if (!decl) return builtin_value(L, e->builtin);
  switch (decl->kind) {
  case N_FIELD: return field_read(L, decl->index, NULL, 0);
  case N_PARAM: return ir_node(L->ir, IR_PARAM, 0, decl->index, IR_NONE, IR_NONE, 0);
  case N_LET:   return let_value(L, decl);
  case N_COEF:  return coef_value(L, decl, NULL, 0);
  case N_NAME:
    for (const Binding *b = env; b; b = b->next)
      if (b->arg == decl) return b->value;
    ice("argument '%s' used outside its function", e->name.name);
  default:
    ice("name '%s' bound to node kind %d", e->name.name, (int)decl->kind);
  }
}

/* A def call's value is named after the def and, when its first argument reads a field, that
   field: lap(u, ...) is lap_u, so that the generated C names it too. */
static void def_call_name(Lower *L, const Node *def, const Node *first, Ref r) {
  char name[256];
  if (L->ir->nodes[r].op <= IR_FIELD) return;  /* a leaf needs no name */
  const Node *field = first && (first->kind == N_NAME || first->kind == N_OFFSET) && first->decl &&
                      first->decl->kind == N_FIELD ? first->decl : NULL;
  if (field) snprintf(name, sizeof name, "%s_%s", def->def.name, field->field.name);
  else snprintf(name, sizeof name, "%s", def->def.name);
  ir_name(L->ir, r, name);
}

static unsigned call_hash(const Node *def, const Ref *args, int n) {
  unsigned h = (unsigned)((uintptr_t)def >> 4) * 2654435761u;
  for (int i = 0; i < n; i++) h = (h ^ (unsigned)args[i]) * 16777619u;
  return h;
}

/* The slot of (def, args): the one holding it, or the empty one where it goes. */
static CallMemo *call_slot(Lower *L, const Node *def, const Ref *args, int n) {
  unsigned mask = (unsigned)L->capcalls - 1;
  for (unsigned i = call_hash(def, args, n) & mask;; i = (i + 1) & mask) {
    CallMemo *c = &L->calls[i];
    if (!c->def || (c->def == def && memcmp(c->args, args, (size_t)n * sizeof *args) == 0)) return c;
  }
}

static void remember_call(Lower *L, const Node *def, Ref *args, int n, Ref value) {
  if (2 * (L->ncalls + 1) > L->capcalls) {  /* at most half full: grow and rehash */
    CallMemo *old = L->calls;
    int cap = L->capcalls;
    L->capcalls = cap ? 2 * cap : 64;
    L->calls = xcalloc((size_t)L->capcalls, sizeof *L->calls);
    for (int i = 0; i < cap; i++)
      if (old[i].def) *call_slot(L, old[i].def, old[i].args, old[i].def->def.nparams) = old[i];
    free(old);
  }
  *call_slot(L, def, args, n) = (CallMemo){def, args, value};
  L->ncalls++;
}

/* A def's body, lowered once per distinct argument values: a def calling another twice with
   the same argument (f2(a) = f1(a) + f1(a)) costs one lowering per level, not 2^levels. */
static Ref call(Lower *L, const Node *e, const Binding *env) {
  Ref args[2] = {IR_NONE, IR_NONE};
  if (e->decl && e->decl->kind == N_FIELD) {  /* dt(u): the time derivative at the point (sema) */
    int here[MAX_DIM] = {0};
    return ir_node(L->ir, IR_DOT, 0, e->decl->index, ir_offset(L->ir, here), IR_NONE, 0);
  }
  if (e->decl) {  /* a def: bind its arguments, lower its body */
    const Node *def = e->decl;
    int np = def->def.nparams;
    Ref *values = xmalloc(((size_t)np + 1) * sizeof *values);
    int n = 0;
    for (const Node *a = e->call.args; a && n < np; a = a->next) values[n++] = expr(L, a, env);
    if (L->capcalls) {
      const CallMemo *c = call_slot(L, def, values, n);
      if (c->def) {
        free(values);
        return c->value;
      }
    }
    if (L->ir->nnodes > IR_MAX_NODES) {  /* stand-in values from here on: the error stops the build */
      if (!L->too_large) {
        diag_error(L->d, (L->site ? L->outer_site : e)->span,
                   "the program is too large once its functions are inlined (more than %d operations)", IR_MAX_NODES);
        diag_hint(L->d, "each call with other arguments is a new copy of the function's body: a function that calls "
                        "another twice with different arguments doubles the copies at every level");
      }
      L->too_large = true;
      Ref r = n > 0 ? values[0] : ir_const(L->ir, 1);
      free(values);
      return r;
    }
    Binding *b = xcalloc((size_t)np + 1, sizeof *b);
    const Binding *inner = NULL;
    n = 0;
    for (const Node *p = def->def.params; p && n < np; p = p->next, n++) {
      b[n] = (Binding){p, values[n], inner};
      inner = &b[n];
    }
    const Node *site = L->site;
    if (!site) L->outer_site = e;
    L->site = e;
    Ref r = expr(L, def->def.body, inner);
    L->site = site;
    free(b);
    def_call_name(L, def, e->call.args, r);
    remember_call(L, def, values, n, r);
    return r;
  }
  int n = 0;
  for (const Node *a = e->call.args; a && n < 2; a = a->next) args[n++] = expr(L, a, env);
  Ref r = e->builtin == BF_POW ? raw2(L, IR_POW, args[0], args[1])
                               : ir_node(L->ir, IR_CALL, e->builtin, args[0], args[1], IR_NONE, 0);
  if (e->builtin == BF_MOD) check_divisor(L, e->call.args->next, args[1], r);
  check_value(L, e, r);
  return r;
}

static IrOp binary_op(Op op) {
  switch (op) {
  case OP_ADD: return IR_ADD;
  case OP_SUB: return IR_SUB;
  case OP_MUL: return IR_MUL;
  case OP_DIV: return IR_DIV;
  case OP_POW: return IR_POW;
  case OP_EQ:  return IR_EQ;
  case OP_NE:  return IR_NE;
  case OP_LT:  return IR_LT;
  case OP_LE:  return IR_LE;
  case OP_GT:  return IR_GT;
  case OP_GE:  return IR_GE;
  case OP_AND: return IR_AND;
  case OP_OR:  return IR_OR;
  default:     ice("operator %d is not binary", (int)op);
  }
}

static Ref expr(Lower *L, const Node *e, const Binding *env) {
  switch (e->kind) {
  case N_NUM:    return ir_const(L->ir, e->num.value);
  case N_NAME:   return name(L, e, env);
  case N_OFFSET:
    if (e->decl->kind == N_COEF) return coef_value(L, e->decl, e->offset.comp, e->offset.ncomp);
    if (e->decl->kind == N_PARAM)  /* blocks[1]: the slot of that value */
      return ir_node(L->ir, IR_PARAM, 0, e->decl->index + e->offset.comp[0], IR_NONE, IR_NONE, 0);
    return field_read(L, e->decl->index, e->offset.comp, e->offset.ncomp);
  case N_CALL:   return call(L, e, env);
  case N_UNARY: {
    Ref a = expr(L, e->op.a, env);
    if (e->op.op == OP_PLUS) return a;
    return ir_node(L->ir, e->op.op == OP_NEG ? IR_NEG : IR_NOT, 0, a, IR_NONE, IR_NONE, 0);
  }
  case N_BINARY: {
    Ref a = expr(L, e->op.a, env), b = expr(L, e->op.b, env);
    Ref r = raw2(L, binary_op(e->op.op), a, b);
    track(L);
    if (e->op.op == OP_DIV) check_divisor(L, e->op.b, b, r);
    check_value(L, e, r);
    return r;
  }
  case N_IF: {
    Ref c = expr(L, e->op.a, env), a = expr(L, e->op.b, env), b = expr(L, e->op.c, env);
    return ir_node(L->ir, IR_SELECT, 0, c, a, b, 0);
  }
  default:
    ice("lowering node kind %d as an expression", (int)e->kind);
  }
}

/* a op b for the parts of a residual split by explicit(...): IR_NONE is an absent part. */
static Ref part(Lower *L, IrOp op, Ref a, Ref b) {
  if (b == IR_NONE) return a;
  if (a == IR_NONE) return op == IR_SUB ? ir_node(L->ir, IR_NEG, 0, b, IR_NONE, IR_NONE, 0) : b;
  return raw2(L, op, a, b);
}

/* Whether the outermost sum of e has an explicit(...) term (sema allows it nowhere else). */
static bool has_explicit(const Node *e) {
  if (e->kind == N_BINARY && (e->op.op == OP_ADD || e->op.op == OP_SUB))
    return has_explicit(e->op.a) || has_explicit(e->op.b);
  if (e->kind == N_UNARY && (e->op.op == OP_NEG || e->op.op == OP_PLUS)) return has_explicit(e->op.a);
  return e->kind == N_CALL && strcmp(e->call.name, "explicit") == 0;
}

/* A residual's outermost sum split into its implicit terms (*implicit) and its explicit ones
   (*explicit), each with its sign, IR_NONE where there are none (4.20). */
static void split(Lower *L, const Node *e, Ref *implicit, Ref *explicit) {
  Ref ia, ea, ib, eb;
  if (e->kind == N_BINARY && (e->op.op == OP_ADD || e->op.op == OP_SUB)) {
    IrOp op = e->op.op == OP_ADD ? IR_ADD : IR_SUB;
    split(L, e->op.a, &ia, &ea);
    split(L, e->op.b, &ib, &eb);
    *implicit = part(L, op, ia, ib);
    *explicit = part(L, op, ea, eb);
  } else if (e->kind == N_UNARY && (e->op.op == OP_NEG || e->op.op == OP_PLUS)) {
    split(L, e->op.a, &ia, &ea);
    *implicit = e->op.op == OP_PLUS ? ia : part(L, IR_SUB, IR_NONE, ia);
    *explicit = e->op.op == OP_PLUS ? ea : part(L, IR_SUB, IR_NONE, ea);
  } else if (e->kind == N_CALL && strcmp(e->call.name, "explicit") == 0) {
    *implicit = IR_NONE;
    *explicit = expr(L, e->call.args, NULL);
  } else {
    *implicit = expr(L, e, NULL);
    *explicit = IR_NONE;
  }
}

/* The residual of rule at p: the whole of it, or in an IMEX program the implicit part, with
   p->rhs = G, minus the explicit part (0 where it has none). */
static void residual(Lower *L, IrPoint *p, const Node *rule) {
  p->rhs = IR_NONE;
  if (!L->ir->imex) {
    p->residual = expr(L, rule->rule.body, NULL);
    return;
  }
  if (!has_explicit(rule->rule.body)) {
    p->residual = expr(L, rule->rule.body, NULL);
    p->rhs = ir_const(L->ir, 0);
    return;
  }
  Ref implicit, explicit;
  split(L, rule->rule.body, &implicit, &explicit);
  p->residual = implicit == IR_NONE ? ir_const(L->ir, 0) : implicit;  /* sema refuses it; a pass may not */
  p->rhs = ir_node(L->ir, IR_NEG, 0, explicit, IR_NONE, IR_NONE, 0);
}

/* The entries the user wrote in the Jacobian rule that applies at p. */
static void given_entries(Lower *L, IrPoint *p, bool approximate) {
  int n = ast_count(p->jacobian_rule->rule.body);
  p->entries = xcalloc((size_t)n + 1, sizeof *p->entries);
  for (const Node *en = p->jacobian_rule->rule.body; en; en = en->next) {
    const Node *col = en->entry.column;
    Ref read = col->kind == N_OFFSET ? field_read(L, col->decl->index, col->offset.comp, col->offset.ncomp)
                                     : field_read(L, col->decl->index, NULL, 0);
    IrEntry *x = &p->entries[p->nentries++];
    *x = (IrEntry){.field = L->ir->nodes[read].a, .offset = L->ir->nodes[read].b, .derived = IR_NONE,
                   .given = expr(L, en->entry.value, NULL), .dot = IR_NONE, .node = en, .approximate = approximate};
  }
}

/* After rule was lowered: an error at it when it took the pool past IR_MAX_NODES (without a
   def call that did, which reported at the call). */
static void check_size(Lower *L, const Node *rule) {
  if (L->too_large || L->ir->nnodes <= IR_MAX_NODES) return;
  diag_error(L->d, rule->span, "this rule makes the program too large (more than %d operations)", IR_MAX_NODES);
  L->too_large = true;
}

void ir_lower(Ir *ir, Diag *d) {
  const Model *m = ir->m;
  Lower L = {.ir = ir, .d = d, .lets = xmalloc(((size_t)m->nlets + 1) * sizeof(Ref))};
  for (int i = 0; i < m->nlets; i++) L.lets[i] = IR_NONE;
  ir->imex = m->imex;
  for (int i = 0; i < m->nfields * m->nclasses; i++) ir->points[i].rhs = IR_NONE;
  for (int i = 0; i < m->nparams; i++) ir->param_default[i] = expr(&L, sema_param_value(m, i), NULL);
  for (int f = 0; f < m->nfields; f++) {
    const Field *fd = &m->fields[f];
    for (int c = 0; c < m->nclasses; c++) {
      if (!sema_class_exists(m, c)) continue;
      IrPoint *p = ir_point(ir, f, c);
      p->residual_rule = fd->residual_rule[c];
      p->jacobian_rule = fd->jacobian ? fd->jacobian_rule[c] : NULL;
      p->initial_rule = fd->initial ? fd->initial_rule[c] : NULL;
      if (!p->residual_rule) ice("field '%s' has no residual rule at class %d", fd->name, c);
      residual(&L, p, p->residual_rule);
      check_size(&L, p->residual_rule);
      p->initial = p->initial_rule ? expr(&L, p->initial_rule->rule.body, NULL) : IR_NONE;
      if (p->initial_rule) check_size(&L, p->initial_rule);
      if (p->jacobian_rule) given_entries(&L, p, fd->approximate);
      ir->approximate |= fd->approximate && p->jacobian_rule;
    }
  }
  free(L.lets);
  for (int i = 0; i < L.capcalls; i++) free(L.calls[i].args);
  free(L.calls);
  free(L.known);
  free(L.value);
  free(L.zero);
  free(L.reported);
}
