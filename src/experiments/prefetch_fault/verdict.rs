//! One finding per instruction and loop kind, and the TLB-miss verdict,
//! drawn only from what the intervals support.

use super::{Finding, LoopKind, PrefetchCell, StrideResult, Target, TlbMissVerdict, Verdict};
use crate::memory::PagePolicy;
use crate::timing::schedule::Direction;

/// A prefetch that faults at least this often per prefetch traps.
pub const TRAP_FAULTS_PER_PREFETCH: f64 = 0.5;

/// The finding for each instruction and loop kind over its bad targets.
pub fn verdicts(cells: &[PrefetchCell]) -> Vec<Verdict> {
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
            Verdict { finding: finding(&bad), instruction, loop_kind }
        })
        .collect()
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
    let rated: Vec<(&&PrefetchCell, crate::timing::Ratio)> =
        bad.iter().filter_map(|c| c.over_mapped_ns.map(|r| (c, r))).collect();
    if rated.is_empty() || rated.iter().any(|(_, r)| r.direction() == Direction::TooFewPairs) {
        return Finding::NotMeasured { reason: "too few repetitions for a 90% interval".into() };
    }
    // A difference: its interval lies above 0 when `low > 0`.
    match rated.iter().filter(|(_, r)| r.low > 0.0).max_by(|a, b| a.1.median.total_cmp(&b.1.median)) {
        Some((c, r)) => Finding::Costs { target: c.target, over_mapped_ns: *r },
        None => {
            Finding::NoCostBeyondNoise { widest_high_ns: rated.iter().map(|(_, r)| r.high).fold(f64::MIN, f64::max) }
        }
    }
}

/// Does a prefetch that misses the TLB walk the page table?
pub fn tlb_miss(stride: &[StrideResult]) -> TlbMissVerdict {
    let best = |pol: PagePolicy| {
        stride.iter().filter(|s| s.pages == pol).max_by(|a, b| a.speedup.median.total_cmp(&b.speedup.median))
    };
    let Some(small) = best(PagePolicy::Small) else {
        return TlbMissVerdict::Inconclusive { reason: "the 4 KiB walk was not measured".into() };
    };
    if small.speedup.direction() == Direction::Above {
        return TlbMissVerdict::Walks { ahead_pages: small.ahead_pages, speedup_small: small.speedup };
    }
    match best(PagePolicy::Thp) {
        Some(h) if h.huge_fraction.is_some_and(|f| f >= 0.9) && h.speedup.direction() == Direction::Above => {
            TlbMissVerdict::Dropped { speedup_small: small.speedup, speedup_huge: h.speedup }
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
            over_mapped_ns: Ratio::of(diffs),
            user_s: 0.0,
            system_s: None,
            page_faults: faults,
            prefetches: 1000,
        }
    }

    #[test]
    fn a_cost_needs_an_interval_above_zero() {
        let noisy: Vec<f64> = (0..10).map(|i| -0.2 + i as f64 * 0.05).collect();
        let costly: Vec<f64> = (0..10).map(|i| 0.4 + i as f64 * 0.02).collect();
        let v = verdicts(&[cell(Target::Null, &noisy, 0), cell(Target::ProtNone, &costly, 0)]);
        assert!(matches!(v[0].finding, Finding::Costs { target: Target::ProtNone, .. }), "{v:?}");
        let v = verdicts(&[cell(Target::Null, &noisy, 0)]);
        assert!(matches!(v[0].finding, Finding::NoCostBeyondNoise { .. }), "{v:?}");
    }

    #[test]
    fn the_mapped_reference_alone_is_not_a_verdict_of_no_cost() {
        // The expert's case: "--targets null,prot-none" printed "costs
        // nothing" because the unmeasured reference became 0. Without an
        // interval there is no finding.
        let v = verdicts(&[cell(Target::Null, &[], 0)]);
        assert!(matches!(v[0].finding, Finding::NotMeasured { .. }), "{v:?}");
        let v = verdicts(&[cell(Target::Null, &[0.5, 0.6, 0.7], 0)]);
        assert!(matches!(v[0].finding, Finding::NotMeasured { .. }), "n = 3 is too few: {v:?}");
    }

    #[test]
    fn a_few_faults_are_not_traps_but_one_per_prefetch_is() {
        let costly: Vec<f64> = (0..10).map(|i| 0.4 + i as f64 * 0.02).collect();
        let v = verdicts(&[cell(Target::Null, &costly, 3)]);
        assert!(matches!(v[0].finding, Finding::Costs { .. }), "{v:?}");
        let v = verdicts(&[cell(Target::Null, &costly, 1000)]);
        assert!(matches!(v[0].finding, Finding::Traps { target: Target::Null, .. }), "{v:?}");
    }
}
