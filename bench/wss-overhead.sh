#!/usr/bin/env bash
# What `memperf wss` costs the program it watches: PAIRS pairs, the order
# alternating by pair, of the program alone (/usr/bin/time) and under
# `memperf wss -I MS` (the program's own wall time from the document);
# MS `default` leaves -I out (the interval grows with the hot set).
# One row per run: pair arm wall_s; then the median of the per-pair ratios.
#
#   bench/wss-overhead.sh PAIRS MS -- CMD [ARGS...]
set -euo pipefail
pairs=${1:?pairs}; ms=${2:?interval ms}; shift 2
[ "${1:-}" = "--" ] && shift
memperf=${MEMPERF:-target/release/memperf}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
plain() { /usr/bin/time -f "%e" -o "$tmp/t" "$@" >/dev/null 2>&1; tail -n 1 "$tmp/t"; }
watched() {
  local every=(-I "$ms"); [ "$ms" = default ] && every=()
  "$memperf" wss "${every[@]}" --json "$tmp/w.json" -- "$@" >/dev/null 2>&1
  python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["experiments"][0]["outcome"]["wall_s"])' "$tmp/w.json"
  rm -f "$tmp/w.json"
}
echo "pair arm wall_s"
ratios=()
for ((p = 0; p < pairs; p++)); do
  if ((p % 2 == 0)); then a=$(plain "$@"); b=$(watched "$@"); else b=$(watched "$@"); a=$(plain "$@"); fi
  echo "$p plain $a"; echo "$p wss $b"
  ratios+=("$(python3 -c "print($b / $a)")")
done
python3 - "${ratios[@]}" <<'PY'
import statistics, sys
r = sorted(float(x) for x in sys.argv[1:])
print(f"wss/plain: median x{statistics.median(r):.3f}, range x{r[0]:.3f}..x{r[-1]:.3f} over {len(r)} pairs")
PY
