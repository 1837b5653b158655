/*
** ir.c: the node pool of the IR. ir_node finds or adds a node by its
** contents (hash-consing), so a subexpression written twice, or produced
** twice by differentiation, is one node. The constructors ir_unary,
** ir_binary, ir_select and ir_call simplify on the way in: constants fold
** (with the same C math the generated code uses), and 0 + a, 1 * a, -(-a),
** a^1, (c ? a : a) and friends disappear. Each rewrite gives what the
** generated C would compute, IEEE semantics included: a * 0 = 0 and
** a - a = 0 are taken only where a is provably finite (IrNode.bound; for an
** infinite or NaN a both are NaN), and 0 / b is never rewritten.
*/
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ir.h"
#include "util.h"

void ir_init(Ir *ir, const Model *m, const Source *src) {
  memset(ir, 0, sizeof *ir);
  ir->m = m;
  ir->src = src;
  ir->tcap = 1024;
  ir->table = xcalloc((size_t)ir->tcap, sizeof *ir->table);
  ir->points = xcalloc((size_t)(m->nfields * m->nclasses) + 1, sizeof *ir->points);
  ir->param_default = xcalloc((size_t)m->nparams + 1, sizeof *ir->param_default);
}

void ir_free(Ir *ir) {
  if (ir->points)
    for (int i = 0; i < ir->m->nfields * ir->m->nclasses; i++) free(ir->points[i].entries);
  free(ir->nodes);
  free(ir->table);
  free(ir->hint);
  for (int i = 0; i < ir->nnames; i++) free(ir->names[i]);
  free(ir->names);
  free(ir->offsets);
  free(ir->points);
  free(ir->param_default);
  free(ir->stencil);
  memset(ir, 0, sizeof *ir);
}

static uint64_t hash_node(IrOp op, int fn, Ref a, Ref b, Ref c, double num) {
  uint64_t bits;
  memcpy(&bits, &num, sizeof bits);
  uint64_t h = 1469598103934665603ull;
  uint64_t parts[6] = {(uint64_t)op, (uint64_t)(uint32_t)fn, (uint64_t)(uint32_t)a, (uint64_t)(uint32_t)b,
                       (uint64_t)(uint32_t)c, bits};
  for (int i = 0; i < 6; i++) h = (h ^ parts[i]) * 1099511628211ull;
  /* A multiply carries bits only upwards, and the table takes the low bits: mix the high ones
     down (MurmurHash3's finalizer), or numbers that differ only in their leading bits (1, 2,
     3, ... as doubles) would all share a slot and make every lookup linear. */
  h = (h ^ (h >> 33)) * 0xff51afd7ed558ccdull;
  h = (h ^ (h >> 33)) * 0xc4ceb9fe1a85ec53ull;
  return h ^ (h >> 33);
}

static bool same(const IrNode *n, IrOp op, int fn, Ref a, Ref b, Ref c, double num) {
  return n->op == op && n->fn == fn && n->a == a && n->b == b && n->c == c &&
         memcmp(&n->num, &num, sizeof num) == 0;
}

static void grow_table(Ir *ir) {
  int cap = ir->tcap * 2;
  int *t = xcalloc((size_t)cap, sizeof *t);
  for (int i = 0; i < ir->nnodes; i++) {
    const IrNode *n = &ir->nodes[i];
    uint64_t h = hash_node(n->op, n->fn, n->a, n->b, n->c, n->num);
    int at = (int)(h & (uint64_t)(cap - 1));
    while (t[at]) at = (at + 1) & (cap - 1);
    t[at] = i + 1;
  }
  free(ir->table);
  ir->table = t;
  ir->tcap = cap;
}

/* IrNode.bound of a new node, from its operands' bounds. The bounds hold in
   floating point too: rounding is monotonic, so |fl(a + b)| <= fl(A + B)
   when |a| <= A and |b| <= B, and likewise for the other rules. */
static double bound_of(const Ir *ir, IrOp op, int fn, Ref a, Ref b, Ref c, double num) {
  const Model *m = ir->m;
  const double any = INFINITY, index_max = 9223372036854775807.0;  /* a 64-bit PetscInt */
  if (op == IR_CONST) return isfinite(num) ? fabs(num) : any;
  if (op == IR_PARAM) {  /* the program refuses values outside the range, NaN included */
    double lo = m->param_lo[a], hi = m->param_hi[a];
    return isfinite(lo) && isfinite(hi) ? fmax(fabs(lo), fabs(hi)) : any;
  }
  if ((op == IR_GRID && a == BV_T) || op == IR_SHIFT) return any;  /* finite, but without a bound */
  if (op == IR_GRID) {  /* indices and sizes; the spacing is L / (n - 1) or L / n with n >= 3 */
    if (a >= BV_HX && a <= BV_HZ) return (m->axes[a - BV_HX].hi - m->axes[a - BV_HX].lo) / 2;
    return index_max;
  }
  if (op == IR_FIELD || op == IR_COEF || op == IR_DOT) return any;  /* a file's values are any numbers */
  double A = ir->nodes[a].bound, B = b == IR_NONE ? 0 : ir->nodes[b].bound;
  bool fa = isfinite(A), fb = isfinite(B);
  switch (op) {
  case IR_NEG: return A;
  case IR_NOT: case IR_EQ: case IR_NE: case IR_LT: case IR_LE: case IR_GT: case IR_GE: case IR_AND: case IR_OR:
    return 1;
  case IR_ADD: case IR_SUB: return A + B;
  case IR_MUL: return fa && fb ? A * B : any;
  case IR_DIV: {
    double d = ir->nodes[b].num;
    return fa && ir->nodes[b].op == IR_CONST && d != 0 && isfinite(d) ? A / fabs(d) : any;
  }
  case IR_POW: {
    double e = ir->nodes[b].num;
    bool small = ir->nodes[b].op == IR_CONST && e >= 0 && e <= 64 && e == floor(e);
    return fa && small ? pow(A, e) : any;
  }
  case IR_SELECT: return fmax(B, ir->nodes[c].bound);  /* either branch, whatever the condition */
  case IR_CALL:
    switch ((BuiltinFunc)fn) {
    case BF_ABS:   return A;
    case BF_MIN: case BF_MAX: return fmax(A, B);
    case BF_EXP:   return exp(A);
    case BF_SINH: case BF_COSH: return cosh(A);
    case BF_SIN: case BF_COS: case BF_TANH: return fa ? 1 : any;
    case BF_ATAN:  return fa ? 2 : any;
    case BF_ATAN2: return fa && fb ? 4 : any;
    case BF_FLOOR: case BF_CEIL: return fa ? ceil(A) : any;  /* |floor(a)|, |ceil(a)| <= ceil(|a|) */
    case BF_MOD: {  /* |mod(a, b)| <= |b| where b != 0; NaN for b = 0 or an infinite a */
      double d = ir->nodes[b].num;
      return fa && ir->nodes[b].op == IR_CONST && d != 0 && isfinite(d) ? fabs(d) : any;
    }
    default:       return any;  /* log, sqrt, tan, asin, acos: poles or a domain */
    }
  default:
    return any;
  }
}

bool ir_finite(const Ir *ir, Ref r) { return isfinite(ir->nodes[r].bound); }

Ref ir_node(Ir *ir, IrOp op, int fn, Ref a, Ref b, Ref c, double num) {
  if (num == 0) num = 0;  /* -0.0 and 0.0 are one constant */
  uint64_t h = hash_node(op, fn, a, b, c, num);
  int at = (int)(h & (uint64_t)(ir->tcap - 1));
  for (; ir->table[at]; at = (at + 1) & (ir->tcap - 1)) {
    Ref r = ir->table[at] - 1;
    if (same(&ir->nodes[r], op, fn, a, b, c, num)) return r;
  }
  if (ir->nnodes == ir->cap) {
    ir->cap = ir->cap ? ir->cap * 2 : 256;
    ir->nodes = xrealloc(ir->nodes, (size_t)ir->cap * sizeof *ir->nodes);
    ir->hint = xrealloc(ir->hint, (size_t)ir->cap * sizeof *ir->hint);
  }
  Ref r = ir->nnodes++;
  bool uniform = op == IR_GRID ? !builtin_values[a].pointwise : op != IR_FIELD && op != IR_COEF && op != IR_DOT;
  if (op > IR_FIELD)
    uniform = ir->nodes[a].uniform && (b == IR_NONE || ir->nodes[b].uniform) && (c == IR_NONE || ir->nodes[c].uniform);
  ir->nodes[r] = (IrNode){op, fn, a, b, c, num, uniform, bound_of(ir, op, fn, a, b, c, num)};
  ir->hint[r] = NULL;
  ir->table[at] = r + 1;
  if (ir->nnodes * 2 > ir->tcap) grow_table(ir);
  return r;
}

Ref ir_const(Ir *ir, double v) { return ir_node(ir, IR_CONST, 0, IR_NONE, IR_NONE, IR_NONE, v); }

bool ir_is_const(const Ir *ir, Ref r, double v) {
  return ir->nodes[r].op == IR_CONST && ir->nodes[r].num == v;
}

static bool constant(const Ir *ir, Ref r, double *v) {
  if (r == IR_NONE || ir->nodes[r].op != IR_CONST) return false;
  *v = ir->nodes[r].num;
  return true;
}

/* The generated code's StnMod (emit_c.c prints the same text): fmod is exact, and its result,
   with the sign of a, moves to the sign of b by adding b, the one rounding. NaN for b = 0 or an
   infinite a, as fmod; mod(a, inf) is a for a >= 0 and inf for a < 0, like Python's a % b. */
double ir_mod(double a, double b) {
  double r = fmod(a, b);
  return r != 0 && (r < 0) != (b < 0) ? r + b : r;
}

double ir_fold(IrOp op, int fn, double a, double b, double c) {
  switch (op) {
  case IR_NEG: return -a;
  case IR_NOT: return a == 0;
  case IR_ADD: return a + b;
  case IR_SUB: return a - b;
  case IR_MUL: return a * b;
  case IR_DIV: return a / b;
  case IR_POW: return pow(a, b);
  case IR_EQ:  return a == b;
  case IR_NE:  return a != b;
  case IR_LT:  return a < b;
  case IR_LE:  return a <= b;
  case IR_GT:  return a > b;
  case IR_GE:  return a >= b;
  case IR_AND: return a != 0 && b != 0;
  case IR_OR:  return a != 0 || b != 0;
  case IR_SELECT: return a != 0 ? b : c;
  case IR_CALL:
    switch ((BuiltinFunc)fn) {
    case BF_ABS:   return fabs(a);
    case BF_MIN:   return fmin(a, b);
    case BF_MAX:   return fmax(a, b);
    case BF_EXP:   return exp(a);
    case BF_LOG:   return log(a);
    case BF_POW:   return pow(a, b);
    case BF_SQRT:  return sqrt(a);
    case BF_SIN:   return sin(a);
    case BF_COS:   return cos(a);
    case BF_TAN:   return tan(a);
    case BF_ASIN:  return asin(a);
    case BF_ACOS:  return acos(a);
    case BF_ATAN:  return atan(a);
    case BF_ATAN2: return atan2(a, b);
    case BF_SINH:  return sinh(a);
    case BF_COSH:  return cosh(a);
    case BF_TANH:  return tanh(a);
    case BF_FLOOR: return floor(a);
    case BF_CEIL:  return ceil(a);
    case BF_MOD:   return ir_mod(a, b);
    case BF_COUNT: break;
    }
    break;
  default:
    break;
  }
  ice("ir_fold: op %d is not foldable", (int)op);
}

/* Folding only yields a number we can print back exactly and that the C
   compiler would compute the same way: finite results only. */
static bool fold(Ir *ir, IrOp op, int fn, Ref a, Ref b, Ref c, Ref *out) {
  double x = 0, y = 0, z = 0;
  if (!constant(ir, a, &x)) return false;
  if (b != IR_NONE && !constant(ir, b, &y)) return false;
  if (c != IR_NONE && !constant(ir, c, &z)) return false;
  double v = ir_fold(op, fn, x, y, z);
  if (!isfinite(v)) return false;
  *out = ir_const(ir, v);
  return true;
}

static bool commutative(IrOp op) {
  return op == IR_ADD || op == IR_MUL || op == IR_EQ || op == IR_NE || op == IR_AND || op == IR_OR;
}

/* A commutative node written the other way round is the same node. */
static Ref find_or_add(Ir *ir, IrOp op, int fn, Ref a, Ref b, Ref c) {
  bool comm = commutative(op) || (op == IR_CALL && (fn == BF_MIN || fn == BF_MAX));
  if (comm && a != b) {
    uint64_t h = hash_node(op, fn, b, a, c, 0);
    for (int at = (int)(h & (uint64_t)(ir->tcap - 1)); ir->table[at]; at = (at + 1) & (ir->tcap - 1)) {
      Ref r = ir->table[at] - 1;
      if (same(&ir->nodes[r], op, fn, b, a, c, 0)) return r;
    }
  }
  return ir_node(ir, op, fn, a, b, c, 0);
}

Ref ir_unary(Ir *ir, IrOp op, Ref a) {
  Ref r;
  if (fold(ir, op, 0, a, IR_NONE, IR_NONE, &r)) return r;
  if (op == IR_NEG && ir->nodes[a].op == IR_NEG) return ir->nodes[a].a;
  /* -(c * b) = (-c) * b exactly (IEEE negation is exact): no double negatives in the C. */
  if (op == IR_NEG && ir->nodes[a].op == IR_MUL && ir->nodes[ir->nodes[a].a].op == IR_CONST)
    return ir_binary(ir, IR_MUL, ir_const(ir, -ir->nodes[ir->nodes[a].a].num), ir->nodes[a].b);
  return ir_node(ir, op, 0, a, IR_NONE, IR_NONE, 0);
}

Ref ir_binary(Ir *ir, IrOp op, Ref a, Ref b) {
  Ref r;
  if (fold(ir, op, 0, a, b, IR_NONE, &r)) return r;
  switch (op) {
  case IR_ADD:
    if (ir_is_const(ir, a, 0)) return b;
    if (ir_is_const(ir, b, 0)) return a;
    if (ir->nodes[b].op == IR_NEG) return ir_binary(ir, IR_SUB, a, ir->nodes[b].a);
    break;
  case IR_SUB:
    if (ir_is_const(ir, b, 0)) return a;
    if (ir_is_const(ir, a, 0)) return ir_unary(ir, IR_NEG, b);
    if (a == b && ir_finite(ir, a)) return ir_const(ir, 0);
    if (ir->nodes[b].op == IR_NEG) return ir_binary(ir, IR_ADD, a, ir->nodes[b].a);
    break;
  case IR_MUL:
    if ((ir_is_const(ir, a, 0) && ir_finite(ir, b)) || (ir_is_const(ir, b, 0) && ir_finite(ir, a)))
      return ir_const(ir, 0);
    if (ir_is_const(ir, a, 1)) return b;
    if (ir_is_const(ir, b, 1)) return a;
    if (ir_is_const(ir, a, -1)) return ir_unary(ir, IR_NEG, b);
    if (ir_is_const(ir, b, -1)) return ir_unary(ir, IR_NEG, a);
    if (ir->nodes[a].op == IR_NEG && ir->nodes[b].op == IR_NEG)
      return ir_binary(ir, IR_MUL, ir->nodes[a].a, ir->nodes[b].a);
    break;
  case IR_DIV:
    if (ir_is_const(ir, b, 1)) return a;
    break;
  case IR_POW:
    if (ir_is_const(ir, b, 1)) return a;
    if (ir_is_const(ir, b, 0)) return ir_const(ir, 1);
    break;
  default:
    break;
  }
  return find_or_add(ir, op, 0, a, b, IR_NONE);
}

Ref ir_select(Ir *ir, Ref cond, Ref a, Ref b) {
  double c;
  if (constant(ir, cond, &c)) return c != 0 ? a : b;
  if (a == b) return a;
  return ir_node(ir, IR_SELECT, 0, cond, a, b, 0);
}

Ref ir_call(Ir *ir, int fn, Ref a, Ref b) {
  Ref r;
  if (fn == BF_POW) return ir_binary(ir, IR_POW, a, b);
  if (fold(ir, IR_CALL, fn, a, b, IR_NONE, &r)) return r;
  if ((fn == BF_MIN || fn == BF_MAX) && a == b) return a;
  return find_or_add(ir, IR_CALL, fn, a, b, IR_NONE);
}

int ir_offset(Ir *ir, const int off[MAX_DIM]) {
  for (int i = 0; i < ir->noffsets; i++)
    if (memcmp(ir->offsets[i], off, sizeof ir->offsets[i]) == 0) return i;
  if (ir->noffsets == ir->offcap) {
    ir->offcap = ir->offcap ? ir->offcap * 2 : 16;
    ir->offsets = xrealloc(ir->offsets, (size_t)ir->offcap * sizeof *ir->offsets);
  }
  memcpy(ir->offsets[ir->noffsets], off, sizeof ir->offsets[0]);
  return ir->noffsets++;
}

void ir_offset_text(const Ir *ir, int offset, char *buf, int size, bool brief) {
  const int *o = ir->offsets[offset];
  int dim = ir->m->dim, n = 0;
  if (brief && o[0] == 0 && o[1] == 0 && o[2] == 0) {
    buf[0] = '\0';
    return;
  }
  n += snprintf(buf + n, (size_t)(size - n), "[");
  for (int d = 0; d < dim && n < size; d++) n += snprintf(buf + n, (size_t)(size - n), d ? ",%d" : "%d", o[d]);
  if (n < size) snprintf(buf + n, (size_t)(size - n), "]");
}

IrPoint *ir_point(const Ir *ir, int field, int cls) { return &ir->points[field * ir->m->nclasses + cls]; }

IrEntry *ir_entry(IrPoint *p, int field, int offset) {
  for (int e = 0; e < p->nentries; e++)
    if (p->entries[e].field == field && p->entries[e].offset == offset) return &p->entries[e];
  return NULL;
}

void ir_name(Ir *ir, Ref r, const char *name) {
  if (ir->hint[r]) return;
  if ((ir->nnames & (ir->nnames - 1)) == 0)  /* 0, 1, 2, 4, ...: the room doubles, a name costs O(1) */
    ir->names = xrealloc(ir->names, (size_t)(ir->nnames ? 2 * ir->nnames : 1) * sizeof *ir->names);
  ir->names[ir->nnames] = xstrdup(name);
  ir->hint[r] = ir->names[ir->nnames++];
}
