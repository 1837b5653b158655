#!/bin/sh
# tests/gpu/petsc-vec-tests.sh: PETSc's own vector tests with stencilc's vector type, on the
# device, from the repository root (scripts/gpu-check.sh runs it):
#
#   PETSC_DIR=/path/to/cuda-petsc sh tests/gpu/petsc-vec-tests.sh [OUTDIR]
#   PETSC_DIR=... sh tests/gpu/petsc-vec-tests.sh --build-only [OUTDIR]   (compile and link only)
#
# The tests: programs of PETSc 3.24's src/vec/vec/tests and tutorials that use the operations
# VECSTNCUDA replaces on vectors made by VecSetFromOptions (so -vec_type picks the type), each
# with its arguments and expected output from the /*TEST ... TEST*/ block at its bottom (the
# cases PETSc runs with -vec_type cuda, on one rank: our PETSc has no MPI). Their sources and
# expected outputs are copied into .petsc-cuda/vectests/ (git-ignored, carried to the device
# with the PETSc build; $VECTESTS overrides the place); when that directory is missing they
# are copied from a PETSc source tree given as $PETSC_SRC.
#
# Builds runtime/stnvec*.c, stntune.c and the two .cu files into libstnvec.so, a PETSc plug-in:
# PetscInitialize processes -dll_append PATH by dlopen()ing PATH and calling its function
# PetscDLLibraryRegister_<name>, <name> being the file's name without "lib" and the suffix
# (PETSc's src/sys/dll/dlimpl.c, PetscDLLibraryOpen); ours, PetscDLLibraryRegister_stnvec,
# registers the type "stncuda" before the program makes any vector. Each test then runs twice:
#
#   ours:    ARGS -dll_append .../libstnvec.so -vec_type stncuda -log_view :LOG
#   control: ARGS -vec_type cuda -log_view :LOG        (PETSc's own CUDA vector, no plug-in)
#
# and each output is compared with the expected one as PETSc's test harness does (config/
# petsc_harness.sh and lib/petsc/bin/petscdiff): the test's filter applied to the output, then
# diff -w, after replacing every floating-point number by XXX unless the test says diff_args: -j;
# PETSC_OPTIONS holds the harness's "-check_pointer_intensity 0 -error_output_stdout -malloc_dump".
# The -log_view goes to a file, so that it does not touch the output.
#
# A test passes when our run exits 0, its output matches, and its -log_view shows every StnVec*
# event the test must cause (the events of stnvec.c's replaced operations: the proof that ours
# ran, not PETSc's) with a nonzero count. If ours differs from the expected output exactly as
# the control does (the filtered outputs of both runs are the same), the difference is PETSc's
# own, not ours: reported, not failed. The control must show no StnVec event.
#
# Prints one line per test, "gpu: petsc vec test NAME: ok (...)" or "FAIL: gpu: petsc vec test
# NAME: ..."; logs in OUTDIR (default $OUT/petsc-vec, else build/gpu-check/petsc-vec).
set -u
build_only=0
if [ "${1:-}" = "--build-only" ]; then
  build_only=1
  shift
fi
OUTDIR=${1:-${OUT:-build/gpu-check}/petsc-vec}
VT=${VECTESTS:-.petsc-cuda/vectests}
B=build/gpu-tests
mkdir -p "$OUTDIR" "$B/vectests"
. tests/gpu/build-env.sh || exit 1
nfail=0
ok() { echo "gpu: $*: ok"; }
bad() { nfail=$((nfail + 1)); echo "FAIL: gpu: $*"; }

# name|source (under src/vec/vec/)|arguments|expected output|diff (-j: exact but whitespace;
# num: numbers replaced)|filter of the output|StnVec events that must have run
TESTS='tut-ex1|tutorials/ex1.c||tutorials/output/ex1_1.out|-j||StnVecDot StnVecMDot StnVecNorm StnVecScale StnVecCopy StnVecAXPY StnVecAYPX StnVecWAXPY StnVecPointwiseMult StnVecMAXPY StnVecSet
ex43|tests/ex43.c|-random_type curand|tests/output/ex43_1.out|num||StnVecDot StnVecMDot
ex34|tests/ex34.c||tests/output/ex34_1.out|num||StnVecNorm StnVecScale StnVecCopy StnVecSet
ex28|tests/ex28.c||tests/output/empty.out|num||StnVecDot StnVecNorm StnVecSet
ex28-async|tests/ex28.c|-splitreduction_async|tests/output/empty.out|num||StnVecDot StnVecNorm StnVecSet
ex62|tests/ex62.c||tests/output/empty.out|num||StnVecScale StnVecAXPY StnVecNorm StnVecSet
ex53|tests/ex53.c||tests/output/empty.out|num||StnVecNorm StnVecSet
ex27|tests/ex27.c||tests/output/empty.out|num||StnVecSet
ex31|tests/ex31.c||tests/output/empty.out|num||StnVecSet
ex52|tests/ex52.c||tests/output/empty.out|num||StnVecSet
ex54|tests/ex54.c||tests/output/empty.out|num||StnVecSet
ex2k-mdot|tests/ex2k.c|-n 2 -m 2 -test_name VecMDot|tests/output/empty.out|num|grep DOES_NOT_EXIST|StnVecMDot
ex2k-maxpy|tests/ex2k.c|-n 2 -m 2 -test_name VecMAXPY|tests/output/empty.out|num|grep DOES_NOT_EXIST|StnVecMAXPY'

# The sources, from a PETSc source tree, when they are not here yet.
if ! [ -d "$VT" ]; then
  if [ -z "${PETSC_SRC:-}" ] || ! [ -d "$PETSC_SRC/src/vec/vec/tests" ]; then
    bad "petsc vec tests: $VT is missing; set PETSC_SRC to PETSc 3.24's source tree to copy the tests from"
    exit 1
  fi
  mkdir -p "$VT/tests/output" "$VT/tutorials/output"
  echo "$TESTS" | while IFS='|' read -r name src args want diffmode filter events; do
    cp "$PETSC_SRC/src/vec/vec/$src" "$VT/$src" && cp "$PETSC_SRC/src/vec/vec/$want" "$VT/$want"
  done
  cp "$PETSC_SRC/lib/petsc/bin/petscdiff" "$VT/petscdiff"
  echo "PETSc $(sed -n 's/^#define PETSC_VERSION_\(MAJOR\|MINOR\|SUBMINOR\) *//p' "$PETSC_SRC/include/petscversion.h" | tr '\n' '.' | sed 's/\.$//') src/vec/vec: the tests of tests/gpu/petsc-vec-tests.sh" >"$VT/README"
  echo "note: gpu: copied the PETSc vector tests from $PETSC_SRC into $VT"
fi

# The plug-in.
if ! stn_build_runtime "$B/runtime"; then
  cp "$B/runtime/build.log" "$OUTDIR/build.log"
  bad "petsc vec tests: building the runtime's vector files (log: $OUTDIR/build.log)"
  tail -30 "$OUTDIR/build.log"
  exit 1
fi
mkdir -p "$B/plugin"
# shellcheck disable=SC2086 # flag lists
if ! $CC -shared -Wl,-soname,libstnvec.so -o "$B/plugin/libstnvec.so" $RUNTIME_OBJS $LIBS >"$OUTDIR/build.log" 2>&1; then
  bad "petsc vec tests: linking libstnvec.so (log: $OUTDIR/build.log)"
  tail -30 "$OUTDIR/build.log"
  exit 1
fi
if ! nm -D --defined-only "$B/plugin/libstnvec.so" | grep -q " T PetscDLLibraryRegister_stnvec$"; then
  bad "petsc vec tests: libstnvec.so does not export PetscDLLibraryRegister_stnvec"
  exit 1
fi
PLUGIN=$(cd "$B/plugin" && pwd)/libstnvec.so

# The tests' programs (tests/ex28.c and tutorials/ex1.c are different programs: named by place).
echo "$TESTS" | while IFS='|' read -r name src args want diffmode filter events; do
  exe=$B/vectests/$(echo "$src" | tr '/' '-' | sed 's/\.c$//')
  # shellcheck disable=SC3013 # -nt: dash and bash have it
  [ -x "$exe" ] && [ "$exe" -nt "$VT/$src" ] && continue
  # shellcheck disable=SC2086
  if ! $CC $CFLAGS -Wno-unused-parameter -o "$exe" "$VT/$src" $LIBS >"$OUTDIR/build-$(basename "$exe").log" 2>&1; then
    echo "FAIL: gpu: petsc vec test $name: building $src (log: $OUTDIR/build-$(basename "$exe").log)"
    tail -20 "$OUTDIR/build-$(basename "$exe").log"
  fi
done
nbuilt=$(echo "$TESTS" | while IFS='|' read -r name src rest; do
  [ -x "$B/vectests/$(echo "$src" | tr '/' '-' | sed 's/\.c$//')" ] || echo "$name"
done)
if [ -n "$nbuilt" ]; then
  bad "petsc vec tests: not built: $(echo "$nbuilt" | tr '\n' ' ')"
  [ $build_only = 1 ] && exit 1
fi
if [ $build_only = 1 ]; then
  ok "petsc vec tests: libstnvec.so and $(echo "$TESTS" | cut -d'|' -f2 | sort -u | wc -l) test programs built"
  exit 0
fi

# PETSc's test harness options.
PETSC_OPTIONS="${PETSC_OPTIONS:-} -check_pointer_intensity 0 -error_output_stdout -malloc_dump"
export PETSC_OPTIONS

# compare WANT GOT DIFFMODE: petscdiff's comparison (diff -w, numbers replaced unless -j);
# prints the differences, status 1 if any.
numbers() {
  sed -e "s/< [-+ ]*[ 0-9][0-9]*\.*[0-9]*[eE][-+][0-9][0-9]*/XXX/g" -e "s/E+000//g" \
      -e "s/[-+ ]*[-]*[ 0-9][0-9]*\.*[0-9]*[eE][-+][0-9][0-9]*/XXX/g" -e "s/[-+ ]*[-]*[ 0-9][0-9]*\.[0-9]*/XXX/g" \
      -e "s/ \*\*\*\*\*\*\*\*\* /XXX/g" "$1"
}
compare() {
  if [ "$3" = "-j" ]; then
    diff -w "$1" "$2"
  else
    numbers "$1" >"$2.want.xxx"
    numbers "$2" >"$2.got.xxx"
    if diff -w "$2.want.xxx" "$2.got.xxx" >/dev/null; then rm -f "$2.want.xxx" "$2.got.xxx"; return 0; fi
    rm -f "$2.want.xxx" "$2.got.xxx"
    diff -w "$1" "$2"
    return 1
  fi
}
# events LOG: "StnVecX count ..." of a -log_view file, counts summed over the stages
events() {
  awk '$1 ~ /^StnVec/ && $2 ~ /^[0-9]+$/ { c[$1] += $2 } END { for (e in c) if (c[e] > 0) printf "%s %d\n", e, c[e] }' "$1" 2>/dev/null | sort
}

results=$OUTDIR/results
: >"$results"
echo "$TESTS" | while IFS='|' read -r name src args want diffmode filter events; do
  exe=$B/vectests/$(echo "$src" | tr '/' '-' | sed 's/\.c$//')
  [ -x "$exe" ] || continue
  o=$OUTDIR/$name
  for run in stn cuda; do
    if [ $run = stn ]; then extra="-dll_append $PLUGIN -vec_type stncuda"; else extra="-vec_type cuda"; fi
    rm -f "$o.$run.logview"
    # shellcheck disable=SC2086 # argument lists
    "$exe" $args $extra -log_view ":$o.$run.logview" >"$o.$run.raw" 2>&1
    echo $? >"$o.$run.rc"
    if [ -n "$filter" ]; then sh -c "$filter" <"$o.$run.raw" >"$o.$run.out"; else cp "$o.$run.raw" "$o.$run.out"; fi
  done
  rc=$(cat "$o.stn.rc")
  crc=$(cat "$o.cuda.rc")
  compare "$VT/$want" "$o.stn.out" "$diffmode" >"$o.stn.diff" 2>&1
  sdiff=$?
  compare "$VT/$want" "$o.cuda.out" "$diffmode" >"$o.cuda.diff" 2>&1
  cdiff=$?
  events "$o.stn.logview" >"$o.stn.events"
  events "$o.cuda.logview" >"$o.cuda.events"
  missing=
  for e in $events; do grep -q "^$e " "$o.stn.events" || missing="$missing $e"; done
  ran=$(tr '\n' ' ' <"$o.stn.events" | sed 's/ $//; s/\([0-9]\) /\1, /g')
  control="control (-vec_type cuda): exit $crc, output $([ $cdiff -eq 0 ] && echo matches || echo differs)"
  if [ "$rc" != 0 ]; then
    echo "FAIL: gpu: petsc vec test $name: exit status $rc with -vec_type stncuda; $control (log: $o.stn.raw)"
    tail -15 "$o.stn.raw"
    echo x >>"$results"
  elif ! [ -s "$o.stn.logview" ]; then
    echo "FAIL: gpu: petsc vec test $name: no -log_view written ($o.stn.logview): cannot tell whose kernels ran"
    echo x >>"$results"
  elif [ -n "$missing" ]; then
    echo "FAIL: gpu: petsc vec test $name: our kernels did not run:$missing show no calls in -log_view (ran: ${ran:-none}); is the plug-in loaded? (log: $o.stn.raw)"
    echo x >>"$results"
  elif [ -s "$o.cuda.events" ]; then
    echo "FAIL: gpu: petsc vec test $name: the control run without the plug-in shows StnVec events: $(tr '\n' ' ' <"$o.cuda.events")"
    echo x >>"$results"
  elif [ $sdiff -eq 0 ]; then
    echo "gpu: petsc vec test $name: ok (ran: $ran; $control)"
  elif [ $cdiff -ne 0 ] && compare "$o.cuda.out" "$o.stn.out" "$diffmode" >/dev/null 2>&1; then
    echo "gpu: petsc vec test $name: ok (ran: $ran; the output differs from PETSc's expected one exactly as the control's does: PETSc's difference; see $o.stn.diff)"
  else
    echo "FAIL: gpu: petsc vec test $name: output differs from $want; $control (diff: $o.stn.diff)"
    head -20 "$o.stn.diff"
    echo x >>"$results"
  fi
done
nfail=$((nfail + $(wc -l <"$results")))
echo "petsc-vec-tests: $nfail failed"
[ $nfail -eq 0 ]
