//! `memperf latency`: load-to-use latency from L1 to DRAM for each page
//! policy, the knees of the curve, and the memory-level parallelism the
//! core reaches (K interleaved chases). A dependent chase through one random
//! cycle over every line of the working set (seed recorded, end positions
//! verified); a point's figure is the median of its samples' steady stretch.
//! The page-local variant pays cache misses but not TLB misses, unless the
//! prefetcher reaches its windows, which the report checks. Page policies
//! are measured alternately and compared as ratios per repetition. The
//! method, step by step: docs/methods/latency.md.

pub mod options;

pub use options::Options;

use super::{chases, Bench, Experiment, Preset};
use crate::analysis::attribution::{attribute, Attribution, KnownLevel};
use crate::analysis::knees;
use crate::error::{Error, Result};
use crate::kernels::chase::{chase_kernel, visit_order, Chase, Cycle};
use crate::memory::{PagePolicy, Buffer};
pub use crate::model::outcome::latency::*;
use crate::model::Caution;
use crate::timing::core_clock::{self, CoreClock};
use crate::timing::schedule::{self, StepReport, Step};
use crate::timing::{stats, Summary};
use crate::units::{Bytes, Nanos, GIB, KIB};
use serde::{Deserialize, Serialize};
use std::cell::RefCell;

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
    /// Samples per chase (each after a warm-up traversal), interleaved, at
    /// the first look; the page policies' comparison at each working set
    /// goes on, doubling, until it is resolved or `max_repetitions`.
    pub repetitions: usize,
    /// More repetitions, up to `max_repetitions`, until each point's median
    /// is known to ± this fraction (95% interval); `None`: no such target.
    #[serde(default)]
    pub precision: Option<f64>,
    #[serde(default)]
    pub max_repetitions: usize,
    /// Shortest sample.
    pub min_sample_s: f64,
    pub seed: u64,
    /// Repetitions measured on each fresh mapping of the largest working
    /// set, whose policies are compared: each mapping lands elsewhere in
    /// the host's memory, so the ratios hold wherever pages land;
    /// repetitions sharing a mapping count as one unit of evidence.
    #[serde(default = "one")]
    pub per_mapping: usize,
    /// Samples per chase at every smaller working set, on one mapping:
    /// the curve's points (medians, levels and knees), not a comparison.
    /// `None` (a document from before): `repetitions`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub point_repetitions: Option<usize>,
}

fn one() -> usize {
    1
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
    pub fn preset(preset: Preset, machine: &crate::machine::Fingerprint) -> Params {
        // Up to 4× where memory begins (measured, else a plausible claim),
        // for each of the (up to three) policies at once, within the budget.
        // The quick run reaches at least where the probe verified memory.
        let verified = machine.chase_memory_from().map_or(64 << 20, |b| b.0.max(64 << 20));
        let quick_max = super::budget::memory_size(machine, 4, Bytes(verified), 3).pow2_floor().0;
        // The quick run's DRAM point: where the host reference reads.
        let dram = dram_point(machine);
        let full_max = super::budget::memory_size(machine, 4, Bytes(GIB), 3).pow2_floor().0;
        // Every preset looks at the policies' comparison after ten
        // repetitions (the fewest that give a 99% interval) and doubles
        // until it is resolved; outside the quick suite each median is also
        // known to ±3% (±2%). The quick suite leaves the parallelism sweep
        // to `memperf latency`.
        let (max, per_octave, chains, reps, precision, max_reps, points) = match preset {
            Preset::Quick => (quick_max, 1, vec![1], 10, None, 40, 3),
            Preset::Default => (full_max, 1, vec![1, 2, 4, 8, 16], 10, Some(0.03), 40, 6),
            Preset::Full => (full_max, 2, (1..=16).collect(), 10, Some(0.02), 40, 8),
        };
        let mut sizes_bytes = size_sweep(Bytes(4 * KIB), Bytes(max), per_octave);
        if preset == Preset::Quick {
            // The curve reaches twice where memory begins; whatever the
            // probe found, the sweep ends at the DRAM point.
            sizes_bytes.retain(|s| *s < dram && 2 * s.0 <= quick_max);
            sizes_bytes.push(dram);
        }
        Params {
            pages: vec![PagePolicy::Small, PagePolicy::Thp],
            sizes_bytes,
            chains,
            // The quick suite leaves the page-local variant out: it would
            // double the warm-ups of the largest working sets.
            page_local: preset != Preset::Quick,
            window_pages: 16,
            repetitions: reps,
            precision,
            max_repetitions: max_reps,
            min_sample_s: if preset == Preset::Quick { 0.0025 } else { 0.01 },
            seed: 0x006d_656d_7065_7266,
            per_mapping: 1,
            point_repetitions: Some(points),
        }
    }
}

/// The working set of the quick run's DRAM figure per page policy: the
/// host reference's region ([`super::drift::size`]: ×8 the plausible
/// last-level cache, 256 MiB to 1 GiB, from the claims alone). Past every
/// plausible cache, a random chase reads memory however much of the cache
/// the neighbours leave it (at twice the L3 it moves 10% from run to run
/// while the reference holds); and the same size every run, so `compare`
/// finds the row, and
/// the reference's move is the move of the same kind of figure.
pub fn dram_point(machine: &crate::machine::Fingerprint) -> Bytes {
    super::drift::size(machine)
}

impl Params {
    /// The scheduler's plan for every chase of the sweep.
    pub fn plan(&self) -> schedule::Plan {
        let mut plan = chases::plan(self.repetitions, self.min_sample_s, self.seed);
        plan.precision = self.precision;
        plan.max_repetitions = self.max_repetitions.max(self.repetitions);
        plan
    }

    /// The plan of one working set over its mappings: its first look, its
    /// cap, the policies' comparison (each policy's random chase against
    /// the first's, variants ordered order by order, policy by policy) and
    /// the precision target.
    fn sequential_plan(&self, deadline_ns: Option<u64>) -> schedule::Plan {
        let policies = self.pages.len();
        let questions: Vec<schedule::Question> =
            (1..policies).map(|b| schedule::Question::Pair { a: b, b: 0 }).collect();
        let mut plan = self.plan().resolving(questions, self.max_repetitions.max(self.repetitions));
        plan.stop_looking_at_ns = deadline_ns;
        plan
    }

    /// Whether the policies are compared at working set `size`: at the
    /// largest, where there are two policies at least.
    fn compared_at(&self, size: Bytes) -> bool {
        self.pages.len() > 1 && self.sizes_bytes.iter().max() == Some(&size)
    }

    /// The plan of working set `size` over its mappings and the
    /// repetitions of each mapping: the policies' comparison at the
    /// largest (a fresh mapping every `per_mapping` repetitions, looked at
    /// after `repetitions` and resolved sequentially); elsewhere the
    /// curve's points, `point_repetitions` on one mapping.
    fn plan_at(&self, size: Bytes, deadline_ns: Option<u64>) -> (schedule::Plan, usize) {
        if self.compared_at(size) {
            return (self.sequential_plan(deadline_ns), self.per_mapping.max(1));
        }
        let reps = self.point_repetitions.unwrap_or(self.repetitions).max(1);
        let mut plan = self.plan();
        plan.repetitions = reps;
        plan.max_repetitions = if self.precision.is_some() { self.max_repetitions.max(reps) } else { reps };
        (plan, reps)
    }

    /// The plan of one mapping's share: exactly its repetitions (the
    /// looks and the precision mode are judged on the merged shares, see
    /// `working_set`).
    fn group_plan(&self, repetitions: usize) -> schedule::Plan {
        let mut plan = self.plan();
        plan.repetitions = repetitions;
        plan.precision = None;
        plan.max_repetitions = repetitions;
        plan
    }

    /// The chain counts of the parallelism sweep, one included; none when
    /// only one chain is asked for (the random curve's largest point is it).
    pub fn mlp_chains(&self) -> Vec<usize> {
        let mut chains = self.chains.clone();
        if !chains.contains(&1) {
            chains.insert(0, 1);
        }
        if chains.len() < 2 {
            chains.clear();
        }
        chains
    }
}

pub struct Latency;

impl Experiment for Latency {
    const NAME: &'static str = "latency";
    const SHARE: f64 = 12.0;
    type Params = Params;
    type Outcome = Outcome;

    fn preset(preset: crate::experiments::Preset, machine: &crate::machine::Fingerprint) -> Params {
        Params::preset(preset, machine)
    }
    /// The suite's sweep takes 2 MiB hugetlb pages too when their pool has
    /// them free (or the run reserves them); else a note says how.
    fn suite(asked: &crate::experiments::Request) -> (Params, Option<crate::model::Warning>) {
        let mut p = Params::preset(asked.preset, asked.machine);
        let max = p.sizes_bytes.iter().max().copied().unwrap_or_default();
        let need = max.0.div_ceil(2 << 20);
        let free = asked.machine.pool(crate::units::Bytes(2 << 20)).map(|pool| pool.available()).unwrap_or(0);
        if asked.reserve_hugepages || free >= need {
            p.pages.push(crate::memory::PagePolicy::Huge2M);
            (p, None)
        } else {
            let note = crate::model::Caution::SuiteNoHugetlb { need, free }.render(crate::model::warnings::Command::Run);
            (p, Some(note))
        }
    }

    fn needs(p: &Params) -> Result<crate::experiments::Needs> {
        check(p)?;
        let max = p.sizes_bytes.iter().max().copied().unwrap_or_default();
        let mapped = p.pages.iter().map(|&pol| (pol, max.round_up(pol.page_size().0).0)).collect();
        Ok(crate::experiments::Needs { levels: true, mapped, ..Default::default() })
    }
    fn run(p: &Params, ctx: &Bench) -> Result<Outcome> {
        run(p, ctx)
    }
}

/// Independent chases in flight: 1 to 16 each.
pub(crate) fn check_chains(chains: &[usize]) -> Result<()> {
    match chains.iter().find(|&&k| !(1..=16).contains(&k)) {
        Some(k) => Err(Error::usage(format!("--chains {k} is out of range: use 1 to 16 chains"))),
        None => Ok(()),
    }
}

pub(crate) fn check(p: &Params) -> Result<()> {
    if p.pages.is_empty() || p.sizes_bytes.is_empty() {
        return Err(Error::usage("--pages and --sizes need at least one value"));
    }
    check_chains(&p.chains)?;
    if let Some(s) = p.sizes_bytes.iter().find(|s| s.0 < 2 * LINE as u64) {
        return Err(Error::usage(format!("--sizes {s} is below two cache lines")));
    }
    if p.repetitions == 0 {
        return Err(Error::usage("latency needs at least one repetition"));
    }
    Ok(())
}

fn run(p: &Params, ctx: &Bench) -> Result<Outcome> {
    check(p)?;
    let _pin = crate::timing::team::PinGuard::first_cpu();
    let clock_before = core_clock::sample(ctx.clock, ctx.machine.nominal_clocks()).clock;
    let max = *p.sizes_bytes.iter().max().expect("checked non-empty");
    let orders: Vec<(&str, Option<usize>)> = if p.page_local {
        vec![("random", None), ("page-local", Some(p.window_pages * 4096 / LINE))]
    } else {
        vec![("random", None)]
    };
    ctx.progress.start("latency", (p.sizes_bytes.len() + 1) as u64);
    let mut points = Vec::new();
    let mut ratios = Vec::new();
    let mut sizes = p.sizes_bytes.clone();
    sizes.sort();
    sizes.dedup();
    // In order of value: the curve up to where memory begins, the
    // policies' comparison at the largest (whose looks may take half the
    // share), the curve past it, then the parallelism sweep.
    let others = sizes.len().saturating_sub(1).max(1) as f64;
    let llc = ctx.machine.sizing_llc().0;
    sizes.sort_by_key(|s| (p.compared_at(*s) || *s > llc, !p.compared_at(*s), *s));
    let mut stages: Vec<(Stage, f64)> =
        sizes.into_iter().map(|s| (Stage::Size(s), if p.compared_at(s) { others } else { 1.0 })).collect();
    if !p.mlp_chains().is_empty() {
        stages.push((Stage::Mlp, 1.0));
    }
    let mut largest: Option<Regions> = None;
    let mut mlp = Vec::new();
    ctx.sweep("latency's working sets and parallelism sweep", stages, |stage| {
        match stage {
            Stage::Size(size) => {
                let (pts, rs, regions) = working_set(p, ctx, size, &orders)?;
                ratios.extend(rs);
                points.extend(pts);
                // The largest set's last regions serve the parallelism sweep too.
                if size == max {
                    largest = Some(regions);
                }
            }
            Stage::Mlp => {
                let regions = match largest.take() {
                    Some(r) => r,
                    None => regions_of(p, max)?,
                };
                mlp = mlp_sweep(p, ctx, largest.insert(regions), max)?;
            }
        }
        ctx.progress.advance(1);
        Ok(())
    })?;
    // The curve's points in size order, as a sweep from the smallest
    // would have them (the policies in order within a size).
    points.sort_by_key(|pt| pt.size_bytes);
    let mut regions = largest.unwrap_or_default();
    ctx.progress.advance(1);
    for (_, r) in regions.iter_mut() {
        r.read_back();
    }
    let core_clock: Vec<CoreClock> = [clock_before, core_clock::sample(ctx.clock, ctx.machine.nominal_clocks()).clock]
        .into_iter()
        .flatten()
        .collect();
    let levels = latency_levels(&points, ctx.machine, core_clock::mean_ghz(&core_clock));
    warn(ctx, &regions, &points, max);
    let valid = points.iter().all(|x| x.valid) && mlp.iter().all(|m| m.valid);
    Ok(Outcome {
        seed: p.seed,
        regions: regions.iter().map(|(_, r)| r.backing().clone()).collect(),
        core_clock,
        points,
        levels,
        ratios,
        mlp,
        valid,
    })
}

/// A point of latency's sweep.
enum Stage {
    Size(Bytes),
    Mlp,
}

/// A region for each page policy.
type Regions = Vec<(PagePolicy, Buffer)>;

/// A region of `size` for each page policy.
fn regions_of(p: &Params, size: Bytes) -> Result<Regions> {
    p.pages.iter().map(|&pol| Buffer::new(pol, size).map(|r| (pol, r))).collect()
}

/// One working set, each repetition share on fresh regions (see
/// `per_mapping`), through [`schedule::in_mappings`]: the policies'
/// comparison looked at after `repetitions` and resolved sequentially.
/// Regions of the working set's own size: a small set at the start of a
/// large region reads slower on 4 KiB pages than the same set alone. One
/// mapping's regions are unmapped before the next is mapped (the memory
/// budget holds one set); the last's are returned. The points, the
/// policies' ratios (random order, each policy against the first), and
/// the last regions.
fn working_set(
    p: &Params,
    ctx: &Bench,
    size: Bytes,
    orders: &[(&str, Option<usize>)],
) -> Result<(Vec<Point>, Vec<PolicyRatio>, Regions)> {
    let mut regions: Regions = Vec::new();
    let mut huge: Vec<Option<f64>> = vec![None; orders.len() * p.pages.len()];
    // Each order's cycle, built once and linked into every mapping.
    let lines = (size.0 as usize / LINE).max(2);
    let cycles: Vec<Cycle> = orders
        .iter()
        .map(|&(_, window)| Cycle::of(visit_order(lines, window, p.seed)).expect("a visit order is a permutation"))
        .collect();
    let (plan, per_mapping) = p.plan_at(size, ctx.deadline_ns());
    // The first mapping calibrates each chase's sample; the others reuse it.
    let mut iters: Vec<u64> = Vec::new();
    let mut one = |_k: usize, reps: usize| -> Result<Vec<schedule::Series>> {
        ctx.check_interrupt()?;
        drop(std::mem::take(&mut regions));
        regions = regions_of(p, size)?;
        let mut share = p.group_plan(reps);
        if p.compared_at(size) {
            // Its unit of evidence is a mapping, not a long sample: each
            // sample lasts the shortest sample, past its warm-up.
            share.sample_over_warm = 0.0;
        }
        let (series, fractions) = measure_size(ctx, &mut regions, &cycles, &share, &iters)?;
        if iters.is_empty() {
            iters = series.iter().map(|s| s.iters).collect();
        }
        for (h, f) in huge.iter_mut().zip(fractions) {
            *h = match (*h, f) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
        }
        Ok(series)
    };
    let mapped = schedule::in_mappings(&plan, per_mapping, ctx.clock, &mut one)?;
    let mut points = Vec::new();
    for (i, s) in mapped.series.iter().enumerate() {
        let (order, pages) = (orders[i / p.pages.len()].0, p.pages[i % p.pages.len()]);
        let ns = chases::ns_per_load(s);
        points.push(Point {
            pages,
            order: order.into(),
            size_bytes: Bytes((lines * LINE) as u64),
            loads_per_sample: s.iters,
            latency_ns: Summary::steady_in(&ns, &mapped.mapping_of).expect("samples measured"),
            sample_latency_ns: ns,
            huge_fraction: huge[i],
            valid: s.ok,
        });
    }
    let ratios = plan
        .questions
        .iter()
        .filter_map(|&q| {
            let schedule::Question::Pair { a, b } = q else { return None };
            let ratio = mapped.ratio(q)?;
            Some(PolicyRatio { size_bytes: size, a: p.pages[b], b: p.pages[a], ratio })
        })
        .collect();
    Ok((points, ratios, regions))
}

/// One working set in one mapping: for each order, the chases of every
/// policy interleaved under `share` (the orders share a region's lines, so
/// they take turns; `iters`: each chase's iterations per sample where an
/// earlier mapping calibrated them). Each variant's series, order by order
/// and policy by policy, and each one's huge-page coverage.
fn measure_size(
    ctx: &Bench,
    regions: &mut [(PagePolicy, Buffer)],
    cycles: &[Cycle],
    share: &schedule::Plan,
    iters: &[u64],
) -> Result<(Vec<schedule::Series>, Vec<Option<f64>>)> {
    let (mut all, mut fractions) = (Vec::new(), Vec::new());
    for (c, cycle) in cycles.iter().enumerate() {
        let chases: Vec<RefCell<Chase>> = regions
            .iter_mut()
            .map(|(_, r)| {
                let base = r.as_mut_slice::<u8>().as_mut_ptr();
                // SAFETY: the cycle's lines × 64 bytes <= region length;
                // the region outlives the chase (both live in `run`).
                RefCell::new(unsafe { Chase::of_cycle(base, cycle, |s| s * LINE, 1) })
            })
            .collect();
        let mut plan = share.clone();
        plan.iters = iters.iter().skip(c * chases.len()).take(chases.len()).copied().collect();
        let series = chases::measure(&chases, &plan, ctx, chases::Warm::Caches)?;
        drop(chases);
        for (_, r) in regions.iter_mut() {
            r.read_back();
        }
        fractions.extend(regions.iter().map(|(_, r)| r.backing().huge_fraction));
        all.extend(series);
    }
    Ok((all, fractions))
}

/// K chains at the largest working set: every (policy, K) interleaved.
fn mlp_sweep(p: &Params, ctx: &Bench, regions: &mut [(PagePolicy, Buffer)], size: Bytes) -> Result<Vec<MlpPoint>> {
    let chains = p.mlp_chains();
    let lines = size.0 as usize / LINE;
    let shared: Vec<(PagePolicy, RefCell<Chase>)> = regions
        .iter_mut()
        .map(|(pol, region)| {
            let base = region.as_mut_slice::<u8>().as_mut_ptr();
            // SAFETY: lines × 64 bytes fit the region, which outlives the chase.
            let c = unsafe { Chase::new(base, visit_order(lines, None, p.seed), |s| s * LINE, 1) };
            (*pol, RefCell::new(c))
        })
        .collect();
    let keys: Vec<(usize, usize)> = (0..shared.len()).flat_map(|i| chains.iter().map(move |&k| (i, k))).collect();
    let mut variants: Vec<schedule::Variant> = keys
        .iter()
        .map(|&(i, k)| {
            let chase = &shared[i].1;
            let kernel = chase_kernel(k).expect("checked 1..=16");
            let warm = chases::warm_loads(lines, ctx.machine, chases::Warm::Caches) / k as u64;
            Box::new(move |step: Step| {
                let n = step.iterations(warm.max(1));
                let mut c = chase.borrow_mut();
                c.set_chains(k);
                // SAFETY: the chase's memory outlives this call.
                StepReport::valid(unsafe { c.run(kernel, n) })
            }) as schedule::Variant
        })
        .collect();
    let plan = p.plan();
    let (series, _) = schedule::measure(&plan, ctx.clock, &mut variants, &mut || ctx.check_interrupt())?;
    // ns per load: a step of K chains is K loads.
    let per_load = |j: usize| stats::median(&series[j].per_iter_s()).map_or(f64::NAN, |s| s * 1e9 / keys[j].1 as f64);
    Ok(keys
        .iter()
        .enumerate()
        .map(|(j, &(i, k))| {
            let one = keys.iter().position(|&(ii, kk)| ii == i && kk == 1).expect("K = 1 is always measured");
            MlpPoint {
                pages: shared[i].0,
                size_bytes: size,
                chains: k,
                ns_per_load: per_load(j),
                speedup: per_load(one) / per_load(j),
                valid: series[j].ok,
            }
        })
        .collect())
}

/// Levels of the random-order curve of each policy. A level is named after
/// the cache whose size lies within ×2 of the knee that ends it, where its
/// latency is a cache hit's beside the far level the same run's probe
/// measured ([`is_cache_hit`]: a slower level's knee names nothing, so it
/// cannot take a name from the level that is that cache); the last level
/// is DRAM where its figure (its largest working set) lies at or past
/// where the probe verified memory, as the latency headline says;
/// anything else is "unattributed".
pub fn latency_levels(
    points: &[Point],
    m: &crate::machine::Fingerprint,
    ghz: Option<f64>,
) -> Vec<LatencyLevel> {
    // Only plausible claims name a knee.
    let plausible = m.plausible_data_caches();
    let caches: Vec<KnownLevel> =
        plausible.iter().map(|(name, size)| KnownLevel { name: name.clone(), size: size.0 as f64 }).collect();
    let memory_from = m.chase_in_memory_from();
    let far_ns = m.measured_levels.as_ref().and_then(|l| l.found.far_ns).map(|n| n.0);
    let mut pols: Vec<PagePolicy> = points.iter().map(|p| p.pages).collect();
    pols.sort();
    pols.dedup();
    let mut out = Vec::new();
    for pol in pols {
        let random: Vec<&Point> = points.iter().filter(|p| p.pages == pol && p.order == "random").collect();
        let curve: Vec<(f64, f64)> = random.iter().map(|p| (p.size_bytes.0 as f64, p.latency_ns.median)).collect();
        let lv = knees::levels(&curve, caches.len() + 2, 1.3);
        let samples: Vec<(f64, &[f64])> =
            random.iter().map(|p| (p.size_bytes.0 as f64, &p.sample_latency_ns[..])).collect();
        let halves = knees::half_curves(&samples);
        let mut looks =
            knees::second_looks(&lv, halves.as_ref(), caches.len() + 2, 1.3, |x| Bytes(x as u64).to_string())
                .into_iter();
        // The knees that end a cache hit, each attributed; the others none.
        let hits: Vec<usize> =
            (0..lv.len().saturating_sub(1)).filter(|&i| is_cache_hit(lv[i].value, far_ns)).collect();
        let knee_x: Vec<f64> = hits.iter().map(|&i| lv[i].to_x).collect();
        // A slow level's knee keeps the claim it lies near, for the table
        // to say so, but names nothing.
        let mut names: Vec<Attribution> =
            lv.iter().take(lv.len().saturating_sub(1)).map(|l| attribute(&[l.to_x], &caches).remove(0)).collect();
        for (&i, a) in hits.iter().zip(attribute(&knee_x, &caches)) {
            names[i] = a;
        }
        for (i, l) in lv.iter().enumerate() {
            let after = names.get(i).cloned();
            let in_memory = l.to_x >= memory_from.0 as f64;
            let name = match &after {
                Some(Attribution::Level { name, .. }) if hits.contains(&i) => name.clone(),
                None if in_memory => "DRAM".into(),
                _ => "unattributed".into(),
            };
            out.push(LatencyLevel {
                pages: pol,
                name,
                latency_ns: Nanos(l.value),
                cycles: ghz.map(|g| l.value * g),
                from_bytes: Bytes(l.from_x as u64),
                up_to_bytes: Bytes(l.to_x as u64),
                second_look: (i + 1 < lv.len()).then(|| looks.next()).flatten(),
                knee_after: after,
            });
        }
    }
    out
}

/// A cache answers at least
/// [`FAR_OVER_NEAR`](crate::analysis::levels::FAR_OVER_NEAR) times faster
/// than what lies beyond every cache, the probe's own rule for its far
/// level: a level slower than that beside the far level the run's probe
/// measured (a shared L3 that neighbours fill can read two thirds of the
/// far level) is no cache hit, whatever
/// claim its knee lies near. The probe chases huge pages where it can, so
/// a 4 KiB level, which adds page walks, meets this bound first. Without a
/// measured far level, nothing contradicts the claim.
pub fn is_cache_hit(latency_ns: f64, far_ns: Option<f64>) -> bool {
    far_ns.is_none_or(|far| latency_ns * crate::analysis::levels::FAR_OVER_NEAR <= far)
}

/// Each point's figure (its samples' steady stretch) and the levels drawn
/// again from the document's points by today's rules
/// (`memperf report --reanalyze`); `ghz` is a clock two chains agreed on.
fn reanalyze(o: &mut Outcome, m: &crate::machine::Fingerprint, ghz: Option<f64>) {
    // Where the mappings are known (a comparison at the point's size
    // records them); elsewhere the recorded figure stands.
    for p in &mut o.points {
        let Some(r) = o.ratios.iter().find(|r| r.size_bytes == p.size_bytes && r.ratio.values.len() == p.sample_latency_ns.len()) else {
            continue;
        };
        match Summary::steady_in(&p.sample_latency_ns, &r.ratio.mapping_of) {
            Some(s) if s.steady != p.latency_ns.steady => p.latency_ns = s,
            _ => {}
        }
    }
    o.levels = latency_levels(&o.points, m, ghz);
}

fn warn(ctx: &Bench, regions: &[(PagePolicy, Buffer)], points: &[Point], max: Bytes) {
    // Past where the probe verified memory, the far figure is memory's.
    let (llc, _) = ctx.machine.sizing_llc();
    let in_memory = max >= ctx.machine.chase_in_memory_from();
    if max.0 < 4 * llc.0 && !in_memory {
        ctx.warn(Caution::LatencyMaxBelow4xLlc { max, llc });
    }
    // Every region a THP point was measured in, the largest included.
    let thp = regions
        .iter()
        .filter(|(pol, _)| *pol == PagePolicy::Thp)
        .filter_map(|(_, r)| r.backing().huge_fraction)
        .chain(points.iter().filter(|p| p.pages == PagePolicy::Thp).filter_map(|p| p.huge_fraction));
    if let Some(fraction) = thp.filter(|f| *f < 0.9).reduce(f64::min) {
        ctx.warn(Caution::ThpPartial { what: "region", fraction });
    }
}

impl crate::model::Redraw for Outcome {
    fn without_cycles(&mut self) {
        self.levels.iter_mut().for_each(|l| l.cycles = None);
    }
    /// At the clock it measured around itself, where the document's holds.
    fn reanalyse(&mut self, machine: &crate::machine::Fingerprint, ghz: Option<f64>) -> Vec<&'static str> {
        let own = ghz.and(crate::timing::core_clock::mean_ghz(&self.core_clock).or(ghz));
        reanalyze(self, machine, own);
        vec!["points", "levels"]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The Zen 3 recording's quick suite: its 4 KiB level from 2 to
    /// 32 MiB reads 196 ns, its knee at the 32 MiB L3's size, beside a far
    /// level the probe measured at 276 ns from 4 MiB: no L3 hit, so
    /// "unattributed"; without the probe's figure the claim names it. The
    /// last level is DRAM where its largest working set lies at or past
    /// where memory begins: the probe did not verify it, but its 256 MiB is
    /// eight times the 32 MiB L3, memory by size alone.
    #[test]
    fn a_level_as_slow_as_memory_is_named_after_no_cache() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/machines/amd-epyc-zen3-kvm-2vcpu/run-quick.json");
        let doc = crate::model::journal::load(&path).unwrap();
        let o = doc.outcome::<Outcome>().unwrap();
        let named = |m: &crate::machine::Fingerprint| -> Vec<String> {
            latency_levels(&o.points, m, None)
                .into_iter()
                .filter(|l| l.pages == PagePolicy::Small && l.from_bytes >= Bytes(2 * crate::units::MIB))
                .map(|l| format!("{} {:.0}", l.name, l.latency_ns.0))
                .collect()
        };
        assert_eq!(named(&doc.machine), ["unattributed 196", "DRAM 427"]);
        assert_eq!(doc.machine.chase_in_memory_from(), Bytes(256 * crate::units::MIB));
        let mut verified = doc.machine.clone();
        verified.measured_levels.as_mut().unwrap().found.memory_from = Some(Bytes(8 * crate::units::MIB));
        assert_eq!(named(&verified), ["unattributed 196", "DRAM 427"]);
        let mut unmeasured = verified.clone();
        unmeasured.measured_levels.as_mut().unwrap().found.far_ns = None;
        assert_eq!(named(&unmeasured), ["L3 196", "DRAM 427"]);
        assert!(is_cache_hit(138.0, Some(276.0)) && !is_cache_hit(138.5, Some(276.0)) && is_cache_hit(500.0, None));
        // A THP level from 2 to 256 MiB is DRAM where its figure, at
        // 256 MiB, lies past the verified start, as the headline says.
        let thp: Vec<String> = latency_levels(&o.points, &verified, None)
            .into_iter()
            .filter(|l| l.pages == PagePolicy::Thp)
            .map(|l| l.name)
            .collect();
        assert_eq!(thp.last().map(String::as_str), Some("DRAM"), "{thp:?}");
    }

    /// On every recorded machine the quick sweep ends at the host
    /// reference's region, whatever the probe will find, and compares the
    /// policies there.
    #[test]
    fn the_quick_dram_point_is_the_reference_s_region() {
        for dir in crate::test_support::recording_dirs() {
            let m = crate::machine::read(&crate::machine::source::Source::recorded(&dir).unwrap());
            let dram = dram_point(&m);
            let p = Params::preset(Preset::Quick, &m);
            assert_eq!(p.sizes_bytes.last(), Some(&dram), "{}: {:?}", dir.display(), p.sizes_bytes);
            assert!(p.compared_at(dram), "{}", dir.display());
        }
    }

    #[test]
    fn size_sweep_doubles_or_steps_by_root_two() {
        let s = size_sweep(Bytes(4096), Bytes(65536), 1);
        assert_eq!(s, vec![Bytes(4096), Bytes(8192), Bytes(16384), Bytes(32768), Bytes(65536)]);
        let s2 = size_sweep(Bytes(4096), Bytes(16384), 2);
        assert_eq!(s2.len(), 5);
        assert!(s2.iter().all(|b| b.0 % 64 == 0));
    }

    /// The sequential plan of a working set asks each policy's random
    /// chase against the first's (variants order by order, policy by
    /// policy), looks first after `repetitions` and at most after
    /// `max_repetitions`, and keeps the precision target; a share is
    /// exactly its repetitions.
    #[test]
    fn a_working_set_resolves_each_policy_against_the_first() {
        let m = crate::machine::collect();
        let mut p = Params::preset(Preset::Quick, &m);
        p.pages = vec![PagePolicy::Small, PagePolicy::Thp, PagePolicy::Huge2M];
        (p.repetitions, p.max_repetitions, p.precision) = (10, 40, Some(0.03));
        let plan = p.sequential_plan(Some(7));
        use schedule::Question::Pair;
        assert_eq!(plan.questions, [Pair { a: 1, b: 0 }, Pair { a: 2, b: 0 }]);
        assert_eq!((plan.repetitions, plan.max_repetitions, plan.precision), (10, 40, Some(0.03)));
        assert_eq!(plan.stop_looking_at_ns, Some(7));
        let share = p.group_plan(2);
        assert_eq!((share.repetitions, share.max_repetitions, share.precision), (2, 2, None));
    }
}
