//! `loaded-latency` as text: the curve as a table, the idle and saturated
//! points, the concurrency each implies, and where the curve bends.

use crate::error::Result;
use crate::model::document::Document;
use crate::model::outcome::loaded_latency;
use crate::model::outcome::loaded_latency::{Bend, Outcome};
use crate::report::headlines::{headline, Headline};
use crate::report::linechart::{render, Axis, AxisScale, Line, LineChart, Marker, Reference, Ticks};
use crate::report::plot::{Figure, Plot};
use crate::report::table::{gbps, Table};

/// `walks`: why the chaser's latency includes page walks, where it does
/// ([`crate::report::concurrency::chase_walks`]).
pub fn loaded_latency_text(o: &Outcome, vendor: &str, walks: Option<String>) -> String {
    let mut out = format!(
        "latency under load: CPU {} chases a random cycle over {} ({} on huge pages) while the loader(s) on {} \
         run {} ({}), waiting the delay after every {} block\n",
        o.chaser_cpu,
        crate::units::Bytes(o.chase_bytes),
        o.chase_backing.huge_fraction.map_or_else(|| "unknown".into(), |f| format!("{:.0}%", f * 100.0)),
        cpus(&o.loader_cpus),
        o.loader_kernel,
        o.loader_isa,
        crate::units::Bytes(o.block_bytes),
    );
    if o.loader_cpus.len() == 1 {
        out.push_str("one chaser and one loader: the curve of one loading core, not of a whole socket\n");
    }
    out.push_str(&points_table(o, vendor, walks));
    out.push_str(&format!("idle: {:.1} ns", o.idle_latency_ns));
    match (o.saturated_latency_ns, o.saturated_bytes_per_s) {
        (Some(l), Some(b)) => out.push_str(&format!(
            "; saturated (no delay): {l:.1} ns at {} GB/s, ×{:.2} the idle latency\n",
            gbps(b),
            l.0 / o.idle_latency_ns.0
        )),
        _ => out.push_str("; saturated: not measured (no CPU left for a loader)\n"),
    }
    out.push_str(&bend_text(&o.bend));
    out.push_str(&loader_order(o));
    out
}

/// The points as a table, with one loader's lines in flight each (or why
/// they are not claimed: `walks`, or a point's own check).
fn points_table(o: &Outcome, vendor: &str, walks: Option<String>) -> String {
    let mut t = Table::new([
        "delay",
        "loader GB/s",
        "loader bus GB/s",
        "total GB/s",
        "latency ns",
        "min",
        "max",
        "× idle",
        "lines in flight per loader",
    ]);
    let mut refused = None;
    for q in &o.points {
        t.row([
            q.delay_ns.map_or_else(|| "idle".into(), |d| format!("{d} ns")),
            q.delay_ns.map_or_else(|| "-".into(), |_| gbps(q.loader_bytes_per_s.median)),
            q.delay_ns.map_or_else(|| "-".into(), |_| gbps(q.loader_bus_bytes_per_s)),
            gbps(q.total_bytes_per_s),
            format!("{:.1}", q.latency_ns.median),
            format!("{:.1}", q.latency_ns.min),
            format!("{:.1}", q.latency_ns.max),
            format!("×{:.2}", q.latency_ns.median / o.idle_latency_ns.0),
            q.delay_ns.map_or_else(|| "-".into(), |_| match per_loader(o, q, vendor, walks.as_deref()) {
                (Some(l), _) => format!("{l:.1}"),
                (None, why) => {
                    refused = refused.take().or(why);
                    "not claimed".into()
                }
            }),
        ]);
    }
    let mut out = String::from("\n");
    out.push_str(&t.render());
    out.push_str(
        "(loader GB/s: the bytes the kernel reads and writes; bus: with the write-allocate read of each line an \
         ordinary store writes (a model); total = loaders' bus + the chaser's own lines; lines in flight per \
         loader = one loader's bus GB/s × the latency measured beside it / 64 B, Little's law, claimed only \
         within what one core tracks and where `tlb` found the chaser's huge pages free of page walks)\n",
    );
    if let Some(why) = refused {
        let stream = if why.contains("outstanding misses") {
            ": the chaser's latency is not the one the loader's stream pays"
        } else {
            ""
        };
        out.push_str(&format!("not claimed: {why}{stream}\n"));
    }
    out
}

/// Little's law for one loader core at a point (as `curves` claims it),
/// unless the chaser's latency includes page walks (`walks`).
fn per_loader(
    o: &Outcome,
    q: &loaded_latency::Point,
    vendor: &str,
    walks: Option<&str>,
) -> (Option<f64>, Option<String>) {
    if let Some(why) = walks {
        return (None, Some(why.to_string()));
    }
    let limit = crate::analysis::littles_law::core_lines_max(vendor);
    crate::analysis::littles_law::per_core(q.loader_bus_bytes_per_s, o.loader_cpus.len(), q.latency_ns.median, limit)
}

/// A loader that waits longer must move less: a point whose loader moved
/// more (by over 10%) than at a shorter delay is said, since the curve's
/// order is then not the delays' and the points are not one curve.
fn loader_order(o: &Outcome) -> String {
    let mut loaded: Vec<(u64, f64)> =
        o.points.iter().filter_map(|q| Some((q.delay_ns?, q.loader_bytes_per_s.median))).collect();
    loaded.sort_by_key(|q| q.0);
    let mut out = String::new();
    for (i, &(delay, bw)) in loaded.iter().enumerate() {
        if let Some(&(shorter, less)) = loaded[..i].iter().find(|q| bw > q.1 * 1.10) {
            out.push_str(&format!(
                "not one curve: the loader moved {} GB/s with a {delay} ns delay, more than {} GB/s with {shorter} ns (a longer wait must move less): the host changed under the sweep\n",
                gbps(bw),
                gbps(less)
            ));
        }
    }
    out
}

fn cpus(list: &[usize]) -> String {
    match list {
        [] => "no CPU".into(),
        [c] => format!("CPU {c}"),
        _ => format!("CPUs {}", list.iter().map(|c| c.to_string()).collect::<Vec<_>>().join(",")),
    }
}

fn bend_text(b: &Bend) -> String {
    match b {
        Bend::Found { bytes_per_s, latency_ns, fraction_of_peak, tolerance } => format!(
            "bend: latency stays within {:.0}% of idle up to {} GB/s ({:.0}% of the highest bandwidth reached, \
             {latency_ns:.1} ns), and rises beyond it\n",
            tolerance * 100.0,
            gbps(*bytes_per_s),
            fraction_of_peak * 100.0
        ),
        Bend::NoBend { tolerance } => format!(
            "no bend: latency stays within {:.0}% of idle (10%, or three times the idle point's own spread) up to \
             the highest bandwidth reached: these loaders do not push memory past its knee, or the noise hides it\n",
            tolerance * 100.0
        ),
        Bend::TooFewPoints => "bend: too few points to say\n".into(),
    }
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
        x: Axis { scale: AxisScale::Linear, ..Axis::new("delivered bandwidth (GB/s)", Ticks::Number) },
        y: Axis { scale: AxisScale::Linear, ..Axis::new("ns per load (median; band: min–max)", Ticks::Number) },
        lines: vec![line],
        references: vec![Reference {
            name: format!("idle: {:.1} ns", o.idle_latency_ns),
            y: o.idle_latency_ns.0,
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

/// The idle and the saturated ends of the loaded-latency curve.
fn loaded_latency_metrics(o: &loaded_latency::Outcome) -> Vec<Headline> {
    let mut out = Vec::new();
    // The saturated point's figures took the chaser's CPU and every loader's.
    let cpus = |q: &loaded_latency::Point| if q.delay_ns.is_some() { 1 + o.loader_cpus.len() } else { 1 };
    for q in &o.points {
        let name = match q.delay_ns {
            None => "loaded-latency idle latency".to_string(),
            Some(0) => "loaded-latency saturated latency".to_string(),
            Some(_) => continue,
        };
        let id =
            format!("loaded_latency.{}", crate::report::headlines::id_part(name.trim_start_matches("loaded-latency ")));
        out.push(headline(
            &id,
            &[],
            name,
            crate::report::headlines::Unit::Nanoseconds(None),
            q.samples_latency_ns.clone(),
            q.latency_ns.median,
            false,
        ).on_cpus(cpus(q)));
        if q.delay_ns == Some(0) {
            let bus = q.loader_bus_bytes_per_s / q.loader_bytes_per_s.median.max(f64::MIN_POSITIVE);
            let samples = q.samples_loader_bytes_per_s.iter().map(|b| (b * bus + q.chaser_bytes_per_s) / 1e9).collect();
            out.push(headline(
                "loaded_latency.saturated_bandwidth",
                &[],
                "loaded-latency saturated bandwidth".into(),
                crate::report::headlines::Unit::GigabytesPerSecond,
                samples,
                q.total_bytes_per_s / 1e9,
                true,
            ).on_cpus(cpus(q)));
        }
    }
    out
}

impl super::Render for Outcome {
    fn text(&self, doc: &Document) -> String {
        let walks = crate::report::concurrency::chase_walks(doc, &self.chase_backing);
        loaded_latency_text(self, &doc.machine.cpu.identity.vendor, walks)
    }
    fn plots(&self, _doc: &Document) -> Result<Vec<Plot>> {
        loaded_latency_plot(self).map(|p| vec![p])
    }
    fn metrics(&self, _doc: &Document) -> Vec<Headline> {
        loaded_latency_metrics(self)
    }
    /// Its curve and bend are its answer; Little's law across experiments
    /// is the derived section's.
    fn advice(&self, _doc: &Document) -> Vec<String> {
        Vec::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The case: 5.77 GB/s with a 1 µs delay against 3.67 with none.
    #[test]
    fn a_loader_that_moved_more_with_a_longer_delay_is_said() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/machines/intel-xeon-m167-kvm-2vcpu/run-quick.json");
        let doc = crate::model::document_from_json(&std::fs::read_to_string(path).unwrap()).unwrap();
        let mut o: Outcome = doc.outcome::<Outcome>().unwrap().clone();
        assert_eq!(loader_order(&o), "", "the recording's loader slows with its delay");
        let bw = |q: &mut crate::model::outcome::loaded_latency::Point, v: f64| {
            q.loader_bytes_per_s = crate::timing::Summary::of(&[v]).unwrap()
        };
        for q in o.points.iter_mut() {
            match q.delay_ns {
                Some(0) => bw(q, 3.67e9),
                Some(1000) => bw(q, 5.77e9),
                _ => {}
            }
        }
        let said = loader_order(&o);
        assert!(said.contains("moved 5.77 GB/s with a 1000 ns delay, more than 3.67 GB/s with 0 ns"), "{said}");
    }
}
