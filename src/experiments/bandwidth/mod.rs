//! `memperf bandwidth`: read and write bandwidth of one core and of all
//! cores, for each loop shape, and how much software prefetch at distance D
//! helps (after J. McCalpin, "Optimizing AMD Opteron Memory Bandwidth",
//! 2010). Every variant (policy × threads × kernel × hint × distance) is
//! measured interleaved, repetition by repetition, each thread pinned on
//! its own slice; the effect of prefetch is the ratio to `simd` within each
//! repetition. Every sample is validated: a read's checksum against its
//! closed form, a write's stored elements read back. The method, step by
//! step: docs/methods/bandwidth.md.

pub mod options;

pub use options::Options;
mod frames;
mod summary;
mod validate;

use summary::{headlines, plateaus, prefetch_effects};
use validate::{evict_spots, read_a, spots, stored_as_defined};

use crate::analysis::plateau;
use crate::error::{Error, Result};
use crate::experiments::stream_arrays::Array;
use crate::experiments::{Bench, Experiment, Preset};
use crate::kernels::{pattern_sum, stream_kernel, write, Hint, StreamArg, StreamKernel, StreamKernelInfo, StreamShape};
use crate::memory::{Backing, PagePolicy};
pub use crate::model::outcome::bandwidth::*;
use crate::model::Caution;
use crate::timing::schedule::{self, StepReport, Ratio, Step};
use crate::timing::{Clock, Summary, Team};
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
    /// Samples per variant (after one untimed warm-up pass). At least 20
    /// let the best distance be chosen on half and judged on the other
    /// half's ten pairs, the fewest a verdict rests on.
    pub repetitions: usize,
    /// Each sample runs enough passes to last at least this long.
    pub min_sample_s: f64,
    /// A variant whose bandwidth CV exceeds this is flagged noisy.
    pub noise_cv: f64,
    /// Seed of the shuffled measurement order.
    pub seed: u64,
    /// 2: plain `simd` also reads fragmented memory (4 KiB pages first
    /// touched in a shuffled order) beside the read array at every thread
    /// count, a figure and a verdict of its own. 1: the read array alone.
    #[serde(default = "one")]
    pub frame_sets: usize,
}

fn one() -> usize {
    1
}

impl Params {
    pub fn preset(preset: Preset, machine: &crate::machine::Fingerprint) -> Params {
        let all = crate::timing::team::allowed_cpus().len().max(1);
        let mut threads = vec![1, all];
        threads.dedup();
        // One read array and four write arrays live at once.
        let verified = in_memory_floor(machine).map_or(0, |b| b.0);
        let at_least = |factor, floor: u64| super::budget::memory_size(machine, factor, Bytes(floor.max(verified)), 5).0;
        let (size, distances, hints, reps) = match preset {
            // A prefetch distance is chosen on the even repetitions and
            // judged on the odd: twenty give its verdict the ten pairs a
            // verdict needs. Three distances (a plateau's least) of one
            // hint are what the quick minute holds beside the kernels.
            Preset::Quick => (at_least(4, 64 << 20), Sweep { start: 0, end: 1024, step: 512 }, vec![Hint::T0], 20),
            Preset::Default => {
                (at_least(8, GIB), Sweep { start: 0, end: 1024, step: 64 }, vec![Hint::T0, Hint::Nta], 20)
            }
            Preset::Full => (at_least(8, GIB), Sweep { start: 0, end: 1024, step: 32 }, Hint::ALL.to_vec(), 24),
        };
        Params {
            kernels: StreamShape::all(),
            pages: vec![PagePolicy::Small],
            threads,
            size_bytes: Bytes(size),
            distance_elements: distances,
            hints,
            repetitions: reps,
            min_sample_s: if preset == Preset::Quick { 0.005 } else { 0.01 },
            noise_cv: 0.05,
            seed: 0x6261_6e64,
            frame_sets: 2,
        }
    }
}

pub struct Bandwidth;

impl Experiment for Bandwidth {
    const NAME: &'static str = "bandwidth";
    const SHARE: f64 = 5.0;
    type Params = Params;
    type Outcome = Outcome;

    fn preset(preset: crate::experiments::Preset, machine: &crate::machine::Fingerprint) -> Params {
        Params::preset(preset, machine)
    }

    fn needs(p: &Params) -> Result<crate::experiments::Needs> {
        check(p)?;
        let mut mapped: Vec<_> =
            p.pages.iter().map(|&pol| (pol, p.size_bytes.round_up(pol.page_size().0).0)).collect();
        if frames::measures_frames(p) {
            mapped.push((PagePolicy::Small, p.size_bytes.round_up(4096).0 * frames::extra_small_arrays(p)));
            mapped.push((PagePolicy::Thp, p.size_bytes.round_up(PagePolicy::Thp.page_size().0).0));
        }
        Ok(crate::experiments::Needs { levels: true, mapped, ..Default::default() })
    }
    fn run(p: &Params, ctx: &Bench) -> Result<Outcome> {
        run(p, ctx)
    }
}

/// The least array the headline read may use, where the probe read: from
/// where it saw one thread's read rate stop changing; where it did not (a
/// guest whose rate still falls at the probe's largest size), the probe's
/// largest size or four times the last-level cache (STREAM's rule),
/// whichever is larger, though never past where a read is memory's by
/// size. Below it the headline would be partly a cache's and not set
/// beside STREAM's or likwid-bench's DRAM figure. `None` where the probe
/// read nothing.
fn in_memory_floor(m: &crate::machine::Fingerprint) -> Option<Bytes> {
    let probed = m.measured_levels.as_ref().and_then(|l| l.read_rates.last())?.size_bytes.0;
    Some(m.read_memory_from().unwrap_or_else(|| {
        let four = 4 * m.sizing_llc().0 .0;
        Bytes(probed.max(four).min(m.memory_by_size().0.max(four)))
    }))
}

/// More arrays than this tell no more about frames than a rerun would.
const MAX_FRAME_SETS: usize = 2;

pub(crate) fn check(p: &Params) -> Result<()> {
    if p.kernels.is_empty() || p.pages.is_empty() || p.threads.is_empty() {
        return Err(Error::usage("--kernel, --pages and --threads each need at least one value"));
    }
    if p.kernels.contains(&StreamShape::SimdPrefetch) && p.hints.is_empty() {
        return Err(Error::usage("simd-prefetch needs at least one --hint"));
    }
    if p.repetitions == 0 {
        return Err(Error::usage("--repetitions must be at least 1"));
    }
    if !(1..=MAX_FRAME_SETS).contains(&p.frame_sets) {
        return Err(Error::usage(format!(
            "--frame-sets {} is out of range: use 1 (the read array alone) or {MAX_FRAME_SETS} (beside fragmented memory)",
            p.frame_sets
        )));
    }
    if p.size_bytes.0 < 4096 {
        return Err(Error::usage(format!("--size {} is below one page", p.size_bytes)));
    }
    // A prefetch further ahead than 8 MiB (or than the array) is no longer
    // a prefetch of the stream being read.
    let max_d = (1u64 << 20).min(p.size_bytes.0 / 8);
    if p.distance_elements.end > max_d {
        return Err(Error::usage(format!(
            "--distance {} is out of range: use distances up to {max_d} elements ({})",
            p.distance_elements,
            Bytes(max_d * 8)
        )));
    }
    Ok(())
}

/// Every variant; plain `simd` joins whenever prefetch variants are asked
/// for, since each of them is compared with it.
pub fn variants(p: &Params) -> Vec<Variant> {
    let mut kernels = p.kernels.clone();
    if kernels.contains(&StreamShape::SimdPrefetch) && !kernels.contains(&StreamShape::Simd) {
        kernels.insert(0, StreamShape::Simd);
    }
    let mut v = Vec::new();
    for &pages in &p.pages {
        for &threads in &p.threads {
            for &kernel in &kernels {
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

/// What bandwidth measures, in its order of value within its share: the
/// headline read and its prefetch comparison, fragmented memory, then
/// the other kernels.
enum Stage {
    Variants(Vec<Variant>),
    FrameSets,
}

impl Stage {
    fn asked(&self, p: &Params) -> bool {
        match self {
            Stage::Variants(vs) => !vs.is_empty(),
            Stage::FrameSets => frames::measures_frames(p),
        }
    }
}

/// `simd` and its prefetch: the headline and the prefetch verdict.
fn in_core(v: &Variant) -> bool {
    matches!(v.kernel, StreamShape::Simd | StreamShape::SimdPrefetch)
}

/// For each variant, the index of plain `simd` of its policy and threads
/// (prefetch variants only): the sample measured next to it.
fn references(variants: &[Variant]) -> Vec<Option<usize>> {
    variants
        .iter()
        .map(|v| {
            v.hint?;
            variants.iter().position(|r| {
                r.kernel == StreamShape::Simd && r.pages == v.pages && r.threads == v.threads && r.hint.is_none()
            })
        })
        .collect()
}

/// The arrays of every page policy: the read array, and the write arrays
/// when a write kernel is asked for.
struct Arrays {
    read: Vec<(PagePolicy, Array)>,
    write: Vec<(PagePolicy, Array)>,
}

impl Arrays {
    fn new(p: &Params, team: &Team, clock: &dyn Clock) -> Result<Arrays> {
        let alloc = |parts: usize| -> Result<Vec<(PagePolicy, Array)>> {
            p.pages.iter().map(|&pol| Array::new(pol, p.size_bytes, parts, team, 0, clock).map(|a| (pol, a))).collect()
        };
        let write = if p.kernels.iter().any(|k| k.writes()) { alloc(4)? } else { Vec::new() };
        Ok(Arrays { read: alloc(1)?, write })
    }

    fn of(&self, v: &Variant) -> &Array {
        let set = if v.kernel.writes() { &self.write } else { &self.read };
        &set.iter().find(|(pol, _)| *pol == v.pages).expect("allocated").1
    }

    fn all_mut(&mut self) -> impl Iterator<Item = &mut Array> {
        self.read.iter_mut().chain(self.write.iter_mut()).map(|(_, a)| a)
    }
}

fn run(p: &Params, ctx: &Bench) -> Result<Outcome> {
    check(p)?;
    let teams: Vec<(usize, Team)> =
        p.threads.iter().map(|&t| Team::new(t).map(|team| (t, team))).collect::<Result<_>>()?;
    warn_preconditions(p, ctx);
    let widest = teams.iter().max_by_key(|t| t.0).map(|t| &t.1).expect("checked non-empty");
    let mut arrays = Arrays::new(p, widest, ctx.clock)?;
    let len = arrays.read[0].1.len;
    let (core, rest): (Vec<Variant>, Vec<Variant>) = variants(p).into_iter().partition(in_core);
    let mut measured: Vec<(Variant, (StreamKernel, StreamKernelInfo), schedule::Series)> = Vec::new();
    let mut migrated: Migrations = Vec::new();
    let mut frame_sets = Vec::new();
    let stages = [Stage::Variants(core), Stage::FrameSets, Stage::Variants(rest)];
    let stages: Vec<Stage> = stages.into_iter().filter(|s| s.asked(p)).collect();
    ctx.sweep_even("bandwidth's stages (simd and its prefetch, fragmented memory, the other kernels)", stages, |stage| {
        match stage {
            Stage::Variants(vs) => {
                let kernels: Vec<_> = vs.iter().map(|v| stream_kernel(v.kernel, v.hint)).collect::<Result<_>>()?;
                let (series, moved) = measure(p, ctx, &vs, &kernels, &arrays, &teams)?;
                migrated.extend(moved);
                measured.extend(vs.into_iter().zip(kernels).zip(series).map(|((v, k), s)| (v, k, s)));
            }
            Stage::FrameSets => frame_sets = measure_frame_sets(p, ctx, &arrays, &teams)?,
        }
        Ok(())
    })?;
    let variants: Vec<Variant> = measured.iter().map(|m| m.0.clone()).collect();
    let kernels: Vec<(StreamKernel, StreamKernelInfo)> = measured.iter().map(|m| m.1.clone()).collect();
    let series: Vec<schedule::Series> = measured.into_iter().map(|m| m.2).collect();
    let results = results(&variants, &kernels, &series, len);
    for a in arrays.all_mut() {
        a.region.read_back();
        warn_coverage(a.region.backing(), ctx);
    }
    warn_results(&results, p, ctx);
    if migrated.iter().any(|m| m.1 > 0) {
        ctx.warn(Caution::Migrated { samples: migrated.iter().map(|m| m.1).sum() });
    }
    let plateaus = plateaus(&results);
    Ok(Outcome {
        isa: kernels.iter().map(|k| k.1.isa.clone()).find(|i| i != "scalar").unwrap_or_else(|| "scalar".into()),
        size_bytes: Bytes(len as u64 * 8),
        regions: arrays.read.iter().chain(&arrays.write).map(|(_, a)| a.region.backing().clone()).collect(),
        placement: teams
            .iter()
            .map(|(n, t)| Placement {
                threads: *n,
                cpus: t.cpus().to_vec(),
                migrated_samples: migrated.iter().filter(|m| m.0 == *n).map(|m| m.1).sum(),
                slice_nodes: arrays.read[0].1.slice_nodes(*n),
            })
            .collect(),
        order_seed: p.seed,
        headlines: headlines(&results, &frame_sets),
        frame_sets,
        prefetch_effects: prefetch_effects(&results, &plateaus),
        plateaus,
        valid: results.iter().all(|r| r.checksum_ok),
        results,
    })
}

/// The 4 KiB read array against fragmented memory ([`frames`]), measured
/// after `simd` and its prefetch and before the other kernels (its own
/// stage of the sweep).
fn measure_frame_sets(p: &Params, ctx: &Bench, arrays: &Arrays, teams: &[(usize, Team)]) -> Result<Vec<FrameSets>> {
    let Some((_, first)) = arrays.read.iter().find(|(pol, _)| *pol == PagePolicy::Small) else {
        return Ok(Vec::new());
    };
    frames::measure(p, ctx, first, teams)
}

/// Per thread count, the samples in which a thread left its CPU.
type Migrations = Vec<(usize, usize)>;

/// One sample of a read kernel: the sum of every pass must be the array's.
fn read_sample<'a>(
    kernel: StreamKernel,
    args: Vec<StreamArg>,
    team: &'a Team,
    ctx: &'a Bench,
    moved: &'a std::cell::Cell<usize>,
    expected_pass: f64,
) -> schedule::Variant<'a> {
    Box::new(move |step: Step| {
        let n = step.iterations(1);
        // SAFETY: every slice lies inside the array, alive for the call.
        let run = team.run(ctx.clock, |t| unsafe { kernel(n, &args[t]) });
        if run.placement.iter().any(|pl| !pl.stayed()) {
            moved.set(moved.get() + 1);
        }
        let sum: f64 = run.results.iter().sum();
        StepReport::timed(sum == expected_pass * n as f64, run.elapsed_ns)
    })
}

/// One sample of a write kernel: every thread stores its slice of A `n`
/// times, each pass with its own scalar; then what the last pass stored is
/// read back (untimed).
fn write_sample<'a>(
    (kernel, op): (StreamKernel, u8),
    args: Vec<StreamArg>,
    team: &'a Team,
    ctx: &'a Bench,
    moved: &'a std::cell::Cell<usize>,
) -> schedule::Variant<'a> {
    let mut passes = 0u64;
    let spots = spots(&args);
    Box::new(move |step: Step| {
        let n = step.iterations(1);
        let before: Vec<f64> =
            if op == write::UPDATE { spots.iter().map(|&s| read_a(&args, s)).collect() } else { vec![] };
        evict_spots(&args, &spots);
        let this: Vec<StreamArg> = args.iter().map(|a| StreamArg { first_pass: passes, ..*a }).collect();
        // SAFETY: every slice and its sources lie inside the write array, alive for the call.
        let run = team.run(ctx.clock, |t| unsafe { kernel(n, &this[t]) });
        if run.placement.iter().any(|pl| !pl.stayed()) {
            moved.set(moved.get() + 1);
        }
        let stored: f64 = run.results.iter().sum();
        let total: usize = args.iter().map(|a| a.len).sum();
        let ok = stored == (n as usize * total) as f64 && stored_as_defined(op, &this, &spots, passes, n, &before);
        passes += n;
        StepReport::timed(ok, run.elapsed_ns)
    })
}

/// Every variant through the scheduler: a warm-up pass, samples of at
/// least `min_sample_s`, shuffled order, `simd` next to every block of
/// prefetch variants. Returns the series and, per thread count, the
/// samples in which a thread left its CPU.
fn measure(
    p: &Params,
    ctx: &Bench,
    variants: &[Variant],
    kernels: &[(StreamKernel, StreamKernelInfo)],
    arrays: &Arrays,
    teams: &[(usize, Team)],
) -> Result<(Vec<schedule::Series>, Migrations)> {
    let expected_pass = pattern_sum(0, arrays.read[0].1.len);
    let migrated: Vec<(usize, std::cell::Cell<usize>)> = teams.iter().map(|t| (t.0, 0.into())).collect();
    let mut closures: Vec<schedule::Variant> = variants
        .iter()
        .zip(kernels)
        .map(|(v, (kernel, _))| {
            let array = arrays.of(v);
            let team = &teams.iter().find(|(n, _)| *n == v.threads).expect("built").1;
            let moved = &migrated.iter().find(|m| m.0 == v.threads).expect("built").1;
            match crate::kernels::write::Op::of(v.kernel) {
                Some(op) => write_sample((*kernel, op as u8), array.write_slices(v.threads), team, ctx, moved),
                None => {
                    let args = array.slices(v.threads, v.distance_elements.unwrap_or(0) as usize);
                    read_sample(*kernel, args, team, ctx, moved, expected_pass)
                }
            }
        })
        .collect();
    let mut plan = schedule::Plan::new(p.repetitions, p.min_sample_s);
    plan.reference_of = references(variants);
    plan.seed = p.seed;
    let series = ctx.measure("bandwidth", &plan, &mut closures)?;
    drop(closures);
    Ok((series, migrated.iter().map(|m| (m.0, m.1.get())).collect()))
}

fn results(
    variants: &[Variant],
    kernels: &[(StreamKernel, StreamKernelInfo)],
    series: &[schedule::Series],
    len: usize,
) -> Vec<VariantResult> {
    // Same bytes per pass: the bandwidth ratio is simd's time over ours.
    // Only variants with a reference have adjacent samples (the rest: none).
    let ratios: Vec<Vec<f64>> = series
        .iter()
        .map(schedule::Series::speed_over_reference)
        .collect();
    variants
        .iter()
        .zip(series)
        .enumerate()
        .map(|(i, (v, s))| {
            let traffic = kernels[i].1.traffic;
            let elements = len as u64 * s.iters;
            let bytes = elements * traffic.program_bytes();
            let bus = elements * traffic.bus_bytes();
            let per_s = |b: u64| -> Vec<f64> { s.samples_s.iter().map(|t| b as f64 / t).collect() };
            VariantResult {
                variant: v.clone(),
                isa: kernels[i].1.isa.clone(),
                traffic,
                passes: s.iters,
                bytes_per_sample: bytes,
                bus_bytes_per_sample: bus,
                samples_s: s.samples_s.clone(),
                bytes_per_s: Summary::steady_of(&per_s(bytes)).expect("at least one finite sample"),
                bus_bytes_per_s: Summary::steady_of(&per_s(bus)).expect("at least one finite sample"),
                ratio_to_simd: Ratio::of(&ratios[i]),
                ratios_to_simd: ratios[i].clone(),
                checksum_ok: s.ok,
            }
        })
        .collect()
}

/// Warns of an array under 4× the last-level cache (STREAM's rule), unless
/// this run's probe verified that every thread count asked for reads it in
/// memory (the run's own evidence outranks the rule, and the headlines then
/// say "DRAM"); where one thread's read is verified and many threads' is
/// not, the warning says so.
fn warn_preconditions(p: &Params, ctx: &Bench) {
    let (llc, _) = ctx.machine.sizing_llc();
    let widest = p.threads.iter().copied().max().unwrap_or(1);
    if p.size_bytes.0 >= 4 * llc.0 || p.size_bytes >= ctx.machine.read_in_memory_from_on(widest) {
        return;
    }
    // The warning says "verified in this run": only the run's own evidence.
    let one_in_memory = ctx.machine.read_verified_from().filter(|&from| p.size_bytes >= from);
    ctx.warn(Caution::WorkingSetInCache { size: p.size_bytes, llc, threads: widest, one_in_memory });
}

fn warn_coverage(b: &Backing, ctx: &Bench) {
    if b.requested == PagePolicy::Thp {
        if let Some(f) = b.huge_fraction.filter(|&f| f < 0.9) {
            ctx.warn(Caution::ThpPartial { what: "array", fraction: f });
        }
    }
}

fn warn_results(results: &[VariantResult], p: &Params, ctx: &Bench) {
    let noisy: Vec<&VariantResult> = results.iter().filter(|r| r.bytes_per_s.cv > p.noise_cv).collect();
    if !noisy.is_empty() {
        let worst = noisy.iter().map(|r| r.bytes_per_s.cv).fold(0.0, f64::max);
        ctx.warn(Caution::Noisy { noisy: noisy.len(), total: results.len(), limit_cv: p.noise_cv, worst_cv: worst });
    }
    if results.iter().any(|r| !r.checksum_ok) {
        ctx.warn(Caution::Checksum { what: "bandwidth" });
    }
}

/// Plateaus and prefetch effects drawn again from the document's results
/// by today's rules (`memperf report --reanalyze`).
fn reanalyze(o: &mut Outcome) {
    for r in &mut o.results {
        let per_s = |b: u64| -> Vec<f64> { r.samples_s.iter().map(|t| b as f64 / t).collect() };
        if let (Some(bytes), Some(bus)) =
            (Summary::steady_of(&per_s(r.bytes_per_sample)), Summary::steady_of(&per_s(r.bus_bytes_per_sample)))
        {
            // Where the stretch found is the recorded one, the figures stand.
            if bytes.steady != r.bytes_per_s.steady {
                (r.bytes_per_s, r.bus_bytes_per_s) = (bytes, bus);
            }
        }
    }
    o.headlines = headlines(&o.results, &o.frame_sets);
    o.plateaus = plateaus(&o.results);
    o.prefetch_effects = prefetch_effects(&o.results, &o.plateaus);
}

impl crate::model::Redraw for Outcome {
    fn reanalyse(&mut self, _: &crate::machine::Fingerprint, _: Option<f64>) -> Vec<&'static str> {
        reanalyze(self);
        vec!["results", "headlines", "plateaus", "prefetch_effects"]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The kernel table of docs/methods/bandwidth.md is made from the
    /// kernel facts (bytes per element index).
    #[test]
    fn schema_of_the_docs_kernel_table_is_the_kernel_facts() {
        use memperf_model::kernels::{Checksum, KERNEL_FACTS};
        let mut t = String::from(
            "| kernel | each element | read | written | write-allocate | flops | arrays | checksum |\n|---|---|---|---|---|---|---|---|\n",
        );
        for f in &KERNEL_FACTS {
            let sum = match f.checksum {
                Checksum::PatternSum => "the pattern's sum over the array",
                Checksum::ElementsStored => "elements stored; A as the formula says",
            };
            t.push_str(&format!(
                "| `{}` | {} | {} B | {} B | {} B | {} | {} | {sum} |\n",
                f.name,
                f.formula,
                8 * f.reads,
                8 * f.writes,
                8 * f.write_allocate,
                f.flops,
                f.streams
            ));
        }
        crate::test_support::assert_generated_block_is_current("docs/methods/bandwidth.md", "kernel facts", &t);
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
            seed: 1,
            frame_sets: 1,
        };
        let v = variants(&p);
        assert_eq!(v.len(), 2 * (1 + 2 * 3));
        assert_eq!(v[1].label(), "simd-prefetch/t0/D=0");
        assert_eq!(v[6].label(), "simd-prefetch/nta/D=64");
    }

    /// On every recorded machine (the level each sized from: measured, or a
    /// plausible claim), an array of 1 MiB is warned about as read from
    /// cache, naming that level, and the quick suite's arrays are not.
    #[test]
    fn every_recorded_machine_warns_of_a_cached_array_and_not_of_the_suites() {
        let clock = crate::timing::FakeClock::stepping(vec![1]);
        for (name, doc) in crate::test_support::recorded_suites() {
            let m = &doc.machine;
            let warned = |size: u64| {
                let ctx = Bench::new(m, &clock, &super::super::NoProgress);
                let p = Params { size_bytes: Bytes(size), ..Params::preset(Preset::Quick, m) };
                warn_preconditions(&p, &ctx);
                ctx.take_warnings().into_iter().find(|w| w.code == "working-set-in-cache")
            };
            let (llc, _) = m.sizing_llc();
            let w = warned(1 << 20).unwrap_or_else(|| panic!("{name}: 1 MiB against {llc}"));
            assert!(w.message.contains(&llc.to_string()), "{name}: {}", w.message);
            let quick = Params::preset(Preset::Quick, m).size_bytes;
            assert!(warned(quick.0).is_none(), "{name}: the suite's {quick} against {llc}");
        }
    }

    /// Where a recording's probe verified memory below 4× the last-level
    /// cache, an array of that size read by one thread is not warned about
    /// (the run's own evidence), and one of half that size still is; read
    /// by many threads too, it is warned about naming them until it also
    /// outgrows twice the claimed cache. The 16-CPU Intel guest's (300 MiB
    /// claimed, memory verified from 256 MiB) is one.
    #[test]
    fn an_array_where_the_run_verified_memory_is_not_warned_about() {
        let clock = crate::timing::FakeClock::stepping(vec![1]);
        let (mut one, mut many_threads) = (0, 0);
        for (name, doc) in crate::test_support::recorded_suites() {
            let m = &doc.machine;
            let (llc, _) = m.sizing_llc();
            let Some(v) = m.read_memory_from().filter(|v| v.0 < 4 * llc.0) else { continue };
            let warned = |size: Bytes, threads: Vec<usize>| {
                let ctx = Bench::new(m, &clock, &super::super::NoProgress);
                warn_preconditions(&Params { size_bytes: size, threads, ..Params::preset(Preset::Quick, m) }, &ctx);
                ctx.take_warnings().into_iter().find(|w| w.code == "working-set-in-cache").map(|w| w.message)
            };
            assert_eq!(warned(v, vec![1]), None, "{name}: memory verified from {v}, under 4× {llc}");
            let half = warned(Bytes(v.0 / 2), vec![1]).unwrap_or_else(|| panic!("{name}: half of {v} is not verified"));
            assert!(!half.contains("one thread's read is in memory"), "{name}: {half}");
            let many = m.read_memory_from_on(16).expect("one thread's is verified");
            if many > v && many.0 < 4 * llc.0 {
                let w = warned(v, vec![1, 16]).unwrap_or_else(|| panic!("{name}: 16 threads at {v}, verified from {many}"));
                assert!(w.contains("more than one thread at once (up to 16 here)"), "{name}: {w}");
                assert!(w.contains(&format!("one thread's read is in memory from {v}")), "{name}: {w}");
                assert_eq!(warned(many, vec![1, 16]), None, "{name}: 16 threads at {many}");
                many_threads += 1;
            }
            one += 1;
        }
        assert!(one > 0, "no recording verified memory below 4× its last-level cache");
        assert!(many_threads > 0, "no recording verified one thread's read below many threads' bound");
    }

    /// The whole experiment on a fake clock: every team run lasts exactly
    /// one 1 ms step, so every figure is known in closed form.
    #[test]
    fn end_to_end_on_a_fake_clock_gives_exact_figures() {
        let p = Params {
            kernels: vec![StreamShape::SimdPrefetch],
            distance_elements: Sweep { start: 0, end: 256, step: 64 },
            frame_sets: 1,
            ..frames_params()
        };
        let o = on_a_fake_clock(&p);
        assert!(o.valid);
        assert_eq!(o.results.len(), 1 + 5, "simd joins the prefetch variants it is compared with");
        for r in &o.results {
            assert_eq!(r.passes, 1, "1 ms per sample already exceeds the 0.5 ms minimum");
            assert_eq!(r.samples_s, vec![0.001; 10]);
            assert_eq!(r.bytes_per_s.median, (1u64 << 20) as f64 / 0.001);
        }
        let prefetch: Vec<&VariantResult> = o.results.iter().filter(|r| r.variant.hint.is_some()).collect();
        for r in &prefetch {
            assert_eq!(r.ratios_to_simd, vec![1.0; 10], "paired with the simd sample next to it");
        }
        match &o.plateaus[0].plateau {
            plateau::Plateau::Found { start, end, points, value, .. } => {
                assert_eq!((*start, *end, *points), (0, 256, 5));
                assert_eq!(*value, (1u64 << 20) as f64 / 0.001);
            }
            other => panic!("{other:?}"),
        }
        let e = &o.prefetch_effects[0];
        assert_eq!((e.confirmed.n, e.confirmed.estimate), (5, 1.0), "confirmed on the 5 odd repetitions");
        assert_eq!(e.verdict, Effect::NotResolved, "five pairs give no 98% interval");
        assert_eq!(o.headlines[0].simd_bytes_per_s, (1u64 << 20) as f64 / 0.001);
        assert_eq!(o.placement[0].migrated_samples, 0);
        assert!(o.frame_sets.is_empty(), "one frame set asked for: the read array alone");
    }

    /// Frame sets on the fake clock: every array read in every round, each
    /// beside the first, and the headline the median of the round medians.
    #[test]
    fn frame_sets_on_a_fake_clock_give_exact_figures() {
        let p = Params { frame_sets: 2, ..frames_params() };
        let o = on_a_fake_clock(&p);
        assert!(o.valid);
        assert_eq!(o.frame_sets.iter().map(|f| (f.threads, f.arrays.len())).collect::<Vec<_>>(), [(1, 2)]);
        let rate = (1u64 << 20) as f64 / 0.001;
        for f in &o.frame_sets {
            // The read array's rate every round: the headline's samples.
            assert_eq!(f.round_medians_bytes_per_s, vec![rate; 10]);
            assert!(f.arrays[0].ratio_to_first.is_none());
            // Fragmented memory beside it, one mapping per round: equal
            // rates on the fake clock, so no change, from ten mappings.
            let r = f.arrays[1].ratio_to_first.as_ref().expect("beside the read array in every round");
            assert_eq!((r.n, r.estimate, r.mappings), (10, 1.0, 10));
            assert_eq!(r.verdict().call, memperf_model::timing::verdict::Call::NoChange);
            assert_eq!(f.arrays.iter().map(|a| a.bytes_per_s.median).collect::<Vec<_>>(), [rate; 2]);
            assert!(f.blocks_in_order.is_none());
        }
        assert!(o.headlines.iter().all(|h| h.simd_bytes_per_s == rate));
        let asked = Params { frame_sets: 0, ..p.clone() };
        assert!(check(&asked).unwrap_err().to_string().contains("--frame-sets 0 is out of range"));
        assert!(check(&Params { frame_sets: 3, ..p }).unwrap_err().to_string().contains("or 2 (beside fragmented memory)"));
    }

    /// Policies round their regions to their own page sizes: at 3 MiB a
    /// THP array has 4 MiB. Every variant reads (and writes) as many
    /// elements on one policy as on another, so each checksum holds and
    /// each rate is of the same bytes (on the fake clock, the same rate).
    #[test]
    fn policies_of_other_page_sizes_read_the_same_elements() {
        let p = Params {
            kernels: vec![StreamShape::Simd, StreamShape::Triad],
            pages: vec![PagePolicy::Small, PagePolicy::Thp],
            size_bytes: Bytes(3 << 20),
            frame_sets: 1,
            repetitions: 2,
            ..frames_params()
        };
        let o = on_a_fake_clock(&p);
        assert!(o.results.iter().all(|r| r.checksum_ok), "{:?}", o.results.iter().map(|r| r.checksum_ok).collect::<Vec<_>>());
        let rate = |k: StreamShape| -> Vec<f64> {
            o.results.iter().filter(|r| r.variant.kernel == k).map(|r| r.bytes_per_s.median).collect()
        };
        assert_eq!(rate(StreamShape::Simd), vec![(3u64 << 20) as f64 / 0.001; 2]);
        let triad = rate(StreamShape::Triad);
        assert!(triad.len() == 2 && triad[0] == triad[1], "the same bytes on both policies: {triad:?}");
    }

    /// The experiment on this machine's arrays with a fake clock on which
    /// every team run lasts exactly one 1 ms step.
    fn on_a_fake_clock(p: &Params) -> Outcome {
        let m = crate::machine::collect();
        let clock = crate::timing::FakeClock::stepping(vec![1_000_000]);
        run(p, &Bench::new(&m, &clock, &super::super::NoProgress)).unwrap()
    }

    pub(super) fn frames_params() -> Params {
        Params {
            kernels: vec![StreamShape::Simd],
            pages: vec![PagePolicy::Small],
            threads: vec![1],
            size_bytes: Bytes(1 << 20),
            distance_elements: Sweep { start: 0, end: 0, step: 1 },
            hints: vec![Hint::T0],
            repetitions: 10,
            min_sample_s: 0.0005,
            noise_cv: 0.05,
            seed: 1,
            frame_sets: 2,
        }
    }
}
