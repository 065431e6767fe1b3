//! The best plateau of a curve (bandwidth against prefetch distance): the
//! longest contiguous run of at least [`MIN_POINTS`] points whose medians
//! all lie within the measured noise of the curve's maximum. Each median's
//! standard error is robust (1.4826 × MAD × 1.2533 / √n, relative); a point
//! is set against the best point, as noisy as itself, so the tolerance is
//! 2√2 × the median of the errors over the curve, never below `floor`. A
//! curve whose top is one spike, or two points, has no plateau, and the
//! result says so.

pub use memperf_model::analysis::plateau::Plateau;

/// Fewest points that make a plateau.
pub const MIN_POINTS: usize = 3;

/// One point of a curve: its x, and the per-repetition values at it.
#[derive(Debug, Clone, PartialEq)]
pub struct CurvePoint<'a> {
    pub x: u64,
    pub values: &'a [f64],
}

/// Relative standard error of the median of `values`.
pub fn relative_median_error(values: &[f64]) -> Option<f64> {
    let s = crate::timing::Summary::of(values)?;
    if s.median <= 0.0 || s.count < 2 {
        return None;
    }
    Some(1.4826 * s.mad * 1.2533 / (s.count as f64).sqrt() / s.median)
}

/// The best plateau of `points` (sorted by x; higher values are better).
pub fn best(points: &[CurvePoint], floor: f64) -> Plateau {
    let medians: Vec<f64> = points.iter().map(|p| crate::timing::stats::median(p.values).unwrap_or(f64::NAN)).collect();
    let errors: Vec<f64> = points.iter().filter_map(|p| relative_median_error(p.values)).collect();
    let tolerance = (2.0 * std::f64::consts::SQRT_2 * crate::timing::stats::median(&errors).unwrap_or(0.0)).max(floor);
    let max = medians.iter().copied().filter(|m| m.is_finite()).fold(f64::NEG_INFINITY, f64::max);
    let within = |m: f64| m.is_finite() && m >= max * (1.0 - tolerance);
    let mut best: Option<(usize, usize, f64)> = None;
    let mut longest = 0;
    let mut i = 0;
    while i < points.len() {
        if !within(medians[i]) {
            i += 1;
            continue;
        }
        let start = i;
        while i + 1 < points.len() && within(medians[i + 1]) {
            i += 1;
        }
        let len = i - start + 1;
        longest = longest.max(len);
        let med = crate::timing::stats::median(&medians[start..=i]).unwrap_or(f64::NAN);
        let better = best.is_none_or(|(s, e, m)| (len, med) > (e - s + 1, m));
        if len >= MIN_POINTS && better {
            best = Some((start, i, med));
        }
        i += 1;
    }
    match best {
        Some((s, e, value)) => {
            Plateau::Found { start: points[s].x, end: points[e].x, points: e - s + 1, value, tolerance }
        }
        None => Plateau::NoPlateau { longest_run: longest, tolerance },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn curve(medians: &[(u64, f64)], spread: f64) -> Vec<(u64, Vec<f64>)> {
        let f = [1.0 - spread, 1.0 - spread / 2.0, 1.0, 1.0 + spread / 2.0, 1.0 + spread];
        medians.iter().map(|&(x, m)| (x, f.iter().map(|k| m * k).collect())).collect()
    }

    fn points(c: &[(u64, Vec<f64>)]) -> Vec<CurvePoint<'_>> {
        c.iter().map(|(x, v)| CurvePoint { x: *x, values: v }).collect()
    }

    #[test]
    fn a_plateau_is_three_points_within_the_noise() {
        let c = curve(&[(0, 4.5), (32, 5.0), (64, 5.9), (96, 6.07), (128, 6.08), (160, 6.05), (192, 5.5)], 0.0);
        match best(&points(&c), 0.01) {
            Plateau::Found { start, end, points, .. } => assert_eq!((start, end, points), (96, 160, 3)),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn one_spike_or_two_points_is_no_plateau() {
        let c = curve(&[(0, 5.0), (32, 6.08), (64, 5.0), (96, 6.07), (128, 5.0)], 0.0);
        assert_eq!(best(&points(&c), 0.01), Plateau::NoPlateau { longest_run: 1, tolerance: 0.01 });
        let two = curve(&[(0, 5.0), (32, 6.0), (64, 6.0)], 0.0);
        assert!(matches!(best(&points(&two), 0.01), Plateau::NoPlateau { longest_run: 2, .. }));
    }

    /// One run's nta at D = 512 read 3.0% below the
    /// best with each median's error near 1.2%, and fell off a plateau it
    /// was on in the run before. A point is compared with the best point's
    /// median, as noisy as its own: two medians 5% apart with errors of
    /// 2.1% each are within the noise of their difference (×√2), though
    /// outside twice one median's error.
    #[test]
    fn a_point_is_within_the_noise_of_its_difference_from_the_best() {
        let c = curve(&[(0, 4.0), (32, 5.70), (64, 6.0), (96, 5.70), (128, 4.0)], 0.05);
        let error = relative_median_error(&c[2].1).unwrap();
        assert!((error - 0.0208).abs() < 0.001, "{error}");
        match best(&points(&c), 0.01) {
            Plateau::Found { start, end, tolerance, .. } => {
                assert_eq!((start, end), (32, 96));
                assert!((tolerance - 2.0 * std::f64::consts::SQRT_2 * error).abs() < 1e-9, "{tolerance}");
            }
            other => panic!("{other:?}"),
        }
        // 7% below the best is beyond it.
        let c = curve(&[(0, 4.0), (32, 5.58), (64, 6.0), (96, 5.58), (128, 4.0)], 0.05);
        assert!(matches!(best(&points(&c), 0.01), Plateau::NoPlateau { longest_run: 1, .. }));
    }

    #[test]
    fn the_tolerance_grows_with_the_measured_noise() {
        // Points 10% apart: within the noise when samples vary by ±30%.
        let c = curve(&[(0, 5.0), (32, 5.5), (64, 6.0), (96, 5.6)], 0.3);
        match best(&points(&c), 0.01) {
            Plateau::Found { points, tolerance, .. } => {
                assert_eq!(points, 4);
                assert!(tolerance > 0.1, "{tolerance}");
            }
            other => panic!("{other:?}"),
        }
    }
}
