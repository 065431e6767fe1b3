//! Paired comparisons: the median of per-pair ratios with a
//! distribution-free interval, and which way it points.

use serde::{Deserialize, Serialize};

/// A paired comparison: the per-repetition ratios' median and an interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Ratio {
    /// Pairs compared.
    #[schemars(range(min = 1))]
    pub n: usize,
    pub median: f64,
    /// Distribution-free interval for the median ratio: order statistics
    /// chosen so that it covers the true median with probability
    /// `confidence` (exact, from the binomial distribution).
    pub low: f64,
    pub high: f64,
    #[schemars(range(min = 0.0, max = 1.0))]
    pub confidence: f64,
}

/// The fewest pairs whose median interval reaches 90% (min..max of 5
/// pairs covers the median with 1 − 2⁻⁴ = 93.75%): below it a ratio has
/// no direction.
pub const MIN_PAIRS_FOR_VERDICT: usize = 5;

/// The smallest change advice is given for (a prefetch, a page policy):
/// "by no more than 5%" needs the whole interval inside ±5%, a verdict the whole
/// interval beyond it; an interval across it is "not resolved".
pub const MIN_ADVISED_CHANGE: f64 = 0.05;

/// Which way a ratio points, when its interval says so.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Direction {
    /// The whole interval lies above 1.
    Above,
    /// The whole interval lies below 1.
    Below,
    /// The interval contains 1: within the noise.
    WithinNoise,
    /// Too few pairs to make an interval of at least 90% confidence.
    TooFewPairs,
}

impl Ratio {
    /// Ratios `a[i] / b[i]` of paired samples (pairs with a non-finite or
    /// non-positive member are left out). `None` without any pair.
    pub fn paired(a: &[f64], b: &[f64]) -> Option<Ratio> {
        let r: Vec<f64> =
            a.iter().zip(b).filter(|(x, y)| x.is_finite() && y.is_finite() && **y > 0.0).map(|(x, y)| x / y).collect();
        Ratio::of(&r)
    }

    /// The median of already-formed ratios, with its interval.
    pub fn of(ratios: &[f64]) -> Option<Ratio> {
        let mut v: Vec<f64> = ratios.iter().copied().filter(|x| x.is_finite()).collect();
        if v.is_empty() {
            return None;
        }
        v.sort_by(f64::total_cmp);
        let n = v.len();
        let median = if n % 2 == 1 { v[n / 2] } else { (v[n / 2 - 1] + v[n / 2]) / 2.0 };
        let (k, confidence) = median_interval(n, 0.95);
        Some(Ratio { n, median, low: v[k], high: v[n - 1 - k], confidence })
    }

    /// The whole interval lies within ×(1 ± `change`): no change that
    /// large.
    pub fn inside(&self, change: f64) -> bool {
        self.low >= 1.0 - change && self.high <= 1.0 + change
    }

    /// The whole interval lies beyond ×(1 ± `change`), on one side.
    pub fn beyond(&self, change: f64) -> bool {
        self.low >= 1.0 + change || self.high <= 1.0 - change
    }

    pub fn direction(&self) -> Direction {
        if self.confidence < 0.9 {
            Direction::TooFewPairs
        } else if self.low > 1.0 {
            Direction::Above
        } else if self.high < 1.0 {
            Direction::Below
        } else {
            Direction::WithinNoise
        }
    }
}

/// The widest-k interval [x(k), x(n-1-k)] (0-based) whose coverage of the
/// median is at least `level`; when even [min, max] falls short, k = 0 with
/// the coverage it has (1 − 2 · 0.5^n).
pub fn median_interval(n: usize, level: f64) -> (usize, f64) {
    // P(x(k) <= m <= x(n-1-k)) = 1 - 2 P(Bin(n, 1/2) <= k).
    let coverage = |k: usize| 1.0 - 2.0 * binomial_cdf_half(n, k);
    let mut best = (0, coverage(0));
    for k in 1..n / 2 {
        let c = coverage(k);
        if c >= level {
            best = (k, c);
        } else {
            break;
        }
    }
    best
}

/// P(Bin(n, 1/2) <= k), exactly enough for the n of a benchmark (≤ 1000).
fn binomial_cdf_half(n: usize, k: usize) -> f64 {
    let mut term = 0.5f64.powi(n as i32);
    let mut sum = term;
    for i in 0..k {
        term *= (n - i) as f64 / (i + 1) as f64;
        sum += term;
    }
    sum
}
