/*
** ir_passes.c: the pass pipeline, in order, in one function (ir_build),
** with the verifier between passes and --dump-ir=PASS to see the IR after
** any of them:
**
**   lower     AST -> IR roots (ir_lower.c)
**   derive    every Jacobian entry d(residual)/d(field[offset]) for each
**             field read of each residual (ir_derive.c); entries the user
**             wrote keep their value beside the derived one
**   simplify  rebuild every root through the simplifying constructors:
**             constant folding, identities; hash-consing makes equal
**             subexpressions one node (CSE); entries that are 0 vanish;
**             then the code the emitters will print is counted: past
**             IR_MAX_NODES operations it is an error (lowering and derive
**             stop at that many nodes in the pool)
**   check     a user's entry must equal the derived one: the same node, or
**             the same value at random sample points; otherwise an error
**             at its .stn location (undecided cases are left to the
**             generated program's -stn_check_jacobian)
**   mirror    reads and entry columns beyond a face their field is mirrored
**             across become the reads they mirror; entries on one column
**             are added (ir_mirror.c). Lowering, derive and check see the
**             rules as written, so a hand-written entry is checked against
**             the derivative with respect to the read it names
**   stencil   the set of block diagonals the Jacobian uses, sorted
**   shift     in a time-dependent program (dt(u) in a residual), the
**             IJacobian: every entry on a column whose time derivative the
**             residual reads becomes d(F)/du + shift * d(F)/d(dt(u)), its
**             given value too (after check, which compares d(F)/du alone)
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ir.h"
#include "util.h"

const char *const ir_pass_names[PASS_COUNT] = {"lower", "derive", "simplify", "check", "mirror", "stencil", "shift"};

static const char *const op_names[IR_OP_COUNT] = {
  "const", "param", "grid", "shift", "coef", "dot", "field", "neg", "not", "add", "sub", "mul", "div", "pow",
  "eq", "ne", "lt", "le", "gt", "ge", "and", "or", "select", "call",
};

/* Offsets in the order of the matrix columns: by z, then y, then x. */
static int offset_cmp(const Ir *ir, int a, int b) {
  for (int d = MAX_DIM - 1; d >= 0; d--)
    if (ir->offsets[a][d] != ir->offsets[b][d]) return ir->offsets[a][d] < ir->offsets[b][d] ? -1 : 1;
  return 0;
}

static const Ir *sort_ir;  /* qsort has no context argument in C11 */

static int entry_cmp(const void *pa, const void *pb) {
  const IrEntry *a = pa, *b = pb;
  int c = offset_cmp(sort_ir, a->offset, b->offset);
  return c ? c : a->field - b->field;
}

static int stencil_cmp(const void *pa, const void *pb) { return offset_cmp(sort_ir, *(const int *)pa, *(const int *)pb); }

/* ---- derive ---- */

/* The distinct field reads under root, and the points whose time derivative it reads (dt(u),
   a column of the point itself), as entries without values. */
static int collect_reads(const Ir *ir, Ref root, IrEntry **out) {
  char *seen = xcalloc((size_t)root + 1, 1);
  Ref *stack = xmalloc(((size_t)root + 1) * sizeof *stack);
  IrEntry *reads = NULL;
  int n = 0, cap = 0, top = 0;
  stack[top++] = root;
  seen[root] = 1;
  while (top) {
    const IrNode *x = &ir->nodes[stack[--top]];
    if (x->op == IR_FIELD || x->op == IR_DOT) {
      int k = 0;
      while (k < n && (reads[k].field != x->a || reads[k].offset != x->b)) k++;  /* u and dt(u) */
      if (k < n) continue;
      if (n == cap) {
        cap = cap ? 2 * cap : 8;
        reads = xrealloc(reads, (size_t)cap * sizeof *reads);
      }
      reads[n++] = (IrEntry){.field = x->a, .offset = x->b, .derived = IR_NONE, .given = IR_NONE, .dot = IR_NONE};
      continue;
    }
    Ref ops[3] = {x->a, x->b, x->c};
    for (int i = 0; i < 3; i++)
      if (x->op > IR_FIELD && ops[i] != IR_NONE && !seen[ops[i]]) {
        seen[ops[i]] = 1;
        stack[top++] = ops[i];
      }
  }
  free(seen);
  free(stack);
  *out = reads;
  return n;
}

/* An IMEX rule (with explicit(...) terms) must have the form PETSc's IMEX methods assume,
   dt(u) + f(t, u) = G(t, u): its own field's time derivative with coefficient 1 and no other. A
   mass (2 dt(u), (1 + u^2) dt(u)), a sign (-dt(u)), another field's dt, or none at all (an
   algebraic rule) would make ARKIMEX integrate another equation, silently. */
static void imex_form(const Ir *ir, Diag *d, const IrPoint *p, int f, const Node **told, int *ntold) {
  const Model *m = ir->m;
  int zero[MAX_DIM] = {0}, center = -1, other = 0;
  if (p->rhs == IR_NONE || ir_is_const(ir, p->rhs, 0)) return;
  for (int r = 0; r < *ntold; r++)
    if (told[r] == p->residual_rule) return; /* a rule over several classes of points: said once */
  for (int o = 0; o < ir->noffsets; o++)
    if (!memcmp(ir->offsets[o], zero, sizeof zero)) center = o;
  const IrEntry *own = NULL;
  for (int e = 0; e < p->nentries; e++) {
    const IrEntry *x = &p->entries[e];
    if (x->dot == IR_NONE) continue;
    if (x->field == f && x->offset == center) own = x;
    else other++;
  }
  if (own && other == 0 && ir_is_const(ir, own->dot, 1)) return;
  const char *u = m->fields[f].name;
  told[(*ntold)++] = p->residual_rule;
  diag_error(d, p->residual_rule->span, "a rule with explicit(...) terms must hold dt(%s) once, with coefficient 1, and no other time "
             "derivative: PETSc's IMEX methods take its implicit part as dt(%s) + f(t, %s)%s", u, u, u,
             !own && other == 0 ? "; this rule has no time derivative" : "");
  diag_hint(d, "divide the rule by the coefficient of dt(%s) (for -dt(%s), negate it), or leave explicit(...) out of this rule", u, u);
}

static void derive(Ir *ir, Diag *d) {
  const Model *m = ir->m;
  const Node **told = xmalloc((size_t)(m->nfields * m->nclasses + 1) * sizeof *told); /* imex_form's rules */
  int ntold = 0;
  bool too_large = false;  /* the pool passed IR_MAX_NODES: the rest are stand-ins, the error stops the build */
  for (int f = 0; f < m->nfields; f++)
    for (int c = 0; c < m->nclasses; c++) {
      IrPoint *p = ir_point(ir, f, c);
      if (!p->residual_rule) continue;
      IrEntry *reads;
      int n = collect_reads(ir, p->residual, &reads);
      for (int e = 0; e < n; e++) {
        reads[e].derived = too_large ? ir_const(ir, 0) : ir_derive(ir, p->residual, reads[e].field, reads[e].offset);
        if (!too_large && m->time_dependent) {
          Ref dot = ir_derive_dot(ir, p->residual, reads[e].field, reads[e].offset);
          reads[e].dot = ir_is_const(ir, dot, 0) ? IR_NONE : dot;
        }
        if (!too_large && ir->nnodes > IR_MAX_NODES) {
          diag_error(d, p->residual_rule->span, "the Jacobian of this residual makes the program too large (more "
                     "than %d operations)", IR_MAX_NODES);
          too_large = true;
        }
        IrEntry *given = ir_entry(p, reads[e].field, reads[e].offset);
        if (given) {
          reads[e].given = given->given;
          reads[e].node = given->node;
          reads[e].approximate = given->approximate;
        }
      }
      if (p->nentries > 0 && n < p->nentries) ice("a Jacobian entry without a residual read survived sema");
      sort_ir = ir;
      /* reads is NULL when the residual reads no field (interior: 1;), and qsort's may not be */
      if (n > 1) qsort(reads, (size_t)n, sizeof *reads, entry_cmp);
      free(p->entries);
      p->entries = reads;
      p->nentries = n;
      if (!too_large) imex_form(ir, d, p, f, told, &ntold);
    }
  free(told);
}

/* ---- simplify ---- */

typedef struct Simplify {
  Ir  *ir;
  Ref *map;  /* old node -> simplified node, IR_NONE until built */
  int  nmap;
} Simplify;

static Ref simplify(Simplify *S, Ref r) {
  if (r == IR_NONE) return r;
  if (S->map[r] != IR_NONE) return S->map[r];
  Ir *ir = S->ir;
  IrNode n = ir->nodes[r];
  Ref out;
  switch (n.op) {
  case IR_CONST: case IR_PARAM: case IR_GRID: case IR_SHIFT: case IR_COEF: case IR_DOT: case IR_FIELD:
    out = r;
    break;
  case IR_NEG: case IR_NOT:
    out = ir_unary(ir, n.op, simplify(S, n.a));
    break;
  case IR_SELECT:
    out = ir_select(ir, simplify(S, n.a), simplify(S, n.b), simplify(S, n.c));
    break;
  case IR_CALL:
    out = ir_call(ir, n.fn, simplify(S, n.a), simplify(S, n.b));
    break;
  default:
    out = ir_binary(ir, n.op, simplify(S, n.a), simplify(S, n.b));
    break;
  }
  if (!ir->hint[out]) ir->hint[out] = ir->hint[r];
  S->map[r] = out;
  return out;
}

static void simplify_all(Ir *ir) {
  const Model *m = ir->m;
  Simplify S = {ir, xmalloc((size_t)ir->nnodes * sizeof(Ref)), ir->nnodes};
  for (int i = 0; i < S.nmap; i++) S.map[i] = IR_NONE;
  for (int i = 0; i < m->nparams; i++) ir->param_default[i] = simplify(&S, ir->param_default[i]);
  for (int f = 0; f < m->nfields; f++)
    for (int c = 0; c < m->nclasses; c++) {
      IrPoint *p = ir_point(ir, f, c);
      if (!p->residual_rule) continue;
      p->residual = simplify(&S, p->residual);
      p->rhs = simplify(&S, p->rhs);
      p->initial = simplify(&S, p->initial);
      int kept = 0;
      for (int e = 0; e < p->nentries; e++) {
        IrEntry x = p->entries[e];
        x.derived = simplify(&S, x.derived);
        x.given = simplify(&S, x.given);
        x.dot = simplify(&S, x.dot);
        if (x.dot != IR_NONE && ir_is_const(ir, x.dot, 0)) x.dot = IR_NONE;
        if (x.given == IR_NONE && x.dot == IR_NONE && ir_is_const(ir, x.derived, 0)) continue;  /* no coupling after all */
        p->entries[kept++] = x;
      }
      p->nentries = kept;
    }
  free(S.map);
}

/* Counts into *total the nodes under root not yet marked with group, marking them. stack has
   room for 3 * nnodes + 1: a node pushes at most 3 when it is first marked. */
static void count_under(const Ir *ir, Ref root, int group, int *mark, Ref *stack, int *total) {
  int top = 0;
  if (root != IR_NONE) stack[top++] = root;
  while (top > 0) {
    Ref r = stack[--top];
    if (mark[r] == group) continue;
    mark[r] = group;
    ++*total;
    const IrNode *n = &ir->nodes[r];
    if (n->op <= IR_FIELD) continue;
    Ref ops[3] = {n->a, n->b, n->c};
    for (int k = 0; k < 3; k++)
      if (ops[k] != IR_NONE && mark[ops[k]] != group) stack[top++] = ops[k];
  }
}

/* The emitters print each point's roots with the nodes under them, once for the classes that
   share their rules. Past IR_MAX_NODES in all, an error at the residual rule where the count
   passed it: such a program is megabytes of C, and printing it costs what building the pool
   did, once per set of rules. */
static void emitted_size(const Ir *ir, Diag *d) {
  const Model *m = ir->m;
  int *mark = xcalloc((size_t)ir->nnodes, sizeof *mark);  /* by node: the last group that counted it */
  Ref *stack = xmalloc(((size_t)ir->nnodes * 3 + 1) * sizeof *stack);
  int total = 0, group = 0;
  for (int f = 0; f < m->nfields && total <= IR_MAX_NODES; f++)
    for (int c = 0; c < m->nclasses && total <= IR_MAX_NODES; c++) {
      const IrPoint *p = ir_point(ir, f, c);
      if (!p->residual_rule) continue;
      bool shared = false;  /* the same rules as an earlier class: the same code */
      for (int b = 0; b < c && !shared; b++) {
        const IrPoint *q = ir_point(ir, f, b);
        shared = q->residual_rule == p->residual_rule && q->jacobian_rule == p->jacobian_rule &&
                 q->initial_rule == p->initial_rule;
      }
      if (shared) continue;
      group++;
      count_under(ir, p->residual, group, mark, stack, &total);
      count_under(ir, p->rhs, group, mark, stack, &total);
      count_under(ir, p->initial, group, mark, stack, &total);
      for (int e = 0; e < p->nentries; e++) {
        count_under(ir, p->entries[e].derived, group, mark, stack, &total);
        count_under(ir, p->entries[e].given, group, mark, stack, &total);
        count_under(ir, p->entries[e].dot, group, mark, stack, &total);
      }
      if (total > IR_MAX_NODES)
        diag_error(d, p->residual_rule->span, "the generated code would be too large (more than %d operations, "
                   "counting each kind of grid point with rules of its own)", IR_MAX_NODES);
    }
  free(mark);
  free(stack);
}

/* ---- check ---- */

/* Point samples per parameter set; values sampled per parameter (besides its default). */
enum { CHECK_SAMPLES = 4, PARAM_SAMPLES = 3 };

/* Grid values at sample s of class cls, with default sizes, and the parameters: fixed where set
   (NULL: all at their defaults), the others from their defaults. */
static void sample_point(const Ir *ir, int cls, int s, const double *fixed, IrSample *smp, double *values) {
  const Model *m = ir->m;
  memset(smp->grid, 0, sizeof smp->grid);
  smp->seed = 1000003ull * (unsigned long long)(s + 1) + (unsigned long long)cls;
  smp->fixed = fixed;
  for (int d = 0; d < m->dim; d++) {
    const Axis *ax = &m->axes[d];
    double n = (double)ax->points;
    int pos = sema_class_pos(cls, d);
    smp->grid[BV_NX + d] = n;
    smp->grid[BV_HX + d] = (ax->hi - ax->lo) / (ax->periodic ? n : n - 1);
    smp->grid[BV_I + d] = pos == 0 ? 0 : pos == 2 ? n - 1 : (double)(1 + (s * 7 + d * 3) % (ax->points - 2));
  }
  smp->grid[BV_T] = 0.37 + 0.29 * s;  /* a time-dependent entry checked at several times */
  ir_eval_params(ir, smp, values);
}

/* Up to PARAM_SAMPLES values of a parameter other than its default def, inside its range
   [lo, hi]: at fixed fractions of a finite range (of its logarithm when the range is positive and
   spans a factor of 10 or more), else multiples of the default (0.3, 3, 30; around 0 when the
   default is 0) that lie in the range. The fractions avoid the middle and the ends, where
   defaults and special values tend to sit. Returns how many were written to out. */
static int param_samples(double def, double lo, double hi, bool whole, double out[PARAM_SAMPLES]) {
  static const double frac[PARAM_SAMPLES] = {0.13, 0.47, 0.86}, mult[PARAM_SAMPLES] = {0.3, 3, 30},
                      near0[PARAM_SAMPLES] = {0.3, 3, -3};
  int n = 0;
  for (int k = 0; k < PARAM_SAMPLES; k++) {
    double v;
    if (isfinite(lo) && isfinite(hi)) {
      bool logs = lo > 0 && hi >= 10 * lo;
      v = logs ? exp(log(lo) + frac[k] * (log(hi) - log(lo))) : lo + frac[k] * (hi - lo);
    } else if (isfinite(def) && def != 0) {
      v = def * mult[k];
    } else {
      v = near0[k] + (isfinite(lo) ? lo : isfinite(hi) ? hi - 6 : 0);
    }
    if (whole) v = round(v);  /* an int or bool parameter takes whole values only */
    if (v >= lo && v <= hi && v != def && isfinite(v) && (n == 0 || v != out[n - 1])) out[n++] = v;
  }
  return n;
}

/* A set of parameter values to check entries at: fixed[i] is NaN where parameter i takes its
   default (evaluated from the other values of the set). */
typedef struct ParamSet {
  double *fixed;
} ParamSet;

/* The parameters an entry's value can depend on: read by a node under root, or by the default
   of such a parameter (a default reads only earlier parameters: one sweep from the last). */
static void mark_params(const Ir *ir, Ref root, char *seen, bool *used) {
  Ref *stack = xmalloc(((size_t)ir->nnodes + 1) * sizeof *stack);
  int top = 0;
  if (root != IR_NONE && !seen[root]) seen[root] = 1, stack[top++] = root;
  while (top > 0) {
    const IrNode *n = &ir->nodes[stack[--top]];
    if (n->op == IR_PARAM) used[n->a] = true;
    if (n->op <= IR_FIELD) continue;
    Ref ops[3] = {n->a, n->b, n->c};
    for (int k = 0; k < 3; k++)
      if (ops[k] != IR_NONE && !seen[ops[k]]) seen[ops[k]] = 1, stack[top++] = ops[k];
  }
  free(stack);
}

/* The parameter sets of the check: all defaults first; then each parameter that an entry to be
   checked may depend on at each of its samples, the others at their defaults (a default that
   reads it follows it, as when the program's user sets that option alone); then, with two or
   more such parameters, all of them at their first samples together. An entry that hard-codes
   a parameter's default value is wrong in the sets that move that parameter. */
static int param_sets(const Ir *ir, const double *defaults, ParamSet **out) {
  const Model *m = ir->m;
  int np = m->nparams, n = 0, moved = 0;
  bool *used = xcalloc((size_t)np + 1, sizeof *used);
  char *seen = xcalloc((size_t)ir->nnodes + 1, 1);
  for (int f = 0; f < m->nfields; f++)
    for (int c = 0; c < m->nclasses; c++) {
      const IrPoint *p = ir_point(ir, f, c);
      for (int e = 0; e < p->nentries; e++)
        if (p->entries[e].given != IR_NONE && p->entries[e].given != p->entries[e].derived) {
          mark_params(ir, p->entries[e].given, seen, used);
          mark_params(ir, p->entries[e].derived, seen, used);
        }
    }
  for (int i = np - 1; i >= 0; i--)
    if (used[i]) mark_params(ir, ir->param_default[i], seen, used);
  ParamSet *sets = xmalloc(((size_t)np * PARAM_SAMPLES + 2) * sizeof *sets);
  double *together = xmalloc(((size_t)np + 1) * sizeof *together);
  for (int i = 0; i < np; i++) together[i] = NAN;
  sets[n].fixed = xmalloc(((size_t)np + 1) * sizeof(double));
  for (int i = 0; i < np; i++) sets[n].fixed[i] = NAN;
  n++;
  for (int i = 0; i < np; i++) {
    double v[PARAM_SAMPLES];
    int nv = used[i] ? param_samples(defaults[i], m->param_lo[i], m->param_hi[i], m->param_type[i] != PT_REAL, v) : 0;
    for (int k = 0; k < nv; k++) {
      sets[n].fixed = xmalloc(((size_t)np + 1) * sizeof(double));
      for (int j = 0; j < np; j++) sets[n].fixed[j] = j == i ? v[k] : NAN;
      n++;
    }
    if (nv > 0) together[i] = v[0], moved++;
  }
  if (moved >= 2) sets[n++].fixed = together;
  else free(together);
  free(used);
  free(seen);
  *out = sets;
  return n;
}

static bool close_enough(double given, double derived, double scale) {
  double diff = fabs(given - derived);
  return diff <= 1e-6 * (fabs(given) + fabs(derived)) || diff <= 1e-10 * scale;
}

/* What the check found for one entry: per parameter set, then the first set where the entry
   differs at every sample where both values are finite. */
typedef struct Verdict {
  int    finite, wrong;       /* samples of the current set */
  int    all_finite, all_wrong;
  int    failed;              /* the first failing set, or -1 */
  double given, derived;      /* at the failing set's first sample */
  bool   defaults_agree;      /* the set of defaults has finite samples and no difference */
} Verdict;

/* "Re = 3.3 (default 100), nu = 0.06 (default 0.002)": the parameters whose values in params
   differ from defaults. */
static void param_text(const Model *m, const double *params, const double *defaults, char *buf, int size) {
  int n = 0;
  buf[0] = '\0';
  for (int i = 0; i < m->nparams && n < size; i++)
    if (params[i] != defaults[i] && !(isnan(params[i]) && isnan(defaults[i])))
      n += snprintf(buf + n, (size_t)(size - n), "%s%s = %g (default %g)", n ? ", " : "", m->params[i]->param.name,
                    params[i], defaults[i]);
}

/* A note at the mirror that makes another read of e's point land on e's column: an entry is the
   derivative with respect to one read, and the program adds the two (ir_mirror.c), so an entry
   written as their sum is wrong. Nothing when no mirror does. */
static void mirror_note(const Ir *ir, Diag *dg, const IrPoint *p, int cls, const IrEntry *e) {
  const Model *m = ir->m;
  int to_e[MAX_DIM], to_x[MAX_DIM];
  unsigned used_e = sema_mirror_offset(m, e->field, cls, ir->offsets[e->offset], to_e);
  for (int k = 0; k < p->nentries; k++) {
    const IrEntry *x = &p->entries[k];
    if (x == e || x->field != e->field) continue;
    unsigned used = used_e | sema_mirror_offset(m, x->field, cls, ir->offsets[x->offset], to_x);
    if (!used || memcmp(to_e, to_x, sizeof to_e) != 0) continue;
    char a[32], b[32];
    ir_offset_text(ir, e->offset, a, sizeof a, false);
    ir_offset_text(ir, x->offset, b, sizeof b, false);
    diag_note(dg, m->fields[e->field].mirror_at[__builtin_ctz(used)]->loc,
              "this mirror makes the reads %s%s and %s%s one column there: each entry is the derivative with "
              "respect to its own read, and the program adds the two", m->fields[e->field].name, a,
              m->fields[x->field].name, b);
    return;
  }
}

static void report(Ir *ir, Diag *dg, const IrPoint *p, int f, int cls, const IrEntry *e, const Verdict *v,
                   const double *params, const double *defaults) {
  const Model *m = ir->m;
  char where[64], off[32], with[512];
  sema_class_name(m, cls, where, sizeof where);
  ir_offset_text(ir, e->offset, off, sizeof off, false);
  diag_error(dg, e->node->loc, "this Jacobian entry is not d(residual %s)/d(%s%s)", m->fields[f].name,
             m->fields[e->field].name, off);
  diag_note(dg, p->residual_rule->loc, "the residual rule it is checked against (at %s points)%s", where,
            p->rhs != IR_NONE && !ir_is_const(ir, p->rhs, 0) ? ": its implicit part, without its explicit(...) terms, "
                                                                 "which TS takes from the known state" : "");
  mirror_note(ir, dg, p, cls, e);
  if (v->failed == 0) {
    diag_hint(dg, "at a sample point the entry gives %.6g but the derivative of the residual is %.6g; "
                  "fix the entry, or leave it out and stencilc derives it", v->given, v->derived);
    return;
  }
  param_text(m, params, defaults, with, sizeof with);
  diag_hint(dg, "with %s, at a sample point the entry gives %.6g but the derivative of the residual is %.6g; fix "
                "the entry, or leave it out and stencilc derives it%s", with, v->given, v->derived,
            v->defaults_agree ? " (at the defaults the two agree: is a default's value written in place of a "
                                "parameter?)" : "");
}

static void check(Ir *ir, Diag *dg) {
  const Model *m = ir->m;
  size_t np = (size_t)m->nparams + 1;
  int npoints = m->nfields * m->nclasses, nentries = 0;
  int *base = xmalloc(((size_t)npoints + 1) * sizeof *base);  /* by point (f-major): its verdicts' start */
  for (int f = 0; f < m->nfields; f++)
    for (int c = 0; c < m->nclasses; c++) {
      const IrPoint *p = ir_point(ir, f, c);
      base[f * m->nclasses + c] = nentries;
      for (int e = 0; e < p->nentries; e++) {
        IrEntry *x = &p->entries[e];
        if (x->given != IR_NONE && x->given == x->derived) x->checked = true;
        nentries += x->given != IR_NONE && x->given != x->derived;
      }
    }
  base[npoints] = nentries;
  if (nentries == 0) {
    free(base);
    return;
  }
  double *values = xmalloc((size_t)ir->nnodes * sizeof *values);
  double *params = xcalloc(np, sizeof *params), *defaults = xcalloc(np, sizeof *defaults);
  double *failed_params = xcalloc(np * (size_t)nentries, sizeof *failed_params);  /* by verdict */
  Verdict *verdicts = xmalloc((size_t)nentries * sizeof *verdicts);
  for (int k = 0; k < nentries; k++) verdicts[k] = (Verdict){.failed = -1};
  IrSample smp = {.params = params};
  sample_point(ir, 0, 0, NULL, &smp, values);  /* defaults read no point values: any class, any sample */
  memcpy(defaults, params, np * sizeof *params);
  ParamSet *sets;
  int nsets = param_sets(ir, defaults, &sets);
  for (int c = 0; c < m->nclasses; c++) {
    bool any = false;
    for (int f = 0; f < m->nfields; f++) any |= base[f * m->nclasses + c] < base[f * m->nclasses + c + 1];
    if (!any) continue;
    for (int set = 0; set < nsets; set++) {
      for (int s = 0; s < CHECK_SAMPLES; s++) {
        sample_point(ir, c, s, sets[set].fixed, &smp, values);
        for (int f = 0; f < m->nfields; f++) {
          const IrPoint *p = ir_point(ir, f, c);
          int k = base[f * m->nclasses + c];
          double scale = 0;
          for (int e = 0; e < p->nentries; e++) scale = fmax(scale, fabs(values[p->entries[e].derived]));
          for (int e = 0; e < p->nentries; e++) {
            const IrEntry *x = &p->entries[e];
            if (x->given == IR_NONE || x->given == x->derived) continue;
            Verdict *v = &verdicts[k++];
            double g = values[x->given], d = values[x->derived];
            if (!isfinite(g) || !isfinite(d)) continue;
            v->finite++;
            if (close_enough(g, d, scale)) continue;
            if (!v->wrong++ && v->failed < 0) v->given = g, v->derived = d;
          }
        }
      }
      for (int f = 0; f < m->nfields; f++) {
        for (int k = base[f * m->nclasses + c]; k < base[f * m->nclasses + c + 1]; k++) {
          Verdict *v = &verdicts[k];
          if (set == 0) v->defaults_agree = v->finite > 0 && v->wrong == 0;
          if (v->failed < 0 && v->finite > 0 && v->wrong == v->finite) {
            v->failed = set;
            memcpy(&failed_params[(size_t)k * np], params, np * sizeof *params);
          }
          v->all_finite += v->finite, v->all_wrong += v->wrong;
          v->finite = v->wrong = 0;
        }
      }
    }
  }
  const Node **reported = xcalloc((size_t)nentries, sizeof *reported);
  int nreported = 0;
  for (int f = 0; f < m->nfields; f++)
    for (int c = 0; c < m->nclasses; c++) {
      IrPoint *p = ir_point(ir, f, c);
      int k = base[f * m->nclasses + c];
      for (int e = 0; e < p->nentries; e++) {
        IrEntry *x = &p->entries[e];
        if (x->given == IR_NONE || x->given == x->derived) continue;
        const Verdict *v = &verdicts[k];
        const double *at = &failed_params[(size_t)k * np];
        k++;
        x->checked = v->all_finite > 0 && v->all_wrong == 0;
        if (v->failed < 0 || x->approximate) continue;  /* an approximate entry may differ anywhere */
        bool seen = false;
        for (int r = 0; r < nreported; r++) seen |= reported[r] == x->node;
        if (seen) continue;
        reported[nreported++] = x->node;
        report(ir, dg, p, f, c, x, v, at, defaults);
      }
    }
  for (int set = 0; set < nsets; set++) free(sets[set].fixed);
  free(sets);
  free(base);
  free(values);
  free(params);
  free(defaults);
  free(failed_params);
  free(verdicts);
  free(reported);
}

/* An approximate block whose every entry was shown equal to the derivative: a warning at its
   mark, since the program then assembles the same matrix twice for nothing. */
static void warn_exact_approximations(const Ir *ir, Diag *dg) {
  const Model *m = ir->m;
  for (int f = 0; f < m->nfields; f++) {
    if (!m->fields[f].approximate) continue;
    bool differs = false;
    for (int c = 0; c < m->nclasses && !differs; c++) {
      const IrPoint *p = ir_point(ir, f, c);
      for (int e = 0; e < p->nentries; e++)
        differs |= p->entries[e].approximate && !p->entries[e].checked;
    }
    if (differs) continue;
    diag_warning(dg, m->fields[f].jacobian->block.mark->loc,
                 "every entry of this approximate Jacobian block equals the derivative of the residual");
    diag_hint(dg, "drop 'approximate' and the entries are checked as exact ones; keep it for entries that "
                  "differ from the derivative (a Picard or lower-order preconditioning matrix)");
  }
}

/* ---- stencil ---- */

static void stencil(Ir *ir) {
  const Model *m = ir->m;
  int zero[MAX_DIM] = {0};
  int center = ir_offset(ir, zero);
  char *used = xcalloc((size_t)ir->noffsets, 1);
  used[center] = 1;  /* always: the diagonal is what Jacobi preconditioners use */
  for (int f = 0; f < m->nfields; f++)
    for (int c = 0; c < m->nclasses; c++) {
      IrPoint *p = ir_point(ir, f, c);
      for (int e = 0; e < p->nentries; e++) used[p->entries[e].offset] = 1;
    }
  free(ir->stencil);
  ir->stencil = xmalloc((size_t)ir->noffsets * sizeof *ir->stencil);
  ir->nstencil = 0;
  for (int o = 0; o < ir->noffsets; o++)
    if (used[o]) ir->stencil[ir->nstencil++] = o;
  sort_ir = ir;
  qsort(ir->stencil, (size_t)ir->nstencil, sizeof *ir->stencil, stencil_cmp);
  for (int s = 0; s < ir->nstencil; s++)
    if (ir->stencil[s] == center) ir->diagonal = s;
  free(used);
}

/* ---- shift ---- */

/* u_t = G (Ir.rhs_only): in an IMEX program, every residual's implicit part is its own field's
   dt(u), nothing else. */
static void rhs_only(Ir *ir) {
  const Model *m = ir->m;
  int zero[MAX_DIM] = {0};
  ir->rhs_only = ir->imex;
  for (int f = 0; f < m->nfields && ir->rhs_only; f++)
    for (int c = 0; c < m->nclasses; c++) {
      const IrPoint *p = ir_point(ir, f, c);
      if (!p->residual_rule) continue;
      const IrNode *n = &ir->nodes[p->residual];
      if (n->op != IR_DOT || n->a != f || n->b != ir_offset(ir, zero)) ir->rhs_only = false;
    }
}

/* The IJacobian of TS, a dF/d(u_t) + dF/du with a TS's shift: on every column the residual reads
   the time derivative of, the entry (derived, and given when the .stn gives it) gains
   shift * dot. The given entry was checked against the derived one without it (check). */
static void shift(Ir *ir) {
  const Model *m = ir->m;
  if (!m->time_dependent) return;
  rhs_only(ir);
  Ref a = ir_node(ir, IR_SHIFT, 0, IR_NONE, IR_NONE, IR_NONE, 0);
  for (int f = 0; f < m->nfields; f++)
    for (int c = 0; c < m->nclasses; c++) {
      IrPoint *p = ir_point(ir, f, c);
      if (!p->residual_rule) continue;
      for (int e = 0; e < p->nentries; e++) {
        IrEntry *x = &p->entries[e];
        if (x->dot == IR_NONE) continue;
        Ref term = ir_binary(ir, IR_MUL, a, x->dot);
        bool same = x->given == x->derived;
        x->derived = ir_binary(ir, IR_ADD, x->derived, term);
        if (x->given != IR_NONE) x->given = same ? x->derived : ir_binary(ir, IR_ADD, x->given, term);
      }
    }
}

/* ---- verifier ---- */

static void verify_ref(const Ir *ir, Ref r, Ref below, const char *after, const char *what) {
  if (r < 0 || r >= below) ice("IR after %s: %s refers to %%%d (pool has %d)", after, what, r, below);
}

void ir_verify(const Ir *ir, const char *after) {
  const Model *m = ir->m;
  for (Ref r = 0; r < ir->nnodes; r++) {
    const IrNode *n = &ir->nodes[r];
    switch (n->op) {
    case IR_CONST: break;
    case IR_PARAM:
      if (n->a < 0 || n->a >= m->nparams) ice("IR after %s: %%%d: parameter %d", after, r, n->a);
      break;
    case IR_GRID:
      if (n->a < 0 || n->a >= BV_COUNT || (n->a >= BV_X && n->a <= BV_Z) || (n->a >= BV_PI && n->a < BV_T) ||
          (n->a == BV_T && !m->time_dependent))
        ice("IR after %s: %%%d: grid value %d", after, r, n->a);
      break;
    case IR_SHIFT:
      if (!m->time_dependent) ice("IR after %s: %%%d: a shift in a steady program", after, r);
      break;
    case IR_DOT: case IR_FIELD:
      if (n->a < 0 || n->a >= m->nfields || n->b < 0 || n->b >= ir->noffsets)
        ice("IR after %s: %%%d: field %d offset %d", after, r, n->a, n->b);
      break;
    case IR_COEF:
      if (n->a < 0 || n->a >= m->ncoefs || !m->coefs[n->a]->coef.source || n->b < 0 || n->b >= ir->noffsets)
        ice("IR after %s: %%%d: coefficient %d offset %d", after, r, n->a, n->b);
      break;
    case IR_NEG: case IR_NOT:
      verify_ref(ir, n->a, r, after, "an operand");
      break;
    case IR_SELECT:
      verify_ref(ir, n->c, r, after, "an operand");
      /* fallthrough */
    case IR_ADD: case IR_SUB: case IR_MUL: case IR_DIV: case IR_POW:
    case IR_EQ: case IR_NE: case IR_LT: case IR_LE: case IR_GT: case IR_GE: case IR_AND: case IR_OR:
      verify_ref(ir, n->a, r, after, "an operand");
      verify_ref(ir, n->b, r, after, "an operand");
      break;
    case IR_CALL: {
      if (n->fn < 0 || n->fn >= BF_COUNT || n->fn == BF_POW) ice("IR after %s: %%%d: function %d", after, r, n->fn);
      verify_ref(ir, n->a, r, after, "an argument");
      if (builtin_funcs[n->fn].arity == 2) verify_ref(ir, n->b, r, after, "an argument");
      break;
    }
    default:
      ice("IR after %s: %%%d has op %d", after, r, (int)n->op);
    }
  }
  for (int i = 0; i < m->nparams; i++) verify_ref(ir, ir->param_default[i], ir->nnodes, after, "a parameter");
  for (int f = 0; f < m->nfields; f++)
    for (int c = 0; c < m->nclasses; c++) {
      const IrPoint *p = ir_point(ir, f, c);
      if (!p->residual_rule) {
        if (sema_class_exists(m, c)) ice("IR after %s: field %d has no residual at class %d", after, f, c);
        continue;
      }
      verify_ref(ir, p->residual, ir->nnodes, after, "a residual");
      if ((p->rhs != IR_NONE) != ir->imex) ice("IR after %s: field %d at class %d: rhs %d in a%s IMEX program", after, f, c,
                                               p->rhs, ir->imex ? "n" : " non-");
      if (p->rhs != IR_NONE) verify_ref(ir, p->rhs, ir->nnodes, after, "a right-hand side");
      if (p->initial != IR_NONE) verify_ref(ir, p->initial, ir->nnodes, after, "an initial guess");
      for (int e = 0; e < p->nentries; e++) {
        const IrEntry *x = &p->entries[e];
        if (x->field < 0 || x->field >= m->nfields || x->offset < 0 || x->offset >= ir->noffsets)
          ice("IR after %s: entry %d of field %d", after, e, f);
        if (x->derived != IR_NONE) verify_ref(ir, x->derived, ir->nnodes, after, "an entry");
        if (x->given != IR_NONE) verify_ref(ir, x->given, ir->nnodes, after, "an entry");
        if (x->dot != IR_NONE) verify_ref(ir, x->dot, ir->nnodes, after, "an entry");
        if (e > 0 && x->derived != IR_NONE) {
          sort_ir = ir;
          if (entry_cmp(&p->entries[e - 1], x) >= 0) ice("IR after %s: entries of field %d not sorted", after, f);
        }
      }
    }
  for (int s = 1; s < ir->nstencil; s++)
    if (offset_cmp(ir, ir->stencil[s - 1], ir->stencil[s]) >= 0) ice("IR after %s: stencil not sorted", after);
}

/* ---- dump ---- */

static void mark(const Ir *ir, Ref r, char *live) {
  if (r == IR_NONE || live[r]) return;
  live[r] = 1;
  const IrNode *n = &ir->nodes[r];
  if (n->op <= IR_FIELD) return;
  mark(ir, n->a, live);
  mark(ir, n->b, live);
  mark(ir, n->c, live);
}

void ir_dump(const Ir *ir, FILE *out, const char *title) {
  const Model *m = ir->m;
  char *live = xcalloc((size_t)ir->nnodes + 1, 1);
  char buf[64];
  for (int i = 0; i < m->nparams; i++) mark(ir, ir->param_default[i], live);
  for (int f = 0; f < m->nfields * m->nclasses; f++) {
    const IrPoint *p = &ir->points[f];
    if (!p->residual_rule) continue;
    mark(ir, p->residual, live);
    mark(ir, p->rhs, live);
    mark(ir, p->initial, live);
    for (int e = 0; e < p->nentries; e++)
      mark(ir, p->entries[e].derived, live), mark(ir, p->entries[e].given, live), mark(ir, p->entries[e].dot, live);
  }
  fprintf(out, "# %s: IR after %s\n", ir->src->name, title);
  for (Ref r = 0; r < ir->nnodes; r++) {
    if (!live[r]) continue;
    const IrNode *n = &ir->nodes[r];
    fprintf(out, "%%%d = %s", r, op_names[n->op]);
    switch (n->op) {
    case IR_CONST: fprintf(out, " %.17g", n->num); break;
    case IR_PARAM: {
      char name[300];
      sema_param_name(m, n->a, name, sizeof name);
      fprintf(out, " %s", name);
      break;
    }
    case IR_GRID:  fprintf(out, " %s", builtin_values[n->a].name); break;
    case IR_DOT: case IR_FIELD:
      ir_offset_text(ir, n->b, buf, sizeof buf, false);
      fprintf(out, " %s%s", m->fields[n->a].name, buf);
      break;
    case IR_COEF:
      ir_offset_text(ir, n->b, buf, sizeof buf, false);
      fprintf(out, " %s%s", m->coefs[n->a]->coef.name, buf);
      break;
    case IR_CALL:
      fprintf(out, " %s %%%d", builtin_funcs[n->fn].name, n->a);
      if (n->b != IR_NONE) fprintf(out, ", %%%d", n->b);
      break;
    default:
      fprintf(out, " %%%d", n->a);
      if (n->b != IR_NONE) fprintf(out, ", %%%d", n->b);
      if (n->c != IR_NONE) fprintf(out, ", %%%d", n->c);
    }
    if (ir->hint[r]) fprintf(out, "  # %s", ir->hint[r]);  /* its name: a let, or a def call */
    fputc('\n', out);
  }
  for (int i = 0; i < m->nparams; i++) {
    char name[300];
    sema_param_name(m, i, name, sizeof name);
    fprintf(out, "param %s = %%%d\n", name, ir->param_default[i]);
  }
  for (int f = 0; f < m->nfields; f++)
    for (int c = 0; c < m->nclasses; c++) {
      const IrPoint *p = ir_point(ir, f, c);
      if (!p->residual_rule) continue;
      sema_class_name(m, c, buf, sizeof buf);
      fprintf(out, "field %s at %s:\n  residual %%%d  (line %d)\n", m->fields[f].name, buf, p->residual,
              ast_line(ir->src, p->residual_rule));
      if (p->rhs != IR_NONE) fprintf(out, "  rhs %%%d  (explicit terms, negated)\n", p->rhs);
      if (p->initial != IR_NONE) fprintf(out, "  initial %%%d  (line %d)\n", p->initial, ast_line(ir->src, p->initial_rule));
      for (int e = 0; e < p->nentries; e++) {
        const IrEntry *x = &p->entries[e];
        char off[32];
        ir_offset_text(ir, x->offset, off, sizeof off, false);
        fprintf(out, "  d/d%s%s", m->fields[x->field].name, off);
        if (x->derived != IR_NONE) fprintf(out, " = %%%d", x->derived);
        if (x->given != IR_NONE)
          fprintf(out, "  %s %%%d (line %d)%s", x->approximate ? "approximate" : "given", x->given,
                  ast_line(ir->src, x->node), x->checked ? ", checked" : "");
        if (x->dot != IR_NONE) fprintf(out, "  d/dt(%s) = %%%d", m->fields[x->field].name, x->dot);
        fputc('\n', out);
      }
    }
  if (ir->imex)
    fprintf(out, "imex: %s\n", ir->rhs_only ? "u_t = G, the RHSFunction alone" : "the IFunction without the explicit terms, the RHSFunction G");
  if (ir->nstencil) {
    fprintf(out, "stencil: %d block diagonals", ir->nstencil);
    for (int s = 0; s < ir->nstencil; s++) {
      ir_offset_text(ir, ir->stencil[s], buf, sizeof buf, false);
      fprintf(out, " %s", buf);
    }
    fputc('\n', out);
  }
  free(live);
}

bool ir_build(Ir *ir, Diag *d, IrPass dump_after, FILE *dump) {
  int errors = d->nerr;
  for (int pass = 0; pass < PASS_COUNT; pass++) {
    switch ((IrPass)pass) {
    case PASS_LOWER:    ir_lower(ir, d); break;
    case PASS_DERIVE:   derive(ir, d); break;
    case PASS_SIMPLIFY: simplify_all(ir); emitted_size(ir, d); break;
    case PASS_CHECK:    check(ir, d); warn_exact_approximations(ir, d); break;
    case PASS_MIRROR:   ir_mirror(ir); break;
    case PASS_STENCIL:  stencil(ir); break;
    case PASS_SHIFT:    shift(ir); break;
    case PASS_COUNT:    break;
    }
    ir_verify(ir, ir_pass_names[pass]);
    if ((int)dump_after == pass) ir_dump(ir, dump, ir_pass_names[pass]);
    if (d->nerr > errors) return false;
  }
  return true;
}
