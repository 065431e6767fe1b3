//! The GPU through its driver: the calls memperf makes behind one trait
//! ([`Driver`]), NVIDIA's driver loaded at run time ([`cuda`]: nothing is
//! needed to build memperf, and a machine without a GPU says what is
//! missing), a device described from its attributes and sysfs
//! ([`inventory`]), the driver's copies timed by its events ([`copies`]),
//! memperf's own kernels over device memory ([`stream`], compiled at
//! run time by [`nvrtc`]), its chases for latency ([`ladder`]) and
//! latency under load ([`loaded`]), read by `analysis::gpu_latency`. Every call returns an error instead of
//! panicking; tests run the same code on a fake driver with exact numbers.

pub mod copies;
pub mod cuda;
mod dl;
#[cfg(test)]
pub mod fake;
pub mod gate;
pub mod ladder;
pub mod loaded;
pub mod nvrtc;
pub mod stream;

use memperf_model::outcome::gpu::{memory_peak_bytes_per_s, Device, Link};
use std::path::Path;

/// A device address.
pub type DevicePtr = u64;

/// A driver call that failed: the call, its result code and the code's name.
#[derive(Debug, Clone, PartialEq)]
pub struct GpuError {
    pub call: &'static str,
    pub code: i32,
    pub name: String,
}

impl std::fmt::Display for GpuError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} failed: {} ({})", self.call, self.name, self.code)
    }
}

/// The device attributes memperf reads, by the driver's numbers
/// (`CUdevice_attribute` in cuda.h).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Attribute {
    SmClockKhz = 13,
    Sms = 16,
    EccEnabled = 32,
    PciBus = 33,
    PciDevice = 34,
    MemoryClockKhz = 36,
    MemoryBusBits = 37,
    L2Bytes = 38,
    PciDomain = 50,
    CapabilityMajor = 75,
    CapabilityMinor = 76,
}

/// One copy, queued on the device's stream.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum CopyOp {
    HostToDevice { dst: DevicePtr, src: *const u8, bytes: usize },
    DeviceToHost { dst: *mut u8, src: DevicePtr, bytes: usize },
    DeviceToDevice { dst: DevicePtr, src: DevicePtr, bytes: usize },
}

/// memperf's kernels (`kernels.cu`), each over `n` doubles.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kernel {
    /// a, b, c ← va, vb, vc.
    Init,
    /// c ← a.
    Copy,
    /// b ← scalar·c.
    Mul,
    /// c ← a + b.
    Add,
    /// a ← b + scalar·c.
    Triad,
    /// a ← a + b + scalar·c.
    Nstream,
    /// One partial sum of a·b per block.
    Dot,
    /// One partial sum of a per block.
    Read,
    /// a ← v.
    Write,
    /// A chain of slots in random cyclic order (`ladder`).
    Chain,
    /// One thread's dependent chase along a chain, timed by its clock.
    Chase,
    /// A chase through the L2 from every SM at once.
    Spread,
    /// A chase while the other SMs read at a paced rate.
    Loaded,
    /// A spin until the host raises a flag, which copies queue behind.
    Gate,
    /// A copy by the SMs, either end host memory the device maps.
    SmCopy,
}

impl Kernel {
    pub const ALL: [Kernel; 15] = [
        Kernel::Init,
        Kernel::Copy,
        Kernel::Mul,
        Kernel::Add,
        Kernel::Triad,
        Kernel::Nstream,
        Kernel::Dot,
        Kernel::Read,
        Kernel::Write,
        Kernel::Chain,
        Kernel::Chase,
        Kernel::Spread,
        Kernel::Loaded,
        Kernel::Gate,
        Kernel::SmCopy,
    ];

    /// Its function's name in `kernels.cu`.
    pub fn function(self) -> &'static str {
        match self {
            Kernel::Init => "memperf_init",
            Kernel::Copy => "memperf_copy",
            Kernel::Mul => "memperf_mul",
            Kernel::Add => "memperf_add",
            Kernel::Triad => "memperf_triad",
            Kernel::Nstream => "memperf_nstream",
            Kernel::Dot => "memperf_dot",
            Kernel::Read => "memperf_read",
            Kernel::Write => "memperf_write",
            Kernel::Chain => "memperf_chain",
            Kernel::Chase => "memperf_chase",
            Kernel::Spread => "memperf_spread",
            Kernel::Loaded => "memperf_loaded",
            Kernel::Gate => "memperf_gate",
            Kernel::SmCopy => "memperf_sm_copy",
        }
    }
}

/// One argument of a launch, in the kernel's order: a device pointer, a
/// double, or the element count.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Arg {
    Ptr(DevicePtr),
    F64(f64),
    U64(u64),
}

/// A stream of the device in use: memperf's, and a second, beside it,
/// for copies that run while the first's run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    Main,
    Side,
}

/// A point on the device's stream, recorded after what was queued before
/// it; only a driver makes one.
#[derive(Debug)]
pub struct Event(pub(in crate::gpu) usize);

/// What memperf asks of a GPU's driver.
pub trait Driver {
    /// The driver's version (13000 for CUDA 13.0).
    fn version(&self) -> Result<u32, GpuError>;
    fn count(&self) -> Result<usize, GpuError>;
    fn name(&self, dev: usize) -> Result<String, GpuError>;
    fn attribute(&self, dev: usize, a: Attribute) -> Result<i64, GpuError>;
    fn total_memory(&self, dev: usize) -> Result<u64, GpuError>;
    /// The granularity the driver maps device memory in: its page
    /// (`cuMemGetAllocationGranularity`'s minimum; 2 MiB on NVIDIA's
    /// current parts).
    fn page_bytes(&self, dev: usize) -> Result<u64, GpuError>;
    /// Makes `dev` current on this thread, with two streams of its own; until
    /// [`Driver::release`], every call below is on that device.
    fn use_device(&self, dev: usize) -> Result<(), GpuError>;
    fn release(&self);
    fn alloc(&self, bytes: usize) -> Result<DevicePtr, GpuError>;
    fn free(&self, p: DevicePtr);
    /// Page-locked host memory, which the copy engines read directly.
    fn alloc_pinned(&self, bytes: usize) -> Result<*mut u8, GpuError>;
    fn free_pinned(&self, p: *mut u8);
    /// The device's address of pinned host memory at `p`, for kernels.
    fn mapped(&self, p: *mut u8) -> Result<DevicePtr, GpuError>;
    /// Queues `op` on stream `s`.
    ///
    /// # Safety
    /// The host memory `op` names must hold its bytes until the stream
    /// has passed it ([`Driver::elapsed_ms`] or [`Driver::synchronize`]).
    unsafe fn copy_on(&self, s: Stream, op: CopyOp) -> Result<(), GpuError>;
    /// Queues `op` on the main stream.
    ///
    /// # Safety
    /// As [`Driver::copy_on`].
    unsafe fn copy(&self, op: CopyOp) -> Result<(), GpuError> {
        // SAFETY: the caller's promise, passed on.
        unsafe { self.copy_on(Stream::Main, op) }
    }
    /// Records an event on stream `s`.
    fn record_on(&self, s: Stream) -> Result<Event, GpuError>;
    /// Records an event on the main stream.
    fn record(&self) -> Result<Event, GpuError> {
        self.record_on(Stream::Main)
    }
    /// Holds what is queued on `s` from now until the stream of `e` has
    /// passed it.
    fn wait_for(&self, s: Stream, e: &Event) -> Result<(), GpuError>;
    /// Milliseconds between two recorded events, once the stream has
    /// passed the second; both are released.
    fn elapsed_ms(&self, from: Event, to: Event) -> Result<f64, GpuError>;
    /// Releases an event that will not be timed.
    fn discard(&self, e: Event);
    /// Waits until both streams have passed all queued on them.
    fn synchronize(&self) -> Result<(), GpuError>;
    /// Compiles and loads memperf's kernels on the current device, whose
    /// compute capability is `major.minor`; why not where the compiler or
    /// the device refuses.
    fn load_kernels(&self, major: u32, minor: u32) -> Result<(), GpuError>;
    /// Queues kernel `k` on stream `s`: `grid` blocks of `block` threads.
    ///
    /// # Safety
    /// `args` are the kernel's (`kernels.cu`): each array a device
    /// allocation of at least the `n` doubles the last argument gives, a
    /// reduction's partial sums of at least `grid`.
    unsafe fn launch_on(&self, s: Stream, k: Kernel, grid: u32, block: u32, args: &[Arg]) -> Result<(), GpuError>;
    /// [`Driver::launch_on`] the main stream.
    ///
    /// # Safety
    /// As [`Driver::launch_on`].
    unsafe fn launch(&self, k: Kernel, grid: u32, block: u32, args: &[Arg]) -> Result<(), GpuError> {
        // SAFETY: the caller's promise, passed on.
        unsafe { self.launch_on(Stream::Main, k, grid, block, args) }
    }
}

/// `count` cases taken in turns, an order shuffled anew each round:
/// `rounds` rounds, after one untimed round where `warm`; `one` gets each
/// case's index and whether its round counts. Every measurement here
/// takes turns so, so that the host's drift spreads over all the cases.
pub fn in_turns<E>(
    rng: &mut crate::rng::SplitMix64,
    count: usize,
    rounds: usize,
    warm: bool,
    mut one: impl FnMut(usize, bool) -> Result<(), E>,
) -> Result<(), E> {
    let mut order: Vec<usize> = (0..count).collect();
    let first = usize::from(warm);
    for round in 0..rounds + first {
        rng.shuffle(&mut order);
        for &at in &order {
            one(at, round >= first)?;
        }
    }
    Ok(())
}

/// Device `dev` described: its driver's attributes, and its PCIe link
/// read under `pci_devices` (`/sys/bus/pci/devices`). An attribute the
/// driver does not report is left out, not guessed.
pub fn inventory(d: &dyn Driver, dev: usize, pci_devices: &Path) -> Result<Device, GpuError> {
    let a = |x: Attribute| d.attribute(dev, x).ok();
    let u = |x: Attribute| a(x).and_then(|v| u64::try_from(v).ok());
    let (clock, bus) =
        (u(Attribute::MemoryClockKhz).filter(|&c| c > 0), u(Attribute::MemoryBusBits).filter(|&b| b > 0));
    let address = match (u(Attribute::PciDomain), u(Attribute::PciBus), u(Attribute::PciDevice)) {
        (Some(dom), Some(bus), Some(device)) => Some(format!("{dom:04x}:{bus:02x}:{device:02x}.0")),
        _ => None,
    };
    Ok(Device {
        index: dev,
        name: d.name(dev)?,
        compute_capability: (
            d.attribute(dev, Attribute::CapabilityMajor)? as u32,
            d.attribute(dev, Attribute::CapabilityMinor)? as u32,
        ),
        sms: d.attribute(dev, Attribute::Sms)? as u32,
        l2_bytes: d.attribute(dev, Attribute::L2Bytes)?.max(0) as u64,
        memory_bytes: d.total_memory(dev)?,
        memory_clock_khz: clock,
        memory_bus_bits: bus.map(|b| b as u32),
        memory_peak_bytes_per_s: clock.zip(bus).map(|(c, b)| memory_peak_bytes_per_s(c, b as u32)),
        sm_clock_khz: u(Attribute::SmClockKhz).filter(|&c| c > 0),
        ecc: a(Attribute::EccEnabled).map(|e| e != 0),
        link: address.map(|addr| link(&pci_devices.join(&addr), addr)),
    })
}

/// The PCIe link at `dir` (a device's sysfs folder).
fn link(dir: &Path, address: String) -> Link {
    let read = |f: &str| std::fs::read_to_string(dir.join(f)).ok().map(|s| s.trim().to_string());
    let number = |f: &str| read(f).and_then(|s| s.parse().ok());
    Link {
        address,
        speed: read("current_link_speed"),
        max_speed: read("max_link_speed"),
        width: number("current_link_width"),
        max_width: number("max_link_width"),
        numa_node: read("numa_node").and_then(|s| s.parse().ok()).filter(|&n: &i32| n >= 0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An H200's attributes and its sysfs folder give its inventory.
    #[test]
    fn a_device_is_described_from_its_attributes_and_sysfs() {
        let gpu = fake::FakeGpu::h200();
        let sys = tempfile::tempdir().unwrap();
        let dir = sys.path().join("0000:41:00.0");
        std::fs::create_dir(&dir).unwrap();
        for (f, v) in [
            ("current_link_speed", "32.0 GT/s PCIe\n"),
            ("max_link_speed", "32.0 GT/s PCIe\n"),
            ("current_link_width", "16\n"),
            ("max_link_width", "16\n"),
            ("numa_node", "1\n"),
        ] {
            std::fs::write(dir.join(f), v).unwrap();
        }
        let d = inventory(&gpu, 0, sys.path()).unwrap();
        assert_eq!(d.name, "NVIDIA H200");
        assert_eq!((d.compute_capability, d.sms, d.l2_bytes), ((9, 0), 132, 50 << 20));
        assert_eq!(d.memory_peak_bytes_per_s, Some(memory_peak_bytes_per_s(3_201_000, 6144)));
        assert_eq!((d.sm_clock_khz, d.ecc), (Some(1_980_000), Some(true)));
        let link = d.link.unwrap();
        assert_eq!(link.address, "0000:41:00.0");
        assert_eq!((link.speed.as_deref(), link.width, link.numa_node), (Some("32.0 GT/s PCIe"), Some(16), Some(1)));
        // No sysfs folder: the address stays, the rest is unknown.
        let bare = inventory(&gpu, 0, Path::new("/nonexistent")).unwrap().link.unwrap();
        assert_eq!((bare.speed, bare.numa_node), (None, None));
    }
}
