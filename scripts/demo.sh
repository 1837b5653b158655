#!/bin/sh
# scripts/demo.sh: the main job, run by `make demo`. Compiles the driven
# cavity (examples/cavity.stn, PETSc's SNES tutorial ex19) into a PETSc
# program and solves it, showing Newton's convergence, then writes the
# solution for ParaView and, when gnuplot is installed, draws the solution
# and the convergence history as PNG pictures.
set -eu
STENCILC=${STENCILC:-bin/stencilc}
out=build/demo
mkdir -p "$out"
"$STENCILC" --version
echo
echo "\$ $STENCILC examples/cavity.stn -o $out/cavity --emit-dir $out/cavity-src"
"$STENCILC" examples/cavity.stn -o "$out/cavity" --emit-dir "$out/cavity-src"
echo "(the generated C is in $out/cavity-src/cavity.c)"
echo
opts="-da_grid_x 64 -da_grid_y 64 -lidvelocity 10 -grashof 1000 -snes_monitor -pc_type lu"
opts="$opts -stn_output $out/cavity.vts"
if command -v gnuplot >/dev/null 2>&1; then
  opts="$opts -stn_plot_solution $out/cavity-solution.png -stn_plot_convergence $out/cavity-convergence.png"
  pictures="yes"
else
  pictures=""
fi
echo "\$ $out/cavity $opts"
# shellcheck disable=SC2086
"$out/cavity" $opts
echo
if [ -n "$pictures" ]; then
  echo "Look at the pictures: $out/cavity-solution.png (u, v, omega, temp)"
  echo "                      $out/cavity-convergence.png (residual norm per Newton and Krylov iteration)"
else
  echo "No pictures: gnuplot is not installed (make deps installs gnuplot-nox)."
fi
echo "Try: $out/cavity -help | sed -n 1,12p    (the parameters and options)"
echo "     $STENCILC --explain examples/cavity.stn | less    (stencils, derived Jacobian, SG-DIA)"
echo "     $STENCILC --dump-ir examples/cavity.stn | tail -40    (the IR of the Jacobian entries)"
echo "     docs/tutorial.md: from the heat equation to this cavity, step by step"
