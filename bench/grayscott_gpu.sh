#!/bin/sh
# bench/grayscott_gpu.sh: Gray-Scott pattern formation (examples/grayscott.stn) on the GPU against
# the same problem through PETSc's own GPU path: its TS tutorial advection-diffusion-reaction/ex5
# with -dm_vec_type cuda -dm_mat_type aijcusparse (the vectors and the linear solve on the device,
# its residual and Jacobian on the host). Both integrate with ex5's default, ARKIMEX (3rd order,
# every stage implicit), in fixed steps: -ts_dt 0.5 -ts_adapt_type none. The time per step is
# -log_view's TSStep over the steps taken (each run once to warm up, once timed).
#   ex5          its defaults on the GPU (GMRES, ILU(0) of the cuSPARSE matrix)
#   ex5 Jacobi   -pc_type jacobi: the preconditioner ours takes, the rest the same
#   ours         the generated program's GPU defaults: the IFunction and the shifted Jacobian as
#                kernels, SG-DIA, stngmres and Jacobi
# ours takes STEPS steps (default 20); ex5 takes as many up to 257^2 and EX5_STEPS beyond (default
# 5: a step of ex5 at 1025^2 takes seconds), and where they differ ours runs again with ex5's count
# ("ours, N steps"), the row ex5 / this compares: ours starts ARKIMEX with one more solve than ex5
# (the time derivative at t = 0; ex5's right-hand-side form needs none), spread over the steps.
# The goals (issue 27): ours at least 50x faster per step than ex5 at 1025^2, and ours at 2049^2
# within 4.5x of ours at 1025^2 per step (both STEPS steps).
#
#   . scripts/gpu-env.sh && sh bench/grayscott_gpu.sh [GRIDS]      # default 257 1025 2049
set -u
: "${PETSC_DIR:?set PETSC_DIR to a CUDA-enabled PETSc}"
EX5DIR=${EX5DIR:-.petsc-cuda/tutorials/ts-ex5}
GRIDS=${*:-257 1025 2049}
STEPS=${STEPS:-20}
EX5_STEPS=${EX5_STEPS:-5}
LOG=${OUT:-build/bench-grayscott}
B=build/bench-grayscott
mkdir -p "$LOG" $B
LIBDIR=$PETSC_DIR/lib
${CC:-cc} -O2 -I"$PETSC_DIR/include" -I"$EX5DIR" "$EX5DIR/ex5.c" "$EX5DIR/reaction_diffusion.c" -o $B/ex5 -L"$LIBDIR" -Wl,-rpath,"$LIBDIR" -lpetsc -lm || exit 1
PETSC_ARCH='' bin/stencilc examples/grayscott.stn -o $B/grayscott >"$LOG/build.log" 2>&1 || { cat "$LOG/build.log"; exit 1; }

TS="-ts_type arkimex -ts_dt 0.5 -ts_adapt_type none -ts_max_time 1e9"
event() { awk -v e="$2" '$1 == e {print $4; exit}' "$1"; }
count() { awk -v e="$2" '$1 == e {print $2; exit}' "$1"; }
# its LOG KIND: the iterations of every Nonlinear or Linear solve, summed
its() { awk -v k="$2" '$1 == k && / solve converged/ {s += $NF; n++} END {printf "%d in %d solves", s, n}' "$1"; }
timed() { # timed LOG PROG OPTIONS...: a warm-up run, then the timed one with -log_view
  log=$1
  shift
  timeout 900 "$@" >/dev/null 2>&1
  timeout 900 "$@" -ts_monitor -snes_converged_reason -ksp_converged_reason -log_view >"$log" 2>&1
}

echo "| grid | run | steps | s per step | Newton | Krylov | ex5 / this |"
echo "|---|---|--:|--:|--:|--:|--:|"
for n in $GRIDS; do
  g="-da_grid_x $n -da_grid_y $n"
  es=$STEPS
  [ "$n" -gt 257 ] && es=$EX5_STEPS
  t_ex5=
  for run in ex5 ex5-jacobi ours ours-ex5-steps; do
    # ex5 only where it takes minutes at most; ours everywhere
    [ "$run" != ours ] && [ "$n" -gt 1025 ] && continue
    [ "$run" = ours-ex5-steps ] && [ "$es" = "$STEPS" ] && continue
    case $run in
      ex5) timed "$LOG/$run.$n.log" $B/ex5 $g $TS -ts_max_steps "$es" -dm_vec_type cuda -dm_mat_type aijcusparse ;;
      ex5-jacobi) timed "$LOG/$run.$n.log" $B/ex5 $g $TS -ts_max_steps "$es" -dm_vec_type cuda -dm_mat_type aijcusparse -pc_type jacobi ;;
      ours) timed "$LOG/$run.$n.log" $B/grayscott $g $TS -ts_max_steps "$STEPS" -stn_device gpu ;;
      ours-ex5-steps) timed "$LOG/$run.$n.log" $B/grayscott $g $TS -ts_max_steps "$es" -stn_device gpu ;;
    esac
    l=$LOG/$run.$n.log
    steps=$(count "$l" TSStep)
    t=$(event "$l" TSStep)
    per=$(awk -v t="$t" -v s="$steps" 'BEGIN {if (s > 0) printf "%.4g", t / s}')
    [ "$run" = ex5 ] && t_ex5=$per
    ratio=$(awk -v a="$t_ex5" -v b="$per" 'BEGIN {if (a > 0 && b > 0) printf "%.1fx", a / b}')
    # the ratio where the step counts are equal
    [ "$run" = ours ] && [ "$es" != "$STEPS" ] && ratio=
    printf "| %s^2 | %s | %s | %s | %s | %s | %s |\n" "$n" "$(echo "$run" | sed "s/ours-ex5-steps/ours, $es steps/")" "$steps" "$per" "$(its "$l" Nonlinear)" "$(its "$l" Linear)" "$ratio"
  done
done
echo
echo "Where ours spends its steps (seconds over $STEPS steps; one more run with -log_view_gpu_time, which"
echo "times every event on the GPU and waits for it, so its TSStep is longer than the table's):"
echo
evs="TSStep SNESSolve TSFunctionEval TSJacobianEval KSPSolve MatMult PCApply VecMDot VecMAXPY VecNorm"
printf "| grid |"; for e in $evs; do printf " %s |" "$e"; done; echo
printf "|---|"; for e in $evs; do printf -- "--:|"; done; echo
for n in $GRIDS; do
  # shellcheck disable=SC2086
  timeout 900 $B/grayscott -da_grid_x "$n" -da_grid_y "$n" $TS -ts_max_steps "$STEPS" -stn_device gpu -log_view -log_view_gpu_time >"$LOG/ours.$n.gputime.log" 2>&1
  printf "| %s^2 |" "$n"; for e in $evs; do printf " %s |" "$(event "$LOG/ours.$n.gputime.log" "$e")"; done; echo
done
