//! What the machine claims, checked before anything uses it.
//!
//! CPUID and sysfs describe caches and TLBs as the hypervisor (or the CPU)
//! chose to: a guest has been seen claiming a 480 MiB L3 in one instance
//! shared by its 2 vCPUs, and hiding its TLBs. Each claimed figure is
//! tested here against its own geometry and against what real processors
//! hold; a figure that fails a test keeps the reasons beside it
//! ("claimed", never used to size or name anything). What memperf measured
//! ([`super::levels`]) is shown beside every claim and wins where the two
//! disagree.

use super::cpuid::{CpuidCache, TlbLevel};
use crate::units::{Bytes, GIB, KIB, MIB};

/// Largest last-level cache one logical CPU is ever given: processors
/// hold 1–12 MiB of L3 per core (96 MiB over 8 cores with stacked cache);
/// 64 MiB leaves room for a guest given a whole stacked CCD by 2 vCPUs.
pub const MAX_LLC_PER_CPU: u64 = 64 * MIB;

/// The size range a cache of `level` has on any processor memperf meets:
/// (smallest, largest) for one instance.
pub fn size_bounds(level: u8) -> (u64, u64) {
    match level {
        1 => (4 * KIB, 256 * KIB),
        2 => (64 * KIB, 64 * MIB),
        _ => (256 * KIB, GIB),
    }
}

/// The reasons a claimed cache cannot be what it says (empty: plausible).
/// `cpuid`: CPUID's own description of the same cache; `lower`: the size of
/// the data or unified level below it.
pub fn cache_problems(
    c: &super::Cache,
    cpuid: Option<&CpuidCache>,
    logical_cpus: usize,
    lower: Option<Bytes>,
) -> Vec<String> {
    let (level, size, line, shared_by) = (c.level, c.size_bytes, c.line_bytes, c.shared_by_cpus);
    let mut p = Vec::new();
    if let (Some(w), Some(s)) = (c.ways, c.sets) {
        let geometry = s * w * line;
        if geometry != size.0 {
            p.push(format!("{s} sets × {w} ways × {line} B = {}, not the {size} claimed", Bytes(geometry)));
        }
    }
    if let Some(k) = cpuid {
        let geometry = k.sets * k.ways * k.partitions * k.line_bytes;
        if geometry != k.size_bytes.0 {
            p.push(format!("CPUID's geometry gives {}, not its {}", Bytes(geometry), k.size_bytes));
        }
    }
    let (lo, hi) = size_bounds(level);
    if size.0 < lo || size.0 > hi {
        p.push(format!("an L{level} of {size} is outside what processors have ({}–{})", Bytes(lo), Bytes(hi)));
    }
    if shared_by > logical_cpus.max(1) {
        p.push(format!("shared by {shared_by} CPUs on a machine of {logical_cpus}"));
    }
    if level >= 3 && shared_by > 0 {
        let per_cpu = size.0 / shared_by as u64;
        if per_cpu > MAX_LLC_PER_CPU {
            p.push(format!(
                "{size} shared by {shared_by} CPU(s) is {} per CPU: no processor gives a core more than {}; \
                 a host's cache described to a guest, not this guest's share",
                Bytes(per_cpu),
                Bytes(MAX_LLC_PER_CPU)
            ));
        }
    }
    if let Some(l) = lower.filter(|l| size.0 < l.0) {
        p.push(format!("smaller than the level below it ({l})"));
    }
    p
}

/// The reasons a claimed TLB figure cannot be right (empty: plausible).
pub fn tlb_problems(t: &TlbLevel) -> Vec<String> {
    let Some(e) = t.entries else { return Vec::new() };
    let (lo, hi) = if t.level == 1 { (4, 512) } else { (64, 16384) };
    if (lo..=hi).contains(&e) {
        Vec::new()
    } else {
        vec![format!("{e} entries is outside what an L{} TLB has ({lo}–{hi})", t.level)]
    }
}

#[cfg(test)]
mod tests {
    use super::super::Cache;
    use super::*;

    fn cache(level: u8, size: u64, ways: Option<u64>, sets: Option<u64>, shared: usize) -> Cache {
        Cache {
            level,
            kind: "Unified".into(),
            size_bytes: Bytes(size),
            line_bytes: 64,
            ways,
            sets,
            shared_by_cpus: shared,
            cpuid_size_bytes: None,
            implausible: vec![],
        }
    }

    fn l3(size: u64, shared: usize) -> Vec<String> {
        cache_problems(&cache(3, size, Some(16), Some(size / 64 / 16), shared), None, 2, Some(Bytes(2 * MIB)))
    }

    #[test]
    fn the_480_mib_guest_l3_is_flagged_and_a_real_one_is_not() {
        // tests/data/machines/intel-xeon-m167-kvm-2vcpu: 491,520 sets × 16
        // ways × 64 B = 480 MiB, one instance for 2 vCPUs.
        // Its geometry is consistent; its share is not.
        let p = l3(480 * MIB, 2);
        assert_eq!(p.len(), 1, "{p:?}");
        assert!(p[0].contains("240MiB per CPU"), "{p:?}");
        // The other 2-vCPU recordings: 32 MiB for 2 vCPUs.
        assert!(l3(32 * MIB, 2).is_empty());
    }

    #[test]
    fn geometry_bounds_sharing_and_order_are_checked() {
        let bad_geometry = cache_problems(&cache(1, 48 * KIB, Some(12), Some(32), 1), None, 2, None);
        assert!(bad_geometry[0].contains("32 sets × 12 ways × 64 B = 24KiB"), "{bad_geometry:?}");
        assert!(cache_problems(&cache(1, 4 * MIB, None, None, 1), None, 2, None)[0].contains("outside"));
        assert!(cache_problems(&cache(2, MIB, None, None, 4), None, 2, None)[0].contains("shared by 4 CPUs"));
        let inverted = cache_problems(&cache(3, MIB, None, None, 2), None, 2, Some(Bytes(2 * MIB)));
        assert!(inverted[0].contains("smaller than the level below"), "{inverted:?}");
    }

    #[test]
    fn tlb_entries_out_of_range_are_flagged() {
        let t = |level, entries| TlbLevel {
            level,
            kind: "data".into(),
            page_size_bytes: Bytes(4096),
            entries,
            shared_with_other_sizes: false,
        };
        assert!(tlb_problems(&t(1, Some(96))).is_empty());
        assert!(tlb_problems(&t(2, Some(3072))).is_empty());
        assert!(!tlb_problems(&t(1, Some(4096))).is_empty());
        assert!(tlb_problems(&t(2, None)).is_empty(), "not reported is not implausible");
    }
}
