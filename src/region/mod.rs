//! Counters around named regions of a program's own code, the way libcpc's
//! `cpc_take_sample` was used around `doit()`: [`Region::start`] /
//! [`Region::stop`] in Rust, `mp_region_begin("name")` /
//! `mp_region_end("name")` in C (capi/, include/memperf.h). Each thread
//! keeps its own counters running; a region is the difference of two reads.
//! Regions nest and repeat (counts accumulate per name, over entries and
//! threads). At exit (or [`write_document`]) the totals become a document
//! `memperf report` and `compare` read: `$MEMPERF_REGIONS`, else
//! `memperf-regions.json`; events: `$MEMPERF_EVENTS`, else a default set.

use crate::counters::metrics::{self, Definition};
use crate::counters::{
    sanity, CounterBackend, CounterStatus, EventSpec, PerfBackend, Reading, RunningCounter, Target, Unavailable,
};
use crate::model::outcome::regions::{Outcome, RegionTotals};
use crate::model::outcome::stat::{EventCount, MachineFigures};
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Mutex, OnceLock};
use std::time::Instant;

/// What every thread counts, fixed at first use.
struct Config {
    events: Vec<EventSpec>,
    /// An `$MEMPERF_EVENTS` that did not parse: reported in the document.
    events_error: Option<String>,
}

/// Totals of one region name.
#[derive(Default)]
struct Totals {
    entries: u64,
    threads: BTreeSet<u64>,
    wall_ns: u64,
    counts: Vec<Option<Reading>>,
}

type Opened = Result<Box<dyn RunningCounter>, Unavailable>;

struct Open {
    name: String,
    start: Vec<Option<Reading>>,
    t0: Instant,
}

/// One thread's counters and its stack of open regions.
struct ThreadState {
    id: u64,
    counters: Vec<Opened>,
    open: Vec<Open>,
    methods_recorded: bool,
}

static CONFIG: OnceLock<Config> = OnceLock::new();
static TOTALS: Mutex<BTreeMap<String, Totals>> = Mutex::new(BTreeMap::new());
static READ_METHODS: Mutex<BTreeMap<String, &'static str>> = Mutex::new(BTreeMap::new());
static OPEN_ERRORS: Mutex<BTreeMap<String, Unavailable>> = Mutex::new(BTreeMap::new());
/// Begins without their end yet, per name, over all threads.
static OPEN_NOW: Mutex<BTreeMap<String, u64>> = Mutex::new(BTreeMap::new());
static NEXT_THREAD: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

thread_local! {
    static STATE: RefCell<Option<ThreadState>> = const { RefCell::new(None) };
}

fn config() -> &'static Config {
    CONFIG.get_or_init(|| {
        let cpu = crate::machine::cpuid::this_identity();
        let (events, events_error) = match std::env::var("MEMPERF_EVENTS") {
            Ok(list) => match crate::counters::events::resolve_list(&list, &cpu) {
                Ok(e) => (e, None),
                Err(e) => (
                    crate::counters::events::compact_set(&cpu),
                    Some(format!("MEMPERF_EVENTS: {e}; counted the default set")),
                ),
            },
            Err(_) => (crate::counters::events::compact_set(&cpu), None),
        };
        register_exit_writer();
        Config { events, events_error }
    })
}

fn read_all(counters: &mut [Opened]) -> Vec<Option<Reading>> {
    counters.iter_mut().map(|c| c.as_mut().ok().and_then(|c| c.read().ok())).collect()
}

fn with_state<R>(f: impl FnOnce(&mut ThreadState) -> R) -> R {
    STATE.with(|s| {
        let mut s = s.borrow_mut();
        let state = s.get_or_insert_with(|| {
            let cfg = config();
            let mut counters: Vec<Opened> =
                cfg.events.iter().map(|e| PerfBackend.open_event(e, Target::CallingThread)).collect();
            for (e, c) in cfg.events.iter().zip(counters.iter_mut()) {
                match c {
                    Ok(c) => {
                        let _ = c.enable();
                    }
                    Err(u) => {
                        OPEN_ERRORS
                            .lock()
                            .unwrap_or_else(|p| p.into_inner())
                            .entry(e.name.clone())
                            .or_insert(u.clone());
                    }
                }
            }
            let id = NEXT_THREAD.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            ThreadState { id, counters, open: Vec::new(), methods_recorded: false }
        });
        f(state)
    })
}

/// Opens region `name` on this thread.
pub fn begin(name: &str) {
    with_state(|s| {
        let start = read_all(&mut s.counters);
        s.open.push(Open { name: name.to_string(), start, t0: Instant::now() });
    });
    *OPEN_NOW.lock().unwrap_or_else(|p| p.into_inner()).entry(name.to_string()).or_default() += 1;
}

/// Closes the innermost open region `name` on this thread; an end without
/// its begin is ignored.
pub fn end(name: &str) {
    let done = with_state(|s| {
        let t1 = Instant::now();
        let at = s.open.iter().rposition(|o| o.name == name)?;
        let now = read_all(&mut s.counters);
        let open = s.open.remove(at);
        // How counters are read is recorded once per thread, after its
        // first region: not on every end, which the regions pay for.
        let methods: Vec<(String, &'static str)> = if s.methods_recorded {
            Vec::new()
        } else {
            s.methods_recorded = true;
            config()
                .events
                .iter()
                .zip(&s.counters)
                .filter_map(|(e, c)| c.as_ref().ok().map(|c| (e.name.clone(), c.read_method())))
                .collect()
        };
        Some((open, now, t1, s.id, methods))
    });
    let Some((open, now, t1, thread, methods)) = done else { return };
    if let Some(n) = OPEN_NOW.lock().unwrap_or_else(|p| p.into_inner()).get_mut(&open.name) {
        *n = n.saturating_sub(1);
    }
    let mut totals = TOTALS.lock().unwrap_or_else(|p| p.into_inner());
    let t = totals.entry(open.name).or_default();
    t.entries += 1;
    t.threads.insert(thread);
    t.wall_ns += t1.duration_since(open.t0).as_nanos() as u64;
    t.counts.resize(now.len(), None);
    for (i, (a, b)) in open.start.iter().zip(&now).enumerate() {
        if let (Some(a), Some(b)) = (a, b) {
            let d = *b - *a;
            t.counts[i] = Some(t.counts[i].map_or(d, |sum| sum + d));
        }
    }
    drop(totals);
    if !methods.is_empty() {
        READ_METHODS.lock().unwrap_or_else(|p| p.into_inner()).extend(methods);
    }
}

/// A region open until [`Region::stop`] (or until dropped).
pub struct Region {
    name: String,
    stopped: bool,
}

impl Region {
    pub fn start(name: &str) -> Region {
        begin(name);
        Region { name: name.to_string(), stopped: false }
    }

    pub fn stop(mut self) {
        self.stopped = true;
        end(&self.name);
    }
}

impl Drop for Region {
    fn drop(&mut self) {
        if !self.stopped {
            end(&self.name);
        }
    }
}

/// The cost of one begin+end pair with the configured events, in ns
/// (median of 15 batches of 200 pairs), measured on a thread of its own:
/// at exit the calling thread's state may be gone.
fn overhead_ns() -> f64 {
    std::thread::scope(|s| s.spawn(overhead_on_this_thread).join()).unwrap_or(f64::NAN)
}

fn overhead_on_this_thread() -> f64 {
    const PAIRS: u32 = 200;
    let name = "memperf-overhead-probe";
    let mut batches: Vec<f64> = (0..15)
        .map(|_| {
            let t0 = Instant::now();
            for _ in 0..PAIRS {
                begin(name);
                end(name);
            }
            t0.elapsed().as_nanos() as f64 / PAIRS as f64
        })
        .collect();
    TOTALS.lock().unwrap_or_else(|p| p.into_inner()).remove(name);
    OPEN_NOW.lock().unwrap_or_else(|p| p.into_inner()).remove(name);
    batches.sort_by(f64::total_cmp);
    batches[batches.len() / 2]
}

/// Each event's count in one region, or why there is none.
fn region_events(events: &[EventSpec], errors: &BTreeMap<String, Unavailable>, t: &Totals) -> Vec<EventCount> {
    events
        .iter()
        .enumerate()
        .map(|(i, e)| EventCount {
            name: e.name.clone(),
            description: e.description.clone(),
            software: e.is_software(),
            status: match (errors.get(&e.name), t.counts.get(i).copied().flatten()) {
                (Some(u), _) => u.clone().into(),
                (None, Some(r)) => r.status(),
                (None, None) => {
                    CounterStatus::Unavailable { reason: "the counter could not be read".into(), fix: None }
                }
            },
        })
        .collect()
}

/// One region's totals with the metrics `defs` derive from its events.
fn region_totals(
    name: &str,
    t: &Totals,
    events: Vec<EventCount>,
    open_at_exit: u64,
    defs: &[Definition],
    suspect: bool,
) -> RegionTotals {
    let figures = MachineFigures { line_bytes: 64, ..Default::default() };
    let inputs = crate::counters::metrics::inputs(&events, t.wall_ns as f64 / 1e9, &figures);
    RegionTotals {
        name: name.to_string(),
        entries: t.entries,
        threads: t.threads.len() as u32,
        wall_ns: t.wall_ns,
        metrics: defs.iter().map(|d| metrics::evaluate(d, &inputs, suspect)).collect(),
        events,
        open_at_exit,
    }
}

/// The regions so far as an outcome; `defs` derive the metrics.
pub fn outcome(defs: &[Definition]) -> Outcome {
    let cfg = config();
    let overhead = overhead_ns();
    let pmu_check = if cfg.events.iter().any(|e| !e.is_software()) {
        sanity::check(&PerfBackend)
    } else {
        sanity::PmuCheck::Unavailable { reason: "no hardware event was asked for".into() }
    };
    let open_now: BTreeMap<String, u64> = OPEN_NOW
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .iter()
        .filter(|e| *e.1 > 0)
        .map(|(k, v)| (k.clone(), *v))
        .collect();
    let errors = OPEN_ERRORS.lock().unwrap_or_else(|p| p.into_inner()).clone();
    let totals = TOTALS.lock().unwrap_or_else(|p| p.into_inner());
    // A region begun and never ended still shows, with no entry.
    let never_ended: Vec<&String> = open_now.keys().filter(|n| !totals.contains_key(*n)).collect();
    let empty = Totals::default();
    let all = totals.iter().chain(never_ended.iter().map(|n| (*n, &empty)));
    let regions = all
        .map(|(name, t)| {
            let events = region_events(&cfg.events, &errors, t);
            region_totals(name, t, events, open_now.get(name).copied().unwrap_or(0), defs, pmu_check.suspect())
        })
        .collect();
    let read_methods = READ_METHODS
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .iter()
        .map(|(k, v)| (k.clone(), v.to_string()))
        .collect();
    Outcome {
        program: std::env::args().next().unwrap_or_default(),
        pid: std::process::id(),
        read_methods,
        overhead_ns: overhead.is_finite().then_some(crate::units::Nanos(overhead)),
        pmu_check,
        regions,
        valid: cfg.events_error.is_none(),
    }
}

/// Writes the regions so far as a result document to `path`, atomically
/// (a FIFO: at once, or not at all when nothing reads it — this runs at
/// the program's exit, which must never wait on a reader).
pub fn write_document(path: &std::path::Path) -> crate::error::Result<()> {
    let defs = metrics::load(None).unwrap_or_else(|_| metrics::builtin());
    let outcome = outcome(&defs);
    let machine = crate::machine::collect();
    let clock = crate::timing::MonotonicClock::new();
    let mut doc = crate::experiments::plan::observation_document(
        machine,
        &clock,
        "regions",
        serde_json::json!({ "events": config().events.iter().map(|e| e.name.clone()).collect::<Vec<_>>() }),
        outcome.into(),
        0.0,
    );
    if let Some(e) = &config().events_error {
        doc.warnings.push(crate::model::document::Warning {
            code: "bad-events".into(),
            message: e.clone(),
            fix: Some("set MEMPERF_EVENTS to a list `memperf stat -e` accepts".into()),
        });
    }
    crate::sink::write(path, doc.to_json().as_bytes())
}

/// Where the exit writer puts the document.
pub fn default_path() -> std::path::PathBuf {
    std::env::var_os("MEMPERF_REGIONS").map(Into::into).unwrap_or_else(|| "memperf-regions.json".into())
}

extern "C" fn write_at_exit() {
    let wrote = std::panic::catch_unwind(|| write_document(&default_path()));
    match wrote {
        Ok(Ok(())) => {}
        Ok(Err(e)) => eprintln!("memperf regions: cannot write {}: {e}", default_path().display()),
        Err(_) => eprintln!("memperf regions: the document could not be made"),
    }
}

fn register_exit_writer() {
    if std::env::var_os("MEMPERF_REGIONS_NO_EXIT_WRITE").is_none() {
        // SAFETY: registers a plain extern "C" fn with no arguments.
        unsafe { libc::atexit(write_at_exit) };
    }
}

/// `report --reanalyze` draws none of the region API document's claims again.
impl crate::model::Redraw for crate::model::outcome::regions::Outcome {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regions_nest_repeat_and_count_across_threads() {
        // SAFETY: set before any region runs in this test binary's process.
        unsafe { std::env::set_var("MEMPERF_REGIONS_NO_EXIT_WRITE", "1") };
        let outer = Region::start("test-outer");
        for _ in 0..3 {
            let r = Region::start("test-inner");
            std::hint::black_box(vec![1u8; 1 << 20]);
            r.stop();
        }
        std::thread::scope(|s| {
            for _ in 0..2 {
                s.spawn(|| Region::start("test-inner").stop());
            }
        });
        end("test-never-begun");
        outer.stop();
        let o = outcome(&metrics::builtin());
        let inner = o.regions.iter().find(|r| r.name == "test-inner").unwrap();
        assert_eq!(inner.entries, 5);
        assert_eq!(inner.threads, 3);
        let outer = o.regions.iter().find(|r| r.name == "test-outer").unwrap();
        assert_eq!((outer.entries, outer.threads), (1, 1));
        assert!(outer.wall_ns >= inner.wall_ns / 2, "the outer region holds the inner ones of its thread");
        assert!(!o.regions.iter().any(|r| r.name == "test-never-begun" || r.name.contains("overhead")));
        assert!(o.overhead_ns.unwrap().0 > 0.0);
        let faults = |r: &RegionTotals| r.events.iter().find(|e| e.name == "page-faults").unwrap().status.value();
        match faults(outer) {
            // Three fresh MiB, touched by vec!: at least some faults, and
            // the outer region saw at least what the inner ones saw.
            Some((outer_faults, _)) => assert!(outer_faults >= faults(inner).unwrap().0 - 1.0 && outer_faults > 0.0),
            None => crate::test_support::skip(
                "the fault check: software counters unavailable",
                "allow perf_event_open (kernel.perf_event_paranoid <= 2, or root)",
            ),
        }
        let cycles = outer.events.iter().find(|e| e.name == "cycles").unwrap();
        assert!(cycles.status.value().is_some() || matches!(cycles.status, CounterStatus::Unavailable { .. }));
    }
}
