#!/usr/bin/env bash
# The GPU checks of docs/methods/gpu.md on a machine with an NVIDIA GPU, in
# one go (its two measuring steps time out at 5 and 4 minutes, inside a
# device session's 15), writing what tests/data/machines
# keeps of it. The machine needs no registry: memperf travels built.
#
# Here, once (x86-64):
#   cargo build --release && mkdir -p dist && strip -o dist/memperf target/release/memperf
#   grep -qx '/dist/' .git/info/exclude || echo /dist/ >> .git/info/exclude
# There, from the repository root, with dist carried:
#   OUT=/some/folder bash bench/gpu-device.sh
# It writes into $OUT: nvidia-smi.txt, nvcc.txt (the kernels compiled by
# nvcc), info.txt, gpu.txt and gpu.json (the
# default parameters), run.json (the quick suite, gpu in it), and
# recording.tar.gz (`memperf info --record`, for tests/data/machines).
set -u
OUT=${OUT:?set OUT to the folder to write into}
bin=${MEMPERF:-dist/memperf}
mkdir -p "$OUT"
step() { echo "== $* ($(date +%T))"; }

step "the machine"
{ nvidia-smi -q; nvidia-smi topo -m; ldconfig -p | grep -E 'libcuda|libnvrtc'; nvcc --version; lscpu; } >"$OUT/nvidia-smi.txt" 2>&1
"$bin" info >"$OUT/info.txt" 2>&1
rec=$(mktemp -d)/h200
"$bin" info --record "$rec" && tar -C "$(dirname "$rec")" -czf "$OUT/recording.tar.gz" "$(basename "$rec")"

step "the kernels through nvcc, as a second compiler beside NVRTC"
nvcc -arch=native -cubin -o "$OUT/kernels.cubin" src/gpu/kernels.cu >"$OUT/nvcc.txt" 2>&1
echo "nvcc exit $?"; head -n 40 "$OUT/nvcc.txt"

step "memperf gpu (default parameters)"
timeout 300 "$bin" gpu --json "$OUT/gpu.json" >"$OUT/gpu.txt" 2>&1
echo "gpu exit $?"
cat "$OUT/gpu.txt"

step "memperf run --quick (the suite, gpu in it)"
timeout 240 "$bin" run --quick --quiet --json "$OUT/run.json" 2>&1 | tail -n 40
echo "run exit ${PIPESTATUS[0]}"
step "done"
