//! From the measured variants to the outcome's claims: the headline per
//! policy and thread count, the plateau of each prefetch-distance curve
//! within the measured noise, and each prefetch effect chosen on even
//! repetitions and confirmed on the odd ones.

use super::*;
use crate::analysis::second_look::SecondLook;

/// Bandwidth of each sample (one per repetition).
fn per_rep_bw(r: &VariantResult) -> Vec<f64> {
    r.samples_s.iter().map(|s| r.bytes_per_sample as f64 / s).collect()
}

/// Per policy and thread count: plain `simd` as the headline (the median
/// of the read array's rounds beside fragmented memory where those were
/// read, the later and longer stretch, over their steady stretch), and the
/// best variant chosen on even repetitions, reported on the odd ones.
pub(super) fn headlines(results: &[VariantResult], frame_sets: &[FrameSets]) -> Vec<Headline> {
    let mut keys: Vec<(PagePolicy, usize)> = results.iter().map(|r| (r.variant.pages, r.variant.threads)).collect();
    keys.sort();
    keys.dedup();
    let scores: Vec<Vec<f64>> = results.iter().map(per_rep_bw).collect();
    keys.into_iter()
        .filter_map(|(pages, threads)| {
            let of = |r: &VariantResult| r.variant.pages == pages && r.variant.threads == threads && r.checksum_ok;
            let simd = results.iter().find(|r| of(r) && r.variant.kernel == StreamShape::Simd)?;
            // The best read variant: a write kernel moves other bytes.
            let candidates: Vec<usize> =
                (0..results.len()).filter(|&i| of(&results[i]) && !results[i].variant.kernel.writes()).collect();
            let best = schedule::holdout_best(&scores, &candidates);
            Some(Headline {
                pages,
                threads,
                simd_bytes_per_s: frame_sets
                    .iter()
                    .find(|f| f.pages == pages && f.threads == threads)
                    .and_then(|f| Summary::steady_of(&f.round_medians_bytes_per_s))
                    .map(|s| s.median)
                    .unwrap_or(simd.bytes_per_s.median),
                best: best.as_ref().map_or_else(|| "not measured".into(), |b| results[b.chosen].variant.label()),
                best_holdout_bytes_per_s: best
                    .and_then(|b| crate::timing::stats::median(&b.confirming))
                    .unwrap_or(f64::NAN),
            })
        })
        .collect()
}

fn curve(results: &[VariantResult], pages: PagePolicy, threads: usize, hint: Hint) -> Vec<usize> {
    let mut c: Vec<usize> = (0..results.len())
        .filter(|&i| {
            let v = &results[i].variant;
            v.pages == pages && v.threads == threads && v.hint == Some(hint)
        })
        .collect();
    c.sort_by_key(|&i| results[i].variant.distance_elements);
    c
}

fn curve_keys(results: &[VariantResult]) -> Vec<(PagePolicy, usize, Hint)> {
    let mut keys: Vec<_> =
        results.iter().filter_map(|r| r.variant.hint.map(|h| (r.variant.pages, r.variant.threads, h))).collect();
    keys.sort();
    keys.dedup();
    keys
}

/// The best plateau of each prefetch-distance curve, within the measured
/// noise (at least 1%), or "no plateau".
pub(super) fn plateaus(results: &[VariantResult]) -> Vec<Plateau> {
    curve_keys(results)
        .into_iter()
        .map(|(pages, threads, hint)| {
            let idx = curve(results, pages, threads, hint);
            let values: Vec<Vec<f64>> = idx.iter().map(|&i| per_rep_bw(&results[i])).collect();
            let points: Vec<plateau::CurvePoint> = idx
                .iter()
                .zip(&values)
                .map(|(&i, v)| plateau::CurvePoint { x: results[i].variant.distance_elements.unwrap_or(0), values: v })
                .collect();
            Plateau { pages, threads, hint, plateau: plateau::best(&points, 0.01) }
        })
        .collect()
}

/// Per curve: the distance with the best ratio to adjacent `simd` on the
/// even repetitions (inside the plateau when there is one), and its ratio
/// on the odd repetitions, which did not choose it.
pub(super) fn prefetch_effects(results: &[VariantResult], plateaus: &[Plateau]) -> Vec<PrefetchEffect> {
    curve_keys(results)
        .into_iter()
        .filter_map(|(pages, threads, hint)| {
            let span = plateaus.iter().find(|p| p.pages == pages && p.threads == threads && p.hint == hint);
            let inside = |d: u64| match span.map(|p| &p.plateau) {
                Some(plateau::Plateau::Found { start, end, .. }) => (*start..=*end).contains(&d),
                _ => true,
            };
            let idx: Vec<usize> = curve(results, pages, threads, hint)
                .into_iter()
                .filter(|&i| inside(results[i].variant.distance_elements.unwrap_or(0)))
                .collect();
            let ratios: Vec<Vec<f64>> = results.iter().map(ratio_per_rep).collect();
            let pick = schedule::holdout_best(&ratios, &idx)?;
            let confirmed = Ratio::of(&pick.confirming)?;
            let verdict = Effect::of(&confirmed);
            let plateau_from = match span.map(|p| &p.plateau) {
                Some(plateau::Plateau::Found { start, .. }) => Some(*start),
                _ => None,
            };
            let others: Vec<usize> = idx.iter().copied().filter(|&i| i != pick.chosen).collect();
            let second_look = plateau_from.and_then(|_| plateau_second_look(results, &ratios, &others, verdict));
            Some(PrefetchEffect {
                pages,
                threads,
                hint,
                distance_elements: results[pick.chosen].variant.distance_elements.unwrap_or(0),
                verdict,
                confirmed,
                second_look,
                plateau_from,
            })
        })
        .collect()
}

/// Whether every other distance of the plateau points the way the verdict
/// does on the odd repetitions (the ones that did not choose it).
fn plateau_second_look(
    results: &[VariantResult],
    ratios: &[Vec<f64>],
    others: &[usize],
    verdict: Effect,
) -> Option<SecondLook> {
    let side = |m: f64| if m > 1.0 { Effect::Helps } else { Effect::Hurts };
    if !matches!(verdict, Effect::Helps | Effect::Hurts) || others.is_empty() {
        return None;
    }
    let word = |e: Effect| if e == Effect::Helps { "faster" } else { "slower" };
    let odd = |i: usize| crate::timing::stats::median(&crate::analysis::second_look::half(&ratios[i], 1));
    let first = format!("{} at the distance chosen", word(verdict));
    for &i in others {
        let m = odd(i)?;
        if side(m) != verdict {
            let d = results[i].variant.distance_elements.unwrap_or(0);
            return Some(SecondLook::Unstable {
                first,
                second: format!("{} at D = {d} in the same plateau (×{m:.3})", word(side(m))),
            });
        }
    }
    Some(SecondLook::Stable {
        first: first.clone(),
        second: format!("{} at every other distance of the plateau", word(verdict)),
    })
}

/// A variant's bandwidth over adjacent `simd`'s, per repetition.
fn ratio_per_rep(r: &VariantResult) -> Vec<f64> {
    r.ratios_to_simd.clone()
}
