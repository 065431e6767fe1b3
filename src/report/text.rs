//! Terminal rendering of a document: each record's section (its outcome's
//! renderer writes it), its clock and validity, Little's law where the
//! document has what it needs, and the warnings for stderr.

pub use super::outcome::info::machine;
pub use super::outcome::{plateau_text, stat};

use crate::model::document::{Document, Status, Warning};

pub fn render(doc: &Document) -> String {
    let mut out = String::new();
    for rec in &doc.experiments {
        out.push_str(&experiment(doc, rec));
        out.push('\n');
    }
    out.push_str(&derived(doc));
    out
}

/// The text of one experiment's record (its status when it did not complete).
pub fn experiment(doc: &Document, rec: &crate::model::document::ExperimentRecord) -> String {
    if rec.status != Status::Completed {
        return format!(
            "{}: {}\n",
            rec.name,
            rec.skip_reason.clone().unwrap_or_else(|| format!("{:?}", rec.status).to_lowercase())
        );
    }
    let mut out = match &rec.outcome {
        Some(o) => super::outcome::of(o).text(doc),
        None => format!("{}: completed without an outcome\n", rec.name),
    };
    // The clock is said where figures are given in cycles from it, or
    // where it moved during the experiment; not after every section.
    let in_cycles = rec.outcome.as_ref().is_some_and(|o| super::outcome::of(o).in_cycles());
    match rec.core_clock.as_slice() {
        [before, after]
            if before.two_chains()
                && after.two_chains()
                && (in_cycles || (after.ghz / before.ghz - 1.0).abs() > 0.05) =>
        {
            out.push_str(&format!(
                "core clock (two dependent chains): {:.2} GHz before, {:.2} GHz after\n",
                before.ghz, after.ghz
            ))
        }
        [before, after] if in_cycles && !(before.two_chains() && after.two_chains()) => {
            out.push_str("core clock: not measured (one folding chain, see the warnings)\n")
        }
        _ => {}
    }
    out.push_str(&moved_across(doc, rec));
    if let Some(o) = &rec.outcome {
        out.push_str(&steady_stretches(&super::outcome::of(o).metrics(doc)));
    }
    if !rec.valid {
        out.push_str(&format!("{}: INVALID — a result failed validation (see the warnings)\n", rec.name));
    }
    out
}

/// Where the suite's reference moved beyond the limit between the points
/// taken before and after this experiment, a line that says so: its
/// absolute figures were taken across that move.
fn moved_across(doc: &Document, rec: &crate::model::document::ExperimentRecord) -> String {
    let Some(index) = doc.experiments.iter().position(|r| std::ptr::eq(r, rec)) else { return String::new() };
    let Some(around) = doc.host_drift.as_ref().and_then(|d| d.around(index)) else { return String::new() };
    let Some(moved) = around.moved_most().filter(|_| around.host_moved()) else { return String::new() };
    let [before, after] = around.points.as_slice() else { return String::new() };
    let seen = [
        before
            .read_median()
            .zip(after.read_median())
            .map(|(a, b)| format!("read {:.1} → {:.1} GB/s", a / 1e9, b / 1e9)),
        before.chase_median().zip(after.chase_median()).map(|(a, b)| format!("chase {a:.0} → {b:.0} ns")),
    ]
    .into_iter()
    .flatten()
    .collect::<Vec<_>>()
    .join(", ");
    format!(
        "host across this experiment: the reference moved {:.1}% between the points taken after {} and {} \
         experiments ({seen}); its absolute figures were taken across that move, its verdicts pair their arms \
         within each repetition\n",
        moved * 100.0,
        before.after_experiments,
        after.after_experiments
    )
}

/// The headline figures taken from their samples' steady stretch, the
/// host having moved across the rest, each with that move beside it.
fn steady_stretches(metrics: &[crate::report::headlines::Headline]) -> String {
    metrics
        .iter()
        .filter_map(|m| {
            let s = m.steady?;
            Some(format!(
                "{}: {}, the median of its {}\n",
                m.name,
                crate::units::readable(m.value, &m.unit.to_string()),
                s.phrase()
            ))
        })
        .collect()
}

/// The run's verdicts and advice, listed at the end of its terminal
/// output under one heading (the report's summary holds the same lines,
/// each linked to its evidence); the host's move before them.
pub fn advice_at_end(doc: &Document) -> String {
    let mut out = host_drift(doc);
    let items = super::headlines::advice_items(doc);
    if items.is_empty() {
        return out;
    }
    out.push_str(
        "\nverdicts and advice (each from this run's own figures, arms paired within each repetition; the report \
         links each to them):\n",
    );
    for a in items {
        out.push_str(&format!("  [{}] {}\n", a.experiment, a.text));
    }
    out
}

/// How far the suite's reference moved, and what carries it: "host during
/// the run: …". Absolute figures measured across a move carry it; paired
/// verdicts, interleaved within each repetition, do not.
pub fn host_drift(doc: &Document) -> String {
    let Some(d) = &doc.host_drift else { return String::new() };
    let Some(moved) = d.moved_most() else { return String::new() };
    let all = super::placement::every_cpu_moved(doc).map_or(String::new(), |m| {
        let inside =
            m.inside.map_or(String::new(), |p| format!(", between the points: {}", super::placement::phases_text(&p)));
        format!("; every CPU reading at once moved {:.1}%{inside}", m.fraction * 100.0)
    });
    let side = d
        .side_moves()
        .into_iter()
        .filter_map(|(what, m)| m.map(|m| format!("; {what} moved {:.1}%", m * 100.0)))
        .collect::<String>();
    format!(
        "\nhost during the run: {}: one thread moved {:.1}%{all}{side}. Absolute figures measured across a move carry \
         it; the verdicts pair their arms within each repetition and their intervals carry what is left.\n",
        d.describe(),
        moved * 100.0
    )
}

/// Little's law, where the document has both a bandwidth and a latency.
pub fn derived(doc: &Document) -> String {
    use crate::model::outcome::{bandwidth, latency};
    let both = doc.outcome::<bandwidth::Outcome>().is_some() && doc.outcome::<latency::Outcome>().is_some();
    if !both {
        return String::new();
    }
    let c = super::concurrency::concurrency(doc);
    let mut out = String::from("effective concurrency (Little's law: bandwidth × latency / line size)\n");
    if c.is_empty() {
        out.push_str("  not measured: needs a DRAM latency on huge pages (≥ 90% coverage, a working set where the probe verified memory, else ≥ 4× the last-level cache)\n");
    }
    for x in c {
        if let Some(why) = &x.not_claimed {
            out.push_str(&format!("  {} pages, {} thread(s): not claimed — {why}\n", x.pages, x.threads));
            continue;
        }
        out.push_str(&format!("  {} pages, {} thread(s): {}\n", x.pages, x.threads, x.formula));
        if let Some(k) = x.chase_saturation_chains {
            out.push_str(&format!(
                "    cross-check: independent chases stop gaining at {k} chains (demand misses alone)\n"
            ));
        }
    }
    out.push('\n');
    out
}

/// Warnings, one per line with the fix, for stderr.
pub fn warnings(doc: &Document) -> String {
    let all = doc.warnings.iter().chain(doc.experiments.iter().flat_map(|e| e.warnings.iter()));
    all.map(warning_line).collect()
}

pub fn warning_line(w: &Warning) -> String {
    match &w.fix {
        Some(fix) => format!("warning: {} (fix: {fix})\n", w.message),
        None => format!("warning: {}\n", w.message),
    }
}

pub use memperf_model::timing::ratio::MIN_ADVISED_CHANGE;

/// "×1.034 [×1.010, ×1.050] (n = 12)": a paired ratio with its interval,
/// where no verdict is said (a table cell, a figure beside a verdict).
pub fn ratio_text(r: &crate::timing::Ratio) -> String {
    if !(r.low.is_finite() && r.high.is_finite() && r.low > 0.0) {
        let c = memperf_model::timing::verdict::CONFIDENCE * 100.0;
        return format!("×{:.3} (n = {}: no {c:.0}% interval)", r.estimate, r.n);
    }
    format!("×{:.3} [×{:.3}, ×{:.3}] (n = {})", r.estimate, r.low, r.high, r.n)
}

#[cfg(test)]
mod tests {
    /// A headline taken from its steady stretch says so with the move
    /// beside it, on the screen and in its section; one whose samples held
    /// steady says nothing.
    #[test]
    fn a_figure_from_its_steady_stretch_says_so() {
        use crate::report::headlines::{headline, Unit};
        let mut samples = vec![10.0, 10.1, 9.9, 10.0, 10.05, 9.95, 10.02];
        samples.extend([13.0, 13.1, 12.9]);
        let h = headline("bandwidth.read", &[], "read, 128MiB".into(), Unit::GigabytesPerSecond, samples, 10.0, true);
        assert_eq!(
            super::steady_stretches(std::slice::from_ref(&h)),
            "read, 128MiB: 10.0 GB/s, the median of its steady stretch of 7 of 10 samples; their level moved 30% \
             across all 10\n"
        );
        assert!(crate::report::screen::figure(&h).starts_with("10.0 GB/s (steady 7/10, moved 30%)  read"));
        let all = headline("bandwidth.read", &[], "read".into(), Unit::GigabytesPerSecond, vec![10.0; 8], 10.0, true);
        assert_eq!(super::steady_stretches(std::slice::from_ref(&all)), "");
        // A value that is not the stretch's median records no stretch.
        let other =
            headline("x", &[], "x".into(), Unit::Count, (0..10).map(|i| [1.0, 2.0][i / 5]).collect(), 1.5, true);
        assert_eq!(other.steady, None);
    }

    /// An experiment between two reference points that lie more than the
    /// limit apart says so in its section; one between two that agree
    /// does not, and neither does a document without a point after it.
    #[test]
    fn an_experiment_taken_across_a_move_says_so() {
        use memperf_model::timing::drift::HostDrift;
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/machines/amd-epyc-zen4-kvm-2vcpu/run-quick.json");
        let mut doc = crate::model::document_from_json(&std::fs::read_to_string(path).unwrap()).unwrap();
        assert!(doc.experiments.len() >= 6, "the recording holds a suite");
        let point = |after: usize, gbps: f64| {
            let mut p = crate::test_support::core_point(after, 5.0, 200.0);
            p.read_bytes_per_s = vec![gbps * 1e9];
            p
        };
        doc.host_drift = Some(HostDrift {
            size_bytes: crate::units::Bytes(1 << 28),
            all_threads: None,
            points: vec![point(0, 40.4), point(3, 40.0), point(6, 32.0)],
        });
        let line = |i: usize| {
            let text = super::experiment(&doc, &doc.experiments[i]);
            text.lines().find(|l| l.starts_with("host across this experiment")).map(str::to_string)
        };
        assert_eq!(line(0), None, "40.4 and 40.0 GB/s: 1%, within the limit");
        assert_eq!(line(2), None);
        let moved = line(3).expect("experiment 3 lies between 40.0 and 32.0 GB/s");
        assert!(
            moved.contains("moved 25.0% between the points taken after 3 and 6 experiments (read 40.0 → 32.0 GB/s, chase 140 → 140 ns)"),
            "{moved}"
        );
        assert_eq!(line(5), Some(moved));
        assert_eq!(line(6), None, "no point after experiment 6");
    }

    /// The clock line follows the sections that give cycles (tlb, calls),
    /// not numa, which measured nothing, nor bandwidth, whose clock held.
    #[test]
    fn the_clock_is_said_where_cycles_are_given_or_it_moved() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/machines/amd-epyc-zen4-kvm-2vcpu/run-quick.json");
        let doc = crate::model::document_from_json(&std::fs::read_to_string(path).unwrap()).unwrap();
        let text = |name: &str| super::experiment(&doc, doc.experiment(name).unwrap());
        assert!(text("tlb").contains("core clock (two dependent chains)"), "{}", text("tlb"));
        assert!(!text("numa").contains("core clock"), "{}", text("numa"));
        assert!(!text("bandwidth").contains("core clock"), "3.63 → 3.65 GHz held");
        let mut moved = doc.clone();
        let rec = moved.experiments.iter_mut().find(|r| r.name == "bandwidth").unwrap();
        rec.core_clock[1].ghz = 3.0;
        assert!(super::experiment(&moved, moved.experiment("bandwidth").unwrap()).contains("GHz after"));
    }

    /// The host line says how far each part of the reference moved, and
    /// that absolute figures carry it while verdicts do not.
    #[test]
    fn the_host_line_says_each_reference_and_what_carries_it() {
        use memperf_model::timing::drift::HostDrift;
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/machines/amd-epyc-zen4-kvm-2vcpu/run-quick.json");
        let mut doc = crate::model::document_from_json(&std::fs::read_to_string(path).unwrap()).unwrap();
        let point = crate::test_support::core_point;
        doc.host_drift = Some(HostDrift {
            size_bytes: crate::units::Bytes(1 << 28),
            all_threads: None,
            points: vec![point(0, 5.0, 200.0), point(6, 5.15, 260.0)],
        });
        let line = super::host_drift(&doc);
        assert!(line.contains("; the call chain moved 3.0%; the system call moved 30.0%."), "{line}");
        assert!(line.contains("Absolute figures measured across a move carry it"), "{line}");
        let mut walking = doc.clone();
        let d = walking.host_drift.as_mut().unwrap();
        d.points.iter_mut().zip([180.0, 189.0]).for_each(|(p, ns)| p.chase_4k_ns = vec![ns]);
        let line = super::host_drift(&walking);
        assert!(
            line.contains("chasing on 4 KiB pages 180, 189 ns") && line.contains("4 KiB pages moved 5.0%"),
            "{line}"
        );
    }
}
