/*
** explain_svg.c: the picture of stencilc --explain-svg FILE, after Figure
** 3.1 of the SG-DIA paper, for a small grid (the .stn's own when it is
** small, else 8 / 4 x 4 / 3 x 3 x 3 points):
**
**   (a) the grid, points numbered as the matrix rows are, with the stencil
**       overlaid on a point near the middle, each neighbour in the colour
**       of its block diagonal;
**   (b) the Jacobian's sparsity pattern, N x N, one square per entry the
**       generated program assembles at that point (the IR's entries for
**       the point's kind), coloured by block diagonal;
**   (c) the SG-DIA storage: k*d columns of N values, the same entries in
**       their slots, padding grey, the block diagonals' offsets on top.
**
** Nonzero squares are <rect class="nz"> in (b) and <rect class="sg"> in
** (c), so a test can count them. The SVG is plain text written by hand.
*/
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "explain.h"
#include "strutil.h"
#include "util.h"

int explain_block(const Ir *ir, int offset) {
  for (int s = 0; s < ir->nstencil; s++)
    if (ir->stencil[s] == offset) return s;
  return -1;
}

/* The class of the point idx on a grid of n points per direction. */
static int class_of(const Model *m, const long long n[MAX_DIM], const long long idx[MAX_DIM]) {
  int c = 0, scale = 1;
  for (int d = 0; d < m->dim; d++) {
    int pos = m->axes[d].periodic ? 1 : idx[d] == 0 ? 0 : idx[d] == n[d] - 1 ? 2 : 1;
    c += pos * scale;
    scale *= 3;
  }
  return c;
}

bool explain_small_grid(const Model *m, long long n[MAX_DIM]) {
  double points = 1;
  for (int d = 0; d < m->dim; d++) points *= (double)m->axes[d].points;
  static const int fallback[MAX_DIM + 1] = {0, 8, 4, 3};
  bool own = points <= EXPLAIN_SMALL_POINTS;
  for (int d = 0; d < MAX_DIM; d++) {
    if (d >= m->dim) n[d] = 1;
    else if (own) n[d] = m->axes[d].points;
    else n[d] = fallback[m->dim] > 2 * m->width + 1 ? fallback[m->dim] : 2 * m->width + 1;
  }
  return own;
}

/* ---- colours ---- */

static void colour(int s, int k, char buf[8]) {
  static const char *const palette[] = {
    "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
    "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#8cd17d",
  };
  if (k <= COUNT_OF(palette)) {
    memcpy(buf, palette[s], 8);
    return;
  }
  /* Hues spread by the golden angle, two lightnesses alternating. */
  double h = fmod(s * 137.508, 360.0) / 60.0, l = s % 2 ? 0.62 : 0.45, sat = 0.65;
  double c = (1 - fabs(2 * l - 1)) * sat, x = c * (1 - fabs(fmod(h, 2.0) - 1)), mm = l - c / 2;
  double rgb[3] = {0, 0, 0};
  int sector = (int)h % 6;
  static const int order[6][3] = {{0, 1, 2}, {1, 0, 2}, {2, 0, 1}, {2, 1, 0}, {1, 2, 0}, {0, 2, 1}};
  double v[3] = {c, x, 0};
  for (int i = 0; i < 3; i++) rgb[i] = v[order[sector][i]];
  snprintf(buf, 8, "#%02x%02x%02x", (int)lround((rgb[0] + mm) * 255), (int)lround((rgb[1] + mm) * 255),
           (int)lround((rgb[2] + mm) * 255));
}

/* Text for XML: &, <, >, " and ' escaped. */
static void xml_text(FILE *out, const char *s) {
  for (; *s; s++) {
    switch (*s) {
    case '&': fputs("&amp;", out); break;
    case '<': fputs("&lt;", out); break;
    case '>': fputs("&gt;", out); break;
    case '"': fputs("&quot;", out); break;
    case '\'': fputs("&apos;", out); break;
    default: fputc(*s, out);
    }
  }
}

/* ---- the small grid's matrix ---- */

typedef struct Pic {
  const Ir    *ir;
  const Model *m;
  long long    n[MAX_DIM];
  int          npoints, dof, N, k;
  int          ctr[MAX_DIM];  /* the point the stencil is drawn on */
} Pic;

static void point_index(const Pic *P, int p, long long idx[MAX_DIM]) {
  for (int d = 0; d < MAX_DIM; d++) {
    idx[d] = p % P->n[d];
    p /= (int)P->n[d];
  }
}

/* The point at idx + o, or -1 outside the grid (a periodic direction wraps). */
static int neighbour(const Pic *P, const long long idx[MAX_DIM], const int *o) {
  int q = 0, stride = 1;
  for (int d = 0; d < MAX_DIM; d++) {
    long long v = idx[d] + (d < P->m->dim ? o[d] : 0);
    if (d < P->m->dim && P->m->axes[d].periodic) v = ((v % P->n[d]) + P->n[d]) % P->n[d];
    if (v < 0 || v >= P->n[d]) return -1;
    q += (int)v * stride;
    stride *= (int)P->n[d];
  }
  return q;
}

/* Calls fn for every entry of row (p, f): its column and block diagonal;
   an entry that lands on a column already seen (a tiny periodic grid) once. */
typedef void (*EntryFn)(void *ctx, int row, int col, int s, int q, int g);

static void for_entries(const Pic *P, EntryFn fn, void *ctx) {
  int *seen = xmalloc(((size_t)P->k * P->dof + 1) * sizeof *seen);
  for (int p = 0; p < P->npoints; p++) {
    long long idx[MAX_DIM];
    point_index(P, p, idx);
    int cls = class_of(P->m, P->n, idx);
    for (int f = 0; f < P->dof; f++) {
      const IrPoint *pt = ir_point(P->ir, f, cls);
      int nseen = 0;
      for (int e = 0; e < pt->nentries; e++) {
        const IrEntry *x = &pt->entries[e];
        int q = neighbour(P, idx, P->ir->offsets[x->offset]);
        if (q < 0) continue;
        int col = q * P->dof + x->field, dup = 0;
        for (int i = 0; i < nseen; i++) dup |= seen[i] == col;
        if (dup) continue;
        seen[nseen++] = col;
        fn(ctx, p * P->dof + f, col, explain_block(P->ir, x->offset), q, x->field);
      }
    }
  }
  free(seen);
}

typedef struct Draw {
  FILE *out;
  const Pic *P;
  double x0, y0, cs, cw;  /* cell height and width */
} Draw;

static void draw_nz(void *ctx, int row, int col, int s, int q, int g) {
  Draw *D = ctx;
  char c[8];
  colour(s, D->P->k, c);
  fprintf(D->out, "<rect class=\"nz\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"/>\n",
          D->x0 + col * D->cs, D->y0 + row * D->cs, D->cs, D->cs, c);
}

static void draw_sg(void *ctx, int row, int col, int s, int q, int g) {
  Draw *D = ctx;
  char c[8];
  colour(s, D->P->k, c);
  int slot = s * D->P->dof + g;
  fprintf(D->out, "<rect class=\"sg\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"/>\n",
          D->x0 + slot * D->cw, D->y0 + row * D->cs, D->cw, D->cs, c);
}

/* ---- the three panels ---- */

enum { SPACING = 40, RADIUS = 12, PLANE_GAP = 36, MARGIN = 24, TOP = 70, GAP = 56 };

static double grid_width(const Pic *P) {
  double w = (double)(P->n[0] - 1) * SPACING + 2 * RADIUS;
  if (P->m->dim == 3) w = w * (double)P->n[2] + PLANE_GAP * (double)(P->n[2] - 1);
  return w;
}

static double grid_height(const Pic *P) { return (double)(P->n[1] - 1) * SPACING + 2 * RADIUS; }

/* The centre of point idx in panel (a); y grows upwards on the page. */
static void point_xy(const Pic *P, double x0, double y0, const long long idx[MAX_DIM], double *x, double *y) {
  double plane = (double)(P->n[0] - 1) * SPACING + 2 * RADIUS + PLANE_GAP;
  *x = x0 + RADIUS + (double)idx[0] * SPACING + (P->m->dim == 3 ? (double)idx[2] * plane : 0);
  *y = y0 + RADIUS + (double)(P->n[1] - 1 - idx[1]) * SPACING;
}

static void panel_grid(FILE *out, const Pic *P, double x0, double y0) {
  const Model *m = P->m;
  int c = 0;
  long long cidx[MAX_DIM];
  for (int d = 0; d < MAX_DIM; d++) cidx[d] = P->ctr[d];
  c = neighbour(P, cidx, (const int[MAX_DIM]){0, 0, 0});
  /* Which block diagonal colours each point (the centre's neighbours). */
  int *block = xmalloc((size_t)P->npoints * sizeof *block);
  for (int p = 0; p < P->npoints; p++) block[p] = -1;
  for (int s = 0; s < P->k; s++) {
    const int *o = P->ir->offsets[P->ir->stencil[s]];
    long long idx[MAX_DIM];
    bool inside = true;
    for (int d = 0; d < MAX_DIM; d++) {
      idx[d] = cidx[d] + (d < m->dim ? o[d] : 0);
      inside &= idx[d] >= 0 && idx[d] < P->n[d];
    }
    if (inside) block[neighbour(P, idx, (const int[MAX_DIM]){0, 0, 0})] = s;
  }
  if (m->dim == 3)
    for (long long z = 0; z < P->n[2]; z++) {
      long long idx[MAX_DIM] = {0, P->n[1] - 1, z};
      double x, y;
      point_xy(P, x0, y0, idx, &x, &y);
      fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" class=\"small\">k = %lld</text>\n", x - RADIUS, y - RADIUS - 6, z);
    }
  /* Grid lines within each plane, then the stencil's arms, then the points. */
  for (int p = 0; p < P->npoints; p++) {
    long long idx[MAX_DIM];
    double x, y, x2, y2;
    point_index(P, p, idx);
    point_xy(P, x0, y0, idx, &x, &y);
    for (int d = 0; d < 2 && d < m->dim; d++) {
      if (idx[d] + 1 >= P->n[d]) continue;
      long long j[MAX_DIM] = {idx[0], idx[1], idx[2]};
      j[d]++;
      point_xy(P, x0, y0, j, &x2, &y2);
      fprintf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#cccccc\"/>\n", x, y, x2, y2);
    }
  }
  double cx, cy;
  point_xy(P, x0, y0, cidx, &cx, &cy);
  for (int p = 0; p < P->npoints; p++) {
    long long idx[MAX_DIM];
    point_index(P, p, idx);
    if (block[p] < 0 || p == c || (m->dim == 3 && idx[2] != cidx[2])) continue;
    double x, y;
    point_xy(P, x0, y0, idx, &x, &y);
    fprintf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#333333\" stroke-width=\"2.5\"/>\n",
            cx, cy, x, y);
  }
  for (int p = 0; p < P->npoints; p++) {
    long long idx[MAX_DIM];
    double x, y;
    char col[8] = "#ffffff";
    point_index(P, p, idx);
    point_xy(P, x0, y0, idx, &x, &y);
    if (block[p] >= 0) colour(block[p], P->k, col);
    fprintf(out, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"%d\" fill=\"%s\" stroke=\"#333333\"%s/>\n", x, y, RADIUS, col,
            p == c ? " stroke-width=\"3\"" : "");
    fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" class=\"num\">%d</text>\n", x, y + 4, p);
  }
  free(block);
}

static void panel_matrix(FILE *out, const Pic *P, double x0, double y0, double cs) {
  double size = P->N * cs;
  fprintf(out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"#ffffff\" stroke=\"none\"/>\n", x0, y0,
          size, size);
  /* One thin line per point (every d rows and columns) under the entries. */
  for (int p = 1; p < P->npoints; p++) {
    double t = p * P->dof * cs;
    fprintf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" class=\"pt\"/>\n", x0 + t, y0, x0 + t, y0 + size);
    fprintf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" class=\"pt\"/>\n", x0, y0 + t, x0 + size, y0 + t);
  }
  Draw D = {out, P, x0, y0, cs, cs};
  for_entries(P, draw_nz, &D);
  fprintf(out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" stroke=\"#333333\"/>\n", x0, y0,
          size, size);
  /* Point numbers along the top and the left, where there is room. */
  double block = P->dof * cs;
  int every = block >= 14 ? 1 : (int)ceil(14 / block);
  for (int p = 0; p < P->npoints; p += every) {
    double t = (p + 0.5) * block;
    fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" class=\"small\" text-anchor=\"middle\">%d</text>\n", x0 + t, y0 - 4, p);
    fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" class=\"small\" text-anchor=\"end\">%d</text>\n", x0 - 4, y0 + t + 3, p);
  }
}

static void panel_sgdia(FILE *out, const Pic *P, double x0, double y0, double cs, double cw) {
  double w = P->k * P->dof * cw, h = P->N * cs;
  fprintf(out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"#e8e8e8\"/>\n", x0, y0, w, h);
  Draw D = {out, P, x0, y0, cs, cw};
  for_entries(P, draw_sg, &D);
  for (int c = 1; c < P->k * P->dof; c++) {
    double t = x0 + c * cw;
    fprintf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" class=\"%s\"/>\n", t, y0, t, y0 + h,
            c % P->dof ? "sep" : "blk");
  }
  for (int p = 1; p < P->npoints; p++) {
    double t = y0 + p * P->dof * cs;
    fprintf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" class=\"sep\"/>\n", x0, t, x0 + w, t);
  }
  fprintf(out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" stroke=\"#333333\"/>\n", x0, y0, w, h);
  /* The offsets (in points, for this grid) over the block columns. */
  for (int s = 0; s < P->k; s++) {
    const int *o = P->ir->offsets[P->ir->stencil[s]];
    long long off = 0, stride = 1;
    for (int d = 0; d < P->m->dim; d++) {
      off += o[d] * stride;
      stride *= P->n[d];
    }
    double t = x0 + (s + 0.5) * P->dof * cw;
    if (P->dof * cw >= 22)
      fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" class=\"small\" text-anchor=\"middle\">%lld</text>\n", t, y0 - 5, off);
    else
      fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" class=\"small\" transform=\"rotate(-90 %.1f %.1f)\">%lld</text>\n", t + 3,
              y0 - 4, t + 3, y0 - 4, off);
  }
}

bool explain_svg(const Ir *ir, const char *path) {
  const Model *m = ir->m;
  Pic P = {ir, m, {1, 1, 1}, 0, m->nfields, 0, ir->nstencil, {0, 0, 0}};
  bool own = explain_small_grid(m, P.n);
  P.npoints = (int)(P.n[0] * P.n[1] * P.n[2]);
  P.N = P.npoints * P.dof;
  for (int d = 0; d < m->dim; d++) P.ctr[d] = (int)(P.n[d] - 1) / 2;
  double cs = floor(440.0 / P.N);
  if (cs > 18) cs = 18;
  if (cs < 3) cs = 3;

  double ax = MARGIN, ay = TOP + 30 + (m->dim == 3 ? 16 : 0);
  double gw = grid_width(&P), gh = grid_height(&P);
  double legend_rows = P.k < 14 ? P.k : 14, legend_cols = ceil(P.k / 14.0);
  double legend_y = ay + gh + 40;
  double aw = fmax(fmax(gw, legend_cols * 150), 240);
  double bx = ax + aw + GAP + 20, by = TOP + 50;
  double cx = bx + P.N * cs + GAP;
  double cw = fmax(cs, ceil(24.0 / P.dof));  /* room for the offsets over (c)'s block columns */
  double width = fmax(cx + P.k * P.dof * cw, cx + 220) + MARGIN;
  double height = fmax(by + P.N * cs, legend_y + legend_rows * 18) + 60;
  if (width < 760) width = 760;
  const char *name = path_base(ir->src->name);
  char title[512];
  char size[96] = "";
  int len = 0;
  for (int d = 0; d < m->dim; d++) len += snprintf(size + len, sizeof size - (size_t)len, d ? " x %lld" : "%lld", P.n[d]);
  if (m->dim == 1) snprintf(size + len, sizeof size - (size_t)len, "-point");
  snprintf(title, sizeof title, ": %s grid%s, d = %d, k = %d block diagonals, N = %d rows", size,
           own ? "" : " (a small one; the .stn's grid is larger)", P.dof, P.k, P.N);
  width = fmax(width, 2 * MARGIN + 10.0 * (double)(strlen(name) + strlen(title)));  /* 16px bold: about 10px a character */

  FILE *out = fopen(path, "wb");
  if (!out) return false;
  fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
               "<!-- generated by stencilc %s (explain-svg) -->\n"
               "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\">\n",
          STENCILC_VERSION, width, height, width, height);
  fputs("<style>\n"
        "  text { font-family: DejaVu Sans, Arial, sans-serif; font-size: 13px; fill: #222222; }\n"
        "  .title { font-size: 16px; font-weight: bold; }\n"
        "  .head { font-size: 14px; font-weight: bold; }\n"
        "  .small { font-size: 10px; }\n"
        "  .num { font-size: 10px; text-anchor: middle; }\n"
        "  .sep { stroke: #ffffff; stroke-width: 0.6; }\n"
        "  .pt { stroke: #e4e4e4; stroke-width: 0.8; }\n"
        "  .blk { stroke: #555555; stroke-width: 1.2; }\n"
        "</style>\n", out);
  fprintf(out, "<rect width=\"100%%\" height=\"100%%\" fill=\"#ffffff\"/>\n");
  fprintf(out, "<text x=\"%d\" y=\"28\" class=\"title\">", MARGIN);
  xml_text(out, name);
  fprintf(out, "%s</text>\n", title);
  fprintf(out, "<text x=\"%d\" y=\"48\" class=\"small\">after Figure 3.1 of the SG-DIA paper; "
               "the colours are the block diagonals, one per stencil point</text>\n", MARGIN);

  fprintf(out, "<text x=\"%.1f\" y=\"%d\" class=\"head\">(a) grid and stencil</text>\n", ax, TOP);
  fprintf(out, "<text x=\"%.1f\" y=\"%d\" class=\"small\">points numbered as the rows; %s; "
               "stencil on point %d</text>\n",
          ax, TOP + 14, m->dim == 1 ? "x to the right" : "x right, y up",
          (int)(P.ctr[0] + P.n[0] * (P.ctr[1] + P.n[1] * P.ctr[2])));
  panel_grid(out, &P, ax, ay);
  fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" class=\"head\">block diagonals</text>\n", ax, legend_y - 8);
  for (int s = 0; s < P.k; s++) {
    char c[8], off[32];
    colour(s, P.k, c);
    ir_offset_text(ir, ir->stencil[s], off, sizeof off, false);
    double lx = ax + (s / 14) * 150, ly = legend_y + (s % 14) * 18;
    fprintf(out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"12\" height=\"12\" fill=\"%s\"/>\n", lx, ly, c);
    fprintf(out, "<text x=\"%.1f\" y=\"%.1f\">s = %d: %s%s</text>\n", lx + 18, ly + 10, s, off,
            s == ir->diagonal ? " (diagonal)" : "");
  }

  fprintf(out, "<text x=\"%.1f\" y=\"%d\" class=\"head\">(b) the Jacobian, %d x %d</text>\n", bx, TOP, P.N, P.N);
  fprintf(out, "<text x=\"%.1f\" y=\"%d\" class=\"small\">its nonzero entries; rows and columns by point</text>\n",
          bx, TOP + 14);
  panel_matrix(out, &P, bx, by, cs);
  fprintf(out, "<text x=\"%.1f\" y=\"%d\" class=\"head\">(c) SG-DIA, %d x %d</text>\n", cx, TOP, P.N, P.k * P.dof);
  fprintf(out, "<text x=\"%.1f\" y=\"%d\" class=\"small\">k*d columns, column-major</text>\n", cx, TOP + 14);
  fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" class=\"small\">offsets in points above; grey: padding</text>\n", cx,
          by + P.N * cs + 16);
  panel_sgdia(out, &P, cx, by, cs, cw);
  fputs("</svg>\n", out);
  bool ok = !ferror(out);
  int saved = errno;
  if (fclose(out) != 0) return false;
  errno = saved;
  return ok;
}
