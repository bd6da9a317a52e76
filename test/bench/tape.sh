#!/usr/bin/env bash
# Tape export and restore throughput (issue 6), page cache dropped:
#  - the raw read rate of the store's chunk files (cat, in index and in
#    inode order): the ceiling for export;
#  - `cairn tape export` with 1, 2, 4 and 8 worker threads: MB/s and the
#    tape writer's idle share (high: reading is the bottleneck);
#  - the chunk insert rate (tar of the chunk files into an empty store,
#    then sync) and `cairn tape restore` (+ sync) into the same empty store.
# The store holds SIZE_MB (default 1024) of incompressible data in four
# snapshots of 4 MiB chunks. The virtual drive is on TAPE_DIR (default a
# tmpfs: a tape is another device than the store's disk; set TAPE_DIR to a
# directory on the store's disk to see the two compete).
# Knobs: SIZE_MB, TAPE_DIR, ORDER (auto|inode|index), THREADS ("1 2 4 8"),
# STEPS ("raw export restore"), REPEAT (insert/restore pairs, 3), DST
# (restore target store; /dev/shm/... takes the disk out of the picture).
#   test/bench/tape.sh            (as root; data under $BENCH_DIR)
BENCH_DIR=${BENCH_DIR:-/var/tmp/cairn-bench}
CAIRN=${CAIRN:-$BENCH_DIR/cairn-tape}
source "$(dirname "$0")/lib.sh"
need jq xxd tar
build_cairn
SIZE_MB=${SIZE_MB:-1024}
TAPE_DIR=${TAPE_DIR:-/dev/shm/cairn-bench-tape}
ORDER=${ORDER:-auto}
THREADS=${THREADS:-1 2 4 8}
STEPS=${STEPS:-raw export restore} # a subset skips the others
dst=${DST:-tape-dst}                 # restore target (e.g. a store on /dev/shm)
cd "$BENCH_DIR"
src=tape-src

if [ ! -f $src/.bench-$SIZE_MB ]; then
  rm -rf $src
  "$CAIRN" --store $src init >/dev/null
  for i in 1 2 3 4; do
    data_random tape-r$i.img $((SIZE_MB / 4))
    "$CAIRN" --store $src backup --type vm --id $i --no-sync x.img:tape-r$i.img >/dev/null
    rm -f tape-r$i.img
  done
  sync
  touch $src/.bench-$SIZE_MB
fi
[ -d $dst/.chunks ] || "$CAIRN" --store $dst init >/dev/null

# The chunk files of every index, each once, in index order and by inode.
find $src -name '*.fidx' | sort | while read -r f; do tail -c +4097 "$f" | xxd -p -c32; done |
  awk -v s=$src '!seen[$0]++ { print s "/.chunks/" substr($0, 1, 4) "/" $0 }' > tape-chunks.index
xargs stat -c '%i %n' < tape-chunks.index | sort -n | cut -d' ' -f2 > tape-chunks.inode
bytes=$(xargs stat -c %s < tape-chunks.index | awk '{ s += $1 } END { print s }')
echo "store: $(wc -l < tape-chunks.index) chunks, $bytes bytes; drive: $TAPE_DIR; chunk order: $ORDER"

step() { [[ " $STEPS " == *" $1 "* ]]; }

if step raw; then
  for order in index inode; do
    drop_caches
    timed "raw read, cat ($order order)" "$bytes" sh -c "xargs cat < tape-chunks.$order"
  done
fi

export_once() { # export_once THREADS
  rm -rf "$TAPE_DIR"
  mkdir -p "$TAPE_DIR"
  drop_caches
  local s e
  s=$(now)
  "$CAIRN" --store $src tape export --drive "$TAPE_DIR" --pool bench --tape-size 8G \
    --worker-threads "$1" --chunk-order "$ORDER" --json > tape-export.json || true
  e=$(now)
  jq -r --arg wall "$(rate "$bytes" "$s" "$e")" --arg n "$1" \
    '"export, \($n) worker thread(s)      \($wall) MB/s wall, \(.result.mb_per_s | . * 10 | round / 10) MB/s job, writer idle \(.result.writer_idle_share * 100 | round)%, \(.result.chunks) chunks, \(.state), order \(.result.chunk_order)"' tape-export.json
}
if step export || step restore; then
  for n in $THREADS; do export_once $n; done
fi
step restore || { rm -rf "$TAPE_DIR"; exit 0; }

# Restore: the tape is the last export's (all chunks); the target starts
# empty. Insert baseline and restore alternate REPEAT times (the disk is
# shared: compare the pairs).
reset_dst() { find $dst/.chunks -type f -delete; rm -rf $dst/vm; sync; }
insert_once() {
  xargs cat < tape-chunks.index > /dev/null # source in the page cache
  reset_dst
  local s e
  s=$(now)
  sed "s|^$src/||" tape-chunks.index | tar -C $src -cf - -T - | tar -C $dst -xf -
  sync
  e=$(now)
  printf '%-34s %8.2f s %10s MB/s\n' "chunk insert (tar + sync)" "$(awk -v s="$s" -v e="$e" 'BEGIN{print e-s}')" "$(rate "$bytes" "$s" "$e")"
}
restore_once() { # restore_once THREADS
  reset_dst
  drop_caches
  local s e
  s=$(now)
  "$CAIRN" --store $dst tape restore --drive "$TAPE_DIR" --worker-threads "$1" --json > tape-restore.json || true
  sync
  e=$(now)
  jq -r --arg wall "$(rate "$bytes" "$s" "$e")" --arg n "$1" \
    '"restore, \($n) worker thread(s)     \($wall) MB/s wall (+sync), \(.result.mb_per_s | . * 10 | round / 10) MB/s job, \(.result.chunks) chunks, \(.state)"' tape-restore.json
}
for ((r = 0; r < ${REPEAT:-3}; r++)); do
  insert_once
  restore_once 4
done
restore_once 1
"$CAIRN" --store $dst verify >/dev/null && echo "restored store verifies"
rm -rf "$TAPE_DIR"
