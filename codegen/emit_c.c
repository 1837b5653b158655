/*
** emit_c.c: the generated PETSc program, in the style of PETSc's SNES
** tutorials (ex5.c, ex19.c): a help string, a comment quoting the .stn,
** the application context with one field per parameter, the residual
** (FormFunction), the Jacobian written straight into SG-DIA storage
** (FormJacobian), the initial guess, and main in phases. Every emitted
** statement that comes from the .stn names its line.
**
** Kinds of grid point: the code switches on PointKind(), the class number
** of sema.h (per direction 0 low face, 1 inside, 2 high face), and gives
** each group of kinds that share their rules one case.
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cnames.h"
#include "emit_c.h"
#include "emit_int.h"
#include "util.h"



int emit_line_of(const Program *P, const Node *n) {
  int line, col;
  diag_line_col(P->ir->src, n->loc.off, &line, &col);
  return line;
}

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

/* "i, j" / "i, j, k": the loop indices in argument order. */
void emit_index_args(const Program *P) {
  emit_list(P->out, P->m->dim, "%s", emit_index_names);
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
        if (c[0] == '*' && c + 1 < stop && c[1] == '/') {
          fputs("* ", P->out);
          continue;
        }
        fputc(*c == '\t' ? ' ' : *c, P->out);
      }
      fputc('\n', P->out);
    }
    s = nl ? nl + 1 : end;
  }
}

/* The last line of a block: its closing brace (strings and comments skipped). */
static int block_end_line(const Program *P, const Node *block) {
  const Source *src = P->ir->src;
  int depth = 0, off = block->loc.off;
  for (; off < src->len; off++) {
    char ch = src->text[off];
    if (ch == '#') {
      while (off < src->len && src->text[off] != '\n') off++;
    } else if (ch == '"') {
      for (off++; off < src->len && src->text[off] != '"'; off++) {}
    } else if (ch == '{') {
      depth++;
    } else if (ch == '}' && --depth == 0) {
      break;
    }
  }
  int line, col;
  diag_line_col(src, off < src->len ? off : src->len - 1, &line, &col);
  return line;
}

/* ---- classes of grid points, grouped by the rules they share ---- */

int emit_interior_class(const Model *m) {
  int c = 0, w = 1;
  for (int d = 0; d < m->dim; d++, w *= 3) c += w;
  return c;
}

static bool same_rules(const Program *P, What what, int c1, int c2) {
  for (int f = 0; f < P->m->nfields; f++) {
    const IrPoint *a = ir_point(P->ir, f, c1), *b = ir_point(P->ir, f, c2);
    switch (what) {
    case W_RESIDUAL:
      if (a->residual != b->residual || emit_line_of(P, a->residual_rule) != emit_line_of(P, b->residual_rule)) return false;
      break;
    case W_INITIAL:
      if (a->initial != b->initial) return false;
      break;
    case W_JACOBIAN:
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

/* Classes in order of emission: the interior first, then the others; each
   starts a group unless it shares the rules of an earlier one. group[c] is
   the first class of c's group, or -1 when c does not exist. */
static int class_order(const Program *P, What what, int *order, int *group) {
  const Model *m = P->m;
  int n = 0, in = emit_interior_class(m);
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
  }
  return n;
}

/* ---- the switch over kinds of points ---- */


void emit_residual_roots(const Program *P, int cls, Ref *roots, int *n) {
  for (int f = 0; f < P->m->nfields; f++) roots[(*n)++] = ir_point(P->ir, f, cls)->residual;
}

static void initial_roots(const Program *P, int cls, Ref *roots, int *n) {
  for (int f = 0; f < P->m->nfields; f++)
    if (ir_point(P->ir, f, cls)->initial != IR_NONE) roots[(*n)++] = ir_point(P->ir, f, cls)->initial;
}

void emit_jacobian_roots(const Program *P, int cls, Ref *roots, int *n) {
  for (int f = 0; f < P->m->nfields; f++) {
    const IrPoint *p = ir_point(P->ir, f, cls);
    for (int e = 0; e < p->nentries; e++) {
      const IrEntry *x = &p->entries[e];
      roots[(*n)++] = x->given != IR_NONE ? x->given : x->derived;
      if (x->given != IR_NONE && x->given != x->derived) roots[(*n)++] = x->derived;
    }
  }
}

static int max_roots(const Program *P) {
  int n = P->m->nfields * 2 + 1;
  for (int i = 0; i < P->m->nfields * P->m->nclasses; i++) n += 2 * P->ir->points[i].nentries;
  return n;
}

/* The field assignments of one group: f[j][i].u = ...; */
void emit_residual_body(Program *P, int cls, const char *indent) {
  for (int f = 0; f < P->m->nfields; f++) {
    const IrPoint *p = ir_point(P->ir, f, cls);
    fprintf(P->out, "%sf", indent);
    if (P->E.cuda) fputs("[p]", P->out);
    else
      for (int d = P->m->dim - 1; d >= 0; d--) fprintf(P->out, "[%s]", emit_index_names[d]);
    fprintf(P->out, ".%s = ", P->E.field[f]);
    emit_c_expr(&P->E, p->residual);
    fprintf(P->out, "; /* %s:%d */\n", P->o->stn_name, emit_line_of(P, p->residual_rule));
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
    fprintf(P->out, "; /* %s:%d */\n", P->o->stn_name, emit_line_of(P, p->initial_rule));
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
      fprintf(P->out, "%sv[%d][%d][%d] = ", indent, stencil_position(ir, x->offset), f, x->field);
      emit_c_expr(&P->E, x->given != IR_NONE ? x->given : x->derived);
      fprintf(P->out, "; /* d%s/d%s%s, %s %s:%d */\n", P->m->fields[f].name, P->m->fields[x->field].name, off,
              x->given != IR_NONE ? "given at" : "derived from", P->o->stn_name,
              emit_line_of(P, x->given != IR_NONE ? x->node : p->residual_rule));
    }
  }
  /* The run-time check of the entries the user wrote (-stn_check_jacobian),
     on CPUs only: the program runs it with -stn_device cpu. */
  if (P->E.cuda) return;
  bool any = false;
  for (int f = 0; f < P->m->nfields; f++) {
    const IrPoint *p = ir_point(ir, f, cls);
    for (int e = 0; e < p->nentries; e++) {
      const IrEntry *x = &p->entries[e];
      if (x->given == IR_NONE || x->given == x->derived) continue;
      if (!any) fprintf(P->out, "%sif (user->check_jacobian) {\n", indent);
      any = true;
      ir_offset_text(ir, x->offset, off, sizeof off, false);
      char what[256];
      int line, col;
      diag_line_col(ir->src, x->node->loc.off, &line, &col);
      snprintf(what, sizeof what, "d%s/d%s%s (%s:%d:%d)", P->m->fields[f].name, P->m->fields[x->field].name, off,
               P->o->stn_name, line, col);
      fprintf(P->out, "%s  PetscCall(CheckEntry(v[%d][%d][%d], ", indent, stencil_position(ir, x->offset), f,
              x->field);
      emit_c_expr(&P->E, x->derived);
      fputs(", ", P->out);
      c_string(P->out, what);
      fputs(", ", P->out);
      emit_index_args(P);
      fputs("));\n", P->out);
    }
  }
  if (any) fprintf(P->out, "%s}\n", indent);
}

/* The switch over kinds of points inside the loops, one case per group. */
void emit_point_switch(Program *P, What what, CaseRoots roots_of, CaseBody body, const char *indent) {
  const Model *m = P->m;
  int order[MAX_CLASSES], group[MAX_CLASSES], n = class_order(P, what, order, group);
  int ngroups = 0;
  for (int a = 0; a < n; a++) ngroups += group[order[a]] == order[a];
  Ref *roots = malloc((size_t)max_roots(P) * sizeof *roots);
  if (!roots) ice("out of memory");
  char inner[64], name[64];
  snprintf(inner, sizeof inner, "%s  ", indent);
  if (ngroups > 1) {
    fprintf(P->out, "%sswitch (PointKind(%s, ", indent, P->E.cuda ? "ctx" : "user");
    emit_index_args(P);
    fputs(")) {\n", P->out);
  }
  for (int a = 0; a < n; a++) {
    int first = order[a];
    if (group[first] != first) continue;
    if (ngroups > 1) {
      for (int b = a; b < n; b++)
        if (group[order[b]] == first) {
          sema_class_name(m, order[b], name, sizeof name);
          fprintf(P->out, "%scase %d: /* %s */\n", indent, order[b], name);
        }
      fprintf(P->out, "%s{\n", indent);
    }
    int nroots = 0;
    roots_of(P, first, roots, &nroots);
    const char *in = ngroups > 1 ? inner : indent;
    int nnamed = emit_c_temps(&P->E, roots, nroots, false, in, P->named);
    body(P, first, in);
    emit_c_forget(&P->E, P->named, nnamed);
    if (ngroups > 1) fprintf(P->out, "%s  break;\n%s}\n", indent, indent);
  }
  if (ngroups > 1) fprintf(P->out, "%s}\n", indent);
  free(roots);
}

/* Every root of every class, for naming the uniform values of a function. */
static int all_roots(const Program *P, CaseRoots roots_of, Ref *roots) {
  int n = 0;
  for (int c = 0; c < P->m->nclasses; c++)
    if (sema_class_exists(P->m, c)) roots_of(P, c, roots, &n);
  return n;
}

int emit_uniform_temps(Program *P, CaseRoots roots_of) {
  Ref *roots = malloc((size_t)max_roots(P) * (size_t)P->m->nclasses * sizeof *roots);
  if (!roots) ice("out of memory");
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
    fprintf(out, "%sPetscScalar v[NSTENCIL][DOF][DOF];\n\n", in);
    fprintf(out, "%sPetscCall(PetscArrayzero(&v[0][0][0], NSTENCIL * DOF * DOF));\n", in);
    return;
  }
  fprintf(out, "%sif (sgdia) StoreBlockRowSGDIA(a, nrows, ", in);
  if (P->m->dim == 1) fputs("i - info->xs", out);
  if (P->m->dim == 2) fputs("(j - info->ys) * info->xm + (i - info->xs)", out);
  if (P->m->dim == 3) fputs("((k - info->zs) * info->ym + (j - info->ys)) * info->xm + (i - info->xs)", out);
  fprintf(out, ", v);\n%selse PetscCall(StoreBlockRowAIJ(user, J, ", in);
  emit_index_args(P);
  fputs(", v));\n", out);
}

/* The body shared by the point functions: uniform values, the loops over
   the owned points, and the switch over kinds of points (with around, if
   given, called before and after it inside the loops). */
static void loop_over_points(Program *P, What what, CaseRoots roots, CaseBody body,
                             void (*around)(Program *, const char *, bool)) {
  emit_c_function_begin(&P->E);
  P->E.array = "x";
  emit_uniform_temps(P, roots);
  const char *in = open_loops(P, "s", "m");
  if (around) around(P, in, true);
  emit_point_switch(P, what, roots, body, in);
  if (around) around(P, in, false);
  close_loops(P);
}

/* Ghost exchange into a local vector (on the GPU too: CUDA vectors exchange on the device). */
#define GHOST_EXCHANGE \
  "  PetscCall(DMDAGetLocalInfo(user->da, &info));\n" \
  "  PetscCall(DMGetLocalVector(user->da, &Xloc));\n" \
  "  PetscCall(DMGlobalToLocalBegin(user->da, X, INSERT_VALUES, Xloc));\n" \
  "  PetscCall(DMGlobalToLocalEnd(user->da, X, INSERT_VALUES, Xloc));\n"

/* The exchange and the local array x, and back. */
static const char ghosts_in[] = GHOST_EXCHANGE "  PetscCall(DMDAVecGetArrayRead(user->da, Xloc, &x));\n";
static const char ghosts_out[] =
  "  PetscCall(DMDAVecRestoreArrayRead(user->da, Xloc, &x));\n"
  "  PetscCall(DMRestoreLocalVector(user->da, &Xloc));\n";

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
      if (blocks[b]) quote_lines(P, emit_line_of(P, blocks[b]), block_end_line(P, blocks[b]), " *   ");
  }
  fputs(" */\n\n", out);
}

/* The source text of expression n, [*lo, *hi): the union of its nodes' locations, widened over
   the parentheses the grammar dropped (so `1 / (nx * ny)` is all of it, not its operator). */
static void expr_span(const Node *n, int *lo, int *hi) {
  if (!n) return;
  if (n->loc.off < *lo) *lo = n->loc.off;
  if (n->loc.off + n->loc.len > *hi) *hi = n->loc.off + n->loc.len;
  if (n->kind == N_UNARY || n->kind == N_BINARY || n->kind == N_IF) {
    expr_span(n->op.a, lo, hi);
    expr_span(n->op.b, lo, hi);
    expr_span(n->op.c, lo, hi);
  }
  if (n->kind == N_CALL) {
    for (const Node *a = n->call.args; a; a = a->next) expr_span(a, lo, hi);
    *hi += 1; /* its closing parenthesis, balanced below */
  }
}

static const char *param_default_text(const Program *P, const Node *v, int *len) {
  const char *text = P->ir->src->text;
  const int   size = (int)strlen(text);
  int         lo = v->loc.off, hi = v->loc.off + v->loc.len, open = 0;
  expr_span(v, &lo, &hi);
  if (hi > size) hi = size;
  for (int i = lo; i < hi; i++) open += text[i] == '(' ? 1 : text[i] == ')' ? -1 : 0;
  while (open > 0 && hi < size && (text[hi] == ')' || text[hi] == ' ')) open -= text[hi++] == ')';
  while (open < 0 && lo > 0 && (text[lo - 1] == '(' || text[lo - 1] == ' ')) open += text[--lo] == '(';
  while (hi > lo && text[hi - 1] == ' ') hi--;
  *len = hi - lo;
  return text + lo;
}

static void help_string(Program *P) {
  const Model *m = P->m;
  FILE *out = P->out;
  char line[1024];
  fprintf(out, "static char help[] = ");
  snprintf(line, sizeof line, "Solves the equations of %s with PETSc's Newton-Krylov solver (SNES).\n",
           P->o->stn_name);
  c_string(out, line);
  fputs("\n  ", out);
  c_string(out, "Parameters (default in brackets):\n");
  for (int i = 0; i < m->nparams; i++) {
    const Node *p = m->params[i];
    const Node *v = p->param.value;
    int len;
    const char *dflt = param_default_text(P, v, &len);
    int n = snprintf(line, sizeof line, "  -%s <%.*s>", P->E.param[i], len, dflt);
    if (p->param.desc) n += snprintf(line + n, sizeof line - (size_t)(n < (int)sizeof line ? n : 0), ": %s", p->param.desc);
    if (p->param.lo && n < (int)sizeof line)
      snprintf(line + n, sizeof line - (size_t)n, ", in [%g, %g]", m->param_lo[i], m->param_hi[i]);
    strncat(line, "\n", sizeof line - strlen(line) - 1);
    fputs("\n  ", out);
    c_string(out, line);
  }
  fputs("\n  ", out);
  c_string(out, "Program options:\n"
                "  -stn_mat_type <sgdia>: the Jacobian's storage, sgdia or aij\n"
                "  -stn_check_jacobian: compare the Jacobian entries the .stn gives with the derived ones\n"
                "  -stn_output <file.vts>: write the solution for ParaView\n"
                "  -stn_plot_solution <file.png>: draw the solution (colour maps; 3D: middle slices) with gnuplot\n"
                "  -stn_plot_convergence <file.png>: draw the residual norm per Newton and Krylov iteration with gnuplot\n"
                "  -stn_device <gpu|cpu>: with a CUDA PETSc, where the solve runs (the GPU when there is one)\n"
                "  -stn_vec_kernels <stencilc>: on the GPU, whose vector kernels, stencilc or petsc\n"
                "  -stn_autotune, -stn_tune_cache <file>: on the GPU, tune the kernels for this size (and where to keep it)\n"
                "  -da_grid_x <n> (and _y, _z): grid points per direction\n");
  fputs(";\n\n", out);
}

static void declarations(Program *P) {
  const Model *m = P->m;
  const Ir *ir = P->ir;
  FILE *out = P->out;
  fputs("#include <math.h>\n#include <petscdmda.h>\n#include <petscsnes.h>\n\n#include \"stnrt.h\" /* the SG-DIA matrix and the solve report */\n", out);
  fprintf(out, "#include \"%s\" /* Field, KernelCtx, NSTENCIL, DOF: shared with the CUDA kernels */\n\n", P->o->h_name);
  fputs("#if defined(PETSC_USE_COMPLEX) || !defined(PETSC_USE_REAL_DOUBLE)\n"
        "#error \"stencilc programs need PETSc built with real double-precision scalars\"\n#endif\n\n", out);
  fputs("/* Application context: the grid and the parameters. */\ntypedef struct {\n  DM        da;\n", out);
  fputs("  PetscInt  ", out);
  emit_list(out, m->dim, "n%s", axis_names);
  fputs("; /* grid points per direction (-da_grid_x, ...) */\n  PetscReal ", out);
  emit_list(out, m->dim, "h%s", axis_names);
  fputs("; /* grid spacing */\n", out);
  for (int i = 0; i < m->nparams; i++) {
    fprintf(out, "  PetscReal %s; /* ", P->E.param[i]);
    if (m->params[i]->param.desc) fprintf(out, "%s, ", m->params[i]->param.desc);
    fprintf(out, "%s:%d */\n", P->o->stn_name, emit_line_of(P, m->params[i]));
  }
  fputs("  Mat       J;              /* the Jacobian: SG-DIA, or AIJ with -stn_mat_type aij */\n", out);
  fputs("  PetscBool gpu;            /* residual and Jacobian on the GPU (-stn_device gpu) */\n", out);
  fputs("  StnKernelShape shape[2];  /* their kernels' launch shapes (StnTuneLaunch; bx 0: not chosen yet) */\n", out);
  fputs("  PetscBool check_jacobian; /* -stn_check_jacobian */\n} AppCtx;\n\n", out);

  fputs("/* The Jacobian's block diagonals: the neighbours the equations couple (stencil\n"
        "   analysis), as grid offsets (x, y, z), in the order of the SG-DIA columns. */\n", out);
  fputs("static const PetscInt stencil_offsets[NSTENCIL][3] = {\n", out);
  for (int s = 0; s < ir->nstencil; s++) {
    const int *o = ir->offsets[ir->stencil[s]];
    fprintf(out, "  {%d, %d, %d},%s\n", o[0], o[1], o[2], s == ir->diagonal ? " /* the point itself */" : "");
  }
  fputs("};\n\n", out);
}

static void point_kind(Program *P) {
  const Model *m = P->m;
  FILE *out = P->out;
  fputs("/* The kind of a grid point, which picks the rule of each field: per direction\n"
        "   0 on the low face, 1 inside, 2 on the high face; kind = px + 3 py + 9 pz. */\n", out);
  fprintf(out, "static inline int PointKind(const AppCtx *user, ");
  emit_list(out, m->dim, "PetscInt %s", emit_index_names);
  fputs(")\n{\n", out);
  for (int d = 0; d < m->dim; d++) {
    if (m->axes[d].periodic)
      fprintf(out, "  const int p%s = 1; /* %s is periodic: no faces */\n", axis_names[d], axis_names[d]);
    else
      fprintf(out, "  const int p%s = %s == 0 ? 0 : (%s == user->n%s - 1 ? 2 : 1);\n", axis_names[d], emit_index_names[d], emit_index_names[d],
              axis_names[d]);
  }
  for (int d = 0; d < m->dim; d++)
    if (m->axes[d].periodic) fprintf(out, "  (void)%s;\n", emit_index_names[d]);
  fputs("  return px", out);
  if (m->dim > 1) fputs(" + 3 * py", out);
  if (m->dim > 2) fputs(" + 9 * pz", out);
  fputs(";\n}\n\n", out);
}

static void set_parameters(Program *P) {
  const Model *m = P->m;
  FILE *out = P->out;
  CEmit *E = &P->E;
  fputs("/* Parameters: each default from the .stn, then the option of the same name. */\n", out);
  fputs("static PetscErrorCode SetParameters(AppCtx *user)\n{\n  PetscFunctionBeginUser;\n", out);
  fprintf(out, "  PetscOptionsBegin(PETSC_COMM_WORLD, NULL, \"Parameters of %s\", \"\");\n", P->o->stn_name);
  emit_c_function_begin(E);
  for (int i = 0; i < m->nparams; i++) {
    const Node *p = m->params[i];
    fprintf(out, "  user->%s = ", E->param[i]);
    emit_c_expr(E, P->ir->param_default[i]);
    fprintf(out, "; /* %s:%d */\n", P->o->stn_name, emit_line_of(P, p));
    fprintf(out, "  PetscCall(PetscOptionsReal(\"-%s\", ", E->param[i]);
    c_string(out, p->param.desc ? p->param.desc : p->param.name);
    fprintf(out, ", \"%s\", user->%s, &user->%s, NULL));\n", P->o->stn_name, E->param[i], E->param[i]);
  }
  fputs("  user->check_jacobian = PETSC_FALSE;\n", out);
  fputs("  PetscCall(PetscOptionsBool(\"-stn_check_jacobian\", \"Compare the Jacobian entries given in the .stn with "
        "the derived ones\", NULL, user->check_jacobian, &user->check_jacobian, NULL));\n",
        out);
  fputs("  PetscOptionsEnd();\n", out);
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
    fprintf(out, ", PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE,\n             \"-%s %%g is out of range: %s:%d "
                 "allows [%g, %g]\", (double)user->%s);\n",
            nm, P->o->stn_name, emit_line_of(P, m->params[i]), lo, hi, nm);
  }
  fputs("  PetscFunctionReturn(PETSC_SUCCESS);\n}\n\n", out);
}

static void form_initial_guess(Program *P) {
  const Model *m = P->m;
  FILE *out = P->out;
  bool any = false;
  for (int f = 0; f < m->nfields; f++) any |= m->fields[f].initial != NULL;
  fputs("/* The initial guess of Newton's method (the .stn's initial blocks). */\n", out);
  fprintf(out, "static PetscErrorCode FormInitialGuess(AppCtx *user, Vec X)\n{\n");
  if (!any) {
    fputs("  PetscFunctionBeginUser;\n  PetscCall(VecSet(X, 0.0)); /* no initial blocks: 0 everywhere */\n"
          "  PetscFunctionReturn(PETSC_SUCCESS);\n}\n\n", out);
    return;
  }
  fprintf(out, "  DMDALocalInfo info_, *info = &info_;\n  Field %sx;\n\n  PetscFunctionBeginUser;\n", array_stars(P));
  fputs("  PetscCall(DMDAGetLocalInfo(user->da, info));\n  PetscCall(DMDAVecGetArray(user->da, X, &x));\n", out);
  loop_over_points(P, W_INITIAL, initial_roots, initial_body, NULL);
  fputs("  PetscCall(DMDAVecRestoreArray(user->da, X, &x));\n  PetscFunctionReturn(PETSC_SUCCESS);\n}\n\n", out);
}

/* The GPU versions of the residual and the Jacobian: the kernels are in the
   .cu file; here the ghost exchange between CUDA vectors and the launch. */
static void gpu_functions(Program *P) {
  const Model *m = P->m;
  FILE *out = P->out;
  Ref roots[MAX_FIELDS * 2];
  int n = 0;
  emit_residual_roots(P, emit_interior_class(m), roots, &n);
  fputs("#if defined(PETSC_HAVE_CUDA)\n"
        "/* The kernels' view of the grid, this rank's boxes and the parameters. */\n"
        "static void SetKernelCtx(const AppCtx *user, const DMDALocalInfo *info, KernelCtx *ctx)\n{\n", out);
  for (int d = 0; d < m->dim; d++) {
    const char *a = axis_names[d];
    fprintf(out, "  ctx->n%s = (int)user->n%s;\n  ctx->h%s = user->h%s;\n", a, a, a, a);
    fprintf(out, "  ctx->%ss = (int)info->%ss;\n  ctx->%sm = (int)info->%sm;\n", a, a, a, a);
    fprintf(out, "  ctx->g%ss = (int)info->g%ss;\n  ctx->g%sm = (int)info->g%sm;\n", a, a, a, a);
  }
  for (int i = 0; i < m->nparams; i++) fprintf(out, "  ctx->%s = user->%s;\n", P->E.param[i], P->E.param[i]);
  fputs("}\n\n", out);
  unsigned long hash = 2166136261u; /* FNV-1a of the .stn: a tuned shape belongs to these kernels */
  for (const char *c = P->ir->src->text; *c; c++) hash = ((hash ^ (unsigned char)*c) * 16777619u) & 0xffffffffu;
  fprintf(out, "/* The kernels as the tuner calls them (StnTuneLaunch: launch shapes, -stn_autotune). */\n"
               "#define KERNEL_NAME(what) \"%s-%08lx/\" what /* the .stn and a hash of its text */\n\n", P->o->stn_name, hash);
  fputs("typedef struct {\n  const KernelCtx *ctx;\n  const Field     *x;\n  void            *out;\n} KernelArgs;\n\n"
        "static int RunResidual(void *args, const StnKernelShape *s)\n{\n  const KernelArgs *k = (const KernelArgs *)args;\n\n"
        "  return FormFunctionCUDA(k->ctx, k->x, (Field *)k->out, s->bx, s->by, s->sweep);\n}\n\n"
        "static int RunJacobian(void *args, const StnKernelShape *s)\n{\n  const KernelArgs *k = (const KernelArgs *)args;\n\n"
        "  return FormJacobianCUDA(k->ctx, k->x, (double *)k->out, s->bx, s->by, s->sweep);\n}\n\n", out);
  fputs("/* The residual on the GPU: ghost exchange between CUDA vectors, then one kernel. */\n"
        "static PetscErrorCode FormFunctionGPU(AppCtx *user, Vec X, Vec F)\n{\n"
        "  DMDALocalInfo      info;\n  KernelCtx          ctx;\n  Vec                Xloc;\n"
        "  const PetscScalar *x;\n  PetscScalar       *f;\n\n  PetscFunctionBeginUser;\n"
        GHOST_EXCHANGE "  SetKernelCtx(user, &info, &ctx);\n"
        "  PetscCall(VecCUDAGetArrayRead(Xloc, &x));\n  PetscCall(VecCUDAGetArrayWrite(F, &f));\n"
        , out);
  const char *points = m->dim == 1 ? "(long)info.xm" : m->dim == 2 ? "(long)info.xm * info.ym" : "(long)info.xm * info.ym * info.zm";
  const char *extents = m->dim == 1 ? "info.xm, 1, 1" : m->dim == 2 ? "info.xm, info.ym, 1" : "info.xm, info.ym, info.zm";
  fprintf(out, "  if (!user->shape[0].bx) { /* the first time: the tuned shape, or tune it now */\n"
               "    KernelArgs args = {&ctx, (const Field *)x, f};\n\n"
               "    PetscCall(StnTuneLaunch(PETSC_COMM_WORLD, KERNEL_NAME(\"residual\"), %d, %s, f, %s * DOF, RunResidual, &args, &user->shape[0]));\n"
               "  }\n", m->dim, extents, points);
  fputs("  PetscCall(PetscLogGpuTimeBegin());\n"
        "  PetscCheck(FormFunctionCUDA(&ctx, (const Field *)x, (Field *)f, user->shape[0].bx, user->shape[0].by, user->shape[0].sweep) == 0, PETSC_COMM_SELF, PETSC_ERR_LIB, \"the residual kernel failed\");\n"
        "  PetscCall(PetscLogGpuTimeEnd());\n", out);
  fprintf(out, "  PetscCall(PetscLogGpuFlops(%d.0 * info.xm", emit_c_flops(&P->E, roots, n));
  if (m->dim > 1) fputs(" * info.ym", out);
  if (m->dim > 2) fputs(" * info.zm", out);
  fputs("));\n  PetscCall(VecCUDARestoreArrayWrite(F, &f));\n  PetscCall(VecCUDARestoreArrayRead(Xloc, &x));\n"
        "  PetscCall(DMRestoreLocalVector(user->da, &Xloc));\n  PetscFunctionReturn(PETSC_SUCCESS);\n}\n\n", out);
  fputs("/* The Jacobian on the GPU, straight into the SG-DIA values in device memory. */\n"
        "static PetscErrorCode FormJacobianGPU(AppCtx *user, Vec X)\n{\n"
        "  DMDALocalInfo      info;\n  KernelCtx          ctx;\n  Vec                Xloc;\n"
        "  const PetscScalar *x;\n  PetscScalar       *a;\n\n  PetscFunctionBeginUser;\n"
        GHOST_EXCHANGE "  SetKernelCtx(user, &info, &ctx);\n"
        "  PetscCall(VecCUDAGetArrayRead(Xloc, &x));\n  PetscCall(MatSGDIAGetArrayDevice(user->J, &a));\n", out);
  fprintf(out, "  if (!user->shape[1].bx) {\n"
               "    KernelArgs args = {&ctx, (const Field *)x, a};\n\n"
               "    PetscCall(StnTuneLaunch(PETSC_COMM_WORLD, KERNEL_NAME(\"jacobian\"), %d, %s, a, %s * NSTENCIL * DOF * DOF, RunJacobian, &args, &user->shape[1]));\n"
               "  }\n", m->dim, extents, points);
  fputs("  PetscCall(PetscLogGpuTimeBegin());\n"
        "  PetscCheck(FormJacobianCUDA(&ctx, (const Field *)x, a, user->shape[1].bx, user->shape[1].by, user->shape[1].sweep) == 0, PETSC_COMM_SELF, PETSC_ERR_LIB, \"the Jacobian kernel failed\");\n"
        "  PetscCall(PetscLogGpuTimeEnd());\n"
        "  PetscCall(MatSGDIARestoreArrayDevice(user->J, &a));\n  PetscCall(VecCUDARestoreArrayRead(Xloc, &x));\n"
        "  PetscCall(DMRestoreLocalVector(user->da, &Xloc));\n"
        "  PetscCall(MatAssemblyBegin(user->J, MAT_FINAL_ASSEMBLY));\n  PetscCall(MatAssemblyEnd(user->J, MAT_FINAL_ASSEMBLY));\n"
        "  PetscFunctionReturn(PETSC_SUCCESS);\n}\n#endif\n\n", out);
}

/* The grid sizes of the DMDA da into the AppCtx at prefix ("user." or "user->"). */
static void emit_grid_sizes(const Program *P, const char *da, const char *prefix) {
  const int dim = P->m->dim;
  fprintf(P->out, "  PetscCall(DMDAGetInfo(%s, NULL, &%snx, ", da, prefix);
  if (dim > 1) fprintf(P->out, "&%sny, ", prefix);
  else fputs("NULL, ", P->out);
  if (dim > 2) fprintf(P->out, "&%snz, ", prefix);
  else fputs("NULL, ", P->out);
  fputs("NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL));\n", P->out);
}

/* The grid spacing from the grid sizes, for the AppCtx at prefix ("user." or "user->"):
   (hi - lo) / (n - 1), or / n in a periodic direction. */
static void emit_spacing(const Program *P, const char *prefix) {
  const Model *m = P->m;
  for (int d = 0; d < m->dim; d++) {
    const Axis *ax = &m->axes[d];
    fprintf(P->out, "  %sh%s = (", prefix, axis_names[d]);
    emit_c_number(P->out, ax->hi);
    fputs(" - ", P->out);
    emit_c_number(P->out, ax->lo);
    if (ax->periodic) fprintf(P->out, ") / %sn%s;\n", prefix, axis_names[d]);
    else fprintf(P->out, ") / (%sn%s - 1);\n", prefix, axis_names[d]);
  }
}

/* UseLevel: the AppCtx of another grid of the same problem, a level of geometric multigrid
   (-pc_type mg), whose KSP asks for the level's residual and Jacobian with the level's DM
   and the solution restricted to it: the parameters as given (the same PDE), the level's
   sizes and spacing, on the host. */
static void use_level(const Program *P) {
  FILE *out = P->out;
  fputs("/* The grid of a coarser level of -pc_type mg: the same problem and parameters, the level's\n"
        "   own sizes and spacing, computed on the host. */\n"
        "static PetscErrorCode UseLevel(DM dm, const AppCtx *fine, AppCtx *level)\n{\n"
        "  AppCtx *user = level;\n\n  PetscFunctionBeginUser;\n  *level     = *fine;\n  level->da  = dm;\n"
        "  level->gpu = PETSC_FALSE;\n", out);
  emit_grid_sizes(P, "dm", "user->");
  emit_spacing(P, "user->");
  fputs("  PetscFunctionReturn(PETSC_SUCCESS);\n}\n\n", out);
}

/* The Jacobian on another grid of the same problem: a level of geometric multigrid
   (-pc_type mg), whose KSP asks for its operator with the level's DM and the solution
   restricted to it. Same parameters, the level's sizes and spacing, assembled into P. */
static void form_jacobian_level(Program *P) {
  FILE *out = P->out;
  fprintf(out, "/* The Jacobian on a coarser grid of the same problem (a level of -pc_type mg), assembled\n"
               "   into P on the host. */\n"
               "static PetscErrorCode FormJacobianLevel(DM dm, Vec X, Mat J, Mat P, const AppCtx *fine)\n{\n"
               "  AppCtx        level, *user = &level;\n  DMDALocalInfo info;\n  Vec           Xloc;\n"
               "  const Field %sx;\n\n  PetscFunctionBeginUser;\n  PetscCall(UseLevel(dm, fine, &level));\n", array_stars(P));
  fputs(ghosts_in, out);
  fputs("  PetscCall(FormJacobianLocal(&info, x, P, user));\n", out);
  fputs(ghosts_out, out);
  fputs("  if (J != P) {\n    PetscCall(MatAssemblyBegin(J, MAT_FINAL_ASSEMBLY));\n    PetscCall(MatAssemblyEnd(J, MAT_FINAL_ASSEMBLY));\n  }\n"
        "  PetscFunctionReturn(PETSC_SUCCESS);\n}\n\n", out);
}

static void form_function(Program *P) {
  FILE *out = P->out;
  const char *st = array_stars(P);
  fputs("/* F(x) at the locally owned points; x is the local (ghosted) state. */\n", out);
  fprintf(out, "static PetscErrorCode FormFunctionLocal(DMDALocalInfo *info, const Field %sx, Field %sf, AppCtx *user)\n{\n",
          st, st);
  fputs("  PetscFunctionBeginUser;\n", out);
  loop_over_points(P, W_RESIDUAL, emit_residual_roots, emit_residual_body, NULL);
  Ref roots[MAX_FIELDS * 2];
  int n = 0;
  emit_residual_roots(P, emit_interior_class(P->m), roots, &n);
  int flops = emit_c_flops(&P->E, roots, n);
  fprintf(out, "  /* %d operations per interior point, counted for every point */\n", flops);
  fprintf(out, "  PetscCall(PetscLogFlops(%d.0 * info->xm", flops);
  if (P->m->dim > 1) fputs(" * info->ym", out);
  if (P->m->dim > 2) fputs(" * info->zm", out);
  fputs("));\n  PetscFunctionReturn(PETSC_SUCCESS);\n}\n\n", out);

  gpu_functions(P);
  use_level(P);
  fputs("/* The residual for SNES: ghost exchange, then FormFunctionLocal. */\n"
        "static PetscErrorCode FormFunction(SNES snes, Vec X, Vec F, void *ctx)\n{\n"
        "  AppCtx       *user = (AppCtx *)ctx, level;\n  DMDALocalInfo info;\n  Vec           Xloc;\n  DM            dm;\n", out);
  fprintf(out, "  const Field %sx;\n  Field       %sf;\n\n  PetscFunctionBeginUser;\n", st, st);
  fputs("  PetscCall(VecGetDM(X, &dm));\n"
        "  if (dm && dm != user->da) { /* a coarser level of multigrid */\n"
        "    PetscCall(UseLevel(dm, user, &level));\n    user = &level;\n  }\n", out);
  fputs("#if defined(PETSC_HAVE_CUDA)\n  if (user->gpu) {\n    PetscCall(FormFunctionGPU(user, X, F));\n"
        "    PetscFunctionReturn(PETSC_SUCCESS);\n  }\n#endif\n", out);
  fputs(ghosts_in, out);
  fputs("  PetscCall(DMDAVecGetArray(user->da, F, &f));\n"
        "  PetscCall(FormFunctionLocal(&info, x, f, user));\n"
        "  PetscCall(DMDAVecRestoreArray(user->da, F, &f));\n", out);
  fputs(ghosts_out, out);
  fputs("  PetscFunctionReturn(PETSC_SUCCESS);\n}\n\n", out);
}

static void jacobian_helpers(Program *P) {
  const Model *m = P->m;
  FILE *out = P->out;
  fputs("/* Stores the block row v of the point with local number p in SG-DIA storage: column\n"
        "   s*DOF + c, of height nrows, holds d(F_r)/d(x_c at neighbour s) in row p*DOF + r. */\n"
        "static inline void StoreBlockRowSGDIA(PetscScalar *a, PetscInt nrows, PetscInt p, PetscScalar v[NSTENCIL][DOF][DOF])\n"
        "{\n"
        "  for (PetscInt s = 0; s < NSTENCIL; s++)\n"
        "    for (PetscInt c = 0; c < DOF; c++)\n"
        "      for (PetscInt r = 0; r < DOF; r++) a[(s * DOF + c) * nrows + p * DOF + r] = v[s][r][c];\n"
        "}\n\n", out);
  fputs("/* The same block row into an AIJ matrix (-stn_mat_type aij), skipping neighbours outside the grid. */\n", out);
  fputs("static PetscErrorCode StoreBlockRowAIJ(const AppCtx *user, Mat J, ", out);
  for (int d = 0; d < m->dim; d++) fprintf(out, "PetscInt %s, ", emit_index_names[d]);
  fputs("PetscScalar v[NSTENCIL][DOF][DOF])\n{\n"
        "  MatStencil  row[DOF], col[NSTENCIL * DOF];\n"
        "  PetscScalar vals[DOF * NSTENCIL * DOF];\n"
        "  PetscInt    ncol = 0;\n\n"
        "  PetscFunctionBeginUser;\n", out);
  fputs("  for (PetscInt s = 0; s < NSTENCIL; s++) {\n", out);
  for (int d = 0; d < m->dim; d++)
    fprintf(out, "    const PetscInt n%s = %s + stencil_offsets[s][%d];\n", emit_index_names[d], emit_index_names[d], d);
  bool any_wall = false;
  for (int d = 0; d < m->dim; d++) any_wall |= !m->axes[d].periodic;
  if (any_wall) {
    fputs("    if (", out);
    bool first = true;
    for (int d = 0; d < m->dim; d++) {
      if (m->axes[d].periodic) continue;
      fprintf(out, "%sn%s < 0 || n%s >= user->n%s", first ? "" : " || ", emit_index_names[d], emit_index_names[d], axis_names[d]);
      first = false;
    }
    fputs(") continue; /* outside the grid: the entries are 0 */\n", out);
  }
  fputs("    for (PetscInt c = 0; c < DOF; c++) {\n      col[ncol].i = ni;\n", out);
  fprintf(out, "      col[ncol].j = %s;\n      col[ncol].k = %s;\n", m->dim > 1 ? "nj" : "0", m->dim > 2 ? "nk" : "0");
  fputs("      col[ncol].c = c;\n      for (PetscInt r = 0; r < DOF; r++) vals[r * NSTENCIL * DOF + ncol] = v[s][r][c];\n"
        "      ncol++;\n    }\n  }\n", out);
  fputs("  for (PetscInt r = 0; r < DOF; r++) {\n    row[r].i = i;\n", out);
  fprintf(out, "    row[r].j = %s;\n    row[r].k = %s;\n    row[r].c = r;\n", m->dim > 1 ? "j" : "0", m->dim > 2 ? "k" : "0");
  fputs("    /* rows of vals are NSTENCIL*DOF apart; pass one row at a time */\n"
        "    PetscCall(MatSetValuesStencil(J, 1, &row[r], ncol, col, &vals[r * NSTENCIL * DOF], INSERT_VALUES));\n  }\n"
        "  PetscFunctionReturn(PETSC_SUCCESS);\n}\n\n", out);
  if (!P->any_given) return;
  fputs("/* -stn_check_jacobian: a Jacobian entry the .stn gives must equal the derived one. */\n"
        "static PetscErrorCode CheckEntry(PetscScalar given, PetscScalar derived, const char *entry, ", out);
  emit_list(out, m->dim, "PetscInt %s", emit_index_names);
  fputs(")\n{\n  PetscFunctionBeginUser;\n"
        "  PetscCheck(PetscAbsScalar(given - derived) <= 1e-8 * (PetscAbsScalar(given) + PetscAbsScalar(derived)) + 1e-14,\n"
        "             PETSC_COMM_SELF, PETSC_ERR_USER,\n"
        "             \"-stn_check_jacobian: the Jacobian entry %s is %g at grid point (", out);
  for (int d = 0; d < m->dim; d++) fputs(d ? ", %\" PetscInt_FMT \"" : "%\" PetscInt_FMT \"", out);
  fputs(") but the derivative of the residual is %g\",\n             entry, (double)given, ", out);
  emit_index_args(P);
  fputs(", (double)derived);\n  PetscFunctionReturn(PETSC_SUCCESS);\n}\n\n", out);
}

static void form_jacobian(Program *P) {
  const Model *m = P->m;
  FILE *out = P->out;
  const char *st = array_stars(P);
  jacobian_helpers(P);
  fputs("/* The Jacobian at the locally owned points, one block row per point: v[s][r][c] is\n"
        "   d(F_r)/d(x_c at neighbour s), derived from the residual unless the .stn gives it. */\n", out);
  fprintf(out, "static PetscErrorCode FormJacobianLocal(DMDALocalInfo *info, const Field %sx, Mat J, AppCtx *user)\n{\n",
          st);
  fputs("  PetscScalar *a = NULL; /* SG-DIA values, when J is SG-DIA */\n  PetscBool    sgdia;\n", out);
  fputs("  PetscInt     nrows = info->xm", out);
  if (m->dim > 1) fputs(" * info->ym", out);
  if (m->dim > 2) fputs(" * info->zm", out);
  fputs(" * DOF;\n\n  PetscFunctionBeginUser;\n", out);
  fputs("  PetscCall(MatIsSGDIA(J, &sgdia));\n  if (sgdia) PetscCall(MatSGDIAGetArray(J, &a));\n", out);
  loop_over_points(P, W_JACOBIAN, emit_jacobian_roots, emit_jacobian_body, store_block_row);
  fputs("  if (sgdia) PetscCall(MatSGDIARestoreArray(J, &a));\n"
        "  PetscCall(MatAssemblyBegin(J, MAT_FINAL_ASSEMBLY));\n  PetscCall(MatAssemblyEnd(J, MAT_FINAL_ASSEMBLY));\n"
        "  PetscFunctionReturn(PETSC_SUCCESS);\n}\n\n", out);
  form_jacobian_level(P);

  fputs("/* The Jacobian for SNES. It is computed into user->J (SG-DIA, or AIJ with -stn_mat_type\n"
        "   aij); when the preconditioner needs an assembled matrix, P is an AIJ copy. */\n"
        "static PetscErrorCode FormJacobian(SNES snes, Vec X, Mat J, Mat P, void *ctx)\n{\n"
        "  AppCtx       *user = (AppCtx *)ctx;\n  DMDALocalInfo info;\n  Vec           Xloc;\n  DM            dm;\n", out);
  fprintf(out, "  const Field %sx;\n\n  PetscFunctionBeginUser;\n", st);
  fputs("  PetscCall(VecGetDM(X, &dm));\n"
        "  if (dm && dm != user->da) { /* a coarser level of multigrid */\n"
        "    PetscCall(FormJacobianLevel(dm, X, J, P, user));\n    PetscFunctionReturn(PETSC_SUCCESS);\n  }\n", out);
  fputs("#if defined(PETSC_HAVE_CUDA)\n  if (user->gpu) {\n    PetscBool sgdia;\n\n"
        "    PetscCall(MatIsSGDIA(user->J, &sgdia));\n"
        "    if (sgdia) { /* else AIJCUSPARSE, assembled on the host below: the baseline */\n"
        "      PetscCall(FormJacobianGPU(user, X));\n      PetscFunctionReturn(PETSC_SUCCESS);\n    }\n  }\n#endif\n", out);
  fputs(ghosts_in, out);
  fputs("  PetscCall(FormJacobianLocal(&info, x, user->J, user));\n", out);
  fputs(ghosts_out, out);
  fputs("  if (P != user->J) PetscCall(MatSGDIACopyToAIJ(user->J, P));\n"
        "  if (J != user->J && J != P) { /* e.g. -snes_mf_operator */\n"
        "    PetscCall(MatAssemblyBegin(J, MAT_FINAL_ASSEMBLY));\n    PetscCall(MatAssemblyEnd(J, MAT_FINAL_ASSEMBLY));\n  }\n"
        "  PetscFunctionReturn(PETSC_SUCCESS);\n}\n\n", out);
}

static void choose_matrices(Program *P) {
  fputs("/* After SNESSetFromOptions: SG-DIA serves Jacobi-type preconditioners directly; any\n"
        "   other (ILU, GAMG, hypre, ...) gets an AIJ copy to factor. When the options ask PETSc\n"
        "   to compute the Jacobian itself (-snes_fd, -snes_fd_color), it does so in AIJ. */\n"
        "static PetscErrorCode SetUpJacobian(SNES snes, AppCtx *user, Mat *P)\n{\n"
        "  Mat       A, B;\n  KSP       ksp;\n  PC        pc;\n"
        "  PetscBool sgdia, direct;\n  PetscErrorCode (*fn)(SNES, Vec, Mat, Mat, void *);\n\n"
        "  PetscFunctionBeginUser;\n  *P = NULL;\n"
        "  PetscCall(MatIsSGDIA(user->J, &sgdia));\n  if (!sgdia) PetscFunctionReturn(PETSC_SUCCESS);\n"
        "  PetscCall(SNESGetJacobian(snes, &A, &B, &fn, NULL));\n"
        "  PetscCall(SNESGetKSP(snes, &ksp));\n  PetscCall(KSPGetPC(ksp, &pc));\n"
        "  PetscCall(PetscObjectTypeCompareAny((PetscObject)pc, &direct, PCNONE, PCJACOBI, PCPBJACOBI, PCSHELL, \"\"));\n"
        "  if (fn == FormJacobian && direct) PetscFunctionReturn(PETSC_SUCCESS);\n"
        "  PetscCall(DMSetMatType(user->da, MATAIJ));\n  PetscCall(DMCreateMatrix(user->da, P));\n"
        "  if (fn == FormJacobian) PetscCall(SNESSetJacobian(snes, A, *P, FormJacobian, user));\n"
        "  else PetscCall(SNESSetJacobian(snes, A == user->J ? *P : A, B == user->J ? *P : B, NULL, NULL));\n"
        "  PetscFunctionReturn(PETSC_SUCCESS);\n}\n\n", P->out);
}

static void main_function(Program *P) {
  const Model *m = P->m;
  FILE *out = P->out;
  const char *bt[MAX_DIM];
  for (int d = 0; d < m->dim; d++) bt[d] = m->axes[d].periodic ? "DM_BOUNDARY_PERIODIC" : "DM_BOUNDARY_NONE";
  fputs("int main(int argc, char **argv)\n{\n"
        "  AppCtx              user;\n  SNES                snes;\n  KSP                 ksp;\n  PC                  pc;\n  PetscMPIInt         size;\n  Vec                 X;\n  Mat                 P = NULL;\n"
        "  SNESConvergedReason reason;\n  const char         *mat_types[] = {\"sgdia\", \"aij\"}, *devices[] = {\"cpu\", \"gpu\"};\n"
        "  PetscInt            mat_type = 0, device = 0;\n  PetscLogStage       stage;\n  PetscBool           output;\n"
        "  char                path[PETSC_MAX_PATH_LEN] = \"\";\n"
        "  PetscBool           plot_solution, plot_convergence;\n"
        "  char                solution_png[PETSC_MAX_PATH_LEN] = \"\", convergence_png[PETSC_MAX_PATH_LEN] = \"\";\n"
        "  StnHistory          history = NULL;\n\n", out);
  fputs("  /* ---- PETSc and the options ---- */\n"
        "  PetscCall(PetscInitialize(&argc, &argv, NULL, help));\n  PetscCall(PetscMemzero(&user, sizeof user));\n"
        "  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));\n"
        "  PetscOptionsBegin(PETSC_COMM_WORLD, NULL, \"stencilc program options\", \"\");\n"
        "  PetscCall(PetscOptionsEList(\"-stn_mat_type\", \"Storage of the Jacobian\", NULL, mat_types, 2, mat_types[0], &mat_type, NULL));\n"
        "#if defined(PETSC_HAVE_CUDA)\n  device = StnCUDADevicePresent() ? 1 : 0; /* the GPU when there is one */\n#endif\n"
        "  PetscCall(PetscOptionsEList(\"-stn_device\", \"Where the residual, Jacobian and vectors live\", NULL, devices, 2, devices[device], &device, NULL));\n"
        "  PetscCall(PetscOptionsString(\"-stn_output\", \"Write the solution to this VTK file (.vts)\", NULL, path, path, sizeof path, &output));\n"
        "  PetscCall(PetscOptionsString(\"-stn_plot_solution\", \"Draw the solution to this PNG file (needs gnuplot)\", NULL, solution_png, solution_png, sizeof solution_png, &plot_solution));\n"
        "  PetscCall(PetscOptionsString(\"-stn_plot_convergence\", \"Draw the residual norms per Newton and Krylov iteration to this PNG file (needs gnuplot)\", NULL, convergence_png, convergence_png, sizeof convergence_png, &plot_convergence));\n"
        "  PetscOptionsEnd();\n\n", out);
  const Node *grid = NULL;
  for (const Node *d = m->program->list.items; d; d = d->next)
    if (d->kind == N_GRID) grid = d;
  fprintf(out, "  /* ---- the grid: %s:%d ---- */\n", P->o->stn_name, grid ? emit_line_of(P, grid) : 1);
  const char *stype = m->shape == SHAPE_BOX ? "DMDA_STENCIL_BOX" : "DMDA_STENCIL_STAR";
  if (m->dim == 1)
    fprintf(out, "  PetscCall(DMDACreate1d(PETSC_COMM_WORLD, %s, %lld, DOF, %d, NULL, &user.da));\n", bt[0],
            m->axes[0].points, m->width);
  if (m->dim == 2)
    fprintf(out, "  PetscCall(DMDACreate2d(PETSC_COMM_WORLD, %s, %s, %s, %lld, %lld, PETSC_DECIDE, PETSC_DECIDE, DOF, %d, NULL, NULL, &user.da));\n",
            bt[0], bt[1], stype, m->axes[0].points, m->axes[1].points, m->width);
  if (m->dim == 3)
    fprintf(out, "  PetscCall(DMDACreate3d(PETSC_COMM_WORLD, %s, %s, %s, %s, %lld, %lld, %lld, PETSC_DECIDE, PETSC_DECIDE, PETSC_DECIDE, DOF, %d, NULL, NULL, NULL, &user.da));\n",
            bt[0], bt[1], bt[2], stype, m->axes[0].points, m->axes[1].points, m->axes[2].points, m->width);
  fputs("  PetscCall(DMSetFromOptions(user.da));\n  PetscCall(DMSetUp(user.da));\n", out);
  fputs("  user.gpu = device == 1 ? PETSC_TRUE : PETSC_FALSE;\n"
        "#if !defined(PETSC_HAVE_CUDA)\n"
        "  PetscCheck(!user.gpu, PETSC_COMM_WORLD, PETSC_ERR_SUP, \"-stn_device gpu needs a PETSc configured with CUDA\");\n"
        "#endif\n"
        "  if (user.gpu) PetscCall(StnDMSetGPUVectors(user.da)); /* vectors, ghost exchange and solver on the GPU */\n", out);
  for (int f = 0; f < m->nfields; f++) fprintf(out, "  PetscCall(DMDASetFieldName(user.da, %d, \"%s\"));\n", f, m->fields[f].name);
  emit_grid_sizes(P, "user.da", "user.");
  for (int d = 0; d < m->dim; d++) {
    fprintf(out, "  PetscCheck(user.n%s >= %d, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE,\n"
                 "             \"-da_grid_%s %%\" PetscInt_FMT \" is too small: %s needs at least %d points in %s (2 * stencil width + 1)\", user.n%s);\n",
            axis_names[d], 2 * m->width + 1, axis_names[d], P->o->stn_name, 2 * m->width + 1, axis_names[d], axis_names[d]);
  }
  emit_spacing(P, "user.");
  fputs("  PetscCall(DMDASetUniformCoordinates(user.da", out);
  for (int d = 0; d < MAX_DIM; d++) {
    if (d < m->dim) {
      fputs(", ", out);
      emit_c_number(out, m->axes[d].lo);
      fputs(", ", out);
      emit_c_number(out, m->axes[d].hi);
    } else
      fputs(", 0.0, 0.0", out);
  }
  fputs("));\n  PetscCall(SetParameters(&user));\n\n", out);

  fputs("  /* ---- the nonlinear solver: residual, Jacobian (SG-DIA by default), options ---- */\n"
        "  PetscCall(SNESCreate(PETSC_COMM_WORLD, &snes));\n  PetscCall(SNESSetDM(snes, user.da));\n"
        "  PetscCall(SNESSetFunction(snes, NULL, FormFunction, &user));\n"
        "  if (mat_type == 1) {\n    PetscCall(DMSetMatType(user.da, user.gpu ? MATAIJCUSPARSE : MATAIJ));\n    PetscCall(DMCreateMatrix(user.da, &user.J));\n"
        "  } else {\n    PetscCall(MatCreateSGDIA(user.da, NSTENCIL, &stencil_offsets[0][0], &user.J));\n  }\n"
        "  PetscCall(SNESSetJacobian(snes, user.J, user.J, FormJacobian, &user));\n"
        "  PetscCall(SNESGetKSP(snes, &ksp));\n  PetscCall(KSPGetPC(ksp, &pc));\n"
        "  /* Defaults (-pc_type overrides them): Jacobi on the GPU, where SG-DIA serves it; on CPUs\n"
        "     PETSc's own default, ILU (block Jacobi in parallel), on an AIJ copy. */\n"
        "  PetscCall(PCSetType(pc, user.gpu ? PCJACOBI : size == 1 ? PCILU : PCBJACOBI));\n"
        "  /* On the GPU, GMRES with its Hessenberg matrix on the device (-ksp_type gmres: PETSc's). */\n"
        "  if (user.gpu) PetscCall(StnKSPSetDefault(ksp, user.da));\n"
        "#if defined(PETSC_HAVE_CUDA)\n"
        "  /* PETSc's Jacobi checks the diagonal for zeros on the host; on the GPU that would copy\n"
        "     it there and back at every Jacobian (-pc_jacobi_fixdiagonal turns it back on). */\n"
        "  if (user.gpu) PetscCall(PCJacobiSetFixDiagonal(pc, PETSC_FALSE));\n"
        "#endif\n"
        "  PetscCall(SNESSetFromOptions(snes));\n  PetscCall(SetUpJacobian(snes, &user, &P));\n\n", out);

  fputs("  /* ---- solve from the initial guess ---- */\n"
        "  PetscCall(DMCreateGlobalVector(user.da, &X));\n  PetscCall(PetscObjectSetName((PetscObject)X, \"solution\"));\n  PetscCall(FormInitialGuess(&user, X));\n"
        "#if defined(PETSC_HAVE_CUDA)\n"
        "  if (user.gpu) { /* move the guess to the GPU now, so that the solve copies nothing */\n"
        "    const PetscScalar *x;\n\n    PetscCall(VecCUDAGetArrayRead(X, &x));\n    PetscCall(VecCUDARestoreArrayRead(X, &x));\n  }\n"
        "#endif\n"
        "  if (plot_convergence) PetscCall(StnRecordConvergence(snes, &history)); /* the residual norms, for the picture */\n"
        "  PetscCall(PetscLogStageRegister(\"Solve\", &stage)); /* -log_view shows the solve on its own */\n"
        "  PetscCall(PetscLogStagePush(stage));\n"
        "  PetscCall(SNESSolve(snes, NULL, X));\n"
        "  PetscCall(PetscLogStagePop());\n"
        "  PetscCall(SNESGetConvergedReason(snes, &reason));\n", out);
  fprintf(out, "  PetscCall(StnReportSolve(snes, \"%s\")); /* iterations, or why it failed */\n", P->o->program);
  fputs("  if (output && reason > 0) {\n    PetscViewer viewer;\n\n"
        "    PetscCall(PetscViewerVTKOpen(PETSC_COMM_WORLD, path, FILE_MODE_WRITE, &viewer));\n"
        "    PetscCall(VecView(X, viewer));\n    PetscCall(PetscViewerDestroy(&viewer));\n"
        "    PetscCall(PetscPrintf(PETSC_COMM_WORLD, \"solution written to %s (open it in ParaView)\\n\", path));\n  }\n", out);
  fprintf(out, "  /* pictures, with gnuplot; a failed solve's last iterate too, where it went wrong */\n"
               "  if (plot_solution) PetscCall(StnPlotSolution(snes, X, \"%s\", solution_png));\n"
               "  if (plot_convergence) PetscCall(StnPlotConvergence(snes, history, \"%s\", convergence_png));\n\n",
          P->o->program, P->o->program);

  fputs("  /* ---- clean up ---- */\n  PetscCall(VecDestroy(&X));\n  PetscCall(MatDestroy(&P));\n"
        "  PetscCall(MatDestroy(&user.J));\n  PetscCall(SNESDestroy(&snes));\n  PetscCall(DMDestroy(&user.da));\n"
        "  PetscCall(PetscFinalize());\n  return reason > 0 ? 0 : 1;\n}\n", out);
}

void emit_program_init(Program *P, const Ir *ir, const EmitOptions *o, FILE *out) {
  const Model *m = ir->m;
  *P = (Program){ir, m, o, out, {0}, NULL, false};
  if (cname_check_table()) ice("cnames.c: the reserved table is out of order at '%s'", cname_check_table());
  const char **user = malloc(((size_t)m->nfields + (size_t)m->nparams + 1) * sizeof *user);
  char **cn = malloc(((size_t)m->nfields + (size_t)m->nparams + 1) * sizeof *cn);
  P->named = malloc(((size_t)ir->nnodes + 1) * sizeof *P->named);
  char **name = calloc((size_t)ir->nnodes + 1, sizeof *name);
  if (!user || !cn || !P->named || !name) ice("out of memory");
  for (int f = 0; f < m->nfields; f++) user[f] = m->fields[f].name;
  for (int i = 0; i < m->nparams; i++) user[m->nfields + i] = m->params[i]->param.name;
  cname_assign(user, m->nfields + m->nparams, cn);
  free(user);
  P->E = (CEmit){ir, out, cn, cn + m->nfields, "x", "user->", "user->", name, false, NULL, 0, 0, 0};
  for (int i = 0; i < m->nfields * m->nclasses; i++)
    for (int e = 0; e < ir->points[i].nentries; e++) P->any_given |= ir->points[i].entries[e].given != IR_NONE;
}

void emit_program_free(Program *P) {
  const Model *m = P->m;
  for (int i = 0; i < m->nfields + m->nparams; i++) free(P->E.field[i]);
  for (int i = 0; i < P->E.nlocals; i++) free(P->E.locals[i]);
  free(P->E.locals);
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
  point_kind(&P);
  set_parameters(&P);
  form_initial_guess(&P);
  form_function(&P);
  form_jacobian(&P);
  choose_matrices(&P);
  main_function(&P);
  emit_program_free(&P);
}
