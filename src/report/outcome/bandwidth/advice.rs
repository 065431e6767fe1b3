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
    let beside: Vec<f64> = bw
        .results
        .iter()
        .filter(|r| same(&r.variant) && r.variant.hint == Some(e.hint))
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
    let plateau =
        bw.plateaus.iter().find(|p| p.pages == e.pages && p.threads == e.threads && p.hint == e.hint).map(|p| &p.plateau);
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
        // The point chosen says nothing; the sweep may have said it hurts.
        return (!harmed).then(|| format!(
            "Software prefetch ({}) gives streaming reads of {} on {} pages no change beyond the noise or above {:.0}%, {r}: the hardware prefetchers already keep up.",
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
    let chosen = match e.plateau_from {
        Some(from) if from < 8 => format!("D = {from}..{} alike", e.distance_elements),
        _ => format!("D = {}", e.distance_elements),
    };
    let size = bw.size_bytes;
    let at_the_line = at_the_line_being_read(bw, e)
        .map(|d0| format!(" At D = 0 (the line being read) it already reads {}: that part is the instruction's, not the distance's.", ratio_text(&d0)))
        .unwrap_or_default();
    Some(match (e.verdict, plateau) {
        // Advise no distance from a gain less than a line ahead.
        (Effect::Helps, _) if e.gain_is_the_instructions() => format!(
            "A prefetch ({}) of the line being read ({chosen}) read faster than plain simd over {size} on {} pages, {r}: \
             the instruction, not prefetching ahead, made this difference; it is no reason to prefetch.",
            e.hint, e.pages
        ),
        (Effect::Helps, Some(Plateau::Found { start, end, .. })) => format!(
            "Software prefetch ({}) helps streaming reads of {size} on {} pages, {r}: prefetch {start}..{end} elements ({}..{} bytes) ahead{}.{at_the_line}",
            e.hint,
            e.pages,
            start * 8,
            end * 8,
            if Some(*end) == longest_distance(bw, e) { ", or further: the sweep ends there" } else { "" }
        ),
        (Effect::Helps, _) => format!(
            "Software prefetch ({}) helps streaming reads of {size} on {} pages, {r} at D = {}, but the distance curve has no plateau: the best distance is not well defined.{at_the_line}",
            e.hint, e.pages, e.distance_elements
        ),
        // The sweep's line already says it hurts, over every distance: one line.
        (Effect::Hurts, _) if harmed => return None,
        (Effect::Hurts, _) => format!(
            "Software prefetch ({}) slows streaming reads of {size} on {} pages, {r}: leave streaming to the hardware prefetchers.",
            e.hint, e.pages
        ),
        (Effect::WithinNoise | Effect::TooFewPairs, _) => return None,
    })
}

/// The longest distance the sweep measured for the pages, threads and
/// hint of `e`: a plateau that reaches it may go on beyond.
fn longest_distance(bw: &Outcome, e: &bandwidth::PrefetchEffect) -> Option<u64> {
    bw.results
        .iter()
        .filter(|r| r.variant.pages == e.pages && r.variant.threads == e.threads && r.variant.hint == Some(e.hint))
        .filter_map(|r| r.variant.distance_elements)
        .max()
}

/// The sweep's ratio to adjacent simd at D = 0 (a prefetch of the line
/// being read) for the pages, threads and hint of `e`, when its whole
/// interval lies above 1: a gain the instruction gives without prefetching
/// ahead, which a gain at a distance also holds.
fn at_the_line_being_read(bw: &Outcome, e: &bandwidth::PrefetchEffect) -> Option<crate::timing::Ratio> {
    use crate::timing::schedule::Direction;
    bw.results
        .iter()
        .filter(|r| r.variant.pages == e.pages && r.variant.threads == e.threads && r.variant.hint == Some(e.hint))
        .find(|r| r.variant.distance_elements == Some(0))
        .and_then(|r| r.ratio_to_simd)
        .filter(|d0| d0.direction() == Direction::Above)
}

/// Advice from the whole distance sweep of one hint: where every distance
/// from some D on is slower than adjacent simd (each interval below ×1),
/// whatever the distance the verdict above was chosen at.
fn harm_over_the_sweep(bw: &Outcome, pages: PagePolicy, threads: usize, hint: Hint) -> Option<String> {
    let points: Vec<(u64, crate::timing::Ratio)> = bw
        .results
        .iter()
        .filter(|r| r.variant.pages == pages && r.variant.threads == threads && r.variant.hint == Some(hint))
        .filter_map(|r| Some((r.variant.distance_elements?, r.ratio_to_simd?)))
        .collect();
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

    fn bandwidth(doc: &mut crate::model::Document) -> &mut Outcome {
        doc.experiments
            .iter_mut()
            .find_map(|r| match r.outcome.as_mut() {
                Some(crate::model::outcome::Outcome::Bandwidth(b)) => Some(b),
                _ => None,
            })
            .unwrap()
    }

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
