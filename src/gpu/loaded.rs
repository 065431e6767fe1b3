//! The GPU's bandwidth–latency curve: curves' method on device memory.
//! One thread on one SM chases a chain several times the L2 while a
//! block on every other SM reads an array, each read followed by a spin
//! of [`DELAYS`] cycles; an idle point has no readers. Each point takes
//! turns with the others in an order shuffled anew each round. The chase
//! is timed by the GPU's nanosecond timer, the readers' bytes by the
//! driver's events around the launch. Where latency leaves idle, and the
//! lines each SM kept in flight: `analysis::gpu_latency::curve`.

use super::ladder::{self, LINE};
use super::{Arg, CopyOp, DevicePtr, Driver, GpuError, Kernel};
use crate::rng::SplitMix64;
use crate::timing::Summary;
use memperf_model::outcome::loaded_latency::Point;

/// The readers' spin between reads, cycles: from none (as fast as they
/// can) to long enough that memory idles.
pub const DELAYS: [u64; 10] = [0, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768];
/// Loads the chaser times at each point.
pub const STEPS: u64 = 4096;
/// Threads of a reading block.
pub const THREADS: u32 = 1024;
/// The readers stop by themselves after this long, should the chaser's
/// flag never reach them.
pub const LIMIT_NS: u64 = 500_000_000;
/// Words of the kernel's output.
const OUT_WORDS: usize = 6;

/// What to run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Plan {
    pub chain_bytes: u64,
    /// Bytes of the readers' array (at least a double a reading thread).
    pub array_bytes: u64,
    pub rounds: usize,
    pub seed: u64,
}

/// The chain, the readers' array, the output and pinned memory to zero
/// and read it through.
struct Buffers<'a> {
    d: &'a dyn Driver,
    ptrs: [DevicePtr; 3],
    host: *mut u8,
}

impl<'a> Buffers<'a> {
    /// Room for `chain`, an array of `n` doubles and the output.
    fn new(d: &'a dyn Driver, chain: &Chain, n: u64) -> Result<Buffers<'a>, GpuError> {
        // Each is freed by Drop, the ones made before a failure included.
        let mut b = Buffers { d, ptrs: [0; 3], host: std::ptr::null_mut() };
        for (i, bytes) in [chain.bytes(), n * 8, (OUT_WORDS * 8) as u64].into_iter().enumerate() {
            b.ptrs[i] = d.alloc(bytes as usize)?;
        }
        b.host = d.alloc_pinned(OUT_WORDS * 8)?;
        Ok(b)
    }

    /// One launch: the chase from position `from` of the cycle, beside
    /// `blocks` reading blocks (none: the idle point) spinning `delay`
    /// cycles; the output's words and the launch's milliseconds.
    fn run(
        &self,
        chain: &Chain,
        from: u64,
        n: u64,
        blocks: u32,
        delay: u64,
    ) -> Result<([u64; OUT_WORDS], f64), GpuError> {
        let [a, b, out] = self.ptrs;
        // SAFETY: the pinned buffer holds OUT_WORDS words; the stream
        // passes the copy before the synchronize below returns.
        unsafe {
            std::ptr::write_bytes(self.host, 0, OUT_WORDS * 8);
            self.d.copy(CopyOp::HostToDevice { dst: out, src: self.host, bytes: OUT_WORDS * 8 })?;
        }
        let args = [
            Arg::Ptr(a),
            Arg::U64(chain.after(from)),
            Arg::U64(STEPS),
            Arg::Ptr(b),
            Arg::U64(n),
            Arg::U64(delay),
            Arg::U64(LIMIT_NS),
            Arg::Ptr(out),
        ];
        let from = self.d.record()?;
        let threads = if blocks == 0 { 32 } else { THREADS };
        // SAFETY: the chain lies in its allocation and indexes inside it;
        // b holds n doubles, at least one a reading thread; out holds
        // OUT_WORDS words.
        let to =
            match unsafe { self.d.launch(Kernel::Loaded, 1 + blocks, threads, &args) }.and_then(|_| self.d.record()) {
                Ok(to) => to,
                Err(e) => {
                    self.d.discard(from);
                    return Err(e);
                }
            };
        let ms = self.d.elapsed_ms(from, to)?;
        // SAFETY: as above; the host buffer outlives the synchronize.
        unsafe { self.d.copy(CopyOp::DeviceToHost { dst: self.host, src: out, bytes: OUT_WORDS * 8 })? };
        self.d.synchronize()?;
        // SAFETY: the words the copy just wrote.
        let bytes = unsafe { std::slice::from_raw_parts(self.host as *const u8, OUT_WORDS * 8) };
        let mut words = [0u64; OUT_WORDS];
        for (w, c) in words.iter_mut().zip(bytes.chunks_exact(8)) {
            *w = u64::from_ne_bytes(c.try_into().expect("8 bytes"));
        }
        Ok((words, ms))
    }
}

impl Drop for Buffers<'_> {
    fn drop(&mut self) {
        let _ = self.d.synchronize();
        for p in self.ptrs.into_iter().filter(|&p| p != 0) {
            self.d.free(p);
        }
        if !self.host.is_null() {
            self.d.free_pinned(self.host);
        }
    }
}

use ladder::Chain;

/// One point's samples: ns a load, the readers' and the chaser's bytes
/// per second, and whether every chase ended on its cycle.
#[derive(Default)]
struct Samples {
    ns: Vec<f64>,
    read: Vec<f64>,
    chased: Vec<f64>,
    valid: bool,
}

/// What the curve measured: its points, and what ran.
#[derive(Debug, Clone, PartialEq)]
pub struct Measured {
    /// The idle point, then one a delay.
    pub points: Vec<Point>,
    pub chain_bytes: u64,
    pub array_bytes: u64,
    /// Reading blocks, and their threads.
    pub blocks: u32,
    pub threads: u32,
}

/// The curve on the current device (its kernels loaded by the caller):
/// the idle point and a point a delay, `plan.rounds` samples each; `ghz`
/// turns the delays' cycles into nanoseconds.
pub fn measure(d: &dyn Driver, sms: u32, ghz: f64, plan: &Plan) -> Result<Measured, GpuError> {
    let blocks = sms.saturating_sub(1).max(1);
    let n = (plan.array_bytes / 8).max(blocks as u64 * THREADS as u64);
    let mut rng = SplitMix64(plan.seed);
    let chain = Chain::new(plan.chain_bytes / LINE, LINE / 8, rng.next_u64());
    let bufs = Buffers::new(d, &chain, n)?;
    chain.build(d, bufs.ptrs[0], sms)?;
    // The readers' array holds ones, so every sum they keep is positive.
    let fill = [Arg::Ptr(bufs.ptrs[1]), Arg::F64(1.0), Arg::U64(n)];
    // SAFETY: memperf_write over the n doubles the array holds.
    unsafe { d.launch(Kernel::Write, 4 * sms.max(1), 256, &fill)? };
    let delays: Vec<Option<u64>> = std::iter::once(None).chain(DELAYS.iter().map(|&x| Some(x))).collect();
    let mut samples: Vec<Samples> = delays.iter().map(|_| Samples { valid: true, ..Default::default() }).collect();
    // Each launch chases lines no launch before it loaded: from where the
    // last one ended.
    let mut from = 0;
    super::in_turns(&mut rng, delays.len(), plan.rounds, false, |at, _| {
        let (words, ms) = bufs.run(&chain, from, n, delays[at].map_or(0, |_| blocks), delays[at].unwrap_or(0))?;
        from += STEPS;
        let s = &mut samples[at];
        let chase_s = words[4] as f64 * 1e-9;
        s.valid &= words[1] == chain.after(from) && words[5] == 0 && chase_s > 0.0 && ms > 0.0;
        s.ns.push(words[4] as f64 / STEPS as f64);
        s.read.push(words[3] as f64 / (ms * 1e-3));
        s.chased.push(if chase_s > 0.0 { (STEPS * LINE) as f64 / chase_s } else { 0.0 });
        Ok(())
    })?;
    let points: Vec<Point> = delays.iter().zip(samples).map(|(&delay, s)| point(delay, s, ghz)).collect();
    Ok(Measured { points, chain_bytes: chain.bytes(), array_bytes: n * 8, blocks, threads: THREADS })
}

fn point(delay: Option<u64>, s: Samples, ghz: f64) -> Point {
    let summary = |v: &[f64]| Summary::of(v).expect("a round at least");
    let (read, chased) = (summary(&s.read).median, summary(&s.chased).median);
    // Where a sample's time was zero (a chase that failed), the figure is
    // unusable: it stays, marked by `valid`, but never as 0 ns.
    let ns: Vec<f64> = s.ns.iter().map(|&x| x.max(f64::MIN_POSITIVE)).collect();
    Point {
        delay_ns: delay.map(|c| (c as f64 / ghz).round() as u64),
        latency_ns: summary(&ns),
        samples_latency_ns: ns,
        loader_bytes_per_s: summary(&s.read),
        samples_loader_bytes_per_s: s.read,
        loader_bus_bytes_per_s: read,
        chaser_bytes_per_s: chased,
        total_bytes_per_s: (read + chased).max(f64::MIN_POSITIVE),
        valid: s.valid,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use memperf_model::outcome::loaded_latency::Bend;

    /// On a fake H200 whose latency rises with the share of its 4 TB/s the
    /// readers take (650 cycles idle, ×2.5 at the full rate): the idle
    /// point and ten delays, the bend where latency leaves idle by 10%,
    /// Little's law at the top, every chase on its cycle, and the buffers
    /// given back.
    #[test]
    fn the_fakes_curve_bends_where_its_latency_leaves_idle() {
        let gpu = crate::gpu::fake::FakeGpu::h200();
        gpu.use_device(0).unwrap();
        gpu.load_kernels(9, 0).unwrap();
        let plan = Plan { chain_bytes: 1 << 20, array_bytes: 2 << 20, rounds: 2, seed: 9 };
        let c = crate::analysis::gpu_latency::curve(0, measure(&gpu, 132, 1.98, &plan).unwrap());
        assert_eq!(gpu.live_allocations(), 0);
        assert_eq!(c.points.len(), 11);
        assert!(c.points.iter().all(|p| p.valid), "{c:?}");
        let idle = &c.points[0];
        assert_eq!(idle.delay_ns, None);
        assert!((idle.latency_ns.median / (650.0 / 1.98) - 1.0).abs() < 1e-6, "{idle:?}");
        let top = c.points.iter().map(|p| p.loader_bytes_per_s.median).fold(0.0, f64::max);
        assert!((top / 4e12 - 1.0).abs() < 1e-9, "{top}");
        let Bend::Found { bytes_per_s, .. } = c.bend else { panic!("{:?}", c.bend) };
        // The 1,024-cycle delay: 131 × 1,024 threads, a read each 1,424 cycles.
        let want = 131.0 * 1024.0 * 8.0 * 1.98e9 / 1424.0;
        assert!((bytes_per_s / want - 1.0).abs() < 1e-3, "{bytes_per_s} {want}");
        let lines = c.lines_per_sm.unwrap();
        assert!((lines / (4e12 * (1625.0 / 1.98) * 1e-9 / 128.0 / 131.0) - 1.0).abs() < 1e-3, "{lines}");
    }
}
