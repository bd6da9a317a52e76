#!/usr/bin/env bash
# Scale on object storage: a bucket on MinIO (loopback) holding 10,000
# snapshots (100 groups of 100) and SIZES chunks, made by
# test/bench/s3gen (tiny valid chunks, every tenth unreferenced, each
# snapshot one pxar archive referring to chunks/1000 of them: 10
# references per chunk; no real backups). At each size:
#   - `cairn gc --atime-cutoff 0` (after s3gen -garbage put the swept
#     chunks back, so the sweep deletes a tenth of the chunks);
#   - `cairn snapshots` on a fresh mirror (a store directory attached
#     to the bucket, so the first refresh downloads every snapshot's
#     files), then again (warm: the refresh lists and finds nothing new);
#   - `cairn mount --daemon` on another fresh mirror (ready once its
#     refresh is done) and `find MNT -maxdepth 4` (every snapshot's
#     archive: TYPE/ID/TIME/ARCHIVE), cold then warm, with the daemon's
#     CPU and RSS, and the daemon's CPU and requests over the next
#     minute, idle (it refreshes its mirror every 30 s).
# Each line gives wall seconds, CPU seconds (user+system), peak RSS and
# the S3 requests by kind, counted by test/bench/s3proxy, which cairn
# reaches the bucket through (adding DELAY to each request, 0 by
# default; s3gen goes to MinIO directly).
#
#   SIZES="100000 300000 1000000" test/bench/s3-scale.sh   (as root: FUSE)
#
# The bucket is kept in $S3SCALE_DIR (/var/tmp/cairn-s3scale) with the
# number of chunks it holds: a later run puts only the chunks it lacks
# (MinIO takes ~450 tiny PUTs/s on a loaded 2-core machine, about 2 ms
# of its CPU each: ~40 min for a million) and the snapshots again, and
# before the GC puts back only the garbage an earlier GC swept. Sizes
# must grow from run to run.
source "$(dirname "$0")/lib.sh"
need curl fusermount jq
MINIO=${CAIRN_MINIO:-$(command -v minio || echo "$HOME/.cache/cairn/minio/minio")}
[ -x "$MINIO" ] || { echo "no MinIO binary: set CAIRN_MINIO" >&2; exit 2; }
SIZES=${SIZES:-"100000 300000"}
JOBS=${JOBS:-64}
GC=${GC:-1} # 0: measure snapshots and the mount only
D=${S3SCALE_DIR:-/var/tmp/cairn-s3scale}
PORT=${PORT:-19300}
DELAY=${DELAY:-0s}
EP=http://127.0.0.1:$PORT EPP=http://127.0.0.1:$((PORT + 1))
# fixed: the cached MinIO data directory is kept with them
export AWS_ACCESS_KEY_ID=s3scale AWS_SECRET_ACCESS_KEY=s3scale-secret
build_cairn
(cd "$ROOT" && go build -o "$BENCH_DIR/s3gen" ./test/bench/s3gen && go build -o "$BENCH_DIR/s3proxy" ./test/bench/s3proxy)
GEN=$BENCH_DIR/s3gen
mkdir -p "$D/minio-data" "$D/mnt"
cd "$D"

MINIO_ROOT_USER=$AWS_ACCESS_KEY_ID MINIO_ROOT_PASSWORD=$AWS_SECRET_ACCESS_KEY MINIO_BROWSER=off \
  "$MINIO" server --quiet --address "127.0.0.1:$PORT" minio-data >minio.log 2>&1 &
minio_pid=$!
"$BENCH_DIR/s3proxy" -listen "127.0.0.1:$((PORT + 1))" -target "$EP" -delay "$DELAY" 2>proxy.log &
proxy_pid=$!
cleanup() {
  mountpoint -q mnt && { "$CAIRN" umount mnt || umount mnt; }
  kill "$proxy_pid" "$minio_pid" 2>/dev/null || true
}
trap cleanup EXIT
for _ in $(seq 300); do curl -sf "$EP/minio/health/ready" && break; sleep 0.2; done
curl -s --aws-sigv4 "aws:amz:us-east-1:s3" --user "$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY" -X PUT "$EP/bench" >/dev/null
# gen: s3gen's view of the bucket (direct); store: GC's (its mirror kept)
[ -f gen/remote.json ] || "$CAIRN" --store gen init --s3 s3://bench/scale --endpoint "$EP" --path-style >/dev/null
[ -f store/remote.json ] || "$CAIRN" --store store init --s3 s3://bench/scale --endpoint "$EPP" --path-style >/dev/null

# requests: the proxy's request counts, "kind count" lines.
requests() { curl -sf "$EPP/-/s3proxy-stats?kinds=1" | sort; }
# reqdiff BEFORE AFTER: the requests between two counts, by kind.
reqdiff() {
  join -a 2 -e 0 -o 0,1.2,2.2 "$1" "$2" | awk '$3 - $2 > 0 { printf "%s%s %d", sep, $1, $3 - $2; sep = ", " }'
}
# measure LABEL CMD…: runs CMD (output to $D/out) and prints its wall
# and CPU seconds, peak RSS and requests.
measure() {
  local label=$1
  shift
  requests >req.0
  /usr/bin/time -f '%e %U %S %M' -o time.out "$@" >out 2>&1 || { echo "!!! $label failed:" >&2; tail -5 out >&2; exit 1; }
  requests >req.1
  read -r e u s m <time.out
  printf '%-34s %7.1f s  %7.1f CPU-s  %6.0f MiB  requests: %s\n' "$label" "$e" "$(awk -v u="$u" -v s="$s" 'BEGIN { print u + s }')" \
    "$(awk -v m="$m" 'BEGIN { print m / 1024 }')" "$(reqdiff req.0 req.1)"
}
# fresh DIR: a new store directory attached to the bucket, its mirror
# removed (attaching mirrors the bucket already).
fresh() {
  rm -rf "$1"
  "$CAIRN" --store "$1" init --s3 s3://bench/scale --endpoint "$EPP" --path-style >/dev/null
  rm -rf "$1/host" "$1/.cairn-snapindex"
}
dcpu() { awk -v t="$(getconf CLK_TCK)" '{ printf "%.1f", ($14 + $15) / t }' "/proc/$1/stat"; }
rss() { awk '/VmRSS|VmHWM/ { printf "%s %.0f MiB  ", $1, $2 / 1024 }' "/proc/$1/status"; }

have=$(cat generated 2>/dev/null || echo 0)
for n in $SIZES; do
  if ((n < have)); then
    echo "== skip $n chunks: the bucket holds $have (S3SCALE_DIR=another directory for fewer)"
    continue
  fi
  swept_to=$have # the garbage a GC swept: that of the chunks there before
  if ((n > have)); then
    s=$(now)
    "$GEN" -store gen -chunks "$n" -from "$have" -jobs "$JOBS" 2>gen.log
    echo "$n" >generated
    printf '== made %d chunks and 10,000 snapshots in %.0f s (%d chunks were there)\n' "$n" "$(awk -v s="$s" -v e="$(now)" 'BEGIN { print e - s }')" "$have"
    have=$n
  fi
  echo "== $n chunks, 10,000 snapshots ($(du -sh --exclude=.minio.sys minio-data 2>/dev/null | cut -f1) in MinIO's directory)"
  if [ "$GC" = 1 ]; then
    if [ -f swept ] && ((swept_to > 0)); then "$GEN" -store gen -chunks "$swept_to" -garbage -jobs "$JOBS" 2>gen.log; fi
    "$CAIRN" --store store snapshots >/dev/null # GC's mirror as a host that runs it has it
    measure "gc --atime-cutoff 0" "$CAIRN" --store store gc --atime-cutoff 0 -v
    touch swept
    grep -v '^gc: ' out >"gc-$n.log"
    grep -E '^ +(phase|removed|on disk)' out | sed 's/^ */    /'
    measure "gc again (nothing to remove)" "$CAIRN" --store store gc --atime-cutoff 0
    grep -E '^ +phase' out | sed 's/^ */    /'
  fi
  fresh fresh
  measure "snapshots (fresh mirror)" "$CAIRN" --store fresh snapshots
  measure "snapshots (warm)" "$CAIRN" --store fresh snapshots
  got=$(grep -c '^  host/' out || true)
  [ "$got" = 10000 ] || echo "!!! snapshots listed $got snapshots, want 10000" >&2
  fresh fresh2
  measure "mount --daemon (fresh mirror)" "$CAIRN" --store fresh2 mount --daemon mnt
  # the daemon's pid, from `msg="mount running in the background" pid=N`
  pid=$(sed -n 's/.*running in the background"* pid=\([0-9]*\).*/\1/p' out)
  [ -n "$pid" ] || { echo "!!! no daemon pid in mount's output:" >&2; cat out >&2; exit 1; }
  c0=$(dcpu "$pid")
  s=$(now)
  find mnt -maxdepth 4 -name .jobs -prune -o -mindepth 4 -print >find.out
  f1=$(awk -v s="$s" -v e="$(now)" 'BEGIN { print e - s }')
  c1=$(dcpu "$pid")
  got=$(wc -l <find.out)
  s=$(now)
  find mnt -maxdepth 4 -name .jobs -prune -o -mindepth 4 -print >find.out
  f2=$(awk -v s="$s" -v e="$(now)" 'BEGIN { print e - s }')
  c2=$(dcpu "$pid")
  printf '%-34s %7.1f s  %7.1f CPU-s (daemon), %d archives; warm %.1f s, %.1f CPU-s; daemon %s\n' "find mnt -maxdepth 4 (first)" "$f1" \
    "$(awk -v a="$c0" -v b="$c1" 'BEGIN { print b - a }')" "$got" "$f2" "$(awk -v a="$c1" -v b="$c2" 'BEGIN { print b - a }')" "$(rss "$pid")"
  [ "$got" = 10000 ] || echo "!!! find saw $got archives, want 10000" >&2
  # the mount refreshes its mirror every 30 s: its cost over a minute
  requests >req.0
  sleep 60
  requests >req.1
  printf '%-34s %7.1f CPU-s (daemon)  requests: %s; daemon %s\n' "mount idle for 60 s" \
    "$(awk -v a="$c2" -v b="$(dcpu "$pid")" 'BEGIN { print b - a }')" "$(reqdiff req.0 req.1)" "$(rss "$pid")"
  "$CAIRN" umount mnt
  while mountpoint -q mnt; do sleep 0.1; done
  rm -rf fresh fresh2
done
