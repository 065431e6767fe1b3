//! `Buffer`: page-aligned memory under a [`PagePolicy`], touched, verified,
//! and freed on drop.
//!
//! Methodology (after uarch-bench): every page is written with a non-zero
//! value before use, so no read ever hits the shared zero page; and after
//! touching, the bytes really backed by huge pages are read back from
//! /proc/self/smaps and recorded. Base-page and THP regions are surrounded
//! by PROT_NONE guard pages so their VMA is exactly the region and never
//! merges with a neighbour (which would make smaps figures meaningless).

use super::smaps;
use super::PagePolicy;
use crate::error::{Error, Result};
use crate::units::Bytes;
pub use memperf_model::memory::Backing;

enum Mapping {
    /// `munmap(base, len)` on drop.
    Mmap { base: *mut libc::c_void, len: usize },
    /// `shmdt(addr)` on drop; the segment was IPC_RMID'd at attach.
    Shm { addr: *mut libc::c_void },
}

pub struct Buffer {
    ptr: *mut u8,
    len: usize,
    mapping: Mapping,
    backing: Backing,
}

// SAFETY: Buffer owns its mapping exclusively; the raw pointers are not
// shared with anything else, so moving or sharing the owner between threads
// is as safe as for a Vec<u8>.
unsafe impl Send for Buffer {}
// SAFETY: shared access only hands out &[T] (see `as_slice`); writing needs
// &mut self.
unsafe impl Sync for Buffer {}

const GUARD: usize = 4096;

impl Buffer {
    /// Allocates at least `size` bytes under `policy`, touches every page and
    /// reads back the backing obtained.
    pub fn new(policy: PagePolicy, size: Bytes) -> Result<Buffer> {
        let mut region = Buffer::untouched(policy, size)?;
        region.touch();
        region.read_back();
        Ok(region)
    }

    /// Allocates without touching: the caller writes every page (each
    /// thread its own slice, so first touch places it on that thread's
    /// NUMA node), then calls [`Buffer::read_back`].
    pub fn untouched(policy: PagePolicy, size: Bytes) -> Result<Buffer> {
        if size.0 == 0 {
            return Err(Error::usage("region size must be greater than zero"));
        }
        let page = policy.page_size().0 as usize;
        let len = size.round_up(page as u64).0 as usize;
        check_memory_available(policy, len)?;
        let (ptr, mapping) = match policy {
            PagePolicy::Small | PagePolicy::Thp => map_guarded(policy, len)?,
            PagePolicy::Huge2M | PagePolicy::Huge1G => map_hugetlb(policy, len)?,
            PagePolicy::Shm => attach_shm(len)?,
        };
        Ok(Buffer {
            ptr,
            len,
            mapping,
            backing: Backing {
                requested: policy,
                size_bytes: Bytes(len as u64),
                page_size_bytes: None,
                huge_bytes: None,
                huge_fraction: None,
                in_order_fraction: None,
                pages_per_2mib_block: None,
                first_touch_shuffled: false,
            },
        })
    }

    /// Records that the region's pages were first touched in a shuffled
    /// order ([`super::layout::touch_shuffled`], by the threads that own
    /// them).
    pub fn mark_touched_shuffled(&mut self) {
        self.backing.first_touch_shuffled = true;
    }

    /// Writes a non-zero byte to every 4 KiB page.
    fn touch(&mut self) {
        for off in (0..self.len).step_by(4096) {
            // SAFETY: off < len, inside the writable mapping.
            unsafe { std::ptr::write_volatile(self.ptr.add(off), 0x5a) };
        }
    }

    /// Reads the backing back from smaps: after touching, and again after a
    /// measurement (THP pages can be split or collapsed meanwhile). A region
    /// only partly on huge pages has no single page size (`None`).
    pub fn read_back(&mut self) {
        let Some(entry) = smaps::self_entry_at(self.ptr as usize) else { return };
        // A VMA larger than the region would mix in someone else's pages.
        let exact = entry.end - entry.start == self.len;
        let huge = if exact { entry.huge_bytes() } else { Bytes(entry.huge_bytes().0.min(self.len as u64)) };
        self.backing.huge_bytes = Some(huge);
        self.backing.huge_fraction = Some(huge.0 as f64 / self.len as f64);
        self.backing.page_size_bytes = if self.backing.requested == PagePolicy::Small || huge.0 == 0 {
            Some(Bytes(4096))
        } else if huge.0 == self.len as u64 {
            Some(self.backing.requested.page_size())
        } else {
            None
        };
        self.backing.in_order_fraction = super::layout::in_order_fraction(self.ptr, self.len);
        self.backing.pages_per_2mib_block = super::layout::pages_per_2mib_block(self.ptr, self.len);
    }

    /// Maps a THP region's huge pages with 4 KiB entries and leaves every
    /// frame where it is: 4 KiB pages over whole 2 MiB blocks, in physical
    /// order. Changing the protection of one 4 KiB page of a huge mapping
    /// splits its PMD into 512 PTEs over the same frames; the protection
    /// is put back at once, and MADV_NOHUGEPAGE keeps khugepaged from
    /// collapsing them again. Reads the backing back (its huge bytes are
    /// then 0, its frames in order where they were huge).
    pub fn split_huge_mappings(&mut self) -> Result<()> {
        if self.backing.requested != PagePolicy::Thp {
            return Err(Error::usage(format!(
                "only a thp region's mappings split, not a {} one",
                self.backing.requested
            )));
        }
        let rw = libc::PROT_READ | libc::PROT_WRITE;
        let ptr = self.ptr as *mut libc::c_void;
        // SAFETY: [ptr, ptr+len) is this region's own mapping (2 MiB
        // aligned), which `&mut self` keeps anyone from touching meanwhile;
        // every page made read-only here is read-write again before this
        // returns (below, on failure, the whole region at once).
        let ok = unsafe {
            libc::madvise(ptr, self.len, libc::MADV_NOHUGEPAGE) == 0
                && (0..self.len).step_by(2 << 20).all(|off| {
                    let page = self.ptr.add(off) as *mut libc::c_void;
                    libc::mprotect(page, 4096, libc::PROT_READ) == 0 && libc::mprotect(page, 4096, rw) == 0
                })
        };
        if !ok {
            let err = os_error();
            // SAFETY: as above; the whole region read-write, as it was.
            if unsafe { libc::mprotect(ptr, self.len, rw) } != 0 {
                panic!("cannot make a region read-write again after a failed split: {}", os_error());
            }
            return Err(Error::unsatisfiable(
                format!("cannot map the thp region with 4 KiB pages: {err}"),
                "check ulimit -v and vm.max_map_count",
            ));
        }
        self.read_back();
        Ok(())
    }

    pub fn backing(&self) -> &Backing {
        &self.backing
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn as_ptr(&self) -> *const u8 {
        self.ptr
    }

    /// The region as a slice of `T` (plain data: integers, floats).
    pub fn as_slice<T: bytemuck_free::Plain>(&self) -> &[T] {
        // SAFETY: the mapping is len bytes, page-aligned (so aligned for any
        // T used here), fully initialised by `touch`, and every bit pattern
        // is a valid T for the Plain types.
        unsafe { std::slice::from_raw_parts(self.ptr as *const T, self.len / std::mem::size_of::<T>()) }
    }

    pub fn as_mut_slice<T: bytemuck_free::Plain>(&mut self) -> &mut [T] {
        // SAFETY: as for `as_slice`, and &mut self guarantees exclusivity.
        unsafe { std::slice::from_raw_parts_mut(self.ptr as *mut T, self.len / std::mem::size_of::<T>()) }
    }
}

/// Types for which every bit pattern is valid, so a touched region can be
/// viewed as a slice of them.
pub mod bytemuck_free {
    /// # Safety
    /// Implement only for types where every bit pattern is a valid value.
    pub unsafe trait Plain: Copy {}
    // SAFETY: every bit pattern is a valid value of each of these.
    unsafe impl Plain for u8 {}
    // SAFETY: as above.
    unsafe impl Plain for u32 {}
    // SAFETY: as above.
    unsafe impl Plain for u64 {}
    // SAFETY: as above.
    unsafe impl Plain for usize {}
    // SAFETY: as above (any bits are some f64, possibly NaN).
    unsafe impl Plain for f64 {}
    // SAFETY: as above.
    unsafe impl Plain for f32 {}
}

impl Drop for Buffer {
    fn drop(&mut self) {
        match self.mapping {
            // SAFETY: base/len are exactly what mmap returned for this region.
            Mapping::Mmap { base, len } => unsafe {
                libc::munmap(base, len);
            },
            // SAFETY: addr is what shmat returned for this region.
            Mapping::Shm { addr } => unsafe {
                libc::shmdt(addr);
            },
        }
    }
}

fn os_error() -> std::io::Error {
    std::io::Error::last_os_error()
}

fn check_memory_available(policy: PagePolicy, len: usize) -> Result<()> {
    if policy.uses_hugetlb_pool() {
        return Ok(()); // the pool, not MemAvailable, limits these; mmap says ENOMEM
    }
    let text = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let (_, avail) = super::meminfo(&text);
    let fix = format!("use a size below {}", avail.unwrap_or_default());
    super::check_fits(Bytes(len as u64), avail, &format!("a {policy} region of {}", Bytes(len as u64)), fix)
}

fn map_guarded(policy: PagePolicy, len: usize) -> Result<(*mut u8, Mapping)> {
    // Every region starts on a 2 MiB boundary, whatever its page size:
    // some L1 caches are sensitive to where in a 2 MiB frame a small working
    // set lies (docs/validation.md, "Figures behind constants"), so figures must
    // not depend on where mmap happened to put the region.
    let align = policy.page_size().0.max(2 << 20) as usize;
    let total = len + align + 2 * GUARD;
    // SAFETY: a fresh anonymous reservation with no access; checked below.
    let base = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            total,
            libc::PROT_NONE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
            -1,
            0,
        )
    };
    if base == libc::MAP_FAILED {
        return Err(Error::unsatisfiable(
            format!("cannot reserve {} of address space: {}", Bytes(total as u64), os_error()),
            "use a smaller --size",
        ));
    }
    let start = (base as usize + GUARD).next_multiple_of(align);
    let ptr = start as *mut libc::c_void;
    let advice = if policy == PagePolicy::Thp { libc::MADV_HUGEPAGE } else { libc::MADV_NOHUGEPAGE };
    // SAFETY: [start, start+len) lies inside the reservation, with at least
    // one guard page on each side.
    let ok = unsafe {
        libc::mprotect(ptr, len, libc::PROT_READ | libc::PROT_WRITE) == 0 && libc::madvise(ptr, len, advice) == 0
    };
    if !ok {
        let err = os_error();
        // SAFETY: unmapping the reservation made above.
        unsafe { libc::munmap(base, total) };
        return Err(Error::unsatisfiable(format!("cannot prepare a {policy} region: {err}"), "check ulimit -v"));
    }
    Ok((start as *mut u8, Mapping::Mmap { base, len: total }))
}

/// The fix for a hugetlb pool that has too few free pages.
pub fn reserve_fix(policy: PagePolicy, len: usize) -> String {
    let page = policy.page_size().0 as usize;
    let needed = len.div_ceil(page);
    let cmd = super::reserve::pool_command(policy.page_size(), needed as u64);
    match policy {
        PagePolicy::Huge1G => format!("{cmd} (as root; or boot with hugepagesz=1G hugepages={needed})"),
        _ => format!("{cmd} (as root), or pass --reserve-hugepages"),
    }
}

fn map_hugetlb(policy: PagePolicy, len: usize) -> Result<(*mut u8, Mapping)> {
    let size_flag = if policy == PagePolicy::Huge1G { libc::MAP_HUGE_1GB } else { libc::MAP_HUGE_2MB };
    // SAFETY: a fresh anonymous hugetlb mapping; checked below.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_HUGETLB | size_flag,
            -1,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        let err = os_error();
        let page = policy.page_size();
        return Err(Error::unsatisfiable(
            format!(
                "cannot map {} on {page} hugetlb pages ({err}): not enough {page} pages reserved",
                Bytes(len as u64)
            ),
            reserve_fix(policy, len),
        ));
    }
    Ok((p as *mut u8, Mapping::Mmap { base: p, len }))
}

fn attach_shm(len: usize) -> Result<(*mut u8, Mapping)> {
    const SHM_HUGE_2MB: libc::c_int = 21 << 26;
    // SAFETY: plain syscall; the result is checked.
    let id =
        unsafe { libc::shmget(libc::IPC_PRIVATE, len, libc::IPC_CREAT | 0o600 | libc::SHM_HUGETLB | SHM_HUGE_2MB) };
    if id < 0 {
        let err = os_error();
        let fix = if err.raw_os_error() == Some(libc::EPERM) {
            "add your group to vm.hugetlb_shm_group (echo $(id -g) > /proc/sys/vm/hugetlb_shm_group) or run as root"
                .to_string()
        } else {
            reserve_fix(PagePolicy::Shm, len)
        };
        return Err(Error::unsatisfiable(
            format!("cannot create a {} SHM_HUGETLB segment: {err}", Bytes(len as u64)),
            fix,
        ));
    }
    // SAFETY: id is a valid segment; a null address lets the kernel choose.
    let addr = unsafe { libc::shmat(id, std::ptr::null(), 0) };
    // Mark for removal at once: the segment then disappears with its last
    // detach, even if this process is killed with SIGKILL.
    // SAFETY: id is valid; IPC_RMID takes no buffer.
    unsafe { libc::shmctl(id, libc::IPC_RMID, std::ptr::null_mut()) };
    if addr as isize == -1 {
        return Err(Error::unsatisfiable(format!("cannot attach the SysV segment: {}", os_error()), "check ulimit -v"));
    }
    Ok((addr as *mut u8, Mapping::Shm { addr }))
}

/// The NUMA node holding the page at `addr` (touched), from get_mempolicy.
pub fn numa_node_of(addr: usize) -> Option<i32> {
    const MPOL_F_NODE: libc::c_ulong = 1;
    const MPOL_F_ADDR: libc::c_ulong = 2;
    let mut node: libc::c_int = -1;
    // SAFETY: get_mempolicy writes one int to `node`; with a null nodemask
    // and maxnode 0 it writes nothing else; addr is only looked up.
    let r = unsafe {
        libc::syscall(
            libc::SYS_get_mempolicy,
            &mut node as *mut libc::c_int,
            std::ptr::null_mut::<libc::c_ulong>(),
            0 as libc::c_ulong,
            addr,
            MPOL_F_NODE | MPOL_F_ADDR,
        )
    };
    (r == 0 && node >= 0).then_some(node)
}
