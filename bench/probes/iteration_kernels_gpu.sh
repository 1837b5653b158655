#!/bin/sh
# bench/probes/iteration_kernels_gpu.sh: where a Krylov iteration's GPU time goes, in the solve itself:
# the cavity at 256^2 and SFI at 64^3 (GMRES(30), Jacobi, KSPSTNGMRES), timed plainly
# (-log_view), with -ksp_stngmres_profile, and under Nsight Compute (ncu, clocks and caches
# left alone) for 120 kernels from the 2000th launch on: each kernel's own duration and DRAM
# bytes, averaged per kernel instance. Needs ncu on the PATH.
#
#   PETSC_DIR=/path/to/cuda-petsc bench/probes/iteration_kernels_gpu.sh
set -u
: "${PETSC_DIR:?set PETSC_DIR to a CUDA-enabled PETSc}"
export PETSC_ARCH=
B=build/bench-gpu; L=${OUT:-build/bench-gpu}; mkdir -p $B $L
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv > $L/smi.txt 2>&1
solver="-snes_rtol 1e-8 -ksp_gmres_restart 30 -pc_type jacobi -ksp_rtol 1e-5 -ksp_max_it 100000 -ksp_converged_reason -stn_device gpu"
for prob in "cavity:-da_grid_x 256 -da_grid_y 256" "sfi3d:-da_grid_x 64 -da_grid_y 64 -da_grid_z 64 -par 6"; do
  name=${prob%%:*}; grid=${prob#*:}
  bin/stencilc examples/$name.stn -o $B/$name > $L/$name.build 2>&1 || { echo "build $name failed"; tail $L/$name.build; }
  $B/$name $grid -stn_autotune -stn_tune_cache $L/tune.txt -snes_max_it 1 > $L/$name.tune.log 2>&1
  $B/$name $grid $solver -stn_tune_cache $L/tune.txt -log_view > $L/$name.plain.log 2>&1
  $B/$name $grid $solver -stn_tune_cache $L/tune.txt -ksp_stngmres_profile > $L/$name.profile.log 2>&1
  timeout 200 ncu --clock-control none --cache-control none --launch-skip 2000 --launch-count 120 \
     --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,launch__grid_size,launch__block_size \
     --print-units base --csv $B/$name $grid $solver -stn_tune_cache $L/tune.txt > $L/$name.ncu.csv 2> $L/$name.ncu.err
  echo "== $name"
  awk '/Linear solve converged/ {its += $NF} $1 == "KSPSolve" {t = $4} END {printf "plain: its %d KSPSolve %.4f s, %.1f us/it\n", its, t, t/its*1e6}' $L/$name.plain.log
  grep "stngmres profile" $L/$name.profile.log
  python3 - $L/$name.ncu.csv <<'PY'
import csv, sys, collections
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10]
hdr = rows[0]; rows = rows[1:]
ki = hdr.index("Kernel Name"); mi = hdr.index("Metric Name"); vi = hdr.index("Metric Value"); idi = hdr.index("ID")
d = collections.defaultdict(dict); name = {}
for r in rows:
    d[r[idi]][r[mi]] = r[vi].replace(",", ""); name[r[idi]] = r[ki][:60]
agg = collections.defaultdict(list)
for i, m in d.items():
    agg[name[i]].append(m)
for k, ms in sorted(agg.items(), key=lambda kv: -len(kv[1])):
    t = [float(m.get("gpu__time_duration.sum", 0)) for m in ms]
    rd = [float(m.get("dram__bytes_read.sum", 0)) for m in ms]
    print("%-60s n=%3d mean %.2f us  min %.2f max %.2f  dram rd %.1f MB grid %s block %s" % (k, len(ms), sum(t)/len(t)/1e3, min(t)/1e3, max(t)/1e3, sum(rd)/len(rd)/1e6, ms[0].get("launch__grid_size"), ms[0].get("launch__block_size")))
PY
done
