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
    if !rec.valid {
        out.push_str(&format!("{}: INVALID — a result failed validation (see the warnings)\n", rec.name));
    }
    out
}

/// The run's advice, listed at the end of its terminal output (the
/// report's summary holds the same lines, each linked to its evidence).
pub fn advice_at_end(doc: &Document) -> String {
    let mut out = host_drift(doc);
    let items = super::headlines::advice_items(doc);
    if items.is_empty() {
        return out;
    }
    out.push_str("\nadvice (each line from this run's own figures; the report links it to them):\n");
    for a in items {
        out.push_str(&format!("  [{}] {}\n", a.experiment, a.text));
    }
    out
}

/// How far the suite's reference moved: "host during the run: …".
pub fn host_drift(doc: &Document) -> String {
    let Some(d) = &doc.host_drift else { return String::new() };
    let Some(moved) = d.moved_most() else { return String::new() };
    let limit = memperf_model::timing::drift::HOST_MOVED_LIMIT * 100.0;
    let verdict = if d.host_moved() { "beyond" } else { "within" };
    let all = super::placement::every_cpu_moved(doc).map_or(String::new(), |m| {
        let advice = if m.fraction * 100.0 > limit {
            format!(", beyond the {limit:.0}%: no advice resting on them is given")
        } else {
            String::new()
        };
        // Between the reference's points, where the experiment showed more.
        let inside =
            m.inside.map_or(String::new(), |p| format!(", between the points: {}", super::placement::phases_text(&p)));
        format!(
            "; every CPU reading at once moved {:.1}%{inside} (this run's figures of more than one CPU carry it{advice}; \
             on a guest, where the host placed its vCPUs can do this)",
            m.fraction * 100.0
        )
    });
    // Said where the document has advice resting on the reference.
    let resting = |w: super::outcome::SideReference| -> Vec<&str> {
        let outcomes = super::outcome::outcomes(doc).into_iter();
        outcomes.filter(|o| super::outcome::of(o).advice_side_references(None).contains(&w)).map(|o| o.name()).collect()
    };
    let side = |what: &str, w: super::outcome::SideReference| {
        let names = resting(w);
        match w.moved(d) {
            Some(m) if !names.is_empty() => {
                let beyond =
                    if m * 100.0 > limit { format!(", beyond the {limit:.0}%: not given") } else { String::new() };
                format!("; {what} moved {:.1}% (the advice of {} carries it{beyond})", m * 100.0, names.join(" and "))
            }
            _ => String::new(),
        }
    };
    let calls = side("the call chain", super::outcome::SideReference::Calls);
    let kernel = side("the system call", super::outcome::SideReference::KernelEntry);
    let walks = side("the chase on 4 KiB pages", super::outcome::SideReference::Walks4k);
    format!(
        "\nhost during the run: {}: one thread moved {:.1}%, {verdict} the {limit:.0}% its verdicts allow{all}{calls}\
         {kernel}{walks}\n",
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

/// "×1.034 [×1.010, ×1.050] (n = 5, 94%)".
pub fn ratio_text(r: &crate::timing::Ratio) -> String {
    format!("×{:.3} [×{:.3}, ×{:.3}] (n = {}, {:.0}% interval)", r.median, r.low, r.high, r.n, r.confidence * 100.0)
}

#[cfg(test)]
mod tests {
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

    /// The host line says how far the call chain and the system call
    /// moved, and which advice they withhold beyond the limit.
    #[test]
    fn the_host_line_says_the_core_references() {
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
        assert!(line.contains("the call chain moved 3.0% (the advice of calls and context carries it)"), "{line}");
        let kernel = "the system call moved 30.0% (the advice of context carries it, beyond the 10%: not given)";
        assert!(line.contains(kernel), "{line}");
        let mut walking = doc.clone();
        let d = walking.host_drift.as_mut().unwrap();
        d.points.iter_mut().zip([180.0, 189.0]).for_each(|(p, ns)| p.chase_4k_ns = vec![ns]);
        let line = super::host_drift(&walking);
        let walks = "the chase on 4 KiB pages moved 5.0% (the advice of latency and tlb and working-set and prefetch-fault carries it)";
        assert!(line.contains("chasing on 4 KiB pages 180, 189 ns") && line.contains(walks), "{line}");
        let mut without = doc.clone();
        without.experiments.retain(|r| r.name != "context" && r.name != "calls");
        let line = super::host_drift(&without);
        assert!(line.contains("entering the kernel 200, 260 ns") && !line.contains("system call moved"), "{line}");
    }
}
