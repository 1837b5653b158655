/*
** emit_branches.c: the tests that pick each grid point's rules, as PETSc's
** tutorials write them (`if (i == 0 || j == info->my - 1) {...}`).
**
** A class of grid points is a digit per direction (0 low face, 1 inside,
** 2 high face; class = px + 3 py + 9 pz). Classes that share their rules
** form a group; the group holding the interior is the final `else`, the
** others come first, each tested by a union of products of digit sets
** (`i == 0`, `j > 0 && j < info->my - 1`). A group tested earlier is a
** "don't care" for the later tests, which is how ex19's "left and right
** win at the corners" comes out as plain `i == 0`, then `j == 0`: the
** groups are taken in the order whose tests are cheapest.
*/
#include <stdlib.h>
#include <string.h>

#include "emit_int.h"
#include "util.h"

enum { ALL_DIGITS = 7 }; /* a set of digits: bit d for digit d */

static int digit(int cls, int d) {
  for (; d > 0; d--) cls /= 3;
  return cls % 3;
}

/* The digits direction d has: 1 alone when periodic (no faces). */
static int digits_of(const Model *m, int d) { return m->axes[d].periodic ? 2 : ALL_DIGITS; }

/* A product of digit sets, one per direction. */
typedef struct {
  int set[MAX_DIM];
} Term;

static bool in_term(const Model *m, const Term *t, int cls) {
  for (int d = 0; d < m->dim; d++)
    if (!(t->set[d] >> digit(cls, d) & 1)) return false;
  return true;
}

/* Comparisons a test of set takes in direction d: none for all of them. */
static int set_cost(const Model *m, int d, int set) {
  if (set == digits_of(m, d)) return 0;
  return set == 2 || set == 5 ? 2 : 1;  /* {1}: a > and a <; {0, 2}: two == */
}

static int term_cost(const Model *m, const Term *t) {
  int c = 0;
  for (int d = 0; d < m->dim; d++) c += set_cost(m, d, t->set[d]);
  return c;
}

/* The first direction t tests: x before y before z, as the tutorials write them. */
static int lead(const Model *m, const Term *t) {
  for (int d = 0; d < m->dim; d++)
    if (t->set[d] != digits_of(m, d)) return d;
  return m->dim;
}

/* The tests of a group: the fewest-comparison cover of its classes by products that hold no
   class of a group still to come (care[c]); classes of groups already tested may be in them. */
typedef struct {
  Term term[MAX_CLASSES];
  int  nterms, cost;
} Cover;

static bool cover_group(const Model *m, const bool *mine, const bool *forbidden, Cover *cv) {
  bool left[MAX_CLASSES];
  int  nleft = 0;
  for (int c = 0; c < m->nclasses; c++) nleft += left[c] = mine[c];
  cv->nterms = cv->cost = 0;
  while (nleft > 0) {
    Term best = {{0}};
    int  best_new = 0, best_cost = 0;
    int  n = 1;
    for (int d = 0; d < m->dim; d++) n *= 8;
    for (int code = 0; code < n; code++) {
      Term t = {{0}};
      bool ok = true;
      for (int d = 0, k = code; d < m->dim; d++, k /= 8) {
        t.set[d] = k % 8 & digits_of(m, d);
        ok &= t.set[d] != 0 && t.set[d] == k % 8;
      }
      if (!ok) continue;
      int fresh = 0;
      for (int c = 0; c < m->nclasses && ok; c++) {
        if (!sema_class_exists(m, c) || !in_term(m, &t, c)) continue;
        if (forbidden[c]) ok = false;
        fresh += left[c];
      }
      int cost = term_cost(m, &t);
      if (!ok || fresh == 0) continue;
      bool better = fresh > best_new || (fresh == best_new && cost < best_cost) ||
                    (fresh == best_new && cost == best_cost && lead(m, &t) < lead(m, &best));
      if (better) best = t, best_new = fresh, best_cost = cost;
    }
    if (best_new == 0) return false;
    cv->term[cv->nterms++] = best;
    cv->cost += best_cost;
    for (int c = 0; c < m->nclasses; c++)
      if (left[c] && in_term(m, &best, c)) left[c] = false, nleft--;
  }
  return true;
}

/* `i == 0`, `i > 0 && i < info->mx - 1`: digit set `set` of direction d. */
static void set_test(const Program *P, int d, int set, FILE *out) {
  char size[32];
  const char *v = emit_index_names[d];
  snprintf(size, sizeof size, "%sm%s", P->E.grid, axis_names[d]);
  switch (set) {
  case 1: fprintf(out, "%s == 0", v); break;
  case 2: fprintf(out, "%s > 0 && %s < %s - 1", v, v, size); break;
  case 3: fprintf(out, "%s < %s - 1", v, size); break;
  case 4: fprintf(out, "%s == %s - 1", v, size); break;
  case 5: fprintf(out, "%s == 0 || %s == %s - 1", v, v, size); break;
  case 6: fprintf(out, "%s > 0", v); break;
  }
}

static void cover_test(const Program *P, const Cover *cv, FILE *out) {
  for (int t = 0; t < cv->nterms; t++) {
    const Term *term = &cv->term[t];
    int  atoms = 0;
    bool ands = false;  /* the term's text holds a && */
    for (int d = 0; d < P->m->dim; d++) {
      atoms += set_cost(P->m, d, term->set[d]) > 0;
      ands |= term->set[d] == 2;
    }
    bool wrap = cv->nterms > 1 && (atoms > 1 || ands);
    if (t) fputs(" || ", out);
    if (wrap) fputc('(', out);
    for (int d = 0, first = 1; d < P->m->dim; d++) {
      int set = term->set[d];
      if (!set_cost(P->m, d, set)) continue;
      if (!first) fputs(" && ", out);
      if (set == 5 && atoms > 1) fputc('(', out);
      set_test(P, d, set, out);
      if (set == 5 && atoms > 1) fputc(')', out);
      first = 0;
    }
    if (wrap) fputc(')', out);
  }
}

/* What a group's comment calls it: "the boundary" when it is every class but the interior,
   else its classes' names, "left & bottom, left, left & top". */
static void group_names(const Program *P, const int *group, int first, char *buf, int size) {
  int len = 0, n = 0, faces = 0, in = emit_interior_class(P->m);
  buf[0] = 0;
  for (int c = 0; c < P->m->nclasses; c++) {
    if (!sema_class_exists(P->m, c) || c == in) continue;
    faces++;
    n += group[c] == first;
  }
  if (n == faces && group[in] != first) {
    snprintf(buf, (size_t)size, "the boundary");
    return;
  }
  for (int c = 0; c < P->m->nclasses && len < size; c++) {
    if (group[c] != first) continue;
    char name[64];
    sema_class_name(P->m, c, name, sizeof name);
    len += snprintf(buf + len, (size_t)(size - len), "%s%s", len ? ", " : "", name);
  }
}

void emit_point_branches(Program *P, BlockWhat what, CaseRoots roots_of, CaseBody body, const char *indent) {
  const Model *m = P->m;
  int group[MAX_CLASSES], firsts[MAX_CLASSES], ngroups = emit_class_groups(P, what, group, firsts);
  int interior = group[emit_interior_class(m)];
  Ref *roots = xmalloc((size_t)emit_max_roots(P) * sizeof *roots);
  char inner[64], names[512];
  snprintf(inner, sizeof inner, "%s  ", indent);

  /* The order of the tests: at each step the group (not the interior's) whose cover is cheapest. */
  bool done[MAX_CLASSES] = {false};
  int  order[MAX_CLASSES], norder = 0;
  Cover covers[MAX_CLASSES];
  for (int step = 0; step < ngroups - 1; step++) {
    int best = -1;
    Cover cv;
    for (int g = 0; g < ngroups; g++) {
      int first = firsts[g];
      if (first == interior || done[g]) continue;
      bool mine[MAX_CLASSES], forbidden[MAX_CLASSES];
      for (int c = 0; c < m->nclasses; c++) {
        mine[c] = group[c] == first;
        forbidden[c] = group[c] >= 0 && !mine[c];
        for (int o = 0; o < norder; o++) forbidden[c] &= group[c] != firsts[order[o]];
      }
      if (!cover_group(m, mine, forbidden, &cv)) ice("no test for the points of class %d", first);
      if (best < 0 || cv.cost < covers[norder].cost) best = g, covers[norder] = cv;
    }
    done[best] = true;
    order[norder++] = best;
  }

  for (int o = 0; o <= norder; o++) {
    int first = o < norder ? firsts[order[o]] : interior;
    if (ngroups > 1) {
      group_names(P, group, first, names, sizeof names);
      if (o == 0) fputs(indent, P->out);
      if (o < norder) {
        fputs(o ? " else if (" : "if (", P->out);
        cover_test(P, &covers[o], P->out);
        fprintf(P->out, ") { /* %s */\n", names);
      } else
        fprintf(P->out, " else { /* %s */\n", names);
    }
    int nroots = 0;
    roots_of(P, first, roots, &nroots);
    const char *in = ngroups > 1 ? inner : indent;
    int nnamed = emit_c_temps(&P->E, roots, nroots, false, in, P->named);
    body(P, first, in);
    emit_c_forget(&P->E, P->named, nnamed);
    if (ngroups > 1) fprintf(P->out, "%s}", indent);
  }
  if (ngroups > 1) fputc('\n', P->out);
  free(roots);
}
