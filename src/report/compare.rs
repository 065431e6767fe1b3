//! `memperf compare A B` (or `A1 A2 … --against B1 B2 …`): every headline
//! figure of two sets of runs judged by the verdict engine at 99%, for
//! people and for CI (exit 3 where a figure got worse by at least the
//! threshold). An absolute figure is judged against its variation between
//! runs: the runs' spread with several a side (run as a random effect, as
//! in RMIT), else what each run showed within itself. The host moving
//! between runs is part of what is compared. A figure not resolved says
//! the smallest change these runs resolve and the runs a side that would
//! resolve the threshold. A paired ratio within each run is compared as a
//! ratio, said, and counts toward no exit status.

use super::headlines::Headline;
use crate::model::document::Document;
use memperf_model::timing::drift::HostDrift;
use memperf_model::timing::verdict::{Call, Estimate, Scale, Verdict, CONFIDENCE};
use serde::{Deserialize, Serialize};

/// The change below which a figure is "no change" where no threshold is
/// asked for (`--fail-on-regression` sets it), percent.
pub const DEFAULT_THRESHOLD_PCT: f64 = 5.0;

/// The least variation between two runs of one machine assumed, as a
/// fraction: no two runs agree more closely than this by design (where
/// pages land, the clock), however still their host.
pub const LEAST_BETWEEN_RUNS: f64 = 0.01;

/// How far a figure of fewer than [`FEW_SAMPLES`] samples in a run is
/// taken to vary between runs, as a fraction: so few show nothing of how
/// far it moves (a derived figure of one sample, a curve's two).
pub const FEW_SAMPLES_BETWEEN_RUNS: f64 = 0.10;

/// The fewest samples a run's figure shows its own spread with.
pub const FEW_SAMPLES: usize = 5;

/// The normal quantile of a two-sided 99% interval.
const Z99: f64 = 2.576;
/// The normal quantile of a two-sided interval at the engine's per-look
/// confidence ([`memperf_model::timing::verdict::LOOK_CONFIDENCE`], 1 −
/// 0.01/3): Φ⁻¹(1 − 0.01/6).
const Z_PER_LOOK: f64 = 2.935;

/// One run of a side.
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

/// Where a figure's variation between runs came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Between {
    /// The spread of the runs' own figures, several runs on each side.
    Runs,
    /// What the runs showed within themselves: the host reference's points
    /// and the figure's own samples.
    WithinRuns,
}

/// One absolute figure of both sides.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Row {
    /// The metric's join key (`id{label=value,…}`): the same in every run.
    pub key: String,
    /// Its name as a person reads it.
    pub metric: String,
    pub unit: String,
    /// The side's runs' figures (each the median of its samples), their
    /// geometric mean.
    pub a: f64,
    pub b: f64,
    /// b / a.
    pub ratio: f64,
    /// How much worse B is, in percent (negative: better).
    pub worse_by_pct: f64,
    /// The engine's verdict on B over A.
    pub verdict: Verdict,
    /// Whether the verdict says B is worse.
    pub worse: bool,
    /// Which way is better for the figure.
    pub higher_is_better: bool,
    /// The variation between two runs assumed, percent, and where it came
    /// from.
    pub between_runs_pct: f64,
    pub between: Between,
    /// The smallest change these runs could resolve, percent.
    pub smallest_resolvable_pct: f64,
    /// Where not resolved: about how many runs per side would resolve the
    /// threshold.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runs_per_side: Option<usize>,
    /// Worse by at least the threshold, with a gate asked for.
    pub regression: bool,
    /// Runs of each side that had the figure.
    pub runs: (usize, usize),
}

/// One paired ratio of both sides (measured within each run).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PairedRow {
    pub key: String,
    pub name: String,
    /// Each side's estimate (the runs' geometric mean).
    pub a: f64,
    pub b: f64,
    /// The engine's verdict on B's ratio over A's.
    pub verdict: Verdict,
    /// Runs of each side that had the ratio.
    pub runs: (usize, usize),
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    pub a: Vec<Side>,
    pub b: Vec<Side>,
    pub same_cpu: bool,
    /// The threshold, percent: `--fail-on-regression`'s, else the default.
    pub threshold_pct: f64,
    /// `--fail-on-regression` was given: a regression sets the exit status.
    pub gate: bool,
    pub rows: Vec<Row>,
    pub paired: Vec<PairedRow>,
    /// Metrics in one side only, or without a usable value.
    pub left_out: Vec<String>,
}

impl Comparison {
    pub fn regressions(&self) -> impl Iterator<Item = &Row> {
        self.rows.iter().filter(|r| r.regression)
    }

    /// Rows not resolved whose estimate is worse by more than the
    /// threshold: each may be a regression these runs cannot show. None
    /// without a gate.
    pub fn unresolved_worse(&self) -> impl Iterator<Item = &Row> {
        self.rows
            .iter()
            .filter(|r| self.gate && r.verdict.call == Call::NotResolved && r.worse_by_pct > self.threshold_pct)
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

/// A headline's key without its `memory` label (dram or not-verified).
fn without_memory(m: &Headline) -> String {
    let mut m = m.clone();
    m.labels.remove("memory");
    m.key()
}

/// The sample standard deviation of `v`; `None` below two values.
fn sd(v: &[f64]) -> Option<f64> {
    (v.len() >= 2).then(|| {
        let mean = v.iter().sum::<f64>() / v.len() as f64;
        (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (v.len() - 1) as f64).sqrt()
    })
}

/// How far, in log terms, the host reference moved within a run for a
/// figure like `m`: the standard deviation of the log of its points'
/// medians, the largest of the references the figure rests on (one
/// thread's read and chase always; every CPU's read for a figure of
/// several, the call chain for a core's own work, the system call for one
/// that enters the kernel, the chase on 4 KiB pages for one that walks
/// their tables).
fn reference_sd(d: &HostDrift, m: &Headline) -> Option<f64> {
    use memperf_model::timing::drift::DriftPoint;
    let of = |f: fn(&DriftPoint) -> Option<f64>| {
        sd(&d.points.iter().filter_map(f).filter(|v| *v > 0.0).map(f64::ln).collect::<Vec<_>>())
    };
    let mut parts = vec![of(DriftPoint::read_median), of(DriftPoint::chase_median)];
    if m.cpus > 1 {
        parts.push(of(DriftPoint::all_read_median));
    }
    if m.core_bound {
        parts.push(of(DriftPoint::call_median));
    }
    if m.enters_kernel {
        parts.push(of(DriftPoint::syscall_median));
    }
    if m.walks_4k {
        parts.push(of(DriftPoint::chase_4k_median));
    }
    parts.into_iter().flatten().reduce(f64::max)
}

/// How far the figure's own samples spread within its run, in log terms
/// (1.4826 × the MAD of their logs); below [`FEW_SAMPLES`] samples,
/// [`FEW_SAMPLES_BETWEEN_RUNS`].
fn own_sd(m: &Headline) -> Option<f64> {
    if m.samples.len() < FEW_SAMPLES {
        return Some(FEW_SAMPLES_BETWEEN_RUNS);
    }
    let logs: Vec<f64> = m.samples.iter().filter(|v| **v > 0.0).map(|v| v.ln()).collect();
    let med = crate::timing::stats::median(&logs)?;
    let dev: Vec<f64> = logs.iter().map(|x| (x - med).abs()).collect();
    crate::timing::stats::median(&dev).map(|m| 1.4826 * m)
}

/// The two-sided 99% quantile of Student's t with `df` degrees of freedom.
pub fn t99(df: usize) -> f64 {
    const T: [f64; 30] = [
        63.657, 9.925, 5.841, 4.604, 4.032, 3.707, 3.499, 3.355, 3.250, 3.169, 3.106, 3.055, 3.012, 2.977, 2.947,
        2.921, 2.898, 2.878, 2.861, 2.845, 2.831, 2.819, 2.807, 2.797, 2.787, 2.779, 2.771, 2.763, 2.756, 2.750,
    ];
    match df {
        0 => f64::INFINITY,
        1..=30 => T[df - 1],
        _ => Z99 + 4.92 / df as f64,
    }
}

/// The difference of two sides' mean logs (B's less A's), and, with two
/// runs a side or more, their pooled standard deviation and Student's 99%
/// quantile at its degrees of freedom.
fn log_difference(la: &[f64], lb: &[f64]) -> (f64, Option<(f64, f64)>) {
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let spread = (la.len() >= 2 && lb.len() >= 2).then(|| {
        let ss = |v: &[f64]| v.iter().map(|x| (x - mean(v)).powi(2)).sum::<f64>();
        let df = la.len() + lb.len() - 2;
        (((ss(la) + ss(lb)) / df as f64).sqrt(), t99(df))
    });
    (mean(lb) - mean(la), spread)
}

/// Judges the log difference `d` with half-width `hw` at `threshold`.
fn judge(d: f64, hw: f64, threshold: f64, n: usize) -> Verdict {
    let e = Estimate { center: d.exp(), low: (d - hw).exp(), high: (d + hw).exp(), confidence: CONFIDENCE, units: n };
    Verdict::judge(Some(e), Scale::Ratio, threshold, n, 1, true)
}

/// About how many runs per side would resolve `threshold` (a fraction)
/// for a figure that differs by `d` and varies by `sigma` between runs
/// (both in log terms): the interval's half-width narrows as 1/√runs.
fn runs_to_resolve(d: f64, sigma: f64, threshold: f64) -> usize {
    let target = ((1.0 + threshold).ln() - d.abs()).abs().max(1e-6);
    let k = 2.0 * (Z99 * sigma / target).powi(2);
    (k.ceil() as usize).clamp(2, 1000)
}

/// Compares every metric both sides share (one run or several a side).
pub fn compare(side_a: &[Document], side_b: &[Document], threshold_pct: Option<f64>) -> Comparison {
    let threshold = threshold_pct.unwrap_or(DEFAULT_THRESHOLD_PCT) / 100.0;
    let metrics = |docs: &[Document]| -> Vec<Vec<Headline>> { docs.iter().map(super::headlines::metrics).collect() };
    let (ma, mb) = (metrics(side_a), metrics(side_b));
    let mut rows = Vec::new();
    let mut left_out = Vec::new();
    let first_a = ma.first().cloned().unwrap_or_default();
    for x in &first_a {
        let find = |runs: &[Vec<Headline>]| -> Vec<Headline> {
            runs.iter().filter_map(|r| r.iter().find(|y| y.key() == x.key()).cloned()).collect()
        };
        let (xs, ys) = (find(&ma), find(&mb));
        if ys.is_empty() {
            let elsewhere = mb.iter().flatten().any(|y| without_memory(y) == without_memory(x));
            left_out.push(if elsewhere {
                format!(
                    "{} (memory verified in one run only: a figure partly from cache is not compared with one from memory)",
                    x.name
                )
            } else {
                format!("{} (only in A)", x.name)
            });
            continue;
        }
        match row(&xs, &ys, side_a, side_b, threshold, threshold_pct.is_some()) {
            Ok(r) => rows.push(r),
            Err(why) => left_out.push(why),
        }
    }
    left_out.extend(
        mb.first()
            .into_iter()
            .flatten()
            .filter(|y| !first_a.iter().any(|x| x.key() == y.key() || without_memory(x) == without_memory(y)))
            .map(|y| format!("{} (only in B)", y.name)),
    );
    let (a, b): (Vec<Side>, Vec<Side>) = (side_a.iter().map(Side::of).collect(), side_b.iter().map(Side::of).collect());
    let same_cpu = a.iter().chain(&b).all(|s| Some(&s.cpu) == a.first().map(|f| &f.cpu));
    Comparison {
        same_cpu,
        a,
        b,
        threshold_pct: threshold * 100.0,
        gate: threshold_pct.is_some(),
        rows,
        paired: paired(side_a, side_b, threshold),
        left_out,
    }
}

/// One metric of both sides (`xs`: its headline in each run of A, `ys` of
/// B), or why it is left out.
fn row(xs: &[Headline], ys: &[Headline], da: &[Document], db: &[Document], t: f64, gate: bool) -> Result<Row, String> {
    let x = &xs[0];
    if let Some(why) = xs.iter().find_map(|m| unusable(m, "A")).or_else(|| ys.iter().find_map(|m| unusable(m, "B"))) {
        return Err(format!("{} ({why}: not compared)", x.name));
    }
    let logs = |ms: &[Headline]| -> Vec<f64> { ms.iter().map(|m| central(m).ln()).collect() };
    let (la, lb) = (logs(xs), logs(ys));
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let (d, spread) = log_difference(&la, &lb);
    let (na, nb) = (la.len(), lb.len());
    let (sigma, q, between) = if let Some((pooled, q)) = spread {
        (pooled.max(LEAST_BETWEEN_RUNS), q, Between::Runs)
    } else {
        let refs = da.iter().chain(db).filter_map(|doc| doc.host_drift.as_ref()).filter_map(|h| reference_sd(h, x));
        let own = xs.iter().chain(ys).filter_map(own_sd);
        let sigma = refs.chain(own).fold(LEAST_BETWEEN_RUNS, f64::max);
        (sigma, Z99, Between::WithinRuns)
    };
    let hw = q * sigma * (1.0 / na as f64 + 1.0 / nb as f64).sqrt();
    let verdict = judge(d, hw, t, na + nb);
    let worse_call = if x.higher_is_better { Call::Below } else { Call::Above };
    let worse = verdict.call == worse_call;
    let ratio = d.exp();
    let worse_by_pct = if x.higher_is_better { (1.0 - ratio) * 100.0 } else { (ratio - 1.0) * 100.0 };
    Ok(Row {
        key: x.key(),
        metric: x.name.clone(),
        unit: x.unit.to_string(),
        a: mean(&la).exp(),
        b: mean(&lb).exp(),
        ratio,
        worse_by_pct,
        worse,
        higher_is_better: x.higher_is_better,
        runs: (na, nb),
        regression: gate && worse && verdict.beyond_threshold,
        runs_per_side: (verdict.call == Call::NotResolved).then(|| runs_to_resolve(d, sigma, t)),
        verdict,
        between_runs_pct: sigma * 100.0,
        between,
        smallest_resolvable_pct: (hw.exp() - 1.0) * 100.0,
    })
}

/// Every paired ratio both sides measured, compared as a ratio.
fn paired(side_a: &[Document], side_b: &[Document], t: f64) -> Vec<PairedRow> {
    let all = |docs: &[Document]| -> Vec<Vec<super::outcome::PairedRatio>> {
        docs.iter()
            .map(|d| super::outcome::outcomes(d).into_iter().flat_map(|o| super::outcome::of(o).paired(d)).collect())
            .collect()
    };
    let (pa, pb) = (all(side_a), all(side_b));
    let Some(first) = pa.first() else { return Vec::new() };
    first
        .iter()
        .filter_map(|p| {
            let find = |runs: &[Vec<super::outcome::PairedRatio>]| -> Vec<crate::timing::Ratio> {
                runs.iter().filter_map(|r| r.iter().find(|q| q.key == p.key).map(|q| q.ratio.clone())).collect()
            };
            let (ra, rb) = (find(&pa), find(&pb));
            let verdict = ratio_change(&ra, &rb, t)?;
            let gm =
                |v: &[crate::timing::Ratio]| (v.iter().map(|r| r.estimate.ln()).sum::<f64>() / v.len() as f64).exp();
            let runs = (ra.len(), rb.len());
            Some(PairedRow { key: p.key.clone(), name: p.name.clone(), a: gm(&ra), b: gm(&rb), verdict, runs })
        })
        .collect()
}

/// The verdict on a paired ratio's change from the runs of A to those of
/// B: with several runs a side, against their spread; else against the
/// intervals the two runs gave it.
fn ratio_change(ra: &[crate::timing::Ratio], rb: &[crate::timing::Ratio], t: f64) -> Option<Verdict> {
    if ra.is_empty() || rb.is_empty() {
        return None;
    }
    let logs = |v: &[crate::timing::Ratio]| -> Vec<f64> { v.iter().map(|r| r.estimate.ln()).collect() };
    let (la, lb) = (logs(ra), logs(rb));
    let (d, spread) = log_difference(&la, &lb);
    let hw = if let Some((pooled, q)) = spread {
        q * pooled * (1.0 / la.len() as f64 + 1.0 / lb.len() as f64).sqrt()
    } else {
        // Each run's interval is the engine's per-look one, Z_PER_LOOK
        // standard errors a side; a run without one resolves nothing.
        let se = |r: &crate::timing::Ratio| {
            (r.low > 0.0 && r.high.is_finite()).then(|| (r.high.ln() - r.low.ln()) / 2.0 / Z_PER_LOOK)
        };
        match (se(&ra[0]), se(&rb[0])) {
            (Some(sa), Some(sb)) => Z99 * (sa * sa + sb * sb).sqrt(),
            _ => f64::INFINITY,
        }
    };
    let hw = if hw.is_finite() { hw } else { f64::INFINITY };
    Some(judge(d, hw, t, la.len() + lb.len()))
}

/// A row's verdict in the words of `compare`: the engine's, for a figure
/// of which higher (or lower) is better; not resolved, with what these
/// runs could resolve (runs, not repetitions, are its units).
pub fn row_said(r: &Row, higher_is_better: bool) -> String {
    use memperf_model::timing::said::{said, Sense};
    let sense = if higher_is_better {
        Sense { above: "better", below: "worse", acts_on: Call::Above, unit: "" }
    } else {
        Sense { above: "worse", below: "better", acts_on: Call::Below, unit: "" }
    };
    let mut s = runs_said(&said(&r.verdict, sense), &r.verdict, r.runs);
    if r.verdict.call == Call::NotResolved {
        // Runs, not repetitions, are the unit here.
        s = s.split("; about").next().unwrap_or(&s).to_string();
        s = s.split(" repetitions give no").next().unwrap_or(&s).to_string();
        s.push_str(&format!("; these runs resolve changes of {:.1}% and more", r.smallest_resolvable_pct));
        if let Some(k) = r.runs_per_side {
            s.push_str(&format!(", about {k} runs a side would resolve {:.0}%", r.verdict.threshold * 100.0));
        }
    }
    if r.regression {
        s.push_str(" — REGRESSION");
    }
    s
}

/// A verdict's words with its units named as runs: "n = 2" is one run a
/// side here, not two repetitions.
fn runs_said(s: &str, v: &Verdict, (a, b): (usize, usize)) -> String {
    s.replace(&format!("n = {}", v.n), &format!("{a} run(s) of A, {b} of B"))
}

/// What the comparison rests on, said once.
pub fn basis_text(c: &Comparison) -> String {
    let runs = format!("{} run(s) of A against {} of B", c.a.len(), c.b.len());
    let how = if c.a.len() >= 2 && c.b.len() >= 2 {
        "each figure's variation between runs is the spread of the runs' own figures (run as a random effect)"
            .to_string()
    } else {
        format!(
            "each figure's variation between runs is taken from what the runs showed within themselves: the \
             spread of their host reference's points and of the figure's own samples (several runs a side \
             measure it directly: compare A1 A2 A3 --against B1 B2 B3), {:.0}% for a figure of fewer than \
             {FEW_SAMPLES} samples, which shows nothing of its spread",
            FEW_SAMPLES_BETWEEN_RUNS * 100.0
        )
    };
    format!(
        "{runs}; {how}, at least {:.0}%. A verdict is at {:.0}% confidence; worse by at least {:.0}% is a \
         regression{}. A paired ratio (measured within each run) is compared as a ratio and counts toward no \
         exit status.\n",
        LEAST_BETWEEN_RUNS * 100.0,
        CONFIDENCE * 100.0,
        c.threshold_pct,
        if c.gate { " (exit status 3)" } else { "" }
    )
}

/// The comparison as the terminal shows it.
pub fn text(c: &Comparison) -> String {
    let mut out = String::new();
    if !c.same_cpu {
        out.push_str("The runs ran on different CPUs: the differences below are the machines', not a change\n\n");
    }
    for (name, sides) in [("A", &c.a), ("B", &c.b)] {
        for s in sides.iter() {
            out.push_str(&format!("{name}: {} ({}, run {}), {}\n", s.hostname, s.started_utc, s.run_id, s.cpu));
        }
    }
    out.push_str(&basis_text(c));
    out.push('\n');
    let mut t = super::table::Table::new(["metric", "unit", "A", "B", "B/A", "verdict"]);
    for r in &c.rows {
        t.row([
            r.metric.clone(),
            r.unit.clone(),
            format!("{:.2}", r.a),
            format!("{:.2}", r.b),
            format!("×{:.3}", r.ratio),
            row_said(r, r.higher_is_better),
        ]);
    }
    if t.is_empty() {
        out.push_str("no headline metric is in both sides\n");
    } else {
        out.push_str(&t.render());
    }
    if !c.paired.is_empty() {
        out.push_str("\npaired ratios (each measured within its run; B's over A's):\n");
        let mut p = super::table::Table::new(["ratio", "A", "B", "verdict"]);
        for r in &c.paired {
            let words = memperf_model::timing::said::Sense {
                above: "higher",
                below: "lower",
                acts_on: Call::Invalid,
                unit: "",
            };
            let said = memperf_model::timing::said::said(&r.verdict, words);
            let said = runs_said(said.split("; ").next().unwrap_or(&said), &r.verdict, r.runs);
            p.row([r.name.clone(), format!("×{:.3}", r.a), format!("×{:.3}", r.b), said]);
        }
        out.push_str(&p.render());
    }
    for d in &c.left_out {
        out.push_str(&format!("left out: {d}\n"));
    }
    out.push_str(&summary(c));
    out
}

/// How many figures each verdict took, and what the gate does.
pub fn summary(c: &Comparison) -> String {
    let count = |f: &dyn Fn(&Row) -> bool| c.rows.iter().filter(|r| f(r)).count();
    let worse = count(&|r| r.worse);
    let better = count(&|r| r.verdict.resolved_direction() && !r.worse);
    let same = count(&|r| r.verdict.call == Call::NoChange);
    let open = count(&|r| r.verdict.call == Call::NotResolved);
    let mut out = format!(
        "\n{} figure(s): {worse} worse, {better} better, {same} no change, {open} not resolved (each says the smallest \
         change it could resolve and the runs a side that would resolve {:.0}%)\n",
        c.rows.len(),
        c.threshold_pct
    );
    if c.gate {
        let n = c.regressions().count();
        out.push_str(&match n {
            0 => format!("no figure got worse by at least {}%\n", c.threshold_pct),
            n => format!("{n} figure(s) got worse by at least {}%: exit status 3\n", c.threshold_pct),
        });
        let open: Vec<String> =
            c.unresolved_worse().take(5).map(|r| format!("{} {:+.1}%", r.metric, r.worse_by_pct)).collect();
        if !open.is_empty() {
            let exit = if n == 0 { "; --fail-on-unjudged makes this exit status 4" } else { "" };
            out.push_str(&format!(
                "not resolved, though their estimates are worse by more than {}%: {}{exit}\n",
                c.threshold_pct,
                open.join("; ")
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    /// Z_PER_LOOK is the two-sided normal quantile of the engine's per-look
    /// confidence: the tails beyond it hold 1 − LOOK_CONFIDENCE (erfc by
    /// Abramowitz and Stegun 7.1.26, good to 1.5e-7).
    #[test]
    fn the_per_look_quantile_is_the_engines_confidence() {
        let erfc = |x: f64| {
            let t = 1.0 / (1.0 + 0.327_591_1 * x);
            let poly = t
                * (0.254_829_592
                    + t * (-0.284_496_736 + t * (1.421_413_741 + t * (-1.453_152_027 + t * 1.061_405_429))));
            poly * (-x * x).exp()
        };
        let tails = erfc(super::Z_PER_LOOK / std::f64::consts::SQRT_2);
        let want = 1.0 - memperf_model::timing::verdict::LOOK_CONFIDENCE;
        assert!((tails / want - 1.0).abs() < 0.01, "{tails} against {want}");
    }

    use super::*;

    /// The recorded bandwidth result, its samples scaled (the time per
    /// sample: 1.25 is 20% slower).
    fn doc_with_bandwidth(scale: f64) -> Document {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/minimal-bandwidth.json");
        let mut v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let bw = v["experiments"].as_array_mut().unwrap().iter_mut().find(|e| e["name"] == "bandwidth").unwrap();
        for r in bw["outcome"]["results"].as_array_mut().unwrap() {
            for s in r["samples_s"].as_array_mut().unwrap() {
                *s = (s.as_f64().unwrap() * scale).into();
            }
        }
        crate::model::document_from_json(&v.to_string()).unwrap()
    }

    /// A reference whose one-thread read takes `gbps` at each point.
    fn drift(gbps: &[f64]) -> HostDrift {
        use memperf_model::timing::drift::DriftPoint;
        HostDrift {
            size_bytes: crate::units::Bytes(1 << 28),
            all_threads: None,
            points: gbps
                .iter()
                .enumerate()
                .map(|(i, g)| DriftPoint {
                    after_experiments: i,
                    read_bytes_per_s: vec![g * 1e9],
                    chase_ns: vec![140.0],
                    all_read_bytes_per_s: Vec::new(),
                    call_ns: Vec::new(),
                    syscall_ns: Vec::new(),
                    chase_4k_ns: Vec::new(),
                    chase_4k_pages_per_block: None,
                })
                .collect(),
        }
    }

    fn simd(c: &Comparison) -> &Row {
        c.rows.iter().find(|r| r.metric.contains("simd")).unwrap()
    }

    /// 20% slower on a still host is worse by at least 10%, a regression
    /// under the gate; a copy is no change; without a gate, nothing
    /// regresses.
    #[test]
    fn a_loss_beyond_the_threshold_is_a_regression_and_a_copy_is_no_change() {
        let mut a = doc_with_bandwidth(1.0);
        let mut slower = doc_with_bandwidth(1.25);
        a.host_drift = Some(drift(&[40.0, 40.4, 39.8]));
        slower.host_drift = Some(drift(&[40.0, 40.2, 39.9]));
        let c = compare(std::slice::from_ref(&a), std::slice::from_ref(&slower), Some(10.0));
        let r = simd(&c);
        assert!((r.worse_by_pct - 20.0).abs() < 0.01, "{r:?}");
        assert!(r.worse && r.verdict.beyond_threshold && r.regression, "{r:?}");
        assert!(text(&c).contains("worse ×0.800") && text(&c).contains("REGRESSION"), "{}", text(&c));
        let same = compare(std::slice::from_ref(&a), std::slice::from_ref(&a), Some(10.0));
        assert_eq!(simd(&same).verdict.call, Call::NoChange, "{:?}", simd(&same));
        assert_eq!(same.regressions().count(), 0);
        let ungated = compare(std::slice::from_ref(&a), std::slice::from_ref(&slower), None);
        assert_eq!(ungated.regressions().count(), 0);
        assert_eq!(ungated.threshold_pct, DEFAULT_THRESHOLD_PCT);
    }

    /// A host that moved 30% within its runs cannot resolve a 20% loss at
    /// 10%: the row says not resolved, the smallest change it could
    /// resolve, and how many runs a side would; nothing is silenced.
    #[test]
    fn a_moving_host_widens_the_interval_and_says_what_would_resolve_it() {
        let mut a = doc_with_bandwidth(1.0);
        let mut slower = doc_with_bandwidth(1.25);
        a.host_drift = Some(drift(&[40.0, 30.0, 40.0]));
        slower.host_drift = Some(drift(&[40.0, 30.0, 40.0]));
        let c = compare(std::slice::from_ref(&a), std::slice::from_ref(&slower), Some(10.0));
        let r = simd(&c);
        assert_eq!(r.verdict.call, Call::NotResolved, "{r:?}");
        assert_eq!(r.between, Between::WithinRuns);
        assert!(r.smallest_resolvable_pct > 20.0 && r.runs_per_side.is_some_and(|k| k > 2), "{r:?}");
        let said = row_said(r, true);
        assert!(
            said.contains("these runs resolve changes of") && said.contains("runs a side would resolve 10%"),
            "{said}"
        );
        assert_eq!(c.regressions().count(), 0);
        assert!(
            summary(&c).contains("not resolved, though their estimates are worse by more than 10%"),
            "{}",
            summary(&c)
        );
    }

    /// Three runs a side: the runs' own spread is the variation between
    /// them, with Student's t on four degrees of freedom; a 20% loss
    /// against 1% run-to-run spread resolves.
    #[test]
    fn several_runs_a_side_measure_the_variation_between_runs() {
        let a: Vec<Document> = [1.0, 1.01, 0.99].iter().map(|&s| doc_with_bandwidth(s)).collect();
        let b: Vec<Document> = [1.25, 1.26, 1.24].iter().map(|&s| doc_with_bandwidth(s)).collect();
        let c = compare(&a, &b, Some(10.0));
        let r = simd(&c);
        assert_eq!(r.between, Between::Runs);
        assert!(r.regression, "{r:?}");
        assert_eq!(c.a.len(), 3);
        assert!((t99(4) - 4.604).abs() < 1e-9 && t99(1000) < 2.6);
    }

    /// A paired ratio is compared as a ratio: the same ratio is no change,
    /// one halved is lower; neither touches the exit status.
    #[test]
    fn paired_ratios_are_compared_as_ratios() {
        let r = |v: f64| {
            crate::timing::Ratio::of(&(0..12).map(|i| v * (1.0 + 0.002 * i as f64)).collect::<Vec<_>>()).unwrap()
        };
        let same = ratio_change(&[r(0.55)], &[r(0.55)], 0.05).unwrap();
        assert_eq!(same.call, Call::NoChange, "{same:?}");
        let halved = ratio_change(&[r(0.55)], &[r(0.275)], 0.05).unwrap();
        assert_eq!((halved.call, halved.beyond_threshold), (Call::Below, true), "{halved:?}");
        let few = crate::timing::Ratio::of(&[0.5, 0.6]).unwrap();
        let open = ratio_change(&[few], &[r(0.5)], 0.05).unwrap();
        assert_eq!(open.call, Call::NotResolved, "a run without an interval resolves nothing");
    }

    /// A figure of one sample a run shows nothing of its spread: ×0.72
    /// between two runs (a curve's saturation over a read taken minutes
    /// apart did this on an unchanged guest) is not resolved at 10%.
    #[test]
    fn a_figure_of_few_samples_is_taken_to_vary_ten_percent() {
        use crate::report::headlines::{headline, Unit};
        let one = |v: f64| {
            headline("curves.saturated_of_read", &[], "x".into(), Unit::Other("ratio".into()), vec![v], v, true)
        };
        let doc = doc_with_bandwidth(1.0);
        let r =
            row(&[one(1.33)], &[one(0.96)], std::slice::from_ref(&doc), std::slice::from_ref(&doc), 0.1, true).unwrap();
        assert_eq!((r.verdict.call, r.regression), (Call::NotResolved, false), "{r:?}");
        assert!((r.between_runs_pct - FEW_SAMPLES_BETWEEN_RUNS * 100.0).abs() < 1e-9, "{r:?}");
    }

    #[test]
    fn different_cpus_are_said_first() {
        let a = doc_with_bandwidth(1.0);
        let mut b = doc_with_bandwidth(1.0);
        b.machine.cpu.identity.model_name = "Other CPU".into();
        let c = compare(std::slice::from_ref(&a), std::slice::from_ref(&b), None);
        assert!(!c.same_cpu);
        assert!(text(&c).starts_with("The runs ran on different CPUs"));
    }
}
