//! The warning catalogue: every condition that weakens or limits a result,
//! with its stable code, its message, and a fix rendered for the command
//! that is running — a subcommand's own option, or what `memperf run`
//! accepts — so that no fix names a flag the user cannot pass.
//!
//! The document stores the rendered [`Warning`] (code, message, fix), so a
//! renderer needs nothing but the document.

use crate::document::Warning;
use crate::units::Bytes;

/// The command a fix is written for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Command {
    /// `memperf run` (the suite): its own options only.
    Run,
    /// A measuring subcommand, by its CLI name (`bandwidth`, `latency` …).
    Sub(&'static str),
}

impl Command {
    /// `memperf latency`, or `memperf run`.
    pub fn invocation(self) -> String {
        match self {
            Command::Run => "memperf run".into(),
            Command::Sub(s) => format!("memperf {s}"),
        }
    }
}

/// One entry of the catalogue.
#[derive(Debug, Clone, PartialEq)]
pub enum Caution {
    NoPmu {
        reason: String,
        fix: Option<String>,
    },
    NoHugepages {
        page: Bytes,
    },
    ThpOff {
        mode: String,
    },
    ThpPartial {
        what: &'static str,
        fraction: f64,
    },
    CacheSizeDisagreement {
        level: u8,
        kind: String,
        os: Bytes,
        cpuid: Option<Bytes>,
    },
    DebugBuild,
    /// The machine has cores of more than one kind.
    MixedCoreKinds {
        kinds: Vec<String>,
        first_cpu: usize,
        first_kind: String,
        first_kind_cpus: String,
    },
    /// memperf runs under emulation: its figures are the emulator's.
    Emulated {
        why: String,
    },
    /// memperf's aarch64 figures have not been checked against independent
    /// tools on Arm hardware (said until a real run is recorded).
    ArmNotYetChecked,
    TimerCoarse {
        step_ns: f64,
    },
    StealTime {
        fraction: f64,
    },
    /// The core clock measured before and after an experiment differs.
    ClockMoved {
        before_ghz: f64,
        after_ghz: f64,
        /// The OS sets the frequency (a cpufreq governor exists).
        cpufreq: bool,
    },
    /// The suite's reference moved beyond
    /// [`HOST_MOVED_LIMIT`](crate::timing::drift::HOST_MOVED_LIMIT) between
    /// its points: its absolute figures carry the move (its paired verdicts
    /// do not).
    HostMoved {
        moved: f64,
        evidence: String,
    },
    /// A sweep's share of the time box ended before its last points: `ran`
    /// of its `of` points (in its order of value) were measured.
    SweepCut {
        what: String,
        ran: usize,
        of: usize,
    },
    /// The suite ended past its time box.
    BoxOverrun {
        box_s: f64,
        took_s: f64,
    },
    /// The cache levels could not be measured: sizes come from plausible
    /// claims, or a default.
    LevelsNotMeasured {
        reason: String,
    },
    /// A claimed cache fails a plausibility check: it sizes and names nothing.
    CacheClaimImplausible {
        level: u8,
        kind: String,
        size: Bytes,
        reasons: Vec<String>,
    },
    /// A claimed cache is larger than where the measured curve reaches
    /// its far (memory) level.
    CacheClaimNotSeen {
        level: u8,
        size: Bytes,
        far_from: Bytes,
        far_ns: f64,
    },
    /// The core clock could not be measured (the chains disagree, or no
    /// believable figure): nothing is given in cycles.
    ClockNotMeasured {
        reason: String,
    },
    ReserveFailed {
        message: String,
        fix: Option<String>,
    },
    /// The suite left out hugetlb pages for latency: too few free.
    SuiteNoHugetlb {
        need: u64,
        free: u64,
    },
    /// An experiment of the suite the machine could not run.
    Skipped {
        experiment: &'static str,
        message: String,
        fix: Option<String>,
    },
    /// A streaming array below 4× the last-level cache, read by `threads`
    /// at most; `one_in_memory`, where the run verified one thread's read
    /// to be in memory at the array's size (then only the read of more
    /// than one thread, whose bound every such count shares, is partly
    /// from cache).
    WorkingSetInCache {
        size: Bytes,
        llc: Bytes,
        threads: usize,
        one_in_memory: Option<Bytes>,
    },
    /// The latency sweep stops below 4× the last-level cache.
    LatencyMaxBelow4xLlc {
        max: Bytes,
        llc: Bytes,
    },
    Noisy {
        noisy: usize,
        total: usize,
        limit_cv: f64,
        worst_cv: f64,
    },
    Checksum {
        what: &'static str,
    },
    /// In this many samples a thread ran on a CPU other than the one it
    /// was pinned to (or could not be pinned).
    Migrated {
        samples: usize,
    },
    PageInitBelowLimit {
        fraction: f64,
    },
    /// A variant ran faster than the measured store limit: the limit is broken.
    PageInitAboveLimit {
        variant: String,
        fraction: f64,
    },
    /// A figure whose system time lies below the clock-tick resolution.
    SystemTimeBelowResolution {
        seconds: f64,
    },
    /// Counted windows whose chaser or traffic counted nothing (a thread
    /// stalled past the whole window) were run again: `rerun` of the
    /// `windows` kept (warm-ups and probes among them), `never` of which
    /// still counted nothing after the last try.
    WindowsRunAgain {
        experiment: String,
        rerun: usize,
        never: usize,
        windows: usize,
    },
    /// Huge pages do not enlarge the TLB reach here (the host backs the
    /// guest with small pages): the curves step at the same page count.
    HugeSameReach {
        huge: String,
        pages: u64,
    },
    /// Several ranks of a launch run on this host at once.
    RanksShareHost {
        ranks: u64,
    },
    /// One variant of an experiment could not be set up here; the others
    /// were measured.
    VariantUnavailable {
        experiment: &'static str,
        variant: String,
        message: String,
        fix: Option<String>,
    },
    /// A figure disagrees with a second measurement of it in the same run.
    SecondLookDisagrees {
        experiment: &'static str,
        what: String,
        ratio: f64,
        tolerance: f64,
    },
}

/// How to get `pages` free hugetlb pages of `page` size for `cmd`.
pub fn reserve_fix(page: Bytes, pages: u64, cmd: Command) -> String {
    let sys = crate::memory::pool_command(page, pages);
    // `info` measures nothing: the suite is what the pages are for.
    let cmd = if cmd == Command::Sub(crate::outcome::info::ABOUT.name) { Command::Run } else { cmd };
    format!("{} --reserve-hugepages (as root), or {sys} (as root)", cmd.invocation())
}

impl Caution {
    pub fn code(&self) -> &'static str {
        match self {
            Caution::NoPmu { .. } => "no-pmu",
            Caution::NoHugepages { .. } => "no-hugepages",
            Caution::ThpOff { .. } => "thp-off",
            Caution::ThpPartial { .. } => "thp-partial",
            Caution::CacheSizeDisagreement { .. } => "cache-size-disagreement",
            Caution::DebugBuild => "debug-build",
            Caution::Emulated { .. } => "emulated",
            Caution::MixedCoreKinds { .. } => "mixed-core-kinds",
            Caution::ArmNotYetChecked => "aarch64-not-yet-checked",
            Caution::TimerCoarse { .. } => "timer-coarse",
            Caution::StealTime { .. } => "steal-time",
            Caution::ClockMoved { .. } => "clock-moved",
            Caution::ClockNotMeasured { .. } => "clock-not-measured",
            Caution::LevelsNotMeasured { .. } => "levels-not-measured",
            Caution::HostMoved { .. } => "host-moved",
            Caution::SweepCut { .. } => "sweep-cut",
            Caution::BoxOverrun { .. } => "box-overrun",
            Caution::CacheClaimImplausible { .. } => "cache-claim-implausible",
            Caution::CacheClaimNotSeen { .. } => "cache-claim-not-seen",
            Caution::ReserveFailed { .. } => "reserve-hugepages",
            Caution::SuiteNoHugetlb { .. } => "suite-no-hugetlb",
            Caution::Skipped { .. } => "skipped",
            Caution::WorkingSetInCache { .. } => "working-set-in-cache",
            Caution::LatencyMaxBelow4xLlc { .. } => "latency-max-below-4x-llc",
            Caution::Noisy { .. } => "noisy",
            Caution::Checksum { .. } => "checksum",
            Caution::Migrated { .. } => "cpu-migration",
            Caution::PageInitBelowLimit { .. } => "page-init-below-limit",
            Caution::PageInitAboveLimit { .. } => "page-init-limit-broken",
            Caution::SystemTimeBelowResolution { .. } => "system-time-below-resolution",
            Caution::WindowsRunAgain { .. } => "windows-run-again",
            Caution::HugeSameReach { .. } => "huge-pages-same-tlb-reach",
            Caution::VariantUnavailable { .. } => "variant-unavailable",
            Caution::SecondLookDisagrees { .. } => "second-look-disagrees",
            Caution::RanksShareHost { .. } => "ranks-share-host",
        }
    }

    /// One line saying what happened. One arm per caution: a catalogue read
    /// by its variant, which a split would scatter, so it stays whole.
    pub fn message(&self) -> String {
        match self {
            Caution::NoPmu { reason, .. } => format!("hardware counters unavailable: {reason}"),
            Caution::NoHugepages { page } => {
                format!("no {page} hugetlb pages are free: hugetlb page policies cannot be measured")
            }
            Caution::ThpOff { mode } => format!("transparent huge pages are {mode}: the thp policy gets base pages"),
            Caution::ThpPartial { what, fraction } => {
                format!("only {:.0}% of the thp {what} is on huge pages", fraction * 100.0)
            }
            Caution::CacheSizeDisagreement { level, kind, os, cpuid } => format!(
                "L{level} {kind} cache: the OS reports {os}, CPUID {}; memperf uses the OS figure (what this system may use)",
                cpuid.map(|b| b.to_string()).unwrap_or_else(|| "nothing".into())
            ),
            Caution::DebugBuild => {
                "this is a debug build: its kernels are not optimised and its figures are meaningless".into()
            }
            Caution::Emulated { why } => why.clone(),
            Caution::MixedCoreKinds { kinds, first_cpu, first_kind, .. } => format!(
                "this machine has {} kinds of core ({}): one-thread measurements run on CPU {first_cpu} ({first_kind}), \
                 teams on the CPUs after it, across kinds",
                kinds.len(),
                kinds.join("; ")
            ),
            Caution::ArmNotYetChecked => "memperf's aarch64 figures have not yet been checked against independent \
                 tools (likwid-bench, STREAM, a C chase) on Arm hardware: read them as unconfirmed"
                .into(),
            Caution::TimerCoarse { step_ns } => format!("the monotonic clock advances in steps of {step_ns:.0} ns"),
            Caution::StealTime { fraction } => {
                format!("the hypervisor stole {:.1}% of CPU time during the measurement", fraction * 100.0)
            }
            Caution::HostMoved { moved, evidence } => format!(
                "the host moved by {:.0}% during this run ({evidence}): absolute figures measured across the move carry it; \
                 the verdicts pair their arms within each repetition, and their intervals carry what is left",
                moved * 100.0
            ),
            Caution::SweepCut { what, ran, of } => format!(
                "{what}: {ran} of {of} measured within the experiment's share of the time box; \
                 the rest, last in its order of value, were left out"
            ),
            Caution::BoxOverrun { box_s, took_s } => {
                format!("the suite took {took_s:.0} s, past its {box_s:.0} s time box")
            }
            Caution::LevelsNotMeasured { reason } => format!(
                "cache levels not measured — {reason}: working sets are sized from plausible CPUID/sysfs claims"
            ),
            Caution::CacheClaimImplausible { level, kind, size, reasons } => format!(
                "the claimed L{level} {kind} cache of {size} is implausible ({}): nothing is sized or named after it",
                reasons.join("; ")
            ),
            Caution::CacheClaimNotSeen { level, size, far_from, far_ns } => format!(
                "L{level} is claimed at {size}, but latency reaches its far level ({far_ns:.0} ns) from {far_from}: {}",
                "a guest shares its host's cache, which a neighbour may fill now and free later, so working sets that must outgrow the cache are sized past the claim"
            ),
            Caution::ClockNotMeasured { reason } => {
                format!("core clock not measured — {reason}: no figure is given in cycles")
            }
            Caution::ClockMoved { before_ghz, after_ghz, .. } => format!(
                "the core clock moved during the measurement: {before_ghz:.2} GHz before, {after_ghz:.2} GHz after ({:+.1}%)",
                (after_ghz / before_ghz - 1.0) * 100.0
            ),
            Caution::ReserveFailed { message, .. } | Caution::Skipped { message, .. } => message.clone(),
            Caution::RanksShareHost { ranks } => format!(
                "{ranks} ranks of this launch run on this host at once: they share its memory bandwidth and caches, \
                 so each rank's figures are its share, not the host's"
            ),
            Caution::VariantUnavailable { experiment, variant, message, .. } => {
                format!("{experiment}: variant {variant} not measured: {message}")
            }
            Caution::SuiteNoHugetlb { need, free } => format!(
                "latency on hugetlb 2 MiB pages needs {need} free pages ({free} free): measured on 4 KiB and THP only"
            ),
            Caution::WorkingSetInCache { size, llc, threads, one_in_memory: None } => format!(
                "the array ({size}) is less than 4× the last-level cache ({llc}): part of it is read from cache{}",
                if *threads > 1 { " (by every thread count)" } else { "" }
            ),
            Caution::WorkingSetInCache { size, llc, threads, one_in_memory: Some(from) } => format!(
                "the array ({size}) is less than 4× the last-level cache ({llc}): read by more than one thread at once \
                 (up to {threads} here), part of it comes from cache (one thread's read is in memory from {from}, \
                 verified in this run)"
            ),
            Caution::LatencyMaxBelow4xLlc { max, llc } => format!(
                "the largest working set ({max}) is less than 4× the last-level cache ({llc}): the DRAM figure still includes cache hits"
            ),
            Caution::Noisy { noisy, total, limit_cv, worst_cv } => format!(
                "{noisy} of {total} variants vary by more than {:.0}% between samples (worst CV {:.0}%)",
                limit_cv * 100.0,
                worst_cv * 100.0
            ),
            Caution::Checksum { what } => {
                format!("{what}: a checksum differs from its closed-form expectation, so these figures are invalid")
            }
            Caution::Migrated { samples } => format!(
                "in {samples} sample(s) a measuring thread ran off the CPU it was pinned to (or could not be pinned): those samples mix CPUs"
            ),
            Caution::PageInitBelowLimit { fraction } => {
                format!("the best variant reaches {:.0}% of the store-bandwidth limit", fraction * 100.0)
            }
            Caution::PageInitAboveLimit { variant, fraction } => format!(
                "variant {variant} runs at {:.0}% of the measured store limit: the limit is not a limit, and the fractions are not meaningful",
                fraction * 100.0
            ),
            Caution::SystemTimeBelowResolution { seconds } => format!(
                "the shortest prefetch-fault cell ran {seconds:.2} s, too short for clock ticks to resolve its system time: such cells report it as below resolution"
            ),
            Caution::WindowsRunAgain { experiment, rerun, never, windows } => format!(
                "{experiment}: {rerun} of its {windows} timed windows (warm-ups and probes among them) were run again: \
                 a thread was stalled past its whole window (the host, or a neighbour on its CPU) and counted nothing; {}",
                match never {
                    0 => "each counted on a later try".to_string(),
                    n => format!("{n} still counted nothing on its last try: that run has no figure"),
                }
            ),
            Caution::SecondLookDisagrees { experiment, what, ratio, tolerance } => format!(
                "{experiment}: {what} is ×{ratio:.2} its second look in the same run, beyond ±{:.0}%: the host moved \
                 between them, or one of the two methods is off",
                tolerance * 100.0
            ),
            Caution::HugeSameReach { huge, pages } => format!(
                "{huge} pages step at the same page count as 4 KiB pages (~{pages} pages): their translations use 4 KiB TLB entries here (a VM whose host backs it with small pages), so huge pages do not enlarge the TLB reach and no walk cost is derived from them"
            ),
        }
    }

    /// The fix, in terms the running command accepts; one arm per caution
    /// (a catalogue, whole for the same reason as `message`).
    pub fn fix(&self, cmd: Command) -> Option<String> {
        let sub_or_run = |sub_opt: String, alone: &str| match cmd {
            Command::Sub(_) => sub_opt,
            Command::Run => format!("run `memperf {alone} {sub_opt}` on its own"),
        };
        match self {
            Caution::NoPmu { fix, .. }
            | Caution::ReserveFailed { fix, .. }
            | Caution::Skipped { fix, .. }
            | Caution::VariantUnavailable { fix, .. } => fix.clone(),
            Caution::RanksShareHost { .. } => Some(
                "launch one rank per host to measure the host (srun --ntasks-per-node=1, mpirun --map-by ppr:1:node)"
                    .into(),
            ),
            Caution::NoHugepages { page } => {
                Some(reserve_fix(*page, if page.0 == 2 << 20 { 1024 } else { 2 }, cmd))
            }
            Caution::ThpOff { .. } => Some("echo madvise > /sys/kernel/mm/transparent_hugepage/enabled (as root)".into()),
            Caution::ThpPartial { .. } => Some(format!(
                "echo 1 > /proc/sys/vm/compact_memory (as root) and rerun, or {}",
                match cmd {
                    Command::Sub(_) => "use --pages 2m --reserve-hugepages".to_string(),
                    Command::Run => "memperf run --reserve-hugepages".to_string(),
                }
            )),
            Caution::CacheSizeDisagreement { .. } => None,
            Caution::DebugBuild => Some("cargo run --release".into()),
            Caution::Emulated { .. } => Some("run the native build on the machine itself".into()),
            Caution::MixedCoreKinds { first_kind_cpus, .. } => {
                Some(format!("measure one kind at a time: taskset -c {first_kind_cpus} {}", cmd.invocation()))
            }
            Caution::ArmNotYetChecked => None,
            Caution::TimerCoarse { .. } => Some("use a kernel clocksource with fine resolution (tsc): cat /sys/devices/system/clocksource/clocksource0/current_clocksource".into()),
            Caution::StealTime { .. } => Some("rerun when the host is quieter, or on dedicated cores".into()),
            Caution::ClockMoved { cpufreq: true, .. } => Some(
                "fix the frequency (cpupower frequency-set -g performance, as root) and rerun, or rerun when the host is quieter".into(),
            ),
            Caution::ClockMoved { cpufreq: false, .. } => Some(
                "this system has no cpufreq (a guest: the host sets the clock); rerun when the host is quieter, or on dedicated cores".into(),
            ),
            Caution::LevelsNotMeasured { .. } => {
                Some("free memory (the probe maps 256 MiB or more) and rerun; sizes can be set with --size".into())
            }
            Caution::CacheClaimImplausible { .. } | Caution::CacheClaimNotSeen { .. } => None,
            Caution::HostMoved { .. } => {
                Some("compare absolute figures with `memperf compare` over several runs a side, or rerun on dedicated cores".into())
            }
            Caution::SweepCut { .. } | Caution::BoxOverrun { .. } => {
                Some("memperf run --full, or each experiment on its own with its options".into())
            }
            Caution::ClockNotMeasured { .. } => Some(
                "figures in ns are unaffected; for cycles, rerun on an idle machine (chains that still disagree mean this core folds them)".into(),
            ),
            Caution::SuiteNoHugetlb { need, .. } => Some(reserve_fix(Bytes(2 << 20), *need, Command::Run)),
            Caution::WorkingSetInCache { llc, .. } => {
                Some(sub_or_run(format!("--size {}", Bytes(4 * llc.0)), crate::outcome::bandwidth::ABOUT.name))
            }
            Caution::LatencyMaxBelow4xLlc { llc, .. } => Some(match cmd {
                Command::Run => "memperf run --full".into(),
                Command::Sub(_) => format!("--sizes 4KiB:{}", Bytes((4 * llc.0).next_power_of_two())),
            }),
            Caution::Noisy { .. } => Some(match cmd {
                Command::Run => "close other programs and rerun, or memperf run --full (more samples)".into(),
                Command::Sub(_) => "close other programs, rerun with more --repetitions, or on an idle host".into(),
            }),
            Caution::Checksum { .. } => Some("report this as a bug, with the JSON document".into()),
            Caution::Migrated { .. } => {
                Some("check the CPU affinity memperf was given (taskset -p $$, cgroup cpusets) and rerun".into())
            }
            Caution::PageInitBelowLimit { .. } => Some(match cmd {
                Command::Run => "run `memperf page-init --ahead 0:64:8` on its own to find the best distance".into(),
                Command::Sub(_) => "sweep the prefetch distance wider: --ahead 0:64:8".into(),
            }),
            Caution::PageInitAboveLimit { .. } => {
                Some("report this with the JSON document: the store kernels did not reach the machine's write bandwidth".into())
            }
            Caution::SystemTimeBelowResolution { .. } => Some(match cmd {
                Command::Run => "run `memperf prefetch-fault --full` on its own for longer cells".into(),
                Command::Sub(_) => "use --full for cells of at least a second".into(),
            }),
            Caution::WindowsRunAgain { .. } => {
                Some("measure on an idle machine, with nothing else pinned to the CPUs it measures".into())
            }
            Caution::HugeSameReach { .. } => {
                Some("measure on bare metal, or on a VM whose host backs guest memory with huge pages".into())
            }
            Caution::SecondLookDisagrees { experiment, .. } => Some(match cmd {
                Command::Run => format!("run `memperf {experiment}` on its own on an idle machine and compare"),
                Command::Sub(_) => "run again on an idle machine; if it still disagrees, report it with the JSON document".into(),
            }),
        }
    }

    /// The warning as the document stores it, with the fix for `cmd`.
    pub fn render(&self, cmd: Command) -> Warning {
        let code = match self {
            Caution::Skipped { experiment, .. } => format!("{experiment}-skipped"),
            _ => self.code().to_string(),
        };
        Warning { code, message: self.message(), fix: self.fix(cmd) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixes_name_only_options_the_running_command_accepts() {
        let w =
            Caution::WorkingSetInCache { size: Bytes(1 << 20), llc: Bytes(32 << 20), threads: 1, one_in_memory: None };
        assert_eq!(w.fix(Command::Sub("bandwidth")).unwrap(), "--size 128MiB");
        let run = w.fix(Command::Run).unwrap();
        assert!(run.starts_with("run `memperf bandwidth --size"), "{run}");
        let hp = Caution::NoHugepages { page: Bytes(1 << 30) }.fix(Command::Sub("latency")).unwrap();
        assert!(hp.starts_with("memperf latency --reserve-hugepages"), "{hp}");
        assert!(hp.contains("hugepages-1048576kB/nr_hugepages"), "{hp}");
        let suite = Caution::SuiteNoHugetlb { need: 16, free: 0 }.render(Command::Run);
        assert!(suite.fix.unwrap().starts_with("memperf run --reserve-hugepages"));
    }

    #[test]
    fn skipped_codes_name_the_experiment() {
        let w = Caution::Skipped { experiment: "tlb", message: "no".into(), fix: None }.render(Command::Run);
        assert_eq!(w.code, "tlb-skipped");
    }
}
