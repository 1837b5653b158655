#!/bin/sh
# scripts/gpu-check.sh: the GPU tests and benchmarks, on a machine with an
# NVIDIA GPU and a CUDA-enabled PETSc (scripts/petsc-cuda.sh builds one).
#
#   PETSC_DIR=/path/to/cuda-petsc scripts/gpu-check.sh [OUTDIR]
#
# For each of bratu2d, sfi3d and cavity it builds the program against that
# PETSc and checks, printing one line each:
#   - same answers: the GPU run (-stn_device gpu) and the CPU run give the
#     same Newton iteration count and solutions equal to 1e-10 relative;
#   - residency: -log_view's SNESSolve line shows no CPU-to-GPU or GPU-to-CPU
#     copies;
#   - clean kernels: compute-sanitizer memcheck, racecheck and initcheck on a
#     small grid report nothing (skipped when compute-sanitizer is absent);
#   - multigrid (-pc_type mg, SG-DIA levels on the device; also heat2d and
#     brusselator3d with their equations multiplied by the cell size): the
#     same Krylov counts as the CPU with the same hierarchy, as PETSc's PCMG
#     apply and as the stored matrices (to one per Newton step), no vector
#     copies, clean kernels.
#   - language: the constructs of the language beyond the examples above (a
#     mirrored boundary, an approximate Jacobian, floor/ceil/mod, typed
#     parameters, keyword-named and list parameters, lets shared with a
#     jacobian block, a guarded derivative, a hand-written Jacobian on
#     mirrored walls, coefficients read at neighbours, wrapped on a periodic
#     grid, coefficients read from files, on the device through the kernels'
#     AppCtx): each program's GPU run gives
#     the CPU run's Newton count and solution to 1e-10, the approximate
#     Jacobian, the mirror and the file coefficient (its values injected on
#     the coarser levels) also under the GPU's default multigrid (the
#     Newton count of the CPU with the same hierarchy).
#   - time: the time-dependent programs (heat_ts, grayscott) on the device against the CPU,
#     resident, sanitized (tests/gpu/ts-tests.sh says what it checks).
# Then the vector kernels of the Krylov solve: tests/gpu/vec-tests.sh (ours
# against PETSc's host vectors, every launch shape against the reference,
# sanitizers) and tests/gpu/petsc-vec-tests.sh (PETSc's own vector tests with
# -vec_type stncuda, plus a -vec_type cuda control; needs .petsc-cuda/vectests
# or PETSC_SRC).
# Logs go to OUTDIR (default $OUT, else build/gpu-check). Exit status 1 on any
# failure. stencilc itself must be built (bin/stencilc; `make` builds it).
set -u
OUTDIR=${1:-${OUT:-build/gpu-check}}
mkdir -p "$OUTDIR" build/gpu-check
: "${PETSC_DIR:?set PETSC_DIR to a CUDA-enabled PETSc}"
export PETSC_DIR
PETSC_ARCH=${PETSC_ARCH:-}
export PETSC_ARCH
STENCILC=${STENCILC:-bin/stencilc}
B=build/gpu-check
pass=0
fail=0
ok() { pass=$((pass + 1)); echo "gpu: $*: ok"; }
# SECTIONS (default all five): examples (same answers, residency, sanitizers with Jacobi),
# multigrid, language, time (TS programs), vectors (the Krylov vector kernels); only their
# programs are built. All five take more than the 10 minutes a lent machine gives one command:
# give SECTIONS="examples multigrid" and SECTIONS="language time vectors" to two calls.
want() { case " ${SECTIONS:-examples multigrid language time vectors} " in *" $1 "*) return 0 ;; esac; return 1; }
# The events of the Solve stage in a -log_view that moved vectors between host and device: in the
# event table the last five columns are CpuToGpu count and Mbytes, GpuToCpu count and Mbytes,
# GPU %. Scalars cross (dot products to the host, MAXPY coefficients to the device); a vector does
# not: any event whose copies average 1 KiB or more moved vectors.
vector_copies() {
  awk '/--- Event Stage [0-9]+: Solve/{t=1} /--- Event Stage [0-9]+: Main/{t=0} t && NF >= 20 && $2 ~ /^[0-9]+$/ {
      n = NF; c2g = $(n-4); s2g = $(n-3); g2c = $(n-2); s2c = $(n-1);
      if ((c2g > 0 && s2g * 1e6 / c2g >= 1024) || (g2c > 0 && s2c * 1e6 / g2c >= 1024))
        printf "%s(%d to GPU %.3g MB, %d to CPU %.3g MB) ", $1, c2g, s2g, g2c, s2c }' "$1"
}
bad() { fail=$((fail + 1)); echo "FAIL: gpu: $*"; }
# The Krylov iterations of each linear solve in a log, and whether two such lists have as many
# solves with counts within one of each other (1) or not (0).
krylov_counts() { awk '/Linear solve converged/ {printf "%s ", $NF}' "$1"; }
counts_close() {
  echo "$1|$2" | awk -F'|' '{n = split($1, a, " "); m = split($2, b, " "); if (n != m || n == 0) {print 0; exit}
                             for (i = 1; i <= n; i++) if (a[i] - b[i] > 1 || b[i] - a[i] > 1) {print 0; exit}; print 1}'
}

# vecdiff (tests/petsc/vecdiff.c) against this PETSc.
LIBDIR=$PETSC_DIR/${PETSC_ARCH:+$PETSC_ARCH/}lib
INCS="-I$PETSC_DIR/include ${PETSC_ARCH:+-I$PETSC_DIR/$PETSC_ARCH/include}"
# shellcheck disable=SC2086
cc -O2 $INCS tests/petsc/vecdiff.c -o $B/vecdiff -L"$LIBDIR" -Wl,-rpath,"$LIBDIR" -lpetsc -lm || { echo "FAIL: cannot build vecdiff"; exit 1; }
# The files of the coefficients read from files (tests/solve/coefficient_file_write.c): k of
# coefficient.stn on 33^2 and 129^2, k of coefficient_periodic.stn on its 32 x 17 grid.
# shellcheck disable=SC2086
if ! { cc -O2 $INCS tests/solve/coefficient_file_write.c -o $B/kwrite -L"$LIBDIR" -Wl,-rpath,"$LIBDIR" -lpetsc -lm &&
       $B/kwrite -o $B/k33.k && $B/kwrite -da_grid_x 129 -da_grid_y 129 -o $B/k129.k &&
       $B/kwrite -periodic -a 2 -da_grid_x 32 -da_grid_y 17 -o $B/kper.k; }; then
  echo "FAIL: cannot write the coefficient files"; exit 1
fi

# name:grid options:solver options
cases="bratu2d:-da_grid_x 129 -da_grid_y 129:-par 6
sfi3d:-da_grid_x 65 -da_grid_y 65 -da_grid_z 65:-par 6
cavity:-da_grid_x 129 -da_grid_y 129:-lidvelocity 10 -grashof 1000"
solver="-ksp_type gmres -ksp_gmres_restart 30 -pc_type jacobi -ksp_rtol 1e-10 -ksp_max_it 20000 -snes_rtol 1e-10 -snes_atol 1e-12"

# The programs build at the same time (a minute or two each, mostly nvcc on one core), and so
# do the vector tests (vec-tests.sh finds them built).
if want examples || want multigrid; then
  for name in $(echo "$cases" | cut -d: -f1); do
    ("$STENCILC" "examples/$name.stn" -o "$B/$name" --emit-dir "$B/$name-src" >"$OUTDIR/$name.build" 2>&1; echo "$?" >"$B/$name.build-rc") &
  done
fi
# The multigrid section also runs heat2d and brusselator3d, their interior equations multiplied
# by the cell size as multigrid's rediscretized grids need (codegen/ir/ir_scaling.c): as written,
# in plain difference quotients, they get Jacobi by default and multigrid stalls on them.
mgcases="heat2d_cell:-da_grid_x 64 -da_grid_y 65:
brusselator3d_cell:-da_grid_x 17 -da_grid_y 17 -da_grid_z 17:"
if want multigrid; then
  sed 's/^  interior: *\(.*\);$/  interior: hx * hy * (\1);/' examples/heat2d.stn >"$B/heat2d_cell.stn"
  sed 's/^  interior: *\(.*\);$/  interior: hx * hy * hz * (\1);/' examples/brusselator3d.stn >"$B/brusselator3d_cell.stn"
  for name in heat2d_cell brusselator3d_cell; do
    ("$STENCILC" "$B/$name.stn" -o "$B/$name" --emit-dir "$B/$name-src" >"$OUTDIR/$name.build" 2>&1; echo "$?" >"$B/$name.build-rc") &
  done
fi
# name:source:grid options
langcases="neumann2d:examples/neumann2d.stn:-da_grid_x 65 -da_grid_y 65
nldiffusion2d:examples/nldiffusion2d.stn:-da_grid_x 65 -da_grid_y 65
checkerboard:tests/solve/checkerboard.stn:
typed_params:tests/solve/typed_params.stn:
shared_lets:tests/solve/shared_lets.stn:
degenerate_gradient:tests/solve/degenerate_gradient.stn:
mirror_jacobian:tests/solve/mirror_jacobian.stn:
coefficient:tests/solve/coefficient.stn:
coefficient_periodic:tests/solve/coefficient_periodic.stn:
coefficient_file:tests/solve/coefficient_file.stn:-k_file $B/k33.k
coefficient_file_periodic:tests/solve/coefficient_file_periodic.stn:-k_file $B/kper.k
keyword_params:tests/solve/keyword_params.stn:-width 4 -initial 0.3
list_params:tests/solve/list_params.stn:-blocks 3,2 -w 2,0.5"
if want language; then
  for name in $(echo "$langcases" | cut -d: -f1); do
    src=$(echo "$langcases" | grep "^$name:" | cut -d: -f2)
    ("$STENCILC" "$src" -o "$B/$name" >"$OUTDIR/$name.build" 2>&1; echo "$?" >"$B/$name.build-rc") &
  done
fi
want vectors && { sh tests/gpu/vec-tests.sh --build-only "$OUTDIR/vec-tests" >"$OUTDIR/vec-tests.build" 2>&1 & }
wait

want examples && echo "$cases" | while IFS=: read -r name grid params; do
  if [ "$(cat "$B/$name.build-rc")" != 0 ]; then
    echo "FAIL: gpu: $name: stencilc -o failed"; cat "$OUTDIR/$name.build"; echo "x" >>"$B/failed"
    tail -30 "$B/$name-src/build.log" "$B/$name-src/"*.cu.log 2>/dev/null; continue
  fi
  for dev in cpu gpu; do
    # shellcheck disable=SC2086
    "$B/$name" $grid $params $solver -stn_device $dev -snes_monitor -ksp_converged_reason -snes_view_solution "binary:$B/$name.$dev.bin" \
      -log_view -log_view_gpu_time >"$OUTDIR/$name.$dev.log" 2>&1
    echo "$?" >"$B/$name.$dev.rc"
  done
  its_cpu=$(grep -c "SNES Function norm" "$OUTDIR/$name.cpu.log")
  its_gpu=$(grep -c "SNES Function norm" "$OUTDIR/$name.gpu.log")
  rel=$("$B/vecdiff" "$B/$name.gpu.bin" "$B/$name.cpu.bin" --rel 1e-10 2>&1 | tail -1)
  vrc=$?
  line="$name: cpu rc $(cat "$B/$name.cpu.rc"), gpu rc $(cat "$B/$name.gpu.rc"), Newton $((its_cpu - 1)) vs $((its_gpu - 1)), solution $rel"
  if [ "$(cat "$B/$name.gpu.rc")" = 0 ] && [ "$its_cpu" = "$its_gpu" ] && "$B/vecdiff" "$B/$name.gpu.bin" "$B/$name.cpu.bin" --rel 1e-10 >/dev/null 2>&1; then
    echo "gpu: same answers: $line: ok"
  else
    echo "FAIL: gpu: same answers: $line"; echo "x" >>"$B/failed"; tail -20 "$OUTDIR/$name.gpu.log"
  fi
  : "$vrc"
  # The same with KSPSTNGMRES, the GPU's default Krylov method (fused step, look-ahead, Jacobi
  # in the SG-DIA product): against the CPU run, and its linear iterations against PETSc's
  # GMRES on the GPU (equal in exact arithmetic; the sums run in other orders).
  # shellcheck disable=SC2086
  "$B/$name" $grid $params $(echo "$solver" | sed 's/-ksp_type gmres//') -stn_device gpu -snes_monitor -ksp_converged_reason \
    -snes_view_solution "binary:$B/$name.stngmres.bin" -ksp_view -info :ksp >"$OUTDIR/$name.stngmres.log" 2>&1
  src=$?
  # and it ran each linear solve as one cycle kernel restarting on the device (-info says so)
  launches=$(grep -c "The cycle kernel runs up to .* (restarts on the device)" "$OUTDIR/$name.stngmres.log")
  refused=$(grep -c "did not restart\|Restarts on the host" "$OUTDIR/$name.stngmres.log")
  if [ "$launches" -eq $((its_cpu - 1)) ] && [ "$refused" -eq 0 ]; then
    echo "gpu: stngmres: $name: one cycle kernel per linear solve ($launches), restarting on the device: ok"
  else
    echo "FAIL: gpu: stngmres: $name: $launches cycle kernels restarting on the device for $((its_cpu - 1)) linear solves, $refused restarts on the host"; echo "x" >>"$B/failed"
  fi
  its_st=$(grep -c "SNES Function norm" "$OUTDIR/$name.stngmres.log")
  kits_st=$(awk '/Linear solve converged/ {s += $NF} END {print s + 0}' "$OUTDIR/$name.stngmres.log")
  kits_gm=$(awk '/Linear solve converged/ {s += $NF} END {print s + 0}' "$OUTDIR/$name.gpu.log")
  rel=$("$B/vecdiff" "$B/$name.stngmres.bin" "$B/$name.cpu.bin" --rel 1e-10 2>&1 | tail -1)
  line="$name: stngmres rc $src, Newton $((its_cpu - 1)) (cpu) vs $((its_st - 1)), solution $rel; linear iterations $kits_st (PETSc's GMRES on the GPU: $kits_gm)"
  if [ $src = 0 ] && grep -q "type: stngmres" "$OUTDIR/$name.stngmres.log" && [ "$its_cpu" = "$its_st" ] &&
     "$B/vecdiff" "$B/$name.stngmres.bin" "$B/$name.cpu.bin" --rel 1e-10 >/dev/null 2>&1; then
    echo "gpu: same answers with stngmres: $line: ok"
  else
    echo "FAIL: gpu: same answers with stngmres: $line"; echo "x" >>"$B/failed"; tail -20 "$OUTDIR/$name.stngmres.log"
  fi
  # Monitors that build the solution in the middle of a cycle (KSPBuildSolution): the true
  # residual norms of stngmres's first 40 iterations against PETSc's GMRES's on the GPU.
  small="-da_grid_x 17 -da_grid_y 17"
  [ "$name" = sfi3d ] && small="-da_grid_x 9 -da_grid_y 9 -da_grid_z 9"
  for ksp in stngmres gmres; do
    # shellcheck disable=SC2086
    "$B/$name" $small $params -stn_device gpu -ksp_type $ksp -pc_type jacobi -snes_max_it 1 -ksp_max_it 40 -ksp_monitor_true_residual \
      >"$OUTDIR/$name.true-$ksp.log" 2>&1
    awk '/true resid norm/ {for (i = 1; i <= NF; i++) if ($i == "true") print $(i + 3)}' "$OUTDIR/$name.true-$ksp.log" >"$B/$name.true-$ksp"
  done
  worst=$(paste "$B/$name.true-stngmres" "$B/$name.true-gmres" | awk '{d = $1 - $2; d = d < 0 ? -d : d; r = d / ($2 > 0 ? $2 : 1); if (r > w) w = r} END {printf "%.1e", w + 0}')
  nst=$(wc -l <"$B/$name.true-stngmres")
  ngm=$(wc -l <"$B/$name.true-gmres")
  if [ "$nst" -gt 1 ] && [ "$nst" = "$ngm" ] && awk -v w="$worst" 'BEGIN {exit !(w <= 1e-6)}'; then
    echo "gpu: stngmres -ksp_monitor_true_residual: $name: $nst norms, largest relative difference to PETSc's GMRES $worst: ok"
  else
    echo "FAIL: gpu: stngmres -ksp_monitor_true_residual: $name: $nst against $ngm norms, largest relative difference $worst"; echo "x" >>"$B/failed"
  fi
  # Residency, in the Solve stage of a run without output options (-snes_view_solution
  # copies the solution to the host for writing, on purpose).
  # shellcheck disable=SC2086
  "$B/$name" $grid $params $solver -stn_device gpu -log_view -log_view_gpu_time >"$OUTDIR/$name.gpu-stage.log" 2>&1
  moved=$(vector_copies "$OUTDIR/$name.gpu-stage.log")
  scal=$(awk '/^SNESSolve /{n = NF; printf "%d scalars to GPU, %d to CPU", $(n-4), $(n-2); exit}' "$OUTDIR/$name.gpu-stage.log")
  if [ -z "$moved" ] && [ -n "$scal" ]; then echo "gpu: residency: $name: no vector copies in the solve ($scal): ok"
  else echo "FAIL: gpu: residency: $name: vectors copied: $moved"; echo "x" >>"$B/failed"; fi
  grep -E "^(SNESSolve|SNESFunctionEval|SNESJacobianEval|KSPSolve|MatMult|VecMDot|VecNorm|VecMAXPY|PCApply) " "$OUTDIR/$name.gpu.log" >"$OUTDIR/$name.gpu.events"
  # Clean kernels.
  if command -v compute-sanitizer >/dev/null 2>&1; then
    small="-da_grid_x 9 -da_grid_y 9"
    [ "$name" = sfi3d ] && small="-da_grid_x 5 -da_grid_y 5 -da_grid_z 5"
    for tool in memcheck racecheck initcheck; do
      # shellcheck disable=SC2086
      compute-sanitizer --tool $tool --error-exitcode 99 "$B/$name" $small $params -stn_device gpu -stn_memory_chunks 0 -pc_type jacobi \
        >"$OUTDIR/$name.$tool.log" 2>&1
      src=$?
      if [ $src -eq 0 ]; then echo "gpu: compute-sanitizer $tool: $name: ok"
      else echo "FAIL: gpu: compute-sanitizer $tool: $name (exit $src)"; tail -15 "$OUTDIR/$name.$tool.log"; echo "x" >>"$B/failed"; fi
    done
  else
    echo "note: compute-sanitizer not found; kernels not sanitized"
  fi
done

# Multigrid on the device (-pc_type mg, every level SG-DIA, stnmg.h): per Newton step the Krylov
# counts of the CPU with the same hierarchy (-stn_levels_mat_type sgdia), of PETSc's PCMG apply
# (-stn_mg_fused false) and of the stored fine matrix (-stn_operator matrix) to one, the
# solutions to 1e-8, the fused V-cycle run, no vector copies in the solve, and clean kernels (the
# transfers, the fused steps, the product without the matrix, the coarse inverse, the level
# Jacobians).
mgsolver="-pc_type mg -ksp_rtol 1e-8 -snes_rtol 1e-10 -snes_atol 1e-12 -ksp_converged_reason"
want multigrid && printf '%s\n%s\n' "$cases" "$mgcases" | while IFS=: read -r name grid params; do
  if [ "$(cat "$B/$name.build-rc")" != 0 ]; then
    case $name in *_cell) echo "FAIL: gpu: $name: stencilc -o failed"; cat "$OUTDIR/$name.build"; echo "x" >>"$B/failed" ;; esac
    continue
  fi
  [ "$name" = sfi3d ] && grid="-da_grid_x 33 -da_grid_y 33 -da_grid_z 33"
  for dev in gpu cpu; do
    # shellcheck disable=SC2086
    "$B/$name" $grid $params $mgsolver -stn_device $dev -stn_levels_mat_type sgdia \
      -snes_view_solution "binary:$B/$name.mg.$dev.bin" >"$OUTDIR/$name.mg.$dev.log" 2>&1
    echo $? >"$B/$name.mg.$dev.rc"
  done
  # the fused V-cycle (the GPU's default) against PETSc's PCMG apply on the same device levels
  # shellcheck disable=SC2086
  "$B/$name" $grid $params $mgsolver -stn_device gpu -stn_mg_fused false >"$OUTDIR/$name.mg.pcmg.log" 2>&1
  p=$(krylov_counts "$OUTDIR/$name.mg.pcmg.log")
  f=$(krylov_counts "$OUTDIR/$name.mg.gpu.log")
  same=$(counts_close "$f" "$p")
  if [ "$same" = 1 ]; then echo "gpu: multigrid: $name: fused V-cycle Krylov [ $f], PCMG's apply [ $p]: ok"
  else echo "FAIL: gpu: multigrid: $name: fused V-cycle Krylov [ $f] against PCMG's apply [ $p]"; echo "x" >>"$B/failed"; fi
  g=$(krylov_counts "$OUTDIR/$name.mg.gpu.log")
  c=$(krylov_counts "$OUTDIR/$name.mg.cpu.log")
  close=$(counts_close "$g" "$c")
  diff=$("$B/vecdiff" "$B/$name.mg.gpu.bin" "$B/$name.mg.cpu.bin" --rel 1e-8 2>&1)
  if [ "$(cat "$B/$name.mg.gpu.rc")" = 0 ] && [ "$(cat "$B/$name.mg.cpu.rc")" = 0 ] && [ "$close" = 1 ] &&
     "$B/vecdiff" "$B/$name.mg.gpu.bin" "$B/$name.mg.cpu.bin" --rel 1e-8 >/dev/null 2>&1; then
    echo "gpu: multigrid: $name $grid: Krylov [ $g] on the GPU, [ $c] on the CPU, solutions $diff: ok"
  else
    echo "FAIL: gpu: multigrid: $name $grid: Krylov [ $g] on the GPU against [ $c] on the CPU, solutions $diff"; echo "x" >>"$B/failed"
  fi
  # every level's products without the matrix (-stn_operator matfree, stnmatfree.h) against the
  # stored SG-DIA matrices: the same counts to one, the solutions to 1e-8
  for op in matfree matrix; do
    # shellcheck disable=SC2086
    "$B/$name" $grid $params $mgsolver -stn_device gpu -stn_operator $op \
      -snes_view_solution "binary:$B/$name.mg.$op.bin" >"$OUTDIR/$name.mg.$op.log" 2>&1
    echo $? >"$B/$name.mg.$op.rc"
  done
  f=$(krylov_counts "$OUTDIR/$name.mg.matfree.log")
  m=$(krylov_counts "$OUTDIR/$name.mg.matrix.log")
  close=$(counts_close "$f" "$m")
  diff=$("$B/vecdiff" "$B/$name.mg.matfree.bin" "$B/$name.mg.matrix.bin" --rel 1e-8 2>&1)
  if [ "$(cat "$B/$name.mg.matfree.rc")" = 0 ] && [ "$(cat "$B/$name.mg.matrix.rc")" = 0 ] && [ "$close" = 1 ] &&
     "$B/vecdiff" "$B/$name.mg.matfree.bin" "$B/$name.mg.matrix.bin" --rel 1e-8 >/dev/null 2>&1; then
    echo "gpu: multigrid: $name: Krylov [ $f] without the matrices, [ $m] with them, solutions $diff: ok"
  else
    echo "FAIL: gpu: multigrid: $name: Krylov [ $f] without the matrices against [ $m] with them, solutions $diff"; echo "x" >>"$B/failed"
  fi
  # shellcheck disable=SC2086
  "$B/$name" $grid $params $mgsolver -stn_device gpu -log_view -log_view_gpu_time >"$OUTDIR/$name.mg.gpu-stage.log" 2>&1
  moved=$(vector_copies "$OUTDIR/$name.mg.gpu-stage.log")
  grep -q "^StnMGCycle " "$OUTDIR/$name.mg.gpu-stage.log" || moved="$moved (no fused V-cycle ran: StnMGCycle missing)"
  if [ -z "$moved" ] && grep -q "^SNESSolve " "$OUTDIR/$name.mg.gpu-stage.log"; then echo "gpu: multigrid residency: $name: no vector copies in the solve: ok"
  else echo "FAIL: gpu: multigrid residency: $name: $moved"; echo "x" >>"$B/failed"; fi
  if command -v compute-sanitizer >/dev/null 2>&1; then
    small="-da_grid_x 17 -da_grid_y 17" tools="memcheck racecheck initcheck"  # the cavity: every kernel, 4 unknowns
    [ "$name" = sfi3d ] && small="-da_grid_x 9 -da_grid_y 9 -da_grid_z 9" tools=memcheck  # the 3D transfers
    case $name in bratu2d | *_cell) tools= ;; esac
    for tool in $tools; do
      seq=  # memcheck on the cavity also refines twice (new levels for the fused cycle, the same count
            # of them) with every level's products without the matrix
      [ "$name" = cavity ] && [ "$tool" = memcheck ] && seq="-snes_grid_sequence 2 -stn_operator matfree"
      # shellcheck disable=SC2086
      compute-sanitizer --tool $tool --error-exitcode 99 "$B/$name" $small $params -stn_device gpu -stn_memory_chunks 0 -pc_type mg $seq >"$OUTDIR/$name.mg.$tool.log" 2>&1
      src=$?
      if [ $src -eq 0 ]; then echo "gpu: compute-sanitizer $tool: $name -pc_type mg $seq: ok"
      else echo "FAIL: gpu: compute-sanitizer $tool: $name -pc_type mg $seq (exit $src)"; tail -15 "$OUTDIR/$name.mg.$tool.log"; echo "x" >>"$B/failed"; fi
    done
  fi
done

# The language's constructs: the GPU run against the CPU run, the same solver (Jacobi, so that
# the two preconditioners are the same), then the GPU's default (multigrid where it applies).
want language && echo "$langcases" | while IFS=: read -r name src grid; do
  if [ "$(cat "$B/$name.build-rc")" != 0 ]; then
    echo "FAIL: gpu: language: $name: stencilc -o failed"; tail -20 "$OUTDIR/$name.build"; echo "x" >>"$B/failed"; continue
  fi
  for dev in cpu gpu; do
    # shellcheck disable=SC2086
    "$B/$name" $grid $solver -stn_device $dev -snes_monitor -snes_view_solution "binary:$B/$name.$dev.bin" >"$OUTDIR/$name.$dev.log" 2>&1
    echo "$?" >"$B/$name.$dev.rc"
  done
  its_cpu=$(grep -c "SNES Function norm" "$OUTDIR/$name.cpu.log")
  its_gpu=$(grep -c "SNES Function norm" "$OUTDIR/$name.gpu.log")
  rel=$("$B/vecdiff" "$B/$name.gpu.bin" "$B/$name.cpu.bin" --rel 1e-10 2>&1 | tail -1)
  line="$name ($src): cpu rc $(cat "$B/$name.cpu.rc"), gpu rc $(cat "$B/$name.gpu.rc"), Newton $((its_cpu - 1)) vs $((its_gpu - 1)), solution $rel"
  if [ "$(cat "$B/$name.cpu.rc")" = 0 ] && [ "$(cat "$B/$name.gpu.rc")" = 0 ] && [ "$its_cpu" = "$its_gpu" ] &&
     "$B/vecdiff" "$B/$name.gpu.bin" "$B/$name.cpu.bin" --rel 1e-10 >/dev/null 2>&1; then
    echo "gpu: language: same answers: $line: ok"
  else
    echo "FAIL: gpu: language: same answers: $line"; echo "x" >>"$B/failed"; tail -20 "$OUTDIR/$name.gpu.log"
  fi
  # The GPU's default (multigrid) against the CPU with the same hierarchy: the same Newton count
  # and solution to 1e-10. (Not against another preconditioner: with zero flux the constant
  # mode's eigenvalue is sigma h^2, the Jacobian's condition about 5e6 at 129^2, and two runs to
  # a residual 1e-10 of the first differ by 1e-5, as the GPU's multigrid and the CPU's Jacobi did.)
  case $name in neumann2d | nldiffusion2d | coefficient_file) ;; *) continue ;; esac
  file=""
  [ "$name" = coefficient_file ] && file="-k_file $B/k129.k"
  # shellcheck disable=SC2086
  "$B/$name" -da_grid_x 129 -da_grid_y 129 $file -snes_rtol 1e-10 -stn_device gpu -snes_monitor -ksp_view -snes_view_solution "binary:$B/$name.mg.bin" >"$OUTDIR/$name.mg.log" 2>&1
  mrc=$?
  # shellcheck disable=SC2086
  "$B/$name" -da_grid_x 129 -da_grid_y 129 $file -snes_rtol 1e-10 -pc_type mg -stn_levels_mat_type sgdia -stn_device cpu -snes_monitor -snes_view_solution "binary:$B/$name.mgref.bin" >"$OUTDIR/$name.mgref.log" 2>&1
  crc=$?
  its_gpu=$(($(grep -c "SNES Function norm" "$OUTDIR/$name.mg.log") - 1))
  its_cpu=$(($(grep -c "SNES Function norm" "$OUTDIR/$name.mgref.log") - 1))
  rel=$("$B/vecdiff" "$B/$name.mg.bin" "$B/$name.mgref.bin" --rel 1e-10 2>&1 | tail -1)
  if [ $mrc = 0 ] && [ $crc = 0 ] && grep -q "type: mg" "$OUTDIR/$name.mg.log" && [ "$its_gpu" = "$its_cpu" ] &&
     "$B/vecdiff" "$B/$name.mg.bin" "$B/$name.mgref.bin" --rel 1e-10 >/dev/null 2>&1; then
    echo "gpu: language: $name 129^2 with the GPU's default multigrid: $its_gpu Newton iterations as the CPU's with the same hierarchy, solutions $rel: ok"
  else
    echo "FAIL: gpu: language: $name with the GPU's default (exit $mrc, CPU $crc): multigrid? $(grep -c "type: mg" "$OUTDIR/$name.mg.log"), Newton $its_gpu against $its_cpu, solutions $rel"; echo "x" >>"$B/failed"; tail -10 "$OUTDIR/$name.mg.log"
  fi
done

# Time-dependent programs (PETSc TS): their IFunction and IJacobian kernels.
want time && { sh tests/gpu/ts-tests.sh "$OUTDIR/ts-tests" || echo "x" >>"$B/failed"; }

# The Krylov vector kernels: ours against PETSc's host vectors, and PETSc's own vector tests
# with our vector type (each prints its own lines; tests/gpu/*.sh say what they check).
want vectors && for t in vec-tests petsc-vec-tests; do
  sh "tests/gpu/$t.sh" "$OUTDIR/$t" || echo "x" >>"$B/failed"
done

nfail=0
[ -f "$B/failed" ] && nfail=$(wc -l <"$B/failed") && rm -f "$B/failed"
echo "gpu-check: $nfail failed"
[ "$nfail" -eq 0 ]
