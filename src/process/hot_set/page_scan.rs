//! `wss --pages`: each interval, each resident mapping read page by page
//! from /proc/PID/pagemap ([`crate::process::pagemap`]): the 2 MiB spans
//! holding its resident pages, and, where the kernel has idle-page tracking
//! and memperf may read frames (root), the spans holding a page accessed in
//! the interval. What could not be read is said in the document, never
//! counted as zero.

use crate::process::pagemap::{self, Files, SpanCounts};
use crate::process::pages::{self, SmapsEntry};
use std::collections::HashMap;
use std::fs::File;

pub struct PageScanner {
    bitmap: Option<File>,
    kpageflags: Option<File>,
    pagemaps: HashMap<i32, File>,
    /// Frames read this interval: marked idle when the next one starts.
    frames: Vec<u64>,
    /// Processes whose frames were marked idle at the start of this
    /// interval: only theirs say which pages were accessed (in a process's
    /// first interval, every frame would read accessed).
    marked: std::collections::HashSet<i32>,
    read_now: Vec<i32>,
    /// The kernel keeps soft-dirty bits: they are cleared each interval
    /// and counted as the pages written in it.
    soft_dirty: bool,
    /// Processes whose soft-dirty bits were cleared at the start of this
    /// interval (before that, a new mapping reads all dirty).
    dirty_cleared: std::collections::HashSet<i32>,
    /// What the scan reads, and why not more.
    pub said: String,
}

impl PageScanner {
    /// Opens the system-wide files once; says what the scan will give.
    /// `soft_dirty`: the kernel's config has `CONFIG_MEM_SOFT_DIRTY`.
    pub fn open(soft_dirty: bool) -> PageScanner {
        let files = Files::of(0);
        // SAFETY: geteuid has no preconditions.
        let root = unsafe { libc::geteuid() } == 0;
        let bitmap = std::fs::OpenOptions::new().read(true).write(true).open(&files.idle_bitmap);
        let kpageflags = File::open(&files.kpageflags).ok();
        let said = match (&bitmap, root) {
            (Ok(_), true) => "pages read from /proc/PID/pagemap; accessed pages from idle-page tracking (/sys/kernel/mm/page_idle/bitmap), a huge page as a whole".to_string(),
            (Ok(_), false) => "pages read from /proc/PID/pagemap; which were accessed is not read: frames are shown only to root (fix: run as root)".to_string(),
            // The folder exists exactly where the kernel has idle tracking.
            (Err(e), _) => match files.idle_bitmap.parent().is_some_and(|d| d.exists()) {
                false => "pages read from /proc/PID/pagemap; which were accessed cannot be read here: idle-page tracking is not built in (CONFIG_IDLE_PAGE_TRACKING not set), so the spans of the hot pages are bounded by the resident spans, and exact where every resident page was referenced".to_string(),
                _ => format!("pages read from /proc/PID/pagemap; which were accessed is not read: {} ({e}; fix: run as root on a kernel with CONFIG_IDLE_PAGE_TRACKING)", files.idle_bitmap.display()),
            },
        };
        PageScanner {
            bitmap: bitmap.ok().filter(|_| root),
            kpageflags,
            pagemaps: HashMap::new(),
            frames: Vec::new(),
            marked: Default::default(),
            read_now: Vec::new(),
            soft_dirty,
            dirty_cleared: Default::default(),
            said: if soft_dirty {
                format!("{said}; pages written per interval from soft-dirty bits (cleared each interval: a page's first write in an interval then takes a write-protect fault, a cost the accessed bits do not have)")
            } else {
                said
            },
        }
    }

    /// Whether `pid`'s soft-dirty counts are this interval's writes.
    pub fn written_known(&self, pid: i32) -> bool {
        self.soft_dirty && self.dirty_cleared.contains(&pid)
    }

    /// One mapping's spans now; `None` where its pagemap cannot be read (a
    /// process that ended, or not ours).
    pub fn scan(&mut self, pid: i32, m: &SmapsEntry) -> Option<SpanCounts> {
        if m.rss == 0 {
            return None;
        }
        let file = match self.pagemaps.entry(pid) {
            std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::hash_map::Entry::Vacant(e) => e.insert(File::open(Files::of(pid).pagemap).ok()?),
        };
        let pages = pagemap::resident(file, m.start as u64, m.end as u64).ok()?;
        let bitmap = self.bitmap.as_ref().filter(|_| self.marked.contains(&pid));
        let counts = pagemap::count(&pages, bitmap, self.kpageflags.as_ref()).ok()?;
        if self.bitmap.is_some() {
            self.frames.extend(pagemap::frames(&pages));
            self.read_now.push(pid);
        }
        Some(counts)
    }

    /// Starts the next interval: the frames read are marked idle (a frame
    /// freed meanwhile is ignored by the kernel), and the pagemaps of
    /// processes that ended are closed.
    pub fn next_interval(&mut self, alive: &[i32]) {
        if let Some(b) = &self.bitmap {
            match pagemap::mark_idle(b, &self.frames) {
                Ok(()) => self.marked.extend(self.read_now.drain(..)),
                Err(e) => {
                    // Unmarked frames would all read accessed: stop reading them.
                    self.said.push_str(&format!(
                        "; marking pages idle failed ({e}), so later intervals do not say which pages were accessed"
                    ));
                    self.bitmap = None;
                    self.marked.clear();
                }
            }
        }
        self.frames.clear();
        self.read_now.clear();
        self.pagemaps.retain(|pid, _| alive.contains(pid));
        self.marked.retain(|pid| alive.contains(pid));
        if self.soft_dirty {
            self.dirty_cleared = alive.iter().copied().filter(|&p| pages::clear_soft_dirty(p).is_ok()).collect();
        }
    }
}
