//! The figures a reader wants first, derived from the document alone: the
//! headline metrics (with their raw samples, for `compare`) and the advice
//! they imply (for the top of the report).

use super::outcome::SideReference;
use crate::model::document::Document;

pub use memperf_model::headline::{headline, Headline, Unit};

/// The lower-case, `_`-joined form of a name, for an id.
pub(crate) fn id_part(text: &str) -> String {
    let s: String =
        text.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '_' }).collect();
    s.split('_').filter(|p| !p.is_empty()).collect::<Vec<_>>().join("_")
}

/// What a figure measured at `size` is, by where this run verified
/// memory (`verified`): "DRAM" at or past it; else the figure's name
/// says that memory was not verified there.
pub(crate) fn in_memory(size: crate::units::Bytes, verified: Option<crate::units::Bytes>) -> (&'static str, String) {
    match verified {
        Some(v) if size >= v => ("DRAM ", String::new()),
        Some(v) => ("", format!("; below {v}, where this run verified memory, so caches answer part of it")),
        None => ("", "; memory not verified in this run".into()),
    }
}

/// "1 thread", "2 threads".
pub(crate) fn threads(n: usize) -> String {
    format!("{n} thread{}", if n == 1 { "" } else { "s" })
}

/// Every headline metric of the document, each outcome's in turn.
pub fn metrics(doc: &Document) -> Vec<Headline> {
    super::outcome::outcomes(doc).into_iter().flat_map(|o| super::outcome::of(o).metrics(doc)).collect()
}

/// Advice sentences for the top of the report.
pub fn advice(doc: &Document) -> Vec<String> {
    advice_items(doc).into_iter().map(|a| a.text).collect()
}

/// One line of advice and the experiment whose figures it rests on (the
/// report links it to that evidence).
#[derive(Debug, Clone, PartialEq)]
pub struct Advice {
    pub experiment: &'static str,
    pub text: String,
    /// Text that the line of the experiment's table this advice rests on
    /// contains (the report links to that line), where there is one.
    pub row: Option<String>,
}

/// Every line of advice, tagged with the experiment it rests on.
pub fn advice_items(doc: &Document) -> Vec<Advice> {
    use memperf_model::timing::drift::HOST_MOVED_LIMIT;
    if let Some(d) = doc.host_drift.as_ref().filter(|d| d.host_moved()) {
        let moved = d.moved_most().unwrap_or(f64::NAN) * 100.0;
        return vec![Advice {
            experiment: "run",
            text: format!(
                "No verdict from this run: the host moved by {moved:.0}% while it measured ({}), so a difference \
                 measured across that would not hold in the next run. Rerun when the host is quieter.",
                d.describe()
            ),
            row: None,
        }];
    }
    let all_moved = super::placement::every_cpu_moved(doc).filter(|m| m.fraction > HOST_MOVED_LIMIT);
    let mut out = Vec::new();
    for o in super::outcome::outcomes(doc) {
        let r = super::outcome::of(o);
        let cpus = r.advice_cpus();
        for text in r.advice(doc) {
            // The row the line rests on, from what it would have said: a
            // withheld line still links to its evidence.
            let row = r.advice_row(&text);
            let side_moved = side_reference_moved(doc, r.advice_side_references(Some(&text)));
            // Placement first: a line of several CPUs and a side
            // reference's work (none so far) says the larger cause's reason.
            let text = match (all_moved, side_moved) {
                (Some(m), _) if cpus > 1 => placement_withholds(&text, cpus, m, doc),
                (_, Some((work, m))) => side_reference_withholds(&text, work, m, doc),
                _ => text,
            };
            out.push(Advice { experiment: o.name(), row, text });
        }
    }
    out
}

/// The reference of `work` that moved most during the run, and how far,
/// where beyond the limit.
fn side_reference_moved(doc: &Document, work: &[SideReference]) -> Option<(SideReference, f64)> {
    let d = doc.host_drift.as_ref()?;
    work.iter()
        .filter_map(|w| w.moved(d).map(|m| (*w, m)))
        .filter(|(_, m)| *m > memperf_model::timing::drift::HOST_MOVED_LIMIT)
        .max_by(|a, b| a.1.total_cmp(&b.1))
}

/// A line of advice resting on `work` besides reading memory, in a run
/// whose reference of that work moved by `moved` (beyond the limit) while
/// the read and the chase held: what it would have said is not said, only
/// why.
fn side_reference_withholds(text: &str, work: SideReference, moved: f64, doc: &Document) -> String {
    let (of, reference) = match work {
        SideReference::Calls => ("calls and returns", "a call chain through the PLT"),
        SideReference::KernelEntry => ("entering the kernel", "a system call"),
        SideReference::Walks4k => ("loads that walk 4 KiB page tables", "a random chase on 4 KiB pages"),
    };
    let why = format!("Its figures rest on {of}, and {reference} moved {:.0}% during this run", moved * 100.0);
    withheld(text, &why, "the next run would say otherwise", doc)
}

/// A line of advice resting on figures of `cpus` CPUs at once, in a run
/// whose every-CPU reference moved by `moved` (beyond the limit): what it
/// would have said is not said, only why, with the reference's figures.
fn placement_withholds(text: &str, cpus: usize, moved: super::placement::Moved, doc: &Document) -> String {
    let inside = moved.inside.map_or(String::new(), |p| format!(": {}", super::placement::phases_text(&p)));
    let why = format!(
        "Its figures took {cpus} CPUs at once, and every CPU reading at once moved {:.0}% during this run{inside}",
        moved.fraction * 100.0
    );
    withheld(text, &why, "where the host placed the vCPUs moved them, so the next run would say otherwise", doc)
}

/// "{what the line is about}: not judged. {why} ({the reference's
/// figures}): {so}. Rerun when the host is quieter."
fn withheld(text: &str, why: &str, so: &str, doc: &Document) -> String {
    let what = text.split([':', '(']).next().unwrap_or(text).trim_end();
    let figures = doc.host_drift.as_ref().map_or(String::new(), |d| d.describe());
    format!("{what}: not judged. {why} ({figures}): {so}. Rerun when the host is quieter.")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A run whose every-CPU reference moved beyond 10% while one thread
    /// held still withholds exactly the lines resting on figures of more
    /// than one CPU (page-init's best where it took threads), saying why;
    /// a still reference withholds none.
    #[test]
    fn every_cpu_moving_withholds_the_advice_of_several_cpus() {
        use crate::model::outcome::page_init;
        use memperf_model::timing::drift::{DriftPoint, HostDrift};
        let mut withheld = 0;
        for m in ["amd-epyc-zen4", "amd-epyc-zen5", "intel-xeon-m167"] {
            let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join(format!("tests/data/machines/{m}-kvm-2vcpu/run-quick.json"));
            let mut doc = crate::model::document_from_json(&std::fs::read_to_string(path).unwrap()).unwrap();
            let point = |after: usize, all: f64| DriftPoint {
                after_experiments: after,
                read_bytes_per_s: vec![40e9],
                chase_ns: vec![140.0],
                all_read_bytes_per_s: vec![all * 1e9],
                call_ns: Vec::new(),
                syscall_ns: Vec::new(),
                chase_4k_ns: Vec::new(),
                chase_4k_pages_per_block: None,
            };
            let drift = |all: [f64; 3]| HostDrift {
                size_bytes: crate::units::Bytes(1 << 28),
                all_threads: Some(2),
                points: vec![point(0, all[0]), point(6, all[1]), point(12, all[2])],
            };
            doc.host_drift = Some(drift([45.0, 46.0, 45.5]));
            let still = advice_items(&doc);
            assert!(still.iter().all(|a| !a.text.contains("not judged. Its figures took")), "{m}: {still:?}");
            doc.host_drift = Some(drift([45.0, 85.0, 50.0]));
            let moved = advice_items(&doc);
            assert_eq!(moved.len(), still.len(), "{m}: a line each still");
            let pi = doc.outcome::<page_init::Outcome>().unwrap();
            let best = pi.fastest().unwrap();
            for (a, b) in still.iter().zip(&moved) {
                let several = a.experiment == "curves" || (a.experiment == "page-init" && best.threads > 1);
                if several {
                    assert!(b.text.contains("not judged. Its figures took 2 CPUs at once"), "{m}: {}", b.text);
                    assert!(b.text.contains("moved 89%"), "{m}: {}", b.text);
                    withheld += 1;
                } else {
                    assert_eq!(a, b, "{m}: a line of one CPU is kept");
                }
            }
        }
        assert!(withheld > 0, "no recording's advice rests on more than one CPU: the case shows nothing");
    }

    /// A run whose memory held still while its call chain moved 20% and
    /// its system call 30% withholds exactly the lines resting on calls
    /// (`calls`, and `context`'s interpreter) and on entering the kernel
    /// (`context`), each naming the reference that moved most, and keeps
    /// their links; with only the call chain moving, `context` names it.
    /// A still reference withholds none.
    #[test]
    fn a_core_reference_that_moved_withholds_the_advice_resting_on_it() {
        use memperf_model::timing::drift::HostDrift;
        let mut withheld = [0, 0];
        for m in ["amd-epyc-zen4", "amd-epyc-zen5", "intel-xeon-m167"] {
            let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join(format!("tests/data/machines/{m}-kvm-2vcpu/run-quick.json"));
            let mut doc = crate::model::document_from_json(&std::fs::read_to_string(path).unwrap()).unwrap();
            let point = crate::test_support::core_point;
            let drift = |calls: [f64; 3], syscalls: [f64; 3]| HostDrift {
                size_bytes: crate::units::Bytes(1 << 28),
                all_threads: None,
                points: (0..3).map(|i| point(6 * i, calls[i], syscalls[i])).collect(),
            };
            doc.host_drift = Some(drift([5.0, 5.1, 5.0], [200.0, 204.0, 201.0]));
            let still = advice_items(&doc);
            assert!(still.iter().all(|a| !a.text.contains("not judged")), "{m}: {still:?}");
            let calls_moved = [5.0, 6.0, 5.5];
            for (syscalls, context_says) in [
                ([200.0, 260.0, 210.0], ["rest on entering the kernel", "a system call moved 30%"]),
                ([200.0, 204.0, 201.0], ["rest on calls and returns", "a call chain through the PLT moved 20%"]),
            ] {
                doc.host_drift = Some(drift(calls_moved, syscalls));
                let moved = advice_items(&doc);
                assert_eq!(moved.len(), still.len(), "{m}: a line each still");
                for (a, b) in still.iter().zip(&moved) {
                    let says: &[&str] = match a.experiment {
                        "calls" => &["rest on calls and returns", "a call chain through the PLT moved 20%"],
                        "context" => &context_says,
                        _ => {
                            assert_eq!(a, b, "{m}: a line of memory is kept");
                            continue;
                        }
                    };
                    assert!(b.text.contains("not judged") && says.iter().all(|w| b.text.contains(w)), "{}", b.text);
                    assert!(b.text.contains("calling through the PLT 5.00, 6.00, 5.50 ns"), "{}", b.text);
                    assert_eq!(a.row, b.row, "{m}: a withheld line still links to its evidence");
                    withheld[usize::from(a.experiment == "context")] += 1;
                }
            }
        }
        assert!(withheld.iter().all(|&n| n > 0), "{withheld:?}: no recording's advice rests on calls or context");
    }

    /// A run whose chase on 4 KiB pages moved 15% while the rest of its
    /// reference held withholds exactly the lines resting on 4 KiB walks
    /// (latency's huge pages against 4 KiB pages, which every recording
    /// sets them against; working-set's; tlb's; prefetch-fault's TLB-miss
    /// walk and its "no cost on a bad address", where given), each naming
    /// the chase and keeping its link; a still one withholds none.
    #[test]
    fn the_chase_on_4k_pages_withholds_the_advice_resting_on_4k_walks() {
        use memperf_model::timing::drift::HostDrift;
        let walks_in_prefetch_fault = |a: &Advice| {
            a.experiment == "prefetch-fault"
                && ["Prefetches that miss the TLB", "No prefetch instruction"].iter().any(|s| a.text.starts_with(s))
        };
        let mut prefetch_fault_withheld = 0;
        for m in ["amd-epyc-zen4", "amd-epyc-zen5", "intel-xeon-m167"] {
            let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join(format!("tests/data/machines/{m}-kvm-2vcpu/run-quick.json"));
            let mut doc = crate::model::document_from_json(&std::fs::read_to_string(path).unwrap()).unwrap();
            let drift = |walks: [f64; 3]| HostDrift {
                size_bytes: crate::units::Bytes(1 << 28),
                all_threads: None,
                points: (0..3)
                    .map(|i| {
                        let mut p = crate::test_support::core_point(6 * i, 5.0, 200.0);
                        p.chase_4k_ns = vec![walks[i]];
                        p
                    })
                    .collect(),
            };
            doc.host_drift = Some(drift([180.0, 182.0, 181.0]));
            let still = advice_items(&doc);
            assert!(still.iter().all(|a| !a.text.contains("not judged")), "{m}: {still:?}");
            doc.host_drift = Some(drift([180.0, 207.0, 181.0]));
            let moved = advice_items(&doc);
            let mut withheld = std::collections::BTreeSet::new();
            assert_eq!(moved.len(), still.len(), "{m}: a line each still");
            for (a, b) in still.iter().zip(&moved) {
                let huge_pages = a.experiment == "latency" && a.text.starts_with("Huge pages (");
                if !(huge_pages || walks_in_prefetch_fault(a) || matches!(a.experiment, "working-set" | "tlb")) {
                    assert_eq!(a, b, "{m}: a line not resting on 4 KiB walks is kept");
                    continue;
                }
                let says = ["rest on loads that walk 4 KiB page tables", "a random chase on 4 KiB pages moved 15%"];
                assert!(b.text.contains("not judged") && says.iter().all(|w| b.text.contains(w)), "{}", b.text);
                assert!(b.text.contains("chasing on 4 KiB pages 180, 207, 181 ns"), "{}", b.text);
                assert_eq!(a.row, b.row, "{m}: a withheld line still links to its evidence");
                withheld.insert(a.experiment);
            }
            prefetch_fault_withheld += usize::from(withheld.remove("prefetch-fault"));
            assert_eq!(withheld.into_iter().collect::<Vec<_>>(), ["latency", "tlb", "working-set"], "{m}");
        }
        assert!(prefetch_fault_withheld > 0, "no recording gave a prefetch-fault line resting on 4 KiB walks");
    }

    /// A run whose reference moved beyond 10% gives one line of advice,
    /// saying so, instead of verdicts measured across the move.
    #[test]
    fn a_host_that_moved_withholds_every_verdict() {
        use memperf_model::timing::drift::{DriftPoint, HostDrift};
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/machines/amd-epyc-zen5-kvm-2vcpu/run-quick.json");
        let mut doc = crate::model::document_from_json(&std::fs::read_to_string(path).unwrap()).unwrap();
        assert!(advice_items(&doc).len() > 3, "the recording's own advice");
        let point = |after: usize, gbps: f64| DriftPoint {
            after_experiments: after,
            read_bytes_per_s: vec![gbps * 1e9],
            chase_ns: vec![140.0],
            all_read_bytes_per_s: Vec::new(),
            call_ns: Vec::new(),
            syscall_ns: Vec::new(),
            chase_4k_ns: Vec::new(),
            chase_4k_pages_per_block: None,
        };
        doc.host_drift = Some(HostDrift {
            size_bytes: crate::units::Bytes(1 << 28),
            all_threads: None,
            points: vec![point(0, 40.0), point(6, 30.0), point(12, 41.0)],
        });
        let a = advice_items(&doc);
        assert_eq!(a.len(), 1, "{a:?}");
        assert!(a[0].text.starts_with("No verdict from this run: the host moved by 37%"), "{}", a[0].text);
    }

    /// Every headline of both recorded quick suites has an id of the form
    /// `experiment.quantity`, lower-case labels, and a key no other
    /// headline of its document shares (the joins would mix them up).
    #[test]
    fn every_headline_has_an_identity_of_its_own() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/machines");
        let mut seen = 0;
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path().join("run-quick.json");
            let Ok(text) = std::fs::read_to_string(&path) else { continue };
            let doc = crate::model::document_from_json(&text).unwrap();
            let ms = metrics(&doc);
            assert!(ms.len() > 20, "{}: {} headlines", path.display(), ms.len());
            let mut keys: Vec<String> = Vec::new();
            for m in &ms {
                let (exp, quantity) = m.id.split_once('.').unwrap_or_else(|| panic!("{}: no quantity", m.id));
                let word = |t: &str| {
                    t.starts_with(|c: char| c.is_ascii_lowercase())
                        && t.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
                };
                assert!(word(exp) && word(quantity), "{}", m.id);
                assert!(m.labels.keys().all(|k| word(k)), "{:?}", m.labels);
                assert!(!keys.contains(&m.key()), "{} twice in {}", m.key(), path.display());
                keys.push(m.key());
            }
            seen += 1;
        }
        assert!(seen >= 2, "both recorded machines' documents were read");
    }

    #[test]
    fn a_key_is_the_id_and_its_labels_in_name_order() {
        let m = headline(
            "latency.random",
            &[("size_bytes", "64".into()), ("pages", "4k".into())],
            "x".into(),
            Unit::Nanoseconds(None),
            vec![],
            1.0,
            false,
        );
        assert_eq!(m.key(), "latency.random{pages=4k,size_bytes=64}");
        assert_eq!(
            headline("tlb.walk", &[], "x".into(), Unit::Nanoseconds(None), vec![], 1.0, false).key(),
            "tlb.walk"
        );
        assert_eq!(id_part("CPU time"), "cpu_time");
    }

    /// Every unit is written as its symbol and read back as itself, and its
    /// SI form is the one OpenMetrics names.
    #[test]
    fn units_round_trip_through_their_symbols_and_know_their_si_form() {
        let all = [
            Unit::GigabytesPerSecond,
            Unit::Nanoseconds(None),
            Unit::ns_per("page"),
            Unit::Seconds,
            Unit::Mebibytes,
            Unit::Count,
            Unit::Other("%".into()),
        ];
        for u in all {
            let json = serde_json::to_string(&u).unwrap();
            assert_eq!(serde_json::from_str::<Unit>(&json).unwrap(), u, "{json}");
        }
        assert_eq!(Unit::ns_per("page").to_string(), "ns/page");
        assert_eq!(Unit::ns_per("call").si(), (1e-9, Some("seconds"), Some("call".into())));
        assert_eq!(Unit::GigabytesPerSecond.si(), (1e9, Some("bytes_per_second"), None));
        assert_eq!(Unit::Mebibytes.si().0, 1048576.0);
        assert_eq!(Unit::Other("ratio".into()).si(), (1.0, None, None));
    }
}
