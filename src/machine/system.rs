//! What the operating system adds to the machine's behaviour: the CPU
//! frequency governor and boost, SMT, NUMA nodes, the mitigations that
//! change system-call and page-fault costs (KPTI for Meltdown), and the
//! kernel command line (huge-page reservations, mitigations=off, …).
//! Read from sysfs and /proc; `None` where this system does not say.

pub use memperf_model::machine::system::SystemState;
use std::path::Path;

fn read(path: &Path) -> Option<String> {
    std::fs::read_to_string(path).ok().map(|s| s.trim().to_string()).filter(|s| !s.is_empty())
}

/// Reads the state under `sys` (normally /sys) and `proc` (/proc).
pub fn collect(sys: &Path, proc: &Path) -> SystemState {
    let cpu = sys.join("devices/system/cpu");
    let boost = read(&cpu.join("cpufreq/boost"))
        .map(|b| b == "1")
        .or_else(|| read(&cpu.join("intel_pstate/no_turbo")).map(|n| n == "0"));
    let meltdown = read(&cpu.join("vulnerabilities/meltdown"));
    SystemState {
        governor: read(&cpu.join("cpu0/cpufreq/scaling_governor")),
        boost,
        smt: read(&cpu.join("smt/control")),
        numa_nodes: read(&sys.join("devices/system/node/online")).map(|l| super::sysfs::count_cpu_list(&l)),
        kpti: meltdown.as_deref().map(|m| m.contains("PTI")),
        meltdown,
        kernel_cmdline: read(&proc.join("cmdline")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_constructed_tree() {
        let d = tempfile::tempdir().unwrap();
        let (sys, proc) = (d.path().join("sys"), d.path().join("proc"));
        let put = |p: &Path, s: &str| {
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, s).unwrap();
        };
        let cpu = sys.join("devices/system/cpu");
        put(&cpu.join("cpu0/cpufreq/scaling_governor"), "performance\n");
        put(&cpu.join("intel_pstate/no_turbo"), "1\n");
        put(&cpu.join("smt/control"), "on\n");
        put(&cpu.join("vulnerabilities/meltdown"), "Mitigation: PTI\n");
        put(&sys.join("devices/system/node/online"), "0-1\n");
        put(&proc.join("cmdline"), "ro hugepages=16 mitigations=auto\n");
        let s = collect(&sys, &proc);
        assert_eq!(s.governor.as_deref(), Some("performance"));
        assert_eq!(s.boost, Some(false), "no_turbo = 1");
        assert_eq!(s.smt.as_deref(), Some("on"));
        assert_eq!(s.numa_nodes, Some(2));
        assert_eq!(s.kpti, Some(true));
        assert!(s.kernel_cmdline.unwrap().contains("hugepages=16"));
        let empty = collect(&d.path().join("none"), &d.path().join("none"));
        assert_eq!(
            empty,
            SystemState {
                governor: None,
                boost: None,
                smt: None,
                numa_nodes: None,
                meltdown: None,
                kpti: None,
                kernel_cmdline: None
            }
        );
    }
}
