//! The plots of a document, each rendered from the document alone.

use super::barchart::{self, Bar, BarChart};
use super::linechart::{render, Axis, Line, LineChart, Marker, Reference, Ticks};
use crate::error::Result;
use crate::model::document::Document;
use crate::model::outcome::{bandwidth, calls, context, latency, loaded_latency, page_init, prefetch_fault, tlb};

/// One line per distinct key of `points`, in key order, each sorted by x,
/// with the band `spread` gives each point.
fn lines_by<P, K: Ord + Clone>(
    points: &[P],
    key: impl Fn(&P) -> K,
    name: impl Fn(&K) -> String,
    xy: impl Fn(&P) -> (f64, f64),
    spread: impl Fn(&P) -> (f64, f64),
) -> Vec<Line> {
    let mut keys: Vec<K> = points.iter().map(&key).collect();
    keys.sort();
    keys.dedup();
    keys.iter()
        .map(|k| {
            let mut pts: Vec<(f64, f64, (f64, f64))> = points
                .iter()
                .filter(|p| key(p) == *k)
                .map(|p| (xy(p), spread(p)))
                .map(|((x, y), b)| (x, y, b))
                .collect();
            pts.sort_by(|a, b| a.0.total_cmp(&b.0));
            Line {
                name: name(k),
                points: pts.iter().map(|p| (p.0, p.1)).collect(),
                band: Some(pts.iter().map(|p| p.2).collect()),
                ..Line::default()
            }
        })
        .collect()
}

/// What a plot draws, kept beside its SVG so that `compare` can draw two
/// runs on the same axes.
#[derive(Debug, Clone)]
pub enum Figure {
    Line(LineChart),
    Bars(BarChart),
}

/// A rendered plot and the file name it is saved under.
pub struct Plot {
    pub file_name: String,
    pub title: String,
    pub experiment: String,
    pub svg: String,
    pub figure: Figure,
}

/// The line charts both documents draw, each with A's lines solid and B's
/// dashed on the same axes (bar charts and plots of one side only are left
/// out: the comparison table covers them).
pub fn overlaid(a: &[Plot], b: &[Plot]) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for pa in a {
        let Some(pb) = b.iter().find(|p| p.file_name == pa.file_name) else { continue };
        let (Figure::Line(ca), Figure::Line(cb)) = (&pa.figure, &pb.figure) else { continue };
        let mut c = ca.clone();
        c.title = format!("{} — A solid, B dashed", ca.title);
        c.lines = ca
            .lines
            .iter()
            .enumerate()
            .map(|(i, l)| Line { name: format!("A · {}", l.name), color: Some(i), ..l.clone() })
            .collect();
        c.lines.extend(cb.lines.iter().enumerate().map(|(i, l)| {
            let same = ca.lines.iter().position(|x| x.name == l.name).unwrap_or(ca.lines.len() + i);
            Line { name: format!("B · {}", l.name), dashed: true, color: Some(same), ..l.clone() }
        }));
        c.references =
            ca.references.iter().map(|r| Reference { name: format!("A · {}", r.name), ..r.clone() }).collect();
        c.references.extend(cb.references.iter().map(|r| Reference { name: format!("B · {}", r.name), ..r.clone() }));
        c.spans.clear();
        if let Ok(svg) = render(&c) {
            out.push((c.title, svg));
        }
    }
    out
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
        keep(latency_plot(o, &doc.machine).map(|p| vec![p]));
    }
    if let Some(o) = doc.outcome::<tlb::Outcome>() {
        keep(tlb_plot(o, &doc.machine).map(|p| vec![p]));
    }
    if let Some(o) = doc.outcome::<loaded_latency::Outcome>() {
        keep(loaded_latency_plot(o).map(|p| vec![p]));
    }
    if let Some(o) = doc.outcome::<prefetch_fault::Outcome>() {
        keep(prefetch_fault_plot(o).map(|p| vec![p]));
    }
    if let Some(o) = doc.outcome::<page_init::Outcome>() {
        keep(page_init_plot(o).map(|p| vec![p]));
    }
    if let Some(o) = doc.outcome::<calls::Outcome>() {
        keep(calls_plot(o).map(|p| vec![p]));
    }
    if let Some(o) = doc.outcome::<context::Outcome>() {
        keep(context_plot(o).map(|p| vec![p]));
    }
    (out, failed)
}

/// Bandwidth against prefetch distance, one line per hint with the spread
/// of its samples, the `simd` figure (and its spread) as the reference, and
/// each plateau shaded only where one was found; one chart per page policy
/// and thread count.
fn bandwidth_plots(o: &bandwidth::Outcome) -> Result<Vec<Plot>> {
    let mut keys: Vec<_> =
        o.results.iter().filter(|r| r.variant.hint.is_some()).map(|r| (r.variant.pages, r.variant.threads)).collect();
    keys.dedup();
    let mut plots = Vec::new();
    let gb = |x: f64| x / 1e9;
    for (pages, threads) in keys {
        let of = |r: &&bandwidth::VariantResult| r.variant.pages == pages && r.variant.threads == threads;
        let curve: Vec<&bandwidth::VariantResult> =
            o.results.iter().filter(of).filter(|r| r.variant.hint.is_some()).collect();
        let lines = lines_by(
            &curve,
            |r| r.variant.hint,
            |h| format!("simd-prefetch {}", h.map(|h| h.to_string()).unwrap_or_default()),
            |r| (r.variant.distance_elements.unwrap_or(0) as f64, gb(r.bytes_per_s.median)),
            |r| (gb(r.bytes_per_s.min), gb(r.bytes_per_s.max)),
        );
        let references = o
            .results
            .iter()
            .filter(of)
            .filter(|r| r.variant.kernel == crate::kernels::StreamShape::Simd)
            .map(|r| Reference {
                name: format!("simd, no prefetch: {:.2}", gb(r.bytes_per_s.median)),
                y: gb(r.bytes_per_s.median),
                band: Some((gb(r.bytes_per_s.min), gb(r.bytes_per_s.max))),
            })
            .collect();
        let spans = o
            .plateaus
            .iter()
            .filter(|p| p.pages == pages && p.threads == threads)
            .filter_map(|p| match p.plateau {
                crate::analysis::plateau::Plateau::Found { start, end, .. } => {
                    Some((start as f64, end as f64, format!("plateau of {}: D = {start}..{end}", p.hint)))
                }
                _ => None,
            })
            .collect();
        let title = format!("Read bandwidth vs prefetch distance — {pages} pages, {threads} thread(s), {}", o.isa);
        let chart = LineChart {
            title: title.clone(),
            x: Axis { linear: true, ..Axis::new("prefetch distance D (8-byte elements)", Ticks::Integer) },
            y: Axis::new("GB/s (median; band: min–max of the samples)", Ticks::Number),
            lines,
            references,
            markers: vec![],
            spans,
        };
        plots.push(Plot {
            file_name: format!("bandwidth-{pages}-{threads}t.svg"),
            title,
            experiment: "bandwidth".into(),
            svg: render(&chart)?,
            figure: Figure::Line(chart),
        });
    }
    Ok(plots)
}

/// Cache sizes of `m` as markers: L1 and L2 per core, the last level in
/// all — plausible claims only — and where the measured far level starts.
fn cache_markers(m: &crate::machine::Fingerprint) -> Vec<Marker> {
    let llc = m.llc_total_bytes();
    let last_level = m.caches.iter().map(|c| c.level).max();
    let mut out: Vec<Marker> = m
        .caches
        .iter()
        .filter(|c| c.is_data() && c.plausible())
        .map(|c| {
            let size = if Some(c.level) == last_level { llc.unwrap_or(c.size_bytes) } else { c.size_bytes };
            Marker { x: size.0 as f64, label: format!("L{} {size}", c.level) }
        })
        .collect();
    if let Some(far) = m.measured_levels.as_ref().and_then(|l| l.found.far_from) {
        out.push(Marker { x: far.0 as f64, label: format!("memory from {far} (measured)") });
    }
    out.sort_by(|a, b| a.x.total_cmp(&b.x));
    out.dedup_by(|a, b| a.x == b.x);
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
    let mut markers = cache_markers(m);
    // The memory each 4 KiB TLB level covers (CPUID's entries × 4 KiB).
    for t in m.tlbs.iter().filter(|t| t.page_size_bytes.0 == 4096) {
        if let Some(e) = t.entries {
            let reach = crate::units::Bytes(e as u64 * 4096);
            markers.push(Marker { x: reach.0 as f64, label: format!("L{} TLB reach {reach}", t.level) });
        }
    }
    for l in o.levels.iter().filter(|l| l.pages == crate::memory::PagePolicy::Small) {
        if l.knee_after.is_some() {
            markers.push(Marker { x: l.up_to_bytes.0 as f64, label: format!("knee: end of {}", l.name) });
        }
    }
    let title = "Load-to-use latency vs working set".to_string();
    let chart = LineChart {
        title: title.clone(),
        x: Axis::new("working set (bytes)", Ticks::Bytes),
        y: Axis::new("ns per load (median; band: min–max)", Ticks::Number),
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

/// Latency against delivered bandwidth (loaders and chaser), one point per
/// delay with the spread of its latency samples, the idle latency as the
/// reference and the bend marked where one was found.
fn loaded_latency_plot(o: &loaded_latency::Outcome) -> Result<Plot> {
    let mut pts: Vec<&loaded_latency::Point> = o.points.iter().collect();
    pts.sort_by(|a, b| a.total_bytes_per_s.total_cmp(&b.total_bytes_per_s));
    let line = Line {
        name: format!("{} loader(s) running {}", o.loader_cpus.len(), o.loader_kernel),
        points: pts.iter().map(|q| (q.total_bytes_per_s / 1e9, q.latency_ns.median)).collect(),
        band: Some(pts.iter().map(|q| (q.latency_ns.min, q.latency_ns.max)).collect()),
        ..Line::default()
    };
    let mut markers = Vec::new();
    if let loaded_latency::Bend::Found { bytes_per_s, .. } = o.bend {
        markers.push(Marker { x: bytes_per_s / 1e9, label: "bend".into() });
    }
    let title = "Latency vs delivered bandwidth (loaded latency)".to_string();
    let chart = LineChart {
        title: title.clone(),
        x: Axis { linear: true, ..Axis::new("delivered bandwidth (GB/s)", Ticks::Number) },
        y: Axis { linear: true, ..Axis::new("ns per load (median; band: min–max)", Ticks::Number) },
        lines: vec![line],
        references: vec![Reference {
            name: format!("idle: {:.1} ns", o.idle_latency_ns),
            y: o.idle_latency_ns,
            band: None,
        }],
        markers,
        spans: vec![],
    };
    Ok(Plot {
        file_name: "loaded-latency.svg".into(),
        title,
        experiment: "loaded-latency".into(),
        svg: render(&chart)?,
        figure: Figure::Line(chart),
    })
}

/// ns per access against the pages touched, one line per policy and sweep,
/// with CPUID's 4 KiB TLB entries marked (in a VM they may be the
/// hypervisor's table: the curve is the measurement).
fn tlb_plot(o: &tlb::Outcome, m: &crate::machine::Fingerprint) -> Result<Plot> {
    let lines = lines_by(
        &o.points,
        |p| (p.pages, p.sweep),
        |(pol, sweep)| match sweep {
            tlb::Sweep::Own => format!("{pol} pages, a line per page"),
            tlb::Sweep::Control => format!("{pol}, a line every 4 KiB (control)"),
        },
        |p| (p.page_count as f64, p.ns_per_access.median),
        |p| (p.ns_per_access.min, p.ns_per_access.max),
    );
    let title = "TLB: ns per access vs pages touched".to_string();
    let chart = LineChart {
        title: title.clone(),
        x: Axis::new("pages touched (count; the control: 4 KiB strides)", Ticks::Integer),
        y: Axis::new("ns per access (median; band: min–max)", Ticks::Number),
        lines,
        references: vec![],
        markers: m
            .tlbs
            .iter()
            .filter(|t| t.page_size_bytes.0 == 4096)
            .filter_map(|t| {
                t.entries.map(|e| Marker { x: e as f64, label: format!("L{} {} TLB: {e} (CPUID)", t.level, t.kind) })
            })
            .collect(),
        spans: vec![],
    };
    Ok(Plot {
        file_name: "tlb.svg".into(),
        title,
        experiment: "tlb".into(),
        svg: render(&chart)?,
        figure: Figure::Line(chart),
    })
}

/// ns per call against chain depth, one line per linkage and thread
/// count, with the step memperf found marked.
fn calls_plot(o: &calls::Outcome) -> Result<Plot> {
    let lines = lines_by(
        &o.points,
        |p| (p.linkage, p.threads),
        |(l, t)| format!("{l}, {t} thread(s)"),
        |p| (p.depth as f64, p.ns_per_call.median),
        |p| (p.ns_per_call.min, p.ns_per_call.max),
    );
    let markers = o
        .steps
        .iter()
        .filter(|s| s.threads == 1 && s.linkage == crate::kernels::calls::Linkage::Direct)
        .filter_map(|s| match s.step {
            calls::StepUp::Clear { after_depth, .. } => {
                Some(Marker { x: after_depth as f64, label: format!("step (direct): depth {after_depth}") })
            }
            _ => None,
        })
        .collect();
    let title = "Call and return: ns per call vs chain depth".to_string();
    let chart = LineChart {
        title: title.clone(),
        x: Axis::new("chain depth (calls)", Ticks::Integer),
        y: Axis::new("ns per call (median; band: min–max)", Ticks::Number),
        lines,
        references: vec![],
        markers,
        spans: vec![],
    };
    Ok(Plot {
        file_name: "calls.svg".into(),
        title,
        experiment: "calls".into(),
        svg: render(&chart)?,
        figure: Figure::Line(chart),
    })
}

/// ns per round trip of each context save, one bar per thread count.
fn context_plot(o: &context::Outcome) -> Result<Plot> {
    let mut ops: Vec<_> = o.saves.iter().map(|s| s.op).collect();
    ops.dedup();
    let groups = o
        .threads
        .iter()
        .map(|&t| {
            let bars = ops
                .iter()
                .map(|&op| {
                    o.saves
                        .iter()
                        .find(|s| s.op == op && s.threads == t)
                        .map(|s| Bar { value: s.ns_per_op.median, interval: Some((s.ns_per_op.min, s.ns_per_op.max)) })
                })
                .collect();
            (format!("{t} thread(s)"), bars)
        })
        .collect();
    let title = "Context saves: ns per round trip".to_string();
    let chart = BarChart {
        title: title.clone(),
        value_label: "ns per round trip (median; whisker: min–max)".into(),
        categories: ops.iter().map(|o| o.name().to_string()).collect(),
        groups,
        reference: None,
    };
    Ok(Plot {
        file_name: "context.svg".into(),
        title,
        experiment: "context".into(),
        svg: barchart::render(&chart)?,
        figure: Figure::Bars(chart),
    })
}

/// What each prefetch instruction costs on each target: for a bad target,
/// ns over the same instruction on mapped lines; for mapped lines, ns over
/// the loop without prefetch; with the paired interval; one bar per loop kind.
fn prefetch_fault_plot(o: &prefetch_fault::Outcome) -> Result<Plot> {
    use prefetch_fault::{LoopKind, Target};
    let mut rows: Vec<(String, Target)> =
        o.cells.iter().filter(|c| c.instruction != "none").map(|c| (c.instruction.clone(), c.target)).collect();
    rows.sort();
    rows.dedup();
    let groups = [LoopKind::Throughput, LoopKind::Latency]
        .iter()
        .map(|&k| {
            let bars = rows
                .iter()
                .map(|(ins, t)| {
                    let cell = o.cells.iter().find(|c| &c.instruction == ins && c.target == *t && c.loop_kind == k)?;
                    let r = if *t == Target::Mapped { cell.over_baseline_ns } else { cell.over_mapped_ns }?;
                    Some(Bar { value: r.median, interval: Some((r.low, r.high)) })
                })
                .collect();
            (format!("{k:?} loop").to_lowercase(), bars)
        })
        .collect();
    let title = "Prefetching bad addresses: extra ns per prefetch".to_string();
    let chart = BarChart {
        title: title.clone(),
        value_label: "ns per prefetch over the mapped line (mapped: over no prefetch); whisker: interval".into(),
        categories: rows.iter().map(|(i, t)| format!("{i} {}", t.name())).collect(),
        groups,
        reference: Some(("0 ns: no extra cost".into(), 0.0)),
    };
    Ok(Plot {
        file_name: "prefetch-fault.svg".into(),
        title,
        experiment: "prefetch-fault".into(),
        svg: barchart::render(&chart)?,
        figure: Figure::Bars(chart),
    })
}

/// ns per page of each page-init variant against the store limit of its
/// thread count (one thread's limit drawn), the --ahead sweep as its rows.
fn page_init_plot(o: &page_init::Outcome) -> Result<Plot> {
    let categories: Vec<String> = o
        .results
        .iter()
        .map(|r| match r.variant.as_str() {
            "prefetch" | "parallel" => format!("{} {}t, {} ahead", r.variant, r.threads, r.ahead),
            _ => format!("{} {}t", r.variant, r.threads),
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
        value_label: "ns per page (median; whisker: min–max)".into(),
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
