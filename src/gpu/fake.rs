//! A fake GPU driver for tests: an H200's attributes, memory that copies
//! really move, and a stream clock that each copy advances by its bytes
//! over its path's rate, so timed figures are exact.

use super::{Attribute, CopyOp, DevicePtr, Driver, Event, GpuError};
use std::cell::{Cell, RefCell};
use std::collections::HashMap;

/// Copy rates, bytes per second: pinned and pageable host memory over the
/// link, and each of a device copy's read and write.
const PINNED: f64 = 50e9;
const PAGEABLE: f64 = 20e9;
const DEVICE: f64 = 2e12;

pub struct FakeGpu {
    attributes: HashMap<Attribute, i64>,
    memory_bytes: u64,
    /// Device allocations by address, and pinned host ones.
    device: RefCell<HashMap<DevicePtr, Vec<u8>>>,
    pinned: RefCell<HashMap<usize, Box<[u8]>>>,
    next: Cell<DevicePtr>,
    /// The stream's clock (seconds), and recorded events.
    now_s: Cell<f64>,
    events: RefCell<Vec<f64>>,
    current: Cell<bool>,
    corrupt_pageable: Cell<bool>,
    drop_device: Cell<bool>,
}

impl FakeGpu {
    /// One H200: 132 SMs at 1.98 GHz, 50 MiB of L2, 141 GB of HBM3e at
    /// 3.2 GHz over 6,144 bits, ECC on, at PCI 0000:41:00.0.
    pub fn h200() -> FakeGpu {
        use Attribute::*;
        let attributes = [
            (Sms, 132),
            (SmClockKhz, 1_980_000),
            (EccEnabled, 1),
            (PciDomain, 0),
            (PciBus, 0x41),
            (PciDevice, 0),
            (MemoryClockKhz, 3_201_000),
            (MemoryBusBits, 6144),
            (L2Bytes, 50 << 20),
            (CapabilityMajor, 9),
            (CapabilityMinor, 0),
        ];
        FakeGpu {
            attributes: attributes.into_iter().collect(),
            memory_bytes: 150_754_820_096,
            device: RefCell::default(),
            pinned: RefCell::default(),
            next: Cell::new(1 << 40),
            now_s: Cell::new(0.0),
            events: RefCell::default(),
            current: Cell::new(false),
            corrupt_pageable: Cell::new(false),
            drop_device: Cell::new(false),
        }
    }

    /// Every copy from pageable memory to the device flips its first byte.
    pub fn corrupt_pageable_reads(&self) {
        self.corrupt_pageable.set(true);
    }

    /// Every copy within the device moves nothing.
    pub fn drop_device_copies(&self) {
        self.drop_device.set(true);
    }

    /// Allocations not yet freed, device and pinned.
    pub fn live_allocations(&self) -> usize {
        self.device.borrow().len() + self.pinned.borrow().len()
    }

    fn is_pinned(&self, p: *const u8) -> bool {
        let a = p as usize;
        self.pinned.borrow().iter().any(|(&start, b)| (start..start + b.len()).contains(&a))
    }

    fn error(call: &'static str, code: i32, name: &str) -> GpuError {
        GpuError { call, code, name: name.into() }
    }

    fn advance(&self, bytes: usize, rate: f64) {
        self.now_s.set(self.now_s.get() + bytes as f64 / rate);
    }
}

impl Driver for FakeGpu {
    fn version(&self) -> Result<u32, GpuError> {
        Ok(13000)
    }
    fn count(&self) -> Result<usize, GpuError> {
        Ok(1)
    }
    fn name(&self, dev: usize) -> Result<String, GpuError> {
        (dev == 0).then(|| "NVIDIA H200".to_string()).ok_or(Self::error(
            "cuDeviceGet",
            101,
            "CUDA_ERROR_INVALID_DEVICE",
        ))
    }
    fn attribute(&self, _: usize, a: Attribute) -> Result<i64, GpuError> {
        self.attributes.get(&a).copied().ok_or(Self::error("cuDeviceGetAttribute", 1, "CUDA_ERROR_INVALID_VALUE"))
    }
    fn total_memory(&self, _: usize) -> Result<u64, GpuError> {
        Ok(self.memory_bytes)
    }
    fn use_device(&self, dev: usize) -> Result<(), GpuError> {
        self.name(dev)?;
        self.current.set(true);
        Ok(())
    }
    fn release(&self) {
        self.current.set(false);
    }
    fn alloc(&self, bytes: usize) -> Result<DevicePtr, GpuError> {
        let used: usize = self.device.borrow().values().map(Vec::len).sum();
        if !self.current.get() || (used + bytes) as u64 > self.memory_bytes {
            return Err(Self::error("cuMemAlloc_v2", 2, "CUDA_ERROR_OUT_OF_MEMORY"));
        }
        let p = self.next.get();
        self.next.set(p + bytes as u64 + 4096);
        self.device.borrow_mut().insert(p, vec![0; bytes]);
        Ok(p)
    }
    fn free(&self, p: DevicePtr) {
        self.device.borrow_mut().remove(&p);
    }
    fn alloc_pinned(&self, bytes: usize) -> Result<*mut u8, GpuError> {
        let mut b = vec![0u8; bytes].into_boxed_slice();
        let p = b.as_mut_ptr();
        self.pinned.borrow_mut().insert(p as usize, b);
        Ok(p)
    }
    fn free_pinned(&self, p: *mut u8) {
        self.pinned.borrow_mut().remove(&(p as usize));
    }
    unsafe fn copy(&self, op: CopyOp) -> Result<(), GpuError> {
        let mut dev = self.device.borrow_mut();
        let missing = || Self::error("cuMemcpy", 1, "CUDA_ERROR_INVALID_VALUE");
        match op {
            CopyOp::HostToDevice { dst, src, bytes } => {
                let pinned = self.is_pinned(src);
                // SAFETY: the caller's promise: src holds `bytes` bytes.
                let from = unsafe { std::slice::from_raw_parts(src, bytes) };
                let to = dev.get_mut(&dst).ok_or_else(missing)?;
                to[..bytes].copy_from_slice(from);
                if !pinned && self.corrupt_pageable.get() {
                    to[0] ^= 0xff;
                }
                self.advance(bytes, if pinned { PINNED } else { PAGEABLE });
            }
            CopyOp::DeviceToHost { dst, src, bytes } => {
                let pinned = self.is_pinned(dst);
                // SAFETY: the caller's promise: dst holds `bytes` bytes.
                let to = unsafe { std::slice::from_raw_parts_mut(dst, bytes) };
                to.copy_from_slice(&dev.get(&src).ok_or_else(missing)?[..bytes]);
                self.advance(bytes, if pinned { PINNED } else { PAGEABLE });
            }
            CopyOp::DeviceToDevice { dst, src, bytes } => {
                let from = dev.get(&src).ok_or_else(missing)?[..bytes].to_vec();
                if !self.drop_device.get() {
                    dev.get_mut(&dst).ok_or_else(missing)?[..bytes].copy_from_slice(&from);
                }
                self.advance(2 * bytes, 2.0 * DEVICE);
            }
        }
        Ok(())
    }
    fn record(&self) -> Result<Event, GpuError> {
        let mut e = self.events.borrow_mut();
        e.push(self.now_s.get());
        Ok(Event(e.len() - 1))
    }
    fn elapsed_ms(&self, from: Event, to: Event) -> Result<f64, GpuError> {
        let e = self.events.borrow();
        Ok((e[to.0] - e[from.0]) * 1e3)
    }
    fn discard(&self, _: Event) {}
    fn synchronize(&self) -> Result<(), GpuError> {
        Ok(())
    }
}
