/*
** stnhalo.c: the device ghost exchange of stnhalo.h, set up from the DMDA's boxes.
**
** Which values go where is worked out from every rank's owned and ghosted boxes (gathered once),
** not from the DMDA's neighbour list: rank s sends rank r the points of its owned box that, moved
** by a periodic shift (0 or -+ the grid size in a periodic direction), lie in r's ghosted box; the
** owned boxes partition the grid, so each ghost point is written once. Rank r numbers the blocks
** it receives in one order that every rank computes alike (by sender, then shift), and block q
** raises r's flag q, so r waits on exactly the flags of its senders.
**
** The memory a rank shares: 512 bytes of flags and a block counter, then its two ghosted arrays.
*/
#include "stnhalo.h"

#if defined(PETSC_HAVE_CUDA)
  #include "stnhalo_cuda.h"

  #define HEADER_BYTES 512 /* 32 flags (8 bytes), the put's block counter, padding */

static PetscLogEvent event_create, event_exchange; /* -log_view: StnHaloCreate, StnHaloExchange */

typedef struct {
  char handle[STN_HALO_IPC_BYTES];
  int  os[3], om[3], gs[3], gm[3];
  int  ok;
} RankInfo;

struct StnHalo_ {
  MPI_Comm   comm;
  char      *mem;     /* this rank's shared memory */
  char     **mapped;  /* the other ranks' memory, by rank (NULL: not mapped) */
  int        size;
  double    *array[2];
  StnHaloPut put[2];  /* the put into array[e % 2] of the receivers, exchange e */
  StnHaloPut *plan;   /* the same two in device memory, which the kernel reads */
  long long  points;  /* the points each put sends */
  unsigned   mask;    /* the flags this rank waits on */
  long long  epoch;
};

static size_t array_bytes(const RankInfo *r, int dof) { return (((size_t)r->gm[0] * r->gm[1] * r->gm[2] * dof * sizeof(double)) + 255) / 256 * 256; }

/* The block rank `from` sends rank `to` with shift number sh (3^3 of them, each direction's
   shift -n, 0 or +n; only 0 where not periodic): the points *s, *m of from's owned box that land
   in to's ghosted box, shifted by shift. Returns 0 when there are none (or it is the owner's own
   box, not a ghost). */
static int block(const RankInfo *ri, int from, int to, int sh, int dim, const PetscInt n[3], const DMBoundaryType bt[3], int s[3], int m[3], int shift[3])
{
  int c = sh;

  for (int d = 0; d < 3; d++, c /= 3) {
    shift[d] = (c % 3 - 1) * (int)n[d];
    if (shift[d] && (d >= dim || bt[d] != DM_BOUNDARY_PERIODIC)) return 0;
  }
  if (from == to && !shift[0] && !shift[1] && !shift[2]) return 0;
  for (int d = 0; d < 3; d++) {
    const int lo = PetscMax(ri[from].os[d] + shift[d], ri[to].gs[d]), hi = PetscMin(ri[from].os[d] + ri[from].om[d] + shift[d], ri[to].gs[d] + ri[to].gm[d]);
    if (hi <= lo) return 0;
    s[d] = lo - shift[d], m[d] = hi - lo;
  }
  return 1;
}

/* The flag of the block (from, sh) among the blocks `to` receives, or -1. */
static int flag_of(const RankInfo *ri, int size, int from, int to, int want_sh, int dim, const PetscInt n[3], const DMBoundaryType bt[3])
{
  int q = 0, s[3], m[3], shift[3];

  for (int r = 0; r < size; r++)
    for (int sh = 0; sh < 27; sh++)
      if (block(ri, r, to, sh, dim, n, bt, s, m, shift)) {
        if (r == from && sh == want_sh) return q;
        q++;
      }
  return -1;
}

static PetscErrorCode fail(StnHalo *h, const char **why, const char *reason)
{
  PetscFunctionBeginUser;
  *why = reason;
  PetscCall(StnHaloDestroy(h));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Where a rank's values live: its owned box and the box of its ghosted array, dof values per point,
   on a grid of dim dimensions and n points per direction (bt: periodic or not). */
typedef struct {
  int            dim, dof;
  PetscInt       n[3];
  DMBoundaryType bt[3];
  int            os[3], om[3], gs[3], gm[3];
} Layout;

static PetscErrorCode create(MPI_Comm comm, const Layout *L, StnHalo *hp, const char **why)
{
  MPI_Comm       node;
  PetscMPIInt    size, rank, node_size;
  const int      dim = L->dim, dof = L->dof;
  const PetscInt *n = L->n;
  const DMBoundaryType *bt = L->bt;
  RankInfo      *ri, me;
  StnHalo        h;
  int            ok, nq = 0;

  PetscFunctionBeginUser;
  *hp  = NULL;
  *why = NULL;
  PetscCall(PetscMemzero(&me, sizeof me));
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  if (size == 1) {
    *why = "one rank";
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCallMPI(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node));
  PetscCallMPI(MPI_Comm_size(node, &node_size));
  PetscCallMPI(MPI_Comm_free(&node));
  if (node_size != size) {
    *why = "the ranks are on several nodes";
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(PetscNew(&h));
  *hp     = h;
  h->comm = comm;
  h->size = size;
  for (int d = 0; d < 3; d++) me.os[d] = L->os[d], me.om[d] = L->om[d], me.gs[d] = L->gs[d], me.gm[d] = L->gm[d];
  {
    const size_t bytes = array_bytes(&me, dof);
    me.ok              = StnHaloAlloc((void **)&h->mem, HEADER_BYTES + 2 * bytes) == 0 && StnHaloHandle(h->mem, me.handle) == 0;
    if (me.ok) h->array[0] = (double *)(h->mem + HEADER_BYTES), h->array[1] = (double *)(h->mem + HEADER_BYTES + bytes);
  }
  PetscCall(PetscMalloc1(size, &ri));
  PetscCall(PetscCalloc1(size, &h->mapped));
  PetscCallMPI(MPI_Allgather(&me, (PetscMPIInt)sizeof me, MPI_BYTE, ri, (PetscMPIInt)sizeof me, MPI_BYTE, comm));
  ok = 1;
  for (int r = 0; r < size; r++) ok = ok && ri[r].ok;
  if (!ok) {
    PetscCall(PetscFree(ri));
    PetscCall(fail(hp, why, "device memory could not be shared"));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  /* The blocks this rank sends, and the flags it waits on. */
  for (int e = 0; e < 2; e++) {
    StnHaloPut *p = &h->put[e];
    p->dof         = dof;
    p->blocks_done = (unsigned *)(h->mem + 32 * sizeof(long long));
    for (int d = 0; d < 3; d++) p->os[d] = me.os[d], p->om[d] = me.om[d];
    p->slab[0] = (StnHaloSlab){h->array[e], NULL, {me.os[0], me.os[1], me.os[2]}, {me.om[0], me.om[1], me.om[2]}, {0, 0, 0}, {me.gs[0], me.gs[1], me.gs[2]}, {me.gm[0], me.gm[1], me.gm[2]}};
    p->nslab   = 1;
  }
  for (int to = 0; to < size && ok; to++)
    for (int sh = 0; sh < 27 && ok; sh++) {
      int s[3], m[3], shift[3], q;
      if (!block(ri, rank, to, sh, dim, n, bt, s, m, shift)) continue;
      q = flag_of(ri, size, rank, to, sh, dim, n, bt);
      if (to != rank && !h->mapped[to] && StnHaloMap(ri[to].handle, (void **)&h->mapped[to]) != 0) ok = 0;
      if (!ok || q < 0 || q >= 32 || h->put[0].nslab == STN_HALO_SLABS) {
        ok = 0;
        break;
      }
      char        *base  = to == rank ? h->mem : h->mapped[to];
      const size_t bytes = array_bytes(&ri[to], dof);
      for (int e = 0; e < 2; e++) {
        StnHaloSlab *sl = &h->put[e].slab[h->put[e].nslab++];
        sl->dst         = (double *)(base + HEADER_BYTES + e * bytes);
        sl->flag        = (long long *)base + q;
        for (int d = 0; d < 3; d++) sl->s[d] = s[d], sl->m[d] = m[d], sl->shift[d] = shift[d], sl->gs[d] = ri[to].gs[d], sl->gm[d] = ri[to].gm[d];
      }
    }
  for (int from = 0; from < size; from++)
    for (int sh = 0; sh < 27; sh++) {
      int s[3], m[3], shift[3];
      if (block(ri, from, rank, sh, dim, n, bt, s, m, shift)) nq++;
    }
  PetscCall(PetscFree(ri));
  if (nq > 32) ok = 0;
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_LAND, comm));
  if (!ok) {
    PetscCall(fail(hp, why, "the GPUs cannot map each other's memory, or a rank has more than 32 neighbours"));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  h->mask = nq == 32 ? 0xffffffffu : (1u << nq) - 1;
  for (int e = 0; e < 2; e++) {
    StnHaloPut *p = &h->put[e];
    p->first[0]   = 0;
    for (int q = 0; q < p->nslab; q++) p->first[q + 1] = p->first[q] + (long long)p->slab[q].m[0] * p->slab[q].m[1] * p->slab[q].m[2];
  }
  h->points = h->put[0].first[h->put[0].nslab];
  STN_CUDA_CALL(StnCUDAMalloc((void **)&h->plan, 2 * sizeof(StnHaloPut)));
  STN_CUDA_CALL(StnCUDAMemcpyHtoD(h->plan, h->put, 2 * sizeof(StnHaloPut)));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode create_logged(MPI_Comm comm, const Layout *L, StnHalo *hp, const char **why)
{
  PetscFunctionBeginUser;
  if (!event_create) {
    PetscCall(PetscLogEventRegister("StnHaloCreate", DM_CLASSID, &event_create));
    PetscCall(PetscLogEventRegister("StnHaloExchange", DM_CLASSID, &event_exchange));
  }
  PetscCall(PetscLogEventBegin(event_create, 0, 0, 0, 0));
  PetscCall(create(comm, L, hp, why));
  PetscCall(PetscLogEventEnd(event_create, 0, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode StnHaloCreate(DM da, StnHalo *hp, const char **why)
{
  Layout   L;
  PetscInt dim, dof, st[3], sz[3];

  PetscFunctionBeginUser;
  PetscCall(DMDAGetInfo(da, &dim, &L.n[0], &L.n[1], &L.n[2], NULL, NULL, NULL, &dof, NULL, &L.bt[0], &L.bt[1], &L.bt[2], NULL));
  L.dim = dim, L.dof = dof;
  for (int d = dim; d < 3; d++) L.n[d] = 1, L.bt[d] = DM_BOUNDARY_NONE;
  PetscCall(DMDAGetCorners(da, &st[0], &st[1], &st[2], &sz[0], &sz[1], &sz[2]));
  for (int d = 0; d < 3; d++) L.os[d] = d < dim ? (int)st[d] : 0, L.om[d] = d < dim ? (int)sz[d] : 1;
  PetscCall(DMDAGetGhostCorners(da, &st[0], &st[1], &st[2], &sz[0], &sz[1], &sz[2]));
  for (int d = 0; d < 3; d++) L.gs[d] = d < dim ? (int)st[d] : 0, L.gm[d] = d < dim ? (int)sz[d] : 1;
  PetscCall(create_logged(PetscObjectComm((PetscObject)da), &L, hp, why));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode StnHaloCreateGather(MPI_Comm comm, PetscInt rstart, PetscInt nlocal, PetscInt n, StnHalo *hp, const char **why)
{
  const Layout L = {1, 1, {n, 1, 1}, {DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE}, {(int)rstart, 0, 0}, {(int)nlocal, 1, 1}, {0, 0, 0}, {(int)n, 1, 1}};

  PetscFunctionBeginUser;
  PetscCall(create_logged(comm, &L, hp, why));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode StnHaloExchange(StnHalo h, const PetscScalar *owned, const PetscScalar **ghosted)
{
  const int e = (int)(++h->epoch % 2);

  PetscFunctionBeginUser;
  PetscCall(PetscLogEventBegin(event_exchange, 0, 0, 0, 0));
  STN_CUDA_CALL(StnHaloPutCUDA(h->plan + e, h->points, owned, h->epoch, (const long long *)h->mem, h->mask));
  PetscCall(PetscLogEventEnd(event_exchange, 0, 0, 0, 0));
  *ghosted = h->array[e];
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode StnHaloDestroy(StnHalo *hp)
{
  StnHalo h = *hp;

  PetscFunctionBeginUser;
  if (!h) PetscFunctionReturn(PETSC_SUCCESS);
  STN_CUDA_CALL(StnCUDASynchronize()); /* no put of this rank still writes into another's memory */
  for (int r = 0; r < h->size; r++)
    if (h->mapped[r]) STN_CUDA_CALL(StnHaloUnmap(h->mapped[r]));
  PetscCallMPI(MPI_Barrier(h->comm)); /* no rank maps this memory any more */
  if (h->mem) STN_CUDA_CALL(StnCUDAFree(h->mem));
  if (h->plan) STN_CUDA_CALL(StnCUDAFree(h->plan));
  PetscCall(PetscFree(h->mapped));
  PetscCall(PetscFree(h));
  *hp = NULL;
  PetscFunctionReturn(PETSC_SUCCESS);
}
#endif
