//! The core clock as the document holds it: each chain's figure, the
//! clocks the machine states, and the believed clock (both chains agreed)
//! or why there is none. Measured by `memperf::timing::core_clock`.

use serde::{Deserialize, Serialize};

/// The two chains must agree within this relative difference.
pub const AGREE: f64 = 0.10;
/// No core memperf can meet runs below or above these clocks.
pub const MIN_GHZ: f64 = 0.2;
pub const MAX_GHZ: f64 = 7.0;
/// A measured clock beyond this factor of a stated nominal clock (either
/// way) is not believed: turbo and power saving stay well inside it.
pub const NOMINAL_RATIO: f64 = 5.0;

/// A measured core clock, believed: both chains agreed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CoreClock {
    /// The mean of the chains' medians, in GHz (cycles per ns).
    #[schemars(extend("exclusiveMinimum" = 0))]
    pub ghz: f64,
    /// Lowest and highest sample over both chains.
    pub min_ghz: f64,
    pub max_ghz: f64,
    pub samples: usize,
    /// Each chain's figure (empty in documents older than the two-chain
    /// method, whose single `add reg, imm` chain a renamer can fold).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub methods: Vec<ChainFigure>,
}

impl CoreClock {
    /// Measured by the two-chain method (documents of the one-chain method
    /// hold figures a renamer may have folded).
    pub fn two_chains(&self) -> bool {
        self.methods.len() >= 2
    }
}

/// One chain's figure.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ChainFigure {
    /// `add-reg-reg`, `imul-reg-reg`, `eor-reg-reg`.
    pub method: String,
    /// The instruction's latency the figure assumes, in cycles.
    pub cycles_per_op: f64,
    /// Median of the samples, GHz.
    pub ghz: f64,
    pub min_ghz: f64,
    pub max_ghz: f64,
    pub samples: usize,
}

/// A clock the machine states (not a measurement of the core).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Nominal {
    /// `tsc` (its rate measured against CLOCK_MONOTONIC, where the TSC is
    /// invariant), `cpuid-0x16`, `brand-string`, `cpuinfo`.
    pub source: String,
    pub ghz: f64,
}

/// Everything one measurement of the clock found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ClockReading {
    pub methods: Vec<ChainFigure>,
    pub nominal: Vec<Nominal>,
    /// The believed clock, or none.
    pub clock: Option<CoreClock>,
    /// Why there is none: "not measured — <reason>".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_measured: Option<String>,
}

/// The mean of the believed clocks (before and after), for figures in
/// cycles; `None` when none was measured, or only by the old one-chain
/// method.
pub fn mean_ghz(clocks: &[CoreClock]) -> Option<f64> {
    let trusted: Vec<f64> = clocks.iter().filter(|c| c.two_chains()).map(|c| c.ghz).collect();
    (!trusted.is_empty()).then(|| trusted.iter().sum::<f64>() / trusted.len() as f64)
}
