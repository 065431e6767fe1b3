//! The fleet report as text (and as CSV): per CPU group, the hosts'
//! headlines side by side with each headline's spread, then the outliers
//! by rule, the model's verdict and the reference checks.

use super::{Fleet, Verdict};
use crate::report::table::Table;

pub fn render(f: &Fleet) -> String {
    let mut out = format!("fleet of {} host(s) in {} CPU group(s)\n", f.hosts.len(), f.groups.len());
    for g in &f.groups {
        out.push_str(&format!("\n{} — {} host(s): {}\n", g.cpu, g.hosts.len(), g.hosts.join(", ")));
        let mut header =
            vec!["headline".to_string(), "unit".into(), "median".into(), "MAD".into(), "min".into(), "max".into()];
        header.extend(g.hosts.iter().cloned());
        let mut t = Table::new(header);
        for s in &g.spreads {
            let mut row = vec![s.name.clone(), s.unit.clone(), num(s.median), num(s.mad), num(s.min), num(s.max)];
            for id in &g.hosts {
                let h = f.hosts.iter().find(|h| &h.id == id).expect("member");
                let mark = if g.outliers.iter().any(|o| &o.host == id && o.name == s.name) { " !" } else { "" };
                row.push(h.figure(&s.key).map_or_else(|| "not measured".into(), |x| format!("{}{mark}", num(x.value))));
            }
            t.row(row);
        }
        out.push_str(&t.render());
        match &g.model {
            Verdict::Applied { fleet_lines_in_flight, tolerance } => out.push_str(&format!(
                "model: the group keeps {fleet_lines_in_flight:.1} lines in flight (median); a host more than {:.0}% \
                 below the bandwidth its own latency predicts is flagged\n",
                tolerance * 100.0
            )),
            Verdict::NotApplied { reason } => out.push_str(&format!("model: not applied: {reason}\n")),
        }
        if g.hosts.len() < 3 {
            out.push_str("robust rule: not applied: fewer than three hosts\n");
        }
        if g.outliers.is_empty() {
            out.push_str("outliers: none\n");
        }
        for o in &g.outliers {
            out.push_str(&format!("outlier ({}, {}): {} — {}: {}\n", o.rule, o.direction, o.host, o.name, o.detail));
        }
    }
    for s in &f.series {
        out.push_str(&series_text(s));
    }
    if let Some(r) = &f.reference {
        out.push_str("\nreferences:\n");
        for h in r {
            out.push_str(&format!("  {}: {}\n", h.host, if h.passed { "PASS" } else { "FAIL" }));
            for c in h.checks.iter().filter(|c| !c.passed) {
                out.push_str(&format!("    {}: {}\n", c.metric, c.reason));
            }
        }
    }
    out
}

/// A host's runs in time order: each headline's values, spread and drift.
fn series_text(s: &super::Series) -> String {
    use super::Drift;
    let first = s.runs.first().map_or("", |r| r.started_utc.as_str());
    let last = s.runs.last().map_or("", |r| r.started_utc.as_str());
    let mut out =
        format!("\n{} over {} runs, {first} to {last} (the groups above use its newest run):\n", s.host, s.runs.len());
    let mut t = Table::new(["headline", "unit", "median", "min", "max", "spread", "drift"]);
    for f in &s.figures {
        let drift = match &f.drift {
            Drift::Tested { pct_over_span, span_s, p, trend: true, worse, .. } => format!(
                "{pct_over_span:+.1}% over {}, {} (Kendall p = {p:.3})",
                span(*span_s),
                if *worse { "worse" } else { "better" }
            ),
            Drift::Tested { pct_over_span, span_s, p, .. } => {
                format!("none beyond chance ({pct_over_span:+.1}% over {}, p = {p:.2})", span(*span_s))
            }
            Drift::NotTested { reason } => format!("not tested: {reason}"),
        };
        t.row([
            f.name.clone(),
            f.unit.clone(),
            num(f.median),
            num(f.min),
            num(f.max),
            format!("{:.1}%", f.spread_pct),
            drift,
        ]);
    }
    out.push_str(&t.render());
    out
}

/// "45 s", "3.2 min", "5.0 h", "4.0 days".
fn span(s: f64) -> String {
    match s {
        s if s < 120.0 => format!("{s:.0} s"),
        s if s < 7200.0 => format!("{:.1} min", s / 60.0),
        s if s < 172_800.0 => format!("{:.1} h", s / 3600.0),
        s => format!("{:.1} days", s / 86_400.0),
    }
}

fn num(v: f64) -> String {
    if v.abs() >= 100.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.3}")
    }
}

/// One row per host, run and headline:
/// `host,rank,cpu,headline,key,unit,value,outlier,started_utc`; a host
/// given as a series has a row per run (outliers are judged on its newest).
pub fn csv(f: &Fleet) -> String {
    let mut out = String::from("host,rank,cpu,headline,key,unit,value,outlier,started_utc\n");
    for h in &f.hosts {
        // One row: the host's cells, then the headline's, value, outliers, start.
        let mut row = |x: (&str, &str, &str), value: f64, outlier: String, started: &str| {
            let cells = [
                h.hostname.clone(),
                h.rank.map(|r| r.to_string()).unwrap_or_default(),
                h.cpu.clone(),
                x.0.to_string(),
                x.1.to_string(),
                x.2.to_string(),
                format!("{value}"),
                outlier,
                started.to_string(),
            ];
            out.push_str(&cells.map(|c| crate::report::csv::cell(&c)).join(","));
            out.push('\n');
        };
        // The older runs of a series first, then the newest as the fleet saw it.
        for s in f.series.iter().filter(|s| s.host == h.id) {
            for (i, run) in s.runs.iter().enumerate().filter(|(_, r)| r.run_id != h.run_id) {
                for x in &s.figures {
                    if let Some(v) = x.values[i] {
                        row((&x.name, &x.key, &x.unit), v, String::new(), &run.started_utc);
                    }
                }
            }
        }
        for x in &h.figures {
            let flagged: Vec<&str> = f
                .groups
                .iter()
                .flat_map(|g| &g.outliers)
                .filter(|o| o.host == h.id && o.name == x.name)
                .map(|o| o.rule.as_str())
                .collect();
            row((&x.name, &x.key, &x.unit), x.value, flagged.join("+"), &h.started_utc);
        }
    }
    out
}
