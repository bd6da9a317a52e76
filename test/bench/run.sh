#!/usr/bin/env bash
# The side-by-side table of README.md's Performance section, in one
# command: cairn, restic, borg and casync on a copy of Go's source tree
# ($SRC) and a sparse 2 GiB ext4 image of Go ($IMG, lib.sh data_ext4),
# plus an incompressible image (RAND_MB MiB, 0: none).
#   test/bench/run.sh                    (as root; ROUNDS=3 by default)
#   QUICK=1 test/bench/run.sh            (tiny data, cairn alone: CI)
#   S3=1 test/bench/run.sh               (object storage: cairn and restic
#                                         on MinIO, direct and +20 ms; run-s3.sh)
#   QUICK=1 S3=1 test/bench/run.sh       (the same on tiny data: CI)
# Environment: ROUNDS (3), TOOLS ("cairn restic borg casync"), RAND_MB
# (512), FIO_RUNTIME (10 s), OUT ($BENCH_DIR/results-DATE), BENCH_DIR.
# Missing peers (and fio) are installed from Debian; a peer Debian does
# not package is shown as "n/a (not packaged)".
#
# Each round runs every step for every tool, the tools alternating (the
# order rotates each round); every tool works on repositories of its own,
# made fresh each round. Page cache dropped before each cold step; mounts
# are fresh for each step. Every result is checked: images read or
# restored byte for byte (cmp), trees restored or tarred through a mount
# by a manifest (path, type, mode, size, SHA-256, symlink target) against
# the source's, find's paths against the source's, fio's blocks by
# random O_DIRECT reads compared with the source. A wrong result is
# reported when it happens, shown as WRONG RESULT and fails the run.
#
# benchrun (test/bench/benchrun) measures wall time, CPU seconds and peak
# RSS of each command and its children. Where the command only reads
# through a mount (dd, tar, find, fio), the work is the mount daemon's:
# the CPU and RSS reported are the daemon's (utime+stime delta in
# /proc/PID/stat, VmHWM in /proc/PID/status; the reader's own are kept in
# the JSON as client_cpu_s and client_rss_kib). The daemon runs in the
# foreground of a fresh mount per step, so its VmHWM covers that step.
#
# cairn runs with --no-sync for backups and restores as the peers do not
# wait for the disk; the tree restore row with cairn's default sync is
# beside it. Restores go to a fresh ext4 on a loop device (see
# lib.sh's loop_ext4 for why), not in QUICK mode.
#
# Output in $OUT: table.md (machine and versions, then per step cairn's
# median and range, the best peer's median, cairn's speed relative to it,
# CPU seconds and peak RSS per tool), results.jsonl and results.json (one
# record per tool, step and round), run.log (the tools' output).
# The whole script is one brace group, which bash reads to its end before
# it runs any of it: editing this file during a run cannot change the run.
{
source "$(dirname "$0")/lib.sh"
source "$ROOT/test/bench/run-tools.sh"
source "$ROOT/test/bench/run-steps.sh"
S3=${S3:-0}
[ "$S3" != 1 ] || source "$ROOT/test/bench/run-s3.sh"
[ "$(id -u)" = 0 ] || { echo "run.sh needs root (drop_caches, loop mounts)" >&2; exit 2; }
if [ "${QUICK:-0}" != 1 ] && ! can_drop_caches; then
  echo "run.sh cannot drop the page cache here: the cold rows would be warm" >&2
  exit 2
fi

QUICK=${QUICK:-0}
[ "$S3" != 1 ] || TOOLS=${TOOLS:-cairn restic}
if [ "$QUICK" = 1 ]; then
  ROUNDS=${ROUNDS:-1} TOOLS=${TOOLS:-cairn} RAND_MB=${RAND_MB:-8} FIO_RUNTIME=${FIO_RUNTIME:-1}
else
  ROUNDS=${ROUNDS:-3} TOOLS=${TOOLS:-cairn restic borg casync} RAND_MB=${RAND_MB:-512} FIO_RUNTIME=${FIO_RUNTIME:-10}
fi
OUT=${OUT:-$BENCH_DIR/results-$([ "$S3" != 1 ] || echo s3-)$(date -u +%Y%m%d-%H%M%S)}
RUN=$BENCH_DIR/run MNT=$BENCH_DIR/run/mnt BR=$BENCH_DIR/benchrun
LOG=$OUT/run.log RESULTS=$OUT/results.jsonl
FAILED=0 MPID= OUTFS= EXTRA=
declare -A LABEL BYTES NA_TOOL

cleanup() {
  unmount_tool || true
  [ "$S3" != 1 ] || stop_s3
  if [ -n "$OUTFS" ] && mountpoint -q "$OUTFS"; then umount "$OUTFS" || umount -l "$OUTFS" || true; fi
  if mountpoint -q "$RUN"; then umount "$RUN" || umount -l "$RUN" || true; fi
  rm -rf "$RUN"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# install_missing: peers and fio from Debian; a tool Debian lacks is n/a.
install_missing() {
  local want=() t pkg
  for t in $TOOLS fio curl; do
    case $t in cairn) continue ;; borg) pkg=borgbackup ;; *) pkg=$t ;; esac
    command -v "$t" >/dev/null || want+=("$pkg")
  done
  [ ${#want[@]} -gt 0 ] || return 0
  echo "== installing ${want[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq || true
  for pkg in "${want[@]}"; do
    apt-get install -y -qq -o DPkg::Lock::Timeout=300 "$pkg" >/dev/null || echo "could not install $pkg" >&2
  done
  for t in $TOOLS; do
    [ "$t" = cairn ] || command -v "$t" >/dev/null || NA_TOOL[$t]="not packaged"
  done
  command -v fio >/dev/null || NA_TOOL[fio]="fio not installable"
}

# make_data: the source tree copy, its manifest, the images.
make_data() {
  local goroot; goroot=$(go env GOROOT)
  if [ "$QUICK" = 1 ]; then
    local d=$BENCH_DIR/quick
    SRC=$d/src IMG=$d/ext4.img RAND=$d/rand-${RAND_MB}m.img
    mkdir -p "$d"
    [ -d "$SRC" ] || { cp -a "$goroot/src/encoding" "$SRC.tmp" && mv "$SRC.tmp" "$SRC"; }
    [ -f "$IMG" ] || mke2fs -q -t ext4 -d "$SRC" "$IMG" 64M
    IMG_OF="of that tree"
  else
    SRC=$BENCH_DIR/data/src IMG=$BENCH_DIR/ext4.img RAND=$BENCH_DIR/rand-${RAND_MB}m.img
    mkdir -p "$BENCH_DIR/data"
    [ -d "$SRC" ] || { cp -a "$goroot/src" "$SRC.tmp" && mv "$SRC.tmp" "$SRC"; }
    data_ext4 "$IMG"
    IMG_OF="of Go's installation"
  fi
  [ "$RAND_MB" -gt 0 ] && data_random "$RAND" "$RAND_MB"
  "$BR" manifest "$SRC" >"$RUN/src.manifest"
  TREE_BYTES=$(awk -F'\t' '$2 == "f" { s += $4 } END { print s + 0 }' "$RUN/src.manifest")
  TREE_FILES=$(awk -F'\t' '$2 == "f"' "$RUN/src.manifest" | wc -l)
}

# out_fs: restores go to a fresh ext4 on a loop device (full runs).
out_fs() {
  OUTFS=$RUN/out
  mkdir -p "$OUTFS"
  [ "$QUICK" = 1 ] && return 0
  loop_ext4 "$RUN/out.ext4" "$OUTFS" 16G
}

header() {
  local t
  echo "Machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores," \
    "$(awk '/MemTotal/ { printf "%.0f GiB RAM", $2 / 1048576 }' /proc/meminfo), Linux $(uname -r)," \
    "$(. /etc/os-release && echo "$PRETTY_NAME"), $(go version | cut -d' ' -f3)."
  echo
  printf 'Versions:'
  for t in $TOOLS fio; do
    [ -z "${NA_TOOL[$t]:-}" ] && printf ' %s;' "$(tool_version "$t")"
  done
  echo
  echo
  echo "Data: a copy of Go's source tree ($TREE_FILES files, $((TREE_BYTES / 1000000)) MB), a sparse" \
    "$(($(size_of "$IMG") >> 20)) MiB ext4 image ${IMG_OF} ($(($(du -B1 "$IMG" | cut -f1) / 1000000)) MB allocated)" \
    "and $RAND_MB MiB of random bytes. $ROUNDS round(s), $(date -u +%Y-%m-%d)."
  [ "$S3" != 1 ] || { echo; s3_header; }
  [ "$QUICK" = 1 ] && echo && echo "QUICK run: tiny data, figures mean nothing."
  echo
  echo "Median over rounds (range); ratio: how many times faster cairn is than the best peer" \
    "(time ratio; IOPS ratio for random reads). Through a mount, CPU and RSS are the mount daemon's."
  echo
}

# run_step STEP PREP FUNC ARGS…: FUNC TOOL STEP ARGS… for every tool in
# this round's order, PREP (cold, warm_img, warm_rand, warm_tree, none, or
# a function given the tool) before each.
run_step() {
  local step=$1 prep=$2 fn=$3 t why; shift 3
  echo "== round $ROUND: ${LABEL[$step]} (at $(( $(date +%s) - started )) s)"
  for t in $ORDER; do
    case $step in restore-tree-sync | cat-rand) [ "$t" = cairn ] || continue ;; esac
    why=${NA_TOOL[$t]:-$(tool_na "$t" "$step")}
    [ "$step" = randread ] && [ -n "${NA_TOOL[fio]:-}" ] && why=${NA_TOOL[fio]}
    if [ -n "$why" ]; then na "$t" "$step" "$why"; continue; fi
    case $prep in
      cold) drop_caches ;;
      warm_img) drop_caches; cat "$IMG" >/dev/null ;;
      warm_rand) drop_caches; cat "$RAND" >/dev/null ;;
      warm_tree) tar -C "$SRC" -cf - . | cat >/dev/null ;;
      none) ;;
      *) "$prep" "$t" ;; # a function of the tool
    esac
    "$fn" "$t" "$step" "$@"
  done
}

touch_some() { # touch_some: every 100th file of the tree gets a new mtime
  find "$SRC" -type f | LC_ALL=C sort | awk 'NR % 100 == 0' | xargs -d '\n' touch
}

mkdir -p "$OUT" "$RUN"
# QUICK keeps its work (repositories, restores) in a tmpfs: a cairn store
# has 65,536 chunk directories, and removing them after the caches were
# dropped took minutes on a loaded disk. Its figures mean nothing anyway.
if [ "$QUICK" = 1 ] && ! mount -t tmpfs -o size=1g,mode=0700 cairn-bench "$RUN" 2>/dev/null; then
  echo "(no tmpfs for QUICK's work: using $RUN on disk)" >&2
fi
: >"$RESULTS"
started=$(date +%s)
[ "$QUICK" = 1 ] || install_missing
for t in $TOOLS fio curl; do
  [ "$QUICK" != 1 ] || [ "$t" = cairn ] || command -v "$t" >/dev/null || { install_missing; break; }
done
echo "== building cairn and benchrun (at $(( $(date +%s) - started )) s)"
build_cairn
(cd "$ROOT" && go build -o "$BR" ./test/bench/benchrun)
make_data
out_fs
[ "$S3" != 1 ] || { start_s3; make_sync_sources; }
IMG_BYTES=$(size_of "$IMG") RAND_BYTES=$(( RAND_MB << 20 ))
LABEL=(
  [backup-tree]="first backup, tree (cold)"
  [backup-image]="first backup, image (source in page cache)"
  [backup-rand]="first backup, incompressible image (source in page cache)"
  [backup-tree2]="second backup, tree, 1% of files touched (warm)"
  [mount-image]="image read through the mount (cold)"
  [mount-rand]="incompressible image read through the mount (cold)"
  [cat-rand]="incompressible image, cairn cat (cold; the mount's reference)"
  [mount-tar]="tar of the tree through the mount (cold)"
  [mount-find]="find through the mount (cold)"
  [restore-tree]="tree restore (cairn --no-sync; cold)"
  [restore-tree-sync]="tree restore, cairn with its default sync (cold)"
  [restore-image]="image restore (cairn --no-sync; cold)"
  [verify]="verify the repository (cold)"
  [randread]="random 4 KiB reads through the mount (fio, 4 jobs, cold)"
)
BYTES=(
  [backup-tree]=$TREE_BYTES [backup-image]=$IMG_BYTES [backup-rand]=$RAND_BYTES
  [backup-tree2]=$TREE_BYTES [mount-image]=$IMG_BYTES [mount-rand]=$RAND_BYTES [cat-rand]=$RAND_BYTES
  [mount-tar]=$TREE_BYTES [restore-tree]=$TREE_BYTES [restore-tree-sync]=$TREE_BYTES
  [restore-image]=$IMG_BYTES
)
[ "$S3" != 1 ] || s3_labels
read -ra tools <<<"$TOOLS"
for ((ROUND = 1; ROUND <= ROUNDS; ROUND++)); do
  k=$(( (ROUND - 1) % ${#tools[@]} ))
  ORDER="${tools[*]:k} ${tools[*]:0:k}"
  if [ "$S3" = 1 ]; then s3_round; continue; fi
  for t in $ORDER; do [ -n "${NA_TOOL[$t]:-}" ] || tool_init "$t"; done
  run_step backup-tree cold step_backup tree 1
  run_step backup-image warm_img step_backup img 1
  if [ "$RAND_MB" -gt 0 ]; then run_step backup-rand warm_rand step_backup rand 1; fi
  touch_some
  run_step backup-tree2 warm_tree step_backup tree 2
  run_step mount-image none step_mount_image img "$IMG"
  if [ "$RAND_MB" -gt 0 ]; then
    run_step mount-rand none step_mount_image rand "$RAND"
    run_step cat-rand none step_cat
  fi
  run_step mount-tar none step_mount_tar
  run_step mount-find none step_mount_find
  run_step restore-tree none step_restore tree
  run_step restore-tree-sync none step_restore tree-sync
  run_step restore-image none step_restore img
  run_step verify none step_verify
  run_step randread none step_randread
  for t in $ORDER; do rm -rf "$(repo "$t")"; done
done

header >"$OUT/header.md"
"$BR" table -header "$OUT/header.md" -json "$OUT/results.json" \
  -peers restore-tree-sync=restore-tree "$RESULTS" >"$OUT/table.md"
cat "$OUT/table.md"
echo
echo "wall time of the whole run: $(( $(date +%s) - started )) s; results in $OUT"
if [ "$FAILED" != 0 ]; then echo "!!! some results were WRONG (see above and $LOG)" >&2; exit 1; fi
exit 0
}
