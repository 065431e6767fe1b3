//! What `memperf curves` found: one bandwidth–latency curve per read:write
//! mix (Mess's family), each from idle to saturation, with its knee, the
//! concurrency each point implies, what writes cost against reads, and the
//! run's own consistency checks.

use crate::about::About;
use crate::error::{Error, Result};
use crate::memory::Backing;
use crate::timing::Summary;
use crate::units::Nanos;
use serde::{Deserialize, Serialize};
use std::fmt;

/// What this experiment is: its name, `--help` line, question and title.
pub const ABOUT: About = About {
    name: "curves",
    summary: "Bandwidth–latency curves per read:write mix, from idle to saturation (Mess's family, in minutes)",
    title: "Bandwidth–latency curves",
    question: "How far does memory latency rise as bandwidth is used, for each read:write mix, where is each curve's knee, and what do writes cost against reads?",
    classic: "McCalpin: Bandwidth = Concurrency / Latency; Mess (BSC, MICRO 2024) draws one curve per read:write ratio, Intel MLC --loaded_latency one.",
};

/// A read:write mix: the ratio of the bytes the traffic threads' program
/// reads to those it writes, and whether its stores are non-temporal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Mix {
    pub reads: u32,
    pub writes: u32,
    pub non_temporal: bool,
}

/// The largest term of a ratio `--mixes` takes.
pub const MIX_TERM_MAX: u32 = 1000;

impl Mix {
    pub const fn new(reads: u32, writes: u32, non_temporal: bool) -> Mix {
        Mix { reads, writes, non_temporal }
    }

    /// `R:W`, `R:Wnt`: whole numbers up to [`MIX_TERM_MAX`], not both zero;
    /// `nt` only where the mix writes.
    pub fn parse(text: &str) -> Result<Mix> {
        let t = text.trim();
        let bad = |why: &str| Error::usage(format!("mix '{text}': {why}: give R:W such as 100:0, 3:1, 1:1 or 0:100nt"));
        if t.is_empty() {
            return Err(bad("empty"));
        }
        let (body, nt) = match t.strip_suffix("nt") {
            Some(b) => (b, true),
            None => (t, false),
        };
        let (r, w) = body.split_once(':').ok_or_else(|| bad("no ':' between reads and writes"))?;
        let term = |s: &str| -> Result<u32> {
            if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
                return Err(bad("each side is a whole number of parts"));
            }
            match s.parse::<u64>() {
                Ok(v) if v <= MIX_TERM_MAX as u64 => Ok(v as u32),
                _ => Err(bad(&format!("each side is at most {MIX_TERM_MAX}"))),
            }
        };
        let (reads, writes) = (term(r)?, term(w)?);
        if reads == 0 && writes == 0 {
            return Err(bad("0:0 moves nothing"));
        }
        if nt && writes == 0 {
            return Err(bad("nt makes stores non-temporal, and this mix stores nothing"));
        }
        Ok(Mix { reads, writes, non_temporal: nt })
    }

    /// The same mix in lowest terms (3:1 and 6:2 are one mix).
    pub fn reduced(self) -> Mix {
        fn gcd(a: u32, b: u32) -> u32 {
            if b == 0 {
                a
            } else {
                gcd(b, a % b)
            }
        }
        let g = gcd(self.reads, self.writes).max(1);
        Mix { reads: self.reads / g, writes: self.writes / g, ..self }
    }

    /// The share of the program's bytes that are written (0 to 1).
    pub fn write_share(self) -> f64 {
        self.writes as f64 / (self.reads + self.writes) as f64
    }

    /// The share of the bus's bytes that are reads, on the traffic model:
    /// an ordinary store first reads the line it writes (write-allocate,
    /// counted as a bus read); a non-temporal store does not.
    pub fn bus_read_share(self) -> f64 {
        let (r, w) = (self.reads as f64, self.writes as f64);
        let allocate = if self.non_temporal { 0.0 } else { w };
        (r + allocate) / (r + allocate + w)
    }
}

impl fmt::Display for Mix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}{}", self.reads, self.writes, if self.non_temporal { "nt" } else { "" })
    }
}

/// One point of a curve: a pause after each traffic block (or no traffic
/// at all), measured `repetitions` times.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(rename = "CurvesPoint")]
pub struct Point {
    /// Pause each traffic thread takes after each block; `None`: the idle
    /// point, no traffic.
    pub pause_ns: Option<u64>,
    /// The chaser's ns per dependent load, one per repetition …
    #[schemars(length(min = 1))]
    pub samples_latency_ns: Vec<f64>,
    pub latency_ns: Summary,
    /// … and the bytes per second the memory bus carried: the traffic
    /// threads' reads, writes and write-allocate reads, and the chaser's
    /// lines.
    #[schemars(length(min = 1))]
    pub samples_bytes_per_s: Vec<f64>,
    pub bytes_per_s: Summary,
    /// The traffic threads' program bytes per second (reads and writes as
    /// the kernels issue them; median).
    pub traffic_program_bytes_per_s: f64,
    /// What the memory controllers counted over the same runs (median),
    /// where their counters could be read (`Outcome::counted_traffic`).
    pub counted_bytes_per_s: Option<f64>,
    /// Little's law for one traffic core: its bus bytes per second × the
    /// chaser's latency / 64 B, as this experiment alone can judge it.
    /// `None` where it cannot be claimed (`not_claimed` says why); where
    /// the document's `tlb` did not find the chaser's huge pages walk-free,
    /// the report and the CSVs refuse it too.
    pub lines_in_flight_per_core: Option<f64>,
    pub not_claimed: Option<String>,
    /// Every chase ended where its order says, every read block summed to
    /// its closed form, every write block stored its count.
    pub valid: bool,
}

/// Where latency passes twice its idle level, interpolated along bandwidth.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Knee {
    /// Between the points (`below`) and (`above`), as (bytes/s, ns).
    Found { bytes_per_s: f64, latency_ns: f64, below: (f64, f64), above: (f64, f64) },
    /// Latency stayed under twice idle up to the highest bandwidth reached.
    NoneBelowSaturation { highest_latency_ratio: f64 },
}

/// A curve that folds back: bandwidth fell as the injection rate rose.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FoldBack {
    /// The longer pause, and the bandwidth it reached …
    pub pause_ns: u64,
    pub bytes_per_s: f64,
    /// … and the shorter one, which reached less.
    pub shorter_pause_ns: u64,
    pub shorter_bytes_per_s: f64,
}

/// One read:write mix from idle to saturation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Curve {
    pub mix: Mix,
    /// The traffic model's share of bus bytes that are reads (write-allocate
    /// counted as reads), beside the requested mix.
    pub bus_read_share: f64,
    /// The idle point first, then by increasing bandwidth.
    #[schemars(length(min = 1))]
    pub points: Vec<Point>,
    pub idle_latency_ns: Nanos,
    /// The highest-bandwidth point, and its latency.
    pub saturated_bytes_per_s: f64,
    pub saturated_latency_ns: Nanos,
    pub knee: Knee,
    pub fold_backs: Vec<FoldBack>,
    /// The widest gap between neighbouring points along bandwidth, as a
    /// fraction of the saturated bandwidth.
    pub largest_gap: f64,
    pub valid: bool,
}

/// What writes cost: a mix's saturated bandwidth and knee as fractions of
/// the all-reads mix's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct WritesCost {
    pub mix: Mix,
    pub saturated_fraction: f64,
    pub knee_fraction: Option<f64>,
}

/// A check of this run against a second measurement made in the same run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Consistency {
    /// What is compared, in words, and against what.
    pub what: String,
    /// The unit of both figures: `ns` or `B/s`.
    pub unit: String,
    pub curves: f64,
    pub reference: f64,
    /// curves / reference.
    pub ratio: f64,
    pub tolerance: f64,
    pub holds: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(rename = "CurvesOutcome")]
pub struct Outcome {
    /// CPU of the chaser, and of the traffic threads.
    pub chaser_cpu: usize,
    pub traffic_cpus: Vec<usize>,
    /// Why no curve was measured (one usable CPU), if none was.
    pub not_measured: Option<String>,
    /// The chase: one random cycle of lines over this many bytes …
    pub chase_bytes: u64,
    /// … on these pages (read back after the run).
    pub chase_backing: Backing,
    /// Each traffic thread's array (half read, half written), and the bytes
    /// it moves between two pauses.
    pub traffic_bytes: u64,
    pub block_bytes: u64,
    /// Instruction set of the traffic kernels.
    pub traffic_isa: String,
    /// The pause loop's calibrated cost of one iteration.
    pub pause_ns_per_iteration: f64,
    /// Bus traffic counted by memory-controller counters: the PMUs read,
    /// or why none was ("not measured — no uncore PMU").
    pub counted_traffic: String,
    pub curves: Vec<Curve>,
    pub writes_cost: Vec<WritesCost>,
    pub consistency: Vec<Consistency>,
    /// The traffic CPUs' plain read bandwidth in this run (whole slices of
    /// the simd kernel, the chase beside them), where the all-reads mix was
    /// measured, after the curves: each curve's saturation as a fraction of
    /// it moves less between runs than the GB/s where the host's own
    /// bandwidth moves (not where it moves within a run).
    pub host_read_bytes_per_s: Option<f64>,
    pub seed: u64,
    pub valid: bool,
}

impl super::Valid for Outcome {
    fn valid(&self) -> bool {
        self.valid
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mixes_parse_and_reduce() {
        assert_eq!(Mix::parse("100:0").unwrap(), Mix::new(100, 0, false));
        assert_eq!(Mix::parse("0:100nt").unwrap(), Mix::new(0, 100, true));
        assert_eq!(Mix::parse("6:2").unwrap().reduced(), Mix::new(3, 1, false));
        assert_eq!(Mix::new(0, 100, true).reduced(), Mix::new(0, 1, true));
        assert_eq!(Mix::new(1, 1, false).bus_read_share(), 2.0 / 3.0);
        assert_eq!(Mix::new(0, 1, true).bus_read_share(), 0.0);
        assert_eq!(Mix::parse("3:1nt").unwrap().to_string(), "3:1nt");
        for (bad, why) in [
            ("", "empty"),
            ("3", "no ':'"),
            ("3:1:1", "whole number"),
            ("-1:2", "whole number"),
            ("1.5:1", "whole number"),
            (":1", "whole number"),
            ("1:", "whole number"),
            ("0:0", "moves nothing"),
            ("100:0nt", "stores nothing"),
            ("1001:1", "at most 1000"),
            ("99999999999999999999:1", "at most 1000"),
            ("3:1 nt", "whole number"),
            ("r:w", "whole number"),
        ] {
            let e = Mix::parse(bad).unwrap_err();
            assert!(e.message.contains(why) && e.message.contains("R:W"), "{bad}: {}", e.message);
        }
    }
}
