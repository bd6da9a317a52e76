#!/usr/bin/env bash
# What an incremental backup costs to keep: the growth of each tool's
# repository per incremental backup, side by side in one run (README's
# "Storage" table). Three workloads, each a first backup and then ROUNDS
# incremental ones, every tool backing up the same state of the source:
#   tree     a copy of Go's source tree; before each later backup 1% of
#            its files, a different scattered subset each round (seeded,
#            so every run is alike), get one line appended
#   churn    the same, and each round one directory renamed, 20 new files
#            added and 20 removed
#   image    a 1 GiB ext4 image holding the same tree, the same 1%
#            appended inside it through a loop mount
#   test/bench/incremental.sh                    (as root: loop mounts)
# Environment: ROUNDS (10), WORKLOADS ("tree churn image"), TOOLS ("cairn
# restic borg"; "cairn-old" adds the binary $CAIRN_OLD beside cairn, for
# before/after), OUT ($BENCH_DIR/incremental-DATE), BENCH_DIR.
# Every tool runs with its defaults (cairn --no-sync, as the peers do not
# wait for the disk). The page cache is dropped before each backup, so
# the times are cold. Growth is the repository's apparent size (du -sb)
# after the backup minus before it; the allocated size (du -B1, whole
# file system blocks: small chunk files cost a block each) beside it.
# After the last round cairn's newest snapshot (the ROUNDS-th incremental
# one) is restored (cold, timed) and compared with the source (the image
# with cmp), read through a fresh mount (cold: tar of the tree, dd of the
# image, timed), cairn's store is verified and garbage-collected (timed,
# cold; the gc finds every chunk in use); a wrong result
# fails the run. With cairn-old beside cairn these rows compare the two.
# Output in $OUT: table.md, results.tsv (tool, workload, round, seconds,
# apparent bytes, allocated bytes), reads.tsv (tool, workload, step,
# seconds), run.log.
# The whole script is one brace group, which bash reads to its end before
# it runs any of it (as run.sh): editing it during a run changes nothing.
{
source "$(dirname "$0")/lib.sh"
[ "$(id -u)" = 0 ] || { echo "incremental.sh needs root (loop mounts, drop_caches)" >&2; exit 2; }
ROUNDS=${ROUNDS:-10} WORKLOADS=${WORKLOADS:-tree churn image} TOOLS=${TOOLS:-cairn restic borg}
OUT=${OUT:-$BENCH_DIR/incremental-$(date -u +%Y%m%d-%H%M%S)}
W=$BENCH_DIR/incr LOG=$OUT/run.log RES=$OUT/results.tsv
mkdir -p "$OUT" "$W"
: >"$RES"
need restic borg
build_cairn
[[ " $TOOLS " != *" cairn-old "* ]] || [ -x "${CAIRN_OLD:-}" ] || { echo "cairn-old needs CAIRN_OLD=<binary>" >&2; exit 2; }

cleanup() { mountpoint -q "$W/loop" && umount "$W/loop"; true; }
trap cleanup EXIT

bin_of() { case $1 in cairn) echo "$CAIRN" ;; cairn-old) echo "$CAIRN_OLD" ;; esac; }

# pick N ROUND DIR: N files of DIR, the same ones for the same ROUND.
pick() {
  (cd "$3" && find . -type f -printf '%P\n' | LC_ALL=C sort) |
    shuf -n "$1" --random-source=<(openssl enc -aes-128-ctr -pass "pass:round$2" -nosalt </dev/zero 2>/dev/null)
}

# change DIR ROUND KIND: this round's change of the tree at DIR (in a
# subshell without pipefail: head and shuf end their writers early).
change() (
  set +o pipefail
  local dir=$1 r=$2 n f i
  n=$(( $(find "$dir" -type f | wc -l) / 100 ))
  pick "$n" "$r" "$dir" | while IFS= read -r f; do echo "// round $r: one more line" >>"$dir/$f"; done
  [ "$3" = churn ] || return 0
  pick 20 "x$r" "$dir" | while IFS= read -r f; do rm -f "$dir/$f"; done
  mkdir -p "$dir/new$r"
  for i in $(seq 20); do
    openssl enc -aes-128-ctr -pass "pass:new$r$i" -nosalt </dev/zero 2>/dev/null | head -c $((2000 + i * 500)) |
      base64 >"$dir/new$r/f$i.txt"
  done
  local d; d=$(cd "$dir" && find . -mindepth 2 -type d -printf '%P\n' | LC_ALL=C sort |
    shuf -n 1 --random-source=<(openssl enc -aes-128-ctr -pass "pass:dir$r" -nosalt </dev/zero 2>/dev/null))
  mv "$dir/$d" "$dir/$d.r$r"
)

# backup TOOL REPO SRC WORKLOAD ROUND: one backup, cold, its growth recorded.
backup() {
  local t=$1 repo=$2 src=$3 wl=$4 r=$5 b0 a0 b1 a1 s e
  if [ "$r" = 0 ]; then
    rm -rf "$repo"
    case $t in
      cairn*) "$(bin_of "$t")" --store "$repo" init -q ;;
      restic) restic init --repo "$repo" -q >/dev/null ;;
      borg) borg init -e none "$repo" ;;
    esac
  fi >>"$LOG" 2>&1
  b0=$(du -sb "$repo" | cut -f1) a0=$(du -sB1 "$repo" | cut -f1)
  drop_caches
  s=$(now)
  case $t:$wl in
    cairn*:image) "$(bin_of "$t")" --store "$repo" backup --id img --no-sync "disk.img:$src" ;;
    cairn*:*) "$(bin_of "$t")" --store "$repo" backup --id tree --no-sync "src.pxar:$src" ;;
    restic:*) restic --repo "$repo" backup "$src" ;;
    borg:*) borg create --stats "$repo::r$r" "$src" ;;
  esac >>"$LOG" 2>&1 || { echo "FAILED: $t $wl round $r (see $LOG)" >&2; exit 1; }
  e=$(now)
  b1=$(du -sb "$repo" | cut -f1) a1=$(du -sB1 "$repo" | cut -f1)
  printf '%s\t%s\t%s\t%.2f\t%s\t%s\n' "$t" "$wl" "$r" "$(awk -v s="$s" -v e="$e" 'BEGIN{print e-s}')" \
    $((b1 - b0)) $((a1 - a0)) >>"$RES"
}

# check TOOL WORKLOAD REPO SRC: cairn's newest snapshot equals the source;
# the reads of it timed cold.
check() {
  local bin s e mpid; bin=$(bin_of "$1")
  rm -rf "$W/restored"
  drop_caches
  s=$(now)
  if [ "$2" = image ]; then
    "$bin" --store "$3" restore -q --no-sync host/img/latest disk.img "$W/restored" &&
      e=$(now) && cmp "$W/restored" "$4" || { echo "WRONG RESULT: $1 $2 restore differs" >&2; exit 1; }
  else
    "$bin" --store "$3" restore -q --no-sync host/tree/latest src.pxar "$W/restored" && e=$(now) &&
      diff -r --no-dereference "$W/restored" "$4" >/dev/null ||
      { echo "WRONG RESULT: $1 $2 restore differs" >&2; exit 1; }
  fi
  timing "$1" "$2" restore "$s" "$e"
  rm -rf "$W/restored"
  mkdir -p "$W/mnt"
  "$bin" --store "$3" mount "$W/mnt" >>"$LOG" 2>&1 &
  mpid=$!
  wait_mounted "$W/mnt" 60
  drop_caches
  s=$(now)
  if [ "$2" = image ]; then
    cmp "$W/mnt/host/img/latest/disk.img" "$4" || { echo "WRONG RESULT: $1 $2 mount read differs" >&2; exit 1; }
  else
    tar -C "$W/mnt/host/tree/latest/src.pxar" -cf - . | cat >/dev/null
  fi
  e=$(now)
  timing "$1" "$2" mount-read "$s" "$e"
  fusermount3 -u "$W/mnt" || umount -l "$W/mnt"
  wait "$mpid" || true
  drop_caches
  s=$(now)
  "$bin" --store "$3" verify -q >>"$LOG" 2>&1 || { echo "WRONG RESULT: $1 $2 verify failed" >&2; exit 1; }
  timing "$1" "$2" verify "$s" "$(now)"
  drop_caches
  s=$(now)
  "$bin" --store "$3" gc -q >>"$LOG" 2>&1 || { echo "FAILED: $1 $2 gc" >&2; exit 1; }
  timing "$1" "$2" gc "$s" "$(now)"
}

timing() { printf '%s\t%s\t%s\t%.2f\n' "$1" "$2" "$3" "$(awk -v s="$4" -v e="$5" 'BEGIN{print e-s}')" >>"$OUT/reads.tsv"; }

run_workload() {
  local wl=$1 r t src=$W/$wl
  echo "== $wl (at $(( $(date +%s) - started )) s)"
  rm -rf "$src" "$W/$wl.img"
  if [ "$wl" = image ]; then
    mkdir -p "$W/loop"
    mke2fs -q -t ext4 -d "$(go env GOROOT)/src" "$W/$wl.img" 1G
    src=$W/$wl.img
  else
    cp -a "$(go env GOROOT)/src" "$src"
  fi
  for ((r = 0; r <= ROUNDS; r++)); do
    if [ "$r" -gt 0 ]; then
      if [ "$wl" = image ]; then
        mount -o loop "$src" "$W/loop" && change "$W/loop" "$r" "$wl" && umount "$W/loop"
      else
        change "$src" "$r" "$wl"
      fi
    fi
    for t in $TOOLS; do backup "$t" "$W/repo-$t-$wl" "$src" "$wl" "$r"; done
  done
  for t in $TOOLS; do
    case $t in cairn*) check "$t" "$wl" "$W/repo-$t-$wl" "$src"; cairn_chunks "$t" "$wl" ;; esac
  done
}

# cairn_chunks TOOL WORKLOAD: chunk files and their mean size.
cairn_chunks() {
  find "$W/repo-$1-$2/.chunks" -type f -printf '%s\n' |
    awk -v t="$1" -v w="$2" '{ n++; s += $1 } END { printf "%s\t%s\t%d\t%.0f\n", t, w, n, n ? s / n : 0 }' >>"$OUT/chunks.tsv"
}

started=$(date +%s)
: >"$OUT/chunks.tsv"
: >"$OUT/reads.tsv"
for wl in $WORKLOADS; do run_workload "$wl"; done

{
  echo "Growth of the repository per incremental backup (mean of $ROUNDS; MB = 10^6 bytes), $(date -u +%Y-%m-%d)," \
    "$(nproc) cores. Apparent size (du -sb); allocated (du -B1) in brackets. First backup's size and the mean cold backup time beside."
  echo
  printf '| workload |'; for t in $TOOLS; do printf ' %s |' "$t"; done; echo
  printf '|---|'; for t in $TOOLS; do printf -- '---|'; done; echo
  for wl in $WORKLOADS; do
    printf '| %s |' "$wl"
    for t in $TOOLS; do
      awk -F'\t' -v t="$t" -v w="$wl" '$1 == t && $2 == w {
          if ($3 == 0) { first = $5 } else { n++; g += $5; a += $6; s += $4 } }
        END { printf " %.2f MB (%.2f) · first %.0f MB · %.2f s |", g / n / 1e6, a / n / 1e6, first / 1e6, s / n }' "$RES"
    done
    echo
  done
  echo
  echo "Reads of the last snapshot, cold (seconds): restore, read through the mount (tar of the tree," \
    "cmp of the image), verify and gc of the store:"
  awk -F'\t' '{ printf "- %s %s %s: %.2f s\n", $1, $2, $3, $4 }' "$OUT/reads.tsv"
  echo
  echo "cairn's chunk files after the last round (count, mean size):"
  awk -F'\t' '{ printf "- %s %s: %d chunks, mean %.0f KiB\n", $1, $2, $3, $4 / 1024 }' "$OUT/chunks.tsv"
} >"$OUT/table.md"
cat "$OUT/table.md"
exit 0 # before bash reads on past the group
}
