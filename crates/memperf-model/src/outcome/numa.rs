//! What `memperf numa` found: latency and read bandwidth from the CPUs of
//! each node to memory bound to each node — or, on a machine with one
//! node, that there is no matrix to draw.

use crate::about::About;
use crate::timing::Summary;
use serde::{Deserialize, Serialize};

/// What this experiment is: its name, `--help` line, question and title.
pub const ABOUT: About = About {
    name: "numa",
    summary: "Node × node latency and read bandwidth, memory bound to each node (one line on a single-node machine)",
    title: "NUMA nodes",
    question: "How far is each node's memory from each node's CPUs, in latency and read bandwidth?",
    classic: "",
};

/// One node as the experiment used it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct NodeInfo {
    pub id: usize,
    /// The node's CPUs this process may run on.
    pub cpus: Vec<usize>,
    pub has_memory: bool,
}

/// CPUs of `cpu_node` reading memory bound to `memory_node`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Cell {
    pub cpu_node: usize,
    pub memory_node: usize,
    /// One CPU of the node chasing a random cycle (THP) …
    pub latency_ns: Summary,
    /// … and all its CPUs streaming a read (`simd`).
    pub bytes_per_s: Summary,
    /// The pages were found on the node they were bound to.
    pub placement_ok: bool,
    pub valid: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(rename = "NumaOutcome")]
pub struct Outcome {
    pub nodes: Vec<NodeInfo>,
    /// Every (CPU node, memory node) pair; empty with fewer than two
    /// nodes that have both CPUs this process may use and memory.
    pub cells: Vec<Cell>,
    /// Why there is no matrix, when there is none.
    pub no_matrix: Option<String>,
    pub size_bytes: u64,
    pub valid: bool,
}

impl super::Valid for Outcome {
    fn valid(&self) -> bool {
        self.valid
    }
}
