//! The traffic threads: each runs blocks over its slices of the traffic
//! array, in a fixed order of lanes (a read:write mix's read and write
//! blocks, or one kernel's), pausing after each block. A read block is
//! checked against its closed-form sum, a written one against its count.

use crate::error::{Error, Result};
use crate::experiments::stream_arrays::Array;
use crate::kernels::{pattern_sum, stream_kernel, StreamArg, StreamKernel, StreamShape};
use crate::model::outcome::curves::Mix;
use crate::units::Bytes;

/// Elements after which the checksum pattern repeats (`pattern_value`).
const PATTERN_PERIOD: usize = 1024;

/// One kernel over one thread's slice.
struct Lane {
    kernel: StreamKernel,
    slice: StreamArg,
    /// Whether the kernel reads only (its result is a sum, not a count).
    reads: bool,
    /// Index of the slice's first element in its part (for the checksum).
    first_index: usize,
}

/// One traffic thread's blocks.
pub struct Traffic {
    lanes: Vec<Lane>,
    /// The lane of each block, in the order they run.
    order: Vec<usize>,
    /// Elements of a block.
    block: usize,
    /// What every read block sums to, where that does not depend on where
    /// it starts (a block of whole periods of the checksum pattern).
    block_sum: Option<f64>,
    /// Bytes one block moves, averaged over the order: what the program
    /// reads and writes, and that plus write-allocate on the bus.
    pub program_bytes_per_block: f64,
    pub bus_bytes_per_block: f64,
}

/// The order of `mix`'s read and write blocks in its lowest terms, spread
/// evenly (3:1 reads three blocks, then writes one); `true` for a read.
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

/// Traffic arrays a kernel's loaders need: four (A and its sources) for a
/// write kernel, one for a read.
pub fn kernel_parts(shape: StreamShape) -> usize {
    if shape.writes() {
        4
    } else {
        1
    }
}

/// Every thread's slice of an array of `len` elements holds a block at least.
fn whole_blocks(slices: &[StreamArg], len: usize, block_bytes: u64) -> Result<()> {
    if slices.iter().any(|s| (s.len as u64) * 8 < block_bytes) {
        let n = slices.len() as u64;
        return Err(Error::usage(format!(
            "--size {} leaves each of {n} traffic threads less than one block of {}: use --size {} or more",
            Bytes(len as u64 * 8),
            Bytes(block_bytes),
            Bytes(block_bytes * n * 4)
        )));
    }
    Ok(())
}

impl Traffic {
    /// `threads` traffic threads of `mix` over `array` (part 0 read, part 1
    /// written by `store`, or `store-nt` for a non-temporal mix).
    pub fn of_mix(array: &Array, mix: Mix, threads: usize, block_bytes: u64) -> Result<Vec<Traffic>> {
        let (read, _) = stream_kernel(StreamShape::Simd, None)?;
        let shape = if mix.non_temporal { StreamShape::StoreNt } else { StreamShape::Store };
        let (write, _) = stream_kernel(shape, None)?;
        let base = array.region.as_ptr() as usize;
        let order: Vec<usize> = pattern(mix).into_iter().map(|r| usize::from(!r)).collect();
        let reads = array.part_slices(0, threads);
        let writes = array.part_slices(1, threads);
        whole_blocks(&reads, array.len, block_bytes)?;
        Ok(reads
            .into_iter()
            .zip(writes)
            .map(|(r, w)| {
                let lanes = vec![
                    Lane { kernel: read, first_index: (r.ptr as usize - base) / 8, slice: r, reads: true },
                    Lane { kernel: write, slice: w, reads: false, first_index: 0 },
                ];
                let bus = bus_bytes_per_block(mix, block_bytes);
                Traffic::new(lanes, order.clone(), block_bytes, (block_bytes as f64, bus))
            })
            .collect())
    }

    /// `threads` traffic threads running `shape` over `array` (made with
    /// [`kernel_parts`] parts), the bytes of each block counted from the
    /// kernel's facts: `block_bytes` of its first array, and as much of
    /// each other array it reads.
    pub fn of_kernel(array: &Array, shape: StreamShape, threads: usize, block_bytes: u64) -> Result<Vec<Traffic>> {
        let (kernel, info) = stream_kernel(shape, None)?;
        let slices = if shape.writes() { array.write_slices(threads) } else { array.slices(threads, 0) };
        whole_blocks(&slices, array.len, block_bytes)?;
        let base = array.region.as_ptr() as usize;
        let elements = (block_bytes / 8) as f64;
        let bytes = (elements * info.traffic.program_bytes() as f64, elements * info.traffic.bus_bytes() as f64);
        Ok(slices
            .into_iter()
            .map(|slice| {
                let first_index = (slice.ptr as usize - base) / 8;
                let lane = Lane { kernel, slice, reads: !shape.writes(), first_index };
                Traffic::new(vec![lane], vec![0], block_bytes, bytes)
            })
            .collect())
    }

    fn new(lanes: Vec<Lane>, order: Vec<usize>, block_bytes: u64, (program, bus): (f64, f64)) -> Traffic {
        let block = (block_bytes / 8) as usize;
        Traffic {
            lanes,
            order,
            block,
            block_sum: block.is_multiple_of(PATTERN_PERIOD).then(|| pattern_sum(0, block)),
            program_bytes_per_block: program,
            bus_bytes_per_block: bus,
        }
    }

    /// Blocks in the shortest lane's slice.
    fn blocks(&self) -> u64 {
        self.lanes.iter().map(|l| l.slice.len / self.block).min().unwrap_or(0).max(1) as u64
    }

    /// Block `i`: the lane the order gives, at the `i`-th block of its slice
    /// (modulo); whether it validated.
    pub fn run(&self, i: u64) -> bool {
        let off = (i % self.blocks()) as usize * self.block;
        let lane = &self.lanes[self.order[(i % self.order.len() as u64) as usize]];
        let at = |p: *const f64| if p.is_null() { p } else { p.wrapping_add(off) };
        let arg = StreamArg {
            ptr: at(lane.slice.ptr),
            len: self.block,
            sources: lane.slice.sources.map(at),
            first_pass: i,
            distance: 0,
        };
        // SAFETY: off + block <= the slice's length, inside the traffic
        // array (as are its sources at the same offsets), alive for the run.
        let got = unsafe { (lane.kernel)(1, &arg) };
        if lane.reads {
            got == self.block_sum.unwrap_or_else(|| pattern_sum(lane.first_index + off, self.block))
        } else {
            got == self.block as f64
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::timing::Team;

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

    fn array(parts: usize) -> Array {
        let clock = crate::timing::MonotonicClock::new();
        Array::new(crate::memory::PagePolicy::Small, Bytes(1 << 20), parts, &Team::new(1).unwrap(), 0, &clock).unwrap()
    }

    /// For real: blocks of mixes over a small array validate (reads sum to
    /// their closed form, writes store their count).
    #[test]
    fn real_blocks_of_a_mix_validate() {
        let array = array(2);
        for mix in [Mix::new(1, 1, false), Mix::new(3, 1, true), Mix::new(1, 0, false)] {
            let t = Traffic::of_mix(&array, mix, 1, 4096).unwrap();
            assert!((0..600).all(|i| t[0].run(i)), "{mix}");
        }
    }

    /// For real: every loader kernel's blocks validate, over blocks that
    /// are and are not whole periods of the checksum pattern, and each
    /// block counts the bytes of every array the kernel touches.
    #[test]
    fn real_blocks_of_a_kernel_validate_and_count_every_array() {
        for (name, program, bus) in [
            ("simd", 1.0, 1.0),
            ("store-nt", 1.0, 1.0),
            ("copy", 2.0, 3.0),
            ("copy-nt", 2.0, 2.0),
            ("triad", 3.0, 4.0),
            ("update", 2.0, 2.0),
            ("mix-3:1", 4.0, 5.0),
        ] {
            let shape = StreamShape::parse(name).unwrap();
            let array = array(kernel_parts(shape));
            for block in [4096, 8192 + 512] {
                let t = Traffic::of_kernel(&array, shape, 2, block).unwrap();
                assert!(t.iter().all(|t| (0..300).all(|i| t.run(i))), "{name} {block}");
                assert_eq!(t[0].program_bytes_per_block, program * block as f64, "{name}");
                assert_eq!(t[0].bus_bytes_per_block, bus * block as f64, "{name}");
            }
        }
    }

    /// A traffic array too small to give every thread a block is refused,
    /// not run past its slices.
    #[test]
    fn slices_shorter_than_a_block_are_refused() {
        let array = array(2);
        let e = Traffic::of_mix(&array, Mix::new(1, 1, false), 32, 65536).err().unwrap();
        assert!(e.message.contains("less than one block of 64KiB"), "{}", e.message);
        assert!(Traffic::of_kernel(&array, StreamShape::Simd, 32, 65536).is_err());
        assert_eq!(Traffic::of_mix(&array, Mix::new(1, 1, false), 32, 4096).unwrap().len(), 32);
    }
}
