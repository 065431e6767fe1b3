//! The region API's document as text: each region's entries, time,
//! counters and metrics, what one begin+end pair costs; its headlines.

use super::stat::{events_text, metrics_text, pmu_check};
use crate::model::document::Document;
use crate::model::outcome::regions::{self, Outcome};
use crate::report::headlines::{headline, Headline};

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

impl super::Render for Outcome {
    fn text(&self, _doc: &Document) -> String {
        regions_text(self)
    }
    /// A program's regions are a table of counts.
    fn plots(&self, _doc: &Document) -> crate::error::Result<Vec<crate::report::plot::Plot>> {
        Ok(Vec::new())
    }
    fn metrics(&self, _doc: &Document) -> Vec<Headline> {
        region_metrics(self)
    }
    /// Counts of the program's own regions: what they mean is the program's.
    fn advice(&self, _doc: &Document) -> Vec<String> {
        Vec::new()
    }
}

