#!/usr/bin/env bash
# Cross-checks `memperf latency` with an independent C chase (bench/chase.c)
# at every working set from L1 to DRAM, on 4 KiB and on THP pages,
# alternating the two ROUNDS times in one session. memperf's figure is the
# median of its sample means (each >= 10 ms after a warm-up traversal); the
# C chase's is the mean of one walk of >= 0.3 s after one warm-up traversal.
#
#   bench/chase-compare.sh [ROUNDS] [SIZES_KIB]   (default 5; needs cc, python3)
set -euo pipefail
rounds=${1:-5}
sizes=${2:-"16 256 1024 8192 65536 262144 1048576"}
cd "$(dirname "$0")/.."
cargo build --release -q
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cc -O2 -o "$tmp/chase" bench/chase.c
list=$(for s in $sizes; do printf '%sKiB,' "$s"; done); list=${list%,}
for r in $(seq 1 "$rounds"); do
  for pol in 4k thp; do
    ./target/release/memperf latency --quiet --pages "$pol" --sizes "$list" --chains 1 --no-page-local \
      --json "$tmp/m-$pol-$r.json" >/dev/null 2>&1
    for s in $sizes; do "$tmp/chase" "$s" "$pol" 0.3 "$r" > "$tmp/c-$pol-$s-$r.txt"; done
  done
done
python3 - "$tmp" "$rounds" "$sizes" <<'PY'
import json, statistics, sys
tmp, rounds, sizes = sys.argv[1], int(sys.argv[2]), [int(s) for s in sys.argv[3].split()]
print(f"{'pages':>5} {'working set':>12} {'memperf ns':>11} {'C chase ns':>11}  median ratio (range), {rounds} alternated rounds")
for pol in ["4k", "thp"]:
    for s in sizes:
        m, c = [], []
        for r in range(1, rounds + 1):
            pts = json.load(open(f"{tmp}/m-{pol}-{r}.json"))["experiments"][0]["outcome"]["points"]
            m.append(next(p for p in pts if p["size_bytes"] == s * 1024)["latency_ns"]["median"])
            c.append(float(open(f"{tmp}/c-{pol}-{s}-{r}.txt").read()))
        ratios = [a / b for a, b in zip(m, c)]
        print(f"{pol:>5} {s:>9} KiB {statistics.median(m):>11.2f} {statistics.median(c):>11.2f}  "
              f"×{statistics.median(ratios):.3f} (×{min(ratios):.3f}..×{max(ratios):.3f})")
PY
