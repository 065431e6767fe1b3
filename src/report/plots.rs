//! The plots of a document, each rendered from the document alone.

use super::svg::{bar_chart, line_chart, Bars, Chart, Series};
use crate::error::Result;
use crate::model::document::Document;
use crate::model::outcome::{bandwidth, calls, context, latency, tlb};

/// One series per distinct key of `points`, in key order, each sorted by x.
fn series_by<P, K: Ord + Clone>(
    points: &[P],
    key: impl Fn(&P) -> K,
    name: impl Fn(&K) -> String,
    xy: impl Fn(&P) -> (f64, f64),
) -> Vec<Series> {
    let mut keys: Vec<K> = points.iter().map(&key).collect();
    keys.sort();
    keys.dedup();
    keys.iter()
        .map(|k| {
            let mut pts: Vec<(f64, f64)> = points.iter().filter(|p| key(p) == *k).map(&xy).collect();
            pts.sort_by(|a, b| a.0.total_cmp(&b.0));
            Series { name: name(k), points: pts }
        })
        .collect()
}

/// A rendered plot and the file name it is saved under.
pub struct Plot {
    pub file_name: String,
    pub title: String,
    pub experiment: String,
    pub svg: String,
}

/// Every plot the document's experiments call for, and a line for each
/// plot that could not be drawn (a figure that cannot be drawn is a
/// missing picture, not a failed measurement: it never changes the exit
/// status).
pub fn all(doc: &Document) -> (Vec<Plot>, Vec<String>) {
    let mut out = Vec::new();
    let mut failed = Vec::new();
    let mut keep = |r: Result<Vec<Plot>>| match r {
        Ok(p) => out.extend(p),
        Err(e) => failed.push(e.message),
    };
    if let Some(o) = doc.outcome::<bandwidth::Outcome>() {
        keep(bandwidth_plots(o));
    }
    if let Some(o) = doc.outcome::<latency::Outcome>() {
        keep(latency_plot(o).map(|p| vec![p]));
    }
    if let Some(o) = doc.outcome::<tlb::Outcome>() {
        keep(tlb_plot(o).map(|p| vec![p]));
    }
    if let Some(o) = doc.outcome::<calls::Outcome>() {
        keep(calls_plot(o).map(|p| vec![p]));
    }
    if let Some(o) = doc.outcome::<context::Outcome>() {
        keep(context_plot(o).map(|p| vec![p]));
    }
    (out, failed)
}

/// Bandwidth against prefetch distance, one line per hint, with the `simd`
/// figure as a reference line; one chart per page policy and thread count.
fn bandwidth_plots(o: &bandwidth::Outcome) -> Result<Vec<Plot>> {
    let mut keys: Vec<_> =
        o.results.iter().filter(|r| r.variant.hint.is_some()).map(|r| (r.variant.pages, r.variant.threads)).collect();
    keys.dedup();
    let mut plots = Vec::new();
    for (pages, threads) in keys {
        let of = |r: &&bandwidth::VariantResult| r.variant.pages == pages && r.variant.threads == threads;
        let curve: Vec<&bandwidth::VariantResult> =
            o.results.iter().filter(of).filter(|r| r.variant.hint.is_some()).collect();
        let series = series_by(
            &curve,
            |r| r.variant.hint,
            |h| format!("simd-prefetch {}", h.map(|h| h.to_string()).unwrap_or_default()),
            |r| (r.variant.distance_elements.unwrap_or(0) as f64, r.bytes_per_s.median / 1e9),
        );
        let references = o
            .results
            .iter()
            .filter(of)
            .filter(|r| r.variant.kernel == crate::kernels::StreamShape::Simd)
            .map(|r| (format!("simd (no prefetch) {:.2}", r.bytes_per_s.median / 1e9), r.bytes_per_s.median / 1e9))
            .collect();
        let title = format!("Read bandwidth vs prefetch distance — {pages} pages, {threads} thread(s), {}", o.isa);
        let chart = Chart {
            title: title.clone(),
            x_label: "prefetch distance D (8-byte elements)".into(),
            y_label: "GB/s (median)".into(),
            log_x: false,
            series,
            references,
        };
        plots.push(Plot {
            file_name: format!("bandwidth-{pages}-{threads}t.svg"),
            title,
            experiment: "bandwidth".into(),
            svg: line_chart(&chart)?,
        });
    }
    Ok(plots)
}

/// Latency against working set (log x), one line per page policy and order.
fn latency_plot(o: &latency::Outcome) -> Result<Plot> {
    let series = series_by(
        &o.points,
        |p| (p.pages, p.order.clone()),
        |(pol, order)| format!("{pol} {order}"),
        |p| (p.size_bytes.0 as f64, p.latency_ns.median),
    );
    let title = "Load-to-use latency vs working set".to_string();
    let chart = Chart {
        title: title.clone(),
        x_label: "working set (bytes, log scale)".into(),
        y_label: "ns per load (median)".into(),
        log_x: true,
        series,
        references: vec![],
    };
    Ok(Plot { file_name: "latency.svg".into(), title, experiment: "latency".into(), svg: line_chart(&chart)? })
}

/// ns per access against the memory the pages span (log x), one line per policy.
fn tlb_plot(o: &tlb::Outcome) -> Result<Plot> {
    let series = series_by(
        &o.points,
        |p| (p.pages, p.sweep),
        |(pol, sweep)| match sweep {
            tlb::Sweep::Own => format!("{pol} pages, a line per page"),
            tlb::Sweep::Control => format!("{pol} pages, a line every 4 KiB (control)"),
        },
        |p| (p.page_count as f64, p.ns_per_access.median),
    );
    let title = "TLB: ns per access vs pages touched (one line per page)".to_string();
    let chart = Chart {
        title: title.clone(),
        x_label: "pages (or 4 KiB strides) touched, log scale".into(),
        y_label: "ns per access (median)".into(),
        log_x: true,
        series,
        references: vec![],
    };
    Ok(Plot { file_name: "tlb.svg".into(), title, experiment: "tlb".into(), svg: line_chart(&chart)? })
}

/// ns per call against chain depth (log x), one line per linkage and
/// thread count.
fn calls_plot(o: &calls::Outcome) -> Result<Plot> {
    let series = series_by(
        &o.points,
        |p| (p.linkage, p.threads),
        |(l, t)| format!("{l}, {t} thread(s)"),
        |p| (p.depth as f64, p.ns_per_call.median),
    );
    let title = "Call and return: ns per call vs chain depth".to_string();
    let chart = Chart {
        title: title.clone(),
        x_label: "chain depth (calls), log scale".into(),
        y_label: "ns per call (median)".into(),
        log_x: true,
        series,
        references: vec![],
    };
    Ok(Plot { file_name: "calls.svg".into(), title, experiment: "calls".into(), svg: line_chart(&chart)? })
}

/// ns per round trip of each context save, one bar per thread count.
fn context_plot(o: &context::Outcome) -> Result<Plot> {
    let mut ops: Vec<_> = o.saves.iter().map(|s| s.op).collect();
    ops.dedup();
    let groups = o
        .threads
        .iter()
        .map(|&t| {
            let values = ops
                .iter()
                .map(|&op| o.saves.iter().find(|s| s.op == op && s.threads == t).map(|s| s.ns_per_op.median))
                .collect();
            (format!("{t} thread(s)"), values)
        })
        .collect();
    let title = "Context saves: ns per round trip".to_string();
    let bars = Bars {
        title: title.clone(),
        value_label: "ns per round trip (median)".into(),
        categories: ops.iter().map(|o| o.name().to_string()).collect(),
        groups,
    };
    Ok(Plot { file_name: "context.svg".into(), title, experiment: "context".into(), svg: bar_chart(&bars)? })
}
