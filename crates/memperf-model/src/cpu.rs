//! What a CPU says it is (vendor, family, model, vector extensions), as
//! the fingerprint records it and the counters' event tables look it up.

use serde::{Deserialize, Serialize};

/// CPU identity, from CPUID.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CpuIdentity {
    pub vendor: String,
    pub model_name: String,
    pub family: u32,
    pub model: u32,
    pub stepping: u32,
    pub hypervisor: Option<String>,
    /// Vector extensions relevant to the kernels, widest first.
    pub vector_isa: Vec<String>,
    /// Base frequency CPUID reports (leaf 0x16), in Hz.
    pub base_frequency_hz: Option<f64>,
}
