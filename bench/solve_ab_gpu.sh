#!/bin/sh
# bench/solve_ab_gpu.sh: two builds of the same programs against each other in whole solves, in
# the same job: the cavity at 256^2 (Jacobi and no preconditioner) and SFI at 64^3 (Jacobi, with
# CUDA_MODULE_LOADING=EAGER as well), the two builds alternating, REPS rounds. For a change to the
# runtime's kernels: build the programs from the revision before it (A) and from the change (B).
#
#   PETSC_DIR=/path/to/cuda-petsc CAVITY_A=prog CAVITY_B=prog SFI_A=prog SFI_B=prog \
#     [A=name] [B=name] [REPS=2] bench/solve_ab_gpu.sh
#
# Prints, per run, KSPSolve's time over the Krylov iterations (us per iteration), the iterations
# and SNESSolve's time (all from -log_view); the logs go to $OUT/solve-ab (or build/bench-gpu).
set -u
: "${PETSC_DIR:?set PETSC_DIR to a CUDA-enabled PETSc}"
: "${CAVITY_A:?set CAVITY_A, CAVITY_B, SFI_A and SFI_B to programs built by stencilc}"
: "${CAVITY_B:?}" "${SFI_A:?}" "${SFI_B:?}"
REPS=${REPS:-2}
A=${A:-A}
B=${B:-B}
LOG=${OUT:-build/bench-gpu}/solve-ab
mkdir -p "$LOG"

usit() { awk '$1 == "KSPSolve" {t = $4} $1 == "SNESSolve" {s = $4} /Linear solve converged/ {i += $NF} END {if (i) printf "%.1f us per iteration, %d iterations, SNESSolve %.4f s", 1e6 * t / i, i, s; else print "no solve"}' "$1"; }

cav="-da_grid_x 256 -da_grid_y 256 -snes_rtol 1e-8 -ksp_gmres_restart 30 -ksp_rtol 1e-5 -ksp_max_it 100000 -ksp_converged_reason -log_view -stn_device gpu"
sfi="-da_grid_x 64 -da_grid_y 64 -da_grid_z 64 -par 6 -snes_rtol 1e-8 -ksp_gmres_restart 30 -pc_type jacobi -ksp_rtol 1e-5 -ksp_converged_reason -log_view -stn_device gpu"
r=1
while [ "$r" -le "$REPS" ]; do
  for v in A B; do
    if [ $v = A ]; then name=$A cavity=$CAVITY_A sfi3d=$SFI_A; else name=$B cavity=$CAVITY_B sfi3d=$SFI_B; fi
    for pc in jacobi none; do
      # shellcheck disable=SC2086
      "$cavity" $cav -pc_type $pc >"$LOG/cavity.$pc.$v.$r.log" 2>&1
      echo "cavity 256^2, $pc, $name, run $r: $(usit "$LOG/cavity.$pc.$v.$r.log")"
    done
    # shellcheck disable=SC2086
    "$sfi3d" $sfi >"$LOG/sfi.$v.$r.log" 2>&1
    echo "sfi 64^3, jacobi, $name, run $r: $(usit "$LOG/sfi.$v.$r.log")"
    # shellcheck disable=SC2086
    CUDA_MODULE_LOADING=EAGER "$sfi3d" $sfi >"$LOG/sfi-eager.$v.$r.log" 2>&1
    echo "sfi 64^3, jacobi, $name, run $r, eager loading: $(usit "$LOG/sfi-eager.$v.$r.log")"
  done
  r=$((r + 1))
done
