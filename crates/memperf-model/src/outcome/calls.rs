//! What `memperf calls` found: the cost of a call and its return per
//! linkage, depth and thread count, where that cost steps up, and what
//! inlining or other link options would save.

use crate::about::About;
use crate::kernels::calls::Linkage;
use crate::timing::{Ratio, Summary};
use serde::{Deserialize, Serialize};

/// What this experiment is: its name, `--help` line, question and title.
pub const ABOUT: About = About {
    name: "calls",
    summary: "What a call and its return cost as a call chain deepens: direct, PLT, GOT, all registers saved, inlined",
    title: "Deep call chains",
    question: "What does a call and its return cost as a chain deepens, through a PLT, with every register saved, or inlined; where does the return-stack predictor run out?",
    classic: "2009, UltraSPARC T1: 3 M register-window spill/fill traps per second on one thread (~300 ns each); inlining cured it.",
};

/// One cell: a linkage at one depth on one thread count.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(rename = "CallsPoint")]
pub struct Point {
    pub linkage: Linkage,
    pub threads: usize,
    #[schemars(range(min = 1))]
    pub depth: u64,
    /// Chains per sample per thread (each makes `depth` calls).
    pub chains_per_sample: u64,
    /// Seconds per sample, one per repetition (from the start barrier to
    /// the last thread's end).
    pub samples_s: Vec<f64>,
    /// Nanoseconds per call and its return, per thread.
    pub ns_per_call: Summary,
    pub calls_per_s_per_thread: f64,
    pub calls_per_s_all_threads: f64,
    /// Every chain returned its depth.
    pub valid: bool,
}

/// CPU time of one linkage and thread count, over all its samples.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CpuTime {
    pub linkage: Linkage,
    pub threads: usize,
    pub user_s: f64,
    pub system_s: f64,
    /// Timed wall-clock seconds, summed over the samples.
    pub wall_s: f64,
}

/// Where the cost of a call steps up as the chain deepens.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum StepUp {
    /// The marginal cost of one more call is higher past `after_depth` than
    /// up to `before_depth`, in every half of the evidence: the interval of
    /// the per-repetition ratio lies above 1 and the ratio is at least 1.3.
    Clear {
        before_depth: u64,
        after_depth: u64,
        /// Marginal ns per extra call below and above the step (medians).
        marginal_before_ns: f64,
        marginal_after_ns: f64,
        ratio: Ratio,
        /// The step is the return-stack predictor running out: it is clear
        /// in `direct` and absent where no call is left (`inlined`).
        attributed_to_return_stack: bool,
    },
    /// No depth where the marginal cost clearly rises (the best split and
    /// its ratio, for the record).
    NoStep { best_split_depth: Option<u64>, ratio: Option<Ratio> },
    /// Too few depths (at least 3 on each side of a split, from depth 4).
    NotMeasured { reason: String },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CurveStep {
    pub linkage: Linkage,
    pub threads: usize,
    pub step: StepUp,
}

/// What one change would save per call, at one depth, measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Saving {
    /// `-fno-plt`, `inline (LTO, -fipa, -xipo)`, `link into one object`,
    /// `fewer live registers`.
    pub change: String,
    pub from: Linkage,
    pub to: Linkage,
    pub depth: u64,
    pub ns_per_call_from: f64,
    pub ns_per_call_to: f64,
    /// Time of `from` over time of `to`, paired per repetition.
    pub speedup: Ratio,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(rename = "CallsOutcome")]
pub struct Outcome {
    pub linkages: Vec<Linkage>,
    pub depths: Vec<u64>,
    pub threads: Vec<usize>,
    /// Seed of the shuffled measurement order.
    pub order_seed: u64,
    pub points: Vec<Point>,
    pub cpu_time: Vec<CpuTime>,
    pub steps: Vec<CurveStep>,
    /// At the deepest measured depth, one thread.
    pub savings: Vec<Saving>,
    pub valid: bool,
}

impl super::Valid for Outcome {
    fn valid(&self) -> bool {
        self.valid
    }
}
