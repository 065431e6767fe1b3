//! `context` as text: ns per save, which saves enter the kernel and the
//! evidence, and the Ruby lesson beside Ruby's figures.

use super::super::table::Table;
use crate::kernels::context::Protection;
use crate::model::outcome::context::{self, KernelEntry};
use crate::timing::schedule::Direction;

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
    if let Some(r) = &o.lesson.removing_heavy_save {
        let verdict = match r.direction() {
            Direction::Above => format!("removing the needless heavy save makes it ×{:.2} faster", r.median),
            Direction::Below => format!("removing the heavy save made it slower (×{:.2})", r.median),
            _ => "removing the heavy save changes nothing beyond the noise".into(),
        };
        out.push_str(&format!(
            "  {verdict} [×{:.2}, ×{:.2}] — Ruby 1.8 gained 10% to nearly ×2 from removing its window flush\n",
            r.low, r.high
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
            "  the cheapest correct save costs ×{:.2} [×{:.2}, ×{:.2}] over no save at all\n",
            r.median, r.low, r.high
        ));
    }
    out
}
