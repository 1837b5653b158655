#!/bin/sh
# tests/runtime/run.sh: unit tests of the hand-written runtime (runtime/), from the repository root.
#
#   sgdia_test   the SG-DIA matrix against PETSc's AIJ (tests/runtime/sgdia_test.c),
#                on 1, 2 and 4 MPI ranks
#   vecref       the GPU vector kernels' CPU reference (runtime/stnvec_ref.c) against naive
#                loops (tests/runtime/vecref.c); plain C, no PETSc or CUDA
#   fastdiv_test the SG-DIA kernels' division by a multiply (runtime/stnfastdiv.h) against the
#                C operator (tests/runtime/fastdiv_test.c); plain C
#   sgdia_split_test the SG-DIA row product with split reads (owned neighbours from the owned
#                array, the others from the ghosted one: runtime/sgdia_rows.h) against the
#                ghosted product, bitwise (tests/runtime/sgdia_split_test.cpp); C++
#   transfer_split_test the multigrid transfers with split reads (runtime/stnmg_cuda.h,
#                StnTransferGrid.own) against those on the whole ghosted input, bitwise
#                (tests/runtime/transfer_split_test.c); C
#   halo_plan_test the device ghost exchange's blocks, flags and layout (runtime/stnhalo_plan.c,
#                stnhalo_layout.h) played on 1080 partitions and 12 gathers
#                (tests/runtime/halo_plan_test.c); C
#   slabs_test   the split in slabs on several GPUs (runtime/stnmg.c, StnDMSlabsFit) against
#                PETSc's DMDA set-up and coarsening (tests/runtime/slabs_test.c), on 2 and 4 ranks
#   transfer_test the multigrid transfers (runtime/stntransfer.c) against PETSc's
#                DMCreateInterpolation (and its scale) and DMCreateInjection
#                (tests/runtime/transfer_test.c), on 1 to 4 MPI ranks
#
# Builds into build/tests/ with mpicc and PETSc's pkg-config flags, the flags generated programs
# use. Prints one line per case; exits non-zero if anything fails to build or any case fails.
set -u
CC=${MPICC:-mpicc}
MPIEXEC=${MPIEXEC:-mpiexec}
# CI runs as root on a 2-core machine.
OMPI_ALLOW_RUN_AS_ROOT=1
OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_ALLOW_RUN_AS_ROOT OMPI_ALLOW_RUN_AS_ROOT_CONFIRM

# The vector kernels' CPU reference: plain C, so it runs even without PETSc.
mkdir -p build/tests
vecfail=0
if ! ${CC_PLAIN:-cc} -std=c11 -O2 -g -Wall -Wextra -Werror -Iruntime -o build/tests/vecref tests/runtime/vecref.c runtime/stnvec_ref.c -lm; then
  echo "FAIL: building tests/runtime/vecref.c"
  vecfail=1
elif ! build/tests/vecref; then
  vecfail=1
fi
# The SG-DIA kernels' division by the box's extents (runtime/stnfastdiv.h): plain C too.
if ! ${CC_PLAIN:-cc} -std=c11 -O2 -g -Wall -Wextra -Werror -Iruntime -o build/tests/fastdiv_test tests/runtime/fastdiv_test.c; then
  echo "FAIL: building tests/runtime/fastdiv_test.c"
  vecfail=1
elif ! build/tests/fastdiv_test; then
  vecfail=1
fi

if ! pkg-config --exists PETSc; then
  echo "FAIL: PETSc not found by pkg-config (make deps installs petsc-dev)"
  exit 1
fi
PETSC_CFLAGS=$(pkg-config --cflags PETSc)
PETSC_LIBS=$(pkg-config --libs PETSc)
# runtime/sgdia.c calls LAPACK (getrf/getri) directly, so it links the BLAS/LAPACK that PETSc was
# configured with; PETSc records them in petscvariables (pkg-config --libs PETSc leaves them out).
PETSC_VARIABLES=$(pkg-config --variable=libdir PETSc)/petsc/conf/petscvariables
LAPACK_LIBS=$(sed -n 's/^BLASLAPACK_LIB *= *//p' "$PETSC_VARIABLES" 2>/dev/null)

mkdir -p build/tests
# The device ghost exchange's geometry and layout (runtime/stnhalo_plan.c, stnhalo_layout.h): C,
# PETSc's headers (stncuda.h's), no library.
# shellcheck disable=SC2086 # the pkg-config flags are word lists
if ! $CC -std=c11 -O2 -g -Wall -Wextra -Werror -Iruntime $PETSC_CFLAGS -o build/tests/halo_plan_test tests/runtime/halo_plan_test.c runtime/stnhalo_plan.c; then
  echo "FAIL: building tests/runtime/halo_plan_test.c"
  vecfail=1
elif ! build/tests/halo_plan_test; then
  vecfail=1
fi
# The multigrid transfers with split reads (runtime/stnmg_cuda.h) on the host: C, PETSc's headers.
# shellcheck disable=SC2086 # the pkg-config flags are word lists
if ! $CC -std=c11 -O2 -g -Wall -Wextra -Werror -Iruntime $PETSC_CFLAGS -o build/tests/transfer_split_test tests/runtime/transfer_split_test.c -lm; then
  echo "FAIL: building tests/runtime/transfer_split_test.c"
  vecfail=1
elif ! build/tests/transfer_split_test; then
  vecfail=1
fi
# The SG-DIA row product with split reads (runtime/sgdia_rows.h) on the host: C++, PETSc's headers.
# shellcheck disable=SC2086 # the pkg-config flags are word lists
if ! ${MPICXX:-mpicxx} -std=c++17 -O2 -g -Wall -Wextra -Werror -Iruntime $PETSC_CFLAGS -o build/tests/sgdia_split_test tests/runtime/sgdia_split_test.cpp; then
  echo "FAIL: building tests/runtime/sgdia_split_test.cpp"
  vecfail=1
elif ! build/tests/sgdia_split_test; then
  vecfail=1
fi
# shellcheck disable=SC2086 # the pkg-config flags are word lists
if ! $CC -std=c11 -D_POSIX_C_SOURCE=200809L -O2 -g -Wall -Wextra -Werror -Iruntime $PETSC_CFLAGS \
     -o build/tests/sgdia_test tests/runtime/sgdia_test.c runtime/sgdia.c runtime/stnmg.c $PETSC_LIBS $LAPACK_LIBS -lm; then
  echo "FAIL: building tests/runtime/sgdia_test.c"
  exit 1
fi

fail=$vecfail
# The split in slabs on several GPUs (StnDMSlabsFit, runtime/stnmg.c) against PETSc's DMDA, on 2
# and 4 ranks.
# shellcheck disable=SC2086 # the pkg-config flags are word lists
if ! $CC -std=c11 -D_POSIX_C_SOURCE=200809L -O2 -g -Wall -Wextra -Werror -Iruntime $PETSC_CFLAGS \
     -o build/tests/slabs_test tests/runtime/slabs_test.c runtime/sgdia.c runtime/stnmg.c $PETSC_LIBS $LAPACK_LIBS -lm; then
  echo "FAIL: building tests/runtime/slabs_test.c"
  fail=1
else
  for np in 2 4; do
    if ! $MPIEXEC --oversubscribe -n $np build/tests/slabs_test "$@"; then
      echo "FAIL: slabs_test on $np ranks"
      fail=1
    fi
  done
fi
# The grid transfers of the SG-DIA hierarchy (runtime/stntransfer.c) against PETSc's, on 1 to 4
# ranks (3 splits one direction, 4 two: the boxes meet at corners).
# shellcheck disable=SC2086 # the pkg-config flags are word lists
if ! $CC -std=c11 -D_POSIX_C_SOURCE=200809L -O2 -g -Wall -Wextra -Werror -Iruntime $PETSC_CFLAGS \
     -o build/tests/transfer_test tests/runtime/transfer_test.c runtime/stntransfer.c $PETSC_LIBS -lm; then
  echo "FAIL: building tests/runtime/transfer_test.c"
  fail=1
else
  for np in 1 2 3 4; do
    if ! $MPIEXEC --oversubscribe -n $np build/tests/transfer_test "$@"; then
      echo "FAIL: transfer_test on $np ranks"
      fail=1
    fi
  done
fi
for np in 1 2 4; do
  if ! $MPIEXEC --oversubscribe -n $np build/tests/sgdia_test "$@"; then
    echo "FAIL: sgdia_test on $np ranks"
    fail=1
  fi
done
[ $fail -eq 0 ] && echo "runtime tests: all passed"
exit $fail
