//! What one run of `curves` is asked: the mixes, the points per curve and
//! the gap allowed between them, the sizes, the windows; each preset's
//! values, and the checks every parameter passes before anything runs.

use crate::error::{Error, Result};
use crate::experiments::Preset;
use crate::experiments::chase_under_load::Load;
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
    /// Each half of the traffic array (read, written).
    pub traffic_bytes: Bytes,
    /// The probes' window, shorter than the points'.
    pub probe_s: f64,
    #[serde(flatten)]
    pub load: Load,
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
            traffic_bytes: size,
            probe_s: window_s / 2.0,
            load: Load::new(size, Bytes(65536), repetitions, window_s, 0x6375_7276),
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
    p.load.check(p.traffic_bytes)
}

