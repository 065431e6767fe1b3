#!/usr/bin/env bash
# memperf stat against perf stat on the same program, alternated run by run:
# the software counts both report (page faults, context switches) and the
# task clock, as the ratio memperf / perf per pair, median and range.
# Usage: bench/stat-compare.sh [ROUNDS] [-- CMD ARGS]   (default: 7 rounds of
# `xz -T1 -6 -c` over 64 MiB of the memperf binary's bytes, repeated)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-7}
shift || true
[ "${1:-}" = "--" ] && shift
memperf=target/release/memperf
[ -x "$memperf" ] || cargo build --release -q
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ $# -eq 0 ]; then
  for _ in $(seq 8); do cat "$memperf"; done > "$tmp/big"
  head -c 64M "$tmp/big" > "$tmp/input"
  rm "$tmp/big"
  set -- xz -T1 -6 -c "$tmp/input"
fi
events=page-faults,context-switches,task-clock
echo "command: $*"
echo "round  faults(memperf)  faults(perf)  task-clock ratio memperf/perf"
for r in $(seq "$rounds"); do
  "$memperf" stat -e "$events" --csv "$tmp/m.csv" -- "$@" > /dev/null 2> /dev/null
  perf stat -x, -e "$events" -- "$@" > /dev/null 2> "$tmp/p.csv"
  mf=$(awk -F, '$1=="total" && $4=="page-faults" {print $5}' "$tmp/m.csv")
  mt=$(awk -F, '$1=="total" && $4=="task-clock" {print $5}' "$tmp/m.csv")
  pf=$(awk -F, '$3=="page-faults" {print $1}' "$tmp/p.csv")
  pt=$(awk -F, '$3=="task-clock" {print $1 * 1e6}' "$tmp/p.csv")
  ratio=$(awk -v a="$mt" -v b="$pt" 'BEGIN {printf "%.4f", a / b}')
  echo "$r  $mf  $pf  $ratio" | tee -a "$tmp/rows"
done
awk '{print $4}' "$tmp/rows" | sort -g | awk '{v[NR]=$1} END {printf "task-clock ratio: median x%.3f, range [x%.3f, x%.3f] over %d pairs\n", v[int((NR+1)/2)], v[1], v[NR], NR}'
awk '{d=$2-$3; if (d<0) d=-d; if (d>m) m=d} END {printf "page faults: largest difference %d\n", m}' "$tmp/rows"
