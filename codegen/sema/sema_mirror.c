/*
** sema_mirror.c: mirror declarations, `mirror u, v: left, right;`. A field
** mirrored across a face has, beyond that face, the mirror image of its
** values inside: at a point of the left face (i = 0) the read u[-a,b] is
** u[a,b]. So the interior's formula holds on the face with a zero normal
** derivative (Neumann, zero flux, a symmetry plane), and where two mirrored
** faces meet each direction is reflected on its own.
**
** This file reads the declarations into Field.mirror (a bit per Face) and
** owns the one mapping every later phase applies to a read, so that sema's
** checks, the IR and the emitters agree on what is read where:
** sema_mirror_offset. sema_regions.c checks reads and Jacobian columns after
** the mapping and records which mirrors were used.
**
** Invariant: a mirror changes only components that cross the face of a
** class's own point (pos 0 with a negative offset, pos 2 with a positive
** one); an inside point's reads are never changed, so the interior's
** equation and everything derived from it are the same with or without
** mirrors.
*/
#include <string.h>

#include "sema_int.h"

unsigned sema_mirror_offset(const Model *m, int field, int c, const int *off, int *out) {
  unsigned used = 0;
  for (int d = 0; d < MAX_DIM; d++) out[d] = off[d];
  if (field < 0 || field >= m->nfields) return 0;
  unsigned mirror = m->fields[field].mirror;
  for (int d = 0; d < m->dim; d++) {
    int pos = sema_class_pos(c, d);
    int face = pos == 0 && off[d] < 0 ? 2 * d : pos == 2 && off[d] > 0 ? 2 * d + 1 : -1;
    if (face < 0 || !(mirror & (1u << face))) continue;
    out[d] = -off[d];
    used |= 1u << face;
  }
  return used;
}

/* The faces a region of a mirror declaration names: `boundary` (every face the grid has) or one
   face. 0 after an error, which is reported here. */
static unsigned region_faces(Sema *s, const Node *reg) {
  const Model *m = s->m;
  const Node *first = reg->list.items;
  int word = region_word_lookup(first->name.name);
  if (first->next) {  /* left & top */
    const Node *second = first->next;
    if (word >= 0 || region_word_lookup(second->name.name) >= 0) {
      diag_error(s->d, second->loc, "'%s' cannot be combined with '&'", word >= 0 ? first->name.name : second->name.name);
      diag_hint(s->d, "a mirror takes faces, or 'boundary' for every face");
    } else {
      diag_error(s->d, second->loc, "a mirror is across one face: '%s & %s' is where two faces meet",
                 first->name.name, second->name.name);
      diag_hint(s->d, "write '%s, %s': where two mirrored faces meet, both directions are mirrored", first->name.name,
                second->name.name);
    }
    return 0;
  }
  if (word == RW_BOUNDARY) {
    unsigned faces = 0;
    for (int d = 0; d < m->dim; d++)
      if (!m->axes[d].periodic) faces |= 3u << (2 * d);
    if (!faces) {
      diag_error(s->d, first->loc, "the grid is periodic in every direction: it has no boundary to mirror across");
      diag_hint(s->d, "remove the mirror declaration: a periodic direction wraps around");
    }
    return faces;
  }
  if (word >= 0) {
    diag_error(s->d, first->loc, "a mirror is across faces; '%s' is not a face", first->name.name);
    diag_hint(s->d, "name the faces (%s), or 'boundary' for all of them", sema_face_list(m));
    return 0;
  }
  int face = face_lookup(first->name.name);
  if (face < 0) {
    diag_error(s->d, first->loc, "'%s' is not a face", first->name.name);
    const char *near = sema_near_face(m, first->name.name, false);
    if (near) diag_hint(s->d, "did you mean '%s'?", near);
    else diag_hint(s->d, "a mirror is across the faces %s, or 'boundary' for all of them", sema_face_list(m));
    return 0;
  }
  int axis = face / 2;
  if (axis >= m->dim) {
    diag_error(s->d, first->loc, "there is no '%s' face in a %dD grid", first->name.name, m->dim);
    diag_hint(s->d, "the faces are %s", sema_face_list(m));
    return 0;
  }
  if (m->axes[axis].periodic) {
    diag_error(s->d, first->loc, "%s is periodic: it has no '%s' face to mirror across", axis_names[axis],
               first->name.name);
    diag_hint(s->d, "in a periodic direction the neighbour past the last point is the first one; mirror only "
                    "faces of non-periodic directions ('boundary' names just those)");
    return 0;
  }
  return 1u << face;
}

/* The fields a mirror declaration names, as a mask over m->fields (every field when it names
   none); false after an error. */
static bool mirror_fields(Sema *s, const Node *decl, bool *which) {
  const Model *m = s->m;
  bool ok = true;
  for (int f = 0; f < m->nfields; f++) which[f] = decl->mirror.fields == NULL;
  for (const Node *n = decl->mirror.fields; n; n = n->next) {
    const char *name = n->name.name;
    const Node *d = scope_find(&s->global, name);
    if (!d || d->kind != N_FIELD) {
      int bv = builtin_value_lookup(name);
      if (d)
        diag_error(s->d, n->loc, "'%s' is %s; a mirror is for a field", name, sema_kind_name(d));
      else if (bv >= 0)
        diag_error(s->d, n->loc, "'%s' is a built-in value (the %s), not a field", name, builtin_values[bv].doc);
      else {
        diag_error(s->d, n->loc, "'%s' is not a field", name);
        const char *near = NULL;
        int best = 3;
        for (int f = 0; f < m->nfields; f++) {
          int dist = sema_distance(name, m->fields[f].name);
          if (dist < best) best = dist, near = m->fields[f].name;
        }
        if (near) diag_hint(s->d, "did you mean '%s'?", near);
        else diag_hint(s->d, "a mirror names fields declared by 'fields'; without names it is for every field");
      }
      ok = false;
      continue;
    }
    if (which[d->index]) {
      diag_error(s->d, n->loc, "'%s' is named twice in this mirror", name);
      ok = false;
    }
    which[d->index] = true;
  }
  return ok;
}

/* Reads one declaration into the fields' mirror masks. After an error in it, s->mirror_error
   is set: the reads it was meant to serve are then not reported as leaving the grid. */
static void mirror_decl(Sema *s, const Node *decl) {
  Model *m = s->m;
  int before = s->d->nerr;
  bool *which = arena_alloc(s->a, sizeof *which * (size_t)(m->nfields + 1));
  bool fields_ok = mirror_fields(s, decl, which);
  for (const Node *reg = decl->mirror.regions; reg; reg = reg->next) {
    unsigned faces = region_faces(s, reg);
    if (!fields_ok) continue;
    for (int f = 0; f < m->nfields; f++) {
      Field *fd = &m->fields[f];
      if (!which[f]) continue;
      for (int face = 0; face < FACE_COUNT; face++) {
        if (!(faces & (1u << face))) continue;
        if (fd->mirror & (1u << face)) {  /* reported once per field and region */
          diag_error(s->d, reg->loc, "'%s' is mirrored across '%s' twice", fd->name, face_names[face]);
          diag_note(s->d, fd->mirror_at[face]->loc, "the first mirror across it is here");
          diag_hint(s->d, "name each face once for each field");
          faces &= (1u << face) - 1;
          continue;
        }
        fd->mirror |= 1u << face;
        fd->mirror_at[face] = reg;
      }
    }
  }
  if (s->d->nerr != before) s->mirror_error = true;
}

void sema_mirrors(Sema *s) {
  for (const Node *x = s->m->program->list.items; x; x = x->next)
    if (x->kind == N_MIRROR) mirror_decl(s, x);
}

/* A region of a mirror declaration none of whose (field, face) pairs a rule uses: nothing
   reads beyond those faces, so it changes nothing (the face rules read inwards). */
void sema_mirror_unused(Sema *s) {
  const Model *m = s->m;
  for (const Node *x = m->program->list.items; x; x = x->next) {
    if (x->kind != N_MIRROR) continue;
    for (const Node *reg = x->mirror.regions; reg; reg = reg->next) {
      bool declared = false, used = false;
      for (int f = 0; f < m->nfields; f++)
        for (int face = 0; face < FACE_COUNT; face++) {
          if (m->fields[f].mirror_at[face] != reg) continue;
          declared = true;
          used = used || (s->mirror_used[f] & (1u << face));
        }
      if (!declared || used) continue;
      const Node *first = reg->list.items;
      if (region_word_lookup(first->name.name) == RW_BOUNDARY)
        diag_warning(s->d, reg->loc, "this mirror is never used: no rule reads a mirrored field beyond a face");
      else
        diag_warning(s->d, reg->loc, "this mirror is never used: no rule reads a mirrored field beyond '%s'",
                     first->name.name);
      diag_hint(s->d, "the rules that apply at the face read only inside the grid; remove the mirror, or let "
                      "the interior's rule apply there ('all: ...;')");
    }
  }
}
