//! `memperf hugepages -- CMD`: does this unmodified program get faster on
//! huge pages, and did it really get them? It runs alternately without and
//! with glibc's `glibc.malloc.hugetlb` tunable, N runs each, in an order in
//! which every arm follows every arm equally often; each run's smaps is
//! sampled while it runs, so its coverage is read back, not assumed. The
//! speed-up is the verdict engine's over the rounds; an arm whose runs fall
//! into two groups is called bimodal, with what tells them apart, never
//! noise; a failed run is reported and left out. The method, step by step:
//! docs/methods/hugepages.md.

pub mod options;

pub use options::Options;

use crate::analysis::modes::two_modes;
use crate::analysis::second_look::{self, SecondLook};
use crate::error::{Error, Result};
use crate::machine::Fingerprint;
use crate::memory::Reservation;
use crate::model::outcome::hugepages::{Arm, ArmSummary, LonePair, Mode, Modes, Outcome, Run};
use crate::process::memory;
use crate::process::watch::{observe, Watch};
use crate::process::{elf, Exit, Program};
use crate::rng::SplitMix64;
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
fn one_run(program: &Program, p: &Params, arm: Arm, round: usize, after: Option<Arm>) -> Result<Run> {
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
        wss: None,
    };
    // A program that cannot run is bad input here (exit 2, with the fix);
    // under `stat` the status is the shell's (126/127).
    let before = crate::process::memory::kernel_activity_now();
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
        after,
        kernel: before.zip(crate::process::memory::kernel_activity_now()).map(|(b, a)| a.since(&b)),
    })
}

/// One random Eulerian circuit of the complete graph on `k` arms with
/// self-loops, from arm `start`: `k²` runs in which every ordered pair of
/// arms (an arm after itself too) follows once, closing back on `start`.
fn circuit(k: usize, start: usize, rng: &mut SplitMix64) -> Vec<usize> {
    let mut out_edges: Vec<Vec<usize>> = (0..k)
        .map(|_| {
            let mut to: Vec<usize> = (0..k).collect();
            rng.shuffle(&mut to);
            to
        })
        .collect();
    let (mut stack, mut walk) = (vec![start], Vec::with_capacity(k * k + 1));
    while let Some(&v) = stack.last() {
        match out_edges[v].pop() {
            Some(u) => stack.push(u),
            None => walk.extend(stack.pop()),
        }
    }
    walk.reverse();
    walk.pop(); // the closing return to `start` begins the next circuit
    walk
}

/// The order of the runs: each arm `rounds` times, as random circuits in
/// which every arm follows every arm equally often (balanced within one
/// where `rounds` is not a multiple of the number of arms).
pub fn order(arms: &[Arm], rounds: usize, seed: u64) -> Vec<Arm> {
    let k = arms.len();
    if k == 0 {
        return Vec::new();
    }
    let mut rng = SplitMix64(seed);
    let start = rng.below(k);
    let mut seen = vec![0usize; k];
    let mut out = Vec::with_capacity(k * rounds);
    while seen.iter().any(|&n| n < rounds) {
        for i in circuit(k, start, &mut rng) {
            if seen[i] < rounds {
                seen[i] += 1;
                out.push(arms[i]);
            }
        }
    }
    out
}

/// A seed for the order from the clock: a different order each time,
/// recorded in the document so it can be repeated.
fn order_seed() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(0)
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
    let pairs: Vec<f64> = paired_speedups(runs, arm, rounds).into_iter().map(|p| p.1).collect();
    let speedup = (arm != Arm::Without).then(|| Ratio::of(&pairs)).flatten();
    let without_walls: Vec<f64> = runs.iter().filter(|r| r.arm == Arm::Without && r.ok()).map(|r| r.wall_s).collect();
    let without_median = (arm != Arm::Without).then(|| median(&without_walls)).flatten();
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
        second_look: speedup.as_ref().and_then(|r| speedup_second_look(&pairs, r)),
        lone_pair: speedup
            .as_ref()
            .filter(|r| r.call() == crate::timing::schedule::Call::NotResolved && r.low.is_finite())
            .and_then(|_| lone_pair(runs, arm, rounds)),
        speedup,
        modes: modes_of(&ok, without_median),
        no_huge_reason: (arm != Arm::Without && peak_huge_bytes == 0 && !ok.is_empty())
            .then(|| no_huge_reason(arm, ignored, machine)),
    }
}

/// The two modes of an arm's successful runs, with what sets them apart.
fn modes_of(ok: &[&Run], without_median: Option<f64>) -> Option<Modes> {
    let walls: Vec<f64> = ok.iter().map(|r| r.wall_s).collect();
    // Wall times first; else system time, where its low group is also the
    // faster one (a kernel cost that some runs pay, hidden in the spread).
    let system: Vec<f64> = ok.iter().map(|r| r.usage.system_s.max(1e-3)).collect();
    let wall_median = |idx: &[usize]| median(&idx.iter().map(|&i| walls[i]).collect::<Vec<_>>());
    let (split, by_system_time) = match two_modes(&walls) {
        Some(s) => (s, false),
        None => {
            let s = two_modes(&system)?;
            (wall_median(&s.low)? < wall_median(&s.high)?).then_some((s, true))?
        }
    };
    let mode = |idx: &[usize]| -> Mode {
        let runs: Vec<&Run> = idx.iter().map(|&i| ok[i]).collect();
        let med = |f: fn(&Run) -> f64| median(&runs.iter().map(|r| f(r)).collect::<Vec<_>>()).unwrap_or(f64::NAN);
        let speedups: Vec<f64> =
            without_median.map(|w| runs.iter().map(|r| w / r.wall_s).collect()).unwrap_or_default();
        let range = speedups.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &v| (lo.min(v), hi.max(v)));
        let mut after: Vec<(Arm, usize)> = Vec::new();
        for a in runs.iter().filter_map(|r| r.after) {
            match after.iter_mut().find(|(x, _)| *x == a) {
                Some(e) => e.1 += 1,
                None => after.push((a, 1)),
            }
        }
        after.sort();
        let stalls: Option<Vec<f64>> = runs.iter().map(|r| r.kernel.map(|k| k.compact_stalls as f64)).collect();
        let mut rounds: Vec<usize> = runs.iter().map(|r| r.round).collect();
        rounds.sort_unstable();
        Mode {
            rounds,
            wall_s_median: med(|r| r.wall_s),
            system_s_median: med(|r| r.usage.system_s),
            speedup_range: (!speedups.is_empty()).then_some(range),
            after,
            compact_stalls_median: stalls.and_then(|v| median(&v)),
        }
    };
    Some(Modes { fast: mode(&split.low), slow: mode(&split.high), separation: split.separation, by_system_time })
}

/// The speed-up's side of 1 on each half of the rounds, where the whole
/// has a direction to check.
fn speedup_second_look(pairs: &[f64], whole: &Ratio) -> Option<SecondLook> {
    if !whole.verdict().resolved_direction() {
        return None;
    }
    let side = |half: &[f64]| match median(half) {
        Some(m) if m > 1.0 => "faster",
        Some(m) if m < 1.0 => "slower",
        _ => "no change",
    };
    Some(second_look::look(pairs, 2, side))
}

/// Wall time without / with huge pages, round by round: (round, ratio).
fn paired_speedups(runs: &[Run], arm: Arm, rounds: usize) -> Vec<(usize, f64)> {
    (0..rounds)
        .filter_map(|round| {
            let of = |a: Arm| runs.iter().find(|r| r.arm == a && r.round == round && r.ok()).map(|r| r.wall_s);
            Some((round, of(Arm::Without)? / of(arm)?))
        })
        .collect()
}

/// The one pair on the other side of 1 from all the others (four at
/// least), where the others alone have a direction.
fn lone_pair(runs: &[Run], arm: Arm, rounds: usize) -> Option<LonePair> {
    let pairs = paired_speedups(runs, arm, rounds);
    let above: Vec<&(usize, f64)> = pairs.iter().filter(|p| p.1 > 1.0).collect();
    let below: Vec<&(usize, f64)> = pairs.iter().filter(|p| p.1 < 1.0).collect();
    let lone = match (above.len(), below.len()) {
        (1, n) if n >= 4 => above[0],
        (n, 1) if n >= 4 => below[0],
        _ => return None,
    };
    let rest: Vec<f64> = pairs.iter().filter(|p| p.0 != lone.0).map(|p| p.1).collect();
    let rest = Ratio::of(&rest).filter(|r| r.verdict().resolved_direction())?;
    let run = runs.iter().find(|r| r.arm == arm && r.round == lone.0)?;
    Some(LonePair { round: lone.0, wall_s: run.wall_s, system_s: run.usage.system_s, after: run.after, rest })
}

/// "3 of 3 right after a `without` run", when one predecessor dominates.
fn predecessor_phrase(m: &Mode) -> Option<String> {
    let n = m.rounds.len();
    let (arm, count) = m.after.iter().max_by_key(|(_, c)| *c)?;
    (3 * count >= 2 * n && *count >= 2).then(|| format!("{count} of {n} right after a `{}` run", arm.name()))
}

/// The verdict on an arm whose runs form two groups: what sets the slow
/// runs apart is said as measured (system time, compaction stalls, the
/// run before), never guessed.
fn bimodal_advice(s: &ArmSummary, m: &Modes, thp_defrag: Option<&str>) -> String {
    let range = |mode: &Mode| match mode.speedup_range {
        Some((lo, hi)) if (hi / lo) < 1.02 => format!("×{lo:.2}"),
        Some((lo, hi)) => format!("×{lo:.2}–{hi:.2}"),
        None => format!("{:.2} s", mode.wall_s_median),
    };
    let extra_system = m.slow.system_s_median - m.fast.system_s_median;
    let in_kernel = extra_system >= 0.5 * (m.slow.wall_s_median - m.fast.wall_s_median);
    let stalls = m.slow.compact_stalls_median.filter(|&v| v > m.fast.compact_stalls_median.unwrap_or(0.0));
    let mut why = Vec::new();
    if in_kernel {
        why.push(format!("system time +{extra_system:.1} s"));
        match (stalls, m.slow.compact_stalls_median) {
            (Some(st), _) => why.push(format!(
                "{} compaction stalls per run: the kernel compacted memory to make 2 MiB blocks",
                crate::units::group_thousands(st.round() as u64)
            )),
            (None, Some(_)) => why.push("no compaction stall counted".into()),
            (None, None) => {}
        }
    }
    why.extend(predecessor_phrase(&m.slow));
    let (n_fast, n_slow) = (m.fast.rounds.len(), m.slow.rounds.len());
    let head = format!(
        "Huge pages ({}) are bimodal, not noisy{}: {} in {n_fast} run(s), {} in {n_slow}",
        s.arm.name(),
        if m.by_system_time { " (two groups by system time; the wall-time ratio mixes them)" } else { "" },
        range(&m.fast),
        range(&m.slow)
    );
    let why = if why.is_empty() { String::new() } else { format!(" ({})", why.join(", ")) };
    if in_kernel {
        let defrag = thp_defrag.map(|d| format!(" (it is `{d}`)")).unwrap_or_default();
        let fix = match s.arm {
            Arm::Hugetlb => "reserve the pool before the program starts, so no run waits for its pages".to_string(),
            _ => format!("the kernel's work to hand out 2 MiB pages decides the gain: reserve a hugetlb pool (--mode hugetlb --reserve-hugepages) or check THP defrag in /sys/kernel/mm/transparent_hugepage/defrag{defrag}"),
        };
        format!("{head}{why}; {fix}.")
    } else {
        format!("{head}{why}; the slow runs are not explained by system time, so no verdict: add runs (-n) to see what sets them apart.")
    }
}

/// What the A/B means for the user, in one sentence per arm.
pub fn advice(summaries: &[ArmSummary], thp_defrag: Option<&str>) -> Vec<String> {
    use crate::timing::schedule::Call;
    let without_modes = summaries.iter().find(|s| s.arm == Arm::Without).and_then(|s| s.modes.as_ref());
    summaries
        .iter()
        .filter(|s| s.arm != Arm::Without)
        .filter_map(|s| {
            let r = s.speedup.as_ref()?;
            let ratio = format!("×{:.3} [×{:.3}, ×{:.3}] over {} pairs", r.estimate, r.low, r.high, r.n);
            if let Some(why) = &s.no_huge_reason {
                return Some(format!(
                    "With {} it got no huge pages, so the A/B says nothing about them: {why}.",
                    s.arm.tunable()
                ));
            }
            if let Some(w) = without_modes {
                return Some(format!(
                    "Huge pages ({}): no verdict; the runs without them fall into two groups too ({:.2} s and {:.2} s), so the host or the program changes speed between runs (add runs with -n).",
                    s.arm.name(),
                    w.fast.wall_s_median,
                    w.slow.wall_s_median
                ));
            }
            if let Some(m) = &s.modes {
                return Some(bimodal_advice(s, m, thp_defrag));
            }
            if let Some(look) = s.second_look.as_ref().filter(|l| l.is_unstable()) {
                return Some(format!("Huge pages ({}): {ratio}, but {}: no verdict (add runs with -n).", s.arm.name(), look.describe()));
            }
            Some(match r.call() {
                Call::Above => format!(
                    "Huge pages ({}) make it faster: {ratio}. Run it with GLIBC_TUNABLES={}.",
                    s.arm.name(),
                    s.arm.tunable()
                ),
                Call::Below => format!("Huge pages ({}) make it slower: {ratio}.", s.arm.name()),
                Call::NoChange => format!("Huge pages ({}): no change, {ratio}, within ±5%.", s.arm.name()),
                Call::NotResolved if r.low.is_finite() => match &s.lone_pair {
                    Some(l) => format!(
                        "Huge pages ({}): not resolved, {ratio}, because of one pair: round {} took {:.2} s with {:.2} s of system time{}; the other {} pairs read ×{:.3} [×{:.3}, ×{:.3}]. No verdict: add runs (-n) to see whether that run was a mode or an accident.",
                        s.arm.name(),
                        l.round + 1,
                        l.wall_s,
                        l.system_s,
                        l.after.map(|a| format!(", right after a `{}` run", a.name())).unwrap_or_else(|| ", the first run".into()),
                        l.rest.n,
                        l.rest.estimate,
                        l.rest.low,
                        l.rest.high
                    ),
                    None => format!(
                        "Huge pages ({}): not resolved, {ratio}: the interval holds no change and changes beyond ±5% (add rounds with -n).",
                        s.arm.name()
                    ),
                },
                Call::NotResolved | Call::Invalid => format!(
                    "Huge pages ({}): {ratio}, too few pairs for a verdict (add rounds with -n: {} pairs at least).",
                    s.arm.name(),
                    crate::timing::schedule::MIN_PAIRS_FOR_VERDICT
                ),
            })
        })
        .collect()
}

/// Summaries and advice drawn again from the document's runs by today's
/// rules (`memperf report --reanalyze`): modes, second looks, verdicts.
fn reanalyze(o: &mut Outcome, machine: &Fingerprint) {
    o.summaries = o.arms.iter().map(|&a| summarise(&o.runs, a, o.rounds, &o.tunable_ignored, machine)).collect();
    o.advice = advice(&o.summaries, o.thp_defrag.as_deref());
}

/// Runs the A/B; `progress` sees each run as it ends. With
/// `reserve_hugepages`, the hugetlb arm's pages are reserved once, after a
/// run without them has shown the program's peak resident set.
pub fn run(program: &Program, p: &Params, machine: &Fingerprint, progress: &mut dyn FnMut(&Run)) -> Result<Outcome> {
    let linkage = elf::linkage(&program.path);
    let glibc = elf::glibc_version();
    let ignored = elf::tunable_ignored(&linkage, glibc);
    let seed = order_seed();
    let order = order(&p.arms, p.rounds, seed);
    let mut runs = Vec::new();
    let mut reservation: Option<Reservation> = None;
    for (i, &arm) in order.iter().enumerate() {
        let round = order[..i].iter().filter(|&&a| a == arm).count();
        let after = i.checked_sub(1).map(|j| order[j]);
        if arm == Arm::Hugetlb && p.reserve_hugepages && reservation.is_none() {
            let peak = runs.iter().map(|r: &Run| r.usage.max_rss_bytes).max().unwrap_or(256 << 20);
            let pages = (peak + peak / 8).div_ceil(2 << 20) + 8;
            reservation = Some(Reservation::ensure(Bytes(2 << 20), pages)?);
        }
        let r = one_run(program, p, arm, round, after)?;
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
        order_seed: Some(seed),
        thp_defrag: Some(machine.thp.defrag.clone()),
        linkage,
        glibc_version: glibc.map(|(a, b)| format!("{a}.{b}")),
        tunable_ignored: ignored,
        thp_mode: machine.thp.enabled.clone(),
        advice: advice(&summaries, Some(&machine.thp.defrag)),
        runs,
        summaries,
        valid,
    })
}

/// `memperf hugepages -- CMD`: the A/B, its report on stdout after the
/// runs (each run said as it ends).
pub struct Hugepages;

impl crate::experiments::observe::Observe for Hugepages {
    const NAME: &'static str = "hugepages";
    const EXAMPLES: &'static [&'static [&'static str]] = &[
        &["--runs", "2", "--mode", "both", "--", "true"],
    ];
    type Options = Options;
    type Params = Params;
    type Outcome = Outcome;
    const MISSING_PROGRAM_IS_BAD_INPUT: bool = true;
    const REPORT_ON_STDERR: bool = false;

    fn params(o: &Options, _machine: &Fingerprint) -> Result<Params> {
        o.params()
    }
    fn outputs(o: &Options) -> &crate::experiments::observe::Outputs {
        &o.out
    }
    fn command(o: &Options) -> Option<&[std::ffi::OsString]> {
        Some(&o.command)
    }
    fn observe(p: &Params, program: Option<&Program>, machine: &Fingerprint, say: &mut dyn FnMut(&str)) -> Result<Outcome> {
        let program = program.expect("hugepages always starts its program");
        let mut announce = |r: &Run| {
            let (round, arm) = (r.round + 1, r.arm.name());
            say(&format!("memperf hugepages: round {round} {arm:<8} {:.3} s, {}", r.wall_s, r.exit.describe()));
        };
        run(program, p, machine, &mut announce)
    }
    /// 0, or the status of a result that failed validation (a failed run).
    fn status(_o: &Outcome, valid: bool) -> u8 {
        if valid {
            0
        } else {
            crate::experiments::observe::invalid_status()
        }
    }
}

impl crate::model::Redraw for Outcome {
    fn reanalyse(&mut self, machine: &Fingerprint, _: Option<f64>) -> Vec<&'static str> {
        reanalyze(self, machine);
        vec!["summaries", "advice"]
    }
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

    /// How often each arm ran right after each arm.
    fn transitions(o: &[Arm], arms: &[Arm]) -> Vec<usize> {
        let at = |a: Arm| arms.iter().position(|&x| x == a).unwrap();
        let mut n = vec![0; arms.len() * arms.len()];
        for w in o.windows(2) {
            n[at(w[0]) * arms.len() + at(w[1])] += 1;
        }
        n
    }

    /// Every arm follows every arm (itself too) equally often, within one
    /// (the last circuit's closing step is not run), each arm runs its
    /// rounds, and a seed repeats its order; the rotation this replaces put
    /// THP after a run without it in 3 of 5 rounds in the Intel recording.
    #[test]
    fn the_order_balances_predecessors() {
        for arms in [vec![Arm::Without, Arm::Thp], vec![Arm::Without, Arm::Thp, Arm::Hugetlb]] {
            for rounds in [arms.len() * 4, arms.len() * 4 + 1, 5] {
                for seed in 0..20 {
                    let o = order(&arms, rounds, seed);
                    for &a in &arms {
                        assert_eq!(o.iter().filter(|&&x| x == a).count(), rounds);
                    }
                    let t = transitions(&o, &arms);
                    let (lo, hi) = (*t.iter().min().unwrap(), *t.iter().max().unwrap());
                    let allowed = if rounds % arms.len() == 0 { 1 } else { 2 };
                    assert!(hi - lo <= allowed, "{arms:?} {rounds} seed {seed}: {t:?}");
                    assert_eq!(order(&arms, rounds, seed), o);
                }
            }
        }
        let distinct: std::collections::BTreeSet<Vec<Arm>> =
            (0..20).map(|seed| order(&[Arm::Without, Arm::Thp], 8, seed)).collect();
        assert!(distinct.len() >= 4, "the seed randomises the order: {distinct:?}");
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
            after: None,
            kernel: None,
        }
    }

    #[test]
    fn failed_runs_are_reported_and_left_out_and_no_coverage_is_explained() {
        let machine = crate::machine::collect();
        let mut runs = Vec::new();
        for round in 0..12 {
            runs.push(run_of(Arm::Without, round, 2.0, 0, 0));
            runs.push(run_of(Arm::Thp, round, 1.0, if round == 5 { 3 } else { 0 }, 50));
        }
        let s = summarise(&runs, Arm::Thp, 12, &None, &machine);
        assert_eq!((s.runs_ok, s.runs_failed), (11, 1));
        let r = s.speedup.as_ref().unwrap();
        assert_eq!((r.n, r.estimate), (11, 2.0));
        assert_eq!(s.no_huge_reason, None);
        assert!(advice(&[s], None)[0].starts_with("Huge pages (thp) make it faster: ×2.000"));
        let none: Vec<Run> =
            (0..6).flat_map(|r| [run_of(Arm::Without, r, 2.0, 0, 0), run_of(Arm::Thp, r, 2.0, 0, 0)]).collect();
        let ignored = Some("the program is statically linked".to_string());
        let s = summarise(&none, Arm::Thp, 6, &ignored, &machine);
        assert_eq!(s.no_huge_reason.as_deref(), Some("the program is statically linked"));
        assert!(advice(&[s], None)[0].contains("got no huge pages, so the A/B says nothing"));
    }

    /// The A/B recorded in the Intel recording: a program
    /// reading 2 GiB at random, THP right after a run without it in 3 of 5
    /// rounds. Those three runs took 4.6–6.2 s with 3–4 s of system time,
    /// the other two 1.2–1.3 s: this was said "within the noise, ×0.438
    /// [×0.319, ×1.690]"; it is two modes, named with their cause.
    #[test]
    fn the_recorded_bimodal_thp_arm_is_named_with_its_cause() {
        let machine = crate::machine::collect();
        let order = [
            Arm::Without,
            Arm::Thp,
            Arm::Thp,
            Arm::Without,
            Arm::Without,
            Arm::Thp,
            Arm::Thp,
            Arm::Without,
            Arm::Without,
            Arm::Thp,
        ];
        let without = [(1.98, 0.7), (2.05, 0.7), (2.12, 0.7), (2.01, 0.6), (2.09, 0.7)];
        let thp = [(6.20, 4.5), (1.29, 0.8), (4.88, 3.8), (1.22, 0.7), (4.63, 3.6)];
        let mut runs = Vec::new();
        let (mut w, mut t) = (0, 0);
        for (i, &arm) in order.iter().enumerate() {
            let (round, (wall, sys)) = if arm == Arm::Without { (w, without[w]) } else { (t, thp[t]) };
            let mut r = run_of(arm, round, wall, 0, if arm == Arm::Thp { 60 } else { 0 });
            r.usage.system_s = sys;
            r.after = i.checked_sub(1).map(|j| order[j]);
            runs.push(r);
            if arm == Arm::Without {
                w += 1
            } else {
                t += 1
            }
        }
        let s: Vec<ArmSummary> =
            [Arm::Without, Arm::Thp].iter().map(|&a| summarise(&runs, a, 5, &None, &machine)).collect();
        assert_eq!(s[0].modes, None, "the arm without huge pages is one group");
        let m = s[1].modes.as_ref().expect("two modes");
        assert_eq!((m.fast.rounds.clone(), m.slow.rounds.clone()), (vec![1, 3], vec![0, 2, 4]));
        assert_eq!(m.slow.after, vec![(Arm::Without, 3)]);
        let a = advice(&s, Some("madvise"));
        assert_eq!(a.len(), 1);
        assert!(a[0].starts_with("Huge pages (thp) are bimodal, not noisy: ×1.59–1.68 in 2 run(s), ×0.33–0.44 in 3 (system time +3.0 s, 3 of 3 right after a `without` run); the kernel's work"), "{}", a[0]);
        assert!(a[0].contains("reserve a hugetlb pool") && a[0].contains("(it is `madvise`)"), "{}", a[0]);
        assert!(!a[0].contains("noise,"), "{}", a[0]);
        // With /proc/vmstat read: stalls name compaction; none say so.
        for (stalls, said) in
            [(1500, "1,500 compaction stalls per run: the kernel compacted"), (0, "no compaction stall counted")]
        {
            for r in runs.iter_mut() {
                let slow = r.arm == Arm::Thp && r.wall_s > 4.0;
                r.kernel = Some(memory::KernelActivity {
                    compact_stalls: if slow { stalls } else { 0 },
                    ..Default::default()
                });
            }
            let s: Vec<ArmSummary> =
                [Arm::Without, Arm::Thp].iter().map(|&a| summarise(&runs, a, 5, &None, &machine)).collect();
            let a = advice(&s, None);
            assert!(a[0].contains(&format!("(system time +3.0 s, {said}")), "{}", a[0]);
        }
    }

    /// The 2002 sample application under `hugepages -n 6` in the Zen 4
    /// recording (docs/validation.md): the THP runs' wall times (14.3–18.5 s) are
    /// closer than two modes need, and the A/B read "within the noise,
    /// ×0.945". Their system time is two groups: 0.2 s in the two runs
    /// after a THP run, 3.4–3.8 s in the four after a run without. That
    /// is named, not called noise.
    #[test]
    fn two_groups_in_system_time_are_named_when_wall_times_blur_them() {
        let machine = crate::machine::collect();
        let rows = [
            (Arm::Thp, None, 17.214, 3.430),
            (Arm::Thp, Some(Arm::Thp), 14.301, 0.208),
            (Arm::Without, Some(Arm::Thp), 16.616, 0.664),
            (Arm::Without, Some(Arm::Without), 16.074, 0.600),
            (Arm::Thp, Some(Arm::Without), 18.539, 3.776),
            (Arm::Thp, Some(Arm::Thp), 14.814, 0.236),
            (Arm::Without, Some(Arm::Thp), 16.536, 0.739),
            (Arm::Without, Some(Arm::Without), 16.083, 0.591),
            (Arm::Thp, Some(Arm::Without), 17.522, 3.603),
            (Arm::Without, Some(Arm::Thp), 16.196, 0.620),
            (Arm::Without, Some(Arm::Without), 16.137, 0.604),
            (Arm::Thp, Some(Arm::Without), 18.129, 3.490),
        ];
        let (mut w, mut t) = (0, 0);
        let runs: Vec<Run> = rows
            .iter()
            .map(|&(arm, after, wall, sys)| {
                let round = if arm == Arm::Without { (w, w += 1).0 } else { (t, t += 1).0 };
                let mut r = run_of(arm, round, wall, 0, if arm == Arm::Thp { 99 } else { 0 });
                r.usage.system_s = sys;
                r.after = after;
                r
            })
            .collect();
        let s: Vec<ArmSummary> =
            [Arm::Without, Arm::Thp].iter().map(|&a| summarise(&runs, a, 6, &None, &machine)).collect();
        assert_eq!(s[0].modes, None);
        let m = s[1].modes.as_ref().expect("two groups by system time");
        assert!(m.by_system_time);
        assert_eq!((m.fast.rounds.clone(), m.slow.rounds.clone()), (vec![1, 3], vec![0, 2, 4, 5]));
        let a = advice(&s, Some("madvise"));
        assert!(
            a[0].starts_with("Huge pages (thp) are bimodal, not noisy (two groups by system time; the wall-time ratio mixes them): ×1.09–1.13 in 2 run(s), ×0.87–0.94 in 4 (system time +3.3 s, 3 of 4 right after a `without` run)"),
            "{}",
            a[0]
        );
    }

    /// A speed-up whose even and odd rounds disagree gives no advice.
    #[test]
    fn halves_that_disagree_make_the_verdict_unstable() {
        // The whole: 29 pairs ×1.5 and 11 at ×1.0, faster; the odd half
        // alone: 11 at ×1.0 and 9 at ×1.5, its median no change.
        let pairs: Vec<f64> = (0..40).map(|i| if i % 2 == 1 && i < 22 { 1.0 } else { 1.5 }).collect();
        let whole = Ratio::of(&pairs).unwrap();
        assert_eq!(whole.call(), crate::timing::schedule::Call::Above);
        let look = speedup_second_look(&pairs, &whole).unwrap();
        assert!(look.is_unstable(), "{look:?}");
        let mut s = summarise(&[], Arm::Thp, 0, &None, &crate::machine::collect());
        s.speedup = Some(whole);
        s.second_look = Some(look);
        let a = advice(&[s], None);
        assert!(a[0].contains("unstable: faster on one half, no change on the other: no verdict"), "{}", a[0]);
        let steady: Vec<f64> = (0..20).map(|i| 1.4 + 0.01 * i as f64).collect();
        assert!(matches!(speedup_second_look(&steady, &Ratio::of(&steady).unwrap()), Some(SecondLook::Stable { .. })));
    }

    /// The hugetlb arm in the Zen 4 recording: five pairs at ×1.8–2.4 and the
    /// first run after the pool was reserved at ×0.48. The interval across
    /// 1 is said to rest on that one pair, with what set it apart.
    #[test]
    fn one_pair_that_keeps_the_interval_across_one_is_named() {
        let machine = crate::machine::collect();
        let hugetlb = [5.56, 1.27, 1.18, 1.33, 1.30, 1.18, 1.25, 1.22, 1.31, 1.20, 1.28, 1.24];
        let mut runs = Vec::new();
        for (round, &h) in hugetlb.iter().enumerate() {
            runs.push(run_of(Arm::Without, round, 2.5 + 0.05 * round as f64, 0, 0));
            let mut r = run_of(Arm::Hugetlb, round, h, 0, 90);
            r.usage.system_s = if round == 0 { 4.54 } else { 0.2 };
            r.after = Some(Arm::Without);
            runs.push(r);
        }
        let s = summarise(&runs, Arm::Hugetlb, 12, &None, &machine);
        assert_eq!(s.speedup.as_ref().unwrap().call(), crate::timing::schedule::Call::NotResolved);
        let l = s.lone_pair.as_ref().expect("one pair apart");
        assert_eq!((l.round, l.rest.n), (0, 11));
        let a = advice(&[s], None);
        assert!(a[0].contains("because of one pair: round 1 took 5.56 s with 4.54 s of system time, right after a `without` run; the other 11 pairs read ×"), "{}", a[0]);
        assert!(a[0].contains("No verdict"), "{}", a[0]);
    }
}
