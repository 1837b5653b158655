#!/bin/sh
# bench/spmv_gpu.sh: the SG-DIA SpMV of runtime/sgdia_cuda.cu against cuSPARSE CSR on one GPU,
# from the repository root. Builds build/bench/spmv_gpu, runs its self-checks, then the triad
# and the cases, and prints a markdown table last (bench/spmv_gpu.cu states the byte model).
#
#   bench/spmv_gpu.sh                    the full run (about 1 minute, 6 GiB of GPU memory at most)
#   bench/spmv_gpu.sh --quick            small grids: a smoke test
#   bench/spmv_gpu.sh --check-only       the self-checks only
#   SANITIZE=1 bench/spmv_gpu.sh         the self-checks under compute-sanitizer (memcheck)
#
# With $OUT set, the table is also written to $OUT/spmv_gpu.md and the whole log to
# $OUT/spmv_gpu.log. NVCC and ARCH override the compiler and the target (default sm_90).
set -eu
NVCC=${NVCC:-nvcc}
ARCH=${ARCH:-sm_90}
SANITIZE=${SANITIZE:-0}

mkdir -p build/bench
"$NVCC" -O3 -arch="$ARCH" -std=c++17 -Xcompiler -Wall,-Wextra -Iruntime \
  -o build/bench/spmv_gpu bench/spmv_gpu.cu runtime/sgdia_cuda.cu runtime/stncuda.cu -lcusparse

if [ "$SANITIZE" = 1 ]; then
  compute-sanitizer --tool memcheck --error-exitcode 1 build/bench/spmv_gpu --check-only
  exit 0
fi

if [ -n "${OUT:-}" ]; then
  mkdir -p "$OUT"
  # tee, so that the output shows as it comes; the program's status through a file (no pipefail in sh)
  { status=0; build/bench/spmv_gpu --md "$OUT/spmv_gpu.md" "$@" 2>&1 || status=$?; echo "$status" >build/bench/spmv_gpu.status; } | tee "$OUT/spmv_gpu.log"
  exit "$(cat build/bench/spmv_gpu.status)"
fi
exec build/bench/spmv_gpu "$@"
