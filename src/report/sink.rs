//! Where results go, without harming anything on the way.
//!
//! A result file is written atomically (a temporary file in the same
//! folder, synced, renamed over the target) only where a rename is safe: a
//! new name or an existing regular file. A FIFO or a character device (a
//! terminal, /dev/null) is written by streaming into it, never replaced.
//! Anything else — a directory, a block device, a socket, a symlink (whose
//! rename would replace the link, not its target) — is refused with exit
//! status 2 before anything is measured. stdout that was closed by its
//! reader (`memperf info | head`) ends the program quietly; a full disk is
//! an error naming the path.

use crate::error::{Error, ErrorKind, Result};
use std::io::Write;
use std::os::unix::fs::FileTypeExt;
use std::path::Path;

/// How a target will be written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    Stdout,
    /// Temporary file and rename: a new name or a regular file.
    Atomic,
    /// Open and write in place: a FIFO or a character device.
    Stream,
}

/// Checks `path` before any measurement: what it is, and that its folder
/// exists and is writable.
pub fn check(path: &Path) -> Result<Target> {
    if path == Path::new("-") {
        return Ok(Target::Stdout);
    }
    let shown = path.display();
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => Err(refuse(
            format!("{shown} is a symbolic link: writing would replace the link, not what it points to"),
            match std::fs::canonicalize(path) {
                Ok(real) => format!("pass the real path: {}", real.display()),
                Err(_) => "pass a path that is not a symbolic link".into(),
            },
        )),
        Ok(m) if m.is_file() => writable_folder(path).map(|_| Target::Atomic),
        Ok(m) if m.file_type().is_fifo() || m.file_type().is_char_device() => Ok(Target::Stream),
        Ok(m) => Err(refuse(
            format!("{shown} is {}, not a file", kind(&m.file_type())),
            "give the path of a new or regular file",
        )),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => writable_folder(path).map(|_| Target::Atomic),
        Err(e) => Err(Error::io(format!("cannot inspect {shown}"), e)),
    }
}

/// What a file that is not a regular file is, in words.
pub(crate) fn kind(t: &std::fs::FileType) -> &'static str {
    if t.is_dir() {
        "a directory"
    } else if t.is_fifo() {
        "a FIFO"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_socket() {
        "a socket"
    } else {
        "a special file"
    }
}

/// A usage error (exit 2) with its fix.
pub(crate) fn refuse(message: String, fix: impl Into<String>) -> Error {
    Error { kind: ErrorKind::Usage, message, fix: Some(fix.into()) }
}

/// The folder `path` would be created in exists and accepts new files.
fn writable_folder(path: &Path) -> Result<()> {
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    if !dir.is_dir() {
        return Err(refuse(
            format!("cannot write {}: the folder {} does not exist", path.display(), dir.display()),
            format!("create it first (mkdir -p {}) or choose another path", dir.display()),
        ));
    }
    let c = std::ffi::CString::new(dir.as_os_str().as_encoded_bytes())
        .map_err(|_| Error::usage("path holds a NUL byte"))?;
    // SAFETY: access() reads a NUL-terminated path; no memory is written.
    if unsafe { libc::access(c.as_ptr(), libc::W_OK | libc::X_OK) } != 0 {
        return Err(refuse(
            format!("cannot write {}: the folder {} is not writable", path.display(), dir.display()),
            "choose a folder you may write to",
        ));
    }
    Ok(())
}

/// Writes `contents` to `path` the way [`check`] says is safe.
pub fn write(path: &Path, contents: &[u8]) -> Result<()> {
    match check(path)? {
        Target::Stdout => stdout(contents),
        Target::Stream => {
            let mut f = open_stream(path)?;
            f.write_all(contents).map_err(|e| Error::io(format!("cannot write {}", path.display()), e))
        }
        Target::Atomic => atomic(path, contents),
    }
}

/// How long a FIFO may wait for its reader to open it.
const FIFO_READER_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// Opens a FIFO or character device for writing without blocking in
/// open(): a FIFO nobody reads (ENXIO) is tried again for
/// [`FIFO_READER_WAIT`], then refused, instead of holding the open
/// forever; then the writes block as usual.
fn open_stream(path: &Path) -> Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    use std::os::unix::io::AsRawFd;
    let shown = one_line(&path.display().to_string());
    let open = || {
        std::fs::OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY | libc::O_CLOEXEC)
            .open(path)
    };
    let start = std::time::Instant::now();
    let f = loop {
        match open() {
            Err(e) if e.raw_os_error() == Some(libc::ENXIO) && start.elapsed() < FIFO_READER_WAIT => {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            Err(e) if e.raw_os_error() == Some(libc::ENXIO) => {
                return Err(refuse(
                    format!("nothing read the FIFO {shown} within {} s", FIFO_READER_WAIT.as_secs()),
                    format!("start its reader first (cat {shown} &), or write to a file"),
                ))
            }
            Err(e) => return Err(Error::io(format!("cannot write {shown}"), e)),
            Ok(f) => break f,
        }
    };
    // SAFETY: fcntl on a descriptor this function owns; no memory is passed.
    unsafe {
        let flags = libc::fcntl(f.as_raw_fd(), libc::F_GETFL);
        libc::fcntl(f.as_raw_fd(), libc::F_SETFL, flags & !libc::O_NONBLOCK);
    }
    Ok(f)
}

/// A temporary file beside `path`, synced, then renamed over it.
fn atomic(path: &Path, contents: &[u8]) -> Result<()> {
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let name = path.file_name().ok_or_else(|| Error::usage(format!("'{}' is not a file path", path.display())))?;
    let tmp = dir.join(format!(".{}.tmp.{}", name.to_string_lossy(), std::process::id()));
    let result = (|| {
        let mut f = std::fs::OpenOptions::new().write(true).create_new(true).open(&tmp)?;
        f.write_all(contents)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if let Err(e) = result {
        let _ = std::fs::remove_file(&tmp);
        return Err(Error::io(format!("cannot write {}", path.display()), e));
    }
    Ok(())
}

/// Text safe for a terminal: control characters (ESC, BEL, C1 …) that a
/// crafted document could use to retitle or recolour the terminal are
/// replaced by `?`; newlines and tabs stay.
pub fn terminal_safe(text: &str) -> String {
    text.chars().map(|c| if c.is_control() && c != '\n' && c != '\t' { '?' } else { c }).collect()
}

/// Text safe as one line of a terminal or a line-based file: every
/// control character, line breaks included, becomes `?`, so a crafted name
/// can neither drive the terminal nor forge a line of its own.
pub fn one_line(text: &str) -> String {
    text.chars().map(|c| if c.is_control() { '?' } else { c }).collect()
}

/// Quotes arguments for a POSIX shell, so a command line copied from a
/// report runs as it ran (and runs nothing else).
pub fn shell_quote(args: &[String]) -> String {
    args.iter()
        .map(|a| {
            let plain = !a.is_empty() && a.chars().all(|c| c.is_ascii_alphanumeric() || "-_./:=,+@%".contains(c));
            if plain {
                a.clone()
            } else {
                format!("'{}'", a.replace('\'', "'\\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Writes to stdout, control characters made harmless; a reader that went
/// away ends memperf quietly.
pub fn stdout(contents: &[u8]) -> Result<()> {
    let text = terminal_safe(&String::from_utf8_lossy(contents));
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Err(Error::closed_pipe()),
        Err(e) => Err(Error::io("cannot write to stdout", e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_never_reach_a_terminal_and_quotes_hold() {
        assert_eq!(terminal_safe("host\x1b]0;pwned\x07\n\tok\u{9b}"), "host?]0;pwned?\n\tok?");
        let q = shell_quote(&["memperf".into(), "run".into(), "--only".into(), "a b".into(), "it's;rm -rf /".into()]);
        assert_eq!(q, "memperf run --only 'a b' 'it'\\''s;rm -rf /'");
    }

    #[test]
    fn atomic_write_replaces_whole_and_leaves_no_temp() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("r.json");
        write(&p, b"one").unwrap();
        write(&p, b"two").unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "two");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn a_fifo_is_streamed_into_not_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("pipe");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: mkfifo reads a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        assert_eq!(check(&fifo).unwrap(), Target::Stream);
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || std::fs::read_to_string(fifo).unwrap())
        };
        write(&fifo, b"streamed").unwrap();
        assert_eq!(reader.join().unwrap(), "streamed");
        assert!(std::fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo(), "still a FIFO");
    }

    #[test]
    fn symlinks_directories_and_missing_folders_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real.json");
        std::fs::write(&real, "keep").unwrap();
        let link = dir.path().join("link.json");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        let e = write(&link, b"x").unwrap_err();
        assert_eq!(e.kind.exit_code(), 2);
        assert!(e.message.contains("symbolic link"), "{}", e.message);
        assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
        assert_eq!(std::fs::read_to_string(&real).unwrap(), "keep");
        assert!(write(dir.path(), b"x").unwrap_err().message.contains("a directory"));
        let e = write(Path::new("/nonexistent-dir/x.json"), b"x").unwrap_err();
        assert_eq!(e.kind.exit_code(), 2);
        assert!(e.message.contains("does not exist") && e.fix.unwrap().contains("mkdir -p"));
    }

    #[test]
    fn a_full_device_is_an_error_and_stays_a_device() {
        let full = Path::new("/dev/full");
        if !full.exists() {
            eprintln!("skipped: no /dev/full");
            return;
        }
        assert_eq!(check(full).unwrap(), Target::Stream);
        let e = write(full, b"x").unwrap_err();
        assert_eq!(e.kind.exit_code(), 2);
        assert!(std::fs::metadata(full).unwrap().file_type().is_char_device());
    }
}
