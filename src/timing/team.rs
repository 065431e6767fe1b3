//! A team of pinned threads that start one kernel together. The threads
//! are made and pinned once and wait for work between runs (a thread made
//! for every sample would start on a cold stack and a fresh migration),
//! staying awake for the next sample ([`super::wait`]). Each run's threads
//! wait on a spinning barrier and record their start and end on the shared
//! clock; a run lasts from the earliest start to the latest end, so a
//! straggler counts against the aggregate bandwidth, as it should.

use super::wait::{self, SpinBarrier, HOT_WAIT};
use super::Clock;
use crate::error::{Error, Result};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};

/// The CPUs a team runs on, one thread per CPU, and the threads.
pub struct Team {
    cpus: Vec<usize>,
    workers: Workers,
}

impl std::fmt::Debug for Team {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Team").field("cpus", &self.cpus).finish()
    }
}

/// What one worker of a run leaves: start, end, result, placement.
type Slot<R> = Mutex<Option<(u64, u64, R, Placement)>>;

/// One run's work, its lifetime erased: `run` does not return before every
/// worker has finished with it.
type Job = *const (dyn Fn(usize) + Sync);

/// What the workers share with the team.
struct Shared {
    state: Mutex<State>,
    /// Bumped (under the `state` lock) for each run and at quit; a worker
    /// runs each generation once. Atomic so that an idle worker can spin
    /// on it for a while before it sleeps on `start` (see [`wait`]).
    generation: AtomicU64,
    start: Condvar,
    done: Condvar,
}

struct State {
    job: Option<SendJob>,
    finished: usize,
    /// A worker's job panicked (the message), re-raised by `run`.
    panicked: Option<String>,
    quit: bool,
}

#[derive(Clone, Copy)]
struct SendJob(Job);
// SAFETY: the pointee is Sync and outlives every use (see `Team::run`).
unsafe impl Send for SendJob {}

struct Workers {
    shared: Arc<Shared>,
    handles: Vec<std::thread::JoinHandle<()>>,
}

impl Drop for Workers {
    fn drop(&mut self) {
        let mut st = self.shared.state.lock().unwrap_or_else(|e| e.into_inner());
        st.quit = true;
        // Wakes a hot-waiting worker, which then finds `quit`.
        self.shared.generation.fetch_add(1, Ordering::AcqRel);
        drop(st);
        self.shared.start.notify_all();
        for h in self.handles.drain(..) {
            let _ = h.join();
        }
    }
}

fn worker(shared: Arc<Shared>, index: usize) {
    let mut seen = 0u64;
    loop {
        wait::hot_wait(&shared.generation, seen, &wait::RUNS_STARTED, HOT_WAIT);
        let job = {
            let mut st = shared.state.lock().unwrap_or_else(|e| e.into_inner());
            while shared.generation.load(Ordering::Acquire) == seen && !st.quit {
                st = shared.start.wait(st).unwrap_or_else(|e| e.into_inner());
            }
            if st.quit {
                return;
            }
            seen = shared.generation.load(Ordering::Acquire);
            st.job.expect("a job comes with each generation")
        };
        // SAFETY: `run` keeps the job alive until every worker has counted
        // itself finished below.
        let f = unsafe { &*job.0 };
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(index)));
        let mut st = shared.state.lock().unwrap_or_else(|e| e.into_inner());
        if let Err(e) = outcome {
            let msg = e.downcast_ref::<&str>().map(|s| s.to_string()).or_else(|| e.downcast_ref::<String>().cloned());
            st.panicked = Some(msg.unwrap_or_else(|| "a team thread panicked".into()));
        }
        st.finished += 1;
        shared.done.notify_all();
    }
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
        Team::on(allowed[..threads].to_vec())
    }

    /// A team with one thread pinned to each of `cpus`.
    pub fn on(cpus: Vec<usize>) -> Result<Team> {
        let threads = cpus.len();
        if threads == 0 {
            return Err(Error::usage("a team needs at least one CPU"));
        }
        let shared = Arc::new(Shared {
            state: Mutex::new(State { job: None, finished: 0, panicked: None, quit: false }),
            generation: AtomicU64::new(0),
            start: Condvar::new(),
            done: Condvar::new(),
        });
        let handles = (0..threads)
            .map(|i| {
                let shared = Arc::clone(&shared);
                std::thread::Builder::new().name(format!("memperf-team-{i}")).spawn(move || worker(shared, i)).map_err(
                    |e| {
                        Error::unsatisfiable(
                            format!("cannot start a measuring thread: {e}"),
                            "raise the process's thread limit (ulimit -u)",
                        )
                    },
                )
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Team { cpus, workers: Workers { shared, handles } })
    }

    pub fn threads(&self) -> usize {
        self.cpus.len()
    }

    pub fn cpus(&self) -> &[usize] {
        &self.cpus
    }

    /// As [`run`](Team::run), but `work(thread_index, released_ns)` is
    /// also given when the team left its start barrier (every thread the
    /// same time: the first read after it to be published, which is after
    /// every thread arrived). A window set from it opens
    /// only once every thread is awake and pinned; one set before the run
    /// starts while the workers are still waking, and a thread the host
    /// woke late found it over.
    pub fn run_released<R, F>(&self, clock: &dyn Clock, work: F) -> TeamRun<R>
    where
        R: Send,
        F: Fn(usize, u64) -> R + Sync,
    {
        let released = AtomicU64::new(0);
        self.run(clock, |i| {
            let now = clock.now_ns().max(1);
            let at = match released.compare_exchange(0, now, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => now,
                Err(first) => first,
            };
            work(i, at)
        })
    }

    /// Runs `work(thread_index)` on every thread at once and times it.
    pub fn run<R, F>(&self, clock: &dyn Clock, work: F) -> TeamRun<R>
    where
        R: Send,
        F: Fn(usize) -> R + Sync,
    {
        let n = self.cpus.len();
        let barrier = SpinBarrier::new(n);
        let slots: Vec<Slot<R>> = (0..n).map(|_| Mutex::new(None)).collect();
        let job = |i: usize| {
            let cpu = self.cpus[i];
            // Pinning can fail in a restricted cpuset: recorded, and the
            // experiment warns. Pinning an already pinned thread is cheap.
            let pin_error = pin_current_thread(cpu).err().map(|e| e.to_string());
            barrier.wait();
            let cpu_at_start = current_cpu();
            let start = clock.now_ns();
            let r = work(i);
            let end = clock.now_ns();
            let placement = Placement { pinned_to: cpu, pin_error, cpu_at_start, cpu_at_end: current_cpu() };
            *slots[i].lock().unwrap_or_else(|e| e.into_inner()) = Some((start, end, r, placement));
        };
        let erased: &(dyn Fn(usize) + Sync) = &job;
        let shared = &self.workers.shared;
        let mut st = shared.state.lock().unwrap_or_else(|e| e.into_inner());
        // SAFETY: only the lifetime is erased; this function waits below
        // until every worker has finished calling the job, and the job (with
        // everything it borrows) lives until then.
        st.job = Some(SendJob(unsafe { std::mem::transmute::<&(dyn Fn(usize) + Sync), Job>(erased) }));
        st.finished = 0;
        wait::run_starting();
        shared.generation.fetch_add(1, Ordering::AcqRel);
        shared.start.notify_all();
        while st.finished < n {
            st = shared.done.wait(st).unwrap_or_else(|e| e.into_inner());
        }
        st.job = None;
        if let Some(msg) = st.panicked.take() {
            drop(st);
            panic!("kernel thread panicked: {msg}");
        }
        drop(st);
        let per_thread: Vec<(u64, u64, R, Placement)> = slots
            .into_iter()
            .map(|m| m.into_inner().unwrap_or_else(|e| e.into_inner()).expect("every worker ran"))
            .collect();
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
    fn the_same_threads_serve_every_run() {
        let team = Team::new(allowed_cpus().len()).unwrap();
        let clock = crate::timing::MonotonicClock::new();
        let ids = |_: usize| format!("{:?}", std::thread::current().id());
        let first = team.run(&clock, ids).results;
        for _ in 0..20 {
            assert_eq!(team.run(&clock, ids).results, first, "threads are made once, not per run");
        }
        let borrowed = [5u64; 4];
        let sums = team.run(&clock, |i| borrowed.iter().sum::<u64>() + i as u64).results;
        assert_eq!(sums[0], 20, "work may borrow the caller's data");
    }

    #[test]
    fn a_panicking_kernel_panics_the_caller_and_the_team_survives() {
        let team = Team::new(1).unwrap();
        let clock = crate::timing::MonotonicClock::new();
        let r =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| team.run(&clock, |_| -> u8 { panic!("boom") })));
        let msg = r.unwrap_err();
        assert!(msg.downcast_ref::<String>().unwrap().contains("boom"));
        assert_eq!(team.run(&clock, |i| i).results, vec![0], "the worker caught it and waits for more");
    }

    #[test]
    fn team_runs_every_thread_and_times_the_span() {
        let team = Team::new(1).unwrap();
        let clock = FakeClock::stepping(vec![100]);
        let run = team.run(&clock, |i| i * 7);
        assert_eq!(run.results, vec![0]);
        assert_eq!(run.elapsed_ns, 100);
    }

    /// Every thread is given the same release time, read after the start
    /// barrier: with a clock stepping 100 ns a read, the run's start is
    /// 100 and the release the read after it, 200 (one thread), never a
    /// time from before the run.
    #[test]
    fn every_thread_is_given_the_one_time_the_team_was_released() {
        let one = Team::new(1).unwrap();
        let clock = FakeClock::stepping(vec![100]);
        let run = one.run_released(&clock, |_, at| at);
        assert_eq!(run.results, vec![200]);
        let team = Team::new(allowed_cpus().len()).unwrap();
        let clock = crate::timing::MonotonicClock::new();
        for _ in 0..20 {
            let before = clock.now_ns();
            let run = team.run_released(&clock, |_, at| at);
            assert!(run.results.iter().all(|&at| at == run.results[0] && at >= before), "{:?}", run.results);
        }
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
