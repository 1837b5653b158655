#!/bin/sh
# tests/gpu/vec-tests.sh: stencilc's GPU vector kernels (runtime/stnvec*.c, stnvec_cuda.cu),
# GMRES step (stngmres_cuda.cu), grid transfers (stnmg_cuda.cu), coarse dense inverse
# (stncoarse_cuda.cu) and device memory (stncuda.cu) on the device, from the repository root
# (scripts/gpu-check.sh runs it):
#
#   PETSC_DIR=/path/to/cuda-petsc sh tests/gpu/vec-tests.sh [OUTDIR]
#   PETSC_DIR=... sh tests/gpu/vec-tests.sh --build-only [OUTDIR]   (compile and link only)
#
# Builds tests/gpu/vec_ops.c with the runtime's vector files against $PETSC_DIR and runs it:
# every operation VECSTNCUDA replaces, through PETSc's API, against VECSEQ (results, the proof
# that our kernel ran, the result left on the device), the corner cases, and every kernel with
# every launch shape against the CPU reference (see vec_ops.c); then gmres_step.c,
# gmres_cycle.c, transfer.c, dense_inverse.c and device_memory.c, each saying what it checks.
# Then, when compute-sanitizer is installed, each on small sizes under memcheck, racecheck,
# synccheck and initcheck.
#
# Prints one line per check, "gpu: ...: ok" or "FAIL: gpu: ..."; the logs go to OUTDIR
# (default $OUT/vec, else build/gpu-check/vec). Exit status 1 if anything failed.
set -u
build_only=0
if [ "${1:-}" = "--build-only" ]; then
  build_only=1
  shift
fi
OUTDIR=${1:-${OUT:-build/gpu-check}/vec}
B=build/gpu-tests
mkdir -p "$OUTDIR" "$B"
. tests/gpu/build-env.sh || exit 1
nfail=0
ok() { echo "gpu: $*: ok"; }
bad() { nfail=$((nfail + 1)); echo "FAIL: gpu: $*"; }

# Build.
if ! stn_build_runtime "$B/runtime"; then
  bad "vec: building the runtime's vector files (log: $OUTDIR/build.log)"
  cp "$B/runtime/build.log" "$OUTDIR/build.log"
  tail -30 "$OUTDIR/build.log"
  exit 1
fi
# shellcheck disable=SC2086 # flag lists
if ! $CC $CFLAGS -o "$B/vec_ops" tests/gpu/vec_ops.c $RUNTIME_OBJS $LIBS >"$OUTDIR/build.log" 2>&1; then
  bad "vec: building tests/gpu/vec_ops.c (log: $OUTDIR/build.log)"
  tail -30 "$OUTDIR/build.log"
  exit 1
fi
# shellcheck disable=SC2086 # flag lists
if ! $CC $CFLAGS -o "$B/gmres_step" tests/gpu/gmres_step.c $RUNTIME_OBJS $LIBS >>"$OUTDIR/build.log" 2>&1; then
  bad "vec: building tests/gpu/gmres_step.c (log: $OUTDIR/build.log)"
  tail -30 "$OUTDIR/build.log"
  exit 1
fi
# shellcheck disable=SC2086 # flag lists
if ! $CC $CFLAGS -o "$B/gmres_cycle" tests/gpu/gmres_cycle.c $RUNTIME_OBJS $LIBS >>"$OUTDIR/build.log" 2>&1; then
  bad "vec: building tests/gpu/gmres_cycle.c (log: $OUTDIR/build.log)"
  tail -30 "$OUTDIR/build.log"
  exit 1
fi
# shellcheck disable=SC2086
if ! $CC $CFLAGS -o "$B/transfer" tests/gpu/transfer.c $RUNTIME_OBJS $LIBS >>"$OUTDIR/build.log" 2>&1; then
  bad "vec: building tests/gpu/transfer.c (log: $OUTDIR/build.log)"
  tail -30 "$OUTDIR/build.log"
  exit 1
fi
# shellcheck disable=SC2086
if ! $CC $CFLAGS -o "$B/dense_inverse" tests/gpu/dense_inverse.c $RUNTIME_OBJS $LIBS >>"$OUTDIR/build.log" 2>&1; then
  bad "vec: building tests/gpu/dense_inverse.c (log: $OUTDIR/build.log)"
  tail -30 "$OUTDIR/build.log"
  exit 1
fi
# shellcheck disable=SC2086
if ! $CC $CFLAGS -o "$B/device_memory" tests/gpu/device_memory.c $RUNTIME_OBJS $LIBS >>"$OUTDIR/build.log" 2>&1; then
  bad "vec: building tests/gpu/device_memory.c (log: $OUTDIR/build.log)"
  tail -30 "$OUTDIR/build.log"
  exit 1
fi
if [ -s "$OUTDIR/build.log" ]; then echo "note: gpu: vec: compiler warnings in $OUTDIR/build.log"; fi
ok "vec: vec_ops, gmres_step, gmres_cycle, transfer, dense_inverse and device_memory built"
[ $build_only = 1 ] && exit 0

# Every check, full sizes (0, 1, 31, 1000, 1000003).
start=$(date +%s)
"$B/vec_ops" >"$OUTDIR/vec_ops.log" 2>&1
rc=$?
grep -E "^(gpu: vec:|FAIL: gpu: vec:)" "$OUTDIR/vec_ops.log"
nbad=$(grep -c "^FAIL: gpu: vec:" "$OUTDIR/vec_ops.log")
nfail=$((nfail + nbad))
grep -E "^vec_ops: (device|our kernels ran)" "$OUTDIR/vec_ops.log" | sed 's/^/note: /'
if [ $rc -eq 0 ] && [ "$nbad" -eq 0 ]; then
  ok "vec: vec_ops, all checks ($(($(date +%s) - start)) s)"
elif [ "$nbad" -eq 0 ]; then
  bad "vec: vec_ops exited with status $rc before its summary (log: $OUTDIR/vec_ops.log)"
  tail -30 "$OUTDIR/vec_ops.log"
else
  echo "details (log: $OUTDIR/vec_ops.log):"
  grep "^  detail:" "$OUTDIR/vec_ops.log" | head -40
fi

# The GMRES step, fused and in three kernels (tests/gpu/gmres_step.c).
"$B/gmres_step" >"$OUTDIR/gmres_step.log" 2>&1
rc=$?
grep -E "^(gpu: vec:|FAIL: gpu: vec:)" "$OUTDIR/gmres_step.log"
if [ $rc -eq 0 ]; then ok "vec: gmres_step, all checks"
else bad "vec: gmres_step (exit $rc; log: $OUTDIR/gmres_step.log)"; tail -5 "$OUTDIR/gmres_step.log"; fi

# The GMRES cycle kernel against the product and the step (tests/gpu/gmres_cycle.c).
"$B/gmres_cycle" >"$OUTDIR/gmres_cycle.log" 2>&1
rc=$?
grep -E "^(gpu: gmres cycle:|FAIL: gpu: gmres cycle:)" "$OUTDIR/gmres_cycle.log"
if [ $rc -eq 0 ]; then ok "vec: gmres_cycle, all checks"
else bad "vec: gmres_cycle (exit $rc; log: $OUTDIR/gmres_cycle.log)"; tail -5 "$OUTDIR/gmres_cycle.log"; fi

# The grid transfers against the host's loops, bit for bit (tests/gpu/transfer.c), and their
# speed against a copy (-bench: one line, for the record).
"$B/transfer" -bench >"$OUTDIR/transfer.log" 2>&1
rc=$?
grep -E "^FAIL: gpu: transfer:|^gpu: bench:" "$OUTDIR/transfer.log"
if [ $rc -eq 0 ]; then ok "vec: transfer, $(grep -c "^gpu: transfer:.*: ok$" "$OUTDIR/transfer.log") checks"
else bad "vec: transfer (exit $rc; log: $OUTDIR/transfer.log)"; tail -5 "$OUTDIR/transfer.log"; fi

# The coarsest operator's dense inverse against the host's expansion of the same matrix, on each
# of its paths (tests/gpu/dense_inverse.c), and the time to form it (-bench, for the record).
"$B/dense_inverse" -bench >"$OUTDIR/dense_inverse.log" 2>&1
rc=$?
grep -E "^FAIL: gpu: dense inverse:|^gpu: bench:" "$OUTDIR/dense_inverse.log"
if [ $rc -eq 0 ]; then ok "vec: dense inverse, $(grep -c "^gpu: dense inverse:.*: ok$" "$OUTDIR/dense_inverse.log") checks"
else bad "vec: dense inverse (exit $rc; log: $OUTDIR/dense_inverse.log)"; tail -5 "$OUTDIR/dense_inverse.log"; fi

# The runtime's device memory: chunks and pool (tests/gpu/device_memory.c).
"$B/device_memory" >"$OUTDIR/device_memory.log" 2>&1
rc=$?
grep -E "^FAIL: gpu: device memory:" "$OUTDIR/device_memory.log"
if [ $rc -eq 0 ]; then ok "vec: device memory, $(grep -c "^gpu: device memory:.*: ok$" "$OUTDIR/device_memory.log") checks"
else bad "vec: device memory (exit $rc; log: $OUTDIR/device_memory.log)"; tail -5 "$OUTDIR/device_memory.log"; fi

# Clean kernels: the same programs on small sizes under compute-sanitizer.
if command -v compute-sanitizer >/dev/null 2>&1; then
  for tool in memcheck racecheck synccheck initcheck; do
    args="-sizes 0,1,31,1000 -nvs 1,5,33 -shape_sizes 31,1000 -few_shapes"
    # shellcheck disable=SC2086
    compute-sanitizer --tool $tool --error-exitcode 99 "$B/vec_ops" $args >"$OUTDIR/vec_ops.$tool.log" 2>&1
    src=$?
    if [ $src -eq 0 ]; then ok "vec: compute-sanitizer $tool: vec_ops"
    else
      bad "vec: compute-sanitizer $tool: vec_ops (exit $src; log: $OUTDIR/vec_ops.$tool.log)"
      grep -E "^========= (Invalid|Race|Barrier|Uninitialized|ERROR|Error)|FAIL" "$OUTDIR/vec_ops.$tool.log" | head -10
    fi
    for prog in gmres_step gmres_cycle transfer dense_inverse device_memory; do
      compute-sanitizer --tool $tool --error-exitcode 99 "$B/$prog" -small >"$OUTDIR/$prog.$tool.log" 2>&1
      src=$?
      if [ $src -eq 0 ]; then ok "vec: compute-sanitizer $tool: $prog"
      else
        bad "vec: compute-sanitizer $tool: $prog (exit $src; log: $OUTDIR/$prog.$tool.log)"
        grep -E "^========= (Invalid|Race|Barrier|Uninitialized|ERROR|Error)|FAIL" "$OUTDIR/$prog.$tool.log" | head -10
      fi
    done
  done
else
  echo "note: gpu: compute-sanitizer not found; the vector kernels were not sanitized"
fi

echo "vec-tests: $nfail failed"
[ $nfail -eq 0 ]
