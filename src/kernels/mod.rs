//! The measured inner loops, and nothing else.
//!
//! One ABI for every kernel: `unsafe fn(iters, &Arg) -> checksum`. A kernel
//! runs `iters` passes and returns a checksum that the experiment compares
//! with a closed-form expectation. Metadata (bytes read and written, flops
//! per element) sits beside each kernel in [`StreamKernelInfo`], and tests
//! check it against what the kernel does.

pub mod c2c;
pub mod calls;
pub mod chase;
pub mod context;
pub mod page_init;
pub mod portable;
#[cfg(target_arch = "x86_64")]
pub mod prefetch;
pub mod stream;
pub mod working_set;
pub mod write;
#[cfg(target_arch = "x86_64")]
pub mod x86_64;
#[cfg(target_arch = "x86_64")]
pub mod x86_64_write;

pub use stream::{
    pattern_sum, pattern_value, stream_kernel, Hint, StreamArg, StreamKernel, StreamKernelInfo, StreamShape, Traffic,
};

#[cfg(all(test, target_arch = "x86_64"))]
pub mod disasm;
