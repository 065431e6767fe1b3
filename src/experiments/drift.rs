//! The suite's reference, taken at its start, middle and end: one thread
//! on the first CPU reads a region sequentially (bandwidth's `simd`
//! kernel) and chases a random cycle through it. The region is sized to
//! be in memory where the probe verified that, and is held through the
//! run, so every point measures the same pages; what changes between the
//! points is the host. The document keeps the samples
//! ([`HostDrift`]); `compare` and
//! the advice read how far it moved.

use crate::kernels::chase::{chase_kernel, visit_order, Chase};
use crate::memory::{Buffer, PagePolicy};
use crate::timing::Clock;
use crate::units::{Bytes, GIB, MIB};
use memperf_model::timing::drift::{DriftPoint, HostDrift};

/// Timed read passes and chase samples per point.
const SAMPLES: usize = 5;
/// Loads per chase sample (tens of ms in memory) and before the first.
const CHASE_LOADS: u64 = 1 << 17;
const WARM_LOADS: u64 = 1 << 18;
/// What the reference costs the suite, about: mapping and linking its
/// region, and three points.
pub const ESTIMATE_S: f64 = 1.0;

/// The region and its chase, held between points.
pub struct Reference {
    region: Buffer,
    chase: Chase,
    drift: HostDrift,
}

/// Where the reference reads: where the probe verified a read (else a
/// chase) to be in memory, else 4× the last-level cache; 64 MiB to 1 GiB,
/// within the memory budget.
pub fn size(m: &crate::machine::Fingerprint) -> Bytes {
    let verified = m.read_memory_from().or(m.chase_memory_from());
    let want = verified.map_or(4 * m.sizing_llc().0 .0, |b| b.0).clamp(64 * MIB, GIB);
    Bytes(want.min(super::budget::Budget::of(m).per_region(4).0).max(MIB))
}

impl Reference {
    /// Maps and links the region on THP (fewest walks; 4 KiB pages where the
    /// kernel has no THP), or `None` where memory cannot be had.
    pub fn new(m: &crate::machine::Fingerprint) -> Option<Reference> {
        let size = size(m);
        let thp = !matches!(m.thp.enabled.as_str(), "never" | "unavailable");
        let mut region = Buffer::new(if thp { PagePolicy::Thp } else { PagePolicy::Small }, size).ok()?;
        let lines = size.0 as usize / 64;
        let base = region.as_mut_slice::<u8>().as_mut_ptr();
        // SAFETY: lines × 64 bytes fit the region, which the Reference owns
        // as long as the chase.
        let chase = unsafe { Chase::new(base, visit_order(lines, None, 0x0064_7269_6674), |s| s * 64, 1) };
        Some(Reference { region, chase, drift: HostDrift { size_bytes: size, points: Vec::new() } })
    }

    /// One point, after `after_experiments` experiments; false where a
    /// chase did not end where its cycle says.
    pub fn measure(&mut self, clock: &dyn Clock, after_experiments: usize) -> bool {
        let _pin = crate::timing::team::PinGuard::first_cpu();
        let read_bytes_per_s = self.read(clock);
        let (chase_ns, ok) = self.chase(clock);
        self.drift.points.push(DriftPoint { after_experiments, read_bytes_per_s, chase_ns });
        ok
    }

    fn read(&self, clock: &dyn Clock) -> Vec<f64> {
        let Ok((simd, _)) = crate::kernels::stream_kernel(crate::kernels::StreamShape::Simd, None) else {
            return Vec::new();
        };
        let words = self.region.as_slice::<f64>();
        let arg = crate::kernels::StreamArg::read(words.as_ptr(), words.len(), 0);
        let bytes = (words.len() * 8) as f64;
        let mut out = Vec::with_capacity(SAMPLES);
        for pass in 0..=SAMPLES {
            let t0 = clock.now_ns();
            // SAFETY: `arg` views the region, owned by self for this call.
            std::hint::black_box(unsafe { simd(1, &arg) });
            let ns = clock.now_ns().saturating_sub(t0);
            if pass > 0 && ns > 0 {
                out.push(bytes * 1e9 / ns as f64);
            }
        }
        out
    }

    fn chase(&mut self, clock: &dyn Clock) -> (Vec<f64>, bool) {
        let k1 = chase_kernel(1).expect("one chain");
        // SAFETY: the chase's region lives in self.
        let mut ok = unsafe { self.chase.run(k1, WARM_LOADS) };
        let mut out = Vec::with_capacity(SAMPLES);
        for _ in 0..SAMPLES {
            let t0 = clock.now_ns();
            // SAFETY: as above.
            ok &= unsafe { self.chase.run(k1, CHASE_LOADS) };
            out.push(clock.now_ns().saturating_sub(t0) as f64 / CHASE_LOADS as f64);
        }
        (out, ok)
    }

    /// What the points measured.
    pub fn finish(self) -> HostDrift {
        self.drift
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Three points on a fake clock that steps 1 ms per reading: every
    /// sample is known in closed form, and the chase ends where it should.
    #[test]
    fn three_points_of_exact_figures() {
        let mut m = crate::machine::collect();
        m.measured_levels = None;
        let mut r = Reference::new(&m).expect("memory for the reference");
        let clock = crate::timing::FakeClock::stepping(vec![1_000_000]);
        for after in [0, 3, 6] {
            assert!(r.measure(&clock, after));
        }
        let d = r.finish();
        assert_eq!(d.size_bytes, size(&m));
        assert_eq!(d.points.iter().map(|p| p.after_experiments).collect::<Vec<_>>(), [0, 3, 6]);
        let bytes = d.size_bytes.0 as f64;
        assert!(d.points.iter().all(|p| p.read_bytes_per_s == vec![bytes * 1e9 / 1e6; SAMPLES]));
        assert!(d.points.iter().all(|p| p.chase_ns == vec![1e6 / CHASE_LOADS as f64; SAMPLES]));
        assert_eq!(d.moved(), Some((0.0, 0.0)));
    }
}
