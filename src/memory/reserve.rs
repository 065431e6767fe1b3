//! Reserving hugetlb pages for a run and giving them back afterwards.
//!
//! A [`Reservation`] raises a pool's `nr_hugepages` so that at least the
//! requested number of pages is free, and writes the old value back when it
//! is dropped — also when the holder panics or the run is interrupted.
//! Reservations in one process are serialised, so two of them never restore
//! each other's values out of order.

use crate::error::{Error, Result};
use crate::units::Bytes;
use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard};

static POOL_LOCK: Mutex<()> = Mutex::new(());

/// Pools changed by live reservations, with the value to put back: read by
/// [`restore_all`] when the process must leave at once (a second Ctrl-C).
static TO_RESTORE: Mutex<Vec<(PathBuf, u64)>> = Mutex::new(Vec::new());

/// Puts back every pool a live reservation changed. For an exit that will
/// not run destructors; safe to call from the signal-handler thread.
pub fn restore_all() {
    let list = TO_RESTORE.lock().unwrap_or_else(|e| e.into_inner());
    for (path, previous) in list.iter().rev() {
        let _ = std::fs::write(path, previous.to_string());
    }
}

pub struct Reservation {
    path: PathBuf,
    /// The pool size before this reservation (put back on drop).
    pub previous: u64,
    pub obtained_free: u64,
    _lock: MutexGuard<'static, ()>,
}

fn pool_file(page: Bytes) -> PathBuf {
    PathBuf::from(format!("/sys/kernel/mm/hugepages/hugepages-{}kB", page.0 / 1024))
}

fn read_u64(path: &std::path::Path) -> Option<u64> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

impl Reservation {
    /// Ensures `pages` free pages of `page` size. Fails with a fix when not
    /// root or when the kernel cannot find enough contiguous memory.
    pub fn ensure(page: Bytes, pages: u64) -> Result<Reservation> {
        let lock = POOL_LOCK.lock().unwrap_or_else(|e| e.into_inner());
        let dir = pool_file(page);
        let nr = dir.join("nr_hugepages");
        let (Some(total), Some(free), Some(resv)) =
            (read_u64(&nr), read_u64(&dir.join("free_hugepages")), read_u64(&dir.join("resv_hugepages")))
        else {
            return Err(Error::unsatisfiable(
                format!("this kernel has no {page} hugetlb pool"),
                "use a kernel with CONFIG_HUGETLBFS and this page size",
            ));
        };
        let available = free.saturating_sub(resv);
        let mut r = Reservation { path: nr.clone(), previous: total, obtained_free: available, _lock: lock };
        if available >= pages {
            return Ok(r);
        }
        let target = total + (pages - available);
        TO_RESTORE.lock().unwrap_or_else(|e| e.into_inner()).push((nr.clone(), total));
        if let Err(e) = std::fs::write(&nr, target.to_string()) {
            return Err(Error::unsatisfiable(
                format!("cannot reserve {pages} pages of {page}: {e}"),
                format!("as root: echo {target} > {}", nr.display()),
            ));
        }
        let got = read_u64(&dir.join("free_hugepages")).unwrap_or(0).saturating_sub(resv);
        r.obtained_free = got;
        if got < pages {
            // Drop restores the previous value.
            return Err(Error::unsatisfiable(
                format!("the kernel found only {got} of {pages} free {page} pages (memory too fragmented)"),
                "reserve at boot (hugepagesz=… hugepages=…) or drop caches: echo 3 > /proc/sys/vm/drop_caches",
            ));
        }
        Ok(r)
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        if read_u64(&self.path) != Some(self.previous) {
            let _ = std::fs::write(&self.path, self.previous.to_string());
        }
        let mut list = TO_RESTORE.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(i) = list.iter().rposition(|(p, v)| *p == self.path && *v == self.previous) {
            list.remove(i);
        }
    }
}
