#!/bin/sh
# tests/cli.sh STENCILC TMPDIR: the command line and hostile inputs. Each
# case asserts the exit status and a line of the message; prints FAIL lines
# and exits non-zero when one fails.
set -u
S=$1
T=$2
fails=0

# expect STATUS PATTERN -- ARGS...: runs stencilc, checks status and that
# stdout+stderr matches the grep pattern.
expect() {
  want=$1 pattern=$2
  shift 3
  "$S" "$@" >"$T/cli.out" 2>&1
  rc=$?
  if [ "$rc" -ne "$want" ]; then
    echo "FAIL: stencilc $*: exit $rc, expected $want"; head -5 "$T/cli.out"; fails=$((fails + 1)); return
  fi
  if [ -n "$pattern" ] && ! grep -q -e "$pattern" "$T/cli.out"; then
    echo "FAIL: stencilc $*: output lacks '$pattern'"; head -5 "$T/cli.out"; fails=$((fails + 1))
  fi
}

expect 0 "usage: stencilc" -- --help
expect 0 "^stencilc [0-9]" -- --version
expect 2 "no input file" -- --check
expect 2 "unknown option '--frobnicate'" -- --frobnicate examples/cavity.stn
expect 2 "more than one input file" -- --check examples/cavity.stn examples/bratu2d.stn
expect 2 "cannot be combined" -- --check --dump-ast examples/cavity.stn
expect 2 "no output given" -- examples/cavity.stn
expect 2 "needs an argument" -- examples/cavity.stn -o
expect 2 "cannot be combined" -- --check -o x examples/cavity.stn
expect 2 "--emit-dir needs -o" -- --emit-dir d examples/cavity.stn
expect 2 "unknown pass" -- --dump-ir=bogus examples/cavity.stn
expect 1 "cannot open the file: No such file or directory" -- --check "$T/does not exist.stn"
expect 1 "this is a directory" -- --check examples
expect 0 "" -- --check -- examples/cavity.stn

# An empty file and one with only comments.
: >"$T/empty.stn"
expect 1 "the program is empty" -- --check "$T/empty.stn"
printf '# only a comment\n\n   \n' >"$T/comment.stn"
expect 1 "the program is empty" -- --check "$T/comment.stn"

# Binary garbage: one message about the first bad byte, not a flood.
head -c 65536 /dev/urandom >"$T/garbage.stn" 2>/dev/null || dd if=/dev/urandom of="$T/garbage.stn" bs=1024 count=64 2>/dev/null
expect 1 "is not text" -- --check "$T/garbage.stn"
if [ "$(grep -c "error:" "$T/cli.out")" -ne 1 ]; then echo "FAIL: garbage gave more than one error"; fails=$((fails + 1)); fi
cp bin/stencilc "$T/binary.stn"
expect 1 "is not text" -- --check "$T/binary.stn"

# A 1 MB line: a clear message quoting a window of the line, not the megabyte.
awk 'BEGIN { printf "grid { x: 5 points in [0, 1]; }\nfields u;\nstencil star width 1;\nresidual u { all: u"; for (i = 0; i < 200000; i++) printf " + u"; printf " $ 1; }\n" }' >"$T/longline.stn"
expect 1 "longline.stn:4:[0-9]*: error: unexpected character '\\$'" -- --check "$T/longline.stn"
if [ "$(wc -c <"$T/cli.out")" -gt 2000 ]; then echo "FAIL: the 1 MB line was quoted whole"; fails=$((fails + 1)); fi
# The same line without the mistake: a sum of 200000 terms is too deep to check.
sed 's/ \$ 1//' "$T/longline.stn" >"$T/longsum.stn"
expect 1 "expression nested too deeply (200001 levels" -- --check "$T/longsum.stn"
# A 1 MB comment line is fine.
awk 'BEGIN { printf "grid { x: 5 points in [0, 1]; }  #"; for (i = 0; i < 100000; i++) printf " comment "; printf "\nfields u;\nstencil star width 1;\nresidual u { all: u; }\n" }' >"$T/longok.stn"
expect 0 "" -- --check "$T/longok.stn"

# 100000 nested parentheses: a clear message, no crash.
awk 'BEGIN { printf "grid { x: 5 points in [0, 1]; }\nfields u;\nstencil star width 1;\nresidual u { all: "; for (i = 0; i < 100000; i++) printf "("; printf "u"; for (i = 0; i < 100000; i++) printf ")"; printf "; }\n" }' >"$T/nested.stn"
expect 1 "nested too deeply" -- --check "$T/nested.stn"
# 100000 unary minus signs, the other way to nest.
awk 'BEGIN { printf "grid { x: 5 points in [0, 1]; }\nfields u;\nstencil star width 1;\nresidual u { all: "; for (i = 0; i < 100000; i++) printf "-"; printf "u; }\n" }' >"$T/minus.stn"
expect 1 "nested too deeply" -- --check "$T/minus.stn"

# Paths with spaces and quotes are just paths.
mkdir -p "$T/a dir; with 'quotes'"
cp examples/bratu2d.stn "$T/a dir; with 'quotes'/my \"file\".stn"
expect 0 "" -- --check "$T/a dir; with 'quotes'/my \"file\".stn"

# Warnings do not fail a check.
printf 'grid { x: 5 points in [0, 1]; }\nfields u;\nstencil star width 2;\nparam unused = 1;\nresidual u { all: u; }\n' >"$T/warn.stn"
expect 0 "warning: parameter 'unused' is never used" -- --check "$T/warn.stn"
expect 0 "warning: the equations read only a star stencil of width 1" -- --check "$T/warn.stn"

# A rule that never applies says why: other rules fit its points better, or (a boundary rule on
# a grid periodic in every direction) it has no points at all.
printf 'grid { x: 8 points in [0, 1] periodic; y: 8 points in [0, 1] periodic; }\nfields u;\nstencil star width 1;\nresidual u { boundary: u; interior: 4*u - u[-1,0] - u[1,0] - u[0,-1] - u[0,1] - 1; }\n' >"$T/periodic.stn"
expect 0 "warning: this rule never applies: the grid is periodic in every direction, so it has no boundary points" -- --check "$T/periodic.stn"
printf 'grid { x: 5 points in [0, 1]; }\nfields u;\nstencil star width 1;\nresidual u { boundary: u; left: u - 1; right: u - 2; interior: 2*u - u[-1] - u[1]; }\n' >"$T/shadow.stn"
expect 0 "warning: this rule never applies: other rules fit all of its points better" -- --check "$T/shadow.stn"

# Too many errors: the run stops counting at 50 and says so.
{ printf 'grid { x: 5 points in [0, 1]; }\nfields u;\nstencil star width 1;\nresidual u { all: u'; i=0; while [ $i -lt 80 ]; do printf ' + nope%d' $i; i=$((i + 1)); done; printf '; }\n'; } >"$T/many.stn"
expect 1 "too many errors (50), stopping here" -- --check "$T/many.stn"

# -o never replaces its input, nor a device, a FIFO or a directory (the rename would); --emit-dir
# never writes into a directory of the user's; a missing compiler is the machine's, said so.
cp examples/bratu2d.stn "$T/h.stn"
expect 1 "is the input file itself; name the program, for example -o h" -- "$T/h.stn" -o "$T/h.stn"
expect 1 "is the input file itself" -- "$T/h.stn" -o "$T/./h.stn"
cmp -s examples/bratu2d.stn "$T/h.stn" || { echo "FAIL: stencilc -o INPUT changed the input"; fails=$((fails + 1)); }
expect 1 "exists and is not a regular file" -- "$T/h.stn" -o /dev/null
[ -c /dev/null ] || { echo "FAIL: stencilc -o /dev/null replaced the device"; fails=$((fails + 1)); }
rm -f "$T/fifo" && mkfifo "$T/fifo" && expect 1 "exists and is not a regular file" -- "$T/h.stn" -o "$T/fifo"
[ -p "$T/fifo" ] || { echo "FAIL: stencilc -o FIFO replaced it"; fails=$((fails + 1)); }
expect 1 "exists and is not a regular file" -- "$T/h.stn" -o "$T"
rm -rf "$T/mine" && mkdir "$T/mine" && echo "my own plot.c" >"$T/mine/plot.c"
expect 1 "holds files stencilc did not write; --emit-dir writes only into a new or empty directory" -- "$T/h.stn" -o "$T/h" --emit-dir "$T/mine"
[ "$(cat "$T/mine/plot.c")" = "my own plot.c" ] && [ "$(ls -A "$T/mine")" = plot.c ] ||
  { echo "FAIL: stencilc --emit-dir wrote into a directory of the user's"; fails=$((fails + 1)); }
STENCILC_CC=/no/such/cc "$S" "$T/h.stn" -o "$T/h" >"$T/cli.out" 2>&1
rc=$?
if [ $rc -ne 1 ] || ! grep -q "the C compiler '/no/such/cc' (STENCILC_CC) is not installed" "$T/cli.out" || grep -q "bug" "$T/cli.out"; then
  echo "FAIL: a missing C compiler: exit $rc, $(head -1 "$T/cli.out")"; fails=$((fails + 1))
fi

# A failed write leaves nothing half-written: under a file size limit (ulimit -f, standing in for
# a full disk) --emit-dir and --skeleton stop with the reason and non-zero, and every file they
# leave is complete (the same as an unlimited run's); no temporary file stays behind. A generated
# file that is a link to /dev/full is written through, reported, and stays a link.
rm -rf "$T/emit-ref" "$T/emit-full" "$T/skel-full"
"$S" "$T/h.stn" -o "$T/h" --emit-dir "$T/emit-ref" >/dev/null 2>&1
(ulimit -f 40 && exec "$S" "$T/h.stn" -o "$T/h" --emit-dir "$T/emit-full") >"$T/cli.out" 2>&1
rc=$?
partial=""
for f in $(ls -A "$T/emit-full" 2>/dev/null); do cmp -s "$T/emit-full/$f" "$T/emit-ref/$f" || partial="$partial $f"; done
if [ $rc -ne 1 ] || ! grep -q "cannot write '.*': File too large" "$T/cli.out" || [ -n "$partial" ]; then
  echo "FAIL: --emit-dir under ulimit -f: exit $rc (expected 1), $(head -1 "$T/cli.out"), partial or stray files:$partial"
  fails=$((fails + 1))
fi
(ulimit -f 40 && exec "$S" "$T/h.stn" --skeleton "$T/skel-full") >"$T/cli.out" 2>&1
rc=$?
if [ $rc -ne 1 ] || ! grep -q "File too large" "$T/cli.out" || [ -n "$(ls -A "$T/skel-full" 2>/dev/null)" ]; then
  echo "FAIL: --skeleton under ulimit -f: exit $rc (expected 1), left: $(ls -A "$T/skel-full" 2>/dev/null | tr '\n' ' ')"
  fails=$((fails + 1))
fi
if [ -c /dev/full ]; then
  rm -f "$T/emit-ref/h.c" && ln -s /dev/full "$T/emit-ref/h.c"
  expect 1 "cannot write '.*h.c': No space left on device" -- "$T/h.stn" -o "$T/h" --emit-dir "$T/emit-ref"
  [ -L "$T/emit-ref/h.c" ] || { echo "FAIL: --emit-dir replaced a link to /dev/full"; fails=$((fails + 1)); }
fi

# defs calling defs with the same argument twice, 40 levels deep: each def is lowered once per
# distinct arguments, so the IR and the time stay linear in the depth (2^40 inlinings otherwise:
# the timeout would end it).
{ printf 'grid { x: 9 points in [0, 1]; }\nfields u;\nstencil star width 1;\ndef f0(a) = a * a;\n'
  i=1; while [ $i -le 40 ]; do printf 'def f%d(a) = f%d(a) + f%d(a);\n' $i $((i - 1)) $((i - 1)); i=$((i + 1)); done
  printf 'residual u { left, right: u; interior: u[-1] - 2*u + u[1] - 0.001 * f40(u); }\n'; } >"$T/deep.stn"
timeout 20 "$S" --dump-ir "$T/deep.stn" >"$T/deep.ir" 2>&1
rc=$?
if [ $rc -ne 0 ] || [ "$(grep -c '^%[0-9]' "$T/deep.ir")" -gt 200 ]; then
  echo "FAIL: stencilc --dump-ir of 40 nested defs: exit $rc, $(grep -c '^%[0-9]' "$T/deep.ir") IR lines (linear: under 200)"; fails=$((fails + 1))
fi

# A byte-order mark that starts the file is skipped: the program checks as cleanly as without it.
printf '\357\273\277' | cat - examples/bratu2d.stn >"$T/bom.stn"
expect 0 "" -- --check "$T/bom.stn"
[ -s "$T/cli.out" ] && { echo "FAIL: a leading byte-order mark drew a message: $(head -1 "$T/cli.out")"; fails=$((fails + 1)); }

# 9900 unused parameters: 20 warnings of the kind, then one line counting the rest.
{ printf 'grid { x: 5 points in [0, 1]; }\nfields u;\nstencil star width 1;\n'
  i=1; while [ $i -le 9900 ]; do printf 'param p%d = 1;\n' $i; i=$((i + 1)); done
  printf 'residual u { all: u; }\n'; } >"$T/unused.stn"
expect 0 "unused.stn: \.\.\. and 9880 more such warnings$" -- --check "$T/unused.stn"
if [ "$(grep -c "is never used" "$T/cli.out")" -ne 20 ] || [ "$(wc -l <"$T/cli.out")" -gt 80 ]; then
  echo "FAIL: 9900 unused parameters: $(grep -c "is never used" "$T/cli.out") warnings shown, $(wc -l <"$T/cli.out") lines"
  fails=$((fails + 1))
fi

# Simplification keeps IEEE semantics: b * 0 and u - u stay (NaN for an infinite b or u), while
# a * 0 with a in a finite range, and nx - nx, are 0.
printf 'grid { x: 5 points in [0, 1]; }\nfields u;\nstencil star width 1;\nparam a = 1 in [0, 2];\nparam b = 1;\nresidual u { all: u + a * 0 + b * 0 + (u - u) + (nx - nx); }\n' >"$T/ieee.stn"
"$S" --dump-ir "$T/ieee.stn" >"$T/cli.out" 2>&1
if ! grep -q "^%[0-9]* = mul %[0-9]*, %[0-9]*$" "$T/cli.out" || ! grep -q "^%\([0-9]*\) = sub %\([0-9]*\), %\2$" "$T/cli.out" ||
   grep -q "param a$" "$T/cli.out" || grep -q "grid nx$" "$T/cli.out"; then
  echo "FAIL: --dump-ir folds b * 0 or u - u, or keeps a * 0 or nx - nx:"; cat "$T/cli.out"; fails=$((fails + 1))
fi

# floor, ceil and mod fold on constants with mod's sign of b (mod(-7, 3) = 2, mod(7, -3) = -2),
# and differentiate as 0, 0 and (1, -floor(a/b)): d/du of floor(u) + ceil(u) + mod(u, 2) + mod(3, u)
# is 1 - floor(3 / u).
printf 'grid { x: 5 points in [0, 1]; }\nfields u;\nstencil star width 1;\nresidual u { all: u * 0 + (floor(-2.5) * 1000 + ceil(-2.5) * 100 + mod(-7, 3) * 10 + mod(7, -3) + mod(-7, -3) / 4 + mod(5.5, -2) / 8) + floor(u) + ceil(u) + mod(u, 2) + mod(3, u); }\n' >"$T/intfn.stn"
"$S" --dump-ir "$T/intfn.stn" >"$T/cli.out" 2>&1
# The derivative's node, followed through its operands: sub(const 1, call floor(div(const 3, u))).
node() { sed -n "s/^%$1 = //p" "$T/cli.out" | tr -d '%,'; }
d=$(sed -n 's/^  d\/du\[0\] = %\([0-9]*\)$/\1/p' "$T/cli.out" | head -1)
set -- $(node "${d:-x}") x x x
one=$(node "$2") fl=$(node "$3")
set -- $fl x x x
set -- $(node "$3") x x x
three=$(node "$2") uu=$(node "$3")
if ! grep -q "^%[0-9]* = const -3182.3125$" "$T/cli.out" || [ "$(node "${d:-x}" | cut -d' ' -f1)" != sub ] ||
   [ "$one" != "const 1" ] || [ "$(echo "$fl" | cut -d' ' -f1-2)" != "call floor" ] ||
   [ "$three" != "const 3" ] || [ "$uu" != "field u[0]" ] ||
   [ "$(grep -c "= call floor\|= call ceil\|= call mod" "$T/cli.out")" -ne 5 ]; then
  echo "FAIL: --dump-ir of floor, ceil and mod: the constants do not fold to -3182.3125 or the derivative is not 1 - floor(3 / u):"
  cat "$T/cli.out"; fails=$((fails + 1))
fi

[ $fails -eq 0 ]
