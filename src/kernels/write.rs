//! The write side of the stream kernels: what each one stores, its scalar
//! per pass, the portable loop, and the choice of the vector loop for this
//! CPU (x86_64: [`super::x86_64_write`]).
//!
//! One definition of an element ([`element`]) serves the portable loop, the
//! scalar tails of the vector loops and the read-back check of the
//! bandwidth experiment, so what is checked is what is computed.

use super::{StreamArg, StreamKernel};
use crate::error::Result;

/// What a write kernel stores at `a[i]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Op {
    /// `a = s`
    Store = 0,
    /// `a = b`
    Copy = 1,
    /// `a = b + s·c`
    Triad = 2,
    /// `a = s·a`
    Update = 3,
    /// `a = b + c·d`
    Mix31 = 4,
}

impl Op {
    /// The write operation of a write kernel's shape; `None` for a read one.
    pub fn of(shape: super::StreamShape) -> Option<Op> {
        use super::StreamShape as S;
        match shape {
            S::Store | S::StoreNt => Some(Op::Store),
            S::Copy | S::CopyNt => Some(Op::Copy),
            S::Triad => Some(Op::Triad),
            S::Update => Some(Op::Update),
            S::Mix31 => Some(Op::Mix31),
            S::Sum1 | S::Sum4 | S::Simd | S::SimdPrefetch => None,
        }
    }
}

pub const STORE: u8 = Op::Store as u8;
pub const COPY: u8 = Op::Copy as u8;
pub const TRIAD: u8 = Op::Triad as u8;
pub const UPDATE: u8 = Op::Update as u8;
pub const MIX31: u8 = Op::Mix31 as u8;

impl Op {
    /// Sources read besides A (update reads A itself).
    pub fn sources(self) -> usize {
        match self {
            Op::Store | Op::Update => 0,
            Op::Copy => 1,
            Op::Triad => 2,
            Op::Mix31 => 3,
        }
    }
}

/// The scalar of global pass `pass`: a store writes a value that changes
/// from pass to pass, triad scales by a small integer, update alternates
/// ×2 and ×½ (exact, and never overflows).
#[inline(always)]
pub fn scalar(op: u8, pass: u64) -> f64 {
    match op {
        STORE => (pass % 1021 + 1) as f64,
        TRIAD => (pass % 7 + 1) as f64,
        UPDATE => {
            if pass.is_multiple_of(2) {
                2.0
            } else {
                0.5
            }
        }
        _ => 0.0,
    }
}

/// The value stored at A for scalar `s`, old value `a` and sources.
#[inline(always)]
pub fn element(op: u8, s: f64, a: f64, b: f64, c: f64, d: f64) -> f64 {
    match op {
        STORE => s,
        COPY => b,
        TRIAD => b + s * c,
        UPDATE => s * a,
        _ => b + c * d,
    }
}

/// Elements `from..to` of one pass, one at a time.
///
/// # Safety
/// A valid for writing (and, for update, reading) `to` f64; each source of
/// `OP` valid for reading `to` f64.
#[inline(always)]
pub unsafe fn scalar_range<const OP: u8>(arg: &StreamArg, a: *mut f64, from: usize, to: usize, s: f64) {
    let [b, c, d] = arg.sources;
    for i in from..to {
        // SAFETY: i < to; only the sources OP reads are dereferenced.
        unsafe {
            let old = if OP == UPDATE { *a.add(i) } else { 0.0 };
            let sb = if OP == COPY || OP == TRIAD || OP == MIX31 { *b.add(i) } else { 0.0 };
            let sc = if OP == TRIAD || OP == MIX31 { *c.add(i) } else { 0.0 };
            let sd = if OP == MIX31 { *d.add(i) } else { 0.0 };
            a.add(i).write(element(OP, s, old, sb, sc, sd));
        }
    }
}

/// The portable write kernel: element by element (the compiler vectorises
/// it for the baseline ISA), ordinary stores.
///
/// # Safety
/// As for [`StreamKernel`].
#[inline(never)]
pub unsafe fn portable<const OP: u8>(iters: u64, arg: &StreamArg) -> f64 {
    for pass in 0..iters {
        let a = std::hint::black_box(arg.ptr as *mut f64);
        // SAFETY: guaranteed by the caller.
        unsafe { scalar_range::<OP>(arg, a, 0, arg.len, scalar(OP, arg.first_pass + pass)) };
    }
    (iters * arg.len as u64) as f64
}

/// The write kernel of `op` for this CPU, with non-temporal stores if `nt`,
/// and the name of its instruction set.
pub fn kernel(op: Op, nt: bool) -> Result<(StreamKernel, &'static str)> {
    #[cfg(target_arch = "x86_64")]
    {
        let isa = super::x86_64::best_isa();
        Ok((super::x86_64_write::write_for(isa, op, nt), isa.name()))
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        if nt {
            return Err(crate::error::Error::unsatisfiable(
                "non-temporal stores are implemented for x86_64 only in this build",
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
        for shape in StreamShape::WRITE {
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
