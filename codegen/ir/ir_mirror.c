/*
** ir_mirror.c: the mirror pass. Lowering, differentiation and the check of
** hand-written entries see each rule as written: at a point of the left face
** the interior's formula reads u[-1,0], a column beyond the grid, and its
** derivative with respect to that read is an entry of its own. This pass
** applies the mirror declarations (sema_mirror.c) at every class of points:
**
**   - every field read u[o] under a residual or an entry becomes the read
**     sema_mirror_offset maps it to (u[-1,0] -> u[1,0] at i = 0);
**   - entries whose columns land on the same column are added: the chain
**     rule for a ghost value that is a copy of an unknown,
**     dF/du[1,0] = dF/d(read u[-1,0]) + dF/d(read u[1,0]).
**     A hand-written entry added to a derived one gives a hand-written sum
**     (what -stn_check_jacobian then checks), checked when all its given
**     parts were.
**
** Afterwards every read and every column lies inside the grid, so the
** emitters, the stencil analysis and the CUDA kernels need nothing of their
** own for mirrors. Without mirror declarations the pass changes nothing.
*/
#include <stdlib.h>
#include <string.h>

#include "ir.h"
#include "util.h"

typedef struct Mirror {
  Ir  *ir;
  int  cls;
  Ref *map;  /* node -> its mirrored node at cls, IR_NONE until built */
} Mirror;

/* r with every field read mirrored at M->cls; r itself when nothing under it changes. */
static Ref reflect(Mirror *M, Ref r) {
  if (r == IR_NONE) return r;
  if (M->map[r] != IR_NONE) return M->map[r];
  Ir *ir = M->ir;
  IrNode n = ir->nodes[r];  /* a copy: building nodes may move the pool */
  Ref out = r;
  switch (n.op) {
  case IR_CONST: case IR_PARAM: case IR_GRID: case IR_SHIFT: case IR_COEF:  /* no mirror applies to a coefficient */
  case IR_DOT:  /* dt(u) reads the point itself */
    break;
  case IR_FIELD: {
    int off[MAX_DIM], to[MAX_DIM];
    memcpy(off, ir->offsets[n.b], sizeof off);
    if (sema_mirror_offset(ir->m, n.a, M->cls, off, to))
      out = ir_node(ir, IR_FIELD, 0, n.a, ir_offset(ir, to), IR_NONE, 0);
    break;
  }
  case IR_NEG: case IR_NOT: {
    Ref a = reflect(M, n.a);
    if (a != n.a) out = ir_unary(ir, n.op, a);
    break;
  }
  case IR_SELECT: {
    Ref a = reflect(M, n.a), b = reflect(M, n.b), c = reflect(M, n.c);
    if (a != n.a || b != n.b || c != n.c) out = ir_select(ir, a, b, c);
    break;
  }
  case IR_CALL: {
    Ref a = reflect(M, n.a), b = reflect(M, n.b);
    if (a != n.a || b != n.b) out = ir_call(ir, n.fn, a, b);
    break;
  }
  default: {
    Ref a = reflect(M, n.a), b = reflect(M, n.b);
    if (a != n.a || b != n.b) out = ir_binary(ir, n.op, a, b);
    break;
  }
  }
  if (out != r && !ir->hint[out]) ir->hint[out] = ir->hint[r];
  M->map[r] = out;
  return out;
}

/* Matrix column order: by z, then y, then x, then field (as the derive pass sorts). */
static int column_cmp(const Ir *ir, const IrEntry *a, const IrEntry *b) {
  for (int d = MAX_DIM - 1; d >= 0; d--)
    if (ir->offsets[a->offset][d] != ir->offsets[b->offset][d])
      return ir->offsets[a->offset][d] < ir->offsets[b->offset][d] ? -1 : 1;
  return a->field - b->field;
}

/* The entries of p mirrored at M->cls, those on one column added, in column order. */
static void mirror_entries(Mirror *M, IrPoint *p) {
  Ir *ir = M->ir;
  int n = 0;
  IrEntry *out = xcalloc((size_t)p->nentries + 1, sizeof *out);
  for (int e = 0; e < p->nentries; e++) {
    IrEntry x = p->entries[e];
    int off[MAX_DIM], to[MAX_DIM];
    memcpy(off, ir->offsets[x.offset], sizeof off);
    if (sema_mirror_offset(ir->m, x.field, M->cls, off, to)) x.offset = ir_offset(ir, to);
    x.derived = reflect(M, x.derived);
    x.given = reflect(M, x.given);
    x.dot = reflect(M, x.dot);
    int k = 0;
    while (k < n && (out[k].field != x.field || out[k].offset != x.offset)) k++;
    if (k == n) {
      out[n++] = x;
      continue;
    }
    IrEntry *y = &out[k];  /* a second read landing on y's column: add the derivatives */
    if (y->given != IR_NONE || x.given != IR_NONE) {
      Ref gy = y->given != IR_NONE ? y->given : y->derived, gx = x.given != IR_NONE ? x.given : x.derived;
      y->checked = (y->given == IR_NONE || y->checked) && (x.given == IR_NONE || x.checked);
      if (!y->node) y->node = x.node;
      y->given = ir_binary(ir, IR_ADD, gy, gx);
    }
    y->derived = ir_binary(ir, IR_ADD, y->derived, x.derived);
  }
  int kept = 0;
  for (int e = 0; e < n; e++) {
    if (out[e].given == IR_NONE && out[e].dot == IR_NONE && ir_is_const(ir, out[e].derived, 0)) continue;  /* the two cancel */
    out[kept++] = out[e];
  }
  for (int a = 1; a < kept; a++)  /* a few entries: insertion sort */
    for (int z = a; z > 0 && column_cmp(ir, &out[z - 1], &out[z]) > 0; z--) {
      IrEntry t = out[z];
      out[z] = out[z - 1];
      out[z - 1] = t;
    }
  free(p->entries);
  p->entries = out;
  p->nentries = kept;
}

void ir_mirror(Ir *ir) {
  const Model *m = ir->m;
  bool any = false;
  for (int f = 0; f < m->nfields; f++) any = any || m->fields[f].mirror;
  if (!any) return;
  int nmap = ir->nnodes;  /* the nodes the pass starts from; it reflects only those */
  Mirror M = {ir, 0, xmalloc(((size_t)nmap + 1) * sizeof(Ref))};
  for (int c = 0; c < m->nclasses; c++) {
    if (!sema_class_exists(m, c)) continue;
    M.cls = c;
    for (int r = 0; r < nmap; r++) M.map[r] = IR_NONE;
    for (int f = 0; f < m->nfields; f++) {
      IrPoint *p = ir_point(ir, f, c);
      if (!p->residual_rule) continue;
      p->residual = reflect(&M, p->residual);
      p->rhs = reflect(&M, p->rhs);
      mirror_entries(&M, p);
    }
  }
  free(M.map);
}
