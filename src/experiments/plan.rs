//! A plan: the experiments a command asks for, run one after another into
//! one result document.

use super::timebox::{Owed, TimeBox};
use super::{info, Bench, Experiment, Planned, Progress, With};
use crate::error::Result;
use crate::machine::{levels, Fingerprint};
use crate::memory::{PagePolicy, Reservation};
use crate::model::document::{self, Document, ExperimentRecord, Origin, Warning};
use crate::model::warnings::{Caution, Command};
use crate::timing::Clock;
use crate::units::Bytes;

/// One experiment of a plan, with its parameters.
#[derive(Debug)]
pub struct Job(Box<dyn Planned>);

impl Clone for Job {
    fn clone(&self) -> Job {
        Job(self.0.clone_box())
    }
}

impl Job {
    /// Experiment `E` with parameters `p`.
    pub fn of<E: Experiment>(p: E::Params) -> Job {
        Job(Box::new(With::<E>(p)))
    }

    pub fn name(&self) -> &'static str {
        self.0.name()
    }

    /// Every parameter within range, checked before the machine is probed
    /// or the plan printed, so bad input is one line and nothing else.
    pub fn check(&self) -> Result<()> {
        self.0.needs().map(|_| ())
    }

    /// What it needs of the machine (its parameters checked: see
    /// [`Job::check`]; a job that fails it needs nothing).
    fn needs(&self) -> super::Needs {
        self.0.needs().unwrap_or_default()
    }

    /// Its weight in the time box (see [`super::Experiment::SHARE`]).
    pub fn share(&self) -> f64 {
        self.0.share()
    }

    /// Seconds of its own in the time box (see [`super::Experiment::own_s`]).
    pub fn own_s(&self) -> f64 {
        self.0.own_s()
    }

    /// Its parameters, when they are `P`'s.
    pub fn params_mut<P: 'static>(&mut self) -> Option<&mut P> {
        self.0.params_any().downcast_mut::<P>()
    }

    /// Whether it measures anything (see [`super::Experiment::MEASURES`]).
    pub fn measures(&self) -> bool {
        self.0.measures()
    }
}

#[derive(Debug, Clone)]
pub struct Plan {
    pub jobs: Vec<Job>,
    /// An experiment the machine cannot satisfy is an error (a subcommand
    /// asked for it) rather than a skipped record (the suite).
    pub strict: bool,
    pub reserve_hugepages: bool,
    /// Warnings the planning itself raised (what the suite leaves out, and why).
    pub notes: Vec<Warning>,
    /// Journal each record into the results folder as it finishes.
    pub journal: bool,
    /// The command that made the plan (fixes in warnings are written for it).
    pub command: Command,
    /// The suite's time box, where it has one: each job runs within its
    /// share of it ([`super::timebox`]).
    pub time_box: Option<TimeBox>,
}

impl Plan {
    /// Some experiment of the plan works on memory whose page size matters
    /// (or is `info`, which reports the pools).
    pub fn pages_matter(&self) -> bool {
        self.jobs.iter().any(|j| j.needs().pages_matter)
    }

    /// Some experiment of the plan sizes its working sets from the cache
    /// levels (or is `info`, which shows them).
    pub fn needs_levels(&self) -> bool {
        self.jobs.iter().any(|j| j.needs().levels)
    }

    /// Huge pages each pool must have free for the plan: (page size, pages).
    pub fn hugepage_needs(&self) -> Vec<(Bytes, u64)> {
        let mut needs: Vec<(Bytes, u64)> = Vec::new();
        let mut add = |policy: PagePolicy, size: Bytes| {
            if policy.uses_hugetlb_pool() {
                let page = policy.page_size();
                let pages = size.0.div_ceil(page.0);
                match needs.iter_mut().find(|n| n.0 == page) {
                    Some(n) => n.1 = n.1.max(pages),
                    None => needs.push((page, pages)),
                }
            }
        };
        for job in &self.jobs {
            let mapped = job.needs().mapped;
            for &(pol, bytes) in mapped.iter().filter(|m| m.0.uses_hugetlb_pool()) {
                // Policies sharing a pool (2m and shm) hold their regions at once.
                let sharing =
                    mapped.iter().filter(|m| m.0.uses_hugetlb_pool() && m.0.page_size() == pol.page_size()).count();
                add(pol, Bytes(bytes * sharing as u64));
            }
        }
        needs
    }
}

/// How far the cache-level probe sweeps: past eight times the largest
/// plausible claimed cache (so a real one is seen to end, and memory past
/// it verified), at least [`levels::MIN_REACH`], within half the memory
/// budget and 2 GiB (a chase's bookkeeping adds 16 bytes a line, and
/// linking takes seconds a gigabyte: past a 256 MiB cache memory is then
/// said not verified, short of ×8).
pub fn probe_reach(machine: &Fingerprint) -> Bytes {
    let claimed = machine.plausible_data_caches().iter().map(|c| c.1 .0).max().unwrap_or(0);
    let want = (8 * claimed).next_power_of_two().max(levels::MIN_REACH.0);
    let budget = super::budget::Budget::of(machine).memory.0 / 2;
    Bytes(want.min(budget.next_power_of_two() / 2).clamp(levels::FIRST.0, 2 * crate::units::GIB))
}

/// Measures what sizes and cycles rest on, before anything is planned:
/// the core clock (always) and, when `levels`, where the cache levels end.
/// What could not be measured comes back as cautions; the fingerprint
/// keeps each measurement with its raw figures.
pub fn measure_machine(machine: &mut Fingerprint, clock: &dyn Clock, levels: bool) -> Vec<Caution> {
    let mut notes = Vec::new();
    let reading = crate::timing::core_clock::measure(clock, machine.nominal_clocks(), 5, 0.005);
    if let Some(why) = &reading.not_measured {
        notes.push(Caution::ClockNotMeasured { reason: why.clone() });
    }
    machine.core_clock = Some(reading);
    if let Some(why) = machine.emulation.clone().filter(|_| levels) {
        // An emulator's latencies are its own: a 1 GiB chase would take
        // minutes and say nothing of this CPU.
        notes.push(Caution::LevelsNotMeasured { reason: format!("under emulation ({why}): sizes come from claims") });
    } else if levels {
        let thp = machine.thp.usable();
        let claimed = machine.plausible_data_caches().iter().map(|c| c.1 .0).max().unwrap_or(0);
        match levels::measure(clock, probe_reach(machine), Bytes(2 * claimed), thp) {
            Ok(m) if !m.valid => {
                notes.push(Caution::LevelsNotMeasured { reason: "a chase did not end where its cycle says".into() })
            }
            Ok(m) => {
                machine.measured_levels = Some(m);
                notes.extend(measure_doublings(machine, clock, thp));
            }
            Err(e) => notes.push(Caution::LevelsNotMeasured { reason: e.message }),
        }
    }
    notes
}

/// Seconds after which no doubling pair, and no later look, starts.
const DOUBLINGS_BOX_S: f64 = 3.0;

/// Where memory begins below memory by size, by doublings measured in the
/// same repetitions (`machine::doublings`), kept with the probe's levels.
fn measure_doublings(machine: &mut Fingerprint, clock: &dyn Clock, thp: bool) -> Option<Caution> {
    let far = machine.measured_levels.as_ref().and_then(|m| m.found.far_from);
    let (by_size, reach) = (machine.memory_by_size(), probe_reach(machine));
    // Without memory by size within reach there is no arm that is memory's
    // to hold a set against: memory then begins by size alone.
    let sizes = if reach >= by_size { crate::machine::doublings::pairs(far, by_size, reach) } else { Vec::new() };
    let pages = if thp { crate::memory::PagePolicy::Thp } else { crate::memory::PagePolicy::Small };
    let started = std::time::Instant::now();
    let (doublings, ok) = crate::machine::doublings::measure(clock, &sizes, by_size, pages, DOUBLINGS_BOX_S);
    let levels = machine.measured_levels.as_mut()?;
    // A pair that failed its check is no evidence: memory then begins by
    // size alone. The probe's time, which the plan sets aside, holds them.
    levels.doublings = Some(if ok { doublings } else { Vec::new() });
    levels.duration_s += started.elapsed().as_secs_f64();
    (!ok).then_some(Caution::Checksum { what: "the doublings where memory begins (memory then begins by size alone)" })
}

/// A new document for this machine and command line, with the clock's
/// granularity checked (and a warning when it is coarse: samples are tens
/// of microseconds and longer, so a step above 1 µs would show in them).
pub fn new_document(machine: Fingerprint, clock: &dyn Clock, plan: &Plan) -> Document {
    let command = plan.command;
    let granularity = clock.granularity();
    let mut warnings = info::machine_warnings(&machine, command, plan.pages_matter());
    if granularity.0 > 1000.0 {
        warnings.push(Caution::TimerCoarse { step_ns: granularity.0 }.render(command));
    }
    let started = document::now_secs();
    let launch = crate::model::launcher::detect();
    if let Some(n) = launch.as_ref().and_then(|l| l.ranks_on_host).filter(|&n| n > 1) {
        warnings.push(Caution::RanksShareHost { ranks: n }.render(command));
    }
    let run_id = format!("{}-{}-{}", machine.hostname, started, std::process::id());
    Document {
        schema_version: document::SCHEMA_VERSION,
        build: crate::model::current_build(),
        clock: document::ClockInfo { source: "CLOCK_MONOTONIC".into(), granularity_ns: granularity },
        command_line: std::env::args().collect(),
        origin: Origin {
            hostname: machine.hostname.clone(),
            run_id,
            started_utc: document::utc_timestamp(started),
            rank: launch.as_ref().map(|l| l.rank),
            launcher: launch.as_ref().map(|l| l.launcher.clone()),
            local_rank: launch.as_ref().and_then(|l| l.local_rank),
            ranks: launch.as_ref().and_then(|l| l.ranks),
            ranks_on_host: launch.as_ref().and_then(|l| l.ranks_on_host),
            job_id: launch.and_then(|l| l.job_id),
        },
        warnings,
        machine,
        planned: plan.jobs.iter().map(|j| j.name().to_string()).collect(),
        experiments: Vec::new(),
        host_drift: None,
    }
}

/// The document of a command around a program: its one record, with the
/// outcome it ended in.
pub fn observation_document(
    machine: Fingerprint,
    clock: &dyn Clock,
    name: &'static str,
    params: serde_json::Value,
    outcome: crate::model::Outcome,
    duration_s: f64,
) -> Document {
    let mut doc = observation_of(machine, clock, name);
    doc.experiments.push(ExperimentRecord {
        name: name.into(),
        status: crate::model::document::Status::Completed,
        skip_reason: None,
        params,
        valid: outcome.valid(),
        outcome: Some(outcome),
        warnings: Vec::new(),
        duration_s,
        core_clock: Vec::new(),
        estimated_s: None,
        share_s: None,
    });
    doc
}

/// The document of a command around a program interrupted before it had
/// an outcome (the program never started, or nothing was gathered).
pub fn interrupted_observation(
    machine: Fingerprint,
    clock: &dyn Clock,
    name: &'static str,
    params: serde_json::Value,
    duration_s: f64,
) -> Document {
    let mut doc = observation_of(machine, clock, name);
    let mut rec = ExperimentRecord::interrupted(name.into(), "skipped: interrupted");
    rec.params = params;
    rec.duration_s = duration_s;
    doc.experiments.push(rec);
    doc
}

/// A new document of one command around a program, planned alone.
fn observation_of(machine: Fingerprint, clock: &dyn Clock, name: &'static str) -> Document {
    let plan = Plan {
        jobs: Vec::new(),
        strict: true,
        reserve_hugepages: false,
        notes: Vec::new(),
        journal: false,
        command: crate::model::warnings::Command::Sub(name),
        time_box: None,
    };
    let mut doc = new_document(machine, clock, &plan);
    doc.planned = vec![name.to_string()];
    doc
}

/// Runs every job of the plan; `on_record` sees each record as it is made
/// and may stop the run with an error (the suite journals them). A suite
/// with a time box gives each job its share as it starts
/// ([`super::timebox`]).
pub fn execute(
    plan: &mut Plan,
    doc: &mut Document,
    clock: &dyn Clock,
    progress: &dyn Progress,
    mut on_record: impl FnMut(&Document, &ExperimentRecord) -> Result<()>,
) -> Result<()> {
    doc.warnings.extend(plan.notes.iter().cloned());
    let _reservations = reserve(plan, doc)?;
    let machine = doc.machine.clone();
    progress.plan(&plan.shares(), plan.time_box.is_some());
    let mut owed = Owed::default();
    let mut reference = drift_reference(plan, &machine);
    if let Some(r) = reference.as_mut() {
        if let Some(e) = r.calls_unavailable() {
            let (message, fix) = (e.message.clone(), e.fix.clone());
            let variant = "the host reference's call chain".into();
            doc.warnings
                .push(Caution::VariantUnavailable { experiment: "run", variant, message, fix }.render(plan.command));
        }
        let t0 = clock.now_ns();
        reference_point(r, clock, 0, doc, plan.command);
        owed.reference_point_s = clock.now_ns().saturating_sub(t0) as f64 * 1e-9;
    }
    let jobs = plan.jobs.len();
    let mut per_weight_s = None;
    // The jobs run so far: seconds taken, and their nominal parts; and the
    // most one ran past its nominal part at the pace kept before it.
    let mut pace = (0.0f64, 0.0f64);
    let mut excess_s = 0.0f64;
    for index in 0..jobs {
        progress.job(index);
        let share_end = plan.time_box.map(|b| {
            let weights_left: f64 = plan.jobs[index..].iter().map(Job::share).sum();
            let references_left = reference.as_ref().map_or(0, |_| references_after(index, jobs));
            // Its own clock readings count, and every later job's, and the
            // seconds of their own that jobs still to come bring.
            let measuring_left = plan.jobs[index..].iter().filter(|j| j.measures()).count();
            let own_left: f64 = plan.jobs[index..].iter().map(Job::own_s).sum();
            let owed_s = owed.seconds(references_left, measuring_left) + own_left;
            let now = clock.now_ns();
            let per = *per_weight_s.get_or_insert(if weights_left > 0.0 {
                b.left_s(now, owed_s) / weights_left
            } else {
                0.0
            });
            let own_s = plan.jobs[index].own_s();
            if own_s > 0.0 {
                // The seconds it added to the box, not a share of the rest.
                return (Some(now + (own_s * 1e9) as u64), own_s);
            }
            let weight = plan.jobs[index].share();
            let slower = if pace.1 > 0.0 { (pace.0 / pace.1).clamp(1.0, 3.0) } else { 1.0 };
            // A weightless job has no part to hold; room for an overrun
            // is kept for those that have one.
            let nominal_s = weight * per * slower;
            let holds = if weight > 0.0 { nominal_s + excess_s } else { 0.0 };
            (b.share_end(now, weight, weights_left, owed_s, holds), nominal_s)
        });
        let (share_end, nominal_s) = (share_end.map(|s| s.0), share_end.map_or(0.0, |s| s.1));
        let started = clock.now_ns();
        let mut rec = match share_end {
            Some(None) => spent_record(&plan.jobs[index], plan.command),
            _ => run_job(plan, index, &machine, clock, progress, share_end.flatten(), &mut owed)?,
        };
        rec.share_s = share_end.flatten().map(|e| e.saturating_sub(started) as f64 * 1e-9);
        let weighed = plan.jobs[index].share() > 0.0;
        if let (Some(Some(_)), Some(per), true) = (share_end, per_weight_s, weighed) {
            let taken_s = clock.now_ns().saturating_sub(started) as f64 * 1e-9;
            pace = (pace.0 + taken_s, pace.1 + plan.jobs[index].share() * per);
            excess_s = excess_s.max(taken_s - nominal_s);
        }
        doc.experiments.push(rec);
        if let Some(rec) = doc.experiments.last() {
            on_record(doc, rec)?;
        }
        if let Some(r) = reference.as_mut().filter(|_| super::drift::point_after(index + 1, jobs)) {
            reference_point(r, clock, index + 1, doc, plan.command);
        }
    }
    if let Some(mut r) = reference {
        if !super::INTERRUPTED.load(std::sync::atomic::Ordering::Relaxed) {
            reference_point(&mut r, clock, plan.jobs.len(), doc, plan.command);
        }
        let drift = r.finish();
        if let Some(moved) = drift.moved_most().filter(|_| drift.host_moved()) {
            doc.warnings.push(Caution::HostMoved { moved, evidence: drift.describe() }.render(plan.command));
        }
        doc.host_drift = Some(drift);
    }
    Ok(())
}

/// Points of the host reference still to take once job `index` has begun:
/// those after it and the last.
fn references_after(index: usize, jobs: usize) -> usize {
    1 + (index + 1..jobs).filter(|&d| super::drift::point_after(d, jobs)).count()
}

/// Job `index` run within its share (ending at `share_end`), between two
/// readings of the core clock (their time recorded in `owed`), into its
/// record.
fn run_job(
    plan: &Plan,
    index: usize,
    machine: &Fingerprint,
    clock: &dyn Clock,
    progress: &dyn Progress,
    share_end: Option<u64>,
    owed: &mut Owed,
) -> Result<ExperimentRecord> {
    let job = &plan.jobs[index];
    let ctx = Bench::new(machine, clock, progress).for_command(plan.command).until(share_end);
    let before = super::steal_ticks();
    let interrupted = || super::INTERRUPTED.load(std::sync::atomic::Ordering::Relaxed);
    let measures = job.measures() && !interrupted();
    let nominal = machine.nominal_clocks();
    let t0 = clock.now_ns();
    let clock_before = if measures { crate::timing::core_clock::sample(clock, nominal).clock } else { None };
    let reading_ns = clock.now_ns().saturating_sub(t0);
    let mut rec = if interrupted() { interrupted_record(job) } else { job.0.record(&ctx, plan.strict)? };
    if let Some(c) = super::steal_warning(before, super::steal_ticks()) {
        rec.warnings.push(c.render(plan.command));
    }
    let clock_after = if measures { crate::timing::core_clock::sample(clock, nominal).clock } else { None };
    if measures && owed.clock_readings_s == 0.0 {
        owed.clock_readings_s = 2.0 * reading_ns as f64 * 1e-9;
    }
    let moved = clock_moved(clock_before.as_ref(), clock_after.as_ref(), machine.system.governor.is_some());
    rec.core_clock = [clock_before, clock_after].into_iter().flatten().collect();
    if let Some(c) = moved {
        rec.warnings.push(c.render(plan.command));
    }
    Ok(rec)
}

/// One point of the reference; one whose checksum failed is left out of
/// the document and said in its warnings.
fn reference_point(
    r: &mut super::drift::Reference,
    clock: &dyn Clock,
    after: usize,
    doc: &mut Document,
    command: Command,
) {
    let what = match r.measure(clock, after) {
        super::drift::Point::Invalid => "the host reference (a point of it)",
        super::drift::Point::CallsInvalid => "the host reference's call chain",
        super::drift::Point::WalksInvalid => "the host reference's chase on 4 KiB pages",
        _ => return,
    };
    doc.warnings.push(Caution::Checksum { what }.render(command));
}

/// The suite's reference (see [`super::drift`]), where the plan has one.
fn drift_reference(plan: &Plan, machine: &Fingerprint) -> Option<super::drift::Reference> {
    plan.has_reference().then(|| super::drift::Reference::new(machine))
}

/// Beyond this relative change between the clock before and after an
/// experiment, its figures in cycles (and its timings) straddle two clocks.
pub const CLOCK_MOVED: f64 = 0.05;

/// A warning when the believed core clock moved by more than
/// [`CLOCK_MOVED`]; `cpufreq`: the OS controls the frequency (a governor
/// exists), so the fix can name it.
pub fn clock_moved(
    before: Option<&crate::timing::core_clock::CoreClock>,
    after: Option<&crate::timing::core_clock::CoreClock>,
    cpufreq: bool,
) -> Option<Caution> {
    let (b, a) = (before?.ghz, after?.ghz);
    ((a / b - 1.0).abs() > CLOCK_MOVED).then_some(Caution::ClockMoved { before_ghz: b, after_ghz: a, cpufreq })
}

impl Plan {
    /// A suite plan of `jobs` with no outputs (for costing and tests).
    pub fn for_suite(jobs: Vec<Job>) -> Plan {
        Plan {
            jobs,
            strict: false,
            reserve_hugepages: false,
            notes: Vec::new(),
            journal: false,
            command: Command::Run,
            time_box: None,
        }
    }

    /// A suite of more than one measuring experiment (not `--strict`)
    /// takes the host's reference at its start, after every few
    /// experiments, and at its end ([`super::drift::points`]).
    pub fn has_reference(&self) -> bool {
        !self.strict && self.jobs.iter().filter(|j| j.measures()).count() > 1
    }

    /// One line for the terminal: "plan: 11 experiments in a 56 s box
    /// (bandwidth 14%, latency 25%, …)", or without a box, their names.
    pub fn summary(&self) -> String {
        let named: Vec<String> = match self.time_box {
            Some(b) if b.box_s > 0.0 => self
                .shares()
                .into_iter()
                .filter(|s| s.1 > 0.0)
                .map(|(name, s)| format!("{name} {:.0}%", 100.0 * s / b.box_s))
                .collect(),
            _ => self.jobs.iter().filter(|j| j.measures()).map(|j| j.name().to_string()).collect(),
        };
        let within = self.time_box.map_or(String::new(), |b| format!(" in a {} box", crate::units::seconds(b.box_s)));
        format!("plan: {} experiment(s){within} ({})", self.jobs.len(), named.join(", "))
    }

    /// Each job's name and its share of the box at the start (its weight,
    /// where there is no box): what the progress bar is drawn against. A
    /// job's own seconds are its share; the rest of the box is split by
    /// weight.
    pub fn shares(&self) -> Vec<(&'static str, f64)> {
        let total: f64 = self.jobs.iter().map(Job::share).sum();
        let scale = match self.time_box {
            Some(b) if total > 0.0 => (b.box_s - self.own_s()).max(0.0) / total,
            _ => 1.0,
        };
        let boxed = self.time_box.is_some();
        self.jobs
            .iter()
            .map(|j| (j.name(), if boxed && j.own_s() > 0.0 { j.own_s() } else { j.share() * scale }))
            .collect()
    }

    /// The seconds of their own the jobs add to a suite's box
    /// ([`super::Experiment::own_s`]).
    pub fn own_s(&self) -> f64 {
        self.jobs.iter().map(Job::own_s).sum()
    }
}

/// The record of a job not started: the suite's box had nothing left.
fn spent_record(job: &Job, command: Command) -> ExperimentRecord {
    let message = "what was left of the suite's time box would not hold its share".to_string();
    let fix = Some(format!("memperf run --full, or memperf {} on its own", job.name()));
    // The reason as a refusal's: the screen and the text put "skipped:" before it.
    let mut rec = ExperimentRecord::interrupted(job.name().into(), &message);
    rec.status = document::Status::Skipped;
    rec.warnings.push(Caution::Skipped { experiment: job.name(), message, fix }.render(command));
    rec
}

fn interrupted_record(job: &Job) -> ExperimentRecord {
    ExperimentRecord::interrupted(job.name().into(), "skipped: interrupted")
}

/// With `--reserve-hugepages`, reserves what the plan needs; failures are
/// warnings (the experiments then say what they could not measure).
fn reserve(plan: &Plan, doc: &mut Document) -> Result<Vec<Reservation>> {
    let mut held = Vec::new();
    if !plan.reserve_hugepages {
        return Ok(held);
    }
    for (page, pages) in plan.hugepage_needs() {
        match Reservation::ensure(page, pages) {
            Ok(r) => held.push(r),
            Err(e) if plan.strict => return Err(e),
            Err(e) => doc.warnings.push(Caution::ReserveFailed { message: e.message, fix: e.fix }.render(plan.command)),
        }
    }
    // The pools changed: the fingerprint shows what the run had, and the
    // warnings the old fingerprint implied give way to the new one's.
    let stale = info::machine_warnings(&doc.machine, plan.command, plan.pages_matter());
    doc.machine.hugepage_pools =
        crate::machine::sysfs::hugepage_pools(std::path::Path::new("/sys/kernel/mm/hugepages"));
    let kept: Vec<Warning> = doc.warnings.iter().filter(|w| !stale.contains(w)).cloned().collect();
    doc.warnings =
        info::machine_warnings(&doc.machine, plan.command, plan.pages_matter()).into_iter().chain(kept).collect();
    Ok(held)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiments::{bandwidth, latency, tlb};

    /// A simulated experiment: a sweep of points, each taking its
    /// milliseconds on a fake clock of 1 ms per reading, in its order.
    struct Sim;
    thread_local!(static TAKEN: std::cell::RefCell<Vec<(usize, u64)>> = const { std::cell::RefCell::new(Vec::new()) });
    #[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
    struct SimParams {
        job: usize,
        points_ms: Vec<u64>,
    }
    impl Experiment for Sim {
        const NAME: &'static str = "sim";
        const MEASURES: bool = false;
        type Params = SimParams;
        type Outcome = crate::model::outcome::info::Outcome;
        fn preset(_: super::super::Preset, _: &Fingerprint) -> SimParams {
            SimParams { job: 0, points_ms: vec![] }
        }
        fn run(p: &SimParams, ctx: &Bench) -> Result<Self::Outcome> {
            ctx.sweep_even("points", p.points_ms.clone(), |ms| {
                (1..ms).for_each(|_| {
                    ctx.clock.now_ns();
                });
                TAKEN.with(|t| t.borrow_mut().push((p.job, ms)));
                Ok(())
            })?;
            Ok(crate::model::outcome::info::Outcome::default())
        }
    }

    /// The suite of a machine with a 1 GiB cache and 256 CPUs, simulated:
    /// its twelve jobs' ladders (9 thread counts of 2 s, 22 working sets
    /// that double in cost every four, stages of 3 s) would take 138 s.
    /// In a 56 s box each job takes its first point and then what its
    /// share holds; the points dropped are the last of each ladder, and a
    /// job that dropped some says so; the run ends within its box.
    #[test]
    fn a_1_gib_cache_and_256_cpus_fit_the_quick_box() {
        let ladders: Vec<Vec<u64>> = (0..12)
            .map(|i| match i % 3 {
                0 => vec![2_000; 9],
                1 => (0..22).map(|k| 40 << (k / 4)).collect(),
                _ => vec![3_000, 3_000, 3_000],
            })
            .collect();
        let total_s: u64 = ladders.iter().flatten().sum::<u64>() / 1000;
        assert_eq!(total_s, 138, "more than two boxes");
        let jobs = ladders
            .iter()
            .enumerate()
            .map(|(job, l)| Job::of::<Sim>(SimParams { job, points_ms: l.clone() }))
            .collect();
        let clock = crate::timing::FakeClock::stepping(vec![1_000_000]);
        let mut p = Plan { strict: true, reserve_hugepages: false, ..plan(jobs) };
        let m = crate::test_support::claiming_l3(Bytes(1 << 40), crate::units::GIB, Vec::new());
        let mut doc = new_document(m, &clock, &p);
        let since_ns = clock.now_ns();
        p.time_box = Some(TimeBox { box_s: 56.0, since_ns });
        TAKEN.with(|t| t.borrow_mut().clear());
        execute(&mut p, &mut doc, &clock, &super::super::NoProgress, |_, _| Ok(())).unwrap();
        let end_s = (clock.now_ns() - since_ns) as f64 * 1e-9;
        assert!(end_s <= 56.0, "ended at {end_s} s");
        let taken = TAKEN.with(|t| t.borrow().clone());
        for (job, ladder) in ladders.iter().enumerate() {
            let ran: Vec<u64> = taken.iter().filter(|t| t.0 == job).map(|t| t.1).collect();
            assert!(!ran.is_empty() && ladder.starts_with(&ran), "job {job}: {ran:?}");
            let said = doc.experiments[job].warnings.iter().any(|w| w.code == "sweep-cut");
            assert_eq!(said, ran.len() < ladder.len(), "job {job}");
        }
        assert!(taken.len() < ladders.iter().map(Vec::len).sum::<usize>(), "{}", taken.len());
    }

    /// A job of no weight and no measuring, as `info` is.
    struct Weightless;
    impl Experiment for Weightless {
        const NAME: &'static str = "weightless";
        const MEASURES: bool = false;
        const SHARE: f64 = 0.0;
        type Params = ();
        type Outcome = crate::model::outcome::info::Outcome;
        fn preset(_: super::super::Preset, _: &Fingerprint) {}
        fn run(_: &(), _: &Bench) -> Result<Self::Outcome> {
            Ok(crate::model::outcome::info::Outcome::default())
        }
    }

    /// A job of no weight (`info`) alone in a box runs: its nominal part is
    /// nothing, and nothing is divided by its weight.
    #[test]
    fn a_weightless_job_alone_in_a_box_runs() {
        let clock = crate::timing::FakeClock::stepping(vec![1_000_000]);
        let mut p = Plan { strict: true, reserve_hugepages: false, ..plan(vec![Job::of::<Weightless>(())]) };
        let mut doc = new_document(crate::machine::collect(), &clock, &p);
        p.time_box = Some(TimeBox { box_s: 56.0, since_ns: clock.now_ns() });
        execute(&mut p, &mut doc, &clock, &super::super::NoProgress, |_, _| Ok(())).unwrap();
        assert_eq!(doc.experiments[0].status, document::Status::Completed, "{:?}", doc.experiments[0]);
    }

    /// Once the box is spent, the jobs still to come are not started, and
    /// each says why: here the first job's single point takes the box.
    #[test]
    fn jobs_after_a_spent_box_are_skipped_and_say_so() {
        let jobs = (0..3).map(|job| Job::of::<Sim>(SimParams { job, points_ms: vec![9_000] })).collect();
        let clock = crate::timing::FakeClock::stepping(vec![1_000_000]);
        let mut p = Plan { strict: true, reserve_hugepages: false, ..plan(jobs) };
        let mut doc = new_document(crate::machine::collect(), &clock, &p);
        p.time_box = Some(TimeBox { box_s: 8.0, since_ns: clock.now_ns() });
        execute(&mut p, &mut doc, &clock, &super::super::NoProgress, |_, _| Ok(())).unwrap();
        let status: Vec<document::Status> = doc.experiments.iter().map(|r| r.status).collect();
        assert_eq!(status, [document::Status::Completed, document::Status::Skipped, document::Status::Skipped]);
        assert!(
            doc.experiments[1].warnings[0].message.contains("would not hold its share"),
            "{:?}",
            doc.experiments[1]
        );
    }

    /// A job that ran past its nominal part shows how far a first look may
    /// overrun on this host: a later job starts only where what is left
    /// holds its nominal part and that much more. Here the second job's
    /// point takes 11 s of a nominal 6.5; the third's would end 2.3 s past
    /// the box, and is skipped instead; a weightless job after them runs.
    #[test]
    fn a_job_is_not_started_where_an_overrun_like_an_earlier_one_would_pass_the_box() {
        let points = [1_500, 11_000, 9_800];
        let jobs = points.iter().enumerate().map(|(job, &ms)| Job::of::<Sim>(SimParams { job, points_ms: vec![ms] }));
        let clock = crate::timing::FakeClock::stepping(vec![1_000_000]);
        let jobs: Vec<Job> = jobs.chain([Job::of::<Weightless>(())]).collect();
        let mut p = Plan { strict: true, reserve_hugepages: false, ..plan(jobs) };
        let mut doc = new_document(crate::machine::collect(), &clock, &p);
        let since_ns = clock.now_ns();
        p.time_box = Some(TimeBox { box_s: 20.0, since_ns });
        execute(&mut p, &mut doc, &clock, &super::super::NoProgress, |_, _| Ok(())).unwrap();
        let status: Vec<document::Status> = doc.experiments.iter().map(|r| r.status).collect();
        use document::Status::{Completed, Skipped};
        // A weightless job after them has no part to hold: it runs.
        assert_eq!(status, [Completed, Completed, Skipped, Completed]);
        let end_s = (clock.now_ns() - since_ns) as f64 * 1e-9;
        assert!(end_s <= 20.0, "ended at {end_s} s");
    }

    /// A job with seconds of its own, as `gpu` has where a GPU is: it
    /// takes `ms` of them, one tick of the clock a millisecond.
    struct Own;
    impl Experiment for Own {
        const NAME: &'static str = "own";
        const MEASURES: bool = false;
        const SHARE: f64 = 0.0;
        type Params = u64;
        type Outcome = crate::model::outcome::info::Outcome;
        fn own_s(_: &u64) -> f64 {
            5.0
        }
        fn preset(_: super::super::Preset, _: &Fingerprint) -> u64 {
            0
        }
        fn run(ms: &u64, ctx: &Bench) -> Result<Self::Outcome> {
            (0..*ms).for_each(|_| {
                ctx.clock.now_ns();
            });
            Ok(crate::model::outcome::info::Outcome::default())
        }
    }

    /// A box of 20 s grown by a job's own 5 s: that job's share is its 5 s
    /// wherever it runs, the weighted jobs split the 20 s less what is
    /// owed, and the plan line and the progress bar show it so.
    #[test]
    fn a_jobs_own_seconds_grow_the_box_and_are_its_share() {
        let jobs = vec![
            Job::of::<Sim>(SimParams { job: 0, points_ms: vec![1_000; 30] }),
            Job::of::<Own>(2_000),
            Job::of::<Sim>(SimParams { job: 1, points_ms: vec![1_000; 30] }),
        ];
        let clock = crate::timing::FakeClock::stepping(vec![1_000_000]);
        let mut p = Plan { strict: true, reserve_hugepages: false, ..plan(jobs) };
        let mut doc = new_document(crate::machine::collect(), &clock, &p);
        let since_ns = clock.now_ns();
        p.time_box = Some(TimeBox { box_s: 20.0 + p.own_s(), since_ns });
        assert_eq!(p.shares(), [("sim", 10.0), ("own", 5.0), ("sim", 10.0)]);
        assert!(p.summary().contains("(sim 40%, own 20%, sim 40%)"), "{}", p.summary());
        execute(&mut p, &mut doc, &clock, &super::super::NoProgress, |_, _| Ok(())).unwrap();
        let shares: Vec<f64> = doc.experiments.iter().map(|r| r.share_s.unwrap()).collect();
        assert!((shares[1] - 5.0).abs() < 0.01, "its own 5 s: {shares:?}");
        assert!(shares[0] < 10.0 && shares[0] > 9.0, "half of 20 s less what is owed: {shares:?}");
        assert!(doc.experiments.iter().all(|r| r.status == document::Status::Completed));
        let end_s = (clock.now_ns() - since_ns) as f64 * 1e-9;
        assert!(end_s <= 25.0, "ended at {end_s} s");
    }

    fn plan(jobs: Vec<Job>) -> Plan {
        Plan {
            jobs,
            strict: true,
            reserve_hugepages: true,
            notes: vec![],
            journal: false,
            command: Command::Run,
            time_box: None,
        }
    }

    #[test]
    fn a_clock_that_moved_more_than_five_percent_is_said() {
        use crate::timing::core_clock::CoreClock;
        let c = |ghz| CoreClock { ghz, min_ghz: ghz, max_ghz: ghz, samples: 5, methods: vec![] };
        assert_eq!(clock_moved(Some(&c(3.0)), Some(&c(3.1)), true), None);
        let moved = clock_moved(Some(&c(3.0)), Some(&c(2.7)), true).unwrap().render(Command::Run);
        assert_eq!(moved.code, "clock-moved");
        assert!(moved.message.contains("3.00 GHz before, 2.70 GHz after (-10.0%)"), "{}", moved.message);
        assert!(moved.fix.unwrap().contains("cpupower"));
        // A guest without cpufreq: the host moves the clock; no cpupower.
        let guest = clock_moved(Some(&c(3.0)), Some(&c(2.7)), false).unwrap().render(Command::Run);
        assert!(!guest.fix.as_deref().unwrap().contains("cpupower"), "{:?}", guest.fix);
        assert_eq!(clock_moved(None, Some(&c(1.0)), true), None, "nothing measured, nothing said");
    }

    #[test]
    fn hugepage_needs_cover_every_job_that_maps_hugetlb_pages() {
        let m = crate::machine::collect();
        let mut bw = bandwidth::Params::preset(crate::experiments::Preset::Quick, &m);
        bw.pages = vec![PagePolicy::Huge2M, PagePolicy::Shm, PagePolicy::Small];
        bw.size_bytes = Bytes(64 << 20);
        assert_eq!(plan(vec![Job::of::<bandwidth::Bandwidth>(bw)]).hugepage_needs(), vec![(Bytes(2 << 20), 64)]);

        let mut lat = latency::Params::preset(crate::experiments::Preset::Quick, &m);
        lat.pages = vec![PagePolicy::Small, PagePolicy::Huge2M];
        lat.sizes_bytes = vec![Bytes(4096), Bytes(64 << 20)];
        assert_eq!(plan(vec![Job::of::<latency::Latency>(lat)]).hugepage_needs(), vec![(Bytes(2 << 20), 32)]);

        let mut t = tlb::Params::preset(crate::experiments::Preset::Quick);
        t.pages = vec![PagePolicy::Small, PagePolicy::Huge1G];
        t.max_bytes = Bytes(2 << 30);
        t.max_pages = 1 << 16;
        // 1 GiB pages: 2 at their own stride, and the 4 KiB control (256 MiB) one more.
        assert_eq!(
            plan(vec![Job::of::<tlb::Tlb>(t), Job::of::<info::Info>(info::Params {})]).hugepage_needs(),
            vec![(Bytes(1 << 30), 3)]
        );
    }
}
