//! memperf: parse the command line → plan the experiments → run them into
//! one result document → export it (table, JSON, results folder).

use clap::Parser;
use memperf::cli::Cli;
use std::process::ExitCode;

fn main() -> ExitCode {
    // First: an interrupt at any moment ends any command with exit 130
    // and what it gathered.
    memperf::cli::install_interrupt_handler();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return usage_error(e),
    };
    match memperf::cli::dispatch::run(cli) {
        // Interrupted: what it gathered was written, and the status says so.
        Ok(_) if memperf::interrupt::requested() => ExitCode::from(130),
        Ok(code) => ExitCode::from(code),
        Err(e) if e.kind == memperf::error::ErrorKind::ClosedPipe => ExitCode::from(e.kind.exit_code() as u8),
        Err(e) => {
            eprintln!("memperf: error: {}", memperf::report::sink::one_line(&e.to_string()));
            ExitCode::from(e.kind.exit_code() as u8)
        }
    }
}

/// clap's errors read like memperf's: one line naming the problem, the fix
/// (`--help`), exit 2; help and version print as usual.
fn usage_error(e: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    if matches!(
        e.kind(),
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    ) {
        let code = if e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand { 2 } else { 0 };
        // Help goes to stdout: a closed reader ends it quietly, a full disk is an error.
        let text = e.render().to_string();
        return match memperf::report::sink::write(std::path::Path::new("-"), text.as_bytes()) {
            Ok(()) => ExitCode::from(code),
            Err(w) if w.kind == memperf::error::ErrorKind::ClosedPipe => ExitCode::from(w.kind.exit_code() as u8),
            Err(w) => {
                eprintln!("memperf: error: {}", memperf::report::sink::one_line(&w.to_string()));
                ExitCode::from(2)
            }
        };
    }
    // The problem is the first paragraph: a line ending in ':' is followed
    // by what it names ("the following required arguments were not
    // provided:\n  --wss[=<MS>]").
    let text = e.to_string();
    let problem: Vec<&str> = text.lines().take_while(|l| !l.trim().is_empty()).map(str::trim).collect();
    let problem = if problem.is_empty() { "bad usage".to_string() } else { problem.join(" ") };
    eprintln!(
        "memperf: error: {} (fix: see memperf --help, or memperf SUBCOMMAND --help)",
        memperf::report::sink::one_line(problem.trim_start_matches("error: "))
    );
    ExitCode::from(2)
}
