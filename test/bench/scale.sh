#!/usr/bin/env bash
# How the second backup's memory grows with the number of files: makes
# trees of one-line files (1,000 per directory), backs each up twice with
# the old and the new cairn, and prints the second backup's time and peak
# RSS (VmHWM of the cairn process) side by side.
#
#   OLD=/tmp/cairn-old FILES="250000 1000000" test/bench/scale.sh
#
# OLD: a cairn built from main (cd main && go build -o /tmp/cairn-old
# ./cmd/cairn); the new one is built from this tree. Trees are kept in
# $BENCH_DIR/scale-N (making 1M files takes minutes).
source "$(dirname "$0")/lib.sh"

OLD=${OLD:-/tmp/cairn-old}
FILES=${FILES:-"250000 1000000"}
[ -x "$OLD" ] || { echo "no old binary at $OLD" >&2; exit 2; }
build_cairn

# make_tree DIR N: N one-line files, 1,000 per directory (bash builtins
# only: no process per file).
make_tree() {
  local dir=$1 n=$2 d f
  [ -f "$dir/.complete" ] && return
  rm -rf "$dir"
  for ((d = 0; d < n / 1000; d++)); do
    mkdir -p "$dir/d$d"
    for ((f = 0; f < 1000; f++)); do
      echo "$d $f" > "$dir/d$d/f$f"
    done
  done
  touch "$dir/.complete"
}

# peak LABEL CMD...: runs CMD, prints its wall time and peak RSS.
peak() {
  local label=$1 s e hwm=0 v pid rc=0; shift
  s=$(now)
  "$@" >/dev/null 2>&1 &
  pid=$!
  while kill -0 "$pid" 2>/dev/null; do
    v=$(awk '/VmHWM/ { print $2 }' "/proc/$pid/status" 2>/dev/null) && [ -n "$v" ] && hwm=$v
    sleep 0.05
  done
  wait "$pid" || rc=$?
  e=$(now)
  printf '%-34s %8.2f s  peak RSS %6.1f MiB%s\n' "$label" "$(awk -v s="$s" -v e="$e" 'BEGIN { print e - s }')" \
    "$(awk -v h="$hwm" 'BEGIN { print h / 1024 }')" "$([ $rc = 0 ] || echo "  (exit $rc)")"
}

for n in $FILES; do
  tree=$BENCH_DIR/scale-$n
  make_tree "$tree" "$n"
  for tool in old new; do
    bin=$CAIRN
    [ $tool = old ] && bin=$OLD
    st=$BENCH_DIR/scale-store-$tool
    rm -rf "$st"
    "$bin" --store "$st" init >/dev/null 2>&1
    "$bin" --store "$st" backup --type host --id scale --no-sync "t.pxar:$tree" >/dev/null 2>&1
    sleep 2 # past the ctime margin: the second backup trusts every file
    peak "$tool $n files, second backup" "$bin" --store "$st" backup --type host --id scale --no-sync "t.pxar:$tree"
    rm -rf "$st"
  done
done
