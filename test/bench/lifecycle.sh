#!/usr/bin/env bash
# Reclaiming space, side by side on the same data: Go's source tree, 10
# snapshots with 1% of its files changed between them, then keep the last
# 3: cairn prune + cairn gc --atime-cutoff 0 vs restic forget --keep-last 3
# --prune vs borg prune --keep-last 3 + borg compact. Page cache dropped
# before each tool (WARM=1: metadata warmed instead, for every tool).
#
# GC --atime-cutoff 0 removes every chunk phase 1 did not mark at once
# when no backup runs (a running one would hold the cutoff 5 minutes
# before its start). KEEP_CAIRN=1 runs the binary at $CAIRN as it is (one
# built from a merge with prune, say) instead of building this tree.
#   test/bench/lifecycle.sh       (as root; data under $BENCH_DIR)
source "$(dirname "$0")/lib.sh"
need restic borg
[ -x "$CAIRN" ] && [ -n "${KEEP_CAIRN:-}" ] || build_cairn
cd "$BENCH_DIR"
src=lc-src
rm -rf "$src" lcstore lcempty lcrrepo lcbrepo lifecycle.log
cp -a "$(go env GOROOT)/src" "$src"
mapfile -t files < <(find "$src" -type f | LC_ALL=C sort)
n=${#files[@]}
"$CAIRN" --store lcstore init >/dev/null
"$CAIRN" --store lcempty init >/dev/null # for the floor: see below
restic init --repo lcrrepo -q >/dev/null
borg init -e none lcbrepo
for i in $(seq 10); do
  if [ "$i" -gt 1 ]; then # 1% of the files, a different 1% each time
    for ((k = 0; k < n / 100; k++)); do
      echo "// change $i" >> "${files[$(( (k * 100 + i * 7) % n ))]}"
    done
  fi
  "$CAIRN" --store lcstore backup --id go --no-sync "go.pxar:$BENCH_DIR/$src" >/dev/null 2>&1
  restic --repo lcrrepo -q backup "$src" >/dev/null
  borg create lcbrepo::s$i "$src"
done
# sizes WHEN: bytes on disk of each repository (cairn: its chunk files
# apart, since its 65,536 prefix directories alone take 256 MiB of du)
sizes() {
  printf '%-34s %12s B (chunk files %s B)\n' "$1: cairn store" "$(du -sb lcstore | cut -f1)" \
    "$(find lcstore/.chunks -type f -printf '%s\n' | awk '{ s += $1 } END { print s + 0 }')"
  printf '%-34s %12s B\n' "$1: restic repo" "$(du -sb lcrrepo | cut -f1)"
  printf '%-34s %12s B\n' "$1: borg repo" "$(du -sb lcbrepo | cut -f1)"
}
sizes before

# reclaim LABEL CMD...: prints "LABEL  seconds", cold or warm caches;
# the tools' output goes to $BENCH_DIR/lifecycle.log.
reclaim() {
  local label=$1; shift
  if [ -n "${WARM:-}" ]; then
    du -s lcstore lcempty lcrrepo lcbrepo >/dev/null # inodes and directories, no file content
  else
    drop_caches
  fi
  local s e
  s=$(now); "$@" >>"$BENCH_DIR/lifecycle.log" 2>&1; e=$(now)
  printf '%-34s %8.2f s\n' "$label" "$(awk -v s="$s" -v e="$e" 'BEGIN{print e-s}')"
}
cairn_reclaim() {
  "$CAIRN" --store lcstore prune host/go --keep-last 3 &&
    "$CAIRN" --store lcstore gc --atime-cutoff 0
}
borg_reclaim() {
  borg prune --keep-last 3 lcbrepo && borg compact lcbrepo
}
reclaim "cairn prune + gc" cairn_reclaim
# the floor of PBS's layout: a GC of an empty store only lists the
# 65,536 prefix directories
reclaim "cairn gc of an empty store (floor)" "$CAIRN" --store lcempty gc --atime-cutoff 0
reclaim "restic forget --prune" restic --repo lcrrepo -q forget --keep-last 3 --prune
reclaim "borg prune + compact" borg_reclaim
sizes after
"$CAIRN" --store lcstore gc --status
