//! Several runs of one host, as a series: `memperf merge` of repeated
//! runs (a single-machine user's history) gives, per headline, each run's
//! value in time order, the spread over the runs, and the drift: the
//! Theil–Sen slope (the median of the slopes between every two runs, in
//! percent of the median per day) and whether the values move one way
//! with time beyond chance (Kendall's rank correlation of value and time,
//! its p exact from the distribution of inversions where there are no
//! ties). The fleet's comparison across hosts takes each host's newest run.

use super::{Drift, Host, Run, Series, SeriesFigure};

/// A trend is said where Kendall's test gives p below this.
pub const ALPHA: f64 = 0.05;

/// Seconds since the epoch of `YYYY-MM-DDTHH:MM:SSZ` (days from civil,
/// H. Hinnant's algorithm); `None` for anything else.
pub fn utc_seconds(t: &str) -> Option<f64> {
    let b = t.as_bytes();
    if b.len() != 20 || b[4] != b'-' || b[7] != b'-' || b[10] != b'T' || b[13] != b':' || b[16] != b':' || b[19] != b'Z'
    {
        return None;
    }
    let n = |r: std::ops::Range<usize>| t.get(r)?.parse::<i64>().ok();
    let (y, m, d) = (n(0..4)?, n(5..7)?, n(8..10)?);
    let (hh, mm, ss) = (n(11..13)?, n(14..16)?, n(17..19)?);
    if !(1..=12).contains(&m) || !(1..=31).contains(&d) || hh > 23 || mm > 59 || ss > 60 {
        return None;
    }
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some((days * 86_400 + hh * 3600 + mm * 60 + ss) as f64)
}

/// Kendall's S of `y` against `x`: concordant minus discordant pairs, and
/// whether any pair ties.
fn kendall_s(x: &[f64], y: &[f64]) -> (i64, bool) {
    let (mut s, mut ties) = (0i64, false);
    for i in 0..x.len() {
        for j in i + 1..x.len() {
            let v = ((x[j] - x[i]) * (y[j] - y[i])).signum();
            if x[j] == x[i] || y[j] == y[i] {
                ties = true;
            } else {
                s += v as i64;
            }
        }
    }
    (s, ties)
}

/// Two-sided p of Kendall's S for `n` untied pairs: exact, from the
/// number of permutations of `n` with each count of inversions (S = pairs −
/// 2 × inversions).
fn kendall_exact_p(n: usize, s: i64) -> f64 {
    let pairs = n * (n - 1) / 2;
    let mut counts = vec![1.0f64];
    for k in 2..=n {
        let mut next = vec![0.0; counts.len() + k - 1];
        for (inv, c) in counts.iter().enumerate() {
            for extra in 0..k {
                next[inv + extra] += c;
            }
        }
        counts = next;
    }
    let total: f64 = counts.iter().sum();
    let at_least = counts
        .iter()
        .enumerate()
        .filter(|(inv, _)| (pairs as i64 - 2 * *inv as i64).abs() >= s.abs())
        .map(|(_, c)| c)
        .sum::<f64>();
    (at_least / total).min(1.0)
}

/// The drift of `values` taken at `times` (seconds).
pub fn drift(times: &[f64], values: &[f64]) -> Drift {
    let n = values.len();
    if n < 3 {
        return Drift::NotTested { reason: format!("{n} run(s) measured it: a trend needs three") };
    }
    let median = crate::timing::stats::median(values).unwrap_or(0.0);
    let mut slopes = Vec::new();
    for i in 0..n {
        for j in i + 1..n {
            if times[j] != times[i] {
                slopes.push((values[j] - values[i]) / (times[j] - times[i]));
            }
        }
    }
    let Some(slope) = crate::timing::stats::median(&slopes) else {
        return Drift::NotTested { reason: "every run has the same start time".into() };
    };
    let (s, ties) = kendall_s(times, values);
    let pairs = (n * (n - 1) / 2) as f64;
    let p = if ties || n > 60 {
        let var = (n * (n - 1) * (2 * n + 5)) as f64 / 18.0;
        let z = (s.abs() as f64 - 1.0).max(0.0) / var.sqrt();
        2.0 * (1.0 - crate::analysis::mann_whitney::standard_normal_cdf(z))
    } else {
        kendall_exact_p(n, s)
    };
    let pct = |seconds: f64| if median != 0.0 { slope * seconds / median * 100.0 } else { 0.0 };
    let span_s =
        times.iter().cloned().fold(f64::NEG_INFINITY, f64::max) - times.iter().cloned().fold(f64::INFINITY, f64::min);
    Drift::Tested {
        pct_per_day: pct(86_400.0),
        pct_over_span: pct(span_s),
        span_s,
        tau: s as f64 / pairs,
        p: p.min(1.0),
        trend: p < ALPHA,
        worse: false,
    }
}

/// The series of hosts with two or more runs: `runs` holds every host
/// (one entry per document), in any order.
pub fn of(runs: &[Host]) -> Vec<Series> {
    let mut ids: Vec<&str> = runs.iter().map(|h| h.id.as_str()).collect();
    ids.sort_unstable();
    ids.dedup();
    ids.into_iter()
        .filter_map(|id| {
            let mut mine: Vec<&Host> = runs.iter().filter(|h| h.id == id).collect();
            if mine.len() < 2 {
                return None;
            }
            mine.sort_by(|a, b| a.started_utc.cmp(&b.started_utc));
            Some(series(id, &mine))
        })
        .collect()
}

fn series(id: &str, runs: &[&Host]) -> Series {
    let times: Vec<Option<f64>> = runs.iter().map(|h| utc_seconds(&h.started_utc)).collect();
    let mut keys: Vec<&super::Figure> = Vec::new();
    for f in runs.iter().flat_map(|h| &h.figures) {
        if !keys.iter().any(|k| k.key == f.key) {
            keys.push(f);
        }
    }
    let figures = keys
        .into_iter()
        .map(|k| {
            let values: Vec<Option<f64>> = runs.iter().map(|h| h.figure(&k.key).map(|f| f.value)).collect();
            let (t, v): (Vec<f64>, Vec<f64>) =
                times.iter().zip(&values).filter_map(|(t, v)| Some(((*t)?, (*v)?))).unzip();
            let present: Vec<f64> = values.iter().flatten().copied().collect();
            let median = crate::timing::stats::median(&present).unwrap_or(f64::NAN);
            let (min, max) = present.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| (a.min(x), b.max(x)));
            let mut drift = drift(&t, &v);
            if let Drift::Tested { pct_per_day, worse, .. } = &mut drift {
                *worse = (*pct_per_day < 0.0) == k.higher_is_better;
            }
            SeriesFigure {
                key: k.key.clone(),
                name: k.name.clone(),
                unit: k.unit.clone(),
                higher_is_better: k.higher_is_better,
                spread_pct: if median != 0.0 { (max - min) / median.abs() * 100.0 } else { 0.0 },
                values,
                median,
                min,
                max,
                drift,
            }
        })
        .collect();
    Series {
        host: id.to_string(),
        runs: runs
            .iter()
            .map(|h| Run { run_id: h.run_id.clone(), started_utc: h.started_utc.clone(), source: h.source.clone() })
            .collect(),
        figures,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_times_parse_to_epoch_seconds() {
        assert_eq!(utc_seconds("1970-01-01T00:00:00Z"), Some(0.0));
        assert_eq!(utc_seconds("2000-02-29T00:00:00Z"), Some(951_782_400.0));
        assert_eq!(utc_seconds("2026-11-22T02:01:01Z"), Some(1_795_312_861.0));
        assert_eq!(utc_seconds("2026-13-01T00:00:00Z"), None);
        assert_eq!(utc_seconds("yesterday"), None);
    }

    /// Exact Kendall p: n = 4 in order has 1 permutation of 24 at S = 6,
    /// and one at S = −6: p = 2/24. n = 5 in order: 2/120.
    #[test]
    fn kendall_p_is_exact_for_small_series() {
        assert!((kendall_exact_p(4, 6) - 2.0 / 24.0).abs() < 1e-12);
        assert!((kendall_exact_p(5, 10) - 2.0 / 120.0).abs() < 1e-12);
        assert!((kendall_exact_p(5, 0) - 1.0).abs() < 1e-12);
    }

    /// Six daily runs losing 2% a day: a trend, −2%/day, worse for a
    /// bandwidth; six runs that wander: none; two runs: not tested.
    #[test]
    fn a_steady_loss_is_a_drift_and_wandering_is_not() {
        let day = 86_400.0;
        let t: Vec<f64> = (0..6).map(|i| i as f64 * day).collect();
        let falling: Vec<f64> = (0..6).map(|i| 40.0 * (1.0 - 0.02 * i as f64)).collect();
        match drift(&t, &falling) {
            Drift::Tested { pct_per_day, p, trend, tau, .. } => {
                assert!((pct_per_day + 0.8 / 38.0 * 100.0).abs() < 1e-6, "{pct_per_day}");
                assert_eq!(tau, -1.0);
                assert!(trend && (p - 2.0 / 720.0).abs() < 1e-9, "{p}");
            }
            other => panic!("{other:?}"),
        }
        let wandering = [40.0, 41.5, 39.0, 40.8, 39.6, 40.2];
        assert!(matches!(drift(&t, &wandering), Drift::Tested { trend: false, .. }));
        assert!(matches!(drift(&t[..2], &falling[..2]), Drift::NotTested { .. }));
    }
}
