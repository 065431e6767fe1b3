//! `latency` as text: the curve, its levels, ratios and the K-chain sweep.

use super::info::coverage;
use crate::analysis::attribution::Attribution;
use crate::error::Result;
use crate::memory::PagePolicy;
use crate::model::document::Document;
use crate::model::outcome::latency;
use crate::model::outcome::latency::Outcome;
use crate::report::headlines::{headline, Headline};
use crate::report::linechart::{render, Axis, AxisScale, LineChart, Marker, Ticks};
use crate::report::plot::Plot;
use crate::report::plot::{far_level_marker, lines_by, Figure};
use crate::report::table::Table;
use crate::report::text::ratio_text;
use crate::units::Bytes;

pub fn latency_text(o: &latency::Outcome) -> String {
    let mut out = format!("load-to-use latency, dependent random chase (seed {:#x})\n", o.seed);
    for r in &o.regions {
        out.push_str(&format!("  {} region: {}\n", r.requested, coverage(r)));
    }
    match o.core_clock.first() {
        Some(_) if o.core_clock.iter().all(|c| c.two_chains()) => out.push_str(&format!(
            "  core clock (two dependent chains): {}\n",
            o.core_clock.iter().map(|c| format!("{:.2} GHz", c.ghz)).collect::<Vec<_>>().join(" before, ") + " after"
        )),
        Some(_) => out.push_str("  core clock: not measured (one folding chain); no figures in cycles\n"),
        None => out.push_str("  core clock: not measured; no figures in cycles\n"),
    }
    out.push_str("\n(spread: lowest..highest sample mean; each sample ≥ 10 ms after a warm-up traversal)\n");
    out.push_str(&points_table(o));
    if let Some(line) = page_local_reached_by_prefetch(o) {
        out.push_str(&format!("{line}\n"));
    }
    out.push_str(&levels_table(o));
    // The largest working set of each pair (every size is in the document).
    let largest = o.ratios.iter().map(|r| r.size_bytes).max();
    for r in o.ratios.iter().filter(|r| Some(r.size_bytes) == largest) {
        out.push_str(&format!("{} / {} latency at {}: {}\n", r.b, r.a, r.size_bytes, ratio_text(&r.ratio)));
    }
    out.push_str(&mlp_table(o));
    out
}

/// Every working set: each policy's median and spread, and the
/// page-local chase where that variant was measured (the quick suite
/// leaves it out).
fn points_table(o: &latency::Outcome) -> String {
    let mut pols: Vec<_> = o.points.iter().map(|p| p.pages).collect();
    pols.sort();
    pols.dedup();
    let has_local = o.points.iter().any(|p| p.order == "page-local");
    let mut header = vec!["working set".to_string()];
    for p in &pols {
        header.push(format!("{p} ns"));
        header.push(format!("{p} spread"));
        if has_local {
            header.push(format!("{p} local"));
        }
    }
    let mut t = Table::new(header);
    let mut sizes: Vec<Bytes> = o.points.iter().map(|p| p.size_bytes).collect();
    sizes.sort();
    sizes.dedup();
    let dash = || "-".to_string();
    for size in sizes {
        let mut row = vec![size.to_string()];
        for pol in &pols {
            let get =
                |order: &str| o.points.iter().find(|p| p.size_bytes == size && p.pages == *pol && p.order == order);
            let random = get("random");
            row.push(random.map(|p| format!("{:.1}", p.latency_ns.median)).unwrap_or_else(dash));
            row.push(random.map(|p| format!("{:.1}..{:.1}", p.latency_ns.min, p.latency_ns.max)).unwrap_or_else(dash));
            if has_local {
                row.push(get("page-local").map(|p| format!("{:.1}", p.latency_ns.median)).unwrap_or_else(dash));
            }
        }
        t.row(row);
    }
    t.render()
}

/// The levels found: each one's latency, cycles, extent and the knee after
/// it, with its second look.
fn levels_table(o: &latency::Outcome) -> String {
    if o.levels.is_empty() {
        return String::new();
    }
    let mut lv = Table::new([
        "pages",
        "level",
        "latency ns",
        "cycles",
        "working sets",
        "its samples span ns",
        "knee after it",
        "second look",
    ]);
    for l in &o.levels {
        lv.row([
            l.pages.to_string(),
            l.name.clone(),
            format!("{:.1}", l.latency_ns),
            l.cycles.map(|c| format!("{c:.0}")).unwrap_or_else(|| "-".into()),
            format!("{}..{}", l.from_bytes, l.up_to_bytes),
            level_span(o, l),
            match &l.knee_after {
                None => "-".into(),
                Some(Attribution::Level { name, size }) if *name == l.name => format!("{name} ({})", Bytes(*size as u64)),
                Some(Attribution::Level { name, size }) => {
                    format!("near {name}'s size ({}), but this level is too slow for a cache hit", Bytes(*size as u64))
                }
                Some(Attribution::Unattributed) => "unattributed (no cache within ×2)".into(),
            },
            second_look_cell(l.second_look.as_ref()),
        ]);
    }
    format!(
        "\nlevels (cycles at the measured core clock; second look: the knee found again on the even and the odd samples apart):\n{}",
        lv.render()
    )
}

/// The K-chain sweep, and what its figures fail of physics.
fn mlp_table(o: &latency::Outcome) -> String {
    if o.mlp.is_empty() {
        return String::new();
    }
    let mut m = Table::new(["pages", "working set", "chains", "ns per load", "speed-up"]);
    for x in &o.mlp {
        m.row([
            x.pages.to_string(),
            x.size_bytes.to_string(),
            x.chains.to_string(),
            format!("{:.1}", x.ns_per_load),
            format!("{:.2}", x.speedup),
        ]);
    }
    format!(
        "\nmemory-level parallelism (independent chases in flight, policies alternated):\n{}{}",
        m.render(),
        mlp_checks(o)
    )
}

/// What the K-chain sweep's figures fail of physics and of the same run's
/// latency table: speed-ups beyond K (not parallelism), and a one-chain
/// reference that disagrees with the table at its working set.
fn mlp_checks(o: &latency::Outcome) -> String {
    use crate::analysis::littles_law::super_linear;
    let mut out = String::new();
    for x in o.mlp.iter().filter(|x| super_linear(x.chains, x.speedup)) {
        out.push_str(&format!(
            "super-linear, not claimed as parallelism: ×{:.2} from {} chains on {} pages is more than {} independent chases can give\n",
            x.speedup, x.chains, x.pages, x.chains
        ));
    }
    for one in o.mlp.iter().filter(|x| x.chains == 1) {
        let table =
            o.points.iter().find(|p| p.pages == one.pages && p.size_bytes == one.size_bytes && p.order == "random");
        if let Some(t) = table.map(|t| t.latency_ns.median).filter(|t| (one.ns_per_load / t - 1.0).abs() > 0.10) {
            out.push_str(&format!(
                "the one-chain reference ({:.1} ns on {} pages at {}) disagrees with the latency table ({t:.1} ns) by {:+.0}%: the speed-ups rest on it\n",
                one.ns_per_load,
                one.pages,
                one.size_bytes,
                (one.ns_per_load / t - 1.0) * 100.0
            ));
        }
    }
    out
}

/// Latency against working set, log axes, one line per page policy and
/// order with the spread of its samples, the cache sizes, the 4 KiB TLB
/// reach and the knees memperf found marked.
fn latency_plot(o: &latency::Outcome, m: &crate::machine::Fingerprint) -> Result<Plot> {
    let lines = lines_by(
        &o.points,
        |p| (p.pages, p.order.clone()),
        |(pol, order)| format!("{pol} {order}"),
        |p| (p.size_bytes.0 as f64, p.latency_ns.median),
        |p| (p.latency_ns.min, p.latency_ns.max),
    );
    // Marked only where measured: the knees found (and confirmed on a
    // second look) and where the far level starts; CPUID's claims are in
    // the tables beside the measurement, not drawn where nothing happens.
    // A knee lies between a level's last working set and the next level's
    // first: the label gives both, never one of them as the cache's size
    // (a 48 KiB L1 ends between 32 and 64 KiB on a sweep in octaves).
    // The knees of the 4 KiB levels, or, where the run measured no 4 KiB
    // pages (a suite refitted to its minute keeps THP alone), of the first
    // policy it measured.
    let mut markers = far_level_marker(m);
    let small = crate::memory::PagePolicy::Small;
    let marked = o.levels.iter().map(|l| l.pages).find(|p| *p == small).or(o.levels.first().map(|l| l.pages));
    let marked_levels: Vec<_> = o.levels.iter().filter(|l| Some(l.pages) == marked).collect();
    for (i, l) in marked_levels.iter().enumerate() {
        // An unstable knee is in the table, marked, but not drawn as found.
        if l.knee_after.is_some() && !l.second_look.as_ref().is_some_and(|s| s.is_unstable()) {
            let between = match marked_levels.get(i + 1) {
                Some(next) => format!("{}–{}", l.up_to_bytes, next.from_bytes),
                None => format!("after {}", l.up_to_bytes),
            };
            let label = match l.name.as_str() {
                "unattributed" => format!("knee: {between}"),
                name => format!("end of {name} in {between}"),
            };
            markers.push(Marker { x: l.up_to_bytes.0 as f64, label });
        }
    }
    let title = "Load-to-use latency vs working set".to_string();
    let chart = LineChart {
        title: title.clone(),
        x: Axis::new("working set (bytes)", Ticks::Bytes),
        y: Axis { scale: AxisScale::Log, ..Axis::new("ns per load (median; band: min–max)", Ticks::Number) },
        lines,
        references: vec![],
        markers,
        spans: vec![],
    };
    Ok(Plot {
        file_name: "latency.svg".into(),
        title,
        experiment: "latency".into(),
        svg: render(&chart)?,
        figure: Figure::Line(chart),
    })
}

/// Whether huge pages cut random-access latency at the largest working
/// set, and from which working set on: the smallest size from which every
/// larger one is faster too (never a single lucky point).
fn huge_page_latency_advice(lat: &latency::Outcome) -> Vec<String> {
    use crate::report::verdict::{line, TIME};
    use crate::timing::schedule::Call;
    let mut pairs: Vec<(PagePolicy, PagePolicy)> = lat.ratios.iter().map(|r| (r.a, r.b)).collect();
    pairs.sort();
    pairs.dedup();
    let mut out = Vec::new();
    for (a, b) in pairs {
        let mut rs: Vec<&latency::PolicyRatio> = lat.ratios.iter().filter(|r| r.a == a && r.b == b).collect();
        rs.sort_by_key(|r| r.size_bytes);
        let Some(last) = rs.last() else { continue };
        let below_from = rs
            .iter()
            .rposition(|x| x.ratio.call() != Call::Below)
            .map_or(Some(0), |i| (i + 1 < rs.len()).then_some(i + 1))
            .map(|i| rs[i].size_bytes);
        let subject = format!("Huge pages ({b}) against {a}, random-access latency at {}", last.size_bytes);
        let then = match below_from {
            Some(from) if from < last.size_bytes => format!(
                "they cut it by {:.0}%, and every working set from {from} on is faster too: give large, randomly read data huge pages",
                (1.0 - last.ratio.estimate) * 100.0
            ),
            _ => format!(
                "they cut it by {:.0}%: give large, randomly read data huge pages",
                (1.0 - last.ratio.estimate) * 100.0
            ),
        };
        let mut text = line(&subject, &last.ratio, TIME, Some(&then));
        if last.ratio.call() == Call::Above {
            text = format!("{}: check their coverage.", text.trim_end_matches('.'));
        }
        out.push(text);
    }
    out
}

fn latency_advice(doc: &Document) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(lat) = doc.outcome::<latency::Outcome>() {
        out.extend(huge_page_latency_advice(lat));
    }
    let claimed = crate::report::concurrency::concurrency(doc);
    for c in claimed.iter().filter(|c| c.threads == 1 && c.not_claimed.is_none()) {
        out.push(format!("Effective concurrency of one core on {} pages: {} (Little's law).", c.pages, c.formula));
    }
    out
}

/// The largest random-order point of each page policy, named "DRAM" only
/// at or past where the run's probe verified a chase to be in memory.
fn latency_metrics(lat: &Outcome, doc: &Document) -> Vec<Headline> {
    let mut pols: Vec<PagePolicy> = lat.points.iter().map(|p| p.pages).collect();
    pols.sort();
    pols.dedup();
    pols.into_iter()
        .filter_map(|pol| {
            let p = lat.points.iter().filter(|p| p.pages == pol && p.order == "random").max_by_key(|p| p.size_bytes)?;
            Some(headline(
                "latency.random",
                &[("pages", pol.to_string()), ("size_bytes", p.size_bytes.0.to_string())],
                {
                    let (dram, unverified) =
                        crate::report::headlines::in_memory(p.size_bytes, doc.machine.chase_in_memory_from());
                    format!("{dram}latency, {}, {pol} pages, random chase{unverified}", p.size_bytes)
                },
                crate::report::headlines::Unit::Nanoseconds(None),
                p.sample_latency_ns.clone(),
                p.latency_ns.median,
                false,
            ))
            .map(|h| if pol == PagePolicy::Small { h.walks_4k() } else { h })
        })
        .collect()
}

impl super::Render for Outcome {
    fn text(&self, _doc: &Document) -> String {
        latency_text(self)
    }
    fn plots(&self, doc: &Document) -> Result<Vec<Plot>> {
        latency_plot(self, &doc.machine).map(|p| vec![p])
    }
    fn metrics(&self, doc: &Document) -> Vec<Headline> {
        latency_metrics(self, doc)
    }
    fn advice(&self, doc: &Document) -> Vec<String> {
        latency_advice(doc)
    }
    /// Each policy's random chase against the first's, per working set.
    fn paired(&self, _doc: &Document) -> Vec<super::PairedRatio> {
        self.ratios
            .iter()
            .map(|r| super::PairedRatio {
                key: format!("latency.policies{{a={},b={},size_bytes={}}}", r.a, r.b, r.size_bytes.0),
                name: format!("{} / {} random-access latency at {}", r.b, r.a, r.size_bytes),
                ratio: r.ratio.clone(),
            })
            .collect()
    }
}

/// Whether the page-local chase is the walk-free control it is meant to
/// be: at its largest working set it must cost about what a random chase
/// on the cheapest page policy costs there (both miss every cache). Far
/// below that, the hardware prefetcher reaches its windows of lines, and
/// the gap to the random chase is no translation cost.
pub fn page_local_reached_by_prefetch(o: &latency::Outcome) -> Option<String> {
    let local = o.points.iter().filter(|p| p.order == "page-local").max_by_key(|p| p.size_bytes)?;
    let (random_pol, random_ns) = o
        .points
        .iter()
        .filter(|p| p.order == "random" && p.size_bytes == local.size_bytes)
        .map(|p| (p.pages, p.latency_ns.median))
        .min_by(|a, b| a.1.total_cmp(&b.1))?;
    (local.latency_ns.median < 0.75 * random_ns).then(|| {
        format!(
            "page-local reads {:.1} ns at {} ({} pages) against {:.1} ns for a random chase on {random_pol} pages: the hardware prefetcher reaches its windows, so it is no walk-free control and the gap to the random chase is not the translation cost",
            local.latency_ns.median, local.size_bytes, local.pages, random_ns
        )
    })
}

/// The lowest and highest sample mean of the points a level was drawn
/// from, marked "not flat" where they differ by more than half: such a
/// level is a slope or a noisy stretch, and its one figure stands for less.
fn level_span(o: &latency::Outcome, l: &latency::LatencyLevel) -> String {
    let (lo, hi) = o
        .points
        .iter()
        .filter(|p| p.pages == l.pages && p.order == "random")
        .filter(|p| p.size_bytes >= l.from_bytes && p.size_bytes <= l.up_to_bytes)
        .fold((f64::INFINITY, 0.0f64), |(lo, hi), p| (lo.min(p.latency_ns.min), hi.max(p.latency_ns.max)));
    match (lo.is_finite(), hi > 1.5 * lo) {
        (false, _) => "-".into(),
        (true, true) => format!("{lo:.1}..{hi:.1}, not flat"),
        (true, false) => format!("{lo:.1}..{hi:.1}"),
    }
}

/// A knee's second look in a table cell.
pub fn second_look_cell(look: Option<&crate::analysis::second_look::SecondLook>) -> String {
    use crate::analysis::second_look::SecondLook;
    match look {
        None => "-".into(),
        Some(SecondLook::Stable { .. }) => "stable".into(),
        Some(SecondLook::Unstable { first, second }) => format!("unstable ({first} / {second})"),
        Some(SecondLook::NotChecked { .. }) => "one look".into(),
    }
}

#[cfg(test)]
mod tests {
    /// The Intel recording's sweep: ×6.1 from 4 chains and ×12.2 from 8 (on
    /// every policy) and a one-chain 428.8 ns against the table's 360.8 ns
    /// are said, not passed over.
    #[test]
    fn super_linear_gains_and_a_disagreeing_reference_are_said() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/machines/intel-xeon-m167-kvm-2vcpu/run-quick.json");
        let doc = crate::model::document_from_json(&std::fs::read_to_string(path).unwrap()).unwrap();
        let text = super::latency_text(doc.outcome().unwrap());
        assert!(text.contains("super-linear, not claimed as parallelism: ×12.23 from 8 chains on 4k pages"), "{text}");
        assert!(text.contains("×6.13 from 4 chains on 4k pages"), "{text}");
        assert!(text.contains("the one-chain reference (428.8 ns on 4k pages at 2GiB) disagrees with the latency table (360.8 ns) by +19%"), "{text}");
        assert_eq!(text.matches("super-linear").count(), 6, "{text}");
    }

    /// The huge-page line from where the largest size's interval lies:
    /// inside ±5% no change, across 5% and 1 not resolved (×0.927
    /// [×0.869, ×1.002] once said "no more than the noise" beside two runs
    /// that cut by 2–3%), below 1 faster, above 1 slower.
    #[test]
    fn huge_page_latency_advice_follows_where_the_interval_lies() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/machines/amd-epyc-zen5-kvm-2vcpu/run-quick.json");
        let doc = crate::model::document_from_json(&std::fs::read_to_string(path).unwrap()).unwrap();
        let mut o: crate::model::outcome::latency::Outcome =
            doc.outcome::<crate::model::outcome::latency::Outcome>().unwrap().clone();
        let largest = o.ratios.iter().map(|r| r.size_bytes).max().unwrap();
        let mut said = |m: f64, low: f64, high: f64| {
            for r in o.ratios.iter_mut().filter(|r| r.size_bytes == largest) {
                r.ratio = crate::timing::Ratio::stated(12, m, low, high, 0.997);
            }
            super::huge_page_latency_advice(&o).join("\n")
        };
        let wide = said(0.927, 0.869, 1.002);
        assert!(wide.contains(": not resolved: ×0.927 [×0.869, ×1.002]"), "{wide}");
        let narrow = said(0.99, 0.97, 1.01);
        assert!(narrow.contains(": no change: ×0.990"), "{narrow}");
        let cut = said(0.971, 0.931, 0.992);
        assert!(cut.contains(": faster ×0.971 [×0.931, ×0.992] (99% confidence") && !cut.contains("cut it"), "{cut}");
        let halved = said(0.55, 0.5, 0.6);
        assert!(halved.contains(", by at least 5%") && halved.contains("they cut it by 45%"), "{halved}");
        let slow = said(1.2, 1.1, 1.3);
        assert!(slow.contains(": slower ×1.200") && slow.contains("check their coverage"), "{slow}");
    }

    /// Columns for the page-local variant only where it was measured; and
    /// a page-local chase far below the random chase on the cheapest
    /// policy (the Intel recording: 73 ns at 2 GiB against 270 ns on THP) is
    /// said to be reached by the prefetcher, no walk-free control.
    #[test]
    fn page_local_columns_only_where_measured_and_checked_against_physics() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/machines/intel-xeon-m167-kvm-2vcpu/run-quick.json");
        let doc = crate::model::document_from_json(&std::fs::read_to_string(path).unwrap()).unwrap();
        let mut o: crate::model::outcome::latency::Outcome =
            doc.outcome::<crate::model::outcome::latency::Outcome>().unwrap().clone();
        let text = super::latency_text(&o);
        assert!(!text.contains(" local"), "{text}");
        assert_eq!(super::page_local_reached_by_prefetch(&o), None);
        let mut local = o
            .points
            .iter()
            .filter(|p| p.pages == crate::memory::PagePolicy::Small)
            .max_by_key(|p| p.size_bytes)
            .unwrap()
            .clone();
        local.order = "page-local".into();
        local.latency_ns.median = 73.0;
        o.points.push(local);
        let text = super::latency_text(&o);
        assert!(text.contains("4k local"), "{text}");
        assert!(text.contains(", not flat"), "the Intel recording's levels beyond L2 span 45–148 ns: {text}");
        assert!(text.contains("page-local reads 73.0 ns at 2GiB (4k pages) against 270.3 ns for a random chase on thp pages: the hardware prefetcher reaches its windows"), "{text}");
    }
}
