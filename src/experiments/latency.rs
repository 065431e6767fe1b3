//! `memperf latency`: load-to-use latency from L1 to DRAM for each page
//! policy, the knees of the curve, and the memory-level parallelism the
//! core reaches (K interleaved chases).
//!
//! Method: a dependent-load chase through one random cycle over every cache
//! line of the working set (seed recorded, cycle verified by the kernel's
//! end positions), so hardware prefetchers cannot help. Each point is timed
//! in chunks of tens of microseconds, and p50/p90/p99 come from the chunks.
//! The page-local variant shuffles only inside windows of a few pages, so
//! it pays cache misses but not TLB misses: the gap between the two curves
//! is the translation cost. Page policies are measured alternately at each
//! working set (A B A B …) and compared as ratios per round.

use super::{Context, Experiment};
use crate::analysis::knees;
use crate::error::{Error, Result};
use crate::kernels::chase::{chase_kernel, visit_order, Chase, ChaseKernel};
use crate::memory::{PagePolicy, Region};
pub use crate::model::outcome::latency::*;
use crate::model::Caution;
use crate::timing::{stats, Clock, Summary};
use crate::units::{Bytes, GIB, KIB};
use serde::{Deserialize, Serialize};

pub const LINE: usize = 64;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Params {
    pub pages: Vec<PagePolicy>,
    pub sizes_bytes: Vec<Bytes>,
    /// Chain counts for the memory-level-parallelism sweep (at the largest size).
    pub chains: Vec<usize>,
    /// Also measure the page-local (TLB-friendly) variant.
    pub page_local: bool,
    /// Window of the page-local variant, in 4 KiB pages.
    pub window_pages: usize,
    /// Measuring time per point and policy.
    pub min_time_s: f64,
    /// Rounds the time is split into, alternating policies.
    pub rounds: usize,
    /// Target duration of one timed chunk.
    pub chunk_s: f64,
    pub seed: u64,
}

/// Working sets from `min` to `max`, `per_octave` points per doubling.
pub fn size_sweep(min: Bytes, max: Bytes, per_octave: u32) -> Vec<Bytes> {
    let mut out = Vec::new();
    let mut e = (min.0.max(LINE as u64 * 2) as f64).log2();
    let step = 1.0 / per_octave.max(1) as f64;
    while 2f64.powf(e) <= max.0 as f64 * 1.0001 {
        let b = (2f64.powf(e) as u64 / LINE as u64) * LINE as u64;
        if out.last() != Some(&Bytes(b)) {
            out.push(Bytes(b));
        }
        e += step;
    }
    out
}

impl Params {
    pub fn preset(preset: super::bandwidth::Preset, machine: &crate::machine::Fingerprint) -> Params {
        use super::bandwidth::Preset;
        let llc = machine.llc_bytes().unwrap_or(Bytes(32 << 20)).0;
        let full_max = (4 * llc).max(GIB).next_power_of_two();
        let (max, per_octave, chains, time) = match preset {
            Preset::Quick => ((4 * llc).next_power_of_two(), 1, vec![1, 4, 8], 0.02),
            Preset::Default => (full_max, 1, vec![1, 2, 4, 8, 16], 0.05),
            Preset::Full => (full_max, 2, (1..=16).collect(), 0.1),
        };
        Params {
            pages: vec![PagePolicy::Small, PagePolicy::Thp],
            sizes_bytes: size_sweep(Bytes(4 * KIB), Bytes(max), per_octave),
            chains,
            page_local: true,
            window_pages: 16,
            min_time_s: time,
            rounds: 4,
            chunk_s: 50e-6,
            seed: 0x006d_656d_7065_7266,
        }
    }
}

pub struct Latency;

impl Experiment for Latency {
    const NAME: &'static str = "latency";
    type Params = Params;
    type Outcome = Outcome;
    fn run(p: &Params, ctx: &Context) -> Result<Outcome> {
        run(p, ctx)
    }
}

/// Loads per chunk so that one chunk lasts about `chunk_s`.
pub fn calibrate(chase: &mut Chase, kernel: ChaseKernel, clock: &dyn Clock, chunk_s: f64) -> u64 {
    let probe = 2048;
    // SAFETY: the chase's memory is alive for the call (caller owns both).
    unsafe { chase.run(kernel, probe) };
    let t0 = clock.now_ns();
    // SAFETY: as above.
    unsafe { chase.run(kernel, probe) };
    let ns = (clock.now_ns() - t0) as f64 / probe as f64;
    ((chunk_s * 1e9 / ns.max(0.1)) as u64).clamp(256, 1 << 22)
}

/// What [`alternate`] measured, per chase.
pub struct Alternated {
    /// ns per load of every chunk, in measurement order.
    pub samples: Vec<Vec<f64>>,
    /// The median of each round, for per-round ratios between chases.
    pub round_medians: Vec<Vec<f64>>,
    /// Whether every chunk ended where the order says.
    pub ok: Vec<bool>,
}

/// Measures single-chain chases alternately (A B A B …): two untimed chunks
/// each to reach the steady state of caches and TLB, then `rounds` rounds
/// of `chunks` chunks of `loads` loads on each chase in turn.
pub fn alternate(chases: &mut [&mut Chase], clock: &dyn Clock, loads: u64, rounds: usize, chunks: usize) -> Alternated {
    let k1 = chase_kernel(1).expect("one chain");
    for c in chases.iter_mut() {
        time_chunks(c, k1, clock, loads, 2);
    }
    let n = chases.len();
    let mut out = Alternated { samples: vec![Vec::new(); n], round_medians: vec![Vec::new(); n], ok: vec![true; n] };
    for _ in 0..rounds {
        for (i, c) in chases.iter_mut().enumerate() {
            let (s, v) = time_chunks(c, k1, clock, loads, chunks);
            out.round_medians[i].push(stats::median(&s).unwrap_or(f64::NAN));
            out.samples[i].extend(s);
            out.ok[i] &= v;
        }
    }
    out
}

/// Chunks in one round: the point's time split over the rounds.
fn chunks_per_round(p: &Params) -> usize {
    ((p.min_time_s / p.rounds as f64) / p.chunk_s).ceil().max(2.0) as usize
}

/// Times `chunks` chunks of `loads` steps; ns per load (per chain step) of
/// each, and whether every chunk ended where it must.
pub fn time_chunks(
    chase: &mut Chase,
    kernel: ChaseKernel,
    clock: &dyn Clock,
    loads: u64,
    chunks: usize,
) -> (Vec<f64>, bool) {
    let mut out = Vec::with_capacity(chunks);
    let mut ok = true;
    for _ in 0..chunks {
        let t0 = clock.now_ns();
        // SAFETY: the chase's memory is alive (the caller owns it).
        ok &= unsafe { chase.run(kernel, loads) };
        out.push((clock.now_ns() - t0) as f64 / loads as f64);
    }
    (out, ok)
}

fn check(p: &Params) -> Result<()> {
    if p.pages.is_empty() || p.sizes_bytes.is_empty() {
        return Err(Error::usage("--pages and --sizes need at least one value"));
    }
    if let Some(k) = p.chains.iter().find(|&&k| !(1..=16).contains(&k)) {
        return Err(Error::usage(format!("--chains {k} is out of range: use 1 to 16 chains")));
    }
    if let Some(s) = p.sizes_bytes.iter().find(|s| s.0 < 2 * LINE as u64) {
        return Err(Error::usage(format!("--sizes {s} is below two cache lines")));
    }
    Ok(())
}

fn run(p: &Params, ctx: &Context) -> Result<Outcome> {
    check(p)?;
    let _pin = crate::timing::team::PinGuard::first_cpu();
    let max = *p.sizes_bytes.iter().max().expect("checked non-empty");
    let mut regions: Vec<(PagePolicy, Region)> =
        p.pages.iter().map(|&pol| Region::new(pol, max).map(|r| (pol, r))).collect::<Result<_>>()?;
    let k1 = chase_kernel(1).expect("one chain");
    let orders: Vec<(&str, Option<usize>)> = if p.page_local {
        vec![("random", None), ("page-local", Some(p.window_pages * 4096 / LINE))]
    } else {
        vec![("random", None)]
    };
    let total = (p.sizes_bytes.len() * orders.len() + p.chains.len()) as u64;
    ctx.progress.start("latency", total);
    let mut points = Vec::new();
    let mut ratios = Vec::new();
    for &size in &p.sizes_bytes {
        for &(order_name, window) in &orders {
            ctx.check_interrupt()?;
            let lines = (size.0 as usize / LINE).max(2);
            let mut chases: Vec<Chase> = regions
                .iter_mut()
                .map(|(_, r)| {
                    let base = r.as_mut_slice::<u8>().as_mut_ptr();
                    // SAFETY: lines × 64 bytes <= region length; the region
                    // outlives the chase (both live in this function).
                    unsafe { Chase::new(base, visit_order(lines, window, p.seed), |s| s * LINE, 1) }
                })
                .collect();
            let loads = calibrate(&mut chases[0], k1, ctx.clock, p.chunk_s);
            let mut refs: Vec<&mut Chase> = chases.iter_mut().collect();
            let Alternated { samples, round_medians, ok } =
                alternate(&mut refs, ctx.clock, loads, p.rounds, chunks_per_round(p));
            for (i, (pol, _)) in regions.iter().enumerate() {
                let s = &samples[i];
                points.push(Point {
                    pages: *pol,
                    order: order_name.into(),
                    size_bytes: Bytes((lines * LINE) as u64),
                    loads_per_chunk: loads,
                    latency_ns: Summary::of(s).expect("chunks measured"),
                    p90_ns: stats::quantile(s, 0.9).unwrap_or(f64::NAN),
                    p99_ns: stats::quantile(s, 0.99).unwrap_or(f64::NAN),
                    chunk_latency_ns: s.clone(),
                    valid: ok[i],
                });
                if i > 0 && order_name == "random" {
                    let r: Vec<f64> = round_medians[i].iter().zip(&round_medians[0]).map(|(b, a)| b / a).collect();
                    let s = Summary::of(&r).expect("rounds measured");
                    ratios.push(PolicyRatio {
                        size_bytes: size,
                        a: regions[0].0,
                        b: *pol,
                        ratio_median: s.median,
                        ratio_min: s.min,
                        ratio_max: s.max,
                    });
                }
            }
            ctx.progress.advance(1);
        }
    }
    let mlp = mlp_sweep(p, ctx, &mut regions, max)?;
    let levels = latency_levels(&points, ctx.machine, max);
    warn(p, ctx, &regions, max);
    let valid = points.iter().all(|x| x.valid) && mlp.iter().all(|m| m.valid);
    Ok(Outcome {
        seed: p.seed,
        regions: regions.iter().map(|(_, r)| r.backing().clone()).collect(),
        nominal_ghz: ctx.machine.ghz(),
        points,
        levels,
        ratios,
        mlp,
        valid,
    })
}

/// K chains at the largest working set, K values alternated per round.
fn mlp_sweep(p: &Params, ctx: &Context, regions: &mut [(PagePolicy, Region)], size: Bytes) -> Result<Vec<MlpPoint>> {
    let mut out = Vec::new();
    let mut chains = p.chains.clone();
    if !chains.contains(&1) {
        chains.insert(0, 1);
    }
    let lines = size.0 as usize / LINE;
    for (pol, region) in regions.iter_mut() {
        ctx.check_interrupt()?;
        let base = region.as_mut_slice::<u8>().as_mut_ptr();
        // SAFETY: lines × 64 bytes fit the region, which outlives the chase.
        let mut chase = unsafe { Chase::new(base, visit_order(lines, None, p.seed), |s| s * LINE, 1) };
        let loads = calibrate(&mut chase, chase_kernel(1).expect("1"), ctx.clock, p.chunk_s);
        let mut per_k: Vec<(usize, Vec<f64>, bool)> = chains.iter().map(|&k| (k, Vec::new(), true)).collect();
        for _ in 0..p.rounds {
            for (k, s, ok) in per_k.iter_mut() {
                chase.set_chains(*k);
                let kernel = chase_kernel(*k).expect("checked 1..=16");
                let (t, v) =
                    time_chunks(&mut chase, kernel, ctx.clock, (loads / *k as u64).max(64), chunks_per_round(p));
                s.extend(t.iter().map(|x| x / *k as f64));
                *ok &= v;
            }
        }
        let base_ns = stats::median(&per_k[0].1).unwrap_or(f64::NAN);
        for (k, s, ok) in &per_k {
            let ns = stats::median(s).unwrap_or(f64::NAN);
            out.push(MlpPoint {
                pages: *pol,
                size_bytes: size,
                chains: *k,
                ns_per_load: ns,
                speedup: base_ns / ns,
                valid: *ok,
            });
        }
        ctx.progress.advance(1);
    }
    Ok(out)
}

/// Levels of the random-order curve of each policy, named after the caches.
pub fn latency_levels(points: &[Point], m: &crate::machine::Fingerprint, max: Bytes) -> Vec<LatencyLevel> {
    let mut caches: Vec<&crate::machine::Cache> = m.caches.iter().filter(|c| c.kind != "Instruction").collect();
    caches.sort_by_key(|c| c.level);
    let llc = m.llc_bytes();
    let beyond_llc = llc.is_some_and(|l| max.0 >= 2 * l.0);
    let mut pols: Vec<PagePolicy> = points.iter().map(|p| p.pages).collect();
    pols.sort();
    pols.dedup();
    let mut out = Vec::new();
    for pol in pols {
        let curve: Vec<(f64, f64)> = points
            .iter()
            .filter(|p| p.pages == pol && p.order == "random")
            .map(|p| (p.size_bytes.0 as f64, p.latency_ns.median))
            .collect();
        let max_levels = caches.len() + usize::from(beyond_llc);
        let lv = knees::levels(&curve, max_levels.max(1), 1.3);
        let n = lv.len();
        for (i, l) in lv.iter().enumerate() {
            let is_dram = beyond_llc && i + 1 == n && n > 1;
            let cache = if is_dram { None } else { caches.get(i) };
            out.push(LatencyLevel {
                pages: pol,
                name: if is_dram {
                    "DRAM".into()
                } else {
                    cache.map(|c| format!("L{}", c.level)).unwrap_or_else(|| format!("level {}", i + 1))
                },
                latency_ns: l.value,
                cycles: m.ghz().map(|g| l.value * g),
                up_to_bytes: Bytes(l.to_x as u64),
                cache_bytes: cache.map(|c| c.size_bytes),
            });
        }
    }
    out
}

fn warn(p: &Params, ctx: &Context, regions: &[(PagePolicy, Region)], max: Bytes) {
    if let Some(llc) = ctx.machine.llc_bytes() {
        if max.0 < 4 * llc.0 {
            ctx.warn(Caution::LatencyMaxBelow4xLlc { max, llc });
        }
    }
    for (pol, r) in regions {
        if *pol == PagePolicy::Thp && r.backing().huge_fraction.is_some_and(|f| f < 0.9) {
            ctx.warn(Caution::ThpPartial { what: "region", fraction: r.backing().huge_fraction.unwrap_or(0.0) });
        }
    }
    let _ = p;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn size_sweep_doubles_or_steps_by_root_two() {
        let s = size_sweep(Bytes(4096), Bytes(65536), 1);
        assert_eq!(s, vec![Bytes(4096), Bytes(8192), Bytes(16384), Bytes(32768), Bytes(65536)]);
        let s2 = size_sweep(Bytes(4096), Bytes(16384), 2);
        assert_eq!(s2.len(), 5);
        assert!(s2.iter().all(|b| b.0 % 64 == 0));
    }
}
