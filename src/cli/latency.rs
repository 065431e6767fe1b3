//! Options of `memperf latency`.

use super::{list_or, positive, positive_arg, u64_arg, CommonArgs, PresetArgs};
use crate::error::{Error, Result};
use crate::experiments::latency::{size_sweep, Params};
use crate::experiments::Preset;
use crate::machine::Fingerprint;
use crate::memory::PagePolicy;
use crate::units::{parse_list, parse_nonzero_size, parse_sweep, Bytes};
use clap::Args;

#[derive(Debug, Args)]
pub struct LatencyArgs {
    /// Page policies, comma-separated, measured alternately [default: 4k,thp]
    #[arg(long, value_name = "LIST", allow_hyphen_values = true, value_parser = super::offers::Offers(super::offers::pages))]
    pub pages: Option<String>,
    /// Working sets: a list (4KiB,1MiB) or START:END[:POINTS_PER_OCTAVE] [default: 4KiB:1GiB]
    #[arg(long, value_name = "SIZES", allow_hyphen_values = true)]
    pub sizes: Option<String>,
    /// Independent chases in flight for the parallelism sweep: a list or START:END (1..16)
    #[arg(long, value_name = "LIST", allow_hyphen_values = true)]
    pub chains: Option<String>,
    /// Skip the page-local (TLB-friendly) variant.
    #[arg(long)]
    pub no_page_local: bool,
    /// Seed of the random chase order.
    #[arg(long, value_name = "N", allow_hyphen_values = true, value_parser = u64_arg("--seed"))]
    pub seed: Option<u64>,
    /// Samples per point, at least (each after a warm-up traversal) [default: 6]
    #[arg(long, value_name = "N", allow_hyphen_values = true, value_parser = positive_arg("--repetitions"))]
    pub repetitions: Option<usize>,
    /// Go on sampling (up to 60 samples) until every point's median is known to ± PCT, 95% interval [default: 3%]; `none`: exactly --repetitions
    #[arg(long, value_name = "PCT", allow_hyphen_values = true)]
    pub precision: Option<String>,
    #[command(flatten)]
    pub preset: PresetArgs,
    #[command(flatten)]
    pub common: CommonArgs,
}

/// `4KiB:1GiB`, `4KiB:1GiB:2` or `4KiB,64KiB,1GiB`.
pub fn parse_sizes(text: &str) -> Result<Vec<Bytes>> {
    if text.contains(':') {
        let parts: Vec<&str> = text.split(':').collect();
        let (min, max) = match parts.as_slice() {
            [a, b] | [a, b, _] => (parse_nonzero_size(a)?, parse_nonzero_size(b)?),
            _ => return Err(Error::usage(format!("malformed --sizes '{text}': use START:END[:POINTS_PER_OCTAVE]"))),
        };
        let per_octave = match parts.get(2) {
            Some(n) => match positive("points per octave", n)? {
                k @ 1..=16 => k as u32,
                k => return Err(Error::usage(format!("--sizes: {k} points per octave is out of range: use 1 to 16"))),
            },
            None => 1,
        };
        if max < min {
            return Err(Error::usage(format!("malformed --sizes '{text}': END is below START")));
        }
        return Ok(size_sweep(min, max, per_octave));
    }
    parse_list(text, parse_nonzero_size)
}

impl LatencyArgs {
    pub fn params(&self, machine: &Fingerprint) -> Result<Params> {
        let mut p = Params::preset(self.preset.preset(Preset::Default), machine);
        p.pages = list_or(&self.pages, p.pages, PagePolicy::parse)?;
        if let Some(s) = &self.sizes {
            p.sizes_bytes = parse_sizes(s)?;
        }
        if let Some(c) = &self.chains {
            p.chains = if c.contains(':') {
                crate::units::named("--chains", parse_sweep(c))?.values().into_iter().map(|v| v as usize).collect()
            } else {
                parse_list(c, |t| {
                    t.trim().parse::<usize>().map_err(|_| Error::usage(format!("--chains '{t}' is not a number")))
                })?
            };
            if let Some(k) = p.chains.iter().find(|&&k| !(1..=16).contains(&k)) {
                return Err(Error::usage(format!("--chains {k} is out of range: use 1 to 16 chains")));
            }
        }
        p.page_local = !self.no_page_local;
        if let Some(s) = self.seed {
            p.seed = s;
        }
        if let Some(r) = self.repetitions {
            p.repetitions = r;
        }
        match self.precision.as_deref().map(str::trim) {
            Some("none") => p.precision = None,
            Some(t) => {
                p.precision = Some(crate::units::parse_percent("--precision", t)?);
                p.max_repetitions = 60;
            }
            None => {}
        }
        let max = p.sizes_bytes.iter().max().copied().unwrap_or_default();
        let arrays = p.pages.iter().filter(|x| !x.uses_hugetlb_pool()).count() as u64;
        crate::memory::check_fits(
            Bytes(max.0.saturating_mul(arrays)),
            machine.memory_available_bytes,
            &format!("working sets up to {max} on {arrays} policies"),
            "use smaller --sizes or fewer --pages",
        )?;
        Ok(p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_as_sweeps_or_lists() {
        assert_eq!(parse_sizes("4KiB:16KiB").unwrap(), vec![Bytes(4096), Bytes(8192), Bytes(16384)]);
        assert_eq!(parse_sizes("4KiB,1MiB").unwrap(), vec![Bytes(4096), Bytes(1 << 20)]);
        assert!(parse_sizes("1MiB:4KiB").is_err());
        assert!(parse_sizes("0:4KiB").is_err());
        assert!(parse_sizes("4KiB:1MiB:0").is_err());
        assert!(parse_sizes("x").is_err());
        // These hung, or truncated to u32, before.
        assert!(parse_sizes("4KiB:1GiB:4294967295").unwrap_err().message.contains("out of range"));
        assert!(parse_sizes("4KiB:16KiB:4294967297").is_err());
    }

    #[test]
    fn precision_is_a_percentage() {
        assert_eq!(crate::units::parse_percent("--precision", "2%").unwrap(), 0.02);
        assert_eq!(crate::units::parse_percent("--precision", " 5 ").unwrap(), 0.05);
        for bad in ["0", "100%", "-1", "x", ""] {
            let e = crate::units::parse_percent("--precision", bad).unwrap_err();
            assert!(e.message.contains("e.g. --precision 2%"), "{bad}: {}", e.message);
        }
    }
}
