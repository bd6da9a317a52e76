#!/usr/bin/env bash
# An image copied out of the mount: a 1 GiB image (SIZE_MB) of which
# every fourth 4 MiB chunk holds random data and the rest is zeros,
# backed up once, then for OLD (a cairn binary, e.g. a build of main;
# optional) and the build of this tree, each on a fresh mount with the
# page cache dropped: `cp --sparse=auto` of the image to $BENCH_DIR
# (wall time, st_blocks and disk use of the copy, checked with cmp),
# and `cairn restore` of it for comparison.
#
#   OLD=/tmp/cairn-old test/bench/sparse.sh
source "$(dirname "$0")/lib.sh"

SIZE_MB=${SIZE_MB:-1024} OLD=${OLD:-} KEEP=${KEEP:-1}
D=$BENCH_DIR/sparse ST=$BENCH_DIR/sparse/store MNT=$BENCH_DIR/sparse/mnt
build_cairn
mkdir -p "$D" "$MNT"

if [ ! -f "$D/store.$SIZE_MB.complete" ]; then
  rm -rf "$ST" "$D/disk.raw"
  truncate -s "${SIZE_MB}M" "$D/disk.raw"
  for ((i = 0; i < SIZE_MB / 4; i += 4)); do
    head -c 4M /dev/urandom | dd of="$D/disk.raw" bs=4M seek="$i" conv=notrunc status=none
  done
  "$CAIRN" --store "$ST" init >/dev/null
  "$CAIRN" --store "$ST" backup --type vm --id sparse --no-sync "disk.img:$D/disk.raw" >/dev/null 2>&1
  rm -f "$D"/store.*.complete
  touch "$D/store.$SIZE_MB.complete"
fi
snap=vm/sparse/$(ls "$ST/vm/sparse")
secs() { awk -v s="$1" -v e="$2" 'BEGIN { printf "%.2f", e - s }'; }
copied() { printf 'st_blocks %8s (%5s MiB on disk)' "$(stat -c %b "$1")" "$(du -m "$1" | cut -f1)"; }

run() {
  local bin=$1 label=$2 pid s e
  "$bin" --store "$ST" mount "$MNT" >"$D/log.$label" 2>&1 &
  pid=$!
  wait_mounted "$MNT" 60
  printf '%-4s mount shows      st_blocks %8s of a %s MiB image\n' "$label" "$(stat -c %b "$MNT/$snap/disk.img")" "$SIZE_MB"
  rm -f "$D/copy" && drop_caches
  s=$(now)
  cp --sparse=auto "$MNT/$snap/disk.img" "$D/copy"
  sync "$D/copy"
  e=$(now)
  printf '%-4s cp --sparse=auto %7.2f s  %s\n' "$label" "$(secs "$s" "$e")" "$(copied "$D/copy")"
  cmp "$D/copy" "$D/disk.raw"
  kill -INT "$pid" # the daemon unmounts and exits
  wait "$pid" || true
  rm -f "$D/copy"
}

[ -z "$OLD" ] || run "$OLD" old
run "$CAIRN" new
rm -f "$D/restored" && drop_caches
s=$(now)
"$CAIRN" --store "$ST" restore "$snap" disk.img "$D/restored" >/dev/null 2>&1
e=$(now)
printf '     cairn restore    %7.2f s  %s\n' "$(secs "$s" "$e")" "$(copied "$D/restored")"
rm -f "$D/restored"
[ "$KEEP" = 1 ] || rm -rf "$D"
