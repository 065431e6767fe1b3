//! What `stat` tells the user: what this machine cannot know (and what to
//! do instead), and advice with a number in it, drawn only from what was
//! measured.

use crate::model::outcome::stat::Outcome;
use crate::units::Bytes;

/// What cannot be known here, and the estimate that can be made instead.
pub fn cannot_know(o: &Outcome) -> Vec<String> {
    let mut out = Vec::new();
    let missing: Vec<&str> =
        o.events.iter().filter(|e| !e.software && e.status.value().is_none()).map(|e| e.name.as_str()).collect();
    if missing.is_empty() {
        return out;
    }
    let reason = o
        .events
        .iter()
        .find(|e| !e.software && e.status.value().is_none())
        .map(|e| match &e.status {
            crate::counters::CounterStatus::Unavailable { reason, .. } => reason.clone(),
            crate::counters::CounterStatus::NotCounted { reason } => reason.clone(),
            _ => String::new(),
        })
        .unwrap_or_default();
    out.push(format!(
        "Not measured here: {} ({reason}). CPI, cache and TLB miss rates and the time in page walks cannot be known on this machine.",
        missing.join(", ")
    ));
    out.extend(translation_estimate(o));
    out
}

/// Without TLB counters: how the program's resident set compares with the
/// TLB reach, and what a walk costs here.
fn translation_estimate(o: &Outcome) -> Option<String> {
    let rss = o.coverage.peak_rss_bytes.max(o.usage.max_rss_bytes);
    let f = &o.machine_figures;
    // A measured reach beats what a hypervisor's CPUID may invent.
    let (reach4k, origin) = match (f.measured_reach_4k_bytes, f.tlb_reach_4k_bytes) {
        (Some(m), Some(c)) if m != c => (m, format!("measured by memperf tlb; CPUID claims {}", Bytes(c))),
        (Some(m), _) => (m, "measured by memperf tlb".to_string()),
        (None, Some(c)) => (c, "CPUID".to_string()),
        (None, None) => return None,
    };
    if rss <= reach4k {
        return Some(format!(
            "Its peak resident set ({}) fits the L2 TLB reach of 4 KiB pages ({}, {origin}): huge pages can gain little on translation.",
            Bytes(rss),
            Bytes(reach4k)
        ));
    }
    let huge = match f.tlb_reach_2m_bytes {
        Some(r) => {
            format!("; with 2 MiB pages CPUID's reach is {} ({:.1}× its resident set)", Bytes(r), r as f64 / rss as f64)
        }
        None => String::new(),
    };
    let miss = |reach: u64| (1.0 - reach as f64 / rss as f64).max(0.0);
    let cost = match (f.walk_ns, f.tlb_reach_2m_bytes) {
        (Some(w), Some(r2)) => format!(
            " Each page walk costs {w:.0} ns here (memperf tlb, {}): a random access over its memory misses the TLB with probability {:.2} on 4 KiB pages and {:.2} on 2 MiB pages, so huge pages would save up to {:.0} ns per random access. How many such accesses it makes only counters or an A/B run can tell.",
            f.source.as_deref().unwrap_or("a saved result"),
            miss(reach4k),
            miss(r2),
            w.0 * (miss(reach4k) - miss(r2))
        ),
        (None, _) => match &f.walk_not_measurable {
            Some(why) => format!(" What a page walk costs cannot be measured on this host: {why}."),
            None => " The walk cost of this machine is not measured yet: run `memperf tlb -o DIR` once (or pass --machine-results).".into(),
        },
        (Some(w), None) => format!(" Each page walk costs {w:.0} ns here (memperf tlb)."),
    };
    Some(format!(
        "Its peak resident set ({}) is {:.0}× the L2 TLB reach of 4 KiB pages ({}, {origin}){huge}.{cost} Instead: `memperf hugepages -- CMD` runs it alternately without and with huge pages for malloc and reads back the coverage each run got.",
        Bytes(rss),
        rss as f64 / reach4k as f64,
        Bytes(reach4k),
    ))
}

/// Below this, major faults are the binaries and libraries being read in.
pub const MANY_MAJOR_FAULTS: u64 = 100;

/// Advice with a number in it, each from a measured figure.
pub fn advice(o: &Outcome, thp_mode: &str) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(share) = o.metric("estimated time in page walks").and_then(|m| m.value()) {
        if share >= 0.05 {
            out.push(format!(
                "An estimated {:.0}% of its CPU time goes to page walks: try `memperf hugepages -- CMD` (huge pages for malloc, A/B with the coverage read back), or back its large arrays with THP via madvise.",
                share * 100.0
            ));
        }
    }
    if let Some(cpi) = o.metric("CPI").and_then(|m| m.value()) {
        if cpi >= 3.0 {
            out.push(format!(
                "CPI {cpi:.2}: most cycles wait for memory or other stalls; the miss rates above say which level."
            ));
        }
    }
    let rss = o.coverage.peak_rss_bytes.max(o.usage.max_rss_bytes);
    if let Some(frac) = o.coverage.time_weighted_huge_fraction {
        if rss >= 64 << 20 && frac < 0.1 {
            let why = if thp_mode == "madvise" {
                " (THP is in madvise mode: a program gets huge pages only where it asks, with madvise(MADV_HUGEPAGE) or glibc's malloc tunable; `memperf hugepages -- CMD` tries the tunable)"
            } else {
                ""
            };
            out.push(format!(
                "Only {:.0}% of its {} resident memory sat on huge pages over the run{why}.",
                frac * 100.0,
                Bytes(rss)
            ));
        }
    }
    if let Some(cpus) = o.metric("CPUs used").and_then(|m| m.value()) {
        if o.wall_s >= 0.2 && cpus < 0.8 {
            out.push(format!(
                "It kept {cpus:.2} CPUs busy: {:.0}% of its wall time it waited (I/O, sleep, locks); memory tuning speeds up only the busy part.",
                (1.0 - cpus).max(0.0) * 100.0
            ));
        }
    }
    if o.usage.major_faults >= MANY_MAJOR_FAULTS {
        out.push(format!(
            "{} major page faults: it waited for pages from disk; warm the file cache or lock the data in memory.",
            o.usage.major_faults
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::counters::metrics::{Metric, Outcome as M};
    use crate::counters::sanity::PmuCheck;
    use crate::counters::CounterStatus;
    use crate::model::outcome::stat::{EventCount, MachineFigures};
    use crate::process::memory::Coverage;
    use crate::process::{ChildUsage, Exit};

    fn outcome(events: Vec<EventCount>, metrics: Vec<Metric>, rss: u64) -> Outcome {
        Outcome {
            command: vec!["app".into()],
            exit: Exit::Exited { code: 0 },
            wall_s: 10.0,
            usage: ChildUsage { max_rss_bytes: rss, ..Default::default() },
            pmu_check: PmuCheck::Unavailable { reason: "x".into() },
            events,
            interval_ms: None,
            intervals: vec![],
            memory_samples: vec![],
            coverage: Coverage {
                samples: 10,
                peak_rss_bytes: rss,
                peak_huge_bytes: 0,
                time_weighted_huge_fraction: Some(0.0),
            },
            machine_figures: MachineFigures {
                source: Some("r.json".into()),
                walk_ns: Some(crate::units::Nanos(40.0)),
                line_bytes: 64,
                tlb_reach_4k_bytes: Some(3072 * 4096),
                tlb_reach_2m_bytes: Some(2048 * (2 << 20)),
                measured_reach_4k_bytes: None,
                walk_not_measurable: None,
                notes: vec![],
            },
            metrics,
            cannot_know: vec![],
            advice: vec![],
            hot_set: None,
            valid: true,
        }
    }

    fn metric(name: &str, value: f64) -> Metric {
        Metric {
            name: name.into(),
            unit: "fraction".into(),
            description: String::new(),
            formula: String::new(),
            outcome: M::Computed { value, scaled: false, suspect: false },
        }
    }

    #[test]
    fn without_a_pmu_it_says_so_and_estimates_from_the_reach() {
        let e = EventCount {
            name: "cycles".into(),
            description: String::new(),
            software: false,
            status: CounterStatus::Unavailable { reason: "no hardware PMU is exposed".into(), fix: None },
        };
        let o = outcome(vec![e], vec![], 1200 << 20);
        let c = cannot_know(&o);
        assert!(c[0].starts_with("Not measured here: cycles (no hardware PMU"), "{}", c[0]);
        // 1200 MiB over a 12 MiB reach; 4 GiB of 2 MiB reach covers it all.
        assert!(c[1].contains("100× the L2 TLB reach"), "{}", c[1]);
        assert!(c[1].contains("probability 0.99 on 4 KiB pages and 0.00 on 2 MiB"), "{}", c[1]);
        assert!(c[1].contains("save up to 40 ns per random access"), "{}", c[1]);
        let a = advice(&o, "madvise");
        assert!(a.iter().any(|s| s.starts_with("Only 0% of its 1200MiB") && s.contains("madvise mode")), "{a:?}");
    }

    #[test]
    fn with_counters_the_numbers_drive_the_advice() {
        let o = outcome(vec![], vec![metric("estimated time in page walks", 0.283), metric("CPUs used", 0.5)], 1 << 20);
        assert!(cannot_know(&o).is_empty());
        let a = advice(&o, "always");
        assert!(a[0].starts_with("An estimated 28% of its CPU time goes to page walks"), "{a:?}");
        assert!(a.iter().any(|s| s.contains("kept 0.50 CPUs busy: 50%")), "{a:?}");
        assert!(!a.iter().any(|s| s.contains("huge pages over the run")), "a 1 MiB program gets no coverage advice");
    }

    /// A host whose huge pages use small TLB entries (backed by small host
    /// pages, as the 2-vCPU recordings are): the advice says no
    /// walk cost can be measured there, at the count its own tlb found,
    /// never "run memperf tlb". A host whose huge pages enlarge the reach
    /// (the 16-CPU recording) is not called unmeasurable: its quick
    /// suite measured no walk cost, so the advice sends it to `memperf tlb`.
    #[test]
    fn a_host_without_a_walk_free_control_is_not_sent_to_memperf_tlb() {
        let mut same_reach = 0;
        for dir in crate::test_support::recording_dirs() {
            let path = dir.join("run-quick.json");
            let doc = crate::model::journal::load(&path).unwrap();
            let tlb = doc.outcome::<crate::model::outcome::tlb::Outcome>().unwrap();
            match tlb.control {
                crate::model::outcome::tlb::Control::SameReach { pages, .. } => {
                    walk_cost_not_measurable(&path, pages);
                    same_reach += 1;
                }
                _ => walk_cost_left_to_measure(&path),
            }
        }
        assert!(same_reach >= 4, "{same_reach} recordings without a walk-free control");
    }

    /// The figures `stat` gathers from a recording, and the advice a
    /// program without cycles gets on that host: the walk fields come from
    /// the recording, as in a live run, not restated.
    fn advice_on(path: &std::path::Path) -> (MachineFigures, Vec<String>) {
        let f = crate::machine::saved::gather(&crate::machine::collect(), Some(path)).unwrap();
        let mut o = outcome(vec![no_cycles()], vec![], 1200 << 20);
        o.machine_figures.walk_ns = f.walk_ns;
        o.machine_figures.walk_not_measurable = f.walk_not_measurable.clone();
        let c = cannot_know(&o);
        (f, c)
    }

    fn walk_cost_left_to_measure(path: &std::path::Path) {
        let (f, c) = advice_on(path);
        assert_eq!((f.walk_ns, f.walk_not_measurable), (None, None), "{}", path.display());
        assert!(c[1].contains("run `memperf tlb -o DIR` once"), "{}", c[1]);
    }

    /// Cycles refused: no hardware PMU, as on every recorded guest.
    fn no_cycles() -> EventCount {
        EventCount {
            name: "cycles".into(),
            description: String::new(),
            software: false,
            status: CounterStatus::Unavailable { reason: "no hardware PMU is exposed".into(), fix: None },
        }
    }

    fn walk_cost_not_measurable(path: &std::path::Path, pages: u64) {
        let (f, c) = advice_on(path);
        assert_eq!(f.walk_ns, None);
        let why = f.walk_not_measurable.expect("the recording's tlb found no walk-free control");
        assert!(why.contains("thp pages using small TLB entries") && why.contains(&format!("{pages} pages")), "{why}");
        assert!(c[1].contains("What a page walk costs cannot be measured on this host"), "{}", c[1]);
        assert!(!c[1].contains("run `memperf tlb"), "{}", c[1]);
    }
}
