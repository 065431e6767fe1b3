//! The measured inner loops, and nothing else.
//!
//! One ABI for every kernel: `unsafe fn(iters, &Arg) -> checksum`. A kernel
//! runs `iters` passes and returns a checksum that the experiment compares
//! with a closed-form expectation. Metadata (bytes read and written, flops
//! per element) sits beside each kernel in [`StreamKernelInfo`], and tests
//! check it against what the kernel does.

#[cfg(target_arch = "aarch64")]
pub mod aarch64;
pub mod abi;
pub mod c2c;
pub mod calls;
pub mod chase;
pub mod context;
pub mod hint;
pub mod page_init;
pub mod portable;
pub mod prefetch;
pub mod stream;
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
pub mod vector;
pub mod working_set;
pub mod write;
#[cfg(target_arch = "x86_64")]
pub mod x86_64;

pub use abi::{pattern_sum, pattern_value, Hint, StreamArg, StreamKernel, StreamKernelInfo, StreamShape, Traffic};
pub use stream::stream_kernel;

/// This build's architecture's kernels.
#[cfg(target_arch = "aarch64")]
pub(crate) use aarch64 as arch;
#[cfg(target_arch = "x86_64")]
pub(crate) use x86_64 as arch;

#[cfg(test)]
mod code_bytes;
#[cfg(all(test, target_arch = "x86_64"))]
pub mod disasm;
#[cfg(all(test, target_arch = "aarch64"))]
#[path = "disasm_a64.rs"]
pub mod disasm;

/// Writes back and evicts the cache line holding `p` (x86_64: `clflush`;
/// aarch64: `dc civac`; elsewhere nothing, and the line stays cached). A check that reads
/// between timed samples evicts what it read, so the next sample does not
/// find those lines in cache (a read kernel would gain, a non-temporal
/// store would lose, by a check's residue).
///
/// # Safety
/// `p` must point into mapped memory.
pub unsafe fn evict_line(p: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: clflush needs only a mapped address, which the caller guarantees.
    unsafe {
        std::arch::x86_64::_mm_clflush(p)
    };
    #[cfg(target_arch = "aarch64")]
    // SAFETY: as above.
    unsafe {
        aarch64::evict_line(p)
    };
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    let _ = p;
}

#[cfg(test)]
mod tests {
    /// Evicting writes a dirty line back: the values stay; the eviction is
    /// a `clflush` (x86_64) or a `dc civac` (aarch64).
    #[test]
    fn evicting_a_line_keeps_what_it_holds() {
        let mut v: Vec<f64> = (0..64).map(|i| i as f64 * 1.5).collect();
        v[3] = -7.25;
        for i in (0..64).step_by(8) {
            // SAFETY: inside the vector.
            unsafe { super::evict_line(v.as_ptr().add(i) as *const u8) };
        }
        assert_eq!(v[3], -7.25);
        assert!(v.iter().enumerate().all(|(i, &x)| i == 3 || x == i as f64 * 1.5));
        #[cfg(target_arch = "x86_64")]
        {
            let m = super::disasm::mnemonics(super::evict_line as *const u8);
            assert!(m.iter().any(|x| x == "clflush"), "{m:?}");
        }
        #[cfg(target_arch = "aarch64")]
        {
            let m = super::disasm::mnemonics(super::evict_line as *const u8);
            assert!(m.iter().any(|x| x == "dc civac"), "{m:?}");
        }
    }
}
