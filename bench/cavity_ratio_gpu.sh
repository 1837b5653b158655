#!/bin/sh
# bench/cavity_ratio_gpu.sh: the headline ratio of issue 5, the whole cavity solve against PETSc's
# ex19 on the GPU (-dm_vec_type cuda -dm_mat_type aijcusparse, the same GMRES(30), preconditioner
# and tolerances), with repetitions: one run of each varies by up to 15% from run to run (ex19
# took 1.31 s in one run of bench/cavity_gpu.sh and 1.50 s in another), so each program runs
# REPS times, alternating, and the ratio is that of the medians of SNESSolve's time. Krylov
# iterations per run are printed too (they must not change between repetitions).
#
#   PETSC_DIR=/path/to/cuda-petsc [REPS=5] [CAVITY=prog] bench/cavity_ratio_gpu.sh [N]     (N: grid, 256)
#
# CAVITY: a cavity program already built by stencilc from examples/cavity.stn (else it is built).
set -u
: "${PETSC_DIR:?set PETSC_DIR to a CUDA-enabled PETSc}"
EX19=${EX19:-.petsc-cuda/tutorials/ex19.c}
N=${1:-256}
REPS=${REPS:-5}
LOG=${OUT:-build/bench-gpu}/ratio
B=build/bench-gpu
mkdir -p "$LOG" "$B"
cc -O2 -I"$PETSC_DIR/include" "$EX19" -o "$B/ex19" -L"$PETSC_DIR/lib" -Wl,-rpath,"$PETSC_DIR/lib" -lpetsc -lm || exit 1
if [ -n "${CAVITY:-}" ]; then cp "$CAVITY" "$B/cavity" || exit 1
else PETSC_ARCH='' bin/stencilc examples/cavity.stn -o "$B/cavity" || exit 1; fi
TUNE="-stn_tune_cache $LOG/tuning.txt"
# shellcheck disable=SC2086
"$B/cavity" -da_grid_x "$N" -da_grid_y "$N" -stn_autotune $TUNE -snes_max_it 1 >"$LOG/tune.log" 2>&1

snes() { awk '$1 == "SNESSolve" {print $4; exit}' "$1"; }
kits() { awk '/Linear solve converged/ {s += $NF} END {print s + 0}' "$1"; }
median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

echo "| grid | PC | program | SNESSolve s, each run | Krylov its | median s |"
echo "|---|---|---|---|--:|--:|"
for pc in jacobi none; do
  common="-da_grid_x $N -da_grid_y $N -snes_rtol 1e-8 -ksp_gmres_restart 30 -pc_type $pc -ksp_rtol 1e-5 -ksp_max_it 100000 -ksp_converged_reason -log_view"
  r=1
  while [ $r -le "$REPS" ]; do
    # shellcheck disable=SC2086
    "$B/ex19" $common -ksp_type gmres -dm_vec_type cuda -dm_mat_type aijcusparse >"$LOG/ex19.$pc.$r.log" 2>&1
    # shellcheck disable=SC2086
    "$B/cavity" $common $TUNE -stn_device gpu >"$LOG/ours.$pc.$r.log" 2>&1
    r=$((r + 1))
  done
  for prog in ex19 ours; do
    times=$(for f in "$LOG/$prog.$pc".*.log; do snes "$f"; done)
    its=$(for f in "$LOG/$prog.$pc".*.log; do kits "$f"; done | sort -u | tr '\n' ' ')
    med=$(echo "$times" | median)
    eval "med_$prog=$med"
    echo "| ${N}^2 | $pc | $prog | $(echo "$times" | tr '\n' ' ') | $its | $med |"
  done
  # shellcheck disable=SC2154 # set by eval above
  awk -v a="$med_ex19" -v b="$med_ours" -v pc="$pc" 'BEGIN {printf "ratio, %s: ex19 / ours = %.2f (medians of the runs above)\n", pc, a / b}'
done
