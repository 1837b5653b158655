/* sgdia.c: the SG-DIA matrix of Choudary et al. ("Stencil-aware GPU optimization of iterative
   solvers") as a PETSc matrix, linked into every program stencilc generates.

   Storage. For a DMDA with dof unknowns per point and a stencil of nsten grid offsets, the
   owned rows are kept as nsten*dof columns of height nrows = npoints*dof, column-major:

       values[(s*dof + c)*nrows + p*dof + r]   couples row (p, r) with column (p + offset s, c)

   and nothing else: no column indices and no row pointers, so a product moves about 2/3 of the
   bytes of AIJ's (see the roofline comments on the kernels). p numbers the owned points x-fastest
   (DMDAGetCorners). An entry whose neighbour lies outside the domain is never read.

   Why a MATSHELL and not a registered MatType:
   - MatShellSetOperation is public API. A registered type fills struct _MatOps from
     petsc/private/matimpl.h, whose layout changes from release to release; the shell works
     unchanged on PETSc 3.18 (Debian) and 3.24 (the CUDA build) and needs no private header.
   - MatCreateShell gives the layout, vectors, MatSetDM and the state counter that PCs watch;
     we add only the operations below.
   - Scaling and shifts. The shell's own bookkeeping for MatScale/MatShift/MatDiagonalSet applies
     them only inside the MatMult and MatGetDiagonal it wraps; our MatMultAdd, point-block
     inverse and AIJ conversion would silently miss them (and MatMult would pay an extra vector
     pass). So we call MatShellSetManageScalingShifts and apply them to the values instead:
     every operation sees the same matrix. MatZeroRows, which the shell would also record and
     then never apply to our MatMult, is applied to the values too (each rank naming only rows
     it owns, as TS's ARKIMEX does; a row of another rank is an error); MatZeroRowsColumns is
     refused with a clear error.

   Operations: MatMult, MatMultAdd, MatGetDiagonal, MatInvertBlockDiagonal (PCPBJACOBI),
   MatView, MatZeroEntries, MatScale, MatShift, MatDiagonalSet, MatZeroRows, MatCopy, MatDuplicate,
   MatConvert to AIJ (so every PETSc preconditioner can be used), MatDestroy.

   Requirements on the DMDA (checked in MatCreateSGDIA): boundary types DM_BOUNDARY_NONE or
   DM_BOUNDARY_PERIODIC; stencil width >= the largest offset component; DMDA_STENCIL_BOX when an
   offset moves in two or more directions at once (a star DMDA neither communicates corner
   ghosts nor preallocates them in AIJ); in a periodic direction at least 2w+1 points, so that
   the offsets reach distinct points.

   MPI. With more than one rank or a periodic direction, neighbours outside the owned box come
   through a ghosted local vector the matrix owns. The rows that need no ghost (every neighbour
   owned, or beyond a non-periodic edge of the domain) read the global array directly while the
   ghosts travel; only the thin shell of rows next to the faces shared with other ranks (or
   wrapped around) waits for them and reads the local vector. The matrix fills that
   vector with its own VecScatter of just the ghost points the stencil reaches, plus a copy of
   the few owned layers the face rows read, rather than DMGlobalToLocal: that would also copy
   every owned entry, 16 to 24 bytes per row on top of the product's 72 (7-point, dof 1). The
   scatter is made at the first product on the host: on the GPU the product takes
   DMGlobalToLocal's ghosts, and a multigrid level's matrix there may never multiply at all (the
   fused V-cycle, stnmgcycle.c), so that making it would only cost each level's setup. */
#include "sgdia.h"
#include "stnvec.h"     /* VECSTNCUDA */
#include "stntune.h"    /* the product's tuned shape */
#include "sgdia_cuda.h" /* the device kernels (plain C interface; used only with CUDA) */
#include "stnmg.h"      /* StnDMCreateAIJ */
#include <petscblaslapack.h>
#include <string.h>

/* The product kernels are specialised by inlining with constant dof and column counts. */
#if PetscHasAttribute(always_inline)
  #define SGDIA_INLINE static inline __attribute__((always_inline))
#else
  #define SGDIA_INLINE static inline
#endif

/* A box of grid points: first index and extent in x, y, z (unused directions: 0 and 1). */
typedef struct {
  PetscInt s[3], m[3];
} Box;

typedef struct {
  DM           da;          /* the grid; we hold a reference */
  PetscInt     dim, dof;
  PetscInt     nsten;       /* number of block diagonals */
  PetscInt    *offsets;     /* 3*nsten grid offsets (di, dj, dk) */
  PetscInt    *lin_owned;   /* nsten point offsets, linear in the owned box */
  PetscInt    *lin_ghost;   /* nsten point offsets, linear in the ghosted box */
  PetscInt     dmin[3], dmax[3]; /* extent of the stencil in each direction */
  PetscInt     center;      /* the block diagonal at offset (0,0,0), or -1 */
  PetscInt     npoints, nrows;
  Box          owned, ghost;
  Box          inner_owned; /* owned points that need no ghost: each neighbour is owned or does
                               not exist (beyond a non-periodic edge of the domain) */
  Box          shell[6];    /* the owned points outside inner_owned, as up to six slabs */
  PetscInt     nshell;
  PetscBool    scatter;     /* read neighbours through xlocal (MPI or a periodic direction) */
  Vec          xlocal;      /* ghosted work vector (the DMDA's local vector layout) */
  VecScatter   ghosts;      /* global x -> the ghost points of xlocal that the stencil reaches */
  Box          deep;        /* owned points that no face row reads: not copied into xlocal */
  PetscScalar *values;      /* nsten*dof*nrows, the layout above */
  PetscScalar *invblock;    /* npoints inverse dof x dof blocks, for MatInvertBlockDiagonal */
  const PetscScalar **colv; /* nsten*dof column pointers for one line of rows (work) */
  const PetscScalar **colx; /* nsten*dof matching input pointers (work) */
  PetscInt    *line;        /* 3*nsten: the offsets with a neighbour along a line, and where (work) */
  PetscLogDouble nnz;       /* stored entries whose neighbour exists: a product does 2*nnz flops */
  /* On the GPU (the DMDA's vectors are CUDA vectors): the values live in device memory too.
     host_stale / device_stale say which copy was written last; operations that read one side
     bring it up to date first, so inside a GPU solve nothing crosses to the host. */
  PetscBool    device;
  PetscBool    tuned;       /* the product's shape was tuned on this matrix (-stn_autotune) */
  PetscScalar *dvalues;     /* device copy of values */
  PetscBool    host_stale, device_stale;
  StnBox       box;         /* the layout, for the CUDA kernels */
} SGDIA;

static const char sgdia_query[] = "MatSGDIAGetContext_C";

/* ---------------------------------------------------------------------------------------------
   Host and device copies of the values (GPU runs only; on CPUs both calls do nothing)
   --------------------------------------------------------------------------------------------- */

/* Makes the host values current before the host reads them. A matrix on the GPU gets its host
   copy here, the first time the host needs it: most never do, and a fine grid's values are
   hundreds of megabytes. */
static PetscErrorCode SGDIASyncHost(SGDIA *A)
{
  PetscFunctionBeginUser;
  (void)A; /* only GPU builds keep a second copy */
#if defined(PETSC_HAVE_CUDA)
  if (A->device && A->host_stale) {
    if (!A->values) PetscCall(PetscMalloc1(A->nsten * A->dof * A->nrows, &A->values));
    STN_CUDA_CALL(StnCUDAMemcpyDtoH(A->values, A->dvalues, sizeof(PetscScalar) * (size_t)(A->nsten * A->dof * A->nrows)));
    A->host_stale = PETSC_FALSE;
  }
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Makes the device values current before a kernel reads them. */
#if defined(PETSC_HAVE_CUDA)
static PetscErrorCode SGDIASyncDevice(SGDIA *A)
{
  PetscFunctionBeginUser;
  if (A->device && A->device_stale) {
    STN_CUDA_CALL(StnCUDAMemcpyHtoD(A->dvalues, A->values, sizeof(PetscScalar) * (size_t)(A->nsten * A->dof * A->nrows)));
    A->device_stale = PETSC_FALSE;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}
#endif

/* The host values were changed: the device copy is out of date. */
static void SGDIAHostChanged(SGDIA *A)
{
  if (A->device) A->device_stale = PETSC_TRUE;
}

/* ---------------------------------------------------------------------------------------------
   Boxes
   --------------------------------------------------------------------------------------------- */

static inline PetscInt box_index(const Box *b, PetscInt i, PetscInt j, PetscInt k)
{
  return ((k - b->s[2]) * b->m[1] + (j - b->s[1])) * b->m[0] + (i - b->s[0]);
}

static inline PetscBool box_contains(const Box *b, PetscInt i, PetscInt j, PetscInt k)
{
  return (PetscBool)(i >= b->s[0] && i < b->s[0] + b->m[0] && j >= b->s[1] && j < b->s[1] + b->m[1] && k >= b->s[2] && k < b->s[2] + b->m[2]);
}

static inline PetscInt box_size(const Box *b)
{
  return b->m[0] * b->m[1] * b->m[2];
}

static Box box_make(PetscInt xs, PetscInt ys, PetscInt zs, PetscInt xe, PetscInt ye, PetscInt ze)
{
  Box b = {{xs, ys, zs}, {xe - xs, ye - ys, ze - zs}};
  for (int d = 0; d < 3; d++)
    if (b.m[d] < 0) b.m[d] = 0;
  return b;
}

/* The owned points outside inner_owned, as disjoint slabs: two in z, two in y, two in x. */
static void shell_slabs(SGDIA *A)
{
  const Box *o = &A->owned, *T = &A->inner_owned;
  PetscInt   os[3], oe[3], is[3], ie[3];
  Box        cand[6];

  A->nshell = 0;
  if (!box_size(o)) return;
  if (!box_size(T)) {
    A->shell[A->nshell++] = *o;
    return;
  }
  for (int d = 0; d < 3; d++) {
    os[d] = o->s[d], oe[d] = o->s[d] + o->m[d];
    is[d] = T->s[d], ie[d] = T->s[d] + T->m[d];
  }
  cand[0] = box_make(os[0], os[1], os[2], oe[0], oe[1], is[2]);
  cand[1] = box_make(os[0], os[1], ie[2], oe[0], oe[1], oe[2]);
  cand[2] = box_make(os[0], os[1], is[2], oe[0], is[1], ie[2]);
  cand[3] = box_make(os[0], ie[1], is[2], oe[0], oe[1], ie[2]);
  cand[4] = box_make(os[0], is[1], is[2], is[0], ie[1], ie[2]);
  cand[5] = box_make(ie[0], is[1], is[2], oe[0], ie[1], ie[2]);
  for (int c = 0; c < 6; c++)
    if (box_size(&cand[c])) A->shell[A->nshell++] = cand[c];
}

/* ---------------------------------------------------------------------------------------------
   The product kernels: y = z + A x on a region of owned points, x given in the layout of a box
   ---------------------------------------------------------------------------------------------

   Roofline of one product, per row and block diagonal, for rows whose neighbour exists:
     flops: 2*dof per (row, block diagonal): 2*nnz in all (nnz = nsten*dof*nrows less the
            entries that leave the domain);
     bytes: 8*nsten*dof per row of values (read once, streamed) + 8 for y (written) + 8 for x
            (read; neighbours come from cache) + 8 for z in MatMultAdd:
            8*(nsten*dof + 2) bytes per row, against AIJ's 12*nsten*dof + 4 + 16.
   With a scatter (MPI or periodic), the face rows also read their neighbours from the work
   vector, into which the ghosts and a few owned layers are copied first (see the top). */

/* Sets a segment of rows to z, or to zero. */
static inline void rows_init(PetscInt n, const PetscScalar *z, PetscScalar *y)
{
  if (!z)
    for (PetscInt t = 0; t < n; t++) y[t] = 0.0;
  else if (z != y)
    for (PetscInt t = 0; t < n; t++) y[t] = z[t];
}

/* The tight loop: n consecutive points whose neighbours all exist, G block columns at once.
   Column g has values vg[t*dof + r] and inputs xg[t*dof]. One pass loads and stores y once for
   G columns. G and dof are constants after inlining, so the terms that do not exist fold away;
   the restrict parameters (and, for dof 1, two points per iteration) let the compiler use
   vector instructions at -O2 without extra flags. */
SGDIA_INLINE void kernel(PetscInt dof, PetscInt G, PetscInt n, const PetscScalar *restrict v0, const PetscScalar *restrict v1, const PetscScalar *restrict v2, const PetscScalar *restrict v3, const PetscScalar *restrict v4, const PetscScalar *restrict v5, const PetscScalar *restrict v6, const PetscScalar *restrict v7, const PetscScalar *restrict x0, const PetscScalar *restrict x1, const PetscScalar *restrict x2, const PetscScalar *restrict x3, const PetscScalar *restrict x4, const PetscScalar *restrict x5, const PetscScalar *restrict x6, const PetscScalar *restrict x7, PetscScalar *restrict y)
{
  PetscInt t = 0;

  if (dof == 1)
    for (; t + 2 <= n; t += 2) {
      PetscScalar acc0 = y[t] + v0[t] * x0[t], acc1 = y[t + 1] + v0[t + 1] * x0[t + 1];
      if (G > 1) acc0 += v1[t] * x1[t], acc1 += v1[t + 1] * x1[t + 1];
      if (G > 2) acc0 += v2[t] * x2[t], acc1 += v2[t + 1] * x2[t + 1];
      if (G > 3) acc0 += v3[t] * x3[t], acc1 += v3[t + 1] * x3[t + 1];
      if (G > 4) acc0 += v4[t] * x4[t], acc1 += v4[t + 1] * x4[t + 1];
      if (G > 5) acc0 += v5[t] * x5[t], acc1 += v5[t + 1] * x5[t + 1];
      if (G > 6) acc0 += v6[t] * x6[t], acc1 += v6[t + 1] * x6[t + 1];
      if (G > 7) acc0 += v7[t] * x7[t], acc1 += v7[t + 1] * x7[t + 1];
      y[t]     = acc0;
      y[t + 1] = acc1;
    }
  for (; t < n; t++) {
    const PetscInt    u  = t * dof;
    const PetscScalar a0 = x0[u], a1 = G > 1 ? x1[u] : 0, a2 = G > 2 ? x2[u] : 0, a3 = G > 3 ? x3[u] : 0;
    const PetscScalar a4 = G > 4 ? x4[u] : 0, a5 = G > 5 ? x5[u] : 0, a6 = G > 6 ? x6[u] : 0, a7 = G > 7 ? x7[u] : 0;
    for (PetscInt r = 0; r < dof; r++) {
      const PetscInt e   = u + r;
      PetscScalar    acc = y[e] + v0[e] * a0;
      if (G > 1) acc += v1[e] * a1;
      if (G > 2) acc += v2[e] * a2;
      if (G > 3) acc += v3[e] * a3;
      if (G > 4) acc += v4[e] * a4;
      if (G > 5) acc += v5[e] * a5;
      if (G > 6) acc += v6[e] * a6;
      if (G > 7) acc += v7[e] * a7;
      y[e] = acc;
    }
  }
}

/* kernel on the G columns v[0..G-1], x[0..G-1] from element `at` on. */
SGDIA_INLINE void pass(PetscInt dof, PetscInt G, PetscInt n, PetscInt at, const PetscScalar *const *v, const PetscScalar *const *x, PetscScalar *restrict y)
{
  kernel(dof, G, n, v[0] + at, G > 1 ? v[1] + at : NULL, G > 2 ? v[2] + at : NULL, G > 3 ? v[3] + at : NULL, G > 4 ? v[4] + at : NULL, G > 5 ? v[5] + at : NULL, G > 6 ? v[6] + at : NULL, G > 7 ? v[7] + at : NULL,
         x[0] + at, G > 1 ? x[1] + at : NULL, G > 2 ? x[2] + at : NULL, G > 3 ? x[3] + at : NULL, G > 4 ? x[4] + at : NULL, G > 5 ? x[5] + at : NULL, G > 6 ? x[6] + at : NULL, G > 7 ? x[7] + at : NULL, y);
}

/* pass with G (1 to 8) known at compile time. */
SGDIA_INLINE void pass_g(PetscInt dof, PetscInt G, PetscInt n, PetscInt at, const PetscScalar *const *v, const PetscScalar *const *x, PetscScalar *restrict y)
{
  switch (G) {
  case 1: pass(dof, 1, n, at, v, x, y); break;
  case 2: pass(dof, 2, n, at, v, x, y); break;
  case 3: pass(dof, 3, n, at, v, x, y); break;
  case 4: pass(dof, 4, n, at, v, x, y); break;
  case 5: pass(dof, 5, n, at, v, x, y); break;
  case 6: pass(dof, 6, n, at, v, x, y); break;
  case 7: pass(dof, 7, n, at, v, x, y); break;
  default: pass(dof, 8, n, at, v, x, y); break;
  }
}

/* pass with dof (1 to 4, or any) and G (1 to 8) known at compile time: 40 loops in all. */
static void pass_any(PetscInt dof, PetscInt G, PetscInt n, PetscInt at, const PetscScalar *const *v, const PetscScalar *const *x, PetscScalar *restrict y)
{
  switch (dof) {
  case 1: pass_g(1, G, n, at, v, x, y); break;
  case 2: pass_g(2, G, n, at, v, x, y); break;
  case 3: pass_g(3, G, n, at, v, x, y); break;
  case 4: pass_g(4, G, n, at, v, x, y); break;
  default: pass_g(dof, G, n, at, v, x, y); break;
  }
}

/* All nq block columns over n points, eight at a time, in chunks of about 1024 rows so that y
   stays in the L1 cache from one pass to the next. */
static void line_sum(PetscInt dof, PetscInt n, PetscInt nq, const PetscScalar *const *v, const PetscScalar *const *x, PetscScalar *restrict y)
{
  const PetscInt chunk = PetscMax(1, 1024 / dof);

  for (PetscInt t0 = 0; t0 < n; t0 += chunk) {
    const PetscInt m = PetscMin(chunk, n - t0), at = t0 * dof;
    for (PetscInt q = 0; q < nq; q += 8) pass_any(dof, PetscMin(8, nq - q), m, at, v + q, x + q, y + at);
  }
}

/* What line_add knows about one line of rows, for edge_point. */
typedef struct {
  PetscInt           nu;         /* offsets with a neighbour in B somewhere on the line */
  PetscInt          *used;       /* those offsets */
  PetscInt          *lo, *hi;    /* and where: lo[u] <= i < hi[u] */
  PetscInt           i0, p0, b0; /* first point of the line: its i, owned index, index in B */
  const PetscInt    *linB;       /* the offsets, linear in B */
  const PetscScalar *xb;         /* x in the layout of B */
} Line;

/* The row of one point near a face of B: the offsets whose neighbour exists, one by one. */
static void edge_point(const SGDIA *A, const Line *L, PetscInt i, PetscScalar *restrict y)
{
  const PetscInt dof = A->dof, nrows = A->nrows, p = L->p0 + (i - L->i0), b = L->b0 + (i - L->i0);

  for (PetscInt u = 0; u < L->nu; u++) {
    const PetscInt s = L->used[u];
    if (i < L->lo[u] || i >= L->hi[u]) continue;
    for (PetscInt c = 0; c < dof; c++) {
      const PetscScalar  a = L->xb[(b + L->linB[s]) * dof + c];
      const PetscScalar *v = A->values + (s * dof + c) * nrows + p * dof;
      for (PetscInt r = 0; r < dof; r++) y[p * dof + r] += v[r] * a;
    }
  }
}

/* Adds A x to the rows of points i0 <= i < i1 of line (j, k), x in the layout of box B.
   Along a line, offset s has its neighbour in B for an interval lo_s <= i < hi_s (none when row
   j + dj or plane k + dk misses B), so nothing is checked inside the tight loop: the middle
   [max lo_s, min hi_s), where every such offset has its neighbour, goes through line_sum, and
   the few points before and after it (next to a face of B) through edge_point. */
static void line_add(SGDIA *A, PetscInt i0, PetscInt i1, PetscInt j, PetscInt k, const Box *B, const PetscInt *linB, const PetscScalar *xb, PetscScalar *y)
{
  const PetscInt dof = A->dof, nrows = A->nrows;
  Line           L   = {.nu = 0, .used = A->line, .lo = A->line + A->nsten, .hi = A->line + 2 * A->nsten, .i0 = i0, .p0 = box_index(&A->owned, i0, j, k), .b0 = box_index(B, i0, j, k), .linB = linB, .xb = xb};
  PetscInt       a = i0, e = i1, nq = 0;

  for (PetscInt s = 0; s < A->nsten; s++) {
    const PetscInt *o = A->offsets + 3 * s;
    if (j + o[1] < B->s[1] || j + o[1] >= B->s[1] + B->m[1] || k + o[2] < B->s[2] || k + o[2] >= B->s[2] + B->m[2]) continue;
    L.lo[L.nu] = PetscMax(i0, B->s[0] - o[0]);
    L.hi[L.nu] = PetscMin(i1, B->s[0] + B->m[0] - o[0]);
    if (L.lo[L.nu] >= L.hi[L.nu]) continue;
    a              = PetscMax(a, L.lo[L.nu]);
    e              = PetscMin(e, L.hi[L.nu]);
    L.used[L.nu++] = s;
  }
  if (e <= a) e = a; /* no common middle: all points are edge points */
  /* In the order of the points, so that each column of values streams through memory. */
  for (PetscInt i = i0; i < a; i++) edge_point(A, &L, i, y);
  if (e > a) {
    for (PetscInt u = 0; u < L.nu; u++)
      for (PetscInt c = 0; c < dof; c++) {
        const PetscInt s = L.used[u];
        A->colv[nq]      = A->values + (s * dof + c) * nrows + (L.p0 + a - i0) * dof;
        A->colx[nq++]    = xb + (L.b0 + a - i0 + linB[s]) * dof + c;
      }
    line_sum(dof, e - a, nq, A->colv, A->colx, y + (L.p0 + a - i0) * dof);
  }
  for (PetscInt i = e; i < i1; i++) edge_point(A, &L, i, y);
}

/* y = z + A x (z NULL: y = A x) on the rows of the owned points of region R, x in the layout
   of box B (linB: the offsets, linear in B). */
static void sweep(SGDIA *A, const Box *R, const Box *B, const PetscInt *linB, const PetscScalar *xb, const PetscScalar *z, PetscScalar *y)
{
  const PetscInt dof = A->dof;

  for (PetscInt k = R->s[2]; k < R->s[2] + R->m[2]; k++)
    for (PetscInt j = R->s[1]; j < R->s[1] + R->m[1]; j++) {
      const PetscInt p = box_index(&A->owned, R->s[0], j, k);
      rows_init(R->m[0] * dof, z ? z + p * dof : NULL, y + p * dof);
      line_add(A, R->s[0], R->s[0] + R->m[0], j, k, B, linB, xb, y);
    }
}

/* Copies into xl (ghosted layout) the owned entries of xg (owned layout) that face rows read:
   every owned point outside the deep box, line segment by line segment.
   Roofline: 16 bytes per copied entry, a few layers of the owned box; no flops. */
static void copy_layers(const SGDIA *A, const PetscScalar *xg, PetscScalar *xl)
{
  const Box     *o = &A->owned, *D = &A->deep;
  const PetscInt dof = A->dof, xs = o->s[0], xe = o->s[0] + o->m[0];
  const size_t   unit = sizeof(PetscScalar) * (size_t)dof;

  for (PetscInt k = o->s[2]; k < o->s[2] + o->m[2]; k++)
    for (PetscInt j = o->s[1]; j < o->s[1] + o->m[1]; j++) {
      const PetscInt po = box_index(o, xs, j, k), pg = box_index(&A->ghost, xs, j, k);
      PetscInt       a = xe, e = xe; /* the deep part of the line, not copied */
      if (box_size(D) && j >= D->s[1] && j < D->s[1] + D->m[1] && k >= D->s[2] && k < D->s[2] + D->m[2]) a = D->s[0], e = D->s[0] + D->m[0];
      memcpy(xl + pg * dof, xg + po * dof, (size_t)(a - xs) * unit);
      memcpy(xl + (pg + e - xs) * dof, xg + (po + e - xs) * dof, (size_t)(xe - e) * unit);
    }
}

/* ---------------------------------------------------------------------------------------------
   Context
   --------------------------------------------------------------------------------------------- */

/* Composed on every SG-DIA matrix: its presence is what MatIsSGDIA tests. */
static PetscErrorCode SGDIAQueryContext(Mat mat, void *ctx)
{
  PetscFunctionBeginUser;
  PetscCall(MatShellGetContext(mat, ctx));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode SGDIAGetContext(Mat mat, SGDIA **A)
{
  PetscErrorCode (*query)(Mat, void *) = NULL;

  PetscFunctionBeginUser;
  PetscCall(PetscObjectQueryFunction((PetscObject)mat, sgdia_query, &query));
  PetscCheck(query, PetscObjectComm((PetscObject)mat), PETSC_ERR_ARG_WRONG, "The matrix is not an SG-DIA matrix (create it with MatCreateSGDIA)");
  PetscCall((*query)(mat, A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatIsSGDIA(Mat mat, PetscBool *flg)
{
  PetscErrorCode (*query)(Mat, void *) = NULL;

  PetscFunctionBeginUser;
  PetscCall(PetscObjectQueryFunction((PetscObject)mat, sgdia_query, &query));
  *flg = query ? PETSC_TRUE : PETSC_FALSE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---------------------------------------------------------------------------------------------
   Products
   --------------------------------------------------------------------------------------------- */

/* y = z + A x; z may be NULL (y = A x) or y itself. */
#if defined(PETSC_HAVE_CUDA)
/* y = A x, y = z + A x (add 1) or y = z .* (A x) (add 2) on the GPU: ghosts through
   DMGlobalToLocal on CUDA vectors when they are needed (MPI or a periodic direction), else the
   global array itself. Roofline as the CPU kernel: 8*(nsten*dof + 2) bytes and 2*nsten*dof
   flops per row. */
static PetscErrorCode SGDIAApplyDevice(SGDIA *A, Vec x, Vec z, Vec y, int add)
{
  const PetscScalar *xd, *zd = NULL;
  PetscScalar       *yd;
  Vec                xl = NULL, xin = x;
  int                rc;

  PetscFunctionBeginUser;
  PetscCall(SGDIASyncDevice(A));
  if (A->scatter) {
    PetscCall(DMGetLocalVector(A->da, &xl));
    PetscCall(DMGlobalToLocalBegin(A->da, x, INSERT_VALUES, xl));
    PetscCall(DMGlobalToLocalEnd(A->da, x, INSERT_VALUES, xl));
    xin = xl;
  }
  PetscCall(VecCUDAGetArrayRead(xin, &xd));
  if (z == y) {
    PetscCall(VecCUDAGetArray(y, &yd));
    zd = yd;
  } else {
    PetscCall(VecCUDAGetArrayWrite(y, &yd));
    if (z) PetscCall(VecCUDAGetArrayRead(z, &zd));
  }
  if (!z && !A->tuned && StnTuneRequested()) { /* once, on the first product of real operands */
    A->tuned = PETSC_TRUE;
    PetscCall(StnTuneSGDIA(PetscObjectComm((PetscObject)A->da), &A->box, A->dvalues, xd, A->scatter ? 1 : 0, yd));
  }
  PetscCall(PetscLogGpuTimeBegin());
  rc = StnSGDIAMultCUDA(&A->box, A->dvalues, xd, A->scatter ? 1 : 0, zd, yd, add, NULL);
  PetscCall(PetscLogGpuTimeEnd());
  STN_CUDA_CALL(rc);
  if (z == y) PetscCall(VecCUDARestoreArray(y, &yd));
  else {
    if (z) PetscCall(VecCUDARestoreArrayRead(z, &zd));
    PetscCall(VecCUDARestoreArrayWrite(y, &yd));
  }
  PetscCall(VecCUDARestoreArrayRead(xin, &xd));
  if (xl) PetscCall(DMRestoreLocalVector(A->da, &xl));
  PetscCall(PetscLogGpuFlops(2.0 * A->nnz + (add == 2 ? A->nrows : 0)));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A's context when mat is an SG-DIA matrix on the device, else NULL. */
static PetscErrorCode SGDIAGetDeviceContext(Mat mat, SGDIA **A)
{
  PetscBool is;

  PetscFunctionBeginUser;
  *A = NULL;
  PetscCall(MatIsSGDIA(mat, &is));
  if (is) PetscCall(SGDIAGetContext(mat, A));
  if (*A && !(*A)->device) *A = NULL;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatSGDIAMultScaledDevice(Mat mat, Vec d, Vec x, Vec y, PetscBool *done)
{
  static PetscLogEvent event;
  SGDIA               *A;

  PetscFunctionBeginUser;
  *done = PETSC_FALSE;
  PetscCall(SGDIAGetDeviceContext(mat, &A));
  if (!A) PetscFunctionReturn(PETSC_SUCCESS);
  if (!event) PetscCall(PetscLogEventRegister("MatMultJacobi", MAT_CLASSID, &event));
  PetscCall(PetscLogEventBegin(event, mat, x, y, 0));
  PetscCall(SGDIAApplyDevice(A, x, d, y, 2));
  PetscCall(PetscLogEventEnd(event, mat, x, y, 0));
  *done = PETSC_TRUE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatSGDIAGetDeviceOperator(Mat mat, const StnBox **box, const PetscScalar **values, PetscLogDouble *flops, PetscBool *ok)
{
  SGDIA *A;

  PetscFunctionBeginUser;
  *ok = PETSC_FALSE;
  PetscCall(SGDIAGetDeviceContext(mat, &A));
  if (!A || A->scatter) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(SGDIASyncDevice(A));
  *box    = &A->box;
  *values = A->dvalues;
  *flops  = 2.0 * A->nnz;
  *ok     = PETSC_TRUE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatSGDIAGetDeviceValues(Mat mat, const StnBox **box, const PetscScalar **values, PetscBool *ok)
{
  SGDIA *A;

  PetscFunctionBeginUser;
  *ok = PETSC_FALSE;
  PetscCall(SGDIAGetDeviceContext(mat, &A));
  if (!A) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(SGDIASyncDevice(A));
  *box    = &A->box;
  *values = A->dvalues;
  *ok     = PETSC_TRUE;
  PetscFunctionReturn(PETSC_SUCCESS);
}
#endif

static PetscErrorCode SGDIASetUpScatter(SGDIA *A);

static PetscErrorCode SGDIAApply(Mat mat, Vec x, Vec z, Vec y)
{
  SGDIA             *A;
  const PetscScalar *xa, *za = NULL, *xl;
  PetscScalar       *ya;

  PetscFunctionBeginUser;
  PetscCall(MatShellGetContext(mat, &A));
#if defined(PETSC_HAVE_CUDA)
  if (A->device) {
    PetscCall(SGDIAApplyDevice(A, x, z, y, z ? 1 : 0));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
#endif
  if (A->scatter && !A->ghosts) PetscCall(SGDIASetUpScatter(A)); /* the host's product is the first to need it */
  PetscCall(VecGetArrayRead(x, &xa));
  if (z == y) {
    PetscCall(VecGetArray(y, &ya));
    za = ya;
  } else {
    PetscCall(VecGetArrayWrite(y, &ya));
    if (z) PetscCall(VecGetArrayRead(z, &za));
  }
  if (A->scatter) {
    PetscScalar *xw;
    PetscCall(VecGetArrayWrite(A->xlocal, &xw));
    copy_layers(A, xa, xw);
    PetscCall(VecRestoreArrayWrite(A->xlocal, &xw));
    PetscCall(VecScatterBegin(A->ghosts, x, A->xlocal, INSERT_VALUES, SCATTER_FORWARD));
    sweep(A, &A->inner_owned, &A->owned, A->lin_owned, xa, za, ya);
    PetscCall(VecScatterEnd(A->ghosts, x, A->xlocal, INSERT_VALUES, SCATTER_FORWARD));
    PetscCall(VecGetArrayRead(A->xlocal, &xl));
    for (PetscInt n = 0; n < A->nshell; n++) sweep(A, &A->shell[n], &A->ghost, A->lin_ghost, xl, za, ya);
    PetscCall(VecRestoreArrayRead(A->xlocal, &xl));
  } else {
    sweep(A, &A->owned, &A->owned, A->lin_owned, xa, za, ya);
  }
  if (z == y) {
    PetscCall(VecRestoreArray(y, &ya));
  } else {
    if (z) PetscCall(VecRestoreArrayRead(z, &za));
    PetscCall(VecRestoreArrayWrite(y, &ya));
  }
  PetscCall(VecRestoreArrayRead(x, &xa));
  PetscCall(PetscLogFlops(2.0 * A->nnz));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatMult_SGDIA(Mat mat, Vec x, Vec y)
{
  PetscFunctionBeginUser;
  PetscCall(SGDIAApply(mat, x, NULL, y));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatMultAdd_SGDIA(Mat mat, Vec x, Vec z, Vec y)
{
  PetscFunctionBeginUser;
  PetscCall(SGDIAApply(mat, x, z, y));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---------------------------------------------------------------------------------------------
   Diagonal and point-block diagonal
   --------------------------------------------------------------------------------------------- */

/* Roofline: reads dof of the nsten*dof columns (8*dof bytes per row) and writes 8; no flops. */
static PetscErrorCode MatGetDiagonal_SGDIA(Mat mat, Vec d)
{
  SGDIA       *A;
  PetscScalar *da;

  PetscFunctionBeginUser;
  PetscCall(MatShellGetContext(mat, &A));
  if (A->center < 0) {
    PetscCall(VecSet(d, 0.0));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
#if defined(PETSC_HAVE_CUDA)
  if (A->device) {
    PetscCall(SGDIASyncDevice(A));
    PetscCall(VecCUDAGetArrayWrite(d, &da));
    STN_CUDA_CALL(StnSGDIADiagonalCUDA(&A->box, A->dvalues, (int)A->center, da, NULL));
    PetscCall(VecCUDARestoreArrayWrite(d, &da));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
#endif
  PetscCall(VecGetArrayWrite(d, &da));
  for (PetscInt r = 0; r < A->dof; r++) {
    const PetscScalar *v = A->values + (A->center * A->dof + r) * A->nrows;
    for (PetscInt p = 0; p < A->npoints; p++) da[p * A->dof + r] = v[p * A->dof + r];
  }
  PetscCall(VecRestoreArrayWrite(d, &da));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The grid point (global indices) of owned point p, for messages. */
static void point_ijk(const SGDIA *A, PetscInt p, PetscInt ijk[3])
{
  ijk[0] = A->owned.s[0] + p % A->owned.m[0];
  ijk[1] = A->owned.s[1] + (p / A->owned.m[0]) % A->owned.m[1];
  ijk[2] = A->owned.s[2] + p / (A->owned.m[0] * A->owned.m[1]);
}

PetscErrorCode MatSGDIAFindNonFinite(Mat mat, PetscInt ijk[3], PetscInt *row, PetscInt *col, PetscInt offset[3], PetscScalar *value, PetscBool *found)
{
  SGDIA         *A;
  PetscInt       n[3] = {1, 1, 1};
  DMBoundaryType bt[3];

  PetscFunctionBeginUser;
  *found = PETSC_FALSE;
  PetscCall(SGDIAGetContext(mat, &A));
  PetscCall(SGDIASyncHost(A));
  PetscCall(DMDAGetInfo(A->da, NULL, &n[0], &n[1], &n[2], NULL, NULL, NULL, NULL, NULL, &bt[0], &bt[1], &bt[2], NULL));
  for (PetscInt p = 0; p < A->npoints; p++) {
    PetscInt at[3];

    point_ijk(A, p, at);
    for (PetscInt s = 0; s < A->nsten; s++) {
      PetscBool exists = PETSC_TRUE; /* padding, beyond a non-periodic edge, is never read */
      for (PetscInt d = 0; d < A->dim; d++) {
        const PetscInt q = at[d] + A->offsets[3 * s + d];
        if ((q < 0 || q >= n[d]) && bt[d] != DM_BOUNDARY_PERIODIC) exists = PETSC_FALSE;
      }
      for (PetscInt c = 0; exists && c < A->dof; c++)
        for (PetscInt r = 0; r < A->dof; r++) {
          const PetscScalar v = A->values[(s * A->dof + c) * A->nrows + p * A->dof + r];
          if (!PetscIsInfOrNanScalar(v)) continue;
          for (PetscInt d = 0; d < 3; d++) ijk[d] = at[d], offset[d] = A->offsets[3 * s + d];
          *row = r, *col = c, *value = v, *found = PETSC_TRUE;
          PetscFunctionReturn(PETSC_SUCCESS);
        }
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Inverts one dof x dof block in place (column-major) with LAPACK's LU; info > 0: singular. */
static PetscErrorCode block_invert(PetscBLASInt n, PetscScalar *a, PetscBLASInt *pivots, PetscScalar *work, PetscBLASInt *info)
{
  PetscBLASInt lwork = n * n;

  PetscFunctionBeginUser;
  PetscCallBLAS("LAPACKgetrf", LAPACKgetrf_(&n, &n, a, &n, pivots, info));
  if (*info) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCallBLAS("LAPACKgetri", LAPACKgetri_(&n, a, &n, pivots, work, &lwork, info));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The inverses of the dof x dof blocks of the (0,0,0) block diagonal, one per owned point, each
   column-major (the layout PCPBJACOBI reads). The array belongs to the matrix.
   Roofline: reads and writes 8*dof bytes per row; about (4/3)dof^3 flops per point (LU + inverse). */
static PetscErrorCode MatInvertBlockDiagonal_SGDIA(Mat mat, const PetscScalar **inv)
{
  SGDIA       *A;
  PetscInt     dof;
  PetscBLASInt n, info, *pivots;
  PetscScalar *work;

  PetscFunctionBeginUser;
  PetscCall(MatShellGetContext(mat, &A));
  PetscCall(SGDIASyncHost(A));
  dof = A->dof;
  PetscCheck(A->center >= 0, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONGSTATE, "SG-DIA: no block diagonal at offset (0,0,0), so the point-block diagonal is zero and cannot be inverted");
  if (!A->invblock) PetscCall(PetscMalloc1(A->npoints * dof * dof, &A->invblock));
  PetscCall(PetscBLASIntCast(dof, &n));
  PetscCall(PetscMalloc2(dof, &pivots, dof * dof, &work));
  for (PetscInt p = 0; p < A->npoints; p++) {
    PetscScalar *blk = A->invblock + p * dof * dof;
    for (PetscInt c = 0; c < dof; c++)
      for (PetscInt r = 0; r < dof; r++) blk[r + c * dof] = A->values[(A->center * dof + c) * A->nrows + p * dof + r];
    if (dof == 1) info = (blk[0] == 0.0);
    else PetscCall(block_invert(n, blk, pivots, work, &info));
    if (info) {
      PetscInt ijk[3];
      point_ijk(A, p, ijk);
      PetscCall(PetscFree2(pivots, work));
      SETERRQ(PETSC_COMM_SELF, PETSC_ERR_MAT_LU_ZRPVT, "SG-DIA: the %" PetscInt_FMT "x%" PetscInt_FMT " diagonal block at grid point (%" PetscInt_FMT ", %" PetscInt_FMT ", %" PetscInt_FMT ") is singular (pivot %d of %" PetscInt_FMT " is zero), so point-block Jacobi cannot invert it", dof, dof, ijk[0], ijk[1], ijk[2], (int)info, dof);
    }
    if (dof == 1) blk[0] = 1.0 / blk[0];
  }
  PetscCall(PetscFree2(pivots, work));
  PetscCall(PetscLogFlops((dof == 1 ? 1.0 : 4.0 / 3.0 * dof * dof * dof) * A->npoints));
  *inv = A->invblock;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---------------------------------------------------------------------------------------------
   Changing the values: zero, scale, shift, diagonal set, copy
   --------------------------------------------------------------------------------------------- */

/* Roofline: writes 8*nsten*dof bytes per row; no flops. */
static PetscErrorCode MatZeroEntries_SGDIA(Mat mat)
{
  SGDIA *A;

  PetscFunctionBeginUser;
  PetscCall(MatShellGetContext(mat, &A));
#if defined(PETSC_HAVE_CUDA)
  if (A->device) {
    STN_CUDA_CALL(StnSGDIAZeroCUDA(A->dvalues, (long)(A->nsten * A->dof * A->nrows), NULL));
    A->host_stale   = PETSC_TRUE;
    A->device_stale = PETSC_FALSE;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
#endif
  PetscCall(PetscArrayzero(A->values, A->nsten * A->dof * A->nrows));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Roofline: reads and writes 8*nsten*dof bytes per row; nsten*dof flops per row. */
static PetscErrorCode MatScale_SGDIA(Mat mat, PetscScalar a)
{
  SGDIA   *A;
  PetscInt n;

  PetscFunctionBeginUser;
  PetscCall(MatShellGetContext(mat, &A));
  n = A->nsten * A->dof * A->nrows;
#if defined(PETSC_HAVE_CUDA)
  if (A->device && !A->device_stale) { /* where the values were written last: TS's IJacobian */
    PetscCall(PetscLogGpuTimeBegin());
    STN_CUDA_CALL(StnSGDIAScaleCUDA(A->dvalues, (long)n, a, NULL));
    PetscCall(PetscLogGpuTimeEnd());
    A->host_stale = PETSC_TRUE;
    PetscCall(PetscLogGpuFlops(1.0 * n));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
#endif
  PetscCall(SGDIASyncHost(A));
  SGDIAHostChanged(A);
  for (PetscInt e = 0; e < n; e++) A->values[e] *= a;
  PetscCall(PetscLogFlops(1.0 * n));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The diagonal entries of the (0,0,0) block diagonal, which MatShift and MatDiagonalSet change. */
static PetscErrorCode SGDIACheckCenter(Mat mat, SGDIA *A, const char *op)
{
  PetscFunctionBeginUser;
  PetscCheck(A->center >= 0, PetscObjectComm((PetscObject)mat), PETSC_ERR_SUP, "SG-DIA: %s needs a block diagonal at offset (0,0,0); this matrix has none", op);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Roofline: reads and writes 8 bytes per row (one entry of the (0,0,0) block); 1 flop per row. */
static PetscErrorCode MatShift_SGDIA(Mat mat, PetscScalar a)
{
  SGDIA *A;

  PetscFunctionBeginUser;
  PetscCall(MatShellGetContext(mat, &A));
  PetscCall(SGDIASyncHost(A));
  SGDIAHostChanged(A);
  PetscCall(SGDIACheckCenter(mat, A, "MatShift"));
  for (PetscInt r = 0; r < A->dof; r++) {
    PetscScalar *v = A->values + (A->center * A->dof + r) * A->nrows;
    for (PetscInt p = 0; p < A->npoints; p++) v[p * A->dof + r] += a;
  }
  PetscCall(PetscLogFlops(1.0 * A->nrows));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Roofline: reads 8 bytes of d and reads and writes 8 of values per row; 1 flop per row (ADD). */
static PetscErrorCode MatDiagonalSet_SGDIA(Mat mat, Vec d, InsertMode mode)
{
  SGDIA             *A;
  const PetscScalar *da;

  PetscFunctionBeginUser;
  PetscCall(MatShellGetContext(mat, &A));
  PetscCall(SGDIASyncHost(A));
  SGDIAHostChanged(A);
  PetscCall(SGDIACheckCenter(mat, A, "MatDiagonalSet"));
  PetscCheck(mode == INSERT_VALUES || mode == ADD_VALUES, PetscObjectComm((PetscObject)mat), PETSC_ERR_SUP, "SG-DIA: MatDiagonalSet takes INSERT_VALUES or ADD_VALUES");
  PetscCall(VecGetArrayRead(d, &da));
  for (PetscInt r = 0; r < A->dof; r++) {
    PetscScalar *v = A->values + (A->center * A->dof + r) * A->nrows;
    for (PetscInt p = 0; p < A->npoints; p++) v[p * A->dof + r] = (mode == ADD_VALUES ? v[p * A->dof + r] : 0.0) + da[p * A->dof + r];
  }
  PetscCall(VecRestoreArrayRead(d, &da));
  if (mode == ADD_VALUES) PetscCall(PetscLogFlops(1.0 * A->nrows));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Whether two SG-DIA contexts have the same grid and the same offsets. */
static PetscBool same_layout(const SGDIA *A, const SGDIA *B)
{
  if (A->da != B->da || A->nsten != B->nsten || A->dof != B->dof) return PETSC_FALSE;
  for (PetscInt e = 0; e < 3 * A->nsten; e++)
    if (A->offsets[e] != B->offsets[e]) return PETSC_FALSE;
  return PETSC_TRUE;
}

/* Roofline: reads and writes 8*nsten*dof bytes per row. MatCopy increases the state of dest. */
static PetscErrorCode MatCopy_SGDIA(Mat mat, Mat dest, MatStructure str)
{
  SGDIA *A, *B;

  PetscFunctionBeginUser;
  (void)str;
  PetscCall(MatShellGetContext(mat, &A));
  PetscCall(SGDIAGetContext(dest, &B));
  PetscCheck(same_layout(A, B), PetscObjectComm((PetscObject)mat), PETSC_ERR_ARG_INCOMP, "SG-DIA: MatCopy needs two matrices on the same DMDA with the same offsets");
#if defined(PETSC_HAVE_CUDA)
  if (A->device && B->device) {
    PetscCall(SGDIASyncDevice(A));
    STN_CUDA_CALL(StnCUDAMemcpyDtoD(B->dvalues, A->dvalues, sizeof(PetscScalar) * (size_t)(A->nsten * A->dof * A->nrows)));
    B->host_stale   = PETSC_TRUE;
    B->device_stale = PETSC_FALSE;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
#endif
  PetscCall(SGDIASyncHost(A));
  PetscCall(SGDIASyncHost(B));
  SGDIAHostChanged(B);
  PetscCall(PetscArraycpy(B->values, A->values, A->nsten * A->dof * A->nrows));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatDuplicate_SGDIA(Mat mat, MatDuplicateOption op, Mat *dup)
{
  SGDIA *A;

  PetscFunctionBeginUser;
  PetscCall(MatShellGetContext(mat, &A));
  PetscCall(MatCreateSGDIA(A->da, A->nsten, A->offsets, dup));
  if (op == MAT_COPY_VALUES) PetscCall(MatCopy_SGDIA(mat, *dup, SAME_NONZERO_PATTERN));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Rows of this rank (global numbers) become diag times the identity's, and b there diag x. TS's
   ARKIMEX does it to the algebraic equations (no time derivative) when it starts, usually for
   none: then nothing moves. On the host, a rare path. */
static PetscErrorCode MatZeroRows_SGDIA(Mat mat, PetscInt n, const PetscInt rows[], PetscScalar diag, Vec x, Vec b)
{
  SGDIA             *A;
  PetscInt           rstart, rend;
  const PetscScalar *xa = NULL;
  PetscScalar       *ba = NULL;

  PetscFunctionBeginUser;
  if (!n) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatShellGetContext(mat, &A));
  PetscCall(SGDIACheckCenter(mat, A, "MatZeroRows"));
  PetscCall(MatGetOwnershipRange(mat, &rstart, &rend));
  PetscCall(SGDIASyncHost(A));
  SGDIAHostChanged(A);
  if (x && b) {
    PetscCall(VecGetArrayRead(x, &xa));
    PetscCall(VecGetArray(b, &ba));
  }
  for (PetscInt e = 0; e < n; e++) {
    const PetscInt row = rows[e] - rstart;

    PetscCheck(row >= 0 && row < A->nrows, PETSC_COMM_SELF, PETSC_ERR_SUP, "SG-DIA: MatZeroRows of row %" PetscInt_FMT ", which another rank owns", rows[e]);
    for (PetscInt col = 0; col < A->nsten * A->dof; col++) A->values[col * A->nrows + row] = 0.0;
    A->values[(A->center * A->dof + row % A->dof) * A->nrows + row] = diag;
    if (ba) ba[row] = diag * xa[row];
  }
  if (x && b) {
    PetscCall(VecRestoreArrayRead(x, &xa));
    PetscCall(VecRestoreArray(b, &ba));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* MatZeroRowsColumns: the shell would record it and apply it only in the MatMult it wraps, which
   is not ours; refuse rather than ignore it. */
static PetscErrorCode MatZeroRowsColumns_SGDIA(Mat mat, PetscInt n, const PetscInt rows[], PetscScalar diag, Vec x, Vec b)
{
  PetscFunctionBeginUser;
  (void)n, (void)rows, (void)diag, (void)x, (void)b;
  SETERRQ(PetscObjectComm((PetscObject)mat), PETSC_ERR_SUP, "SG-DIA does not support MatZeroRowsColumns; convert it to AIJ first (MatConvert)");
}

/* ---------------------------------------------------------------------------------------------
   AIJ: copy, convert, view
   --------------------------------------------------------------------------------------------- */

/* One MatSetValues per grid point (dof rows, up to nsten*dof columns), with the global indices
   taken from B's local-to-global mapping (the DMDA's): AIJ's insertion dominates, not the bytes. */
PetscErrorCode MatSGDIACopyToAIJ(Mat mat, Mat B)
{
  SGDIA                 *A;
  ISLocalToGlobalMapping ltog;
  const PetscInt        *global;
  PetscInt               m, n, nltog, dof, nq, *rows, *cols, *used;
  PetscScalar           *vals;
  PetscBool              isSG;

  PetscFunctionBeginUser;
  PetscCall(SGDIAGetContext(mat, &A));
  PetscCall(SGDIASyncHost(A));
  PetscCall(MatIsSGDIA(B, &isSG));
  PetscCheck(!isSG, PetscObjectComm((PetscObject)mat), PETSC_ERR_ARG_WRONG, "MatSGDIACopyToAIJ: the destination is an SG-DIA matrix; use MatCopy");
  PetscCall(MatGetLocalSize(B, &m, &n));
  PetscCheck(m == A->nrows && n == A->nrows, PETSC_COMM_SELF, PETSC_ERR_ARG_SIZ, "MatSGDIACopyToAIJ: the destination has %" PetscInt_FMT " x %" PetscInt_FMT " local rows and columns, the SG-DIA matrix %" PetscInt_FMT "; create it with DMCreateMatrix on the same DMDA", m, n, A->nrows);
  PetscCall(MatGetLocalToGlobalMapping(B, &ltog, NULL));
  PetscCheck(ltog, PetscObjectComm((PetscObject)mat), PETSC_ERR_ARG_WRONG, "MatSGDIACopyToAIJ: the destination has no local-to-global mapping; create it with DMCreateMatrix on the DMDA of the SG-DIA matrix");
  PetscCall(ISLocalToGlobalMappingGetSize(ltog, &nltog));
  PetscCheck(nltog == box_size(&A->ghost) * A->dof, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "MatSGDIACopyToAIJ: the destination's local-to-global mapping has %" PetscInt_FMT " entries, not the %" PetscInt_FMT " of the DMDA's ghosted vector; create it with DMCreateMatrix on the same DMDA", nltog, box_size(&A->ghost) * A->dof);

  dof = A->dof;
  nq  = A->nsten * dof;
  PetscCall(PetscMalloc4(dof, &rows, nq, &cols, dof * nq, &vals, A->nsten, &used));
  PetscCall(ISLocalToGlobalMappingGetIndices(ltog, &global));
  PetscCall(MatZeroEntries(B));
  for (PetscInt k = A->owned.s[2]; k < A->owned.s[2] + A->owned.m[2]; k++)
    for (PetscInt j = A->owned.s[1]; j < A->owned.s[1] + A->owned.m[1]; j++)
      for (PetscInt i = A->owned.s[0]; i < A->owned.s[0] + A->owned.m[0]; i++) {
        const PetscInt p = box_index(&A->owned, i, j, k), g = box_index(&A->ghost, i, j, k);
        PetscInt       nu = 0, ncol;

        for (PetscInt s = 0; s < A->nsten; s++) {
          const PetscInt *o = A->offsets + 3 * s;
          if (box_contains(&A->ghost, i + o[0], j + o[1], k + o[2])) used[nu++] = s;
        }
        ncol = nu * dof;
        for (PetscInt r = 0; r < dof; r++) rows[r] = global[g * dof + r];
        for (PetscInt u = 0; u < nu; u++)
          for (PetscInt c = 0; c < dof; c++) {
            const PetscInt s = used[u];
            cols[u * dof + c] = global[(g + A->lin_ghost[s]) * dof + c];
            for (PetscInt r = 0; r < dof; r++) vals[r * ncol + u * dof + c] = A->values[(s * dof + c) * A->nrows + p * dof + r];
          }
        PetscCall(MatSetValues(B, dof, rows, ncol, cols, vals, INSERT_VALUES));
      }
  PetscCall(ISLocalToGlobalMappingRestoreIndices(ltog, &global));
  PetscCall(PetscFree4(rows, cols, vals, used));
  PetscCall(MatAssemblyBegin(B, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(B, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatConvert_SGDIA(Mat mat, MatType type, MatReuse reuse, Mat *out)
{
  static const char *const aij[] = {MATAIJ, MATSEQAIJ, MATMPIAIJ, MATAIJCUSPARSE, MATSEQAIJCUSPARSE, MATMPIAIJCUSPARSE};
  SGDIA                   *A;
  PetscBool                ok = PETSC_FALSE, match;
  Mat                      B;

  PetscFunctionBeginUser;
  PetscCall(MatShellGetContext(mat, &A));
  for (size_t t = 0; t < sizeof aij / sizeof aij[0]; t++) {
    PetscCall(PetscStrcmp(type, aij[t], &match));
    if (match) ok = PETSC_TRUE;
  }
  PetscCheck(ok, PetscObjectComm((PetscObject)mat), PETSC_ERR_SUP, "SG-DIA converts only to AIJ (aij, seqaij, mpiaij or their cusparse forms), not to %s", type);
  if (reuse == MAT_REUSE_MATRIX) {
    PetscCall(MatSGDIACopyToAIJ(mat, *out));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(StnDMCreateAIJ(A->da, type, &B)); /* empty, with the DMDA's nonzero pattern */
  PetscCall(MatSGDIACopyToAIJ(mat, B));
  if (reuse == MAT_INPLACE_MATRIX) PetscCall(MatHeaderReplace(mat, &B));
  else *out = B;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ASCII info formats: the layout. Any other format: the entries, through an AIJ copy. */
static PetscErrorCode MatView_SGDIA(Mat mat, PetscViewer viewer)
{
  SGDIA            *A;
  PetscBool         isascii;
  PetscViewerFormat format;

  PetscFunctionBeginUser;
  PetscCall(MatShellGetContext(mat, &A));
  PetscCall(SGDIASyncHost(A));
  PetscCall(PetscObjectTypeCompare((PetscObject)viewer, PETSCVIEWERASCII, &isascii));
  PetscCall(PetscViewerGetFormat(viewer, &format));
  if (isascii && (format == PETSC_VIEWER_ASCII_INFO || format == PETSC_VIEWER_ASCII_INFO_DETAIL)) {
    PetscInt    rows, cols;
    size_t      len = 64 + 40 * (size_t)A->nsten, at = 0;
    char       *line;
    const char *how = A->scatter ? "through a ghosted local vector (MPI or periodic)" : "directly from the input vector";

    PetscCall(MatGetSize(mat, &rows, &cols));
    PetscCall(PetscViewerASCIIPrintf(viewer, "SG-DIA: %" PetscInt_FMT " rows, dof %" PetscInt_FMT ", %" PetscInt_FMT " block diagonals, %.0f bytes of values (no column indices)\n", rows, A->dof, A->nsten, (double)sizeof(PetscScalar) * (double)rows * (double)(A->nsten * A->dof)));
    PetscCall(PetscMalloc1(len, &line));
    line[0] = 0;
    for (PetscInt s = 0; s < A->nsten; s++) {
      PetscCall(PetscSNPrintf(line + at, len - at, " (%" PetscInt_FMT ",%" PetscInt_FMT ",%" PetscInt_FMT ")", A->offsets[3 * s], A->offsets[3 * s + 1], A->offsets[3 * s + 2]));
      PetscCall(PetscStrlen(line, &at));
    }
    PetscCall(PetscViewerASCIIPrintf(viewer, "block diagonal offsets (di,dj,dk):%s\n", line));
    PetscCall(PetscFree(line));
    PetscCall(PetscViewerASCIIPrintf(viewer, "neighbours read %s\n", how));
    if (format == PETSC_VIEWER_ASCII_INFO_DETAIL) {
      PetscMPIInt rank;
      PetscCallMPI(MPI_Comm_rank(PetscObjectComm((PetscObject)mat), &rank));
      PetscCall(PetscViewerASCIIPushSynchronized(viewer));
      PetscCall(PetscViewerASCIISynchronizedPrintf(viewer, "[%d] owned box [%" PetscInt_FMT ",%" PetscInt_FMT ")x[%" PetscInt_FMT ",%" PetscInt_FMT ")x[%" PetscInt_FMT ",%" PetscInt_FMT "): %" PetscInt_FMT " rows, %" PetscInt_FMT " points that need no ghost, %.0f stored entries with a neighbour\n", rank, A->owned.s[0], A->owned.s[0] + A->owned.m[0], A->owned.s[1], A->owned.s[1] + A->owned.m[1], A->owned.s[2], A->owned.s[2] + A->owned.m[2], A->nrows, box_size(&A->inner_owned), (double)A->nnz));
      PetscCall(PetscViewerFlush(viewer));
      PetscCall(PetscViewerASCIIPopSynchronized(viewer));
    }
  } else {
    Mat         B;
    const char *name;

    PetscCall(MatConvert(mat, MATAIJ, MAT_INITIAL_MATRIX, &B));
    if (!isascii || format == PETSC_VIEWER_ASCII_MATLAB) { /* where the name labels the data */
      PetscCall(PetscObjectGetName((PetscObject)mat, &name));
      PetscCall(PetscObjectSetName((PetscObject)B, name));
    }
    PetscCall(MatView(B, viewer));
    PetscCall(MatDestroy(&B));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---------------------------------------------------------------------------------------------
   Values for the Jacobian kernels
   --------------------------------------------------------------------------------------------- */

PetscErrorCode MatSGDIAGetArray(Mat mat, PetscScalar **values)
{
  SGDIA *A;

  PetscFunctionBeginUser;
  PetscCall(SGDIAGetContext(mat, &A));
  PetscCall(SGDIASyncHost(A));
  *values = A->values;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Call MatAssemblyBegin/End afterwards, as for any matrix: that increases the state of the
   matrix, which is how preconditioners learn that the values changed (the public API has no
   other way to do it, and assembling here would run -mat_view twice per Jacobian). */
PetscErrorCode MatSGDIARestoreArray(Mat mat, PetscScalar **values)
{
  SGDIA *A;

  PetscFunctionBeginUser;
  PetscCall(SGDIAGetContext(mat, &A));
  PetscCheck(*values == A->values, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "MatSGDIARestoreArray: not the array MatSGDIAGetArray returned");
  SGDIAHostChanged(A);
  *values = NULL;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatSGDIAGetLayout(Mat mat, PetscInt *nsten, const PetscInt **offsets, PetscInt *dof, PetscInt *npoints)
{
  SGDIA *A;

  PetscFunctionBeginUser;
  PetscCall(SGDIAGetContext(mat, &A));
  if (nsten) *nsten = A->nsten;
  if (offsets) *offsets = A->offsets;
  if (dof) *dof = A->dof;
  if (npoints) *npoints = A->npoints;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---------------------------------------------------------------------------------------------
   Create and destroy
   --------------------------------------------------------------------------------------------- */

static PetscErrorCode MatDestroy_SGDIA(Mat mat)
{
  SGDIA *A;

  PetscFunctionBeginUser;
  PetscCall(MatShellGetContext(mat, &A));
  PetscCall(VecScatterDestroy(&A->ghosts));
  PetscCall(VecDestroy(&A->xlocal));
  PetscCall(DMDestroy(&A->da));
  PetscCall(PetscFree3(A->offsets, A->lin_owned, A->lin_ghost));
  PetscCall(PetscFree3(A->colv, A->colx, A->line));
  PetscCall(PetscFree(A->values));
#if defined(PETSC_HAVE_CUDA)
  if (A->dvalues) STN_CUDA_CALL(StnCUDAFree(A->dvalues));
#endif
  PetscCall(PetscFree(A->invblock));
  PetscCall(PetscFree(A));
  PetscCall(PetscObjectComposeFunction((PetscObject)mat, sgdia_query, NULL));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The checks of MatCreateSGDIA: the DMDA and the offsets must fit each other (see the top). */
static PetscErrorCode SGDIACheckGrid(DM da, PetscInt nsten, const PetscInt offsets[])
{
  PetscInt        dim, size[3], width, w[3] = {0, 0, 0};
  DMBoundaryType  bt[3];
  DMDAStencilType st;
  PetscBool       isda;
  MPI_Comm        comm = PetscObjectComm((PetscObject)da);
  const char      axis[3] = {'x', 'y', 'z'};

  PetscFunctionBeginUser;
  PetscCall(PetscObjectTypeCompare((PetscObject)da, DMDA, &isda));
  PetscCheck(isda, comm, PETSC_ERR_ARG_WRONG, "MatCreateSGDIA needs a DMDA");
  PetscCall(DMDAGetInfo(da, &dim, &size[0], &size[1], &size[2], NULL, NULL, NULL, NULL, &width, &bt[0], &bt[1], &bt[2], &st));
  PetscCheck(nsten > 0, comm, PETSC_ERR_ARG_OUTOFRANGE, "MatCreateSGDIA: the stencil needs at least one offset");
  for (PetscInt s = 0; s < nsten; s++) {
    const PetscInt *o     = offsets + 3 * s;
    PetscInt        moves = 0;
    for (PetscInt d = 0; d < 3; d++) {
      PetscCheck(d < dim || o[d] == 0, comm, PETSC_ERR_ARG_OUTOFRANGE, "MatCreateSGDIA: offset %" PetscInt_FMT " (%" PetscInt_FMT ",%" PetscInt_FMT ",%" PetscInt_FMT ") moves in %c, which a %" PetscInt_FMT "D grid does not have", s, o[0], o[1], o[2], axis[d], dim);
      PetscCheck(PetscAbsInt(o[d]) <= width, comm, PETSC_ERR_ARG_OUTOFRANGE, "MatCreateSGDIA: offset %" PetscInt_FMT " (%" PetscInt_FMT ",%" PetscInt_FMT ",%" PetscInt_FMT ") reaches further than the DMDA stencil width %" PetscInt_FMT, s, o[0], o[1], o[2], width);
      w[d] = PetscMax(w[d], PetscAbsInt(o[d]));
      moves += (o[d] != 0);
    }
    PetscCheck(moves < 2 || st == DMDA_STENCIL_BOX, comm, PETSC_ERR_ARG_INCOMP, "MatCreateSGDIA: offset %" PetscInt_FMT " (%" PetscInt_FMT ",%" PetscInt_FMT ",%" PetscInt_FMT ") is diagonal, which needs a DMDA with DMDA_STENCIL_BOX", s, o[0], o[1], o[2]);
    for (PetscInt t = 0; t < s; t++) PetscCheck(o[0] != offsets[3 * t] || o[1] != offsets[3 * t + 1] || o[2] != offsets[3 * t + 2], comm, PETSC_ERR_ARG_WRONG, "MatCreateSGDIA: offsets %" PetscInt_FMT " and %" PetscInt_FMT " are both (%" PetscInt_FMT ",%" PetscInt_FMT ",%" PetscInt_FMT ")", t, s, o[0], o[1], o[2]);
  }
  for (PetscInt d = 0; d < dim; d++) {
    PetscCheck(bt[d] == DM_BOUNDARY_NONE || bt[d] == DM_BOUNDARY_PERIODIC, comm, PETSC_ERR_SUP, "MatCreateSGDIA: the DMDA boundary type in %c is %s; SG-DIA supports DM_BOUNDARY_NONE and DM_BOUNDARY_PERIODIC", axis[d], DMBoundaryTypes[bt[d]]);
    PetscCheck(bt[d] != DM_BOUNDARY_PERIODIC || size[d] >= 2 * w[d] + 1, comm, PETSC_ERR_ARG_SIZ, "MatCreateSGDIA: a periodic direction needs at least %" PetscInt_FMT " points for offsets up to %" PetscInt_FMT ", but %c has %" PetscInt_FMT, 2 * w[d] + 1, w[d], axis[d], size[d]);
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* How many owned points i have their neighbour i + o in the domain (all of them if periodic). */
static PetscInt count_valid(PetscInt start, PetscInt extent, PetscInt o, PetscInt size, PetscBool periodic)
{
  if (periodic) return extent;
  return PetscMax(0, PetscMin(start + extent, size - o) - PetscMax(start, -o));
}

/* Boxes, linear offsets, the rows that need no ghost and the rest (the shell), and the flop
   count, from the DMDA and the offsets. */
static PetscErrorCode SGDIASetUpLayout(SGDIA *A)
{
  PetscInt       xs, ys, zs, xm, ym, zm, gxs, gys, gzs, gxm, gym, gzm, size[3];
  PetscInt       inner_lo[3], inner_hi[3], deep_lo[3], deep_hi[3];
  DMBoundaryType bt[3];
  PetscMPIInt    nranks;
  PetscBool      periodic = PETSC_FALSE;

  PetscFunctionBeginUser;
  PetscCall(DMDAGetInfo(A->da, NULL, &size[0], &size[1], &size[2], NULL, NULL, NULL, NULL, NULL, &bt[0], &bt[1], &bt[2], NULL));
  PetscCall(DMDAGetCorners(A->da, &xs, &ys, &zs, &xm, &ym, &zm));
  PetscCall(DMDAGetGhostCorners(A->da, &gxs, &gys, &gzs, &gxm, &gym, &gzm));
  /* DMDAGetCorners gives 0 and 1 in the directions a grid does not have. */
  A->owned   = box_make(xs, ys, zs, xs + xm, ys + ym, zs + zm);
  A->ghost   = box_make(gxs, gys, gzs, gxs + gxm, gys + gym, gzs + gzm);
  A->npoints = box_size(&A->owned);
  A->nrows   = A->npoints * A->dof;
  A->center  = -1;
  for (int d = 0; d < 3; d++) A->dmin[d] = A->dmax[d] = 0;
  for (PetscInt s = 0; s < A->nsten; s++) {
    const PetscInt *o = A->offsets + 3 * s;
    A->lin_owned[s]   = (o[2] * A->owned.m[1] + o[1]) * A->owned.m[0] + o[0];
    A->lin_ghost[s]   = (o[2] * A->ghost.m[1] + o[1]) * A->ghost.m[0] + o[0];
    if (!o[0] && !o[1] && !o[2]) A->center = s;
    for (int d = 0; d < 3; d++) {
      A->dmin[d] = s ? PetscMin(A->dmin[d], o[d]) : o[d];
      A->dmax[d] = s ? PetscMax(A->dmax[d], o[d]) : o[d];
    }
  }
  /* A side of the owned box needs ghosts unless it lies on a non-periodic edge of the domain. The
     rows within reach of such a side need them (outside inner_owned); the owned points they read
     lie within dmax - dmin of it (outside the deep box, copied into the work vector). */
  for (int d = 0; d < 3; d++) {
    const PetscBool wraps = (PetscBool)(d < A->dim && bt[d] == DM_BOUNDARY_PERIODIC);
    const PetscInt  os = A->owned.s[d], oe = os + A->owned.m[d], reach = A->dmax[d] - A->dmin[d];
    const PetscBool low = (PetscBool)(wraps || os > 0), high = (PetscBool)(wraps || oe < (d < A->dim ? size[d] : 1));
    inner_lo[d] = low ? PetscMax(os, os - A->dmin[d]) : os;
    inner_hi[d] = high ? PetscMin(oe, oe - A->dmax[d]) : oe;
    deep_lo[d]  = low ? os + reach : os;
    deep_hi[d]  = high ? oe - reach : oe;
  }
  A->inner_owned = box_make(inner_lo[0], inner_lo[1], inner_lo[2], inner_hi[0], inner_hi[1], inner_hi[2]);
  A->deep        = box_make(deep_lo[0], deep_lo[1], deep_lo[2], deep_hi[0], deep_hi[1], deep_hi[2]);
  shell_slabs(A);

  for (PetscInt d = 0; d < A->dim; d++) periodic = (PetscBool)(periodic || bt[d] == DM_BOUNDARY_PERIODIC);
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)A->da), &nranks));
  A->scatter = (PetscBool)(nranks > 1 || periodic);

  A->nnz = 0;
  for (PetscInt s = 0; s < A->nsten; s++) {
    PetscLogDouble n = 1;
    for (int d = 0; d < 3; d++) n *= (PetscLogDouble)count_valid(A->owned.s[d], A->owned.m[d], A->offsets[3 * s + d], d < A->dim ? size[d] : 1, (PetscBool)(d < A->dim && bt[d] == DM_BOUNDARY_PERIODIC));
    A->nnz += n * A->dof * A->dof;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The work vector and the scatter of the ghost points that some owned point reaches (see the
   top; SGDIASetUpLayout works out which owned layers are copied in as well). */
static PetscErrorCode SGDIASetUpScatter(SGDIA *A)
{
  ISLocalToGlobalMapping ltog;
  const PetscInt        *global;
  PetscInt               n = 0, *from, *to;
  IS                     isfrom, isto;
  Vec                    xg;

  PetscFunctionBeginUser;
  PetscCall(DMCreateLocalVector(A->da, &A->xlocal));
  PetscCall(DMGetLocalToGlobalMapping(A->da, &ltog));
  PetscCall(ISLocalToGlobalMappingGetIndices(ltog, &global));
  PetscCall(PetscMalloc2(box_size(&A->ghost) * A->dof, &from, box_size(&A->ghost) * A->dof, &to));
  for (PetscInt k = A->ghost.s[2]; k < A->ghost.s[2] + A->ghost.m[2]; k++)
    for (PetscInt j = A->ghost.s[1]; j < A->ghost.s[1] + A->ghost.m[1]; j++)
      for (PetscInt i = A->ghost.s[0]; i < A->ghost.s[0] + A->ghost.m[0]; i++) {
        const PetscInt g       = box_index(&A->ghost, i, j, k);
        PetscBool      reached = PETSC_FALSE;
        if (box_contains(&A->owned, i, j, k)) continue;
        for (PetscInt s = 0; s < A->nsten && !reached; s++) reached = box_contains(&A->owned, i - A->offsets[3 * s], j - A->offsets[3 * s + 1], k - A->offsets[3 * s + 2]);
        if (!reached) continue;
        for (PetscInt c = 0; c < A->dof; c++) {
          PetscCheck(global[g * A->dof + c] >= 0, PETSC_COMM_SELF, PETSC_ERR_PLIB, "SG-DIA: ghost point (%" PetscInt_FMT ",%" PetscInt_FMT ",%" PetscInt_FMT ") has no global index", i, j, k);
          from[n] = global[g * A->dof + c];
          to[n++] = g * A->dof + c;
        }
      }
  PetscCall(ISLocalToGlobalMappingRestoreIndices(ltog, &global));
  PetscCall(ISCreateGeneral(PETSC_COMM_SELF, n, from, PETSC_COPY_VALUES, &isfrom));
  PetscCall(ISCreateGeneral(PETSC_COMM_SELF, n, to, PETSC_COPY_VALUES, &isto));
  PetscCall(PetscFree2(from, to));
  PetscCall(DMGetGlobalVector(A->da, &xg));
  PetscCall(VecScatterCreate(xg, isfrom, A->xlocal, isto, &A->ghosts));
  PetscCall(DMRestoreGlobalVector(A->da, &xg));
  PetscCall(ISDestroy(&isfrom));
  PetscCall(ISDestroy(&isto));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The operations of the shell; the comment at the top says why these and not the shell's own. */
static PetscErrorCode SGDIASetOperations(Mat mat)
{
  PetscFunctionBeginUser;
  PetscCall(MatShellSetOperation(mat, MATOP_MULT, (void (*)(void))MatMult_SGDIA));
  PetscCall(MatShellSetOperation(mat, MATOP_MULT_ADD, (void (*)(void))MatMultAdd_SGDIA));
  PetscCall(MatShellSetOperation(mat, MATOP_GET_DIAGONAL, (void (*)(void))MatGetDiagonal_SGDIA));
  PetscCall(MatShellSetOperation(mat, MATOP_INVERT_BLOCK_DIAGONAL, (void (*)(void))MatInvertBlockDiagonal_SGDIA));
  PetscCall(MatShellSetOperation(mat, MATOP_VIEW, (void (*)(void))MatView_SGDIA));
  PetscCall(MatShellSetOperation(mat, MATOP_ZERO_ENTRIES, (void (*)(void))MatZeroEntries_SGDIA));
  PetscCall(MatShellSetOperation(mat, MATOP_SCALE, (void (*)(void))MatScale_SGDIA));
  PetscCall(MatShellSetOperation(mat, MATOP_SHIFT, (void (*)(void))MatShift_SGDIA));
  PetscCall(MatShellSetOperation(mat, MATOP_DIAGONAL_SET, (void (*)(void))MatDiagonalSet_SGDIA));
  PetscCall(MatShellSetOperation(mat, MATOP_ZERO_ROWS, (void (*)(void))MatZeroRows_SGDIA));
  PetscCall(MatShellSetOperation(mat, MATOP_ZERO_ROWS_COLUMNS, (void (*)(void))MatZeroRowsColumns_SGDIA));
  PetscCall(MatShellSetOperation(mat, MATOP_COPY, (void (*)(void))MatCopy_SGDIA));
  PetscCall(MatShellSetOperation(mat, MATOP_DUPLICATE, (void (*)(void))MatDuplicate_SGDIA));
  PetscCall(MatShellSetOperation(mat, MATOP_CONVERT, (void (*)(void))MatConvert_SGDIA));
  PetscCall(MatShellSetOperation(mat, MATOP_DESTROY, (void (*)(void))MatDestroy_SGDIA));
  PetscFunctionReturn(PETSC_SUCCESS);
}

#if defined(PETSC_HAVE_CUDA)
/* Device memory for the values and the layout the kernels need. */
static PetscErrorCode SGDIASetUpDevice(SGDIA *A)
{
  PetscInt        M, N, P;
  DMBoundaryType  bt[3];
  size_t          bytes = sizeof(PetscScalar) * (size_t)(A->nsten * A->dof * A->nrows);

  PetscFunctionBeginUser;
  PetscCheck(A->nsten <= STN_MAX_STEN, PETSC_COMM_SELF, PETSC_ERR_SUP, "SG-DIA on the GPU: at most %d block diagonals", STN_MAX_STEN);
  PetscCall(DMDAGetInfo(A->da, NULL, &M, &N, &P, NULL, NULL, NULL, NULL, NULL, &bt[0], &bt[1], &bt[2], NULL));
  A->box.dim = (int)A->dim;
  A->box.dof = (int)A->dof;
  A->box.nsten = (int)A->nsten;
  A->box.xs = (int)A->owned.s[0], A->box.ys = (int)A->owned.s[1], A->box.zs = (int)A->owned.s[2];
  A->box.xm = (int)A->owned.m[0], A->box.ym = (int)A->owned.m[1], A->box.zm = (int)A->owned.m[2];
  A->box.gxs = (int)A->ghost.s[0], A->box.gys = (int)A->ghost.s[1], A->box.gzs = (int)A->ghost.s[2];
  A->box.gxm = (int)A->ghost.m[0], A->box.gym = (int)A->ghost.m[1], A->box.gzm = (int)A->ghost.m[2];
  A->box.mx = (int)M, A->box.my = (int)N, A->box.mz = (int)P;
  for (int d = 0; d < 3; d++) A->box.periodic[d] = d < A->dim && bt[d] == DM_BOUNDARY_PERIODIC;
  for (PetscInt e = 0; e < 3 * A->nsten; e++) A->box.off[e] = (int)A->offsets[e];
  PetscCall(StnTuneApplySGDIA(&A->box)); /* the load policy, and the tuned block size if the cache has one */
  STN_CUDA_CALL(StnCUDAMalloc((void **)&A->dvalues, bytes));
  STN_CUDA_CALL(StnSGDIAZeroCUDA(A->dvalues, (long)(A->nsten * A->dof * A->nrows), NULL));
  A->device     = PETSC_TRUE;
  A->host_stale = PETSC_TRUE; /* no host copy yet */
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatSGDIAGetArrayDevice(Mat mat, PetscScalar **values)
{
  SGDIA *A;

  PetscFunctionBeginUser;
  PetscCall(SGDIAGetContext(mat, &A));
  PetscCheck(A->device, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "MatSGDIAGetArrayDevice: this SG-DIA matrix lives on the host (its DMDA's vectors are not CUDA vectors)");
  PetscCall(SGDIASyncDevice(A));
  *values = A->dvalues;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatSGDIARestoreArrayDevice(Mat mat, PetscScalar **values)
{
  SGDIA *A;

  PetscFunctionBeginUser;
  PetscCall(SGDIAGetContext(mat, &A));
  PetscCheck(*values == A->dvalues, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "MatSGDIARestoreArrayDevice: not the array MatSGDIAGetArrayDevice returned");
  A->host_stale = PETSC_TRUE; /* the kernels wrote the device copy */
  *values = NULL;
  PetscFunctionReturn(PETSC_SUCCESS);
}
#endif

PetscErrorCode MatCreateSGDIA(DM da, PetscInt nsten, const PetscInt offsets[], Mat *mat)
{
  SGDIA   *A;
  PetscInt nvalues, stencil_dims[3], stencil_starts[3];
  VecType  vtype;

  PetscFunctionBeginUser;
  PetscCall(SGDIACheckGrid(da, nsten, offsets));
  PetscCall(PetscNew(&A));
  PetscCall(PetscObjectReference((PetscObject)da));
  A->da    = da;
  A->nsten = nsten;
  PetscCall(DMDAGetInfo(da, &A->dim, NULL, NULL, NULL, NULL, NULL, NULL, &A->dof, NULL, NULL, NULL, NULL, NULL));
  PetscCall(PetscMalloc3(3 * nsten, &A->offsets, nsten, &A->lin_owned, nsten, &A->lin_ghost));
  PetscCall(PetscArraycpy(A->offsets, offsets, 3 * nsten));
  PetscCall(PetscMalloc3(nsten * A->dof, &A->colv, nsten * A->dof, &A->colx, 3 * nsten, &A->line));
  PetscCall(SGDIASetUpLayout(A));
  PetscCall(PetscIntMultError(nsten * A->dof, A->nrows, &nvalues));

  PetscCall(MatCreate(PetscObjectComm((PetscObject)da), mat));
  PetscCall(MatSetSizes(*mat, A->nrows, A->nrows, PETSC_DETERMINE, PETSC_DETERMINE));
  PetscCall(MatSetBlockSize(*mat, A->dof));
  PetscCall(MatSetType(*mat, MATSHELL));
  PetscCall(MatShellSetContext(*mat, A));
  PetscCall(MatShellSetManageScalingShifts(*mat));
  PetscCall(SGDIASetOperations(*mat));
  PetscCall(DMGetVecType(da, &vtype));
  PetscCall(MatShellSetVecType(*mat, vtype));
#if defined(PETSC_HAVE_CUDA)
  {
    PetscBool cuda;
    PetscCall(PetscStrbeginswith(vtype, VECCUDA, &cuda));
    if (!cuda) PetscCall(PetscStrbeginswith(vtype, VECSEQCUDA, &cuda));
    if (!cuda) PetscCall(PetscStrbeginswith(vtype, VECMPICUDA, &cuda));
    if (!cuda) PetscCall(PetscStrcmp(vtype, VECSTNCUDA, &cuda));
    if (cuda) PetscCall(SGDIASetUpDevice(A));
  }
#endif
  if (!A->device) PetscCall(PetscCalloc1(nvalues, &A->values)); /* on the GPU: SGDIASyncHost */
  PetscCall(MatSetUp(*mat));
  /* As DMCreateMatrix does, so that MatConvert passes the grid on to the AIJ copy. */
  PetscCall(DMDAGetGhostCorners(da, &stencil_starts[0], &stencil_starts[1], &stencil_starts[2], &stencil_dims[0], &stencil_dims[1], &stencil_dims[2]));
  PetscCall(MatSetStencil(*mat, A->dim, stencil_dims, stencil_starts, A->dof));
  PetscCall(MatSetDM(*mat, da));
  PetscCall(PetscObjectComposeFunction((PetscObject)*mat, sgdia_query, SGDIAQueryContext));
  PetscFunctionReturn(PETSC_SUCCESS);
}
