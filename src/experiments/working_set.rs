//! `memperf working-set`: the 2002 sample application on every page policy
//! (random rows of three large float arrays spent 31 of 85 s in TLB misses
//! on an UltraSPARC III, and ran in 15 s on 4 MiB pages). Here the arrays
//! total at least 8× the last-level cache, one region per page policy, all
//! policies measured interleaved with 4k as each one's reference, the
//! repetitions split among fresh arrays so a figure spans where the pages
//! land. The sum is validated against an f64 recomputation and must agree
//! bit for bit across policies and shares.

use super::options;
use super::{Bench, Experiment};
use crate::counters::{self, events};
use crate::error::{Error, Result};
use crate::kernels::working_set as kernel;
use crate::memory::{Backing, Buffer, PagePolicy};
use crate::model::outcome::stat::EventCount;
pub use crate::model::outcome::working_set::*;
use crate::timing::schedule::{self, StepReport, Ratio, Step};
use crate::timing::Summary;
use crate::units::{Bytes, MIB};
use serde::{Deserialize, Serialize};
use std::cell::Cell;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Params {
    /// The three arrays together.
    pub total_bytes: Bytes,
    pub row_floats: u64,
    pub pages: Vec<PagePolicy>,
    /// Random row numbers, used cyclically.
    pub index_len: u64,
    pub seed: u64,
    pub repetitions: usize,
    pub min_sample_s: f64,
    /// Fresh arrays per share of the repetitions: they are split among
    /// this many mappings (at most one per repetition), each landing
    /// elsewhere in the host's memory. On 4 KiB pages where the loop lands
    /// moves it by about a tenth from one process to the next (each walk
    /// reads page tables the host translates again), so a figure of one
    /// mapping holds one placement.
    #[serde(default = "one")]
    pub allocations: usize,
}

fn one() -> usize {
    1
}

/// Rows of the validation window (the first of the index).
const CHECK_ROWS: usize = 4096;

impl Params {
    /// 8× the last-level cache (at least 256 MiB; quick: 4×, at least 128
    /// MiB), 2 KiB rows, 4k and thp, plus 2m and 1g where their pools have
    /// the pages free now.
    pub fn preset(preset: super::Preset, machine: &crate::machine::Fingerprint) -> Params {
        use super::Preset;
        // Up to five policies' arrays live at once.
        let (factor, floor) = if preset == Preset::Quick { (4, 128 * MIB) } else { (8, 256 * MIB) };
        let total = super::budget::memory_size(machine, factor, Bytes(floor), 5).0 / (6 * MIB) * (6 * MIB);
        // A fresh placement every repetition: where the arrays land is a
        // level of its own, and repetitions sharing a placement count as
        // one unit of evidence; twelve give the verdict a 99% interval.
        let (repetitions, min_sample_s) = match preset {
            Preset::Quick => (12, 0.01),
            Preset::Default => (12, 0.05),
            Preset::Full => (15, 0.1),
        };
        let allocations = repetitions;
        let mut pages = vec![PagePolicy::Small, PagePolicy::Thp];
        let free = |pol: PagePolicy| machine.pool(pol.page_size()).map_or(0, |p| p.available());
        let need = |pol: PagePolicy| Bytes(total).round_up(pol.page_size().0).0 / pol.page_size().0;
        if free(PagePolicy::Huge2M) >= need(PagePolicy::Huge2M) {
            pages.push(PagePolicy::Huge2M);
        }
        if free(PagePolicy::Huge1G) >= need(PagePolicy::Huge1G) {
            pages.push(PagePolicy::Huge1G);
        }
        // shm (the article's ISM) shares the 2 MiB pool with 2m.
        if free(PagePolicy::Shm) >= 2 * need(PagePolicy::Shm) {
            pages.push(PagePolicy::Shm);
        }
        Params {
            total_bytes: Bytes(total),
            row_floats: 512,
            pages,
            index_len: 1 << 20,
            seed: 0x2002_0415,
            repetitions,
            min_sample_s,
            allocations,
        }
    }
}

/// Random row numbers below `rows` (xorshift64*, seeded).
pub fn index(len: u64, rows: u64, seed: u64) -> Vec<u32> {
    let mut x = seed | 1;
    (0..len)
        .map(|_| {
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            ((x.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 32) % rows) as u32
        })
        .collect()
}

/// The three arrays of one policy, filled.
struct Arrays {
    region: Buffer,
    len: usize,
    /// Seconds mapping and first writing took.
    map_s: f64,
    /// The backing of the share with the fewest huge pages, once every
    /// share ran (its own region's otherwise).
    least_backing: Option<Backing>,
}

impl Arrays {
    fn new(policy: PagePolicy, p: &Params) -> Result<Arrays> {
        let t0 = std::time::Instant::now();
        let mut region = Buffer::new(policy, p.total_bytes)?;
        let len = (p.total_bytes.0 / 12 / p.row_floats * p.row_floats) as usize;
        let all: &mut [f32] = region.as_mut_slice();
        for w in 0..3u32 {
            for (j, v) in all[w as usize * len..(w as usize + 1) * len].iter_mut().enumerate() {
                *v = kernel::element(w, j);
            }
        }
        Ok(Arrays { region, len, map_s: t0.elapsed().as_secs_f64(), least_backing: None })
    }

    fn thirds(&self) -> (&[f32], &[f32], &[f32]) {
        let all: &[f32] = self.region.as_slice();
        (&all[..self.len], &all[self.len..2 * self.len], &all[2 * self.len..3 * self.len])
    }

    fn doit(&self, rows: &[u32], row: usize) -> f64 {
        let (a, b, c) = self.thirds();
        kernel::doit(a, b, c, rows, row)
    }

    /// The sum over `n` rows of `index` from `start`, wrapping around it,
    /// straight from its slices: nothing is copied inside a timed sample.
    fn doit_from(&self, index: &[u32], start: usize, n: usize, row: usize) -> f64 {
        let mut tmp = 0.0;
        let (mut at, mut left) = (start % index.len(), n);
        while left > 0 {
            let k = left.min(index.len() - at);
            tmp += self.doit(&index[at..at + k], row);
            left -= k;
            at = 0;
        }
        tmp
    }
}

/// Counts the events of one run of `rows` rows, all in that one run (so
/// CPI is of one run), where counters exist; and the run's seconds.
fn count_sample(
    arrays: &Arrays,
    index: &[u32],
    rows: usize,
    row: usize,
    machine: &crate::machine::Fingerprint,
) -> (Vec<EventCount>, f64) {
    let cpu = &machine.cpu.identity;
    let (walks, loads) = events::walks_and_loads(cpu);
    let specs: Vec<_> = ["cycles", "instructions", walks, loads, "task-clock"]
        .iter()
        .map(|n| events::resolve(n, cpu).expect("catalogue names resolve"))
        .collect();
    let t0 = std::time::Instant::now();
    let (_, statuses) = counters::count_all(&counters::PerfBackend, &specs, || {
        std::hint::black_box(arrays.doit_from(index, 0, rows, row))
    });
    let seconds = t0.elapsed().as_secs_f64();
    (specs.iter().zip(statuses).map(|(s, st)| crate::counters::event_count(s, st)).collect(), seconds)
}

pub struct WorkingSet;

/// Every parameter checked before anything is measured.
pub(crate) fn check(p: &Params) -> Result<()> {
    if p.pages.is_empty() || !p.pages.contains(&PagePolicy::Small) {
        return Err(Error::usage("working-set compares with 4k: include 4k in --pages"));
    }
    if p.row_floats == 0 || p.total_bytes.0 / 12 / p.row_floats < 2 {
        return Err(Error::usage(format!("--size {}: too small for two rows of three arrays", p.total_bytes)));
    }
    Ok(())
}

impl Experiment for WorkingSet {
    const NAME: &'static str = "working-set";
    const SHARE: f64 = 3.5;
    type Params = Params;
    type Outcome = Outcome;

    fn preset(preset: crate::experiments::Preset, machine: &crate::machine::Fingerprint) -> Params {
        Params::preset(preset, machine)
    }

    fn needs(p: &Params) -> Result<crate::experiments::Needs> {
        check(p)?;
        Ok(crate::experiments::Needs {
            levels: true,
            mapped: p.pages.iter().map(|&pol| (pol, p.total_bytes.round_up(pol.page_size().0).0)).collect(),
            ..Default::default()
        })
    }

    fn run(p: &Params, ctx: &Bench) -> Result<Outcome> {
        run(p, ctx)
    }
}

/// What every share checks against: the row index, its validation window,
/// each policy's sum (the same in every share) and validity.
struct Checks {
    index: Vec<u32>,
    window: Vec<u32>,
    sums: Vec<Cell<Option<f64>>>,
    valid: Vec<Cell<bool>>,
}

fn run(p: &Params, ctx: &Bench) -> Result<Outcome> {
    check(p)?;
    let rows_total = p.total_bytes.0 / 12 / p.row_floats;
    let index = index(p.index_len, rows_total, p.seed);
    let window: Vec<u32> = index.iter().take(CHECK_ROWS).copied().collect();
    let checks = Checks {
        index,
        window,
        sums: p.pages.iter().map(|_| Cell::new(None)).collect(),
        valid: p.pages.iter().map(|_| Cell::new(true)).collect(),
    };
    let mut merged: Vec<schedule::Series> = Vec::new();
    let mut arrays: Vec<Arrays> = Vec::new();
    let mut map_s: Option<Vec<f64>> = None;
    // Each policy's backing in the share that got the fewest huge pages:
    // the samples span every share, so the coverage claimed is the least.
    let mut least: Vec<Option<Backing>> = p.pages.iter().map(|_| None).collect();
    for (share, repetitions) in schedule::shares(p.repetitions, p.allocations).into_iter().enumerate() {
        // The previous share's arrays go before the next are mapped: one
        // share's at a time, as the memory budget counts them.
        drop(std::mem::take(&mut arrays));
        arrays = p.pages.iter().map(|&pol| Arrays::new(pol, p)).collect::<Result<_>>()?;
        map_s.get_or_insert_with(|| arrays.iter().map(|a| a.map_s).collect());
        let series = measure_share(p, ctx, &arrays, &checks, repetitions, share)?;
        merge(&mut merged, series);
        for (a, l) in arrays.iter_mut().zip(least.iter_mut()) {
            a.region.read_back();
            let b = a.region.backing();
            let fewer = |now: &Backing| b.huge_fraction.unwrap_or(0.0) < now.huge_fraction.unwrap_or(0.0);
            if l.as_ref().is_none_or(fewer) {
                *l = Some(b.clone());
            }
        }
    }
    let row = p.row_floats as usize;
    let counters: Vec<(Vec<EventCount>, f64)> = arrays
        .iter()
        .zip(&merged)
        .map(|(a, s)| count_sample(a, &checks.index, s.iters as usize, row, ctx.machine))
        .collect();
    for ((a, first), least) in arrays.iter_mut().zip(map_s.unwrap_or_default()).zip(least) {
        a.map_s = first;
        a.least_backing = least;
    }
    let figures = crate::machine::saved::gather(ctx.machine, None).unwrap_or_default();
    let small = p.pages.iter().position(|&x| x == PagePolicy::Small);
    Ok(summarise(p, &arrays, &merged, &checks, counters, &figures, small))
}

/// The mapping each repetition was measured on, in repetition order.
fn mapping_of(p: &Params) -> Vec<u32> {
    let shares = schedule::shares(p.repetitions, p.allocations);
    shares.iter().enumerate().flat_map(|(k, &n)| std::iter::repeat_n(k as u32, n)).collect()
}

/// One share's repetitions of every policy, interleaved through the
/// scheduler on this share's arrays, 4 KiB the reference of the others.
fn measure_share(
    p: &Params,
    ctx: &Bench,
    arrays: &[Arrays],
    checks: &Checks,
    repetitions: usize,
    share: usize,
) -> Result<Vec<schedule::Series>> {
    let row = p.row_floats as usize;
    let cursor = Cell::new(share.wrapping_mul(104_729));
    let mut variants: Vec<schedule::Variant> = arrays
        .iter()
        .enumerate()
        .map(|(i, a)| {
            let cursor = &cursor;
            Box::new(move |step: Step| {
                if step == Step::WarmUp {
                    return StepReport::valid(validate_window(a, checks, i, row));
                }
                let n = step.iterations(0) as usize;
                let ok = a.doit_from(&checks.index, cursor.get(), n, row).is_finite();
                cursor.set(cursor.get().wrapping_add(n * 7919));
                checks.valid[i].set(checks.valid[i].get() && ok);
                StepReport::valid(ok)
            }) as schedule::Variant
        })
        .collect();
    let small = p.pages.iter().position(|&x| x == PagePolicy::Small);
    let mut plan = schedule::Plan::new(repetitions, p.min_sample_s);
    plan.seed = (p.seed ^ 0x5eed).wrapping_add(share as u64);
    plan.reference_of = (0..p.pages.len()).map(|i| if Some(i) == small { None } else { small }).collect();
    ctx.measure("working-set", &plan, &mut variants)
}

/// The validation window on policy `i`'s arrays: its sum against the f64
/// recomputation, and against the sum every earlier share gave.
fn validate_window(a: &Arrays, checks: &Checks, i: usize, row: usize) -> bool {
    let tmp = a.doit(&checks.window, row);
    let (x, y, z) = a.thirds();
    let same = checks.sums[i].get().is_none_or(|before| before == tmp);
    let ok = same && kernel::validate(tmp, kernel::reference(x, y, z, &checks.window, row));
    checks.sums[i].set(Some(tmp));
    checks.valid[i].set(checks.valid[i].get() && ok);
    ok
}

/// Adds one share's series to the merged ones: samples in share order,
/// each scaled to the first share's iterations per sample (so that a
/// sample over `iters` is what it measured per iteration).
fn merge(merged: &mut Vec<schedule::Series>, share: Vec<schedule::Series>) {
    if merged.is_empty() {
        *merged = share;
        return;
    }
    for (m, s) in merged.iter_mut().zip(share) {
        let scale = m.iters as f64 / s.iters.max(1) as f64;
        m.samples_s.extend(s.samples_s.iter().map(|t| t * scale));
        m.adjacent_reference_s_per_iter.extend(s.adjacent_reference_s_per_iter);
        m.ok &= s.ok;
    }
}

/// Nanoseconds per row of each sample of a series.
fn ns_per_row(s: &schedule::Series) -> Vec<f64> {
    s.samples_s.iter().map(|t| t * 1e9 / s.iters as f64).collect()
}

/// What the scheduler and the counters gave one policy.
struct Timed<'a> {
    series: &'a schedule::Series,
    valid: bool,
    counters: Vec<EventCount>,
    counted_s: f64,
}

/// One policy's result; `small_rows` (4 KiB's ns per row) is what its
/// speed-up and translation time are read against (`None` for 4 KiB itself).
fn policy_result(
    p: &Params,
    pages: PagePolicy,
    arrays: &Arrays,
    timed: Timed,
    small_rows: Option<&[f64]>,
    figures: &crate::model::outcome::stat::MachineFigures,
) -> PolicyResult {
    let rows = ns_per_row(timed.series);
    let ns = Summary::steady_in(&rows, &mapping_of(p)).expect("the scheduler returns one finite sample per repetition");
    let flops = p.row_floats as f64 * kernel::FLOPS_PER_ELEMENT as f64 / (ns.median * 1e-9);
    let inputs = crate::counters::metrics::inputs(&timed.counters, timed.counted_s, figures);
    let metrics = crate::counters::metrics::builtin()
        .iter()
        .filter(|d| ["CPI", "DTLB miss rate per load", "estimated time in page walks"].contains(&d.name.as_str()))
        .map(|d| crate::counters::metrics::evaluate(d, &inputs, false))
        .collect();
    PolicyResult {
        metrics,
        pages,
        backing: arrays.least_backing.clone().unwrap_or_else(|| arrays.region.backing().clone()),
        rows_per_sample: timed.series.iters,
        samples_s: timed.series.samples_s.clone(),
        flops_per_s: flops,
        speedup_vs_4k: small_rows.and_then(|s| {
            let ratios: Vec<f64> = s.iter().zip(&rows).map(|(a, b)| a / b).collect();
            Ratio::with_evidence(ratios, mapping_of(p), memperf_model::timing::verdict::Scale::Ratio)
        }),
        translation_ns_per_row: small_rows.and_then(crate::timing::stats::median).map(|m| m - ns.median),
        ns_per_row: ns,
        counters: timed.counters,
        valid: timed.valid && timed.series.ok,
        map_s: Some(arrays.map_s),
    }
}

/// The translation time per row huge pages should save, from the walk cost
/// and the TLB reach of each page size: three loads a row, each missing
/// with the share of the arrays beyond the reach.
fn predicted_translation_ns(p: &Params, figures: &crate::model::outcome::stat::MachineFigures) -> Option<f64> {
    figures.walk_ns.map(|w| {
        let miss = |reach: Option<u64>| reach.map_or(1.0, |r| (1.0 - r as f64 / p.total_bytes.0 as f64).max(0.0));
        3.0 * w.0
            * (miss(figures.measured_reach_4k_bytes.or(figures.tlb_reach_4k_bytes)) - miss(figures.tlb_reach_2m_bytes))
    })
}

/// The outcome: each policy's result, whether the sums agree, the
/// translation time the walk cost predicts, and the advice.
#[allow(clippy::too_many_arguments)]
fn summarise(
    p: &Params,
    arrays: &[Arrays],
    series: &[schedule::Series],
    checks: &Checks,
    counters: Vec<(Vec<EventCount>, f64)>,
    figures: &crate::model::outcome::stat::MachineFigures,
    small: Option<usize>,
) -> Outcome {
    let small_rows = small.map(|i| ns_per_row(&series[i]));
    let results: Vec<PolicyResult> = p
        .pages
        .iter()
        .enumerate()
        .zip(counters)
        .map(|((i, &pages), (counters, counted_s))| {
            let timed = Timed { series: &series[i], valid: checks.valid[i].get(), counters, counted_s };
            let against = small_rows.as_deref().filter(|_| Some(i) != small);
            policy_result(p, pages, &arrays[i], timed, against, figures)
        })
        .collect();
    let first = checks.sums.first().and_then(|s| s.get());
    let sums_agree = checks.sums.iter().all(|s| s.get().is_some() && s.get() == first);
    let predicted = predicted_translation_ns(p, figures);
    let advice = advice(&results, p.total_bytes);
    let valid = sums_agree && results.iter().all(|r| r.valid);
    Outcome {
        total_bytes: p.total_bytes.0,
        row_floats: p.row_floats,
        rows: p.total_bytes.0 / 12 / p.row_floats,
        index_len: p.index_len,
        seed: p.seed,
        order_seed: p.seed ^ 0x5eed,
        results,
        sums_agree,
        walk_ns: figures.walk_ns,
        predicted_translation_ns_per_row: predicted,
        walk_cost_source: figures.source.clone(),
        article: Article::figures(),
        advice,
        valid,
    }
}

/// Seconds per row of each sample of a policy.
fn per_row(r: &PolicyResult) -> Vec<f64> {
    r.samples_s.iter().map(|s| s / r.rows_per_sample.max(1) as f64).collect()
}

/// Why a policy's speed-up gives no verdict, if it gives none: its samples
/// (or 4 KiB's) fall into two groups, or its halves disagree.
fn doubt(r: &PolicyResult, small: Option<&PolicyResult>) -> Option<String> {
    use crate::analysis::modes::two_modes;
    for p in [Some(r), small].into_iter().flatten() {
        if let Some(m) = two_modes(&per_row(p)) {
            let rows = per_row(p);
            let med = |ix: &[usize]| {
                crate::timing::stats::median(&ix.iter().map(|&i| rows[i] * 1e9).collect::<Vec<_>>()).unwrap_or(f64::NAN)
            };
            return Some(format!(
                "{} samples fall into two groups ({:.0} ns per row in {}, {:.0} in {})",
                p.pages,
                med(&m.low),
                m.low.len(),
                med(&m.high),
                m.high.len()
            ));
        }
    }
    let small = small?;
    let ratios: Vec<f64> = per_row(small).iter().zip(per_row(r)).map(|(a, b)| a / b).collect();
    let side = |half: &[f64]| match crate::timing::stats::median(half) {
        Some(m) if m > 1.0 => "faster",
        _ => "not faster",
    };
    let look = crate::analysis::second_look::look(&ratios, 2, side);
    look.is_unstable().then(|| format!("{}: {}", r.pages, look.describe()))
}

/// One verdict line for each huge policy against 4 KiB pages, in the
/// verdicts' words: huge pages advised where they gain by at least 5%, 4
/// KiB pages kept where huge pages are slower; a policy whose runs
/// disagree with themselves (a second look, or two modes) gives none.
fn advice(results: &[PolicyResult], total: crate::units::Bytes) -> Vec<String> {
    use memperf_model::timing::said::{line, SPEED};
    use crate::timing::schedule::Call;
    let small = results.iter().find(|r| r.pages == PagePolicy::Small);
    // The reference's frames: how scattered the free lists left them moves
    // what translating them costs (on a guest, the host's walk too), so
    // every ratio names them where pagemap showed them.
    let frames = small
        .and_then(|s| s.backing.pages_per_2mib_block)
        .map(|d| format!(", against 4 KiB arrays on {d:.0} pages per 2 MiB block"))
        .unwrap_or_default();
    let mut out = Vec::new();
    let mut doubts = Vec::new();
    for r in results.iter().filter(|r| r.pages != PagePolicy::Small) {
        let Some(s) = r.speedup_vs_4k.as_ref() else { continue };
        if let Some(why) = doubt(r, small) {
            doubts.push(why);
            continue;
        }
        let cov = r
            .backing
            .huge_fraction
            .map(|f| format!("{:.0}% huge", f * 100.0))
            .unwrap_or_else(|| "coverage unknown".into());
        let subject = format!("Huge pages ({}) for the sample application ({total} of arrays, {cov}{frames})", r.pages);
        let then = match s.call() {
            Call::Above => format!("give large, randomly accessed arrays huge pages. {}", whole_program(results)),
            _ => String::new(),
        };
        let mut text = line(&subject, s, SPEED, Some(&then));
        match s.verdict().call {
            Call::Below if s.verdict().beyond_threshold => {
                text = format!("{}: keep its arrays on 4 KiB pages.", text.trim_end_matches('.'))
            }
            Call::NoChange if r.backing.huge_fraction.unwrap_or(0.0) >= 0.9 => {
                text = format!(
                    "{}: translation does not limit it on the frames it got here.",
                    text.trim_end_matches('.')
                )
            }
            _ => {}
        }
        out.push(text);
    }
    doubts.dedup();
    out.extend(
        doubts.into_iter().map(|d| format!("Huge pages for the sample application ({total} of arrays): invalid, its runs disagree: {d} (run it again).")),
    );
    out
}

/// What the loop's gain leaves out: what mapping the arrays cost on each
/// policy, and that a whole program can run slower on huge pages when it
/// starts right after one on 4 KiB pages (compaction, in system time).
fn whole_program(results: &[PolicyResult]) -> String {
    let maps: Vec<String> =
        results.iter().filter_map(|r| r.map_s.map(|s| format!("{s:.2} s on {}", r.pages))).collect();
    let mapped = if maps.is_empty() { String::new() } else { format!(" (mapping and first writing them took {})", maps.join(", ")) };
    format!(
        "That gain is the loop's: a whole program also pays for its pages at its start{mapped}, and one started right after a run on 4 KiB pages can be slower on huge pages in every such round, its extra time in the kernel (compaction of the memory the 4 KiB run fragmented). Time the whole program with `memperf hugepages -- PROGRAM`, which names such bimodal runs and their cause."
    )
}

/// Options of `memperf working-set`.
#[derive(Debug, clap::Args)]
pub struct Options {
    /// The three arrays together [default: 8× the last-level cache, at least 256MiB]
    #[arg(long, value_name = "SIZE", allow_hyphen_values = true, value_parser = options::size_arg)]
    pub size: Option<Bytes>,
    /// Page policies, comma-separated, measured alternately [default: 4k, thp, and 2m/1g where their pools have the pages; 2m, 1g and shm with --reserve-hugepages]
    #[arg(long, value_name = "LIST", allow_hyphen_values = true, value_parser = options::list(PagePolicy::parse, options::offers::pages))]
    pub pages: Option<options::List<PagePolicy>>,
    /// Samples per policy [default: 12]
    #[arg(long, value_name = "N", allow_hyphen_values = true, value_parser = options::positive_arg("--repetitions"))]
    pub repetitions: Option<usize>,
    /// Seed of the random row index [default: 0x20020415]
    #[arg(long, value_name = "N", allow_hyphen_values = true, value_parser = options::u64_arg("--seed"))]
    pub seed: Option<u64>,
    /// Fresh arrays the repetitions are split among (where 4 KiB pages land moves the loop; repetitions sharing arrays count as one) [default: one per repetition]
    #[arg(long, value_name = "N", allow_hyphen_values = true, value_parser = options::positive_arg("--allocations"))]
    pub allocations: Option<usize>,
}

impl options::Options for Options {
    type Experiment = WorkingSet;
    /// A good value of every option, as the man page shows them.
    const EXAMPLES: &'static [&'static [&'static str]] = &[
        &["--size", "1MiB", "--pages", "4k,thp", "--repetitions", "2", "--seed", "9", "--allocations", "2"],
    ];

    fn params(&self, asked: &options::Request) -> Result<Params> {
        let mut p = Params::preset(asked.preset, asked.machine);
        if let Some(s) = self.size {
            p.total_bytes = s;
        }
        if asked.reserve_hugepages {
            // The pages will be reserved: the hugetlb policies join by
            // default (so the fix the pool warnings give does what it says).
            for pol in [PagePolicy::Huge2M, PagePolicy::Huge1G, PagePolicy::Shm] {
                if !p.pages.contains(&pol) {
                    p.pages.push(pol);
                }
            }
        }
        p.pages = options::List::or(&self.pages, p.pages);
        if !p.pages.contains(&PagePolicy::Small) {
            p.pages.insert(0, PagePolicy::Small);
        }
        if let Some(r) = self.repetitions {
            p.repetitions = r;
        }
        if let Some(s) = self.seed {
            p.seed = s;
        }
        p.allocations = self.allocations.unwrap_or(p.repetitions);
        Ok(p)
    }
}

/// The advice is a function of the results alone: every read of a
/// document draws it by today's rules (an older build said "no faster"
/// from an interval that held a gain).
impl crate::model::Redraw for Outcome {
    fn recheck(&mut self, _: Option<f64>) {
        self.advice = advice(&self.results, crate::units::Bytes(self.total_bytes));
    }

    fn reanalyse(&mut self, _: &crate::machine::Fingerprint, _: Option<f64>) -> Vec<&'static str> {
        self.advice = advice(&self.results, crate::units::Bytes(self.total_bytes));
        vec!["advice"]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Shares merge in order, each sample scaled to the first share's
    /// iterations per sample.
    #[test]
    fn shares_merge_per_iteration() {
        let series = |iters, samples_s: Vec<f64>, ok| schedule::Series {
            iters,
            samples_s,
            adjacent_reference_s_per_iter: Vec::new(),
            ok,
            looks: Vec::new(),
        };
        let mut merged = Vec::new();
        merge(&mut merged, vec![series(100, vec![1.0, 1.1], true)]);
        merge(&mut merged, vec![series(50, vec![0.6], false)]);
        assert_eq!(merged[0].iters, 100);
        assert_eq!(merged[0].samples_s, vec![1.0, 1.1, 1.2]);
        assert!(!merged[0].ok, "a share that failed fails the merged series");
    }

    /// A document from before the shares mapped its arrays once.
    #[test]
    fn old_parameters_read_as_one_allocation() {
        let m = crate::machine::collect();
        let mut v = serde_json::to_value(Params::preset(crate::experiments::Preset::Quick, &m)).unwrap();
        v.as_object_mut().unwrap().remove("allocations");
        assert_eq!(serde_json::from_value::<Params>(v).unwrap().allocations, 1);
    }

    #[test]
    fn the_index_is_seeded_and_in_range() {
        let a = index(10_000, 777, 5);
        assert_eq!(a, index(10_000, 777, 5));
        assert_ne!(a, index(10_000, 777, 6));
        assert!(a.iter().all(|&r| r < 777));
        let distinct: std::collections::BTreeSet<_> = a.iter().collect();
        assert!(distinct.len() > 700, "covers the rows: {}", distinct.len());
    }

    #[test]
    fn rows_wrap_around_the_index() {
        let p = Params {
            total_bytes: Bytes(12 * 8 * 4),
            row_floats: 8,
            pages: vec![PagePolicy::Small],
            index_len: 3,
            seed: 1,
            repetitions: 1,
            min_sample_s: 0.0,
            allocations: 1,
        };
        let a = Arrays::new(PagePolicy::Small, &p).unwrap();
        // Rows 3, 1, 2, 3: from position 2 of [1, 2, 3], wrapping once.
        let wrapped = a.doit_from(&[1, 2, 3], 2, 4, 8);
        assert_eq!(wrapped, 0.0 + a.doit(&[3], 8) + a.doit(&[1, 2, 3], 8));
        let (x, y, z) = a.thirds();
        assert!(kernel::validate(wrapped, kernel::reference(x, y, z, &[3, 1, 2, 3], 8)));
    }

    fn result(pages: PagePolicy, samples_s: Vec<f64>) -> PolicyResult {
        let small: Vec<f64> = vec![2.0; samples_s.len()];
        PolicyResult {
            pages,
            backing: crate::memory::Backing {
                requested: pages,
                size_bytes: crate::units::Bytes(1 << 30),
                page_size_bytes: None,
                huge_bytes: None,
                huge_fraction: Some(1.0),
                in_order_fraction: None,
                pages_per_2mib_block: None,
                first_touch_shuffled: false,
            },
            rows_per_sample: 1000,
            ns_per_row: Summary::of(&samples_s).unwrap(),
            speedup_vs_4k: Ratio::paired(&small, &samples_s),
            samples_s,
            flops_per_s: 1.0,
            translation_ns_per_row: None,
            counters: Vec::new(),
            metrics: Vec::new(),
            valid: true,
            map_s: Some(if pages == PagePolicy::Small { 0.25 } else { 0.5 }),
        }
    }

    /// The same care as `hugepages`: a policy whose samples fall into two
    /// groups, or whose gain one half of the repetitions does not show,
    /// gives no advice but says why.
    #[test]
    fn bimodal_or_unstable_gains_give_no_verdict() {
        let small = result(PagePolicy::Small, vec![2.0; 10]);
        let steady = result(PagePolicy::Thp, (0..10).map(|i| 1.5 + 0.001 * i as f64).collect());
        let helps = &advice(&[small.clone(), steady], crate::units::Bytes(1 << 30))[0];
        assert!(helps.starts_with("Huge pages (thp) for the sample application (1GiB of arrays, 100% huge): faster ×"), "{helps}");
        assert!(helps.contains("give large, randomly accessed arrays huge pages"), "{helps}");
        // The program-level caveat, with what mapping cost each policy.
        assert!(helps.contains("(mapping and first writing them took 0.25 s on 4k, 0.50 s on thp)"), "{helps}");
        assert!(helps.contains("memperf hugepages -- PROGRAM"), "{helps}");
        let two = result(PagePolicy::Thp, [1.0, 1.01, 1.02, 1.03, 1.04, 1.6, 1.61, 1.62, 1.63, 1.64].to_vec());
        let a = advice(&[small.clone(), two], crate::units::Bytes(1 << 30));
        assert_eq!(a.len(), 1, "{a:?}");
        assert!(
            a[0].starts_with("Huge pages for the sample application (1GiB of arrays): invalid, its runs disagree: thp samples fall into two groups"),
            "{}",
            a[0]
        );
        // Faster on the even repetitions, no faster on the odd ones.
        let even = [1.5, 1.6, 1.7, 1.8, 1.9];
        let odd = [2.0, 2.05, 2.1, 2.15, 2.2];
        let halves =
            result(PagePolicy::Thp, (0..10).map(|i| if i % 2 == 0 { even[i / 2] } else { odd[i / 2] }).collect());
        let a = advice(&[small, halves], crate::units::Bytes(1 << 30));
        assert!(a.iter().any(|l| l.contains("unstable: faster on one half, not faster on the other")), "{a:?}");
    }

    /// An interval across 5% is "not resolved", never "no faster"; one
    /// inside 5% is "within 5%"; one wholly below ×0.95 is "slower".
    #[test]
    fn only_an_interval_on_one_side_of_five_percent_gives_a_verdict() {
        let small = result(PagePolicy::Small, vec![2.0; 10]);
        // Per-row times: 4 KiB over THP is the speed-up.
        let with = |speedups: &[f64]| {
            let thp = result(PagePolicy::Thp, speedups.iter().map(|x| 2.0 / x).collect());
            advice(&[small.clone(), thp], crate::units::Bytes(1 << 30))
        };
        let wide = with(&[0.81, 0.9, 0.95, 1.0, 1.05, 1.05, 1.08, 1.1, 1.12, 1.16]);
        assert_eq!(wide.len(), 1, "{wide:?}");
        assert!(wide[0].starts_with("Huge pages (thp) for the sample application (1GiB of arrays, 100% huge): not resolved: ×"), "{}", wide[0]);
        let flat = with(&[0.98, 0.99, 1.0, 1.0, 1.01, 1.01, 1.02, 1.02, 1.03, 1.03]);
        assert!(flat[0].contains(": no change: ×") && flat[0].contains("translation does not limit it"), "{flat:?}");
        let slower = with(&[0.7, 0.71, 0.72, 0.73, 0.74, 0.75, 0.76, 0.77, 0.78, 0.79]);
        assert!(slower[0].contains(": slower ×") && slower[0].ends_with("keep its arrays on 4 KiB pages."), "{slower:?}");
        let small_gain = with(&[1.02, 1.03, 1.04, 1.05, 1.06, 1.07, 1.08, 1.09, 1.1, 1.11]);
        assert!(small_gain[0].contains(": faster ×") && !small_gain[0].contains("give large"), "a gain of 2-11% is not by 5% for certain: {small_gain:?}");
        let gain = with(&[1.08, 1.09, 1.10, 1.10, 1.11, 1.11, 1.12, 1.12, 1.13, 1.14]);
        assert!(gain[0].contains(", by at least 5%") && gain[0].contains("give large, randomly accessed arrays huge pages"), "{gain:?}");
    }

    /// Each ratio names how densely the 4 KiB reference's frames lay,
    /// where pagemap showed them, and nothing where it did not.
    #[test]
    fn the_ratio_names_the_reference_frames_density() {
        let mut small = result(PagePolicy::Small, vec![2.0; 10]);
        let thp = result(PagePolicy::Thp, vec![1.5; 10]);
        let hidden = advice(&[small.clone(), thp.clone()], crate::units::Bytes(1 << 30));
        assert!(!hidden[0].contains("pages per 2 MiB block"), "{hidden:?}");
        small.backing.pages_per_2mib_block = Some(71.6);
        let shown = advice(&[small, thp], crate::units::Bytes(1 << 30));
        assert!(
            shown[0].contains("(1GiB of arrays, 100% huge, against 4 KiB arrays on 72 pages per 2 MiB block): faster ×1.333"),
            "{shown:?}"
        );
    }
}
