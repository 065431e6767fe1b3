//! `page-init` as text: the limit, the variants, the extrapolation.

use super::info::coverage;
use crate::error::Result;
use crate::model::document::Document;
use crate::model::outcome::page_init;
use crate::model::outcome::page_init::Outcome;
use crate::report::barchart::{self, Bar, BarChart};
use crate::report::headlines::{headline, Headline};
use crate::report::plot::{Figure, Plot};
use crate::report::table::{gbps, Table};
use crate::units::Bytes;

/// A variant whose median beats the limit's (within the noise unless the
/// outcome says the limit is broken).
fn above(r: &page_init::VariantResult) -> bool {
    r.fraction_of_store_limit > 1.0
}

pub fn page_init_text(o: &page_init::Outcome) -> String {
    let mut out = format!(
        "page-descriptor initialisation: {} pages ({} large), {} of 128-byte descriptors in {} segments\n",
        o.pages,
        o.large_pages,
        Bytes(o.descriptor_bytes),
        o.segments.len()
    );
    out.push_str(&format!("  descriptors: {}\n", coverage(&o.descriptors)));
    let kernels: Vec<String> = o
        .store_kernels
        .iter()
        .map(|k| format!("{} {}t {} GB/s", k.kernel, k.threads, gbps(k.bytes_per_s.median)))
        .collect();
    out.push_str(&format!(
        "store kernels over the same array, interleaved with the variants: {}\n",
        kernels.join(", ")
    ));
    out.push_str(&format!(
        "store-bandwidth limit (best store kernel): {} GB/s one thread → {:.2} ns/page; {} GB/s all threads → {:.2} ns/page\n",
        gbps(o.store_bytes_per_s_1t),
        o.limit_ns_per_page_1t,
        gbps(o.store_bytes_per_s_all),
        o.limit_ns_per_page_all
    ));
    if o.limit_broken {
        out.push_str("LIMIT BROKEN: a variant ran faster than every store kernel, so the limit is not one and the fractions below mean nothing\n");
    }
    out.push_str(&format!(
        "parallel uses ahead = {} (chosen on the even repetitions of the single-thread sweep)\n\n",
        o.best_ahead
    ));
    out.push_str(&variants_table(o));
    if !o.limit_broken && o.results.iter().any(above) {
        out.push_str(
            "* above the limit's median, but not beyond the noise: paired per repetition with the best store kernel, its interval includes ×1\n",
        );
    }
    if let Some(best) = o.fastest() {
        out.push_str(&format!("\nbest: {} — Solaris 10 (2005) went from 1.785 to 0.388 µs per page (×4.6)\n", o.best));
        for (what, s) in &best.extrapolated_s {
            out.push_str(&format!("  initialising {what}: {s:.3} s\n"));
        }
    }
    out
}

/// One row per variant and thread count: ns per page, the speed-up over
/// the locked variant, the share of the store limit, the validation.
fn variants_table(o: &page_init::Outcome) -> String {
    let mut t =
        Table::new(["variant", "threads", "ahead", "ns/page", "Mpages/s", "vs locked [interval]", "of limit", "lists"]);
    for r in &o.results {
        t.row([
            r.variant.to_string(),
            r.threads.to_string(),
            r.ahead.to_string(),
            format!("{:.2}", r.ns_per_page.median),
            format!("{:.1}", r.pages_per_s / 1e6),
            r.speedup_vs_locked
                .as_ref()
                .map(|x| format!("×{:.2} [×{:.2}, ×{:.2}]", x.estimate, x.low, x.high))
                .unwrap_or_else(|| "reference".into()),
            format!("{:.0}%{}", r.fraction_of_store_limit * 100.0, if above(r) { "*" } else { "" }),
            r.validation.clone(),
        ]);
    }
    t.render()
}

/// ns per page of each page-init variant against the store limit of its
/// thread count (one thread's limit drawn), the --ahead sweep as its rows.
fn page_init_plot(o: &page_init::Outcome) -> Result<Plot> {
    let categories: Vec<String> = o
        .results
        .iter()
        .map(|r| {
            if r.variant.prefetches() {
                format!("{} {}t, {} ahead", r.variant, r.threads, r.ahead)
            } else {
                format!("{} {}t", r.variant, r.threads)
            }
        })
        .collect();
    let bars = o
        .results
        .iter()
        .map(|r| Some(Bar { value: r.ns_per_page.median, interval: Some((r.ns_per_page.min, r.ns_per_page.max)) }))
        .collect();
    let title = "Page-descriptor initialisation: ns per page".to_string();
    let chart = BarChart {
        title: title.clone(),
        value_label: "ns per page (median)".into(),
        whisker: "min–max".into(),
        categories,
        groups: vec![("ns per page".into(), bars)],
        reference: Some((format!("store limit, 1 thread: {:.2} ns", o.limit_ns_per_page_1t), o.limit_ns_per_page_1t)),
    };
    Ok(Plot {
        file_name: "page-init.svg".into(),
        title,
        experiment: "page-init".into(),
        svg: barchart::render(&chart)?,
        figure: Figure::Bars(chart),
    })
}

/// The best store bandwidth the whole run reached at `threads`:
/// page-init's own store kernels over its array, or `bandwidth`'s store
/// and store-nt (program bytes) where faster; B/s and where it came from.
fn run_store_limit(pi: &Outcome, doc: &Document, threads: usize) -> (f64, String) {
    let own = pi.store_kernels.iter().filter(|k| k.threads == threads).max_by(|a, b| {
        a.bytes_per_s.median.total_cmp(&b.bytes_per_s.median)
    });
    let mut best = own.map_or((0.0, String::new()), |k| (k.bytes_per_s.median, format!("page-init's {}", k.kernel)));
    if let Some(bw) = doc.outcome::<crate::model::outcome::bandwidth::Outcome>() {
        use crate::kernels::StreamShape;
        for r in bw.results.iter().filter(|r| r.variant.threads == threads && r.checksum_ok) {
            let store = matches!(r.variant.kernel, StreamShape::Store | StreamShape::StoreNt);
            if store && r.bytes_per_s.median > best.0 {
                best = (r.bytes_per_s.median, format!("bandwidth's {} over {}", r.variant.kernel, Bytes(bw.size_bytes.0)));
            }
        }
    }
    best
}

fn page_init_advice(doc: &Document) -> Vec<String> {
    let Some(pi) = doc.outcome::<page_init::Outcome>() else { return Vec::new() };
    let Some(b) = pi.fastest() else { return Vec::new() };
    let reaches = format!("{} reaches {:.2} ns/page", pi.best, b.ns_per_page.median);
    let limit = if pi.limit_broken {
        "the store limit was beaten, so no fraction of it is given".to_string()
    } else {
        // Against the best store the whole run reached at its thread count.
        let (bps, source) = run_store_limit(pi, doc, b.threads);
        if bps <= 0.0 {
            "no store kernel ran at its thread count, so no fraction of a limit is given".to_string()
        } else {
            format!(
                "{:.0}% of the store-bandwidth limit ({} GB/s, {source}, {} thread(s): the best store this run reached)",
                128.0 / bps * 1e9 / b.ns_per_page.median * 100.0,
                gbps(bps),
                b.threads
            )
        }
    };
    vec![match &b.speedup_vs_locked {
        Some(r) => {
            let subject = format!("Page-descriptor initialisation, {} against the locked reference", pi.best);
            let said = crate::report::verdict::ratio_said(r, crate::report::verdict::SPEED);
            format!("{subject}: {said}: {reaches}, {limit}.")
        }
        None => format!("Page-descriptor initialisation: the locked reference is the fastest: {reaches}, {limit}."),
    }]
}

impl super::Render for Outcome {
    fn text(&self, _doc: &Document) -> String {
        page_init_text(self)
    }
    fn plots(&self, _doc: &Document) -> Result<Vec<Plot>> {
        page_init_plot(self).map(|p| vec![p])
    }
    /// The best variant's ns per page.
    fn metrics(&self, _doc: &Document) -> Vec<Headline> {
        let best = self.fastest();
        best.map(|b| {
            let samples = b.samples_s.iter().map(|s| s * 1e9 / self.pages as f64).collect();
            headline(
                "page_init.best",
                &[("variant", b.variant.to_string())],
                format!("page-init best ({})", b.variant),
                crate::report::headlines::Unit::ns_per("page"),
                samples,
                b.ns_per_page.median,
                false,
            )
            .on_cpus(b.threads)
        })
        .into_iter()
        .collect()
    }
    fn advice(&self, doc: &Document) -> Vec<String> {
        page_init_advice(doc)
    }
    fn advice_row(&self, _advice: &str) -> Option<String> {
        Some("best:".into())
    }
}
