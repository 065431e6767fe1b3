#!/usr/bin/env bash
# What one latency point costs: `memperf latency` at one working set
# against the independent C chase (bench/chase.c) and google/multichase,
# alternated round by round (the tools' order rotates), each in its own
# process. Per tool: wall time and the figure of every round; per round,
# memperf's wall time over each peer's. memperf's figure is the median of
# its samples, taken until that median is known to ±PRECISION (95%
# interval) or 60 samples; chase.c's is one walk of 0.3 s after one full
# warm-up traversal; multichase's the mean of its five 0.5 s samples.
#
#   bench/latency-cost-compare.sh ROUNDS SIZE_KIB PAGES PRECISION MULTICHASE
#   e.g. bench/latency-cost-compare.sh 7 1048576 4k 3% /tmp/multichase/multichase
#
# multichase is not built here: fetch google/multichase and `make`, then
# pass its binary (it runs as: -m SIZE -s 64 -T SIZE -n 5 -a, one random
# cycle over every 64-byte line, like the other two).
set -euo pipefail
rounds=${1:-7}
kib=${2:-1048576}
pages=${3:-4k}
precision=${4:-3%}
multichase=${5:?give the multichase binary as the fifth argument}
cd "$(dirname "$0")/.."
cargo build --release -q
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cc -O2 -o "$tmp/chase" bench/chase.c
mc_pages=""
[ "$pages" = thp ] && mc_pages="-H"
run() { # tool round
  local t0 t1
  t0=$(date +%s.%N)
  case $1 in
    memperf) ./target/release/memperf latency --quiet --pages "$pages" --sizes "${kib}KiB" --chains 1 \
               --no-page-local --precision "$precision" --json "$tmp/m-$2.json" >/dev/null 2>&1 ;;
    chase) "$tmp/chase" "$kib" "$pages" 0.3 "$2" > "$tmp/c-$2.txt" ;;
    multichase) "$multichase" -m "${kib}k" -s 64 -T "${kib}k" -n 5 -a $mc_pages > "$tmp/x-$2.txt" 2>/dev/null ;;
  esac
  t1=$(date +%s.%N)
  echo "$1 $2 $(echo "$t1 - $t0" | bc)" >> "$tmp/wall.txt"
}
tools=(memperf chase multichase)
for r in $(seq 1 "$rounds"); do
  for k in 0 1 2; do run "${tools[$(( (r + k) % 3 ))]}" "$r"; done
done
python3 - "$tmp" "$rounds" "$kib" "$pages" "$precision" <<'PY'
import json, math, statistics, sys
tmp, rounds, kib, pages, precision = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
wall = {}
for line in open(f"{tmp}/wall.txt"):
    t, r, s = line.split()
    wall[(t, int(r))] = float(s)
value, inner = {}, []
for r in range(1, rounds + 1):
    p = json.load(open(f"{tmp}/m-{r}.json"))["experiments"][0]["outcome"]["points"][0]
    value[("memperf", r)] = p["latency_ns"]["median"]
    s = sorted(p["sample_latency_ns"]); n = len(s)
    k = max(0, int((n - 1.96 * math.sqrt(n)) / 2))
    inner.append(((s[n - 1 - k] - s[k]) / 2 / p["latency_ns"]["median"], n))
    value[("chase", r)] = float(open(f"{tmp}/c-{r}.txt").read())
    value[("multichase", r)] = float(open(f"{tmp}/x-{r}.txt").read().split()[0])
def interval(v):
    v = sorted(v); n = len(v)
    k = max(0, int((n - 1.96 * math.sqrt(n)) / 2))
    return v[k], v[n - 1 - k]
print(f"one {int(kib)//1024} MiB point on {pages} pages, {rounds} alternated rounds (memperf --precision {precision})")
print(f"{'tool':>11} {'wall s':>7} {'ns (median)':>11}  across rounds: interval (±half-width)")
for t in ["memperf", "chase", "multichase"]:
    v = [value[(t, r)] for r in range(1, rounds + 1)]
    lo, hi = interval(v); m = statistics.median(v)
    print(f"{t:>11} {statistics.median(wall[(t, r)] for r in range(1, rounds + 1)):>7.2f} {m:>11.1f}  [{lo:.1f}, {hi:.1f}] (±{100 * (hi - lo) / 2 / m:.1f}%)")
print(f"memperf's own interval per run: ±{100 * statistics.median(w for w, _ in inner):.1f}% (median), "
      f"samples {min(n for _, n in inner)}..{max(n for _, n in inner)}")
for peer in ["chase", "multichase"]:
    rat = sorted(wall[("memperf", r)] / wall[(peer, r)] for r in range(1, rounds + 1))
    print(f"wall memperf / {peer}: median ×{statistics.median(rat):.2f} (×{rat[0]:.2f}..×{rat[-1]:.2f})")
PY
