#!/bin/sh
# bench/sfi_gpu.sh: the solid fuel ignition problem (examples/sfi3d.stn, PETSc's
# ex14) on the GPU: the generated program with its SG-DIA Jacobian written by a
# kernel, the same program with -stn_mat_type aij (AIJCUSPARSE assembled on the
# host, PETSc's own matrix path: isolates the matrix format), PETSc's ex14 as
# shipped with CUDA vectors (it hard-codes a CPU AIJ matrix), and the generated
# program on one CPU core, for context. Same grid, parameter and solver.
# The SG-DIA program runs three times: as it is by default (KSPSTNGMRES and
# stencilc's vector kernels, tuned first with -stn_autotune), with PETSc's
# KSPGMRES on our vector kernels, and with PETSc's GMRES and vector kernels
# (-stn_vec_kernels petsc). The AIJCUSPARSE run uses PETSc's GMRES and vector
# kernels, so that it and sfi-sgdia-petscvec differ in the matrix format only.
#
#   PETSC_DIR=/path/to/cuda-petsc EX14=/path/to/ex14.c bench/sfi_gpu.sh [N]
set -u
: "${PETSC_DIR:?set PETSC_DIR to a CUDA-enabled PETSc}"
EX14=${EX14:-.petsc-cuda/tutorials/ex14.c}
N=${1:-128}
LOG=${OUT:-build/bench-gpu}
B=build/bench-gpu
LIMIT=${LIMIT:-240}
mkdir -p "$LOG" "$B"
cc -O2 -I"$PETSC_DIR/include" "$EX14" -o "$B/ex14" -L"$PETSC_DIR/lib" -Wl,-rpath,"$PETSC_DIR/lib" -lpetsc -lm || exit 1
PETSC_ARCH= bin/stencilc examples/sfi3d.stn -o "$B/sfi3d" || exit 1
TUNE="-stn_tune_cache $LOG/tuning.txt"
"$B/sfi3d" -da_grid_x "$N" -da_grid_y "$N" -da_grid_z "$N" -stn_autotune $TUNE -snes_max_it 1 >"$LOG/sfi-tune.log" 2>&1
common="-da_grid_x $N -da_grid_y $N -da_grid_z $N -par 6 -snes_rtol 1e-8 -ksp_gmres_restart 30 -pc_type jacobi -ksp_rtol 1e-5 -snes_monitor -ksp_converged_reason -log_view"
# shellcheck disable=SC2086
timeout "$LIMIT" "$B/sfi3d" $common $TUNE -stn_device gpu >"$LOG/sfi-sgdia.log" 2>&1
# shellcheck disable=SC2086
timeout "$LIMIT" "$B/sfi3d" $common $TUNE -stn_device gpu -ksp_type gmres >"$LOG/sfi-sgdia-gmres.log" 2>&1
# shellcheck disable=SC2086
timeout "$LIMIT" "$B/sfi3d" $common -stn_device gpu -ksp_type gmres -stn_vec_kernels petsc >"$LOG/sfi-sgdia-petscvec.log" 2>&1
# shellcheck disable=SC2086
timeout "$LIMIT" "$B/sfi3d" $common -stn_device gpu -ksp_type gmres -stn_mat_type aij -stn_vec_kernels petsc >"$LOG/sfi-aijcusparse.log" 2>&1
# shellcheck disable=SC2086
timeout "$LIMIT" "$B/ex14" $common -ksp_type gmres -dm_vec_type cuda >"$LOG/ex14-cuda.log" 2>&1
# shellcheck disable=SC2086
timeout "$LIMIT" "$B/sfi3d" $common -ksp_type gmres -stn_device cpu >"$LOG/sfi-cpu.log" 2>&1
ev() { awk -v e="$2" '$1 == e {print $4; exit}' "$1"; }
ct() { awk -v e="$2" '$1 == e {print $2; exit}' "$1"; }
t0=$(ev "$LOG/sfi-sgdia.log" SNESSolve)
echo "| run ($N^3) | SNESSolve s | Newton | Krylov its | us per Krylov it | this / SG-DIA |"
echo "|---|--:|--:|--:|--:|--:|"
for run in sfi-sgdia sfi-sgdia-gmres sfi-sgdia-petscvec sfi-aijcusparse ex14-cuda sfi-cpu; do
  f="$LOG/$run.log"
  t=$(ev "$f" SNESSolve)
  if [ -z "$t" ]; then echo "| $run | (did not finish in ${LIMIT}s) | | | | |"; continue; fi
  awk -v r="$run" -v t="$t" -v t0="$t0" -v its="$(($(grep -c "SNES Function norm" "$f") - 1))" \
      -v kits="$(awk '/Linear solve converged/ {s += $NF} END {print s + 0}' "$f")" -v tk="$(ev "$f" KSPSolve)" \
      'BEGIN { printf "| %s | %.3f | %d | %d | %.1f | %.2f |\n", r, t, its, kits, (kits > 0 ? tk / kits * 1e6 : 0), t / t0 }'
done
# The per-event breakdown from a run with -log_view_gpu_time (it synchronises at every event, so
# the table's times come from the runs without it; without it, -log_view shows n/a for the time
# of events that ran on the GPU).
# shellcheck disable=SC2086
timeout "$LIMIT" "$B/sfi3d" $common $TUNE -log_view_gpu_time -ksp_stngmres_profile -stn_device gpu >"$LOG/sfi-sgdia.gputime.log" 2>&1
echo
echo "Per-event, ours with SG-DIA on the GPU (-log_view_gpu_time):"
sed -n '/Event Stage 1: Solve/,$p' "$LOG/sfi-sgdia.gputime.log" | grep -E "^(SNESSolve|SNESFunctionEval|SNESJacobianEval|KSPSolve|MatMult|MatMultJacobi|VecMDot|VecNorm|VecMAXPY|PCApply|StnVec[A-Za-z]*) "
echo "Per-event, ours with SG-DIA on the GPU (no GPU timers):"
sed -n '/Event Stage 1: Solve/,$p' "$LOG/sfi-sgdia.log" | grep -E "^(SNESSolve|SNESFunctionEval|SNESJacobianEval|KSPSolve|MatMult|MatMultJacobi|VecMDot|VecNorm|VecMAXPY|PCApply|StnVec[A-Za-z]*) "
echo "Per-event, ours with SG-DIA on the GPU, PETSc's vector kernels:"
sed -n '/Event Stage 1: Solve/,$p' "$LOG/sfi-sgdia-petscvec.log" | grep -E "^(SNESSolve|KSPSolve|MatMult|VecMDot|VecNorm|VecMAXPY|PCApply) "
echo "Per-event, ours with AIJCUSPARSE:"
sed -n '/Event Stage 1: Solve/,$p' "$LOG/sfi-aijcusparse.log" | grep -E "^(SNESSolve|SNESFunctionEval|SNESJacobianEval|KSPSolve|MatMult|VecMDot|VecNorm|VecMAXPY|PCApply) "
grep "stngmres profile" "$LOG/sfi-sgdia.gputime.log"
