//! What the kernels are called in the document: their shapes, hints,
//! linkages and saves, and the traffic they move. The kernels themselves
//! are `memperf::kernels`.

pub mod c2c;
pub mod calls;
pub mod context;
pub mod prefetch;
pub mod stream;

pub use stream::{Checksum, Hint, KernelFacts, StreamKernelInfo, StreamShape, Traffic, KERNEL_FACTS};
