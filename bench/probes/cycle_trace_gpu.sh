#!/bin/sh
# bench/probes/cycle_trace_gpu.sh: where a step of the GMRES cycle kernel spends its time, from the
# repository root on a machine with the GPU:
#
#   PETSC_DIR=/path/to/cuda-petsc sh bench/probes/cycle_trace_gpu.sh
#
# Builds the cycle kernel with -DSTN_CYCLE_TRACE (runtime/stncycle_cuda.cu: thread 0 of each
# block reads clock64() at the end of each phase of each step) and tests/gpu/gmres_cycle.c against
# it, runs its -bench and prints the phases of the queued cycles at 256^2 x 4 and 64^3: us per
# step for block 1, the mean over the blocks and their most. Each block's phases go to the log
# ($OUT/cycle-trace, or build/bench-gpu/cycle-trace), for a closer look: a block that arrives
# late at a barrier makes every other block wait there. The marks themselves cost 1-2 us per
# step: compare phases with each other here, and builds by the plain kernel's timings
# (tests/gpu/gmres_cycle -bench).
set -u
LOG=${OUT:-build/bench-gpu}/cycle-trace
B=build/gpu-tests
mkdir -p "$LOG" "$B/trace"
. tests/gpu/build-env.sh || exit 1
if ! stn_build_runtime "$B/runtime"; then
  echo "FAIL: building the runtime (log: $B/runtime/build.log)"
  exit 1
fi
objs=$(echo "$RUNTIME_OBJS" | sed "s|$B/runtime/stncycle_cuda.o|$B/trace/stncycle_cuda.o|")
# shellcheck disable=SC2086 # flag lists
if ! $NVCC $NVCCFLAGS -DSTN_CYCLE_TRACE -c runtime/stncycle_cuda.cu -o "$B/trace/stncycle_cuda.o" >"$LOG/build.log" 2>&1 ||
   ! $CC $CFLAGS -DSTN_CYCLE_TRACE -o "$B/trace/gmres_cycle" tests/gpu/gmres_cycle.c $objs $LIBS >>"$LOG/build.log" 2>&1; then
  echo "FAIL: building the traced cycle kernel (log: $LOG/build.log)"
  tail -20 "$LOG/build.log"
  exit 1
fi
"$B/trace/gmres_cycle" -bench >"$LOG/gmres_cycle.txt" 2>&1
rc=$?
grep -E "^(trace:|\| (cavity|sfi)|gmres_cycle:)" "$LOG/gmres_cycle.txt"
exit $rc
