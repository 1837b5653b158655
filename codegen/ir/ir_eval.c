/*
** ir_eval.c: evaluating the whole pool at one sample point, for checks at
** compile time (a user's Jacobian entry against the derived one). Operands
** precede their users in the pool, so one forward sweep evaluates every
** node. Field reads (and reads of coefficients from files) get pseudo-random
** values in [0.5, 1.5], a different value per (field, offset), from the
** sample's seed: the same seed gives the same values on every machine.
*/
#include <math.h>
#include <stdlib.h>

#include "ir.h"
#include "util.h"

static double draw(unsigned long long seed, int field, int offset) {
  unsigned long long h = seed * 0x9E3779B97F4A7C15ull + (unsigned long long)field * 0xBF58476D1CE4E5B9ull +
                         (unsigned long long)offset * 0x94D049BB133111EBull;
  h ^= h >> 31;
  h *= 0xD6E8FEB86659FD93ull;
  h ^= h >> 32;
  return 0.5 + (double)(h >> 11) / 9007199254740992.0;  /* 2^53 */
}

/* Node r's value from its operands' values. */
static double eval(const Ir *ir, const IrSample *s, Ref r, const double *values) {
  const IrNode *n = &ir->nodes[r];
  switch (n->op) {
  case IR_CONST: return n->num;
  case IR_PARAM: return s->params[n->a];
  case IR_GRID:  return s->grid[n->a];
  case IR_SHIFT: return 0;  /* samples check dF/du, before the shift pass */
  case IR_FIELD: return draw(s->seed, n->a, n->b);
  case IR_COEF:  return draw(s->seed, -1 - n->a, n->b);  /* a file's values: drawn apart from the fields' */
  case IR_DOT:   return draw(s->seed ^ 0x5bd1e995ull, n->a, n->b);  /* dt(u): independent of u */
  default: {
    double a = values[n->a], b = n->b == IR_NONE ? 0 : values[n->b], c = n->c == IR_NONE ? 0 : values[n->c];
    return ir_fold(n->op, n->fn, a, b, c);
  }
  }
}

void ir_eval_all(const Ir *ir, const IrSample *s, double *values) {
  for (Ref r = 0; r < ir->nnodes; r++) values[r] = eval(ir, s, r, values);
}

static int ref_cmp(const void *a, const void *b) { return *(const Ref *)a - *(const Ref *)b; }

/* Each default is evaluated through the nodes under it that no earlier default reached (their
   values are final: they read only parameters set before), in pool order, which puts operands
   first: every node at most once. */
void ir_eval_params(const Ir *ir, IrSample *s, double *values) {
  const Model *m = ir->m;
  char *seen = xcalloc((size_t)ir->nnodes + 1, 1);
  Ref *stack = xmalloc(((size_t)ir->nnodes + 1) * sizeof *stack);
  Ref *cone = xmalloc(((size_t)ir->nnodes + 1) * sizeof *cone);
  for (int i = 0; i < m->nparams; i++) {
    Ref root = ir->param_default[i];
    int top = 0, n = 0;
    if (!seen[root]) seen[root] = 1, stack[top++] = root;
    while (top > 0) {
      Ref r = stack[--top];
      cone[n++] = r;
      const IrNode *x = &ir->nodes[r];
      Ref ops[3] = {x->a, x->b, x->c};
      for (int k = 0; k < 3 && x->op > IR_FIELD; k++)
        if (ops[k] != IR_NONE && !seen[ops[k]]) seen[ops[k]] = 1, stack[top++] = ops[k];
    }
    if (n > 1) qsort(cone, (size_t)n, sizeof *cone, ref_cmp);
    for (int k = 0; k < n; k++) values[cone[k]] = eval(ir, s, cone[k], values);
    s->params[i] = s->fixed && !isnan(s->fixed[i]) ? s->fixed[i] : values[root];
  }
  free(seen);
  free(stack);
  free(cone);
  ir_eval_all(ir, s, values);
}
