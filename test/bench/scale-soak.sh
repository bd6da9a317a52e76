#!/usr/bin/env bash
# The mount's memory beyond its cache under a long mixed load: one mount
# (--cache-size CACHE, default 256M) of a store holding a tree (Go's
# source copy, DATA) and an image (IMG), and for SOAK seconds at once:
#   - 8 tar readers: tar of the tree through the mount, its manifest
#     (path, type, mode, size, SHA-256) compared with the source's;
#   - 4 image readers: SHA-256 of the image through the mount compared
#     with the source's;
#   - verify jobs started one after another through .jobs/verify/control,
#     each required to end "ok";
#   - backups: the tree backed up again and again into the store (new
#     snapshots appear in the mount).
# The daemon's RSS is recorded every 10 s ($BENCH_DIR/soak/rss.tsv); at
# the end `echo 2 > drop_caches`, then `echo 3`, and the RSS after each. Every failed check
# is counted and makes the script exit 1.
#
#   SOAK=600 DATA=/var/tmp/cairn-bench-harness/data IMG=/var/tmp/cairn-bench-harness/ext4.img test/bench/scale-soak.sh
source "$(dirname "$0")/lib.sh"

SOAK=${SOAK:-600} CACHE=${CACHE:-256M}
DATA=$(readlink -f "${DATA:-/var/tmp/cairn-bench-harness/data}")
IMG=$(readlink -f "${IMG:-/var/tmp/cairn-bench-harness/ext4.img}")
D=$BENCH_DIR/soak ST=$BENCH_DIR/soak/store MNT=$BENCH_DIR/soak/mnt BR=$BENCH_DIR/benchrun
build_cairn
(cd "$ROOT" && go build -o "$BR" ./test/bench/benchrun)
rm -rf "$D"
mkdir -p "$D/res" "$MNT"
"$CAIRN" --store "$ST" init >/dev/null
"$CAIRN" --store "$ST" backup --id t --no-sync "go.pxar:$DATA" >/dev/null 2>&1
"$CAIRN" --store "$ST" backup --id i --no-sync "x.img:$IMG" >/dev/null 2>&1
"$BR" manifest "$DATA" >"$D/src.manifest"
imgsum=$(sha256sum <"$IMG" | cut -d' ' -f1)

"$CAIRN" --store "$ST" mount --daemon --cache-size "$CACHE" "$MNT" 2>/dev/null
pid=$(pgrep -n -f -- "--cache-size $CACHE $MNT")
trap '"$CAIRN" umount "$MNT" >/dev/null 2>&1 || true' EXIT
rss() { awk '/VmRSS/ { printf "%.0f", $2 / 1024 }' "/proc/$pid/status"; }
end=$(($(date +%s) + SOAK))
left() { [ "$(date +%s)" -lt "$end" ]; }

# count NAME OK: one result of worker NAME.
count() { echo "$2" >>"$D/res/$1"; }

tar_reader() {
  while left; do
    snap=$(readlink "$MNT/host/t/latest")
    if tar -cf - -C "$MNT/host/t/$snap/go.pxar" . 2>>"$D/tar.err" | "$BR" tarmanifest /dev/stdin | cmp -s - "$D/src.manifest"; then
      count "tar$1" ok
    else count "tar$1" BAD; fi
  done
}
image_reader() {
  while left; do
    if [ "$(sha256sum <"$MNT/host/i/latest/x.img" | cut -d' ' -f1)" = "$imgsum" ]; then
      count "img$1" ok
    else count "img$1" BAD; fi
  done
}
verifier() {
  local st
  while left; do
    echo start >"$MNT/.jobs/verify/control" || { count verify BAD; sleep 5; continue; }
    while st=$(jq -r .state "$MNT/.jobs/verify/status") && [ "$st" = queued ] || [ "$st" = running ]; do sleep 2; done
    if [ "$st" = ok ]; then count verify ok; else count verify "BAD:$st"; fi
  done
}
backer() {
  while left; do
    if "$CAIRN" --store "$ST" backup --id t --no-sync "go.pxar:$DATA" >/dev/null 2>>"$D/backup.err"; then
      count backup ok
    else count backup BAD; fi
  done
}

start=$(date +%s)
for k in 1 2 3 4 5 6 7 8; do tar_reader $k & done
for k in 1 2 3 4; do image_reader $k & done
verifier &
backer &
echo -e "seconds\trss_mib" >"$D/rss.tsv"
while left; do
  printf '%d\t%s\n' $(($(date +%s) - start)) "$(rss)" >>"$D/rss.tsv"
  sleep 10
done
wait
printf 'soak of %d s: RSS start %s MiB, peak (VmHWM) %s MiB, end %s MiB (samples: %s)\n' "$SOAK" \
  "$(awk 'NR == 2 { print $2 }' "$D/rss.tsv")" "$(awk '/VmHWM/ { printf "%.0f", $2 / 1024 }' "/proc/$pid/status")" "$(rss)" "$D/rss.tsv"
awk 'NR > 1 { printf "%s:%s ", $1, $2 } END { print "" }' "$D/rss.tsv"
for f in "$D"/res/*; do
  printf '%s: %d ok, %d bad\n' "$(basename "$f")" "$(grep -c '^ok$' "$f")" "$(grep -vc '^ok$' "$f")"
done
echo 2 >/proc/sys/vm/drop_caches
sleep 10
echo "after echo 2 > drop_caches (10 s): RSS $(rss) MiB; .stats: $(jq -c '{tree_entries}' "$MNT/.stats" 2>/dev/null)"
# echo 2 frees no inode that still has pages in the page cache (files the
# tar readers read, cached listings): echo 3 drops those pages first.
echo 3 >/proc/sys/vm/drop_caches
sleep 10
echo "after echo 3 > drop_caches (10 s): RSS $(rss) MiB; .stats: $(jq -c '{tree_entries}' "$MNT/.stats" 2>/dev/null)"
"$CAIRN" umount "$MNT"
trap - EXIT
bad=$(cat "$D"/res/* | grep -vc '^ok$' || true)
rm -rf "$D"
[ "$bad" = 0 ]
