//! Running a program for `stat` (and `hugepages`): fork, hold the child on
//! a pipe until its counters are attached, then release it into exec.
//!
//! std's `Command` cannot do this: it waits for the exec to succeed before
//! returning, so a child held before exec would deadlock it. Here the child
//! blocks reading the release pipe; an exec failure comes back as an errno
//! on a close-on-exec pipe (EOF there means the exec succeeded). The
//! child's stdin, stdout and stderr are memperf's, untouched.

pub mod elf;
pub mod hot_set;
pub mod kernel_config;
pub mod memory;
pub mod pagemap;
pub mod pages;
pub mod signals;
pub mod watch;

use crate::error::{Error, Result};
pub use memperf_model::process::{signal_name, ChildUsage, Exit};
use std::ffi::{CString, OsStr, OsString};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// What wait4 accounted to the child, in the document's units.
fn child_usage(u: &libc::rusage) -> ChildUsage {
    let s = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    ChildUsage {
        user_s: s(u.ru_utime),
        system_s: s(u.ru_stime),
        max_rss_bytes: u.ru_maxrss as u64 * 1024,
        minor_faults: u.ru_minflt as u64,
        major_faults: u.ru_majflt as u64,
        voluntary_switches: u.ru_nvcsw as u64,
        involuntary_switches: u.ru_nivcsw as u64,
    }
}

/// The program to run, found the way a shell finds it.
#[derive(Debug, Clone)]
pub struct Program {
    pub path: PathBuf,
    pub argv: Vec<OsString>,
}

/// Finds `argv[0]` (a path, or a name on PATH). Not found: exit 127 as a
/// shell; found but not executable: 126.
pub fn find(argv: &[OsString]) -> Result<Program> {
    let Some(name) = argv.first() else {
        return Err(Error::usage("no command to run: give it after --, e.g. memperf stat -- ./app"));
    };
    if name.is_empty() {
        return Err(Error::usage("the command is an empty string: give it after --, e.g. memperf stat -- ./app"));
    }
    let candidates: Vec<PathBuf> = if name.as_bytes().contains(&b'/') {
        vec![PathBuf::from(name)]
    } else {
        let path = std::env::var_os("PATH").unwrap_or_else(|| "/usr/local/bin:/usr/bin:/bin".into());
        std::env::split_paths(&path).map(|d| d.join(name)).collect()
    };
    let mut denied = None;
    for c in candidates {
        match executable(&c) {
            Some(true) => return Ok(Program { path: c, argv: argv.to_vec() }),
            Some(false) => denied = denied.or(Some(c)),
            None => {}
        }
    }
    let shown = name.to_string_lossy();
    Err(match denied {
        Some(p) => Error::child_status(
            126,
            format!("{shown}: {} is not executable (fix: chmod +x it, or name the right file)", p.display()),
        ),
        None => Error::child_status(127, format!("{shown}: command not found (fix: give a path, or a name on PATH)")),
    })
}

/// `Some(true)`: a file we may execute; `Some(false)`: exists, may not;
/// `None`: no such file.
fn executable(p: &Path) -> Option<bool> {
    let meta = std::fs::metadata(p).ok()?;
    let c = CString::new(p.as_os_str().as_bytes()).ok()?;
    // SAFETY: c is a valid NUL-terminated path.
    let ok = unsafe { libc::access(c.as_ptr(), libc::X_OK) } == 0;
    Some(ok && meta.is_file())
}

/// A forked child, blocked before exec until [`Held::release`].
pub struct Held {
    pub pid: i32,
    release: Option<OwnedFd>,
    exec_error: OwnedFd,
}

fn cstring(s: &OsStr) -> Result<CString> {
    CString::new(s.as_bytes())
        .map_err(|_| Error::usage(format!("'{}' contains a NUL byte, which exec cannot pass", s.to_string_lossy())))
}

fn pipe() -> Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: fds has room for the two descriptors pipe2 writes.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(Error::io("cannot make a pipe to hold the child", std::io::Error::last_os_error()));
    }
    // SAFETY: both descriptors were just opened and are owned by nobody else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// Forks a child that waits for the release, then execs `program` with
/// this process's environment plus `extra_env`; with `output`, its stdout
/// and stderr go to that file instead of memperf's.
pub fn spawn_held(program: &Program, extra_env: &[(OsString, OsString)], output: Option<&OwnedFd>) -> Result<Held> {
    // Everything the child needs is built before the fork: after it, only
    // async-signal-safe calls are allowed.
    let path = cstring(program.path.as_os_str())?;
    let argv: Vec<CString> = program.argv.iter().map(|a| cstring(a)).collect::<Result<_>>()?;
    let mut env: Vec<(OsString, OsString)> =
        std::env::vars_os().filter(|(k, _)| !extra_env.iter().any(|(e, _)| e == k)).collect();
    env.extend(extra_env.iter().cloned());
    let envp: Vec<CString> = env
        .iter()
        .map(|(k, v)| {
            let mut kv = k.clone();
            kv.push("=");
            kv.push(v);
            cstring(&kv)
        })
        .collect::<Result<_>>()?;
    let mut argv_ptrs: Vec<*const libc::c_char> = argv.iter().map(|a| a.as_ptr()).collect();
    argv_ptrs.push(std::ptr::null());
    let mut envp_ptrs: Vec<*const libc::c_char> = envp.iter().map(|a| a.as_ptr()).collect();
    envp_ptrs.push(std::ptr::null());
    let (release_r, release_w) = pipe()?;
    let (error_r, error_w) = pipe()?;
    // SAFETY: fork in a process that may have other threads: the child
    // calls only async-signal-safe functions (read, sigprocmask, signal,
    // execve, write, _exit) on memory prepared above, then execs or exits.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(Error::io("cannot fork the child", std::io::Error::last_os_error()));
    }
    if pid == 0 {
        // SAFETY: in the child, see above.
        unsafe { child_after_fork(&release_r, release_w.as_raw_fd(), &error_w, output, &path, &argv_ptrs, &envp_ptrs) }
    }
    drop(release_r);
    drop(error_w);
    Ok(Held { pid, release: Some(release_w), exec_error: error_r })
}

/// The child's side: close its copy of the release pipe's write end (so
/// that memperf giving up, dropping its own, is an end of file here), wait
/// for one byte, restore the signal state a fresh process has, exec; on
/// failure report errno and exit 127/126.
///
/// # Safety
/// Only to be called in the child right after fork.
unsafe fn child_after_fork(
    release: &OwnedFd,
    release_w: std::os::fd::RawFd,
    error: &OwnedFd,
    output: Option<&OwnedFd>,
    path: &CString,
    argv: &[*const libc::c_char],
    envp: &[*const libc::c_char],
) -> ! {
    // SAFETY: the caller runs this in the child right after fork; only
    // async-signal-safe calls follow, on descriptors and strings the parent
    // built before forking, and every path ends in exec or _exit.
    unsafe {
        libc::close(release_w);
        let mut byte = 0u8;
        let n = libc::read(release.as_raw_fd(), (&mut byte as *mut u8).cast(), 1);
        if n != 1 {
            // memperf gave up before releasing: leave without running anything.
            libc::_exit(125);
        }
        if let Some(out) = output {
            libc::dup2(out.as_raw_fd(), 1);
            libc::dup2(out.as_raw_fd(), 2);
        }
        // Rust ignores SIGPIPE; a program expects the default, as a shell gives it.
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        let mut none: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut none);
        libc::sigprocmask(libc::SIG_SETMASK, &none, std::ptr::null_mut());
        libc::execve(path.as_ptr(), argv.as_ptr(), envp.as_ptr());
        let errno = *libc::__errno_location();
        libc::write(error.as_raw_fd(), (&errno as *const i32).cast(), 4);
        libc::_exit(if errno == libc::ENOENT { 127 } else { 126 });
    }
}

impl Held {
    /// Lets the child exec. An exec that fails is an error naming the
    /// errno (status 127 or 126, as a shell).
    pub fn release(mut self, shown: &str) -> Result<Running> {
        let w = self.release.take().expect("released once");
        let one = 1u8;
        // SAFETY: one byte from a valid buffer to our pipe.
        unsafe { libc::write(w.as_raw_fd(), (&one as *const u8).cast(), 1) };
        drop(w);
        let mut errno = 0i32;
        // SAFETY: reads at most 4 bytes into errno.
        let n = unsafe { libc::read(self.exec_error.as_raw_fd(), (&mut errno as *mut i32).cast(), 4) };
        let running = Running::new(self.pid);
        if n == 4 {
            let _ = running.wait_blocking();
            let err = std::io::Error::from_raw_os_error(errno);
            let status = if errno == libc::ENOENT { 127 } else { 126 };
            let fix = match errno {
                libc::ENOEXEC => format!("it is neither a program nor a script with a #! line: add one, or run it through its interpreter (-- sh {shown})"),
                libc::EACCES => format!("make it executable (chmod +x {shown}) or run it through its interpreter"),
                libc::ENOENT => "give the path of a program that exists (or a name on $PATH)".into(),
                _ => "give a program this machine can run".into(),
            };
            let e = Error::child_status(status, format!("{shown}: cannot execute it: {err}"));
            return Err(Error { fix: Some(fix), ..e });
        }
        Ok(running)
    }
}

impl Drop for Held {
    /// A child never released is reaped (it exits 125 when the pipe closes).
    fn drop(&mut self) {
        if self.release.take().is_some() {
            let mut status = 0;
            // SAFETY: waiting for our own child.
            unsafe { libc::waitpid(self.pid, &mut status, 0) };
        }
    }
}

/// A running child: waited for with a pidfd where the kernel has them.
pub struct Running {
    pub pid: i32,
    pidfd: Option<OwnedFd>,
}

impl Running {
    fn new(pid: i32) -> Running {
        // SAFETY: pidfd_open of our own child; -1 on kernels before 5.3.
        let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) } as i32;
        // SAFETY: a fresh descriptor owned by nobody else.
        let pidfd = (fd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(fd) });
        Running { pid, pidfd }
    }

    /// Waits until the child ends or `timeout` passes; `Some` once it ended.
    pub fn wait_for(&self, timeout: std::time::Duration) -> Option<(Exit, ChildUsage)> {
        match &self.pidfd {
            Some(fd) => {
                let mut p = libc::pollfd { fd: fd.as_raw_fd(), events: libc::POLLIN, revents: 0 };
                let ms = timeout.as_millis().min(i32::MAX as u128) as i32;
                // SAFETY: one valid pollfd.
                let n = unsafe { libc::poll(&mut p, 1, ms) };
                if n > 0 {
                    return self.reap(0);
                }
                None
            }
            None => {
                let until = std::time::Instant::now() + timeout;
                loop {
                    if let Some(done) = self.reap(libc::WNOHANG) {
                        return Some(done);
                    }
                    if std::time::Instant::now() >= until {
                        return None;
                    }
                    std::thread::sleep(std::time::Duration::from_millis(2));
                }
            }
        }
    }

    pub fn wait_blocking(&self) -> (Exit, ChildUsage) {
        loop {
            if let Some(done) = self.reap(0) {
                return done;
            }
        }
    }

    fn reap(&self, flags: i32) -> Option<(Exit, ChildUsage)> {
        let mut status = 0;
        // SAFETY: rusage is plain data that wait4 fills.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: waiting for our own child with valid out-pointers.
        let r = unsafe { libc::wait4(self.pid, &mut status, flags, &mut usage) };
        if r != self.pid {
            return None;
        }
        let exit = if libc::WIFSIGNALED(status) {
            Exit::Signaled { signal: libc::WTERMSIG(status) }
        } else {
            Exit::Exited { code: libc::WEXITSTATUS(status) }
        };
        Some((exit, child_usage(&usage)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(v: &[&str]) -> Vec<OsString> {
        v.iter().map(OsString::from).collect()
    }

    #[test]
    fn finding_a_program_as_a_shell_does() {
        assert!(find(&argv(&["sh"])).unwrap().path.ends_with("sh"));
        let e = find(&argv(&["no-such-program-memperf"])).unwrap_err();
        assert_eq!(e.kind.exit_code(), 127);
        assert!(e.message.contains("command not found"));
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("plain");
        std::fs::write(&f, "#!/bin/sh\n").unwrap();
        let e = find(&[f.into_os_string()]).unwrap_err();
        assert_eq!(e.kind.exit_code(), 126, "{}", e.message);
        assert_eq!(find(&[]).unwrap_err().kind.exit_code(), 2);
    }

    #[test]
    fn a_held_child_runs_only_when_released_and_its_status_comes_back() {
        let dir = tempfile::tempdir().unwrap();
        let mark = dir.path().join("ran");
        let script = format!("touch {}; exit 7", mark.display());
        let p = find(&argv(&["sh", "-c", &script])).unwrap();
        let held = spawn_held(&p, &[], None).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(50));
        assert!(!mark.exists(), "the child ran before it was released");
        let running = held.release("sh").unwrap();
        let (exit, _) = running.wait_blocking();
        assert_eq!(exit, Exit::Exited { code: 7 });
        assert!(mark.exists());
    }

    #[test]
    fn extra_environment_and_signals_reach_the_program() {
        let p = find(&argv(&["sh", "-c", "test \"$MEMPERF_TEST_VAR\" = yes && kill -TERM $$"])).unwrap();
        let held = spawn_held(&p, &[("MEMPERF_TEST_VAR".into(), "yes".into())], None).unwrap();
        let (exit, _) = held.release("sh").unwrap().wait_blocking();
        assert_eq!(exit, Exit::Signaled { signal: libc::SIGTERM });
        assert_eq!(exit.shell_status(), 143);
    }

    /// A child held and never released (memperf interrupted before the
    /// program starts) leaves when dropped, without running anything: its
    /// copy of the release pipe is closed, so the drop is an end of file.
    #[test]
    fn a_held_child_dropped_unreleased_exits_without_running() {
        let program = find(&["true".into()]).unwrap();
        let held = spawn_held(&program, &[], None).unwrap();
        let pid = held.pid;
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            drop(held);
            tx.send(()).unwrap();
        });
        rx.recv_timeout(std::time::Duration::from_secs(10)).expect("the held child did not leave");
        assert!(!std::path::Path::new(&format!("/proc/{pid}")).exists(), "reaped");
    }

    #[test]
    fn an_exec_failure_is_reported_with_the_shells_status() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("bad");
        std::fs::write(&f, [0x7f, b'E', b'L', b'F', 0, 0]).unwrap();
        std::fs::set_permissions(&f, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
        let p = find(&[f.into_os_string()]).unwrap();
        let e = spawn_held(&p, &[], None).unwrap().release("bad").err().unwrap();
        assert_eq!(e.kind.exit_code(), 126);
        assert!(e.message.contains("cannot execute"), "{}", e.message);
    }

    #[test]
    fn waiting_times_out_while_the_child_runs() {
        let p = find(&argv(&["sleep", "0.3"])).unwrap();
        let r = spawn_held(&p, &[], None).unwrap().release("sleep").unwrap();
        assert!(r.wait_for(std::time::Duration::from_millis(20)).is_none());
        let (exit, usage) = r.wait_blocking();
        assert_eq!(exit, Exit::Exited { code: 0 });
        assert!(usage.max_rss_bytes > 0);
    }
}
