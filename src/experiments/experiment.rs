//! What every experiment is and has: the [`Experiment`] trait (parameters
//! in, a typed outcome out, and what a plan asks of it), the [`Bench`] it
//! runs on (the machine, a clock, progress, warnings), the presets, and
//! [`record`], which turns whatever happened into a document record.
//!
//! An experiment never prints. It reports progress through the bench's
//! progress handle, records what the machine refused as warnings, checks
//! the interrupt flag between samples, and returns a serialisable outcome
//! that says whether its results passed validation.

use crate::error::{Error, ErrorKind, Result};
use crate::machine::Fingerprint;
use crate::model::warnings::{Caution, Command};
use crate::model::{ExperimentRecord, Status, Warning};
use crate::timing::Clock;
use serde::{de::DeserializeOwned, Serialize};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// Parameter sets every experiment offers: `--quick` (the suite's
/// default), the subcommand's default, and `--full`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Preset {
    Quick,
    Default,
    Full,
}

pub use crate::interrupt::INTERRUPTED;

/// What an experiment's parameters are chosen against: the preset, the
/// machine, and whether the run reserves the hugetlb pages it needs.
pub struct Request<'a> {
    pub preset: Preset,
    pub machine: &'a Fingerprint,
    pub reserve_hugepages: bool,
}

/// Progress of the running experiment (a bar on a terminal, or nothing).
pub trait Progress: Sync {
    /// A measurement of `total` steps starts inside the current job.
    fn start(&self, label: &str, total: u64);
    fn advance(&self, n: u64);
    fn finish(&self);
    /// The plan: each job's name and its share of the time box in seconds
    /// (`boxed`), or its weight where there is no box, once, first.
    fn plan(&self, _jobs: &[(&'static str, f64)], _boxed: bool) {}
    /// Job `index` of the plan begins.
    fn job(&self, _index: usize) {}
}

pub struct NoProgress;
impl Progress for NoProgress {
    fn start(&self, _: &str, _: u64) {}
    fn advance(&self, _: u64) {}
    fn finish(&self) {}
}

/// What an experiment may use: the machine, a clock, progress, warnings.
pub struct Bench<'a> {
    pub machine: &'a Fingerprint,
    pub clock: &'a dyn Clock,
    pub progress: &'a dyn Progress,
    /// The command running, so warnings name fixes it accepts.
    pub command: Command,
    /// Where the experiment's share of the time box ends on `clock`
    /// (`u64::MAX`: no time box, as for a subcommand); a sweep narrows it
    /// to each of its points in turn ([`Bench::sweep`]).
    deadline: AtomicU64,
    warnings: Mutex<Vec<Warning>>,
}

impl<'a> Bench<'a> {
    pub fn new(machine: &'a Fingerprint, clock: &'a dyn Clock, progress: &'a dyn Progress) -> Self {
        let deadline = AtomicU64::new(u64::MAX);
        Bench { machine, clock, progress, command: Command::Run, deadline, warnings: Mutex::new(Vec::new()) }
    }

    /// The same context, its share of the time box ending at `deadline_ns`.
    pub fn until(self, deadline_ns: Option<u64>) -> Self {
        self.deadline.store(deadline_ns.unwrap_or(u64::MAX), Ordering::Relaxed);
        self
    }

    /// Where the share (or the sweep's point) ends: no look past the first,
    /// and no repetition past a comparison's first look, starts after it.
    pub fn deadline_ns(&self) -> Option<u64> {
        Some(self.deadline.load(Ordering::Relaxed)).filter(|&d| d != u64::MAX)
    }

    pub(crate) fn set_deadline_ns(&self, deadline_ns: Option<u64>) {
        self.deadline.store(deadline_ns.unwrap_or(u64::MAX), Ordering::Relaxed);
    }

    /// The same context, for warnings rendered for `command`.
    pub fn for_command(self, command: Command) -> Self {
        Bench { command, ..self }
    }

    /// Records a warning from the catalogue, its fix written for the running command.
    pub fn warn(&self, c: Caution) {
        let w = c.render(self.command);
        let mut all = self.warnings.lock().unwrap_or_else(|e| e.into_inner());
        if !all.contains(&w) {
            all.push(w);
        }
    }

    pub(crate) fn take_warnings(&self) -> Vec<Warning> {
        std::mem::take(&mut *self.warnings.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// Measures `variants` under `plan` through the scheduler, with a
    /// progress bar `label` (one step per sample, reference samples
    /// included) and the interrupt check before every sample.
    pub fn measure(
        &self,
        label: &str,
        plan: &crate::timing::schedule::Plan,
        variants: &mut [crate::timing::schedule::Variant],
    ) -> Result<Vec<crate::timing::schedule::Series>> {
        use crate::timing::schedule;
        let total = plan.repetitions * schedule::samples_per_repetition(plan, variants.len());
        self.progress.start(label, total as u64);
        let mut plan = plan.clone();
        plan.stop_looking_at_ns = plan.stop_looking_at_ns.or(self.deadline_ns());
        let (series, _) = schedule::measure(&plan, self.clock, variants, &mut || {
            self.check_interrupt()?;
            self.progress.advance(1);
            Ok(())
        })?;
        Ok(series)
    }

    /// Err(interrupted) once the user pressed Ctrl-C.
    pub fn check_interrupt(&self) -> Result<()> {
        if INTERRUPTED.load(Ordering::Relaxed) {
            Err(Error::interrupted())
        } else {
            Ok(())
        }
    }
}

/// An experiment: parameters in, outcome out. An outcome whose results can
/// fail validation carries a `valid` field; the record copies it. What a
/// plan needs of it (its parameters checked, levels, huge pages, its share
/// of the suite's time box) is here too, so the plan never matches on
/// experiments.
pub trait Experiment: 'static {
    const NAME: &'static str;
    /// Whether it measures anything (`info` only reads the machine): a
    /// plan of nothing but such jobs prints no plan line.
    const MEASURES: bool = true;
    /// Its weight in the suite's time box: a job's share is the time left
    /// split by the weights of the jobs still to come ([`super::timebox`]).
    const SHARE: f64 = 1.0;
    /// Seconds of its own that it adds to the suite's box and runs
    /// within, instead of a weighted share: a part of the machine that
    /// most have none of (a GPU) costs the others nothing where it is
    /// absent.
    fn own_s(_p: &Self::Params) -> f64 {
        0.0
    }
    type Params: Serialize + DeserializeOwned + Clone + std::fmt::Debug + Send + Sync + 'static;
    type Outcome: Into<crate::model::Outcome>;
    fn run(params: &Self::Params, ctx: &Bench) -> Result<Self::Outcome>;
    /// Its parameters at `preset` on `machine`: the suite's, and a
    /// subcommand's before its options are put in.
    fn preset(preset: Preset, machine: &Fingerprint) -> Self::Params;
    /// The suite's parameters: the preset's, with what the suite adds
    /// where the machine allows it (and a note where it does not).
    fn suite(asked: &Request) -> (Self::Params, Option<Warning>) {
        (Self::preset(asked.preset, asked.machine), None)
    }
    /// What it needs before it runs, its parameters checked first: every
    /// one within range (an error here is one line and nothing else,
    /// before the machine is probed or the plan printed).
    fn needs(_p: &Self::Params) -> Result<Needs> {
        Ok(Needs::default())
    }
}

/// What an experiment needs of the machine before it runs.
#[derive(Debug, Clone, PartialEq)]
pub struct Needs {
    /// It sizes its working sets from the measured cache levels.
    pub levels: bool,
    /// The page size of its memory matters (a warning about the pools or
    /// THP concerns it).
    pub pages_matter: bool,
    /// Each page policy it maps and the bytes it maps with it; the plan
    /// reserves the hugetlb ones.
    pub mapped: Vec<(crate::memory::PagePolicy, u64)>,
}

impl Default for Needs {
    /// No levels, pages that matter, nothing mapped to reserve.
    fn default() -> Needs {
        Needs { levels: false, pages_matter: true, mapped: Vec::new() }
    }
}

/// An experiment with its parameters, as a plan holds it: the object-safe
/// face of [`Experiment`].
pub trait Planned: Send + Sync + std::fmt::Debug {
    fn name(&self) -> &'static str;
    fn measures(&self) -> bool;
    fn needs(&self) -> Result<Needs>;
    fn share(&self) -> f64;
    fn own_s(&self) -> f64;
    fn record(&self, ctx: &Bench, strict: bool) -> Result<ExperimentRecord>;
    fn params_any(&mut self) -> &mut dyn std::any::Any;
    fn clone_box(&self) -> Box<dyn Planned>;
}

/// `E`'s parameters, planned.
pub struct With<E: Experiment>(pub E::Params);

impl<E: Experiment> std::fmt::Debug for With<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}({:?})", E::NAME, self.0)
    }
}

impl<E: Experiment> Planned for With<E> {
    fn name(&self) -> &'static str {
        E::NAME
    }
    fn measures(&self) -> bool {
        E::MEASURES
    }
    fn needs(&self) -> Result<Needs> {
        E::needs(&self.0)
    }
    fn share(&self) -> f64 {
        E::SHARE
    }
    fn own_s(&self) -> f64 {
        E::own_s(&self.0)
    }
    fn record(&self, ctx: &Bench, strict: bool) -> Result<ExperimentRecord> {
        record::<E>(&self.0, ctx, strict)
    }
    fn params_any(&mut self) -> &mut dyn std::any::Any {
        &mut self.0
    }
    fn clone_box(&self) -> Box<dyn Planned> {
        Box::new(With::<E>(self.0.clone()))
    }
}

/// Runs an experiment and turns whatever happened into a document record.
/// With `strict`, an unsatisfiable request is an error (the user asked for
/// it explicitly); otherwise it becomes a skipped record with the fix.
pub fn record<E: Experiment>(params: &E::Params, ctx: &Bench, strict: bool) -> Result<ExperimentRecord> {
    let start = std::time::Instant::now();
    let params_json = serde_json::to_value(params).expect("params serialise");
    let result = E::run(params, ctx);
    ctx.progress.finish();
    let mut rec = ExperimentRecord {
        name: E::NAME.into(),
        status: Status::Completed,
        skip_reason: None,
        params: params_json,
        outcome: None,
        warnings: Vec::new(),
        valid: true,
        duration_s: start.elapsed().as_secs_f64(),
        core_clock: Vec::new(),
        estimated_s: None,
        share_s: None,
    };
    match result {
        Ok(outcome) => {
            let outcome: crate::model::Outcome = outcome.into();
            rec.valid = outcome.valid();
            rec.outcome = Some(outcome);
        }
        Err(e) if e.kind == ErrorKind::Interrupted => {
            rec.status = Status::Interrupted;
            rec.skip_reason = Some("skipped: interrupted".into());
        }
        Err(e) if e.kind == ErrorKind::Unsatisfiable && !strict => {
            rec.status = Status::Skipped;
            rec.skip_reason = Some(e.message.clone());
            ctx.warn(Caution::Skipped { experiment: E::NAME, message: e.message.clone(), fix: e.fix.clone() });
        }
        Err(e) => return Err(e),
    }
    rec.warnings = ctx.take_warnings();
    Ok(rec)
}

/// CPU time stolen by the hypervisor, from the `cpu` line of /proc/stat,
/// in clock ticks: (steal, total).
pub fn steal_ticks() -> Option<(u64, u64)> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    let line = stat.lines().find(|l| l.starts_with("cpu "))?;
    let v: Vec<u64> = line.split_whitespace().skip(1).filter_map(|x| x.parse().ok()).collect();
    Some((*v.get(7)?, v.iter().take(8).sum()))
}

/// A warning if more than 2 % of CPU time was stolen between two readings.
pub fn steal_warning(before: Option<(u64, u64)>, after: Option<(u64, u64)>) -> Option<Caution> {
    let ((s0, t0), (s1, t1)) = (before?, after?);
    let total = t1.saturating_sub(t0);
    let fraction = s1.saturating_sub(s0) as f64 / total.max(1) as f64;
    (fraction > 0.02).then_some(Caution::StealTime { fraction })
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Broken;
    impl Experiment for Broken {
        const NAME: &'static str = "broken";
        type Params = ();
        type Outcome = crate::model::outcome::latency::Outcome;
        fn preset(_: Preset, _: &Fingerprint) {}
        fn run(_: &(), ctx: &Bench) -> Result<Self::Outcome> {
            ctx.warn(Caution::Checksum { what: "broken" });
            Ok(crate::model::outcome::latency::Outcome {
                seed: 0,
                regions: vec![],
                core_clock: vec![],
                points: vec![],
                levels: vec![],
                ratios: vec![],
                mlp: vec![],
                valid: false,
            })
        }
    }

    struct Refused;
    impl Experiment for Refused {
        const NAME: &'static str = "refused";
        type Params = ();
        type Outcome = crate::model::outcome::info::Outcome;
        fn preset(_: Preset, _: &Fingerprint) {}
        fn run(_: &(), _: &Bench) -> Result<Self::Outcome> {
            Err(Error::unsatisfiable("no 2 MiB pages reserved", "echo 512 > /proc/sys/vm/nr_hugepages"))
        }
    }

    #[test]
    fn an_invalid_outcome_makes_the_record_invalid() {
        let m = crate::machine::collect();
        let clock = crate::timing::FakeClock::stepping(vec![1]);
        let ctx = Bench::new(&m, &clock, &NoProgress);
        let rec = record::<Broken>(&(), &ctx, true).unwrap();
        assert!(!rec.valid);
        assert_eq!(rec.warnings[0].code, "checksum");
    }

    #[test]
    fn refusals_are_errors_when_asked_for_and_skips_in_the_suite() {
        let m = crate::machine::collect();
        let clock = crate::timing::FakeClock::stepping(vec![1]);
        let ctx = Bench::new(&m, &clock, &NoProgress);
        assert_eq!(record::<Refused>(&(), &ctx, true).unwrap_err().kind.exit_code(), 2);
        let rec = record::<Refused>(&(), &ctx, false).unwrap();
        assert_eq!(rec.status, Status::Skipped);
        assert!(rec.warnings[0].fix.as_deref().unwrap().contains("nr_hugepages"));
    }

    #[test]
    fn steal_over_two_percent_warns() {
        assert!(steal_warning(Some((0, 0)), Some((3, 100))).is_some());
        assert!(steal_warning(Some((0, 0)), Some((1, 100))).is_none());
        assert!(steal_warning(None, Some((1, 100))).is_none());
        assert!(steal_ticks().is_some());
    }
}
