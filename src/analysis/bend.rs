//! Where a loaded-latency curve bends: the delivered bandwidth up to
//! which latency stays near idle, judged only where the curve leaves idle
//! for good, on two points at least.

use memperf_model::outcome::loaded_latency::{Bend, Point};

/// Where the curve leaves the idle latency for good: the highest-bandwidth
/// point after which every point (by bandwidth), two at least, lies beyond
/// the tolerance (a lone noisy point, in the middle of the curve or at its
/// end, is not a bend). The
/// tolerance is 10%, or three times the idle point's own spread (CV) when
/// that is larger, so noise alone does not make a bend.
pub fn bend(points: &[Point]) -> Bend {
    let Some(idle) = points.iter().find(|q| q.delay_ns.is_none()) else { return Bend::TooFewPoints };
    if points.len() < 3 {
        return Bend::TooFewPoints;
    }
    let tolerance = (3.0 * idle.latency_ns.cv).max(0.10);
    let limit = idle.latency_ns.median * (1.0 + tolerance);
    let mut by_bw: Vec<&Point> = points.iter().collect();
    by_bw.sort_by(|a, b| a.total_bytes_per_s.total_cmp(&b.total_bytes_per_s));
    let peak = by_bw.last().map_or(f64::NAN, |q| q.total_bytes_per_s);
    let beyond_from = by_bw.iter().rposition(|q| q.latency_ns.median <= limit).map(|i| i + 1);
    match beyond_from {
        Some(i) if i == by_bw.len() => Bend::NoBend { tolerance },
        None | Some(0) => Bend::TooFewPoints,
        // One point beyond: a lone point, not a curve that left idle.
        Some(i) if by_bw.len() - i < 2 => Bend::TooFewPoints,
        Some(i) => {
            let q = by_bw[i - 1];
            Bend::Found {
                bytes_per_s: q.total_bytes_per_s,
                latency_ns: q.latency_ns.median,
                fraction_of_peak: q.total_bytes_per_s / peak,
                tolerance,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::timing::Summary;

    fn pt(delay: Option<u64>, latency: f64, bw: f64) -> Point {
        let s = Summary::of(&[latency]).unwrap();
        Point {
            delay_ns: delay,
            samples_latency_ns: vec![latency],
            latency_ns: s,
            samples_loader_bytes_per_s: vec![bw],
            loader_bytes_per_s: Summary::of(&[bw]).unwrap(),
            loader_bus_bytes_per_s: bw,
            chaser_bytes_per_s: 0.0,
            total_bytes_per_s: bw,
            valid: true,
        }
    }

    #[test]
    fn the_bend_is_the_last_point_within_tolerance_of_idle() {
        let pts = [
            pt(None, 100.0, 1e9),
            pt(Some(1000), 104.0, 10e9),
            pt(Some(100), 108.0, 20e9),
            pt(Some(10), 150.0, 25e9),
            pt(Some(0), 160.0, 30e9),
        ];
        match bend(&pts) {
            Bend::Found { bytes_per_s, latency_ns, fraction_of_peak, tolerance } => {
                assert_eq!((bytes_per_s, latency_ns, tolerance), (20e9, 108.0, 0.10));
                assert!((fraction_of_peak - 2.0 / 3.0).abs() < 1e-12);
            }
            other => panic!("{other:?}"),
        }
        let spike = [
            pt(None, 100.0, 1e9),
            pt(Some(1000), 130.0, 10e9),
            pt(Some(100), 105.0, 20e9),
            pt(Some(10), 150.0, 25e9),
            pt(Some(0), 160.0, 30e9),
        ];
        assert!(
            matches!(bend(&spike), Bend::Found { bytes_per_s, .. } if bytes_per_s == 20e9),
            "a lone spike is no bend"
        );
        let flat = [pt(None, 100.0, 1e9), pt(Some(100), 101.0, 10e9), pt(Some(0), 109.0, 20e9)];
        assert_eq!(bend(&flat), Bend::NoBend { tolerance: 0.10 });
        assert_eq!(bend(&flat[..2]), Bend::TooFewPoints);
    }

    /// Only the last point beyond the tolerance (the 998 ns with
    /// a range of 286–1535 ns): one point is no bend.
    #[test]
    fn one_point_beyond_is_no_bend() {
        let pts =
            [pt(None, 290.0, 0.2e9), pt(Some(1000), 300.0, 6e9), pt(Some(100), 310.0, 9e9), pt(Some(0), 998.0, 12e9)];
        assert_eq!(bend(&pts), Bend::TooFewPoints);
    }
}
