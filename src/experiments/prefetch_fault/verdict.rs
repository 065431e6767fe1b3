//! One finding per instruction and loop kind, and the TLB-miss verdict,
//! drawn only from what the intervals support.

use super::{Finding, LoopKind, PrefetchCell, StrideResult, Target, TlbMissVerdict, Verdict};
use crate::memory::PagePolicy;
use crate::timing::schedule::Call;

/// A prefetch that faults at least this often per prefetch traps.
pub const TRAP_FAULTS_PER_PREFETCH: f64 = 0.5;

/// Cycles a prefetch of a mapped, cached line may take at most: in the
/// throughput loop (eight independent prefetches a step, which a core
/// issues one or two a cycle) and in the dependent loop (an L1 hit's
/// load-to-use latency, 4–5 cycles, twice over for the loop around it).
pub const MAPPED_MAX_CYCLES: (f64, f64) = (4.0, 12.0);

/// The finding for each instruction and loop kind over its bad targets,
/// where its mapped reference passes [`reference_unsound`].
pub fn verdicts(cells: &[PrefetchCell], ghz: Option<f64>) -> Vec<Verdict> {
    let mut keys: Vec<(String, LoopKind)> =
        cells.iter().filter(|c| c.instruction != "none").map(|c| (c.instruction.clone(), c.loop_kind)).collect();
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .map(|(instruction, loop_kind)| {
            let bad: Vec<&PrefetchCell> = cells
                .iter()
                .filter(|c| c.instruction == instruction && c.loop_kind == loop_kind && c.target != Target::Mapped)
                .collect();
            let finding = match reference_unsound(cells, &instruction, loop_kind, ghz) {
                Some(reason) => Finding::NotMeasured { reason },
                None => finding(&bad),
            };
            Verdict { finding, instruction, loop_kind }
        })
        .collect()
}

/// Why the mapped-line cell that an instruction's bad targets are judged
/// against cannot be a reference, if it cannot: slower than physics allows
/// at the measured clock ([`MAPPED_MAX_CYCLES`]), or, in the throughput
/// loop, slower than the same prefetch in the dependent loop beside it
/// (independent prefetches never cost more each than dependent ones).
pub fn reference_unsound(cells: &[PrefetchCell], instruction: &str, kind: LoopKind, ghz: Option<f64>) -> Option<String> {
    let mapped = |k: LoopKind| {
        cells.iter().find(|c| c.instruction == instruction && c.loop_kind == k && c.target == Target::Mapped)
    };
    let own = mapped(kind)?.ns_per_prefetch.median;
    let most = match kind {
        LoopKind::Throughput => MAPPED_MAX_CYCLES.0,
        LoopKind::Latency => MAPPED_MAX_CYCLES.1,
    };
    if let Some(g) = ghz.filter(|&g| own * g > most) {
        return Some(format!(
            "its mapped-line reference ({own:.2} ns, {:.0} cycles at {g:.2} GHz) is slower than a prefetch of a cached line can be (at most {most:.0} cycles): the reference was disturbed, so nothing is judged against it; rerun",
            own * g
        ));
    }
    let dependent = mapped(LoopKind::Latency).map(|c| c.ns_per_prefetch.median);
    match dependent {
        Some(d) if kind == LoopKind::Throughput && own > 1.1 * d => Some(format!(
            "its mapped-line reference in the throughput loop ({own:.2} ns) is slower than the same prefetch in the dependent loop ({d:.2} ns), which independent prefetches never are: the reference was disturbed, so nothing is judged against it; rerun"
        )),
        _ => None,
    }
}

fn finding(bad: &[&PrefetchCell]) -> Finding {
    let faults = |c: &PrefetchCell| c.page_faults as f64 / c.prefetches.max(1) as f64;
    if let Some(t) =
        bad.iter().filter(|c| faults(c) >= TRAP_FAULTS_PER_PREFETCH).max_by(|a, b| faults(a).total_cmp(&faults(b)))
    {
        return Finding::Traps { target: t.target, faults_per_prefetch: faults(t) };
    }
    if bad.is_empty() {
        return Finding::NotMeasured { reason: "no bad target was asked for".into() };
    }
    let rated: Vec<(&&PrefetchCell, &crate::timing::Ratio)> =
        bad.iter().filter_map(|c| c.over_mapped_ns.as_ref().map(|r| (c, r))).collect();
    if rated.is_empty() {
        return Finding::NotMeasured { reason: "no bad target has paired repetitions".into() };
    }
    let costs = rated.iter().filter(|(_, r)| r.call() == Call::Above);
    if let Some((c, r)) = costs.max_by(|a, b| a.1.estimate.total_cmp(&b.1.estimate)) {
        return Finding::Costs { target: c.target, over_mapped_ns: (*r).clone() };
    }
    let open = rated.iter().filter(|(_, r)| !r.verdict().resolved());
    match open.max_by(|a, b| (a.1.high - a.1.low).total_cmp(&(b.1.high - b.1.low))) {
        Some((c, r)) => Finding::NotResolved { target: c.target, over_mapped_ns: (*r).clone() },
        None => {
            Finding::NoCostBeyondNoise { widest_high_ns: rated.iter().map(|(_, r)| r.high).fold(f64::MIN, f64::max) }
        }
    }
}

/// Does a prefetch that misses the TLB walk the page table?
pub fn tlb_miss(stride: &[StrideResult]) -> TlbMissVerdict {
    let best = |pol: PagePolicy| {
        stride.iter().filter(|s| s.pages == pol).max_by(|a, b| a.speedup.estimate.total_cmp(&b.speedup.estimate))
    };
    let Some(small) = best(PagePolicy::Small) else {
        return TlbMissVerdict::Inconclusive { reason: "the 4 KiB walk was not measured".into() };
    };
    if small.speedup.call() == Call::Above {
        return TlbMissVerdict::Walks { ahead_pages: small.ahead_pages, speedup_small: small.speedup.clone() };
    }
    match best(PagePolicy::Thp) {
        Some(h) if h.huge_fraction.is_some_and(|f| f >= 0.9) && h.speedup.call() == Call::Above => {
            TlbMissVerdict::Dropped { speedup_small: small.speedup.clone(), speedup_huge: h.speedup.clone() }
        }
        Some(h) if !h.huge_fraction.is_some_and(|f| f >= 0.9) => TlbMissVerdict::Inconclusive {
            reason: "no gain on 4 KiB pages, and the huge-page region got under 90% huge pages".into(),
        },
        _ => TlbMissVerdict::Inconclusive {
            reason: "prefetch brings no gain beyond the noise on either page size".into(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::timing::{Ratio, Summary};

    fn cell(target: Target, diffs: &[f64], faults: u64) -> PrefetchCell {
        PrefetchCell {
            instruction: "prefetcht0".into(),
            target,
            loop_kind: LoopKind::Throughput,
            samples_ns: vec![1.0],
            ns_per_prefetch: Summary::of(&[1.0]).unwrap(),
            over_baseline_ns: None,
            over_mapped_ns: Ratio::differences(diffs).map(|r| r.relative_to(10.0)),
            user_s: 0.0,
            system_s: None,
            page_faults: faults,
            prefetches: 1000,
        }
    }

    fn mapped(kind: LoopKind, ns: f64) -> PrefetchCell {
        PrefetchCell { loop_kind: kind, ns_per_prefetch: Summary::of(&[ns]).unwrap(), ..cell(Target::Mapped, &[], 0) }
    }

    /// A run whose mapped line read 5.93 ns in the throughput
    /// loop (3.15 ns in the dependent one; 0.28 and 1.21 in run 1) made
    /// "NULL is harmless" from noise. Such a reference judges nothing.
    #[test]
    fn a_disturbed_mapped_reference_judges_nothing() {
        let noisy: Vec<f64> = (0..10).map(|i| -0.2 + i as f64 * 0.05).collect();
        let run3 = [mapped(LoopKind::Throughput, 5.93), mapped(LoopKind::Latency, 3.15), cell(Target::Null, &noisy, 0)];
        let v = verdicts(&run3, None);
        let Finding::NotMeasured { reason } = &v[0].finding else { panic!("{v:?}") };
        assert!(reason.contains("slower than the same prefetch in the dependent loop"), "{reason}");
        let at_clock = reference_unsound(&run3[..1], "prefetcht0", LoopKind::Throughput, Some(4.5)).unwrap();
        assert!(at_clock.contains("27 cycles"), "{at_clock}");
        let run1 = [mapped(LoopKind::Throughput, 0.28), mapped(LoopKind::Latency, 1.21), cell(Target::Null, &noisy, 0)];
        assert!(matches!(verdicts(&run1, Some(4.5))[0].finding, Finding::NoCostBeyondNoise { .. }));
    }

    #[test]
    fn a_cost_needs_an_interval_above_zero() {
        let noisy: Vec<f64> = (0..10).map(|i| -0.2 + i as f64 * 0.05).collect();
        let costly: Vec<f64> = (0..10).map(|i| 0.4 + i as f64 * 0.02).collect();
        let v = verdicts(&[cell(Target::Null, &noisy, 0), cell(Target::ProtNone, &costly, 0)], None);
        assert!(matches!(v[0].finding, Finding::Costs { target: Target::ProtNone, .. }), "{v:?}");
        let v = verdicts(&[cell(Target::Null, &noisy, 0)], None);
        assert!(matches!(v[0].finding, Finding::NoCostBeyondNoise { .. }), "{v:?}");
    }

    #[test]
    fn the_mapped_reference_alone_is_not_a_verdict_of_no_cost() {
        // The expert's case: "--targets null,prot-none" printed "costs
        // nothing" because the unmeasured reference became 0. Without an
        // interval there is no finding.
        let v = verdicts(&[cell(Target::Null, &[], 0)], None);
        assert!(matches!(v[0].finding, Finding::NotMeasured { .. }), "{v:?}");
        let v = verdicts(&[cell(Target::Null, &[0.5, 0.6, 0.7], 0)], None);
        assert!(matches!(v[0].finding, Finding::NotResolved { .. }), "n = 3 is too few: {v:?}");
    }

    #[test]
    fn a_few_faults_are_not_traps_but_one_per_prefetch_is() {
        let costly: Vec<f64> = (0..10).map(|i| 0.4 + i as f64 * 0.02).collect();
        let v = verdicts(&[cell(Target::Null, &costly, 3)], None);
        assert!(matches!(v[0].finding, Finding::Costs { .. }), "{v:?}");
        let v = verdicts(&[cell(Target::Null, &costly, 1000)], None);
        assert!(matches!(v[0].finding, Finding::Traps { target: Target::Null, .. }), "{v:?}");
    }
}
