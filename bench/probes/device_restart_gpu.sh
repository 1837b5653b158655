#!/bin/sh
# bench/probes/device_restart_gpu.sh: what KSPSTNGMRES's restarts inside the cycle kernel gain in whole
# solves: the cavity at 256^2 (Jacobi and no preconditioner) and SFI at 64^3 (Jacobi), each run
# REPS times with -ksp_stngmres_device_restart 1 and 0, alternating, in the same job. Prints
# KSPSolve's time over the Krylov iterations (us per iteration) for every run, and the SFI runs
# once more with CUDA_MODULE_LOADING=EAGER (the kernels loaded at start-up, not inside the first
# KSPSolve), which separates the one-time loading from the iterations.
#
#   PETSC_DIR=/path/to/cuda-petsc [REPS=2] [CAVITY=prog] [SFI=prog] bench/probes/device_restart_gpu.sh
#
# CAVITY, SFI: programs already built by stencilc from examples/cavity.stn and sfi3d.stn (else
# they are built).
set -u
: "${PETSC_DIR:?set PETSC_DIR to a CUDA-enabled PETSc}"
REPS=${REPS:-2}
LOG=${OUT:-build/bench-gpu}/device-restart
B=build/bench-gpu
mkdir -p "$LOG" "$B"
for ex in cavity:${CAVITY:-} sfi3d:${SFI:-}; do
  name=${ex%%:*} prog=${ex#*:}
  if [ -n "$prog" ]; then cp "$prog" "$B/$name" || exit 1
  else PETSC_ARCH='' bin/stencilc "examples/$name.stn" -o "$B/$name" || exit 1; fi
done

usit() { awk '$1 == "KSPSolve" {t = $4} /Linear solve converged/ {i += $NF} END {if (i) printf "%.1f us per iteration, %d iterations", 1e6 * t / i, i; else print "no solve"}' "$1"; }

cav="-da_grid_x 256 -da_grid_y 256 -snes_rtol 1e-8 -ksp_gmres_restart 30 -ksp_rtol 1e-5 -ksp_max_it 100000 -ksp_converged_reason -log_view -stn_device gpu"
sfi="-da_grid_x 64 -da_grid_y 64 -da_grid_z 64 -par 6 -snes_rtol 1e-8 -ksp_gmres_restart 30 -pc_type jacobi -ksp_rtol 1e-5 -ksp_converged_reason -log_view -stn_device gpu"
r=1
while [ "$r" -le "$REPS" ]; do
  for dr in 1 0; do
    for pc in jacobi none; do
      # shellcheck disable=SC2086
      "$B/cavity" $cav -pc_type $pc -ksp_stngmres_device_restart $dr >"$LOG/cavity.$pc.$dr.$r.log" 2>&1
      echo "cavity 256^2, $pc, device restart $dr, run $r: $(usit "$LOG/cavity.$pc.$dr.$r.log")"
    done
    # shellcheck disable=SC2086
    "$B/sfi3d" $sfi -ksp_stngmres_device_restart $dr >"$LOG/sfi.$dr.$r.log" 2>&1
    echo "sfi 64^3, jacobi, device restart $dr, run $r: $(usit "$LOG/sfi.$dr.$r.log")"
    # shellcheck disable=SC2086
    CUDA_MODULE_LOADING=EAGER "$B/sfi3d" $sfi -ksp_stngmres_device_restart $dr >"$LOG/sfi-eager.$dr.$r.log" 2>&1
    echo "sfi 64^3, jacobi, device restart $dr, run $r, eager loading: $(usit "$LOG/sfi-eager.$dr.$r.log")"
  done
  r=$((r + 1))
done
