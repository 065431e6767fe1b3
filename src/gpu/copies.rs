//! The driver's own copies, timed by its events: host to device and back
//! from pinned and from pageable memory (the copy engines), and within
//! the device. Each sample is `copies_per_sample` copies queued back to
//! back between two events; after one untimed round, the paths take turns
//! in an order shuffled anew each round, so the host's drift spreads over
//! all of them. Then each path is checked on its own: fresh bytes through
//! it, into a destination cleared first, read back through pinned memory.

use super::{CopyOp, DevicePtr, Driver, GpuError};
use crate::rng::SplitMix64;
use crate::timing::Summary;
use memperf_model::outcome::gpu::{Direction, HostMemory, Transfer};

/// What to copy, and how often.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Plan {
    pub bytes: usize,
    pub copies_per_sample: usize,
    pub rounds: usize,
    pub seed: u64,
}

/// The least a sample moves: 64 MiB, 13 µs at 5 TB/s, far above the
/// events' resolution of about half a microsecond.
pub const MIN_SAMPLE_BYTES: usize = 64 << 20;

/// The paths, in the order they are reported.
pub const PATHS: [(Direction, HostMemory); 5] = [
    (Direction::HostToDevice, HostMemory::Pinned),
    (Direction::DeviceToHost, HostMemory::Pinned),
    (Direction::HostToDevice, HostMemory::Pageable),
    (Direction::DeviceToHost, HostMemory::Pageable),
    (Direction::DeviceToDevice, HostMemory::None),
];

/// The buffers of one device: two on the device, two pinned, two pageable.
struct Buffers<'a> {
    d: &'a dyn Driver,
    device: [DevicePtr; 2],
    pinned: [*mut u8; 2],
    pageable: [Vec<u8>; 2],
    bytes: usize,
}

impl<'a> Buffers<'a> {
    fn new(d: &'a dyn Driver, bytes: usize) -> Result<Buffers<'a>, GpuError> {
        // Each is freed by Drop, the ones made before a failure included.
        let mut b = Buffers { d, device: [0; 2], pinned: [std::ptr::null_mut(); 2], pageable: [vec![], vec![]], bytes };
        for k in 0..2 {
            b.device[k] = d.alloc(bytes)?;
            b.pinned[k] = d.alloc_pinned(bytes)?;
            // Written, so no copy pays for faulting its pages in.
            b.pageable[k] = vec![1u8; bytes];
        }
        Ok(b)
    }

    fn host(&mut self, host: HostMemory, k: usize) -> &mut [u8] {
        match host {
            // SAFETY: pinned[k] holds `bytes` bytes, allocated by the driver.
            HostMemory::Pinned => unsafe { std::slice::from_raw_parts_mut(self.pinned[k], self.bytes) },
            _ => &mut self.pageable[k],
        }
    }

    /// The copy of one path: from host source 0 to device 0, from device 0
    /// to host destination 1, or from device 0 to device 1.
    fn op(&mut self, direction: Direction, host: HostMemory) -> CopyOp {
        let bytes = self.bytes;
        let src = self.host(host, 0).as_ptr();
        let dst = self.host(host, 1).as_mut_ptr();
        match direction {
            Direction::HostToDevice => CopyOp::HostToDevice { dst: self.device[0], src, bytes },
            Direction::DeviceToHost => CopyOp::DeviceToHost { dst, src: self.device[0], bytes },
            Direction::DeviceToDevice => CopyOp::DeviceToDevice { dst: self.device[1], src: self.device[0], bytes },
        }
    }
}

impl Drop for Buffers<'_> {
    fn drop(&mut self) {
        let _ = self.d.synchronize();
        for k in 0..2 {
            if self.device[k] != 0 {
                self.d.free(self.device[k]);
            }
            if !self.pinned[k].is_null() {
                self.d.free_pinned(self.pinned[k]);
            }
        }
    }
}

/// Byte `i` of the pattern `seed` gives.
fn pattern(seed: u64, i: usize) -> u8 {
    ((i as u64 ^ seed).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 56) as u8
}

/// One sample of a path: its copies between two events, in bytes per
/// second (a copy within the device reads and writes its bytes).
fn sample(b: &mut Buffers, plan: &Plan, path: (Direction, HostMemory)) -> Result<f64, GpuError> {
    let d = b.d;
    let from = d.record()?;
    let queued = (0..plan.copies_per_sample).try_for_each(|_| {
        let op = b.op(path.0, path.1);
        // SAFETY: the buffers outlive the stream's pass (elapsed_ms waits).
        unsafe { d.copy(op) }
    });
    let to = match queued.and_then(|_| d.record()) {
        Ok(to) => to,
        Err(e) => {
            d.discard(from);
            return Err(e);
        }
    };
    let s = d.elapsed_ms(from, to)? * 1e-3;
    let moved =
        (plan.bytes * plan.copies_per_sample) as f64 * if path.0 == Direction::DeviceToDevice { 2.0 } else { 1.0 };
    if s > 0.0 {
        Ok(moved / s)
    } else {
        Err(GpuError { call: "cuEventElapsedTime", code: 0, name: "no time between the events".into() })
    }
}

/// Whether a path moves its bytes: fresh ones (`seed`) sent through it
/// into a destination cleared first; where the path does not end in
/// pinned memory, read back through pinned memory.
fn check(b: &mut Buffers, path: (Direction, HostMemory), seed: u64) -> Result<bool, GpuError> {
    let (d, bytes, dev) = (b.d, b.bytes, b.device);
    let fill = |to: &mut [u8], seed: Option<u64>| {
        to.iter_mut().enumerate().for_each(|(i, x)| *x = seed.map_or(0, |s| pattern(s, i)));
    };
    let (host, zeros) = (if path.1 == HostMemory::None { HostMemory::Pinned } else { path.1 }, b.pinned[1]);
    // The source holds the pattern, pinned 1 zeros; both device buffers
    // and the path's destination are cleared through pinned 1.
    fill(b.host(host, 0), Some(seed));
    fill(b.host(HostMemory::Pinned, 0), Some(seed));
    fill(b.host(HostMemory::Pinned, 1), None);
    fill(b.host(host, 1), None);
    let pinned_src = b.pinned[0] as *const u8;
    let (src, dst) = (b.host(host, 0).as_ptr(), b.host(host, 1).as_mut_ptr());
    let readback = |from: DevicePtr| CopyOp::DeviceToHost { dst: zeros, src: from, bytes };
    let ops: Vec<CopyOp> = match path.0 {
        Direction::HostToDevice => vec![CopyOp::HostToDevice { dst: dev[0], src, bytes }, readback(dev[0])],
        Direction::DeviceToHost => {
            vec![
                CopyOp::HostToDevice { dst: dev[0], src: pinned_src, bytes },
                CopyOp::DeviceToHost { dst, src: dev[0], bytes },
            ]
        }
        Direction::DeviceToDevice => vec![
            CopyOp::HostToDevice { dst: dev[0], src: pinned_src, bytes },
            CopyOp::DeviceToDevice { dst: dev[1], src: dev[0], bytes },
            readback(dev[1]),
        ],
    };
    // SAFETY: every buffer holds `bytes` bytes and outlives the synchronize.
    unsafe {
        for dst in dev {
            d.copy(CopyOp::HostToDevice { dst, src: zeros, bytes })?;
        }
        ops.into_iter().try_for_each(|op| d.copy(op))?;
    }
    d.synchronize()?;
    let landed = if path.0 == Direction::DeviceToHost { host } else { HostMemory::Pinned };
    Ok(b.host(landed, 1).iter().enumerate().all(|(i, &x)| x == pattern(seed, i)))
}

/// Every path of device `dev` (made current by the caller): one untimed
/// round, `plan.rounds` samples each in shuffled turns, then each checked.
pub fn measure(d: &dyn Driver, dev: usize, plan: &Plan) -> Result<Vec<Transfer>, GpuError> {
    let mut b = Buffers::new(d, plan.bytes)?;
    let mut rng = SplitMix64(plan.seed);
    let mut samples = vec![Vec::new(); PATHS.len()];
    let mut order: Vec<usize> = (0..PATHS.len()).collect();
    for round in 0..=plan.rounds {
        rng.shuffle(&mut order);
        for &at in &order {
            let s = sample(&mut b, plan, PATHS[at])?;
            if round > 0 {
                samples[at].push(s);
            }
        }
    }
    PATHS
        .iter()
        .zip(samples)
        .enumerate()
        .map(|(k, (&path, s))| {
            Ok(Transfer {
                device: dev,
                direction: path.0,
                host: path.1,
                bytes: plan.bytes as u64,
                copies_per_sample: plan.copies_per_sample,
                bytes_per_s: Summary::of(&s).expect("a round at least, each sample finite"),
                valid: check(&mut b, path, plan.seed.wrapping_add(k as u64 + 1))?,
                samples_bytes_per_s: s,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::fake::FakeGpu;

    /// On a fake H200 whose copy engines move 50 GB/s from pinned memory,
    /// 20 GB/s from pageable, and 2 TB/s each way within the device, each
    /// path's figure is its rate (a device copy counting read and write),
    /// every path's bytes arrive, and the buffers are all given back.
    #[test]
    fn each_path_gives_its_rate_and_its_bytes_arrive() {
        let gpu = FakeGpu::h200();
        gpu.use_device(0).unwrap();
        let plan = Plan { bytes: 1 << 20, copies_per_sample: 4, rounds: 3, seed: 7 };
        let got = measure(&gpu, 0, &plan).unwrap();
        let rate = |dir, host| got.iter().find(|t| t.direction == dir && t.host == host).unwrap().bytes_per_s.median;
        let exact = |got: f64, want: f64| assert!((got / want - 1.0).abs() < 1e-9, "{got} against {want}");
        exact(rate(Direction::HostToDevice, HostMemory::Pinned), 50e9);
        exact(rate(Direction::DeviceToHost, HostMemory::Pinned), 50e9);
        exact(rate(Direction::HostToDevice, HostMemory::Pageable), 20e9);
        exact(rate(Direction::DeviceToHost, HostMemory::Pageable), 20e9);
        exact(rate(Direction::DeviceToDevice, HostMemory::None), 4e12);
        assert!(got.iter().all(|t| t.valid && t.samples_bytes_per_s.len() == 3), "{got:?}");
        assert_eq!(gpu.live_allocations(), 0, "every buffer freed");
    }

    /// A copy engine that changes the bytes it reads from pageable memory
    /// is found out on that path alone; one that writes nothing, too.
    #[test]
    fn a_path_that_corrupts_or_drops_its_bytes_is_not_valid() {
        let bad = |gpu: FakeGpu| {
            gpu.use_device(0).unwrap();
            let plan = Plan { bytes: 4096, copies_per_sample: 1, rounds: 1, seed: 7 };
            let got = measure(&gpu, 0, &plan).unwrap();
            got.iter().filter(|t| !t.valid).map(|t| (t.direction, t.host)).collect::<Vec<_>>()
        };
        let corrupt = FakeGpu::h200();
        corrupt.corrupt_pageable_reads();
        assert_eq!(bad(corrupt), [(Direction::HostToDevice, HostMemory::Pageable)]);
        let dropping = FakeGpu::h200();
        dropping.drop_device_copies();
        assert_eq!(bad(dropping), [(Direction::DeviceToDevice, HostMemory::None)]);
        assert!(bad(FakeGpu::h200()).is_empty());
    }

    /// Memory the device refuses is the driver's error, its buffers freed.
    #[test]
    fn out_of_device_memory_is_the_drivers_error() {
        let gpu = FakeGpu::h200();
        gpu.use_device(0).unwrap();
        let e = measure(&gpu, 0, &Plan { bytes: 200 << 30, copies_per_sample: 1, rounds: 1, seed: 7 }).unwrap_err();
        assert_eq!((e.call, e.name.as_str()), ("cuMemAlloc_v2", "CUDA_ERROR_OUT_OF_MEMORY"));
        assert_eq!(gpu.live_allocations(), 0);
    }
}
