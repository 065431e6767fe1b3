//! What `memperf context` found: the cost of each context save, which of
//! them enter the kernel (from the system time they took), and the Ruby
//! lesson — what a needless heavy save per operation costs an interpreter.

use crate::about::About;
use crate::kernels::context::{Protection, SaveOp};
use crate::timing::{Ratio, Summary};
use serde::{Deserialize, Serialize};

/// What this experiment is: its name, `--help` line, question and title.
pub const ABOUT: About = About {
    name: "context",
    summary: "What setjmp, sigsetjmp, getcontext and swapcontext cost, which enter the kernel, and the Ruby lesson",
    title: "Context saves",
    question: "What do setjmp, sigsetjmp, getcontext and swapcontext cost, which of them enter the kernel, and what does a needless heavy save cost an interpreter?",
    classic: "Ruby 1.8 flushed all register windows on every protected call: removing the flush gave 10% to nearly 2×.",
};

/// Whether an operation enters the kernel, from measured system time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum KernelEntry {
    /// At least 5% of the CPU time, and at least 12 ms of it, was system
    /// time.
    Yes { system_fraction: f64 },
    /// Under 2% system time over at least 0.4 s of CPU time (2% of it is
    /// two ticks of a 250 Hz clock).
    No { system_fraction: f64 },
    /// Too little CPU time (or too little system time) to tell.
    BelowResolution { cpu_s: f64, system_s: f64 },
}

impl KernelEntry {
    pub const YES_FRACTION: f64 = 0.05;
    pub const YES_MIN_SYSTEM_S: f64 = 0.012;
    pub const NO_FRACTION: f64 = 0.02;
    pub const NO_MIN_CPU_S: f64 = 0.4;

    /// The verdict for `user_s` and `system_s` of CPU time.
    pub fn judge(user_s: f64, system_s: f64) -> KernelEntry {
        let cpu = user_s + system_s;
        let fraction = if cpu > 0.0 { system_s / cpu } else { 0.0 };
        if fraction >= Self::YES_FRACTION && system_s >= Self::YES_MIN_SYSTEM_S {
            KernelEntry::Yes { system_fraction: fraction }
        } else if fraction < Self::NO_FRACTION && cpu >= Self::NO_MIN_CPU_S {
            KernelEntry::No { system_fraction: fraction }
        } else {
            KernelEntry::BelowResolution { cpu_s: cpu, system_s }
        }
    }
}

/// One save operation on one thread count.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SaveCell {
    pub op: SaveOp,
    pub threads: usize,
    pub ops_per_sample: u64,
    pub samples_s: Vec<f64>,
    /// Nanoseconds per round trip, per thread.
    pub ns_per_op: Summary,
    pub ops_per_s_per_thread: f64,
    /// CPU time of the measuring threads over the timed samples.
    pub user_s: f64,
    pub system_s: f64,
    pub kernel: KernelEntry,
    /// Every round trip came back.
    pub valid: bool,
}

/// The interpreter with one kind of protection, one thread.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct InterpCell {
    pub protection: Protection,
    pub ops_per_sample: u64,
    pub samples_s: Vec<f64>,
    pub ns_per_op: Summary,
    pub user_s: f64,
    pub system_s: f64,
    /// The accumulator matched the reference interpreter.
    pub valid: bool,
}

/// The Ruby lesson in figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Lesson {
    /// Heavy save's time over the cheapest correct save's, paired per
    /// repetition: the speed-up of removing the needless save.
    pub removing_heavy_save: Option<Ratio>,
    /// Cheapest save's time over no save's: what protection costs at all.
    pub cheap_save_cost: Option<Ratio>,
}

/// How far below ×1 a whole interval may lie before a save that adds work
/// is called faster than the loop without it: the scheduler's noise.
pub const SAVE_NOISE: f64 = 0.05;

impl Lesson {
    /// Why the lesson's references hold nothing up, where its figures
    /// break what must hold on every CPU: each save adds work to the same
    /// interpreter loop, so the cheapest save cannot run faster than no
    /// save, nor the heavy save than the cheapest, by more than
    /// [`SAVE_NOISE`] with its whole interval. Such cells were disturbed
    /// (or a kernel is wrong), and nothing is judged against them.
    pub fn unsound(&self) -> Option<String> {
        let faster = |r: &Option<Ratio>| r.as_ref().filter(|r| r.high < 1.0 - SAVE_NOISE).map(|r| r.estimate);
        if let Some(m) = faster(&self.cheap_save_cost) {
            return Some(format!(
                "the no-save reference ran slower than the cheapest save, which adds work to it (×{m:.2}): its cells were disturbed"
            ));
        }
        faster(&self.removing_heavy_save).map(|m| {
            format!(
                "the heavy save ran faster than the cheapest, which does less (×{m:.2}): the cells were disturbed"
            )
        })
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(rename = "ContextOutcome")]
pub struct Outcome {
    pub threads: Vec<usize>,
    pub order_seed: u64,
    pub saves: Vec<SaveCell>,
    pub interpreter: Vec<InterpCell>,
    /// Operations in the interpreter's program.
    pub program_len: usize,
    pub lesson: Lesson,
    pub valid: bool,
}

impl super::Valid for Outcome {
    fn valid(&self) -> bool {
        self.valid
    }
}
