//! The measuring of `curves`: each mix's pauses found by probes, its
//! points measured through the scheduler, and the two second looks.

use super::params::Params;
use super::{analysis, search};
use crate::error::Result;
use crate::experiments::chase_under_load::{self, bus_bytes_per_block, Figures, Traffic, LINE};
use crate::experiments::stream_arrays::Array;
use crate::kernels::chase::chase_kernel;
use crate::kernels::{stream_kernel, StreamShape};
use crate::model::outcome::curves::{Consistency, Curve, Mix, Point};
use crate::model::Caution;
use crate::timing::Summary;

/// What the run holds while it measures: the engine, the traffic array
/// (half read, half written) and what was asked.
pub struct Rig<'a> {
    pub load: chase_under_load::Rig<'a>,
    pub array: Array,
    pub p: &'a Params,
}

/// Every mix's curve, in the order given.
pub fn all(rig: &Rig) -> Result<Vec<Curve>> {
    rig.p.mixes.iter().map(|&mix| one_mix(rig, mix)).collect()
}

/// Bus bytes per second of one run: the traffic's blocks and the chaser's lines.
fn bus_bytes_per_s(f: &Figures, block_bus: f64) -> f64 {
    f.blocks_per_s * block_bus + if f.latency_ns > 0.0 { LINE as f64 / (f.latency_ns * 1e-9) } else { 0.0 }
}

fn one_mix(rig: &Rig, mix: Mix) -> Result<Curve> {
    let p = rig.p;
    let threads = rig.load.team.threads() - 1;
    let traffic = Traffic::of_mix(&rig.array, mix, threads, p.load.block_bytes.0)?;
    let block_bus = bus_bytes_per_block(mix, p.load.block_bytes.0);
    let aim = search::Aim {
        points: p.points,
        max_gap: p.max_gap,
        max_probes: p.max_probes(),
        block_bus_bytes: block_bus * threads as f64,
    };
    rig.load.ctx.progress.start(&format!("curves {mix} (finding rates)"), aim.max_probes as u64);
    let probes = search::pauses(aim, |pause| {
        rig.load.ctx.check_interrupt()?;
        rig.load.ctx.progress.advance(1);
        let f = rig.load.run((p.load.warm_s, p.probe_s), pause, &traffic);
        Ok(bus_bytes_per_s(&f, block_bus))
    })?;
    rig.load.ctx.progress.finish();
    let pauses: Vec<Option<u64>> = probes.iter().map(|q| q.pause_ns).collect();
    let lines_max = crate::analysis::littles_law::core_lines_max(&rig.load.ctx.machine.cpu.identity.vendor);
    let samples = scheduled(rig, mix, &pauses, &traffic)?;
    let mut points: Vec<_> = pauses.iter().zip(&samples).map(|(&d, s)| point(p, mix, (threads, lines_max), d, s)).collect();
    // The probes were short: where the measured medians still leave a gap,
    // the pauses that split it are measured too (twice at most).
    for _ in 0..2 {
        let seen: Vec<search::Probe> =
            points.iter().map(|q| search::Probe { pause_ns: q.pause_ns, bytes_per_s: q.bytes_per_s.median }).collect();
        let more: Vec<Option<u64>> = search::splits(&seen, p.max_gap).into_iter().map(Some).collect();
        if more.is_empty() || points.len() >= aim.max_probes {
            break;
        }
        let samples = scheduled(rig, mix, &more, &traffic)?;
        points.extend(more.iter().zip(&samples).map(|(&d, s)| point(p, mix, (threads, lines_max), d, s)));
    }
    Ok(analysis::curve(mix, points))
}

/// Every pause through the scheduler (see [`chase_under_load::Rig::scheduled`]).
fn scheduled(rig: &Rig, mix: Mix, pauses: &[Option<u64>], traffic: &[Traffic]) -> Result<Vec<Vec<Figures>>> {
    let p = rig.p;
    let seed = p.load.seed ^ mix.reads as u64;
    rig.load.scheduled(&format!("curves {mix}"), (p.load.repetitions, seed), p.load.window(), pauses, traffic)
}

/// Within this of its second look, a figure holds.
const TOLERANCE: f64 = 0.10;

/// What the second looks found: the checks, and the traffic CPUs' plain
/// read (where the all-reads mix was measured).
pub struct SecondLooks {
    pub checks: Vec<Consistency>,
    pub host_read_bytes_per_s: Option<f64>,
}

/// The second looks, each against the all-reads mix (else the first): the
/// chase alone, timed plainly on the chaser's CPU, against its idle point;
/// and, where the all-reads mix was measured, its traffic at full speed
/// against bandwidth's read (whole slices of the simd kernel, no blocks,
/// pauses or clock reads) on the same CPUs with the chase beside it, the
/// two alternated five times so the host's drift hits both, and that
/// traffic against the curve's own saturation (the drift over the run).
pub fn second_looks(rig: &Rig, curves: &[Curve]) -> Result<SecondLooks> {
    let Some(c) = curves.iter().find(|c| c.mix.writes == 0).or(curves.first()) else {
        return Ok(SecondLooks { checks: Vec::new(), host_read_bytes_per_s: None });
    };
    let mut checks = vec![compare(
        rig,
        format!("the {} mix's idle latency against the chase alone (the latency kernel, same cycle and pages)", c.mix),
        "ns",
        c.idle_latency_ns.0,
        chase_alone(rig, c.idle_latency_ns.0),
    )];
    if c.mix.writes != 0 {
        return Ok(SecondLooks { checks, host_read_bytes_per_s: None });
    }
    let (traffic, read) = saturated_against_read(rig, c.mix)?;
    let what = format!(
        "the {} mix's traffic at full speed against bandwidth's read (simd, whole slices) on the same CPUs, the chase \
         beside both",
        c.mix
    );
    checks.push(compare(rig, what, "B/s", traffic, read));
    if let Some(sat) = c.points.iter().find(|q| q.pause_ns == Some(0)) {
        let then = sat.bytes_per_s.median - LINE as f64 / (sat.latency_ns.median * 1e-9);
        let what = format!("the {} mix's traffic at full speed in its curve against the same traffic at the run's end", c.mix);
        checks.push(compare(rig, what, "B/s", then, traffic));
    }
    Ok(SecondLooks { checks, host_read_bytes_per_s: Some(read) })
}

/// Five alternated pairs: the mix's traffic with no pause (its bus bytes
/// per second, the chaser's left out) and [`read_beside_chase`]; the
/// medians of each.
fn saturated_against_read(rig: &Rig, mix: Mix) -> Result<(f64, f64)> {
    let p = rig.p;
    let threads = rig.load.team.threads() - 1;
    let traffic = Traffic::of_mix(&rig.array, mix, threads, p.load.block_bytes.0)?;
    let block_bus = bus_bytes_per_block(mix, p.load.block_bytes.0);
    let (mut blocks, mut reads) = (Vec::new(), Vec::new());
    for _ in 0..5 {
        rig.load.ctx.check_interrupt()?;
        let f = rig.load.run(p.load.window(), Some(0), &traffic);
        blocks.push(f.blocks_per_s * block_bus);
        reads.push(read_beside_chase(rig)?);
    }
    Ok((median(blocks), median(reads)))
}

fn compare(rig: &Rig, what: String, unit: &str, curves: f64, reference: f64) -> Consistency {
    let ratio = curves / reference;
    let holds = (ratio - 1.0).abs() <= TOLERANCE;
    if !holds {
        rig.load.ctx.warn(Caution::SecondLookDisagrees {
            experiment: "curves",
            what: what.clone(),
            ratio,
            tolerance: TOLERANCE,
        });
    }
    Consistency { what, unit: unit.into(), curves, reference, ratio, tolerance: TOLERANCE, holds }
}

/// ns per load of the chase alone on the chaser's CPU: five timed runs of
/// about 10 ms (sized from `idle_ns`), the median.
fn chase_alone(rig: &Rig, idle_ns: f64) -> f64 {
    let k1 = chase_kernel(1).expect("one chain");
    let loads = ((10e6 / idle_ns.max(1.0)) as u64).clamp(1_000, 50_000_000);
    let clock = rig.load.ctx.clock;
    let run = rig.load.team.run(clock, |t| {
        if t != 0 {
            return Vec::new();
        }
        let mut c = rig.load.chaser.lock().unwrap_or_else(|e| e.into_inner());
        (0..5)
            .map(|_| {
                let t0 = clock.now_ns();
                // SAFETY: the chase's buffer outlives the run.
                let ok = unsafe { c.0.run(k1, loads) };
                let dt = clock.now_ns() - t0;
                if ok {
                    dt as f64 / loads as f64
                } else {
                    f64::NAN
                }
            })
            .collect()
    });
    median(run.results.into_iter().flatten().collect())
}

/// Bytes per second the traffic threads read together, each summing its
/// whole read slice twice at full speed (timed by the team run), while the
/// chaser chases until they are done.
fn read_beside_chase(rig: &Rig) -> Result<f64> {
    let (kernel, _) = stream_kernel(StreamShape::Simd, None)?;
    let slices = rig.array.part_slices(0, rig.load.team.threads() - 1);
    let k1 = chase_kernel(1).expect("one chain");
    let left = std::sync::atomic::AtomicUsize::new(slices.len());
    let run = rig.load.team.run(rig.load.ctx.clock, |t| {
        if t == 0 {
            let mut c = rig.load.chaser.lock().unwrap_or_else(|e| e.into_inner());
            while left.load(std::sync::atomic::Ordering::Relaxed) > 0 {
                // SAFETY: the chase's buffer outlives the run.
                unsafe { c.0.run(k1, 512) };
            }
            return 0usize;
        }
        let s = &slices[t - 1];
        // SAFETY: the slice lies inside the traffic array, alive for the run.
        std::hint::black_box(unsafe { kernel(2, s) });
        left.fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
        s.len * 8 * 2
    });
    Ok(run.results.iter().sum::<usize>() as f64 / (run.elapsed_ns.max(1) as f64 * 1e-9))
}

/// The median of the finite values in `v` (NaN where none is).
fn median(v: Vec<f64>) -> f64 {
    let finite: Vec<f64> = v.into_iter().filter(|x| x.is_finite()).collect();
    Summary::of(&finite).map_or(f64::NAN, |s| s.median)
}

/// A point's figures from its repetitions of (latency, traffic blocks/s, ok).
/// `cores`: the traffic cores, and the most lines one of them tracks.
fn point(p: &Params, mix: Mix, (cores, lines_max): (usize, f64), pause_ns: Option<u64>, samples: &[Figures]) -> Point {
    let block_bus = bus_bytes_per_block(mix, p.load.block_bytes.0);
    let lat: Vec<f64> = samples.iter().map(|s| s.latency_ns).filter(|x| x.is_finite() && *x > 0.0).collect();
    let bw: Vec<f64> = samples.iter().map(|s| bus_bytes_per_s(s, block_bus)).collect();
    let latency_ns = Summary::of(&lat).unwrap_or_else(|| Summary::of(&[f64::NAN]).expect("one value"));
    let blocks = Summary::of(&samples.iter().map(|s| s.blocks_per_s).collect::<Vec<_>>()).expect("a repetition");
    let (lines, why) = crate::analysis::littles_law::per_core(blocks.median * block_bus, cores, latency_ns.median, lines_max);
    let counted: Vec<f64> = samples.iter().filter_map(|s| s.counted_bytes_per_s).collect();
    Point {
        pause_ns,
        bytes_per_s: Summary::of(&bw).expect("a repetition"),
        samples_bytes_per_s: bw,
        samples_latency_ns: lat,
        latency_ns,
        traffic_program_bytes_per_s: blocks.median * p.load.block_bytes.0 as f64,
        counted_bytes_per_s: Summary::of(&counted).map(|c| c.median),
        lines_in_flight_per_core: lines,
        not_claimed: why,
        valid: samples.iter().all(|s| s.ok && s.latency_ns.is_finite()),
    }
}
