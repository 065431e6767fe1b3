//! `memperf info`: the machine fingerprint, the GPUs NVIDIA's driver
//! finds, and the warnings the fingerprint implies for every measurement
//! (no PMU, no huge pages reserved, THP off, caches that CPUID and the OS
//! disagree on).

use super::{Bench, Experiment};
use crate::error::Result;
use crate::machine::cpuid::{PAGE_1G, PAGE_2M, PAGE_4K};
use crate::machine::Fingerprint;
pub use crate::model::outcome::info::*;
use crate::model::warnings::{Caution, Command};
use crate::model::Warning;
use crate::units::Bytes;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Params {}

pub struct Info;

impl Experiment for Info {
    const NAME: &'static str = "info";
    const SHARE: f64 = 0.0;
    const MEASURES: bool = false;
    type Params = Params;
    type Outcome = Outcome;

    fn preset(_: crate::experiments::Preset, _: &crate::machine::Fingerprint) -> Params {
        Params {}
    }

    fn needs(_: &Params) -> Result<crate::experiments::Needs> {
        Ok(crate::experiments::Needs {
            levels: true,
            ..Default::default()
        })
    }

    // No PMU warning here: `info` counts nothing, and its table already
    // says whether counters open; the warning belongs to what counts.
    fn run(_: &Params, ctx: &Bench) -> Result<Outcome> {
        let (gpus, no_gpu) = match crate::gpu::cuda::open_with_device().and_then(|c| gpus(&c)) {
            Ok(g) => (g, None),
            Err(why) => (vec![], Some(why)),
        };
        Ok(Outcome { tlb_reach: tlb_reach(ctx.machine), gpus, no_gpu })
    }
}

/// Each device of the driver `d`, described.
fn gpus(d: &dyn crate::gpu::Driver) -> std::result::Result<Vec<crate::model::outcome::gpu::Device>, String> {
    let pci = std::path::Path::new("/sys/bus/pci/devices");
    let count = d.count().map_err(|e| e.to_string())?;
    (0..count).map(|dev| crate::gpu::inventory(d, dev, pci).map_err(|e| e.to_string())).collect()
}

/// Data-TLB reach for L1 and L2 and each common page size.
pub fn tlb_reach(m: &Fingerprint) -> Vec<TlbReach> {
    let mut out = Vec::new();
    for level in [1u8, 2] {
        for page in [PAGE_4K, PAGE_2M, PAGE_1G] {
            let t = m.tlbs.iter().filter(|t| t.level == level && t.page_size_bytes == page && t.kind != "store");
            let best = t.max_by_key(|t| t.entries);
            let entries = best.and_then(|t| t.entries);
            out.push(TlbReach {
                level,
                kind: best.map(|t| t.kind.clone()).unwrap_or_else(|| "data".into()),
                page_size_bytes: page,
                entries,
                reach_bytes: entries.map(|e| Bytes(e as u64 * page.0)),
            });
        }
    }
    out
}

/// What the machine refuses or hides that every measurement should know,
/// each with its fix for `cmd`. The missing PMU is not among them: it
/// matters only where an experiment uses counters (and `info` says it).
/// Huge pages and THP matter only to plans with `pages_matter` (an
/// experiment over memory, or `info`); a call chain does not care.
pub fn machine_warnings(m: &Fingerprint, cmd: Command, pages_matter: bool) -> Vec<Warning> {
    let mut w = Vec::new();
    for pool in m.hugepage_pools.iter().filter(|_| pages_matter) {
        if pool.available() == 0 {
            w.push(Caution::NoHugepages { page: pool.page_size_bytes });
        }
    }
    if pages_matter && !m.thp.usable() {
        w.push(Caution::ThpOff { mode: m.thp.enabled.clone() });
    }
    for c in m.caches.iter().filter(|c| !c.plausible()) {
        w.push(Caution::CacheClaimImplausible {
            level: c.level,
            kind: c.kind.clone(),
            size: c.size_bytes,
            reasons: c.implausible.clone(),
        });
    }
    // An observation with no fix: said where the machine is described
    // (`info`, the suite's report), not before every measurement.
    let describes_machine = matches!(cmd, Command::Run | Command::Sub("info"));
    if let Some(found) = m.measured_levels.as_ref().map(|l| &l.found).filter(|_| describes_machine) {
        if let (Some(far_from), Some(far_ns)) = (found.far_from, found.far_ns) {
            for c in m.caches.iter().filter(|c| c.is_data() && c.plausible() && c.size_bytes.0 >= 2 * far_from.0) {
                w.push(Caution::CacheClaimNotSeen { level: c.level, size: c.size_bytes, far_from, far_ns: far_ns.0 });
            }
        }
    }
    for c in m.cache_disagreements() {
        w.push(Caution::CacheSizeDisagreement {
            level: c.level,
            kind: c.kind.clone(),
            os: c.size_bytes,
            cpuid: c.cpuid_size_bytes,
        });
    }
    if cfg!(debug_assertions) {
        w.push(Caution::DebugBuild);
    }
    if let [first, _, ..] = m.core_kinds.as_slice() {
        w.push(Caution::MixedCoreKinds {
            kinds: m.core_kinds.iter().map(|k| format!("{}: CPUs {}", k.name, k.cpus)).collect(),
            first_cpu: crate::units::cpu_list(&first.cpus).first().copied().unwrap_or(0),
            first_kind: first.name.clone(),
            first_kind_cpus: first.cpus.clone(),
        });
    }
    if let Some(why) = &m.emulation {
        w.push(Caution::Emulated { why: why.clone() });
    }
    if describes_machine && m.arch == "aarch64" && !crate::ARM_HARDWARE_RECORDED {
        w.push(Caution::ArmNotYetChecked);
    }
    w.into_iter().map(|c| c.render(cmd)).collect()
}
/// Options of `memperf info`.
#[derive(Debug, clap::Args)]
pub struct Options {
    /// Write a recording of this machine into DIR instead (its CPUID dump and the /sys and /proc files memperf reads), for reading it back elsewhere.
    #[arg(long, value_name = "DIR", conflicts_with = "from")]
    pub record: Option<std::path::PathBuf>,
    /// Describe a saved machine instead of this one: a memperf recording, a folder holding a machine's proc/ and sys/ (as hwloc-gather-topology and lscpu dumps save them), or such a tarball (.tar.gz, .tar.bz2, .tar.xz).
    #[arg(long, value_name = "PATH")]
    pub from: Option<std::path::PathBuf>,
}

impl super::options::Options for Options {
    type Experiment = Info;
    /// A good value of every option, as the man page shows them.
    const EXAMPLES: &'static [&'static [&'static str]] = &[
        &["--record", "d"],
        &["--from", "tests/data/machines/amd-epyc-zen5-kvm-2vcpu"],
    ];

    fn params(&self, _: &super::Request) -> Result<Params> {
        Ok(Params {})
    }

    /// `--record DIR`: this machine's recording, written instead of a run;
    /// `--from PATH`: a saved machine described instead of this one.
    fn instead_option(&self) -> Option<&'static str> {
        if self.from.is_some() {
            Some("--from")
        } else {
            self.record.as_ref().map(|_| "--record")
        }
    }

    fn instead(&self) -> Option<Result<String>> {
        if let Some(path) = self.from.as_deref() {
            return Some(saved_machine_text(path));
        }
        let dir = self.record.as_deref()?;
        let live = crate::machine::source::Source::live();
        let written = crate::machine::record::record(&live.root, &live.cpuid, dir);
        Some(written.map(|n| format!("recorded {n} files of this machine into {}\n", dir.display())))
    }
}

/// What `info --from PATH` says of a saved machine.
fn saved_machine_text(path: &std::path::Path) -> Result<String> {
    use crate::machine::elsewhere::{Arch, SavedMachine};
    let tree = crate::machine::tree::Tree::open(path)?;
    let m = SavedMachine::read(&tree)?;
    let reported = |v: &[String]| if v.is_empty() { "not reported".to_string() } else { v.join(", ") };
    let mut out = format!(
        "saved machine: {}\narchitecture: {}\n",
        crate::terminal::one_line(&path.display().to_string()),
        if m.arch == Arch::Aarch64 { "aarch64" } else { "x86-64" }
    );
    if let Some(model) = &m.model {
        out.push_str(&format!("model: {model}\n"));
    }
    out.push_str(&format!("core kinds: {}\n", m.kinds.len()));
    for k in &m.kinds {
        let cpus = k.cpus();
        out.push_str(&format!("  {}: {} CPU(s) ({})\n", k.name, cpus.len(), crate::units::cpu_list_text(&cpus)));
        for (cpus, caches) in &k.clusters {
            let which = if k.clusters.len() > 1 { format!(" of CPUs {}", crate::units::cpu_list_text(cpus)) } else { String::new() };
            let said = if caches.is_empty() { "not reported (the tree has no cache folders)".into() } else { caches.join(", ") };
            out.push_str(&format!("    caches{which}: {said}\n"));
        }
    }
    out.push_str(&format!("huge page sizes: {}\n", reported(&m.huge_pages)));
    if m.arch == Arch::Aarch64 {
        let sve = match m.sve {
            Some(true) => "yes (its vector length is not in a saved tree)",
            Some(false) => "no",
            None => "not reported",
        };
        out.push_str(&format!("SVE: {sve}\n"));
    }
    out.push_str(&format!("PMUs: {}\n", m.pmus.as_deref().map_or_else(|| "not reported".into(), reported)));
    if m.arch == Arch::Aarch64 {
        out.push_str(
            "note: memperf's aarch64 figures have not yet been checked against independent tools on Arm hardware\n",
        );
    }
    Ok(out)
}

/// `report --reanalyze` draws none of its stored claims again.
impl crate::model::Redraw for Outcome {}
