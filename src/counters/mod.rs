//! Hardware and software event counters through perf_event_open.
//!
//! Counters sit behind [`CounterBackend`] so tests can use a deterministic
//! double; [`PerfBackend`] is the real one (perf-event2). Every reading
//! carries time-enabled and time-running, so a multiplexed counter is scaled
//! and *says* it was multiplexed; a counter that could not be opened is a
//! [`CounterStatus::Unavailable`] with its reason, never a zero.

use serde::{Deserialize, Serialize};
use std::io;

/// The events memperf knows how to open.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Event {
    Cycles,
    Instructions,
    CacheMisses,
    PageFaults,
    TaskClock,
}

/// One read of a counter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reading {
    pub count: u64,
    pub time_enabled_ns: u64,
    pub time_running_ns: u64,
}

/// What a counter yielded, as the document records it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "kebab-case")]
pub enum CounterStatus {
    /// Counted the whole time.
    Measured { count: u64 },
    /// Counted part of the time and scaled up by enabled/running.
    Multiplexed { estimate: f64, running_fraction: f64 },
    /// Enabled but never scheduled on the PMU: nothing is known.
    NotCounted,
    /// Could not be opened.
    Unavailable { reason: String, fix: Option<String> },
}

impl Reading {
    pub fn status(&self) -> CounterStatus {
        if self.time_running_ns == 0 {
            return CounterStatus::NotCounted;
        }
        if self.time_running_ns >= self.time_enabled_ns {
            return CounterStatus::Measured { count: self.count };
        }
        let fraction = self.time_running_ns as f64 / self.time_enabled_ns as f64;
        CounterStatus::Multiplexed { estimate: self.count as f64 / fraction, running_fraction: fraction }
    }
}

/// An opened counter on the calling thread.
pub trait RunningCounter {
    fn enable(&mut self) -> io::Result<()>;
    fn disable(&mut self) -> io::Result<()>;
    fn read(&mut self) -> io::Result<Reading>;
}

/// Opens counters for the calling process.
pub trait CounterBackend {
    fn open(&self, event: Event) -> io::Result<Box<dyn RunningCounter>>;
}

/// The real backend: perf_event_open for this process, user space only
/// (so that perf_event_paranoid=2 does not refuse it).
pub struct PerfBackend;

struct PerfCounter(perf_event::Counter);

impl RunningCounter for PerfCounter {
    fn enable(&mut self) -> io::Result<()> {
        self.0.enable()
    }
    fn disable(&mut self) -> io::Result<()> {
        self.0.disable()
    }
    fn read(&mut self) -> io::Result<Reading> {
        let r = self.0.read_count_and_time()?;
        Ok(Reading { count: r.count, time_enabled_ns: r.time_enabled, time_running_ns: r.time_running })
    }
}

impl CounterBackend for PerfBackend {
    fn open(&self, event: Event) -> io::Result<Box<dyn RunningCounter>> {
        use perf_event::events::{Hardware, Software};
        let mut b = match event {
            Event::Cycles => perf_event::Builder::new(Hardware::CPU_CYCLES),
            Event::Instructions => perf_event::Builder::new(Hardware::INSTRUCTIONS),
            Event::CacheMisses => perf_event::Builder::new(Hardware::CACHE_MISSES),
            Event::PageFaults => perf_event::Builder::new(Software::PAGE_FAULTS),
            Event::TaskClock => perf_event::Builder::new(Software::TASK_CLOCK),
        };
        // Builder defaults: disabled, kernel and hypervisor excluded,
        // time enabled/running in the read format. Page faults happen in the
        // kernel on behalf of the task but are counted for it regardless.
        b.observe_self().any_cpu().inherit(false);
        Ok(Box::new(PerfCounter(b.build()?)))
    }
}

/// Whether hardware counters can be opened here, and if not, why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PmuStatus {
    pub hardware_counters: bool,
    pub software_counters: bool,
    pub reason: Option<String>,
    pub fix: Option<String>,
    pub perf_event_paranoid: Option<i32>,
}

/// Explains an open failure of a hardware event.
pub fn explain_open_error(err: &io::Error, paranoid: Option<i32>) -> (String, String) {
    match err.raw_os_error() {
        Some(libc::ENOENT) | Some(libc::EOPNOTSUPP) | Some(libc::ENODEV) => (
            "no hardware PMU is exposed to this system (typical of a VM without a virtual PMU)".into(),
            "run on bare metal, or enable the vPMU in the hypervisor (e.g. QEMU/KVM -cpu host,pmu=on)".into(),
        ),
        Some(libc::EACCES) | Some(libc::EPERM) => (
            format!(
                "perf_event_open refused by permission (perf_event_paranoid = {})",
                paranoid.map(|p| p.to_string()).unwrap_or_else(|| "unknown".into())
            ),
            "sysctl kernel.perf_event_paranoid=1, or run as root / with CAP_PERFMON".into(),
        ),
        Some(libc::ENOSYS) => {
            ("the kernel has no perf_event support".into(), "use a kernel built with CONFIG_PERF_EVENTS".into())
        }
        _ => (format!("perf_event_open failed: {err}"), "check `perf stat -e cycles true`".into()),
    }
}

pub fn read_paranoid() -> Option<i32> {
    std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid").ok()?.trim().parse().ok()
}

/// Probes by opening (and reading) a cycle counter and a page-fault counter.
pub fn probe(backend: &dyn CounterBackend, paranoid: Option<i32>) -> PmuStatus {
    let try_event = |e: Event| -> io::Result<()> {
        let mut c = backend.open(e)?;
        c.enable()?;
        c.disable()?;
        c.read().map(|_| ())
    };
    let software = try_event(Event::PageFaults).is_ok();
    match try_event(Event::Cycles) {
        Ok(()) => PmuStatus {
            hardware_counters: true,
            software_counters: software,
            reason: None,
            fix: None,
            perf_event_paranoid: paranoid,
        },
        Err(e) => {
            let (reason, fix) = explain_open_error(&e, paranoid);
            PmuStatus {
                hardware_counters: false,
                software_counters: software,
                reason: Some(reason),
                fix: Some(fix),
                perf_event_paranoid: paranoid,
            }
        }
    }
}

/// Counts `event` over `work` on the calling thread.
pub fn count<R>(backend: &dyn CounterBackend, event: Event, work: impl FnOnce() -> R) -> (R, CounterStatus) {
    let mut c = match backend.open(event) {
        Ok(c) => c,
        Err(e) => {
            let (reason, fix) = explain_open_error(&e, read_paranoid());
            return (work(), CounterStatus::Unavailable { reason, fix: Some(fix) });
        }
    };
    let started = c.enable();
    let r = work();
    let _ = c.disable();
    let status = match (started, c.read()) {
        (Ok(()), Ok(reading)) => reading.status(),
        (Err(e), _) | (_, Err(e)) => {
            CounterStatus::Unavailable { reason: format!("counter read failed: {e}"), fix: None }
        }
    };
    (r, status)
}

#[cfg(test)]
pub mod double {
    //! A scripted counter backend for tests.
    use super::*;
    use std::collections::HashMap;

    pub struct ScriptedBackend {
        pub results: HashMap<Event, Result<Reading, i32>>,
    }

    struct Scripted(Reading);
    impl RunningCounter for Scripted {
        fn enable(&mut self) -> io::Result<()> {
            Ok(())
        }
        fn disable(&mut self) -> io::Result<()> {
            Ok(())
        }
        fn read(&mut self) -> io::Result<Reading> {
            Ok(self.0)
        }
    }

    impl CounterBackend for ScriptedBackend {
        fn open(&self, event: Event) -> io::Result<Box<dyn RunningCounter>> {
            match self.results.get(&event) {
                Some(Ok(r)) => Ok(Box::new(Scripted(*r))),
                Some(Err(errno)) => Err(io::Error::from_raw_os_error(*errno)),
                None => Err(io::Error::from_raw_os_error(libc::ENOENT)),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::double::ScriptedBackend;
    use super::*;

    fn reading(count: u64, enabled: u64, running: u64) -> Reading {
        Reading { count, time_enabled_ns: enabled, time_running_ns: running }
    }

    #[test]
    fn multiplexed_counts_are_scaled_and_say_so() {
        assert_eq!(reading(100, 10, 10).status(), CounterStatus::Measured { count: 100 });
        assert_eq!(reading(100, 10, 0).status(), CounterStatus::NotCounted);
        assert_eq!(reading(100, 10, 5).status(), CounterStatus::Multiplexed { estimate: 200.0, running_fraction: 0.5 });
    }

    #[test]
    fn probe_explains_a_missing_pmu() {
        let backend = ScriptedBackend {
            results: [(Event::PageFaults, Ok(reading(1, 1, 1))), (Event::Cycles, Err(libc::ENOENT))].into(),
        };
        let s = probe(&backend, Some(2));
        assert!(!s.hardware_counters);
        assert!(s.software_counters);
        assert!(s.reason.unwrap().contains("no hardware PMU"));
        assert!(s.fix.unwrap().contains("pmu=on"));
    }

    #[test]
    fn probe_explains_paranoid_refusal() {
        let backend = ScriptedBackend { results: [(Event::Cycles, Err(libc::EACCES))].into() };
        let s = probe(&backend, Some(3));
        assert!(s.reason.unwrap().contains("perf_event_paranoid = 3"));
        assert!(!s.software_counters);
    }

    #[test]
    fn probe_with_a_working_pmu() {
        let ok = Ok(reading(5, 1, 1));
        let backend = ScriptedBackend { results: [(Event::Cycles, ok), (Event::PageFaults, ok)].into() };
        let s = probe(&backend, Some(1));
        assert!(s.hardware_counters && s.reason.is_none());
    }

    #[test]
    fn unavailable_counter_is_not_zero() {
        let backend = ScriptedBackend { results: Default::default() };
        let (v, status) = count(&backend, Event::Cycles, || 42);
        assert_eq!(v, 42);
        assert!(matches!(status, CounterStatus::Unavailable { .. }));
    }

    /// Real kernel, software event with a known count: touching N fresh
    /// pages takes at least N minor faults.
    #[test]
    fn page_faults_of_a_known_touch_pattern() {
        let pages = 256usize;
        let len = pages * 4096;
        // SAFETY: anonymous private mapping, checked for failure, unmapped below.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        assert_ne!(p, libc::MAP_FAILED);
        // SAFETY: p is a valid len-byte mapping.
        unsafe { libc::madvise(p, len, libc::MADV_NOHUGEPAGE) };
        let (_, status) = count(&PerfBackend, Event::PageFaults, || {
            for i in 0..pages {
                // SAFETY: i * 4096 < len, inside the mapping.
                unsafe { std::ptr::write_volatile((p as *mut u8).add(i * 4096), 1) };
            }
        });
        // SAFETY: unmapping what was mapped above.
        unsafe { libc::munmap(p, len) };
        match status {
            CounterStatus::Measured { count } => assert!(count >= pages as u64 && count < pages as u64 * 2, "{count}"),
            CounterStatus::Unavailable { reason, .. } => eprintln!("skipped: software counters unavailable: {reason}"),
            other => panic!("unexpected {other:?}"),
        }
    }
}
