//! How a watched program ended, what the kernel accounted to it, its C
//! library linkage, and the kinds of mapping it holds.

pub mod elf;
pub mod memory;
pub mod pages;

use serde::{Deserialize, Serialize};

/// How the program ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "how", rename_all = "kebab-case")]
pub enum Exit {
    Exited { code: i32 },
    Signaled { signal: i32 },
}

impl Exit {
    /// The status a shell would report: the code, or 128 + the signal.
    pub fn shell_status(self) -> u8 {
        match self {
            Exit::Exited { code } => code as u8,
            Exit::Signaled { signal } => (128 + signal) as u8,
        }
    }

    pub fn describe(self) -> String {
        match self {
            Exit::Exited { code } => format!("exited with status {code}"),
            Exit::Signaled { signal } => format!("killed by signal {signal} ({})", signal_name(signal)),
        }
    }
}

/// A signal's name, by its Linux number (the same on x86-64 and aarch64).
pub fn signal_name(signal: i32) -> &'static str {
    match signal {
        1 => "SIGHUP",
        2 => "SIGINT",
        3 => "SIGQUIT",
        4 => "SIGILL",
        6 => "SIGABRT",
        7 => "SIGBUS",
        8 => "SIGFPE",
        9 => "SIGKILL",
        11 => "SIGSEGV",
        13 => "SIGPIPE",
        14 => "SIGALRM",
        15 => "SIGTERM",
        _ => "another signal",
    }
}

/// What the kernel accounted to the child and the descendants it waited for (wait4).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ChildUsage {
    pub user_s: f64,
    pub system_s: f64,
    pub max_rss_bytes: u64,
    pub minor_faults: u64,
    pub major_faults: u64,
    pub voluntary_switches: u64,
    pub involuntary_switches: u64,
}
