/*
** emit_c.c: the generated PETSc program, in the style of PETSc's SNES
** tutorials (ex5.c, ex19.c): a help string, a comment quoting the .stn,
** the application context with one field per parameter, the residual
** (FormFunction), the Jacobian written straight into SG-DIA storage
** (FormJacobian), the initial guess, and main in phases. Every emitted
** statement that comes from the .stn names its line.
**
** Kinds of grid point: inside the loops, tests on the indices pick each
** point's rules, one branch per group of classes that share them
** (emit_branches.c).
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cnames.h"
#include "emit_c.h"
#include "emit_int.h"
#include "util.h"




/* ---- pieces of text ---- */

const char *const emit_index_names[MAX_DIM] = {"i", "j", "k"};

/* fmt once per direction, separated by ", " (fmt may use the name twice:
   "%ss, %sm" gives "xs, xm, ys, ym"). */
void emit_list(FILE *out, int dim, const char *fmt, const char *const names[]) {
  for (int d = 0; d < dim; d++) {
    if (d) fputs(", ", out);
    fprintf(out, fmt, names[d], names[d]);
  }
}

void emit_comment_text(FILE *out, const char *s) {
  for (; *s; s++) {
    fputc(*s, out);
    if ((s[0] == '*' && s[1] == '/') || (s[0] == '/' && s[1] == '*')) fputc(' ', out);
  }
}

/* "i, j, 0": the point as three indices, for the runtime. */
static void point_args(const Program *P) {
  for (int d = 0; d < MAX_DIM; d++) fprintf(P->out, "%s%s", d ? ", " : "", d < P->m->dim ? emit_index_names[d] : "0");
}

/* "Field **" and friends: the array type of a field vector. */
static const char *array_stars(const Program *P) { return P->m->dim == 1 ? "*" : P->m->dim == 2 ? "**" : "***"; }

/* Writes a C string literal of s (escaping quotes, backslashes, controls). */
static void c_string(FILE *out, const char *s) {
  fputc('"', out);
  for (; *s; s++) {
    unsigned char ch = (unsigned char)*s;
    if (ch == '"' || ch == '\\') fprintf(out, "\\%c", ch);
    else if (ch == '\n') fputs("\\n", out);
    else if (ch < 32 || ch == 127) fprintf(out, "\\%03o", ch);
    else if (ch == '?' && s[1] == '?') fputs("?\"\"", out);  /* no trigraphs */
    else fputc(ch, out);
  }
  fputc('"', out);
}

/* Source text of a node's line range, for quoting in comments. */
static void quote_lines(const Program *P, int from, int to, const char *prefix) {
  const Source *src = P->ir->src;
  int line = 1;
  const char *s = src->text;
  for (const char *end = s + src->len; s < end; line++) {
    const char *nl = memchr(s, '\n', (size_t)(end - s));
    const char *stop = nl ? nl : end;
    if (line >= from && line <= to) {
      fputs(prefix, P->out);
      for (const char *c = s; c < stop; c++) {
        if (c + 1 < stop && ((c[0] == '*' && c[1] == '/') || (c[0] == '/' && c[1] == '*'))) { /* as emit_comment_text */
          fputc(c[0], P->out);
          fputc(' ', P->out);
          continue;
        }
        fputc(*c == '\t' ? ' ' : *c, P->out);
      }
      fputc('\n', P->out);
    }
    s = nl ? nl + 1 : end;
  }
}

/* ---- classes of grid points, grouped by the rules they share ---- */

int emit_interior_class(const Model *m) {
  int c = 0, w = 1;
  for (int d = 0; d < m->dim; d++, w *= 3) c += w;
  return c;
}

static bool same_rules(const Program *P, BlockWhat what, int c1, int c2) {
  for (int f = 0; f < P->m->nfields; f++) {
    const IrPoint *a = ir_point(P->ir, f, c1), *b = ir_point(P->ir, f, c2);
    switch (what) {
    case BLOCK_RESIDUAL:
      if (a->residual != b->residual || a->rhs != b->rhs ||
          ast_line(P->ir->src, a->residual_rule) != ast_line(P->ir->src, b->residual_rule))
        return false;
      break;
    case BLOCK_INITIAL:
      if (a->initial != b->initial) return false;
      break;
    case BLOCK_JACOBIAN:
      if (a->nentries != b->nentries) return false;
      for (int e = 0; e < a->nentries; e++) {
        const IrEntry *x = &a->entries[e], *y = &b->entries[e];
        if (x->field != y->field || x->offset != y->offset || x->derived != y->derived || x->given != y->given ||
            x->node != y->node)
          return false;
      }
      break;
    }
  }
  return true;
}

int emit_class_groups(const Program *P, BlockWhat what, int *group, int *firsts) {
  const Model *m = P->m;
  int order[MAX_CLASSES], n = 0, ngroups = 0, in = emit_interior_class(m);
  order[n++] = in;
  for (int c = 0; c < m->nclasses; c++)
    if (c != in && sema_class_exists(m, c)) order[n++] = c;
  for (int c = 0; c < m->nclasses; c++) group[c] = -1;
  for (int a = 0; a < n; a++) {
    group[order[a]] = order[a];
    for (int b = 0; b < a; b++)
      if (group[order[b]] == order[b] && same_rules(P, what, order[b], order[a])) {
        group[order[a]] = order[b];
        break;
      }
    if (group[order[a]] == order[a]) firsts[ngroups++] = order[a];
  }
  return ngroups;
}

/* ---- the roots and bodies of a group of points ---- */

void emit_residual_roots(const Program *P, int cls, Ref *roots, int *n) {
  for (int f = 0; f < P->m->nfields; f++) roots[(*n)++] = ir_point(P->ir, f, cls)->residual;
}

void emit_rhs_roots(const Program *P, int cls, Ref *roots, int *n) {
  for (int f = 0; f < P->m->nfields; f++) roots[(*n)++] = ir_point(P->ir, f, cls)->rhs;
}

static void initial_roots(const Program *P, int cls, Ref *roots, int *n) {
  for (int f = 0; f < P->m->nfields; f++)
    if (ir_point(P->ir, f, cls)->initial != IR_NONE) roots[(*n)++] = ir_point(P->ir, f, cls)->initial;
}

/* The value an entry has in the matrix being written: the user's, except where an approximate
   block gave it and the operator is written (J w, or the exact matrix): the derivative there. */
static bool uses_given(const Program *P, const IrEntry *x) {
  return x->given != IR_NONE && !(x->approximate && (P->product || P->exact));
}

/* The values written (uses_given), and the derivatives that -stn_check_jacobian compares exact
   given entries with. */
void emit_jacobian_roots(const Program *P, int cls, Ref *roots, int *n) {
  for (int f = 0; f < P->m->nfields; f++) {
    const IrPoint *p = ir_point(P->ir, f, cls);
    for (int e = 0; e < p->nentries; e++) {
      const IrEntry *x = &p->entries[e];
      bool given = uses_given(P, x);
      roots[(*n)++] = given ? x->given : x->derived;
      if (given && x->given != x->derived && !x->approximate) roots[(*n)++] = x->derived;
    }
  }
}

int emit_max_roots(const Program *P) {
  int n = P->m->nfields * 2 + 1;
  for (int i = 0; i < P->m->nfields * P->m->nclasses; i++) n += 2 * P->ir->points[i].nentries;
  return n;
}

/* The field assignments of one group: f[j][i].u = ...; */
void emit_residual_body(Program *P, int cls, const char *indent) {
  for (int f = 0; f < P->m->nfields; f++) {
    const IrPoint *p = ir_point(P->ir, f, cls);
    int column = fprintf(P->out, "%sf", indent);
    if (P->E.cuda) column += fprintf(P->out, "[p]");
    else
      for (int d = P->m->dim - 1; d >= 0; d--) column += fprintf(P->out, "[%s]", emit_index_names[d]);
    column += fprintf(P->out, ".%s = ", P->E.field[f]);
    emit_c_expr_at(&P->E, p->residual, column);
    fprintf(P->out, "; /* %s:%d */\n", P->o->stn_name, ast_line(P->ir->src, p->residual_rule));
  }
}

/* G, TS's RHSFunction: minus the residual's explicit terms, 0 where it has none. */
void emit_rhs_body(Program *P, int cls, const char *indent) {
  for (int f = 0; f < P->m->nfields; f++) {
    const IrPoint *p = ir_point(P->ir, f, cls);
    int column = fprintf(P->out, "%sg", indent);
    if (P->E.cuda) column += fprintf(P->out, "[p]");
    else
      for (int d = P->m->dim - 1; d >= 0; d--) column += fprintf(P->out, "[%s]", emit_index_names[d]);
    column += fprintf(P->out, ".%s = ", P->E.field[f]);
    emit_c_expr_at(&P->E, p->rhs, column);
    if (ir_is_const(P->ir, p->rhs, 0)) fputs("; /* no explicit terms */\n", P->out);
    else fprintf(P->out, "; /* %s:%d, its explicit terms */\n", P->o->stn_name, ast_line(P->ir->src, p->residual_rule));
  }
}

static void initial_body(Program *P, int cls, const char *indent) {
  for (int f = 0; f < P->m->nfields; f++) {
    const IrPoint *p = ir_point(P->ir, f, cls);
    fprintf(P->out, "%sx", indent);
    for (int d = P->m->dim - 1; d >= 0; d--) fprintf(P->out, "[%s]", emit_index_names[d]);
    fprintf(P->out, ".%s = ", P->E.field[f]);
    if (p->initial == IR_NONE) {
      fputs("0.0; /* no initial block */\n", P->out);
      continue;
    }
    emit_c_expr(&P->E, p->initial);
    fprintf(P->out, "; /* %s:%d */\n", P->o->stn_name, ast_line(P->ir->src, p->initial_rule));
  }
}

static int stencil_position(const Ir *ir, int offset) {
  for (int s = 0; s < ir->nstencil; s++)
    if (ir->stencil[s] == offset) return s;
  ice("offset %d is not in the stencil", offset);
}

void emit_jacobian_body(Program *P, int cls, const char *indent) {
  const Ir *ir = P->ir;
  char off[32];
  for (int f = 0; f < P->m->nfields; f++) {
    const IrPoint *p = ir_point(ir, f, cls);
    for (int e = 0; e < p->nentries; e++) {
      const IrEntry *x = &p->entries[e];
      ir_offset_text(ir, x->offset, off, sizeof off, false);
      int s = stencil_position(ir, x->offset), column;
      if (P->product) column = fprintf(P->out, "%sJw[%d] += W(%d, %d) * (", indent, f, s, x->field);
      else column = fprintf(P->out, "%sv[%d][%d][%d] = ", indent, s, f, x->field);
      bool given = uses_given(P, x);
      emit_c_expr_at(&P->E, given ? x->given : x->derived, column);
      fprintf(P->out, "%s; /* d%s/d%s%s, %s %s:%d */\n", P->product ? ")" : "", P->m->fields[f].name, P->m->fields[x->field].name, off,
              given ? (x->approximate ? "approximated at" : "given at") : "derived from", P->o->stn_name,
              ast_line(P->ir->src, given ? x->node : p->residual_rule));
    }
  }
  /* The run-time check of the entries the user wrote (-stn_check_jacobian),
     on CPUs only: the program runs it with -stn_device cpu. Approximate
     entries are not checked: they may differ from the derivative. */
  if (P->E.cuda || P->exact) return;
  bool any = false;
  for (int f = 0; f < P->m->nfields; f++) {
    const IrPoint *p = ir_point(ir, f, cls);
    for (int e = 0; e < p->nentries; e++) {
      const IrEntry *x = &p->entries[e];
      if (x->given == IR_NONE || x->given == x->derived || x->approximate) continue;
      if (!any) fprintf(P->out, "%sif (user->check_jacobian) {\n", indent);
      any = true;
      ir_offset_text(ir, x->offset, off, sizeof off, false);
      char what[256];
      int line, col;
      diag_line_col(ir->src, x->node->loc.off, &line, &col);
      snprintf(what, sizeof what, "d%s/d%s%s (%s:%d:%d)", P->m->fields[f].name, P->m->fields[x->field].name, off,
               P->o->stn_name, line, col);
      fprintf(P->out, "%s  PetscCall(StnCheckEntry(v[%d][%d][%d], ", indent, stencil_position(ir, x->offset), f,
              x->field);
      emit_c_expr(&P->E, x->derived);
      fputs(", ", P->out);
      c_string(P->out, what);
      fprintf(P->out, ", %d, ", P->m->dim);
      point_args(P);
      fputs("));\n", P->out);
    }
  }
  if (any) fprintf(P->out, "%s}\n", indent);
}

/* Every root of every class, for naming the uniform values of a function. */
static int all_roots(const Program *P, CaseRoots roots_of, Ref *roots) {
  int n = 0;
  for (int c = 0; c < P->m->nclasses; c++)
    if (sema_class_exists(P->m, c)) roots_of(P, c, roots, &n);
  return n;
}

int emit_uniform_temps(Program *P, CaseRoots roots_of) {
  Ref *roots = xmalloc((size_t)emit_max_roots(P) * (size_t)P->m->nclasses * sizeof *roots);
  int n = all_roots(P, roots_of, roots);
  int named = emit_c_temps(&P->E, roots, n, true, "  ", P->named);
  free(roots);
  return named;
}

/* for (k ...) for (j ...) for (i ...) {  -- returns the body's indent. */
static const char *open_loops(const Program *P, const char *lo, const char *count) {
  static const char *const indents[] = {"  ", "    ", "      ", "        "};
  int dim = P->m->dim;
  for (int d = dim - 1, depth = 0; d >= 0; d--, depth++)
    fprintf(P->out, "%sfor (PetscInt %s = info->%s%s; %s < info->%s%s + info->%s%s; %s++) {\n", indents[depth],
            emit_index_names[d], axis_names[d], lo, emit_index_names[d], axis_names[d], lo, axis_names[d], count, emit_index_names[d]);
  return indents[dim];
}

static void close_loops(const Program *P) {
  for (int depth = P->m->dim - 1; depth >= 0; depth--) fprintf(P->out, "%*s}\n", 2 * depth + 2, "");
}

/* The Jacobian's per-point prologue and epilogue around the switch. */
static void store_block_row(Program *P, const char *in, bool before) {
  FILE *out = P->out;
  if (before) {
    fprintf(out, "%sPetscScalar v[NSTENCIL][DOF][DOF] = {{{0}}}; /* the entries the .stn leaves out are 0 */\n", in);
    return;
  }
  fprintf(out, "%sPetscCall(StnBlockRowsSet(&rows, ", in);
  point_args(P);
  fputs(", &v[0][0][0]));\n", out);
}

/* The grid spacing in direction d from the DMDA's size: (hi - lo) / (mx - 1), or / mx in a
   periodic direction. The C functions and the CUDA kernels compute it with this same text. */
static void spacing_value(const Program *P, int d) {
  const Axis *ax = &P->m->axes[d];
  fputc('(', P->out);
  emit_c_number(P->out, ax->hi);
  fputs(" - ", P->out);
  emit_c_number(P->out, ax->lo);
  if (ax->periodic) fprintf(P->out, ") / %sm%s", P->E.grid, axis_names[d]);
  else fprintf(P->out, ") / (%sm%s - 1)", P->E.grid, axis_names[d]);
}

/* The grid spacing the expressions under roots read, as locals. */
static void declare_spacing(Program *P, const Ref *roots, int n, const char *indent) {
  bool used[BV_COUNT];
  emit_c_grid_uses(&P->E, roots, n, used, NULL);
  for (int d = 0; d < P->m->dim; d++) {
    if (!used[BV_HX + d]) continue;
    fprintf(P->out, "%sconst %s h%s = ", indent, P->E.cuda ? "double" : "PetscReal", axis_names[d]);
    spacing_value(P, d);
    fputs(";\n", P->out);
  }
}

void emit_function_spacing(Program *P, CaseRoots roots_of) {
  Ref *roots = xmalloc((size_t)emit_max_roots(P) * (size_t)P->m->nclasses * sizeof *roots);
  declare_spacing(P, roots, all_roots(P, roots_of, roots), "  ");
  free(roots);
}

/* The coefficients read from files that the expressions under roots_of read: each one's
   ghosted local array on this function's grid (the runtime keeps it on the DM), taken before
   the loops (before) and given back after them. */
static void coef_arrays(Program *P, CaseRoots roots_of, bool before) {
  const Model *m = P->m;
  if (!m->ncoefs) return;
  Ref *roots = xmalloc((size_t)emit_max_roots(P) * (size_t)m->nclasses * sizeof *roots);
  bool grid[BV_COUNT], *used = xcalloc((size_t)m->ncoefs, sizeof *used);
  emit_c_grid_uses(&P->E, roots, all_roots(P, roots_of, roots), grid, used);
  for (int c = 0; c < m->ncoefs; c++) {
    if (!used[c]) continue;
    const Node *k = m->coefs[c];
    if (before) {
      P->E.coef_array[c] = emit_c_local(&P->E, P->E.coef[c]);
      fprintf(P->out, "  const PetscScalar %s%s; /* coefficient %s, %s:%d: the values of -%s_file on this grid */\n",
              array_stars(P), P->E.coef_array[c], k->coef.name, P->o->stn_name, ast_line(P->ir->src, k), k->coef.name);
      fprintf(P->out, "  PetscCall(StnCoefficientGetArray(info->da, \"%s\", &%s));\n", k->coef.name, P->E.coef_array[c]);
    } else
      fprintf(P->out, "  PetscCall(StnCoefficientRestoreArray(info->da, \"%s\", &%s));\n", k->coef.name, P->E.coef_array[c]);
  }
  free(used);
  free(roots);
}

/* The body shared by the point functions: the spacing and the uniform
   values, the loops over the owned points, and the switch over kinds of
   points (with around, if given, called before and after it inside the
   loops). */
static void loop_over_points(Program *P, BlockWhat what, CaseRoots roots_of, CaseBody body,
                             void (*around)(Program *, const char *, bool)) {
  emit_c_function_begin(&P->E);
  P->E.array = "x";
  coef_arrays(P, roots_of, true);
  emit_function_spacing(P, roots_of);
  emit_uniform_temps(P, roots_of);
  const char *in = open_loops(P, "s", "m");
  if (around) around(P, in, true);
  emit_point_branches(P, what, roots_of, body, in);
  if (around) around(P, in, false);
  close_loops(P);
  coef_arrays(P, roots_of, false);
}

/* ---- the parts of the file ---- */

static void header(Program *P) {
  const Model *m = P->m;
  FILE *out = P->out;
  fprintf(out, "/*\n * %s: generated from %s by stencilc %s. To change the equations, edit\n", P->o->c_name,
          P->o->stn_name, STENCILC_VERSION);
  fprintf(out, " * %s and run stencilc again; this file can also be carried on by hand.\n *\n", P->o->stn_name);
  /* The .stn's opening comment says what the problem is. */
  int last = 0;
  const Source *src = P->ir->src;
  for (int line = 1, off = 0; off < src->len; line++) {
    while (off < src->len && (src->text[off] == ' ' || src->text[off] == '\t')) off++;
    if (off >= src->len || src->text[off] != '#') break;
    last = line;
    while (off < src->len && src->text[off] != '\n') off++;
    off++;
  }
  if (last) {
    quote_lines(P, 1, last, " * ");
    fputs(" *\n", out);
  }
  fprintf(out, " * The equations, as %s writes them:\n *\n", P->o->stn_name);
  for (int f = 0; f < m->nfields; f++) {
    const Field *fd = &m->fields[f];
    const Node *blocks[2] = {fd->residual, fd->jacobian};
    for (int b = 0; b < 2; b++)
      if (blocks[b]) quote_lines(P, ast_line(P->ir->src, blocks[b]), ast_end_line(P->ir->src, blocks[b]), " *   ");
  }
  fputs(" */\n\n", out);
}

static void help_string(Program *P) {
  const Model *m = P->m;
  FILE *out = P->out;
  char line[1024];
  fprintf(out, "static char help[] = ");
  if (m->time_dependent)
    snprintf(line, sizeof line, "Integrates the equations of %s in time with PETSc's TS, a Newton-Krylov solve (SNES) per implicit step.\n",
             P->o->stn_name);
  else
    snprintf(line, sizeof line, "Solves the equations of %s with PETSc's Newton-Krylov solver (SNES).\n",
             P->o->stn_name);
  c_string(out, line);
  fputs("\n  ", out);
  c_string(out, "Parameters (default in brackets):\n");
  for (int i = 0; i < m->nparams; i++) {
    const Node *p = m->params[i];
    const Node *v = p->param.value;
    int len, n;
    if (m->param_elem[i] > 0) continue;  /* a list has one line: -blocks <2,3> */
    if (m->param_len[i]) {
      n = snprintf(line, sizeof line, "  -%s <", p->param.name);
      for (const Node *e = v->list.items; e && n < (int)sizeof line; e = e->next) {
        const char *text = ast_text(P->ir->src, e, &len);
        n += snprintf(line + n, sizeof line - (size_t)n, "%s%.*s", e == v->list.items ? "" : ",", len, text);
      }
      if (n < (int)sizeof line) n += snprintf(line + n, sizeof line - (size_t)n, ">");
    } else {
      const char *dflt = ast_text(P->ir->src, v, &len);
      n = snprintf(line, sizeof line, "  -%s <%.*s>", p->param.name, len, dflt);
    }
    if (p->param.desc && n < (int)sizeof line) n += snprintf(line + n, sizeof line - (size_t)n, ": %s", p->param.desc);
    char count[64];
    snprintf(count, sizeof count, ", %d %s separated by commas%s", m->param_len[i],
             m->param_type[i] == PT_INT ? "integers" : "numbers", p->param.lo ? ", each" : "");
    const char *type = m->param_len[i] ? count : m->param_type[i] == PT_INT ? ", an integer" : m->param_type[i] == PT_BOOL ? ", true or false" : "";
    if (n < (int)sizeof line) n += snprintf(line + n, sizeof line - (size_t)n, "%s", type);
    for (const Node *c = m->param_type[i] == PT_CHOICE ? p->param.type->list.items : NULL; c && n < (int)sizeof line; c = c->next)
      n += snprintf(line + n, sizeof line - (size_t)n, "%s%s", c == p->param.type->list.items ? ", one of " : "|", c->name.name);
    if (p->param.lo && n < (int)sizeof line)
      snprintf(line + n, sizeof line - (size_t)n, "%s in [%g, %g]", *type ? "" : ",", m->param_lo[i], m->param_hi[i]);
    strncat(line, "\n", sizeof line - strlen(line) - 1);
    fputs("\n  ", out);
    c_string(out, line);
  }
  bool files = false;
  for (int c = 0; c < m->ncoefs; c++) {
    const Node *k = m->coefs[c];
    if (!k->coef.source) continue;
    if (!files) {
      fputs("\n  ", out);
      c_string(out, "Coefficients read from files (PETSc binary vectors, one value per grid point; required):\n");
      files = true;
    }
    snprintf(line, sizeof line, "  -%s_file <FILE>: coefficient %s%s%s\n", k->coef.name, k->coef.name, k->coef.desc ? ", " : "",
             k->coef.desc ? k->coef.desc : "");
    fputs("\n  ", out);
    c_string(out, line);
  }
  fputs("\n  ", out);
  c_string(out, "The program's own options (-stn_*: the matrix, the device, output and pictures) follow with PETSc's.\n");
  fputs(";\n\n", out);
}

static void declarations(Program *P) {
  const Ir *ir = P->ir;
  FILE *out = P->out;
  fprintf(out, "#include <math.h>\n#include <petscdmda.h>\n#include <%s.h>\n\n", P->m->time_dependent ? "petscts" : "petscsnes");
  fputs("#include \"stnrt.h\" /* the runtime: the SG-DIA matrix, the program's options and solve (stnapp.h) */\n", out);
  fprintf(out, "#include \"%s\" /* Field, AppCtx, NSTENCIL, DOF: shared with the CUDA kernels */\n\n", P->o->h_name);
  emit_c_mod_function(ir, out, false);

  fputs("/* The Jacobian's block diagonals: the neighbours the equations couple (stencil\n"
        "   analysis), as grid offsets (x, y, z), in the order of the SG-DIA columns. */\n", out);
  fputs("static const PetscInt stencil_offsets[NSTENCIL][3] = {", out);
  for (int s = 0; s < ir->nstencil; s++) {  /* nine to a line */
    const int *o = ir->offsets[ir->stencil[s]];
    fprintf(out, "%s{%d, %d, %d}%s", s % 9 ? " " : "\n  ", o[0], o[1], o[2], s + 1 < ir->nstencil ? "," : "");
  }
  fputs("\n};\n\n", out);
  fputs("/* How each field's interior equation scales with the grid spacing h: its Jacobian's\n"
        "   diagonal as h^p. Multigrid's rediscretized coarse grids need p = dim - 2, the equations\n"
        "   multiplied by the cell size as PETSc's tutorials write them; the runtime picks the\n"
        "   GPU's default preconditioner by it (STN_H_POWER_NONE: not a power of h). */\n", out);
  fputs("static const PetscInt h_power[DOF] = {", out);
  for (int f = 0; f < P->m->nfields; f++) {
    int power;
    if (ir_h_power(ir, f, &power)) fprintf(out, "%s%d", f ? ", " : "", power);
    else fprintf(out, "%sSTN_H_POWER_NONE", f ? ", " : "");
  }
  fputs("};\n\n", out);
}

/* The other parameters parameter i's default reads (deps, in order), and whether it reads the
   grid (its size or spacing). */
static int default_deps(const Program *P, int i, int *deps, bool *grid) {
  const Ir *ir = P->ir;
  char *seen = xcalloc((size_t)ir->nnodes, 1), *uses = xcalloc((size_t)P->m->nparams + 1, 1);
  Ref *stack = xmalloc(((size_t)ir->nnodes + 1) * sizeof *stack);
  int top = 0, n = 0;
  *grid = false;
  if (ir->param_default[i] != IR_NONE) stack[top++] = ir->param_default[i];
  while (top) {
    Ref r = stack[--top];
    if (r == IR_NONE || seen[r]) continue;
    seen[r] = 1;
    const IrNode *x = &ir->nodes[r];
    if (x->op == IR_PARAM) uses[x->a] = 1;
    else if (x->op == IR_GRID) *grid = true;
    else if (x->op > IR_FIELD) {
      stack[top++] = x->a;
      if (x->b != IR_NONE) stack[top++] = x->b;
      if (x->c != IR_NONE) stack[top++] = x->c;
    }
  }
  for (int j = 0; j < P->m->nparams; j++)
    if (uses[j] && j != i) deps[n++] = j;
  free(seen), free(uses), free(stack);
  return n;
}

/* A list parameter, -blocks 2,3, at its first slot i: the defaults, then PetscOptionsIntArray
   (RealArray) into an array one longer than the list, so that a value too many is seen rather
   than dropped; the count must be the list's. Every slot's given[] says whether the option came. */
static void list_parameter(Program *P, int i) {
  const Model *m = P->m;
  FILE *out = P->out;
  CEmit *E = &P->E;
  const Node *p = m->params[i];
  const char *name = p->param.name, *stn = P->o->stn_name;
  int n = m->param_len[i], line = ast_line(P->ir->src, p);
  bool is_int = m->param_type[i] == PT_INT;
  for (int k = 0; k < n; k++) {
    fprintf(out, "  user->%s = ", E->param[i + k]);
    emit_c_expr(E, P->ir->param_default[i + k]);
    fprintf(out, "; /* %s:%d */\n", stn, line);
  }
  fprintf(out, "  {\n    %s values[%d]; /* one more than -%s takes */\n    PetscInt  n = %d;\n    PetscBool named;\n\n",
          is_int ? "PetscInt " : "PetscReal", n + 1, name, n + 1);
  for (int k = 0; k < n; k++) fprintf(out, "    values[%d] = (%s)user->%s;\n", k, is_int ? "PetscInt" : "PetscReal", E->param[i + k]);
  fprintf(out, "    PetscCall(PetscOptions%sArray(\"-%s\", ", is_int ? "Int" : "Real", name);
  c_string(out, p->param.desc ? p->param.desc : name);
  fprintf(out, ", \"%s\", values, &n, &given[%d]));\n", stn, i);
  fprintf(out, "    PetscCall(PetscOptionsHasName(NULL, NULL, \"-%s\", &named));\n", name);
  fprintf(out, "    PetscCheck(!named || (given[%d] && n == %d), PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG,\n"
               "               \"-%s takes %d %s separated by commas, as in -%s ", i, n, name, n, is_int ? "integers" : "numbers", name);
  for (const Node *e = p->param.value->list.items; e; e = e->next) {
    int len;
    const char *text = ast_text(P->ir->src, e, &len);
    fprintf(out, "%s", e == p->param.value->list.items ? "" : ",");
    for (int c = 0; c < len; c++)  /* the default as written, less spaces and any quote */
      if (text[c] != ' ' && text[c] != '"' && text[c] != '\\' && text[c] != '%') fputc(text[c], out);
  }
  fprintf(out, "; it was given %%s%%d\", n > %d ? \"more than \" : \"\", (int)(n > %d ? %d : n));\n", n, n, n);
  fprintf(out, "    for (PetscInt k = 0; k < %d; k++) given[%d + k] = given[%d];\n", n, i, i);
  fprintf(out, "    if (given[%d]) {\n", i);
  for (int k = 0; k < n; k++) fprintf(out, "      user->%s = (PetscReal)values[%d];\n", E->param[i + k], k);
  fputs("    }\n  }\n", out);
}

static void set_parameters(Program *P) {
  const Model *m = P->m;
  FILE *out = P->out;
  CEmit *E = &P->E;
  fputs("/* Parameters: each default from the .stn (some depend on the grid), then its option. */\n", out);
  fputs("static PetscErrorCode SetParameters(const DMDALocalInfo *info, AppCtx *user)\n{\n", out);
  bool any_int = false, any_bool = false;
  for (int i = 0; i < m->nparams; i++)
    any_int |= m->param_type[i] == PT_INT || m->param_type[i] == PT_CHOICE, any_bool |= m->param_type[i] == PT_BOOL;
  if (m->nparams) {
    fputs("  static const char *const names[] = {", out);
    for (int i = 0; i < m->nparams; i++) fprintf(out, "%s\"%s\"", i ? ", " : "", m->params[i]->param.name);
    fprintf(out, "};\n  PetscBool given[%d]; /* whether the command line gave each a value */\n", m->nparams);
    if (any_int) fputs("  PetscInt  int_value;  /* an int parameter (a choice's index) as PETSc reads it; AppCtx holds a double */\n", out);
    if (any_bool) fputs("  PetscBool bool_value; /* a bool parameter as PETSc reads it; AppCtx holds 1 or 0 */\n", out);
    fputs("\n", out);
  }
  fputs("  PetscFunctionBeginUser;\n", out);
  emit_c_function_begin(E);
  declare_spacing(P, P->ir->param_default, m->nparams, "  ");
  fprintf(out, "  PetscOptionsBegin(PETSC_COMM_WORLD, NULL, \"Parameters of %s\", \"\");\n", P->o->stn_name);
  for (int i = 0; i < m->nparams; i++) {
    const Node *p = m->params[i];
    const char *nm = E->param[i];
    int line = ast_line(P->ir->src, p);
    if (m->param_len[i]) {  /* the whole list at once */
      list_parameter(P, i);
      i += m->param_len[i] - 1;
      continue;
    }
    fprintf(out, "  user->%s = ", nm);
    emit_c_expr(E, P->ir->param_default[i]);
    fprintf(out, "; /* %s:%d */\n", P->o->stn_name, line);
    /* A computed int default (from the grid, say) is checked to be whole unless the option replaces it. */
    bool computed = m->param_type[i] == PT_INT && P->ir->nodes[P->ir->param_default[i]].op != IR_CONST;
    if (computed) fprintf(out, "  int_value = PetscAbsReal(user->%s) <= PETSC_MAX_INT ? (PetscInt)user->%s : 0;\n", nm, nm);
    else if (m->param_type[i] == PT_INT) fprintf(out, "  int_value = (PetscInt)user->%s;\n", nm);
    if (m->param_type[i] == PT_BOOL) fprintf(out, "  bool_value = user->%s != 0 ? PETSC_TRUE : PETSC_FALSE;\n", nm);
    if (m->param_type[i] == PT_CHOICE) {  /* the option is one of the names; the value its index */
      fputs("  {\n    static const char *const choices[] = {", out);
      for (const Node *c = p->param.type->list.items; c; c = c->next)
        fprintf(out, "%s\"%s\"", c == p->param.type->list.items ? "" : ", ", c->name.name);
      fputs("};\n    const char *text;\n    PetscBool   named;\n\n", out);
      fprintf(out, "    PetscCall(PetscOptionsFindPair(NULL, NULL, \"-%s\", &text, &named)); /* PETSc takes a bare -%s for the first name */\n",
              p->param.name, p->param.name);
      fprintf(out, "    PetscCheck(!named || (text && text[0]), PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, \"-%s was given without a value: write -%s ", p->param.name, p->param.name);
      for (const Node *c = p->param.type->list.items; c; c = c->next)
        fprintf(out, "%s%s", c == p->param.type->list.items ? "" : c->next ? ", " : " or ", c->name.name);
      fprintf(out, "\");\n    int_value = (PetscInt)user->%s;\n    PetscCall(PetscOptionsEList(\"-%s\", ", nm, p->param.name);
      c_string(out, p->param.desc ? p->param.desc : p->param.name);
      fprintf(out, ", \"%s\", choices, %d, choices[int_value], &int_value, &given[%d]));\n  }\n  user->%s = (PetscReal)int_value;\n",
              P->o->stn_name, ast_count(p->param.type->list.items), i, nm);
      continue;
    }
    const char *reader = m->param_type[i] == PT_INT ? "Int" : m->param_type[i] == PT_BOOL ? "Bool" : "Real";
    fprintf(out, "  PetscCall(PetscOptions%s(\"-%s\", ", reader, p->param.name);  /* the option is the .stn's name */
    c_string(out, p->param.desc ? p->param.desc : p->param.name);
    if (m->param_type[i] == PT_INT) fprintf(out, ", \"%s\", int_value, &int_value, &given[%d]));\n", P->o->stn_name, i);
    if (computed)
      fprintf(out, "  PetscCheck(given[%d] || (PetscReal)int_value == user->%s, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE,\n"
                   "             \"-%s's default, %%g, is not a whole number: %s:%d declares it int; give -%s\", (double)user->%s);\n",
              i, nm, p->param.name, P->o->stn_name, line, p->param.name, nm);
    if (m->param_type[i] == PT_INT)
      fprintf(out, "  user->%s = (PetscReal)int_value;\n", nm);
    else if (m->param_type[i] == PT_BOOL)
      fprintf(out, ", \"%s\", bool_value, &bool_value, &given[%d]));\n  user->%s = bool_value ? 1 : 0;\n", P->o->stn_name, i, nm);
    else
      fprintf(out, ", \"%s\", user->%s, &user->%s, &given[%d]));\n", P->o->stn_name, nm, nm, i);
  }
  fputs("  PetscOptionsEnd();\n", out);
  if (m->nparams) fprintf(out, "  PetscCall(StnParamsGiven(%d, names, given));\n", m->nparams);
  for (int i = 0; i < m->nparams; i++) {
    double lo = m->param_lo[i], hi = m->param_hi[i];
    if (!m->params[i]->param.lo || (isinf(lo) && isinf(hi))) continue;
    const char *nm = E->param[i];
    fputs("  PetscCheck(", out);
    if (!isinf(lo)) {
      fprintf(out, "user->%s >= ", nm);
      emit_c_number(out, lo);
    }
    if (!isinf(lo) && !isinf(hi)) fputs(" && ", out);
    if (!isinf(hi)) {
      fprintf(out, "user->%s <= ", nm);
      emit_c_number(out, hi);
    }
    const char *name = m->params[i]->param.name;
    int line = ast_line(P->ir->src, m->params[i]), *deps = xmalloc(((size_t)m->nparams + 1) * sizeof *deps), ndeps;
    bool grid;
    fprintf(out, ", PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE,\n             ");
    ndeps = default_deps(P, i, deps, &grid);
    if (m->param_len[i])  /* a list's defaults are constants, checked at compile time */
      fprintf(out, "\"-%s: its value %d of %d, %%g, is out of range: %s:%d allows [%g, %g]\", (double)user->%s);\n", name,
              m->param_elem[i] + 1, m->param_len[i], P->o->stn_name, line, lo, hi, nm);
    else if (ndeps || grid) { /* a default computed from other options: name them when the default is out */
      fprintf(out, "given[%d] ? \"-%s %%g is out of range: %s:%d allows [%g, %g]\"\n"
                   "             : \"-%s's default, %%g, computed from ", i, name, P->o->stn_name, line, lo, hi, name);
      for (int d = 0; d < ndeps; d++) fprintf(out, "%s-%s", d ? (d + 1 == ndeps && !grid ? " and " : ", ") : "", m->params[deps[d]]->param.name);
      if (grid) fprintf(out, "%sthe grid", ndeps ? " and " : "");
      fprintf(out, ", is out of range: %s:%d allows [%g, %g]; give -%s or change what it depends on\", (double)user->%s);\n",
              P->o->stn_name, line, lo, hi, name, nm);
    } else
      fprintf(out, "\"-%s %%g is out of range: %s:%d allows [%g, %g]\", (double)user->%s);\n", name, P->o->stn_name, line, lo, hi, nm);
    free(deps);
  }
  fputs("  PetscFunctionReturn(PETSC_SUCCESS);\n}\n\n", out);
}

static void form_initial_guess(Program *P) {
  const Model *m = P->m;
  FILE *out = P->out;
  bool any = false;
  for (int f = 0; f < m->nfields; f++) any |= m->fields[f].initial != NULL;
  fputs(m->time_dependent ? "/* The initial condition, the state at t = 0 (the .stn's initial blocks). */\n"
                          : "/* The initial guess of Newton's method (the .stn's initial blocks). */\n", out);
  fprintf(out, "static PetscErrorCode FormInitialGuess(const DMDALocalInfo *info, AppCtx *user, Vec X)\n{\n");
  if (!any) {
    fputs("  PetscFunctionBeginUser;\n  PetscCall(VecSet(X, 0.0)); /* no initial blocks: 0 everywhere */\n"
          "  PetscFunctionReturn(PETSC_SUCCESS);\n}\n\n", out);
    return;
  }
  fprintf(out, "  Field %sx;\n\n  PetscFunctionBeginUser;\n", array_stars(P));
  fputs("  PetscCall(DMDAVecGetArray(info->da, X, &x));\n", out);
  loop_over_points(P, BLOCK_INITIAL, initial_roots, initial_body, NULL);
  fputs("  PetscCall(DMDAVecRestoreArray(info->da, X, &x));\n  PetscFunctionReturn(PETSC_SUCCESS);\n}\n\n", out);
}

/* PetscLogFlops(count * info->xm * ...) with the operations per point of the interior's roots. */
static int log_flops(Program *P, CaseRoots roots_of, const char *logger, const char *info) {
  Ref roots[MAX_FIELDS * 2];
  int n = 0;
  roots_of(P, emit_interior_class(P->m), roots, &n);
  int flops = emit_c_flops(&P->E, roots, n);
  fprintf(P->out, "  PetscCall(%s(%d.0 * %sxm", logger, flops, info);
  if (P->m->dim > 1) fprintf(P->out, " * %sym", info);
  if (P->m->dim > 2) fprintf(P->out, " * %szm", info);
  fputs(")); /* the interior's operations, counted at every point */\n", P->out);
  return flops;
}

static void form_function(Program *P) {
  FILE *out = P->out;
  const char *st = array_stars(P);
  if (P->m->time_dependent) {
    fputs("/* F(t, x, xdot) at the locally owned points, TS's IFunction: x is the local (ghosted) state,\n"
          "   xdot its time derivative (dt(u) in the .stn), t the time. */\n", out);
    fprintf(out, "static PetscErrorCode FormIFunctionLocal(DMDALocalInfo *info, PetscReal t, const Field %sx, const Field %sxdot, Field %sf, AppCtx *user)\n{\n",
            st, st, st);
  } else {
    fputs("/* F(x) at the locally owned points; x is the local (ghosted) state. */\n", out);
    fprintf(out, "static PetscErrorCode FormFunctionLocal(DMDALocalInfo *info, const Field %sx, Field %sf, AppCtx *user)\n{\n",
            st, st);
  }
  fputs("  PetscFunctionBeginUser;\n", out);
  loop_over_points(P, BLOCK_RESIDUAL, emit_residual_roots, emit_residual_body, NULL);
  log_flops(P, emit_residual_roots, "PetscLogFlops", "info->");
  fputs("  PetscFunctionReturn(PETSC_SUCCESS);\n}\n\n", out);
}

/* IMEX: G(t, x), TS's RHSFunction, from the residuals' explicit(...) terms. */
static void form_rhs_function(Program *P) {
  FILE *out = P->out;
  const char *st = array_stars(P);
  if (!P->ir->imex) return;
  fputs("/* G(t, x) at the locally owned points, TS's RHSFunction: minus the explicit(...) terms of the\n"
        "   residuals, which the IFunction leaves out; TS solves F(t, x, xdot) = G(t, x), and an IMEX\n"
        "   method (-ts_type arkimex) takes G explicitly. x is the local (ghosted) state. */\n", out);
  fprintf(out, "static PetscErrorCode FormRHSFunctionLocal(DMDALocalInfo *info, PetscReal t, const Field %sx, Field %sg, AppCtx *user)\n{\n",
          st, st);
  fputs("  PetscFunctionBeginUser;\n", out);
  loop_over_points(P, BLOCK_RESIDUAL, emit_rhs_roots, emit_rhs_body, NULL);
  log_flops(P, emit_rhs_roots, "PetscLogFlops", "info->");
  fputs("  PetscFunctionReturn(PETSC_SUCCESS);\n}\n\n", out);
}

/* The IJacobian's arguments after x: the time derivative and the shift (time-dependent). */
static const char *time_args(const Program *P) {
  if (!P->m->time_dependent) return "";
  return P->m->dim == 1 ? ", const Field *xdot, PetscReal shift" : P->m->dim == 2 ? ", const Field **xdot, PetscReal shift"
                                                                                 : ", const Field ***xdot, PetscReal shift";
}

/* With an approximate block, two matrices: the exact Jacobian (every entry derived), the
   operator A, and the one with the approximate entries, the preconditioning matrix P. */
static void form_exact_jacobian(Program *P) {
  FILE *out = P->out;
  fputs("/* The exact Jacobian, the operator of Newton's linear systems: every entry is the\n"
        "   derivative of the residual (derived, or given in an exact block), the approximate\n"
        "   blocks' entries too. The rows go into J, SG-DIA or AIJ. */\n", out);
  fprintf(out, "static PetscErrorCode FormJacobianExactLocal(DMDALocalInfo *info%s, const Field %sx%s, Mat J, AppCtx *user)\n{\n",
          P->m->time_dependent ? ", PetscReal t" : "", array_stars(P), time_args(P));
  fputs("  StnBlockRows rows;\n\n  PetscFunctionBeginUser;\n"
        "  PetscCall(StnBlockRowsBegin(info, J, J, NSTENCIL, DOF, stencil_offsets, &rows));\n", out);
  P->exact = true;
  loop_over_points(P, BLOCK_JACOBIAN, emit_jacobian_roots, emit_jacobian_body, store_block_row);
  P->exact = false;
  fputs("  PetscCall(StnBlockRowsEnd(&rows));\n  PetscFunctionReturn(PETSC_SUCCESS);\n}\n\n", out);
}

static void form_jacobian(Program *P) {
  FILE *out = P->out;
  bool approx = P->ir->approximate;
  if (approx) form_exact_jacobian(P);
  if (P->m->time_dependent)
    fputs("/* TS's IJacobian, shift * dF/d(xdot) + dF/dx, at the locally owned points, one block row per\n"
          "   point: v[s][r][c] is its entry for F_r and x_c at neighbour s, the part dF/dx derived from\n"
          "   the residual unless the .stn gives it, the part of the time derivatives always derived.\n", out);
  else
    fputs("/* The Jacobian at the locally owned points, one block row per point: v[s][r][c] is\n"
          "   d(F_r)/d(x_c at neighbour s), derived from the residual unless the .stn gives it.\n", out);
  if (approx)
    fputs("   The .stn's approximate entries make it the preconditioning matrix P only (SG-DIA or\n"
          "   AIJ); the operator J gets the exact Jacobian where it is a matrix, and is J w\n"
          "   without a matrix (GPU) or -snes_mf_operator's differences otherwise. */\n", out);
  else fputs("   The rows go into P, SG-DIA or AIJ (StnBlockRowsBegin says which). */\n", out);
  if (P->m->time_dependent)
    fprintf(out, "static PetscErrorCode FormIJacobianLocal(DMDALocalInfo *info, PetscReal t, const Field %sx%s, Mat J, Mat P, AppCtx *user)\n{\n",
            array_stars(P), time_args(P));
  else
    fprintf(out, "static PetscErrorCode FormJacobianLocal(DMDALocalInfo *info, const Field %sx, Mat J, Mat P, AppCtx *user)\n{\n",
            array_stars(P));
  fprintf(out, "  StnBlockRows rows;\n%s\n  PetscFunctionBeginUser;\n", approx ? "  PetscBool    assembled;\n" : "");
  fprintf(out, "  PetscCall(StnBlockRowsBegin(info, %s, P, NSTENCIL, DOF, stencil_offsets, &rows));\n", approx ? "P" : "J");
  loop_over_points(P, BLOCK_JACOBIAN, emit_jacobian_roots, emit_jacobian_body, store_block_row);
  fputs("  PetscCall(StnBlockRowsEnd(&rows));\n", out);
  if (approx)
    fputs("  PetscCall(StnOperatorAssembled(J, P, &assembled)); /* J is a matrix of its own */\n"
          "  if (assembled) PetscCall(FormJacobianExactLocal(info, ", out);
  if (approx) fputs(P->m->time_dependent ? "t, x, xdot, shift, J, user));\n" : "x, J, user));\n", out);
  fputs("  PetscFunctionReturn(PETSC_SUCCESS);\n}\n\n", out);
}

/* With coefficients read from files, the kernels' context on a grid: a copy of the parameters
   that the grid's DM keeps, with the device arrays of the coefficients on that grid. Returns
   whether the program has one. */
static bool grid_context(Program *P) {
  const Model *m = P->m;
  FILE *out = P->out;
  bool any = false;
  for (int c = 0; c < m->ncoefs; c++) any |= P->E.coef[c] != NULL;
  if (!any) return false;
  fputs("/* The kernels' context on info's grid: the parameters, and the device arrays of the coefficients\n"
        "   read from files on this grid (each grid of a multigrid hierarchy has its own). The DM keeps\n"
        "   it, so it lives as long as the grid. */\n"
        "static PetscErrorCode GridContext(DMDALocalInfo *info, const AppCtx *user, AppCtx **grid_user)\n{\n"
        "  PetscFunctionBeginUser;\n"
        "  PetscCall(StnCoefficientGridContext(info->da, user, sizeof(AppCtx), (void **)grid_user));\n", out);
  for (int c = 0; c < m->ncoefs; c++)
    if (P->E.coef[c])
      fprintf(out, "  PetscCall(StnCoefficientGetArrayDevice(info->da, \"%s\", &(*grid_user)->%s));\n", m->coefs[c]->coef.name,
              P->E.coef[c]);
  fputs("  PetscFunctionReturn(PETSC_SUCCESS);\n}\n\n", out);
  return true;
}

/* The GPU twins of FormFunctionLocal and FormJacobianLocal: the kernels are in the .cu file,
   the launches in the runtime (StnResidualCUDA); here the kernels' context and their table. */
static void gpu_functions(Program *P) {
  const Model *m = P->m;
  FILE *out = P->out;
  fputs("#if defined(PETSC_HAVE_CUDA)\n", out);
  unsigned long hash = 2166136261u; /* FNV-1a of the .stn: a tuned shape belongs to these kernels */
  for (const char *c = P->ir->src->text; *c; c++) hash = ((hash ^ (unsigned char)*c) * 16777619u) & 0xffffffffu;
  Ref roots[MAX_FIELDS * 2];
  int n = 0;
  emit_residual_roots(P, emit_interior_class(m), roots, &n);
  if (m->time_dependent) {
    fputs("/* The .cu file's kernels, TS's IFunction and IJacobian: their name for the tuned shapes (the\n"
          "   .stn and its hash), the IFunction's operations per point, the host IJacobian for grids\n"
          "   not in SG-DIA, and the powers of h that scale multigrid's coarse grids (stnapp.h). */\n", out);
    fprintf(out, "static StnKernels kernels = {.name = \"%s-%08lx\", .residual = FormIFunctionCUDA, .jacobian = FormIJacobianCUDA, .residual_flops = %d.0,\n"
                 "                             .ijacobian_host = (StnIJacobianHostFn *)FormIJacobianLocal, .h_power = h_power};\n\n",
            P->o->stn_name, hash, emit_c_flops(&P->E, roots, n));
  } else {
    fputs("/* The .cu file's kernels, their name for the tuned shapes (the .stn and its hash), the\n"
          "   residual's operations per point, the host Jacobian for grids not in SG-DIA, and the\n"
          "   Jacobian's product without its matrix (-stn_operator matfree). */\n", out);
    fprintf(out, "static StnKernels kernels = {\"%s-%08lx\", FormFunctionCUDA, FormJacobianCUDA, %d.0, (DMDASNESJacobianFn *)FormJacobianLocal, FormJacobianMultCUDA};\n\n",
            P->o->stn_name, hash, emit_c_flops(&P->E, roots, n));
  }
  /* With coefficients read from files the kernels get the grid's context, not main's AppCtx. */
  bool ctx = grid_context(P);
  const char *decl = ctx ? "  AppCtx *grid_user;\n\n" : "";
  const char *set = ctx ? "  PetscCall(GridContext(info, (AppCtx *)user, &grid_user));\n" : "";
  const char *arg = ctx ? "grid_user" : "user";
  if (P->ir->imex) {
    n = 0;
    emit_rhs_roots(P, emit_interior_class(m), roots, &n);
    fputs("/* The .cu file's kernel of TS's RHSFunction G, the residuals' explicit terms: its name for the\n"
          "   tuned shapes and its operations per point. */\n", out);
    fprintf(out, "static StnKernels rhs_kernels = {.name = \"%s-%08lx-rhs\", .residual = FormRHSFunctionCUDA, .residual_flops = %d.0, .h_power = h_power};\n\n",
            P->o->stn_name, hash, emit_c_flops(&P->E, roots, n));
    fprintf(out, "/* G(t, x) on the GPU, TS's RHSFunction: X is the local (ghosted) state, G the right-hand side,\n"
                 "   both CUDA vectors. */\n"
                 "static PetscErrorCode FormRHSFunctionLocalCUDA(DMDALocalInfo *info, PetscReal t, Vec X, Vec G, void *user)\n{\n"
                 "%s  PetscFunctionBeginUser;\n%s"
                 "  PetscCall(StnRHSFunctionCUDA(info, t, X, G, &rhs_kernels, %s));\n  PetscFunctionReturn(PETSC_SUCCESS);\n}\n\n",
            decl, set, arg);
  }
  if (m->time_dependent) {
    fprintf(out, "/* F(t, x, xdot) on the GPU, TS's IFunction: X is the local (ghosted) state, Xdot its time\n"
                 "   derivative, F the residual, all CUDA vectors. */\n"
                 "static PetscErrorCode FormIFunctionLocalCUDA(DMDALocalInfo *info, PetscReal t, Vec X, Vec Xdot, Vec F, void *user)\n{\n"
                 "%s  PetscFunctionBeginUser;\n%s"
                 "  PetscCall(StnIFunctionCUDA(info, t, X, Xdot, F, &kernels, %s));\n  PetscFunctionReturn(PETSC_SUCCESS);\n}\n\n",
            decl, set, arg);
    fprintf(out, "/* TS's IJacobian on the GPU, shift * dF/d(xdot) + dF/dx straight into the SG-DIA values in\n"
                 "   device memory. */\n"
                 "static PetscErrorCode FormIJacobianLocalCUDA(DMDALocalInfo *info, PetscReal t, Vec X, Vec Xdot, PetscReal shift, Mat J, Mat P, void *user)\n{\n"
                 "%s  PetscFunctionBeginUser;\n%s"
                 "  PetscCall(StnIJacobianCUDA(info, t, X, Xdot, shift, J, P, &kernels, %s));\n  PetscFunctionReturn(PETSC_SUCCESS);\n}\n"
                 "#endif\n\n",
            decl, set, arg);
    return;
  }
  fprintf(out, "/* F(x) on the GPU: X is the local (ghosted) state, F the residual, both CUDA vectors. */\n"
               "static PetscErrorCode FormFunctionLocalCUDA(DMDALocalInfo *info, Vec X, Vec F, void *user)\n{\n"
               "%s  PetscFunctionBeginUser;\n%s"
               "  PetscCall(StnResidualCUDA(info, X, F, &kernels, %s));\n  PetscFunctionReturn(PETSC_SUCCESS);\n}\n\n",
          decl, set, arg);
  fprintf(out, "/* The Jacobian on the GPU, straight into the SG-DIA values in device memory. */\n"
               "static PetscErrorCode FormJacobianLocalCUDA(DMDALocalInfo *info, Vec X, Mat J, Mat P, void *user)\n{\n"
               "%s  PetscFunctionBeginUser;\n%s"
               "  PetscCall(StnJacobianCUDA(info, X, J, P, &kernels, %s));\n  PetscFunctionReturn(PETSC_SUCCESS);\n}\n"
               "#endif\n\n",
          decl, set, arg);
}

/* DMDASetUniformCoordinates with the .stn's domain, for the output, then tail. */
static void uniform_coordinates(Program *P, const char *tail) {
  FILE *out = P->out;
  fputs("  PetscCall(DMDASetUniformCoordinates(da", out);
  for (int d = 0; d < MAX_DIM; d++) {
    if (d < P->m->dim) {
      fputs(", ", out);
      emit_c_number(out, P->m->axes[d].lo);
      fputs(", ", out);
      emit_c_number(out, P->m->axes[d].hi);
    } else
      fputs(", 0.0, 0.0", out);
  }
  fprintf(out, ")%s\n", tail);
}

/* The rest of main for a time-dependent program: TS with the IFunction and IJacobian, its SNES
   set up as a steady program's, the time stepping from the initial condition, the output. */
/* The registration of the IFunction and the IJacobian, and their CUDA twins, at indent. */
static void register_ifunction(Program *P, const char *in) {
  fprintf(P->out, "%sPetscCall(DMDATSSetIFunctionLocal(da, INSERT_VALUES, (DMDATSIFunctionLocal)FormIFunctionLocal, &user));\n"
                  "%sPetscCall(DMDATSSetIJacobianLocal(da, (DMDATSIJacobianLocal)FormIJacobianLocal, &user));\n"
                  "#if defined(PETSC_HAVE_CUDA)\n"
                  "%sif (app.gpu) { /* the CUDA twins, on CUDA vectors (they take precedence) */\n"
                  "%s  PetscCall(StnTSSetIFunctionLocalVec(da, FormIFunctionLocalCUDA, &user));\n"
                  "%s  PetscCall(StnTSSetIJacobianLocalVec(da, FormIJacobianLocalCUDA, &user));\n%s}\n"
                  "#endif\n",
          in, in, in, in, in, in);
}

static void time_stepper(Program *P) {
  FILE *out = P->out;
  bool imex = P->ir->imex, rhs_only = P->ir->rhs_only;
  fprintf(out, "  /* ---- the time stepper: F(t, x, xdot) = %s and its IJacobian; each implicit step a Newton solve ---- */\n"
               "  PetscCall(StnTSSetUp(&app)); /* what a time-dependent program cannot do: stnts.h */\n"
               "  PetscCall(TSCreate(PETSC_COMM_WORLD, &ts));\n  PetscCall(TSSetDM(ts, da));\n", imex ? "G(t, x)" : "0");
  if (!rhs_only) register_ifunction(P, "  ");
  if (imex)
    fputs("  PetscCall(DMDATSSetRHSFunctionLocal(da, INSERT_VALUES, (DMDATSRHSFunctionLocal)FormRHSFunctionLocal, &user)); /* G: the explicit terms */\n"
          "#if defined(PETSC_HAVE_CUDA)\n"
          "  if (app.gpu) PetscCall(StnTSSetRHSFunctionLocalVec(da, FormRHSFunctionLocalCUDA, &user)); /* its CUDA twin */\n"
          "#endif\n", out);
  fputs("  PetscCall(StnTSSetDefaults(ts)); /* backward Euler, t from 0 to 1 in steps of 0.01: -ts_type, -ts_max_time, -ts_dt */\n", out);
  if (imex) /* backward Euler would solve G too, without its Jacobian */
    fputs("  PetscCall(TSSetType(ts, TSARKIMEX)); /* the explicit(...) terms: an IMEX method by default */\n", out);
  fputs("  PetscCall(TSGetSNES(ts, &snes));\n"
        "  PetscCall(StnAppSetUpSolver(&app, snes, NSTENCIL, stencil_offsets, h_power)); /* SG-DIA, defaults per device */\n"
        "  PetscCall(TSSetFromOptions(ts));\n", out);
  if (rhs_only) {
    fputs("  /* u_t = G: an explicit method (rk, euler, ssp, glee) takes G alone and refuses an IFunction; the\n"
          "     others get F = u_t and its IJacobian shift * I */\n"
          "  PetscCall(StnTSExplicitMethod(ts, &explicit_method));\n"
          "  if (!explicit_method) {\n", out);
    register_ifunction(P, "    ");
    fputs("  }\n", out);
  }
  fputs("  PetscCall(StnAppSetUpJacobian(&app, snes)); /* an AIJ copy where the preconditioner needs one */\n", out);
  if (P->o->hooks) fputs("  PetscCall(UserHooksSetUp(snes, &user)); /* your monitor, line-search check, convergence test: see \"user hooks\" */\n", out);
  fputs("\n", out);
  fputs("  /* ---- step in time from the initial condition, then the output: VTK, pictures ---- */\n"
        "  PetscCall(DMCreateGlobalVector(da, &X));\n  PetscCall(FormInitialGuess(&info, &user, X));\n", out);
  uniform_coordinates(P, "); /* before the time stepping, whose saved states (-stn_output_series) show them */");
  fputs("  PetscCall(StnAppSolveTS(&app, ts, X, &reason));\n"
        "  PetscCall(StnAppWriteOutputTS(&app, ts, X, reason));\n\n", out);
  fputs("  PetscCall(VecDestroy(&X));\n  PetscCall(StnAppDestroy(&app));\n"
        "  PetscCall(TSDestroy(&ts));\n  PetscCall(DMDestroy(&da));\n"
        "  PetscCall(PetscFinalize());\n  return reason > 0 ? 0 : 1;\n}\n", out);
}

static void main_function(Program *P) {
  const Model *m = P->m;
  FILE *out = P->out;
  const char *bt[MAX_DIM];
  for (int d = 0; d < m->dim; d++) bt[d] = m->axes[d].periodic ? "DM_BOUNDARY_PERIODIC" : "DM_BOUNDARY_NONE";
  fputs("int main(int argc, char **argv)\n{\n"
        "  AppCtx              user; /* the parameters */\n"
        "  StnApp              app;  /* the program's options (-stn_*) and matrices: stnapp.h */\n"
        "  DM                  da;\n  DMDALocalInfo       info;\n", out);
  if (m->time_dependent)
    fprintf(out, "  TS                  ts;\n  SNES                snes; /* the TS's, for each implicit step */\n  Vec                 X;\n"
                 "  TSConvergedReason   reason;\n%s\n",
            P->ir->rhs_only ? "  PetscBool           explicit_method; /* -ts_type rk, euler or ssp */\n" : "");
  else
    fputs("  SNES                snes;\n  Vec                 X;\n  SNESConvergedReason reason;\n\n", out);
  fputs("  PetscCall(StnAppDefaults()); /* before PetscInitialize, which reads them: stnapp.h */\n"
        "  PetscCall(PetscInitialize(&argc, &argv, NULL, help));\n", out);
  fprintf(out, "  PetscCall(StnAppSetFromOptions(&app, \"%s\"));\n\n", P->o->program);
  const Node *grid = NULL;
  for (const Node *d = m->program->list.items; d; d = d->next)
    if (d->kind == N_GRID) grid = d;
  fprintf(out, "  /* ---- the grid: %s:%d ---- */\n", P->o->stn_name, grid ? ast_line(P->ir->src, grid) : 1);
  const char *stype = m->shape == SHAPE_BOX ? "DMDA_STENCIL_BOX" : "DMDA_STENCIL_STAR";
  if (m->dim == 1)
    fprintf(out, "  PetscCall(DMDACreate1d(PETSC_COMM_WORLD, %s, %lld, DOF, %d, NULL, &da));\n", bt[0], m->axes[0].points,
            m->width);
  if (m->dim == 2)
    fprintf(out, "  PetscCall(DMDACreate2d(PETSC_COMM_WORLD, %s, %s, %s, %lld, %lld, PETSC_DECIDE, PETSC_DECIDE, DOF, %d, NULL, NULL, &da));\n",
            bt[0], bt[1], stype, m->axes[0].points, m->axes[1].points, m->width);
  if (m->dim == 3)
    fprintf(out, "  PetscCall(DMDACreate3d(PETSC_COMM_WORLD, %s, %s, %s, %s, %lld, %lld, %lld, PETSC_DECIDE, PETSC_DECIDE, PETSC_DECIDE, DOF, %d, NULL, NULL, NULL, &da));\n",
            bt[0], bt[1], bt[2], stype, m->axes[0].points, m->axes[1].points, m->axes[2].points, m->width);
  fputs("  PetscCall(DMSetFromOptions(da));\n", out);
  fputs("  PetscCall(StnAppSplitGrid(&app, da)); /* on several GPUs, slabs along the last axis */\n", out);
  fprintf(out, "  PetscCall(StnAppCheckGrid(da, %d, \"%s\")); /* 2 * stencil width + 1 points, and no more ranks than fit */\n",
          2 * m->width + 1, P->o->stn_name);
  fputs("  PetscCall(DMSetUp(da));\n  PetscCall(StnAppSetUpGrid(&app, da)); /* GPU vectors */\n", out);
  for (int f = 0; f < m->nfields; f++) fprintf(out, "  PetscCall(DMDASetFieldName(da, %d, \"%s\"));\n", f, m->fields[f].name);
  for (int c = 0; c < m->ncoefs; c++)
    if (P->E.coef[c])
      fprintf(out, "  PetscCall(StnCoefficientLoad(da, \"%s\", \"%s:%d\")); /* coefficient %s: the file -%s_file names */\n",
              m->coefs[c]->coef.name, P->o->stn_name, ast_line(P->ir->src, m->coefs[c]), m->coefs[c]->coef.name,
              m->coefs[c]->coef.name);
  fputs("  PetscCall(DMDAGetLocalInfo(da, &info));\n  PetscCall(SetParameters(&info, &user));\n"
        "", out);
  if (P->ir->approximate)
    fputs("  app.approximate = PETSC_TRUE; /* an approximate jacobian block: the exact operator, P from the .stn */\n", out);
  if (P->any_given || m->nparams == 0) fputs("  user.check_jacobian = app.check_jacobian;\n", out);
  fputs("\n", out);

  if (m->time_dependent) {
    time_stepper(P);
    return;
  }
  fputs("  /* ---- the nonlinear solver: the residual and Jacobian on every grid of the hierarchy ---- */\n"
        "  PetscCall(SNESCreate(PETSC_COMM_WORLD, &snes));\n  PetscCall(SNESSetDM(snes, da));\n"
        "  PetscCall(DMDASNESSetFunctionLocal(da, INSERT_VALUES, (DMDASNESFunctionFn *)FormFunctionLocal, &user));\n"
        "  PetscCall(DMDASNESSetJacobianLocal(da, (DMDASNESJacobianFn *)FormJacobianLocal, &user));\n"
        "#if defined(PETSC_HAVE_CUDA)\n"
        "  if (app.gpu) { /* the CUDA twins, on CUDA vectors (they take precedence) */\n"
        "    PetscCall(DMDASNESSetFunctionLocalVec(da, INSERT_VALUES, FormFunctionLocalCUDA, &user));\n"
        "    PetscCall(DMDASNESSetJacobianLocalVec(da, FormJacobianLocalCUDA, &user));\n  }\n"
        "#endif\n"
        "  PetscCall(StnAppSetUpSolver(&app, snes, NSTENCIL, stencil_offsets, h_power)); /* SG-DIA, defaults per device */\n"
        "  PetscCall(SNESSetFromOptions(snes));\n"
        "  PetscCall(StnAppSetUpJacobian(&app, snes)); /* an AIJ copy where the preconditioner needs one */\n", out);
  if (P->o->hooks) fputs("  PetscCall(UserHooksSetUp(snes, &user)); /* your monitor, line-search check, convergence test: see \"user hooks\" */\n", out);
  fputs("\n", out);

  fputs("  /* ---- solve from the initial guess, then the output: VTK, pictures ---- */\n"
        "  PetscCall(DMCreateGlobalVector(da, &X));\n  PetscCall(FormInitialGuess(&info, &user, X));\n"
        "  PetscCall(StnAppSolve(&app, snes, X, &reason));\n", out);
  uniform_coordinates(P, "); /* now: the grids of a hierarchy need none */");
  fputs("  PetscCall(StnAppWriteOutput(&app, snes, X, reason));\n\n", out);
  fputs("  PetscCall(VecDestroy(&X));\n  PetscCall(StnAppDestroy(&app));\n"
        "  PetscCall(SNESDestroy(&snes));\n  PetscCall(DMDestroy(&da));\n"
        "  PetscCall(PetscFinalize());\n  return reason > 0 ? 0 : 1;\n}\n", out);
}

void emit_program_init(Program *P, const Ir *ir, const EmitOptions *o, FILE *out) {
  const Model *m = ir->m;
  *P = (Program){ir, m, o, out, {0}, NULL, false, false, false};
  if (cname_check_table()) ice("cnames.c: the reserved table is out of order at '%s'", cname_check_table());
  size_t nnames = (size_t)m->nfields + (size_t)m->nparams + (size_t)m->ncoefs + 1;
  const char **user = xmalloc(nnames * sizeof *user);
  char **cn = xmalloc(nnames * sizeof *cn);
  P->named = xmalloc(((size_t)ir->nnodes + 1) * sizeof *P->named);
  char **name = xcalloc((size_t)ir->nnodes + 1, sizeof *name);
  /* One C name per field and per parameter; a list's slots are its name indexed, blocks[1]. */
  int nuser = 0;
  for (int f = 0; f < m->nfields; f++) user[nuser++] = m->fields[f].name;
  for (int i = 0; i < m->nparams; i++)
    if (m->param_elem[i] == 0) user[nuser++] = m->params[i]->param.name;
  int nfile = 0;  /* the coefficients read from files: AppCtx members too, named last */
  for (int c = 0; c < m->ncoefs; c++)
    if (m->coefs[c]->coef.source) user[nuser + nfile++] = m->coefs[c]->coef.name;
  cname_assign(user, nuser + nfile, cn);
  char **coef = xcalloc((size_t)m->ncoefs + 1, sizeof *coef);
  for (int c = 0, k = 0; c < m->ncoefs; c++)
    if (m->coefs[c]->coef.source) coef[c] = cn[nuser + k++];
  for (int i = m->nparams - 1, j = nuser - 1; i >= 0; i--) {  /* spread from the back: slot >= name's place */
    char *base = cn[j];
    if (!m->param_len[i]) {
      cn[m->nfields + i] = base;
      j--;
      continue;
    }
    size_t size = strlen(base) + 16;
    cn[m->nfields + i] = xmalloc(size);
    snprintf(cn[m->nfields + i], size, "%s[%d]", base, m->param_elem[i]);
    if (m->param_elem[i] == 0) free(base), j--;
  }
  free(user);
  P->E = (CEmit){ir, out, cn, cn + m->nfields, coef, xcalloc((size_t)m->ncoefs + 1, sizeof(const char *)), "x",
                 "info->", "user->", name, false, NULL, 0, 0, 0, NULL, "xdot"};
  for (int i = 0; i < m->nfields * m->nclasses; i++)
    for (int e = 0; e < ir->points[i].nentries; e++) P->any_given |= ir->points[i].entries[e].given != IR_NONE;
}

void emit_program_free(Program *P) {
  const Model *m = P->m;
  for (int i = 0; i < m->nfields + m->nparams; i++) free(P->E.field[i]);
  for (int c = 0; c < m->ncoefs; c++) free(P->E.coef[c]);
  free(P->E.coef);
  free(P->E.coef_array);
  emit_c_free(&P->E);
  free(P->E.name);
  free(P->E.field);
  free(P->named);
}

void emit_c_program(const Ir *ir, const EmitOptions *o, FILE *out) {
  Program P;
  emit_program_init(&P, ir, o, out);
  header(&P);
  help_string(&P);
  declarations(&P);
  set_parameters(&P);
  form_initial_guess(&P);
  form_function(&P);
  form_rhs_function(&P);
  form_jacobian(&P);
  gpu_functions(&P);
  if (o->hooks) emit_c_hooks(&P);
  main_function(&P);
  emit_program_free(&P);
}
