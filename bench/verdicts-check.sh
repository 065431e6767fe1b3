#!/usr/bin/env bash
# Three (RUNS) consecutive `memperf run`, each followed by independent C
# programs measuring two of its verdicts: a random chase over 256 MiB on
# 4 KiB pages and on THP (bench/chase.c, alternated ROUNDS times), and a
# protected call saving a context with _setjmp and with sigsetjmp(env, 1)
# (bench/setjmp.c, alternated likewise). Prints each run's verdict lines,
# whether the runs give the same verdicts (numbers masked) with
# overlapping intervals, memperf's figures beside the C programs', and
# `memperf compare` of the first run and the last.
#
#   bench/verdicts-check.sh [RUNS] [ROUNDS] [OUT]   (default 3 3 a temporary folder; needs cc, python3)
set -euo pipefail
runs=${1:-3}
rounds=${2:-3}
cd "$(dirname "$0")/.."
out=${3:-$(mktemp -d)}
mkdir -p "$out"
cargo build --release -q
cc -O2 -o "$out/chase" bench/chase.c
cc -O2 -o "$out/setjmp" bench/setjmp.c
for r in $(seq 1 "$runs"); do
  start=$(date +%s.%N)
  ./target/release/memperf run --output "$out/run$r" > "$out/run$r.txt" 2>&1
  echo "run $r: $(python3 -c "import time; print(round(time.time() - $start, 1))") s" >&2
  for i in $(seq 1 "$rounds"); do
    for pol in 4k thp; do "$out/chase" 262144 "$pol" 0.5 "$i" > "$out/chase-$r-$i-$pol.txt"; done
    for m in _setjmp sigsetjmp1; do "$out/setjmp" "$m" 2000000 > "$out/setjmp-$r-$i-$m.txt"; done
  done
done
set +e
./target/release/memperf compare "$out/run1" "$out/run$runs" --fail-on-regression 10 > "$out/compare.txt"
echo "compare run1 run$runs --fail-on-regression 10: exit $?" >> "$out/compare.txt"
set -e
python3 - "$out" "$runs" "$rounds" <<'PY'
import json, re, statistics, sys
out, runs, rounds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
def verdicts(r):
    # The lines under the verdicts' heading, each joined with the lines
    # it wraps onto.
    text = open(f"{out}/run{r}.txt").read()
    found = []
    for l in re.split(r"\nverdicts[ (]", text)[-1].splitlines()[1:]:
        if l.startswith("  ["):
            found.append(l.strip())
        elif l.startswith("    ") and found:
            found[-1] += " " + l.strip()
        else:
            break
    return found
def open_ones(r):
    # The screen folds comparisons not resolved into one line.
    text = open(f"{out}/run{r}.txt").read()
    m = re.search(r"\n  not resolved: ([^(]*)\(", text)
    return m.group(1).strip() if m else "none"
words = ("faster ×", "slower ×", "no change:", "not resolved:", "invalid:", "costs more", "costs less")
def masked(l):
    return re.sub(r"[-+]?\d+(\.\d+)?", "#", l)
def interval(l):
    m = re.search(r"×([\d.]+) \[×([\d.]+), ×([\d.]+)\]", l)
    return tuple(map(float, m.groups())) if m else None
all_v = [verdicts(r) for r in range(1, runs + 1)]
for r, v in enumerate(all_v, 1):
    stated = [l for l in v if any(w in l for w in words[:3]) or "costs more" in l]
    print(f"run {r}: {len(v)} lines, {len(stated)} stating a verdict (faster, slower, no change, costs more); not resolved: {open_ones(r)}")
    for l in v:
        print("   ", l[:200])
# The subject, its parameters masked: the best page-init variant or the
# costliest bad address may differ from run to run, the verdict not.
best = lambda l: re.sub(r"initialisation, .*? against", "initialisation, (the best) against", l)
key = lambda l: re.sub(r"\([^()]*(\([^()]*\)[^()]*)*\)|\d+", "", best(l).split(":")[0]).strip()
calls = lambda l: next((w for w in words if w in l), "")
same = all([(key(l), calls(l)) for l in v] == [(key(l), calls(l)) for l in all_v[0]] for v in all_v)
print(f"same verdicts in every run (subject and call): {same}")
# Those resolved in every run: the same call each time?
stated = lambda v: {key(l): calls(l) for l in v if calls(l) and calls(l) != "not resolved:"}
common = set.intersection(*(set(stated(v)) for v in all_v))
agree = all(len({stated(v)[k] for v in all_v}) == 1 for k in common)
print(f"resolved in every run: {len(common)}, each with the same call in every run: {agree}")
for l in all_v[0]:
    ivs = [interval(m) for v in all_v for m in v if key(m) == key(l)]
    ivs = [i for i in ivs if i]
    if len(ivs) == runs:
        overlap = max(i[1] for i in ivs) <= min(i[2] for i in ivs)
        print(f"  {key(l)[:70]}: {', '.join(f'×{i[0]:.3f}' for i in ivs)}; intervals overlap: {overlap}")
def doc(r):
    return json.load(open(f"{out}/run{r}/results.json"))
for r in range(1, runs + 1):
    d = doc(r)
    # An experiment the time box left out has no outcome: it is said.
    out_of = lambda name: next(e for e in d["experiments"] if e["name"] == name).get("outcome")
    lat, ctx = out_of("latency"), out_of("context")
    rat = [x["ratio"] for x in lat["ratios"] if x["a"] == "4k" and x["b"] == "thp"] if lat else []
    ns = {s["op"]: s["ns_per_op"]["median"] for s in ctx["saves"] if s["threads"] == 1} if ctx else {}
    c = lambda pol: statistics.median(float(open(f"{out}/chase-{r}-{i}-{pol}.txt").read()) for i in range(1, rounds + 1))
    cr = [float(open(f"{out}/chase-{r}-{i}-thp.txt").read()) / float(open(f"{out}/chase-{r}-{i}-4k.txt").read()) for i in range(1, rounds + 1)]
    s = lambda m: statistics.median(float(open(f"{out}/setjmp-{r}-{i}-{m}.txt").read()) for i in range(1, rounds + 1))
    if rat:
        x = rat[0]
        print(f"run {r}: THP/4k latency at 256MiB: memperf ×{x['estimate']:.3f} [×{x['low']:.3f}, ×{x['high']:.3f}]; "
              f"C chase 4k {c('4k'):.0f} ns, THP {c('thp'):.0f} ns, ×{statistics.median(cr):.3f} (×{min(cr):.3f}..×{max(cr):.3f})")
    if not ns:
        print(f"run {r}: context was left out (the time box); C {s('sigsetjmp1'):.1f} / {s('_setjmp'):.1f} ns = ×{s('sigsetjmp1') / s('_setjmp'):.1f}")
        continue
    print(f"run {r}: sigsetjmp(env,1) / _setjmp: memperf {ns['sigsetjmp-1']:.1f} / {ns['_setjmp']:.1f} ns = ×{ns['sigsetjmp-1'] / ns['_setjmp']:.1f}; "
          f"C {s('sigsetjmp1'):.1f} / {s('_setjmp'):.1f} ns = ×{s('sigsetjmp1') / s('_setjmp'):.1f}")
print(open(f"{out}/compare.txt").read().splitlines()[-1])
PY
echo "raw runs in $out" >&2
