//! `hugepages` as text: the runs of each arm, their modes, the verdict
//! with its interval, and the advice; its headline figures.

use crate::model::document::Document;
use crate::model::outcome::hugepages::{self, Outcome};
use crate::report::headlines::{headline, Headline};
use crate::report::table::Table;
use crate::units::Bytes;

pub fn hugepages_text(o: &Outcome) -> String {
    let mut out = head_text(o);
    out.push_str(&summaries_table(o));
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
    out.push_str(&modes_text(o));
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

/// What ran, in which order, linked how, under which THP mode; and why
/// the tunable does not reach it, where it does not.
fn head_text(o: &Outcome) -> String {
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
    out
}

/// Each arm: its runs, times, coverage and speed-up.
fn summaries_table(o: &Outcome) -> String {
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
                (_, hugepages::Arm::Without) => "-".into(),
                (Some(r), _) => format!("×{:.3} [×{:.3}, ×{:.3}] n={}", r.estimate, r.low, r.high, r.n),
                (None, _) => "no pair".into(),
            },
        ]);
    }
    t.render()
}

/// Each arm's two groups of runs, where it has them, and its second look.
fn modes_text(o: &Outcome) -> String {
    let mut out = String::new();
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
    out
}

/// Every run in the order made, with what came before it and what the
/// kernel did meanwhile: the evidence for modes and order effects.
fn hugepages_runs_table(o: &Outcome) -> String {
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
fn mode_text(name: &str, m: &hugepages::Mode) -> String {
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
impl super::Render for Outcome {
    fn text(&self, _doc: &Document) -> String {
        hugepages_text(self)
    }
    /// Its runs are a table: each arm's wall times, in the order run.
    fn plots(&self, _doc: &Document) -> crate::error::Result<Vec<crate::report::plot::Plot>> {
        Ok(Vec::new())
    }
    fn metrics(&self, _doc: &Document) -> Vec<Headline> {
        hugepages_metrics(self)
    }
    fn advice(&self, _doc: &Document) -> Vec<String> {
        self.advice.clone()
    }
}
