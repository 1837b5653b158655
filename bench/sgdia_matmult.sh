#!/bin/sh
# bench/sgdia_matmult.sh: SG-DIA MatMult against PETSc's AIJ MatMult, 3D 7-point star stencil,
# from the repository root. Prints a markdown table (see bench/sgdia_matmult.c for the byte model).
#
#   bench/sgdia_matmult.sh                 dof 1 on 256^3 and dof 4 on 128^3, on 1 and 2 ranks
#   N1=128 N4=64 RANKS="1" ROUNDS=3 bench/sgdia_matmult.sh      smaller and quicker
#
# The sizes are chosen to be far beyond the caches (the values alone are 0.9 GB and 1.9 GB);
# the whole run needs about 6 GB of memory and a few minutes. Built with -O2, like generated
# programs, and no -march flags.
set -eu
N1=${N1:-256}
N4=${N4:-128}
RANKS=${RANKS:-"1 2"}
ROUNDS=${ROUNDS:-5}
CC=${MPICC:-mpicc}
MPIEXEC=${MPIEXEC:-mpiexec}
OMPI_ALLOW_RUN_AS_ROOT=1
OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_ALLOW_RUN_AS_ROOT OMPI_ALLOW_RUN_AS_ROOT_CONFIRM

# runtime/sgdia.c calls LAPACK directly: link the BLAS/LAPACK PETSc was configured with.
PETSC_VARIABLES=$(pkg-config --variable=libdir PETSc)/petsc/conf/petscvariables
LAPACK_LIBS=$(sed -n 's/^BLASLAPACK_LIB *= *//p' "$PETSC_VARIABLES" 2>/dev/null || true)
mkdir -p build/bench
# shellcheck disable=SC2046,SC2086 # the pkg-config flags are word lists
$CC -std=c11 -D_POSIX_C_SOURCE=200809L -O2 -Wall -Wextra -Iruntime $(pkg-config --cflags PETSc) \
  -o build/bench/sgdia_matmult bench/sgdia_matmult.c runtime/sgdia.c $(pkg-config --libs PETSc) $LAPACK_LIBS -lm

echo "SG-DIA vs AIJ MatMult, 3D 7-point star; $(nproc) cores, $(uname -m), PETSc $(pkg-config --modversion PETSc); best of $ROUNDS rounds"
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
header=-header
for np in $RANKS; do
  for case in "1 $N1" "4 $N4"; do
    set -- $case
    $MPIEXEC --oversubscribe -n "$np" build/bench/sgdia_matmult -dof "$1" -n "$2" -rounds "$ROUNDS" $header
    header=
  done
done
echo
echo "GB/s from the byte model of bench/sgdia_matmult.c; speed-up = best AIJ time / SG-DIA time, in the same run."
