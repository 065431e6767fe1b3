//! What one run of `curves` is asked: the mixes, the points per curve and
//! the gap allowed between them, the sizes, the windows; each preset's
//! values, and the checks every parameter passes before anything runs.

use crate::error::{Error, Result};
use crate::experiments::Preset;
use crate::memory::PagePolicy;
use crate::model::outcome::curves::Mix;
use crate::units::{Bytes, MIB};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Params {
    /// The mixes, each a curve, in the order given.
    pub mixes: Vec<Mix>,
    /// Points per curve at least (idle and saturation included), and the
    /// widest gap allowed between neighbours (fraction of saturation).
    pub points: usize,
    pub max_gap: f64,
    /// The chase's cycle, and the traffic array (half read, half written).
    pub chase_bytes: Bytes,
    pub traffic_bytes: Bytes,
    /// Pages of the chase.
    pub pages: PagePolicy,
    /// Bytes a traffic thread moves between two pauses.
    pub block_bytes: Bytes,
    pub repetitions: usize,
    /// Each point: a warm-up, then the counted window; probes are shorter.
    pub warm_s: f64,
    pub window_s: f64,
    pub probe_s: f64,
    pub seed: u64,
}

/// The mixes of each preset: quick's four; full's every 10% from all reads
/// to all writes, 2:1, 3:1 and non-temporal all-writes.
pub fn preset_mixes(preset: Preset) -> Vec<Mix> {
    let quick = vec![Mix::new(100, 0, false), Mix::new(3, 1, false), Mix::new(1, 1, false), Mix::new(0, 100, true)];
    match preset {
        Preset::Quick => quick,
        Preset::Default => [quick, vec![Mix::new(0, 100, false)]].concat(),
        Preset::Full => (0..=10)
            .map(|k| Mix::new(100 - 10 * k, 10 * k, false))
            .chain([Mix::new(2, 1, false), Mix::new(3, 1, false), Mix::new(0, 100, true)])
            .collect(),
    }
}

impl Params {
    pub fn preset(preset: Preset, machine: &crate::machine::Fingerprint) -> Params {
        let (points, repetitions, window_s) = match preset {
            Preset::Quick => (8, 2, 0.01),
            Preset::Default => (12, 5, 0.04),
            Preset::Full => (16, 5, 0.05),
        };
        // The chase and the traffic array (two parts) live at once.
        let size = crate::experiments::budget::memory_size(machine, 4, Bytes(64 * MIB), 3);
        Params {
            mixes: preset_mixes(preset),
            points,
            max_gap: 0.15,
            chase_bytes: size,
            traffic_bytes: size,
            pages: PagePolicy::Thp,
            block_bytes: Bytes(65536),
            repetitions,
            warm_s: window_s / 4.0,
            window_s,
            probe_s: window_s / 2.0,
            seed: 0x6375_7276,
        }
    }

    /// Probes at most per curve.
    pub fn max_probes(&self) -> usize {
        3 * self.points
    }
}

/// Points a curve may ask for.
const POINTS: std::ops::RangeInclusive<usize> = 3..=64;

/// Every parameter within range, before the machine is probed.
pub fn check(p: &Params) -> Result<()> {
    if p.mixes.is_empty() {
        return Err(Error::usage("--mixes is empty: give at least one mix, such as 100:0"));
    }
    for (i, m) in p.mixes.iter().enumerate() {
        if let Some(o) = p.mixes[..i].iter().find(|o| o.reduced() == m.reduced()) {
            return Err(Error::usage(format!("--mixes {o} and {m} are one mix: give each ratio once")));
        }
    }
    if !POINTS.contains(&p.points) {
        return Err(Error::usage(format!(
            "--points {}: a curve takes {} to {} points (idle and saturation included)",
            p.points,
            POINTS.start(),
            POINTS.end()
        )));
    }
    if p.repetitions == 0 {
        return Err(Error::usage("--repetitions must be at least 1"));
    }
    if p.chase_bytes.0 < 64 * 1024 || p.traffic_bytes.0 < 64 * p.block_bytes.0 {
        return Err(Error::usage("--size must be at least 256KiB: use e.g. --size 256MiB"));
    }
    Ok(())
}

