//! The gate copies queue behind (nvbandwidth's way): a one-thread kernel
//! spinning on a flag in pinned host memory the device maps. The host
//! holds the gate, queues a sample's events and copies behind it, then
//! raises the flag: the copies start back to back, and no gap of the
//! host's between two of them is timed. The kernel ends by itself after
//! [`LIMIT_NS`], so a host that never raises the flag stalls the stream
//! for that long, not for ever; the gate then says it was not held
//! throughout, and the sample is not called gated.

use super::{Arg, DevicePtr, Driver, GpuError, Kernel, Stream};

/// The longest a gate holds its stream: far above the microseconds the
/// host takes to queue a sample.
pub const LIMIT_NS: u64 = 1_000_000_000;

/// What the gate's second word holds before the kernel writes it.
const UNSET: u64 = 2;

/// A gate: two words of pinned memory (the flag, and what the kernel
/// says of it) and their device address.
pub struct Gate<'a> {
    d: &'a dyn Driver,
    words: *mut u64,
    mapped: DevicePtr,
}

impl<'a> Gate<'a> {
    /// A gate on the device in use, whose kernels are loaded.
    pub fn new(d: &'a dyn Driver) -> Result<Gate<'a>, GpuError> {
        let words = d.alloc_pinned(16)?.cast::<u64>();
        match d.mapped(words.cast()) {
            Ok(mapped) => Ok(Gate { d, words, mapped }),
            Err(e) => {
                d.free_pinned(words.cast());
                Err(e)
            }
        }
    }

    /// Queues the gate on the main stream, its flag down.
    pub fn hold(&self) -> Result<(), GpuError> {
        // SAFETY: two words of pinned memory this gate owns; the device
        // reads and writes them only while a gate kernel runs, and none
        // runs now (the last was waited for by the stream's events).
        unsafe {
            self.words.write_volatile(0);
            self.words.add(1).write_volatile(UNSET);
        }
        std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
        // SAFETY: kernels.cu's memperf_gate takes the mapped words and a limit.
        unsafe { self.d.launch_on(Stream::Main, Kernel::Gate, 1, 1, &[Arg::Ptr(self.mapped), Arg::U64(LIMIT_NS)]) }
    }

    /// Raises the flag: what was queued behind the gate starts.
    pub fn release(&self) {
        std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
        // SAFETY: the first of the two words this gate owns.
        unsafe { self.words.write_volatile(1) };
    }

    /// Whether the last gate held until the host raised its flag; asked
    /// once the stream has passed it.
    pub fn held_throughout(&self) -> bool {
        std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
        // SAFETY: the second of the two words this gate owns.
        unsafe { self.words.add(1).read_volatile() == 0 }
    }
}

impl Drop for Gate<'_> {
    fn drop(&mut self) {
        // A gate still queued reads its words until it ends.
        self.release();
        let _ = self.d.synchronize();
        self.d.free_pinned(self.words.cast());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::fake::FakeGpu;

    /// A gate the host releases after queueing is held throughout; one the
    /// host waits on first, never raised, ends by its limit and says so.
    #[test]
    fn a_gate_says_whether_the_host_released_it() {
        let gpu = FakeGpu::h200();
        gpu.use_device(0).unwrap();
        gpu.load_kernels(9, 0).unwrap();
        let gate = Gate::new(&gpu).unwrap();
        gate.hold().unwrap();
        gate.release();
        gpu.synchronize().unwrap();
        assert!(gate.held_throughout());
        gate.hold().unwrap();
        gpu.synchronize().unwrap();
        assert!(!gate.held_throughout(), "waited on before it was raised");
        // The fake refuses what the real driver would stall on: a pageable
        // copy behind a held gate.
        let (dev, page) = (gpu.alloc(64).unwrap(), vec![0u8; 64]);
        gate.hold().unwrap();
        // SAFETY: 64 bytes each end, alive past the synchronize.
        let behind = unsafe { gpu.copy(crate::gpu::CopyOp::HostToDevice { dst: dev, src: page.as_ptr(), bytes: 64 }) };
        assert!(behind.is_err());
        gate.release();
        gpu.synchronize().unwrap();
        gpu.free(dev);
        drop(gate);
        assert_eq!(gpu.live_allocations(), 0);
    }
}
