#!/usr/bin/env bash
# Copy between stores: `cairn sync` vs `restic copy`, side by side in one
# run, of the same 10 snapshots of Go's source tree ($(go env GOROOT)/src)
# with ~1% of its files changed from one snapshot to the next.
#   cairn local -> local      vs  restic copy local repo -> local repo
#   cairn local -> MinIO      vs  restic copy local repo -> MinIO repo
# (the MinIO rows when $CAIRN_MINIO, or /var/tmp/minio-bin/minio, is a
# minio binary and this cairn has `init --s3`; MinIO runs on 127.0.0.1
# with a temporary data directory and is stopped at the end).
#   test/bench/sync.sh   (data under $BENCH_DIR; SNAPS=10 CHANGE_PERMILLE=10 ROUNDS=2;
#                         REUSE=1 keeps the source store and repository of the last run)
source "$(dirname "$0")/lib.sh"
shopt -s inherit_errexit # a failing command in $(…) ends the script
need restic
build_cairn
SNAPS=${SNAPS:-10}
CHANGE_PERMILLE=${CHANGE_PERMILLE:-10}
W="$BENCH_DIR/sync"
ROUNDS=${ROUNDS:-2} # each copy runs ROUNDS times into a fresh target; the best is shown
if [ "${REUSE:-0}" = 1 ] && [ -f "$W/source-done" ]; then
  cd "$W" && rm -rf b rb c d minio-data
  echo "(REUSE=1: the source store and repository of the last run)"
else
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
touch source-done
fi
bytes=$(( $(du -sb tree | cut -f1) * SNAPS )) # data the snapshots hold, as MB/s is reported

row() { # row LABEL SECONDS
  printf '%-44s %8.2f s %10s MB/s\n' "$1" "$2" "$(awk -v b="$bytes" -v t="$2" 'BEGIN { printf "%.1f", b / t / 1e6 }')"
}
secs() { local s e; s=$(now); "$@" >/dev/null; e=$(now); awk -v s="$s" -v e="$e" 'BEGIN { print e - s }'; }
minof() { awk -v a="$1" -v b="$2" 'BEGIN { print (b == "" || a < b) ? a : b }'; }
ratio() { awk -v c="$1" -v r="$2" 'BEGIN { printf "%.1f", r / c }'; }
export RESTIC_FROM_PASSWORD=$RESTIC_PASSWORD

# best CMD...: runs "fresh_X; copy_X" ROUNDS times, prints the best seconds
best() {
  local b="" t r
  for ((r = 0; r < ROUNDS; r++)); do
    "$1" "$r"
    sync
    t=$(secs "$2" "$r")
    b=$(minof "$t" "$b")
  done
  echo "$b"
}
fresh_cb() { rm -rf b && "$CAIRN" --store b init >/dev/null; }
copy_cb() { "$CAIRN" sync --from a --to b; }
fresh_rb() { rm -rf rb && restic init --repo rb --from-repo ra --copy-chunker-params -q >/dev/null; }
copy_rb() { restic --repo rb -q copy --from-repo ra; }

c=$(best fresh_cb copy_cb)
rl=$(best fresh_rb copy_rb)
row "cairn sync local -> local ($SNAPS snapshots)" "$c"
row "restic copy local -> local ($SNAPS snapshots)" "$rl"
echo "ratio local -> local: cairn is $(ratio "$c" "$rl")x restic copy"
row "cairn sync again (nothing to copy)" "$(secs "$CAIRN" sync --from a --to b)"

MINIO=${CAIRN_MINIO:-/var/tmp/minio-bin/minio}
if [ -x "$MINIO" ] && "$CAIRN" init --help 2>&1 | grep -- --s3 >/dev/null; then
  port=$(( 20000 + RANDOM % 20000 ))
  S3=http://127.0.0.1:$port
  export MINIO_ROOT_USER=benchadmin MINIO_ROOT_PASSWORD=benchsecret123
  export AWS_ACCESS_KEY_ID=$MINIO_ROOT_USER AWS_SECRET_ACCESS_KEY=$MINIO_ROOT_PASSWORD
  mkdir -p minio-data
  "$MINIO" server --quiet --address "127.0.0.1:$port" minio-data >minio.log 2>&1 &
  minio_pid=$!
  trap 'kill $minio_pid 2>/dev/null; wait $minio_pid 2>/dev/null' EXIT
  for ((i = 0; i < 100; i++)); do curl -fs "$S3/minio/health/live" >/dev/null && break; sleep 0.1; done
  # a bucket for cairn (restic makes its own): a signed PUT, the keys
  # handed to curl in a config on a pipe, not on its command line
  curl -fsS -X PUT --aws-sigv4 "aws:amz:us-east-1:s3" -K <(printf 'user = "%s:%s"\n' "$AWS_ACCESS_KEY_ID" "$AWS_SECRET_ACCESS_KEY") "$S3/cairn"
  # each round a fresh prefix (cairn) or bucket (restic) on the one server
  fresh_cm() { rm -rf c && "$CAIRN" --store c init --s3 "s3://cairn/r$1" --endpoint "$S3" --path-style >/dev/null; }
  copy_cm() { "$CAIRN" sync --from a --to c; }
  fresh_rm() { restic init --repo "s3:$S3/restic$1" --from-repo ra --copy-chunker-params -q >/dev/null; }
  copy_rm() { restic --repo "s3:$S3/restic$1" -q copy --from-repo ra; }
  c=$(best fresh_cm copy_cm)
  r=$(best fresh_rm copy_rm)
  row "cairn sync local -> MinIO" "$c"
  row "restic copy local -> MinIO" "$r"
  echo "ratio local -> MinIO: cairn is $(ratio "$c" "$r")x restic copy local -> MinIO"
  echo "ratio (the issue's target): cairn local -> MinIO is $(ratio "$c" "$rl")x restic copy local -> local"
  rm -rf d && "$CAIRN" --store d init >/dev/null
  row "cairn sync MinIO -> local" "$(secs "$CAIRN" sync --from c --to d)"
else
  echo "(no MinIO rows: $MINIO missing or this cairn has no init --s3)"
fi
