//! Little's law across two experiments of one document: the lines in
//! flight that one thread's streaming bandwidth implies, with the DRAM
//! latency measured on huge pages (a 4 KiB chase pays a walk per load, a
//! stream one per page), and the K-chain sweep's saturation beside it. The
//! figure is said only where it passes its checks (a walk-free huge-page
//! latency, the DRAM point nearest the caches, no more lines in flight than
//! a core keeps: [`core_lines_max`](crate::analysis::littles_law::core_lines_max));
//! otherwise it is "not claimed", with the check named.

use crate::analysis::littles_law::{beyond_a_core, core_lines_max, lines_in_flight, saturation};
use crate::memory::PagePolicy;
use crate::model::document::Document;
use crate::model::outcome::{bandwidth, latency, tlb};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Concurrency {
    /// Page policy of the bandwidth figure.
    pub pages: PagePolicy,
    pub threads: usize,
    /// Plain `simd` bandwidth divided by the threads.
    pub bytes_per_s_per_thread: f64,
    /// Idle DRAM latency on huge pages (walk-free), and where it came from.
    pub latency_ns: crate::units::Nanos,
    pub latency_pages: PagePolicy,
    pub line_bytes: u64,
    /// Demand and hardware-prefetch lines in flight per thread.
    pub lines_in_flight: f64,
    /// The chain count where the K-chain speed-up saturates (demand misses
    /// only, no prefetch), on the same pages, when measured.
    pub chase_saturation_chains: Option<usize>,
    pub formula: String,
    /// Why the figure is not claimed (a check it failed), or None.
    pub not_claimed: Option<String>,
}

/// The DRAM-sized point of a huge-page policy whose own region had at
/// least 90% coverage: the smallest one in memory (from `in_memory_from`),
/// which has the fewest page walks if huge pages do not cover them all.
fn walk_free_dram(lat: &latency::Outcome, in_memory_from: u64) -> Option<(PagePolicy, f64)> {
    let huge = |p: &latency::Point| p.pages != PagePolicy::Small && p.huge_fraction.is_some_and(|f| f >= 0.9);
    lat.points
        .iter()
        .filter(|p| p.order == "random" && huge(p) && p.size_bytes.0 >= in_memory_from)
        .min_by_key(|p| p.size_bytes)
        .map(|p| (p.pages, p.latency_ns.median))
}

/// Why a huge-page latency of this document is not known to be walk-free:
/// `tlb` found huge pages stepping where 4 KiB pages do (a guest whose
/// host backs it with small pages), so every huge-page load beyond that
/// reach walks; or `tlb`, which tells, had no huge-page control, or has
/// not run in this document (yet: the suite prints `loaded-latency` and
/// `curves` before it). Only a valid control clears them.
fn walks_in_huge_pages(doc: &Document) -> Option<String> {
    match doc.outcome::<tlb::Outcome>().map(|t| &t.control) {
        Some(tlb::Control::Valid { .. }) => None,
        Some(tlb::Control::SameReach { policy, pages }) => Some(format!(
            "the DRAM latency on huge pages includes page walks here: `tlb` found {policy} pages using small TLB entries (they step at {pages} pages, as 4 KiB pages do)"
        )),
        Some(tlb::Control::NotHuge { .. } | tlb::Control::Unavailable { .. }) => Some(
            "whether huge pages spare a chase its page walks is not measured: `tlb` had no huge-page control region".into(),
        ),
        None => Some(
            "whether huge pages spare a chase its page walks is not measured yet: `tlb` tells, and it has not run in this document (a suite's report says; on its own: memperf run --only tlb,loaded-latency,curves)".into(),
        ),
    }
}

/// Why the random chase over `chase` (the chaser of `loaded-latency` and
/// `curves`) pays page walks that a stream's lines do not, if it does: a
/// region under 90% on huge pages walks on its loads beyond them, and huge
/// pages that `tlb` found using small entries walk beyond that reach. Its
/// latency then inflates Little's law as the 4 KiB chase would, and the
/// lines in flight it gives are not claimed, as in the concurrency
/// section.
pub fn chase_walks(doc: &Document, chase: &crate::memory::Backing) -> Option<String> {
    match chase.huge_fraction {
        Some(f) if f >= 0.9 => walks_in_huge_pages(doc),
        Some(f) => Some(format!(
            "the chaser's region is {:.0}% on huge pages, so its random chase walks the page tables on the loads beyond them",
            f * 100.0
        )),
        None => Some("the chaser's huge-page coverage was not read, so its latency may include page walks".into()),
    }
}

/// Lines in flight for every bandwidth headline, where the document has a
/// walk-free DRAM latency; empty otherwise (the report says not measured).
pub fn concurrency(doc: &Document) -> Vec<Concurrency> {
    let (Some(bw), Some(lat)) = (doc.outcome::<bandwidth::Outcome>(), doc.outcome::<latency::Outcome>()) else {
        return Vec::new();
    };
    // In memory: where the probe verified it, and at the latest from
    // memory_by_size (eight times the last-level cache).
    let from = doc.machine.chase_in_memory_from().0;
    let Some((lat_pages, latency_ns)) = walk_free_dram(lat, from) else { return Vec::new() };
    let line = doc.machine.line_bytes();
    let chains: Vec<(usize, f64)> =
        lat.mlp.iter().filter(|m| m.pages == lat_pages).map(|m| (m.chains, m.speedup)).collect();
    let sat = saturation(&chains, 0.05).map(|s| s.0);
    let walks = walks_in_huge_pages(doc);
    bw.headlines
        .iter()
        .map(|h| {
            let per_thread = h.simd_bytes_per_s / h.threads as f64;
            let n = lines_in_flight(per_thread, latency_ns, line);
            let not_claimed = walks.clone().or_else(|| beyond_a_core(n, core_lines_max(&doc.machine.cpu.identity.vendor)));
            Concurrency {
                pages: h.pages,
                threads: h.threads,
                bytes_per_s_per_thread: per_thread,
                latency_ns: crate::units::Nanos(latency_ns),
                latency_pages: lat_pages,
                line_bytes: line,
                lines_in_flight: n,
                chase_saturation_chains: sat,
                not_claimed,
                formula: format!(
                    "{:.2} GB/s per thread × {latency_ns:.0} ns ({lat_pages} pages, idle) / {line} B = {n:.1} demand + hardware-prefetch lines in flight per thread{}",
                    per_thread / 1e9,
                    if h.threads > 1 { " (a lower bound: loaded latency is higher than idle)" } else { "" }
                ),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn recorded(name: &str) -> Document {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/machines")
            .join(name)
            .join("run-quick.json");
        crate::model::document_from_json(&std::fs::read_to_string(path).unwrap()).unwrap()
    }

    /// The Intel recording's quick suite: `tlb` found THP stepping at the 4 KiB
    /// reach, so its huge-page DRAM latency (272 ns at 2 GiB, climbing
    /// with the working set) is no walk-free latency. The 66 lines in
    /// flight an expert knocked down are not claimed, and no advice
    /// quotes them.
    #[test]
    fn a_latency_full_of_walks_gives_no_concurrency() {
        let doc = recorded("intel-xeon-m167-kvm-2vcpu");
        let c = concurrency(&doc);
        assert!(!c.is_empty());
        for x in &c {
            let why = x.not_claimed.as_deref().unwrap_or_else(|| panic!("claimed: {}", x.formula));
            assert!(why.contains("page walks") && why.contains("96 pages"), "{why}");
        }
        let advice = crate::report::headlines::advice(&doc);
        assert!(!advice.iter().any(|a| a.contains("Little's law")), "{advice:?}");
        let text = crate::report::text::derived(&doc);
        assert!(text.contains("not claimed — the DRAM latency on huge pages includes page walks"), "{text}");
    }

    /// The same document, had `tlb` found a valid control: the point
    /// nearest the caches is used (the fewest walks), and a figure beyond
    /// what a core tracks is still not claimed.
    #[test]
    fn the_nearest_dram_point_is_used_and_a_core_bounds_the_figure() {
        let mut doc = recorded("intel-xeon-m167-kvm-2vcpu");
        for rec in doc.experiments.iter_mut() {
            if let Some(crate::model::Outcome::Tlb(t)) = rec.outcome.as_mut() {
                t.control = tlb::Control::Valid { policy: PagePolicy::Thp, huge_fraction: 1.0 };
            }
        }
        let one = concurrency(&doc).into_iter().find(|c| c.threads == 1).unwrap();
        assert_eq!(one.not_claimed, None, "{}", one.formula);
        let lat = doc.outcome::<latency::Outcome>().unwrap();
        let largest = lat.points.iter().filter(|p| p.pages == one.latency_pages).map(|p| p.latency_ns.median);
        assert!(one.latency_ns.0 < largest.fold(0.0, f64::max) * 0.8, "{} ns is the nearest point", one.latency_ns);
        assert!(one.lines_in_flight < 64.0, "{}", one.formula);
        for rec in doc.experiments.iter_mut() {
            if let Some(crate::model::Outcome::Bandwidth(b)) = rec.outcome.as_mut() {
                b.headlines.iter_mut().for_each(|h| h.simd_bytes_per_s *= 3.0);
            }
        }
        let three = concurrency(&doc).into_iter().find(|c| c.threads == 1).unwrap();
        assert!(three.not_claimed.as_deref().is_some_and(|w| w.contains("more than one core tracks")), "{three:?}");
    }

    /// The Zen 3 recording: `tlb` found THP using small entries, so the
    /// concurrency section says "not claimed"; loaded-latency and curves,
    /// whose chaser runs on the same huge pages, had claimed 33 lines per
    /// loader from it. Every section now refuses alike, the curves' CSV
    /// included; with a control that found the reach enlarged, they claim;
    /// without `tlb` in the document, nothing tells, and none claims.
    #[test]
    fn no_section_claims_lines_in_flight_from_a_chase_that_walks() {
        use crate::model::outcome::Outcome;
        let mut doc = recorded("amd-epyc-zen3-kvm-2vcpu");
        let said = |doc: &Document| {
            let section = |name: &str| {
                let rec = doc.experiments.iter().find(|r| r.name == name).unwrap();
                crate::report::text::experiment(doc, rec)
            };
            let curves =
                doc.experiments.iter().find_map(|r| r.outcome.as_ref().filter(|o| matches!(o, Outcome::Curves(_))));
            let csv = crate::report::outcome::of(curves.unwrap()).csv(doc).unwrap();
            (section("loaded-latency"), section("curves"), csv)
        };
        let (loaded, curves_text, csv) = said(&doc);
        let why = "the DRAM latency on huge pages includes page walks here";
        assert!(loaded.contains(&format!("not claimed: {why}")), "{loaded}");
        assert!(!loaded.lines().any(|l| l.starts_with("0 ns") && !l.ends_with("not claimed")), "{loaded}");
        assert!(curves_text.contains(&format!("lines/core not claimed: {why}")), "{curves_text}");
        assert!(csv.lines().skip(1).all(|l| l.split(',').nth(13) == Some("")), "{csv}");
        // The run's tidy CSV (raw tables) refuses them too, with the reason.
        assert!(crate::report::tidy::document(&doc).contains(why));
        // Had `tlb` found huge pages enlarging the reach, the figures stand.
        for r in doc.experiments.iter_mut() {
            if let Some(Outcome::Tlb(t)) = r.outcome.as_mut() {
                t.control = tlb::Control::Valid { policy: PagePolicy::Thp, huge_fraction: 1.0 };
            }
        }
        let (loaded, curves_text, csv) = said(&doc);
        assert!(!loaded.contains("not claimed") && !curves_text.contains("lines/core not claimed"), "{loaded}");
        assert!(csv.lines().skip(1).any(|l| l.split(',').nth(13).is_some_and(|x| !x.is_empty())), "{csv}");
        assert!(!crate::report::tidy::document(&doc).contains("walks the page tables"));
        // Before `tlb` has run (the suite prints these two first), nothing
        // tells: not claimed, and the concurrency section says so too.
        doc.experiments.retain(|r| r.name != "tlb");
        let (loaded, curves_text, _) = said(&doc);
        let why = "whether huge pages spare a chase its page walks is not measured yet";
        assert!(loaded.contains(why) && curves_text.contains(why), "{loaded}");
        let c = concurrency(&doc);
        assert!(!c.is_empty() && c.iter().all(|c| c.not_claimed.as_deref().is_some_and(|w| w.starts_with(why))));
    }
}
