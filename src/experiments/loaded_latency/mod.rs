//! `memperf loaded-latency`: Intel MLC's loaded-latency curve as a preset
//! of the chase-under-load engine that `curves` runs (one loader kernel,
//! a fixed sweep of delays with MLC's names, an idle point). What is its
//! own: the parameters, the points' figures and where the curve bends.
//! The method: docs/methods/loaded-latency.md.

pub mod options;

pub use options::Options;

use super::chase_under_load::{kernel_parts, warn_one_cpu, Chaser, Figures, Load, Rig, Traffic, LINE};
use super::stream_arrays::Array;
use super::{Bench, Experiment, Preset};
pub use crate::analysis::bend::bend;
use crate::error::{Error, Result};
use crate::kernels::{stream_kernel, StreamShape};
use crate::memory::{Buffer, PagePolicy};
pub use crate::model::outcome::loaded_latency::*;
use crate::timing::{Summary, Team};
use crate::units::{Bytes, Nanos, MIB};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Params {
    /// What the loaders run: `simd` (read) or a write kernel or mix.
    pub loader_kernel: StreamShape,
    /// Delays after each block, swept (the idle point is added).
    pub delays_ns: Vec<u64>,
    /// Each loader array (the chase's size).
    pub loader_bytes: Bytes,
    #[serde(flatten)]
    pub load: Load,
}

impl Params {
    pub fn preset(preset: Preset, machine: &crate::machine::Fingerprint) -> Params {
        let (factor, delays, repetitions, window_s): (u64, Vec<u64>, usize, f64) = match preset {
            Preset::Quick => (4, vec![0, 250, 1000, 4000, 16000], 3, 0.04),
            Preset::Default => (8, (0..11).map(|k| if k == 0 { 0 } else { 50 << k }).collect(), 5, 0.1),
            Preset::Full => (8, (0..14).map(|k| if k == 0 { 0 } else { 50 << (k - 1) }).collect(), 9, 0.2),
        };
        // The chase and the loaders' array live at once.
        let size = super::budget::memory_size(machine, factor, Bytes(64 * MIB), 2);
        Params {
            loader_kernel: StreamShape::Simd,
            delays_ns: delays,
            loader_bytes: size,
            load: Load::new(size, Bytes(16 * 1024), repetitions, window_s, 0x6c6f_6164),
        }
    }
}

pub struct LoadedLatency;

impl Experiment for LoadedLatency {
    const NAME: &'static str = "loaded-latency";
    const SHARE: f64 = 1.3;
    type Params = Params;
    type Outcome = Outcome;

    fn preset(preset: Preset, machine: &crate::machine::Fingerprint) -> Params {
        Params::preset(preset, machine)
    }

    fn needs(p: &Params) -> Result<crate::experiments::Needs> {
        check(p)?;
        Ok(p.load.needs())
    }

    fn run(p: &Params, ctx: &Bench) -> Result<Outcome> {
        run(p, ctx)
    }
}

/// A kernel a loader may run: simd (read) or a write kernel or mix.
pub(crate) fn loader(k: StreamShape) -> Result<StreamShape> {
    match k {
        StreamShape::Simd => Ok(k),
        k if k.writes() => Ok(k),
        _ => Err(Error::usage(format!(
            "--loader {k}: a loader runs simd or a write kernel (store, store-nt, copy, copy-nt, triad, update, mix-3:1)"
        ))),
    }
}

/// Every parameter within range, before the machine is probed.
pub(crate) fn check(p: &Params) -> Result<()> {
    loader(p.loader_kernel)?;
    p.load.check(p.loader_bytes)
}

fn run(p: &Params, ctx: &Bench) -> Result<Outcome> {
    check(p)?;
    let cpus = crate::timing::team::allowed_cpus().len();
    let team = Team::new(cpus.max(1))?;
    let l = &p.load;
    let mut buffer = Buffer::new(l.pages, l.chase_bytes)?;
    let parts = kernel_parts(p.loader_kernel);
    let array = (cpus > 1).then(|| Array::new(PagePolicy::Small, p.loader_bytes, parts, &team, 1, ctx.clock)).transpose()?;
    let of = |a| Traffic::of_kernel(a, p.loader_kernel, cpus - 1, l.block_bytes.0);
    let traffic = array.as_ref().map_or(Ok(Vec::new()), of)?;
    // SAFETY: the buffer outlives the rig and its chaser.
    let rig = Rig::new(LoadedLatency::NAME, ctx, team, unsafe { Chaser::over(&buffer, l.seed) });
    let delays = point_delays(p, cpus, ctx);
    let samples = rig.scheduled(LoadedLatency::NAME, (l.repetitions, l.seed), l.window(), &delays, &traffic)?;
    buffer.read_back();
    rig.finish(buffer.backing());
    let bytes = traffic.first().map_or((0.0, 0.0), |t| (t.program_bytes_per_block, t.bus_bytes_per_block));
    let points: Vec<Point> = delays.iter().zip(samples).map(|(&d, s)| point(d, &s, bytes)).collect::<Result<_>>()?;
    let isa = stream_kernel(p.loader_kernel, None)?.1.isa;
    Ok(summarise(p, &rig, isa, buffer.backing().clone(), points))
}

/// The delays measured: the idle point first, then the sweep (none when
/// there is no CPU for a loader).
fn point_delays(p: &Params, cpus: usize, ctx: &Bench) -> Vec<Option<u64>> {
    if cpus < 2 {
        warn_one_cpu(ctx, LoadedLatency::NAME, "loaded points", "idle latency only");
        return vec![None];
    }
    let sweep: std::collections::BTreeSet<u64> = p.delays_ns.iter().copied().collect();
    std::iter::once(None).chain(sweep.into_iter().map(Some)).collect()
}

/// One point's figures from its repetitions; `(program, bus)`: the bytes
/// one block of a loader moves.
fn point(delay_ns: Option<u64>, samples: &[Figures], (program, bus): (f64, f64)) -> Result<Point> {
    let lat: Vec<f64> = samples.iter().map(|s| s.latency_ns).filter(|x| x.is_finite()).collect();
    let bw: Vec<f64> = samples.iter().map(|s| s.blocks_per_s * program).collect();
    let Some(latency_ns) = Summary::of(&lat) else {
        return Err(Error::usage("the chaser finished no chunk of loads inside the window: use a longer --window"));
    };
    let loader_bytes_per_s = Summary::of(&bw).expect("at least one repetition");
    let chaser = LINE as f64 / (latency_ns.median * 1e-9);
    let loader_bus = if program > 0.0 { loader_bytes_per_s.median * bus / program } else { 0.0 };
    Ok(Point {
        delay_ns,
        samples_latency_ns: lat,
        latency_ns,
        samples_loader_bytes_per_s: bw,
        loader_bytes_per_s,
        loader_bus_bytes_per_s: loader_bus,
        chaser_bytes_per_s: chaser,
        total_bytes_per_s: loader_bus + chaser,
        valid: samples.iter().all(|s| s.ok && s.latency_ns.is_finite()),
    })
}

fn summarise(p: &Params, rig: &Rig, isa: String, chase_backing: crate::memory::Backing, points: Vec<Point>) -> Outcome {
    let saturated = points.iter().find(|q| q.delay_ns == Some(0));
    Outcome {
        chaser_cpu: rig.team.cpus()[0],
        loader_cpus: rig.team.cpus()[1..].to_vec(),
        loader_kernel: p.loader_kernel,
        loader_isa: isa,
        block_bytes: p.load.block_bytes.0,
        pause_ns_per_iteration: Some(rig.pause_ns_per_iteration),
        chase_bytes: p.load.chase_bytes.0,
        chase_backing,
        idle_latency_ns: Nanos(points[0].latency_ns.median),
        saturated_latency_ns: saturated.map(|q| Nanos(q.latency_ns.median)),
        saturated_bytes_per_s: saturated.map(|q| q.total_bytes_per_s),
        bend: bend(&points),
        seed: p.load.seed,
        valid: points.iter().all(|q| q.valid),
        points,
    }
}

impl crate::model::Redraw for Outcome {
    /// Only a changed verdict replaces the stored bend: its figures
    /// recomputed from parsed samples could differ in the last bit, and a
    /// reader must get the same document back.
    fn recheck(&mut self, _: Option<f64>) {
        let again = bend(&self.points);
        if std::mem::discriminant(&again) != std::mem::discriminant(&self.bend) {
            self.bend = again;
        }
    }
    fn reanalyse(&mut self, _: &crate::machine::Fingerprint, _: Option<f64>) -> Vec<&'static str> {
        self.bend = bend(&self.points);
        vec!["bend"]
    }
}
