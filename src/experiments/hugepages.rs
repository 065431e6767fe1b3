//! `memperf hugepages -- CMD`: does this unmodified program get faster on
//! huge pages, and did it really get them?
//!
//! The program runs alternately without and with glibc's
//! `glibc.malloc.hugetlb` tunable (1: malloc asks for THP; 2: malloc takes
//! hugetlb pages), N rounds, the order of the arms rotated each round. Every
//! run's /proc/PID/smaps_rollup is sampled while it runs, so the coverage it
//! actually got is read back, not assumed. Runs are paired by round; the
//! speed-up is the median of the per-round ratios with its interval. A run
//! that fails is reported and left out of every figure.

use crate::error::{Error, Result};
use crate::experiments::stat::watch::{observe, Watch};
use crate::machine::Fingerprint;
use crate::memory::Reservation;
use crate::model::outcome::hugepages::{Arm, ArmSummary, Outcome, Run};
use crate::process::memory;
use crate::process::{elf, Exit, Program};
use crate::timing::{Ratio, Summary};
use crate::units::Bytes;
use serde::Serialize;
use std::ffi::OsString;
use std::os::fd::{FromRawFd, OwnedFd};
use std::time::Duration;

/// Memory is sampled this often while a run lasts (counters: page faults
/// and CPU time everywhere; cycles, instructions and walks where a PMU is).
pub const SAMPLE_PERIOD: Duration = Duration::from_millis(50);

#[derive(Debug, Clone, Serialize)]
pub struct Params {
    pub command: Vec<String>,
    pub rounds: usize,
    pub arms: Vec<Arm>,
    pub show_output: bool,
    /// Sample the memory of the program's child processes too.
    pub children: bool,
    pub reserve_hugepages: bool,
}

/// GLIBC_TUNABLES as the user had it, with our hugetlb entry in place of theirs.
pub fn tunables(existing: Option<&str>, arm: Arm) -> String {
    let mut parts: Vec<&str> = existing
        .unwrap_or("")
        .split(':')
        .filter(|p| !p.is_empty() && !p.starts_with("glibc.malloc.hugetlb="))
        .collect();
    parts.push(arm.tunable());
    parts.join(":")
}

/// A memory file for a run's output when it is not shown.
fn output_file() -> Result<OwnedFd> {
    // SAFETY: memfd_create with a NUL-terminated name; the fd is checked.
    let fd = unsafe { libc::memfd_create(c"memperf-run-output".as_ptr(), libc::MFD_CLOEXEC) };
    if fd < 0 {
        return Err(Error::io("cannot make a file for the program's output", std::io::Error::last_os_error()));
    }
    // SAFETY: a fresh descriptor owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// The last 2 KiB of what the run wrote.
fn tail(fd: &OwnedFd) -> String {
    use std::io::{Read, Seek, SeekFrom};
    let Ok(copy) = fd.try_clone() else { return String::new() };
    let mut f = std::fs::File::from(copy);
    let len = f.seek(SeekFrom::End(0)).unwrap_or(0);
    let _ = f.seek(SeekFrom::Start(len.saturating_sub(2048)));
    let mut buf = Vec::new();
    let _ = f.read_to_end(&mut buf);
    String::from_utf8_lossy(&buf).into_owned()
}

/// One run of one arm, watched until it ends.
fn one_run(program: &Program, p: &Params, arm: Arm, round: usize) -> Result<Run> {
    let existing = std::env::var("GLIBC_TUNABLES").ok();
    let env: Vec<(OsString, OsString)> = vec![("GLIBC_TUNABLES".into(), tunables(existing.as_deref(), arm).into())];
    let out = if p.show_output { None } else { Some(output_file()?) };
    let events = crate::counters::events::compact_set(&crate::machine::cpuid::this_identity());
    let w = Watch {
        events: &events,
        env: &env,
        output: out.as_ref(),
        period: SAMPLE_PERIOD,
        interval_rows: false,
        children: p.children,
    };
    // A program that cannot run is bad input here (exit 2, with the fix);
    // under `stat` the status is the shell's (126/127).
    let seen = observe(program, &w, &crate::counters::PerfBackend, &mut |_| {}).map_err(|e| match e.kind {
        crate::error::ErrorKind::Child(_) => crate::error::Error { kind: crate::error::ErrorKind::Usage, ..e },
        _ => e,
    })?;
    let ok = seen.exit == Exit::Exited { code: 0 };
    Ok(Run {
        arm,
        round,
        exit: seen.exit,
        wall_s: seen.wall_s,
        usage: seen.usage,
        coverage: memory::coverage(&seen.memory_samples),
        output_tail: out.as_ref().filter(|_| !ok).map(tail),
        counters: seen.events,
    })
}

/// Arms of each round, rotated so no arm always runs first.
pub fn order(arms: &[Arm], rounds: usize) -> Vec<Arm> {
    (0..rounds)
        .flat_map(|r| {
            let mut a = arms.to_vec();
            a.rotate_left(r % arms.len().max(1));
            a
        })
        .collect()
}

fn median(v: &[f64]) -> Option<f64> {
    crate::timing::stats::median(v)
}

/// Why `arm` got no huge pages.
fn no_huge_reason(arm: Arm, ignored: &Option<String>, machine: &Fingerprint) -> String {
    if let Some(why) = ignored {
        return why.clone();
    }
    match arm {
        Arm::Thp if machine.thp.enabled == "never" => {
            "THP is off (`never`): echo madvise > /sys/kernel/mm/transparent_hugepage/enabled".into()
        }
        Arm::Hugetlb if machine.pool(Bytes(2 << 20)).map(|p| p.available()).unwrap_or(0) == 0 => {
            "no free 2 MiB hugetlb pages: add --reserve-hugepages (root), or reserve them in /proc/sys/vm/nr_hugepages"
                .into()
        }
        _ => "none of its memory was seen on huge pages: the tunable reaches memory glibc's malloc maps itself; a program with its own allocator, or whose data is not from malloc, is not reached".into(),
    }
}

fn summarise(runs: &[Run], arm: Arm, rounds: usize, ignored: &Option<String>, machine: &Fingerprint) -> ArmSummary {
    let mine: Vec<&Run> = runs.iter().filter(|r| r.arm == arm).collect();
    let ok: Vec<&Run> = mine.iter().copied().filter(|r| r.ok()).collect();
    let walls: Vec<f64> = ok.iter().map(|r| r.wall_s).collect();
    let fractions: Vec<f64> = ok.iter().filter_map(|r| r.coverage.time_weighted_huge_fraction).collect();
    let peak_huge_bytes = ok.iter().map(|r| r.coverage.peak_huge_bytes).max().unwrap_or(0);
    let speedup = (arm != Arm::Without).then(|| {
        let pairs: Vec<f64> = (0..rounds)
            .filter_map(|round| {
                let of = |a: Arm| runs.iter().find(|r| r.arm == a && r.round == round && r.ok()).map(|r| r.wall_s);
                Some(of(Arm::Without)? / of(arm)?)
            })
            .collect();
        Ratio::of(&pairs)
    });
    let counter_medians = ok
        .first()
        .map(|r| {
            r.counters
                .iter()
                .enumerate()
                .map(|(i, e)| {
                    let v: Option<Vec<f64>> =
                        ok.iter().map(|r| r.counters.get(i).and_then(|c| c.status.value()).map(|v| v.0)).collect();
                    (e.name.clone(), v.and_then(|v| median(&v)))
                })
                .collect()
        })
        .unwrap_or_default();
    ArmSummary {
        arm,
        counter_medians,
        runs_ok: ok.len(),
        runs_failed: mine.len() - ok.len(),
        wall_s: Summary::of(&walls),
        user_s_median: median(&ok.iter().map(|r| r.usage.user_s).collect::<Vec<_>>()),
        system_s_median: median(&ok.iter().map(|r| r.usage.system_s).collect::<Vec<_>>()),
        peak_huge_bytes,
        huge_fraction_median: median(&fractions),
        speedup: speedup.flatten(),
        no_huge_reason: (arm != Arm::Without && peak_huge_bytes == 0 && !ok.is_empty())
            .then(|| no_huge_reason(arm, ignored, machine)),
    }
}

/// What the A/B means for the user, in one sentence per arm.
pub fn advice(summaries: &[ArmSummary]) -> Vec<String> {
    use crate::timing::schedule::Direction;
    summaries
        .iter()
        .filter(|s| s.arm != Arm::Without)
        .filter_map(|s| {
            let r = s.speedup.as_ref()?;
            let ratio = format!("×{:.3} [×{:.3}, ×{:.3}] over {} pairs", r.median, r.low, r.high, r.n);
            Some(match (r.direction(), &s.no_huge_reason) {
                (_, Some(why)) => {
                    format!("With {} it got no huge pages, so the A/B says nothing about them: {why}.", s.arm.tunable())
                }
                (Direction::Above, None) => format!(
                    "Huge pages ({}) make it faster: {ratio}. Run it with GLIBC_TUNABLES={}.",
                    s.arm.name(),
                    s.arm.tunable()
                ),
                (Direction::Below, None) => format!("Huge pages ({}) make it slower: {ratio}.", s.arm.name()),
                (Direction::WithinNoise, None) => {
                    format!("Huge pages ({}): within the noise, {ratio}; no gain this A/B can show.", s.arm.name())
                }
                (Direction::TooFewPairs, None) => {
                    format!("Huge pages ({}): {ratio}, too few pairs for a verdict (add rounds with -n).", s.arm.name())
                }
            })
        })
        .collect()
}

/// Runs the A/B; `progress` sees each run as it ends. With
/// `reserve_hugepages`, the hugetlb arm's pages are reserved once, after a
/// run without them has shown the program's peak resident set.
pub fn run(program: &Program, p: &Params, machine: &Fingerprint, progress: &mut dyn FnMut(&Run)) -> Result<Outcome> {
    let linkage = elf::linkage(&program.path);
    let glibc = elf::glibc_version();
    let ignored = elf::tunable_ignored(&linkage, glibc);
    let order = order(&p.arms, p.rounds);
    let mut runs = Vec::new();
    let mut reservation: Option<Reservation> = None;
    for (i, &arm) in order.iter().enumerate() {
        let round = i / p.arms.len();
        if arm == Arm::Hugetlb && p.reserve_hugepages && reservation.is_none() {
            let peak = runs.iter().map(|r: &Run| r.usage.max_rss_bytes).max().unwrap_or(256 << 20);
            let pages = (peak + peak / 8).div_ceil(2 << 20) + 8;
            reservation = Some(Reservation::ensure(Bytes(2 << 20), pages)?);
        }
        let r = one_run(program, p, arm, round)?;
        progress(&r);
        runs.push(r);
        if crate::process::signals::received() {
            crate::experiments::INTERRUPTED.store(true, std::sync::atomic::Ordering::SeqCst);
        }
        if crate::experiments::INTERRUPTED.load(std::sync::atomic::Ordering::SeqCst) {
            break;
        }
    }
    drop(reservation);
    let summaries: Vec<ArmSummary> = p.arms.iter().map(|&a| summarise(&runs, a, p.rounds, &ignored, machine)).collect();
    let valid = runs.iter().all(|r| r.ok()) && runs.len() == order.len();
    Ok(Outcome {
        command: p.command.clone(),
        rounds: p.rounds,
        arms: p.arms.clone(),
        order,
        linkage,
        glibc_version: glibc.map(|(a, b)| format!("{a}.{b}")),
        tunable_ignored: ignored,
        thp_mode: machine.thp.enabled.clone(),
        advice: advice(&summaries),
        runs,
        summaries,
        valid,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tunable_replaces_only_its_own_entry() {
        assert_eq!(tunables(None, Arm::Thp), "glibc.malloc.hugetlb=1");
        assert_eq!(
            tunables(Some("glibc.malloc.arena_max=2:glibc.malloc.hugetlb=2"), Arm::Without),
            "glibc.malloc.arena_max=2:glibc.malloc.hugetlb=0"
        );
    }

    #[test]
    fn the_order_alternates_and_rotates() {
        let o = order(&[Arm::Without, Arm::Thp], 3);
        assert_eq!(o, [Arm::Without, Arm::Thp, Arm::Thp, Arm::Without, Arm::Without, Arm::Thp]);
    }

    fn run_of(arm: Arm, round: usize, wall_s: f64, code: i32, huge: u64) -> Run {
        Run {
            arm,
            round,
            exit: Exit::Exited { code },
            wall_s,
            usage: Default::default(),
            coverage: memory::Coverage {
                samples: 3,
                peak_rss_bytes: 100,
                peak_huge_bytes: huge,
                time_weighted_huge_fraction: Some(huge as f64 / 100.0),
            },
            output_tail: None,
            counters: Vec::new(),
        }
    }

    #[test]
    fn failed_runs_are_reported_and_left_out_and_no_coverage_is_explained() {
        let machine = Fingerprint::collect();
        let mut runs = Vec::new();
        for round in 0..6 {
            runs.push(run_of(Arm::Without, round, 2.0, 0, 0));
            runs.push(run_of(Arm::Thp, round, 1.0, if round == 5 { 3 } else { 0 }, 50));
        }
        let s = summarise(&runs, Arm::Thp, 6, &None, &machine);
        assert_eq!((s.runs_ok, s.runs_failed), (5, 1));
        let r = s.speedup.as_ref().unwrap();
        assert_eq!((r.n, r.median), (5, 2.0));
        assert_eq!(s.no_huge_reason, None);
        assert!(advice(&[s])[0].starts_with("Huge pages (thp) make it faster: ×2.000"));
        let none: Vec<Run> =
            (0..6).flat_map(|r| [run_of(Arm::Without, r, 2.0, 0, 0), run_of(Arm::Thp, r, 2.0, 0, 0)]).collect();
        let ignored = Some("the program is statically linked".to_string());
        let s = summarise(&none, Arm::Thp, 6, &ignored, &machine);
        assert_eq!(s.no_huge_reason.as_deref(), Some("the program is statically linked"));
        assert!(advice(&[s])[0].contains("got no huge pages, so the A/B says nothing"));
    }
}
