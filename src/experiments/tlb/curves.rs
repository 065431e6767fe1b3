//! From the measured sweeps to claims: where to refine, whether the
//! control holds, the reaches beside CPUID, the walk cost, and advice.

use crate::analysis::attribution::{attribute, Attribution, KnownLevel};
use crate::analysis::knees;
use crate::machine::Fingerprint;
use crate::memory::{Backing, PagePolicy};
use crate::model::outcome::tlb::{Control, Point, Reach, Sweep, WalkCost};
use crate::timing::{stats, Ratio};
use crate::units::Bytes;

/// One swept region: its policy, which sweep, the stride and its counts.
pub(super) struct Swept {
    pub pages: PagePolicy,
    pub sweep: Sweep,
    pub stride: Bytes,
    pub counts: Vec<u64>,
    pub region: crate::memory::Buffer,
}

/// Smallest jump between levels that counts as a knee.
const KNEE_RATIO: f64 = 1.2;

/// (page count, median ns) of one sweep, by count.
fn curve(points: &[Point], pages: PagePolicy, sweep: Sweep) -> Vec<(f64, f64)> {
    let mut c: Vec<(f64, f64)> = points
        .iter()
        .filter(|p| p.pages == pages && p.sweep == sweep)
        .map(|p| (p.page_count as f64, p.ns_per_access.median))
        .collect();
    c.sort_by(|a, b| a.0.total_cmp(&b.0));
    c
}

/// (last count before, first count after) of each knee of a curve.
fn knee_brackets(c: &[(f64, f64)], max_levels: usize) -> Vec<(f64, f64)> {
    let lv = knees::levels(c, max_levels, KNEE_RATIO);
    lv.windows(2).map(|w| (w[0].to_x, w[1].from_x)).collect()
}

/// Counts to measure between the two around each knee (×1.25, ×1.5,
/// ×1.75 of the lower one), per sweep.
pub fn refinements(points: &[Point], sweeps: &[(PagePolicy, Sweep)]) -> Vec<(PagePolicy, Sweep, u64)> {
    let mut out = Vec::new();
    for &(pages, sweep) in sweeps {
        let c = curve(points, pages, sweep);
        let have: Vec<u64> = c.iter().map(|x| x.0 as u64).collect();
        for (lo, hi) in knee_brackets(&c, 4) {
            for f in [1.25, 1.5, 1.75] {
                let n = (lo * f).round() as u64;
                if (n as f64) < hi && !have.contains(&n) && !out.contains(&(pages, sweep, n)) {
                    out.push((pages, sweep, n));
                }
            }
        }
    }
    out
}

fn l1d_bytes(m: &Fingerprint) -> f64 {
    m.caches.iter().find(|c| c.level == 1 && c.kind != "Instruction").map_or(32768.0, |c| c.size_bytes.0 as f64)
}

/// Whether the control can be trusted: huge enough, and not stepping where
/// only translation can make it step (its lines fitting in L1).
pub fn control(swept: &[Swept], points: &[Point], m: &Fingerprint, missing: Option<String>) -> Control {
    if let Some(reason) = missing {
        return Control::Unavailable { reason };
    }
    let Some(c) = swept.iter().find(|s| s.sweep == Sweep::Control) else {
        return Control::Unavailable { reason: "no control region".into() };
    };
    let policy = c.pages;
    let huge_fraction = c.region.backing().huge_fraction;
    let Some(f) = huge_fraction.filter(|f| *f >= 0.9) else {
        return Control::NotHuge { policy, huge_fraction };
    };
    match steps_where_only_translation_can(points, policy, l1d_bytes(m)) {
        Some(pages) => Control::SameReach { policy, pages },
        None => Control::Valid { policy, huge_fraction: f },
    }
}

/// The page count after which the control's curve rises for good
/// although its lines fit in L1 (so only translation can raise it), near
/// where the 4 KiB curve steps; `None` where it does not.
///
/// The 4 KiB curve steps at its levels' knees or where it rises for good.
/// Its few knees go to its largest jumps, so a curve that climbs in many
/// steps can leave its first (the L1 DTLB's) out; the lasting rise is that step whatever else the curve does. The
/// control must rise for good: one slow sample in L1 is not a reach. A
/// 4 KiB curve with no step at all (too few points) leaves any lasting
/// rise of the control near enough: 4 KiB pages never translate less.
fn steps_where_only_translation_can(points: &[Point], policy: PagePolicy, l1: f64) -> Option<u64> {
    let in_l1 = |pages: f64| pages * 64.0 <= l1;
    let small_curve = curve(points, PagePolicy::Small, Sweep::Own);
    let mut small: Vec<f64> = knee_brackets(&small_curve, 4).iter().map(|k| k.0).collect();
    small.extend(lasting_rise(&small_curve, in_l1));
    let at = lasting_rise(&curve(points, policy, Sweep::Control), in_l1)?;
    let near_small = small.is_empty() || small.iter().any(|s| at / s <= 2.0 && s / at <= 2.0);
    near_small.then_some(at as u64)
}

/// The last count before the points of `c` (sorted by count) that fit
/// (`fits`) rise for good: the first split where each point after it, two
/// at least, lies at least ×`KNEE_RATIO` above the fastest point before
/// it (so neither one slow sample nor a slow first one decides).
fn lasting_rise(c: &[(f64, f64)], fits: impl Fn(f64) -> bool) -> Option<f64> {
    let inside: Vec<(f64, f64)> = c.iter().copied().filter(|p| fits(p.0)).collect();
    let fastest = |ps: &[(f64, f64)]| ps.iter().map(|p| p.1).fold(f64::INFINITY, f64::min);
    (1..inside.len().saturating_sub(1))
        .find(|&i| fastest(&inside[i..]) >= fastest(&inside[..i]) * KNEE_RATIO)
        .map(|i| inside[i - 1].0)
}

/// The curve whose knees are `pages`' TLB reaches: for 4 KiB pages with a
/// valid control, the translation-only curve (small minus control, plus
/// the first small figure so it stays positive); otherwise the own curve.
fn reach_curve(points: &[Point], pages: PagePolicy, control: &Control) -> Vec<(f64, f64)> {
    let own = curve(points, pages, Sweep::Own);
    let Control::Valid { policy, .. } = control else { return own };
    if pages != PagePolicy::Small {
        return own;
    }
    let ctl = curve(points, *policy, Sweep::Control);
    let base = own.first().map_or(0.0, |p| p.1);
    own.iter()
        .filter_map(|&(n, y)| {
            let c = ctl.iter().find(|c| c.0 == n)?;
            Some((n, (y - c.1 + base).max(base * 0.5)))
        })
        .collect()
}

/// `points` with each summary drawn from the even (`parity` 0) or the odd
/// (1) samples alone; `None` when a point has fewer than two of them.
fn half_points(points: &[Point], parity: usize) -> Option<Vec<Point>> {
    points
        .iter()
        .map(|p| {
            let v = crate::analysis::second_look::half(&p.sample_ns, parity);
            let mut q = p.clone();
            q.ns_per_access = crate::timing::Summary::of(&v).filter(|_| v.len() >= 2)?;
            Some(q)
        })
        .collect()
}

/// The knees of each policy's reach curve, set beside CPUID.
pub fn reaches(points: &[Point], backings: &[Backing], control: &Control, m: &Fingerprint) -> Vec<Reach> {
    let mut pols: Vec<PagePolicy> = points.iter().filter(|p| p.sweep == Sweep::Own).map(|p| p.pages).collect();
    pols.sort();
    pols.dedup();
    let l1 = l1d_bytes(m);
    let mut out = Vec::new();
    for pages in pols {
        let page_size = backings.iter().find(|b| b.requested == pages).and_then(|b| b.page_size_bytes);
        let nominal = page_size.unwrap_or(pages.page_size());
        let (c1, c2) = (m.dtlb_entries(1, nominal), m.dtlb_entries(2, nominal));
        let known: Vec<KnownLevel> = [("L1", c1), ("L2", c2)]
            .iter()
            .filter_map(|(n, e)| e.map(|e| KnownLevel { name: n.to_string(), size: e as f64 }))
            .collect();
        let separated = pages == PagePolicy::Small && matches!(control, Control::Valid { .. });
        let lv = knees::levels(&reach_curve(points, pages, control), 4, KNEE_RATIO);
        let halves = half_points(points, 0)
            .zip(half_points(points, 1))
            .map(|(e, o)| (reach_curve(&e, pages, control), reach_curve(&o, pages, control)));
        let looks = knees::second_looks(&lv, halves.as_ref(), 4, KNEE_RATIO, |x| format!("{x} pages"));
        for (w, look) in lv.windows(2).zip(looks) {
            let entries = w[0].to_x as u64;
            let confounded = !separated && entries as f64 * 64.0 > l1;
            let attribution =
                if confounded { Attribution::Unattributed } else { attribute(&[w[0].to_x], &known).remove(0) };
            let trusted_size = pages == PagePolicy::Small || matches!(control, Control::Valid { .. });
            out.push(Reach {
                pages,
                page_size_bytes: page_size,
                measured_entries: entries,
                measured_reach_bytes: page_size.filter(|_| trusted_size).map(|s| Bytes(entries * s.0)),
                attribution,
                cpuid_l1_entries: c1,
                cpuid_l2_entries: c2,
                ns_within: w[0].value,
                ns_beyond: w[1].value,
                confounded_with_cache: confounded,
                second_look: Some(look),
            });
        }
    }
    out
}

/// Small minus control at every count both have, paired per repetition;
/// empty unless the control is valid.
pub fn walk_costs(points: &[Point], control: &Control) -> Vec<WalkCost> {
    let Control::Valid { policy, .. } = control else { return Vec::new() };
    points
        .iter()
        .filter(|p| p.pages == PagePolicy::Small && p.sweep == Sweep::Own)
        .filter_map(|s| {
            let c = points.iter().find(|c| c.sweep == Sweep::Control && c.page_count == s.page_count)?;
            let d: Vec<f64> = s.sample_ns.iter().zip(&c.sample_ns).map(|(a, b)| a - b).collect();
            Some(WalkCost {
                page_count: s.page_count,
                control: *policy,
                ns_median: stats::median(&d).unwrap_or(f64::NAN),
                differences_ns: d,
            })
        })
        .collect()
}

/// The walk cost past the last 4 KiB reach (counts beyond twice it): the
/// engine's estimate of every paired difference there, with its
/// interval. The differences keep their sign: a repetition where the
/// control came out slower is evidence of a small walk cost, not a value
/// to leave out; a cost whose interval reaches zero is advised on by no
/// one.
pub fn walk_beyond_reach(reaches: &[Reach], costs: &[WalkCost]) -> Option<Ratio> {
    let reach = reaches
        .iter()
        .filter(|r| r.pages == PagePolicy::Small && !r.confounded_with_cache)
        .map(|r| r.measured_entries)
        .max()?;
    let beyond: Vec<f64> =
        costs.iter().filter(|c| c.page_count > 2 * reach).flat_map(|c| c.differences_ns.clone()).collect();
    Ratio::differences(&beyond)
}

/// Sentences drawn only from attributed reaches and a valid control.
pub fn advice(reaches: &[Reach], walk: Option<&Ratio>, control: &Control) -> Vec<String> {
    let mut out = Vec::new();
    if let Control::SameReach { policy, pages } = control {
        out.push(format!(
            "{policy} pages use small TLB entries on this machine (they step at ~{pages} pages, as 4 KiB pages do): huge pages do not enlarge the TLB reach here, so expect at most shorter page walks from them"
        ));
        return out;
    }
    let last = |pages: PagePolicy| {
        reaches
            .iter()
            .filter(|r| r.pages == pages && matches!(r.attribution, Attribution::Level { .. }))
            .filter(|r| !r.second_look.as_ref().is_some_and(|s| s.is_unstable()))
            .max_by_key(|r| r.measured_entries)
    };
    if let (Some(small), Some(w)) = (last(PagePolicy::Small), walk.filter(|w| w.low > 0.0)) {
        let Some(bytes) = small.measured_reach_bytes else { return out };
        let mut s = format!(
            "random access over more than {bytes} on 4 KiB pages pays ~{:.0} ns per access in page walks ({:.0}..{:.0} ns)",
            w.estimate, w.low, w.high
        );
        if let Some(h) = reaches
            .iter()
            .filter(|r| r.pages != PagePolicy::Small && matches!(r.attribution, Attribution::Level { .. }))
            .filter(|r| !r.second_look.as_ref().is_some_and(|s| s.is_unstable()))
            .filter_map(|r| r.measured_reach_bytes.map(|b| (r, b)))
            .max_by_key(|(_, b)| *b)
        {
            s.push_str(&format!("; {} pages move that limit to {}", h.0.pages, h.1));
        }
        out.push(s);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn points(pages: PagePolicy, sweep: Sweep, curve: &str) -> Vec<Point> {
        curve
            .split_whitespace()
            .map(|p| {
                let (n, ns) = p.split_once(':').unwrap();
                let (n, ns): (u64, f64) = (n.parse().unwrap(), ns.parse().unwrap());
                Point {
                    pages,
                    sweep,
                    stride_bytes: Bytes(4096),
                    page_count: n,
                    span_bytes: Bytes(n * 4096),
                    sample_ns: vec![ns; 5],
                    ns_per_access: crate::timing::Summary::of(&[ns; 5]).unwrap(),
                    valid: true,
                }
            })
            .collect()
    }

    /// A Zen 3 suite: THP steps with 4 KiB pages
    /// from 40 pages on, where 40 lines fill 2.5 KiB of a 32 KiB L1. The
    /// 4 KiB curve climbs in so many steps that its four levels' knees all
    /// lie past twice that (the run called the control valid).
    const SMALL: &str = "8:1.39 16:1.37 32:1.37 40:1.30 48:1.89 56:2.45 64:3.14 128:3.78 256:4.25 512:6.31 \
        1024:7.15 1280:9.05 1536:13.29 1792:15.29 2048:19.03 4096:39.28 8192:41.05 10240:73.17 \
        12288:149.11 14336:200.34 16384:212.72 32768:234.72 65536:278.07";
    const CONTROL: &str = "8:1.38 16:1.38 32:1.41 40:1.32 48:2.11 56:2.88 64:3.05 128:3.76 256:4.28 512:6.16 \
        1024:7.05 1280:8.85 1536:9.82 1792:10.08 2048:16.29 4096:32.84 8192:34.19 10240:43.68 \
        12288:52.11 14336:65.73 16384:184.23 32768:186.23 65536:204.20";

    #[test]
    fn a_4k_curve_that_climbs_in_many_steps_still_steps_where_the_control_does() {
        let mut p = points(PagePolicy::Small, Sweep::Own, SMALL);
        p.extend(points(PagePolicy::Thp, Sweep::Control, CONTROL));
        let knees = knee_brackets(&curve(&p, PagePolicy::Small, Sweep::Own), 4);
        assert!(knees.iter().all(|k| k.0 > 80.0), "the case needs 4 KiB knees past 80 pages: {knees:?}");
        assert_eq!(steps_where_only_translation_can(&p, PagePolicy::Thp, 32768.0), Some(40));
    }

    #[test]
    fn one_slow_point_or_a_step_past_l1_is_no_step_of_translation() {
        let mut p = points(PagePolicy::Small, Sweep::Own, SMALL);
        let flat = "8:1.38 16:1.38 32:1.41 40:1.32 48:2.11 56:1.40 64:1.39 128:1.41 256:1.40 512:1.42 \
            1024:3.05 2048:7.2 4096:16.3";
        p.extend(points(PagePolicy::Thp, Sweep::Control, flat));
        assert_eq!(steps_where_only_translation_can(&p, PagePolicy::Thp, 32768.0), None);
    }

    /// Every recording's control, drawn again from its own points and its
    /// own L1d claim, is the one it recorded: the 2-vCPU guests' hosts back
    /// them with 4 KiB pages, so THP steps where 4 KiB pages do, at the
    /// recorded count; the 16-CPU Intel guest's THP does not step inside
    /// L1, so its valid control finds no such step again.
    #[test]
    fn every_recording_s_control_is_drawn_again_as_recorded() {
        let (mut same_reach, mut valid) = (0, 0);
        for dir in crate::test_support::recording_dirs() {
            let path = dir.join("run-quick.json");
            let doc = crate::model::journal::load(&path).unwrap();
            let o = doc.outcome::<crate::model::outcome::tlb::Outcome>().unwrap();
            let l1 = l1d_bytes(&doc.machine);
            match o.control {
                Control::SameReach { policy, pages } => {
                    assert_eq!(steps_where_only_translation_can(&o.points, policy, l1), Some(pages), "{}", path.display());
                    same_reach += 1;
                }
                Control::Valid { policy, .. } => {
                    assert_eq!(steps_where_only_translation_can(&o.points, policy, l1), None, "{}", path.display());
                    valid += 1;
                }
                ref other => panic!("{}: {other:?}", path.display()),
            }
        }
        assert!(same_reach >= 4 && valid >= 1, "{same_reach} same-reach and {valid} valid recordings");
    }

    #[test]
    fn the_walk_cost_keeps_differences_of_either_sign() {
        let reach = Reach {
            pages: PagePolicy::Small,
            page_size_bytes: Some(Bytes(4096)),
            measured_entries: 64,
            measured_reach_bytes: Some(Bytes(64 * 4096)),
            attribution: Attribution::Unattributed,
            cpuid_l1_entries: None,
            cpuid_l2_entries: None,
            ns_within: 2.0,
            ns_beyond: 9.0,
            confounded_with_cache: false,
            second_look: None,
        };
        let cost = |page_count: u64, differences_ns: Vec<f64>| WalkCost {
            page_count,
            control: PagePolicy::Thp,
            ns_median: stats::median(&differences_ns).unwrap(),
            differences_ns,
        };
        // Within twice the reach: left out. Beyond it, the differences
        // lie evenly about zero, so the walk is 0 ns; dropping those at
        // or below zero would have claimed 2 ns.
        let costs = [
            cost(128, vec![50.0; 10]),
            cost(256, vec![-3.0, -2.0, -1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 2.0, 3.0]),
        ];
        let w = walk_beyond_reach(std::slice::from_ref(&reach), &costs).unwrap();
        assert_eq!(w.n, 10);
        assert_eq!(w.estimate, 0.0);
        assert!(w.low < 0.0 && w.high > 0.0, "{w:?}");
        // Advice names a walk cost only where its interval lies above zero.
        let level = Reach { attribution: Attribution::Level { name: "L1".into(), size: 64.0 }, ..reach };
        let control = Control::Valid { policy: PagePolicy::Thp, huge_fraction: 1.0 };
        let said = |w: &Ratio| advice(std::slice::from_ref(&level), Some(w), &control).join("\n");
        assert!(!said(&w).contains("page walks"), "{}", said(&w));
        let clear = walk_beyond_reach(std::slice::from_ref(&level), &[cost(256, vec![20.0, 21.0, 22.0, 19.0, 20.5, 21.5, 20.0, 19.5, 22.5, 21.0])]).unwrap();
        assert!(said(&clear).contains("pays ~21 ns per access in page walks"), "{}", said(&clear));
    }

    #[test]
    fn a_rise_needs_two_lasting_points() {
        let fits = |n: f64| n <= 512.0;
        let c = |s: &[(f64, f64)]| lasting_rise(s, fits);
        assert_eq!(c(&[(8.0, 1.0), (16.0, 1.0), (32.0, 2.0), (64.0, 2.0), (1024.0, 9.0)]), Some(16.0));
        assert_eq!(c(&[(8.0, 1.0), (16.0, 1.0), (32.0, 1.0), (512.0, 2.0), (1024.0, 9.0)]), None);
        assert_eq!(c(&[(8.0, 1.0), (16.0, 1.3), (32.0, 1.0), (64.0, 2.0)]), None);
        assert_eq!(c(&[(8.0, 3.0), (16.0, 1.4), (32.0, 1.4), (64.0, 3.0), (128.0, 3.1)]), Some(32.0), "a slow first sample");
        assert_eq!(c(&[]), None);
    }
}
