#!/usr/bin/env bash
# Cross-checks `memperf latency` with an independent C chase (bench/chase.c)
# at every working set from L1 to DRAM, on 4 KiB and on THP pages,
# alternating the two at every size, ROUNDS times, in one session (each
# pair runs seconds apart, so the host's drift hits both alike). memperf's
# figure is the median of its sample means (each >= 10 ms after a warm-up
# traversal); the C chase's is the mean of one walk of >= 0.3 s after one
# warm-up traversal. Each process allocates its own region, so every round
# is also a new physical placement: at a cache's exact capacity that
# placement decides how many lines conflict, in both tools.
#
#   bench/chase-compare.sh [ROUNDS] [SIZES_KIB]   (default 7; needs cc, python3)
set -euo pipefail
rounds=${1:-7}
sizes=${2:-"16 256 512 1024 2048 8192 65536 262144 1048576"}
cd "$(dirname "$0")/.."
cargo build --release -q
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cc -O2 -o "$tmp/chase" bench/chase.c
for r in $(seq 1 "$rounds"); do
  for pol in 4k thp; do
    for s in $sizes; do
      ./target/release/memperf latency --quiet --pages "$pol" --sizes "${s}KiB" --chains 1 --no-page-local \
        --json "$tmp/m-$pol-$s-$r.json" >/dev/null 2>&1
      "$tmp/chase" "$s" "$pol" 0.3 "$r" > "$tmp/c-$pol-$s-$r.txt"
    done
  done
done
python3 - "$tmp" "$rounds" "$sizes" <<'PY'
import json, math, statistics, sys
tmp, rounds, sizes = sys.argv[1], int(sys.argv[2]), [int(s) for s in sys.argv[3].split()]
print(f"{'pages':>5} {'working set':>12} {'memperf ns':>11} {'C chase ns':>11}  median ratio, interval (range), {rounds} alternated rounds")
for pol in ["4k", "thp"]:
    for s in sizes:
        m, c = [], []
        for r in range(1, rounds + 1):
            pts = json.load(open(f"{tmp}/m-{pol}-{s}-{r}.json"))["experiments"][0]["outcome"]["points"]
            m.append(next(p for p in pts if p["size_bytes"] == s * 1024)["latency_ns"]["median"])
            c.append(float(open(f"{tmp}/c-{pol}-{s}-{r}.txt").read()))
        ratios = sorted(a / b for a, b in zip(m, c))
        n = len(ratios)
        k = int((n - 1.96 * math.sqrt(n)) / 2)
        ci = f"95% [×{ratios[k]:.3f}, ×{ratios[n - 1 - k]:.3f}]" if k >= 0 and n >= 6 else "no interval (< 6 rounds)"
        print(f"{pol:>5} {s:>9} KiB {statistics.median(m):>11.2f} {statistics.median(c):>11.2f}  "
              f"×{statistics.median(ratios):.3f} {ci} (×{ratios[0]:.3f}..×{ratios[-1]:.3f})")
PY
