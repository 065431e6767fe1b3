//! The steady stretch of a figure's samples on a host that moves: change
//! points split the samples, in the order taken, where their level moved;
//! the figure is the median of the longest stretch (ties: the earlier),
//! with the move stated beside it. A split leaves [`MIN_STRETCH`] samples
//! a side and moves the sides' log medians by over [`MIN_MOVE`] and over
//! [`SEPARATION`] standard errors (spread: the root mean square about each
//! side's median, which an outlier widens). Binary segmentation splits the
//! move that stands out most first. On a steady host a split costs
//! precision, not bias: every stretch's median estimates the same level.

use serde::{Deserialize, Serialize};

/// Samples each side of a change point keeps.
pub const MIN_STRETCH: usize = 3;
/// The smallest move that splits: under the flatness limits (5% for a
/// rate, 7% for a latency) a move changes no figure's meaning.
pub const MIN_MOVE: f64 = 0.05;
/// How many standard errors of the difference of two medians a move must
/// exceed.
pub const SEPARATION: f64 = 4.0;

/// Where a figure's samples held steady, when the host moved across them.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Stretch {
    /// Samples the figure took in all.
    pub of: usize,
    /// The steady stretch, samples `from..to` in the order they were taken.
    pub from: usize,
    pub to: usize,
    /// The highest stretch median over the lowest, less one.
    pub moved: f64,
    /// Stretches the change points made (two at least).
    pub stretches: usize,
}

impl Stretch {
    /// "steady stretch of 9 of 15 samples; their level moved 18% across all 15".
    pub fn phrase(&self) -> String {
        format!(
            "steady stretch of {} of {} samples; their level moved {:.0}% across all {}",
            self.to - self.from,
            self.of,
            self.moved * 100.0,
            self.of
        )
    }
}

/// The change points of `samples` (all positive, in time order) and the
/// longest stretch between them; `None` where no move splits them.
pub fn stretch(samples: &[f64]) -> Option<Stretch> {
    if samples.iter().any(|x| !(x.is_finite() && *x > 0.0)) {
        return None;
    }
    let logs: Vec<f64> = samples.iter().map(|x| x.ln()).collect();
    let mut splits = Vec::new();
    split(&logs, 0, logs.len(), &mut splits);
    if splits.is_empty() {
        return None;
    }
    splits.sort_unstable();
    let bounds: Vec<usize> = std::iter::once(0).chain(splits.iter().copied()).chain([logs.len()]).collect();
    let stretches: Vec<(usize, usize)> = bounds.windows(2).map(|w| (w[0], w[1])).collect();
    let (from, to) = *stretches.iter().rev().max_by_key(|(a, b)| b - a).expect("two stretches at least");
    let medians: Vec<f64> = stretches.iter().map(|&(a, b)| median(&logs[a..b])).collect();
    let (lo, hi) = medians.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), &m| (l.min(m), h.max(m)));
    Some(Stretch { of: samples.len(), from, to, moved: (hi - lo).exp() - 1.0, stretches: stretches.len() })
}

/// Splits `logs[a..b]` at its largest move, if that move splits, then
/// each side in turn.
fn split(logs: &[f64], a: usize, b: usize, out: &mut Vec<usize>) {
    if b - a < 2 * MIN_STRETCH {
        return;
    }
    // Each split's move and its standard error (a median's is about
    // 1.2533 σ / √n); the split is where the move stands out most.
    let judged = |t: usize| {
        let moved = (median(&logs[a..t]) - median(&logs[t..b])).abs();
        let squares: f64 = deviations(&logs[a..t]).into_iter().chain(deviations(&logs[t..b])).map(|d| d * d).sum();
        let se = 1.2533 * (squares / (b - a - 2) as f64).sqrt() * (1.0 / (t - a) as f64 + 1.0 / (b - t) as f64).sqrt();
        (
            moved,
            if se > 0.0 {
                moved / se
            } else if moved > 0.0 {
                f64::INFINITY
            } else {
                0.0
            },
        )
    };
    let (t, (moved, z)) = (a + MIN_STRETCH..=b - MIN_STRETCH)
        .map(|t| (t, judged(t)))
        .max_by(|x, y| x.1 .1.total_cmp(&y.1 .1))
        .expect("a split");
    if moved > (1.0 + MIN_MOVE).ln() && z > SEPARATION {
        out.push(t);
        split(logs, a, t, out);
        split(logs, t, b, out);
    }
}

/// Each value's distance from the values' median.
fn deviations(v: &[f64]) -> Vec<f64> {
    let m = median(v);
    v.iter().map(|x| (x - m).abs()).collect()
}

fn median(v: &[f64]) -> f64 {
    super::stats::median(v).unwrap_or(f64::NAN)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A seeded generator for the tests (SplitMix64) and its normal draws.
    struct Draw(u64);
    impl Draw {
        fn uniform(&mut self) -> f64 {
            self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
        }
        fn normal(&mut self) -> f64 {
            let (u, v) = (self.uniform().max(1e-300), self.uniform());
            (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
        }
        /// `n` samples about 100 with multiplicative noise `cv`, the level
        /// ×`step` from sample `at` on.
        fn series(&mut self, n: usize, cv: f64, at: usize, step: f64) -> Vec<f64> {
            (0..n).map(|i| 100.0 * if i >= at { step } else { 1.0 } * (cv * self.normal()).exp()).collect()
        }
    }

    #[test]
    fn a_step_is_split_and_the_longer_stretch_gives_the_figure() {
        let mut s = vec![100.0, 101.0, 99.0, 100.5, 99.5, 100.2, 100.8, 99.1, 99.9, 100.3];
        s.extend([125.0, 126.0, 124.0, 125.5, 124.6]);
        let st = stretch(&s).expect("a 25% step splits");
        assert_eq!((st.of, st.from, st.to, st.stretches), (15, 0, 10, 2));
        assert!((st.moved - 0.25).abs() < 0.01, "{}", st.moved);
        assert_eq!(st.phrase(), "steady stretch of 10 of 15 samples; their level moved 25% across all 15");
    }

    #[test]
    fn one_outlier_a_small_move_or_too_few_samples_do_not_split() {
        assert_eq!(stretch(&[100.0, 101.0, 99.0, 180.0, 100.0, 100.5, 99.5]), None);
        assert_eq!(stretch(&[100.0, 100.0, 100.0, 104.0, 104.0, 104.0]), None);
        assert_eq!(stretch(&[100.0, 100.0, 150.0, 150.0, 150.0]), None);
        assert_eq!(stretch(&[100.0, 100.0, 100.0, -1.0, 150.0, 150.0]), None);
    }

    /// Seeded: on a steady host with 2–10% noise, 1,000 series of 6–20
    /// samples split in under 2% of cases; a 20% step at a random point
    /// with 3% noise is found in over 95%, and the stretch's median lies
    /// within 5% of the level most of it was taken on in every case found.
    #[test]
    fn steady_hosts_rarely_split_and_steps_are_found() {
        let mut d = Draw(0x5743_4144_5921);
        let mut split_steady = 0;
        for i in 0..1000 {
            let (n, cv) = (6 + i % 15, [0.02, 0.05, 0.10][i % 3]);
            split_steady += usize::from(stretch(&d.series(n, cv, n, 1.0)).is_some());
        }
        assert!(split_steady < 20, "{split_steady} of 1000 steady series split");
        let (mut found, mut tries) = (0, 0);
        for i in 0..1000 {
            let n = 10 + i % 11;
            let at = MIN_STRETCH + (d.uniform() * (n - 2 * MIN_STRETCH + 1) as f64) as usize;
            let s = d.series(n, 0.03, at, 1.2);
            tries += 1;
            if let Some(st) = stretch(&s) {
                found += 1;
                // The level most of the stretch was taken on.
                let stepped = (st.from..st.to).filter(|&j| j >= at).count();
                let level = if 2 * stepped > st.to - st.from { 120.0 } else { 100.0 };
                let m = crate::timing::stats::median(&s[st.from..st.to]).expect("samples");
                assert!((m / level - 1.0).abs() < 0.05, "series {i}: {m} against {level}");
            }
        }
        eprintln!("steady series split: {split_steady} of 1000; 20% steps found: {found} of {tries}");
        assert!(found * 100 > tries * 95, "{found} of {tries} steps found");
    }
}
