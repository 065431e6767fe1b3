//! memperf: parse the command line → plan the experiments → run them into
//! one result document → export it (table, JSON, results folder).

use clap::Parser;
use memperf::cli::{progress::TerminalProgress, Cli};
use memperf::error::{Error, Result};
use memperf::experiments::{plan, NoProgress, INTERRUPTED};
use memperf::machine::Fingerprint;
use memperf::report::export;
use memperf::timing::MonotonicClock;
use std::process::ExitCode;
use std::sync::atomic::Ordering;

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("memperf: error: {e}");
            ExitCode::from(e.kind.exit_code() as u8)
        }
    }
}

fn run(cli: Cli) -> Result<u8> {
    install_interrupt_handler();
    let machine = Fingerprint::collect();
    let plan = cli.command.plan(&machine)?;
    let mut doc = plan::new_document(machine);
    let bar = TerminalProgress::for_stderr(cli.command.common().quiet);
    let progress: &dyn memperf::experiments::Progress = match &bar {
        Some(b) => b,
        None => &NoProgress,
    };
    plan::execute(&plan, &mut doc, &MonotonicClock::new(), progress, |_| {})?;
    export::export(&doc, &plan.output)?;
    Ok(if INTERRUPTED.load(Ordering::Relaxed) {
        130
    } else if doc.valid() {
        0
    } else {
        Error::validation("").kind.exit_code() as u8
    })
}

/// First Ctrl-C: finish the current sample, then write what completed.
/// Second Ctrl-C: leave at once.
fn install_interrupt_handler() {
    let _ = ctrlc::set_handler(|| {
        if INTERRUPTED.swap(true, Ordering::SeqCst) {
            std::process::exit(130);
        }
        eprintln!("\nmemperf: interrupted; finishing the current sample (Ctrl-C again to quit now)");
    });
}
