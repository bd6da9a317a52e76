#!/usr/bin/env bash
# A store in a bucket vs a local store: image backup throughput (first and
# second run), cold sequential read with `cairn cat` and through the mount,
# and `tar` of Go's tree through the mount; MinIO on loopback, direct and
# through a proxy that adds $DELAY (20ms) to every request.
#   CAIRN_MINIO=/var/tmp/minio-bin/minio test/bench/s3.sh   (as root; data under $BENCH_DIR)
source "$(dirname "$0")/lib.sh"
need curl fusermount
MINIO=${CAIRN_MINIO:-$(command -v minio || echo "$HOME/.cache/cairn/minio/minio")}
[ -x "$MINIO" ] || { echo "no MinIO binary: set CAIRN_MINIO" >&2; exit 2; }
DELAY=${DELAY:-20ms}
MB=${MB:-1024}
build_cairn
(cd "$ROOT" && go build -o "$BENCH_DIR/s3proxy" ./test/bench/s3proxy)
cd "$BENCH_DIR"
data_random rand.img "$MB"
bytes=$(size_of rand.img)
src=$(go env GOROOT)
tbytes=$(du -sb "$src" | cut -f1)

export AWS_ACCESS_KEY_ID=bench$RANDOM AWS_SECRET_ACCESS_KEY=bench-secret-$RANDOM$RANDOM
rm -rf minio-data && mkdir -p minio-data mnt
MINIO_ROOT_USER=$AWS_ACCESS_KEY_ID MINIO_ROOT_PASSWORD=$AWS_SECRET_ACCESS_KEY MINIO_BROWSER=off \
  "$MINIO" server --quiet --address 127.0.0.1:19000 minio-data >minio.log 2>&1 &
minio_pid=$!
"$BENCH_DIR/s3proxy" -listen 127.0.0.1:19100 -target http://127.0.0.1:19000 -delay "$DELAY" 2>proxy.log &
proxy_pid=$!
cleanup() { "$CAIRN" umount mnt 2>/dev/null || true; kill "$proxy_pid" "$minio_pid" 2>/dev/null || true; }
trap cleanup EXIT
for i in $(seq 100); do curl -sf http://127.0.0.1:19000/minio/health/ready && break; sleep 0.1; done
curl -sf --aws-sigv4 "aws:amz:us-east-1:s3" --user "$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY" -X PUT http://127.0.0.1:19000/bench

mount_read() { # mount_read LABEL STORE FILE
  "$CAIRN" --store "$2" mount --cache-size 1G mnt 2>>mount.log &
  local pid=$!
  wait_mounted mnt 30
  drop_caches
  timed "$1" "$bytes" dd if="mnt/$3" of=/dev/null bs=1M status=none
  "$CAIRN" umount mnt; wait "$pid"
}
mount_tar() { # mount_tar LABEL STORE DIR
  "$CAIRN" --store "$2" mount mnt 2>>mount.log &
  local pid=$!
  wait_mounted mnt 30
  drop_caches
  timed "$1" "$tbytes" sh -c "cd 'mnt/$3' && tar cf - . | wc -c"
  "$CAIRN" umount mnt; wait "$pid"
}

for kind in local minio minio+$DELAY; do
  st=store-$kind
  rm -rf "$st"
  case $kind in
    local) "$CAIRN" --store "$st" init >/dev/null ;;
    minio) "$CAIRN" --store "$st" init --s3 s3://bench/direct --endpoint http://127.0.0.1:19000 --path-style >/dev/null ;;
    *) "$CAIRN" --store "$st" init --s3 s3://bench/delayed --endpoint http://127.0.0.1:19100 --path-style >/dev/null ;;
  esac
  cat rand.img >/dev/null
  for run in first second; do
    timed "$kind: backup ($run)" "$bytes" "$CAIRN" --store "$st" backup --id img --no-sync x.img:rand.img
  done
  "$CAIRN" --store "$st" backup --id tree --no-sync go.pxar:"$src" >/dev/null 2>&1
  rm -rf "$st/.chunk-cache"; drop_caches
  timed "$kind: cat (cold)" "$bytes" "$CAIRN" --store "$st" cat host/img x.img
  rm -rf "$st/.chunk-cache"
  mount_read "$kind: mount read (cold)" "$st" host/img/latest/x.img
  rm -rf "$st/.chunk-cache"
  mount_tar "$kind: mount tar of Go's tree (cold)" "$st" host/tree/latest/go.pxar
done
