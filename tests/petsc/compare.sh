#!/bin/sh
# tests/petsc/compare.sh: runs PETSc's SNES tutorials and the programs that
# stencilc generates from the examples that restate them, with the same grid,
# parameters and solver options, and checks that they compute the same thing:
#
#   ex5  (2D Bratu)       vs  examples/bratu2d.stn
#   ex14 (3D Bratu)       vs  examples/sfi3d.stn
#   ex19 (driven cavity)  vs  examples/cavity.stn
#
# For every case it asserts that
#   - both converge (-snes_converged_reason says "converged", exit status 0);
#   - the initial residual norms (iteration 0 of -snes_monitor, printed by
#     PETSc with %14.12e) agree to 1e-12 relative: same initial guess, same
#     residual, same scaling;
#   - the Newton iteration counts differ by at most one;
#   - the converged solutions (-snes_view_solution binary:FILE) agree to 1e-8
#     relative in the 2-norm (tests/petsc/vecdiff).
# It prints one line per case and exits non-zero if any case fails.
#
# Usage, from the repository root:
#   tests/petsc/compare.sh [--self] [BRATU2D SFI3D CAVITY]
#
#   BRATU2D SFI3D CAVITY   our programs; by default build/tests/petsc/bratu2d,
#                          sfi3d and cavity, which the script (re)builds with
#                          `$STENCILC examples/NAME.stn -o PROG` when missing or
#                          older than the .stn file or than the compiler.
#   --self                 (or PETSC_COMPARE_SELF=1) compare each tutorial with
#                          itself: tests this script's machinery without stencilc.
#
# Environment:
#   STENCILC        the compiler (default bin/stencilc)
#   MPIEXEC         launcher for both programs, e.g. "mpiexec -n 2" (default:
#                   none, one process). Solutions are compared in the DMDA's
#                   natural ordering, which VecView writes whatever the layout.
#   OURS_OPTS       extra options for our programs only (e.g. "-par 5.9" to see
#                   the checks fail)
#   RUN_TIMEOUT     seconds allowed per run (default 300)
#   KEEP=1          keep the work directory with every run's output
#
# The tutorials come from libpetsc3.18-dev-examples and are built by
# tests/petsc/build-tutorials.sh into build/petsc-tutorials/.
set -u

self=${PETSC_COMPARE_SELF:-0}
if [ "${1:-}" = "--self" ]; then self=1; shift; fi
if [ "${1:-}" = "-h" ] || [ "${1:-}" = "--help" ]; then
  sed -n '2,/^set -u/p' "$0" | sed -e '/^set -u/d' -e 's/^# \{0,1\}//'
  exit 0
fi
if [ $# -ne 0 ] && [ $# -ne 3 ]; then
  echo "usage: tests/petsc/compare.sh [--self] [BRATU2D SFI3D CAVITY]" >&2
  exit 2
fi

# Our programs, made absolute before moving to the repository root.
abspath() { case $1 in /*) echo "$1" ;; *) echo "$PWD/$1" ;; esac; }
given=0
if [ $# -eq 3 ]; then
  given=1
  prog_bratu2d=$(abspath "$1"); prog_sfi3d=$(abspath "$2"); prog_cavity=$(abspath "$3")
fi
cd "$(dirname "$0")/../.." || exit 2
if [ $given = 0 ]; then
  prog_bratu2d=$PWD/build/tests/petsc/bratu2d
  prog_sfi3d=$PWD/build/tests/petsc/sfi3d
  prog_cavity=$PWD/build/tests/petsc/cavity
fi

STENCILC=${STENCILC:-bin/stencilc}
MPIEXEC=${MPIEXEC:-}
OURS_OPTS=${OURS_OPTS:-}
RUN_TIMEOUT=${RUN_TIMEOUT:-300}
TUTDIR=$PWD/build/petsc-tutorials

tests/petsc/build-tutorials.sh "$TUTDIR" || { echo "petsc: FAIL: cannot build the PETSc tutorials" >&2; exit 1; }
VECDIFF=$TUTDIR/vecdiff

work=$(mktemp -d "${TMPDIR:-/tmp}/stencilc-petsc.XXXXXX") || exit 2
if [ "${KEEP:-0}" = 1 ]; then
  echo "petsc: keeping the runs in $work"
else
  trap 'rm -rf "$work"' EXIT
fi
trap 'exit 130' HUP INT PIPE TERM

pass=0
fail=0

# Solver options common to every run: tight tolerances, the monitor the
# checks read, and the converged reason. GMRES/ILU(0), PETSc's defaults.
SOLVER="-snes_rtol 1e-12 -snes_atol 1e-13 -ksp_rtol 1e-12 -snes_monitor -snes_converged_reason"

# newer A B: A was modified after B (POSIX test has no -nt).
newer() { [ -n "$(find "$1" -prune -newer "$2" 2>/dev/null)" ]; }

# build_ours NAME PROG: compile examples/NAME.stn when PROG is missing or stale.
build_ours() {
  stn=examples/$1.stn
  compiler=$(command -v "$STENCILC") || compiler=""
  if [ -x "$2" ] && ! newer "$stn" "$2" && ! newer "${compiler:-$stn}" "$2"; then return 0; fi
  if [ -z "$compiler" ]; then
    echo "petsc: FAIL: $STENCILC not found (run make), cannot build $2" >&2
    return 1
  fi
  mkdir -p "$(dirname "$2")"
  echo "$STENCILC $stn -o $2"
  if ! "$STENCILC" "$stn" -o "$2" >"$work/$1.stencilc.log" 2>&1; then
    echo "petsc: FAIL: $STENCILC $stn -o $2 failed:" >&2
    sed 's/^/  | /' "$work/$1.stencilc.log" | tail -20 >&2
    return 1
  fi
  [ -x "$2" ] || { echo "petsc: FAIL: $STENCILC $stn -o $2 made no program" >&2; return 1; }
}

# run_prog LOG SOLUTION PROGRAM OPTIONS...: runs one solve; status in $?.
run_prog() {
  log=$1 sol=$2 prog=$3
  shift 3
  # shellcheck disable=SC2086
  timeout "$RUN_TIMEOUT" $MPIEXEC "$prog" "$@" -snes_view_solution "binary:$sol" >"$log" 2>&1
}

# f0 LOG: the residual norm of iteration 0; its LOG: the last iteration number.
f0() { awk '$1 == "0" && $2 == "SNES" && $3 == "Function" && $4 == "norm" { print $5; exit }' "$1"; }
its() { awk '$2 == "SNES" && $3 == "Function" && $4 == "norm" { n = $1 } END { print n }' "$1"; }
converged() { grep -q '^Nonlinear solve converged' "$1"; }

# grid_label OPTIONS...: "NXxNY" or "NXxNYxNZ" (default 4 points each, as in
# the tutorials and the .stn files) followed by the other problem options.
grid_label() {
  dim=$1; shift
  nx=4 ny=4 nz=4 rest=""
  [ $# -eq 0 ] && rest=" (defaults)"
  while [ $# -gt 0 ]; do
    case $1 in
      -da_grid_x) nx=$2; shift 2 ;;
      -da_grid_y) ny=$2; shift 2 ;;
      -da_grid_z) nz=$2; shift 2 ;;
      *) rest="$rest $1"; shift ;;
    esac
  done
  if [ "$dim" = 3 ]; then printf '%sx%sx%s%s' "$nx" "$ny" "$nz" "$rest"; else printf '%sx%s%s' "$nx" "$ny" "$rest"; fi
}

# show_log TITLE LOG: the end of a run's output, for a failure.
show_log() {
  echo "  --- $1 (last lines of $2):"
  tail -15 "$2" | sed 's/^/  | /'
}

# compare TUTORIAL OURS_NAME OURS_PROG DIM "TUTORIAL-ONLY OPTIONS" PROBLEM OPTIONS...
compare() {
  tut=$1 name=$2 ours=$3 dim=$4 tutonly=$5
  shift 5
  id=$((pass + fail + 1))
  label=$(grid_label "$dim" "$@")
  if [ "$self" = 1 ]; then oursname="$tut(self)"; else oursname=$name; fi
  head="petsc: $tut vs $oursname $label"
  tlog=$work/$id.$tut.log tsol=$work/$id.$tut.bin
  olog=$work/$id.$name.log osol=$work/$id.$name.bin

  # shellcheck disable=SC2086
  run_prog "$tlog" "$tsol" "$TUTDIR/$tut" "$@" $SOLVER $tutonly
  trc=$?
  if [ "$self" = 1 ]; then
    # shellcheck disable=SC2086
    run_prog "$olog" "$osol" "$TUTDIR/$tut" "$@" $SOLVER $tutonly $OURS_OPTS
  else
    # shellcheck disable=SC2086
    run_prog "$olog" "$osol" "$ours" "$@" $SOLVER $OURS_OPTS
  fi
  orc=$?

  why=""
  tf0=$(f0 "$tlog") of0=$(f0 "$olog")
  tits=$(its "$tlog") oits=$(its "$olog")
  [ $trc -eq 0 ] || why="$why; $tut exited with status $trc"
  [ $orc -eq 0 ] || why="$why; $oursname exited with status $orc"
  converged "$tlog" || why="$why; $tut did not converge"
  converged "$olog" || why="$why; $oursname did not converge"
  if [ -z "$tf0" ] || [ -z "$of0" ]; then
    why="$why; no -snes_monitor output"
    f0txt="F0 ${tf0:-?} vs ${of0:-?}"
    itstxt="newton ${tits:-?} vs ${oits:-?}"
  else
    # Relative difference of the printed F0; a last-digit difference of the
    # 13 printed digits is at most 1e-12 relative, hence the small slack.
    f0rel=$(awk -v a="$tf0" -v b="$of0" 'BEGIN { d = a - b; if (d < 0) d = -d; m = (a < 0 ? -a : a); if (m == 0) { print (d == 0 ? 0 : 1); exit } printf "%.1e", d / m }')
    f0ok=$(awk -v a="$tf0" -v b="$of0" 'BEGIN { d = a - b; if (d < 0) d = -d; m = (a < 0 ? -a : a); print ((m == 0 && d == 0) || (m > 0 && d <= 1.000001e-12 * m)) ? 1 : 0 }')
    f0txt="F0 $tf0 vs $of0 (rel $f0rel)"
    [ "$f0ok" = 1 ] || why="$why; initial residual norms differ by more than 1e-12 relative"
    itstxt="newton $tits vs $oits"
    d=$((tits - oits))
    if [ $d -gt 1 ] || [ $d -lt -1 ]; then why="$why; Newton iteration counts differ by more than one"; fi
  fi
  if [ -s "$tsol" ] && [ -s "$osol" ]; then
    soltxt=$("$VECDIFF" "$osol" "$tsol" --rel 1e-8 2>&1)
    src=$?
    soltxt=$(echo "$soltxt" | tr '\n' ' ' | sed 's/ *$//')
    case $src in
      0) ;;
      1) why="$why; solutions differ by more than 1e-8 relative" ;;
      *) why="$why; cannot compare the solutions ($soltxt)"; soltxt="?" ;;
    esac
  else
    soltxt="?"
    why="$why; no solution written"
  fi

  line="$head: $f0txt, $itstxt, solution rel $soltxt"
  if [ -z "$why" ]; then
    echo "$line: ok"
    pass=$((pass + 1))
  else
    echo "$line: FAIL${why#;}"
    show_log "$tut $* $SOLVER $tutonly" "$tlog"
    if [ "$self" = 1 ]; then
      show_log "$tut $* $SOLVER $tutonly $OURS_OPTS (as ours)" "$olog"
    else
      show_log "$ours $* $SOLVER $OURS_OPTS" "$olog"
    fi
    fail=$((fail + 1))
  fi
}

# pair TUTORIAL NAME PROG: prepares our program; returns non-zero to skip the pair.
pair() {
  if [ "$self" = 1 ] || [ $given = 1 ]; then
    if [ "$self" = 0 ] && ! [ -x "$3" ]; then
      echo "petsc: $1 vs $2: FAIL: $3 is not an executable program"
      fail=$((fail + 1))
      return 1
    fi
    return 0
  fi
  if ! build_ours "$2" "$3"; then
    echo "petsc: $1 vs $2: FAIL: no program to compare"
    fail=$((fail + 1))
    return 1
  fi
}

# ex5: 2D Bratu. ex5's default problem is NOT Bratu: it solves the manufactured
# solution MMS 1 (-mms defaults to 1, ex5.c line 606); -mms 0 selects the
# plain Bratu problem with zero boundary values that bratu2d.stn states.
# Grids with nx < ny are left out: ex5's hand-written Jacobian tests
# `j + 1 != info->mx - 1` (ex5.c line 421, should be my), which drops a true
# coupling when mx < my; Newton then stalls (9x17 reaches DIVERGED_MAX_IT).
# With nx > ny the extra entry it keeps only multiplies the zero boundary
# update, so 17x9 is sound.
if pair ex5 bratu2d "$prog_bratu2d"; then
  compare ex5 bratu2d "$prog_bratu2d" 2 "-mms 0"                                     # ex5's defaults: 4x4, par 6
  compare ex5 bratu2d "$prog_bratu2d" 2 "-mms 0" -da_grid_x 17 -da_grid_y 17
  compare ex5 bratu2d "$prog_bratu2d" 2 "-mms 0" -da_grid_x 33 -da_grid_y 33 -par 6.5
  compare ex5 bratu2d "$prog_bratu2d" 2 "-mms 0" -da_grid_x 17 -da_grid_y 9 -par 1
fi

# ex14: 3D Bratu (par in (0, 6.81), default 6, 4x4x4 grid).
if pair ex14 sfi3d "$prog_sfi3d"; then
  compare ex14 sfi3d "$prog_sfi3d" 3 ""                                              # ex14's defaults
  compare ex14 sfi3d "$prog_sfi3d" 3 "" -da_grid_x 9 -da_grid_y 9 -da_grid_z 9
  compare ex14 sfi3d "$prog_sfi3d" 3 "" -da_grid_x 9 -da_grid_y 9 -da_grid_z 9 -par 6.5
  compare ex14 sfi3d "$prog_sfi3d" 3 "" -da_grid_x 13 -da_grid_y 9 -da_grid_z 7 -par 3
fi

# ex19: driven cavity. Defaults: lidvelocity 1/(mx*my), prandtl 1, grashof 1,
# 4x4 grid. ex19 sets no Jacobian: SNES uses the DMDA's finite-difference
# coloring (ours: the compiler's Jacobian). Cases where both converge alike;
# on the hardest one, GMRES(30)/ILU at -ksp_rtol 1e-12 stagnates on the
# colored FD Jacobian of a 33x33 grid, so it runs 24x16 with a restart of 100.
if pair ex19 cavity "$prog_cavity"; then
  compare ex19 cavity "$prog_cavity" 2 ""                                            # ex19's defaults
  compare ex19 cavity "$prog_cavity" 2 "" -da_grid_x 16 -da_grid_y 16                # default lid 1/256
  compare ex19 cavity "$prog_cavity" 2 "" -da_grid_x 20 -da_grid_y 12 -lidvelocity 1 -grashof 100 -prandtl 0.7
  compare ex19 cavity "$prog_cavity" 2 "" -da_grid_x 17 -da_grid_y 17 -lidvelocity 10 -grashof 1000
  compare ex19 cavity "$prog_cavity" 2 "" -da_grid_x 24 -da_grid_y 16 -lidvelocity 100 -grashof 10000 -ksp_gmres_restart 100
fi

# Grid hierarchies. The generated program registers its residual and Jacobian with PETSc's
# DMDA-local interface, as ex5, ex14 and ex19 do, so every grid PETSc makes gets them with its own
# sizes and spacing: the levels of -pc_type mg (each level's KSP asks for its operator on the
# level's DMDA, rediscretized as the tutorials do), -da_refine, and -snes_grid_sequence (a solve
# on each grid from the coarsest, each one's solution interpolated as the next one's guess).
# With the same operators on every grid, the iteration counts must be equal, step by step.
# compare_counts WHAT TUTORIAL NAME PROG "TUTORIAL-ONLY OPTIONS" "HIERARCHY OPTIONS" OPTIONS...
#   WHAT: linear (Krylov iterations per Newton step) or nonlinear (Newton iterations per grid)
compare_counts() {
  what=$1 tut=$2 name=$3 ours=$4 tutonly=$5 hier=$6
  shift 6
  [ "$self" = 1 ] && return 0
  case $what in
    linear) report="-ksp_converged_reason -snes_rtol 1e-12 -ksp_rtol 1e-10" pattern="Linear solve converged" ;;
    *) report="-snes_converged_reason -snes_rtol 1e-10" pattern="Nonlinear solve converged" ;;
  esac
  # shellcheck disable=SC2086
  timeout "$RUN_TIMEOUT" "$TUTDIR/$tut" "$@" $hier $report $tutonly >"$work/h.$tut.log" 2>&1
  trc=$?
  # shellcheck disable=SC2086
  timeout "$RUN_TIMEOUT" "$ours" "$@" $hier $report >"$work/h.$name.log" 2>&1
  orc=$?
  tseq=$(awk -v p="$pattern" 'index($0, p) {printf "%s ", $NF}' "$work/h.$tut.log")
  oseq=$(awk -v p="$pattern" 'index($0, p) {printf "%s ", $NF}' "$work/h.$name.log")
  line="petsc: $hier: $tut vs $name $*: $what iterations [ $tseq] vs [ $oseq]"
  if [ $trc -eq 0 ] && [ $orc -eq 0 ] && [ -n "$tseq" ] && [ "$tseq" = "$oseq" ]; then
    echo "$line: ok"
    pass=$((pass + 1))
  else
    echo "$line: FAIL (exit $trc and $orc, or different sequences)"
    tail -5 "$work/h.$name.log"
    fail=$((fail + 1))
  fi
}
if [ "$self" = 0 ]; then
  if [ -x "$prog_bratu2d" ]; then
    compare_counts linear ex5 bratu2d "$prog_bratu2d" "-mms 0" "-pc_type mg -pc_mg_levels 3" -da_grid_x 33 -da_grid_y 33
    compare_counts linear ex5 bratu2d "$prog_bratu2d" "-mms 0" "-da_refine 2 -pc_type mg" -da_grid_x 9 -da_grid_y 9
    compare_counts nonlinear ex5 bratu2d "$prog_bratu2d" "-mms 0" "-snes_grid_sequence 2" -da_grid_x 9 -da_grid_y 9
    # Galerkin coarse operators (R A P of the fine matrix), each kind
    for g in pmat mat both; do
      compare_counts linear ex5 bratu2d "$prog_bratu2d" "-mms 0" "-pc_type mg -pc_mg_levels 3 -pc_mg_galerkin $g" -da_grid_x 33 -da_grid_y 33
    done
  fi
  if [ -x "$prog_sfi3d" ]; then
    compare_counts linear ex14 sfi3d "$prog_sfi3d" "" "-pc_type mg -pc_mg_levels 3" -da_grid_x 17 -da_grid_y 17 -da_grid_z 17
    compare_counts linear ex14 sfi3d "$prog_sfi3d" "" "-da_refine 1 -pc_type mg" -da_grid_x 9 -da_grid_y 9 -da_grid_z 9
  fi
  if [ -x "$prog_cavity" ]; then
    compare_counts nonlinear ex19 cavity "$prog_cavity" "" "-snes_grid_sequence 2" -da_grid_x 9 -da_grid_y 9 -lidvelocity 10 -grashof 100
  fi
fi

echo "petsc: $pass passed, $fail failed"
[ $fail -eq 0 ]
