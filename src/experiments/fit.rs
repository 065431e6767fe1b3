//! Fitting the suite to its time budget: while the plan's estimate is over
//! budget, the job estimated longest gives up one step — fewer
//! repetitions, a shorter sweep, a smaller working set, shorter samples —
//! never below what its statistics need (the best prefetch distance is
//! chosen on half the repetitions and confirmed on the other half: 10 at
//! least; a knee needs points on both sides of it). What was given up is
//! said, so a reader knows the suite ran lighter than its preset.

use super::plan::{Plan, Standing};
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
pub struct FitReport {
    pub budget_s: f64,
    pub before_s: f64,
    pub after_s: f64,
    pub shrunk: Vec<&'static str>,
}

/// Shrinks the plan's jobs until the whole fits `budget_s` or none can
/// shrink further.
pub fn fit(plan: &mut Plan, m: &Fingerprint, budget_s: f64) -> FitReport {
    // Shrinking changes no job's kind: what the plan spends beside them holds.
    let overhead_s = plan.overhead_s(m);
    let total = |p: &Plan| p.estimates(m).iter().map(|e| e.1).sum::<f64>() + overhead_s;
    let before_s = total(plan);
    let shrunk = shrink_while(plan, m, 0, |p| total(p) > budget_s);
    FitReport { budget_s, before_s, after_s: total(plan), shrunk }
}

/// Shrinks the jobs from `first` on while `over` holds, the largest
/// estimate first; once none of them can shrink, their last resorts
/// ([`crate::experiments::Experiment::shrink_last`]) alike. The names of
/// the jobs shrunk.
fn shrink_while(plan: &mut Plan, m: &Fingerprint, first: usize, over: impl Fn(&Plan) -> bool) -> Vec<&'static str> {
    let mut shrunk: Vec<&'static str> = Vec::new();
    for last in [false, true] {
        let mut stuck = vec![false; plan.jobs.len()];
        while over(plan) {
            let est = plan.estimates(m);
            let Some(i) =
                (first..plan.jobs.len()).filter(|&i| !stuck[i]).max_by(|&a, &b| est[a].1.total_cmp(&est[b].1))
            else {
                break;
            };
            let job = &mut plan.jobs[i];
            if if last { job.shrink_last(m) } else { job.shrink(m) } {
                if !shrunk.contains(&est[i].0) {
                    shrunk.push(est[i].0);
                }
            } else {
                stuck[i] = true;
            }
        }
    }
    shrunk
}

/// Where the run has a deadline and the jobs done have put it behind: the
/// jobs to come shrunk to meet it ([`refit_rest`]), from the records so far.
pub fn refit_behind(plan: &mut Plan, doc: &crate::model::Document, s: Standing) -> Option<crate::model::Caution> {
    let deadline = plan.deadline?;
    // Skipped and interrupted records took no time against their estimates.
    let completed = |r: &&crate::model::ExperimentRecord| r.status == crate::model::Status::Completed;
    let measured = doc.experiments.iter().filter(completed).filter(|r| r.estimated_s.is_some_and(|e| e > 0.0));
    let (taken, planned) = measured.fold((0.0, 0.0), |(t, p), r| (t + r.duration_s, p + r.estimated_s.unwrap_or(0.0)));
    let elapsed_s = s.now_ns.saturating_sub(deadline.since_ns) as f64 * 1e-9;
    let reference_s = s.references_left as f64 * super::drift::point_estimate_s(&doc.machine);
    refit_rest(plan, &doc.machine, s.done, (taken, planned), elapsed_s, reference_s)
}

/// The suite's pacing: [`refit_behind`] after each job, its warning
/// naming every job shrunk so far in the run (the run keeps the latest:
/// one line, where the run stood when it last fell behind).
pub fn pacer() -> impl FnMut(&mut Plan, &crate::model::Document, Standing) -> Option<crate::model::Caution> {
    let mut so_far: Vec<&'static str> = Vec::new();
    move |plan, doc, s| {
        let mut c = refit_behind(plan, doc, s)?;
        if let crate::model::Caution::SuiteRefitted { shrunk, .. } = &mut c {
            for name in shrunk.iter() {
                if !so_far.contains(name) {
                    so_far.push(name);
                }
            }
            shrunk.clone_from(&so_far);
        }
        Some(c)
    }
}

/// After `done` jobs, `elapsed_s` into the run, whose measuring jobs took
/// `taken.0` s against `taken.1` estimated: where the jobs to come, at that
/// pace (never assumed faster than planned, at most ×3), with the
/// reference points still to take (`reference_s`), the clock readings and
/// the report, would end the run past its deadline, they are shrunk,
/// largest first, as [`fit`] does, until it fits or none can shrink; what
/// was done, if anything. Estimates miss what the probe's rates do not
/// show (call chains can run ×2 theirs).
pub fn refit_rest(
    plan: &mut Plan,
    m: &Fingerprint,
    done: usize,
    taken: (f64, f64),
    elapsed_s: f64,
    reference_s: f64,
) -> Option<crate::model::Caution> {
    let deadline = plan.deadline?;
    let ratio = if taken.1 > 0.0 { taken.0 / taken.1 } else { 1.0 };
    let pace = ratio.clamp(1.0, 3.0);
    let project = |p: &Plan| {
        let est = p.estimates(m);
        let rest = &est[done.min(est.len())..];
        elapsed_s + pace * rest.iter().map(|e| e.1).sum::<f64>() + p.closing_s(done) + reference_s
    };
    let before_s = project(plan);
    let shrunk = shrink_while(plan, m, done, |p| project(p) > deadline.budget_s);
    (!shrunk.is_empty()).then(|| crate::model::Caution::SuiteRefitted {
        after: done,
        elapsed_s,
        slower: ratio,
        budget_s: deadline.budget_s,
        before_s,
        after_s: project(plan),
        shrunk,
    })
}

/// The suite's plan fitted to its preset's budget (none for `Default`).
pub fn fit_suite(plan: &mut Plan, m: &Fingerprint, preset: Preset) -> Option<FitReport> {
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
        // A plausible 1 GiB claim too, whatever this host claims: the host
        // reference then reads its largest region (1 GiB).
        let mut m = crate::test_support::claiming_l3(Bytes(1 << 40), GIB, Vec::new());
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
            doublings: None,
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
        // Memory measured from 2 GiB, past the host reference's 1 GiB: the
        // quick latency sweep still ends at the reference's region.
        let quick = latency::Params::preset(Preset::Quick, &m);
        assert_eq!(quick.sizes_bytes.last(), Some(&Bytes(GIB)), "{:?}", quick.sizes_bytes);
        assert!(quick.sizes_bytes.windows(2).all(|w| w[0] < w[1]));
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

    /// A run that fell behind shrinks only the jobs still to come, until
    /// the projection meets its deadline; one on time is left alone. The
    /// plan is the presets' on a 1 GiB-cache machine, unfitted, with a
    /// deadline 10 s past their estimate.
    #[test]
    fn a_run_behind_its_deadline_shrinks_the_jobs_to_come() {
        let m = big_cache_machine();
        let mut plan = suite(&m, 4);
        let deadline = plan.estimates(&m).iter().map(|e| e.1).sum::<f64>() + 10.0;
        plan.deadline = Some(super::super::plan::Deadline { budget_s: deadline, since_ns: 0 });
        let before = format!("{:?}", plan.jobs);
        let est: Vec<f64> = plan.estimates(&m).iter().map(|e| e.1).collect();
        let (done, rest) = (2, est[2..].iter().sum::<f64>());
        let done_s: f64 = est[..done].iter().sum();
        // On time: the jobs done took their estimates, and the rest fit.
        let on_time = deadline - rest - 5.0;
        assert!(refit_rest(&mut plan, &m, done, (done_s, done_s), on_time, 0.0).is_none());
        assert_eq!(format!("{:?}", plan.jobs), before);
        // Behind: they took twice their estimates, 10 s later than planned.
        let done_jobs = format!("{:?}", &plan.jobs[..done]);
        let late = refit_rest(&mut plan, &m, done, (2.0 * done_s, done_s), on_time + 10.0, 1.0).unwrap();
        let crate::model::Caution::SuiteRefitted { after, slower, after_s, before_s, shrunk, .. } = late else {
            panic!("{late:?}")
        };
        assert_eq!((after, slower), (done, 2.0));
        assert!(before_s > deadline && after_s <= deadline, "{before_s} → {after_s}");
        assert!(!shrunk.is_empty());
        assert_eq!(format!("{:?}", &plan.jobs[..done]), done_jobs, "what ran is not touched");
        let rest_after: f64 = plan.estimates(&m)[done..].iter().map(|e| e.1).sum();
        assert!(rest_after < rest, "{rest_after} < {rest}");
    }

    /// Each warning of the pacer names the jobs every refit so far shrank
    /// (the run keeps only the latest). A recorded suite's records set the
    /// pace; the deadline is long past, so each refit shrinks what it may.
    #[test]
    fn the_pacer_names_every_job_shrunk_so_far() {
        use crate::model::Caution;
        let (_, doc) = crate::test_support::recorded_suites().remove(0);
        let mut plan = suite(&doc.machine, 2);
        plan.deadline = Some(super::super::plan::Deadline { budget_s: 1.0, since_ns: 0 });
        let mut pace = pacer();
        let mut names =
            |done: usize| match pace(&mut plan, &doc, Standing { done, references_left: 1, now_ns: 30_000_000_000 }) {
                Some(Caution::SuiteRefitted { shrunk, .. }) => shrunk,
                other => panic!("{other:?}"),
            };
        // The later jobs first (calls, context, c2c), then the earlier.
        let (late, early) = (names(4), names(1));
        assert!(!late.is_empty() && late.iter().all(|n| early.contains(n)), "{late:?} then {early:?}");
        assert!(early.len() > late.len() && early.contains(&"latency"), "{early:?}");
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
