#!/usr/bin/env bash
# Tree restore of a backup of Go's tree, page cache dropped before each:
# cairn restore vs restic restore and borg extract, ROUNDS (3) rounds
# alternating the tools. Each restore goes to a new directory of a fresh
# ext4 file system (on a loop device over a file in $BENCH_DIR), made for
# the run: this VM's root ext4 has no journal, and such an ext4 skips
# inodes freed in the last 60 s (300 s while their block is dirty) when
# it allocates new ones (recently_deleted()): after a large rm -rf,
# creating files was 2-3x slower for every tool, and runs swung with it.
#   test/bench/restore-tree.sh      (as root; data under $BENCH_DIR)
source "$(dirname "$0")/lib.sh"
need restic borg mkfs.ext4
build_cairn
cd "$BENCH_DIR"
src=${SRC:-$(go env GOROOT)}
bytes=$(du -sb "$src" | cut -f1)
rm -rf out-t
backup_all t t go.pxar "$src"
loop_ext4 out-t.ext4 out-t 8G
trap 'umount out-t; rm -f out-t.ext4' EXIT
sync; sleep 10 # let the writeback and discards of the setup settle
for i in $(seq "${ROUNDS:-3}"); do
  drop_caches
  timed "cairn restore (tree)" "$bytes" "$CAIRN" --store tstore restore host/t go.pxar out-t/c$i
  drop_caches # --no-sync: the peers do not wait for the disk either
  timed "cairn restore --no-sync (tree)" "$bytes" "$CAIRN" --store tstore restore --no-sync host/t go.pxar out-t/n$i
  drop_caches
  timed "restic restore (tree)" "$bytes" restic --repo trrepo -q restore latest --target out-t/r$i
  drop_caches
  timed "borg extract (tree)" "$bytes" sh -c "mkdir -p out-t/b$i && cd out-t/b$i && borg extract ../../tbrepo::a"
done
