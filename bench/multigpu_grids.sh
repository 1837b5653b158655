# bench/multigpu_grids.sh, sourced by bench/multigpu*.sh: the grids of the scaling runs.
# Weak scaling keeps the work per GPU and the grid spacing the same in every direction: a grid
# stretched along one axis (1025 x 2049, 257 x 513^2) is an anisotropic operator, which point
# smoothers converge on more slowly, so it measured the smoother, not the scaling (SFI took 13
# Krylov iterations at 257 x 513^2, 9 at 385^3, 10 at 257^3). Square and cubic grids of the form
# 2^k m + 1 with m small, so that the coarsest grid stays small, come within 16% of N times the
# one-GPU grid (the closer 417^3 coarsens to 14^3 only, whose dense LU costs 9 ms a Jacobian);
# grid_points gives the ratio the efficiencies are scaled by.

# grid N PROBLEM KIND: the grid options for N GPUs (KIND weak or strong)
grid() {
  case $2-$3 in
    cavity-weak) case $1 in 1) echo "-da_grid_x 1025 -da_grid_y 1025" ;; 2) echo "-da_grid_x 1409 -da_grid_y 1409" ;; 4) echo "-da_grid_x 2049 -da_grid_y 2049" ;; esac ;;
    sfi3d-weak) case $1 in 1) echo "-da_grid_x 257 -da_grid_y 257 -da_grid_z 257" ;; 2) echo "-da_grid_x 321 -da_grid_y 321 -da_grid_z 321" ;; 4) echo "-da_grid_x 385 -da_grid_y 385 -da_grid_z 385" ;; esac ;;
    cavity-strong) echo "-da_grid_x 2049 -da_grid_y 2049" ;;
    sfi3d-strong) echo "-da_grid_x 385 -da_grid_y 385 -da_grid_z 385" ;;
  esac
}

# grid_points OPTIONS: the grid points the options give
grid_points() { echo "$@" | awk '{p = 1; for (i = 2; i <= NF; i += 2) p *= $i; print p}'; }

# grid_name OPTIONS: 1025x1025
grid_name() { echo "$@" | sed 's/-da_grid_. //g; s/ /x/g'; }

# grids_known "PROBLEMS" "COUNTS": exits with a message where a problem or GPU count has no grid
# here (a run on the program's default grid would be timed against the wrong work)
grids_known() {
  for p in $1; do
    for n in $2; do
      for kind in weak strong; do
        [ -n "$(grid "$n" "$p" $kind)" ] || { echo "bench/multigpu_grids.sh: no $kind-scaling grid for $p on $n GPUs: add one to grid()" >&2; exit 1; }
      done
    done
  done
}
