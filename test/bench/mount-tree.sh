#!/usr/bin/env bash
# find and tar of a tree through the mount, side by side: OLD (a cairn
# binary, e.g. a build of main) against the build of this worktree,
# ROUNDS rounds alternating, the page cache dropped before each step.
# Per step: wall seconds, the daemon's CPU seconds (utime+stime), its
# peak RSS and the archive entries it holds (.stats tree_entries), and
# its RSS after `echo 2 > drop_caches` (the kernel forgets its entries).
# DEBUG=1 adds one run of each with --debug and counts the requests.
# STEPS="find tar lsr" adds ls -lR.
#
#   OLD=/tmp/raw-old TREE=/var/tmp/cairn-bench-harness/data ROUNDS=3 test/bench/mount-tree.sh
#
# The store (one backup of TREE) is kept in $BENCH_DIR/mount-tree.
source "$(dirname "$0")/lib.sh"

TREE=$(readlink -f "${TREE:-/var/tmp/cairn-bench-harness/data}")
OLD=${OLD:?OLD=path of the cairn binary to compare with}
ROUNDS=${ROUNDS:-3} DEBUG=${DEBUG:-0}
D=$BENCH_DIR/mount-tree ST=$BENCH_DIR/mount-tree/store MNT=$BENCH_DIR/mount-tree/mnt
build_cairn
mkdir -p "$D" "$MNT"
if [ ! -f "$D/store.complete" ]; then
  rm -rf "$ST"
  "$CAIRN" --store "$ST" init >/dev/null
  "$CAIRN" --store "$ST" backup --id t --no-sync "t.pxar:$TREE" >/dev/null 2>&1
  touch "$D/store.complete"
fi
TICK=$(getconf CLK_TCK)
cpu() { awk -v t="$TICK" '{ printf "%.2f", ($14 + $15) / t }' "/proc/$1/stat"; }
kib() { awk -v k="$2" '$1 == k":" { print int($2 / 1024) }' "/proc/$1/status"; }

# run BIN LABEL STEP [--debug]
run() {
  local bin=$1 label=$2 step=$3 pid s e c0 c1 out
  shift 3
  "$bin" --store "$ST" mount "$@" "$MNT" >"$D/log.$label.$step" 2>&1 &
  pid=$!
  wait_mounted "$MNT" 60
  local P=$MNT/host/t/latest/t.pxar
  drop_caches
  c0=$(cpu "$pid") s=$(now)
  case $step in
    find) out=$(find "$P" | wc -l) ;;
    tar) out=$(tar -cf - -C "$P" . | wc -c) ;;
    lsr) out=$(ls -lR "$P" | wc -l) ;;
  esac
  e=$(now) c1=$(cpu "$pid")
  local held hwm rss
  held=$(sed -n 's/.*"tree_entries": *\([0-9]*\).*/\1/p' "$MNT/.stats")
  hwm=$(kib "$pid" VmHWM)
  echo 2 > /proc/sys/vm/drop_caches
  sleep 2
  rss=$(kib "$pid" VmRSS)
  printf '%-4s %-5s %6.2f s  daemon %5.2f CPU-s  peak %4s MiB  entries %6s  after drop 2: %4s MiB  (%s)\n' \
    "$label" "$step" "$(awk -v s="$s" -v e="$e" 'BEGIN { print e - s }')" "$(awk -v a="$c0" -v b="$c1" 'BEGIN { print b - a }')" \
    "$hwm" "${held:-?}" "$rss" "$out"
  kill -INT "$pid" # the daemon unmounts (its .jobs submount first) and exits
  wait "$pid" || true
}

STEPS=${STEPS:-find tar}
for ((r = 1; r <= ROUNDS; r++)); do
  echo "round $r"
  for step in $STEPS; do
    run "$OLD" old "$step"
    run "$CAIRN" new "$step"
  done
done
if [ "$DEBUG" = 1 ]; then
  for step in $STEPS; do
    for v in old:"$OLD" new:"$CAIRN"; do
      run "${v#*:}" "${v%%:*}" "$step" --debug >/dev/null
      printf '%s %s requests: ' "${v%%:*}" "$step"
      grep -o 'rx [0-9]*: [A-Z_]*' "$D/log.${v%%:*}.$step" | awk '{ n[$3]++ } END { for (k in n) printf "%s %d  ", k, n[k]; print "" }'
    done
  done
fi
