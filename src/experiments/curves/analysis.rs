//! What a curve says, drawn from its points alone (so `report
//! --reanalyze` draws it again the same way): the idle and saturated ends,
//! the knee where latency passes twice idle, a fold-back, the widest gap,
//! Little's law per point, and what writes cost against reads.

use super::search::largest_gap;
use crate::model::outcome::curves::{Curve, FoldBack, Knee, Mix, Point, WritesCost};
use crate::units::Nanos;

/// Latency at the knee, as a multiple of idle.
pub const KNEE_RATIO: f64 = 2.0;

/// A fold-back is named when bandwidth falls by more than this fraction,
/// or three times the points' own spread, as the pause shortens.
const FOLD_TOLERANCE: f64 = 0.10;

/// The curve of `mix` from its points (idle first, then any order).
pub fn curve(mix: Mix, mut points: Vec<Point>) -> Curve {
    let idle = points[0].latency_ns.median;
    points[1..].sort_by(|a, b| a.bytes_per_s.median.total_cmp(&b.bytes_per_s.median));
    let top = points.iter().max_by(|a, b| a.bytes_per_s.median.total_cmp(&b.bytes_per_s.median)).expect("points");
    let bws: Vec<f64> = points.iter().map(|p| p.bytes_per_s.median).collect();
    Curve {
        mix,
        bus_read_share: mix.bus_read_share(),
        idle_latency_ns: Nanos(idle),
        saturated_bytes_per_s: top.bytes_per_s.median,
        saturated_latency_ns: Nanos(top.latency_ns.median),
        knee: knee(&points),
        fold_backs: fold_backs(&points),
        largest_gap: largest_gap(&bws),
        valid: points.iter().all(|p| p.valid),
        points,
    }
}

/// Where latency first passes [`KNEE_RATIO`] × idle along bandwidth
/// (points sorted by bandwidth, idle first), interpolated linearly between
/// the two points around it.
pub fn knee(points: &[Point]) -> Knee {
    let idle = points[0].latency_ns.median;
    let at = |p: &Point| (p.bytes_per_s.median, p.latency_ns.median);
    let limit = KNEE_RATIO * idle;
    for w in points.windows(2) {
        let ((b0, l0), (b1, l1)) = (at(&w[0]), at(&w[1]));
        if l0 < limit && l1 >= limit {
            let t = (limit - l0) / (l1 - l0);
            return Knee::Found { bytes_per_s: b0 + t * (b1 - b0), latency_ns: limit, below: (b0, l0), above: (b1, l1) };
        }
    }
    let highest = points.iter().map(|p| p.latency_ns.median / idle).fold(0.0, f64::max);
    Knee::NoneBelowSaturation { highest_latency_ratio: highest }
}

/// Each loaded point that reached less bandwidth than a point with a
/// longer pause, beyond the tolerance: the curve folds back there.
pub fn fold_backs(points: &[Point]) -> Vec<FoldBack> {
    let mut loaded: Vec<&Point> = points.iter().filter(|p| p.pause_ns.is_some()).collect();
    loaded.sort_by_key(|p| std::cmp::Reverse(p.pause_ns));
    let mut out = Vec::new();
    for (i, p) in loaded.iter().enumerate() {
        let spread = 3.0 * p.bytes_per_s.mad / p.bytes_per_s.median.max(f64::MIN_POSITIVE);
        let tolerance = FOLD_TOLERANCE.max(spread);
        let more = loaded[..i].iter().max_by(|a, b| a.bytes_per_s.median.total_cmp(&b.bytes_per_s.median));
        if let Some(q) = more.filter(|q| p.bytes_per_s.median < q.bytes_per_s.median * (1.0 - tolerance)) {
            out.push(FoldBack {
                pause_ns: q.pause_ns.unwrap_or(0),
                bytes_per_s: q.bytes_per_s.median,
                shorter_pause_ns: p.pause_ns.unwrap_or(0),
                shorter_bytes_per_s: p.bytes_per_s.median,
            });
        }
    }
    out
}

/// What writes cost: each mix that writes, against the all-reads mix, where
/// one was measured.
pub fn writes_cost(curves: &[Curve]) -> Vec<WritesCost> {
    let Some(reads) = curves.iter().find(|c| c.mix.writes == 0) else { return Vec::new() };
    let knee_of = |c: &Curve| match c.knee {
        Knee::Found { bytes_per_s, .. } => Some(bytes_per_s),
        Knee::NoneBelowSaturation { .. } => None,
    };
    curves
        .iter()
        .filter(|c| c.mix.writes > 0)
        .map(|c| WritesCost {
            mix: c.mix,
            saturated_fraction: c.saturated_bytes_per_s / reads.saturated_bytes_per_s,
            knee_fraction: knee_of(c).zip(knee_of(reads)).map(|(k, r)| k / r),
        })
        .collect()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::timing::Summary;

    /// A point at `pause` with latency `ns` and bandwidth `gbps`.
    pub fn point(pause: Option<u64>, ns: f64, gbps: f64) -> Point {
        Point {
            pause_ns: pause,
            samples_latency_ns: vec![ns],
            latency_ns: Summary::of(&[ns]).unwrap(),
            samples_bytes_per_s: vec![gbps * 1e9],
            bytes_per_s: Summary::of(&[gbps * 1e9]).unwrap(),
            traffic_program_bytes_per_s: gbps * 1e9,
            counted_bytes_per_s: None,
            lines_in_flight_per_core: None,
            not_claimed: None,
            valid: true,
        }
    }

    #[test]
    fn the_knee_is_interpolated_where_latency_passes_twice_idle() {
        let pts = vec![point(None, 100.0, 1.0), point(Some(800), 120.0, 5.0), point(Some(0), 300.0, 15.0)];
        match knee(&pts) {
            Knee::Found { bytes_per_s, latency_ns, .. } => {
                // 200 ns lies 80/180 of the way from 5 to 15 GB/s.
                assert!((bytes_per_s / 1e9 - (5.0 + 10.0 * 80.0 / 180.0)).abs() < 1e-9, "{bytes_per_s}");
                assert_eq!(latency_ns, 200.0);
            }
            k => panic!("{k:?}"),
        }
        let flat = vec![point(None, 100.0, 1.0), point(Some(0), 150.0, 15.0)];
        assert_eq!(knee(&flat), Knee::NoneBelowSaturation { highest_latency_ratio: 1.5 });
    }

    #[test]
    fn a_curve_that_folds_back_is_named() {
        let pts = vec![
            point(None, 100.0, 1.0),
            point(Some(1000), 110.0, 8.0),
            point(Some(200), 150.0, 14.0),
            point(Some(0), 200.0, 11.0),
        ];
        let f = fold_backs(&pts);
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!((f[0].pause_ns, f[0].shorter_pause_ns), (200, 0));
        let c = curve(Mix::new(1, 0, false), pts);
        assert_eq!(c.saturated_bytes_per_s, 14e9, "the highest point, not the shortest pause");
        assert!(c.points.windows(2).skip(1).all(|w| w[0].bytes_per_s.median <= w[1].bytes_per_s.median));
    }

    #[test]
    fn littles_law_per_core_is_claimed_only_within_a_core() {
        // 10 GB/s on one core at 100 ns: 15.6 lines.
        let (lines, why) = crate::analysis::littles_law::per_core(10e9, 1, 100.0, 64.0);
        assert!((lines.unwrap() - 15.625).abs() < 1e-9 && why.is_none());
        let (lines, why) = crate::analysis::littles_law::per_core(100e9, 1, 100.0, 64.0);
        assert!(lines.is_none() && why.unwrap().contains("more than one core tracks"));
    }

    #[test]
    fn writes_cost_is_against_the_all_reads_mix() {
        let reads = curve(Mix::new(1, 0, false), vec![point(None, 100.0, 1.0), point(Some(0), 300.0, 20.0)]);
        let half = curve(Mix::new(1, 1, false), vec![point(None, 100.0, 1.0), point(Some(0), 150.0, 15.0)]);
        let cost = writes_cost(&[reads, half]);
        assert_eq!(cost.len(), 1);
        assert_eq!(cost[0].saturated_fraction, 0.75);
        assert_eq!(cost[0].knee_fraction, None, "the 1:1 curve has no knee");
    }
}
