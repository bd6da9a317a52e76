#!/usr/bin/env bash
# The mount's memory beyond its cache while browsing many snapshots of a
# large tree. One real backup of TREE (1,000 directories of 1,000
# one-line files), then SNAPS-1 clones of it (test/bench/clonesnap:
# real snapshots written through the store's backup code, same archives,
# one second apart; they verify, and they share every chunk, as
# snapshots of an unchanged tree do). Then, on one mount (--cache-size
# CACHE), "browsing" snapshot i is:
#   - ls -l of the archive's top level (1,000 directories),
#   - ls -l of one directory of 1,000 files, a different one for each
#     snapshot (d(i*20)),
#   - reading 10 of its files, each checked against what mk wrote;
# the daemon's RSS is printed after each snapshot, and its peak at the
# end against CACHE + 64 MiB. Then `echo 2 > drop_caches` (the kernel
# forgets its entries) and the RSS again; then ls -lR of one whole
# snapshot (1M entries looked up), bytes of RSS and of live heap per
# entry (the mount's .stats tree_entries), and drop_caches once more.
#
#   TREE=/var/tmp/cairn-scale/t1m SNAPS=50 CACHE=256M test/bench/scale-browse.sh
#
# The store is kept in $BENCH_DIR/browse (KEEP=0 removes it).
source "$(dirname "$0")/lib.sh"

TREE=$(readlink -f "${TREE:-/var/tmp/cairn-scale/t1m}")
SNAPS=${SNAPS:-50} CACHE=${CACHE:-256M} KEEP=${KEEP:-1}
D=$BENCH_DIR/browse ST=$BENCH_DIR/browse/store MNT=$BENCH_DIR/browse/mnt
build_cairn
(cd "$ROOT" && go build -o "$BENCH_DIR/clonesnap" ./test/bench/clonesnap)
mkdir -p "$D" "$MNT"
if [ ! -f "$D/store.complete" ]; then
  rm -rf "$ST"
  "$CAIRN" --store "$ST" init >/dev/null
  s=$(now)
  "$CAIRN" --store "$ST" backup --id t --no-sync "t.pxar:$TREE" >/dev/null 2>&1
  printf 'backup of %s: %.0f s\n' "$TREE" "$(awk -v s="$s" -v e="$(now)" 'BEGIN { print e - s }')"
  "$BENCH_DIR/clonesnap" -store "$ST" -from host/t -n $((SNAPS - 1))
  touch "$D/store.complete"
fi
mapfile -t snaps < <(ls "$ST/host/t")
echo "${#snaps[@]} snapshots of $TREE"

rss() { awk '/VmRSS/ { printf "%.0f", $2 / 1024 }' "/proc/$pid/status"; }
hwm() { awk '/VmHWM/ { printf "%.0f", $2 / 1024 }' "/proc/$pid/status"; }
stat_of() { jq -r ".$1" "$MNT/.stats"; }
settle() { sleep "${1:-5}"; }

"$CAIRN" --store "$ST" mount --daemon --cache-size "$CACHE" "$MNT" 2>/dev/null
pid=$(pgrep -n -f -- "--cache-size $CACHE $MNT")
trap '"$CAIRN" umount "$MNT" >/dev/null 2>&1 || true' EXIT
echo "mounted (pid $pid), RSS $(rss) MiB"
bad=0
for i in "${!snaps[@]}"; do
  a=$MNT/host/t/${snaps[$i]}/t.pxar
  d=$((i * 20 % 1000))
  sub=$a/$(printf 'd%05d' "$d")
  n=$(ls -l "$a" | grep -c '^d') || true
  m=$(ls -l "$sub" | grep -c '^-') || true
  for f in 0 111 222 333 444 555 666 777 888 999; do
    [ "$(cat "$sub/$(printf 'f%04d' $f)")" = "$d $f" ] || bad=$((bad + 1))
  done
  [ "$n" = 1000 ] && [ "$m" = 1000 ] || { echo "!!! ${snaps[$i]}: $n dirs, $m files" >&2; bad=$((bad + 1)); }
  echo "snapshot $((i + 1)) ${snaps[$i]}: RSS $(rss) MiB (peak $(hwm)), tree_entries $(stat_of tree_entries)"
done
echo "browsed ${#snaps[@]} snapshots: peak RSS $(hwm) MiB against cache $CACHE + 64 MiB; wrong reads: $bad"
echo 2 >/proc/sys/vm/drop_caches
settle 10
echo "after echo 2 > drop_caches (10 s): RSS $(rss) MiB, tree_entries $(stat_of tree_entries)"

before=$(rss) e0=$(stat_of tree_entries)
s=$(now)
ls -lR "$MNT/host/t/${snaps[0]}/t.pxar" | wc -l | sed 's/^/ls -lR lines: /'
e1=$(stat_of tree_entries) after=$(rss)
printf 'ls -lR of one snapshot: %.0f s, RSS %d -> %d MiB (peak %d), tree_entries %d -> %d: %.0f bytes of RSS per entry\n' \
  "$(awk -v s="$s" -v e="$(now)" 'BEGIN { print e - s }')" "$before" "$after" "$(hwm)" "$e0" "$e1" \
  "$(awk -v a="$after" -v b="$before" -v x="$e1" -v y="$e0" 'BEGIN { print (a - b) * 1048576 / (x - y) }')"
echo 2 >/proc/sys/vm/drop_caches
settle 10
echo "after echo 2 > drop_caches (10 s): RSS $(rss) MiB, tree_entries $(stat_of tree_entries)"
"$CAIRN" umount "$MNT"
trap - EXIT
[ "$KEEP" = 1 ] || rm -rf "$D"
[ "$bad" = 0 ]
