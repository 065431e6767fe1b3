#!/usr/bin/env bash
# memperf's streaming kernels against their likwid-bench twins (Debian
# package `likwid`) at three sizes per thread — one that stays in L2, one
# in the last-level cache's share, one in memory — on one thread and on
# every CPU, alternated pair by pair:
#
#   memperf     likwid-bench (AVX-512 form; AVX where AVX-512 is absent)
#   simd        load_avx512         sum of a
#   store       store_avx512        a = s
#   store-nt    store_mem_avx512    a = s, non-temporal
#   copy        copy_avx512         a = b
#   copy-nt     copy_mem_avx512     a = b, non-temporal
#   triad       stream_avx512       a = b + s·c   (STREAM's triad)
#   update      update_avx512       a = s·a
#
# Both count the bytes the program moves (likwid's BYTES per update: no
# write-allocate), so memperf's `bytes_per_s` is compared. A size is per
# array and per thread: memperf's --size is the array over all threads
# (SIZE × threads), likwid's -W the working set over all streams
# (streams × SIZE × threads), given in kB (likwid 5.2.2 misreads byte
# counts of 2^31 and more), with enough -i iterations for a run of
# ≥ 100 ms. memperf runs that kernel alone: a warm-up pass, then
# REPS samples of ≥ 10 ms; its figure is the median sample.
#
# Each round takes every level, kernel and thread count in turn and runs
# the two tools back to back on it, the order alternating by round. Per
# point: the median of the per-round ratios memperf / likwid, a 95%
# distribution-free interval (order statistics) and the range.
#
#   bench/likwid-levels.sh [ROUNDS] [SIZES] [ROWS]
#   SIZES: level=KiB per array and thread, default "L2=128 L3=1024 DRAM=131072"
#   KERNELS (environment) limits the kernels, e.g. KERNELS="simd store";
#   THREADS (environment) the thread counts, default "1 <every CPU>".
#   memperf reads the read array alone (--frame-sets 1): fragmented
#   memory is a figure of its own, which likwid-bench has no twin of.
set -euo pipefail
rounds=${1:-10}
sizes=${2:-"L2=128 L3=1024 DRAM=131072"}
rows_out=${3:-}
reps=${REPS:-5}
cd "$(dirname "$0")/.."
command -v likwid-bench >/dev/null || { echo "likwid-bench missing: apt-get install likwid" >&2; exit 2; }
cargo build --release -q
cpus=$(nproc)
suffix=avx512
grep -qw avx512f /proc/cpuinfo || suffix=avx
pairs="simd:load_$suffix:1 store:store_$suffix:1 store-nt:store_mem_$suffix:1 copy:copy_$suffix:2
copy-nt:copy_mem_$suffix:2 triad:stream_$suffix:3 update:update_$suffix:1"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

likwid_one() { # round level kernel likwid-kernel streams threads kib
  local kb=$(( $5 * $7 * $6 * 1024 / 1000 )) iters bw
  iters=$(( 10000000000 / ($5 * $7 * $6 * 1024) + 4 ))
  bw=$(likwid-bench -t "$4" -i "$iters" -W "N:${kb}kB:$6" 2>/dev/null | awk '/MByte\/s/ {print $2 * 1e6}')
  echo "$1 $2 $3 $6 likwid ${bw:-nan}" >> "$tmp/rows"
}

memperf_one() { # round level kernel threads kib
  ./target/release/memperf bandwidth --quiet --kernel "$3" --size "$(( $5 * $4 ))KiB" --repetitions "$reps" \
    --frame-sets 1 --threads "$4" --json "$tmp/m.json" >/dev/null 2>&1
  python3 - "$tmp/m.json" "$1" "$2" >> "$tmp/rows" <<'PY'
import json, statistics, sys
doc = json.load(open(sys.argv[1]))
bw = next(e for e in doc["experiments"] if e["name"] == "bandwidth")["outcome"]
for r in bw["results"]:
    v = statistics.median(r["bytes_per_sample"] / s for s in r["samples_s"])
    print(sys.argv[2], sys.argv[3], r["kernel"], r["threads"], "memperf", v)
PY
}

for r in $(seq 1 "$rounds"); do
  for level in $sizes; do
    name=${level%%=*}; kib=${level#*=}
    for p in $pairs; do
      streams=${p##*:}; rest=${p%:*}; lk=${rest##*:}; mk=${rest%:*}
      [[ -z ${KERNELS:-} || " $KERNELS " == *" $mk "* ]] || continue
      for t in ${THREADS:-1 $cpus}; do
        if (( r % 2 )); then
          memperf_one "$r" "$name" "$mk" "$t" "$kib"; likwid_one "$r" "$name" "$mk" "$lk" "$streams" "$t" "$kib"
        else
          likwid_one "$r" "$name" "$mk" "$lk" "$streams" "$t" "$kib"; memperf_one "$r" "$name" "$mk" "$t" "$kib"
        fi
      done
    done
  done
  echo "round $r of $rounds done" >&2
done

[ -n "$rows_out" ] && cp "$tmp/rows" "$rows_out"
python3 - "$tmp/rows" "$suffix" "$sizes" <<'PY'
import collections, math, statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
by = collections.defaultdict(dict)  # (level, kernel, threads) -> round -> {tool: bw}
for rnd, level, kernel, t, tool, v in rows:
    by[(level, kernel, int(t))].setdefault(rnd, {})[tool] = float(v)

def interval(r):
    r, n = sorted(r), len(r)
    k = int((n - 1.96 * math.sqrt(n)) / 2)
    return f"[×{r[k]:.3f}, ×{r[n - 1 - k]:.3f}]" if k >= 0 and n >= 6 else "(too few rounds)"

levels = [s.split("=")[0] for s in sys.argv[3].split()]
sizes = {s.split("=")[0]: s.split("=")[1] for s in sys.argv[3].split()}
order = ["simd", "store", "store-nt", "copy", "copy-nt", "triad", "update"]
print(f"memperf / likwid-bench ({sys.argv[2]} kernels): median of per-round ratios, 95% interval, range")
print(f"{'level':5} {'KiB/thr':>8} {'kernel':9} {'thr':>3} {'memperf GB/s':>12} {'likwid GB/s':>11}  ratio")
pooled = []
for key in sorted(by, key=lambda k: (levels.index(k[0]), order.index(k[1]), k[2])):
    level, kernel, t = key
    pairs = [(v["memperf"], v["likwid"]) for v in by[key].values()
             if "memperf" in v and "likwid" in v and v["likwid"] == v["likwid"]]
    ratios = [m / l for m, l in pairs]
    if not ratios:
        continue
    pooled += ratios
    print(f"{level:5} {sizes[level]:>8} {kernel:9} {t:>3} {statistics.median(m for m, _ in pairs) / 1e9:>12.2f} "
          f"{statistics.median(l for _, l in pairs) / 1e9:>11.2f}  ×{statistics.median(ratios):.3f} "
          f"{interval(ratios)} (×{min(ratios):.3f}..×{max(ratios):.3f}, {len(ratios)} rounds)")
if pooled:
    print(f"pooled: ×{statistics.median(pooled):.3f} {interval(pooled)} ({len(pooled)} ratios)")
PY
