/*
** explain.c: stencilc --explain FILE, the program told for a student. In
** order: the grid and the unknowns, the parameters, what each residual
** depends on as a small picture of stencil offsets, the residuals and
** their derived Jacobian entries in mathematical notation (per kind of
** point, as the IR has them), and the SG-DIA layout: the block-diagonal
** offsets in points and in rows, the column-major block columns, and the
** storage against CSR and DIA by the formulas of the SG-DIA paper
** (Choudary et al., section 3.1), with the numbers for the .stn's grid.
**
** Mirror declarations are told after the unknowns; the residuals then show
** the reads after the mirror (ir_mirror.c).
**
** Expressions print in the .stn's own syntax with the fewest parentheses
** the mathematics needs: unlike the C emitter, a + (b - c) prints as
** a + b - c, since here nobody compiles the text. A node that came from
** a `let` prints as the let's name, and the names used are listed after
** the entries ("where hydhx = hy/hx").
*/
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "explain.h"
#include "strutil.h"
#include "util.h"

/* Binding strength, loosest first (dsl/LANGUAGE.md, section 3). */
enum { L_IF = 1, L_OR, L_AND, L_NOT, L_CMP, L_ADD, L_MUL, L_UNARY, L_POW, L_PRIMARY };

/* The shortest text that reads back as v. */
static void number_text(char *buf, int size, double v) {
  if (isinf(v)) {
    snprintf(buf, (size_t)size, v > 0 ? "inf" : "-inf");
    return;
  }
  if (v == STN_PI) {
    snprintf(buf, (size_t)size, "pi");
    return;
  }
  if (v == floor(v) && fabs(v) < 1e15) {  /* 30, not 3e+01 */
    snprintf(buf, (size_t)size, "%.0f", v);
    return;
  }
  for (int digits = 1; digits <= 17; digits++) {
    snprintf(buf, (size_t)size, "%.*g", digits, v);
    if (strtod(buf, NULL) == v) break;
  }
}

/* A constant as a student would write it: 2*pi rather than 6.283185307179586
   (folding made it one number). Returns how tightly the text binds. */
static int const_text(char *buf, int size, double v) {
  double a = fabs(v);
  const char *sign = v < 0 ? "-" : "";
  int l = v < 0 ? L_UNARY : L_PRIMARY;
  if (a == STN_PI * STN_PI) {
    snprintf(buf, (size_t)size, "%spi^2", sign);
    return v < 0 ? L_UNARY : L_POW;
  }
  for (int n = 2; n <= 16; n++) {
    if (a == n * STN_PI) {
      snprintf(buf, (size_t)size, "%s%d*pi", sign, n);
      return v < 0 ? L_UNARY : L_MUL;
    }
    if (a == STN_PI / n) {
      snprintf(buf, (size_t)size, "%spi/%d", sign, n);
      return v < 0 ? L_UNARY : L_MUL;
    }
  }
  number_text(buf, size, v);
  return l;
}

/* A count that may exceed 2^53 on absurd grids: exact when it can be. */
static void count_text(char *buf, int size, double v) {
  if (v < 9e15) snprintf(buf, (size_t)size, "%.0f", v);
  else snprintf(buf, (size_t)size, "%.4g", v);
}

/* ---- expressions in the .stn's syntax ---- */


enum { PRINT_BUDGET = 20000 };  /* nodes per expression: a DAG can print exponentially long */

typedef struct Printer {
  const Ir    *ir;
  const char **name;    /* by node: the let it prints as, or NULL */
  Ref         *used;    /* named nodes printed, in order of first use */
  int          nused;
  char        *is_used; /* by node */
  int          budget;  /* nodes left for the expression being printed */
} Printer;

static bool leaf(const IrNode *n) { return n->op <= IR_FIELD; }

static void mark_live(const Ir *ir, Ref r, char *live) {
  if (r == IR_NONE || live[r]) return;
  live[r] = 1;
  const IrNode *n = &ir->nodes[r];
  if (leaf(n)) return;
  mark_live(ir, n->a, live);
  mark_live(ir, n->b, live);
  mark_live(ir, n->c, live);
}

/* Names for the live nodes that came from lets; a name two live nodes
   carry (lets of one name in two blocks) names neither. */
static void printer_init(Printer *P, const Ir *ir) {
  const Model *m = ir->m;
  memset(P, 0, sizeof *P);
  P->ir = ir;
  P->name = xcalloc((size_t)ir->nnodes + 1, sizeof *P->name);
  P->used = xcalloc((size_t)ir->nnodes + 1, sizeof *P->used);
  P->is_used = xcalloc((size_t)ir->nnodes + 1, 1);
  char *live = xcalloc((size_t)ir->nnodes + 1, 1);
  for (int i = 0; i < m->nparams; i++) mark_live(ir, ir->param_default[i], live);
  for (int i = 0; i < m->nfields * m->nclasses; i++) {
    const IrPoint *p = &ir->points[i];
    if (!p->residual_rule) continue;
    mark_live(ir, p->residual, live);
    mark_live(ir, p->rhs, live);
    for (int e = 0; e < p->nentries; e++) mark_live(ir, p->entries[e].derived, live), mark_live(ir, p->entries[e].given, live);
  }
  for (Ref r = 0; r < ir->nnodes; r++) {
    if (!live[r] || !ir->hint[r] || leaf(&ir->nodes[r])) continue;
    bool clash = false;
    for (Ref q = 0; q < ir->nnodes && !clash; q++)
      clash = q != r && live[q] && ir->hint[q] && !leaf(&ir->nodes[q]) && strcmp(ir->hint[q], ir->hint[r]) == 0;
    if (!clash) P->name[r] = ir->hint[r];
  }
  free(live);
}

static void printer_free(Printer *P) {
  free(P->name);
  free(P->used);
  free(P->is_used);
}

static int level(const Printer *P, Ref r) {
  const IrNode *n = &P->ir->nodes[r];
  if (P->name[r]) return L_PRIMARY;
  switch (n->op) {
  case IR_CONST: {
    char buf[64];
    return const_text(buf, sizeof buf, n->num);
  }
  case IR_NEG: return L_UNARY;
  case IR_NOT: return L_NOT;
  case IR_ADD: case IR_SUB: return L_ADD;
  case IR_MUL: case IR_DIV: return L_MUL;
  case IR_POW: return L_POW;
  case IR_EQ: case IR_NE: case IR_LT: case IR_LE: case IR_GT: case IR_GE: return L_CMP;
  case IR_AND: return L_AND;
  case IR_OR: return L_OR;
  case IR_SELECT: return L_IF;
  default: return L_PRIMARY;
  }
}

static void expr(Printer *P, Str *b, Ref r, bool expand);

/* r's text, in parentheses when it binds looser than min (or when it
   starts with a minus and must not: a*(-b)). */
static void operand(Printer *P, Str *b, Ref r, int min, bool no_minus) {
  Str t = {0};
  expr(P, &t, r, false);
  bool wrap = level(P, r) < min || (no_minus && t.s && t.s[0] == '-');
  if (wrap) str_add(b, "(");
  str_add(b, str_text(&t));
  if (wrap) str_add(b, ")");
  free(t.s);
}

static const char *op_text(IrOp op) {
  switch (op) {
  case IR_MUL: return "*";
  case IR_DIV: return "/";
  case IR_POW: return "^";
  case IR_EQ:  return " == ";
  case IR_NE:  return " != ";
  case IR_LT:  return " < ";
  case IR_LE:  return " <= ";
  case IR_GT:  return " > ";
  case IR_GE:  return " >= ";
  case IR_AND: return " and ";
  case IR_OR:  return " or ";
  default:     ice("explain: no operator for op %d", (int)op);
  }
}

static void expr(Printer *P, Str *b, Ref r, bool expand) {
  const Ir *ir = P->ir;
  const IrNode *n = &ir->nodes[r];
  char buf[64];
  if (P->name[r] && !expand) {
    str_add(b, P->name[r]);
    if (!P->is_used[r]) {
      P->is_used[r] = 1;
      P->used[P->nused++] = r;
    }
    return;
  }
  if (--P->budget < 0) {
    str_add(b, "...");
    return;
  }
  switch (n->op) {
  case IR_CONST:
    const_text(buf, sizeof buf, n->num);
    str_add(b, buf);
    break;
  case IR_PARAM:
    sema_param_name(ir->m, n->a, buf, sizeof buf);
    str_add(b, buf);
    break;
  case IR_GRID:  str_add(b, builtin_values[n->a].name); break;
  case IR_SHIFT: str_add(b, "shift"); break;
  case IR_DOT: {  /* the time derivative, as the .stn writes it */
    char text[512];
    snprintf(text, sizeof text, "dt(%s)", ir->m->fields[n->a].name);
    str_add(b, text);
    break;
  }
  case IR_FIELD: case IR_COEF: {
    char text[512];  /* a longer name is cut, as the fixed buffers elsewhere here cut it */
    ir_offset_text(ir, n->b, buf, sizeof buf, true);
    snprintf(text, sizeof text, "%s%s", n->op == IR_FIELD ? ir->m->fields[n->a].name : ir->m->coefs[n->a]->coef.name, buf);
    str_add(b, text);
    break;
  }
  case IR_NEG: {
    /* -(a*b) is -a*b in mathematics, -(-a*b) is a*b; -(a + b) keeps its parentheses. */
    Str t = {0};
    expr(P, &t, n->a, false);
    int l = level(P, n->a);
    if (l == L_MUL && t.s[0] == '-') str_add(b, t.s + 1);
    else {
      bool bare = l >= L_POW || l == L_MUL;
      str_add(b, bare ? "-" : "-(");
      str_add(b, t.s);
      if (!bare) str_add(b, ")");
    }
    free(t.s);
    break;
  }
  case IR_NOT:
    str_add(b, "not ");
    operand(P, b, n->a, L_ADD, false);  /* not (a < b): the grammar needs none, a reader does */
    break;
  case IR_ADD: case IR_SUB: {
    /* a + (b - c) = a + b - c; a + (-b) = a - b; a - (-b*c) = a + b*c. */
    operand(P, b, n->a, L_ADD, false);
    Str t = {0};
    int min = n->op == IR_ADD ? L_ADD : L_MUL;
    bool wrap = level(P, n->b) < min;
    expr(P, &t, n->b, false);
    if (!wrap && t.s[0] == '-') {
      str_add(b, n->op == IR_ADD ? " - " : " + ");
      str_add(b, t.s + 1);
    } else {
      str_add(b, n->op == IR_ADD ? " + " : " - ");
      if (wrap) str_add(b, "(");
      str_add(b, t.s);
      if (wrap) str_add(b, ")");
    }
    free(t.s);
    break;
  }
  case IR_MUL: case IR_DIV:
    if (n->op == IR_MUL && !P->name[n->b] && ir->nodes[n->b].op == IR_DIV && ir_is_const(ir, ir->nodes[n->b].a, 1)) {
      operand(P, b, n->a, L_MUL, false);  /* a*(1/b) = a/b */
      str_add(b, "/");
      operand(P, b, ir->nodes[n->b].b, L_POW, true);
      break;
    }
    operand(P, b, n->a, L_MUL, false);
    str_add(b, op_text(n->op));
    operand(P, b, n->b, n->op == IR_MUL ? L_MUL : L_POW, true);
    break;
  case IR_POW:
    operand(P, b, n->a, L_PRIMARY, true);
    str_add(b, "^");
    operand(P, b, n->b, L_POW, true);
    break;
  case IR_EQ: case IR_NE: case IR_LT: case IR_LE: case IR_GT: case IR_GE:
    operand(P, b, n->a, L_ADD, false);
    str_add(b, op_text(n->op));
    operand(P, b, n->b, L_ADD, false);
    break;
  case IR_AND: case IR_OR: {
    int l = n->op == IR_AND ? L_AND : L_OR;
    operand(P, b, n->a, l, false);
    str_add(b, op_text(n->op));
    operand(P, b, n->b, l, false);
    break;
  }
  case IR_SELECT:
    str_add(b, "if ");
    operand(P, b, n->a, L_OR, false);
    str_add(b, " then ");
    operand(P, b, n->b, L_OR, false);
    str_add(b, " else ");
    operand(P, b, n->c, L_IF, false);
    break;
  case IR_CALL:
    str_addf(b, "%s(", builtin_funcs[n->fn].name);
    operand(P, b, n->a, L_IF, false);
    if (n->b != IR_NONE) {
      str_add(b, ", ");
      operand(P, b, n->b, L_IF, false);
    }
    str_add(b, ")");
    break;
  default:
    ice("explain: op %d", (int)n->op);
  }
}

/* The text of r as a whole formula (a let's own definition when expand). */
static char *formula(Printer *P, Ref r, bool expand) {
  Str b = {0};
  P->budget = PRINT_BUDGET;
  expr(P, &b, r, expand);
  if (P->budget < 0) {
    free(b.s);
    b = (Str){0};
    str_add(&b, "(too long to print here; --dump-ir shows it as a DAG)");
  }
  return b.s;
}

/* ---- the grid ---- */

static const char *const index_names[MAX_DIM] = {"i", "j", "k"};
static const char *const spacing_names[MAX_DIM] = {"hx", "hy", "hz"};
static const char *const size_names[MAX_DIM] = {"nx", "ny", "nz"};

static double npoints(const Model *m) {
  double n = 1;
  for (int d = 0; d < m->dim; d++) n *= (double)m->axes[d].points;
  return n;
}

/* How many points of the declared grid are of class c. */
static double class_points(const Model *m, int c) {
  double n = 1;
  for (int d = 0; d < m->dim; d++) {
    const Axis *ax = &m->axes[d];
    int pos = sema_class_pos(c, d);
    n *= ax->periodic ? (double)ax->points : pos == 1 ? (double)(ax->points - 2) : 1;
  }
  return n;
}

/* "4 x 4", or "8-point" in 1D (to stand before "grid"). */
static void grid_size_text(const Model *m, const long long *n, char *buf, int size) {
  int len = 0;
  buf[0] = '\0';
  for (int d = 0; d < m->dim && len < size; d++) len += snprintf(buf + len, (size_t)(size - len), d ? " x %lld" : "%lld", n[d]);
  if (m->dim == 1 && len < size) snprintf(buf + len, (size_t)(size - len), "-point");
}

static void explain_grid(const Ir *ir, FILE *out) {
  const Model *m = ir->m;
  long long n[MAX_DIM];
  char size[96], total[40], lo[40], hi[40], h[40];
  for (int d = 0; d < m->dim; d++) n[d] = m->axes[d].points;
  grid_size_text(m, n, size, sizeof size);
  count_text(total, sizeof total, npoints(m));
  if (m->dim > 1) fprintf(out, "GRID (%dD): %s = %s points", m->dim, size, total);
  else fprintf(out, "GRID (1D): %lld points", n[0]);
  fprintf(out, "\n  the size%s default%s: the program's -da_grid_%s", m->dim > 1 ? "s are" : " is a",
          m->dim > 1 ? "s" : "", axis_names[0]);
  for (int d = 1; d < m->dim; d++) fprintf(out, ", -da_grid_%s", axis_names[d]);
  fprintf(out, " change%s\n", m->dim > 1 ? " them" : "s it");
  for (int d = 0; d < m->dim; d++) {
    const Axis *ax = &m->axes[d];
    const_text(lo, sizeof lo, ax->lo);
    const_text(hi, sizeof hi, ax->hi);
    double hv = (ax->hi - ax->lo) / (double)(ax->periodic ? ax->points : ax->points - 1);
    snprintf(h, sizeof h, "%.6g", hv);
    char at[64];
    if (ax->lo == 0) snprintf(at, sizeof at, "%s*%s", index_names[d], spacing_names[d]);
    else snprintf(at, sizeof at, "%s + %s*%s", lo, index_names[d], spacing_names[d]);
    fprintf(out, "  %s: %lld points in [%s, %s]%s; %s = 0 .. %lld, %s = %s\n", axis_names[d], ax->points, lo, hi,
            ax->periodic ? ", periodic" : "", index_names[d], ax->points - 1, axis_names[d], at);
    if (ax->periodic)
      fprintf(out, "     %s = (%s - %s)/%s = %s: %s = %s is %s = %s again, a neighbour past the last point is the first\n",
              spacing_names[d], hi, lo, size_names[d], h, axis_names[d], hi, axis_names[d], lo);
    else
      fprintf(out, "     %s = (%s - %s)/(%s - 1) = %s: both ends are grid points (boundary points)\n",
              spacing_names[d], hi, lo, size_names[d], h);
  }
}

static void explain_fields(const Ir *ir, FILE *out) {
  const Model *m = ir->m;
  fprintf(out, "\nUNKNOWNS: d = %d per point (the dof), in this order:\n", m->nfields);
  int w = 0;
  for (int f = 0; f < m->nfields; f++) w = (int)strlen(m->fields[f].name) > w ? (int)strlen(m->fields[f].name) : w;
  for (int f = 0; f < m->nfields; f++) {
    fprintf(out, "  %d  %s", f, m->fields[f].name);
    if (m->fields[f].desc) fprintf(out, "%*s  %s", w - (int)strlen(m->fields[f].name), "", m->fields[f].desc);
    fputc('\n', out);
  }
  if (m->nfields == 1) fprintf(out, "  The unknown of point p is row p of the vector and of the Jacobian.\n");
  else fprintf(out, "  The unknowns of point p are rows p*d .. p*d + %d of the vector and of the Jacobian.\n", m->nfields - 1);
}

/* The mirror declarations: which field is mirrored across which faces, and what that means for
   a read (nothing when the program has none). */
static void explain_mirrors(const Ir *ir, FILE *out) {
  const Model *m = ir->m;
  const char *stn = path_base(ir->src->name);
  const char *name = NULL;  /* the first mirrored field, for the example */
  for (int f = 0; f < m->nfields && !name; f++)
    if (m->fields[f].mirror) name = m->fields[f].name;
  if (!name) return;
  static const char *const zeros[MAX_DIM] = {"", ",0", ",0,0"};
  fprintf(out, "\nMIRRORS: beyond a face a field is mirrored across, a read is the value as far inside\n"
               "  (at a point of the left face %s[-1%s] reads %s[1%s]; at a corner both directions are\n"
               "  mirrored), so the interior's formula holds there with a zero normal derivative (zero\n"
               "  flux). The residuals below show the reads after the mirror; entries of two reads that\n"
               "  land on one column are added.\n", name, zeros[m->dim - 1], name, zeros[m->dim - 1]);
  int w = 0;
  for (int f = 0; f < m->nfields; f++)
    if (m->fields[f].mirror && (int)strlen(m->fields[f].name) > w) w = (int)strlen(m->fields[f].name);
  for (int f = 0; f < m->nfields; f++) {
    const Field *fd = &m->fields[f];
    if (!fd->mirror) continue;
    fprintf(out, "  %-*s  across", w, fd->name);
    int lines[FACE_COUNT], nlines = 0;
    for (int face = 0, first = 1; face < FACE_COUNT; face++) {
      if (!(fd->mirror & (1u << face))) continue;
      fprintf(out, "%s %s", first ? "" : ",", face_names[face]);
      first = 0;
      int line = ast_line(ir->src, fd->mirror_at[face]), k = 0;
      while (k < nlines && lines[k] != line) k++;
      if (k == nlines) lines[nlines++] = line;
    }
    fprintf(out, "  (%s:%d", stn, lines[0]);
    for (int k = 1; k < nlines; k++) fprintf(out, ",%d", lines[k]);
    fputs(")\n", out);
  }
}

static void explain_params(const Ir *ir, Printer *P, FILE *out) {
  const Model *m = ir->m;
  if (!m->nparams) return;
  fprintf(out, "\nPARAMETERS (the program's -NAME value sets them):\n");
  for (int i = 0; i < m->nparams; i++) {
    const Node *p = m->params[i];
    if (m->param_elem[i] > 0) continue;  /* a list is written once, at its first slot */
    char *text = formula(P, ir->param_default[i], false);
    if (m->param_len[i]) {  /* blocks: int[2] = [2, 3] */
      fprintf(out, "  %s: %s[%d] = [%s", p->param.name, m->param_type[i] == PT_INT ? "int" : "real", m->param_len[i], text);
      for (int k = 1; k < m->param_len[i]; k++) {
        free(text);
        text = formula(P, ir->param_default[i + k], false);
        fprintf(out, ", %s", text);
      }
      fputc(']', out);
    } else if (m->param_type[i] == PT_BOOL)  /* the default is a constant 1 or 0; -NAME turns it on, -NAME false off */
      fprintf(out, "  %s: bool = %s", p->param.name, strcmp(text, "0") == 0 ? "false" : "true");
    else if (m->param_type[i] == PT_CHOICE) {  /* the default is one of the names */
      fprintf(out, "  %s: {", p->param.name);
      for (const Node *c = p->param.type->list.items; c; c = c->next)
        fprintf(out, "%s%s", c == p->param.type->list.items ? "" : ", ", c->name.name);
      fprintf(out, "} = %s", p->param.value->name.name);
    }
    else
      fprintf(out, "  %s%s = %s", p->param.name, m->param_type[i] == PT_INT ? ": int" : "", text);
    free(text);
    if (m->param_type[i] <= PT_INT && (!isinf(m->param_lo[i]) || !isinf(m->param_hi[i]))) {
      char lo[40], hi[40];
      const_text(lo, sizeof lo, m->param_lo[i]);
      const_text(hi, sizeof hi, m->param_hi[i]);
      fprintf(out, ", in [%s, %s]", lo, hi);
    }
    if (p->param.desc) fprintf(out, ": %s", p->param.desc);
    fputc('\n', out);
  }
}

/* The coefficients: values on the grid that are not unknowns, each as the program writes it
   (nothing when the program has none). */
static void explain_coefs(const Ir *ir, FILE *out) {
  const Model *m = ir->m;
  if (!m->ncoefs) return;
  const char *stn = path_base(ir->src->name);
  bool expr = false, file = false;
  for (int c = 0; c < m->ncoefs; c++) {
    file |= m->coefs[c]->coef.source != NULL;
    expr |= m->coefs[c]->coef.source == NULL;
  }
  fprintf(out, "\nCOEFFICIENTS: values given at every grid point that are not unknowns. The equations read\n"
               "  them like fields, at neighbours too, but they have no rows and no Jacobian columns (the\n"
               "  derivative with respect to a coefficient is 0).");
  if (!file)
    fputs(" Each is its expression at the point read,\n"
          "  on whatever grid the program runs (every multigrid level evaluates it on its own points).\n", out);
  else {
    fputc('\n', out);
    if (expr)
      fputs("  A coefficient with an expression is that expression at the point read, on whatever grid\n"
            "  the program runs (every multigrid level evaluates it on its own points).\n", out);
    fputs("  A coefficient from a file is read when the program starts, from the file that its option\n"
          "  -NAME_file names (PETSc's binary format, as VecView writes a vector of the grid: one value\n"
          "  per point, x fastest). It is kept in a ghosted vector, so reads at neighbours cross to\n"
          "  other ranks like a field's; multigrid's coarser levels take its values at their points.\n", out);
  }
  for (int c = 0; c < m->ncoefs; c++) {
    const Node *n = m->coefs[c];
    if (n->coef.source) {
      fprintf(out, "  %s: from the file -%s_file names", n->coef.name, n->coef.name);
      if (n->coef.desc) fprintf(out, ": %s", n->coef.desc);
      fprintf(out, "  (%s:%d)\n", stn, ast_line(ir->src, n));
      continue;
    }
    int len;
    const char *text = ast_text(ir->src, n->coef.value, &len);
    fprintf(out, "  %s = %.*s", n->coef.name, len, text);
    if (n->coef.desc) fprintf(out, ": %s", n->coef.desc);
    fprintf(out, "  (%s:%d)\n", stn, ast_line(ir->src, n));
  }
}

/* ---- stencil pictures ---- */

enum { PANEL_LINES = 2 * MAX_WIDTH + 2, PICTURE_WIDTH = 76 };

/* One small picture: a title over rows of cells. */
typedef struct Panel {
  char title[64];
  Str  line[PANEL_LINES];
  int  nlines, width;
} Panel;

static void print_panels(FILE *out, Panel *p, int n, const char *indent) {
  for (int first = 0; first < n;) {
    int last = first, w = (int)strlen(indent);
    while (last < n && (last == first || w + p[last].width + 4 <= PICTURE_WIDTH)) w += p[last++].width + 4;
    int lines = 0;
    bool titled = false;
    for (int i = first; i < last; i++) lines = p[i].nlines > lines ? p[i].nlines : lines;
    for (int i = first; i < last; i++) titled |= p[i].title[0] != '\0';
    for (int l = titled ? -1 : 0; l < lines; l++) {
      Str row = {0};
      str_add(&row, indent);
      for (int i = first; i < last; i++) {
        const char *t = l < 0 ? p[i].title : l < p[i].nlines ? str_text(&p[i].line[l]) : "";
        str_add(&row, t);
        if (i + 1 < last) for (int pad = (int)strlen(t); pad < p[i].width + 4; pad++) str_add(&row, " ");
      }
      while (row.len && row.s[row.len - 1] == ' ') row.s[--row.len] = '\0';
      fprintf(out, "%s\n", str_text(&row));
      free(row.s);
    }
    if (last < n) fputc('\n', out);
    first = last;
  }
}

static void free_panels(Panel *p, int n) {
  for (int i = 0; i < n; i++)
    for (int l = 0; l < PANEL_LINES; l++) free(p[i].line[l].s);
  free(p);
}

/* The cell text at offset off: cell(ctx, off) gives it, cw wide. */
typedef const char *(*CellText)(const Ir *ir, const void *ctx, const int off[MAX_DIM], char *buf);

/* Panels for one picture of the declared stencil's extent: one per
   z-plane in 3D, y upwards, x to the right. */
static int stencil_panels(const Ir *ir, Panel *p, const char *title, CellText cell, const void *ctx, int cw) {
  const Model *m = ir->m;
  int w = m->width, planes = m->dim == 3 ? 2 * w + 1 : 1, rows = m->dim >= 2 ? 2 * w + 1 : 1;
  for (int z = 0; z < planes; z++) {
    Panel *q = &p[z];
    int dz = m->dim == 3 ? z - w : 0;
    if (m->dim == 3) {
      if (dz) snprintf(q->title, sizeof q->title, "%s, k%+d", title, dz);
      else snprintf(q->title, sizeof q->title, "%s, k", title);
    } else snprintf(q->title, sizeof q->title, "%s", title);
    q->nlines = rows;
    for (int y = 0; y < rows; y++) {
      int dy = m->dim >= 2 ? w - y : 0;
      for (int x = 0; x < 2 * w + 1; x++) {
        int off[MAX_DIM] = {x - w, dy, dz};
        char buf[32];
        const char *t = cell(ir, ctx, off, buf);
        if (x) str_add(&q->line[y], " ");
        str_addf(&q->line[y], "%*s", cw, t);
      }
    }
    q->width = (int)q->line[0].len > (int)strlen(q->title) ? (int)q->line[0].len : (int)strlen(q->title);
  }
  return planes;
}

static int find_offset(const Ir *ir, const int off[MAX_DIM]) {
  for (int o = 0; o < ir->noffsets; o++)
    if (memcmp(ir->offsets[o], off, sizeof ir->offsets[o]) == 0) return o;
  return -1;
}

typedef struct Reads {
  int f, g;  /* residual of f reads field g */
} Reads;

static bool reads_at(const Ir *ir, int f, int g, int offset) {
  for (int c = 0; c < ir->m->nclasses; c++) {
    IrPoint *p = ir_point(ir, f, c);
    if (p->residual_rule && ir_entry(p, g, offset)) return true;
  }
  return false;
}

static const char *read_cell(const Ir *ir, const void *ctx, const int off[MAX_DIM], char *buf) {
  const Reads *r = ctx;
  int o = find_offset(ir, off);
  return o >= 0 && reads_at(ir, r->f, r->g, o) ? "#" : ".";
}

static const char *block_cell(const Ir *ir, const void *ctx, const int off[MAX_DIM], char *buf) {
  int o = find_offset(ir, off), s = o >= 0 ? explain_block(ir, o) : -1;
  if (s < 0) return ".";
  snprintf(buf, 32, "%d", s);
  return buf;
}

static void explain_stencils(const Ir *ir, FILE *out) {
  const Model *m = ir->m;
  int declared = m->shape == SHAPE_STAR ? 2 * m->dim * m->width + 1 : (int)pow(2 * m->width + 1, m->dim);
  fprintf(out, "\nSTENCIL: declared %s width %d (%d points); the Jacobian uses %d of them.\n",
          m->shape == SHAPE_STAR ? "star" : "box", m->width, declared, ir->nstencil);
  fprintf(out, "What each residual F depends on: # marks a neighbour it reads (a Jacobian entry),\n"
               ". one it does not; %s, the centre is the point itself.\n",
          m->dim == 1 ? "x grows to the right"
          : m->dim == 2 ? "x grows to the right, y upwards"
                        : "x grows to the right, y upwards,\none picture per z-plane (k-1, k, k+1)");
  int per = m->dim == 3 ? 2 * m->width + 1 : 1;
  for (int f = 0; f < m->nfields; f++) {
    Panel *p = xcalloc((size_t)(m->nfields * per), sizeof *p);
    int n = 0;
    for (int g = 0; g < m->nfields; g++) {
      bool any = false;
      for (int o = 0; o < ir->noffsets && !any; o++) any = reads_at(ir, f, g, o);
      if (!any) continue;
      Reads r = {f, g};
      n += stencil_panels(ir, p + n, m->fields[g].name, read_cell, &r, 1);
    }
    fprintf(out, "\n  F_%s reads:\n", m->fields[f].name);
    print_panels(out, p, n, "    ");
    free_panels(p, m->nfields * per);
  }
}

/* ---- residuals and Jacobian entries ---- */

static bool same_point(const IrPoint *a, const IrPoint *b) {
  if (a->residual != b->residual || a->rhs != b->rhs || a->nentries != b->nentries) return false;
  for (int e = 0; e < a->nentries; e++) {
    const IrEntry *x = &a->entries[e], *y = &b->entries[e];
    if (x->field != y->field || x->offset != y->offset || x->derived != y->derived || x->given != y->given) return false;
  }
  return true;
}

/* "the interior points", "the boundary points", "every point", or a list of kinds. */
static void group_name(const Ir *ir, const char *in, char *buf, int size) {
  const Model *m = ir->m;
  int interior = 0, n = 0, nall = 0, nbound = 0;
  bool all = true, boundary = true;
  for (int d = 0; d < m->dim; d++) interior = interior * 3 + 1;
  for (int c = 0; c < m->nclasses; c++) {
    if (!sema_class_exists(m, c)) continue;
    nall++;
    if (c != interior) nbound++;
    all &= in[c] != 0;
    boundary &= (in[c] != 0) == (c != interior);
    n += in[c] != 0;
  }
  if (all) snprintf(buf, (size_t)size, "every point");
  else if (boundary && nbound > 0) snprintf(buf, (size_t)size, "the boundary points");
  else if (n == 1 && in[interior]) snprintf(buf, (size_t)size, "the interior points");
  else {
    int len = snprintf(buf, (size_t)size, "the points on ");
    bool first = true;
    for (int c = 0; c < m->nclasses && len < size - 40; c++) {
      if (!in[c]) continue;
      char name[64];
      sema_class_name(m, c, name, sizeof name);
      len += snprintf(buf + len, (size_t)(size - len), "%s%s", first ? "" : ", ", name);
      first = false;
    }
  }
}

static void explain_jacobian(const Ir *ir, Printer *P, FILE *out) {
  const Model *m = ir->m;
  const char *stn = path_base(ir->src->name);
  int interior = 0;
  for (int d = 0; d < m->dim; d++) interior = interior * 3 + 1;
  static const char *const forms[MAX_DIM][3] = {
    {"[a]", "i", "i+a"}, {"[a,b]", "(i,j)", "(i+a,j+b)"}, {"[a,b,c]", "(i,j,k)", "(i+a,j+b,k+c)"},
  };
  const char *const *fm = forms[m->dim - 1];
  fprintf(out, "\nRESIDUALS AND JACOBIAN ENTRIES, per kind of point. dF_u/dv%s is the derivative of\n"
               "u's residual at point %s with respect to v at %s; stencilc derives every entry\n"
               "by differentiating the residual (an entry the .stn writes by hand is checked against it).\n",
          fm[0], fm[1], fm[2]);
  if (m->time_dependent)
    fputs("The residuals take time derivatives, dt(u): they state F(t, u, dt(u)) = 0, which PETSc's TS\n"
          "integrates in time. Each implicit step's Newton matrix is TS's shift * dF/d(dt(u)) + dF/du,\n"
          "so an entry on a point's own column carries shift times the derivative with respect to\n"
          "dt of that field (shift = 1/dt for backward Euler, 2/dt for Crank-Nicolson).\n", out);
  if (ir->imex)
    fputs("Terms marked explicit(...) are not in F: they make up TS's RHSFunction G (minus their sum),\n"
          "and TS solves F(t, u, dt(u)) = G(t, u). An IMEX method (-ts_type arkimex) takes G from the\n"
          "known state; the Newton matrix holds F's entries only.\n", out);
  for (int f = 0; f < m->nfields; f++)
    if (m->fields[f].approximate)
      fprintf(out, "\nThe Jacobian block of %s is approximate (%s:%d): its entries fill the preconditioning\n"
                   "matrix P, the SG-DIA matrix the preconditioner reads. The operator of Newton's linear\n"
                   "systems stays the exact Jacobian, every entry derived: on CPUs a second matrix of the\n"
                   "same layout, on the GPU its product J w without the matrix (one rank). Newton converges\n"
                   "as with the exact Jacobian; the Krylov method may take more iterations.\n",
              m->fields[f].name, stn, ast_line(ir->src, m->fields[f].jacobian));
  char *in = xcalloc((size_t)m->nclasses, 1), *done = xcalloc((size_t)m->nclasses, 1);
  for (int f = 0; f < m->nfields; f++) {
    memset(done, 0, (size_t)m->nclasses);
    /* The interior first, then the other kinds in class order; kinds with
       the same residual and entries together. */
    for (int step = -1; step < m->nclasses; step++) {
      int c0 = step < 0 ? interior : step;
      const IrPoint *p0 = ir_point(ir, f, c0);
      if (done[c0] || !p0->residual_rule) continue;
      memset(in, 0, (size_t)m->nclasses);
      double count = 0;
      int lines[MAX_CLASSES], nlines = 0;
      for (int c = 0; c < m->nclasses; c++) {
        const IrPoint *p = ir_point(ir, f, c);
        if (done[c] || !p->residual_rule || !same_point(p0, p)) continue;
        in[c] = done[c] = 1;
        count += class_points(m, c);
        int line = ast_line(ir->src, p->residual_rule), k = 0;
        while (k < nlines && lines[k] != line) k++;
        if (k == nlines) lines[nlines++] = line;
      }
      char where[512], cnt[40], tot[40];
      group_name(ir, in, where, sizeof where);
      count_text(cnt, sizeof cnt, count);
      count_text(tot, sizeof tot, npoints(m));
      for (int a = 1; a < nlines; a++)
        for (int z = a; z > 0 && lines[z - 1] > lines[z]; z--) {
          int t = lines[z];
          lines[z] = lines[z - 1];
          lines[z - 1] = t;
        }
      fprintf(out, "\n  F_%s at %s (%s of %s points), %s:%d", m->fields[f].name, where, cnt, tot, stn, lines[0]);
      for (int k = 1; k < nlines; k++) fprintf(out, ",%d", lines[k]);
      char *text = formula(P, p0->residual, false);
      fprintf(out, "\n    F_%s = %s\n", m->fields[f].name, text);
      free(text);
      if (p0->rhs != IR_NONE) {
        text = formula(P, p0->rhs, false);
        fprintf(out, "    G_%s = %s\n", m->fields[f].name, text);
        free(text);
      }
      int w = 0;
      char (*lhs)[128] = xcalloc((size_t)p0->nentries + 1, sizeof *lhs);
      for (int e = 0; e < p0->nentries; e++) {
        char off[32];
        ir_offset_text(ir, p0->entries[e].offset, off, sizeof off, false);
        snprintf(lhs[e], sizeof lhs[e], "dF_%s/d%s%s", m->fields[f].name, m->fields[p0->entries[e].field].name, off);
        w = (int)strlen(lhs[e]) > w ? (int)strlen(lhs[e]) : w;
      }
      for (int e = 0; e < p0->nentries; e++) {
        const IrEntry *x = &p0->entries[e];
        text = formula(P, x->derived, false);
        fprintf(out, "    %-*s = %s", w, lhs[e], text);
        free(text);
        if (x->given != IR_NONE && x->approximate) {
          text = formula(P, x->given, false);
          fprintf(out, "\n    %*s   approximated at line %d as %s (%s)", w, "", ast_line(ir->src, x->node), text,
                  x->checked ? "equal at sample points; in the preconditioning matrix"
                             : "differs from the derivative; in the preconditioning matrix only");
          free(text);
        } else if (x->given != IR_NONE && x->given == x->derived)
          fprintf(out, "   (given at line %d: the same)", ast_line(ir->src, x->node));
        else if (x->given != IR_NONE) {
          text = formula(P, x->given, false);
          fprintf(out, "\n    %*s   given at line %d as %s (%s)", w, "", ast_line(ir->src, x->node), text,
                  x->checked ? "equal at sample points; the program uses it"
                             : "checked at run time by -stn_check_jacobian; the program uses it");
          free(text);
        }
        fputc('\n', out);
      }
      free(lhs);
    }
  }
  free(in);
  free(done);
  if (P->nused) {
    /* Printing a let can name further lets: the list grows as it goes. */
    char **text = xcalloc((size_t)ir->nnodes + 1, sizeof *text);
    for (int i = 0; i < P->nused; i++) text[i] = formula(P, P->used[i], true);
    /* In the .stn's order of lets (first use among lets of one name). */
    int *rank = xcalloc((size_t)ir->nnodes + 1, sizeof *rank);
    for (int i = 0; i < P->nused; i++) {
      rank[i] = m->nlets;
      for (int l = 0; l < m->nlets && rank[i] == m->nlets; l++)
        if (strcmp(m->lets[l]->let.name, P->name[P->used[i]]) == 0) rank[i] = l;
    }
    for (int a = 1; a < P->nused; a++)
      for (int z = a; z > 0 && rank[z - 1] > rank[z]; z--) {
        int tr = rank[z];
        rank[z] = rank[z - 1];
        rank[z - 1] = tr;
        Ref tu = P->used[z];
        P->used[z] = P->used[z - 1];
        P->used[z - 1] = tu;
        char *tt = text[z];
        text[z] = text[z - 1];
        text[z - 1] = tt;
      }
    free(rank);
    int w = 0;
    for (int i = 0; i < P->nused; i++) w = (int)strlen(P->name[P->used[i]]) > w ? (int)strlen(P->name[P->used[i]]) : w;
    fprintf(out, "\n  where (the .stn's lets, and its def calls as DEF_FIELD):\n");
    for (int i = 0; i < P->nused; i++) {
      fprintf(out, "    %-*s = %s\n", w, P->name[P->used[i]], text[i]);
      free(text[i]);
    }
    free(text);
  }
}

/* ---- SG-DIA ---- */

/* An offset in points, x fastest: "-nx = -4", "+1", "nx*ny - 1 = 15". */
static double offset_points(const Model *m, const int *o) {
  double v = 0, stride = 1;
  for (int d = 0; d < m->dim; d++) {
    v += o[d] * stride;
    stride *= (double)m->axes[d].points;
  }
  return v;
}

static void offset_points_text(const Model *m, const int *o, char *buf, int size) {
  static const char *const strides[MAX_DIM] = {"", "nx", "nx*ny"};
  int len = 0, terms = 0;
  buf[0] = '\0';
  for (int d = m->dim - 1; d >= 0; d--) {
    if (!o[d]) continue;
    int a = abs(o[d]);
    const char *sign = o[d] < 0 ? (terms ? " - " : "-") : (terms ? " + " : "+");
    if (d == 0) len += snprintf(buf + len, (size_t)(size - len), "%s%d", sign, a);
    else if (a == 1) len += snprintf(buf + len, (size_t)(size - len), "%s%s", sign, strides[d]);
    else len += snprintf(buf + len, (size_t)(size - len), "%s%d*%s", sign, a, strides[d]);
    terms++;
  }
  double v = offset_points(m, o);
  char num[40];
  count_text(num, sizeof num, fabs(v));
  if (!terms) snprintf(buf, (size_t)size, "0");
  else if (!(terms == 1 && o[1] == 0 && o[2] == 0))
    snprintf(buf + len, (size_t)(size - len), " = %s%s", v < 0 ? "-" : "+", num);
}

static int dbl_cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* The matrix diagonals (column - row) that hold an entry on the declared
   grid, counted exactly; a periodic direction adds the wrapped ones. */
static int occupied_diagonals(const Ir *ir) {
  const Model *m = ir->m;
  int dof = m->nfields, cap = 64, n = 0;
  double *diag = xmalloc((size_t)cap * sizeof *diag);
  for (int f = 0; f < m->nfields; f++)
    for (int c = 0; c < m->nclasses; c++) {
      const IrPoint *p = ir_point(ir, f, c);
      if (!p->residual_rule) continue;
      for (int e = 0; e < p->nentries; e++) {
        const int *o = ir->offsets[p->entries[e].offset];
        for (int wrap = 0; wrap < 1 << m->dim; wrap++) {
          int w[MAX_DIM] = {0};
          bool ok = true;
          for (int d = 0; d < m->dim; d++)
            if (wrap >> d & 1) {
              ok &= m->axes[d].periodic && o[d] != 0;
              w[d] = o[d];
            }
          if (!ok) continue;
          double v = 0, stride = 1;
          for (int d = 0; d < m->dim; d++) {
            double n_d = (double)m->axes[d].points;
            v += (o[d] - (w[d] > 0 ? n_d : w[d] < 0 ? -n_d : 0)) * stride;
            stride *= n_d;
          }
          if (n == cap) {
            cap *= 2;
            diag = xrealloc(diag, (size_t)cap * sizeof *diag);
          }
          diag[n++] = v * dof + p->entries[e].field - f;
        }
      }
    }
  qsort(diag, (size_t)n, sizeof *diag, dbl_cmp);
  int distinct = 0;
  for (int i = 0; i < n; i++) distinct += i == 0 || diag[i] != diag[i - 1];
  free(diag);
  return distinct;
}

static void explain_sgdia(const Ir *ir, FILE *out) {
  const Model *m = ir->m;
  int k = ir->nstencil, d = m->nfields;
  double np = npoints(m), N = np * d;
  long long n[MAX_DIM];
  char size[96], buf[64], nb[40];
  for (int i = 0; i < m->dim; i++) n[i] = m->axes[i].points;
  grid_size_text(m, n, size, sizeof size);
  count_text(nb, sizeof nb, N);
  fprintf(out, "\nSG-DIA STORAGE OF THE JACOBIAN (for the %s grid: N = %s rows, d = %d)\n", size, nb, d);
  fprintf(out, "  k = %d block diagonals, one per stencil point the Jacobian uses, numbered s = 0 .. %d\n"
               "  in storage order (by z, then y, then x):\n\n", k, k - 1);
  Panel *p = xcalloc(2 * MAX_WIDTH + 1, sizeof *p);
  char last[32];
  snprintf(last, sizeof last, "%d", k - 1);
  int np_ = stencil_panels(ir, p, m->dim == 3 ? "s" : "", block_cell, NULL, (int)strlen(last));
  print_panels(out, p, np_, "    ");
  free_panels(p, 2 * MAX_WIDTH + 1);
  static const char *const pnum[MAX_DIM + 1] = {"", "p = i", "p = i + nx*j", "p = i + nx*j + nx*ny*k"};
  fprintf(out, "\n    s  offset      in points            in rows (x d)\n");
  for (int s = 0; s < k; s++) {
    const int *o = ir->offsets[ir->stencil[s]];
    char off[32], rows[40];
    ir_offset_text(ir, ir->stencil[s], off, sizeof off, false);
    offset_points_text(m, o, buf, sizeof buf);
    double r = offset_points(m, o) * d;
    count_text(rows, sizeof rows, fabs(r));
    fprintf(out, "  %3d  %-10s  %-19s  %s%s%s\n", s, off, buf, r < 0 ? "-" : r > 0 ? "+" : "", rows,
            s == ir->diagonal ? "   the diagonal blocks" : "");
  }
  bool periodic = false;
  for (int i = 0; i < m->dim; i++) periodic |= m->axes[i].periodic;
  const char *wrapped = periodic ? "\n  In a periodic direction the neighbour of an end point wraps around: that part of a block\n"
                                   "  diagonal lies on the wrapped diagonal, offset -+ nx (ny, nz) points further."
                                 : "";
  if (d == 1)
    fprintf(out, "\n  Points are numbered %s (x fastest); point p is row p. Block diagonal s couples\n"
                 "  point p with point p + offset(s): it is the matrix diagonal offset(s).%s\n", pnum[m->dim], wrapped);
  else
    fprintf(out, "\n  Points are numbered %s (x fastest); point p holds rows p*d .. p*d + %d.\n"
                 "  Block diagonal s couples point p with point p + offset(s): a d x d block on the matrix\n"
                 "  diagonals offset(s)*d - %d .. offset(s)*d + %d.%s\n",
            pnum[m->dim], d - 1, d - 1, d - 1, wrapped);
  fprintf(out, "  Layout: per stencil point a d x d block column, k*d = %d columns of N values, column-major:\n"
               "      values[(s*d + c)*N + p*d + r] = dF_r/du_c, F_r at point p, u_c at point p + offset(s)\n"
               "  (r, c: field numbers), and the k offsets: no column indices, no row pointers. An entry whose\n"
               "  neighbour lies outside the grid is stored as padding and never read.\n",
          k * d);

  /* Storage by the paper's formulas, then exactly for this matrix. */
  double pp = np, dd = d, kk = k;
  double Dp = kk * (2 * dd - 1) - floor(kk / 2);
  double sg = pp * kk * dd * dd + kk, dia = pp * dd * Dp + Dp, csr = 2 * pp * kk * dd * dd + pp * dd + 1;
  double nnz = 0;
  for (int f = 0; f < m->nfields; f++)
    for (int c = 0; c < m->nclasses; c++) {
      const IrPoint *q = ir_point(ir, f, c);
      if (q->residual_rule && sema_class_exists(m, c)) nnz += class_points(m, c) * q->nentries;
    }
  double De = occupied_diagonals(ir);
  double dia_e = N * De + De, csr_e = 2 * nnz + N + 1;
  char mnp[96], c1[40], c2[40], c3[40], dps[40];
  snprintf(mnp, sizeof mnp, "%lld x %lld x %lld", n[0], m->dim > 1 ? n[1] : 1, m->dim > 2 ? n[2] : 1);
  fprintf(out, "\n  STORAGE, by the SG-DIA paper's formulas (section 3.1) with m x n x p = %s points,\n"
               "  d = %d, k = %d; an entry is one stored number, value or index:\n\n", mnp, d, k);
  count_text(dps, sizeof dps, Dp);
  count_text(c1, sizeof c1, sg);
  count_text(c2, sizeof c2, dia);
  count_text(c3, sizeof c3, csr);
  char dia_formula[96];
  snprintf(dia_formula, sizeof dia_formula, "m*n*p*d*D + D, D = k*(2d - 1) - floor(k/2) = %s", dps);
  fprintf(out, "    format  formula%*s  entries  vs SG-DIA\n", 50 - 7, "");
  fprintf(out, "    SG-DIA  %-50s  %7s  %8.2f\n", "m*n*p*k*d^2 + k", c1, 1.0);
  fprintf(out, "    DIA     %-50s  %7s  %8.2f\n", dia_formula, c2, dia / sg);
  fprintf(out, "    CSR     %-50s  %7s  %8.2f\n", "2*m*n*p*k*d^2 + m*n*p*d + 1 (rows padded to k*d)", c3, csr / sg);
  char nz[40], de[40];
  count_text(nz, sizeof nz, nnz);
  count_text(de, sizeof de, De);
  fprintf(out, "\n  This matrix exactly (%s nonzero entries on %s matrix diagonals):\n\n", nz, de);
  count_text(c2, sizeof c2, dia_e);
  count_text(c3, sizeof c3, csr_e);
  char f2[64], f3[64];
  snprintf(f2, sizeof f2, "N*D + D, D = %s", de);
  snprintf(f3, sizeof f3, "2*nnz + N + 1, nnz = %s", nz);
  fprintf(out, "    SG-DIA  %-50s  %7s  %8.2f\n", "N*k*d + k (what the program allocates)", c1, 1.0);
  fprintf(out, "    DIA     %-50s  %7s  %8.2f\n", f2, c2, dia_e / sg);
  fprintf(out, "    CSR     %-50s  %7s  %8.2f\n", f3, c3, csr_e / sg);
  char b1[40], b2[40], b3[40];
  count_text(b1, sizeof b1, 8 * (sg - kk) + 4 * kk);
  count_text(b2, sizeof b2, 8 * (dia_e - De) + 4 * De);
  count_text(b3, sizeof b3, 8 * nnz + 4 * (nnz + N + 1));
  fprintf(out, "\n  In bytes (8-byte values, 4-byte indices): SG-DIA %s, DIA %s, CSR %s.\n", b1, b2, b3);
  if (Dp != De)
    fprintf(out, "  The paper's D is right for its d = 2 example, where block diagonals next to each other\n"
                 "  along x overlap in one matrix diagonal; this matrix occupies D = %s diagonals.\n", de);
  if (nnz < pp * kk * dd * dd) {
    int interior = 0, full = 0;
    for (int i = 0; i < m->dim; i++) interior = interior * 3 + 1;
    for (int f = 0; f < m->nfields; f++) full += ir_point(ir, f, interior)->nentries;
    fprintf(out, "  SG-DIA (and the paper's CSR) keep every row padded to k*d = %d slots; this matrix fills %.0f%%\n"
                 "  of them; the zeros: %s.\n"
                 "  Exact CSR stores only the nonzeros, each with its column index: %s than SG-DIA here,\n"
                 "  about twice as much for full rows.\n",
            k * d, 100 * nnz / (pp * kk * dd * dd),
            full == k * d * d ? "the boundary rows" : "boundary rows, couplings the equations do not have",
            csr_e < sg ? "less" : "more");
  }
}

/* The multigrid hierarchy a GPU run builds at the default grid. This repeats the rule of
   StnDMCountLevels (runtime/stnmg.c; the runtime is not linked into the compiler): halve while
   every direction halves (n - 1 even, or n even when periodic) to at least 2*width + 1 points
   and the grid has more than STN_MG_COARSE_UNKNOWNS = 256 unknowns. */
static void explain_levels(const Ir *ir, FILE *out) {
  const Model *m = ir->m;
  long long n[MAX_DIM];
  int levels = 1;
  bool coarse = false; /* it stopped at a grid small enough to be the coarsest */
  char size[96], count[40];
  for (int d = 0; d < m->dim; d++) n[d] = m->axes[d].points;
  fprintf(out, "\nMULTIGRID LEVELS at the default grid (-pc_type mg; on the GPU the default preconditioner\n"
               "  when there are 3 or more and the equations carry the cell size, else Jacobi), each level's\n"
               "  operator the generated Jacobian on its grid, Chebyshev/Jacobi smoothers, the coarsest grid\n"
               "  solved by its dense inverse:\n    ");
  for (;;) {
    double unknowns = m->nfields;
    long long half[MAX_DIM];
    bool halves = true;
    for (int d = 0; d < m->dim; d++) {
      bool periodic = m->axes[d].periodic;
      unknowns *= (double)n[d];
      half[d] = periodic ? n[d] / 2 : (n[d] - 1) / 2 + 1;
      if ((periodic ? n[d] % 2 : (n[d] - 1) % 2) || half[d] < 2 * m->width + 1) halves = false;
    }
    grid_size_text(m, n, size, sizeof size);
    count_text(count, sizeof count, unknowns);
    fprintf(out, "%s%s (%s unknowns)", levels > 1 ? " -> " : "", size, count);
    coarse = unknowns <= 256;
    if (coarse || !halves) break;
    for (int d = 0; d < m->dim; d++) n[d] = half[d];
    if (++levels % 4 == 0) fputs("\n   ", out);
  }
  fprintf(out, "\n  %d level%s%s\n", levels, levels == 1 ? "" : "s",
          levels >= 3 ? ""
          : coarse ? ": too few for multigrid by default; a larger grid (such as -da_grid_x 257) gives more"
                   : ": too few for multigrid by default; the grid does not halve further (sizes 2^k m + 1, such as 257, halve best)");
  /* The runtime's other condition (StnAppSetUpSolver): equations that carry the cell size. */
  static const char *const cell[MAX_DIM] = {"hx", "hx*hy", "hx*hy*hz"};
  for (int f = 0; f < m->nfields; f++) {
    int power;
    if (!ir_h_power(ir, f, &power) || power == m->dim - 2) continue;
    fprintf(out, "  the interior equation of %s scales as h^%d, not as the cell size (h^%d): multigrid's\n"
                 "  coarse grids correct it %d times too much, so Jacobi is the GPU's default; multiply\n"
                 "  the interior rule by %s, as PETSc's tutorials write their equations, for multigrid\n",
            m->fields[f].name, power, m->dim - 2, 1 << (m->dim - 2 - power > 0 ? m->dim - 2 - power : 0), cell[m->dim - 1]);
    break;
  }
}

/* ---- the driver ---- */

int explain_program(const Ir *ir, const ExplainOptions *o, FILE *out) {
  const Model *m = ir->m;
  /* The picture first: when it cannot be written, nothing is printed. */
  if (o->svg && !explain_svg(ir, o->svg)) {
    fprintf(stderr, "stencilc: error: cannot write '%s': %s\n", o->svg, strerror(errno));
    return 1;
  }
  Printer P;
  printer_init(&P, ir);
  fprintf(out, "%s, explained by stencilc %s\n\n", o->input, STENCILC_VERSION);
  explain_grid(ir, out);
  explain_fields(ir, out);
  explain_mirrors(ir, out);
  explain_params(ir, &P, out);
  explain_coefs(ir, out);
  explain_stencils(ir, out);
  explain_jacobian(ir, &P, out);
  explain_sgdia(ir, out);
  explain_levels(ir, out);
  printer_free(&P);
  if (o->svg) {
    long long n[MAX_DIM], own[MAX_DIM];
    char size[96], own_size[96];
    bool mine = explain_small_grid(m, n);
    for (int d = 0; d < m->dim; d++) own[d] = m->axes[d].points;
    grid_size_text(m, n, size, sizeof size);
    grid_size_text(m, own, own_size, sizeof own_size);
    fprintf(out, "\nPICTURE: %s shows the stencil, the sparsity pattern coloured by block diagonal and\n"
                 "  the SG-DIA columns, ", o->svg);
    if (mine) fprintf(out, "for the .stn's own %s grid.\n", size);
    else fprintf(out, "for a %s grid (the .stn's %s grid has more than %d points to draw).\n", size, own_size,
                 EXPLAIN_SMALL_POINTS);
  }
  return 0;
}
