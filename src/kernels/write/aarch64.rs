//! The write kernels for aarch64: NEON through [`super::simd::write_loop`]
//! (STP of q registers, or STNP for non-temporal stores), and SVE's own
//! loops ([`crate::kernels::aarch64::sve`]).

use super::element::{Op, COPY, MIX31, STORE, TRIAD, UPDATE};
use super::simd::write_loop;
use crate::kernels::aarch64::{sve, Isa, Q2};
use crate::kernels::abi::{StreamArg, StreamKernel};

/// NEON: eight pairs of q registers (four lines) per iteration.
///
/// # Safety
/// As for [`write_loop`].
#[target_feature(enable = "neon")]
#[inline(never)]
pub unsafe fn write_neon<const OP: u8, const NT: bool>(iters: u64, arg: &StreamArg) -> f64 {
    // SAFETY: as for this function.
    unsafe { write_loop::<Q2, OP, NT>(iters, arg) }
}

fn neon<const OP: u8>(nt: bool) -> StreamKernel {
    if nt {
        write_neon::<OP, true>
    } else {
        write_neon::<OP, false>
    }
}

/// The write kernel of `op` for `isa`, non-temporal if `nt`.
pub fn write_for(isa: Isa, op: Op, nt: bool) -> StreamKernel {
    if let Isa::Sve(_) = isa {
        return sve::write_for(op, nt);
    }
    match op {
        Op::Store => neon::<STORE>(nt),
        Op::Copy => neon::<COPY>(nt),
        Op::Triad => neon::<TRIAD>(nt),
        Op::Update => neon::<UPDATE>(nt),
        Op::Mix31 => neon::<MIX31>(nt),
    }
}
