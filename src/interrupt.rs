//! The interrupt flag: set by the first Ctrl-C, SIGTERM or SIGHUP (the
//! handler is main's), read by experiments between samples and by any wait
//! that could otherwise outlast the user's patience (a FIFO's reader). A
//! leaf module, so every layer may read it.

use std::sync::atomic::{AtomicBool, Ordering};

/// Set by the signal handler; experiments stop after the current sample.
pub static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// Whether the user asked memperf to stop.
pub fn requested() -> bool {
    INTERRUPTED.load(Ordering::Relaxed)
}
