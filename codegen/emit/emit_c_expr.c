/*
** emit_c_expr.c: IR expressions as C text, and the named temporaries that
** make common subexpressions visible. An expression prints with the fewest
** parentheses C's precedence allows, but never regroups: (a + b) + c and
** a + (b + c) stay as written, so the C computes what the .stn says, in
** the same order, to the last bit.
**
** A node gets a name (`const PetscScalar vxp = ...;`) when it is used
** more than once in its scope or when it came from a `let` (whose name it
** then takes). Nodes that are the same at every grid point get their
** names once per function, before the loop over points; the others once
** per kind of point. The same text serves the CUDA emitter later.
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cnames.h"
#include "emit_c.h"
#include "util.h"

/* C operator precedence, smaller binds tighter. */
enum { P_PRIMARY = 0, P_UNARY = 2, P_MUL = 3, P_ADD = 4, P_REL = 6, P_EQ = 7, P_AND = 11, P_OR = 12, P_COND = 13 };

static int precedence(const IrNode *n) {
  switch (n->op) {
  case IR_CONST: return n->num < 0 ? P_UNARY : P_PRIMARY;
  case IR_GRID:  return builtin_values[n->a].pointwise || (n->a >= BV_NX && n->a <= BV_NZ) ? P_UNARY : P_PRIMARY;  /* casts */
  case IR_NEG: case IR_NOT: return P_UNARY;
  case IR_MUL: case IR_DIV: return P_MUL;
  case IR_ADD: case IR_SUB: return P_ADD;
  case IR_LT: case IR_LE: case IR_GT: case IR_GE: return P_REL;
  case IR_EQ: case IR_NE: return P_EQ;
  case IR_AND: return P_AND;
  case IR_OR: return P_OR;
  case IR_SELECT: return P_COND;
  default: return P_PRIMARY;
  }
}

static const char *c_operator(IrOp op) {
  switch (op) {
  case IR_ADD: return "+";
  case IR_SUB: return "-";
  case IR_MUL: return "*";
  case IR_DIV: return "/";
  case IR_EQ:  return "==";
  case IR_NE:  return "!=";
  case IR_LT:  return "<";
  case IR_LE:  return "<=";
  case IR_GT:  return ">";
  case IR_GE:  return ">=";
  case IR_AND: return "&&";
  case IR_OR:  return "||";
  default:     ice("no C operator for op %d", (int)op);
  }
}

static const char *c_function(int fn) {
  static const char *const names[BF_COUNT] = {
    [BF_ABS] = "fabs", [BF_MIN] = "fmin", [BF_MAX] = "fmax", [BF_EXP] = "exp", [BF_LOG] = "log",
    [BF_POW] = "pow", [BF_SQRT] = "sqrt", [BF_SIN] = "sin", [BF_COS] = "cos", [BF_TAN] = "tan",
    [BF_ASIN] = "asin", [BF_ACOS] = "acos", [BF_ATAN] = "atan", [BF_ATAN2] = "atan2", [BF_SINH] = "sinh",
    [BF_COSH] = "cosh", [BF_TANH] = "tanh", [BF_FLOOR] = "floor", [BF_CEIL] = "ceil", [BF_MOD] = "StnMod",
  };
  return names[fn];
}

void emit_c_mod_function(const Ir *ir, FILE *out, bool cuda) {
  bool used = false;
  for (int r = 0; r < ir->nnodes && !used; r++) used = ir->nodes[r].op == IR_CALL && ir->nodes[r].fn == BF_MOD;
  if (!used) return;
  const char *real = cuda ? "double" : "PetscReal";
  /* The same computation as ir_mod, which folds mod on constants at compile time. */
  fprintf(out, "/* mod(a, b) of the .stn: a - b*floor(a/b), the remainder with the sign of b. fmod is exact\n"
               "   and has the sign of a; adding b moves it to b's sign (NaN for b = 0, as a/0). */\n"
               "%sstatic inline %s StnMod(%s a, %s b)\n{\n"
               "  const %s r = fmod(a, b);\n"
               "  return r != 0 && (r < 0) != (b < 0) ? r + b : r;\n}\n\n",
          cuda ? "__device__ " : "", real, real, real, real);
}

void emit_c_number(FILE *out, double v) {
  if (isinf(v)) {
    fputs(v > 0 ? "PETSC_INFINITY" : "PETSC_NINFINITY", out);
    return;
  }
  if (v == STN_PI) {
    fputs("PETSC_PI", out);
    return;
  }
  /* The shortest text that reads back as the same double. */
  char buf[40];
  for (int digits = 1; digits <= 17; digits++) {
    snprintf(buf, sizeof buf, "%.*g", digits, v);
    if (strtod(buf, NULL) == v) break;
  }
  fputs(buf, out);
  if (!strpbrk(buf, ".en")) fputs(".0", out);
}

static void index_text(FILE *out, const char *var, int off) {
  if (off == 0) fputs(var, out);
  else fprintf(out, "%s %c %d", var, off < 0 ? '-' : '+', abs(off));
}

/* The indices of a read at offset off: [IX(i + 1, j)] on the device (flat arrays, IX is the
   ghosted index), [j][i + 1] in C. */
static void read_indices(CEmit *E, const int *off) {
  static const char *const vars[MAX_DIM] = {"i", "j", "k"};
  if (E->cuda) {
    fputs("[IX(", E->out);
    for (int d = 0; d < E->ir->m->dim; d++) {
      if (d) fputs(", ", E->out);
      index_text(E->out, vars[d], off[d]);
    }
    fputs(")]", E->out);
    return;
  }
  for (int d = E->ir->m->dim - 1; d >= 0; d--) {
    fputc('[', E->out);
    index_text(E->out, vars[d], off[d]);
    fputc(']', E->out);
  }
}

static void field_read(CEmit *E, const IrNode *n) {
  fputs(E->array, E->out);
  read_indices(E, E->ir->offsets[n->b]);
  fprintf(E->out, ".%s", E->field[n->a]);
}

/* A coefficient read from a file: its ghosted local array, k[j][i + 1] in C (the function's
   local), user.k[IX(i + 1, j)] in CUDA (the array on the device, in the kernel's AppCtx). */
static void coef_read(CEmit *E, const IrNode *n) {
  if (E->cuda) fprintf(E->out, "%s%s", E->params, E->coef[n->a]);
  else fputs(E->coef_array[n->a], E->out);
  read_indices(E, E->ir->offsets[n->b]);
}

/* A grid size: the DMDA's, info->mx in C and info.mx in CUDA. */
static void grid_size(CEmit *E, int bv) {
  fprintf(E->out, "%sm%c", E->grid, builtin_values[bv].name[1]);
}

static void grid_value(CEmit *E, int bv) {
  const char *real = E->cuda ? "(double)" : "(PetscReal)";
  if (bv <= BV_K) fprintf(E->out, "%s%s", real, builtin_values[bv].name);
  else if (bv >= BV_NX && bv <= BV_NZ) {
    fputs(real, E->out);
    grid_size(E, bv);
  } else fputs(builtin_values[bv].name, E->out);  /* the spacing: a local of the function */
}

/* Whether r is an integer computed from grid indices, sizes and small integer constants (with
   +, - and *), which C then computes in int: `i - 1 == 0` rather than `(PetscReal)i - 1.0 == 0.0`.
   Both give the same truth value, since doubles hold these integers exactly. */
static bool integer_valued(const CEmit *E, Ref r) {
  const IrNode *n = &E->ir->nodes[r];
  if (E->name[r]) return false;
  switch (n->op) {
  case IR_CONST: return n->num == floor(n->num) && fabs(n->num) < 1e6;
  case IR_GRID: return n->a <= BV_K || (n->a >= BV_NX && n->a <= BV_NZ);
  case IR_NEG: return integer_valued(E, n->a);
  case IR_ADD: case IR_SUB: case IR_MUL: return integer_valued(E, n->a) && integer_valued(E, n->b);
  default: return false;
  }
}

static bool comparison(IrOp op) { return op >= IR_EQ && op <= IR_GE; }

/* An integer_valued expression as int C, with the fewest parentheses. */
static void integer_expr(CEmit *E, Ref r, int context) {
  const IrNode *n = &E->ir->nodes[r];
  int p = n->op == IR_CONST ? (n->num < 0 ? P_UNARY : P_PRIMARY) : n->op == IR_GRID ? P_PRIMARY : precedence(n);
  bool wrap = p > context;
  if (wrap) fputc('(', E->out);
  switch (n->op) {
  case IR_CONST: fprintf(E->out, "%d", (int)n->num); break;
  case IR_GRID:
    if (n->a <= BV_K) fputs(builtin_values[n->a].name, E->out);
    else grid_size(E, n->a);
    break;
  case IR_NEG:
    fputc('-', E->out);
    integer_expr(E, n->a, P_UNARY);
    break;
  default:
    integer_expr(E, n->a, p);
    fprintf(E->out, " %s ", c_operator(n->op));
    integer_expr(E, n->b, p - 1);
  }
  if (wrap) fputc(')', E->out);
}

static void expr(CEmit *E, Ref r, int context);

static void operand(CEmit *E, Ref r, int context) {
  if (E->name[r]) {
    fputs(E->name[r], E->out);
    return;
  }
  bool wrap = precedence(&E->ir->nodes[r]) > context;
  if (wrap) fputc('(', E->out);
  expr(E, r, P_COND);
  if (wrap) fputc(')', E->out);
}

static void expr(CEmit *E, Ref r, int context) {
  const IrNode *n = &E->ir->nodes[r];
  FILE *out = E->out;
  if (E->name[r] && context != -1) {
    fputs(E->name[r], out);
    return;
  }
  switch (n->op) {
  case IR_CONST: emit_c_number(out, n->num); break;
  case IR_PARAM: fprintf(out, "%s%s", E->params, E->param[n->a]); break;
  case IR_GRID:  grid_value(E, n->a); break;
  case IR_SHIFT: fputs("shift", out); break;  /* the IJacobian's argument */
  case IR_FIELD: field_read(E, n); break;
  case IR_COEF:  coef_read(E, n); break;
  case IR_DOT: {  /* dt(u): the same read in the time derivative's array */
    if (E->cuda) {  /* the kernels get it at the owned points only (dt is read at the point itself) */
      fprintf(out, "%s[p].%s", E->dot_array, E->field[n->a]);
      break;
    }
    const char *array = E->array;
    E->array = E->dot_array;
    field_read(E, n);
    E->array = array;
    break;
  }
  case IR_NEG:
    fputc('-', out);
    operand(E, n->a, P_UNARY);
    break;
  case IR_NOT:
    fputc('!', out);
    operand(E, n->a, P_UNARY);
    break;
  case IR_POW:
    fputs("pow(", out);
    operand(E, n->a, P_COND);
    fputs(", ", out);
    operand(E, n->b, P_COND);
    fputc(')', out);
    break;
  case IR_SELECT:
    operand(E, n->a, P_OR);
    fputs(" ? ", out);
    operand(E, n->b, P_COND);
    fputs(" : ", out);
    operand(E, n->c, P_COND);
    break;
  case IR_CALL:
    fprintf(out, "%s(", c_function(n->fn));
    operand(E, n->a, P_COND);
    if (n->b != IR_NONE) {
      fputs(", ", out);
      operand(E, n->b, P_COND);
    }
    fputc(')', out);
    break;
  default: {  /* binary operators, grouping to the left */
    int p = precedence(n);
    if (comparison(n->op) && integer_valued(E, n->a) && integer_valued(E, n->b)) {
      integer_expr(E, n->a, p);
      fprintf(out, " %s ", c_operator(n->op));
      integer_expr(E, n->b, p - 1);
      break;
    }
    operand(E, n->a, p);
    fprintf(out, " %s ", c_operator(n->op));
    operand(E, n->b, p - 1);
  }
  }
}

void emit_c_expr(CEmit *E, Ref r) { operand(E, r, P_COND); }

/* The terms of the additive chain at r, ((a + b) - c) + d: a, then b, c, d with their signs. */
static int additive_terms(const CEmit *E, Ref r, Ref *terms, IrOp *ops, int max) {
  int n = 0;
  while (n < max - 1 && !E->name[r] && (E->ir->nodes[r].op == IR_ADD || E->ir->nodes[r].op == IR_SUB)) {
    ops[n] = E->ir->nodes[r].op;
    terms[n++] = E->ir->nodes[r].b;
    r = E->ir->nodes[r].a;
  }
  ops[n] = IR_ADD;
  terms[n++] = r;
  for (int i = 0, j = n - 1; i < j; i++, j--) {  /* in the order written */
    Ref t = terms[i];
    terms[i] = terms[j], terms[j] = t;
    IrOp o = ops[i];
    ops[i] = ops[j], ops[j] = o;
  }
  return n;
}

void emit_c_expr_at(CEmit *E, Ref r, int column) {
  enum { WIDTH = 110, MAX_TERMS = 64 };
  if (!E->scratch) {
    E->scratch = xcalloc(1, sizeof *E->scratch);
    E->scratch->f = open_memstream(&E->scratch->text, &E->scratch->len);
    if (!E->scratch->f) ice("out of memory");
  }
  CScratch *s = E->scratch;
  FILE *out = E->out;
  rewind(s->f);  /* the text is s->text[0, len): no NUL after it when it is shorter than the last */
  E->out = s->f;
  emit_c_expr(E, r);
  if (fflush(s->f) != 0) ice("out of memory");
  E->out = out;
  size_t len = s->len;
  Ref   terms[MAX_TERMS];
  IrOp  ops[MAX_TERMS];
  int   n = column + (int)len > WIDTH ? additive_terms(E, r, terms, ops, MAX_TERMS) : 1;
  if (n < 2) {
    fwrite(s->text, 1, len, out);
    return;
  }
  operand(E, terms[0], P_ADD);  /* a long sum: one term per line, the signs under the '=' */
  for (int i = 1; i < n; i++) {
    fprintf(out, "\n%*s%s ", column > 2 ? column - 2 : 0, "", ops[i] == IR_SUB ? "-" : "+");
    operand(E, terms[i], P_ADD - 1);
  }
}

/* ---- names for temporaries ---- */

/* A name the generated code uses itself, or C's and PETSc's. */
static bool name_reserved(const char *s) {
  static const char *const fixed[] = {
    "info", "x", "f", "user", "i", "j", "k", "v", "a", "p", "J", "X", "F", "s", "r", "c",
    "nrows", "sgdia", "kind", "ierr", "da", "snes", "ctx", "IX", "n", "threads", "P", "rows", "app",
    "kernels", "reason", "ptr", "w", "nb", "Jw", "W", "NB",
  };
  for (int i = 0; i < COUNT_OF(fixed); i++)
    if (strcmp(fixed[i], s) == 0) return true;
  return cname_reserved(s);
}

/* The names of the current function (E->locals): an open-addressing table, a power of two in size
   and at most half full, of every name new_local gave out (taken) and of every stem it numbered
   (next: the first suffix not yet tried; every smaller one is taken). Names are only added within
   a function, so a new name costs the same however many temporaries share a hint. */
static unsigned hash_name(const char *s) {
  unsigned h = 2166136261u;  /* FNV-1a */
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 16777619u;
  return h;
}

/* s's slot: the one holding s, or the empty one where it would go. */
static LocalName *local_slot(const CEmit *E, const char *s) {
  unsigned mask = (unsigned)E->caplocals - 1;
  for (unsigned h = hash_name(s) & mask;; h = (h + 1) & mask)
    if (!E->locals[h].s || strcmp(E->locals[h].s, s) == 0) return &E->locals[h];
}

static LocalName *local_add(CEmit *E, const char *s) {
  if (2 * (E->nlocals + 1) > E->caplocals) {
    LocalName *old = E->locals;
    int oldcap = E->caplocals;
    E->caplocals = oldcap ? 2 * oldcap : 64;
    E->locals = xcalloc((size_t)E->caplocals, sizeof *E->locals);
    for (int i = 0; i < oldcap; i++)
      if (old[i].s) *local_slot(E, old[i].s) = old[i];
    free(old);
  }
  LocalName *l = local_slot(E, s);
  if (!l->s) {
    *l = (LocalName){xstrdup(s), false, 2};
    E->nlocals++;
  }
  return l;
}

static bool local_taken(const CEmit *E, const char *s) {
  if (E->caplocals && local_slot(E, s)->taken) return true;
  return name_reserved(s);
}

static const char *new_local(CEmit *E, const char *hint) {
  char buf[256];
  if (hint && (hint[0] == '_' || strstr(hint, "__"))) hint = NULL;  /* reserved in C whatever follows */
  if (hint && strlen(hint) < 200) {  /* hint (hint_ where C or we have it), then _2, _3, ... */
    char stem[224];
    snprintf(stem, sizeof stem, name_reserved(hint) ? "%s_" : "%s", hint);
    snprintf(buf, sizeof buf, "%s", stem);
    if (local_taken(E, buf)) {
      const char *numbered = stem[strlen(stem) - 1] == '_' ? "%s%d" : "%s_%d";  /* never a "__" */
      LocalName *st = local_add(E, stem);
      int k = st->next;
      for (;; k++) {
        snprintf(buf, sizeof buf, numbered, stem, k);
        if (!local_taken(E, buf)) break;
      }
      st->next = k + 1;  /* before local_add below, which may move st */
    }
  } else {
    do snprintf(buf, sizeof buf, "t%d", E->ntemps++);
    while (local_taken(E, buf));
  }
  LocalName *l = local_add(E, buf);
  l->taken = true;
  return l->s;
}

const char *emit_c_local(CEmit *E, const char *hint) { return new_local(E, hint); }

static void locals_clear(CEmit *E) {
  for (int i = 0; i < E->caplocals; i++) free(E->locals[i].s);
  free(E->locals);
  E->locals = NULL;
  E->nlocals = E->caplocals = 0;
}

void emit_c_free(CEmit *E) {
  locals_clear(E);
  if (E->scratch) {
    fclose(E->scratch->f);
    free(E->scratch->text);
    free(E->scratch);
    E->scratch = NULL;
  }
}

static bool leaf(const IrNode *n) { return n->op <= IR_FIELD; }

/* Whether r prints as one name or number: a leaf or a named temporary. */
static bool atomic(const CEmit *E, Ref r) { return leaf(&E->ir->nodes[r]) || E->name[r]; }

/* One negation, sum, difference or product of atomic operands (-hxdhy, 2.0 * x[j][i].u): text
   as short as a temporary's name, so it is written out where used rather than named. */
static bool cheap(const CEmit *E, const IrNode *n) {
  switch (n->op) {
  case IR_NEG: return atomic(E, n->a);
  case IR_ADD: case IR_SUB: case IR_MUL: return atomic(E, n->a) && atomic(E, n->b);
  default: return false;
  }
}

/* Counts, for the nodes under roots that belong to this scope, how many
   distinct nodes (or roots) use each one. */
static void count_uses(const CEmit *E, Ref r, bool uniform, int *uses, char *seen) {
  if (seen[r]) return;
  seen[r] = 1;
  const IrNode *n = &E->ir->nodes[r];
  if (leaf(n)) return;
  if (!uniform && n->uniform) return;  /* named at function level */
  Ref ops[3] = {n->a, n->b, n->c};
  for (int i = 0; i < 3; i++) {
    if (ops[i] == IR_NONE) continue;
    uses[ops[i]]++;
    count_uses(E, ops[i], uniform, uses, seen);
  }
}

int emit_c_temps(CEmit *E, const Ref *roots, int nroots, bool uniform, const char *indent, Ref *named) {
  const Ir *ir = E->ir;
  int *uses = xcalloc((size_t)ir->nnodes, sizeof *uses);
  char *seen = xcalloc((size_t)ir->nnodes, 1);
  for (int i = 0; i < nroots; i++)
    if (roots[i] != IR_NONE) {
      uses[roots[i]]++;
      count_uses(E, roots[i], uniform, uses, seen);
    }
  int count = 0;
  for (Ref r = 0; r < ir->nnodes; r++) {
    const IrNode *n = &ir->nodes[r];
    if (!seen[r] || leaf(n) || n->uniform != uniform || E->name[r]) continue;
    if ((uses[r] < 2 || cheap(E, n)) && !ir->hint[r]) continue;
    char *name = (char *)new_local(E, ir->hint[r]);
    int column = fprintf(E->out, "%sconst %s %s = ", indent, E->cuda ? "double" : "PetscScalar", name);
    emit_c_expr_at(E, r, column);  /* before r has its name, so that it is printed whole */
    E->name[r] = name;
    fputs(";\n", E->out);
    named[count++] = r;
  }
  free(uses);
  free(seen);
  return count;
}

void emit_c_forget(CEmit *E, const Ref *named, int n) {
  for (int i = 0; i < n; i++) E->name[named[i]] = NULL;
}

void emit_c_function_begin(CEmit *E) {
  locals_clear(E);
  E->ntemps = 0;
  memset(E->name, 0, (size_t)E->ir->nnodes * sizeof *E->name);
}

void emit_c_grid_uses(const CEmit *E, const Ref *roots, int nroots, bool used[BV_COUNT], bool *coefs) {
  const Ir *ir = E->ir;
  char *seen = xcalloc((size_t)ir->nnodes, 1);
  Ref *stack = xmalloc(((size_t)ir->nnodes * 3 + (size_t)nroots + 1) * sizeof *stack);
  int top = 0;
  for (int i = 0; i < BV_COUNT; i++) used[i] = false;
  for (int i = 0; coefs && i < ir->m->ncoefs; i++) coefs[i] = false;
  for (int i = 0; i < nroots; i++)
    if (roots[i] != IR_NONE) stack[top++] = roots[i];
  while (top > 0) {
    Ref r = stack[--top];
    if (seen[r]) continue;
    seen[r] = 1;
    const IrNode *n = &ir->nodes[r];
    if (n->op == IR_GRID) used[n->a] = true;
    if (n->op == IR_COEF && coefs) coefs[n->a] = true;
    if (leaf(n)) continue;
    Ref ops[3] = {n->a, n->b, n->c};
    for (int k = 0; k < 3; k++)
      if (ops[k] != IR_NONE && !seen[ops[k]]) stack[top++] = ops[k];
  }
  free(seen);
  free(stack);
}

int emit_c_flops(const CEmit *E, const Ref *roots, int nroots) {
  const Ir *ir = E->ir;
  char *seen = xcalloc((size_t)ir->nnodes, 1);
  int *uses = xcalloc((size_t)ir->nnodes, sizeof *uses);
  for (int i = 0; i < nroots; i++)
    if (roots[i] != IR_NONE) count_uses(E, roots[i], false, uses, seen);
  int flops = 0;
  for (Ref r = 0; r < ir->nnodes; r++)
    if (seen[r] && !leaf(&ir->nodes[r]) && !ir->nodes[r].uniform) flops++;
  free(seen);
  free(uses);
  return flops;
}
