//! An aarch64 machine's identity, which no CPUID describes: each CPU's
//! MIDR_EL1 (from sysfs, /proc/cpuinfo, or, on the running machine, the
//! register itself where the kernel emulates its read: HWCAP_CPUID), named
//! through [`super::midr`]; the SVE vector length from `prctl`; and
//! whether memperf runs under emulation (its build's architecture is not
//! the one /proc/cpuinfo describes: qemu-user).

use super::cpuid::CpuIdentity;
use super::elsewhere::{arch, field, processor_blocks, Arch};
use super::midr::Midr;
use super::source::Source;

/// Every CPU's MIDR, in CPU order (CPUs with none left out).
pub fn midrs(src: &Source, cpuinfo: &str) -> Vec<Midr> {
    let blocks = processor_blocks(cpuinfo);
    let count = blocks.len().max(super::sysfs::topology(&src.path("sys/devices/system/cpu")).0);
    let mut out: Vec<Midr> = (0..count)
        .filter_map(|cpu| {
            let reg = src.read(&format!("sys/devices/system/cpu/cpu{cpu}/regs/identification/midr_el1"));
            reg.as_deref().and_then(Midr::from_register).or_else(|| {
                let b = blocks.get(&cpu)?;
                let num = |k: &str| u32::from_str_radix(field(b, &[k])?.trim_start_matches("0x"), 16).ok();
                let variant = num("CPU variant").unwrap_or(0);
                let revision = field(b, &["CPU revision"]).and_then(|r| r.parse().ok()).unwrap_or(0);
                Some(Midr { implementer: num("CPU implementer")?, part: num("CPU part")?, variant, revision })
            })
        })
        .collect();
    if out.is_empty() {
        // The register itself: read here, or as a recording saved it.
        let own = if src.live { own_midr_register().map(|v| format!("{v:x}")) } else { src.read("midr_el1") };
        out.extend(own.as_deref().and_then(Midr::from_register));
    }
    out
}

/// This CPU's MIDR_EL1, read with MRS where the kernel emulates the read
/// for user space (HWCAP_CPUID); `None` elsewhere.
#[cfg(target_arch = "aarch64")]
pub fn own_midr_register() -> Option<u64> {
    // SAFETY: getauxval only reads the auxiliary vector.
    let hwcap = unsafe { libc::getauxval(libc::AT_HWCAP) };
    if hwcap & libc::HWCAP_CPUID == 0 {
        return None;
    }
    let v: u64;
    // SAFETY: with HWCAP_CPUID the kernel emulates this read; it touches
    // only the output register.
    unsafe { std::arch::asm!("mrs {0}, midr_el1", out(reg) v, options(nomem, nostack, preserves_flags)) };
    Some(v)
}

#[cfg(not(target_arch = "aarch64"))]
pub fn own_midr_register() -> Option<u64> {
    None
}

/// SVE's vector length in bits for this process (PR_SVE_GET_VL), or
/// `None` without SVE.
#[cfg(target_arch = "aarch64")]
pub fn sve_vector_bits() -> Option<usize> {
    const PR_SVE_GET_VL: libc::c_int = 51;
    const PR_SVE_VL_LEN_MASK: libc::c_int = 0xffff;
    // SAFETY: PR_SVE_GET_VL reads this thread's vector length; it takes no pointer.
    let r = unsafe { libc::prctl(PR_SVE_GET_VL, 0, 0, 0, 0) };
    (r > 0).then(|| 8 * (r & PR_SVE_VL_LEN_MASK) as usize)
}

#[cfg(not(target_arch = "aarch64"))]
pub fn sve_vector_bits() -> Option<usize> {
    None
}

/// The identity of an aarch64 machine: implementers and cores by name
/// ("Arm Cortex-X925 + Cortex-A725"), the first CPU's MIDR fields as
/// family (implementer), model (part) and stepping (variant × 16 +
/// revision), and the vector ISAs.
pub fn identity(src: &Source, cpuinfo: &str) -> CpuIdentity {
    let midrs = midrs(src, cpuinfo);
    let mut vendors: Vec<String> = Vec::new();
    let mut cores: Vec<String> = Vec::new();
    for m in &midrs {
        let v = m.implementer_name().map_or_else(|| format!("implementer {:#04x}", m.implementer), String::from);
        let c = m.name().map_or_else(|| format!("part {:#05x}", m.part), String::from);
        for (list, item) in [(&mut vendors, v), (&mut cores, c)] {
            if !list.contains(&item) {
                list.push(item);
            }
        }
    }
    let first = midrs.first();
    CpuIdentity {
        vendor: if vendors.is_empty() { "aarch64".into() } else { vendors.join(" + ") },
        model_name: if cores.is_empty() { "(no MIDR reported)".into() } else { cores.join(" + ") },
        family: first.map_or(0, |m| m.implementer),
        model: first.map_or(0, |m| m.part),
        stepping: first.map_or(0, |m| m.variant * 16 + m.revision),
        hypervisor: None,
        vector_isa: vector_isa(src, cpuinfo),
        base_frequency_hz: None,
    }
}

/// `sve-<bits>` (live: the process's vector length) or `sve`, then `neon`.
fn vector_isa(src: &Source, cpuinfo: &str) -> Vec<String> {
    let features = processor_blocks(cpuinfo).values().next().and_then(|b| field(b, &["Features"])).unwrap_or_default();
    let has = |f: &str| features.split_whitespace().any(|x| x == f);
    let mut v = Vec::new();
    match sve_vector_bits().filter(|_| src.live) {
        Some(bits) => v.push(format!("sve-{bits}")),
        None if has("sve") => v.push("sve".into()),
        None => {}
    }
    if src.live || has("asimd") {
        v.push("neon".into());
    }
    v
}

/// Why this run's figures are not this CPU's, where memperf runs under
/// emulation: the architecture memperf was built for is not the one
/// /proc/cpuinfo describes, or not the one sysfs's CPU `modalias` names
/// (`cpu:type:x86,…`, `cpu:type:aarch64:…`), which emulators that fake
/// /proc/cpuinfo (qemu-user from 8.1) leave alone.
pub fn emulation(cpuinfo: &str, modalias: Option<&str>) -> Option<String> {
    let from_cpuinfo = match arch(None, cpuinfo) {
        Ok(Arch::X86_64) => Some(("x86_64", "/proc/cpuinfo")),
        Ok(Arch::Aarch64) => Some(("aarch64", "/proc/cpuinfo")),
        _ => None,
    };
    let from_sysfs = match modalias.and_then(|m| m.strip_prefix("cpu:type:")) {
        Some(t) if t.starts_with("x86") => Some(("x86_64", "sysfs's CPU modalias")),
        Some(t) if t.starts_with("aarch64") => Some(("aarch64", "sysfs's CPU modalias")),
        _ => None,
    };
    let built = std::env::consts::ARCH;
    let (described, by) = [from_cpuinfo, from_sysfs].into_iter().flatten().find(|(a, _)| *a != built)?;
    Some(format!(
        "memperf was built for {built}, but {by} describes an {described} machine: it runs under emulation \
         (such as qemu-user), and its figures are the emulator's, not this CPU's"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    const X86: &str = "processor\t: 0\nvendor_id\t: AuthenticAMD\nflags\t\t: fpu sse2\n";
    const ARM: &str = "processor\t: 0\nFeatures\t: fp asimd sve\nCPU implementer\t: 0x41\nCPU architecture: 8\n\
                       CPU variant\t: 0x1\nCPU part\t: 0xd4f\nCPU revision\t: 2\n\n\
                       processor\t: 1\nFeatures\t: fp asimd sve\nCPU implementer\t: 0x41\nCPU architecture: 8\n\
                       CPU variant\t: 0x0\nCPU part\t: 0xd4f\nCPU revision\t: 0\n";

    #[test]
    fn emulation_is_a_build_for_another_architecture_than_cpuinfo_describes() {
        let (other, own) = if cfg!(target_arch = "aarch64") { (X86, ARM) } else { (ARM, X86) };
        let said = emulation(other, None).expect("another architecture");
        assert!(said.contains("emulation") && said.contains(std::env::consts::ARCH), "{said}");
        assert!(said.contains("/proc/cpuinfo"), "{said}");
        assert_eq!(emulation(own, None), None);
        assert_eq!(emulation("", None), None);
        // An emulator that fakes cpuinfo is still seen through sysfs.
        let (other_alias, own_alias) = if cfg!(target_arch = "aarch64") {
            ("cpu:type:x86,ven0002fam001Amod0002:feature:,0000", "cpu:type:aarch64:feature:,0000")
        } else {
            ("cpu:type:aarch64:feature:,0000", "cpu:type:x86,ven0002fam001Amod0002:feature:,0000")
        };
        let said = emulation(own, Some(other_alias)).expect("sysfs names another architecture");
        assert!(said.contains("sysfs's CPU modalias"), "{said}");
        assert_eq!(emulation(own, Some(own_alias)), None);
    }

    #[test]
    fn a_recorded_arm_machine_is_named_by_its_midrs() {
        let dir = tempfile::tempdir().unwrap();
        let src =
            Source { root: dir.path().to_path_buf(), cpuid: super::super::source::CpuidSource::Absent, live: false };
        let id = identity(&src, ARM);
        assert_eq!((id.vendor.as_str(), id.model_name.as_str()), ("Arm", "Neoverse V2"));
        assert_eq!((id.family, id.model, id.stepping), (0x41, 0xd4f, 0x12));
        assert_eq!(id.vector_isa, ["sve", "neon"]);
    }

    /// The running machine's SVE length from prctl is the one the kernels
    /// run at (CNTB).
    #[cfg(target_arch = "aarch64")]
    #[test]
    fn prctl_and_the_kernels_agree_on_the_vector_length() {
        assert_eq!(sve_vector_bits(), crate::kernels::aarch64::sve_vector_bytes().map(|b| 8 * b));
        let id = identity(&Source::live(), "");
        assert!(id.vector_isa.last().is_some_and(|v| v == "neon"), "{:?}", id.vector_isa);
    }
}
