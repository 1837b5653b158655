#!/bin/sh
# tests/run.sh: every test of `make check`, from the repository root.
#
#   tests/errors/NAME.stn   an invalid program; NAME.err is the exact message
#                           stencilc --check must print (exit status 1, no stdout)
#   tests/ast/NAME.ast      the exact --dump-ast output for examples/NAME.stn
#   tests/ir/NAME.ir        the exact --dump-ir output for examples/NAME.stn (and
#                           tests/solve/coefficient_file.stn)
#   tests/emit/NAME.c       the exact generated C, .h and .cu for examples/NAME.stn (a few)
#   tests/explain/NAME.txt  the exact --explain output for examples/NAME.stn; the
#                           --explain-svg picture checked by tests/explain/svg.py
#   nvcc                    compiles every example's CUDA kernels and the runtime's, and
#                           the kernels of tests/solve's coefficient programs (expressions
#                           and files)
#   tests/cli.sh            command-line behaviour and hostile inputs
#   tests/runtime/run.sh    the SG-DIA matrix against AIJ, on 1, 2, 4 ranks; the GPU vector
#                           kernels' CPU reference (tests/runtime/vecref.c)
#   tests/petsc/compare.sh  bratu2d, sfi3d, cavity against PETSc's ex5, ex14, ex19
#   tests/solve/run.sh      Jacobians, MPI, hostile names, failures, output
#   tests/mms/run.sh        second order under grid refinement (manufactured solutions)
#   the fuzz smoke run      both fuzzers (make fuzz), when clang's libFuzzer is installed
#   valgrind                on every example, when valgrind is installed
#
# tests/run.sh --regen rewrites the golden files from the current compiler;
# review the diff before committing it.
set -u
STENCILC=${STENCILC:-bin/stencilc}
regen=0
[ "${1:-}" = "--regen" ] && regen=1
pass=0
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

# Golden diagnostics.
for stn in tests/errors/*.stn; do
  want=${stn%.stn}.err
  "$STENCILC" --check "$stn" >"$tmp/out" 2>"$tmp/err"
  rc=$?
  if [ $regen = 1 ]; then cp "$tmp/err" "$want"; fi
  if [ $rc -ne 1 ]; then bad "$stn: exit status $rc, expected 1"; continue; fi
  if [ -s "$tmp/out" ]; then bad "$stn: wrote to stdout"; continue; fi
  if ! diff -u "$want" "$tmp/err" >"$tmp/diff"; then bad "$stn: message differs"; cat "$tmp/diff"; continue; fi
  ok
done

# A hint for two rules tied at a class settles the tie when followed: the precedence it suggests
# (added after the fields line), or the class's own rule (added to the block), and the same
# error is gone, and the suggested text parses.
for stn in tests/errors/sema_ambiguous*.stn; do
  err=${stn%.stn}.err
  tie=$(grep -o "at the points on [a-z &]* both" "$err" | head -1)
  prec=$(grep -o "'precedence [a-z ,>]*;'" "$err" | tr -d "'")
  own=$(grep -o "'[a-z &]*: \.\.\.;'" "$err" | tr -d "'" | sed 's/: \.\.\.;$//')
  group=$(grep -o "put '[a-z]*' in a group before '[a-z]*'" "$err" | awk -F"'" '{print $2 " " $4}')
  [ -n "$tie" ] && [ -n "$own" ] || { bad "$stn: no tie or no rule of its own in the hint"; continue; }
  fixes="own"
  [ -n "$prec" ] && fixes="$fixes prec"
  [ -n "$group" ] && fixes="$fixes group"
  for fix in $fixes; do
    case $fix in
    own) awk -v r="  $own: u;" '{print} /^residual/ && !done {print r; done = 1}' "$stn" >"$tmp/fixed.stn" ;;
    prec) awk -v p="$prec" '{print} /^fields/ && !done {print p; done = 1}' "$stn" >"$tmp/fixed.stn" ;;
    group) set -- $group
      awk -v f="$1" '/^precedence/ && !done {sub(/;$/, " > " f ";"); done = 1} {print}' "$stn" >"$tmp/fixed.stn" ;;
    esac
    "$STENCILC" --check "$tmp/fixed.stn" >/dev/null 2>"$tmp/err"
    if grep -q "$tie" "$tmp/err"; then bad "$stn: following the hint ($fix) leaves the tie"; cat "$tmp/err"; else ok; fi
  done
done

# Every example checks cleanly (no warnings either) and dumps its golden AST.
for stn in examples/*.stn; do
  name=$(basename "$stn" .stn)
  "$STENCILC" --check "$stn" >"$tmp/out" 2>"$tmp/err"
  rc=$?
  if [ $rc -ne 0 ] || [ -s "$tmp/err" ] || [ -s "$tmp/out" ]; then bad "$stn: --check is not clean"; cat "$tmp/err"; continue; fi
  "$STENCILC" --dump-ast "$stn" >"$tmp/ast" 2>"$tmp/err"
  if [ $regen = 1 ]; then cp "$tmp/ast" "tests/ast/$name.ast"; fi
  if ! diff -u "tests/ast/$name.ast" "$tmp/ast" >"$tmp/diff"; then bad "$stn: AST dump differs"; head -40 "$tmp/diff"; continue; fi
  ok
done

# The IR of every example, and the generated C of a few, are golden too:
# a change to the passes or the emitter shows up as a reviewable diff. (Also the IR of
# tests/solve/coefficient_file.stn: reads of a coefficient from a file, 'coef k[1,0]'.)
for stn in examples/*.stn tests/solve/coefficient_file.stn; do
  name=$(basename "$stn" .stn)
  "$STENCILC" --dump-ir "$stn" >"$tmp/ir" 2>"$tmp/err"
  if [ $regen = 1 ]; then cp "$tmp/ir" "tests/ir/$name.ir"; fi
  if ! diff -u "tests/ir/$name.ir" "$tmp/ir" >"$tmp/diff"; then bad "$stn: IR dump differs"; head -40 "$tmp/diff"; continue; fi
  ok
done
for c in tests/emit/*.c; do
  name=$(basename "$c" .c)
  rm -rf "$tmp/emit"
  if ! "$STENCILC" "examples/$name.stn" -o "$tmp/prog" --emit-dir "$tmp/emit" >"$tmp/err" 2>&1; then
    bad "stencilc examples/$name.stn -o: failed"; cat "$tmp/err"; continue
  fi
  for ext in c h cu; do  # the program, the header it shares with its kernels, the kernels
    if [ $regen = 1 ]; then cp "$tmp/emit/$name.$ext" "tests/emit/$name.$ext"; fi
    if ! diff -u "tests/emit/$name.$ext" "$tmp/emit/$name.$ext" >"$tmp/diff"; then bad "$name: generated $name.$ext differs"; head -40 "$tmp/diff"; continue; fi
    ok
  done
done

# --explain: the teaching view of two examples is golden text; the picture
# (--explain-svg) of bratu2d is well-formed XML whose nonzero squares are
# the entries tests/explain/svg.py works out from the stencil.
for want in tests/explain/*.txt; do
  name=$(basename "$want" .txt)
  "$STENCILC" --explain "examples/$name.stn" >"$tmp/explain" 2>"$tmp/err"
  rc=$?
  if [ $regen = 1 ]; then cp "$tmp/explain" "$want"; fi
  if [ $rc -ne 0 ] || [ -s "$tmp/err" ]; then bad "--explain examples/$name.stn: exit status $rc"; cat "$tmp/err"; continue; fi
  if ! diff -u "$want" "$tmp/explain" >"$tmp/diff"; then bad "examples/$name.stn: --explain differs"; head -40 "$tmp/diff"; continue; fi
  ok
done
if "$STENCILC" --explain-svg "$tmp/bratu2d.svg" examples/bratu2d.stn >"$tmp/explain" 2>"$tmp/err" &&
   grep -q "^PICTURE: .*bratu2d.svg" "$tmp/explain"; then
  if command -v xmllint >/dev/null 2>&1 && ! xmllint --noout "$tmp/bratu2d.svg" 2>"$tmp/err"; then
    bad "--explain-svg: not well-formed XML"; head -5 "$tmp/err"
  elif ! command -v python3 >/dev/null 2>&1; then
    echo "note: python3 not found; the --explain-svg picture was not checked"
  elif python3 tests/explain/svg.py "$tmp/bratu2d.svg"; then ok
  else bad "--explain-svg: the picture of bratu2d is wrong (tests/explain/svg.py)"; fi
else
  bad "--explain-svg examples/bratu2d.stn failed"; cat "$tmp/err"
fi
# A program's coefficients are explained with their expressions, as values that are no unknowns.
if "$STENCILC" --explain tests/solve/coefficient.stn >"$tmp/explain" 2>"$tmp/err" && ! [ -s "$tmp/err" ] &&
   grep -q '^COEFFICIENTS: values given at every grid point that are not unknowns' "$tmp/explain" &&
   grep -qF '  k = 1 + a * sin(2 * pi * x) * cos(pi * y): conductivity  (coefficient.stn:19)' "$tmp/explain"; then ok
else bad "--explain tests/solve/coefficient.stn: no COEFFICIENTS section with k's expression"; cat "$tmp/err"; fi
# A coefficient read from a file: where its values come from, and its reads in the equations.
if "$STENCILC" --explain tests/solve/coefficient_file.stn >"$tmp/explain" 2>"$tmp/err" && ! [ -s "$tmp/err" ] &&
   grep -q '^  A coefficient from a file is read when the program starts' "$tmp/explain" &&
   grep -qF '  k: from the file -k_file names: conductivity  (coefficient_file.stn:17)' "$tmp/explain" &&
   grep -qF 'ke = (k + k[1,0])/2' "$tmp/explain"; then ok
else bad "--explain tests/solve/coefficient_file.stn: no COEFFICIENTS section naming -k_file, or no k[1,0]"; cat "$tmp/err"; fi
"$STENCILC" --explain examples/bratu2d.stn -o "$tmp/prog" >/dev/null 2>&1
rc1=$?
"$STENCILC" --explain-svg "$tmp/no/such/dir.svg" examples/bratu2d.stn >"$tmp/out" 2>/dev/null
rc2=$?
if [ $rc1 -eq 2 ] && [ $rc2 -eq 1 ] && ! [ -s "$tmp/out" ]; then ok
else bad "--explain: -o must be a usage error (2, got $rc1), an unwritable picture an error (1, got $rc2) with no output"; fi

# The CUDA sources (the runtime's and every example's kernels) are compiled
# by nvcc even here, without a GPU or a CUDA PETSc, so they cannot rot.
# The runtime's files are the same in every program: they are compiled once,
# from runtime/, and each program's copies only compared with them.
# The instance of the SG-DIA kernels that runtime/sgdia_instances.h picks for dof and nsten.
instance_of() {
  d=$1; [ "$d" -ge 1 ] && [ "$d" -le 4 ] || d=0
  case $2 in 5|7|9|13|19|25|27) s=$2 ;; *) s=0 ;; esac
  echo "<$d, $s>"
}
# cycle_spills FILE: the GMRES cycle kernels that spill registers, from ptxas -v's report in FILE.
# The cycle kernel's threads hold all the 64 registers its blocks of 1024 allow, and a few bytes
# spilled cost 1-2 us per step on the H200 (docs/codegen-decisions.md): a change that makes it
# spill must show here, not in a benchmark. (Some instances no example uses, dof 1 with 19, 25 or
# 27 block diagonals, spill already.)
cycle_spills() {
  awk '/Function properties for .*gmres_cycle_kernel/ {k = $NF; next}
       k != "" && /spill stores/ {if ($5 != 0 || $9 != 0) print k; k = ""}' "$1"
}

# check_instances WHAT DIR INSTANCE: DIR's sgdia_cuda.cu and stncycle_cuda.cu, compiled there, hold
# the product and the cycle kernel for INSTANCE and the generic <0, 0>, and no other; the cycle
# kernels do not spill registers. (ptxas -v reports each kernel's; nvcc must say nothing else.)
check_instances() {
  want=$(printf '%s\n<0, 0>\n' "$3" | sort -u | tr '\n' ' ')
  (cd "$2" && nvcc -arch=sm_90 -O3 -Xcompiler -Wall,-Wextra -c sgdia_cuda.cu -o sgdia_cuda.o &&
     nvcc -arch=sm_90 -O3 -Xcompiler -Wall,-Wextra -Xptxas -v -c stncycle_cuda.cu -o stncycle_cuda.o) >"$tmp/ptxas" 2>&1
  rc=$?
  grep -v '^ptxas info *:\|^ *[0-9]* bytes stack frame' "$tmp/ptxas" >"$tmp/nvcc"
  spills=$(cycle_spills "$tmp/ptxas")
  if [ $rc = 0 ]; then
    if [ -z "$spills" ] && grep -q 'Function properties for .*gmres_cycle_kernel' "$tmp/ptxas"; then ok
    else bad "$1: the GMRES cycle kernel spills registers, or ptxas -v reported none of its instances: $spills"; fi
  fi
  if [ $rc = 0 ] && ! [ -s "$tmp/nvcc" ]; then
    cycle=$(nm -C "$2/stncycle_cuda.o" | sed -n 's/.*gmres_cycle_kernel<\([0-9]*, [0-9]*\), \(true\|false\)>(.*/<\1>/p' | sort -u | tr '\n' ' ')
    mult=$(nm -C "$2/sgdia_cuda.o" | sed -n 's/.*sgdia_mult<\([0-9]*, [0-9]*\), \(true\|false\)>(.*/<\1>/p' | sort -u | tr '\n' ' ')
    if [ "$cycle" = "$want" ] && [ "$mult" = "$want" ]; then ok
    else bad "$1: the kernels compiled for $want, got cycle kernels $cycle, products $mult"; fi
  else bad "$1: nvcc on sgdia_cuda.cu and stncycle_cuda.cu beside stn_program.h failed or warned"; head -20 "$tmp/nvcc"; fi
}

if command -v nvcc >/dev/null 2>&1; then
  root=$(pwd)
  for cu in runtime/*.cu; do
    if nvcc -arch=sm_90 -O3 -Xcompiler -Wall,-Wextra -Iruntime -c "$cu" -o "$tmp/runtime.o" >"$tmp/nvcc" 2>&1 && ! [ -s "$tmp/nvcc" ]; then ok
    else bad "$cu: nvcc failed or warned"; head -20 "$tmp/nvcc"; fi
  done
  for stn in examples/*.stn; do
    name=$(basename "$stn" .stn)
    rm -rf "$tmp/cu"
    "$STENCILC" "$stn" -o "$tmp/prog" --emit-dir "$tmp/cu" >"$tmp/err" 2>&1 || { bad "$stn: -o failed"; cat "$tmp/err"; continue; }
    if (cd "$tmp/cu" && for cu in *.cu; do
          if [ -f "$root/runtime/$cu" ]; then cmp "$cu" "$root/runtime/$cu" || exit 1; continue; fi
          nvcc -arch=sm_90 -O3 -Xcompiler -Wall,-Wextra -c "$cu" -o "${cu%.cu}.o" || exit 1
        done) >"$tmp/nvcc" 2>&1 && ! [ -s "$tmp/nvcc" ]; then ok
    else bad "$name: nvcc on the CUDA sources failed or warned, or a runtime copy differs"; head -20 "$tmp/nvcc"; fi
    # The copies as the program compiles them: beside its stn_program.h, for its matrix only.
    dof=$(awk '$2 == "STN_PROGRAM_DOF" {print $3}' "$tmp/cu/stn_program.h")
    nsten=$(awk '$2 == "STN_PROGRAM_NSTEN" {print $3}' "$tmp/cu/stn_program.h")
    check_instances "$name (dof $dof, $nsten block diagonals)" "$tmp/cu" "$(instance_of "$dof" "$nsten")"
  done
  # A matrix without an instance of its own (dof 5, 11 block diagonals): the generic one only.
  rm -rf "$tmp/cu" && mkdir "$tmp/cu" && cp runtime/*.h runtime/sgdia_cuda.cu runtime/stncycle_cuda.cu "$tmp/cu/"
  printf '#define STN_PROGRAM_DOF 5\n#define STN_PROGRAM_NSTEN 11\n' >"$tmp/cu/stn_program.h"
  check_instances "dof 5, 11 block diagonals" "$tmp/cu" "<0, 0>"
  # Coefficients inline their expression at each read, in the kernels too (wrapped by StnMod on
  # a periodic axis), or read a file's values from the device array in the AppCtx
  # (user.k[IX(i + 1, j)]): the test programs' own kernels compile.
  for stn in tests/solve/coefficient.stn tests/solve/coefficient_periodic.stn tests/solve/coefficient_file.stn tests/solve/coefficient_file3d.stn \
             tests/solve/coefficient_file_periodic.stn; do
    name=$(basename "$stn" .stn)
    rm -rf "$tmp/cu"
    "$STENCILC" "$stn" -o "$tmp/prog" --emit-dir "$tmp/cu" >"$tmp/err" 2>&1 || { bad "$stn: -o failed"; cat "$tmp/err"; continue; }
    if (cd "$tmp/cu" && nvcc -arch=sm_90 -O3 -Xcompiler -Wall,-Wextra -c "$name.cu" -o "$name.o") >"$tmp/nvcc" 2>&1 &&
       ! [ -s "$tmp/nvcc" ]; then ok
    else bad "$stn: nvcc on $name.cu failed or warned"; head -20 "$tmp/nvcc"; fi
  done
else
  echo "note: nvcc not found; the CUDA sources were not compiled"
fi

# Command line and hostile inputs.
if sh tests/cli.sh "$STENCILC" "$tmp"; then ok; else bad "tests/cli.sh"; fi

# make install into a staging directory: the compiler (which then runs), its man page and the
# editor files, where the Makefile says.
inst=$tmp/install
if make -s install DESTDIR="$inst" PREFIX=/usr >"$tmp/install.log" 2>&1 &&
   "$inst/usr/bin/stencilc" --check examples/bratu2d.stn >/dev/null 2>&1 &&
   [ -f "$inst/usr/share/man/man1/stencilc.1" ] &&
   [ -f "$inst/usr/share/vim/vimfiles/syntax/stn.vim" ] && [ -f "$inst/usr/share/vim/vimfiles/ftdetect/stn.vim" ] &&
   [ -f "$inst/usr/share/stencilc/vscode/syntaxes/stn.tmLanguage.json" ]; then
  ok
else
  bad "make install DESTDIR=$inst PREFIX=/usr: missing files or a compiler that does not run"; cat "$tmp/install.log"
fi

# The front end under valgrind: no leaks, no invalid reads, on every example.
if command -v valgrind >/dev/null 2>&1; then
  for stn in examples/*.stn tests/errors/syntax_missing_brace.stn; do
    if valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=all \
         "$STENCILC" --dump-ast "$stn" >/dev/null 2>"$tmp/vg"; [ $? -eq 99 ]; then
      bad "valgrind on $stn"; cat "$tmp/vg"
    else ok; fi
  done
else
  echo "note: valgrind not installed; skipping the valgrind runs (make deps installs it)"
fi

# The end-to-end suites: each prints its own lines and fails on its own.
for suite in tests/runtime/run.sh tests/petsc/compare.sh tests/solve/run.sh tests/mms/run.sh tests/skeleton/run.sh tests/editors/run.sh tests/plot/run.sh; do
  [ -f "$suite" ] || continue
  if sh "$suite"; then ok; else bad "$suite"; fi
done

# A short, bounded run of both fuzzers, the saved findings replayed first (make fuzz-long for the long one).
if [ "${SKIP_FUZZ:-0}" != 1 ]; then
  for target in frontend pipeline; do
    if make -s build/fuzz-$target >"$tmp/fuzzbuild" 2>&1; then
      if tests/fuzz/run.sh build/fuzz-$target 20000 >"$tmp/fuzz" 2>&1; then ok; else bad "fuzz smoke ($target)"; tail -40 "$tmp/fuzz"; fi
    else
      bad "building the fuzzer $target (needs clang and libclang-rt-14-dev: make deps)"; tail -20 "$tmp/fuzzbuild"
    fi
  done
fi

echo "tests: $pass passed, $fail failed"
[ $fail -eq 0 ]
