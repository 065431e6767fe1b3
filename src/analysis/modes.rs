//! Two modes in a handful of runs: whether repeated timings of one thing
//! fall into two separate groups (a fast and a slow one) rather than
//! scattering around one value, so that a verdict can name the modes
//! instead of calling their mixture "noise".
//!
//! The test is deliberately plain, for the 5–20 runs a whole-program A/B
//! makes: sort the values, cut at the widest relative gap, and call it two
//! modes only when each side holds two runs or more, the gap is at least
//! [`MIN_SEPARATION`], and it is wider than either side's own spread. A
//! single outlier is not a mode.

use serde::{Deserialize, Serialize};

/// The smallest ratio between the fastest slow run and the slowest fast
/// run that counts as two modes (run-to-run noise of a whole program on
/// these hosts stays well within ±15%).
pub const MIN_SEPARATION: f64 = 1.3;

/// Two groups of runs, by index into the values given.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TwoModes {
    /// Indices of the runs in the lower (faster) mode.
    pub low: Vec<usize>,
    /// Indices of the runs in the upper (slower) mode.
    pub high: Vec<usize>,
    /// Smallest upper value / largest lower value.
    pub separation: f64,
}

/// Largest / smallest of positive values (1 for fewer than two).
fn spread(values: &[f64]) -> f64 {
    let (lo, hi) = values.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), &v| (lo.min(v), hi.max(v)));
    if values.len() < 2 {
        1.0
    } else {
        hi / lo
    }
}

/// Two modes in `values` (all finite and positive), or `None` when they
/// are one group, too few (< 4), or split only by a single outlier.
pub fn two_modes(values: &[f64]) -> Option<TwoModes> {
    if values.len() < 4 || values.iter().any(|v| !v.is_finite() || *v <= 0.0) {
        return None;
    }
    let mut order: Vec<usize> = (0..values.len()).collect();
    order.sort_by(|&a, &b| values[a].total_cmp(&values[b]));
    let sorted: Vec<f64> = order.iter().map(|&i| values[i]).collect();
    let cut =
        (2..=sorted.len() - 2).max_by(|&a, &b| (sorted[a] / sorted[a - 1]).total_cmp(&(sorted[b] / sorted[b - 1])))?;
    let separation = sorted[cut] / sorted[cut - 1];
    let (lower, upper) = sorted.split_at(cut);
    if separation < MIN_SEPARATION || separation <= spread(lower) || separation <= spread(upper) {
        return None;
    }
    Some(TwoModes { low: order[..cut].to_vec(), high: order[cut..].to_vec(), separation })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The THP arm recorded in the Intel recording: two fast runs
    /// and three slow ones.
    #[test]
    fn the_recorded_thp_arm_has_two_modes() {
        let m = two_modes(&[6.20, 1.29, 4.88, 1.22, 4.63]).expect("two modes");
        assert_eq!(m.low, vec![3, 1]);
        assert_eq!(m.high, vec![4, 2, 0]);
        assert!((m.separation - 4.63 / 1.29).abs() < 1e-12);
    }

    #[test]
    fn noise_an_outlier_or_too_few_runs_are_one_mode() {
        assert_eq!(two_modes(&[1.98, 2.01, 2.05, 2.12, 2.03]), None);
        assert_eq!(two_modes(&[2.0, 2.1, 2.05, 6.0]), None, "one outlier is not a mode");
        assert_eq!(two_modes(&[1.0, 1.1, 5.0]), None, "three runs are too few");
        assert_eq!(two_modes(&[1.0, 1.0, 0.0, 2.0]), None, "a zero time is not a run");
        // Wide groups that touch: the gap is no wider than a group's spread.
        assert_eq!(two_modes(&[1.0, 1.5, 2.0, 3.0]), None);
    }

    #[test]
    fn two_runs_each_side_are_enough() {
        let m = two_modes(&[1.0, 1.02, 2.0, 2.05]).expect("two modes");
        assert_eq!((m.low.len(), m.high.len()), (2, 2));
    }
}
