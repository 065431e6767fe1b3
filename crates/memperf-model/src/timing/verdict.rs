//! The one statistics engine behind every A/B claim. The unit of evidence
//! is a repetition (each arm once, shuffled), its evidence a ratio of the
//! arms (or a difference, where a ratio cannot be taken), worked in logs.
//! The estimate is Hodges–Lehmann's, its interval the exact Wilcoxon
//! signed-rank one. Repetitions that share a mapping are not independent,
//! so the unit is then the mapping (the mean of its repetitions). Every
//! interval is taken at [`LOOK_CONFIDENCE`], so that a schedule looking up
//! to [`MAX_LOOKS`] times still covers at [`CONFIDENCE`] (Bonferroni).

use serde::{Deserialize, Serialize};

/// The stated confidence of every verdict: A/A comparisons give a
/// direction in at most 1 − this of cases.
pub const CONFIDENCE: f64 = 0.99;

/// The most looks a sequential schedule takes at one comparison; each
/// look spends an equal share of 1 − [`CONFIDENCE`].
pub const MAX_LOOKS: usize = 3;

/// The confidence of the interval at each look.
pub const LOOK_CONFIDENCE: f64 = 1.0 - (1.0 - CONFIDENCE) / MAX_LOOKS as f64;

/// The change below which a difference is "no change", unless asked
/// otherwise: a verdict "by at least" it needs the whole interval beyond.
pub const THRESHOLD: f64 = 0.05;

/// An interval's end as JSON writes it: a number, or `null` where the
/// interval is unbounded (too few units for any interval).
pub mod bound {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
        if v.is_finite() {
            s.serialize_f64(*v)
        } else {
            s.serialize_none()
        }
    }

    /// A lower end: `null` is −∞.
    pub fn low<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
        Option::<f64>::deserialize(d).map(|v| v.unwrap_or(f64::NEG_INFINITY))
    }

    /// An upper end: `null` is +∞.
    pub fn high<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
        Option::<f64>::deserialize(d).map(|v| v.unwrap_or(f64::INFINITY))
    }
}

/// What a comparison's per-repetition values are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Scale {
    /// Ratios of the two arms (positive); no change is 1.
    #[default]
    Ratio,
    /// Differences of the two arms (any sign); no change is 0.
    Difference,
}

/// The estimate and interval of one comparison, on the values' own scale.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Estimate {
    pub center: f64,
    pub low: f64,
    pub high: f64,
    /// Coverage of the interval (exact, from the signed-rank null).
    pub confidence: f64,
    /// Independent units the interval rests on: the repetitions, or the
    /// mappings where repetitions share them.
    pub units: usize,
}

/// The Hodges–Lehmann estimate of `values` with its signed-rank interval
/// at `level` (`mapping_of[i]`: the mapping value `i` was measured on;
/// empty: one mapping). Where some mapping holds more than one value and
/// there is more than one mapping, the units are the mappings' means:
/// repetitions on one mapping share its placement, so they are not
/// independent draws of it. `None` with no finite value (non-positive
/// ones on the ratio scale); an interval of ±∞ where too few units reach
/// `level`.
pub fn estimate(values: &[f64], mapping_of: &[u32], scale: Scale, level: f64) -> Option<Estimate> {
    let (x, groups) = usable(values, mapping_of, scale);
    if x.is_empty() {
        return None;
    }
    let units = units(&x, &groups);
    let w = walsh_averages(&units);
    let center = median_sorted(&w);
    let (low, high, confidence) = match signed_rank_cut(units.len(), 1.0 - level) {
        Some((k, coverage)) => (w[k], w[w.len() - 1 - k], coverage),
        None => (f64::NEG_INFINITY, f64::INFINITY, 1.0),
    };
    let back = |v: f64| if scale == Scale::Ratio { v.exp() } else { v };
    Some(Estimate { center: back(center), low: back(low), high: back(high), confidence, units: units.len() })
}

/// The independent units of `x`: each mapping's mean where mappings are
/// shared by several values, else the values themselves.
fn units(x: &[f64], groups: &[u32]) -> Vec<f64> {
    let mut ids: Vec<u32> = groups.to_vec();
    ids.sort_unstable();
    ids.dedup();
    if ids.len() < 2 || ids.len() == x.len() {
        return x.to_vec();
    }
    ids.iter()
        .map(|id| {
            let v: Vec<f64> = x.iter().zip(groups).filter(|(_, g)| *g == id).map(|(v, _)| *v).collect();
            v.iter().sum::<f64>() / v.len() as f64
        })
        .collect()
}

/// The values on the working scale (logs of ratios), with their mappings.
fn usable(values: &[f64], mapping_of: &[u32], scale: Scale) -> (Vec<f64>, Vec<u32>) {
    values
        .iter()
        .enumerate()
        .filter(|(_, v)| v.is_finite() && (scale == Scale::Difference || **v > 0.0))
        .map(|(i, v)| (if scale == Scale::Ratio { v.ln() } else { *v }, mapping_of.get(i).copied().unwrap_or(0)))
        .unzip()
}

/// Every pairwise mean (x_i + x_j) / 2, i ≤ j, sorted.
pub fn walsh_averages(x: &[f64]) -> Vec<f64> {
    let mut w = Vec::with_capacity(x.len() * (x.len() + 1) / 2);
    for i in 0..x.len() {
        for j in i..x.len() {
            w.push((x[i] + x[j]) / 2.0);
        }
    }
    w.sort_by(f64::total_cmp);
    w
}

fn median_sorted(v: &[f64]) -> f64 {
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// How many Walsh averages to cut from each end for a two-sided interval
/// of error at most `alpha` from `n` values, and its exact coverage: the
/// largest k with P(W⁺ < k) ≤ alpha / 2 under the signed-rank null.
/// `None` where even the whole range falls short (2 · 2⁻ⁿ > alpha).
pub fn signed_rank_cut(n: usize, alpha: f64) -> Option<(usize, f64)> {
    if n == 0 {
        return None;
    }
    let cdf = signed_rank_cdf(n);
    // cdf[w] = P(W+ <= w); the interval [W(k), W(M-1-k)] (0-based) has
    // coverage 1 - 2 P(W+ <= k - 1).
    let mut k = 0;
    while k < cdf.len() && cdf[k] <= alpha / 2.0 {
        k += 1;
    }
    (k > 0).then(|| (k, 1.0 - 2.0 * cdf[k - 1]))
}

/// P(W⁺ ≤ w) for w = 0..=n(n+1)/2 under the null (each sign ½).
fn signed_rank_cdf(n: usize) -> Vec<f64> {
    let m = n * (n + 1) / 2;
    let mut p = vec![0.0f64; m + 1];
    p[0] = 1.0;
    let mut top = 0;
    for i in 1..=n {
        top += i;
        for w in (0..=top).rev() {
            let without = p[w];
            let with = if w >= i { p[w - i] } else { 0.0 };
            p[w] = 0.5 * (without + with);
        }
    }
    let mut acc = 0.0;
    for v in p.iter_mut() {
        acc += *v;
        *v = acc;
    }
    p
}

/// What a comparison says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Call {
    /// The whole interval lies above no change (B over A is higher).
    Above,
    /// The whole interval lies below no change.
    Below,
    /// The whole interval lies within ± the threshold.
    NoChange,
    /// The interval holds no change and reaches past the threshold.
    NotResolved,
    /// A check of the measurement failed.
    Invalid,
}

/// The verdict of one comparison at a threshold.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Verdict {
    pub call: Call,
    pub scale: Scale,
    pub estimate: f64,
    /// The interval's ends (`null`: unbounded).
    #[serde(serialize_with = "bound::serialize", deserialize_with = "bound::low")]
    #[schemars(with = "Option<f64>")]
    pub low: f64,
    #[serde(serialize_with = "bound::serialize", deserialize_with = "bound::high")]
    #[schemars(with = "Option<f64>")]
    pub high: f64,
    pub confidence: f64,
    /// The threshold, as a fraction (ratio scale) or in the values' unit
    /// (difference scale).
    pub threshold: f64,
    /// A direction with the whole interval beyond ± the threshold.
    pub beyond_threshold: bool,
    pub n: usize,
    pub mappings: usize,
    /// For a comparison not resolved: about how many more repetitions
    /// would likely resolve it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub more_repetitions: Option<usize>,
}

/// The interval's limits of no change at `threshold`: ×(1 ± t), or ± t.
fn band(scale: Scale, threshold: f64) -> (f64, f64) {
    match scale {
        Scale::Ratio => (1.0 - threshold, 1.0 + threshold),
        Scale::Difference => (-threshold, threshold),
    }
}

impl Verdict {
    /// Judges an estimate: `valid` false is [`Call::Invalid`].
    #[allow(clippy::too_many_arguments)]
    pub fn judge(e: Option<Estimate>, scale: Scale, threshold: f64, n: usize, mappings: usize, valid: bool) -> Verdict {
        let none = if scale == Scale::Ratio { 1.0 } else { 0.0 };
        let e = e.unwrap_or(Estimate {
            center: f64::NAN,
            low: f64::NEG_INFINITY,
            high: f64::INFINITY,
            confidence: 1.0,
            units: 0,
        });
        let (lo_band, hi_band) = band(scale, threshold);
        let call = if !valid || !e.center.is_finite() {
            Call::Invalid
        } else if e.low > none {
            Call::Above
        } else if e.high < none {
            Call::Below
        } else if e.low >= lo_band && e.high <= hi_band {
            Call::NoChange
        } else {
            Call::NotResolved
        };
        let beyond_threshold = match call {
            Call::Above => e.low >= hi_band,
            Call::Below => e.high <= lo_band,
            _ => false,
        };
        // More units as more repetitions: a unit is a mapping where they
        // share them.
        let per_unit = if e.units > 0 { n.div_ceil(e.units) } else { 1 };
        let more_repetitions =
            (call == Call::NotResolved).then(|| more_to_resolve(&e, scale, threshold, e.units.max(1)) * per_unit);
        Verdict {
            call,
            scale,
            estimate: e.center,
            low: e.low,
            high: e.high,
            confidence: e.confidence,
            threshold,
            beyond_threshold,
            n,
            mappings,
            more_repetitions,
        }
    }

    /// A direction: above or below no change.
    pub fn resolved_direction(&self) -> bool {
        matches!(self.call, Call::Above | Call::Below)
    }

    /// Resolved either way: a direction, or no change.
    pub fn resolved(&self) -> bool {
        matches!(self.call, Call::Above | Call::Below | Call::NoChange)
    }
}

/// About how many more repetitions would likely resolve a comparison not
/// resolved: the interval's half-width shrinks as 1/√n, and it resolves
/// once it is narrower than the distance from its estimate to no change
/// (a direction) or to the nearer threshold (no change), whichever is
/// nearer to reach. Too few values for any interval: up to the fewest
/// that make one.
fn more_to_resolve(e: &Estimate, scale: Scale, threshold: f64, n: usize) -> usize {
    let fewest = (1..200).find(|&m| signed_rank_cut(m, 1.0 - LOOK_CONFIDENCE).is_some()).unwrap_or(200);
    let to_log = |v: f64| if scale == Scale::Ratio { v.ln() } else { v };
    let (lo, hi, c) = (to_log(e.low), to_log(e.high), to_log(e.center));
    if !(lo.is_finite() && hi.is_finite() && n > 0) {
        return fewest.saturating_sub(n).max(1);
    }
    let t = if scale == Scale::Ratio { (1.0 + threshold).ln() } else { threshold };
    let half = (hi - lo) / 2.0;
    let target = c.abs().max(t - c.abs());
    if target <= 0.0 || half <= 0.0 {
        return 1;
    }
    let needed = (n as f64 * (half / target).powi(2)).ceil() as usize;
    needed.saturating_sub(n).max(1).max(fewest.saturating_sub(n))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The signed-rank null: n = 3 has 8 equally likely sign patterns with
    /// W⁺ = 0,1,2,3,3,4,5,6.
    #[test]
    fn the_signed_rank_distribution_is_exact() {
        let cdf = signed_rank_cdf(3);
        let want = [1.0, 2.0, 3.0, 5.0, 6.0, 7.0, 8.0].map(|c| c / 8.0);
        assert_eq!(cdf, want);
        // n = 10: 2 · 2⁻¹⁰ = 0.00195 ≤ 0.00333, so [min, max] of the
        // Walsh averages is the per-look interval; n = 9's 0.0039 is not.
        assert_eq!(signed_rank_cut(10, 1.0 - LOOK_CONFIDENCE), Some((1, 1.0 - 2.0 / 1024.0)));
        assert_eq!(signed_rank_cut(9, 1.0 - LOOK_CONFIDENCE), None);
        // n = 10 at 95%: the textbook critical value is 8 (P(W⁺ ≤ 8) = 0.0244).
        let (k, c) = signed_rank_cut(10, 0.05).unwrap();
        assert_eq!(k, 9);
        assert!((c - (1.0 - 2.0 * 25.0 / 1024.0)).abs() < 1e-12, "{c}");
    }

    #[test]
    fn hodges_lehmann_is_the_median_of_walsh_averages() {
        let e = estimate(&[1.0, 2.0, 10.0], &[], Scale::Difference, 0.5).unwrap();
        // Walsh averages: 1, 1.5, 2, 5.5, 6, 10: median 3.75.
        assert_eq!(e.center, 3.75);
        let r = estimate(&[2.0; 12], &[], Scale::Ratio, LOOK_CONFIDENCE).unwrap();
        assert!((r.center - 2.0).abs() < 1e-12 && (r.low - 2.0).abs() < 1e-12 && (r.high - 2.0).abs() < 1e-12);
        assert!(estimate(&[-1.0, 0.0], &[], Scale::Ratio, 0.9).is_none(), "no positive ratio");
    }

    /// Repetitions that share a mapping count as one unit, their mean:
    /// two mappings of six give no interval; a mapping each, or one
    /// mapping for all (nothing to tell mappings apart by), twelve units.
    #[test]
    fn repetitions_sharing_a_mapping_are_one_unit() {
        let within = [0.0, 0.01, -0.01, 0.005, -0.005, 0.002];
        let x: Vec<f64> = within.iter().map(|v| v + 0.1).chain(within.iter().map(|v| v - 0.1)).collect();
        let g: Vec<u32> = (0..12).map(|i| (i / 6) as u32).collect();
        let two = estimate(&x, &g, Scale::Difference, 0.9).unwrap();
        assert_eq!((two.units, two.low, two.high), (2, f64::NEG_INFINITY, f64::INFINITY));
        let each: Vec<u32> = (0..12).collect();
        assert_eq!(estimate(&x, &each, Scale::Difference, 0.9).unwrap().units, 12);
        assert_eq!(estimate(&x, &[], Scale::Difference, 0.9).unwrap().units, 12);
        let six: Vec<u32> = (0..12).map(|i| (i / 2) as u32).collect();
        let pairs = estimate(&x, &six, Scale::Difference, 0.5).unwrap();
        assert_eq!(pairs.units, 6);
        assert!((pairs.center - 0.0).abs() < 0.11, "{pairs:?}");
    }

    fn judged(values: &[f64]) -> Verdict {
        let e = estimate(values, &[], Scale::Ratio, LOOK_CONFIDENCE);
        Verdict::judge(e, Scale::Ratio, THRESHOLD, values.len(), 1, true)
    }

    #[test]
    fn each_outcome_and_its_threshold() {
        let spread = |c: f64, w: f64| -> Vec<f64> { (0..12).map(|i| c * (1.0 + w * (i as f64 - 5.5) / 5.5)).collect() };
        let up = judged(&spread(1.3, 0.05));
        assert_eq!((up.call, up.beyond_threshold), (Call::Above, true));
        let barely = judged(&spread(1.03, 0.02));
        assert_eq!((barely.call, barely.beyond_threshold), (Call::Above, false));
        assert_eq!(judged(&spread(0.7, 0.05)).call, Call::Below);
        assert_eq!(judged(&spread(1.0, 0.02)).call, Call::NoChange);
        let wide = judged(&spread(1.02, 0.3));
        assert_eq!(wide.call, Call::NotResolved);
        assert!(wide.more_repetitions.unwrap() > 0);
        let few = judged(&[1.5, 1.6, 1.4]);
        assert_eq!((few.call, few.more_repetitions), (Call::NotResolved, Some(7)), "ten make an interval");
        let bad = Verdict::judge(estimate(&[2.0; 12], &[], Scale::Ratio, 0.99), Scale::Ratio, 0.05, 12, 1, false);
        assert_eq!(bad.call, Call::Invalid);
    }
}
