//! The write side of the stream kernels: the choice of the loop for this
//! CPU (x86_64 and aarch64: the vector loops of [`simd`] and SVE's own;
//! elsewhere the portable one), over what [`element`] defines a write to be.

#[cfg(target_arch = "aarch64")]
mod aarch64;
mod element;
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
mod simd;
#[cfg(target_arch = "x86_64")]
mod x86_64;

#[cfg(target_arch = "aarch64")]
pub use aarch64::write_for;
pub use element::*;

use crate::error::Result;
use crate::kernels::abi::StreamKernel;

/// The write kernel of `op` for this CPU, with non-temporal stores if `nt`,
/// and the name of its instruction set.
pub fn kernel(op: Op, nt: bool) -> Result<(StreamKernel, &'static str)> {
    #[cfg(target_arch = "x86_64")]
    {
        let isa = crate::kernels::x86_64::best_isa();
        Ok((x86_64::write_for(isa, op, nt), isa.name()))
    }
    #[cfg(target_arch = "aarch64")]
    {
        let isa = crate::kernels::aarch64::best_isa();
        Ok((aarch64::write_for(isa, op, nt), isa.name()))
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        if nt {
            return Err(crate::error::Error::unsatisfiable(
                "non-temporal stores are implemented for x86_64 and aarch64 only in this build",
                "use --kernel store or copy",
            ));
        }
        let k: StreamKernel = match op {
            Op::Store => portable::<STORE>,
            Op::Copy => portable::<COPY>,
            Op::Triad => portable::<TRIAD>,
            Op::Update => portable::<UPDATE>,
            Op::Mix31 => portable::<MIX31>,
        };
        Ok((k, "portable"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::StreamArg;
    use crate::kernels::{pattern_value, stream_kernel, StreamShape};

    /// 64-byte-aligned f64 buffers with a misaligned start `skew` elements in.
    struct Buffers {
        store: Vec<Vec<f64>>,
        offsets: Vec<usize>,
    }

    impl Buffers {
        fn new(len: usize, skew: usize) -> Buffers {
            let store: Vec<Vec<f64>> = (0..4).map(|_| vec![f64::NAN; len + 64]).collect();
            let offsets = store.iter().map(|v| v.as_ptr().align_offset(64) + skew).collect();
            let mut b = Buffers { store, offsets };
            for k in 0..4 {
                for i in 0..len {
                    b.slice(k)[i] = pattern_value(i) + k as f64;
                }
            }
            b
        }
        fn slice(&mut self, k: usize) -> &mut [f64] {
            let o = self.offsets[k];
            &mut self.store[k][o..]
        }
        fn arg(&mut self, len: usize, first_pass: u64) -> StreamArg {
            let ptr = self.slice(0).as_mut_ptr() as *const f64;
            let sources = [1, 2, 3].map(|k| self.slice(k).as_ptr());
            StreamArg { ptr, len, distance: 0, sources, first_pass }
        }
    }

    /// Every write kernel stores, at every element and nowhere else, what
    /// [`element`] says for its last pass (update: the product of all its
    /// passes' scalars); lengths and start offsets exercise the vector
    /// loop, the scalar head and the tail.
    #[test]
    fn every_write_kernel_stores_what_it_says_and_nothing_past_its_end() {
        // The shapes whose facts say their checksum counts what they store.
        let storing = memperf_model::kernels::KERNEL_FACTS
            .iter()
            .filter(|f| f.checksum == memperf_model::kernels::Checksum::ElementsStored)
            .map(|f| f.shape);
        for shape in storing {
            let op = Op::of(shape).unwrap() as u8;
            for len in [0usize, 1, 7, 63, 64, 65, 511, 4096 + 13] {
                for skew in [0usize, 1, 3] {
                    let mut buf = Buffers::new(len, skew);
                    let before: Vec<f64> = buf.slice(0)[..len].to_vec();
                    let (k, _) = stream_kernel(shape, None).unwrap();
                    let arg = buf.arg(len, 40);
                    // SAFETY: A and the three sources hold len + 64 - 63 or more f64.
                    let got = unsafe { k(3, &arg) };
                    assert_eq!(got, (3 * len) as f64, "{shape}: elements stored");
                    let a = buf.slice(0).to_vec();
                    for i in 0..len {
                        let (b, c, d) = (pattern_value(i) + 1.0, pattern_value(i) + 2.0, pattern_value(i) + 3.0);
                        let want = if op == UPDATE {
                            before[i] * scalar(op, 40) * scalar(op, 41) * scalar(op, 42)
                        } else {
                            element(op, scalar(op, 42), before[i], b, c, d)
                        };
                        assert_eq!(a[i], want, "{shape} len {len} skew {skew} at {i}");
                    }
                    assert!(a[len].is_nan(), "{shape} wrote past its end");
                }
            }
        }
    }

    /// The metadata's bytes read are the sources the kernel really reads:
    /// poisoning a source with NaN changes A exactly when the shape says
    /// it reads that source.
    #[test]
    fn bytes_read_match_the_sources_the_kernel_reads() {
        for shape in StreamShape::WRITE {
            let (k, info) = stream_kernel(shape, None).unwrap();
            let op = Op::of(shape).unwrap();
            let reads_a = op == Op::Update;
            assert_eq!(info.traffic.bytes_read_per_element, 8 * (op.sources() + reads_a as usize) as u64, "{shape}");
            assert_eq!(info.traffic.bytes_written_per_element, 8, "{shape}");
            assert_eq!(shape.streams(), 1 + op.sources(), "{shape}");
            let allocate = !shape.non_temporal() && !reads_a;
            assert_eq!(info.traffic.write_allocate_bytes_per_element, if allocate { 8 } else { 0 }, "{shape}");
            for poisoned in 1..4 {
                let mut buf = Buffers::new(256, 0);
                buf.slice(poisoned)[..256].fill(f64::NAN);
                let arg = buf.arg(256, 0);
                // SAFETY: as above.
                unsafe { k(1, &arg) };
                let nan = buf.slice(0)[..256].iter().any(|x| x.is_nan());
                assert_eq!(nan, poisoned <= op.sources(), "{shape} and source {poisoned}");
            }
        }
    }
}
