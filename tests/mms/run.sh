#!/bin/sh
# tests/mms/run.sh: order-of-accuracy tests with manufactured solutions.
#
# Each problem tests/mms/NAME.stn has a smooth exact solution (its `def`s,
# mirrored in tests/mms/errnorm.c) and second-order finite differences. For
# each problem the script compiles it with stencilc, solves it on a sequence of
# grids (h halved each time) to tight tolerances, and lets tests/mms/errnorm
# read each solution (-snes_view_solution binary:FILE), compute the max-norm
# and discrete L2-norm errors at the grid points, and fit the order p of
# error = C h^p by least squares. It asserts |p - 2| <= 0.1 for both norms
# (and for each field alone when there are several) and prints
#
#   mms: NAME: fitted order 2.00 (max-norm): ok
#
# The problems:
#   cubic2d    -Laplacian(u) + u^3 = f, 2D, Dirichlet, hx != hy, y in [-0.5, 1]
#   nldiff3d   -div((1 + u^2) grad u) = f, 3D, Dirichlet, conservation form
#   advsys2d   two fields coupled by advection (central differences in x) and
#              v^3, periodic in x on [-0.5, 0.5), Dirichlet in y
#   advper3d   -Laplacian(u) + u_z + u^3 = f, 3D, periodic in y and z (z in
#              [-1, 1)), Dirichlet in x
#   mixed2d    -u_xx - u_yy - u_xy + u = f on the 9-point (box) stencil,
#              periodic in y, Dirichlet in x, x in [0, 2]
#   neumann3d  -div((1 + u^2) grad u) + u = f, 3D, zero flux by mirrors on
#              five faces (their edges and corners too), Dirichlet on front
#
# Usage, from anywhere:  tests/mms/run.sh [NAME...]   (default: all problems)
# Exit status: 0 all orders are right, 1 a problem failed (compile, solve or
# order), 2 bad usage or a missing compiler.
#
# Environment:
#   STENCILC     the compiler (default bin/stencilc; build it with `make`)
#   CC           C compiler for errnorm (default cc)
#   MPIEXEC      launcher for the solvers, e.g. "mpiexec -n 2" (default: none).
#                The solution files are in natural ordering whatever the layout.
#   MMS_OPTS     extra options for every solve (e.g. "-stn_mat_type aij")
#   RUN_TIMEOUT  seconds allowed per solve (default 120)
# Outputs (programs, solutions, logs) go to build/mms/.
set -u
cd "$(dirname "$0")/../.." || exit 2

STENCILC=${STENCILC:-bin/stencilc}
CC=${CC:-cc}
MPIEXEC=${MPIEXEC:-}
MMS_OPTS=${MMS_OPTS:-}
RUN_TIMEOUT=${RUN_TIMEOUT:-120}
out=build/mms
start=$(date +%s)

# Newton to 1e-12 relative, each linear solve to 1e-12 relative, so that the
# algebraic error is far below the discretisation error on every grid.
TIGHT="-snes_rtol 1e-12 -snes_max_it 50 -ksp_rtol 1e-12 -ksp_max_it 1000"

all="cubic2d nldiff3d advsys2d advper3d mixed2d neumann3d"
problems=${*:-$all}

if [ ! -x "$STENCILC" ]; then
  echo "mms: error: $STENCILC is missing: run make first" >&2
  exit 2
fi
mkdir -p "$out/tmp" || exit 2
if ! $CC -std=c99 -O2 -Wall -Wextra -o "$out/errnorm" tests/mms/errnorm.c -lm; then
  echo "mms: error: cannot build tests/mms/errnorm.c" >&2
  exit 2
fi

# problem NAME -> sets exact, domain, grids, solver for that problem.
problem() {
  case $1 in
  cubic2d)
    exact=cubic2d
    domain="0:1,-0.5:1"
    grids="9x9 17x17 33x33 65x65"
    solver="-pc_type gamg"
    ;;
  nldiff3d)
    exact=nldiff3d
    domain="0:1,0:1,0:0.5"
    grids="9x9x9 17x17x17 33x33x33"  # 5 points (3 inside) is pre-asymptotic
    solver="-pc_type gamg"
    ;;
  advsys2d)
    exact=advsys2d
    domain="-0.5:0.5:periodic,0:1"
    grids="8x9 16x17 32x33 64x65"     # hx = 1/N (periodic), hy = 1/(N-1)
    solver="-pc_type bjacobi -sub_pc_type ilu -ksp_type gmres -ksp_gmres_restart 200"
    ;;
  advper3d)
    exact=advper3d
    domain="0:1,0:1:periodic,-1:1:periodic"
    grids="9x8x8 17x16x16 33x32x32"
    solver="-pc_type gamg -ksp_type gmres"
    ;;
  neumann3d)
    exact=neumann3d
    domain="0:1,0:1,0:0.5"
    grids="17x17x17 33x33x33 65x65x65"
    solver="-pc_type gamg"
    ;;
  mixed2d)
    exact=mixed2d
    domain="0:2,0:1:periodic"
    grids="9x8 17x16 33x32 65x64"
    solver="-pc_type gamg -ksp_type gmres"
    ;;
  *)
    return 1
    ;;
  esac
}

failed=""
for name in $problems; do
  if ! problem "$name"; then
    echo "mms: error: no problem named '$name' (problems: $all)" >&2
    exit 2
  fi
  prog=$out/$name
  rm -rf "$prog" "$out"/tmp/stencilc-*
  # stencilc's work directory goes under build/mms/tmp, away from /tmp,
  # where a failed build's directory is kept for reading.
  if ! TMPDIR=$PWD/$out/tmp "$STENCILC" "tests/mms/$name.stn" -o "$prog" >"$out/$name.compile.log" 2>&1; then
    cat "$out/$name.compile.log"
    for kept in "$out"/tmp/stencilc-*/build.log; do
      [ -f "$kept" ] && { echo "--- $kept:"; tail -n 40 "$kept"; }
    done
    echo "mms: $name: FAIL: stencilc cannot compile tests/mms/$name.stn"
    failed="$failed $name"
    continue
  fi
  runs=""
  ok=1
  for grid in $grids; do
    # 9x9x9 -> -da_grid_x 9 -da_grid_y 9 -da_grid_z 9
    sizes=$(echo "$grid" | awk -F x '{ s = "-da_grid_x " $1 " -da_grid_y " $2; if (NF > 2) s = s " -da_grid_z " $3; print s }')
    bin=$out/$name-$grid.bin
    log=$out/$name-$grid.log
    rm -f "$bin" "$bin.info"
    # shellcheck disable=SC2086
    timeout "$RUN_TIMEOUT" $MPIEXEC "$prog" $sizes $TIGHT $solver $MMS_OPTS -snes_view_solution "binary:$bin" >"$log" 2>&1
    rc=$?
    printf '  %-10s %s\n' "$grid" "$(grep -m1 "^$name: " "$log" || echo "no report")"
    if [ $rc -ne 0 ] || [ ! -s "$bin" ]; then
      cat "$log"
      echo "mms: $name: FAIL: the solve on $grid failed (exit status $rc)"
      ok=0
      break
    fi
    runs="$runs $grid:$bin"
  done
  if [ $ok = 1 ]; then
    # shellcheck disable=SC2086
    "$out/errnorm" "$name" "$exact" "$domain" $runs || ok=0
  fi
  [ $ok = 1 ] || failed="$failed $name"
done

elapsed=$(($(date +%s) - start))
if [ -n "$failed" ]; then
  echo "mms: FAIL:$failed (${elapsed}s)"
  exit 1
fi
echo "mms: all ok: $problems (${elapsed}s)"
exit 0
