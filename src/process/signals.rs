//! While a program runs under memperf, signals meant for it reach it.
//!
//! Ctrl-C at a terminal goes to the whole foreground process group, the
//! program included: memperf only keeps itself alive to report. A signal
//! sent to memperf alone (`kill -TERM <memperf>`, a batch system's SIGTERM)
//! is passed on to the program, which then ends as it would on its own.

use std::sync::atomic::{AtomicI32, Ordering};

static CHILD: AtomicI32 = AtomicI32::new(0);
/// Some forwarded signal arrived since the last [`Forwarding::install`].
static RECEIVED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Whether a signal arrived while the last program ran (the user wants to stop).
pub fn received() -> bool {
    RECEIVED.load(Ordering::SeqCst)
}

/// The signals passed on.
pub const FORWARDED: [i32; 4] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT];

extern "C" fn forward(signal: i32, info: *mut libc::siginfo_t, _: *mut libc::c_void) {
    // SAFETY: the kernel passes a valid siginfo to an SA_SIGINFO handler.
    let code = unsafe { (*info).si_code };
    let child = CHILD.load(Ordering::SeqCst);
    RECEIVED.store(true, Ordering::SeqCst);
    // si_code > 0: raised by the kernel (the terminal), which already
    // signalled the program's process group; <= 0: sent by a process.
    if code <= 0 && child > 0 {
        // SAFETY: kill is async-signal-safe.
        unsafe { libc::kill(child, signal) };
    }
}

/// Installed while the program runs; the previous actions come back on drop.
pub struct Forwarding {
    previous: Vec<(i32, libc::sigaction)>,
}

impl Forwarding {
    pub fn install(child: i32) -> Forwarding {
        CHILD.store(child, Ordering::SeqCst);
        RECEIVED.store(false, Ordering::SeqCst);
        let mut previous = Vec::new();
        for sig in FORWARDED {
            // SAFETY: sigaction structs are plain data; the handler is an
            // extern "C" fn with the SA_SIGINFO signature.
            unsafe {
                let mut new: libc::sigaction = std::mem::zeroed();
                new.sa_sigaction = forward as *const () as usize;
                new.sa_flags = libc::SA_SIGINFO | libc::SA_RESTART;
                libc::sigemptyset(&mut new.sa_mask);
                let mut old: libc::sigaction = std::mem::zeroed();
                if libc::sigaction(sig, &new, &mut old) == 0 {
                    previous.push((sig, old));
                }
            }
        }
        Forwarding { previous }
    }
}

impl Drop for Forwarding {
    fn drop(&mut self) {
        for (sig, old) in &self.previous {
            // SAFETY: restoring an action sigaction returned.
            unsafe { libc::sigaction(*sig, old, std::ptr::null_mut()) };
        }
        CHILD.store(0, Ordering::SeqCst);
    }
}
