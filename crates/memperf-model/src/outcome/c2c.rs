//! What `memperf c2c` found: the one-way latency of a cache line between
//! every pair of CPUs asked for, per handoff, with the pair's topology from
//! sysfs and the figures grouped by it.

use crate::about::About;
use crate::kernels::c2c::Handoff;
use crate::timing::Summary;
use serde::{Deserialize, Serialize};

/// What this experiment is: its name, `--help` line, question and title.
pub const ABOUT: About = About {
    name: "c2c",
    summary: "Core-to-core latency: one cache line bounced between every pair of CPUs, grouped by topology",
    title: "Core-to-core latency",
    question: "How long does one cache line take to travel between two CPUs, by their topology?",
    classic: "",
};

/// How two CPUs relate, from sysfs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Relation {
    /// Two hardware threads of one core.
    SmtSiblings,
    /// Two cores sharing a last-level (L3) cache: one CCX on AMD.
    SameL3,
    /// One package, different L3 domains (CCDs on AMD).
    SamePackage,
    OtherPackage,
    /// sysfs did not say.
    Unknown,
}

impl Relation {
    pub fn name(self) -> &'static str {
        match self {
            Relation::SmtSiblings => "SMT siblings",
            Relation::SameL3 => "same L3",
            Relation::SamePackage => "same package, other L3",
            Relation::OtherPackage => "other package",
            Relation::Unknown => "unknown",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PairResult {
    /// The CPU that times (side A) and the other.
    pub a: usize,
    pub b: usize,
    pub handoff: Handoff,
    pub relation: Relation,
    pub round_trips_per_sample: u64,
    /// One-way ns (half a round trip) of each sample.
    #[schemars(length(min = 1), extend("items" = {"type": "number", "exclusiveMinimum": 0}))]
    pub samples_ns: Vec<f64>,
    pub one_way_ns: Summary,
    /// Every sample handed the line over 2n times and both threads stayed pinned.
    pub valid: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Group {
    pub relation: Relation,
    pub handoff: Handoff,
    pub pairs: usize,
    /// Median, lowest and highest of the pairs' medians.
    pub median_ns: crate::units::Nanos,
    pub min_ns: crate::units::Nanos,
    pub max_ns: crate::units::Nanos,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(rename = "C2cOutcome")]
pub struct Outcome {
    #[schemars(length(min = 2))]
    pub cpus: Vec<usize>,
    #[schemars(length(min = 1))]
    pub handoffs: Vec<Handoff>,
    #[schemars(length(min = 1))]
    pub pairs: Vec<PairResult>,
    pub groups: Vec<Group>,
    /// Said when the machine limits what can be shown (two CPUs: one pair).
    pub note: Option<String>,
    pub valid: bool,
}

impl super::Valid for Outcome {
    fn valid(&self) -> bool {
        self.valid
    }
}

impl Outcome {
    /// The N×N matrix of median one-way ns for `handoff`: a figure for
    /// every pair (measured from the lower CPU, shown both ways), none on
    /// the diagonal.
    pub fn matrix(&self, handoff: Handoff) -> Vec<Vec<Option<f64>>> {
        let n = self.cpus.len();
        let at = |cpu: usize| self.cpus.iter().position(|&c| c == cpu);
        let mut m = vec![vec![None; n]; n];
        for p in self.pairs.iter().filter(|p| p.handoff == handoff) {
            if let (Some(i), Some(j)) = (at(p.a), at(p.b)) {
                m[i][j] = Some(p.one_way_ns.median);
                m[j][i] = Some(p.one_way_ns.median);
            }
        }
        m
    }
}
