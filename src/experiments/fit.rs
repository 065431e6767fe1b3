//! Fitting the suite to its time budget: while the plan's estimate is over
//! budget, the job estimated longest gives up one step — fewer
//! repetitions, a shorter sweep, a smaller working set, shorter samples —
//! never below what its statistics need (the best prefetch distance is
//! chosen on half the repetitions and confirmed on the other half: 10 at
//! least; a knee needs points on both sides of it). What was given up is
//! said, so a reader knows the suite ran lighter than its preset.

use super::plan::Plan;
use super::{budget, Preset};
use crate::machine::Fingerprint;
use crate::units::{Bytes, MIB};

/// Where the floors of working sets lie on `m`: 4× and 1× where memory
/// begins (the sizing last-level cache), at least 64 MiB, and never below
/// `verified`, where the probe verified that the experiment's access is in
/// memory (its DRAM figure must stay there).
pub(crate) fn memory_floors(m: &Fingerprint, verified: Option<Bytes>) -> (Bytes, Bytes) {
    let (llc, _) = m.sizing_llc();
    let v = verified.map_or(0, |b| b.0);
    (Bytes((4 * llc.0).max(64 * MIB).max(v)), Bytes(llc.0.max(64 * MIB).max(v)))
}

/// One rung of a shrinking ladder: `act` when `possible`, and whether it did.
pub(crate) fn step(possible: bool, act: impl FnOnce()) -> bool {
    if possible {
        act();
    }
    possible
}

/// `n` less `by`, while it is above `above`.
pub(crate) fn fewer<T: Copy + PartialOrd + std::ops::SubAssign>(n: &mut T, above: T, by: T) -> bool {
    step(*n > above, || *n -= by)
}

/// Drops the middle rung of a ladder with more than two, keeping its ends.
pub(crate) fn thin<T>(ladder: &mut Vec<T>) -> bool {
    let middle = ladder.len() / 2;
    step(ladder.len() > 2, || {
        ladder.remove(middle);
    })
}

pub(crate) fn halve_sample(s: &mut f64, floor: f64) -> bool {
    if *s / 2.0 >= floor {
        *s /= 2.0;
        true
    } else {
        false
    }
}

/// What fitting did: the estimate before and after, and the jobs it shrank.
#[derive(Debug, Clone, PartialEq)]
pub struct Fitted {
    pub budget_s: f64,
    pub before_s: f64,
    pub after_s: f64,
    pub shrunk: Vec<&'static str>,
}

/// Shrinks the plan's jobs until the whole fits `budget_s` or none can
/// shrink further.
pub fn fit(plan: &mut Plan, m: &Fingerprint, budget_s: f64) -> Fitted {
    let total = |p: &Plan| p.estimates(m).iter().map(|e| e.1).sum::<f64>() + p.overhead_s();
    let before_s = total(plan);
    let mut shrunk: Vec<&'static str> = Vec::new();
    let mut stuck = vec![false; plan.jobs.len()];
    while total(plan) > budget_s {
        let est = plan.estimates(m);
        let Some(i) = (0..plan.jobs.len()).filter(|&i| !stuck[i]).max_by(|&a, &b| est[a].1.total_cmp(&est[b].1)) else {
            break;
        };
        if plan.jobs[i].shrink(m) {
            if !shrunk.contains(&est[i].0) {
                shrunk.push(est[i].0);
            }
        } else {
            stuck[i] = true;
        }
    }
    Fitted { budget_s, before_s, after_s: total(plan), shrunk }
}

/// The suite's plan fitted to its preset's budget (none for `Default`).
pub fn fit_suite(plan: &mut Plan, m: &Fingerprint, preset: Preset) -> Option<Fitted> {
    budget::suite_seconds(preset).map(|b| fit(plan, m, b))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiments::plan::Job;
    use crate::experiments::{bandwidth, c2c, calls, context, latency, page_init, tlb};
    use crate::machine::levels::{LevelPoint, MeasuredLevels};
    use crate::units::GIB;

    /// A machine whose memory begins at 1 GiB (a 1 GiB last-level cache)
    /// and that has a terabyte: every preset grows, and the fit brings the
    /// suite back within its minute.
    fn big_cache_machine() -> Fingerprint {
        let mut m = crate::machine::collect();
        m.memory_total_bytes = Some(Bytes(1 << 40));
        m.memory_available_bytes = Some(Bytes(1 << 40));
        let points: Vec<LevelPoint> = (14..=34)
            .map(|e| LevelPoint {
                size_bytes: Bytes(1 << e),
                latency_ns: crate::units::Nanos(if e <= 30 { 40.0 } else { 120.0 }),
                samples_ns: vec![],
            })
            .collect();
        let found = crate::analysis::levels::find(
            &points.iter().map(|p| (p.size_bytes.0 as f64, p.latency_ns.0)).collect::<Vec<_>>(),
        );
        assert_eq!(found.far_from, Some(Bytes(2 * GIB)));
        m.measured_levels = Some(MeasuredLevels {
            pages: crate::memory::PagePolicy::Thp,
            huge_fraction: Some(1.0),
            points,
            found,
            duration_s: 1.0,
            valid: true,
            read_bytes_per_s: Some(10e9),
            fault_bytes_per_s: Some((2e9, 2e9)),
            looks: vec![],
            read_rates: vec![],
        });
        m
    }

    fn suite(m: &Fingerprint, threads: usize) -> Plan {
        let ladder: Vec<usize> =
            std::iter::successors(Some(1), |t| Some(t * 2)).take_while(|&t| t <= threads).collect();
        let mut bw = bandwidth::Params::preset(Preset::Quick, m);
        bw.threads = vec![1, threads];
        let mut ca = calls::Params::preset(Preset::Quick);
        ca.threads = ladder.clone();
        let mut cx = context::Params::preset(Preset::Quick);
        cx.threads = ladder;
        let mut cc = c2c::Params::preset(Preset::Quick);
        cc.cpus = (0..c2c::PRESET_MAX_CPUS).collect();
        let mut pi = page_init::Params::preset(Preset::Quick);
        pi.threads = threads;
        Plan::for_suite(vec![
            Job::of::<bandwidth::Bandwidth>(bw),
            Job::of::<latency::Latency>(latency::Params::preset(Preset::Quick, m)),
            Job::of::<tlb::Tlb>(tlb::Params::preset(Preset::Quick)),
            Job::of::<page_init::PageInit>(pi),
            Job::of::<calls::Calls>(ca),
            Job::of::<context::Context>(cx),
            Job::of::<c2c::C2c>(cc),
        ])
    }

    #[test]
    fn a_1_gib_cache_and_256_cpus_fit_the_quick_minute() {
        let m = big_cache_machine();
        let mut plan = suite(&m, 256);
        let f = fit_suite(&mut plan, &m, Preset::Quick).unwrap();
        assert!(f.before_s > 60.0, "the presets alone would overrun: {f:?}");
        assert!(f.after_s <= budget::SUITE_SECONDS.0, "{f:?}");
        assert!(f.shrunk.contains(&"bandwidth"), "{f:?}");
        // The statistics keep their floors.
        let mut checked = 0;
        for j in &mut plan.jobs {
            if let Some(p) = j.params_mut::<bandwidth::Params>() {
                checked += 1;
                assert!(p.repetitions >= 6, "{}", p.repetitions);
                assert!(p.distance_elements.count() >= 3, "a plateau needs three points");
                assert!(p.kernels.contains(&crate::kernels::StreamShape::Simd));
                assert!(p.size_bytes.0 >= m.sizing_llc().0 .0, "never below where memory begins");
            }
            if let Some(p) = j.params_mut::<latency::Params>() {
                // Fewer repetitions than a verdict needs made two quick runs
                // of one machine differ in the huge-page latency verdict.
                assert!(p.repetitions >= crate::timing::schedule::MIN_PAIRS_FOR_VERDICT, "{}", p.repetitions);
            }
        }
        assert_eq!(checked, 1, "the suite's bandwidth job was found");
    }

    #[test]
    fn a_plan_within_budget_is_left_alone() {
        let m = big_cache_machine();
        let mut plan = Plan::for_suite(vec![Job::of::<calls::Calls>(calls::Params::preset(Preset::Quick))]);
        let before = format!("{:?}", plan.jobs);
        let f = fit(&mut plan, &m, 60.0);
        assert!(f.shrunk.is_empty());
        assert_eq!(format!("{:?}", plan.jobs), before);
    }
}
