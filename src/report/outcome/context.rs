//! `context` as text: ns per save, which saves enter the kernel and the
//! evidence, and the Ruby lesson beside Ruby's figures.

use crate::error::Result;
use crate::kernels::context::Protection;
use crate::model::document::Document;
use crate::model::outcome::context::Outcome;
use crate::model::outcome::context::{self, KernelEntry};
use crate::report::barchart::{self, Bar, BarChart};
use crate::report::headlines::{headline, Headline};
use crate::report::plot::{Figure, Plot};
use crate::report::table::Table;
use crate::report::verdict::{self, SPEED};

pub fn context_text(o: &context::Outcome) -> String {
    let mut out = String::from("context saves: ns per round trip, per thread (median of the samples)\n");
    let mut head = vec!["save".to_string(), "C".to_string()];
    head.extend(o.threads.iter().map(|t| format!("{t}t ns/op")));
    head.extend(["enters the kernel (system time, 1 thread)".to_string()]);
    let mut t = Table::new(head);
    let mut ops: Vec<_> = o.saves.iter().map(|c| c.op).collect();
    ops.dedup();
    for op in ops {
        let mut row = vec![op.name().to_string(), op.spelled().to_string()];
        for &th in &o.threads {
            let c = o.saves.iter().find(|c| c.op == op && c.threads == th);
            row.push(c.map(|c| format!("{:.1}", c.ns_per_op.median)).unwrap_or_else(|| "not measured".into()));
        }
        let one = o.saves.iter().find(|c| c.op == op).map(|c| kernel(&c.kernel));
        row.push(one.unwrap_or_else(|| "not measured".into()));
        t.row(row);
    }
    out.push_str(&t.render());
    out.push('\n');
    out.push_str(&lesson(o));
    out
}

/// A kernel-entry verdict with its evidence (also used by `calls`).
pub(super) fn kernel(k: &KernelEntry) -> String {
    match k {
        KernelEntry::Yes { system_fraction } => format!("yes ({:.0}% system time)", system_fraction * 100.0),
        KernelEntry::No { system_fraction } => format!("no ({:.1}% system time)", system_fraction * 100.0),
        KernelEntry::BelowResolution { cpu_s, system_s } => {
            format!("below resolution ({system_s:.3} s system of {cpu_s:.2} s CPU)")
        }
    }
}

fn lesson(o: &context::Outcome) -> String {
    let mut out = format!(
        "the Ruby lesson: an interpreter of {} operations, each through a protected call (one thread)\n",
        o.program_len
    );
    for c in &o.interpreter {
        out.push_str(&format!(
            "  {:<18} {:.2} ns per operation, system time {:.3} s of {:.2} s\n",
            c.protection.name(),
            c.ns_per_op.median,
            c.system_s,
            c.user_s + c.system_s
        ));
    }
    if let Some(why) = o.lesson.unsound() {
        out.push_str(&format!("  invalid: {why}\n"));
        return out;
    }
    if let Some(r) = &o.lesson.removing_heavy_save {
        out.push_str(&format!(
            "  removing the needless heavy save: {} — Ruby 1.8 gained 10% to nearly ×2 from removing its window flush\n",
            verdict::ratio_said(r, SPEED)
        ));
        let ns = |p: Protection| o.interpreter.iter().find(|c| c.protection == p).map(|c| c.ns_per_op.median);
        if let (Some(heavy), Some(cheap)) = (ns(Protection::Heavy), ns(Protection::Cheap)) {
            out.push_str(&format!(
                "  the needless save adds {:.1} ns per protected call; what it weighs depends on the work per call ({cheap:.1} ns per operation here, far more per Ruby method call: hence Ruby's smaller gain)\n",
                heavy - cheap
            ));
        }
    }
    if let Some(r) = &o.lesson.cheap_save_cost {
        out.push_str(&format!(
            "  no save at all against the cheapest correct save: {}\n",
            verdict::ratio_said(r, SPEED)
        ));
    }
    out
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
        value_label: "ns per round trip (median)".into(),
        whisker: "min–max".into(),
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

/// ns per round trip of every context save, per thread count.
fn context_metrics(c: &context::Outcome) -> Vec<Headline> {
    // A save enters the kernel in every cell where one cell of it was seen
    // to (another may have had too little system time to tell).
    let entering = |op| c.saves.iter().any(|s| s.op == op && matches!(s.kernel, context::KernelEntry::Yes { .. }));
    c.saves
        .iter()
        .map(|s| {
            let samples = s.samples_s.iter().map(|t| t * 1e9 / s.ops_per_sample as f64).collect();
            let h = headline(
                "context.round_trip",
                &[("op", s.op.to_string()), ("threads", s.threads.to_string())],
                format!("context {}, {} thread(s)", s.op, s.threads),
                crate::report::headlines::Unit::ns_per("op"),
                samples,
                s.ns_per_op.median,
                false,
            )
            .core_bound();
            if entering(s.op) {
                h.enters_kernel()
            } else {
                h
            }
        })
        .collect()
}

/// Advice from `context`: the Ruby lesson's verdict, whatever it is
/// (invalid where its references break what holds on every CPU).
fn context_advice(c: &context::Outcome) -> Vec<String> {
    let Some(r) = &c.lesson.removing_heavy_save else { return Vec::new() };
    let subject = "Removing a needless save of the signal mask (sigsetjmp(env, 1) where __builtin_setjmp would do) \
                   from this interpreter's protected call";
    if let Some(why) = c.lesson.unsound() {
        return vec![format!("{subject}: invalid: {why}.")];
    }
    let kernel: Vec<&str> = c
        .saves
        .iter()
        .filter(|s| s.threads == 1 && matches!(s.kernel, context::KernelEntry::Yes { .. }))
        .map(|s| s.op.name())
        .collect();
    let then = format!(
        "save the mask only where a signal handler longjmps out; saves that enter the kernel here: {}",
        if kernel.is_empty() { "none resolved".to_string() } else { kernel.join(", ") }
    );
    vec![verdict::line(subject, r, SPEED, Some(&then))]
}

impl super::Render for Outcome {
    fn text(&self, _doc: &Document) -> String {
        context_text(self)
    }
    fn plots(&self, _doc: &Document) -> Result<Vec<Plot>> {
        context_plot(self).map(|p| vec![p])
    }
    fn metrics(&self, _doc: &Document) -> Vec<Headline> {
        context_metrics(self)
    }
    fn advice(&self, _doc: &Document) -> Vec<String> {
        context_advice(self)
    }
    /// The Ruby lesson's two ratios.
    fn paired(&self, _doc: &Document) -> Vec<super::PairedRatio> {
        let lesson = [
            ("context.removing_heavy_save", "heavy save / cheapest save, interpreter", &self.lesson.removing_heavy_save),
            ("context.cheap_save_cost", "cheapest save / no save, interpreter", &self.lesson.cheap_save_cost),
        ];
        lesson
            .into_iter()
            .filter_map(|(key, name, r)| {
                Some(super::PairedRatio { key: key.into(), name: name.into(), ratio: r.as_ref()?.clone() })
            })
            .collect()
    }
    fn advice_row(&self, _advice: &str) -> Option<String> {
        Some("removing the needless heavy save".into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn recorded() -> context::Outcome {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/machines/amd-epyc-zen5-kvm-2vcpu/run-quick.json");
        let doc = crate::model::document_from_json(&std::fs::read_to_string(path).unwrap()).unwrap();
        doc.outcome::<context::Outcome>().unwrap().clone()
    }

    /// The recording's lesson holds up (each save no faster than the loop
    /// it adds to), so it is judged; a no-save cell slower than the
    /// cheapest save by more than the noise, or a heavy save faster than
    /// the cheapest, leaves the lesson unjudged and gives no advice.
    #[test]
    fn a_reference_that_breaks_the_order_of_the_saves_judges_nothing() {
        let o = recorded();
        assert_eq!(o.lesson.unsound(), None);
        assert!(lesson(&o).contains("removing the needless heavy save: "), "{}", lesson(&o));
        assert_eq!(context_advice(&o).len(), 1);
        let slow_reference = |median: f64, high: f64| {
            let mut o = o.clone();
            let r = o.lesson.cheap_save_cost.as_mut().unwrap();
            *r = crate::timing::Ratio::stated(12, median, median * 0.97, high, 0.997);
            o
        };
        let bad = slow_reference(0.80, 0.90);
        assert!(lesson(&bad).contains("invalid: the no-save reference ran slower than the cheapest save"), "{}", lesson(&bad));
        assert!(!lesson(&bad).contains("removing the needless"), "{}", lesson(&bad));
        assert!(context_advice(&bad)[0].contains(": invalid: the no-save reference"), "{:?}", context_advice(&bad));
        // Inside the noise allowance: judged.
        assert_eq!(slow_reference(0.93, 0.96).lesson.unsound(), None);
        let mut heavy_fast = o.clone();
        let r = heavy_fast.lesson.removing_heavy_save.as_mut().unwrap();
        *r = crate::timing::Ratio::stated(12, 0.5, 0.45, 0.6, 0.997);
        assert!(heavy_fast.lesson.unsound().unwrap().starts_with("the heavy save ran faster than the cheapest"));
        assert!(context_advice(&heavy_fast)[0].contains(": invalid: the heavy save ran faster"));
    }
}
