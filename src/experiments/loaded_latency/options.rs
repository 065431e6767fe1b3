//! Options of `memperf loaded-latency`.

use super::{loader_kernel_ok, LoadedLatency, Params};
use crate::error::{Error, Result};
use crate::experiments::options::{self, list_free, offers, one, positive_arg, size_arg, Request, List};
use crate::kernels::StreamShape;
use crate::machine::Fingerprint;
use crate::memory::PagePolicy;
use crate::units::Bytes;
use clap::Args;

#[derive(Debug, Args)]
pub struct Options {
    /// What the loading CPUs run: simd (read) or a write kernel [default: simd]
    #[arg(long, value_name = "KERNEL", allow_hyphen_values = true, value_parser = one(loader_arg, offers::loaders))]
    pub loader: Option<StreamShape>,
    /// Delays each loader waits after each block, swept: a list with units (0,100ns,1us,20us) [default: 0 to 51.2us, doubling]
    #[arg(long, value_name = "LIST", allow_hyphen_values = true, value_parser = list_free(|t| parse_ns("--delays", t)))]
    pub delays: Option<List<u64>>,
    /// Bytes a loader moves between two delays [default: 16KiB]
    #[arg(long, value_name = "SIZE", allow_hyphen_values = true, value_parser = size_arg)]
    pub block: Option<Bytes>,
    /// Size of the chase, and of each loader array [default: max(64MiB, 8 × last-level cache)]
    #[arg(long, value_name = "SIZE", allow_hyphen_values = true, value_parser = size_arg)]
    pub size: Option<Bytes>,
    /// Pages of the chase (4k adds page walks to every load) [default: thp]
    #[arg(long, value_name = "POLICY", allow_hyphen_values = true, value_parser = one(PagePolicy::parse, offers::pages))]
    pub pages: Option<PagePolicy>,
    /// Counted window of each point, after a warm-up of a quarter of it [default: 100ms]
    #[arg(long, value_name = "TIME", allow_hyphen_values = true, value_parser = |t: &str| parse_ns("--window", t).map_err(|e| e.message))]
    pub window: Option<u64>,
    /// Times each point is measured (every point once per repetition, in a new shuffled order each) [default: 5]
    #[arg(long, value_name = "N", allow_hyphen_values = true, value_parser = positive_arg("--repetitions"))]
    pub repetitions: Option<usize>,
}

/// clap's parser of `--loader`: simd or a write kernel.
fn loader_arg(text: &str) -> Result<StreamShape> {
    match StreamShape::parse(text)? {
        k if loader_kernel_ok(k) => Ok(k),
        _ => Err(Error::usage(
            "a loader runs simd or a write kernel (store, store-nt, copy, copy-nt, triad, update, mix-3:1)",
        )),
    }
}

/// `250`, `250ns`, `1.5us`, `20µs`, `100ms`, `1s` in nanoseconds.
pub fn parse_ns(name: &str, text: &str) -> Result<u64> {
    let t = text.trim();
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let scale = match unit.trim() {
        "" | "ns" => 1.0,
        "us" | "µs" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        _ => f64::NAN,
    };
    match num.parse::<f64>() {
        Ok(v) if scale.is_finite() && v >= 0.0 && v * scale < 1e12 => Ok((v * scale).round() as u64),
        _ => Err(Error::usage(format!("{name} '{text}': give a duration such as 500ns, 20us or 100ms"))),
    }
}

impl options::Options for Options {
    type Experiment = LoadedLatency;
    /// A good value of every option, as the man page shows them.
    const EXAMPLES: &'static [&'static [&'static str]] = &[
        &["--loader", "triad", "--delays", "0,1us", "--block", "16KiB", "--size", "1MiB"],
        &["--pages", "4k", "--window", "10ms", "--repetitions", "2"],
    ];

    fn params(&self, asked: &Request) -> Result<Params> {
        let mut p = Params::preset(asked.preset, asked.machine);
        if let Some(k) = self.loader {
            p.loader_kernel = k;
        }
        p.delays_ns = List::or(&self.delays, p.delays_ns);
        if let Some(b) = self.block {
            p.block_bytes = b;
        }
        if let Some(s) = self.size {
            p.chase_bytes = s;
            p.loader_bytes = p.chase_bytes;
        }
        if let Some(pol) = self.pages {
            p.pages = pol;
        }
        if let Some(w) = self.window {
            p.window_s = w as f64 * 1e-9;
            p.warm_s = p.window_s / 4.0;
        }
        if let Some(r) = self.repetitions {
            p.repetitions = r;
        }
        check_memory(&p, asked.machine)?;
        Ok(p)
    }
}

/// The chase and the loader arrays must fit in available memory.
fn check_memory(p: &Params, machine: &Fingerprint) -> Result<()> {
    let parts = if p.loader_kernel.writes() { 4 } else { 1 };
    let need = Bytes(p.chase_bytes.0.saturating_add(p.loader_bytes.0.saturating_mul(parts)));
    let avail = machine.memory_available_bytes;
    crate::memory::check_fits(
        need,
        avail,
        &format!("--size {} (the chase and {parts} loader array(s))", p.chase_bytes),
        format!("use --size {} or less", Bytes(avail.map_or(0, |a| a.0) / (parts + 1) / 2)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_parse_with_their_units() {
        assert_eq!(parse_ns("--delays", "250").unwrap(), 250);
        assert_eq!(parse_ns("--delays", "1.5us").unwrap(), 1500);
        assert_eq!(parse_ns("--window", "100ms").unwrap(), 100_000_000);
        assert_eq!(parse_ns("--window", "2s").unwrap(), 2_000_000_000);
        for bad in ["", "-1", "5 parsecs", "1e3", "ms"] {
            let e = parse_ns("--delays", bad).unwrap_err();
            assert!(e.message.contains("500ns, 20us or 100ms"), "{bad}: {}", e.message);
        }
    }

    #[test]
    fn a_loader_is_simd_or_a_write_kernel() {
        assert_eq!(loader_arg("simd").unwrap(), StreamShape::parse("simd").unwrap());
        assert!(loader_arg("triad").is_ok());
        assert!(loader_arg("sum1").unwrap_err().message.contains("a loader runs simd or a write kernel"));
        assert!(loader_arg("bogus").is_err());
    }
}
