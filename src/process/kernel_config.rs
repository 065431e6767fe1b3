//! The running kernel's build options, where the system keeps them:
//! /boot/config-RELEASE (Debian, Fedora) or /proc/config.gz
//! (CONFIG_IKCONFIG_PROC). memperf asks it what the kernel can do before
//! choosing a method (DAMON's virtual-address monitoring, soft-dirty bits,
//! idle-page tracking), and says "unknown" where neither exists.

use std::io::Read;

/// The config text of kernel `release`, and where it was read.
pub fn read(release: &str) -> Option<(String, &'static str)> {
    if let Ok(text) = std::fs::read_to_string(format!("/boot/config-{}", release.trim())) {
        return Some((text, "/boot"));
    }
    let gz = std::fs::File::open("/proc/config.gz").ok()?;
    let mut text = String::new();
    flate2::read::GzDecoder::new(gz).read_to_string(&mut text).ok()?;
    Some((text, "/proc/config.gz"))
}

/// Whether `option` (e.g. `CONFIG_DAMON_VADDR`) is built in (`=y`), as
/// a module (`=m`) counted as present.
pub fn has(config: &str, option: &str) -> bool {
    config.lines().any(|l| l.strip_prefix(option).is_some_and(|v| v == "=y" || v == "=m"))
}

/// What `wss` asks of the running kernel, read once: `None` throughout
/// where no config exists.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Features {
    pub damon_vaddr: Option<bool>,
    pub soft_dirty: Option<bool>,
    pub idle_page_tracking: Option<bool>,
    /// Where the config was read.
    pub from: Option<&'static str>,
}

impl Features {
    /// The running kernel's (release from /proc/sys/kernel/osrelease).
    pub fn running() -> Features {
        let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
        match read(release.trim()) {
            Some((c, from)) => Features {
                damon_vaddr: Some(has(&c, "CONFIG_DAMON_VADDR")),
                soft_dirty: Some(has(&c, "CONFIG_MEM_SOFT_DIRTY")),
                idle_page_tracking: Some(has(&c, "CONFIG_IDLE_PAGE_TRACKING")),
                from: Some(from),
            },
            None => Features::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_are_found_whole_and_unset_ones_are_not() {
        let c = "CONFIG_DAMON=y\n# CONFIG_DAMON_VADDR is not set\nCONFIG_DAMON_PADDR=y\nCONFIG_X=m\n";
        assert!(has(c, "CONFIG_DAMON_PADDR") && has(c, "CONFIG_X") && has(c, "CONFIG_DAMON"));
        assert!(!has(c, "CONFIG_DAMON_VADDR"), "a comment saying it is not set");
        assert!(!has(c, "CONFIG_DAMO"), "a prefix of another option");
    }

    /// Where the machine keeps its config, it reads as one with options;
    /// where it keeps none, neither place holds one.
    #[test]
    fn this_kernels_config_reads_where_kept() {
        let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap();
        match read(&release) {
            Some((c, from)) => assert!(has(&c, "CONFIG_MMU"), "{from} has no CONFIG_MMU=y"),
            None => {
                let boot = format!("/boot/config-{}", release.trim());
                assert!(std::fs::read(&boot).is_err(), "{boot} is readable but was not read");
                assert!(std::fs::File::open("/proc/config.gz").is_err(), "/proc/config.gz opens but was not read");
            }
        }
    }
}
