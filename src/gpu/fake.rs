//! A fake GPU driver for tests: an H200's attributes, memory that copies
//! and kernels really change (each kernel replayed on the host), and a
//! clock for each of its two streams that each copy or launch advances by
//! its bytes over its rate, so timed figures are exact. Where a host gap
//! is set, each call also idles its stream that long first, unless the
//! stream is held behind a gate (a kernel spinning until the host raises
//! a flag), which counts the host's time against its limit instead.

use super::{Arg, Attribute, CopyOp, DevicePtr, Driver, Event, GpuError, Kernel, Stream};
use std::cell::{Cell, RefCell};
use std::collections::HashMap;

/// Copy rates, bytes per second: pinned and pageable host memory over the
/// link, and each of a device copy's read and write.
const PINNED: f64 = 50e9;
const PAGEABLE: f64 = 20e9;
const DEVICE: f64 = 2e12;
/// The SMs' copies over the link, to or from pinned memory.
const SM_LINK: f64 = 51e9;
/// Kernels' rates, bytes per second: from memory, and where all a launch
/// touches fits the L2; each once 1,024 threads an SM run (fewer threads,
/// a proportional share).
const KERNEL_MEMORY: f64 = 4e12;
const KERNEL_L2: f64 = 8e12;
const THREADS_PER_SM: f64 = 1024.0;
/// A dependent load's cycles: from the L1, the L2 (its near and far
/// partitions, by the line's parity, in the spread's single loads) and
/// memory, and a page walk's past the TLB's reach.
const L1_CYCLES: u64 = 34;
const L2_CYCLES: u64 = 265;
const L2_NEAR_FAR: [u64; 2] = [200, 330];
const MEMORY_CYCLES: u64 = 650;
const WALK_CYCLES: u64 = 120;
/// Under load: a reading thread's cycles between reads besides its spin,
/// and how far latency rises with the share u of memory's rate readers
/// take (650 · (1 + 1.5 u⁴) cycles).
const READ_CYCLES: f64 = 400.0;
const LOADED_RISE: f64 = 1.5;

pub struct FakeGpu {
    attributes: HashMap<Attribute, i64>,
    memory_bytes: u64,
    /// Device allocations by address, and pinned host ones.
    device: RefCell<HashMap<DevicePtr, Vec<u8>>>,
    pinned: RefCell<HashMap<usize, Box<[u8]>>>,
    next: Cell<DevicePtr>,
    /// The main stream's clock (seconds), the side stream's, and recorded
    /// events: each its time and whether its stream was held by a gate.
    now_s: Cell<f64>,
    side_s: Cell<f64>,
    events: RefCell<Vec<(f64, bool)>>,
    /// The host's time between calls that queue work, and which streams
    /// a gate holds: the gate's flag and limit, and the host's time since.
    host_gap_s: Cell<f64>,
    /// What a copy engine's copy takes besides its bytes.
    copy_latency_s: Cell<f64>,
    held: Cell<[bool; 2]>,
    gate: Cell<Option<(u64, u64)>>,
    held_host_s: Cell<f64>,
    current: Cell<bool>,
    corrupt_pageable: Cell<bool>,
    drop_device: Cell<bool>,
    kernels_loaded: Cell<bool>,
    no_compiler: Cell<bool>,
    no_mapping: Cell<bool>,
    broken: Cell<Option<Kernel>>,
    /// The L1's bytes, the driver's page and the pages the TLB reaches.
    l1_bytes: u64,
    page_bytes: u64,
    tlb_pages: u64,
    /// Each chain built: its slots and stride in words, by address.
    chains: RefCell<HashMap<DevicePtr, (u64, u64)>>,
    /// The threads of a block of the last launch.
    last_block: Cell<u32>,
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
            side_s: Cell::new(0.0),
            events: RefCell::default(),
            host_gap_s: Cell::new(0.0),
            copy_latency_s: Cell::new(0.0),
            held: Cell::new([false; 2]),
            gate: Cell::new(None),
            held_host_s: Cell::new(0.0),
            current: Cell::new(false),
            corrupt_pageable: Cell::new(false),
            drop_device: Cell::new(false),
            kernels_loaded: Cell::new(false),
            no_compiler: Cell::new(false),
            no_mapping: Cell::new(false),
            broken: Cell::new(None),
            l1_bytes: 256 << 10,
            page_bytes: 2 << 20,
            tlb_pages: 16,
            chains: RefCell::default(),
            last_block: Cell::new(0),
        }
    }

    /// An H200 with `sms` SMs and an L2 of `l2` bytes, an L1 of an eighth
    /// of it, and pages of 64 KiB, eight of which its TLB reaches.
    pub fn small(sms: i64, l2: i64) -> FakeGpu {
        let mut g = FakeGpu::h200();
        g.attributes.insert(Attribute::Sms, sms);
        g.attributes.insert(Attribute::L2Bytes, l2);
        (g.l1_bytes, g.page_bytes, g.tlb_pages) = (l2 as u64 / 8, 64 << 10, 8);
        g
    }

    /// No run-time compiler: loading the kernels fails.
    pub fn without_compiler(&self) {
        self.no_compiler.set(true);
    }

    /// Pinned memory is never mapped for the device.
    pub fn without_mapping(&self) {
        self.no_mapping.set(true);
    }

    /// Kernel `k` runs, takes its time and stores nothing.
    pub fn break_kernel(&self, k: Kernel) {
        self.broken.set(Some(k));
    }

    /// Every copy from pageable memory to the device flips its first byte.
    pub fn corrupt_pageable_reads(&self) {
        self.corrupt_pageable.set(true);
    }

    /// Every copy within the device moves nothing.
    pub fn drop_device_copies(&self) {
        self.drop_device.set(true);
    }

    /// The host takes `s` seconds between calls that queue work.
    pub fn host_gap(&self, s: f64) {
        self.host_gap_s.set(s);
    }

    /// Each copy engine's copy takes `s` seconds besides its bytes.
    pub fn copy_latency(&self, s: f64) {
        self.copy_latency_s.set(s);
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

    /// `f` with stream `s`'s clock as the one work advances, after the
    /// host's gap to queue it (counted against a gate's limit instead,
    /// where one holds the stream).
    fn on<T>(&self, s: Stream, f: impl FnOnce() -> T) -> T {
        let gap = self.host_gap_s.get();
        if self.held.get()[s as usize] {
            self.held_host_s.set(self.held_host_s.get() + gap);
        } else {
            let clock = if s == Stream::Main { &self.now_s } else { &self.side_s };
            clock.set(clock.get() + gap);
        }
        if s == Stream::Side {
            self.now_s.swap(&self.side_s);
        }
        let out = f();
        if s == Stream::Side {
            self.now_s.swap(&self.side_s);
        }
        out
    }

    /// The streams run on: a gate pending ends, its second flag word
    /// saying whether the host raised the first within its limit.
    fn settle(&self) -> Result<(), GpuError> {
        if let Some((flag, limit_ns)) = self.gate.take() {
            let raised = self.host_word(flag)? != 0 && self.held_host_s.get() * 1e9 <= limit_ns as f64;
            self.set_host_word(flag + 8, u64::from(!raised))?;
        }
        self.held.set([false; 2]);
        self.held_host_s.set(0.0);
        Ok(())
    }

    /// The pinned allocation holding `n` bytes at address `at`, and the
    /// offset of `at` in it.
    fn pinned_at(&self, at: u64, n: usize) -> Result<(usize, usize), GpuError> {
        let pinned = self.pinned.borrow();
        let (&start, _) = pinned
            .iter()
            .find(|(&p, b)| (p as u64..(p + b.len()) as u64).contains(&at) && at as usize + n <= p + b.len())
            .ok_or_else(illegal)?;
        Ok((start, at as usize - start))
    }

    fn host_word(&self, at: u64) -> Result<u64, GpuError> {
        let (start, i) = self.pinned_at(at, 8)?;
        Ok(u64::from_ne_bytes(self.pinned.borrow()[&start][i..i + 8].try_into().unwrap()))
    }

    fn set_host_word(&self, at: u64, v: u64) -> Result<(), GpuError> {
        let (start, i) = self.pinned_at(at, 8)?;
        self.pinned.borrow_mut().get_mut(&start).unwrap()[i..i + 8].copy_from_slice(&v.to_ne_bytes());
        Ok(())
    }

    /// `n` bytes at `at`, in device or mapped pinned memory.
    fn read(&self, at: u64, n: usize) -> Result<Vec<u8>, GpuError> {
        if let Ok((start, i)) = self.pinned_at(at, n) {
            return Ok(self.pinned.borrow()[&start][i..i + n].to_vec());
        }
        let dev = self.device.borrow();
        let (p, b) = dev.iter().find(|(&p, b)| (p..p + b.len() as u64).contains(&at)).ok_or_else(illegal)?;
        b.get((at - p) as usize..(at - p) as usize + n).map(<[u8]>::to_vec).ok_or_else(illegal)
    }

    fn write(&self, at: u64, bytes: &[u8]) -> Result<(), GpuError> {
        let n = bytes.len();
        if let Ok((start, i)) = self.pinned_at(at, n) {
            self.pinned.borrow_mut().get_mut(&start).unwrap()[i..i + n].copy_from_slice(bytes);
            return Ok(());
        }
        let mut dev = self.device.borrow_mut();
        let (p, b) = dev.iter_mut().find(|(&p, b)| (p..p + b.len() as u64).contains(&at)).ok_or_else(illegal)?;
        let i = (at - *p) as usize;
        b.get_mut(i..i + n).ok_or_else(illegal)?.copy_from_slice(bytes);
        Ok(())
    }

    /// kernels.cu's gate and SM copy, replayed: the gate holds stream
    /// `s` until the streams next settle; the copy moves its bytes at the
    /// link's rate for SMs (a device's, where neither end is the host).
    fn link_kernel(&self, s: Stream, k: Kernel, args: &[Arg]) -> Result<(), GpuError> {
        let invalid = || Self::error("cuLaunchKernel", 1, "CUDA_ERROR_INVALID_VALUE");
        match (k, args) {
            (Kernel::Gate, &[Arg::Ptr(flag), Arg::U64(limit_ns)]) => {
                self.gate.set(Some((flag, limit_ns)));
                let mut held = self.held.get();
                held[s as usize] = true;
                self.held.set(held);
            }
            (Kernel::SmCopy, &[Arg::Ptr(src), Arg::Ptr(dst), Arg::U64(n)]) => {
                let bytes = self.read(src, 16 * n as usize)?;
                self.write(dst, &bytes)?;
                let host = self.pinned_at(src, 1).is_ok() || self.pinned_at(dst, 1).is_ok();
                self.advance(bytes.len(), if host { SM_LINK } else { DEVICE });
            }
            _ => return Err(invalid()),
        }
        Ok(())
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
    fn page_bytes(&self, _: usize) -> Result<u64, GpuError> {
        Ok(self.page_bytes)
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
    fn mapped(&self, p: *mut u8) -> Result<DevicePtr, GpuError> {
        let refused = || Self::error("cuMemHostGetDevicePointer_v2", 1, "CUDA_ERROR_INVALID_VALUE");
        if self.no_mapping.get() {
            return Err(refused());
        }
        // Unified addressing: pinned memory has one address for both.
        self.pinned_at(p as u64, 1).map(|_| p as u64).map_err(|_| refused())
    }
    unsafe fn copy_on(&self, s: Stream, op: CopyOp) -> Result<(), GpuError> {
        let host = match op {
            CopyOp::HostToDevice { src, .. } => Some(src),
            CopyOp::DeviceToHost { dst, .. } => Some(dst as *const u8),
            CopyOp::DeviceToDevice { .. } => None,
        };
        if self.held.get()[s as usize] && host.is_some_and(|p| !self.is_pinned(p)) {
            // The real driver may wait for the stream before staging it:
            // for the gate, which waits for the host.
            return Err(Self::error("cuMemcpyAsync", 0, "a pageable copy behind a gate would stall"));
        }
        // SAFETY: the caller's promise, passed on.
        self.on(s, || unsafe { self.copy_now(op) })
    }
    fn record_on(&self, s: Stream) -> Result<Event, GpuError> {
        self.on(s, || {
            let mut e = self.events.borrow_mut();
            e.push((self.now_s.get(), self.held.get()[s as usize]));
            Ok(Event(e.len() - 1))
        })
    }
    fn wait_for(&self, s: Stream, e: &Event) -> Result<(), GpuError> {
        let (at, held) = self.events.borrow()[e.0];
        let clock = if s == Stream::Main { &self.now_s } else { &self.side_s };
        clock.set(clock.get().max(at));
        let mut h = self.held.get();
        h[s as usize] |= held;
        self.held.set(h);
        Ok(())
    }
    fn elapsed_ms(&self, from: Event, to: Event) -> Result<f64, GpuError> {
        self.settle()?;
        let e = self.events.borrow();
        Ok((e[to.0].0 - e[from.0].0) * 1e3)
    }
    fn discard(&self, _: Event) {}
    fn synchronize(&self) -> Result<(), GpuError> {
        self.settle()
    }
    fn load_kernels(&self, _: u32, _: u32) -> Result<(), GpuError> {
        if self.no_compiler.get() {
            return Err(Self::error("NVRTC", 0, "NVRTC was not found: install CUDA's run-time compiler"));
        }
        self.kernels_loaded.set(self.current.get());
        Ok(())
    }
    unsafe fn launch_on(&self, s: Stream, k: Kernel, grid: u32, block: u32, args: &[Arg]) -> Result<(), GpuError> {
        if !self.kernels_loaded.get() {
            return Err(Self::error("cuLaunchKernel", 400, "CUDA_ERROR_INVALID_HANDLE"));
        }
        self.on(s, || match k {
            Kernel::Gate | Kernel::SmCopy => self.link_kernel(s, k, args),
            _ => self.launch_now(k, grid, block, args),
        })
    }
}

impl FakeGpu {
    /// A copy done, its time on the current clock.
    ///
    /// # Safety
    /// As [`Driver::copy_on`].
    unsafe fn copy_now(&self, op: CopyOp) -> Result<(), GpuError> {
        self.now_s.set(self.now_s.get() + self.copy_latency_s.get());
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
    /// A launch of one of the streaming or latency kernels, replayed.
    fn launch_now(&self, k: Kernel, grid: u32, block: u32, args: &[Arg]) -> Result<(), GpuError> {
        let invalid = || Self::error("cuLaunchKernel", 1, "CUDA_ERROR_INVALID_VALUE");
        if matches!(k, Kernel::Chain | Kernel::Chase | Kernel::Spread | Kernel::Loaded) {
            let words: Vec<u64> = args
                .iter()
                .map(|a| match *a {
                    Arg::Ptr(p) | Arg::U64(p) => p,
                    Arg::F64(x) => x.to_bits(),
                })
                .collect();
            self.last_block.set(block);
            return self.chase_kernel(k, grid, &words);
        }
        let Some(&Arg::U64(n)) = args.last() else { return Err(invalid()) };
        let n = n as usize;
        let ptr = |i: usize| match args.get(i) {
            Some(&Arg::Ptr(p)) => Ok(p),
            _ => Err(invalid()),
        };
        let num = |i: usize| match args.get(i) {
            Some(&Arg::F64(x)) => Ok(x),
            _ => Err(invalid()),
        };
        let stores = replay(k, n, grid as usize, &ptr, &num, &self.device.borrow())?;
        if self.broken.get() != Some(k) {
            let mut dev = self.device.borrow_mut();
            for (p, values) in stores {
                let to = dev.get_mut(&p).ok_or_else(invalid)?;
                for (i, v) in values.iter().enumerate() {
                    to[i * 8..i * 8 + 8].copy_from_slice(&v.to_ne_bytes());
                }
            }
        }
        let bytes = n * 8 * super::stream::doubles_moved(k) as usize;
        let rate = if bytes as i64 <= self.attributes[&Attribute::L2Bytes] { KERNEL_L2 } else { KERNEL_MEMORY };
        let share = (grid as f64 * block as f64 / (self.attributes[&Attribute::Sms] as f64 * THREADS_PER_SM)).min(1.0);
        self.advance(bytes, rate * share);
        Ok(())
    }
}

impl FakeGpu {
    /// The device word at byte address `at`, or an illegal address.
    fn word(&self, at: u64) -> Result<u64, GpuError> {
        let dev = self.device.borrow();
        let (start, bytes) = dev.iter().find(|(&p, b)| (p..p + b.len() as u64).contains(&at)).ok_or_else(illegal)?;
        let i = (at - start) as usize;
        bytes.get(i..i + 8).map(|b| u64::from_ne_bytes(b.try_into().unwrap())).ok_or_else(illegal)
    }

    fn set_word(&self, at: u64, v: u64) -> Result<(), GpuError> {
        let mut dev = self.device.borrow_mut();
        let (start, bytes) =
            dev.iter_mut().find(|(&p, b)| (p..p + b.len() as u64).contains(&at)).ok_or_else(illegal)?;
        let i = (at - *start) as usize;
        bytes.get_mut(i..i + 8).ok_or_else(illegal)?.copy_from_slice(&v.to_ne_bytes());
        Ok(())
    }

    /// The word a chase from word `j` of chain `a` reaches after `loads`.
    fn walk(&self, a: u64, mut j: u64, loads: u64) -> Result<u64, GpuError> {
        for _ in 0..loads {
            j = self.word(a + 8 * j)?;
        }
        Ok(j)
    }

    /// A dependent load's cycles on chain `a` as last built: by the lines
    /// its slots touch (a slot a line) and the whole pages they span.
    fn load_cycles(&self, a: u64, l2_only: bool) -> u64 {
        let (slots, stride) = self.chains.borrow().get(&a).copied().unwrap_or((1, 1));
        let (lines, span) = (slots * 128, slots * stride * 8);
        let l2 = self.attributes[&Attribute::L2Bytes] as u64;
        let hit = match lines {
            _ if l2_only => L2_CYCLES,
            x if x <= self.l1_bytes => L1_CYCLES,
            x if x <= l2 => L2_CYCLES,
            _ => MEMORY_CYCLES,
        };
        hit + if span / self.page_bytes > self.tlb_pages { WALK_CYCLES } else { 0 }
    }

    /// kernels.cu's chain, chase and spread, replayed: the chain's words
    /// written, a chase's end and cycles stored, and the stream's clock
    /// advanced by the loads' cycles at the SM clock.
    fn chase_kernel(&self, k: Kernel, grid: u32, w: &[u64]) -> Result<(), GpuError> {
        let arg =
            |i: usize| w.get(i).copied().ok_or_else(|| Self::error("cuLaunchKernel", 1, "CUDA_ERROR_INVALID_VALUE"));
        let ghz = self.attributes[&Attribute::SmClockKhz] as f64 / 1e6;
        match k {
            Kernel::Chain => {
                let (a, slots, stride, key) = (arg(0)?, arg(1)?, arg(2)?, arg(3)?);
                for p in 0..slots {
                    let at = super::ladder::slot(p, slots, key) * stride;
                    self.set_word(a + 8 * at, super::ladder::slot((p + 1) % slots, slots, key) * stride)?;
                }
                self.chains.borrow_mut().insert(a, (slots, stride));
                self.advance((slots * 8) as usize, KERNEL_MEMORY);
            }
            Kernel::Chase => {
                let (a, start, warm, steps, l2_only, out) = (arg(0)?, arg(1)?, arg(2)?, arg(3)?, arg(4)? != 0, arg(5)?);
                let end = self.walk(a, start, warm + steps)?;
                let cycles = self.load_cycles(a, l2_only);
                self.set_word(out, end)?;
                self.set_word(out + 8, steps * cycles)?;
                self.now_s.set(self.now_s.get() + ((warm + steps) * cycles) as f64 / ghz * 1e-9);
            }
            Kernel::Loaded => {
                let (a, start, steps, delay, out) = (arg(0)?, arg(1)?, arg(2)?, arg(5)?, arg(7)?);
                let threads = (grid as f64 - 1.0) * self.last_block.get() as f64;
                let rate = (threads * 8.0 * ghz * 1e9 / (delay as f64 + READ_CYCLES)).min(KERNEL_MEMORY);
                let cycles = MEMORY_CYCLES as f64 * (1.0 + LOADED_RISE * (rate / KERNEL_MEMORY).powi(4));
                let s = steps as f64 * cycles / ghz * 1e-9;
                self.set_word(out + 8, self.walk(a, start, steps)?)?;
                self.set_word(out + 16, (steps as f64 * cycles).round() as u64)?;
                self.set_word(out + 24, (rate * s).round() as u64)?;
                self.set_word(out + 32, (s * 1e9).round() as u64)?;
                self.now_s.set(self.now_s.get() + s);
            }
            _ => {
                let (a, slots, stride, key) = (arg(0)?, arg(1)?, arg(2)?, arg(3)?);
                let (spacing, steps, each, out) = (arg(4)?, arg(5)?, arg(6)?, arg(7)?);
                let sms = self.attributes[&Attribute::Sms] as u64;
                let each = each.min(steps);
                let cost = |j: u64, sm: u64| L2_NEAR_FAR[(j * 8 / 128 % 2) as usize] + sm % 4;
                for b in 0..grid as u64 {
                    let (sm, mine) = (b % sms, out + 8 * b * (3 + each));
                    let start = super::ladder::slot(b * spacing % slots, slots, key) * stride;
                    let mut x = self.walk(a, start, steps)?;
                    for s in 0..each {
                        x = self.word(a + 8 * x)?;
                        self.set_word(mine + 8 * (3 + s), cost(x, sm))?;
                    }
                    let mut total = 0;
                    for _ in 0..steps {
                        x = self.word(a + 8 * x)?;
                        total += cost(x, sm);
                    }
                    self.set_word(mine, sm)?;
                    self.set_word(mine + 8, x)?;
                    self.set_word(mine + 16, total)?;
                }
                self.now_s.set(self.now_s.get() + ((2 * steps + each) * L2_CYCLES) as f64 / ghz * 1e-9);
            }
        }
        Ok(())
    }
}

fn illegal() -> GpuError {
    FakeGpu::error("cuLaunchKernel", 700, "CUDA_ERROR_ILLEGAL_ADDRESS")
}

type Stores = Vec<(DevicePtr, Vec<f64>)>;

/// What kernel `k` stores over `n` elements, replayed on the host: each
/// device pointer written and its new values (a reduction's whole sum in
/// its first partial, the other `grid - 1` zero).
fn replay(
    k: Kernel,
    n: usize,
    grid: usize,
    ptr: &dyn Fn(usize) -> Result<DevicePtr, GpuError>,
    num: &dyn Fn(usize) -> Result<f64, GpuError>,
    dev: &HashMap<DevicePtr, Vec<u8>>,
) -> Result<Stores, GpuError> {
    let load = |i: usize| -> Result<Vec<f64>, GpuError> {
        let bytes =
            dev.get(&ptr(i)?).ok_or_else(|| FakeGpu::error("cuLaunchKernel", 700, "CUDA_ERROR_ILLEGAL_ADDRESS"))?;
        bytes
            .get(..n * 8)
            .map(|b| b.chunks_exact(8).map(|c| f64::from_ne_bytes(c.try_into().unwrap())).collect())
            .ok_or_else(|| FakeGpu::error("cuLaunchKernel", 700, "CUDA_ERROR_ILLEGAL_ADDRESS"))
    };
    let zip =
        |x: &[f64], y: &[f64], f: &dyn Fn(f64, f64) -> f64| x.iter().zip(y).map(|(&a, &b)| f(a, b)).collect::<Vec<_>>();
    let partials = |sum: f64| std::iter::once(sum).chain(std::iter::repeat(0.0)).take(grid.max(1)).collect();
    Ok(match k {
        Kernel::Init => (0..3).map(|i| Ok((ptr(i)?, vec![num(3 + i)?; n]))).collect::<Result<_, GpuError>>()?,
        Kernel::Copy => vec![(ptr(1)?, load(0)?)],
        Kernel::Mul => vec![(ptr(0)?, load(1)?.iter().map(|c| num(2).map(|s| s * c)).collect::<Result<_, _>>()?)],
        Kernel::Add => vec![(ptr(2)?, zip(&load(0)?, &load(1)?, &|a, b| a + b))],
        Kernel::Triad | Kernel::Nstream => {
            let s = num(3)?;
            let (a, bc) = (load(0)?, zip(&load(1)?, &load(2)?, &|b, c| s.mul_add(c, b)));
            let new = if k == Kernel::Triad { bc } else { zip(&a, &bc, &|a, x| a + x) };
            vec![(ptr(0)?, new)]
        }
        Kernel::Dot => vec![(ptr(2)?, partials(zip(&load(0)?, &load(1)?, &|a, b| a * b).iter().sum()))],
        Kernel::Read => vec![(ptr(1)?, partials(load(0)?.iter().sum()))],
        Kernel::Write => vec![(ptr(0)?, vec![num(1)?; n])],
        // Replayed by FakeGpu::chase_kernel and FakeGpu::link_kernel.
        Kernel::Chain | Kernel::Chase | Kernel::Spread | Kernel::Loaded | Kernel::Gate | Kernel::SmCopy => vec![],
    })
}
