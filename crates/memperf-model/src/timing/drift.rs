//! How far the host moved during a run: one reference measured at the
//! start, the middle and the end of a suite.

use crate::units::Bytes;
use serde::{Deserialize, Serialize};

/// Movement of a reference beyond which the run's verdicts are withheld:
/// a comparison whose two sides could have been taken this far apart in
/// the host's state would not hold in the next run.
pub const HOST_MOVED_LIMIT: f64 = 0.10;

/// The reference at several moments of one run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct HostDrift {
    /// The region the reference reads and chases (memory where the probe
    /// verified it).
    pub size_bytes: Bytes,
    /// In the order taken.
    pub points: Vec<DriftPoint>,
}

/// The reference once: one thread's sequential read (bandwidth's `simd`)
/// and one dependent random chase over the same region, on CPU 0.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DriftPoint {
    /// Experiments finished when it was taken.
    pub after_experiments: usize,
    /// B/s of each timed read pass.
    pub read_bytes_per_s: Vec<f64>,
    /// ns per load of each timed chase sample.
    pub chase_ns: Vec<f64>,
}

impl DriftPoint {
    pub fn read_median(&self) -> Option<f64> {
        crate::timing::stats::median(&self.read_bytes_per_s)
    }
    pub fn chase_median(&self) -> Option<f64> {
        crate::timing::stats::median(&self.chase_ns)
    }
}

impl HostDrift {
    /// How far each quantity's medians lie apart over the run: (largest /
    /// smallest − 1) for the read and for the chase, each `None` with
    /// fewer than two points that have it; `None` when neither has.
    pub fn moved(&self) -> Option<(Option<f64>, Option<f64>)> {
        let spread = |v: Vec<f64>| {
            let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = v.iter().copied().fold(0.0, f64::max);
            (v.len() >= 2 && lo > 0.0).then(|| hi / lo - 1.0)
        };
        let read = spread(self.points.iter().filter_map(DriftPoint::read_median).collect());
        let chase = spread(self.points.iter().filter_map(DriftPoint::chase_median).collect());
        (read.is_some() || chase.is_some()).then_some((read, chase))
    }

    /// The larger of the two movements.
    pub fn moved_most(&self) -> Option<f64> {
        self.moved().and_then(|(r, c)| r.into_iter().chain(c).reduce(f64::max))
    }

    /// Beyond [`HOST_MOVED_LIMIT`].
    pub fn host_moved(&self) -> bool {
        self.moved_most().is_some_and(|m| m > HOST_MOVED_LIMIT)
    }

    /// "one thread reading 256MiB 43.1, 41.9, 44.0 GB/s, chasing 141,
    /// 139, 150 ns, after 0, 6 and 12 experiments".
    pub fn describe(&self) -> String {
        let read: Vec<String> =
            self.points.iter().filter_map(|p| p.read_median()).map(|b| format!("{:.1}", b / 1e9)).collect();
        let chase: Vec<String> =
            self.points.iter().filter_map(|p| p.chase_median()).map(|n| format!("{n:.0}")).collect();
        let after: Vec<String> = self.points.iter().map(|p| p.after_experiments.to_string()).collect();
        let after = match after.split_last() {
            Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
            _ => after.join(""),
        };
        let or_not = |v: Vec<String>, unit: &str| {
            if v.is_empty() {
                "not measured".to_string()
            } else {
                format!("{} {unit}", v.join(", "))
            }
        };
        format!(
            "one thread reading {} {}, chasing {}, after {after} experiments",
            self.size_bytes,
            or_not(read, "GB/s"),
            or_not(chase, "ns")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(after: usize, gbps: f64, ns: f64) -> DriftPoint {
        DriftPoint { after_experiments: after, read_bytes_per_s: vec![gbps * 1e9; 3], chase_ns: vec![ns; 3] }
    }

    #[test]
    fn movement_is_the_spread_of_the_medians() {
        let d = HostDrift {
            size_bytes: Bytes(1 << 28),
            points: vec![point(0, 40.0, 140.0), point(6, 43.6, 140.0), point(12, 40.0, 147.0)],
        };
        let (read, chase) = d.moved().unwrap();
        assert!((read.unwrap() - 0.09).abs() < 1e-12 && (chase.unwrap() - 0.05).abs() < 1e-12);
        assert!(d.describe().ends_with("after 0, 6 and 12 experiments"), "{}", d.describe());
        assert!(!d.host_moved(), "9% is within the limit");
        let far = HostDrift { points: vec![point(0, 40.0, 140.0), point(6, 30.0, 140.0)], ..d.clone() };
        assert!(far.host_moved());
        assert!(far.describe().contains("40.0, 30.0 GB/s"), "{}", far.describe());
        assert_eq!(HostDrift { points: vec![point(0, 40.0, 140.0)], ..d }.moved(), None);
    }
}
