//! The driver's own copies, timed by its events: host to device and back
//! from pinned and from pageable memory (the copy engines), and within
//! the device. Each sample is `copies_per_sample` copies queued back to
//! back between two events; the paths take turns, their order rotated each
//! round, so the host's drift spreads over all of them. After the last
//! round every path's bytes are copied once more and compared.

use super::{CopyOp, DevicePtr, Driver, GpuError};
use crate::timing::Summary;
use memperf_model::outcome::gpu::{Direction, HostMemory, Transfer};

/// What to copy, and how often.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Plan {
    pub bytes: usize,
    pub copies_per_sample: usize,
    pub rounds: usize,
}

/// The paths, in the order of the first round.
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
            b.pageable[k] = vec![0u8; bytes];
        }
        Ok(b)
    }

    /// The copy of one path: from source 0 to device 0, or from device 0 to
    /// destination 1 (device to device: 0 to 1).
    fn op(&mut self, direction: Direction, host: HostMemory) -> CopyOp {
        let bytes = self.bytes;
        let (src, dst) = match host {
            HostMemory::Pinned => (self.pinned[0] as *const u8, self.pinned[1]),
            _ => (self.pageable[0].as_ptr(), self.pageable[1].as_mut_ptr()),
        };
        match direction {
            Direction::HostToDevice => CopyOp::HostToDevice { dst: self.device[0], src, bytes },
            Direction::DeviceToHost => CopyOp::DeviceToHost { dst, src: self.device[0], bytes },
            Direction::DeviceToDevice => CopyOp::DeviceToDevice { dst: self.device[1], src: self.device[0], bytes },
        }
    }

    /// Fills both host sources with the pattern.
    fn fill(&mut self) {
        // SAFETY: pinned[0] holds `bytes` bytes, allocated by the driver.
        let pinned = unsafe { std::slice::from_raw_parts_mut(self.pinned[0], self.bytes) };
        for (i, (a, b)) in pinned.iter_mut().zip(self.pageable[0].iter_mut()).enumerate() {
            *a = pattern(i);
            *b = pattern(i);
        }
    }

    /// Whether destination 1 of `host` holds the pattern (and then clears it).
    fn arrived(&mut self, host: HostMemory) -> bool {
        let got: &mut [u8] = match host {
            // SAFETY: pinned[1] holds `bytes` bytes, allocated by the driver.
            HostMemory::Pinned => unsafe { std::slice::from_raw_parts_mut(self.pinned[1], self.bytes) },
            _ => &mut self.pageable[1],
        };
        let ok = got.iter().enumerate().all(|(i, &b)| b == pattern(i));
        got.fill(0);
        ok
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

/// Byte `i` of the pattern every copy carries.
fn pattern(i: usize) -> u8 {
    (i.wrapping_mul(2_654_435_761) >> 13) as u8
}

/// One sample of a path: its copies between two events, in bytes per
/// second (a copy within the device reads and writes its bytes).
fn sample(b: &mut Buffers, plan: &Plan, path: (Direction, HostMemory)) -> Result<f64, GpuError> {
    let d = b.d;
    let from = d.record()?;
    for _ in 0..plan.copies_per_sample {
        let op = b.op(path.0, path.1);
        // SAFETY: the buffers outlive the stream's pass (elapsed_ms waits).
        unsafe { d.copy(op)? };
    }
    let to = d.record()?;
    let s = d.elapsed_ms(from, to)? * 1e-3;
    let moved =
        (plan.bytes * plan.copies_per_sample) as f64 * if path.0 == Direction::DeviceToDevice { 2.0 } else { 1.0 };
    Ok(if s > 0.0 { moved / s } else { f64::NAN })
}

/// Whether a path's bytes arrive as sent: for a copy to the device, the
/// source taken to the device and back (pinned); from the device, the
/// pattern put there first; within it, through device 1.
fn check(b: &mut Buffers, path: (Direction, HostMemory)) -> Result<bool, GpuError> {
    let d = b.d;
    let host = if path.1 == HostMemory::None { HostMemory::Pinned } else { path.1 };
    let (bytes, dev) = (b.bytes, b.device);
    let (src, dst) = match host {
        HostMemory::Pinned => (b.pinned[0] as *const u8, b.pinned[1]),
        _ => (b.pageable[0].as_ptr(), b.pageable[1].as_mut_ptr()),
    };
    let last = if path.0 == Direction::DeviceToDevice { dev[1] } else { dev[0] };
    // SAFETY: every buffer holds `bytes` bytes and outlives the synchronize.
    unsafe {
        d.copy(CopyOp::HostToDevice { dst: dev[0], src, bytes })?;
        if path.0 == Direction::DeviceToDevice {
            d.copy(CopyOp::DeviceToDevice { dst: dev[1], src: dev[0], bytes })?;
        }
        d.copy(CopyOp::DeviceToHost { dst, src: last, bytes })?;
    }
    d.synchronize()?;
    Ok(b.arrived(host))
}

/// Every path of device `dev` (made current by the caller), `plan.rounds`
/// samples each, then each checked.
pub fn measure(d: &dyn Driver, dev: usize, plan: &Plan) -> Result<Vec<Transfer>, GpuError> {
    let mut b = Buffers::new(d, plan.bytes)?;
    b.fill();
    let mut samples = vec![Vec::new(); PATHS.len()];
    for round in 0..plan.rounds {
        for k in 0..PATHS.len() {
            let at = (k + round) % PATHS.len();
            samples[at].push(sample(&mut b, plan, PATHS[at])?);
        }
    }
    PATHS
        .iter()
        .zip(samples)
        .map(|(&path, s)| {
            let finite: Vec<f64> = s.iter().copied().filter(|x| x.is_finite()).collect();
            Ok(Transfer {
                device: dev,
                direction: path.0,
                host: path.1,
                bytes: plan.bytes as u64,
                copies_per_sample: plan.copies_per_sample,
                bytes_per_s: Summary::of(&finite).unwrap_or_else(|| Summary::of(&[f64::NAN]).expect("one value")),
                valid: check(&mut b, path)? && finite.len() == s.len(),
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
    /// 20 GB/s from pageable, and 3 TB/s within the device, each path's
    /// figure is exactly its rate (a device copy counting read and write),
    /// every path's bytes arrive, and the buffers are all given back.
    #[test]
    fn each_path_gives_its_rate_and_its_bytes_arrive() {
        let gpu = FakeGpu::h200();
        gpu.use_device(0).unwrap();
        let plan = Plan { bytes: 1 << 20, copies_per_sample: 4, rounds: 3 };
        let got = measure(&gpu, 0, &plan).unwrap();
        let rate = |dir, host| got.iter().find(|t| t.direction == dir && t.host == host).unwrap().bytes_per_s.median;
        let exact = |got: f64, want: f64| assert!((got / want - 1.0).abs() < 1e-9, "{got} against {want}");
        exact(rate(Direction::HostToDevice, HostMemory::Pinned), 50e9);
        exact(rate(Direction::DeviceToHost, HostMemory::Pinned), 50e9);
        exact(rate(Direction::HostToDevice, HostMemory::Pageable), 20e9);
        exact(rate(Direction::DeviceToHost, HostMemory::Pageable), 20e9);
        exact(rate(Direction::DeviceToDevice, HostMemory::None), 6e12);
        assert!(got.iter().all(|t| t.valid && t.samples_bytes_per_s.len() == 3), "{got:?}");
        assert_eq!(gpu.live_allocations(), 0, "every buffer freed");
    }

    /// A copy engine that drops bytes is found out, on that path alone.
    #[test]
    fn a_path_that_corrupts_its_bytes_is_not_valid() {
        let gpu = FakeGpu::h200();
        gpu.corrupt_pageable_reads();
        gpu.use_device(0).unwrap();
        let plan = Plan { bytes: 4096, copies_per_sample: 1, rounds: 1 };
        let got = measure(&gpu, 0, &plan).unwrap();
        let bad: Vec<_> = got.iter().filter(|t| !t.valid).map(|t| (t.direction, t.host)).collect();
        assert_eq!(
            bad,
            [(Direction::HostToDevice, HostMemory::Pageable), (Direction::DeviceToHost, HostMemory::Pageable)]
        );
    }

    /// Memory the device refuses is the driver's error, its buffers freed.
    #[test]
    fn out_of_device_memory_is_the_drivers_error() {
        let gpu = FakeGpu::h200();
        gpu.use_device(0).unwrap();
        let e = measure(&gpu, 0, &Plan { bytes: 200 << 30, copies_per_sample: 1, rounds: 1 }).unwrap_err();
        assert_eq!((e.call, e.name.as_str()), ("cuMemAlloc_v2", "CUDA_ERROR_OUT_OF_MEMORY"));
        assert_eq!(gpu.live_allocations(), 0);
    }
}
