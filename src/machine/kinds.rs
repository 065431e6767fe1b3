//! The kinds of core of the machine described, read as `info --from`
//! reads a saved machine ([`super::elsewhere`]): by MIDR part on Arm, by the
//! kernel's `cpu_core`/`cpu_atom` on x86 hybrids, else by private caches.
//! On the running x86 machine without those folders, CPUID leaf 0x1A's core
//! type of each CPU tells a hybrid's kinds apart instead.

use super::elsewhere::SavedMachine;
use super::source::Source;
use super::tree::Tree;
use memperf_model::machine::CoreKind;

/// The kinds of core of `src`; empty where its tree cannot be read.
pub fn read(src: &Source) -> Vec<CoreKind> {
    let Some(mut kinds) = Tree::open(&src.root).ok().and_then(|t| SavedMachine::read(&t).ok()).map(|m| m.kinds) else {
        return Vec::new();
    };
    if src.live && kinds.iter().all(|k| k.name == "cores") {
        if let Some(split) = by_core_type(&kinds) {
            kinds = split;
        }
    }
    let several = kinds.len() > 1;
    kinds
        .into_iter()
        .map(|k| CoreKind {
            name: k.name.clone(),
            cpus: crate::units::cpu_list_text(&k.cpus()),
            clusters: k.clusters.iter().map(|(c, caches)| (crate::units::cpu_list_text(c), caches.clone())).collect(),
            tlbs: if src.live && several {
                k.cpus().first().map(|&c| tlb_claims_on(c)).unwrap_or_default()
            } else {
                Vec::new()
            },
        })
        .collect()
}

/// The data-TLB claims of CPUID read on a thread pinned to `cpu` (x86-64;
/// elsewhere none: no register states them).
fn tlb_claims_on(cpu: usize) -> Vec<String> {
    if cfg!(not(target_arch = "x86_64")) {
        return Vec::new();
    }
    std::thread::spawn(move || {
        let _pin = crate::timing::team::PinGuard::pin(cpu);
        let c = raw_cpuid::CpuId::with_cpuid_reader(super::source::CpuidSource::native());
        let (tlbs, _) = super::cpuid::tlbs(&c);
        tlbs.iter()
            .map(|t| {
                let entries = t.entries.map_or_else(|| "entries not stated".into(), |e| format!("{e} entries"));
                format!("L{} {} {}: {entries}", t.level, t.kind, t.page_size_bytes)
            })
            .collect()
    })
    .join()
    .unwrap_or_default()
}

/// A cluster: its CPUs and their caches.
type Cluster = (Vec<usize>, Vec<String>);

/// The kinds regrouped by CPUID leaf 0x1A's core type, where this x86 CPU
/// says it is hybrid (leaf 7's EDX bit 15) and the types differ.
fn by_core_type(kinds: &[super::elsewhere::CoreKind]) -> Option<Vec<super::elsewhere::CoreKind>> {
    let mut groups: std::collections::BTreeMap<&'static str, Vec<Cluster>> = Default::default();
    for k in kinds {
        for (cpus, caches) in &k.clusters {
            for &cpu in cpus {
                let name = core_type_name(core_type(cpu)?);
                let clusters = groups.entry(name).or_default();
                match clusters.iter_mut().find(|c| &c.1 == caches) {
                    Some(c) => c.0.push(cpu),
                    None => clusters.push((vec![cpu], caches.clone())),
                }
            }
        }
    }
    (groups.len() > 1).then(|| {
        groups.into_iter().map(|(name, clusters)| super::elsewhere::CoreKind { name: name.into(), clusters }).collect()
    })
}

/// The name of a CPUID 0x1A core type.
fn core_type_name(t: u32) -> &'static str {
    match t {
        0x20 => "efficiency cores (Intel Atom, CPUID 0x1A)",
        0x40 => "performance cores (Intel Core, CPUID 0x1A)",
        _ => "cores of another type (CPUID 0x1A)",
    }
}

/// CPUID leaf 0x1A's core type of `cpu` (EAX bits 31..24), read on a
/// thread pinned to it; `None` where the CPU is not hybrid or not x86.
#[cfg(target_arch = "x86_64")]
fn core_type(cpu: usize) -> Option<u32> {
    use raw_cpuid::native_cpuid::cpuid_count;
    let hybrid = cpuid_count(0, 0).eax >= 0x1a && cpuid_count(7, 0).edx & (1 << 15) != 0;
    if !hybrid {
        return None;
    }
    std::thread::spawn(move || {
        let _pin = crate::timing::team::PinGuard::pin(cpu);
        cpuid_count(0x1a, 0).eax >> 24
    })
    .join()
    .ok()
}

#[cfg(not(target_arch = "x86_64"))]
fn core_type(_cpu: usize) -> Option<u32> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn core_types_are_named() {
        assert!(core_type_name(0x20).starts_with("efficiency"));
        assert!(core_type_name(0x40).starts_with("performance"));
        assert!(core_type_name(0x10).contains("another"));
    }

    /// Every CPU this machine has is in exactly one kind.
    #[test]
    fn this_machine_s_cpus_are_each_in_one_kind() {
        let kinds = read(&Source::live());
        assert!(!kinds.is_empty());
        let logical = crate::machine::collect().cpu.logical_cpus;
        let listed: usize = kinds.iter().map(|k| crate::units::cpu_list(&k.cpus).len()).sum();
        assert_eq!(listed, logical, "{kinds:?}");
    }

    /// The recorded hybrid (an i7-1370P, whose tree has no cpu_core or
    /// cpu_atom) is read in two kinds told apart by their private caches.
    #[test]
    fn a_recorded_hybrid_has_two_kinds() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/machines/saved");
        let hybrid =
            std::fs::read_dir(&dir).unwrap().flatten().find(|e| e.file_name().to_string_lossy().contains("1370"));
        let src = Source {
            root: hybrid.expect("the i7-1370P tree").path(),
            cpuid: super::super::source::CpuidSource::Absent,
            live: false,
        };
        let kinds = read(&src);
        assert_eq!(kinds.len(), 2, "{kinds:?}");
        let cpus: Vec<&str> = kinds.iter().map(|k| k.cpus.as_str()).collect();
        assert_eq!(cpus, ["0-11", "12-19"], "{kinds:?}");
        assert!(kinds.iter().all(|k| k.name.contains("L2 ")), "{kinds:?}");
    }
}
