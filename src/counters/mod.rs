//! Hardware and software event counters through perf_event_open.
//!
//! Counters sit behind [`CounterBackend`] so tests can use a deterministic
//! double; [`PerfBackend`] is the real one (perf-event2). Every reading
//! carries time-enabled and time-running, so a multiplexed counter is scaled
//! and *says* it was multiplexed; a counter that could not be opened is a
//! [`CounterStatus::Unavailable`] with its reason, never a zero.

pub mod arm_events;
pub mod events;
pub mod memory_traffic;
pub mod metrics;
pub mod sanity;

pub use events::EventSpec;
pub use memperf_model::counters::{CounterStatus, PmuStatus};

use events::EventKind;
use serde::{Deserialize, Serialize};
use std::io;
use std::path::Path;

/// One read of a counter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reading {
    pub count: u64,
    pub time_enabled_ns: u64,
    pub time_running_ns: u64,
}

impl std::ops::Sub for Reading {
    type Output = Reading;
    /// The reading of the span between two reads of one counter.
    fn sub(self, before: Reading) -> Reading {
        Reading {
            count: self.count.saturating_sub(before.count),
            time_enabled_ns: self.time_enabled_ns.saturating_sub(before.time_enabled_ns),
            time_running_ns: self.time_running_ns.saturating_sub(before.time_running_ns),
        }
    }
}

impl std::ops::Add for Reading {
    type Output = Reading;
    fn add(self, other: Reading) -> Reading {
        Reading {
            count: self.count + other.count,
            time_enabled_ns: self.time_enabled_ns + other.time_enabled_ns,
            time_running_ns: self.time_running_ns + other.time_running_ns,
        }
    }
}

impl Reading {
    pub fn status(&self) -> CounterStatus {
        if self.time_running_ns == 0 {
            let reason = if self.time_enabled_ns == 0 {
                "never enabled: the program ended before the counter started".to_string()
            } else {
                format!(
                    "enabled for {:.1} ms but never on the PMU: more events than hardware counters (count fewer with -e), or another user holds the counters (the NMI watchdog, another perf)",
                    self.time_enabled_ns as f64 / 1e6
                )
            };
            return CounterStatus::NotCounted { reason };
        }
        if self.time_running_ns >= self.time_enabled_ns {
            return CounterStatus::Measured { count: self.count };
        }
        let fraction = self.time_running_ns as f64 / self.time_enabled_ns as f64;
        CounterStatus::Multiplexed { estimate: self.count as f64 / fraction, running_fraction: fraction }
    }
}

/// An opened counter.
pub trait RunningCounter: Send {
    fn enable(&mut self) -> io::Result<()>;
    fn disable(&mut self) -> io::Result<()>;
    fn read(&mut self) -> io::Result<Reading>;
    /// Whether kernel-mode events count too (page faults taken while the
    /// kernel copies into the program's memory are kernel-mode faults).
    fn counts_kernel(&self) -> bool {
        true
    }
    /// `rdpmc` when the last read came from user space through the perf
    /// mmap page, `read` for a system call.
    fn read_method(&self) -> &'static str {
        "read"
    }
}

/// Whom a counter observes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// The calling thread, started disabled (enable it around the work).
    CallingThread,
    /// A child held before exec, and its threads and children: enabled at
    /// its exec, inherited by what it starts.
    Child(i32),
}

/// Opens counters.
pub trait CounterBackend {
    fn open(&self, event: &EventSpec, target: Target) -> Result<Box<dyn RunningCounter>, Unavailable>;

    /// [`CounterBackend::open`], except for an event this CPU has no
    /// encoding for: that one is unavailable without asking the kernel.
    fn open_event(&self, event: &EventSpec, target: Target) -> Result<Box<dyn RunningCounter>, Unavailable> {
        match event.no_encoding() {
            Some(reason) => Err(Unavailable {
                reason: reason.to_string(),
                fix: Some(format!("give {} raw for this CPU (-e rNNNN from its PMU event tables)", event.name)),
            }),
            None => self.open(event, target),
        }
    }
}

/// Why a counter could not be opened, and what would fix it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unavailable {
    pub reason: String,
    pub fix: Option<String>,
}

impl From<Unavailable> for CounterStatus {
    fn from(u: Unavailable) -> CounterStatus {
        CounterStatus::Unavailable { reason: u.reason, fix: u.fix }
    }
}

/// The real backend: perf_event_open, user space only (so that
/// perf_event_paranoid=2 does not refuse it), time enabled and running in
/// every read.
pub struct PerfBackend;

struct PerfCounter(perf_event::Counter, bool);

impl RunningCounter for PerfCounter {
    fn counts_kernel(&self) -> bool {
        self.1
    }
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

/// A counter of the calling thread with its perf mmap page: read with
/// rdpmc where the kernel allows it (a hardware counter scheduled on this
/// CPU), else with a system call.
struct MappedCounter {
    sampler: perf_event::Sampler,
    kernel: bool,
    last_method: &'static str,
}

impl RunningCounter for MappedCounter {
    fn enable(&mut self) -> io::Result<()> {
        self.sampler.enable()
    }
    fn disable(&mut self) -> io::Result<()> {
        self.sampler.disable()
    }
    fn read(&mut self) -> io::Result<Reading> {
        let user = self.sampler.read_user();
        if let Some(count) = user.count() {
            self.last_method = "rdpmc";
            return Ok(Reading {
                count,
                time_enabled_ns: user.time_enabled().as_nanos() as u64,
                time_running_ns: user.time_running().as_nanos() as u64,
            });
        }
        self.last_method = "read";
        let r = self.sampler.read_count_and_time()?;
        Ok(Reading { count: r.count, time_enabled_ns: r.time_enabled, time_running_ns: r.time_running })
    }
    fn counts_kernel(&self) -> bool {
        self.kernel
    }
    fn read_method(&self) -> &'static str {
        self.last_method
    }
}

impl PerfBackend {
    fn builder(event: &EventSpec) -> Result<perf_event::Builder<'static>, Unavailable> {
        use perf_event::events::{Dynamic, Raw};
        match &event.kind {
            EventKind::Typed { perf_type, config } => {
                let mut b = perf_event::Builder::new(Raw::new(*config));
                b.attrs_mut().type_ = *perf_type;
                Ok(b)
            }
            EventKind::NoEncoding { reason } => Err(Unavailable { reason: reason.clone(), fix: None }),
            EventKind::Pmu { pmu, terms } => {
                let mut d = Dynamic::builder(pmu).map_err(|_| Unavailable {
                    reason: format!(
                        "no PMU named '{pmu}' in /sys/bus/event_source/devices (this system has: {})",
                        pmu_names().join(", ")
                    ),
                    fix: Some("name one of those PMUs, or count a generic event (cycles, dTLB-load-misses …)".into()),
                })?;
                for (k, v) in terms {
                    d.field(k, *v).map_err(|e| Unavailable {
                        reason: format!("PMU '{pmu}' refuses term {k}={v:#x}: {e}"),
                        fix: Some(format!("see /sys/bus/event_source/devices/{pmu}/format for its fields")),
                    })?;
                }
                let dynamic = d.build().map_err(|e| Unavailable {
                    reason: format!("PMU '{pmu}' event lacks its '{}' field", e.param()),
                    fix: Some(format!("add {}=… to the event", e.param())),
                })?;
                Ok(perf_event::Builder::new(dynamic))
            }
        }
    }
}

impl CounterBackend for PerfBackend {
    fn open(&self, event: &EventSpec, target: Target) -> Result<Box<dyn RunningCounter>, Unavailable> {
        let mut b = Self::builder(event)?;
        // Builder defaults: disabled, hypervisor excluded, time enabled and
        // running in the read format. Kernel mode is counted where allowed
        // (as perf stat does): a page fault taken while the kernel copies
        // into the program's buffer is a kernel-mode fault.
        b.any_cpu().exclude_kernel(false);
        match target {
            Target::CallingThread => b.observe_self().inherit(false),
            Target::Child(pid) => b.observe_pid(pid).inherit(true).enable_on_exec(true),
        };
        let first = b.build();
        let refused = |e: &io::Error| matches!(e.raw_os_error(), Some(libc::EACCES) | Some(libc::EPERM));
        let (built, kernel) = match first {
            Err(e) if refused(&e) => (b.exclude_kernel(true).build(), false),
            other => (other, true),
        };
        match (built, target) {
            // Hardware counters of the calling thread get their mmap page,
            // for rdpmc (software counters have no PMU index to read).
            (Ok(c), Target::CallingThread) if !event.is_software() => match c.sampled(0) {
                Ok(sampler) => Ok(Box::new(MappedCounter { sampler, kernel, last_method: "read" })),
                Err(e) => Err(explain_open_error(&e, read_paranoid(), event)),
            },
            (Ok(c), _) => Ok(Box::new(PerfCounter(c, kernel))),
            (Err(e), _) => Err(explain_open_error(&e, read_paranoid(), event)),
        }
    }
}

/// The PMUs this kernel exposes.
pub fn pmu_names() -> Vec<String> {
    pmu_names_in(Path::new("/sys/bus/event_source/devices"))
}

/// The PMUs under `devices` (a kernel's `/sys/bus/event_source/devices`), sorted.
pub fn pmu_names_in(devices: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(devices)
        .map(|d| d.flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect())
        .unwrap_or_default();
    v.sort();
    v
}

/// The count of `spec` as the document holds it, under its own name and
/// description.
pub fn event_count(spec: &EventSpec, status: CounterStatus) -> memperf_model::outcome::stat::EventCount {
    memperf_model::outcome::stat::EventCount {
        name: spec.name.clone(),
        description: spec.description.clone(),
        software: spec.is_software(),
        status,
    }
}

/// Explains a failed perf_event_open of `event`.
pub fn explain_open_error(err: &io::Error, paranoid: Option<i32>, event: &EventSpec) -> Unavailable {
    let (reason, fix): (String, &str) = match err.raw_os_error() {
        Some(libc::ENOENT) | Some(libc::EOPNOTSUPP) | Some(libc::ENODEV) if !event.is_software() => (
            "no hardware PMU is exposed to this system (typical of a VM without a virtual PMU, a container or a CI runner)".into(),
            "run on bare metal, or enable the vPMU in the hypervisor (e.g. QEMU/KVM -cpu host,pmu=on)",
        ),
        Some(libc::ENOENT) => (format!("this kernel does not know the software event '{}'", event.name), "use a newer kernel, or drop the event"),
        Some(libc::EACCES) | Some(libc::EPERM) => (
            format!(
                "perf_event_open refused by permission (perf_event_paranoid = {})",
                paranoid.map(|p| p.to_string()).unwrap_or_else(|| "unknown".into())
            ),
            "sysctl kernel.perf_event_paranoid=1, or run as root / with CAP_PERFMON",
        ),
        Some(libc::EINVAL) => (
            format!("the kernel or PMU refuses the encoding of '{}' (an unknown event or a bad config for this CPU)", event.name),
            "check the event in `perf list`, or give its raw code from the CPU's manual",
        ),
        Some(libc::EMFILE) => ("out of file descriptors for counters".into(), "raise the limit (ulimit -n) or count fewer events"),
        Some(libc::ESRCH) => ("the process to observe is gone".into(), "the program ended before its counters could be attached"),
        Some(libc::ENOSYS) => ("the kernel has no perf_event support".into(), "use a kernel built with CONFIG_PERF_EVENTS"),
        _ => (format!("perf_event_open failed: {err}"), "check `perf stat -e cycles true`"),
    };
    Unavailable { reason, fix: Some(fix.into()) }
}

pub fn read_paranoid() -> Option<i32> {
    std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid").ok()?.trim().parse().ok()
}

/// Probes by opening (and reading) a cycle counter and a page-fault counter.
pub fn probe(backend: &dyn CounterBackend, paranoid: Option<i32>) -> PmuStatus {
    let try_event = |name: &str| -> Result<(), Unavailable> {
        let mut c = backend.open(&events::generic(name), Target::CallingThread)?;
        let failed = |e: io::Error| Unavailable { reason: format!("counter read failed: {e}"), fix: None };
        c.enable().map_err(failed)?;
        c.disable().map_err(failed)?;
        c.read().map(|_| ()).map_err(failed)
    };
    let software = try_event("page-faults").is_ok();
    let hardware = try_event("cycles");
    PmuStatus {
        hardware_counters: hardware.is_ok(),
        software_counters: software,
        reason: hardware.as_ref().err().map(|u| u.reason.clone()),
        fix: hardware.err().and_then(|u| u.fix),
        perf_event_paranoid: paranoid,
    }
}

/// Counts `event` over `work` on the calling thread.
pub fn count<R>(backend: &dyn CounterBackend, event: &EventSpec, work: impl FnOnce() -> R) -> (R, CounterStatus) {
    let (r, mut statuses) = count_all(backend, std::slice::from_ref(event), work);
    (r, statuses.remove(0))
}

/// Counts every one of `events` over one run of `work` on the calling
/// thread: all are enabled before it and disabled after it, so ratios of
/// their counts (CPI) come from the same run.
pub fn count_all<R>(
    backend: &dyn CounterBackend,
    events: &[EventSpec],
    work: impl FnOnce() -> R,
) -> (R, Vec<CounterStatus>) {
    let mut opened: Vec<Result<Box<dyn RunningCounter>, Unavailable>> =
        events.iter().map(|e| backend.open_event(e, Target::CallingThread)).collect();
    let started: Vec<io::Result<()>> = opened.iter_mut().map(|c| c.as_mut().map_or(Ok(()), |c| c.enable())).collect();
    let r = work();
    for c in opened.iter_mut().flatten() {
        let _ = c.disable();
    }
    let statuses = opened
        .into_iter()
        .zip(started)
        .map(|(c, started)| match c {
            Err(u) => u.into(),
            Ok(mut c) => match (started, c.read()) {
                (Ok(()), Ok(reading)) => reading.status(),
                (Err(e), _) | (_, Err(e)) => {
                    CounterStatus::Unavailable { reason: format!("counter read failed: {e}"), fix: None }
                }
            },
        })
        .collect();
    (r, statuses)
}

#[cfg(test)]
pub mod double {
    //! A scripted counter backend for tests: each event name reads a fixed
    //! reading, or fails to open with an errno.
    use super::*;
    use std::collections::HashMap;

    pub struct ScriptedBackend {
        pub results: HashMap<String, Result<Reading, i32>>,
        /// The perf_event_paranoid its refusals report.
        pub paranoid: Option<i32>,
    }

    impl ScriptedBackend {
        pub fn new(results: &[(&str, Result<Reading, i32>)]) -> ScriptedBackend {
            ScriptedBackend { results: results.iter().map(|(k, v)| (k.to_string(), *v)).collect(), paranoid: Some(2) }
        }
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
        fn open(&self, event: &EventSpec, _: Target) -> Result<Box<dyn RunningCounter>, Unavailable> {
            let errno = match self.results.get(&event.name) {
                Some(Ok(r)) => return Ok(Box::new(Scripted(*r))),
                Some(Err(errno)) => *errno,
                None => libc::ENOENT,
            };
            Err(explain_open_error(&io::Error::from_raw_os_error(errno), self.paranoid, event))
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
        assert!(
            matches!(reading(100, 10, 0).status(), CounterStatus::NotCounted { reason } if reason.contains("more events than hardware counters"))
        );
        assert!(
            matches!(reading(0, 0, 0).status(), CounterStatus::NotCounted { reason } if reason.contains("never enabled"))
        );
        assert_eq!(reading(100, 10, 5).status().value(), Some((200.0, true)));
        assert_eq!(reading(100, 10, 0).status().value(), None, "not counted is not zero");
        assert_eq!(reading(100, 10, 0).status().display(), "not counted");
        assert_eq!(reading(1234567, 10, 10).status().display(), "1,234,567");
        assert_eq!(reading(500, 10, 5).status().display(), "~1,000 (scaled: counted 50% of the time)");
        assert_eq!(reading(10, 20, 20) - reading(4, 5, 5), reading(6, 15, 15));
        assert_eq!(reading(100, 10, 5).status(), CounterStatus::Multiplexed { estimate: 200.0, running_fraction: 0.5 });
    }

    #[test]
    fn probe_explains_a_missing_pmu() {
        let backend = ScriptedBackend::new(&[("page-faults", Ok(reading(1, 1, 1))), ("cycles", Err(libc::ENOENT))]);
        let s = probe(&backend, Some(2));
        assert!(!s.hardware_counters);
        assert!(s.software_counters);
        assert!(s.reason.unwrap().contains("no hardware PMU"));
        assert!(s.fix.unwrap().contains("pmu=on"));
    }

    #[test]
    fn probe_explains_paranoid_refusal() {
        let mut backend = ScriptedBackend::new(&[("cycles", Err(libc::EACCES))]);
        backend.paranoid = Some(3);
        let s = probe(&backend, Some(3));
        assert!(s.reason.unwrap().contains("perf_event_paranoid = 3"));
        assert!(!s.software_counters);
    }

    #[test]
    fn probe_with_a_working_pmu() {
        let ok = Ok(reading(5, 1, 1));
        let backend = ScriptedBackend::new(&[("cycles", ok), ("page-faults", ok)]);
        let s = probe(&backend, Some(1));
        assert!(s.hardware_counters && s.reason.is_none());
    }

    #[test]
    fn unavailable_counter_is_not_zero() {
        let backend = ScriptedBackend::new(&[]);
        let (v, status) = count(&backend, &events::generic("cycles"), || 42);
        assert_eq!(v, 42);
        assert!(matches!(status, CounterStatus::Unavailable { .. }));
    }

    #[test]
    fn every_errno_has_its_own_reason() {
        let hw = events::generic("cycles");
        let sw = events::generic("page-faults");
        let why = |errno, e: &EventSpec| explain_open_error(&io::Error::from_raw_os_error(errno), Some(3), e);
        assert!(why(libc::ENOENT, &hw).reason.contains("no hardware PMU"));
        assert!(why(libc::ENOENT, &sw).reason.contains("software event 'page-faults'"));
        assert!(why(libc::EINVAL, &hw).reason.contains("refuses the encoding of 'cycles'"));
        assert!(why(libc::EMFILE, &hw).fix.unwrap().contains("ulimit -n"));
        assert!(why(libc::ESRCH, &hw).reason.contains("gone"));
        assert!(why(libc::ENOSYS, &hw).reason.contains("no perf_event support"));
        let pmu = events::resolve("nosuchpmu/event=1/", &Default::default()).unwrap();
        let u = PerfBackend.open(&pmu, Target::CallingThread).err().unwrap();
        assert!(u.reason.contains("no PMU named 'nosuchpmu'") && u.reason.contains("software"), "{}", u.reason);
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
        let (_, status) = count(&PerfBackend, &events::generic("page-faults"), || {
            for i in 0..pages {
                // SAFETY: i * 4096 < len, inside the mapping.
                unsafe { std::ptr::write_volatile((p as *mut u8).add(i * 4096), 1) };
            }
        });
        // SAFETY: unmapping what was mapped above.
        unsafe { libc::munmap(p, len) };
        match status {
            CounterStatus::Measured { count } => assert!(count >= pages as u64 && count < pages as u64 * 2, "{count}"),
            CounterStatus::Unavailable { reason, .. } => crate::test_support::skip(
                &format!("software counters unavailable: {reason}"),
                "allow perf_event_open (kernel.perf_event_paranoid <= 2, or root)",
            ),
            other => panic!("unexpected {other:?}"),
        }
    }
}
