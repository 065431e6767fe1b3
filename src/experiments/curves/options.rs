//! Options of `memperf curves`, and the checks every parameter passes
//! before anything runs.

use super::params::{check, Params};
use super::Curves;
use crate::error::Result;
use crate::experiments::options::{self, list_free, millis_arg, one, positive_arg, size_arg, Request, List};
use crate::experiments::options::offers;
use crate::memory::PagePolicy;
use crate::model::outcome::curves::Mix;
use crate::units::Bytes;
use clap::Args;

#[derive(Debug, Args)]
pub struct Options {
    /// Read:write mixes, one curve each: ratios of the bytes the traffic reads to those it writes, `nt` for non-temporal stores (100:0,3:1,1:1,0:100nt) [default: quick 100:0,3:1,1:1,0:100nt; full every 10% and 2:1, 3:1, 0:100nt]
    #[arg(long, value_name = "LIST", allow_hyphen_values = true, value_parser = list_free(Mix::parse))]
    pub mixes: Option<List<Mix>>,
    /// Points per curve at least, idle and saturation included [default: quick 8, full 16]
    #[arg(long, value_name = "N", allow_hyphen_values = true, value_parser = positive_arg("--points"))]
    pub points: Option<usize>,
    /// Size of the chase, and of each half of the traffic array [default: max(64MiB, 4 × last-level cache)]
    #[arg(long, value_name = "SIZE", allow_hyphen_values = true, value_parser = size_arg)]
    pub size: Option<Bytes>,
    /// Pages of the chase (4k adds page walks to every load) [default: thp]
    #[arg(long, value_name = "POLICY", allow_hyphen_values = true, value_parser = one(PagePolicy::parse, offers::pages))]
    pub pages: Option<PagePolicy>,
    /// Counted window of each point in ms, after a warm-up of a quarter of it [default: quick 10, full 50]
    #[arg(long, value_name = "MS", allow_hyphen_values = true, value_parser = millis_arg(1, 10_000))]
    pub window: Option<u64>,
    /// Times each point is measured (every point once per repetition, in a new shuffled order each) [default: quick 2, full 5]
    #[arg(long, value_name = "N", allow_hyphen_values = true, value_parser = positive_arg("--repetitions"))]
    pub repetitions: Option<usize>,
}

impl options::Options for Options {
    type Experiment = Curves;
    /// A good value of every option, as the man page shows them.
    const EXAMPLES: &'static [&'static [&'static str]] = &[
        &["--mixes", "100:0,1:1,0:100nt", "--points", "8", "--size", "64MiB"],
        &["--pages", "4k", "--window", "10", "--repetitions", "2"],
    ];

    fn params(&self, asked: &Request) -> Result<Params> {
        let mut p = Params::preset(asked.preset, asked.machine);
        p.mixes = List::or(&self.mixes, p.mixes);
        if let Some(n) = self.points {
            p.points = n;
        }
        if let Some(s) = self.size {
            p.chase_bytes = s;
            p.traffic_bytes = s;
        }
        if let Some(pol) = self.pages {
            p.pages = pol;
        }
        if let Some(ms) = self.window {
            p.window_s = ms as f64 * 1e-3;
            p.warm_s = p.window_s / 4.0;
            p.probe_s = p.window_s / 2.0;
        }
        if let Some(r) = self.repetitions {
            p.repetitions = r;
        }
        check(&p)?;
        check_memory(&p, asked.machine)?;
        Ok(p)
    }
}

/// The chase and the two halves of the traffic array must fit in memory.
fn check_memory(p: &Params, machine: &crate::machine::Fingerprint) -> Result<()> {
    let need = Bytes(p.chase_bytes.0.saturating_add(p.traffic_bytes.0.saturating_mul(2)));
    let avail = machine.memory_available_bytes;
    crate::memory::check_fits(
        need,
        avail,
        &format!("--size {} (the chase and the two halves of the traffic array)", p.chase_bytes),
        format!("use --size {} or less", Bytes(avail.map_or(0, |a| a.0) / 3 / 2)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiments::Preset;

    fn params() -> Params {
        Params::preset(Preset::Quick, &crate::machine::collect())
    }

    #[test]
    fn one_mix_in_two_spellings_is_refused() {
        let mut p = params();
        p.mixes = vec![Mix::new(3, 1, false), Mix::new(6, 2, false)];
        assert!(check(&p).unwrap_err().message.contains("--mixes 3:1 and 6:2 are one mix"));
        p.mixes = vec![Mix::new(1, 1, false), Mix::new(1, 1, true)];
        check(&p).unwrap();
    }

    #[test]
    fn points_out_of_range_are_refused() {
        let mut p = params();
        for n in [2, 65] {
            p.points = n;
            assert!(check(&p).unwrap_err().message.contains(&format!("--points {n}")));
        }
    }
}
