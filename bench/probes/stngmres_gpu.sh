#!/bin/sh
# bench/probes/stngmres_gpu.sh: where KSPSTNGMRES's time per Krylov iteration goes, piece by piece, at
# the sizes issue 5's latency goals name: the cavity at 256^2 (4 dof, 262144 unknowns) and SFI
# at 64^3 (1 dof, 262144 unknowns), GMRES(30), Jacobi. Each row turns pieces off again:
#   all            the default: the fused step (one cooperative kernel per step), two steps
#                  queued ahead of the host (look-ahead), Jacobi inside the SG-DIA product
#   no-jacobi      Jacobi as its own kernel (-ksp_stngmres_fuse_jacobi 0)
#   three-kernel   the step as three kernels (-ksp_stngmres_fused 0)
#   no-lookahead   the host waits for each step before queueing the next (-ksp_stngmres_lookahead 0)
#   none           all three off: three kernels per step, the host waiting for each step
#   petsc-gmres    PETSc's KSPGMRES on stencilc's vector kernels
# The vector and product kernels are tuned first (-stn_autotune).
#
#   PETSC_DIR=/path/to/cuda-petsc bench/probes/stngmres_gpu.sh
#
# Prints a markdown table; logs in $OUT or build/bench-gpu.
set -u
: "${PETSC_DIR:?set PETSC_DIR to a CUDA-enabled PETSc}"
LOG=${OUT:-build/bench-gpu}
B=build/bench-gpu
mkdir -p "$LOG" "$B"
TUNE="-stn_tune_cache $LOG/tuning.txt"
solver="-snes_rtol 1e-8 -ksp_gmres_restart 30 -pc_type jacobi -ksp_rtol 1e-5 -ksp_max_it 100000 -ksp_converged_reason -log_view -stn_device gpu"
echo "| problem | run | Krylov its | KSPSolve s | us per Krylov it |"
echo "|---|---|--:|--:|--:|"
for prob in "cavity:-da_grid_x 256 -da_grid_y 256" "sfi3d:-da_grid_x 64 -da_grid_y 64 -da_grid_z 64 -par 6"; do
  name=${prob%%:*}
  grid=${prob#*:}
  PETSC_ARCH= bin/stencilc "examples/$name.stn" -o "$B/$name" || exit 1
  # shellcheck disable=SC2086
  "$B/$name" $grid -stn_autotune $TUNE -snes_max_it 1 >"$LOG/stngmres.$name.tune.log" 2>&1
  for v in "all:" "no-jacobi:-ksp_stngmres_fuse_jacobi 0" "three-kernel:-ksp_stngmres_fused 0" "no-lookahead:-ksp_stngmres_lookahead 0" \
           "none:-ksp_stngmres_fused 0 -ksp_stngmres_lookahead 0 -ksp_stngmres_fuse_jacobi 0" "petsc-gmres:-ksp_type gmres"; do
    run=${v%%:*}
    opts=${v#*:}
    f="$LOG/stngmres.$name.$run.log"
    # shellcheck disable=SC2086
    "$B/$name" $grid $solver $TUNE $opts >"$f" 2>&1
    awk -v p="$name" -v run="$run" '/Linear solve converged/ {its += $NF} $1 == "KSPSolve" {t = $4}
      END {printf "| %s | %s | %d | %.3f | %.1f |\n", p, run, its, t, its ? t / its * 1e6 : 0}' "$f"
  done
done
