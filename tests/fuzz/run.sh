#!/bin/sh
# tests/fuzz/run.sh FUZZER RUNS: runs the front-end fuzzer for RUNS
# executions, seeded from examples/ and tests/errors/ (the corpus it grows
# lives in tests/fuzz/corpus/, ignored by git). Fails on any finding.
set -eu
fuzzer=$1
runs=$2
corpus=tests/fuzz/corpus
mkdir -p "$corpus" tests/fuzz/seeds
cp examples/*.stn tests/errors/*.stn tests/fuzz/seeds/ 2>/dev/null || true
exec "$fuzzer" -runs="$runs" -max_len=4096 -timeout=10 -rss_limit_mb=2048 \
  -dict=tests/fuzz/stn.dict -print_final_stats=1 -artifact_prefix=build/ "$corpus" tests/fuzz/seeds
