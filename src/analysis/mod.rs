//! Claims drawn from measured curves, made only when the data support
//! them: knees of a stepped curve, plateaus within the measured noise, a
//! knee attributed to a cache or TLB level only near that level's size,
//! and Little's law. Each returns an explicit "no plateau" or
//! "unattributed" instead of a guess. Pure functions over numbers: no
//! experiment, no document.

pub mod attribution;
pub mod bend;
pub mod gpu_latency;
pub mod hot_set;
pub mod knees;
pub mod levels;
pub mod littles_law;
pub mod mann_whitney;
pub mod modes;
pub mod plateau;
pub mod second_look;
pub mod steps;
pub mod sweep;
