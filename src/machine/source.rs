//! Where the fingerprint reads a machine from: the running machine (the
//! CPUID instruction, `/sys`, `/proc`), or a recording of one (a `cpuid -r`
//! dump and a copy of the same files under a folder). Both go through the
//! same parsing code, so a recording of a machine memperf has never run
//! on tests the fingerprint exactly as that machine would.
//!
//! A recording's folder holds `cpuid.txt` (the output of `cpuid -r`, or of
//! `memperf info --record`) and the files the fingerprint reads, at their
//! paths below `/`: `sys/devices/system/cpu/…`, `sys/kernel/mm/…`,
//! `proc/meminfo`, `proc/cpuinfo`, `proc/sys/kernel/{hostname,osrelease}`.

use raw_cpuid::{CpuId, CpuIdReader, CpuIdResult};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The machine to read.
#[derive(Clone)]
pub struct Source {
    /// Root of the file tree: `/` for this machine, a recording's folder.
    pub root: PathBuf,
    pub cpuid: CpuidSource,
    /// The running machine: probes that execute something (the PMU, the
    /// TSC's rate, the OS's support for vector state) are run only then.
    pub live: bool,
}

impl Source {
    /// This machine.
    pub fn live() -> Source {
        Source { root: PathBuf::from("/"), cpuid: CpuidSource::native(), live: true }
    }

    /// A recording: `dir/cpuid.txt` and the file tree under `dir`.
    pub fn recorded(dir: &Path) -> std::io::Result<Source> {
        let text = std::fs::read_to_string(dir.join("cpuid.txt"))?;
        Ok(Source { root: dir.to_path_buf(), cpuid: CpuidSource::parse(&text), live: false })
    }

    /// A path below the root (`sys/…`, `proc/…`).
    pub fn path(&self, rel: &str) -> PathBuf {
        self.root.join(rel.trim_start_matches('/'))
    }

    /// The file at `rel`, trimmed; `None` when missing or empty.
    pub fn read(&self, rel: &str) -> Option<String> {
        std::fs::read_to_string(self.path(rel)).ok().map(|s| s.trim().to_string()).filter(|s| !s.is_empty())
    }

    /// A CPUID reader over this source.
    pub fn cpuid(&self) -> CpuId<CpuidSource> {
        CpuId::with_cpuid_reader(self.cpuid.clone())
    }
}

/// Leaves whose sub-leaves enumerate structures: a sub-leaf a recording
/// lacks is past the last one (all zeros), not the same as sub-leaf 0.
const SUBLEAF_LEAVES: &[u32] = &[
    0x4,
    0x7,
    0xB,
    0xD,
    0xF,
    0x10,
    0x12,
    0x14,
    0x17,
    0x18,
    0x1B,
    0x1D,
    0x1E,
    0x1F,
    0x20,
    0x23,
    0x24,
    0x8000_001D,
    0x8000_0020,
    0x8000_0026,
];

/// CPUID results: the instruction itself, a recording, or nothing (an
/// architecture without CPUID).
#[derive(Clone)]
pub enum CpuidSource {
    Native,
    Recorded(Arc<BTreeMap<(u32, u32), [u32; 4]>>),
    Absent,
}

impl CpuidSource {
    /// The instruction where this architecture has it.
    pub fn native() -> CpuidSource {
        if cfg!(target_arch = "x86_64") {
            CpuidSource::Native
        } else {
            CpuidSource::Absent
        }
    }

    /// Parses `cpuid -r` output: the first CPU's lines
    /// `   0x00000004 0x01: eax=0x… ebx=0x… ecx=0x… edx=0x…`.
    pub fn parse(text: &str) -> CpuidSource {
        let mut leaves = BTreeMap::new();
        let mut cpus = 0;
        for line in text.lines() {
            let t = line.trim();
            if t.starts_with("CPU ") {
                cpus += 1;
                if cpus > 1 {
                    break;
                }
                continue;
            }
            if let Some(entry) = parse_line(t) {
                leaves.entry((entry.0, entry.1)).or_insert(entry.2);
            }
        }
        CpuidSource::Recorded(Arc::new(leaves))
    }

    /// The raw dump of this source, in `cpuid -r`'s format (for
    /// `memperf info --record`): every basic, hypervisor and extended leaf
    /// up to its maximum, sub-leaves until the structure they enumerate ends.
    pub fn dump(&self) -> String {
        let mut out = String::from("CPU 0:\n");
        let mut line = |leaf: u32, sub: u32| {
            let r = self.cpuid2(leaf, sub);
            out.push_str(&format!(
                "   {leaf:#010x} {sub:#04x}: eax={:#010x} ebx={:#010x} ecx={:#010x} edx={:#010x}\n",
                r.eax, r.ebx, r.ecx, r.edx
            ));
            r
        };
        for base in [0u32, 0x4000_0000, 0x8000_0000] {
            let max = self.cpuid1(base).eax;
            if max < base || max - base > 0xFF {
                line(base, 0);
                continue;
            }
            for leaf in base..=max {
                if !SUBLEAF_LEAVES.contains(&leaf) {
                    line(leaf, 0);
                    continue;
                }
                // Leaf 0xD's sub-leaves are sparse (one per state
                // component): every non-zero one; the others end at the
                // first empty sub-leaf.
                for sub in 0..64 {
                    let r = self.cpuid2(leaf, sub);
                    let empty = r.eax == 0 && r.ebx == 0 && r.ecx == 0 && r.edx == 0;
                    if sub > 0 && empty && leaf != 0xD {
                        break;
                    }
                    if sub == 0 || !empty {
                        line(leaf, sub);
                    }
                }
            }
        }
        out
    }
}

/// `0x00000004 0x01: eax=0x04000122 ebx=… ecx=… edx=…` → (leaf, sub, regs).
fn parse_line(t: &str) -> Option<(u32, u32, [u32; 4])> {
    let (head, regs) = t.split_once(':')?;
    let mut h = head.split_whitespace();
    let hex = |s: &str| u32::from_str_radix(s.trim().trim_start_matches("0x"), 16).ok();
    let leaf = hex(h.next()?)?;
    let sub = hex(h.next()?)?;
    let mut out = [0u32; 4];
    for (i, name) in ["eax=", "ebx=", "ecx=", "edx="].iter().enumerate() {
        let v = regs.split_whitespace().find_map(|w| w.strip_prefix(name))?;
        out[i] = hex(v)?;
    }
    Some((leaf, sub, out))
}

impl CpuIdReader for CpuidSource {
    fn cpuid2(&self, eax: u32, ecx: u32) -> CpuIdResult {
        let zero = CpuIdResult { eax: 0, ebx: 0, ecx: 0, edx: 0 };
        match self {
            #[cfg(target_arch = "x86_64")]
            CpuidSource::Native => raw_cpuid::native_cpuid::cpuid_count(eax, ecx),
            #[cfg(not(target_arch = "x86_64"))]
            CpuidSource::Native => zero,
            CpuidSource::Absent => zero,
            CpuidSource::Recorded(map) => {
                let sub = if SUBLEAF_LEAVES.contains(&eax) { ecx } else { 0 };
                map.get(&(eax, sub)).map_or(zero, |r| CpuIdResult { eax: r[0], ebx: r[1], ecx: r[2], edx: r[3] })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DUMP: &str = "CPU 0:\n   0x00000000 0x00: eax=0x00000024 ebx=0x756e6547 ecx=0x6c65746e edx=0x49656e69\n   \
                        0x00000004 0x01: eax=0x04000122 ebx=0x03c0003f ecx=0x0000003f edx=0x00000000\n\
                        CPU 1:\n   0x00000000 0x00: eax=0x00000001 ebx=0 ecx=0 edx=0\n";

    #[test]
    fn a_recorded_dump_answers_like_the_instruction() {
        let s = CpuidSource::parse(DUMP);
        assert_eq!(s.cpuid2(0, 0).eax, 0x24, "CPU 0's lines, not CPU 1's");
        assert_eq!(s.cpuid2(0, 5).eax, 0x24, "leaf 0 has no sub-leaves: any ECX reads sub-leaf 0");
        assert_eq!(s.cpuid2(4, 1).ebx, 0x03c0_003f);
        assert_eq!(s.cpuid2(4, 2).eax, 0, "a sub-leaf past the recorded ones ends the list");
        assert_eq!(s.cpuid2(0x8000_0000, 0).eax, 0, "a leaf the recording lacks is zeros");
        let id = CpuId::with_cpuid_reader(s).get_vendor_info().unwrap();
        assert_eq!(id.as_str(), "GenuineIntel");
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn this_cpus_dump_reads_back_identically() {
        let live = CpuidSource::native();
        let again = CpuidSource::parse(&live.dump());
        for leaf in [0u32, 1, 4, 7, 0x8000_0000, 0x8000_0001, 0x8000_0006] {
            for sub in 0..3 {
                let (a, b) = (live.cpuid2(leaf, sub), again.cpuid2(leaf, sub));
                // Leaf 1 EBX and leaf 0xB EDX hold the APIC id of the CPU
                // that ran the instruction; the rest is the same everywhere.
                if leaf != 1 {
                    assert_eq!((a.eax, a.ebx, a.ecx, a.edx), (b.eax, b.ebx, b.ecx, b.edx), "{leaf:#x}/{sub}");
                }
            }
        }
    }
}
