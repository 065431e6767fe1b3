//! `curves` as text, chart, headlines and CSV: a table per mix, what writes
//! cost, the run's second looks, latency against bandwidth with one line
//! per mix (the colour encodes the write share), and a CSV with the
//! columns of Mess-Results' memory_curves.csv.

use crate::error::Result;
use crate::model::document::Document;
use crate::model::outcome::curves::{Consistency, Curve, Knee, Outcome, WritesCost};
use crate::report::headlines::{headline, Headline, Unit};
use crate::report::linechart::{render, Axis, AxisScale, Line, LineChart, Marker, Reference, Ticks};
use crate::report::plot::{Figure, Plot};
use crate::report::table::{gbps, Table};

/// `walks`: why no point claims lines in flight, where the document
/// refuses them all ([`as_claimed`]).
fn curves_text(o: &Outcome, walks: Option<&str>) -> String {
    if let Some(why) = &o.not_measured {
        return format!("bandwidth–latency curves: {why}\n");
    }
    let mut out = format!(
        "bandwidth–latency curves: CPU {} chases a random cycle over {} ({} on huge pages) while CPU(s) {} run \
         read and write blocks of {} ({}) in each mix's ratio, pausing after each block\n",
        o.chaser_cpu,
        crate::units::Bytes(o.chase_bytes),
        o.chase_backing.huge_fraction.map_or_else(|| "unknown".into(), |f| format!("{:.0}%", f * 100.0)),
        o.traffic_cpus.iter().map(|c| c.to_string()).collect::<Vec<_>>().join(","),
        crate::units::Bytes(o.block_bytes),
        o.traffic_isa,
    );
    if o.traffic_cpus.len() == 1 {
        out.push_str("one chaser and one traffic thread: the curves of one loading core, not of a whole socket\n");
    }
    for c in &o.curves {
        out.push('\n');
        out.push_str(&curve_text(c));
    }
    out.push_str(
        "(GB/s: bus bytes, the kernels' reads and writes with the write-allocate read of each line an ordinary \
         store writes counted as a read, and the chaser's lines; lines/core: one traffic core's bus bytes × the \
         chaser's latency / 64 B, Little's law)\n",
    );
    if let Some(why) = walks {
        out.push_str(&format!("lines/core not claimed: {why}\n"));
    }
    out.push_str(&format!("memory-controller counters: {}\n", o.counted_traffic));
    out.push_str(&writes_cost_text(&o.writes_cost));
    out.push_str(&consistency_text(&o.consistency));
    out.push_str(&against_host_text(o));
    out
}

/// Each curve's saturation as a fraction of this run's plain read: the
/// figure to compare between runs where the host's bandwidth moves.
fn against_host_text(o: &Outcome) -> String {
    let Some(read) = o.host_read_bytes_per_s else { return String::new() };
    let parts: Vec<String> =
        o.curves.iter().map(|c| format!("{} {:.0}%", c.mix, 100.0 * c.saturated_bytes_per_s / read)).collect();
    format!(
        "against this run's plain read ({} GB/s on the traffic CPUs, measured after the curves), saturation \
         reaches: {} (where the host's own bandwidth moves between runs, these fractions move less than the GB/s; \
         where it moved within this run, the second look above says so)\n",
        gbps(read),
        parts.join(", ")
    )
}

fn curve_text(c: &Curve) -> String {
    let counted = c.points.iter().any(|q| q.counted_bytes_per_s.is_some());
    let mut head = vec!["pause", "GB/s", "±", "latency ns", "min", "max", "× idle", "lines/core"];
    if counted {
        head.extend(["counted GB/s", "counted / bus"]);
    }
    let mut t = Table::new(head);
    for q in &c.points {
        let mut row = vec![
            q.pause_ns.map_or_else(|| "idle".into(), |d| format!("{d} ns")),
            gbps(q.bytes_per_s.median),
            gbps(q.bytes_per_s.mad),
            format!("{:.1}", q.latency_ns.median),
            format!("{:.1}", q.latency_ns.min),
            format!("{:.1}", q.latency_ns.max),
            format!("×{:.2}", q.latency_ns.median / c.idle_latency_ns.0),
            q.lines_in_flight_per_core.map_or_else(|| "not claimed".into(), |l| format!("{l:.1}")),
        ];
        if counted {
            let k = q.counted_bytes_per_s;
            row.push(k.map_or_else(|| "-".into(), gbps));
            row.push(k.map_or_else(|| "-".into(), |k| format!("×{:.2}", k / q.bytes_per_s.median)));
        }
        t.row(row);
    }
    let mut out = format!(
        "mix {} (program bytes read:written; {:.0}% of bus bytes are reads): idle {:.1} ns, saturated {} GB/s at \
         {:.1} ns\n",
        c.mix,
        c.bus_read_share * 100.0,
        c.idle_latency_ns,
        gbps(c.saturated_bytes_per_s),
        c.saturated_latency_ns
    );
    out.push_str(&t.render());
    out.push_str(&knee_text(&c.knee));
    for f in &c.fold_backs {
        out.push_str(&format!(
            "folds back: {} GB/s with a {} ns pause, less than {} GB/s with {} ns (more injection, less bandwidth)\n",
            gbps(f.shorter_bytes_per_s),
            f.shorter_pause_ns,
            gbps(f.bytes_per_s),
            f.pause_ns
        ));
    }
    if c.largest_gap > 0.15 {
        out.push_str(&format!(
            "gap: neighbours lie {:.0}% of saturation apart somewhere on this curve (the rate could not be set finer)\n",
            c.largest_gap * 100.0
        ));
    }
    out
}

fn knee_text(k: &Knee) -> String {
    match k {
        Knee::Found { bytes_per_s, latency_ns, below, above } => format!(
            "knee: latency passes 2× idle ({latency_ns:.1} ns) at {} GB/s, between {} GB/s ({:.1} ns) and {} GB/s ({:.1} ns)\n",
            gbps(*bytes_per_s),
            gbps(below.0),
            below.1,
            gbps(above.0),
            above.1
        ),
        Knee::NoneBelowSaturation { highest_latency_ratio } => format!(
            "no knee below saturation: latency reached ×{highest_latency_ratio:.2} idle at most\n"
        ),
    }
}

fn writes_cost_text(cost: &[WritesCost]) -> String {
    let mut out = String::new();
    for w in cost {
        out.push_str(&format!(
            "what writes cost: {} saturates at {:.0}% of 100:0's bandwidth{}\n",
            w.mix,
            w.saturated_fraction * 100.0,
            w.knee_fraction.map_or_else(String::new, |k| format!(", its knee at {:.0}% of 100:0's", k * 100.0))
        ));
    }
    out
}

fn consistency_text(checks: &[Consistency]) -> String {
    let figure = |unit: &str, v: f64| if unit == "B/s" { format!("{} GB/s", gbps(v)) } else { format!("{v:.1} {unit}") };
    checks
        .iter()
        .map(|c| {
            format!(
                "second look: {}: ×{:.3} ({} against {}): {}\n",
                c.what,
                c.ratio,
                figure(&c.unit, c.curves),
                figure(&c.unit, c.reference),
                if c.holds { format!("holds (within ±{:.0}%)", c.tolerance * 100.0) } else { "DISAGREES".into() }
            )
        })
        .collect()
}

/// Latency against bandwidth, one line per mix, knees marked.
fn curves_plot(o: &Outcome) -> Result<Vec<Plot>> {
    if o.curves.is_empty() {
        return Ok(Vec::new());
    }
    let lines = o
        .curves
        .iter()
        .map(|c| Line {
            name: format!("{} ({:.0}% written)", c.mix, c.mix.write_share() * 100.0),
            points: c.points.iter().map(|q| (q.bytes_per_s.median / 1e9, q.latency_ns.median)).collect(),
            band: Some(c.points.iter().map(|q| (q.latency_ns.min, q.latency_ns.max)).collect()),
            shade: Some(c.mix.write_share()),
            ..Line::default()
        })
        .collect();
    let markers = o
        .curves
        .iter()
        .filter_map(|c| match c.knee {
            Knee::Found { bytes_per_s, .. } => Some(Marker { x: bytes_per_s / 1e9, label: format!("knee {}", c.mix) }),
            Knee::NoneBelowSaturation { .. } => None,
        })
        .collect();
    let idle = o.curves[0].idle_latency_ns.0;
    let title = "Latency vs bandwidth per read:write mix".to_string();
    let chart = LineChart {
        title: title.clone(),
        x: Axis { scale: AxisScale::Linear, ..Axis::new("bus bandwidth (GB/s)", Ticks::Number) },
        y: Axis { scale: AxisScale::Linear, ..Axis::new("ns per load (median; band: min–max)", Ticks::Number) },
        lines,
        references: vec![Reference { name: format!("2× idle: {:.1} ns", 2.0 * idle), y: 2.0 * idle, band: None }],
        markers,
        spans: vec![],
    };
    Ok(vec![Plot {
        file_name: "curves.svg".into(),
        title,
        experiment: "curves".into(),
        svg: render(&chart)?,
        figure: Figure::Line(chart),
    }])
}

/// Per mix: its saturated bandwidth and its knee (where found); and the
/// idle latency once.
fn curves_metrics(o: &Outcome) -> Vec<Headline> {
    let mut out = Vec::new();
    for c in &o.curves {
        let mix = c.mix.to_string();
        let labels = [("mix", mix.clone())];
        let top = c.points.iter().max_by(|a, b| a.bytes_per_s.median.total_cmp(&b.bytes_per_s.median));
        let samples = top.map(|t| t.samples_bytes_per_s.iter().map(|b| b / 1e9).collect()).unwrap_or_default();
        out.push(headline(
            "curves.saturated_bandwidth",
            &labels,
            format!("curves {mix} saturated bandwidth"),
            Unit::GigabytesPerSecond,
            samples,
            c.saturated_bytes_per_s / 1e9,
            true,
        ));
        if let Some(read) = o.host_read_bytes_per_s {
            out.push(headline(
                "curves.saturated_of_read",
                &labels,
                format!("curves {mix} saturation / this run's read"),
                Unit::Other("ratio".into()),
                vec![c.saturated_bytes_per_s / read],
                c.saturated_bytes_per_s / read,
                true,
            ));
        }
        if let Knee::Found { bytes_per_s, .. } = c.knee {
            out.push(headline(
                "curves.knee",
                &labels,
                format!("curves {mix} knee bandwidth"),
                Unit::GigabytesPerSecond,
                vec![bytes_per_s / 1e9],
                bytes_per_s / 1e9,
                true,
            ));
        }
    }
    // A chaser beside traffic: every figure of a mix took all of the run's
    // CPUs; the idle chase below, one.
    let mut out: Vec<Headline> = out.into_iter().map(|h| h.on_cpus(loaded_cpus(o))).collect();
    if let Some(c) = o.curves.first() {
        out.push(headline(
            "curves.idle_latency",
            &[],
            "curves idle latency".into(),
            Unit::Nanoseconds(None),
            c.points[0].samples_latency_ns.clone(),
            c.idle_latency_ns.0,
            false,
        ));
    }
    out
}

/// CPUs a loaded point takes at once: the chaser's and every traffic CPU.
fn loaded_cpus(o: &Outcome) -> usize {
    1 + o.traffic_cpus.len()
}

/// One row per point, with the columns of Mess-Results' memory_curves.csv
/// (`read_pct_rounded`, `pause`, `bandwidth_mean`, `bandwidth_std`,
/// `rd_percentage_actual_mean`, `latency_mean`, `latency_std`: GB/s and
/// ns) and memperf's own after them.
fn curves_csv(o: &Outcome) -> String {
    let mut out = String::from(
        "read_pct_rounded,pause,bandwidth_mean,bandwidth_std,rd_percentage_actual_mean,latency_mean,latency_std,\
         mix,non_temporal,bandwidth_median,latency_median,latency_min,latency_max,lines_in_flight_per_core,\
         counted_bandwidth\n",
    );
    for c in &o.curves {
        let read_pct = 100.0 * (1.0 - c.mix.write_share());
        for q in &c.points {
            let (bw_mean, bw_std) = mean_std(&q.bytes_per_s);
            let (lat_mean, lat_std) = mean_std(&q.latency_ns);
            out.push_str(&format!(
                "{:.0},{},{:.6},{:.6},{:.4},{:.3},{:.3},{},{},{:.6},{:.3},{:.3},{:.3},{},{}\n",
                read_pct,
                q.pause_ns.map_or_else(|| "idle".into(), |d| d.to_string()),
                bw_mean / 1e9,
                bw_std / 1e9,
                c.bus_read_share,
                lat_mean,
                lat_std,
                c.mix,
                c.mix.non_temporal,
                q.bytes_per_s.median / 1e9,
                q.latency_ns.median,
                q.latency_ns.min,
                q.latency_ns.max,
                q.lines_in_flight_per_core.map_or_else(String::new, |l| format!("{l:.2}")),
                q.counted_bytes_per_s.map_or_else(String::new, |k| format!("{:.6}", k / 1e9)),
            ));
        }
    }
    out
}

/// A summary's mean and sample standard deviation (its CV × |mean|).
fn mean_std(s: &crate::timing::Summary) -> (f64, f64) {
    (s.mean, s.cv * s.mean.abs())
}

/// The outcome as this document lets it claim: where the chaser's latency
/// may include page walks ([`crate::report::concurrency::chase_walks`]),
/// no point claims lines in flight, each saying why (the reason returned
/// too); else as measured. Text, CSV and the tidy tables all read this.
fn as_claimed<'a>(o: &'a Outcome, doc: &Document) -> (std::borrow::Cow<'a, Outcome>, Option<String>) {
    let Some(why) = crate::report::concurrency::chase_walks(doc, &o.chase_backing) else {
        return (std::borrow::Cow::Borrowed(o), None);
    };
    let mut refused = o.clone();
    for q in refused.curves.iter_mut().flat_map(|c| c.points.iter_mut()) {
        q.lines_in_flight_per_core = None;
        q.not_claimed = Some(why.clone());
    }
    (std::borrow::Cow::Owned(refused), Some(why))
}

impl super::Render for Outcome {
    fn text(&self, doc: &Document) -> String {
        let (o, walks) = as_claimed(self, doc);
        curves_text(&o, walks.as_deref())
    }
    fn plots(&self, _doc: &Document) -> Result<Vec<Plot>> {
        curves_plot(self)
    }
    fn metrics(&self, _doc: &Document) -> Vec<Headline> {
        curves_metrics(self)
    }
    /// What writes cost, where the all-writes mix saturates well below reads.
    fn advice(&self, _doc: &Document) -> Vec<String> {
        self.writes_cost
            .iter()
            .filter(|w| w.mix.reads == 0 && w.saturated_fraction < 0.8)
            .map(|w| {
                format!(
                    "All-writes traffic ({}) saturates at {:.0}% of all-reads bandwidth here: a write-heavy loop \
                     meets the memory system's limit sooner than its read bandwidth says{}",
                    w.mix,
                    w.saturated_fraction * 100.0,
                    if w.mix.non_temporal { "" } else { " (non-temporal stores avoid the write-allocate read)" }
                )
            })
            .collect()
    }
    fn refuse_in_tables(&self, doc: &Document, v: &mut serde_json::Value) {
        if let (std::borrow::Cow::Owned(o), _) = as_claimed(self, doc) {
            *v = serde_json::to_value(crate::model::outcome::Outcome::Curves(o)).expect("outcomes serialise");
        }
    }
    fn csv(&self, doc: &Document) -> Option<String> {
        Some(curves_csv(&as_claimed(self, doc).0))
    }
}
