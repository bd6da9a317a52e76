#!/usr/bin/env bash
# The 1M-file tree side by side with restic and borg: first backup
# (cold), second backup of the unchanged tree (warm) and restore (cold),
# one run per tool, each measured by benchrun (wall, CPU seconds, peak
# RSS) and each restore checked against the source's manifest (path,
# type, mode, size, SHA-256).
#
#   TREE=/var/tmp/cairn-scale/t1m TOOLS="cairn restic borg" test/bench/scale-peers.sh
#
# Repositories and restored trees live on a sparse loop ext4 with
# inline_data ($BENCH_DIR/scale-peers.img, removed at the end), so a
# one-line file costs an inode and no block, and cleaning up is one
# umount. Results: $BENCH_DIR/scale-peers/results.jsonl and a table on
# stdout. Needs root (drop_caches, loop mount).
source "$(dirname "$0")/lib.sh"

TREE=$(readlink -f "${TREE:-/var/tmp/cairn-scale/t1m}")
TOOLS=${TOOLS:-"cairn restic borg"}
OUT=$BENCH_DIR/scale-peers IMGF=$BENCH_DIR/scale-peers.img
FS=$OUT/fs BR=$BENCH_DIR/benchrun LOG=$OUT/log RESULTS=$OUT/results.jsonl
[ -d "$TREE" ] || { echo "no tree at $TREE" >&2; exit 2; }
need restic borg
mkdir -p "$OUT"
: >"$RESULTS"
build_cairn
(cd "$ROOT" && go build -o "$BR" ./test/bench/benchrun)

cleanup() {
  umount "$FS" 2>/dev/null || true
  rm -f "$IMGF"
}
trap cleanup EXIT
files=$(find "$TREE" -type f | wc -l)
rm -f "$IMGF"
truncate -s 16G "$IMGF"
mkfs.ext4 -q -O inline_data -I 256 -N $((4 * files + 400000)) "$IMGF"
mkdir -p "$FS"
mount -o loop "$IMGF" "$FS"

echo "== source manifest ($files files)"
"$BR" manifest "$TREE" >"$OUT/src.manifest"

# rec TOOL STEP -- CMD…: one benchrun record, appended to RESULTS.
rec() {
  local tool=$1 step=$2 r; shift 2
  r=$("$BR" run -step "$step" -label "$step" -tool "$tool" -round 1 -log "$LOG" "$@") || {
    echo "!!! $tool $step failed; see $LOG" >&2
    r="{\"step\":\"$step\",\"tool\":\"$tool\",\"exit\":1}"
  }
  echo "$r" >>"$RESULTS"
  echo "  $r" | cut -c1-200
}

backup_cmd() { # backup_cmd TOOL REPO N
  case $1 in
    cairn) echo "$CAIRN --store $2 backup --id t --no-sync t.pxar:$TREE" ;;
    restic) echo "restic --repo $2 -q backup $TREE" ;;
    borg) echo "borg create $2::t$3 $TREE" ;;
  esac
}

for tool in $TOOLS; do
  repo=$FS/$tool-repo dst=$FS/$tool-out
  echo "== $tool"
  case $tool in
    cairn) "$CAIRN" --store "$repo" init >/dev/null ;;
    restic) restic init --repo "$repo" -q >/dev/null ;;
    borg) borg init -e none "$repo" 2>/dev/null ;;
  esac
  drop_caches
  # shellcheck disable=SC2046
  rec "$tool" "first backup (cold)" -- $(backup_cmd "$tool" "$repo" 1)
  sleep 2
  # shellcheck disable=SC2046
  rec "$tool" "second backup, unchanged (warm)" -- $(backup_cmd "$tool" "$repo" 2)
  mkdir -p "$dst"
  drop_caches
  case $tool in
    cairn) rec cairn "restore (cold)" -- "$CAIRN" --store "$repo" restore --no-sync host/t t.pxar "$dst/t"
      got=$dst/t ;;
    restic) rec restic "restore (cold)" -- restic --repo "$repo" -q restore latest --target "$dst"
      got=$dst$TREE ;;
    borg) rec borg "restore (cold)" -C "$dst" -- borg extract "$repo::t2"
      got=$dst$TREE ;;
  esac
  if "$BR" manifest "$got" | cmp -s - "$OUT/src.manifest"; then
    echo "  restore checked: same tree"
  else
    echo "!!! $tool: restored tree differs from the source" >&2
    echo "{\"step\":\"restore check\",\"tool\":\"$tool\",\"ok\":false}" >>"$RESULTS"
  fi
  du -sh "$repo" | sed 's/^/  repository size /'
  rm -rf "$repo" "$dst"
done

echo
echo "| step | tool | wall s | CPU s | peak RSS MiB |"
echo "|---|---|---|---|---|"
jq -r 'select(.wall_s) | "| \(.step) | \(.tool) | \(.wall_s*100|round/100) | \(.cpu_s*100|round/100) | \(.rss_kib/1024|round) |"' "$RESULTS"
