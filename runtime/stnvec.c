/*
** stnvec.c: VECSTNCUDA, PETSc's CUDA vector with stencilc's kernels for the
** operations of a Newton-Krylov solve (stnvec.h; kernels in stnvec_cuda.cu).
**
** Each operation takes the device arrays through PETSc's public accessors
** (VecCUDAGetArrayRead and friends, which keep PETSc's record of where the
** valid copy is), calls one kernel, and on several ranks adds the ranks'
** results with one MPI_Allreduce, as PETSc's MPI vectors do. An output
** that the operation overwrites without reading, and that is none of its
** inputs, is taken write-only, so that PETSc never copies stale values to
** the device for it.
**
** PETSc lets an operand of another type through (VecCopy from a CUDA vector
** to a host one, VecAXPY with a host x: its optimised builds check no types,
** and its CUDA operations handle such operands on the host); ours hand those
** calls to PETSc's own operation, saved before ours replaced it. A vector
** bound to the CPU (VecBindToCPU) has PETSc's host operations; unbinding it
** brings ours back.
*/
#include "stnvec.h"

#include "stntune.h"

#if defined(PETSC_HAVE_CUDA) && defined(PETSC_USE_REAL_DOUBLE) && !defined(PETSC_USE_COMPLEX)
  #define STN_VEC_KERNELS 1
#endif

#if defined(STN_VEC_KERNELS)
  #include <petsc/private/dmimpl.h>  /* dm->ops->createglobalvector (create_global) */
  #include <petsc/private/vecimpl.h> /* v->ops: the operations we replace */
  #include <petscdmda.h>
  #include <petscdevice_cuda.h>

  #include <stdarg.h>

  #include "stncuda.h"     /* StnCUDALastError */
  #include "stnvec_cuda.h"

static PetscBool     registered;
static PetscLogEvent events[STN_K_COUNT + 2]; /* the kernels, copy and reciprocal */
static PetscInt      calls[STN_K_COUNT + 2];
enum { EV_COPY = STN_K_COUNT, EV_RECIPROCAL };

/* PETSc's own operations of seqcuda [0] and mpicuda [1] vectors, as they were before ours replaced
   them: the fallback for operands that are not CUDA vectors, and the bindtocpu they came with. */
static struct _VecOps petsc_ops[2];
static PetscBool      have_petsc_ops[2];
static PetscErrorCode (*petsc_bindtocpu[2])(Vec, PetscBool);


/* Whether all n vectors (Vec arguments) are CUDA vectors, whose device arrays the kernels take. */
static PetscErrorCode on_gpu(PetscBool *gpu, int n, ...)
{
  va_list ap;

  PetscFunctionBegin;
  *gpu = PETSC_TRUE;
  va_start(ap, n);
  for (int i = 0; i < n && *gpu; i++) {
    Vec v = va_arg(ap, Vec);
    PetscErrorCode rc = PetscObjectTypeCompareAny((PetscObject)v, gpu, VECSEQCUDA, VECMPICUDA, "");
    if (rc) {
      va_end(ap);
      return rc;
    }
  }
  va_end(ap);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode all_on_gpu(PetscBool *gpu, PetscInt n, const Vec v[])
{
  PetscFunctionBegin;
  *gpu = PETSC_TRUE;
  for (PetscInt i = 0; i < n && *gpu; i++) PetscCall(PetscObjectTypeCompareAny((PetscObject)v[i], gpu, VECSEQCUDA, VECMPICUDA, ""));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* PETSc's own operations for v (a seqcuda or mpicuda vector). */
static PetscErrorCode petsc_ops_of(Vec v, const struct _VecOps **ops)
{
  PetscBool mpi;

  PetscFunctionBegin;
  PetscCall(PetscObjectTypeCompare((PetscObject)v, VECMPICUDA, &mpi));
  PetscCheck(have_petsc_ops[mpi], PETSC_COMM_SELF, PETSC_ERR_PLIB, "stencilc vector kernels: PETSc's own operations were not saved");
  *ops = &petsc_ops[mpi];
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Unless gpu, hands the call (an operation of owner, with its arguments) to PETSc's own operation. */
  #define PETSC_UNLESS(gpu, owner, call) \
    do { \
      if (!(gpu)) { \
        const struct _VecOps *petsc_; \
        PetscCall(petsc_ops_of(owner, &petsc_)); \
        PetscCall(petsc_->call); \
        PetscFunctionReturn(PETSC_SUCCESS); \
      } \
    } while (0)

/* One operation's bracket: its event, its count, the GPU timer. */
static PetscErrorCode begin_op(int k, Vec v)
{
  PetscFunctionBegin;
  calls[k]++;
  PetscCall(PetscLogEventBegin(events[k], v, 0, 0, 0));
  PetscCall(PetscLogGpuTimeBegin());
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode end_op(int k, Vec v, PetscLogDouble flops)
{
  PetscFunctionBegin;
  PetscCall(PetscLogGpuTimeEnd());
  PetscCall(PetscLogGpuFlops(flops));
  PetscCall(PetscLogEventEnd(events[k], v, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Adds (or takes the largest of) the ranks' n results, in place, when there are several ranks. */
static PetscErrorCode all_reduce(Vec v, PetscReal *r, int n, MPI_Op op)
{
  MPI_Comm    comm;
  PetscMPIInt size;

  PetscFunctionBegin;
  PetscCall(PetscObjectGetComm((PetscObject)v, &comm));
  PetscCallMPI(MPI_Comm_size(comm, &size));
  if (size > 1) PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, r, n, MPIU_REAL, op, comm));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode dot_local(Vec x, Vec y, PetscScalar *z)
{
  const PetscScalar *xa, *ya;
  PetscInt           n;
  PetscBool          gpu;

  PetscFunctionBegin;
  PetscCall(on_gpu(&gpu, 1, y));
  PETSC_UNLESS(gpu, x, dot_local(x, y, z));
  PetscCall(VecGetLocalSize(x, &n));
  PetscCall(begin_op(STN_K_DOT, x));
  PetscCall(VecCUDAGetArrayRead(x, &xa));
  PetscCall(VecCUDAGetArrayRead(y, &ya));
  STN_CUDA_CALL(StnVecDot(xa, ya, n, z));
  PetscCall(VecCUDARestoreArrayRead(y, &ya));
  PetscCall(VecCUDARestoreArrayRead(x, &xa));
  PetscCall(end_op(STN_K_DOT, x, 2.0 * n));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode dot(Vec x, Vec y, PetscScalar *z)
{
  PetscBool gpu;

  PetscFunctionBegin;
  PetscCall(on_gpu(&gpu, 1, y));
  PETSC_UNLESS(gpu, x, dot(x, y, z));
  PetscCall(dot_local(x, y, z));
  PetscCall(all_reduce(x, z, 1, MPI_SUM));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode mdot_local(Vec x, PetscInt nv, const Vec y[], PetscScalar *z)
{
  const PetscScalar *xa, *ya[STN_VEC_MAX_MULTI];
  PetscInt           n;
  PetscBool          gpu;

  PetscFunctionBegin;
  PetscCall(all_on_gpu(&gpu, nv, y));
  PETSC_UNLESS(gpu, x, mdot_local(x, nv, y, z));
  PetscCall(VecGetLocalSize(x, &n));
  PetscCall(begin_op(STN_K_MDOT, x));
  PetscCall(VecCUDAGetArrayRead(x, &xa));
  for (PetscInt done = 0, m; done < nv; done += m) { /* passes of at most STN_VEC_MAX_MULTI */
    m = PetscMin(nv - done, STN_VEC_MAX_MULTI);
    for (PetscInt j = 0; j < m; j++) PetscCall(VecCUDAGetArrayRead(y[done + j], &ya[j]));
    STN_CUDA_CALL(StnVecMDot(xa, (int)m, ya, n, z + done));
    for (PetscInt j = 0; j < m; j++) PetscCall(VecCUDARestoreArrayRead(y[done + j], &ya[j]));
  }
  PetscCall(VecCUDARestoreArrayRead(x, &xa));
  PetscCall(end_op(STN_K_MDOT, x, 2.0 * n * nv));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode mdot(Vec x, PetscInt nv, const Vec y[], PetscScalar *z)
{
  PetscBool gpu;

  PetscFunctionBegin;
  PetscCall(all_on_gpu(&gpu, nv, y));
  PETSC_UNLESS(gpu, x, mdot(x, nv, y, z));
  PetscCall(mdot_local(x, nv, y, z));
  PetscCall(all_reduce(x, z, (int)nv, MPI_SUM));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The local norm, as PETSc's norm_local gives it (the 2-norm of this rank's part). */
static PetscErrorCode norm_local(Vec x, NormType type, PetscReal *r)
{
  const PetscScalar *xa;
  PetscInt           n;
  const int          kind = type == NORM_1 ? 0 : type == NORM_1_AND_2 ? 2 : type == NORM_INFINITY ? 3 : 1;

  PetscFunctionBegin;
  PetscCall(VecGetLocalSize(x, &n));
  PetscCall(begin_op(STN_K_NORM, x));
  PetscCall(VecCUDAGetArrayRead(x, &xa));
  STN_CUDA_CALL(StnVecNorm(xa, n, kind, r));
  PetscCall(VecCUDARestoreArrayRead(x, &xa));
  PetscCall(end_op(STN_K_NORM, x, kind == 3 ? 0.0 : kind == 2 ? 3.0 * n : 2.0 * n));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode norm(Vec x, NormType type, PetscReal *r)
{
  MPI_Comm    comm;
  PetscMPIInt size;

  PetscFunctionBegin;
  PetscCall(norm_local(x, type, r));
  PetscCall(PetscObjectGetComm((PetscObject)x, &comm));
  PetscCallMPI(MPI_Comm_size(comm, &size));
  if (size == 1) PetscFunctionReturn(PETSC_SUCCESS);
  if (type == NORM_INFINITY) PetscFunctionReturn(all_reduce(x, r, 1, MPI_MAX));
  const int two = type == NORM_1_AND_2 ? 1 : type == NORM_1 ? -1 : 0; /* where the 2-norm is */
  if (two >= 0) r[two] *= r[two];
  PetscCall(all_reduce(x, r, type == NORM_1_AND_2 ? 2 : 1, MPI_SUM));
  if (two >= 0) r[two] = PetscSqrtReal(r[two]);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode dotnorm2(Vec s, Vec t, PetscScalar *dp, PetscScalar *nm)
{
  const PetscScalar *sa, *ta;
  PetscInt           n;
  PetscReal          r[2];
  PetscBool          gpu;

  PetscFunctionBegin;
  PetscCall(on_gpu(&gpu, 1, t));
  PETSC_UNLESS(gpu, s, dotnorm2(s, t, dp, nm));
  PetscCall(VecGetLocalSize(s, &n));
  PetscCall(begin_op(STN_K_DOTNORM2, s));
  PetscCall(VecCUDAGetArrayRead(s, &sa));
  PetscCall(VecCUDAGetArrayRead(t, &ta));
  STN_CUDA_CALL(StnVecDotNorm2(sa, ta, n, &r[0], &r[1]));
  PetscCall(VecCUDARestoreArrayRead(t, &ta));
  PetscCall(VecCUDARestoreArrayRead(s, &sa));
  PetscCall(end_op(STN_K_DOTNORM2, s, 4.0 * n));
  PetscCall(all_reduce(s, r, 2, MPI_SUM));
  *dp = r[0];
  *nm = r[1];
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* An output array: write-only when the operation does not read it and it is none of the inputs. */
static PetscErrorCode get_out(Vec v, PetscBool read, PetscScalar **a)
{
  PetscFunctionBegin;
  if (read) PetscCall(VecCUDAGetArray(v, a));
  else PetscCall(VecCUDAGetArrayWrite(v, a));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode restore_out(Vec v, PetscBool read, PetscScalar **a)
{
  PetscFunctionBegin;
  if (read) PetscCall(VecCUDARestoreArray(v, a));
  else PetscCall(VecCUDARestoreArrayWrite(v, a));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* y = kernel(y, a, x) for AXPY (y + a x) and AYPX (x + a y): both read x and y and write y. */
static PetscErrorCode update_y(Vec y, PetscScalar a, Vec x, int k, int (*kernel)(double *, double, const double *, long))
{
  const PetscScalar *xa;
  PetscScalar       *ya;
  PetscInt           n;

  PetscFunctionBegin;
  PetscCall(VecGetLocalSize(y, &n));
  PetscCall(begin_op(k, y));
  PetscCall(VecCUDAGetArrayRead(x, &xa));
  PetscCall(VecCUDAGetArray(y, &ya));
  STN_CUDA_CALL(kernel(ya, a, xa, n));
  PetscCall(VecCUDARestoreArray(y, &ya));
  PetscCall(VecCUDARestoreArrayRead(x, &xa));
  PetscCall(end_op(k, y, 2.0 * n));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode axpy(Vec y, PetscScalar a, Vec x)
{
  PetscBool gpu;

  PetscFunctionBegin;
  PetscCall(on_gpu(&gpu, 1, x));
  PETSC_UNLESS(gpu, y, axpy(y, a, x));
  PetscCall(update_y(y, a, x, STN_K_AXPY, StnVecAXPY));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode aypx(Vec y, PetscScalar a, Vec x)
{
  PetscBool gpu;

  PetscFunctionBegin;
  PetscCall(on_gpu(&gpu, 1, x));
  PETSC_UNLESS(gpu, y, aypx(y, a, x));
  PetscCall(update_y(y, a, x, STN_K_AYPX, StnVecAYPX));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode axpby(Vec y, PetscScalar a, PetscScalar b, Vec x)
{
  const PetscScalar *xa;
  PetscScalar       *ya;
  PetscInt           n;
  const PetscBool    read = b != 0.0 || x == y ? PETSC_TRUE : PETSC_FALSE;
  PetscBool          gpu;

  PetscFunctionBegin;
  PetscCall(on_gpu(&gpu, 1, x));
  PETSC_UNLESS(gpu, y, axpby(y, a, b, x));
  PetscCall(VecGetLocalSize(y, &n));
  PetscCall(begin_op(STN_K_AXPBY, y));
  PetscCall(VecCUDAGetArrayRead(x, &xa));
  PetscCall(get_out(y, read, &ya));
  STN_CUDA_CALL(StnVecAXPBY(ya, a, b, xa, n));
  PetscCall(restore_out(y, read, &ya));
  PetscCall(VecCUDARestoreArrayRead(x, &xa));
  PetscCall(end_op(STN_K_AXPBY, y, 3.0 * n));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode axpbypcz(Vec z, PetscScalar a, PetscScalar b, PetscScalar c, Vec x, Vec y)
{
  const PetscScalar *xa, *ya;
  PetscScalar       *za;
  PetscInt           n;
  const PetscBool    read = c != 0.0 || z == x || z == y ? PETSC_TRUE : PETSC_FALSE;
  PetscBool          gpu;

  PetscFunctionBegin;
  PetscCall(on_gpu(&gpu, 2, x, y));
  PETSC_UNLESS(gpu, z, axpbypcz(z, a, b, c, x, y));
  PetscCall(VecGetLocalSize(z, &n));
  PetscCall(begin_op(STN_K_AXPBYPCZ, z));
  PetscCall(VecCUDAGetArrayRead(x, &xa));
  PetscCall(VecCUDAGetArrayRead(y, &ya));
  PetscCall(get_out(z, read, &za));
  STN_CUDA_CALL(StnVecAXPBYPCZ(za, a, b, c, xa, ya, n));
  PetscCall(restore_out(z, read, &za));
  PetscCall(VecCUDARestoreArrayRead(y, &ya));
  PetscCall(VecCUDARestoreArrayRead(x, &xa));
  PetscCall(end_op(STN_K_AXPBYPCZ, z, 5.0 * n));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode waxpy(Vec w, PetscScalar a, Vec x, Vec y)
{
  const PetscScalar *xa, *ya;
  PetscScalar       *wa;
  PetscInt           n;
  const PetscBool    read = w == x || w == y ? PETSC_TRUE : PETSC_FALSE;
  PetscBool          gpu;

  PetscFunctionBegin;
  PetscCall(on_gpu(&gpu, 2, x, y));
  PETSC_UNLESS(gpu, w, waxpy(w, a, x, y));
  PetscCall(VecGetLocalSize(w, &n));
  PetscCall(begin_op(STN_K_WAXPY, w));
  PetscCall(VecCUDAGetArrayRead(x, &xa));
  PetscCall(VecCUDAGetArrayRead(y, &ya));
  PetscCall(get_out(w, read, &wa));
  STN_CUDA_CALL(StnVecWAXPY(wa, a, xa, ya, n));
  PetscCall(restore_out(w, read, &wa));
  PetscCall(VecCUDARestoreArrayRead(y, &ya));
  PetscCall(VecCUDARestoreArrayRead(x, &xa));
  PetscCall(end_op(STN_K_WAXPY, w, 2.0 * n));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode maxpby(Vec y, PetscInt nv, const PetscScalar *a, PetscScalar b, Vec *x)
{
  const PetscScalar *xa[STN_VEC_MAX_MULTI];
  PetscScalar       *ya;
  PetscInt           n;
  PetscBool          read = b != 0.0 ? PETSC_TRUE : PETSC_FALSE, gpu;

  PetscFunctionBegin;
  PetscCall(all_on_gpu(&gpu, nv, x));
  if (!gpu) { /* PETSc's CUDA vectors have no maxpby: VecMAXPBY's own way, with PETSc's maxpy */
    const struct _VecOps *petsc;
    PetscCall(petsc_ops_of(y, &petsc));
    if (b == 0.0) PetscCall(VecSet(y, 0.0));
    else PetscCall(VecScale(y, b));
    PetscCall(petsc->maxpy(y, nv, a, x));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  for (PetscInt j = 0; j < nv; j++) read = read || x[j] == y ? PETSC_TRUE : PETSC_FALSE;
  PetscCall(VecGetLocalSize(y, &n));
  PetscCall(begin_op(STN_K_MAXPY, y));
  PetscCall(get_out(y, read, &ya));
  for (PetscInt done = 0, m; done < nv || done == 0; done += m) { /* passes of at most STN_VEC_MAX_MULTI */
    m = PetscMin(nv - done, STN_VEC_MAX_MULTI);
    for (PetscInt j = 0; j < m; j++) PetscCall(VecCUDAGetArrayRead(x[done + j], &xa[j]));
    STN_CUDA_CALL(StnVecMAXPBY(ya, (int)m, a + done, done == 0 ? b : 1.0, xa, n));
    for (PetscInt j = 0; j < m; j++) PetscCall(VecCUDARestoreArrayRead(x[done + j], &xa[j]));
    if (m == 0) break;
  }
  PetscCall(restore_out(y, read, &ya));
  PetscCall(end_op(STN_K_MAXPY, y, 2.0 * n * nv));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode maxpy(Vec y, PetscInt nv, const PetscScalar *a, Vec *x)
{
  PetscBool gpu;

  PetscFunctionBegin;
  PetscCall(all_on_gpu(&gpu, nv, x));
  PETSC_UNLESS(gpu, y, maxpy(y, nv, a, x));
  PetscCall(maxpby(y, nv, a, 1.0, x));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode scale(Vec x, PetscScalar a)
{
  PetscScalar *xa;
  PetscInt     n;

  PetscFunctionBegin;
  if (a == 1.0) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(VecGetLocalSize(x, &n));
  PetscCall(begin_op(STN_K_SCALE, x));
  PetscCall(get_out(x, a != 0.0 ? PETSC_TRUE : PETSC_FALSE, &xa));
  STN_CUDA_CALL(StnVecScale(xa, a, n));
  PetscCall(restore_out(x, a != 0.0 ? PETSC_TRUE : PETSC_FALSE, &xa));
  PetscCall(end_op(STN_K_SCALE, x, 1.0 * n));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode set(Vec x, PetscScalar a)
{
  PetscScalar *xa;
  PetscInt     n;

  PetscFunctionBegin;
  PetscCall(VecGetLocalSize(x, &n));
  PetscCall(begin_op(STN_K_SET, x));
  PetscCall(VecCUDAGetArrayWrite(x, &xa));
  STN_CUDA_CALL(StnVecSet(xa, a, n));
  PetscCall(VecCUDARestoreArrayWrite(x, &xa));
  PetscCall(end_op(STN_K_SET, x, 0.0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode copy(Vec x, Vec y)
{
  const PetscScalar *xa;
  PetscScalar       *ya;
  PetscInt           n;

  PetscBool          gpu;

  PetscFunctionBegin;
  if (x == y) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(on_gpu(&gpu, 1, y));
  PETSC_UNLESS(gpu, x, copy(x, y));
  PetscCall(VecGetLocalSize(x, &n));
  PetscCall(begin_op(EV_COPY, y));
  PetscCall(VecCUDAGetArrayRead(x, &xa));
  PetscCall(VecCUDAGetArrayWrite(y, &ya));
  STN_CUDA_CALL(StnVecCopy(ya, xa, n));
  PetscCall(VecCUDARestoreArrayWrite(y, &ya));
  PetscCall(VecCUDARestoreArrayRead(x, &xa));
  PetscCall(end_op(EV_COPY, y, 0.0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Jacobi's set-up inverts the diagonal with it: PETSc's version is a Thrust kernel, whose first
   launch (CUDA loads kernels lazily) costs milliseconds inside the first solve. */
static PetscErrorCode reciprocal(Vec x)
{
  PetscScalar *xa;
  PetscInt     n;

  PetscFunctionBegin;
  PetscCall(VecGetLocalSize(x, &n));
  PetscCall(begin_op(EV_RECIPROCAL, x));
  PetscCall(VecCUDAGetArray(x, &xa));
  STN_CUDA_CALL(StnVecReciprocal(xa, n));
  PetscCall(VecCUDARestoreArray(x, &xa));
  PetscCall(end_op(EV_RECIPROCAL, x, 1.0 * n));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode pointwisemult(Vec w, Vec x, Vec y)
{
  const PetscScalar *xa, *ya;
  PetscScalar       *wa;
  PetscInt           n;
  const PetscBool    read = w == x || w == y ? PETSC_TRUE : PETSC_FALSE;
  PetscBool          gpu;

  PetscFunctionBegin;
  PetscCall(on_gpu(&gpu, 2, x, y));
  PETSC_UNLESS(gpu, w, pointwisemult(w, x, y));
  PetscCall(VecGetLocalSize(w, &n));
  PetscCall(begin_op(STN_K_PMULT, w));
  PetscCall(VecCUDAGetArrayRead(x, &xa));
  PetscCall(VecCUDAGetArrayRead(y, &ya));
  PetscCall(get_out(w, read, &wa));
  STN_CUDA_CALL(StnVecPointwiseMult(wa, xa, ya, n));
  PetscCall(restore_out(w, read, &wa));
  PetscCall(VecCUDARestoreArrayRead(y, &ya));
  PetscCall(VecCUDARestoreArrayRead(x, &xa));
  PetscCall(end_op(STN_K_PMULT, w, 1.0 * n));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode bindtocpu(Vec v, PetscBool flg);

PetscErrorCode StnVecUseKernels(Vec v)
{
  PetscBool cuda, mpi;

  PetscFunctionBegin;
  PetscCall(PetscObjectTypeCompareAny((PetscObject)v, &cuda, VECSEQCUDA, VECMPICUDA, ""));
  PetscCheck(cuda, PetscObjectComm((PetscObject)v), PETSC_ERR_ARG_WRONG, "StnVecUseKernels: the vector is not a CUDA vector");
  PetscCall(StnVecRegister());
  PetscCall(PetscObjectTypeCompare((PetscObject)v, VECMPICUDA, &mpi));
  /* PETSc's operations, once per kind, from a vector that has them (its device ones: not bound) */
  if (!have_petsc_ops[mpi] && !v->boundtocpu && v->ops->dot != dot) {
    petsc_ops[mpi]      = *v->ops;
    have_petsc_ops[mpi] = PETSC_TRUE;
  }
  if (v->ops->bindtocpu != bindtocpu) {
    PetscCheck(v->ops->bindtocpu, PETSC_COMM_SELF, PETSC_ERR_PLIB, "StnVecUseKernels: a CUDA vector without bindtocpu");
    petsc_bindtocpu[mpi] = v->ops->bindtocpu;
    v->ops->bindtocpu    = bindtocpu;
  }
  if (v->boundtocpu) PetscFunctionReturn(PETSC_SUCCESS); /* PETSc's host operations until unbound */
  PetscCheck(have_petsc_ops[mpi], PETSC_COMM_SELF, PETSC_ERR_PLIB, "StnVecUseKernels: PETSc's own operations are unknown");
  v->ops->dot = v->ops->tdot = dot;
  v->ops->dot_local = v->ops->tdot_local = dot_local;
  v->ops->mdot = v->ops->mtdot = mdot;
  v->ops->mdot_local = v->ops->mtdot_local = mdot_local;
  v->ops->norm          = norm;
  v->ops->norm_local    = norm_local;
  v->ops->dotnorm2      = dotnorm2;
  v->ops->axpy          = axpy;
  v->ops->aypx          = aypx;
  v->ops->axpby         = axpby;
  v->ops->axpbypcz      = axpbypcz;
  v->ops->waxpy         = waxpy;
  v->ops->maxpy         = maxpy;
  v->ops->maxpby        = maxpby;
  v->ops->scale         = scale;
  v->ops->set           = set;
  v->ops->copy          = copy;
  v->ops->pointwisemult = pointwisemult;
  v->ops->reciprocal    = reciprocal;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode pooled_duplicates(Vec v);

/* VecBindToCPU: PETSc's (which installs its host or its device operations, and its own
   bindtocpu), then ours again when the vector is back on the device. */
static PetscErrorCode bindtocpu(Vec v, PetscBool flg)
{
  PetscBool mpi;

  PetscFunctionBegin;
  PetscCall(PetscObjectTypeCompare((PetscObject)v, VECMPICUDA, &mpi));
  PetscCall((*petsc_bindtocpu[mpi])(v, flg));
  PetscCall(StnVecUseKernels(v));
  if (!flg) PetscCall(pooled_duplicates(v)); /* PETSc's bindtocpu put its own back */
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The creator of VECSTNCUDA: PETSc's CUDA vector (seq or MPI by the communicator), then ours.
   The vector's type name stays PETSc's ("seqcuda", "mpicuda"), so every test PETSc makes for
   CUDA vectors holds for it. */
static PetscErrorCode VecCreate_StnCUDA(Vec v)
{
  PetscFunctionBegin;
  PetscCall(VecSetType(v, VECCUDA));
  PetscCall(StnVecUseKernels(v));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* PetscFinalize forgets registered types and events: register again after a new PetscInitialize. */
static PetscErrorCode unregister(void)
{
  registered = PETSC_FALSE;
  return PETSC_SUCCESS;
}

PetscErrorCode StnVecRegister(void)
{
  static const char *names[STN_K_COUNT + 2] = {"StnVecDot", "StnVecMDot", "StnVecNorm", "StnVecDotNorm2", "StnVecAXPY",
                                               "StnVecAYPX", "StnVecAXPBY", "StnVecAXPBYPCZ", "StnVecWAXPY", "StnVecMAXPY",
                                               "StnVecScale", "StnVecSet", "StnVecPointwiseMult", "StnVecCopy", "StnVecReciprocal"};
  PetscClassId       classid;

  PetscFunctionBegin;
  if (registered) PetscFunctionReturn(PETSC_SUCCESS);
  registered = PETSC_TRUE;
  PetscCall(PetscRegisterFinalize(unregister));
  PetscCall(VecRegister(VECSTNCUDA, VecCreate_StnCUDA));
  PetscCall(PetscClassIdRegister("stencilc vector kernels", &classid));
  for (int k = 0; k <= EV_RECIPROCAL; k++) PetscCall(PetscLogEventRegister(names[k], classid, &events[k]));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscInt StnVecCalls(const char *op)
{
  for (int k = 0; k < STN_K_COUNT; k++)
    if (strcmp(op, StnVecKernelNames[k]) == 0) return calls[k];
  if (strcmp(op, "copy") == 0) return calls[EV_COPY];
  return strcmp(op, "reciprocal") == 0 ? calls[EV_RECIPROCAL] : -1;
}

/* Lets PETSc programs load the type as a plug-in: -dll_append /path/libstnvec.so -vec_type stncuda
   (how PETSc's own vector tests are run with our kernels; see tests/gpu/). */
PETSC_EXTERN PetscErrorCode PetscDLLibraryRegister_stnvec(void);
PetscErrorCode              PetscDLLibraryRegister_stnvec(void)
{
  return StnVecRegister();
}

/* m vectors with tmpl's layout, type and operations whose device arrays are consecutive slices of
   one allocation: one cudaMalloc instead of one per vector at its first use on the device (60-90
   us each on the H200: 2-3 ms for the basis of GMRES(30), in the first KSPSolve). */
PetscErrorCode StnVecDuplicateBlock(Vec tmpl, PetscInt m, Vec **vs, void **block)
{
  PetscInt  n, N, bs;
  PetscBool mpi;
  MPI_Comm  comm;

  PetscFunctionBegin;
  PetscCall(VecGetLocalSize(tmpl, &n));
  PetscCall(VecGetSize(tmpl, &N));
  PetscCall(VecGetBlockSize(tmpl, &bs));
  PetscCall(PetscObjectGetComm((PetscObject)tmpl, &comm));
  PetscCall(PetscObjectTypeCompare((PetscObject)tmpl, VECMPICUDA, &mpi));
  STN_CUDA_CALL(StnCUDAMalloc(block, (size_t)(m * n > 0 ? m * n : 1) * sizeof(PetscScalar)));
  PetscCall(PetscMalloc1(m, vs));
  for (PetscInt i = 0; i < m; i++) {
    PetscScalar *slice = (PetscScalar *)*block + (size_t)i * n;
    if (mpi) PetscCall(VecCreateMPICUDAWithArray(comm, bs, n, N, slice, &(*vs)[i]));
    else PetscCall(VecCreateSeqCUDAWithArray(comm, bs, n, slice, &(*vs)[i]));
    if (tmpl->ops->dot == dot) PetscCall(StnVecUseKernels((*vs)[i]));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode StnVecDestroyBlock(PetscInt m, Vec **vs, void **block)
{
  PetscFunctionBegin;
  PetscCall(VecDestroyVecs(m, vs));
  if (*block) STN_CUDA_CALL(StnCUDAFree(*block));
  *block = NULL;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---- a grid's global vectors on several ranks ----

   PETSc makes an MPI CUDA vector (VecSetType) with its host array too, in pinned memory
   (cudaMallocHost, -vec_pinned_memory_min is 0), zeroed: about 3 ms per million entries on 4
   ranks of one host, 14 ms for each vector of the cavity's 1025^2 per rank, tens of them in the
   first solve (the hierarchy's level vectors, the Krylov basis). DMCreateGlobalVector_DA's are
   made here with device memory only (a host array only if they are read there), zeroed on the
   device as PETSc's are, with what it sets besides; their duplicates are made the same way (not
   zeroed, as PETSc's are not). Its viewer and loader, which PETSc does not export, come from the
   first vector, made by PETSc, whose duplicates are made here too. */
static PetscErrorCode (*petsc_create_global)(DM, Vec *);
static PetscErrorCode (*da_view)(Vec, PetscViewer), (*da_load)(Vec, PetscViewer);

/* These vectors' device arrays come from StnCUDAMalloc's pool, not from PETSc's cudaMalloc at
   their first use: the ranks of a first solve set up their hierarchies in step, and the driver
   takes their allocations in turn (48 of them took 5 ms of the cavity's first solve on 4 ranks).
   The array is freed with its vector, through a container composed on it. */
static PetscErrorCode free_pooled(void **array)
{
  PetscFunctionBegin;
  STN_CUDA_CALL(StnCUDAFree(*array));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A vector of n entries here on a device array of its own (an MPI vector, or a sequential one on
   a communicator of one rank); with like, as VecDuplicate_MPICUDA makes like's duplicate: like's
   operations, composed objects and functions, but for its own array's container (composed last,
   in place of like's). Its layout is its own, made like like's (PETSc's duplicate shares it):
   one MPI_Allgather more. */
static PetscErrorCode create_pooled(MPI_Comm comm, PetscInt bs, PetscInt n, PetscInt N, Vec like, Vec *v)
{
  PetscScalar   *d;
  PetscMPIInt    size;
  PetscErrorCode ierr;

  PetscFunctionBegin;
  *v = NULL;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  STN_CUDA_CALL(StnCUDAMalloc((void **)&d, (size_t)(n > 0 ? n : 1) * sizeof(PetscScalar)));
  ierr = size == 1 ? VecCreateSeqCUDAWithArrays(comm, bs, n, NULL, d, v) : VecCreateMPICUDAWithArrays(comm, bs, n, N, NULL, d, v);
  if (!ierr && like) {
    (*v)->ops[0] = like->ops[0];
    ierr         = PetscObjectListDuplicate(((PetscObject)like)->olist, &((PetscObject)*v)->olist);
    if (!ierr) ierr = PetscFunctionListDuplicate(((PetscObject)like)->qlist, &((PetscObject)*v)->qlist);
  }
  if (!ierr) ierr = PetscObjectContainerCompose((PetscObject)*v, "StnPooledArray", d, free_pooled);
  if (ierr) { /* nothing half-made left */
    if (*v) (void)VecDestroy(v);
    (void)StnCUDAFree(d);
  }
  PetscCall(ierr);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* VecDuplicate for those vectors. */
static PetscErrorCode duplicate_pooled(Vec v, Vec *y)
{
  PetscInt bs;

  PetscFunctionBegin;
  PetscCall(VecGetBlockSize(v, &bs));
  PetscCall(create_pooled(PetscObjectComm((PetscObject)v), bs, v->map->n, v->map->N, v, y));
  if (v->map->mapping) PetscCall(VecSetLocalToGlobalMapping(*y, v->map->mapping));
  (*y)->stash.donotstash   = v->stash.donotstash;
  (*y)->stash.ignorenegidx = v->stash.ignorenegidx;
  (*y)->map->bs            = PetscAbs(v->map->bs);
  (*y)->bstash.bs          = v->bstash.bs;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* v's duplicates pooled again if its own array is (after VecBindToCPU). */
static PetscErrorCode pooled_duplicates(Vec v)
{
  PetscObject own;

  PetscFunctionBegin;
  PetscCall(PetscObjectQuery((PetscObject)v, "StnPooledArray", &own));
  if (own) v->ops->duplicate = duplicate_pooled;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode create_global(DM da, Vec *g)
{
  PetscInt dof, xm, ym, zm;

  PetscFunctionBegin;
  if (!da_view) {
    PetscCall((*petsc_create_global)(da, g));
    da_view = (*g)->ops->view;
    da_load = (*g)->ops->load;
    PetscCall(VecSetOperation(*g, VECOP_DUPLICATE, (void (*)(void))duplicate_pooled));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(DMDAGetInfo(da, NULL, NULL, NULL, NULL, NULL, NULL, NULL, &dof, NULL, NULL, NULL, NULL, NULL));
  PetscCall(DMDAGetCorners(da, NULL, NULL, NULL, &xm, &ym, &zm));
  PetscCall(create_pooled(PetscObjectComm((PetscObject)da), dof, dof * xm * ym * zm, PETSC_DETERMINE, NULL, g));
  PetscCall(StnVecUseKernels(*g));
  PetscCall(VecSetOperation(*g, VECOP_DUPLICATE, (void (*)(void))duplicate_pooled));
  PetscCall(VecSet(*g, 0.0)); /* zeroed on the device: no host memory */
  PetscCall(VecSetDM(*g, da));
  PetscCall(VecSetLocalToGlobalMapping(*g, da->ltogmap));
  PetscCall(VecSetOperation(*g, VECOP_VIEW, (void (*)(void))da_view));
  PetscCall(VecSetOperation(*g, VECOP_LOAD, (void (*)(void))da_load));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A grid's local (ghosted) vectors on several ranks, as DMCreateLocalVector_DA makes them but on
   device memory of the runtime's, zeroed there (PETSc's have no memory until first used, zeroed
   only by a first read: the device exchange's first use, write-only, left the ghost points past
   the grid's edge unset), with no host array unless read there; their duplicates pooled too,
   not zeroed (the Jacobian's state without its matrix is one, copied over whole). PETSc's would
   each take a cudaMalloc in the first solve, which the driver takes in turn from the ranks of a
   node. */
static PetscErrorCode create_local(DM da, Vec *l)
{
  PetscInt dof, gxm, gym, gzm;

  PetscFunctionBegin;
  PetscCall(DMDAGetInfo(da, NULL, NULL, NULL, NULL, NULL, NULL, NULL, &dof, NULL, NULL, NULL, NULL, NULL));
  PetscCall(DMDAGetGhostCorners(da, NULL, NULL, NULL, &gxm, &gym, &gzm));
  PetscCall(create_pooled(PETSC_COMM_SELF, dof, dof * gxm * gym * gzm, PETSC_DETERMINE, NULL, l));
  PetscCall(StnVecUseKernels(*l));
  PetscCall(VecSetOperation(*l, VECOP_DUPLICATE, (void (*)(void))duplicate_pooled));
  PetscCall(VecSet(*l, 0.0));
  PetscCall(VecSetDM(*l, da));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode lazy_vectors(DM dm);
static PetscErrorCode coarsen_hook(DM fine, DM coarse, void *ctx) { return (void)fine, (void)ctx, lazy_vectors(coarse); }
static PetscErrorCode refine_hook(DM coarse, DM fine, void *ctx) { return (void)coarse, (void)ctx, lazy_vectors(fine); }

/* dm's global and local vectors made as create_global and create_local do, and those of every
   grid coarsened or refined from it: a DMDA on several ranks, not bound to the CPU. */
static PetscErrorCode lazy_vectors(DM dm)
{
  PetscBool   da;
  PetscMPIInt size;

  PetscFunctionBegin;
  PetscCall(PetscObjectTypeCompare((PetscObject)dm, DMDA, &da));
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)dm), &size));
  if (!da || size == 1 || dm->bind_below > 0 || dm->ops->createglobalvector == create_global) PetscFunctionReturn(PETSC_SUCCESS);
  if (!petsc_create_global) petsc_create_global = dm->ops->createglobalvector;
  dm->ops->createglobalvector = create_global;
  dm->ops->createlocalvector  = create_local;
  PetscCall(DMCoarsenHookAdd(dm, coarsen_hook, NULL, NULL));
  PetscCall(DMRefineHookAdd(dm, refine_hook, NULL, NULL));
  PetscFunctionReturn(PETSC_SUCCESS);
}

#else /* no CUDA, or not real double: PETSc's own CUDA vectors (if any) */

PetscErrorCode StnVecRegister(void)
{
  return PETSC_SUCCESS;
}

PetscErrorCode StnVecUseKernels(Vec v)
{
  SETERRQ(PetscObjectComm((PetscObject)v), PETSC_ERR_SUP, "stencilc's vector kernels need a PETSc with CUDA, real double precision");
}

PetscInt StnVecCalls(const char *op)
{
  (void)op;
  return 0;
}

#endif

PetscErrorCode StnDMSetGPUVectors(DM dm)
{
#if defined(PETSC_HAVE_CUDA)
  const char *kernels[] = {"stencilc", "petsc"};
  PetscInt    which     = 0;

  PetscFunctionBegin;
  PetscOptionsBegin(PetscObjectComm((PetscObject)dm), NULL, "stencilc GPU vectors", "");
  PetscCall(PetscOptionsEList("-stn_vec_kernels", "Whose kernels run the Krylov vector operations", NULL, kernels, 2, kernels[0], &which, NULL));
  PetscOptionsEnd();
  #if defined(STN_VEC_KERNELS)
  if (which == 0) {
    PetscCall(StnVecRegister());
    PetscCall(DMSetVecType(dm, VECSTNCUDA));
    PetscCall(lazy_vectors(dm));
    PetscCall(StnTuneSetUp(dm));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  #endif
  PetscCall(DMSetVecType(dm, VECCUDA));
  PetscFunctionReturn(PETSC_SUCCESS);
#else
  SETERRQ(PetscObjectComm((PetscObject)dm), PETSC_ERR_SUP, "GPU vectors need a PETSc configured with CUDA");
#endif
}
