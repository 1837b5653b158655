#!/bin/sh
# scripts/gpu-multi.sh: the generated programs on several GPUs, one MPI rank per GPU, on a
# machine with NVIDIA GPUs and the CUDA PETSc with MPI (scripts/petsc-cuda.sh --mpi).
#
#   STN_MPI=1 . scripts/gpu-env.sh && scripts/gpu-multi.sh [OUTDIR]
#
# RANKS (default 2, and 4 where there are 4 GPUs): the rank counts checked against one rank.
# Where a node has fewer GPUs than ranks, the ranks share them (-stn_share_gpus): that tests the
# code paths of several ranks, not their speed. One line per check:
#   - same answers: bratu2d, sfi3d and cavity with Jacobi (which does not depend on the split)
#     and the GPU's default Krylov method (stngmres) on N ranks give one rank's Newton count and
#     solution to 1e-10 relative; the same with 3 ranks on grids 3 does not divide;
#   - multigrid: the GPU's default solver (multigrid on SG-DIA levels) on N ranks gives one
#     rank's Newton count, Krylov counts within one per linear solve, the solution to 1e-8, and
#     its V-cycles are the fused ones (StnMGCycle in -log_view: ghosts exchanged device to
#     device, stnhalo.h), not PCMG's; the cavity's products without the matrix (its default)
#     give the solution of those with it (-stn_operator matrix) on N ranks; the same with the
#     coarse grids split over the ranks (-stn_mg_redundant_unknowns 0) or held whole below
#     33^2 only (5000);
#   - grid sequencing under the default multigrid: one rank's Krylov counts (within one);
#   - -stn_autotune on every rank: the run solves and the shared cache file stays whole;
#   - more ranks than GPUs without -stn_share_gpus: refused with a message that says so;
#   - time-dependent programs (heat_ts, grayscott under ARKIMEX) on N and 3 ranks: one rank's
#     Newton iterations in every stage solve of every step, the final state to 1e-10 (ONLY=ts
#     runs these alone);
#   - residency: in -log_view's Solve stage no event copied a vector between host and device
#     (the ghosts go device to device, stnhalo.h: PETSc's scatter, which an MPI that cannot read
#     device memory stages through host memory, does not run in the solve); the events that did
#     are named, by count and size.
# Logs go to OUTDIR (default $OUT, else build/gpu-multi). Exit status 1 on any failure.
set -u
OUTDIR=${1:-${OUT:-build/gpu-multi}}
B=build/gpu-multi
mkdir -p "$OUTDIR" $B
: "${PETSC_DIR:?set PETSC_DIR to a CUDA-enabled PETSc with MPI}"
PETSC_ARCH=${PETSC_ARCH:-}
export PETSC_DIR PETSC_ARCH
STENCILC=${STENCILC:-bin/stencilc}
GPUS=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
RANKS=${RANKS:-$([ "$GPUS" -ge 4 ] && echo "2 4" || echo 2)}
pass=0
fail=0
ok() { pass=$((pass + 1)); echo "multi-gpu: $*: ok"; }
bad() { fail=$((fail + 1)); echo "FAIL: multi-gpu: $*"; }
# run N LOG PROG OPTIONS...: PROG on N ranks (sharing GPUs where there are fewer)
run() {
  n=$1 log=$2
  shift 2
  share=
  [ "$n" -gt "$GPUS" ] && share=-stn_share_gpus
  # shellcheck disable=SC2086
  timeout 600 mpiexec -n "$n" "$@" $share >"$log" 2>&1 </dev/null # mpiexec would read the loop's input
}
newton() { grep -c "SNES Function norm" "$1"; }
krylov_counts() { awk '/Linear solve converged/ {printf "%s ", $NF}' "$1"; }
counts_close() {
  echo "$1|$2" | awk -F'|' '{n = split($1, a, " "); m = split($2, b, " "); if (n != m || n == 0) {print 0; exit}
                             for (i = 1; i <= n; i++) if (a[i] - b[i] > 1 || b[i] - a[i] > 1) {print 0; exit}; print 1}'
}
# The Solve stage's events that moved whole vectors (at least 1 KiB a copy on average): name,
# copies and megabytes each way (the last five columns of -log_view's event table).
vector_copies() {
  awk '/--- Event Stage [0-9]+: Solve/{t=1} /--- Event Stage [0-9]+: Main/{t=0} t && NF >= 20 && $2 ~ /^[0-9]+$/ {
      n = NF; c2g = $(n-4); s2g = $(n-3); g2c = $(n-2); s2c = $(n-1);
      if ((c2g > 0 && s2g * 1e6 / c2g >= 1024) || (g2c > 0 && s2c * 1e6 / g2c >= 1024))
        printf "%s(%d to GPU %.3g MB, %d to CPU %.3g MB) ", $1, c2g, s2g, g2c, s2c }' "$1"
}

LIBDIR=$PETSC_DIR/lib
mpicc -O2 -I"$PETSC_DIR/include" tests/petsc/vecdiff.c -o $B/vecdiff -L"$LIBDIR" -Wl,-rpath,"$LIBDIR" -lpetsc -lm ||
  { echo "FAIL: cannot build vecdiff"; exit 1; }
# ONLY=ts: the time-dependent programs' checks alone.
steady="bratu2d sfi3d cavity"
[ "${ONLY:-}" = ts ] && steady=
[ "${ONLY:-}" = ts ] || steady="$steady coefficient_file"
for name in $steady heat_ts grayscott; do
  src=examples/$name.stn
  [ "$name" = coefficient_file ] && src=tests/solve/$name.stn
  ("$STENCILC" "$src" -o "$B/$name" >"$OUTDIR/$name.build" 2>&1; echo "$?" >"$B/$name.build-rc") &
done
wait

# name:grid:params:uneven grid (3 ranks)
cases="bratu2d:-da_grid_x 129 -da_grid_y 129:-par 6:-da_grid_x 100 -da_grid_y 101
sfi3d:-da_grid_x 65 -da_grid_y 65 -da_grid_z 65:-par 6:-da_grid_x 31 -da_grid_y 32 -da_grid_z 34
cavity:-da_grid_x 129 -da_grid_y 129:-lidvelocity 10 -grashof 1000:-da_grid_x 98 -da_grid_y 131"
jacobi="-pc_type jacobi -ksp_rtol 1e-10 -ksp_max_it 20000 -snes_rtol 1e-10 -snes_atol 1e-12"
mg="-ksp_rtol 1e-10 -snes_rtol 1e-10 -snes_atol 1e-12"
mon="-snes_monitor -ksp_converged_reason"

# same NAME LABEL TOL LOG1 BIN1 LOGN BINN: Newton counts equal, solutions within TOL
same() {
  n1=$(newton "$4") nn=$(newton "$6")
  rel=$($B/vecdiff "$7" "$5" --rel "$3" 2>&1 | tail -1)
  line="$1: $2: Newton $((n1 - 1)) vs $((nn - 1)), solution $rel"
  if [ "$n1" -gt 1 ] && [ "$n1" = "$nn" ] && $B/vecdiff "$7" "$5" --rel "$3" >/dev/null 2>&1; then ok "same answers: $line"
  else bad "same answers: $line"; tail -15 "$6"; fi
}

# deep_same N LOG PROG OPTIONS...: the fused cycle with deep ghosts (stnmgdeep.h: one exchange per
# level and cycle where every split level has them) and with an exchange before every step print the
# same Krylov residual norms, digit for digit: a ghost row computes the neighbour's values in the
# neighbour's order.
deep_same() {
  dn=$1 dlog=$2 keep_n=$n # run sets n and log
  shift 2
  run "$dn" "$dlog.on.log" "$@" -ksp_monitor -stn_mg_deep_ghosts 1 -info :pc
  run "$dn" "$dlog.off.log" "$@" -ksp_monitor -stn_mg_deep_ghosts 0
  n=$keep_n
  norms_on=$(grep -c "KSP Residual norm" "$dlog.on.log") deep_off=$(grep -c "exchanges its ghosts before every step" "$dlog.on.log")
  deep_on=$(grep -c ": deep ghosts, " "$dlog.on.log")
  if [ "$norms_on" -gt 0 ] && [ "$deep_off" = 0 ] && [ "$deep_on" -gt 0 ] &&
     [ "$(grep "Residual norm" "$dlog.on.log")" = "$(grep "Residual norm" "$dlog.off.log")" ]; then
    ok "multigrid: deep ghosts on $dn ranks ($(basename "$dlog"), made $deep_on times): the same $norms_on Krylov residual norms as an exchange before every step"
  else bad "multigrid: deep ghosts on $dn ranks ($(basename "$dlog")): residual norms differ from an exchange before every step, or deep ghosts not made ($deep_on made, $deep_off refused)"; diff "$dlog.on.log" "$dlog.off.log" | head -8; fi
}

# Time-dependent programs (TS): every stage solve of every step takes one rank's Newton
# iterations, and the final state is one rank's to 1e-10 (Jacobi, tight tolerances).
solves() {
  awk '$2 == "SNES" && $3 == "Function" { if ($1 == 0 && have) { s = s (s == "" ? "" : ",") n } n = $1; have = 1 }
       $2 == "TS" && $3 == "dt" { if (have) { s = s (s == "" ? "" : ",") n; have = 0 } if (s != "") { out = out sep s; sep = " " } s = "" }
       END { print out }' "$1"
}
tsstrict="-pc_type jacobi -ksp_max_it 20000 -ts_adapt_type none -ksp_rtol 1e-12 -snes_rtol 1e-12 -snes_atol 1e-13 -ts_monitor -snes_monitor"
for c in "heat_ts:-da_grid_x 65 -da_grid_y 65 -ts_max_steps 20" \
         "grayscott:-da_grid_x 129 -da_grid_y 129 -ts_type arkimex -ts_dt 0.5 -ts_max_steps 10 -ts_max_time 2000"; do
  name=${c%%:*} grid=${c#*:}
  if [ "$(cat "$B/$name.build-rc")" != 0 ]; then bad "$name: stencilc -o failed"; cat "$OUTDIR/$name.build"; continue; fi
  for n in 1 $RANKS 3; do
    # shellcheck disable=SC2086
    run "$n" "$OUTDIR/$name.ts.$n.log" $B/$name $grid $tsstrict -ts_view_solution "binary:$B/$name.ts.$n.bin"
  done
  s1=$(solves "$OUTDIR/$name.ts.1.log")
  for n in $RANKS 3; do
    sn=$(solves "$OUTDIR/$name.ts.$n.log")
    rel=$($B/vecdiff "$B/$name.ts.$n.bin" "$B/$name.ts.1.bin" --rel 1e-10 2>&1 | tail -1)
    if [ -n "$s1" ] && [ "$s1" = "$sn" ] && grep -q ": integrated to t = " "$OUTDIR/$name.ts.$n.log" &&
       $B/vecdiff "$B/$name.ts.$n.bin" "$B/$name.ts.1.bin" --rel 1e-10 >/dev/null 2>&1; then
      ok "time: $name on $n ranks: one rank's Newton iterations in its $(echo "$sn" | tr ' ,' '\n\n' | grep -c .) solves, final state $rel"
    else bad "time: $name on $n ranks: Newton per solve [$sn] against [$s1], final state $rel"; tail -5 "$OUTDIR/$name.ts.$n.log"; fi
  done
done
if [ "${ONLY:-}" = ts ]; then
  echo "multi-gpu: $pass passed, $fail failed ($GPUS GPUs, ranks $RANKS and 3)"
  [ "$fail" -eq 0 ]
  exit
fi

while IFS=: read -r name grid params uneven; do
  if [ "$(cat "$B/$name.build-rc")" != 0 ]; then bad "$name: stencilc -o failed"; cat "$OUTDIR/$name.build"; continue; fi
  for kind in jacobi mg; do
    opts=$jacobi
    [ $kind = mg ] && opts=$mg
    # shellcheck disable=SC2086
    run 1 "$OUTDIR/$name.$kind.1.log" $B/$name $grid $params $opts $mon -snes_view_solution "binary:$B/$name.$kind.1.bin"
    for n in $RANKS; do
      # shellcheck disable=SC2086
      run "$n" "$OUTDIR/$name.$kind.$n.log" $B/$name $grid $params $opts $mon -snes_view_solution "binary:$B/$name.$kind.$n.bin"
      if [ $kind = jacobi ]; then
        same "$name" "$n ranks, Jacobi, stngmres" 1e-10 "$OUTDIR/$name.$kind.1.log" "$B/$name.$kind.1.bin" "$OUTDIR/$name.$kind.$n.log" "$B/$name.$kind.$n.bin"
      else
        same "$name" "$n ranks, multigrid" 1e-8 "$OUTDIR/$name.$kind.1.log" "$B/$name.$kind.1.bin" "$OUTDIR/$name.$kind.$n.log" "$B/$name.$kind.$n.bin"
        if [ "$name" = cavity ]; then # its long rows: products without the matrix (-stn_operator auto), neighbours from the exchange
          # shellcheck disable=SC2086
          run "$n" "$OUTDIR/$name.$kind.$n.matrix.log" $B/$name $grid $params $opts $mon -stn_operator matrix -snes_view_solution "binary:$B/$name.$kind.$n.matrix.bin"
          same "$name" "$n ranks, multigrid, the products without the matrix against those with it" 1e-8 "$OUTDIR/$name.$kind.$n.matrix.log" "$B/$name.$kind.$n.matrix.bin" "$OUTDIR/$name.$kind.$n.log" "$B/$name.$kind.$n.bin"
        fi
        if [ "$name" = cavity ]; then # deep ghosts on its split levels without the matrix (stnmgdeep.h)
          deep_same "$n" "$OUTDIR/$name.deep.$n" $B/$name $grid $params $mg
          deep_same "$n" "$OUTDIR/$name.deep.$n.matfree" $B/$name $grid $params $mg -stn_operator matfree -stn_mg_redundant_unknowns 0
          deep_same "$n" "$OUTDIR/$name.deep.$n.low" $B/$name $grid $params $mg -stn_mg_redundant_unknowns 5000 # the lowest split level below the finest
          [ "$n" = "${RANKS%% *}" ] && deep_same 3 "$OUTDIR/$name.deep.3.uneven" $B/$name -da_grid_x 129 -da_grid_y 161 $params $mg # 54, 54, 53 rows
        fi
        # The coarse grids split over the ranks (none held whole), and split below 33^2 only.
        for r in 0 5000; do
          # shellcheck disable=SC2086
          run "$n" "$OUTDIR/$name.$kind.$n.whole$r.log" $B/$name $grid $params $opts $mon -stn_mg_redundant_unknowns $r -snes_view_solution "binary:$B/$name.$kind.$n.whole$r.bin"
          same "$name" "$n ranks, multigrid, -stn_mg_redundant_unknowns $r" 1e-8 "$OUTDIR/$name.$kind.1.log" "$B/$name.$kind.1.bin" "$OUTDIR/$name.$kind.$n.whole$r.log" "$B/$name.$kind.$n.whole$r.bin"
        done
        k1=$(krylov_counts "$OUTDIR/$name.$kind.1.log") kn=$(krylov_counts "$OUTDIR/$name.$kind.$n.log")
        if [ "$(counts_close "$k1" "$kn")" = 1 ]; then ok "multigrid: $name: $n ranks: Krylov [$kn] against one rank's [$k1]"
        else bad "multigrid: $name: $n ranks: Krylov [$kn] against one rank's [$k1]"; fi
      fi
    done
  done
  # An uneven split: 3 ranks on a grid 3 does not divide, against one rank.
  # shellcheck disable=SC2086
  run 1 "$OUTDIR/$name.uneven.1.log" $B/$name $uneven $params $jacobi $mon -snes_view_solution "binary:$B/$name.uneven.1.bin"
  # shellcheck disable=SC2086
  run 3 "$OUTDIR/$name.uneven.3.log" $B/$name $uneven $params $jacobi $mon -snes_view_solution "binary:$B/$name.uneven.3.bin"
  same "$name" "3 ranks on $(echo "$uneven" | sed 's/-da_grid_. //g; s/ /x/g'), Jacobi" 1e-10 "$OUTDIR/$name.uneven.1.log" "$B/$name.uneven.1.bin" "$OUTDIR/$name.uneven.3.log" "$B/$name.uneven.3.bin"
  # Residency on the largest rank count, both solvers, without output options.
  n=$(echo "$RANKS" | awk '{print $NF}')
  for kind in jacobi mg; do
    opts=$jacobi
    [ $kind = mg ] && opts=$mg
    # shellcheck disable=SC2086
    run "$n" "$OUTDIR/$name.$kind.stage.log" $B/$name $grid $params $opts -log_view
    moved=$(vector_copies "$OUTDIR/$name.$kind.stage.log")
    if [ -z "$moved" ] && grep -q "Event Stage [0-9]*: Solve" "$OUTDIR/$name.$kind.stage.log"; then ok "residency: $name: $n ranks, $kind: no vector copies in the solve"
    else bad "residency: $name: $n ranks, $kind: vector copies in the solve: ${moved:-no Solve stage in the log}"; fi
    if [ $kind = mg ]; then
      cycles=$(awk '$1 == "StnMGCycle" && $2 > m {m = $2} END {print m + 0}' "$OUTDIR/$name.$kind.stage.log")
      if [ "$cycles" -gt 0 ]; then ok "multigrid: $name: $n ranks: the fused V-cycle ran across the ranks ($cycles cycles)"
      else bad "multigrid: $name: $n ranks: PCMG's V-cycle ran, not the fused one"; fi
    fi
  done
done <<EOF
$cases
EOF

# A program that reads a coefficient from a file, every level's product without the matrix and
# every level split: its kernels read the coefficient laid out in the grid's own ghosted box, so
# its levels refuse deep ghosts (stnmgdeep.h) and exchange before every step; one rank's answers.
if [ "$(cat "$B/coefficient_file.build-rc")" != 0 ]; then bad "coefficient_file: stencilc -o failed"; cat "$OUTDIR/coefficient_file.build"
elif ! mpicc -O2 -I"$PETSC_DIR/include" tests/solve/coefficient_file_write.c -o $B/kwrite -L"$LIBDIR" -Wl,-rpath,"$LIBDIR" -lpetsc -lm ||
     ! $B/kwrite -da_grid_x 129 -da_grid_y 129 -o $B/k129.k >/dev/null 2>&1; then bad "coefficient_file: cannot write its coefficient file"
else
  cf="-da_grid_x 129 -da_grid_y 129 -k_file $B/k129.k -stn_operator matfree -stn_mg_redundant_unknowns 0 $mg $mon"
  for n in 1 $RANKS; do
    # shellcheck disable=SC2086
    run "$n" "$OUTDIR/coefficient_file.$n.log" $B/coefficient_file $cf -info :pc -snes_view_solution "binary:$B/coefficient_file.$n.bin"
  done
  for n in $RANKS; do
    same coefficient_file "$n ranks, multigrid, products without the matrix" 1e-8 "$OUTDIR/coefficient_file.1.log" "$B/coefficient_file.1.bin" "$OUTDIR/coefficient_file.$n.log" "$B/coefficient_file.$n.bin"
    if grep -q "exchanges its ghosts before every step: the product reads coefficients from files" "$OUTDIR/coefficient_file.$n.log" &&
       ! grep -q ": deep ghosts, " "$OUTDIR/coefficient_file.$n.log"; then ok "multigrid: coefficient_file on $n ranks: no deep ghosts (its coefficient has the grid's ghosts only)"
    else bad "multigrid: coefficient_file on $n ranks: deep ghosts not refused"; fi
  done
fi

# Grid sequencing under the default multigrid: every refined grid gets new transfers and a new
# gather for its coarsest grid; the counts are one rank's.
for n in 1 $RANKS; do
  run "$n" "$OUTDIR/gridseq.$n.log" $B/bratu2d -da_grid_x 33 -da_grid_y 33 -snes_grid_sequence 2 -snes_converged_reason -ksp_converged_reason
done
k1=$(krylov_counts "$OUTDIR/gridseq.1.log")
for n in $RANKS; do
  kn=$(krylov_counts "$OUTDIR/gridseq.$n.log")
  if grep -q "solved in" "$OUTDIR/gridseq.$n.log" && [ "$(counts_close "$k1" "$kn")" = 1 ]; then ok "bratu2d -snes_grid_sequence 2 on $n ranks: Krylov [$kn] against one rank's [$k1]"
  else bad "bratu2d -snes_grid_sequence 2 on $n ranks: Krylov [$kn] against one rank's [$k1]"; tail -5 "$OUTDIR/gridseq.$n.log"; fi
done

# The tuner on every rank (each times its own kernels and writes the one cache file through a
# temporary of its own): the run solves, the cache is whole, and a second run reads it.
n=$(echo "$RANKS" | awk '{print $1}')
rm -f "$B/tune.txt"
run "$n" "$OUTDIR/tune.log" $B/bratu2d -da_grid_x 129 -da_grid_y 129 -stn_autotune -stn_tune_cache "$B/tune.txt"
rc1=$?
run "$n" "$OUTDIR/tune2.log" $B/bratu2d -da_grid_x 129 -da_grid_y 129 -stn_tune_cache "$B/tune.txt" -info :dm
lines=$(grep -vc '^#' "$B/tune.txt" 2>/dev/null)
if [ $rc1 = 0 ] && grep -q "solved in" "$OUTDIR/tune.log" && grep -q "solved in" "$OUTDIR/tune2.log" && [ "${lines:-0}" -gt 0 ] &&
   grep -q "[1-9][0-9]* tuned kernel shapes from" "$OUTDIR/tune2.log" &&
   ! grep -v '^#' "$B/tune.txt" | awk -F'\t' 'NF != 6 {bad = 1} END {exit !bad}'; then
  ok "-stn_autotune on $n ranks: solved, $lines tuned shapes in the cache, read by the next run"
else bad "-stn_autotune on $n ranks: exit $rc1, $lines cache lines"; tail -5 "$OUTDIR/tune.log"; fi

# More ranks on the node than GPUs, without -stn_share_gpus: a clear error, not a shared GPU.
n=$((GPUS + 1))
timeout 120 mpiexec -n $n $B/bratu2d -da_grid_x 33 -da_grid_y 33 >"$OUTDIR/too-many-ranks.log" 2>&1 </dev/null
rc=$?
if [ $rc != 0 ] && grep -q "ranks run on this node but it has $GPUS GPU" "$OUTDIR/too-many-ranks.log"; then ok "$n ranks on $GPUS GPUs: refused, saying why"
else bad "$n ranks on $GPUS GPUs: exit $rc, no clear error"; tail -5 "$OUTDIR/too-many-ranks.log"; fi

echo "multi-gpu: $pass passed, $fail failed ($GPUS GPUs, ranks $RANKS)"
[ $fail = 0 ]
