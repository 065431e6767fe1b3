//! Reserving hugetlb pages for a run and giving them back afterwards,
//! without ever leaving the machine changed. A [`Reservation`] adds to a
//! pool only what this run needs beyond the free, unclaimed pages and gives
//! back exactly what it added, so two runs at once never restore each
//! other's values. Every change is made under a `flock` (released when a
//! process dies) and recorded in a file named after the pid under /run: the
//! next reserving run, or `memperf cleanup`, gives back what a dead pid
//! added, even after SIGKILL; a reboot clears records and pools together.

use crate::error::{Error, Result};
use crate::units::Bytes;
use std::io::{Read, Write};
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

pub use memperf_model::memory::{pool_command, pool_dir};
use std::sync::Mutex;

/// Where locks and records live (overridable for tests).
fn state_dir() -> PathBuf {
    std::env::var_os("MEMPERF_STATE_DIR").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("/run/memperf"))
}

/// Pools changed by live reservations of this process: (pool file, pages
/// added, record file). Read by [`restore_all`] when the process must leave
/// at once (a second Ctrl-C).
static LIVE: Mutex<Vec<(PathBuf, u64, PathBuf)>> = Mutex::new(Vec::new());

pub struct Reservation {
    nr: PathBuf,
    /// Pages this reservation added (given back on drop).
    pub added: u64,
    /// Pages free for this run once reserved.
    pub obtained_free: u64,
    record: PathBuf,
    /// Already given back (under a lock its caller held).
    released: bool,
}

fn read_u64(path: &Path) -> Option<u64> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

/// An exclusive lock on the pools, across processes, until dropped.
struct PoolLock(std::fs::File);

impl PoolLock {
    fn take() -> Result<PoolLock> {
        let dir = state_dir();
        std::fs::create_dir_all(dir.join("reservations"))
            .map_err(|e| Error::io(format!("cannot create {}", dir.display()), e))?;
        let f = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(dir.join("hugepages.lock"))
            .map_err(|e| Error::io(format!("cannot open {}/hugepages.lock", dir.display()), e))?;
        // SAFETY: flock on a file descriptor we own; blocks until granted.
        if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX) } != 0 {
            return Err(Error::io("cannot lock the hugetlb pools", std::io::Error::last_os_error()));
        }
        Ok(PoolLock(f))
    }
}

impl Drop for PoolLock {
    fn drop(&mut self) {
        // SAFETY: unlocking our own descriptor (closing it would too).
        unsafe { libc::flock(self.0.as_raw_fd(), libc::LOCK_UN) };
    }
}

/// A record: which pid added how many pages to which pool, and needs how many.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Record {
    pid: u32,
    page_kib: u64,
    needed: u64,
    added: u64,
    /// The pool's size before this run wrote it, while the write may or
    /// may not have happened (a kill between the record and the pool):
    /// then what was added is read from the pool, at most `added`.
    pending_from: Option<u64>,
}

impl Record {
    fn parse(text: &str) -> Option<Record> {
        let v: Vec<u64> = text.split_whitespace().map(|x| x.parse().ok()).collect::<Option<_>>()?;
        let (pid, page_kib, needed, added) = (*v.first()? as u32, *v.get(1)?, *v.get(2)?, *v.get(3)?);
        let pending_from = match v.len() {
            4 => None,
            5 => Some(v[4]),
            _ => return None,
        };
        Some(Record { pid, page_kib, needed, added, pending_from })
    }
    fn text(&self) -> String {
        let pending = self.pending_from.map(|n| format!(" {n}")).unwrap_or_default();
        format!("{} {} {} {}{pending}\n", self.pid, self.page_kib, self.needed, self.added)
    }
    /// Pages this record's run added to a pool now holding `now`.
    fn added_to(&self, now: u64) -> u64 {
        match self.pending_from {
            Some(before) => now.saturating_sub(before).min(self.added),
            None => self.added,
        }
    }
}

/// Every record, parsed, or `None` where it cannot be read (torn, empty,
/// garbage); the pid from the file name where the name holds one.
fn records_all() -> Vec<(PathBuf, Option<Record>)> {
    let Ok(dir) = std::fs::read_dir(state_dir().join("reservations")) else { return Vec::new() };
    dir.filter_map(|e| e.ok())
        .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
        .map(|e| {
            let mut s = String::new();
            let ok = std::fs::File::open(e.path()).and_then(|mut f| f.read_to_string(&mut s)).is_ok();
            (e.path(), ok.then(|| Record::parse(&s)).flatten())
        })
        .collect()
}

fn records() -> Vec<(PathBuf, Record)> {
    records_all().into_iter().filter_map(|(p, r)| Some((p, r?))).collect()
}

/// What `cleanup` (and every reserving run, first) did with a record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CleanupAction {
    /// A dead run's pages, given back.
    GaveBack { pid: u32, page: Bytes, pages: u64 },
    /// A record that cannot be read; removed when its run (named in the
    /// file name) is gone, kept while it may be alive.
    Unreadable { path: PathBuf, removed: bool },
}

fn alive(pid: u32) -> bool {
    // SAFETY: signal 0 only checks that the process exists.
    unsafe { libc::kill(pid as libc::pid_t, 0) == 0 || *libc::__errno_location() == libc::EPERM }
}

/// Gives back what dead processes added; returns (pid, pool, pages) for
/// each record cleared. Call with the pool lock held.
fn reap(_lock: &PoolLock) -> Vec<CleanupAction> {
    let mut out = Vec::new();
    for (path, r) in records_all() {
        let Some(r) = r else {
            let pid = path.file_name().and_then(|n| n.to_str()?.split('-').next()?.parse::<u32>().ok());
            let removed = pid.is_some_and(|p| !alive(p)) && std::fs::remove_file(&path).is_ok();
            out.push(CleanupAction::Unreadable { path, removed });
            continue;
        };
        if alive(r.pid) {
            continue;
        }
        let nr = pool_dir(Bytes(r.page_kib * 1024)).join("nr_hugepages");
        let mut pages = 0;
        if let Some(now) = read_u64(&nr) {
            pages = r.added_to(now);
            let _ = std::fs::write(&nr, now.saturating_sub(pages).to_string());
        }
        let _ = std::fs::remove_file(&path);
        out.push(CleanupAction::GaveBack { pid: r.pid, page: Bytes(r.page_kib * 1024), pages });
    }
    out
}

/// `memperf cleanup`: gives back the pages of runs that died holding them.
pub fn cleanup() -> Result<Vec<CleanupAction>> {
    let lock = PoolLock::take()?;
    Ok(reap(&lock))
}

/// Gives back every pool this process changed. For an exit that will not
/// run destructors; safe to call from the signal-handler thread.
pub fn restore_all() {
    let Ok(_lock) = PoolLock::take() else { return };
    let mut live = LIVE.lock().unwrap_or_else(|e| e.into_inner());
    for (nr, added, record) in live.drain(..).rev() {
        if let Some(now) = read_u64(&nr) {
            let _ = std::fs::write(&nr, now.saturating_sub(added).to_string());
        }
        let _ = std::fs::remove_file(record);
    }
}

impl Reservation {
    /// Ensures `pages` free pages of `page` size for this run. Fails with a
    /// fix when not root or when the kernel cannot find enough contiguous
    /// memory (then it adds nothing).
    pub fn ensure(page: Bytes, pages: u64) -> Result<Reservation> {
        let dir = pool_dir(page);
        let nr = dir.join("nr_hugepages");
        if [nr.clone(), dir.join("free_hugepages"), dir.join("resv_hugepages")].iter().any(|f| read_u64(f).is_none()) {
            return Err(Error::unsatisfiable(
                format!("this kernel has no {page} hugetlb pool"),
                "use a kernel with CONFIG_HUGETLBFS and this page size",
            ));
        }
        let lock = PoolLock::take()
            .map_err(|e| Error { fix: Some("run as root (the pools and /run/memperf are root's)".into()), ..e })?;
        reap(&lock);
        // Read under the lock: another run may have changed it meanwhile.
        let total = read_u64(&nr).unwrap_or(0);
        let claimed = claimed_by_others(page);
        let available = free_for_us(&dir, claimed);
        let add = pages.saturating_sub(available);
        let record =
            state_dir().join("reservations").join(format!("{}-{}kB-{}", std::process::id(), page.0 / 1024, unique()));
        let mut r = Reservation { nr: nr.clone(), added: 0, obtained_free: available, record, released: false };
        if let Err(e) = r.write_record(pages) {
            r.give_back();
            return Err(e);
        }
        if add == 0 {
            return Ok(r);
        }
        if let Err(e) = r.grow(page, pages, total, add) {
            r.give_back();
            return Err(e);
        }
        r.obtained_free = free_for_us(&dir, claimed);
        if r.obtained_free < pages {
            r.give_back();
            return Err(Error::unsatisfiable(
                format!(
                    "the kernel found only {} of {pages} free {page} pages (memory too fragmented)",
                    r.obtained_free
                ),
                "reserve at boot (hugepagesz=… hugepages=…) or drop caches: echo 3 > /proc/sys/vm/drop_caches",
            ));
        }
        drop(lock);
        Ok(r)
    }

    /// Grows the pool from `total` by `add` pages, the intent recorded
    /// first and what the kernel really added after; on error the caller
    /// gives back whatever `self.added` says.
    fn grow(&mut self, page: Bytes, pages: u64, total: u64, add: u64) -> Result<()> {
        let target = total + add;
        // The intent first: a kill from here on leaves a record that says
        // how to find what was added.
        self.added = add;
        if let Err(e) = self.write_record_pending(pages, Some(total)) {
            self.added = 0;
            return Err(e);
        }
        if let Err(e) = std::fs::write(&self.nr, target.to_string()) {
            return Err(Error::unsatisfiable(
                format!("cannot reserve {pages} pages of {page}: {e}"),
                format!("as root: echo {target} > {}", self.nr.display()),
            ));
        }
        // The kernel may add fewer than asked: give back what it did add.
        self.added = read_u64(&self.nr).unwrap_or(total).saturating_sub(total);
        self.write_record(pages)?;
        LIVE.lock().unwrap_or_else(|e| e.into_inner()).push((self.nr.clone(), self.added, self.record.clone()));
        Ok(())
    }

    fn write_record(&self, needed: u64) -> Result<()> {
        self.write_record_pending(needed, None)
    }

    /// Writes the record aside, syncs it and renames it into place: a kill
    /// at any moment leaves the old record or the new one, never a torn one.
    fn write_record_pending(&self, needed: u64, pending_from: Option<u64>) -> Result<()> {
        let page_kib = self
            .nr
            .parent()
            .and_then(|d| d.file_name())
            .and_then(|n| n.to_str()?.strip_prefix("hugepages-")?.strip_suffix("kB")?.parse::<u64>().ok());
        let rec = Record {
            pid: std::process::id(),
            page_kib: page_kib.unwrap_or(0),
            needed,
            added: self.added,
            pending_from,
        };
        let name = self.record.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let tmp = self.record.with_file_name(format!(".{name}.tmp"));
        let written = (|| {
            let mut f = std::fs::File::create(&tmp)?;
            f.write_all(rec.text().as_bytes())?;
            f.sync_all()?;
            std::fs::rename(&tmp, &self.record)
        })();
        written.map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            Error::io(format!("cannot write the reservation record {}", self.record.display()), e)
        })
    }
}

/// Pages of `page` size process `pid` has mapped already: no longer free,
/// so no longer part of what its record still claims.
fn mapped_pages(pid: u32, page: Bytes) -> u64 {
    let text = std::fs::read_to_string(format!("/proc/{pid}/smaps")).unwrap_or_default();
    crate::memory::smaps::mapped_with_page(&text, page.0) / page.0.max(1)
}

/// Pages of `page` size other live runs reserved and have not mapped yet.
fn claimed_by_others(page: Bytes) -> u64 {
    let pid = std::process::id();
    records()
        .iter()
        .filter(|(_, r)| r.pid != pid && r.page_kib * 1024 == page.0 && alive(r.pid))
        .map(|(_, r)| r.needed.saturating_sub(mapped_pages(r.pid, page)))
        .sum()
}

/// Free pages of a pool not promised to mappings (resv) nor claimed by
/// other live runs.
fn free_for_us(dir: &Path, claimed: u64) -> u64 {
    let free = read_u64(&dir.join("free_hugepages")).unwrap_or(0);
    let resv = read_u64(&dir.join("resv_hugepages")).unwrap_or(0);
    free.saturating_sub(resv).saturating_sub(claimed)
}

/// A per-process counter, so one process may hold several reservations.
fn unique() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

impl Reservation {
    /// Removes what this reservation added, and its record. The caller
    /// holds the pool lock (or is the destructor, which takes it).
    fn give_back(&mut self) {
        if self.released {
            return;
        }
        self.released = true;
        let mut live = LIVE.lock().unwrap_or_else(|e| e.into_inner());
        let entry = live.iter().rposition(|(_, _, rec)| *rec == self.record);
        // No entry: restore_all already gave these pages back.
        if self.added > 0 && entry.is_some() {
            if let Some(now) = read_u64(&self.nr) {
                let _ = std::fs::write(&self.nr, now.saturating_sub(self.added).to_string());
            }
        }
        let _ = std::fs::remove_file(&self.record);
        if let Some(i) = entry {
            live.remove(i);
        }
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        if !self.released {
            let _lock = PoolLock::take();
            self.give_back();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip() {
        let r = Record { pid: 42, page_kib: 2048, needed: 16, added: 3, pending_from: None };
        assert_eq!(Record::parse(&r.text()), Some(r));
        let p = Record { pid: 42, page_kib: 2048, needed: 16, added: 3, pending_from: Some(10) };
        assert_eq!(Record::parse(&p.text()), Some(p));
        for bad in ["garbage", "", "42 2048 16", "42 2048 16 3 x", "42 2048 16 3 1 2"] {
            assert_eq!(Record::parse(bad), None, "{bad}");
        }
        // A pending intent gives back what reached the pool, at most what it meant to add.
        let p = Record { pid: 1, page_kib: 2048, needed: 4, added: 3, pending_from: Some(10) };
        assert_eq!((p.added_to(10), p.added_to(12), p.added_to(20)), (0, 2, 3));
    }
}
