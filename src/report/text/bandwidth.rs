//! `bandwidth` as text: the kernels, the distance sweep, plateaus, effects.

use super::super::table::{gbps, Table};
use super::ratio_text;
use crate::model::outcome::bandwidth;
use crate::units::Bytes;

pub fn bandwidth_text(o: &bandwidth::Outcome) -> String {
    let mut out = format!("bandwidth over arrays of {} ({}), GB/s = 1e9 B/s\n", o.size_bytes, o.isa);
    // One read array per policy first, then (with write kernels) one set
    // of write arrays per policy.
    let writes = o.results.iter().any(|r| r.variant.kernel.writes());
    let read = if writes { o.regions.len() / 2 } else { o.regions.len() };
    for (i, r) in o.regions.iter().enumerate() {
        out.push_str(&format!(
            "  {} {}: {} on huge pages\n",
            r.requested,
            if i < read { "read array" } else { "write arrays (A, B, C, D)" },
            r.huge_fraction.map(|f| format!("{:.0}%", f * 100.0)).unwrap_or_else(|| "unknown".into())
        ));
    }
    let mut t = Table::new(["pages", "threads", "kernel", "median", "min", "max", "CV", "check"]);
    for r in o.results.iter().filter(|r| r.variant.hint.is_none() && !r.variant.kernel.writes()) {
        let s = &r.bytes_per_s;
        t.row([
            r.variant.pages.to_string(),
            r.variant.threads.to_string(),
            r.variant.label(),
            gbps(s.median),
            gbps(s.min),
            gbps(s.max),
            format!("{:.1}%", s.cv * 100.0),
            if r.checksum_ok { "ok" } else { "FAIL" }.into(),
        ]);
    }
    out.push('\n');
    out.push_str(&t.render());
    out.push_str(&write_table(o));

    // The distance sweep: one column per hint.
    let mut keys: Vec<_> =
        o.results.iter().filter_map(|r| r.variant.hint.map(|_| (r.variant.pages, r.variant.threads))).collect();
    keys.dedup();
    for (pages, threads) in keys {
        let mut hints: Vec<_> = o.results.iter().filter_map(|r| r.variant.hint).collect();
        hints.sort();
        hints.dedup();
        let mut header = vec!["D (elements)".to_string(), "bytes".into()];
        header.extend(hints.iter().map(|h| format!("{h} GB/s")));
        let mut sweep = Table::new(header);
        let mut ds: Vec<u64> = o.results.iter().filter_map(|r| r.variant.distance_elements).collect();
        ds.sort();
        ds.dedup();
        for d in ds {
            let mut row = vec![d.to_string(), Bytes(d * 8).to_string()];
            for h in &hints {
                let r = o.results.iter().find(|r| {
                    r.variant.pages == pages
                        && r.variant.threads == threads
                        && r.variant.hint == Some(*h)
                        && r.variant.distance_elements == Some(d)
                });
                row.push(r.map(|r| gbps(r.bytes_per_s.median)).unwrap_or_else(|| "-".into()));
            }
            sweep.row(row);
        }
        out.push_str(&format!("\nprefetch distance sweep, {pages} pages, {threads} thread(s):\n"));
        out.push_str(&sweep.render());
    }
    if !o.plateaus.is_empty() {
        out.push('\n');
    }
    for p in &o.plateaus {
        out.push_str(&format!(
            "plateau {} pages, {} thread(s), hint {}: {}\n",
            p.pages,
            p.threads,
            p.hint,
            plateau_text(&p.plateau)
        ));
    }
    for e in &o.prefetch_effects {
        let within_line = e.within_a_line() && e.verdict != bandwidth::Effect::WithinNoise;
        out.push_str(&format!(
            "prefetch {} at D = {} (chosen on even repetitions) vs adjacent simd, {} pages, {} thread(s): {} on the odd repetitions: {}{}\n",
            e.hint,
            e.distance_elements,
            e.pages,
            e.threads,
            ratio_text(&e.confirmed),
            e.verdict.describe(),
            if within_line {
                " — but less than a line ahead a prefetch fetches nothing early: the prefetch instruction in the \
                 loop, not prefetching ahead, made this difference"
            } else {
                ""
            }
        ));
    }
    out.push('\n');
    for h in &o.headlines {
        out.push_str(&format!(
            "{} pages, {} thread(s): simd {} GB/s; best variant {} ({} GB/s on repetitions that did not choose it)\n",
            h.pages,
            h.threads,
            gbps(h.simd_bytes_per_s),
            h.best,
            gbps(h.best_holdout_bytes_per_s)
        ));
    }
    out
}

/// The write kernels: the bytes the program moved, and those that crossed
/// the bus (with the write-allocate reads of ordinary stores).
fn write_table(o: &bandwidth::Outcome) -> String {
    let writes: Vec<_> = o.results.iter().filter(|r| r.variant.kernel.writes()).collect();
    if writes.is_empty() {
        return String::new();
    }
    let mut t = Table::new([
        "pages",
        "threads",
        "kernel",
        "B read:written",
        "program GB/s",
        "bus GB/s",
        "min",
        "max",
        "CV",
        "check",
    ]);
    for r in writes {
        let s = &r.bytes_per_s;
        t.row([
            r.variant.pages.to_string(),
            r.variant.threads.to_string(),
            r.variant.label(),
            format!(
                "{}:{}{}",
                r.traffic.bytes_read_per_element,
                r.traffic.bytes_written_per_element,
                if r.traffic.write_allocate_bytes_per_element > 0 { " +WA" } else { "" }
            ),
            gbps(s.median),
            gbps(r.bus_bytes_per_s.median),
            gbps(s.min),
            gbps(s.max),
            format!("{:.1}%", s.cv * 100.0),
            if r.checksum_ok { "ok" } else { "FAIL" }.into(),
        ]);
    }
    format!(
        "\nwrite kernels, per element index: bytes the program reads:writes; program GB/s counts those, \
         bus GB/s adds the write-allocate read (+WA) an ordinary store makes of its line first (a model, \
         not a counter: non-temporal stores and read-modify-write make none); stores read back after \
         every sample\n{}",
        t.render()
    )
}

/// "D = 96..160 (3 points): 6.07 GB/s", or why there is no plateau.
pub fn plateau_text(p: &crate::analysis::plateau::Plateau) -> String {
    use crate::analysis::plateau::Plateau;
    match p {
        Plateau::Found { start, end, points, value, tolerance } => {
            format!("D = {start}..{end} ({points} points within {:.1}%): {} GB/s", tolerance * 100.0, gbps(*value))
        }
        Plateau::NoPlateau { longest_run, tolerance } => format!(
            "no plateau (at most {longest_run} adjacent point(s) within {:.1}% of the best; a plateau needs {})",
            tolerance * 100.0,
            crate::analysis::plateau::MIN_POINTS
        ),
    }
}
