//! The addresses prefetched: 256 distinct pages of each kind (the lines of
//! page 0 for NULL), every one checked to be what it claims before any
//! prefetch — resident, unmapped per mincore, PROT_NONE per
//! /proc/self/maps, in the kernel half, or non-canonical. Rotating over many
//! pages keeps one address from living in the paging-structure caches.

use super::{Target, TargetCheck};
use crate::error::{Error, Result};
use crate::memory::{PagePolicy, Buffer};
use crate::units::Bytes;

/// Distinct addresses per target (a power of two: the loops mask with it).
pub const COUNT: usize = 256;
const PAGE: usize = 4096;

pub struct Targets {
    /// Mapped pages; its first page also holds the latency loop's cycle.
    mapped: Buffer,
    /// A PROT_NONE mapping of COUNT pages (unmapped on drop).
    prot_none: *mut libc::c_void,
    pub checks: Vec<TargetCheck>,
    addrs: Vec<(Target, Vec<usize>)>,
}

impl Drop for Targets {
    fn drop(&mut self) {
        // SAFETY: unmapping the mapping made in `Targets::new`.
        unsafe { libc::munmap(self.prot_none, COUNT * PAGE) };
    }
}

/// True when nothing is mapped at `addr` (mincore fails with ENOMEM).
pub fn mincore_unmapped(addr: usize) -> bool {
    let mut v = [0u8; 1];
    // SAFETY: mincore only reads the page tables; v has room for one page.
    let r = unsafe { libc::mincore((addr & !(PAGE - 1)) as *mut libc::c_void, PAGE, v.as_mut_ptr()) };
    r == -1 && std::io::Error::last_os_error().raw_os_error() == Some(libc::ENOMEM)
}

/// The permissions of the mapping holding `addr`, from /proc/self/maps.
pub fn maps_perms(maps: &str, addr: usize) -> Option<String> {
    maps.lines().find_map(|l| {
        let (range, rest) = l.split_once(' ')?;
        let (a, b) = range.split_once('-')?;
        let (a, b) = (usize::from_str_radix(a, 16).ok()?, usize::from_str_radix(b, 16).ok()?);
        (a <= addr && addr < b).then(|| rest.split_whitespace().next().unwrap_or("").to_string())
    })
}

fn anonymous(len: usize, prot: i32) -> Result<*mut libc::c_void> {
    // SAFETY: a fresh anonymous mapping; checked below.
    let p = unsafe { libc::mmap(std::ptr::null_mut(), len, prot, libc::MAP_PRIVATE | libc::MAP_ANONYMOUS, -1, 0) };
    if p == libc::MAP_FAILED {
        return Err(Error::unsatisfiable("cannot map a probe region", "check ulimit -v"));
    }
    Ok(p)
}

impl Targets {
    pub fn new() -> Result<Targets> {
        let mapped = Buffer::new(PagePolicy::Small, Bytes((COUNT * PAGE) as u64))?;
        let prot_none = anonymous(COUNT * PAGE, libc::PROT_NONE)?;
        // A hole: map, then unmap, so nothing is there (made last, so no
        // mapping of ours lands in it; `recheck` confirms after measuring).
        let hole = anonymous(COUNT * PAGE, libc::PROT_NONE)? as usize;
        // SAFETY: unmapping the mapping just made.
        unsafe { libc::munmap(hole as *mut libc::c_void, COUNT * PAGE) };
        let pages = |base: usize| (0..COUNT).map(|i| base + i * PAGE + 64 * (i % 64)).collect::<Vec<_>>();
        let addrs = vec![
            (Target::Mapped, pages(mapped.as_ptr() as usize)),
            (Target::Null, (0..COUNT).map(|i| (i % 64) * 64).collect()),
            (Target::Unmapped, pages(hole)),
            (Target::ProtNone, pages(prot_none as usize)),
            (Target::Kernel, pages(0xffff_ffff_8100_0000)),
            (Target::NonCanonical, pages(NON_CANONICAL)),
        ];
        let maps = std::fs::read_to_string("/proc/self/maps").unwrap_or_default();
        let checks = addrs.iter().map(|(t, a)| check(*t, a, &maps)).collect();
        Ok(Targets { mapped, prot_none, checks, addrs })
    }

    /// The checks again: an mmap made while measuring may have landed in
    /// the hole. The names of the targets that no longer hold.
    pub fn recheck(&self) -> Vec<&'static str> {
        let maps = std::fs::read_to_string("/proc/self/maps").unwrap_or_default();
        self.addrs.iter().filter(|(t, a)| !check(*t, a, &maps).ok).map(|(t, _)| t.name()).collect()
    }

    /// The addresses of target `t`.
    pub fn addresses(&self, t: Target) -> &[usize] {
        self.addrs.iter().find(|a| a.0 == t).map(|a| a.1.as_slice()).unwrap_or(&[])
    }

    /// A small cycle of pointers in the first mapped page (for the latency
    /// loop), on lines none of the mapped targets use.
    pub fn cycle(&self) -> *const usize {
        let base = self.mapped.as_ptr() as *mut usize;
        // Words 0, 8, …, 56 of lines 0..8 of page 0; the mapped target of
        // page 0 is line 0 too, which only makes it warmer.
        for i in 0..8 {
            // SAFETY: inside the first page of the live region.
            unsafe { base.add(i * 8).write(base.add(((i + 1) % 8) * 8) as usize) };
        }
        base
    }
}

/// An address no translation accepts. x86-64: bits 63..56 neither all 0
/// nor all 1, outside 4- and 5-level paging. aarch64: Linux ignores the top
/// byte of user addresses (TBI), so the address sets bit 52 instead, past
/// the 48- and 52-bit address spaces, with a zero tag.
#[cfg(not(target_arch = "aarch64"))]
const NON_CANONICAL: usize = 0x0100_0000_0000_0000;
#[cfg(target_arch = "aarch64")]
const NON_CANONICAL: usize = 0x0010_0000_0000_0000;

fn non_canonical(addrs: &[usize]) -> (&'static str, bool) {
    if cfg!(target_arch = "aarch64") {
        (
            "bits 55..52 neither all 0 nor all 1 (bits 63..56 are the ignored tag): outside 48- and 52-bit address spaces",
            addrs.iter().all(|&a| (a >> 52) & 0xf != 0 && (a >> 52) & 0xf != 0xf && a >> 56 == 0),
        )
    } else {
        (
            "bits 63..56 neither all 0 nor all 1: non-canonical under 4- and 5-level paging",
            addrs.iter().all(|&a| (a >> 56) != 0 && (a >> 56) != 0xff),
        )
    }
}

fn check(t: Target, addrs: &[usize], maps: &str) -> TargetCheck {
    let (what, ok) = match t {
        Target::Mapped => ("every page resident per mincore", addrs.iter().all(|&a| !mincore_unmapped(a))),
        Target::Null => ("page 0: mincore says ENOMEM (nothing mapped)", mincore_unmapped(0)),
        Target::Unmapped => {
            ("every page: mincore says ENOMEM (nothing mapped)", addrs.iter().all(|&a| mincore_unmapped(a)))
        }
        Target::ProtNone => (
            "every page ---p in /proc/self/maps",
            addrs.iter().all(|&a| maps_perms(maps, a).as_deref() == Some("---p")),
        ),
        Target::Kernel => ("in the kernel half (bits 63..48 set, canonical)", addrs.iter().all(|&a| a >> 48 == 0xffff)),
        Target::NonCanonical => non_canonical(addrs),
    };
    TargetCheck {
        target: t,
        addresses: addrs.len(),
        first: format!("{:#x}", addrs.first().copied().unwrap_or(0)),
        last: format!("{:#x}", addrs.last().copied().unwrap_or(0)),
        check: what.into(),
        ok,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_target_is_what_it_claims() {
        // Other tests of this process map memory (thread stacks, shared
        // libraries) at any moment, and one may land in the hole between
        // its unmap and the check: the experiment rechecks after measuring;
        // here, a new hole is made up to three times.
        let fresh = || Targets::new().unwrap();
        let t = (0..3).map(|_| fresh()).find(|t| t.checks.iter().all(|c| c.ok)).unwrap_or_else(fresh);
        for c in &t.checks {
            assert!(c.ok, "{c:?}");
            assert_eq!(c.addresses, COUNT);
        }
        let mut pages: Vec<usize> = t.addresses(Target::ProtNone).iter().map(|a| a / PAGE).collect();
        pages.dedup();
        assert_eq!(pages.len(), COUNT, "distinct pages, rotated over");
    }

    #[test]
    fn a_mapped_page_is_not_taken_for_prot_none() {
        let t = Targets::new().unwrap();
        let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
        assert!(!check(Target::ProtNone, t.addresses(Target::Mapped), &maps).ok);
        assert!(!check(Target::Unmapped, t.addresses(Target::Mapped), &maps).ok);
    }
}
