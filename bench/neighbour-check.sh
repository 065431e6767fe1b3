#!/usr/bin/env bash
# What a neighbour streaming memory on the other CPU does to memperf's
# verdicts and to `compare`, beside an independent C chase.
#
# 1. The C chase (bench/chase.c) over 256 MiB, 4 KiB pages against THP,
#    ROUNDS times quiet and ROUNDS times beside a streamer (bench/streamer.c)
#    on CPU 1: how far a neighbour pulls the THP/4k ratio toward 1.
# 2. `memperf latency --pages 4k,thp --sizes 256MiB` quiet, and beside the
#    streamer switched on and off every PERIOD seconds.
# 3. `memperf run` quiet, then beside the streamer always on, and
#    `memperf compare` of the two (--fail-on-regression 10: exit 3 expected),
#    then of two quiet runs (exit 0 expected).
#
#   bench/neighbour-check.sh [ROUNDS] [PERIOD] [OUT]   (default 3 2 a temporary folder; needs cc, python3)
set -euo pipefail
rounds=${1:-3}
period=${2:-2}
cd "$(dirname "$0")/.."
out=${3:-$(mktemp -d)}
mkdir -p "$out"
cargo build --release -q
cc -O2 -o "$out/chase" bench/chase.c
cc -O2 -o "$out/streamer" bench/streamer.c
m=./target/release/memperf
chase_pair() { # $1: label
  for i in $(seq 1 "$rounds"); do
    for pol in 4k thp; do taskset -c 0 "$out/chase" 262144 "$pol" 0.5 "$i" > "$out/chase-$1-$i-$pol.txt"; done
  done
}
chase_pair quiet
"$out/streamer" 1 512 0 1000 > "$out/streamer-chase.txt" & s=$!
sleep 1
chase_pair loaded
kill "$s"; wait "$s" 2>/dev/null || true
lat() { $m latency --pages 4k,thp --sizes 256MiB --chains 1 --no-page-local --json "$out/latency-$1.json" > "$out/latency-$1.txt" 2>&1; }
lat quiet
"$out/streamer" 1 512 "$period" 1000 > "$out/streamer-latency.txt" & s=$!
lat toggled
kill "$s"; wait "$s" 2>/dev/null || true
$m run --output "$out/run-quiet" > "$out/run-quiet.txt" 2>&1
"$out/streamer" 1 512 0 1000 > "$out/streamer-run.txt" & s=$!
$m run --output "$out/run-loaded" > "$out/run-loaded.txt" 2>&1
kill "$s"; wait "$s" 2>/dev/null || true
$m run --output "$out/run-quiet2" > "$out/run-quiet2.txt" 2>&1
set +e
$m compare "$out/run-quiet" "$out/run-loaded" --fail-on-regression 10 > "$out/compare-loaded.txt"; echo "exit $?" >> "$out/compare-loaded.txt"
$m compare "$out/run-quiet" "$out/run-quiet2" --fail-on-regression 10 > "$out/compare-quiet.txt"; echo "exit $?" >> "$out/compare-quiet.txt"
set -e
python3 - "$out" "$rounds" <<'PY'
import json, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
def c(label, pol, i):
    return float(open(f"{out}/chase-{label}-{i}-{pol}.txt").read())
for label in ["quiet", "loaded"]:
    r = [c(label, "thp", i) / c(label, "4k", i) for i in range(1, rounds + 1)]
    print(f"C chase {label}: 4k {statistics.median(c(label, '4k', i) for i in range(1, rounds + 1)):.0f} ns, "
          f"THP {statistics.median(c(label, 'thp', i) for i in range(1, rounds + 1)):.0f} ns, THP/4k ×{statistics.median(r):.3f} "
          f"(×{min(r):.3f}..×{max(r):.3f})")
for label in ["quiet", "toggled"]:
    text = open(f"{out}/latency-{label}.txt").read()
    line = next((l.strip() for l in text.splitlines() if "Huge pages (thp) against 4k" in l), "no verdict line")
    print(f"memperf latency {label}: {line[:230]}")
for name in ["loaded", "quiet"]:
    lines = open(f"{out}/compare-{name}.txt").read().splitlines()
    regress = [l[:120] for l in lines if "REGRESSION" in l]
    print(f"compare quiet against {name}: {lines[-1]}; {len(regress)} regression(s)")
    for l in regress[:8]:
        print("   ", l)
PY
echo "raw runs in $out" >&2
