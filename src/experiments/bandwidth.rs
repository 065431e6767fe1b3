//! `memperf bandwidth`: read bandwidth of one core and of all cores, for
//! each loop shape, and how much software prefetch at distance D helps
//! (after J. McCalpin, "Optimizing AMD Opteron Memory Bandwidth", 2010).
//!
//! Method: one f64 array per page policy, at least 4× the last-level cache,
//! every page touched before timing. Each thread streams its own slice,
//! pinned, started behind a barrier. All variants (policy × threads ×
//! kernel × hint × distance) are measured interleaved, repetition by
//! repetition, so drift of the shared machine hits them alike; the effect
//! of prefetch is the ratio to `simd` within each repetition. Every sample's
//! checksum is compared with the closed-form sum of the array.

pub use crate::model::outcome::bandwidth::*;
use super::{Context, Experiment};
use crate::error::{Error, Result};
use crate::kernels::{pattern_sum, pattern_value, stream_kernel, Hint, StreamArg, StreamKernel, StreamShape};
use crate::memory::{Backing, PagePolicy, Region};
use crate::model::Caution;
use crate::timing::{stats, Summary, Team};
use crate::units::{Bytes, Sweep, GIB};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Params {
    pub kernels: Vec<StreamShape>,
    pub pages: Vec<PagePolicy>,
    pub threads: Vec<usize>,
    pub size_bytes: Bytes,
    /// Prefetch distances, in 8-byte elements.
    pub distance_elements: Sweep,
    pub hints: Vec<Hint>,
    /// Samples per variant (after one untimed warm-up pass).
    pub repetitions: usize,
    /// Each sample runs enough passes to last at least this long.
    pub min_sample_s: f64,
    /// A variant whose bandwidth CV exceeds this is flagged noisy.
    pub noise_cv: f64,
    /// Relative drop from the best that still counts as the best plateau.
    pub plateau_tolerance: f64,
}

/// Parameter sets the suite picks from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Preset {
    Quick,
    Default,
    Full,
}

impl Params {
    pub fn preset(preset: Preset, machine: &crate::machine::Fingerprint) -> Params {
        let llc = machine.llc_bytes().unwrap_or(Bytes(32 << 20)).0;
        let all = crate::timing::team::allowed_cpus().len().max(1);
        let mut threads = vec![1, all];
        threads.dedup();
        let (size, distances, hints, reps) = match preset {
            Preset::Quick => (llc * 4, Sweep { start: 0, end: 1024, step: 128 }, vec![Hint::T0, Hint::Nta], 3),
            Preset::Default => {
                ((8 * llc).max(GIB), Sweep { start: 0, end: 1024, step: 32 }, vec![Hint::T0, Hint::Nta], 5)
            }
            Preset::Full => ((8 * llc).max(GIB), Sweep { start: 0, end: 1024, step: 32 }, Hint::ALL.to_vec(), 7),
        };
        Params {
            kernels: StreamShape::ALL.to_vec(),
            pages: vec![PagePolicy::Small],
            threads,
            size_bytes: Bytes(size.max(64 << 20)),
            distance_elements: distances,
            hints,
            repetitions: reps,
            min_sample_s: 0.02,
            noise_cv: 0.05,
            plateau_tolerance: 0.02,
        }
    }
}

pub struct Bandwidth;

impl Experiment for Bandwidth {
    const NAME: &'static str = "bandwidth";
    type Params = Params;
    type Outcome = Outcome;

    fn run(p: &Params, ctx: &Context) -> Result<Outcome> {
        run(p, ctx)
    }
}

fn check(p: &Params) -> Result<()> {
    if p.kernels.is_empty() || p.pages.is_empty() || p.threads.is_empty() {
        return Err(Error::usage("--kernel, --pages and --threads each need at least one value"));
    }
    if p.kernels.contains(&StreamShape::SimdPrefetch) && p.hints.is_empty() {
        return Err(Error::usage("simd-prefetch needs at least one --hint"));
    }
    if p.repetitions == 0 {
        return Err(Error::usage("--repetitions must be at least 1"));
    }
    if p.size_bytes.0 < 4096 {
        return Err(Error::usage(format!("--size {} is below one page", p.size_bytes)));
    }
    Ok(())
}

/// Every variant, in the order each repetition measures them.
pub fn variants(p: &Params) -> Vec<Variant> {
    let mut v = Vec::new();
    for &pages in &p.pages {
        for &threads in &p.threads {
            for &kernel in &p.kernels {
                let base = Variant { pages, threads, kernel, hint: None, distance_elements: None };
                if kernel != StreamShape::SimdPrefetch {
                    v.push(base);
                    continue;
                }
                for &hint in &p.hints {
                    for d in p.distance_elements.values() {
                        v.push(Variant { hint: Some(hint), distance_elements: Some(d), ..base.clone() });
                    }
                }
            }
        }
    }
    v
}

/// An array under one page policy, filled with the checksum pattern.
struct Array {
    region: Region,
    len: usize,
}

impl Array {
    fn new(policy: PagePolicy, size: Bytes) -> Result<Array> {
        let mut region = Region::new(policy, size)?;
        let a = region.as_mut_slice::<f64>();
        for (i, x) in a.iter_mut().enumerate() {
            *x = pattern_value(i);
        }
        let len = a.len();
        Ok(Array { region, len })
    }

    /// Per-thread slices, each a multiple of 64 elements (one AVX-512
    /// iteration); the last thread takes the remainder.
    fn slices(&self, threads: usize, distance: usize) -> Vec<StreamArg> {
        let per = (self.len / threads) / 64 * 64;
        let base = self.region.as_ptr() as *const f64;
        (0..threads)
            .map(|t| {
                let start = t * per;
                let len = if t + 1 == threads { self.len - start } else { per };
                // SAFETY: start + len <= self.len, inside the region.
                StreamArg { ptr: unsafe { base.add(start) }, len, distance }
            })
            .collect()
    }
}

fn run(p: &Params, ctx: &Context) -> Result<Outcome> {
    check(p)?;
    let teams: Vec<(usize, Team)> =
        p.threads.iter().map(|&t| Team::new(t).map(|team| (t, team))).collect::<Result<_>>()?;
    warn_preconditions(p, ctx);
    let arrays: Vec<(PagePolicy, Array)> =
        p.pages.iter().map(|&pol| Array::new(pol, p.size_bytes).map(|a| (pol, a))).collect::<Result<_>>()?;
    for (_, a) in &arrays {
        warn_coverage(a.region.backing(), ctx);
    }
    let len = arrays[0].1.len;
    let expected_pass = pattern_sum(0, len);
    let variants = variants(p);
    let kernels: Vec<(StreamKernel, String)> = variants
        .iter()
        .map(|v| stream_kernel(v.kernel, v.hint).map(|(k, info)| (k, info.isa)))
        .collect::<Result<_>>()?;
    let array_of = |pol: PagePolicy| &arrays.iter().find(|(p, _)| *p == pol).expect("allocated").1;
    let team_of = |t: usize| &teams.iter().find(|(n, _)| *n == t).expect("built").1;

    // Warm-up and calibration: one untimed pass per policy and thread count
    // with the fastest kernel sets the passes per sample.
    let (simd, _) = stream_kernel(StreamShape::Simd, None)?;
    let mut passes = std::collections::HashMap::new();
    for (pol, a) in &arrays {
        for (t, team) in &teams {
            let args = a.slices(*t, 0);
            // SAFETY: every slice lies inside the array.
            let run = team.run(ctx.clock, |i| unsafe { simd(1, &args[i]) });
            let secs = run.elapsed_ns as f64 * 1e-9;
            passes.insert((*pol, *t), ((p.min_sample_s / secs.max(1e-9)).ceil() as u64).max(1));
        }
    }

    ctx.progress.start("bandwidth", (p.repetitions * variants.len()) as u64);
    let mut samples: Vec<Vec<f64>> = vec![Vec::with_capacity(p.repetitions); variants.len()];
    let mut checks = vec![true; variants.len()];
    for _rep in 0..p.repetitions {
        for (i, v) in variants.iter().enumerate() {
            ctx.check_interrupt()?;
            let n = passes[&(v.pages, v.threads)];
            let args = array_of(v.pages).slices(v.threads, v.distance_elements.unwrap_or(0) as usize);
            let kernel = kernels[i].0;
            // SAFETY: every slice lies inside the array.
            let run = team_of(v.threads).run(ctx.clock, |t| unsafe { kernel(n, &args[t]) });
            let sum: f64 = run.results.iter().sum();
            checks[i] &= sum == expected_pass * n as f64;
            samples[i].push(run.elapsed_ns as f64 * 1e-9);
            ctx.progress.advance(1);
        }
    }

    let results: Vec<VariantResult> = variants
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let n = passes[&(v.pages, v.threads)];
            let bytes = len as u64 * 8 * n;
            let bw: Vec<f64> = samples[i].iter().map(|s| bytes as f64 / s).collect();
            VariantResult {
                variant: v.clone(),
                isa: kernels[i].1.clone(),
                passes: n,
                bytes_per_sample: bytes,
                samples_s: samples[i].clone(),
                bytes_per_s: Summary::of(&bw).expect("at least one finite sample"),
                checksum_ok: checks[i],
            }
        })
        .collect();
    warn_results(&results, p, ctx);
    let plateaus = plateaus(&results, p.plateau_tolerance);
    let outcome = Outcome {
        isa: kernels.iter().map(|k| k.1.clone()).find(|i| i != "scalar").unwrap_or_else(|| "scalar".into()),
        size_bytes: Bytes(len as u64 * 8),
        regions: arrays.iter().map(|(_, a)| a.region.backing().clone()).collect(),
        cpus: teams.last().map(|(_, t)| t.cpus().to_vec()).unwrap_or_default(),
        headlines: headlines(&results),
        prefetch_effects: prefetch_effects(&results, &plateaus),
        plateaus,
        valid: checks.iter().all(|&c| c),
        results,
    };
    Ok(outcome)
}

fn warn_preconditions(p: &Params, ctx: &Context) {
    if let Some(llc) = ctx.machine.llc_bytes() {
        if p.size_bytes.0 < 4 * llc.0 {
            ctx.warn(Caution::WorkingSetInCache { size: p.size_bytes, llc });
        }
    }
}

fn warn_coverage(b: &Backing, ctx: &Context) {
    if b.requested == PagePolicy::Thp {
        if let Some(f) = b.huge_fraction.filter(|&f| f < 0.9) {
            ctx.warn(Caution::ThpPartial { what: "array", fraction: f });
        }
    }
}

fn warn_results(results: &[VariantResult], p: &Params, ctx: &Context) {
    let noisy: Vec<&VariantResult> = results.iter().filter(|r| r.bytes_per_s.cv > p.noise_cv).collect();
    if !noisy.is_empty() {
        let worst = noisy.iter().map(|r| r.bytes_per_s.cv).fold(0.0, f64::max);
        ctx.warn(Caution::Noisy { noisy: noisy.len(), total: results.len(), limit_cv: p.noise_cv, worst_cv: worst });
    }
    if results.iter().any(|r| !r.checksum_ok) {
        ctx.warn(Caution::Checksum { what: "bandwidth" });
    }
}

fn median_bw(r: &VariantResult) -> f64 {
    r.bytes_per_s.median
}

fn headlines(results: &[VariantResult]) -> Vec<Headline> {
    let mut keys: Vec<(PagePolicy, usize)> = results.iter().map(|r| (r.variant.pages, r.variant.threads)).collect();
    keys.dedup();
    keys.into_iter()
        .filter_map(|(pages, threads)| {
            let best = results
                .iter()
                .filter(|r| r.variant.pages == pages && r.variant.threads == threads && r.checksum_ok)
                .max_by(|a, b| median_bw(a).total_cmp(&median_bw(b)))?;
            Some(Headline { pages, threads, best: best.variant.label(), bytes_per_s: median_bw(best) })
        })
        .collect()
}

/// The best plateau of a curve of (distance, bandwidth) points sorted by
/// distance: of the contiguous runs whose values all stay within
/// `tolerance` of the maximum, the longest (a lone spike is not a plateau;
/// ties go to the higher median); its figure is the median over the run.
pub fn best_plateau(points: &[(u64, f64)], tolerance: f64) -> Option<(u64, u64, f64)> {
    let max = points.iter().map(|p| p.1).fold(f64::NEG_INFINITY, f64::max);
    let floor = max * (1.0 - tolerance);
    let mut best: Option<(usize, usize, f64)> = None;
    let mut i = 0;
    while i < points.len() {
        if points[i].1 < floor {
            i += 1;
            continue;
        }
        let start = i;
        while i + 1 < points.len() && points[i + 1].1 >= floor {
            i += 1;
        }
        let values: Vec<f64> = points[start..=i].iter().map(|p| p.1).collect();
        let med = stats::median(&values)?;
        let better = match best {
            None => true,
            Some((s, e, m)) => (i - start, med) > (e - s, m),
        };
        if better {
            best = Some((start, i, med));
        }
        i += 1;
    }
    best.map(|(s, e, m)| (points[s].0, points[e].0, m))
}

fn curve(results: &[VariantResult], pages: PagePolicy, threads: usize, hint: Hint) -> Vec<&VariantResult> {
    let mut c: Vec<&VariantResult> = results
        .iter()
        .filter(|r| r.variant.pages == pages && r.variant.threads == threads && r.variant.hint == Some(hint))
        .collect();
    c.sort_by_key(|r| r.variant.distance_elements);
    c
}

fn curve_keys(results: &[VariantResult]) -> Vec<(PagePolicy, usize, Hint)> {
    let mut keys: Vec<_> =
        results.iter().filter_map(|r| r.variant.hint.map(|h| (r.variant.pages, r.variant.threads, h))).collect();
    keys.sort();
    keys.dedup();
    keys
}

fn plateaus(results: &[VariantResult], tolerance: f64) -> Vec<Plateau> {
    curve_keys(results)
        .into_iter()
        .filter_map(|(pages, threads, hint)| {
            let pts: Vec<(u64, f64)> = curve(results, pages, threads, hint)
                .iter()
                .map(|r| (r.variant.distance_elements.unwrap_or(0), median_bw(r)))
                .collect();
            let (start, end, bw) = best_plateau(&pts, tolerance)?;
            Some(Plateau { pages, threads, hint, start_elements: start, end_elements: end, bytes_per_s: bw })
        })
        .collect()
}

/// Per-repetition ratio of prefetch to simd, at the best distance inside
/// the curve's best plateau (so a lone spike elsewhere is not chosen).
fn prefetch_effects(results: &[VariantResult], plateaus: &[Plateau]) -> Vec<PrefetchEffect> {
    curve_keys(results)
        .into_iter()
        .filter_map(|(pages, threads, hint)| {
            let reference = results.iter().find(|r| {
                r.variant.pages == pages && r.variant.threads == threads && r.variant.kernel == StreamShape::Simd
            })?;
            let plateau = plateaus.iter().find(|p| p.pages == pages && p.threads == threads && p.hint == hint);
            let in_plateau = |r: &&VariantResult| {
                let d = r.variant.distance_elements.unwrap_or(0);
                plateau.is_none_or(|p| (p.start_elements..=p.end_elements).contains(&d))
            };
            let best = curve(results, pages, threads, hint)
                .into_iter()
                .filter(in_plateau)
                .max_by(|a, b| median_bw(a).total_cmp(&median_bw(b)))?;
            // Same bytes per sample (same passes), so the time ratio inverts the bandwidth ratio.
            let ratios: Vec<f64> = reference.samples_s.iter().zip(&best.samples_s).map(|(r, b)| r / b).collect();
            let s = Summary::of(&ratios)?;
            let verdict = if s.min > 1.0 {
                "helps"
            } else if s.max < 1.0 {
                "hurts"
            } else {
                "within noise"
            };
            Some(PrefetchEffect {
                pages,
                threads,
                hint,
                distance_elements: best.variant.distance_elements.unwrap_or(0),
                ratio_median: s.median,
                ratio_min: s.min,
                ratio_max: s.max,
                verdict: verdict.into(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plateau_of_a_synthetic_curve() {
        let pts: Vec<(u64, f64)> =
            vec![(0, 4.5), (32, 5.0), (64, 5.9), (96, 6.07), (128, 6.08), (160, 6.05), (192, 5.5), (224, 6.08)];
        assert_eq!(best_plateau(&pts, 0.01), Some((96, 160, 6.07)));
        // A flat curve is one plateau over all of it.
        let flat = [(0, 1.0), (1, 1.0), (2, 1.0)];
        assert_eq!(best_plateau(&flat, 0.0), Some((0, 2, 1.0)));
        assert_eq!(best_plateau(&[], 0.1), None);
    }

    #[test]
    fn variants_cover_the_sweep_in_order() {
        let p = Params {
            kernels: vec![StreamShape::Simd, StreamShape::SimdPrefetch],
            pages: vec![PagePolicy::Small],
            threads: vec![1, 2],
            size_bytes: Bytes(1 << 20),
            distance_elements: Sweep { start: 0, end: 64, step: 32 },
            hints: vec![Hint::T0, Hint::Nta],
            repetitions: 1,
            min_sample_s: 0.0,
            noise_cv: 0.05,
            plateau_tolerance: 0.02,
        };
        let v = variants(&p);
        assert_eq!(v.len(), 2 * (1 + 2 * 3));
        assert_eq!(v[1].label(), "simd-prefetch/t0/D=0");
        assert_eq!(v[6].label(), "simd-prefetch/nta/D=64");
    }
}
