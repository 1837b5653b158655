static char help[] = "SG-DIA MatMult against PETSc's AIJ MatMult on the same matrix (3D 7-point star).\n"
                     "  -dof D       unknowns per grid point (default 1)\n"
                     "  -n N         grid points per side (default 256 for dof 1, 128 otherwise)\n"
                     "  -reps R      products per timed round (default: about 1 s of work)\n"
                     "  -rounds K    timed rounds per AIJ variant, alternating with SG-DIA (default 5)\n"
                     "  -header      print the markdown table header first\n\n";

/* bench/sgdia_matmult.c: how fast the SG-DIA product is next to AIJ's, in the same run.

   A 3D DMDA with a 7-point star stencil and dof unknowns per point; an SG-DIA matrix with random
   values; the AIJ copy of it from MatConvert (so both hold the same matrix, and the products are
   checked to agree). Each round times R products of one format, then R of the other; the table
   reports the best round of each (the machine may be shared).

   AIJ is timed twice: as PETSc sets it up (with dof > 1 it finds "inodes", rows of a grid point
   with the same columns, and uses its inode kernel) and with inodes off (MAT_USE_INODES false,
   the plain CSR kernel). On PETSc 3.18 the inode kernel is several times slower than the plain
   one for these matrices, so the speed-up is taken against the faster of the two AIJ timings.

   Byte model (the traffic a product must move; neighbours of x are assumed to come from cache):
     SG-DIA: values 8*7*dof*nrows (all stored, boundary zeros included) + x 8*nrows + y 8*nrows.
     AIJ:    values 8*nnz + column indices sizeof(PetscInt)*nnz_idx + row pointers
             sizeof(PetscInt)*(rows_idx+1) + x 8*nrows + y 8*nrows. Plain CSR: nnz_idx = nnz and
             rows_idx = nrows. Inode kernel: the dof rows of a grid point share one copy of the
             column indices, so nnz_idx ~ nnz/dof (counted exactly from MatInodeGetInodeSizes).
   The flops of both are 2*nnz. */
#include "sgdia.h"

/* A cheap deterministic value in [-1, 1) for entry e (a hash, so filling 10^8 values is fast). */
static inline PetscScalar value_of(PetscInt64 e)
{
  PetscInt64 h = e * 6364136223846793005LL + 1442695040888963407LL;
  h ^= h >> 29;
  return (PetscScalar)((double)(h & 0xFFFFFF) / (double)0x800000 - 1.0);
}

static PetscErrorCode fill(Mat A)
{
  PetscScalar    *v;
  PetscInt        nsten, dof, npoints, rstart;
  const PetscInt *off;

  PetscFunctionBeginUser;
  PetscCall(MatSGDIAGetLayout(A, &nsten, &off, &dof, &npoints));
  PetscCall(MatGetOwnershipRange(A, &rstart, NULL));
  PetscCall(MatSGDIAGetArray(A, &v));
  for (PetscInt64 e = 0; e < (PetscInt64)nsten * dof * npoints * dof; e++) v[e] = value_of(e + (PetscInt64)rstart * nsten * dof);
  PetscCall(MatSGDIARestoreArray(A, &v));
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Bytes of the column indices and row pointers one AIJ product reads, per the model above. */
static PetscErrorCode aij_index_bytes(Mat B, PetscBool inodes, PetscLogDouble *bytes)
{
  Mat             blocks[2] = {B, NULL};
  PetscBool       mpi;
  PetscLogDouble  local = 0, global;

  PetscFunctionBeginUser;
  PetscCall(PetscObjectTypeCompare((PetscObject)B, MATMPIAIJ, &mpi));
  if (mpi) PetscCall(MatMPIAIJGetSeqAIJ(B, &blocks[0], &blocks[1], NULL));
  for (int b = 0; b < 2 && blocks[b]; b++) {
    PetscInt  m, nodes, *sizes, limit, row = 0;
    MatInfo   info;
    PetscCall(MatGetLocalSize(blocks[b], &m, NULL));
    PetscCall(MatGetInfo(blocks[b], MAT_LOCAL, &info));
    PetscCall(MatInodeGetInodeSizes(blocks[b], &nodes, &sizes, &limit));
    if (!inodes || !sizes || b == 1) { /* no inodes: every row reads its own indices */
      local += sizeof(PetscInt) * (info.nz_used + m + 1);
      continue;
    }
    for (PetscInt i = 0; i < nodes; i++) {
      PetscInt ncols;
      PetscCall(MatGetRow(blocks[b], row, &ncols, NULL, NULL));
      local += sizeof(PetscInt) * (ncols + 1);
      PetscCall(MatRestoreRow(blocks[b], row, &ncols, NULL, NULL));
      row += sizes[i];
    }
    local += sizeof(PetscInt);
  }
  PetscCall(MPIU_Allreduce(&local, &global, 1, MPIU_PETSCLOGDOUBLE, MPI_SUM, PetscObjectComm((PetscObject)B)));
  *bytes = global;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Seconds for reps products y = M x. */
static PetscErrorCode time_products(Mat M, Vec x, Vec y, PetscInt reps, PetscLogDouble *t)
{
  PetscLogDouble t0, t1;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Barrier(PetscObjectComm((PetscObject)M)));
  PetscCall(PetscTime(&t0));
  for (PetscInt r = 0; r < reps; r++) PetscCall(MatMult(M, x, y));
  PetscCallMPI(MPI_Barrier(PetscObjectComm((PetscObject)M)));
  PetscCall(PetscTime(&t1));
  *t = t1 - t0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  DM             da;
  Mat            A, B;
  Vec            x, y, yref;
  PetscInt       dof = 1, n = 0, reps = 0, rounds = 5, nrows;
  const PetscInt star[7 * 3] = {0, 0, -1, 0, -1, 0, -1, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1};
  PetscBool      header = PETSC_FALSE;
  PetscLogDouble t, best_sg = 1e30, best_aij[2] = {1e30, 1e30}, idx_bytes = 0, bytes_sg, bytes_aij[2];
  int            fastest;
  PetscReal      err, nref;
  PetscMPIInt    size;
  MatInfo        info;

  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-dof", &dof, NULL));
  n = dof == 1 ? 256 : 128;
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-n", &n, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-reps", &reps, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-rounds", &rounds, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-header", &header, NULL));

  /* ---- the matrix, twice ---- */
  PetscCall(DMDACreate3d(PETSC_COMM_WORLD, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DMDA_STENCIL_STAR, n, n, n, PETSC_DECIDE, PETSC_DECIDE, PETSC_DECIDE, dof, 1, NULL, NULL, NULL, &da));
  PetscCall(DMSetUp(da));
  PetscCall(MatCreateSGDIA(da, 7, star, &A));
  PetscCall(fill(A));
  PetscCall(MatConvert(A, MATAIJ, MAT_INITIAL_MATRIX, &B));
  PetscCall(MatCreateVecs(B, &x, &y));
  PetscCall(VecDuplicate(y, &yref));
  PetscCall(VecSetRandom(x, NULL));
  PetscCall(MatGetSize(B, &nrows, NULL));
  PetscCall(MatGetInfo(B, MAT_GLOBAL_SUM, &info));

  /* ---- the same product ---- */
  PetscCall(MatMult(A, x, y));
  PetscCall(MatMult(B, x, yref));
  PetscCall(VecNorm(yref, NORM_2, &nref));
  PetscCall(VecAXPY(y, -1.0, yref));
  PetscCall(VecNorm(y, NORM_2, &err));
  PetscCheck(err <= 1e-13 * nref, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "SG-DIA and AIJ products differ: relative error %g", (double)(err / nref));

  /* ---- timing: about 1 s per round unless -reps; AIJ with and without inodes ---- */
  if (!reps) {
    PetscCall(time_products(B, x, y, 3, &t));
    reps = (PetscInt)PetscMax(10.0, 1.0 / (t / 3));
  }
  for (int phase = 0; phase < 2; phase++) {
    if (phase == 1) { /* the plain CSR kernel: MatAssemblyEnd re-checks for inodes */
      PetscCall(MatSetOption(B, MAT_USE_INODES, PETSC_FALSE));
      PetscCall(MatAssemblyBegin(B, MAT_FINAL_ASSEMBLY));
      PetscCall(MatAssemblyEnd(B, MAT_FINAL_ASSEMBLY));
    }
    for (PetscInt r = 0; r < rounds; r++) {
      PetscCall(time_products(A, x, y, reps, &t));
      best_sg = PetscMin(best_sg, t / reps);
      PetscCall(time_products(B, x, y, reps, &t));
      best_aij[phase] = PetscMin(best_aij[phase], t / reps);
    }
  }

  /* ---- the table ---- */
  bytes_sg = 8.0 * 7 * dof * nrows + 16.0 * nrows;
  for (int phase = 0; phase < 2; phase++) {
    PetscCall(aij_index_bytes(B, (PetscBool)(phase == 0), &idx_bytes));
    bytes_aij[phase] = 8.0 * info.nz_used + idx_bytes + 16.0 * nrows;
  }
  fastest = best_aij[0] < best_aij[1] ? 0 : 1;
  if (header) {
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "| grid | dof | ranks | rows | SG-DIA ms | SG-DIA GB/s | AIJ inode ms | GB/s | AIJ plain ms | GB/s | bytes SG-DIA/AIJ | speed-up |\n"));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "|---|---|---|---|---|---|---|---|---|---|---|---|\n"));
  }
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "| %" PetscInt_FMT "^3 | %" PetscInt_FMT " | %d | %" PetscInt_FMT " | %.2f | %.1f | %.2f | %.1f | %.2f | %.1f | %.2f | **%.2fx** |\n", n, dof, (int)size, nrows, 1e3 * best_sg, bytes_sg / best_sg / 1e9, 1e3 * best_aij[0],
                        bytes_aij[0] / best_aij[0] / 1e9, 1e3 * best_aij[1], bytes_aij[1] / best_aij[1] / 1e9, bytes_sg / bytes_aij[fastest], best_aij[fastest] / best_sg));

  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  PetscCall(VecDestroy(&yref));
  PetscCall(MatDestroy(&A));
  PetscCall(MatDestroy(&B));
  PetscCall(DMDestroy(&da));
  PetscCall(PetscFinalize());
  return 0;
}
