#!/usr/bin/env bash
# Compares memperf's write kernels with their likwid-bench counterparts
# (Debian package `likwid`) in one session, alternated kernel by kernel:
#
#   memperf     likwid-bench (AVX-512 form; AVX where AVX-512 is absent)
#   store       store_avx512        a = s
#   store-nt    store_mem_avx512    a = s, non-temporal
#   copy        copy_avx512         a = b
#   copy-nt     copy_mem_avx512     a = b, non-temporal
#   triad       stream_avx512       a = b + s·c   (STREAM's triad)
#   update      update_avx512       a = s·a
#   mix-3:1     triad_avx512        a = b + c·d   (likwid's "triad")
#
# Both tools count the bytes the program moves (likwid's BYTES per update:
# no write-allocate), so memperf's `bytes_per_s` is compared, not its bus
# figure. memperf's --size is the size of each array; likwid's -W size is
# the total over the streams, so it gets streams × SIZE, in bytes (its
# "MB" is 10^6 bytes).
#
# Each round takes every kernel and thread count in turn and runs the two
# tools back to back on it, seconds apart, in an order that alternates
# from round to round: likwid-bench (ITERS passes) and memperf (that
# kernel alone, three samples after a warm-up pass). Per kernel and thread
# count the report gives the median of the per-round ratios (memperf's
# median sample / likwid's run), a 95% distribution-free interval for it
# (order statistics) and the range.
# A last line pools every ratio of every kernel and thread count. The raw
# rows (round, kernel, threads, tool, bytes/s) are kept in ROWS if given.
# KERNELS (environment) limits the run to some memperf kernels, e.g.
# KERNELS="store-nt copy-nt".
# SIZE is a number of MiB or a number with KiB or MiB (128KiB: the arrays
# stay in L2, where the kernels' code, not the host's memory, is timed).
#   bench/likwid-write-compare.sh [ROUNDS] [SIZE] [ITERS] [ROWS]   (default 12, 512, 4; needs python3)
set -euo pipefail
rounds=${1:-12}
size=${2:-512}
case $size in
  *KiB) bytes=$((${size%KiB} * 1024)) ;;
  *MiB) bytes=$((${size%MiB} * 1048576)) ;;
  *[!0-9]* | '') echo "SIZE must be a number of MiB, or end in KiB or MiB: $size" >&2; exit 2 ;;
  *) bytes=$((size * 1048576)) ;;
esac
iters=${3:-4}
rows_out=${4:-}
cd "$(dirname "$0")/.."
command -v likwid-bench >/dev/null || { echo "likwid-bench missing: apt-get install likwid" >&2; exit 2; }
command -v python3 >/dev/null || { echo "python3 missing: apt-get install python3" >&2; exit 2; }
cargo build --release -q
cpus=$(nproc)
suffix=avx512
grep -qw avx512f /proc/cpuinfo || suffix=avx
# memperf kernel, likwid kernel, streams
pairs="store:store_$suffix:1 store-nt:store_mem_$suffix:1 copy:copy_$suffix:2 copy-nt:copy_mem_$suffix:2
triad:stream_$suffix:3 update:update_$suffix:1 mix-3:1:triad_$suffix:4"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

likwid_one() { # round memperf-kernel likwid-kernel streams threads
  local bw
  bw=$(likwid-bench -t "$3" -i "$iters" -W "N:$(($4 * bytes))B:$5" 2>/dev/null | awk '/MByte\/s/ {print $2 * 1e6}')
  echo "$1 $2 $5 likwid $bw" >> "$tmp/rows"
}

memperf_one() { # round memperf-kernel threads
  ./target/release/memperf bandwidth --quiet --kernel "$2" --size "${bytes}B" --repetitions 3 \
    --threads "$3" --json "$tmp/m.json" >/dev/null 2>&1
  python3 - "$tmp/m.json" "$1" >> "$tmp/rows" <<'PY'
import json, statistics, sys
doc = json.load(open(sys.argv[1]))
bw = next(e for e in doc["experiments"] if e["name"] == "bandwidth")["outcome"]
for r in bw["results"]:
    if r["kernel"] in ("sum1", "sum4", "simd", "simd-prefetch"):
        continue
    v = statistics.median(r["bytes_per_sample"] / s for s in r["samples_s"])
    print(sys.argv[2], r["kernel"], r["threads"], "memperf", v)
PY
}

for r in $(seq 1 "$rounds"); do
  for p in $pairs; do
    streams=${p##*:}; rest=${p%:*}; lk=${rest##*:}; mk=${rest%:*}
    [[ -z ${KERNELS:-} || " $KERNELS " == *" $mk "* ]] || continue
    for t in 1 "$cpus"; do
      if (( r % 2 )); then
        memperf_one "$r" "$mk" "$t"; likwid_one "$r" "$mk" "$lk" "$streams" "$t"
      else
        likwid_one "$r" "$mk" "$lk" "$streams" "$t"; memperf_one "$r" "$mk" "$t"
      fi
    done
  done
  echo "round $r of $rounds done" >&2
done

[ -n "$rows_out" ] && cp "$tmp/rows" "$rows_out"
python3 - "$tmp/rows" "$suffix" <<'PY'
import collections, math, statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
by = collections.defaultdict(dict)  # (kernel, threads) -> round -> {tool: bw}
for rnd, kernel, t, tool, v in rows:
    by[(kernel, int(t))].setdefault(rnd, {})[tool] = float(v)

def interval(r):
    r, n = sorted(r), len(r)
    k = int((n - 1.96 * math.sqrt(n)) / 2)
    return f"95% [×{r[k]:.3f}, ×{r[n - 1 - k]:.3f}]" if k >= 0 and n >= 6 else "too few rounds for an interval"

all_ratios = []
order = ["store", "store-nt", "copy", "copy-nt", "triad", "update", "mix-3:1"]
print(f"memperf / likwid-bench ({sys.argv[2]} kernels), median of per-round ratios")
print(f"{'kernel':10} {'threads':>7} {'memperf GB/s':>13} {'likwid GB/s':>12}  ratio")
for (kernel, t) in sorted(by, key=lambda k: (order.index(k[0]), k[1])):
    pairs = [(v["memperf"], v["likwid"]) for v in by[(kernel, t)].values() if "memperf" in v and "likwid" in v]
    ratios = [m / l for m, l in pairs]
    if not ratios:
        continue
    all_ratios += ratios
    print(f"{kernel:10} {t:>7} {statistics.median(m for m, _ in pairs) / 1e9:>13.2f} "
          f"{statistics.median(l for _, l in pairs) / 1e9:>12.2f}  ×{statistics.median(ratios):.3f} "
          f"{interval(ratios)} (range ×{min(ratios):.3f}..×{max(ratios):.3f}, {len(ratios)} rounds)")
if all_ratios:
    print(f"{'pooled':10} {'':>7} {'':>13} {'':>12}  ×{statistics.median(all_ratios):.3f} "
          f"{interval(all_ratios)} ({len(all_ratios)} ratios)")
PY
