#!/usr/bin/env bash
# An idle `cairn serve` on a store of many snapshots: NGROUPS groups of
# PER snapshots (10 real backups each, the rest test/bench/clonesnap
# clones), a configuration with verify, prune, gc and a backup scheduled
# far from now, every group watched for staleness, the store mounted and
# the listener on. Prints the daemon's RSS once ready, after a scrape of
# /metrics and a load of the status page, and its CPU seconds over
# IDLE seconds with nothing due (the target: under 50 MiB, no
# measurable CPU).
#
#   NGROUPS=100 PER=100 IDLE=60 test/bench/serve-idle.sh
source "$(dirname "$0")/lib.sh"

GROUPS_N=${NGROUPS:-100}
PER=${PER:-100}
IDLE=${IDLE:-60}
REAL=10
D=$BENCH_DIR/serve-idle ST=$BENCH_DIR/serve-idle/store MNT=$BENCH_DIR/serve-idle/mnt
build_cairn
(cd "$ROOT" && go build -o "$BENCH_DIR/clonesnap" ./test/bench/clonesnap)
mkdir -p "$D" "$MNT"
[ -d "$ST" ] || "$CAIRN" --store "$ST" init >/dev/null
for ((g = 0; g < GROUPS_N; g++)); do
  have=0
  [ -d "$ST/host/g$g" ] && have=$(find "$ST/host/g$g" -maxdepth 1 -mindepth 1 -type d -name '20*' | wc -l)
  ((have >= PER)) && continue
  mkdir -p "$D/tree-$g"
  for ((i = have; i < REAL && i < PER; i++)); do
    echo "snapshot $i of group $g" >"$D/tree-$g/n"
    "$CAIRN" --store "$ST" backup -q --id "g$g" --no-sync --time "$(date -u -d "@$((1577836800 + i))" +%Y-%m-%dT%H:%M:%SZ)" "t.pxar:$D/tree-$g"
  done
  ((PER > REAL)) && "$BENCH_DIR/clonesnap" -store "$ST" -from "host/g$g" -n $((PER - REAL))
done
port=$((20000 + RANDOM % 20000))
cfg=$D/serve.toml
{
  printf '[http]\nlisten = "127.0.0.1:%d"\n[mount]\ndir = "%s"\n' "$port" "$MNT"
  printf '[[job]]\nkind = "verify"\nschedule = "2099-01-01 03:00"\n'
  printf '[[job]]\nkind = "prune"\nschedule = "2099-01-01 04:00"\nparams = { all = true, keep-last = 1000 }\n'
  printf '[[job]]\nkind = "gc"\nschedule = "2099-01-01 05:00"\n'
  printf '[[job]]\nkind = "backup"\nschedule = "2099-01-01 06:00"\ngroup = "host/g0"\nsources = ["t.pxar:%s"]\n' "$D/tree-0"
  for ((g = 0; g < GROUPS_N; g++)); do printf '[[stale]]\ngroup = "host/g%d"\nmax_age = "1d"\n' "$g"; done
} >"$cfg"
rss() { awk '/VmRSS|VmHWM/ { printf "%s %.1f MiB  ", $1, $2 / 1024 }' "/proc/$1/status"; }
cpu() { awk -v t="$(getconf CLK_TCK)" '{ printf "%.2f", ($14 + $15) / t }' "/proc/$1/stat"; }
s=$(now)
"$CAIRN" --store "$ST" serve --config "$cfg" -q &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null' EXIT
# ready: the first sample (the walk of every snapshot) is in the status
until curl -sf "http://127.0.0.1:$port/status.json" 2>/dev/null | jq -e ".current.snapshots == $((GROUPS_N * PER))" >/dev/null; do
  sleep 0.1
  kill -0 $pid || exit 1
done
printf '== cairn serve on %d snapshots in %d groups: ready in %.2f s, CPU %s s; ' \
  $((GROUPS_N * PER)) "$GROUPS_N" "$(awk -v s="$s" -v e="$(now)" 'BEGIN { print e - s }')" "$(cpu $pid)"
rss $pid; echo
c0=$(cpu $pid)
sleep "$IDLE"
c1=$(cpu $pid)
printf '== idle %d s: CPU %.2f s; ' "$IDLE" "$(awk -v a="$c0" -v b="$c1" 'BEGIN { print b - a }')"
rss $pid; echo
curl -sf "http://127.0.0.1:$port/metrics" | grep -c '^cairn_' | sed 's/^/== metrics: /;s/$/ cairn_ samples/'
curl -sf "http://127.0.0.1:$port/" | wc -c | sed 's/^/== status page: /;s/$/ bytes/'
printf '== after a scrape and the page: '; rss $pid; echo
kill -TERM $pid; wait $pid; echo "== exit $?"
