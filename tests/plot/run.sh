#!/bin/sh
# tests/plot/run.sh: the pictures of a generated program (runtime/plot.c),
# from the repository root (any cwd works):
#
#   1 pictures    cavity (2D, 4 fields) on 1 and 2 ranks and sfi3d (3D) on 1
#                 and 2 ranks, with -stn_plot_solution and -stn_plot_convergence:
#                 both files are PNGs (the 8-byte signature), of a sane size
#                 (IHDR width and height, and bytes) with something drawn
#                 (read back by gnuplot: at least 20% of the solution picture
#                 and 0.3% of the convergence picture in colour, not white,
#                 grey or black), the program says where they went, exits 0
#   2 failed solve  a solve that fails still exits 1 and still draws both
#                 pictures (its last iterate, and the history of the failure)
#   3 no gnuplot  with a PATH lacking gnuplot the program solves, exits 0,
#                 prints one note saying gnuplot is not installed, writes no file
#   4 bad path    a picture that cannot be written: found before the solve (a
#                 sentence naming the option and the path), nothing solved,
#                 a non-zero exit status
#   5 tidy        the temporary directories (stnplot-*) are gone afterwards
#
# Sections 1, 2 and 4 need gnuplot (Debian: gnuplot-nox, which make deps
# installs); without it they are skipped with a note. One line per check, a
# summary, and a non-zero exit status if any check failed. Programs and
# pictures go to build/tests/plot/.
#
# Environment: STENCILC (default bin/stencilc), RUN_TIMEOUT seconds per run
# (default 120), MPIEXEC (default mpiexec).
set -u
cd "$(dirname "$0")/../.." || exit 2

STENCILC=${STENCILC:-bin/stencilc}
RUN_TIMEOUT=${RUN_TIMEOUT:-120}
MPIEXEC=${MPIEXEC:-mpiexec}
OUT=build/tests/plot
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none
export OMPI_MCA_rmaps_base_oversubscribe=1

pass=0
fail=0
ok() { pass=$((pass + 1)); echo "plot: $* ok"; }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
note() { echo "plot: note: $*"; }
show() { grep -v '^ *$' "$1" 2>/dev/null | tail -n "${2:-8}" | sed 's/^/  | /'; }

missing=""
[ -x "$STENCILC" ] || missing="$missing $STENCILC (run make)"
for t in mpicc "$MPIEXEC" pkg-config timeout od; do
  command -v "$t" >/dev/null 2>&1 || missing="$missing $t"
done
if [ -n "$missing" ]; then
  bad "prerequisites missing:$missing (make deps)"
  echo "plot: $pass passed, $fail failed"
  exit 1
fi
have_gnuplot=0
command -v gnuplot >/dev/null 2>&1 && have_gnuplot=1

rm -rf "$OUT"
mkdir -p "$OUT/log" "$OUT/tmp"
LOG=$OUT/log
# Every run gets a private TMPDIR, so that section 5 can see what was left.
TMPDIR=$(cd "$OUT/tmp" && pwd)
export TMPDIR

run() { l=$1; shift; timeout "$RUN_TIMEOUT" "$@" >"$l" 2>&1; }
mpirun() { n=$1 l=$2; shift 2; timeout "$RUN_TIMEOUT" "$MPIEXEC" --oversubscribe -n "$n" "$@" >"$l" 2>&1 </dev/null; }

# png FILE MINW MINH MINBYTES: sets png_why to why FILE is not a PNG of at
# least MINW x MINH pixels and MINBYTES bytes (empty when it is), and
# png_desc to its size. A blank picture is smaller, but text and axes weigh
# as much as the data: coloured (below) checks that something was drawn.
png() {
  png_why="" png_desc=""
  [ -f "$1" ] || { png_why="; $1 was not written"; return; }
  sig=$(od -An -tu1 -N8 "$1" | tr -s ' \n' '  ')
  [ "$sig" = " 137 80 78 71 13 10 26 10 " ] || { png_why="; $1 is not a PNG (it starts with$sig)"; return; }
  # IHDR: width and height, 4 bytes each, big-endian, at offset 16
  # shellcheck disable=SC2046
  set -- "$1" "$2" "$3" "$4" $(od -An -tu1 -j16 -N8 "$1")
  w=$(( ($5 << 24) + ($6 << 16) + ($7 << 8) + $8 ))
  h=$(( ($9 << 24) + (${10} << 16) + (${11} << 8) + ${12} ))
  size=$(wc -c <"$1")
  png_desc="${w}x$h, $size bytes"
  if [ "$w" -lt "$2" ] || [ "$h" -lt "$3" ] || [ "$w" -gt 8000 ] || [ "$h" -gt 8000 ]; then
    png_why="; $1 is ${w}x$h pixels, expected at least ${2}x$3 (and at most 8000x8000)"
  elif [ "$size" -lt "$4" ]; then
    png_why="; $1 has $size bytes, expected at least $4"
  fi
}

# coloured FILE MIN: gnuplot reads the picture back (libgd) and counts the
# pixels in colour (not white, grey or black: the colour maps and the
# curves); appends to png_why when fewer than MIN per mille are, and the
# count to png_desc.
coloured() {
  [ -f "$1" ] || return
  gnuplot -e "set table '$OUT/pixels.txt'; plot '$1' binary filetype=png with rgbimage" >"$OUT/pixels.log" 2>&1
  permille=$(awk '/^#/ {next} NF == 7 {n++; if ($3 != $4 || $4 != $5) c++}
                  END {if (n > 0) printf "%d", 1000 * c / n}' "$OUT/pixels.txt" 2>/dev/null)
  rm -f "$OUT/pixels.txt"
  if [ -z "$permille" ]; then
    png_why="$png_why; gnuplot could not read $1 back: $(head -n 1 "$OUT/pixels.log")"
  else
    png_desc="$png_desc, $permille per mille in colour"
    [ "$permille" -ge "$2" ] || png_why="$png_why; only $permille per mille of $1 is in colour, expected at least $2 (a blank picture?)"
  fi
}

# One compiler for the whole run, even if make rebuilds bin/stencilc meanwhile.
cp "$STENCILC" "$OUT/stencilc" || { bad "cannot copy $STENCILC"; exit 1; }
STENCILC=$OUT/stencilc
for ex in cavity sfi3d; do
  if ! timeout "$RUN_TIMEOUT" "$STENCILC" "examples/$ex.stn" -o "$OUT/$ex" >"$LOG/$ex.stencilc" 2>&1; then
    bad "build: $STENCILC examples/$ex.stn -o $OUT/$ex failed"
    show "$LOG/$ex.stencilc"
    echo "plot: $pass passed, $fail failed"
    exit 1
  fi
done

# ---- 1 pictures --------------------------------------------------------------
# name:grid options:minimum solution picture (w h bytes)
cases="cavity:-da_grid_x 32 -da_grid_y 32:800 700 15000
sfi3d:-da_grid_x 17 -da_grid_y 17 -da_grid_z 17 -par 5:1200 350 15000"
if [ $have_gnuplot = 1 ]; then
  echo "$cases" | while IFS=: read -r ex grid min; do
    for n in 1 2; do
      sol=$OUT/$ex.$n.solution.png conv=$OUT/$ex.$n.convergence.png l=$LOG/$ex.$n
      # shellcheck disable=SC2086
      mpirun "$n" "$l" "$OUT/$ex" $grid -stn_plot_solution "$sol" -stn_plot_convergence "$conv"
      rc=$?
      # shellcheck disable=SC2086
      png "$sol" $min
      coloured "$sol" 200 # the colour maps: about 40% of the picture
      why=$png_why sdesc=$png_desc
      png "$conv" 1000 400 15000
      coloured "$conv" 3 # the curves: about 1%
      why=$why$png_why
      [ $rc -eq 0 ] && grep -q ": solved in" "$l" || why="$why; exit status $rc, or no 'solved in'"
      grep -qF "solution drawn in $sol" "$l" || why="$why; it does not say where the solution picture went"
      grep -qF "convergence history drawn in $conv" "$l" || why="$why; it does not say where the convergence picture went"
      ! grep -q "note:" "$l" || why="$why; a note: $(grep "note:" "$l" | head -n 1)"
      if [ -z "$why" ]; then
        ok "pictures: $ex on $n rank(s): solution $sol ($sdesc), convergence $conv ($png_desc)"
      else
        bad "pictures: $ex on $n rank(s):${why#;}"
        show "$l"
      fi
    done
  done >"$LOG/section1"
  cat "$LOG/section1"
  pass=$((pass + $(grep -c ' ok$' "$LOG/section1")))
  fail=$((fail + $(grep -c '^FAIL' "$LOG/section1")))
else
  note "gnuplot is not installed (make deps installs gnuplot-nox): sections 1, 2 and 4 skipped"
fi

# ---- 2 failed solve ----------------------------------------------------------
if [ $have_gnuplot = 1 ]; then
  sol=$OUT/failed.solution.png conv=$OUT/failed.convergence.png l=$LOG/failed
  run "$l" "$OUT/cavity" -da_grid_x 16 -da_grid_y 16 -grashof 1e6 -snes_max_it 2 \
    -stn_plot_solution "$sol" -stn_plot_convergence "$conv"
  rc=$?
  png "$sol" 800 700 15000
  coloured "$sol" 200
  why=$png_why
  png "$conv" 1000 400 15000
  coloured "$conv" 3
  why=$why$png_why
  [ $rc -eq 1 ] && grep -q "the solve failed" "$l" || why="$why; exit status $rc (expected 1), or no 'the solve failed'"
  if [ -z "$why" ]; then ok "failed solve: exit status 1, and both pictures drawn"
  else bad "failed solve:${why#;}"; show "$l"; fi
fi

# ---- 3 no gnuplot on PATH ----------------------------------------------------
# The same PATH with every directory that holds gnuplot replaced by a copy of
# it (symbolic links) without gnuplot*: mpicc, orted and the rest stay.
nopath=""
i=0
IFS_SAVE=$IFS
IFS=:
for d in $PATH; do
  IFS=$IFS_SAVE
  if [ -n "$d" ] && [ -e "$d/gnuplot" ]; then
    i=$((i + 1))
    mkdir -p "$OUT/path$i"
    for f in "$d"/*; do
      case ${f##*/} in gnuplot*) ;; *) ln -s "$f" "$OUT/path$i/${f##*/}" 2>/dev/null ;; esac
    done
    d=$(cd "$OUT/path$i" && pwd)
  fi
  nopath="${nopath:+$nopath:}$d"
done
IFS=$IFS_SAVE
sol=$OUT/nognuplot.solution.png conv=$OUT/nognuplot.convergence.png l=$LOG/nognuplot
if PATH=$nopath command -v gnuplot >/dev/null 2>&1; then
  bad "no gnuplot: could not make a PATH without gnuplot"
else
  PATH=$nopath run "$l" "$OUT/cavity" -da_grid_x 16 -da_grid_y 16 -stn_plot_solution "$sol" -stn_plot_convergence "$conv"
  rc=$?
  why=""
  [ $rc -eq 0 ] && grep -q ": solved in" "$l" || why="; exit status $rc, or no 'solved in'"
  [ "$(grep -c "note: gnuplot is not installed" "$l")" -eq 2 ] || why="$why; not one note per picture saying gnuplot is not installed"
  [ ! -e "$sol" ] && [ ! -e "$conv" ] || why="$why; a picture file was written"
  if [ -z "$why" ]; then ok "no gnuplot: exit status 0 and the note '$(grep -m 1 "note:" "$l")'"
  else bad "no gnuplot:${why#;}"; show "$l"; fi
fi

# ---- 4 a picture that cannot be written ---------------------------------------
if [ $have_gnuplot = 1 ]; then
  l=$LOG/badpath
  run "$l" "$OUT/cavity" -stn_plot_solution "$OUT/no/such/dir/x.png"
  rc=$?
  if [ $rc -ne 0 ] && grep -q -- "-stn_plot_solution $OUT/no/such/dir/x.png: cannot write there" "$l" && ! grep -q "solved in" "$l"; then
    ok "bad path: exit status $rc before the solve, and '$(grep -m 1 -o -- "-stn_plot_solution .*: cannot write there[^;]*" "$l")'"
  else
    bad "bad path: exit status $rc, or no sentence naming the path, or a solve"
    show "$l"
  fi
fi

# ---- 5 tidy ---------------------------------------------------------------------
left=$(cd "$TMPDIR" && ls -d stnplot-* 2>/dev/null)
if [ -z "$left" ]; then ok "tidy: no temporary directory (stnplot-*) left behind"
else bad "tidy: left in TMPDIR: $left"; fi

echo "plot: $pass passed, $fail failed"
[ $fail -eq 0 ]
