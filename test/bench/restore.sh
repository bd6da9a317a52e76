#!/usr/bin/env bash
# Image restore of a sparse 2 GiB ext4 image, page cache dropped: cairn
# restore with 1 and N threads vs restic restore, borg extract --sparse
# and casync extract, ROUNDS (2) rounds.
#   test/bench/restore.sh       (as root; data under $BENCH_DIR)
source "$(dirname "$0")/lib.sh"
need restic borg casync
build_cairn
cd "$BENCH_DIR"
img=${IMG:-ext4.img}
data_ext4 "$img"
bytes=$(size_of "$img")
src=$(readlink -f "$img")
rm -rf castore out.*
backup_all r r x.img "$img"
casync make --store=castore out.caibx "$src" >/dev/null
sync; sleep 10 # let the writeback and discards of the setup settle
# ROUNDS (2) rounds alternating the tools. cairn waits for the data to
# reach the disk before it reports completion; the peers do not, which
# --no-sync matches.
for i in $(seq "${ROUNDS:-2}"); do
  for t in 1 $(nproc); do
    rm -f out.c; drop_caches
    timed "cairn restore --threads $t" "$bytes" "$CAIRN" --store rstore restore --threads $t host/r x.img out.c
    rm -f out.c; drop_caches
    timed "cairn restore --threads $t --no-sync" "$bytes" "$CAIRN" --store rstore restore --threads $t --no-sync host/r x.img out.c
  done
  rm -rf out.r; drop_caches
  timed "restic restore" "$bytes" restic --repo rrrepo -q restore latest --target out.r
  rm -rf out.b; mkdir out.b; drop_caches
  timed "borg extract --sparse" "$bytes" sh -c "cd out.b && borg extract --sparse ../rbrepo::a"
  rm -f out.ca; drop_caches
  timed "casync extract" "$bytes" casync extract --store=castore out.caibx out.ca
done
