/*
** stnhalo.c: the device ghost exchange of stnhalo.h, set up from the DMDA's boxes.
**
** Which values go where is worked out from every rank's owned and ghosted boxes (gathered once),
** not from the DMDA's neighbour list (stnhalo_plan.h): rank s sends rank r the points of its
** owned box that, moved by a periodic shift, lie in r's ghosted box, and block q of those r
** receives raises r's flag q, so r waits on exactly the flags of its senders.
**
** The memory of one exchange on a rank that others write: 512 bytes of flags and a block
** counter, then two inboxes, each the size of the ghosts it receives (not of its ghosted
** array: mapping another process's memory costs by the byte). Exchanges take it from a pool of
** large blocks of device memory (chunks), each mapped once by each rank that writes into it:
** opening another process's memory (cudaIpcOpenMemHandle) costs milliseconds, and a hierarchy
** makes a dozen exchanges; the first chunk, mapped at start-up (StnHaloConnect), holds the
** inboxes of most programs. A chunk is zeroed when made and its memory is never handed out
** twice; it is freed with the last exchange in it. Every rank makes and destroys the exchanges in
** the same order, so a rank has unmapped a chunk before its owner frees it (StnHaloDestroy's
** barrier). The two ghosted arrays StnHaloExchange hands out are the rank's own memory.
*/
#include "stnhalo.h"

#if defined(PETSC_HAVE_CUDA)
  #include <petsc/private/dmimpl.h>  /* dm->ops->globaltolocalbegin (StnDMUseDeviceGhosts) */
  #include <petsc/private/vecimpl.h> /* v->boundtocpu */
  #include <petscdevice_cuda.h>      /* VecCUDAGetArrayRead */

  #include "stnhalo_cuda.h"
  #include "stnhalo_layout.h"
  #include "stnhalo_plan.h"
  #include "stnmg.h" /* StnDMDABox */

  #include <stdlib.h> /* calloc */
  #include <string.h> /* memcpy */

  #define HEADER_BYTES 512                /* STN_HALO_IN flags (8 bytes), the put's block counter, padding */
  #define CHUNK_BYTES  ((size_t)128 << 20) /* a chunk, or one exchange's memory where that is more */

_Static_assert(STN_HALO_IN == 32, "a put waits on one flag per lane of a warp, its mask an unsigned");
_Static_assert(STN_HALO_IN * sizeof(long long) + sizeof(unsigned) <= HEADER_BYTES, "the flags and the block counter fit the header");

static PetscLogEvent event_create, event_exchange; /* -log_view: StnHaloCreate, StnHaloExchange */

/* A chunk of this process's shared memory, and another process's chunk mapped here. */
typedef struct Chunk {
  char         *base;
  size_t        size, used;
  int           refs; /* the exchanges in it */
  char          handle[STN_HALO_IPC_BYTES];
  struct Chunk *next;
} Chunk;

typedef struct Mapping {
  char            handle[STN_HALO_IPC_BYTES]; /* the chunk's: one per allocation of one process */
  char           *base;
  int             refs; /* the exchanges of this process that write into it */
  struct Mapping *next;
} Mapping;

static Chunk   *chunks; /* newest first */
static PetscBool gpus_shared; /* ranks of this node share a GPU (StnHaloConnect) */
static PetscBool one_node;    /* StnHaloConnect's ranks (all) are on one node: no exchange asks again */
static Mapping *mappings;

typedef struct {
  char      handle[STN_HALO_IPC_BYTES]; /* the rank's chunk, */
  long long offset;                     /*   and where its exchange's memory starts in it */
  int       ok;
} RankInfo;

struct StnHalo_ {
  MPI_Comm       comm;
  char          *mem;      /* this rank's shared memory (flags, inboxes), in */
  Chunk         *chunk;
  Mapping      **mapped;   /* the other ranks' chunks, by rank (NULL: nothing written there) */
  int            size;
  double        *inbox[2]; /* in mem: exchange e's senders write inbox[e % 2] */
  double        *array[2]; /* the ghosted arrays StnHaloExchange hands out, in turn (made at its first call) */
  size_t         array_bytes;
  StnHaloPut     put[2];   /* the put into inbox[e % 2] of the receivers, exchange e */
  StnHaloPut    *plan;     /* the same two in device memory, which the kernel reads */
  StnHaloUnpack  unpack;   /* this rank's inbox into its ghosted array, */
  StnHaloUnpack *unpack_plan; /* and in device memory */
  long long      blocks;   /* each put's (StnHaloPutBlocks) */
  int            fused;    /* a put of the ghosts alone and its unpack in one launch (its blocks fit) */
  unsigned       mask;     /* the flags this rank waits on */
  long long      epoch;
};

/* The doubles of one vector in a ghosted array (the arrays side by side, as an SG-DIA matrix's
   slices are), and the bytes of the array (rounded up to 256). */
static long long vec_doubles(const StnHaloBoxes *b, int dof) { return (long long)b->gm[0] * b->gm[1] * b->gm[2] * dof; }
static size_t    array_bytes(const StnHaloBoxes *b, int dof, int nvec) { return ((size_t)nvec * (size_t)vec_doubles(b, dof) * sizeof(double) + 255) / 256 * 256; }
/* The points rank r's inbox holds (stnhalo_plan.h), and the bytes of the inbox. */
static long long inbox_points(const StnHaloGrid *g, const StnHaloBoxes *b, int nranks, int r) { return StnHaloInboxStart(g, b, nranks, r, StnHaloIncoming(g, b, nranks, r)); }
static size_t    inbox_bytes(long long points, int dof, int nvec) { return ((size_t)nvec * (size_t)points * (size_t)dof * sizeof(double) + 255) / 256 * 256; }

/* bytes of shared memory from a chunk with room, or from a new one; NULL where CUDA fails. */
static char *share(size_t bytes, Chunk **from)
{
  Chunk *c = chunks;

  *from = NULL;
  while (c && c->size - c->used < bytes) c = c->next;
  if (!c) {
    const size_t size = bytes > CHUNK_BYTES ? bytes : CHUNK_BYTES; /* mapping costs by the byte */
    if (!(c = (Chunk *)calloc(1, sizeof *c))) return NULL;
    if (StnHaloAlloc((void **)&c->base, size) != 0 || StnHaloHandle(c->base, c->handle) != 0) {
      if (c->base) (void)StnHaloFree(c->base);
      free(c);
      return NULL;
    }
    c->size = size, c->next = chunks;
    chunks = c;
  }
  char *p = c->base + c->used;
  c->used += bytes;
  c->refs++;
  *from = c;
  return p;
}

static int unshare(Chunk *c)
{
  if (--c->refs > 0) return 0;
  for (Chunk **q = &chunks; *q; q = &(*q)->next)
    if (*q == c) {
      *q = c->next;
      break;
    }
  const int err = StnHaloFree(c->base);
  free(c);
  return err;
}

/* Rank r's chunk mapped here, once for every exchange that writes into it; NULL where CUDA fails. */
static Mapping *map(const RankInfo *r)
{
  Mapping *m;

  for (m = mappings; m; m = m->next)
    if (!memcmp(m->handle, r->handle, sizeof m->handle)) break;
  if (!m) {
    if (!(m = (Mapping *)calloc(1, sizeof *m))) return NULL;
    if (StnHaloMap(r->handle, (void **)&m->base) != 0) {
      free(m);
      return NULL;
    }
    memcpy(m->handle, r->handle, sizeof m->handle);
    m->next = mappings;
    mappings = m;
  }
  m->refs++;
  return m;
}

static int unmap(Mapping *m)
{
  if (--m->refs > 0) return 0;
  for (Mapping **q = &mappings; *q; q = &(*q)->next)
    if (*q == m) {
      *q = m->next;
      break;
    }
  const int err = StnHaloUnmap(m->base);
  free(m);
  return err;
}

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
  node_size = size;
  if (!one_node) { /* a new communicator: 0.1 to 0.8 ms of a first solve on 4 ranks, a dozen times */
    PetscCallMPI(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node));
    PetscCallMPI(MPI_Comm_size(node, &node_size));
    PetscCallMPI(MPI_Comm_free(&node));
  }
  if (node_size != size) {
    *why = "the ranks are on several nodes";
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(PetscNew(&h));
  *hp     = h;
  h->comm = comm;
  h->size = size;
  PetscCall(PetscMalloc2(size, &ri, size, &b));
  PetscCall(PetscCalloc1(size, &h->mapped));
  PetscCallMPI(MPI_Allgather(&L->me, (PetscMPIInt)sizeof *b, MPI_BYTE, b, (PetscMPIInt)sizeof *b, MPI_BYTE, comm));
  nq = StnHaloIncoming(g, b, size, rank);
  {
    const size_t bytes = inbox_bytes(inbox_points(g, b, size, rank), dof, L->nvec);
    h->mem             = share(HEADER_BYTES + 2 * bytes, &h->chunk);
    me.ok              = h->mem != NULL;
    if (me.ok) {
      h->inbox[0] = (double *)(h->mem + HEADER_BYTES), h->inbox[1] = (double *)(h->mem + HEADER_BYTES + bytes);
      memcpy(me.handle, h->chunk->handle, sizeof me.handle);
      me.offset = (long long)(h->mem - h->chunk->base);
    }
  }
  h->array_bytes = array_bytes(&L->me, dof, L->nvec);
  PetscCallMPI(MPI_Allgather(&me, (PetscMPIInt)sizeof me, MPI_BYTE, ri, (PetscMPIInt)sizeof me, MPI_BYTE, comm));
  ok = 1;
  for (int r = 0; r < size; r++) ok = ok && ri[r].ok;
  if (!ok) {
    PetscCall(PetscFree2(ri, b));
    PetscCall(fail(hp, why, "device memory could not be shared"));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  /* The blocks this rank sends, each to its place in the receiver's inbox, and the flags it
     waits on. */
  for (int e = 0; e < 2; e++) {
    StnHaloPut *p = &h->put[e];
    p->dof         = dof;
    p->nvec        = L->nvec;
    p->src_stride  = (long long)L->me.om[0] * L->me.om[1] * L->me.om[2] * dof;
    p->blocks_done = (unsigned *)(h->mem + STN_HALO_IN * sizeof(long long));
    for (int d = 0; d < 3; d++) p->os[d] = L->me.os[d], p->om[d] = L->me.om[d];
    p->slab[0] = (StnHaloSlab){NULL, NULL, {L->me.os[0], L->me.os[1], L->me.os[2]}, {L->me.om[0], L->me.om[1], L->me.om[2]}, {0, 0, 0}, {L->me.gs[0], L->me.gs[1], L->me.gs[2]}, {L->me.gm[0], L->me.gm[1], L->me.gm[2]}, vec_doubles(&L->me, dof)};
    p->nslab   = 1;
  }
  for (int to = 0; to < size && ok; to++) {
    const size_t bytes = inbox_bytes(inbox_points(g, b, size, to), dof, L->nvec);
    for (int sh = 0; sh < STN_HALO_SHIFTS && ok; sh++) {
      StnHaloSlab sl = {0};
      long long   start;
      int         q;
      if (!stn_halo_slab(g, b, size, rank, to, sh, dof, &sl, &start, &q)) continue;
      if (to != rank && !h->mapped[to] && !(h->mapped[to] = map(&ri[to]))) ok = 0;
      if (!ok || q < 0 || q >= STN_HALO_IN || h->put[0].nslab == STN_HALO_SLABS) {
        ok = 0;
        break;
      }
      char *base = to == rank ? h->mem : h->mapped[to]->base + ri[to].offset;
      sl.flag    = (long long *)base + q;
      for (int e = 0; e < 2; e++) {
        sl.dst                           = (double *)(base + HEADER_BYTES + e * bytes) + start * dof;
        h->put[e].slab[h->put[e].nslab++] = sl;
      }
    }
  }
  if (ok && !stn_halo_unpack_plan(g, b, size, rank, dof, L->nvec, &h->unpack)) ok = 0; /* the blocks this rank receives, in flag order */
  if (nq > STN_HALO_IN || !StnHaloSymmetric(g, b, size)) ok = 0;
  PetscCall(PetscFree2(ri, b));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_LAND, comm));
  if (!ok) {
    PetscCall(fail(hp, why, "the GPUs cannot map each other's memory, a rank receives more than 32 blocks of ghosts, or a rank receives from one it sends nothing to"));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  h->mask = nq == STN_HALO_IN ? 0xffffffffu : (1u << nq) - 1;
  for (int e = 0; e < 2; e++) {
    StnHaloPut *p      = &h->put[e];
    p->interior_blocks = (p->src_stride + STN_HALO_THREADS * STN_HALO_COPY_PER_THREAD - 1) / (STN_HALO_THREADS * STN_HALO_COPY_PER_THREAD);
    p->line_div        = StnFastDivMake(p->om[0] * dof);
    p->row_div         = StnFastDivMake(p->om[1]);
    p->first[0] = p->first[1] = 0;
    for (int q = 1; q < p->nslab; q++) p->first[q + 1] = p->first[q] + (long long)p->slab[q].m[0] * p->slab[q].m[1] * p->slab[q].m[2];
  }
  h->blocks = StnHaloPutBlocks(&h->put[0]);
  h->fused  = !gpus_shared && StnHaloPutUnpackFits(h->blocks - h->put[0].interior_blocks);
  STN_CUDA_CALL(StnCUDAMalloc((void **)&h->plan, 2 * sizeof(StnHaloPut)));
  STN_CUDA_CALL(StnCUDAMemcpyHtoDAsync(h->plan, h->put, 2 * sizeof(StnHaloPut))); /* no wait for the queued kernels */
  STN_CUDA_CALL(StnCUDAMalloc((void **)&h->unpack_plan, sizeof(StnHaloUnpack)));
  STN_CUDA_CALL(StnCUDAMemcpyHtoDAsync(h->unpack_plan, &h->unpack, sizeof(StnHaloUnpack)));
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

/* da's grid, nvec arrays of its dof values per point, and this rank's owned box; the ghosted
   box is the caller's. */
static PetscErrorCode grid_layout(DM da, PetscInt nvec, Layout *L)
{
  PetscInt       dim, dof, n[3];
  DMBoundaryType bt[3];

  PetscFunctionBeginUser;
  PetscCall(DMDAGetInfo(da, &dim, &n[0], &n[1], &n[2], NULL, NULL, NULL, &dof, NULL, &bt[0], &bt[1], &bt[2], NULL));
  L->grid.dim = (int)dim, L->dof = (int)dof, L->nvec = (int)nvec;
  for (int d = 0; d < 3; d++) L->grid.n[d] = d < dim ? (int)n[d] : 1, L->grid.periodic[d] = d < dim && bt[d] == DM_BOUNDARY_PERIODIC;
  PetscCall(StnDMDABox(da, PETSC_FALSE, L->me.os, L->me.om));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode StnHaloCreate(DM da, StnHalo *hp, const char **why)
{
  Layout L;

  PetscFunctionBeginUser;
  PetscCall(grid_layout(da, 1, &L));
  PetscCall(StnDMDABox(da, PETSC_TRUE, L.me.gs, L.me.gm));
  PetscCall(create_logged(PetscObjectComm((PetscObject)da), &L, hp, why));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode StnHaloCreateBox(DM da, const int gs[3], const int gm[3], StnHalo *hp, const char **why)
{
  Layout L;

  PetscFunctionBeginUser;
  PetscCall(grid_layout(da, 1, &L));
  for (int d = 0; d < 3; d++) L.me.gs[d] = gs[d], L.me.gm[d] = gm[d];
  PetscCall(create_logged(PetscObjectComm((PetscObject)da), &L, hp, why));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode StnHaloCreateWhole(DM da, PetscInt nvec, StnHalo *hp, const char **why)
{
  Layout L;

  PetscFunctionBeginUser;
  PetscCall(grid_layout(da, nvec, &L));
  for (int d = 0; d < 3; d++) L.me.gs[d] = 0, L.me.gm[d] = L.grid.n[d];
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

/* The exchange into ghosted, copying the owned box there too when copy. */
static PetscErrorCode exchange(StnHalo h, const PetscScalar *owned, PetscScalar *ghosted, PetscBool copy)
{
  const int e = (int)(++h->epoch % 2);

  PetscFunctionBeginUser;
  PetscCall(PetscLogEventBegin(event_exchange, 0, 0, 0, 0));
  if (!copy && h->fused) STN_CUDA_CALL(StnHaloPutUnpackCUDA(h->plan + e, h->blocks - h->put[0].interior_blocks, h->unpack_plan, owned, h->inbox[e], ghosted, h->epoch, (const long long *)h->mem, h->mask));
  else {
    STN_CUDA_CALL(StnHaloPutCUDA(h->plan + e, copy ? h->blocks : h->blocks - h->put[0].interior_blocks, owned, copy ? ghosted : NULL, h->epoch, (const long long *)h->mem, h->mask));
    STN_CUDA_CALL(StnHaloUnpackCUDA(h->unpack_plan, &h->unpack, h->inbox[e], ghosted));
  }
  PetscCall(PetscLogEventEnd(event_exchange, 0, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode StnHaloExchangeInto(StnHalo h, const PetscScalar *owned, PetscScalar *ghosted)
{
  PetscFunctionBeginUser;
  PetscCall(exchange(h, owned, ghosted, PETSC_TRUE));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode StnHaloExchangeGhostsInto(StnHalo h, const PetscScalar *owned, PetscScalar *ghosted)
{
  PetscFunctionBeginUser;
  PetscCall(exchange(h, owned, ghosted, PETSC_FALSE));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* This rank's ghosted array to hand out next, made at the first call: its own memory, which
   nobody else maps, whose entries an exchange writes before its consumers read them (no zeroing, no
   wait for the device). */
static PetscErrorCode next_array(StnHalo h, PetscScalar **a)
{
  PetscFunctionBeginUser;
  if (!h->array[0]) {
    STN_CUDA_CALL(StnCUDAMalloc((void **)&h->array[0], 2 * h->array_bytes));
    h->array[1] = (double *)((char *)h->array[0] + h->array_bytes);
  }
  *a = h->array[(h->epoch + 1) % 2]; /* the one exchange (below) takes */
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The exchange into the next of the rank's ghosted arrays: the ghosts, and with copy the owned
   points too. */
static PetscErrorCode exchange_next(StnHalo h, const PetscScalar *owned, PetscBool copy, const PetscScalar **out)
{
  PetscScalar *a;

  PetscFunctionBeginUser;
  PetscCall(next_array(h, &a));
  PetscCall(exchange(h, owned, a, copy));
  *out = a;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode StnHaloExchangeGhosts(StnHalo h, const PetscScalar *owned, const PetscScalar **ghosts) { return exchange_next(h, owned, PETSC_FALSE, ghosts); }

PetscErrorCode StnHaloExchange(StnHalo h, const PetscScalar *owned, const PetscScalar **ghosted) { return exchange_next(h, owned, PETSC_TRUE, ghosted); }

PetscInt StnHaloStride(StnHalo h) { return (PetscInt)h->put[0].slab[0].dst_stride; }

/* What StnHaloConnect holds until PetscFinalize: its share of the first chunk, the other ranks'
   first chunks mapped. */
static struct {
  MPI_Comm  comm;
  Chunk    *chunk;
  Mapping **mapped;
  int       size;
} connection;

static PetscErrorCode disconnect(void)
{
  PetscFunctionBeginUser;
  if (!connection.mapped) PetscFunctionReturn(PETSC_SUCCESS);
  STN_CUDA_CALL(StnCUDASynchronize());
  for (int r = 0; r < connection.size; r++)
    if (connection.mapped[r]) STN_CUDA_CALL(unmap(connection.mapped[r]));
  PetscCallMPI(MPI_Barrier(connection.comm)); /* as StnHaloDestroy's */
  if (connection.chunk) STN_CUDA_CALL(unshare(connection.chunk));
  PetscCall(PetscFree(connection.mapped));
  connection.chunk = NULL;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode StnHaloConnect(MPI_Comm comm, PetscBool shared)
{
  MPI_Comm    node;
  PetscMPIInt size, rank, node_size;
  RankInfo   *ri, me;
  long long  *peer[32];
  int         ok, npeer = 0;
  char       *mem;

  PetscFunctionBeginUser;
  gpus_shared = shared;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  if (size == 1 || connection.mapped) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCallMPI(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node));
  PetscCallMPI(MPI_Comm_size(node, &node_size));
  PetscCallMPI(MPI_Comm_free(&node));
  if (node_size != size || size > 33) PetscFunctionReturn(PETSC_SUCCESS); /* no exchange is possible, or so many peers that this would only cost memory */
  one_node = PETSC_TRUE;
  PetscCall(PetscMemzero(&me, sizeof me));
  mem   = share(HEADER_BYTES, &connection.chunk);
  me.ok = mem != NULL;
  if (me.ok) {
    memcpy(me.handle, connection.chunk->handle, sizeof me.handle);
    me.offset = (long long)(mem - connection.chunk->base);
  }
  PetscCall(PetscMalloc1(size, &ri));
  PetscCall(PetscCalloc1(size, &connection.mapped));
  connection.comm = comm, connection.size = size;
  PetscCallMPI(MPI_Allgather(&me, (PetscMPIInt)sizeof me, MPI_BYTE, ri, (PetscMPIInt)sizeof me, MPI_BYTE, comm));
  ok = 1;
  for (int r = 0; r < size; r++) ok = ok && ri[r].ok;
  for (int r = 0; r < size && ok; r++) {
    if (r == rank) continue;
    if (!(connection.mapped[r] = map(&ri[r]))) ok = 0;
    else peer[npeer++] = (long long *)(connection.mapped[r]->base + ri[r].offset) + rank; /* word rank of r's header: nobody else writes it */
  }
  PetscCall(PetscFree(ri));
  if (ok && StnHaloTouch(peer, npeer) != 0) ok = 0;
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_LAND, comm));
  if (!ok) {
    PetscCall(disconnect());
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(PetscRegisterFinalize(disconnect));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---- DMGlobalToLocal on the device (StnDMUseDeviceGhosts) ---- */

static PetscErrorCode (*petsc_gtol_begin)(DM, Vec, InsertMode, Vec);
static PetscErrorCode (*petsc_gtol_end)(DM, Vec, InsertMode, Vec);
static const char ghosts_name[] = "StnDeviceGhosts";

typedef struct {
  StnHalo     halo; /* NULL where it cannot be made, */
  const char *why;  /*   and why */
} DeviceGhosts;

static PetscErrorCode DeviceGhostsDestroy(void **ctx)
{
  DeviceGhosts *g = (DeviceGhosts *)*ctx;

  PetscFunctionBeginUser;
  PetscCall(StnHaloDestroy(&g->halo));
  PetscCall(PetscFree(g));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode StnDMGetExchange(DM dm, StnHalo *h, const char **why)
{
  PetscContainer c;
  DeviceGhosts  *dg;

  PetscFunctionBeginUser;
  PetscCall(PetscObjectQuery((PetscObject)dm, ghosts_name, (PetscObject *)&c));
  if (c) PetscCall(PetscContainerGetPointer(c, (void **)&dg));
  else {
    PetscCall(PetscNew(&dg));
    PetscCall(StnHaloCreate(dm, &dg->halo, &dg->why));
    PetscCall(PetscObjectContainerCompose((PetscObject)dm, ghosts_name, dg, DeviceGhostsDestroy));
  }
  *h = dg->halo;
  if (why) *why = dg->why;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Whether a DMGlobalToLocal from g into l can stay on the device: INSERT_VALUES between CUDA
   vectors on the device, which every rank has alike. */
static PetscErrorCode on_device(Vec g, InsertMode mode, Vec l, PetscBool *ok)
{
  PetscBool gcuda, lcuda;

  PetscFunctionBeginUser;
  *ok = PETSC_FALSE;
  if (mode != INSERT_VALUES && mode != INSERT_ALL_VALUES) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscObjectTypeCompareAny((PetscObject)g, &gcuda, VECMPICUDA, VECSEQCUDA, ""));
  PetscCall(PetscObjectTypeCompareAny((PetscObject)l, &lcuda, VECSEQCUDA, VECMPICUDA, ""));
  *ok = (PetscBool)(gcuda && lcuda && !g->boundtocpu && !l->boundtocpu);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Where DMGlobalToLocal on dm from g into l goes, dm taken by StnDMUseDeviceGhosts, when
   on_device: on several ranks through the grid's exchange (*h); on one rank, with no periodic
   edge, a copy on the device (*copy: the ghosted box is the owned box, where PETSc would first set
   its scatter up, with scripts/petsc-cuda.sh's PETSc at its first use: a tenth of a second for
   SFI's 257^3 in the program's set-up, a few milliseconds per coarse grid in the first solve).
   Else PETSc's scatter (*h NULL, *copy false). */
static PetscErrorCode device_path(DM dm, Vec g, InsertMode mode, Vec l, StnHalo *h, PetscBool *copy)
{
  PetscBool   ok;
  PetscMPIInt size;
  PetscInt    n, ng;

  PetscFunctionBeginUser;
  *h    = NULL;
  *copy = PETSC_FALSE;
  PetscCall(on_device(g, mode, l, &ok));
  if (!ok) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)dm), &size));
  if (size > 1) {
    PetscCall(StnDMGetExchange(dm, h, NULL));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(VecGetLocalSize(g, &ng));
  PetscCall(VecGetLocalSize(l, &n));
  *copy = (PetscBool)(n == ng);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode gtol_begin(DM dm, Vec g, InsertMode mode, Vec l)
{
  StnHalo            h;
  PetscBool          copy;
  const PetscScalar *ga;
  PetscScalar       *la;
  PetscInt           n, ng;

  PetscFunctionBeginUser;
  PetscCall(device_path(dm, g, mode, l, &h, &copy));
  if (!h && !copy) {
    PetscCall((*petsc_gtol_begin)(dm, g, mode, l));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(VecGetLocalSize(l, &n));
  PetscCall(VecGetLocalSize(g, &ng));
  if (h) {
    PetscCheck(n == StnHaloStride(h), PETSC_COMM_SELF, PETSC_ERR_ARG_SIZ, "DMGlobalToLocal: the local vector has %" PetscInt_FMT " entries, the grid's ghosted box %" PetscInt_FMT, n, StnHaloStride(h));
    PetscCheck(ng == h->put[0].src_stride, PETSC_COMM_SELF, PETSC_ERR_ARG_SIZ, "DMGlobalToLocal: the global vector has %" PetscInt_FMT " entries on this rank, the grid's owned box %lld", ng, h->put[0].src_stride);
  }
  PetscCall(VecCUDAGetArrayRead(g, &ga));
  PetscCall(VecCUDAGetArrayWrite(l, &la));
  if (h) PetscCall(StnHaloExchangeInto(h, ga, la));
  else STN_CUDA_CALL(StnCUDAMemcpyDtoD(la, ga, sizeof(PetscScalar) * (size_t)n));
  PetscCall(VecCUDARestoreArrayWrite(l, &la));
  PetscCall(VecCUDARestoreArrayRead(g, &ga));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode gtol_end(DM dm, Vec g, InsertMode mode, Vec l)
{
  StnHalo   h;
  PetscBool copy;

  PetscFunctionBeginUser;
  PetscCall(device_path(dm, g, mode, l, &h, &copy));
  if (!h && !copy) PetscCall((*petsc_gtol_end)(dm, g, mode, l));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode ghosts_coarsen_hook(DM fine, DM coarse, void *ctx) { return (void)fine, (void)ctx, StnDMUseDeviceGhosts(coarse); }
static PetscErrorCode ghosts_refine_hook(DM coarse, DM fine, void *ctx) { return (void)coarse, (void)ctx, StnDMUseDeviceGhosts(fine); }

PetscErrorCode StnDMUseDeviceGhosts(DM dm)
{
  PetscBool      da;
  PetscMPIInt    size;
  DMBoundaryType bt[3];

  PetscFunctionBeginUser;
  PetscCall(PetscObjectTypeCompare((PetscObject)dm, DMDA, &da));
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)dm), &size));
  /* bound below a size (-dm_bind_below), a rank's vectors go to the host or not by its own
     share of the grid: the ranks would not all take the exchange */
  if (!da || dm->bind_below > 0 || StnDMHasDeviceGhosts(dm)) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(DMDAGetInfo(dm, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, &bt[0], &bt[1], &bt[2], NULL));
  PetscBool none = PETSC_TRUE;
  for (int d = 0; d < 3; d++) { /* a ghosted or mirrored boundary's ghosts are the program's, not another rank's */
    if (bt[d] != DM_BOUNDARY_NONE && bt[d] != DM_BOUNDARY_PERIODIC) PetscFunctionReturn(PETSC_SUCCESS);
    none = (PetscBool)(none && bt[d] == DM_BOUNDARY_NONE);
  }
  if (size == 1 && !none) PetscFunctionReturn(PETSC_SUCCESS); /* a periodic wrap: PETSc's scatter */
  if (!petsc_gtol_begin) petsc_gtol_begin = dm->ops->globaltolocalbegin, petsc_gtol_end = dm->ops->globaltolocalend;
  dm->ops->globaltolocalbegin = gtol_begin;
  dm->ops->globaltolocalend   = gtol_end;
  PetscCall(DMCoarsenHookAdd(dm, ghosts_coarsen_hook, NULL, NULL));
  PetscCall(DMRefineHookAdd(dm, ghosts_refine_hook, NULL, NULL));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscBool StnDMHasDeviceGhosts(DM dm) { return (PetscBool)(dm->ops->globaltolocalbegin == gtol_begin); }

PetscErrorCode StnHaloDestroy(StnHalo *hp)
{
  StnHalo h = *hp;

  PetscFunctionBeginUser;
  if (!h) PetscFunctionReturn(PETSC_SUCCESS);
  STN_CUDA_CALL(StnCUDASynchronize()); /* no put of this rank still writes into another's memory */
  for (int r = 0; r < h->size; r++)
    if (h->mapped[r]) STN_CUDA_CALL(unmap(h->mapped[r]));
  PetscCallMPI(MPI_Barrier(h->comm)); /* no rank maps a chunk freed below any more */
  if (h->chunk) STN_CUDA_CALL(unshare(h->chunk));
  if (h->plan) STN_CUDA_CALL(StnCUDAFree(h->plan));
  if (h->unpack_plan) STN_CUDA_CALL(StnCUDAFree(h->unpack_plan));
  if (h->array[0]) STN_CUDA_CALL(StnCUDAFree(h->array[0]));
  PetscCall(PetscFree(h->mapped));
  PetscCall(PetscFree(h));
  *hp = NULL;
  PetscFunctionReturn(PETSC_SUCCESS);
}
#endif
