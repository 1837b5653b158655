/*
** sema.c: the semantic pass. Declarations are checked in source order
** (a name must be declared before it is used, which also rules out cycles);
** the grid, the stencil, the fields and the precedence are collected first
** wherever they stand, since every expression needs them. Expressions are
** checked by sema_expr.c, regions and precedence by sema_regions.c.
*/
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sema_int.h"
#include "util.h"

/* ----------------------------------------------------------- scopes */

void scope_init(Scope *sc, Scope *parent) {
  sc->parent = parent;
  sc->cap = 16;
  sc->count = 0;
  sc->slots = xcalloc((size_t)sc->cap, sizeof *sc->slots);
}

void scope_free(Scope *sc) {
  free(sc->slots);
  sc->slots = NULL;
}

static size_t slot_of(const char *name, int cap) { return ((uintptr_t)name >> 4) * 2654435761u & (size_t)(cap - 1); }

static const Node *find_here(const Scope *sc, const char *name) {
  for (size_t i = slot_of(name, sc->cap);; i = (i + 1) & (size_t)(sc->cap - 1)) {
    if (!sc->slots[i].name) return NULL;
    if (sc->slots[i].name == name) return sc->slots[i].decl;
  }
}

const Node *scope_find_here(const Scope *sc, const char *name) { return find_here(sc, name); }

const Node *scope_find(const Scope *sc, const char *name) {
  for (; sc; sc = sc->parent) {
    const Node *d = find_here(sc, name);
    if (d) return d;
  }
  return NULL;
}

void scope_put(Scope *sc, const char *name, const Node *decl) {
  if (2 * (sc->count + 1) > sc->cap) {
    ScopeSlot *old = sc->slots;
    int oldcap = sc->cap;
    sc->cap *= 2;
    sc->slots = xcalloc((size_t)sc->cap, sizeof *sc->slots);
    sc->count = 0;
    for (int i = 0; i < oldcap; i++)
      if (old[i].name) scope_put(sc, old[i].name, old[i].decl);
    free(old);
  }
  size_t i = slot_of(name, sc->cap);
  while (sc->slots[i].name && sc->slots[i].name != name) i = (i + 1) & (size_t)(sc->cap - 1);
  if (!sc->slots[i].name) sc->count++;
  sc->slots[i].name = name;
  sc->slots[i].decl = decl;
}

/* ------------------------------------------------------ suggestions */

int sema_distance(const char *a, const char *b) {
  int la = (int)strlen(a), lb = (int)strlen(b);
  if (la > 32 || lb > 32) return 99;
  int row[33];
  for (int j = 0; j <= lb; j++) row[j] = j;
  for (int i = 1; i <= la; i++) {
    int diag = row[0];
    row[0] = i;
    for (int j = 1; j <= lb; j++) {
      int up = row[j];
      int best = diag + (a[i - 1] != b[j - 1]);
      if (row[j] + 1 < best) best = row[j] + 1;
      if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
      row[j] = best;
      diag = up;
    }
  }
  return row[lb];
}

typedef struct Best {
  const char *name;
  int         dist;
  int         order;  /* declaration offset; built-ins after every declaration */
} Best;

/* The closest name wins; among equally close ones the first declared, so the
   hint does not depend on hash-table order. A name must keep at least one
   letter of the one asked for: 'i' is no suggestion for 'u'. */
static void consider(Best *b, const char *want, const char *name, int order) {
  int d = sema_distance(want, name);
  int len = (int)strlen(want), limit = len <= 3 ? 1 : 2;
  if (d == 0 || d > limit || d >= len) return;
  if (d < b->dist || (d == b->dist && order < b->order)) {
    b->name = name;
    b->dist = d;
    b->order = order;
  }
}

static void consider_scope(Best *b, const char *want, const Scope *sc) {
  for (; sc; sc = sc->parent)
    for (int i = 0; i < sc->cap; i++)
      if (sc->slots[i].name) consider(b, want, sc->slots[i].name, sc->slots[i].decl->loc.off);
}

void sema_suggest(Sema *s, const char *name, bool functions) {
  Best b = {NULL, 99, 0};
  if (functions) {
    consider_scope(&b, name, &s->funcs);
    for (int i = 0; i < BF_COUNT; i++) consider(&b, name, builtin_funcs[i].name, INT_MAX);
  } else {
    consider_scope(&b, name, s->scope);
    for (int i = 0; i < BV_COUNT; i++)
      if ((builtin_values[i].axis < s->m->dim || !s->have_grid) && (i != BV_T || s->m->time_dependent))
        consider(&b, name, builtin_values[i].name, INT_MAX);
  }
  if (b.name) diag_hint(s->d, "did you mean '%s'?", b.name);
}

/* ------------------------------------------------------- declarations */

Scope *sema_shared_lets(const Sema *s) {
  if (s->jacobian_field < 0 || !s->residual_lets[s->jacobian_field].slots) return NULL;
  return &s->residual_lets[s->jacobian_field];
}

static void previous(Sema *s, const Node *decl) {
  diag_note(s->d, decl->loc, "'%s' was first declared here",
            decl->kind == N_FIELD ? decl->field.name : decl->kind == N_PARAM ? decl->param.name
            : decl->kind == N_LET ? decl->let.name : decl->kind == N_DEF ? decl->def.name
            : decl->kind == N_COEF ? decl->coef.name : decl->name.name);
}

/* Adds a value name to the innermost scope, refusing built-ins and duplicates. */
static void declare(Sema *s, const char *name, const Node *decl) {
  int bv = builtin_value_lookup(name);
  /* k and z belong to 3D grids only: a 2D program may use them as names. */
  if (bv >= 0 && s->have_grid && builtin_values[bv].axis >= s->m->dim) bv = -1;
  /* t is the time of a time-dependent program only: a steady one may use it as a name. */
  if (bv == BV_T && !s->m->time_dependent) bv = -1;
  if (bv == BV_T) {
    diag_error(s->d, decl->loc, "'t' is the time in a program with time derivatives; choose another name");
    diag_note(s->d, s->m->first_dt->loc, "the program is time-dependent because of this time derivative");
    diag_hint(s->d, "in a residual, 't' is the time at which TS evaluates it (t_end, t0, time, ... are free names)");
    return;
  }
  if (bv >= 0) {
    diag_error(s->d, decl->loc, "'%s' is a built-in name (the %s); choose another name", name, builtin_values[bv].doc);
    return;
  }
  const Node *old = scope_find(s->scope, name);
  const Scope *shared = sema_shared_lets(s);
  if (old && shared && find_here(shared, name) == old) {
    diag_error(s->d, decl->loc, "'%s' is already a let of the residual block of '%s', which this jacobian block sees",
               name, s->m->fields[s->jacobian_field].name);
    previous(s, old);
    diag_hint(s->d, "a jacobian block shares the lets of its residual: use '%s' as it is there, or give this let "
                    "another name", name);
    return;
  }
  if (old) {
    diag_error(s->d, decl->loc, "'%s' is already declared, as %s", name, sema_kind_name(old));
    previous(s, old);
    return;
  }
  scope_put(s->scope, name, decl);
}

/* The nesting depth of a checked expression once lowering has inlined its lets and calls: a let
   stands for its value's depth, a call of a def for its body's with the deepest argument in
   place of a parameter. Linear: each let and def has its depth already. */
static int inlined_depth(const Sema *s, const Node *e) {
  int d = 0;
  switch (e->kind) {
  case N_NAME:
    return e->decl && e->decl->kind == N_LET ? s->lets[e->decl->index].depth : 1;
  case N_CALL:
    for (const Node *a = e->call.args; a; a = a->next) {
      int da = inlined_depth(s, a);
      if (da > d) d = da;
    }
    return d + (e->decl && e->decl->kind == N_DEF ? s->def_depth[e->decl->index] : 1);
  case N_UNARY:
    return 1 + inlined_depth(s, e->op.a);
  case N_BINARY: case N_IF: {
    const Node *ops[3] = {e->op.a, e->op.b, e->kind == N_IF ? e->op.c : NULL};
    for (int i = 0; i < 3 && ops[i]; i++) {
      int di = inlined_depth(s, ops[i]);
      if (di > d) d = di;
    }
    return 1 + d;
  }
  default:
    return 1;
  }
}

/* Checks a top-level expression, refusing depths the recursive passes should not meet, written
   out (MAX_EXPR_DEPTH) or with its lets and calls inlined (MAX_INLINED_DEPTH). Sets s->depth. */
static ExprInfo expr(Sema *s, Node *e, Ctx cx, ReadSet *reads) {
  ExprInfo none = {0};
  s->depth = 1;
  if (e->depth > MAX_EXPR_DEPTH) {
    diag_error(s->d, e->loc, "expression nested too deeply (%d levels; the limit is %d)", e->depth, MAX_EXPR_DEPTH);
    diag_hint(s->d, "split it into named parts with 'let'");
    return none;
  }
  ExprInfo info = sema_expr(s, e, cx, reads);
  int depth = inlined_depth(s, e);
  if (depth > MAX_INLINED_DEPTH) {  /* reported here once; where it is used it counts as 1 */
    diag_error(s->d, e->loc, "expression nested too deeply once its lets and functions are inlined (%d levels; "
                             "the limit is %d)", depth, MAX_INLINED_DEPTH);
    diag_hint(s->d, "each let and function call is written out where it is used, so a chain of them nests as "
                    "deeply as the whole expression written out");
  } else
    s->depth = depth;
  return info;
}

static bool fold_bound(Sema *s, Node *e, double *v) {
  int before = s->d->nerr;
  expr(s, e, CX_BOUND, NULL);
  if (s->d->nerr != before) return false;
  bool reported;
  if (!sema_fold_checked(s, e, v, &reported)) {
    if (!reported) diag_error(s->d, e->loc, "this must be a number");
    return false;
  }
  return true;
}

/* Direction n's extent [lo, hi]: finite, in order, with a length and a spacing
   that doubles hold. Bounds written in order can still be one double when
   they differ beyond its 16 digits: that is said, not "write the smaller
   bound first". */
static void extent(Sema *s, const Node *ax, const Axis *a, int n) {
  const char *name = axis_names[n];
  Loc at = ax->axis.lo->loc;
  if (!isfinite(a->lo) || !isfinite(a->hi)) {
    diag_error(s->d, at, "the extent [%g, %g] of %s is infinite", a->lo, a->hi, name);
    diag_hint(s->d, "a direction covers a finite interval: give both bounds as finite numbers");
  } else if (a->lo > a->hi) {
    diag_error(s->d, at, "the extent [%g, %g] of %s is empty or infinite", a->lo, a->hi, name);
    diag_hint(s->d, "write the smaller bound first: [0, 1]");
  } else if (a->lo == a->hi) {
    int nlo, nhi;
    const char *lo = ast_text(s->d->src, ax->axis.lo, &nlo), *hi = ast_text(s->d->src, ax->axis.hi, &nhi);
    if (nlo == nhi && memcmp(lo, hi, (size_t)nlo) == 0) {
      diag_error(s->d, at, "the extent [%g, %g] of %s is empty: its bounds are equal", a->lo, a->hi, name);
      diag_hint(s->d, "an extent [lo, hi] needs lo < hi");
    } else {
      diag_error(s->d, at, "the extent [%.*s, %.*s] of %s is empty: its bounds are equal after rounding to "
                 "double precision (both are %.17g)", nlo, lo, nhi, hi, name, a->lo);
      diag_hint(s->d, "a double holds about 16 significant digits; bounds that differ only beyond that are one number");
    }
  } else if (!isfinite(a->hi - a->lo)) {
    diag_error(s->d, at, "the extent [%g, %g] of %s is too long: its length hi - lo overflows a double", a->lo, a->hi,
               name);
    diag_hint(s->d, "a double holds magnitudes up to about 1.8e308; scale the problem to a shorter extent");
  } else if (a->points >= 2) {
    double h = (a->hi - a->lo) / (double)(a->periodic ? a->points : a->points - 1);
    if (h == 0 || a->lo + h == a->lo || a->hi - h == a->hi) {
      diag_error(s->d, at, "the %lld points of %s in [%g, %g] are closer together than doubles can tell apart",
                 a->points, name, a->lo, a->hi);
      diag_hint(s->d, "a double holds about 16 significant digits: widen the extent, move it nearer 0 or use fewer points");
    }
  }
}

static void grid(Sema *s, Node *g) {
  Model *m = s->m;
  int n = 0, before = s->d->nerr;
  for (Node *ax = g->grid.axes; ax; ax = ax->next, n++) {
    if (n == MAX_DIM) {
      diag_error(s->d, ax->loc, "a grid has at most 3 directions (x, y, z)");
      break;
    }
    if (strcmp(ax->axis.name, axis_names[n]) != 0) {
      diag_error(s->d, ax->loc, "direction %d of the grid must be named '%s', not '%s'", n + 1, axis_names[n],
                 ax->axis.name);
      diag_hint(s->d, "directions are declared in the order x, y, z");
    }
    if (ax->axis.points < 3) {
      diag_error(s->d, ax->axis.points_loc, "%s needs at least 3 points, not %lld", axis_names[n], ax->axis.points);
      diag_hint(s->d, "a direction has two boundary points and at least one point inside");
    }
    Axis *a = &m->axes[n];
    a->decl = ax;
    a->name = ax->axis.name;
    a->points = ax->axis.points;
    a->periodic = ax->axis.periodic;
    bool ok = fold_bound(s, ax->axis.lo, &a->lo);
    ok = fold_bound(s, ax->axis.hi, &a->hi) && ok;
    if (ok) extent(s, ax, a, n);
  }
  m->dim = n > MAX_DIM ? MAX_DIM : n;
  s->have_grid = s->d->nerr == before && n >= 1 && n <= MAX_DIM;
}

static void fields(Sema *s, Node *decl) {
  Model *m = s->m;
  int n = ast_count(decl->list.items);
  if (n > MAX_FIELDS) {
    diag_error(s->d, decl->loc, "%d fields declared; stencilc supports at most %d", n, MAX_FIELDS);
    diag_hint(s->d, "declare at most %d: more unknowns per grid point are not supported", MAX_FIELDS);
    s->too_many_fields = true;
    n = MAX_FIELDS;
  }
  m->fields = arena_alloc(s->a, sizeof *m->fields * (size_t)(n ? n : 1));
  int i = 0;
  for (Node *f = decl->list.items; f && i < n; f = f->next) {
    int before = s->d->nerr;
    declare(s, f->field.name, f);
    if (s->d->nerr != before) continue;
    f->index = i;
    m->fields[i].decl = f;
    m->fields[i].name = f->field.name;
    m->fields[i].desc = f->field.desc;
    i++;
  }
  m->nfields = i;
}

static void stencil(Sema *s, Node *decl) {
  Model *m = s->m;
  m->shape = decl->stencil.shape;
  m->width = (int)decl->stencil.width;
  if (decl->stencil.width < 1 || decl->stencil.width > MAX_WIDTH) {
    diag_error(s->d, decl->stencil.width_loc, "stencil width must be between 1 and %d, not %lld", MAX_WIDTH,
               decl->stencil.width);
    m->width = 1;
    s->have_grid = false;  /* offsets cannot be judged against a width that is not there */
    return;
  }
  /* The program refuses a grid narrower than 2 * width + 1 in any direction (its offsets would
     not reach distinct points); its default grid must not be one. */
  for (int d = 0; s->have_grid && d < m->dim; d++) {
    long long need = 2LL * m->width + 1;
    if (m->axes[d].points >= need) continue;
    diag_error(s->d, m->axes[d].decl->axis.points_loc, "%s has %lld points, fewer than the %lld a stencil of width %d needs",
               axis_names[d], m->axes[d].points, need, m->width);
    diag_hint(s->d, "give %s at least %lld points (2 * width + 1), or declare a narrower stencil", axis_names[d], need);
  }
}

/* The default grid must be one the generated program can run on one process:
   its SG-DIA matrix stores points * fields^2 * stencil points values, an
   array PETSc sizes with a PetscInt product (32 bits in a default build), and
   8 bytes each. Larger grids remain possible through -da_grid_x (_y, _z) on
   more processes, each holding its part. */
static void grid_size(Sema *s) {
  const Model *m = s->m;
  double points = 1, limit = 2147483647.0;
  int big = 0;
  for (int d = 0; d < m->dim; d++) {
    points *= (double)m->axes[d].points;
    if (m->axes[d].points > m->axes[big].points) big = d;
  }
  int nsten = 1, dof = m->nfields;
  if (m->shape == SHAPE_BOX)
    for (int d = 0; d < m->dim; d++) nsten *= 2 * m->width + 1;
  else
    nsten = 2 * m->dim * m->width + 1;
  double values = points * dof * dof * nsten;
  if (values <= limit) return;
  static const char *const options[] = {"-da_grid_x", "-da_grid_x and -da_grid_y", "-da_grid_x, -da_grid_y and -da_grid_z"};
  diag_error(s->d, m->axes[big].decl->axis.points_loc,
             "the default grid is too large for the generated program: %.0f points, %d field%s and a %d-point "
             "stencil need a matrix of %.3g values (%.3g GiB), more than a PetscInt counts (%.0f)",
             points, dof, dof == 1 ? "" : "s", nsten, values, values * 8 / 1073741824.0, limit);
  diag_hint(s->d, "declare at most %.0f points in all; %s choose%s a larger grid at run time, spread over several "
                  "processes", floor(limit / ((double)dof * dof * nsten)), options[m->dim - 1], m->dim == 1 ? "s" : "");
}

static void precedence(Sema *s, Node *decl) {
  Model *m = s->m;
  int rank = 0;
  for (Node *g = decl->list.items; g; g = g->next, rank++) {
    for (Node *f = g->list.items; f; f = f->next) {
      int face = face_lookup(f->name.name);
      if (face < 0) {
        const char *near = s->have_grid ? sema_near_face(m, f->name.name, false) : NULL;
        diag_error(s->d, f->loc, "'%s' is not a face", f->name.name);
        if (near)
          diag_hint(s->d, "did you mean '%s'?", near);
        else
          diag_hint(s->d, "precedence orders the faces %s", s->have_grid ? sema_face_list(m) : "left, right, bottom, top, front, back");
        continue;
      }
      if (s->have_grid && face / 2 >= m->dim) {
        diag_error(s->d, f->loc, "there is no '%s' face in a %dD grid", f->name.name, m->dim);
        continue;
      }
      if (s->have_grid && m->axes[face / 2].periodic) {
        diag_error(s->d, f->loc, "%s is periodic: it has no '%s' face", axis_names[face / 2], f->name.name);
        continue;
      }
      if (m->face_rank[face] != FACE_COUNT) {
        diag_error(s->d, f->loc, "face '%s' appears twice in the precedence", f->name.name);
        continue;
      }
      m->face_rank[face] = rank;
    }
  }
}

/* The one declaration of a kind the program must have exactly once. */
static bool once(Sema *s, const Node **slot, const Node *decl, const char *what) {
  if (*slot) {
    diag_error(s->d, decl->loc, "a second %s declaration; the first is at line %d", what, ast_line(s->d->src, *slot));
    return false;
  }
  *slot = decl;
  return true;
}

/* PETSc's own options: a parameter is set by the option of its name, so it
   cannot take one of these (-help, -info, -snes_rtol, ...). */
static const char *petsc_option_clash(const char *name) {
  static const char *const exact[] = {
    "check_pointer_intensity", "debugger", "display", "fp_trap", "help", "history", "info", "log", "malloc",
    "memory_view", "no_signal_handler", "nox", "objects_dump", "python", "skip_petscrc", "start_in_debugger",
    "version",
  };
  static const char *const prefixes[] = {
    "cuda", "da_", "device_", "dm_", "draw_", "info_", "ksp_", "log_", "malloc_", "mat_", "mpi", "on_error",
    "options_", "pc_", "petsc", "sf_", "snes_", "stn_", "tao_", "ts_", "vec_", "viewer_",
  };
  for (int i = 0; i < COUNT_OF(exact); i++)  /* PETSc's option names ignore case */
    if (strcasecmp(name, exact[i]) == 0) return exact[i];
  for (int i = 0; i < COUNT_OF(prefixes); i++)
    if (strncasecmp(name, prefixes[i], strlen(prefixes[i])) == 0) return prefixes[i];
  return NULL;
}

/* The type after a parameter's name: real (also when none is written), int or bool; for a
   list, int[2], its elements' type (real or int). */
static ParamType param_type(Sema *s, const Node *p) {
  const Node *t = p->param.type;
  if (t && t->kind == N_CHOICES) return PT_CHOICE;
  const char *name = !t ? "real" : t->kind == N_OFFSET ? t->offset.name : t->name.name;
  Loc at = t && t->kind == N_OFFSET ? t->offset.name_loc : t ? t->loc : p->loc;
  if (strcmp(name, "real") == 0) return PT_REAL;
  if (strcmp(name, "int") == 0) return PT_INT;
  if (strcmp(name, "bool") == 0 && t->kind != N_OFFSET) return PT_BOOL;
  if (strcmp(name, "bool") == 0) {
    diag_error(s->d, at, "a list parameter holds numbers: its type is real[N] or int[N], not bool[N]");
    diag_hint(s->d, "use int[N] with the range [0, 1], or one bool parameter for each value");
    return PT_REAL;
  }
  diag_error(s->d, at, "unknown parameter type '%s'", name);
  diag_hint(s->d, "a parameter is real (when no type is written), int, bool, a list real[N] or int[N], or one of a "
                  "list of names: {a, b}");
  return PT_REAL;
}

/* How many values a parameter holds: the length of its default list, [2, 3], else 1. Each
   value is a slot of the model's parameter tables (Model.param_elem). */
static int param_slots(const Node *p) {
  return p->param.value->kind == N_VALUES ? ast_count(p->param.value->list.items) : 1;
}

const Node *sema_param_value(const Model *m, int i) {
  const Node *v = m->params[i]->param.value;
  if (v->kind != N_VALUES) return v;
  const Node *e = v->list.items;
  for (int k = 0; k < m->param_elem[i]; k++) e = e->next;
  return e;
}

void sema_param_name(const Model *m, int i, char *buf, int size) {
  if (m->param_len[i]) snprintf(buf, (size_t)size, "%s[%d]", m->params[i]->param.name, m->param_elem[i]);
  else snprintf(buf, (size_t)size, "%s", m->params[i]->param.name);
}

/* A list parameter's length from its type, int[2]: checks that the type and the default agree
   (a list default needs a list type of its length, and a list type a list default). */
static void check_list(Sema *s, const Node *p) {
  const Node *t = p->param.type, *v = p->param.value;
  bool list_type = t && t->kind == N_OFFSET, list_value = v->kind == N_VALUES;
  int n = param_slots(p);
  if (list_type && (t->offset.ncomp != 1 || t->offset.comp[0] < 1 || t->offset.comp[0] > MAX_LIST)) {
    diag_error(s->d, t->loc, "a list parameter's type is real[N] or int[N] with one length N from 1 to %d", MAX_LIST);
    return;
  }
  if (list_type && !list_value) {
    diag_error(s->d, v->span, "'%s' is a list of %d values: its default is a list, [a, b, ...]", p->param.name,
               t->offset.comp[0]);
    diag_hint(s->d, "write the %d values between brackets, separated by commas", t->offset.comp[0]);
  } else if (list_value && !list_type) {
    diag_error(s->d, v->span, "a list default needs a list type: write 'param %s: real[%d] = ...' (or int[%d])",
               p->param.name, n, n);
  } else if (list_type && n != t->offset.comp[0]) {
    diag_error(s->d, v->span, "the default of '%s' has %d value%s, but its type says %d", p->param.name, n,
               n == 1 ? "" : "s", t->offset.comp[0]);
    diag_hint(s->d, "give one value per element, or change the length in '%s[%d]'", t->offset.name, t->offset.comp[0]);
  }
}

/* An int parameter's default and bounds are whole numbers a PetscInt holds (bounds may be inf). */
static bool whole(double v) { return v == floor(v) && fabs(v) <= 2147483647.0; }

static void let(Sema *s, Node *l, Ctx cx);

/* The names of a choice parameter: each a global let of its index (0, 1, ...), used or not.
   Returns how many there are. */
static int choices(Sema *s, const Node *p) {
  int n = 0;
  for (const Node *c = p->param.type->list.items; c; c = c->next, n++) {
    const Node *same = p->param.type->list.items;
    while (same != c && strcmp(same->name.name, c->name.name) != 0) same = same->next;
    if (same != c) {
      diag_error(s->d, c->loc, "'%s' appears twice among the choices of '%s'", c->name.name, p->param.name);
      continue;
    }
    Node *l = ast_let(s->a, c->loc, c->name.name, ast_num(s->a, c->loc, n, true));
    let(s, l, CX_PARAM);
    s->lets[l->index].used = true;
  }
  return n;
}

/* Whether e is one of the choice names of p (written as the name itself). */
static bool is_choice(const Node *p, const Node *e) {
  if (e->kind != N_NAME) return false;
  for (const Node *c = p->param.type->list.items; c; c = c->next)
    if (strcmp(c->name.name, e->name.name) == 0) return true;
  return false;
}

static void param(Sema *s, Node *p) {
  Model *m = s->m;
  ParamType type = param_type(s, p);
  int nchoices = type == PT_CHOICE ? choices(s, p) : 0;
  check_list(s, p);
  if (p->param.value->kind == N_VALUES)
    for (Node *e = p->param.value->list.items; e; e = e->next) expr(s, e, CX_PARAM, NULL);
  else
    expr(s, p->param.value, CX_PARAM, NULL);
  double lo = -INFINITY, hi = INFINITY, v;
  bool have_range = p->param.lo != NULL, range_ok = have_range;
  if (have_range && (type == PT_BOOL || type == PT_CHOICE)) {
    diag_error(s->d, p->param.lo->loc, "the %s parameter '%s' cannot have a range", type == PT_BOOL ? "bool" : "choice",
               p->param.name);
    diag_hint(s->d, "%s; remove 'in [...]'", type == PT_BOOL ? "a bool is true or false" : "its value is one of its names");
    have_range = range_ok = false;
  }
  if (have_range) {
    range_ok = fold_bound(s, p->param.lo, &lo);
    range_ok = fold_bound(s, p->param.hi, &hi) && range_ok;
    if (range_ok && !(lo <= hi)) {
      diag_error(s->d, p->param.lo->loc, "the range [%g, %g] of '%s' is empty", lo, hi, p->param.name);
      diag_hint(s->d, "write the smaller bound first");
      range_ok = false;
    }
    for (int b = 0; range_ok && type == PT_INT && b < 2; b++) {
      double bound = b ? hi : lo;
      if (isinf(bound) || whole(bound)) continue;
      diag_error(s->d, (b ? p->param.hi : p->param.lo)->loc, "the bound %g of the int parameter '%s' is not a whole number",
                 bound, p->param.name);
      diag_hint(s->d, "an int parameter's range is whole numbers between -2147483647 and 2147483647, or inf");
      range_ok = false;
    }
  }
  bool list = p->param.value->kind == N_VALUES;
  for (Node *e = list ? p->param.value->list.items : p->param.value; e; e = list ? e->next : NULL) {
    bool constant = sema_fold_checked(s, e, &v, NULL);
    if (type == PT_CHOICE && !is_choice(p, e)) {
      int len;
      const char *first = ast_text(s->d->src, p->param.type->list.items, &len);
      diag_error(s->d, e->loc, "the default of '%s' must be one of its choices", p->param.name);
      diag_hint(s->d, "write one of the names between the braces, such as '%.*s'", len, first);
    } else if (type == PT_BOOL && !(constant && (v == 0 || v == 1))) {
      diag_error(s->d, e->loc, "the default of the bool parameter '%s' must be true or false", p->param.name);
      diag_hint(s->d, "the program's user turns it on with -%s and off with -%s false", p->param.name, p->param.name);
    } else if (list && !constant) {
      diag_error(s->d, e->span, "the values of the list parameter '%s' are constant expressions", p->param.name);
      diag_hint(s->d, "write numbers (with pi, inf and operators); a value computed from other parameters is a let");
    } else if (type == PT_INT && constant && !whole(v)) {
      diag_error(s->d, e->loc, "the default %g of the int parameter '%s' is not a whole number", v, p->param.name);
      diag_hint(s->d, "write a whole number between -2147483647 and 2147483647, or round with floor(...)");
    } else if (range_ok && constant && !(v >= lo && v <= hi)) {
      diag_error(s->d, e->loc, "the default %g of '%s' is outside its range [%g, %g]", v, p->param.name, lo, hi);
    }
  }
  const char *clash = petsc_option_clash(p->param.name);
  if (clash) {
    diag_error(s->d, p->loc, "a parameter cannot be called '%s': the program's option -%s would be PETSc's", p->param.name,
               p->param.name);
    diag_hint(s->d, "PETSc reserves -%s%s; rename the parameter", clash, clash[strlen(clash) - 1] == '_' ? "..." : "");
  }
  for (int i = 0; i < m->nparams; i++) {  /* -Re and -re are one option to PETSc */
    const char *other = m->params[i]->param.name;
    if (strcmp(other, p->param.name) != 0 && strcasecmp(other, p->param.name) == 0) {
      diag_error(s->d, p->loc, "parameters '%s' and '%s' would be one option: PETSc's options ignore case, so -%s would set both",
                 other, p->param.name, p->param.name);
      previous(s, m->params[i]);
      diag_hint(s->d, "rename one of them");
      break;
    }
  }
  p->index = m->nparams;
  for (int k = 0, n = param_slots(p); k < n; k++) {  /* a list's values take consecutive slots */
    m->param_lo[m->nparams] = type == PT_BOOL || type == PT_CHOICE ? 0 : range_ok ? lo : -INFINITY;
    m->param_hi[m->nparams] = type == PT_BOOL ? 1 : type == PT_CHOICE ? nchoices - 1 : range_ok ? hi : INFINITY;
    m->param_type[m->nparams] = type;
    m->param_elem[m->nparams] = k;
    m->param_len[m->nparams] = list ? n : 0;
    m->params[m->nparams++] = p;
  }
  declare(s, p->param.name, p);
}

static void let(Sema *s, Node *l, Ctx cx) {
  Model *m = s->m;
  l->index = m->nlets;
  m->lets[m->nlets++] = l;
  LetInfo *li = &s->lets[l->index];
  ExprInfo info = expr(s, l->let.value, cx, &li->reads);
  li->fields = info.fields;
  li->pointwise = info.pointwise;
  li->dt = info.dt;
  li->depth = s->depth;
  declare(s, l->let.name, l);
}

/* coefficient k: file; -- the word after ':' says where the values come from; file is the one
   source (4.6). The program's option -k_file names the file, so it must not be PETSc's. */
static void coef_source(Sema *s, const Node *c) {
  const Node *w = c->coef.source;
  if (strcmp(w->name.name, "file") != 0) {
    diag_error(s->d, w->loc, "a coefficient's values come from 'file', not from '%s'", w->name.name);
    diag_hint(s->d, "write 'coefficient %s: file;' to read it from a file at run time, or "
                    "'coefficient %s = expr;' to compute it", c->coef.name, c->coef.name);
    return;
  }
  char option[300];
  snprintf(option, sizeof option, "%s_file", c->coef.name);
  const char *clash = petsc_option_clash(option);
  if (clash) {
    diag_error(s->d, c->loc, "a coefficient read from a file cannot be called '%s': its option -%s would be PETSc's",
               c->coef.name, option);
    diag_hint(s->d, "PETSc reserves -%s%s; rename the coefficient", clash, clash[strlen(clash) - 1] == '_' ? "..." : "");
  }
}

/* -k_file, the option of coefficient k, and the parameter k_file would be one option; so would
   -k_file and -K_file (PETSc's options ignore case). */
static void coef_option_clashes(Sema *s) {
  const Model *m = s->m;
  for (int c = 0; c < m->ncoefs; c++) {
    const Node *k = m->coefs[c];
    if (!k->coef.source) continue;
    char option[300];
    snprintf(option, sizeof option, "%s_file", k->coef.name);
    for (int e = 0; e < c; e++) {
      const Node *o = m->coefs[e];
      if (o->coef.source && strcasecmp(o->coef.name, k->coef.name) == 0) {
        diag_error(s->d, k->loc, "coefficients '%s' and '%s' would read one option: PETSc's options ignore case, so "
                   "-%s would name the file of both", o->coef.name, k->coef.name, option);
        previous(s, o);
        diag_hint(s->d, "rename one of them");
      }
    }
    for (int i = 0; i < m->nparams; i++)
      if (m->param_elem[i] == 0 && strcasecmp(m->params[i]->param.name, option) == 0) {
        diag_error(s->d, m->params[i]->loc, "parameter '%s' and the file of coefficient '%s' would be one option, -%s",
                   m->params[i]->param.name, k->coef.name, option);
        diag_note(s->d, k->loc, "coefficient '%s' is read from the file its option -%s names", k->coef.name, option);
        diag_hint(s->d, "rename the parameter or the coefficient");
      }
  }
}

/* coefficient k = value; the value is checked as at one grid point without fields (CX_COEF).
   coefficient k: file; has no value: its values are read when the program runs. */
static void coef(Sema *s, Node *c) {
  Model *m = s->m;
  c->index = m->ncoefs;
  if (c->coef.source) coef_source(s, c);
  else expr(s, c->coef.value, CX_COEF, NULL);
  m->coefs[m->ncoefs++] = c;
  declare(s, c->coef.name, c);
}

static void def(Sema *s, Node *d) {
  Model *m = s->m;
  Scope args;
  scope_init(&args, &s->global);
  for (Node *a = d->def.params; a; a = a->next) {
    if (find_here(&args, a->name.name))
      diag_error(s->d, a->loc, "argument '%s' appears twice", a->name.name);
    scope_put(&args, a->name.name, a);
  }
  Scope *outer = s->scope;
  s->scope = &args;
  expr(s, d->def.body, CX_DEF, NULL);
  s->scope = outer;
  scope_free(&args);

  d->index = m->ndefs;
  s->def_depth[d->index] = s->depth;
  m->defs[m->ndefs++] = d;
  const Node *old = find_here(&s->funcs, d->def.name);
  if (builtin_func_lookup(d->def.name) >= 0)
    diag_error(s->d, d->loc, "'%s' is a built-in function; choose another name", d->def.name);
  else if (strcmp(d->def.name, "dt") == 0)
    diag_error(s->d, d->loc, "'dt' is the time derivative, dt(u); choose another name for this function");
  else if (strcmp(d->def.name, "explicit") == 0)
    diag_error(s->d, d->loc, "'explicit' marks a residual's explicit terms, explicit(e); choose another name for this function");
  else if (old) {
    diag_error(s->d, d->loc, "function '%s' is already defined", d->def.name);
    previous(s, old);
  } else
    scope_put(&s->funcs, d->def.name, d);
}

static void entry_column(Sema *s, Node *col) {
  const char *name = col->kind == N_NAME ? col->name.name : col->offset.name;
  const Node *decl = scope_find(&s->global, name);
  if (!decl || decl->kind != N_FIELD) {
    Loc at = col->kind == N_NAME ? col->loc : col->offset.name_loc;
    int bv = builtin_value_lookup(name);
    if (!decl && bv >= 0)
      diag_error(s->d, at, "'%s' is a built-in value (the %s), not a field", name, builtin_values[bv].doc);
    else if (!decl) {
      diag_error(s->d, at, "'%s' is not a field", name);
      sema_suggest(s, name, false);
    } else if (decl->kind == N_COEF) {
      diag_error(s->d, at, "'%s' is a coefficient, not an unknown: the Jacobian has no column for it", name);
      diag_hint(s->d, "the derivative of a residual with respect to a coefficient is 0; entries are for fields, and "
                      "their values may read '%s'", name);
    } else
      diag_error(s->d, at, "'%s' is %s; a Jacobian entry is for a field at an offset", name, sema_kind_name(decl));
    return;
  }
  col->decl = decl;
  if (col->kind == N_OFFSET) sema_check_offset(s, col);
}

/* "a residual", "an initial": a block's keyword with its article. */
static const char *block_article(BlockWhat what) { return what == BLOCK_INITIAL ? "an" : "a"; }

/* jacobian u approximate { ... }: the one word a block may carry after its field, and only a
   jacobian block (4.16). */
static void mark(Sema *s, const Node *b, Field *f) {
  const Node *w = b->block.mark;
  const char *kw = ast_block_keyword(b->block.what), *field = b->block.field;
  bool approximate = strcmp(w->name.name, block_marks[BM_APPROXIMATE]) == 0;
  if (approximate && b->block.what == BLOCK_JACOBIAN) {
    if (f) f->approximate = true;
    return;
  }
  if (approximate) {
    diag_error(s->d, w->loc, "%s %s block cannot be approximate", block_article(b->block.what), kw);
    diag_hint(s->d, "only a jacobian block can be approximate (its entries then precondition Newton's linear "
                    "systems); write '%s %s {'", kw, field);
  } else if (b->block.what == BLOCK_JACOBIAN) {
    diag_error(s->d, w->loc, "'%s' cannot follow the field of a jacobian block", w->name.name);
    diag_hint(s->d, "write 'jacobian %s approximate {' for entries that only approximate the derivative (a "
                    "preconditioning matrix), or 'jacobian %s {' for the derivative itself", field, field);
  } else {
    diag_error(s->d, w->loc, "'%s' cannot follow the field of %s %s block", w->name.name,
               block_article(b->block.what), kw);
    diag_hint(s->d, "write '%s %s {'", kw, field);
  }
}

/* The implicit terms of the outermost sum of e, and its explicit(...) ones in *nexplicit. */
static int implicit_terms(const Node *e, int *nexplicit) {
  if (e->kind == N_BINARY && (e->op.op == OP_ADD || e->op.op == OP_SUB))
    return implicit_terms(e->op.a, nexplicit) + implicit_terms(e->op.b, nexplicit);
  if (e->kind == N_UNARY && (e->op.op == OP_NEG || e->op.op == OP_PLUS)) return implicit_terms(e->op.a, nexplicit);
  if (sema_is_call(e, "explicit")) {
    ++*nexplicit;
    return 0;
  }
  return 1;
}

/* A residual rule all of whose terms are explicit leaves TS's implicit part 0 at its points:
   nothing there to solve for. */
static void all_explicit(Sema *s, const Node *body) {
  int nexplicit = 0;
  if (!s->m->time_dependent || implicit_terms(body, &nexplicit) > 0 || nexplicit == 0) return;
  diag_error(s->d, body->span, "every term of this residual is explicit, so its implicit part is 0");
  diag_hint(s->d, "TS solves F(t, u, u_t) = G(t, u) with F the terms outside explicit(...): keep the time "
                  "derivative, and any term to be taken implicitly, outside it, as in dt(u) + explicit(...)");
}

/* A block's lets are local to it, except that a field's jacobian block sees the lets of the
   field's residual block when that stands above it (4.16): the residual's scope is kept, and
   the jacobian's scope opens inside it. */
static void block(Sema *s, Node *b) {
  Model *m = s->m;
  const Node *decl = scope_find(&s->global, b->block.field);
  Field *f = NULL;
  int fi = decl && decl->kind == N_FIELD ? decl->index : -1;
  if (!decl || decl->kind != N_FIELD) {
    if (decl) {
      diag_error(s->d, b->block.field_loc, "'%s' is %s; %s %s block is for a field", b->block.field,
                 sema_kind_name(decl), block_article(b->block.what), ast_block_keyword(b->block.what));
      if (decl->kind == N_COEF && decl->coef.source)
        diag_hint(s->d, "a coefficient is not solved for: its values are read from the file that -%s_file "
                        "names; declare '%s' in 'fields' to make it an unknown", b->block.field, b->block.field);
      else if (decl->kind == N_COEF)
        diag_hint(s->d, "a coefficient is not solved for: its value is the expression at line %d, at every "
                        "grid point; declare '%s' in 'fields' to make it an unknown", ast_line(s->d->src, decl),
                  b->block.field);
    } else {
      diag_error(s->d, b->block.field_loc, "'%s' is not a field", b->block.field);
      sema_suggest(s, b->block.field, false);
    }
  } else {
    f = &m->fields[decl->index];
    const Node **slot = b->block.what == BLOCK_RESIDUAL ? &f->residual
                      : b->block.what == BLOCK_JACOBIAN ? &f->jacobian : &f->initial;
    if (*slot) {
      diag_error(s->d, b->block.field_loc, "field '%s' already has %s %s block", f->name, block_article(b->block.what),
                 ast_block_keyword(b->block.what));
      diag_note(s->d, (*slot)->loc, "the first one is here");
      diag_hint(s->d, "put all the rules for '%s' in one block", f->name);
      f->duplicate_block = true;
      f = NULL;
    } else
      *slot = b;
  }
  if (b->block.mark) mark(s, b, f);

  Ctx cx = b->block.what == BLOCK_INITIAL ? CX_INITIAL : CX_POINT;
  Scope local;
  if (b->block.what == BLOCK_JACOBIAN) s->jacobian_field = fi;
  Scope *shared = sema_shared_lets(s);
  scope_init(&local, shared ? shared : &s->global);
  s->scope = &local;
  for (Node *it = b->block.items; it; it = it->next) {
    if (it->kind == N_LET) {
      let(s, it, cx);
      continue;
    }
    ReadSet *rs = &s->rule_reads[it->index];
    if (b->block.what == BLOCK_JACOBIAN) {
      for (Node *e = it->rule.body; e; e = e->next) {
        entry_column(s, e->entry.column);
        expr(s, e->entry.value, cx, rs);
      }
    } else if (b->block.what == BLOCK_RESIDUAL) {
      s->residual_body = it->rule.body;
      expr(s, it->rule.body, cx, rs);
      s->residual_body = NULL;
      all_explicit(s, it->rule.body);
    } else
      expr(s, it->rule.body, cx, rs);
  }
  s->scope = &s->global;
  s->jacobian_field = -1;
  if (b->block.what == BLOCK_RESIDUAL && f)
    s->residual_lets[fi] = local;  /* for the jacobian block of f */
  else
    scope_free(&local);
}

/* The first call of dt in e, or NULL. */
static const Node *dt_in(const Node *e) {
  if (!e) return NULL;
  const Node *found = NULL;
  switch (e->kind) {
  case N_CALL:
    if (strcmp(e->call.name, "dt") == 0) return e;
    for (const Node *a = e->call.args; a && !found; a = a->next) found = dt_in(a);
    return found;
  case N_UNARY:
    return dt_in(e->op.a);
  case N_BINARY: case N_IF:
    found = dt_in(e->op.a);
    if (!found) found = dt_in(e->op.b);
    if (!found && e->kind == N_IF) found = dt_in(e->op.c);
    return found;
  case N_ENTRY:
    return dt_in(e->entry.value);
  case N_VALUES:
    for (const Node *a = e->list.items; a && !found; a = a->next) found = dt_in(a);
    return found;
  default:
    return NULL;
  }
}

/* A program is time-dependent when dt(...) stands anywhere in it (where it may stand is checked
   later, with the other names): then 't' is the time. */
static void find_time_derivatives(Model *m, const Node *program) {
  for (const Node *d = program->list.items; d && !m->first_dt; d = d->next) {
    const Node *at = NULL;
    switch (d->kind) {
    case N_PARAM: at = dt_in(d->param.value); break;
    case N_LET:   at = dt_in(d->let.value); break;
    case N_COEF:  at = dt_in(d->coef.value); break;
    case N_DEF:   at = dt_in(d->def.body); break;
    case N_BLOCK:
      for (const Node *it = d->block.items; it && !at; it = it->next) {
        if (it->kind == N_LET) at = dt_in(it->let.value);
        else if (it->kind == N_RULE && d->block.what == BLOCK_JACOBIAN)
          for (const Node *en = it->rule.body; en && !at; en = en->next) at = dt_in(en);
        else if (it->kind == N_RULE) at = dt_in(it->rule.body);
      }
      break;
    default: break;
    }
    m->first_dt = at;
  }
  m->time_dependent = m->first_dt != NULL;
}

/* Numbers every rule and counts lets, params and defs, to size the tables. */
static void count(Sema *s, const Node *program, int *nparams, int *nlets, int *ndefs, int *ncoefs) {
  *nparams = *nlets = *ndefs = *ncoefs = 0;
  for (Node *d = program->list.items; d; d = d->next) {
    if (d->kind == N_COEF) ++*ncoefs;
    if (d->kind == N_PARAM) *nparams += param_slots(d);
    if (d->kind == N_PARAM && d->param.type && d->param.type->kind == N_CHOICES)  /* each choice is a let */
      *nlets += ast_count(d->param.type->list.items);
    if (d->kind == N_LET) ++*nlets;
    if (d->kind == N_DEF) ++*ndefs;
    if (d->kind != N_BLOCK) continue;
    for (Node *it = d->block.items; it; it = it->next) {
      if (it->kind == N_LET) ++*nlets;
      if (it->kind == N_RULE) it->index = s->nrules++;
    }
  }
}

static void warn_unused(Sema *s) {
  Model *m = s->m;
  for (int i = 0; i < m->nparams; i++)
    if (!s->param_used[i] && m->param_elem[i] == 0)
      diag_warning(s->d, m->params[i]->loc, "parameter '%s' is never used", m->params[i]->param.name);
  for (int i = 0; i < m->nlets; i++)
    if (!s->lets[i].used) diag_warning(s->d, m->lets[i]->loc, "let '%s' is never used", m->lets[i]->let.name);
  for (int i = 0; i < m->ncoefs; i++)
    if (!s->coef_used[i])
      diag_warning(s->d, m->coefs[i]->loc, "coefficient '%s' is never used", m->coefs[i]->coef.name);
  for (int i = 0; i < m->ndefs; i++)
    if (!s->def_used[i]) diag_warning(s->d, m->defs[i]->loc, "function '%s' is never used", m->defs[i]->def.name);
}

/* Warns when the equations read less than the declared stencil: the matrix
   would carry block diagonals that are always zero. */
static void stencil_use(Sema *s, const Node *decl) {
  Model *m = s->m;
  m->used_width = 0;
  m->used_box = false;
  for (int r = 0; r < s->nrules; r++) {
    for (int i = 0; i < s->rule_reads[r].n; i++) {
      const Read *rd = &s->rule_reads[r].v[i];
      /* a coefficient's reads count: the declared stencil must hold them (sema_check_offset) */
      int nonzero = 0;
      for (int d = 0; d < m->dim; d++) {
        int c = rd->off[d] < 0 ? -rd->off[d] : rd->off[d];
        if (c > m->used_width) m->used_width = c;
        nonzero += c != 0;
      }
      if (nonzero > 1) m->used_box = true;
    }
  }
  int w = m->used_width ? m->used_width : 1;
  bool smaller_shape = m->shape == SHAPE_BOX && !m->used_box && m->dim > 1;  /* in 1D box = star */
  if (smaller_shape || w < m->width) {
    const char *shape = m->used_box ? "box" : "star";
    int pts = 1, declared = 1;
    if (m->used_box) for (int d = 0; d < m->dim; d++) pts *= 2 * w + 1;
    else pts = 2 * m->dim * w + 1;
    if (m->shape == SHAPE_BOX) for (int d = 0; d < m->dim; d++) declared *= 2 * m->width + 1;
    else declared = 2 * m->dim * m->width + 1;
    diag_warning(s->d, decl->loc, "the equations read only a %s stencil of width %d (%d points), less than the "
                 "declared one (%d points)", shape, w, pts, declared);
    diag_hint(s->d, "'stencil %s width %d;' gives a matrix with %d block diagonals instead of %d", shape, w, pts,
              declared);
  }
}

void sema_check(Model *m, const Node *program, Diag *d, Arena *a, Intern *names) {
  memset(m, 0, sizeof *m);
  m->program = program;
  for (int f = 0; f < FACE_COUNT; f++) m->face_rank[f] = FACE_COUNT;
  Sema s = {0};
  s.m = m;
  s.d = d;
  s.a = a;
  s.names = names;
  s.jacobian_field = -1;
  scope_init(&s.global, NULL);
  scope_init(&s.funcs, NULL);
  scope_init(&s.later, NULL);
  s.scope = &s.global;

  int nparams, nlets, ndefs, ncoefs;
  count(&s, program, &nparams, &nlets, &ndefs, &ncoefs);
  find_time_derivatives(m, program);
  m->coefs = arena_alloc(a, sizeof *m->coefs * (size_t)(ncoefs + 1));
  s.coef_used = arena_alloc(a, sizeof *s.coef_used * (size_t)(ncoefs + 1));
  m->params = arena_alloc(a, sizeof *m->params * (size_t)(nparams + 1));
  m->param_lo = arena_alloc(a, sizeof *m->param_lo * (size_t)(nparams + 1));
  m->param_hi = arena_alloc(a, sizeof *m->param_hi * (size_t)(nparams + 1));
  m->param_type = arena_alloc(a, sizeof *m->param_type * (size_t)(nparams + 1));
  m->param_elem = arena_alloc(a, sizeof *m->param_elem * (size_t)(nparams + 1));
  m->param_len = arena_alloc(a, sizeof *m->param_len * (size_t)(nparams + 1));
  m->lets = arena_alloc(a, sizeof *m->lets * (size_t)(nlets + 1));
  m->defs = arena_alloc(a, sizeof *m->defs * (size_t)(ndefs + 1));
  s.param_used = arena_alloc(a, sizeof *s.param_used * (size_t)(nparams + 1));
  s.lets = arena_alloc(a, sizeof *s.lets * (size_t)(nlets + 1));
  s.def_used = arena_alloc(a, sizeof *s.def_used * (size_t)(ndefs + 1));
  s.def_depth = arena_alloc(a, sizeof *s.def_depth * (size_t)(ndefs + 1));
  s.rule_reads = arena_alloc(a, sizeof *s.rule_reads * (size_t)(s.nrules + 1));

  /* The structure every expression depends on, wherever it is declared. */
  const Node *g = NULL, *st = NULL, *fl = NULL, *pr = NULL;
  for (Node *x = program->list.items; x; x = x->next) {
    if (x->kind == N_GRID && once(&s, &g, x, "grid")) grid(&s, x);
  }
  for (Node *x = program->list.items; x; x = x->next)
    if (x->kind == N_STENCIL && once(&s, &st, x, "stencil")) stencil(&s, x);
  if (!g) {
    diag_file_error(d, "the program declares no grid");
    diag_hint(d, "add one, e.g. grid { x: 65 points in [0, 1]; y: 65 points in [0, 1]; }");
    s.have_grid = false;
  }
  if (!st) {
    diag_file_error(d, "the program declares no stencil");
    diag_hint(d, "add one, e.g. stencil star width 1;");
    s.have_grid = false;
  }
  for (Node *x = program->list.items; x; x = x->next) {
    if (x->kind == N_FIELDS && once(&s, &fl, x, "fields")) fields(&s, x);
    if (x->kind == N_PRECEDENCE && once(&s, &pr, x, "precedence")) precedence(&s, x);
  }
  s.residual_lets = arena_alloc(a, sizeof *s.residual_lets * (size_t)(m->nfields + 1));
  if (!fl) {
    diag_file_error(d, "the program declares no fields");
    diag_hint(d, "add one, e.g. fields u;");
  }
  if (s.have_grid && m->nfields > 0) grid_size(&s);
  if (s.too_many_fields) goto done; /* the blocks of the fields past the limit would each fail */
  for (Node *x = program->list.items; x; x = x->next) {
    const char *name = x->kind == N_PARAM ? x->param.name : x->kind == N_LET ? x->let.name
                     : x->kind == N_DEF ? x->def.name : x->kind == N_COEF ? x->coef.name : NULL;
    if (name && !find_here(&s.later, name)) scope_put(&s.later, name, x);
  }

  /* Everything else in source order. */
  for (Node *x = program->list.items; x; x = x->next) {
    switch (x->kind) {
    case N_PARAM: param(&s, x); break;
    case N_LET:   let(&s, x, CX_POINT); break;
    case N_COEF:  coef(&s, x); break;
    case N_DEF:   def(&s, x); break;
    case N_BLOCK: block(&s, x); break;
    default: break;
    }
  }
  for (int i = 0; i < m->nfields; i++) {
    if (!m->fields[i].residual) {
      diag_error(d, m->fields[i].decl->loc, "field '%s' has no residual", m->fields[i].name);
      diag_hint(d, "add 'residual %s { interior: ...; boundary: ...; }': one equation per field", m->fields[i].name);
    }
  }
  coef_option_clashes(&s);
  s.mirror_used = arena_alloc(a, sizeof *s.mirror_used * (size_t)(m->nfields + 1));
  if (s.have_grid) {
    sema_mirrors(&s);
    sema_regions(&s);
  }
  if (d->nerr == 0) {
    stencil_use(&s, st);
    warn_unused(&s);
    sema_mirror_unused(&s);
  }
done:
  for (int i = 0; s.residual_lets && i < m->nfields; i++)
    if (s.residual_lets[i].slots) scope_free(&s.residual_lets[i]);
  scope_free(&s.global);
  scope_free(&s.funcs);
  scope_free(&s.later);
}
