//! What a running process touched, from the page tables the kernel keeps:
//! writing `1` to /proc/PID/clear_refs clears the accessed bit of every
//! page the process maps (and flushes its TLB), and /proc/PID/smaps then
//! says, per mapping, how many bytes were referenced since (`Referenced`),
//! beside the resident, anonymous and huge-page bytes. A huge page is
//! accessed as a whole: one touched byte makes all 2 MiB of it referenced.

pub use crate::memory::smaps::{self, SmapsEntry};
pub use memperf_model::process::pages::MappingKind;
use std::io::Write;

/// What a smaps entry maps.
pub fn kind(e: &SmapsEntry) -> MappingKind {
    let shared = e.perms.as_bytes().get(3) == Some(&b's');
    match e.path.as_str() {
        "[heap]" => MappingKind::Heap,
        p if p.starts_with("[stack") => MappingKind::Stack,
        p if p.starts_with('[') && !p.starts_with("[anon") => MappingKind::Special,
        _ if shared => MappingKind::Shared,
        p if p.is_empty() || p.starts_with("[anon") => MappingKind::Anonymous,
        p if p.starts_with("/memfd:") || p.starts_with("/dev/shm/") || p.starts_with("/SYSV") => MappingKind::Shared,
        _ => MappingKind::File,
    }
}

/// The mappings of `pid` now; `Err` once it is gone or not ours to read.
pub fn read(pid: i32) -> std::io::Result<Vec<SmapsEntry>> {
    Ok(smaps::entries(&std::fs::read_to_string(format!("/proc/{pid}/smaps"))?))
}

/// /proc/PID/clear_refs, opened for writing (the permission check).
fn open_clear_refs(pid: i32) -> std::io::Result<std::fs::File> {
    std::fs::OpenOptions::new().write(true).open(format!("/proc/{pid}/clear_refs"))
}

/// Whether this process may clear `pid`'s accessed bits (opens the file
/// for writing, writes nothing).
pub fn may_clear_refs(pid: i32) -> std::io::Result<()> {
    open_clear_refs(pid).map(drop)
}

/// Clears the accessed bits of every page `pid` maps (and its TLB).
pub fn clear_refs(pid: i32) -> std::io::Result<()> {
    open_clear_refs(pid)?.write_all(b"1")
}

/// Clears the soft-dirty bits of every page `pid` maps (where the kernel
/// keeps them): a page written after this has its bit set again.
pub fn clear_soft_dirty(pid: i32) -> std::io::Result<()> {
    open_clear_refs(pid)?.write_all(b"4")
}

#[cfg(test)]
mod tests {
    use super::*;

    const SMAPS: &str = "\
55d0c0000000-55d0c0021000 rw-p 00000000 00:00 0                          [heap]
Size:                132 kB
Rss:                  12 kB
Referenced:            8 kB
Anonymous:            12 kB
7f0000000000-7f0080001000 rw-p 00000000 00:00 0 
Size:            2097156 kB
Rss:             2097156 kB
Referenced:       262144 kB
Anonymous:       2097156 kB
AnonHugePages:     20480 kB
KernelPageSize:        4 kB
7f1000000000-7f1000100000 r-xp 00000000 08:01 1234                       /usr/lib/libc so.6
Rss:                 800 kB
Referenced:          800 kB
Anonymous:             0 kB
7f2000000000-7f2000200000 rw-s 00000000 00:01 99                         /memfd:x (deleted)
Rss:                2048 kB
7ffd00000000-7ffd00021000 rw-p 00000000 00:00 0                          [stack]
Rss:                  16 kB
7ffd10000000-7ffd10002000 r-xp 00000000 00:00 0                          [vdso]
";

    #[test]
    fn smaps_entries_read_with_their_kind_and_bytes() {
        let m = smaps::entries(SMAPS);
        assert_eq!(m.len(), 6);
        let kinds: Vec<MappingKind> = m.iter().map(kind).collect();
        use MappingKind::*;
        assert_eq!(kinds, [Heap, Anonymous, File, Shared, Stack, Special]);
        assert_eq!((m[1].rss, m[1].referenced, m[1].anon_huge), (2097156 << 10, 256 << 20, 20 << 20));
        assert_eq!(m[0].anonymous, 12 << 10);
        assert_eq!(m[2].path, "/usr/lib/libc so.6", "a path with a space");
        assert_eq!(m[1].path, "");
        assert!(Anonymous.huge_pages_can_cover() && !File.huge_pages_can_cover());
    }

    #[test]
    fn this_process_can_be_read_and_its_refs_cleared() {
        let me = std::process::id() as i32;
        let maps = read(me).unwrap();
        assert!(maps.iter().any(|m| kind(m) == MappingKind::Stack && m.rss > 0));
        match clear_refs(me) {
            Ok(()) => {}
            Err(e) => crate::test_support::skip(
                &format!("clearing this process's own referenced bits: {e}"),
                "allow /proc/PID/clear_refs (a container may refuse it)",
            ),
        }
    }
}
