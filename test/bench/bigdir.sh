#!/usr/bin/env bash
# Memory and time on one huge directory: N empty files (default
# 1,000,000) in one directory of a tmpfs, backed up twice (the second
# time with one file changed), then for OLD (a cairn binary, e.g. a build
# of main; optional) and the build of this tree, each step on a fresh
# mount with the page cache dropped:
#   - `ls -f | wc -l` through the mount: wall time, mount daemon peak RSS
#     (VmHWM of /proc/PID/status);
#   - `ls -l >/dev/null` through the mount: the same;
#   - `cairn ls SNAPSHOT ARCHIVE` (the root, N lines): peak RSS
#     (/usr/bin/time -v);
#   - `cairn diff` of the two snapshots: peak RSS.
#
#   OLD=/tmp/cairn-old N=1000000 test/bench/bigdir.sh
#
# CACHE=64M passes --cache-size to the mount and to cairn ls and diff
# (default: each command's own default); STEPS="lsf ls diff" leaves out
# the slow ls -l.
#
# The tree and the store are kept in $BENCH_DIR/bigdir (KEEP=0 removes
# them).
source "$(dirname "$0")/lib.sh"

N=${N:-1000000} OLD=${OLD:-} KEEP=${KEEP:-1} CACHE=${CACHE:-} STEPS=${STEPS:-"lsf lsl ls diff"}
cache=()
[ -z "$CACHE" ] || cache=(--cache-size "$CACHE")
D=$BENCH_DIR/bigdir ST=$BENCH_DIR/bigdir/store MNT=$BENCH_DIR/bigdir/mnt SRC=$BENCH_DIR/bigdir/src
build_cairn
mkdir -p "$D" "$MNT" "$SRC"

if [ ! -f "$D/store.$N.complete" ]; then
  mountpoint -q "$SRC" || mount -t tmpfs -o size=2G,nr_inodes=0 tmpfs "$SRC"
  rm -rf "$ST" "${SRC:?}"/*
  mkdir "$SRC/big"
  (cd "$SRC/big" && seq -f 'f%07.0f' 1 "$N" | xargs touch)
  "$CAIRN" --store "$ST" init >/dev/null
  "$CAIRN" --store "$ST" backup --id big --no-sync --time "$(date -u -d '-1 hour' +%FT%TZ)" "big.pxar:$SRC/big" >/dev/null 2>&1
  echo changed >"$SRC/big/$(printf 'f%07d' $((N / 2)))"
  "$CAIRN" --store "$ST" backup --id big --no-sync "big.pxar:$SRC/big" >/dev/null 2>&1
  umount "$SRC"
  rm -f "$D"/store.*.complete
  touch "$D/store.$N.complete"
fi
mapfile -t snaps < <(ls "$ST/host/big")
S1=host/big/${snaps[0]} S2=host/big/${snaps[1]}

kib() { awk -v k="$2" '$1 == k":" { printf "%d", $2 / 1024 }' "/proc/$1/status"; }
secs() { awk -v s="$1" -v e="$2" 'BEGIN { printf "%.2f", e - s }'; }

# mounted BIN LABEL STEP: one step through a fresh mount of BIN.
mounted() {
  local bin=$1 label=$2 step=$3 pid s e out
  "$bin" --store "$ST" mount "${cache[@]}" "$MNT" >"$D/log.$label" 2>&1 &
  pid=$!
  wait_mounted "$MNT" 60
  drop_caches
  s=$(now)
  case $step in
    lsf) out=$(ls -f "$MNT/$S1/big.pxar" | wc -l) ;;
    lsl) out=$(ls -l "$MNT/$S1/big.pxar" | wc -l) ;;
  esac
  e=$(now)
  printf '%-4s %-16s %7.2f s  daemon peak RSS %5s MiB  (%s lines)\n' "$label" "mount: ls ${step#ls}" "$(secs "$s" "$e")" "$(kib "$pid" VmHWM)" "$out"
  kill -INT "$pid" # the daemon unmounts and exits
  wait "$pid" || true
}

# peak BIN LABEL NAME ARGS...: a command's wall time and peak RSS.
peak() {
  local bin=$1 label=$2 name=$3 s e lines
  shift 3
  s=$(now)
  lines=$(/usr/bin/time -v -o "$D/time.out" "$bin" --store "$ST" "$@" 2>/dev/null | wc -l)
  e=$(now)
  printf '%-4s %-16s %7.2f s  peak RSS %5s MiB  (%s lines)\n' "$label" "$name" "$(secs "$s" "$e")" \
    "$(awk '/Maximum resident/ { printf "%d", $6 / 1024 }' "$D/time.out")" "$lines"
}

run() {
  local bin=$1 label=$2 step
  for step in $STEPS; do
    case $step in
      lsf | lsl) mounted "$bin" "$label" "$step" ;;
      ls) drop_caches && peak "$bin" "$label" "cairn ls" ls "${cache[@]}" "$S1" big.pxar ;;
      diff) drop_caches && peak "$bin" "$label" "cairn diff" diff "${cache[@]}" "$S1" "$S2" ;;
    esac
  done
}

echo "one directory of $N empty files, two snapshots (one file changed); cache ${CACHE:-default}"
[ -z "$OLD" ] || run "$OLD" old
run "$CAIRN" new
[ "$KEEP" = 1 ] || rm -rf "$D"
