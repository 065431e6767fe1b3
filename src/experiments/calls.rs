//! `memperf calls`: what a call and its return cost as a call chain
//! deepens, per linkage (direct, PLT, GOT, all registers saved, inlined),
//! on one thread and on all of them (after the 2009 article on SPARC
//! register windows, where inlining cured 3 million spill/fill traps a
//! second). Every cell is measured interleaved; the marginal cost of one
//! more call shows where the cost steps up (chosen on half the repetitions,
//! confirmed on the other). A PLT or GOT cell's samples take the loaded
//! copies of its libraries in turn, since where a copy lands moves its
//! figure. The method, step by step: docs/methods/calls.md.

use super::options;
use super::{Bench, Experiment, Preset};
use crate::error::{Error, Result};
use crate::kernels::calls::{self, ChainFn, Linkage, SharedChain};
pub use crate::model::outcome::calls::*;
use crate::model::Caution;
use crate::timing::schedule::{self, StepReport, Ratio, Step};
use crate::timing::usage::Usage;
use crate::timing::{Summary, Team};
use serde::{Deserialize, Serialize};
use std::cell::Cell;

/// Deepest chain memperf runs: 16384 frames of at most 64 bytes fit a
/// team thread's 2 MiB stack with room to spare.
pub const MAX_DEPTH: u64 = 16_384;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Params {
    pub linkages: Vec<Linkage>,
    pub depths: Vec<u64>,
    pub threads: Vec<usize>,
    pub repetitions: usize,
    /// Each sample lasts at least this long. A chain touches nothing but
    /// its stack, so a sample needs no long pass to amortise a warm-up.
    pub min_sample_s: f64,
    pub seed: u64,
}

impl Params {
    pub fn preset(preset: Preset) -> Params {
        let threads = crate::timing::team::thread_ladder();
        let (depths, reps, min_sample_s): (Vec<u64>, usize, f64) = match preset {
            // 1 ms samples: ~5·10⁴ clock steps each; enough for the suite.
            Preset::Quick => {
                (vec![1, 2, 4, 8, 12, 16, 20, 24, 28, 32, 40, 48, 64, 96, 128, 256, 1024, 4096], 10, 0.001)
            }
            Preset::Default => {
                (dense(&[(1, 16, 1), (20, 128, 4), (160, 256, 32)], &[384, 512, 1024, 2048, 4096]), 10, 0.01)
            }
            Preset::Full => {
                (dense(&[(1, 128, 1), (136, 256, 8)], &[320, 384, 512, 768, 1024, 1536, 2048, 3072, 4096]), 14, 0.01)
            }
        };
        Params { linkages: Linkage::ALL.to_vec(), depths, threads, repetitions: reps, min_sample_s, seed: 0x6361_6c6c }
    }

    pub fn check(&self) -> Result<()> {
        if self.linkages.is_empty() {
            return Err(Error::usage(format!("--variants is empty: name at least one of {}", Linkage::NAMES.join(", "))));
        }
        if let Some(&d) = self.depths.iter().find(|&&d| d == 0 || d > MAX_DEPTH) {
            return Err(Error::usage(format!("--depths {d}: a depth lies in 1..={MAX_DEPTH}")));
        }
        if self.depths.is_empty() {
            return Err(Error::usage("--depths is empty: give at least one depth, e.g. --depths 1:64:1"));
        }
        if self.repetitions < 2 {
            return Err(Error::usage("--repetitions must be at least 2 (10 or more to locate a step)"));
        }
        Ok(())
    }
}

/// Every depth of `ranges` (start, end, step) followed by `extra`, sorted.
fn dense(ranges: &[(u64, u64, u64)], extra: &[u64]) -> Vec<u64> {
    let mut v: Vec<u64> =
        ranges.iter().flat_map(|&(a, b, s)| (a..=b).step_by(s as usize)).chain(extra.iter().copied()).collect();
    v.sort();
    v.dedup();
    v
}

pub struct Calls;

impl Experiment for Calls {
    const NAME: &'static str = "calls";
    const SHARE: f64 = 2.5;
    type Params = Params;
    type Outcome = Outcome;

    fn preset(preset: crate::experiments::Preset, _: &crate::machine::Fingerprint) -> Params {
        Params::preset(preset)
    }

    fn needs(p: &Params) -> Result<crate::experiments::Needs> {
        p.check()?;
        Ok(crate::experiments::Needs {
            pages_matter: false,
            ..Default::default()
        })
    }
    fn run(p: &Params, ctx: &Bench) -> Result<Outcome> {
        run(p, ctx)
    }
}

/// One cell to measure.
#[derive(Debug, Clone, Copy)]
struct CellKey {
    linkage: Linkage,
    depth: u64,
    threads: usize,
}

/// The chains that could be set up, each with its entries (one for a
/// chain linked into memperf, one per loaded copy of a shared one), with
/// the libraries kept loaded.
fn entries(p: &Params, ctx: &Bench) -> (Vec<(Linkage, Vec<ChainFn>)>, Vec<SharedChain>) {
    let mut loaded = Vec::new();
    let mut out = Vec::new();
    for &l in &p.linkages {
        match calls::linked(l) {
            Some(f) => out.push((l, vec![f])),
            None => match SharedChain::load_all(l) {
                Ok(copies) => {
                    out.push((l, copies.iter().map(|c| c.first).collect()));
                    loaded.extend(copies);
                }
                Err(e) => ctx.warn(Caution::VariantUnavailable {
                    experiment: "calls",
                    variant: l.name().into(),
                    message: e.message,
                    fix: e.fix,
                }),
            },
        }
    }
    (out, loaded)
}

fn run(p: &Params, ctx: &Bench) -> Result<Outcome> {
    p.check()?;
    let teams: Vec<(usize, Team)> =
        p.threads.iter().map(|&t| Team::new(t).map(|team| (t, team))).collect::<Result<_>>()?;
    let (chains, _keep_loaded) = entries(p, ctx);
    if chains.is_empty() {
        return Err(Error::unsatisfiable("no call variant could be set up", "use --variants direct,saves,inlined"));
    }
    // Each thread count on its own, one thread and all first (the savings
    // are judged on one thread, whose looks weigh twice another count's).
    let counts = super::timebox::ends_first(&teams.iter().map(|t| t.0).collect::<Vec<_>>());
    let weighted: Vec<(usize, f64)> = counts.iter().map(|&t| (t, if t == 1 { 2.0 } else { 1.0 })).collect();
    let mut keys: Vec<CellKey> = Vec::new();
    let mut measured = Measured { series: Vec::new(), cpu_time: Vec::new(), migrated: 0 };
    ctx.sweep("calls' thread counts", weighted, |threads| {
        let team = teams.iter().filter(|t| t.0 == threads);
        let these: Vec<CellKey> = chains
            .iter()
            .flat_map(|&(linkage, _)| p.depths.iter().map(move |&depth| CellKey { linkage, depth, threads }))
            .collect();
        let team: Vec<&(usize, Team)> = team.collect();
        let m = measure(p, ctx, &these, &chains, &team)?;
        keys.extend(these);
        measured.series.extend(m.series);
        measured.cpu_time.extend(m.cpu_time);
        measured.migrated += m.migrated;
        Ok(())
    })?;
    let points = points(&keys, &measured);
    let valid = points.iter().all(|pt| pt.valid);
    if !valid {
        ctx.warn(Caution::Checksum { what: "calls" });
    }
    if measured.migrated > 0 {
        ctx.warn(Caution::Migrated { samples: measured.migrated });
    }
    let steps = steps(&keys, &measured.series, p, ctx.machine.core_ghz());
    let savings = savings(&keys, &measured.series, p);
    Ok(Outcome {
        linkages: chains.iter().map(|c| c.0).collect(),
        depths: p.depths.clone(),
        threads: p.threads.iter().copied().filter(|t| keys.iter().any(|k| k.threads == *t)).collect(),
        order_seed: p.seed,
        points,
        cpu_time: measured.cpu_time,
        steps,
        savings,
        valid,
    })
}

struct Measured {
    series: Vec<schedule::Series>,
    cpu_time: Vec<CpuTime>,
    migrated: usize,
}

/// CPU and wall time of one (linkage, threads) over its timed samples.
struct CpuTotal {
    key: (Linkage, usize),
    usage: Cell<Usage>,
    wall_s: Cell<f64>,
}

/// Untimed chains that bring a copy's code back into the caches and
/// predictors before its sample (a few lines of code: eight chains are a
/// small part of a sample at any depth).
const COPY_WARM_CHAINS: u64 = 8;

/// One cell's variant: the chain from one of `firsts`, `depth` calls deep,
/// run on each thread of its team; valid when every thread's sum is reps ×
/// depth. A shared chain's samples take its loaded copies in turn, each
/// warmed untimed before its sample, so the figure spans where the copies
/// landed rather than one placement: two samples a copy where the
/// `repetitions` give every copy two (the even and the odd samples, where
/// a step is found and confirmed, then each hold every copy), else one (at
/// 6 repetitions and 4 copies the even samples then hold copies 0 and 2,
/// the odd ones 1 and 3: a step must show on both placements to stand).
#[allow(clippy::too_many_arguments)]
fn chain_variant<'a>(
    ctx: &'a Bench,
    firsts: &'a [ChainFn],
    depth: u64,
    repetitions: usize,
    team: &'a Team,
    total: &'a CpuTotal,
    migrated: &'a Cell<usize>,
) -> schedule::Variant<'a> {
    let samples = Cell::new(0usize);
    let per_copy = if repetitions >= 2 * firsts.len() { 2 } else { 1 };
    let on_team = move |first: ChainFn, reps: u64| {
        team.run(ctx.clock, |_| {
            let before = Usage::now();
            // SAFETY: a chain entry; depth ≤ MAX_DEPTH fits the stack.
            let sum = unsafe { calls::run(first, depth, reps) };
            (sum, Usage::now().since(before))
        })
    };
    // A warm-up's chains are checked as a sample's are.
    let warm_ok = Cell::new(true);
    let returned = move |run: &crate::timing::team::TeamRun<(i64, Usage)>, reps: u64| {
        run.results.iter().all(|r| r.0 == (reps * depth) as i64)
    };
    Box::new(move |step: Step| {
        let reps = step.iterations(64);
        let first = match step {
            Step::WarmUp => {
                let ok = firsts.iter().all(|&f| returned(&on_team(f, reps), reps));
                warm_ok.set(warm_ok.get() && ok);
                firsts[0]
            }
            Step::Calibrate(_) => firsts[0],
            Step::Run(_) => {
                let f = firsts[samples.get() / per_copy % firsts.len()];
                samples.set(samples.get() + 1);
                if firsts.len() > 1 {
                    let ok = returned(&on_team(f, COPY_WARM_CHAINS), COPY_WARM_CHAINS);
                    warm_ok.set(warm_ok.get() && ok);
                }
                f
            }
        };
        let run = on_team(first, reps);
        if run.placement.iter().any(|pl| !pl.stayed()) {
            migrated.set(migrated.get() + 1);
        }
        if matches!(step, Step::Run(_)) {
            total.usage.set(run.results.iter().fold(total.usage.get(), |a, r| a + r.1));
            total.wall_s.set(total.wall_s.get() + run.elapsed_ns as f64 * 1e-9);
        }
        StepReport::timed(warm_ok.get() && returned(&run, reps), run.elapsed_ns)
    })
}

fn measure(
    p: &Params,
    ctx: &Bench,
    keys: &[CellKey],
    chains: &[(Linkage, Vec<ChainFn>)],
    teams: &[&(usize, Team)],
) -> Result<Measured> {
    // Per (linkage, threads): user, system, wall seconds of the timed samples.
    let usage: Vec<CpuTotal> = chains
        .iter()
        .flat_map(|c| {
            teams.iter().map(move |t| CpuTotal { key: (c.0, t.0), usage: Cell::default(), wall_s: Cell::default() })
        })
        .collect();
    let migrated = Cell::new(0usize);
    let mut variants: Vec<schedule::Variant> = keys
        .iter()
        .map(|k| {
            let firsts = &chains.iter().find(|c| c.0 == k.linkage).expect("set up").1;
            let team = &teams.iter().find(|t| t.0 == k.threads).expect("built").1;
            let total = usage.iter().find(|u| u.key == (k.linkage, k.threads)).expect("listed");
            chain_variant(ctx, firsts, k.depth, p.repetitions, team, total, &migrated)
        })
        .collect();
    // The savings at the deepest depth on one thread go on, doubling,
    // until each is resolved.
    let depth = p.depths.iter().max().copied().unwrap_or(0);
    let at = |l: Linkage| keys.iter().position(|k| k.linkage == l && k.depth == depth && k.threads == 1);
    let questions: Vec<schedule::Question> = CHANGES
        .iter()
        .filter_map(|&(_, from, to)| Some(schedule::Question::Pair { a: at(from)?, b: at(to)? }))
        .collect();
    let mut plan = schedule::Plan::new(p.repetitions, p.min_sample_s).resolving(questions, 4 * p.repetitions);
    plan.seed = p.seed;
    let series = ctx.measure("calls", &plan, &mut variants)?;
    drop(variants);
    let cpu_time = usage
        .iter()
        .map(|c| {
            let u = c.usage.get();
            CpuTime {
                linkage: c.key.0,
                threads: c.key.1,
                user_s: u.user_s,
                system_s: u.system_s,
                wall_s: c.wall_s.get(),
            }
        })
        .collect();
    Ok(Measured { series, cpu_time, migrated: migrated.get() })
}

/// ns per call of each repetition of a cell.
fn ns_per_call(s: &schedule::Series, depth: u64) -> Vec<f64> {
    s.samples_s.iter().map(|t| t * 1e9 / (s.iters * depth) as f64).collect()
}

fn points(keys: &[CellKey], m: &Measured) -> Vec<Point> {
    keys.iter()
        .zip(&m.series)
        .map(|(k, s)| {
            let per_call = ns_per_call(s, k.depth);
            let summary = Summary::steady_of(&per_call).expect("measured");
            let per_thread = 1e9 / summary.median;
            Point {
                linkage: k.linkage,
                threads: k.threads,
                depth: k.depth,
                chains_per_sample: s.iters,
                samples_s: s.samples_s.clone(),
                ns_per_call: summary,
                calls_per_s_per_thread: per_thread,
                calls_per_s_all_threads: per_thread * k.threads as f64,
                valid: s.ok,
            }
        })
        .collect()
}

/// Depths from which a step is looked for: below 4 the outer call's cost
/// dominates the chain.
const STEP_FROM_DEPTH: u64 = 4;
use crate::analysis::steps::step_up;

/// Seconds per chain, per repetition, of the cells of one curve.
fn curve(keys: &[CellKey], series: &[schedule::Series], l: Linkage, t: usize) -> Vec<(u64, Vec<f64>)> {
    let mut c: Vec<(u64, Vec<f64>)> = keys
        .iter()
        .zip(series)
        .filter(|(k, _)| k.linkage == l && k.threads == t && k.depth >= STEP_FROM_DEPTH)
        .map(|(k, s)| (k.depth, s.per_iter_s()))
        .collect();
    c.sort_by_key(|x| x.0);
    c
}

fn steps(keys: &[CellKey], series: &[schedule::Series], p: &Params, ghz: Option<f64>) -> Vec<CurveStep> {
    let mut out: Vec<CurveStep> = Vec::new();
    let linkages: Vec<Linkage> = p.linkages.iter().copied().filter(|l| keys.iter().any(|k| k.linkage == *l)).collect();
    for &l in &linkages {
        // The thread counts measured (the time box may leave some out).
        for t in p.threads.iter().copied().filter(|t| keys.iter().any(|k| k.threads == *t)) {
            out.push(CurveStep { linkage: l, threads: t, step: step_up(&curve(keys, series, l, t), p.repetitions) });
        }
    }
    crate::analysis::steps::attribute_return_stack(&mut out, ghz);
    out
}

/// The steps drawn again from the document's per-repetition samples by
/// today's rules (`memperf report --reanalyze`).
fn reanalyze(o: &mut Outcome, ghz: Option<f64>) {
    let reps = o.points.iter().map(|p| p.samples_s.len()).min().unwrap_or(0);
    let mut out = Vec::new();
    for &l in o.linkages.iter().filter(|l| o.points.iter().any(|p| p.linkage == **l)) {
        for &t in &o.threads {
            let mut c: Vec<(u64, Vec<f64>)> = o
                .points
                .iter()
                .filter(|p| p.linkage == l && p.threads == t && p.depth >= STEP_FROM_DEPTH)
                .map(|p| (p.depth, p.samples_s.iter().map(|s| s / p.chains_per_sample as f64).collect()))
                .collect();
            c.sort_by_key(|x| x.0);
            out.push(CurveStep { linkage: l, threads: t, step: step_up(&c, reps) });
        }
    }
    crate::analysis::steps::attribute_return_stack(&mut out, ghz);
    o.steps = out;
    // The savings from the points' paired samples, by today's engine (the
    // looks the schedule took stay as recorded).
    let looks = |change: &str| o.savings.iter().find(|s| s.change == change).map(|s| s.speedup.looks.clone());
    let again = savings_of_points(&o.points);
    o.savings = again
        .into_iter()
        .map(|mut s| {
            s.speedup = s.speedup.clone().looked(looks(&s.change).unwrap_or_default());
            s
        })
        .collect();
}

/// What each change saves per call at the deepest depth of `points`, one
/// thread, from their paired samples.
fn savings_of_points(points: &[Point]) -> Vec<Saving> {
    let Some(depth) = points.iter().filter(|p| p.threads == 1).map(|p| p.depth).max() else { return Vec::new() };
    let per_call = |l: Linkage| {
        let p = points.iter().find(|p| p.linkage == l && p.depth == depth && p.threads == 1)?;
        let calls = (p.chains_per_sample * depth) as f64;
        Some(p.samples_s.iter().map(|t| t * 1e9 / calls).collect::<Vec<f64>>())
    };
    CHANGES
        .iter()
        .filter_map(|&(change, from, to)| saving((change, from, to), depth, &per_call(from)?, &per_call(to)?))
        .collect()
}

/// One change's saving from the paired per-call times of its two
/// linkages (`None` where either side has no usable time).
fn saving((change, from, to): (&str, Linkage, Linkage), depth: u64, pa: &[f64], pb: &[f64]) -> Option<Saving> {
    Some(Saving {
        change: change.into(),
        from,
        to,
        depth,
        ns_per_call_from: crate::timing::stats::median(pa)?,
        ns_per_call_to: crate::timing::stats::median(pb)?,
        speedup: Ratio::paired(pa, pb)?,
    })
}

/// The changes whose savings the experiment resolves: what the change is,
/// and the linkage it goes from and to.
const CHANGES: [(&str, Linkage, Linkage); 5] = [
    ("-fno-plt (call through the GOT, no PLT stub)", Linkage::Plt, Linkage::Got),
    (
        "bind the call inside one object (-Bsymbolic or hidden visibility within a library, or static linking)",
        Linkage::Plt,
        Linkage::Direct,
    ),
    ("inline across the libraries (LTO over one library, -fipa, -xipo)", Linkage::Plt, Linkage::Inlined),
    ("inline (LTO, -flto, -fipa, -xipo)", Linkage::Direct, Linkage::Inlined),
    ("keep fewer registers live across calls", Linkage::Saves, Linkage::Direct),
];

/// What each change saves per call at the deepest depth, one thread.
fn savings(keys: &[CellKey], series: &[schedule::Series], p: &Params) -> Vec<Saving> {
    let Some(&depth) = p.depths.iter().max() else { return Vec::new() };
    let cell = |l: Linkage| {
        keys.iter().zip(series).find(|(k, _)| k.linkage == l && k.depth == depth && k.threads == 1).map(|(_, s)| s)
    };
    CHANGES
        .iter()
        .filter_map(|&(change, from, to)| {
            let (a, b) = (cell(from)?, cell(to)?);
            let s = saving((change, from, to), depth, &ns_per_call(a, depth), &ns_per_call(b, depth))?;
            Some(Saving { speedup: s.speedup.looked(a.looks.clone()), ..s })
        })
        .collect()
}

/// Options of `memperf calls`.
#[derive(Debug, clap::Args)]
pub struct Options {
    /// Linkages, comma-separated [default: all]
    #[arg(long, value_name = "LIST", allow_hyphen_values = true, value_parser = options::list(Linkage::parse, options::offers::linkages))]
    pub variants: Option<options::List<Linkage>>,
    /// Chain depths: a list (1,2,4) or ranges START:END:STEP, comma-separated [default: 1..4096, dense around 4..128]
    #[arg(long, value_name = "LIST", allow_hyphen_values = true, value_parser = |t: &str| depths(t).map(options::List).map_err(|e| e.message))]
    pub depths: Option<options::List<u64>>,
    #[command(flatten)]
    pub cells: options::CellArgs,
}

impl options::Options for Options {
    type Experiment = Calls;
    /// A good value of every option, as the man page shows them.
    const EXAMPLES: &'static [&'static [&'static str]] = &[
        &["--variants", "direct", "--depths", "1,4:8:4", "--threads", "1", "--repetitions", "2"],
    ];

    fn params(&self, asked: &options::Request) -> Result<Params> {
        let mut p = Params::preset(asked.preset);
        p.linkages = options::List::or(&self.variants, p.linkages);
        p.depths = options::List::or(&self.depths, p.depths);
        (p.threads, p.repetitions) = self.cells.apply(p.threads, p.repetitions)?;
        p.check()?;
        Ok(p)
    }
}

/// `1,2,4,8:64:8,4096`: single depths and START:END:STEP ranges, sorted.
pub fn depths(text: &str) -> Result<Vec<u64>> {
    let mut out: Vec<u64> = Vec::new();
    for item in text.split(',') {
        let item = item.trim();
        if item.contains(':') {
            let s = crate::units::named("--depths", crate::units::parse_sweep(item))?;
            if s.end > MAX_DEPTH {
                return Err(Error::usage(format!("--depths {item}: a depth lies in 1..={MAX_DEPTH}")));
            }
            out.extend(s.values());
        } else {
            let d = item.parse::<u64>().map_err(|_| {
                Error::usage(format!("--depths '{item}': use depths like 1,2,4 or ranges like 4:128:4"))
            })?;
            out.push(d);
        }
    }
    out.sort();
    if let Some(w) = out.windows(2).find(|w| w[0] == w[1]) {
        return Err(Error::usage(format!("--depths: depth {} appears twice in '{text}': give each depth once", w[0])));
    }
    Ok(out)
}

impl crate::model::Redraw for Outcome {
    /// Steps named for the return stack by size and depth, at a clock only
    /// two chains measured.
    fn recheck(&mut self, ghz: Option<f64>) {
        crate::analysis::steps::attribute_return_stack(&mut self.steps, ghz);
    }
    fn reanalyse(&mut self, _: &crate::machine::Fingerprint, ghz: Option<f64>) -> Vec<&'static str> {
        reanalyze(self, ghz);
        vec!["steps", "savings"]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The default preset's dense depths with ±3% noise per sample: the
    /// split lands at the step, not wherever the median ratio happens to
    /// be as large (the first method put it at depth 13).
    #[test]
    fn a_noisy_dense_curve_puts_the_step_where_it_is() {
        let depths = dense(&[(4, 16, 1), (20, 128, 4), (160, 256, 32)], &[384, 512, 1024, 2048, 4096]);
        let mut rng = crate::rng::SplitMix64(7);
        let c: Vec<(u64, Vec<f64>)> = depths
            .iter()
            .map(|&d| {
                let t = 1e-9 * (10.0 + d as f64 + 4.0 * d.saturating_sub(32) as f64);
                (d, (0..12).map(|_| t * (1.0 + 0.03 * ((rng.next_u64() % 2001) as f64 / 1000.0 - 1.0))).collect())
            })
            .collect();
        match step_up(&c, 12) {
            StepUp::Clear { before_depth, after_depth, .. } => {
                assert!(
                    (28..=32).contains(&before_depth) && (32..=36).contains(&after_depth),
                    "{before_depth}..{after_depth}"
                )
            }
            other => panic!("{other:?}"),
        }
    }

    /// A chain that returns one less than its depth: every cell it ran in
    /// is invalid.
    #[test]
    fn a_wrong_return_fails_validation() {
        extern "C" fn off_by_one(n: i64) -> i64 {
            n - 1
        }
        let m = crate::machine::collect();
        let clock = crate::timing::FakeClock::stepping(vec![1_000_000]);
        let ctx = Bench::new(&m, &clock, &super::super::NoProgress);
        let p = Params {
            linkages: vec![Linkage::Direct, Linkage::Saves],
            depths: vec![4],
            threads: vec![1],
            repetitions: 2,
            min_sample_s: 0.0005,
            seed: 1,
        };
        let teams = [(1, Team::new(1).unwrap())];
        let chains: Vec<(Linkage, Vec<ChainFn>)> =
            vec![(Linkage::Direct, vec![off_by_one]), (Linkage::Saves, vec![calls::linked(Linkage::Saves).unwrap()])];
        let keys: Vec<CellKey> = chains.iter().map(|c| CellKey { linkage: c.0, depth: 4, threads: 1 }).collect();
        let m = measure(&p, &ctx, &keys, &chains, &[&teams[0]]).unwrap();
        let pts = points(&keys, &m);
        assert!(!pts[0].valid, "the off-by-one chain is caught");
        assert!(pts[1].valid, "the real one passes");
    }

    #[test]
    fn bad_parameters_are_refused() {
        let mut p = Params::preset(Preset::Quick);
        p.depths = vec![0];
        assert!(p.check().unwrap_err().message.contains("1..=16384"));
        p.depths = vec![MAX_DEPTH + 1];
        assert_eq!(p.check().unwrap_err().kind.exit_code(), 2);
        p.depths = vec![4];
        p.linkages.clear();
        assert!(p.check().is_err());
    }

    /// A variant with several entries (a shared chain's copies) takes them
    /// in turn, each warmed with eight untimed chains first: two samples a
    /// copy where the repetitions give each copy two, else one a sample.
    #[test]
    fn samples_take_the_copies_in_turn() {
        use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
        // Which copy ran each chain (a chain of depth 5 calls its entry once).
        static ORDER: std::sync::Mutex<Vec<usize>> = std::sync::Mutex::new(Vec::new());
        static LAST: AtomicUsize = AtomicUsize::new(usize::MAX);
        fn called(copy: usize, n: i64) -> i64 {
            LAST.store(copy, Relaxed);
            ORDER.lock().unwrap().push(copy);
            n
        }
        extern "C" fn a(n: i64) -> i64 {
            called(0, n)
        }
        extern "C" fn b(n: i64) -> i64 {
            called(1, n)
        }
        extern "C" fn c(n: i64) -> i64 {
            called(2, n)
        }
        let m = crate::machine::collect();
        let clock = crate::timing::FakeClock::stepping(vec![1_000_000]);
        let ctx = Bench::new(&m, &clock, &super::super::NoProgress);
        let team = Team::new(1).unwrap();
        let total = CpuTotal { key: (Linkage::Plt, 1), usage: Cell::default(), wall_s: Cell::default() };
        let migrated = Cell::new(0);
        let firsts: Vec<ChainFn> = vec![a, b, c];
        // The copy each sample timed: the last chain before it returned.
        let timed_copies = |repetitions: usize| {
            ORDER.lock().unwrap().clear();
            let mut variant = chain_variant(&ctx, &firsts, 5, repetitions, &team, &total, &migrated);
            (0..repetitions)
                .map(|_| {
                    assert!(variant(Step::Run(1)).ok);
                    LAST.load(Relaxed)
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(timed_copies(6), vec![0, 0, 1, 1, 2, 2]);
        let each = 2 * (COPY_WARM_CHAINS + 1) as usize;
        let order = ORDER.lock().unwrap().clone();
        let per_copy: Vec<usize> = (0..3).map(|k| order.iter().filter(|&&c| c == k).count()).collect();
        assert_eq!(per_copy, vec![each; 3], "each copy: two samples of one chain after the warm ones");
        // Five repetitions would leave the third copy out two at a time.
        assert_eq!(timed_copies(5), vec![0, 1, 2, 0, 1]);
    }

    /// The whole experiment on a fake clock: every team run lasts 1 ms, so
    /// ns per call is 1 ms / (chains × depth) exactly.
    #[test]
    fn end_to_end_on_a_fake_clock_gives_exact_figures() {
        let m = crate::machine::collect();
        let clock = crate::timing::FakeClock::stepping(vec![1_000_000]);
        let ctx = Bench::new(&m, &clock, &super::super::NoProgress);
        let p = Params {
            linkages: vec![Linkage::Direct, Linkage::Inlined],
            depths: vec![1, 10],
            threads: vec![1],
            repetitions: 3,
            min_sample_s: 0.0005,
            seed: 1,
        };
        let o = run(&p, &ctx).unwrap();
        assert!(o.valid);
        assert_eq!(o.points.len(), 4);
        // The saving at the deepest depth is not resolved on three
        // repetitions (no 99% interval), nor six; on twelve it is: its
        // cells go on to the third look, the others stop at the first.
        for pt in &o.points {
            let want = 1e6 / (pt.chains_per_sample * pt.depth) as f64;
            assert_eq!(pt.ns_per_call.median, want, "{pt:?}");
            assert_eq!(pt.samples_s.len(), if pt.depth == 10 { 12 } else { 3 }, "{pt:?}");
        }
        assert!(o.steps.iter().all(|s| matches!(s.step, StepUp::NotMeasured { .. })));
        let saving = o.savings.iter().find(|s| s.from == Linkage::Direct && s.to == Linkage::Inlined).unwrap();
        assert_eq!(saving.depth, 10);
        assert_eq!((saving.speedup.n, saving.speedup.looks.clone()), (12, vec![3, 6, 12]));
    }
}
