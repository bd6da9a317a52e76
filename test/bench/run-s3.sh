# The side-by-side benchmark on object storage (sourced by run.sh when
# S3=1): cairn and restic (its S3 backend) on one MinIO on loopback, each
# step twice, the bucket reached directly ("MinIO") and through
# test/bench/s3proxy adding $DELAY (20 ms) to every request ("MinIO +20
# ms"). The steps and their checks are run-steps.sh's; here are what
# differs: where the repositories live (repo, tool_init), what "cold"
# means for a store in a bucket (no_chunk_cache), the sync row, and the
# request counts the proxy keeps.
#
# A cold step drops the page cache (MinIO's files too) and empties
# cairn's on-disk chunk cache (STORE/.chunk-cache: chunks read from the
# bucket) before the mount or restore starts. Both tools keep their metadata: cairn its mirror of the
# snapshot files, restic its cache (RESTIC_CACHE_DIR: index, snapshots
# and tree packs, no file data).
#
# The sync row: `cairn sync` from a local store, `restic copy` from a
# local repository, each holding a backup of the tree and of the image
# (made once per run, untimed), into a fresh store or repository in the
# bucket; checked by `cairn verify` and `restic check --read-data` of the
# copy, which read every chunk back, and the copy's snapshot count.
#
# Through the proxy each record gets the proxy's counts for its step
# ("requests": by method, bytes each way, the most in flight at once,
# answer or body sizes by power-of-two class).

MINIO=${CAIRN_MINIO:-$(command -v minio || echo "$HOME/.cache/cairn/minio/minio")}
DELAY=${DELAY:-20ms}
# free_port: a TCP port nothing on loopback listens on (other jobs on this
# machine may run a MinIO of their own).
free_port() {
  local p
  while :; do
    p=$((20000 + RANDOM % 40000))
    (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { echo "$p"; return; }
  done
}
S3_PORT=${S3_PORT:-$(free_port)} PROXY_PORT=${PROXY_PORT:-$(free_port)}
S3_DIRECT=http://127.0.0.1:$S3_PORT S3_PROXY=http://127.0.0.1:$PROXY_PORT
S3_BUCKET=bench
VARIANTS="minio minio+$DELAY"
if [ "${QUICK:-0}" = 1 ]; then
  # QUICK (CI): the variant through the proxy alone, and the page cache
  # kept (a drop took 8 s on a loaded machine; the figures mean nothing).
  VARIANTS="minio+$DELAY"
  drop_caches() { :; }
fi
MINIO_PID= PROXY_PID=

repo() { # repo TOOL: in this variant ($VARIANT) and round
  case $1 in
    restic) echo "s3:$(endpoint)/$S3_BUCKET/restic-$VARIANT-r$ROUND" ;;
    *) echo "$RUN/repo-$1-$VARIANT" ;;
  esac
}
endpoint() { if [ "$VARIANT" = minio ]; then echo "$S3_DIRECT"; else echo "$S3_PROXY"; fi; }

tool_init() {
  case $1 in
    cairn)
      rm -rf "$(repo cairn)"
      "$CAIRN" --store "$(repo cairn)" init --s3 "s3://$S3_BUCKET/cairn-$VARIANT-r$ROUND" \
        --endpoint "$(endpoint)" --path-style >/dev/null 2>&1 ;;
    restic) restic init --repo "$(repo restic)" -q >/dev/null ;;
  esac
}

# start_s3: MinIO (data in $RUN/minio) with a fresh bucket, and the proxy.
start_s3() {
  [ -x "$MINIO" ] || { echo "no MinIO binary: set CAIRN_MINIO" >&2; exit 2; }
  (cd "$ROOT" && go build -o "$BENCH_DIR/s3proxy" ./test/bench/s3proxy)
  export AWS_ACCESS_KEY_ID=bench$RANDOM AWS_SECRET_ACCESS_KEY=bench-secret-$RANDOM$RANDOM
  export RESTIC_CACHE_DIR=$RUN/restic-cache RESTIC_FROM_PASSWORD=$RESTIC_PASSWORD
  mkdir -p "$RUN/minio"
  MINIO_ROOT_USER=$AWS_ACCESS_KEY_ID MINIO_ROOT_PASSWORD=$AWS_SECRET_ACCESS_KEY MINIO_BROWSER=off \
    "$MINIO" server --quiet --address "127.0.0.1:$S3_PORT" "$RUN/minio" >"$OUT/minio.log" 2>&1 &
  MINIO_PID=$!
  "$BENCH_DIR/s3proxy" -listen "127.0.0.1:$PROXY_PORT" -target "$S3_DIRECT" -delay "$DELAY" 2>"$OUT/proxy.log" &
  PROXY_PID=$!
  local i
  for ((i = 0; i < 300; i++)); do curl -sf "$S3_DIRECT/minio/health/ready" >/dev/null && break; sleep 0.1; done
  kill -0 "$MINIO_PID" 2>/dev/null && kill -0 "$PROXY_PID" 2>/dev/null && curl -sf --aws-sigv4 "aws:amz:us-east-1:s3" --user "$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY" \
    -X PUT "$S3_DIRECT/$S3_BUCKET" || { echo "MinIO did not start (see $OUT/minio.log)" >&2; exit 2; }
}

stop_s3() {
  local p
  for p in $PROXY_PID $MINIO_PID; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null || true; done
  PROXY_PID= MINIO_PID=
}

# no_chunk_cache TOOL: cairn's on-disk chunk cache emptied (the steps
# drop the page cache themselves).
no_chunk_cache() { [ "$1" != cairn ] || rm -rf "$(repo cairn)/.chunk-cache"; }

# measure_begin, measure_extra (run-steps.sh's hooks): through the
# proxy, its counts of the measured command's requests.
measure_begin() { [ "$VARIANT" = minio ] || curl -sf "$S3_PROXY/-/s3proxy-stats?reset=1" >/dev/null; }
measure_extra() {
  [ "$VARIANT" = minio ] || printf '"requests":%s' "$(curl -sf "$S3_PROXY/-/s3proxy-stats?reset=1")"
}

# make_sync_sources: a local cairn store and restic repository holding a
# backup of the tree and of the image, the sync row's sources.
make_sync_sources() {
  SYNC_SRC_CAIRN=$RUN/sync-src-cairn SYNC_SRC_RESTIC=$RUN/sync-src-restic
  rm -rf "$SYNC_SRC_CAIRN" "$SYNC_SRC_RESTIC"
  if [[ " $TOOLS " == *" cairn "* ]]; then
    "$CAIRN" --store "$SYNC_SRC_CAIRN" init >/dev/null
    "$CAIRN" --store "$SYNC_SRC_CAIRN" backup -q --id t --no-sync "go.pxar:$SRC"
    "$CAIRN" --store "$SYNC_SRC_CAIRN" backup -q --id i --no-sync "x.img:$IMG"
  fi
  if [[ " $TOOLS " == *" restic "* ]]; then
    restic init --repo "$SYNC_SRC_RESTIC" -q >/dev/null
    restic --repo "$SYNC_SRC_RESTIC" -q backup --tag tree "$SRC" >/dev/null
    restic --repo "$SYNC_SRC_RESTIC" -q backup --tag img "$IMG" >/dev/null
  fi
}

# step_sync TOOL STEP: the local source copied into a new store or
# repository in the bucket.
step_sync() {
  local r; r=$(repo "$1")-sync
  case $1 in
    cairn)
      rm -rf "$r"
      "$CAIRN" --store "$r" init --s3 "s3://$S3_BUCKET/cairn-sync-$VARIANT-r$ROUND" \
        --endpoint "$(endpoint)" --path-style >/dev/null 2>&1
      SYNCED=$r checked cairn "$2" synced_cairn -- "$CAIRN" sync -q --from "$SYNC_SRC_CAIRN" --to "$r"
      rm -rf "$r" ;;
    restic)
      r=s3:$(endpoint)/$S3_BUCKET/restic-sync-$VARIANT-r$ROUND
      restic init --repo "$r" -q >/dev/null
      SYNCED=$r checked restic "$2" synced_restic -- restic --repo "$r" -q copy --from-repo "$SYNC_SRC_RESTIC" ;;
  esac
}
synced_cairn() {
  [ "$("$CAIRN" --store "$SYNCED" snapshots --json | grep -c '"snapshot":')" = 2 ] &&
    "$CAIRN" --store "$SYNCED" verify -q
}
synced_restic() {
  [ "$(restic --repo "$SYNCED" snapshots --json | grep -o '"short_id"' | wc -l)" = 2 ] &&
    restic --repo "$SYNCED" -q check --read-data >/dev/null
}

s3_header() {
  echo "Object storage: MinIO ($("$MINIO" --version | head -1 | cut -d' ' -f3-)) on loopback, one drive" \
    "on the same disk; each step direct (\"MinIO\") and through test/bench/s3proxy adding $DELAY to" \
    "every request (\"MinIO +${DELAY%ms} ms\"). Cold: page cache dropped and cairn's on-disk chunk cache" \
    "emptied; cairn keeps its mirror of the snapshot files, restic its cache (metadata, no file data)."
}

# s3_labels: LABEL and BYTES of every variant's steps (VARIANT/STEP).
s3_labels() {
  local v name s
  for v in $VARIANTS; do
    if [ "$v" = minio ]; then name=MinIO; else name="MinIO +${DELAY%ms} ms"; fi
    for s in backup-tree backup-image backup-rand backup-tree2 mount-image mount-rand mount-tar restore-tree restore-image; do
      LABEL[$v/$s]="$name: ${LABEL[$s]/ (cairn --no-sync; cold)/ (cold)}"
      BYTES[$v/$s]=${BYTES[$s]}
    done
    LABEL[$v/sync]="$name: cairn sync / restic copy of the tree and the image from a local repository (cold)"
  done
}

# s3_round: one round of every step, in each variant.
s3_round() {
  local t
  for VARIANT in $VARIANTS; do
    for t in $ORDER; do [ -n "${NA_TOOL[$t]:-}" ] || tool_init "$t"; done
    s3_step backup-tree cold step_backup tree 1
    s3_step backup-image warm_img step_backup img 1
    if [ "$RAND_MB" -gt 0 ]; then s3_step backup-rand warm_rand step_backup rand 1; fi
    touch_some
    s3_step backup-tree2 warm_tree step_backup tree 2
    s3_step mount-image no_chunk_cache step_mount_image img "$IMG"
    if [ "$RAND_MB" -gt 0 ]; then s3_step mount-rand no_chunk_cache step_mount_image rand "$RAND"; fi
    s3_step mount-tar no_chunk_cache step_mount_tar
    s3_step restore-tree no_chunk_cache step_restore tree
    s3_step restore-image no_chunk_cache step_restore img
    s3_step sync cold step_sync
    rm -rf "$(repo cairn)"
    # disk space: this variant's objects go, from MinIO's drive itself
    rm -rf "$RUN/minio/$S3_BUCKET/"{cairn,cairn-sync,restic,restic-sync}"-$VARIANT-r$ROUND"
  done
}

s3_step() { local step=$1; shift; run_step "$VARIANT/$step" "$@"; } # s3_step STEP PREP FUNC ARGS…
