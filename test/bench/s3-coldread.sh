#!/usr/bin/env bash
# Cold sequential read through the mount of a store in a bucket: $MB MiB
# (512) of random bytes backed up once into MinIO on loopback, reached
# through test/bench/s3proxy adding $DELAY (20ms) to every request, then
# read through the mount with dd (its output checked by sha256sum); page
# cache dropped (MinIO's files too) and the on-disk chunk cache emptied
# before each read. For each build in $CAIRNS (default: this tree's),
# alternated round by round so that each pair runs in the same minute,
# one line: the mount daemon's CPU seconds during the read (user+system,
# from /proc), MinIO's and the proxy's, MB/s, the GETs the proxy counted
# and the load average. CPU seconds are the figure a shared machine
# distorts least.
#   test/bench/s3-coldread.sh                               (as root)
#   CAIRNS="/tmp/cairn-old /tmp/cairn-new" ROUNDS=3 test/bench/s3-coldread.sh
#   PROFILE=1 ...: a CPU profile of each mount daemon, $BENCH_DIR/coldread-ROUND-BUILD.pprof
source "$(dirname "$0")/lib.sh"
need curl fusermount
MINIO=${CAIRN_MINIO:-$(command -v minio || echo "$HOME/.cache/cairn/minio/minio")}
[ -x "$MINIO" ] || { echo "no MinIO binary: set CAIRN_MINIO" >&2; exit 2; }
can_drop_caches || { echo "cold reads need root (drop_caches)" >&2; exit 2; }
DELAY=${DELAY:-20ms} MB=${MB:-512} ROUNDS=${ROUNDS:-2}
if [ -z "${CAIRNS:-}" ]; then build_cairn; CAIRNS=$CAIRN; fi
read -ra builds <<<"$CAIRNS"
(cd "$ROOT" && go build -o "$BENCH_DIR/s3proxy" ./test/bench/s3proxy)
cd "$BENCH_DIR"
data_random rand.img "$MB"
bytes=$(size_of rand.img) want=$(sha256sum <rand.img)

free_port() { # a TCP port nothing on loopback listens on
  local p
  while :; do
    p=$((20000 + RANDOM % 40000))
    (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { echo "$p"; return; }
  done
}
s3=$(free_port) px=$(free_port)
export AWS_ACCESS_KEY_ID=bench$RANDOM AWS_SECRET_ACCESS_KEY=bench-secret-$RANDOM$RANDOM
rm -rf coldread-minio coldread-store && mkdir -p coldread-minio coldread-mnt
MINIO_ROOT_USER=$AWS_ACCESS_KEY_ID MINIO_ROOT_PASSWORD=$AWS_SECRET_ACCESS_KEY MINIO_BROWSER=off \
  "$MINIO" server --quiet --address "127.0.0.1:$s3" coldread-minio >coldread-minio.log 2>&1 &
minio_pid=$!
"$BENCH_DIR/s3proxy" -listen "127.0.0.1:$px" -target "http://127.0.0.1:$s3" -delay "$DELAY" 2>coldread-proxy.log &
proxy_pid=$!
cleanup() {
  fusermount -u coldread-mnt 2>/dev/null || true
  kill "$proxy_pid" "$minio_pid" 2>/dev/null || true
}
trap cleanup EXIT
for ((i = 0; i < 300; i++)); do curl -sf "http://127.0.0.1:$s3/minio/health/ready" >/dev/null && break; sleep 0.1; done
curl -sf --aws-sigv4 "aws:amz:us-east-1:s3" --user "$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY" \
  -X PUT "http://127.0.0.1:$s3/bench"

"${builds[0]}" --store coldread-store init --s3 s3://bench/coldread --endpoint "http://127.0.0.1:$px" --path-style >/dev/null
"${builds[0]}" --store coldread-store backup -q --id r --no-sync "x.img:$(readlink -f rand.img)"

cpu() { awk '{ print $14 + $15 }' "/proc/$1/stat"; } # clock ticks, user+system
secs() { awk -v a="$1" -v b="$2" -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.2f", (b - a) / hz }'; }

read_once() { # read_once ROUND BUILD_INDEX
  local cairn=${builds[$2]} prof=
  [ "${PROFILE:-0}" = 1 ] && prof=$BENCH_DIR/coldread-$1-$2.pprof
  rm -rf coldread-store/.chunk-cache
  CAIRN_CPUPROFILE=$prof "$cairn" --store coldread-store mount coldread-mnt 2>>coldread-mount.log &
  local pid=$! f=coldread-mnt/host/r/latest/x.img
  wait_mounted coldread-mnt 60
  for ((i = 0; i < 100; i++)); do [ -e "$f" ] && break; sleep 0.1; done
  drop_caches
  curl -sf "http://127.0.0.1:$px/-/s3proxy-stats?reset=1" >/dev/null
  local c0 m0 p0 s e got
  c0=$(cpu "$pid") m0=$(cpu "$minio_pid") p0=$(cpu "$proxy_pid") s=$(now)
  got=$(dd if="$f" bs=1M status=none | sha256sum)
  e=$(now)
  printf 'round %d  %-28s daemon %5s CPU-s  minio %5s  proxy %5s  %7s MB/s  %s GETs  load %s\n' \
    "$1" "$cairn" "$(secs "$c0" "$(cpu "$pid")")" "$(secs "$m0" "$(cpu "$minio_pid")")" \
    "$(secs "$p0" "$(cpu "$proxy_pid")")" "$(rate "$bytes" "$s" "$e")" \
    "$(curl -sf "http://127.0.0.1:$px/-/s3proxy-stats" | grep -o '"GET":[0-9]*' | head -1 | cut -d: -f2)" \
    "$(cut -d' ' -f1-3 /proc/loadavg)"
  [ "$got" = "$want" ] || { echo "the read differs from the source" >&2; exit 1; }
  unmount_wait "$pid"
}

unmount_wait() { # unmount_wait PID: unmounts (lazily if still busy after 10 s) and waits for PID
  for ((i = 0; i < 100; i++)); do fusermount -u coldread-mnt 2>/dev/null && break; sleep 0.1; done
  mountpoint -q coldread-mnt && umount -l coldread-mnt
  wait "$1"
}

for ((r = 1; r <= ROUNDS; r++)); do
  for ((b = 0; b < ${#builds[@]}; b++)); do read_once "$r" "$b"; done
done
