/* bench/probes/dmda_coarsen.c: what PETSc's DMDA coarsening costs each rank by itself, with no
   GPU work beside it: a 3-D DMDA (one unknown, star stencil of width 1, slabs along z as the
   generated programs split it) coarsened -levels times as multigrid's first PCSetUp does, the
   host allocator set as StnAppDefaults sets it (-keep 0: glibc's defaults). Prints each rank's
   time and minor page faults, in all and by level. With the PETSc with MPI
   (scripts/petsc-cuda.sh --mpi), from the repository root:

     STN_MPI=1 . scripts/gpu-env.sh
     mpicc -O2 bench/probes/dmda_coarsen.c -I$PETSC_DIR/include -L$PETSC_DIR/lib \
       -Wl,-rpath,$PETSC_DIR/lib -lpetsc -o build/dmda_coarsen
     mpiexec -n 1 build/dmda_coarsen -n 257; mpiexec -n 4 build/dmda_coarsen -n 385

   GLIBC_TUNABLES=glibc.malloc.hugetlb=1 in the environment backs the heap with 2 MB pages. */
#include <petscdmda.h>
#include <sys/resource.h>
#if defined(__GLIBC__)
  #include <limits.h>
  #include <malloc.h>
#endif

#define MAX_LEVELS 12

static long minor_faults(void)
{
  struct rusage r;
  getrusage(RUSAGE_SELF, &r);
  return r.ru_minflt;
}

int main(int argc, char **argv)
{
  DM          da[MAX_LEVELS + 1];
  PetscInt    n = 257, levels = 6, keep = 1;
  PetscMPIInt rank, size;
  char        by_level[1024] = "";
  double      total = 0;
  long        faults = 0;

  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-n", &n, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-levels", &levels, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-keep", &keep, NULL));
  PetscCheck(levels >= 1 && levels <= MAX_LEVELS, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-levels: 1 to %d", MAX_LEVELS);
#if defined(__GLIBC__)
  if (keep) { /* as StnAppDefaults */
    (void)mallopt(M_MMAP_THRESHOLD, 32 << 20);
    (void)mallopt(M_TOP_PAD, 256 << 20);
    (void)mallopt(M_TRIM_THRESHOLD, INT_MAX);
  }
#endif
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCall(DMDACreate3d(PETSC_COMM_WORLD, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DMDA_STENCIL_STAR, n, n, n, 1, 1, size, 1, 1, NULL, NULL, NULL, &da[0]));
  PetscCall(DMSetFromOptions(da[0]));
  PetscCall(DMSetUp(da[0]));
  PetscCallMPI(MPI_Barrier(PETSC_COMM_WORLD));
  for (PetscInt l = 1; l <= levels; l++) {
    const long   f0 = minor_faults();
    const double t0 = MPI_Wtime();
    double       t;
    long         f;

    PetscCall(DMCoarsen(da[l - 1], MPI_COMM_NULL, &da[l]));
    t = MPI_Wtime() - t0, f = minor_faults() - f0;
    total += t, faults += f;
    PetscCall(PetscSNPrintf(by_level + strlen(by_level), sizeof by_level - strlen(by_level), " %.1f/%ld", 1e3 * t, f));
  }
  PetscCall(PetscSynchronizedPrintf(PETSC_COMM_WORLD, "rank %d of %d, %d^3: coarsening %.1f ms, %ld page faults; by level, ms/faults:%s\n", rank, size, (int)n, 1e3 * total, faults, by_level));
  PetscCall(PetscSynchronizedFlush(PETSC_COMM_WORLD, PETSC_STDOUT));
  for (PetscInt l = levels; l >= 0; l--) PetscCall(DMDestroy(&da[l]));
  PetscCall(PetscFinalize());
  return 0;
}
