#!/usr/bin/env bash
# Many snapshots: makes NGROUPS groups of snapshots and at each count in
# PER (snapshots per group) measures, cold (caches dropped, fresh mount)
# and warm (same command again):
#   - `cairn snapshots` (and --json);
#   - mount ready: `cairn mount --daemon` returning (it returns once the
#     mount answers);
#   - `find` over the whole mount down to the archives (-maxdepth 4:
#     TYPE/ID/TIME/ARCHIVE), its paths counted against the store;
#   - the mount daemon's RSS (VmRSS, VmHWM) after the finds.
# At the end every snapshot is verified (`cairn verify`, exit 0).
# The first REAL snapshots of a group are `cairn backup` runs of a tiny
# tree whose one file changes each time, with distinct --time (~0.1 s
# each here, ~0.4 s on a loaded machine); the rest are clones of the
# group's newest (test/bench/clonesnap: real snapshots written through
# the store's backup code, same archives, one second apart).
# Times are wall seconds; CPU seconds (user+system) of the command, or
# of the mount daemon for the finds, are given beside them.
#
#   NGROUPS=100 PER="10 100" REAL=10 test/bench/scale-snapshots.sh
#
# The store is kept in $BENCH_DIR/snaps (KEEP=0 removes it at the end);
# a later run with a larger PER adds to it.
source "$(dirname "$0")/lib.sh"

GROUPS_N=${NGROUPS:-100}
PER=${PER:-"10 100"}
JOBS=${JOBS:-2}
REAL=${REAL:-10}
KEEP=${KEEP:-1}
D=$BENCH_DIR/snaps ST=$BENCH_DIR/snaps/store MNT=$BENCH_DIR/snaps/mnt
build_cairn
(cd "$ROOT" && go build -o "$BENCH_DIR/clonesnap" ./test/bench/clonesnap)
mkdir -p "$D" "$MNT"
[ -d "$ST" ] || "$CAIRN" --store "$ST" init >/dev/null

# fill_group G N: group host/gG up to N snapshots, one second apart
# (times from 2020-01-01), each of its own tiny tree.
fill_group() {
  local g=$1 n=$2 have i t tree=$D/tree-$1
  have=$(find "$ST/host/g$g" -maxdepth 1 -mindepth 1 -type d -name '20*' 2>/dev/null | wc -l)
  mkdir -p "$tree"
  echo "group $g" >"$tree/README"
  for ((i = have; i < n && i < REAL; i++)); do
    echo "snapshot $i of group $g" >"$tree/n"
    t=$(date -u -d "@$((1577836800 + i))" +%Y-%m-%dT%H:%M:%SZ)
    "$CAIRN" --store "$ST" backup --id "g$g" --no-sync --time "$t" "t.pxar:$tree" >/dev/null 2>&1 ||
      { echo "backup g$g $t failed" >&2; return 1; }
  done
  ((i >= n)) || "$CLONE" -store "$ST" -from "host/g$g" -n $((n - i))
}
export -f fill_group
export CAIRN ST D REAL CLONE=$BENCH_DIR/clonesnap

# secs CMD…: wall seconds of CMD (output discarded) and the CPU seconds
# of the processes it waited for (times), on one line.
secs() {
  local s e t=$D/times.$BASHPID
  s=$(now)
  { "$@" >/dev/null; times; } >"$t"
  e=$(now)
  awk -v s="$s" -v e="$e" 'NR == 2 { gsub(/[ms]/, " "); printf "%.3f %.2f\n", e - s, $1 * 60 + $2 + $3 * 60 + $4 }' "$t"
  rm -f "$t"
}
# dcpu PID: user+system seconds of a process so far.
dcpu() { awk -v t="$(getconf CLK_TCK)" '{ printf "%.2f", ($14 + $15) / t }' "/proc/$1/stat"; }

mount_it() { "$CAIRN" --store "$ST" mount --daemon "$MNT"; }
unmount_it() { "$CAIRN" umount "$MNT" >/dev/null 2>&1 || umount "$MNT"; while mountpoint -q "$MNT"; do sleep 0.1; done; }
mpid() { pgrep -f -n -- "mount --daemon $MNT" || pgrep -f -n -- "$MNT"; }
finds() { find "$MNT" -maxdepth 4 -name .jobs -prune -o -mindepth 4 -print >"$D/find.out"; }
rss() { awk '/VmRSS|VmHWM/ { printf "%s %.1f MiB  ", $1, $2 / 1024 }' "/proc/$1/status"; }

for per in $PER; do
  s=$(now)
  seq 0 $((GROUPS_N - 1)) | xargs -P "$JOBS" -I{} bash -c "fill_group {} $per"
  total=$((GROUPS_N * per))
  printf '== %d snapshots in %d groups (made in %.0f s)\n' "$total" "$GROUPS_N" "$(awk -v s="$s" -v e="$(now)" 'BEGIN { print e - s }')"
  n=$("$CAIRN" --store "$ST" snapshots --json | jq 'length')
  echo "cairn snapshots --json lists $n"
  for round in 1 2 3; do
    drop_caches
    read -r c1 c1c < <(secs "$CAIRN" --store "$ST" snapshots)
    read -r w1 w1c < <(secs "$CAIRN" --store "$ST" snapshots)
    read -r w2 w2c < <(secs "$CAIRN" --store "$ST" snapshots --json)
    drop_caches
    read -r m1 _ < <(secs mount_it)
    pid=$(mpid)
    d0=$(dcpu "$pid")
    read -r f1 _ < <(secs finds)
    d1=$(dcpu "$pid")
    got=$(wc -l <"$D/find.out")
    read -r f2 _ < <(secs finds)
    d2=$(dcpu "$pid")
    r=$(rss "$pid")
    unmount_it
    read -r m2 _ < <(secs mount_it)
    unmount_it
    echo "round $round: snapshots cold ${c1}s (${c1c} CPU-s) warm ${w1}s (${w1c} CPU-s; --json ${w2}s, ${w2c} CPU-s);" \
      "mount ready cold ${m1}s warm ${m2}s; find to the archives cold ${f1}s (daemon $(awk -v a="$d0" -v b="$d1" 'BEGIN { print b - a }') CPU-s)" \
      "warm ${f2}s (daemon $(awk -v a="$d1" -v b="$d2" 'BEGIN { print b - a }') CPU-s), $got paths; mount daemon after the finds: $r"
    [ "$got" = "$total" ] || echo "!!! find saw $got archives, want $total" >&2
  done
done
echo "== verify every snapshot"
s=$(now)
"$CAIRN" --store "$ST" verify >"$D/verify.out" 2>&1 && echo "verify: all $total snapshots ok ($(awk -v s="$s" -v e="$(now)" 'BEGIN { printf "%.0f", e - s }') s)" ||
  { echo "!!! verify failed:" >&2; tail -5 "$D/verify.out" >&2; }
[ "$KEEP" = 1 ] || rm -rf "$D"
