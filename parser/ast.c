/*
** ast.c: node constructors, where a node is in the source (its line, the
** end and text of its span), and the AST dump. Constructors only build; every
** check lives in the semantic pass (codegen/sema/sema.c). Each expression node
** records its nesting depth so sema can refuse absurdly deep expressions
** before any recursive pass walks them.
*/
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "ast.h"
#include "util.h"

static Node *node(Arena *a, NodeKind kind, Loc at) {
  Node *n = arena_alloc(a, sizeof *n);
  n->kind = kind;
  n->loc = at;
  n->span = at;
  n->depth = 1;
  n->builtin = -1;
  return n;
}

static int deeper(int d, const Node *x) { return x && x->depth + 1 > d ? x->depth + 1 : d; }

Node *ast_append(Node *list, Node *item) {
  if (!item) return list;
  if (!list) {
    item->last = item;
    return item;
  }
  list->last->next = item;
  list->last = item;
  return list;
}

int ast_count(const Node *list) {
  int n = 0;
  for (; list; list = list->next) n++;
  return n;
}

Node *ast_num(Arena *a, Loc at, double value, bool is_int) {
  Node *n = node(a, N_NUM, at);
  n->num.value = value;
  n->num.is_int = is_int;
  return n;
}

Node *ast_name(Arena *a, Loc at, const char *name) {
  Node *n = node(a, N_NAME, at);
  n->name.name = name;
  return n;
}

/* comps is a list of N_NUM (signed integer literals). Components far
   outside any stencil are clamped; sema reports them as out of the stencil. */
Node *ast_offset(Arena *a, Loc at, const char *name, Loc name_loc, Node *comps) {
  Node *n = node(a, N_OFFSET, at);
  n->offset.name = name;
  n->offset.name_loc = name_loc;
  n->offset.ncomp = ast_count(comps);
  n->offset.comp = arena_alloc(a, sizeof(int) * (size_t)(n->offset.ncomp ? n->offset.ncomp : 1));
  int i = 0;
  for (Node *c = comps; c; c = c->next) {
    double v = c->num.value;
    n->offset.comp[i++] = v > 1e6 ? 1000000 : v < -1e6 ? -1000000 : (int)v;
  }
  return n;
}

Node *ast_call(Arena *a, Loc at, const char *name, Node *args) {
  Node *n = node(a, N_CALL, at);
  n->call.name = name;
  n->call.args = args;
  for (Node *x = args; x; x = x->next) {
    n->call.nargs++;
    n->depth = deeper(n->depth, x);
  }
  return n;
}

Node *ast_unary(Arena *a, Loc at, Op op, Node *x) {
  Node *n = node(a, N_UNARY, at);
  n->op.op = op;
  n->op.a = x;
  n->depth = deeper(1, x);
  return n;
}

Node *ast_binary(Arena *a, Loc at, Op op, Node *x, Node *y) {
  Node *n = node(a, N_BINARY, at);
  n->op.op = op;
  n->op.a = x;
  n->op.b = y;
  n->depth = deeper(deeper(1, x), y);
  return n;
}

Node *ast_if(Arena *a, Loc at, Node *cond, Node *then, Node *otherwise) {
  Node *n = node(a, N_IF, at);
  n->op.a = cond;
  n->op.b = then;
  n->op.c = otherwise;
  n->depth = deeper(deeper(deeper(1, cond), then), otherwise);
  return n;
}

Node *ast_grid(Arena *a, Loc at, Node *axes) {
  Node *n = node(a, N_GRID, at);
  n->grid.axes = axes;
  return n;
}

static long long int_value(const Node *num) {
  double v = num->num.value;
  return v > 1e15 ? (long long)1e15 : v < -1e15 ? -(long long)1e15 : (long long)v;
}

Node *ast_axis(Arena *a, Loc at, const char *name, Node *points, Node *lo, Node *hi, bool periodic) {
  Node *n = node(a, N_AXIS, at);
  n->axis.name = name;
  n->axis.points = int_value(points);
  n->axis.points_loc = points->loc;
  n->axis.lo = lo;
  n->axis.hi = hi;
  n->axis.periodic = periodic;
  return n;
}

Node *ast_list(Arena *a, Loc at, NodeKind kind, Node *items) {
  Node *n = node(a, kind, at);
  n->list.items = items;
  return n;
}

Node *ast_field(Arena *a, Loc at, const char *name, const char *desc) {
  Node *n = node(a, N_FIELD, at);
  n->field.name = name;
  n->field.desc = desc;
  return n;
}

Node *ast_stencil(Arena *a, Loc at, Shape shape, Node *width) {
  Node *n = node(a, N_STENCIL, at);
  n->stencil.shape = shape;
  n->stencil.width = int_value(width);
  n->stencil.width_loc = width->loc;
  return n;
}

Node *ast_param(Arena *a, Loc at, const char *name, Node *type, Node *value, Node *lo, Node *hi, const char *desc) {
  Node *n = node(a, N_PARAM, at);
  n->param.name = name;
  n->param.type = type;
  n->param.value = value;
  n->param.lo = lo;
  n->param.hi = hi;
  n->param.desc = desc;
  return n;
}

Node *ast_let(Arena *a, Loc at, const char *name, Node *value) {
  Node *n = node(a, N_LET, at);
  n->let.name = name;
  n->let.value = value;
  return n;
}

Node *ast_coef(Arena *a, Loc at, const char *name, Node *value, const char *desc) {
  Node *n = node(a, N_COEF, at);
  n->coef.name = name;
  n->coef.value = value;
  n->coef.desc = desc;
  return n;
}

Node *ast_coef_source(Arena *a, Loc at, const char *name, Node *source, const char *desc) {
  Node *n = node(a, N_COEF, at);
  n->coef.name = name;
  n->coef.source = source;
  n->coef.desc = desc;
  return n;
}

Node *ast_def(Arena *a, Loc at, const char *name, Node *params, Node *body) {
  Node *n = node(a, N_DEF, at);
  n->def.name = name;
  n->def.params = params;
  n->def.nparams = ast_count(params);
  n->def.body = body;
  return n;
}

Node *ast_block(Arena *a, Loc at, BlockWhat what, const char *field, Loc field_loc, Node *items) {
  Node *n = node(a, N_BLOCK, at);
  n->block.what = what;
  n->block.field = field;
  n->block.field_loc = field_loc;
  n->block.items = items;
  return n;
}

Node *ast_mark(Node *block, Node *mark) {
  block->block.mark = mark;
  return block;
}

Node *ast_rule(Arena *a, Loc at, Node *regions, Node *body) {
  Node *n = node(a, N_RULE, at);
  n->rule.regions = regions;
  n->rule.body = body;
  return n;
}

Node *ast_entry(Arena *a, Loc at, Node *column, Node *value) {
  Node *n = node(a, N_ENTRY, at);
  n->entry.column = column;
  n->entry.value = value;
  return n;
}

Node *ast_mirror(Arena *a, Loc at, Node *fields, Node *regions) {
  Node *n = node(a, N_MIRROR, at);
  n->mirror.fields = fields;
  n->mirror.regions = regions;
  return n;
}

/* ---------------------------------------------------------------- places */

Node *ast_span(Node *n, Loc whole) {
  n->span = whole;
  return n;
}

int ast_line(const Source *src, const Node *n) { return diag_line(src, n->loc.off); }

int ast_end(const Node *n) { return n->span.off + n->span.len; }

int ast_end_line(const Source *src, const Node *n) {
  return diag_line(src, n->span.len > 0 ? ast_end(n) - 1 : n->span.off);
}

const char *ast_text(const Source *src, const Node *n, int *len) {
  *len = n->span.len;
  return src->text + n->span.off;
}

/* ---------------------------------------------------------------- text */

/* Must stay in step with enum Op. */
static const char *const op_text[] = {
  [OP_ADD] = "+", [OP_SUB] = "-", [OP_MUL] = "*", [OP_DIV] = "/", [OP_POW] = "^",
  [OP_NEG] = "-", [OP_PLUS] = "+", [OP_NOT] = "not",
  [OP_EQ] = "==", [OP_NE] = "!=", [OP_LT] = "<", [OP_LE] = "<=", [OP_GT] = ">", [OP_GE] = ">=",
  [OP_AND] = "and", [OP_OR] = "or",
};

const char *ast_op_text(Op op) {
  if ((int)op < 0 || (int)op >= COUNT_OF(op_text)) ice("bad operator %d", (int)op);
  return op_text[op];
}

const char *ast_block_keyword(BlockWhat w) {
  return w == BLOCK_RESIDUAL ? "residual" : w == BLOCK_JACOBIAN ? "jacobian" : "initial";
}

/* ---------------------------------------------------------------- dump */

typedef struct Dumper {
  FILE         *out;
  const Source *src;
} Dumper;

static void dump(Dumper *d, const Node *n, int indent);

/* The shortest of %.15g .. %.17g that reads back as the same double. */
static const char *number_text(double v, char *buf, size_t size) {
  for (int prec = 15; prec <= 17; prec++) {
    snprintf(buf, size, "%.*g", prec, v);
    if (strtod(buf, NULL) == v) break;
  }
  return buf;
}

static void head(Dumper *d, const Node *n, int indent, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* One line: indentation, the node's text, and its position. */
static void head(Dumper *d, const Node *n, int indent, const char *fmt, ...) {
  int line, col;
  diag_line_col(d->src, n->loc.off, &line, &col);
  fprintf(d->out, "%*s", 2 * indent, "");
  va_list ap;
  va_start(ap, fmt);
  vfprintf(d->out, fmt, ap);
  va_end(ap);
  fprintf(d->out, " @%d:%d\n", line, col);
}

static void dump_list(Dumper *d, const Node *list, int indent) {
  for (; list; list = list->next) dump(d, list, indent);
}

/* A labelled child: "label" on its own line, the child below it. */
static void child(Dumper *d, const char *label, const Node *n, int indent) {
  if (!n) return;
  fprintf(d->out, "%*s%s:\n", 2 * indent, "", label);
  dump(d, n, indent + 1);
}

static void dump(Dumper *d, const Node *n, int indent) {
  switch (n->kind) {
  case N_NUM: {
    char buf[32];
    head(d, n, indent, "num %s", number_text(n->num.value, buf, sizeof buf));
    break;
  }
  case N_NAME:
    head(d, n, indent, "name %s", n->name.name);
    break;
  case N_OFFSET: {
    char buf[64] = "";
    int len = 0;
    for (int i = 0; i < n->offset.ncomp && len < (int)sizeof buf - 16; i++)
      len += snprintf(buf + len, sizeof buf - (size_t)len, "%s%d", i ? "," : "", n->offset.comp[i]);
    head(d, n, indent, "offset %s[%s]", n->offset.name, buf);
    break;
  }
  case N_CALL:
    head(d, n, indent, "call %s", n->call.name);
    dump_list(d, n->call.args, indent + 1);
    break;
  case N_UNARY:
    head(d, n, indent, "unary %s", ast_op_text(n->op.op));
    dump(d, n->op.a, indent + 1);
    break;
  case N_BINARY:
    head(d, n, indent, "binary %s", ast_op_text(n->op.op));
    dump(d, n->op.a, indent + 1);
    dump(d, n->op.b, indent + 1);
    break;
  case N_IF:
    head(d, n, indent, "if");
    dump(d, n->op.a, indent + 1);
    dump(d, n->op.b, indent + 1);
    dump(d, n->op.c, indent + 1);
    break;
  case N_GRID:
    head(d, n, indent, "grid");
    dump_list(d, n->grid.axes, indent + 1);
    break;
  case N_AXIS:
    head(d, n, indent, "axis %s points=%lld%s", n->axis.name, n->axis.points,
         n->axis.periodic ? " periodic" : "");
    child(d, "from", n->axis.lo, indent + 1);
    child(d, "to", n->axis.hi, indent + 1);
    break;
  case N_FIELDS:
    head(d, n, indent, "fields");
    dump_list(d, n->list.items, indent + 1);
    break;
  case N_FIELD:
    if (n->field.desc)
      head(d, n, indent, "field %s \"%s\"", n->field.name, n->field.desc);
    else
      head(d, n, indent, "field %s", n->field.name);
    break;
  case N_STENCIL:
    head(d, n, indent, "stencil %s width=%lld", n->stencil.shape == SHAPE_STAR ? "star" : "box",
         n->stencil.width);
    break;
  case N_PARAM:
    if (n->param.desc)
      head(d, n, indent, "param %s \"%s\"", n->param.name, n->param.desc);
    else
      head(d, n, indent, "param %s", n->param.name);
    child(d, "type", n->param.type, indent + 1);
    child(d, "default", n->param.value, indent + 1);
    child(d, "min", n->param.lo, indent + 1);
    child(d, "max", n->param.hi, indent + 1);
    break;
  case N_LET:
    head(d, n, indent, "let %s", n->let.name);
    dump(d, n->let.value, indent + 1);
    break;
  case N_COEF: {
    const char *from = n->coef.source ? n->coef.source->name.name : NULL;
    if (n->coef.desc)
      head(d, n, indent, "coefficient %s%s%s \"%s\"", n->coef.name, from ? ": " : "", from ? from : "", n->coef.desc);
    else
      head(d, n, indent, "coefficient %s%s%s", n->coef.name, from ? ": " : "", from ? from : "");
    if (n->coef.value) dump(d, n->coef.value, indent + 1);
    break;
  }
  case N_DEF: {
    char buf[256] = "";
    int len = 0;
    for (const Node *p = n->def.params; p && len < (int)sizeof buf - 64; p = p->next)
      len += snprintf(buf + len, sizeof buf - (size_t)len, "%s%s", p == n->def.params ? "" : ", ",
                      p->name.name);
    head(d, n, indent, "def %s(%s)", n->def.name, buf);
    dump(d, n->def.body, indent + 1);
    break;
  }
  case N_PRECEDENCE:
    head(d, n, indent, "precedence");
    dump_list(d, n->list.items, indent + 1);
    break;
  case N_GROUP:
  case N_REGION: {
    char buf[128] = "";
    int len = 0;
    const char *sep = n->kind == N_GROUP ? ", " : " & ";
    for (const Node *p = n->list.items; p && len < (int)sizeof buf - 64; p = p->next)
      len += snprintf(buf + len, sizeof buf - (size_t)len, "%s%s", p == n->list.items ? "" : sep,
                      p->name.name);
    head(d, n, indent, "%s %s", n->kind == N_GROUP ? "group" : "region", buf);
    break;
  }
  case N_MIRROR: {
    char buf[256] = "";
    int len = 0;
    for (const Node *p = n->mirror.fields; p && len < (int)sizeof buf - 64; p = p->next)
      len += snprintf(buf + len, sizeof buf - (size_t)len, "%s%s", p == n->mirror.fields ? "" : ", ", p->name.name);
    head(d, n, indent, "mirror %s", n->mirror.fields ? buf : "(every field)");
    dump_list(d, n->mirror.regions, indent + 1);
    break;
  }
  case N_BLOCK:
    head(d, n, indent, "%s %s%s%s", ast_block_keyword(n->block.what), n->block.field, n->block.mark ? " " : "",
         n->block.mark ? n->block.mark->name.name : "");
    dump_list(d, n->block.items, indent + 1);
    break;
  case N_RULE:
    head(d, n, indent, "rule");
    dump_list(d, n->rule.regions, indent + 1);
    dump_list(d, n->rule.body, indent + 1);
    break;
  case N_ENTRY:
    head(d, n, indent, "entry");
    dump(d, n->entry.column, indent + 1);
    dump(d, n->entry.value, indent + 1);
    break;
  case N_CHOICES:
    head(d, n, indent, "choices");
    dump_list(d, n->list.items, indent + 1);
    break;
  case N_VALUES:
    head(d, n, indent, "values");
    dump_list(d, n->list.items, indent + 1);
    break;
  case N_PROGRAM:
    head(d, n, indent, "program");
    dump_list(d, n->list.items, indent + 1);
    break;
  }
}

void ast_dump(FILE *out, const Source *src, const Node *program) {
  Dumper d = {out, src};
  dump(&d, program, 0);
}
