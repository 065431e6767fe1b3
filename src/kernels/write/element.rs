//! What a write kernel stores: the operation, its scalar per pass, one
//! element ([`element`], which the portable loop, the scalar tails of the
//! vector loops and the bandwidth experiment's read-back check all use, so
//! what is checked is what is computed) and the portable loop.

use crate::kernels::abi::StreamArg;

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
    pub fn of(shape: crate::kernels::StreamShape) -> Option<Op> {
        use crate::kernels::StreamShape as S;
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
/// As for [`crate::kernels::StreamKernel`].
#[inline(never)]
pub unsafe fn portable<const OP: u8>(iters: u64, arg: &StreamArg) -> f64 {
    for pass in 0..iters {
        let a = std::hint::black_box(arg.ptr as *mut f64);
        // SAFETY: guaranteed by the caller.
        unsafe { scalar_range::<OP>(arg, a, 0, arg.len, scalar(OP, arg.first_pass + pass)) };
    }
    (iters * arg.len as u64) as f64
}
