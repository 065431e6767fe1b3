//! Where results go, without harming anything on the way: every output of
//! a command is planned together before anything is measured
//! ([`check_all`]) and written by [`write`], no writer opening a result file
//! any other way. A result file is written atomically where a rename is
//! safe; a FIFO or a character device is streamed into; anything else is
//! refused with exit status 2 before anything is measured ([`check_all`]
//! says which is which).

use crate::error::{Error, ErrorKind, Result};
pub use crate::terminal::{one_line, shorten, terminal_safe};
use std::io::Write;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
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

/// Checks `path` before any measurement: a legal name, what it is, and
/// that its folder exists and is writable.
pub fn check(path: &Path) -> Result<Target> {
    if path == Path::new("-") || path == Path::new("/dev/stdout") {
        return Ok(Target::Stdout);
    }
    legal_name(path)?;
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
        Ok(m) if m.file_type().is_fifo() => Ok(Target::Stream),
        Ok(m) if m.file_type().is_char_device() && streamable_device(m.rdev()) => Ok(Target::Stream),
        Ok(m) if m.file_type().is_char_device() => Err(refuse(
            format!("{shown} is a character device that is neither a terminal nor /dev/null"),
            "write results to a file, a pipe, a terminal, /dev/null or - (stdout)",
        )),
        Ok(m) => Err(refuse(
            format!("{shown} is {}, not a file", kind(&m.file_type())),
            "give the path of a new or regular file",
        )),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => writable_folder(path).map(|_| Target::Atomic),
        Err(e) => Err(Error::io(format!("cannot inspect {shown}"), e)),
    }
}

/// The character devices memperf streams into: /dev/null and terminals
/// (virtual consoles, /dev/tty and /dev/console, pseudo-terminals). Any
/// other device (/dev/mem, /dev/kmsg, a watchdog, /dev/full …) is refused:
/// writing a result into it does harm or nothing useful.
fn streamable_device(rdev: u64) -> bool {
    let (major, minor) = (libc::major(rdev), libc::minor(rdev));
    matches!((major, minor), (1, 3) | (4, _) | (5, 0) | (5, 1)) || (136..=143).contains(&major)
}

/// Every output of a command, each named by its option, checked together
/// before anything is measured: each as [`check`] says, a legal name, a
/// FIFO with a reader (held open from here to its write), no two of them
/// the same file (or both stdout),
/// and none of them a file the command reads (`inputs`; a folder stands for
/// the results.json and journal.jsonl in it).
///
/// Atomically: a temporary file of a fixed-length name in the same folder,
/// synced, renamed over the target, where the target is a new name or an
/// existing regular file. Any legal name is taken; only a name over the
/// folder's NAME_MAX or a path over PATH_MAX is refused. A FIFO or a
/// character device (a terminal, /dev/null) is written by streaming into
/// it, never replaced; a FIFO is opened when it is planned, so one that
/// nobody reads is refused at once, and its reader, once there, stays
/// connected until the result is written. Anything else — a directory, a
/// block device, a socket, a symlink (whose rename would replace the link,
/// not its target) — is refused. stdout closed by its reader (`memperf info
/// | head`) ends the program quietly; a full disk is an error naming the
/// path.
pub fn check_all(outputs: &[(&str, &Path)], inputs: &[&Path]) -> Result<()> {
    let read: Vec<std::path::PathBuf> = inputs
        .iter()
        .flat_map(|i| {
            if i.is_dir() {
                vec![i.join("results.json"), i.join("journal.jsonl")]
            } else {
                vec![i.to_path_buf()]
            }
        })
        .filter_map(|i| identity(&i))
        .collect();
    let mut seen: Vec<(std::path::PathBuf, &str)> = Vec::new();
    for &(option, path) in outputs {
        let shown = one_line(&path.display().to_string());
        let target = check(path)?;
        let id = match target {
            Target::Stdout => std::path::PathBuf::from("-"),
            // /dev/null and a terminal may take several outputs.
            Target::Stream if !std::fs::metadata(path).is_ok_and(|m| m.file_type().is_fifo()) => continue,
            _ => match identity(path) {
                Some(id) => id,
                None => continue,
            },
        };
        if let Some((_, other)) = seen.iter().find(|(p, _)| *p == id) {
            return Err(refuse(
                format!("{option} {shown} is also the output of {other}: one would silently replace the other"),
                "give each output its own path",
            ));
        }
        if read.contains(&id) {
            return Err(refuse(
                format!("{option} {shown} is a file this command reads: writing it would replace its own input"),
                "write the output to another path",
            ));
        }
        if target == Target::Stream {
            hold_fifo(path, &id)?;
        }
        seen.push((id, option));
    }
    Ok(())
}

/// FIFOs opened when their output was planned, by identity, each taken by
/// the write of its result.
static HELD: std::sync::Mutex<Vec<(std::path::PathBuf, std::fs::File)>> = std::sync::Mutex::new(Vec::new());

/// Opens the FIFO `path` (whose identity is `id`) for its result, unless
/// it is open already: refused at once when nobody reads it.
fn hold_fifo(path: &Path, id: &Path) -> Result<()> {
    let mut held = HELD.lock().unwrap_or_else(|e| e.into_inner());
    if !held.iter().any(|(p, _)| p == id) {
        held.push((id.to_path_buf(), open_stream(path)?));
    }
    Ok(())
}

/// The FIFO `path` opened when it was planned, if it was.
fn take_held(path: &Path) -> Option<std::fs::File> {
    let id = identity(path)?;
    let mut held = HELD.lock().unwrap_or_else(|e| e.into_inner());
    let at = held.iter().position(|(p, _)| *p == id)?;
    Some(held.swap_remove(at).1)
}

/// A name the file system takes: its file name within the folder's
/// NAME_MAX and the whole path within PATH_MAX. The temporary name a file
/// is written through has a fixed length, so it never makes a legal name
/// fail.
fn legal_name(path: &Path) -> Result<()> {
    let shown = one_line(&path.display().to_string());
    let n = path.file_name().map_or(0, |f| f.len());
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let most = name_max(dir);
    if n > most {
        return Err(refuse(
            format!("the file name of {shown} is {n} bytes, over the {most} a name may have in its folder"),
            format!("use a name of at most {most} bytes"),
        ));
    }
    let len = path.as_os_str().len();
    if len >= libc::PATH_MAX as usize {
        return Err(refuse(
            format!("the path {} is {len} bytes, over the {} a path may have", shorten(&shown, 60), libc::PATH_MAX - 1),
            "use a shorter path (cd into the folder and give a relative one)",
        ));
    }
    Ok(())
}

/// The longest file name the folder `dir` takes (pathconf's NAME_MAX; 255
/// where it cannot be asked).
fn name_max(dir: &Path) -> usize {
    let Ok(c) = std::ffi::CString::new(dir.as_os_str().as_encoded_bytes()) else { return 255 };
    // SAFETY: pathconf reads a NUL-terminated path; no memory is written.
    let n = unsafe { libc::pathconf(c.as_ptr(), libc::_PC_NAME_MAX) };
    if n > 0 {
        n as usize
    } else {
        255
    }
}

/// What file `path` is, whether it exists yet or not: its canonical path,
/// or its folder's canonical path joined with its name.
fn identity(path: &Path) -> Option<std::path::PathBuf> {
    std::fs::canonicalize(path).ok().or_else(|| {
        let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
        Some(std::fs::canonicalize(dir).ok()?.join(path.file_name()?))
    })
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

/// Writes `contents` to `path` the way [`check`] says is safe: a FIFO
/// through the descriptor its plan opened (or, unplanned, one opened now
/// and refused at once when nobody reads it).
pub fn write(path: &Path, contents: &[u8]) -> Result<()> {
    match check(path)? {
        Target::Stdout => stdout(contents),
        Target::Stream => {
            let mut f = match take_held(path) {
                Some(f) => f,
                None => open_stream(path)?,
            };
            f.write_all(contents).map_err(|e| Error::io(format!("cannot write {}", path.display()), e))
        }
        Target::Atomic => atomic(path, contents),
    }
}

/// Opens a FIFO or character device for writing without blocking in
/// open(): a FIFO nobody reads (ENXIO) is refused at once, never waited
/// for; then the writes block as usual.
fn open_stream(path: &Path) -> Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    use std::os::unix::io::AsRawFd;
    let shown = one_line(&path.display().to_string());
    let f = std::fs::OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY | libc::O_CLOEXEC)
        .open(path)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::ENXIO) => refuse(
                format!("nothing reads the FIFO {shown}: memperf would wait for a reader that may never come"),
                format!("start its reader first (cat {shown} &), or write to a file"),
            ),
            _ => Error::io(format!("cannot write {shown}"), e),
        })?;
    // SAFETY: fcntl on a descriptor this function owns; no memory is passed.
    unsafe {
        let flags = libc::fcntl(f.as_raw_fd(), libc::F_GETFL);
        libc::fcntl(f.as_raw_fd(), libc::F_SETFL, flags & !libc::O_NONBLOCK);
    }
    Ok(f)
}

/// A temporary file beside `path`, synced, then renamed over it.
/// The temporary name is `.memperf-XXXXXX.tmp` (random, created
/// exclusively, removed if anything fails), whatever the target's name.
fn atomic(path: &Path, contents: &[u8]) -> Result<()> {
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    if path.file_name().is_none() {
        return Err(Error::usage(format!("'{}' is not a file path", one_line(&path.display().to_string()))));
    }
    let result = (|| {
        let mut tmp = tempfile::Builder::new().prefix(".memperf-").suffix(".tmp").tempfile_in(dir)?;
        tmp.write_all(contents)?;
        tmp.as_file().sync_all()?;
        tmp.persist(path).map(|_| ()).map_err(|e| e.error)
    })();
    result.map_err(|e| Error::io(format!("cannot write {}", path.display()), e))
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
        // Unplanned, it is opened now: refused until the reader is in open().
        loop {
            match write(&fifo, b"streamed") {
                Err(e) if e.message.contains("nothing reads the FIFO") => {
                    std::thread::sleep(std::time::Duration::from_millis(5))
                }
                r => break r.unwrap(),
            }
        }
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

    /// /dev/null takes results; /dev/full, /dev/mem, /dev/kmsg, /dev/zero
    /// are refused before anything is written, and stay what they are.
    #[test]
    fn only_null_and_terminals_among_devices_take_results() {
        assert_eq!(check(Path::new("/dev/null")).unwrap(), Target::Stream);
        assert_eq!(check(Path::new("/dev/stdout")).unwrap(), Target::Stdout);
        for dev in ["/dev/full", "/dev/mem", "/dev/kmsg", "/dev/zero"].map(Path::new).iter().filter(|d| d.exists()) {
            let e = write(dev, b"x").unwrap_err();
            assert_eq!(e.kind.exit_code(), 2, "{}", dev.display());
            assert!(e.message.contains("neither a terminal nor /dev/null"), "{}", e.message);
            assert!(std::fs::metadata(dev).unwrap().file_type().is_char_device());
        }
        assert!(streamable_device(libc::makedev(136, 3)), "a pseudo-terminal");
        assert!(!streamable_device(libc::makedev(10, 130)), "a watchdog");
    }

    #[test]
    fn outputs_are_planned_together() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.json");
        let input = dir.path().join("in.json");
        std::fs::write(&input, "{}").unwrap();
        // The same file twice, by two spellings.
        let again = dir.path().join(".").join("a.json");
        let e = check_all(&[("--json", &a), ("--csv", &again)], &[]).unwrap_err();
        assert!(e.message.contains("also the output of --json"), "{}", e.message);
        // An output that is an input, directly or inside a folder given.
        let e = check_all(&[("--html", &input)], &[&input]).unwrap_err();
        assert!(e.message.contains("reads"), "{}", e.message);
        let inside = dir.path().join("results.json");
        assert!(check_all(&[("--json", &inside)], &[dir.path()]).is_err());
        // Two outputs on stdout, and /dev/null twice (harmless).
        assert!(check_all(&[("--json", Path::new("-")), ("--csv", Path::new("/dev/stdout"))], &[]).is_err());
        let null = Path::new("/dev/null");
        check_all(&[("--json", null), ("--csv", null), ("--openmetrics", &a)], &[&input]).unwrap();
        // A name over NAME_MAX; the longest legal one is written, and
        // only it is left.
        let long = dir.path().join("x".repeat(256));
        let e = check_all(&[("--json", &long)], &[]).unwrap_err();
        assert!(e.message.contains("256 bytes") && e.fix.unwrap().contains("at most 255"), "{}", e.message);
        let fits = dir.path().join("x".repeat(255));
        check_all(&[("--json", &fits)], &[]).unwrap();
        write(&fits, b"fits").unwrap();
        assert_eq!(std::fs::read(&fits).unwrap(), b"fits");
        let deep = Path::new("/tmp").join("d/".repeat(2100));
        assert!(check_all(&[("--json", &deep.join("x"))], &[]).unwrap_err().message.contains("a path may have"));
    }

    /// A planned FIFO nobody reads is refused at once; one with a reader is
    /// held open from the plan to the write, so the reader sees one
    /// document and then its end.
    #[test]
    fn a_planned_fifo_is_held_from_its_plan_to_its_write() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("pipe");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: mkfifo reads a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let start = std::time::Instant::now();
        let e = check_all(&[("--json", &fifo)], &[]).unwrap_err();
        assert!(e.message.contains("nothing reads the FIFO"), "{}", e.message);
        assert!(start.elapsed() < std::time::Duration::from_secs(1), "refused at once");
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || std::fs::read_to_string(fifo).unwrap())
        };
        // The reader's open completes only once a writer opens: try until then.
        while check_all(&[("--json", &fifo)], &[]).is_err() {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        assert!(!reader.is_finished(), "the plan's descriptor keeps the reader connected");
        write(&fifo, b"whole").unwrap();
        assert_eq!(reader.join().unwrap(), "whole");
    }
}
