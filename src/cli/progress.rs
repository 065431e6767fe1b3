//! A progress bar on stderr (indicatif), shown only when stderr is a terminal.

use crate::experiments::Progress;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;

pub struct TerminalProgress {
    bar: ProgressBar,
}

impl TerminalProgress {
    /// A bar when stderr is a terminal and `quiet` is off; else `None`.
    pub fn for_stderr(quiet: bool) -> Option<TerminalProgress> {
        if quiet || !std::io::stderr().is_terminal() {
            return None;
        }
        let bar = ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::stderr());
        bar.set_style(
            ProgressStyle::with_template("{prefix:>12} [{bar:40}] {pos}/{len} samples, {eta} left")
                .expect("valid template")
                .progress_chars("=> "),
        );
        Some(TerminalProgress { bar })
    }
}

impl Progress for TerminalProgress {
    fn start(&self, label: &str, total: u64) {
        // Nothing to count: no bar (an empty one would draw as full).
        if total == 0 {
            self.bar.set_draw_target(ProgressDrawTarget::hidden());
            return;
        }
        self.bar.set_draw_target(ProgressDrawTarget::stderr());
        self.bar.reset();
        self.bar.set_prefix(label.to_string());
        self.bar.set_length(total);
        self.bar.set_position(0);
    }
    fn advance(&self, n: u64) {
        self.bar.inc(n);
    }
    fn finish(&self) {
        self.bar.finish_and_clear();
    }
}
