#!/usr/bin/env bash
# The floor of a cold image read through the mount, side by side with
# cairn: a trivial go-fuse server of zeros (test/bench/zerofs: the kernel's
# page fill, the copy through /dev/fuse and go-fuse's request loop, with
# cairn's mount options) against cairn reading the sparse 2 GiB ext4
# image (lib.sh data_ext4) through its mount, each cold (page cache
# dropped, fresh mount), plus the cost of 2 GiB of fresh pages on this
# machine (a tmpfs file written) for reference. OLD=path adds an older
# cairn binary to each round (before/after).
#   test/bench/mount-floor.sh     (as root; ROUNDS=3, BENCH_DIR, OLD)
# Per line: wall, MB/s, the daemon's CPU seconds (utime+stime of the
# mount process), the reader's (dd) system CPU seconds, and for cairn the
# buffers it took new (.stats buffers_new: memory touched for the first
# time) and its peak RSS.
source "$(dirname "$0")/lib.sh"
[ "$(id -u)" = 0 ] || { echo "mount-floor.sh needs root (drop_caches)" >&2; exit 2; }
ROUNDS=${ROUNDS:-3}
build_cairn
(cd "$ROOT" && go build -o "$BENCH_DIR/zerofs" ./test/bench/zerofs)
cd "$BENCH_DIR"
data_ext4 ext4.img
bytes=$(size_of ext4.img)
if [ ! -d floor-store ]; then
  "$CAIRN" --store floor-store init >/dev/null
  "$CAIRN" --store floor-store backup --id i --no-sync "x.img:$(readlink -f ext4.img)" >/dev/null
fi
MNT=$BENCH_DIR/floor-mnt
mkdir -p "$MNT"
cleanup() {
  mountpoint -q "$MNT/.jobs" 2>/dev/null && fusermount3 -u "$MNT/.jobs"
  mountpoint -q "$MNT" && fusermount3 -u "$MNT"
  rm -f /dev/shm/cairn-floor "$BENCH_DIR/floor-time"
}
trap cleanup EXIT
hz=$(getconf CLK_TCK)

# timed_sys CMD...: runs CMD quietly, prints its system CPU seconds.
timed_sys() {
  /usr/bin/time -f %S -o "$BENCH_DIR/floor-time" "$@" >/dev/null 2>&1
  cat "$BENCH_DIR/floor-time"
}

# cold LABEL PID FILE: drops the page cache, reads FILE with dd, prints
# the line (cairn's .stats when FILE is in a cairn mount).
cold() {
  local label=$1 pid=$2 f=$3 c0 c1 s e sys extra=""
  drop_caches
  c0=$(awk '{print $14+$15}' "/proc/$pid/stat")
  s=$(now)
  sys=$(timed_sys dd if="$f" of=/dev/null bs=1M)
  e=$(now)
  c1=$(awk '{print $14+$15}' "/proc/$pid/stat")
  if [ -f "$MNT/.stats" ]; then
    extra=$(printf 'buffers_new %s  peak RSS %s MiB' \
      "$(grep -o '"buffers_new": *[0-9]*' "$MNT/.stats" | grep -o '[0-9]*$')" \
      "$(awk '/VmHWM/ {print int($2/1024)}' "/proc/$pid/status")")
  fi
  awk -v l="$label" -v s="$s" -v e="$e" -v c="$((c1 - c0))" -v hz="$hz" -v b="$bytes" -v sys="$sys" -v x="$extra" \
    'BEGIN { printf "%-14s %6.2f s %6.0f MB/s  daemon %5.2f CPU-s  dd sys %5.2f  %s\n", l, e - s, b / (e - s) / 1e6, c / hz, sys, x }'
}

unmount() {
  mountpoint -q "$MNT/.jobs" 2>/dev/null && fusermount3 -u "$MNT/.jobs"
  fusermount3 -u "$MNT"
  wait "$1" 2>/dev/null || true
}

run_zerofs() {
  "$BENCH_DIR/zerofs" "$MNT" "$bytes" & local pid=$!
  wait_mounted "$MNT" 30
  stat "$MNT/zero.img" >/dev/null
  cold zerofs "$pid" "$MNT/zero.img"
  unmount "$pid"
}

run_cairn() { # run_cairn LABEL BINARY
  "$2" --store floor-store mount "$MNT" >/dev/null 2>&1 & local pid=$!
  wait_mounted "$MNT" 30
  local f
  f=$(ls -d "$MNT"/host/i/latest/)x.img
  stat "$f" >/dev/null
  cold "$1" "$pid" "$f"
  cmp -s "$f" ext4.img || { echo "$1: WRONG RESULT (differs from ext4.img)" >&2; exit 1; }
  unmount "$pid"
}

for ((r = 1; r <= ROUNDS; r++)); do
  echo "round $r"
  run_zerofs
  [ -n "${OLD:-}" ] && run_cairn "cairn (old)" "$OLD"
  run_cairn cairn "$CAIRN"
  rm -f /dev/shm/cairn-floor
  drop_caches
  s=$(now)
  sys=$(timed_sys dd if=/dev/zero of=/dev/shm/cairn-floor bs=1M count=$((bytes >> 20)))
  e=$(now)
  rm -f /dev/shm/cairn-floor
  awk -v s="$s" -v e="$e" -v b="$bytes" -v sys="$sys" \
    'BEGIN { printf "%-14s %6.2f s %6.0f MB/s  (2 GiB of fresh tmpfs pages written)  dd sys %5.2f\n", "page fill", e - s, b / (e - s) / 1e6, sys }'
done
