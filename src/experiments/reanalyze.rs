//! `memperf report --reanalyze DOC`: every claim a document stores drawn
//! again from its raw samples by today's analysis — the machine's cache
//! levels (where memory begins), latency levels, TLB
//! reaches and walk costs, bandwidth plateaus and prefetch effects,
//! call-chain steps, loaded latency's bend, the huge-page A/B's modes and
//! verdicts — so that a change to the analysis can be checked on
//! recordings of machines one does not have. Claims drawn at render time
//! (Little's law, the prefetch sweep, the K-chain gains) follow by
//! themselves; the clock and the machine's claims are rechecked as every
//! loaded document is.

use crate::model::Document;

/// Redraws every stored claim of a document as loaded (and so already
/// rechecked); returns one line per experiment whose claims came out
/// different, saying which.
pub fn document(doc: &mut Document) -> Vec<String> {
    let folded = doc.clock_folded();
    let mut changed = Vec::new();
    // The machine's cache levels first: every experiment reads them.
    if let Some(m) = doc.machine.measured_levels.as_mut() {
        let found = crate::machine::levels::reanalyse(m);
        if found != m.found {
            m.found = found;
            changed.push(
                "machine: its measured cache levels (where memory begins) drawn differently by today's analysis".into(),
            );
        }
    }
    let machine = doc.machine.clone();
    for rec in &mut doc.experiments {
        // The clock the experiment measured around itself, as when it ran.
        let own = crate::timing::core_clock::mean_ghz(&rec.core_clock);
        let ghz = if folded { None } else { own.or(machine.core_ghz()) };
        let Some(outcome) = rec.outcome.as_mut() else { continue };
        let before = serde_json::to_value(&*outcome).ok().map(rounded);
        let fields = crate::model::redraw_of(outcome).reanalyse(&machine, ghz);
        let after = serde_json::to_value(&*outcome).ok().map(rounded);
        if !fields.is_empty() && before != after {
            let differ: Vec<&str> = fields
                .iter()
                .copied()
                .filter(|f| before.as_ref().map(|b| &b[f]) != after.as_ref().map(|a| &a[f]))
                .collect();
            changed.push(format!("{}: {} drawn differently by today's analysis", rec.name, differ.join(", ")));
        }
    }
    changed
}

/// Numbers to six significant digits: a figure recomputed from parsed
/// samples may differ from the stored one in its last bits, which is no
/// change of claim.
fn rounded(v: serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    match v {
        Value::Number(n) => match n.as_f64() {
            Some(f) if n.is_f64() => Value::String(format!("{f:.5e}")),
            _ => Value::Number(n),
        },
        Value::Array(a) => Value::Array(a.into_iter().map(rounded).collect()),
        Value::Object(o) => Value::Object(o.into_iter().map(|(k, v)| (k, rounded(v))).collect()),
        other => other,
    }
}
