#!/usr/bin/env bash
# The mount over a store of many snapshots, old binary against new,
# alternating, ROUNDS rounds, each on a fresh mount:
#   - mount ready: `cairn mount --daemon` returning (caches dropped);
#   - `find` over the whole mount down to the archives (-maxdepth 4),
#     cold (the same fresh mount, caches dropped before the mount) and
#     warm (again), wall seconds and the daemon's CPU seconds;
#   - the daemon's RSS after the finds, and again 5 s after the kernel
#     dropped its entries (echo 2 > drop_caches: the nodes go);
# and every find's output is compared with the first one's.
# The new binary keeps its snapshot index (.cairn-snapindex) in the
# store: its first round fills it (ROUNDS >= 2 shows both).
#
#   OLD=/tmp/cairn-old STORE=$BENCH_DIR/snaps/store ROUNDS=3 test/bench/scale-find.sh
source "$(dirname "$0")/lib.sh"

OLD=${OLD:-/tmp/cairn-old} STORE=${STORE:-$BENCH_DIR/snaps/store} ROUNDS=${ROUNDS:-3}
MNT=${MNT:-$BENCH_DIR/snaps/mnt-find.$$} OUT=$BENCH_DIR/snaps/find-out.$$
[ -x "$OLD" ] || { echo "no old binary at $OLD" >&2; exit 2; }
build_cairn
mkdir -p "$MNT"
dcpu() { awk -v t="$(getconf CLK_TCK)" '{ printf "%.2f", ($14 + $15) / t }' "/proc/$1/stat"; }
rss() { awk '/VmRSS|VmHWM/ { printf "%s %.1f MiB ", $1, $2 / 1024 }' "/proc/$1/status"; }
finds() { find "$MNT" -maxdepth 4 -name .jobs -prune -o -mindepth 4 -print >"$OUT.$1"; }
unmount_it() { "$1" umount "$MNT" >/dev/null 2>&1 || umount "$MNT"; while mountpoint -q "$MNT"; do sleep 0.1; done; }
span() { awk -v s="$1" -v e="$2" 'BEGIN { printf "%.3f", e - s }'; }
for ((r = 1; r <= ROUNDS; r++)); do
  for b in "$OLD" "$CAIRN"; do
    name=$([ "$b" = "$OLD" ] && echo old || echo new)
    drop_caches
    s=$(now)
    "$b" --store "$STORE" mount --daemon "$MNT"
    m=$(now)
    pid=$(pgrep -f -n -- "mount --daemon $MNT")
    d0=$(dcpu "$pid")
    finds cold
    c=$(now)
    d1=$(dcpu "$pid")
    finds warm
    w=$(now)
    d2=$(dcpu "$pid")
    r1=$(rss "$pid")
    echo 2 >/proc/sys/vm/drop_caches
    sleep 5
    echo "round $r $name: mount ready $(span "$s" "$m") s; find cold $(span "$m" "$c") s (daemon $(span "$d0" "$d1") CPU-s)," \
      "warm $(span "$c" "$w") s (daemon $(span "$d1" "$d2") CPU-s), $(wc -l <"$OUT.cold") paths; daemon after the finds $r1, after echo 2 $(rss "$pid")"
    unmount_it "$b"
    [ -f "$OUT.first" ] || cp "$OUT.cold" "$OUT.first"
    cmp -s "$OUT.first" "$OUT.cold" && cmp -s "$OUT.first" "$OUT.warm" || echo "!!! round $r $name: find output differs" >&2
  done
done
rm -f "$OUT".*
rmdir "$MNT"
