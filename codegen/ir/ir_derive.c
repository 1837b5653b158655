/*
** ir_derive.c: symbolic differentiation. ir_derive(root, field, offset)
** builds d(root)/d(field[offset]) by the chain rule, node by node, with
** the simplifying constructors, so a term that does not depend on the
** variable contributes nothing. Each node of the root's DAG is
** differentiated once (memo), so shared subexpressions stay shared.
**
** Functions without a derivative everywhere are taken piecewise, choosing
** the side that a forward difference sees (PETSc's finite-difference
** Jacobians perturb upwards), so -snes_test_jacobian agrees at the kinks:
**   abs(a)'    = a >= 0 ? a' : -a'
**   min(a, b)' = a <= b ? a' : b'     max(a, b)' = a >= b ? a' : b'
**   (if c then a else b)' = if c then a' else b'   (c is not differentiated)
** Comparisons, and, or, not are piecewise constant: derivative 0.
** So are floor and ceil; mod(a, b) = a - b floor(a/b) is differentiated
** with floor(a/b) held constant, d/da = 1 and d/db = -floor(a/b). The
** jumps themselves (where a/b, or floor's argument, crosses an integer)
** have no derivative and the Jacobian ignores them: right for a coefficient
** such as mod(floor(x * nb), 2), which does not depend on the unknowns.
**
** A derivative can be infinite or 0/0 where the function is finite: sqrt
** at 0, a^e with 0 < e < 1 at 0, asin and acos at +-1, atan2 at the origin
** (such a node is "steep" here). Alone, that is right: |grad u| =
** sqrt(ux^2 + uy^2) has no derivative where the gradient vanishes, and the
** generated program names the NaN entry and its grid point. But in a
** product a * b with b steep, the chain rule's a * b' is 0 * inf or 0 * NaN
** where a = 0, while the product has the derivative a' b there, b being
** continuous: (a b)(x + h) / h = (a(x + h) / h) b(x + h) -> a'(x) b(x).
** So products and quotients drop a * b' where a == 0 (product, quotient),
** and a^b drops a^b log(a) b' where a^b == 0 (power). The chain rule of
** f(a) with f'(a) = 0 and a steep gets no such select: whether f(a) has a
** derivative there depends on how steep a is (sqrt(g)^2 has one at g = 0,
** (g^(1/3))^2 has not), so the NaN stays and the program names it.
*/
#include <stdlib.h>

#include "ir.h"
#include "util.h"

typedef struct Derive {
  Ir   *ir;
  IrOp  var;    /* IR_FIELD or IR_DOT: the kind of leaf differentiated by */
  int   field, offset;
  Ref  *memo;   /* by node: its derivative, or IR_NONE when not yet built */
  bool *steep;  /* by node, once its memo is built: the derivative may be inf or NaN where the node is finite */
  int   nmemo;
} Derive;

static Ref d(Derive *D, Ref r);
static bool steep(Derive *D, Ref r) { return d(D, r), D->steep[r]; }

static Ref num(Ir *ir, double v) { return ir_const(ir, v); }
static Ref add(Ir *ir, Ref a, Ref b) { return ir_binary(ir, IR_ADD, a, b); }
static Ref sub(Ir *ir, Ref a, Ref b) { return ir_binary(ir, IR_SUB, a, b); }
static Ref neg(Ir *ir, Ref a) { return ir_unary(ir, IR_NEG, a); }

/* A derivative that is the constant 0 stands for a term without the
   variable, which calculus leaves out of a product or a quotient whatever
   the other factor: the derivative of u * v with respect to u has no term
   for v's derivative even where u is large. ir_binary, which must compute
   what the C computes, keeps 0 * a unless a is provably finite; here the
   term is dropped. (The Jacobian is the derivative where the residual is
   finite.) */
static Ref mul(Ir *ir, Ref a, Ref b) {
  return ir_is_const(ir, a, 0) || ir_is_const(ir, b, 0) ? num(ir, 0) : ir_binary(ir, IR_MUL, a, b);
}
static Ref dvd(Ir *ir, Ref a, Ref b) { return ir_is_const(ir, a, 0) ? a : ir_binary(ir, IR_DIV, a, b); }
static Ref is_zero(Ir *ir, Ref a) { return ir_binary(ir, IR_EQ, a, num(ir, 0)); }
/* t, or 0 where a == 0. */
static Ref unless_zero(Ir *ir, Ref a, Ref t) { return ir_select(ir, is_zero(ir, a), num(ir, 0), t); }

/* (a b)' = a' b + a b', with a b' taken as 0 where a == 0 when b is steep (see the top). That is
   safe even where a' is inf or NaN as well: a' b then is too, and the program names it. Where
   both are steep, a == 0 keeps a' b alone and b == 0 a b' alone, so one of them always stays
   (sqrt(u) * sqrt(u) at u = 0 gives inf * 0, named, not a wrong 0). Without a steep factor the
   plain rule: the examples' derivatives have no selects they do not need. */
static Ref product(Derive *D, Ref a, Ref b) {
  Ir *ir = D->ir;
  Ref tb = mul(ir, a, d(D, b));
  Ref ta = mul(ir, d(D, a), b);
  bool sa = D->steep[a], sb = D->steep[b];
  if (sa && sb) return ir_select(ir, is_zero(ir, a), ta, ir_select(ir, is_zero(ir, b), tb, add(ir, ta, tb)));
  if (sb) tb = unless_zero(ir, a, tb);
  if (sa) ta = unless_zero(ir, b, ta);
  return add(ir, ta, tb);
}

/* (a/b)' = a'/b - a b' / b^2, the second term 0 where a == 0 when b is steep: where a/b is finite
   and a == 0, b != 0 and the derivative is a'/b. */
static Ref quotient(Derive *D, Ref a, Ref b) {
  Ir *ir = D->ir;
  Ref da = d(D, a), db = d(D, b);
  Ref bb = mul(ir, b, b);
  Ref t = dvd(ir, mul(ir, a, db), bb);
  if (D->steep[b]) t = unless_zero(ir, a, t);
  return sub(ir, dvd(ir, da, b), t);
}

/* The exponent e may lie strictly between 0 and 1, where a^e is 0 at a = 0 but e a^(e-1) is
   infinite (for e < 0 a^e is infinite there too, and for e >= 1 e a^(e-1) is finite). A
   parameter is known by its range. */
static bool steep_exponent(const Ir *ir, Ref e) {
  const IrNode *n = &ir->nodes[e];
  if (n->op == IR_CONST) return n->num > 0 && n->num < 1;
  if (n->op == IR_PARAM) return !(ir->m->param_lo[n->a] >= 1) && !(ir->m->param_hi[n->a] <= 0);
  return true;
}

/* d(f(a)) for the one-argument functions: f'(a) * a'. */
static Ref call1(Derive *D, Ref r, int fn, Ref a, Ref da) {
  Ir *ir = D->ir;
  Ref one = num(ir, 1);
  switch ((BuiltinFunc)fn) {
  case BF_ABS:  return ir_select(ir, ir_binary(ir, IR_GE, a, num(ir, 0)), da, neg(ir, da));
  case BF_EXP:  return mul(ir, r, da);
  case BF_LOG:  return dvd(ir, da, a);
  case BF_SQRT: return dvd(ir, da, mul(ir, num(ir, 2), r));
  case BF_SIN:  return mul(ir, ir_call(ir, BF_COS, a, IR_NONE), da);
  case BF_COS:  return neg(ir, mul(ir, ir_call(ir, BF_SIN, a, IR_NONE), da));
  case BF_TAN:  return mul(ir, add(ir, one, mul(ir, r, r)), da);
  case BF_ASIN: return dvd(ir, da, ir_call(ir, BF_SQRT, sub(ir, one, mul(ir, a, a)), IR_NONE));
  case BF_ACOS: return neg(ir, dvd(ir, da, ir_call(ir, BF_SQRT, sub(ir, one, mul(ir, a, a)), IR_NONE)));
  case BF_ATAN: return dvd(ir, da, add(ir, one, mul(ir, a, a)));
  case BF_SINH: return mul(ir, ir_call(ir, BF_COSH, a, IR_NONE), da);
  case BF_COSH: return mul(ir, ir_call(ir, BF_SINH, a, IR_NONE), da);
  case BF_TANH: return mul(ir, sub(ir, one, mul(ir, r, r)), da);
  case BF_FLOOR: case BF_CEIL: return num(ir, 0);
  default:      ice("call1: function %d takes two arguments", fn);
  }
}

/* Steep: sqrt, asin, acos and atan2 themselves (at 0, +-1, the origin), or an argument. */
static Ref call(Derive *D, Ref r) {
  Ir *ir = D->ir;
  IrNode n = ir->nodes[r];
  Ref da = d(D, n.a);
  D->steep[r] = D->steep[n.a] || n.fn == BF_SQRT || n.fn == BF_ASIN || n.fn == BF_ACOS;
  if (builtin_funcs[n.fn].arity == 2) {
    Ref db = d(D, n.b);
    D->steep[r] = D->steep[n.a] || D->steep[n.b] || n.fn == BF_ATAN2;
    if (ir_is_const(ir, da, 0) && ir_is_const(ir, db, 0)) return da;
    if (n.fn == BF_MIN) return ir_select(ir, ir_binary(ir, IR_LE, n.a, n.b), da, db);
    if (n.fn == BF_MAX) return ir_select(ir, ir_binary(ir, IR_GE, n.a, n.b), da, db);
    if (n.fn == BF_MOD) return sub(ir, da, mul(ir, ir_call(ir, BF_FLOOR, dvd(ir, n.a, n.b), IR_NONE), db));
    /* atan2(y, x)' = (x y' - y x') / (x^2 + y^2) */
    Ref y = n.a, x = n.b;
    return dvd(ir, sub(ir, mul(ir, x, da), mul(ir, y, db)), add(ir, mul(ir, x, x), mul(ir, y, y)));
  }
  if (ir_is_const(ir, da, 0)) return da;
  return call1(D, r, n.fn, n.a, da);
}

/* (a^b)' = b a^(b-1) a' + a^b log(a) b', the second term only where b depends on the variable,
   and 0 where a^b == 0: there a == 0 < b, and 0^b stays 0 as b moves (log(0) is -inf). Not
   a^b (b' log a + b a' / a), which is NaN at a = 0, where the derivative is 0 for b > 1. Steep
   where b may lie in (0, 1) or depends on the variable. */
static Ref power(Derive *D, Ref r) {
  Ir *ir = D->ir;
  IrNode n = ir->nodes[r];
  Ref da = d(D, n.a), db = d(D, n.b), t = da;  /* da when both are 0 */
  bool exponent = !ir_is_const(ir, db, 0);
  D->steep[r] = D->steep[n.a] || exponent || (!ir_is_const(ir, da, 0) && steep_exponent(ir, n.b));
  if (!ir_is_const(ir, da, 0)) t = mul(ir, mul(ir, n.b, ir_binary(ir, IR_POW, n.a, sub(ir, n.b, num(ir, 1)))), da);
  if (exponent) {
    Ref tb = unless_zero(ir, r, mul(ir, mul(ir, r, ir_call(ir, BF_LOG, n.a, IR_NONE)), db));
    t = ir_is_const(ir, da, 0) ? tb : add(ir, t, tb);
  }
  return t;
}

static Ref build(Derive *D, Ref r) {
  Ir *ir = D->ir;
  IrNode n = ir->nodes[r];
  switch (n.op) {
  case IR_CONST: case IR_PARAM: case IR_GRID: case IR_SHIFT: case IR_COEF:  /* a coefficient is not an unknown */
    return num(ir, 0);
  case IR_FIELD: case IR_DOT:
    return num(ir, n.op == D->var && n.a == D->field && n.b == D->offset ? 1 : 0);
  case IR_NEG:
    D->steep[r] = steep(D, n.a);
    return neg(ir, d(D, n.a));
  case IR_ADD: case IR_SUB: case IR_MUL: case IR_DIV: {
    /* (the nodes are made in the order of the goldens in tests/ir: b's derivative first) */
    Ref t = n.op == IR_MUL ? product(D, n.a, n.b) : n.op == IR_DIV ? quotient(D, n.a, n.b) : IR_NONE;
    if (t == IR_NONE) {
      Ref db = d(D, n.b);
      t = ir_binary(ir, n.op, d(D, n.a), db);
    }
    D->steep[r] = D->steep[n.a] || D->steep[n.b];
    return t;
  }
  case IR_POW:
    return power(D, r);
  case IR_NOT: case IR_EQ: case IR_NE: case IR_LT: case IR_LE: case IR_GT: case IR_GE: case IR_AND: case IR_OR:
    return num(ir, 0);
  case IR_SELECT:
    D->steep[r] = steep(D, n.b) || steep(D, n.c);
    return ir_select(ir, n.a, d(D, n.b), d(D, n.c));
  case IR_CALL:
    return call(D, r);
  case IR_OP_COUNT:
    break;
  }
  ice("ir_derive: bad op %d", (int)n.op);
}

static Ref d(Derive *D, Ref r) {
  if (r >= D->nmemo) ice("ir_derive: node %d is newer than the expression", r);
  if (D->memo[r] == IR_NONE) {
    D->steep[r] = false;  /* build sets it where it may be true */
    D->memo[r] = build(D, r);
    if (ir_is_const(D->ir, D->memo[r], 0)) D->steep[r] = false;  /* a derivative 0 is finite */
  }
  return D->memo[r];
}

static Ref derive_by(Ir *ir, Ref root, IrOp var, int field, int offset) {
  Derive D = {ir, var, field, offset, xmalloc(((size_t)root + 1) * sizeof(Ref)), xmalloc((size_t)root + 1), root + 1};
  for (int i = 0; i <= root; i++) D.memo[i] = IR_NONE;
  Ref r = d(&D, root);
  free(D.memo);
  free(D.steep);
  return r;
}

Ref ir_derive(Ir *ir, Ref root, int field, int offset) { return derive_by(ir, root, IR_FIELD, field, offset); }

Ref ir_derive_dot(Ir *ir, Ref root, int field, int offset) { return derive_by(ir, root, IR_DOT, field, offset); }
