//! Hand-written stream kernels for aarch64: NEON through the generic loops
//! of [`crate::kernels::vector`], and SVE, vector-length agnostic, in
//! inline assembly ([`sve`]): Rust has no stable SVE types, and assembly
//! fixes the loop a disassembly test checks (`ld1d`, `prfm`, `stnt1d`).
//! `--kernel simd` picks SVE where the CPU and kernel have it, NEON
//! otherwise, and the document names which (`sve-256`). Prefetches are PRFM
//! with the hint's operation; non-temporal stores are STNP (NEON) or STNT1D
//! (SVE); DC ZVA zeroes whole blocks where DCZID_EL0 allows, and DC CIVAC
//! evicts a line.

pub mod sve;
pub mod zero;

use super::abi::{StreamArg, StreamKernel};
pub use super::hint::*;
use super::vector::{simd_loop, Vector};
use std::arch::aarch64::*;

/// Vector instruction sets with a hand-written kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Isa {
    Neon,
    /// SVE, with its vector length in bytes.
    Sve(usize),
}

impl Isa {
    /// `neon`, or `sve-<bits>`.
    pub fn name(self) -> &'static str {
        const SVE: [&str; 16] = [
            "sve-128", "sve-256", "sve-384", "sve-512", "sve-640", "sve-768", "sve-896", "sve-1024", "sve-1152",
            "sve-1280", "sve-1408", "sve-1536", "sve-1664", "sve-1792", "sve-1920", "sve-2048",
        ];
        match self {
            Isa::Neon => "neon",
            // The architecture allows 128..2048 bits in steps of 128.
            Isa::Sve(bytes) => SVE.get((bytes / 16).saturating_sub(1)).copied().unwrap_or("sve"),
        }
    }
}

/// SVE's vector length in bytes, where the CPU and kernel have SVE.
pub fn sve_vector_bytes() -> Option<usize> {
    std::arch::is_aarch64_feature_detected!("sve").then(|| {
        // SAFETY: SVE is present (checked just above).
        unsafe { sve::vector_bytes() }
    })
}

/// Every ISA with a kernel that this CPU supports, narrowest first.
pub fn supported_isas() -> Vec<Isa> {
    let mut v = vec![Isa::Neon];
    v.extend(sve_vector_bytes().map(Isa::Sve));
    v
}

/// The widest ISA this CPU (and OS) supports.
pub fn best_isa() -> Isa {
    *supported_isas().last().expect("NEON is always there")
}

/// The `simd` kernel for `isa`, with the prefetch of `hint` if any.
pub fn simd_for(isa: Isa, hint: Option<Hint>) -> (StreamKernel, &'static str) {
    struct Pick;
    impl ForHint for Pick {
        type Out = StreamKernel;
        fn with<P: Prefetcher>(self) -> StreamKernel {
            simd_neon::<P>
        }
    }
    let k = match isa {
        Isa::Neon => for_hint(hint, Pick),
        Isa::Sve(_) => sve::read_for(hint),
    };
    (k, isa.name())
}

/// Two NEON registers: 4 f64, 32 bytes. Eight of them are one iteration
/// of the generic loops, four cache lines; a pair is what LDP/STP/STNP
/// of q registers move.
#[derive(Clone, Copy)]
pub struct Q2(float64x2_t, float64x2_t);

impl Vector for Q2 {
    const LANES: usize = 4;
    #[inline(always)]
    unsafe fn zero() -> Self {
        // SAFETY: NEON is baseline on aarch64; no memory is touched.
        unsafe { Q2(vdupq_n_f64(0.0), vdupq_n_f64(0.0)) }
    }
    #[inline(always)]
    unsafe fn load(p: *const f64) -> Self {
        // SAFETY: the caller guarantees 4 readable f64.
        unsafe { Q2(vld1q_f64(p), vld1q_f64(p.add(2))) }
    }
    #[inline(always)]
    unsafe fn add(a: Self, b: Self) -> Self {
        // SAFETY: NEON is baseline on aarch64; no memory is touched.
        unsafe { Q2(vaddq_f64(a.0, b.0), vaddq_f64(a.1, b.1)) }
    }
    #[inline(always)]
    unsafe fn mul(a: Self, b: Self) -> Self {
        // SAFETY: NEON is baseline on aarch64; no memory is touched.
        unsafe { Q2(vmulq_f64(a.0, b.0), vmulq_f64(a.1, b.1)) }
    }
    #[inline(always)]
    unsafe fn mul_add(a: Self, b: Self, c: Self) -> Self {
        // SAFETY: NEON (with its fused multiply-add) is baseline on aarch64.
        unsafe { Q2(vfmaq_f64(a.0, b.0, c.0), vfmaq_f64(a.1, b.1, c.1)) }
    }
    #[inline(always)]
    unsafe fn splat(x: f64) -> Self {
        // SAFETY: NEON is baseline on aarch64; no memory is touched.
        unsafe { Q2(vdupq_n_f64(x), vdupq_n_f64(x)) }
    }
    #[inline(always)]
    unsafe fn store(p: *mut f64, v: Self) {
        // SAFETY: the caller guarantees 4 writable f64.
        unsafe {
            vst1q_f64(p, v.0);
            vst1q_f64(p.add(2), v.1);
        }
    }
    #[inline(always)]
    unsafe fn stream(p: *mut f64, v: Self) {
        // SAFETY: the caller guarantees 4 writable f64; STNP writes exactly
        // those 32 bytes, uses no stack and leaves the flags alone.
        unsafe {
            std::arch::asm!("stnp {a:q}, {b:q}, [{p}]", a = in(vreg) v.0, b = in(vreg) v.1, p = in(reg) p,
                options(nostack, preserves_flags))
        }
    }
}

/// Drains streaming stores before the caller reads back: a store barrier.
#[inline(always)]
pub(crate) fn drain_streams() {
    // SAFETY: a data memory barrier orders memory accesses and touches nothing.
    unsafe { std::arch::asm!("dmb ishst", options(nostack, preserves_flags)) };
}

/// NEON: 4 lines per iteration.
///
/// # Safety
/// `arg.ptr` valid for `arg.len` f64.
#[target_feature(enable = "neon")]
#[inline(never)]
pub unsafe fn simd_neon<P: Prefetcher>(iters: u64, arg: &StreamArg) -> f64 {
    // SAFETY: as for this function.
    unsafe { simd_loop::<Q2, P>(iters, arg) }
}

/// Writes back and evicts the line holding `p` from every cache level
/// (DC CIVAC, which Linux lets user space run).
///
/// # Safety
/// `p` must point into mapped memory.
#[inline(always)]
pub unsafe fn evict_line(p: *const u8) {
    // SAFETY: the caller guarantees a mapped address; DC CIVAC only cleans
    // and invalidates the line, the value stays.
    unsafe { std::arch::asm!("dc civac, {0}", in(reg) p, options(nostack, preserves_flags)) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::abi::{pattern_sum, pattern_value, Hint};
    use crate::kernels::disasm::mnemonics;
    use crate::kernels::write::{self, Op};
    use crate::kernels::StreamShape;

    fn has(m: &[String], ins: &str) -> bool {
        m.iter().any(|x| x == ins)
    }

    /// Every ISA's read kernel, with and without each prefetch, sums every
    /// element once per pass, with NaN past the end (a kernel reading too
    /// far returns NaN), at lengths around each vector length's blocks.
    #[test]
    fn every_isa_reads_every_element_once() {
        for len in [0usize, 1, 3, 31, 32, 33, 255, 256, 257, 4096 + 13] {
            let mut v: Vec<f64> = (0..len + 4096).map(pattern_value).collect();
            v[len..].fill(f64::NAN);
            let arg = StreamArg::read(v.as_ptr(), len, 256);
            for isa in supported_isas() {
                for hint in [None].into_iter().chain(Hint::ALL.map(Some)) {
                    let (k, _) = simd_for(isa, hint);
                    // SAFETY: v holds len + 4096 elements.
                    assert_eq!(unsafe { k(3, &arg) }, 3.0 * pattern_sum(0, len), "{isa:?} {hint:?} len {len}");
                }
            }
        }
    }

    /// Every ISA's write kernels store what [`crate::kernels::write::element`]
    /// says (the shared test in `write` covers the best ISA; this one NEON
    /// on an SVE CPU too).
    #[test]
    fn every_isa_writes_what_it_says() {
        use crate::kernels::write::{element, scalar};
        let len = 1000;
        for isa in supported_isas() {
            for shape in StreamShape::WRITE {
                let op = Op::of(shape).unwrap();
                let mut arrays: Vec<Vec<f64>> =
                    (0..4).map(|k| (0..len + 8).map(|i| pattern_value(i) + k as f64).collect()).collect();
                arrays[0][len..].fill(f64::NAN);
                let before = arrays[0].clone();
                let sources = [1, 2, 3].map(|k| arrays[k].as_ptr());
                let arg = StreamArg { ptr: arrays[0].as_mut_ptr(), len, distance: 0, sources, first_pass: 5 };
                let k = write::write_for(isa, op, shape.non_temporal());
                // SAFETY: every array holds len + 8 elements.
                assert_eq!(unsafe { k(1, &arg) }, len as f64);
                let op = op as u8;
                for i in 0..len {
                    let [b, c, d] = [1, 2, 3].map(|k| arrays[k][i]);
                    assert_eq!(arrays[0][i], element(op, scalar(op, 5), before[i], b, c, d), "{isa:?} {shape} at {i}");
                }
                assert!(arrays[0][len].is_nan(), "{isa:?} {shape} wrote past its end");
            }
        }
    }

    #[test]
    fn read_kernels_hold_their_loads_and_their_prefetch() {
        for isa in supported_isas() {
            let (plain, _) = simd_for(isa, None);
            let m = mnemonics(plain as *const u8);
            let load = if matches!(isa, Isa::Sve(_)) { "ld1d" } else { "ldp" };
            assert!(has(&m, load), "{isa:?}: {m:?}");
            assert!(m.iter().all(|x| !x.starts_with("prfm")), "{isa:?}: {m:?}");
            assert!(m.iter().all(|x| x != "bl" && x != "blr"), "{isa:?} calls out of its loop: {m:?}");
            for hint in Hint::ALL {
                let (k, _) = simd_for(isa, Some(hint));
                let m = mnemonics(k as *const u8);
                assert!(has(&m, hint.arm_instruction()), "{isa:?} {hint}: {m:?}");
                assert!(has(&m, load), "{isa:?} {hint}: {m:?}");
            }
        }
    }

    #[test]
    fn non_temporal_stores_are_in_the_nt_kernels_and_nowhere_else() {
        for isa in supported_isas() {
            let (nt, plain) = if matches!(isa, Isa::Sve(_)) { ("stnt1d", "st1d") } else { ("stnp", "stp") };
            for shape in StreamShape::WRITE {
                let k = write::write_for(isa, Op::of(shape).unwrap(), shape.non_temporal());
                let m = mnemonics(k as *const u8);
                assert_eq!(has(&m, nt), shape.non_temporal(), "{isa:?} {shape}: {m:?}");
                if !shape.non_temporal() {
                    assert!(has(&m, plain) || has(&m, "str") && isa == Isa::Neon, "{isa:?} {shape}: {m:?}");
                }
                assert!(m.iter().all(|x| x != "bl" && x != "blr"), "{isa:?} {shape} calls out of its loop: {m:?}");
            }
        }
    }

    #[test]
    fn dc_zva_zeroes_whole_blocks_and_nothing_else() {
        let Some(block) = zero::zva_block_bytes() else {
            // DCZID_EL0.DZP: the kernel refuses and writes nothing.
            let mut w = vec![7u64; 64];
            // SAFETY: 64 words.
            assert_eq!(unsafe { zero::store_dc_zva(w.as_mut_ptr(), 64, 0) }, 0);
            assert!(w.iter().all(|&x| x == 7));
            return;
        };
        assert!(block.is_power_of_two() && (16..=2048).contains(&block), "{block}");
        for (skew, len) in [(0usize, 0usize), (1, 3), (3, 1000), (0, 4096)] {
            let mut w = vec![7u64; len + 600];
            let start = w.as_ptr().align_offset(block) + skew;
            // SAFETY: start + len is inside the vector.
            assert_eq!(unsafe { zero::store_dc_zva(w.as_mut_ptr().add(start), len, 9) }, len as u64);
            assert!(w[start..start + len].iter().all(|&x| x == 0), "skew {skew} len {len}");
            assert!(w[..start].iter().chain(&w[start + len..]).all(|&x| x == 7), "skew {skew} len {len}");
        }
        assert!(has(&mnemonics(zero::store_dc_zva as *const u8), "dc zva"));
    }

    #[test]
    fn names_say_the_vector_length() {
        assert_eq!(Isa::Neon.name(), "neon");
        assert_eq!(Isa::Sve(16).name(), "sve-128");
        assert_eq!(Isa::Sve(64).name(), "sve-512");
        assert_eq!(Isa::Sve(256).name(), "sve-2048");
        if let Some(b) = sve_vector_bytes() {
            assert!(b % 16 == 0 && (16..=256).contains(&b), "{b}");
            assert_eq!(best_isa(), Isa::Sve(b));
        } else {
            assert_eq!(best_isa(), Isa::Neon);
        }
    }
}
