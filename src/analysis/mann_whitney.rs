//! Mann–Whitney U test, two-sided: do two sets of raw samples differ?
//!
//! Exact for small samples (the distribution of U by counting, as
//! compare.py of google/benchmark would need at n = 3 and does not do), a
//! normal approximation with tie correction for large ones. When even the
//! most extreme arrangement of the samples could not reach the level, the
//! answer is "too few samples", not "within the noise".

use serde::{Deserialize, Serialize};

/// The answer, with its two-sided p-value where there is one.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Verdict {
    Differ {
        p: f64,
    },
    Same {
        p: f64,
    },
    /// Even the most extreme outcome has p above the level.
    TooFewSamples {
        smallest_possible_p: f64,
    },
}

/// Largest n1 + n2 for the exact distribution.
const EXACT_UP_TO: usize = 40;

/// Two-sided test at `level` (0.05 for 5%).
pub fn test(a: &[f64], b: &[f64], level: f64) -> Verdict {
    let (n1, n2) = (a.len(), b.len());
    if n1 == 0 || n2 == 0 {
        return Verdict::TooFewSamples { smallest_possible_p: 1.0 };
    }
    let (u, ties) = u_statistic(a, b);
    let p = if n1 + n2 <= EXACT_UP_TO {
        let counts = u_distribution(n1, n2);
        let smallest = 2.0 * counts[0] / counts.iter().sum::<f64>();
        if smallest > level {
            return Verdict::TooFewSamples { smallest_possible_p: smallest.min(1.0) };
        }
        exact_p(&counts, u)
    } else {
        normal_p(n1 as f64, n2 as f64, u, ties)
    };
    if p <= level {
        Verdict::Differ { p }
    } else {
        Verdict::Same { p }
    }
}

/// U of `a` (ties count one half), and Σ(t³ − t) over tie groups.
fn u_statistic(a: &[f64], b: &[f64]) -> (f64, f64) {
    let mut all: Vec<(f64, bool)> = a.iter().map(|&x| (x, true)).chain(b.iter().map(|&x| (x, false))).collect();
    all.sort_by(|x, y| x.0.total_cmp(&y.0));
    let mut rank_sum = 0.0;
    let mut ties = 0.0;
    let mut i = 0;
    while i < all.len() {
        let mut j = i;
        while j + 1 < all.len() && all[j + 1].0 == all[i].0 {
            j += 1;
        }
        let rank = (i + j) as f64 / 2.0 + 1.0;
        rank_sum += rank * all[i..=j].iter().filter(|x| x.1).count() as f64;
        let t = (j - i + 1) as f64;
        ties += t * t * t - t;
        i = j + 1;
    }
    let n1 = a.len() as f64;
    (rank_sum - n1 * (n1 + 1.0) / 2.0, ties)
}

/// Number of arrangements giving each U = 0..=n1·n2 (no ties).
fn u_distribution(n1: usize, n2: usize) -> Vec<f64> {
    // f[m][n][u]: arrangements of m and n items with statistic u; built by
    // whether the largest item belongs to the first sample (adds n) or not.
    let max = n1 * n2;
    let mut f = vec![vec![vec![0f64; max + 1]; n2 + 1]; n1 + 1];
    for (m, fm) in f.iter_mut().enumerate() {
        for (n, fmn) in fm.iter_mut().enumerate() {
            if m == 0 || n == 0 {
                fmn[0] = 1.0;
            }
        }
    }
    for m in 1..=n1 {
        for n in 1..=n2 {
            for u in 0..=m * n {
                let with = if u >= n { f[m - 1][n][u - n] } else { 0.0 };
                f[m][n][u] = with + f[m][n - 1][u];
            }
        }
    }
    f[n1][n2].clone()
}

/// Two-sided exact p: twice the smaller tail at `u` (U may be a half
/// integer with ties; the tails then round outward, conservatively).
fn exact_p(counts: &[f64], u: f64) -> f64 {
    let total: f64 = counts.iter().sum();
    let lower: f64 = counts.iter().take(u.floor() as usize + 1).sum();
    let upper: f64 = counts.iter().skip(u.ceil() as usize).sum();
    (2.0 * lower.min(upper) / total).min(1.0)
}

fn normal_p(n1: f64, n2: f64, u: f64, ties: f64) -> f64 {
    let n = n1 + n2;
    let mean = n1 * n2 / 2.0;
    let var = n1 * n2 / 12.0 * ((n + 1.0) - ties / (n * (n - 1.0)));
    let z = ((u - mean).abs() - 0.5).max(0.0) / var.sqrt().max(1e-12);
    2.0 * (1.0 - standard_normal_cdf(z))
}

/// Φ(z), by the Abramowitz–Stegun 7.1.26 erf approximation (error < 1.5e-7).
pub fn standard_normal_cdf(z: f64) -> f64 {
    let x = z / std::f64::consts::SQRT_2;
    let t = 1.0 / (1.0 + 0.327_591_1 * x.abs());
    let poly =
        t * (0.254_829_592 + t * (-0.284_496_736 + t * (1.421_413_741 + t * (-1.453_152_027 + t * 1.061_405_429))));
    let erf = 1.0 - poly * (-x * x).exp();
    0.5 * (1.0 + erf.copysign(x))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn three_against_three_can_never_reach_five_percent() {
        // The expert's case: completely separated samples at n = 3 have an
        // exact p of 2/20 = 0.10; the normal approximation said "differ".
        let v = test(&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0], 0.05);
        assert_eq!(v, Verdict::TooFewSamples { smallest_possible_p: 0.1 });
    }

    #[test]
    fn exact_p_values_match_the_tables() {
        // n = 5 + 5, fully separated: 2/252.
        match test(&[1.0, 2.0, 3.0, 4.0, 5.0], &[6.0, 7.0, 8.0, 9.0, 10.0], 0.05) {
            Verdict::Differ { p } => assert!((p - 2.0 / 252.0).abs() < 1e-12, "{p}"),
            other => panic!("{other:?}"),
        }
        // Interleaved: U = 12 or 13 of 25, p = 1.
        assert!(matches!(test(&[1.0, 3.0, 5.0, 7.0, 9.0], &[2.0, 4.0, 6.0, 8.0, 10.0], 0.05), Verdict::Same { .. }));
        assert_eq!(u_distribution(2, 2), vec![1.0, 1.0, 2.0, 1.0, 1.0]);
    }

    #[test]
    fn large_samples_use_the_normal_approximation() {
        let a: Vec<f64> = (0..30).map(f64::from).collect();
        let b: Vec<f64> = (0..30).map(|x| f64::from(x) + 20.0).collect();
        assert!(matches!(test(&a, &b, 0.05), Verdict::Differ { p } if p < 1e-4));
        assert!(matches!(test(&a, &a, 0.05), Verdict::Same { .. }));
        assert!((standard_normal_cdf(1.96) - 0.975).abs() < 1e-4);
    }
}
