//! How far the host moved during a run: one reference measured at the
//! start of a suite, after every third experiment and at its end; across
//! each experiment, from the points before and after it; and, between two
//! runs of the same reference, how far it moved from one to the other.

use crate::units::Bytes;
use serde::{Deserialize, Serialize};

/// Movement of a reference beyond which the host is said to have moved:
/// an absolute figure taken across such a move may differ by as much in
/// the next run. Paired verdicts, whose arms share each repetition, are
/// not withheld for it.
pub const HOST_MOVED_LIMIT: f64 = 0.10;

/// The reference at several moments of one run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct HostDrift {
    /// The region the reference reads and chases: the same every run on a
    /// machine (sized from its plausible cache claims and memory budget).
    pub size_bytes: Bytes,
    /// Threads of the all-CPU read, one on each CPU the run may use (absent
    /// on one CPU, and in documents from before it was measured).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub all_threads: Option<usize>,
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
    /// B/s of each timed pass of every CPU reading its share of the region
    /// at once: where the host places the vCPUs shows here, not in the
    /// one-thread read.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub all_read_bytes_per_s: Vec<f64>,
    /// ns per call of each timed sample of a call chain through the PLT,
    /// 4096 deep, on CPU 0: a core's own work, no memory traffic. What a
    /// neighbour sharing the core (or the host's clock) does to figures of
    /// that kind shows here and not in the read or the chase (absent in
    /// documents from before it was measured).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub call_ns: Vec<f64>,
    /// ns per system call of each timed sample of a loop reading the
    /// thread's signal mask (`rt_sigprocmask`, what `sigsetjmp(env, 1)`
    /// adds), on the first CPU the run may use: the kernel's entry and exit, which a host moves
    /// apart from the core's own work and from memory (its interrupts, its
    /// mitigations on a guest's exits, a neighbour's kernel). Absent in
    /// documents from before it was measured.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub syscall_ns: Vec<f64>,
    /// ns per load of each timed sample of the same random chase over a
    /// region of the same size on 4 KiB pages, on the same CPU: every load
    /// also walks the page tables (and, on a guest, the host's tables
    /// behind them), whose cost the host moves apart from memory's. The
    /// fresh region's frames may move it too, so how many of its pages
    /// share each 2 MiB block is recorded beside it. Absent where the
    /// reference's own chase is already on 4 KiB pages (no THP), and in
    /// documents from before it was measured.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub chase_4k_ns: Vec<f64>,
    /// How many of that region's pages share each 2 MiB block of physical
    /// memory their frames touch (on a guest the host backs its memory in
    /// such blocks); absent where frames cannot be read (not root) or it
    /// was not measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chase_4k_pages_per_block: Option<f64>,
}

impl DriftPoint {
    pub fn read_median(&self) -> Option<f64> {
        crate::timing::stats::median(&self.read_bytes_per_s)
    }
    pub fn chase_median(&self) -> Option<f64> {
        crate::timing::stats::median(&self.chase_ns)
    }
    pub fn all_read_median(&self) -> Option<f64> {
        crate::timing::stats::median(&self.all_read_bytes_per_s)
    }
    pub fn call_median(&self) -> Option<f64> {
        crate::timing::stats::median(&self.call_ns)
    }
    pub fn syscall_median(&self) -> Option<f64> {
        crate::timing::stats::median(&self.syscall_ns)
    }
    pub fn chase_4k_median(&self) -> Option<f64> {
        crate::timing::stats::median(&self.chase_4k_ns)
    }
}

/// How far the host moved across two runs' references of one region,
/// (largest / smallest − 1) of both runs' points together: for one thread
/// (the read or the chase, the larger), and for every CPU reading at once. `None` where one lacks
/// the quantity (or, for every CPU, they ran on different CPU counts).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Between {
    pub one_thread: Option<f64>,
    pub all_threads: Option<f64>,
    /// The call chain's range over both runs' points (figures of a core's
    /// own work).
    pub calls: Option<f64>,
    /// The system call's range over both runs' points (figures that enter
    /// the kernel).
    pub kernel: Option<f64>,
    /// The chase on 4 KiB pages' range over both runs' points (figures
    /// whose loads walk 4 KiB page tables).
    pub walks_4k: Option<f64>,
}

/// (larger / smaller − 1) of a spread of positive values; `None` with
/// fewer than two.
fn spread(v: &[f64]) -> Option<f64> {
    let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = v.iter().copied().fold(0.0, f64::max);
    (v.len() >= 2 && lo > 0.0).then(|| hi / lo - 1.0)
}

impl HostDrift {
    /// How far each quantity's medians lie apart over the run: (largest /
    /// smallest − 1) for the read and for the chase, each `None` with
    /// fewer than two points that have it; `None` when neither has.
    pub fn moved(&self) -> Option<(Option<f64>, Option<f64>)> {
        let read = spread(&self.medians(DriftPoint::read_median));
        let chase = spread(&self.medians(DriftPoint::chase_median));
        (read.is_some() || chase.is_some()).then_some((read, chase))
    }

    /// How far the all-CPU read's medians lie apart over the run: where
    /// the host placed the vCPUs, which a figure of more than one thread
    /// carries and one of one thread does not.
    pub fn all_read_moved(&self) -> Option<f64> {
        spread(&self.medians(DriftPoint::all_read_median))
    }

    /// The side references' moves, each named as the run's summaries name
    /// it: the call chain, the system call, the chase on 4 KiB pages.
    pub fn side_moves(&self) -> [(&'static str, Option<f64>); 3] {
        [
            ("the call chain", self.calls_moved()),
            ("the system call", self.kernel_moved()),
            ("the chase on 4 KiB pages", self.walks_4k_moved()),
        ]
    }

    /// How far the call chain's medians lie apart over the run: what
    /// figures of a core's own work (calls, context saves) carry.
    pub fn calls_moved(&self) -> Option<f64> {
        spread(&self.medians(DriftPoint::call_median))
    }

    /// How far the system call's medians lie apart over the run: what
    /// figures that enter the kernel (a save of the signal mask, and a
    /// ratio of such a figure over one that does not) carry.
    pub fn kernel_moved(&self) -> Option<f64> {
        spread(&self.medians(DriftPoint::syscall_median))
    }

    /// How far the chase on 4 KiB pages' medians lie apart over the run:
    /// what figures whose loads walk 4 KiB page tables (a random chase on
    /// 4 KiB pages, and a ratio of one over huge pages) carry beyond the
    /// reference's own chase.
    pub fn walks_4k_moved(&self) -> Option<f64> {
        spread(&self.medians(DriftPoint::chase_4k_median))
    }

    /// The larger movement of one thread's two quantities: what the run's
    /// verdicts (each between variants on one thread) are judged against.
    pub fn moved_most(&self) -> Option<f64> {
        self.moved().and_then(|(r, c)| r.into_iter().chain(c).reduce(f64::max))
    }

    /// The reference around experiment `index` (0-based, in the order
    /// run): the last point taken before it started and the first taken
    /// after it ended. `None` where either is missing.
    pub fn around(&self, index: usize) -> Option<HostDrift> {
        let before = self.points.iter().rfind(|p| p.after_experiments <= index)?;
        let after = self.points.iter().find(|p| p.after_experiments > index)?;
        Some(HostDrift { points: vec![before.clone(), after.clone()], ..self.clone() })
    }

    /// Each point's median of one quantity, where the point has it.
    fn medians(&self, of: fn(&DriftPoint) -> Option<f64>) -> Vec<f64> {
        self.points.iter().filter_map(of).collect()
    }

    /// How far the host moved across this run and `other`: the spread of
    /// both runs' point medians together, per quantity (the all-CPU read
    /// only on as many CPUs). A figure taken at any moment of either run
    /// lies within that range of the host, so no smaller difference
    /// between the runs is the figure's own. `None` where the two read
    /// different regions, which no comparison can span.
    pub fn between(&self, other: &HostDrift) -> Option<Between> {
        if self.size_bytes != other.size_bytes {
            return None;
        }
        let apart = |of: fn(&DriftPoint) -> Option<f64>| {
            let (a, b) = (self.medians(of), other.medians(of));
            (!a.is_empty() && !b.is_empty()).then(|| spread(&[a, b].concat())).flatten()
        };
        let one = [apart(DriftPoint::read_median), apart(DriftPoint::chase_median)];
        let all = (self.all_threads.is_some() && self.all_threads == other.all_threads)
            .then(|| apart(DriftPoint::all_read_median))
            .flatten();
        Some(Between {
            one_thread: one.into_iter().flatten().reduce(f64::max),
            all_threads: all,
            calls: apart(DriftPoint::call_median),
            kernel: apart(DriftPoint::syscall_median),
            walks_4k: apart(DriftPoint::chase_4k_median),
        })
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
        let all: Vec<String> =
            self.points.iter().filter_map(|p| p.all_read_median()).map(|b| format!("{:.1}", b / 1e9)).collect();
        let all = match self.all_threads {
            Some(n) if !all.is_empty() => format!(", {n} threads reading {} GB/s", all.join(", ")),
            _ => String::new(),
        };
        let calls: Vec<String> =
            self.points.iter().filter_map(|p| p.call_median()).map(|n| format!("{n:.2}")).collect();
        let calls =
            if calls.is_empty() { String::new() } else { format!(", calling through the PLT {} ns", calls.join(", ")) };
        let syscalls: Vec<String> =
            self.points.iter().filter_map(|p| p.syscall_median()).map(|n| format!("{n:.0}")).collect();
        let syscalls = if syscalls.is_empty() {
            String::new()
        } else {
            format!(", entering the kernel {} ns", syscalls.join(", "))
        };
        let walks: Vec<String> =
            self.points.iter().filter_map(|p| p.chase_4k_median()).map(|n| format!("{n:.0}")).collect();
        let blocks: Vec<String> = self
            .points
            .iter()
            .filter(|p| p.chase_4k_median().is_some())
            .filter_map(|p| p.chase_4k_pages_per_block)
            .map(|b| format!("{b:.0}"))
            .collect();
        let blocks = if blocks.len() == walks.len() {
            format!(" (on {} pages per 2 MiB block)", blocks.join(", "))
        } else {
            String::new()
        };
        let walks = if walks.is_empty() {
            String::new()
        } else {
            format!(", chasing on 4 KiB pages {} ns{blocks}", walks.join(", "))
        };
        format!(
            "one thread reading {} {}, chasing {}{walks}{all}{calls}{syscalls}, after {after} experiments",
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
        DriftPoint {
            after_experiments: after,
            read_bytes_per_s: vec![gbps * 1e9; 3],
            chase_ns: vec![ns; 3],
            all_read_bytes_per_s: Vec::new(),
            call_ns: Vec::new(),
            syscall_ns: Vec::new(),
            chase_4k_ns: Vec::new(),
            chase_4k_pages_per_block: None,
        }
    }

    fn with_all(mut p: DriftPoint, gbps: f64) -> DriftPoint {
        p.all_read_bytes_per_s = vec![gbps * 1e9, gbps * 1e9 * 1.01, gbps * 1e9 * 0.99];
        p
    }

    #[test]
    fn movement_is_the_spread_of_the_medians() {
        let d = HostDrift {
            size_bytes: Bytes(1 << 28),
            all_threads: None,
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

    /// Each experiment lies between the last point before it and the first
    /// after it: the suite takes points after 0, 3, 6 and 8 of 8 here.
    #[test]
    fn the_points_around_each_experiment() {
        let d = HostDrift {
            size_bytes: Bytes(1 << 28),
            all_threads: None,
            points: vec![point(0, 40.0, 140.0), point(3, 40.0, 140.0), point(6, 30.0, 140.0), point(8, 31.0, 140.0)],
        };
        let after = |i: usize| d.around(i).map(|a| a.points.iter().map(|p| p.after_experiments).collect::<Vec<_>>());
        assert_eq!(
            (after(0), after(2), after(3), after(5), after(7)),
            (Some(vec![0, 3]), Some(vec![0, 3]), Some(vec![3, 6]), Some(vec![3, 6]), Some(vec![6, 8]))
        );
        assert_eq!(after(8), None, "no point after the last experiment's end");
        assert!(!d.around(1).unwrap().host_moved() && d.around(4).unwrap().host_moved());
        assert_eq!(HostDrift { points: vec![point(0, 40.0, 140.0)], ..d }.around(0), None);
    }

    /// The all-CPU read's movement is its own (the one-thread verdicts do
    /// not rest on it), and is said; two runs are compared by their levels, the all-CPU read only
    /// on as many CPUs, nothing across different regions.
    #[test]
    fn all_cpus_and_two_runs_of_one_reference() {
        let a = HostDrift {
            size_bytes: Bytes(1 << 28),
            all_threads: Some(2),
            points: vec![with_all(point(0, 40.0, 140.0), 80.0), with_all(point(6, 40.0, 140.0), 70.0)],
        };
        assert!((a.all_read_moved().unwrap() - 80.0 / 70.0 + 1.0).abs() < 1e-12);
        assert!(!a.host_moved(), "the all-CPU read moved 14%, the one-thread verdicts' reference not at all");
        assert!(a.describe().contains("chasing 140, 140 ns, 2 threads reading 80.0, 70.0 GB/s"), "{}", a.describe());
        // B: one thread 10% slower at reading (40 against 44), the chase
        // the same, every CPU reading at 50 where A's read 80 and 70.
        let b = HostDrift {
            points: vec![with_all(point(0, 44.0, 140.0), 50.0), with_all(point(6, 44.0, 140.0), 50.0)],
            ..a.clone()
        };
        let between = a.between(&b).unwrap();
        assert!((between.one_thread.unwrap() - 0.1).abs() < 1e-12, "{between:?}");
        assert!((between.all_threads.unwrap() - 0.6).abs() < 1e-12, "{between:?}");
        assert_eq!(b.between(&a), Some(between), "either way round");
        let fewer = HostDrift { all_threads: Some(4), ..b.clone() };
        assert_eq!(a.between(&fewer).unwrap().all_threads, None, "2 CPUs against 4 is no reference");
        let elsewhere = HostDrift { size_bytes: Bytes(1 << 27), ..b };
        assert_eq!(a.between(&elsewhere), None);
    }

    /// Two runs whose one-thread levels lie 9.6% apart, the second slow
    /// at its start: the host ranged 16% across them, and a figure taken
    /// at that start may be 16% off the first run's without a change.
    #[test]
    fn between_two_runs_is_the_range_of_both() {
        let run = |gbps: [f64; 3]| HostDrift {
            size_bytes: Bytes(1 << 28),
            all_threads: None,
            points: gbps.iter().enumerate().map(|(i, &g)| point(6 * i, g, 150.0)).collect(),
        };
        let (a, b) = (run([43.3, 43.6, 42.9]), run([37.6, 41.2, 39.5]));
        let between = a.between(&b).unwrap();
        assert!((between.one_thread.unwrap() - (43.6 / 37.6 - 1.0)).abs() < 1e-12, "{between:?}");
        assert!(b.moved_most().unwrap() < 0.1, "within the second run alone, under 10%");
    }

    /// The call chain moves on its own: within a run, between two runs,
    /// and in what is said; the one-thread verdicts do not rest on it.
    #[test]
    fn the_call_chain_is_a_reference_of_its_own() {
        let calling = |p: DriftPoint, ns: f64| DriftPoint { call_ns: vec![ns, ns * 1.01, ns * 0.99], ..p };
        let a = HostDrift {
            size_bytes: Bytes(1 << 28),
            all_threads: None,
            points: vec![calling(point(0, 40.0, 140.0), 4.5), calling(point(6, 40.0, 140.0), 5.0)],
        };
        assert!((a.calls_moved().unwrap() - 5.0 / 4.5 + 1.0).abs() < 1e-12);
        assert!(!a.host_moved(), "the memory reference held");
        assert!(a.describe().contains("calling through the PLT 4.50, 5.00 ns"), "{}", a.describe());
        let b = HostDrift { points: vec![calling(point(0, 40.0, 140.0), 5.2)], ..a.clone() };
        let between = a.between(&b).unwrap();
        assert!((between.calls.unwrap() - 5.2 / 4.5 + 1.0).abs() < 1e-12, "{between:?}");
        assert_eq!(between.one_thread, Some(0.0));
        let old = HostDrift { points: vec![point(0, 40.0, 140.0)], ..a.clone() };
        assert_eq!((old.calls_moved(), a.between(&old).unwrap().calls), (None, None), "a document before it");
    }

    /// The system call moves on its own too: within a run, between two
    /// runs, in what is said; neither the memory verdicts nor the call
    /// chain rest on it.
    #[test]
    fn entering_the_kernel_is_a_reference_of_its_own() {
        let entering = |p: DriftPoint, ns: f64| DriftPoint { syscall_ns: vec![ns * 0.98, ns, ns * 1.2], ..p };
        let a = HostDrift {
            size_bytes: Bytes(1 << 28),
            all_threads: None,
            points: vec![entering(point(0, 40.0, 140.0), 180.0), entering(point(6, 40.0, 140.0), 225.0)],
        };
        assert!((a.kernel_moved().unwrap() - 0.25).abs() < 1e-12, "the medians' spread, not the samples'");
        assert!(!a.host_moved() && a.calls_moved().is_none(), "memory held; no call chain");
        assert!(a.describe().contains("entering the kernel 180, 225 ns"), "{}", a.describe());
        let b = HostDrift { points: vec![entering(point(0, 40.0, 140.0), 162.0)], ..a.clone() };
        assert!((a.between(&b).unwrap().kernel.unwrap() - 225.0 / 162.0 + 1.0).abs() < 1e-12);
        let old = HostDrift { points: vec![point(0, 40.0, 140.0)], ..a.clone() };
        assert_eq!((old.kernel_moved(), a.between(&old).unwrap().kernel), (None, None), "a document before it");
    }

    /// The chase on 4 KiB pages moves on its own too: within a run,
    /// between two runs, in what is said; the one-thread verdicts (the
    /// read and the chase on the reference's own pages) do not rest on it.
    #[test]
    fn walking_4k_page_tables_is_a_reference_of_its_own() {
        let walking = |p: DriftPoint, ns: f64| DriftPoint { chase_4k_ns: vec![ns, ns * 1.3, ns * 0.97], ..p };
        let a = HostDrift {
            size_bytes: Bytes(1 << 28),
            all_threads: None,
            points: vec![walking(point(0, 40.0, 150.0), 180.0), walking(point(6, 40.0, 150.0), 207.0)],
        };
        assert!((a.walks_4k_moved().unwrap() - 0.15).abs() < 1e-12, "the medians' spread, not the samples'");
        assert!(!a.host_moved() && a.kernel_moved().is_none(), "memory held; no system call");
        assert!(a.describe().contains("chasing 150, 150 ns, chasing on 4 KiB pages 180, 207 ns,"), "{}", a.describe());
        let mut dense = a.clone();
        dense.points.iter_mut().zip([19.6, 44.8]).for_each(|(p, b)| p.chase_4k_pages_per_block = Some(b));
        let said = dense.describe();
        assert!(said.contains("chasing on 4 KiB pages 180, 207 ns (on 20, 45 pages per 2 MiB block)"), "{said}");
        dense.points[1].chase_4k_pages_per_block = None;
        assert!(!dense.describe().contains("block"), "one point's frames unread: none said");
        let b = HostDrift { points: vec![walking(point(0, 40.0, 150.0), 171.0)], ..a.clone() };
        assert!((a.between(&b).unwrap().walks_4k.unwrap() - 207.0 / 171.0 + 1.0).abs() < 1e-12);
        let old = HostDrift { points: vec![point(0, 40.0, 150.0)], ..a.clone() };
        assert_eq!((old.walks_4k_moved(), a.between(&old).unwrap().walks_4k), (None, None), "a document before it");
        assert!(!old.describe().contains("4 KiB"), "{}", old.describe());
    }
}
