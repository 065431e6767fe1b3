//! From the measured series to the outcome: the store limit per thread
//! count, each variant against it and against `locked`, the best prefetch
//! distance chosen on even repetitions, validation, and what initialising
//! a large memory would take.

use super::*;

/// What `run` measured, for [`summarise`].
pub(super) struct Measured<'a> {
    /// Each variant: its name, what it runs, and the team that runs it.
    pub keys: &'a [(String, Work, &'a Team)],
    pub series: &'a [schedule::Series],
    /// Each init variant's validation of its warm-up run.
    pub checks: &'a [Option<std::result::Result<u64, String>>],
    /// Descriptors (pages) of the modelled memory, and their bytes.
    pub pages: u64,
    pub bytes: Bytes,
    pub segs: &'a [Segment],
    /// Base pages per large page.
    pub ratio: u64,
    /// Where the descriptor array really lives.
    pub descriptors: crate::memory::Backing,
}

/// From the series to the outcome: the limit per thread count, each
/// variant against it and against `locked`, the best distance chosen on
/// even repetitions, and validation.
pub(super) fn summarise(p: &Params, ctx: &Bench, m: Measured) -> Result<Outcome> {
    let store_kernels = store_kernels(&m);
    let threads_all = m.keys.iter().map(|k| k.2.threads()).max().unwrap_or(1);
    let best_store = |threads: usize| {
        store_kernels.iter().filter(|k| k.threads == threads).map(|k| k.bytes_per_s.median).fold(0.0, f64::max)
    };
    let (store1, store_all) = (best_store(1), best_store(threads_all));
    let limits = (128.0 / store1 * 1e9, 128.0 / store_all * 1e9);
    let results = variant_results(p, ctx, &m, limits);
    let (results, best_ahead) = keep_the_best_distance(&m, results);
    let limit_broken = results.iter().any(|r| beyond_the_store_limit(r, &store_kernels, m.pages));
    warn_about_the_limit(ctx, &results, limit_broken);
    let best = crate::model::outcome::page_init::fastest(&results)
        .map(|r| format!("{} ({} thread(s), ahead {})", r.variant, r.threads, r.ahead))
        .unwrap_or_default();
    let large_pages = m.segs.iter().map(|&s| crate::kernels::page_init::expected_counts(s, m.ratio).0).sum();
    Ok(Outcome {
        segments: m.segs.iter().map(|s| (s.base_pfn, s.pages)).collect(),
        pages: m.pages,
        large_pages,
        descriptor_bytes: m.bytes.0,
        descriptors: m.descriptors,
        store_kernels,
        store_bytes_per_s_1t: store1,
        store_bytes_per_s_all: store_all,
        limit_ns_per_page_1t: limits.0,
        limit_ns_per_page_all: limits.1,
        limit_broken,
        best_ahead,
        valid: results.iter().all(|r| r.valid),
        results,
        best,
    })
}

/// Each store kernel's bandwidth over the descriptor array's bytes.
fn store_kernels(m: &Measured) -> Vec<StoreKernelResult> {
    m.keys
        .iter()
        .enumerate()
        .filter_map(|(i, (_, w, team))| match w {
            Work::Store(name, _) => {
                let samples_s = m.series[i].per_iter_s();
                let bw: Vec<f64> = samples_s.iter().map(|s| m.bytes.0 as f64 / s).collect();
                Some(StoreKernelResult {
                    kernel: name.to_string(),
                    threads: team.threads(),
                    bytes_per_s: Summary::of(&bw).expect("measured"),
                    samples_s,
                })
            }
            Work::Init(..) => None,
        })
        .collect()
}

/// The variant and distance of key `i`, if it is an init variant.
fn variant_of(m: &Measured, i: usize) -> Option<(InitVariant, usize)> {
    match m.keys[i].1 {
        Work::Init(v, mode) => Some((v, mode.ahead)),
        Work::Store(..) => None,
    }
}

/// Each init variant: ns per page, against the store limit of its thread
/// count (`limits`: one thread, all) and against `locked`, validated by
/// its free lists (the same as every other variant's).
fn variant_results(p: &Params, ctx: &Bench, m: &Measured, limits: (f64, f64)) -> Vec<VariantResult> {
    let per_iter = |i: usize| m.series[i].per_iter_s();
    let init: Vec<usize> = (0..m.keys.len()).filter(|&i| variant_of(m, i).is_some()).collect();
    let locked = init.iter().copied().find(|&i| variant_of(m, i).map(|v| v.0) == Some(InitVariant::Locked));
    let locked = locked.expect("always measured");
    let digests: Vec<Option<u64>> =
        init.iter().map(|&i| m.checks[i].as_ref().and_then(|r| r.as_ref().ok()).copied()).collect();
    let same = digests.windows(2).all(|w| w[0] == w[1]);
    init.iter()
        .map(|&i| {
            let per_page: Vec<f64> = per_iter(i).iter().map(|s| s * 1e9 / m.pages as f64).collect();
            let s = Summary::of(&per_page).expect("measured");
            let limit = if m.keys[i].2.threads() > 1 { limits.1 } else { limits.0 };
            let (valid, validation) = match &m.checks[i] {
                Some(Ok(_)) if same => (true, "ok".to_string()),
                Some(Ok(_)) => (false, "lists differ from the other variants'".to_string()),
                Some(Err(e)) => (false, e.clone()),
                None => (false, "not validated".to_string()),
            };
            let (variant, ahead) = variant_of(m, i).expect("an init variant");
            VariantResult {
                variant,
                threads: m.keys[i].2.threads(),
                ahead,
                pages_per_s: 1e9 / s.median,
                speedup_vs_locked: (i != locked).then(|| Ratio::paired(&per_iter(locked), &per_iter(i))).flatten(),
                fraction_of_store_limit: limit / s.median,
                extrapolated_s: extrapolate(s.median, p.base_page_bytes, ctx.machine.memory_total_bytes),
                ns_per_page: s,
                samples_s: per_iter(i),
                valid,
                validation,
            }
        })
        .collect()
}

/// The prefetch distance chosen on even repetitions among single-thread
/// prefetch, and the results with only that distance's parallel variant.
fn keep_the_best_distance(m: &Measured, results: Vec<VariantResult>) -> (Vec<VariantResult>, usize) {
    let speed: Vec<Vec<f64>> =
        (0..m.keys.len()).map(|i| m.series[i].per_iter_s().iter().map(|s| 1.0 / s).collect()).collect();
    let prefetch: Vec<usize> =
        (0..m.keys.len()).filter(|&i| variant_of(m, i).map(|v| v.0) == Some(InitVariant::Prefetch)).collect();
    let best_ahead = schedule::holdout_best(&speed, &prefetch)
        .and_then(|h| variant_of(m, h.chosen))
        .map_or(DEFAULT_AHEAD as usize, |v| v.1);
    let results = results
        .into_iter()
        .filter(|r| r.variant != InitVariant::Parallel || r.ahead == best_ahead || prefetch.is_empty())
        .collect();
    (results, best_ahead)
}

/// Whether `r` is faster than the best store kernel of its thread count
/// beyond the noise: its time per page under the store's, paired per
/// repetition, the whole interval above 1.
fn beyond_the_store_limit(r: &VariantResult, store_kernels: &[StoreKernelResult], pages: u64) -> bool {
    let best = store_kernels
        .iter()
        .filter(|k| k.threads == r.threads)
        .max_by(|a, b| a.bytes_per_s.median.total_cmp(&b.bytes_per_s.median));
    let per_page = |samples: &[f64]| samples.iter().map(|s| s * 1e9 / pages as f64).collect::<Vec<f64>>();
    best.and_then(|k| Ratio::paired(&per_page(&k.samples_s), &per_page(&r.samples_s)))
        .is_some_and(|x| x.call() == crate::timing::schedule::Call::Above)
}

/// The closest variant to the store limit: above it beyond the noise, or
/// far below it, said.
fn warn_about_the_limit(ctx: &Bench, results: &[VariantResult], limit_broken: bool) {
    let Some(r) = results.iter().max_by(|a, b| a.fraction_of_store_limit.total_cmp(&b.fraction_of_store_limit))
    else {
        return;
    };
    if limit_broken {
        ctx.warn(Caution::PageInitAboveLimit {
            variant: format!("{} ({} thread(s))", r.variant, r.threads),
            fraction: r.fraction_of_store_limit,
        });
    } else if r.fraction_of_store_limit < 0.6 {
        ctx.warn(Caution::PageInitBelowLimit { fraction: r.fraction_of_store_limit });
    }
}

/// Seconds to initialise 100 GiB, 1 TiB and this machine's memory.
fn extrapolate(ns_per_page: f64, base: Bytes, machine: Option<Bytes>) -> Vec<(String, f64)> {
    let mut v = vec![("100GiB".to_string(), Bytes(100 * GIB)), ("1TiB".to_string(), Bytes(TIB))];
    if let Some(m) = machine {
        v.push((format!("this machine ({m})"), m));
    }
    v.into_iter().map(|(name, b)| (name, b.0 as f64 / base.0 as f64 * ns_per_page * 1e-9)).collect()
}
