//! An Arm core's identity: its Main ID Register (MIDR_EL1) as the kernel
//! exports it (`regs/identification/midr_el1`) or as /proc/cpuinfo spells
//! its fields ("CPU implementer", "CPU part"), and the name of the core the
//! implementer and part number stand for (from the vendors' technical
//! reference manuals and the kernel's `arch/arm64/include/asm/cputype.h`).

/// The fields of a MIDR_EL1 value that name a core.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Midr {
    pub implementer: u32,
    pub part: u32,
    pub variant: u32,
    pub revision: u32,
}

impl Midr {
    /// From the register's value (`0x00000000410fd870`).
    pub fn from_register(text: &str) -> Option<Midr> {
        let v = u64::from_str_radix(text.trim().trim_start_matches("0x"), 16).ok()?;
        Some(Midr {
            implementer: ((v >> 24) & 0xff) as u32,
            variant: ((v >> 20) & 0xf) as u32,
            part: ((v >> 4) & 0xfff) as u32,
            revision: (v & 0xf) as u32,
        })
    }

    /// The core's name, if memperf knows it.
    pub fn name(&self) -> Option<&'static str> {
        NAMES.iter().find(|n| n.0 == self.implementer && n.1 == self.part).map(|n| n.2)
    }

    /// The implementer's name, if memperf knows it.
    pub fn implementer_name(&self) -> Option<&'static str> {
        IMPLEMENTERS.iter().find(|n| n.0 == self.implementer).map(|n| n.1)
    }

    /// "Arm Cortex-X925 (implementer 0x41, part 0xd85)", or the numbers alone.
    pub fn describe(&self) -> String {
        let ids = format!("implementer {:#04x}, part {:#05x}", self.implementer, self.part);
        match (self.implementer_name(), self.name()) {
            (Some(v), Some(n)) => format!("{v} {n} ({ids})"),
            (Some(v), None) => format!("an unknown {v} core ({ids})"),
            _ => format!("an unknown core ({ids})"),
        }
    }
}

const IMPLEMENTERS: &[(u32, &str)] = &[
    // "Reserved for software use": emulators such as qemu's `max` CPU.
    (0x00, "Software-defined"),
    (0x41, "Arm"),
    (0x42, "Broadcom"),
    (0x43, "Cavium"),
    (0x46, "Fujitsu"),
    (0x48, "HiSilicon"),
    (0x4e, "NVIDIA"),
    (0x50, "Applied Micro"),
    (0x51, "Qualcomm"),
    (0x61, "Apple"),
    (0x6d, "Microsoft"),
    (0xc0, "Ampere"),
];

/// (implementer, part, core).
const NAMES: &[(u32, u32, &str)] = &[
    (0x41, 0xc09, "Cortex-A9 (32-bit)"),
    (0x41, 0xc0f, "Cortex-A15 (32-bit)"),
    (0x41, 0xd03, "Cortex-A53"),
    (0x41, 0xd04, "Cortex-A35"),
    (0x41, 0xd05, "Cortex-A55"),
    (0x41, 0xd07, "Cortex-A57"),
    (0x41, 0xd08, "Cortex-A72"),
    (0x41, 0xd09, "Cortex-A73"),
    (0x41, 0xd0a, "Cortex-A75"),
    (0x41, 0xd0b, "Cortex-A76"),
    (0x41, 0xd0c, "Neoverse N1"),
    (0x41, 0xd0d, "Cortex-A77"),
    (0x41, 0xd0e, "Cortex-A76AE"),
    (0x41, 0xd40, "Neoverse V1"),
    (0x41, 0xd41, "Cortex-A78"),
    (0x41, 0xd42, "Cortex-A78AE"),
    (0x41, 0xd44, "Cortex-X1"),
    (0x41, 0xd46, "Cortex-A510"),
    (0x41, 0xd47, "Cortex-A710"),
    (0x41, 0xd48, "Cortex-X2"),
    (0x41, 0xd49, "Neoverse N2"),
    (0x41, 0xd4a, "Neoverse E1"),
    (0x41, 0xd4b, "Cortex-A78C"),
    (0x41, 0xd4c, "Cortex-X1C"),
    (0x41, 0xd4d, "Cortex-A715"),
    (0x41, 0xd4e, "Cortex-X3"),
    (0x41, 0xd4f, "Neoverse V2"),
    (0x41, 0xd80, "Cortex-A520"),
    (0x41, 0xd81, "Cortex-A720"),
    (0x41, 0xd82, "Cortex-X4"),
    (0x41, 0xd83, "Neoverse V3AE"),
    (0x41, 0xd84, "Neoverse V3"),
    (0x41, 0xd85, "Cortex-X925"),
    (0x41, 0xd87, "Cortex-A725"),
    (0x41, 0xd8e, "Neoverse N3"),
    (0x43, 0x0af, "ThunderX2"),
    (0x46, 0x001, "A64FX"),
    (0x48, 0xd01, "TaiShan v110 (Kunpeng 920)"),
    (0x4e, 0x003, "Denver 2"),
    (0x4e, 0x004, "Carmel"),
    (0x50, 0x000, "X-Gene"),
    (0x51, 0x001, "Oryon"),
    (0xc0, 0xac3, "Ampere-1"),
    (0xc0, 0xac4, "Ampere-1A"),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registers_decode_and_name_their_core() {
        let x925 = Midr::from_register("0x00000000410fd851\n").unwrap();
        assert_eq!((x925.implementer, x925.part, x925.variant, x925.revision), (0x41, 0xd85, 0, 1));
        assert_eq!(x925.describe(), "Arm Cortex-X925 (implementer 0x41, part 0xd85)");
        let kunpeng = Midr { implementer: 0x48, part: 0xd01, variant: 1, revision: 0 };
        assert_eq!(kunpeng.name(), Some("TaiShan v110 (Kunpeng 920)"));
        let odd = Midr { implementer: 0x41, part: 0xfff, variant: 0, revision: 0 };
        assert_eq!(odd.describe(), "an unknown Arm core (implementer 0x41, part 0xfff)");
        assert_eq!(Midr::from_register("zz"), None);
    }
}
