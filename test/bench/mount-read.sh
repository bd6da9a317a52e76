#!/usr/bin/env bash
# Sequential read of a 2 GiB image through the mount, page cache dropped:
# cairn mount vs cairn cat vs restic mount vs borg mount, plus cairn's
# warm (chunk cache) and page-cache re-reads.
#   test/bench/mount-read.sh       (as root; data under $BENCH_DIR)
source "$(dirname "$0")/lib.sh"
need restic borg fusermount
build_cairn
cd "$BENCH_DIR"
img=${IMG:-rand.img}
[ -f "$img" ] || data_random "$img" 2048
bytes=$(size_of "$img")
src=$(readlink -f "$img")
backup_all c m x.img "$img"
mkdir -p mnt-c mnt-r mnt-b
cleanup() { "$CAIRN" umount mnt-c 2>/dev/null || true; for m in mnt-r mnt-b; do fusermount -u "$m" 2>/dev/null || true; done; }
trap cleanup EXIT

drop_caches
timed "cairn cat (cold)" "$bytes" "$CAIRN" --store cstore cat host/m x.img

"$CAIRN" --store cstore mount --cache-size 3G mnt-c >/dev/null 2>&1 &
wait_mounted mnt-c 30
f=$(ls -d mnt-c/host/m/latest/)x.img
drop_caches
timed "cairn mount read (cold)" "$bytes" dd if="$f" of=/dev/null bs=1M
echo 1 > /proc/sys/vm/drop_caches 2>/dev/null || true # kernel pages only; cairn's cache stays
timed "cairn mount read (warm cache)" "$bytes" dd if="$f" of=/dev/null bs=1M
timed "cairn mount re-read (page cache)" "$bytes" dd if="$f" of=/dev/null bs=1M
"$CAIRN" umount mnt-c

restic --repo crrepo mount mnt-r >/dev/null 2>&1 &
wait_mounted mnt-r 30
drop_caches
timed "restic mount read (cold)" "$bytes" dd if="mnt-r/snapshots/latest$src" of=/dev/null bs=1M
fusermount -u mnt-r

borg mount cbrepo mnt-b
wait_mounted mnt-b 30
drop_caches
timed "borg mount read (cold)" "$bytes" dd if="mnt-b/a$src" of=/dev/null bs=1M
fusermount -u mnt-b
