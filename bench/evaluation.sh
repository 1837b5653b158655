#!/bin/sh
# bench/evaluation.sh: the generated residual and Jacobian evaluation of examples/sfi3d.stn
# against the hand-written ones of PETSc's SNES tutorial ex14 (3D Bratu, 7-point star), and
# the SG-DIA matrix-vector product against AIJ's. Run from anywhere; takes about 1.5 minutes
# on an idle 2-core machine, 2-3 minutes on a shared one (a benchmark, not a timed test: it
# prints ratios measured in the same run).
#
#   bench/evaluation.sh                  sizes 96^3 and 128^3, best of 3
#   SIZES="64 96" REPS=5 bench/evaluation.sh
#   COPY=1 bench/evaluation.sh           also ours with -pc_type sor, whose Jacobian
#                                        evaluation includes the SG-DIA -> AIJ copy
#
# Programs (all serial, same grid, same -par, same solver options):
#   ex14        PETSc's ex14.c as shipped (tests/petsc/build-tutorials.sh), default path:
#               SNESSetFunction(FormFunction) = DMGlobalToLocal + a hand-written loop (it does not
#               use DMDASNESSetFunctionLocal), and SNESSetJacobian(FormJacobian) = the
#               hand-written Jacobian, one MatSetValuesStencil per row into a DMCreateMatrix
#               AIJ matrix (not -snes_mf, not -fdcoloring).
#   SG-DIA      bin/stencilc examples/sfi3d.stn, default -stn_mat_type sgdia, with -pc_type
#               jacobi: SG-DIA serves Jacobi directly, so SNESJacobianEval is the pure SG-DIA fill
#               (with the default PC, ILU, it would also copy SG-DIA into an AIJ matrix).
#   ours AIJ    the same program with -stn_mat_type aij (MatSetValuesStencil into AIJ).
#
# Solver options: a fixed number N of Newton steps whose cost is function and Jacobian
# evaluation plus 5 cheap CG iterations:
#   -snes_max_it N -snes_convergence_test skip   exactly N steps, never stopping early
#   -snes_linesearch_type basic                  one residual per step (full step)
#   -ksp_type cg -pc_type jacobi -ksp_max_it 5 -ksp_convergence_test skip
#                                                exactly 5 MatMult per step, no "linear solve
#                                                failed" when 5 iterations do not converge
# -log_view gives SNESFunctionEval (N+1 calls), SNESJacobianEval (N) and MatMult (5N).
#
# The first call of each event pays one-time costs that are not evaluation: the lazy setup of
# the DMDA's ghost scatter (PetscSF) in the first DMGlobalToLocal, and first-touch page faults
# of freshly allocated vectors and of the SG-DIA value array. Measured here they are as large as
# several calls, so each program runs twice, with N = 1 and N = 11 Newton steps, and
#     time per call = (T(11) - T(1)) / (count(11) - count(1))     (10, 10 and 50 calls)
# from the -log_view totals T; the first calls cancel. T(N) is the best (smallest) of REPS runs.
# The second table gives the plain -log_view time/count of the N = 11 runs, first call included.
#
# Outputs: build/bench-evaluation/ (the program, its generated sources, every -log_view).
set -eu
cd "$(dirname "$0")/.."

SIZES=${SIZES:-"96 128"}
REPS=${REPS:-3}
COPY=${COPY:-0}
N1=1
N2=11
KSPIT=5
OUT=build/bench-evaluation
LOGS=$OUT/logs
# PETSc's vector operations go through BLAS; keep a threaded BLAS on one thread.
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1

die() { echo "bench/evaluation.sh: error: $*" >&2; exit 1; }

# ---- build: stencilc, ex14, the sfi3d program (its generated C kept for reading) ----
make -s bin/stencilc >/dev/null || die "make failed"
tests/petsc/build-tutorials.sh >/dev/null || die "building the PETSc tutorials failed"
EX14=build/petsc-tutorials/ex14
rm -rf "$OUT"
mkdir -p "$LOGS"
bin/stencilc examples/sfi3d.stn -o "$OUT/sfi3d" --emit-dir "$OUT/src" || die "stencilc failed"
SFI=$OUT/sfi3d

# ---- memory: about 260 bytes per grid point for the AIJ runs (measured: 0.53 GB at 128^3) ----
avail_kb=$(awk '/^MemAvailable:/ {print $2}' /proc/meminfo)
for n in $SIZES; do
  need_kb=$(awk -v n="$n" 'BEGIN {printf "%d", n * n * n * 260 / 1024 * 1.5}')
  [ "$need_kb" -lt "$avail_kb" ] || die "${n}^3 needs about $((need_kb / 1024)) MB, $((avail_kb / 1024)) MB available"
done

COMMON="-par 6.0 -snes_linesearch_type basic -snes_convergence_test skip -ksp_type cg -ksp_max_it $KSPIT -ksp_convergence_test skip -log_view"

# run NAME SIZE STEPS REP: one run, its output in $LOGS/NAME.SIZE.STEPS.REP
run() {
  case $1 in
    ex14) set -- "$@" "$EX14" -pc_type jacobi ;;
    sgdia) set -- "$@" "$SFI" -pc_type jacobi ;;
    aij) set -- "$@" "$SFI" -stn_mat_type aij -pc_type jacobi ;;
    copy) set -- "$@" "$SFI" -pc_type sor ;;
  esac
  name=$1 n=$2 steps=$3 rep=$4
  shift 4
  log=$LOGS/$name.$n.$steps.$rep
  # shellcheck disable=SC2086
  "$@" -da_grid_x "$n" -da_grid_y "$n" -da_grid_z "$n" -snes_max_it "$steps" $COMMON >"$log" 2>&1 ||
    die "$name at ${n}^3 with $steps Newton steps failed; see $log"
}

PROGS="ex14 sgdia aij"
[ "$COPY" = 1 ] && PROGS="$PROGS copy"

start=$(date +%s)
load0=$(cut -d' ' -f1 /proc/loadavg)
for n in $SIZES; do
  r=1
  while [ "$r" -le "$REPS" ]; do
    # interleaved, so that a slow spell of the machine hits every program alike
    for p in $PROGS; do
      run "$p" "$n" "$N1" "$r"
      run "$p" "$n" "$N2" "$r"
    done
    r=$((r + 1))
  done
done
elapsed=$(($(date +%s) - start))
load1=$(cut -d' ' -f1 /proc/loadavg)

# ---- the same answer from the three programs that run the same solver: the final residual norm ----
for n in $SIZES; do
  for p in ex14 sgdia aij; do
    f=$LOGS/$p.$n.$N2.1
    if [ "$p" = ex14 ]; then
      grep -q "Number of SNES iterations = $N2 " "$f" || die "ex14 did not take $N2 Newton steps; see $f"
      norm=$(sed -n 's/.*fnorm \([^ ]*\).*/\1/p' "$f")
    else
      grep -q "in $N2 Newton iterations" "$f" || die "$p did not take $N2 Newton steps; see $f"
      norm=$(sed -n 's/.*residual norm \([^ ]*\) .*/\1/p' "$f")
    fi
    echo "$n $p $norm"
  done
done >"$OUT/norms"
awk '{ if (($1 in ref) && ref[$1] != $3) { print "bench/evaluation.sh: warning: final residual norm at " $1 "^3: " $2 " " $3 ", ex14 " ref[$1] > "/dev/stderr" } else if (!($1 in ref)) ref[$1] = $3 }' "$OUT/norms"

# ---- extract from -log_view: per file, the count and total time of the three events ----
for f in "$LOGS"/*; do
  awk -v file="$(basename "$f")" '
    $1 == "SNESFunctionEval" || $1 == "SNESJacobianEval" || $1 == "MatMult" { print file, $1, $2, $4 }' "$f"
done >"$OUT/events"

# ---- the tables ----
awk -v sizes="$SIZES" -v progs="$PROGS" -v n1="$N1" -v n2="$N2" -v reps="$REPS" -v kspit="$KSPIT" '
  {
    split($1, k, ".")          # name.size.steps.rep
    key = k[1] SUBSEP k[2] SUBSEP k[3] SUBSEP $2
    if (!(key in best) || $4 < best[key]) best[key] = $4
    if (!(key in worst) || $4 > worst[key]) worst[key] = $4
    if ((key in cnt) && cnt[key] != $3) { printf "count of %s differs between runs of %s\n", $2, $1 > "/dev/stderr"; bad = 1 }
    cnt[key] = $3
  }
  function percall(p, n, ev,   a, b) {
    a = p SUBSEP n SUBSEP n1 SUBSEP ev; b = p SUBSEP n SUBSEP n2 SUBSEP ev
    if (!(a in best) || !(b in best) || cnt[b] <= cnt[a]) { missing = 1; return -1 }
    return (best[b] - best[a]) / (cnt[b] - cnt[a])
  }
  function raw(p, n, ev,   b) {
    b = p SUBSEP n SUBSEP n2 SUBSEP ev
    if (!(b in best) || cnt[b] == 0) { missing = 1; return -1 }
    return best[b] / cnt[b]
  }
  function ms(t) { return t < 0 ? "n/a" : sprintf("%.2f", 1e3 * t) }
  function ratio(a, b) { return (a <= 0 || b <= 0) ? "n/a" : sprintf("%.2f", a / b) }
  function calls(p, n, ev) { return cnt[p SUBSEP n SUBSEP n2 SUBSEP ev] - cnt[p SUBSEP n SUBSEP n1 SUBSEP ev] }
  function table(kind,   s, e, n, ev, t1, t2, t3, t4, label) {
    print "| size | event | calls | ex14 ms/call | ours SG-DIA ms/call | ours AIJ ms/call | ex14 / SG-DIA | ex14 / ours AIJ | ours AIJ / SG-DIA |"
    print "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
    for (s = 1; s <= ns; s++)
      for (e = 1; e <= 3; e++) {
        n = size[s]; ev = evs[e]
        if (kind == "steady") {
          t1 = percall("ex14", n, ev); t2 = percall("sgdia", n, ev); t3 = percall("aij", n, ev)
          label = calls("ex14", n, ev)
        } else {
          t1 = raw("ex14", n, ev); t2 = raw("sgdia", n, ev); t3 = raw("aij", n, ev)
          label = cnt["ex14" SUBSEP n SUBSEP n2 SUBSEP ev]
        }
        printf "| %d^3 | %s | %s | %s | %s | %s | %s | %s | %s |\n", n, ev, label, ms(t1), ms(t2), ms(t3), ratio(t1, t2), ratio(t1, t3), ratio(t3, t2)
      }
  }
  END {
    if (bad) exit 1
    ns = split(sizes, size, " ")
    evs[1] = "SNESFunctionEval"; evs[2] = "SNESJacobianEval"; evs[3] = "MatMult"
    printf "## sfi3d (stencilc) vs PETSc ex14: residual, Jacobian and MatMult, serial, best of %d runs\n\n", reps
    printf "Time per call in steady state, (T(%d steps) - T(%d step)) / calls, from -log_view; ", n2, n1
    print "a ratio A / B > 1 means B is faster (ex14 / SG-DIA > 1: ours is faster). SG-DIA runs use"
    print "-pc_type jacobi, so no AIJ copy; MatMult of ex14 and of ours AIJ is the same MatMult_SeqAIJ.\n"
    table("steady")
    printf "\nPlain -log_view time/count of the %d-step runs (first call, with its one-time setup, included):\n\n", n2
    table("raw")
    if (progs ~ /copy/) {
      print "\nSG-DIA with a preconditioner that needs AIJ (-pc_type sor): SNESJacobianEval includes MatSGDIACopyToAIJ.\n"
      print "| size | ex14 Jacobian ms/call | SG-DIA fill ms/call | SG-DIA fill + copy ms/call | ex14 / (fill + copy) |"
      print "| --- | ---: | ---: | ---: | ---: |"
      for (s = 1; s <= ns; s++) {
        n = size[s]
        t1 = percall("ex14", n, "SNESJacobianEval"); t2 = percall("sgdia", n, "SNESJacobianEval"); t4 = percall("copy", n, "SNESJacobianEval")
        printf "| %d^3 | %s | %s | %s | %s |\n", n, ms(t1), ms(t2), ms(t4), ratio(t1, t4)
      }
    }
    # noise: the largest slowest/fastest total over the REPS runs of N2 steps
    for (key in best) {
      split(key, w, SUBSEP)
      if (w[3] == n2 && best[key] > 0 && worst[key] / best[key] > spread) { spread = worst[key] / best[key]; at = w[1] " " w[4] " at " w[2] "^3" }
    }
    if (reps > 1) printf "\nSpread of the %d-step runs: slowest / fastest total up to %.2f (%s).\n", n2, spread, at
    if (missing) exit 1
  }' "$OUT/events" || die "could not read the -log_view tables in $LOGS"

printf '\nFinal residual norms (same arithmetic and solver, should agree): %s\n' "$(awk '{printf "%s%s^3 %s %s", (NR > 1 ? "; " : ""), $1, $2, $3}' "$OUT/norms")"
printf 'Runs: %s, N = %d and %d Newton steps, %d CG iterations per step; %d s; logs in %s\n' \
  "$(echo "$PROGS" | wc -w) programs x $(echo "$SIZES" | wc -w) sizes x $REPS" "$N1" "$N2" "$KSPIT" "$elapsed" "$LOGS"
cores=$(getconf _NPROCESSORS_ONLN)  # not nproc: it obeys OMP_NUM_THREADS
printf 'Load average %s before, %s after, on %d cores' "$load0" "$load1" "$cores"
if awk -v a="$load0" -v b="$load1" -v c="$cores" 'BEGIN {exit !(a > c - 0.5 || b > c + 0.5)}'; then
  printf ': other work shared the CPUs; the times are noisy, run again on a quiet machine\n'
else
  printf '\n'
fi
