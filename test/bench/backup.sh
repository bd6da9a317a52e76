#!/usr/bin/env bash
# Image backup throughput: cairn vs borg and restic, first and second run,
# on incompressible data and on a sparse ext4 image of Go's tree.
#   test/bench/backup.sh            (as root; data under $BENCH_DIR)
source "$(dirname "$0")/lib.sh"
need restic borg mke2fs
build_cairn
cd "$BENCH_DIR"
data_random rand.img 2048
data_ext4 ext4.img
for img in rand.img ext4.img; do
  bytes=$(size_of $img)
  rm -rf cstore rrepo brepo
  "$CAIRN" --store cstore init >/dev/null
  restic init --repo rrepo -q >/dev/null
  borg init -e none brepo
  cat $img >/dev/null # source in the page cache for every tool alike
  for run in first second; do
    timed "cairn backup $img ($run)" "$bytes" "$CAIRN" --store cstore backup --id b --no-sync x.img:$img
    timed "borg create $img ($run)" "$bytes" borg create brepo::$run $img
    timed "restic backup $img ($run)" "$bytes" restic --repo rrepo -q backup $img
    sleep 1
  done
  /usr/bin/time -f "cairn peak RSS %M KiB" "$CAIRN" --store cstore backup --id b --no-sync x.img:$img >/dev/null
done
