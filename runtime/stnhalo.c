/*
** stnhalo.c: the device ghost exchange of stnhalo.h, set up from the DMDA's boxes.
**
** Which values go where is worked out from every rank's owned and ghosted boxes (gathered once),
** not from the DMDA's neighbour list (stnhalo_plan.h): rank s sends rank r the points of its
** owned box that, moved by a periodic shift, lie in r's ghosted box, and block q of those r
** receives raises r's flag q, so r waits on exactly the flags of its senders.
**
** The memory a rank shares: 512 bytes of flags and a block counter, then its two ghosted arrays.
*/
#include "stnhalo.h"

#if defined(PETSC_HAVE_CUDA)
  #include "stnhalo_cuda.h"
  #include "stnhalo_plan.h"
  #include "stnmg.h" /* StnDMDABox */

  #define HEADER_BYTES 512 /* 32 flags (8 bytes), the put's block counter, padding */

static PetscLogEvent event_create, event_exchange; /* -log_view: StnHaloCreate, StnHaloExchange */

typedef struct {
  char         handle[STN_HALO_IPC_BYTES];
  StnHaloBoxes b;
  int          ok;
} RankInfo;

struct StnHalo_ {
  MPI_Comm   comm;
  char      *mem;     /* this rank's shared memory */
  char     **mapped;  /* the other ranks' memory, by rank (NULL: not mapped) */
  int        size;
  double    *array[2];
  StnHaloPut put[2];  /* the put into array[e % 2] of the receivers, exchange e */
  StnHaloPut *plan;   /* the same two in device memory, which the kernel reads */
  long long  blocks;  /* each put's (StnHaloPutBlocks) */
  unsigned   mask;    /* the flags this rank waits on */
  long long  epoch;
};

/* The doubles of one vector in a ghosted array (the arrays side by side, as an SG-DIA matrix's
   slices are), and the bytes of the array (rounded up to 256). */
static long long vec_doubles(const StnHaloBoxes *b, int dof) { return (long long)b->gm[0] * b->gm[1] * b->gm[2] * dof; }
static size_t    array_bytes(const StnHaloBoxes *b, int dof, int nvec) { return ((size_t)nvec * (size_t)vec_doubles(b, dof) * sizeof(double) + 255) / 256 * 256; }

static PetscErrorCode fail(StnHalo *h, const char **why, const char *reason)
{
  PetscFunctionBeginUser;
  *why = reason;
  PetscCall(StnHaloDestroy(h));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Where this rank's values live: its owned box and the box of its ghosted array on the grid, dof
   values per point. */
typedef struct {
  StnHaloGrid  grid;
  StnHaloBoxes me;
  int          dof, nvec; /* nvec arrays of dof values per point, side by side */
} Layout;

static PetscErrorCode create(MPI_Comm comm, const Layout *L, StnHalo *hp, const char **why)
{
  MPI_Comm           node;
  PetscMPIInt        size, rank, node_size;
  const int          dof = L->dof;
  const StnHaloGrid *g   = &L->grid;
  RankInfo          *ri, me;
  StnHaloBoxes      *b;
  StnHalo            h;
  int                ok, nq;

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
  me.b = L->me;
  {
    const size_t bytes = array_bytes(&me.b, dof, L->nvec);
    me.ok              = StnHaloAlloc((void **)&h->mem, HEADER_BYTES + 2 * bytes) == 0 && StnHaloHandle(h->mem, me.handle) == 0;
    if (me.ok) h->array[0] = (double *)(h->mem + HEADER_BYTES), h->array[1] = (double *)(h->mem + HEADER_BYTES + bytes);
  }
  PetscCall(PetscMalloc2(size, &ri, size, &b));
  PetscCall(PetscCalloc1(size, &h->mapped));
  PetscCallMPI(MPI_Allgather(&me, (PetscMPIInt)sizeof me, MPI_BYTE, ri, (PetscMPIInt)sizeof me, MPI_BYTE, comm));
  ok = 1;
  for (int r = 0; r < size; r++) ok = ok && ri[r].ok, b[r] = ri[r].b;
  if (!ok) {
    PetscCall(PetscFree2(ri, b));
    PetscCall(fail(hp, why, "device memory could not be shared"));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  /* The blocks this rank sends, and the flags it waits on. */
  for (int e = 0; e < 2; e++) {
    StnHaloPut *p = &h->put[e];
    p->dof         = dof;
    p->nvec        = L->nvec;
    p->src_stride  = (long long)me.b.om[0] * me.b.om[1] * me.b.om[2] * dof;
    p->blocks_done = (unsigned *)(h->mem + 32 * sizeof(long long));
    for (int d = 0; d < 3; d++) p->os[d] = me.b.os[d], p->om[d] = me.b.om[d];
    p->slab[0] = (StnHaloSlab){h->array[e], NULL, {me.b.os[0], me.b.os[1], me.b.os[2]}, {me.b.om[0], me.b.om[1], me.b.om[2]}, {0, 0, 0}, {me.b.gs[0], me.b.gs[1], me.b.gs[2]}, {me.b.gm[0], me.b.gm[1], me.b.gm[2]}, vec_doubles(&me.b, dof)};
    p->nslab   = 1;
  }
  for (int to = 0; to < size && ok; to++)
    for (int sh = 0; sh < STN_HALO_SHIFTS && ok; sh++) {
      int s[3], m[3], shift[3], q;
      if (!StnHaloBlock(g, b, rank, to, sh, s, m, shift)) continue;
      q = StnHaloFlag(g, b, size, rank, to, sh);
      if (to != rank && !h->mapped[to] && StnHaloMap(ri[to].handle, (void **)&h->mapped[to]) != 0) ok = 0;
      if (!ok || q < 0 || q >= 32 || h->put[0].nslab == STN_HALO_SLABS) {
        ok = 0;
        break;
      }
      char        *base  = to == rank ? h->mem : h->mapped[to];
      const size_t bytes = array_bytes(&b[to], dof, L->nvec);
      for (int e = 0; e < 2; e++) {
        StnHaloSlab *sl = &h->put[e].slab[h->put[e].nslab++];
        sl->dst         = (double *)(base + HEADER_BYTES + e * bytes);
        sl->flag        = (long long *)base + q;
        sl->dst_stride  = vec_doubles(&b[to], dof);
        for (int d = 0; d < 3; d++) sl->s[d] = s[d], sl->m[d] = m[d], sl->shift[d] = shift[d], sl->gs[d] = b[to].gs[d], sl->gm[d] = b[to].gm[d];
      }
    }
  nq = StnHaloIncoming(g, b, size, rank);
  if (nq > 32 || !StnHaloSymmetric(g, b, size)) ok = 0;
  PetscCall(PetscFree2(ri, b));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_LAND, comm));
  if (!ok) {
    PetscCall(fail(hp, why, "the GPUs cannot map each other's memory, a rank has more than 32 neighbours, or a rank receives from one it sends nothing to"));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  h->mask = nq == 32 ? 0xffffffffu : (1u << nq) - 1;
  for (int e = 0; e < 2; e++) {
    StnHaloPut *p      = &h->put[e];
    p->interior_blocks = (p->src_stride + STN_HALO_THREADS - 1) / STN_HALO_THREADS;
    p->first[0] = p->first[1] = 0;
    for (int q = 1; q < p->nslab; q++) p->first[q + 1] = p->first[q] + (long long)p->slab[q].m[0] * p->slab[q].m[1] * p->slab[q].m[2];
  }
  h->blocks = StnHaloPutBlocks(&h->put[0]);
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
  Layout         L;
  PetscInt       dim, dof, n[3];
  DMBoundaryType bt[3];

  PetscFunctionBeginUser;
  PetscCall(DMDAGetInfo(da, &dim, &n[0], &n[1], &n[2], NULL, NULL, NULL, &dof, NULL, &bt[0], &bt[1], &bt[2], NULL));
  L.grid.dim = (int)dim, L.dof = (int)dof, L.nvec = 1;
  for (int d = 0; d < 3; d++) L.grid.n[d] = d < dim ? (int)n[d] : 1, L.grid.periodic[d] = d < dim && bt[d] == DM_BOUNDARY_PERIODIC;
  PetscCall(StnDMDABox(da, PETSC_FALSE, L.me.os, L.me.om));
  PetscCall(StnDMDABox(da, PETSC_TRUE, L.me.gs, L.me.gm));
  PetscCall(create_logged(PetscObjectComm((PetscObject)da), &L, hp, why));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode StnHaloCreateWhole(DM da, PetscInt nvec, StnHalo *hp, const char **why)
{
  Layout         L;
  PetscInt       dim, dof, n[3];
  DMBoundaryType bt[3];

  PetscFunctionBeginUser;
  PetscCall(DMDAGetInfo(da, &dim, &n[0], &n[1], &n[2], NULL, NULL, NULL, &dof, NULL, &bt[0], &bt[1], &bt[2], NULL));
  L.grid.dim = (int)dim, L.dof = (int)dof, L.nvec = (int)nvec;
  for (int d = 0; d < 3; d++) {
    L.grid.n[d] = d < dim ? (int)n[d] : 1, L.grid.periodic[d] = d < dim && bt[d] == DM_BOUNDARY_PERIODIC;
    L.me.gs[d] = 0, L.me.gm[d] = L.grid.n[d];
  }
  PetscCall(StnDMDABox(da, PETSC_FALSE, L.me.os, L.me.om));
  PetscCall(create_logged(PetscObjectComm((PetscObject)da), &L, hp, why));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode StnHaloCreateGather(MPI_Comm comm, PetscInt rstart, PetscInt nlocal, PetscInt n, StnHalo *hp, const char **why)
{
  const Layout L = {{1, {(int)n, 1, 1}, {0, 0, 0}}, {{(int)rstart, 0, 0}, {(int)nlocal, 1, 1}, {0, 0, 0}, {(int)n, 1, 1}}, 1, 1};

  PetscFunctionBeginUser;
  PetscCall(create_logged(comm, &L, hp, why));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode StnHaloExchange(StnHalo h, const PetscScalar *owned, const PetscScalar **ghosted)
{
  const int e = (int)(++h->epoch % 2);

  PetscFunctionBeginUser;
  PetscCall(PetscLogEventBegin(event_exchange, 0, 0, 0, 0));
  STN_CUDA_CALL(StnHaloPutCUDA(h->plan + e, h->blocks, owned, h->epoch, (const long long *)h->mem, h->mask));
  PetscCall(PetscLogEventEnd(event_exchange, 0, 0, 0, 0));
  *ghosted = h->array[e];
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscInt StnHaloStride(StnHalo h) { return (PetscInt)h->put[0].slab[0].dst_stride; }

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
