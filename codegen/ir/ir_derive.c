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
*/
#include <stdlib.h>

#include "ir.h"
#include "util.h"

typedef struct Derive {
  Ir  *ir;
  int  field, offset;
  Ref *memo;  /* by node: its derivative, or IR_NONE when not yet built */
  int  nmemo;
} Derive;

static Ref d(Derive *D, Ref r);

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

static Ref call(Derive *D, Ref r) {
  Ir *ir = D->ir;
  IrNode n = ir->nodes[r];
  Ref da = d(D, n.a);
  if (n.fn == BF_MIN || n.fn == BF_MAX || n.fn == BF_ATAN2 || n.fn == BF_MOD) {
    Ref db = d(D, n.b);
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

/* (a^b)' = b a^(b-1) a' when b does not depend on the variable, else
   a^b (b' log a + b a' / a). */
static Ref power(Derive *D, Ref r) {
  Ir *ir = D->ir;
  IrNode n = ir->nodes[r];
  Ref da = d(D, n.a), db = d(D, n.b);
  if (ir_is_const(ir, db, 0)) {
    if (ir_is_const(ir, da, 0)) return da;
    Ref lower = ir_binary(ir, IR_POW, n.a, sub(ir, n.b, num(ir, 1)));
    return mul(ir, mul(ir, n.b, lower), da);
  }
  Ref t = add(ir, mul(ir, db, ir_call(ir, BF_LOG, n.a, IR_NONE)), dvd(ir, mul(ir, n.b, da), n.a));
  return mul(ir, r, t);
}

static Ref build(Derive *D, Ref r) {
  Ir *ir = D->ir;
  IrNode n = ir->nodes[r];
  switch (n.op) {
  case IR_CONST: case IR_PARAM: case IR_GRID:
    return num(ir, 0);
  case IR_FIELD:
    return num(ir, n.a == D->field && n.b == D->offset ? 1 : 0);
  case IR_NEG:
    return neg(ir, d(D, n.a));
  case IR_ADD:
    return add(ir, d(D, n.a), d(D, n.b));
  case IR_SUB:
    return sub(ir, d(D, n.a), d(D, n.b));
  case IR_MUL:
    return add(ir, mul(ir, d(D, n.a), n.b), mul(ir, n.a, d(D, n.b)));
  case IR_DIV: {  /* (a/b)' = a'/b - a b' / b^2 */
    Ref da = d(D, n.a), db = d(D, n.b);
    return sub(ir, dvd(ir, da, n.b), dvd(ir, mul(ir, n.a, db), mul(ir, n.b, n.b)));
  }
  case IR_POW:
    return power(D, r);
  case IR_NOT: case IR_EQ: case IR_NE: case IR_LT: case IR_LE: case IR_GT: case IR_GE: case IR_AND: case IR_OR:
    return num(ir, 0);
  case IR_SELECT:
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
  if (D->memo[r] == IR_NONE) D->memo[r] = build(D, r);
  return D->memo[r];
}

Ref ir_derive(Ir *ir, Ref root, int field, int offset) {
  Derive D = {ir, field, offset, xmalloc(((size_t)root + 1) * sizeof(Ref)), root + 1};
  for (int i = 0; i <= root; i++) D.memo[i] = IR_NONE;
  Ref r = d(&D, root);
  free(D.memo);
  return r;
}
