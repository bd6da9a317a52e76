#!/usr/bin/env bash
# `cairn snapshots` of a large store, old binary against new, cold
# (caches dropped before each run) and warm, alternating, ROUNDS rounds:
# wall and CPU seconds (user+system) of each run.
#
#   OLD=/tmp/cairn-old STORE=$BENCH_DIR/snaps/store ROUNDS=3 test/bench/scale-list.sh
#
# STORE: e.g. the one test/bench/scale-snapshots.sh keeps.
source "$(dirname "$0")/lib.sh"

OLD=${OLD:-/tmp/cairn-old} STORE=${STORE:-$BENCH_DIR/snaps/store} ROUNDS=${ROUNDS:-3}
[ -x "$OLD" ] || { echo "no old binary at $OLD" >&2; exit 2; }
build_cairn
TIMEFORMAT='%R s wall, %U+%S CPU-s'
for ((r = 1; r <= ROUNDS; r++)); do
  for b in "$OLD" "$CAIRN"; do
    for mode in cold warm; do
      [ $mode = cold ] && drop_caches
      printf 'round %d %-4s %-5s ' "$r" "$([ "$b" = "$OLD" ] && echo old || echo new)" "$mode"
      { time "$b" --store "$STORE" snapshots --json >/dev/null; } 2>&1
    done
  done
done
