//! A team of pinned threads that start one kernel together.
//!
//! Each thread is pinned to its own CPU, waits on a barrier, and records its
//! start and end on the shared clock. The elapsed time of a team run is from
//! the earliest start to the latest end, so a straggler counts against the
//! aggregate bandwidth, as it should. Thread creation and pinning happen
//! before the barrier, outside the timed interval.

use super::Clock;
use crate::error::{Error, Result};
use std::sync::Barrier;

/// The CPUs a team runs on, one thread per CPU.
#[derive(Debug, Clone)]
pub struct Team {
    cpus: Vec<usize>,
}

/// What one team run measured.
#[derive(Debug, Clone)]
pub struct TeamRun<R> {
    pub elapsed_ns: u64,
    /// One result per thread, in thread order.
    pub results: Vec<R>,
    /// Per thread: the CPU it was pinned to, and the CPUs it was seen on
    /// at the start and at the end of its work (`sched_getcpu`).
    pub placement: Vec<Placement>,
}

/// Where one thread of a team ran.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placement {
    pub pinned_to: usize,
    /// The error of pinning, if it failed (the thread then ran anywhere).
    pub pin_error: Option<String>,
    pub cpu_at_start: Option<usize>,
    pub cpu_at_end: Option<usize>,
}

impl Placement {
    /// The thread stayed on the CPU it was pinned to.
    pub fn stayed(&self) -> bool {
        self.pin_error.is_none()
            && self.cpu_at_start.is_none_or(|c| c == self.pinned_to)
            && self.cpu_at_end.is_none_or(|c| c == self.pinned_to)
    }
}

/// The CPU the calling thread runs on now.
pub fn current_cpu() -> Option<usize> {
    // SAFETY: sched_getcpu has no preconditions.
    let c = unsafe { libc::sched_getcpu() };
    (c >= 0).then_some(c as usize)
}

impl Team {
    /// A team of `threads` threads on the first `threads` CPUs this process
    /// may run on. More threads than CPUs is refused: oversubscription would
    /// measure the scheduler, not memory.
    pub fn new(threads: usize) -> Result<Team> {
        let allowed = allowed_cpus();
        if threads == 0 {
            return Err(Error::usage("--threads must be at least 1"));
        }
        if threads > allowed.len() {
            return Err(Error::unsatisfiable(
                format!("{threads} threads requested but this process may run on {} CPUs", allowed.len()),
                format!("use --threads {} or fewer", allowed.len()),
            ));
        }
        Ok(Team { cpus: allowed[..threads].to_vec() })
    }

    pub fn threads(&self) -> usize {
        self.cpus.len()
    }

    pub fn cpus(&self) -> &[usize] {
        &self.cpus
    }

    /// Runs `work(thread_index)` on every thread at once and times it.
    pub fn run<R, F>(&self, clock: &dyn Clock, work: F) -> TeamRun<R>
    where
        R: Send,
        F: Fn(usize) -> R + Sync,
    {
        let barrier = Barrier::new(self.cpus.len());
        let per_thread: Vec<(u64, u64, R, Placement)> = std::thread::scope(|s| {
            let handles: Vec<_> = self
                .cpus
                .iter()
                .enumerate()
                .map(|(i, &cpu)| {
                    let (barrier, work) = (&barrier, &work);
                    s.spawn(move || {
                        // Pinning can fail in a restricted cpuset: recorded,
                        // and the experiment warns.
                        let pin_error = pin_current_thread(cpu).err().map(|e| e.to_string());
                        barrier.wait();
                        let cpu_at_start = current_cpu();
                        let start = clock.now_ns();
                        let r = work(i);
                        let end = clock.now_ns();
                        let placement =
                            Placement { pinned_to: cpu, pin_error, cpu_at_start, cpu_at_end: current_cpu() };
                        (start, end, r, placement)
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().expect("kernel thread panicked")).collect()
        });
        let start = per_thread.iter().map(|t| t.0).min().unwrap_or(0);
        let end = per_thread.iter().map(|t| t.1).max().unwrap_or(0);
        let (results, placement) = per_thread.into_iter().map(|t| (t.2, t.3)).unzip();
        TeamRun { elapsed_ns: end.saturating_sub(start), results, placement }
    }
}

/// The default thread counts of a sweep: 1, 2, 4 … and every CPU this
/// process may use (1..N without measuring every count on a big machine).
pub fn thread_ladder() -> Vec<usize> {
    let all = allowed_cpus().len().max(1);
    let mut v: Vec<usize> = std::iter::successors(Some(1usize), |t| Some(t * 2)).take_while(|&t| t < all).collect();
    v.push(all);
    v
}

/// CPUs in this process's affinity mask, ascending.
pub fn allowed_cpus() -> Vec<usize> {
    // SAFETY: cpu_set_t is plain data; sched_getaffinity writes at most
    // size_of::<cpu_set_t>() bytes into it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return (0..std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)).collect();
        }
        (0..libc::CPU_SETSIZE as usize).filter(|&c| libc::CPU_ISSET(c, &set)).collect()
    }
}

/// Pins the calling thread to one CPU until dropped, then restores the
/// affinity it had (so later teams still see every CPU).
pub struct PinGuard {
    saved: Option<libc::cpu_set_t>,
}

impl PinGuard {
    pub fn pin(cpu: usize) -> PinGuard {
        // SAFETY: cpu_set_t is plain data; sched_getaffinity fills it.
        let saved = unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            (libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) == 0).then_some(set)
        };
        let _ = pin_current_thread(cpu);
        PinGuard { saved }
    }

    /// Pins to the first CPU this thread may use.
    pub fn first_cpu() -> PinGuard {
        PinGuard::pin(allowed_cpus().first().copied().unwrap_or(0))
    }
}

impl Drop for PinGuard {
    fn drop(&mut self) {
        if let Some(set) = &self.saved {
            // SAFETY: restoring a mask read by sched_getaffinity.
            unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), set) };
        }
    }
}

/// Pins the calling thread to one CPU.
pub fn pin_current_thread(cpu: usize) -> std::io::Result<()> {
    // SAFETY: cpu_set_t is plain data initialised by CPU_ZERO/CPU_SET; the
    // call only reads it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_ZERO(&mut set);
        libc::CPU_SET(cpu, &mut set);
        if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::timing::FakeClock;

    #[test]
    fn team_runs_every_thread_and_times_the_span() {
        let team = Team::new(1).unwrap();
        let clock = FakeClock::stepping(vec![100]);
        let run = team.run(&clock, |i| i * 7);
        assert_eq!(run.results, vec![0]);
        assert_eq!(run.elapsed_ns, 100);
    }

    #[test]
    fn threads_run_on_distinct_cpus() {
        let n = allowed_cpus().len();
        let team = Team::new(n).unwrap();
        let clock = crate::timing::MonotonicClock::new();
        let run = team.run(&clock, |_| current_cpu().expect("sched_getcpu"));
        let mut seen = run.results.clone();
        seen.sort();
        seen.dedup();
        assert_eq!(seen.len(), n, "cpus {:?}", run.results);
        // Each thread ran where it was pinned, and the record says so.
        for (p, cpu) in run.placement.iter().zip(&run.results) {
            assert_eq!(p.pinned_to, *cpu);
            assert!(p.stayed(), "{p:?}");
        }
    }

    #[test]
    fn pin_guard_restores_the_affinity() {
        let before = allowed_cpus();
        {
            let _g = PinGuard::first_cpu();
            assert_eq!(allowed_cpus().len(), 1);
        }
        assert_eq!(allowed_cpus(), before);
    }

    #[test]
    fn too_many_threads_is_refused_with_a_fix() {
        let n = allowed_cpus().len();
        let e = Team::new(n + 1).unwrap_err();
        assert_eq!(e.kind.exit_code(), 2);
        assert!(e.fix.unwrap().contains(&format!("--threads {n}")));
        assert!(Team::new(0).is_err());
    }
}
