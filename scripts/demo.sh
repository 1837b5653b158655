#!/bin/sh
# scripts/demo.sh: the main job, run by `make demo`. Compiles the driven
# cavity (examples/cavity.stn, PETSc's SNES tutorial ex19) into a PETSc
# program and solves it, showing Newton's convergence, then writes the
# solution for ParaView.
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
echo "\$ $out/cavity $opts -stn_output $out/cavity.vts"
# shellcheck disable=SC2086
"$out/cavity" $opts -stn_output "$out/cavity.vts"
echo
echo "Try: $out/cavity -help | head -20    (the parameters and options)"
echo "     $STENCILC --dump-ir examples/cavity.stn | tail -40    (the derived Jacobian entries)"
