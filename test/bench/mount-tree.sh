#!/usr/bin/env bash
# A directory tree through the mount, page cache dropped and fresh mounts:
# `tar cf - .` and `find | wc -l` of a backup of Go's tree, cairn vs
# restic and borg.
#   test/bench/mount-tree.sh       (as root; data under $BENCH_DIR)
source "$(dirname "$0")/lib.sh"
need restic borg fusermount
build_cairn
cd "$BENCH_DIR"
src=${SRC:-$(go env GOROOT)}
bytes=$(du -sb "$src" | cut -f1)
rm -rf out-*
backup_all c t go.pxar "$src"
mkdir -p mnt-c mnt-r mnt-b
cleanup() { "$CAIRN" umount mnt-c 2>/dev/null || true; for m in mnt-r mnt-b; do fusermount -u "$m" 2>/dev/null || true; done; }
trap cleanup EXIT

tree_bench() { # tree_bench LABEL DIR
  drop_caches
  timed "$1 find | wc -l" "$bytes" sh -c "cd '$2' && find . | wc -l"
}
tar_bench() {
  drop_caches
  timed "$1 tar cf - ." "$bytes" sh -c "cd '$2' && tar cf - . | wc -c"
}

"$CAIRN" --store cstore mount mnt-c 2>/dev/null &
wait_mounted mnt-c 30
tar_bench "cairn mount" "mnt-c/host/t/latest/go.pxar"
"$CAIRN" umount mnt-c; sleep 1
"$CAIRN" --store cstore mount mnt-c 2>/dev/null &
wait_mounted mnt-c 30
tree_bench "cairn mount" "mnt-c/host/t/latest/go.pxar"
"$CAIRN" umount mnt-c

restic --repo crrepo mount mnt-r >/dev/null 2>&1 &
wait_mounted mnt-r 30
tar_bench "restic mount" "mnt-r/snapshots/latest$src"
fusermount -u mnt-r; sleep 1
restic --repo crrepo mount mnt-r >/dev/null 2>&1 &
wait_mounted mnt-r 30
tree_bench "restic mount" "mnt-r/snapshots/latest$src"
fusermount -u mnt-r

borg mount cbrepo mnt-b
wait_mounted mnt-b 30
tar_bench "borg mount" "mnt-b/a$src"
fusermount -u mnt-b; sleep 1
borg mount cbrepo mnt-b
wait_mounted mnt-b 30
tree_bench "borg mount" "mnt-b/a$src"
fusermount -u mnt-b

# Tree restore against restic and borg: test/bench/restore-tree.sh
