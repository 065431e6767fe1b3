//! One chaser and paced traffic: the engine that measures latency under
//! load. The first CPU of the team chases a random cycle; every other CPU
//! runs [`Traffic`] with a calibrated pause after each block, the pause
//! setting the rate. Every thread starts behind the team's barrier, works
//! through a warm-up and counts only the window that follows
//! (`timing::window`); points are measured through `timing::schedule`.

pub mod traffic;

pub use traffic::{bus_bytes_per_block, kernel_parts, Traffic};

use crate::counters::memory_traffic::MemoryTraffic;
use crate::error::{Error, Result};
use crate::experiments::{Bench, Needs};
use crate::kernels::chase::{chase_kernel, visit_order, Chase};
use crate::machine::Fingerprint;
use crate::memory::{Backing, Buffer, PagePolicy};
use crate::model::Caution;
use crate::timing::schedule::{self, Plan, Step, StepReport, Variant};
use crate::timing::window::{repeat_pausing, repeat_until, until_counted, Tally, Window, WindowAttempt};
use crate::timing::{Clock, Team};
use crate::units::Bytes;
use serde::{Deserialize, Serialize};
use std::cell::RefCell;
use std::sync::Mutex;

/// Bytes of a cache line: what each load of the chase fetches.
pub const LINE: u64 = 64;
/// Loads the chaser runs between two reads of the clock.
pub const CHASE_CHUNK: u64 = 512;

/// The chase, shared with the one thread that runs it.
pub struct Chaser(pub Chase);
// SAFETY: the chase's raw pointers point into a buffer that outlives every
// team run; only the chasing thread touches it, under the mutex.
unsafe impl Send for Chaser {}

impl Chaser {
    /// A random cycle over every line of `buffer`.
    ///
    /// # Safety
    /// `buffer` must outlive the chaser.
    pub unsafe fn over(buffer: &Buffer, seed: u64) -> Chaser {
        let lines = buffer.len() / LINE as usize;
        // SAFETY: slot s is the line at s × 64 inside the buffer, which the
        // caller keeps alive as long as the chase.
        Chaser(unsafe { Chase::new(buffer.as_ptr() as *mut u8, visit_order(lines, None, seed), |s| s * 64, 1) })
    }
}

/// What every measurement of a chase under load is asked (flattened into
/// each experiment's parameters).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Load {
    /// The chase's cycle, on these pages.
    pub chase_bytes: Bytes,
    pub pages: PagePolicy,
    /// Bytes of each traffic array a block covers, between two pauses.
    pub block_bytes: Bytes,
    pub repetitions: usize,
    /// Each point: a warm-up, then the counted window.
    pub warm_s: f64,
    pub window_s: f64,
    pub seed: u64,
}

impl Load {
    /// A chase of `chase_bytes` on THP, `window_s` windows after a quarter
    /// of one to warm up.
    pub fn new(chase_bytes: Bytes, block_bytes: Bytes, repetitions: usize, window_s: f64, seed: u64) -> Load {
        Load { chase_bytes, pages: PagePolicy::Thp, block_bytes, repetitions, warm_s: window_s / 4.0, window_s, seed }
    }

    /// Every parameter within range, with traffic arrays of `traffic_bytes`.
    pub fn check(&self, traffic_bytes: Bytes) -> Result<()> {
        if self.repetitions == 0 {
            return Err(Error::usage("--repetitions must be at least 1"));
        }
        if self.block_bytes.0 < 512 || !self.block_bytes.0.is_multiple_of(512) {
            let b = self.block_bytes;
            return Err(Error::usage(format!("--block {b} is not a multiple of 512 bytes: use e.g. 16KiB")));
        }
        if traffic_bytes.0 < self.block_bytes.0 * 4 || self.chase_bytes.0 < 64 * 1024 {
            return Err(Error::usage("--size must be at least 4 blocks and 64KiB: use e.g. --size 256MiB"));
        }
        let threads = crate::timing::team::allowed_cpus().len().saturating_sub(1).max(1) as u64;
        if traffic_bytes.0 / threads < self.block_bytes.0 {
            return Err(Error::usage(format!(
                "--size {traffic_bytes} leaves each of {threads} traffic threads less than one block of {}: use \
                 --size {} or more",
                self.block_bytes,
                Bytes(self.block_bytes.0 * threads * 4)
            )));
        }
        if !(self.window_s >= 0.001 && self.window_s <= 60.0 && self.warm_s >= 0.0) {
            return Err(Error::usage("--window must be between 1ms and 60s: use e.g. --window 100ms"));
        }
        Ok(())
    }

    /// What the run needs before the probe: the levels, and the chase's pages.
    pub fn needs(&self) -> Needs {
        let mapped = vec![(self.pages, self.chase_bytes.round_up(self.pages.page_size().0).0)];
        Needs { levels: true, pages_matter: self.pages.uses_hugetlb_pool(), mapped }
    }

    /// `(warm_s, window_s)`.
    pub fn window(&self) -> (f64, f64) {
        (self.warm_s, self.window_s)
    }
}

/// What one run of a point gave: ns per dependent load, traffic blocks per
/// second (all threads), and whether everything validated.
#[derive(Debug, Clone, Copy)]
pub struct Figures {
    pub latency_ns: f64,
    pub blocks_per_s: f64,
    /// Whether every traffic thread counted a block inside the window.
    pub all_counted: bool,
    /// Bytes per second the memory controllers counted over the run.
    pub counted_bytes_per_s: Option<f64>,
    pub ok: bool,
    /// How its window went (run again where it counted nothing).
    pub tried: WindowAttempt,
}

/// What a measurement holds while it runs.
pub struct Rig<'a> {
    /// Whose measurement this is, for its warnings and progress.
    pub experiment: &'static str,
    pub team: Team,
    pub chaser: Mutex<Chaser>,
    pub pause_ns_per_iteration: f64,
    /// The memory controllers' counters, where they were opened.
    pub memory: Mutex<Option<MemoryTraffic>>,
    pub ctx: &'a Bench<'a>,
    /// Windows kept, and how many were run again.
    windows: Tally,
}

impl<'a> Rig<'a> {
    /// A rig on `team` around `chaser`, its pause calibrated on the bench's clock.
    pub fn new(experiment: &'static str, ctx: &'a Bench<'a>, team: Team, chaser: Chaser) -> Rig<'a> {
        Rig {
            experiment,
            team,
            chaser: Mutex::new(chaser),
            pause_ns_per_iteration: crate::timing::window::pause_ns_per_iteration(ctx.clock, 20_000_000),
            memory: Mutex::new(None),
            ctx,
            windows: Tally::default(),
        }
    }

    /// One run of one point (see [`one_run`]): `(warm_s, window_s)`, the
    /// traffic threads pausing `pause_ns` after each block (none run at
    /// `None`, the idle point), its tries tallied.
    pub fn run(&self, window: (f64, f64), pause_ns: Option<u64>, traffic: &[Traffic]) -> Figures {
        let pause = pause_ns.map(|ns| (ns as f64 / self.pause_ns_per_iteration).round() as u64);
        let f = one_run(&self.team, self.ctx.clock, window, pause, &self.chaser, traffic, &self.memory);
        self.windows.add(f.tried);
        f
    }

    /// Every pause through the scheduler: once untimed (pages, caches and
    /// clocks settle at its load), then once per repetition, in an order
    /// shuffled anew each repetition. A point is one fixed window, so there
    /// is nothing to calibrate: one iteration per sample.
    pub fn scheduled(
        &self,
        label: &str,
        (repetitions, seed): (usize, u64),
        (warm_s, window_s): (f64, f64),
        pauses: &[Option<u64>],
        traffic: &[Traffic],
    ) -> Result<Vec<Vec<Figures>>> {
        let window_ns = ((warm_s + window_s) * 1e9) as u64;
        let kept: Vec<RefCell<Vec<Figures>>> = pauses.iter().map(|_| RefCell::new(Vec::new())).collect();
        let run = |pause| self.run((warm_s, window_s), pause, traffic);
        let mut variants: Vec<Variant> = pauses
            .iter()
            .zip(&kept)
            .map(|(&pause, kept)| {
                Box::new(move |step: Step| match step {
                    Step::WarmUp => StepReport::valid(run(pause).ok),
                    Step::Calibrate(_) => StepReport::valid(true),
                    Step::Run(_) => {
                        let f = run(pause);
                        kept.borrow_mut().push(f);
                        self.ctx.progress.advance(1);
                        StepReport::timed(f.ok, window_ns)
                    }
                }) as Variant
            })
            .collect();
        let mut plan = Plan::new(repetitions, window_s);
        plan.seed = seed;
        plan.max_iters = 1;
        self.ctx.progress.start(label, (repetitions * pauses.len()) as u64);
        schedule::measure(&plan, self.ctx.clock, &mut variants, &mut || self.ctx.check_interrupt())?;
        self.ctx.progress.finish();
        drop(variants);
        Ok(kept.into_iter().map(RefCell::into_inner).collect())
    }

    /// Says how many windows were run again, and what the chase's pages
    /// were (`backing`, read back after the run).
    pub fn finish(&self, backing: &Backing) {
        if let (rerun @ 1.., never, windows) = self.windows.again() {
            let experiment = self.experiment.into();
            self.ctx.warn(Caution::WindowsRunAgain { experiment, rerun, never, windows });
        }
        match backing.requested {
            PagePolicy::Small => self.ctx.warn(Caution::VariantUnavailable {
                experiment: self.experiment,
                variant: "huge-page chase".into(),
                message: "the chase runs on 4 KiB pages, so its latency includes page walks".into(),
                fix: Some(format!("memperf {} --pages thp (or 2m)", self.experiment)),
            }),
            PagePolicy::Thp => {
                if let Some(f) = backing.huge_fraction.filter(|&f| f < 0.9) {
                    self.ctx.warn(Caution::ThpPartial { what: "chase", fraction: f });
                }
            }
            _ => {}
        }
    }
}

/// Warns that this process may use one CPU, so none is left for traffic:
/// `variant` is what is not measured, `instead` what is.
pub fn warn_one_cpu(ctx: &Bench, experiment: &'static str, variant: &str, instead: &str) {
    ctx.warn(Caution::VariantUnavailable {
        experiment,
        variant: variant.into(),
        message: format!("this process may use one CPU only, so no CPU is left for traffic: {instead}"),
        fix: Some("run where the process may use two CPUs or more (taskset, cgroup cpuset)".into()),
    });
}

/// The chase and `parts` traffic arrays, each of `size`, must fit in the
/// memory available; `what` names them for the error.
pub fn check_memory(size: Bytes, parts: usize, machine: &Fingerprint, what: &str) -> Result<()> {
    let all = parts as u64 + 1;
    let avail = machine.memory_available_bytes;
    crate::memory::check_fits(
        Bytes(size.0.saturating_mul(all)),
        avail,
        &format!("--size {size} ({what})"),
        format!("use --size {} or less", Bytes(avail.map_or(0, |a| a.0) / all / 2)),
    )
}

/// One run of one point: the chaser chases and every traffic thread runs
/// its blocks with `pause` iterations after each (none at the idle point),
/// through `warm_s` and then the counted `window_s`, both from the team's
/// release; run again where the chaser, or a loaded point's traffic, was
/// stalled past the window and counted nothing (see [`until_counted`]).
pub fn one_run(
    team: &Team,
    clock: &dyn Clock,
    (warm_s, window_s): (f64, f64),
    pause: Option<u64>,
    chaser: &Mutex<Chaser>,
    traffic: &[Traffic],
    memory: &Mutex<Option<MemoryTraffic>>,
) -> Figures {
    let k1 = chase_kernel(1).expect("one chain");
    let once = || {
        let mut counters = memory.lock().unwrap_or_else(|e| e.into_inner());
        let before = counters.as_mut().map(|m| m.bytes());
        // The window opens from the team's release: every thread awake.
        let window = |released: u64| {
            let from = released + (warm_s * 1e9) as u64;
            (from, from + (window_s * 1e9) as u64)
        };
        let run = team.run_released(clock, |t, released| {
            let (from, end) = window(released);
            if t == 0 {
                let mut c = chaser.lock().unwrap_or_else(|e| e.into_inner());
                // SAFETY: the chase's buffer outlives the run.
                repeat_until(clock, 0, from, end, |_| unsafe { c.0.run(k1, CHASE_CHUNK) })
            } else {
                match pause {
                    Some(p) => repeat_pausing(clock, p, from, end, |i| traffic[t - 1].run(i)),
                    None => Window { ok: true, ..Window::default() },
                }
            }
        });
        let elapsed_s = run.elapsed_ns.max(1) as f64 * 1e-9;
        let counted = counters.as_mut().zip(before).map(|(m, b)| (m.bytes() - b) / elapsed_s);
        Figures { counted_bytes_per_s: counted, ..figures(&run.results) }
    };
    let (f, tried) = until_counted(once, |f| f.latency_ns.is_finite() && (pause.is_none() || f.all_counted));
    Figures { tried, ..f }
}

/// The chaser's window (first) and the traffic threads' as figures.
fn figures(windows: &[Window]) -> Figures {
    let chase = windows[0];
    let loads = chase.calls * CHASE_CHUNK;
    let latency_ns = if loads > 0 { chase.span_ns as f64 / loads as f64 } else { f64::NAN };
    let blocks_per_s =
        windows[1..].iter().filter(|w| w.span_ns > 0).map(|w| w.calls as f64 / (w.span_ns as f64 * 1e-9)).sum();
    Figures {
        latency_ns,
        blocks_per_s,
        all_counted: windows[1..].iter().all(|w| w.calls > 0),
        counted_bytes_per_s: None,
        ok: windows.iter().all(|w| w.ok),
        tried: WindowAttempt::default(),
    }
}
