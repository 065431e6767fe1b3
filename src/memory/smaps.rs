//! Reading back what the kernel actually gave a mapping, from
//! /proc/PID/smaps: what each mapping is, how many bytes sit on huge pages,
//! and how many were referenced since the accessed bits were cleared.

use crate::units::Bytes;

/// One smaps entry: where it is, what it maps, and its sizes in bytes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SmapsEntry {
    pub start: usize,
    pub end: usize,
    pub perms: String,
    /// The path or `[heap]`-style name; empty for anonymous memory.
    pub path: String,
    pub size: u64,
    pub rss: u64,
    /// Referenced since the accessed bits were last cleared.
    pub referenced: u64,
    pub anonymous: u64,
    pub anon_huge: u64,
    pub kernel_page_size: u64,
    pub private_hugetlb: u64,
    pub shared_hugetlb: u64,
}

impl SmapsEntry {
    /// Bytes of this mapping that are backed by huge pages (THP or hugetlb).
    pub fn huge_bytes(&self) -> Bytes {
        Bytes(self.anon_huge + self.private_hugetlb + self.shared_hugetlb)
    }
}

/// The header of an entry: `start-end perms offset device inode [path]`.
fn header(line: &str) -> Option<SmapsEntry> {
    let mut words = line.split_whitespace();
    let (a, b) = words.next()?.split_once('-')?;
    let (start, end) = (usize::from_str_radix(a, 16).ok()?, usize::from_str_radix(b, 16).ok()?);
    let perms = words.next()?.to_string();
    // offset, device, inode, then the path (which may hold spaces).
    let path = line.split_whitespace().skip(5).collect::<Vec<_>>().join(" ");
    Some(SmapsEntry { start, end, perms, path, ..SmapsEntry::default() })
}

/// Every entry of smaps text.
pub fn entries(text: &str) -> Vec<SmapsEntry> {
    let mut out: Vec<SmapsEntry> = Vec::new();
    for line in text.lines() {
        if let Some(e) = header(line) {
            out.push(e);
            continue;
        }
        let Some(entry) = out.last_mut() else { continue };
        let Some((key, rest)) = line.split_once(':') else { continue };
        let kb = rest.split_whitespace().next().and_then(|v| v.parse::<u64>().ok()).unwrap_or(0) * 1024;
        match key {
            "Size" => entry.size = kb,
            "Rss" => entry.rss = kb,
            "Referenced" => entry.referenced = kb,
            "Anonymous" => entry.anonymous = kb,
            "AnonHugePages" => entry.anon_huge = kb,
            "KernelPageSize" => entry.kernel_page_size = kb,
            "Private_Hugetlb" => entry.private_hugetlb = kb,
            "Shared_Hugetlb" => entry.shared_hugetlb = kb,
            _ => {}
        }
    }
    out
}

/// Parses smaps text and returns the entry that starts at `start`.
pub fn entry_at(text: &str, start: usize) -> Option<SmapsEntry> {
    entries(text).into_iter().find(|e| e.start == start)
}

/// Bytes of every mapping in smaps `text` whose kernel page size is
/// `page`: a hugetlb mapping's pages are either faulted in or reserved for
/// it, so all of its size is taken from the pool.
pub fn mapped_with_page(text: &str, page: u64) -> u64 {
    let (mut total, mut size) = (0u64, 0u64);
    for line in text.lines() {
        let Some((key, rest)) = line.split_once(':') else { continue };
        let kb = || rest.split_whitespace().next().and_then(|v| v.parse::<u64>().ok()).unwrap_or(0) * 1024;
        match key {
            "Size" => size = kb(),
            "KernelPageSize" if kb() == page => total += size,
            _ => {}
        }
    }
    total
}

/// The first entry (the only one of a smaps_rollup).
pub fn first_entry(text: &str) -> Option<SmapsEntry> {
    let range = text.lines().next()?.split_once(' ')?.0;
    let start = usize::from_str_radix(range.split_once('-')?.0, 16).ok()?;
    entry_at(text, start)
}

/// The entry of this process's smaps that starts at `start`.
pub fn self_entry_at(start: usize) -> Option<SmapsEntry> {
    entry_at(&std::fs::read_to_string("/proc/self/smaps").ok()?, start)
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIXTURE: &str = "\
7f0000000000-7f0000200000 rw-p 00000000 00:00 0
Size:               2048 kB
KernelPageSize:        4 kB
Rss:                2048 kB
AnonHugePages:      2048 kB
7f0000400000-7f0040400000 rw-s 00000000 00:10 12 /SYSV00000000 (deleted)
Size:            1048576 kB
KernelPageSize:     2048 kB
Rss:                   0 kB
AnonHugePages:         0 kB
Shared_Hugetlb:   1048576 kB
Private_Hugetlb:       0 kB
";

    #[test]
    fn finds_the_entry_and_its_huge_bytes() {
        let thp = entry_at(FIXTURE, 0x7f0000000000).unwrap();
        assert_eq!(thp.huge_bytes(), Bytes(2 << 20));
        assert_eq!(thp.kernel_page_size, 4096);
        let shm = entry_at(FIXTURE, 0x7f0000400000).unwrap();
        assert_eq!(shm.huge_bytes(), Bytes(1 << 30));
        assert_eq!(shm.kernel_page_size, 2 << 20);
        assert_eq!(shm.end - shm.start, 1 << 30);
        assert!(entry_at(FIXTURE, 0x1000).is_none());
    }

    #[test]
    fn counts_the_bytes_mapped_with_one_page_size() {
        assert_eq!(mapped_with_page(FIXTURE, 2 << 20), 1 << 30);
        assert_eq!(mapped_with_page(FIXTURE, 4096), 2 << 20);
        assert_eq!(mapped_with_page(FIXTURE, 1 << 30), 0);
    }
}
