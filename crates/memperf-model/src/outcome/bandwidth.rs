//! What `memperf bandwidth` found: every variant's raw samples, the
//! headline figures, prefetch-distance plateaus and the effect of prefetch.

use crate::about::About;
use crate::analysis;
use crate::kernels::{Hint, StreamShape, Traffic};
use crate::memory::{Backing, PagePolicy};
use crate::timing::Summary;
use crate::timing::{Call, Ratio};
use crate::units::Bytes;
use serde::{Deserialize, Serialize};

/// What this experiment is: its name, `--help` line, question and title.
pub const ABOUT: About = About {
    name: "bandwidth",
    summary: "Read bandwidth per loop shape, single- and all-thread, with a software-prefetch distance sweep",
    title: "Read bandwidth and software prefetch",
    question: "How fast can one core (and all cores) stream-read memory, and how much does software prefetch at distance D help? Which loop shape gets there?",
    classic: "McCalpin 2010: single-thread Opteron read rose from ~4.5 to ~6.08 GB/s with prefetch 96+ elements ahead; large pages +3%.",
};

/// What is measured in one sample.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Variant {
    pub pages: PagePolicy,
    pub threads: usize,
    pub kernel: StreamShape,
    pub hint: Option<Hint>,
    pub distance_elements: Option<u64>,
}

impl Variant {
    pub fn label(&self) -> String {
        match (self.hint, self.distance_elements) {
            (Some(h), Some(d)) => format!("{}/{h}/D={d}", self.kernel),
            _ => self.kernel.to_string(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(rename = "BandwidthVariant")]
pub struct VariantResult {
    #[serde(flatten)]
    pub variant: Variant,
    pub isa: String,
    /// Bytes per element index: read and written by the program, and the
    /// write-allocate reads its ordinary stores cause (a model: x86 stores
    /// read a line before writing it; non-temporal stores do not).
    #[serde(flatten)]
    pub traffic: Traffic,
    /// Passes over the arrays per sample.
    pub passes: u64,
    /// Bytes the program read and wrote in one sample …
    pub bytes_per_sample: u64,
    /// … and with the write-allocate reads: what crossed the memory bus.
    pub bus_bytes_per_sample: u64,
    /// Raw sample durations, in seconds, one per repetition.
    #[schemars(length(min = 1), extend("items" = {"type": "number", "exclusiveMinimum": 0}))]
    pub samples_s: Vec<f64>,
    /// The program's bytes per second …
    pub bytes_per_s: Summary,
    /// … and the bus's.
    pub bus_bytes_per_s: Summary,
    /// Bandwidth over plain `simd` of the same policy and threads, measured
    /// next to each sample, per repetition (prefetch variants only) …
    pub ratios_to_simd: Vec<f64>,
    /// … and their median with its interval.
    pub ratio_to_simd: Option<Ratio>,
    pub checksum_ok: bool,
}

/// The best plateau of one prefetch-distance curve, or why there is none.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(rename = "BandwidthPlateau")]
pub struct Plateau {
    pub pages: PagePolicy,
    pub threads: usize,
    pub hint: Hint,
    pub plateau: analysis::plateau::Plateau,
}

/// Whether software prefetch helps, at the distance chosen on half of the
/// repetitions and confirmed on the other half against adjacent `simd`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PrefetchEffect {
    pub pages: PagePolicy,
    pub threads: usize,
    pub hint: Hint,
    /// Chosen on the even repetitions (inside the plateau when there is one).
    pub distance_elements: u64,
    /// Prefetch over `simd` bandwidth, on the odd repetitions only.
    pub confirmed: Ratio,
    pub verdict: Effect,
    /// The other distances of the plateau on the odd repetitions: a plateau
    /// says they are equivalent, so a verdict one of them does not share is
    /// unstable. `None` without a plateau or a direction.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub second_look: Option<crate::analysis::second_look::SecondLook>,
    /// Where the plateau the distance was chosen in starts, if it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plateau_from: Option<u64>,
}

impl PrefetchEffect {
    /// Chosen less than a line (8 elements) ahead: such a prefetch fetches
    /// nothing the load would not, so a difference it makes is the
    /// instruction's, not prefetching ahead's.
    pub fn within_a_line(&self) -> bool {
        self.distance_elements < 8
    }

    /// Chosen within a line, or inside a plateau that starts within one:
    /// the distance does not matter, so a gain is the instruction's.
    pub fn gain_is_the_instructions(&self) -> bool {
        self.within_a_line() || self.plateau_from.is_some_and(|d| d < 8)
    }
}

/// What a confirmed ratio says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Effect {
    Helps,
    Hurts,
    /// The interval lies within ± the threshold.
    NoChange,
    /// The interval holds no change and changes past the threshold (or
    /// too few confirming pairs for any interval).
    #[serde(alias = "within-noise", alias = "too-few-pairs")]
    NotResolved,
}

impl Effect {
    pub fn of(r: &Ratio) -> Effect {
        match r.call() {
            Call::Above => Effect::Helps,
            Call::Below => Effect::Hurts,
            Call::NoChange => Effect::NoChange,
            Call::NotResolved | Call::Invalid => Effect::NotResolved,
        }
    }

    pub fn describe(self) -> &'static str {
        match self {
            Effect::Helps => "helps",
            Effect::Hurts => "hurts",
            Effect::NoChange => "no change",
            Effect::NotResolved => "not resolved",
        }
    }
}

/// The figures of one page policy and thread count. The headline is the
/// plain `simd` kernel (no selection among variants, so no selection
/// bias); the best variant is reported beside it with its hold-out figure.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Headline {
    pub pages: PagePolicy,
    pub threads: usize,
    /// Median bandwidth of plain `simd`: over the frame sets' per-round
    /// medians where the outcome has them for this policy and thread count,
    /// else of the read array alone.
    pub simd_bytes_per_s: f64,
    /// The variant with the best median on the even repetitions …
    pub best: String,
    /// … and its median bandwidth on the odd repetitions.
    pub best_holdout_bytes_per_s: f64,
}

/// Where the threads of one team ran, and where their memory lives.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Placement {
    pub threads: usize,
    /// CPU each thread was pinned to.
    pub cpus: Vec<usize>,
    /// Samples in which some thread was seen on another CPU, or unpinned.
    pub migrated_samples: usize,
    /// NUMA node of the first page of each thread's slice (first-touched by
    /// that thread); `None` where the kernel does not say.
    pub slice_nodes: Vec<Option<i32>>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(rename = "BandwidthOutcome")]
pub struct Outcome {
    pub isa: String,
    pub size_bytes: Bytes,
    /// Backing of each array, read back after the measurement.
    pub regions: Vec<Backing>,
    pub placement: Vec<Placement>,
    /// Seed of the shuffled measurement order.
    pub order_seed: u64,
    #[schemars(length(min = 1))]
    pub results: Vec<VariantResult>,
    pub headlines: Vec<Headline>,
    pub plateaus: Vec<Plateau>,
    pub prefetch_effects: Vec<PrefetchEffect>,
    /// Plain `simd` read over arrays of the same size that each got their
    /// own 4 KiB frames, per thread count (empty where not measured).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub frame_sets: Vec<FrameSets>,
    pub valid: bool,
}

/// One read over 4 KiB pages first touched in order (the read array) and
/// over fragmented memory: an array whose pages were first touched in a
/// shuffled order, mapped anew every round, so its frames scatter over
/// many 2 MiB blocks as fragmented free memory's do. Measured round by
/// round, the read array beside the fragmented one, so what the host does
/// in a round hits both alike. (Documents from before read several arrays
/// each first touched shuffled, the first of them the read array.)
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FrameSets {
    pub pages: PagePolicy,
    pub threads: usize,
    /// The read array of the kernels' table, then fragmented memory (its
    /// rate over every mapping, its ratio to the read array's sample beside
    /// it, its frames the median over the mappings).
    #[schemars(length(min = 1))]
    pub arrays: Vec<FrameSet>,
    /// Per round, the read array's rate (in documents from before, the
    /// median of the arrays'): the samples of the headline of this policy
    /// and thread count.
    pub round_medians_bytes_per_s: Vec<f64>,
    /// In documents from before: 4 KiB pages over whole 2 MiB blocks in
    /// physical order, beside arrays first touched shuffled (no longer
    /// measured: the read array's pages are first touched in order).
    #[serde(default)]
    pub blocks_in_order: Option<FrameSet>,
}

/// One array's read rate, and its ratio to the first array's sample taken
/// beside it in each round (none for the first array).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FrameSet {
    pub bytes_per_s: Summary,
    pub ratio_to_first: Option<Ratio>,
    /// Of its 4 KiB pages, how many share each 2 MiB block of physical
    /// memory their frames lie in (where pagemap shows frames).
    pub pages_per_2mib_block: Option<f64>,
    /// Of neighbouring 4 KiB pages, the fraction whose frame follows the
    /// previous one's (where pagemap shows frames).
    #[serde(default)]
    pub in_order_fraction: Option<f64>,
}

/// The kernels' read array on more than one thread, read by plain `simd`
/// in the kernels' rounds and again, as the frame sets' first array, in
/// their rounds right after: the same bytes on the same frames, so rates
/// apart are the host moving under the experiment (where it placed the
/// vCPUs), which the suite's reference points, taken before and after it,
/// need not see.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Phases {
    pub threads: usize,
    pub kernels_bytes_per_s: f64,
    pub frame_sets_bytes_per_s: f64,
}

impl Phases {
    /// Larger over smaller rate, less one.
    pub fn moved(&self) -> f64 {
        let (a, b) = (self.kernels_bytes_per_s, self.frame_sets_bytes_per_s);
        a.max(b) / a.min(b) - 1.0
    }
}

impl Outcome {
    /// Per thread count above one where the frame sets were read: the read
    /// array's `simd` median in both phases.
    pub fn phases(&self) -> Vec<Phases> {
        self.frame_sets
            .iter()
            .filter(|f| f.threads > 1)
            .filter_map(|f| {
                let kernels = self.results.iter().find(|r| {
                    let v = &r.variant;
                    v.pages == f.pages && v.threads == f.threads && v.kernel == StreamShape::Simd && v.hint.is_none()
                })?;
                if !kernels.checksum_ok {
                    return None;
                }
                let again = f.arrays.first()?.bytes_per_s.median;
                let rate = kernels.bytes_per_s.median;
                (rate > 0.0 && again > 0.0).then_some(Phases {
                    threads: f.threads,
                    kernels_bytes_per_s: rate,
                    frame_sets_bytes_per_s: again,
                })
            })
            .collect()
    }
}

impl FrameSets {
    /// The slowest and the fastest array's ratio to the first (the first
    /// counts as ×1), each with its interval: `(slowest, fastest)`.
    pub fn extremes(&self) -> Option<(Ratio, Ratio)> {
        // The first against itself: exact, from no pairs.
        let first = Ratio::stated(0, 1.0, 1.0, 1.0, 1.0);
        let all: Vec<Ratio> =
            std::iter::once(first).chain(self.arrays.iter().filter_map(|a| a.ratio_to_first.clone())).collect();
        if all.len() < 2 {
            return None;
        }
        let by = |a: &&Ratio, b: &&Ratio| a.estimate.total_cmp(&b.estimate);
        Some((all.iter().min_by(by)?.clone(), all.iter().max_by(by)?.clone()))
    }

    /// Whether the arrays differ beyond their intervals by more than
    /// `limit` (0.10 for 10%): the fastest's low end over the slowest's
    /// high end.
    pub fn frames_matter(&self, limit: f64) -> bool {
        self.extremes().is_some_and(|(slow, fast)| fast.low / slow.high > 1.0 + limit)
    }
}

impl super::Valid for Outcome {
    fn valid(&self) -> bool {
        self.valid
    }
}
