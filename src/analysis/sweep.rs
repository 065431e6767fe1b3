//! Verdicts over a whole sweep rather than at one chosen point: the
//! distances from which, to the end of the sweep, a variant is slower than
//! its reference at every point, each interval wholly below ×1. A harm
//! seen at every far distance is a finding whatever the best distance
//! was, and advice must not say "no difference" beside it.

use crate::timing::schedule::Call;
use crate::timing::Ratio;

/// A run of sweep points to the end of the sweep, all on one side of ×1.
#[derive(Debug, Clone, PartialEq)]
pub struct Span {
    /// The first point of the run (the sweep's x, e.g. a distance).
    pub from: u64,
    pub points: usize,
    /// The smallest and largest median ratio over the run.
    pub lowest: f64,
    pub highest: f64,
}

/// The points from which every later one's ratio lies wholly below 1, at
/// least two of them; `points` are (x, ratio) in any order.
pub fn below_from(points: &[(u64, Ratio)]) -> Option<Span> {
    let mut sorted: Vec<&(u64, Ratio)> = points.iter().collect();
    sorted.sort_by_key(|p| p.0);
    let first = sorted.iter().rposition(|p| p.1.call() != Call::Below).map_or(0, |i| i + 1);
    let run = &sorted[first..];
    (run.len() >= 2).then(|| Span {
        from: run[0].0,
        points: run.len(),
        lowest: run.iter().map(|p| p.1.estimate).fold(f64::INFINITY, f64::min),
        highest: run.iter().map(|p| p.1.estimate).fold(f64::NEG_INFINITY, f64::max),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Twelve repetitions spread evenly from `low` to `high` about `median`.
    fn r(median: f64, low: f64, high: f64) -> Ratio {
        let v: Vec<f64> = (0..12)
            .map(|i| {
                if i < 6 {
                    low + (median - low) * i as f64 / 6.0
                } else {
                    median + (high - median) * (i - 6) as f64 / 5.0
                }
            })
            .collect();
        Ratio::of(&v).unwrap()
    }

    /// The Intel recording's nta sweep on one thread: within the noise at
    /// D = 0, below from 256 to 1024.
    #[test]
    fn a_harm_to_the_end_of_the_sweep_is_found_where_it_starts() {
        let nta = [
            (0, r(0.999, 0.968, 1.012)),
            (256, r(0.631, 0.625, 0.637)),
            (512, r(0.448, 0.443, 0.451)),
            (768, r(0.400, 0.396, 0.407)),
            (1024, r(0.390, 0.387, 0.398)),
        ];
        let s = below_from(&nta).unwrap();
        assert_eq!((s.from, s.points), (256, 4));
        assert!(s.lowest > 0.387 && s.lowest < 0.398 && s.highest > 0.625 && s.highest < 0.637, "{s:?}");
    }

    #[test]
    fn a_harm_that_does_not_last_or_a_lone_point_is_none() {
        let back = [(0, r(0.9, 0.85, 0.95)), (256, r(0.9, 0.85, 0.95)), (512, r(1.0, 0.97, 1.03))];
        assert_eq!(below_from(&back), None, "the last point is within the noise");
        assert_eq!(below_from(&[(0, r(1.0, 0.9, 1.1)), (256, r(0.5, 0.4, 0.6))]), None, "one point");
        assert_eq!(below_from(&[]), None);
    }
}
