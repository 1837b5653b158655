#!/bin/sh
# bench/probes/sgdia_loads_gpu.sh: how the SG-DIA product's way of loading the matrix (cached through
# L1/L2, or streaming: evict-first) and its block size affect a whole GMRES solve, not the
# product alone: the cavity at 256^2 (a 42 MB matrix, H200 L2: 50 MB), GMRES(30), Jacobi,
# stngmres as a user gets it. After -stn_autotune, the product's line in the tuning cache is
# replaced by each shape in turn ("threads streaming") and the solve is timed.
#
#   PETSC_DIR=/path/to/cuda-petsc bench/probes/sgdia_loads_gpu.sh
#
# Prints one line per shape: Krylov iterations and microseconds per iteration (KSPSolve).
# Logs in $OUT or build/bench-gpu. docs/gpu-runs/sgdia_loads.txt has its output; it is why
# stntune.c loads a matrix over half the L2 as streaming data.
set -u
: "${PETSC_DIR:?set PETSC_DIR to a CUDA-enabled PETSc}"
LOG=${OUT:-build/bench-gpu}
B=build/bench-gpu
mkdir -p "$LOG" "$B"
PETSC_ARCH= bin/stencilc examples/cavity.stn -o "$B/cavity" || exit 1
"$B/cavity" -da_grid_x 256 -da_grid_y 256 -stn_autotune -stn_tune_cache "$LOG/loads-tuning.txt" -snes_max_it 1 >"$LOG/loads-tune.log" 2>&1
C="-da_grid_x 256 -da_grid_y 256 -snes_rtol 1e-8 -ksp_gmres_restart 30 -pc_type jacobi -ksp_rtol 1e-5 -ksp_max_it 100000 -ksp_converged_reason -log_view -stn_device gpu"
for shape in "256 1" "1024 1" "256 0" "1024 0"; do
  sed "s/\(sgdia_dof4_sten5\t18\t\)[0-9]* [01]/\1$shape/" "$LOG/loads-tuning.txt" >"$LOG/loads-shape.txt"
  # shellcheck disable=SC2086
  "$B/cavity" $C -stn_tune_cache "$LOG/loads-shape.txt" >"$LOG/loads.log" 2>&1
  awk -v s="$shape" '/Linear solve converged/ {its += $NF} $1 == "KSPSolve" {t = $4}
    END {printf "sgdia shape %s (threads, streaming): %d its, %.1f us/it\n", s, its, t / its * 1e6}' "$LOG/loads.log"
done
