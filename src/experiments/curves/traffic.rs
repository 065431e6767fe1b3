//! One point of a curve: the chaser on the first CPU of the team, and on
//! every other CPU a traffic thread that runs read and write blocks in the
//! mix's ratio, pausing after each block. Every thread starts behind the
//! team's barrier, works through a warm-up and counts only the window that
//! follows (`timing::window`).

use super::super::stream_arrays::Array;
use crate::counters::memory_traffic::MemoryTraffic;
use crate::error::Result;
use crate::kernels::chase::{chase_kernel, Chase};
use crate::kernels::{pattern_sum, stream_kernel, StreamArg, StreamKernel, StreamShape};
use crate::model::outcome::curves::Mix;
use crate::timing::window::{repeat_pausing, repeat_until, until_counted, WindowAttempt, Window};
use crate::timing::{Clock, Team};
use std::sync::Mutex;

/// Bytes of a cache line: what each load of the chase fetches.
pub const LINE: u64 = 64;
/// Loads the chaser runs between two reads of the clock.
const CHASE_CHUNK: u64 = 512;
/// Elements after which the checksum pattern repeats (`pattern_value`).
const PATTERN_PERIOD: usize = 1024;

/// The chase, shared with the one thread that runs it.
pub struct Chaser(pub Chase);
// SAFETY: the chase's raw pointers point into a buffer that outlives every
// team run; only the chasing thread touches it, under the mutex.
unsafe impl Send for Chaser {}

/// One traffic thread's blocks: its slice of the read part and of the
/// write part of the traffic array, and the order of read and write blocks
/// that gives the mix.
pub struct Traffic {
    read: StreamKernel,
    write: StreamKernel,
    reads: StreamArg,
    /// Index of the read slice's first element in its part (for the checksum).
    first_index: usize,
    writes: StreamArg,
    /// Elements of a block.
    block: usize,
    /// `true` for a read block, in the order they run.
    pattern: Vec<bool>,
    /// What every read block sums to, where that does not depend on where
    /// it starts (a block of whole periods of the checksum pattern).
    block_sum: Option<f64>,
}

/// The order of `mix`'s read and write blocks in its lowest terms, spread
/// evenly (3:1 reads three blocks, then writes one).
pub fn pattern(mix: Mix) -> Vec<bool> {
    let m = mix.reduced();
    let n = (m.reads + m.writes) as u64;
    (0..n).map(|k| ((k + 1) * m.reads as u64) / n > (k * m.reads as u64) / n).collect()
}

/// Bus bytes of one block, averaged over `mix`'s pattern: a read block's
/// bytes, a written block's bytes and, for an ordinary store, the read of
/// each line it writes (write-allocate).
pub fn bus_bytes_per_block(mix: Mix, block_bytes: u64) -> f64 {
    let m = mix.reduced();
    let allocate = if m.non_temporal { 0 } else { m.writes as u64 };
    block_bytes as f64 * (m.reads as u64 + m.writes as u64 + allocate) as f64 / (m.reads + m.writes) as f64
}

impl Traffic {
    /// The traffic threads of `mix` over `array` (part 0 read, part 1
    /// written), `threads` of them, each cutting its slices in blocks.
    pub fn for_mix(array: &Array, mix: Mix, threads: usize, block_bytes: u64) -> Result<Vec<Traffic>> {
        let (read, _) = stream_kernel(StreamShape::Simd, None)?;
        let shape = if mix.non_temporal { StreamShape::StoreNt } else { StreamShape::Store };
        let (write, _) = stream_kernel(shape, None)?;
        let reads = array.part_slices(0, threads);
        let writes = array.part_slices(1, threads);
        let base = array.region.as_ptr() as usize;
        Ok(reads
            .into_iter()
            .zip(writes)
            .map(|(r, w)| Traffic {
                read,
                write,
                first_index: (r.ptr as usize - base) / 8,
                reads: r,
                writes: w,
                block: (block_bytes / 8) as usize,
                pattern: pattern(mix),
                block_sum: (block_bytes / 8).is_multiple_of(PATTERN_PERIOD as u64)
                    .then(|| pattern_sum(0, (block_bytes / 8) as usize)),
            })
            .collect())
    }

    fn blocks(&self) -> u64 {
        (self.reads.len.min(self.writes.len) / self.block).max(1) as u64
    }

    /// Block `i`: a read or a write as the pattern says, at the `i`-th block
    /// of its slice (modulo); whether it validated.
    pub fn run(&self, i: u64) -> bool {
        let off = (i % self.blocks()) as usize * self.block;
        let read = self.pattern[(i % self.pattern.len() as u64) as usize];
        let slice = if read { &self.reads } else { &self.writes };
        // SAFETY: off + block <= the slice's length, inside the traffic array,
        // alive for the run.
        let arg = StreamArg { ptr: unsafe { slice.ptr.add(off) }, len: self.block, first_pass: i, ..*slice };
        // SAFETY: arg covers `block` elements of the slice (above).
        let got = unsafe { (if read { self.read } else { self.write })(1, &arg) };
        if read {
            got == self.block_sum.unwrap_or_else(|| pattern_sum(self.first_index + off, self.block))
        } else {
            got == self.block as f64
        }
    }
}

/// What one run of a point gave: ns per dependent load, traffic blocks per
/// second (all threads), and whether everything validated.
#[derive(Debug, Clone, Copy)]
pub struct Figures {
    pub latency_ns: f64,
    pub blocks_per_s: f64,
    /// Bytes per second the memory controllers counted over the run.
    pub counted_bytes_per_s: Option<f64>,
    pub ok: bool,
    /// How its window went (run again where it counted nothing).
    pub tried: WindowAttempt,
}

/// One run of one point: the chaser chases and every traffic thread runs
/// its blocks with `pause` iterations after each (none at the idle point),
/// through `warm_s` and then the counted `window_s`, both from the team's
/// release; run again where the chaser, or a loaded point's traffic, was
/// stalled past the window and counted nothing
/// (see [`until_counted`]).
pub fn one_run(
    team: &Team,
    clock: &dyn Clock,
    (warm_s, window_s): (f64, f64),
    pause: Option<u64>,
    chaser: &Mutex<Chaser>,
    traffic: &[Traffic],
    memory: &Mutex<Option<MemoryTraffic>>,
) -> Figures {
    let k1 = chase_kernel(1).expect("one chain");
    let once = || {
        let mut counters = memory.lock().unwrap_or_else(|e| e.into_inner());
        let before = counters.as_mut().map(|m| m.bytes());
        // The window opens from the team's release: every thread awake.
        let window = |released: u64| {
            let from = released + (warm_s * 1e9) as u64;
            (from, from + (window_s * 1e9) as u64)
        };
        let run = team.run_released(clock, |t, released| {
            let (from, end) = window(released);
            if t == 0 {
                let mut c = chaser.lock().unwrap_or_else(|e| e.into_inner());
                // SAFETY: the chase's buffer outlives the run.
                repeat_until(clock, 0, from, end, |_| unsafe { c.0.run(k1, CHASE_CHUNK) })
            } else {
                match pause {
                    Some(p) => repeat_pausing(clock, p, from, end, |i| traffic[t - 1].run(i)),
                    None => Window { ok: true, ..Window::default() },
                }
            }
        });
        let elapsed_s = run.elapsed_ns.max(1) as f64 * 1e-9;
        let counted = counters.as_mut().zip(before).map(|(m, b)| (m.bytes() - b) / elapsed_s);
        Figures { counted_bytes_per_s: counted, ..figures(&run.results) }
    };
    let (f, tried) = until_counted(once, |f| f.latency_ns.is_finite() && (pause.is_none() || f.blocks_per_s > 0.0));
    Figures { tried, ..f }
}

/// The chaser's window (first) and the traffic threads' as figures.
fn figures(windows: &[Window]) -> Figures {
    let chase = windows[0];
    let loads = chase.calls * CHASE_CHUNK;
    let latency_ns = if loads > 0 { chase.span_ns as f64 / loads as f64 } else { f64::NAN };
    let blocks_per_s =
        windows[1..].iter().filter(|w| w.span_ns > 0).map(|w| w.calls as f64 / (w.span_ns as f64 * 1e-9)).sum();
    Figures { latency_ns, blocks_per_s, counted_bytes_per_s: None, ok: windows.iter().all(|w| w.ok), tried: WindowAttempt::default() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mix_is_its_blocks_in_lowest_terms_spread_evenly() {
        assert_eq!(pattern(Mix::new(100, 0, false)), [true]);
        assert_eq!(pattern(Mix::new(0, 100, true)), [false]);
        assert_eq!(pattern(Mix::new(6, 2, false)), [false, true, true, true]);
        let p = pattern(Mix::new(7, 3, false));
        assert_eq!((p.len(), p.iter().filter(|r| **r).count()), (10, 7));
    }

    #[test]
    fn write_allocate_is_counted_as_bus_bytes() {
        assert_eq!(bus_bytes_per_block(Mix::new(1, 0, false), 4096), 4096.0);
        // 1:1: a read block (4 KiB) and a written one (4 KiB + its allocate).
        assert_eq!(bus_bytes_per_block(Mix::new(1, 1, false), 4096), 6144.0);
        assert_eq!(bus_bytes_per_block(Mix::new(1, 1, true), 4096), 4096.0);
        assert_eq!(bus_bytes_per_block(Mix::new(0, 1, false), 4096), 8192.0);
    }

    /// For real: blocks of a 1:1 mix over a small array validate (reads
    /// sum to their closed form, writes store their count).
    #[test]
    fn real_blocks_validate() {
        let clock = crate::timing::MonotonicClock::new();
        let team = Team::new(1).unwrap();
        let array = Array::new(crate::memory::PagePolicy::Small, crate::units::Bytes(1 << 20), 2, &team, 0, &clock)
            .unwrap();
        for mix in [Mix::new(1, 1, false), Mix::new(3, 1, true), Mix::new(1, 0, false)] {
            let t = Traffic::for_mix(&array, mix, 1, 4096).unwrap();
            assert!((0..600).all(|i| t[0].run(i)), "{mix}");
        }
    }
}
