//! A run of a plan of experiments (the suite, or one experiment's
//! subcommand), in three steps: [`Measurement::prepare`] reads the command
//! against the machine (bad input and unwritable outputs refused before
//! anything is measured), measures the clock and the cache levels and sizes
//! the plan; [`Measurement::execute`] runs each experiment into the
//! document, printing its table (the suite: its one line) and appending the
//! journal; [`Measurement::finish`] writes every output and says the exit
//! status. The suite's screen ends as [`crate::report::screen`] says.

use super::export::{self, Output};
use super::progress::TerminalProgress;
use super::Command;
use crate::error::{Error, Result};
use crate::experiments::plan::{self, Plan};
use crate::experiments::timebox::TimeBox;
use crate::experiments::{NoProgress, Preset};
use crate::model::journal::Journal;
use crate::model::Document;
use crate::timing::MonotonicClock;

/// A plan, its document as it fills, and where it goes.
pub struct Measurement {
    plan: Plan,
    doc: Document,
    output: Output,
    clock: MonotonicClock,
    quiet: bool,
    /// The suite's one screen: a line per experiment and the summary at
    /// the end, instead of every table.
    screen: bool,
}

impl Measurement {
    /// The plan of `command` sized for this machine, its document begun and
    /// its outputs checked.
    pub fn prepare(command: &Command) -> Result<Measurement> {
        let mut machine = crate::machine::collect();
        // Bad input fails here, before anything is measured.
        let unmeasured = command.plan(&machine)?;
        unmeasured.jobs.iter().try_for_each(|j| j.check())?;
        let mut output = command.output(&machine);
        export::check_outputs(&output, &[])?;
        // The clock and the cache levels, then the plan sized from them.
        let clock = MonotonicClock::new();
        let since_ns = crate::timing::Clock::now_ns(&clock);
        let notes = plan::measure_machine(&mut machine, &clock, unmeasured.needs_levels());
        let mut plan = command.plan(&machine)?;
        if let Command::Run(r) = command {
            plan.time_box = crate::experiments::budget::suite_box_s(r.preset.preset(Preset::Quick))
                .map(|box_s| TimeBox { box_s: box_s + plan.own_s(), since_ns });
        }
        plan.notes.extend(notes.into_iter().map(|c| c.render(plan.command)));
        // The plan line, where there is something to measure, fitted to the
        // terminal like every other line.
        let quiet = command.common().quiet;
        if !quiet && plan.jobs.iter().any(|j| j.measures()) {
            eprintln!("{}", crate::terminal::fit(&plan.summary(), crate::terminal::terminal_width(2)));
        }
        let doc = plan::new_document(machine, &clock, &plan);
        // Under a launcher every rank writes into -o DIR: each into a folder
        // of its own, named so that none can collide.
        if let (Some(rank), Some(dir)) = (doc.origin.rank, output.dir.clone()) {
            let o = &doc.origin;
            output.dir = Some(dir.join(crate::model::launcher::rank_folder(&o.hostname, rank, &o.run_id)));
            export::check_outputs(&output, &[])?;
        }
        let screen = matches!(command, Command::Run(r) if !r.verbose);
        Ok(Measurement { plan, doc, output, clock, quiet, screen })
    }

    /// Runs every experiment of the plan into the document. A journal that
    /// cannot be written (a full disk) stops the run: going on would
    /// measure results that could be lost. Each experiment's table is
    /// printed as it finishes, above the bar, not all at the end.
    pub fn execute(&mut self) -> Result<()> {
        let bar = TerminalProgress::for_stderr(self.quiet);
        let progress: &dyn crate::experiments::Progress = match &bar {
            Some(b) => b,
            None => &NoProgress,
        };
        let mut journal = match (&self.output.dir, self.plan.journal) {
            (Some(dir), true) => Some(Journal::create(dir, &self.doc)?),
            _ => None,
        };
        let live_tables = self.output.table;
        let screen = self.screen;
        let quiet = self.quiet;
        plan::execute(&mut self.plan, &mut self.doc, &self.clock, progress, |doc, rec| {
            if let Some(j) = journal.as_mut() {
                j.append(rec)?;
            }
            if live_tables && !(screen && quiet) {
                let text = if screen {
                    crate::report::screen::experiment_line(doc, rec, screen_width())
                } else {
                    crate::report::table::for_terminal(1, || format!("{}\n", crate::report::text::experiment(doc, rec)))
                };
                let print = || crate::report::sink::stdout(crate::report::sink::terminal_safe(&text).as_bytes());
                match &bar {
                    Some(b) => b.suspend(print)?,
                    None => print()?,
                }
            }
            Ok(())
        })?;
        let now = crate::timing::Clock::now_ns(&self.clock);
        if let Some(c) = self.plan.time_box.and_then(|b| b.overrun(now)) {
            self.doc.warnings.push(c.render(self.plan.command));
        }
        Ok(())
    }

    /// Every output written: what follows the live tables, the document,
    /// the results folder. The exit status: 130 when interrupted, else the
    /// validation's.
    pub fn finish(mut self) -> Result<u8> {
        let live_tables = self.output.table;
        if live_tables && self.screen {
            self.output.table = false;
            export::write_outputs(&self.doc, &self.output)?;
            let report = self.output.dir.as_ref().map(|d| d.join("report.html"));
            let end = crate::report::screen::end(&self.doc, report.as_deref(), screen_width());
            crate::report::sink::stdout(crate::report::sink::terminal_safe(&end).as_bytes())?;
        } else {
            if live_tables {
                crate::report::sink::stdout(crate::report::text::derived(&self.doc).as_bytes())?;
                self.output.table = false;
            }
            export::export(&self.doc, &self.output)?;
            if live_tables {
                crate::report::sink::stdout(crate::report::text::advice_at_end(&self.doc).as_bytes())?;
            }
            if let (true, Some(dir)) = (live_tables, &self.output.dir) {
                crate::report::sink::stdout(format!("results written to {}\n", dir.display()).as_bytes())?;
            }
        }
        Ok(if crate::interrupt::requested() {
            130
        } else if self.doc.valid() {
            0
        } else {
            Error::validation("").kind.exit_code() as u8
        })
    }
}

/// The screen's width: the terminal's, else 80 columns (a file or a pipe
/// gets the same screen a terminal of 80 would).
fn screen_width() -> usize {
    crate::terminal::terminal_width(1).unwrap_or(80)
}
