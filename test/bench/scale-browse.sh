#!/usr/bin/env bash
# The mount's memory beyond its cache while browsing many snapshots of a
# large tree. One real backup of TREE (1,000 directories of 1,000
# one-line files: test/bench/scale-4m.sh's or scale.sh's), then SNAPS-1 clones of it (test/bench/clonesnap:
# real snapshots written through the store's backup code, same archives,
# one second apart; they verify, and they share every chunk, as
# snapshots of an unchanged tree do). Then, on one mount (--cache-size
# CACHE), "browsing" snapshot i is:
#   - ls -l of the archive's top level (its directories),
#   - ls -l of one of those directories (1,000 files), a different one
#     for each snapshot,
#   - reading 10 of its files, each checked against what mk wrote;
# the daemon's RSS is printed after each snapshot, and its peak at the
# end against CACHE + 64 MiB. Then `echo 2 > drop_caches` (the kernel
# forgets its entries) and the RSS again; then (LSR=1) ls -lR of one
# whole snapshot, sampling every 2 s the entries the kernel holds (the
# mount's .stats tree_entries) and the RSS: bytes of RSS per entry held,
# and drop_caches once more.
#
#   TREE=/var/tmp/cairn-scale/t1m SNAPS=50 CACHE=256M LSR=1 test/bench/scale-browse.sh
#
# The store is kept in $BENCH_DIR/browse (KEEP=0 removes it).
source "$(dirname "$0")/lib.sh"

TREE=$(readlink -f "${TREE:-/var/tmp/cairn-scale/t1m}")
SNAPS=${SNAPS:-50} CACHE=${CACHE:-256M} KEEP=${KEEP:-1} LSR=${LSR:-1}
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
mapfile -t dirs < <(cd "$TREE" && ls -d d*)
files=$(ls "$TREE/${dirs[0]}" | wc -l)
echo "${#snaps[@]} snapshots of $TREE (${#dirs[@]} directories of $files files)"

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
  d=${dirs[$((i * 997 % ${#dirs[@]}))]}
  sub=$a/$d
  n=$(ls -l "$a" | grep -c '^d') || true
  m=$(ls -l "$sub" | grep -c '^-') || true
  for f in $(ls "$TREE/$d" | sed -n '1p;111p;222p;333p;444p;555p;666p;777p;888p;999p'); do
    cmp -s "$sub/$f" "$TREE/$d/$f" || bad=$((bad + 1))
  done
  [ "$n" = "${#dirs[@]}" ] && [ "$m" = "$files" ] || { echo "!!! ${snaps[$i]}: $n dirs, $m files" >&2; bad=$((bad + 1)); }
  echo "snapshot $((i + 1)) ${snaps[$i]}: RSS $(rss) MiB (peak $(hwm)), tree_entries $(stat_of tree_entries)"
done
echo "browsed ${#snaps[@]} snapshots: peak RSS $(hwm) MiB against cache $CACHE + 64 MiB; wrong reads: $bad"
echo 2 >/proc/sys/vm/drop_caches
settle 10
echo "after echo 2 > drop_caches (10 s): RSS $(rss) MiB, tree_entries $(stat_of tree_entries)"

if [ "$LSR" = 1 ]; then
  before=$(rss)
  s=$(now)
  ls -lR "$MNT/host/t/${snaps[0]}/t.pxar" >"$D/lsr.out" &
  lp=$!
  max=0 at=0
  while kill -0 "$lp" 2>/dev/null; do
    e=$(stat_of tree_entries) r=$(rss)
    [ "$e" -gt "$max" ] && max=$e at=$r
    sleep 2
  done
  wait "$lp"
  printf 'ls -lR of one snapshot: %.0f s, %d lines; RSS %d MiB before, peak %d MiB; most entries held %d, at RSS %d MiB: %.0f bytes of RSS per entry held\n' \
    "$(awk -v s="$s" -v e="$(now)" 'BEGIN { print e - s }')" "$(wc -l <"$D/lsr.out")" "$before" "$(hwm)" "$max" "$at" \
    "$(awk -v a="$at" -v b="$before" -v x="$max" 'BEGIN { if (x > 0) print (a - b) * 1048576 / x }')"
  echo 2 >/proc/sys/vm/drop_caches
  settle 10
  echo "after echo 2 > drop_caches (10 s): RSS $(rss) MiB, tree_entries $(stat_of tree_entries)"
fi
"$CAIRN" umount "$MNT"
trap - EXIT
[ "$KEEP" = 1 ] || rm -rf "$D"
[ "$bad" = 0 ]
