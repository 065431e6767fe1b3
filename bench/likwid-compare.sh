#!/usr/bin/env bash
# Compares the headline of `memperf bandwidth` — plain `simd`, the same
# loop shape as likwid-bench's load_avx512 — with likwid-bench (Debian
# package `likwid`) in one session, alternating the two at the grain of a
# single pass over the array.
#
# Why this grain: a shared host can switch its bandwidth mode every few tens
# of milliseconds (on the Zen 5 guest two threads read either ~37 or
# ~65 GB/s, pass by pass). A likwid-bench run of seconds averages the modes;
# a median of one-pass samples picks the majority mode; so whole-run figures
# compare the host's moods, not the tools. Here each round runs one
# likwid-bench pass (`-i`: one iteration per thread) and then memperf with
# three one-pass samples (after its warm-up pass), for 1 and for all
# threads. The report gives, per thread count:
#   - the median of the per-round ratios (memperf's median of its three
#     samples / likwid's pass) with its range and a 95% distribution-free
#     interval for that median (order statistics of the binomial), over all
#     rounds;
#   - the samples split into the host's modes (the split of log bandwidth
#     that maximises the between-mode variance, used only when the two
#     modes' medians differ by more than 50%:
#     the two-thread modes seen so far are ×1.75 apart), and per mode the ratio of
#     the rounds in which both tools landed in that mode.
#
#   bench/likwid-compare.sh [ROUNDS] [SIZE]   (default 20 rounds, 2GiB; needs python3)
set -euo pipefail
rounds=${1:-20}
size=${2:-2GiB}
cd "$(dirname "$0")/.."
command -v likwid-bench >/dev/null || { echo "likwid-bench missing: apt-get install likwid" >&2; exit 2; }
cargo build --release -q
cpus=$(nproc)
kernel=load_avx512
grep -qw avx512f /proc/cpuinfo || kernel=load_avx
lsize=$(echo "$size" | sed 's/GiB/GB/; s/MiB/MB/')
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
likwid() { likwid-bench -t "$kernel" -i "$1" -W "N:$lsize:$1" 2>/dev/null | awk '/MByte\/s/ {print $2 * 1e6}'; }
memperf() {
  ./target/release/memperf bandwidth --quiet --kernel simd --size "$size" --repetitions 3 --threads "$1" \
    --json "$tmp/m.json" >/dev/null 2>&1
  python3 -c '
import json, sys
doc = json.load(open(sys.argv[1]))
bw = next(e for e in doc["experiments"] if e["name"] == "bandwidth")["outcome"]
r = bw["results"][0]
print(" ".join(str(r["bytes_per_sample"] / s) for s in r["samples_s"]))' "$tmp/m.json"
}
for r in $(seq 1 "$rounds"); do
  for t in 1 "$cpus"; do
    l=$(likwid "$t")
    m=$(memperf "$t")
    echo "$t $l $m" >> "$tmp/rows"
    echo "$t $l $m" | awk -v r="$r" '{ printf "round %d, %d thread(s): likwid %.2f, memperf", r, $1, $2 / 1e9;
      for (i = 3; i <= NF; i++) printf " %.2f", $i / 1e9; print " GB/s" }'
  done
done
python3 - "$tmp/rows" "$kernel" <<'PY'
import math, statistics, sys
med = statistics.median
rows = [list(map(float, l.split())) for l in open(sys.argv[1])]
kernel = sys.argv[2]

def split(values):
    """The threshold between two modes, or None when there is one mode."""
    logs = sorted(math.log(v) for v in values)
    best, cut = -1.0, None
    for i in range(1, len(logs)):
        a, b = logs[:i], logs[i:]
        between = len(a) * len(b) * (statistics.fmean(a) - statistics.fmean(b)) ** 2
        if between > best:
            best, cut = between, (logs[i - 1] + logs[i]) / 2
    lo = [v for v in values if math.log(v) < cut]
    hi = [v for v in values if math.log(v) >= cut]
    if len(lo) < 2 or len(hi) < 2 or med(hi) / med(lo) < 1.5:
        return None
    return math.exp(cut)

def interval(ratios):
    """95% interval of the median: order statistics k and n-1-k."""
    r, n = sorted(ratios), len(ratios)
    k = int((n - 1.96 * math.sqrt(n)) / 2)
    return f"95% [×{r[k]:.3f}, ×{r[n - 1 - k]:.3f}]" if k >= 0 and n >= 6 else "too few rounds for an interval"

def describe(name, ratios):
    if not ratios:
        return f"{name}: no round with both tools in it"
    return (f"{name}: ×{med(ratios):.3f}, {interval(ratios)} "
            f"(range ×{min(ratios):.3f}..×{max(ratios):.3f}, {len(ratios)} rounds)")

for t in sorted({int(r[0]) for r in rows}):
    mine = [r for r in rows if int(r[0]) == t]
    pairs = [(r[1], med(r[2:])) for r in mine]
    print(f"\n{t} thread(s), memperf simd / likwid {kernel}")
    print("  " + describe("all rounds", [m / l for l, m in pairs]))
    print(f"  medians: memperf {med(m for _, m in pairs) / 1e9:.2f} GB/s, likwid {med(l for l, _ in pairs) / 1e9:.2f} GB/s")
    cut = split([v for r in mine for v in r[1:]])
    if cut is None:
        print("  one mode (the samples do not split into two modes 50% apart)")
        continue
    for name, inside in [("slow mode", lambda v: v < cut), ("fast mode", lambda v: v >= cut)]:
        same = [m / l for l, m in pairs if inside(l) and inside(m)]
        print("  " + describe(f"{name} (< / ≥ {cut / 1e9:.1f} GB/s)", same))
    mixed = sum(1 for l, m in pairs if (l < cut) != (m < cut))
    print(f"  rounds with the tools in different modes (not compared): {mixed}")
PY
