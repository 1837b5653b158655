#!/bin/sh
# tests/fuzz/run.sh FUZZER RUNS: runs a fuzzer (build/fuzz-frontend or
# build/fuzz-pipeline) for RUNS executions. It first replays every saved
# finding in tests/fuzz/regress/ (each once, slower than 2 s counts as a
# failure: they took seconds or crashed before their fix), then fuzzes from
# the seeds (the .stn files of examples/, tests/errors/, tests/solve/,
# tests/mms/ and tests/fuzz/regress/) and the corpus it grows in
# tests/fuzz/corpus-NAME/ (ignored by git).
# FUZZ_TIMEOUT (default 10) is the limit in seconds per input; make
# fuzz-long sets 1. FUZZ_MAX_LEN (default 4096) is the longest input tried.
# Fails on any finding; the input is left in build/.
set -eu
fuzzer=$1
runs=$2
name=$(basename "$fuzzer" | sed 's/^fuzz-//')
corpus=tests/fuzz/corpus-$name
[ "$name" = frontend ] && corpus=tests/fuzz/corpus
mkdir -p "$corpus" tests/fuzz/seeds tests/fuzz/regress build
cp examples/*.stn tests/errors/*.stn tests/solve/*.stn tests/mms/*.stn tests/fuzz/seeds/ 2>/dev/null || true
set -- tests/fuzz/regress/*
if [ -f "$1" ]; then
  "$fuzzer" -timeout=2 -rss_limit_mb=2048 -artifact_prefix=build/ "$@"
fi
exec "$fuzzer" -runs="$runs" -max_len="${FUZZ_MAX_LEN:-4096}" -timeout="${FUZZ_TIMEOUT:-10}" -rss_limit_mb=2048 \
  -dict=tests/fuzz/stn.dict -print_final_stats=1 -artifact_prefix=build/ "$corpus" tests/fuzz/seeds tests/fuzz/regress
