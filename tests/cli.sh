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

[ $fails -eq 0 ]
