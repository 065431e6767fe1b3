//! The write kernels' one vector loop, generic over the vector type each
//! architecture provides ([`Vector`]), the operation, and ordinary or
//! non-temporal stores.

use super::element::{self as write, COPY, STORE, TRIAD, UPDATE};
use crate::kernels::abi::StreamArg;
use crate::kernels::vector::Vector;

/// One pass's vector body: eight vectors (`LANES` cache lines) of A per
/// iteration, loaded from the sources the operation reads.
///
/// # Safety
/// A valid for writing `arg.len` f64 (update: reading too), each source of
/// `OP` valid for reading it; the CPU supports `V`'s set. Inlined into each
/// architecture's `#[target_feature]` entries.
#[inline(always)]
pub unsafe fn write_loop<V: Vector, const OP: u8, const NT: bool>(iters: u64, arg: &StreamArg) -> f64 {
    let n = arg.len;
    let step = 8 * V::LANES;
    let [b, c, d] = arg.sources;
    for pass in 0..iters {
        // Opaque per pass, so the compiler cannot drop a pass's stores as
        // overwritten by the next one.
        let a = std::hint::black_box(arg.ptr as *mut f64);
        // Streaming stores need aligned vectors: the head goes one by one.
        let head = if NT { a.align_offset(8 * V::LANES).min(n) } else { 0 };
        let end = head + (n - head) / step * step;
        let s = write::scalar(OP, arg.first_pass + pass);
        // SAFETY: the caller guarantees V's set.
        let sv = unsafe { V::splat(s) };
        // SAFETY: head <= n.
        unsafe { write::scalar_range::<OP>(arg, a, 0, head, s) };
        let mut i = head;
        while i < end {
            for k in 0..8 {
                let o = i + k * V::LANES;
                // SAFETY: o + LANES <= end <= n; only OP's sources are read.
                unsafe {
                    let v = match OP {
                        STORE => sv,
                        COPY => V::load(b.add(o)),
                        TRIAD => V::mul_add(V::load(b.add(o)), sv, V::load(c.add(o))),
                        UPDATE => V::mul(sv, V::load(a.add(o))),
                        _ => V::mul_add(V::load(b.add(o)), V::load(c.add(o)), V::load(d.add(o))),
                    };
                    if NT {
                        V::stream(a.add(o), v)
                    } else {
                        V::store(a.add(o), v)
                    }
                }
            }
            i += step;
        }
        // SAFETY: end <= n.
        unsafe { write::scalar_range::<OP>(arg, a, end, n, s) };
    }
    if NT {
        // Streaming stores are weakly ordered: drain them before returning.
        crate::kernels::arch::drain_streams();
    }
    (iters * n as u64) as f64
}
