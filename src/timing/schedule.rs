//! The one measurement method every experiment uses, for a host that
//! drifts by tens of percent in minutes: each variant is warmed up (a full
//! untimed pass, and before each sample where it asks), calibrated until a
//! sample lasts `min_sample_s`, then run once per repetition in an order
//! shuffled anew each time (seeded, recorded). Variants sharing a
//! reference run as a group, the reference before and after every block
//! of `reference_every`. Comparisons are paired per repetition and judged
//! by `timing::verdict`; a best of many is chosen on half the repetitions
//! and scored on the rest ([`holdout_best`]). The scheduler knows no
//! experiment: variants are closures.

use super::clock::Clock;
use crate::error::Result;
use serde::{Deserialize, Serialize};

pub use memperf_model::timing::ratio::{median_interval, Ratio, MIN_PAIRS_FOR_VERDICT};
pub use memperf_model::timing::verdict::Call;

/// What a variant is asked to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Untimed: bring caches and TLBs to the variant's steady state.
    WarmUp,
    /// Run this many iterations while calibrating (timed, not kept).
    Calibrate(u64),
    /// Run this many iterations for a sample (timed by the scheduler unless
    /// the variant reports its own time).
    Run(u64),
}

impl Step {
    /// Iterations to run: `warm` for a warm-up, else the count asked for.
    pub fn iterations(self, warm: u64) -> u64 {
        match self {
            Step::WarmUp => warm,
            Step::Calibrate(n) | Step::Run(n) => n,
        }
    }
}

/// What a variant reports after a step.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StepReport {
    /// The result validated (checksum, end position …).
    pub ok: bool,
    /// The variant's own timing of the step, when it has a better one than
    /// the scheduler's (a team of threads times from the start barrier).
    pub elapsed_ns: Option<u64>,
}

impl StepReport {
    pub fn valid(ok: bool) -> StepReport {
        StepReport { ok, elapsed_ns: None }
    }
    pub fn timed(ok: bool, elapsed_ns: u64) -> StepReport {
        StepReport { ok, elapsed_ns: Some(elapsed_ns) }
    }
}

/// A variant to measure: called with each [`Step`].
pub type Variant<'a> = Box<dyn FnMut(Step) -> StepReport + 'a>;

/// How to measure.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    pub repetitions: usize,
    /// One sample lasts at least this long (iterations grow until it does).
    pub min_sample_s: f64,
    /// Warm each variant again before each of its samples.
    pub warm_each_sample: bool,
    /// For each variant, the variant it is compared with (measured next to
    /// it); empty or `None`: no reference.
    pub reference_of: Vec<Option<usize>>,
    /// Block size between two reference samples.
    pub reference_every: usize,
    /// Seed of the per-repetition shuffles.
    pub seed: u64,
    /// Most iterations per sample (guards calibration against a variant
    /// that reports zero time).
    pub max_iters: u64,
    /// Each sample lasts at least this many times the variant's warm-up
    /// (0: off), so that a plan that warms every sample spends a bounded
    /// share of its time warming (at most 1 / (1 + this)).
    #[serde(default)]
    pub sample_over_warm: f64,
    /// Past `repetitions`, repetitions go on until every variant's median
    /// is known to ± this fraction (95% interval), up to `max_repetitions`
    /// or `stop_looking_at_ns`: what "resolved" means for an absolute figure.
    #[serde(default)]
    pub precision: Option<f64>,
    #[serde(default)]
    pub max_repetitions: usize,
    /// Comparisons resolved sequentially (see [`measure`]): the schedule
    /// looks at them after `repetitions`, and again at each doubling up
    /// to `max_repetitions` ([`MAX_LOOKS`] looks at most), and a variant
    /// stops once every comparison it is in is resolved.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub questions: Vec<Question>,
    /// Where set, a question is settled once its interval lies inside ±
    /// this fraction (a test of flatness), or once it excludes no change
    /// (a direction), whichever comes first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settle_within: Option<f64>,
    /// No look past the first, and no repetition past `repetitions`,
    /// starts after this reading of the clock (the experiment's share of
    /// the time box); `None`: no limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_looking_at_ns: Option<u64>,
    /// Each variant's iterations per sample, where a earlier measurement of
    /// the same variants calibrated them (a fresh mapping of the same
    /// working set); empty: calibrate.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub iters: Vec<u64>,
}

/// A comparison the schedule resolves: how its per-repetition values are
/// formed from the variants' samples.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Question {
    /// `a`'s time per iteration over `b`'s, repetition by repetition.
    Pair { a: usize, b: usize },
    /// A variant's speed over its reference's measured beside it.
    OverReference { variant: usize },
    /// A variant's time per iteration minus its reference's beside it,
    /// judged against the reference's level.
    DifferenceOverReference { variant: usize },
}

impl Question {
    /// The variants whose samples it reads.
    pub fn variants(&self, reference_of: &dyn Fn(usize) -> Option<usize>) -> Vec<usize> {
        match *self {
            Question::Pair { a, b } => vec![a, b],
            Question::OverReference { variant } | Question::DifferenceOverReference { variant } => {
                std::iter::once(variant).chain(reference_of(variant)).collect()
            }
        }
    }

    /// Its evidence so far, as the engine judges it.
    pub fn ratio(&self, series: &[Series]) -> Option<Ratio> {
        self.ratio_in(series, &[])
    }

    /// Its evidence, repetition `i` measured on mapping `mapping_of[i]`
    /// (empty: one mapping).
    pub fn ratio_in(&self, series: &[Series], mapping_of: &[u32]) -> Option<Ratio> {
        use memperf_model::timing::verdict::Scale;
        let (values, scale, level) = match *self {
            Question::Pair { a, b } => {
                let v = series[a].per_iter_s().iter().zip(series[b].per_iter_s()).map(|(x, y)| x / y).collect();
                (v, Scale::Ratio, None)
            }
            Question::OverReference { variant } => (series[variant].speed_over_reference(), Scale::Ratio, None),
            Question::DifferenceOverReference { variant } => {
                let s = &series[variant];
                let d = s.per_iter_s().iter().zip(&s.adjacent_reference_s_per_iter).map(|(x, r)| x - r).collect();
                (d, Scale::Difference, super::stats::median(&s.adjacent_reference_s_per_iter))
            }
        };
        let mapping_of = mapping_of.get(..values.len()).unwrap_or_default().to_vec();
        let r = Ratio::with_evidence(values, mapping_of, scale)?;
        Some(match level {
            Some(l) => r.relative_to(l),
            None => r,
        })
    }

    /// Resolved: a direction, or no change within the default threshold.
    pub fn resolved(&self, series: &[Series]) -> bool {
        self.ratio(series).is_some_and(|r| r.verdict().resolved())
    }
}

pub use memperf_model::timing::verdict::MAX_LOOKS;

/// The repetitions at which a plan with questions looks: `first`, then
/// doubling up to `most`, [`MAX_LOOKS`] at most (the last at `most`).
pub fn look_points(first: usize, most: usize) -> Vec<usize> {
    let first = first.max(1);
    let mut points = vec![first];
    while points.len() < MAX_LOOKS && *points.last().expect("one") < most {
        points.push((points.last().expect("one") * 2).min(most));
    }
    points
}

impl Plan {
    /// `min_sample_s` is raised to 1,000 ticks of the timer where it is shorter.
    pub fn new(repetitions: usize, min_sample_s: f64) -> Plan {
        Plan {
            repetitions,
            min_sample_s: min_sample_s.max(super::clock::min_sample_floor_s()),
            warm_each_sample: false,
            reference_of: Vec::new(),
            reference_every: 4,
            seed: 0x7363_6865_6475_6c65,
            max_iters: 1 << 40,
            sample_over_warm: 0.0,
            precision: None,
            max_repetitions: repetitions,
            questions: Vec::new(),
            settle_within: None,
            stop_looking_at_ns: None,
            iters: Vec::new(),
        }
    }

    /// The same plan resolving `questions` sequentially, looking first
    /// after `repetitions` and at most after `most`.
    pub fn resolving(mut self, questions: Vec<Question>, most: usize) -> Plan {
        self.questions = questions;
        self.max_repetitions = most.max(self.repetitions);
        self
    }
}

/// `repetitions` split as evenly as they go among `parts` shares (fresh
/// mappings of a region, say), none empty: 10 in 3 is 4 + 3 + 3; more
/// parts than repetitions, one each; none asked, one share.
pub fn shares(repetitions: usize, parts: usize) -> Vec<usize> {
    let n = parts.clamp(1, repetitions.max(1));
    (0..n).map(|g| repetitions / n + usize::from(g < repetitions % n)).collect()
}

/// Everything measured for one variant.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Series {
    /// Iterations per sample.
    pub iters: u64,
    /// Seconds per sample, one per repetition, in repetition order.
    pub samples_s: Vec<f64>,
    /// For each sample, the reference's seconds per iteration measured
    /// next to it (empty without a reference, or for the reference itself).
    pub adjacent_reference_s_per_iter: Vec<f64>,
    /// Every step validated.
    pub ok: bool,
    /// Repetitions at each look the schedule took at its questions (empty:
    /// none asked).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub looks: Vec<usize>,
}

impl Series {
    /// Seconds per iteration of each sample.
    pub fn per_iter_s(&self) -> Vec<f64> {
        self.samples_s.iter().map(|s| s / self.iters as f64).collect()
    }

    /// Per sample, how much faster than its reference measured beside it
    /// (the reference's seconds per iteration over this one's); empty
    /// without a reference.
    pub fn speed_over_reference(&self) -> Vec<f64> {
        self.adjacent_reference_s_per_iter.iter().zip(self.per_iter_s()).map(|(a, b)| a / b).collect()
    }
}

/// The order each repetition measured (variant indices), for the record.
pub type Orders = Vec<Vec<usize>>;

/// Measures every variant under `plan`; `between` runs before each sample
/// (progress, the interrupt check) and may stop the measurement.
pub fn measure(
    plan: &Plan,
    clock: &dyn Clock,
    variants: &mut [Variant],
    between: &mut dyn FnMut() -> Result<()>,
) -> Result<(Vec<Series>, Orders)> {
    let n = variants.len();
    let mut series: Vec<Series> = (0..n)
        .map(|_| Series {
            iters: 1,
            samples_s: Vec::new(),
            adjacent_reference_s_per_iter: Vec::new(),
            ok: true,
            looks: Vec::new(),
        })
        .collect();
    let mut warm_ns = vec![0u64; n];
    for (i, ((v, s), w)) in variants.iter_mut().zip(series.iter_mut()).zip(warm_ns.iter_mut()).enumerate() {
        // A variant calibrated already, warmed before each sample, needs
        // no warm-up of its own here.
        if plan.warm_each_sample && plan.iters.get(i).is_some_and(|&n| n > 0) {
            continue;
        }
        let (ns, ok) = timed(clock, v, Step::WarmUp);
        s.ok &= ok;
        *w = ns;
    }
    for (i, ((v, s), &w)) in variants.iter_mut().zip(series.iter_mut()).zip(&warm_ns).enumerate() {
        let target_ns = (plan.min_sample_s * 1e9).max(plan.sample_over_warm * w as f64);
        s.iters = match plan.iters.get(i) {
            Some(&n) if n > 0 => n,
            _ => calibrate(plan, clock, v, &mut s.ok, target_ns),
        };
    }
    let reference_of = |i: usize| plan.reference_of.get(i).copied().flatten();
    let is_reference: Vec<bool> = (0..n).map(|i| (0..n).any(|j| reference_of(j) == Some(i))).collect();
    let mut rng = crate::rng::SplitMix64(plan.seed);
    let mut orders = Vec::with_capacity(plan.repetitions);
    if !plan.questions.is_empty() {
        sequential(plan, clock, variants, &mut series, &mut orders, &is_reference, &reference_of, &mut rng, between)?;
        return Ok((series, orders));
    }
    let late = || plan.stop_looking_at_ns.is_some_and(|t| clock.now_ns() >= t);
    while orders.len() < plan.repetitions
        || (orders.len() < plan.max_repetitions && !precise_enough(plan.precision, &series) && !late())
    {
        let order = repetition_order(n, &is_reference, &reference_of, plan.reference_every.max(1), &mut rng, None);
        repetition(plan, clock, variants, &mut series, &order, &is_reference, &reference_of, between)?;
        orders.push(order);
    }
    Ok((series, orders))
}

/// What [`in_mappings`] measured: each variant's samples over every
/// mapping, in mapping order, at the fewest iterations per sample of any
/// mapping (so per-iteration times are kept); the mapping of each
/// repetition; the looks taken, in repetitions.
#[derive(Debug, Clone, PartialEq)]
pub struct SeriesByMapping {
    pub series: Vec<Series>,
    pub mapping_of: Vec<u32>,
    pub looks: Vec<usize>,
}

impl SeriesByMapping {
    /// A question's evidence over every mapping, with the looks recorded.
    pub fn ratio(&self, q: Question) -> Option<Ratio> {
        q.ratio_in(&self.series, &self.mapping_of).map(|r| r.looked(self.looks.clone()))
    }
}

/// Measures in fresh mappings of the arms' memory, `per_mapping`
/// repetitions each: `one(k, reps)` maps anew (mapping `k`) and measures
/// `reps` repetitions of every variant through [`measure`]. Where memory
/// lands is a level of its own, so the plan's questions are resolved over
/// mappings as [`measure`] resolves them over repetitions: a look after
/// `plan.repetitions` and at each doubling up to `max_repetitions`
/// ([`MAX_LOOKS`] looks at most where there are questions), mappings
/// added until every question is resolved and every median known to the
/// plan's precision; no look past the first started after
/// `stop_looking_at_ns`.
pub fn in_mappings(
    plan: &Plan,
    per_mapping: usize,
    clock: &dyn Clock,
    one: &mut dyn FnMut(usize, usize) -> Result<Vec<Series>>,
) -> Result<SeriesByMapping> {
    let per = per_mapping.max(1);
    let most = plan.max_repetitions.max(plan.repetitions).max(1);
    let mut next = plan.repetitions.max(1);
    let mut shares: Vec<Vec<Series>> = Vec::new();
    let mut mapping_of: Vec<u32> = Vec::new();
    let mut looks = Vec::new();
    loop {
        while mapping_of.len() < next {
            let k = shares.len();
            let reps = per.min(next - mapping_of.len());
            shares.push(one(k, reps)?);
            mapping_of.extend(std::iter::repeat_n(k as u32, reps));
        }
        looks.push(mapping_of.len());
        let merged = merge(&shares);
        let resolved =
            plan.questions.iter().all(|q| q.ratio_in(&merged, &mapping_of).is_some_and(|r| r.verdict().resolved()));
        let done = resolved && precise_enough(plan.precision, &merged);
        let out_of_looks = !plan.questions.is_empty() && looks.len() >= MAX_LOOKS;
        let late = plan.stop_looking_at_ns.is_some_and(|t| clock.now_ns() >= t);
        if done || out_of_looks || late || mapping_of.len() >= most {
            break;
        }
        next = (mapping_of.len() * 2).min(most);
    }
    let mut series = merge(&shares);
    for s in &mut series {
        s.looks = if plan.questions.is_empty() { Vec::new() } else { looks.clone() };
    }
    Ok(SeriesByMapping { series, mapping_of, looks })
}

/// Each variant's series over every share, in share order: samples scaled
/// to the fewest iterations per sample of any share, every check kept.
pub fn merge(shares: &[Vec<Series>]) -> Vec<Series> {
    let Some(first) = shares.first() else { return Vec::new() };
    (0..first.len())
        .map(|v| {
            let iters = shares.iter().filter_map(|sh| sh.get(v)).map(|s| s.iters).min().unwrap_or(1).max(1);
            let mut out = Series {
                iters,
                samples_s: Vec::new(),
                adjacent_reference_s_per_iter: Vec::new(),
                ok: true,
                looks: Vec::new(),
            };
            for s in shares.iter().filter_map(|sh| sh.get(v)) {
                let scale = iters as f64 / s.iters.max(1) as f64;
                out.samples_s.extend(s.samples_s.iter().map(|x| x * scale));
                out.adjacent_reference_s_per_iter.extend(&s.adjacent_reference_s_per_iter);
                out.ok &= s.ok;
            }
            out
        })
        .collect()
}

/// Repetitions up to each look of [`look_points`]; after a look, only the
/// variants of comparisons not yet resolved (and their references) go
/// on, so a stopped variant's samples are a prefix of the repetitions and
/// stay paired by index. No look past the first starts after
/// `stop_looking_at_ns`. Each series records the looks taken.
#[allow(clippy::too_many_arguments)]
fn sequential(
    plan: &Plan,
    clock: &dyn Clock,
    variants: &mut [Variant],
    series: &mut [Series],
    orders: &mut Orders,
    is_reference: &[bool],
    reference_of: &dyn Fn(usize) -> Option<usize>,
    rng: &mut crate::rng::SplitMix64,
    between: &mut dyn FnMut() -> Result<()>,
) -> Result<()> {
    let n = variants.len();
    let mut active = vec![true; n];
    let mut looks = Vec::new();
    for (i, &point) in look_points(plan.repetitions, plan.max_repetitions).iter().enumerate() {
        if i > 0 && plan.stop_looking_at_ns.is_some_and(|t| clock.now_ns() >= t) {
            break;
        }
        while orders.len() < point {
            let order =
                repetition_order(n, is_reference, reference_of, plan.reference_every.max(1), rng, Some(&active));
            repetition(plan, clock, variants, series, &order, is_reference, reference_of, between)?;
            orders.push(order);
        }
        looks.push(point);
        let settled = |q: &Question| match plan.settle_within {
            Some(t) => q.ratio(series).is_some_and(|r| r.inside(t) || r.verdict().resolved_direction()),
            None => q.resolved(series),
        };
        let open: Vec<&Question> = plan.questions.iter().filter(|q| !settled(q)).collect();
        active = vec![false; n];
        for q in open {
            for v in q.variants(reference_of) {
                active[v] = true;
            }
        }
        if !active.contains(&true) {
            break;
        }
    }
    for s in series.iter_mut() {
        s.looks = looks.clone();
    }
    Ok(())
}

/// Whether every variant's median is known to ± `precision` (relative
/// half-width of its 95% distribution-free interval); `None`: no target.
pub fn precise_enough(precision: Option<f64>, series: &[Series]) -> bool {
    let Some(p) = precision else { return true };
    series.iter().all(|s| median_known_within(&s.per_iter_s(), p))
}

/// The 95% interval of the median of `samples` spans at most ± `within`
/// of it.
pub fn median_known_within(samples: &[f64], within: f64) -> bool {
    relative_half_width(samples).is_some_and(|w| w <= within)
}

/// Half the width of the 95% interval of the median of `v`, over the
/// median; `None` below six values (no interval reaches 95%).
pub fn relative_half_width(v: &[f64]) -> Option<f64> {
    let mut v: Vec<f64> = v.iter().copied().filter(|x| x.is_finite()).collect();
    if v.len() < 6 {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let (k, _) = median_interval(v.len(), 0.95);
    let median = super::stats::median(&v)?;
    (median > 0.0).then(|| (v[v.len() - 1 - k] - v[k]) / 2.0 / median)
}

/// One repetition: every variant once in `order`, references bracketing
/// their blocks.
#[allow(clippy::too_many_arguments)]
fn repetition(
    plan: &Plan,
    clock: &dyn Clock,
    variants: &mut [Variant],
    series: &mut [Series],
    order: &[usize],
    is_reference: &[bool],
    reference_of: &dyn Fn(usize) -> Option<usize>,
    between: &mut dyn FnMut() -> Result<()>,
) -> Result<()> {
    let n = variants.len();
    let rep = series.iter().map(|s| s.samples_s.len()).max().unwrap_or(0);
    let mut last_ref: Vec<Option<f64>> = vec![None; n];
    // Samples waiting for the reference after their block: (variant,
    // index in its adjacent list).
    let mut pending: Vec<(usize, usize)> = Vec::new();
    let mut group_now: Option<usize> = None;
    for &i in order {
        between()?;
        let group = if is_reference[i] { Some(i) } else { reference_of(i) };
        if group != group_now {
            // A group's first sample comes right after another group's
            // (another thread count, another array): one untimed run of
            // its reference first, so no member pays for the switch.
            if let Some(r) = group {
                series[r].ok &= variants[r](Step::Calibrate(series[r].iters)).ok;
            }
            group_now = group;
        }
        let secs = sample(plan, clock, &mut variants[i], &mut series[i]);
        if is_reference[i] {
            // One sample per repetition is kept: the reference's first;
            // later ones serve only as neighbours.
            if series[i].samples_s.len() == rep {
                series[i].samples_s.push(secs);
            }
            let now = secs / series[i].iters as f64;
            // The samples of the block just measured get the mean of
            // the references on both sides of it (A B A bracketing: a
            // drift over the block cancels, and so does the reference's
            // place in the order).
            for (v, k) in pending.extract_if(.., |(v, _)| reference_of(*v) == Some(i)) {
                let before = series[v].adjacent_reference_s_per_iter[k];
                series[v].adjacent_reference_s_per_iter[k] =
                    if before.is_finite() { (before * now).sqrt() } else { now };
            }
            last_ref[i] = Some(now);
        } else {
            series[i].samples_s.push(secs);
        }
        if let Some(r) = reference_of(i) {
            series[i].adjacent_reference_s_per_iter.push(last_ref[r].unwrap_or(f64::NAN));
            pending.push((i, series[i].adjacent_reference_s_per_iter.len() - 1));
        }
    }
    Ok(())
}

/// One repetition's order: the variants shuffled, those sharing a
/// reference kept together (groups in shuffled order), and each group's
/// reference before every block of `every` of its members and once after
/// the last, so every block is bracketed by two reference samples.
/// `active`: the variants still measured (all where `None`); a reference
/// runs where a member of its group does, or where it is active itself.
fn repetition_order(
    n: usize,
    is_reference: &[bool],
    reference_of: &dyn Fn(usize) -> Option<usize>,
    every: usize,
    rng: &mut crate::rng::SplitMix64,
    active: Option<&[bool]>,
) -> Vec<usize> {
    let on = |i: usize| active.is_none_or(|a| a[i]);
    let mut others: Vec<usize> = (0..n).filter(|&i| !is_reference[i]).collect();
    rng.shuffle(&mut others);
    let mut group_rank: Vec<u64> = (0..=n as u64).collect();
    rng.shuffle(&mut group_rank);
    // Stable: the shuffled order survives inside each group.
    others.sort_by_key(|&i| group_rank[reference_of(i).unwrap_or(n)]);
    let mut out = Vec::with_capacity(2 * n);
    let mut start = 0;
    while start < others.len() {
        let group = reference_of(others[start]);
        let end = others[start..].iter().position(|&i| reference_of(i) != group).map_or(others.len(), |p| start + p);
        for block in others[start..end].chunks(every) {
            out.extend(group);
            out.extend_from_slice(block);
        }
        out.extend(group);
        start = end;
    }
    // A reference nobody was scheduled next to still gets its sample.
    let unscheduled: Vec<usize> = (0..n).filter(|&r| is_reference[r] && !out.contains(&r)).collect();
    out.extend(unscheduled);
    if active.is_some() {
        // Members stopped, and references whose group and self stopped.
        let group_on = |r: usize| on(r) || (0..n).any(|j| reference_of(j) == Some(r) && on(j));
        out.retain(|&i| if is_reference[i] { group_on(i) } else { on(i) });
        out.dedup();
    }
    out
}

/// One timed sample of `iters` iterations, in seconds.
fn sample(plan: &Plan, clock: &dyn Clock, v: &mut Variant, s: &mut Series) -> f64 {
    if plan.warm_each_sample {
        s.ok &= v(Step::WarmUp).ok;
    }
    let (ns, ok) = timed(clock, v, Step::Run(s.iters));
    s.ok &= ok;
    ns as f64 / 1e9
}

fn timed(clock: &dyn Clock, v: &mut Variant, step: Step) -> (u64, bool) {
    let t0 = clock.now_ns();
    let ran = v(step);
    let t1 = clock.now_ns();
    (ran.elapsed_ns.unwrap_or(t1.saturating_sub(t0)), ran.ok)
}

/// Iterations per sample so that one lasts at least `target_ns`: run,
/// and grow the count by the shortfall (at most ×10 per step, with a 10%
/// margin) until a run is long enough.
fn calibrate(plan: &Plan, clock: &dyn Clock, v: &mut Variant, ok: &mut bool, target_ns: f64) -> u64 {
    let mut iters = 1u64;
    loop {
        let (ns, good) = timed(clock, v, Step::Calibrate(iters));
        *ok &= good;
        if ns as f64 >= target_ns || iters >= plan.max_iters {
            return iters;
        }
        let grow = if ns == 0 { 10.0 } else { (target_ns * 1.1 / ns as f64).clamp(1.1, 10.0) };
        iters = ((iters as f64 * grow).ceil() as u64).clamp(iters + 1, plan.max_iters);
    }
}
/// A "best of many", chosen without the winner's curse.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Holdout {
    /// Index of the variant with the best median score on the even repetitions.
    pub chosen: usize,
    /// The chosen variant's scores on the odd repetitions: the figures to report.
    pub confirming: Vec<f64>,
}

/// Picks, among `candidates`, the variant with the highest median `score`
/// (per-repetition values, higher is better) on the even repetitions, and
/// returns its scores on the odd ones, which played no part in choosing.
pub fn holdout_best(score: &[Vec<f64>], candidates: &[usize]) -> Option<Holdout> {
    let half = |v: &[f64], parity: usize| -> Vec<f64> {
        v.iter().enumerate().filter(|(i, _)| i % 2 == parity).map(|(_, x)| *x).collect()
    };
    let chosen = candidates
        .iter()
        .filter_map(|&c| super::stats::median(&half(&score[c], 0)).map(|m| (c, m)))
        .max_by(|a, b| a.1.total_cmp(&b.1))?
        .0;
    let confirming = half(&score[chosen], 1);
    (!confirming.is_empty()).then_some(Holdout { chosen, confirming })
}

/// Samples one repetition takes (references included), for progress.
pub fn samples_per_repetition(plan: &Plan, n: usize) -> usize {
    let mut rng = crate::rng::SplitMix64(0);
    let reference_of = |i: usize| plan.reference_of.get(i).copied().flatten();
    let is_reference: Vec<bool> = (0..n).map(|i| (0..n).any(|j| reference_of(j) == Some(i))).collect();
    repetition_order(n, &is_reference, &reference_of, plan.reference_every.max(1), &mut rng, None).len()
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_fewest_pairs_for_a_verdict_are_the_fewest_with_a_direction() {
        let v = |n: usize| super::Ratio::of(&vec![2.0; n]).unwrap().call();
        assert_eq!(v(super::MIN_PAIRS_FOR_VERDICT - 1), super::Call::NotResolved);
        assert_eq!(v(super::MIN_PAIRS_FOR_VERDICT), super::Call::Above);
    }

    use super::*;

    #[test]
    fn repetitions_are_shared_as_evenly_as_they_go() {
        for (reps, parts, want) in
            [(10, 3, vec![4, 3, 3]), (10, 2, vec![5, 5]), (2, 5, vec![1, 1]), (7, 0, vec![7]), (6, 1, vec![6])]
        {
            assert_eq!(shares(reps, parts), want, "{reps} repetitions in {parts} shares");
        }
    }
    use crate::timing::FakeClock;
    use std::cell::RefCell;

    #[test]
    fn interval_coverage_is_exact() {
        // n = 5: [min, max] covers the median with 1 - 2/32 = 0.9375.
        assert_eq!(median_interval(5, 0.95), (0, 0.9375));
        // n = 10: k = 1 gives 1 - 2·11/1024 = 0.978515625; k = 2 gives 0.890625.
        assert_eq!(median_interval(10, 0.95), (1, 1.0 - 2.0 * 11.0 / 1024.0));
    }

    /// Every read of the fake clock advances 1 ms; a variant's run reads it
    /// `iters` more times, so a run of k iterations takes (k + 1) ms.
    fn variant<'a>(clock: &'a FakeClock, log: &'a RefCell<Vec<(usize, Step)>>, id: usize) -> Variant<'a> {
        Box::new(move |step| {
            log.borrow_mut().push((id, step));
            if let Step::Run(k) | Step::Calibrate(k) = step {
                for _ in 0..k {
                    clock.now_ns();
                }
            }
            StepReport::valid(true)
        })
    }

    #[test]
    fn calibrates_warms_interleaves_and_pairs_with_exact_times() {
        let clock = FakeClock::stepping(vec![1_000_000]);
        let log = RefCell::new(Vec::new());
        let mut vs: Vec<Variant> = (0..3).map(|i| variant(&clock, &log, i)).collect();
        let mut plan = Plan::new(4, 0.010);
        plan.reference_of = vec![None, Some(0), Some(0)];
        plan.reference_every = 1;
        plan.warm_each_sample = true;
        let mut calls = 0;
        let (series, orders) = measure(&plan, &clock, &mut vs, &mut || {
            calls += 1;
            Ok(())
        })
        .unwrap();
        // Calibration: 1 iter = 2 ms → ×5.5 → 6 iters = 7 ms → ×1.57 → 10 iters = 11 ms ≥ 10 ms.
        assert!(series.iter().all(|s| s.iters == 10), "{:?}", series.iter().map(|s| s.iters).collect::<Vec<_>>());
        // Each sample: the scheduler's two reads plus ten in the run: 11 ms.
        for s in &series {
            assert_eq!(s.samples_s, vec![0.011; 4]);
            assert!(s.ok);
        }
        // Reference before each of the two others and after the last,
        // every repetition.
        assert!(orders.iter().all(|o| o.len() == 5 && o[0] == 0 && o[2] == 0 && o[4] == 0));
        assert_eq!(calls, 20);
        assert_eq!(samples_per_repetition(&plan, 3), 5);
        assert_eq!(series[1].adjacent_reference_s_per_iter, vec![0.011 / 10.0; 4]);
        assert!(series[0].adjacent_reference_s_per_iter.is_empty());
        // One warm-up each at the start and before each timed sample; the
        // samples are told apart from calibration runs.
        let warm = log.borrow().iter().filter(|(i, s)| *i == 1 && *s == Step::WarmUp).count();
        assert_eq!(warm, 1 + 4);
        let runs = log.borrow().iter().filter(|(i, s)| *i == 1 && matches!(s, Step::Run(10))).count();
        assert_eq!(runs, 4);
        // The order of the others is shuffled, not fixed.
        let firsts: Vec<usize> = orders.iter().map(|o| o[1]).collect();
        assert!(firsts.contains(&1) || firsts.contains(&2));
    }

    /// The reference slows down by 1 ms at every sample (a drifting host):
    /// a member's adjacent reference is the geometric mean of the samples
    /// before and after its block, not the one before it; and each group
    /// starts with an untimed run of its reference.
    #[test]
    fn each_block_is_bracketed_by_two_reference_samples() {
        let clock = FakeClock::stepping(vec![1]);
        let calls = std::cell::Cell::new(0u64);
        let lead_ins = std::cell::Cell::new(0u64);
        let mut vs: Vec<Variant> = vec![
            Box::new(|step| match step {
                Step::Run(_) => {
                    calls.set(calls.get() + 1);
                    StepReport::timed(true, calls.get() * 1_000_000)
                }
                Step::Calibrate(_) => {
                    lead_ins.set(lead_ins.get() + 1);
                    StepReport::timed(true, 1_000_000)
                }
                Step::WarmUp => StepReport::timed(true, 1_000_000),
            }),
            Box::new(|_| StepReport::timed(true, 1_000_000)),
        ];
        let mut plan = Plan::new(2, 0.0005);
        plan.reference_of = vec![None, Some(0)];
        let (series, orders) = measure(&plan, &clock, &mut vs, &mut || Ok(())).unwrap();
        assert!(orders.iter().all(|o| o == &vec![0, 1, 0]), "{orders:?}");
        // Reference samples: 1, 2 ms (repetition 0), 3, 4 ms (repetition 1).
        let want = [(1e-3f64 * 2e-3).sqrt(), (3e-3f64 * 4e-3).sqrt()];
        for (got, want) in series[1].adjacent_reference_s_per_iter.iter().zip(want) {
            assert!((got - want).abs() < 1e-12, "{got} vs {want}");
        }
        // One calibration run (1 ms already exceeds 0.5 ms), then one
        // untimed reference run per group and repetition.
        assert_eq!(lead_ins.get(), 1 + 2);
    }

    /// A figure short of its precision takes repetitions up to its most
    /// while its share lasts, and none past `repetitions` once the share
    /// has ended: samples of 1 and 3 ms in turn are never known to ±1%.
    #[test]
    fn repetitions_past_the_first_stop_where_the_share_ends() {
        let run = |stop: Option<u64>| {
            let clock = FakeClock::stepping(vec![1]);
            let mut k = 0u64;
            let mut vs: Vec<Variant> = vec![Box::new(move |_| {
                k += 1;
                StepReport::timed(true, if k.is_multiple_of(2) { 1_000_000 } else { 3_000_000 })
            })];
            let mut plan = Plan::new(4, 0.0);
            (plan.precision, plan.max_repetitions, plan.stop_looking_at_ns) = (Some(0.01), 12, stop);
            measure(&plan, &clock, &mut vs, &mut || Ok(())).unwrap().1.len()
        };
        assert_eq!(run(None), 12);
        assert_eq!(run(Some(0)), 4);
    }

    #[test]
    fn an_invalid_step_marks_the_series() {
        let clock = FakeClock::stepping(vec![1_000_000]);
        let mut bad: Vec<Variant> = vec![Box::new(|_| StepReport::valid(false))];
        let (s, _) = measure(&Plan::new(2, 0.0), &clock, &mut bad, &mut || Ok(())).unwrap();
        assert!(!s[0].ok);
    }

    #[test]
    fn an_interrupt_stops_between_samples() {
        let clock = FakeClock::stepping(vec![1_000_000]);
        let mut vs: Vec<Variant> = vec![Box::new(|_| StepReport::valid(true))];
        let r = measure(&Plan::new(3, 0.0), &clock, &mut vs, &mut || Err(crate::error::Error::interrupted()));
        assert!(r.is_err());
    }

    #[test]
    fn holdout_picks_on_even_and_confirms_on_odd() {
        // Variant 1 wins on even repetitions only (a lucky spike); the odd
        // repetitions, which did not choose it, report its real level.
        let reference = vec![10.0; 10];
        let v1: Vec<f64> = (0..10).map(|i| if i % 2 == 0 { 20.0 } else { 9.0 }).collect();
        let v2 = vec![12.0; 10];
        let s = holdout_best(&[reference, v1, v2], &[1, 2]).unwrap();
        assert_eq!(s.chosen, 1, "chosen on the even half");
        assert_eq!(s.confirming, vec![9.0; 5], "and the odd half shows the spike was luck");
        assert!(holdout_best(&[vec![1.0]], &[0]).is_none(), "one repetition cannot confirm");
    }
}
