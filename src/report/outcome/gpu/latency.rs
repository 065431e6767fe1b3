//! The GPU's latency as text: the ladder and its levels, the TLB chase and
//! its steps, the L2's spread across SMs, the clock the two timings imply,
//! and the bandwidth–latency curve; a TLB step both halves find and the
//! curve's bend, as advice; each level and the curve's ends, headlines.

use crate::analysis::second_look::SecondLook;
use crate::model::outcome::gpu::{ChasePoint, Latency, LoadedCurve, Outcome};
use crate::model::outcome::loaded_latency::Bend;
use crate::report::table::gbps;
use crate::report::headlines::{headline, Headline, Unit};
use crate::report::table::Table;
use crate::units::Bytes;

fn ns(x: Option<f64>) -> String {
    x.map_or("-".into(), |n| format!("{n:.1}"))
}

fn look(l: Option<&SecondLook>) -> String {
    match l {
        Some(SecondLook::Stable { .. }) => "stable".into(),
        Some(SecondLook::Unstable { second, .. }) => format!("unstable ({second})"),
        Some(SecondLook::NotChecked { .. }) => "not checked".into(),
        None => "-".into(),
    }
}

fn chase_table(points: &[ChasePoint], first: &str, x: impl Fn(&ChasePoint) -> String) -> String {
    let mut t = Table::new([first, "cycles", "min", "max", "ns (events)", "check"]);
    for p in points {
        t.row([
            x(p),
            format!("{:.1}", p.cycles.median),
            format!("{:.1}", p.cycles.min),
            format!("{:.1}", p.cycles.max),
            ns(p.ns),
            if p.valid { "ok" } else { "FAILED" }.into(),
        ]);
    }
    t.render()
}

/// One device's latency, in tables and lines.
pub(super) fn text(l: &Latency) -> String {
    let mut out = format!(
        "GPU {}: one thread's dependent loads along a random chain, a slot per 128-byte line (cycles by clock64):\n",
        l.device
    );
    out += &chase_table(&l.ladder, "working set", |p| Bytes(p.bytes).to_string());
    let mut t = Table::new(["level", "from", "to", "cycles", "ns", "its knee, again on each half"]);
    for v in &l.levels {
        t.row([
            v.name.clone(),
            Bytes(v.from_bytes).to_string(),
            Bytes(v.to_bytes).to_string(),
            format!("{:.0}", v.cycles),
            ns(v.ns),
            look(v.knee_look.as_ref()),
        ]);
    }
    out += &t.render();
    if let Some(g) = l.clock_ghz {
        out += &format!("  clock64 over the events' time: the SMs ran at {g:.2} GHz during the chases\n");
    }
    out += &format!("GPU {}: a slot per {} page, through the L2 only:\n", l.device, Bytes(l.page_bytes));
    out += &chase_table(&l.tlb, "pages", |p| format!("{} ({})", p.slots, Bytes(p.slots * l.page_bytes)));
    for s in &l.tlb_steps {
        out += &format!(
            "  past {} pages ({}): {:.0} → {:.0} cycles a load; on each half: {}\n",
            s.pages,
            Bytes(s.reach_bytes),
            s.cycles_before,
            s.cycles_after,
            look(Some(&s.knee_look))
        );
    }
    if let Some(s) = &l.l2_spread {
        out += &format!(
            "GPU {}: the L2 from {} SMs at once ({} chain): {:.0}–{:.0} cycles a load, median {:.0}{}{}\n",
            l.device,
            s.sm_cycles.len(),
            Bytes(s.bytes),
            s.cycles.min,
            s.cycles.max,
            s.cycles.median,
            match (s.near_cycles, s.far_cycles) {
                (Some(n), Some(f)) => format!("; single loads: near partition {n:.0}, far {f:.0} cycles"),
                _ => "; single loads in one group".into(),
            },
            if s.valid { "" } else { " (a chase ended off its cycle: FAILED)" }
        );
    }
    out
}

/// The bandwidth–latency curve: a row a point, its bend and Little's law.
pub(super) fn curve_text(c: &LoadedCurve) -> String {
    let mut out = format!(
        "GPU {}: one thread chasing a {} chain while {} blocks of {} threads read a {} array, a spin between reads:\n",
        c.device,
        Bytes(c.chain_bytes),
        c.blocks,
        c.threads,
        Bytes(c.array_bytes)
    );
    let mut t = Table::new(["spin", "read GB/s", "latency ns", "min", "max", "check"]);
    for p in &c.points {
        let spin = p.delay_ns.map_or("idle".into(), |d| format!("{d} ns"));
        if !p.valid {
            // A chase that ended off its cycle timed nothing worth a figure.
            t.row([spin, "-".into(), "-".into(), "-".into(), "-".into(), "FAILED".into()]);
            continue;
        }
        t.row([
            spin,
            gbps(p.loader_bytes_per_s.median),
            format!("{:.1}", p.latency_ns.median),
            format!("{:.1}", p.latency_ns.min),
            format!("{:.1}", p.latency_ns.max),
            "ok".into(),
        ]);
    }
    out += &t.render();
    out += &match c.bend {
        Bend::Found { bytes_per_s, latency_ns, fraction_of_peak, tolerance } => format!(
            "  latency stays within {:.0}% of idle up to {} GB/s ({:.0}% of the curve's top), {latency_ns:.1} ns there\n",
            100.0 * tolerance,
            gbps(bytes_per_s),
            100.0 * fraction_of_peak
        ),
        Bend::NoBend { tolerance } => format!("  latency stays within {:.0}% of idle up to the curve's top\n", 100.0 * tolerance),
        Bend::TooFewPoints => "  too few points past idle to say where latency leaves it\n".into(),
    };
    if let Some(l) = c.lines_per_sm {
        out += &format!("  at the top, each reading SM kept {l:.0} lines of 128 bytes in flight (Little's law)\n");
    }
    out
}

/// The curve's idle and top points.
fn ends(c: &LoadedCurve) -> Option<(&memperf_model::outcome::loaded_latency::Point, &memperf_model::outcome::loaded_latency::Point)> {
    let idle = c.points.iter().find(|p| p.delay_ns.is_none() && p.valid)?;
    let top = c.points.iter().filter(|p| p.valid).max_by(|a, b| a.total_bytes_per_s.total_cmp(&b.total_bytes_per_s))?;
    Some((idle, top))
}

/// Where the curve bends, what latency is at its top, and the loads an SM
/// needs in flight.
fn curve_advice(c: &LoadedCurve) -> Option<String> {
    let Bend::Found { bytes_per_s, fraction_of_peak, .. } = c.bend else { return None };
    let (idle, top) = ends(c)?;
    let lines = c.lines_per_sm.map_or(String::new(), |l| {
        format!("; at the top each SM kept {l:.0} lines in flight: a kernel needs that many independent loads in flight per SM to reach it")
    });
    Some(format!(
        "GPU {}: a dependent load's latency stays near idle ({:.0} ns) up to {} GB/s, {:.0}% of the {} GB/s the readers \
         reached, and is ×{:.1} at the top: latency-bound kernels (gathers, chases) slow most beside streaming ones{lines}",
        c.device,
        idle.latency_ns.median,
        gbps(bytes_per_s),
        100.0 * fraction_of_peak,
        gbps(top.total_bytes_per_s),
        top.latency_ns.median / idle.latency_ns.median
    ))
}

/// A TLB step both halves find: the reach to keep random gathers within;
/// the curve's bend.
pub(super) fn advice(o: &Outcome) -> Vec<String> {
    let mut out: Vec<String> = o.loaded.iter().filter_map(curve_advice).collect();
    for l in &o.latency {
        for s in l.tlb_steps.iter().filter(|s| matches!(s.knee_look, SecondLook::Stable { .. })) {
            out.push(format!(
                "GPU {}: loads spread over more than {} ({} pages of {}) miss the GPU's TLB, {:.0} → {:.0} cycles a load \
                 (×{:.2}): keep what a kernel gathers from at random within {}, or order its accesses by page",
                l.device,
                Bytes(s.reach_bytes),
                s.pages,
                Bytes(l.page_bytes),
                s.cycles_before,
                s.cycles_after,
                s.cycles_after / s.cycles_before,
                Bytes(s.reach_bytes)
            ));
        }
    }
    out
}

/// Each level's cycles a load: the samples of its last working set.
pub(super) fn metrics(o: &Outcome) -> Vec<Headline> {
    let mut out = Vec::new();
    for l in &o.latency {
        for v in &l.levels {
            let Some(p) = l.ladder.iter().find(|p| p.bytes == v.to_bytes) else { continue };
            let labels = [("device", l.device.to_string()), ("level", v.name.clone())];
            let name = format!("gpu {} latency {}", l.device, v.name);
            let unit = Unit::Other("cycles".into());
            out.push(headline("gpu.latency", &labels, name, unit, p.samples_cycles.clone(), p.cycles.median, false));
        }
    }
    for c in &o.loaded {
        let Some((idle, top)) = ends(c) else { continue };
        for (at, p) in [("idle", idle), ("top", top)] {
            let labels = [("device", c.device.to_string()), ("load", at.to_string())];
            let name = format!("gpu {} latency under load, {at}", c.device);
            let unit = Unit::Nanoseconds(None);
            out.push(headline("gpu.loaded_latency", &labels, name, unit, p.samples_latency_ns.clone(), p.latency_ns.median, false));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::outcome::gpu::{L2Spread, LatencyLevel, TlbStep};
    use crate::timing::Summary;

    fn point(bytes: u64, cycles: f64) -> ChasePoint {
        ChasePoint {
            bytes,
            slots: bytes / 128,
            stride: 128,
            samples_cycles: vec![cycles; 4],
            cycles: Summary::of(&[cycles; 4]).unwrap(),
            ns: Some(cycles / 1.98),
            valid: true,
        }
    }

    fn latency(look: SecondLook) -> Latency {
        let level = |name: &str, from: u64, to: u64, c: f64| LatencyLevel {
            name: name.into(),
            from_bytes: from,
            to_bytes: to,
            cycles: c,
            ns: Some(c / 1.98),
            knee_look: None,
        };
        Latency {
            device: 0,
            ladder: vec![point(4 << 10, 34.0), point(1 << 20, 265.0), point(1 << 30, 650.0)],
            levels: vec![level("L1", 4 << 10, 4 << 10, 34.0), level("L2", 1 << 20, 1 << 20, 265.0), level("memory", 1 << 30, 1 << 30, 650.0)],
            page_bytes: 2 << 20,
            tlb: vec![ChasePoint { slots: 16, ..point(16 * 128, 270.0) }, ChasePoint { slots: 24, ..point(24 * 128, 390.0) }],
            tlb_steps: vec![TlbStep { pages: 16, reach_bytes: 32 << 20, cycles_before: 270.0, cycles_after: 390.0, knee_look: look }],
            l2_spread: Some(L2Spread {
                bytes: 4 << 20,
                sm_cycles: vec![(0, 262.0), (1, 268.0)],
                cycles: Summary::of(&[262.0, 268.0]).unwrap(),
                near_cycles: Some(200.0),
                far_cycles: Some(330.0),
                valid: true,
            }),
            clock_ghz: Some(1.98),
        }
    }

    /// A stable TLB step is advised with its reach and cost; an unstable
    /// one is only shown.
    #[test]
    fn a_tlb_step_both_halves_find_is_advised() {
        let stable = SecondLook::Stable { first: "a".into(), second: "b".into() };
        let o = Outcome { latency: vec![latency(stable)], ..Outcome::empty() };
        let a = advice(&o);
        assert_eq!(a.len(), 1, "{a:?}");
        assert!(a[0].contains("more than 32MiB (16 pages of 2MiB) miss the GPU's TLB, 270 → 390 cycles a load (×1.44)"), "{}", a[0]);
        let unstable = SecondLook::Unstable { first: "a knee at 16 pages".into(), second: "no knee near 16 pages".into() };
        let o = Outcome { latency: vec![latency(unstable)], ..Outcome::empty() };
        assert!(advice(&o).is_empty());
        let t = text(&o.latency[0]);
        assert!(t.contains("past 16 pages (32MiB): 270 → 390 cycles a load; on each half: unstable (no knee near 16 pages)"), "{t}");
        assert!(t.contains("near partition 200, far 330 cycles") && t.contains("the SMs ran at 1.98 GHz"), "{t}");
        let m = metrics(&o);
        assert_eq!(m.iter().map(|h| h.value).collect::<Vec<_>>(), [34.0, 265.0, 650.0]);
        assert!(m.iter().all(|h| h.id == "gpu.latency" && !h.higher_is_better));
    }

    fn loaded_point(delay_ns: Option<u64>, gbs: f64, ns: f64) -> memperf_model::outcome::loaded_latency::Point {
        memperf_model::outcome::loaded_latency::Point {
            delay_ns,
            samples_latency_ns: vec![ns; 3],
            latency_ns: Summary::of(&[ns; 3]).unwrap(),
            samples_loader_bytes_per_s: vec![gbs * 1e9; 3],
            loader_bytes_per_s: Summary::of(&[gbs * 1e9; 3]).unwrap(),
            loader_bus_bytes_per_s: gbs * 1e9,
            chaser_bytes_per_s: 0.4e9,
            total_bytes_per_s: gbs * 1e9 + 0.4e9,
            valid: true,
        }
    }

    /// Latency within 10% of idle up to 2,000 GB/s, rising to ×2.4 at 4,000.
    fn curve_points() -> Vec<crate::model::outcome::loaded_latency::Point> {
        vec![
            loaded_point(None, 0.0, 330.0),
            loaded_point(Some(1000), 1000.0, 335.0),
            loaded_point(Some(500), 2000.0, 340.0),
            loaded_point(Some(250), 3000.0, 500.0),
            loaded_point(Some(0), 4000.0, 800.0),
        ]
    }

    /// Latency within 10% of idle up to 2,000 GB/s, ×2.4 at 4,000: the
    /// bend and Little's law are said, and the curve's ends are headlines.
    #[test]
    fn the_curves_bend_and_lines_in_flight_are_advised() {
        let points = curve_points();
        let c = LoadedCurve {
            device: 0,
            chain_bytes: 256 << 20,
            array_bytes: 200 << 20,
            blocks: 131,
            threads: 1024,
            bend: crate::analysis::bend::bend(&points),
            points,
            lines_per_sm: Some(190.6),
        };
        let o = Outcome { loaded: vec![c], ..Outcome::empty() };
        let a = advice(&o);
        assert_eq!(a.len(), 1, "{a:?}");
        assert!(a[0].contains("stays near idle (330 ns) up to 2000.40 GB/s, 50% of the 4000.40 GB/s"), "{}", a[0]);
        assert!(a[0].contains("×2.4 at the top") && a[0].contains("each SM kept 191 lines in flight"), "{}", a[0]);
        let t = curve_text(&o.loaded[0]);
        assert!(t.contains("latency stays within 10% of idle up to 2000.40 GB/s (50% of the curve's top)"), "{t}");
        let m = metrics(&o);
        assert_eq!(m.iter().map(|h| (h.id.as_str(), h.value)).collect::<Vec<_>>(), [("gpu.loaded_latency", 330.0), ("gpu.loaded_latency", 800.0)]);
    }

    /// A point whose chase ended off its cycle shows no figure, and the
    /// curve's bend and Little's law are drawn from the others.
    #[test]
    fn a_failed_point_shows_no_figure_and_bends_nothing() {
        let mut broken = loaded_point(Some(100), 9000.0, f64::MIN_POSITIVE);
        broken.valid = false;
        let points: Vec<_> = curve_points().into_iter().chain([broken]).collect();
        let m = crate::gpu::loaded::Measured { points, chain_bytes: 256 << 20, array_bytes: 200 << 20, blocks: 131, threads: 1024 };
        let c = crate::analysis::gpu_latency::curve(0, m);
        assert!(matches!(c.bend, Bend::Found { bytes_per_s, .. } if (bytes_per_s - 2000.4e9).abs() < 1.0), "{:?}", c.bend);
        let want = 4000.4e9 * 800e-9 / 128.0 / 131.0;
        assert!(c.lines_per_sm.is_some_and(|l| (l / want - 1.0).abs() < 1e-9), "{:?}", c.lines_per_sm);
        let t = curve_text(&c);
        assert!(t.lines().any(|l| l.contains("100 ns") && l.contains("FAILED") && !l.contains("9000")), "{t}");
    }
}
