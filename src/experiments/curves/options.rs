//! Options of `memperf curves`, and the checks every parameter passes
//! before anything runs.

use super::params::{check, Params};
use super::Curves;
use crate::error::Result;
use crate::experiments::chase_under_load::check_memory;
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
        let l = &mut p.load;
        (l.chase_bytes, p.traffic_bytes) = self.size.map_or((l.chase_bytes, p.traffic_bytes), |s| (s, s));
        l.pages = self.pages.unwrap_or(l.pages);
        if let Some(ms) = self.window {
            (l.window_s, l.warm_s, p.probe_s) = (ms as f64 * 1e-3, ms as f64 * 0.25e-3, ms as f64 * 0.5e-3);
        }
        l.repetitions = self.repetitions.unwrap_or(l.repetitions);
        check(&p)?;
        check_memory(p.load.chase_bytes, 2, asked.machine, "the chase and the two halves of the traffic array")?;
        Ok(p)
    }
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
