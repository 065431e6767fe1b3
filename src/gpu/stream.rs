//! Device memory through memperf's own kernels: BabelStream's copy, mul,
//! add, triad, nstream and dot, with read-only and write-only kernels,
//! over three arrays of doubles several times the L2.
//!
//! Each kernel runs every block and grid size of [`configs`], the
//! configurations taking turns in an order shuffled anew each round after
//! one untimed round; its best median is its figure. Before each kernel
//! the arrays are filled with [`START`], and after it they are read back
//! and checked against the same arithmetic replayed on the host: every
//! element holds one value, so the replay is on three numbers. Then
//! triad, in its best configuration, runs on working sets from a
//! sixteenth of the L2 to the arrays' whole size.

use super::{Arg, CopyOp, DevicePtr, Driver, GpuError, Kernel};
use crate::rng::SplitMix64;
use crate::timing::Summary;
use memperf_model::outcome::gpu::{KernelConfig, KernelRate, WorkingSetRate};

/// The arrays' values before each kernel: BabelStream's a and b, and a
/// c that is not zero, so every kernel changes what it writes.
pub const START: [f64; 3] = [0.1, 0.2, 0.3];
/// BabelStream's scalar, and the value the write-only kernel stores.
pub const SCALAR: f64 = 0.4;
pub const WRITTEN: f64 = 0.7;

/// Threads per block tried.
pub const BLOCKS: [u32; 4] = [128, 256, 512, 1024];
/// Blocks per SM tried, besides one element per thread (BabelStream's own).
pub const BLOCKS_PER_SM: [u32; 6] = [1, 2, 4, 8, 16, 32];

/// The least time a timed sample spans: the events resolve about half a
/// microsecond.
pub const MIN_SAMPLE_S: f64 = 1e-3;

/// What to run, and how often.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Plan {
    /// Doubles in each of the three arrays.
    pub elements: usize,
    /// Samples of each configuration and each working set.
    pub rounds: usize,
    /// The least time a sample spans ([`MIN_SAMPLE_S`]; tests on a fake
    /// clock ask for less).
    pub min_sample_s: f64,
    pub seed: u64,
}

/// The kernels timed, in the order they are reported.
pub const TIMED: [Kernel; 8] =
    [Kernel::Copy, Kernel::Mul, Kernel::Add, Kernel::Triad, Kernel::Nstream, Kernel::Dot, Kernel::Read, Kernel::Write];

/// A kernel's name in the document.
pub fn name(k: Kernel) -> &'static str {
    k.function().trim_start_matches("memperf_")
}

/// Doubles a kernel reads and writes per element (BabelStream's counts).
pub fn doubles_moved(k: Kernel) -> u32 {
    match k {
        Kernel::Init => 3,
        Kernel::Copy | Kernel::Mul | Kernel::Dot => 2,
        Kernel::Add | Kernel::Triad => 3,
        Kernel::Nstream => 4,
        Kernel::Read | Kernel::Write => 1,
        // The latency kernels chase chains, not arrays of doubles.
        Kernel::Chain | Kernel::Chase | Kernel::Spread | Kernel::Loaded | Kernel::Gate | Kernel::SmCopy => 0,
    }
}

/// Every (block, grid) tried on `elements` doubles with `sms` SMs: each
/// block size with a grid of each [`BLOCKS_PER_SM`] (no more blocks than
/// elements need) and with one element per thread.
pub fn configs(sms: u32, elements: usize) -> Vec<(u32, u32)> {
    let mut out = Vec::new();
    for block in BLOCKS {
        let whole = elements.div_ceil(block as usize).clamp(1, u32::MAX as usize) as u32;
        for grid in BLOCKS_PER_SM.iter().map(|k| (k * sms.max(1)).min(whole)).chain([whole]) {
            if !out.contains(&(block, grid)) {
                out.push((block, grid));
            }
        }
    }
    out
}

/// `(block, grid)` with no more blocks than `n` elements need: a
/// reduction's partial sums have room for one a block of that many.
fn capped((block, grid): (u32, u32), n: usize) -> (u32, u32) {
    (block, grid.min(n.div_ceil(block as usize).clamp(1, u32::MAX as usize) as u32))
}

/// The three arrays, the reductions' partial sums, and pinned memory to
/// read them back through.
struct Arrays<'a> {
    d: &'a dyn Driver,
    abc: [DevicePtr; 3],
    partial: DevicePtr,
    host: *mut u8,
    elements: usize,
}

impl<'a> Arrays<'a> {
    fn new(d: &'a dyn Driver, elements: usize) -> Result<Arrays<'a>, GpuError> {
        let bytes = elements * 8;
        let partial_len = elements.div_ceil(BLOCKS[0] as usize).max(1);
        // Each is freed by Drop, the ones made before a failure included.
        let mut a = Arrays { d, abc: [0; 3], partial: 0, host: std::ptr::null_mut(), elements };
        for k in 0..3 {
            a.abc[k] = d.alloc(bytes)?;
        }
        a.partial = d.alloc(partial_len * 8)?;
        a.host = d.alloc_pinned(bytes.max(partial_len * 8))?;
        Ok(a)
    }

    /// The arguments of kernel `k` over the first `n` elements.
    fn args(&self, k: Kernel, n: usize) -> Vec<Arg> {
        let [a, b, c] = self.abc.map(Arg::Ptr);
        let (s, n, p) = (Arg::F64(SCALAR), Arg::U64(n as u64), Arg::Ptr(self.partial));
        match k {
            Kernel::Init => vec![a, b, c, Arg::F64(START[0]), Arg::F64(START[1]), Arg::F64(START[2]), n],
            Kernel::Copy => vec![a, c, n],
            Kernel::Mul => vec![b, c, s, n],
            Kernel::Add => vec![a, b, c, n],
            Kernel::Triad | Kernel::Nstream => vec![a, b, c, s, n],
            Kernel::Dot => vec![a, b, p, n],
            Kernel::Read => vec![a, p, n],
            Kernel::Write => vec![a, Arg::F64(WRITTEN), n],
            // Not over these arrays: ladder.rs and loaded.rs launch them.
            Kernel::Chain | Kernel::Chase | Kernel::Spread | Kernel::Loaded | Kernel::Gate | Kernel::SmCopy => vec![],
        }
    }

    fn launch(&self, k: Kernel, (block, grid): (u32, u32), n: usize) -> Result<(), GpuError> {
        // SAFETY: the arguments are the kernel's, over at most `elements`
        // doubles of arrays that hold that many (partial: a double per
        // block of the largest grid, one element a thread of 128).
        unsafe { self.d.launch(k, grid, block, &self.args(k, n)) }
    }

    /// `len` doubles from `from`, through the pinned buffer.
    fn read(&self, from: DevicePtr, len: usize) -> Result<Vec<f64>, GpuError> {
        // SAFETY: the pinned buffer holds at least `len` doubles and
        // outlives the synchronize.
        unsafe { self.d.copy(CopyOp::DeviceToHost { dst: self.host, src: from, bytes: len * 8 })? };
        self.d.synchronize()?;
        // SAFETY: `len * 8` bytes the copy just wrote.
        let bytes = unsafe { std::slice::from_raw_parts(self.host as *const u8, len * 8) };
        Ok(bytes.chunks_exact(8).map(|c| f64::from_ne_bytes(c.try_into().expect("8 bytes"))).collect())
    }
}

impl Drop for Arrays<'_> {
    fn drop(&mut self) {
        let _ = self.d.synchronize();
        for p in self.abc.into_iter().chain([self.partial]).filter(|&p| p != 0) {
            self.d.free(p);
        }
        if !self.host.is_null() {
            self.d.free_pinned(self.host);
        }
    }
}

/// The arrays' one value each, replayed on the host as the kernels run.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Replay([f64; 3]);

impl Replay {
    fn apply(&mut self, k: Kernel) {
        let [a, b, c] = &mut self.0;
        match k {
            Kernel::Init => self.0 = START,
            Kernel::Copy => *c = *a,
            Kernel::Mul => *b = SCALAR * *c,
            Kernel::Add => *c = *a + *b,
            Kernel::Triad => *a = SCALAR.mul_add(*c, *b),
            Kernel::Nstream => *a += SCALAR.mul_add(*c, *b),
            Kernel::Write => *a = WRITTEN,
            Kernel::Dot
            | Kernel::Read
            | Kernel::Chain
            | Kernel::Chase
            | Kernel::Spread
            | Kernel::Loaded
            | Kernel::Gate
            | Kernel::SmCopy => {}
        }
    }

    /// What a reduction's partial sums add up to over `n` elements.
    fn sum(&self, k: Kernel, n: usize) -> Option<f64> {
        let [a, b, _] = self.0;
        match k {
            Kernel::Dot => Some(n as f64 * a * b),
            Kernel::Read => Some(n as f64 * a),
            _ => None,
        }
    }
}

/// Close enough for doubles that took the same operations in another
/// order or with another rounding (BabelStream allows 1e-8 for dot).
fn close(got: f64, want: f64) -> bool {
    (got - want).abs() <= 1e-8 * want.abs().max(f64::MIN_POSITIVE)
}

/// One sample: `launches` launches between two events, in bytes per second.
fn sample(arr: &Arrays, k: Kernel, cfg: (u32, u32), n: usize, launches: usize) -> Result<f64, GpuError> {
    let d = arr.d;
    let from = d.record()?;
    let to = match (0..launches).try_for_each(|_| arr.launch(k, cfg, n)).and_then(|_| d.record()) {
        Ok(to) => to,
        Err(e) => {
            d.discard(from);
            return Err(e);
        }
    };
    let s = d.elapsed_ms(from, to)? * 1e-3;
    let bytes = (launches * n * 8) as f64 * doubles_moved(k) as f64;
    if s > 0.0 {
        Ok(bytes / s)
    } else {
        Err(GpuError { call: "cuEventElapsedTime", code: 0, name: "no time between the events".into() })
    }
}

/// Launches per sample for `k` on `n` elements: one timed launch, then
/// enough for the plan's least sample time (at least 2, at most 10,000).
fn launches_for(arr: &Arrays, k: Kernel, cfg: (u32, u32), n: usize, plan: &Plan) -> Result<usize, GpuError> {
    let rate = sample(arr, k, cfg, n, 1)?;
    let one_s = (n * 8) as f64 * doubles_moved(k) as f64 / rate;
    Ok(((plan.min_sample_s / one_s).ceil() as usize).clamp(2, 10_000))
}

/// Whether the arrays (and a reduction's partial sums of its last launch,
/// `grid` blocks) hold what the replay says.
fn check(arr: &Arrays, k: Kernel, replay: &Replay, grid: u32) -> Result<bool, GpuError> {
    if let Some(want) = replay.sum(k, arr.elements) {
        let got: f64 = arr.read(arr.partial, grid as usize)?.iter().sum();
        return Ok(close(got, want));
    }
    for (array, want) in arr.abc.iter().zip(replay.0) {
        if !arr.read(*array, arr.elements)?.iter().all(|&x| close(x, want)) {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Kernel `k` in every configuration: its best, and each configuration's median.
fn sweep(
    arr: &Arrays,
    dev: usize,
    k: Kernel,
    sms: u32,
    plan: &Plan,
    rng: &mut SplitMix64,
) -> Result<(KernelRate, Vec<KernelConfig>), GpuError> {
    let n = arr.elements;
    let all = configs(sms, n);
    let mut replay = Replay(START);
    let first = capped((256, sms.max(1) * 4), n);
    arr.launch(Kernel::Init, first, n)?;
    replay.apply(Kernel::Init);
    let launches = launches_for(arr, k, first, n, plan)?;
    replay.apply(k);
    let mut samples = vec![Vec::new(); all.len()];
    let mut last = all[0];
    super::in_turns(rng, all.len(), plan.rounds, true, |at, timed| {
        let s = sample(arr, k, all[at], n, launches)?;
        (0..launches).for_each(|_| replay.apply(k));
        last = all[at];
        if timed {
            samples[at].push(s);
        }
        Ok(())
    })?;
    let valid = check(arr, k, &replay, last.1)?;
    let medians: Vec<f64> = samples.iter().map(|s| Summary::of(s).expect("a round at least").median).collect();
    let best = (0..all.len()).max_by(|&x, &y| medians[x].total_cmp(&medians[y])).expect("a configuration at least");
    let configs = all.iter().zip(&medians).map(|(&(block, grid), &m)| KernelConfig {
        device: dev,
        kernel: name(k).into(),
        block,
        grid,
        bytes_per_s: m,
    });
    let rate = KernelRate {
        device: dev,
        kernel: name(k).into(),
        doubles_per_element: doubles_moved(k),
        elements: n as u64,
        block: all[best].0,
        grid: all[best].1,
        launches_per_sample: launches,
        bytes_per_s: Summary::of(&samples[best]).expect("a round at least"),
        samples_bytes_per_s: samples[best].clone(),
        valid,
    };
    Ok((rate, configs.collect()))
}

/// Triad's working sets: the three arrays' bytes from a sixteenth of the
/// L2 (at least 3 × 8 KiB) doubling to their whole size.
pub fn working_sets(l2_bytes: u64, elements: usize) -> Vec<usize> {
    let whole = elements * 24;
    let mut bytes = (l2_bytes as usize / 16).max(3 * 8192);
    let mut out = Vec::new();
    while bytes < whole {
        out.push(bytes / 24);
        bytes *= 2;
    }
    out.push(elements);
    out
}

/// Triad on each working set, in the block and grid `best` (no more
/// blocks than the set needs), the sets taking turns.
fn working_set_sweep(
    arr: &Arrays,
    dev: usize,
    best: (u32, u32),
    l2_bytes: u64,
    plan: &Plan,
    rng: &mut SplitMix64,
) -> Result<Vec<WorkingSetRate>, GpuError> {
    let sets = working_sets(l2_bytes, arr.elements);
    let cfg = |n: usize| capped(best, n);
    let launches: Vec<usize> =
        sets.iter().map(|&n| launches_for(arr, Kernel::Triad, cfg(n), n, plan)).collect::<Result<_, _>>()?;
    let mut samples = vec![Vec::new(); sets.len()];
    super::in_turns(rng, sets.len(), plan.rounds, false, |at, _| {
        samples[at].push(sample(arr, Kernel::Triad, cfg(sets[at]), sets[at], launches[at])?);
        Ok(())
    })?;
    Ok(sets
        .iter()
        .zip(samples)
        .zip(launches)
        .map(|((&n, s), launches)| WorkingSetRate {
            device: dev,
            bytes: n as u64 * 24,
            block: cfg(n).0,
            grid: cfg(n).1,
            launches_per_sample: launches,
            bytes_per_s: Summary::of(&s).expect("a round at least"),
            samples_bytes_per_s: s,
        })
        .collect())
}

/// What the kernels measured on one device.
#[derive(Debug, Clone, PartialEq)]
pub struct Measured {
    pub kernels: Vec<KernelRate>,
    pub configs: Vec<KernelConfig>,
    pub working_set: Vec<WorkingSetRate>,
}

/// Every kernel of [`TIMED`] on device `dev`, current with its kernels
/// loaded by the caller, then triad against its working set.
pub fn measure(d: &dyn Driver, dev: usize, sms: u32, l2_bytes: u64, plan: &Plan) -> Result<Measured, GpuError> {
    let arr = Arrays::new(d, plan.elements)?;
    let mut rng = SplitMix64(plan.seed);
    let mut out = Measured { kernels: vec![], configs: vec![], working_set: vec![] };
    for k in TIMED {
        let (rate, configs) = sweep(&arr, dev, k, sms, plan, &mut rng)?;
        out.kernels.push(rate);
        out.configs.extend(configs);
    }
    let triad = out.kernels.iter().find(|r| r.kernel == name(Kernel::Triad)).expect("triad is timed");
    out.working_set = working_set_sweep(&arr, dev, (triad.block, triad.grid), l2_bytes, plan, &mut rng)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::fake::FakeGpu;

    /// On a fake GPU of 4 SMs and a 256 KiB L2, whose memory moves 4 TB/s
    /// (8 TB/s from L2) once 1,024 threads an SM run: every kernel's best
    /// is that rate in a configuration that fills the SMs, its arrays hold
    /// the host's replay, and the buffers are given back.
    #[test]
    fn each_kernel_reaches_the_memorys_rate_and_holds_the_replay() {
        let gpu = FakeGpu::small(4, 256 << 10);
        gpu.use_device(0).unwrap();
        gpu.load_kernels(9, 0).unwrap();
        let plan = Plan { elements: 64 << 10, rounds: 2, min_sample_s: 0.0, seed: 3 };
        let got = measure(&gpu, 0, 4, 256 << 10, &plan).unwrap();
        assert_eq!(
            got.kernels.iter().map(|r| r.kernel.as_str()).collect::<Vec<_>>(),
            ["copy", "mul", "add", "triad", "nstream", "dot", "read", "write"]
        );
        for r in &got.kernels {
            assert!(r.valid, "{r:?}");
            assert!((r.bytes_per_s.median / 4e12 - 1.0).abs() < 1e-9, "{r:?}");
            assert!(r.block * r.grid >= 4 * 1024, "{r:?}");
        }
        assert_eq!(got.configs.len(), 8 * configs(4, 64 << 10).len());
        assert_eq!(gpu.live_allocations(), 0);
    }

    /// Working sets inside the fake's L2 run at its rate, the arrays'
    /// whole size at memory's (each at the share of the SMs its blocks
    /// fill: a small set has few), and the sets double from a sixteenth of
    /// the L2.
    #[test]
    fn triad_against_its_working_set_shows_the_l2_and_memory() {
        let gpu = FakeGpu::small(4, 256 << 10);
        gpu.use_device(0).unwrap();
        gpu.load_kernels(9, 0).unwrap();
        let got = measure(&gpu, 0, 4, 256 << 10, &Plan { elements: 64 << 10, rounds: 1, min_sample_s: 0.0, seed: 3 })
            .unwrap();
        let ws = &got.working_set;
        let bytes: Vec<u64> = ws.iter().map(|w| w.bytes).collect();
        assert_eq!(bytes, [24_576, 49_152, 98_304, 196_608, 393_216, 786_432, 1_572_864]);
        assert!(ws.iter().all(|w| w.grid as usize <= (w.bytes as usize / 24).div_ceil(w.block as usize)), "{ws:?}");
        for w in ws {
            let share = (w.block as f64 * w.grid as f64 / 4096.0).min(1.0);
            let want = share * if w.bytes <= 256 << 10 { 8e12 } else { 4e12 };
            assert!((w.bytes_per_s.median / want - 1.0).abs() < 1e-9, "{w:?}");
        }
    }

    /// A kernel that writes nothing, or a wrong reduction, fails its check.
    #[test]
    fn a_kernel_that_misbehaves_is_not_valid() {
        let gpu = FakeGpu::small(4, 256 << 10);
        gpu.break_kernel(Kernel::Triad);
        gpu.use_device(0).unwrap();
        gpu.load_kernels(9, 0).unwrap();
        let got =
            measure(&gpu, 0, 4, 256 << 10, &Plan { elements: 4 << 10, rounds: 1, min_sample_s: 0.0, seed: 3 }).unwrap();
        let bad: Vec<&str> = got.kernels.iter().filter(|r| !r.valid).map(|r| r.kernel.as_str()).collect();
        assert_eq!(bad, ["triad"]);
    }

    #[test]
    fn configurations_cover_each_block_and_never_more_blocks_than_elements() {
        let c = configs(132, 1 << 20);
        let unique: std::collections::HashSet<_> = c.iter().collect();
        assert_eq!(unique.len(), c.len(), "{c:?}");
        assert!(c.contains(&(1024, 1024)) && c.contains(&(256, 132 * 4)) && c.contains(&(128, 8192)), "{c:?}");
        assert_eq!(c.iter().filter(|x| x.0 == 128).count(), 7);
        let tiny = configs(132, 1000);
        assert!(tiny.iter().all(|&(b, g)| (g as usize) <= 1000usize.div_ceil(b as usize)), "{tiny:?}");
    }
}
