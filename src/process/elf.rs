//! Whether a program will honour glibc's `glibc.malloc.hugetlb` tunable:
//! it must be dynamically linked against glibc (its ELF interpreter is
//! glibc's ld-linux), and that glibc must be 2.35 or newer.

pub use memperf_model::process::elf::Linkage;
use std::path::Path;

const PT_INTERP: u32 = 3;

fn u16_at(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(b.get(at..at + 2)?.try_into().ok()?))
}
fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}
fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

/// Reads the PT_INTERP of a 64-bit little-endian ELF image.
pub fn linkage_of(image: &[u8]) -> Linkage {
    if image.len() < 64 || &image[..4] != b"\x7fELF" || image[4] != 2 || image[5] != 1 {
        return Linkage::NotElf;
    }
    let (Some(phoff), Some(phentsize), Some(phnum)) = (u64_at(image, 32), u16_at(image, 54), u16_at(image, 56)) else {
        return Linkage::NotElf;
    };
    for i in 0..phnum as usize {
        let at = phoff as usize + i * phentsize as usize;
        if u32_at(image, at) != Some(PT_INTERP) {
            continue;
        }
        let (Some(off), Some(size)) = (u64_at(image, at + 8), u64_at(image, at + 32)) else { break };
        let Some(bytes) = image.get(off as usize..(off + size) as usize) else { break };
        let interpreter = String::from_utf8_lossy(bytes).trim_end_matches('\0').to_string();
        return if interpreter.contains("ld-linux") {
            Linkage::Glibc { interpreter }
        } else {
            Linkage::OtherLibc { interpreter }
        };
    }
    Linkage::Static
}

pub fn linkage(path: &Path) -> Linkage {
    std::fs::read(path).map(|b| linkage_of(&b)).unwrap_or(Linkage::NotElf)
}

/// The version of the glibc this process runs on (`(2, 36)`), from confstr.
pub fn glibc_version() -> Option<(u32, u32)> {
    let mut buf = [0u8; 64];
    // SAFETY: confstr writes at most buf.len() bytes, NUL-terminated.
    let n = unsafe { libc::confstr(libc::_CS_GNU_LIBC_VERSION, buf.as_mut_ptr().cast(), buf.len()) };
    if n == 0 || n > buf.len() {
        return None;
    }
    let text = String::from_utf8_lossy(&buf[..n - 1]).into_owned();
    let v = text.strip_prefix("glibc ")?;
    let mut parts = v.split('.');
    Some((parts.next()?.parse().ok()?, parts.next()?.trim_end_matches(|c: char| !c.is_ascii_digit()).parse().ok()?))
}

/// Why the tunable will not reach the program, if it will not.
pub fn tunable_ignored(linkage: &Linkage, glibc: Option<(u32, u32)>) -> Option<String> {
    match linkage {
        Linkage::Static => Some(
            "the program is statically linked: glibc.malloc.hugetlb is read by the dynamic loader's glibc only".into(),
        ),
        Linkage::OtherLibc { interpreter } => Some(format!(
            "the program loads through {interpreter}, not glibc's loader: glibc.malloc.hugetlb does not apply"
        )),
        Linkage::Glibc { .. } => match glibc {
            Some((major, minor)) if (major, minor) < (2, 35) => {
                Some(format!("this system's glibc is {major}.{minor}: glibc.malloc.hugetlb needs 2.35 or newer"))
            }
            _ => None,
        },
        Linkage::NotElf => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_test_binary_and_sh_are_glibc_programs() {
        let me = std::env::current_exe().unwrap();
        assert!(matches!(linkage(&me), Linkage::Glibc { .. }), "{:?}", linkage(&me));
        let v = glibc_version().unwrap();
        assert!(v >= (2, 17), "{v:?}");
    }

    #[test]
    fn static_other_and_scripts_are_told_apart() {
        let mut elf = vec![0u8; 128];
        elf[..4].copy_from_slice(b"\x7fELF");
        elf[4] = 2;
        elf[5] = 1;
        assert_eq!(linkage_of(&elf), Linkage::Static, "no program header is no interpreter");
        // One PT_INTERP program header at 64 pointing at "/lib/ld-musl-x86_64.so.1".
        let interp = b"/lib/ld-musl-x86_64.so.1\0";
        elf.resize(64 + 56 + interp.len(), 0);
        elf[32..40].copy_from_slice(&64u64.to_le_bytes());
        elf[54..56].copy_from_slice(&56u16.to_le_bytes());
        elf[56..58].copy_from_slice(&1u16.to_le_bytes());
        elf[64..68].copy_from_slice(&PT_INTERP.to_le_bytes());
        elf[72..80].copy_from_slice(&120u64.to_le_bytes());
        elf[96..104].copy_from_slice(&(interp.len() as u64).to_le_bytes());
        elf[120..].copy_from_slice(interp);
        let l = linkage_of(&elf);
        assert_eq!(l, Linkage::OtherLibc { interpreter: "/lib/ld-musl-x86_64.so.1".into() });
        assert!(tunable_ignored(&l, Some((2, 36))).unwrap().contains("ld-musl"));
        assert!(tunable_ignored(&Linkage::Static, None).unwrap().contains("statically"));
        let g = Linkage::Glibc { interpreter: "/lib64/ld-linux-x86-64.so.2".into() };
        assert!(tunable_ignored(&g, Some((2, 31))).unwrap().contains("2.35"));
        assert_eq!(tunable_ignored(&g, Some((2, 36))), None);
        assert_eq!(linkage_of(b"#!/bin/sh\n"), Linkage::NotElf);
    }
}
