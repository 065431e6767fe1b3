//! What the GPU's chases say (`gpu::ladder`, `gpu::loaded`): the ladder
//! split into levels at its knees by the analysis the CPU's latency uses
//! ([`super::knees`]), each knee looked at again on the even and the odd
//! samples; the TLB chase's steps, the same way; the L2's near and far
//! partitions where single loads fall into two groups ([`super::modes`]);
//! the SM clock the clock's and the events' timings imply together; and
//! where latency under load leaves idle ([`super::bend`]), with Little's
//! law at the curve's top.

use super::knees::{self, Curve};
use super::second_look::SecondLook;
use crate::gpu::{ladder, loaded};
use crate::timing::stats::median;
use crate::units::Bytes;
use memperf_model::outcome::gpu::{ChasePoint, Latency, LatencyLevel, LoadedCurve, TlbStep};

/// Jumps between neighbouring chains smaller than this are no knee (the
/// CPU's latency uses the same).
pub const LADDER_KNEE: f64 = 1.3;
/// A page walk added to an L2 hit: smaller steps count.
pub const TLB_KNEE: f64 = 1.15;
/// Levels at most: L1, L2 (near and far where they show), memory, and a
/// TLB level past it.
const MAX_LEVELS: usize = 5;

/// One device's latency from what its chases measured.
pub fn analyse(device: usize, m: ladder::Measured, page_bytes: u64, l2_bytes: u64) -> Latency {
    let clock_ghz = clock_ghz(&m.ladder);
    let (near_cycles, far_cycles) = partitions(&m.single_loads);
    Latency {
        device,
        levels: levels(&m.ladder, l2_bytes, clock_ghz),
        tlb_steps: tlb_steps(&m.tlb, page_bytes),
        ladder: m.ladder,
        page_bytes,
        tlb: m.tlb,
        l2_spread: Some(memperf_model::outcome::gpu::L2Spread { near_cycles, far_cycles, ..m.l2_spread }),
        clock_ghz,
    }
}

/// One device's curve under load: its bend, and Little's law at its
/// highest bandwidth (lines of [`ladder::LINE`] bytes per reading SM),
/// both from the points whose every chase ended on its cycle.
pub fn curve(device: usize, m: loaded::Measured) -> LoadedCurve {
    let good: Vec<_> = m.points.iter().filter(|p| p.valid).cloned().collect();
    let top = good.iter().max_by(|a, b| a.total_bytes_per_s.total_cmp(&b.total_bytes_per_s));
    let lines_per_sm = top.filter(|p| p.delay_ns.is_some()).map(|p| {
        super::littles_law::lines_in_flight(p.total_bytes_per_s, p.latency_ns.median, ladder::LINE)
            / m.blocks.max(1) as f64
    });
    LoadedCurve {
        device,
        chain_bytes: m.chain_bytes,
        array_bytes: m.array_bytes,
        blocks: m.blocks,
        threads: m.threads,
        bend: super::bend::bend(&good),
        points: m.points,
        lines_per_sm,
    }
}

/// The SM clock the two timings imply: cycles over nanoseconds per load,
/// the median over the points both timed.
pub fn clock_ghz(points: &[ChasePoint]) -> Option<f64> {
    let ratios: Vec<f64> =
        points.iter().filter(|p| p.valid).filter_map(|p| p.ns.map(|ns| p.cycles.median / ns)).collect();
    median(&ratios)
}

/// The curve of `points` by `x` (each point's x), and its two half
/// curves where every point has four samples or more; a point whose
/// chase ended off its cycle is left out.
fn curves(points: &[ChasePoint], x: impl Fn(&ChasePoint) -> f64) -> (Curve, Option<(Curve, Curve)>) {
    let points: Vec<&ChasePoint> = points.iter().filter(|p| p.valid).collect();
    let whole = points.iter().map(|p| (x(p), p.cycles.median)).collect();
    let samples: Vec<(f64, &[f64])> = points.iter().map(|p| (x(p), p.samples_cycles.as_slice())).collect();
    (whole, knees::half_curves(&samples))
}

/// The ladder's levels, named by where they lie against the L2's size:
/// a first level ending well inside it is the L1, the level reaching it
/// the L2, a last level starting past half of it memory; any other
/// `level N`.
pub fn levels(ladder: &[ChasePoint], l2_bytes: u64, ghz: Option<f64>) -> Vec<LatencyLevel> {
    let (whole, halves) = curves(ladder, |p| p.bytes as f64);
    let lv = knees::levels(&whole, MAX_LEVELS, LADDER_KNEE);
    let looks = knees::second_looks(&lv, halves.as_ref(), MAX_LEVELS, LADDER_KNEE, |x| Bytes(x as u64).to_string());
    let l2 = l2_bytes as f64;
    let last = lv.len().saturating_sub(1);
    let mut used: Vec<&str> = Vec::new();
    lv.iter()
        .enumerate()
        .map(|(i, l)| {
            let kind = if i == last && i > 0 && l.from_x > l2 / 2.0 {
                Some("memory")
            } else if i == 0 && i < last && l.to_x <= l2 / 8.0 {
                Some("L1")
            } else if l.from_x <= l2 && l.to_x >= l2 / 8.0 && l.to_x <= 2.0 * l2 {
                Some("L2")
            } else {
                None
            };
            let name = match kind.filter(|k| !used.contains(k)) {
                Some(k) => {
                    used.push(k);
                    k.to_string()
                }
                None => format!("level {}", i + 1),
            };
            LatencyLevel {
                name,
                from_bytes: l.from_x as u64,
                to_bytes: l.to_x as u64,
                cycles: l.value,
                ns: ghz.map(|g| l.value / g),
                knee_look: looks.get(i).cloned(),
            }
        })
        .collect()
}

/// Where the TLB chase steps up: the pages before each knee, and the
/// cycles on either side.
pub fn tlb_steps(tlb: &[ChasePoint], page_bytes: u64) -> Vec<TlbStep> {
    let (whole, halves) = curves(tlb, |p| p.slots as f64);
    let lv = knees::levels(&whole, MAX_LEVELS, TLB_KNEE);
    let looks = knees::second_looks(&lv, halves.as_ref(), MAX_LEVELS, TLB_KNEE, |x| format!("{x} pages"));
    lv.windows(2)
        .zip(looks)
        .map(|(w, look): (&[knees::Level], SecondLook)| TlbStep {
            pages: w[0].to_x as u64,
            reach_bytes: w[0].to_x as u64 * page_bytes,
            cycles_before: w[0].value,
            cycles_after: w[1].value,
            knee_look: look,
        })
        .collect()
}

/// The near and the far partition's cycles (each group's median) where
/// single loads through the L2 fall into two groups.
pub fn partitions(single: &[f64]) -> (Option<f64>, Option<f64>) {
    let Some(m) = super::modes::two_modes(single) else { return (None, None) };
    let group = |idx: &[usize]| median(&idx.iter().map(|&i| single[i]).collect::<Vec<_>>());
    (group(&m.low), group(&m.high))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::timing::Summary;

    fn point(bytes: u64, cycles: &[f64], ns: f64) -> ChasePoint {
        ChasePoint {
            bytes,
            slots: bytes / 128,
            stride: 128,
            samples_cycles: cycles.to_vec(),
            cycles: Summary::of(cycles).unwrap(),
            ns: Some(ns),
            valid: true,
        }
    }

    /// An H100's ladder (Luo et al.: L1 about 34 cycles, L2 265, HBM 650)
    /// gives L1, L2 and memory with their knees at the L1's and the L2's
    /// sizes, stable on both halves; 2 cycles a nanosecond.
    #[test]
    fn a_three_step_ladder_names_l1_l2_and_memory() {
        let l2 = 50u64 << 20;
        let ladder: Vec<ChasePoint> = crate::gpu::ladder::doublings(4 << 10, 1 << 30)
            .into_iter()
            .map(|b| {
                let c = if b <= 256 << 10 {
                    34.0
                } else if b <= l2 {
                    265.0
                } else {
                    650.0
                };
                point(b, &[c, c + 1.0, c, c + 1.0], (c + 0.5) / 2.0)
            })
            .collect();
        let ghz = clock_ghz(&ladder).unwrap();
        assert!((ghz - 2.0).abs() < 0.02, "{ghz}");
        let lv = levels(&ladder, l2, Some(ghz));
        let names: Vec<&str> = lv.iter().map(|l| l.name.as_str()).collect();
        assert_eq!(names, ["L1", "L2", "memory"]);
        assert_eq!((lv[0].to_bytes, lv[1].to_bytes), (256 << 10, 48 << 20));
        assert!(matches!(lv[0].knee_look, Some(SecondLook::Stable { .. })), "{lv:?}");
        assert!(lv[2].knee_look.is_none());
    }

    /// A page walk of 120 cycles past 16 pages, on 270-cycle L2 hits.
    #[test]
    fn the_tlb_chase_steps_where_its_pages_outrun_the_tlb() {
        let tlb: Vec<ChasePoint> = crate::gpu::ladder::doublings(1, 512)
            .into_iter()
            .map(|n| {
                let c = if n <= 16 { 270.0 } else { 390.0 };
                ChasePoint { slots: n, ..point(n * 128, &[c; 4], c / 2.0) }
            })
            .collect();
        let steps = tlb_steps(&tlb, 2 << 20);
        assert_eq!(steps.len(), 1, "{steps:?}");
        assert_eq!((steps[0].pages, steps[0].reach_bytes), (16, 32 << 20));
        assert_eq!((steps[0].cycles_before, steps[0].cycles_after), (270.0, 390.0));
    }

    #[test]
    fn single_loads_in_two_groups_are_two_partitions() {
        let loads = [262.0, 265.0, 268.0, 455.0, 460.0, 466.0, 263.0, 461.0];
        assert_eq!(partitions(&loads), (Some(264.0), Some(460.5)));
        assert_eq!(partitions(&[265.0; 8]), (None, None));
    }
}
