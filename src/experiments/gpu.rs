//! `memperf gpu`: each GPU as its driver describes it, and the driver's
//! own copies over the host link and within the device (`gpu::copies`).
//! NVIDIA's driver is loaded at run time: without one, or without a
//! device, `memperf gpu` refuses in one line before anything runs, and
//! the suite's record says "not measured — no GPU" and the suite goes on.
//! The method: docs/methods/gpu.md.

use super::options::{self, positive_arg, size_arg, Request};
use super::{Bench, Experiment, Preset};
use crate::error::{Error, Result};
use crate::gpu::cuda::Cuda;
use crate::gpu::{copies, inventory, Driver};
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
    /// Samples of each path, the paths taking turns.
    pub rounds: usize,
    /// Whether a machine without a GPU is an error (the subcommand) or a
    /// line of the record (the suite).
    pub required: bool,
    /// The order of the paths' turns, and the checks' bytes.
    pub seed: u64,
}

impl Params {
    pub fn preset(preset: Preset) -> Params {
        let (mib, copies_per_sample, rounds) = match preset {
            Preset::Quick => (256, 2, 3),
            Preset::Default => (512, 4, 7),
            Preset::Full => (512, 8, 15),
        };
        Params { bytes: Bytes(mib * MIB), copies_per_sample, rounds, required: false, seed: 0x6770_7531 }
    }
}

pub struct Gpu;

impl Experiment for Gpu {
    const NAME: &'static str = "gpu";
    /// Weightless, and second in the suite: without a GPU it measures
    /// nothing, and the box has no part for a GPU's copies yet (they take
    /// their first look).
    const SHARE: f64 = 0.0;
    type Params = Params;
    type Outcome = Outcome;

    fn preset(preset: Preset, _: &crate::machine::Fingerprint) -> Params {
        Params::preset(preset)
    }

    /// The parameters in range; and, where a GPU is required, the driver
    /// and a device, else one line saying which is missing.
    fn needs(p: &Params) -> Result<super::Needs> {
        check(p)?;
        if p.required {
            open().map_err(|why| Error::unsatisfiable(format!("no GPU to measure: {why}"), FIX))?;
        }
        Ok(super::Needs { levels: false, pages_matter: false, ..Default::default() })
    }

    fn run(p: &Params, ctx: &Bench) -> Result<Outcome> {
        check(p)?;
        let cuda = match open() {
            Ok(c) => c,
            Err(why) if p.required => return Err(Error::unsatisfiable(format!("no GPU to measure: {why}"), FIX)),
            Err(why) => return Ok(not_measured(format!("not measured — no GPU: {why}"))),
        };
        measure(&cuda, p, ctx, Path::new("/sys/bus/pci/devices"))
    }
}

/// What to do where there is no GPU.
const FIX: &str = "run where an NVIDIA GPU and its driver are (nvidia-smi lists them)";

/// The driver, with a device at least; why not.
fn open() -> std::result::Result<Cuda, String> {
    let cuda = Cuda::open()?;
    match cuda.count() {
        Ok(0) => Err("the driver finds no device".into()),
        Ok(_) => Ok(cuda),
        Err(e) => Err(format!("the driver cannot count its devices ({e})")),
    }
}

fn check(p: &Params) -> Result<()> {
    if p.bytes.0 < MIB || p.copies_per_sample == 0 || p.rounds == 0 {
        return Err(Error::usage("gpu needs --size ≥ 1MiB, --copies ≥ 1 and --rounds ≥ 1"));
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
    Outcome { driver_version: None, devices: vec![], copies: vec![], not_measured: Some(why), valid: true }
}

/// Every device of `d`: described, then its copies measured, each device
/// current in turn; `pci_devices` is sysfs' folder of PCI devices.
pub fn measure(d: &dyn Driver, p: &Params, ctx: &Bench, pci_devices: &Path) -> Result<Outcome> {
    let failed = |e: crate::gpu::GpuError| Error::unsatisfiable(format!("the GPU driver refused: {e}"), FIX);
    let count = d.count().map_err(failed)?;
    let mut devices = Vec::new();
    let mut transfers = Vec::new();
    ctx.progress.start("gpu", (count * p.rounds) as u64);
    for dev in 0..count {
        ctx.check_interrupt()?;
        let bytes = p.bytes.0.min(d.total_memory(dev).map_err(failed)? / 4) as usize;
        let plan = copies::Plan { bytes, copies_per_sample: p.copies_per_sample, rounds: p.rounds, seed: p.seed };
        d.use_device(dev).map_err(failed)?;
        let measured = copies::measure(d, dev, &plan);
        d.release();
        transfers.extend(measured.map_err(failed)?);
        // After the copies: an idle GPU drops its link to a lower speed.
        devices.push(inventory(d, dev, pci_devices).map_err(failed)?);
        ctx.progress.advance(p.rounds as u64);
    }
    ctx.progress.finish();
    let valid = transfers.iter().all(|t| t.valid);
    Ok(Outcome { driver_version: d.version().ok(), devices, copies: transfers, not_measured: None, valid })
}

#[derive(Debug, Args)]
pub struct Options {
    /// Bytes of each copy (at most a quarter of the device's memory) [default: 512MiB; quick 256MiB]
    #[arg(long, value_name = "SIZE", allow_hyphen_values = true, value_parser = size_arg)]
    pub size: Option<Bytes>,
    /// Copies queued back to back in one timed sample [default: 4; quick 2, full 8]
    #[arg(long, value_name = "N", allow_hyphen_values = true, value_parser = positive_arg("--copies"))]
    pub copies: Option<usize>,
    /// Samples of each path, the paths taking turns [default: 7; quick 3, full 15]
    #[arg(long, value_name = "N", allow_hyphen_values = true, value_parser = positive_arg("--rounds"))]
    pub rounds: Option<usize>,
}

impl options::Options for Options {
    type Experiment = Gpu;
    /// A good value of every option, as the man page shows them.
    const EXAMPLES: &'static [&'static [&'static str]] = &[&["--size", "64MiB", "--copies", "2", "--rounds", "3"]];

    fn params(&self, asked: &Request) -> Result<Params> {
        let mut p = Params::preset(asked.preset);
        p.bytes = self.size.unwrap_or(p.bytes);
        p.copies_per_sample = self.copies.unwrap_or(p.copies_per_sample);
        p.rounds = self.rounds.unwrap_or(p.rounds);
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

    /// On a fake H200: one device described, its five paths measured and
    /// valid, the copies a quarter of its memory at most.
    #[test]
    fn a_fake_h200_is_described_and_its_copies_measured() {
        let (m, clock) = (crate::machine::collect(), crate::timing::MonotonicClock::new());
        let ctx = Bench::new(&m, &clock, &super::super::NoProgress);
        let p = Params { bytes: Bytes(MIB), copies_per_sample: 2, rounds: 2, required: true, seed: 1 };
        let o = measure(&FakeGpu::h200(), &p, &ctx, Path::new("/nonexistent")).unwrap();
        assert_eq!((o.driver_version, o.devices.len(), o.copies.len()), (Some(13000), 1, 5));
        assert!(o.valid && o.not_measured.is_none(), "{o:?}");
        assert!(o.copies.iter().all(|t| t.bytes == MIB && t.samples_bytes_per_s.len() == 2));
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
    }
}
