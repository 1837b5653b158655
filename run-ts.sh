#!/bin/sh
. scripts/gpu-env.sh || exit 1
command -v gnuplot > $OUT/gnuplot.txt 2>&1
timeout 300 sh bench/grayscott_gpu.sh 257 1025 2049 > $OUT/bench.txt 2>&1
B=build/bench-grayscott
timeout 200 $B/grayscott -da_grid_x 512 -da_grid_y 512 -ts_type arkimex -ts_dt 1 -ts_adapt_type basic -ts_max_time 2000 -stn_output_series $OUT/series -stn_output_dt 500 -log_view > $OUT/pattern.log 2>&1; echo "pattern rc $?" >> $OUT/pattern.log
cd $OUT && tar czf series.tgz series && rm -rf series; tar czf benchlogs.tgz *.log 2>/dev/null; rm -f ours.*.log ex5*.log
cat $OUT/bench.txt; grep -E "integrated|failed|saved|rc |^TSStep" $OUT/pattern.log
