#!/bin/sh
# bench/vec_gpu.sh: stencilc's GPU vector kernels (runtime/stnvec_cuda.cu, as PETSc vector type
# VECSTNCUDA through runtime/stnvec.c) against PETSc's own CUDA vectors (VECCUDA) and cuBLAS on
# one GPU, the triad as the bandwidth reference, and the tuner (runtime/stntune.c) at each
# length: tuned against default launch shapes and the search's cost. From the repository root:
#
#   PETSC_DIR=/path/to/cuda-petsc bench/vec_gpu.sh [OUTDIR] [program options]
#
# OUTDIR defaults to $OUT, else build/bench/vec_gpu. Written there: vec_gpu.log (everything
# printed), vec_gpu.md (the tables, also printed last), vec_gpu.csv (one row per length,
# operation and implementation, and the triad), vec_gpu_tune.csv (default against tuned shapes),
# vec_gpu_tuning.txt (the tuning cache of this run; the user's cache is not read or written),
# and vec_gpu.png (bench/plot_vec_gpu.py, when python3 has matplotlib).
#
# Program options (bench/vec_gpu.c): -sizes 100000,1000000,10000000,100000000 (default),
# -nv 30, -batch_ms 10, -batches 5, -no_tune, -tune_cache FILE, -tune_sizes N,..., -ref_max N.
# Example, a smoke test of a few seconds: bench/vec_gpu.sh "$OUT" -sizes 10000,100000 -batch_ms 2
#
# The build follows PETSc's petscvariables (PCC for the C files; PETSc's external libraries)
# and compiles the CUDA files with nvcc for ARCH (default sm_90). NVCC overrides nvcc.
# GPU memory: at n = 1e8, 34 vectors (27 GB) at once, and the tuner's 33 (26 GB) before them.
# Time (estimated, not yet measured): build about 30 s, measurements about 40 s, and the tuner,
# whose cost at n = 1e8 is mostly its CPU reference (recomputed for every shape it checks: mdot
# about 8 s each on a 2020s x86 core), so 1.5-2.5 min there; -tune_sizes 100000,1000000,10000000
# leaves 1e8 on the default shapes if that is too long.
set -eu
: "${PETSC_DIR:?set PETSC_DIR to a CUDA-enabled PETSc}"
NVCC=${NVCC:-nvcc}
ARCH=${ARCH:-sm_90}
OUTDIR=${OUT:-build/bench/vec_gpu}
if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then OUTDIR=$1; shift; fi
mkdir -p "$OUTDIR"

P=$PETSC_DIR${PETSC_ARCH:+/$PETSC_ARCH}
VARS=$P/lib/petsc/conf/petscvariables
[ -f "$VARS" ] || { echo "vec_gpu: no $VARS; is PETSC_DIR (and PETSC_ARCH) a built PETSc?" >&2; exit 1; }
grep -q "define PETSC_HAVE_CUDA 1" "$P/include/petscconf.h" || { echo "vec_gpu: $P is not configured with CUDA" >&2; exit 1; }
var() { sed -n "s/^$1 = //p" "$VARS" | head -1; }
PCC=$(var PCC)
CUDA_INCLUDE=$(var CUDA_INCLUDE)
EXTERNAL=$(var PETSC_EXTERNAL_LIB_BASIC)
# The CUDA libraries of this machine (cudart, cublas), which need not sit where PETSc's configure found them.
NVCC_DIR=$(dirname "$(command -v "$NVCC")")
CUDA_LIBDIR=
for d in ${CUDA_HOME:+"$CUDA_HOME/lib64" "$CUDA_HOME/lib"} "$NVCC_DIR/../lib64" "$NVCC_DIR/../lib" /usr/local/cuda/lib64 /usr/local/cuda/lib; do
  if [ -e "$d/libcublas.so" ]; then CUDA_LIBDIR=$(cd "$d" && pwd); break; fi
done
[ -n "$CUDA_LIBDIR" ] || { echo "vec_gpu: cannot find libcublas.so (set CUDA_HOME)" >&2; exit 1; }
INCS="-I$PETSC_DIR/include${PETSC_ARCH:+ -I$P/include} $CUDA_INCLUDE -I$NVCC_DIR/../include -Iruntime"

B=build/bench/vec_gpu-build
mkdir -p "$B"
# the compilations in parallel (nvcc on stnvec_cuda.cu takes most of a minute)
pids=
for f in runtime/stncuda.cu runtime/stnvec_cuda.cu runtime/sgdia_cuda.cu bench/vec_gpu_kernels.cu; do
  "$NVCC" -O3 -arch="$ARCH" -std=c++17 -Xcompiler -Wall -Iruntime -c "$f" -o "$B/$(basename "$f" .cu).o" &
  pids="$pids $!"
done
for f in runtime/stnvec.c runtime/stntune.c runtime/stnvec_ref.c bench/vec_gpu.c; do
  # shellcheck disable=SC2086
  $PCC -O2 -Wall -Wextra -Wno-unused-parameter $INCS -c "$f" -o "$B/$(basename "$f" .c).o" &
  pids="$pids $!"
done
for p in $pids; do wait "$p" || { echo "vec_gpu: the build failed" >&2; exit 1; }; done
# shellcheck disable=SC2086
$PCC -o "$B/vec_gpu" "$B/vec_gpu.o" "$B/stnvec.o" "$B/stntune.o" "$B/stnvec_ref.o" "$B/stncuda.o" "$B/stnvec_cuda.o" "$B/sgdia_cuda.o" "$B/vec_gpu_kernels.o" \
  -L"$P/lib" -Wl,-rpath,"$P/lib" -lpetsc -L"$CUDA_LIBDIR" -Wl,-rpath,"$CUDA_LIBDIR" -lcublas -lcudart $EXTERNAL -lstdc++ -lm

# tee, so that the output shows as it comes; the program's status through a file (no pipefail in sh)
{ status=0; "$B/vec_gpu" -out "$OUTDIR" "$@" 2>&1 || status=$?; echo "$status" >"$B/status"; } | tee "$OUTDIR/vec_gpu.log"
status=$(cat "$B/status")
if [ -f "$OUTDIR/vec_gpu.csv" ]; then
  if python3 -c "import matplotlib" 2>/dev/null; then
    python3 bench/plot_vec_gpu.py "$OUTDIR/vec_gpu.csv" "$OUTDIR/vec_gpu.png" && echo "vec_gpu: plotted $OUTDIR/vec_gpu.png"
  else
    echo "vec_gpu: no matplotlib here; plot later with python3 bench/plot_vec_gpu.py $OUTDIR/vec_gpu.csv OUT.png"
  fi
fi
exit "$status"
