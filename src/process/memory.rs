//! What a running program holds, sampled from /proc/PID/smaps_rollup: its
//! resident set, and how much of it sits on huge pages (THP and hugetlb).

use crate::memory::smaps;
pub use memperf_model::process::memory::{coverage, Coverage, KernelActivity, MemorySample};

/// The kernel's huge-page counters now, from /proc/vmstat (absolute values).
pub fn kernel_activity_now() -> Option<KernelActivity> {
    KernelActivity::parse(&std::fs::read_to_string("/proc/vmstat").ok()?)
}

/// Reads /proc/PID/smaps_rollup; `None` once the process is gone (or a
/// zombie, whose rollup is empty).
pub fn sample(pid: i32, t_s: f64) -> Option<MemorySample> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup")).ok()?;
    from_rollup(&text, t_s)
}

/// As [`sample`], summed over `pid` and every process descended from it
/// (found through /proc/PID/task/TID/children).
pub fn sample_tree(pid: i32, t_s: f64) -> Option<MemorySample> {
    let mut total = sample(pid, t_s)?;
    for child in descendants(pid) {
        if let Some(s) = sample(child, t_s) {
            total.rss_bytes += s.rss_bytes;
            total.thp_bytes += s.thp_bytes;
            total.hugetlb_bytes += s.hugetlb_bytes;
        }
    }
    Some(total)
}

/// Every live descendant of `pid`.
pub fn descendants(pid: i32) -> Vec<i32> {
    let mut out = Vec::new();
    let mut todo = vec![pid];
    while let Some(p) = todo.pop() {
        let Ok(tasks) = std::fs::read_dir(format!("/proc/{p}/task")) else { continue };
        for t in tasks.flatten() {
            let text = std::fs::read_to_string(t.path().join("children")).unwrap_or_default();
            for c in text.split_whitespace().filter_map(|c| c.parse::<i32>().ok()) {
                if !out.contains(&c) {
                    out.push(c);
                    todo.push(c);
                }
            }
        }
    }
    out
}

pub fn from_rollup(text: &str, t_s: f64) -> Option<MemorySample> {
    let e = smaps::first_entry(text)?;
    // Hugetlb pages are not in Rss: they count apart.
    Some(MemorySample {
        t_s,
        rss_bytes: e.rss + e.private_hugetlb + e.shared_hugetlb,
        thp_bytes: e.anon_huge,
        hugetlb_bytes: e.private_hugetlb + e.shared_hugetlb,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const ROLLUP: &str = "\
55bed5136000-7fffa2ab5000 ---p 00000000 00:00 0                          [rollup]
Rss:              409600 kB
Pss:              409000 kB
AnonHugePages:    204800 kB
Shared_Hugetlb:        0 kB
Private_Hugetlb:    2048 kB
";

    #[test]
    fn a_rollup_reads_back() {
        let s = from_rollup(ROLLUP, 1.5).unwrap();
        assert_eq!(s.rss_bytes, (409600 + 2048) * 1024);
        assert_eq!(s.thp_bytes, 204800 * 1024);
        assert_eq!(s.hugetlb_bytes, 2048 * 1024);
        assert!(from_rollup("", 0.0).is_none());
    }

    #[test]
    fn coverage_is_weighted_by_time() {
        let s = |t, rss, thp| MemorySample { t_s: t, rss_bytes: rss, thp_bytes: thp, hugetlb_bytes: 0 };
        // 1 s at 0% of 100, then 3 s at 50% of 200; the last sample only ends the span.
        let c = coverage(&[s(0.0, 100, 0), s(1.0, 200, 100), s(4.0, 50, 0)]);
        assert_eq!(c.peak_rss_bytes, 200);
        assert_eq!(c.peak_huge_bytes, 100);
        assert!((c.time_weighted_huge_fraction.unwrap() - 300.0 / 700.0).abs() < 1e-12);
        assert_eq!(coverage(&[s(0.0, 1, 1)]).time_weighted_huge_fraction, None);
    }

    #[test]
    fn this_process_can_be_sampled() {
        let s = sample(std::process::id() as i32, 0.0).unwrap();
        assert!(s.rss_bytes > 0);
    }

    #[test]
    fn vmstat_deltas_are_read_by_name() {
        let before =
            KernelActivity::parse("nr_free_pages 5\ncompact_stall 10\nthp_fault_alloc 3\nthp_fault_fallback 0\n")
                .unwrap();
        let after = KernelActivity::parse(
            "compact_stall 14\nthp_fault_alloc 1027\nthp_fault_fallback_charge 9\nthp_fault_fallback 2\n",
        )
        .unwrap();
        assert_eq!(
            after.since(&before),
            KernelActivity { compact_stalls: 4, thp_fault_alloc: 1024, thp_fault_fallback: 2 }
        );
        assert_eq!(KernelActivity::parse("compact_stall 1\n"), None);
    }
}
