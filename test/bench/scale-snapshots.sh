#!/usr/bin/env bash
# Many snapshots: makes NGROUPS groups of real snapshots (each a `cairn
# backup` of a tiny tree whose one file changes each time, with distinct
# --time), and at each count in PER (snapshots per group) measures, cold
# (caches dropped, fresh mount) and warm (same command again):
#   - `cairn snapshots` (and --json);
#   - mount ready: `cairn mount --daemon` returning (it returns once the
#     mount answers);
#   - `find` over the whole mount down to the archives (-maxdepth 4:
#     TYPE/ID/TIME/ARCHIVE), its paths counted against the store;
#   - the mount daemon's RSS (VmRSS, VmHWM) after the finds.
# At the end every snapshot is verified (`cairn verify`, exit 0).
#
#   NGROUPS=100 PER="10 100" test/bench/scale-snapshots.sh
#
# The store is kept in $BENCH_DIR/snaps (KEEP=0 removes it at the end);
# a later run with a larger PER adds to it.
source "$(dirname "$0")/lib.sh"

GROUPS_N=${NGROUPS:-100}
PER=${PER:-"10 100"}
JOBS=${JOBS:-2}
KEEP=${KEEP:-1}
D=$BENCH_DIR/snaps ST=$BENCH_DIR/snaps/store MNT=$BENCH_DIR/snaps/mnt
build_cairn
mkdir -p "$D" "$MNT"
[ -d "$ST" ] || "$CAIRN" --store "$ST" init >/dev/null

# fill_group G N: group host/gG up to N snapshots, one second apart
# (times from 2020-01-01), each of its own tiny tree.
fill_group() {
  local g=$1 n=$2 have i t tree=$D/tree-$1
  have=$(find "$ST/host/g$g" -maxdepth 1 -mindepth 1 -type d -name '20*' 2>/dev/null | wc -l)
  mkdir -p "$tree"
  echo "group $g" >"$tree/README"
  for ((i = have; i < n; i++)); do
    echo "snapshot $i of group $g" >"$tree/n"
    t=$(date -u -d "@$((1577836800 + i))" +%Y-%m-%dT%H:%M:%SZ)
    "$CAIRN" --store "$ST" backup --id "g$g" --no-sync --time "$t" "t.pxar:$tree" >/dev/null 2>&1 ||
      { echo "backup g$g $t failed" >&2; return 1; }
  done
}
export -f fill_group
export CAIRN ST D

# secs CMD…: wall seconds of CMD (output discarded).
secs() {
  local s e
  s=$(now); "$@" >/dev/null; e=$(now)
  awk -v s="$s" -v e="$e" 'BEGIN { printf "%.3f", e - s }'
}

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
    c1=$(secs "$CAIRN" --store "$ST" snapshots)
    w1=$(secs "$CAIRN" --store "$ST" snapshots)
    w2=$(secs "$CAIRN" --store "$ST" snapshots --json)
    drop_caches
    m1=$(secs mount_it)
    pid=$(mpid)
    f1=$(secs finds)
    got=$(wc -l <"$D/find.out")
    f2=$(secs finds)
    r=$(rss "$pid")
    unmount_it
    m2=$(secs mount_it)
    unmount_it
    echo "round $round: snapshots cold ${c1}s warm ${w1}s (--json ${w2}s); mount ready cold ${m1}s warm ${m2}s;" \
      "find to the archives cold ${f1}s warm ${f2}s ($got paths); mount daemon after finds: $r"
    [ "$got" = "$total" ] || echo "!!! find saw $got archives, want $total" >&2
  done
done
echo "== verify every snapshot"
s=$(now)
"$CAIRN" --store "$ST" verify >"$D/verify.out" 2>&1 && echo "verify: all $total snapshots ok ($(awk -v s="$s" -v e="$(now)" 'BEGIN { printf "%.0f", e - s }') s)" ||
  { echo "!!! verify failed:" >&2; tail -5 "$D/verify.out" >&2; }
[ "$KEEP" = 1 ] || rm -rf "$D"
