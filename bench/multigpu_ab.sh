#!/bin/sh
# bench/multigpu_ab.sh: two builds of the same program against each other on 1 and several GPUs,
# in the same job, the two alternating, REPS rounds: for a change to the runtime's exchanges,
# multigrid or set-up (A the revision before it, B the change; the device runner's timings only
# compare within one machine and one call). On the weak-scaling grids of bench/multigpu.sh,
# -snes_rtol 1e-8 -ksp_rtol 1e-5, per run:
#   - the first solve and the repeated one (-stn_solve_repeat 2), from the flame graph of rank 0
#     (-log_view :FILE:ascii_flamegraph, the self times under each stage's SNESSolve summed);
#   - the V-cycle on the GPU and one exchange alone on each split level (-stn_mg_profile);
#   - the first residual's exchange on the host (SNESFunctionEval;StnHaloExchange in the Warm-up
#     stage's flame graph, rank 0);
#   - the first solve's set-up on the host: PCSetUp and, within it, DMCoarsen (rank 0).
# Build the programs with the two stencilc binaries (stencilc embeds the runtime), where nvcc and
# the CUDA PETSc are, and carry them to the GPU machine:
#
#   PROG_A=build/ab/A/cavity PROG_B=build/ab/B/cavity [PROBLEM=cavity] [A=main] [B=change] \
#     [RANKS="1 4"] [REPS=2] [SOLVES=1] sh bench/multigpu_ab.sh
#
# For options against each other, one program: PROG_A and PROG_B the same, OPTS_A and OPTS_B
# the options each side adds (e.g. OPTS_B="-build_twosided allreduce"); MPIEXEC_A and
# MPIEXEC_B, mpiexec's own (e.g. MPIEXEC_B="-bind-to core").
#
# SOLVES=1 times the solves alone, as a user's -log_view does, in one run each instead of the two
# above: SNESSolve's Max over the ranks (first solve, then the repeated one) and the Krylov
# iterations of both, each program warmed up once first; after the rounds, the medians and the
# weak-scaling efficiency of each side (r t(1) / t(N), bench/multigpu.sh's).
#
# One line per run; the logs go to $OUT/multigpu-ab (or build/bench-multigpu/multigpu-ab).
set -u
. bench/multigpu_grids.sh
: "${PETSC_DIR:?set PETSC_DIR to a CUDA-enabled PETSc with MPI}"
: "${PROG_A:?set PROG_A and PROG_B to the same program built by the two stencilc binaries}"
: "${PROG_B:?}"
PROBLEM=${PROBLEM:-cavity}
RANKS=${RANKS:-1 4}
REPS=${REPS:-2}
A=${A:-A}
B=${B:-B}
OPTS_A=${OPTS_A:-}
OPTS_B=${OPTS_B:-}
MPIEXEC_A=${MPIEXEC_A:-}
MPIEXEC_B=${MPIEXEC_B:-}
LOG=${OUT:-build/bench-multigpu}/multigpu-ab
mkdir -p "$LOG"
grids_known "$PROBLEM" "$RANKS"
C="-snes_rtol 1e-8 -ksp_rtol 1e-5 -stn_solve_repeat 2"

# solves FLAME: the first solve's SNESSolve (the Warm-up stage) and the repeated one's (Solve),
# each the sum of the self times under it, rank 0
solves() {
  awk '/^Main Stage;Warm-up;SNESSolve[; ]/ {w += $NF} /^Main Stage;Solve;SNESSolve[; ]/ {r += $NF}
       END {printf "first %.4f s, repeated %.4f s", w / 1e6, r / 1e6}' "$1"
}
# cycle LOG: -stn_mg_profile's ms per V-cycle and us per exchange alone, rank 0
cycle() {
  awk '/^stnmg profile:/ && /\(rank 0\)/ {for (i = 1; i <= NF; i++) if ($i == "ms") {c = $(i - 1); break}}
       /^stnmg exchanges:/ && /\(rank 0\)/ {split($0, p, "\\): "); x = p[2]}
       END {printf "cycle %s ms, exchanges [%s] us", c, x}' "$1"
}
# first_exchange FLAME: the first solve's residual exchanges on the host, ms
first_exchange() { awk '/;Warm-up;SNESSolve;SNESFunctionEval;StnHaloExchange / {t += $NF} END {printf "first residual exchange %.2f ms", t / 1e3}' "$1"; }
# setup FLAME: the first solve's PCSetUp and its DMCoarsen, everything under each, ms
setup() {
  awk '/;Warm-up;SNESSolve;PCSetUp[; ]/ {p += $NF} /;Warm-up;SNESSolve;PCSetUp;DMCoarsen[; ]/ {c += $NF}
       END {printf "set-up %.1f ms (DMCoarsen %.1f)", p / 1e3, c / 1e3}' "$1"
}

# snes_solves LOG: -log_view's SNESSolve lines (Max over the ranks, s), first solve then repeated
snes_solves() { awk '$1 == "SNESSolve" {printf "%s ", $4}' "$1"; }
krylov_its() { awk '/Linear solve converged|Linear solve did not/ {s += $NF} END {print s + 0}' "$1"; }
# median FILE COLUMN
median() { awk -v c="$2" '{print $c}' "$1" | sort -g | awk '{v[NR] = $1} END {if (NR) print v[int((NR + 1) / 2)]}'; }

if [ "${SOLVES:-0}" = 1 ]; then
  rm -f "$LOG/$PROBLEM".*.solves
  for n in $RANKS; do
    for v in A B; do
      if [ $v = A ]; then prog=$PROG_A opts=$OPTS_A launch=$MPIEXEC_A; else prog=$PROG_B opts=$OPTS_B launch=$MPIEXEC_B; fi
      # shellcheck disable=SC2046,SC2086
      timeout 300 mpiexec $launch -n "$n" "$prog" $(grid "$n" "$PROBLEM" weak) $C $opts >/dev/null 2>&1 </dev/null
    done
  done
  r=1
  while [ "$r" -le "$REPS" ]; do
    for n in $RANKS; do
      for v in A B; do
        if [ $v = A ]; then name=$A prog=$PROG_A opts=$OPTS_A launch=$MPIEXEC_A; else name=$B prog=$PROG_B opts=$OPTS_B launch=$MPIEXEC_B; fi
        base=$LOG/$PROBLEM.$n.$v.$r
        # shellcheck disable=SC2046,SC2086
        timeout 300 mpiexec $launch -n "$n" "$prog" $(grid "$n" "$PROBLEM" weak) $C $opts -ksp_converged_reason -log_view >"$base.log" 2>&1 </dev/null
        t=$(snes_solves "$base.log")
        echo "$t $(krylov_its "$base.log")" >>"$LOG/$PROBLEM.$n.$v.solves"
        echo "$PROBLEM, $n GPUs, $name, round $r: SNESSolve first/repeated ${t}s; Krylov $(krylov_its "$base.log")"
      done
    done
    r=$((r + 1))
  done
  for v in A B; do
    if [ $v = A ]; then name=$A; else name=$B; fi
    one=$(echo "$RANKS" | awk '{print $1}')
    f1=$(median "$LOG/$PROBLEM.$one.$v.solves" 1) r1=$(median "$LOG/$PROBLEM.$one.$v.solves" 2)
    for n in $RANKS; do
      f=$(median "$LOG/$PROBLEM.$n.$v.solves" 1) rp=$(median "$LOG/$PROBLEM.$n.$v.solves" 2)
      ratio=$(awk -v a="$(grid_points "$(grid 1 "$PROBLEM" weak)")" -v b="$(grid_points "$(grid "$n" "$PROBLEM" weak)")" -v n="$n" 'BEGIN {printf "%.4f", b / (n * a)}')
      awk -v name="$name" -v n="$n" -v f="$f" -v rp="$rp" -v f1="$f1" -v r1="$r1" -v q="$ratio" -v one="$one" -v p="$PROBLEM" \
        'BEGIN {printf "%s, %s, %d GPUs: medians first %.1f ms, repeated %.1f ms", p, name, n, 1e3 * f, 1e3 * rp
                if (one == 1 && n > 1) printf "; weak-scaling efficiency %.0f%% first, %.0f%% repeated", 100 * q * f1 / f, 100 * q * r1 / rp
                printf "\n"}'
    done
  done
  exit 0
fi

r=1
while [ "$r" -le "$REPS" ]; do
  for n in $RANKS; do
    g=$(grid "$n" "$PROBLEM" weak)
    for v in A B; do
      if [ $v = A ]; then name=$A prog=$PROG_A opts=$OPTS_A launch=$MPIEXEC_A; else name=$B prog=$PROG_B opts=$OPTS_B launch=$MPIEXEC_B; fi
      base=$LOG/$PROBLEM.$n.$v.$r
      # shellcheck disable=SC2086
      timeout 300 mpiexec $launch -n "$n" "$prog" $g $C $opts -log_view :"$base.flame.txt":ascii_flamegraph >"$base.log" 2>&1 </dev/null
      # shellcheck disable=SC2086
      timeout 300 mpiexec $launch -n "$n" "$prog" $g $C $opts -stn_mg_profile >"$base.profile.log" 2>&1 </dev/null
      echo "$PROBLEM, $n GPUs, $name, round $r: $(solves "$base.flame.txt"); $(cycle "$base.profile.log"); $(first_exchange "$base.flame.txt"); $(setup "$base.flame.txt")"
    done
  done
  r=$((r + 1))
done
