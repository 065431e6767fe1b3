//! `memperf info --from`: the saved trees of real machines in
//! tests/data/machines/saved (public trees, sources in its README) read as
//! those machines were: their kinds of core with each kind's caches, what
//! the tree lacks as "not reported", and an architecture memperf does not
//! run on refused in one line. And hostile trees and tarballs: each read
//! with bounds or refused in one line, at once, with nothing written
//! outside memperf's private temporary folder and nothing left there.

mod common;

use common::{command, repo};
use std::path::Path;
use std::process::Output;

fn from(path: &Path) -> Output {
    command().args(["info", "--from"]).arg(path).output().unwrap()
}

fn saved(name: &str) -> String {
    let o = from(&repo(&format!("tests/data/machines/saved/{name}")));
    assert_eq!(o.status.code(), Some(0), "{name}: {}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout).unwrap()
}

#[test]
fn the_gb10_has_two_kinds_each_in_two_clusters() {
    let t = saved("hwloc-nvidia-dgx-gb10.tar.bz2");
    assert!(t.contains("architecture: aarch64\ncore kinds: 2\n"), "{t}");
    assert!(t.contains("Arm Cortex-X925 (implementer 0x41, part 0xd85): 10 CPU(s) (5-9,15-19)"), "{t}");
    assert!(t.contains("Arm Cortex-A725 (implementer 0x41, part 0xd87): 10 CPU(s) (0-4,10-14)"), "{t}");
    assert!(t.contains("caches of CPUs 5-9: L1d 64KiB, L1i 64KiB, L2 2MiB, L3 8MiB"), "{t}");
    assert!(t.contains("caches of CPUs 10-14: L1d 64KiB, L1i 64KiB, L2 512KiB, L3 16MiB"), "{t}");
    assert!(t.contains("SVE: yes") && t.contains("huge page sizes: not reported") && t.contains("PMUs: not reported"));
    assert!(t.contains("not yet been checked against independent tools on Arm hardware"), "{t}");
}

#[test]
fn the_kunpeng_920_is_one_kind_with_its_arm_page_sizes() {
    let t = saved("hwloc-128arm-kunpeng920.tar.bz2");
    assert!(
        t.contains("HiSilicon TaiShan v110 (Kunpeng 920) (implementer 0x48, part 0xd01): 128 CPU(s) (0-127)"),
        "{t}"
    );
    assert!(t.contains("caches: L1d 64KiB, L1i 64KiB, L2 512KiB, L3 32MiB"), "{t}");
    assert!(t.contains("huge page sizes: 64KiB, 2MiB, 32MiB, 1GiB") && t.contains("SVE: no"), "{t}");
}

#[test]
fn the_intel_hybrid_is_told_apart_by_its_caches() {
    let t = saved("hwloc-intel-i7-1370p-hybrid.tar.bz2");
    assert!(t.contains("architecture: x86-64\nmodel: 13th Gen Intel(R) Core(TM) i7-1370P\ncore kinds: 2"), "{t}");
    assert!(t.contains("with L1d 48KiB, L1i 32KiB, L2 1.25MiB: 12 CPU(s) (0-11)"), "{t}");
    assert!(t.contains("with L1d 32KiB, L1i 64KiB, L2 2MiB: 8 CPU(s) (12-19)"), "{t}");
    assert!(!t.contains("SVE"), "SVE is said for aarch64 only: {t}");
}

#[test]
fn a_phone_arm_has_four_kinds_and_no_cache_sizes() {
    let t = saved("util-linux-arm-a510-a710-a715-x3.tar.gz");
    for k in [
        "Cortex-A510 (implementer 0x41, part 0xd46): 3 CPU(s) (0-2)",
        "Cortex-A715",
        "Cortex-A710",
        "Cortex-X3 (implementer 0x41, part 0xd4e): 1 CPU(s) (7)",
    ] {
        assert!(t.contains(k), "{k}: {t}");
    }
    assert!(t.contains("L1d size not reported"), "{t}");
}

#[test]
fn other_architectures_are_refused_in_one_line() {
    for (name, what) in [
        ("hwloc-s390.tar.bz2", "IBM z (s390x)"),
        ("hwloc-armv7-2c.tar.bz2", "32-bit Arm"),
        ("util-linux-rv64-visionfive2.tar.gz", "RISC-V"),
    ] {
        let o = from(&repo(&format!("tests/data/machines/saved/{name}")));
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{name}: {err}");
        assert_eq!(err.lines().count(), 1, "{name}: {err}");
        assert!(err.contains(what) && err.contains("memperf reads x86-64 and aarch64 machines only"), "{err}");
        assert!(o.stdout.is_empty());
    }
}

/// A claim is checked by the same rules as a live machine's: the Intel
/// guest's 480 MiB L3 is said to be implausible, with why.
#[test]
fn an_implausible_claim_is_said_so() {
    let t = saved("../intel-xeon-m167-kvm-2vcpu");
    assert!(t.contains("L3 480MiB (implausible: 480MiB shared by 2 CPU(s) is 240MiB per CPU"), "{t}");
}

#[test]
fn a_memperf_recording_reads_too() {
    let t = saved("../amd-epyc-zen5-kvm-2vcpu");
    assert!(t.contains("architecture: x86-64") && t.contains("caches: L1d 48KiB, L1i 32KiB, L2 1MiB, L3 32MiB"), "{t}");
}

/// A gzipped tarball of `members` (name, bytes, kind: 0 file, 1 symlink to
/// the bytes' text, 2 FIFO).
fn tarball(path: &Path, members: &[(&str, &[u8], u8)]) {
    let gz = flate2::write::GzEncoder::new(std::fs::File::create(path).unwrap(), flate2::Compression::fast());
    let mut b = tar::Builder::new(gz);
    for (name, bytes, kind) in members {
        let mut h = tar::Header::new_gnu();
        h.set_mode(0o644);
        match kind {
            0 => {
                h.set_size(bytes.len() as u64);
                h.set_entry_type(tar::EntryType::Regular);
            }
            1 => {
                h.set_size(0);
                h.set_entry_type(tar::EntryType::Symlink);
                h.set_link_name(std::str::from_utf8(bytes).unwrap()).unwrap();
            }
            _ => {
                h.set_size(0);
                h.set_entry_type(tar::EntryType::Fifo);
            }
        }
        // Names are written raw: a crafted tarball holds what it likes.
        let raw = &mut h.as_old_mut().name;
        raw[..name.len()].copy_from_slice(name.as_bytes());
        h.set_cksum();
        b.append(&h, if *kind == 0 { *bytes } else { &[][..] }).unwrap();
    }
    b.into_inner().unwrap().finish().unwrap();
}

/// memperf's temporary folders left in TMPDIR.
fn left(tmp: &Path) -> Vec<String> {
    std::fs::read_dir(tmp).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect()
}

#[test]
fn hostile_trees_and_tarballs_are_bounded_or_refused_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let tmp = dir.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let d = dir.path();
    let cpuinfo: &[u8] = b"processor\t: 0\nCPU implementer\t: 0x41\nCPU architecture: 8\nCPU part\t: 0xd0c\n";
    tarball(&d.join("climb.tgz"), &[("proc/cpuinfo", cpuinfo, 0), ("../../escaped", b"x", 0)]);
    tarball(&d.join("abs.tgz"), &[("/tmp/memperf-absolute-escape", b"x", 0)]);
    tarball(&d.join("links.tgz"), &[("proc/cpuinfo", b"/etc/passwd", 1), ("sys/fifo", b"", 2)]);
    let gz = std::fs::read(d.join("climb.tgz")).unwrap();
    std::fs::write(d.join("truncated.tgz"), &gz[..gz.len() / 2]).unwrap();
    std::fs::write(
        d.join("garbage.tgz"),
        (0..4096u32).map(|i| (i.wrapping_mul(2654435761) >> 13) as u8).collect::<Vec<_>>(),
    )
    .unwrap();
    // A bomb: 300 MiB of zeros in one member, a few hundred KiB packed.
    let bomb =
        flate2::write::GzEncoder::new(std::fs::File::create(d.join("bomb.tgz")).unwrap(), flate2::Compression::best());
    let mut b = tar::Builder::new(bomb);
    let mut h = tar::Header::new_gnu();
    h.set_size(300 << 20);
    h.set_mode(0o644);
    h.set_cksum();
    b.append_data(&mut h, "proc/cpuinfo", std::io::Read::take(std::io::repeat(0), 300 << 20)).unwrap();
    b.into_inner().unwrap().finish().unwrap();
    let fifo = d.join("fifo");
    assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    std::os::unix::fs::symlink("/dev/zero", d.join("zero")).unwrap();
    let cases: &[(&str, &str)] = &[
        ("climb.tgz", "climbs out of the tree"),
        ("abs.tgz", "climbs out of the tree"),
        ("links.tgz", "no proc/cpuinfo"),
        ("truncated.tgz", "corrupt or truncated"),
        ("garbage.tgz", "--from"),
        ("bomb.tgz", "over 16 MiB"),
        ("fifo", "a FIFO, not a folder or a tarball"),
        ("zero", "a character device"),
        ("missing", "No such file"),
    ];
    for (name, needle) in cases {
        let start = std::time::Instant::now();
        let o = command().env("TMPDIR", &tmp).args(["info", "--from"]).arg(d.join(name)).output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{name}: {err}");
        assert!(err.lines().count() == 1 && err.contains(needle), "{name}: {err}");
        assert!(start.elapsed() < std::time::Duration::from_secs(20), "{name} took {:?}", start.elapsed());
        assert!(left(&tmp).is_empty(), "{name} left {:?}", left(&tmp));
    }
    assert!(!d.join("escaped").exists() && !dir.path().parent().unwrap().join("escaped").exists());
    assert!(!Path::new("/tmp/memperf-absolute-escape").exists());
}

#[test]
fn absurd_sysfs_values_read_as_not_reported() {
    let dir = tempfile::tempdir().unwrap();
    let r = dir.path();
    std::fs::create_dir_all(r.join("proc")).unwrap();
    std::fs::write(
        r.join("proc/cpuinfo"),
        "processor\t: 0\nCPU implementer\t: 0x41\nCPU architecture: 8\nCPU part\t: 0xd0c\n",
    )
    .unwrap();
    let idx = r.join("sys/devices/system/cpu/cpu0/cache/index0");
    std::fs::create_dir_all(&idx).unwrap();
    std::fs::write(idx.join("level"), "99999999999999999999").unwrap();
    let idx1 = r.join("sys/devices/system/cpu/cpu0/cache/index1");
    std::fs::create_dir_all(&idx1).unwrap();
    std::fs::write(idx1.join("level"), "2").unwrap();
    std::fs::write(idx1.join("size"), [0xff, 0xfe, 0x00, 0x1b, b'K']).unwrap();
    std::fs::create_dir_all(r.join("sys/devices/system/cpu/cpu99999999999999999999")).unwrap();
    std::fs::create_dir_all(r.join("sys/kernel/mm/hugepages/hugepages-99999999999999999999kB")).unwrap();
    std::os::unix::fs::symlink(r.join("sys/loop"), r.join("sys/loop")).unwrap();
    let o = from(r);
    let t = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(t.contains("Neoverse N1") && t.contains("1 CPU(s) (0)"), "{t}");
    assert!(t.contains("caches: L2 ") && t.contains("(not a size)") && !t.contains('\u{1b}'), "{t}");
    assert!(t.contains("huge page sizes: not reported"), "{t}");
}
