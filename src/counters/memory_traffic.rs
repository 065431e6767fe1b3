//! What the memory controllers themselves count: the kernel's
//! memory-controller PMUs (Intel's `uncore_imc_*`, with their named
//! `cas_count_read` and `cas_count_write` events, scaled to bytes by the
//! event's own `.scale` and `.unit` files), opened system-wide on the CPU
//! each PMU's `cpumask` names. Where no such PMU exists, or its events have
//! no names memperf knows (AMD's data fabric, Arm's CMN), or it cannot be
//! opened, [`MemoryTraffic::open`] says why in words for the document.

use perf_event::events::Dynamic;
use perf_event::Counter;
use std::path::Path;

/// The named traffic events of a memory-controller PMU.
const EVENTS: [&str; 2] = ["cas_count_read", "cas_count_write"];

/// Open counters of every memory controller's reads and writes.
pub struct MemoryTraffic {
    /// Each counter with the bytes one count stands for.
    counters: Vec<(Counter, f64)>,
    /// The PMUs counted, for the document.
    pub pmus: Vec<String>,
}

/// The memory-controller PMUs under `devices`, sorted.
pub fn controllers(devices: &Path) -> Vec<String> {
    let mut found = super::pmu_names_in(devices);
    found.retain(|n| n.starts_with("uncore_imc") || n.starts_with("amd_df") || n.starts_with("arm_cmn"));
    found
}

/// Bytes one count of `event` of the PMU at `pmu` stands for: its scale
/// times its unit (`MiB`, `KiB`, `B` or none).
pub fn bytes_per_count(pmu: &Path, event: &str) -> Option<f64> {
    let read = |suffix: &str| std::fs::read_to_string(pmu.join("events").join(format!("{event}{suffix}"))).ok();
    let scale: f64 = read(".scale").map_or(Some(1.0), |s| s.trim().parse().ok())?;
    let unit = match read(".unit").as_deref().map(str::trim) {
        None | Some("") | Some("B") | Some("Bytes") => 1.0,
        Some("KiB") => 1024.0,
        Some("MiB") => 1024.0 * 1024.0,
        Some(_) => return None,
    };
    Some(scale * unit)
}

impl MemoryTraffic {
    /// Counters of every memory-controller PMU under `devices` that has
    /// the named traffic events, enabled; or why there are none.
    pub fn open(devices: &Path) -> Result<MemoryTraffic, String> {
        let pmus = controllers(devices);
        if pmus.is_empty() {
            return Err("not measured — no uncore PMU".into());
        }
        let mut counters = Vec::new();
        let mut named = Vec::new();
        for pmu in &pmus {
            let dir = devices.join(pmu);
            if !EVENTS.iter().all(|e| dir.join("events").join(e).is_file()) {
                continue;
            }
            for event in EVENTS {
                let per = bytes_per_count(&dir, event)
                    .ok_or_else(|| format!("not measured — {pmu}/{event} has a unit memperf cannot turn into bytes"))?;
                counters.push((open_one(&dir, event).map_err(|e| format!("not measured — {pmu}/{event}: {e}"))?, per));
            }
            named.push(pmu.clone());
        }
        if counters.is_empty() {
            return Err(format!(
                "not measured — the memory-controller PMUs here ({}) have no cas_count_read/write events memperf reads",
                pmus.join(", ")
            ));
        }
        Ok(MemoryTraffic { counters, pmus: named })
    }

    /// The bytes every memory controller moved since it was opened.
    pub fn bytes(&mut self) -> f64 {
        self.counters.iter_mut().map(|(c, per)| c.read().map_or(0.0, |v| v as f64 * *per)).sum()
    }
}

/// One event of the PMU at `dir`, system-wide on its first `cpumask` CPU,
/// enabled; every format field its event file leaves unset is zero.
fn open_one(dir: &Path, event: &str) -> std::io::Result<Counter> {
    let mut d = Dynamic::builder(dir)?;
    d.event(event)?;
    let unset: Vec<String> = d.params().map(str::to_string).collect();
    for f in unset {
        d.field(&f, 0).map_err(std::io::Error::other)?;
    }
    let dynamic = d.build().map_err(|e| std::io::Error::other(format!("its '{}' field is unset", e.param())))?;
    let cpu = std::fs::read_to_string(dir.join("cpumask"))
        .ok()
        .and_then(|m| m.trim().split([',', '-']).next()?.parse::<usize>().ok())
        .unwrap_or(0);
    let mut c = perf_event::Builder::new(dynamic).one_cpu(cpu).any_pid().build()?;
    c.enable()?;
    Ok(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fake PMU tree: what is found, what a count stands for, and the
    /// reason where nothing can be counted.
    #[test]
    fn controllers_are_found_scaled_and_explained() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(MemoryTraffic::open(dir.path()).err().unwrap(), "not measured — no uncore PMU");
        for n in ["cpu", "uncore_imc_1", "uncore_imc_0", "amd_df", "software"] {
            std::fs::create_dir_all(dir.path().join(n).join("events")).unwrap();
        }
        assert_eq!(controllers(dir.path()), ["amd_df", "uncore_imc_0", "uncore_imc_1"]);
        let imc = dir.path().join("uncore_imc_0");
        std::fs::write(imc.join("events/cas_count_read.scale"), "6.103515625e-5\n").unwrap();
        std::fs::write(imc.join("events/cas_count_read.unit"), "MiB\n").unwrap();
        assert_eq!(bytes_per_count(&imc, "cas_count_read"), Some(64.0), "one CAS is one 64-byte line");
        assert_eq!(bytes_per_count(&imc, "cas_count_write"), Some(1.0), "no scale, no unit: a byte");
        std::fs::write(imc.join("events/cas_count_write.unit"), "Joules\n").unwrap();
        assert_eq!(bytes_per_count(&imc, "cas_count_write"), None);
        // No PMU has both named events: said, with their names.
        let why = MemoryTraffic::open(dir.path()).err().unwrap();
        assert!(why.contains("(amd_df, uncore_imc_0, uncore_imc_1) have no cas_count_read/write"), "{why}");
    }
}
