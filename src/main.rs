//! memperf: parse the command line → plan the experiments → run them into
//! one result document → export it (table, JSON, results folder).

use clap::Parser;
use memperf::cli::export;
use memperf::cli::measure::Measurement;
use memperf::cli::{tools, Cli, Command};
use memperf::error::Result;
use std::process::ExitCode;

fn main() -> ExitCode {
    // First: an interrupt at any moment ends any command with exit 130
    // and what it gathered.
    memperf::cli::install_interrupt_handler();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return usage_error(e),
    };
    match run(cli) {
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

fn run(cli: Cli) -> Result<u8> {
    match &cli.command {
        Command::Report(a) => return export::rebuild(&a.path, a.output.as_deref(), a.reanalyze).map(|_| 0),
        Command::Compare(a) => {
            let fail = (a.fail_on_regression, a.fail_on_unjudged);
            let (side_a, side_b) = a.sides()?;
            return export::compare(&side_a, &side_b, a.json.as_deref(), a.html.as_deref(), fail);
        }
        Command::Cleanup => return tools::cleanup(),
        Command::Completions(a) => {
            return memperf::report::sink::stdout(&memperf::cli::completions(&a.shell)?).map(|_| 0);
        }
        Command::Man(a) => return tools::man(a.output.as_deref()),
        Command::Merge(a) => return tools::merge(a),
        // A command around a program, or an option in place of measuring.
        Command::Measure(m) => {
            if let Some(done) = m.instead() {
                return done;
            }
        }
        Command::Run(_) => {}
    }
    let mut measurement = Measurement::prepare(&cli.command)?;
    measurement.execute()?;
    measurement.finish()
}
