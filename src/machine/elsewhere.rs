//! The fingerprint of a machine memperf is not running on, from its saved
//! /proc and /sys ([`super::tree::Tree`]): its architecture, its kinds of
//! core (by MIDR part on Arm, by the kernel's `cpu_core`/`cpu_atom` on x86,
//! else by cache geometry) with each kind's caches as the kernel reported
//! them, its huge page sizes, SVE and PMUs. What the tree lacks reads "not
//! reported"; an architecture memperf does not run on is refused.

use super::midr::Midr;
use super::tree::Tree;
use crate::error::{Error, Result};
use std::collections::BTreeMap;

/// The architectures a saved machine may be, from its files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Arch {
    X86_64,
    Aarch64,
    /// Named, and refused.
    Other(String),
}

/// One kind of core: its name, and its CPUs grouped by the caches the
/// kernel reported for them (one group per cluster whose shared caches
/// differ).
#[derive(Debug, Clone, PartialEq)]
pub struct CoreKind {
    pub name: String,
    /// (CPUs, their caches: "L1d 64KiB", …; empty: not reported).
    pub clusters: Vec<(Vec<usize>, Vec<String>)>,
}

impl CoreKind {
    pub fn cpus(&self) -> Vec<usize> {
        let mut v: Vec<usize> = self.clusters.iter().flat_map(|c| c.0.clone()).collect();
        v.sort_unstable();
        v
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct SavedMachine {
    pub arch: Arch,
    pub model: Option<String>,
    pub kinds: Vec<CoreKind>,
    pub huge_pages: Vec<String>,
    pub sve: Option<bool>,
    pub pmus: Option<Vec<String>>,
}

/// The most CPUs a saved tree may name.
const CPUS_MAX: usize = 1 << 16;

impl SavedMachine {
    pub fn read(tree: &Tree) -> Result<SavedMachine> {
        let cpuinfo = tree.read("proc/cpuinfo").unwrap_or_default();
        let arch = arch(tree.read("arch").as_deref(), &cpuinfo)?;
        if let Arch::Other(name) = &arch {
            return Err(Error::usage(format!(
                "the saved machine is {name}: memperf reads x86-64 and aarch64 machines only"
            )));
        }
        let blocks = processor_blocks(&cpuinfo);
        let cpus = cpus(tree, blocks.len());
        let kinds = kinds(
            cpus.iter().map(|&cpu| (cpu, kind_of(tree, &arch, cpu, blocks.get(&cpu)), caches(tree, cpu, cpus.len()))),
        );
        let features = blocks.values().next().and_then(|b| field(b, &["Features", "flags"])).unwrap_or_default();
        Ok(SavedMachine {
            model: blocks.values().next().and_then(|b| field(b, &["model name"])),
            sve: (arch == Arch::Aarch64 && !features.is_empty())
                .then(|| features.split_whitespace().any(|f| f == "sve")),
            huge_pages: huge_pages(tree),
            pmus: pmus(tree),
            arch,
            kinds,
        })
    }
}

/// A kind's CPUs by their caches.
type Clusters = BTreeMap<Vec<String>, Vec<usize>>;

/// CPUs with their kind's name and caches, grouped into kinds: by name
/// and by their private caches (all but the last level reported), which
/// tell apart cores the tree names alike (an x86 hybrid without
/// `cpu_core`/`cpu_atom`); within a kind, by all their caches.
fn kinds(cpus: impl Iterator<Item = (usize, String, Vec<String>)>) -> Vec<CoreKind> {
    let mut by_kind: BTreeMap<(String, Vec<String>), Clusters> = BTreeMap::new();
    for (cpu, name, caches) in cpus {
        let last = caches.iter().filter_map(|c| c.get(1..2)).max().map(str::to_string);
        let private: Vec<String> = caches.iter().filter(|c| c.get(1..2).map(str::to_string) != last).cloned().collect();
        by_kind.entry((name, private)).or_default().entry(caches).or_default().push(cpu);
    }
    let named_twice = |n: &str| by_kind.keys().filter(|k| k.0 == n).count() > 1;
    let mut out: Vec<CoreKind> = by_kind
        .iter()
        .map(|((name, private), clusters)| CoreKind {
            name: if named_twice(name) { format!("{name} with {}", private.join(", ")) } else { name.clone() },
            clusters: clusters.iter().map(|(c, cpus)| (cpus.clone(), c.clone())).collect(),
        })
        .collect();
    out.sort_by_key(|k| k.cpus().first().copied());
    out
}

/// The architecture from a recording's `arch` file, else /proc/cpuinfo.
pub(crate) fn arch(recorded: Option<&str>, cpuinfo: &str) -> Result<Arch> {
    match recorded {
        Some("x86_64") => return Ok(Arch::X86_64),
        Some("aarch64") => return Ok(Arch::Aarch64),
        Some(other) => {
            return Ok(Arch::Other(format!("a {} machine (from its recording)", crate::terminal::name(other))))
        }
        None => {}
    }
    let has = |k: &str| cpuinfo.lines().any(|l| l.trim_start().starts_with(k));
    let value =
        |k: &str| cpuinfo.lines().find(|l| l.starts_with(k)).and_then(|l| l.split_once(':')).map(|v| v.1.trim());
    Ok(if cpuinfo.contains("IBM/S390") {
        Arch::Other("an IBM z (s390x) machine (from proc/cpuinfo)".into())
    } else if value("isa").is_some_and(|i| i.starts_with("rv")) {
        Arch::Other("a RISC-V machine (from proc/cpuinfo)".into())
    } else if value("cpu").is_some_and(|c| c.contains("POWER")) || has("platform") {
        Arch::Other("a POWER machine (from proc/cpuinfo)".into())
    } else if has("CPU implementer") {
        match value("CPU architecture").and_then(|a| a.parse::<u32>().ok()) {
            Some(a) if a >= 8 => Arch::Aarch64,
            _ => Arch::Other("a 32-bit Arm machine (from proc/cpuinfo)".into()),
        }
    } else if has("vendor_id") && has("flags") {
        Arch::X86_64
    } else if cpuinfo.is_empty() {
        return Err(Error::usage("the saved tree holds no proc/cpuinfo (nor a recording's arch): not a saved machine"));
    } else {
        Arch::Other("a machine of an architecture memperf does not know (from proc/cpuinfo)".into())
    })
}

/// /proc/cpuinfo's blocks by processor number.
pub(crate) fn processor_blocks(cpuinfo: &str) -> BTreeMap<usize, String> {
    let mut out = BTreeMap::new();
    for block in cpuinfo.split("\n\n") {
        let n = field(block, &["processor"]).and_then(|p| p.parse::<usize>().ok()).filter(|&n| n < CPUS_MAX);
        if let Some(n) = n {
            out.insert(n, block.to_string());
        }
    }
    out
}

/// The value of the first of `keys` in a cpuinfo block.
pub(crate) fn field(block: &str, keys: &[&str]) -> Option<String> {
    block.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        keys.contains(&k.trim()).then(|| crate::terminal::name(v.trim()))
    })
}

/// The CPUs the tree's sysfs names, else cpuinfo's count.
fn cpus(tree: &Tree, counted: usize) -> Vec<usize> {
    let mut v: Vec<usize> = tree
        .list("sys/devices/system/cpu")
        .iter()
        .filter_map(|n| n.strip_prefix("cpu")?.parse::<usize>().ok())
        .filter(|&n| n < CPUS_MAX)
        .collect();
    v.sort_unstable();
    if v.is_empty() {
        v = (0..counted.min(CPUS_MAX)).collect();
    }
    v
}

/// The kind of `cpu`: its MIDR on aarch64, its x86 core type where the
/// kernel says, else "cores" (told apart by their caches).
fn kind_of(tree: &Tree, arch: &Arch, cpu: usize, block: Option<&String>) -> String {
    if *arch == Arch::Aarch64 {
        let reg = tree.read(&format!("sys/devices/system/cpu/cpu{cpu}/regs/identification/midr_el1"));
        let midr = reg.as_deref().and_then(Midr::from_register).or_else(|| {
            let b = block?;
            let num = |k: &str| u32::from_str_radix(field(b, &[k])?.trim_start_matches("0x"), 16).ok();
            Some(Midr { implementer: num("CPU implementer")?, part: num("CPU part")?, variant: 0, revision: 0 })
        });
        return midr.map_or_else(|| "cores of an unreported kind (no MIDR in the tree)".into(), |m| m.describe());
    }
    for (dir, name) in [("cpu_core", "performance cores (cpu_core)"), ("cpu_atom", "efficiency cores (cpu_atom)")] {
        if tree.read(&format!("sys/devices/{dir}/cpus")).is_some_and(|l| in_cpu_list(&l, cpu)) {
            return name.into();
        }
    }
    "cores".into()
}

/// Whether `cpu` is in a list such as `0-3,8`, read without expanding it
/// (a crafted `0-18446744073709551615` costs nothing).
fn in_cpu_list(list: &str, cpu: usize) -> bool {
    list.split(',').map(str::trim).any(|p| match p.split_once('-') {
        Some((a, b)) => matches!((a.parse::<usize>(), b.parse::<usize>()), (Ok(a), Ok(b)) if (a..=b).contains(&cpu)),
        None => p.parse::<usize>() == Ok(cpu),
    })
}

/// `cpu`'s caches as the kernel reported them ("L2 1MiB"), each checked
/// by the same rules as this machine's claims (`machine::claims`): an
/// implausible one says why ("L3 480MiB (implausible: …)").
fn caches(tree: &Tree, cpu: usize, logical_cpus: usize) -> Vec<String> {
    let base = format!("sys/devices/system/cpu/cpu{cpu}/cache");
    let mut lower: Option<crate::units::Bytes> = None;
    let mut out = Vec::new();
    for i in tree.list(&base).iter().filter(|n| n.starts_with("index")) {
        let at = |f: &str| tree.read(&format!("{base}/{i}/{f}"));
        let Some(level) = at("level").and_then(|l| l.parse::<u8>().ok()).filter(|l| (1..=8).contains(l)) else {
            continue;
        };
        let kind = at("type").unwrap_or_default();
        let short = match kind.as_str() {
            "Data" => "d",
            "Instruction" => "i",
            _ => "",
        };
        let Some(size) =
            at("size").as_deref().and_then(super::sysfs::parse_sysfs_size).filter(|b| b.0 > 0 && b.0 < 1 << 44)
        else {
            let said = at("size")
                .map_or_else(|| "size not reported".into(), |t| format!("{} (not a size)", crate::terminal::name(&t)));
            out.push(format!("L{level}{short} {said}"));
            continue;
        };
        let num = |f: &str| at(f).and_then(|v| v.parse::<u64>().ok());
        let claim = super::Cache {
            level,
            kind: kind.clone(),
            size_bytes: size,
            line_bytes: num("coherency_line_size").unwrap_or(64),
            ways: num("ways_of_associativity"),
            sets: num("number_of_sets"),
            shared_by_cpus: at("shared_cpu_list").map_or(1, |l| cpu_count(&l)),
            cpuid_size_bytes: None,
            implausible: Vec::new(),
        };
        let problems =
            super::claims::cache_problems(&claim, None, logical_cpus, lower.filter(|_| kind != "Instruction"));
        if kind != "Instruction" {
            lower = Some(size);
        }
        out.push(match problems.first() {
            None => format!("L{level}{short} {size}"),
            Some(why) => format!("L{level}{short} {size} (implausible: {})", crate::terminal::one_line(why)),
        });
    }
    out
}

/// CPUs in a list such as `0-3,8`, counted without expanding it.
fn cpu_count(list: &str) -> usize {
    list.split(',')
        .map(str::trim)
        .map(|p| match p.split_once('-') {
            Some((a, b)) => match (a.parse::<usize>(), b.parse::<usize>()) {
                (Ok(a), Ok(b)) if a <= b => (b - a).saturating_add(1),
                _ => 0,
            },
            None => usize::from(p.parse::<usize>().is_ok()),
        })
        .fold(0usize, usize::saturating_add)
        .max(1)
}

/// The huge page sizes the tree's kernel offered.
fn huge_pages(tree: &Tree) -> Vec<String> {
    let mut kib: Vec<u64> = tree
        .list("sys/kernel/mm/hugepages")
        .iter()
        .filter_map(|n| n.strip_prefix("hugepages-")?.strip_suffix("kB")?.parse::<u64>().ok())
        .filter(|&k| k > 0 && k < 1 << 40)
        .collect();
    kib.sort_unstable();
    kib.into_iter().map(|k| crate::units::Bytes(k << 10).to_string()).collect()
}

/// The PMUs the tree's kernel exposed, where the tree saved them.
fn pmus(tree: &Tree) -> Option<Vec<String>> {
    let all = tree.list("sys/bus/event_source/devices");
    (!all.is_empty()).then(|| all.into_iter().map(|n| crate::terminal::name(&n)).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_architecture_comes_from_cpuinfo() {
        assert_eq!(arch(None, "vendor_id : GenuineIntel\nflags : fpu lm").unwrap(), Arch::X86_64);
        assert_eq!(arch(None, "CPU implementer\t: 0x41\nCPU architecture: 8").unwrap(), Arch::Aarch64);
        assert!(
            matches!(arch(None, "CPU implementer\t: 0x41\nCPU architecture: 7").unwrap(), Arch::Other(s) if s.contains("32-bit Arm"))
        );
        assert!(matches!(arch(None, "vendor_id       : IBM/S390").unwrap(), Arch::Other(s) if s.contains("s390x")));
        assert!(matches!(arch(None, "cpu\t\t: POWER7 (architected)").unwrap(), Arch::Other(s) if s.contains("POWER")));
        assert!(arch(None, "").is_err());
        assert_eq!(arch(Some("aarch64"), "").unwrap(), Arch::Aarch64);
    }

    #[test]
    fn kinds_are_told_apart_by_name_and_private_caches() {
        let c = |l: &[&str]| l.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let x = "Arm Cortex-X925".to_string();
        let k = kinds(
            [
                (0, x.clone(), c(&["L1d 64KiB", "L2 2MiB", "L3 8MiB"])),
                (1, x.clone(), c(&["L1d 64KiB", "L2 2MiB", "L3 16MiB"])),
                (2, "cores".into(), c(&["L1d 48KiB", "L2 1.25MiB", "L3 24MiB"])),
                (3, "cores".into(), c(&["L1d 32KiB", "L2 2MiB", "L3 24MiB"])),
            ]
            .into_iter(),
        );
        assert_eq!(k.len(), 3, "{k:?}");
        assert_eq!((k[0].name.as_str(), k[0].clusters.len()), ("Arm Cortex-X925", 2));
        assert_eq!(k[1].name, "cores with L1d 48KiB, L2 1.25MiB");
        assert_eq!(cpu_count("0-3,8"), 5);
        assert_eq!(cpu_count("0-18446744073709551615"), usize::MAX);
    }

    #[test]
    fn cpu_lists_are_read_without_expanding() {
        assert!(in_cpu_list("0-3,8", 8) && in_cpu_list("0-3,8", 2) && !in_cpu_list("0-3,8", 5));
        assert!(in_cpu_list("0-18446744073709551615", 7));
        assert!(!in_cpu_list("x,3-1,", 2));
    }
}
