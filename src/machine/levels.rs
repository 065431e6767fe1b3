//! The cache levels as this machine behaves, measured in about a second: a
//! random dependent chase over working sets doubling from 16 KiB, on THP
//! where the kernel offers it, pinned to one CPU. Each set is one random
//! cycle over all its lines, walked once untimed (the whole cycle while it
//! is small, [`WARM_CAP_LOADS`] loads past that), then timed in three short
//! samples whose ends are checked against the cycle. The analysis
//! ([`crate::analysis::levels::find`]) names where the last cache ends; the
//! arrays meant to reach memory are sized from it, not from CPUID's claims.

use crate::analysis::levels::{self, CacheLevelsFound};
use crate::error::Result;
use crate::kernels::chase::{chase_kernel, visit_order, Chase};
use crate::kernels::{pattern_sum, pattern_value};
use crate::memory::{Buffer, PagePolicy};
use crate::timing::Clock;
use crate::units::{Bytes, KIB, MIB};
pub use memperf_model::machine::levels::{Doubling, DoublingKind, LevelPoint, MeasuredLevels, ReadRate};

/// Loads of the untimed walk before a large working set's samples: 2^20
/// lines (64 MiB) replace what a guest's share of a cache holds; a larger
/// real cache only moves its own knee, which the sweep confirms anyway.
pub const WARM_CAP_LOADS: u64 = 1 << 20;
/// The smallest working set of the sweep.
pub const FIRST: Bytes = Bytes(16 * KIB);
/// The sweep reaches at least this far (where the memory budget allows),
/// and ×8 the largest plausible claimed cache: past every cache a core
/// reaches, so the far level it ends in is memory (512 MiB verifies memory
/// from 64 MiB on; where it began on each machine: docs/validation.md,
/// "Figures behind constants").
pub const MIN_REACH: Bytes = Bytes(512 * MIB);
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

/// The analysis again, from the points and the later looks (for recordings).
pub fn reanalyse(m: &MeasuredLevels) -> CacheLevelsFound {
    judge(&m.points, &m.looks)
}

/// The working sets from [`FIRST`] doubling up to `reach`.
pub fn sweep(reach: Bytes) -> Vec<Bytes> {
    std::iter::successors(Some(FIRST), |s| Some(Bytes(s.0 * 2))).take_while(|s| s.0 <= reach.0).collect()
}

/// Measures the levels with working sets up to `reach`, on one CPU. The
/// sweep doubles until it is past `must_pass` (twice the largest cache
/// that is claimed plausibly) and the far level is confirmed and flat (its
/// last doubling changed latency by under 7%), then measures `reach`
/// itself, past any plausible cache. The points around the last knee are
/// then looked at again (see [`settle`]).
pub fn measure(clock: &dyn Clock, reach: Bytes, must_pass: Bytes, thp: bool) -> Result<MeasuredLevels> {
    let started = std::time::Instant::now();
    let _pin = crate::timing::team::PinGuard::first_cpu();
    let pages = if thp { PagePolicy::Thp } else { PagePolicy::Small };
    // Untouched: linking a working set faults in only the pages it uses,
    // so an early stop never pays for the rest.
    let mut region = Buffer::untouched(pages, reach.max(FIRST))?;
    let mut points = Vec::new();
    let mut valid = true;
    for size in sweep(reach) {
        let (point, ok) = measure_point(clock, &mut region, size);
        valid &= ok;
        points.push(point);
        if size.0 >= must_pass.0 && far_and_flat(&points) {
            break;
        }
    }
    if points.last().is_some_and(|p| p.size_bytes < reach) {
        let (point, ok) = measure_point(clock, &mut region, reach);
        valid &= ok;
        points.push(point);
    }
    let (found, looks, looked_ok) = settle(clock, &mut region, &points);
    valid &= looked_ok;
    region.read_back();
    let huge_fraction = region.backing().huge_fraction;
    let largest = points.last().map_or(FIRST, |p| p.size_bytes);
    // The chases are done with the region: it takes the checksum pattern.
    fill_pattern(&mut region, largest);
    let (read_rates, read_ok) = read_rates(clock, &region, found.far_from, largest);
    valid &= read_ok;
    let read_bytes_per_s = read_rates.last().map(|r| r.bytes_per_s);
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
        looks,
        read_rates,
        doublings: None,
    })
}

/// Looks a probe takes at most: the first sweep and three more.
pub const LOOKS: usize = 4;

/// Measures the points around the last knee again (from the last cache
/// level's end to the point before the largest) and finds the levels on
/// each point's median over the looks so far, until a look leaves that
/// finding where it was (two looks at least, [`LOOKS`] at most); returns
/// the finding ("unstable" when the last look still moved it) and the
/// later looks.
fn settle(
    clock: &dyn Clock,
    region: &mut Buffer,
    points: &[LevelPoint],
) -> (CacheLevelsFound, Vec<Vec<LevelPoint>>, bool) {
    let mut looks: Vec<Vec<LevelPoint>> = Vec::new();
    let mut ok = true;
    let first = levels::find(&curve(points));
    let Some(span) = look_span(&first, points) else { return (first, looks, ok) };
    while looks.len() + 1 < LOOKS && !agreeing(points, &looks) {
        let mut look = Vec::new();
        for p in &points[span.clone()] {
            let (point, fine) = measure_point(clock, region, p.size_bytes);
            ok &= fine;
            look.push(point);
        }
        looks.push(look);
    }
    (judge(points, &looks), looks, ok)
}

/// The points a later look measures again: from the last point of the
/// level before the far one to the point before the largest (which only
/// says that no cache hides past the rest).
fn look_span(first: &CacheLevelsFound, points: &[LevelPoint]) -> Option<std::ops::Range<usize>> {
    let near_end = first.last_cache_end.map(|e| e.0)?;
    let start = points.iter().position(|p| p.size_bytes >= near_end)?;
    let end = points.len().saturating_sub(1);
    (start < end).then_some(start..end)
}

/// The probe's curve with each point's median over the first sweep and
/// `looks`.
fn median_curve(points: &[LevelPoint], looks: &[Vec<LevelPoint>]) -> Vec<(f64, f64)> {
    points
        .iter()
        .map(|p| {
            let seen: Vec<f64> = std::iter::once(p.latency_ns.0)
                .chain(
                    looks
                        .iter()
                        .filter_map(|l| l.iter().find(|x| x.size_bytes == p.size_bytes))
                        .map(|x| x.latency_ns.0),
                )
                .collect();
            (p.size_bytes.0 as f64, crate::timing::stats::median(&seen).unwrap_or(p.latency_ns.0))
        })
        .collect()
}

/// What the median curve says after each look, the first sweep alone
/// first.
fn findings(points: &[LevelPoint], looks: &[Vec<LevelPoint>]) -> Vec<CacheLevelsFound> {
    (0..=looks.len()).map(|k| levels::find(&median_curve(points, &looks[..k]))).collect()
}

/// Two findings agree where both verify memory (each from a size of its
/// own: memory holds from the larger on, by both) or neither does, and
/// both confirm a far level or neither does: where a shared cache's last
/// share ends moves with a neighbour's use of it, from look to look.
fn same_place(a: &CacheLevelsFound, b: &CacheLevelsFound) -> bool {
    a.memory_from.is_some() == b.memory_from.is_some() && a.far_from.is_some() == b.far_from.is_some()
}

/// The last look left the finding where it was.
fn agreeing(points: &[LevelPoint], looks: &[Vec<LevelPoint>]) -> bool {
    matches!(findings(points, looks).as_slice(), [.., a, b] if same_place(a, b))
}

/// What the probe found from its looks: the median curve's finding when
/// the last look left it in place (or there was nothing to look at
/// again), with the later far level and the later start of memory of the
/// two; else nothing confirmed, "unstable", with where each look placed
/// memory.
pub fn judge(points: &[LevelPoint], looks: &[Vec<LevelPoint>]) -> CacheLevelsFound {
    let found = findings(points, looks);
    match found.as_slice() {
        [only] => only.clone(),
        [.., a, b] if same_place(a, b) => {
            // The whole finding with the later far level, so its levels and
            // far latency go with it; memory from the later start.
            let mut out = if a.far_from > b.far_from { a } else { b }.clone();
            out.memory_from = a.memory_from.max(b.memory_from);
            out
        }
        all => unstable(all),
    }
}

fn unstable(all: &[CacheLevelsFound]) -> CacheLevelsFound {
    let places: Vec<String> = all
        .iter()
        .map(|f| match (f.far_from, f.memory_from) {
            (Some(far), Some(mem)) => format!("far level from {far}, memory from {mem}"),
            (Some(far), None) => format!("far level from {far}, memory not verified"),
            _ => "no far level".into(),
        })
        .collect();
    let why = format!("unstable: the finding moved with every look ({})", places.join("; then "));
    let mut out = all[0].clone();
    // The levels stay (what the first sweep drew); nothing past them is
    // confirmed.
    out.last_cache_end = None;
    out.far_from = None;
    out.far_ns = None;
    out.memory_from = None;
    out.far_not_reached = Some(why.clone());
    out.memory_not_verified = Some(why);
    out
}

/// [`read_rate`] over the working sets from the far level's start (or
/// `largest` alone, without one) doubling to `largest`, and whether every
/// pass read the pattern it should (a size whose passes did not is left
/// out).
fn read_rates(clock: &dyn Clock, region: &Buffer, far_from: Option<Bytes>, largest: Bytes) -> (Vec<ReadRate>, bool) {
    let first = far_from.unwrap_or(largest);
    let mut ok = true;
    let rates = std::iter::successors(Some(first), |s| Some(Bytes(s.0 * 2)))
        .take_while(|s| s.0 <= largest.0)
        .filter_map(|size| {
            let (passes, read_ok) = read_passes(clock, region, size, 3);
            ok &= read_ok;
            let best = passes.into_iter().reduce(f64::max).filter(|_| read_ok)?;
            Some(ReadRate { size_bytes: size, bytes_per_s: best })
        })
        .collect();
    (rates, ok)
}

/// Writes the checksum pattern ([`pattern_value`]) into the first `bytes`
/// of the region, so that [`read_passes`] can check what each pass read.
pub fn fill_pattern(region: &mut Buffer, bytes: Bytes) {
    let words = &mut region.as_mut_slice::<f64>()[..(bytes.0 / 8) as usize];
    words.iter_mut().enumerate().for_each(|(i, w)| *w = pattern_value(i));
}

/// B/s of each of `passes` timed passes of `bandwidth`'s `simd` read
/// kernel over the first `bytes` of the region, after one untimed (which
/// brings the TLB and prefetchers up to speed), and whether every pass
/// summed to the pattern's closed form (the region holds it:
/// [`fill_pattern`]); the probe's read rates and the suite's drift
/// reference both read through here.
pub fn read_passes(clock: &dyn Clock, region: &Buffer, bytes: Bytes, passes: usize) -> (Vec<f64>, bool) {
    let Ok((simd, _)) = crate::kernels::stream_kernel(crate::kernels::StreamShape::Simd, None) else {
        return (Vec::new(), true);
    };
    let words = &region.as_slice::<f64>()[..(bytes.0 / 8) as usize];
    let arg = crate::kernels::StreamArg::read(words.as_ptr(), words.len(), 0);
    let want = pattern_sum(0, words.len());
    let mut ok = true;
    let rates = timed_passes(bytes.0 as f64, passes, || {
        let t0 = clock.now_ns();
        // SAFETY: `arg` views `words`, borrowed from the region for this call.
        let sum = unsafe { simd(1, &arg) };
        let ns = clock.now_ns().saturating_sub(t0);
        ok &= sum == want;
        ns
    });
    (rates, ok)
}

/// B/s of each of `passes` timed calls of `pass` (which moves `bytes` and
/// returns the ns it took), after one untimed; a pass the clock saw take
/// no time is left out.
pub fn timed_passes(bytes: f64, passes: usize, mut pass: impl FnMut() -> u64) -> Vec<f64> {
    pass();
    (0..passes).map(|_| pass()).filter(|&ns| ns > 0).map(|ns| bytes * 1e9 / ns as f64).collect()
}

/// The far level is confirmed and its last doubling changed latency by
/// under [`levels::MEMORY_FLAT`], at a latency only memory has: the sweep
/// may jump to its largest working set, which verifies memory there.
fn far_and_flat(points: &[LevelPoint]) -> bool {
    let flat = match points {
        [.., b, c] => {
            c.size_bytes.0 == 2 * b.size_bytes.0
                && b.latency_ns.0 >= levels::MEMORY_MIN_NS
                && (c.latency_ns.0 / b.latency_ns.0 - 1.0).abs() < levels::MEMORY_FLAT
        }
        _ => false,
    };
    flat && levels::find(&curve(points)).far_from.is_some()
}

fn curve(points: &[LevelPoint]) -> Vec<(f64, f64)> {
    points.iter().map(|p| (p.size_bytes.0 as f64, p.latency_ns.0)).collect()
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

    /// A read pass is checked against the pattern: a region holding it
    /// reads valid, one changed word does not, and the rate is exact on a
    /// clock that steps 1 ms a reading.
    #[test]
    fn read_passes_check_what_they_read() {
        let size = Bytes(MIB);
        let mut region = Buffer::new(PagePolicy::Small, size).unwrap();
        fill_pattern(&mut region, size);
        let clock = crate::timing::FakeClock::stepping(vec![1_000_000]);
        let (rates, ok) = read_passes(&clock, &region, size, 3);
        assert!(ok);
        assert_eq!(rates, vec![size.0 as f64 * 1e3; 3]);
        region.as_mut_slice::<f64>()[12_345] += 1.0;
        assert!(!read_passes(&clock, &region, size, 3).1, "a changed word reads invalid");
    }

    #[test]
    fn the_sweep_doubles_from_16_kib() {
        let s = sweep(Bytes(256 * KIB));
        assert_eq!(s, vec![Bytes(16 * KIB), Bytes(32 * KIB), Bytes(64 * KIB), Bytes(128 * KIB), Bytes(256 * KIB)]);
        assert_eq!(sweep(MIN_REACH).len(), 16);
    }

    fn points(curve: &[(u64, f64)]) -> Vec<LevelPoint> {
        curve
            .iter()
            .map(|&(mib, ns)| LevelPoint {
                size_bytes: Bytes(mib * MIB),
                latency_ns: crate::units::Nanos(ns),
                samples_ns: vec![ns],
            })
            .collect()
    }

    const SWEEP: [(u64, f64); 7] =
        [(4, 12.0), (8, 13.0), (16, 20.0), (32, 122.0), (64, 135.0), (128, 142.0), (1024, 153.0)];

    /// Looks that place memory at different sizes agree that it holds from
    /// the larger on; one that verifies no memory at all is a disagreement
    /// that a third look must settle, or the probe says "unstable".
    #[test]
    fn looks_agree_on_memory_or_the_probe_is_unstable() {
        let first = points(&SWEEP);
        let agree = vec![points(&[(8, 13.0), (16, 21.0), (32, 135.0), (64, 140.0), (128, 143.0)])];
        let f = judge(&first, &agree);
        assert!(f.memory_from.is_some() && f.far_from.is_some(), "{f:?}");
        assert!(f.memory_from >= Some(Bytes(64 * MIB)), "the later start of the two: {f:?}");
        // A look whose 64 and 128 MiB points climb 30%: no memory there.
        let climbing = |k: f64| points(&[(8, 13.0), (16, 20.0), (32, 60.0), (64, 80.0 * k), (128, 104.0 * k)]);
        let unsettled = vec![climbing(1.0), climbing(1.0)];
        let f = judge(&first, &unsettled);
        assert_eq!(f.memory_from, None, "{f:?}");
        let f = judge(&first, &[climbing(1.0), points(&SWEEP[..6])]);
        assert!(f.far_not_reached.unwrap().starts_with("unstable: the finding moved with every look"));
        assert_eq!(judge(&first, &[]), levels::find(&curve(&first)), "one look is its own finding");
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
