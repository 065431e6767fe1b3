//! A progress bar on stderr (indicatif), shown only when stderr is a
//! terminal. Its length comes from the plan's shares from the first frame:
//! the bar counts the jobs done and the part of the running job's samples
//! measured, each job weighing its share, so it never shows "0/0". In the
//! suite's time box the shares are seconds, and the bar says about how
//! many are left; elsewhere it says which job of how many runs. The bar
//! takes what the terminal's width leaves beside the name and the time
//! left, so the line never runs past the terminal.

use crate::experiments::Progress;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::sync::Mutex;

#[derive(Default)]
struct State {
    /// (name, share) per job: seconds of the time box where `boxed`.
    jobs: Vec<(&'static str, f64)>,
    boxed: bool,
    job: usize,
    /// Steps of the running measurement: done, total.
    done: u64,
    total: u64,
}

pub struct TerminalProgress {
    bar: ProgressBar,
    state: Mutex<State>,
}

impl TerminalProgress {
    /// A bar when stderr is a terminal and `quiet` is off; else `None`.
    pub fn for_stderr(quiet: bool) -> Option<TerminalProgress> {
        if quiet || !std::io::stderr().is_terminal() {
            return None;
        }
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::hidden());
        bar.set_style(
            ProgressStyle::with_template("{prefix:>14} [{wide_bar}] {msg}")
                .expect("valid template")
                .progress_chars("=> "),
        );
        Some(TerminalProgress { bar, state: Mutex::new(State::default()) })
    }

    /// Runs `f` (printing a table) with the bar cleared, and redraws it.
    pub fn suspend<R>(&self, f: impl FnOnce() -> R) -> R {
        self.bar.suspend(f)
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Position, length (thousandths of a share) and the message, from the state.
    fn redraw(&self, s: &State) {
        let (pos, len, msg) = frame(s);
        if len == 0 {
            return;
        }
        self.bar.set_length(len);
        self.bar.set_position(pos);
        self.bar.set_message(msg);
    }
}

/// The bar's position and length in thousandths of a share, and its
/// message: "3/12, about 25 s left" in the time box, else "3/12".
fn frame(s: &State) -> (u64, u64, String) {
    let total: f64 = s.jobs.iter().map(|j| j.1).sum();
    let before: f64 = s.jobs.iter().take(s.job).map(|j| j.1).sum();
    let current = s.jobs.get(s.job).map_or(0.0, |j| j.1);
    let share = if s.total > 0 { (s.done as f64 / s.total as f64).min(1.0) } else { 0.0 };
    let pos = before + current * share;
    let left = (total - pos).max(0.0);
    let which = format!("{}/{}", (s.job + 1).min(s.jobs.len()), s.jobs.len());
    let msg = if s.boxed { format!("{which}, about {} left", duration(left)) } else { which };
    ((pos * 1000.0) as u64, (total * 1000.0).ceil().max(1.0) as u64, msg)
}

/// "45 s", "3 min 20 s".
pub fn duration(s: f64) -> String {
    crate::units::seconds(s.round())
}

impl Progress for TerminalProgress {
    fn plan(&self, jobs: &[(&'static str, f64)], boxed: bool) {
        let mut s = self.state();
        s.jobs = jobs.to_vec();
        s.boxed = boxed;
        if s.jobs.iter().any(|j| j.1 > 0.0) {
            self.bar.set_draw_target(ProgressDrawTarget::stderr());
        }
    }

    fn job(&self, index: usize) {
        let mut s = self.state();
        s.job = index;
        s.done = 0;
        s.total = 0;
        if let Some(j) = s.jobs.get(index) {
            self.bar.set_prefix(j.0.to_string());
        }
        self.redraw(&s);
    }

    fn start(&self, label: &str, total: u64) {
        let mut s = self.state();
        s.done = 0;
        s.total = total;
        if s.jobs.is_empty() {
            self.bar.set_prefix(label.to_string());
        }
        self.redraw(&s);
    }

    fn advance(&self, n: u64) {
        let mut s = self.state();
        s.done += n;
        self.redraw(&s);
    }

    fn finish(&self) {
        let mut s = self.state();
        s.done = s.total;
        self.redraw(&s);
    }
}

impl Drop for TerminalProgress {
    fn drop(&mut self) {
        self.bar.finish_and_clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_frame_counts_the_shares_from_the_start() {
        let mut s = State { jobs: vec![("bandwidth", 10.0), ("latency", 30.0)], boxed: true, ..State::default() };
        let (pos, len, msg) = frame(&s);
        assert_eq!((pos, len), (0, 40_000), "the whole plan from the first frame");
        assert_eq!(msg, "1/2, about 40 s left");
        s.job = 1;
        s.total = 4;
        s.done = 1;
        let (pos, _, msg) = frame(&s);
        assert_eq!(pos, 17_500);
        assert_eq!(msg, "2/2, about 23 s left");
        // Without a time box the shares are weights: no time is claimed.
        s.boxed = false;
        assert_eq!(frame(&s).2, "2/2");
        assert_eq!(duration(200.4), "3 min 20 s");
    }
}
