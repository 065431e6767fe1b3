//! `memperf gpu`: each GPU as its driver describes it, the driver's own
//! copies over the host link and within the device (`gpu::copies`), and
//! memperf's kernels over device memory (`gpu::stream`).
//! NVIDIA's driver is loaded at run time: without one, or without a
//! device, `memperf gpu` refuses in one line before anything runs, and
//! the suite's record says "not measured — no GPU" and the suite goes on.
//! The method: docs/methods/gpu.md.

use super::options::{self, positive_arg, size_arg, Request};
use super::{Bench, Experiment, Preset};
use crate::error::{Error, Result};
use crate::gpu::{copies, inventory, ladder, loaded, stream, Attribute, Driver, GpuError};
pub use crate::model::outcome::gpu::*;
use crate::units::{Bytes, MIB};
use clap::Args;
use serde::{Deserialize, Serialize};
use std::path::Path;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Params {
    /// Bytes of each copy (at most a quarter of the device's memory).
    pub bytes: Bytes,
    /// Copies queued back to back between the two events of a sample.
    pub copies_per_sample: usize,
    /// Samples of each path, the paths taking turns, and of each kernel's
    /// configuration and working set.
    pub rounds: usize,
    /// Bytes of each of the kernels' three arrays; `None`: four times the
    /// L2, at least 64 MiB.
    pub array_bytes: Option<Bytes>,
    /// The least time a kernel's sample spans.
    pub min_sample_s: f64,
    /// The latency ladder's largest chain (at most an eighth of the
    /// device's memory); the TLB chase covers as many bytes.
    pub chase_bytes: Bytes,
    /// Whether a machine without a GPU is an error (the subcommand) or a
    /// line of the record (the suite).
    pub required: bool,
    /// Seconds the suite's box grows by for the GPU, where one was found
    /// as the suite was planned (none elsewhere, and for the subcommand).
    #[serde(default)]
    pub suite_s: f64,
    /// The order of the paths' turns, and the checks' bytes.
    pub seed: u64,
}

impl Params {
    pub fn preset(preset: Preset) -> Params {
        let (mib, copies_per_sample, rounds, chase_gib) = match preset {
            Preset::Quick => (256, 2, 3, 1),
            Preset::Default => (512, 4, 7, 4),
            Preset::Full => (512, 8, 15, 8),
        };
        Params {
            bytes: Bytes(mib * MIB),
            copies_per_sample,
            rounds,
            array_bytes: None,
            min_sample_s: stream::MIN_SAMPLE_S,
            chase_bytes: Bytes(chase_gib << 30),
            required: false,
            suite_s: 0.0,
            seed: 0x6770_7531,
        }
    }
}

/// Seconds a GPU adds to the suite's box: its copies, kernels, ladder and
/// curve at the preset's sizes (the quick suite's within about 15 s more).
pub fn suite_seconds(preset: Preset) -> f64 {
    match preset {
        Preset::Quick => 15.0,
        Preset::Default => 60.0,
        Preset::Full => 180.0,
    }
}

pub struct Gpu;

impl Experiment for Gpu {
    const NAME: &'static str = "gpu";
    /// Weightless: where a GPU is, the suite's box grows by seconds of
    /// its own ([`suite_seconds`]); without one it measures nothing and
    /// costs the others nothing.
    const SHARE: f64 = 0.0;
    type Params = Params;
    type Outcome = Outcome;

    fn own_s(p: &Params) -> f64 {
        p.suite_s
    }

    fn preset(preset: Preset, _: &crate::machine::Fingerprint) -> Params {
        Params::preset(preset)
    }

    /// The preset's, with the GPU's own seconds, each device's, where the
    /// driver finds any.
    fn suite(asked: &Request) -> (Params, Option<crate::model::Warning>) {
        let mut p = Params::preset(asked.preset);
        if let Ok(cuda) = crate::gpu::cuda::open_with_device() {
            p.suite_s = suite_seconds(asked.preset) * cuda.count().unwrap_or(1) as f64;
        }
        (p, None)
    }

    /// The parameters in range; and, where a GPU is required, the driver
    /// and a device, else one line saying which is missing.
    fn needs(p: &Params) -> Result<super::Needs> {
        check(p)?;
        if p.required {
            crate::gpu::cuda::open_with_device().map_err(|why| Error::unsatisfiable(format!("no GPU to measure: {why}"), FIX))?;
        }
        Ok(super::Needs { levels: false, pages_matter: false, ..Default::default() })
    }

    fn run(p: &Params, ctx: &Bench) -> Result<Outcome> {
        check(p)?;
        let cuda = match crate::gpu::cuda::open_with_device() {
            Ok(c) => c,
            Err(why) if p.required => return Err(Error::unsatisfiable(format!("no GPU to measure: {why}"), FIX)),
            Err(why) => return Ok(not_measured(format!("not measured — no GPU: {why}"))),
        };
        measure(&cuda, p, ctx, Path::new("/sys/bus/pci/devices"))
    }
}

/// The most copies a sample queues: behind the gate, many more could
/// fill the driver's queue, and the host would wait for the gate.
const MAX_COPIES: usize = 64;

/// What to do where there is no GPU.
const FIX: &str = "run where an NVIDIA GPU and its driver are (nvidia-smi lists them)";

fn check(p: &Params) -> Result<()> {
    if p.bytes.0 < MIB
        || !(1..=MAX_COPIES).contains(&p.copies_per_sample)
        || p.rounds == 0
        || p.array_bytes.is_some_and(|b| b.0 < 64 * 1024)
        || p.chase_bytes.0 < 64 * 1024
    {
        return Err(Error::usage(
            "gpu needs --size ≥ 1MiB, --copies from 1 to 64, --rounds ≥ 1, --array-size ≥ 64KiB and --chase-size ≥ 64KiB",
        ));
    }
    let least = copies::MIN_SAMPLE_BYTES as u64;
    if p.bytes.0.saturating_mul(p.copies_per_sample as u64) < least {
        return Err(Error::usage(format!(
            "--size {} × --copies {} is under {} a sample, too short for the driver's events to time: use more",
            p.bytes,
            p.copies_per_sample,
            Bytes(least)
        )));
    }
    Ok(())
}

fn not_measured(why: String) -> Outcome {
    Outcome { not_measured: Some(why), ..Outcome::empty() }
}

/// What memperf's kernels measured on one device, and what they left out.
struct Kernels {
    stream: stream::Measured,
    latency: Option<Latency>,
    loaded: Option<LoadedCurve>,
    /// Why the ladder or the curve is missing: the share ran out, or no
    /// SM clock is known to turn the readers' spins into time.
    left_out: Option<String>,
}

/// Why a phase is left out where the job's share of the suite's box has
/// ended; `None` where it has not (or there is no box).
fn share_spent(ctx: &Bench, what: &str) -> Option<String> {
    ctx.deadline_ns()
        .is_some_and(|end| ctx.clock.now_ns() >= end)
        .then(|| format!("{what} left out: the suite's time for the GPU ran out (memperf gpu measures it all)"))
}

/// memperf's kernels compiled for device `dev` (current) and loaded.
fn load(d: &dyn Driver, dev: usize) -> std::result::Result<(), GpuError> {
    let attr = |a| d.attribute(dev, a);
    d.load_kernels(attr(Attribute::CapabilityMajor)? as u32, attr(Attribute::CapabilityMinor)? as u32)
}

/// memperf's kernels on device `dev` (current, the kernels loaded):
/// each over arrays of `p.array_bytes` (four times the L2 by default, at
/// most an eighth of the device's memory each); then its chases, idle and
/// under load.
fn kernels(d: &dyn Driver, dev: usize, p: &Params, ctx: &Bench) -> std::result::Result<Kernels, GpuError> {
    let attr = |a| d.attribute(dev, a);
    let (sms, l2) = (attr(Attribute::Sms)?.max(1) as u32, attr(Attribute::L2Bytes)?.max(0) as u64);
    let memory = d.total_memory(dev)?;
    let array = p.array_bytes.map_or((4 * l2).max(64 * MIB), |b| b.0).min(memory / 8);
    let plan = stream::Plan { elements: (array / 8) as usize, rounds: p.rounds, min_sample_s: p.min_sample_s, seed: p.seed };
    let measured = stream::measure(d, dev, sms, l2, &plan)?;
    if let Some(why) = share_spent(ctx, "the latency ladder and the curve") {
        return Ok(Kernels { stream: measured, latency: None, loaded: None, left_out: Some(why) });
    }
    let page_bytes = d.page_bytes(dev)?.max(ladder::LINE);
    let chase = p.chase_bytes.0.min(memory / 8);
    let plan = ladder::Plan {
        ladder: ladder::doublings(ladder::LADDER_MIN, chase),
        page_bytes,
        tlb_pages: ladder::doublings(1, (chase / page_bytes).max(1)),
        // Four samples at least: each knee's second look needs two a half.
        rounds: p.rounds.max(4),
        seed: p.seed,
    };
    let latency = crate::analysis::gpu_latency::analyse(dev, ladder::measure(d, sms, l2, &plan)?, page_bytes, l2);
    // The SMs' clock as the chases saw it, else the driver's figure;
    // without either the curve is not drawn, rather than its spins
    // labelled at a guessed clock.
    let ghz = latency.clock_ghz.or(attr(Attribute::SmClockKhz).ok().filter(|&k| k > 0).map(|k| k as f64 / 1e6));
    let plan = loaded::Plan {
        chain_bytes: (4 * l2).max(256 * MIB).min(chase),
        array_bytes: array,
        rounds: p.rounds.max(3),
        seed: p.seed,
    };
    let (loaded, left_out) = match (ghz, share_spent(ctx, "latency under load")) {
        (_, Some(why)) => (None, Some(why)),
        (Some(ghz), None) => (Some(crate::analysis::gpu_latency::curve(dev, loaded::measure(d, sms, ghz, &plan)?)), None),
        (None, None) => (
            None,
            Some(
                "latency under load not measured: no SM clock, from the chases or the driver, to turn its \
                 readers' spins into time"
                    .to_string(),
            ),
        ),
    };
    Ok(Kernels { stream: measured, latency: Some(latency), loaded, left_out })
}

/// Every device of `d`: described, then its copies measured, each device
/// current in turn; `pci_devices` is sysfs' folder of PCI devices.
pub fn measure(d: &dyn Driver, p: &Params, ctx: &Bench, pci_devices: &Path) -> Result<Outcome> {
    let failed = |e: crate::gpu::GpuError| Error::unsatisfiable(format!("the GPU driver refused: {e}"), FIX);
    let count = d.count().map_err(failed)?;
    let mut o = Outcome::empty();
    let mut not_run = Vec::new();
    ctx.progress.start("gpu", (count * 2) as u64);
    for dev in 0..count {
        ctx.check_interrupt()?;
        // Past the suite's time for the GPU, a further device is described, not measured.
        if let Some(why) = share_spent(ctx, "its copies and kernels").filter(|_| dev > 0) {
            not_run.push(format!("GPU {dev}: {why}"));
            o.devices.push(inventory(d, dev, pci_devices).map_err(failed)?);
            ctx.progress.advance(2);
            continue;
        }
        // Whole pages, so the SMs' copy of 16-byte words covers them.
        let bytes = (p.bytes.0.min(d.total_memory(dev).map_err(failed)? / 4) & !4095) as usize;
        let sms = d.attribute(dev, Attribute::Sms).map_err(failed)?.max(1) as u32;
        let plan = copies::Plan { bytes, copies_per_sample: p.copies_per_sample, rounds: p.rounds, seed: p.seed, sms };
        d.use_device(dev).map_err(failed)?;
        // Without the kernels the copies run ungated, and the SMs' are left out.
        let loaded = load(d, dev);
        let measured = match copies::measure(d, dev, &plan, loaded.is_ok()) {
            // The gate or the SMs' copies refused: the copy engines' cases still stand.
            Err(e) if loaded.is_ok() => {
                not_run.push(format!("GPU {dev}: the SMs' copies and the gate not measured: {e}"));
                copies::measure(d, dev, &plan, false)
            }
            m => m,
        };
        ctx.progress.advance(1);
        // The copies failing is the run's error; the kernels', a line of the outcome.
        let ran = measured.is_ok().then(|| loaded.and_then(|_| kernels(d, dev, p, ctx)));
        d.release();
        let measured = measured.map_err(failed)?;
        o.copies.extend(measured.copies);
        o.small_copies.extend(measured.small);
        match ran {
            Some(Ok(k)) => {
                o.kernels.extend(k.stream.kernels);
                o.configs.extend(k.stream.configs);
                o.working_set.extend(k.stream.working_set);
                o.latency.extend(k.latency);
                o.loaded.extend(k.loaded);
                not_run.extend(k.left_out.map(|why| format!("GPU {dev}: {why}")));
            }
            Some(Err(e)) => not_run.push(format!("GPU {dev}: {e}")),
            None => {}
        }
        // After the copies: an idle GPU drops its link to a lower speed.
        o.devices.push(inventory(d, dev, pci_devices).map_err(failed)?);
        ctx.progress.advance(1);
    }
    ctx.progress.finish();
    o.kernels_not_measured = (!not_run.is_empty()).then(|| not_run.join("; "));
    o.valid = o.copies.iter().all(|t| t.valid)
        && o.small_copies.iter().all(|c| c.valid)
        && o.kernels.iter().all(|k| k.valid) && o.latency.iter().all(chases_valid)
        && o.loaded.iter().all(|c| c.points.iter().all(|p| p.valid));
    o.driver_version = d.version().ok();
    Ok(o)
}

/// Whether every chase of `l` ended where the host's walk says.
fn chases_valid(l: &Latency) -> bool {
    l.ladder.iter().chain(&l.tlb).all(|c| c.valid) && l.l2_spread.as_ref().is_none_or(|s| s.valid)
}

#[derive(Debug, Args)]
pub struct Options {
    /// Bytes of each copy (at most a quarter of the device's memory) [default: 512MiB; quick 256MiB]
    #[arg(long, value_name = "SIZE", allow_hyphen_values = true, value_parser = size_arg)]
    pub size: Option<Bytes>,
    /// Copies queued back to back in one timed sample [default: 4; quick 2, full 8]
    #[arg(long, value_name = "N", allow_hyphen_values = true, value_parser = positive_arg("--copies"))]
    pub copies: Option<usize>,
    /// Samples of each path, kernel configuration and working set, taking turns [default: 7; quick 3, full 15]
    #[arg(long, value_name = "N", allow_hyphen_values = true, value_parser = positive_arg("--rounds"))]
    pub rounds: Option<usize>,
    /// Bytes of each of the kernels' three arrays [default: four times the L2, at least 64MiB]
    #[arg(long, value_name = "SIZE", allow_hyphen_values = true, value_parser = size_arg)]
    pub array_size: Option<Bytes>,
    /// The latency ladder's largest chain, and the bytes the TLB chase covers [default: 4GiB; quick 1GiB, full 8GiB]
    #[arg(long, value_name = "SIZE", allow_hyphen_values = true, value_parser = size_arg)]
    pub chase_size: Option<Bytes>,
}

impl options::Options for Options {
    type Experiment = Gpu;
    /// A good value of every option, as the man page shows them.
    const EXAMPLES: &'static [&'static [&'static str]] =
        &[&["--size", "64MiB", "--copies", "2", "--rounds", "3", "--array-size", "256MiB", "--chase-size", "1GiB"]];

    fn params(&self, asked: &Request) -> Result<Params> {
        let mut p = Params::preset(asked.preset);
        p.bytes = self.size.unwrap_or(p.bytes);
        p.copies_per_sample = self.copies.unwrap_or(p.copies_per_sample);
        p.rounds = self.rounds.unwrap_or(p.rounds);
        p.array_bytes = self.array_size.or(p.array_bytes);
        p.chase_bytes = self.chase_size.unwrap_or(p.chase_bytes);
        p.required = true;
        check(&p)?;
        Ok(p)
    }
}

impl crate::model::Redraw for Outcome {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::fake::FakeGpu;

    fn small() -> Params {
        Params {
            bytes: Bytes(MIB),
            copies_per_sample: 2,
            rounds: 2,
            array_bytes: Some(Bytes(64 * 1024)),
            min_sample_s: 0.0,
            chase_bytes: Bytes(MIB),
            required: true,
            suite_s: 0.0,
            seed: 1,
        }
    }

    /// What `gpu` measures of `gpu` with small()'s parameters, its share
    /// ending at `until` (none: no time box).
    fn measured(gpu: &FakeGpu, until: Option<u64>) -> Outcome {
        let (m, clock) = (crate::machine::collect(), crate::timing::MonotonicClock::new());
        let ctx = Bench::new(&m, &clock, &super::super::NoProgress).until(until);
        measure(gpu, &small(), &ctx, Path::new("/nonexistent")).unwrap()
    }

    /// Where the suite's time for the GPU has ended, the copies and the
    /// kernels' bandwidth stand, and the ladder and the curve are left
    /// out with the reason.
    #[test]
    fn past_its_share_the_ladder_and_the_curve_are_left_out_and_said() {
        let o = measured(&FakeGpu::h200(), Some(0));
        assert_eq!((o.copies.len(), o.kernels.len(), o.latency.len(), o.loaded.len()), (11, 8, 0, 0));
        let why = o.kernels_not_measured.unwrap_or_default();
        assert!(why.starts_with("GPU 0: the latency ladder and the curve left out: the suite's time"), "{why}");
    }

    /// On a fake H200: one device described, its eleven copy cases and
    /// small copies measured and valid, the copies a quarter of its memory
    /// at most, and its eight kernels measured and checked.
    #[test]
    fn a_fake_h200_is_described_and_its_copies_and_kernels_measured() {
        let o = measured(&FakeGpu::h200(), None);
        assert_eq!((o.driver_version, o.devices.len(), o.copies.len(), o.kernels.len()), (Some(13000), 1, 11, 8));
        // Small copies of 8 B to 1 MiB, each way, behind the gate.
        assert_eq!(o.small_copies.len(), 10);
        assert!(o.small_copies.iter().all(|c| c.gated && c.valid), "{:?}", o.small_copies);
        assert!(o.valid && o.not_measured.is_none() && o.kernels_not_measured.is_none(), "{o:?}");
        assert!(o.copies.iter().all(|t| t.bytes == MIB && t.samples_bytes_per_s.len() == 2));
        assert!(o.kernels.iter().all(|k| k.elements == 8 * 1024 && k.samples_bytes_per_s.len() == 2), "{o:?}");
        // The ladder to --chase-size, four rounds at least, and the curve.
        assert_eq!((o.latency.len(), o.loaded.len()), (1, 1));
        assert_eq!(o.latency[0].ladder.last().map(|p| (p.bytes, p.samples_cycles.len())), Some((MIB, 4)));
        assert_eq!(o.loaded[0].points.len(), 11);
    }

    /// Without a run-time compiler the copies are measured and the kernels
    /// say why they are not.
    #[test]
    fn without_nvrtc_the_copies_stand_and_the_kernels_say_why() {
        let gpu = FakeGpu::h200();
        gpu.without_compiler();
        let o = measured(&gpu, None);
        // No gate and no SMs' copies: the copy engine's seven cases, as issued.
        assert_eq!((o.copies.len(), o.kernels.len()), (7, 0));
        assert!(o.copies.iter().all(|t| !t.gated) && o.small_copies.iter().all(|c| !c.gated));
        assert!(o.valid, "{o:?}");
        assert!(o.kernels_not_measured.as_deref().is_some_and(|w| w.starts_with("GPU 0: NVRTC failed: NVRTC was not found")));
    }

    /// Where the driver will not map pinned memory for the device, the
    /// copy engines' cases stand, ungated, and the record says why the
    /// SMs' copies and the gate are missing.
    #[test]
    fn without_mapped_memory_the_copy_engines_cases_stand() {
        let gpu = FakeGpu::h200();
        gpu.without_mapping();
        let o = measured(&gpu, None);
        assert_eq!((o.copies.len(), o.kernels.len()), (7, 8));
        assert!(o.valid && o.copies.iter().all(|t| !t.gated), "{o:?}");
        let why = o.kernels_not_measured.unwrap_or_default();
        assert!(why.starts_with("GPU 0: the SMs' copies and the gate not measured: cuMemHostGetDevicePointer_v2"), "{why}");
        assert_eq!(gpu.live_allocations(), 0);
    }

    /// Out of range, refused before anything runs; samples too small for
    /// the events' resolution too.
    #[test]
    fn parameters_out_of_range_are_refused() {
        let mut p = Params::preset(Preset::Quick);
        p.rounds = 0;
        assert!(Gpu::needs(&p).unwrap_err().message.contains("--rounds ≥ 1"));
        let p = Params { bytes: Bytes(16 * MIB), copies_per_sample: 2, ..Params::preset(Preset::Quick) };
        assert!(Gpu::needs(&p).unwrap_err().message.contains("is under 64MiB a sample"), "{:?}", Gpu::needs(&p));
        Gpu::needs(&Params { copies_per_sample: 4, ..p }).unwrap();
        let many = Gpu::needs(&Params { copies_per_sample: 65, ..p }).unwrap_err();
        assert!(many.message.contains("--copies from 1 to 64"), "{}", many.message);
    }
}
