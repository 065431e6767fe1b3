//! The model rule: Little's law says a host's bandwidth is the lines it
//! keeps in flight times 64 B over its latency. Hosts with one CPU should
//! keep about as many lines in flight, so the fleet's median concurrency
//! and a host's own measured latency predict its bandwidth; a host more
//! than [`TOLERANCE`] below that prediction is flagged, even when its
//! bandwidth lies inside the fleet's spread (its latency is better than
//! the others', so its bandwidth should be too). Inputs: the all-thread
//! `simd` read bandwidth and the random-chase latency at the largest
//! working set, both on 4 KiB pages.

use super::{Host, Inputs, Outlier, Verdict};
use crate::analysis::littles_law::lines_in_flight;
use crate::memory::PagePolicy;
use crate::model::document::Document;
use crate::model::outcome::{bandwidth, latency};
use crate::timing::stats::median;
use crate::units::Nanos;

/// Below the prediction by more than this, a host is flagged.
pub const TOLERANCE: f64 = 0.10;
const LINE: u64 = 64;

/// The model's inputs a document holds, where it has both figures.
pub fn inputs_of(doc: &Document) -> Option<Inputs> {
    let bw = doc.outcome::<bandwidth::Outcome>()?;
    let h = bw.headlines.iter().filter(|h| h.pages == PagePolicy::Small).max_by_key(|h| h.threads)?;
    let lat = doc.outcome::<latency::Outcome>()?;
    let p = lat
        .points
        .iter()
        .filter(|p| p.pages == PagePolicy::Small && p.order == "random")
        .max_by_key(|p| p.size_bytes)?;
    let i = Inputs { bytes_per_s: h.simd_bytes_per_s, threads: h.threads, latency_ns: Nanos(p.latency_ns.median) };
    (i.bytes_per_s.is_finite() && i.latency_ns.0.is_finite() && i.latency_ns.0 > 0.0).then_some(i)
}

/// The lines a host keeps in flight, by Little's law.
pub fn lines_of(i: &Inputs) -> f64 {
    lines_in_flight(i.bytes_per_s, i.latency_ns.0, LINE)
}

/// The model's verdict on a group and the hosts it flags.
pub fn judge(hosts: &[&Host]) -> (Verdict, Vec<Outlier>) {
    let with: Vec<(&Host, Inputs)> = hosts.iter().filter_map(|h| h.model_inputs.map(|i| (*h, i))).collect();
    if with.len() < 3 {
        let reason = format!(
            "{} host(s) have both a bandwidth and a latency headline on 4 KiB pages: the model needs three",
            with.len()
        );
        return (Verdict::NotApplied { reason }, Vec::new());
    }
    let c: Vec<f64> = with.iter().map(|(_, i)| lines_of(i)).collect();
    let fleet = median(&c).expect("three or more");
    let outliers = with
        .iter()
        .filter_map(|(h, i)| {
            let predicted = fleet * LINE as f64 / (i.latency_ns.0 * 1e-9);
            (i.bytes_per_s < predicted * (1.0 - TOLERANCE)).then(|| Outlier {
                host: h.id.clone(),
                name: format!("read bandwidth, {} thread(s), against Little's law", i.threads),
                value: i.bytes_per_s / 1e9,
                rule: "model".into(),
                direction: "worse".into(),
                detail: format!(
                    "{:.2} GB/s is {:.0}% below the {:.2} GB/s that its latency of {:.1} ns and the fleet's {:.1} \
                     lines in flight predict ({:.1} lines here)",
                    i.bytes_per_s / 1e9,
                    (1.0 - i.bytes_per_s / predicted) * 100.0,
                    predicted / 1e9,
                    i.latency_ns,
                    fleet,
                    lines_of(i)
                ),
            })
        })
        .collect();
    (Verdict::Applied { fleet_lines_in_flight: fleet, tolerance: TOLERANCE }, outliers)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fleet::robust;

    fn host(id: &str, gbps: f64, ns: f64) -> Host {
        let mut h = crate::fleet::test_host(id, "cpu", &[("bw", "GB/s", gbps, true)]);
        h.model_inputs = Some(Inputs { bytes_per_s: gbps * 1e9, threads: 2, latency_ns: Nanos(ns) });
        h
    }

    /// Host n4 reads 38 GB/s, inside the spread of 38–41 (the robust rule
    /// passes it), but its latency is 80 ns where the others' is 100: the
    /// fleet's 62.5 lines in flight predict 50 GB/s for it, and 38 is 24%
    /// below.
    #[test]
    fn a_host_inside_the_spread_but_below_its_prediction_is_flagged() {
        let hosts = [
            host("n0", 40.0, 100.0),
            host("n1", 41.0, 100.0),
            host("n2", 39.0, 100.0),
            host("n3", 40.0, 100.0),
            host("n4", 38.0, 80.0),
        ];
        let refs: Vec<&Host> = hosts.iter().collect();
        assert!(robust::judge(&refs).1.is_empty(), "inside the fleet's spread");
        let (verdict, outliers) = judge(&refs);
        match verdict {
            Verdict::Applied { fleet_lines_in_flight, tolerance } => {
                assert!((fleet_lines_in_flight - 62.5).abs() < 1e-9 && tolerance == 0.10, "{fleet_lines_in_flight}");
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(outliers.len(), 1, "{outliers:?}");
        assert_eq!((outliers[0].host.as_str(), outliers[0].rule.as_str()), ("n4", "model"));
        assert!(outliers[0].detail.contains("24% below the 50.00 GB/s"), "{}", outliers[0].detail);
        let (v, o) = judge(&refs[..2]);
        assert!(matches!(v, Verdict::NotApplied { .. }) && o.is_empty(), "two hosts: no model");
    }
}
