//! A process's hot working set over time, sampled: DAMON's accessed regions
//! where the kernel lets memperf drive it ([`damon`]); elsewhere the
//! accessed bits, cleared at each interval's start (/proc/PID/clear_refs)
//! and read per mapping from /proc/PID/smaps at its end. With `--pages`
//! each mapping is also read page by page ([`page_scan`]): its resident and
//! accessed pages in 2 MiB spans, and the bytes written where soft-dirty
//! bits are kept. `wss` drives a [`Sampler`] alone; `stat --wss` wakes for
//! it between its own samples. What the samples mean is `analysis::hot_set`'s.

pub mod damon;
pub mod page_scan;

use crate::error::{Error, Result};
use crate::process::kernel_config::Features;
use crate::process::pagemap::SpanCounts;
use crate::process::pages::{self, MappingKind, SmapsEntry};
use memperf_model::outcome::wss::{Interval, Mapping, MappingSample};
use serde::Serialize;
use std::time::{Duration, Instant};

/// The default interval: clearing the accessed bits makes the program
/// refill its TLB and the kernel walk its page tables, once per interval.
pub const DEFAULT_INTERVAL_MS: u64 = 1000;
/// What the program pays, per page it touches in an interval, to set the
/// accessed bit again after it was cleared (a page walk and a locked
/// update; the figure measured is in docs/validation.md, "Figures behind
/// constants"). Without -I the interval grows so that this stays under
/// [`MAX_OVERHEAD`] of it.
pub const REFILL_NS_PER_PAGE: f64 = 200.0;
/// The share of the program's time the default interval aims the refill
/// at: 2%, so that the whole cost stays under 5% (the 2002 sample
/// application paid ×1.058 over 6 pairs aimed at 5%, and ×1.041 then
/// ×1.054 over 6 and 4 pairs aimed at 3%: reading smaps and the refill of
/// three arrays cost about twice the model's 190 ns per page).
pub const MAX_OVERHEAD: f64 = 0.02;
/// The longest interval the default grows to.
pub const MAX_INTERVAL_MS: u64 = 10_000;
/// The shortest interval accepted.
pub const MIN_INTERVAL_MS: u64 = 10;
#[derive(Debug, Clone, Serialize)]
pub struct Params {
    pub command: Vec<String>,
    pub pid: Option<i32>,
    pub interval_ms: u64,
    /// The interval grows with the hot set (no -I given).
    pub adaptive: bool,
    /// A saved result whose `tlb` gives the reach (--machine-results).
    pub machine_results: Option<std::path::PathBuf>,
    /// Measure the reach first when no saved result has it (not --no-probe).
    pub probe: bool,
    /// Watch the program's descendants too, each mapping under its process.
    #[serde(default)]
    pub children: bool,
    /// Read each mapping page by page too (`--pages`): where its pages lie.
    #[serde(default)]
    pub pages: bool,
    /// The TLB reach the hot set is set beside (decided before the program
    /// starts: `machine::reach::decide`).
    #[serde(skip)]
    pub reach: Option<memperf_model::outcome::wss::Reach>,
}

/// The next interval: as asked, or, when adaptive, long enough that
/// setting the accessed bits of `hot_pages` again costs under
/// [`MAX_OVERHEAD`] of it.
pub fn next_interval_ms(p: &Params, hot_pages: u64) -> u64 {
    if !p.adaptive {
        return p.interval_ms;
    }
    let needed = (hot_pages as f64 * REFILL_NS_PER_PAGE / MAX_OVERHEAD / 1e6).ceil() as u64;
    needed.clamp(p.interval_ms, MAX_INTERVAL_MS)
}

/// The method said in the document: where the hot set came from
/// (`source`, from the sampler: DAMON, or the accessed bits and why not
/// DAMON), whether the pages' places can be read, and why the bytes
/// written are not measured, from the kernel's config.
pub fn method(k: &Features, source: &str) -> (String, Option<String>) {
    let from = k.from.unwrap_or("no /boot/config of this kernel, no /proc/config.gz");
    let places = match k.idle_page_tracking {
        Some(true) => "where in a mapping the hot pages lie is read with --pages (idle-page tracking is built in; it needs root)".to_string(),
        Some(false) => "where in a mapping the hot pages lie cannot be read: that needs idle-page tracking (CONFIG_IDLE_PAGE_TRACKING not set); --pages bounds it by where the resident pages lie".to_string(),
        None => format!("whether idle-page tracking could place the hot pages is unknown ({from})"),
    };
    let written = match k.soft_dirty {
        Some(true) => format!("not measured: this kernel has soft-dirty bits ({from}); --pages reads them"),
        Some(false) => format!("not measured: needs soft-dirty bits, which this kernel lacks (CONFIG_MEM_SOFT_DIRTY not set, {from})"),
        None => format!("not measured: needs soft-dirty bits (CONFIG_MEM_SOFT_DIRTY), which --pages reads where the kernel has them; whether this one does is unknown ({from})"),
    };
    (format!("{source}; {places}"), Some(written))
}

/// DAMON when it can watch this process, else why not (said in the method).
fn try_damon(pid: i32, p: &Params, k: &Features) -> (Option<damon::Damon>, String) {
    let bits = "accessed bits cleared each interval (/proc/PID/clear_refs) and read per mapping from /proc/PID/smaps (a transparent huge page is referenced as a whole: one touched byte counts its 2 MiB; the kernel clears the bits without flushing the TLB, so a page whose translation stays cached between samples is not counted again: up to the TLB's reach may go unseen)";
    let why_not = if p.children {
        "DAMON watches one process, and --children reads each one's accessed bits".to_string()
    } else {
        let admin = std::path::Path::new(damon::ADMIN);
        match damon::usable(admin, k.damon_vaddr) {
            Ok(()) => match damon::Damon::start(admin, pid, p.interval_ms) {
                Ok(d) => return (Some(d), damon::METHOD.to_string()),
                Err(e) => format!("starting DAMON failed ({e})"),
            },
            Err(why) => why,
        }
    };
    (None, format!("{bits}; not DAMON: {why_not}"))
}

/// A mapping's page-by-page counts, where read, and whether its soft-dirty
/// count is this interval's writes (`--pages`).
type SpanReader<'a> = dyn FnMut(Option<i32>, &SmapsEntry) -> Option<(SpanCounts, bool)> + 'a;

/// The mappings seen so far, and each new one added as it appears; found
/// again by (process, start, kind, path) without a scan, since a program
/// may map thousands of regions and each is looked up every interval.
#[derive(Default)]
struct Mappings {
    list: Vec<Mapping>,
    index: std::collections::HashMap<(Option<i32>, u64, MappingKind, String), usize>,
}

impl Mappings {
    fn index(&mut self, m: &SmapsEntry, process: Option<i32>) -> usize {
        let kind = pages::kind(m);
        let (start, end) = (m.start as u64, m.end as u64);
        let key = (process, start, kind, m.path.clone());
        if let Some(&i) = self.index.get(&key) {
            self.list[i].end = self.list[i].end.max(end);
            return i;
        }
        self.list.push(Mapping { start, end, kind, path: m.path.clone(), process });
        self.index.insert(key, self.list.len() - 1);
        self.list.len() - 1
    }

    /// One interval of every process read: `(process, its mappings)`, the
    /// watched one as `None`.
    /// `spans` gives a mapping's page-by-page counts, where read, and
    /// whether its soft-dirty count is this interval's writes. `exact`:
    /// the referenced bytes are the accessed bits' (not DAMON's estimate),
    /// so a mapping whose every resident page was referenced has its hot
    /// spans counted by its resident ones.
    fn sample(
        &mut self,
        t_s: f64,
        uses: &[(Option<i32>, Vec<SmapsEntry>)],
        exact: bool,
        spans: &mut SpanReader,
    ) -> Interval {
        let mut mappings = Vec::new();
        for (process, entries) in uses {
            for m in entries.iter().filter(|m| m.rss > 0 || m.referenced > 0) {
                let counts = spans(*process, m);
                mappings.push(MappingSample {
                    mapping: self.index(m, *process),
                    rss_bytes: m.rss,
                    referenced_bytes: m.referenced,
                    anon_huge_bytes: m.anon_huge,
                    resident_spans: counts.as_ref().map(|c| c.0.resident_spans()),
                    hot_spans: counts.as_ref().and_then(|c| {
                        let all_hot = exact && m.referenced >= m.rss;
                        c.0.hot_spans().or(all_hot.then(|| c.0.resident_spans()))
                    }),
                    hot_spans_min: counts.as_ref().filter(|c| exact && c.0.hot_spans().is_none()).and_then(|c| {
                        // One span lost per unreferenced 4 KiB page at most
                        // (a huge page's 512 count as many: loose there), and
                        // never fewer spans than the referenced bytes fill.
                        let unreferenced = m.rss.saturating_sub(m.referenced).div_ceil(4096);
                        let filled = m.referenced.div_ceil(2 << 20);
                        let resident = c.0.resident_spans();
                        (unreferenced > 0).then(|| resident.saturating_sub(unreferenced).max(filled).min(resident))
                    }),
                    written_bytes: counts.filter(|c| c.1).map(|c| c.0.soft_dirty_pages * 4096),
                });
            }
        }
        Interval { t_s, mappings }
    }
}

/// The processes sampled: the one watched, and with `children` each live
/// descendant (a child that ended between the listing and the read is
/// left out of that interval).
fn read_tree(pid: i32, children: bool) -> std::io::Result<Vec<(Option<i32>, Vec<SmapsEntry>)>> {
    let mut out = vec![(None, pages::read(pid)?)];
    if children {
        for c in crate::process::memory::descendants(pid) {
            if let Ok(entries) = pages::read(c) {
                out.push((Some(c), entries));
            }
        }
    }
    Ok(out)
}

/// Clears the accessed bits of every process read (a descendant that
/// ended meanwhile is no error; the watched one's failure is).
fn clear_tree(uses: &[(Option<i32>, Vec<SmapsEntry>)], pid: i32) -> std::io::Result<()> {
    for (process, _) in uses {
        match process {
            None => pages::clear_refs(pid)?,
            Some(c) => pages::clear_refs(*c).unwrap_or(()),
        }
    }
    Ok(())
}

/// Refuses a `--pid` whose accessed bits this process may not clear,
/// before anything is measured.
pub fn check_pid(pid: i32) -> Result<()> {
    pages::may_clear_refs(pid).map_err(|e| clear_refused(pid, e))
}

/// The permission error of clear_refs as the user's fix.
fn clear_refused(pid: i32, e: std::io::Error) -> Error {
    Error::usage(format!(
        "cannot clear the accessed bits of pid {pid} ({e}): run as root or as the process's owner with ptrace rights (CAP_SYS_ADMIN, or kernel.yama.ptrace_scope 0)"
    ))
}

/// What sampling a process gave: its intervals, the mappings they index,
/// and the largest resident set seen.
pub struct SamplingRecord {
    pub intervals: Vec<Interval>,
    pub mappings: Vec<Mapping>,
    pub peak_rss_bytes: u64,
    /// With `--pages`, what the page scan read.
    pub pages_method: Option<String>,
    /// Where the hot set came from (DAMON, or the accessed bits and why).
    pub source: String,
    /// The kernel's options the method depended on.
    pub kernel: Features,
    /// The intervals grew with the hot set.
    pub adaptive: bool,
}

/// Samples one process (and with `children` its descendants) at the
/// intervals of [`Params`]: the accessed bits are cleared at the start
/// and after each reading. `wss` drives it alone; `stat --wss` wakes for it
/// between its own samples.
pub struct Sampler {
    pid: i32,
    p: Params,
    t0: Instant,
    next: Instant,
    maps: Mappings,
    pages: Option<page_scan::PageScanner>,
    /// DAMON's kdamond on the process, where it could be used.
    damon: Option<damon::Damon>,
    /// Where the hot set comes from, for the document.
    source: String,
    /// The kernel's options, read once when sampling starts.
    kernel: Features,
    sampled: Vec<Interval>,
    peak: u64,
    /// The process could no longer be read: sampling is over.
    over: bool,
}

impl Sampler {
    /// Starts DAMON on `pid` where it can, else clears its accessed bits:
    /// its first interval starts now (`t0` is when the program started).
    pub fn start(pid: i32, p: &Params, t0: Instant) -> Result<Sampler> {
        // The permission to clear is checked either way: it is the right
        // to watch the process at all.
        pages::may_clear_refs(pid).map_err(|e| clear_refused(pid, e))?;
        let kernel = Features::running();
        let (damon, source) = try_damon(pid, p, &kernel);
        if damon.is_none() {
            pages::clear_refs(pid).map_err(|e| clear_refused(pid, e))?;
        }
        Ok(Sampler {
            pid,
            p: p.clone(),
            t0,
            next: t0 + Duration::from_millis(p.interval_ms),
            maps: Mappings::default(),
            pages: p.pages.then(|| page_scan::PageScanner::open(kernel.soft_dirty == Some(true))),
            damon,
            source,
            kernel,
            sampled: Vec::new(),
            peak: 0,
            over: false,
        })
    }

    /// When the current interval ends.
    pub fn due(&self) -> Instant {
        self.next
    }

    pub fn over(&self) -> bool {
        self.over
    }

    /// Reads the interval that just ended and starts the next; `None` once
    /// the process has ended (a zombie's smaps is empty) or cannot be read.
    pub fn sample(&mut self) -> Option<&Interval> {
        if self.over {
            return None;
        }
        let mut uses = match read_tree(self.pid, self.p.children) {
            Ok(uses) if !uses[0].1.is_empty() => uses,
            _ => {
                self.over = true;
                return None;
            }
        };
        // With DAMON, the referenced bytes are those of its accessed
        // regions; its kdamond ends with the process.
        if let Some(d) = &self.damon {
            let Ok(regions) = d.regions() else {
                self.over = true;
                return None;
            };
            for m in uses[0].1.iter_mut() {
                m.referenced = damon::hot_bytes(&regions, m);
            }
        }
        let t_s = self.t0.elapsed().as_secs_f64();
        let pid = self.pid;
        let mut spans = |process: Option<i32>, m: &SmapsEntry| {
            let pid = process.unwrap_or(pid);
            let scanner = self.pages.as_mut()?;
            let written = scanner.written_known(pid);
            scanner.scan(pid, m).map(|c| (c, written))
        };
        let i = self.maps.sample(t_s, &uses, self.damon.is_none(), &mut spans);
        // Cleared right after reading: the next interval starts now.
        if self.damon.is_none() && clear_tree(&uses, self.pid).is_err() {
            self.over = true;
            return None;
        }
        if let Some(s) = self.pages.as_mut() {
            let alive: Vec<i32> = uses.iter().map(|(p, _)| p.unwrap_or(pid)).collect();
            s.next_interval(&alive);
        }
        self.peak = self.peak.max(i.rss_bytes());
        // DAMON's aggregation interval is set once and costs no refill.
        let grown =
            if self.damon.is_some() { self.p.interval_ms } else { next_interval_ms(&self.p, i.hot_bytes() / 4096) };
        self.next += Duration::from_millis(grown);
        self.sampled.push(i);
        self.sampled.last()
    }

    pub fn finish(self) -> SamplingRecord {
        SamplingRecord {
            intervals: self.sampled,
            mappings: self.maps.list,
            peak_rss_bytes: self.peak,
            pages_method: self.pages.map(|s| s.said),
            source: self.source,
            kernel: self.kernel,
            adaptive: self.p.adaptive && self.damon.is_none(),
        }
    }
}

/// Samples `pid` each interval until `done` says it ended (or memperf is
/// interrupted).
pub fn sample_until(
    pid: i32,
    p: &Params,
    t0: Instant,
    done: &mut dyn FnMut(Duration) -> bool,
    on_interval: &mut dyn FnMut(&Interval),
) -> Result<SamplingRecord> {
    let mut s = Sampler::start(pid, p, t0)?;
    loop {
        let left = s.due().saturating_duration_since(Instant::now());
        if done(left) || crate::interrupt::requested() {
            break;
        }
        match s.sample() {
            Some(i) => on_interval(i),
            None => break,
        }
    }
    Ok(s.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A mapping whose every resident page was referenced has its hot spans
    /// counted by its resident ones under the accessed bits; DAMON's
    /// region estimate (capped at the resident bytes) never counts them.
    #[test]
    fn resident_spans_count_as_hot_only_under_the_accessed_bits() {
        let entry = SmapsEntry {
            start: 0x1000_0000,
            end: 0x5000_0000,
            rss: 8 << 20,
            referenced: 8 << 20,
            ..Default::default()
        };
        let uses = vec![(None, vec![entry])];
        let counts = || {
            let mut c = SpanCounts::default();
            (0..300u64).for_each(|i| {
                c.spans.insert(i, (1, 0));
            });
            c
        };
        let mut reader = |_: Option<i32>, _: &SmapsEntry| Some((counts(), false));
        let mut maps = Mappings::default();
        let bits = maps.sample(1.0, &uses, true, &mut reader);
        assert_eq!((bits.mappings[0].resident_spans, bits.mappings[0].hot_spans), (Some(300), Some(300)));
        let damon = maps.sample(2.0, &uses, false, &mut reader);
        assert_eq!((damon.mappings[0].resident_spans, damon.mappings[0].hot_spans), (Some(300), None));
        assert_eq!(damon.mappings[0].hot_spans_min, None, "DAMON's bytes are an estimate: no bound from them");
        // Accessed bits with 5 resident pages unreferenced: at most 5 of
        // the 300 resident spans hold no referenced page.
        let uses = vec![(None, vec![SmapsEntry { referenced: (8 << 20) - 5 * 4096, ..uses[0].1[0].clone() }])];
        let partly = maps.sample(3.0, &uses, true, &mut reader);
        assert_eq!((partly.mappings[0].hot_spans, partly.mappings[0].hot_spans_min), (None, Some(295)));
        // A huge page left untouched counts 512 unreferenced pages: the
        // bound falls back to the spans the referenced bytes fill (3 here).
        let uses = vec![(None, vec![SmapsEntry { referenced: (8 << 20) - (2 << 20), ..uses[0].1[0].clone() }])];
        let thp = maps.sample(4.0, &uses, true, &mut reader);
        assert_eq!(thp.mappings[0].hot_spans_min, Some(3));
    }

    /// Without -I the interval grows with the hot set: 2 GiB of 4 KiB
    /// pages touched per interval cost ~0.1 s to mark again, so 5.2 s.
    #[test]
    fn the_default_interval_keeps_the_refill_under_five_percent() {
        let mut p = Params {
            command: vec![],
            pid: None,
            interval_ms: 1000,
            adaptive: true,
            machine_results: None,
            probe: false,
            children: false,
            pages: false,
            reach: None,
        };
        assert_eq!(next_interval_ms(&p, 1000), 1000);
        assert_eq!(next_interval_ms(&p, 524_288), 5243);
        assert_eq!(next_interval_ms(&p, u64::MAX / 1024), MAX_INTERVAL_MS);
        p.adaptive = false;
        assert_eq!(next_interval_ms(&p, 524_288), 1000, "-I is kept as given");
    }
}
