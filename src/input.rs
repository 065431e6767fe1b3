//! Reading a file a user names: never blocking, never without bound.
//!
//! A document, a journal, a metrics file or a reference list is opened with
//! `O_NONBLOCK` (so a FIFO with no writer cannot hold the open), checked to
//! be a regular file (a FIFO, a device such as `/dev/zero`, a folder or a
//! socket is refused with the fix), and read up to a stated limit: a file
//! that grows past it while being read is refused too, never read until
//! memory runs out.

use crate::error::{Error, Result};
use crate::sink::{kind, one_line, refuse};
use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// The most a result document or journal may hold: 256 MiB (a full suite
/// with every raw sample is a few MiB).
pub const DOCUMENT_LIMIT: u64 = 256 << 20;

/// The most a small input (metrics definitions, references, reservation
/// records) may hold: 16 MiB.
pub const SMALL_LIMIT: u64 = 16 << 20;

/// The text of `path`, named `what` in errors ("document", "metrics file"),
/// at most `limit` bytes.
pub fn read_text(path: &Path, limit: u64, what: &str) -> Result<String> {
    let shown = one_line(&path.display().to_string());
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC | libc::O_NOCTTY)
        .open(path)
        .map_err(|e| Error::io(format!("cannot read the {what} {shown}"), e))?;
    let meta = file.metadata().map_err(|e| Error::io(format!("cannot inspect the {what} {shown}"), e))?;
    if !meta.is_file() {
        return Err(refuse(
            format!("the {what} {shown} is {}, not a regular file", kind(&meta.file_type())),
            format!("copy it into a file first (cat {shown} > {what}.json) and give that"),
        ));
    }
    if meta.len() > limit {
        return Err(too_big(&shown, what, limit));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| Error::io(format!("cannot read the {what} {shown}"), e))?;
    if bytes.len() as u64 > limit {
        return Err(too_big(&shown, what, limit));
    }
    String::from_utf8(bytes).map_err(|e| {
        refuse(
            format!("the {what} {shown} is not UTF-8 text (byte {} is not)", e.utf8_error().valid_up_to()),
            format!("give the {what} memperf wrote"),
        )
    })
}

fn too_big(shown: &str, what: &str, limit: u64) -> Error {
    refuse(
        format!("the {what} {shown} holds more than {}, the most a {what} may", crate::units::Bytes(limit)),
        format!("give the {what} memperf wrote"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_regular_file_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("d.json");
        std::fs::write(&p, "{}").unwrap();
        assert_eq!(read_text(&p, 10, "document").unwrap(), "{}");
    }

    #[test]
    fn devices_fifos_folders_and_big_files_are_refused_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("f");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: mkfifo reads a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let big = dir.path().join("big");
        std::fs::write(&big, "x".repeat(11)).unwrap();
        for (p, needle) in [
            (Path::new("/dev/zero"), "a character device"),
            (fifo.as_path(), "a FIFO"),
            (dir.path(), "a directory"),
            (big.as_path(), "more than 10B"),
        ] {
            let e = read_text(p, 10, "document").unwrap_err();
            assert_eq!(e.kind.exit_code(), 2, "{}", e.message);
            assert!(e.message.contains(needle), "{}", e.message);
        }
    }

    #[test]
    fn binary_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("b");
        std::fs::write(&p, [b'{', 0xff, b'}']).unwrap();
        assert!(read_text(&p, 10, "document").unwrap_err().message.contains("not UTF-8"));
    }
}
