#!/usr/bin/env bash
# The second backup of a tree of FILES one-line files (default 4M, 1,000
# per directory) and its peak RSS. The tree and the store live on a
# sparse loop ext4 with inline_data ($BENCH_DIR/scale-4m.img), so a
# one-line file costs an inode and no block; the image is removed at the
# end (KEEP=1 keeps it mounted on $BENCH_DIR/scale-4m for another run).
# Both backups are measured by benchrun (wall, CPU seconds, peak RSS);
# the second one must reuse every file (its summary is printed).
#
#   FILES=4000000 test/bench/scale-4m.sh
#
# Needs root (loop mount) and python3 (makes the tree: ~3 min per 1M
# files here).
source "$(dirname "$0")/lib.sh"

FILES=${FILES:-4000000}
KEEP=${KEEP:-0}
IMGF=$BENCH_DIR/scale-4m.img FS=$BENCH_DIR/scale-4m BR=$BENCH_DIR/benchrun
build_cairn
(cd "$ROOT" && go build -o "$BR" ./test/bench/benchrun)

cleanup() {
  [ "$KEEP" = 1 ] && return
  umount "$FS" 2>/dev/null || true
  rm -f "$IMGF"
}
trap cleanup EXIT
if ! mountpoint -q "$FS"; then
  rm -f "$IMGF"
  truncate -s $((FILES / 1000000 * 3 + 4))G "$IMGF"
  mkfs.ext4 -q -O inline_data -I 256 -N $((FILES + FILES / 8 + 200000)) "$IMGF"
  mkdir -p "$FS"
  mount -o loop "$IMGF" "$FS"
fi
TREE=$FS/t ST=$FS/store
if [ ! -f "$FS/tree.complete" ]; then
  echo "== making $FILES files"
  s=$(now)
  python3 - "$TREE" "$FILES" <<'EOF'
import os, sys
root, n = sys.argv[1], int(sys.argv[2])
for d in range(n // 1000):
    p = os.path.join(root, "d%05d" % d)
    os.makedirs(p, exist_ok=True)
    for f in range(1000):
        with open(os.path.join(p, "f%04d" % f), "w") as fh:
            fh.write("%d %d\n" % (d, f))
EOF
  touch "$FS/tree.complete"
  printf 'made in %.0f s; %s\n' "$(awk -v s="$s" -v e="$(now)" 'BEGIN { print e - s }')" "$(df -h --output=used,iused "$FS" | tail -1)"
fi
rm -rf "$ST"
"$CAIRN" --store "$ST" init >/dev/null
for n in 1 2; do
  [ $n = 2 ] && sleep 2 # past the ctime margin: the second backup trusts every file
  "$BR" run -step "backup $n" -tool cairn -o "$FS/backup$n.json" -log "$FS/backup$n.log" -- \
    "$CAIRN" --store "$ST" backup --json --id t --no-sync "t.pxar:$TREE" |
    jq -r --arg n "$FILES" '"\($n) files, backup \(.step | ltrimstr("backup ")): \(.wall_s*10|round/10) s, \(.cpu_s*10|round/10) CPU-s, peak RSS \(.rss_kib/1024|round) MiB, exit \(.exit)"'
done
jq -c '.file_archives[0] | {mode, files, read_files, reused_files, read_bytes, reused_bytes}' "$FS/backup2.json" ||
  head -c 600 "$FS/backup2.json"
