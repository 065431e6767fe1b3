//! Finding the knees of a latency curve: where a working set stops fitting
//! a cache level (or a TLB level) and the cost per access steps up.
//!
//! Method: the jumps between consecutive points are compared in log space;
//! the largest ones (above a minimum ratio) are the knees, and two jumps on
//! neighbouring intervals are one knee spread over two points (a working
//! set that half fits). Between knees lie the levels; a level's figure is
//! the median of its points, except the last level, whose figure is the
//! value at the largest working set (the cost that does not go away). A
//! knee is looked at again on the curves of the even and the odd samples.

use super::second_look::SecondLook;
pub use memperf_model::analysis::knees::Level;

/// Splits `points` (sorted by x, y > 0) into at most `max_levels` levels at
/// jumps of at least `min_ratio`.
pub fn levels(points: &[(f64, f64)], max_levels: usize, min_ratio: f64) -> Vec<Level> {
    if points.is_empty() || max_levels == 0 {
        return Vec::new();
    }
    let jumps: Vec<(usize, f64)> = points
        .windows(2)
        .enumerate()
        .map(|(i, w)| (i, (w[1].1 / w[0].1).ln()))
        .filter(|j| j.1 > min_ratio.ln())
        .collect();
    let mut by_size = jumps.clone();
    by_size.sort_by(|a, b| b.1.total_cmp(&a.1));
    let mut knees: Vec<usize> = Vec::new();
    for (i, _) in by_size {
        if knees.len() + 1 >= max_levels {
            break;
        }
        if knees.iter().any(|&k| k.abs_diff(i) <= 1) {
            continue;
        }
        knees.push(i);
    }
    knees.sort();
    // A knee's split: after point i; for a knee spread over i-1..i+1, the
    // middle point belongs to the lower level (it mostly still fits).
    let mut bounds: Vec<usize> = knees.iter().map(|&i| i + 1).collect();
    bounds.push(points.len());
    let mut out = Vec::new();
    let mut start = 0;
    let last = bounds.len() - 1;
    for (n, &end) in bounds.iter().enumerate() {
        let seg = &points[start..end];
        if seg.is_empty() {
            continue;
        }
        let value = if n == last {
            seg[seg.len() - 1].1
        } else {
            let mut v: Vec<f64> = seg.iter().map(|p| p.1).collect();
            v.sort_by(f64::total_cmp);
            v[v.len() / 2]
        };
        out.push(Level { from_x: seg[0].0, to_x: seg[seg.len() - 1].0, value });
        start = end;
    }
    out
}

/// A curve: (x, y) points sorted by x.
pub type Curve = Vec<(f64, f64)>;

/// The second look at each knee of `whole` (the end of every level but
/// the last): found again, within a factor √2 of its size, among the knees
/// of the curve drawn from the even samples and among those of the odd
/// ones? `halves` is `None` when the points have too few samples to split.
pub fn second_looks(
    whole: &[Level],
    halves: Option<&(Curve, Curve)>,
    max_levels: usize,
    min_ratio: f64,
    name: impl Fn(f64) -> String,
) -> Vec<SecondLook> {
    let knees = |lv: &[Level]| -> Vec<f64> { lv.iter().take(lv.len().saturating_sub(1)).map(|l| l.to_x).collect() };
    let Some((even, odd)) = halves else {
        let why = "fewer than two samples per point for each half".to_string();
        return knees(whole).iter().map(|_| SecondLook::NotChecked { why: why.clone() }).collect();
    };
    let (a, b) = (knees(&levels(even, max_levels, min_ratio)), knees(&levels(odd, max_levels, min_ratio)));
    let near = |set: &[f64], x: f64| set.iter().any(|&k| (k / x).log2().abs() <= 0.5);
    let said = |found: bool, x: f64| {
        if found {
            format!("a knee at {}", name(x))
        } else {
            format!("no knee near {}", name(x))
        }
    };
    knees(whole)
        .into_iter()
        .map(|x| {
            let (fa, fb) = (near(&a, x), near(&b, x));
            let (first, second) = (said(fa, x), said(fb, x));
            if fa && fb {
                SecondLook::Stable { first, second }
            } else {
                SecondLook::Unstable { first, second }
            }
        })
        .collect()
}

/// Each point's median over the even and over the odd samples: the two
/// half curves for [`second_looks`]; `None` when a point has fewer than
/// four samples.
pub fn half_curves(points: &[(f64, &[f64])]) -> Option<(Curve, Curve)> {
    use crate::timing::stats::median;
    if points.iter().any(|(_, s)| s.len() < 4) {
        return None;
    }
    let half = |parity: usize| -> Option<Curve> {
        points.iter().map(|(x, s)| median(&super::second_look::half(s, parity)).map(|m| (*x, m))).collect()
    };
    Some((half(0)?, half(1)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A knee both halves find is stable; one only the whole finds is not
    /// (the Intel recording's later TLB knees: 512/2048 pages in one run,
    /// 16384/40960 in the next, beside a first knee at 96 in both).
    #[test]
    fn a_knee_only_one_half_finds_is_unstable() {
        let xs = [32.0, 64.0, 96.0, 128.0, 256.0, 512.0, 1024.0, 2048.0];
        let whole: Vec<(f64, f64)> =
            xs.iter().zip([1.0, 1.0, 1.0, 3.0, 3.0, 3.0, 4.5, 4.5]).map(|(&x, y)| (x, y)).collect();
        let even = whole.clone();
        let odd: Vec<(f64, f64)> =
            xs.iter().zip([1.0, 1.0, 1.0, 3.0, 3.0, 3.0, 3.2, 3.3]).map(|(&x, y)| (x, y)).collect();
        let lv = levels(&whole, 4, 1.3);
        assert_eq!(lv.len(), 3);
        let looks = second_looks(&lv, Some(&(even, odd)), 4, 1.3, |x| x.to_string());
        assert!(matches!(looks[0], SecondLook::Stable { .. }), "{looks:?}");
        assert_eq!(looks[1], SecondLook::Unstable { first: "a knee at 512".into(), second: "no knee near 512".into() });
        assert!(matches!(second_looks(&lv, None, 4, 1.3, |x| x.to_string())[0], SecondLook::NotChecked { .. }));
    }

    #[test]
    fn half_curves_take_alternate_samples() {
        let s = [1.0, 10.0, 2.0, 20.0, 3.0];
        let (e, o) = half_curves(&[(8.0, &s[..])]).unwrap();
        assert_eq!((e, o), (vec![(8.0, 2.0)], vec![(8.0, 15.0)]));
        assert_eq!(half_curves(&[(8.0, &s[..3])]), None);
    }

    fn curve(steps: &[(f64, f64)]) -> Vec<(f64, f64)> {
        // sizes 4 KiB .. 1 GiB doubling; latency = first step whose bound >= size.
        (12..=30)
            .map(|e| {
                let x = (1u64 << e) as f64;
                (x, steps.iter().find(|s| x <= s.0).map(|s| s.1).unwrap_or(steps.last().unwrap().1))
            })
            .collect()
    }

    #[test]
    fn finds_three_knees_of_a_cache_hierarchy() {
        let pts = curve(&[
            (32768.0, 1.2),
            (1048576.0, 4.0),
            (2097152.0, 10.0),
            (67108864.0, 30.0),
            (134217728.0, 60.0),
            (f64::MAX, 100.0),
        ]);
        let l = levels(&pts, 4, 1.25);
        assert_eq!(l.len(), 4, "{l:?}");
        assert_eq!((l[0].to_x, l[0].value), (32768.0, 1.2));
        assert_eq!(l[1].value, 4.0);
        assert!(l[1].to_x >= 1048576.0 && l[1].to_x <= 2097152.0);
        assert_eq!(l[2].value, 30.0);
        assert_eq!(l[3].value, 100.0, "the last level is the value at the largest set");
    }

    #[test]
    fn flat_curve_is_one_level_and_noise_is_no_knee() {
        let pts: Vec<(f64, f64)> = (0..10).map(|i| (i as f64, if i % 2 == 0 { 10.0 } else { 11.0 })).collect();
        let l = levels(&pts, 4, 1.25);
        assert_eq!(l.len(), 1);
        assert!(levels(&[], 4, 1.25).is_empty());
    }

    #[test]
    fn at_most_max_levels() {
        let pts = curve(&[(8192.0, 1.0), (65536.0, 2.0), (524288.0, 4.0), (4194304.0, 8.0), (f64::MAX, 16.0)]);
        assert_eq!(levels(&pts, 3, 1.25).len(), 3);
        assert_eq!(levels(&pts, 5, 1.25).len(), 5);
    }
}
