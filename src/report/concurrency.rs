//! Little's law across two experiments of one document: the lines in
//! flight that one thread's streaming bandwidth implies, with the DRAM
//! latency measured on huge pages (a stream pays one walk per page, a
//! random chase on 4 KiB pages one per load, so the 4 KiB figure would
//! inflate the result), and the K-chain sweep's saturation beside it as a
//! cross-check on demand misses alone.

use crate::analysis::littles_law::{lines_in_flight, saturation};
use crate::memory::PagePolicy;
use crate::model::document::Document;
use crate::model::outcome::{bandwidth, latency};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Concurrency {
    /// Page policy of the bandwidth figure.
    pub pages: PagePolicy,
    pub threads: usize,
    /// Plain `simd` bandwidth divided by the threads.
    pub bytes_per_s_per_thread: f64,
    /// Idle DRAM latency on huge pages (walk-free), and where it came from.
    pub latency_ns: f64,
    pub latency_pages: PagePolicy,
    pub line_bytes: u64,
    /// Demand and hardware-prefetch lines in flight per thread.
    pub lines_in_flight: f64,
    /// The chain count where the K-chain speed-up saturates (demand misses
    /// only, no prefetch), on the same pages, when measured.
    pub chase_saturation_chains: Option<usize>,
    pub formula: String,
}

/// The DRAM-sized point of a huge-page policy whose own region had at
/// least 90% coverage.
fn walk_free_dram(lat: &latency::Outcome, llc_total: u64) -> Option<(PagePolicy, f64)> {
    let huge = |p: &latency::Point| p.pages != PagePolicy::Small && p.huge_fraction.is_some_and(|f| f >= 0.9);
    lat.points
        .iter()
        .filter(|p| p.order == "random" && huge(p) && p.size_bytes.0 >= 4 * llc_total)
        .max_by_key(|p| p.size_bytes)
        .map(|p| (p.pages, p.latency_ns.median))
}

/// Lines in flight for every bandwidth headline, where the document has a
/// walk-free DRAM latency; empty otherwise (the report says not measured).
pub fn concurrency(doc: &Document) -> Vec<Concurrency> {
    let (Some(bw), Some(lat)) = (doc.outcome::<bandwidth::Outcome>(), doc.outcome::<latency::Outcome>()) else {
        return Vec::new();
    };
    let llc = doc.machine.sizing_llc().0 .0;
    let Some((lat_pages, latency_ns)) = walk_free_dram(lat, llc) else { return Vec::new() };
    let line = doc.machine.line_bytes();
    let chains: Vec<(usize, f64)> =
        lat.mlp.iter().filter(|m| m.pages == lat_pages).map(|m| (m.chains, m.speedup)).collect();
    let sat = saturation(&chains, 0.05).map(|s| s.0);
    bw.headlines
        .iter()
        .map(|h| {
            let per_thread = h.simd_bytes_per_s / h.threads as f64;
            let n = lines_in_flight(per_thread, latency_ns, line);
            Concurrency {
                pages: h.pages,
                threads: h.threads,
                bytes_per_s_per_thread: per_thread,
                latency_ns,
                latency_pages: lat_pages,
                line_bytes: line,
                lines_in_flight: n,
                chase_saturation_chains: sat,
                formula: format!(
                    "{:.2} GB/s per thread × {latency_ns:.0} ns ({lat_pages} pages, idle) / {line} B = {n:.1} demand + hardware-prefetch lines in flight per thread{}",
                    per_thread / 1e9,
                    if h.threads > 1 { " (a lower bound: loaded latency is higher than idle)" } else { "" }
                ),
            }
        })
        .collect()
}
