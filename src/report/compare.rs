//! `memperf compare A B`: the headline metrics of two documents side by
//! side, for people (a table) and for CI (`--json`, and an exit status
//! when a headline got worse beyond the noise and beyond a threshold, like
//! google/benchmark's compare.py). Documents from different CPUs are said
//! to be so first: their differences are the machines', not a change.

use super::headlines::Headline;
use crate::analysis::mann_whitney::{test, Verdict};
use crate::model::document::Document;
use memperf_model::timing::drift::{HostDrift, HOST_MOVED_LIMIT};
use serde::{Deserialize, Serialize};

/// One side of the comparison.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Side {
    pub hostname: String,
    pub started_utc: String,
    pub run_id: String,
    pub cpu: String,
}

impl Side {
    fn of(d: &Document) -> Side {
        let id = &d.machine.cpu.identity;
        // Names from a document are data: one line each, no control bytes.
        let safe = crate::report::sink::one_line;
        Side {
            hostname: safe(&d.origin.hostname),
            started_utc: safe(&d.origin.started_utc),
            run_id: safe(&d.origin.run_id),
            cpu: safe(&format!("{} (family {} model {})", id.model_name, id.family, id.model)),
        }
    }
}

/// What the raw samples say about one metric.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum RowVerdict {
    /// B better, beyond the noise (two-sided Mann–Whitney, 5%).
    Better {
        p: f64,
    },
    /// B worse, beyond the noise.
    Worse {
        p: f64,
    },
    WithinNoise {
        p: f64,
    },
    /// No outcome of the test could reach 5% with these sample counts.
    TooFewSamples {
        smallest_possible_p: f64,
    },
}

impl RowVerdict {
    /// The verdict as the table and the HTML page say it.
    pub fn describe(&self) -> String {
        match self {
            RowVerdict::Better { p } => format!("B better, beyond the noise (p = {p:.3})"),
            RowVerdict::Worse { p } => format!("B worse, beyond the noise (p = {p:.3})"),
            RowVerdict::WithinNoise { p } => format!("within the noise (p = {p:.2})"),
            RowVerdict::TooFewSamples { smallest_possible_p } => {
                format!("too few samples to tell (best possible p = {smallest_possible_p:.2})")
            }
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Row {
    /// The metric's join key (`id{label=value,…}`): the same in every run.
    pub key: String,
    /// Its name as a person reads it.
    pub metric: String,
    pub unit: String,
    /// Median of the raw samples (the recorded value where there are none).
    pub a: f64,
    pub b: f64,
    /// b / a.
    pub ratio: f64,
    /// How much worse B is, in percent (negative: better).
    pub worse_by_pct: f64,
    pub verdict: RowVerdict,
    /// How far the host moved that this metric must be worse by, in
    /// percent: within either run, and between them (the all-CPU
    /// reference too for a metric of more than one thread).
    /// `None`: neither document recorded a reference.
    #[serde(default)]
    pub host_floor_pct: Option<f64>,
    /// That movement was beyond the 10% a run's own verdicts allow: the
    /// host changed under the figure (for one of more CPUs: where it
    /// placed them), and no difference of it is judged.
    #[serde(default)]
    pub host_withholds: bool,
    /// How far the figure's own samples spread within one run, in
    /// percent: the middle half's width over the median, the larger of
    /// the two documents (`None` where neither has 4 samples).
    /// What a figure does inside one run (a page table's placement, a
    /// bimodal cell) it may do between runs: no regression smaller.
    #[serde(default)]
    pub own_spread_pct: Option<f64>,
    /// That spread was beyond the 10% a run's own verdicts allow: the
    /// figure is unstable within a run, and no difference of it is judged.
    #[serde(default)]
    pub unstable: bool,
    /// Both runs recorded a reference, of different regions: how far the
    /// host moved between them is not measured, and no difference of the
    /// figure is judged.
    #[serde(default)]
    pub between_unmeasured: bool,
    /// Worse beyond the noise, beyond how far the host moved and the
    /// figure's own spread, and by more than the threshold asked for.
    pub regression: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    pub a: Side,
    pub b: Side,
    pub same_cpu: bool,
    /// `--fail-on-regression PCT`, if given.
    pub threshold_pct: Option<f64>,
    /// How far the host moved within either run (its reference at start,
    /// middle and end), in percent, where the documents recorded it: a
    /// metric worse by no more than that is not called a regression.
    #[serde(default)]
    pub host_moved_pct: Option<f64>,
    /// How far the host moved across A and B, in percent: the two documents'
    /// references (the same region) compared, one thread (read or chase)
    /// and every CPU reading at once, where both recorded them.
    #[serde(default)]
    pub host_between_one_thread_pct: Option<f64>,
    /// How far every CPU reading at once moved within either run, in
    /// percent (counted for metrics of more than one thread).
    #[serde(default)]
    pub host_moved_all_threads_pct: Option<f64>,
    /// The same with every CPU reading at once (counted for metrics of
    /// more than one CPU).
    #[serde(default)]
    pub host_between_all_threads_pct: Option<f64>,
    /// Why the two runs' references could not be set side by side (they
    /// read different regions), where both documents have one.
    #[serde(default)]
    pub host_between_not_compared: Option<String>,
    /// The one document ("A" or "B") that recorded a host reference, where
    /// only one did: the move between the runs is then unmeasured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_reference_only_in: Option<String>,
    /// How far the reference's call chain moved within either run, in
    /// percent (counted for figures of a core's own work: calls, context).
    #[serde(default)]
    pub host_calls_moved_pct: Option<f64>,
    /// The same from A to B.
    #[serde(default)]
    pub host_calls_between_pct: Option<f64>,
    /// How far the reference's system call moved within either run, in
    /// percent (counted for figures that enter the kernel).
    #[serde(default)]
    pub host_kernel_moved_pct: Option<f64>,
    /// The same from A to B.
    #[serde(default)]
    pub host_kernel_between_pct: Option<f64>,
    /// How far the reference's chase on 4 KiB pages moved within either
    /// run, in percent (counted for figures whose loads walk 4 KiB page
    /// tables).
    #[serde(default)]
    pub host_walks_4k_moved_pct: Option<f64>,
    /// The same from A to B.
    #[serde(default)]
    pub host_walks_4k_between_pct: Option<f64>,
    pub rows: Vec<Row>,
    /// Metrics in one document only, or without a usable value.
    pub left_out: Vec<String>,
}

impl Comparison {
    pub fn regressions(&self) -> impl Iterator<Item = &Row> {
        self.rows.iter().filter(|r| r.regression)
    }

    /// Rows worse beyond the noise and by more than the threshold that
    /// were not judged (the host moved under them, they are unstable, or
    /// the host's move between the runs is not measured): each may be a
    /// regression that passes unseen. None without a threshold.
    pub fn unjudged_worse(&self) -> impl Iterator<Item = &Row> {
        self.rows.iter().filter(|r| {
            matches!(r.verdict, RowVerdict::Worse { .. })
                && !r.regression
                && (r.host_withholds || r.unstable || r.between_unmeasured)
                && self.threshold_pct.is_some_and(|t| r.worse_by_pct > t)
        })
    }
}

/// The median of the samples, else the recorded value.
fn central(m: &Headline) -> f64 {
    crate::timing::stats::median(&m.samples).unwrap_or(m.value)
}

/// Why a metric's raw samples cannot carry a comparison: none at all, or
/// one that is zero, negative or not a number (a timing never is).
fn unusable(m: &Headline, side: &str) -> Option<String> {
    if m.samples.is_empty() {
        return Some(format!("no raw samples in {side}"));
    }
    m.samples
        .iter()
        .any(|v| !(v.is_finite() && *v > 0.0))
        .then(|| format!("a raw sample in {side} is zero, negative or not a number"))
}

/// How far `m`'s samples spread within its run, in percent of their
/// median: the middle half (first to third quartile), so that one late
/// sample does not count and a bimodal figure does. `None` with fewer
/// than 4 samples, where quartiles say nothing.
fn own_spread_pct(m: &Headline) -> Option<f64> {
    if m.samples.len() < 4 {
        return None;
    }
    let q = |p| crate::timing::stats::quantile(&m.samples, p);
    Some((q(0.75)? - q(0.25)?) / q(0.5)? * 100.0)
}

/// A headline's key without its `memory` label (dram or not-verified).
fn without_memory(m: &Headline) -> String {
    let mut m = m.clone();
    m.labels.remove("memory");
    m.key()
}

/// How far the host moved, in percent: within either run (the larger),
/// and from A to B for one thread and for every CPU; or why A and B's
/// references could not be set side by side.
struct HostMoves {
    within: Option<f64>,
    within_all: Option<f64>,
    one: Option<f64>,
    all: Option<f64>,
    /// The call chain, within either run and from A to B.
    calls_within: Option<f64>,
    calls_between: Option<f64>,
    /// The system call, within either run and from A to B.
    kernel_within: Option<f64>,
    kernel_between: Option<f64>,
    /// The chase on 4 KiB pages, within either run and from A to B.
    walks_within: Option<f64>,
    walks_between: Option<f64>,
    not_compared: Option<String>,
    only_in: Option<&'static str>,
}

impl HostMoves {
    /// Neither document measured the host.
    #[cfg(test)]
    const NONE: HostMoves = HostMoves {
        within: None,
        within_all: None,
        one: None,
        all: None,
        calls_within: None,
        calls_between: None,
        kernel_within: None,
        kernel_between: None,
        walks_within: None,
        walks_between: None,
        not_compared: None,
        only_in: None,
    };

    fn of(da: &Document, db: &Document) -> HostMoves {
        let pct = |of: fn(&HostDrift) -> Option<f64>| {
            [da, db].iter().filter_map(|d| d.host_drift.as_ref().and_then(of)).reduce(f64::max).map(|m| m * 100.0)
        };
        let (between, not_compared, only_in) = match (&da.host_drift, &db.host_drift) {
            (Some(a), Some(b)) => match a.between(b) {
                Some(x) => (x, None, None),
                None => (
                    Default::default(),
                    Some(format!(
                        "the two references read different regions ({} and {}): how far the host moved between \
                         the runs is not measured",
                        a.size_bytes, b.size_bytes
                    )),
                    None,
                ),
            },
            // One reference, or none: the move between the runs is
            // unmeasured as where neither document has one, and the rows
            // are judged as there (against the one run's own move, where
            // it has it), the summary saying so: a document of one
            // experiment can be held against a suite run.
            (Some(_), None) => (Default::default(), None, Some("A")),
            (None, Some(_)) => (Default::default(), None, Some("B")),
            (None, None) => Default::default(),
        };
        HostMoves {
            within: pct(HostDrift::moved_most),
            // The reference's points, or between them an experiment's
            // two phases (`placement`), whichever moved further.
            within_all: [da, db]
                .iter()
                .filter_map(|d| super::placement::every_cpu_moved(d))
                .map(|m| m.fraction * 100.0)
                .reduce(f64::max),
            one: between.one_thread.map(|m| m * 100.0),
            all: between.all_threads.map(|m| m * 100.0),
            calls_within: pct(HostDrift::calls_moved),
            calls_between: between.calls.map(|m| m * 100.0),
            kernel_within: pct(HostDrift::kernel_moved),
            kernel_between: between.kernel.map(|m| m * 100.0),
            walks_within: pct(HostDrift::walks_4k_moved),
            walks_between: between.walks_4k.map(|m| m * 100.0),
            not_compared,
            only_in,
        }
    }

    /// What a metric must be worse by, from its two documents' headlines
    /// `x` and `y` (a run's traffic CPUs can differ, and whether a save
    /// entered the kernel be resolved in one run only: either counts): the
    /// host's moves that could explain it (every CPU's too on more than
    /// one, the call chain's for a core's own work, the system call's for
    /// a figure that enters the kernel, the chase on 4 KiB pages' for one
    /// whose loads walk 4 KiB page tables); `None` where neither document
    /// measured any.
    fn floor(&self, x: &Headline, y: &Headline) -> Option<f64> {
        let pair = |on: bool, within, between| if on { [within, between] } else { [None, None] };
        let all = pair(x.cpus.max(y.cpus) > 1, self.within_all, self.all);
        let calls = pair(x.core_bound || y.core_bound, self.calls_within, self.calls_between);
        let kernel = pair(x.enters_kernel || y.enters_kernel, self.kernel_within, self.kernel_between);
        let walks = pair(x.walks_4k || y.walks_4k, self.walks_within, self.walks_between);
        [self.within, self.one]
            .into_iter()
            .chain(all)
            .chain(calls)
            .chain(kernel)
            .chain(walks)
            .flatten()
            .reduce(f64::max)
    }
}

/// Compares every metric the two documents share.
pub fn compare(da: &Document, db: &Document, threshold_pct: Option<f64>) -> Comparison {
    let (ma, mb) = (super::headlines::metrics(da), super::headlines::metrics(db));
    let (a, b) = (Side::of(da), Side::of(db));
    let moves = HostMoves::of(da, db);
    let mut rows = Vec::new();
    let mut left_out = Vec::new();
    for x in &ma {
        match mb.iter().find(|y| y.key() == x.key()) {
            Some(y) => match row(x, y, &moves, threshold_pct) {
                Ok(r) => rows.push(r),
                Err(why) => left_out.push(why),
            },
            None if mb.iter().any(|y| without_memory(y) == without_memory(x)) => left_out.push(format!(
                "{} (memory verified in one run only: a figure partly from cache is not compared with one from memory)",
                x.name
            )),
            None => left_out.push(format!("{} (only in A)", x.name)),
        }
    }
    left_out.extend(
        mb.iter()
            .filter(|y| !ma.iter().any(|x| x.key() == y.key() || without_memory(x) == without_memory(y)))
            .map(|y| format!("{} (only in B)", y.name)),
    );
    Comparison {
        same_cpu: a.cpu == b.cpu,
        a,
        b,
        threshold_pct,
        host_moved_pct: moves.within,
        host_between_one_thread_pct: moves.one,
        host_moved_all_threads_pct: moves.within_all,
        host_between_all_threads_pct: moves.all,
        host_between_not_compared: moves.not_compared,
        host_reference_only_in: moves.only_in.map(String::from),
        host_calls_moved_pct: moves.calls_within,
        host_calls_between_pct: moves.calls_between,
        host_kernel_moved_pct: moves.kernel_within,
        host_kernel_between_pct: moves.kernel_between,
        host_walks_4k_moved_pct: moves.walks_within,
        host_walks_4k_between_pct: moves.walks_between,
        rows,
        left_out,
    }
}

/// One metric of both documents, or why it is left out.
fn row(x: &Headline, y: &Headline, moves: &HostMoves, threshold_pct: Option<f64>) -> Result<Row, String> {
    let host_floor_pct = moves.floor(x, y);
    let between_unmeasured = moves.not_compared.is_some();
    let host_withholds = host_floor_pct.is_some_and(|f| f > HOST_MOVED_LIMIT * 100.0);
    if let Some(why) = unusable(x, "A").or_else(|| unusable(y, "B")) {
        return Err(format!("{} ({why}: not compared)", x.name));
    }
    let (va, vb) = (central(x), central(y));
    if !(va > 0.0 && vb > 0.0 && va.is_finite() && vb.is_finite()) {
        return Err(format!("{} (a value is zero, negative or not a number: no ratio)", x.name));
    }
    let ratio = vb / va;
    let own_spread_pct = [own_spread_pct(x), own_spread_pct(y)].into_iter().flatten().reduce(f64::max);
    let unstable = own_spread_pct.is_some_and(|s| s > HOST_MOVED_LIMIT * 100.0);
    let worse_by_pct = if x.higher_is_better { (1.0 - ratio) * 100.0 } else { (ratio - 1.0) * 100.0 };
    let verdict = match test(&x.samples, &y.samples, 0.05) {
        Verdict::Differ { p } if worse_by_pct > 0.0 => RowVerdict::Worse { p },
        Verdict::Differ { p } => RowVerdict::Better { p },
        Verdict::Same { p } => RowVerdict::WithinNoise { p },
        Verdict::TooFewSamples { smallest_possible_p } => RowVerdict::TooFewSamples { smallest_possible_p },
    };
    let regression = matches!(verdict, RowVerdict::Worse { .. })
        && !host_withholds
        && !unstable
        && !between_unmeasured
        && worse_by_pct > host_floor_pct.unwrap_or(0.0)
        && worse_by_pct > own_spread_pct.unwrap_or(0.0)
        && threshold_pct.is_some_and(|t| worse_by_pct > t);
    Ok(Row {
        key: x.key(),
        metric: x.name.clone(),
        unit: x.unit.to_string(),
        a: va,
        b: vb,
        ratio,
        worse_by_pct,
        verdict,
        host_floor_pct,
        host_withholds,
        own_spread_pct,
        unstable,
        between_unmeasured,
        regression,
    })
}

/// What follows a row's verdict: the regression, or why a difference is
/// not one (the host moved beyond the limit under it, or as far as it).
pub fn row_flag(r: &Row) -> String {
    let worse = matches!(r.verdict, RowVerdict::Worse { .. });
    let differs = worse || matches!(r.verdict, RowVerdict::Better { .. });
    let spread = r.own_spread_pct.unwrap_or(0.0);
    match (r.regression, r.host_floor_pct) {
        (true, _) => format!(" — REGRESSION, {:.1}% worse", r.worse_by_pct),
        (false, Some(f)) if differs && r.host_withholds => format!(" — not judged: the host moved {f:.1}% under it"),
        (false, _) if differs && r.between_unmeasured => {
            " — not judged: how far the host moved between the runs is not measured".into()
        }
        (false, _) if differs && r.unstable => {
            format!(" — not judged: unstable, its samples spread {spread:.0}% within a run")
        }
        (false, Some(f)) if worse && r.worse_by_pct <= f && f > 0.0 => format!(" — within the host's {f:.1}% move"),
        (false, _) if worse && r.worse_by_pct <= spread => format!(" — within its own {spread:.1}% spread in a run"),
        _ => String::new(),
    }
}

/// How far the host moved within and between the runs, each where the
/// documents recorded it, and what that means for a verdict.
pub fn host_moves_text(c: &Comparison) -> String {
    let mut said = Vec::new();
    if let Some(m) = c.host_moved_pct {
        said.push(format!("{m:.1}% within a run (each document's reference at its start, middle and end)"));
    }
    if let Some(m) = c.host_moved_all_threads_pct {
        said.push(format!(
            "{m:.1}% within a run with every CPU reading (at the reference's points, or between them in bandwidth's \
             two phases; counted for metrics of more than one thread)"
        ));
    }
    if let Some(m) = c.host_between_one_thread_pct {
        said.push(format!("{m:.1}% across both runs for one thread (the two references' points, the same region)"));
    }
    if let Some(m) = c.host_between_all_threads_pct {
        said.push(format!(
            "{m:.1}% across both runs with every CPU reading (counted for metrics of more than one thread)"
        ));
    }
    if let Some(m) = c.host_calls_moved_pct {
        said.push(format!("{m:.1}% within a run for a call chain (counted for a core's own work: calls, context)"));
    }
    if let Some(m) = c.host_calls_between_pct {
        said.push(format!("{m:.1}% across both runs for a call chain"));
    }
    if let Some(m) = c.host_kernel_moved_pct {
        said.push(format!(
            "{m:.1}% within a run for a system call (counted for figures that enter the kernel: a save of the \
             signal mask)"
        ));
    }
    if let Some(m) = c.host_kernel_between_pct {
        said.push(format!("{m:.1}% across both runs for a system call"));
    }
    if let Some(m) = c.host_walks_4k_moved_pct {
        said.push(format!(
            "{m:.1}% within a run for a chase on 4 KiB pages (counted for figures whose loads walk 4 KiB page \
             tables: a chase or a program on 4 KiB pages, the walk cost)"
        ));
    }
    if let Some(m) = c.host_walks_4k_between_pct {
        said.push(format!("{m:.1}% across both runs for a chase on 4 KiB pages"));
    }
    let apart = c.host_between_not_compared.as_ref().map_or(String::new(), |why| {
        format!("{why}, and no difference is judged (compare runs of one machine and one memory budget)\n")
    });
    if said.is_empty() {
        return apart
            + if c.host_between_not_compared.is_none() {
                "neither document measured how far the host moved (a `memperf run` does): a difference below \
                 may be the host's, not a change\n"
            } else {
                ""
            };
    }
    let apart = match &c.host_reference_only_in {
        Some(which) => format!(
            "only {which} recorded a host reference (a `memperf run` does): how far the host moved between the \
             runs is not measured, and a difference below may be the host's, not a change\n"
        ),
        None => apart,
    };
    apart
        + &format!(
            "the host moved by up to {}: a metric worse by no more than that is not called a regression, and none \
         whose reference moved beyond {:.0}% (the limit of a run's own verdicts) is judged\n",
            said.join("; "),
            HOST_MOVED_LIMIT * 100.0
        )
}

/// How many rows were not judged and why (the host moved under them, or
/// they are unstable within a run): the terminal and the HTML page alike.
pub fn not_judged_text(c: &Comparison) -> String {
    let mut said = String::new();
    let withheld = c.rows.iter().filter(|r| r.host_withholds).count();
    if withheld > 0 {
        said.push_str(&format!(
            "\n{withheld} of {} headline(s) not judged: their host reference moved beyond {:.0}% (within a run or \
             between the two, every CPU's for a figure of several, the call chain's for a core's own work, the system call's for a save that enters the kernel, the chase on 4 KiB pages' for a figure that walks their tables); a regression among them passes unseen: \
             compare several runs of each, or runs made when the host was quieter\n",
            c.rows.len(),
            HOST_MOVED_LIMIT * 100.0
        ));
    }
    let unmeasured = c.rows.iter().filter(|r| r.between_unmeasured && !r.host_withholds).count();
    if unmeasured > 0 {
        said.push_str(&format!(
            "\n{unmeasured} of {} headline(s) not judged: the two references read different regions, so how far \
             the host moved between the runs is not measured\n",
            c.rows.len()
        ));
    }
    let unstable = c.rows.iter().filter(|r| r.unstable && !r.host_withholds && !r.between_unmeasured).count();
    if unstable > 0 {
        said.push_str(&format!(
            "\n{unstable} of {} headline(s) not judged: unstable, the middle half of their samples spread beyond \
             {:.0}% of the median within a run (a figure that moves so inside one run moves so between runs, \
             and more samples of one run do not settle it); compare several runs of each\n",
            c.rows.len(),
            HOST_MOVED_LIMIT * 100.0
        ));
    }
    said
}

/// The comparison as the terminal shows it.
pub fn text(c: &Comparison) -> String {
    let mut out = String::new();
    if !c.same_cpu {
        out.push_str(&format!(
            "A and B ran on different CPUs ({} / {}): the differences below are the machines', not a change\n\n",
            c.a.cpu, c.b.cpu
        ));
    }
    for (name, s) in [("A", &c.a), ("B", &c.b)] {
        out.push_str(&format!("{name}: {} ({}, run {}), {}\n", s.hostname, s.started_utc, s.run_id, s.cpu));
    }
    out.push_str(&host_moves_text(c));
    out.push('\n');
    let mut t = super::table::Table::new(["metric", "unit", "A", "B", "B/A", "verdict"]);
    for r in &c.rows {
        let verdict = r.verdict.describe();
        let flag = row_flag(r);
        t.row([
            r.metric.clone(),
            r.unit.clone(),
            format!("{:.2}", r.a),
            format!("{:.2}", r.b),
            format!("×{:.3}", r.ratio),
            format!("{verdict}{flag}"),
        ]);
    }
    if t.is_empty() {
        out.push_str("no headline metric is in both documents\n");
    } else {
        out.push_str(&t.render());
        out.push_str(
            "\n\"beyond the noise\": a two-sided Mann-Whitney test (5%, exact up to 40 samples) on the raw samples, i.e. beyond the spread\n\
             within each run. Drift of a shared host is not in that spread: a regression must also exceed how\n\
             far the host moved within either run and between them, where the documents say, and the middle\n\
             half of the figure's own samples in either run; compare runs made close in time, or several runs\n\
             of each.\n",
        );
    }
    for d in &c.left_out {
        out.push_str(&format!("left out: {d}\n"));
    }
    out.push_str(&not_judged_text(c));
    if let Some(t) = c.threshold_pct {
        let n = c.regressions().count();
        out.push_str(&match n {
            0 => format!("\nno headline judged got worse beyond the noise and by more than {t}%\n"),
            n => format!("\n{n} headline(s) got worse beyond the noise and by more than {t}%: exit status 3\n"),
        });
        out.push_str(&unjudged_worse_text(c));
    }
    out
}

/// The rows worse by more than the threshold that were not judged, named
/// (up to five), and what `--fail-on-unjudged` does with them: the
/// terminal and the HTML page alike.
pub fn unjudged_worse_text(c: &Comparison) -> String {
    let worse: Vec<&Row> = c.unjudged_worse().collect();
    let (Some(t), false) = (c.threshold_pct, worse.is_empty()) else {
        return String::new();
    };
    let mut names: Vec<String> =
        worse.iter().take(5).map(|r| format!("{} {:+.1}%", r.metric, r.worse_by_pct)).collect();
    if worse.len() > 5 {
        names.push(format!("{} more", worse.len() - 5));
    }
    // A judged regression's exit status 3 comes first.
    let exit = if c.regressions().next().is_none() { "; --fail-on-unjudged makes this exit status 4" } else { "" };
    format!(
        "{} headline(s) not judged got worse beyond the noise and by more than {t}% ({}): no verdict either \
         way{exit}\n",
        worse.len(),
        names.join("; ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc_with_bandwidth(scale: f64) -> Document {
        doc_with_threads(scale, &[1])
    }

    /// The recorded bandwidth result, once per thread count, its samples
    /// scaled (the time per sample: 1.25 is 20% slower).
    fn doc_with_threads(scale: f64, threads: &[usize]) -> Document {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/minimal-bandwidth.json");
        let mut v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let bw = v["experiments"].as_array_mut().unwrap().iter_mut().find(|e| e["name"] == "bandwidth").unwrap();
        for list in ["results", "headlines"] {
            let one = bw["outcome"][list][0].clone();
            bw["outcome"][list] = threads
                .iter()
                .map(|&t| {
                    let mut r = one.clone();
                    r["threads"] = t.into();
                    r
                })
                .collect();
        }
        for r in bw["outcome"]["results"].as_array_mut().unwrap() {
            for s in r["samples_s"].as_array_mut().unwrap() {
                *s = (s.as_f64().unwrap() * scale).into();
            }
        }
        crate::model::document_from_json(&v.to_string()).unwrap()
    }

    #[test]
    fn a_regression_beyond_the_threshold_is_flagged_and_a_copy_is_not() {
        let a = doc_with_bandwidth(1.0);
        let slower = doc_with_bandwidth(1.25);
        let c = compare(&a, &slower, Some(10.0));
        let row = c.rows.iter().find(|r| r.metric.contains("simd")).unwrap();
        assert!((row.worse_by_pct - 20.0).abs() < 0.01, "{row:?}");
        assert!(row.regression, "{row:?}");
        assert!(text(&c).contains("REGRESSION, 20.0% worse"));
        assert!(!compare(&a, &slower, Some(25.0)).rows.iter().any(|r| r.regression), "20% is under 25%");
        assert!(!compare(&a, &slower, None).rows.iter().any(|r| r.regression), "no threshold, no gate");
        assert_eq!(compare(&a, &a, Some(0.0)).regressions().count(), 0);
    }

    /// A reference of two points: one thread reading `gbps` GB/s (chasing
    /// 140 ns), two CPUs reading `all_gbps` together.
    fn drift(points: &[(f64, f64)]) -> memperf_model::timing::drift::HostDrift {
        use memperf_model::timing::drift::{DriftPoint, HostDrift};
        HostDrift {
            size_bytes: crate::units::Bytes(1 << 28),
            all_threads: Some(2),
            points: points
                .iter()
                .enumerate()
                .map(|(i, (g, all))| DriftPoint {
                    after_experiments: i,
                    read_bytes_per_s: vec![g * 1e9],
                    chase_ns: vec![140.0],
                    all_read_bytes_per_s: vec![all * 1e9],
                    call_ns: Vec::new(),
                    syscall_ns: Vec::new(),
                    chase_4k_ns: Vec::new(),
                    chase_4k_pages_per_block: None,
                })
                .collect(),
        }
    }

    /// A run whose reference moved by 30% within it judges nothing (beyond
    /// the 10% a verdict allows); one that moved by 7.5% calls 20% worse a
    /// regression, and 4.8% worse within its move.
    #[test]
    fn a_regression_must_exceed_how_far_the_host_moved() {
        let mut a = doc_with_bandwidth(1.0);
        let mut slower = doc_with_bandwidth(1.25);
        // With a reference in one document only, the move between the
        // runs is not measured, as with none: the rows are judged against
        // the one run's move (none here), and the summary says so.
        slower.host_drift = Some(drift(&[(40.0, 80.0), (40.0, 80.0)]));
        let c = compare(&a, &slower, Some(10.0));
        assert!(c.rows.iter().all(|r| !r.between_unmeasured) && c.regressions().count() == c.rows.len());
        assert!(text(&c).contains("only B recorded a host reference"), "{}", text(&c));
        assert_eq!(c.host_reference_only_in.as_deref(), Some("B"));
        a.host_drift = Some(drift(&[(40.0, 80.0), (40.0, 80.0)]));
        slower.host_drift = Some(drift(&[(40.0, 80.0), (52.0, 80.0)]));
        let c = compare(&a, &slower, Some(10.0));
        assert!((c.host_moved_pct.unwrap() - 30.0).abs() < 1e-9);
        assert_eq!(c.regressions().count(), 0, "20% worse inside a 30% move");
        assert!(text(&c).contains("the host moved by up to 30.0% within a run"), "{}", text(&c));
        assert!(text(&c).contains("not judged: the host moved 30.0% under it"), "{}", text(&c));
        assert!(c.rows.iter().all(|r| r.host_withholds), "30% is beyond the 10% a verdict allows");
        slower.host_drift = Some(drift(&[(40.0, 80.0), (43.0, 80.0)]));
        let c = compare(&a, &slower, Some(10.0));
        assert!(c.regressions().count() > 0, "20% worse beyond a 7.5% move");
        let mut moved = doc_with_bandwidth(1.05);
        moved.host_drift = Some(drift(&[(40.0, 80.0), (43.0, 80.0)]));
        let c = compare(&a, &moved, Some(1.0));
        assert_eq!(c.regressions().count(), 0, "4.8% worse inside a 7.5% move");
        assert!(text(&c).contains("within the host's 7.5% move"), "{}", text(&c));
    }

    /// Each run steady within itself, but B's host reads a third slower
    /// with every CPU than A's did (its one thread the same): B's figures
    /// of more than one thread are no regression, those of one thread are;
    /// a one-thread reference that moved 25% between the runs excuses both.
    #[test]
    fn the_host_moving_between_runs_excuses_the_figures_it_explains() {
        let mut a = doc_with_threads(1.0, &[1, 2]);
        let mut b = doc_with_threads(1.25, &[1, 2]);
        a.host_drift = Some(drift(&[(40.0, 80.0), (40.0, 80.0)]));
        b.host_drift = Some(drift(&[(40.0, 60.0), (40.0, 60.0)]));
        let c = compare(&a, &b, Some(10.0));
        assert_eq!(
            (c.host_between_one_thread_pct, c.host_between_all_threads_pct.map(f64::round)),
            (Some(0.0), Some(33.0))
        );
        let threads = |r: &Row| r.key.split("threads=").nth(1).and_then(|t| t[..1].parse::<usize>().ok());
        assert!(
            c.rows.iter().any(|r| threads(r) == Some(1)) && c.rows.iter().any(|r| threads(r) > Some(1)),
            "{:?}",
            c.rows
        );
        for r in &c.rows {
            let many = threads(r) > Some(1);
            assert_eq!(r.regression, !many && r.worse_by_pct > 10.0, "{r:?}");
        }
        assert!(text(&c).contains("33.3% across both runs with every CPU reading"), "{}", text(&c));
        b.host_drift = Some(drift(&[(50.0, 60.0), (50.0, 60.0)]));
        assert_eq!(compare(&a, &b, Some(10.0)).regressions().count(), 0, "one thread moved 25% between the runs");
    }

    /// Rows the host withholds are counted at the end (a regression among
    /// them would pass unseen); references of different regions are said
    /// not to be comparable between the runs.
    #[test]
    fn withheld_rows_and_incomparable_references_are_said() {
        let a = doc_with_bandwidth(1.0);
        let mut b = doc_with_bandwidth(1.25);
        b.host_drift = Some(drift(&[(40.0, 80.0), (52.0, 80.0)]));
        let c = compare(&a, &b, Some(10.0));
        let n = c.rows.len();
        assert!(text(&c).contains(&format!("{n} of {n} headline(s) not judged")), "{}", text(&c));
        let mut a = a;
        a.host_drift = Some(memperf_model::timing::drift::HostDrift {
            size_bytes: crate::units::Bytes(1 << 30),
            ..drift(&[(40.0, 80.0), (40.0, 80.0)])
        });
        let c = compare(&a, &b, Some(10.0));
        assert_eq!(c.host_between_one_thread_pct, None);
        assert!(text(&c).contains("the two references read different regions (1GiB and 256MiB)"), "{}", text(&c));
        // Neither moved within its run: only the move between them is
        // unmeasured, and it keeps the 25% worse figure from a verdict.
        b.host_drift = Some(drift(&[(40.0, 80.0), (40.0, 80.0)]));
        let c = compare(&a, &b, Some(10.0));
        assert!(c.rows.iter().all(|r| r.between_unmeasured && !r.host_withholds), "{:?}", c.rows);
        assert_eq!(c.regressions().count(), 0);
        assert_eq!(c.unjudged_worse().count(), n, "each row is 25% worse, none judged");
        let said = text(&c);
        assert!(said.contains(&format!("{n} of {n} headline(s) not judged: the two references read different")));
        assert!(said.contains("not judged: how far the host moved between the runs is not measured"), "{said}");
        assert!(said.contains("--fail-on-unjudged makes this exit status 4"), "{said}");
    }

    /// Without a reference in either document, nothing says how the host
    /// moved, and the comparison says so.
    #[test]
    fn documents_without_a_reference_say_the_host_is_unmeasured() {
        let c = compare(&doc_with_bandwidth(1.0), &doc_with_bandwidth(1.25), Some(10.0));
        assert!(c.regressions().count() > 0 && c.unjudged_worse().count() == 0);
        assert!(text(&c).contains("neither document measured how far the host moved"), "{}", text(&c));
    }

    /// A figure of two CPUs without a `threads` label (a line bounced
    /// between them) is judged against every CPU's movement too; one of
    /// one CPU only against one thread's; a core's own work against the
    /// call chain's too, one that enters the kernel the system call's, and
    /// one whose loads walk 4 KiB page tables the chase on 4 KiB pages'.
    #[test]
    fn a_figure_of_two_cpus_carries_where_the_host_placed_them() {
        use crate::report::headlines::{headline, Unit};
        let moves = HostMoves {
            within: Some(3.0),
            within_all: Some(90.0),
            one: Some(1.0),
            all: Some(40.0),
            calls_within: Some(12.0),
            calls_between: Some(4.0),
            kernel_within: Some(8.0),
            kernel_between: Some(25.0),
            walks_within: Some(6.0),
            walks_between: Some(14.0),
            not_compared: None,
            only_in: None,
        };
        let line = headline(
            "c2c.one_way",
            &[("relation", "same-l3".into())],
            "c2c".into(),
            Unit::Nanoseconds(None),
            vec![30.0],
            30.0,
            false,
        );
        assert_eq!(moves.floor(&line, &line), Some(3.0));
        assert_eq!(moves.floor(&line, &line.clone().on_cpus(2)), Some(90.0), "either side's CPUs count");
        assert_eq!(moves.floor(&line.clone().core_bound(), &line), Some(12.0), "a core's own work: the call chain");
        let entering = line.clone().core_bound().enters_kernel();
        assert_eq!(moves.floor(&line, &entering), Some(25.0), "entering the kernel in either run: the system call");
        assert_eq!(moves.floor(&line.clone().walks_4k(), &line), Some(14.0), "4 KiB walks: the chase on 4 KiB pages");
        let two = headline(
            "bandwidth.read",
            &[("threads", "2".into())],
            "read".into(),
            Unit::GigabytesPerSecond,
            vec![1.0],
            1.0,
            true,
        );
        assert_eq!((two.cpus, moves.floor(&two, &two)), (2, Some(90.0)));
    }

    /// A figure of ten samples in ns, lower is better.
    fn figure(samples: Vec<f64>) -> Headline {
        let median = crate::timing::stats::median(&samples).unwrap();
        crate::report::headlines::headline(
            "t.x",
            &[],
            "t".into(),
            crate::report::headlines::Unit::ns_per("x"),
            samples,
            median,
            false,
        )
    }

    /// A 4 KiB chase 13.7% slower in B (182 against 207 ns, as on a Zen 4
    /// guest on 2026-11-28) while the reference's read and THP chase held:
    /// a regression unless the reference's own chase on 4 KiB pages moved
    /// as far between the runs, which excuses it and no figure that does
    /// not walk 4 KiB tables.
    #[test]
    fn a_figure_that_walks_4k_tables_carries_the_reference_chase_on_4k_pages() {
        let (mut a, mut b) = (doc_with_bandwidth(1.0), doc_with_bandwidth(1.0));
        let walking = |ns: [f64; 2]| {
            let mut d = drift(&[(40.0, 80.0), (40.0, 80.0)]);
            d.points.iter_mut().zip(ns).for_each(|(p, n)| p.chase_4k_ns = vec![n]);
            d
        };
        a.host_drift = Some(walking([180.0, 182.0]));
        b.host_drift = Some(walking([183.0, 181.0]));
        let steady = |m: f64| figure((0..10).map(|i| m * (1.0 + 0.001 * i as f64)).collect());
        let (x, y) = (steady(182.0).walks_4k(), steady(207.0).walks_4k());
        let judge = |a: &Document, b: &Document| row(&x, &y, &HostMoves::of(a, b), Some(10.0)).unwrap();
        assert!(judge(&a, &b).regression, "the 4 KiB walks held: {:?}", judge(&a, &b));
        b.host_drift = Some(walking([204.0, 181.0]));
        let c = compare(&a, &b, Some(10.0));
        assert!((c.host_walks_4k_between_pct.unwrap() - (204.0 / 180.0 - 1.0) * 100.0).abs() < 1e-9, "{c:?}");
        assert!((c.host_walks_4k_moved_pct.unwrap() - (204.0 / 181.0 - 1.0) * 100.0).abs() < 1e-9, "{c:?}");
        let r = judge(&a, &b);
        assert!(!r.regression && r.host_withholds, "a 13.3% move of the walks withholds it: {r:?}");
        assert!(host_moves_text(&c).contains("across both runs for a chase on 4 KiB pages"), "{}", host_moves_text(&c));
        let (x, y) = (steady(182.0), steady(207.0));
        assert!(row(&x, &y, &HostMoves::of(&a, &b), Some(10.0)).unwrap().regression, "it walks no 4 KiB tables");
    }

    #[test]
    fn a_figure_unstable_within_its_run_is_not_judged() {
        // Bimodal within each run, as a prefetch of NULL whose page walk
        // the host translates again: half the samples at 0.17 ns, half
        // at 0.5, B more often slow: the middle half spans over 100% of
        // the median. B is worse beyond the noise and by over 100%.
        let a = figure([0.165, 0.166, 0.167, 0.168, 0.169, 0.170, 0.171, 0.48, 0.49, 0.50].to_vec());
        let b = figure([0.172, 0.173, 0.47, 0.475, 0.485, 0.495, 0.505, 0.51, 0.52, 0.53].to_vec());
        let r = row(&a, &b, &HostMoves::NONE, Some(10.0)).unwrap();
        assert!(matches!(r.verdict, RowVerdict::Worse { .. }), "{r:?}");
        assert!(r.worse_by_pct > 100.0 && r.unstable && !r.regression, "{r:?}");
        assert!(row_flag(&r).contains("not judged: unstable"), "{}", row_flag(&r));
        // The same shift of a figure stable to 1% is a regression.
        let steady = |m: f64| figure((0..10).map(|i| m * (1.0 + 0.001 * i as f64)).collect());
        let r = row(&steady(1.0), &steady(1.2), &HostMoves::NONE, Some(10.0)).unwrap();
        assert!(r.regression && !r.unstable && r.own_spread_pct.unwrap() < 1.0, "{r:?}");
    }

    #[test]
    fn a_difference_within_a_figures_own_spread_is_not_a_regression() {
        // Samples spread over 8% of the median in each run (stable enough
        // to judge), B worse by 6% beyond the noise: within the spread.
        let spread = |m: f64| figure((0..10).map(|i| m * (1.0 + 0.018 * i as f64)).collect());
        let r = row(&spread(1.0), &spread(1.06), &HostMoves::NONE, Some(5.0)).unwrap();
        let s = r.own_spread_pct.unwrap();
        assert!(s > 6.0 && s < 10.0 && !r.unstable, "{r:?}");
        assert!(!r.regression, "{r:?}");
        if matches!(r.verdict, RowVerdict::Worse { .. }) {
            assert!(row_flag(&r).contains("within its own"), "{}", row_flag(&r));
        }
        // Worse beyond that spread, it is one.
        assert!(row(&spread(1.0), &spread(1.25), &HostMoves::NONE, Some(5.0)).unwrap().regression);
    }

    #[test]
    fn different_cpus_are_said_first() {
        let a = doc_with_bandwidth(1.0);
        let mut b = a.clone();
        b.machine.cpu.identity.model_name = "Another CPU".into();
        let c = compare(&a, &b, None);
        assert!(!c.same_cpu);
        assert!(text(&c).starts_with("A and B ran on different CPUs"));
    }
}
