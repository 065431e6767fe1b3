//! A paired comparison as the document keeps it: the per-repetition
//! evidence (ratios, or differences), the mapping each was measured on,
//! the looks the schedule took, and the engine's estimate and interval
//! ([`super::verdict`]). A document read back is judged again from its
//! evidence by today's engine; one from before the evidence was kept
//! keeps the interval it stored, judged at the confidence it states.

use super::verdict::{self, Call, Scale, Verdict, LOOK_CONFIDENCE, THRESHOLD};
use serde::{Deserialize, Serialize};

/// A paired comparison: its evidence, estimate and interval.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Ratio {
    /// Repetitions compared.
    pub n: usize,
    /// The Hodges–Lehmann estimate (the median of Walsh averages); in a
    /// document from before the engine, the median ratio.
    #[serde(alias = "median")]
    pub estimate: f64,
    /// The interval, exact signed-rank coverage `confidence` (its units
    /// the repetitions, or the mappings where repetitions share them);
    /// `null` where too few units give none.
    #[serde(serialize_with = "super::verdict::bound::serialize")]
    #[schemars(with = "Option<f64>")]
    pub low: f64,
    #[serde(serialize_with = "super::verdict::bound::serialize")]
    #[schemars(with = "Option<f64>")]
    pub high: f64,
    #[schemars(range(min = 0.0, max = 1.0))]
    pub confidence: f64,
    /// Ratios (no change: 1) or differences (no change: 0).
    #[serde(default)]
    pub scale: Scale,
    /// Distinct mappings the repetitions were measured on (where several
    /// repetitions share one, the interval rests on the mappings).
    #[serde(default = "one")]
    pub mappings: usize,
    /// On the difference scale, the level a relative threshold is taken
    /// of (the reference arm's median), where there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference_level: Option<f64>,
    /// The per-repetition values, in repetition order (absent in
    /// documents from before the engine).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub values: Vec<f64>,
    /// The mapping of each value (empty: one mapping).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mapping_of: Vec<u32>,
    /// Repetitions at each look of a sequential schedule, in order (empty:
    /// one look at the end).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub looks: Vec<usize>,
    /// The interval's level where it is not the engine's (a derived claim
    /// with a test of its own, [`Ratio::at_level`]): such a ratio gives no
    /// A/B verdict.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub level: Option<f64>,
}

fn one() -> usize {
    1
}

/// The serialised form, read back through [`Ratio::from`]: judged again
/// from its values where it has them.
#[derive(Deserialize)]
struct RatioRecord {
    n: usize,
    #[serde(alias = "median")]
    estimate: f64,
    #[serde(deserialize_with = "super::verdict::bound::low")]
    low: f64,
    #[serde(deserialize_with = "super::verdict::bound::high")]
    high: f64,
    confidence: f64,
    #[serde(default)]
    scale: Scale,
    #[serde(default = "one")]
    mappings: usize,
    #[serde(default)]
    reference_level: Option<f64>,
    #[serde(default)]
    values: Vec<f64>,
    #[serde(default)]
    mapping_of: Vec<u32>,
    #[serde(default)]
    looks: Vec<usize>,
    #[serde(default)]
    level: Option<f64>,
}

impl<'de> Deserialize<'de> for Ratio {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Ratio, D::Error> {
        RatioRecord::deserialize(d).map(Ratio::from)
    }
}

impl From<RatioRecord> for Ratio {
    fn from(r: RatioRecord) -> Ratio {
        let rejudged = match r.level {
            Some(level) => Ratio::at_level(&r.values, level),
            None => Ratio::with_evidence(r.values.clone(), r.mapping_of.clone(), r.scale),
        }
        .map(|x| Ratio { reference_level: r.reference_level, looks: r.looks.clone(), ..x });
        rejudged.unwrap_or(Ratio {
            n: r.n,
            estimate: r.estimate,
            low: r.low,
            high: r.high,
            confidence: r.confidence,
            scale: r.scale,
            mappings: r.mappings,
            reference_level: r.reference_level,
            values: r.values,
            mapping_of: r.mapping_of,
            looks: r.looks,
            level: r.level,
        })
    }
}

/// The fewest pairs that can give a verdict at [`LOOK_CONFIDENCE`].
pub const MIN_PAIRS_FOR_VERDICT: usize = 10;

/// The smallest change advice is given for (a prefetch, a page policy):
/// "by at least 5%" needs the whole interval beyond ±5%, "no change" the
/// whole interval inside it; an interval across it with no change inside
/// is "not resolved".
pub const MIN_ADVISED_CHANGE: f64 = THRESHOLD;

impl Ratio {
    /// Ratios `a[i] / b[i]` of paired samples (pairs with a non-finite or
    /// non-positive member are left out). `None` without any pair.
    pub fn paired(a: &[f64], b: &[f64]) -> Option<Ratio> {
        let r: Vec<f64> =
            a.iter().zip(b).filter(|(x, y)| x.is_finite() && y.is_finite() && **y > 0.0).map(|(x, y)| x / y).collect();
        Ratio::of(&r)
    }

    /// Already-formed ratios of one mapping, with their estimate and interval.
    pub fn of(ratios: &[f64]) -> Option<Ratio> {
        Ratio::with_evidence(ratios.to_vec(), Vec::new(), Scale::Ratio)
    }

    /// Ratios of one mapping with their interval at `level` instead of the
    /// engine's: for a derived claim with a test of its own (a step, a
    /// knee), never for an A/B verdict, which such a ratio does not
    /// resolve below the engine's confidence.
    pub fn at_level(ratios: &[f64], level: f64) -> Option<Ratio> {
        let r = Ratio::of(ratios)?;
        let e = verdict::estimate(&r.values, &[], Scale::Ratio, level)?;
        Some(Ratio { low: e.low, high: e.high, confidence: e.confidence, level: Some(level), ..r })
    }

    /// Per-repetition differences (any sign; no change is 0).
    pub fn differences(diffs: &[f64]) -> Option<Ratio> {
        Ratio::with_evidence(diffs.to_vec(), Vec::new(), Scale::Difference)
    }

    /// Values with the mapping each was measured on; non-finite ones (and
    /// non-positive ratios) are left out. `None` without any value.
    pub fn with_evidence(values: Vec<f64>, mapping_of: Vec<u32>, scale: Scale) -> Option<Ratio> {
        let keep = |v: &f64| v.is_finite() && (scale == Scale::Difference || *v > 0.0);
        let mapped = !mapping_of.is_empty();
        let (values, mapping_of): (Vec<f64>, Vec<u32>) = values
            .iter()
            .enumerate()
            .filter(|(_, v)| keep(v))
            .map(|(i, v)| (*v, mapping_of.get(i).copied().unwrap_or(0)))
            .unzip();
        let e = verdict::estimate(&values, &mapping_of, scale, LOOK_CONFIDENCE)?;
        let mut ids = mapping_of.clone();
        ids.sort_unstable();
        ids.dedup();
        Some(Ratio {
            n: values.len(),
            estimate: e.center,
            low: e.low,
            high: e.high,
            confidence: e.confidence,
            scale,
            mappings: ids.len().max(1),
            reference_level: None,
            values,
            mapping_of: if mapped && ids.len() > 1 { mapping_of } else { Vec::new() },
            looks: Vec::new(),
            level: None,
        })
    }

    /// A ratio as stated, without its evidence (as a document from before
    /// the engine keeps one): for tests and constructed cases.
    pub fn stated(n: usize, estimate: f64, low: f64, high: f64, confidence: f64) -> Ratio {
        Ratio {
            n,
            estimate,
            low,
            high,
            confidence,
            scale: Scale::Ratio,
            mappings: 1,
            reference_level: None,
            values: Vec::new(),
            mapping_of: Vec::new(),
            looks: Vec::new(),
            level: None,
        }
    }

    /// The same with the looks the schedule took recorded.
    pub fn looked(self, looks: Vec<usize>) -> Ratio {
        Ratio { looks, ..self }
    }

    /// The same on the difference scale, judged relative to `level`.
    pub fn relative_to(self, level: f64) -> Ratio {
        Ratio { reference_level: Some(level).filter(|l| l.is_finite() && *l > 0.0), ..self }
    }

    /// The verdict at the default threshold.
    pub fn verdict(&self) -> Verdict {
        self.verdict_at(THRESHOLD)
    }

    /// The verdict at `threshold` (a fraction; on the difference scale, of
    /// the reference level, or in the values' unit without one). An
    /// interval below the engine's confidence (a document from before
    /// it) resolves nothing.
    pub fn verdict_at(&self, threshold: f64) -> Verdict {
        let threshold = match (self.scale, self.reference_level) {
            (Scale::Difference, Some(level)) => threshold * level,
            _ => threshold,
        };
        let trusted = self.level.is_none() && (self.confidence >= verdict::CONFIDENCE - 1e-9 || !self.low.is_finite());
        let e = verdict::Estimate {
            center: self.estimate,
            low: if trusted { self.low } else { f64::NEG_INFINITY },
            high: if trusted { self.high } else { f64::INFINITY },
            confidence: self.confidence,
            units: if self.mappings > 1 && self.mappings < self.n { self.mappings } else { self.n },
        };
        Verdict::judge(Some(e), self.scale, threshold, self.n, self.mappings, true)
    }

    /// The whole interval lies within ×(1 ± `change`) (± `change` of the
    /// reference level on the difference scale): no change that large.
    pub fn inside(&self, change: f64) -> bool {
        let v = self.verdict_at(change);
        let (none, t) = if self.scale == Scale::Ratio { (1.0, v.threshold) } else { (0.0, v.threshold) };
        v.call != Call::Invalid && v.low >= none - t && v.high <= none + t
    }

    /// The whole interval lies beyond ×(1 ± `change`), on one side.
    pub fn beyond(&self, change: f64) -> bool {
        self.verdict_at(change).beyond_threshold
    }

    /// Above, below, no change or not resolved, at the default threshold.
    pub fn call(&self) -> Call {
        self.verdict().call
    }
}

/// The widest-k interval [x(k), x(n-1-k)] (0-based) whose coverage of the
/// median is at least `level`; when even [min, max] falls short, k = 0 with
/// the coverage it has (1 − 2 · 0.5^n). For absolute points' precision.
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A document read back is judged from its evidence by today's
    /// engine; one without evidence keeps what it stored, and an interval
    /// at 94% resolves nothing.
    #[test]
    fn a_ratio_read_back_is_judged_again_from_its_values() {
        let r = Ratio::of(&[1.5; 10]).unwrap();
        let mut json = serde_json::to_value(&r).unwrap();
        json["low"] = serde_json::json!(0.1);
        let back: Ratio = serde_json::from_value(json).unwrap();
        assert_eq!(back, r);
        let few = Ratio::of(&[1.5, 1.6]).unwrap();
        let json = serde_json::to_value(&few).unwrap();
        assert!(json["low"] == 0.0 && json["high"].is_null(), "an unbounded ratio: ×0 to ×∞: {json}");
        let back: Ratio = serde_json::from_value(json).unwrap();
        assert_eq!((back.low, back.high), (0.0, f64::INFINITY));
        let diff = serde_json::to_value(Ratio::differences(&[1.0, 2.0]).unwrap()).unwrap();
        assert!(diff["low"].is_null() && diff["high"].is_null(), "{diff}");
        let old = serde_json::json!({"n": 5, "median": 0.5, "low": 0.45, "high": 0.55, "confidence": 0.9375});
        let old: Ratio = serde_json::from_value(old).unwrap();
        assert_eq!((old.estimate, old.low, old.values.len()), (0.5, 0.45, 0));
        assert_eq!(old.call(), Call::NotResolved, "a sign-test interval at 94% is below the engine's 99%");
        assert_eq!(Ratio::of(&[0.5; 12]).unwrap().call(), Call::Below);
    }

    #[test]
    fn mappings_are_kept_only_where_there_are_several() {
        let r = Ratio::with_evidence(vec![1.0, 1.1, 0.0, 1.2], vec![0, 0, 1, 1], Scale::Ratio).unwrap();
        assert_eq!((r.n, r.mappings, r.mapping_of.clone()), (3, 2, vec![0, 0, 1]), "the zero ratio is dropped");
        let one = Ratio::with_evidence(vec![1.0, 1.1], vec![3, 3], Scale::Ratio).unwrap();
        assert!(one.mapping_of.is_empty() && one.mappings == 1);
        assert_eq!(Ratio::paired(&[1.0, 2.0], &[2.0, 0.0]).unwrap().n, 1, "zero denominators are dropped");
        assert!(Ratio::paired(&[], &[]).is_none());
    }

    #[test]
    fn a_difference_is_judged_against_its_reference_level() {
        let d = Ratio::differences(&[0.1, -0.1, 0.05, -0.05, 0.0, 0.02, -0.02, 0.01, -0.01, 0.03]).unwrap();
        assert_eq!(d.verdict().call, Call::NotResolved, "±5% of no level is ±0.05 in the values' unit");
        assert_eq!(d.clone().relative_to(10.0).verdict().call, Call::NoChange, "within ±0.5");
        let cost = Ratio::differences(&[5.0, 5.5, 4.8, 5.2, 5.1, 4.9, 5.3, 5.0, 5.2, 4.7]).unwrap();
        assert_eq!(cost.relative_to(10.0).verdict().call, Call::Above);
    }
}
