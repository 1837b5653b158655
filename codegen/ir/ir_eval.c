/*
** ir_eval.c: evaluating the whole pool at one sample point, for checks at
** compile time (a user's Jacobian entry against the derived one). Operands
** precede their users in the pool, so one forward sweep evaluates every
** node. Field reads get pseudo-random values in [0.5, 1.5], a different
** value per (field, offset), from the sample's seed: the same seed gives
** the same values on every machine.
*/
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

void ir_eval_all(const Ir *ir, const IrSample *s, double *values) {
  for (Ref r = 0; r < ir->nnodes; r++) {
    const IrNode *n = &ir->nodes[r];
    switch (n->op) {
    case IR_CONST: values[r] = n->num; break;
    case IR_PARAM: values[r] = s->params[n->a]; break;
    case IR_GRID:  values[r] = s->grid[n->a]; break;
    case IR_FIELD: values[r] = draw(s->seed, n->a, n->b); break;
    default: {
      double a = values[n->a], b = n->b == IR_NONE ? 0 : values[n->b], c = n->c == IR_NONE ? 0 : values[n->c];
      values[r] = ir_fold(n->op, n->fn, a, b, c);
    }
    }
  }
}
