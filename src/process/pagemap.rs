//! Where in a mapping a process's pages lie, page by page (`wss --pages`):
//! /proc/PID/pagemap gives each 4 KiB page's presence and (to root) frame,
//! /proc/kpageflags whether a frame is part of a THP, and idle-page tracking
//! (/sys/kernel/mm/page_idle/bitmap) which were accessed since marked idle.
//! From these, per mapping per interval: the 2 MiB spans holding a resident
//! page, those holding an accessed one, and (soft-dirty bits, bit 55) the
//! pages written. A huge page's access is kept on its head frame only, so
//! its tails take the head's answer. The files are named in [`Files`] so
//! tests stand fakes in their place; the bitmap is read and written in
//! aligned 8-byte words, as the kernel requires.

use std::collections::BTreeMap;
use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::path::PathBuf;

/// 4 KiB pages per 2 MiB span.
pub const PAGES_PER_SPAN: u64 = 512;
const PAGE: u64 = 4096;
const PRESENT: u64 = 1 << 63;
const SOFT_DIRTY: u64 = 1 << 55;
const PFN_MASK: u64 = (1 << 55) - 1;
/// kpageflags: a compound page's tail, and a transparent huge page.
const KPF_COMPOUND_TAIL: u64 = 1 << 16;
const KPF_THP: u64 = 1 << 22;
/// Pagemap entries read at once (512 KiB).
const CHUNK: u64 = 65_536;

/// Where the page-level files are.
#[derive(Debug, Clone)]
pub struct Files {
    pub pagemap: PathBuf,
    pub kpageflags: PathBuf,
    pub idle_bitmap: PathBuf,
}

impl Files {
    pub fn of(pid: i32) -> Files {
        Files {
            pagemap: format!("/proc/{pid}/pagemap").into(),
            kpageflags: "/proc/kpageflags".into(),
            idle_bitmap: "/sys/kernel/mm/page_idle/bitmap".into(),
        }
    }
}

/// One resident page: its virtual page number and its frame (`None` when
/// the kernel hides frames from this user).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Resident {
    pub vpage: u64,
    pub pfn: Option<u64>,
    /// Written since the soft-dirty bits were last cleared.
    pub soft_dirty: bool,
}

/// Calls `f(vpage, entry)` for every 4 KiB page of `[start, end)` with its
/// pagemap entry, read in chunks of [`CHUNK`] entries.
pub fn each_entry(pagemap: &File, start: u64, end: u64, mut f: impl FnMut(u64, u64)) -> io::Result<()> {
    let mut buf = vec![0u8; (CHUNK * 8) as usize];
    let mut vpage = start / PAGE;
    let last = end.div_ceil(PAGE);
    while vpage < last {
        let n = (last - vpage).min(CHUNK);
        let bytes = &mut buf[..(n * 8) as usize];
        pagemap.read_exact_at(bytes, vpage * 8)?;
        for (i, e) in bytes.chunks_exact(8).enumerate() {
            f(vpage + i as u64, u64::from_le_bytes(e.try_into().expect("8 bytes")));
        }
        vpage += n;
    }
    Ok(())
}

/// An entry's frame: `None` when the page is not present, or when the
/// kernel hides frames from this process (it reads zero then).
pub fn frame(entry: u64) -> Option<u64> {
    (entry & PRESENT != 0 && entry & PFN_MASK != 0).then_some(entry & PFN_MASK)
}

/// The resident pages of `[start, end)`, read from pagemap in chunks.
pub fn resident(pagemap: &File, start: u64, end: u64) -> io::Result<Vec<Resident>> {
    let mut out = Vec::new();
    each_entry(pagemap, start, end, |vpage, e| {
        if e & PRESENT != 0 {
            out.push(Resident { vpage, pfn: frame(e), soft_dirty: e & SOFT_DIRTY != 0 });
        }
    })?;
    Ok(out)
}

/// Per 2 MiB span (virtual address >> 21): resident pages, and pages
/// accessed in the interval where that is known.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SpanCounts {
    pub spans: BTreeMap<u64, (u32, u32)>,
    /// Whether the accessed counts were read (idle tracking and frames).
    pub accessed_known: bool,
    /// Resident pages whose soft-dirty bit is set.
    pub soft_dirty_pages: u64,
}

impl SpanCounts {
    pub fn resident_spans(&self) -> u64 {
        self.spans.len() as u64
    }

    /// Spans with a page accessed in the interval, where known.
    pub fn hot_spans(&self) -> Option<u64> {
        self.accessed_known.then(|| self.spans.values().filter(|c| c.1 > 0).count() as u64)
    }
}

/// The idle bitmap's word of `pfn` and the bit in it.
fn word_bit(pfn: u64) -> (u64, u64) {
    (pfn / 64, 1 << (pfn % 64))
}

/// Reads the words of the bitmap that hold `pfns`.
fn read_words(bitmap: &File, pfns: impl Iterator<Item = u64>) -> io::Result<BTreeMap<u64, u64>> {
    let mut words: BTreeMap<u64, u64> = pfns.map(|p| (word_bit(p).0, 0)).collect();
    for (w, v) in words.iter_mut() {
        let mut b = [0u8; 8];
        bitmap.read_exact_at(&mut b, w * 8)?;
        *v = u64::from_le_bytes(b);
    }
    Ok(words)
}

/// Marks `pfns` idle: only their bits are written as ones (a zero bit
/// changes nothing), so other frames in the same word are left alone.
pub fn mark_idle(bitmap: &File, pfns: &[u64]) -> io::Result<()> {
    let mut words: BTreeMap<u64, u64> = BTreeMap::new();
    for &p in pfns {
        let (w, bit) = word_bit(p);
        *words.entry(w).or_default() |= bit;
    }
    for (w, mask) in words {
        bitmap.write_all_at(&mask.to_le_bytes(), w * 8)?;
    }
    Ok(())
}

/// Which frames are THP tails (they take their head's accessed state):
/// `None` where kpageflags cannot be read.
fn tails(kpageflags: &File, pfns: &[u64]) -> Option<Vec<bool>> {
    pfns.iter()
        .map(|&p| {
            let mut b = [0u8; 8];
            kpageflags.read_exact_at(&mut b, p * 8).ok()?;
            let f = u64::from_le_bytes(b);
            Some(f & KPF_THP != 0 && f & KPF_COMPOUND_TAIL != 0)
        })
        .collect()
}

/// Counts `pages` per span; with `bitmap` (idle tracking), which were
/// accessed since [`mark_idle`] last marked them. A THP tail takes the
/// answer of the head before it (pages are read in virtual order, and a
/// huge page maps its frames in order).
pub fn count(pages: &[Resident], bitmap: Option<&File>, kpageflags: Option<&File>) -> io::Result<SpanCounts> {
    let pfns: Option<Vec<u64>> = pages.iter().map(|r| r.pfn).collect();
    let accessed: Option<Vec<bool>> = match (bitmap, &pfns) {
        (Some(b), Some(pfns)) if !pfns.is_empty() => {
            let words = read_words(b, pfns.iter().copied())?;
            let tail = kpageflags.and_then(|k| tails(k, pfns)).unwrap_or_else(|| vec![false; pfns.len()]);
            let mut head = false;
            let answers = pfns
                .iter()
                .zip(tail)
                .map(|(&p, is_tail)| {
                    if !is_tail {
                        let (w, bit) = word_bit(p);
                        head = words[&w] & bit == 0;
                    }
                    head
                })
                .collect();
            Some(answers)
        }
        _ => None,
    };
    let mut out = SpanCounts { accessed_known: accessed.is_some(), ..Default::default() };
    out.soft_dirty_pages = pages.iter().filter(|r| r.soft_dirty).count() as u64;
    for (i, r) in pages.iter().enumerate() {
        let c = out.spans.entry(r.vpage / PAGES_PER_SPAN).or_default();
        c.0 += 1;
        if accessed.as_ref().is_some_and(|a| a[i]) {
            c.1 += 1;
        }
    }
    Ok(out)
}

/// The frames of `pages` (none where hidden).
pub fn frames(pages: &[Resident]) -> Vec<u64> {
    pages.iter().filter_map(|r| r.pfn).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn file_of(words: &[u64]) -> (tempfile::NamedTempFile, File) {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        for w in words {
            f.write_all(&w.to_le_bytes()).unwrap();
        }
        f.flush().unwrap();
        let rw = std::fs::OpenOptions::new().read(true).write(true).open(f.path()).unwrap();
        (f, rw)
    }

    /// A fake pagemap of a mapping at 2 MiB - 8 KiB: two present pages in
    /// the first span (one with a hidden frame), a hole, three in the next.
    #[test]
    fn pagemap_entries_give_resident_pages_and_spans() {
        let base = (2 << 20) / PAGE - 2; // virtual page 510
        let mut entries = vec![0u64; base as usize];
        entries.extend([PRESENT | 100, PRESENT, 0, PRESENT | SOFT_DIRTY | 7, PRESENT | 8, PRESENT | SOFT_DIRTY | 9]);
        let (_keep, f) = file_of(&entries);
        let pages = resident(&f, base * PAGE, (base + 6) * PAGE).unwrap();
        assert_eq!(pages.iter().map(|r| r.vpage).collect::<Vec<_>>(), vec![510, 511, 513, 514, 515]);
        assert_eq!(pages[1].pfn, None, "a hidden frame reads 0");
        let c = count(&pages, None, None).unwrap();
        assert_eq!(c.spans.get(&0), Some(&(2, 0)));
        assert_eq!(c.spans.get(&1), Some(&(3, 0)));
        assert_eq!((c.resident_spans(), c.hot_spans()), (2, None));
        assert_eq!(c.soft_dirty_pages, 2, "bit 55: written since the last clear");
    }

    /// Through a fake bitmap: marking sets only our bits; a frame whose bit
    /// was cleared since (the kernel's answer to an access) is accessed;
    /// THP tails take their head's answer, where kpageflags says so.
    #[test]
    fn idle_bits_say_which_pages_were_accessed() {
        let (_b, bitmap) = file_of(&[0, 0, 0]);
        let pages: Vec<Resident> = [(0, 64), (1, 65), (512, 130), (513, 131), (514, 132)]
            .iter()
            .map(|&(v, p)| Resident { vpage: v, pfn: Some(p), soft_dirty: false })
            .collect();
        mark_idle(&bitmap, &frames(&pages)).unwrap();
        let mut w = [0u8; 8];
        bitmap.read_exact_at(&mut w, 8).unwrap();
        assert_eq!(u64::from_le_bytes(w), 0b11, "frames 64 and 65 only");
        // The program touches frame 65 and the THP whose head is 130; the
        // kernel clears their idle bits (tails always read 0).
        bitmap.write_all_at(&(0b01u64).to_le_bytes(), 8).unwrap();
        bitmap.write_all_at(&(0u64).to_le_bytes(), 16).unwrap();
        let mut flags = vec![0u64; 133];
        flags[131] = KPF_THP | KPF_COMPOUND_TAIL;
        flags[132] = KPF_THP | KPF_COMPOUND_TAIL;
        let (_k, kpf) = file_of(&flags);
        let c = count(&pages, Some(&bitmap), Some(&kpf)).unwrap();
        assert_eq!(c.spans.get(&0), Some(&(2, 1)));
        assert_eq!(c.spans.get(&1), Some(&(3, 3)));
        assert_eq!(c.hot_spans(), Some(2));
        // An untouched THP: its head stays idle and so do its tails.
        bitmap.write_all_at(&(1u64 << 2).to_le_bytes(), 16).unwrap();
        let c = count(&pages, Some(&bitmap), Some(&kpf)).unwrap();
        assert_eq!(c.spans.get(&1), Some(&(3, 0)));
        // Hidden frames: the accessed counts are not known.
        let hidden: Vec<Resident> = pages.iter().map(|r| Resident { pfn: None, ..*r }).collect();
        assert_eq!(count(&hidden, Some(&bitmap), None).unwrap().hot_spans(), None);
    }

    /// The live file of this process: the stack page under a local is
    /// resident, and only root sees its frame.
    #[test]
    fn this_process_has_its_stack_page_resident() {
        let x = [1u8; 64];
        let addr = std::hint::black_box(&x) as *const _ as u64;
        let f = File::open(Files::of(std::process::id() as i32).pagemap).unwrap();
        let pages = resident(&f, addr & !(PAGE - 1), (addr & !(PAGE - 1)) + PAGE).unwrap();
        assert_eq!(pages.len(), 1);
        // The kernel shows frame numbers to CAP_SYS_ADMIN alone (root in a
        // container may lack it).
        let status = std::fs::read_to_string("/proc/self/status").unwrap();
        let cap_eff = status.lines().find_map(|l| l.strip_prefix("CapEff:")).unwrap().trim();
        let admin = u64::from_str_radix(cap_eff, 16).unwrap() & (1 << 21) != 0;
        assert_eq!(pages[0].pfn.is_some(), admin, "{:?}", pages[0]);
    }
}
