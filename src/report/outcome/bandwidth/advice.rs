//! The advice bandwidth's figures support: per single-thread prefetch
//! effect, what the whole distance sweep says of harm, then the sentence
//! the chosen distance supports. Each ratio is paired with the plain-simd
//! reference measured beside it: where the host put that reference at
//! other moments of the run moves absolute figures, not the verdict.

use crate::analysis::plateau::Plateau;
use crate::kernels::Hint;
use crate::memory::PagePolicy;
use crate::model::document::Document;
use crate::model::outcome::bandwidth::{self, Outcome};
use crate::report::text::ratio_text;
use crate::report::text::MIN_ADVISED_CHANGE;

/// Per single-thread prefetch effect: what the whole sweep says of harm,
/// then the sentence the chosen distance supports.
pub(super) fn bandwidth_advice(doc: &Document) -> Vec<String> {
    let Some(bw) = doc.outcome::<bandwidth::Outcome>() else { return Vec::new() };
    let mut out = Vec::new();
    for e in bw.prefetch_effects.iter().filter(|e| e.threads == 1) {
        let harm = harm_over_the_sweep(bw, e.pages, e.threads, e.hint);
        let said = effect_advice(bw, e, harm.is_some());
        out.extend(harm);
        out.extend(said);
    }
    out
}

/// The sentence one single-thread prefetch effect supports, if any;
/// `harmed`: the sweep already said that prefetching hurts (and no second
/// line says so again).
pub(super) fn effect_advice(bw: &Outcome, e: &bandwidth::PrefetchEffect, harmed: bool) -> Option<String> {
    use crate::report::verdict::{ratio_said, SPEED};
    use crate::timing::schedule::Call;
    let r = ratio_text(&e.confirmed);
    let subject = format!(
        "Software prefetch ({}) on streaming reads of {} on {} pages, D = {} against plain simd",
        e.hint, bw.size_bytes, e.pages, e.distance_elements
    );
    let v = e.confirmed.verdict();
    if let (Some(crate::analysis::second_look::SecondLook::Unstable { second, .. }), Call::Above | Call::Below) =
        (&e.second_look, v.call)
    {
        return Some(format!("{subject}: invalid, a second look disagrees: {r}, but {second}."));
    }
    let said = ratio_said(&e.confirmed, SPEED);
    Some(match v.call {
        Call::Above if v.beyond_threshold => helps_advice(bw, e),
        Call::Above => format!(
            "{subject}: {said}: a gain that may be under {:.0}% is no reason to add the instruction.",
            MIN_ADVISED_CHANGE * 100.0
        ),
        // The sweep's line already says it hurts, over every distance: one line.
        Call::Below if harmed => return None,
        Call::Below => format!("{subject}: {said}: leave streaming to the hardware prefetchers."),
        Call::NoChange if harmed => return None,
        Call::NoChange => format!(
            "{subject}: {said}: not worth an instruction, the hardware prefetchers keep up to within it."
        ),
        Call::NotResolved | Call::Invalid if harmed => return None,
        Call::NotResolved | Call::Invalid => format!("{subject}: {said}."),
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
        let ahead = l.ahead.as_ref().map(|a| format!(" adds {} over it", ratio_text(a))).unwrap_or_default();
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
            let ahead = l.ahead.as_ref().map(|a| format!(", and the distance adds {} over it", ratio_text(a))).unwrap_or_default();
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
        self.ahead.as_ref().is_some_and(|a| a.low >= 1.0 + MIN_ADVISED_CHANGE)
    }

    /// Prefetching the line being read gains on its own: its whole
    /// interval against simd lies above 1.
    pub(super) fn gains_alone(&self) -> bool {
        self.vs_simd.call() == crate::timing::schedule::Call::Above
    }

    /// What prefetching ahead adds over the line being read, for a report.
    pub(super) fn describe(&self) -> String {
        let ahead = self
            .ahead
            .as_ref()
            .map(|a| format!("; the distance chosen adds {} over it (odd repetitions, paired)", ratio_text(a)))
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
        vs_simd: line.ratio_to_simd.clone()?,
        ahead: crate::timing::Ratio::paired(&odd(&chosen.ratios_to_simd), &odd(&line.ratios_to_simd)),
    })
}

/// Advice from the whole distance sweep of one hint: where every distance
/// from some D on is slower than adjacent simd (each interval below ×1),
/// whatever the distance the verdict above was chosen at.
fn harm_over_the_sweep(bw: &Outcome, pages: PagePolicy, threads: usize, hint: Hint) -> Option<String> {
    let points: Vec<(u64, crate::timing::Ratio)> =
        curve(bw, pages, threads, hint).filter_map(|r| Some((r.variant.distance_elements?, r.ratio_to_simd.clone()?))).collect();
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

    fn recorded() -> crate::model::Document {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/machines/amd-epyc-zen5-kvm-2vcpu/run-quick.json");
        crate::model::document_from_json(&std::fs::read_to_string(path).unwrap()).unwrap()
    }

    use super::super::tests::bandwidth_mut as bandwidth;

    /// A plain simd read 20% faster on its own than beside the prefetches
    /// (the host moved between the two: 24.8 against 22.0 GB/s) moves no
    /// verdict: each ratio is paired
    /// with the reference measured beside it.
    #[test]
    fn a_plain_simd_read_elsewhere_in_the_run_moves_no_verdict() {
        let mut doc = recorded();
        let before = super::bandwidth_advice(&doc);
        assert!(!before.is_empty(), "{before:#?}");
        let b = bandwidth(&mut doc);
        let r = b.results.iter_mut().find(|r| r.variant.kernel == StreamShape::Simd && r.variant.threads == 1).unwrap();
        r.bytes_per_s.median *= 1.2;
        assert_eq!(super::bandwidth_advice(&doc), before);
    }
}
