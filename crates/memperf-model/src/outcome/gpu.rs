//! What `memperf gpu` found: each GPU as its driver describes it (the
//! part, its SMs, L2, memory, clocks, ECC and PCIe link), and the copies
//! its driver makes — between host and device by the copy engines, from
//! pinned and from pageable host memory, and within the device — or why
//! there was no GPU to measure.

use crate::about::About;
use crate::timing::Summary;
use serde::{Deserialize, Serialize};

/// What this experiment is: its name, `--help` line, question and title.
pub const ABOUT: About = About {
    name: "gpu",
    summary: "The GPU's memory system beside the CPU's: the part, its memory and link, and the driver's copies over them",
    title: "GPU memory",
    question: "What GPU is here, how fast do its driver's copies cross the host link and move within its memory, and does pinning host memory pay?",
    classic: "nvbandwidth's copy-engine copies and BabelStream's device bandwidth; the GPU as part of the machine's memory system.",
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

/// One kind of copy, measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Transfer {
    pub device: usize,
    pub direction: Direction,
    pub host: HostMemory,
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

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(rename = "GpuOutcome")]
pub struct Outcome {
    /// The driver's version as it reports it (13000 for CUDA 13.0).
    pub driver_version: Option<u32>,
    pub devices: Vec<Device>,
    pub copies: Vec<Transfer>,
    /// Why nothing was measured, when nothing was: no driver, no device.
    pub not_measured: Option<String>,
    pub valid: bool,
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

impl HostMemory {
    pub fn name(self) -> &'static str {
        match self {
            HostMemory::Pinned => "pinned",
            HostMemory::Pageable => "pageable",
            HostMemory::None => "-",
        }
    }
}

/// The peak bandwidth a memory's clock and bus width imply: two transfers
/// a clock, `bus_bits / 8` bytes each.
pub fn memory_peak_bytes_per_s(clock_khz: u64, bus_bits: u32) -> f64 {
    2.0 * clock_khz as f64 * 1e3 * bus_bits as f64 / 8.0
}

#[cfg(test)]
mod tests {
    use super::*;

    /// H100 SXM's HBM3: 2,619 MHz, 5,120 bits: 3.35 TB/s, its data sheet's.
    #[test]
    fn the_memory_peak_is_two_transfers_a_clock() {
        assert_eq!(memory_peak_bytes_per_s(2_619_000, 5120), 3_352_320_000_000.0);
    }
}
