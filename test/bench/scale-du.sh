#!/usr/bin/env bash
# What `cairn du` and `cairn prune --dry-run` cost on many snapshots:
# test/bench/dugen writes NGROUPS groups of PER image snapshots (8 chunks
# of 64 KiB each, 7 from the group's pool, 1 of its own) through the
# store's backup code, then each command runs three times (warm) and
# /usr/bin/time gives its wall time, CPU and peak RSS.
#
#   NGROUPS=100 PER=100 test/bench/scale-du.sh
source "$(dirname "$0")/lib.sh"

GROUPS_N=${NGROUPS:-100}
PER=${PER:-100}
ST=$BENCH_DIR/du/store
build_cairn
(cd "$ROOT" && go build -o "$BENCH_DIR/dugen" ./test/bench/dugen)
if [ ! -d "$ST" ]; then
  mkdir -p "$(dirname "$ST")"
  "$CAIRN" --store "$ST" init -q
  /usr/bin/time -f "dugen: %e s" "$BENCH_DIR/dugen" -store "$ST" -groups "$GROUPS_N" -per "$PER"
fi
for cmd in "du" "du --json" "snapshots" "prune --all --keep-last $((PER / 2)) --dry-run -q"; do
  for _ in 1 2 3; do
    # shellcheck disable=SC2086
    /usr/bin/time -f "$cmd: %e s wall, %U s user, %S s sys, %M KiB peak RSS" "$CAIRN" --store "$ST" $cmd >/dev/null
  done
done
"$CAIRN" --store "$ST" du | tail -1
