#!/bin/sh
# bench/multigpu.sh: the generated programs on 1, 2 (and 4) GPUs, one MPI rank per GPU, with the
# CUDA PETSc with MPI (scripts/petsc-cuda.sh --mpi; its MPI stages halos through host memory).
#   - weak scaling, the grid growing with the GPUs: the cavity at 1025^2 per GPU (1409^2 on 2,
#     2049^2 on 4) and SFI at 257^3 per GPU (321^3, 385^3), the GPU's default solver
#     (multigrid), whole SNESSolve; efficiency r t(1) / t(N), r the grid's points over N times
#     the one-GPU grid's (0.84 to 1: bench/multigpu_grids.sh); and the same solve repeated
#     (-stn_solve_repeat 2: the second solve, whose hierarchy, device exchanges and tuned kernels
#     the first built, as every solve after the first in a continuation or a time stepper);
#   - the same grids with Jacobi: the time per Krylov iteration (the first linear solve, 1000
#     iterations), since Jacobi's iteration count grows with the grid;
#   - strong scaling, one grid on more GPUs: the cavity at 2049^2 and SFI at 385^3, multigrid;
#     efficiency t(1) / (N t(N));
#   - for weak scaling also the efficiency per Krylov iteration, r (t(1) / k(1)) / (t(N) / k(N))
#     with k the Krylov iterations of the solve: what is left when a grid's different iteration
#     count is taken out.
# -snes_rtol 1e-8 -ksp_rtol 1e-5 as bench/multigrid_gpu.sh; each run once to warm up, then RUNS
# times timed (3 by default), the median reported (-log_view's Max column over the ranks; a
# repeated solve: RUNS timed runs, the second solve of each). Prints
# a markdown table, then where the time goes in the weak-scaling multigrid runs (one more run
# each with -log_view_gpu_time, which times every event on the GPU), and the V-cycle level by
# level (-stn_mg_profile, repeated solve); logs in build/bench-multigpu/logs, packed into
# $OUT/bench-multigpu-logs.tgz when OUT is set.
#
#   STN_MPI=1 . scripts/gpu-env.sh && sh bench/multigpu.sh            # PROBLEMS="cavity sfi3d"
#   COUNTS="1 4" sh bench/multigpu.sh                                # the GPU counts (default 1 2 4, those present)
#
# On 4 H200s both problems take about 9 minutes: under a 10-minute limit per command, give
# PROBLEMS=cavity and PROBLEMS=sfi3d to two calls.
set -u
. bench/multigpu_grids.sh
: "${PETSC_DIR:?set PETSC_DIR to a CUDA-enabled PETSc with MPI}"
LOG=build/bench-multigpu/logs
B=build/bench-multigpu
mkdir -p "$LOG" $B
GPUS=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
COUNTS=${COUNTS:-$(for n in 1 2 4; do [ $n -le "$GPUS" ] && printf "%s " $n; done)}
PROBLEMS=${PROBLEMS:-cavity sfi3d}
grids_known "$PROBLEMS" "$COUNTS"
for e in $PROBLEMS; do PETSC_ARCH='' bin/stencilc "examples/$e.stn" -o "$B/$e" >"$LOG/build.$e.log" 2>&1 & done
wait
C="-snes_rtol 1e-8 -ksp_rtol 1e-5"
JAC="-pc_type jacobi -snes_max_it 1 -ksp_max_it 1000 -ksp_rtol 1e-30 -snes_converged_reason"

ev() { awk -v e="$2" '$1 == e {print $4; exit}' "$1"; }
# the same in -log_view's Solve stage (after a Warm-up stage)
ev_solve() { awk -v e="$2" '/--- Event Stage [0-9]+: Solve/ {t = 1} /--- Event Stage [0-9]+: (Main|Warm)/ {t = 0} t && $1 == e {print $4; exit}' "$1"; }
krylov() { awk '/Linear solve converged|Linear solve did not/ {s += $NF; n++; l = l " " $NF} END {printf "%d [%s ]", s, l}' "$1"; }
# the same for the last solve of the log (-stn_solve_repeat: after the first "Nonlinear solve")
krylov_last() { awk '/Linear solve converged|Linear solve did not/ {s += $NF; l = l " " $NF} /Nonlinear solve/ {ls = s; ll = l; s = 0; l = ""} END {if (l != "") ls = s; if (l != "") ll = l; printf "%d [%s ]", ls, ll}' "$1"; }
# weak T1 T R: the weak-scaling efficiency R T1 / T, R the work ratio (ratio below)
weak() { awk -v a="$1" -v t="$2" -v r="$3" 'BEGIN {if (a > 0 && t > 0) printf "%.0f%%", 100 * r * a / t}'; }
# per_its T1 K1 T K R: the same per Krylov iteration, R (T1 / K1) / (T / K): what is left when the
# grid's different iteration count is taken out
per_its() { awk -v a="$1" -v ka="$2" -v t="$3" -v k="$4" -v r="$5" 'BEGIN {if (a > 0 && ka > 0 && t > 0 && k > 0) printf "%.0f%%", 100 * r * (a / ka) / (t / k)}'; }
# ratio N PROBLEM: the weak-scaling grid's points on N GPUs over N times the one-GPU grid's
ratio() { awk -v a="$(grid_points "$(grid 1 "$2" weak)")" -v b="$(grid_points "$(grid "$1" "$2" weak)")" -v n="$1" 'BEGIN {printf "%.4f", b / (n * a)}'; }
newton() { awk '/Nonlinear solve converged/ {printf "%s ", $NF} /Nonlinear solve did not/ {printf "failed "}' "$1"; }
# event_time LOG EVENT: EVENT's time in LOG, the Solve stage's for Solve:EVENT
event_time() { case $2 in Solve:*) ev_solve "$1" "${2#Solve:}" ;; *) ev "$1" "$2" ;; esac; }
# timed_runs EVENT N LOG PROG OPTIONS...: RUNS timed runs with -log_view (3 by default: a first
# solve's host set-up varies by 10 to 20% between runs); LOG is the run whose EVENT time
# (event_time) is the median of those that ran, the runs themselves LOG.1, LOG.2, ...; a run
# that failed is said, and where none ran LOG is the first, failure and all. timed: the same
# after a warm-up run.
RUNS=${RUNS:-3}
timed_runs() {
  event=$1 n=$2 log=$3
  shift 3
  rm -f "$log" "$log".[0-9]*
  k=1
  while [ $k -le "$RUNS" ]; do
    timeout 300 mpiexec -n "$n" "$@" -ksp_converged_reason -snes_converged_reason -log_view >"$log.$k" 2>&1 </dev/null
    [ -n "$(event_time "$log.$k" "$event")" ] || echo "note: $log.$k: the run failed (no $event in its -log_view)" >&2
    k=$((k + 1))
  done
  median=$(k=1; while [ $k -le "$RUNS" ]; do printf '%s %s\n' "$(event_time "$log.$k" "$event")" "$log.$k"; k=$((k + 1)); done |
    awk 'NF == 2' | sort -g | awk '{l[NR] = $2} END {if (NR) print l[int((NR + 1) / 2)]}')
  cp "${median:-$log.1}" "$log"
}
timed() {
  event=$1 n=$2 log=$3
  shift 3
  timeout 300 mpiexec -n "$n" "$@" >/dev/null 2>&1 </dev/null
  timed_runs "$event" "$n" "$log" "$@"
}

echo "| problem | scaling | GPUs | grid | SNESSolve s | Newton | Krylov its [per Newton step] | efficiency | per Krylov iteration |"
echo "|---|---|--:|---|--:|--:|---|--:|--:|"
for p in $PROBLEMS; do
  for kind in weak strong; do
    t1=
    for n in $COUNTS; do
      g=$(grid "$n" "$p" $kind)
      # shellcheck disable=SC2086
      timed SNESSolve "$n" "$LOG/$p.$kind.$n.log" $B/$p $g $C
      t=$(ev "$LOG/$p.$kind.$n.log" SNESSolve)
      k=$(krylov "$LOG/$p.$kind.$n.log")
      [ "$n" = 1 ] && t1=$t k1=${k%% *}
      eff=$(awk -v a="$t1" -v t="$t" -v n="$n" 'BEGIN {if (a > 0 && t > 0) printf "%.0f%%", 100 * a / (n * t)}')
      pits=
      [ $kind = weak ] && r=$(ratio "$n" "$p") && eff=$(weak "$t1" "$t" "$r") pits=$(per_its "$t1" "$k1" "$t" "${k%% *}" "$r")
      echo "| $p | $kind, multigrid | $n | $(grid_name "$g") | $t | $(newton "$LOG/$p.$kind.$n.log") | $k | $eff | $pits |"
    done
  done
  t1=
  for n in $COUNTS; do
    g=$(grid "$n" "$p" weak)
    # shellcheck disable=SC2086
    timed_runs Solve:SNESSolve "$n" "$LOG/$p.repeat.$n.log" $B/$p $g $C -stn_solve_repeat 2
    t=$(ev_solve "$LOG/$p.repeat.$n.log" SNESSolve)
    k=$(krylov_last "$LOG/$p.repeat.$n.log")
    [ "$n" = 1 ] && t1=$t k1=${k%% *}
    r=$(ratio "$n" "$p")
    echo "| $p | weak, multigrid, repeated solve | $n | $(grid_name "$g") | $t | | $k | $(weak "$t1" "$t" "$r") | $(per_its "$t1" "$k1" "$t" "${k%% *}" "$r") |"
  done
  t1=
  for n in $COUNTS; do
    g=$(grid "$n" "$p" weak)
    # shellcheck disable=SC2086
    timed KSPSolve "$n" "$LOG/$p.jacobi.$n.log" $B/$p $g $JAC
    t=$(ev "$LOG/$p.jacobi.$n.log" KSPSolve)
    its=$(awk '/Linear solve/ {print $NF; exit}' "$LOG/$p.jacobi.$n.log")
    per=$(awk -v t="$t" -v i="$its" 'BEGIN {if (i > 0) printf "%.1f", 1e6 * t / i}')
    [ "$n" = 1 ] && t1=$per
    eff=$(weak "$t1" "$per" "$(ratio "$n" "$p")")
    echo "| $p | weak, Jacobi: us per Krylov iteration | $n | $(grid_name "$g") | $per | | $its | $eff | $eff |"
  done
done
echo
echo "Where the time goes (seconds, -log_view Max over the ranks), the weak-scaling multigrid runs:"
echo
ev_list="SNESSolve KSPSolve PCSetUp PCApply MatMult MatMultTranspose SNESFunctionEval SNESJacobianEval VecMDot VecNorm VecScatterBegin VecScatterEnd SFPack SFUnpack"
printf "| run |"; for e in $ev_list; do printf " %s |" "$e"; done; echo
printf "|---|"; for e in $ev_list; do printf -- "--:|"; done; echo
for p in $PROBLEMS; do
  for n in $COUNTS; do
    # shellcheck disable=SC2046
    # shellcheck disable=SC2046,SC2086
    timeout 300 mpiexec -n "$n" "$B/$p" $(grid "$n" "$p" weak) $C -log_view -log_view_gpu_time >"$LOG/$p.weak.$n.gputime.log" 2>&1 </dev/null
    printf "| %s, %s GPU |" "$p" "$n"
    for e in $ev_list; do printf " %s |" "$(ev "$LOG/$p.weak.$n.gputime.log" "$e")"; done
    echo
  done
done
echo
echo "The V-cycle level by level (-stn_mg_profile, the repeated solve's runs; ms per cycle on the GPU, rank 0):"
echo
echo "| run | cycle ms | by level, finest first |"
echo "|---|--:|---|"
for p in $PROBLEMS; do
  for n in $COUNTS; do
    # shellcheck disable=SC2046,SC2086
    timeout 300 mpiexec -n "$n" "$B/$p" $(grid "$n" "$p" weak) $C -stn_solve_repeat 2 -stn_mg_profile >"$LOG/$p.profile.$n.log" 2>&1 </dev/null
    cyc=$(awk '/^stnmg profile:/ && /\(rank 0\)/ {for (i = 1; i <= NF; i++) if ($i == "ms") {print $(i - 1); exit}}' "$LOG/$p.profile.$n.log")
    lev=$(awk -F': ' '/^stnmg levels:/ && /\(rank 0\)/ {print $NF; exit}' "$LOG/$p.profile.$n.log")
    echo "| $p, $n GPU | $cyc | $lev |"
  done
done
if [ -n "${OUT:-}" ]; then tar czf "$OUT/bench-multigpu-logs.tgz" -C build/bench-multigpu logs; fi
