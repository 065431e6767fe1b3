//! `memperf tlb`: TLB reach per page size and the cost of a page walk. One
//! cache line per page over P pages in one random cycle, P doubling past the
//! last TLB level, each knee measured again at ×1.25, ×1.5 and ×1.75. A
//! huge-page region swept with the 4 KiB layout is the control (the same
//! lines and cache sets, fewer translations): the 4 KiB sweep minus the
//! control, paired per repetition, is the walk alone, unless the control
//! steps where the 4 KiB sweep does (small TLB entries for huge pages), and
//! then no walk cost is derived. Knees are named only within ×2 of CPUID's
//! entry counts. The method, step by step: docs/methods/tlb.md.

mod curves;
pub mod options;

pub use options::Options;

use super::{chases, Bench, Experiment, Preset};
use curves::Swept;
use crate::error::{Error, Result};
use crate::kernels::chase::{visit_order, Chase};
use crate::memory::{PagePolicy, Buffer};
pub use crate::model::outcome::tlb::*;
use crate::model::Caution;
use crate::timing::core_clock::{self, CoreClock};
use crate::timing::Summary;
use crate::units::{Bytes, GIB};
use serde::{Deserialize, Serialize};
use std::cell::RefCell;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Params {
    pub pages: Vec<PagePolicy>,
    pub min_pages: u64,
    /// Most pages per policy (doubling from `min_pages`).
    pub max_pages: u64,
    /// Most memory per policy; caps the page count of large pages.
    pub max_bytes: Bytes,
    /// Samples per point (each after a warm-up traversal), interleaved.
    pub repetitions: usize,
    pub min_sample_s: f64,
    /// Measure again between the counts around each knee.
    pub refine: bool,
    pub seed: u64,
}

impl Params {
    pub fn preset(preset: Preset) -> Params {
        let (max_bytes, reps) = match preset {
            // 256 huge pages: past every L1 DTLB's 2 MiB entries; each is
            // a page faulted in (and compacted) for one line.
            Preset::Quick => (Bytes(GIB / 2), 3),
            Preset::Default => (Bytes(2 * GIB), 7),
            Preset::Full => (Bytes(8 * GIB), 11),
        };
        Params {
            pages: vec![PagePolicy::Small, PagePolicy::Thp],
            min_pages: 8,
            max_pages: 1 << 16,
            max_bytes,
            repetitions: reps,
            min_sample_s: 0.005,
            refine: true,
            seed: 0x746c_6273,
        }
    }

    /// Page counts for a sweep with one line every `stride` bytes.
    pub fn counts(&self, stride: Bytes) -> Vec<u64> {
        // Never past the memory cap: large pages start lower when it binds.
        let cap = self.max_pages.min(self.max_bytes.0 / stride.0).max(2);
        let first = self.min_pages.clamp(2, cap);
        std::iter::successors(Some(first), |&p| Some(p * 2)).take_while(|&p| p <= cap).collect()
    }

    /// The policy of the control region: the first huge policy asked for,
    /// else THP.
    pub fn control_policy(&self) -> PagePolicy {
        self.pages.iter().copied().find(|p| *p != PagePolicy::Small).unwrap_or(PagePolicy::Thp)
    }
}

pub struct Tlb;

impl Experiment for Tlb {
    const NAME: &'static str = "tlb";
    const SHARE: f64 = 3.5;
    type Params = Params;
    type Outcome = Outcome;

    fn preset(preset: crate::experiments::Preset, _: &crate::machine::Fingerprint) -> Params {
        Params::preset(preset)
    }

    fn needs(p: &Params) -> Result<crate::experiments::Needs> {
        check(p)?;
        Ok(crate::experiments::Needs {
            levels: true,
            // Its own sweep per policy, and the 4 KiB-stride control in
            // the control's policy (a region of its own).
            mapped: p.pages
                .iter()
                .map(|&pol| {
                    let page = pol.page_size().0;
                    let own = (p.counts(pol.page_size()).last().copied().unwrap_or(0) * page).next_multiple_of(page);
                    let control = p.counts(Bytes(4096)).last().copied().unwrap_or(0) * 4096;
                    (pol, own + if pol == p.control_policy() { control.next_multiple_of(page) } else { 0 })
                })
                .collect(),
            ..Default::default()
        })
    }
    fn run(p: &Params, ctx: &Bench) -> Result<Outcome> {
        run(p, ctx)
    }
}

/// Byte offset of page `s`'s line. The line inside the page comes from a
/// hash of s, not a simple function of s: on physically contiguous huge
/// pages the cache set is fixed by the low bits of s × page, and a line
/// offset that depended on those same bits would fold every page onto a few
/// sets (a cache conflict posing as a TLB miss).
fn slot_offset(s: usize, page: usize) -> usize {
    let h = crate::kernels::chase::SplitMix64(s as u64).next_u64();
    s * page + (h % (page as u64 / 64)) as usize * 64
}

pub(crate) fn check(p: &Params) -> Result<()> {
    if p.pages.is_empty() || p.min_pages < 2 || p.repetitions == 0 {
        return Err(Error::usage("tlb needs at least one page policy, at least 2 pages and one repetition"));
    }
    if p.max_pages < p.min_pages {
        return Err(Error::usage(format!(
            "--max-pages {} is below the first page count ({}): use at least {}",
            p.max_pages, p.min_pages, p.min_pages
        )));
    }
    Ok(())
}

/// The regions: one per policy at its own stride, and the control.
fn regions(p: &Params) -> Result<(Vec<Swept>, Option<String>)> {
    let mut out = Vec::new();
    for &pol in &p.pages {
        let counts = p.counts(pol.page_size());
        let bytes = Bytes(counts.last().copied().unwrap_or(p.min_pages) * pol.page_size().0);
        out.push(Swept {
            pages: pol,
            sweep: Sweep::Own,
            stride: pol.page_size(),
            counts,
            region: Buffer::new(pol, bytes)?,
        });
    }
    let counts = p.counts(Bytes(4096));
    let bytes = Bytes(counts.last().copied().unwrap_or(p.min_pages) * 4096);
    let control = p.control_policy();
    let missing = match Buffer::new(control, bytes) {
        Ok(region) => {
            out.push(Swept { pages: control, sweep: Sweep::Control, stride: Bytes(4096), counts, region });
            None
        }
        Err(e) => Some(format!("no {control} region for the control: {}", e.message)),
    };
    Ok((out, missing))
}

/// Measures again between the counts where a curve stepped, and the
/// control at the 4 KiB sweep's new counts; `points` stay sorted.
fn refine(p: &Params, ctx: &Bench, swept: &mut [Swept], points: &mut Vec<Point>) -> Result<()> {
    let mut extra = curves::refinements(points, &swept.iter().map(|s| (s.pages, s.sweep)).collect::<Vec<_>>());
    // The control follows the 4 KiB sweep's refinements: the walk cost
    // is their difference at each count.
    let control = swept.iter().find(|s| s.sweep == Sweep::Control).map(|s| s.pages);
    let follow: Vec<(PagePolicy, Sweep, u64)> = extra
        .iter()
        .filter(|(pol, sw, _)| *pol == PagePolicy::Small && *sw == Sweep::Own)
        .filter_map(|&(_, _, n)| control.map(|c| (c, Sweep::Control, n)))
        .filter(|x| !extra.contains(x))
        .collect();
    extra.extend(follow);
    for s in swept.iter_mut() {
        s.counts.extend(extra.iter().filter(|(pol, sw, _)| *pol == s.pages && *sw == s.sweep).map(|x| x.2));
    }
    let mut more: Vec<u64> = extra.iter().map(|x| x.2).collect();
    more.sort();
    more.dedup();
    points.extend(measure_counts(p, ctx, swept, &more)?);
    points.sort_by_key(|x| (x.pages, x.sweep, x.page_count));
    Ok(())
}

fn run(p: &Params, ctx: &Bench) -> Result<Outcome> {
    check(p)?;
    let _pin = crate::timing::team::PinGuard::first_cpu();
    let clock_before = core_clock::sample(ctx.clock, ctx.machine.nominal_clocks()).clock;
    let (mut swept, missing) = regions(p)?;
    let mut counts: Vec<u64> = swept.iter().flat_map(|s| s.counts.clone()).collect();
    counts.sort();
    counts.dedup();
    ctx.progress.start("tlb", counts.len() as u64);
    // The sweep, then the refinement of its knees while the share holds
    // another sweep's time.
    let mut points = Vec::new();
    let stages = if p.refine { vec![true, false] } else { vec![true] };
    ctx.sweep_even("tlb's sweep and the refinement of its knees", stages, |sweep| {
        if sweep {
            points = measure_counts(p, ctx, &mut swept, &counts)?;
            Ok(())
        } else {
            refine(p, ctx, &mut swept, &mut points)
        }
    })?;
    for s in swept.iter_mut() {
        s.region.read_back();
    }
    let core_clock: Vec<CoreClock> = [clock_before, core_clock::sample(ctx.clock, ctx.machine.nominal_clocks()).clock]
        .into_iter()
        .flatten()
        .collect();
    let control = curves::control(&swept, &points, ctx.machine, missing);
    if let Control::SameReach { policy, pages } = &control {
        ctx.warn(Caution::HugeSameReach { huge: policy.to_string(), pages: *pages });
    }
    let backings: Vec<crate::memory::Backing> = swept.iter().map(|s| s.region.backing().clone()).collect();
    let reaches = curves::reaches(&points, &backings, &control, ctx.machine);
    let walk_costs = curves::walk_costs(&points, &control);
    let walk_ns = curves::walk_beyond_reach(&reaches, &walk_costs);
    let ghz = core_clock::mean_ghz(&core_clock);
    Ok(Outcome {
        seed: p.seed,
        advice: curves::advice(&reaches, walk_ns.as_ref(), &control),
        walk_cycles: walk_ns.as_ref().zip(ghz).map(|(w, g)| w.estimate * g),
        regions: backings,
        core_clock,
        valid: points.iter().all(|x| x.valid),
        points,
        control,
        reaches,
        walk_costs,
        walk_ns,
    })
}

/// Reaches, walk costs and advice drawn again from the document's points
/// and control by today's rules (`memperf report --reanalyze`).
fn reanalyze(o: &mut Outcome, m: &crate::machine::Fingerprint, ghz: Option<f64>) {
    o.reaches = curves::reaches(&o.points, &o.regions, &o.control, m);
    o.walk_costs = curves::walk_costs(&o.points, &o.control);
    o.walk_ns = curves::walk_beyond_reach(&o.reaches, &o.walk_costs);
    o.walk_cycles = o.walk_ns.as_ref().zip(ghz).map(|(w, g)| w.estimate * g);
    o.advice = curves::advice(&o.reaches, o.walk_ns.as_ref(), &o.control);
}

/// Every swept region that has each count, interleaved per count.
fn measure_counts(p: &Params, ctx: &Bench, swept: &mut [Swept], counts: &[u64]) -> Result<Vec<Point>> {
    let mut points = Vec::new();
    for &count in counts {
        ctx.check_interrupt()?;
        let mut keys = Vec::new();
        let mut list = Vec::new();
        for s in swept.iter_mut().filter(|s| s.counts.contains(&count)) {
            let base = s.region.as_mut_slice::<u8>().as_mut_ptr();
            let stride = s.stride.0 as usize;
            let order = visit_order(count as usize, None, p.seed);
            // SAFETY: count × stride bytes fit the region (sized for its
            // largest count), which outlives the chase.
            let c = unsafe { Chase::new(base, order, |i| slot_offset(i, stride), 1) };
            keys.push((s.pages, s.sweep, s.stride));
            list.push(RefCell::new(c));
        }
        let series = chases::measure(&list, &chases::plan(p.repetitions, p.min_sample_s, p.seed), ctx, chases::Warm::Cycle)?;
        for ((pages, sweep, stride), s) in keys.into_iter().zip(&series) {
            let ns = chases::ns_per_load(s);
            points.push(Point {
                pages,
                sweep,
                stride_bytes: stride,
                page_count: count,
                span_bytes: Bytes(count * stride.0),
                ns_per_access: Summary::steady_of(&ns).expect("measured"),
                sample_ns: ns,
                valid: s.ok,
            });
        }
        ctx.progress.advance(1);
    }
    Ok(points)
}

/// The quick probe: 4 KiB pages from 8 to 8,192 (32 MiB), one line each,
/// against the huge-page control, five samples a count: past every L1
/// DTLB, and to the second level's on most cores. A couple of seconds.
pub fn probe_params() -> Params {
    Params {
        pages: vec![PagePolicy::Small],
        min_pages: 8,
        max_pages: 8192,
        max_bytes: Bytes(32 << 20),
        repetitions: 5,
        min_sample_s: 0.002,
        refine: true,
        seed: 0x7773_7370,
    }
}

/// Measures the knees here, as a command around a program does before it
/// starts (the reach its hot set is set beside): the clock and cache
/// levels first (the probe tells a TLB knee from a cache step with them),
/// then [`probe_params`]. The outcome, and the machine as measured.
pub fn quick_probe(
    machine: &crate::machine::Fingerprint,
    clock: &dyn crate::timing::Clock,
) -> Result<(Outcome, crate::machine::Fingerprint)> {
    let mut m = machine.clone();
    crate::experiments::plan::measure_machine(&mut m, clock, true);
    let ctx = Bench::new(&m, clock, &super::NoProgress);
    let o = run(&probe_params(), &ctx)?;
    Ok((o, m))
}

impl crate::model::Redraw for Outcome {
    fn without_cycles(&mut self) {
        self.walk_cycles = None;
    }
    /// At the clock it measured around itself, where the document's holds.
    fn reanalyse(&mut self, machine: &crate::machine::Fingerprint, ghz: Option<f64>) -> Vec<&'static str> {
        let own = ghz.and(crate::timing::core_clock::mean_ghz(&self.core_clock).or(ghz));
        reanalyze(self, machine, own);
        vec!["reaches", "walk_costs", "walk_ns", "walk_cycles", "advice"]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_double_and_respect_the_memory_cap() {
        let mut p = Params::preset(Preset::Quick);
        p.max_bytes = Bytes(64 << 20);
        assert_eq!(p.counts(Bytes(2 << 20)), vec![8, 16, 32]);
        assert_eq!(*p.counts(Bytes(4096)).last().unwrap(), 1 << 14);
        p.max_bytes = Bytes(2 << 30);
        assert_eq!(p.counts(Bytes(1 << 30)), vec![2], "1 GiB pages stay within the cap");
    }

    #[test]
    fn a_control_is_always_planned() {
        let mut p = Params::preset(Preset::Quick);
        p.pages = vec![PagePolicy::Small];
        assert_eq!(p.control_policy(), PagePolicy::Thp, "4k alone still gets a THP control");
        p.pages = vec![PagePolicy::Small, PagePolicy::Huge2M];
        assert_eq!(p.control_policy(), PagePolicy::Huge2M);
    }

    #[test]
    fn max_pages_below_the_first_count_is_refused() {
        let mut p = Params::preset(Preset::Quick);
        p.max_pages = 1;
        assert_eq!(check(&p).unwrap_err().kind.exit_code(), 2);
    }

    #[test]
    fn slots_stay_inside_their_page_and_spread_over_lines() {
        for page in [4096usize, 2 << 20] {
            let offs: Vec<usize> = (0..100).map(|s| slot_offset(s, page)).collect();
            for (s, o) in offs.iter().enumerate() {
                assert_eq!(o / page, s);
                assert_eq!(o % 64, 0);
            }
            let mut lines: Vec<usize> = offs.iter().map(|o| o % page / 64).collect();
            lines.sort();
            lines.dedup();
            assert!(lines.len() >= 40);
        }
        // On contiguous memory the L2 set (bits 6..17 for 2048 sets) of a
        // 4 KiB-stride sweep must use most sets, not a handful.
        let mut sets: Vec<usize> = (0..4096).map(|s| slot_offset(s, 4096) / 64 % 2048).collect();
        sets.sort();
        sets.dedup();
        assert!(sets.len() > 1500, "{} sets", sets.len());
    }
}
