#!/bin/sh
# tests/skeleton/run.sh: `stencilc FILE.stn --skeleton DIR`, end to end, from
# the repository root (any cwd works):
#
#   1 contents  the skeletons of bratu2d and cavity: NAME.c, NAME.h, NAME.cu
#               and the runtime sources byte-identical to what -o --emit-dir
#               writes, but for NAME.c's user hooks (section 6); a makefile that includes PETSc's variables and rules;
#               a README quoting the .stn in full, with the build and run
#               commands and the parameters; nothing that points back into
#               this repository
#   2 build     `make` there, with only /usr/bin:/bin on PATH (no stencilc):
#               with PETSC_DIR unset (the makefile's default, Debian's
#               /usr/lib/petsc) for one and PETSC_DIR=/usr/lib/petsc for the
#               other; a second `make` does nothing; a PETSC_DIR without PETSc
#               fails with a clear message
#   3 answers   the skeleton's program and -o's, with the same options: the
#               same Newton iteration count and the same solution
#               (||a - b||/||b|| <= 1e-12, by tests/petsc/vecdiff.c), serially
#               and the skeleton's on 2 MPI ranks (1e-10); -help lists the
#               parameters; `make clean` leaves exactly the sources
#   4 errors    a non-empty DIR is refused and left as it was; a DIR that is a
#               file; --skeleton with -o, --emit-dir, --check, --dump-ast or
#               --dump-ir, without its argument or given twice (exit 2, no
#               DIR); a .stn with errors writes no DIR; a write failing
#               halfway (prlimit --fsize) leaves no file behind, removes the DIR
#               it created, or leaves an empty DIR given empty
#   5 names     a .stn named like a runtime file (report.stn, which -o could
#               not build before), like the generated stn_program.h
#               (stn_program.stn) and one PETSc's `make clean` would delete
#               (g_my.case-1.stn) get a safe NAME and build; -o builds report.stn
#   6 hooks     the user hooks of cavity's skeleton (NAME.c's section between
#               "/* ---- user hooks" and "/* ---- end of the user hooks"):
#               -user_monitor prints each field's residual norm at every
#               Newton iteration, and they make up -snes_monitor's norm
#               (sqrt of the sum of squares, 1e-10), serially and on 2 ranks;
#               -user_postcheck reports each Newton step; with both the Newton
#               count and the solution are those without them (1e-12);
#               -user_field_atol stops at the first iteration where every
#               field is below it; -help lists the three options
#   7 cuda      (when a CUDA PETSc is at $SKELETON_CUDA_PETSC, default
#               ~/.cache/stencilc/petsc-3.24.6-cuda, and nvcc is on PATH) the
#               makefile compiles the .cu files with PETSc's nvcc and the
#               program, run on the CPU, matches -o's built with that PETSc
#
# One line per check ("skeleton: ... ok" or "FAIL: ..."), a summary, and a
# non-zero exit status if any check failed. Work goes to a temporary
# directory, removed at the end (KEEP=1 keeps it).
#
# Environment: STENCILC (default bin/stencilc), RUN_TIMEOUT seconds per run
# (default 120), CUDA_TIMEOUT seconds for the builds with the CUDA PETSc
# (default 600), MPIEXEC (default mpiexec). Needs Debian's petsc-dev
# (/usr/lib/petsc), mpicc, mpiexec, make and pkg-config (make deps).
set -u
cd "$(dirname "$0")/../.." || exit 2
ROOT=$(pwd)

STENCILC=${STENCILC:-bin/stencilc}
RUN_TIMEOUT=${RUN_TIMEOUT:-120}
CUDA_TIMEOUT=${CUDA_TIMEOUT:-600} # the builds with the CUDA PETSc: nvcc takes about a minute on the runtime's cycle kernel
MPIEXEC=${MPIEXEC:-mpiexec}
CUDA_PETSC=${SKELETON_CUDA_PETSC:-$HOME/.cache/stencilc/petsc-3.24.6-cuda}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none
export OMPI_MCA_rmaps_base_oversubscribe=1
# The skeleton's makefile must not see the caller's flags or PETSc.
unset PETSC_DIR PETSC_ARCH CFLAGS CPPFLAGS MAKEFLAGS MFLAGS

pass=0
fail=0
ok() { pass=$((pass + 1)); echo "skeleton: $* ok"; }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
note() { echo "skeleton: note: $*"; }
show() { tail -n "${2:-12}" "$1" 2>/dev/null | sed 's/^/  | /'; }

missing=""
[ -x "$STENCILC" ] || missing="$missing $STENCILC (run make)"
for t in make mpicc "$MPIEXEC" pkg-config timeout; do
  command -v "$t" >/dev/null 2>&1 || missing="$missing $t"
done
[ -f /usr/lib/petsc/lib/petsc/conf/variables ] || missing="$missing /usr/lib/petsc(petsc-dev)"
if [ -n "$missing" ]; then
  bad "prerequisites missing:$missing (make deps)"
  echo "skeleton: $pass passed, $fail failed"
  exit 1
fi

T=$(mktemp -d "${TMPDIR:-/tmp}/stn-skeleton.XXXXXX") || exit 2
if [ "${KEEP:-0}" = 1 ]; then echo "skeleton: work in $T"; else trap 'rm -rf "$T"' EXIT; trap 'exit 1' HUP INT TERM; fi
cp "$STENCILC" "$T/stencilc" || { bad "cannot copy $STENCILC"; exit 1; }
S=$T/stencilc
LOG=$T/log
mkdir -p "$LOG"

# run LOG PROGRAM ARGS...: one run, output in LOG; status in $?.
run() { l=$1; shift; timeout "$RUN_TIMEOUT" "$@" >"$l" 2>&1; }
# newton LOG: N of "NAME: solved in N Newton iterations".
newton() { sed -n 's/.*: solved in \([0-9][0-9]*\) Newton iteration.*/\1/p' "$1" | head -n 1; }
# build DIR [MAKE ARGS...]: make in DIR with no stencilc on PATH; status in $?.
build() { d=$1; shift; (cd "$d" && timeout "$RUN_TIMEOUT" env PATH=/usr/bin:/bin make "$@"); }

VECDIFF=$T/vecdiff
# shellcheck disable=SC2046
if ! mpicc $(pkg-config --cflags PETSc) -O2 tests/petsc/vecdiff.c $(pkg-config --libs PETSc) -lm -o "$VECDIFF" >"$LOG/vecdiff" 2>&1; then
  bad "build: tests/petsc/vecdiff.c does not compile"; show "$LOG/vecdiff"
fi
# same A B TOL: the relative difference is at most TOL.
same() { [ -s "$1" ] && [ -s "$2" ] && "$VECDIFF" "$1" "$2" --rel "$3" >"$T/vecdiff.out" 2>&1; }

# unhooked FILE: a skeleton's NAME.c without its user hooks: the section between the two
# marker lines, the blank line after it, and the call in main.
unhooked() {
  awk '/^\/\* ---- user hooks/ { skip = 1 } skip == 1 { if (/^\/\* ---- end of the user hooks ---- \*\/$/) skip = 2; next }
       skip == 2 { skip = 0; if ($0 == "") next } /PetscCall\(UserHooksSetUp\(snes, &user\)\);/ { next } { print }' "$1"
}

# ---- 1-3 bratu2d and cavity ---------------------------------------------------
opts() {
  case $1 in
    bratu2d) echo "-da_grid_x 24 -da_grid_y 20 -par 5.5" ;;
    cavity)  echo "-da_grid_x 17 -da_grid_y 17 -lidvelocity 10 -grashof 100 -prandtl 0.7" ;;
  esac
}
TIGHT="-ksp_rtol 1e-12 -snes_rtol 1e-12 -snes_atol 1e-13"
for ex in bratu2d cavity; do
  sk=$T/$ex
  # cavity's in a path with a space, which PETSc's own rules (`pwd`/FILE) would split
  [ "$ex" = cavity ] && sk="$T/the $ex"
  if ! "$S" "examples/$ex.stn" --skeleton "$sk" >"$LOG/$ex.stencilc" 2>&1 || [ -s "$LOG/$ex.stencilc" ]; then
    bad "$ex: stencilc examples/$ex.stn --skeleton failed or was not silent"; show "$LOG/$ex.stencilc"; continue
  fi
  # 1 contents, against what -o writes.
  if ! "$S" "examples/$ex.stn" -o "$T/$ex.o/$ex" --emit-dir "$T/$ex.o" >"$LOG/$ex.o" 2>&1; then
    bad "$ex: stencilc -o failed"; show "$LOG/$ex.o"; continue
  fi
  why=""
  for f in "$T/$ex.o"/*.c "$T/$ex.o"/*.h "$T/$ex.o"/*.cu; do
    b=$(basename "$f")
    if [ "$b" = "$ex.c" ]; then
      grep -q '^/\* ---- user hooks' "$sk/$b" && grep -q 'PetscCall(UserHooksSetUp(snes, &user));' "$sk/$b" ||
        why="$why $b lacks the user hooks;"
      unhooked "$sk/$b" >"$T/$ex.unhooked" && cmp -s "$f" "$T/$ex.unhooked" ||
        why="$why $b differs from -o's but for the user hooks;"
    else
      cmp -s "$f" "$sk/$b" || why="$why $b differs from -o's or is missing;"
    fi
  done
  want=$( (cd "$T/$ex.o" && ls ./*.c ./*.h ./*.cu | sed 's|^\./||'; echo makefile; echo README.md) | sort | tr '\n' ' ')
  have=$(cd "$sk" && ls | sort | tr '\n' ' ')
  [ "$have" = "$want" ] || why="$why files: $have, expected $want;"
  grep -q '^include \${PETSC_DIR}/lib/petsc/conf/variables$' "$sk/makefile" &&
    grep -q '^include \${PETSC_DIR}/lib/petsc/conf/rules$' "$sk/makefile" ||
    why="$why the makefile does not include PETSc's variables and rules;"
  # The README quotes the .stn whole, between its last pair of fences.
  awk '/^## The .stn it came from/ { s = 1; next } s && /^```/ { n++; next } s && n == 1' "$sk/README.md" >"$T/$ex.quoted"
  cmp -s "$T/$ex.quoted" "examples/$ex.stn" || why="$why the README does not quote $ex.stn in full;"
  for w in "^make  *# Debian's petsc-dev" "^make PETSC_DIR=.* PETSC_ARCH=" "./$ex -snes_monitor" "-da_grid_x <" "-stn_mat_type" "-help" "user hooks" "-user_monitor"; do
    grep -q -e "$w" "$sk/README.md" || why="$why the README lacks '$w';"
  done
  case $ex in
    bratu2d) grep -q '^| `-par <6.0>` | Bratu parameter lambda, in \[0, 6.81\] |$' "$sk/README.md" || why="$why the README lacks -par;" ;;
    cavity)  grep -q '^| `-grashof <1.0>` | Grashof number |$' "$sk/README.md" || why="$why the README lacks -grashof;" ;;
  esac
  if grep -r -l -F "$ROOT" "$sk" >/dev/null 2>&1; then why="$why it names $ROOT;"; fi
  if [ -z "$why" ]; then ok "$ex: contents (the -o sources, makefile, README)"; else bad "$ex: contents:$why"; fi

  # 2 build: PETSC_DIR unset for bratu2d (the default), given for cavity.
  if [ "$ex" = bratu2d ]; then set --; else set -- PETSC_DIR=/usr/lib/petsc; fi
  if ! build "$sk" "$@" >"$LOG/$ex.make" 2>&1 || ! [ -x "$sk/$ex" ]; then
    bad "$ex: make ${*:-(PETSC_DIR unset)} in the skeleton failed"; show "$LOG/$ex.make" 20; continue
  fi
  if build "$sk" "$@" >"$LOG/$ex.make2" 2>&1 && grep -q "Nothing to be done for 'all'" "$LOG/$ex.make2"; then
    ok "$ex: make ${*:-(PETSC_DIR unset)} builds it; a second make does nothing"
  else
    bad "$ex: a second make did something"; show "$LOG/$ex.make2"
  fi

  # 3 answers, against -o's program.
  # shellcheck disable=SC2046,SC2086
  run "$LOG/$ex.run.sk" "$sk/$ex" $(opts "$ex") $TIGHT -snes_view_solution "binary:$T/$ex.sk.bin"
  rc1=$?
  # shellcheck disable=SC2046,SC2086
  run "$LOG/$ex.run.o" "$T/$ex.o/$ex" $(opts "$ex") $TIGHT -snes_view_solution "binary:$T/$ex.o.bin"
  rc2=$?
  n1=$(newton "$LOG/$ex.run.sk") n2=$(newton "$LOG/$ex.run.o")
  if [ "$rc1" -eq 0 ] && [ "$rc2" -eq 0 ] && [ -n "$n1" ] && [ "$n1" = "$n2" ] && [ "$n1" -ge 2 ] &&
     same "$T/$ex.sk.bin" "$T/$ex.o.bin" 1e-12; then
    ok "$ex: the skeleton's program and -o's agree ($n1 Newton iterations each; $(tr '\n' ' ' <"$T/vecdiff.out" | sed 's/ *$//'))"
  else
    bad "$ex: skeleton vs -o: exit $rc1/$rc2, Newton $n1/$n2, $(cat "$T/vecdiff.out" 2>/dev/null)"
    show "$LOG/$ex.run.sk" 6; show "$LOG/$ex.run.o" 6
  fi
  # shellcheck disable=SC2046,SC2086
  timeout "$RUN_TIMEOUT" "$MPIEXEC" --oversubscribe -n 2 "$sk/$ex" $(opts "$ex") $TIGHT \
    -snes_view_solution "binary:$T/$ex.mpi.bin" >"$LOG/$ex.mpi" 2>&1
  rc=$?
  if [ $rc -eq 0 ] && [ "$(newton "$LOG/$ex.mpi")" = "$n2" ] && same "$T/$ex.mpi.bin" "$T/$ex.o.bin" 1e-10; then
    ok "$ex: the skeleton's program on 2 ranks agrees"
  else
    bad "$ex: the skeleton's program on 2 ranks: exit $rc, Newton $(newton "$LOG/$ex.mpi")/$n2, $(cat "$T/vecdiff.out" 2>/dev/null)"
    show "$LOG/$ex.mpi" 6
  fi
  param=$(case $ex in bratu2d) echo "-par <6.0>" ;; cavity) echo "-grashof <1.0>" ;; esac)
  "$sk/$ex" -help >"$LOG/$ex.help" 2>&1
  if grep -q -e "$param" "$LOG/$ex.help"; then ok "$ex: -help lists '$param'"; else bad "$ex: -help lacks '$param'"; fi
  before=$(cd "$sk" && ls | grep -v -e '\.o$' -e "^$ex\$" | sort | tr '\n' ' ')
  build "$sk" clean "$@" >"$LOG/$ex.clean" 2>&1
  after=$(cd "$sk" && ls | sort | tr '\n' ' ')
  if [ "$after" = "$before" ] && [ "$before" = "$have" ]; then ok "$ex: make clean leaves exactly the sources"
  else bad "$ex: make clean: left '$after', expected '$have'"; fi
done

# A PETSC_DIR without PETSc: a clear message.
if build "$T/the cavity" PETSC_DIR="$T/no-petsc" >"$LOG/nopetsc" 2>&1; then bad "make with a PETSC_DIR without PETSc succeeded"
elif grep -q "cannot find PETSc: $T/no-petsc/lib/petsc/conf/variables does not exist" "$LOG/nopetsc"; then ok "make with a wrong PETSC_DIR says so"
else bad "make with a wrong PETSC_DIR: unclear message"; show "$LOG/nopetsc"; fi

# ---- 4 errors ------------------------------------------------------------------
# expect STATUS PATTERN -- ARGS...: stencilc's exit status and a line of its output.
expect() {
  want=$1 pattern=$2
  shift 3
  "$S" "$@" >"$T/cli.out" 2>&1
  rc=$?
  if [ "$rc" -ne "$want" ]; then bad "stencilc $*: exit $rc, expected $want"; show "$T/cli.out" 4; return 1; fi
  if ! grep -q -e "$pattern" "$T/cli.out"; then bad "stencilc $*: output lacks '$pattern'"; show "$T/cli.out" 4; return 1; fi
  return 0
}
E=$T/errors
mkdir -p "$E/full"
echo "mine" >"$E/full/notes.txt"
if expect 1 "the directory '$E/full' is not empty" -- examples/bratu2d.stn --skeleton "$E/full" &&
   [ "$(ls -A "$E/full")" = notes.txt ] && [ "$(cat "$E/full/notes.txt")" = mine ]; then
  ok "a non-empty DIR is refused and left as it was"
else bad "a non-empty DIR was not left as it was: $(ls -A "$E/full" | tr '\n' ' ')"; fi
mkdir -p "$E/hidden" && : >"$E/hidden/.keep"
expect 1 "is not empty" -- examples/bratu2d.stn --skeleton "$E/hidden" && ok "a DIR holding only a dot file is not empty"
: >"$E/afile"
expect 1 "'$E/afile' exists and is not a directory" -- examples/bratu2d.stn --skeleton "$E/afile" &&
  [ ! -s "$E/afile" ] && ok "a DIR that is a file is refused"
mkdir -p "$E/empty"
if "$S" examples/bratu2d.stn --skeleton "$E/empty" >"$LOG/empty" 2>&1 && [ -f "$E/empty/makefile" ] && [ -f "$E/empty/bratu2d.c" ]; then
  ok "an existing empty DIR is used"
else bad "an existing empty DIR was not used"; show "$LOG/empty"; fi
n=0
for args in "-o $E/p" "--emit-dir $E/e" "--check" "--dump-ast" "--dump-ir" "--dump-ir=derive"; do
  # shellcheck disable=SC2086
  expect 2 "--skeleton cannot be combined with" -- examples/bratu2d.stn --skeleton "$E/combined" $args || continue
  # shellcheck disable=SC2086
  expect 2 "--skeleton cannot be combined with" -- $args examples/bratu2d.stn --skeleton "$E/combined" || continue
  [ -e "$E/combined" ] || [ -e "$E/p" ] || [ -e "$E/e" ] || n=$((n + 1))
done
[ $n -eq 6 ] && ok "--skeleton with -o, --emit-dir, --check, --dump-ast, --dump-ir: exit 2, nothing written"
expect 2 "--skeleton needs an argument" -- examples/bratu2d.stn --skeleton && ok "--skeleton without DIR"
expect 2 "--skeleton given twice" -- examples/bratu2d.stn --skeleton "$E/a" --skeleton "$E/b" && [ ! -e "$E/a" ] &&
  ok "--skeleton given twice"
expect 2 "the argument of --skeleton is empty" -- examples/bratu2d.stn --skeleton "" && ok "--skeleton with an empty DIR"
expect 1 "error:" -- tests/errors/syntax_missing_brace.stn --skeleton "$E/bad" && [ ! -e "$E/bad" ] &&
  ok "a .stn with errors writes no DIR"
expect 1 "cannot create the directory '$E/no/such/dir'" -- examples/bratu2d.stn --skeleton "$E/no/such/dir" &&
  ok "a DIR whose parent is missing"
# A write that fails halfway: a file size limit one byte below the largest
# source's size (prlimit counts bytes), with SIGXFSZ ignored so that write(2)
# fails with EFBIG; the files before it are written, then all removed.
largest=$(ls -S "$T/cavity.o"/*.c "$T/cavity.o"/*.h "$T/cavity.o"/*.cu | head -n 1)
limit=$(($(wc -c <"$largest") - 1))
if command -v prlimit >/dev/null 2>&1; then
  for given in new empty; do
    a=a; [ $given = empty ] && a=an
    d=$E/halfway.$given
    [ $given = empty ] && mkdir -p "$d"
    (trap '' XFSZ; exec prlimit --fsize=$limit "$S" examples/cavity.stn --skeleton "$d") >"$LOG/halfway.$given" 2>&1
    rc=$?
    if [ $given = new ] && [ -e "$d" ]; then left="$d: $(ls -A "$d" | tr '\n' ' ')"
    elif [ $given = empty ] && { ! [ -d "$d" ] || [ -n "$(ls -A "$d")" ]; }; then left="$d: $(ls -A "$d" 2>&1 | tr '\n' ' ')"
    else left=""; fi
    if [ $rc -eq 1 ] && grep -q "cannot write '$d/$(basename "$largest")'" "$LOG/halfway.$given" && [ -z "$left" ]; then
      ok "a write failing halfway ($(basename "$largest")) in $a $given DIR leaves nothing behind"
    else bad "a write failing halfway in $a $given DIR: exit $rc, left: $left"; show "$LOG/halfway.$given"; fi
  done
else
  note "no prlimit (util-linux): the write failing halfway was not tried"
fi

# ---- 5 names -------------------------------------------------------------------
N=$T/names
mkdir -p "$N"
cp examples/bratu2d.stn "$N/report.stn"
cp examples/bratu2d.stn "$N/g_my.case-1.stn"
cp examples/bratu2d.stn "$N/stn_program.stn"
for pair in "report.stn stn_report" "g_my.case-1.stn stn_g_my_case_1" "stn_program.stn stn_stn_program"; do
  stn=${pair% *} name=${pair#* }
  d=$N/$name.sk
  if ! "$S" "$N/$stn" --skeleton "$d" >"$LOG/$name.stencilc" 2>&1; then bad "$stn: --skeleton failed"; show "$LOG/$name.stencilc"; continue; fi
  if ! [ -f "$d/$name.c" ] || ! grep -q "^PROGRAM    = $name\$" "$d/makefile" || ! cmp -s "$d/report.c" "$T/bratu2d.o/report.c"; then
    bad "$stn: expected $name.c, PROGRAM $name and the runtime's report.c: $(ls "$d" | tr '\n' ' ')"; continue
  fi
  if build "$d" >"$LOG/$name.make" 2>&1 && run "$LOG/$name.run" "$d/$name" && [ "$(newton "$LOG/$name.run")" -ge 1 ] &&
     build "$d" clean >/dev/null 2>&1 && [ -f "$d/$name.c" ] && [ -f "$d/$name.h" ] && [ ! -e "$d/$name" ]; then
    ok "$stn: skeleton $name builds, solves, and make clean keeps its sources"
  else bad "$stn: skeleton $name did not build, solve or survive make clean"; show "$LOG/$name.make"; show "$LOG/$name.run" 4; fi
done
if run "$LOG/report.o" "$S" "$N/report.stn" -o "$N/report" && run "$LOG/report.run" "$N/report" &&
   grep -q '^report: solved in' "$LOG/report.run"; then
  ok "report.stn: -o builds and solves (its C no longer clashes with the runtime's report.c)"
else bad "report.stn: -o failed"; show "$LOG/report.o"; show "$LOG/report.run" 4; fi

# ---- 6 user hooks ----------------------------------------------------------------
# monitor_check LOG: empty when every "user monitor" line's field norms make up its
# ||F|| (1e-10) and that ||F|| is -snes_monitor's of the same iteration (1e-12);
# else what is wrong. Also counts the lines: "lines N".
monitor_check() {
  awk '/SNES Function norm/ { snes[$1 + 0] = $5 }
       / user monitor: / { n++; f = $5; sub(",", "", f); s = 0
         for (i = 9; i <= NF; i += 2) s += $i * $i  # $8 is the first name, $9 its norm
         if (sqrt((sqrt(s) - f) ^ 2) > 1e-10 * f) print "iteration " $1 ": the fields make up " sqrt(s) ", not " f
         if (!(($1 + 0) in snes) || sqrt((snes[$1 + 0] - f) ^ 2) > 1e-12 * f) print "iteration " $1 ": ||F|| " f ", -snes_monitor " snes[$1 + 0] }
       END { print "lines " n + 0 }' "$1"
}
H=$T/hooks
HOPTS="$(opts cavity) $TIGHT"
if ! "$S" examples/cavity.stn --skeleton "$H" >"$LOG/hooks.stencilc" 2>&1 || ! build "$H" >"$LOG/hooks.make" 2>&1; then
  bad "hooks: the cavity skeleton did not build"; show "$LOG/hooks.make" 20
else
  # shellcheck disable=SC2086
  run "$LOG/hooks.off" "$H/cavity" $HOPTS -snes_view_solution "binary:$T/hooks.off.bin"
  # shellcheck disable=SC2086
  run "$LOG/hooks.on" "$H/cavity" $HOPTS -snes_monitor -user_monitor -user_postcheck -snes_view_solution "binary:$T/hooks.on.bin"
  rc=$?
  n0=$(newton "$LOG/hooks.off") n=$(newton "$LOG/hooks.on")
  problems=$(monitor_check "$LOG/hooks.on")
  posts=$(grep -c '^ *user post-check: step length [^,]*, largest change: u [^ ]* v [^ ]* omega [^ ]* temp [^ ]*$' "$LOG/hooks.on")
  if [ $rc -eq 0 ] && [ -n "$n" ] && [ "$n" = "$n0" ] && [ "$problems" = "lines $((n + 1))" ] && [ "$posts" = "$n" ] &&
     same "$T/hooks.on.bin" "$T/hooks.off.bin" 1e-12; then
    ok "hooks: -user_monitor's field norms make up ||F|| at each of $((n + 1)) iterations, -user_postcheck saw $posts steps; $n Newton iterations with and without them"
  else
    bad "hooks: -user_monitor -user_postcheck: exit $rc, Newton $n/$n0, post-checks $posts, monitor: $(echo "$problems" | tr '\n' ';')"
    show "$LOG/hooks.on" 8
  fi
  # shellcheck disable=SC2086
  timeout "$RUN_TIMEOUT" "$MPIEXEC" --oversubscribe -n 2 "$H/cavity" $HOPTS -snes_monitor -user_monitor >"$LOG/hooks.mpi" 2>&1
  rc=$?
  problems=$(monitor_check "$LOG/hooks.mpi")
  if [ $rc -eq 0 ] && [ "$(newton "$LOG/hooks.mpi")" = "$n0" ] && [ "$problems" = "lines $((n0 + 1))" ]; then
    ok "hooks: -user_monitor on 2 ranks sums the fields over both"
  else bad "hooks: -user_monitor on 2 ranks: exit $rc, Newton $(newton "$LOG/hooks.mpi")/$n0, $(echo "$problems" | tr '\n' ';')"; show "$LOG/hooks.mpi" 8; fi
  # -user_field_atol: converged at the first iteration where every field's norm is at most 1e-3.
  # shellcheck disable=SC2046
  run "$LOG/hooks.atol" "$H/cavity" $(opts cavity) -user_monitor -user_field_atol 1e-3
  rc=$?
  first=$(awk '/ user monitor: / { m = 0; for (i = 9; i <= NF; i += 2) if ($i + 0 > m) m = $i + 0
                                     if (m <= 1e-3) { print $1 + 0; exit } }' "$LOG/hooks.atol")
  if [ $rc -eq 0 ] && [ -n "$first" ] && [ "$(newton "$LOG/hooks.atol")" = "$first" ] && grep -q 'CONVERGED_FNORM_ABS' "$LOG/hooks.atol"; then
    ok "hooks: -user_field_atol 1e-3 converges at iteration $first, the first with every field below it"
  else bad "hooks: -user_field_atol: exit $rc, Newton $(newton "$LOG/hooks.atol"), first below: $first"; show "$LOG/hooks.atol" 6; fi
  "$H/cavity" -help >"$LOG/hooks.help" 2>&1
  if grep -q -e '-user_monitor' "$LOG/hooks.help" && grep -q -e '-user_postcheck' "$LOG/hooks.help" &&
     grep -q -e '-user_field_atol' "$LOG/hooks.help"; then ok "hooks: -help lists -user_monitor, -user_postcheck, -user_field_atol"
  else bad "hooks: -help lacks the user hooks' options"; fi
fi

# ---- 7 a CUDA PETSc --------------------------------------------------------------
if [ -f "$CUDA_PETSC/lib/petsc/conf/variables" ] && command -v nvcc >/dev/null 2>&1; then
  C=$T/cuda
  NVCC_DIR=$(dirname "$(command -v nvcc)")
  if "$S" examples/cavity.stn --skeleton "$C" >"$LOG/cuda.stencilc" 2>&1 &&
     (cd "$C" && timeout "$CUDA_TIMEOUT" env PATH="/usr/bin:/bin:$NVCC_DIR" make -j4 PETSC_DIR="$CUDA_PETSC") >"$LOG/cuda.make" 2>&1 &&
     [ -x "$C/cavity" ] &&
     [ -f "$C/cavity_cu.o" ] && [ -f "$C/sgdia_cuda.o" ]; then
    ok "cuda: make PETSC_DIR=$CUDA_PETSC compiles the .cu files with PETSc's nvcc and links"
    if timeout "$CUDA_TIMEOUT" env PETSC_DIR="$CUDA_PETSC" PETSC_ARCH= "$S" examples/cavity.stn -o "$C.o" >"$LOG/cuda.o" 2>&1; then
      # shellcheck disable=SC2046,SC2086
      run "$LOG/cuda.run.sk" "$C/cavity" -stn_device cpu $(opts cavity) $TIGHT -snes_view_solution "binary:$T/cuda.sk.bin"
      # shellcheck disable=SC2046,SC2086
      run "$LOG/cuda.run.o" "$C.o" -stn_device cpu $(opts cavity) $TIGHT -snes_view_solution "binary:$T/cuda.o.bin"
      n1=$(newton "$LOG/cuda.run.sk") n2=$(newton "$LOG/cuda.run.o")
      if [ -n "$n1" ] && [ "$n1" = "$n2" ] && same "$T/cuda.sk.bin" "$T/cuda.o.bin" 1e-12; then
        ok "cuda: the skeleton's program and -o's agree on the CPU ($n1 Newton iterations each)"
      else bad "cuda: skeleton vs -o: Newton $n1/$n2, $(cat "$T/vecdiff.out" 2>/dev/null)"; show "$LOG/cuda.run.sk" 4; fi
    else bad "cuda: stencilc -o with the CUDA PETSc failed"; show "$LOG/cuda.o"; fi
  else
    bad "cuda: the skeleton did not build with the CUDA PETSc"; show "$LOG/cuda.make" 20
  fi
else
  note "no CUDA PETSc at $CUDA_PETSC (scripts/petsc-cuda.sh) or no nvcc: the makefile's CUDA part was not built"
fi

echo "skeleton: $pass passed, $fail failed"
[ $fail -eq 0 ]
