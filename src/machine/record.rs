//! `memperf info --record DIR`: a recording of this machine — its CPUID
//! dump and every file the fingerprint reads, at their paths — that
//! [`super::source::Source::recorded`] reads back through the same code,
//! so a machine can be tested (and a bug report reproduced) elsewhere.

use super::source::CpuidSource;
use crate::error::{Error, Result};
use std::path::{Path, PathBuf};

/// Files read for the fingerprint, below `/` (`*` is every match of one
/// path component).
const FILES: &[&str] = &[
    "sys/devices/system/cpu/online",
    "sys/devices/system/cpu/cpu*/cache/index*/level",
    "sys/devices/system/cpu/cpu*/cache/index*/type",
    "sys/devices/system/cpu/cpu*/cache/index*/size",
    "sys/devices/system/cpu/cpu*/cache/index*/coherency_line_size",
    "sys/devices/system/cpu/cpu*/cache/index*/ways_of_associativity",
    "sys/devices/system/cpu/cpu*/cache/index*/number_of_sets",
    "sys/devices/system/cpu/cpu*/cache/index*/shared_cpu_list",
    "sys/devices/system/cpu/cpu*/regs/identification/midr_el1",
    "sys/devices/system/cpu/cpu*/topology/physical_package_id",
    "sys/devices/system/cpu/cpu*/topology/core_id",
    "sys/devices/system/cpu/cpu*/topology/thread_siblings_list",
    "sys/devices/system/cpu/cpu0/cpufreq/scaling_governor",
    "sys/devices/system/cpu/cpufreq/boost",
    "sys/devices/system/cpu/intel_pstate/no_turbo",
    "sys/devices/system/cpu/smt/control",
    "sys/devices/system/cpu/vulnerabilities/meltdown",
    "sys/devices/system/node/online",
    "sys/kernel/mm/hugepages/hugepages-*/nr_hugepages",
    "sys/kernel/mm/hugepages/hugepages-*/free_hugepages",
    "sys/kernel/mm/hugepages/hugepages-*/resv_hugepages",
    "sys/kernel/mm/hugepages/hugepages-*/surplus_hugepages",
    "sys/kernel/mm/transparent_hugepage/enabled",
    "sys/kernel/mm/transparent_hugepage/defrag",
    "proc/meminfo",
    "proc/cpuinfo",
    "proc/cmdline",
    "proc/sys/kernel/hostname",
    "proc/sys/kernel/osrelease",
];

/// Every existing path matching `pattern` below `root`.
fn expand(root: &Path, pattern: &str) -> Vec<PathBuf> {
    let mut paths = vec![PathBuf::new()];
    for part in pattern.split('/') {
        let mut next = Vec::new();
        for p in &paths {
            if let Some((pre, post)) = part.split_once('*') {
                let Ok(entries) = std::fs::read_dir(root.join(p)) else { continue };
                let mut names: Vec<String> = entries
                    .filter_map(|e| e.ok()?.file_name().into_string().ok())
                    .filter(|n| n.starts_with(pre) && n.ends_with(post) && n.len() >= pre.len() + post.len())
                    .collect();
                names.sort();
                next.extend(names.into_iter().map(|n| p.join(n)));
            } else {
                next.push(p.join(part));
            }
        }
        paths = next;
    }
    paths.into_iter().filter(|p| root.join(p).is_file()).collect()
}

/// Writes the recording of the machine under `root` (`/` for this one) into
/// `dir`: `cpuid.txt`, `arch` and the files; returns how many files.
pub fn record(root: &Path, cpuid: &CpuidSource, dir: &Path) -> Result<usize> {
    let io = |what: &Path, e| Error::io(format!("recording into {}", what.display()), e);
    std::fs::create_dir_all(dir).map_err(|e| io(dir, e))?;
    crate::sink::write(&dir.join("cpuid.txt"), cpuid.dump().as_bytes())?;
    crate::sink::write(&dir.join("arch"), format!("{}\n", std::env::consts::ARCH).as_bytes())?;
    let mut n = 2;
    if let Some(midr) = super::arm::own_midr_register() {
        // Where the kernel exports no MIDR in sysfs (or under emulation),
        // the register as this CPU answers it.
        crate::sink::write(&dir.join("midr_el1"), format!("{midr:#018x}\n").as_bytes())?;
        n += 1;
    }
    for rel in FILES.iter().flat_map(|p| expand(root, p)) {
        // Unreadable files (permissions) are left out, as the fingerprint
        // would find them missing.
        let Ok(bytes) = std::fs::read(root.join(&rel)) else { continue };
        let to = dir.join(&rel);
        if let Some(parent) = to.parent() {
            std::fs::create_dir_all(parent).map_err(|e| io(parent, e))?;
        }
        std::fs::write(&to, bytes).map_err(|e| io(&to, e))?;
        n += 1;
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::source::Source;

    #[test]
    fn patterns_expand_to_existing_files_only() {
        let d = tempfile::tempdir().unwrap();
        for f in ["a/cpu0/x", "a/cpu1/x", "a/cpufreq/x", "a/node0/x"] {
            std::fs::create_dir_all(d.path().join(f).parent().unwrap()).unwrap();
            std::fs::write(d.path().join(f), "1").unwrap();
        }
        let got = expand(d.path(), "a/cpu*/x");
        assert_eq!(got, vec![PathBuf::from("a/cpu0/x"), PathBuf::from("a/cpu1/x"), PathBuf::from("a/cpufreq/x")]);
        assert!(expand(d.path(), "a/cpu0/y").is_empty());
    }

    /// This machine, recorded and read back, is the same machine (less
    /// what only the live machine can say: its PMU and TSC rate).
    #[test]
    fn a_recording_of_this_machine_reads_back_as_this_machine() {
        let d = tempfile::tempdir().unwrap();
        let live = Source::live();
        assert!(record(&live.root, &live.cpuid, d.path()).unwrap() > 10);
        let again = crate::machine::read(&Source::recorded(d.path()).unwrap());
        let here = crate::machine::collect();
        assert_eq!(again.caches, here.caches);
        assert_eq!(again.tlbs, here.tlbs);
        assert_eq!(again.cpu.identity.vendor, here.cpu.identity.vendor);
        assert_eq!(
            (again.cpu.identity.family, again.cpu.identity.model),
            (here.cpu.identity.family, here.cpu.identity.model)
        );
        assert_eq!(again.cpu.logical_cpus, here.cpu.logical_cpus);
        assert_eq!(again.thp, here.thp);
        assert_eq!(again.hostname, here.hostname);
        assert_eq!(again.prefetch_instructions, here.prefetch_instructions);
    }
}
