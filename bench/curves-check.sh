#!/usr/bin/env bash
# Cross-checks `memperf curves` at its saturated all-reads point with an
# independent C program (bench/chase-stream.c: one thread chasing a random
# cycle on THP, one streaming reads at full speed on the other CPU),
# alternating the two ROUNDS times in one session. memperf's figure is the
# saturated (pause 0) point of `curves --mixes 100:0`, the median of its
# repetitions; the C program's is one span of SECONDS after a warm-up walk.
# Both chase SIZE and read an array of SIZE.
#
#   bench/curves-check.sh [ROUNDS] [SIZE_MIB] [SECONDS]   (default 7 128 0.5; needs cc, python3)
set -euo pipefail
rounds=${1:-7}
size=${2:-128}
seconds=${3:-0.5}
cd "$(dirname "$0")/.."
cargo build --release -q
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cc -O3 -march=native -pthread -o "$tmp/chase-stream" bench/chase-stream.c
for r in $(seq 1 "$rounds"); do
  ./target/release/memperf curves --quiet --mixes 100:0 --points 3 --repetitions 5 --window 50 \
    --size "${size}MiB" --json "$tmp/m-$r.json" >/dev/null 2>&1
  "$tmp/chase-stream" $((size * 1024)) "$seconds" "$r" > "$tmp/c-$r.txt"
done
python3 - "$tmp" "$rounds" <<'PY'
import json, statistics, sys
tmp, rounds = sys.argv[1], int(sys.argv[2])
rows = []
for r in range(1, rounds + 1):
    doc = json.load(open(f"{tmp}/m-{r}.json"))
    curve = next(e for e in doc["experiments"] if e["name"] == "curves")["outcome"]["curves"][0]
    sat = next(p for p in curve["points"] if p["pause_ns"] == 0)
    lat, bw = sat["latency_ns"]["median"], sat["bytes_per_s"]["median"] / 1e9
    c_lat, c_bw = (float(x) for x in open(f"{tmp}/c-{r}.txt").read().split()[:2])
    rows.append((lat, c_lat, bw, c_bw))
    print(f"round {r}: memperf {lat:.1f} ns at {bw:.2f} GB/s; C {c_lat:.1f} ns at {c_bw:.2f} GB/s (reader)")
for name, i, j in [("latency", 0, 1), ("bandwidth", 2, 3)]:
    ratios = sorted(x[i] / x[j] for x in rows)
    print(f"{name}: memperf / C ×{statistics.median(ratios):.3f} (×{ratios[0]:.3f}..×{ratios[-1]:.3f}), {rounds} alternated rounds")
PY
