#!/bin/sh
# bench/probes/mg_cycle_rate.sh: does the multigrid V-cycle converge on its own? Each program's
# cycle run as a stationary iteration (Richardson, the first Newton step's linear system), its
# residual's average reduction per cycle (a rate above 1: the cycle diverges, and GMRES carries
# the modes it amplifies, which makes the Krylov count grow with the levels). CPU only (the
# GPU's fused cycle gives PCMG's counts, docs/performance.md), from the repository root:
#   - the default hierarchy (SG-DIA levels, three Jacobi-Chebyshev steps, the dense coarsest
#     grid);
#   - two to five levels on PETSc's AIJ levels, an LU coarsest grid, three Chebyshev steps
#     around Jacobi (ours) or SOR (PCMG's default): what each coarsening loses, by smoother.
#
#   sh bench/probes/mg_cycle_rate.sh                   # GRID=129, PROGRAMS="cavity bratu2d"
set -u
GRID=${GRID:-129}
PROGRAMS=${PROGRAMS:-cavity bratu2d}
B=build/probes/mg-cycle-rate
mkdir -p $B
# rate PROG OPTIONS...: the average residual reduction per cycle over 20 cycles (or to the
# tolerance), and the cycles run
rate() {
  prog=$1
  shift
  "$B/$prog" -da_grid_x "$GRID" -da_grid_y "$GRID" -pc_type mg -stn_mat_type sgdia -ksp_type richardson -ksp_max_it 20 \
    -ksp_rtol 1e-10 -snes_max_it 1 -ksp_monitor "$@" 2>&1 |
    awk '/KSP Residual norm/ {if (n == 0) a = $NF; b = $NF; k = $1; n++} END {if (n > 1 && a > 0) printf "%.3g per cycle over %d cycles\n", (b / a) ^ (1 / k), k; else print "no cycles ran"}'
}
for p in $PROGRAMS; do
  bin/stencilc "examples/$p.stn" -o "$B/$p" >"$B/$p.build.log" 2>&1 || { echo "$p: the build failed ($B/$p.build.log)"; continue; }
  echo "== $p, ${GRID}^2"
  printf '%-46s %s\n' "the default hierarchy" "$(rate "$p" -stn_levels_mat_type sgdia)"
  for l in 2 3 4 5; do
    for pc in jacobi sor; do
      printf '%-46s %s\n' "AIJ levels, $pc in Chebyshev, $l levels, LU" \
        "$(rate "$p" -stn_levels_mat_type aij -pc_mg_levels $l -mg_levels_pc_type $pc -mg_levels_ksp_max_it 3 -mg_coarse_ksp_type preonly -mg_coarse_pc_type lu)"
    done
  done
done
