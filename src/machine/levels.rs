//! The cache levels as this machine behaves, measured in about a second:
//! a random dependent chase over working sets doubling from 16 KiB, on
//! transparent huge pages where the kernel offers them (so page walks stay
//! out of the near levels), pinned to one CPU. Each working set is one
//! random cycle over all its lines (prefetchers cannot follow it), walked
//! once untimed to warm the caches — the whole cycle while it is small,
//! [`WARM_CAP_LOADS`] loads past that — then timed in three short samples;
//! the end of every sample is checked against the cycle.
//!
//! The analysis ([`crate::analysis::levels::find`]) names where the last
//! cache ends and where memory begins; sizes that must reach memory are
//! taken from it, not from what CPUID claims.

use crate::analysis::levels::{self, CacheLevelsFound};
use crate::error::Result;
use crate::kernels::chase::{chase_kernel, visit_order, Chase};
use crate::memory::{Buffer, PagePolicy};
use crate::timing::Clock;
use crate::units::{Bytes, KIB, MIB};
pub use memperf_model::machine::levels::{LevelPoint, MeasuredLevels};

/// Loads of the untimed walk before a large working set's samples: 2^20
/// lines (64 MiB) replace what a guest's share of a cache holds; a larger
/// real cache only moves its own knee, which the sweep confirms anyway.
pub const WARM_CAP_LOADS: u64 = 1 << 20;
/// The smallest working set of the sweep.
pub const FIRST: Bytes = Bytes(16 * KIB);
/// The sweep reaches at least this far.
pub const MIN_REACH: Bytes = Bytes(256 * MIB);
/// Timed samples per working set, and their length.
const SAMPLES: usize = 3;
const SAMPLE_S: f64 = 0.002;
const LINE: usize = 64;

/// The regions timed for the fault rates.
pub const FAULT_PROBE: Bytes = Bytes(32 * MIB);

/// B/s `Buffer::new` maps and touches [`FAULT_PROBE`] at, per policy.
fn fault_rate(pages: PagePolicy) -> Option<f64> {
    let t0 = std::time::Instant::now();
    let r = Buffer::new(pages, FAULT_PROBE).ok()?;
    let s = t0.elapsed().as_secs_f64();
    drop(r);
    (s > 0.0).then(|| FAULT_PROBE.0 as f64 / s)
}

/// The analysis again, from the points (for recordings).
pub fn reanalyse(m: &MeasuredLevels) -> CacheLevelsFound {
    levels::find(&curve(&m.points))
}

/// The working sets from [`FIRST`] doubling up to `reach`.
pub fn sweep(reach: Bytes) -> Vec<Bytes> {
    std::iter::successors(Some(FIRST), |s| Some(Bytes(s.0 * 2))).take_while(|s| s.0 <= reach.0).collect()
}

/// Measures the levels with working sets up to `reach`, on one CPU. The
/// sweep stops early once it is past `must_pass` (twice the largest cache
/// that is claimed plausibly) and the far level is confirmed and flat: its
/// last two points within [`FLAT`] of each other.
pub fn measure(clock: &dyn Clock, reach: Bytes, must_pass: Bytes, thp: bool) -> Result<MeasuredLevels> {
    let started = std::time::Instant::now();
    let _pin = crate::timing::team::PinGuard::first_cpu();
    let pages = if thp { PagePolicy::Thp } else { PagePolicy::Small };
    let sizes = sweep(reach);
    let largest = *sizes.last().unwrap_or(&FIRST);
    // Untouched: linking a working set faults in only the pages it uses,
    // so an early stop never pays for the rest.
    let mut region = Buffer::untouched(pages, largest)?;
    let mut points = Vec::with_capacity(sizes.len());
    let mut valid = true;
    for size in sizes {
        let (point, ok) = measure_point(clock, &mut region, size);
        valid &= ok;
        points.push(point);
        if size.0 >= must_pass.0 && far_and_flat(&points) {
            break;
        }
    }
    region.read_back();
    let huge_fraction = region.backing().huge_fraction;
    let found = levels::find(&curve(&points));
    let read_bytes_per_s = read_rate(clock, &region, points.last().map_or(FIRST, |p| p.size_bytes));
    drop(region);
    let small = fault_rate(PagePolicy::Small);
    let huge = fault_rate(if thp { PagePolicy::Thp } else { pages });
    Ok(MeasuredLevels {
        pages,
        huge_fraction,
        read_bytes_per_s,
        fault_bytes_per_s: small.zip(huge),
        points,
        found,
        duration_s: started.elapsed().as_secs_f64(),
        valid,
    })
}

/// B/s of one pass of `bandwidth`'s `simd` read kernel over the first
/// `bytes` of the region (the second of two: the first brings the TLB and
/// prefetchers up to speed).
fn read_rate(clock: &dyn Clock, region: &Buffer, bytes: Bytes) -> Option<f64> {
    let (simd, _) = crate::kernels::stream_kernel(crate::kernels::StreamShape::Simd, None).ok()?;
    let words = &region.as_slice::<f64>()[..(bytes.0 / 8) as usize];
    let arg = crate::kernels::StreamArg::read(words.as_ptr(), words.len(), 0);
    let mut ns = 0;
    for _ in 0..2 {
        let t0 = clock.now_ns();
        // SAFETY: `arg` views `words`, borrowed from the region for this call.
        std::hint::black_box(unsafe { simd(1, &arg) });
        ns = clock.now_ns().saturating_sub(t0);
    }
    (ns > 0).then(|| bytes.0 as f64 * 1e9 / ns as f64)
}

/// The last two points may differ by this much for the far level to be flat.
pub const FLAT: f64 = 0.10;

fn curve(points: &[LevelPoint]) -> Vec<(f64, f64)> {
    points.iter().map(|p| (p.size_bytes.0 as f64, p.latency_ns.0)).collect()
}

/// The far level is confirmed and its last point agrees with one of the
/// two before it (one disturbed point does not hold the sweep up).
fn far_and_flat(points: &[LevelPoint]) -> bool {
    let near = |a: &LevelPoint, b: &LevelPoint| (b.latency_ns.0 / a.latency_ns.0 - 1.0).abs() <= FLAT;
    let flat = match points {
        [.., a, b, c] => near(b, c) || near(a, c),
        [.., b, c] => near(b, c),
        _ => false,
    };
    flat && levels::find(&curve(points)).far_from.is_some()
}

/// One working set: a random cycle over its lines, one untimed walk, three
/// timed samples; and whether every walk ended where the cycle says.
fn measure_point(clock: &dyn Clock, region: &mut Buffer, size: Bytes) -> (LevelPoint, bool) {
    let k1 = chase_kernel(1).expect("one chain");
    let lines = size.0 as usize / LINE;
    let base = region.as_mut_slice::<u8>().as_mut_ptr();
    // SAFETY: lines × 64 bytes ≤ the region's length; the region outlives
    // the chase (dropped at the end of this function).
    let mut chase = unsafe { Chase::new(base, visit_order(lines, None, 0x6c65_7665 ^ size.0), |s| s * LINE, 1) };
    let warm = (lines as u64).min(WARM_CAP_LOADS);
    let t0 = clock.now_ns();
    // SAFETY: the chase's memory is live and linked.
    let mut ok = unsafe { chase.run(k1, warm) };
    let ns_per_load = (clock.now_ns().saturating_sub(t0) as f64 / warm as f64).max(0.1);
    let loads = ((SAMPLE_S * 1e9 / ns_per_load) as u64).clamp(1000, 1 << 24);
    let mut samples = Vec::with_capacity(SAMPLES);
    for _ in 0..SAMPLES {
        let t0 = clock.now_ns();
        // SAFETY: as above.
        ok &= unsafe { chase.run(k1, loads) };
        samples.push(clock.now_ns().saturating_sub(t0) as f64 / loads as f64);
    }
    let latency_ns = crate::timing::stats::median(&samples).unwrap_or(f64::NAN);
    (LevelPoint { size_bytes: size, latency_ns: crate::units::Nanos(latency_ns), samples_ns: samples }, ok)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sweep_doubles_from_16_kib() {
        let s = sweep(Bytes(256 * KIB));
        assert_eq!(s, vec![Bytes(16 * KIB), Bytes(32 * KIB), Bytes(64 * KIB), Bytes(128 * KIB), Bytes(256 * KIB)]);
        assert_eq!(sweep(MIN_REACH).len(), 15);
    }

    #[test]
    fn a_small_probe_measures_valid_points_in_order() {
        let m = measure(&crate::timing::MonotonicClock::new(), Bytes(MIB), Bytes(MIB), false).unwrap();
        assert!(m.valid);
        assert_eq!(m.points.len(), 7);
        assert!(m.points.iter().all(|p| p.latency_ns.0 > 0.0 && p.samples_ns.len() == SAMPLES));
        assert_eq!(reanalyse(&m), m.found);
    }
}
