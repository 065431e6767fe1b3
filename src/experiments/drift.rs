//! The suite's host reference, taken at its start, after every third
//! experiment and at its end, so a move of the host is placed in time:
//! one thread's sequential read and random chase, every CPU reading at
//! once, the chase again on 4 KiB pages (page walks), a call chain (a
//! core's own work) and a system call (the kernel's entry and exit). Each
//! read and chase is checked against its closed form or cycle. The region
//! is the same every run on a machine ([`size`]) and mapped anew for each
//! point, never held while an experiment runs. The document keeps the
//! samples ([`HostDrift`]); reports say how far the host moved across the
//! run and each experiment, `compare` how far between two runs.

use crate::kernels::calls::{self, ChainFn, SharedChain};
use crate::kernels::chase::{chase_kernel, visit_order, Chase, Cycle};
use crate::kernels::{pattern_sum, stream_kernel, StreamArg, StreamShape};
use crate::memory::{Buffer, PagePolicy};
use crate::timing::{Clock, Team};
use crate::units::{Bytes, GIB, MIB};
use memperf_model::timing::drift::{DriftPoint, HostDrift};

/// Timed read passes and chase samples per point.
const SAMPLES: usize = 5;
/// Loads per chase sample (tens of ms in memory) and before the first.
const CHASE_LOADS: u64 = 1 << 17;
const WARM_LOADS: u64 = 1 << 18;
/// Chains per call sample (×4096 calls: about 5 ms at 5 ns a call).
const CALL_CHAINS: u64 = 256;
const CALL_DEPTH: u64 = 4096;
/// System calls per sample (about 3 ms at 140 ns a call).
const SYSCALLS: u64 = 20_000;
/// Experiments between two points of the reference.
pub const EVERY: usize = 3;

/// Points a suite of `jobs` experiments takes: its start, after every
/// [`EVERY`] experiments short of the last, and its end.
pub fn points(jobs: usize) -> usize {
    2 + jobs.saturating_sub(1) / EVERY
}

/// Whether a point follows experiment `done` (1-based) of `jobs`.
pub fn point_after(done: usize, jobs: usize) -> bool {
    done < jobs && done.is_multiple_of(EVERY)
}

/// The points so far, and the machine they size their region from.
pub struct Reference {
    size: Bytes,
    thp: bool,
    /// The CPUs the process may use when the suite starts (each point pins
    /// its own thread to the first, so they are read once, here).
    cpus: Vec<usize>,
    /// The call chain, loaded once, or why not (a temporary directory
    /// that refuses executable files): the points then have no calls.
    calls: std::result::Result<SharedChain, crate::error::Error>,
    /// The chases' cycle through the region's lines, built at the first
    /// point and linked into every region after it.
    cycle: Option<Cycle>,
    drift: HostDrift,
}

/// What became of one point.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Point {
    Taken,
    /// Its region could not be mapped (memory short): no point.
    Unmapped,
    /// A read pass summed to something else than the region holds, or a
    /// chase ended elsewhere than its cycle says: not recorded.
    Invalid,
    /// The memory figures held, the call chain returned a wrong sum: the
    /// point is recorded without calls.
    CallsInvalid,
    /// The memory figures held, the chase on 4 KiB pages ended elsewhere
    /// than its cycle says: the point is recorded without it.
    WalksInvalid,
}

/// Where the reference reads: ×8 the claimed last-level cache (all its
/// instances) where that claim is plausible, else ×8 the assumed one; 256
/// MiB to 1 GiB, within the memory budget (rounded down to a power of two,
/// so a few MiB more or less available moves nothing). From the claims alone, never
/// from the probe (which moves from run to run with the neighbours): the
/// same region on the same machine every run, so `compare` can set two
/// runs' references side by side. Past the claimed cache (up to the 1 GiB
/// cap: a part whose caches add up to more keeps part of it cached), so
/// one thread reads memory on the machines met so far.
pub fn size(m: &crate::machine::Fingerprint) -> Bytes {
    let want = (8 * m.claimed_llc_or_assumed().0).clamp(256 * MIB, GIB);
    // The budget moves with MemAvailable: where it binds, a power of two
    // under it keeps the region the same from run to run.
    let cap = super::budget::Budget::of(m).per_region(4).pow2_floor();
    Bytes(want.min(cap.0).max(MIB))
}

impl Reference {
    /// The reference of a suite on `m`.
    pub fn new(m: &crate::machine::Fingerprint) -> Reference {
        Reference::of_size(m, size(m))
    }

    /// A reference over a region of `size` (the suite's is [`size`]; the
    /// tests take a smaller one, whose figures are as exact on a fake clock
    /// and which an emulated CPU reads in a fraction of the time).
    fn of_size(m: &crate::machine::Fingerprint, size: Bytes) -> Reference {
        let thp = m.thp.usable();
        let cpus = crate::timing::team::allowed_cpus();
        let all_threads = (cpus.len() > 1).then_some(cpus.len());
        let calls = SharedChain::load_reference();
        let drift = HostDrift { size_bytes: size, all_threads, points: Vec::new() };
        Reference { size, thp, cpus, calls, cycle: None, drift }
    }

    /// Maps the region on THP (fewest walks; 4 KiB pages where the kernel
    /// has no THP), or `None` where memory cannot be had.
    fn map(&self) -> Option<Buffer> {
        Buffer::new(if self.thp { PagePolicy::Thp } else { PagePolicy::Small }, self.size).ok()
    }

    /// One point, after `after_experiments` experiments: the region filled
    /// with the checksum pattern and read (one thread, then every CPU),
    /// then linked into a cycle and chased, then the same chase over a
    /// region of 4 KiB pages, then the PLT call chain run, then the system
    /// call.
    /// Recorded only where every pass read the pattern and every chase
    /// ended where its cycle says; a chain that returned a wrong sum
    /// leaves the point's memory figures without calls (`CallsInvalid`).
    pub fn measure(&mut self, clock: &dyn Clock, after_experiments: usize) -> Point {
        let _pin = crate::timing::team::PinGuard::first_cpu();
        let Some(mut region) = self.map() else { return Point::Unmapped };
        crate::machine::levels::fill_pattern(&mut region, self.size);
        let (read_bytes_per_s, read_ok) = crate::machine::levels::read_passes(clock, &region, self.size, SAMPLES);
        let (all_read_bytes_per_s, all_ok) = if self.cpus.len() > 1 {
            all_read_passes(clock, &region, self.size, &self.cpus)
        } else {
            (Vec::new(), true)
        };
        let cycle = self.cycle.take().unwrap_or_else(|| cycle_of(self.size));
        let (chase_ns, chased_ok) = chase(&mut region, &cycle, clock);
        drop(region);
        let walks = (read_ok && all_ok && chased_ok).then(|| self.chase_4k(clock, &cycle));
        self.cycle = Some(cycle);
        let Some((chase_4k_ns, chase_4k_pages_per_block, walked_ok)) = walks else { return Point::Invalid };
        let (call_ns, called_ok) = self.calls.as_ref().map_or((Vec::new(), true), |c| call_samples(c.first, clock));
        let call_ns = if called_ok { call_ns } else { Vec::new() };
        let syscall_ns = syscall_samples(clock);
        let point = DriftPoint {
            after_experiments,
            read_bytes_per_s,
            chase_ns,
            all_read_bytes_per_s,
            call_ns,
            syscall_ns,
            chase_4k_ns,
            chase_4k_pages_per_block,
        };
        self.drift.points.push(point);
        match (called_ok, walked_ok) {
            (true, true) => Point::Taken,
            (false, _) => Point::CallsInvalid,
            (true, false) => Point::WalksInvalid,
        }
    }

    /// The same chase over a region of the same size on 4 KiB pages,
    /// mapped once the THP region is gone (the point never holds both):
    /// none where the reference's own region is on 4 KiB pages already,
    /// where memory for it cannot be had, or where the chase ended off its
    /// cycle (`false`: the point keeps its other figures and says so).
    fn chase_4k(&self, clock: &dyn Clock, cycle: &Cycle) -> (Vec<f64>, Option<f64>, bool) {
        if !self.thp {
            return (Vec::new(), None, true);
        }
        match Buffer::new(PagePolicy::Small, self.size) {
            Ok(mut region) => {
                let per_block = region.backing().pages_per_2mib_block;
                match chase(&mut region, cycle, clock) {
                    (ns, true) => (ns, per_block, true),
                    _ => (Vec::new(), None, false),
                }
            }
            Err(_) => (Vec::new(), None, true),
        }
    }

    /// Why the reference has no call chain, where it has none.
    pub fn calls_unavailable(&self) -> Option<&crate::error::Error> {
        self.calls.as_ref().err()
    }

    /// What the points measured.
    pub fn finish(self) -> HostDrift {
        self.drift
    }
}

/// B/s of each timed pass of one thread on each of `cpus` reading their
/// equal shares of the region at once (one untimed pass first), and
/// whether each thread read its share of the pattern; none where no team
/// can be had.
fn all_read_passes(clock: &dyn Clock, region: &Buffer, size: Bytes, cpus: &[usize]) -> (Vec<f64>, bool) {
    let (Ok(team), Ok((simd, _))) = (Team::on(cpus.to_vec()), stream_kernel(StreamShape::Simd, None)) else {
        return (Vec::new(), true);
    };
    let threads = cpus.len();
    let words = &region.as_slice::<f64>()[..(size.0 / 8) as usize];
    let share = words.len() / threads;
    let args: Vec<StreamArg> = words.chunks_exact(share).map(|w| StreamArg::read(w.as_ptr(), share, 0)).collect();
    let mut ok = true;
    let rates = crate::machine::levels::timed_passes((share * threads * 8) as f64, SAMPLES, || {
        // SAFETY: each argument views its share of `words`, borrowed from
        // the region for this run.
        let run = team.run(clock, |t| unsafe { simd(1, &args[t]) });
        ok &= run.results.iter().enumerate().all(|(t, &sum)| sum == pattern_sum(t * share, share));
        run.elapsed_ns
    });
    (rates, ok)
}

/// The reference's random cycle through every line of a region of `size`.
fn cycle_of(size: Bytes) -> Cycle {
    Cycle::of(visit_order(size.0 as usize / 64, None, 0x0064_7269_6674)).expect("a visit order is a permutation")
}

/// ns per load of each timed sample of `cycle` through the region's lines
/// (after an untimed walk), and whether every walk ended where the cycle
/// says.
fn chase(region: &mut Buffer, cycle: &Cycle, clock: &dyn Clock) -> (Vec<f64>, bool) {
    let k1 = chase_kernel(1).expect("one chain");
    let base = region.as_mut_slice::<u8>().as_mut_ptr();
    // SAFETY: the cycle's lines × 64 bytes fit the region (both of the
    // reference's size), which outlives the chase (dropped at the end of
    // this function).
    let mut chase = unsafe { Chase::of_cycle(base, cycle, |s| s * 64, 1) };
    // SAFETY: the chase's region is alive (borrowed for this call).
    let mut ok = unsafe { chase.run(k1, WARM_LOADS) };
    let mut out = Vec::with_capacity(SAMPLES);
    for _ in 0..SAMPLES {
        let t0 = clock.now_ns();
        // SAFETY: as above.
        ok &= unsafe { chase.run(k1, CHASE_LOADS) };
        out.push(clock.now_ns().saturating_sub(t0) as f64 / CHASE_LOADS as f64);
    }
    (out, ok)
}

/// ns per call of each timed sample of the PLT chain (after one untimed),
/// and whether every chain returned its depth.
fn call_samples(first: ChainFn, clock: &dyn Clock) -> (Vec<f64>, bool) {
    let calls_per_sample = CALL_CHAINS * CALL_DEPTH;
    // SAFETY: a chain entry of kernels::calls; 4096 frames of at most 64
    // bytes fit any thread's stack memperf runs on.
    per_op_samples(
        clock,
        calls_per_sample,
        || unsafe { calls::run(first, CALL_DEPTH, CALL_CHAINS) } == calls_per_sample as i64,
    )
}

/// ns per system call of each timed sample of a loop reading the signal
/// mask (after one untimed sample); none where the kernel refused a call
/// (it never does on Linux).
fn syscall_samples(clock: &dyn Clock) -> Vec<f64> {
    let (ns, ok) = per_op_samples(clock, SYSCALLS, || (0..SYSCALLS).all(|_| read_signal_mask()));
    if ok {
        ns
    } else {
        Vec::new()
    }
}

/// ns per operation of each of [`SAMPLES`] timed runs of `run` (`ops`
/// operations each), after one untimed run; and whether every run said it
/// went right. The clock is read only around each run.
fn per_op_samples(clock: &dyn Clock, ops: u64, mut run: impl FnMut() -> bool) -> (Vec<f64>, bool) {
    let mut ok = run();
    let mut out = Vec::with_capacity(SAMPLES);
    for _ in 0..SAMPLES {
        let t0 = clock.now_ns();
        ok &= run();
        out.push(clock.now_ns().saturating_sub(t0) as f64 / ops as f64);
    }
    (out, ok)
}

/// One `rt_sigprocmask` that changes nothing (no new set): whether the
/// kernel answered.
fn read_signal_mask() -> bool {
    let mut old = std::mem::MaybeUninit::<libc::sigset_t>::uninit();
    // SAFETY: a null new set only reads the mask into `old`, which is a
    // valid sigset_t to write; the thread's signals are left as they were.
    let rc = unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, std::ptr::null(), old.as_mut_ptr()) };
    std::hint::black_box(old);
    rc == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A suite of 13 experiments takes six points: its start, after the
    /// 3rd, 6th, 9th and 12th, and its end; one of a single experiment two.
    #[test]
    fn the_points_fall_every_third_experiment() {
        assert_eq!(points(13), 6);
        let after: Vec<usize> = (1..=13).filter(|&d| point_after(d, 13)).collect();
        assert_eq!(after, [3, 6, 9, 12]);
        assert_eq!((points(1), (1..=1).filter(|&d| point_after(d, 1)).count()), (2, 0));
        assert_eq!((points(3), (1..=3).filter(|&d| point_after(d, 3)).count()), (2, 0), "the end follows the 3rd");
    }

    /// The reference's region follows the claimed cache: ×8 a 32 MiB one
    /// is its 256 MiB floor, ×8 a 128 MiB one its 1 GiB cap.
    #[test]
    fn its_region_follows_the_claimed_cache() {
        let m = crate::test_support::claiming_l3(Bytes(64 * GIB), 32 * MIB, Vec::new());
        let big = crate::test_support::claiming_l3(Bytes(64 * GIB), 128 * MIB, Vec::new());
        assert_eq!((size(&m), size(&big)), (Bytes(256 * MIB), Bytes(GIB)));
    }

    /// Three points on a fake clock that steps 1 ms per reading: every
    /// sample is known in closed form, and the chase ends where it should.
    #[test]
    fn three_points_of_exact_figures() {
        const REGION: u64 = 12 * MIB;
        // 12 MiB: six 2 MiB blocks (THP where the kernel allows it), on any
        // machine; the suite's own size is its_region_follows_the_claimed_cache's.
        // Its 196,608 lines divide neither the warm-up's loads nor a
        // sample's, so each chase ends partway round its cycle, and one that
        // made the wrong number of loads ends elsewhere (at 8 MiB both ended
        // at the start, whatever they did).
        let m = crate::machine::collect();
        let lines = REGION / 64;
        assert!(!WARM_LOADS.is_multiple_of(lines) && !CHASE_LOADS.is_multiple_of(lines));
        let mut r = Reference::of_size(&m, Bytes(REGION));
        let clock = crate::timing::FakeClock::stepping(vec![1_000_000]);
        for after in [0, 3, 6] {
            assert_eq!(r.measure(&clock, after), Point::Taken);
        }
        let (r_calls, r_thp) = (r.calls_unavailable().is_none(), r.thp);
        let d = r.finish();
        assert_eq!(d.size_bytes, Bytes(REGION));
        assert_eq!(d.points.iter().map(|p| p.after_experiments).collect::<Vec<_>>(), [0, 3, 6]);
        let bytes = d.size_bytes.0 as f64;
        assert!(d.points.iter().all(|p| p.read_bytes_per_s == vec![bytes * 1e9 / 1e6; SAMPLES]));
        assert!(d.points.iter().all(|p| p.chase_ns == vec![1e6 / CHASE_LOADS as f64; SAMPLES]));
        // The chase again on 4 KiB pages, where the region above is on THP
        // (its own chase is on 4 KiB pages where THP is off).
        let walks = if r_thp { vec![1e6 / CHASE_LOADS as f64; SAMPLES] } else { Vec::new() };
        assert!(d.points.iter().all(|p| p.chase_4k_ns == walks), "{:?}", d.points[0].chase_4k_ns);
        // The call chain, where the temporary directory allows loading it
        // (its own tests in kernels::calls fail where it does not).
        let per_call = 1e6 / (CALL_CHAINS * CALL_DEPTH) as f64;
        let calls = if r_calls { vec![per_call; SAMPLES] } else { Vec::new() };
        assert!(d.points.iter().all(|p| p.call_ns == calls), "{:?}", d.points[0].call_ns);
        // The system call's samples: the clock is read once before and once
        // after each.
        let per_syscall = 1e6 / SYSCALLS as f64;
        assert!(d.points.iter().all(|p| p.syscall_ns == vec![per_syscall; SAMPLES]), "{:?}", d.points[0].syscall_ns);
        assert_eq!(d.moved(), Some((Some(0.0), Some(0.0))));
        // Every CPU this process may use reads at once, where it has two or
        // more (the threads share the stepping clock: positive, not exact).
        let cpus = crate::timing::team::allowed_cpus().len();
        assert_eq!(d.all_threads, (cpus > 1).then_some(cpus));
        let passes = if cpus > 1 { SAMPLES } else { 0 };
        assert!(d.points.iter().all(|p| p.all_read_bytes_per_s.len() == passes), "{:?}", d.points);
        assert!(d.points.iter().flat_map(|p| &p.all_read_bytes_per_s).all(|b| b.is_finite() && *b > 0.0));
    }

    /// Every CPU reading checks its own share of the pattern: a word
    /// changed in the last share reads invalid.
    #[test]
    fn every_cpu_reading_checks_its_share() {
        let size = Bytes(4 * MIB);
        let mut region = Buffer::new(PagePolicy::Small, size).unwrap();
        crate::machine::levels::fill_pattern(&mut region, size);
        let clock = crate::timing::FakeClock::stepping(vec![1_000_000]);
        let cpus = crate::timing::team::allowed_cpus();
        let (rates, ok) = all_read_passes(&clock, &region, size, &cpus);
        assert!(ok && rates.len() == SAMPLES, "{rates:?}");
        // The last word the shares cover (a tail of fewer words than CPUs
        // is read by none).
        let share = region.as_slice::<f64>().len() / cpus.len();
        region.as_mut_slice::<f64>()[share * cpus.len() - 1] = -1.0;
        assert!(!all_read_passes(&clock, &region, size, &cpus).1, "a changed word reads invalid");
    }
}
