//! Commands around a program (`stat`, `hugepages`, `wss`) are one kind of
//! thing, [`Observe`]: each reads its options into parameters against the
//! machine (bad input refused before anything runs), may prepare before
//! the program starts (the TLB reach a hot set is set beside), watches the
//! program (starting it, or a running process), says what it sees live
//! through the caller, and ends in one outcome. One path of the command
//! layer runs any of them (`cli::around::observe`), with the same
//! interrupt handling (exit 130 with what was gathered, the document
//! written), outputs and exit status rules.

use crate::error::Result;
use crate::machine::reach::Probe;
use crate::machine::Fingerprint;
use crate::process::Program;
use clap::Args;
use serde::Serialize;
use std::path::{Path, PathBuf};

/// Where a command around a program writes, besides its report.
#[derive(Debug, Clone, Args, Default)]
pub struct Outputs {
    /// Write the result document (JSON) to FILE; `-` for stdout.
    #[arg(long, value_name = "FILE", allow_hyphen_values = true)]
    pub json: Option<PathBuf>,
    /// Write the headline figures as OpenMetrics text to FILE.
    #[arg(long, value_name = "FILE", allow_hyphen_values = true)]
    pub openmetrics: Option<PathBuf>,
    /// Write a results folder: results.json, charts and report.html.
    #[arg(short = 'o', long = "output", value_name = "DIR")]
    pub output: Option<PathBuf>,
    /// Write the samples as tidy CSV to FILE (stat: its counts; wss: one row per mapping per interval; hugepages: one per run).
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
}

/// A command around a program.
pub trait Observe: 'static {
    /// Its name: its subcommand's and its record's.
    const NAME: &'static str;
    /// Invocations of its subcommand (the arguments after its name) that
    /// give every option a good value: the man page's examples, and what
    /// the tests read.
    const EXAMPLES: &'static [&'static [&'static str]];
    /// Its options, as its subcommand takes them.
    type Options: Args + std::fmt::Debug;
    type Params: Serialize;
    type Outcome: Into<crate::model::Outcome> + crate::model::outcome::Valid;
    /// A program that cannot be started is bad input (exit 2); otherwise
    /// it is, as a shell says it, the program's status (127, 126).
    const MISSING_PROGRAM_IS_BAD_INPUT: bool;
    /// Its report goes to stderr: the program keeps stdout.
    const REPORT_ON_STDERR: bool;
    /// Its parameters, from its options against `machine`: bad input is
    /// refused here, before anything runs.
    fn params(o: &Self::Options, machine: &Fingerprint) -> Result<Self::Params>;
    /// Where it writes.
    fn outputs(o: &Self::Options) -> &Outputs;
    /// The files it reads (a metrics file, a saved result), which no output
    /// may replace.
    fn inputs(_o: &Self::Options) -> Vec<&Path> {
        Vec::new()
    }
    /// The program it starts, as given (else it watches a running process).
    fn command(o: &Self::Options) -> Option<&[std::ffi::OsString]>;
    /// What it does before the program starts, and the lines to say of it;
    /// `probe` measures the TLB's knees where that is asked for.
    fn prepare(_p: &mut Self::Params, _machine: &Fingerprint, _probe: Probe) -> Result<Vec<String>> {
        Ok(Vec::new())
    }
    /// Watches the program to its end; `say` prints a line while it runs.
    fn observe(
        p: &Self::Params,
        program: Option<&Program>,
        machine: &Fingerprint,
        say: &mut dyn FnMut(&str),
    ) -> Result<Self::Outcome>;
    /// memperf's exit status once the program ended (not interrupted): the
    /// program's, or the validation's (`valid`: every result passed).
    fn status(o: &Self::Outcome, valid: bool) -> u8;
}

/// The exit status of a result that failed validation.
pub fn invalid_status() -> u8 {
    crate::error::Error::validation("").kind.exit_code() as u8
}
