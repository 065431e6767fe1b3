//! What the kernel tells about the machine: caches and topology from sysfs,
//! memory from /proc/meminfo, huge-page pools, THP mode, kernel release.
//! Every reader takes the root path so tests can point it at a fixture tree.

pub use crate::memory::meminfo;
use crate::units::Bytes;
pub use crate::units::{count_cpu_list, cpu_list};
pub use memperf_model::machine::sysfs::{HugePagePool, SysfsCache, ThpSettings};
use std::fs;
use std::path::Path;

fn read_trimmed(path: &Path) -> Option<String> {
    fs::read_to_string(path).ok().map(|s| s.trim().to_string())
}

/// Parses sysfs sizes such as `48K`, `2048K`, `107520K`, `1M`.
pub fn parse_sysfs_size(text: &str) -> Option<Bytes> {
    let t = text.trim();
    let (num, mult) = match t.chars().last()? {
        'K' => (&t[..t.len() - 1], 1024),
        'M' => (&t[..t.len() - 1], 1024 * 1024),
        'G' => (&t[..t.len() - 1], 1024 * 1024 * 1024),
        _ => (t, 1),
    };
    // A crafted tree's `99999999999999999999K` is no size, not a panic.
    num.parse::<u64>().ok()?.checked_mul(mult).map(Bytes)
}

/// Caches of cpu0 under `root` (normally `/sys/devices/system/cpu`).
pub fn caches(root: &Path) -> Vec<SysfsCache> {
    let dir = root.join("cpu0/cache");
    let mut out = Vec::new();
    for index in 0..16 {
        let d = dir.join(format!("index{index}"));
        let (Some(level), Some(kind), Some(size)) = (
            read_trimmed(&d.join("level")).and_then(|s| s.parse().ok()),
            read_trimmed(&d.join("type")),
            read_trimmed(&d.join("size")).and_then(|s| parse_sysfs_size(&s)),
        ) else {
            continue;
        };
        let shared = read_trimmed(&d.join("shared_cpu_list")).unwrap_or_default();
        out.push(SysfsCache {
            level,
            kind,
            size_bytes: size,
            line_bytes: read_trimmed(&d.join("coherency_line_size")).and_then(|s| s.parse().ok()).unwrap_or(64),
            ways: read_trimmed(&d.join("ways_of_associativity")).and_then(|s| s.parse().ok()),
            sets: read_trimmed(&d.join("number_of_sets")).and_then(|s| s.parse().ok()),
            shared_by_cpus: count_cpu_list(&shared).max(1),
            shared_cpu_list: shared,
        });
    }
    out
}

/// Logical CPUs online, distinct physical cores, distinct sockets.
pub fn topology(root: &Path) -> (usize, usize, usize) {
    let online = read_trimmed(&root.join("online")).map(|s| count_cpu_list(&s)).unwrap_or(0);
    let mut cores = std::collections::BTreeSet::new();
    let mut sockets = std::collections::BTreeSet::new();
    for cpu in 0..online.max(1) * 4 {
        let t = root.join(format!("cpu{cpu}/topology"));
        let pkg = read_trimmed(&t.join("physical_package_id"));
        let core = read_trimmed(&t.join("core_id"));
        if let (Some(p), Some(c)) = (pkg, core) {
            sockets.insert(p.clone());
            cores.insert((p, c));
        }
    }
    let logical = online.max(1);
    (logical, cores.len().max(1), sockets.len().max(1))
}

/// Hugetlb pools under `root` (normally `/sys/kernel/mm/hugepages`), by size.
pub fn hugepage_pools(root: &Path) -> Vec<HugePagePool> {
    let Ok(entries) = fs::read_dir(root) else { return Vec::new() };
    let mut pools: Vec<HugePagePool> = entries
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            let kb: u64 = name.strip_prefix("hugepages-")?.strip_suffix("kB")?.parse().ok()?;
            let num = |f: &str| read_trimmed(&e.path().join(f)).and_then(|s| s.parse().ok()).unwrap_or(0);
            Some(HugePagePool {
                page_size_bytes: Bytes(kb * 1024),
                total: num("nr_hugepages"),
                free: num("free_hugepages"),
                reserved: num("resv_hugepages"),
                surplus: num("surplus_hugepages"),
            })
        })
        .collect();
    pools.sort_by_key(|p| p.page_size_bytes);
    pools
}

/// The selected word of a sysfs choice line such as `always [madvise] never`.
pub fn selected_choice(line: &str) -> Option<String> {
    let start = line.find('[')?;
    let end = line[start..].find(']')? + start;
    Some(line[start + 1..end].to_string())
}

pub fn thp(root: &Path) -> ThpSettings {
    let get =
        |f: &str| read_trimmed(&root.join(f)).and_then(|s| selected_choice(&s)).unwrap_or_else(|| "unavailable".into());
    ThpSettings { enabled: get("enabled"), defrag: get("defrag") }
}

pub fn hostname() -> String {
    read_trimmed(Path::new("/proc/sys/kernel/hostname")).unwrap_or_else(|| "unknown".into())
}

pub fn kernel_release() -> String {
    read_trimmed(Path::new("/proc/sys/kernel/osrelease")).unwrap_or_else(|| "unknown".into())
}

/// The frequency /proc/cpuinfo reports for the first CPU, in Hz.
pub fn cpuinfo_mhz(text: &str) -> Option<f64> {
    text.lines()
        .find(|l| l.starts_with("cpu MHz"))
        .and_then(|l| l.split(':').nth(1))
        .and_then(|v| v.trim().parse::<f64>().ok())
        .map(|mhz| mhz * 1e6)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sysfs_sizes_and_cpu_lists() {
        assert_eq!(parse_sysfs_size("48K"), Some(Bytes(48 * 1024)));
        assert_eq!(parse_sysfs_size("107520K"), Some(Bytes(107520 * 1024)));
        assert_eq!(parse_sysfs_size("1M"), Some(Bytes(1 << 20)));
        assert_eq!(count_cpu_list("0-3,8,10-11"), 7);
        assert_eq!(count_cpu_list("0"), 1);
        assert_eq!(count_cpu_list(""), 0);
    }

    #[test]
    fn fixture_tree_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let idx = dir.path().join("cpu0/cache/index3");
        fs::create_dir_all(&idx).unwrap();
        for (f, v) in [
            ("level", "3"),
            ("type", "Unified"),
            ("size", "32768K"),
            ("coherency_line_size", "64"),
            ("shared_cpu_list", "0-15"),
        ] {
            fs::write(idx.join(f), v).unwrap();
        }
        let c = caches(dir.path());
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].size_bytes, Bytes(32 << 20));
        assert_eq!(c[0].shared_by_cpus, 16);

        let hp = dir.path().join("hugepages/hugepages-2048kB");
        fs::create_dir_all(&hp).unwrap();
        for (f, v) in
            [("nr_hugepages", "512"), ("free_hugepages", "500"), ("resv_hugepages", "10"), ("surplus_hugepages", "0")]
        {
            fs::write(hp.join(f), v).unwrap();
        }
        let pools = hugepage_pools(&dir.path().join("hugepages"));
        assert_eq!(
            pools,
            vec![HugePagePool { page_size_bytes: Bytes(2 << 20), total: 512, free: 500, reserved: 10, surplus: 0 }]
        );
        assert_eq!(pools[0].available(), 490);
    }

    #[test]
    fn thp_choice_and_meminfo() {
        assert_eq!(selected_choice("always [madvise] never").as_deref(), Some("madvise"));
        assert_eq!(selected_choice("always defer"), None);
        let (t, a) = meminfo("MemTotal:       24576000 kB\nMemFree: 1 kB\nMemAvailable:   20000000 kB\n");
        assert_eq!(t, Some(Bytes(24576000 * 1024)));
        assert_eq!(a, Some(Bytes(20000000 * 1024)));
        assert_eq!(cpuinfo_mhz("model\t: 1\ncpu MHz\t\t: 2000.000\n"), Some(2e9));
    }
}
