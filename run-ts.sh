#!/bin/sh
. scripts/gpu-env.sh || exit 1
timeout 400 sh bench/grayscott_gpu.sh 257 1025 2049 > $OUT/bench.txt 2>&1
cd $OUT && tar czf benchlogs.tgz *.log 2>/dev/null; rm -f *.log
cat $OUT/bench.txt
