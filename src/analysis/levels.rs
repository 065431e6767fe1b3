//! Where the caches of a machine end, from a latency curve alone. The curve
//! (a random chase, ns per load against working set) is split into levels
//! at its knees ([`super::knees`]). The last level is the "far" level —
//! memory, or whatever a set larger than every cache costs here, page walks
//! included — once confirmed: two points or more spanning ×4, each at least
//! [`FAR_OVER_NEAR`] times the level before it. The knee before it is where
//! the last cache ends for this process, which on a guest sharing its
//! host's L3 can be well below any size CPUID claims.

use super::knees::{self, Level};
use crate::units::Bytes;
pub use memperf_model::analysis::levels::CacheLevelsFound;

/// The far level costs at least this many times the level before it (a
/// cache level beyond another is typically ×2–×5; memory beyond the last
/// cache ×3–×20): smaller steps past the last big one are merged into it.
pub const FAR_OVER_NEAR: f64 = 2.0;
/// No memory answers a dependent load this fast: a far level cheaper than
/// this is a cache (a noisy probe can otherwise call a 42 ns level at 2 MiB
/// "memory"), and the far level is not confirmed.
pub const MEMORY_MIN_NS: f64 = 60.0;
/// Jumps between consecutive points smaller than this are no knee.
pub const MIN_KNEE: f64 = 1.3;
/// Inside memory, doubling a working set changes its latency by less than
/// this, on average from it to the end of the sweep. A cache level's end
/// changes it by ×1.3 to ×5 within a doubling or two (a ×1.5 step spread
/// over four doublings is still 11% each); page walks, which a guest whose
/// host maps it with small pages pays in two dimensions, add 3–6% per
/// doubling in memory.
pub const MEMORY_FLAT: f64 = memperf_model::machine::CHASE_FLAT;
/// … and its own next doubling by less than this: a working set the size
/// of the last cache still hits it now and then, one point's noise aside.
pub const MEMORY_STEP: f64 = 0.10;
/// Memory is verified only by a sweep reaching this many times the
/// working set it names: past any cache hiding beyond it.
pub const MEMORY_PAST: u64 = 8;

/// Finds the levels of `points` (working set in bytes, ns per load).
pub fn find(points: &[(f64, f64)]) -> CacheLevelsFound {
    let mut pts: Vec<(f64, f64)> = points.iter().copied().filter(|p| p.0 > 0.0 && p.1 > 0.0).collect();
    pts.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut levels = knees::levels(&pts, 6, MIN_KNEE);
    // Levels past the last big step are one far level: a step of less
    // than ×2 up there is noise or page walks, not another cache.
    while let [.., near, far] = levels.as_slice() {
        if far.value >= FAR_OVER_NEAR * near.value {
            break;
        }
        let merged = Level { from_x: near.from_x, to_x: far.to_x, value: far.value };
        levels.truncate(levels.len() - 2);
        levels.push(merged);
    }
    let mut out = CacheLevelsFound {
        levels,
        last_cache_end: None,
        far_from: None,
        far_ns: None,
        far_not_reached: None,
        memory_from: None,
        memory_not_verified: None,
    };
    let n = out.levels.len();
    if n < 2 {
        out.far_not_reached = Some("the curve has no knee: every working set cost about the same".into());
        return out;
    }
    let (near, far) = (&out.levels[n - 2], &out.levels[n - 1]);
    let far_points = pts.iter().filter(|p| p.0 >= far.from_x && p.0 <= far.to_x).count();
    if far_points < 2 || far.to_x < 4.0 * far.from_x {
        out.far_not_reached = Some(format!(
            "the sweep ends at {} before the last level is confirmed (it needs two points over ×4)",
            Bytes(far.to_x as u64)
        ));
    } else if far.value < MEMORY_MIN_NS {
        out.far_not_reached = Some(format!(
            "the last level found ({:.0} ns from {}) is faster than any memory (under {MEMORY_MIN_NS:.0} ns): \
             a cache, so the sweep did not reach memory",
            far.value,
            Bytes(far.from_x as u64)
        ));
    } else {
        out.far_from = Some(Bytes(far.from_x as u64));
        out.far_ns = Some(crate::units::Nanos(far.value));
        out.last_cache_end = Some((Bytes(near.to_x as u64), Bytes(far.from_x as u64)));
        match memory_from(&pts, far) {
            Ok(b) => out.memory_from = Some(b),
            Err(why) => out.memory_not_verified = Some(why),
        }
    }
    if out.far_from.is_none() {
        out.memory_not_verified = out.far_not_reached.clone();
    }
    out
}

/// The first point of the far level, at [`MEMORY_MIN_NS`] or more, whose
/// next doubling changes latency by under [`MEMORY_STEP`] and whose
/// doublings to the sweep's end by under [`MEMORY_FLAT`] each on average,
/// the sweep reaching [`MEMORY_PAST`] times it inside the same level; else
/// why not.
fn memory_from(pts: &[(f64, f64)], far: &Level) -> Result<Bytes, String> {
    let inside: Vec<&(f64, f64)> = pts.iter().filter(|p| p.0 >= far.from_x && p.0 <= far.to_x).collect();
    let Some(&&last) = inside.last() else { return Err("the far level has no points".into()) };
    let per_doubling = |p: &(f64, f64)| (last.1 / p.1).abs().powf(1.0 / (last.0 / p.0).log2()) - 1.0;
    let flat = inside.windows(2).find(|w| {
        w[1].0 == 2.0 * w[0].0
            && w[0].1 >= MEMORY_MIN_NS
            && (w[1].1 / w[0].1 - 1.0).abs() < MEMORY_STEP
            && per_doubling(w[0]).abs() < MEMORY_FLAT
    });
    let Some(w) = flat else {
        return Err(format!(
            "from {} to {} latency changes by {:.0}% or more per doubling",
            Bytes(far.from_x as u64),
            Bytes(far.to_x as u64),
            MEMORY_FLAT * 100.0
        ));
    };
    let from = w[0].0;
    if far.to_x < MEMORY_PAST as f64 * from {
        return Err(format!(
            "latency is flat from {} but the sweep ends at {}, short of ×{MEMORY_PAST} past it",
            Bytes(from as u64),
            Bytes(far.to_x as u64)
        ));
    }
    Ok(Bytes(from as u64))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::{KIB, MIB};

    /// The Zen 4 recording's 4 KiB curve (its quick suite): L1 to
    /// 32 KiB, L2 to 512 KiB, an L3 share to 8 MiB, memory from 16 MiB —
    /// although CPUID claims 32 MiB of L3.
    fn zen4() -> Vec<(f64, f64)> {
        [
            (4.0, 1.1),
            (8.0, 1.1),
            (16.0, 1.1),
            (32.0, 1.2),
            (64.0, 3.9),
            (128.0, 3.9),
            (256.0, 3.9),
            (512.0, 5.3),
            (1024.0, 8.4),
            (2048.0, 13.3),
            (4096.0, 16.4),
            (8192.0, 20.7),
            (16384.0, 130.0),
            (32768.0, 153.0),
            (65536.0, 182.4),
            (131072.0, 193.8),
        ]
        .iter()
        .map(|&(k, ns)| (k * KIB as f64, ns))
        .collect()
    }

    #[test]
    fn the_last_cache_ends_where_the_curve_says_not_where_cpuid_says() {
        let f = find(&zen4());
        assert_eq!(f.last_cache_end, Some((Bytes(8 * MIB), Bytes(16 * MIB))));
        assert_eq!(f.far_from, Some(Bytes(16 * MIB)));
        assert_eq!(f.far_ns, Some(crate::units::Nanos(193.8)));
        assert!(f.far_not_reached.is_none());
    }

    /// A far level under 60 ns is a cache, whatever its knee: a run once
    /// called 42 ns "memory" from 2 MiB.
    #[test]
    fn no_level_under_sixty_ns_is_memory() {
        let cache_only: Vec<(f64, f64)> = zen4()
            .into_iter()
            .take(8)
            .chain([
                (1024.0 * KIB as f64, 42.0),
                (2048.0 * KIB as f64, 42.5),
                (4096.0 * KIB as f64, 43.0),
                (8192.0 * KIB as f64, 42.0),
            ])
            .collect();
        let f = find(&cache_only);
        assert_eq!(f.far_from, None, "{f:?}");
        assert!(f.far_not_reached.as_deref().unwrap_or("").contains("faster than any memory"), "{f:?}");
        assert_eq!(find(&zen4()).far_ns, Some(crate::units::Nanos(193.8)), "real memory stays memory");
    }

    #[test]
    fn a_sweep_that_stops_at_the_knee_confirms_nothing() {
        let cut: Vec<(f64, f64)> = zen4().into_iter().take(13).collect();
        let f = find(&cut);
        assert_eq!(f.far_from, None);
        assert!(f.far_not_reached.unwrap().contains("before the last level is confirmed"));
        let flat: Vec<(f64, f64)> = (0..8).map(|i| ((4096u64 << i) as f64, 1.2)).collect();
        assert!(find(&flat).far_not_reached.unwrap().contains("no knee"));
    }

    #[test]
    fn a_small_last_step_is_no_far_level() {
        // Ends on an L2 → L3 step (×1.5): one level, no far level.
        let pts: Vec<(f64, f64)> = (0..10).map(|i| ((16384u64 << i) as f64, if i < 5 { 4.0 } else { 6.0 })).collect();
        assert!(find(&pts).far_not_reached.unwrap().contains("no knee"));
    }

    /// A probe on THP whose host maps the guest with small pages, so walks
    /// add a few per cent per doubling:
    /// memory is verified from 64 MiB, not from 32 MiB, where the L3 still
    /// answered a tenth of the loads.
    fn zen5_probe() -> Vec<(f64, f64)> {
        [
            (4096.0, 12.2),
            (8192.0, 13.0),
            (16384.0, 18.2),
            (32768.0, 122.1),
            (65536.0, 135.4),
            (131072.0, 142.0),
            (1048576.0, 152.8),
        ]
        .iter()
        .map(|&(k, ns)| (k * KIB as f64, ns))
        .collect()
    }

    #[test]
    fn memory_is_where_doubling_stops_changing_latency() {
        let f = find(&zen5_probe());
        assert_eq!(f.far_from, Some(Bytes(32 * MIB)));
        assert_eq!(f.memory_from, Some(Bytes(64 * MIB)), "{f:?}");
        // Without the point ×8 past it, nothing says no cache hides there.
        let short: Vec<(f64, f64)> = zen5_probe().into_iter().take(6).collect();
        let f = find(&short);
        assert_eq!(f.memory_from, None);
        assert!(f.memory_not_verified.unwrap().contains("short of ×8"));
        // A curve still climbing 10% per doubling is not memory yet.
        let climbing: Vec<(f64, f64)> =
            (0..8).map(|i| (((16 * MIB) << i) as f64, if i == 0 { 20.0 } else { 100.0 * 1.1f64.powi(i) })).collect();
        let f = find(&climbing);
        assert!(f.far_from.is_some() && f.memory_from.is_none(), "{f:?}");
    }

    /// A probe's curve: one disturbed point (250.7 ns at 64 MiB)
    /// made a ×1.6 knee inside the far level, which is no cache.
    #[test]
    fn a_spike_inside_the_far_level_is_no_level() {
        let pts: Vec<(f64, f64)> = [
            (16.0, 2.0),
            (32.0, 2.9),
            (64.0, 4.2),
            (128.0, 4.0),
            (256.0, 4.4),
            (512.0, 6.4),
            (1024.0, 13.9),
            (2048.0, 14.6),
            (4096.0, 17.4),
            (8192.0, 151.0),
            (16384.0, 157.7),
            (32768.0, 156.8),
            (65536.0, 250.7),
            (131072.0, 174.8),
            (262144.0, 175.1),
        ]
        .iter()
        .map(|&(k, ns)| (k * KIB as f64, ns))
        .collect();
        let f = find(&pts);
        assert_eq!(f.far_from, Some(Bytes(8 * MIB)), "{f:?}");
        assert_eq!(f.last_cache_end, Some((Bytes(4 * MIB), Bytes(8 * MIB))));
    }
}
