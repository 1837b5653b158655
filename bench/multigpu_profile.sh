#!/bin/sh
# bench/multigpu_profile.sh: where the first and a repeated solve spend their time on 1 and
# several GPUs (the weak-scaling grids of bench/multigpu.sh), as -log_view tables and flame
# graphs (-log_view :FILE:ascii_flamegraph, self time in us by nested event, rank 0), and a
# summary of the events that grow most from 1 to N GPUs. Logs in build/bench-multigpu/profile,
# packed into $OUT/multigpu-profile.tgz when OUT is set.
#
#   STN_MPI=1 . scripts/gpu-env.sh && sh bench/multigpu_profile.sh     # PROBLEMS, RANKS=4
set -u
. bench/multigpu_grids.sh
: "${PETSC_DIR:?set PETSC_DIR to a CUDA-enabled PETSc with MPI}"
D=build/bench-multigpu/profile
mkdir -p $D
PROBLEMS=${PROBLEMS:-cavity sfi3d}
RANKS=${RANKS:-4}
grids_known "$PROBLEMS" "1 $RANKS"
for e in $PROBLEMS; do PETSC_ARCH='' bin/stencilc "examples/$e.stn" -o "$D/$e" >"$D/build.$e.log" 2>&1 & done
wait
C="-snes_rtol 1e-8 -ksp_rtol 1e-5 -stn_solve_repeat 2"
for p in $PROBLEMS; do
  for n in 1 $RANKS; do
    # shellcheck disable=SC2046,SC2086
    timeout 300 mpiexec -n $n $D/$p $(grid $n $p weak) $C >/dev/null 2>&1 </dev/null # warm the caches
    # shellcheck disable=SC2046,SC2086
    timeout 300 mpiexec -n $n $D/$p $(grid $n $p weak) $C -log_view >$D/lv.$p.$n.log 2>&1 </dev/null
    # shellcheck disable=SC2046,SC2086
    timeout 300 mpiexec -n $n $D/$p $(grid $n $p weak) $C -log_view :$D/flame.$p.$n.txt:ascii_flamegraph >$D/fl.$p.$n.log 2>&1 </dev/null
  done
done
# The nested events whose self time grows most from 1 to N GPUs, by stage (ms, rank 0).
for p in $PROBLEMS; do
  echo "== $p: self time (ms) on 1 and $RANKS GPUs, the 25 largest growths"
  awk -v n="$RANKS" '
    FNR == 1 { f++ }
    { t = $NF; $NF = ""; sub(/ $/, ""); k = $0; if (f == 1) a[k] += t; else b[k] += t; keys[k] = 1 }
    END { for (k in keys) printf "%9.1f %9.1f %9.1f  %s\n", (b[k] - a[k]) / 1e3, a[k] / 1e3, b[k] / 1e3, k }' \
    $D/flame.$p.1.txt $D/flame.$p.$RANKS.txt | sort -rn | head -25
done
if [ -n "${OUT:-}" ]; then tar czf "$OUT/multigpu-profile.tgz" -C build/bench-multigpu profile; fi
