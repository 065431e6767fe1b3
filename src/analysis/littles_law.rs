//! Little's law for memory: Bandwidth = Concurrency / Latency, so the
//! lines in flight a stream sustains are bandwidth × latency / line size
//! (McCalpin 2010: 6.08 GB/s × 74 ns ≈ 450 B ≈ 7 lines of 64 B).
//!
//! The latency must be the one the stream pays: without page walks (huge
//! pages: a sequential stream walks once per page, a random chase on 4 KiB
//! pages almost every load), and the bandwidth per thread (lines in flight
//! are a per-core resource). The figure counts demand and hardware-
//! prefetch lines together; the K-chain sweep of `latency`, which has no
//! prefetch, gives an independent bound on demand misses alone.

/// Lines in flight for one bandwidth figure and one latency figure.
pub fn lines_in_flight(bytes_per_s: f64, latency_ns: f64, line_bytes: u64) -> f64 {
    bytes_per_s * latency_ns * 1e-9 / line_bytes as f64
}

/// The most lines one core keeps in flight: the outstanding misses of the
/// largest L2 miss queue among the x86 cores memperf knows (their vendors'
/// figures are in docs/validation.md, "Figures behind constants"). A figure
/// above it is no concurrency: the latency or the bandwidth put into the
/// law is not the one it needs.
pub const CORE_LINES_MAX: f64 = 64.0;
/// … and among Intel's cores (Golden Cove's and Redwood Cove's L2 miss
/// queue: a guest's CPUID model does not say which core it runs on).
pub const INTEL_CORE_LINES_MAX: f64 = 48.0;

/// The most lines a core of `vendor` (CPUID's vendor string) keeps in
/// flight, by the largest L2 miss queue of that vendor's cores.
pub fn core_lines_max(vendor: &str) -> f64 {
    match vendor {
        "GenuineIntel" => INTEL_CORE_LINES_MAX,
        _ => CORE_LINES_MAX,
    }
}

/// Why `lines` in flight per thread cannot be claimed on a core that
/// tracks at most `limit`, if they cannot.
pub fn beyond_a_core(lines: f64, limit: f64) -> Option<String> {
    (!lines.is_finite() || lines > limit).then(|| {
        format!("{lines:.1} lines in flight is more than one core tracks (at most {limit:.0} outstanding misses on this vendor's cores)")
    })
}

/// Little's law for one loading core beside a chaser: its share of the
/// loaders' bus bytes × the latency the chaser measured at the same time
/// (the latency that core's misses meet in the same memory system) / 64 B,
/// or why it cannot be claimed (no traffic, or more lines than a core
/// tracks: then the chaser's random-chase latency is not the one the
/// loader's prefetched stream pays). `curves` and `loaded-latency` both
/// claim through here.
pub fn per_core(
    traffic_bus_bytes_per_s: f64,
    cores: usize,
    latency_ns: f64,
    limit: f64,
) -> (Option<f64>, Option<String>) {
    if cores == 0 || traffic_bus_bytes_per_s <= 0.0 {
        return (None, Some("no traffic at this point".into()));
    }
    let lines = lines_in_flight(traffic_bus_bytes_per_s / cores as f64, latency_ns, 64);
    match beyond_a_core(lines, limit) {
        Some(why) => (None, Some(why)),
        None => (Some(lines), None),
    }
}

/// Whether `speedup` with `chains` independent chases is more than
/// parallelism can give (K chains at most K times as many loads), beyond a
/// 5% allowance for noise: a sign that the one-chain reference paid for
/// something the K chains overlapped or avoided, not memory-level
/// parallelism.
pub fn super_linear(chains: usize, speedup: f64) -> bool {
    speedup > chains as f64 * 1.05
}

/// The chain count where the K-chain speed-up stops growing: the first K
/// whose speed-up is within `tolerance` of the best one, and only with a
/// larger K measured beyond it (a speed-up still rising at the largest K
/// tried has not stopped anywhere that was seen).
pub fn saturation(chains_speedup: &[(usize, f64)], tolerance: f64) -> Option<(usize, f64)> {
    let best = chains_speedup.iter().map(|c| c.1).filter(|s| s.is_finite()).fold(f64::NEG_INFINITY, f64::max);
    if !best.is_finite() {
        return None;
    }
    let mut sorted = chains_speedup.to_vec();
    sorted.sort_by_key(|c| c.0);
    let largest = sorted.last()?.0;
    sorted.into_iter().find(|c| c.1 >= best * (1.0 - tolerance)).filter(|c| c.0 < largest)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mccalpins_figures() {
        let n = lines_in_flight(6.08e9, 74.0, 64);
        assert!((n - 7.03).abs() < 0.01, "{n}");
    }

    #[test]
    fn saturation_is_the_first_chain_count_near_the_best() {
        let s = [(1, 1.0), (2, 1.9), (4, 3.6), (8, 6.1), (16, 6.2)];
        assert_eq!(saturation(&s, 0.05), Some((8, 6.1)));
        assert_eq!(saturation(&[], 0.05), None);
        // Still rising at the largest count tried (the Intel recording:
        // ×6.1 → ×12.2 at 8 chains): no saturation is seen.
        assert_eq!(saturation(&[(1, 1.0), (2, 1.9), (4, 6.1), (8, 12.2)], 0.05), None);
    }

    #[test]
    fn more_than_k_times_from_k_chains_is_super_linear() {
        assert!(super_linear(8, 12.23));
        assert!(!super_linear(8, 8.3));
        assert!(!super_linear(1, 1.0));
    }

    #[test]
    fn more_lines_than_a_core_tracks_are_not_claimed() {
        let amd = core_lines_max("AuthenticAMD");
        assert_eq!(beyond_a_core(7.0, amd), None);
        assert_eq!(beyond_a_core(64.0, amd), None);
        let why = beyond_a_core(66.3, amd).unwrap();
        assert!(why.contains("66.3 lines") && why.contains("64"), "{why}");
        assert!(beyond_a_core(f64::NAN, amd).is_some());
        // 53 lines per loader (a loaded-latency run) is
        // more than a Golden Cove core's 48 L2 miss entries.
        assert!(beyond_a_core(53.0, core_lines_max("GenuineIntel")).unwrap().contains("at most 48"));
    }
}
