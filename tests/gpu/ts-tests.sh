#!/bin/sh
# tests/gpu/ts-tests.sh: time-dependent programs (PETSc TS) on the GPU, on a machine with an
# NVIDIA GPU and a CUDA-enabled PETSc; scripts/gpu-check.sh runs it (section time).
#
#   PETSC_DIR=/path/to/cuda-petsc sh tests/gpu/ts-tests.sh [OUTDIR]
#   CC=mpicc ... with a PETSc built with MPI (scripts/petsc-cuda.sh --mpi)
#
# For examples/heat_ts.stn (PETSc's TS ex13: backward Euler), examples/grayscott.stn (TS ex5:
# two fields, periodic, ARKIMEX) and tests/solve/ts_nonlinear.stn (t in the equations, a
# mass 1 + u^2 and a coupling u dt(u), so that the IJacobian reads the time derivative;
# boundary rows without one, which ARKIMEX zeroes in its start-up Jacobian), examples/allen_cahn.stn
# (IMEX: its explicit(...) term TS's RHSFunction, a kernel of its own) and
# tests/solve/ts_explicit_mms.stn (u_t = G alone, under the explicit method rk), one line per check:
#   - same answers: the GPU run and the CPU run with the same solver (GMRES and Jacobi, tight
#     tolerances) take the same Newton iterations in every stage solve of every step and end at
#     the same state to 1e-10 relative;
#   - the GPU's defaults (stngmres and Jacobi, relative tolerance 1e-5 per linear solve): the run
#     integrates to its end with stngmres, its final state within 1e-4 of the strict run's;
#   - residency: in -log_view's Solve stage (the time stepping, backward Euler) no event copied a
#     vector between host and device (under ARKIMEX the copies are listed in a note);
#   - clean kernels: compute-sanitizer memcheck, racecheck and initcheck on a small grid (skipped
#     when compute-sanitizer is absent), in fixed steps: under adaptive ones initcheck flags
#     PETSc's own VecErrorWeightedNorms on CUDA vectors (TSAdapt's error norm copies a 40-byte
#     device buffer to the host of which it has not written every byte);
#   - -stn_mat_type aij (the IJacobian assembled on the host into cuSPARSE's matrix): the same
#     answers as the CPU;
#   - -pc_type mg on heat_ts (SG-DIA levels, the coarse IJacobians scaled to the Galerkin
#     operator's size): at most 25 Krylov iterations a linear solve where Jacobi takes about
#     200 and multigrid on the unscaled coarse grids about 45, the final state to 1e-8;
#   - -stn_operator matfree is refused in a sentence (TS's shifted Jacobian has no product
#     without the matrix).
# Logs go to OUTDIR (default $OUT/ts-tests, else build/ts-tests). Exit status 1 on any failure.
set -u
OUTDIR=${1:-${OUT:+$OUT/ts-tests}}
OUTDIR=${OUTDIR:-build/ts-tests}
B=build/ts-tests
mkdir -p "$OUTDIR" $B
rm -f "$B/failed"
: "${PETSC_DIR:?set PETSC_DIR to a CUDA-enabled PETSc}"
PETSC_ARCH=${PETSC_ARCH:-}
export PETSC_DIR PETSC_ARCH
STENCILC=${STENCILC:-bin/stencilc}
pass=0
fail=0
ok() { pass=$((pass + 1)); echo "gpu: time: $*: ok"; }
bad() { fail=$((fail + 1)); echo "FAIL: gpu: time: $*"; }
# solves LOG: the Newton iterations of each SNES solve, a step's stage solves joined by commas.
solves() {
  awk '$2 == "SNES" && $3 == "Function" { if ($1 == 0 && have) { s = s (s == "" ? "" : ",") n } n = $1; have = 1 }
       $2 == "TS" && $3 == "dt" { if (have) { s = s (s == "" ? "" : ",") n; have = 0 } if (s != "") { out = out sep s; sep = " " } s = "" }
       END { print out }' "$1"
}
# The Solve stage's events that moved vectors (copies of 1 KiB or more on average): the last five
# columns of -log_view's event table are CpuToGpu count and Mbytes, GpuToCpu count and Mbytes, GPU %.
vector_copies() {
  awk '/--- Event Stage [0-9]+: Solve/{t=1} /--- Event Stage [0-9]+: Main/{t=0} t && NF >= 20 && $2 ~ /^[0-9]+$/ {
      n = NF; c2g = $(n-4); s2g = $(n-3); g2c = $(n-2); s2c = $(n-1);
      if ((c2g > 0 && s2g * 1e6 / c2g >= 1024) || (g2c > 0 && s2c * 1e6 / g2c >= 1024))
        printf "%s(%d to GPU %.3g MB, %d to CPU %.3g MB) ", $1, c2g, s2g, g2c, s2c }' "$1"
}

LIBDIR=$PETSC_DIR/${PETSC_ARCH:+$PETSC_ARCH/}lib
INCS="-I$PETSC_DIR/include ${PETSC_ARCH:+-I$PETSC_DIR/$PETSC_ARCH/include}"
# shellcheck disable=SC2086
${CC:-cc} -O2 $INCS tests/petsc/vecdiff.c -o $B/vecdiff -L"$LIBDIR" -Wl,-rpath,"$LIBDIR" -lpetsc -lm || { echo "FAIL: gpu: time: cannot build vecdiff"; exit 1; }

# label:program:grid and steps:small grid for the sanitizers
cases="heat_ts:heat_ts:-da_grid_x 65 -da_grid_y 65 -ts_max_steps 20:-da_grid_x 9 -da_grid_y 9 -ts_max_steps 2
grayscott:grayscott:-da_grid_x 129 -da_grid_y 129 -ts_type arkimex -ts_dt 0.5 -ts_max_steps 10 -ts_max_time 2000:-da_grid_x 9 -da_grid_y 9 -ts_type arkimex -ts_dt 0.5 -ts_max_steps 2 -ts_adapt_type none
ts_nonlinear.beuler:ts_nonlinear:-da_grid_x 33 -da_grid_y 33 -ts_dt 0.05 -ts_max_steps 10:-da_grid_x 9 -da_grid_y 9 -ts_dt 0.05 -ts_max_steps 2
ts_nonlinear.arkimex:ts_nonlinear:-da_grid_x 33 -da_grid_y 33 -ts_type arkimex -ts_dt 0.05 -ts_max_steps 10:-da_grid_x 9 -da_grid_y 9 -ts_type arkimex -ts_dt 0.05 -ts_max_steps 2 -ts_adapt_type none
allen_cahn.imex:allen_cahn:-da_grid_x 128 -da_grid_y 128 -ts_type arkimex -ts_dt 0.05 -ts_max_steps 10:-da_grid_x 8 -da_grid_y 8 -ts_type arkimex -ts_dt 0.05 -ts_max_steps 2 -ts_adapt_type none
ts_explicit_mms.rk:ts_explicit_mms:-da_grid_x 41 -ts_type rk -ts_dt 2e-4 -ts_max_steps 100:-da_grid_x 11 -ts_type rk -ts_dt 1e-3 -ts_max_steps 5 -ts_adapt_type none"
strict="-ksp_type gmres -ksp_gmres_restart 30 -pc_type jacobi -ksp_max_it 20000 -ts_adapt_type none -ksp_rtol 1e-12 -snes_rtol 1e-12 -snes_atol 1e-13"
for src in examples/heat_ts.stn examples/grayscott.stn tests/solve/ts_nonlinear.stn examples/allen_cahn.stn tests/solve/ts_explicit_mms.stn; do
  name=$(basename "$src" .stn)
  ("$STENCILC" "$src" -o "$B/$name" --emit-dir "$B/$name-src" >"$OUTDIR/$name.build" 2>&1; echo "$?" >"$B/$name.build-rc") &
done
wait

echo "$cases" | while IFS=: read -r label prog grid small; do
  name=$label
  if [ "$(cat "$B/$prog.build-rc")" != 0 ]; then
    bad "$name: stencilc -o failed"; tail -30 "$OUTDIR/$prog.build" "$B/$prog-src/build.log" "$B/$prog-src/"*.cu.log 2>/dev/null; echo x >>"$B/failed"; continue
  fi
  # The same solver on both devices.
  for dev in cpu gpu; do
    # shellcheck disable=SC2086
    "$B/$prog" $grid $strict -stn_device $dev -ts_monitor -snes_monitor -ts_view_solution "binary:$B/$name.$dev.bin" >"$OUTDIR/$name.$dev.log" 2>&1
    echo "$?" >"$B/$name.$dev.rc"
  done
  sc=$(solves "$OUTDIR/$name.cpu.log") sg=$(solves "$OUTDIR/$name.gpu.log")
  rel=$("$B/vecdiff" "$B/$name.gpu.bin" "$B/$name.cpu.bin" --rel 1e-10 2>&1 | tail -1)
  line="$name: cpu rc $(cat "$B/$name.cpu.rc"), gpu rc $(cat "$B/$name.gpu.rc"), Newton per solve [$sg] (cpu [$sc]), final state $rel"
  newton=$sc
  case $name in *.rk) newton=none ;; esac # an explicit method solves nothing
  if [ "$(cat "$B/$name.gpu.rc")" = 0 ] && [ "$(cat "$B/$name.cpu.rc")" = 0 ] && [ -n "$newton" ] && [ "$sc" = "$sg" ] &&
     "$B/vecdiff" "$B/$name.gpu.bin" "$B/$name.cpu.bin" --rel 1e-10 >/dev/null 2>&1; then ok "same answers: $line"
  else bad "same answers: $line"; echo x >>"$B/failed"; tail -20 "$OUTDIR/$name.gpu.log"; fi
  # The GPU's defaults (an explicit method has no linear solves).
  case $name in *.rk) ;; *)
    # shellcheck disable=SC2086
    "$B/$prog" $grid -ts_adapt_type none -stn_device gpu -ts_monitor -snes_monitor -ksp_view -ts_view_solution "binary:$B/$name.default.bin" \
      >"$OUTDIR/$name.gpu.default.log" 2>&1
    drc=$?
    rel=$("$B/vecdiff" "$B/$name.default.bin" "$B/$name.cpu.bin" --rel 1e-4 2>&1 | tail -1)
    line="$name: exit $drc, Newton per solve [$(solves "$OUTDIR/$name.gpu.default.log")], final state against the strict CPU run's $rel"
    if [ $drc = 0 ] && grep -q ": integrated to t = " "$OUTDIR/$name.gpu.default.log" && grep -q "type: stngmres" "$OUTDIR/$name.gpu.default.log" && grep -q "type: jacobi" "$OUTDIR/$name.gpu.default.log" &&
       "$B/vecdiff" "$B/$name.default.bin" "$B/$name.cpu.bin" --rel 1e-4 >/dev/null 2>&1; then ok "the GPU's defaults (stngmres, Jacobi): $line"
    else bad "the GPU's defaults: $line"; echo x >>"$B/failed"; tail -20 "$OUTDIR/$name.gpu.default.log"; fi
  ;; esac
  # Residency in the time stepping, without output options, under backward Euler: PETSc's ARKIMEX
  # itself reads one vector on the host when it starts (it looks for equations without a time
  # derivative, TSARKIMEXComputeAlgebraicIS), which the note after shows.
  implicit="-ts_type beuler"
  case $name in *.rk) implicit= ;; esac # u_t = G alone: the explicit method itself
  # shellcheck disable=SC2086
  "$B/$prog" $grid $implicit -ts_adapt_type none -stn_device gpu -log_view >"$OUTDIR/$name.gpu-stage.log" 2>&1
  rrc=$?
  moved=$(vector_copies "$OUTDIR/$name.gpu-stage.log")
  if [ $rrc = 0 ] && [ -z "$moved" ] && grep -q "Event Stage 1: Solve" "$OUTDIR/$name.gpu-stage.log"; then ok "residency: $name: no vector copies in the time stepping"
  else bad "residency: $name (exit $rrc): vectors copied: $moved"; echo x >>"$B/failed"; fi
  # shellcheck disable=SC2086
  "$B/$prog" $grid -ts_type arkimex -ts_adapt_type none -stn_device gpu -log_view >"$OUTDIR/$name.gpu-stage-arkimex.log" 2>&1
  echo "note: gpu: time: $name under ARKIMEX (exit $?): vector copies in the time stepping: $(vector_copies "$OUTDIR/$name.gpu-stage-arkimex.log")"
  # Clean kernels.
  if command -v compute-sanitizer >/dev/null 2>&1; then
    for tool in memcheck racecheck initcheck; do
      # shellcheck disable=SC2086
      compute-sanitizer --tool $tool --error-exitcode 99 "$B/$prog" $small -stn_device gpu -stn_memory_chunks 0 >"$OUTDIR/$name.$tool.log" 2>&1
      src=$?
      if [ $src -eq 0 ]; then ok "compute-sanitizer $tool: $name"
      else bad "compute-sanitizer $tool: $name (exit $src)"; tail -15 "$OUTDIR/$name.$tool.log"; echo x >>"$B/failed"; fi
    done
  else
    echo "note: compute-sanitizer not found; the TS kernels not sanitized"
  fi
done

# The IJacobian on the host into cuSPARSE's matrix (-stn_mat_type aij), against the CPU.
# shellcheck disable=SC2086
"$B/heat_ts" -da_grid_x 65 -da_grid_y 65 -ts_max_steps 20 $strict -stn_device gpu -stn_mat_type aij -ts_monitor -snes_monitor \
  -ts_view_solution "binary:$B/heat_ts.aij.bin" >"$OUTDIR/heat_ts.aij.log" 2>&1
rc=$?
rel=$("$B/vecdiff" "$B/heat_ts.aij.bin" "$B/heat_ts.cpu.bin" --rel 1e-10 2>&1 | tail -1)
if [ $rc = 0 ] && [ "$(solves "$OUTDIR/heat_ts.aij.log")" = "$(solves "$OUTDIR/heat_ts.cpu.log")" ] &&
   "$B/vecdiff" "$B/heat_ts.aij.bin" "$B/heat_ts.cpu.bin" --rel 1e-10 >/dev/null 2>&1; then ok "heat_ts -stn_mat_type aij on the GPU: the CPU's Newton iterations, final state $rel"
else bad "heat_ts -stn_mat_type aij on the GPU: exit $rc, final state $rel"; echo x >>"$B/failed"; tail -5 "$OUTDIR/heat_ts.aij.log"; fi

# Multigrid on the implicit steps: the coarse IJacobians scaled to the Galerkin operator's size.
"$B/heat_ts" -da_grid_x 65 -da_grid_y 65 -ts_max_steps 20 -ts_adapt_type none -stn_device gpu -pc_type mg -pc_mg_levels 3 \
  -ksp_rtol 1e-10 -snes_rtol 1e-10 -snes_atol 1e-12 -ksp_converged_reason -ts_view_solution "binary:$B/heat_ts.mg.bin" >"$OUTDIR/heat_ts.mg.log" 2>&1
rc=$?
most=$(awk '/Linear solve converged/ {if ($NF > m) m = $NF} END {print m + 0}' "$OUTDIR/heat_ts.mg.log")
rel=$("$B/vecdiff" "$B/heat_ts.mg.bin" "$B/heat_ts.cpu.bin" --rel 1e-8 2>&1 | tail -1)
if [ $rc = 0 ] && grep -q ": integrated to t = " "$OUTDIR/heat_ts.mg.log" && [ "$most" -gt 0 ] && [ "$most" -le 25 ] &&
   "$B/vecdiff" "$B/heat_ts.mg.bin" "$B/heat_ts.cpu.bin" --rel 1e-8 >/dev/null 2>&1; then
  ok "heat_ts -pc_type mg on the GPU: at most $most Krylov iterations a linear solve, final state $rel"
else bad "heat_ts -pc_type mg on the GPU: exit $rc, at most $most Krylov iterations a linear solve, final state $rel"; echo x >>"$B/failed"; tail -5 "$OUTDIR/heat_ts.mg.log"; fi

# No product without the matrix for TS's shifted Jacobian: refused in a sentence.
"$B/heat_ts" -da_grid_x 9 -da_grid_y 9 -stn_device gpu -stn_operator matfree >"$OUTDIR/heat_ts.matfree.log" 2>&1
rc=$?
if [ $rc -ne 0 ] && grep -q "heat_ts is time-dependent and has no such product" "$OUTDIR/heat_ts.matfree.log"; then ok "-stn_operator matfree: refused, saying why"
else bad "-stn_operator matfree: exit $rc, no sentence"; echo x >>"$B/failed"; tail -5 "$OUTDIR/heat_ts.matfree.log"; fi

nfail=0
[ -f "$B/failed" ] && nfail=$(wc -l <"$B/failed") && rm -f "$B/failed"
echo "gpu: time: $nfail failed"
[ "$nfail" -eq 0 ]
