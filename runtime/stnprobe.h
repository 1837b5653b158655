/* stnprobe.h: hooks for tests/gpu and bench/probes; not part of the program's API: neither the
   runtime nor the generated code calls them. (Hooks the tuner calls, such as StnVecRunShape,
   stay in their module's header.) */
#ifndef STNPROBE_H
#define STNPROBE_H

#ifdef __cplusplus
extern "C" {
#endif

#ifdef STN_CYCLE_TRACE
/* A tracing build's (stncycle_cuda.cu) cycles per phase of the steps so far, STN_CYCLE_TRACE_PHASES
   per block for the first blocks blocks into out (NULL: none); reset: zero them after. Phases: the
   product, pass 1, the block's partial sums, barrier 1, the coefficients' fold, pass 2, the norm's
   partial sums (and the prefetch), barrier 2, the norm's fold, V[it + 1] and the step's end; then
   the count of steps. */
#define STN_CYCLE_TRACE_PHASES 11
int StnGMRESCycleTraceRead(unsigned long long *out, int blocks, int reset);
#endif

#ifdef __cplusplus
}
#endif

#endif
