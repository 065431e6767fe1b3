//! `memperf tlb`: TLB reach per page size and the cost of a page walk.
//!
//! Method: one cache line per page, over P pages visited in one random
//! cycle, P doubling from 8 to well past the last TLB level, for each page
//! policy (4 KiB, 2 MiB through THP or hugetlb, 1 GiB when reserved). The
//! line inside each page varies, so the lines spread over cache sets. The
//! knees of ns-per-access against P are the TLB reaches, set beside the
//! entry counts CPUID reports.
//!
//! Past a few thousand pages the lines themselves outgrow the caches, and
//! that knee is not a TLB's. So each huge-page region is also swept with
//! the 4 KiB layout (one line every 4 KiB): the same lines, the same cache
//! sets, the same prefetcher behaviour, only the translation differs. The
//! difference between the two at each P, measured alternately round by
//! round, is the page-walk cost alone, and the 4 KiB reaches are the knees
//! of that translation-only curve.

use super::latency::{alternate, calibrate, Alternated};
use super::{Context, Experiment};
use crate::analysis::knees;
use crate::error::{Error, Result};
use crate::kernels::chase::{chase_kernel, visit_order, Chase};
use crate::memory::{PagePolicy, Region};
pub use crate::model::outcome::tlb::*;
use crate::timing::{stats, Summary};
use crate::units::{Bytes, GIB};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Params {
    pub pages: Vec<PagePolicy>,
    pub min_pages: u64,
    /// Most pages per policy (doubling from `min_pages`).
    pub max_pages: u64,
    /// Most memory per policy; caps the page count of large pages.
    pub max_bytes: Bytes,
    pub min_time_s: f64,
    pub rounds: usize,
    pub chunk_s: f64,
    pub seed: u64,
}

impl Params {
    pub fn preset(preset: super::bandwidth::Preset) -> Params {
        use super::bandwidth::Preset;
        let (max_bytes, time) = match preset {
            Preset::Quick => (Bytes(GIB), 0.02),
            Preset::Default => (Bytes(2 * GIB), 0.04),
            Preset::Full => (Bytes(8 * GIB), 0.1),
        };
        Params {
            pages: vec![PagePolicy::Small, PagePolicy::Thp],
            min_pages: 8,
            max_pages: 1 << 16,
            max_bytes,
            min_time_s: time,
            rounds: 4,
            chunk_s: 50e-6,
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
}

pub struct Tlb;

impl Experiment for Tlb {
    const NAME: &'static str = "tlb";
    type Params = Params;
    type Outcome = Outcome;
    fn run(p: &Params, ctx: &Context) -> Result<Outcome> {
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

/// Sweeps of one policy: (stride, page counts).
type Sweeps = Vec<(Bytes, Vec<u64>)>;

/// The sweeps of a policy: its own page size, plus the 4 KiB control.
fn sweeps(p: &Params, pol: PagePolicy) -> Sweeps {
    let mut v = vec![(pol.page_size(), p.counts(pol.page_size()))];
    if pol.page_size().0 > 4096 && p.pages.contains(&PagePolicy::Small) {
        v.push((Bytes(4096), p.counts(Bytes(4096))));
    }
    v
}

fn run(p: &Params, ctx: &Context) -> Result<Outcome> {
    if p.pages.is_empty() || p.min_pages < 2 {
        return Err(Error::usage("tlb needs at least one page policy and at least 2 pages"));
    }
    let _pin = crate::timing::team::PinGuard::first_cpu();
    let mut regions: Vec<(PagePolicy, Region, Sweeps)> = p
        .pages
        .iter()
        .map(|&pol| {
            let sw = sweeps(p, pol);
            let bytes = sw.iter().map(|(s, c)| s.0 * c.last().copied().unwrap_or(p.min_pages)).max().unwrap_or(0);
            Region::new(pol, Bytes(bytes)).map(|r| (pol, r, sw))
        })
        .collect::<Result<_>>()?;
    let mut all: Vec<u64> = regions.iter().flat_map(|r| r.2.iter().flat_map(|s| s.1.clone())).collect();
    all.sort();
    all.dedup();
    ctx.progress.start("tlb", all.len() as u64);
    let k1 = chase_kernel(1).expect("one chain");
    let mut points = Vec::new();
    let mut walk_costs = Vec::new();
    for &count in &all {
        ctx.check_interrupt()?;
        // One chase per (policy, stride) that has this count; a region
        // holding two sweeps gets them in disjoint halves of its lines.
        let mut chases: Vec<(PagePolicy, Bytes, Chase)> = Vec::new();
        for (pol, r, sw) in regions.iter_mut() {
            let base = r.as_mut_slice::<u8>().as_mut_ptr();
            for (k, (stride, counts)) in sw.iter().enumerate() {
                if !counts.contains(&count) {
                    continue;
                }
                let stride_b = stride.0 as usize;
                let order = visit_order(count as usize, None, p.seed);
                // The control sweep reuses the region but shifts its lines by
                // half a 4 KiB page so they never share a line with the main one.
                let shift = if k == 0 { 0 } else { 2048 };
                // SAFETY: count × stride bytes fit the region (sized for the
                // largest sweep), which outlives the chase.
                let c = unsafe { Chase::new(base, order, |s| slot_offset(s, stride_b) ^ shift, 1) };
                chases.push((*pol, *stride, c));
            }
        }
        let loads = calibrate(&mut chases[0].2, k1, ctx.clock, p.chunk_s);
        let chunks = ((p.min_time_s / p.rounds as f64) / p.chunk_s).ceil().max(2.0) as usize;
        let mut refs: Vec<&mut Chase> = chases.iter_mut().map(|c| &mut c.2).collect();
        let Alternated { mut samples, round_medians: medians, ok } =
            alternate(&mut refs, ctx.clock, loads, p.rounds, chunks);
        for (i, (pol, stride, _)) in chases.iter().enumerate() {
            points.push(Point {
                pages: *pol,
                stride_bytes: *stride,
                page_count: count,
                span_bytes: Bytes(count * stride.0),
                ns_per_access: Summary::of(&samples[i]).expect("measured"),
                p90_ns: stats::quantile(&samples[i], 0.9).unwrap_or(f64::NAN),
                chunk_ns: std::mem::take(&mut samples[i]),
                valid: ok[i],
            });
        }
        if let Some(small) = chases.iter().position(|c| c.0 == PagePolicy::Small) {
            let controls = chases.iter().enumerate().filter(|(_, c)| c.0 != PagePolicy::Small && c.1 .0 == 4096);
            for (i, (pol, _, _)) in controls {
                let d: Vec<f64> = medians[small].iter().zip(&medians[i]).map(|(a, b)| a - b).collect();
                let s = Summary::of(&d).expect("rounds");
                walk_costs.push(WalkCost {
                    page_count: count,
                    small: PagePolicy::Small,
                    huge: *pol,
                    ns_median: s.median,
                    ns_min: s.min,
                    ns_max: s.max,
                });
            }
        }
        ctx.progress.advance(1);
    }
    let reaches = reaches(&points, ctx.machine);
    let walk_ns = walk_beyond_reach(&reaches, &walk_costs);
    let ghz = ctx.machine.ghz();
    let measured: Vec<(PagePolicy, u64)> =
        regions.iter().map(|r| (r.0, r.2[0].1.last().copied().unwrap_or(0))).collect();
    let advice = advice(&reaches, walk_ns, &measured);
    Ok(Outcome {
        seed: p.seed,
        regions: regions.iter().map(|r| r.1.backing().clone()).collect(),
        nominal_ghz: ghz,
        valid: points.iter().all(|x| x.valid),
        points,
        reaches,
        walk_costs,
        walk_ns,
        walk_cycles: walk_ns.zip(ghz).map(|(n, g)| n * g),
        advice,
    })
}

/// The curve whose knees are `pol`'s TLB reaches: for huge pages the sweep
/// at their own stride; for 4 KiB pages, where a control exists, the
/// translation-only curve (4 KiB minus the control, plus the first 4 KiB
/// figure so it stays positive).
pub fn reach_curve(points: &[Point], pol: PagePolicy) -> Vec<(f64, f64)> {
    let own: Vec<&Point> = points.iter().filter(|p| p.pages == pol && p.stride_bytes == pol.page_size()).collect();
    let control =
        |n: u64| points.iter().find(|p| p.pages != PagePolicy::Small && p.stride_bytes.0 == 4096 && p.page_count == n);
    let base = own.first().map(|p| p.ns_per_access.median).unwrap_or(0.0);
    own.iter()
        .map(|p| {
            let y = match (pol, control(p.page_count)) {
                (PagePolicy::Small, Some(c)) => {
                    (p.ns_per_access.median - c.ns_per_access.median + base).max(base * 0.5)
                }
                _ => p.ns_per_access.median,
            };
            (p.page_count as f64, y)
        })
        .collect()
}

/// The knees of each policy's reach curve, as TLB reaches.
pub fn reaches(points: &[Point], m: &crate::machine::Fingerprint) -> Vec<Reach> {
    let mut pols: Vec<PagePolicy> = points.iter().map(|p| p.pages).collect();
    pols.sort();
    pols.dedup();
    let mut out = Vec::new();
    for pol in pols {
        let curve = reach_curve(points, pol);
        let lv = knees::levels(&curve, 3, 1.2);
        // The first TLB to overflow is always the first level.
        for (i, pair) in lv.windows(2).enumerate() {
            let level = i as u8 + 1;
            out.push(Reach {
                pages: pol,
                page_size_bytes: pol.page_size(),
                level: format!("L{level}"),
                measured_entries: pair[0].to_x as u64,
                measured_reach_bytes: Bytes(pair[0].to_x as u64 * pol.page_size().0),
                cpuid_entries: m.dtlb_entries(level, pol.page_size()),
                ns_within: pair[0].value,
                ns_beyond: pair[1].value,
            });
        }
    }
    out
}

/// Median small-minus-huge cost over the page counts past the small-page reach.
fn walk_beyond_reach(reaches: &[Reach], costs: &[WalkCost]) -> Option<f64> {
    let reach = reaches.iter().filter(|r| r.pages == PagePolicy::Small).map(|r| r.measured_entries).max()?;
    let beyond: Vec<f64> = costs.iter().filter(|c| c.page_count > reach).map(|c| c.ns_median).collect();
    stats::median(&beyond)
}

/// "Random access over more than X on 4 KiB pages pays ~Y ns per access in
/// page walks; 2 MiB pages move that limit to Z": X and Z are the
/// last-level (L2) reaches, where walks begin.
fn advice(reaches: &[Reach], walk_ns: Option<f64>, measured: &[(PagePolicy, u64)]) -> Vec<String> {
    let mut out = Vec::new();
    let last = |pol: PagePolicy| reaches.iter().find(|r| r.pages == pol && r.level == "L2");
    if let Some(small) = last(PagePolicy::Small) {
        let cost = walk_ns.unwrap_or(small.ns_beyond - small.ns_within);
        let mut s = format!(
            "random access over more than {} on 4 KiB pages pays ~{:.0} ns per access in page walks",
            small.measured_reach_bytes, cost
        );
        let huge = measured.iter().find(|(p, _)| p.page_size().0 == 2 << 20);
        match (huge, huge.and_then(|h| last(h.0))) {
            (Some(_), Some(h)) => s.push_str(&format!("; 2 MiB pages move that limit to {}", h.measured_reach_bytes)),
            (Some((pol, max)), None) => s.push_str(&format!(
                "; 2 MiB pages move it beyond {} (no knee up to there)",
                Bytes(max * pol.page_size().0)
            )),
            _ => {}
        }
        out.push(s);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_double_and_respect_the_memory_cap() {
        let mut p = Params::preset(super::super::bandwidth::Preset::Quick);
        p.max_bytes = Bytes(64 << 20);
        assert_eq!(p.counts(Bytes(2 << 20)), vec![8, 16, 32]);
        assert_eq!(*p.counts(Bytes(4096)).last().unwrap(), 1 << 14);
        assert_eq!(sweeps(&p, PagePolicy::Thp).len(), 2, "huge pages get the 4 KiB control sweep");
        assert_eq!(sweeps(&p, PagePolicy::Small).len(), 1);
        p.max_bytes = Bytes(2 << 30);
        assert_eq!(p.counts(Bytes(1 << 30)), vec![2], "1 GiB pages stay within the cap");
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
        {}
    }
}
