#!/bin/sh
# bench/cavity_gpu.sh: the whole Newton-Krylov solve of the driven cavity on
# the GPU, ours (stencilc examples/cavity.stn: SG-DIA, residual and Jacobian
# kernels, vector kernels and GMRES on the device) against PETSc's own ex19
# built against the same CUDA PETSc and run with -dm_vec_type cuda
# -dm_mat_type aijcusparse (its residual is evaluated on the host, its
# Jacobian by finite-difference colouring). Same grid, parameters, GMRES(30)
# and preconditioner. Ours runs in four ways:
#   ours-gpu           the default: KSPSTNGMRES (GMRES with its Hessenberg
#                      matrix on the device) and stencilc's vector kernels
#   ours-gpu-gmres     PETSc's KSPGMRES on stencilc's vector kernels
#   ours-gpu-petscvec  PETSc's KSPGMRES on PETSc's vector kernels
#                      (-stn_vec_kernels petsc): what the vector work gains
#   ours-cpu           on one CPU core, for context (first grid only)
# The vector kernels are tuned first (-stn_autotune, into a cache in the log
# directory), as a user would do once per machine.
#
#   PETSC_DIR=/path/to/cuda-petsc EX19=/path/to/ex19.c bench/cavity_gpu.sh [GRIDS]
#
# GRIDS defaults to "256 512". Prints a markdown table; logs in $OUT or
# build/bench-gpu.
set -u
: "${PETSC_DIR:?set PETSC_DIR to a CUDA-enabled PETSc}"
EX19=${EX19:-.petsc-cuda/tutorials/ex19.c}
GRIDS=${1:-256 512}
LOG=${OUT:-build/bench-gpu}
B=build/bench-gpu
mkdir -p "$LOG" "$B"
LIBDIR=$PETSC_DIR/lib
cc -O2 -I"$PETSC_DIR/include" "$EX19" -o "$B/ex19" -L"$LIBDIR" -Wl,-rpath,"$LIBDIR" -lpetsc -lm || exit 1
PETSC_ARCH= bin/stencilc examples/cavity.stn -o "$B/cavity" || exit 1
TUNE="-stn_tune_cache $LOG/tuning.txt"
for n in $GRIDS; do
  "$B/cavity" -da_grid_x "$n" -da_grid_y "$n" -stn_autotune $TUNE -snes_max_it 1 >"$LOG/tune.$n.log" 2>&1
done

# time of an event (seconds), from -log_view
event() { awk -v e="$2" '$1 == e {print $4; exit}' "$1"; }

echo "| grid | PC | run | SNESSolve s | Newton | Krylov its | us per Krylov it (KSPSolve) | ex19 / this |"
echo "|---|---|---|--:|--:|--:|--:|--:|"
first=1
for n in $GRIDS; do
  for pc in jacobi none; do
    common="-da_grid_x $n -da_grid_y $n -snes_rtol 1e-8 -ksp_gmres_restart 30 -pc_type $pc -ksp_rtol 1e-5 -ksp_max_it 100000 -snes_monitor -ksp_converged_reason -log_view"
    # shellcheck disable=SC2086
    "$B/ex19" $common -ksp_type gmres -dm_vec_type cuda -dm_mat_type aijcusparse >"$LOG/ex19.$n.$pc.log" 2>&1
    # shellcheck disable=SC2086
    "$B/cavity" $common $TUNE -stn_device gpu >"$LOG/ours-gpu.$n.$pc.log" 2>&1
    # shellcheck disable=SC2086
    "$B/cavity" $common $TUNE -stn_device gpu -ksp_type gmres >"$LOG/ours-gpu-gmres.$n.$pc.log" 2>&1
    # shellcheck disable=SC2086
    "$B/cavity" $common -stn_device gpu -ksp_type gmres -stn_vec_kernels petsc >"$LOG/ours-gpu-petscvec.$n.$pc.log" 2>&1
    runs="ex19 ours-gpu ours-gpu-gmres ours-gpu-petscvec"
    if [ $first = 1 ]; then
      # shellcheck disable=SC2086
      "$B/cavity" $common -stn_device cpu -ksp_type gmres >"$LOG/ours-cpu.$n.$pc.log" 2>&1
      runs="$runs ours-cpu"
    fi
    t_ex=$(event "$LOG/ex19.$n.$pc.log" SNESSolve)
    for run in $runs; do
      f="$LOG/$run.$n.$pc.log"
      t=$(event "$f" SNESSolve)
      tk=$(event "$f" KSPSolve)
      kits=$(awk '/Linear solve converged/ {s += $NF} END {print s + 0}' "$f")
      its=$(($(grep -c "SNES Function norm" "$f") - 1))
      awk -v n="$n" -v pc="$pc" -v run="$run" -v t="$t" -v tk="$tk" -v kits="$kits" -v its="$its" -v tex="$t_ex" 'BEGIN {
        per = (kits > 0) ? tk / kits * 1e6 : 0; r = (t > 0) ? tex / t : 0;
        printf "| %d^2 | %s | %s | %.3f | %d | %d | %.1f | %.2f |\n", n, pc, run, t, its, kits, per, r }'
    done
  done
  first=0
done

# The per-event breakdown, from separate runs with -log_view_gpu_time: it times every event
# on the GPU with CUDA events and synchronises at each, which adds some microseconds per event,
# so the times in the table above come from runs without it. KSPSTNGMRES's own profile
# (-ksp_stngmres_profile) says where an iteration's time goes.
n=${GRIDS%% *}
common="-da_grid_x $n -da_grid_y $n -snes_rtol 1e-8 -ksp_gmres_restart 30 -pc_type jacobi -ksp_rtol 1e-5 -ksp_max_it 100000 -log_view -log_view_gpu_time"
# shellcheck disable=SC2086
"$B/cavity" $common $TUNE -stn_device gpu -ksp_stngmres_profile >"$LOG/ours-gpu.$n.gputime.log" 2>&1
# shellcheck disable=SC2086
"$B/cavity" $common $TUNE -stn_device gpu -ksp_type gmres >"$LOG/ours-gpu-gmres.$n.gputime.log" 2>&1
# shellcheck disable=SC2086
"$B/ex19" $common -ksp_type gmres -dm_vec_type cuda -dm_mat_type aijcusparse >"$LOG/ex19.$n.gputime.log" 2>&1
ev="SNESSolve|SNESFunctionEval|SNESJacobianEval|KSPSolve|KSPGMRESOrthog|MatMult|MatMultJacobi|VecMDot|VecNorm|VecMAXPY|VecAXPY|VecScale|PCApply|MatFDColorApply"
echo
echo "Per-event, $n^2, Jacobi, ours on the GPU (KSPSTNGMRES; -log_view_gpu_time):"
grep -E "^($ev|StnVec[A-Za-z]*) " "$LOG/ours-gpu.$n.gputime.log"
grep "stngmres profile" "$LOG/ours-gpu.$n.gputime.log"
echo "Per-event, $n^2, Jacobi, ours on the GPU with PETSc's GMRES on our vector kernels:"
grep -E "^($ev|StnVec[A-Za-z]*) " "$LOG/ours-gpu-gmres.$n.gputime.log"
echo "Per-event, $n^2, Jacobi, ex19 (cuda, aijcusparse):"
grep -E "^($ev) " "$LOG/ex19.$n.gputime.log"
