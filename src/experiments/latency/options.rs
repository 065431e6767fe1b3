//! Options of `memperf latency`.

use super::{size_sweep, Latency, Params};
use crate::error::{Error, Result};
use crate::experiments::options::{self, list, offers, positive, positive_arg, u64_arg, Request, List};
use crate::memory::PagePolicy;
use crate::units::{parse_list, parse_nonzero_size, parse_sweep, Bytes};
use clap::Args;

#[derive(Debug, Args)]
pub struct Options {
    /// Page policies, comma-separated, measured alternately [default: 4k,thp]
    #[arg(long, value_name = "LIST", allow_hyphen_values = true, value_parser = list(PagePolicy::parse, offers::pages))]
    pub pages: Option<List<PagePolicy>>,
    /// Working sets: a list (4KiB,1MiB) or START:END[:POINTS_PER_OCTAVE] [default: 4KiB:1GiB]
    #[arg(long, value_name = "SIZES", allow_hyphen_values = true, value_parser = |t: &str| parse_sizes(t).map(List).map_err(|e| e.message))]
    pub sizes: Option<List<Bytes>>,
    /// Independent chases in flight for the parallelism sweep: a list or START:END (1..16)
    #[arg(long, value_name = "LIST", allow_hyphen_values = true, value_parser = |t: &str| parse_chains(t).map(List).map_err(|e| e.message))]
    pub chains: Option<List<usize>>,
    /// Skip the page-local (TLB-friendly) variant.
    #[arg(long)]
    pub no_page_local: bool,
    /// Seed of the random chase order.
    #[arg(long, value_name = "N", allow_hyphen_values = true, value_parser = u64_arg("--seed"))]
    pub seed: Option<u64>,
    /// Samples per point (each after a warm-up traversal); at the largest working set, where the page policies are compared, the first look's, which goes on, doubling, until it is resolved (40 at most) [default: 10 there, 6 elsewhere]
    #[arg(long, value_name = "N", allow_hyphen_values = true, value_parser = positive_arg("--repetitions"))]
    pub repetitions: Option<usize>,
    /// Go on sampling (up to 60 samples) until every point's median is known to ± PCT, 95% interval [default: 3%]; `none`: no precision target
    #[arg(long, value_name = "PCT", allow_hyphen_values = true, value_parser = precision_arg)]
    pub precision: Option<Precision>,
    /// Repetitions measured on each fresh mapping of a working set (where pages land is a level of its own: repetitions sharing a mapping count as one) [default: 1]
    #[arg(long, value_name = "N", allow_hyphen_values = true, value_parser = positive_arg("--per-mapping"))]
    pub per_mapping: Option<usize>,
}

/// `--precision`: a fraction, or `none` (exactly `--repetitions`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Precision {
    None,
    Within(f64),
}

fn precision_arg(text: &str) -> std::result::Result<Precision, String> {
    match text.trim() {
        "none" => Ok(Precision::None),
        t => crate::units::parse_percent("--precision", t).map(Precision::Within).map_err(|e| e.message),
    }
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

/// `1,2,4` or `1:8` (every count between): 1 to 16 chases.
pub fn parse_chains(text: &str) -> Result<Vec<usize>> {
    let chains: Vec<usize> = if text.contains(':') {
        crate::units::named("--chains", parse_sweep(text))?.values().into_iter().map(|v| v as usize).collect()
    } else {
        parse_list(text, |t| {
            t.trim().parse::<usize>().map_err(|_| Error::usage(format!("--chains '{t}' is not a number")))
        })?
    };
    super::check_chains(&chains)?;
    Ok(chains)
}

impl options::Options for Options {
    type Experiment = Latency;
    /// A good value of every option, as the man page shows them.
    const EXAMPLES: &'static [&'static [&'static str]] = &[
        &["--pages", "4k,thp", "--sizes", "4KiB:1MiB:2", "--chains", "1:4", "--seed", "0x7"],
        &["--repetitions", "3", "--precision", "none", "--no-page-local", "--per-mapping", "1"],
    ];

    fn params(&self, asked: &Request) -> Result<Params> {
        let mut p = Params::preset(asked.preset, asked.machine);
        p.pages = List::or(&self.pages, p.pages);
        p.sizes_bytes = List::or(&self.sizes, p.sizes_bytes);
        p.chains = List::or(&self.chains, p.chains);
        p.page_local = !self.no_page_local;
        if let Some(s) = self.seed {
            p.seed = s;
        }
        if let Some(r) = self.repetitions {
            p.repetitions = r;
            p.point_repetitions = Some(r);
        }
        if let Some(a) = self.per_mapping {
            p.per_mapping = a;
        }
        match self.precision {
            Some(Precision::None) => p.precision = None,
            Some(Precision::Within(f)) => {
                p.precision = Some(f);
                p.max_repetitions = 60;
            }
            None => {}
        }
        let max = p.sizes_bytes.iter().max().copied().unwrap_or_default();
        let arrays = p.pages.iter().filter(|x| !x.uses_hugetlb_pool()).count() as u64;
        crate::memory::check_fits(
            Bytes(max.0.saturating_mul(arrays)),
            asked.machine.memory_available_bytes,
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
    fn chains_are_one_to_sixteen() {
        assert_eq!(parse_chains("1:4").unwrap(), vec![1, 2, 3, 4]);
        assert_eq!(parse_chains("1,8,16").unwrap(), vec![1, 8, 16]);
        assert!(parse_chains("0").unwrap_err().message.contains("out of range"));
        assert!(parse_chains("1,1").unwrap_err().message.contains("appears twice"));
        assert!(parse_chains("x").unwrap_err().message.contains("not a number"));
    }

    #[test]
    fn precision_is_a_percentage_or_none() {
        assert_eq!(precision_arg("2%").unwrap(), Precision::Within(0.02));
        assert_eq!(precision_arg(" 5 ").unwrap(), Precision::Within(0.05));
        assert_eq!(precision_arg("none").unwrap(), Precision::None);
        for bad in ["0", "100%", "-1", "x", ""] {
            let e = precision_arg(bad).unwrap_err();
            assert!(e.contains("e.g. --precision 2%"), "{bad}: {e}");
        }
    }
}
