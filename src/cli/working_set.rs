//! Options of `memperf working-set`.

use super::{list_or, positive_arg, u64_arg, CommonArgs, PresetArgs};
use crate::error::Result;
use crate::experiments::Preset;
use crate::machine::Fingerprint;
use clap::Args;

#[derive(Debug, Args)]
pub struct WorkingSetArgs {
    /// The three arrays together [default: 8× the last-level cache, at least 256MiB]
    #[arg(long, value_name = "SIZE", allow_hyphen_values = true, value_parser = super::size_arg)]
    pub size: Option<crate::units::Bytes>,
    /// Page policies, comma-separated, measured alternately [default: 4k, thp, and 2m/1g where their pools have the pages; 2m, 1g and shm with --reserve-hugepages]
    #[arg(long, value_name = "LIST", allow_hyphen_values = true, value_parser = super::offers::Offers(super::offers::pages))]
    pub pages: Option<String>,
    /// Samples per policy [default: 9]
    #[arg(long, value_name = "N", allow_hyphen_values = true, value_parser = positive_arg("--repetitions"))]
    pub repetitions: Option<usize>,
    /// Seed of the random row index [default: 0x20020415]
    #[arg(long, value_name = "N", allow_hyphen_values = true, value_parser = u64_arg("--seed"))]
    pub seed: Option<u64>,
    #[command(flatten)]
    pub preset: PresetArgs,
    #[command(flatten)]
    pub common: CommonArgs,
}

impl WorkingSetArgs {
    pub fn params(&self, machine: &Fingerprint) -> Result<crate::experiments::working_set::Params> {
        let mut p = crate::experiments::working_set::Params::preset(self.preset.preset(Preset::Default), machine);
        if let Some(s) = self.size {
            p.total_bytes = s;
        }
        if self.common.reserve_hugepages {
            // The pages will be reserved: the hugetlb policies join by
            // default (so the fix the pool warnings give does what it says).
            for pol in
                [crate::memory::PagePolicy::Huge2M, crate::memory::PagePolicy::Huge1G, crate::memory::PagePolicy::Shm]
            {
                if !p.pages.contains(&pol) {
                    p.pages.push(pol);
                }
            }
        }
        p.pages = list_or(&self.pages, p.pages, crate::memory::PagePolicy::parse)?;
        if !p.pages.contains(&crate::memory::PagePolicy::Small) {
            p.pages.insert(0, crate::memory::PagePolicy::Small);
        }
        if let Some(r) = self.repetitions {
            p.repetitions = r;
        }
        if let Some(s) = self.seed {
            p.seed = s;
        }
        Ok(p)
    }
}
