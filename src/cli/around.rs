//! The commands around a program (`stat`, `hugepages`, `wss`), each an
//! [`Observe`], run by one path: the options read (bad input first), the
//! outputs checked, the program found, what it asks before the program
//! starts, the program watched with what it sees said live on stderr, and
//! the one document every command makes exported as the suite's is. An
//! interrupt at any moment (the handler is installed first thing) gives
//! exit 130 and the document of what was gathered.

use super::export::{self, Output};
use crate::error::{Error, Result};
use crate::experiments::observe::{Observe, Outputs};
use crate::experiments::plan;
use crate::machine::Fingerprint;
use crate::timing::MonotonicClock;

/// Runs the command around a program `O` with its options `o`: memperf's
/// exit status.
pub fn observe<O: Observe>(o: &O::Options) -> Result<u8> {
    let machine = crate::machine::collect();
    let mut params = O::params(o, &machine)?;
    let out = outputs(O::outputs(o), O::REPORT_ON_STDERR);
    export::check_outputs(&out, &O::inputs(o))?;
    let program = match O::command(o) {
        Some(argv) => Some(crate::process::find(argv).map_err(|e| missing_program::<O>(e))?),
        None => None,
    };
    let clock = MonotonicClock::new();
    let started = std::time::Instant::now();
    let outcome = watch::<O>(&mut params, program.as_ref(), &machine, &clock)?;
    let params_json = serde_json::to_value(&params).expect("params serialise");
    let elapsed = started.elapsed().as_secs_f64();
    let status = outcome.as_ref().map(|x| O::status(x, crate::model::outcome::Valid::valid(x)));
    let doc = match outcome {
        Some(x) => plan::observation_document(machine, &clock, O::NAME, params_json, x.into(), elapsed),
        None => plan::interrupted_observation(machine, &clock, O::NAME, params_json, elapsed),
    };
    report::<O>(&doc)?;
    export::export(&doc, &out)?;
    Ok(match status {
        Some(s) if !crate::interrupt::requested() => s,
        _ => 130,
    })
}

/// What `O` asks before the program starts, said, then the program
/// watched; `None` when an interrupt came before there was anything to
/// watch.
fn watch<O: Observe>(
    params: &mut O::Params,
    program: Option<&crate::process::Program>,
    machine: &Fingerprint,
    clock: &MonotonicClock,
) -> Result<Option<O::Outcome>> {
    if crate::interrupt::requested() {
        return Ok(None);
    }
    let probe = |m: &Fingerprint| crate::experiments::tlb::quick_probe(m, clock);
    let width = crate::terminal::terminal_width(2);
    for note in O::prepare(params, machine, &probe)? {
        eprintln!("{}", crate::terminal::fit(&format!("memperf {}: {note}", O::NAME), width));
    }
    if crate::interrupt::requested() {
        return Ok(None);
    }
    let mut say = |line: &str| eprintln!("{}", crate::report::sink::terminal_safe(line));
    match O::observe(params, program, machine, &mut say) {
        Ok(x) => Ok(Some(x)),
        // Interrupted before the program started: nothing gathered.
        Err(e) if e.kind == crate::error::ErrorKind::Interrupted => Ok(None),
        Err(e) => Err(e),
    }
}

/// A program that cannot be started: bad input for some commands (exit
/// 2), the shell's status for the others.
fn missing_program<O: Observe>(e: Error) -> Error {
    if O::MISSING_PROGRAM_IS_BAD_INPUT {
        Error::usage(e.message)
    } else {
        e
    }
}

/// Where the document goes: the report's table on stdout unless it goes to
/// stderr, or the JSON or OpenMetrics text go to stdout.
fn outputs(o: &Outputs, report_on_stderr: bool) -> Output {
    let mut out = Output::around_program(o.json.as_deref(), o.output.as_deref(), o.openmetrics.as_deref());
    out.csv = o.csv.clone();
    out.table &= !report_on_stderr;
    out
}

/// The report on stderr, for a command whose program keeps stdout.
fn report<O: Observe>(doc: &crate::model::Document) -> Result<()> {
    if O::REPORT_ON_STDERR {
        let text = crate::report::table::for_terminal(2, || crate::report::text::render(doc));
        eprint!("{}", crate::report::sink::terminal_safe(&text));
    }
    Ok(())
}
