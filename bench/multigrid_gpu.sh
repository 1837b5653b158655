#!/bin/sh
# bench/multigrid_gpu.sh: time to a converged solution on the GPU at realistic sizes. Ours with
# the default preconditioner (multigrid with SG-DIA levels on the device where the grid halves
# at least twice, runtime/stnmg.h) against ours with Jacobi and against PETSc's ex19 with
# PETSc's GPU multigrid (-dm_vec_type cuda -dm_mat_type aijcusparse -ksp_type fgmres
# -pc_type mg -mg_levels_ksp_type chebyshev -mg_levels_pc_type jacobi, levels down to 9 x 9),
# built against the same CUDA PETSc. The cavity with ex19's defaults and a harder case, SFI in
# 3D, also with PETSc's PCMG and GAMG on an AIJCUSPARSE Jacobian; -snes_rtol 1e-8 -ksp_rtol 1e-5; whole SNESSolve and KSPSolve from -log_view, each run
# once to warm up and once timed. Prints a markdown table; logs in $OUT or build/bench-mg.
#
#   PETSC_DIR=/path/to/cuda-petsc sh bench/multigrid_gpu.sh
set -u
: "${PETSC_DIR:?set PETSC_DIR to a CUDA-enabled PETSc}"
EX19=${EX19:-.petsc-cuda/tutorials/ex19.c}
LOG=${OUT:-build/bench-mg}
B=build/bench-mg
mkdir -p "$LOG" "$B"
cc -O2 -I"$PETSC_DIR/include" "$EX19" -o "$B/ex19" -L"$PETSC_DIR/lib" -Wl,-rpath,"$PETSC_DIR/lib" -lpetsc -lm || exit 1
for e in cavity sfi3d; do PETSC_ARCH= bin/stencilc "examples/$e.stn" -o "$B/$e" >"$LOG/build.$e.log" 2>&1 & done
wait
C="-snes_rtol 1e-8 -ksp_rtol 1e-5"
X19="-dm_vec_type cuda -dm_mat_type aijcusparse -ksp_type fgmres -pc_type mg -mg_levels_ksp_type chebyshev -mg_levels_pc_type jacobi"

ev() { awk -v e="$2" '$1 == e {print $4; exit}' "$1"; }
krylov() { awk '/Linear solve converged|Linear solve did not/ {s += $NF; n++; l = l " " $NF} END {printf "%d [%s ]", s, l}' "$1"; }
newton() { awk '/Nonlinear solve converged/ {printf "%s ", $NF} /Nonlinear solve did not/ {printf "failed "}' "$1"; }
# row NAME GRID LABEL PROG OPTIONS...: one table row; ex19's row of the same grid sets the ratio
row() {
  name=$1 grid=$2 label=$3
  shift 3
  timeout 300 "$@" >/dev/null 2>&1
  timeout 300 "$@" -ksp_converged_reason -snes_converged_reason -log_view >"$LOG/$name.log" 2>&1
  t=$(ev "$LOG/$name.log" SNESSolve)
  case $name in ex19*) ref=$t ;; esac
  ratio=$(awk -v r="${ref:-}" -v t="$t" 'BEGIN {if (r != "" && t > 0) printf "%.1f", r / t}')
  echo "| $grid | $label | $t | $(ev "$LOG/$name.log" KSPSolve) | $(newton "$LOG/$name.log") | $(krylov "$LOG/$name.log") | $ratio |"
}

echo "| grid | run | SNESSolve s | KSPSolve s | Newton | Krylov its [per Newton step] | ex19 mg / this |"
echo "|---|---|--:|--:|--:|---|--:|"
for n in 257 513 1025 2049; do
  ref=
  lv=$(awk -v n="$n" 'BEGIN {l = 1; while (n > 9) {n = (n - 1) / 2 + 1; l++}; print l}')
  [ $n -le 1025 ] && row ex19.$n "cavity $n^2" "ex19, PETSc's GPU multigrid ($lv levels)" "$B/ex19" -da_grid_x $n -da_grid_y $n $C $X19 -pc_mg_levels "$lv"
  row mg.$n "cavity $n^2" "ours, default (multigrid)" "$B/cavity" -da_grid_x $n -da_grid_y $n $C
  [ $n -le 513 ] && row jacobi.$n "cavity $n^2" "ours, -pc_type jacobi" "$B/cavity" -da_grid_x $n -da_grid_y $n $C -pc_type jacobi
done
ref=
row hard.1025 "cavity 1025^2, lid 100, Grashof 1e4" "ours, default, -snes_grid_sequence 2: 257^2, 513^2, 1025^2" "$B/cavity" -da_grid_x 257 -da_grid_y 257 -snes_grid_sequence 2 -lidvelocity 100 -grashof 1e4 $C
for n in 65 129 257; do
  ref=
  row sfi.mg.$n "SFI $n^3" "ours, default (multigrid)" "$B/sfi3d" -da_grid_x $n -da_grid_y $n -da_grid_z $n $C
  [ $n -le 129 ] && row sfi.jacobi.$n "SFI $n^3" "ours, -pc_type jacobi" "$B/sfi3d" -da_grid_x $n -da_grid_y $n -da_grid_z $n $C -pc_type jacobi
  # PETSc's own multigrid on the same program: AIJCUSPARSE Jacobian, PETSc's levels or GAMG
  lv=$(awk -v n="$n" 'BEGIN {l = 1; while (n > 5) {n = (n - 1) / 2 + 1; l++}; print l}') # down to 5^3, as ours
  [ $n -ge 129 ] && row sfi.pcmg.$n "SFI $n^3" "ours with -stn_mat_type aij: PETSc's PCMG ($lv levels, Chebyshev/Jacobi, AIJCUSPARSE)" "$B/sfi3d" -da_grid_x $n -da_grid_y $n -da_grid_z $n $C \
    -stn_mat_type aij -pc_type mg -pc_mg_levels "$lv" -mg_levels_ksp_type chebyshev -mg_levels_pc_type jacobi
  [ $n -ge 129 ] && row sfi.gamg.$n "SFI $n^3" "ours with -stn_mat_type aij: PETSc's GAMG" "$B/sfi3d" -da_grid_x $n -da_grid_y $n -da_grid_z $n $C -stn_mat_type aij -pc_type gamg
done

# The V-cycle alone: -stn_mg_profile times each fused cycle on the GPU (CUDA events around it,
# the device synchronised after it) against the bytes its steps move (runtime/stnmgcycle.c).
echo
echo "| grid | levels | V-cycles | GPU ms per cycle | byte model GB per cycle (finest level) | GB/s |"
echo "|---|--:|--:|--:|--:|--:|"
for r in "cavity 257" "cavity 513" "cavity 1025" "cavity 2049" "sfi3d 65" "sfi3d 129" "sfi3d 257"; do
  set -- $r
  g="-da_grid_x $2 -da_grid_y $2"
  [ "$1" = sfi3d ] && g="$g -da_grid_z $2"
  # shellcheck disable=SC2086
  timeout 300 "$B/$1" $g $C -stn_mg_profile >"$LOG/profile.$1.$2.log" 2>&1
  awk -v p="$1 $2" '/^stnmg profile/ {gsub(/[(),:;]/, " "); printf "| %s | %s | %s | %s | %s (%s) | %s |\n", p, $6, $3, $8, $16, $22, $24}' "$LOG/profile.$1.$2.log"
done
