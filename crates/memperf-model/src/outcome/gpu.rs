//! What `memperf gpu` found: each GPU as its driver describes it (the
//! part, its SMs, L2, memory, clocks, ECC and PCIe link), the copies its
//! driver makes (host and device, pinned and pageable, within the
//! device), memperf's kernels over device memory, the latency ladder, TLB
//! reach, the L2 from every SM and latency under load — or why there was
//! no GPU to measure.

use crate::about::About;
use crate::timing::Summary;
use serde::{Deserialize, Serialize};

/// What this experiment is: its name, `--help` line, question and title.
pub const ABOUT: About = About {
    name: "gpu",
    summary: "The GPU's memory system beside the CPU's: its link and memory's bandwidth, the latency ladder, TLB reach and latency under load",
    title: "GPU memory",
    question: "What GPU is here, how fast do copies and kernels move bytes over its link and memory, what does a dependent load cost from each level and under load, and does pinning host memory pay?",
    classic: "nvbandwidth's copy-engine copies, BabelStream's device bandwidth and the pointer chases of Mei & Chu; the GPU as part of the machine's memory system.",
};

/// The PCIe link of a device, as sysfs reads it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Link {
    /// `0000:41:00.0`.
    pub address: String,
    /// Transfers per second per lane now and at most (`32.0 GT/s PCIe`),
    /// and lanes now and at most.
    pub speed: Option<String>,
    pub max_speed: Option<String>,
    pub width: Option<u32>,
    pub max_width: Option<u32>,
    /// The NUMA node of the device's PCIe root: where host buffers are
    /// nearest (`None` where the kernel reports none).
    pub numa_node: Option<i32>,
}

/// One GPU as its driver describes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Device {
    pub index: usize,
    pub name: String,
    /// Compute capability, major and minor (9.0 for Hopper).
    pub compute_capability: (u32, u32),
    pub sms: u32,
    pub l2_bytes: u64,
    pub memory_bytes: u64,
    /// The memory's clock (kHz) and bus width (bits), and the peak they
    /// imply (two transfers a clock): a vendor figure, not a measurement.
    pub memory_clock_khz: Option<u64>,
    pub memory_bus_bits: Option<u32>,
    pub memory_peak_bytes_per_s: Option<f64>,
    /// The SMs' clock (kHz), where the driver still reports it.
    pub sm_clock_khz: Option<u64>,
    pub ecc: Option<bool>,
    pub link: Option<Link>,
}

/// Where a copy goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Direction {
    HostToDevice,
    DeviceToHost,
    /// Within the device's memory: each byte read and written once.
    DeviceToDevice,
}

/// Host memory of a copy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum HostMemory {
    /// Page-locked by the driver (cuMemAllocHost): the copy engine reads
    /// it directly.
    Pinned,
    /// Ordinary memory: the driver stages it through pinned buffers.
    Pageable,
    /// No host memory (a copy within the device).
    None,
}

/// What moves a copy's bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Engine {
    /// The driver's copy (`cuMemcpyAsync`): a copy engine's DMA.
    #[default]
    CopyEngine,
    /// memperf's copy kernel: the SMs load and store across the link
    /// (pinned host memory the device maps).
    Sm,
}

/// One kind of copy, measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Transfer {
    pub device: usize,
    pub direction: Direction,
    pub host: HostMemory,
    #[serde(default)]
    pub engine: Engine,
    /// Measured while the same engine copied the other way at once, on a
    /// second stream: this direction's bytes over its own time.
    #[serde(default)]
    pub both_ways: bool,
    /// Every sample's copies were queued behind a kernel spinning until
    /// the host had queued them all, so no gap of the host's between them
    /// counts (nvbandwidth's way). Copies from pageable memory never are:
    /// the driver may wait for the stream before it stages them.
    #[serde(default)]
    pub gated: bool,
    /// Bytes each copy moves (its size; a device-to-device copy reads and
    /// writes this many).
    pub bytes: u64,
    /// Copies queued back to back between the two events of a sample.
    pub copies_per_sample: usize,
    /// Bytes per second of each sample, from the driver's events: the
    /// size of each copy over the time it took (a device-to-device copy's
    /// read and write both counted) …
    #[schemars(length(min = 1))]
    pub samples_bytes_per_s: Vec<f64>,
    pub bytes_per_s: Summary,
    /// … and every copy's bytes arrived as sent (checked after the last).
    pub valid: bool,
}

/// Small copies by the copy engine, from or to pinned memory: the time
/// each costs, queued back to back behind the gate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SmallCopy {
    pub device: usize,
    pub direction: Direction,
    pub bytes: u64,
    pub copies_per_sample: usize,
    /// Seconds per copy of each sample …
    #[schemars(length(min = 1))]
    pub samples_s: Vec<f64>,
    pub seconds: Summary,
    /// … queued behind the gate (else each copy's time includes the
    /// host's to queue it) …
    pub gated: bool,
    /// … and a copy of this size arrived as sent.
    pub valid: bool,
}

/// One of memperf's kernels over device memory, in its best block and
/// grid size (BabelStream's kernels, and read-only and write-only).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct KernelRate {
    pub device: usize,
    /// `copy`, `mul`, `add`, `triad`, `nstream`, `dot`, `read`, `write`.
    pub kernel: String,
    /// Doubles read and written per element (BabelStream's count: triad 3).
    pub doubles_per_element: u32,
    /// Doubles in each array.
    pub elements: u64,
    /// The best configuration: threads per block, and blocks.
    pub block: u32,
    pub grid: u32,
    /// Launches queued back to back between the two events of a sample.
    pub launches_per_sample: usize,
    /// Bytes per second of each sample (elements × doubles per element × 8
    /// over the time), in the best configuration …
    #[schemars(length(min = 1))]
    pub samples_bytes_per_s: Vec<f64>,
    pub bytes_per_s: Summary,
    /// … and the arrays held, after the kernel's last launch, what the
    /// same arithmetic replayed on the host gives.
    pub valid: bool,
}

/// One configuration of a kernel: its median over the samples.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct KernelConfig {
    pub device: usize,
    pub kernel: String,
    pub block: u32,
    pub grid: u32,
    pub bytes_per_s: f64,
}

/// Triad over a working set (its three arrays' bytes), in triad's best
/// block size.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct WorkingSetRate {
    pub device: usize,
    pub bytes: u64,
    pub block: u32,
    pub grid: u32,
    pub launches_per_sample: usize,
    #[schemars(length(min = 1))]
    pub samples_bytes_per_s: Vec<f64>,
    pub bytes_per_s: Summary,
}

/// One chain of the latency ladder or of the TLB chase, and one thread's
/// dependent loads along it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ChasePoint {
    /// Bytes the chain spans: its slots times their stride.
    pub bytes: u64,
    pub slots: u64,
    /// Bytes between neighbouring slots in memory (the chase visits them
    /// in a random cyclic order).
    pub stride: u64,
    /// Cycles per load of each sample, by the SM's clock (`clock64`) …
    #[schemars(length(min = 1))]
    pub samples_cycles: Vec<f64>,
    pub cycles: Summary,
    /// … and nanoseconds per load by the driver's events: a launch of
    /// twice the loads less one of the loads, over the loads between them
    /// (the median over the samples).
    pub ns: Option<f64>,
    /// Every chase ended where the host's walk of the same cycle ends.
    pub valid: bool,
}

/// A level of the latency ladder: where working sets cost about the same
/// per load.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LatencyLevel {
    /// `L1`, `L2`, `memory`, or `level N` where more levels show.
    pub name: String,
    /// The first and the last working set of the level.
    pub from_bytes: u64,
    pub to_bytes: u64,
    pub cycles: f64,
    pub ns: Option<f64>,
    /// The knee that ends the level, found again on the even and the odd
    /// samples' curves (the last level has no knee).
    pub knee_look: Option<crate::analysis::second_look::SecondLook>,
}

/// Where a page-strided chase steps up: the pages it covers there.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TlbStep {
    /// The most pages chased before the step, and the bytes they cover.
    pub pages: u64,
    pub reach_bytes: u64,
    /// Cycles per load before and after the step.
    pub cycles_before: f64,
    pub cycles_after: f64,
    pub knee_look: crate::analysis::second_look::SecondLook,
}

/// The L2's latency seen from each SM at once.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct L2Spread {
    /// Bytes of the chain each SM chases (well inside the L2).
    pub bytes: u64,
    /// Each SM's cycles per load (by `%smid`; an SM that ran two blocks,
    /// their mean).
    pub sm_cycles: Vec<(u32, f64)>,
    /// The fastest, median and slowest SM.
    pub cycles: Summary,
    /// Single loads timed alone, all SMs together: the near and the far
    /// partition's cycles where they fall into two groups.
    pub near_cycles: Option<f64>,
    pub far_cycles: Option<f64>,
    pub valid: bool,
}

/// One device's latency: the ladder, its levels, the TLB chase and the
/// L2's spread across SMs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Latency {
    pub device: usize,
    /// Chains with a slot per 128-byte line, from a few KiB to GiBs.
    pub ladder: Vec<ChasePoint>,
    pub levels: Vec<LatencyLevel>,
    /// The driver's page (`cuMemGetAllocationGranularity`), the chase of a
    /// slot per page through the L2 only, and where it steps up.
    pub page_bytes: u64,
    pub tlb: Vec<ChasePoint>,
    pub tlb_steps: Vec<TlbStep>,
    pub l2_spread: Option<L2Spread>,
    /// The SM clock the two timings imply: cycles over nanoseconds, the
    /// median over the ladder's points.
    pub clock_ghz: Option<f64>,
}

/// One device's latency under load: a chase while the other SMs read at
/// paced rates (loaded-latency's points and bend, on device memory).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LoadedCurve {
    pub device: usize,
    /// Bytes of the chased chain (a slot per 128-byte line) and of the
    /// array the readers read.
    pub chain_bytes: u64,
    pub array_bytes: u64,
    /// Reading blocks (one an SM, the chaser's aside) and their threads.
    pub blocks: u32,
    pub threads: u32,
    /// The idle point (no readers) and one a delay between reads; a
    /// point's delay is the spin's cycles at the SMs' clock, in ns.
    pub points: Vec<crate::outcome::loaded_latency::Point>,
    pub bend: crate::outcome::loaded_latency::Bend,
    /// Little's law at the curve's highest bandwidth: 128-byte lines in
    /// flight per reading SM, what the SMs sustained.
    pub lines_per_sm: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(rename = "GpuOutcome")]
pub struct Outcome {
    /// The driver's version as it reports it (13000 for CUDA 13.0).
    pub driver_version: Option<u32>,
    pub devices: Vec<Device>,
    pub copies: Vec<Transfer>,
    /// Small copies' time each, by size and direction.
    #[serde(default)]
    pub small_copies: Vec<SmallCopy>,
    /// memperf's kernels over device memory, each in its best configuration …
    #[serde(default)]
    pub kernels: Vec<KernelRate>,
    /// … every configuration tried …
    #[serde(default)]
    pub configs: Vec<KernelConfig>,
    /// … and triad against its working set.
    #[serde(default)]
    pub working_set: Vec<WorkingSetRate>,
    /// Each device's latency ladder, TLB chase and L2 spread …
    #[serde(default)]
    pub latency: Vec<Latency>,
    /// … and its latency under load.
    #[serde(default)]
    pub loaded: Vec<LoadedCurve>,
    /// Why the kernels did not run where the copies did (no run-time
    /// compiler, or the driver refused them).
    #[serde(default)]
    pub kernels_not_measured: Option<String>,
    /// Why nothing was measured, when nothing was: no driver, no device.
    pub not_measured: Option<String>,
    pub valid: bool,
}

impl Outcome {
    /// An outcome with nothing measured in it yet, and nothing failed.
    pub fn empty() -> Outcome {
        Outcome {
            driver_version: None,
            devices: vec![],
            copies: vec![],
            small_copies: vec![],
            kernels: vec![],
            configs: vec![],
            working_set: vec![],
            latency: vec![],
            loaded: vec![],
            kernels_not_measured: None,
            not_measured: None,
            valid: true,
        }
    }
}

impl super::Valid for Outcome {
    fn valid(&self) -> bool {
        self.valid
    }
}

impl Direction {
    pub fn name(self) -> &'static str {
        match self {
            Direction::HostToDevice => "host-to-device",
            Direction::DeviceToHost => "device-to-host",
            Direction::DeviceToDevice => "device-to-device",
        }
    }
}

impl Engine {
    pub fn name(self) -> &'static str {
        match self {
            Engine::CopyEngine => "copy engine",
            Engine::Sm => "SMs",
        }
    }
}

impl HostMemory {
    pub fn name(self) -> &'static str {
        match self {
            HostMemory::Pinned => "pinned",
            HostMemory::Pageable => "pageable",
            HostMemory::None => "-",
        }
    }
}

/// How much faster than the largest working set a point must run to be
/// called L2-resident.
pub const L2_OVER_MEMORY: f64 = 1.3;

/// The L2's plateau in triad's working-set curve of `device`: the largest
/// working set running at least [`L2_OVER_MEMORY`] times the largest
/// set's rate, and its rate; `None` where no set runs that much faster.
pub fn l2_plateau(working_set: &[WorkingSetRate], device: usize) -> Option<(u64, f64)> {
    let points: Vec<&WorkingSetRate> = working_set.iter().filter(|w| w.device == device).collect();
    let memory = points.iter().max_by_key(|w| w.bytes)?.bytes_per_s.median;
    points
        .iter()
        .filter(|w| w.bytes_per_s.median >= L2_OVER_MEMORY * memory)
        .max_by_key(|w| w.bytes)
        .map(|w| (w.bytes, w.bytes_per_s.median))
}

/// The peak bandwidth a memory's clock and bus width imply: two transfers
/// a clock, `bus_bits / 8` bytes each.
pub fn memory_peak_bytes_per_s(clock_khz: u64, bus_bits: u32) -> f64 {
    2.0 * clock_khz as f64 * 1e3 * bus_bits as f64 / 8.0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(bytes: u64, gbs: f64) -> WorkingSetRate {
        WorkingSetRate {
            device: 0,
            bytes,
            block: 256,
            grid: 528,
            launches_per_sample: 2,
            samples_bytes_per_s: vec![gbs * 1e9],
            bytes_per_s: Summary::of(&[gbs * 1e9]).unwrap(),
        }
    }

    /// The plateau ends at the last set 1.3× faster than the largest; a
    /// curve with no such set has none.
    #[test]
    fn the_l2_plateau_ends_at_the_last_set_well_above_memory() {
        let curve = [point(1 << 20, 9000.0), point(32 << 20, 8000.0), point(64 << 20, 4000.0), point(1 << 30, 3500.0)];
        assert_eq!(l2_plateau(&curve, 0), Some((32 << 20, 8000e9)));
        assert_eq!(l2_plateau(&curve[2..], 0), None);
        assert_eq!(l2_plateau(&curve, 1), None);
    }

    /// H100 SXM's HBM3: 2,619 MHz, 5,120 bits: 3.35 TB/s, its data sheet's.
    #[test]
    fn the_memory_peak_is_two_transfers_a_clock() {
        assert_eq!(memory_peak_bytes_per_s(2_619_000, 5120), 3_352_320_000_000.0);
    }
}
