#!/usr/bin/env bash
# GC of a store of CHUNKS (default 1,000,000) small chunks, every one
# referenced (10 snapshots, 1.9 references per chunk): phase 1 chunk
# references per second, phase 2 chunk files per second and peak RSS of
# `cairn gc --atime-cutoff 0`, page cache dropped (cold) and not (warm).
# Targets: phase 1 >= 300,000 refs/s, phase 2 >= 200,000 files/s,
# RSS <= 128 MiB.
#
# The store is made once, by jobs/gc's BenchmarkGCBigStore (which also
# measures GC in process with 1% garbage to remove), under
# $BENCH_DIR/gc-store, and kept for later runs: GC removes none of it.
#   test/bench/gc.sh       (as root; data under $BENCH_DIR)
source "$(dirname "$0")/lib.sh"
build_cairn
chunks=${CHUNKS:-1000000}
dir=$BENCH_DIR/gc-store
(cd "$ROOT" && CAIRN_BENCH_GC_DIR=$dir CAIRN_BENCH_GC_CHUNKS=$chunks \
  go test ./jobs/gc -run '^$' -bench 'BenchmarkGCBigStore$' -benchtime 1x | grep -E 'Benchmark|made')
store=$dir/$chunks/store
for mode in cold warm warm; do
  if [ $mode = cold ]; then drop_caches; fi
  /usr/bin/time -o "$BENCH_DIR/gc.rss" -f '%M %e' "$CAIRN" --store "$store" gc --atime-cutoff 0 --json > "$BENCH_DIR/gc.json" 2>>"$BENCH_DIR/gc.log"
  read -r rss wall < "$BENCH_DIR/gc.rss"
  jq -r --arg m "$mode" --arg rss "$rss" --arg wall "$wall" '
    "cairn gc (\($m)): \($wall) s; phase 1: \(.chunk_refs) refs in \(.phase1_seconds * 100 | round / 100) s = \(.chunk_refs / .phase1_seconds | floor) refs/s; phase 2: \(.chunk_files) files in \(.phase2_seconds * 100 | round / 100) s = \(.chunk_files / .phase2_seconds | floor) files/s; peak RSS \($rss | tonumber / 1024 | floor) MiB"' \
    "$BENCH_DIR/gc.json"
done
