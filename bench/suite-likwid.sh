#!/usr/bin/env bash
# Consecutive suite runs (`memperf run`, the quick suite) with likwid-bench
# (Debian package `likwid`) reading memory before and after each, so the
# suite's DRAM read headlines are set beside an independent figure taken
# alternately with them, and the runs beside each other:
#
#   likwid, run 1, likwid, run 2, likwid, run 3, likwid
#
# likwid-bench load_avx512 (load_avx without AVX-512) reads SIZE KiB per
# thread (default 131072: 128 MiB), on one thread and on every CPU, REPS
# times each (median), and never less in all than twice the L3 the machine
# claims (lscpu, every instance), rounded up to a power of two: the suite
# calls no read under twice that claim DRAM, and on a 16-CPU Intel guest
# claiming 300 MiB, one thread reading 128 MiB was partly served by the L3
# (17.4 GB/s there against 14.1-14.4 from 512 MiB to 2 GiB; docs/validation.md).
# The 2-vCPU guests met (32 MiB claimed by AMD's) keep 128 MiB. A run's
# headline (`bandwidth.read`, simd, 4 KiB pages: likwid's malloc'd arrays
# are on 4 KiB pages under THP's madvise mode) is divided by the mean of
# the likwid figures on either side of it.
#
# The fraction of likwid-bench's pages whose frame follows the previous
# page's, and how many of its pages share each 2 MiB block of physical
# memory, are read from its pagemap while it runs (root), and each run's
# read arrays' from its document: a stream over 4 KiB frames in physical
# order reads faster than over scattered ones (memperf's 4 KiB arrays are
# first touched in a shuffled order on purpose; likwid-bench's take what
# free memory holds), and on a guest faster the more pages share a block.
#
# Free memory is compacted (/proc/sys/vm/compact_memory, as root) before
# each likwid-bench repetition and before each run, so fewer of the
# scattered pages the one before left in the free lists remain for the
# next. Without it, one likwid-bench read 16.3 GB/s on 7.9 pages a block,
# the next ones 20.7 on 16 (Zen 4 guest, 2026-11-27). It does not make
# the two sides' frames alike: after it likwid-bench got 9–34 pages a
# block in most processes, 55–59 in some, and 178–246 (27–28 GB/s) after
# another process's large allocation had used the scattered pages up
# (docs/validation.md); the suite maps its read arrays after its earlier
# experiments did just that, in the same process. So read each ratio with
# the two sides' pages per block beside it, and beside the run's own read
# over whole 2 MiB blocks in physical order (the table's second row per
# thread count), the layout likwid-bench reads fastest on. COMPACT=0
# leaves free memory as it is; where it cannot be compacted (not root, a
# read-only /proc/sys) the script says so once and goes on without.
#
# Then: `compare` of the first and the last run with --fail-on-regression
# 10 (its exit status), and each run's advice with its numbers masked, so
# a line that differs between runs shows.
#
#   bench/suite-likwid.sh [RUNS] [OUT]      RUNS default 3; OUT keeps the runs
set -euo pipefail
runs=${1:-3}
[[ $runs =~ ^[1-9][0-9]*$ ]] || { echo "RUNS must be a whole number of at least 1" >&2; exit 2; }
out=$(realpath -m "${2:-$(mktemp -d)}")
size_kib=${SIZE:-131072}
[[ $size_kib =~ ^[1-9][0-9]*$ ]] || { echo "SIZE must be a whole number of KiB per thread, at least 1" >&2; exit 2; }
reps=${REPS:-3}
compact=${COMPACT:-1}
[[ $compact =~ ^[01]$ ]] || { echo "COMPACT must be 0 or 1" >&2; exit 2; }
# A folder that already holds runs would be read as this call's (memperf
# refuses to write a run over one, and the old one would stand in).
if [ -n "$(ls -A "$out" 2>/dev/null)" ]; then
  echo "OUT $out is not empty: give a new folder (or leave OUT out for a temporary one)" >&2
  exit 2
fi
cd "$(dirname "$0")/.."
command -v likwid-bench >/dev/null || { echo "likwid-bench missing: apt-get install likwid" >&2; exit 2; }
cargo build --release -q
mkdir -p "$out"
cpus=$(nproc)
kernel=load_avx512
grep -qw avx512f /proc/cpuinfo || kernel=load_avx

# The fraction of likwid-bench's pages whose frame follows the previous
# page's, and its pages per 2 MiB block, "ORDER/PER-BLOCK", read while it
# runs (as root only: pagemap hides frames otherwise, and then nothing is
# polled).
in_order() { # pid
  if [ "$(id -u)" != 0 ]; then echo nan/nan; return; fi
  python3 - "$1" <<'PY' || echo nan/nan
import struct, sys, time
pid = sys.argv[1]
best = None
for _ in range(100):
    try:
        spans = [l.split()[0] for l in open(f"/proc/{pid}/maps")]
        with open(f"/proc/{pid}/pagemap", "rb") as pm:
            for span in spans:
                a, b = (int(x, 16) for x in span.split("-"))
                if b - a < 64 << 20:
                    continue
                pm.seek(a // 4096 * 8)
                e = struct.unpack(f"<{(b - a) // 4096}Q", pm.read((b - a) // 4096 * 8))
                f = [x & ((1 << 55) - 1) if x >> 63 else 0 for x in e]
                pairs = [(p, q) for p, q in zip(f, f[1:]) if p and q]
                if len(pairs) > 0.9 * len(f):
                    known = [p for p in f if p]
                    best = (sum(q == p + 1 for p, q in pairs) / len(pairs), len(known) / len({p >> 9 for p in known}))
    except (OSError, struct.error, ValueError):
        break  # likwid-bench ended while it was read
    if best is not None:
        break
    time.sleep(0.05)
print("nan/nan" if best is None else f"{best[0]:.2f}/{best[1]:.1f}")
PY
}

# Compacts free memory (COMPACT=1), so the next process's frames come
# from whole free blocks rather than the scattered pages the last one left.
settle() {
  [ "$compact" = 1 ] || return 0
  sync
  if ! { echo 1 > /proc/sys/vm/compact_memory; } 2>/dev/null; then
    echo "cannot compact free memory (needs root and a writable /proc/sys/vm/compact_memory): each process takes free memory as it is" >&2
    compact=0
  fi
}

# The KiB likwid-bench reads in all on T threads: SIZE KiB each, and at
# least twice the claimed L3 rounded up to a power of two.
l3_kib=$(( $(lscpu -B -C=name,all-size 2>/dev/null | awk '$1 == "L3" {print $2}' | head -n 1 || true) + 0 ))
l3_kib=$(( l3_kib / 1024 ))
[ "$l3_kib" -gt 0 ] || echo "lscpu names no L3 (or has no -C): likwid-bench reads SIZE ($size_kib KiB) per thread, with no floor from the cache" >&2
floor_kib=1
while [ "$floor_kib" -lt $(( 2 * l3_kib )) ]; do floor_kib=$(( floor_kib * 2 )); done
total_kib() { # threads
  local k=$(( size_kib * $1 ))
  echo $(( k > floor_kib ? k : floor_kib ))
}

likwid() { # slot: one line "slot threads GB/s… | in-order fractions…" per thread count
  local t kb iters bw all order pid
  for t in 1 "$cpus"; do
    kb=$(( $(total_kib "$t") * 1024 / 1000 ))
    iters=$(( 20000000000 / ($(total_kib "$t") * 1024) + 4 ))
    all="" order=""
    for _ in $(seq 1 "$reps"); do
      settle
      likwid-bench -t "$kernel" -i "$iters" -W "N:${kb}kB:$t" > "$out/lk.out" 2>/dev/null &
      pid=$!
      order="$order $(in_order "$pid")"
      wait "$pid" || true
      bw=$(awk '/MByte\/s/ {print $2 / 1000}' "$out/lk.out")
      all="$all ${bw:-nan}"
    done
    echo "$1 $t$all |$order" >> "$out/likwid.txt"
  done
}

: > "$out/likwid.txt"
likwid 0
for r in $(seq 1 "$runs"); do
  settle
  start=$(date +%s%N)
  ./target/release/memperf run -o "$out/run$r" > "$out/run$r.out" 2> "$out/run$r.err" || true
  echo "run $r: $(( ($(date +%s%N) - start) / 1000000 )) ms" | tee -a "$out/wall.txt" >&2
  likwid "$r"
done

for r in $(seq 1 "$runs"); do
  [ -f "$out/run$r/results.json" ] || { echo "run $r wrote no results.json: see $out/run$r.err" >&2; exit 1; }
  ./target/release/memperf compare "$out/run$r" "$out/run$r" --json "$out/headlines$r.json" > /dev/null
done
set +e
./target/release/memperf compare "$out/run1" "$out/run$runs" --fail-on-regression 10 > "$out/compare.txt"
echo "compare run1 run$runs --fail-on-regression 10: exit $?" | tee -a "$out/compare.txt"
set -e

python3 - "$out" "$runs" "$kernel" "$(total_kib 1)" "$cpus" "$(total_kib "$cpus")" <<'PY'
import json, re, statistics, sys
out, runs, kernel, cpus = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[5])
one_mib, all_mib = f"{int(sys.argv[4]) / 1024:g}", f"{int(sys.argv[6]) / cpus / 1024:g}"
lk, orders, blocks = {}, [], []
for line in open(f"{out}/likwid.txt"):
    figures, order = line.split("|")
    slot, t, *v = figures.split()
    v = [float(x) for x in v if x != "nan"]
    lk[(int(slot), int(t))] = statistics.median(v) if v else float("nan")
    for o in order.split():
        a, b = (float(x) for x in o.split("/"))
        orders += [a] if a == a else []
        blocks += [b] if b == b else []
if orders:
    print(f"likwid-bench's pages in physical order: {min(orders):.2f}..{max(orders):.2f} of neighbours (median {statistics.median(orders):.2f})")
if blocks:
    print(f"likwid-bench's pages per 2 MiB block: {min(blocks):.1f}..{max(blocks):.1f} (median {statistics.median(blocks):.1f})")
print(f"DRAM read: the suite's headline (simd, 4 KiB pages) against likwid-bench {kernel} at {one_mib} MiB on one thread"
      f" and {all_mib} MiB per thread on {cpus},")
print("the mean of the likwid figures taken before and after the run (each the median of its repetitions)")
print(f"{'run':>3} {'thr':>3} {'headline':<58} {'memperf GB/s':>12} {'likwid GB/s':>11} {'ratio':>7} {'to the likwid after':>19}")
got = {}
for r in range(1, runs + 1):
    doc = json.load(open(f"{out}/run{r}/results.json"))
    bw = next((e["outcome"] for e in doc["experiments"] if e["name"] == "bandwidth" and e.get("outcome")), None)
    if bw:
        read = bw["regions"][0]
        sets = [a.get("pages_per_2mib_block") for a in (bw.get("frame_sets") or [{}])[0].get("arrays", [])[1:]]
        per_block = read.get("pages_per_2mib_block")
        print(f"run {r}: the read array's pages in physical order: {read.get('in_order_fraction')}"
              f"{', first touched shuffled' if read.get('first_touch_shuffled') else ''}; pages per 2 MiB block:"
              f" {per_block if per_block is None else round(per_block, 1)}"
              f"{'' if not sets or None in sets else ', fragmented memory ' + ', '.join(f'{b:.1f}' for b in sets)}")
    rows = json.load(open(f"{out}/headlines{r}.json"))["rows"]
    for row in rows:
        k = row["key"]
        m = re.match(r"bandwidth\.read\{kernel=simd,memory=([^,]+),pages=4k,threads=(\d+)\}", k)
        if not m:
            continue
        t = int(m.group(2))
        ref = (lk.get((r - 1, t), float("nan")) + lk.get((r, t), float("nan"))) / 2
        got.setdefault(t, []).append(row["a"])
        after = lk.get((r, t), float("nan"))
        print(f"{r:>3} {t:>3} {row['metric'][:58]:<58} {row['a']:>12.2f} {ref:>11.2f} ×{row['a'] / ref:.3f} {'×%.3f' % (row['a'] / after):>19}")
        # The whole 2 MiB blocks in physical order the run read beside its
        # frame sets (outside the headline): the other end of the layouts.
        sets = next((f for f in (bw or {}).get("frame_sets") or [] if f["threads"] == t), {})
        whole = sets.get("blocks_in_order")
        if whole:
            rate = whole["bytes_per_s"]["median"] / 1e9
            print(f"{r:>3} {t:>3} {'  the same read over whole 2 MiB blocks in physical order':<58} {rate:>12.2f} {ref:>11.2f} ×{rate / ref:.3f}")
for t, v in sorted(got.items()):
    print(f"{t} thread(s): the runs' headlines lie {100 * (max(v) / min(v) - 1):.1f}% apart")
masked = []
for r in range(1, runs + 1):
    text = open(f"{out}/run{r}.out").read()
    advice = re.split(r"\n\n|\nwarnings|\nreport:|\nresults written", text.split("\nverdicts", 1)[1])[0] if "\nverdicts" in text else ""
    lines = [l.strip() for l in advice.splitlines()[1:] if l.strip()]
    masked.append([re.sub(r"[0-9]+(\.[0-9]+)?", "#", l) for l in lines])
print("advice lines, numbers masked, in every run / not:")
every = set(masked[0]).intersection(*map(set, masked[1:]))
for l in sorted(every):
    print(f"  all   {l[:150]}")
for r, m in enumerate(masked, 1):
    for l in m:
        if l not in every:
            print(f"  run {r} {l[:150]}")
PY
cat "$out/wall.txt"
tail -n 1 "$out/compare.txt"
