#!/usr/bin/env bash
# `cairn snapshots` (text and --json) of a large store, old binary against
# new, cold (caches dropped before each run) and warm, alternating, ROUNDS
# rounds: wall and CPU seconds (user+system) of each run. The new binary
# keeps its snapshot index (.cairn-snapindex) in the store: its first run
# builds it (ROUNDS >= 2 shows both).
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
      for fmt in text json; do
        [ $mode = cold ] && drop_caches
        printf 'round %d %-4s %-5s %-4s ' "$r" "$([ "$b" = "$OLD" ] && echo old || echo new)" "$mode" "$fmt"
        # shellcheck disable=SC2046
        { time "$b" --store "$STORE" snapshots $([ $fmt = json ] && echo --json) >/dev/null; } 2>&1
      done
    done
  done
done
