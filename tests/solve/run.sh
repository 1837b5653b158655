#!/bin/sh
# tests/solve/run.sh: end-to-end evidence that the programs stencilc generates
# solve what the .stn files say, from the repository root (any cwd works):
#
#   1 jacobians   every example under -snes_test_jacobian: the compiler's
#                 Jacobian (SG-DIA with -pc_type jacobi, its AIJ copy with the
#                 default ILU, and -stn_mat_type aij) agrees with PETSc's
#                 finite differences, ||J - Jfd||_F/||J||_F <= 1e-6; so does a
#                 term K u^m |grad u| at u = 0 = |grad u| (no 0 * (0/0)), whose
#                 solve matches -snes_fd's
#   2 user entry  a hand-written Jacobian entry that is wrong only for some u
#                 compiles and is caught at run time by -stn_check_jacobian
#                 (naming the entry and a grid point); a correct one passes;
#                 one that is wrong everywhere is rejected at compile time
#   3 names/paths hostile field, parameter and let names (C keywords, libc,
#                 PETSc, CUDA and generated-code names) and a program, .stn,
#                 --emit-dir and -stn_output in paths with quotes, spaces, ';',
#                 $(...) and backquotes: builds, solves, runs no command; the
#                 emitted C of every program compiles with -Wall -Wextra -Werror
#   4 mpi         every example on 1, 2 and 4 ranks: same Newton iteration
#                 count, solutions equal to 1e-10 (natural ordering), and the
#                 same first Newton iterate (which, unlike the solution, depends
#                 on the Jacobian); -stn_mat_type aij == sgdia; ILU, block and
#                 point-block Jacobi, GAMG and hypre (when PETSc has it)
#   5 failures    a solve that cannot converge exits 1 saying why; a parameter
#                 out of its range and a too small grid are refused clearly
#   6 reproducible  compiling twice (and from another directory) gives
#                 byte-identical C
#   7 output      -stn_output FILE.vts writes a VTK file with the field names
#   8 outputs     a full file system, a link to /dev/full, a missing or read-only
#                 directory: nothing half-written, a sentence, a non-zero exit
#                 (unwritable paths before the solve); a failed solve's last
#                 iterate and -snes_grid_sequence's finest grid in the .vts
#   9 options     too many ranks for the grid, -pc_type eisenstat on ranks,
#                 telescope on the grid, Galerkin with SG-DIA levels,
#                 -snes_fd_color on a periodic grid (PETSc 3.18): refused in a
#                 sentence; eisenstat, telescope and Galerkin where they work
#  10 checkerboard  floor, ceil and mod: tests/solve/checkerboard.stn (a
#                 coefficient on a checkerboard whose block count is the option
#                 -nb) against tests/solve/checkerboard.py, the same discrete
#                 problem with exact block arithmetic, to 1e-8 on two grids and
#                 block counts; its Jacobian under -snes_test_jacobian
#  11 shared lets  tests/solve/shared_lets.stn, a jacobian block using its
#                 residual's lets: a wrong entry refused at compile time,
#                 -stn_check_jacobian, -snes_test_jacobian, and the same Newton
#                 iterations and solution as shared_lets_hoisted.stn (the lets
#                 at the top level)
#  12 typed params  tests/solve/typed_params.stn (-blocks: int, -reaction:
#                 bool, -shape: {checkerboard, stripes}) under several options:
#                 the same Newton iterations and solution (1e-12) as the program
#                 with those values written as lets; -blocks 2.5, -blocks 0,
#                 -reaction maybe, -shape rings, a bare -shape and a computed
#                 int default that is not whole are refused in a sentence
#  13 approximate  examples/nldiffusion2d.stn, whose jacobian block is
#                 approximate (Picard's matrix), against
#                 tests/solve/nldiffusion2d_ref.c, the same problem written by
#                 hand with PETSc (exact operator, Picard's preconditioning
#                 matrix): the same first residual norm (1e-12), Newton and
#                 Krylov iterations and solution (1e-8), also on 2 ranks and
#                 with Jacobi, and the same Newton iterations under a direct
#                 solve with Picard's matrix alone; and against the same file
#                 without its jacobian block (every entry derived): the same first
#                 residual norm (1e-12), Newton iterations and solution (1e-8)
#                 under ILU, Jacobi, multigrid (also Galerkin), AIJ, 2 ranks,
#                 -snes_mf_operator, -snes_fd and -snes_grid_sequence; -snes_test_jacobian finds the
#                 operator exact and the preconditioning matrix not; a direct
#                 solve with that matrix alone needs more Newton iterations
#                 (Picard's); -stn_check_jacobian passes; Eisenstat is refused
#  14 mirrors     examples/neumann2d.stn (zero flux by 'mirror u: boundary;')
#                 against tests/solve/neumann2d_longhand.stn (a rule for every
#                 face and corner): the same first residual norm (1e-12),
#                 norm after one Newton step (1e-8), Newton iterations and
#                 solution (1e-8), with ILU, with -pc_type mg (rediscretized
#                 levels) and -pc_type mg -pc_mg_galerkin pmat, on 1 and 2
#                 ranks; the multigrid answers equal the ILU one.
#                 tests/solve/mirror_jacobian.stn, a hand-written Jacobian
#                 for 'all' on mirrored walls: a wrong entry refused at compile
#                 time, -stn_check_jacobian, -snes_test_jacobian, and the same
#                 Newton iterations and solution as its derived Jacobian, also
#                 under Galerkin multigrid; a mirror no read goes through warns
#  15 coefficients  tests/solve/coefficient.stn (-div(k grad u) = f with
#                 'coefficient k = ...' read at the four neighbours) against
#                 tests/solve/coefficient_inline.stn (k a function written out
#                 at x + hx, y - hy, ...): the same first residual norm
#                 (1e-12), Newton iterations and solution (1e-8) with ILU, on
#                 2 ranks, with -pc_type mg (levels rediscretized, each
#                 evaluating k on its own grid) and Galerkin multigrid, and
#                 another amplitude; the multigrid answers equal ILU's;
#                 -snes_test_jacobian at rounding level; the Jacobian has
#                 the 5 columns of u's reads only; on a grid periodic in x
#                 (coefficient_periodic.stn against its _inline twin, k
#                 wrapped by mod) reads past the last column wrap, 1 and 2 ranks;
#                 hand-written entries reading k[1,0] ...: a wrong one refused
#                 at compile time, the right ones give the derived solution
#  16 keyword names  tests/solve/keyword_params.stn, whose parameters are
#                 named 'width' and 'initial': -width 4 -initial 0.3 gives the
#                 first residual norm, Newton iterations and solution (1e-12) of
#                 the program with those values as lets; -help lists both
#  17 list params  tests/solve/list_params.stn (-blocks: int[2], -w: real[2])
#                 under several options: the same Newton iterations and solution
#                 (1e-12) as the program with those values written as lets;
#                 another -blocks changes the solution; a wrong count of values,
#                 a bare -blocks, a value out of range and 2.5 for an int are
#                 refused in a sentence; -help shows both lists
#  18 coefficient files  tests/solve/coefficient_file.stn ('coefficient k: file;')
#                 reading files that tests/solve/coefficient_file_write.c writes
#                 by hand (VecView, binary) against tests/solve/coefficient.stn,
#                 whose k is the same expression: the same first residual norm
#                 (1e-12), Newton iterations and solution (1e-8) with ILU, on 2
#                 ranks (a file written on 2 ranks too), with -pc_type mg (the
#                 coarser levels injected from the file's grid), 1 and 2 ranks,
#                 and Galerkin multigrid, with the same Krylov residual norms
#                 (1e-8: the coarser levels see the same k); another file
#                 changes the solution;
#                 -snes_test_jacobian at rounding level (k adds no column); on a
#                 grid periodic in x (coefficient_file_periodic.stn against
#                 coefficient_periodic.stn) the ghosts wrap, 1 and 2 ranks; in
#                 3D on a box stencil, periodic in z (coefficient_file3d.stn, its
#                 file written byte by byte from LANGUAGE.md's description of the
#                 format) as c as an expression, 1 and 4 ranks; no
#                 -k_file, a missing file, a file that is not a vector, one of
#                 another grid's size and -snes_grid_sequence are refused in a
#                 sentence naming the option, the file and the lengths
#  19 time       examples/heat_ts.stn against PETSc's TS tutorial ex13 (its
#                 sources from libpetsc3.18-dev-examples): the same Newton
#                 iterations per step and solutions at the end (1e-8) with
#                 ex13's defaults, other grids, steps and Crank-Nicolson, and
#                 on 2 ranks; backward Euler, Crank-Nicolson and BDF2 show
#                 orders 1, 2, 2 (fitted within 0.1) on tests/solve/ts_mms.stn; the
#                 IJacobian of tests/solve/ts_nonlinear.stn passes
#                 -snes_test_jacobian inside TS steps, and 2 ranks equal 1; a
#                 failing step is named in a sentence
#  20 grayscott   examples/grayscott.stn against PETSc's TS tutorial
#                 advection-diffusion-reaction/ex5: the same Newton iterations
#                 of every stage solve, the same steps and solutions at the end
#                 (1e-8) under backward Euler and ARKIMEX with fixed steps, on 1
#                 and 2 ranks, and under ex5's own adaptive defaults; the
#                 IJacobian under -snes_test_jacobian inside steps;
#                 -stn_output_series (.pvd and .vts read back by
#                 tests/solve/vtkseries.py: times, point counts, the last state
#                 the final one) on 1 and 2 ranks, -stn_plot_frames and
#                 -stn_plot_steps (with gnuplot, and one note without it), their
#                 errors before the first step, a state that cannot be written
#                 (a link to /dev/full) stopping the run in a sentence
#  21 imex        examples/allen_cahn.stn (explicit(...) reaction) against its
#                 all-implicit twin under ARKIMEX at fixed steps: differences
#                 shrinking as dt^3, one Newton iteration per (linear) implicit
#                 stage; fitted orders (within 0.2) of ARKIMEX 3, 2e and 4 in
#                 IMEX mode on tests/solve/ts_imex_mms.stn and of rk (3bs), ssp,
#                 euler and ARKIMEX on tests/solve/ts_explicit_mms.stn (u_t = G,
#                 the RHSFunction alone); -ts_type rk refused where F has more
#                 than dt(u); rk past its stability limit ends in a sentence (a
#                 state not finite); their C compiles with the warning flags
#
# One line per check ("solve: ... ok" or "FAIL: ..."), a summary, and a non-zero
# exit status if any check failed. Programs and outputs go to build/tests/solve/.
#
# Environment: STENCILC (default bin/stencilc), RUN_TIMEOUT seconds per run
# (default 120), MPIEXEC (default mpiexec; run as "$MPIEXEC --oversubscribe -n N").
# Needs mpicc, mpiexec and pkg-config's PETSc (make deps).
set -u
cd "$(dirname "$0")/../.." || exit 2

STENCILC=${STENCILC:-bin/stencilc}
RUN_TIMEOUT=${RUN_TIMEOUT:-120}
MPIEXEC=${MPIEXEC:-mpiexec}
OUT=build/tests/solve
# OpenMPI refuses root without these (CI runs as root); the vader setting
# silences the cross-memory-attach failures of containers.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none
export OMPI_MCA_rmaps_base_oversubscribe=1

pass=0
fail=0
ok() { pass=$((pass + 1)); echo "solve: $* ok"; }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
note() { echo "solve: note: $*"; }
# show FILE [N]: the last N lines of a log, without the boilerplate of PETSc's
# error reports (configure line, stack, links) and of mpiexec's aborts.
show() {
  grep -v -e 'PETSC ERROR: Configure options' -e 'PETSC ERROR: #' -e 'PETSC ERROR: See https' \
          -e 'PETSC ERROR: Petsc Release' -e 'PETSC ERROR: .* on a .*named' -e 'PETSC ERROR: -*End of Error' \
          -e 'PETSC ERROR: -* Error Message' -e 'PETSC ERROR: PETSc Option Table' -e 'PETSC ERROR: No PETSc Option' \
          -e '^-----*$' -e 'MPI_ABORT' -e 'with errorcode' -e 'You may or may not see' -e 'exactly when Open MPI' \
          -e 'Primary job' -e 'non-zero exit code' -e 'mpiexec detected' -e 'Process name:' -e 'Exit code:' \
          -e 'thus causing' -e 'first process to do so' -e '^ *$' "$1" 2>/dev/null |
    tail -n "${2:-12}" | sed 's/^/  | /'
}
# Seconds per section, for the summary line.
times=""
t0=$(date +%s)
section_done() { t1=$(date +%s); times="$times $1 $((t1 - t0))s,"; t0=$t1; }
started=$(date +%s)

# ---- prerequisites ----------------------------------------------------------
missing=""
[ -x "$STENCILC" ] || missing="$missing $STENCILC (run make)"
for t in mpicc "$MPIEXEC" pkg-config timeout; do
  command -v "$t" >/dev/null 2>&1 || missing="$missing $t"
done
if [ -z "$missing" ] && ! pkg-config --exists PETSc; then missing="$missing PETSc(pkg-config)"; fi
if [ -n "$missing" ]; then
  bad "prerequisites missing:$missing (make deps)"
  echo "solve: $pass passed, $fail failed"
  exit 1
fi
PETSC_CFLAGS=$(pkg-config --cflags PETSc)
PETSC_LIBS=$(pkg-config --libs PETSc)

rm -rf "$OUT"
mkdir -p "$OUT/log" "$OUT/sol"
# One compiler for the whole run, even if make rebuilds bin/stencilc meanwhile.
cp "$STENCILC" "$OUT/stencilc" || { bad "cannot copy $STENCILC"; exit 1; }
STENCILC_SRC=$STENCILC
STENCILC=$OUT/stencilc
LOG=$OUT/log

# run LOGFILE PROGRAM ARGS...: one serial run, output in LOGFILE; status in $?.
run() { l=$1; shift; timeout "$RUN_TIMEOUT" "$@" >"$l" 2>&1; }
# mpirun N LOGFILE PROGRAM ARGS...
mpirun() { n=$1 l=$2; shift 2; timeout "$RUN_TIMEOUT" "$MPIEXEC" --oversubscribe -n "$n" "$@" >"$l" 2>&1; }
# newton LOGFILE: N of "NAME: solved in N Newton iterations".
newton() { sed -n 's/.*: solved in \([0-9][0-9]*\) Newton iteration.*/\1/p' "$1" | head -n 1; }
# solved LOGFILE STATUS: the run exited 0 and says it solved.
solved() { [ "$2" -eq 0 ] && grep -q ': solved in [0-9][0-9]* Newton iteration' "$1"; }
# cc_errors LOGFILE: after an internal error stencilc keeps the sources and the
# C compiler's log (in --emit-dir, or in /tmp/stencilc-XXXXXX): show the first
# compiler errors, and remove a /tmp copy.
cc_errors() {
  kept=$(sed -n "s/^The sources and the log are kept in \(.*\)\. Please report.*/\1/p" "$1" | head -n 1)
  [ -n "$kept" ] || return 0
  if [ -f "$kept/build.log" ]; then
    grep -m 3 'error' "$kept/build.log" | sed "s|$kept/||g; s/^/  | cc: /"
  fi
  case $kept in /tmp/stencilc-*|"${TMPDIR:-/tmp}"/stencilc-*) rm -rf "$kept" ;; esac
}

# compile NAME STN: builds $OUT/NAME with its C in $OUT/NAME.src; status in $?.
compile() {
  rm -rf "$OUT/$1.src"
  timeout "$RUN_TIMEOUT" "$STENCILC" "$2" -o "$OUT/$1" --emit-dir "$OUT/$1.src" >"$LOG/$1.stencilc" 2>&1
}

EXAMPLES="bratu2d sfi3d cavity heat2d brusselator3d neumann2d"
built=""
for ex in $EXAMPLES; do
  if compile "$ex" "examples/$ex.stn" && [ -x "$OUT/$ex" ]; then
    built="$built $ex"
  else
    bad "build: $STENCILC_SRC examples/$ex.stn -o $OUT/$ex failed"
    show "$LOG/$ex.stencilc"
    cc_errors "$LOG/$ex.stencilc"
  fi
done
is_built() { case " $built " in *" $1 "*) return 0 ;; esac; return 1; }

# vecdiff: compares two PETSc binary vectors (tests/petsc/vecdiff.c).
VECDIFF=$OUT/vecdiff
# shellcheck disable=SC2086
if ! mpicc $PETSC_CFLAGS -O2 tests/petsc/vecdiff.c $PETSC_LIBS -lm -o "$VECDIFF" >"$LOG/vecdiff.cc" 2>&1; then
  bad "build: tests/petsc/vecdiff.c does not compile"
  show "$LOG/vecdiff.cc"
fi
# same A B TOL: prints the relative difference; status 0 when <= TOL.
same() {
  if ! [ -s "$1" ] || ! [ -s "$2" ]; then echo "no solution file"; return 2; fi
  "$VECDIFF" "$1" "$2" --rel "$3" 2>&1 | tr '\n' ' ' | sed 's/ *$//'
  return 0
}
same_ok() { [ -s "$1" ] && [ -s "$2" ] && "$VECDIFF" "$1" "$2" --rel "$3" >/dev/null 2>&1; }

# The problem options of each example: a moderately small grid for the
# Jacobian tests, a grid that splits over 4 ranks for the MPI ones, and
# parameters that make the problem nontrivial.
small() {
  case $1 in
    bratu2d)       echo "-da_grid_x 9 -da_grid_y 9 -par 6" ;;
    sfi3d)         echo "-da_grid_x 6 -da_grid_y 6 -da_grid_z 6 -par 6" ;;
    cavity)        echo "-da_grid_x 9 -da_grid_y 9 -lidvelocity 10 -grashof 100 -prandtl 0.7" ;;
    heat2d)        echo "-da_grid_x 8 -da_grid_y 9 -k 2" ;;
    brusselator3d) echo "-da_grid_x 5 -da_grid_y 5 -da_grid_z 5 -B 3 -tilt 0.4" ;;
    neumann2d)     echo "-da_grid_x 9 -da_grid_y 7 -a 10" ;;
  esac
}
medium() {
  case $1 in
    bratu2d)       echo "-da_grid_x 17 -da_grid_y 17" ;;
    sfi3d)         echo "-da_grid_x 9 -da_grid_y 9 -da_grid_z 9" ;;
    cavity)        echo "-da_grid_x 17 -da_grid_y 17 -lidvelocity 10 -grashof 100" ;;
    heat2d)        echo "-da_grid_x 32 -da_grid_y 33" ;;
    brusselator3d) echo "-da_grid_x 9 -da_grid_y 9 -da_grid_z 9 -B 3" ;;
    neumann2d)     echo "-da_grid_x 17 -da_grid_y 17" ;;
  esac
}
TIGHT="-ksp_rtol 1e-12 -snes_rtol 1e-12 -snes_atol 1e-13"

# A PETSc in another place than its PETSc.pc says (copied or moved: here a tree of links to
# Debian's whose PETSc.pc names a prefix that does not exist): PETSC_DIR must be what is built
# against, its headers and its library, not the prefix written in the file.
moved=$OUT/moved-petsc
real=$(pkg-config --variable=prefix PETSc)
mkdir -p "$moved/lib/pkgconfig"
ln -s "$real/include" "$moved/include"
for f in "$real"/lib/libpetsc*; do ln -s "$f" "$moved/lib/"; done
[ -d "$real/lib/petsc" ] && ln -s "$real/lib/petsc" "$moved/lib/petsc"
sed 's|^prefix=.*|prefix=/nonexistent/moved-away|' "$real/lib/pkgconfig/PETSc.pc" >"$moved/lib/pkgconfig/PETSc.pc"
if PETSC_DIR=$moved PETSC_ARCH= "$STENCILC" examples/bratu2d.stn -o "$OUT/moved-bratu2d" --emit-dir "$OUT/moved-src" >"$LOG/moved.build" 2>&1 &&
   grep -q -- "-I$moved/include" "$OUT/moved-src/build.log" && run "$LOG/moved.run" "$OUT/moved-bratu2d" $(small bratu2d) && solved "$LOG/moved.run" $?; then
  ok "build: a PETSc moved away from its PETSc.pc's prefix (PETSC_DIR=$moved) builds against PETSC_DIR and solves"
else
  bad "build: PETSC_DIR naming a moved PETSc"; tail -5 "$LOG/moved.build" "$OUT/moved-src/build.log" 2>/dev/null
fi

section_done build

# ---- 1 Jacobians against PETSc's finite differences ------------------------
# -snes_max_it 2: the Jacobian is tested at the initial guess and at the first
# Newton iterate (for cavity the initial velocity is 0, which leaves the
# convection couplings untested); the solve then "fails", which is expected,
# so only the printed ratios count.
for ex in $EXAMPLES; do
  is_built "$ex" || continue
  for mode in sgdia default copy aij; do
    case $mode in
      sgdia)   opts="-pc_type jacobi"; what="SG-DIA Jacobian (-pc_type jacobi)" ;;
      default) opts=""; what="default options" ;;
      copy)    opts="-pc_type ilu"; what="SG-DIA with its AIJ copy (-pc_type ilu)" ;;
      aij)     opts="-stn_mat_type aij -pc_type jacobi"; what="-stn_mat_type aij" ;;
    esac
    l=$LOG/jac.$ex.$mode
    # shellcheck disable=SC2046,SC2086
    run "$l" "$OUT/$ex" $(small "$ex") $opts -snes_test_jacobian -snes_max_it 2
    rc=$?
    vals=$(sed -n 's/.*||J - Jfd||_F\/||J||_F = \([^,]*\),.*/\1/p' "$l")
    nvals=$(echo "$vals" | grep -c .)
    verdict=$(echo "$vals" | awk '
      /^[0-9]+(\.[0-9]*)?([eE][-+]?[0-9]+)?$/ { if ($1 + 0 > max) max = $1 + 0; if ($1 + 0 > 1e-6) bad = 1; next }
      NF { bad = 1; odd = odd " " $0 }
      END { printf "%s %.3g%s\n", bad ? "bad" : "good", max, odd }')
    why=""
    [ "$nvals" -ge 1 ] || why="no ||J - Jfd||_F/||J||_F in the output (exit status $rc)"
    case $verdict in bad*) why="${why:+$why; }a ratio above 1e-6 or not a number:$(echo "$vals" | tr '\n' ' ')" ;; esac
    if [ "$mode" = copy ] && ! grep -q 'Testing Jacobian for preconditioner' "$l"; then
      why="${why:+$why; }the AIJ copy (preconditioning matrix) was not tested"
    fi
    # shellcheck disable=SC2086
    set -- $verdict
    if [ -z "$why" ]; then
      ok "jacobian $ex, $what: tested $nvals times, max ||J - Jfd||/||J|| = $2"
    else
      bad "jacobian $ex, $what: $why"
      show "$l"
    fi
  done
done

# The default preconditioner (no -pc_type) must not depend on the Jacobian's
# storage: with -stn_mat_type aij PETSc picks ILU (1 rank) or block Jacobi
# (several); the SG-DIA program must pick the same (through its AIJ copy).
if is_built bratu2d; then
  for n in 1 2; do
    pcs=""
    for mt in sgdia aij; do
      l=$LOG/defaultpc.$mt.$n
      # shellcheck disable=SC2046
      mpirun "$n" "$l" "$OUT/bratu2d" $(medium bratu2d) -stn_mat_type "$mt" -snes_view -ksp_converged_reason
      pc=$(grep -A 1 '^  PC Object' "$l" | sed -n 's/^ *type: //p' | head -n 1)
      lin=$(sed -n 's/.*Linear solve converged due to [A-Z_]* iterations \([0-9]*\)/\1/p' "$l" | awk '{ s += $1 } END { print s + 0 }')
      pcs="$pcs $mt:${pc:-?}:$lin"
    done
    # shellcheck disable=SC2086
    set -- $pcs
    pc_sgdia=$(echo "$1" | cut -d: -f2) pc_aij=$(echo "$2" | cut -d: -f2)
    detail="sgdia: -pc_type ${pc_sgdia}, $(echo "$1" | cut -d: -f3) linear iterations; aij: -pc_type ${pc_aij}, $(echo "$2" | cut -d: -f3)"
    if [ "$pc_sgdia" = "$pc_aij" ] && [ "$pc_sgdia" != "?" ]; then
      ok "default preconditioner: bratu2d on $n rank(s) ($detail)"
    else
      bad "default preconditioner: bratu2d $(medium bratu2d) on $n rank(s) without -pc_type: $detail"
    fi
  done
fi

# A term whose chain-rule derivative is 0 * (0/0): K u^m |grad u| where u = 0 and grad u = 0
# (the initial guess of tests/solve/degenerate_gradient.stn, on its left half). The residual's
# derivative exists there, so the derived Jacobian must be finite and agree with PETSc's finite
# differences, and Newton with it must match Newton with -snes_fd: the same iterations, the
# same solution to 1e-8.
DEGEN=tests/solve/degenerate_gradient.stn
if compile degenerate "$DEGEN" && [ -x "$OUT/degenerate" ]; then
  for mode in sgdia aij; do
    case $mode in sgdia) opts="-pc_type jacobi" ;; aij) opts="-stn_mat_type aij -pc_type jacobi" ;; esac
    l=$LOG/jac.degenerate.$mode
    # shellcheck disable=SC2086
    run "$l" "$OUT/degenerate" $opts -snes_test_jacobian -snes_max_it 2
    vals=$(sed -n 's/.*||J - Jfd||_F\/||J||_F = \([^,]*\),.*/\1/p' "$l")
    max=$(echo "$vals" | awk '
      /^[0-9]+(\.[0-9]*)?([eE][-+]?[0-9]+)?$/ { if ($1 + 0 > m) m = $1 + 0; n++; next }
      NF { odd = 1 }
      END { if (odd || n < 2 || m > 1e-6) print "bad"; else printf "%.3g\n", m }')
    if [ "$max" != bad ]; then
      ok "jacobian degenerate_gradient, $mode: finite where u = 0 = |grad u|, max ||J - Jfd||/||J|| = $max"
    else
      bad "jacobian $DEGEN, $mode: ||J - Jfd||/||J|| not all finite and <= 1e-6 at 2 iterates: $(echo "$vals" | tr '\n' ' ')"
      show "$l"
    fi
  done
  # shellcheck disable=SC2086
  run "$LOG/degenerate.solve" "$OUT/degenerate" $TIGHT -snes_view_solution "binary:$OUT/sol/degenerate.bin"
  rc=$?
  # shellcheck disable=SC2086
  run "$LOG/degenerate.fd" "$OUT/degenerate" $TIGHT -snes_fd -snes_view_solution "binary:$OUT/sol/degenerate.fd.bin"
  rcfd=$?
  its=$(newton "$LOG/degenerate.solve") itsfd=$(newton "$LOG/degenerate.fd")
  d=$(same "$OUT/sol/degenerate.bin" "$OUT/sol/degenerate.fd.bin" 1e-8)
  if solved "$LOG/degenerate.solve" $rc && solved "$LOG/degenerate.fd" $rcfd && [ "$its" = "$itsfd" ] &&
     same_ok "$OUT/sol/degenerate.bin" "$OUT/sol/degenerate.fd.bin" 1e-8; then
    ok "jacobian degenerate_gradient: $its Newton iterations as with -snes_fd, solutions equal ($d)"
  else
    bad "jacobian $DEGEN: derived Jacobian (exit $rc, ${its:-?} iterations) vs -snes_fd (exit $rcfd, ${itsfd:-?}): $d"
    show "$LOG/degenerate.solve"
  fi
else
  bad "build: $STENCILC_SRC $DEGEN failed"
  show "$LOG/degenerate.stencilc"
  cc_errors "$LOG/degenerate.stencilc"
fi

section_done jacobians

# ---- 2 a user's Jacobian entry, checked at compile and at run time ----------
J_WRONG=tests/solve/jacobian_wrong.stn
J_RIGHT=tests/solve/jacobian_right.stn
J_REJECTED=tests/solve/jacobian_rejected.stn
if compile jwrong "$J_WRONG" && [ -x "$OUT/jwrong" ]; then
  ok "user jacobian: $J_WRONG (right only where u > 1) compiles"
  line=$(grep -n 'u = if u > 1' "$J_WRONG" | cut -d: -f1)
  col=$(grep 'u = if u > 1' "$J_WRONG" | awk '{ print index($0, "u = if") }')
  entry="du/du[0,0] (jacobian_wrong.stn:$line:$col)"
  for n in 1 2; do
    l=$LOG/jwrong.check.$n
    if [ "$n" = 1 ]; then run "$l" "$OUT/jwrong" -stn_check_jacobian; else mpirun 2 "$l" "$OUT/jwrong" -stn_check_jacobian; fi
    rc=$?
    why=""
    [ $rc -ne 0 ] || why="exit status 0"
    grep -qF -e "$entry" "$l" || why="${why:+$why; }no message naming $entry"
    grep -q 'at grid point ([0-9][0-9]*, [0-9][0-9]*)' "$l" || why="${why:+$why; }no grid point (i, j) in the message"
    if [ -z "$why" ]; then
      ok "user jacobian: -stn_check_jacobian on $n rank(s) stops the wrong entry: $(grep -o -m 1 'the Jacobian entry .*' "$l")"
    else
      bad "user jacobian: -stn_check_jacobian on $n rank(s) does not catch the wrong entry of $J_WRONG: $why"
      show "$l"
    fi
  done
else
  bad "user jacobian: $STENCILC_SRC $J_WRONG failed; the entry is right where u > 1, so only the run can judge it"
  show "$LOG/jwrong.stencilc"
  cc_errors "$LOG/jwrong.stencilc"
fi

if compile jright "$J_RIGHT" && [ -x "$OUT/jright" ]; then
  # The entry must really be compared at run time (not proved equal and
  # dropped), or the passes below say nothing.
  if ! grep -q 'CheckEntry(v' "$OUT"/jright.src/*.c; then
    note "no CheckEntry(...) call in the C of $J_RIGHT: the run-time check of its entry may not run"
  fi
  for n in 1 2; do
    l=$LOG/jright.check.$n
    if [ "$n" = 1 ]; then run "$l" "$OUT/jright" -stn_check_jacobian; else mpirun 2 "$l" "$OUT/jright" -stn_check_jacobian; fi
    rc=$?
    if solved "$l" "$rc"; then
      ok "user jacobian: the correct entry of $J_RIGHT passes -stn_check_jacobian on $n rank(s)"
    else
      bad "user jacobian: the correct entry of $J_RIGHT fails -stn_check_jacobian on $n rank(s) (exit status $rc)"
      show "$l"
    fi
  done
else
  bad "user jacobian: $STENCILC_SRC $J_RIGHT failed"
  show "$LOG/jright.stencilc"
  cc_errors "$LOG/jright.stencilc"
fi

if is_built sfi3d; then
  l=$LOG/sfi3d.check
  # shellcheck disable=SC2046
  run "$l" "$OUT/sfi3d" $(medium sfi3d) -stn_check_jacobian
  rc=$?
  if solved "$l" "$rc"; then ok "user jacobian: ex14's hand-written Jacobian in sfi3d.stn passes -stn_check_jacobian"
  else bad "user jacobian: sfi3d -stn_check_jacobian (exit status $rc)"; show "$l"; fi
fi

rm -f "$OUT/jrejected"
timeout "$RUN_TIMEOUT" "$STENCILC" "$J_REJECTED" -o "$OUT/jrejected" >"$LOG/jrejected.stencilc" 2>&1
rc=$?
line=$(grep -n 'u = 2/hx^2 + 2/hy^2 + 3\*u' "$J_REJECTED" | cut -d: -f1)
if [ $rc -eq 1 ] && grep -q "^$J_REJECTED:$line:[0-9]*: error: this Jacobian entry is not d(residual u)/d(u" "$LOG/jrejected.stencilc" &&
   ! [ -e "$OUT/jrejected" ]; then
  ok "user jacobian: 3*u for d(u^3)/du is rejected at compile time ($J_REJECTED:$line)"
else
  bad "user jacobian: $STENCILC_SRC $J_REJECTED: exit status $rc (expected 1 with 'this Jacobian entry is not d(residual u)/d(u...' at line $line, and no program)"
  show "$LOG/jrejected.stencilc"
  cc_errors "$LOG/jrejected.stencilc"
fi

section_done user-jacobian

# ---- 3 hostile names and paths ---------------------------------------------
# Every command substitution in these names would create a file whose name
# starts with stencilc_pwned, in the shell's directory.
HD="$OUT/hostile/dir with 'quotes' \"and\" ;\$(touch stencilc_pwned1);\`touch stencilc_pwned2\` & x"
HSTN="$HD/my prog's \"stn\" \$(touch stencilc_pwned3).stn"
HPROG="$HD/prog ;\$(echo pwned) 'x' \"y\" \`touch stencilc_pwned4\`"
HEMIT="$HD/emit \"dir\" ;\$(touch stencilc_pwned5) 'q'"
HVTS="$HD/out \$(touch stencilc_pwned6) 'v'.vts"
pwned() {
  find . /tmp -maxdepth 6 -name 'stencilc_pwned*' 2>/dev/null
  [ -n "${HOME:-}" ] && ls -d "$HOME"/stencilc_pwned* 2>/dev/null
  ls -d /stencilc_pwned* pwned "$OUT"/pwned 2>/dev/null
}
pw_before=$(pwned)
[ -z "$pw_before" ] || note "files named stencilc_pwned* exist before the test: $pw_before"
mkdir -p "$HD"
cp tests/solve/hostile.stn "$HSTN"
hostile_ok=0
if timeout "$RUN_TIMEOUT" "$STENCILC" "$HSTN" -o "$HPROG" --emit-dir "$HEMIT" >"$LOG/hostile.stencilc" 2>&1 &&
   [ -x "$HPROG" ]; then
  hostile_ok=1
  ok "hostile: fields int main exp I threadIdx, parameters double printf nx_ user, lets return switch, def main, descriptions with '*/': builds into a path with quotes, ';', \$(...) and backquotes"
else
  bad "hostile: $STENCILC_SRC tests/solve/hostile.stn (copied into a hostile path) -o HOSTILE --emit-dir HOSTILE failed"
  show "$LOG/hostile.stencilc"
  cc_errors "$LOG/hostile.stencilc"
fi
if [ $hostile_ok = 1 ]; then
  l=$LOG/hostile.run
  run "$l" "$HPROG" -double 2 -printf 0.3 -nx_ 3 -user 1 -snes_rtol 1e-12 -stn_output "$HVTS" \
      -snes_view_solution "binary:$HD/sol 'b' \$(touch stencilc_pwned7).bin"
  rc=$?
  if solved "$l" $rc && [ -s "$HVTS" ] && [ -s "$HD/sol 'b' \$(touch stencilc_pwned7).bin" ]; then
    ok "hostile: solves with -double -printf -nx_ -user and writes -stn_output and -snes_view_solution into the hostile path ($(newton "$l") Newton iterations)"
  else
    bad "hostile: the program in the hostile path does not solve or write its outputs (exit status $rc)"
    show "$l"
  fi
  l=$LOG/hostile.mpi
  mpirun 2 "$l" "$HPROG" -double 2 -printf 0.3 -nx_ 3 -user 1 -snes_rtol 1e-12 -snes_view_solution "binary:$HD/sol2.bin"
  rc=$?
  if solved "$l" $rc && same_ok "$HD/sol2.bin" "$HD/sol 'b' \$(touch stencilc_pwned7).bin" 1e-8; then
    ok "hostile: the same on 2 ranks, same solution"
  else
    bad "hostile: the hostile program on 2 ranks (exit status $rc)"
    show "$l"
  fi
fi
pw_after=$(pwned)
if [ "$pw_after" = "$pw_before" ]; then
  ok "hostile: no command in a name ran (no stencilc_pwned* file appeared)"
else
  bad "hostile: a command in a file name ran: $(echo "$pw_after" | tr '\n' ' ')"
fi

# Names that are still C or PETSc names after stencilc's renaming, or names
# the generated code defines itself. Each file holds one kind of clash; see
# the comment in each. The program must build, and solve with its parameters.
for stn in tests/solve/names_*.stn; do
  name=$(basename "$stn" .stn)
  desc=$(sed -n '/^#/!q; s/^# *//p' "$stn" | tr '\n' ' ' | sed 's/\. .*/./')
  params=$(sed -n 's/^param \([A-Za-z_0-9]*\) .*/-\1 0.5/p' "$stn" | tr '\n' ' ')
  params=${params% }
  rundir=$OUT/$name.run
  rm -rf "$rundir"
  mkdir -p "$rundir"
  compile "$name" "$stn"
  rc=$?
  if [ $rc -ne 0 ] || ! [ -x "$OUT/$name" ]; then
    case $rc in
      1) what="rejected it (exit status 1; a valid program by dsl/LANGUAGE.md)" ;;
      70) what="failed with an internal error (exit status 70: the generated C does not compile)" ;;
      124) what="timed out" ;;
      13[0-9]) what="crashed (exit status $rc, signal $((rc - 128)))" ;;
      *) what="failed (exit status $rc)" ;;
    esac
    # A valid program that stencilc refuses with a clear error (exit 1)
    # is acceptable for the PETSc-option clash; nothing else is.
    if [ $rc -eq 1 ] && [ "$name" = names_petsc_option ] && grep -q 'error:' "$LOG/$name.stencilc"; then
      ok "names: $stn is refused at compile time: $(grep -m 1 'error:' "$LOG/$name.stencilc")"
      continue
    fi
    bad "names: $STENCILC_SRC $stn $what -- $desc"
    show "$LOG/$name.stencilc" 4
    cc_errors "$LOG/$name.stencilc"
    continue
  fi
  l=$LOG/$name.run
  # shellcheck disable=SC2086
  (cd "$rundir" && timeout "$RUN_TIMEOUT" "../$name" $params) >"$l" 2>&1
  rc=$?
  extra=$(ls -A "$rundir")
  if solved "$l" $rc && [ -z "$extra" ]; then
    ok "names: $stn builds and solves with $params"
  else
    why="exit status $rc"
    [ -z "$extra" ] || why="$why; the run created files: $(echo "$extra" | tr '\n' ' ')"
    bad "names: $OUT/$name $params: $why -- $desc"
    show "$l" 6
  fi
done

# Warning-free generated C: every program's C, and the runtime once (it is the
# same text in every directory).
WFLAGS="-O2 -Wall -Wextra -Wno-unused-parameter -Werror"
wcheck() { # wcheck LABEL DIR FILE
  # shellcheck disable=SC2086
  if mpicc $WFLAGS $PETSC_CFLAGS -I "$2" -c "$2/$3" -o "$OUT/wcheck.o" >"$LOG/wcheck.log" 2>&1; then
    ok "warnings: $1 ($3) compiles with $WFLAGS"
  else
    bad "warnings: $1: $3 does not compile with $WFLAGS"
    show "$LOG/wcheck.log" 10
  fi
}
first=""
for ex in $built; do
  wcheck "$ex" "$OUT/$ex.src" "$ex.c"
  [ -n "$first" ] || first=$ex
  for f in report.c sgdia.c sgdia.h stnrt.h; do
    if [ "$ex" != "$first" ] && ! cmp -s "$OUT/$first.src/$f" "$OUT/$ex.src/$f"; then
      bad "warnings: the runtime file $f differs between $first.src and $ex.src"
    fi
  done
done
if [ $hostile_ok = 1 ]; then
  hc=""
  for f in "$HEMIT"/*.c; do
    case ${f##*/} in report.c|sgdia.c) ;; *) hc=${f##*/} ;; esac
  done
  wcheck "hostile" "$HEMIT" "$hc"
fi
if [ -n "$first" ]; then
  wcheck "runtime" "$OUT/$first.src" report.c
  wcheck "runtime" "$OUT/$first.src" sgdia.c
fi
rm -f "$OUT/wcheck.o"

section_done names

# Wide block rows: 81 entries per row through the AIJ paths, against SG-DIA with Jacobi.
if compile wide_rows tests/solve/wide_rows.stn && [ -x "$OUT/wide_rows" ]; then
  W="-snes_rtol 1e-10 -ksp_rtol 1e-12"
  # shellcheck disable=SC2086
  run "$LOG/wide.sgdia" "$OUT/wide_rows" $W -pc_type jacobi -snes_view_solution "binary:$OUT/wide.sgdia.bin"
  r0=$?
  for how in "-stn_mat_type aij -pc_type jacobi" "-pc_type mg -pc_mg_levels 2"; do
    tag=$(echo "$how" | tr -c 'a-z0-9\n' '_')
    # shellcheck disable=SC2086
    run "$LOG/wide.$tag" "$OUT/wide_rows" $W $how -snes_view_solution "binary:$OUT/wide.$tag.bin"
    rc=$?
    if solved "$LOG/wide.sgdia" $r0 && solved "$LOG/wide.$tag" $rc && same_ok "$OUT/wide.sgdia.bin" "$OUT/wide.$tag.bin" 1e-8; then
      ok "wide rows: 81 entries per block row with $how, the SG-DIA solution ($(same "$OUT/wide.sgdia.bin" "$OUT/wide.$tag.bin" 1e-8))"
    else
      bad "wide rows: tests/solve/wide_rows.stn with $how (exit status $rc)"
      show "$LOG/wide.$tag"
    fi
  done
else
  bad "wide rows: $STENCILC_SRC tests/solve/wide_rows.stn -o failed"
  show "$LOG/wide_rows.stencilc"
fi
section_done wide-rows

# ---- 3b multigrid from the stencil --------------------------------------------
# The hierarchy the GPU uses (-stn_levels_mat_type sgdia: every grid's operator rediscretized
# into SG-DIA, Jacobi smoothers, the dense inverse of the coarsest operator) gives the Krylov
# counts of PETSc's AIJ hierarchy with the same smoothers and an LU coarse solve, step by step;
# with the levels chosen from the grid, the counts stay flat as the grid grows.
krylov() { awk '/Linear solve converged/ {printf "%s ", $NF}' "$1"; }
# (three Chebyshev steps, the SG-DIA hierarchy's default, given to both: PCMG's is two)
MG="-snes_rtol 1e-10 -ksp_rtol 1e-8 -pc_type mg -mg_levels_pc_type jacobi -mg_levels_ksp_max_it 3 -ksp_converged_reason"
for case in "bratu2d -da_grid_x 65 -da_grid_y 65 -pc_mg_levels 4" \
            "sfi3d -da_grid_x 17 -da_grid_y 17 -da_grid_z 17 -pc_mg_levels 3" \
            "cavity -da_grid_x 33 -da_grid_y 33 -lidvelocity 10 -grashof 1000 -pc_mg_levels 3"; do
  # shellcheck disable=SC2086 # a case is a word list
  set -- $case
  ex=$1
  shift
  is_built "$ex" || continue
  # shellcheck disable=SC2086
  run "$LOG/mg.$ex.aij" "$OUT/$ex" "$@" $MG -stn_levels_mat_type aij
  ra=$?
  # shellcheck disable=SC2086
  run "$LOG/mg.$ex.sgdia" "$OUT/$ex" "$@" $MG -stn_levels_mat_type sgdia -ksp_view
  rs=$?
  a=$(krylov "$LOG/mg.$ex.aij") s=$(krylov "$LOG/mg.$ex.sgdia")
  if solved "$LOG/mg.$ex.aij" $ra && solved "$LOG/mg.$ex.sgdia" $rs && grep -q "stencilc dense inverse" "$LOG/mg.$ex.sgdia" &&
     [ -n "$s" ] && [ "$a" = "$s" ]; then
    ok "multigrid: $ex $*: SG-DIA levels [ $s] = AIJ levels [ $a]"
  else
    bad "multigrid: $ex $*: SG-DIA levels [ $s] (exit $rs) against AIJ levels [ $a] (exit $ra)"
    show "$LOG/mg.$ex.sgdia"
  fi
done
# The smoothers' eigenvalue estimates take PETSc's options for them (-mg_levels_esteig_ksp_*):
# its monitor shows 10 steps by default (PETSc's), 4 when told.
if is_built bratu2d; then
  esteig="-da_grid_x 33 -da_grid_y 33 -pc_type mg -pc_mg_levels 3 -stn_levels_mat_type sgdia"
  for steps in 10 4; do
    given=""
    [ $steps = 10 ] || given="-mg_levels_esteig_ksp_max_it $steps"
    # shellcheck disable=SC2086
    run "$LOG/mg.esteig.$steps" "$OUT/bratu2d" $esteig -mg_levels_esteig_ksp_monitor $given
    rc=$?
    most=$(awk '/KSP Residual norm/ {if ($1 + 0 > m) m = $1 + 0} END {print m + 0}' "$LOG/mg.esteig.$steps")
    if solved "$LOG/mg.esteig.$steps" $rc && [ "$most" = "$steps" ]; then
      ok "multigrid: bratu2d, the smoothers' eigenvalue estimates take $steps steps${given:+ ($given)}"
    else
      bad "multigrid: bratu2d ${given:-with the defaults}: the estimates' monitor shows $most steps, not $steps (exit $rc)"
      show "$LOG/mg.esteig.$steps"
    fi
  done
  # shellcheck disable=SC2086
  run "$LOG/mg.esteig.0" "$OUT/bratu2d" $esteig -mg_levels_esteig_ksp_max_it 0
  rc=$?
  if [ $rc -ne 0 ] && grep -q "esteig_ksp_max_it 0: the smoothers' eigenvalue estimate needs at least one step" "$LOG/mg.esteig.0"; then
    ok "multigrid: bratu2d -mg_levels_esteig_ksp_max_it 0 is refused (exit $rc), saying why"
  else
    bad "multigrid: bratu2d -mg_levels_esteig_ksp_max_it 0: exit $rc, without the message"
    show "$LOG/mg.esteig.0"
  fi
fi
# Grid sequencing with multigrid: every grid's levels change size between the solves.
if is_built bratu2d; then
  for t in aij sgdia; do
    run "$LOG/mg.gs.$t" "$OUT/bratu2d" -da_grid_x 17 -da_grid_y 17 -snes_grid_sequence 2 -pc_type mg -pc_mg_levels 2 -mg_levels_pc_type jacobi -mg_levels_ksp_max_it 3 \
      -stn_levels_mat_type $t -snes_converged_reason -ksp_converged_reason
    echo $? >"$LOG/mg.gs.$t.rc"
  done
  a=$(krylov "$LOG/mg.gs.aij") s=$(krylov "$LOG/mg.gs.sgdia")
  if solved "$LOG/mg.gs.sgdia" "$(cat "$LOG/mg.gs.sgdia.rc")" && [ -n "$s" ] && [ "$a" = "$s" ]; then
    ok "multigrid: bratu2d -snes_grid_sequence 2 -pc_type mg, 2 levels on every grid: Krylov [ $s] with SG-DIA levels = AIJ levels"
  else
    bad "multigrid: bratu2d -snes_grid_sequence 2 -pc_type mg: Krylov [ $s] with SG-DIA levels against [ $a] with AIJ levels"
    show "$LOG/mg.gs.sgdia"
  fi
  # on 3 ranks: each refined grid gets new transfers and a new gather for its coarsest grid
  mpirun 3 "$LOG/mg.gs.sgdia.3" "$OUT/bratu2d" -da_grid_x 17 -da_grid_y 17 -snes_grid_sequence 2 -pc_type mg -pc_mg_levels 2 -mg_levels_pc_type jacobi \
    -mg_levels_ksp_max_it 3 -stn_levels_mat_type sgdia -snes_converged_reason -ksp_converged_reason
  rc=$?
  s3=$(krylov "$LOG/mg.gs.sgdia.3")
  if solved "$LOG/mg.gs.sgdia.3" $rc && [ -n "$s3" ] && [ "$s3" = "$s" ]; then
    ok "multigrid: bratu2d -snes_grid_sequence 2 -pc_type mg on 3 ranks, SG-DIA levels: Krylov [ $s3] = one rank's"
  else
    bad "multigrid: bratu2d -snes_grid_sequence 2 -pc_type mg on 3 ranks: Krylov [ $s3] against one rank's [ $s]"
    show "$LOG/mg.gs.sgdia.3"
  fi
fi
if is_built bratu2d; then
  counts="" most=""  # most: the largest count per Newton step, per grid
  for n in 33 65 129; do
    run "$LOG/mg.flat.$n" "$OUT/bratu2d" -da_grid_x $n -da_grid_y $n -pc_type mg -stn_levels_mat_type sgdia -ksp_converged_reason
    rc=$?
    solved "$LOG/mg.flat.$n" $rc || counts="$counts failed"
    counts="$counts [ $(krylov "$LOG/mg.flat.$n")]"
    most="$most $(awk '/Linear solve converged/ {if ($NF > m) m = $NF} END {print m + 0}' "$LOG/mg.flat.$n")"
  done
  spread=$(echo "$most" | tr ' ' '\n' | awk 'NF {if (min == "" || $1 < min) min = $1; if ($1 > max) max = $1} END {print max - min}')
  case $counts in
    *failed*) bad "multigrid: bratu2d at 33, 65, 129 points, levels from the grid:$counts" ;;
    *) if [ "$spread" -le 2 ]; then ok "multigrid: bratu2d at 33, 65, 129 points, levels from the grid: Krylov counts$counts, the largest per grid within 2"
       else bad "multigrid: bratu2d Krylov counts$counts grow with the grid"; fi ;;
  esac
  # --explain's hierarchy is the one the program builds (a 129 x 129 default grid)
  sed 's/: 4 points/: 129 points/' examples/bratu2d.stn >"$OUT/bratu129.stn"
  said=$("$STENCILC" --explain "$OUT/bratu129.stn" | awk '$2 ~ /^levels?/ && $1 ~ /^[0-9]+$/ {print $1}')
  run "$LOG/mg.levels" "$OUT/bratu2d" -da_grid_x 129 -da_grid_y 129 -pc_type mg -stn_levels_mat_type sgdia -ksp_view -snes_max_it 1
  made=$(grep -m1 -o "levels=[0-9]*" "$LOG/mg.levels" | cut -d= -f2)
  if [ -n "$said" ] && [ "$said" = "$made" ]; then ok "multigrid: --explain's $said levels at 129 x 129 are the program's"
  else bad "multigrid: --explain says ${said:-no} levels at 129 x 129, the program builds ${made:-none}"; fi
fi
# Equations in plain difference quotients (heat2d: the diagonal as h^-2) do not suit rediscretized
# coarse grids: the GPU's default is Jacobi for them, and --explain says why; multiplied by the
# cell size (hx*hy) they do. The powers come from the derived diagonal (codegen/ir/ir_scaling.c).
sed 's/^  interior: *\(.*\);$/  interior: hx * hy * (\1);/' examples/heat2d.stn >"$OUT/heat2d_cell.stn"
plain=$("$STENCILC" --explain examples/heat2d.stn | grep -c "equation of T scales as h^-2, not as the cell size")
cell=$("$STENCILC" --explain "$OUT/heat2d_cell.stn" | grep -c "scales as h^")
power=$("$STENCILC" examples/heat2d.stn -o "$OUT/heat2d_power" --emit-dir "$OUT/heat2d_power.src" >/dev/null 2>&1 &&
        grep -h "h_power\[DOF\] =" "$OUT/heat2d_power.src/heat2d.c")
if [ "$plain" = 1 ] && [ "$cell" = 0 ] && grep -q "hx \* hy \* (k" "$OUT/heat2d_cell.stn" && [ "$power" = "static const PetscInt h_power[DOF] = {-2};" ]; then
  ok "multigrid: heat2d's interior equation scales as h^-2 (Jacobi on the GPU, --explain says so), times hx*hy as h^0"
else bad "multigrid: the scaling of heat2d's equation: --explain plain $plain, scaled $cell, generated '$power'"; fi
# The same hierarchy on several ranks (the GPU's, run here on CPUs): the transfers on each rank's
# box, the coarsest grid inverted on every rank; its Krylov counts are one rank's, since Jacobi,
# Chebyshev and the dense coarse solve do not depend on the split (3 ranks: 65 points as 22, 22, 21).
if is_built bratu2d && is_built cavity; then
  for case in "bratu2d -da_grid_x 65 -da_grid_y 65" "cavity -da_grid_x 65 -da_grid_y 65 -lidvelocity 10 -grashof 1000"; do
    # shellcheck disable=SC2086 # a case is a word list
    set -- $case
    ex=$1
    shift
    for n in 1 3 4; do
      # shellcheck disable=SC2086
      mpirun "$n" "$LOG/mg.ranks.$ex.$n" "$OUT/$ex" "$@" $MG -stn_levels_mat_type sgdia -snes_view_solution "binary:$LOG/mg.ranks.$ex.$n.bin"
      echo $? >"$LOG/mg.ranks.$ex.$n.rc"
    done
    k1=$(krylov "$LOG/mg.ranks.$ex.1")
    for n in 3 4; do
      kn=$(krylov "$LOG/mg.ranks.$ex.$n")
      d=$(same "$LOG/mg.ranks.$ex.$n.bin" "$LOG/mg.ranks.$ex.1.bin" 1e-8)
      if solved "$LOG/mg.ranks.$ex.$n" "$(cat "$LOG/mg.ranks.$ex.$n.rc")" && [ -n "$kn" ] && [ "$kn" = "$k1" ] &&
         same_ok "$LOG/mg.ranks.$ex.$n.bin" "$LOG/mg.ranks.$ex.1.bin" 1e-8; then
        ok "multigrid: $ex $* on $n ranks, SG-DIA levels: Krylov [ $kn] = one rank's, solution rel diff $d"
      else
        bad "multigrid: $ex $* on $n ranks, SG-DIA levels: Krylov [ $kn] against one rank's [ $k1], rel diff $d"
        show "$LOG/mg.ranks.$ex.$n"
      fi
    done
  done
fi
section_done multigrid

# ---- 4 MPI: 1 to 4 ranks, storage formats, preconditioners -------------------
# (3 ranks split the medium grids unevenly: 17 points as 6, 6, 5)
for ex in $EXAMPLES; do
  is_built "$ex" || continue
  ref=$OUT/sol/$ex.1.bin
  its1=""
  for n in 1 2 3 4; do
    l=$LOG/mpi.$ex.$n
    sol=$OUT/sol/$ex.$n.bin
    # shellcheck disable=SC2046,SC2086
    mpirun "$n" "$l" "$OUT/$ex" $(medium "$ex") -pc_type jacobi $TIGHT -snes_view_solution "binary:$sol"
    rc=$?
    its=$(newton "$l")
    if ! solved "$l" $rc; then
      bad "mpi: $ex on $n rank(s) did not solve (exit status $rc)"
      show "$l"
      continue
    fi
    if [ "$n" = 1 ]; then
      its1=$its
      ok "mpi: $ex on 1 rank: $its Newton iterations"
      continue
    fi
    d=$(same "$sol" "$ref" 1e-10)
    if [ -n "$its1" ] && [ "$its" = "$its1" ] && same_ok "$sol" "$ref" 1e-10; then
      ok "mpi: $ex on $n ranks: $its Newton iterations, solution rel diff $d"
    else
      bad "mpi: $ex on $n ranks: $its Newton iterations (1 rank: ${its1:-?}), solution rel diff $d (limit 1e-10)"
    fi
  done
  # The first Newton iterate x1 = x0 - J(x0)^-1 F(x0), which depends on the
  # Jacobian and not only on the residual (a converged solution does not):
  # the same on 2 and 4 ranks, and with -stn_mat_type aij.
  for variant in "1:-pc_type jacobi" "2:-pc_type jacobi" "4:-pc_type jacobi" "1:-stn_mat_type aij -pc_type jacobi"; do
    n=${variant%%:*} opts=${variant#*:}
    l=$LOG/first.$ex.$n.$(echo "$opts" | tr -c 'a-z0-9\n' '_')
    # shellcheck disable=SC2046,SC2086
    mpirun "$n" "$l" "$OUT/$ex" $(medium "$ex") $opts -ksp_rtol 1e-12 -snes_max_it 1 -snes_view_solution "binary:$l.bin"
    rc=$?
    if [ "$variant" = "1:-pc_type jacobi" ]; then first=$l.bin; continue; fi
    d=$(same "$l.bin" "$first" 1e-10)
    if grep -q -e 'after 1 Newton iteration' -e 'solved in 1 Newton iteration' "$l" && same_ok "$l.bin" "$first" 1e-10; then
      ok "mpi: $ex first Newton iterate, $opts on $n rank(s) = 1 rank sgdia (rel diff $d)"
    else
      bad "mpi: $ex first Newton iterate, $opts on $n rank(s): exit status $rc, rel diff from 1 rank sgdia $d (limit 1e-10)"
      show "$l"
    fi
  done
  # The converged solve with other Jacobian storage or preconditioners
  # (those other than none/jacobi/pbjacobi through the AIJ copy): the same solution.
  for variant in "2:-stn_mat_type aij -pc_type jacobi" "1:-pc_type ilu" "2:-pc_type bjacobi" "4:-pc_type pbjacobi"; do
    n=${variant%%:*} opts=${variant#*:}
    l=$LOG/var.$ex.$n.$(echo "$opts" | tr -c 'a-z0-9\n' '_')
    sol=$l.bin
    # shellcheck disable=SC2046,SC2086
    mpirun "$n" "$l" "$OUT/$ex" $(medium "$ex") $opts $TIGHT -snes_view_solution "binary:$sol"
    rc=$?
    d=$(same "$sol" "$ref" 1e-10)
    if solved "$l" $rc && same_ok "$sol" "$ref" 1e-10; then
      ok "mpi: $ex $opts on $n rank(s) = sgdia/jacobi (rel diff $d)"
    else
      bad "mpi: $ex $opts on $n rank(s): exit status $rc, rel diff from sgdia/jacobi $d (limit 1e-10)"
      show "$l"
    fi
  done
done

# Multigrid and hypre, on the problems they suit: GAMG on the symmetric Bratu
# problem, hypre's BoomerAMG on both.
hypre=1
for case in "bratu2d:1:-pc_type gamg" "bratu2d:2:-pc_type gamg" "bratu2d:1:-pc_type hypre" \
            "cavity:1:-pc_type hypre" "cavity:2:-pc_type hypre"; do
  ex=${case%%:*} rest=${case#*:}
  n=${rest%%:*} opts=${rest#*:}
  is_built "$ex" || continue
  case $opts in *hypre*) [ $hypre = 1 ] || continue ;; esac
  l=$LOG/pc.$ex.$n.$(echo "$opts" | tr -c 'a-z0-9\n' '_')
  # shellcheck disable=SC2046,SC2086
  mpirun "$n" "$l" "$OUT/$ex" $(medium "$ex") $opts $TIGHT -snes_view_solution "binary:$l.bin"
  rc=$?
  if grep -q 'Unable to find requested PC type hypre' "$l"; then
    note "this PETSc has no hypre; skipping the -pc_type hypre runs"
    hypre=0
    continue
  fi
  d=$(same "$l.bin" "$OUT/sol/$ex.1.bin" 1e-10)
  if solved "$l" $rc && same_ok "$l.bin" "$OUT/sol/$ex.1.bin" 1e-10; then
    ok "mpi: $ex $opts on $n rank(s) converges: $(newton "$l") Newton iterations, rel diff $d"
  else
    bad "mpi: $ex $opts on $n rank(s): exit status $rc, rel diff $d"
    show "$l"
  fi
done

section_done mpi

# ---- 5 failure modes ---------------------------------------------------------
if is_built bratu2d; then
  REASON='the solve failed after [0-9][0-9]* Newton iterations, residual norm [^:]*: [A-Za-z].* (DIVERGED_[A-Z_]*)$'
  # fail_case LABEL N ARGS...: must exit 1 (2 ranks: non-zero) saying why.
  fail_case() {
    label=$1 n=$2
    shift 2
    l=$LOG/fail.$(echo "$label" | tr -c 'a-z0-9\n' '_')
    if [ "$n" = 1 ]; then run "$l" "$OUT/bratu2d" "$@"; else mpirun "$n" "$l" "$OUT/bratu2d" "$@"; fi
    rc=$?
    if { [ $rc -eq 1 ] || { [ "$n" != 1 ] && [ $rc -ne 0 ] && [ $rc -lt 124 ]; }; } && grep -q "bratu2d: $REASON" "$l"; then
      ok "failure: $label exits $rc: $(grep -o -m 1 'the solve failed.*' "$l")"
    else
      bad "failure: $label: exit status $rc (expected 1) and/or no 'the solve failed ...: REASON (DIVERGED_...)' line"
      show "$l"
    fi
  }
  fail_case "bratu2d -par 6.81 on 65x65 (beyond the turning point)" 1 -par 6.81 -da_grid_x 65 -da_grid_y 65
  fail_case "bratu2d -par 6.81 on 65x65 with Newton alone (-pc_type lu)" 1 -par 6.81 -da_grid_x 65 -da_grid_y 65 -pc_type lu
  fail_case "bratu2d -snes_max_it 1" 1 -da_grid_x 17 -da_grid_y 17 -snes_max_it 1
  fail_case "bratu2d -snes_max_it 1 on 2 ranks" 2 -da_grid_x 17 -da_grid_y 17 -snes_max_it 1 -pc_type jacobi
  if grep -q 'did not converge within -snes_max_it' "$LOG/fail.bratu2d__snes_max_it_1"; then :; else
    bad "failure: -snes_max_it 1 does not say that it reached -snes_max_it"
  fi

  # The report names the method that ran, and says what one linear solve (ksponly) left.
  for m in "ngmres:solved in [0-9]* nonlinear GMRES iterations" "ncg:solved in [0-9]* nonlinear CG iterations" \
           "newtontr:solved in [0-9]* trust-region Newton iterations" \
           "ksponly:one linear solve done (-snes_type ksponly), residual norm [0-9.e-]*: the equations hold only if they are linear"; do
    t=${m%%:*} want=${m#*:}
    l=$LOG/report.$t
    run "$l" "$OUT/bratu2d" -da_grid_x 17 -da_grid_y 17 -snes_type "$t" -snes_max_it 200
    rc=$?
    if [ $rc -eq 0 ] && grep -q -- "bratu2d: $want" "$l" && ! grep -q "residual norm 0[^.0-9]" "$l"; then
      ok "report: -snes_type $t: $(grep -o -m 1 'bratu2d: .*' "$l")"
    else
      bad "report: -snes_type $t: exit $rc, no 'bratu2d: $want' line"
      show "$l"
    fi
  done

  for v in 7 -1; do
    l=$LOG/fail.par.$v
    run "$l" "$OUT/bratu2d" -par "$v"
    rc=$?
    if [ $rc -ne 0 ] && [ $rc -lt 124 ] && grep -q -- "-par $v.* is out of range.*\[0, 6.81\]" "$l" && ! grep -q 'solved in' "$l"; then
      ok "failure: bratu2d -par $v is refused (exit $rc): $(grep -o -m 1 -- '-par .* is out of range.*' "$l")"
    else
      bad "failure: bratu2d -par $v: exit status $rc, expected non-zero with '-par $v is out of range ... [0, 6.81]'"
      show "$l"
    fi
  done
  for g in "bratu2d -da_grid_x 2:-da_grid_x 2 is too small" "sfi3d -da_grid_z 2:-da_grid_z 2 is too small" \
           "heat2d -da_grid_x 2:-da_grid_x 2 is too small"; do
    cmdl=${g%%:*} want=${g#*:}
    ex=${cmdl%% *} opt=${cmdl#* }
    is_built "$ex" || continue
    l=$LOG/fail.grid.$ex
    # shellcheck disable=SC2086
    run "$l" "$OUT/$ex" $opt
    rc=$?
    if [ $rc -ne 0 ] && [ $rc -lt 124 ] && grep -q -- "$want.*at least 3 points" "$l"; then
      ok "failure: $cmdl is refused (exit $rc): $(grep -o -m 1 -- "$want.*" "$l")"
    else
      bad "failure: $cmdl: exit status $rc, expected non-zero with '$want ... at least 3 points'"
      show "$l"
    fi
  done
fi
# PETSc's convergence on a small step with the residual far above the tolerances is not called
# a solution (the trust region shrinks to nothing on the hard cavity from its default guess).
if is_built cavity; then
  l=$LOG/report.snorm
  run "$l" "$OUT/cavity" -snes_type newtontr -lidvelocity 100 -grashof 1e4
  rc=$?
  want="cavity: not solved: trust-region Newton stopped after [0-9]* iterations because its step became small (-snes_stol), but the residual norm only fell from [0-9.e+]* to [0-9.e+]*"
  if [ $rc -eq 1 ] && grep -q -- "$want" "$l" && ! grep -q "solved in" "$l"; then ok "report: $(grep -o -m 1 'not solved: .*' "$l")"
  else bad "report: cavity -snes_type newtontr -lidvelocity 100 -grashof 1e4: exit $rc, no 'not solved: ... step became small' line"; show "$l"; fi
fi
# A parameter given with no value is an error, not ignored; a default computed from other
# options that leaves its range names what it was computed from.
rm -f "$OUT/param_deps"
if timeout "$RUN_TIMEOUT" "$STENCILC" tests/solve/param_deps.stn -o "$OUT/param_deps" >"$LOG/param_deps.stencilc" 2>&1; then
  for c in "-b:-b was given without a value: write -b <number>" \
           "-a 5:-b's default, 50., computed from -a and the grid, is out of range: param_deps.stn:10 allows \[0, 20\]" \
           "-da_grid_x 33 -da_grid_y 33:-b's default, 40., computed from -a and the grid, is out of range" \
           "-b 30:-b 30. is out of range: param_deps.stn:10 allows \[0, 20\]"; do
    opts=${c%%:*} want=${c#*:}
    l=$LOG/param_deps.$(echo "$opts" | tr -c 'a-z0-9\n' '_')
    # shellcheck disable=SC2086
    run "$l" "$OUT/param_deps" $opts
    rc=$?
    if [ $rc -ne 0 ] && [ $rc -lt 124 ] && grep -q -- "$want" "$l"; then ok "failure: param_deps $opts is refused: $(grep -o -m 1 -- "${want%%\\*}.*" "$l")"
    else bad "failure: param_deps $opts: exit $rc, no '$want'"; show "$l"; fi
  done
else
  bad "failure: $STENCILC_SRC tests/solve/param_deps.stn does not build"
  show "$LOG/param_deps.stencilc"
fi
# A NaN in the Jacobian is named, with its grid point and entry, not as "the linear solver failed".
rm -f "$OUT/nan_jacobian"
if timeout "$RUN_TIMEOUT" "$STENCILC" tests/solve/nan_jacobian.stn -o "$OUT/nan_jacobian" >"$LOG/nan.stencilc" 2>&1; then
  for n in 1 2; do
    nl=$LOG/fail.nan.$n
    if [ $n = 1 ]; then run "$nl" "$OUT/nan_jacobian"; else mpirun 2 "$nl" "$OUT/nan_jacobian"; fi
    rc=$?
    want="the Jacobian is NaN at grid point (1, 1): dF_u/du\[0,0\], a derivative the .stn's expressions leave undefined"
    if [ $rc -ne 0 ] && [ $rc -lt 124 ] && grep -q "nan_jacobian: the solve failed .*$want.*(DIVERGED_LINEAR_SOLVE)" "$nl"; then
      ok "failure: a NaN derivative on $n rank(s) is named: $(grep -o -m 1 'the Jacobian is NaN at grid point ([^)]*): [^ ]*' "$nl")"
    else
      bad "failure: nan_jacobian.stn on $n rank(s): exit $rc, no 'the Jacobian is NaN at grid point (1, 1) ...' line"
      show "$nl"
    fi
  done
else
  bad "failure: $STENCILC_SRC tests/solve/nan_jacobian.stn does not build"
  show "$LOG/nan.stencilc"
fi

section_done failures

# ---- 6 reproducible output -------------------------------------------------
# The same .stn compiled again (same -o), and a copy of it in another
# directory: the same C, byte for byte (build.log names the paths: skipped).
# The first build is the one at the top of this script.
# samedir A B: prints the files that differ between two --emit-dir outputs.
samedir() {
  for f in $( { ls "$1"; ls "$2"; } | sort -u | grep -v '^build\.log$'); do
    cmp -s "$1/$f" "$2/$f" || printf ' %s' "$f"
  done
}
# samedirs EX A B WHAT: one check line for two --emit-dir outputs of EX.
samedirs() {
  diffs=$(samedir "$OUT/$1.$2" "$OUT/$1.$3")
  files=$(cd "$OUT/$1.$3" && for f in *; do [ "$f" = build.log ] || printf '%s ' "$f"; done)
  if [ -z "$diffs" ]; then
    ok "reproducible: $1.stn $4 gives identical ${files% }"
  else
    bad "reproducible: $1.stn $4 gives different:$diffs"
    for f in $diffs; do diff "$OUT/$1.$2/$f" "$OUT/$1.$3/$f" 2>&1 | head -n 6 | sed 's/^/  | /'; done
  fi
}
mkdir -p "$OUT/elsewhere"
for ex in $built; do
  rm -rf "$OUT/$ex.src2" "$OUT/$ex.src3"
  if timeout "$RUN_TIMEOUT" "$STENCILC" "examples/$ex.stn" -o "$OUT/$ex" --emit-dir "$OUT/$ex.src2" >"$LOG/$ex.again" 2>&1; then
    samedirs "$ex" src src2 "compiled twice"
  else
    bad "reproducible: $STENCILC_SRC examples/$ex.stn failed the second time"
    show "$LOG/$ex.again"
  fi
  # One example also from a copy in another directory (a compile costs time).
  [ "$ex" = cavity ] || continue
  cp "examples/$ex.stn" "$OUT/elsewhere/$ex.stn"
  if timeout "$RUN_TIMEOUT" "$STENCILC" "$OUT/elsewhere/$ex.stn" -o "$OUT/$ex" --emit-dir "$OUT/$ex.src3" >>"$LOG/$ex.again" 2>&1; then
    samedirs "$ex" src src3 "compiled from a copy in $OUT/elsewhere"
  else
    bad "reproducible: $STENCILC_SRC $OUT/elsewhere/$ex.stn failed"
    show "$LOG/$ex.again"
  fi
done

section_done reproducible

# ---- 7 VTK output --------------------------------------------------------------
if is_built cavity; then
  for n in 1 2; do
    vts=$OUT/cavity.$n.vts
    l=$LOG/vts.$n
    # shellcheck disable=SC2046
    mpirun "$n" "$l" "$OUT/cavity" $(medium cavity) -stn_output "$vts"
    rc=$?
    size=$(wc -c <"$vts" 2>/dev/null || echo 0)
    why=""
    solved "$l" $rc || why="exit status $rc"
    [ "$size" -gt 4000 ] || why="${why:+$why; }$vts has $size bytes"
    grep -q "^<VTKFile type=\"StructuredGrid\"" "$vts" 2>/dev/null || why="${why:+$why; }not a VTK StructuredGrid file"
    for f in u v omega temp; do
      grep -a -q "Name=\"\([^\"]*\.\)\{0,1\}$f\"" "$vts" 2>/dev/null || why="${why:+$why; }no field $f"
    done
    grep -qF "$vts" "$l" || why="${why:+$why; }the program does not say where the file went"
    if [ -z "$why" ]; then
      ok "output: cavity -stn_output on $n rank(s) writes $vts ($size bytes, fields u v omega temp) and says so"
    else
      bad "output: cavity -stn_output on $n rank(s): $why"
      show "$l"
    fi
  done
fi

section_done output

# ---- 8 outputs that cannot be written, and what the solve hands them -----------
# A failed write leaves nothing half-written and says so, non-zero: a full file system (a 64 KiB
# tmpfs, in a private mount namespace), a link to /dev/full (which stays a link), a missing or
# read-only directory (found before the solve). A failed solve writes its last iterate and says
# so; under -snes_grid_sequence the .vts holds the finest grid.
if is_built bratu2d; then
  # refused LABEL PATTERN ARGS...: a non-zero exit (not a timeout) whose log has PATTERN.
  refused() {
    label=$1 want=$2
    shift 2
    l=$LOG/out.$(echo "$label" | tr -c 'a-z0-9\n' '_')
    run "$l" "$@"
    rc=$?
    if [ $rc -ne 0 ] && [ $rc -lt 124 ] && grep -q -e "$want" "$l"; then ok "$label: exit $rc, $(grep -o -m 1 -e "$want.*" "$l" | cut -c1-160)"
    else bad "$label: exit $rc, no '$want'"; show "$l"; fi
  }
  D=$OUT/outdir
  rm -rf "$D" && mkdir -p "$D"
  refused "output: -stn_output into a missing directory is refused before the solve" \
    "-stn_output $D/no/such/x.vts: cannot write there (No such file or directory); nothing was solved" "$OUT/bratu2d" -stn_output "$D/no/such/x.vts"
  grep -q "solved in" "$l" &&
    bad "output: the missing directory was found only after the solve"
  refused "output: -stn_output x.vtk is refused (PETSc's writer needs .vts)" "-stn_output $D/x.vtk: the name must end in .vts" "$OUT/bratu2d" -stn_output "$D/x.vtk"
  ln -s /dev/full "$D/full.vts"
  refused "output: -stn_output through a link to /dev/full" "cannot write the solution to $D/full.vts: No space left on device" "$OUT/bratu2d" -stn_output "$D/full.vts"
  [ -L "$D/full.vts" ] || bad "output: -stn_output replaced the link to /dev/full"
  if command -v gnuplot >/dev/null 2>&1; then
    ln -s /dev/full "$D/full.png"
    refused "output: -stn_plot_solution through a link to /dev/full" "cannot write the solution picture to $D/full.png: No space left on device" \
      "$OUT/bratu2d" -stn_plot_solution "$D/full.png"
    [ -L "$D/full.png" ] || bad "output: -stn_plot_solution replaced the link to /dev/full"
    grep -q "drawn in $D/full.png" "$l" && bad "output: the picture into /dev/full was said to be drawn"
  else
    note "gnuplot is not installed: the pictures' failures were not tried"
  fi
  # A full file system: a tmpfs with 16 KiB left, mounted in a namespace of our own; every
  # output fails, each says so, and the directory holds nothing but what filled it.
  mkdir -p "$D/full"
  if unshare -m sh -c 'mount -t tmpfs -o size=64k tmpfs "$1"' sh "$D/full" 2>/dev/null; then
    l=$LOG/out.fullfs
    pics=""
    command -v gnuplot >/dev/null 2>&1 && pics="-stn_plot_solution $D/full/u.png -stn_plot_convergence $D/full/c.png"
    # shellcheck disable=SC2086
    timeout "$RUN_TIMEOUT" unshare -m sh -c 'd=$1; shift
      mount -t tmpfs -o size=64k tmpfs "$d" && dd if=/dev/zero of="$d/filler" bs=1k count=48 2>/dev/null || exit 99
      "$@"; rc=$?; ls -A "$d" >"$d.left"; exit $rc' sh "$D/full" \
      "$OUT/bratu2d" -da_grid_x 65 -da_grid_y 65 -stn_output "$D/full/u.vts" $pics >"$l" 2>&1
    rc=$?
    left=$(cat "$D/full.left" 2>/dev/null | tr '\n' ' ')
    why=""
    { [ $rc -ne 0 ] && [ $rc -lt 124 ]; } || why="exit $rc"
    grep -q "cannot write the solution to $D/full/u.vts: No space left on device; nothing was written there" "$l" || why="$why; no sentence for the .vts"
    [ -z "$pics" ] || grep -q "cannot write the solution picture to $D/full/u.png" "$l" || why="$why; no sentence for the picture"
    [ "$left" = "filler " ] || why="$why; the file system holds: $left"
    if [ -z "$why" ]; then ok "output: a full file system: exit $rc, every output says it could not be written, nothing half-written remains"
    else bad "output: a full file system: $why"; show "$l"; fi
  else
    note "cannot mount a tmpfs in a private namespace (unshare -m, as root): the full file system was not tried"
  fi
  # A read-only directory (root writes into any mode 555 directory: a read-only mount then).
  mkdir -p "$D/ro"
  if [ "$(id -u)" != 0 ]; then
    chmod 555 "$D/ro"
    refused "output: -stn_output into a read-only directory is refused before the solve" "-stn_output $D/ro/x.vts: cannot write there (Permission denied)" \
      "$OUT/bratu2d" -stn_output "$D/ro/x.vts"
    chmod 755 "$D/ro"
  elif unshare -m true 2>/dev/null; then
    l=$LOG/out.readonly
    timeout "$RUN_TIMEOUT" unshare -m sh -c 'mount -t tmpfs -o ro tmpfs "$1" && shift && exec "$@"' sh "$D/ro" \
      "$OUT/bratu2d" -stn_output "$D/ro/x.vts" >"$l" 2>&1
    rc=$?
    if [ $rc -ne 0 ] && [ $rc -lt 124 ] && grep -q -- "-stn_output $D/ro/x.vts: cannot write there (Read-only file system); nothing was solved" "$l" && ! grep -q "solved in" "$l"; then
      ok "output: -stn_output into a read-only file system is refused before the solve (exit $rc)"
    else bad "output: -stn_output into a read-only file system: exit $rc"; show "$l"; fi
  fi
  [ -z "$(find "$D" -name '.*.vts' -o -name '.*.png' 2>/dev/null)" ] ||
    bad "output: temporary files were left in $D: $(find "$D" -name '.*' 2>/dev/null | tr '\n' ' ')"

  # A failed solve writes its last iterate and says so (exit 1, the solve's).
  l=$LOG/out.failed
  run "$l" "$OUT/bratu2d" -da_grid_x 17 -da_grid_y 17 -snes_max_it 1 -stn_output "$D/last.vts"
  rc=$?
  if [ $rc -eq 1 ] && grep -q "the last iterate of the failed solve written to $D/last.vts" "$l" && grep -q '^<VTKFile' "$D/last.vts" 2>/dev/null; then
    ok "output: a failed solve writes its last iterate to -stn_output and says so"
  else bad "output: a failed solve: exit $rc, no last iterate in $D/last.vts"; show "$l"; fi

  # -snes_grid_sequence 2 refines the default 4 x 4 grid twice, to 13 x 13: the .vts is that grid.
  for n in 1 2; do
    l=$LOG/out.gridseq.$n
    mpirun "$n" "$l" "$OUT/bratu2d" -snes_grid_sequence 2 -stn_output "$D/gs.$n.vts"
    rc=$?
    ext=$(grep -a -o -m 1 'WholeExtent="[^"]*"' "$D/gs.$n.vts" 2>/dev/null)
    if solved "$l" $rc && [ "$ext" = 'WholeExtent="0 12 0 12 0 0"' ]; then ok "output: -snes_grid_sequence 2 on $n rank(s) writes the finest grid ($ext)"
    else bad "output: -snes_grid_sequence 2 on $n rank(s): exit $rc, $ext (expected the 13 x 13 grid, 0 12 0 12)"; show "$l"; fi
  done
fi
section_done outputs

# ---- 9 PETSc options that cannot work here, refused in words; those that can, working ----
if is_built bratu2d; then
  # refused_mpi LABEL N PATTERN ARGS...: on N ranks, a non-zero exit with PATTERN and no solve.
  refused_mpi() {
    label=$1 n=$2 want=$3
    shift 3
    l=$LOG/opt.$(echo "$label" | tr -c 'a-z0-9\n' '_')
    mpirun "$n" "$l" "$@"
    rc=$?
    if [ $rc -ne 0 ] && [ $rc -lt 124 ] && grep -q -e "$want" "$l" && ! grep -q "solved in" "$l"; then ok "$label: refused, $(grep -o -m 1 -e "$want.*" "$l" | cut -c1-150)"
    else bad "$label: exit $rc, no '$want'"; show "$l"; fi
  }
  refused_mpi "options: 5 ranks on bratu2d's 4 x 4 grid" 5 "5 MPI ranks are too many for this grid: .*-da_grid_y 4 over 5 ranks.*At most 4 ranks fit this grid" "$OUT/bratu2d"
  refused_mpi "options: -da_processors_x 3 on 4 ranks" 4 "cannot make up the 4 MPI ranks" "$OUT/bratu2d" -da_processors_x 3
  refused_mpi "options: -pc_type eisenstat on 2 ranks" 2 "-pc_type eisenstat runs on one rank only" "$OUT/bratu2d" -pc_type eisenstat
  refused_mpi "options: -pc_mg_galerkin with SG-DIA levels" 1 "-pc_mg_galerkin forms the coarse grids' operators as products" \
    "$OUT/bratu2d" -da_grid_x 17 -da_grid_y 17 -pc_type mg -pc_mg_galerkin -stn_levels_mat_type sgdia
  refused_mpi "options: -pc_mg_levels 0" 1 "-pc_mg_levels 0: give at least 1 level" "$OUT/bratu2d" -pc_type mg -pc_mg_levels 0
  refused_mpi "options: -stn_solve_repeat with -snes_grid_sequence" 1 "-stn_solve_repeat cannot be combined with -snes_grid_sequence" "$OUT/bratu2d" -stn_solve_repeat 2 -snes_grid_sequence 1
  refused_mpi "options: -pc_telescope_ignore_dm false" 1 "-pc_type telescope cannot use the grid" "$OUT/bratu2d" -pc_type telescope -pc_telescope_ignore_dm false
  if is_built heat2d && pkg-config --max-version=3.18.99 PETSc; then
    refused_mpi "options: -snes_fd_color on the periodic heat2d" 1 "-snes_fd_color on a periodic grid corrupts memory in PETSc" "$OUT/heat2d" -snes_fd_color
  fi
  for c in "1:-pc_type eisenstat" "2:-pc_type bjacobi -sub_pc_type eisenstat" "1:-pc_type telescope" "2:-pc_type telescope" \
           "4:-pc_type telescope -pc_telescope_reduction_factor 2" "2:-pc_type mg -pc_mg_levels 3 -pc_mg_galerkin"; do
    n=${c%%:*} opts=${c#*:}
    l=$LOG/opt.$n.$(echo "$opts" | tr -c 'a-z0-9\n' '_')
    # shellcheck disable=SC2086
    mpirun "$n" "$l" "$OUT/bratu2d" -da_grid_x 17 -da_grid_y 17 $opts $TIGHT -snes_view_solution "binary:$l.bin"
    rc=$?
    if solved "$l" $rc && [ -s "$l.bin" ]; then ok "options: $opts on $n rank(s) solves ($(newton "$l") Newton iterations)"
    else bad "options: $opts on $n rank(s): exit $rc"; show "$l"; fi
  done
  # -stn_solve_repeat 3: three solves from the same guess, each one's Krylov counts; the report and
  # -log_view's Solve stage are the last one's, the first two in stage Warm-up.
  r1=$LOG/opt.repeat.1 r3=$LOG/opt.repeat.3 # not l: mpirun sets it
  mg3="-da_grid_x 17 -da_grid_y 17 -pc_type mg -pc_mg_levels 3 -ksp_converged_reason"
  # shellcheck disable=SC2086
  mpirun 2 "$r1" "$OUT/bratu2d" $mg3 $TIGHT
  # shellcheck disable=SC2086
  mpirun 2 "$r3" "$OUT/bratu2d" $mg3 $TIGHT -stn_solve_repeat 3 -log_view
  rc=$?
  k1=$(awk '/Linear solve converged/ {printf "%s ", $NF}' "$r1")
  k3=$(awk '/Linear solve converged/ {printf "%s ", $NF}' "$r3")
  warm=$(awk '/--- Event Stage [0-9]+: Warm-up/ {t = 1} /--- Event Stage [0-9]+: Solve/ {t = 0} t && $1 == "SNESSolve" {print $2}' "$r3")
  last=$(awk '/--- Event Stage [0-9]+: Solve/ {t = 1} /--- Event Stage [0-9]+: (Main|Warm)/ {t = 0} t && $1 == "SNESSolve" {print $2}' "$r3")
  if solved "$r3" $rc && [ -n "$k1" ] && [ "$k3" = "$k1$k1$k1" ] && [ "$warm" = 2 ] && [ "$last" = 1 ] &&
     [ "$(grep 'solved in' "$r3")" = "$(grep 'solved in' "$r1")" ]; then ok "options: -stn_solve_repeat 3 on 2 ranks: Krylov [$k1] three times, the last solve reported and in stage Solve"
  else bad "options: -stn_solve_repeat 3: exit $rc, Krylov [$k3] against [$k1] per solve, Warm-up SNESSolve ${warm:-none}, Solve ${last:-none}"; show "$r3"; fi
fi
section_done options

# ---- 10 checkerboard: floor, ceil and mod ------------------------------------
if ! command -v python3 >/dev/null 2>&1; then
  note "checkerboard: python3 is not installed; not compared"
elif compile checkerboard tests/solve/checkerboard.stn; then
  for c in "17 17 2 10" "19 13 3 0.01"; do
    # shellcheck disable=SC2086
    set -- $c
    l=$LOG/checkerboard.$1x$2.$3
    run "$l" "$OUT/checkerboard" -da_grid_x "$1" -da_grid_y "$2" -nb "$3" -kappa "$4" \
      -snes_rtol 1e-12 -ksp_rtol 1e-13 -snes_view_solution "binary:$l.bin"
    rc=$?
    if solved "$l" $rc && python3 tests/solve/checkerboard.py "$@" "$l.bin" >"$l.ref" 2>&1; then
      ok "checkerboard: $(cat "$l.ref")"
    else bad "checkerboard $1x$2 -nb $3 -kappa $4: exit $rc, or the reference differs"; show "$l"; show "$l.ref"; fi
  done
  l=$LOG/checkerboard.jac
  run "$l" "$OUT/checkerboard" -nb 3 -pc_type jacobi -snes_test_jacobian -snes_max_it 2
  worst=$(sed -n 's/.*||J - Jfd||_F\/||J||_F = \([^,]*\),.*/\1/p' "$l" | awk 'BEGIN {m = -1} {if ($1 + 0 > m) m = $1 + 0} END {print m}')
  if awk -v m="$worst" 'BEGIN {exit !(m >= 0 && m <= 1e-6)}'; then ok "checkerboard: -snes_test_jacobian, max ||J - Jfd||/||J|| = $worst"
  else bad "checkerboard: -snes_test_jacobian ratio $worst"; show "$l"; fi
else
  bad "checkerboard: $STENCILC_SRC tests/solve/checkerboard.stn -o failed"; show "$LOG/checkerboard.stencilc"
fi
section_done checkerboard

# ---- 11 a jacobian block that uses its residual's lets -----------------------
SL=tests/solve/shared_lets.stn
SLH=tests/solve/shared_lets_hoisted.stn
# The compile-time check samples the entries written with the residual's lets:
# a wrong one (2*abs(u)^2 for 3*u^2) is refused.
sed 's/diag + 3\*abs(u)^2/diag + 2*abs(u)^2/' "$SL" >"$OUT/shared_lets_wrong.stn"
timeout "$RUN_TIMEOUT" "$STENCILC" --check "$OUT/shared_lets_wrong.stn" >"$LOG/shared_lets_wrong.stencilc" 2>&1
rc=$?
if [ $rc -eq 1 ] && grep -q "error: this Jacobian entry is not d(residual u)/d(u\[0,0\])" "$LOG/shared_lets_wrong.stencilc"; then
  ok "shared lets: a wrong entry written with the residual's let 'src' is refused at compile time"
else
  bad "shared lets: $OUT/shared_lets_wrong.stn: exit status $rc, expected 1 naming d(residual u)/d(u[0,0])"
  show "$LOG/shared_lets_wrong.stencilc"
fi
if compile shared_lets "$SL" && compile shared_lets_hoisted "$SLH"; then
  grep -q 'CheckEntry(v' "$OUT"/shared_lets.src/*.c ||
    note "no CheckEntry(...) call in the C of $SL: the run-time check of its entry may not run"
  for n in 1 2; do
    l=$LOG/shared_lets.check.$n
    if [ "$n" = 1 ]; then run "$l" "$OUT/shared_lets" -stn_check_jacobian; else mpirun 2 "$l" "$OUT/shared_lets" -stn_check_jacobian; fi
    rc=$?
    if solved "$l" "$rc"; then ok "shared lets: $SL passes -stn_check_jacobian on $n rank(s)"
    else bad "shared lets: $SL fails -stn_check_jacobian on $n rank(s) (exit status $rc)"; show "$l"; fi
  done
  l=$LOG/shared_lets.jac
  run "$l" "$OUT/shared_lets" -lambda 4 -pc_type jacobi -snes_test_jacobian -snes_max_it 2
  worst=$(sed -n 's/.*||J - Jfd||_F\/||J||_F = \([^,]*\),.*/\1/p' "$l" | awk 'BEGIN {m = -1} {if ($1 + 0 > m) m = $1 + 0} END {print m}')
  if awk -v m="$worst" 'BEGIN {exit !(m >= 0 && m <= 1e-6)}'; then ok "shared lets: -snes_test_jacobian, max ||J - Jfd||/||J|| = $worst"
  else bad "shared lets: -snes_test_jacobian ratio $worst"; show "$l"; fi
  # The same program with the lets hoisted to the top level: same Newton
  # iterations, same solution.
  for lam in 1 4; do
    # (run sets l: the logs of this pair are named by la and lh)
    la=$LOG/shared_lets.lambda$lam lh=$LOG/shared_lets_hoisted.lambda$lam
    run "$la" "$OUT/shared_lets" -lambda $lam $TIGHT -snes_view_solution "binary:$la.bin"
    rc=$?
    run "$lh" "$OUT/shared_lets_hoisted" -lambda $lam $TIGHT -snes_view_solution "binary:$lh.bin"
    rch=$?
    its=$(newton "$la") itsh=$(newton "$lh")
    if solved "$la" $rc && solved "$lh" $rch && [ "$its" = "$itsh" ] && same_ok "$la.bin" "$lh.bin" 1e-12; then
      ok "shared lets: -lambda $lam solves in $its Newton iterations as with the lets hoisted, solutions equal ($(same "$la.bin" "$lh.bin" 1e-12))"
    else
      bad "shared lets: -lambda $lam: $its Newton iterations (exit $rc), hoisted $itsh (exit $rch), solutions $(same "$la.bin" "$lh.bin" 1e-12)"
      show "$la"; show "$lh"
    fi
  done
else
  bad "shared lets: $STENCILC_SRC $SL or $SLH -o failed"; show "$LOG/shared_lets.stencilc"; show "$LOG/shared_lets_hoisted.stencilc"
fi
section_done shared-lets

# ---- 12 int, bool and choice parameters -----------------------------------
TP=tests/solve/typed_params.stn
# fixed B R S: the program with -blocks B, -reaction R and -shape S (0: checkerboard,
# 1: stripes) written as lets.
fixed() {
  sed "s/^param blocks: int = .*/let blocks = $1;/; s/^param reaction: bool = .*/let reaction = $2;/
       s/^param shape: .*/let checkerboard = 0; let stripes = 1; let shape = $3;/" "$TP" >"$OUT/typed_params_$1_$2_$3.stn"
  compile "typed_params_$1_$2_$3" "$OUT/typed_params_$1_$2_$3.stn"
}
if compile typed_params "$TP"; then
  for c in "2 0 0:" "3 0 0:-blocks 3" "3 1 0:-blocks 3 -reaction" "5 1 0:-blocks 5 -reaction true -r 20" "2 0 0:-reaction false -r 20" \
           "1 1 0:-blocks 1 -reaction 1" "3 0 1:-blocks 3 -shape stripes" "4 1 1:-shape STRIPES -blocks 4 -reaction" "2 0 0:-shape checkerboard"; do
    br=${c%%:*} opts=${c#*:}
    # shellcheck disable=SC2086
    set -- $br
    la=$LOG/typed_params.$1.$2.$3.$(echo "$opts" | tr -c 'a-z0-9\n' '_') lf=$LOG/typed_params_fixed.$1.$2.$3.$(echo "$opts" | tr -c 'a-z0-9\n' '_')
    rf=$(echo "$opts" | grep -o -- '-r [0-9]*')
    if ! fixed "$1" "$2" "$3"; then bad "typed params: the program with blocks = $1, reaction = $2, shape = $3 as lets does not build"; show "$LOG/typed_params_$1_$2_$3.stencilc"; continue; fi
    # shellcheck disable=SC2086
    run "$la" "$OUT/typed_params" $opts $TIGHT -snes_view_solution "binary:$la.bin"
    rc=$?
    # shellcheck disable=SC2086
    run "$lf" "$OUT/typed_params_$1_$2_$3" $rf $TIGHT -snes_view_solution "binary:$lf.bin"
    rcf=$?
    its=$(newton "$la") itsf=$(newton "$lf")
    if solved "$la" $rc && solved "$lf" $rcf && [ "$its" = "$itsf" ] && same_ok "$la.bin" "$lf.bin" 1e-12; then
      ok "typed params: '$opts' solves in $its Newton iterations as blocks = $1, reaction = $2, shape = $3 written as lets, solutions equal ($(same "$la.bin" "$lf.bin" 1e-12))"
    else
      bad "typed params: '$opts': $its Newton iterations (exit $rc), with lets $itsf (exit $rcf), solutions $(same "$la.bin" "$lf.bin" 1e-12)"
      show "$la"; show "$lf"
    fi
  done
  for c in "-blocks 2.5:Input string 2.5 has no integer value" "-blocks 0:-blocks 0. is out of range: typed_params.stn:16 allows \[1, 64\]" \
           "-blocks:-blocks was given without a value" "-reaction maybe:Unknown logical value: maybe" \
           "-shape rings:Unknown option rings for -shape. Available options: checkerboard stripes" \
           "-shape:-shape was given without a value: write -shape checkerboard or stripes"; do
    opts=${c%%:*} want=${c#*:}
    l=$LOG/typed_params.bad.$(echo "$opts" | tr -c 'a-z0-9\n' '_')
    # shellcheck disable=SC2086
    run "$l" "$OUT/typed_params" $opts
    rc=$?
    if [ $rc -ne 0 ] && [ $rc -lt 124 ] && grep -q -- "$want" "$l"; then ok "typed params: $opts is refused: $(grep -o -m 1 -- "${want%%\\*}.*" "$l")"
    else bad "typed params: $opts: exit $rc, no '$want'"; show "$l"; fi
  done
else
  bad "typed params: $STENCILC_SRC $TP -o failed"; show "$LOG/typed_params.stencilc"
fi
# A computed int default is checked when the program runs, unless the option replaces it.
sed 's/^param blocks: int = 2 in/param blocks: int = (nx - 1) \/ 4 in/' "$TP" >"$OUT/typed_params_computed.stn"
if compile typed_params_computed "$OUT/typed_params_computed.stn"; then
  l=$LOG/typed_params_computed.18
  run "$l" "$OUT/typed_params_computed" -da_grid_x 18
  rc=$?
  want="-blocks's default, 4.25, is not a whole number: typed_params_computed.stn:16 declares it int; give -blocks"
  if [ $rc -ne 0 ] && [ $rc -lt 124 ] && grep -q -- "$want" "$l"; then ok "typed params: a computed default 17/4 is refused: $want"
  else bad "typed params: -da_grid_x 18: exit $rc, no '$want'"; show "$l"; fi
  l=$LOG/typed_params_computed.given
  run "$l" "$OUT/typed_params_computed" -da_grid_x 18 -blocks 3
  rc=$?
  if solved "$l" $rc; then ok "typed params: the computed default is not checked when -blocks 3 replaces it"
  else bad "typed params: -da_grid_x 18 -blocks 3: exit $rc"; show "$l"; fi
else
  bad "typed params: $OUT/typed_params_computed.stn does not build"; show "$LOG/typed_params_computed.stencilc"
fi
section_done typed-params

# ---- 13 an approximate jacobian block: Picard preconditions, Newton stays exact ----
ND=examples/nldiffusion2d.stn
# The reference: the same residual with every Jacobian entry derived.
sed '/^jacobian u approximate {/,/^}/d' "$ND" >"$OUT/nldiffusion2d_exact.stn"
# fnorm0 LOGFILE: the residual norm before the first Newton step (-snes_monitor).
fnorm0() { sed -n 's/^ *0 SNES Function norm \([^ ]*\).*/\1/p' "$1" | head -n 1; }
# krylov LOGFILE: the Krylov iterations of the solve (-ksp_converged_reason), in all.
krylov() { sed -n 's/.*Linear solve converged due to .* iterations \([0-9]*\).*/\1/p' "$1" | awk '{s += $1} END {print s + 0}'; }
# close A B TOL: |A - B| <= TOL * |B|.
close() { awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN {d = a - b; if (d < 0) d = -d; m = b < 0 ? -b : b; exit !(a != "" && d <= t * m)}'; }
if grep -q '^jacobian u approximate {' "$ND" && ! grep -q '^jacobian' "$OUT/nldiffusion2d_exact.stn" &&
   compile nldiffusion2d "$ND" && compile nldiffusion2d_exact "$OUT/nldiffusion2d_exact.stn"; then
  grep -q 'FormJacobianExactLocal(info, x, J, user)' "$OUT/nldiffusion2d.src/nldiffusion2d.c" ||
    bad "approximate: the C of $ND does not fill the operator with FormJacobianExactLocal"
  # (case: the options of both runs; each also runs tight tolerances with a monitor)
  for c in "ilu:-kappa 1" "ilu5:-kappa 5 -q 40" "jacobi:-pc_type jacobi" "mg:-pc_type mg -da_grid_x 65 -da_grid_y 65" \
           "galerkin:-pc_type mg -pc_mg_galerkin -da_grid_x 65 -da_grid_y 65" "aij:-stn_mat_type aij" \
           "mf_operator:-snes_mf_operator" "fd:-snes_fd -da_grid_x 9 -da_grid_y 9" \
           "grid_sequence:-snes_grid_sequence 2 -da_grid_x 9 -da_grid_y 9"; do
    name=${c%%:*} opts=${c#*:}
    la=$LOG/nldiffusion2d.$name lx=$LOG/nldiffusion2d_exact.$name
    # PETSc's differences of J w are good to about 1e-8: no Krylov tolerance of 1e-12 with them
    tol=$TIGHT
    [ "$name" = mf_operator ] && tol="-snes_rtol 1e-10 -ksp_rtol 1e-8"
    # shellcheck disable=SC2086
    run "$la" "$OUT/nldiffusion2d" $opts $tol -snes_monitor -ksp_converged_reason -snes_view_solution "binary:$la.bin"
    rc=$?
    # shellcheck disable=SC2086
    run "$lx" "$OUT/nldiffusion2d_exact" $opts $tol -snes_monitor -ksp_converged_reason -snes_view_solution "binary:$lx.bin"
    rcx=$?
    its=$(newton "$la") itsx=$(newton "$lx") f=$(fnorm0 "$la") fx=$(fnorm0 "$lx")
    if solved "$la" $rc && solved "$lx" $rcx && [ "$its" = "$itsx" ] && close "$f" "$fx" 1e-12 && same_ok "$la.bin" "$lx.bin" 1e-8; then
      ok "approximate: '$opts': $its Newton iterations as with the derived Jacobian, first residual norm $f, solutions equal ($(same "$la.bin" "$lx.bin" 1e-8)); Krylov iterations $(krylov "$la") (derived: $(krylov "$lx"))"
    else
      bad "approximate: '$opts': $its Newton iterations (exit $rc), derived $itsx (exit $rcx), first norms $f and $fx, solutions $(same "$la.bin" "$lx.bin" 1e-8)"
      show "$la"; show "$lx"
    fi
  done
  # The reference written by hand: the same operator and the same preconditioning matrix, so the
  # same Krylov iterations too.
  REF=$OUT/nldiffusion2d_ref
  # shellcheck disable=SC2086
  if mpicc $PETSC_CFLAGS -O2 tests/solve/nldiffusion2d_ref.c $PETSC_LIBS -lm -o "$REF" >"$LOG/nldiffusion2d_ref.cc" 2>&1; then
    for c in "1:ilu:" "1:ilu5:-kappa 5 -q 40" "1:jacobi:-pc_type jacobi" "2:mpi:" "1:lu:-ksp_type preonly -pc_type lu -snes_max_it 100 -snes_stol 0"; do
      n=${c%%:*} rest=${c#*:}
      name=${rest%%:*} opts=${rest#*:}
      la=$LOG/nldiffusion2d.ref.$name lr=$LOG/nldiffusion2d_ref.$name
      tol=$TIGHT
      [ "$name" = lu ] && tol=""  # Picard's iteration: the default tolerances
      # shellcheck disable=SC2086
      mpirun "$n" "$la" "$OUT/nldiffusion2d" $opts $tol -snes_monitor -ksp_converged_reason -snes_view_solution "binary:$la.bin"
      rc=$?
      # shellcheck disable=SC2086
      mpirun "$n" "$lr" "$REF" $opts $tol -snes_monitor -ksp_converged_reason -snes_view_solution "binary:$lr.bin"
      rcr=$?
      its=$(newton "$la") itsr=$(newton "$lr") f=$(fnorm0 "$la") fr=$(fnorm0 "$lr") k=$(krylov "$la") kr=$(krylov "$lr")
      if solved "$la" $rc && solved "$lr" $rcr && [ "$its" = "$itsr" ] && [ "$k" = "$kr" ] && close "$f" "$fr" 1e-12 && same_ok "$la.bin" "$lr.bin" 1e-8; then
        ok "approximate: '$opts' on $n rank(s): as tests/solve/nldiffusion2d_ref.c, $its Newton and $k Krylov iterations, first residual norm $f, solutions equal ($(same "$la.bin" "$lr.bin" 1e-8))"
      else
        bad "approximate: '$opts' on $n rank(s): $its Newton, $k Krylov iterations (exit $rc), the reference $itsr, $kr (exit $rcr), first norms $f and $fr, solutions $(same "$la.bin" "$lr.bin" 1e-8)"
        show "$la"; show "$lr"
      fi
    done
  else
    bad "approximate: tests/solve/nldiffusion2d_ref.c does not compile"; show "$LOG/nldiffusion2d_ref.cc"
  fi
  # The operator is the derivative; the preconditioning matrix is not.
  l=$LOG/nldiffusion2d.jac
  run "$l" "$OUT/nldiffusion2d" -da_grid_x 9 -da_grid_y 9 -pc_type jacobi -snes_test_jacobian -snes_max_it 2
  ops=$(sed -n 's/.*||J - Jfd||_F\/||J||_F = \([^,]*\),.*/\1/p' "$l")
  op=$(echo "$ops" | sed -n 1p) pre=$(echo "$ops" | sed -n 2p)
  if grep -q 'Testing Jacobian for preconditioner' "$l" && awk -v a="$op" -v b="$pre" 'BEGIN {exit !(a != "" && a <= 1e-6 && b >= 1e-3)}'; then
    ok "approximate: -snes_test_jacobian: the operator ||J - Jfd||/||J|| = $op, the preconditioning matrix $pre (Picard's)"
  else bad "approximate: -snes_test_jacobian: operator $op (want <= 1e-6), preconditioning matrix $pre (want >= 1e-3)"; show "$l"; fi
  # A direct solve with the preconditioning matrix alone is Picard's iteration: more Newton
  # iterations than with the exact Jacobian; with the operator exact, as many.
  la=$LOG/nldiffusion2d.lu lx=$LOG/nldiffusion2d_exact.lu
  run "$la" "$OUT/nldiffusion2d" -ksp_type preonly -pc_type lu -snes_max_it 100 -snes_stol 0
  rc=$?
  run "$lx" "$OUT/nldiffusion2d_exact" -ksp_type preonly -pc_type lu -snes_max_it 100 -snes_stol 0
  rcx=$?
  its=$(newton "$la") itsx=$(newton "$lx")
  if solved "$la" $rc && solved "$lx" $rcx && [ "$its" -gt $((itsx + 2)) ]; then
    ok "approximate: -ksp_type preonly -pc_type lu applies Picard's matrix alone: $its Newton iterations, $itsx with the derived Jacobian"
  else bad "approximate: preonly LU: $its Newton iterations (exit $rc), derived $itsx (exit $rcx): expected more than $itsx + 2"; show "$la"; show "$lx"; fi
  l=$LOG/nldiffusion2d.check
  run "$l" "$OUT/nldiffusion2d" -stn_check_jacobian
  rc=$?
  if solved "$l" $rc && ! grep -q 'CheckEntry' "$OUT/nldiffusion2d.src/nldiffusion2d.c"; then ok "approximate: -stn_check_jacobian checks no approximate entry and passes"
  else bad "approximate: -stn_check_jacobian (exit $rc), or a CheckEntry call on an approximate entry"; show "$l"; fi
  # On ranks: as on one.
  la=$LOG/nldiffusion2d.mpi1 lm=$LOG/nldiffusion2d.mpi2
  run "$la" "$OUT/nldiffusion2d" $TIGHT -snes_view_solution "binary:$la.bin"
  rc=$?
  mpirun 2 "$lm" "$OUT/nldiffusion2d" $TIGHT -snes_view_solution "binary:$lm.bin"
  rcm=$?
  its=$(newton "$la") itsm=$(newton "$lm")
  if solved "$la" $rc && solved "$lm" $rcm && [ "$its" = "$itsm" ] && same_ok "$la.bin" "$lm.bin" 1e-10; then
    ok "approximate: 2 ranks: $itsm Newton iterations as on 1, solutions equal ($(same "$la.bin" "$lm.bin" 1e-10))"
  else bad "approximate: 2 ranks: $itsm Newton iterations (exit $rcm), 1 rank $its (exit $rc), solutions $(same "$la.bin" "$lm.bin" 1e-10)"; show "$lm"; fi
  l=$LOG/nldiffusion2d.eisenstat
  run "$l" "$OUT/nldiffusion2d" -pc_type eisenstat
  rc=$?
  want="-pc_type eisenstat applies the SOR sweeps of the operator itself, but nldiffusion2d's Jacobian is approximate"
  if [ $rc -ne 0 ] && [ $rc -lt 124 ] && grep -q -- "$want" "$l"; then ok "approximate: -pc_type eisenstat is refused: $want"
  else bad "approximate: -pc_type eisenstat: exit $rc, no '$want'"; show "$l"; fi
else
  bad "approximate: $STENCILC_SRC $ND or $OUT/nldiffusion2d_exact.stn -o failed (or the sed lost the block)"
  show "$LOG/nldiffusion2d.stencilc"; show "$LOG/nldiffusion2d_exact.stencilc"
fi
section_done approximate

# ---- 14 mirrored boundaries ---------------------------------------------------
# fnorm LOG K: the residual norm -snes_monitor printed at Newton iteration K.
fnorm() { sed -n "s/^ *$2 SNES Function norm \([^ ]*\).*/\1/p" "$1" | head -n 1; }
# close A B TOL: |A - B| <= TOL * max(|A|, |B|) (both numbers).
close() { awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN { if (a == "" || b == "") exit 1; d = a - b; if (d < 0) d = -d;
  m = a < 0 ? -a : a; n = b < 0 ? -b : b; if (n > m) m = n; exit !(d <= t * m) }'; }
NM=examples/neumann2d.stn
NL=tests/solve/neumann2d_longhand.stn
if compile neumann2d_mirror "$NM" && compile neumann2d_longhand "$NL"; then
  # The mirror and the nine rules: one discrete problem, whatever solves it (a case's own
  # options come after TIGHT, so they win: a 49 x 65 grid cannot reach -snes_atol 1e-13).
  mgref=""
  for c in "1:-pc_type ilu" "1:-pc_type mg -pc_mg_levels 3" "1:-pc_type mg -pc_mg_levels 3 -pc_mg_galerkin pmat" \
           "2:-pc_type mg -pc_mg_levels 3 -pc_mg_galerkin pmat" "1:-a 20 -sigma 0.3 -da_grid_x 49 -da_grid_y 65 -snes_rtol 1e-9 -pc_type mg -pc_mg_levels 4 -pc_mg_galerkin pmat"; do
    n=${c%%:*} opts=${c#*:}
    tag=$n.$(echo "$opts" | tr -c 'a-z0-9\n' '_')
    lm=$LOG/mirror.$tag lh=$LOG/longhand.$tag
    # shellcheck disable=SC2086
    mpirun "$n" "$lm" "$OUT/neumann2d_mirror" $TIGHT $opts -snes_monitor -snes_view_solution "binary:$lm.bin"
    rcm=$?
    # shellcheck disable=SC2086
    mpirun "$n" "$lh" "$OUT/neumann2d_longhand" $TIGHT $opts -snes_monitor -snes_view_solution "binary:$lh.bin"
    rch=$?
    itm=$(newton "$lm") ith=$(newton "$lh")
    f0m=$(fnorm "$lm" 0) f0h=$(fnorm "$lh" 0) f1m=$(fnorm "$lm" 1) f1h=$(fnorm "$lh" 1)
    if solved "$lm" $rcm && solved "$lh" $rch && [ "$itm" = "$ith" ] && close "$f0m" "$f0h" 1e-12 &&
       close "$f1m" "$f1h" 1e-8 && same_ok "$lm.bin" "$lh.bin" 1e-8; then
      ok "mirrors: neumann2d '$opts' on $n rank(s) = the nine rules: first norm $f0m ($f0h), after one step $f1m ($f1h), $itm Newton iterations, solutions $(same "$lm.bin" "$lh.bin" 1e-8)"
    else
      bad "mirrors: neumann2d '$opts' on $n rank(s): mirror exit $rcm, $itm iterations, norms $f0m $f1m; nine rules exit $rch, $ith iterations, norms $f0h $f1h; solutions $(same "$lm.bin" "$lh.bin" 1e-8)"
      show "$lm"; show "$lh"
    fi
    case $opts in
      "-pc_type ilu") mgref=$lm.bin mgits=$itm ;;
      -a*) ;;
      *) if [ -n "$mgref" ] && [ "$itm" = "$mgits" ] && same_ok "$lm.bin" "$mgref" 1e-10; then
           ok "mirrors: neumann2d '$opts' on $n rank(s) gives ILU's answer ($itm Newton iterations, $(same "$lm.bin" "$mgref" 1e-10))"
         else bad "mirrors: neumann2d '$opts' on $n rank(s): $itm Newton iterations against ILU's ${mgits:-?}, solutions $(same "$lm.bin" "$mgref" 1e-10)"; fi ;;
    esac
  done
  # Multigrid really ran several levels: far fewer Krylov iterations than one level.
  l=$LOG/mirror.mglevels
  run "$l" "$OUT/neumann2d_mirror" -pc_type mg -pc_mg_levels 3 -pc_mg_galerkin pmat -snes_view $TIGHT
  levels=$(sed -n 's/.*type is MULTIPLICATIVE, levels=\([0-9]*\).*/\1/p' "$l" | head -n 1)
  if solved "$l" $? && [ "$levels" = 3 ] && grep -q 'Using Galerkin computed coarse grid matrices for pmat' "$l"; then
    ok "mirrors: -pc_type mg -pc_mg_levels 3 -pc_mg_galerkin pmat ran 3 levels with Galerkin coarse matrices"
  else bad "mirrors: -pc_mg_galerkin pmat: levels '$levels' or no Galerkin coarse matrices in -snes_view"; show "$l"; fi
  for mode in "-pc_type jacobi" "-stn_mat_type aij -pc_type jacobi"; do
    l=$LOG/mirror.jac.$(echo "$mode" | tr -c 'a-z0-9\n' '_')
    # shellcheck disable=SC2046,SC2086
    run "$l" "$OUT/neumann2d_mirror" $(small neumann2d) $mode -snes_test_jacobian -snes_max_it 2
    worst=$(sed -n 's/.*||J - Jfd||_F\/||J||_F = \([^,]*\),.*/\1/p' "$l" | awk 'BEGIN {m = -1} {if ($1 + 0 > m) m = $1 + 0} END {print m}')
    if awk -v m="$worst" 'BEGIN {exit !(m >= 0 && m <= 1e-6)}'; then ok "mirrors: neumann2d -snes_test_jacobian ($mode), max ||J - Jfd||/||J|| = $worst"
    else bad "mirrors: neumann2d -snes_test_jacobian ($mode) ratio $worst"; show "$l"; fi
  done
else
  bad "mirrors: $STENCILC_SRC $NM or $NL -o failed"; show "$LOG/neumann2d_mirror.stencilc"; show "$LOG/neumann2d_longhand.stencilc"
fi

MJ=tests/solve/mirror_jacobian.stn
# The entries are checked at compile time against the derivative of the read they name: one
# with hx and hy swapped (hx != hy) is refused, at a mirrored wall.
sed 's/u\[0,-1\] = -cy/u[0,-1] = -cx/' "$MJ" >"$OUT/mirror_jacobian_wrong.stn"
timeout "$RUN_TIMEOUT" "$STENCILC" --check "$OUT/mirror_jacobian_wrong.stn" >"$LOG/mirror_jacobian_wrong.stencilc" 2>&1
rc=$?
if [ $rc -eq 1 ] && grep -q "error: this Jacobian entry is not d(residual u)/d(u\[0,-1\])" "$LOG/mirror_jacobian_wrong.stencilc" &&
   grep -q "(at bottom points)" "$LOG/mirror_jacobian_wrong.stencilc"; then
  ok "mirrors: a wrong entry for the mirrored read u[0,-1] is refused at compile time, at the bottom wall"
else
  bad "mirrors: $OUT/mirror_jacobian_wrong.stn: exit status $rc, expected 1 naming d(residual u)/d(u[0,-1]) at bottom points"
  show "$LOG/mirror_jacobian_wrong.stencilc"
fi
# A mirror that no read goes through (the left wall has a rule of its own) is a warning.
sed 's/^mirror u: right, bottom, top;/mirror u: left, right, bottom, top;/' "$MJ" >"$OUT/mirror_unused.stn"
timeout "$RUN_TIMEOUT" "$STENCILC" --check "$OUT/mirror_unused.stn" >"$LOG/mirror_unused.stencilc" 2>&1
rc=$?
if [ $rc -eq 0 ] && grep -q "mirror_unused.stn:[0-9]*:11: warning: this mirror is never used: no rule reads a mirrored field beyond 'left'" "$LOG/mirror_unused.stencilc"; then
  ok "mirrors: an unused mirror across 'left' warns (exit status 0)"
else bad "mirrors: $OUT/mirror_unused.stn: exit status $rc, no warning at the unused 'left'"; show "$LOG/mirror_unused.stencilc"; fi
sed '/^jacobian u {/,$d' "$MJ" >"$OUT/mirror_jacobian_derived.stn"
if compile mirror_jacobian "$MJ" && compile mirror_jacobian_derived "$OUT/mirror_jacobian_derived.stn"; then
  grep -q 'CheckEntry(v' "$OUT"/mirror_jacobian.src/*.c || note "no CheckEntry(...) call in the C of $MJ: the run-time check may not run"
  for n in 1 2; do
    l=$LOG/mirror_jacobian.check.$n
    mpirun "$n" "$l" "$OUT/mirror_jacobian" -lambda 5 -stn_check_jacobian
    rc=$?
    if solved "$l" "$rc"; then ok "mirrors: $MJ passes -stn_check_jacobian on $n rank(s)"
    else bad "mirrors: $MJ fails -stn_check_jacobian on $n rank(s) (exit status $rc)"; show "$l"; fi
  done
  l=$LOG/mirror_jacobian.jac
  run "$l" "$OUT/mirror_jacobian" -lambda 5 -pc_type jacobi -snes_test_jacobian -snes_max_it 2
  worst=$(sed -n 's/.*||J - Jfd||_F\/||J||_F = \([^,]*\),.*/\1/p' "$l" | awk 'BEGIN {m = -1} {if ($1 + 0 > m) m = $1 + 0} END {print m}')
  if awk -v m="$worst" 'BEGIN {exit !(m >= 0 && m <= 1e-6)}'; then ok "mirrors: $MJ -snes_test_jacobian, max ||J - Jfd||/||J|| = $worst"
  else bad "mirrors: $MJ -snes_test_jacobian ratio $worst"; show "$l"; fi
  for opts in "-lambda 5" "-lambda 20 -pc_type mg -pc_mg_levels 3 -pc_mg_galerkin pmat"; do
    tag=$(echo "$opts" | tr -c 'a-z0-9\n' '_')
    la=$LOG/mirror_jacobian.$tag ld=$LOG/mirror_jacobian_derived.$tag
    # shellcheck disable=SC2086
    run "$la" "$OUT/mirror_jacobian" $opts $TIGHT -snes_view_solution "binary:$la.bin"
    rc=$?
    # shellcheck disable=SC2086
    run "$ld" "$OUT/mirror_jacobian_derived" $opts $TIGHT -snes_view_solution "binary:$ld.bin"
    rcd=$?
    its=$(newton "$la") itsd=$(newton "$ld")
    if solved "$la" $rc && solved "$ld" $rcd && [ "$its" = "$itsd" ] && same_ok "$la.bin" "$ld.bin" 1e-12; then
      ok "mirrors: '$opts': the hand-written Jacobian solves in $its Newton iterations as the derived one, solutions equal ($(same "$la.bin" "$ld.bin" 1e-12))"
    else
      bad "mirrors: '$opts': hand-written $its Newton iterations (exit $rc), derived $itsd (exit $rcd), solutions $(same "$la.bin" "$ld.bin" 1e-12)"
      show "$la"; show "$ld"
    fi
  done
else
  bad "mirrors: $STENCILC_SRC $MJ or its derived twin -o failed"; show "$LOG/mirror_jacobian.stencilc"; show "$LOG/mirror_jacobian_derived.stencilc"
fi
section_done mirrors

# ---- 15 coefficients ------------------------------------------------------------
CO=tests/solve/coefficient.stn
CI=tests/solve/coefficient_inline.stn
if compile coefficient "$CO" && compile coefficient_inline "$CI"; then
  # k adds no block diagonal: the matrix has u's five, as the inline program's.
  if grep -q '^#define NSTENCIL 5 ' "$OUT/coefficient.src/coefficient.h"; then
    ok "coefficients: the Jacobian has the 5 block diagonals of u's reads, none for k"
  else bad "coefficients: $OUT/coefficient.src/coefficient.h does not define NSTENCIL 5"; fi
  coref=""
  for c in "1:-pc_type ilu" "2:-pc_type bjacobi" "1:-pc_type mg -pc_mg_levels 4 -da_grid_x 65 -da_grid_y 65" \
           "2:-pc_type mg -pc_mg_levels 4 -da_grid_x 65 -da_grid_y 65" "1:-pc_type mg -pc_mg_levels 4 -pc_mg_galerkin pmat -da_grid_x 65 -da_grid_y 65" \
           "1:-pc_type ilu -da_grid_x 65 -da_grid_y 65" "1:-a 0.9 -f 20 -da_grid_x 41 -da_grid_y 25"; do
    n=${c%%:*} opts=${c#*:}
    tag=$n.$(echo "$opts" | tr -c 'a-z0-9\n' '_')
    lc=$LOG/coefficient.$tag li=$LOG/coefficient_inline.$tag
    # shellcheck disable=SC2086
    mpirun "$n" "$lc" "$OUT/coefficient" $TIGHT $opts -snes_monitor -snes_view_solution "binary:$lc.bin"
    rcc=$?
    # shellcheck disable=SC2086
    mpirun "$n" "$li" "$OUT/coefficient_inline" $TIGHT $opts -snes_monitor -snes_view_solution "binary:$li.bin"
    rci=$?
    itc=$(newton "$lc") iti=$(newton "$li") f0c=$(fnorm "$lc" 0) f0i=$(fnorm "$li" 0)
    if solved "$lc" $rcc && solved "$li" $rci && [ "$itc" = "$iti" ] && [ "${itc:-0}" -ge 3 ] &&
       close "$f0c" "$f0i" 1e-12 && same_ok "$lc.bin" "$li.bin" 1e-8; then
      ok "coefficients: '$opts' on $n rank(s) = k written inline: first norm $f0c ($f0i), $itc Newton iterations, solutions $(same "$lc.bin" "$li.bin" 1e-8)"
    else
      bad "coefficients: '$opts' on $n rank(s): coefficient exit $rcc, $itc iterations, first norm $f0c; inline exit $rci, $iti iterations, first norm $f0i; solutions $(same "$lc.bin" "$li.bin" 1e-8)"
      show "$lc"; show "$li"
    fi
    case $opts in
      "-pc_type ilu -da_grid_x 65 -da_grid_y 65") coref=$lc.bin coits=$itc ;;
    esac
  done
  # Multigrid's levels evaluate k on their own grids: the same answer as ILU on the fine grid.
  for opts in "-pc_type mg -pc_mg_levels 4 -da_grid_x 65 -da_grid_y 65" "-pc_type mg -pc_mg_levels 4 -pc_mg_galerkin pmat -da_grid_x 65 -da_grid_y 65"; do
    tag=1.$(echo "$opts" | tr -c 'a-z0-9\n' '_')
    lc=$LOG/coefficient.$tag
    if [ -n "$coref" ] && [ "$(newton "$lc")" = "$coits" ] && same_ok "$lc.bin" "$coref" 1e-10; then
      ok "coefficients: '$opts' gives ILU's answer ($coits Newton iterations, $(same "$lc.bin" "$coref" 1e-10))"
    else bad "coefficients: '$opts': $(newton "$lc") Newton iterations against ILU's ${coits:-?}, solutions $(same "$lc.bin" "$coref" 1e-10)"; fi
  done
  l=$LOG/coefficient.mglevels
  run "$l" "$OUT/coefficient" -pc_type mg -pc_mg_levels 4 -da_grid_x 65 -da_grid_y 65 -snes_view $TIGHT
  levels=$(sed -n 's/.*type is MULTIPLICATIVE, levels=\([0-9]*\).*/\1/p' "$l" | head -n 1)
  if solved "$l" $? && [ "$levels" = 4 ]; then ok "coefficients: -pc_type mg ran $levels levels"
  else bad "coefficients: -pc_type mg: levels '$levels'"; show "$l"; fi
  for mode in "-pc_type jacobi" "-stn_mat_type aij"; do
    l=$LOG/coefficient.jac.$(echo "$mode" | tr -c 'a-z0-9\n' '_')
    # shellcheck disable=SC2086
    run "$l" "$OUT/coefficient" -da_grid_x 9 -da_grid_y 11 -a 0.9 $mode -snes_test_jacobian -snes_max_it 2
    worst=$(sed -n 's/.*||J - Jfd||_F\/||J||_F = \([^,]*\),.*/\1/p' "$l" | awk 'BEGIN {m = -1} {if ($1 + 0 > m) m = $1 + 0} END {print m}')
    if awk -v m="$worst" 'BEGIN {exit !(m >= 0 && m <= 1e-6)}'; then ok "coefficients: -snes_test_jacobian ($mode), max ||J - Jfd||/||J|| = $worst"
    else bad "coefficients: -snes_test_jacobian ($mode) ratio $worst"; show "$l"; fi
  done
else
  bad "coefficients: $STENCILC_SRC $CO or $CI -o failed"; show "$LOG/coefficient.stencilc"; show "$LOG/coefficient_inline.stencilc"
fi
# Hand-written entries may read the coefficient at neighbours: checked against the derivative
# at compile time and at run time, the same solution as the derived Jacobian.
cat "$CO" - >"$OUT/coefficient_jacobian.stn" <<'EOF'

jacobian u {
  boundary: u = 1;
  interior: u = hy / hx * (ke + kw) + hx / hy * (kn + ks) - hx * hy * f * u / 5,
            u[1,0] = -hy / hx * (k + k[1,0]) / 2, u[-1,0] = -hy / hx * (k + k[-1,0]) / 2,
            u[0,1] = -hx / hy * (k + k[0,1]) / 2, u[0,-1] = -hx / hy * (k + k[0,-1]) / 2;
}
EOF
sed 's|hx \* hy \* f \* u / 5,|hx * hy * f * u / 5 + k[1,0] - k,|' "$OUT/coefficient_jacobian.stn" >"$OUT/coefficient_jacobian_wrong.stn"
timeout "$RUN_TIMEOUT" "$STENCILC" --check "$OUT/coefficient_jacobian_wrong.stn" >"$LOG/coefficient_jacobian_wrong.stencilc" 2>&1
rc=$?
if [ $rc -eq 1 ] && grep -q "error: this Jacobian entry is not d(residual u)/d(u\\[0,0\\])" "$LOG/coefficient_jacobian_wrong.stencilc"; then
  ok "coefficients: a diagonal entry off by k[1,0] - k is refused at compile time"
else bad "coefficients: $OUT/coefficient_jacobian_wrong.stn: exit status $rc, expected 1 naming d(residual u)/d(u[0,0])"; show "$LOG/coefficient_jacobian_wrong.stencilc"; fi
if compile coefficient_jacobian "$OUT/coefficient_jacobian.stn"; then
  lj=$LOG/coefficient_jacobian.run lc=$LOG/coefficient.1._pc_type_ilu
  # shellcheck disable=SC2086
  run "$lj" "$OUT/coefficient_jacobian" $TIGHT -pc_type ilu -stn_check_jacobian -snes_monitor -snes_view_solution "binary:$lj.bin"
  rc=$?
  if solved "$lj" $rc && [ "$(newton "$lj")" = "$(newton "$lc")" ] && same_ok "$lj.bin" "$lc.bin" 1e-12; then
    ok "coefficients: hand-written entries reading k[1,0] ... pass -stn_check_jacobian, $(newton "$lj") Newton iterations and the derived Jacobian's solution ($(same "$lj.bin" "$lc.bin" 1e-12))"
  else bad "coefficients: hand-written entries: exit $rc, $(newton "$lj") Newton iterations against $(newton "$lc"), solutions $(same "$lj.bin" "$lc.bin" 1e-12)"; show "$lj"; fi
else
  bad "coefficients: $OUT/coefficient_jacobian.stn -o failed"; show "$LOG/coefficient_jacobian.stencilc"
fi

# Periodic in x: a read past the last column wraps to the first, as the grid's points do (k jumps
# there, so a read at x = 1 instead of 0 changes the solution by about 17%).
CP=tests/solve/coefficient_periodic.stn
CPI=tests/solve/coefficient_periodic_inline.stn
if compile coefficient_periodic "$CP" && compile coefficient_periodic_inline "$CPI"; then
  for n in 1 2; do
    lc=$LOG/coefficient_periodic.$n li=$LOG/coefficient_periodic_inline.$n
    # shellcheck disable=SC2086
    mpirun "$n" "$lc" "$OUT/coefficient_periodic" $TIGHT -snes_monitor -snes_view_solution "binary:$lc.bin"
    rcc=$?
    # shellcheck disable=SC2086
    mpirun "$n" "$li" "$OUT/coefficient_periodic_inline" $TIGHT -snes_monitor -snes_view_solution "binary:$li.bin"
    rci=$?
    itc=$(newton "$lc") iti=$(newton "$li") f1c=$(fnorm "$lc" 1) f1i=$(fnorm "$li" 1)
    if solved "$lc" $rcc && solved "$li" $rci && [ "$itc" = "$iti" ] && close "$f1c" "$f1i" 1e-8 &&
       same_ok "$lc.bin" "$li.bin" 1e-8; then
      ok "coefficients: periodic x on $n rank(s) = k written inline with mod(x + hx, 1): norm after one step $f1c ($f1i), $itc Newton iterations, solutions $(same "$lc.bin" "$li.bin" 1e-8)"
    else
      bad "coefficients: periodic x on $n rank(s): coefficient exit $rcc, $itc iterations, norm $f1c; inline exit $rci, $iti iterations, norm $f1i; solutions $(same "$lc.bin" "$li.bin" 1e-8)"
      show "$lc"; show "$li"
    fi
  done
else
  bad "coefficients: $STENCILC_SRC $CP or $CPI -o failed"; show "$LOG/coefficient_periodic.stencilc"; show "$LOG/coefficient_periodic_inline.stencilc"
fi
section_done coefficients

# ---- 16 parameters named like keywords ------------------------------------------
KP=tests/solve/keyword_params.stn
sed 's/^param width .*/let width = 4;/; s/^param initial .*/let initial = 0.3;/' "$KP" >"$OUT/keyword_params_lets.stn"
if compile keyword_params "$KP" && compile keyword_params_lets "$OUT/keyword_params_lets.stn"; then
  la=$LOG/keyword_params.given lf=$LOG/keyword_params.lets l0=$LOG/keyword_params.width
  # shellcheck disable=SC2086
  run "$la" "$OUT/keyword_params" -width 4 -initial 0.3 $TIGHT -snes_monitor -snes_view_solution "binary:$la.bin"
  rc=$?
  # shellcheck disable=SC2086
  run "$lf" "$OUT/keyword_params_lets" $TIGHT -snes_monitor -snes_view_solution "binary:$lf.bin"
  rcf=$?
  # shellcheck disable=SC2086
  run "$l0" "$OUT/keyword_params" -width 4 $TIGHT -snes_monitor
  rc0=$?
  its=$(newton "$la") itsf=$(newton "$lf") f=$(fnorm0 "$la") ff=$(fnorm0 "$lf") f0=$(fnorm0 "$l0")
  if solved "$la" $rc && solved "$lf" $rcf && solved "$l0" $rc0 && [ "$its" = "$itsf" ] && [ -n "$f" ] && [ "$f" = "$ff" ] &&
     [ "$f" != "$f0" ] && same_ok "$la.bin" "$lf.bin" 1e-12; then
    ok "keyword names: '-width 4 -initial 0.3' solves in $its Newton iterations from the first residual norm $f (without -initial $f0) as the program with lets, solutions equal ($(same "$la.bin" "$lf.bin" 1e-12))"
  else
    bad "keyword names: -width 4 -initial 0.3: $its Newton iterations (exit $rc), first norm $f; with lets $itsf (exit $rcf), $ff; without -initial $f0 (exit $rc0); solutions $(same "$la.bin" "$lf.bin" 1e-12)"
    show "$la"; show "$lf"
  fi
  l=$LOG/keyword_params.help
  run "$l" "$OUT/keyword_params" -help
  if grep -q -- '-width <9>: the odd blocks.*, in \[0, inf\]' "$l" && grep -q -- '-initial <0>: the first Newton iterate inside' "$l"; then ok "keyword names: -help lists -width and -initial"
  else bad "keyword names: -help does not list -width and -initial"; show "$l"; fi
else
  bad "keyword names: $STENCILC_SRC $KP or its lets -o failed"; show "$LOG/keyword_params.stencilc"; show "$LOG/keyword_params_lets.stencilc"
fi
section_done keyword-params

# ---- 17 list parameters ---------------------------------------------------------
LP=tests/solve/list_params.stn
# lets BX BY W0 W1: the program with -blocks BX,BY -w W0,W1 written as lets.
lets() {
  n=list_params_$1_$2_$(echo "$3_$4" | tr -c 'a-z0-9\n' '_')
  sed "/^param /d; s/^let bx = .*/let bx = $1;/; s/^let by = .*/let by = $2;/; s/^let w0 = .*/let w0 = $3;/
       s/^let w1 = .*/let w1 = $4;/" "$LP" >"$OUT/$n.stn"
  compile "$n" "$OUT/$n.stn"
}
if compile list_params "$LP"; then
  for c in "2 3 1 10:" "3 2 1 10:-blocks 3,2" "1 4 2 0.5:-blocks 1,4 -w 2,0.5" "5 5 1 10:-blocks 5,5"; do
    v=${c%%:*} opts=${c#*:}
    # shellcheck disable=SC2086
    set -- $v
    if ! lets "$@"; then bad "list params: the program with bx = $1, by = $2, w0 = $3, w1 = $4 as lets does not build"; show "$LOG/$n.stencilc"; continue; fi
    la=$LOG/list_params.$(echo "$v" | tr -c 'a-z0-9\n' '_') lf=$LOG/$n
    # shellcheck disable=SC2086
    run "$la" "$OUT/list_params" $opts $TIGHT -snes_view_solution "binary:$la.bin"
    rc=$?
    # shellcheck disable=SC2086
    run "$lf" "$OUT/$n" $TIGHT -snes_view_solution "binary:$lf.bin"
    rcf=$?
    its=$(newton "$la") itsf=$(newton "$lf")
    if solved "$la" $rc && solved "$lf" $rcf && [ "$its" = "$itsf" ] && same_ok "$la.bin" "$lf.bin" 1e-12; then
      ok "list params: '$opts' solves in $its Newton iterations as bx = $1, by = $2, w0 = $3, w1 = $4 written as lets, solutions equal ($(same "$la.bin" "$lf.bin" 1e-12))"
    else
      bad "list params: '$opts': $its Newton iterations (exit $rc), with lets $itsf (exit $rcf), solutions $(same "$la.bin" "$lf.bin" 1e-12)"
      show "$la"; show "$lf"
    fi
  done
  # Different lists give different solutions: the option is not ignored.
  if [ -s "$LOG/list_params.2_3_1_10.bin" ] && [ -s "$LOG/list_params.3_2_1_10.bin" ] &&
     ! same_ok "$LOG/list_params.2_3_1_10.bin" "$LOG/list_params.3_2_1_10.bin" 1e-6; then
    ok "list params: -blocks 3,2 changes the solution of the default 2,3 ($(same "$LOG/list_params.2_3_1_10.bin" "$LOG/list_params.3_2_1_10.bin" 1e-6))"
  else bad "list params: -blocks 3,2 and the default 2,3 give the same solution"; fi
  for c in "-blocks 3:-blocks takes 2 integers separated by commas, as in -blocks 2,3; it was given 1" \
           "-blocks 1,2,3:-blocks takes 2 integers separated by commas, as in -blocks 2,3; it was given more than 2" \
           "-blocks:-blocks takes 2 integers separated by commas, as in -blocks 2,3; it was given 0" \
           "-blocks 2,0:-blocks: its value 2 of 2, 0., is out of range: list_params.stn:16 allows \[1, 64\]" \
           "-blocks 2.5,3:Input string 2.5 has no integer value" \
           "-w 1:-w takes 2 numbers separated by commas, as in -w 1,10; it was given 1" \
           "-w 1,1e4:-w: its value 2 of 2, 10000., is out of range: list_params.stn:17 allows \[0.001, 1000\]"; do
    opts=${c%%:*} want=${c#*:}
    l=$LOG/list_params.bad.$(echo "$opts" | tr -c 'a-z0-9\n' '_')
    # shellcheck disable=SC2086
    run "$l" "$OUT/list_params" $opts
    rc=$?
    if [ $rc -ne 0 ] && [ $rc -lt 124 ] && grep -q -- "$want" "$l"; then ok "list params: $opts is refused: $(grep -o -m 1 -- "${want%%\\*}.*" "$l")"
    else bad "list params: $opts: exit $rc, no '$want'"; show "$l"; fi
  done
  l=$LOG/list_params.help
  run "$l" "$OUT/list_params" -help
  if grep -q -- '-blocks <2,3>: blocks per unit length along x and y, 2 integers separated by commas, each in \[1, 64\]' "$l" &&
     grep -q -- '-w <1,10>: the coefficient on the even and the odd blocks, 2 numbers separated by commas, each in \[0.001, 1000\]' "$l"; then
    ok "list params: -help lists -blocks <2,3> and -w <1,10> with their counts and ranges"
  else bad "list params: -help does not describe -blocks and -w"; show "$l"; fi
else
  bad "list params: $STENCILC_SRC $LP -o failed"; show "$LOG/list_params.stencilc"
fi
section_done list-params

# ---- 18 coefficients read from files ----------------------------------------------
CF=tests/solve/coefficient_file.stn
CFP=tests/solve/coefficient_file_periodic.stn
KWRITE=$OUT/coefficient_file_write
# ksp_close A B TOL: the logs' Krylov residual norms (-ksp_monitor), as many and each pair within
# TOL relative; prints the count and the largest difference. Under multigrid they show that
# the coarser levels see the same k (the solution alone would not: it is the fine grid's).
ksp_close() {
  sed -n 's/.*KSP Residual norm \([^ ]*\).*/\1/p' "$1" >"$OUT/ksp.a"
  sed -n 's/.*KSP Residual norm \([^ ]*\).*/\1/p' "$2" >"$OUT/ksp.b"
  [ "$(wc -l <"$OUT/ksp.a")" = "$(wc -l <"$OUT/ksp.b")" ] || { echo "$(wc -l <"$OUT/ksp.a") against $(wc -l <"$OUT/ksp.b") Krylov norms"; return 1; }
  paste "$OUT/ksp.a" "$OUT/ksp.b" | awk -v t="$3" '{n++; d = $1 - $2; if (d < 0) d = -d; m = $2 < 0 ? -$2 : $2; r = m > 0 ? d / m : d; if (r > w) w = r}
    END {printf "%d Krylov norms within %.1e", n, w; exit !(n > 0 && w <= t)}'
}
# kfile NAME [RANKS] OPTIONS...: $OUT/NAME.k, k written by coefficient_file_write.c; status in $?.
kfile() {
  kn=$1; shift
  kr=1; case ${1:-} in [0-9]) kr=$1; shift ;; esac
  mpirun "$kr" "$LOG/$kn.kwrite" "$KWRITE" -o "$OUT/$kn.k" "$@" && [ -s "$OUT/$kn.k" ]
}
# shellcheck disable=SC2086
if ! mpicc $PETSC_CFLAGS -O2 tests/solve/coefficient_file_write.c $PETSC_LIBS -lm -o "$KWRITE" >"$LOG/coefficient_file_write.cc" 2>&1; then
  bad "coefficient files: tests/solve/coefficient_file_write.c does not compile"; show "$LOG/coefficient_file_write.cc"
elif ! kfile k33 || ! kfile k33r2 2 || ! kfile k65 -da_grid_x 65 -da_grid_y 65 || ! kfile k65a9 -a 0.9 -da_grid_x 65 -da_grid_y 65 ||
     ! kfile k9x11 -a 0.9 -da_grid_x 9 -da_grid_y 11 || ! kfile kper -periodic -a 2 -da_grid_x 32 -da_grid_y 17; then
  bad "coefficient files: coefficient_file_write.c wrote no file"; show "$LOG/$kn.kwrite"
elif ! cmp -s "$OUT/k33.k" "$OUT/k33r2.k"; then
  bad "coefficient files: the file written on 2 ranks differs from the one written on 1 (natural ordering)"
elif compile coefficient_file "$CF" && { [ -x "$OUT/coefficient" ] || compile coefficient tests/solve/coefficient.stn; }; then
  ok "coefficient files: coefficient_file_write.c writes the same file on 1 and 2 ranks (natural ordering)"
  # The same k from the file and as an expression: one discrete problem, on every grid of multigrid too.
  for c in "1:k33:-pc_type ilu" "2:k33r2:-pc_type bjacobi" "1:k65:-pc_type mg -pc_mg_levels 4 -da_grid_x 65 -da_grid_y 65" \
           "2:k65:-pc_type mg -pc_mg_levels 4 -da_grid_x 65 -da_grid_y 65" \
           "1:k65:-pc_type mg -pc_mg_levels 4 -pc_mg_galerkin pmat -da_grid_x 65 -da_grid_y 65" \
           "1:k65a9:-pc_type ilu -da_grid_x 65 -da_grid_y 65 -a 0.9 -f 20"; do
    n=${c%%:*} rest=${c#*:}; k=${rest%%:*} opts=${rest#*:}
    tag=$n.$(echo "$opts" | tr -c 'a-z0-9\n' '_')
    lf=$LOG/coefficient_file.$tag le=$LOG/coefficient_expr.$tag
    # The expression program takes -a; the file program has no such parameter (the file is k).
    fopts=$(echo "$opts" | sed 's/ -a [0-9.]*//')
    # shellcheck disable=SC2086
    mpirun "$n" "$lf" "$OUT/coefficient_file" -k_file "$OUT/$k.k" $TIGHT $fopts -snes_monitor -ksp_monitor -snes_view_solution "binary:$lf.bin"
    rcf=$?
    # shellcheck disable=SC2086
    mpirun "$n" "$le" "$OUT/coefficient" $TIGHT $opts -snes_monitor -ksp_monitor -snes_view_solution "binary:$le.bin"
    rce=$?
    itf=$(newton "$lf") ite=$(newton "$le") f0f=$(fnorm "$lf" 0) f0e=$(fnorm "$le" 0)
    if solved "$lf" $rcf && solved "$le" $rce && [ "$itf" = "$ite" ] && [ "${itf:-0}" -ge 3 ] &&
       close "$f0f" "$f0e" 1e-12 && same_ok "$lf.bin" "$le.bin" 1e-8 && ksp_close "$lf" "$le" 1e-8 >/dev/null; then
      ok "coefficient files: '$opts' on $n rank(s), k from $k.k = k as an expression: first norm $f0f ($f0e), $itf Newton iterations, $(ksp_close "$lf" "$le" 1e-8), solutions $(same "$lf.bin" "$le.bin" 1e-8)"
    else
      bad "coefficient files: '$opts' on $n rank(s): file exit $rcf, $itf iterations, first norm $f0f; expression exit $rce, $ite iterations, first norm $f0e; $(ksp_close "$lf" "$le" 1e-8); solutions $(same "$lf.bin" "$le.bin" 1e-8)"
      show "$lf"; show "$le"
    fi
  done
  # The file is read: another file (amplitude 0.9 instead of 0.5) gives another solution.
  la=$LOG/coefficient_file.1._pc_type_mg__pc_mg_levels_4__da_grid_x_65__da_grid_y_65
  lc=$LOG/coefficient_file.other
  # shellcheck disable=SC2086
  run "$lc" "$OUT/coefficient_file" -k_file "$OUT/k65a9.k" -da_grid_x 65 -da_grid_y 65 $TIGHT -snes_view_solution "binary:$lc.bin"
  if solved "$lc" $? && [ -s "$la.bin" ] && ! same_ok "$lc.bin" "$la.bin" 1e-4; then
    ok "coefficient files: another file changes the solution ($(same "$lc.bin" "$la.bin" 1e-4))"
  else bad "coefficient files: the solution does not depend on the file"; show "$lc"; fi
  for mode in "-pc_type jacobi" "-stn_mat_type aij"; do
    l=$LOG/coefficient_file.jac.$(echo "$mode" | tr -c 'a-z0-9\n' '_')
    # shellcheck disable=SC2086
    run "$l" "$OUT/coefficient_file" -k_file "$OUT/k9x11.k" -da_grid_x 9 -da_grid_y 11 $mode -snes_test_jacobian -snes_max_it 2
    worst=$(sed -n 's/.*||J - Jfd||_F\/||J||_F = \([^,]*\),.*/\1/p' "$l" | awk 'BEGIN {m = -1} {if ($1 + 0 > m) m = $1 + 0} END {print m}')
    if awk -v m="$worst" 'BEGIN {exit !(m >= 0 && m <= 1e-6)}'; then ok "coefficient files: -snes_test_jacobian ($mode), max ||J - Jfd||/||J|| = $worst"
    else bad "coefficient files: -snes_test_jacobian ($mode) ratio $worst"; show "$l"; fi
  done
  if grep -q '^#define NSTENCIL 5 ' "$OUT/coefficient_file.src/coefficient_file.h"; then
    ok "coefficient files: the Jacobian has the 5 block diagonals of u's reads, none for k"
  else bad "coefficient files: $OUT/coefficient_file.src/coefficient_file.h does not define NSTENCIL 5"; fi
  # Refused in a sentence: no file, a missing file, not a vector, another grid's size, a finer grid.
  printf 'not a vector\n' >"$OUT/notavec.k"
  for c in ":is read from a file: give it with -k_file FILE" \
           "-k_file $OUT/missing.k:-k_file $OUT/missing.k: cannot read the file (coefficient k, coefficient_file.stn:17)" \
           "-k_file $OUT/notavec.k:-k_file $OUT/notavec.k: the file does not start with a vector in PETSc's binary format" \
           "-k_file $OUT/k65.k:-k_file $OUT/k65.k: the file holds 4225 values, but coefficient k (coefficient_file.stn:17) needs one per grid point: 1089 on this 33 x 33 grid" \
           "-k_file $OUT/k33.k -snes_grid_sequence 1:-snes_grid_sequence 1 would solve on finer grids than the one of -k_file $OUT/k33.k"; do
    opts=${c%%:*} want=${c#*:}
    l=$LOG/coefficient_file.bad.$(echo "$opts" | tr -c 'a-z0-9\n' '_')
    # shellcheck disable=SC2086
    run "$l" "$OUT/coefficient_file" $opts
    rc=$?
    if [ $rc -ne 0 ] && [ $rc -lt 124 ] && grep -q -- "$want" "$l"; then ok "coefficient files: '${opts:-no -k_file}' is refused: $(grep -o -m 1 -- "$want.*" "$l")"
    else bad "coefficient files: '${opts:-no -k_file}': exit $rc, no '$want'"; show "$l"; fi
  done
  l=$LOG/coefficient_file.help
  run "$l" "$OUT/coefficient_file" -help
  if grep -q -- '-k_file <FILE>: coefficient k, conductivity' "$l"; then ok "coefficient files: -help lists -k_file"
  else bad "coefficient files: -help does not list -k_file"; show "$l"; fi
else
  bad "coefficient files: $STENCILC_SRC $CF or tests/solve/coefficient.stn -o failed"; show "$LOG/coefficient_file.stencilc"
fi
# Periodic in x: the file's vector is ghosted like the state, so k[1,0] at the last column reads
# the first column's value (k jumps there: a read at x = 1 changes the solution by about 17%).
if [ -s "$OUT/kper.k" ] && compile coefficient_file_periodic "$CFP" &&
   { [ -x "$OUT/coefficient_periodic" ] || compile coefficient_periodic tests/solve/coefficient_periodic.stn; }; then
  for n in 1 2; do
    lf=$LOG/coefficient_file_periodic.$n le=$LOG/coefficient_periodic_expr.$n
    # shellcheck disable=SC2086
    mpirun "$n" "$lf" "$OUT/coefficient_file_periodic" -k_file "$OUT/kper.k" $TIGHT -snes_monitor -snes_view_solution "binary:$lf.bin"
    rcf=$?
    # shellcheck disable=SC2086
    mpirun "$n" "$le" "$OUT/coefficient_periodic" $TIGHT -snes_monitor -snes_view_solution "binary:$le.bin"
    rce=$?
    itf=$(newton "$lf") ite=$(newton "$le") f1f=$(fnorm "$lf" 1) f1e=$(fnorm "$le" 1)
    if solved "$lf" $rcf && solved "$le" $rce && [ "$itf" = "$ite" ] && close "$f1f" "$f1e" 1e-8 && same_ok "$lf.bin" "$le.bin" 1e-8; then
      ok "coefficient files: periodic x on $n rank(s) = k as an expression: norm after one step $f1f ($f1e), $itf Newton iterations, solutions $(same "$lf.bin" "$le.bin" 1e-8)"
    else
      bad "coefficient files: periodic x on $n rank(s): file exit $rcf, $itf iterations, norm $f1f; expression exit $rce, $ite iterations, norm $f1e; solutions $(same "$lf.bin" "$le.bin" 1e-8)"
      show "$lf"; show "$le"
    fi
  done
else
  bad "coefficient files: no periodic file, or $STENCILC_SRC $CFP or tests/solve/coefficient_periodic.stn -o failed"; show "$LOG/coefficient_file_periodic.stencilc"
fi
# 3D, a box stencil, periodic in z: the file written byte by byte as LANGUAGE.md 4.6 spells the
# format (not by PETSc), against c as an expression.
C3=tests/solve/coefficient_file3d.stn
sed 's/^coefficient c: file;/coefficient c = 1 + x + 2 * y * y + 3 * z;/' "$C3" >"$OUT/coefficient_expr3d.stn"
if python3 -c "
import struct, sys
M, N, P = 9, 8, 7
v = [1 + i / (M - 1) + 2 * (j / (N - 1)) ** 2 + 3 * (k / P) for k in range(P) for j in range(N) for i in range(M)]
open(sys.argv[1], 'wb').write(struct.pack('>ii', 1211214, len(v)) + struct.pack('>%dd' % len(v), *v))" "$OUT/c3d.k" &&
   compile coefficient_file3d "$C3" && compile coefficient_expr3d "$OUT/coefficient_expr3d.stn"; then
  for n in 1 4; do
    lf=$LOG/coefficient_file3d.$n le=$LOG/coefficient_expr3d.$n
    # shellcheck disable=SC2086
    mpirun "$n" "$lf" "$OUT/coefficient_file3d" -c_file "$OUT/c3d.k" $TIGHT -snes_monitor -snes_view_solution "binary:$lf.bin"
    rcf=$?
    # shellcheck disable=SC2086
    mpirun "$n" "$le" "$OUT/coefficient_expr3d" $TIGHT -snes_monitor -snes_view_solution "binary:$le.bin"
    rce=$?
    itf=$(newton "$lf") ite=$(newton "$le") f0f=$(fnorm "$lf" 0) f0e=$(fnorm "$le" 0)
    if solved "$lf" $rcf && solved "$le" $rce && [ "$itf" = "$ite" ] && close "$f0f" "$f0e" 1e-12 && same_ok "$lf.bin" "$le.bin" 1e-8; then
      ok "coefficient files: 3D box stencil, periodic z, on $n rank(s) = c as an expression: first norm $f0f ($f0e), $itf Newton iterations, solutions $(same "$lf.bin" "$le.bin" 1e-8)"
    else
      bad "coefficient files: 3D on $n rank(s): file exit $rcf, $itf iterations, first norm $f0f; expression exit $rce, $ite iterations, first norm $f0e; solutions $(same "$lf.bin" "$le.bin" 1e-8)"
      show "$lf"; show "$le"
    fi
  done
else
  bad "coefficient files: no 3D file (python3), or $STENCILC_SRC $C3 or its expression twin -o failed"; show "$LOG/coefficient_file3d.stencilc"
fi
section_done coefficient-files

# ---- 19 time-dependent programs (PETSc TS) ----------------------------------
# examples/heat_ts.stn against PETSc's TS tutorial ex13 (built from Debian's sources as the SNES
# tutorials are): the same Newton iterations per step and solutions at the final time to 1e-8;
# orders 1 and 2 of backward Euler and Crank-Nicolson; the IJacobian under -snes_test_jacobian
# inside TS steps; 2 ranks; a failed step named in a sentence (the GPU: scripts/gpu-check.sh, section time).
TSTUT=${PETSC_TS_TUTORIALS:-/usr/share/petsc/3.18/share/petsc/examples/src/ts/tutorials}
TSFIX="-ts_adapt_type none -ksp_rtol 1e-12 -snes_rtol 1e-12 -snes_atol 1e-13"
# steps LOG: the Newton iterations of each time step, from -ts_monitor and -snes_monitor.
steps() { awk '$2 == "SNES" && $3 == "Function" { n = $1 } $2 == "TS" && $3 == "dt" { if (seen) { printf "%s%s", sep, n; sep = " " } seen = 1 }' "$1"; }
# ts_ok LOG STATUS: the run exited 0 and says it integrated to its end.
ts_ok() { [ "$2" -eq 0 ] && grep -q ': integrated to t = ' "$1"; }
# shellcheck disable=SC2086
if ! [ -r "$TSTUT/ex13.c" ]; then
  bad "time: $TSTUT/ex13.c not found (apt-get install libpetsc3.18-dev-examples)"
elif ! mpicc $PETSC_CFLAGS -O2 "$TSTUT/ex13.c" $PETSC_LIBS -lm -o "$OUT/ex13" >"$LOG/ex13.cc" 2>&1; then
  bad "time: PETSc's ex13.c does not compile"; show "$LOG/ex13.cc"
elif ! compile heat_ts examples/heat_ts.stn; then
  bad "time: $STENCILC_SRC examples/heat_ts.stn -o failed"; show "$LOG/heat_ts.stencilc"
else
  for c in "8x8 defaults, 10 steps:-ts_max_steps 10" \
           "17x17, 10 steps of 0.001:-da_grid_x 17 -da_grid_y 17 -ts_type beuler -ts_dt 0.001 -ts_max_steps 10 $TSFIX" \
           "13x9, 5 Crank-Nicolson steps of 0.005:-da_grid_x 13 -da_grid_y 9 -ts_type cn -ts_dt 0.005 -ts_max_steps 5 $TSFIX" \
           "8x8, ex13's whole run (100 steps to t = 1):"; do
    what=${c%%:*} opts=${c#*:}
    n=heat_ts.$(echo "$what" | tr -c 'a-z0-9\n' '_')
    # shellcheck disable=SC2086
    run "$LOG/$n.ex13" "$OUT/ex13" $opts -ts_monitor -snes_monitor -ts_view_solution "binary:$LOG/$n.ex13.bin"
    rt=$?
    # shellcheck disable=SC2086
    run "$LOG/$n.ours" "$OUT/heat_ts" $opts -ts_monitor -snes_monitor -ts_view_solution "binary:$LOG/$n.ours.bin"
    ro=$?
    st=$(steps "$LOG/$n.ex13") so=$(steps "$LOG/$n.ours")
    if [ $rt -eq 0 ] && ts_ok "$LOG/$n.ours" $ro && [ -n "$st" ] && [ "$st" = "$so" ] && same_ok "$LOG/$n.ours.bin" "$LOG/$n.ex13.bin" 1e-8; then
      ok "time: heat_ts vs ex13, $what: Newton iterations per step [$st], solutions at the end rel $(same "$LOG/$n.ours.bin" "$LOG/$n.ex13.bin" 1e-8)"
    else
      bad "time: heat_ts vs ex13, $what: ex13 exit $rt, steps [$st]; heat_ts exit $ro, steps [$so]; solutions $(same "$LOG/$n.ours.bin" "$LOG/$n.ex13.bin" 1e-8)"
      show "$LOG/$n.ex13" 5; show "$LOG/$n.ours" 5
    fi
  done
  wcheck "heat_ts" "$OUT/heat_ts.src" heat_ts.c
  wcheck "runtime" "$OUT/heat_ts.src" stnts.c
  # 2 ranks (block Jacobi with ILU, both): the same per-step iterations and final state as ex13's.
  m=heat_ts.mpi2 o="-da_grid_x 17 -da_grid_y 17 -ts_dt 0.001 -ts_max_steps 10 $TSFIX"
  # shellcheck disable=SC2086
  mpirun 2 "$LOG/$m.ours" "$OUT/heat_ts" $o -ts_monitor -snes_monitor -ts_view_solution "binary:$LOG/$m.ours.bin"
  ro=$?
  # shellcheck disable=SC2086
  mpirun 2 "$LOG/$m.ex13" "$OUT/ex13" $o -ts_monitor -snes_monitor -ts_view_solution "binary:$LOG/$m.ex13.bin"
  if ts_ok "$LOG/$m.ours" $ro && [ "$(steps "$LOG/$m.ours")" = "$(steps "$LOG/$m.ex13")" ] && same_ok "$LOG/$m.ours.bin" "$LOG/$m.ex13.bin" 1e-8; then
    ok "time: heat_ts vs ex13 on 2 ranks, 17x17, 10 steps: Newton iterations per step [$(steps "$LOG/$m.ours")], solutions rel $(same "$LOG/$m.ours.bin" "$LOG/$m.ex13.bin" 1e-8)"
  else bad "time: heat_ts on 2 ranks (exit $ro) differs from ex13 on 2: steps [$(steps "$LOG/$m.ours")] vs [$(steps "$LOG/$m.ex13")]"; show "$LOG/$m.ours"; fi
  # A step whose Newton solve fails, without adaptivity: the step, the time and SNES's reason.
  l=$LOG/heat_ts.fail
  run "$l" "$OUT/heat_ts" -ts_dt 0.01 -ts_max_steps 5 -ts_adapt_type none -snes_max_it 1 -snes_rtol 1e-14 -snes_atol 1e-30 -snes_stol 0 -ksp_rtol 1e-3
  rc=$?
  if [ $rc -eq 1 ] && grep -q 'heat_ts: the time stepping failed in step 1, from t = 0\.* with dt = 0\.01: the Newton solve did not converge: .*(DIVERGED_MAX_IT)' "$l"; then
    ok "time: a step that cannot converge: exit 1, '$(grep -o -m 1 'the time stepping failed.*DIVERGED_MAX_IT)' "$l")'"
  else bad "time: a failing step: exit $rc, no sentence naming the step, the time and SNES's reason"; show "$l"; fi
fi

# Order in time at a fixed grid: tests/solve/ts_mms.stn (exact in space) against its exact final
# state (ts_mms_exact.stn), at 10, 20 and 40 steps to t = 1; the fitted order (least squares of
# log2 of the error) within 0.1 of 1 for backward Euler and of 2 for Crank-Nicolson and BDF2.
# shellcheck disable=SC2086
if compile ts_mms tests/solve/ts_mms.stn && compile ts_mms_exact tests/solve/ts_mms_exact.stn &&
   run "$LOG/ts_mms_exact" "$OUT/ts_mms_exact" $TIGHT -snes_view_solution "binary:$LOG/ts_mms_exact.bin"; then
  for c in "beuler:1:" "cn:2:" "bdf:2:-ts_bdf_order 2"; do
    ty=${c%%:*} rest=${c#*:} errs=""
    want=${rest%%:*} extra=${rest#*:}
    for n in 10 20 40; do
      # shellcheck disable=SC2086
      run "$LOG/ts_mms.$ty.$n" "$OUT/ts_mms" -ts_type "$ty" $extra -ts_dt "$(awk -v n="$n" 'BEGIN { printf "%.17g", 1 / n }')" -ts_max_steps "$n" -ts_max_time 2 \
        $TSFIX -snes_rtol 1e-14 -ksp_rtol 1e-14 -ts_view_solution "binary:$LOG/ts_mms.$ty.$n.bin"
      e=$("$VECDIFF" "$LOG/ts_mms.$ty.$n.bin" "$LOG/ts_mms_exact.bin" --rel 1 2>/dev/null | awk '{ print $1 }')
      errs="$errs ${e:-?}"
    done
    order=$(echo "$errs" | awk '{ n = 0; sx = sy = sxx = sxy = 0; for (i = 1; i <= NF; i++) { if ($i !~ /^[0-9.e+-]+$/ || $i <= 0) { print "?"; exit }
              x = (i - 1) * log(2); y = -log($i); n++; sx += x; sy += y; sxx += x * x; sxy += x * y }
              printf "%.3f", (n * sxy - sx * sy) / (n * sxx - sx * sx) }')
    if [ "$order" != "?" ] && awk -v p="$order" -v w="$want" 'BEGIN { d = p - w; exit !(d <= 0.1 && d >= -0.1) }'; then
      ok "time: $ty${extra:+ $extra} on ts_mms.stn, 10/20/40 steps: errors$errs, fitted order $order (design $want)"
    else bad "time: $ty${extra:+ $extra} on ts_mms.stn: errors$errs, fitted order $order, not within 0.1 of $want"; show "$LOG/ts_mms.$ty.10"; fi
  done
else
  bad "time: tests/solve/ts_mms.stn or ts_mms_exact.stn does not build or solve"; show "$LOG/ts_mms.stencilc"
fi

# The IJacobian, shift * dF/du_t + dF/du, against PETSc's finite differences of the IFunction inside
# TS steps (backward Euler and Crank-Nicolson shifts), on a problem whose dF/du_t depends on u and
# whose F reads u_t times u; and 2 ranks against 1.
if compile ts_nonlinear tests/solve/ts_nonlinear.stn; then
  for ty in beuler cn; do
    l=$LOG/ts_nonlinear.jac.$ty
    run "$l" "$OUT/ts_nonlinear" -ts_type "$ty" -ts_dt 0.05 -ts_max_steps 2 -snes_test_jacobian
    rc=$?
    worst=$(sed -n 's/.*||J - Jfd||_F\/||J||_F = \([^,]*\),.*/\1/p' "$l" | sort -g | tail -n 1)
    count=$(grep -c '||J - Jfd||_F/||J||_F = ' "$l")
    if ts_ok "$l" $rc && [ "$count" -ge 4 ] && awk -v w="$worst" 'BEGIN { exit !(w + 0 <= 1e-6) }'; then
      ok "time: ts_nonlinear's IJacobian under -snes_test_jacobian in $ty steps: $count tests, worst ||J - Jfd||_F/||J||_F = $worst"
    else bad "time: ts_nonlinear's IJacobian ($ty): exit $rc, $count tests, worst $worst"; show "$l"; fi
  done
  o="-ts_dt 0.05 -ts_max_steps 5 $TSFIX"
  # shellcheck disable=SC2086
  run "$LOG/ts_nonlinear.1" "$OUT/ts_nonlinear" $o -ts_view_solution "binary:$LOG/ts_nonlinear.1.bin"
  r1=$?
  # shellcheck disable=SC2086
  mpirun 2 "$LOG/ts_nonlinear.2" "$OUT/ts_nonlinear" $o -ts_view_solution "binary:$LOG/ts_nonlinear.2.bin"
  r2=$?
  if ts_ok "$LOG/ts_nonlinear.1" $r1 && ts_ok "$LOG/ts_nonlinear.2" $r2 && same_ok "$LOG/ts_nonlinear.2.bin" "$LOG/ts_nonlinear.1.bin" 1e-10; then
    ok "time: ts_nonlinear on 2 ranks equals 1 rank after 5 steps (rel $(same "$LOG/ts_nonlinear.2.bin" "$LOG/ts_nonlinear.1.bin" 1e-10))"
  else bad "time: ts_nonlinear on 2 ranks (exit $r2) vs 1 (exit $r1): $(same "$LOG/ts_nonlinear.2.bin" "$LOG/ts_nonlinear.1.bin" 1e-10)"; show "$LOG/ts_nonlinear.2"; fi
else
  bad "time: $STENCILC_SRC tests/solve/ts_nonlinear.stn -o failed"; show "$LOG/ts_nonlinear.stencilc"
fi
section_done time

# ---- 20 Gray-Scott (PETSc TS ex5) and the output over time ------------------
# examples/grayscott.stn against PETSc's TS tutorial advection-diffusion-reaction/ex5 (its
# sources beside ex13's): the same Newton iterations of every stage solve of every step and the
# same solutions at the end (1e-8) under backward Euler and ARKIMEX with fixed steps, on 1 and 2
# ranks, and under ex5's own defaults (adaptive ARKIMEX from dt = 1e-4) the same step sizes too;
# the IJacobian under -snes_test_jacobian inside steps. Then what a student looks at:
# -stn_output_series (a .pvd and its .vts files, read back by tests/solve/vtkseries.py),
# -stn_plot_frames and -stn_plot_steps (with gnuplot), and their errors.
ADR=$TSTUT/advection-diffusion-reaction
# solves LOG: the Newton iterations of each SNES solve, a step's stage solves joined by commas.
solves() {
  awk '$2 == "SNES" && $3 == "Function" { if ($1 == 0 && have) { s = s (s == "" ? "" : ",") n } n = $1; have = 1 }
       $2 == "TS" && $3 == "dt" { if (have) { s = s (s == "" ? "" : ",") n; have = 0 } if (s != "") { out = out sep s; sep = " " } s = "" }
       END { print out }' "$1"
}
# dts LOG: the time and step size of every step, from -ts_monitor.
dts() { awk '$2 == "TS" && $3 == "dt" { printf "%s@%s ", $4, $6 }' "$1"; }
# shellcheck disable=SC2086
if ! [ -r "$ADR/ex5.c" ]; then
  bad "grayscott: $ADR/ex5.c not found (apt-get install libpetsc3.18-dev-examples)"
elif ! mpicc $PETSC_CFLAGS -O2 -I "$ADR" "$ADR/ex5.c" "$ADR/reaction_diffusion.c" $PETSC_LIBS -lm -o "$OUT/ex5_ts" >"$LOG/ex5_ts.cc" 2>&1; then
  bad "grayscott: PETSc's TS ex5.c does not compile"; show "$LOG/ex5_ts.cc"
elif ! compile grayscott examples/grayscott.stn; then
  bad "grayscott: $STENCILC_SRC examples/grayscott.stn -o failed"; show "$LOG/grayscott.stencilc"
else
  wcheck "grayscott" "$OUT/grayscott.src" grayscott.c
  wcheck "runtime" "$OUT/grayscott.src" stnseries.c
  # ex5 runs to t = 2000 by default, the generated program to t = 1: the steps end the runs.
  for c in "1:33x33, 10 backward Euler steps of 0.5:-da_grid_x 33 -da_grid_y 33 -ts_type beuler -ts_dt 0.5 -ts_max_steps 10 $TSFIX" \
           "1:33x33, 10 ARKIMEX steps of 0.5:-da_grid_x 33 -da_grid_y 33 -ts_type arkimex -ts_dt 0.5 -ts_max_steps 10 $TSFIX" \
           "2:33x33, 10 backward Euler steps of 0.5:-da_grid_x 33 -da_grid_y 33 -ts_type beuler -ts_dt 0.5 -ts_max_steps 10 $TSFIX" \
           "2:25x33, 6 ARKIMEX steps of 1:-da_grid_x 25 -da_grid_y 33 -ts_type arkimex -ts_dt 1 -ts_max_steps 6 $TSFIX" \
           "1:ex5's defaults (65x65, adaptive ARKIMEX from dt = 1e-4), 20 steps:-ts_type arkimex -ts_dt 1e-4 -ts_max_steps 20"; do
    np=${c%%:*} rest=${c#*:}
    what=${rest%%:*} opts="${rest#*:} -ts_max_time 2000"
    nm=grayscott.$np.$(echo "$what" | tr '[:upper:]' '[:lower:]' | tr -c 'a-z0-9\n' '_')
    # shellcheck disable=SC2086
    mpirun "$np" "$LOG/$nm.ex5" "$OUT/ex5_ts" $opts -ts_monitor -snes_monitor -ts_view_solution "binary:$LOG/$nm.ex5.bin"
    rt=$?
    # shellcheck disable=SC2086
    mpirun "$np" "$LOG/$nm.ours" "$OUT/grayscott" $opts -ts_monitor -snes_monitor -ts_view_solution "binary:$LOG/$nm.ours.bin"
    ro=$?
    st=$(solves "$LOG/$nm.ex5") so=$(solves "$LOG/$nm.ours")
    if [ $rt -eq 0 ] && ts_ok "$LOG/$nm.ours" $ro && [ -n "$st" ] && [ "$st" = "$so" ] && [ "$(dts "$LOG/$nm.ex5")" = "$(dts "$LOG/$nm.ours")" ] &&
       same_ok "$LOG/$nm.ours.bin" "$LOG/$nm.ex5.bin" 1e-8; then
      ok "grayscott: vs ex5 on $np rank(s), $what: Newton iterations per solve [$st], the same steps, solutions at t = $(dts "$LOG/$nm.ours" | awk '{ sub(/.*@/, "", $NF); print $NF }') rel $(same "$LOG/$nm.ours.bin" "$LOG/$nm.ex5.bin" 1e-8)"
    else
      bad "grayscott: vs ex5 on $np rank(s), $what: ex5 exit $rt, solves [$st]; grayscott exit $ro, solves [$so]; solutions $(same "$LOG/$nm.ours.bin" "$LOG/$nm.ex5.bin" 1e-8)"
      show "$LOG/$nm.ex5" 5; show "$LOG/$nm.ours" 5
    fi
  done
  # The IJacobian against finite differences of the IFunction inside backward Euler and ARKIMEX steps.
  for ty in beuler arkimex; do
    l=$LOG/grayscott.jac.$ty
    run "$l" "$OUT/grayscott" -da_grid_x 17 -da_grid_y 17 -ts_type "$ty" -ts_dt 0.5 -ts_max_steps 2 -ts_adapt_type none -snes_test_jacobian
    rc=$?
    worst=$(sed -n 's/.*||J - Jfd||_F\/||J||_F = \([^,]*\),.*/\1/p' "$l" | sort -g | tail -n 1)
    count=$(grep -c '||J - Jfd||_F/||J||_F = ' "$l")
    if ts_ok "$l" $rc && [ "$count" -ge 4 ] && awk -v w="$worst" 'BEGIN { exit !(w + 0 <= 1e-6) }'; then
      ok "grayscott: the IJacobian under -snes_test_jacobian in $ty steps: $count tests, worst ||J - Jfd||_F/||J||_F = $worst"
    else bad "grayscott: the IJacobian ($ty): exit $rc, $count tests, worst $worst"; show "$l"; fi
  done

  # The VTK series: the states saved by -stn_output_every and -stn_output_dt, the last one the
  # final state (-ts_view_solution's), on 1 and 2 ranks; the program says where it went.
  if ! command -v python3 >/dev/null 2>&1; then
    note "python3 not found: the VTK series are not read back"
  else
    for c in "1:every 3rd step:-stn_output_every 3:0 1.5 3 4.5 5" \
             "2:every 3rd step:-stn_output_every 3:0 1.5 3 4.5 5" \
             "1:every t = 2:-stn_output_dt 2:0 2 4 5" \
             "1:every step (the default)::0 0.5 1 1.5 2 2.5 3 3.5 4 4.5 5"; do
      np=${c%%:*} rest=${c#*:}
      what=${rest%%:*} rest=${rest#*:}
      sched=${rest%%:*} saved=${rest#*:} # the times saved (not $times, the sections' durations)
      nm=series.$np.$(echo "$what" | tr -c 'a-z0-9\n' '_')
      d=$OUT/$nm
      # shellcheck disable=SC2086
      mpirun "$np" "$LOG/$nm" "$OUT/grayscott" -da_grid_x 33 -da_grid_y 29 -ts_dt 0.5 -ts_max_steps 10 -ts_max_time 2000 -ts_adapt_type none \
        -stn_output_series "$d" $sched -ts_view_solution "binary:$LOG/$nm.bin"
      rc=$?
      why=$(python3 tests/solve/vtkseries.py "$d/grayscott.pvd" 957 "$saved" "$LOG/$nm.bin" 2>&1)
      vs=$?
      if ts_ok "$LOG/$nm" $rc && [ $vs -eq 0 ] && grep -qF "written to $d/grayscott.pvd" "$LOG/$nm"; then
        ok "series: -stn_output_series, $what, $np rank(s): $why"
      else bad "series: -stn_output_series, $what, $np rank(s): exit $rc; $why"; show "$LOG/$nm" 5; fi
    done
  fi

  # Frames and the step sizes (gnuplot): a PNG per saved state, and dt against t of adaptive steps.
  if command -v gnuplot >/dev/null 2>&1; then
    d=$OUT/frames l=$LOG/frames
    run "$l" "$OUT/grayscott" -da_grid_x 33 -da_grid_y 33 -ts_dt 1 -ts_max_time 60 -ts_adapt_type basic -stn_plot_frames "$d" -stn_output_dt 20 -stn_plot_steps "$OUT/steps.png"
    rc=$?
    nf=0 why=""
    for f in "$d"/grayscott_*.png; do
      [ -f "$f" ] || continue
      nf=$((nf + 1))
      [ "$(od -A n -t x1 -N 8 "$f" | tr -d ' \n')" = 89504e470d0a1a0a ] || why="$why; $f is not a PNG"
    done
    # t = 0, the first steps at or past 20, 40 and 60 (the last the final state)
    [ "$nf" -eq 4 ] || why="$why; $nf frames, not 4"
    grep -qF "4 frames drawn in $d/grayscott_0000.png to _0003.png" "$l" || why="$why; no line saying where the frames went"
    [ "$(od -A n -t x1 -N 8 "$OUT/steps.png" 2>/dev/null | tr -d ' \n')" = 89504e470d0a1a0a ] || why="$why; no step-size picture"
    grep -qF "step-size history drawn in $OUT/steps.png" "$l" || why="$why; no line saying where the step sizes went"
    if ts_ok "$l" $rc && [ -z "$why" ]; then ok "series: -stn_plot_frames -stn_output_dt 20 draws 4 frames to t = 60; -stn_plot_steps draws dt against t"
    else bad "series: frames and steps: exit $rc${why}"; show "$l" 5; fi
    # Without gnuplot on PATH (its directories linked without it, as tests/plot does): one note for
    # all the frames, none drawn, the series still written, exit 0.
    nopath="" i=0 IFS_SAVE=$IFS
    IFS=:
    for p in $PATH; do
      IFS=$IFS_SAVE
      if [ -n "$p" ] && [ -e "$p/gnuplot" ]; then
        i=$((i + 1)) && mkdir -p "$OUT/nognuplot$i"
        for f in "$p"/*; do case ${f##*/} in gnuplot*) ;; *) ln -s "$f" "$OUT/nognuplot$i/${f##*/}" 2>/dev/null ;; esac; done
        p=$(cd "$OUT/nognuplot$i" && pwd)
      fi
      nopath="${nopath:+$nopath:}$p"
    done
    IFS=$IFS_SAVE
    d=$OUT/frames.nognuplot l=$LOG/frames.nognuplot
    PATH=$nopath run "$l" "$OUT/grayscott" -da_grid_x 17 -da_grid_y 17 -ts_dt 0.5 -ts_max_steps 4 -ts_max_time 2000 -stn_plot_frames "$d" -stn_output_series "$d"
    rc=$?
    notes=$(grep -c 'note: gnuplot is not installed' "$l")
    if ts_ok "$l" $rc && [ "$notes" -eq 1 ] && ! [ -e "$d/grayscott_0000.png" ] && [ -s "$d/grayscott_0004.vts" ]; then
      ok "series: without gnuplot, frames give one note ('$(grep -m 1 -o 'gnuplot is not installed.*' "$l")'), the series is written, exit 0"
    else bad "series: frames without gnuplot: exit $rc, $notes notes (want 1), or a frame drawn, or no series"; show "$l" 5; fi
  else
    note "gnuplot is not installed (make deps installs gnuplot-nox): -stn_plot_frames and -stn_plot_steps not checked"
  fi

  # Errors: in a sentence, before the time stepping (no step taken), with a non-zero exit.
  D=$OUT/series.err
  mkdir -p "$D" && : >"$D/file"
  for c in "a missing parent:-stn_output_series $D/no/such:-stn_output_series $D/no/such: cannot make the directory: No such file or directory; nothing was solved" \
           "a file, not a directory:-stn_plot_frames $D/file:-stn_plot_frames $D/file: it exists and is not a directory" \
           "an unwritable step picture:-stn_plot_steps $D/no/x.png:-stn_plot_steps $D/no/x.png: cannot write there (No such file or directory)" \
           "both schedules:-stn_output_series $D/s -stn_output_every 2 -stn_output_dt 1:-stn_output_every and -stn_output_dt both choose which states are saved: give one of them" \
           "-stn_output_every 0:-stn_output_series $D/s -stn_output_every 0:-stn_output_every 0: give a number of steps, 1 or more" \
           "a schedule without output:-stn_output_dt 1:-stn_output_dt chooses the states that -stn_output_series and -stn_plot_frames save, but neither was given"; do
    what=${c%%:*} rest=${c#*:}
    opts=${rest%%:*} want=${rest#*:}
    l=$LOG/series.err.$(echo "$what" | tr -c 'a-z0-9\n' '_')
    # shellcheck disable=SC2086
    run "$l" "$OUT/grayscott" -ts_max_steps 2 -ts_monitor $opts
    rc=$?
    if [ $rc -ne 0 ] && [ $rc -lt 124 ] && grep -qF -- "$want" "$l" && ! grep -q '^1 TS dt' "$l"; then ok "series: $what is refused before the first step: '$want'"
    else bad "series: $what: exit $rc, no sentence '$want' (or steps were taken)"; show "$l" 5; fi
  done
  # A state that cannot be written (the third file a link to /dev/full) stops the run there with
  # a sentence; the .pvd lists the two states before it.
  rm -rf "$D/full" && mkdir -p "$D/full" && ln -s /dev/full "$D/full/grayscott_0002.vts"
  l=$LOG/series.full
  run "$l" "$OUT/grayscott" -da_grid_x 17 -da_grid_y 17 -ts_dt 0.5 -ts_max_steps 4 -ts_max_time 100 -stn_output_series "$D/full" -ts_monitor
  rc=$?
  want="-stn_output_series: cannot write the solution to $D/full/grayscott_0002.vts: No space left on device; nothing was written there (at t = 1., step 2)"
  if [ $rc -ne 0 ] && [ $rc -lt 124 ] && grep -qF -- "$want" "$l" && ! grep -q '^3 TS dt' "$l" && [ "$(grep -c '<DataSet ' "$D/full/grayscott.pvd")" -eq 2 ]; then
    ok "series: a state that cannot be written stops the run at step 2, the .pvd listing the 2 before: '$want'"
  else bad "series: a link to /dev/full in the series: exit $rc, no sentence '$want', or steps went on"; show "$l" 5; fi
  if is_built bratu2d; then
    l=$LOG/series.steady
    run "$l" "$OUT/bratu2d" -stn_output_series "$D/s"
    rc=$?
    if [ $rc -ne 0 ] && [ $rc -lt 124 ] && grep -qF -- "-stn_output_series shows a solution over time, but bratu2d is steady (its residuals take no dt(...))" "$l" && ! [ -e "$D/s" ]; then
      ok "series: a steady program refuses -stn_output_series in a sentence and makes no directory"
    else bad "series: bratu2d -stn_output_series: exit $rc, no sentence"; show "$l" 5; fi
  fi
fi
section_done grayscott

# ---- 21 IMEX: explicit(...) terms (TS's RHSFunction) -------------------------
# examples/allen_cahn.stn (diffusion implicit, the cubic explicit) against the same file without
# explicit(...) (all implicit), both under ARKIMEX at fixed steps: their difference shrinks as
# dt^3 (by at least 4 per halving, below 1e-6 at the smallest), and the IMEX run's implicit
# stages, linear, take one Newton iteration each (3 per step). Orders of ARKIMEX in IMEX mode on
# tests/solve/ts_imex_mms.stn (-D 0.01: not stiff at these steps) and of explicit methods on
# tests/solve/ts_explicit_mms.stn (u_t = G, the RHSFunction alone), fitted within 0.2 of the
# design order; an explicit method refused on a program with an implicit part; the C compiles
# cleanly.
if compile allen_cahn examples/allen_cahn.stn &&
   sed 's/explicit(u^3 - u)/(u^3 - u)/' examples/allen_cahn.stn >"$OUT/allen_cahn_implicit.stn" &&
   ! grep -v '^#' "$OUT/allen_cahn_implicit.stn" | grep -q 'explicit(' && compile allen_cahn_implicit "$OUT/allen_cahn_implicit.stn"; then
  wcheck "allen_cahn" "$OUT/allen_cahn.src" allen_cahn.c
  diffs="" its=""
  for n in 10 20 40 80; do
    o="-da_grid_x 32 -da_grid_y 32 -ts_type arkimex -ts_dt $(awk -v n="$n" 'BEGIN { printf "%.17g", 1 / n }') -ts_max_steps $n -ts_max_time 2 $TSFIX"
    # shellcheck disable=SC2086
    run "$LOG/imex.ac.$n" "$OUT/allen_cahn" $o -ts_view_solution "binary:$LOG/imex.ac.$n.bin"
    ra=$?
    # shellcheck disable=SC2086
    run "$LOG/imex.aci.$n" "$OUT/allen_cahn_implicit" $o -ts_view_solution "binary:$LOG/imex.aci.$n.bin"
    ri=$?
    d=$("$VECDIFF" "$LOG/imex.ac.$n.bin" "$LOG/imex.aci.$n.bin" --rel 1 2>/dev/null | awk '{ print $1 }')
    ts_ok "$LOG/imex.ac.$n" $ra && ts_ok "$LOG/imex.aci.$n" $ri || d="?"
    diffs="$diffs ${d:-?}"
    its="$its $(sed -n "s/.* in \([0-9]*\) arkimex steps, \([0-9]*\) Newton .*/\1:\2/p" "$LOG/imex.ac.$n")"
  done
  if echo "$diffs" | awk '{ for (i = 1; i <= NF; i++) { if ($i !~ /^[0-9.e+-]+$/) exit 1; if (i > 1 && $i > $(i - 1) / 4) exit 1 } exit !($NF <= 1e-6) }'; then
    ok "imex: allen_cahn IMEX vs all implicit, ARKIMEX at dt 1/10 .. 1/80 on 32x32: relative differences$diffs"
  else bad "imex: allen_cahn IMEX vs all implicit: differences$diffs do not shrink by 4 per halving to <= 1e-6"; show "$LOG/imex.ac.10" 4; show "$LOG/imex.aci.10" 4; fi
  if [ -n "$its" ] && echo "$its" | awk '{ for (i = 1; i <= NF; i++) { split($i, a, ":"); if (a[1] == "" || a[2] != 3 * a[1]) exit 1 } }'; then
    ok "imex: allen_cahn's implicit part is linear: one Newton iteration per implicit stage (steps:Newton$its)"
  else bad "imex: allen_cahn's Newton iterations (steps:Newton$its) are not 3 per step"; fi
  l=$LOG/imex.ac.rk
  run "$l" "$OUT/allen_cahn" -ts_type rk -ts_max_steps 2
  rc=$?
  if [ $rc -ne 0 ] && [ $rc -lt 124 ] && grep -q 'explicit ODE integrator but provided an implicit function' "$l"; then
    ok "imex: -ts_type rk on allen_cahn (an implicit part besides dt(u)) is refused by PETSc in a sentence"
  else bad "imex: -ts_type rk on allen_cahn: exit $rc, no refusal"; show "$l" 5; fi
else
  bad "imex: examples/allen_cahn.stn or its all-implicit twin does not build"; show "$LOG/allen_cahn.stencilc"; show "$LOG/allen_cahn_implicit.stencilc"
fi

# fit_order "E1 E2 E3": the least-squares slope of -log2(error) over halvings of dt, or ?.
fit_order() {
  echo "$1" | awk '{ n = 0; sx = sy = sxx = sxy = 0; for (i = 1; i <= NF; i++) { if ($i !~ /^[0-9.e+-]+$/ || $i <= 0) { print "?"; exit }
    x = (i - 1) * log(2); y = -log($i); n++; sx += x; sy += y; sxx += x * x; sxy += x * y }
    printf "%.3f", (n * sxy - sx * sy) / (n * sxx - sx * sx) }'
}
# order_test NAME PROGRAM DESIGN "STEPS" OPTIONS...: errors at t = 1 against ts_mms_exact.bin.
order_test() {
  name=$1 prog=$2 want=$3 steps=$4
  shift 4
  errs=""
  for n in $steps; do
    # shellcheck disable=SC2086
    run "$LOG/$name.$n" "$OUT/$prog" "$@" -ts_dt "$(awk -v n="$n" 'BEGIN { printf "%.17g", 1 / n }')" -ts_max_steps "$n" -ts_max_time 2 \
      $TSFIX -snes_rtol 1e-14 -ksp_rtol 1e-14 -ts_view_solution "binary:$LOG/$name.$n.bin"
    rc=$?
    e=$("$VECDIFF" "$LOG/$name.$n.bin" "$LOG/ts_mms_exact.bin" --rel 1 2>/dev/null | awk '{ print $1 }')
    ts_ok "$LOG/$name.$n" $rc || e="?"
    errs="$errs ${e:-?}"
  done
  order=$(fit_order "$errs")
  if [ "$order" != "?" ] && awk -v p="$order" -v w="$want" 'BEGIN { d = p - w; exit !(d <= 0.2 && d >= -0.2) }'; then
    ok "imex: $* on $prog.stn, $(echo $steps | tr ' ' /) steps: errors$errs, fitted order $order (design $want)"
  else bad "imex: $* on $prog.stn: errors$errs, fitted order $order, not within 0.2 of $want"; show "$LOG/$name.$(echo $steps | cut -d' ' -f1)" 5; fi
}
if [ -s "$LOG/ts_mms_exact.bin" ] && compile ts_imex_mms tests/solve/ts_imex_mms.stn && compile ts_explicit_mms tests/solve/ts_explicit_mms.stn; then
  wcheck "ts_explicit_mms" "$OUT/ts_explicit_mms.src" ts_explicit_mms.c
  order_test imex.ark3 ts_imex_mms 3 "40 80 160" -D 0.01 -ts_type arkimex
  order_test imex.ark2e ts_imex_mms 2 "10 20 40" -D 0.01 -ts_type arkimex -ts_arkimex_type 2e
  order_test imex.ark4 ts_imex_mms 4 "10 20 40" -D 0.01 -ts_type arkimex -ts_arkimex_type 4
  order_test imex.rk3 ts_explicit_mms 3 "200 400 800" -ts_type rk
  order_test imex.ssp ts_explicit_mms 2 "200 400 800" -ts_type ssp
  order_test imex.euler ts_explicit_mms 1 "200 400 800" -ts_type euler
  order_test imex.arkx ts_explicit_mms 3 "200 400 800" -ts_type arkimex
  # An explicit method past its stability limit: the state blows up, and the run says so (exit 1).
  l=$LOG/imex.unstable
  run "$l" "$OUT/ts_explicit_mms" -da_grid_x 41 -ts_type rk -ts_dt 1e-3 -ts_adapt_type none -ts_max_steps 50
  rc=$?
  if [ $rc -eq 1 ] && grep -q "ts_explicit_mms: the state at t = .* after 50 rk steps is not finite (NaN or Inf)" "$l"; then
    ok "imex: -ts_type rk beyond its stability limit: exit 1, '$(grep -o -m 1 'the state at t = .* is not finite (NaN or Inf)' "$l")'"
  else bad "imex: rk beyond its stability limit: exit $rc, no sentence"; show "$l" 5; fi
else
  bad "imex: tests/solve/ts_imex_mms.stn or ts_explicit_mms.stn does not build (or no ts_mms_exact.bin from section 19)"
  show "$LOG/ts_imex_mms.stencilc"; show "$LOG/ts_explicit_mms.stencilc"
fi
section_done imex
times=${times# }
echo "solve: $pass passed, $fail failed in $(( $(date +%s) - started )) s (${times%,})"
[ $fail -eq 0 ]
