#!/usr/bin/env bash
# Verification of the same data, page cache dropped: cairn verify (index
# and inode order) vs restic check --read-data vs borg check --verify-data.
#   test/bench/verify.sh       (as root; data under $BENCH_DIR)
source "$(dirname "$0")/lib.sh"
need restic borg
build_cairn
cd "$BENCH_DIR"
img=${IMG:-rand.img}
[ -f "$img" ] || data_random "$img" 2048
bytes=$(size_of "$img")
backup_all v v x.img "$img"
for order in index inode; do
  drop_caches
  timed "cairn verify ($order)" "$bytes" "$CAIRN" --store vstore verify --chunk-order $order
done
drop_caches
timed "restic check --read-data" "$bytes" restic --repo vrrepo -q check --read-data
drop_caches
timed "borg check --verify-data" "$bytes" borg check --verify-data vbrepo
