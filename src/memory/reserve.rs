//! Reserving hugetlb pages for a run and giving them back afterwards,
//! without ever leaving the machine changed.
//!
//! A [`Reservation`] is relative: it adds to a pool's `nr_hugepages` only
//! what this run needs beyond the pages that are free and not claimed by
//! another live run, and gives back exactly what it added — so two runs
//! at once never restore each other's values. Every change is made under
//! an exclusive lock on a file (`flock`, so it is released when a process
//! dies), held only for the read-modify-write, and recorded in a file
//! named after the pid. When a run is killed (even with SIGKILL) its record
//! outlives it: the next reserving run, or `memperf cleanup`, gives back
//! what a dead pid added. The records live under /run, which a reboot
//! clears together with the pools themselves.

use crate::error::{Error, Result};
use crate::units::Bytes;
use std::io::{Read, Write};
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
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

/// The shell command that sets a pool to `pages` pages: the one place that
/// spells the pool's file (the fixes of errors and warnings use it).
pub fn pool_command(page: Bytes, pages: u64) -> String {
    if page.0 == 2 << 20 {
        format!("echo {pages} > /proc/sys/vm/nr_hugepages")
    } else {
        format!("echo {pages} > {}", pool_dir(page).join("nr_hugepages").display())
    }
}

fn pool_dir(page: Bytes) -> PathBuf {
    PathBuf::from(format!("/sys/kernel/mm/hugepages/hugepages-{}kB", page.0 / 1024))
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
}

impl Record {
    fn parse(text: &str) -> Option<Record> {
        let v: Vec<u64> = text.split_whitespace().filter_map(|x| x.parse().ok()).collect();
        match v.as_slice() {
            [pid, page_kib, needed, added] => {
                Some(Record { pid: *pid as u32, page_kib: *page_kib, needed: *needed, added: *added })
            }
            _ => None,
        }
    }
    fn text(&self) -> String {
        format!("{} {} {} {}\n", self.pid, self.page_kib, self.needed, self.added)
    }
}

fn records() -> Vec<(PathBuf, Record)> {
    let Ok(dir) = std::fs::read_dir(state_dir().join("reservations")) else { return Vec::new() };
    dir.filter_map(|e| e.ok())
        .filter_map(|e| {
            let mut s = String::new();
            std::fs::File::open(e.path()).ok()?.read_to_string(&mut s).ok()?;
            Some((e.path(), Record::parse(&s)?))
        })
        .collect()
}

fn alive(pid: u32) -> bool {
    // SAFETY: signal 0 only checks that the process exists.
    unsafe { libc::kill(pid as libc::pid_t, 0) == 0 || *libc::__errno_location() == libc::EPERM }
}

/// Gives back what dead processes added; returns (pid, pool, pages) for
/// each record cleared. Call with the pool lock held.
fn reap(_lock: &PoolLock) -> Vec<(u32, Bytes, u64)> {
    let mut out = Vec::new();
    for (path, r) in records() {
        if alive(r.pid) {
            continue;
        }
        let nr = pool_dir(Bytes(r.page_kib * 1024)).join("nr_hugepages");
        if let Some(now) = read_u64(&nr) {
            let _ = std::fs::write(&nr, now.saturating_sub(r.added).to_string());
        }
        let _ = std::fs::remove_file(&path);
        out.push((r.pid, Bytes(r.page_kib * 1024), r.added));
    }
    out
}

/// `memperf cleanup`: gives back the pages of runs that died holding them.
pub fn cleanup() -> Result<Vec<(u32, Bytes, u64)>> {
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
        let (Some(_), Some(_), Some(_)) =
            (read_u64(&nr), read_u64(&dir.join("free_hugepages")), read_u64(&dir.join("resv_hugepages")))
        else {
            return Err(Error::unsatisfiable(
                format!("this kernel has no {page} hugetlb pool"),
                "use a kernel with CONFIG_HUGETLBFS and this page size",
            ));
        };
        let lock = PoolLock::take()
            .map_err(|e| Error { fix: Some("run as root (the pools and /run/memperf are root's)".into()), ..e })?;
        reap(&lock);
        // Read under the lock: another run may have changed it meanwhile.
        let total = read_u64(&nr).unwrap_or(0);
        let pid = std::process::id();
        let claimed: u64 = records()
            .iter()
            .filter(|(_, r)| r.pid != pid && r.page_kib * 1024 == page.0 && alive(r.pid))
            .map(|(_, r)| r.needed)
            .sum();
        let available = free_for_us(&dir, claimed);
        let add = pages.saturating_sub(available);
        let record = state_dir().join("reservations").join(format!("{pid}-{}kB-{}", page.0 / 1024, unique()));
        let mut r = Reservation { nr: nr.clone(), added: 0, obtained_free: available, record, released: false };
        if let Err(e) = r.write_record(pages) {
            r.give_back();
            return Err(e);
        }
        if add == 0 {
            return Ok(r);
        }
        let target = total + add;
        if let Err(e) = std::fs::write(&nr, target.to_string()) {
            r.give_back();
            return Err(Error::unsatisfiable(
                format!("cannot reserve {pages} pages of {page}: {e}"),
                format!("as root: echo {target} > {}", nr.display()),
            ));
        }
        // The kernel may add fewer than asked: give back what it did add.
        r.added = read_u64(&nr).unwrap_or(total).saturating_sub(total);
        if let Err(e) = r.write_record(pages) {
            r.give_back();
            return Err(e);
        }
        LIVE.lock().unwrap_or_else(|e| e.into_inner()).push((nr.clone(), r.added, r.record.clone()));
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

    fn write_record(&self, needed: u64) -> Result<()> {
        let page_kib = self
            .nr
            .parent()
            .and_then(|d| d.file_name())
            .and_then(|n| n.to_str()?.strip_prefix("hugepages-")?.strip_suffix("kB")?.parse::<u64>().ok());
        let rec = Record { pid: std::process::id(), page_kib: page_kib.unwrap_or(0), needed, added: self.added };
        let mut f = std::fs::File::create(&self.record)
            .map_err(|e| Error::io(format!("cannot write {}", self.record.display()), e))?;
        f.write_all(rec.text().as_bytes()).and_then(|_| f.sync_all()).map_err(|e| Error::io("reservation record", e))
    }
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
        let r = Record { pid: 42, page_kib: 2048, needed: 16, added: 3 };
        assert_eq!(Record::parse(&r.text()), Some(r));
        assert_eq!(Record::parse("garbage"), None);
    }
}
