#!/usr/bin/env bash
# bspkit serve: a map fetched over HTTP from `bspkit serve` by curl on
# 127.0.0.1, beside the floor of the same curl reading the same file from disk
# (file://: the same process start, no server), best of RUNS each, in the same
# run; prints the ratio. Also maps/index.json and the viewer's index page.
#   bench/serve_bench.sh BSPKIT CORPUS_DIR [RUNS]
set -euo pipefail
bspkit=$1 corpus=$2 runs=${3:-7}
port=$((20000 + RANDOM % 20000))
"$bspkit" serve "$corpus" --port "$port" > /dev/null 2>&1 &
server=$!
trap 'kill $server 2>/dev/null || true' EXIT
for _ in $(seq 50); do curl -sf -o /dev/null "http://127.0.0.1:$port/maps/index.json" && break; sleep 0.1; done
best() {  # best wall time in microseconds of RUNS runs of "$@"
  local b="" s e t
  for _ in $(seq "$runs"); do
    s=$(date +%s%N); "$@" > /dev/null; e=$(date +%s%N)
    t=$(( (e - s) / 1000 ))
    if [ -z "$b" ] || [ "$t" -lt "$b" ]; then b=$t; fi
  done
  echo "$b"
}
printf '%-44s %10s %12s %7s\n' "map" "serve us" "file:// us" "ratio"
for rel in q1_v29/pd_change_dest.bsp hl1_v30/cs16_de_torabora.bsp q3_v46/nexuiz_ons-reborn.bsp; do
  [ -f "$corpus/$rel" ] || { echo "missing $corpus/$rel" >&2; exit 1; }
  s=$(best curl -sf -o /dev/null "http://127.0.0.1:$port/maps/$rel")
  c=$(best curl -sf -o /dev/null "file://$(realpath "$corpus/$rel")")
  printf '%-44s %10d %12d %7.2f\n' "$rel" "$s" "$c" "$(echo "$s / $c" | bc -l)"
done
i=$(best curl -sf -o /dev/null "http://127.0.0.1:$port/maps/index.json")
p=$(best curl -sf -o /dev/null "http://127.0.0.1:$port/")
echo "maps/index.json ${i} us, index.html ${p} us (the curl start, a few ms, is in every figure)"
