# scripts/gpu-env.sh: sourced on a lent GPU machine (bare, no network) before the GPU tests and
# benchmarks. It unpacks the CUDA PETSc that `scripts/petsc-cuda.sh --pack` made and that travels
# in .petsc-cuda/ (git-ignored), where it was built, and sets PETSC_DIR; the BLAS, LAPACK and
# Fortran run-time libraries that PETSc was linked with travel in .petsc-cuda/lib.
#
#   . scripts/gpu-env.sh && scripts/gpu-check.sh "$OUT"
#   STN_MPI=1 . scripts/gpu-env.sh && scripts/gpu-multi.sh "$OUT"    # several GPUs
#
# .petsc-cuda/ holds: petsc-3.24.6-cuda.tar.gz, lib/ (liblapack.so.3, libblas.so.3,
# libgfortran.so.5, libquadmath.so.0 and the unversioned links), tutorials/ (ex5.c, ex14.c,
# ex19.c of PETSc 3.24.6, and ts-ex5/ with src/ts/tutorials/advection-diffusion-reaction's ex5.c
# and reaction_diffusion.[ch], for the benchmarks) and vectests/ (tests/gpu/petsc-vec-tests.sh).
# With STN_MPI=1 the PETSc with MPI (`scripts/petsc-cuda.sh --mpi --pack`) comes from
# .petsc-cuda-mpi/ instead: petsc-3.24.6-cuda-mpi.tar.gz (the mpich wheel inside) and lib/ as
# above; its mpiexec goes first on PATH.
if [ "${STN_MPI:-0}" = 1 ]; then
  STN_PETSC_CACHE=${STN_PETSC_CACHE:-$HOME/.cache/stencilc/petsc-3.24.6-cuda-mpi}
  STN_CARRIED=.petsc-cuda-mpi
else
  STN_PETSC_CACHE=${STN_PETSC_CACHE:-$HOME/.cache/stencilc/petsc-3.24.6-cuda}
  STN_CARRIED=.petsc-cuda
fi
if ! [ -f "$STN_PETSC_CACHE/lib/petsc/conf/petscvariables" ]; then
  mkdir -p "$(dirname "$STN_PETSC_CACHE")"
  tar xzf "$STN_CARRIED/$(basename "$STN_PETSC_CACHE").tar.gz" -C "$(dirname "$STN_PETSC_CACHE")" || return 1
fi
PETSC_DIR=$STN_PETSC_CACHE
PETSC_ARCH=
LD_LIBRARY_PATH=$PWD/$STN_CARRIED/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
LIBRARY_PATH=$PWD/$STN_CARRIED/lib${LIBRARY_PATH:+:$LIBRARY_PATH}
[ -d "$STN_PETSC_CACHE/mpich/bin" ] && PATH=$STN_PETSC_CACHE/mpich/bin:$PATH
export PETSC_DIR PETSC_ARCH LD_LIBRARY_PATH LIBRARY_PATH PATH
