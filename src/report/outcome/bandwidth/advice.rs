//! The advice bandwidth's figures support: per single-thread prefetch
//! effect, what the whole distance sweep says of harm, then the sentence
//! the chosen distance supports — each judged only against a plain-simd
//! reference that agrees with the run's own simd figure.

use crate::analysis::plateau::Plateau;
use crate::kernels::Hint;
use crate::memory::PagePolicy;
use crate::model::document::Document;
use crate::model::outcome::bandwidth::{self, Effect, Outcome};
use crate::report::text::ratio_text;
use crate::report::text::MIN_ADVISED_CHANGE;

/// Per single-thread prefetch effect: what the whole sweep says of harm,
/// then the sentence the chosen distance supports.
pub(super) fn bandwidth_advice(doc: &Document) -> Vec<String> {
    let Some(bw) = doc.outcome::<bandwidth::Outcome>() else { return Vec::new() };
    let probe = doc.machine.measured_levels.as_ref().and_then(|m| {
        m.read_rates.iter().find(|r| r.size_bytes == bw.size_bytes).map(|r| r.bytes_per_s)
    });
    let mut out = Vec::new();
    for e in bw.prefetch_effects.iter().filter(|e| e.threads == 1) {
        if let Some(why) = reference_disagrees(bw, e, probe) {
            out.push(format!(
                "Software prefetch ({}) on streaming reads of {} on {} pages: not judged, {why}: the reference every \
                 ratio is taken against is off, so none is judged.",
                e.hint, bw.size_bytes, e.pages
            ));
            continue;
        }
        let harm = harm_over_the_sweep(bw, e.pages, e.threads, e.hint);
        let said = effect_advice(bw, e, harm.is_some());
        out.extend(harm);
        out.extend(said);
    }
    out
}

/// How far the plain-simd reference may stray from the run's own figures.
const REFERENCE_AGREES: f64 = 0.10;

/// Why the plain-simd reference of one prefetch curve cannot carry a
/// verdict, if it cannot. Read beside the prefetches (each sample's
/// bandwidth over its ratio) it must agree within 10% with the run's own
/// plain simd of the same pages and threads; and that simd, one thread,
/// may not outrun by more than 10% the run's probe reading the same size
/// (`probe_bps`): a second read of the same bytes in the same run.
fn reference_disagrees(bw: &Outcome, e: &bandwidth::PrefetchEffect, probe_bps: Option<f64>) -> Option<String> {
    use crate::kernels::StreamShape;
    let same = |v: &bandwidth::Variant| v.pages == e.pages && v.threads == e.threads;
    let plain = bw.results.iter().find(|r| same(&r.variant) && r.variant.kernel == StreamShape::Simd)?;
    let plain_bps = plain.bytes_per_s.median;
    let beside: Vec<f64> = curve(bw, e.pages, e.threads, e.hint)
        .flat_map(|r| r.samples_s.iter().zip(&r.ratios_to_simd).map(|(s, q)| r.bytes_per_sample as f64 / s / q))
        .collect();
    let beside_bps = crate::timing::stats::median(&beside)?;
    let gb = |b: f64| format!("{:.2} GB/s", b / 1e9);
    if (beside_bps / plain_bps - 1.0).abs() > REFERENCE_AGREES {
        return Some(format!(
            "its plain-simd reference read {} beside the prefetches and {} on its own in the same run",
            gb(beside_bps),
            gb(plain_bps)
        ));
    }
    let probe = probe_bps.filter(|p| e.threads == 1 && plain_bps > p * (1.0 + REFERENCE_AGREES))?;
    Some(format!(
        "plain simd read {} from {}, faster than the run's probe read the same size ({})",
        gb(plain_bps),
        bw.size_bytes,
        gb(probe)
    ))
}

/// The sentence one single-thread prefetch effect supports, if any;
/// `harmed`: the sweep already said that prefetching hurts (and no second
/// line says so again).
pub(super) fn effect_advice(bw: &Outcome, e: &bandwidth::PrefetchEffect, harmed: bool) -> Option<String> {
    let r = ratio_text(&e.confirmed);
    // Three answers, each from where the whole interval lies: inside ±5%
    // (no change worth an instruction), wholly beyond 5% (it helps or it
    // hurts), or across the 5% line: not resolved. A median on either
    // side of 5% with an interval across it came and went between runs.
    let m = MIN_ADVISED_CHANGE;
    if e.verdict != Effect::TooFewPairs && !e.confirmed.beyond(m) {
        if !e.confirmed.inside(m) {
            return (!harmed).then(|| format!(
                "Software prefetch ({}) on streaming reads of {} on {} pages: not resolved, {r}: the interval holds changes of more than {:.0}% and of less, so it supports no verdict.",
                e.hint,
                bw.size_bytes,
                e.pages,
                m * 100.0
            ));
        }
        // The whole interval inside ±5%: whether or not it holds 1, the
        // change is too small to be worth an instruction (one sentence for
        // both, which a resolved 2% and an unresolved 1% share). The sweep
        // may have said it hurts.
        return (!harmed).then(|| format!(
            "Software prefetch ({}) changes streaming reads of {} on {} pages by no more than {:.0}%, {r}: not worth an instruction, the hardware prefetchers keep up to within it.",
            e.hint,
            bw.size_bytes,
            e.pages,
            m * 100.0
        ));
    }
    if let Some(crate::analysis::second_look::SecondLook::Unstable { second, .. }) = &e.second_look {
        return Some(format!(
            "Software prefetch ({}) on streaming reads of {} on {} pages: {r} at D = {}, but {second}: unstable, no advice.",
            e.hint, bw.size_bytes, e.pages, e.distance_elements
        ));
    }
    let size = bw.size_bytes;
    Some(match e.verdict {
        Effect::Helps => helps_advice(bw, e),
        // The sweep's line already says it hurts, over every distance: one line.
        Effect::Hurts if harmed => return None,
        Effect::Hurts => format!(
            "Software prefetch ({}) slows streaming reads of {size} on {} pages, {r}: leave streaming to the hardware prefetchers.",
            e.hint, e.pages
        ),
        Effect::WithinNoise | Effect::TooFewPairs => return None,
    })
}

/// The sentence a gain beyond 5% at the chosen distance supports. The
/// distance is advised only where prefetching ahead adds a gain beyond 5%
/// over prefetching the line being read, or where the line being read was
/// not measured and the plateau does not start there; a gain the line
/// being read already gives is the instruction's.
fn helps_advice(bw: &Outcome, e: &bandwidth::PrefetchEffect) -> String {
    let m = MIN_ADVISED_CHANGE;
    let (r, size, hint, pages) = (ratio_text(&e.confirmed), bw.size_bytes, e.hint, e.pages);
    let line = at_the_line_being_read(bw, e);
    let credit = credit(e, line.as_ref());
    if matches!(credit, Credit::WithinALine | Credit::Plateau) {
        let chosen = match e.plateau_from {
            Some(from) if from < 8 => format!("D = {from}..{} alike", e.distance_elements),
            _ => format!("D = {}", e.distance_elements),
        };
        return format!(
            "A prefetch ({hint}) of the line being read ({chosen}) read faster than plain simd over {size} on {pages} pages, {r}: \
             the instruction, not prefetching ahead, made this difference; it is no reason to prefetch."
        );
    }
    if let (Some(l), Credit::LineBeingRead) = (&line, credit) {
        let ahead = l.ahead.map(|a| format!(" adds {} over it", ratio_text(&a))).unwrap_or_default();
        return format!(
            "A prefetch ({hint}) of the line being read (D = {}) reads {} against plain simd over {size} on {pages} pages, \
             and prefetching ahead (D = {}, {r}){ahead}, no gain beyond {:.0}% that it resolves: a gain beyond it is \
             resolved for the instruction, not for the distance, and it is no reason to prefetch ahead.",
            l.distance,
            ratio_text(&l.vs_simd),
            e.distance_elements,
            m * 100.0
        );
    }
    let over_the_line = line
        .map(|l| {
            let ahead = l.ahead.map(|a| format!(", and the distance adds {} over it", ratio_text(&a))).unwrap_or_default();
            format!(" Prefetching the line being read (D = {}) reads {}{ahead}.", l.distance, ratio_text(&l.vs_simd))
        })
        .unwrap_or_default();
    let plateau =
        bw.plateaus.iter().find(|p| p.pages == e.pages && p.threads == e.threads && p.hint == e.hint).map(|p| &p.plateau);
    match plateau {
        // Paired, the distance adds a gain the plateau's bandwidths lumped
        // with the line being read: the distance chosen, no range.
        Some(Plateau::Found { start, .. }) if *start < 8 => format!(
            "Software prefetch ({hint}) helps streaming reads of {size} on {pages} pages, {r} at D = {}; its plateau reaches the line being read, so no range of distances is placed.{over_the_line}",
            e.distance_elements
        ),
        Some(Plateau::Found { start, end, tolerance, .. }) if *tolerance <= m => format!(
            "Software prefetch ({hint}) helps streaming reads of {size} on {pages} pages, {r}: prefetch {start}..{end} elements ({}..{} bytes) ahead{}.{over_the_line}",
            start * 8,
            end * 8,
            if Some(*end) == longest_distance(bw, e) {
                format!("; the sweep ended at D = {end}, and longer distances were not measured")
            } else {
                String::new()
            }
        ),
        Some(Plateau::Found { tolerance, .. }) => format!(
            "Software prefetch ({hint}) helps streaming reads of {size} on {pages} pages, {r} at D = {}, but the distance curve's noise ({:.1}%) is beyond {:.0}%: no range of distances is placed.{over_the_line}",
            e.distance_elements,
            tolerance * 100.0,
            m * 100.0
        ),
        _ => format!(
            "Software prefetch ({hint}) helps streaming reads of {size} on {pages} pages, {r} at D = {}, but the distance curve has no plateau: the best distance is not well defined.{over_the_line}",
            e.distance_elements
        ),
    }
}

/// The distance sweep of one hint on one page policy and thread count.
pub(super) fn curve(bw: &Outcome, pages: PagePolicy, threads: usize, hint: Hint) -> impl Iterator<Item = &bandwidth::VariantResult> {
    bw.results.iter().filter(move |r| r.variant.pages == pages && r.variant.threads == threads && r.variant.hint == Some(hint))
}

/// The longest distance the sweep measured for the pages, threads and
/// hint of `e`: a plateau that reaches it may go on beyond.
fn longest_distance(bw: &Outcome, e: &bandwidth::PrefetchEffect) -> Option<u64> {
    curve(bw, e.pages, e.threads, e.hint).filter_map(|r| r.variant.distance_elements).max()
}

/// What a gain at the chosen distance is credited to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Credit {
    /// The distance chosen is within the line being read.
    WithinALine,
    /// Prefetching the line being read already gains, and the distance
    /// adds no gain beyond 5% over it, paired.
    LineBeingRead,
    /// Where the line being read shows no gain of its own, or was not
    /// measured: the plateau starts within the line being read, and the
    /// distance adds nothing beyond 5% that was measured.
    Plateau,
    /// The distance.
    Distance,
}

/// The one rule both the advice and the report's effect line follow.
pub(super) fn credit(e: &bandwidth::PrefetchEffect, line: Option<&AtTheLine>) -> Credit {
    let adds = line.is_some_and(AtTheLine::distance_adds);
    match line {
        _ if e.within_a_line() => Credit::WithinALine,
        Some(l) if !adds && l.gains_alone() => Credit::LineBeingRead,
        _ if !adds && e.gain_is_the_instructions() => Credit::Plateau,
        _ => Credit::Distance,
    }
}

/// Prefetching the line being read, beside the distance chosen.
pub(super) struct AtTheLine {
    /// The shortest distance measured within a line (D < 8).
    distance: u64,
    /// Its ratio to adjacent simd, over every repetition.
    vs_simd: crate::timing::Ratio,
    /// What the chosen distance adds over it: per odd repetition (those
    /// that did not choose the distance), the chosen distance's ratio to
    /// simd over this one's.
    ahead: Option<crate::timing::Ratio>,
}

impl AtTheLine {
    /// Prefetching ahead adds a gain beyond 5% over the line being read:
    /// the whole paired interval lies beyond it.
    pub(super) fn distance_adds(&self) -> bool {
        self.ahead.is_some_and(|a| a.low >= 1.0 + MIN_ADVISED_CHANGE)
    }

    /// Prefetching the line being read gains on its own: its whole
    /// interval against simd lies above 1.
    pub(super) fn gains_alone(&self) -> bool {
        self.vs_simd.direction() == crate::timing::schedule::Direction::Above
    }

    /// What prefetching ahead adds over the line being read, for a report.
    pub(super) fn describe(&self) -> String {
        let ahead = self
            .ahead
            .map(|a| format!("; the distance chosen adds {} over it (odd repetitions, paired)", ratio_text(&a)))
            .unwrap_or_default();
        format!("prefetching the line being read (D = {}) reads {} against simd{ahead}", self.distance, ratio_text(&self.vs_simd))
    }
}

/// The sweep's point within the line being read for the pages, threads
/// and hint of `e`, if one was measured, and the chosen distance against it.
pub(super) fn at_the_line_being_read(bw: &Outcome, e: &bandwidth::PrefetchEffect) -> Option<AtTheLine> {
    let sweep = || curve(bw, e.pages, e.threads, e.hint);
    let line = sweep().filter(|r| r.variant.distance_elements.is_some_and(|d| d < 8)).min_by_key(|r| r.variant.distance_elements)?;
    let chosen = sweep().find(|r| r.variant.distance_elements == Some(e.distance_elements))?;
    let odd = |v: &[f64]| crate::analysis::second_look::half(v, 1);
    Some(AtTheLine {
        distance: line.variant.distance_elements.unwrap_or(0),
        vs_simd: line.ratio_to_simd?,
        ahead: crate::timing::Ratio::paired(&odd(&chosen.ratios_to_simd), &odd(&line.ratios_to_simd)),
    })
}

/// Advice from the whole distance sweep of one hint: where every distance
/// from some D on is slower than adjacent simd (each interval below ×1),
/// whatever the distance the verdict above was chosen at.
fn harm_over_the_sweep(bw: &Outcome, pages: PagePolicy, threads: usize, hint: Hint) -> Option<String> {
    let points: Vec<(u64, crate::timing::Ratio)> =
        curve(bw, pages, threads, hint).filter_map(|r| Some((r.variant.distance_elements?, r.ratio_to_simd?))).collect();
    let s = crate::analysis::sweep::below_from(&points)?;
    Some(format!(
        "Software prefetch ({hint}) slows streaming reads of {} on {pages} pages, {threads} thread(s), at every distance from D = {} on ({} distances): {:.0}% to {:.0}% against plain simd, each interval below ×1: do not use it for streams of that size here.",
        bw.size_bytes,
        s.from,
        s.points,
        (s.highest - 1.0) * 100.0,
        (s.lowest - 1.0) * 100.0
    ))
}


#[cfg(test)]
mod tests {
    use crate::kernels::StreamShape;
    use crate::model::outcome::bandwidth::Outcome;

    fn recorded() -> crate::model::Document {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/machines/amd-epyc-zen5-kvm-2vcpu/run-quick.json");
        crate::model::document_from_json(&std::fs::read_to_string(path).unwrap()).unwrap()
    }

    use super::super::tests::bandwidth_mut as bandwidth;

    /// The recording's references agree with its simd and its probe: its
    /// verdicts stand. A plain simd 20% faster than the reference beside
    /// the prefetches (Intel's run 1 of 2026-11-24: 24.8 against 22.0
    /// GB/s), or than the probe's read of the same size, judges nothing.
    #[test]
    fn a_plain_simd_reference_off_from_the_runs_own_reads_judges_nothing() {
        let mut doc = recorded();
        let said = super::bandwidth_advice(&doc);
        assert!(!said.is_empty() && said.iter().all(|l| !l.contains("not judged")), "{said:#?}");
        let plain_of_one_thread =
            |b: &mut Outcome| b.results.iter_mut().find(|r| r.variant.kernel == StreamShape::Simd && r.variant.threads == 1).unwrap().bytes_per_s.median;
        let plain = plain_of_one_thread(bandwidth(&mut doc));
        let set_plain = |doc: &mut crate::model::Document, bps: f64| {
            let b = bandwidth(doc);
            let r = b.results.iter_mut().find(|r| r.variant.kernel == StreamShape::Simd && r.variant.threads == 1).unwrap();
            r.bytes_per_s.median = bps;
        };
        set_plain(&mut doc, plain * 1.2);
        let said = super::bandwidth_advice(&doc);
        assert!(said.iter().any(|l| l.contains("not judged, its plain-simd reference read")), "{said:#?}");
        assert!(said.iter().all(|l| l.contains("not judged")), "no other verdict: {said:#?}");
        // The reference agrees again; the probe read the same size 20% slower.
        set_plain(&mut doc, plain);
        let size = bandwidth(&mut doc).size_bytes;
        let levels = doc.machine.measured_levels.as_mut().unwrap();
        levels.read_rates.retain(|r| r.size_bytes != size);
        levels.read_rates.push(crate::machine::levels::ReadRate { size_bytes: size, bytes_per_s: plain / 1.2 });
        let said = super::bandwidth_advice(&doc);
        assert!(said.iter().any(|l| l.contains("faster than the run's probe read the same size")), "{said:#?}");
    }
}
