//! What `memperf loaded-latency` found: the latency one chasing CPU sees
//! while the other CPUs load the memory system at a rate set by an
//! injected delay, from full speed to idle; the concurrency each point
//! implies (Little's law), and where the curve bends.

use crate::about::About;
use crate::kernels::StreamShape;
use crate::memory::Backing;
use crate::timing::Summary;
use serde::{Deserialize, Serialize};

/// What this experiment is: its name, `--help` line, question and title.
pub const ABOUT: About = About {
    name: "loaded-latency",
    summary: "Latency as the memory system fills: one CPU chases while the others load memory at a swept rate (MLC's loaded latency)",
    title: "Latency under load",
    question: "How does memory latency grow as the other CPUs fill the memory system, at what bandwidth does the curve bend, and how many lines are in flight at each point?",
    classic: "McCalpin: Bandwidth = Concurrency / Latency, and latency rises as the queues fill; Intel MLC --loaded_latency draws this curve.",
};

/// One point of the curve: a delay (or no loaders at all), measured
/// `repetitions` times.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(rename = "LoadedLatencyPoint")]
pub struct Point {
    /// Delay each loader waits after each block; `None`: the idle point,
    /// no loader running.
    pub delay_ns: Option<u64>,
    /// The chaser's ns per dependent load, one per repetition …
    #[schemars(length(min = 1), extend("items" = {"type": "number", "exclusiveMinimum": 0}))]
    pub samples_latency_ns: Vec<f64>,
    pub latency_ns: Summary,
    /// … the bytes per second the loaders moved together (their program's
    /// bytes, the kernel's read and written bytes) …
    pub samples_loader_bytes_per_s: Vec<f64>,
    pub loader_bytes_per_s: Summary,
    /// … the same on the bus: with the write-allocate read of each line an
    /// ordinary store writes (the loader kernel's traffic model; equal for
    /// reads and non-temporal stores) …
    pub loader_bus_bytes_per_s: f64,
    /// … and the lines the chaser itself fetched (64 B per load).
    pub chaser_bytes_per_s: f64,
    /// What the memory system delivered: the loaders' bus bytes and the
    /// chaser's (medians).
    #[schemars(extend("exclusiveMinimum" = 0))]
    pub total_bytes_per_s: f64,
    /// Every chase ended where its order says, every read loader's sum was
    /// its blocks' sum.
    pub valid: bool,
}

/// Where the latency leaves the idle level.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Bend {
    /// The highest-bandwidth point whose latency is still within
    /// `tolerance` of idle; the next point up is beyond it.
    Found { bytes_per_s: f64, latency_ns: f64, fraction_of_peak: f64, tolerance: f64 },
    /// Latency stayed within `tolerance` of idle up to the highest
    /// bandwidth reached: the loaders did not saturate memory.
    NoBend { tolerance: f64 },
    /// Too few points to say.
    TooFewPoints,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(rename = "LoadedLatencyOutcome")]
pub struct Outcome {
    /// CPU of the chaser, and of the loaders.
    pub chaser_cpu: usize,
    pub loader_cpus: Vec<usize>,
    /// What the loaders run.
    pub loader_kernel: StreamShape,
    pub loader_isa: String,
    /// Bytes of each loader array a block covers, between two delays
    /// (a kernel reading or writing several arrays moves that of each).
    pub block_bytes: u64,
    /// What one turn of the pause loop took, in ns: a delay is run as
    /// that many turns (absent from documents before the pause).
    #[serde(default)]
    pub pause_ns_per_iteration: Option<f64>,
    /// The chase: one random cycle of lines over this many bytes …
    pub chase_bytes: u64,
    /// … on these pages (read back after the run).
    pub chase_backing: Backing,
    /// Every point, idle first, then by increasing delay.
    #[schemars(length(min = 1))]
    pub points: Vec<Point>,
    /// The idle point (no loaders) and the saturated one (no delay).
    pub idle_latency_ns: crate::units::Nanos,
    pub saturated_latency_ns: Option<crate::units::Nanos>,
    pub saturated_bytes_per_s: Option<f64>,
    pub bend: Bend,
    /// Seed of the chase order and of the measurement order.
    pub seed: u64,
    pub valid: bool,
}

impl super::Valid for Outcome {
    fn valid(&self) -> bool {
        self.valid
    }
}
