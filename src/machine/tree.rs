//! A saved machine's `/proc` and `/sys`, read with bounds: a folder (a
//! memperf recording, or the tree hwloc-gather-topology and lscpu dump), or
//! such a tree in a tarball (gzip, bzip2 or xz). A tarball is unpacked into
//! a private folder removed with the tree, regular files and folders only,
//! nothing climbing out, every size bounded, so a decompression bomb stops
//! with one line ([`Tree::open`]). A file is read only when it is a regular
//! file inside the tree, without blocking and up to a bound ([`Tree::read`]):
//! a FIFO, a device or a link loop reads as absent.

use crate::error::{Error, Result};
use std::io::Read;
use std::path::{Component, Path, PathBuf};

/// The most a tarball may unpack to, all told …
pub const UNPACKED_MAX: u64 = 256 << 20;
/// … its members …
pub const MEMBERS_MAX: u64 = 200_000;
/// … and one file of a tree (a /proc/cpuinfo of many CPUs fits).
pub const FILE_MAX: u64 = 16 << 20;

/// A saved machine's tree, at `root`.
pub struct Tree {
    pub root: PathBuf,
    /// The root resolved once, against which every path read is checked.
    real_root: PathBuf,
    /// The private folder a tarball was unpacked into.
    _unpacked: Option<tempfile::TempDir>,
}

impl Tree {
    /// The tree at `path`: a folder, or a tarball unpacked with bounds.
    pub fn open(path: &Path) -> Result<Tree> {
        let shown = crate::terminal::one_line(&path.display().to_string());
        let meta = std::fs::metadata(path)
            .map_err(|e| Error::usage(format!("--from {shown}: {e}: give a saved machine's folder or tarball")))?;
        if meta.is_dir() {
            return Ok(Tree::at(top(path), None));
        }
        if !meta.is_file() {
            return Err(Error::usage(format!(
                "--from {shown} is {}, not a folder or a tarball",
                crate::sink::kind(&meta.file_type())
            )));
        }
        let dir = tempfile::Builder::new()
            .prefix("memperf-from-")
            .tempdir()
            .map_err(|e| Error::io("cannot make a private temporary folder", e))?;
        unpack(path, dir.path()).map_err(|why| Error::usage(format!("--from {shown}: {why}")))?;
        Ok(Tree::at(top(dir.path()), Some(dir)))
    }

    fn at(root: PathBuf, unpacked: Option<tempfile::TempDir>) -> Tree {
        let real_root = std::fs::canonicalize(&root).unwrap_or_else(|_| root.clone());
        Tree { root, real_root, _unpacked: unpacked }
    }

    /// The file at `rel` below the root, trimmed; `None` where it is
    /// missing, empty, not a regular file inside the tree, or too large.
    pub fn read(&self, rel: &str) -> Option<String> {
        let bytes = read_bounded(&self.real_root, &self.root.join(rel.trim_start_matches('/')))?;
        let text = String::from_utf8_lossy(&bytes).trim().to_string();
        (!text.is_empty()).then_some(text)
    }

    /// Names in the folder at `rel` (real folders inside the tree only),
    /// sorted, at most `MEMBERS_MAX`.
    pub fn list(&self, rel: &str) -> Vec<String> {
        let dir = self.root.join(rel.trim_start_matches('/'));
        if !inside(&self.real_root, &dir) || !dir.is_dir() {
            return Vec::new();
        }
        let mut names: Vec<String> = std::fs::read_dir(&dir)
            .map(|d| d.take(MEMBERS_MAX as usize).filter_map(|e| e.ok()?.file_name().into_string().ok()).collect())
            .unwrap_or_default();
        names.sort();
        names
    }
}

/// The tree's root in `dir`: `dir`, or its one folder where it holds
/// nothing else and no `proc` or `sys` of its own.
fn top(dir: &Path) -> PathBuf {
    let names: Vec<PathBuf> =
        std::fs::read_dir(dir).map(|d| d.flatten().map(|e| e.path()).collect()).unwrap_or_default();
    let is_tree = |p: &Path| p.join("proc").is_dir() || p.join("sys").is_dir();
    match names.as_slice() {
        [one] if !is_tree(dir) && one.is_dir() && !one.is_symlink() => one.clone(),
        _ => dir.to_path_buf(),
    }
}

/// Whether `path`, resolved, lies inside `real_root` (already resolved).
fn inside(real_root: &Path, path: &Path) -> bool {
    std::fs::canonicalize(path).is_ok_and(|p| p.starts_with(real_root))
}

/// At most [`FILE_MAX`] bytes of the regular file `path` inside `real_root`,
/// opened without blocking (a FIFO swapped in after the check cannot hang
/// the read); `None` otherwise.
fn read_bounded(real_root: &Path, path: &Path) -> Option<Vec<u8>> {
    use std::os::unix::fs::OpenOptionsExt;
    if !inside(real_root, path) {
        return None;
    }
    let f = std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY).open(path).ok()?;
    let meta = f.metadata().ok()?;
    if !meta.is_file() || meta.len() > FILE_MAX {
        return None;
    }
    let mut bytes = Vec::new();
    f.take(FILE_MAX + 1).read_to_end(&mut bytes).ok()?;
    (bytes.len() as u64 <= FILE_MAX).then_some(bytes)
}

/// A reader that fails once more than `left` bytes were read.
struct Bounded<R> {
    inner: R,
    left: u64,
}

impl<R: Read> Read for Bounded<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.left = self.left.checked_sub(n as u64).ok_or_else(|| {
            std::io::Error::other(format!("it unpacks to more than {} MiB: not a saved machine", UNPACKED_MAX >> 20))
        })?;
        Ok(n)
    }
}

/// The decompressor the file's first bytes name (gzip, bzip2, xz), or the
/// bytes as they are (a plain tar).
fn decoder(path: &Path) -> std::result::Result<Box<dyn Read>, String> {
    let mut head = [0u8; 6];
    let mut f = std::fs::File::open(path).map_err(|e| e.to_string())?;
    let n = f.read(&mut head).map_err(|e| e.to_string())?;
    let f = std::fs::File::open(path).map_err(|e| e.to_string())?;
    let r: Box<dyn Read> = match &head[..n] {
        [0x1f, 0x8b, ..] => Box::new(flate2::read::GzDecoder::new(f)),
        [b'B', b'Z', b'h', ..] => Box::new(bzip2::read::BzDecoder::new(f)),
        [0xfd, b'7', b'z', b'X', b'Z', 0] => Box::new(xz2::read::XzDecoder::new(f)),
        _ => Box::new(f),
    };
    Ok(Box::new(Bounded { inner: r, left: UNPACKED_MAX }))
}

/// Unpacks the tarball at `path` into `dest`: regular files and folders
/// only, each member's path relative and free of `..`, within the bounds.
fn unpack(path: &Path, dest: &Path) -> std::result::Result<(), String> {
    let mut archive = tar::Archive::new(decoder(path)?);
    let entries = archive.entries().map_err(|e| format!("not a tarball ({e})"))?;
    for (i, entry) in entries.enumerate() {
        if i as u64 >= MEMBERS_MAX {
            return Err(format!("more than {MEMBERS_MAX} members: not a saved machine"));
        }
        let mut entry = entry.map_err(|e| format!("a corrupt or truncated tarball ({e})"))?;
        let rel = entry.path().map_err(|e| format!("a member's name is unreadable ({e})"))?.into_owned();
        let Some(rel) = relative(&rel) else {
            return Err(format!(
                "member '{}' climbs out of the tree",
                crate::terminal::one_line(&rel.display().to_string())
            ));
        };
        let to = dest.join(&rel);
        match entry.header().entry_type() {
            tar::EntryType::Directory => std::fs::create_dir_all(&to).map_err(|e| e.to_string())?,
            tar::EntryType::Regular | tar::EntryType::Continuous => {
                if entry.size() > FILE_MAX {
                    return Err(format!("member '{}' is over {} MiB", rel.display(), FILE_MAX >> 20));
                }
                if let Some(parent) = to.parent() {
                    std::fs::create_dir_all(parent).map_err(|e| e.to_string())?;
                }
                let mut out = std::fs::File::create(&to).map_err(|e| e.to_string())?;
                std::io::copy(&mut (&mut entry).take(FILE_MAX), &mut out)
                    .map_err(|e| format!("a corrupt or truncated tarball ({e})"))?;
            }
            // Links, devices, FIFOs: never made.
            _ => {}
        }
    }
    Ok(())
}

/// `p` as a path below the destination: its normal components only, or
/// `None` where it is absolute or holds `..`.
fn relative(p: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::Normal(n) => out.push(n),
            Component::CurDir => {}
            Component::RootDir | Component::ParentDir | Component::Prefix(_) => return None,
        }
    }
    (!out.as_os_str().is_empty()).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn member_paths_never_climb_out() {
        assert_eq!(relative(Path::new("a/sys/x")), Some(PathBuf::from("a/sys/x")));
        assert_eq!(relative(Path::new("./proc/cpuinfo")), Some(PathBuf::from("proc/cpuinfo")));
        for bad in ["../etc/passwd", "/etc/passwd", "a/../../b", ""] {
            assert_eq!(relative(Path::new(bad)), None, "{bad}");
        }
    }

    /// A folder tree: a regular file reads; a FIFO, a link to /dev/zero, a
    /// link out of the tree, a link loop and an oversized file read as
    /// absent, at once.
    #[test]
    fn only_regular_files_inside_the_tree_are_read() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("proc")).unwrap();
        std::fs::write(root.join("proc/cpuinfo"), "processor : 0\n").unwrap();
        let fifo = std::ffi::CString::new(root.join("proc/fifo").to_str().unwrap()).unwrap();
        // SAFETY: mkfifo reads a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
        std::os::unix::fs::symlink("/dev/zero", root.join("proc/zero")).unwrap();
        std::os::unix::fs::symlink("/etc/hostname", root.join("proc/out")).unwrap();
        std::os::unix::fs::symlink(root.join("proc/loop"), root.join("proc/loop")).unwrap();
        std::fs::File::create(root.join("proc/huge")).unwrap().set_len(FILE_MAX + 1).unwrap();
        let t = Tree::open(root).unwrap();
        assert_eq!(t.read("proc/cpuinfo").as_deref(), Some("processor : 0"));
        let start = std::time::Instant::now();
        for absent in ["proc/fifo", "proc/zero", "proc/out", "proc/loop", "proc/huge", "proc/none", "../etc/hostname"] {
            assert_eq!(t.read(absent), None, "{absent}");
        }
        assert!(start.elapsed() < std::time::Duration::from_secs(1));
        assert_eq!(t.list("proc"), ["cpuinfo", "fifo", "huge", "loop", "out", "zero"]);
        assert!(t.list("..").is_empty());
    }
}
