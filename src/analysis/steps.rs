//! Steps in a cost curve: where the marginal cost (the slope between
//! neighbouring points) jumps from one flat level to a higher one, as a
//! call chain's cost does when it outruns the return-stack predictor.
//! Said only when a split chosen on half the repetitions is confirmed by
//! the other half.

use crate::kernels::calls::Linkage;
use crate::timing::Ratio;
use memperf_model::outcome::calls::{CurveStep, StepUp};

/// Marginals needed on each side of a split.
const STEP_SIDE: usize = 3;
/// A step must raise the marginal cost by at least this factor.
pub const STEP_RATIO: f64 = 1.3;

/// The confidence of a step's held-out interval: a derived claim, with a
/// second look of its own, not an A/B verdict.
pub const STEP_CONFIDENCE: f64 = 0.9;

/// Where the marginal cost of a call steps up on one curve: `curve` is
/// (depth, seconds per chain in each of `reps` repetitions), sorted by
/// depth. The split is chosen on the even repetitions and its size
/// confirmed on the odd ones, so noise cannot both place and prove it.
pub fn step_up(curve: &[(u64, Vec<f64>)], reps: usize) -> StepUp {
    if curve.len() < 2 * STEP_SIDE + 1 {
        return StepUp::NotMeasured {
            reason: format!(
                "{} depths{}; a step needs {} (three marginals on each side)",
                curve.len(),
                curve.first().map(|c| format!(" from {} on", c.0)).unwrap_or_default(),
                2 * STEP_SIDE + 1
            ),
        };
    }
    // marginal[i][r]: seconds per extra call between depth i and i+1, repetition r.
    let marginal: Vec<Vec<f64>> = curve
        .windows(2)
        .map(|w| (0..reps).map(|r| (w[1].1[r] - w[0].1[r]) / (w[1].0 - w[0].0) as f64).collect())
        .collect();
    let Some(k) = split_on_even(&marginal, reps) else {
        return StepUp::NotMeasured { reason: "too few depths to place a split".into() };
    };
    let confirming = confirm_on_odd(&marginal, reps, k);
    if confirming.is_empty() {
        return StepUp::NotMeasured { reason: "too few repetitions to choose a split and confirm it".into() };
    }
    // A step is a derived claim, checked on the repetitions that did not
    // place it, at its own confidence (the A/B engine's 99% would need
    // more held-out repetitions than a quick run has).
    let ratio = Ratio::at_level(&confirming, STEP_CONFIDENCE);
    let clear = ratio.as_ref().is_some_and(|r| r.low > 1.0 && r.estimate >= STEP_RATIO);
    if !clear {
        return StepUp::NoStep { best_split_depth: Some(curve[k].0), ratio };
    }
    let all_reps = |range: &[Vec<f64>]| median_of(&range.iter().map(|m| median_of(m)).collect::<Vec<_>>()) * 1e9;
    StepUp::Clear {
        before_depth: curve[k].0,
        after_depth: curve[k + 1].0,
        marginal_before_ns: all_reps(&marginal[..k]),
        marginal_after_ns: all_reps(&marginal[k..]),
        ratio: ratio.expect("clear"),
        attributed_to_return_stack: false,
    }
}

fn median_of(v: &[f64]) -> f64 {
    crate::timing::stats::median(v).unwrap_or(f64::NAN)
}

/// The split: a change point chosen on the even repetitions — the k that
/// best explains their median marginals as two flat levels (least
/// squares), at least STEP_SIDE marginals on each side.
fn split_on_even(marginal: &[Vec<f64>], reps: usize) -> Option<usize> {
    let even: Vec<f64> = marginal
        .iter()
        .map(|m| median_of(&(0..reps).filter(|r| r % 2 == 0).map(|r| m[r]).collect::<Vec<_>>()))
        .collect();
    let sse = |v: &[f64]| {
        let mean = v.iter().sum::<f64>() / v.len() as f64;
        v.iter().map(|x| (x - mean).powi(2)).sum::<f64>()
    };
    let candidates = STEP_SIDE..=marginal.len() - STEP_SIDE;
    candidates.min_by(|&a, &b| (sse(&even[..a]) + sse(&even[a..])).total_cmp(&(sse(&even[..b]) + sse(&even[b..]))))
}

/// The split's size, confirmed on the odd repetitions: per repetition, the
/// median marginal after the split over the median before it.
fn confirm_on_odd(marginal: &[Vec<f64>], reps: usize, k: usize) -> Vec<f64> {
    (0..reps)
        .filter(|r| r % 2 == 1)
        .map(|r| {
            let side = |range: &[Vec<f64>]| median_of(&range.iter().map(|m| m[r]).collect::<Vec<_>>());
            let (before, after) = (side(&marginal[..k]), side(&marginal[k..]));
            if before > 0.0 {
                after / before
            } else {
                f64::NAN
            }
        })
        .collect()
}

/// The least a mispredicted return costs, in cycles: 15–20 on today's
/// cores; 10 leaves room for a short pipeline.
pub const MISPREDICT_CYCLES: f64 = 10.0;

/// Without a measured core clock, the least in nanoseconds: 10 cycles at
/// 5 GHz.
pub const MISPREDICT_NS_WITHOUT_CLOCK: f64 = 2.0;

/// Names the clear steps that are the return-stack predictor running out.
/// A step is, on one thread count, when `direct` steps clearly and
/// `inlined` (no call left) does not step by a misprediction's cost (a
/// step of a fraction of a cycle there is some other small effect and
/// rules nothing out); when the step adds at least a
/// misprediction's cost per call ([`MISPREDICT_CYCLES`] at `ghz`); and, for
/// the other linkages, when it lies within ×2 of `direct`'s depth (one
/// predictor runs out at one depth). Any other step is left unnamed: a
/// one-cycle rise or a step at 128 frames is some other mechanism.
pub fn attribute_return_stack(steps: &mut [CurveStep], ghz: Option<f64>) {
    let least_ns =
        ghz.filter(|g| g.is_finite() && *g > 0.0).map_or(MISPREDICT_NS_WITHOUT_CLOCK, |g| MISPREDICT_CYCLES / g);
    let clear_at = |steps: &[CurveStep], l: Linkage, t: usize| {
        steps.iter().find(|s| s.linkage == l && s.threads == t).and_then(|s| match s.step {
            StepUp::Clear { before_depth, after_depth, marginal_before_ns, marginal_after_ns, .. } => {
                Some((before_depth, after_depth, marginal_after_ns - marginal_before_ns))
            }
            _ => None,
        })
    };
    let threads: Vec<usize> = steps.iter().map(|s| s.threads).collect();
    for t in threads {
        let direct = clear_at(steps, Linkage::Direct, t)
            .filter(|d| d.2 >= least_ns && clear_at(steps, Linkage::Inlined, t).is_none_or(|i| i.2 < least_ns));
        for s in steps.iter_mut().filter(|s| s.threads == t && s.linkage != Linkage::Inlined) {
            if let StepUp::Clear {
                before_depth,
                after_depth,
                marginal_before_ns,
                marginal_after_ns,
                attributed_to_return_stack,
                ..
            } = &mut s.step
            {
                let fits = marginal_after_ns.to_owned() - marginal_before_ns.to_owned() >= least_ns;
                let near = direct.is_some_and(|(b, a, _)| *after_depth * 2 >= b && *before_depth <= a * 2);
                *attributed_to_return_stack = direct.is_some() && fits && near;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A curve whose seconds per chain follow `per_call(depth)` exactly,
    /// the same in every repetition except a small alternating wobble.
    fn synthetic(depths: &[u64], reps: usize, chain_s: impl Fn(u64) -> f64) -> Vec<(u64, Vec<f64>)> {
        depths.iter().map(|&d| (d, (0..reps).map(|r| chain_s(d) * (1.0 + 0.002 * (r % 3) as f64)).collect())).collect()
    }

    const DEPTHS: [u64; 12] = [4, 8, 12, 16, 24, 32, 40, 48, 64, 96, 128, 256];

    #[test]
    fn a_return_stack_step_is_found_where_it_is() {
        // 1 ns per call up to 32, 5 ns per call past it.
        let c = synthetic(&DEPTHS, 12, |d| 1e-9 * (d as f64 + 4.0 * d.saturating_sub(32) as f64));
        match step_up(&c, 12) {
            StepUp::Clear { before_depth, after_depth, marginal_before_ns, marginal_after_ns, .. } => {
                assert_eq!((before_depth, after_depth), (32, 40));
                assert!((marginal_before_ns - 1.0).abs() < 0.05, "{marginal_before_ns}");
                assert!((marginal_after_ns - 5.0).abs() < 0.1, "{marginal_after_ns}");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_flat_curve_has_no_step() {
        let c = synthetic(&DEPTHS, 12, |d| 1e-9 * d as f64);
        assert!(matches!(step_up(&c, 12), StepUp::NoStep { .. }), "{:?}", step_up(&c, 12));
    }

    #[test]
    fn too_few_depths_are_not_measured() {
        let c = synthetic(&[4, 8, 16], 12, |d| 1e-9 * d as f64);
        assert!(matches!(step_up(&c, 12), StepUp::NotMeasured { .. }));
    }

    fn clear(before: u64, after: u64, ns: (f64, f64)) -> StepUp {
        StepUp::Clear {
            before_depth: before,
            after_depth: after,
            marginal_before_ns: ns.0,
            marginal_after_ns: ns.1,
            ratio: Ratio::of(&[ns.1 / ns.0; 6]).unwrap(),
            attributed_to_return_stack: false,
        }
    }

    fn named(s: &CurveStep) -> bool {
        matches!(s.step, StepUp::Clear { attributed_to_return_stack: true, .. })
    }

    /// A 4 ns (14-cycle) step in direct and plt at the same depth, none in
    /// inlined: both are the return stack. With inlined stepping too, none.
    #[test]
    fn attribution_needs_a_step_in_direct_and_none_in_inlined() {
        let flat = StepUp::NoStep { best_split_depth: None, ratio: None };
        let mut s = vec![
            CurveStep { linkage: Linkage::Direct, threads: 1, step: clear(32, 40, (1.0, 5.0)) },
            CurveStep { linkage: Linkage::Plt, threads: 1, step: clear(32, 40, (1.5, 5.5)) },
            CurveStep { linkage: Linkage::Inlined, threads: 1, step: flat },
        ];
        attribute_return_stack(&mut s, Some(3.5));
        assert!(named(&s[0]) && named(&s[1]));
        s[2].step = clear(32, 40, (1.0, 5.0));
        attribute_return_stack(&mut s, Some(3.5));
        assert!(!named(&s[0]) && !named(&s[1]));
        // An inlined chain's 0.06 → 0.12 ns, a fraction of a cycle, is no
        // step of the return stack's size.
        s[2].step = clear(48, 64, (0.06, 0.12));
        attribute_return_stack(&mut s, Some(4.2));
        assert!(named(&s[0]) && named(&s[1]), "a sub-cycle step in inlined rules nothing out");
    }

    /// The Intel recording: direct rises 0.75 → 1.04 ns (one cycle at
    /// 3.5 GHz), no misprediction; saves steps at 128–256, far from
    /// direct's 24. Neither is the return stack.
    #[test]
    fn a_one_cycle_step_or_one_far_from_directs_is_not_the_return_stack() {
        let mut s = vec![
            CurveStep { linkage: Linkage::Direct, threads: 2, step: clear(20, 24, (0.70, 1.06)) },
            CurveStep { linkage: Linkage::Saves, threads: 2, step: clear(128, 256, (1.51, 2.00)) },
        ];
        attribute_return_stack(&mut s, Some(3.5));
        assert!(!named(&s[0]) && !named(&s[1]), "a 0.36 ns step is a cycle, not a misprediction");
        s[0].step = clear(20, 24, (0.70, 6.0));
        s[1].step = clear(128, 256, (1.5, 7.0));
        attribute_return_stack(&mut s, Some(3.5));
        assert!(named(&s[0]), "18 cycles is a misprediction");
        assert!(!named(&s[1]), "a step at 128 frames is not the predictor that ran out at 24");
        attribute_return_stack(&mut s, None);
        assert!(named(&s[0]), "without a clock, 2 ns at least");
    }
}
