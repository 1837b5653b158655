/*
** sema_regions.c: which rule applies where. For every block and every
** class of grid point (see sema.h) the rule that applies is the one whose
** region fits the points most closely:
**
**   all                 fits every point                     (specificity 0)
**   interior, boundary  the points on no face / on some face (1)
**   a face, left        the points on that face              (2)
**   an edge, left & top the points on both faces             (3)
**   a corner (3D)       left & bottom & front                (4)
**
** Two different rules fitting equally well (left and bottom at their shared
** corner) are ordered by the precedence declaration; without one, that is
** an error. Then every field read is checked to stay inside the grid at
** every class where its rule applies, residual and initial blocks must
** cover every class, and each Jacobian entry must be a coupling that the
** residual actually has.
*/
#include <stdio.h>
#include <string.h>

#include "sema_int.h"

enum { NO_RANK = FACE_COUNT };
enum { WORD_INVALID = -2 };  /* a region with an error: matches nothing, duplicates nothing */

/* One region of a rule, parsed: a region word or a set of faces. */
typedef struct Region {
  int      word;   /* RegionWord, or -1 for a set of faces */
  unsigned faces;  /* bit per Face */
  Loc      at;
} Region;

typedef struct Rule {
  Node   *node;
  Region *regions;
  int     nregions;
  bool    used;    /* applies at some class */
} Rule;

int sema_class_pos(int c, int axis) {
  for (int d = 0; d < axis; d++) c /= 3;
  return c % 3;
}

bool sema_class_exists(const Model *m, int c) {
  for (int d = 0; d < m->dim; d++)
    if (m->axes[d].periodic && sema_class_pos(c, d) != 1) return false;
  return true;
}

static unsigned class_faces(const Model *m, int c) {
  unsigned faces = 0;
  for (int d = 0; d < m->dim; d++) {
    int pos = sema_class_pos(c, d);
    if (pos == 0) faces |= 1u << (2 * d);
    if (pos == 2) faces |= 1u << (2 * d + 1);
  }
  return faces;
}

static void faces_text(unsigned faces, char *buf, int size) {
  int len = 0;
  buf[0] = '\0';
  for (int f = 0; f < FACE_COUNT && len < size - 16; f++)
    if (faces & (1u << f)) len += snprintf(buf + len, (size_t)(size - len), "%s%s", len ? " & " : "", face_names[f]);
}

void sema_class_name(const Model *m, int c, char *buf, int size) {
  unsigned faces = class_faces(m, c);
  if (!faces)
    snprintf(buf, (size_t)size, "interior");
  else
    faces_text(faces, buf, size);
}

/* "the interior points" or "the points on left & top", for messages. */
static void where(const Model *m, int c, char *buf, int size) {
  char name[40];
  sema_class_name(m, c, name, sizeof name);
  if (class_faces(m, c))
    snprintf(buf, (size_t)size, "the points on %s", name);
  else
    snprintf(buf, (size_t)size, "the interior points");
}

const char *sema_face_list(const Model *m) {
  return m->dim == 1 ? "left, right" : m->dim == 2 ? "left, right, bottom, top" : "left, right, bottom, top, front, back";
}

/* A face (or, with words, a region word) close to a misspelt name, or NULL. */
const char *sema_near_face(const Model *m, const char *name, bool words) {
  const char *best = NULL;
  int best_d = 3;
  for (int f = 0; f < 2 * m->dim; f++) {
    int d = sema_distance(name, face_names[f]);
    if (d < best_d) { best = face_names[f]; best_d = d; }
  }
  for (int w = 0; words && w < RW_COUNT; w++) {
    int d = sema_distance(name, region_words[w]);
    if (d < best_d) { best = region_words[w]; best_d = d; }
  }
  return best;
}

/* Parses the regions of a rule; false when one of them is not valid here. */
static bool parse_regions(Sema *s, Rule *r) {
  const Model *m = s->m;
  bool ok = true;
  r->nregions = ast_count(r->node->rule.regions);
  r->regions = arena_alloc(s->a, sizeof *r->regions * (size_t)r->nregions);
  int i = 0;
  for (Node *reg = r->node->rule.regions; reg; reg = reg->next, i++) {
    Region *out = &r->regions[i];
    out->word = -1;
    out->at = reg->loc;
    int before = s->d->nerr;
    Node *first = reg->list.items;
    int word = region_word_lookup(first->name.name);
    if (word >= 0) {
      out->word = word;
      if (first->next) {
        diag_error(s->d, first->next->loc, "'%s' cannot be combined with '&'", first->name.name);
        diag_hint(s->d, "'&' intersects faces, as in 'left & top'");
        out->word = WORD_INVALID;
        ok = false;
      }
      continue;
    }
    for (Node *f = first; f; f = f->next) {
      int face = face_lookup(f->name.name);
      if (face < 0) {
        if (region_word_lookup(f->name.name) >= 0)
          diag_error(s->d, f->loc, "'%s' cannot be combined with '&'", f->name.name);
        else {
          diag_error(s->d, f->loc, "'%s' is not a region", f->name.name);
          const char *near = sema_near_face(m, f->name.name, true);
          if (near)
            diag_hint(s->d, "did you mean '%s'?", near);
          else
            diag_hint(s->d, "regions are interior, boundary, all, and the faces %s", sema_face_list(m));
        }
        ok = false;
        continue;
      }
      int axis = face / 2;
      if (axis >= m->dim) {
        diag_error(s->d, f->loc, "there is no '%s' face in a %dD grid", f->name.name, m->dim);
        ok = false;
      } else if (m->axes[axis].periodic) {
        diag_error(s->d, f->loc, "%s is periodic: it has no '%s' face", axis_names[axis], f->name.name);
        ok = false;
      } else if (out->faces & (1u << face)) {
        diag_error(s->d, f->loc, "'%s' appears twice in this region", f->name.name);
        ok = false;
      } else if (out->faces & (3u << (2 * axis))) {
        diag_error(s->d, f->loc, "'%s' and '%s' never meet: they are opposite faces", face_names[face ^ 1],
                   f->name.name);
        ok = false;
      }
      out->faces |= 1u << face;
    }
    if (s->d->nerr != before) out->word = WORD_INVALID;
  }
  return ok;
}

static bool same_region(const Region *a, const Region *b) {
  return a->word != WORD_INVALID && a->word == b->word && a->faces == b->faces;
}

/* How closely region g fits class c: -1 when it does not contain it. */
static int fit(const Region *g, unsigned faces) {
  if (g->word == RW_ALL) return 0;
  if (g->word == RW_INTERIOR) return faces ? -1 : 1;
  if (g->word == RW_BOUNDARY) return faces ? 1 : -1;
  if ((g->faces & faces) != g->faces) return -1;
  return 1 + __builtin_popcount(g->faces);
}

/* The best fit of a rule at a class, and the precedence rank of that fit. */
static int rule_fit(const Model *m, const Rule *r, unsigned faces, int *rank, int *which) {
  int best = -1;
  *rank = NO_RANK;
  *which = 0;
  for (int i = 0; i < r->nregions; i++) {
    int q = fit(&r->regions[i], faces);
    if (q < best || q < 0) continue;
    int rk = NO_RANK;
    for (int f = 0; f < FACE_COUNT; f++)
      if ((r->regions[i].faces & (1u << f)) && m->face_rank[f] < rk) rk = m->face_rank[f];
    if (q > best || rk < *rank) {
      *rank = rk;
      *which = i;
    }
    best = q;
  }
  return best;
}

static const char *what_name(BlockWhat w) {
  return w == BLOCK_RESIDUAL ? "residual" : w == BLOCK_JACOBIAN ? "jacobian" : "initial guess";
}

static void region_text(Sema *s, const Rule *r, int which, char *buf, int size) {
  const Loc at = r->regions[which].at;
  snprintf(buf, (size_t)size, "%.*s", at.len < 60 ? at.len : 60, s->d->src->text + at.off);
}

/* The hint for two regions a and b tied at class c (named `name`): a precedence that breaks the
   tie, in the language's syntax. A region's rank is that of its best-ranked face, so ordering a
   face only a has before a face only b has breaks it, unless a face both share is ranked already
   (it then ranks both). Precedence lists faces, so the hint names faces, never "left & bottom";
   and as the declaration may be given once, an existing one is to be changed, not repeated. The
   class's own rule is always an answer. */
static void tie_hint(Sema *s, const Region *a, const Region *b, int c, const char *name) {
  const Model   *m = s->m;
  const unsigned only_a = a->faces & ~b->faces, only_b = b->faces & ~a->faces, shared = a->faces & b->faces;
  char           own[64];
  bool           declared = false, shared_ranked = false;

  sema_class_name(m, c, own, sizeof own);
  for (int f = 0; f < FACE_COUNT; f++) {
    declared = declared || m->face_rank[f] != NO_RANK;
    shared_ranked = shared_ranked || ((shared & (1u << f)) && m->face_rank[f] != NO_RANK);
  }
  if (a->word != -1 || b->word != -1 || !only_a || !only_b || shared_ranked)
    diag_hint(s->d, "give %s a rule of its own, e.g. '%s: ...;'", name, own);
  else if (!declared)
    diag_hint(s->d, "say which one wins with a precedence declaration, e.g. 'precedence %s > %s;', or give %s a "
                    "rule of its own ('%s: ...;')", face_names[__builtin_ctz(only_a)], face_names[__builtin_ctz(only_b)], name, own);
  else
    diag_hint(s->d, "say which one wins in the precedence declaration: put '%s' in a group before '%s'; or give %s a "
                    "rule of its own ('%s: ...;')", face_names[__builtin_ctz(only_a)], face_names[__builtin_ctz(only_b)], name, own);
}

/* Whether some point of the grid is in one of r's regions (a rule that fits no point at all never
   applies for that reason, not because other rules fit better). */
static bool rule_has_points(const Model *m, const Rule *r) {
  for (int c = 0; c < m->nclasses; c++) {
    int rank, which;
    if (sema_class_exists(m, c) && rule_fit(m, r, class_faces(m, c), &rank, &which) >= 0) return true;
  }
  return false;
}

static bool all_periodic(const Model *m) {
  for (int d = 0; d < m->dim; d++)
    if (!m->axes[d].periodic) return false;
  return m->dim > 0;
}

/* Picks the rule of each class for one block; reports overlaps, gaps and rules that never apply. */
static void assign(Sema *s, Node *block, Rule *rules, int nrules, const Node **winner) {
  const Model *m = s->m;
  bool reported_tie = false;
  char missing[512] = "";
  int nmissing = 0, mlen = 0;
  for (int c = 0; c < m->nclasses; c++) {
    winner[c] = NULL;
    if (!sema_class_exists(m, c)) continue;
    unsigned faces = class_faces(m, c);
    int best = -1, best_fit = -1, best_rank = NO_RANK, tie = -1, best_which = 0, tie_which = 0;
    for (int i = 0; i < nrules; i++) {
      int rank, which, q = rule_fit(m, &rules[i], faces, &rank, &which);
      if (q < 0) continue;
      if (q > best_fit || (q == best_fit && rank < best_rank)) {
        best = i;
        best_fit = q;
        best_rank = rank;
        best_which = which;
        tie = -1;
      } else if (q == best_fit && rank == best_rank) {
        tie = i;
        tie_which = which;
      }
    }
    if (best < 0) {
      char name[64];
      sema_class_name(m, c, name, sizeof name);
      if (!faces) snprintf(name, sizeof name, "the interior");
      if (mlen < (int)sizeof missing - 80)
        mlen += snprintf(missing + mlen, sizeof missing - (size_t)mlen, "%s%s", nmissing ? ", " : "", name);
      nmissing++;
      continue;
    }
    if (tie >= 0 && !reported_tie) {
      char name[64], a[64], b[64];
      where(m, c, name, sizeof name);
      region_text(s, &rules[best], best_which, a, sizeof a);
      region_text(s, &rules[tie], tie_which, b, sizeof b);
      diag_error(s->d, rules[tie].regions[tie_which].at,
                 "at %s both the rule for '%s' and the rule for '%s' (line %d) apply", name, b, a,
                 diag_line(s->d->src, rules[best].regions[best_which].at.off));
      tie_hint(s, &rules[best].regions[best_which], &rules[tie].regions[tie_which], c, name);
      reported_tie = true;
    }
    winner[c] = rules[best].node;
    rules[best].used = true;
  }
  if (nrules == 0) {
    diag_error(s->d, block->block.field_loc, "the %s of '%s' has no rules", what_name(block->block.what),
               block->block.field);
    diag_hint(s->d, "give it at least one rule, e.g. 'all: ...;'");
  } else if (nmissing && block->block.what != BLOCK_JACOBIAN) {
    diag_error(s->d, block->block.field_loc, "the %s of '%s' has no rule for %s", what_name(block->block.what),
               block->block.field, missing);
    diag_hint(s->d, "add a rule for %s, or one for 'boundary' or 'all'", nmissing == 1 ? missing : "them");
  }
  for (int i = 0; i < nrules; i++)
    if (!rules[i].used && !reported_tie) {
      if (rule_has_points(m, &rules[i]))
        diag_warning(s->d, rules[i].regions[0].at, "this rule never applies: other rules fit all of its points better");
      else if (all_periodic(m))
        diag_warning(s->d, rules[i].regions[0].at, "this rule never applies: the grid is periodic in every direction, so it has no boundary points");
      else
        diag_warning(s->d, rules[i].regions[0].at, "this rule never applies: no point of the grid is in its region");
    }
}

static bool inside(const Model *m, int c, const int *off, int *bad_axis) {
  for (int d = 0; d < m->dim; d++) {
    if (m->axes[d].periodic) continue;
    int pos = sema_class_pos(c, d), o = off[d];
    if ((pos == 0 && o < 0) || (pos == 2 && o > 0) || (pos == 1 && (o > 1 || o < -1))) {
      *bad_axis = d;
      return false;
    }
  }
  return true;
}

/* A coefficient's read beyond the grid: a coefficient has values at the grid's points only, and
   no mirror. */
static void coef_outside_error(Sema *s, const Read *rd, int c, int axis, const Node *rule) {
  const Model *m = s->m;
  char name[64];
  where(m, c, name, sizeof name);
  const char *coef = m->coefs[rd->field]->coef.name;
  if (sema_class_pos(c, axis) == 1)
    diag_error(s->d, rd->at, "this read of coefficient '%s' can fall outside the grid: points next to the boundary "
               "have only one neighbour towards it in %s", coef, axis_names[axis]);
  else
    diag_error(s->d, rd->at, "this read of coefficient '%s' lies outside the grid at %s, where the rule at line %d "
               "applies", coef, name, ast_line(s->d->src, rule));
  if (m->coefs[rd->field]->coef.source)
    diag_hint(s->d, "a coefficient has values at the grid's points only (its file has one per point); read it "
                    "towards the inside");
  else
    diag_hint(s->d, "a coefficient has values at the grid's points only; read it towards the inside, or give the "
                    "value outside by its expression in a let");
}

static void outside_error(Sema *s, const Read *rd, int c, int axis, const Node *rule) {
  const Model *m = s->m;
  const Field *f = &m->fields[rd->field];
  char name[64];
  where(m, c, name, sizeof name);
  int pos = sema_class_pos(c, axis);
  int toward = 2 * axis + (rd->off[axis] > 0);  /* the face the read reaches towards */
  if (pos == 1 && (f->mirror & (1u << toward))) {
    diag_error(s->d, rd->at, "this read can fall outside the grid: points next to the %s face have only one "
               "neighbour towards it, and the mirror across '%s' serves only reads from the face itself",
               face_names[toward], face_names[toward]);
    diag_hint(s->d, "points next to a face follow the rules for inside points, which reach at most 1 point in a "
                    "non-periodic direction, mirrored or not");
  } else if (pos == 1) {
    diag_error(s->d, rd->at, "this read can fall outside the grid: points next to the boundary have only one "
               "neighbour towards it in %s", axis_names[axis]);
    diag_hint(s->d, "in a non-periodic direction, rules for inside points reach at most 1 point; wider reads need "
                    "a periodic direction");
  } else {
    const char *face = face_names[2 * axis + (pos == 2)];
    diag_error(s->d, rd->at, "this read lies outside the grid at %s, where the rule at line %d applies", name,
               ast_line(s->d->src, rule));
    diag_hint(s->d, "on the %s face there is no neighbour in that direction; the rule there may read only towards "
                    "the inside, or, for a zero-flux condition, mirror '%s' across it ('mirror %s: %s;')",
              face, f->name, f->name, face);
  }
}

/* Every read of the rule that applies at each class must stay inside the grid, once the read
   field's mirrors are applied (sema_mirror_offset). */
static void check_reads(Sema *s, const Node **winner) {
  const Model *m = s->m;
  /* Faces before edges before corners, so a message names the simplest place. */
  for (int k = 0; k < m->nclasses * (MAX_DIM + 1); k++) {
    int c = k % m->nclasses;
    if (__builtin_popcount(class_faces(m, c)) != k / m->nclasses) continue;
    const Node *rule = winner[c];
    if (!rule) continue;
    ReadSet *rs = &s->rule_reads[rule->index];
    for (int i = 0; i < rs->n; i++) {
      int axis, off[MAX_DIM];
      if (rs->v[i].coef) {
        if (inside(m, c, rs->v[i].off, &axis) || rs->v[i].reported) continue;
        coef_outside_error(s, &rs->v[i], c, axis, rule);
        rs->v[i].reported = true;
        continue;
      }
      unsigned mirrors = sema_mirror_offset(m, rs->v[i].field, c, rs->v[i].off, off);
      if (inside(m, c, off, &axis)) {
        s->mirror_used[rs->v[i].field] |= mirrors;
        continue;
      }
      if (rs->v[i].reported) continue;
      if (s->mirror_error && sema_class_pos(c, axis) != 1) continue;  /* a broken mirror may have been meant for it */
      outside_error(s, &rs->v[i], c, axis, rule);
      rs->v[i].reported = true;  /* report each read once */
    }
  }
}

static bool reads_has(const ReadSet *rs, int field, const int *off) {
  for (int i = 0; i < rs->n; i++)
    if (!rs->v[i].coef && rs->v[i].field == field && memcmp(rs->v[i].off, off, sizeof rs->v[i].off) == 0) return true;
  return false;
}

static void column_offset(const Node *col, int *off) {
  for (int d = 0; d < MAX_DIM; d++) off[d] = 0;
  if (col->kind == N_OFFSET)
    for (int d = 0; d < col->offset.ncomp && d < MAX_DIM; d++) off[d] = col->offset.comp[d];
}

/* A Jacobian entry must be a coupling the residual has wherever the entry applies. Its column is
   the residual's read as written (u[-1,0] at the left face, beside u[1,0]): the derivative with
   respect to that read; a mirror then adds it onto the column the read lands on (ir_mirror.c). */
static void check_entries(Sema *s, const Field *f) {
  const Model *m = s->m;
  for (int k = 0; k < m->nclasses * (MAX_DIM + 1); k++) {
    int c = k % m->nclasses;
    if (__builtin_popcount(class_faces(m, c)) != k / m->nclasses) continue;
    const Node *jr = f->jacobian_rule[c], *rr = f->residual_rule[c];
    if (!jr) continue;
    for (Node *e = jr->rule.body; e; e = e->next) {
      const Node *col = e->entry.column;
      if (!col->decl || e->index) continue;  /* index marks an entry already reported */
      int off[MAX_DIM], mirrored[MAX_DIM], axis;
      column_offset(col, off);
      sema_mirror_offset(m, col->decl->index, c, off, mirrored);
      char name[64];
      where(m, c, name, sizeof name);
      if (!inside(m, c, mirrored, &axis)) {
        diag_error(s->d, col->loc, "this entry's column lies outside the grid at %s, where this Jacobian rule "
                   "applies", name);
        diag_hint(s->d, "on the %s face there is no neighbour in that direction", face_names[2 * axis + (sema_class_pos(c, axis) == 2)]);
        e->index = 1;
      } else if (rr && !reads_has(&s->rule_reads[rr->index], col->decl->index, off)) {
        diag_error(s->d, col->loc, "the residual of '%s' at %s (line %d) does not read this; the Jacobian has no "
                   "such entry", f->name, name, ast_line(s->d->src, rr));
        diag_hint(s->d, "an entry is d(residual)/d(field at offset); remove it or fix its column");
        e->index = 1;
      }
    }
  }
}

static void duplicate_entries(Sema *s, const Node *rule) {
  for (Node *e = rule->rule.body; e; e = e->next) {
    if (!e->entry.column->decl) continue;
    int a[MAX_DIM];
    column_offset(e->entry.column, a);
    for (Node *p = rule->rule.body; p != e; p = p->next) {
      int b[MAX_DIM];
      column_offset(p->entry.column, b);
      if (p->entry.column->decl == e->entry.column->decl && memcmp(a, b, sizeof a) == 0) {
        diag_error(s->d, e->entry.column->loc, "this entry is given twice in the same rule");
        diag_note(s->d, p->entry.column->loc, "the first one is here");
        break;
      }
    }
  }
}

/* Parses a block's rules and checks that no region is given two rules. */
static int collect(Sema *s, Node *block, Rule **out, bool *ok) {
  int n = 0;
  for (Node *it = block->block.items; it; it = it->next) n += it->kind == N_RULE;
  Rule *rules = arena_alloc(s->a, sizeof *rules * (size_t)(n ? n : 1));
  int i = 0;
  *ok = true;
  for (Node *it = block->block.items; it; it = it->next) {
    if (it->kind != N_RULE) continue;
    rules[i].node = it;
    if (!parse_regions(s, &rules[i])) *ok = false;
    for (int g = 0; g < rules[i].nregions; g++) {
      for (int j = 0; j <= i; j++) {
        int limit = j == i ? g : rules[j].nregions;
        for (int h = 0; h < limit; h++) {
          if (!same_region(&rules[i].regions[g], &rules[j].regions[h])) continue;
          diag_error(s->d, rules[i].regions[g].at, "this region already has a rule in this block");
          diag_note(s->d, rules[j].regions[h].at, "the first rule for it is here");
          *ok = false;
          goto next_region;
        }
      }
    next_region:;
    }
    i++;
  }
  *out = rules;
  return n;
}

void sema_regions(Sema *s) {
  Model *m = s->m;
  m->nclasses = 1;
  for (int d = 0; d < m->dim; d++) m->nclasses *= 3;
  for (int fi = 0; fi < m->nfields; fi++) {
    Field *f = &m->fields[fi];
    if (f->duplicate_block) continue;  /* its rules are split over two blocks: coverage would mislead */
    Node *blocks[3] = {(Node *)f->residual, (Node *)f->initial, (Node *)f->jacobian};
    const Node **winners[3] = {f->residual_rule, f->initial_rule, f->jacobian_rule};
    for (int b = 0; b < 3; b++) {
      if (!blocks[b]) continue;
      Rule *rules;
      bool ok;
      int n = collect(s, blocks[b], &rules, &ok);
      if (!ok) continue;
      assign(s, blocks[b], rules, n, winners[b]);
      check_reads(s, winners[b]);
      if (b == 2)
        for (int i = 0; i < n; i++) duplicate_entries(s, rules[i].node);
    }
    if (f->jacobian) check_entries(s, f);
  }
}
