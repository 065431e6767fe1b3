//! `memperf loaded-latency`: the latency of memory as the memory system
//! fills (the curve Intel MLC's `--loaded_latency` draws). One CPU chases a
//! random cycle on huge pages while every other CPU runs a bandwidth kernel
//! that waits an injected delay after each block, the delay swept from none
//! to nearly idle, plus an idle point with no loader. Each point is one team
//! run counted inside a window after a warm-up, measured through
//! `timing::schedule` in shuffled order, so drift spreads over the curve
//! instead of bending it. The method, step by step:
//! docs/methods/loaded-latency.md.

pub mod options;

pub use options::Options;

use super::stream_arrays::Array;
use super::{Bench, Experiment, Preset};
pub use crate::analysis::bend::bend;
use crate::error::{Error, Result};
use crate::kernels::chase::{chase_kernel, visit_order, Chase};
use crate::kernels::{pattern_sum, stream_kernel, StreamArg, StreamKernel, StreamShape};
use crate::memory::{PagePolicy, Buffer};
pub use crate::model::outcome::loaded_latency::*;
use crate::model::Caution;
use crate::timing::schedule::{self, Plan, StepReport, Step, Variant};
use crate::timing::window::{repeat_until, until_counted, Tally, Window};
use crate::timing::{Clock, Summary, Team};
use crate::units::{Bytes, Nanos, MIB};
use serde::{Deserialize, Serialize};
use std::cell::RefCell;
use std::sync::Mutex;

/// Bytes of a cache line: what each load of the chase fetches.
const LINE: u64 = 64;
/// Loads the chaser runs between two reads of the clock.
const CHASE_CHUNK: u64 = 512;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Params {
    /// What the loaders run: `simd` (read) or a write kernel or mix.
    pub loader_kernel: StreamShape,
    /// Delays after each block, swept (the idle point is added).
    pub delays_ns: Vec<u64>,
    /// Bytes each loader moves between two delays.
    pub block_bytes: Bytes,
    /// The chase's cycle, and each loader array.
    pub chase_bytes: Bytes,
    pub loader_bytes: Bytes,
    /// Pages of the chase.
    pub pages: PagePolicy,
    pub repetitions: usize,
    /// Each point: a warm-up, then the counted window.
    pub warm_s: f64,
    pub window_s: f64,
    pub seed: u64,
}

impl Params {
    pub fn preset(preset: Preset, machine: &crate::machine::Fingerprint) -> Params {
        let (factor, delays, repetitions, window_s): (u64, Vec<u64>, usize, f64) = match preset {
            Preset::Quick => (4, vec![0, 250, 1000, 4000, 16000], 3, 0.04),
            Preset::Default => (8, vec![0, 100, 200, 400, 800, 1600, 3200, 6400, 12800, 25600, 51200], 5, 0.1),
            Preset::Full => (8, (0..14).map(|k| if k == 0 { 0 } else { 50 << (k - 1) }).collect(), 9, 0.2),
        };
        // The chase and the loaders' array live at once.
        let size = super::budget::memory_size(machine, factor, Bytes(64 * MIB), 2);
        Params {
            loader_kernel: StreamShape::Simd,
            delays_ns: delays,
            block_bytes: Bytes(16 * 1024),
            chase_bytes: size,
            loader_bytes: size,
            pages: PagePolicy::Thp,
            repetitions,
            warm_s: window_s / 4.0,
            window_s,
            seed: 0x6c6f_6164,
        }
    }
}

pub struct LoadedLatency;

impl Experiment for LoadedLatency {
    const NAME: &'static str = "loaded-latency";
    const SHARE: f64 = 1.3;
    type Params = Params;
    type Outcome = Outcome;

    fn preset(preset: crate::experiments::Preset, machine: &crate::machine::Fingerprint) -> Params {
        Params::preset(preset, machine)
    }

    fn needs(p: &Params) -> Result<crate::experiments::Needs> {
        check(p)?;
        Ok(crate::experiments::Needs {
            levels: true,
            pages_matter: p.pages.uses_hugetlb_pool(),
            mapped: vec![(p.pages, p.chase_bytes.round_up(p.pages.page_size().0).0)],
        })
    }

    fn run(p: &Params, ctx: &Bench) -> Result<Outcome> {
        run(p, ctx)
    }
}

/// The kernels a loader may run.
pub fn loader_kernel_ok(k: StreamShape) -> bool {
    k == StreamShape::Simd || k.writes()
}

pub(crate) fn check(p: &Params) -> Result<()> {
    if !loader_kernel_ok(p.loader_kernel) {
        return Err(Error::usage(format!(
            "--loader {} is not a loader kernel: use simd (read) or a write kernel or mix \
             (store, store-nt, copy, copy-nt, triad, update, mix-3:1)",
            p.loader_kernel
        )));
    }
    if p.repetitions == 0 {
        return Err(Error::usage("--repetitions must be at least 1"));
    }
    if p.block_bytes.0 < 512 || !p.block_bytes.0.is_multiple_of(512) {
        return Err(Error::usage(format!("--block {} is not a multiple of 512 bytes: use e.g. 16KiB", p.block_bytes)));
    }
    if p.loader_bytes.0 < p.block_bytes.0 * 4 || p.chase_bytes.0 < 64 * 1024 {
        return Err(Error::usage("--size must be at least 4 blocks and 64KiB: use e.g. --size 256MiB"));
    }
    if !(p.window_s >= 0.001 && p.window_s <= 60.0 && p.warm_s >= 0.0) {
        return Err(Error::usage("--window must be between 1ms and 60s: use e.g. --window 100ms"));
    }
    Ok(())
}

/// One loader's blocks: its slice of the loader arrays, cut in blocks it
/// cycles through.
struct Loader {
    kernel: StreamKernel,
    reads: bool,
    slice: StreamArg,
    /// Index of the slice's first element in its array (for the checksum).
    first_index: usize,
    block: usize,
}

impl Loader {
    fn blocks(&self) -> u64 {
        (self.slice.len / self.block).max(1) as u64
    }

    /// Moves block `i` (modulo the slice); whether it validated.
    fn run(&self, i: u64) -> bool {
        let off = (i % self.blocks()) as usize * self.block;
        let at = |p: *const f64| if p.is_null() { p } else { p.wrapping_add(off) };
        let arg = StreamArg {
            ptr: at(self.slice.ptr),
            len: self.block,
            sources: self.slice.sources.map(at),
            first_pass: i,
            distance: 0,
        };
        // SAFETY: off + block <= the slice's length, inside the loader array
        // (and its sources), alive for the run.
        let got = unsafe { (self.kernel)(1, &arg) };
        if self.reads {
            got == pattern_sum(self.first_index + off, self.block)
        } else {
            got == self.block as f64
        }
    }
}

/// The chase, shared with the one thread that runs it.
struct Chaser(Chase);
// SAFETY: the chase's raw pointers point into a region that outlives every
// team run; only the chasing thread touches it, under the mutex.
unsafe impl Send for Chaser {}

/// What each thread of one point returned.
enum Did {
    Chase(Window),
    Load(Window),
}

/// One point, one repetition: the chaser chases and every loader loads
/// (none at the idle point) through the warm-up and the window, both from
/// the team's release; run again where the chaser or a loader was stalled
/// past the window and counted nothing (see
/// [`until_counted`]).
fn one_run(
    team: &Team,
    clock: &dyn Clock,
    p: &Params,
    delay: Option<u64>,
    (chaser, loaders): (&Mutex<Chaser>, &[Loader]),
    windows: &Tally,
) -> (Window, Vec<Window>) {
    let k1 = chase_kernel(1).expect("one chain");
    let once = || {
        // The window opens from the team's release, every thread awake and
        // pinned; one the host stalled past the window is run again.
        let run = team.run_released(clock, |t, released| {
            let from = released + (p.warm_s * 1e9) as u64;
            let end = from + (p.window_s * 1e9) as u64;
            if t == 0 {
                let mut c = chaser.lock().unwrap_or_else(|e| e.into_inner());
                // SAFETY: the chase's region outlives the run.
                Did::Chase(repeat_until(clock, 0, from, end, |_| unsafe { c.0.run(k1, CHASE_CHUNK) }))
            } else {
                match delay {
                    Some(d) => Did::Load(repeat_until(clock, d, from, end, |i| loaders[t - 1].run(i))),
                    None => Did::Load(Window { ok: true, ..Window::default() }),
                }
            }
        });
        let mut chase = Window::default();
        let mut loads = Vec::new();
        for d in run.results {
            match d {
                Did::Chase(w) => chase = w,
                Did::Load(w) => loads.push(w),
            }
        }
        (chase, loads)
    };
    let (run, tried) =
        until_counted(once, |(chase, loads)| chase.calls > 0 && (delay.is_none() || loads.iter().all(|w| w.calls > 0)));
    windows.add(tried);
    run
}

/// Raw figures of one run: ns per load, loader bytes per second, validity.
fn figures(chase: &Window, loads: &[Window], block: u64) -> (f64, f64, bool) {
    let loads_done = chase.calls * CHASE_CHUNK;
    let latency = if loads_done > 0 { chase.span_ns as f64 / loads_done as f64 } else { f64::NAN };
    let bw: f64 =
        loads.iter().filter(|w| w.span_ns > 0).map(|w| (w.calls * block) as f64 / (w.span_ns as f64 * 1e-9)).sum();
    (latency, bw, chase.ok && loads.iter().all(|w| w.ok))
}

fn run(p: &Params, ctx: &Bench) -> Result<Outcome> {
    check(p)?;
    let cpus = crate::timing::team::allowed_cpus().len();
    let team = Team::new(cpus.max(1))?;
    let delays = point_delays(p, cpus, ctx);
    let mut region = Buffer::new(p.pages, p.chase_bytes)?;
    let lines = region.len() / LINE as usize;
    // SAFETY: slot s is the line at s × 64 inside the region, which outlives the chase.
    let chase = unsafe { Chase::new(region.as_ptr() as *mut u8, visit_order(lines, None, p.seed), |s| s * 64, 1) };
    let chaser = Mutex::new(Chaser(chase));
    let (kernel, info) = stream_kernel(p.loader_kernel, None)?;
    let parts = if p.loader_kernel.writes() { 4 } else { 1 };
    let array =
        if cpus > 1 { Some(Array::new(PagePolicy::Small, p.loader_bytes, parts, &team, 1, ctx.clock)?) } else { None };
    let loaders = array.as_ref().map_or_else(Vec::new, |a| loaders_of(a, kernel, p, cpus - 1));
    let samples = measure(&team, p, ctx, &delays, &chaser, &loaders)?;
    region.read_back();
    warn_pages(region.backing(), ctx);
    let bus_per_program = info.traffic.bus_bytes() as f64 / info.traffic.program_bytes() as f64;
    let points: Vec<Point> =
        delays.iter().zip(samples).map(|(&d, s)| point(d, s, bus_per_program)).collect::<Result<_>>()?;
    Ok(summarise(p, &team, info.isa, region.backing().clone(), points))
}

/// The delays measured: the idle point first, then the sweep (none when
/// there is no CPU for a loader).
fn point_delays(p: &Params, cpus: usize, ctx: &Bench) -> Vec<Option<u64>> {
    let mut d = vec![None];
    if cpus > 1 {
        let mut sweep = p.delays_ns.clone();
        sweep.sort();
        sweep.dedup();
        d.extend(sweep.into_iter().map(Some));
    } else {
        ctx.warn(Caution::VariantUnavailable {
            experiment: "loaded-latency",
            variant: "loaded points".into(),
            message: "this process may use one CPU only, so no CPU is left to load memory: idle latency only".into(),
            fix: Some("run where the process may use two CPUs or more (taskset, cgroup cpuset)".into()),
        });
    }
    d
}

/// The `threads` loaders, one slice of the array each (as filled).
fn loaders_of(a: &Array, kernel: StreamKernel, p: &Params, threads: usize) -> Vec<Loader> {
    let slices = if p.loader_kernel.writes() { a.write_slices(threads) } else { a.slices(threads, 0) };
    let base = a.region.as_ptr() as usize;
    slices
        .into_iter()
        .map(|slice| Loader {
            kernel,
            reads: !p.loader_kernel.writes(),
            first_index: (slice.ptr as usize - base) / 8,
            slice,
            block: (p.block_bytes.0 / 8) as usize,
        })
        .collect()
}

/// Every point through the scheduler: once untimed (pages, caches and
/// clocks settle at its load), then once per repetition, the points in an
/// order shuffled anew each repetition. A point is one fixed window, so
/// there is nothing to calibrate: one iteration per sample.
fn measure(
    team: &Team,
    p: &Params,
    ctx: &Bench,
    delays: &[Option<u64>],
    chaser: &Mutex<Chaser>,
    loaders: &[Loader],
) -> Result<Vec<Vec<(f64, f64, bool)>>> {
    let block = p.block_bytes.0;
    let window_ns = ((p.warm_s + p.window_s) * 1e9) as u64;
    let samples: Vec<RefCell<Vec<(f64, f64, bool)>>> = delays.iter().map(|_| RefCell::new(Vec::new())).collect();
    let tally = Tally::default();
    let windows = &tally;
    let mut variants: Vec<Variant> = delays
        .iter()
        .zip(&samples)
        .map(|(&delay, kept)| {
            Box::new(move |step: Step| match step {
                Step::WarmUp => {
                    let (chase, loads) = one_run(team, ctx.clock, p, delay, (chaser, loaders), windows);
                    StepReport::valid(figures(&chase, &loads, block).2)
                }
                Step::Calibrate(_) => StepReport::valid(true),
                Step::Run(_) => {
                    let (chase, loads) = one_run(team, ctx.clock, p, delay, (chaser, loaders), windows);
                    let f = figures(&chase, &loads, block);
                    kept.borrow_mut().push(f);
                    ctx.progress.advance(1);
                    StepReport::timed(f.2, window_ns)
                }
            }) as Variant
        })
        .collect();
    let mut plan = Plan::new(p.repetitions, p.window_s);
    plan.seed = p.seed;
    plan.max_iters = 1;
    ctx.progress.start("loaded-latency", (p.repetitions * delays.len()) as u64);
    schedule::measure(&plan, ctx.clock, &mut variants, &mut || ctx.check_interrupt())?;
    ctx.progress.finish();
    drop(variants);
    if let (rerun @ 1.., never, windows) = tally.again() {
        ctx.warn(crate::model::Caution::WindowsRunAgain { experiment: "loaded-latency".into(), rerun, never, windows });
    }
    Ok(samples.into_iter().map(RefCell::into_inner).collect())
}

/// One point's figures from its repetitions; `bus_per_program` turns the
/// loaders' program bytes into bus bytes.
fn point(delay_ns: Option<u64>, samples: Vec<(f64, f64, bool)>, bus_per_program: f64) -> Result<Point> {
    let lat: Vec<f64> = samples.iter().map(|s| s.0).filter(|x| x.is_finite()).collect();
    let bw: Vec<f64> = samples.iter().map(|s| s.1).collect();
    let Some(latency_ns) = Summary::of(&lat) else {
        return Err(Error::usage("the chaser finished no chunk of loads inside the window: use a longer --window"));
    };
    let loader_bytes_per_s = Summary::of(&bw).expect("at least one repetition");
    let chaser = LINE as f64 / (latency_ns.median * 1e-9);
    let bus = loader_bytes_per_s.median * bus_per_program;
    let total = bus + chaser;
    Ok(Point {
        delay_ns,
        samples_latency_ns: lat,
        latency_ns,
        samples_loader_bytes_per_s: bw,
        loader_bytes_per_s,
        loader_bus_bytes_per_s: bus,
        chaser_bytes_per_s: chaser,
        total_bytes_per_s: total,
        valid: samples.iter().all(|s| s.2 && s.0.is_finite()),
    })
}

fn summarise(
    p: &Params,
    team: &Team,
    isa: String,
    chase_backing: crate::memory::Backing,
    points: Vec<Point>,
) -> Outcome {
    let idle = &points[0];
    let saturated = points.iter().find(|q| q.delay_ns == Some(0));
    Outcome {
        chaser_cpu: team.cpus()[0],
        loader_cpus: team.cpus()[1..].to_vec(),
        loader_kernel: p.loader_kernel,
        loader_isa: isa,
        block_bytes: p.block_bytes.0,
        chase_bytes: p.chase_bytes.0,
        chase_backing,
        idle_latency_ns: Nanos(idle.latency_ns.median),
        saturated_latency_ns: saturated.map(|q| Nanos(q.latency_ns.median)),
        saturated_bytes_per_s: saturated.map(|q| q.total_bytes_per_s),
        bend: bend(&points),
        seed: p.seed,
        valid: points.iter().all(|q| q.valid),
        points,
    }
}

fn warn_pages(b: &crate::memory::Backing, ctx: &Bench) {
    match b.requested {
        PagePolicy::Small => ctx.warn(Caution::VariantUnavailable {
            experiment: "loaded-latency",
            variant: "huge-page chase".into(),
            message: "the chase runs on 4 KiB pages, so its latency includes page walks".into(),
            fix: Some("memperf loaded-latency --pages thp (or 2m)".into()),
        }),
        PagePolicy::Thp => {
            if let Some(f) = b.huge_fraction.filter(|&f| f < 0.9) {
                ctx.warn(Caution::ThpPartial { what: "chase", fraction: f });
            }
        }
        _ => {}
    }
}

impl crate::model::Redraw for Outcome {
    /// Only a changed verdict replaces the stored bend: its figures
    /// recomputed from parsed samples could differ in the last bit, and a
    /// reader must get the same document back.
    fn recheck(&mut self, _: Option<f64>) {
        let again = crate::analysis::bend::bend(&self.points);
        if std::mem::discriminant(&again) != std::mem::discriminant(&self.bend) {
            self.bend = again;
        }
    }
    fn reanalyse(&mut self, _: &crate::machine::Fingerprint, _: Option<f64>) -> Vec<&'static str> {
        self.bend = crate::analysis::bend::bend(&self.points);
        vec!["bend"]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// For real: a read loader with a long delay moves fewer bytes than one
    /// without (each run alone, one CPU, a 1 MiB array).
    #[test]
    fn a_real_loader_moves_less_with_a_longer_delay() {
        let clock = crate::timing::MonotonicClock::new();
        let data: Vec<f64> = (0..(1 << 17)).map(crate::kernels::pattern_value).collect();
        let (kernel, _) = stream_kernel(StreamShape::Simd, None).unwrap();
        let loader = Loader {
            kernel,
            reads: true,
            slice: StreamArg::read(data.as_ptr(), data.len(), 0),
            first_index: 0,
            block: 2048,
        };
        let window = |delay: u64| {
            let now = clock.now_ns();
            let w = repeat_until(&clock, delay, now, now + 20_000_000, |i| loader.run(i));
            assert!(w.ok, "every block summed to its closed form");
            w.calls
        };
        // Each call waits 20 µs after it on the clock: at most 1,001 in 20 ms,
        // however the host schedules the thread.
        let delayed = window(20_000);
        assert!(delayed <= 1_001, "{delayed} blocks with a 20 µs delay after each in 20 ms");
        // Without the delay, 16 KiB blocks go far faster than 2 per 20 µs
        // (1.6 GB/s) on any CPU, given the CPU: the best of three windows
        // (a neighbour may take the CPU for one).
        let free = (0..3).map(|_| window(0)).max().unwrap();
        assert!(free > 2 * delayed, "without the delay {free} blocks, with it {delayed}");
    }
}
