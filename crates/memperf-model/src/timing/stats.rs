//! Summary statistics over raw samples: min, max, mean, median, MAD, CV, and
//! a MAD-based modified Z-score for outliers (Iglewicz & Hoaglin, as
//! hyperfine uses).

use serde::{Deserialize, Serialize};

/// Summary of a set of samples, in the samples' own unit.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Summary {
    #[schemars(range(min = 1))]
    pub count: usize,
    pub min: f64,
    pub max: f64,
    pub mean: f64,
    pub median: f64,
    /// Median absolute deviation from the median (unscaled).
    pub mad: f64,
    /// Coefficient of variation: standard deviation / mean.
    pub cv: f64,
    /// Samples whose modified Z-score exceeds 3.5.
    pub outliers: usize,
    /// Where the host moved across the samples: the stretch these
    /// statistics describe ([`Summary::steady_of`]); `None`: all samples.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steady: Option<super::steady::Stretch>,
}

impl Summary {
    /// Summarises `samples`; `None` when there are none or any is not finite.
    pub fn of(samples: &[f64]) -> Option<Summary> {
        if samples.is_empty() || samples.iter().any(|x| !x.is_finite()) {
            return None;
        }
        let mut sorted = samples.to_vec();
        sorted.sort_by(f64::total_cmp);
        let n = sorted.len();
        let mean = sorted.iter().sum::<f64>() / n as f64;
        let median = median_sorted(&sorted);
        let mut deviations: Vec<f64> = sorted.iter().map(|x| (x - median).abs()).collect();
        deviations.sort_by(f64::total_cmp);
        let mad = median_sorted(&deviations);
        let variance =
            if n > 1 { sorted.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64 } else { 0.0 };
        let cv = if mean != 0.0 { variance.sqrt() / mean.abs() } else { 0.0 };
        let outliers =
            if mad > 0.0 { sorted.iter().filter(|x| (0.6745 * (*x - median) / mad).abs() > 3.5).count() } else { 0 };
        Some(Summary { count: n, min: sorted[0], max: sorted[n - 1], mean, median, mad, cv, outliers, steady: None })
    }

    /// Summarises `samples` (in the order they were taken) over their
    /// steady stretch where the host moved across them
    /// ([`super::steady::stretch`]), which `steady` then records; else all.
    pub fn steady_of(samples: &[f64]) -> Option<Summary> {
        let Some(stretch) = super::steady::stretch(samples) else { return Summary::of(samples) };
        let s = Summary::of(&samples[stretch.from..stretch.to])?;
        Some(Summary { steady: Some(stretch), ..s })
    }

    /// As [`Summary::steady_of`], sample `i` taken on mapping
    /// `mapping_of[i]`: a level that changes between blocks of samples on
    /// different mappings may be where memory landed, not the host, so a
    /// stretch is sought only where every sample has a mapping of its own
    /// or all share one (else all samples are summarised).
    pub fn steady_in(samples: &[f64], mapping_of: &[u32]) -> Option<Summary> {
        let mut distinct = mapping_of.to_vec();
        distinct.sort_unstable();
        distinct.dedup();
        if distinct.len() <= 1 || distinct.len() == mapping_of.len() {
            Summary::steady_of(samples)
        } else {
            Summary::of(samples)
        }
    }
}

fn median_sorted(sorted: &[f64]) -> f64 {
    let n = sorted.len();
    if n % 2 == 1 {
        sorted[n / 2]
    } else {
        (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
    }
}

/// Median of unsorted values (NaN-free); `None` when empty.
pub fn median(values: &[f64]) -> Option<f64> {
    Summary::of(values).map(|s| s.median)
}

/// The q-quantile (0..=1) by linear interpolation between order statistics.
pub fn quantile(values: &[f64], q: f64) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let pos = q.clamp(0.0, 1.0) * (v.len() - 1) as f64;
    let lo = pos.floor() as usize;
    let hi = pos.ceil() as usize;
    Some(v[lo] + (v[hi] - v[lo]) * (pos - lo as f64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_of_known_samples() {
        let s = Summary::of(&[1.0, 2.0, 3.0, 4.0, 100.0]).unwrap();
        assert_eq!(s.count, 5);
        assert_eq!(s.min, 1.0);
        assert_eq!(s.max, 100.0);
        assert_eq!(s.median, 3.0);
        assert_eq!(s.mean, 22.0);
        assert_eq!(s.mad, 1.0);
        assert_eq!(s.outliers, 1);
    }

    #[test]
    fn even_count_median_and_zero_spread() {
        let s = Summary::of(&[2.0, 2.0, 2.0, 2.0]).unwrap();
        assert_eq!(s.median, 2.0);
        assert_eq!(s.cv, 0.0);
        assert_eq!(s.outliers, 0);
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
    }

    #[test]
    fn cv_is_sample_sd_over_mean() {
        let s = Summary::of(&[9.0, 11.0]).unwrap();
        assert!((s.cv - (2f64.sqrt() / 10.0)).abs() < 1e-12);
    }

    #[test]
    fn quantiles_interpolate() {
        let v: Vec<f64> = (0..=100).map(f64::from).collect();
        assert_eq!(quantile(&v, 0.9), Some(90.0));
        assert_eq!(quantile(&[1.0, 2.0], 0.5), Some(1.5));
        assert_eq!(quantile(&[], 0.5), None);
    }

    #[test]
    fn a_steady_summary_describes_the_longest_stretch() {
        let s = Summary::steady_of(&[200.0, 201.0, 199.0, 100.0, 101.0, 99.0, 100.5, 100.0]).unwrap();
        assert_eq!((s.count, s.median), (5, 100.0));
        assert_eq!(s.steady.as_ref().map(|t| (t.of, t.from, t.to)), Some((8, 3, 8)));
        assert_eq!(Summary::steady_of(&[1.0, 2.0, 3.0]), Summary::of(&[1.0, 2.0, 3.0]));
        // Blocks of samples on two mappings: the step may be placement.
        let step = [200.0, 201.0, 199.0, 200.5, 100.0, 101.0, 99.0, 100.5];
        assert_eq!(Summary::steady_in(&step, &[0, 0, 0, 0, 1, 1, 1, 1]), Summary::of(&step));
        assert!(Summary::steady_in(&step, &[0, 1, 2, 3, 4, 5, 6, 7]).unwrap().steady.is_some());
        assert!(Summary::steady_in(&step, &[]).unwrap().steady.is_some());
    }

    #[test]
    fn empty_or_nan_has_no_summary() {
        assert!(Summary::of(&[]).is_none());
        assert!(Summary::of(&[1.0, f64::NAN]).is_none());
    }
}
