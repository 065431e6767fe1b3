//! Figures derived across experiments of one document.
//!
//! Little's law: Bandwidth = Concurrency / Latency, so the concurrency a
//! loop reaches is bandwidth × latency / line size, in lines in flight
//! (McCalpin 2010: 6.08 GB/s × 74 ns ≈ 450 B ≈ 7 lines).

use crate::model::document::Document;
use crate::model::outcome::{bandwidth, latency};
use crate::memory::PagePolicy;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Concurrency {
    pub pages: PagePolicy,
    pub threads: usize,
    pub bytes_per_s: f64,
    pub latency_ns: f64,
    pub line_bytes: u64,
    /// bytes_per_s × latency_ns × 1e-9 / line_bytes
    pub lines_in_flight: f64,
    pub formula: String,
}

/// Lines in flight for one bandwidth figure and one latency figure.
pub fn lines_in_flight(bytes_per_s: f64, latency_ns: f64, line_bytes: u64) -> f64 {
    bytes_per_s * latency_ns * 1e-9 / line_bytes as f64
}

/// The effective concurrency of every bandwidth headline whose page policy
/// also has a DRAM latency in the document.
pub fn concurrency(doc: &Document) -> Vec<Concurrency> {
    let (Some(bw), Some(lat)) =
        (doc.outcome::<bandwidth::Outcome>(), doc.outcome::<latency::Outcome>())
    else {
        return Vec::new();
    };
    let line = doc.machine.line_bytes();
    bw.headlines
        .iter()
        .filter_map(|h| {
            let dram = lat.levels.iter().find(|l| l.pages == h.pages && l.name == "DRAM")?;
            let n = lines_in_flight(h.bytes_per_s, dram.latency_ns, line);
            Some(Concurrency {
                pages: h.pages,
                threads: h.threads,
                bytes_per_s: h.bytes_per_s,
                latency_ns: dram.latency_ns,
                line_bytes: line,
                lines_in_flight: n,
                formula: format!(
                    "{:.2} GB/s × {:.0} ns / {line} B = {:.1} lines in flight",
                    h.bytes_per_s / 1e9,
                    dram.latency_ns,
                    n
                ),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mccalpins_figures() {
        // 6.08 GB/s × 74 ns = 450 B: about 7 lines of 64 B.
        let n = lines_in_flight(6.08e9, 74.0, 64);
        assert!((n - 7.03).abs() < 0.01, "{n}");
    }
}
