#!/usr/bin/env bash
# Copy between stores: `cairn sync` vs `restic copy`, side by side in one
# run, of the same 10 snapshots of Go's source tree ($(go env GOROOT)/src)
# with ~1% of its files changed from one snapshot to the next.
#   cairn local -> local      vs  restic copy local repo -> local repo
#   cairn local -> MinIO      vs  restic copy local repo -> MinIO repo
# (the MinIO rows when $CAIRN_MINIO, or /var/tmp/minio-bin/minio, is a
# minio binary and this cairn has `init --s3`; MinIO runs on 127.0.0.1
# with a temporary data directory and is stopped at the end).
#   test/bench/sync.sh        (data under $BENCH_DIR; SNAPS=10 CHANGE_PERMILLE=10)
source "$(dirname "$0")/lib.sh"
shopt -s inherit_errexit # a failing command in $(…) ends the script
need restic
build_cairn
SNAPS=${SNAPS:-10}
CHANGE_PERMILLE=${CHANGE_PERMILLE:-10}
W="$BENCH_DIR/sync"
rm -rf "$W" && mkdir -p "$W"
cd "$W"
cp -a "$(go env GOROOT)/src" tree
mapfile -t files < <(find tree -type f -size +0 | sort)
step=$(( 1000 / CHANGE_PERMILLE ))
echo "Go tree: ${#files[@]} files, $(du -sb tree | cut -f1) bytes; $SNAPS snapshots, every ${step}th file changed between them"

"$CAIRN" --store a init >/dev/null
restic init --repo ra -q >/dev/null
for ((i = 0; i < SNAPS; i++)); do
  if ((i > 0)); then # ~1%: every step-th file, a different offset each time
    for ((k = i % step; k < ${#files[@]}; k += step)); do
      printf '\n// changed in snapshot %d\n' "$i" >> "${files[k]}"
    done
  fi
  "$CAIRN" --store a backup --type host --id go --time "2024-01-01T00:$(printf %02d "$i"):00Z" --no-sync go.pxar:tree >/dev/null
  restic --repo ra -q backup --host go --time "2024-01-01 00:$(printf %02d "$i"):00" tree >/dev/null
done
bytes=$(( $(du -sb tree | cut -f1) * SNAPS )) # data the snapshots hold, as MB/s is reported

row() { # row LABEL SECONDS
  printf '%-44s %8.2f s %10s MB/s\n' "$1" "$2" "$(awk -v b="$bytes" -v t="$2" 'BEGIN { printf "%.1f", b / t / 1e6 }')"
}
secs() { local s e; s=$(now); "$@" >/dev/null; e=$(now); awk -v s="$s" -v e="$e" 'BEGIN { print e - s }'; }

rm -rf b rb
"$CAIRN" --store b init >/dev/null
RESTIC_FROM_PASSWORD=$RESTIC_PASSWORD restic init --repo rb --from-repo ra --copy-chunker-params -q >/dev/null
sync
c=$(secs "$CAIRN" sync --from a --to b)
r=$(secs env RESTIC_FROM_PASSWORD="$RESTIC_PASSWORD" restic --repo rb -q copy --from-repo ra)
rl=$r
row "cairn sync local -> local ($SNAPS snapshots)" "$c"
row "restic copy local -> local ($SNAPS snapshots)" "$r"
echo "ratio local -> local: cairn is $(awk -v c="$c" -v r="$r" 'BEGIN { printf "%.1f", r / c }')x restic copy"
again=$(secs "$CAIRN" sync --from a --to b)
row "cairn sync again (nothing to copy)" "$again"

MINIO=${CAIRN_MINIO:-/var/tmp/minio-bin/minio}
if [ -x "$MINIO" ] && "$CAIRN" init --help 2>&1 | grep -q -- --s3; then
  port=$(( 20000 + RANDOM % 20000 ))
  export MINIO_ROOT_USER=benchadmin MINIO_ROOT_PASSWORD=benchsecret123
  export AWS_ACCESS_KEY_ID=$MINIO_ROOT_USER AWS_SECRET_ACCESS_KEY=$MINIO_ROOT_PASSWORD
  mkdir -p minio-data
  "$MINIO" server --quiet --address "127.0.0.1:$port" minio-data >minio.log 2>&1 &
  minio_pid=$!
  trap 'kill $minio_pid 2>/dev/null; wait $minio_pid 2>/dev/null' EXIT
  for ((i = 0; i < 100; i++)); do curl -fs "http://127.0.0.1:$port/minio/health/live" >/dev/null && break; sleep 0.1; done
  # a bucket for cairn (restic makes its own): a signed PUT, the keys
  # handed to curl in a config on a pipe, not on its command line
  curl -fsS -X PUT --aws-sigv4 "aws:amz:us-east-1:s3" -K <(printf 'user = "%s:%s"\n' "$AWS_ACCESS_KEY_ID" "$AWS_SECRET_ACCESS_KEY") \
    "http://127.0.0.1:$port/cairn"
  "$CAIRN" --store c init --s3 "s3://cairn/store" --endpoint "http://127.0.0.1:$port" --path-style >/dev/null
  RESTIC_FROM_PASSWORD=$RESTIC_PASSWORD restic init --repo "s3:http://127.0.0.1:$port/restic" --from-repo ra --copy-chunker-params -q >/dev/null
  c=$(secs "$CAIRN" sync --from a --to c)
  r=$(secs env RESTIC_FROM_PASSWORD="$RESTIC_PASSWORD" restic --repo "s3:http://127.0.0.1:$port/restic" -q copy --from-repo ra)
  row "cairn sync local -> MinIO" "$c"
  row "restic copy local -> MinIO" "$r"
  echo "ratio local -> MinIO: cairn is $(awk -v c="$c" -v r="$r" 'BEGIN { printf "%.1f", r / c }')x restic copy local -> MinIO"
  echo "ratio (the issue's target): cairn local -> MinIO is $(awk -v c="$c" -v r="$rl" 'BEGIN { printf "%.1f", r / c }')x restic copy local -> local"
  rm -rf d && "$CAIRN" --store d init >/dev/null
  row "cairn sync MinIO -> local" "$(secs "$CAIRN" sync --from c --to d)"
else
  echo "(no MinIO rows: $MINIO missing or this cairn has no init --s3)"
fi
