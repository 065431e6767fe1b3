#!/usr/bin/env bash
# Independent timing of a program with and without THP from glibc's malloc
# (GLIBC_TUNABLES=glibc.malloc.hugetlb=1 / 0), beside `memperf hugepages`:
# ROUNDS rounds, the order alternating by round, each run timed by
# /usr/bin/time with the /proc/vmstat compaction and THP counters read
# around it. One row per run: round arm wall_s sys_s compact_stall
# thp_fault_alloc thp_fault_fallback previous_arm.
#
#   bench/hugepages-compare.sh ROUNDS -- CMD [ARGS...]
set -euo pipefail
rounds=${1:?rounds}; shift
[ "${1:-}" = "--" ] && shift
vm() { awk -v k="$1" '$1 == k { print $2 }' /proc/vmstat; }
prev=-
echo "round arm wall_s sys_s compact_stall thp_fault_alloc thp_fault_fallback after"
for ((r = 0; r < rounds; r++)); do
    if ((r % 2 == 0)); then arms="0 1"; else arms="1 0"; fi
    for t in $arms; do
        c0=$(vm compact_stall); a0=$(vm thp_fault_alloc); f0=$(vm thp_fault_fallback)
        times=$( { GLIBC_TUNABLES=glibc.malloc.hugetlb=$t /usr/bin/time -f "%e %S" "$@" >/dev/null; } 2>&1 | tail -1)
        c1=$(vm compact_stall); a1=$(vm thp_fault_alloc); f1=$(vm thp_fault_fallback)
        name=$([ "$t" = 1 ] && echo thp || echo without)
        echo "$r $name $times $((c1 - c0)) $((a1 - a0)) $((f1 - f0)) $prev"
        prev=$name
    done
done
