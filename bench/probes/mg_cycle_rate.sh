#!/bin/sh
# bench/probes/mg_cycle_rate.sh: does the multigrid V-cycle converge on its own? Each program's
# cycle run as a stationary iteration (Richardson on the first Newton step's linear system, at
# most 20 cycles), and the average reduction per cycle of its preconditioned residual, cycle 0
# to the last (a rate above 1: the cycle diverges, and GMRES carries the modes it amplifies,
# which makes the Krylov count grow with the levels). On the CPU (-stn_device cpu; the GPU's
# fused cycle gives PCMG's counts, docs/performance.md), from the repository root:
#   - the default hierarchy (SG-DIA levels down to the dense coarsest grid, three Chebyshev
#     steps around Jacobi);
#   - two to five levels on PETSc's AIJ levels, an LU coarsest grid, three Chebyshev steps
#     around Jacobi (ours) or SOR (PCMG's default): what each coarsening loses, by smoother.
# Steady-state programs only (a time stepper solves once per step). Logs in
# build/probes/mg-cycle-rate.
#
#   sh bench/probes/mg_cycle_rate.sh                   # GRID=129, PROGRAMS="cavity bratu2d"
set -u
GRID=${GRID:-129}
PROGRAMS=${PROGRAMS:-cavity bratu2d}
B=build/probes/mg-cycle-rate
mkdir -p $B
make -s bin/stencilc || exit 1
# rate PROG LOG OPTIONS...: the average reduction per cycle over the first linear solve, its
# cycles and how it ended; the run's output in LOG
rate() {
  prog=$1 log=$2
  shift 2
  "$B/$prog" -stn_device cpu -da_grid_x "$GRID" -da_grid_y "$GRID" -pc_type mg -stn_mat_type sgdia \
    -ksp_type richardson -ksp_norm_type preconditioned -ksp_max_it 20 -ksp_rtol 1e-10 -snes_max_it 1 \
    -ksp_monitor -ksp_converged_reason "$@" >"$log" 2>&1
  awk '/KSP Residual norm/ {if ($1 == 0 && n) exit; if (n == 0) a = $NF; b = $NF; k = $1; n++}
       END {if (n > 1 && a > 0) printf "%.3g per cycle over %d cycles", (b / a) ^ (1 / k), k; else printf "no cycles ran"}' "$log"
  reason=$(grep -m1 -o 'Linear solve [a-z ]* due to [A-Z_]*' "$log" | sed 's/.* due to //')
  echo " (${reason:-no reason printed: see $log})"
}
for p in $PROGRAMS; do
  bin/stencilc "examples/$p.stn" -o "$B/$p" >"$B/$p.build.log" 2>&1 || { echo "$p: the build failed ($B/$p.build.log)"; continue; }
  echo "== $p, ${GRID}^2"
  r=$(rate "$p" "$B/$p.default.log" -stn_levels_mat_type sgdia -ksp_view)
  levels=$(grep -m1 -o 'levels=[0-9]*' "$B/$p.default.log")
  printf '%-46s %s\n' "the default hierarchy (${levels:-levels unknown})" "$r"
  for l in 2 3 4 5; do
    for pc in jacobi sor; do
      printf '%-46s %s\n' "AIJ levels, $pc in Chebyshev, $l levels, LU" \
        "$(rate "$p" "$B/$p.$pc.$l.log" -stn_levels_mat_type aij -pc_mg_levels $l -mg_levels_pc_type $pc -mg_levels_ksp_max_it 3 -mg_coarse_ksp_type preonly -mg_coarse_pc_type lu)"
    done
  done
done
