#!/bin/sh
# bench/stencil_shapes_gpu.sh: the generated residual and Jacobian kernels, tuned launch shape
# against the default, on the GPU. Each case builds the example, runs it once with
# -stn_autotune on a fresh tuning cache (one Newton step: the kernels are tuned at their first
# launch, on the program's own operands) and reads the tuner's summary lines:
#   stencilc autotune: NAME/residual: BX x BY, sweep S: US us (default ...: US us, R x); N shapes in T s
# The default is 256 threads as a tile (bx: the rows rounded up to a warp, at most 256) with
# one point per thread; the tuner's search is stntune.c's launch_candidates (about 50 shapes).
# Times are the tuner's: best of three batches of back-to-back launches (about 2 ms each).
#
#   PETSC_DIR=/path/to/cuda-petsc bench/stencil_shapes_gpu.sh
#
# Prints a markdown table; logs in $OUT or build/bench-gpu.
set -u
: "${PETSC_DIR:?set PETSC_DIR to a CUDA-enabled PETSc}"
LOG=${OUT:-build/bench-gpu}
B=build/bench-gpu
mkdir -p "$LOG" "$B"
echo "| problem | grid | dof | kernel | default shape | default us | tuned shape (bx x by, sweep) | tuned us | default/tuned | shapes | search s |"
echo "|---|---|--:|---|---|--:|---|--:|--:|--:|--:|"
# name:dof:size:grid options
for c in "cavity:4:256:-da_grid_x 256 -da_grid_y 256" "cavity:4:1024:-da_grid_x 1024 -da_grid_y 1024" \
         "bratu2d:1:1024:-da_grid_x 1024 -da_grid_y 1024" "sfi3d:1:64:-da_grid_x 64 -da_grid_y 64 -da_grid_z 64" \
         "sfi3d:1:128:-da_grid_x 128 -da_grid_y 128 -da_grid_z 128" "brusselator3d:2:128:-da_grid_x 128 -da_grid_y 128 -da_grid_z 128"; do
  name=${c%%:*}
  rest=${c#*:}
  dof=${rest%%:*}
  rest=${rest#*:}
  size=${rest%%:*}
  grid=${rest#*:}
  [ -x "$B/$name" ] || PETSC_ARCH= bin/stencilc "examples/$name.stn" -o "$B/$name" || exit 1
  f="$LOG/shapes.$name.$size.log"
  rm -f "$LOG/shapes.$name.$size.cache"
  # shellcheck disable=SC2086
  "$B/$name" $grid -stn_device gpu -stn_autotune -stn_tune_cache "$LOG/shapes.$name.$size.cache" -snes_max_it 1 >"$f" 2>&1
  awk -v p="$name" -v g="$size" -v dof="$dof" '
    /^stencilc autotune: .*\/(residual|jacobian): [0-9]+ x [0-9]+, sweep/ {
      line = $0; sub(/^stencilc autotune: [^\/]*\//, "", line)
      split(line, a, ":"); kern = a[1]
      match(line, /: [0-9]+ x [0-9]+, sweep [0-9]+/); tuned = substr(line, RSTART + 2, RLENGTH - 2)
      match(line, /sweep [0-9]+: [0-9.]+ us/); t = substr(line, RSTART, RLENGTH); sub(/.*: /, "", t); sub(/ us/, "", t)
      match(line, /default [0-9]+ x [0-9]+, sweep 1: [0-9.]+ us/); d = substr(line, RSTART + 8, RLENGTH - 8)
      dshape = d; sub(/: .*/, "", dshape); dus = d; sub(/.*: /, "", dus); sub(/ us/, "", dus)
      match(line, /; [0-9]+ shapes in [0-9.]+ s/); s = substr(line, RSTART + 2, RLENGTH - 2); split(s, b, " ")
      printf "| %s | %s | %s | %s | %s | %s | %s | %s | %.2fx | %s | %s |\n", p, g, dof, kern, dshape, dus, tuned, t, dus / t, b[1], b[4]
    }' "$f"
done
