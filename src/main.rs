//! memperf: parse the command line → plan the experiments → run them into
//! one result document → export it (table, JSON, results folder).

use clap::Parser;
use memperf::cli::export;
use memperf::cli::{progress::TerminalProgress, Cli, Command};
use memperf::error::{Error, Result};
use memperf::experiments::{plan, NoProgress, Preset, INTERRUPTED};
use memperf::machine::Fingerprint;
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
            return export::compare(&a.a, &a.b, a.json.as_deref(), a.html.as_deref(), a.threshold_pct()?)
        }
        Command::Cleanup => return cleanup(),
        Command::Completions(a) => {
            return memperf::report::sink::stdout(&memperf::cli::completions(&a.shell)?).map(|_| 0);
        }
        Command::Man(a) => return man(a.output.as_deref()),
        Command::Merge(a) => return merge(a),
        Command::Stat(a) => return stat(a),
        Command::Hugepages(a) => return hugepages(a),
        Command::Wss(a) => return wss(a),
        Command::Info(memperf::cli::InfoArgs { record: Some(dir), .. }) => return record(dir),
        _ => {}
    }
    install_interrupt_handler();
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

/// `memperf stat -- CMD`: the program runs with memperf's stdin, stdout and
/// stderr; the report goes to stderr after it ends; memperf exits with the
/// program's status.
fn stat(args: &memperf::cli::stat::StatArgs) -> Result<u8> {
    use memperf::cli::export::Output;
    let machine = memperf::machine::collect();
    let mut params = args.params(&machine)?;
    let out = Output {
        json: args.json.clone(),
        dir: args.output.clone(),
        table: false,
        openmetrics: args.openmetrics.clone(),
        csv: args.csv.clone(),
    };
    // The table goes to stderr; --csv is stat's own table (Render::csv).
    let inputs: Vec<&std::path::Path> =
        [args.metrics.as_deref(), args.machine_results.as_deref()].into_iter().flatten().collect();
    export::check_outputs(&out, &inputs)?;
    let program = memperf::process::find(&args.command)?;
    let clock = MonotonicClock::new();
    let started = std::time::Instant::now();
    if let Some(w) = &params.wss {
        let (reach, said) =
            memperf::experiments::wss::reach::decide(&machine, w.machine_results.as_deref(), w.probe, &clock)?;
        let width = memperf::report::sink::terminal_width(2);
        eprintln!("{}", memperf::report::sink::fit(&format!("memperf stat: {said}"), width));
        params.wss_reach = reach;
    }
    let names: Vec<String> = params.events.iter().map(|e| e.name.clone()).collect();
    let mut live = |row: &memperf::model::outcome::stat::Interval| {
        eprint!("{}", memperf::report::text::stat::live_interval(&names, row));
    };
    let outcome = memperf::experiments::stat::run(&program, &params, &memperf::counters::PerfBackend, &mut live)?;
    let status = outcome.exit.shell_status();
    let params_json = serde_json::to_value(&params).expect("params serialise");
    let doc = plan::observation_document(
        machine,
        &clock,
        "stat",
        params_json,
        outcome.into(),
        started.elapsed().as_secs_f64(),
    );
    let report = memperf::report::table::for_terminal(2, || memperf::report::text::render(&doc));
    eprint!("{}", memperf::report::sink::terminal_safe(&report));
    export::export(&doc, &out)?;
    Ok(status)
}

/// `memperf hugepages -- CMD`: the A/B, its report on stdout after the
/// runs (each run is announced on stderr as it ends).
fn hugepages(args: &memperf::cli::hugepages::HugepagesArgs) -> Result<u8> {
    let params = args.params()?;
    let out = args.out.output();
    export::check_outputs(&out, &[])?;
    // A command that cannot be run is bad input here: exit 2, not a shell's 127.
    let program = memperf::process::find(&args.command).map_err(|e| Error::usage(e.message))?;
    install_interrupt_handler();
    let machine = memperf::machine::collect();
    let clock = MonotonicClock::new();
    let started = std::time::Instant::now();
    let mut announce = |r: &memperf::model::outcome::hugepages::Run| {
        eprintln!(
            "memperf hugepages: round {} {:<8} {:.3} s, {}",
            r.round + 1,
            r.arm.name(),
            r.wall_s,
            r.exit.describe()
        );
    };
    let outcome = memperf::experiments::hugepages::run(&program, &params, &machine, &mut announce)?;
    let doc = export_observation(machine, &clock, "hugepages", &params, outcome.into(), started, &out)?;
    Ok(if INTERRUPTED.load(Ordering::Relaxed) {
        130
    } else if doc.valid() {
        0
    } else {
        1
    })
}

/// `memperf wss -- CMD` (or `--pid PID`): the hot set each interval on
/// stderr as it is sampled, the report on stdout after the program ends;
/// memperf exits with the program's status (0 for a watched pid).
fn wss(args: &memperf::cli::wss::WssArgs) -> Result<u8> {
    let params = args.params()?;
    let out = args.out.output();
    export::check_outputs(&out, &args.machine_results.as_deref().into_iter().collect::<Vec<_>>())?;
    let program = match params.pid {
        Some(_) => None,
        None => Some(memperf::process::find(&args.command).map_err(|e| Error::usage(e.message))?),
    };
    install_interrupt_handler();
    let machine = memperf::machine::collect();
    let clock = MonotonicClock::new();
    let started = std::time::Instant::now();
    if let Some(pid) = params.pid {
        memperf::experiments::wss::check_pid(pid)?;
    }
    let (reach, said) =
        memperf::experiments::wss::reach::decide(&machine, params.machine_results.as_deref(), params.probe, &clock)?;
    let width = memperf::report::sink::terminal_width(2);
    eprintln!("{}", memperf::report::sink::fit(&format!("memperf wss: {said}"), width));
    let mut live = |i: &memperf::model::outcome::wss::Interval| {
        eprintln!(
            "memperf wss: {:>7.2} s  hot {:>10}  resident {:>10}",
            i.t_s,
            memperf::units::Bytes(i.hot_bytes()).to_string(),
            memperf::units::Bytes(i.rss_bytes()).to_string()
        );
    };
    let outcome = memperf::experiments::wss::run(program.as_ref(), &params, reach, &mut live)?;
    let status = outcome.exit.map_or(0, |e| e.shell_status());
    export_observation(machine, &clock, "wss", &params, outcome.into(), started, &out)?;
    Ok(if INTERRUPTED.load(Ordering::Relaxed) { 130 } else { status })
}

/// The document of a command around a program, exported.
fn export_observation(
    machine: Fingerprint,
    clock: &MonotonicClock,
    name: &'static str,
    params: &impl serde::Serialize,
    outcome: memperf::model::Outcome,
    started: std::time::Instant,
    out: &memperf::cli::export::Output,
) -> Result<memperf::model::Document> {
    let params_json = serde_json::to_value(params).expect("params serialise");
    let doc = plan::observation_document(machine, clock, name, params_json, outcome, started.elapsed().as_secs_f64());
    export::export(&doc, out)?;
    Ok(doc)
}

/// `memperf merge`: every document read (and the references) before
/// anything is written; then fleet.json and fleet.txt into the folder, the
/// report on stdout, and exit 3 when a host fails a reference.
fn merge(a: &memperf::cli::MergeArgs) -> Result<u8> {
    use memperf::fleet;
    use memperf::report::sink;
    let references = a.reference.as_deref().map(fleet::reference::load).transpose()?;
    if a.output.exists() && !a.output.is_dir() {
        return Err(Error::usage(format!("-o {}: exists and is not a folder", a.output.display())));
    }
    let (fleet_json, fleet_txt) = (a.output.join("fleet.json"), a.output.join("fleet.txt"));
    let mut outputs: Vec<(&str, &std::path::Path)> = vec![("-o", &fleet_json), ("-o", &fleet_txt)];
    outputs.extend(a.openmetrics.as_deref().map(|p| ("--openmetrics", p)));
    outputs.extend(a.csv.as_deref().map(|p| ("--csv", p)));
    let mut inputs: Vec<&std::path::Path> = a.paths.iter().map(|p| p.as_path()).collect();
    inputs.extend(a.reference.as_deref());
    if a.output.is_dir() {
        sink::check_all(&outputs, &inputs)?;
    } else {
        sink::check_all(&outputs[2..], &inputs)?;
    }
    let docs = fleet::load_all(&a.paths)?;
    let hosts: Vec<fleet::Host> = docs.iter().map(|(p, d)| fleet::Host::of(d, p)).collect();
    // Runs of one host are a series; one run given twice is a mistake.
    for (i, h) in hosts.iter().enumerate() {
        if let Some(other) = hosts[..i].iter().find(|o| o.id == h.id && o.run_id == h.run_id) {
            return Err(Error::usage(format!(
                "{} and {} are the same run ({} of {}): give each run once",
                other.source, h.source, h.run_id, h.id
            )));
        }
    }
    let f = fleet::analyse(hosts, references.as_ref());
    let text = fleet::text::render(&f);
    std::fs::create_dir_all(&a.output).map_err(|e| Error::io(format!("cannot create {}", a.output.display()), e))?;
    let json = serde_json::to_string_pretty(&f).expect("a fleet serialises");
    sink::write(&a.output.join("fleet.json"), json.as_bytes())?;
    sink::write(&a.output.join("fleet.txt"), text.as_bytes())?;
    if let Some(p) = &a.openmetrics {
        let all: Vec<&memperf::model::document::Document> = docs.iter().map(|(_, d)| d).collect();
        sink::write(p, memperf::report::openmetrics::render_all(&all).as_bytes())?;
    }
    if let Some(p) = &a.csv {
        sink::write(p, fleet::text::csv(&f).as_bytes())?;
    }
    sink::stdout(memperf::report::table::for_terminal(1, || fleet::text::render(&f)).as_bytes())?;
    Ok(if f.failed() { 3 } else { 0 })
}

/// `memperf man`: memperf.1 on stdout, or every page written atomically
/// into DIR.
fn man(dir: Option<&std::path::Path>) -> Result<u8> {
    let pages = memperf::cli::man_pages();
    match dir {
        None => memperf::report::sink::stdout(&pages[0].1)?,
        Some(d) => {
            std::fs::create_dir_all(d).map_err(|e| Error::io(format!("creating {}", d.display()), e))?;
            for (name, roff) in &pages {
                memperf::report::sink::write(&d.join(name), roff)?;
            }
        }
    }
    Ok(0)
}

/// `memperf info --record DIR`: this machine's CPUID dump and files.
fn record(dir: &std::path::Path) -> Result<u8> {
    let live = memperf::machine::source::Source::live();
    let n = memperf::machine::record::record(&live.root, &live.cpuid, dir)?;
    let text = format!("recorded {n} files of this machine into {}\n", dir.display());
    memperf::report::sink::stdout(memperf::report::sink::terminal_safe(&text).as_bytes()).map(|_| 0)
}

/// `memperf cleanup`: what killed runs left reserved goes back to the pools.
fn cleanup() -> Result<u8> {
    use memperf::memory::reserve::Reaped;
    let given = memperf::memory::reserve::cleanup()?;
    let mut text = String::new();
    for r in &given {
        text.push_str(&match r {
            Reaped::GaveBack { pid, page, pages } => {
                format!("gave back {pages} {page} page(s) reserved by pid {pid}, which is gone\n")
            }
            Reaped::Unreadable { path, removed: true } => format!(
                "removed the unreadable record {} of a run that is gone: what it added cannot be known (check nr_hugepages)\n",
                path.display()
            ),
            Reaped::Unreadable { path, removed: false } => {
                format!("kept the unreadable record {}: its run may still be alive\n", path.display())
            }
        });
    }
    if given.is_empty() {
        text.push_str("nothing to give back: no reservation of a dead memperf run\n");
    }
    memperf::report::sink::stdout(text.as_bytes()).map(|_| 0)
}

/// First Ctrl-C, SIGTERM or SIGHUP: finish the current sample, then write
/// what completed and give the pages back. A second one: give back
/// reserved huge pages and leave at once.
fn install_interrupt_handler() {
    let _ = ctrlc::set_handler(|| {
        if INTERRUPTED.swap(true, Ordering::SeqCst) {
            // Leaving without destructors: give reserved huge pages back first.
            memperf::memory::reserve::restore_all();
            std::process::exit(130);
        }
        eprintln!("\nmemperf: interrupted; finishing the current sample (Ctrl-C again to quit now)");
    });
}
