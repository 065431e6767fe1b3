//! memperf: parse the command line → plan the experiments → run them into
//! one result document → export it (table, JSON, results folder).

use clap::Parser;
use memperf::cli::export;
use memperf::cli::{around, progress::TerminalProgress, tools, Cli, Command};
use memperf::error::{Error, Result};
use memperf::experiments::{plan, NoProgress, Preset, INTERRUPTED};
use memperf::model::journal::Journal;
use memperf::timing::MonotonicClock;
use std::process::ExitCode;
use std::sync::atomic::Ordering;

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return usage_error(e),
    };
    match run(cli) {
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
            return export::compare(&a.a, &a.b, a.json.as_deref(), a.html.as_deref(), a.fail_on_regression)
        }
        Command::Cleanup => return tools::cleanup(),
        Command::Completions(a) => {
            return memperf::report::sink::stdout(&memperf::cli::completions(&a.shell)?).map(|_| 0);
        }
        Command::Man(a) => return tools::man(a.output.as_deref()),
        Command::Merge(a) => return tools::merge(a),
        Command::Stat(a) => return around::stat(a),
        Command::Hugepages(a) => return around::hugepages(a),
        Command::Wss(a) => return around::wss(a),
        Command::Info(memperf::cli::InfoArgs { record: Some(dir), .. }) => return tools::record(dir),
        _ => {}
    }
    memperf::cli::install_interrupt_handler();
    let mut machine = memperf::machine::collect();
    // Bad input fails here, before anything is measured.
    let unmeasured = cli.command.plan(&machine)?;
    unmeasured.jobs.iter().try_for_each(|j| j.check())?;
    let mut output = cli.command.output(&machine);
    export::check_outputs(&output, &[])?;
    // The clock and the cache levels, then the plan sized from them.
    let clock = MonotonicClock::new();
    let mut notes = plan::measure_machine(&mut machine, &clock, unmeasured.needs_levels());
    let mut plan = cli.command.plan(&machine)?;
    if let Command::Run(r) = &cli.command {
        let fitted = memperf::experiments::fit::fit_suite(&mut plan, &machine, r.preset.preset(Preset::Quick));
        notes.extend(fitted.filter(|f| !f.shrunk.is_empty()).map(|f| memperf::model::Caution::SuiteFitted {
            budget_s: f.budget_s,
            before_s: f.before_s,
            after_s: f.after_s,
            shrunk: f.shrunk,
        }));
    }
    plan.notes.extend(notes.into_iter().map(|c| c.render(plan.command)));
    if !cli.command.common().quiet {
        eprintln!("{}", plan.summary(&machine));
    }
    let mut doc = plan::new_document(machine, &clock, &plan);
    // Under a launcher every rank writes into -o DIR: each into a folder
    // of its own, named so that none can collide.
    if let (Some(rank), Some(dir)) = (doc.origin.rank, output.dir.clone()) {
        let o = &doc.origin;
        output.dir = Some(dir.join(memperf::model::launcher::rank_folder(&o.hostname, rank, &o.run_id)));
        export::check_outputs(&output, &[])?;
    }
    let bar = TerminalProgress::for_stderr(cli.command.common().quiet);
    let progress: &dyn memperf::experiments::Progress = match &bar {
        Some(b) => b,
        None => &NoProgress,
    };
    let mut journal = match (&output.dir, plan.journal) {
        (Some(dir), true) => Some(Journal::create(dir, &doc)?),
        _ => None,
    };
    // A journal that cannot be written (a full disk) stops the run: going
    // on would measure results that could be lost. Each experiment's table
    // is printed as it finishes, above the bar, not all at the end.
    let live_tables = output.table;
    plan::execute(&plan, &mut doc, &clock, progress, |doc, rec| {
        if let Some(j) = journal.as_mut() {
            j.append(rec)?;
        }
        if live_tables {
            let text = memperf::report::table::for_terminal(1, || {
                format!("{}\n", memperf::report::text::experiment(doc, rec))
            });
            let print = || memperf::report::sink::stdout(memperf::report::sink::terminal_safe(&text).as_bytes());
            match &bar {
                Some(b) => b.suspend(print)?,
                None => print()?,
            }
        }
        Ok(())
    })?;
    drop(bar);
    if live_tables {
        memperf::report::sink::stdout(memperf::report::text::derived(&doc).as_bytes())?;
        output.table = false;
    }
    export::export(&doc, &output)?;
    if let (true, Some(dir)) = (live_tables, &output.dir) {
        memperf::report::sink::stdout(format!("results written to {}\n", dir.display()).as_bytes())?;
    }
    Ok(if INTERRUPTED.load(Ordering::Relaxed) {
        130
    } else if doc.valid() {
        0
    } else {
        Error::validation("").kind.exit_code() as u8
    })
}
