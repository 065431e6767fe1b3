#!/usr/bin/env bash
# Compares `memperf bandwidth` with likwid-bench (Debian package `likwid`)
# in one session, alternating the two ROUNDS times so that drift of a shared
# machine hits both alike, and reports the median of the per-round ratios.
#
#   bench/likwid-compare.sh [ROUNDS]        (default 5; needs python3)
#
# memperf side: the best single-thread and all-thread figure of a bandwidth
# run over 2 GiB (simd and simd-prefetch, hint t0), and its plain `simd`
# kernel (the same loop shape as likwid's load_avx512).
# likwid side: likwid-bench -t load_avx512 -W N:2GB:1 and -W N:2GB:<cpus>.
set -euo pipefail
rounds=${1:-5}
cd "$(dirname "$0")/.."
command -v likwid-bench >/dev/null || { echo "likwid-bench missing: apt-get install likwid" >&2; exit 2; }
cargo build --release -q
cpus=$(nproc)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
likwid() { likwid-bench -t load_avx512 -W "N:2GB:$1" 2>/dev/null | awk '/MByte\/s/ {print $2 * 1e6}'; }
for r in $(seq 1 "$rounds"); do
  ./target/release/memperf bandwidth --quiet --kernel simd,simd-prefetch --hint t0 --distance 0:1024:128 \
    --size 2GiB --repetitions 3 --threads "1,$cpus" --json "$tmp/m$r.json" >/dev/null 2>&1
  echo "$(likwid 1) $(likwid "$cpus")" > "$tmp/l$r.txt"
done
python3 - "$tmp" "$rounds" "$cpus" <<'PY'
import json, statistics, sys
tmp, rounds, cpus = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rows = []
for r in range(1, rounds + 1):
    doc = json.load(open(f"{tmp}/m{r}.json"))
    bw = next(e for e in doc["experiments"] if e["name"] == "bandwidth")["outcome"]
    best = {h["threads"]: h["bytes_per_s"] for h in bw["headlines"]}
    simd = {x["threads"]: x["bytes_per_s"]["median"] for x in bw["results"] if x["kernel"] == "simd"}
    l1, ln = map(float, open(f"{tmp}/l{r}.txt").read().split())
    rows.append((best[1], best[cpus], simd[1], simd[cpus], l1, ln))
    print(f"round {r}: memperf best {best[1]/1e9:6.2f} / {best[cpus]/1e9:6.2f}  simd {simd[1]/1e9:6.2f} / {simd[cpus]/1e9:6.2f}"
          f"  likwid {l1/1e9:6.2f} / {ln/1e9:6.2f} GB/s (1 / {cpus} threads)")
med = lambda xs: statistics.median(xs)
for name, i, j in [("best, 1 thread", 0, 4), (f"best, {cpus} threads", 1, 5), ("simd, 1 thread", 2, 4), (f"simd, {cpus} threads", 3, 5)]:
    ratios = [row[i] / row[j] for row in rows]
    print(f"memperf {name:<16} / likwid: median ×{med(ratios):.3f}  (range ×{min(ratios):.3f}..×{max(ratios):.3f})"
          f"  medians {med([r[i] for r in rows])/1e9:.2f} vs {med([r[j] for r in rows])/1e9:.2f} GB/s")
PY
