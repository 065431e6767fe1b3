#!/usr/bin/env bash
# Cross-checks the DRAM latency of `memperf latency` with an independent C
# chase (bench/chase.c), alternating the two ROUNDS times in one session,
# on THP (huge) pages and on 4 KiB pages over 1 GiB. Means are compared with
# means: the C chase times one long walk, memperf reports chunk statistics.
#
#   bench/chase-compare.sh [ROUNDS]        (default 5; needs cc and python3)
set -euo pipefail
rounds=${1:-5}
cd "$(dirname "$0")/.."
cargo build --release -q
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cc -O2 -o "$tmp/chase" bench/chase.c
for r in $(seq 1 "$rounds"); do
  for pol in thp 4k; do
    ./target/release/memperf latency --quiet --pages "$pol" --sizes 1GiB --chains 1 --no-page-local \
      --json "$tmp/m-$pol-$r.json" >/dev/null 2>&1
    "$tmp/chase" 1024 "$pol" 2000000 "$r" > "$tmp/c-$pol-$r.txt"
  done
done
python3 - "$tmp" "$rounds" <<'PY'
import json, statistics, sys
tmp, rounds = sys.argv[1], int(sys.argv[2])
for pol in ["thp", "4k"]:
    m, c = [], []
    for r in range(1, rounds + 1):
        doc = json.load(open(f"{tmp}/m-{pol}-{r}.json"))
        pts = doc["experiments"][0]["outcome"]["points"]
        m.append(next(p for p in pts if p["order"] == "random")["latency_ns"]["mean"])  # the C chase reports a mean
        c.append(float(open(f"{tmp}/c-{pol}-{r}.txt").read()))
    ratios = [a / b for a, b in zip(m, c)]
    print(f"{pol:>3}: memperf {' '.join(f'{x:6.1f}' for x in m)} ns | C chase {' '.join(f'{x:6.1f}' for x in c)} ns"
          f" | median ratio ×{statistics.median(ratios):.3f} (range ×{min(ratios):.3f}..×{max(ratios):.3f})")
PY
