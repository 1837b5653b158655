/*
** sema_expr.c: checks one expression. Resolves every name (field,
** parameter, let, function argument, built-in), checks calls and their
** arity, checks neighbour offsets against the grid and the declared
** stencil, enforces what the expression's place allows (no fields in an
** initial guess, numbers only in a range, ...), and collects the field
** reads it makes. Errors are reported and checking goes on.
*/
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sema_int.h"
#include "util.h"



static void add(Sema *s, ReadSet *rs, bool coef, int field, const int *off, Loc at) {
  for (int i = 0; i < rs->n; i++) {
    Read *r = &rs->v[i];
    if (r->coef == coef && r->field == field && memcmp(r->off, off, sizeof r->off) == 0) return;
  }
  if (rs->n == rs->cap) {
    int cap = rs->cap ? 2 * rs->cap : 8;
    Read *v = arena_alloc(s->a, sizeof *v * (size_t)cap);
    if (rs->n) memcpy(v, rs->v, sizeof *v * (size_t)rs->n);
    rs->v = v;
    rs->cap = cap;
  }
  Read *r = &rs->v[rs->n++];
  r->coef = coef;
  r->reported = false;
  r->field = field;
  memcpy(r->off, off, sizeof r->off);
  r->at = at;
}

void reads_add(Sema *s, ReadSet *rs, int field, const int *off, Loc at) { add(s, rs, false, field, off, at); }

void reads_add_coef(Sema *s, ReadSet *rs, int coef, const int *off, Loc at) { add(s, rs, true, coef, off, at); }

void reads_merge(Sema *s, ReadSet *into, const ReadSet *from) {
  for (int i = 0; i < from->n; i++) add(s, into, from->v[i].coef, from->v[i].field, from->v[i].off, from->v[i].at);
}

const char *sema_kind_name(const Node *decl) {
  switch (decl->kind) {
  case N_FIELD: return "a field";
  case N_PARAM: return "a parameter";
  case N_LET:   return "a let";
  case N_COEF:  return "a coefficient";
  case N_DEF:   return "a function";
  case N_NAME:  return "a function argument";
  default:      return "a name";
  }
}

static const char *ctx_place(Ctx cx) {
  switch (cx) {
  case CX_BOUND:   return "grid extents and parameter ranges must be numbers";
  case CX_PARAM:   return "a parameter default is one number for the whole grid";
  case CX_DEF:     return "a function body can use its arguments, parameters, grid sizes and spacings";
  case CX_INITIAL: return "the initial guess cannot read fields: it is what they start from";
  case CX_COEF:    return "a coefficient is given by the coordinates, parameters and functions of its point: "
                          "it cannot read the fields";
  case CX_POINT:   return "";
  }
  return "";
}

/* op on a and b as the generated C computes it; false for an operator that is not arithmetic. */
static bool fold_op(Op op, double a, double b, double *value) {
  switch (op) {
  case OP_NEG:  *value = -a; break;
  case OP_NOT:  *value = a == 0; break;
  case OP_PLUS: *value = a; break;
  case OP_ADD:  *value = a + b; break;
  case OP_SUB:  *value = a - b; break;
  case OP_MUL:  *value = a * b; break;
  case OP_DIV:  *value = a / b; break;
  case OP_POW:  *value = pow(a, b); break;
  case OP_EQ:   *value = a == b; break;
  case OP_NE:   *value = a != b; break;
  case OP_LT:   *value = a < b; break;
  case OP_LE:   *value = a <= b; break;
  case OP_GT:   *value = a > b; break;
  case OP_GE:   *value = a >= b; break;
  case OP_AND:  *value = a != 0 && b != 0; break;
  case OP_OR:   *value = a != 0 || b != 0; break;
  default: return false;
  }
  return true;
}

bool sema_fold(const Node *e, double *value) {
  double a, b = 0;
  switch (e->kind) {
  case N_NUM:
    *value = e->num.value;
    return true;
  case N_NAME:
    if (e->builtin == BV_PI) { *value = STN_PI; return true; }
    if (e->builtin == BV_INF) { *value = INFINITY; return true; }
    if (e->builtin == BV_TRUE || e->builtin == BV_FALSE) { *value = e->builtin == BV_TRUE; return true; }
    return false;
  case N_UNARY:
    return sema_fold(e->op.a, &a) && fold_op(e->op.op, a, 0, value);
  case N_BINARY:
    return sema_fold(e->op.a, &a) && sema_fold(e->op.b, &b) && fold_op(e->op.op, a, b, value);
  default:
    return false;
  }
}

void sema_op_text(char *buf, int size, const char *name, bool infix, int nargs, double a, double b) {
  if (infix) snprintf(buf, (size_t)size, "%g %s %g", a, name, b);
  else if (nargs == 2) snprintf(buf, (size_t)size, "%s(%g, %g)", name, a, b);
  else snprintf(buf, (size_t)size, "%s(%g)", name, a);
}

void sema_report_nonfinite(Diag *d, Loc at, const char *text, double v, bool operands_finite, bool pole) {
  if (isnan(v)) {
    diag_error(d, at, "'%s' is not a number (NaN)", text);
    if (operands_finite)
      diag_hint(d, "the argument is outside the function's domain: sqrt and log take numbers >= 0, asin and acos "
                   "numbers in [-1, 1], and a negative number has no fractional power");
    else
      diag_hint(d, "inf - inf, 0 * inf, inf / inf and mod(inf, b) have no value; inf is meant for open parameter ranges");
  } else {
    diag_error(d, at, "'%s' is %s, not a finite number", text, v < 0 ? "-inf" : "inf");
    if (pole)
      diag_hint(d, "the function has no finite value at 0");
    else if (operands_finite)
      diag_hint(d, "it overflows: a double holds magnitudes up to about 1.8e308");
  }
}

/* sema_fold that reports the operation where a value stops being finite: one
   giving NaN, or inf from finite operands (a value of inf the user wrote may
   flow on: 1/inf and -inf are fine). 1: constant, value set; 0: not a
   constant; -1: reported, and so is everything computed from it. */
static int fold_checked(Sema *s, const Node *e, double *value) {
  double a, b;
  int ka, kb;
  switch (e->kind) {
  case N_UNARY:
    ka = fold_checked(s, e->op.a, &a);
    if (ka != 1) return ka;
    return fold_op(e->op.op, a, 0, value) ? 1 : 0;  /* -, not, +: finite in, finite out */
  case N_BINARY:
    ka = fold_checked(s, e->op.a, &a);
    kb = fold_checked(s, e->op.b, &b);
    if (ka < 0 || kb < 0) return -1;
    if (ka == 0 || kb == 0 || !fold_op(e->op.op, a, b, value)) return 0;
    bool finite_in = isfinite(a) && isfinite(b);
    if (!isfinite(*value) && (isnan(*value) || finite_in)) {
      char text[96];
      sema_op_text(text, sizeof text, ast_op_text(e->op.op), true, 2, a, b);
      sema_report_nonfinite(s->d, e->span, text, *value, finite_in, a == 0 || b == 0);
      return -1;
    }
    return 1;
  default:
    return sema_fold(e, value) ? 1 : 0;
  }
}

bool sema_fold_checked(Sema *s, const Node *e, double *value, bool *reported) {
  int k = fold_checked(s, e, value);
  if (reported) *reported = k < 0;
  return k > 0;
}

/* The offset as the user would write it, for messages: u[-1,0]. */
static void offset_text(const Node *e, char *buf, int size) {
  int len = snprintf(buf, (size_t)size, "%s[", e->offset.name);
  for (int i = 0; i < e->offset.ncomp && len < size - 16; i++)
    len += snprintf(buf + len, (size_t)(size - len), "%s%d", i ? "," : "", e->offset.comp[i]);
  if (len < size - 2) snprintf(buf + len, (size_t)(size - len), "]");
}

/* Checks a field's neighbour offset against the grid and the declared stencil. */
bool sema_check_offset(Sema *s, const Node *e) {
  const Model *m = s->m;
  if (!s->have_grid) return false;
  char text[96];
  offset_text(e, text, sizeof text);
  if (e->offset.ncomp != m->dim) {
    diag_error(s->d, e->loc, "%s has %d offset component%s but the grid is %dD", text, e->offset.ncomp,
               e->offset.ncomp == 1 ? "" : "s", m->dim);
    diag_hint(s->d, "give one offset per direction, e.g. %s", m->dim == 1 ? "u[-1]" : m->dim == 2 ? "u[-1,0]" : "u[-1,0,0]");
    return false;
  }
  int nonzero = 0, far = 0;
  for (int d = 0; d < e->offset.ncomp; d++) {
    int c = e->offset.comp[d] < 0 ? -e->offset.comp[d] : e->offset.comp[d];
    if (c) nonzero++;
    if (c > far) far = c;
  }
  bool ok = true;
  if (m->shape == SHAPE_STAR && nonzero > 1) {
    diag_error(s->d, e->loc, "%s is a diagonal neighbour, outside the declared star stencil", text);
    diag_hint(s->d, "a star stencil reaches along one direction at a time; declare 'stencil box width %d;' "
                    "to read diagonal neighbours", far > m->width ? far : m->width);
    ok = false;
  } else if (far > m->width) {
    diag_error(s->d, e->loc, "%s is %d points away, beyond the declared stencil width %d", text, far, m->width);
    if (far <= MAX_WIDTH)
      diag_hint(s->d, "declare 'stencil %s width %d;' to reach that far", m->shape == SHAPE_STAR ? "star" : "box", far);
    else
      diag_hint(s->d, "stencils reach at most %d points", MAX_WIDTH);
    ok = false;
  }
  return ok;
}

/* While a jacobian block is checked: a let called name in a residual block it does not see
   (its own field's, standing below it, before another field's), and that block in *block. */
static const Node *unseen_residual_let(const Sema *s, const char *name, const Node **block) {
  if (s->jacobian_field < 0) return NULL;
  const char *field = s->m->fields[s->jacobian_field].name;
  for (int own = 1; own >= 0; own--)
    for (const Node *b = s->m->program->list.items; b; b = b->next) {
      if (b->kind != N_BLOCK || b->block.what != BLOCK_RESIDUAL || (strcmp(b->block.field, field) == 0) != own) continue;
      for (const Node *it = b->block.items; it; it = it->next)
        if (it->kind == N_LET && strcmp(it->let.name, name) == 0) {
          *block = b;
          return it;
        }
    }
  return NULL;
}

static void undefined(Sema *s, const Node *e, const char *name, bool function) {
  const Node *later = scope_find(&s->later, name);
  const Node *block = NULL, *unseen = function ? NULL : unseen_residual_let(s, name, &block);
  const char *field = s->jacobian_field >= 0 ? s->m->fields[s->jacobian_field].name : NULL;
  if (function)
    diag_error(s->d, e->loc, "unknown function '%s'", name);
  else
    diag_error(s->d, e->loc, "'%s' is not defined", name);
  if (unseen && strcmp(block->block.field, field) == 0) {
    diag_hint(s->d, "'%s' is a let of the residual block of '%s' at line %d, below this jacobian block; a jacobian "
                    "block sees its residual's lets only below that block: move this one after it", name, field,
              ast_line(s->d->src, unseen));
  } else if (unseen) {
    diag_hint(s->d, "'%s' is a let of the residual block of '%s' at line %d; the jacobian block of '%s' sees only "
                    "the lets of the residual of '%s': declare '%s' at the top level to share it", name,
              block->block.field, ast_line(s->d->src, unseen), field, field, name);
  } else if (later && later->loc.off > e->loc.off) {
    diag_hint(s->d, "'%s' is declared below, at line %d; declare it before its first use", name,
              ast_line(s->d->src, later));
  } else if (later && !function && later->kind != N_DEF && later->loc.off < e->loc.off) {
    diag_hint(s->d, "this is the declaration of '%s' itself; a declaration cannot use the name it declares", name);
  } else {
    sema_suggest(s, name, function);
  }
}

static ExprInfo builtin_value_use(Sema *s, Node *e, int bv, Ctx cx) {
  ExprInfo r = {0};
  const BuiltinValueInfo *info = &builtin_values[bv];
  e->builtin = bv;
  if (s->have_grid && info->axis >= s->m->dim) {
    diag_error(s->d, e->loc, "there is no '%s' in a %dD grid", info->name, s->m->dim);
    return r;
  }
  if (bv == BV_T && cx != CX_POINT) {
    diag_error(s->d, e->loc, "'t' (the time) cannot be used here");
    diag_hint(s->d, "%s", cx == CX_INITIAL ? "an initial block gives the values at the start time, t = 0"
                        : cx == CX_DEF ? "a function body cannot read the time; pass t as an argument"
                        : "the time changes from step to step: it may stand in residual and jacobian blocks and in lets");
    return r;
  }
  if ((cx == CX_BOUND && bv != BV_PI && bv != BV_INF) ||
      ((cx == CX_PARAM || cx == CX_DEF) && info->pointwise)) {
    diag_error(s->d, e->loc, "'%s' (the %s) cannot be used here", info->name, info->doc);
    diag_hint(s->d, "%s", ctx_place(cx));
    return r;
  }
  r.pointwise = info->pointwise;
  return r;
}

static void read_field(Sema *s, Node *e, const Node *decl, const int *off, Ctx cx, ReadSet *reads, ExprInfo *r) {
  e->decl = decl;
  if (cx != CX_POINT) {
    diag_error(s->d, e->loc, "field '%s' cannot be read here", decl->field.name);
    diag_hint(s->d, "%s", cx == CX_DEF ? "a function body cannot read fields; pass the value as an argument"
                                        : ctx_place(cx));
    return;
  }
  r->fields = r->pointwise = true;
  if (reads) reads_add(s, reads, decl->index, off, e->loc);
}

/* A coefficient read: pointwise, no field; at a neighbour only where the equations are (a
   coefficient's own value is one point's). */
static void read_coef(Sema *s, Node *e, const Node *decl, const int *off, Ctx cx, ReadSet *reads, ExprInfo *r) {
  bool neighbour = false;
  for (int d = 0; d < MAX_DIM; d++) neighbour |= off[d] != 0;
  e->decl = decl;
  s->coef_used[decl->index] = true;
  if (cx == CX_PARAM || cx == CX_DEF) {
    diag_error(s->d, e->loc, "coefficient '%s' changes from point to point and cannot be used here", decl->coef.name);
    diag_hint(s->d, "%s", cx == CX_DEF ? "a function body cannot read coefficients; pass the value as an argument"
                                        : ctx_place(cx));
    return;
  }
  if (cx == CX_COEF && neighbour) {
    diag_error(s->d, e->loc, "a coefficient's value is computed at one point and cannot read '%s' at a neighbour",
               decl->coef.name);
    diag_hint(s->d, "read '%s' at its own point here, and at neighbours in the residual and jacobian blocks",
              decl->coef.name);
    return;
  }
  r->pointwise = true;
  if (reads && neighbour) reads_add_coef(s, reads, decl->index, off, e->loc);
}

static ExprInfo name_use(Sema *s, Node *e, Ctx cx, ReadSet *reads) {
  ExprInfo r = {0};
  const char *name = e->name.name;
  const Node *decl = scope_find(s->scope, name);
  if (!decl) {
    int bv = builtin_value_lookup(name);
    if (bv == BV_T && !s->m->time_dependent) {
      diag_error(s->d, e->loc, "'t' is not defined");
      diag_hint(s->d, "'t' is the time of a time-dependent program, one whose residuals take a time derivative "
                      "such as dt(u); this program has none, so it is steady (F(u) = 0)");
      return r;
    }
    if (bv >= 0) return builtin_value_use(s, e, bv, cx);
    if (cx == CX_BOUND) {
      diag_error(s->d, e->loc, "'%s' cannot be used here", name);
      diag_hint(s->d, "%s", ctx_place(cx));
      return r;
    }
    if (scope_find(&s->funcs, name) || builtin_func_lookup(name) >= 0) {
      diag_error(s->d, e->loc, "'%s' is a function; call it as %s(...)", name, name);
      return r;
    }
    undefined(s, e, name, false);
    return r;
  }
  const Scope *shared = sema_shared_lets(s);
  const Node *global = shared && scope_find_here(shared, name) == decl ? scope_find_here(&s->global, name) : NULL;
  if (global) {  /* declared at the top level after the residual block that has the let */
    diag_error(s->d, e->loc, "'%s' is ambiguous here: the let of the residual block of '%s', and %s declared below "
               "that block", name, s->m->fields[s->jacobian_field].name, sema_kind_name(global));
    diag_note(s->d, decl->loc, "the residual's let '%s' is here", name);
    diag_note(s->d, global->loc, "%s '%s' is here", global->kind == N_PARAM ? "the parameter" : "the let", name);
    diag_hint(s->d, "a jacobian block sees the lets of its residual and the names declared above it; rename one of the two");
    return r;
  }
  e->decl = decl;
  if (cx == CX_BOUND && decl->kind != N_NAME) {
    diag_error(s->d, e->loc, "'%s' is %s and cannot be used here", name, sema_kind_name(decl));
    diag_hint(s->d, "%s", ctx_place(cx));
    return r;
  }
  switch (decl->kind) {
  case N_FIELD: {
    int zero[MAX_DIM] = {0};
    read_field(s, e, decl, zero, cx, reads, &r);
    break;
  }
  case N_PARAM:
    s->param_used[decl->index] = true;
    if (s->m->param_len[decl->index]) {
      int n = s->m->param_len[decl->index];
      diag_error(s->d, e->loc, "'%s' is a list of %d values: read one of them, %s[0] to %s[%d]", name, n, name, name,
                 n - 1);
    }
    break;
  case N_LET: {
    LetInfo *li = &s->lets[decl->index];
    li->used = true;
    if ((cx == CX_PARAM || cx == CX_DEF) && li->pointwise) {
      diag_error(s->d, e->loc, "let '%s' changes from point to point and cannot be used here", name);
      diag_hint(s->d, "%s", ctx_place(cx));
    } else if ((cx == CX_INITIAL || cx == CX_COEF) && li->fields) {
      diag_error(s->d, e->loc, "let '%s' reads fields and cannot be used in %s", name,
                 cx == CX_INITIAL ? "an initial guess" : "a coefficient");
      diag_hint(s->d, "%s", ctx_place(cx));
    } else if (li->dt && s->jacobian_field >= 0) {
      diag_error(s->d, e->loc, "let '%s' takes a time derivative and cannot be used in a jacobian block", name);
      diag_hint(s->d, "a jacobian block gives the entries d(F)/du; the part of the time derivative, shift * "
                      "d(F)/d(dt(u)), is always derived from the residual");
    } else {
      r.fields = li->fields;
      r.pointwise = li->pointwise;
      r.dt = li->dt;
      if (reads) reads_merge(s, reads, &li->reads);
    }
    break;
  }
  case N_COEF: {
    int zero[MAX_DIM] = {0};
    read_coef(s, e, decl, zero, cx, reads, &r);
    break;
  }
  case N_NAME:  /* a function's argument */
    break;
  default:
    ice("name '%s' bound to node kind %d", name, (int)decl->kind);
  }
  return r;
}

/* blocks[1]: a value of a list parameter, at an index from 0 to its length - 1 written as a
   number. The same in every context: one number for the whole grid. */
static ExprInfo list_element(Sema *s, Node *e, const Node *decl) {
  ExprInfo r = {0};
  int n = s->m->param_len[decl->index];
  s->param_used[decl->index] = true;
  if (e->offset.ncomp != 1) {
    diag_error(s->d, e->span, "'%s' is a list: one index reads a value, such as %s[0]", e->offset.name, e->offset.name);
    return r;
  }
  if (e->offset.comp[0] < 0 || e->offset.comp[0] >= n) {
    diag_error(s->d, e->span, "index %d is outside the list '%s', whose %d values are %s[0] to %s[%d]", e->offset.comp[0],
               e->offset.name, n, e->offset.name, e->offset.name, n - 1);
    diag_note(s->d, decl->loc, "'%s' is declared here", e->offset.name);
    return r;
  }
  e->decl = decl;
  return r;
}

static ExprInfo offset_use(Sema *s, Node *e, Ctx cx, ReadSet *reads) {
  ExprInfo r = {0};
  const char *name = e->offset.name;
  const Node *decl = scope_find(s->scope, name);
  if (!decl) {
    if (builtin_value_lookup(name) >= 0)
      diag_error(s->d, e->offset.name_loc, "'%s' is a built-in value, not a field: only fields have neighbours", name);
    else
      undefined(s, e, name, false);
    return r;
  }
  if (decl->kind == N_PARAM && s->m->param_len[decl->index])
    return list_element(s, e, decl);
  if (decl->kind != N_FIELD && decl->kind != N_COEF) {
    diag_error(s->d, e->offset.name_loc, "'%s' is %s, not a field: only fields and coefficients have neighbours", name,
               sema_kind_name(decl));
    return r;
  }
  e->decl = decl;
  if (decl->kind == N_COEF) {
    if (!sema_check_offset(s, e)) return r;
    int off[MAX_DIM] = {0};
    for (int d = 0; d < e->offset.ncomp && d < MAX_DIM; d++) off[d] = e->offset.comp[d];
    read_coef(s, e, decl, off, cx, reads, &r);
    return r;
  }
  if (!sema_check_offset(s, e)) return r;
  int off[MAX_DIM] = {0};
  for (int d = 0; d < e->offset.ncomp && d < MAX_DIM; d++) off[d] = e->offset.comp[d];
  read_field(s, e, decl, off, cx, reads, &r);
  return r;
}

/* dt(u): the time derivative of field u at the point, in residual blocks and lets (4.20). */
static ExprInfo time_derivative(Sema *s, Node *e, Ctx cx, ReadSet *reads) {
  ExprInfo r = {0};
  Node *arg = e->call.args;
  if (e->call.nargs != 1) {
    diag_error(s->d, e->loc, "dt() takes 1 argument, a field, but is given %d", e->call.nargs);
    diag_hint(s->d, "dt(u) is the time derivative of the field u at the point");
    return r;
  }
  if (cx != CX_POINT || s->jacobian_field >= 0) {
    diag_error(s->d, e->loc, "a time derivative cannot be used here");
    diag_hint(s->d, "%s", s->jacobian_field >= 0 && cx == CX_POINT
                  ? "a jacobian block gives the entries d(F)/du; the part of the time derivative, shift * "
                    "d(F)/d(dt(u)), is always derived from the residual"
                  : cx == CX_INITIAL ? "an initial block gives the values at the start time; it has no time derivative"
                  : cx == CX_DEF ? "a function body cannot take a time derivative; pass dt(u) as an argument"
                  : "time derivatives stand in residual blocks and in the lets they use");
    return r;
  }
  if (arg->kind == N_CALL && strcmp(arg->call.name, "dt") == 0) {
    diag_error(s->d, arg->loc, "dt(dt(...)) is a second time derivative, which TS's form F(t, u, dt(u)) = 0 does not have");
    diag_hint(s->d, "write the equation as a first-order system: a field v with 'dt(u) - v' in u's residual "
                    "and dt(v) in v's");
    return r;
  }
  const char *name = arg->kind == N_NAME ? arg->name.name : arg->kind == N_OFFSET ? arg->offset.name : NULL;
  const Node *decl = name ? scope_find(s->scope, name) : NULL;
  if (arg->kind == N_OFFSET && decl && decl->kind == N_FIELD) {
    diag_error(s->d, arg->span, "dt() takes the field at the point itself, not at a neighbour");
    diag_hint(s->d, "each point's equation holds its own time derivative, dt(%s); a neighbour's belongs to the "
                    "neighbour's equation", name);
    return r;
  }
  if (arg->kind != N_NAME) {
    diag_error(s->d, arg->span, "dt() takes the name of a field, not an expression");
    diag_hint(s->d, "take the derivative term by term: dt(u) + dt(v), or c * dt(u) for a c that does not change in time");
    return r;
  }
  if (!decl) {
    if (builtin_value_lookup(name) >= 0)
      diag_error(s->d, arg->loc, "'%s' is a built-in value, not a field: dt() takes a field", name);
    else
      undefined(s, arg, name, false);
    return r;
  }
  if (decl->kind != N_FIELD) {
    diag_error(s->d, arg->loc, "'%s' is %s, not a field: dt() takes a field", name, sema_kind_name(decl));
    if (decl->kind == N_LET) diag_hint(s->d, "a let is a formula: take the time derivative of the fields it reads");
    else if (decl->kind == N_PARAM) diag_hint(s->d, "a parameter keeps its value for the whole run: its time derivative is 0");
    return r;
  }
  int zero[MAX_DIM] = {0};
  arg->decl = e->decl = decl;
  r.fields = r.pointwise = r.dt = true;
  if (reads) reads_add(s, reads, decl->index, zero, arg->loc);  /* the Jacobian's column of the point */
  return r;
}

bool sema_is_call(const Node *e, const char *name) { return e->kind == N_CALL && strcmp(e->call.name, name) == 0; }

bool sema_top_term(const Node *body, const Node *e) {
  if (body == e) return true;
  if (body->kind == N_BINARY && (body->op.op == OP_ADD || body->op.op == OP_SUB))
    return sema_top_term(body->op.a, e) || sema_top_term(body->op.b, e);
  if (body->kind == N_UNARY && (body->op.op == OP_NEG || body->op.op == OP_PLUS)) return sema_top_term(body->op.a, e);
  return false;
}

/* explicit(e): a term of a residual that TS's IMEX methods take explicitly (4.20), only as an
   operand of the residual rule's outermost sum, in a time-dependent program, without dt. */
static ExprInfo explicit_term(Sema *s, Node *e, Ctx cx, ReadSet *reads) {
  ExprInfo r = {0};
  if (e->call.nargs != 1) {
    diag_error(s->d, e->loc, "explicit() takes 1 argument, a term of the residual, but is given %d", e->call.nargs);
    diag_hint(s->d, "explicit(e) marks the term e as explicit for IMEX time stepping: dt(u) - lap(u) + explicit(u^3 - u)");
    return r;
  }
  if (s->in_explicit) {
    diag_error(s->d, e->loc, "explicit(...) inside explicit(...)");
    diag_hint(s->d, "the outer explicit(...) already makes its whole argument explicit: drop the inner one");
    return r;
  }
  if (cx != CX_POINT || !s->residual_body || s->jacobian_field >= 0) {
    diag_error(s->d, e->loc, "explicit(...) cannot be used here");
    diag_hint(s->d, "%s", s->jacobian_field >= 0 && cx == CX_POINT
                  ? "a jacobian block gives TS's IJacobian, which leaves the explicit terms out: they have no entries"
                  : cx == CX_INITIAL ? "an initial block gives the state at t = 0; only residual terms are explicit or implicit"
                  : cx == CX_DEF ? "a function body cannot mark terms explicit; write explicit(f(...)) in the residual rule"
                  : cx == CX_POINT ? "explicit(...) stands in a residual rule itself, not in a let: write explicit(name) "
                                     "there, with the let's name"
                  : "explicit(...) marks a term of a residual rule, for IMEX time stepping");
    return r;
  }
  if (!sema_top_term(s->residual_body, e)) {
    diag_error(s->d, e->loc, "explicit(...) must be a term of the residual's outermost sum");
    diag_hint(s->d, "the residual is F + E, E the sum of its explicit terms: write explicit(...) as an operand of "
                    "the outermost + and -, with any factor inside it, as in dt(u) - lap(u) + explicit(c * u^3)");
    return r;
  }
  if (!s->m->time_dependent) {
    diag_error(s->d, e->loc, "explicit(...) marks a term for time stepping, but this program has no time derivative");
    diag_hint(s->d, "a steady program solves F(u) = 0 with Newton's method, all of it implicit; explicit terms "
                    "belong to a residual with dt(u) (4.20)");
    return r;
  }
  s->in_explicit = true;
  r = sema_expr(s, e->call.args, cx, reads);
  s->in_explicit = false;
  if (r.dt) {
    diag_error(s->d, e->call.args->span, "an explicit term cannot take a time derivative");
    diag_hint(s->d, "the time derivatives make up TS's implicit part F(t, u, u_t): leave dt(...) outside explicit(...)");
    return r;
  }
  s->m->imex = true;
  return r;
}

static ExprInfo call(Sema *s, Node *e, Ctx cx, ReadSet *reads) {
  ExprInfo r = {0};
  if (strcmp(e->call.name, "dt") == 0) return time_derivative(s, e, cx, reads);
  if (strcmp(e->call.name, "explicit") == 0) return explicit_term(s, e, cx, reads);
  for (Node *arg = e->call.args; arg; arg = arg->next) {
    ExprInfo a = sema_expr(s, arg, cx, reads);
    r.fields |= a.fields;
    r.pointwise |= a.pointwise;
    r.dt |= a.dt;
  }
  const char *name = e->call.name;
  const Node *def = scope_find(&s->funcs, name);
  int arity;
  if (def) {
    e->decl = def;
    s->def_used[def->index] = true;
    arity = def->def.nparams;
  } else {
    int bf = builtin_func_lookup(name);
    if (bf < 0) {
      const Node *value = scope_find(s->scope, name);
      if (value)
        diag_error(s->d, e->loc, "'%s' is %s, not a function", name, sema_kind_name(value));
      else if (builtin_value_lookup(name) >= 0)
        diag_error(s->d, e->loc, "'%s' is a built-in value, not a function", name);
      else
        undefined(s, e, name, true);
      return r;
    }
    e->builtin = bf;
    arity = builtin_funcs[bf].arity;
  }
  if (cx == CX_BOUND) {
    diag_error(s->d, e->loc, "a function call cannot be used here");
    diag_hint(s->d, "%s", ctx_place(cx));
    return r;
  }
  if (e->call.nargs != arity) {
    diag_error(s->d, e->loc, "%s() takes %d argument%s but is given %d", name, arity, arity == 1 ? "" : "s",
               e->call.nargs);
    if (def) diag_hint(s->d, "'%s' is defined at line %d", name, ast_line(s->d->src, def));
    else diag_hint(s->d, "%s(%s): %s", name, builtin_funcs[e->builtin].args, builtin_funcs[e->builtin].doc);
    return r;
  }
  /* mod(a, 0) is NaN at every point: refused like a literal 0 after '/' (sema_expr); a divisor
     that is 0 only once names are replaced by their values is caught when lowering. */
  double v;
  if (!def && e->builtin == BF_MOD && sema_fold(e->call.args->next, &v) && v == 0) {
    diag_error(s->d, e->call.args->next->span, "division by zero: the divisor of mod() is always 0");
    diag_hint(s->d, "mod(a, b) is a - b * floor(a / b), which has no value for b = 0");
  }
  return r;
}

ExprInfo sema_expr(Sema *s, Node *e, Ctx cx, ReadSet *reads) {
  ExprInfo r = {0}, a, b, c;
  switch (e->kind) {
  case N_NUM:
    return r;
  case N_NAME:
    return name_use(s, e, cx, reads);
  case N_OFFSET:
    return offset_use(s, e, cx, reads);
  case N_CALL:
    return call(s, e, cx, reads);
  case N_UNARY:
    return sema_expr(s, e->op.a, cx, reads);
  case N_BINARY: {
    a = sema_expr(s, e->op.a, cx, reads);
    b = sema_expr(s, e->op.b, cx, reads);
    double v;
    if (e->op.op == OP_DIV && sema_fold(e->op.b, &v) && v == 0)
      diag_error(s->d, e->op.b->span, "division by zero: the divisor is always 0");
    r.fields = a.fields || b.fields;
    r.pointwise = a.pointwise || b.pointwise;
    r.dt = a.dt || b.dt;
    return r;
  }
  case N_IF:
    a = sema_expr(s, e->op.a, cx, reads);
    b = sema_expr(s, e->op.b, cx, reads);
    c = sema_expr(s, e->op.c, cx, reads);
    r.fields = a.fields || b.fields || c.fields;
    r.pointwise = a.pointwise || b.pointwise || c.pointwise;
    r.dt = a.dt || b.dt || c.dt;
    return r;
  default:
    ice("sema_expr on node kind %d", (int)e->kind);
  }
}
