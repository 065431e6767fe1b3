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
    let Measured { keys, series, checks, pages, bytes, segs, ratio, descriptors } = m;
    let per_iter = |i: usize| series[i].per_iter_s();
    let store_kernels: Vec<StoreKernelResult> = keys
        .iter()
        .enumerate()
        .filter_map(|(i, (_, w, team))| match w {
            Work::Store(name, _) => {
                let bw: Vec<f64> = per_iter(i).iter().map(|s| bytes.0 as f64 / s).collect();
                Some(StoreKernelResult {
                    kernel: name.to_string(),
                    threads: team.threads(),
                    bytes_per_s: Summary::of(&bw).expect("measured"),
                    samples_s: per_iter(i),
                })
            }
            Work::Init(..) => None,
        })
        .collect();
    let threads_all = keys.iter().map(|k| k.2.threads()).max().unwrap_or(1);
    let best_store = |threads: usize| {
        store_kernels.iter().filter(|k| k.threads == threads).map(|k| k.bytes_per_s.median).fold(0.0, f64::max)
    };
    let (store1, store_all) = (best_store(1), best_store(threads_all));
    let (limit1, limit_all) = (128.0 / store1 * 1e9, 128.0 / store_all * 1e9);
    let variant = |i: usize| match keys[i].1 {
        Work::Init(v, _) => Some(v),
        Work::Store(..) => None,
    };
    let locked = (0..keys.len()).find(|&i| variant(i) == Some(InitVariant::Locked)).expect("always measured");
    let init: Vec<usize> = (0..keys.len()).filter(|&i| matches!(keys[i].1, Work::Init(..))).collect();
    let digests: Vec<Option<u64>> =
        init.iter().map(|&i| checks[i].as_ref().and_then(|r| r.as_ref().ok()).copied()).collect();
    let same = digests.windows(2).all(|w| w[0] == w[1]);
    let ahead_of = |i: usize| match keys[i].1 {
        Work::Init(_, m) => m.ahead,
        Work::Store(..) => 0,
    };
    let results: Vec<VariantResult> = init
        .iter()
        .map(|&i| {
            let per_page: Vec<f64> = per_iter(i).iter().map(|s| s * 1e9 / pages as f64).collect();
            let s = Summary::of(&per_page).expect("measured");
            let limit = if keys[i].2.threads() > 1 { limit_all } else { limit1 };
            let (valid, validation) = match &checks[i] {
                Some(Ok(_)) if same => (true, "ok".to_string()),
                Some(Ok(_)) => (false, "lists differ from the other variants'".to_string()),
                Some(Err(e)) => (false, e.clone()),
                None => (false, "not validated".to_string()),
            };
            VariantResult {
                variant: variant(i).expect("an init variant"),
                threads: keys[i].2.threads(),
                ahead: ahead_of(i),
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
        .collect();
    // The distance: chosen on even repetitions among single-thread prefetch.
    let speed: Vec<Vec<f64>> = (0..keys.len()).map(|i| per_iter(i).iter().map(|s| 1.0 / s).collect()).collect();
    let prefetch: Vec<usize> = (0..keys.len()).filter(|&i| variant(i) == Some(InitVariant::Prefetch)).collect();
    let best_ahead = schedule::holdout_best(&speed, &prefetch).map_or(DEFAULT_AHEAD as usize, |h| ahead_of(h.chosen));
    let results: Vec<VariantResult> = results
        .into_iter()
        .filter(|r| r.variant != InitVariant::Parallel || r.ahead == best_ahead || prefetch.is_empty())
        .collect();
    // Broken only beyond the noise: the variant's time per page under the
    // best store kernel's (same thread count), paired per repetition, with
    // its whole interval above 1.
    let best_store_samples = |threads: usize| {
        store_kernels
            .iter()
            .filter(|k| k.threads == threads)
            .max_by(|a, b| a.bytes_per_s.median.total_cmp(&b.bytes_per_s.median))
            .map(|k| k.samples_s.iter().map(|s| s * 1e9 / pages as f64).collect::<Vec<f64>>())
    };
    let beyond = |r: &VariantResult| {
        let per_page: Vec<f64> = r.samples_s.iter().map(|s| s * 1e9 / pages as f64).collect();
        best_store_samples(r.threads)
            .and_then(|limit| Ratio::paired(&limit, &per_page))
            .is_some_and(|x| x.direction() == crate::timing::schedule::Direction::Above)
    };
    let limit_broken = results.iter().any(beyond);
    if let Some(r) = results.iter().max_by(|a, b| a.fraction_of_store_limit.total_cmp(&b.fraction_of_store_limit)) {
        if limit_broken {
            ctx.warn(Caution::PageInitAboveLimit {
                variant: format!("{} ({} thread(s))", r.variant, r.threads),
                fraction: r.fraction_of_store_limit,
            });
        } else if r.fraction_of_store_limit < 0.6 {
            ctx.warn(Caution::PageInitBelowLimit { fraction: r.fraction_of_store_limit });
        }
    }
    let best = results
        .iter()
        .min_by(|a, b| a.ns_per_page.median.total_cmp(&b.ns_per_page.median))
        .map(|r| format!("{} ({} thread(s), ahead {})", r.variant, r.threads, r.ahead))
        .unwrap_or_default();
    let large_pages = segs.iter().map(|&s| crate::kernels::page_init::expected_counts(s, ratio).0).sum();
    Ok(Outcome {
        segments: segs.iter().map(|s| (s.base_pfn, s.pages)).collect(),
        pages,
        large_pages,
        descriptor_bytes: bytes.0,
        descriptors,
        store_kernels,
        store_bytes_per_s_1t: store1,
        store_bytes_per_s_all: store_all,
        limit_ns_per_page_1t: limit1,
        limit_ns_per_page_all: limit_all,
        limit_broken,
        best_ahead,
        valid: results.iter().all(|r| r.valid),
        results,
        best,
    })
}

/// Seconds to initialise 100 GiB, 1 TiB and this machine's memory.
fn extrapolate(ns_per_page: f64, base: Bytes, machine: Option<Bytes>) -> Vec<(String, f64)> {
    let mut v = vec![("100GiB".to_string(), Bytes(100 * GIB)), ("1TiB".to_string(), Bytes(TIB))];
    if let Some(m) = machine {
        v.push((format!("this machine ({m})"), m));
    }
    v.into_iter().map(|(name, b)| (name, b.0 as f64 / base.0 as f64 * ns_per_page * 1e-9)).collect()
}
