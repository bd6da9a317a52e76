# Shared helpers of the benchmark scripts (sourced, not run).
# Every script measures cairn and its peers side by side in one run, on
# one machine, and prints MB/s; quote ratios from one run only.
set -euo pipefail

BENCH_DIR=${BENCH_DIR:-/var/tmp/cairn-bench}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
CAIRN=${CAIRN:-$BENCH_DIR/cairn}
export RESTIC_PASSWORD=bench BORG_PASSPHRASE= BORG_UNKNOWN_UNENCRYPTED_REPO_ACCESS_IS_OK=yes BORG_RELOCATED_REPO_ACCESS_IS_OK=yes

mkdir -p "$BENCH_DIR"

build_cairn() {
  (cd "$ROOT" && go build -o "$CAIRN" ./cmd/cairn)
}

need() {
  for c in "$@"; do
    command -v "$c" >/dev/null || { echo "missing $c: apt-get install -y restic borgbackup casync fuse3" >&2; exit 2; }
  done
}

drop_caches() {
  sync
  if ! { echo 3 > /proc/sys/vm/drop_caches; } 2>/dev/null; then echo "(cannot drop caches: not root, or /proc/sys read-only)" >&2; fi
}

# can_drop_caches: whether drop_caches works here (root, writable /proc/sys).
can_drop_caches() { { echo 1 > /proc/sys/vm/drop_caches; } 2>/dev/null; }

now() { date +%s.%N; }

# rate BYTES START END -> MB/s
rate() { awk -v b="$1" -v s="$2" -v e="$3" 'BEGIN { printf "%.1f", b / (e - s) / 1e6 }'; }

# timed LABEL BYTES CMD... : runs CMD, prints "LABEL  seconds  MB/s"
timed() {
  local label=$1 bytes=$2; shift 2
  local s e
  s=$(now); "$@" >/dev/null; e=$(now)
  printf '%-34s %8.2f s %10s MB/s\n' "$label" "$(awk -v s="$s" -v e="$e" 'BEGIN{print e-s}')" "$(rate "$bytes" "$s" "$e")"
}

# backup_all PREFIX ID NAME SRC: fresh PREFIXstore (cairn, group host/ID,
# archive NAME: x.img, go.pxar), PREFIXrrepo (restic) and PREFIXbrepo
# (borg, archive a), each holding one backup of SRC (a file or a tree).
backup_all() {
  local p=$1 id=$2 name=$3 src
  src=$(readlink -f "$4")
  rm -rf "${p}store" "${p}rrepo" "${p}brepo"
  "$CAIRN" --store "${p}store" init >/dev/null
  "$CAIRN" --store "${p}store" backup --id "$id" --no-sync "$name:$src" >/dev/null
  restic init --repo "${p}rrepo" -q >/dev/null && restic --repo "${p}rrepo" -q backup "$src" >/dev/null
  borg init -e none "${p}brepo" && borg create "${p}brepo::a" "$src"
}

# data_ext4 PATH: a sparse 2 GiB ext4 image holding a copy of Go's tree.
data_ext4() {
  [ -f "$1" ] || mke2fs -q -t ext4 -d "$(go env GOROOT)" "$1" 2G
}

# data_random PATH SIZE_MB: incompressible data.
data_random() {
  [ -f "$1" ] || head -c "$(( $2 << 20 ))" /dev/urandom > "$1"
}

# loop_ext4 FILE DIR SIZE: a fresh ext4 file system in the sparse FILE,
# mounted on DIR through a loop device (detached again at umount).
# Tree restores are measured on one: this VM's root ext4 has no journal,
# and such an ext4 skips inodes freed in the last 60 s (300 s while their
# block is dirty) when it allocates new ones (recently_deleted()): after
# a large rm -rf, creating files was 2-3x slower for every tool, and runs
# swung with it.
loop_ext4() {
  rm -f "$1"
  truncate -s "$3" "$1"
  mkfs.ext4 -q "$1"
  mkdir -p "$2"
  mount -o loop "$1" "$2"
}

size_of() { stat -L -c %s "$1"; }

wait_mounted() { # wait_mounted DIR TRIES: poll the mount table, not a sleep per se
  local i
  for ((i = 0; i < $2 * 10; i++)); do
    mountpoint -q "$1" && return 0
    sleep 0.1
  done
  echo "not mounted: $1" >&2
  return 1
}
