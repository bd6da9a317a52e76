#!/usr/bin/env bash
# Encrypted vs plain, side by side on the same data (issue 18's target:
# encrypted at least 85% of plain): backup, cat, restore and a read
# through the mount, on incompressible data and on a sparse ext4 image of
# Go's tree, ROUNDS (3) rounds alternating plain and encrypted.
#   test/bench/crypt.sh             (as root; data under $BENCH_DIR)
source "$(dirname "$0")/lib.sh"
need mke2fs mountpoint
build_cairn
cd "$BENCH_DIR"
data_random rand.img "${RAND_MB:-1024}"
data_ext4 ext4.img
rm -f crypt.key && "$CAIRN" key create --kdf none crypt.key >/dev/null
key=(--keyfile "$(readlink -f crypt.key)")
for img in rand.img ext4.img; do
  bytes=$(size_of $img)
  cat $img >/dev/null # the source in the page cache for both alike
  for i in $(seq "${ROUNDS:-3}"); do
    for mode in plain encrypted; do
      k=(); [ $mode = encrypted ] && k=("${key[@]}")
      rm -rf "cs.$mode" out.img; "$CAIRN" --store "cs.$mode" init >/dev/null
      timed "backup $img $mode" "$bytes" "$CAIRN" --store "cs.$mode" backup --id b --no-sync "${k[@]}" x.img:$img
      drop_caches
      timed "cat $img $mode" "$bytes" "$CAIRN" --store "cs.$mode" cat host/b x.img "${k[@]}"
      drop_caches
      timed "restore $img $mode" "$bytes" "$CAIRN" --store "cs.$mode" restore --no-sync host/b x.img out.img "${k[@]}"
      rm -f out.img; mkdir -p mnt; drop_caches
      "$CAIRN" --store "cs.$mode" mount --daemon "${k[@]}" mnt 2>/dev/null
      wait_mounted mnt 30
      timed "mount read $img $mode" "$bytes" sh -c 'cat mnt/host/b/2*/x.img' # not latest too
      "$CAIRN" umount mnt
    done
  done
done
