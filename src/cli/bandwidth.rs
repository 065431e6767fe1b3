//! Options of `memperf bandwidth`.

use super::{list_or, positive_arg, CommonArgs, PresetArgs};
use crate::error::Result;
use crate::experiments::bandwidth::Params;
use crate::experiments::Preset;
use crate::kernels::{Hint, StreamShape};
use crate::machine::Fingerprint;
use crate::memory::PagePolicy;
use crate::units::{parse_sweep, Bytes};
use clap::Args;

#[derive(Debug, Args)]
pub struct BandwidthArgs {
    /// Loop shapes, comma-separated: read (sum1, sum4, simd, simd-prefetch), write, and read:write mixes (mix-R:W) [default: all]
    #[arg(long, value_name = "LIST", allow_hyphen_values = true, value_parser = super::offers::Offers(super::offers::kernels))]
    pub kernel: Option<String>,
    /// Page policies, comma-separated [default: 4k]
    #[arg(long, value_name = "LIST", allow_hyphen_values = true, value_parser = super::offers::Offers(super::offers::pages))]
    pub pages: Option<String>,
    /// Thread counts, pinned one per CPU; `all` for every CPU [default: 1,all]
    #[arg(long, value_name = "LIST", allow_hyphen_values = true, value_delimiter = ',', value_parser = super::thread_arg)]
    pub threads: Option<Vec<usize>>,
    /// Size of each array (write kernels use four: A, B, C, D) [default: max(1GiB, 8 × last-level cache)]
    #[arg(long, value_name = "SIZE", allow_hyphen_values = true, value_parser = super::size_arg)]
    pub size: Option<crate::units::Bytes>,
    /// Prefetch distances in 8-byte elements, START:END:STEP [default: 0:1024:32]
    #[arg(long, value_name = "RANGE", allow_hyphen_values = true)]
    pub distance: Option<String>,
    /// Prefetch hints, comma-separated, or all [default: t0,nta]
    #[arg(long, value_name = "LIST", allow_hyphen_values = true, value_parser = super::offers::Offers(super::offers::hints_or_all))]
    pub hint: Option<String>,
    /// Samples per variant.
    #[arg(long, value_name = "N", allow_hyphen_values = true, value_parser = positive_arg("--repetitions"))]
    pub repetitions: Option<usize>,
    #[command(flatten)]
    pub preset: PresetArgs,
    #[command(flatten)]
    pub common: CommonArgs,
}

impl BandwidthArgs {
    pub fn params(&self, machine: &Fingerprint) -> Result<Params> {
        let mut p = Params::preset(self.preset.preset(Preset::Default), machine);
        p.kernels = list_or(&self.kernel, p.kernels, StreamShape::parse)?;
        p.pages = list_or(&self.pages, p.pages, PagePolicy::parse)?;
        p.threads = super::thread_counts(&self.threads, p.threads)?;
        if let Some(s) = self.size {
            p.size_bytes = s;
        }
        if let Some(d) = &self.distance {
            p.distance_elements = crate::units::named("--distance", parse_sweep(d))?;
        }
        p.hints = match self.hint.as_deref() {
            Some("all") => Hint::ALL.to_vec(),
            _ => list_or(&self.hint, p.hints, Hint::parse)?,
        };
        if let Some(r) = self.repetitions {
            p.repetitions = r;
        }
        check_memory(&p, machine)?;
        Ok(p)
    }
}

/// The arrays of all base-page policies must fit in available memory: one
/// per policy, and four more when a write kernel is asked for.
fn check_memory(p: &Params, machine: &Fingerprint) -> Result<()> {
    let per_policy = if p.kernels.iter().any(|k| k.writes()) { 5 } else { 1 };
    let arrays = per_policy * p.pages.iter().filter(|pol| !pol.uses_hugetlb_pool()).count() as u64;
    let avail = machine.memory_available_bytes;
    crate::memory::check_fits(
        Bytes(p.size_bytes.0.saturating_mul(arrays)),
        avail,
        &format!("--size {} × {arrays} array(s)", p.size_bytes),
        format!("use --size {} or less", Bytes(avail.map_or(0, |a| a.0) / arrays.max(1) / 2)),
    )
}
