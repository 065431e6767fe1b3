//! A plan: the experiments a command asks for, run one after another into
//! one result document.

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

    /// Seconds this job is expected to take on `m` (see [`super::estimate`]).
    pub fn estimate_s(&self, m: &Fingerprint, r: &super::estimate::Rates) -> f64 {
        self.0.estimate_s(m, r)
    }

    /// One step down towards a time budget; `false` at its floor.
    pub fn shrink(&mut self, m: &Fingerprint) -> bool {
        self.0.shrink(m)
    }

    /// One step of what it gives up last (see [`Experiment::shrink_last`]).
    pub fn shrink_last(&mut self, m: &Fingerprint) -> bool {
        self.0.shrink_last(m)
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
    /// The suite's time budget, where it has one: the jobs still to come
    /// are shrunk when the run falls behind it.
    pub deadline: Option<Deadline>,
}

/// A time budget and when it began (before the machine probe).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Deadline {
    pub budget_s: f64,
    pub since_ns: u64,
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

/// What the machine probe takes (clock, levels with a 1 GiB point and a
/// second look, rates), about: faulting the 1 GiB in is most of it.
pub const PROBE_S: f64 = 4.0;
/// Writing the document, plots and report, about.
pub const REPORT_S: f64 = 0.5;

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
        deadline: None,
    };
    let mut doc = new_document(machine, clock, &plan);
    doc.planned = vec![name.to_string()];
    doc
}

/// Where a run stands after a job.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Standing {
    /// Jobs done.
    pub done: usize,
    /// Points of the host reference still to take.
    pub references_left: usize,
    pub now_ns: u64,
}

/// Runs every job of the plan; `on_record` sees each record as it is made
/// and may stop the run with an error
/// (the suite journals them); `pace`, after each job, may change the jobs
/// still to come (the suite holds its deadline: [`super::fit::pacer`])
/// and say how.
pub fn execute(
    plan: &mut Plan,
    doc: &mut Document,
    clock: &dyn Clock,
    progress: &dyn Progress,
    mut on_record: impl FnMut(&Document, &ExperimentRecord) -> Result<()>,
    mut pace: impl FnMut(&mut Plan, &Document, Standing) -> Option<Caution>,
) -> Result<()> {
    doc.warnings.extend(plan.notes.iter().cloned());
    let _reservations = reserve(plan, doc)?;
    let machine = doc.machine.clone();
    let rates = super::estimate::Rates::of(&machine);
    progress.plan(&plan.estimates(&machine));
    let mut reference = drift_reference(plan, &machine);
    if let Some(r) = reference.as_mut() {
        if let Some(e) = r.calls_unavailable() {
            let (message, fix) = (e.message.clone(), e.fix.clone());
            let variant = "the host reference's call chain".into();
            doc.warnings
                .push(Caution::VariantUnavailable { experiment: "run", variant, message, fix }.render(plan.command));
        }
        reference_point(r, clock, 0, doc, plan.command);
    }
    for index in 0..plan.jobs.len() {
        let job = &plan.jobs[index];
        progress.job(index);
        // A suite job's share of the time box: its estimate (which counts
        // the first look of each comparison) and half again for the looks
        // after it.
        let share = plan.deadline.map(|_| clock.now_ns() + (job.estimate_s(&machine, &rates) * 1.5e9) as u64);
        let ctx = Bench::new(&machine, clock, progress).for_command(plan.command).until(share);
        let before = super::steal_ticks();
        let measures = job.measures() && !super::INTERRUPTED.load(std::sync::atomic::Ordering::Relaxed);
        let nominal = machine.nominal_clocks();
        let clock_before = if measures { crate::timing::core_clock::sample(clock, nominal).clock } else { None };
        let mut rec = if super::INTERRUPTED.load(std::sync::atomic::Ordering::Relaxed) {
            interrupted_record(job)
        } else {
            job.0.record(&ctx, plan.strict)?
        };
        rec.estimated_s = Some(job.estimate_s(&machine, &rates));
        if let Some(c) = super::steal_warning(before, super::steal_ticks()) {
            rec.warnings.push(c.render(plan.command));
        }
        let clock_after = if measures { crate::timing::core_clock::sample(clock, nominal).clock } else { None };
        let moved = clock_moved(clock_before.as_ref(), clock_after.as_ref(), machine.system.governor.is_some());
        rec.core_clock = [clock_before, clock_after].into_iter().flatten().collect();
        if let Some(c) = moved {
            rec.warnings.push(c.render(plan.command));
        }
        doc.experiments.push(rec);
        if let Some(rec) = doc.experiments.last() {
            on_record(doc, rec)?;
        }
        let jobs = plan.jobs.len();
        if let Some(r) = reference.as_mut().filter(|_| super::drift::point_after(index + 1, jobs)) {
            reference_point(r, clock, index + 1, doc, plan.command);
        }
        let references_left = reference
            .as_ref()
            .map_or(0, |_| 1 + (index + 2..jobs).filter(|&d| super::drift::point_after(d, jobs)).count());
        if let Some(c) = pace(plan, doc, Standing { done: index + 1, references_left, now_ns: clock.now_ns() }) {
            // The latest pacing warning says where the run stands.
            doc.warnings.retain(|w| w.code != c.code());
            doc.warnings.push(c.render(plan.command));
            progress.plan(&plan.estimates(&machine));
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
            deadline: None,
        }
    }

    /// A suite of more than one measuring experiment (not `--strict`)
    /// takes the host's reference at its start, after every few
    /// experiments, and at its end ([`super::drift::points`]).
    pub fn has_reference(&self) -> bool {
        !self.strict && self.jobs.iter().filter(|j| j.measures()).count() > 1
    }

    /// What every plan spends beside its jobs: the machine probe, the
    /// host's reference, two core-clock readings per measuring job, the
    /// report.
    /// The probe counts what it took where it ran (it runs before the plan
    /// is fitted, and takes seconds where it reaches 2 GiB), and the
    /// reference what its region costs on `m`.
    pub fn overhead_s(&self, m: &Fingerprint) -> f64 {
        let probe = match &m.measured_levels {
            _ if !self.needs_levels() => 0.1,
            Some(levels) => levels.duration_s,
            // Under emulation the probe does not run.
            None if m.emulation.is_some() => 0.1,
            None => PROBE_S,
        };
        let drift = if self.has_reference() {
            super::drift::points(self.jobs.len()) as f64 * super::drift::point_estimate_s(m)
        } else {
            0.0
        };
        probe + drift + self.closing_s(0)
    }

    /// What the jobs from `first` on spend beside their own time (two
    /// core-clock readings each that measures), and the report.
    pub fn closing_s(&self, first: usize) -> f64 {
        let measuring = self.jobs.iter().skip(first).filter(|j| j.measures()).count() as f64;
        2.0 * measuring * super::estimate::CLOCK_SAMPLE_S + REPORT_S
    }

    /// One line for the terminal: "plan: 11 experiments, about 41 s
    /// (bandwidth 6.9 s, latency 4.2 s, …)".
    pub fn summary(&self, m: &Fingerprint) -> String {
        let est = self.estimates(m);
        let total: f64 = est.iter().map(|e| e.1).sum::<f64>() + self.overhead_s(m);
        let parts: Vec<String> =
            est.iter().filter(|e| e.1 > 0.05).map(|(n, s)| format!("{n} {}", crate::units::seconds(*s))).collect();
        format!(
            "plan: {} experiment(s), about {} ({})",
            self.jobs.len(),
            crate::units::seconds(total),
            if parts.is_empty() { "nothing to measure".into() } else { parts.join(", ") }
        )
    }

    /// Each job's estimated seconds, in plan order.
    pub fn estimates(&self, m: &Fingerprint) -> Vec<(&'static str, f64)> {
        let r = super::estimate::Rates::of(m);
        self.jobs.iter().map(|j| (j.name(), j.estimate_s(m, &r))).collect()
    }
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

    fn plan(jobs: Vec<Job>) -> Plan {
        Plan {
            jobs,
            strict: true,
            reserve_hugepages: true,
            notes: vec![],
            journal: false,
            command: Command::Run,
            deadline: None,
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
