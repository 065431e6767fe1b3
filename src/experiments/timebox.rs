//! The suite's time box, and sweeps within a share of it.
//!
//! Each job gets, as it starts, what is left of the box (less what is owed
//! after the jobs, timed where each first ran) split by the weights of the
//! jobs still to come ([`super::Experiment::SHARE`]); a job whose nominal
//! part no longer fits, at the pace kept so far and with room for the
//! largest overrun of a job so far, is not started. Inside its
//! share, repetitions past a first look stop where it ends
//! ([`crate::timing::schedule`]), and a sweep takes its points in order of
//! value while what is left holds the longest of its kind ([`Bench::sweep`]).
//! Nothing is estimated; what was left out is said (docs/ARCHITECTURE.md,
//! "The time box").

use super::Bench;
use crate::error::Result;
use crate::model::Caution;

/// Seconds reserved for writing the report after the last job.
pub const REPORT_S: f64 = 0.5;

/// A suite's time box: its length, and when it began (before the probe).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TimeBox {
    pub box_s: f64,
    pub since_ns: u64,
}

/// What the run still owes after its jobs, per unit, as timed where each
/// first ran (zero until then).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Owed {
    /// One point of the host reference.
    pub reference_point_s: f64,
    /// The two core-clock readings around a measuring job.
    pub clock_readings_s: f64,
}

impl Owed {
    /// Seconds owed for `references` reference points and `measuring` jobs
    /// still to come, and the report.
    pub fn seconds(&self, references: usize, measuring: usize) -> f64 {
        references as f64 * self.reference_point_s + measuring as f64 * self.clock_readings_s + REPORT_S
    }
}

impl TimeBox {
    pub fn end_ns(&self) -> u64 {
        self.since_ns + (self.box_s * 1e9) as u64
    }

    /// Seconds left at `now_ns`, less `owed_s`.
    pub fn left_s(&self, now_ns: u64, owed_s: f64) -> f64 {
        self.end_ns().saturating_sub(now_ns) as f64 * 1e-9 - owed_s
    }

    /// Where a job of weight `weight` that starts at `now_ns` ends its
    /// share: what is left of the box, less `owed_s`, times its part of
    /// `weights_left` (its own included). `None` where what is left does
    /// not hold `nominal_s` (its part of the box as it stood when the first
    /// job began) or nothing is left: the job is not started, so that a run
    /// that fell behind leaves out the jobs it no longer holds rather than
    /// overrun.
    pub fn share_end(&self, now_ns: u64, weight: f64, weights_left: f64, owed_s: f64, nominal_s: f64) -> Option<u64> {
        let left_s = self.left_s(now_ns, owed_s);
        let part = if weights_left > 0.0 { (weight / weights_left).clamp(0.0, 1.0) } else { 1.0 };
        (left_s > 0.0 && left_s >= nominal_s).then(|| now_ns + (left_s * part * 1e9) as u64)
    }

    /// The warning of a run that ended past its box at `now_ns`.
    pub fn overrun(&self, now_ns: u64) -> Option<Caution> {
        let took_s = now_ns.saturating_sub(self.since_ns) as f64 * 1e-9;
        (now_ns > self.end_ns()).then_some(Caution::BoxOverrun { box_s: self.box_s, took_s })
    }
}

impl Bench<'_> {
    /// Runs a sweep's `points` in the order given (the experiment's order
    /// of value), each with its weight, within the share: a point after
    /// the first starts only while what is left of the share holds the
    /// longest point of its weight taken so far, and its repetitions past its first look
    /// stop at its weight's part of what is left (split with the points
    /// still to come). The results of the points taken, in order; where
    /// some were left out, one warning says how many of `what` were
    /// measured.
    pub fn sweep<T, R>(
        &self,
        what: &str,
        points: Vec<(T, f64)>,
        mut one: impl FnMut(T) -> Result<R>,
    ) -> Result<Vec<R>> {
        let share_end = self.deadline_ns();
        let total = points.len();
        let mut weights_left: f64 = points.iter().map(|p| p.1).sum();
        let mut out = Vec::with_capacity(total);
        // The longest point taken so far of each weight: points of one
        // weight are of one kind, and the longest of its kind gauges the next.
        let mut longest: Vec<(f64, u64)> = Vec::new();
        for (i, (point, weight)) in points.into_iter().enumerate() {
            let now = self.clock.now_ns();
            let gauge = longest.iter().filter(|l| l.0 == weight).map(|l| l.1).max().unwrap_or(0);
            if share_end.is_some_and(|e| i > 0 && now.saturating_add(gauge) > e) {
                self.warn(Caution::SweepCut { what: what.to_string(), ran: i, of: total });
                break;
            }
            let part = if weights_left > 0.0 { (weight / weights_left).clamp(0.0, 1.0) } else { 1.0 };
            weights_left -= weight;
            self.set_deadline_ns(share_end.map(|e| now + (e.saturating_sub(now) as f64 * part) as u64));
            let result = one(point);
            self.set_deadline_ns(share_end);
            out.push(result?);
            longest.push((weight, self.clock.now_ns().saturating_sub(now)));
        }
        Ok(out)
    }

    /// [`Bench::sweep`] of points of equal weight.
    pub fn sweep_even<T, R>(&self, what: &str, points: Vec<T>, one: impl FnMut(T) -> Result<R>) -> Result<Vec<R>> {
        self.sweep(what, points.into_iter().map(|p| (p, 1.0)).collect(), one)
    }
}

/// A ladder's rungs in order of value: its first and last, then the rest
/// in order (one thread and every CPU, then the counts between).
pub fn ends_first<T: Copy + PartialEq>(ladder: &[T]) -> Vec<T> {
    let mut out: Vec<T> = ladder.first().into_iter().chain(ladder.last()).copied().collect();
    out.dedup();
    for &t in ladder {
        if !out.contains(&t) {
            out.push(t);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::timing::{Clock, FakeClock};

    #[test]
    fn shares_split_what_is_left_by_weight_less_what_is_owed() {
        let b = TimeBox { box_s: 60.0, since_ns: 10_000_000_000 };
        // 20 s in: 40 s left, 4 s owed, a weight of 1 of 4 gets 9 s.
        let now = 30_000_000_000;
        assert_eq!(b.share_end(now, 1.0, 4.0, 4.0, 0.0), Some(now + 9_000_000_000));
        // The last job gets all that is left; one past the box, with no
        // more than is owed left, or with less than its nominal part, none.
        assert_eq!(b.share_end(now, 2.0, 2.0, 0.0, 40.0), Some(now + 40_000_000_000));
        assert_eq!(b.share_end(80_000_000_000, 1.0, 1.0, 0.0, 0.0), None);
        assert_eq!(b.share_end(now, 1.0, 1.0, 40.0, 0.0), None);
        assert_eq!(b.share_end(now, 1.0, 1.0, 0.0, 40.5), None);
        assert_eq!(b.overrun(70_000_000_000), None);
        let Some(Caution::BoxOverrun { took_s, .. }) = b.overrun(71_000_000_000) else { panic!() };
        assert!((took_s - 61.0).abs() < 1e-9, "{took_s}");
        let owed = Owed { reference_point_s: 1.5, clock_readings_s: 0.1 };
        assert!((owed.seconds(2, 5) - (3.0 + 0.5 + REPORT_S)).abs() < 1e-12);
    }

    #[test]
    fn a_ladder_is_taken_ends_first() {
        assert_eq!(ends_first(&[1, 2, 4, 8, 16]), vec![1, 16, 2, 4, 8]);
        assert_eq!(ends_first(&[1, 2]), vec![1, 2]);
        assert_eq!(ends_first(&[1]), vec![1]);
        assert_eq!(ends_first::<usize>(&[]), Vec::<usize>::new());
    }

    /// A share of 7 s: a point of weight 2 that takes 4 s, then points of
    /// weight 1 that take 1 s. The heavy point does not gauge the light
    /// ones: three of them start (the last with 1 s left, its kind's
    /// longest), the fourth would end past the share, and the warning says
    /// 4 of 5. Each point may look until its weight's part of what is left.
    #[test]
    fn a_sweep_takes_its_points_in_order_while_the_share_holds_one_of_their_kind() {
        let m = crate::test_support::claiming_l3(crate::units::Bytes(1 << 34), 1 << 20, Vec::new());
        let clock = FakeClock::stepping(vec![0]);
        let ctx = Bench::new(&m, &clock, &super::super::NoProgress).until(Some(7_000_000_000));
        let mut splits = Vec::new();
        let points = vec![(10, 2.0), (20, 1.0), (30, 1.0), (40, 1.0), (50, 1.0)];
        let taken = ctx
            .sweep("sizes", points, |x| {
                splits.push(ctx.deadline_ns().unwrap() - clock.now_ns());
                clock.advance_ns(if x == 10 { 4_000_000_000 } else { 1_000_000_000 });
                Ok(x)
            })
            .unwrap();
        assert_eq!(taken, vec![10, 20, 30, 40]);
        assert_eq!(splits, vec![7_000_000_000 / 3, 750_000_000, 2_000_000_000 / 3, 500_000_000]);
        assert_eq!(ctx.deadline_ns(), Some(7_000_000_000), "the share is put back");
        let w = ctx.take_warnings();
        assert_eq!(w.len(), 1);
        assert!(w[0].message.contains("4 of 5"), "{}", w[0].message);
        // Without a time box every point runs and nothing is said.
        let free = Bench::new(&m, &clock, &super::super::NoProgress);
        assert_eq!(free.sweep_even("sizes", vec![1, 2, 3], Ok).unwrap(), vec![1, 2, 3]);
        assert!(free.take_warnings().is_empty());
    }
}
