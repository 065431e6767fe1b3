#!/usr/bin/env bash
# The suite's latency at one size, per page policy, against the same policy
# measured alone: does measuring 4k and THP interleaved (each sample after
# a warm-up traversal of its own cycle) change either? Alternates, ROUNDS
# times:
#
#   memperf run --only latency                  (the suite's sizes, 4k and thp interleaved)
#   memperf latency --pages 4k --sizes SIZE     (the suite's latency settings, one policy, one size)
#   memperf latency --pages thp --sizes SIZE
#
# and prints each round's figures and, per policy, the median of the
# per-round ratios (suite / alone) with their range. Timing figures: read
# them beside the host's noise (a guest's L3 edge moves with neighbours).
#
#   bench/policy-alone.sh [ROUNDS] [SIZE]       ROUNDS default 10, SIZE 8MiB
#   MEMPERF=/tmp/memperf-old bench/policy-alone.sh 1     (another build)
set -euo pipefail
rounds=${1:-10}
size=${2:-8MiB}
[[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "ROUNDS must be a whole number of at least 1" >&2; exit 2; }
cd "$(dirname "$0")/.."
# MEMPERF names another build to run (one kept aside, say); else this tree's.
m=${MEMPERF:-./target/release/memperf}
[ -n "${MEMPERF:-}" ] || cargo build --release -q
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for r in $(seq 1 "$rounds"); do
  $m run --only latency --quiet -o "$out/suite$r" > /dev/null 2>&1
  # The suite's own settings, read from what it ran, for one policy and size.
  args=$(python3 - "$out/suite$r/results.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
p = next(e for e in doc["experiments"] if e["name"] == "latency")["params"]
flags = [f"--repetitions {p['repetitions']}", f"--allocations {p['allocations']}",
         "--chains " + ",".join(map(str, p["chains"])), "--precision none"]
if not p["page_local"]:
    flags.append("--no-page-local")
print(" ".join(flags))
PY
)
  for pol in 4k thp; do
    # shellcheck disable=SC2086
    $m latency --quiet --pages "$pol" --sizes "$size" $args --json "$out/alone-$pol-$r.json" > /dev/null 2>&1
  done
done
python3 - "$out" "$rounds" "$size" <<'PY'
import json, statistics, sys
out, rounds, size = sys.argv[1], int(sys.argv[2]), sys.argv[3]
units = {"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}
want = next(int(size[:-3]) * v for k, v in units.items() if size.endswith(k))
def point(doc, pol):
    lat = next(e for e in doc["experiments"] if e["name"] == "latency")["outcome"]
    hits = [p for p in lat["points"] if p["pages"] == pol and p["size_bytes"] == want and p["order"] == "random"]
    return hits[0]["latency_ns"]["median"] if hits else float("nan")
ratios = {"4k": [], "thp": []}
print(f"round  suite 4k  alone 4k  suite thp  alone thp   (ns per load at {size})")
for r in range(1, rounds + 1):
    suite = json.load(open(f"{out}/suite{r}/results.json"))
    row = []
    for pol in ("4k", "thp"):
        s, a = point(suite, pol), point(json.load(open(f"{out}/alone-{pol}-{r}.json")), pol)
        ratios[pol].append(s / a)
        row += [s, a]
    print(f"{r:>5}  {row[0]:>8.1f}  {row[1]:>8.1f}  {row[2]:>9.1f}  {row[3]:>9.1f}")
for pol, v in ratios.items():
    print(f"{pol}: suite / alone ×{statistics.median(v):.3f} (range ×{min(v):.3f}..×{max(v):.3f}, {len(v)} rounds)")
PY
