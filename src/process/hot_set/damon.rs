//! DAMON's virtual-address monitoring as the source of the hot set, where
//! the kernel has it (`CONFIG_DAMON_VADDR`, the sysfs interface) and no
//! other monitor holds DAMON: one kdamond watches the program with a `stat`
//! scheme (it acts on nothing), its tried regions read back each interval,
//! removed at the end. A region is hot when DAMON saw it accessed in the
//! last aggregation interval; its bytes spread over the mappings it
//! overlaps. DAMON keeps 10 to 1,000 regions a process, so the hot set is
//! its estimate at that resolution, said so. No accessed bits are cleared.
//! The sysfs root is a parameter, so tests stand a fake tree in its place.

use crate::process::pages::SmapsEntry;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// Where DAMON's sysfs interface lives.
pub const ADMIN: &str = "/sys/kernel/mm/damon/admin";

/// The method, as the document says it.
pub const METHOD: &str = "DAMON's virtual-address monitoring (memperf's own kdamond: a page of each region checked every 5 ms, 10 to 1,000 regions, aggregated over each interval): the hot set is DAMON's estimate at its regions' resolution, spread over the mappings they overlap; no accessed bits are cleared";

/// DAMON's sampling interval: how often it checks a page of each region.
const SAMPLE_US: u64 = 5_000;

/// One region DAMON reports: `[start, end)` and in how many of the
/// aggregation interval's samples it was found accessed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AccessRegion {
    pub start: u64,
    pub end: u64,
    pub nr_accesses: u64,
}

/// memperf's kdamond, removed when dropped.
pub struct Damon {
    kdamonds: PathBuf,
    kdamond: PathBuf,
}

fn write(path: &Path, value: &str) -> io::Result<()> {
    fs::write(path, value).map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))
}

fn read(path: &Path) -> io::Result<String> {
    fs::read_to_string(path).map(|s| s.trim().to_string())
}

/// Whether memperf may drive DAMON under `admin`: `Err` says why not.
/// It does not touch a DAMON another monitor set up (a running kdamond
/// cannot be added to, and one that is off is someone's configuration).
pub fn usable(admin: &Path, kernel_has_vaddr: Option<bool>) -> Result<(), String> {
    match kernel_has_vaddr {
        Some(true) => {}
        Some(false) => return Err("DAMON cannot watch virtual addresses here (CONFIG_DAMON_VADDR not set)".into()),
        None => {
            return Err(
                "whether DAMON can watch virtual addresses here is unknown (no /boot/config of this kernel, no /proc/config.gz)"
                    .into(),
            )
        }
    }
    let n = read(&admin.join("kdamonds/nr_kdamonds"))
        .map_err(|e| format!("DAMON's sysfs interface cannot be read ({}: {e})", admin.display()))?;
    if n != "0" {
        return Err(format!(
            "DAMON is held by another monitor ({n} kdamond(s) under {}), which memperf leaves alone",
            admin.display()
        ));
    }
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Err("driving DAMON needs root (fix: run as root)".into());
    }
    Ok(())
}

impl Damon {
    /// Starts a kdamond on `pid`, aggregating over `interval_ms`.
    pub fn start(admin: &Path, pid: i32, interval_ms: u64) -> io::Result<Damon> {
        let kdamonds = admin.join("kdamonds");
        write(&kdamonds.join("nr_kdamonds"), "1")?;
        let d = Damon { kdamond: kdamonds.join("0"), kdamonds };
        let ctx = d.kdamond.join("contexts");
        write(&ctx.join("nr_contexts"), "1")?;
        let ctx = ctx.join("0");
        write(&ctx.join("operations"), "vaddr")?;
        let attrs = ctx.join("monitoring_attrs");
        write(&attrs.join("intervals/sample_us"), &SAMPLE_US.to_string())?;
        write(&attrs.join("intervals/aggr_us"), &(interval_ms * 1000).to_string())?;
        write(&attrs.join("intervals/update_us"), "1000000")?;
        write(&attrs.join("nr_regions/min"), "10")?;
        write(&attrs.join("nr_regions/max"), "1000")?;
        write(&ctx.join("targets/nr_targets"), "1")?;
        write(&ctx.join("targets/0/pid_target"), &pid.to_string())?;
        write(&ctx.join("schemes/nr_schemes"), "1")?;
        let scheme = ctx.join("schemes/0");
        write(&scheme.join("action"), "stat")?;
        for (what, max) in [("sz", u64::MAX), ("nr_accesses", u32::MAX as u64), ("age", u32::MAX as u64)] {
            write(&scheme.join(format!("access_pattern/{what}/min")), "0")?;
            write(&scheme.join(format!("access_pattern/{what}/max")), &max.to_string())?;
        }
        write(&d.kdamond.join("state"), "on")?;
        Ok(d)
    }

    /// The regions of the latest aggregation interval.
    pub fn regions(&self) -> io::Result<Vec<AccessRegion>> {
        write(&self.kdamond.join("state"), "update_schemes_tried_regions")?;
        let dir = self.kdamond.join("contexts/0/schemes/0/tried_regions");
        let mut out = Vec::new();
        for e in fs::read_dir(&dir)? {
            let p = e?.path();
            if !p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.bytes().all(|b| b.is_ascii_digit())) {
                continue;
            }
            let num = |f: &str| -> io::Result<u64> {
                read(&p.join(f))?.parse().map_err(|e| io::Error::new(io::ErrorKind::InvalidData, format!("{f}: {e}")))
            };
            out.push(AccessRegion { start: num("start")?, end: num("end")?, nr_accesses: num("nr_accesses")? });
        }
        out.sort_by_key(|r| r.start);
        Ok(out)
    }
}

impl Drop for Damon {
    /// Stops and removes memperf's kdamond (errors are moot by now).
    fn drop(&mut self) {
        write(&self.kdamond.join("state"), "off").ok();
        write(&self.kdamonds.join("nr_kdamonds"), "0").ok();
    }
}

/// The bytes of `m` that lie in regions DAMON saw accessed.
pub fn hot_bytes(regions: &[AccessRegion], m: &SmapsEntry) -> u64 {
    let (s, e) = (m.start as u64, m.end as u64);
    regions
        .iter()
        .filter(|r| r.nr_accesses > 0 && r.end > s && r.start < e)
        .map(|r| r.end.min(e) - r.start.max(s))
        .sum::<u64>()
        .min(m.rss)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(start: u64, end: u64, rss: u64) -> SmapsEntry {
        SmapsEntry { start: start as usize, end: end as usize, rss, ..Default::default() }
    }

    /// A fake sysfs tree: memperf configures a vaddr kdamond with a stat
    /// scheme on the pid, turns it on, reads the tried regions the "kernel"
    /// left, and removes its kdamond when dropped.
    #[test]
    fn a_fake_damon_is_configured_read_and_removed() {
        let admin = tempfile::tempdir().unwrap();
        let root = admin.path();
        let regions = root.join("kdamonds/0/contexts/0/schemes/0/tried_regions");
        for d in [
            "kdamonds/0/contexts/0/monitoring_attrs/intervals",
            "kdamonds/0/contexts/0/monitoring_attrs/nr_regions",
            "kdamonds/0/contexts/0/targets/0",
        ] {
            fs::create_dir_all(root.join(d)).unwrap();
        }
        for w in ["sz", "nr_accesses", "age"] {
            fs::create_dir_all(root.join(format!("kdamonds/0/contexts/0/schemes/0/access_pattern/{w}"))).unwrap();
        }
        for (i, (s, e, n)) in [(0x2000_0000u64, 0x2100_0000u64, 3u64), (0x1000_0000, 0x1800_0000, 0)].iter().enumerate()
        {
            let d = regions.join(i.to_string());
            fs::create_dir_all(&d).unwrap();
            fs::write(d.join("start"), format!("{s}\n")).unwrap();
            fs::write(d.join("end"), format!("{e}\n")).unwrap();
            fs::write(d.join("nr_accesses"), format!("{n}\n")).unwrap();
        }
        fs::write(regions.join("total_bytes"), "0\n").unwrap();
        fs::write(root.join("kdamonds/nr_kdamonds"), "0\n").unwrap();
        assert!(usable(root, Some(false)).unwrap_err().contains("CONFIG_DAMON_VADDR not set"));
        assert!(usable(root, None).unwrap_err().contains("is unknown"), "not said to be missing");
        {
            let d = Damon::start(root, 4242, 1500).unwrap();
            let r = |p: &str| read(&root.join("kdamonds/0").join(p)).unwrap();
            assert_eq!(r("contexts/0/operations"), "vaddr");
            assert_eq!(r("contexts/0/targets/0/pid_target"), "4242");
            assert_eq!(r("contexts/0/monitoring_attrs/intervals/aggr_us"), "1500000");
            assert_eq!(r("contexts/0/schemes/0/action"), "stat");
            assert_eq!(r("state"), "on");
            let got = d.regions().unwrap();
            assert_eq!(r("state"), "update_schemes_tried_regions");
            assert_eq!(got.len(), 2);
            assert_eq!(got[0], AccessRegion { start: 0x1000_0000, end: 0x1800_0000, nr_accesses: 0 });
            // A mapping half inside the accessed region, one in the idle one.
            let half = entry(0x2080_0000, 0x2180_0000, 16 << 20);
            assert_eq!(hot_bytes(&got, &half), 8 << 20);
            assert_eq!(hot_bytes(&got, &entry(0x1000_0000, 0x1100_0000, 16 << 20)), 0);
            assert_eq!(hot_bytes(&got, &entry(0x2000_0000, 0x2100_0000, 4096)), 4096, "never above resident");
            assert!(usable(root, Some(true)).unwrap_err().contains("held by another monitor"));
        }
        assert_eq!(read(&root.join("kdamonds/nr_kdamonds")).unwrap(), "0", "removed when dropped");
        assert_eq!(read(&root.join("kdamonds/0/state")).unwrap(), "off");
    }
}
