#!/bin/sh
# tests/petsc/build-tutorials.sh: builds the PETSc SNES tutorials that the
# examples reproduce (ex5, ex14, ex19) and the vector comparer
# tests/petsc/vecdiff.c into build/petsc-tutorials/, from the repository root.
# A program is rebuilt only when it is missing or older than its source.
#
#   tests/petsc/build-tutorials.sh [OUTDIR]     (default build/petsc-tutorials)
#
# The tutorial sources come from the Debian package libpetsc3.18-dev-examples
# (PETSC_TUTORIALS=DIR to use another copy); the compiler and flags from
# mpicc and `pkg-config PETSc` (petsc-dev).
set -eu
TUT=${PETSC_TUTORIALS:-/usr/share/petsc/3.18/share/petsc/examples/src/snes/tutorials}
OUT=${1:-build/petsc-tutorials}
HERE=$(dirname "$0")

die() { echo "build-tutorials.sh: error: $*" >&2; exit 1; }

for ex in ex5 ex14 ex19; do
  [ -r "$TUT/$ex.c" ] || die "$TUT/$ex.c not found: the PETSc tutorial sources are missing.
  install them with: apt-get install libpetsc3.18-dev-examples
  (or point PETSC_TUTORIALS at a directory holding ex5.c, ex14.c and ex19.c)"
done
command -v mpicc >/dev/null 2>&1 || die "mpicc not found (install petsc-dev, which brings OpenMPI)"
command -v pkg-config >/dev/null 2>&1 || die "pkg-config not found (apt-get install pkg-config)"
pkg-config --exists PETSc || die "pkg-config knows no PETSc (apt-get install petsc-dev)"
CFLAGS=$(pkg-config --cflags PETSc)
LIBS=$(pkg-config --libs PETSc)

mkdir -p "$OUT"

# newer A B: A was modified after B (POSIX test has no -nt).
newer() { [ -n "$(find "$1" -prune -newer "$2" 2>/dev/null)" ]; }

# build SOURCE PROGRAM: compile when PROGRAM is missing or older than SOURCE.
build() {
  if [ -x "$2" ] && ! newer "$1" "$2"; then return 0; fi
  echo "mpicc $1 -> $2"
  # shellcheck disable=SC2086
  mpicc $CFLAGS -O2 "$1" $LIBS -lm -o "$2.tmp" || die "compiling $1 failed"
  mv -f "$2.tmp" "$2"
}

for ex in ex5 ex14 ex19; do
  build "$TUT/$ex.c" "$OUT/$ex"
done
build "$HERE/vecdiff.c" "$OUT/vecdiff"
