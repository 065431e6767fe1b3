//! What each experiment is, as data: its name (as the CLI and the
//! document spell it), the one-line summary `--help` shows, the question it
//! answers, its title in the report and the classic result it modernises.
//!
//! Each experiment's `About` is the `ABOUT` of its outcome module
//! (`outcome::<experiment>::ABOUT`), beside what it found; memperf's
//! registry (`memperf::experiments::EXPERIMENTS`) lists them with how each
//! runs, and a consistency test there checks that the registry, the
//! outcomes, the schema and the README name the same experiments.

/// One experiment, described.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct About {
    /// As the CLI, `--only` and the document spell it.
    pub name: &'static str,
    /// The subcommand's line in `--help`.
    pub summary: &'static str,
    /// The section title in the report.
    pub title: &'static str,
    /// The question the section answers.
    pub question: &'static str,
    /// The classic result it modernises ("" when none).
    pub classic: &'static str,
}
