//! `stat` and the region API as text: the exit, each counter (or why it is
//! not measured, once per reason), derived metrics with their formulas,
//! memory and huge-page coverage, what cannot be known, advice, intervals.

use crate::counters::sanity::PmuCheck;
use crate::counters::CounterStatus;
use crate::model::document::Document;
use crate::model::outcome::hugepages;
use crate::model::outcome::stat::{EventCount, Outcome};
use crate::model::outcome::{regions, stat};
use crate::report::headlines::{headline, Headline};
use crate::report::table::Table;
use crate::units::Bytes;

pub fn stat_text(o: &Outcome) -> String {
    let mut out = format!(
        "stat: `{}` {} after {:.3} s (user {:.3} s, system {:.3} s, peak RSS {})\n",
        o.command.join(" "),
        o.exit.describe(),
        o.wall_s,
        o.usage.user_s,
        o.usage.system_s,
        Bytes(o.usage.max_rss_bytes)
    );
    out.push_str(&format!("PMU check: {}\n", pmu_check(&o.pmu_check)));
    out.push_str(&events_text(&o.events));
    out.push_str(&metrics_text(&o.metrics));
    out.push_str(&memory_text(o));
    out.push_str(&figures_text(&o.machine_figures));
    for line in o.cannot_know.iter().chain(&o.advice) {
        out.push_str(&format!("  → {line}\n"));
    }
    out.push_str(&intervals_text(o));
    out
}

pub fn pmu_check(c: &PmuCheck) -> String {
    match c {
        PmuCheck::Trusted { expected, counted, error } => format!(
            "trusted ({} instructions counted for a loop of {}, {:+.2}%)",
            crate::units::group_thousands(*counted),
            crate::units::group_thousands(*expected),
            error * 100.0
        ),
        PmuCheck::Suspect { expected, counted, error } => format!(
            "SUSPECT: {} instructions counted for a loop of exactly {} ({:+.1}%): metrics from hardware counts are marked",
            crate::units::group_thousands(*counted),
            crate::units::group_thousands(*expected),
            error * 100.0
        ),
        PmuCheck::Unavailable { reason } => format!("not made ({reason})"),
    }
}

/// Counts, then each distinct reason for the ones not measured.
pub fn events_text(events: &[EventCount]) -> String {
    let mut t = Table::new(["event", "count", "what it counts"]);
    let mut reasons: Vec<(String, Vec<&str>)> = Vec::new();
    for e in events {
        t.row([e.name.clone(), e.status.display(), e.description.clone()]);
        let why = match &e.status {
            CounterStatus::Unavailable { reason, fix } => {
                Some(format!("{reason}{}", fix.as_ref().map(|f| format!(" (fix: {f})")).unwrap_or_default()))
            }
            CounterStatus::NotCounted { reason } => Some(reason.clone()),
            _ => None,
        };
        if let Some(why) = why {
            match reasons.iter_mut().find(|r| r.0 == why) {
                Some(r) => r.1.push(&e.name),
                None => reasons.push((why, vec![&e.name])),
            }
        }
    }
    let mut out = t.render();
    for (why, names) in reasons {
        out.push_str(&format!("  not measured: {}: {why}\n", names.join(", ")));
    }
    out
}

pub fn metrics_text(metrics: &[crate::counters::metrics::Metric]) -> String {
    if metrics.is_empty() {
        return String::new();
    }
    let mut t = Table::new(["derived metric", "value", "formula"]);
    for m in metrics {
        t.row([m.name.clone(), m.display(), m.formula.clone()]);
    }
    t.render()
}

fn memory_text(o: &Outcome) -> String {
    let c = &o.coverage;
    if c.samples == 0 {
        return "memory: no sample of /proc/PID/smaps_rollup (the program ended within the first period)\n".into();
    }
    format!(
        "memory: peak RSS {}, peak on huge pages {}, time-weighted huge-page coverage {} ({} samples of /proc/PID/smaps_rollup; child processes not included)\n",
        Bytes(c.peak_rss_bytes),
        Bytes(c.peak_huge_bytes),
        c.time_weighted_huge_fraction.map(|f| format!("{:.1}%", f * 100.0)).unwrap_or_else(|| "not measured (one sample)".into()),
        c.samples
    )
}

fn figures_text(f: &stat::MachineFigures) -> String {
    let mut out = match (f.walk_ns, &f.source) {
        (Some(w), Some(s)) => format!("page-walk cost {w:.1} ns (memperf tlb, {s})\n"),
        (Some(w), None) => format!("page-walk cost {w:.1} ns\n"),
        (None, _) => "page-walk cost: not measured\n".into(),
    };
    for n in &f.notes {
        out.push_str(&format!("  note: {n}\n"));
    }
    out
}

fn intervals_text(o: &Outcome) -> String {
    let Some(ms) = o.interval_ms else { return String::new() };
    let counted: Vec<usize> =
        (0..o.events.len()).filter(|&i| o.intervals.iter().any(|r| r.counts[i].is_some())).collect();
    let mut head = vec!["t s".to_string()];
    head.extend(counted.iter().map(|&i| o.events[i].name.clone()));
    head.push("RSS".into());
    head.push("on huge pages".into());
    let mut t = Table::new(head);
    for r in &o.intervals {
        let mut row = vec![format!("{:.3}", r.t_s)];
        row.extend(counted.iter().map(|&i| match r.counts[i] {
            Some(v) => crate::units::group_thousands(v.round() as u64),
            None => "not counted".into(),
        }));
        row.push(r.memory.map(|m| Bytes(m.rss_bytes).to_string()).unwrap_or_else(|| "-".into()));
        row.push(r.memory.map(|m| Bytes(m.huge_bytes()).to_string()).unwrap_or_else(|| "-".into()));
        t.row(row);
    }
    format!("intervals of {ms} ms (counts during each; the last row ends at exit)\n{}", t.render())
}

/// One `-I` row as it is printed while the program runs (to stderr).
pub fn live_interval(events: &[String], row: &crate::model::outcome::stat::Interval) -> String {
    let mut out = format!("memperf stat {:>9.3} s", row.t_s);
    for (name, count) in events.iter().zip(&row.counts) {
        if let Some(v) = count {
            out.push_str(&format!("  {name} {}", crate::units::group_thousands(v.round() as u64)));
        }
    }
    if let Some(m) = row.memory {
        out.push_str(&format!("  RSS {} (huge {})", Bytes(m.rss_bytes), Bytes(m.huge_bytes())));
    }
    out.push('\n');
    out
}

pub fn regions_text(o: &regions::Outcome) -> String {
    let mut out = format!(
        "regions of `{}` (pid {}); one begin+end pair costs {}\n",
        o.program,
        o.pid,
        o.overhead_ns.map(|n| format!("{n:.0} ns")).unwrap_or_else(|| "not measured".into())
    );
    out.push_str(&format!("PMU check: {}\n", pmu_check(&o.pmu_check)));
    let reads: Vec<String> = o.read_methods.iter().map(|(e, m)| format!("{e}: {m}")).collect();
    if !reads.is_empty() {
        out.push_str(&format!("counters read by {}\n", reads.join(", ")));
    }
    for r in &o.regions {
        let time = match r.entries {
            0 => "no completed entry".to_string(),
            n => format!(
                "{n} entries on {} thread(s), {:.3} ms in all ({:.1} µs per entry)",
                r.threads,
                r.wall_ns as f64 / 1e6,
                r.wall_ns as f64 / n as f64 / 1e3
            ),
        };
        let open = match r.open_at_exit {
            0 => String::new(),
            n => format!("; {n} begin(s) without an end at exit"),
        };
        out.push_str(&format!("region '{}': {time}{open}\n", r.name));
        out.push_str(&events_text(&r.events));
        out.push_str(&metrics_text(&r.metrics));
    }
    out
}

pub fn hugepages_text(o: &crate::model::outcome::hugepages::Outcome) -> String {
    use crate::process::elf::Linkage;
    let linkage = match &o.linkage {
        Linkage::Glibc { interpreter } => format!("dynamically linked through {interpreter}"),
        Linkage::OtherLibc { interpreter } => format!("linked through {interpreter}"),
        Linkage::Static => "statically linked".into(),
        Linkage::NotElf => "not an ELF file (a script)".into(),
    };
    let mut out = format!(
        "hugepages: `{}`, {} round(s) of {} ({}); {linkage}, glibc {}, THP {}{}\n",
        o.command.join(" "),
        o.rounds,
        o.arms.iter().map(|a| a.tunable()).collect::<Vec<_>>().join(" vs "),
        match o.order_seed {
            Some(seed) => format!("random order, each arm after each arm equally often, seed {seed}"),
            None => "order rotated each round".into(),
        },
        o.glibc_version.as_deref().unwrap_or("unknown"),
        o.thp_mode,
        o.thp_defrag.as_deref().map(|d| format!(", defrag {d}")).unwrap_or_default()
    );
    if let Some(why) = &o.tunable_ignored {
        out.push_str(&format!("  the tunable will not reach it: {why}\n"));
    }
    let mut t = Table::new([
        "arm",
        "runs ok",
        "failed",
        "wall s (median)",
        "user s",
        "system s",
        "peak on huge pages",
        "huge coverage",
        "speed-up vs without",
    ]);
    let opt = |v: Option<f64>, p: usize| v.map(|v| format!("{v:.p$}")).unwrap_or_else(|| "not measured".into());
    for s in &o.summaries {
        t.row([
            s.arm.name().to_string(),
            s.runs_ok.to_string(),
            s.runs_failed.to_string(),
            opt(s.wall_s.as_ref().map(|w| w.median), 3),
            opt(s.user_s_median, 3),
            opt(s.system_s_median, 3),
            Bytes(s.peak_huge_bytes).to_string(),
            s.huge_fraction_median.map(|f| format!("{:.1}%", f * 100.0)).unwrap_or_else(|| "not measured".into()),
            match (&s.speedup, s.arm) {
                (_, crate::model::outcome::hugepages::Arm::Without) => "-".into(),
                (Some(r), _) => format!("×{:.3} [×{:.3}, ×{:.3}] n={}", r.median, r.low, r.high, r.n),
                (None, _) => "no pair".into(),
            },
        ]);
    }
    out.push_str(&t.render());
    for s in &o.summaries {
        let parts: Vec<String> = s
            .counter_medians
            .iter()
            .map(|(n, v)| match v {
                Some(v) => format!("{n} {}", crate::units::group_thousands(v.round() as u64)),
                None => format!("{n} not measured"),
            })
            .collect();
        if !parts.is_empty() {
            out.push_str(&format!("  {} counters, median per run: {}\n", s.arm.name(), parts.join(", ")));
        }
    }
    out.push_str(&hugepages_runs_table(o));
    for s in &o.summaries {
        if let Some(m) = &s.modes {
            out.push_str(&format!(
                "  {} runs form two groups (×{:.2} apart{}): {}; {}\n",
                s.arm.name(),
                m.separation,
                if m.by_system_time { " in system time" } else { "" },
                mode_text("fast", &m.fast),
                mode_text("slow", &m.slow)
            ));
        }
        if let Some(look) = &s.second_look {
            out.push_str(&format!(
                "  {} speed-up, second look (even and odd rounds apart): {}\n",
                s.arm.name(),
                look.describe()
            ));
        }
    }
    for r in o.runs.iter().filter(|r| !r.ok()) {
        out.push_str(&format!("  round {} {}: {} (left out)\n", r.round + 1, r.arm.name(), r.exit.describe()));
        if let Some(tail) = &r.output_tail {
            for line in tail.lines().rev().take(5).collect::<Vec<_>>().into_iter().rev() {
                out.push_str(&format!("    | {line}\n"));
            }
        }
    }
    for a in &o.advice {
        out.push_str(&format!("  → {a}\n"));
    }
    out
}

/// Every run in the order made, with what came before it and what the
/// kernel did meanwhile: the evidence for modes and order effects.
fn hugepages_runs_table(o: &crate::model::outcome::hugepages::Outcome) -> String {
    let mut t = Table::new([
        "run",
        "arm",
        "after",
        "wall s",
        "system s",
        "on huge pages",
        "compaction stalls",
        "THP faults (fallback)",
    ]);
    for (i, r) in o.runs.iter().enumerate() {
        let k = r.kernel.as_ref();
        t.row([
            (i + 1).to_string(),
            r.arm.name().to_string(),
            r.after.map(|a| a.name().to_string()).unwrap_or_else(|| "-".into()),
            format!("{:.3}", r.wall_s),
            format!("{:.3}", r.usage.system_s),
            r.coverage
                .time_weighted_huge_fraction
                .map(|f| format!("{:.0}%", f * 100.0))
                .unwrap_or_else(|| "not measured".into()),
            k.map(|k| crate::units::group_thousands(k.compact_stalls)).unwrap_or_else(|| "not measured".into()),
            k.map(|k| {
                format!(
                    "{} ({})",
                    crate::units::group_thousands(k.thp_fault_alloc),
                    crate::units::group_thousands(k.thp_fault_fallback)
                )
            })
            .unwrap_or_else(|| "not measured".into()),
        ]);
    }
    t.render()
}

/// "fast: rounds 2, 4, median 1.255 s, system 0.75 s, after …".
fn mode_text(name: &str, m: &crate::model::outcome::hugepages::Mode) -> String {
    let rounds: Vec<String> = m.rounds.iter().map(|r| (r + 1).to_string()).collect();
    let after: Vec<String> = m.after.iter().map(|(a, n)| format!("{n} after {}", a.name())).collect();
    let stalls = m.compact_stalls_median.map(|v| format!(", {v:.0} compaction stalls")).unwrap_or_default();
    format!(
        "{name}: round(s) {}, median {:.3} s, system {:.3} s{stalls}{}",
        rounds.join(", "),
        m.wall_s_median,
        m.system_s_median,
        if after.is_empty() { String::new() } else { format!(", {}", after.join(", ")) }
    )
}

/// One run of a program: its times, memory and the metrics computed.
fn stat_metrics(s: &stat::Outcome) -> Vec<Headline> {
    let one = |name: &str, unit: crate::report::headlines::Unit, v: f64, higher: bool| {
        let id = format!("stat.{}", crate::report::headlines::id_part(name));
        headline(&id, &[], format!("stat {name}"), unit, vec![v], v, higher)
    };
    let mut out = vec![
        one("wall time", crate::report::headlines::Unit::Seconds, s.wall_s, false),
        one("CPU time", crate::report::headlines::Unit::Seconds, s.usage.user_s + s.usage.system_s, false),
        one(
            "peak RSS",
            crate::report::headlines::Unit::Mebibytes,
            s.usage.max_rss_bytes as f64 / (1 << 20) as f64,
            false,
        ),
    ];
    if let Some((faults, _)) = s.event("page-faults").and_then(|e| e.status.value()) {
        out.push(one("page faults", crate::report::headlines::Unit::Count, faults, false));
    }
    for (name, higher) in [("CPI", false), ("IPC", true), ("estimated time in page walks", false)] {
        if let Some(m) = s.metric(name) {
            if let Some(v) = m.value() {
                out.push(one(name, crate::report::headlines::Unit::from(m.unit.clone()), v, higher));
            }
        }
    }
    out
}

/// Wall time of each arm of the A/B.
fn hugepages_metrics(h: &hugepages::Outcome) -> Vec<Headline> {
    h.summaries
        .iter()
        .filter_map(|s| {
            let samples: Vec<f64> = h.runs.iter().filter(|r| r.arm == s.arm && r.ok()).map(|r| r.wall_s).collect();
            let m = s.wall_s.as_ref()?.median;
            let name = format!("hugepages {} wall time", s.arm.name());
            Some(headline(
                "hugepages.wall_time",
                &[("arm", s.arm.name().to_string())],
                name,
                crate::report::headlines::Unit::Seconds,
                samples,
                m,
                false,
            ))
        })
        .collect()
}

/// Wall time per entry of each region.
fn region_metrics(r: &regions::Outcome) -> Vec<Headline> {
    r.regions
        .iter()
        .filter(|g| g.entries > 0)
        .map(|g| {
            let v = g.wall_ns as f64 / g.entries as f64;
            let name = format!("region {} per entry", g.name);
            headline(
                "regions.per_entry",
                &[("region", g.name.clone())],
                name,
                crate::report::headlines::Unit::Nanoseconds(None),
                vec![v],
                v,
                false,
            )
        })
        .collect()
}

/// With `--wss`, the hot set's own section, plots, metrics and verdict
/// follow stat's.
impl super::Render for Outcome {
    fn text(&self, doc: &Document) -> String {
        let mut out = stat_text(self);
        if let Some(h) = &self.hot_set {
            out.push_str(
                "
hot set (--wss; clearing the accessed bits makes the program refill its TLB, which the counts above include):\n",
            );
            out.push_str(&h.text(doc));
        }
        out
    }
    fn plots(&self, doc: &Document) -> crate::error::Result<Vec<crate::report::plot::Plot>> {
        self.hot_set.as_ref().map_or(Ok(Vec::new()), |h| h.plots(doc))
    }
    fn metrics(&self, doc: &Document) -> Vec<Headline> {
        let hot = self.hot_set.as_ref().map(|h| h.metrics(doc)).unwrap_or_default();
        stat_metrics(self).into_iter().chain(hot).collect()
    }
    fn advice(&self, _doc: &Document) -> Vec<String> {
        self.advice.iter().chain(self.hot_set.iter().flat_map(|h| &h.verdict)).cloned().collect()
    }
    /// Totals, metrics, interval counts and memory samples.
    fn csv(&self) -> Option<String> {
        Some(crate::report::csv::stat(self))
    }
}

impl super::Render for crate::model::outcome::regions::Outcome {
    fn text(&self, _doc: &Document) -> String {
        regions_text(self)
    }
    fn metrics(&self, _doc: &Document) -> Vec<Headline> {
        region_metrics(self)
    }
}

impl super::Render for crate::model::outcome::hugepages::Outcome {
    fn text(&self, _doc: &Document) -> String {
        hugepages_text(self)
    }
    fn metrics(&self, _doc: &Document) -> Vec<Headline> {
        hugepages_metrics(self)
    }
    fn advice(&self, _doc: &Document) -> Vec<String> {
        self.advice.clone()
    }
}
