//! The commands around a program (`stat`, `hugepages`, `wss`): the program
//! found, the machine read, the experiment run with what it says live on
//! stderr, and the one document every command makes exported the same way
//! as the suite's (`plan::observation_document`, `export::export`).

use super::export;
use super::install_interrupt_handler;
use crate::error::{Error, Result};
use crate::experiments::{plan, INTERRUPTED};
use crate::machine::Fingerprint;
use crate::timing::MonotonicClock;
use std::sync::atomic::Ordering;

/// `memperf stat -- CMD`: the program runs with memperf's stdin, stdout and
/// stderr; the report goes to stderr after it ends; memperf exits with the
/// program's status.
pub fn stat(args: &crate::cli::stat::StatArgs) -> Result<u8> {
    use crate::cli::export::Output;
    let machine = crate::machine::collect();
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
    let program = crate::process::find(&args.command)?;
    let clock = MonotonicClock::new();
    let started = std::time::Instant::now();
    if let Some(w) = &params.wss {
        let probe = |m: &Fingerprint| crate::experiments::tlb::quick_probe(m, &clock);
        let (reach, said) = crate::machine::reach::decide(
            &machine,
            w.machine_results.as_deref(),
            w.probe.then_some(&probe as crate::machine::reach::Probe),
        )?;
        let width = crate::report::sink::terminal_width(2);
        eprintln!("{}", crate::report::sink::fit(&format!("memperf stat: {said}"), width));
        params.wss_reach = reach;
    }
    let names: Vec<String> = params.events.iter().map(|e| e.name.clone()).collect();
    let mut live = |row: &crate::model::outcome::stat::Interval| {
        eprint!("{}", crate::report::text::stat::live_interval(&names, row));
    };
    let outcome = crate::experiments::stat::run(&program, &params, &crate::counters::PerfBackend, &mut live)?;
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
    let report = crate::report::table::for_terminal(2, || crate::report::text::render(&doc));
    eprint!("{}", crate::report::sink::terminal_safe(&report));
    export::export(&doc, &out)?;
    Ok(status)
}

/// `memperf hugepages -- CMD`: the A/B, its report on stdout after the
/// runs (each run is announced on stderr as it ends).
pub fn hugepages(args: &crate::cli::hugepages::HugepagesArgs) -> Result<u8> {
    let params = args.params()?;
    let out = args.out.output();
    export::check_outputs(&out, &[])?;
    // A command that cannot be run is bad input here: exit 2, not a shell's 127.
    let program = crate::process::find(&args.command).map_err(|e| Error::usage(e.message))?;
    install_interrupt_handler();
    let machine = crate::machine::collect();
    let clock = MonotonicClock::new();
    let started = std::time::Instant::now();
    let mut announce = |r: &crate::model::outcome::hugepages::Run| {
        eprintln!(
            "memperf hugepages: round {} {:<8} {:.3} s, {}",
            r.round + 1,
            r.arm.name(),
            r.wall_s,
            r.exit.describe()
        );
    };
    let outcome = crate::experiments::hugepages::run(&program, &params, &machine, &mut announce)?;
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
pub fn wss(args: &crate::cli::wss::WssArgs) -> Result<u8> {
    let params = args.params()?;
    let out = args.out.output();
    export::check_outputs(&out, &args.machine_results.as_deref().into_iter().collect::<Vec<_>>())?;
    let program = match params.pid {
        Some(_) => None,
        None => Some(crate::process::find(&args.command).map_err(|e| Error::usage(e.message))?),
    };
    install_interrupt_handler();
    let machine = crate::machine::collect();
    let clock = MonotonicClock::new();
    let started = std::time::Instant::now();
    if let Some(pid) = params.pid {
        crate::experiments::wss::check_pid(pid)?;
    }
    let probe = |m: &Fingerprint| crate::experiments::tlb::quick_probe(m, &clock);
    let (reach, said) = crate::machine::reach::decide(
        &machine,
        params.machine_results.as_deref(),
        params.probe.then_some(&probe as crate::machine::reach::Probe),
    )?;
    let width = crate::report::sink::terminal_width(2);
    eprintln!("{}", crate::report::sink::fit(&format!("memperf wss: {said}"), width));
    let mut live = |i: &crate::model::outcome::wss::Interval| {
        eprintln!(
            "memperf wss: {:>7.2} s  hot {:>10}  resident {:>10}",
            i.t_s,
            crate::units::Bytes(i.hot_bytes()).to_string(),
            crate::units::Bytes(i.rss_bytes()).to_string()
        );
    };
    let outcome = crate::experiments::wss::run(program.as_ref(), &params, reach, &mut live)?;
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
    outcome: crate::model::Outcome,
    started: std::time::Instant,
    out: &crate::cli::export::Output,
) -> Result<crate::model::Document> {
    let params_json = serde_json::to_value(params).expect("params serialise");
    let doc = plan::observation_document(machine, clock, name, params_json, outcome, started.elapsed().as_secs_f64());
    export::export(&doc, out)?;
    Ok(doc)
}
