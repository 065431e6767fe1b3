//! The host link and the driver's copies, timed by the device's events:
//! host to device and back, from pinned memory by the copy engines and by
//! the SMs (memperf's copy kernel over mapped pinned memory) and from
//! pageable memory, both directions at once on two streams, within the
//! device, and small copies' time each. Each sample is a few copies queued
//! back to back between two events, behind a gate ([`super::gate`]) where
//! the kernels are loaded and the host memory is pinned. After one untimed
//! round, the cases take turns in an order shuffled anew each round, so
//! the host's drift spreads over all of them. Then each is checked on its
//! own: fresh bytes through it, into a destination cleared first, read
//! back through pinned memory.

use super::gate::Gate;
use super::{Arg, CopyOp, DevicePtr, Driver, GpuError, Kernel, Stream};
use crate::rng::SplitMix64;
use crate::timing::Summary;
use memperf_model::outcome::gpu::{Direction, Engine, HostMemory, SmallCopy, Transfer};

/// What to copy, and how often.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Plan {
    pub bytes: usize,
    pub copies_per_sample: usize,
    pub rounds: usize,
    pub seed: u64,
    /// The device's SMs: the copy kernel runs two blocks on each.
    pub sms: u32,
}

/// The least a sample moves: 64 MiB, 13 µs at 5 TB/s, far above the
/// events' resolution of about half a microsecond.
pub const MIN_SAMPLE_BYTES: usize = 64 << 20;

/// The small copies' sizes, and how many a sample queues: 256 of the
/// smallest take some hundreds of microseconds.
pub const SMALL_BYTES: [usize; 5] = [8, 512, 4096, 65536, 1 << 20];
pub const SMALL_COPIES: usize = 256;

/// Threads in a block of the copy kernel.
const SM_COPY_BLOCK: u32 = 512;

/// One case the link is measured in: a path one way, or host to device
/// and device to host at once (pinned memory, one engine).
#[derive(Debug, Clone, Copy, PartialEq)]
enum Case {
    One(Engine, Direction, HostMemory),
    Both(Engine),
}

/// The cases, in the order they are reported: the SMs' only where the
/// kernels are loaded.
fn cases(kernels: bool) -> Vec<Case> {
    use {Direction::*, Engine::*, HostMemory::*};
    let mut c = vec![
        Case::One(CopyEngine, HostToDevice, Pinned),
        Case::One(CopyEngine, DeviceToHost, Pinned),
        Case::One(CopyEngine, HostToDevice, Pageable),
        Case::One(CopyEngine, DeviceToHost, Pageable),
        Case::One(CopyEngine, DeviceToDevice, None),
        Case::Both(CopyEngine),
    ];
    if kernels {
        c.extend([Case::One(Sm, HostToDevice, Pinned), Case::One(Sm, DeviceToHost, Pinned), Case::Both(Sm)]);
    }
    c
}

/// What a case queues on one stream: its copies' engine, direction and
/// host memory, and the device buffer they read or write (both ways at
/// once use one each).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Lane {
    stream: Stream,
    engine: Engine,
    dir: Direction,
    host: HostMemory,
    buffer: usize,
}

fn lanes(case: Case) -> Vec<Lane> {
    let lane = |stream, engine, dir, host, buffer| Lane { stream, engine, dir, host, buffer };
    match case {
        Case::One(e, dir, host) => vec![lane(Stream::Main, e, dir, host, 0)],
        Case::Both(e) => vec![
            lane(Stream::Main, e, Direction::HostToDevice, HostMemory::Pinned, 0),
            lane(Stream::Side, e, Direction::DeviceToHost, HostMemory::Pinned, 1),
        ],
    }
}

/// One sample: each lane's seconds, and whether the gate held throughout.
type Sample = (Vec<f64>, bool);
/// A case's samples, and whether the gate held throughout every one.
type Taken = (Vec<Vec<f64>>, bool);

/// The buffers of one device: two on the device, two pinned (and their
/// device addresses, where the kernels are loaded), two pageable.
struct Buffers<'a> {
    d: &'a dyn Driver,
    device: [DevicePtr; 2],
    pinned: [*mut u8; 2],
    mapped: Option<[DevicePtr; 2]>,
    pageable: [Vec<u8>; 2],
    bytes: usize,
    sms: u32,
}

impl<'a> Buffers<'a> {
    fn new(d: &'a dyn Driver, bytes: usize, sms: u32, mapped: bool) -> Result<Buffers<'a>, GpuError> {
        // Each is freed by Drop, the ones made before a failure included.
        let mut b = Buffers {
            d,
            device: [0; 2],
            pinned: [std::ptr::null_mut(); 2],
            mapped: None,
            pageable: [vec![], vec![]],
            bytes,
            sms,
        };
        for k in 0..2 {
            b.device[k] = d.alloc(bytes)?;
            b.pinned[k] = d.alloc_pinned(bytes)?;
            // Written, so no copy pays for faulting its pages in.
            b.pageable[k] = vec![1u8; bytes];
        }
        if mapped {
            b.mapped = Some([d.mapped(b.pinned[0])?, d.mapped(b.pinned[1])?]);
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

    /// Queues one copy of `n` bytes of `lane` on its stream: from host
    /// source 0 to its device buffer, from its device buffer to host
    /// destination 1, or from device 0 to device 1.
    ///
    /// # Safety
    /// The buffers outlive the stream's pass (an event waited for, or a
    /// synchronize), and `n` is at most their bytes.
    unsafe fn queue(&mut self, lane: Lane, n: usize) -> Result<(), GpuError> {
        let (s, k) = (lane.stream, lane.buffer);
        if lane.engine == Engine::Sm {
            let Some(m) = self.mapped else {
                return Err(GpuError { call: "cuLaunchKernel", code: 0, name: "the kernels are not loaded".into() });
            };
            let (from, to) = match lane.dir {
                Direction::HostToDevice => (m[0], self.device[k]),
                Direction::DeviceToHost => (self.device[k], m[1]),
                Direction::DeviceToDevice => (self.device[0], self.device[1]),
            };
            // SAFETY: the caller's promise: both ends hold n bytes.
            return unsafe { self.sm_copy(s, from, to, n) };
        }
        // Pointers, not slices: earlier copies may still be writing them.
        let (src, dst) = match lane.host {
            HostMemory::Pinned => (self.pinned[0] as *const u8, self.pinned[1]),
            _ => (self.pageable[0].as_ptr(), self.pageable[1].as_mut_ptr()),
        };
        let op = match lane.dir {
            Direction::HostToDevice => CopyOp::HostToDevice { dst: self.device[k], src, bytes: n },
            Direction::DeviceToHost => CopyOp::DeviceToHost { dst, src: self.device[k], bytes: n },
            Direction::DeviceToDevice => CopyOp::DeviceToDevice { dst: self.device[1], src: self.device[0], bytes: n },
        };
        // SAFETY: the caller's promise.
        unsafe { self.d.copy_on(s, op) }
    }

    /// # Safety
    /// As [`Buffers::queue`]; `src` and `dst` hold `n` bytes.
    unsafe fn sm_copy(&self, s: Stream, src: DevicePtr, dst: DevicePtr, n: usize) -> Result<(), GpuError> {
        let args = [Arg::Ptr(src), Arg::Ptr(dst), Arg::U64((n / 16) as u64)];
        // SAFETY: memperf_sm_copy over n / 16 words both ends hold.
        unsafe { self.d.launch_on(s, Kernel::SmCopy, 2 * self.sms, SM_COPY_BLOCK, &args) }
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

/// Word `i` of the pattern `seed` gives: buffers are filled and checked
/// eight bytes at a time.
fn pattern(seed: u64, i: usize) -> u64 {
    let x = (i as u64 ^ seed).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    x ^ (x >> 29)
}

/// `to` filled with the pattern of `seed`, or cleared.
fn fill(to: &mut [u8], seed: Option<u64>) {
    for (i, c) in to.chunks_mut(8).enumerate() {
        let w = seed.map_or(0, |s| pattern(s, i)).to_ne_bytes();
        c.copy_from_slice(&w[..c.len()]);
    }
}

/// Whether `got` holds the pattern of `seed`.
fn holds(got: &[u8], seed: u64) -> bool {
    got.chunks(8).enumerate().all(|(i, c)| *c == pattern(seed, i).to_ne_bytes()[..c.len()])
}

/// One sample of a case: `copies` copies of `n` bytes on each of its
/// lanes between two events of the lane's stream, behind the gate where
/// there is one and no lane reads or writes pageable memory. Each lane's
/// seconds, and whether the gate held throughout.
fn sample(b: &mut Buffers, gate: Option<&Gate>, case: Case, copies: usize, n: usize) -> Result<Sample, GpuError> {
    let d = b.d;
    let lanes = lanes(case);
    let gate = gate.filter(|_| lanes.iter().all(|l| l.host != HostMemory::Pageable));
    if let Some(g) = gate {
        g.hold()?;
    }
    // Every event made, so none is left behind where a call fails.
    let mut events = Vec::new();
    let queued = (|| {
        if lanes.len() > 1 {
            // The side stream starts where the main one does: past the gate.
            let e = d.record_on(Stream::Main)?;
            let waited = d.wait_for(Stream::Side, &e);
            d.discard(e);
            waited?;
        }
        for l in &lanes {
            events.push(d.record_on(l.stream)?);
        }
        for _ in 0..copies {
            for &l in &lanes {
                // SAFETY: the buffers outlive the events waited for below.
                unsafe { b.queue(l, n)? };
            }
        }
        for l in &lanes {
            events.push(d.record_on(l.stream)?);
        }
        Ok::<_, GpuError>(())
    })();
    if let Some(g) = gate {
        g.release();
    }
    if let Err(e) = queued {
        events.into_iter().for_each(|e| d.discard(e));
        return Err(e);
    }
    let to = events.split_off(lanes.len());
    let mut pairs = events.into_iter().zip(to);
    let mut seconds = Vec::new();
    for (from, to) in pairs.by_ref() {
        match d.elapsed_ms(from, to).map(|ms| ms * 1e-3) {
            Ok(s) if s > 0.0 => seconds.push(s),
            got => {
                pairs.for_each(|(a, b)| [a, b].into_iter().for_each(|e| d.discard(e)));
                let none = GpuError { call: "cuEventElapsedTime", code: 0, name: "no time between the events".into() };
                return Err(got.err().unwrap_or(none));
            }
        }
    }
    Ok((seconds, gate.is_some_and(|g| g.held_throughout())))
}

/// Whether `n` bytes go through a case as sent: fresh ones (from `seed`)
/// into destinations cleared first; where a lane does not end in pinned
/// memory, read back through pinned memory. Both ways at once send a
/// second pattern from device buffer 1 while the first goes to buffer 0.
fn check(b: &mut Buffers, case: Case, n: usize, seed: u64) -> Result<bool, GpuError> {
    let d = b.d;
    let (dev, back) = (b.device, b.pinned[1]);
    let lanes = lanes(case);
    let other = seed ^ 0x5555;
    // Device buffer k holds the pattern a device-to-host lane of it sends
    // (buffer 0 the first, buffer 1 the second), every other is cleared.
    let sends = |k: usize| {
        lanes.iter().any(|l| l.buffer == k && matches!(l.dir, Direction::DeviceToHost | Direction::DeviceToDevice))
    };
    for (k, &to) in dev.iter().enumerate() {
        fill(&mut b.host(HostMemory::Pinned, 1)[..n], sends(k).then_some(if k == 0 { seed } else { other }));
        // SAFETY: pinned 1 holds n bytes and outlives the synchronize.
        unsafe { d.copy(CopyOp::HostToDevice { dst: to, src: back, bytes: n })? };
        d.synchronize()?;
    }
    for l in &lanes {
        if l.dir == Direction::HostToDevice {
            fill(&mut b.host(l.host, 0)[..n], Some(seed));
        } else if l.host != HostMemory::None {
            fill(&mut b.host(l.host, 1)[..n], None);
        }
    }
    for &l in &lanes {
        // SAFETY: n at most the buffers' bytes; they outlive the synchronize.
        unsafe { b.queue(l, n)? };
    }
    d.synchronize()?;
    // What lands in host memory first: a read-back goes through pinned 1.
    let mut order = lanes.clone();
    order.sort_by_key(|l| l.dir != Direction::DeviceToHost);
    let mut ok = true;
    for &Lane { dir, host, buffer: k, .. } in &order {
        let want = if dir == Direction::DeviceToHost && k == 1 { other } else { seed };
        if dir != Direction::DeviceToHost {
            // Read back what landed on the device through pinned 1.
            fill(&mut b.host(HostMemory::Pinned, 1)[..n], None);
            let from = if dir == Direction::DeviceToDevice { dev[1] } else { dev[k] };
            // SAFETY: as above.
            unsafe { d.copy(CopyOp::DeviceToHost { dst: back, src: from, bytes: n })? };
            d.synchronize()?;
        }
        let landed = if dir == Direction::DeviceToHost { host } else { HostMemory::Pinned };
        ok &= holds(&b.host(landed, 1)[..n], want);
    }
    Ok(ok)
}

/// What the link and the copies measured on one device.
#[derive(Debug, Clone, PartialEq)]
pub struct Measured {
    pub copies: Vec<Transfer>,
    pub small: Vec<SmallCopy>,
}

/// Every case of device `dev` (made current by the caller), its kernels
/// loaded or not (`kernels`: the gate and the SMs' copies need them): one
/// untimed round, `plan.rounds` samples each in shuffled turns, then each
/// checked; then the small copies the same way.
pub fn measure(d: &dyn Driver, dev: usize, plan: &Plan, kernels: bool) -> Result<Measured, GpuError> {
    let mut b = Buffers::new(d, plan.bytes, plan.sms, kernels)?;
    let gate = if kernels { Some(Gate::new(d)?) } else { None };
    let cases = cases(kernels);
    let mut rng = SplitMix64(plan.seed);
    let taken = turns(&mut rng, cases.len(), plan.rounds, |at| {
        sample(&mut b, gate.as_ref(), cases[at], plan.copies_per_sample, plan.bytes)
    })?;
    let mut copies = Vec::new();
    for (at, (&case, (samples, gated))) in cases.iter().zip(taken).enumerate() {
        let valid = check(&mut b, case, plan.bytes, plan.seed.wrapping_add(at as u64 + 1))?;
        for (lane, l) in lanes(case).into_iter().enumerate() {
            let moved = (plan.bytes * plan.copies_per_sample) as f64
                * if l.dir == Direction::DeviceToDevice { 2.0 } else { 1.0 };
            let s: Vec<f64> = samples.iter().map(|x| moved / x[lane]).collect();
            copies.push(Transfer {
                device: dev,
                direction: l.dir,
                host: l.host,
                engine: l.engine,
                both_ways: matches!(case, Case::Both(_)),
                gated,
                bytes: plan.bytes as u64,
                copies_per_sample: plan.copies_per_sample,
                bytes_per_s: Summary::of(&s).expect("a round at least, each sample finite"),
                samples_bytes_per_s: s,
                valid,
            });
        }
    }
    let small = small_copies(&mut b, gate.as_ref(), &mut rng, dev, plan.rounds)?;
    Ok(Measured { copies, small })
}

/// The small copies: each size each way by the copy engine, pinned.
fn small_copies(
    b: &mut Buffers,
    gate: Option<&Gate>,
    rng: &mut SplitMix64,
    dev: usize,
    rounds: usize,
) -> Result<Vec<SmallCopy>, GpuError> {
    let sizes: Vec<(usize, Direction)> = SMALL_BYTES
        .iter()
        .filter(|&&n| n <= b.bytes)
        .flat_map(|&n| [(n, Direction::HostToDevice), (n, Direction::DeviceToHost)])
        .collect();
    let case = |dir| Case::One(Engine::CopyEngine, dir, HostMemory::Pinned);
    let taken = turns(rng, sizes.len(), rounds, |at| {
        let (n, dir) = sizes[at];
        sample(b, gate, case(dir), SMALL_COPIES, n)
    })?;
    sizes
        .iter()
        .zip(taken)
        .enumerate()
        .map(|(at, (&(n, dir), (samples, gated)))| {
            let s: Vec<f64> = samples.iter().map(|x| x[0] / SMALL_COPIES as f64).collect();
            Ok(SmallCopy {
                device: dev,
                direction: dir,
                bytes: n as u64,
                copies_per_sample: SMALL_COPIES,
                seconds: Summary::of(&s).expect("a round at least, each sample finite"),
                samples_s: s,
                gated,
                valid: check(b, case(dir), n, 0x5ead ^ at as u64)?,
            })
        })
        .collect()
}

/// `rounds` samples of each of `count` cases, after one untimed round, in
/// turns shuffled anew each round: each case's samples (each a lane's
/// seconds), and whether the gate held throughout every one.
fn turns(
    rng: &mut SplitMix64,
    count: usize,
    rounds: usize,
    mut one: impl FnMut(usize) -> Result<Sample, GpuError>,
) -> Result<Vec<Taken>, GpuError> {
    let mut taken = vec![(Vec::new(), true); count];
    super::in_turns(rng, count, rounds, true, |at, timed| {
        let (seconds, gated) = one(at)?;
        if timed {
            taken[at].0.push(seconds);
            taken[at].1 &= gated;
        }
        Ok(())
    })?;
    Ok(taken)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::fake::FakeGpu;

    fn plan(bytes: usize, copies_per_sample: usize, rounds: usize) -> Plan {
        Plan { bytes, copies_per_sample, rounds, seed: 7, sms: 132 }
    }

    /// A fake H200, its kernels loaded unless `bare`.
    fn h200(bare: bool) -> FakeGpu {
        let gpu = FakeGpu::h200();
        gpu.use_device(0).unwrap();
        if !bare {
            gpu.load_kernels(9, 0).unwrap();
        }
        gpu
    }

    fn rate(got: &[Transfer], engine: Engine, dir: Direction, host: HostMemory, both: bool) -> &Transfer {
        got.iter()
            .find(|t| (t.engine, t.direction, t.host, t.both_ways) == (engine, dir, host, both))
            .unwrap_or_else(|| panic!("{engine:?} {dir:?} {host:?} {both} in {got:?}"))
    }

    fn exact(got: f64, want: f64) {
        assert!((got / want - 1.0).abs() < 1e-9, "{got} against {want}");
    }

    /// On a fake H200 whose copy engines move 50 GB/s from pinned memory
    /// and 20 GB/s from pageable, whose SMs move 51 GB/s over the link,
    /// and 2 TB/s each way within the device: each case's figure is its
    /// rate (a device copy counting read and write), both ways at once
    /// each direction its own, since the fake's link is full duplex;
    /// every case's bytes arrive, all but the pageable ones are gated,
    /// and the buffers are all given back.
    #[test]
    fn each_case_gives_its_rate_and_its_bytes_arrive() {
        use {Direction::*, Engine::*, HostMemory::*};
        let gpu = h200(false);
        let got = measure(&gpu, 0, &plan(1 << 20, 4, 3), true).unwrap().copies;
        assert_eq!(got.len(), 11);
        exact(rate(&got, CopyEngine, HostToDevice, Pinned, false).bytes_per_s.median, 50e9);
        exact(rate(&got, CopyEngine, DeviceToHost, Pinned, false).bytes_per_s.median, 50e9);
        exact(rate(&got, CopyEngine, HostToDevice, Pageable, false).bytes_per_s.median, 20e9);
        exact(rate(&got, CopyEngine, DeviceToHost, Pageable, false).bytes_per_s.median, 20e9);
        exact(rate(&got, CopyEngine, DeviceToDevice, None, false).bytes_per_s.median, 4e12);
        exact(rate(&got, CopyEngine, HostToDevice, Pinned, true).bytes_per_s.median, 50e9);
        exact(rate(&got, CopyEngine, DeviceToHost, Pinned, true).bytes_per_s.median, 50e9);
        for both in [false, true] {
            exact(rate(&got, Sm, HostToDevice, Pinned, both).bytes_per_s.median, 51e9);
            exact(rate(&got, Sm, DeviceToHost, Pinned, both).bytes_per_s.median, 51e9);
        }
        assert!(got.iter().all(|t| t.valid && t.samples_bytes_per_s.len() == 3), "{got:?}");
        assert!(got.iter().all(|t| t.gated == (t.host != Pageable)), "{got:?}");
        drop(got);
        assert_eq!(gpu.live_allocations(), 0, "every buffer freed");
    }

    /// A host that takes 1 ms between calls, against copies of 21 µs:
    /// behind the gate the samples time the copies alone; pageable copies,
    /// never gated, and every copy where the kernels did not load (no
    /// gate, no SMs' copies) pay the gap before each call, the closing
    /// event's included (four copies, five gaps).
    #[test]
    fn the_gate_keeps_the_hosts_gaps_out_of_the_samples() {
        let (bytes, gap) = (1usize << 20, 1e-3);
        let paced = |rate: f64| 4.0 * bytes as f64 / (4.0 * bytes as f64 / rate + 5.0 * gap);
        let pinned = |gpu: &FakeGpu, kernels| {
            gpu.host_gap(gap);
            let got = measure(gpu, 0, &plan(bytes, 4, 2), kernels).unwrap().copies;
            let r = |host| rate(&got, Engine::CopyEngine, Direction::HostToDevice, host, false).bytes_per_s.median;
            (r(HostMemory::Pinned), r(HostMemory::Pageable), got.len())
        };
        let (gated, pageable, cases) = pinned(&h200(false), true);
        exact(gated, 50e9);
        exact(pageable, paced(20e9));
        assert_eq!(cases, 11);
        let (ungated, _, cases) = pinned(&h200(true), false);
        exact(ungated, paced(50e9));
        assert_eq!(cases, 7, "no SMs' copies without the kernels");
    }

    /// A gate the host raises only after its limit is not gated: a host
    /// taking 0.3 s a call holds it past its second.
    #[test]
    fn a_gate_that_ran_out_leaves_its_case_ungated() {
        let gpu = h200(false);
        gpu.host_gap(0.3);
        let got = measure(&gpu, 0, &plan(1 << 20, 4, 1), true).unwrap();
        assert!(got.copies.iter().all(|t| !t.gated && t.valid), "{:?}", got.copies);
    }

    /// Small copies, each 3 µs besides its bytes, behind the gate with a
    /// host of 10 µs a call: each size's time a copy is the copy's own,
    /// both ways, up to the buffers' size; every one arrives.
    #[test]
    fn small_copies_time_each_copy_alone() {
        let gpu = h200(false);
        gpu.host_gap(10e-6);
        gpu.copy_latency(3e-6);
        let got = measure(&gpu, 0, &plan(64 << 10, 1, 2), true).unwrap().small;
        let sizes: Vec<(u64, Direction)> = got.iter().map(|c| (c.bytes, c.direction)).collect();
        assert_eq!(sizes.len(), 8, "8 B to 64 KiB, each way: {sizes:?}");
        for c in &got {
            exact(c.seconds.median, 3e-6 + c.bytes as f64 / 50e9);
            assert!(c.gated && c.valid && c.samples_s.len() == 2, "{c:?}");
        }
    }

    /// A copy engine that changes the bytes it reads from pageable memory
    /// is found out on that case alone; one that writes nothing within the
    /// device, too.
    #[test]
    fn a_case_that_corrupts_or_drops_its_bytes_is_not_valid() {
        let bad = |gpu: FakeGpu| {
            let got = measure(&gpu, 0, &plan(4096, 1, 1), true).unwrap();
            assert!(got.small.iter().all(|c| c.valid));
            got.copies.iter().filter(|t| !t.valid).map(|t| (t.direction, t.host)).collect::<Vec<_>>()
        };
        let corrupt = h200(false);
        corrupt.corrupt_pageable_reads();
        assert_eq!(bad(corrupt), [(Direction::HostToDevice, HostMemory::Pageable)]);
        let dropping = h200(false);
        dropping.drop_device_copies();
        assert_eq!(bad(dropping), [(Direction::DeviceToDevice, HostMemory::None)]);
        assert!(bad(h200(false)).is_empty());
    }

    /// Memory the device refuses is the driver's error, its buffers freed.
    #[test]
    fn out_of_device_memory_is_the_drivers_error() {
        let gpu = h200(false);
        let e = measure(&gpu, 0, &plan(200 << 30, 1, 1), true).unwrap_err();
        assert_eq!((e.call, e.name.as_str()), ("cuMemAlloc_v2", "CUDA_ERROR_OUT_OF_MEMORY"));
        assert_eq!(gpu.live_allocations(), 0);
    }
}
