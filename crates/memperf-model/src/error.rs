//! One error type for the whole tool, carrying the exit status the user sees
//! and, where there is one, the fix.
//!
//! Exit status (DESIGN.md): 0 success; 1 a measurement failed validation;
//! 2 bad usage or a request the machine cannot satisfy; 3 `compare
//! --fail-on-regression` found a regression; 4 `compare --fail-on-unjudged`
//! found a headline it could not judge worse beyond the threshold (and no
//! judged regression); 130 interrupted; under `stat`,
//! the program's own status (126/127 when it cannot be run).

use std::fmt;

/// Why a command could not finish; decides the exit status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// Malformed or contradictory input from the user.
    Usage,
    /// A well-formed request that this machine cannot satisfy (no huge pages
    /// reserved, not enough memory, more threads than CPUs).
    Unsatisfiable,
    /// A measurement ran but its result failed validation.
    Validation,
    /// The user interrupted the run.
    Interrupted,
    /// Reading or writing a file failed.
    Io,
    /// The reader of stdout went away (`memperf … | head`): end quietly.
    ClosedPipe,
    /// The command given to `stat` could not be run: the status a shell
    /// gives (127 not found, 126 not executable).
    Child(u8),
}

impl ErrorKind {
    pub fn exit_code(self) -> i32 {
        match self {
            ErrorKind::Validation => 1,
            // 1 means "a result failed validation": a path that cannot be
            // read or written is the user's to fix, like bad usage.
            ErrorKind::Usage | ErrorKind::Unsatisfiable | ErrorKind::Io => 2,
            ErrorKind::Interrupted => 130,
            // As a program killed by SIGPIPE would report.
            ErrorKind::ClosedPipe => 141,
            ErrorKind::Child(status) => status as i32,
        }
    }
}

/// An error with the problem and, where known, what the user can do about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    pub kind: ErrorKind,
    pub message: String,
    pub fix: Option<String>,
}

pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    pub fn usage(message: impl Into<String>) -> Self {
        Self { kind: ErrorKind::Usage, message: message.into(), fix: None }
    }
    pub fn unsatisfiable(message: impl Into<String>, fix: impl Into<String>) -> Self {
        Self { kind: ErrorKind::Unsatisfiable, message: message.into(), fix: Some(fix.into()) }
    }
    pub fn validation(message: impl Into<String>) -> Self {
        Self { kind: ErrorKind::Validation, message: message.into(), fix: None }
    }
    pub fn io(context: impl fmt::Display, err: std::io::Error) -> Self {
        Self { kind: ErrorKind::Io, message: format!("{context}: {err}"), fix: None }
    }
    /// A command that could not be run, with the status a shell would give.
    pub fn child_status(status: u8, message: impl Into<String>) -> Self {
        Self { kind: ErrorKind::Child(status), message: message.into(), fix: None }
    }
    pub fn closed_pipe() -> Self {
        Self { kind: ErrorKind::ClosedPipe, message: "stdout closed".into(), fix: None }
    }
    pub fn interrupted() -> Self {
        Self { kind: ErrorKind::Interrupted, message: "interrupted".into(), fix: None }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)?;
        if let Some(fix) = &self.fix {
            write!(f, " (fix: {fix})")?;
        }
        Ok(())
    }
}

impl std::error::Error for Error {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_codes_follow_the_design() {
        assert_eq!(Error::usage("x").kind.exit_code(), 2);
        assert_eq!(Error::unsatisfiable("x", "y").kind.exit_code(), 2);
        assert_eq!(Error::validation("x").kind.exit_code(), 1);
        assert_eq!(Error::interrupted().kind.exit_code(), 130);
        let io = Error::io("cannot write x", std::io::Error::from(std::io::ErrorKind::StorageFull));
        assert_eq!(io.kind.exit_code(), 2, "1 is reserved for failed validation");
    }

    #[test]
    fn display_names_the_fix() {
        let e = Error::unsatisfiable("no 2 MiB pages reserved", "echo 512 > /proc/sys/vm/nr_hugepages");
        assert_eq!(e.to_string(), "no 2 MiB pages reserved (fix: echo 512 > /proc/sys/vm/nr_hugepages)");
    }
}
