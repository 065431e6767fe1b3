#!/usr/bin/env bash
# Compares the headline of `memperf bandwidth` — plain `simd`, the same
# loop shape as likwid-bench's load_avx512 — with likwid-bench (Debian
# package `likwid`) in one session, alternating the two ROUNDS times so that
# drift of a shared machine hits both alike. Reports each round, the median
# of the per-round ratios with its range, and the ratio of the upper and of
# the lower halves of each side's figures: a host with two bandwidth modes
# (every tool lands in one by chance) is compared mode with mode.
#
#   bench/likwid-compare.sh [ROUNDS] [SIZE]   (default 10 rounds, 2GiB; needs python3)
set -euo pipefail
rounds=${1:-10}
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
likwid() { likwid-bench -t "$kernel" -W "N:$lsize:$1" 2>/dev/null | awk '/MByte\/s/ {print $2 * 1e6}'; }
for r in $(seq 1 "$rounds"); do
  ./target/release/memperf bandwidth --quiet --kernel simd --size "$size" --repetitions 10 --threads "1,$cpus" \
    --json "$tmp/m$r.json" >/dev/null 2>&1
  echo "$(likwid 1) $(likwid "$cpus")" > "$tmp/l$r.txt"
done
python3 - "$tmp" "$rounds" "$cpus" "$kernel" <<'PY'
import json, statistics, sys
tmp, rounds, cpus, kernel = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
rows = []
for r in range(1, rounds + 1):
    bw = next(e for e in json.load(open(f"{tmp}/m{r}.json"))["experiments"] if e["name"] == "bandwidth")["outcome"]
    simd = {h["threads"]: h["simd_bytes_per_s"] for h in bw["headlines"]}
    l1, ln = map(float, open(f"{tmp}/l{r}.txt").read().split())
    rows.append((simd[1], simd[cpus], l1, ln))
    print(f"round {r:2}: memperf simd {simd[1]/1e9:6.2f} / {simd[cpus]/1e9:6.2f}  likwid {kernel} {l1/1e9:6.2f} / {ln/1e9:6.2f} GB/s (1 / {cpus} threads)")
med = statistics.median
for name, i, j in [("1 thread", 0, 2), (f"{cpus} threads", 1, 3)]:
    ratios = [row[i] / row[j] for row in rows]
    a, b = sorted(r[i] for r in rows), sorted(r[j] for r in rows)
    h = len(a) // 2
    print(f"memperf simd / likwid {kernel}, {name}: median ×{med(ratios):.3f} (range ×{min(ratios):.3f}..×{max(ratios):.3f});"
          f" medians {med(a)/1e9:.2f} vs {med(b)/1e9:.2f} GB/s; upper halves ×{med(a[h:])/med(b[h:]):.3f}, lower halves ×{med(a[:h])/med(b[:h]):.3f}")
PY
